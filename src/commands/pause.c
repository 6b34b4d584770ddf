/* pause.c - CLIENT PAUSE / CLIENT UNPAUSE: holding clients' commands while a
 * pause is in effect, and resuming them in order when it ends (see pause.h).
 *
 * Why it is built on the blocked-client machinery: a held client must stop
 * executing its input and keep it, in order, until the pause ends, which is
 * exactly what CF_BLOCKED already gives (client.c stops a pass on it and
 * keeps the unparsed bytes); and resuming must run the client's input outside
 * any other client's command, which blocking.c's resume list already does.
 * So a held client is CF_BLOCKED | CF_PAUSED, its held request is rewound to
 * the head of its query buffer by client.c, and the end of the pause hands
 * the held clients to blocking_resume() in the order they were held.
 */
#include "pause.h"
#include "blocking.h"
#include "command.h"
#include "event.h"
#include "reply.h"
#include "server.h"
#include "util.h"
#include "zmalloc.h"
#include <string.h>

static client **held;           /* held clients, oldest first (NULL: forgotten) */
static size_t held_n, held_cap, held_live;
static long long timer_id = -1;
static pause_script_writes_fn *script_writes;

void pause_set_script_hook(pause_script_writes_fn *fn) { script_writes = fn; }

size_t pause_held_count(void) { return held_live; }

/* ---- which commands wait ------------------------------------------------------------ */

/* Redis 7.0's may-replicate commands that are not writes (its COMMAND
 * output hides that flag, so ferry's tables do not carry it): they add to
 * the replication stream, so CLIENT PAUSE WRITE holds them. The scripts
 * (EVAL, EVALSHA, FCALL) are decided by their declared flags below. */
int pause_may_replicate(const command *cmd) {
    static const char *const names[] = {"publish", "spublish", "pfcount"};
    if (cmd->parent) return 0;
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
        if (strcmp(cmd->name, names[i]) == 0) return 1;
    return 0;
}

static int cmd_may_write(command *cmd, const span *argv, int argc) {
    if ((cmd->props & PROP_NUMKEYS_AT_2) && !(cmd->flags & CMD_READONLY))
        return script_writes ? script_writes(argv, argc) : 1;
    return (cmd->flags & (CMD_WRITE | CMD_MAY_REPLICATE)) || pause_may_replicate(cmd);
}

/* EXEC: does the transaction hold a command that may write? */
static int queued_may_write(const client *c) {
    for (int i = 0; i < c->mcount; i++)
        if (cmd_may_write(c->mstate[i].cmd, c->mstate[i].argv, c->mstate[i].argc)) return 1;
    return 0;
}

int pause_must_hold(client *c, command *cmd) {
    if (srv.client_pause == PAUSE_NONE || (c->flags & (CF_FAKE | CF_OBEY))) return 0;
    if (ev_now_ms() >= srv.client_pause_end_ms) {
        pause_end();
        return 0;
    }
    if (srv.client_pause == PAUSE_ALL) return 1;
    if (cmd->props & PROP_EXEC) return queued_may_write(c);
    return cmd_may_write(cmd, c->argv, c->argc);
}

/* ---- holding and resuming ----------------------------------------------------------- */

void pause_hold(client *c) {
    if (held_n == held_cap) {
        held_cap = held_cap ? held_cap * 2 : 16;
        held = zrealloc(held, held_cap * sizeof *held);
    }
    held[held_n++] = c;
    held_live++;
    c->flags |= CF_BLOCKED | CF_PAUSED;
    srv.blocked_clients++;
}

static void release(client *c) {
    c->flags &= ~(CF_BLOCKED | CF_PAUSED);
    srv.blocked_clients--;
    held_live--;
}

void pause_forget(client *c) {
    for (size_t i = 0; i < held_n; i++) {
        if (held[i] != c) continue;
        held[i] = NULL;
        release(c);
        return;
    }
}

void pause_end(void) {
    srv.client_pause = PAUSE_NONE;
    srv.client_pause_end_ms = 0;
    timer_id = -1; /* a timer still armed finds it is not current and goes */
    for (size_t i = 0; i < held_n; i++) {
        client *c = held[i];
        if (!c) continue;
        release(c);
        blocking_resume(c);
    }
    held_n = 0;
}

static long pause_timer(evloop *el, long long id, void *data) {
    (void)el, (void)data;
    if (id != timer_id) return -1;
    int64_t now = ev_now_ms();
    if (now < srv.client_pause_end_ms) return (long)(srv.client_pause_end_ms - now);
    timer_id = -1;
    pause_end();
    return -1;
}

void pause_start(int64_t end_ms, int type) {
    if (type > srv.client_pause) srv.client_pause = type;
    if (end_ms > srv.client_pause_end_ms) srv.client_pause_end_ms = end_ms;
    if (!srv.el) return;
    int64_t now = ev_now_ms(), when = srv.client_pause_end_ms;
    timer_id = ev_timer_add(srv.el, when > now ? (long)(when - now) : 0, pause_timer, NULL);
}

/* ---- the commands --------------------------------------------------------------------- */

/* CLIENT PAUSE timeout [WRITE|ALL] */
void pause_cmd_pause(client *c) {
    long long ms;
    int type = PAUSE_ALL;
    if (c->argc > 4) {
        reply_error(c, "ERR unknown subcommand or wrong number of arguments for 'PAUSE'. Try CLIENT HELP.");
        return;
    }
    if (!str_to_ll(c->argv[2].p, c->argv[2].len, &ms)) {
        reply_error(c, "ERR timeout is not an integer or out of range");
        return;
    }
    if (ms < 0) {
        reply_error(c, "ERR timeout is negative");
        return;
    }
    if (c->argc == 4) {
        if (span_eq_nocase(c->argv[3], "write")) type = PAUSE_WRITE;
        else if (!span_eq_nocase(c->argv[3], "all")) {
            reply_error(c, "ERR CLIENT PAUSE mode must be WRITE or ALL");
            return;
        }
    }
    int64_t now = ev_now_ms();
    pause_start(ms > INT64_MAX - now ? INT64_MAX : now + ms, type);
    reply_ok(c);
}

/* CLIENT UNPAUSE */
void pause_cmd_unpause(client *c) {
    pause_end();
    reply_ok(c);
}
