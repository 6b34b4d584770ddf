/* monitor.c - MONITOR: the monitors and their lines (see monitor.h).
 *
 * A line is "+<unix seconds>.<microseconds> [<db> <ip:port>] "arg" ..."
 * with each argument quoted as Redis's sdscatrepr quotes it, built once
 * and staged in every monitor's output. The monitors are an array (the
 * order in which they started); srv.monitors counts them and is part of
 * srv.observers, so with no monitor the dispatcher never calls here.
 */
#include "monitor.h"
#include "blocking.h"
#include "command.h"
#include "db.h"
#include "reply.h"
#include "sbuf.h"
#include "server.h"
#include "zmalloc.h"
#include <string.h>
#include <sys/time.h>

static struct {
    client **v;
    size_t n, cap;
    uint64_t redacted;          /* argument bits of the running command to hide (bit j: argv[j], j < 64) */
} M;

void cmd_monitor(client *c) {
    if (!blocking_allowed(c)) {
        reply_error(c, "ERR MONITOR isn't allowed for DENY BLOCKING client");
        return;
    }
    if (c->flags & CF_MONITOR) return; /* already: ignored, without a reply */
    if (M.n == M.cap) {
        M.cap = M.cap ? M.cap * 2 : 4;
        M.v = zrealloc(M.v, M.cap * sizeof *M.v);
    }
    M.v[M.n++] = c;
    c->flags |= CF_MONITOR;
    srv.monitors++;
    srv.observers++;
    reply_ok(c);
}

void monitor_leave(client *c) {
    if (!(c->flags & CF_MONITOR)) return;
    for (size_t i = 0; i < M.n; i++) {
        if (M.v[i] != c) continue;
        memmove(M.v + i, M.v + i + 1, (M.n - i - 1) * sizeof *M.v);
        M.n--;
        break;
    }
    c->flags &= ~(uint32_t)CF_MONITOR;
    srv.monitors--;
    srv.observers--;
}

void monitor_redact_arg(int j) {
    if (srv.monitors && j >= 0 && j < 64) M.redacted |= 1ULL << j;
}

/* "+<time> [<db> <who>] " then the quoted arguments and CRLF. */
static void build_line(sbuf *b, client *c) {
    struct timeval tv;
    gettimeofday(&tv, NULL);
    sb_addf(b, "+%ld.%06ld ", (long)tv.tv_sec, (long)tv.tv_usec);
    int dbid = c->db ? c->db->id : 0;
    if (c->flags & CF_SCRIPT) sb_addf(b, "[%d lua] ", dbid);
    else sb_addf(b, "[%d %s] ", dbid, c->addr);
    for (int j = 0; j < c->argc; j++) {
        if (j < 64 && (M.redacted >> j & 1)) sb_repr(b, "(redacted)", 10);
        else sb_repr(b, c->argv[j].p, c->argv[j].len);
        if (j != c->argc - 1) sb_addc(b, ' ');
    }
    sb_add(b, "\r\n", 2);
}

void monitor_feed(client *c) {
    if (!srv.monitors || srv.loading) return;
    sbuf b = {0};
    build_line(&b, c);
    for (size_t i = 0; i < M.n; i++) {
        client *m = M.v[i];
        if (m->flags & (CF_CLOSE_ASAP | CF_CLOSE_AFTER_REPLY)) continue;
        reply_raw(m, b.p, b.len);
    }
    sb_free(&b);
}

void monitor_after_call(client *c, const command *cmd) {
    if (srv.monitors && !(cmd->flags & (CMD_SKIP_MONITOR | CMD_ADMIN))) monitor_feed(c);
    M.redacted = 0;
}
