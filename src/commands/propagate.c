/* propagate.c - executed writes as the stream of their effects (see
 * propagate.h).
 *
 * State: a stack of frames (one per running call, linked through the C
 * stack: prop_enter/prop_leave bracket every command_call, a script's
 * redis.call and a blocked client's re-run), the operations staged by the
 * outermost call (RESP bytes in `ops`, counted; a SELECT for the first
 * one leads them when its database is not the stream's, and stays outside
 * the MULTI that wraps a unit of several), and the sinks. The stream's selected database is remembered so a
 * SELECT is written only when it changes; attaching a sink forgets it (a
 * new file starts with no database selected).
 *
 * Effects by command property (the dataset after the call is the truth):
 *   PROP_EFFECT_EXPIRE (EXPIRE family, GETEX): the key now has an expiry ->
 *     PEXPIREAT key <ms>; it has none -> PERSIST key; it is gone (a time in
 *     the past deletes it) -> DEL key.
 *   PROP_EFFECT_SET (SET with options, SETEX, PSETEX): SET key <value>
 *     [PXAT <ms>], or DEL key if it is gone.
 * Everything else that changed the dataset is staged as called.
 */
#include "propagate.h"
#include "command.h"
#include "db.h"
#include "sbuf.h"
#include "server.h"
#include "util.h"
#include "zmalloc.h"

#include <string.h>

static struct prop_state {
    prop_frame *top;                /* innermost running call, NULL between calls */
    sbuf ops;                       /* operations staged by the outermost call */
    int nops;
    size_t lead;                    /* bytes of the SELECT that precedes the unit (outside its MULTI), or 0 */
    int staged_db;                  /* database of the last staged operation */
    int stream_db;                  /* database the sinks' stream has selected, -1 none */
    prop_sink_fn *sinks[PROP_MAX_SINKS];
    int to[PROP_MAX_SINKS];         /* PROP_TO_* of each sink */
    int nsinks;
    struct { size_t start, end; } *repl_only; /* staged operations for the replicas only */
    int nrepl_only, cap_repl_only;
} ps = {.stream_db = -1};

int prop_active(void) { return ps.nsinks > 0 && !srv.loading; }

int prop_attach(prop_sink_fn *fn, int to) {
    for (int i = 0; i < ps.nsinks; i++)
        if (ps.sinks[i] == fn) return 0;
    if (ps.nsinks == PROP_MAX_SINKS) return -1;
    ps.to[ps.nsinks] = to;
    ps.sinks[ps.nsinks++] = fn;
    ps.stream_db = -1;
    return 0;
}

void prop_stream_restart(void) { ps.stream_db = -1; }

void prop_detach(prop_sink_fn *fn) {
    for (int i = 0; i < ps.nsinks; i++)
        if (ps.sinks[i] == fn) {
            ps.sinks[i] = ps.sinks[--ps.nsinks];
            ps.to[i] = ps.to[ps.nsinks];
            return;
        }
}

/* ---- encoding ------------------------------------------------------------------ */

static void add_select(sbuf *b, int dbid) {
    char num[24];
    span argv[2] = {{"SELECT", 6}, {num, ll_to_str(num, dbid)}};
    sb_add_command(b, 2, argv);
}

/* ---- staging and committing ---------------------------------------------------- */

/* The SELECT the next operation needs, if any. */
static void stage_db(int dbid) {
    if (ps.nops == 0) {
        if (dbid != ps.stream_db) add_select(&ps.ops, dbid);
        ps.lead = ps.ops.len;
    } else if (dbid != ps.staged_db) {
        add_select(&ps.ops, dbid);
    }
    ps.staged_db = dbid;
}

static void stage(int dbid, int argc, const span *argv) {
    stage_db(dbid);
    sb_add_command(&ps.ops, argc, argv);
    ps.nops++;
}

static void feed(int to, const char *p, size_t n) {
    for (int i = 0; i < ps.nsinks; i++)
        if (ps.to[i] & to) ps.sinks[i](p, n);
}

/* The running request's own bytes stand for its arguments when they are
 * exactly their encoding: a multibulk request whose arguments all lie in
 * it, in order, and whose length is that of the canonical encoding (so no
 * header has a leading zero or sign). Copying them spares encoding the
 * command again (a third of what a replicated SET costs the primary), and
 * a request that is a whole unit by itself is not even staged.
 * Anything else (inline requests, a transaction's or a script's calls,
 * arguments read aside) is encoded from argv. 1 when staged. */
static int stage_request_bytes(client *c) {
    const char *raw = c->req_raw, *at = raw;
    if (!raw || raw[0] != '*') return 0;
    const char *end = raw + c->req_raw_len;
    size_t want = 3 + ull_digits((unsigned long long)c->argc);
    for (int i = 0; i < c->argc; i++) {
        span a = c->argv[i];
        if (a.p < at || a.p > end || a.len > (size_t)(end - a.p)) return 0; /* not in order in the request */
        want += 5 + ull_digits(a.len) + a.len;
        at = a.p + a.len;
    }
    if (want != c->req_raw_len) return 0;
    size_t len = c->req_raw_len;
    if (!ps.nops && !ps.top) { /* the whole unit (the outermost call, alone): to the sinks as they are */
        if (c->db->id != ps.stream_db) {
            add_select(&ps.ops, c->db->id);
            feed(PROP_TO_AOF | PROP_TO_REPL, ps.ops.p, ps.ops.len);
            ps.ops.len = 0;
            ps.stream_db = c->db->id;
        }
        feed(PROP_TO_AOF | PROP_TO_REPL, raw, len);
        return 1;
    }
    stage_db(c->db->id);
    sb_add(&ps.ops, raw, len);
    ps.nops++;
    return 1;
}

/* The unit to the sinks of kind `to`: all of it, or (skip) without the
 * operations staged for the replicas only. */
static void commit_to(int to, int skip) {
    int n = skip ? ps.nops - ps.nrepl_only : ps.nops;
    if (!n) return;
    if (ps.lead) feed(to, ps.ops.p, ps.lead);
    if (n > 1) feed(to, "*1\r\n$5\r\nMULTI\r\n", 15);
    size_t at = ps.lead;
    for (int i = 0; skip && i < ps.nrepl_only; i++) {
        feed(to, ps.ops.p + at, ps.repl_only[i].start - at);
        at = ps.repl_only[i].end;
    }
    feed(to, ps.ops.p + at, ps.ops.len - at);
    if (n > 1) feed(to, "*1\r\n$4\r\nEXEC\r\n", 14);
}

static void commit(void) {
    if (ps.nops == 0) return;
    if (!ps.nrepl_only) {
        commit_to(PROP_TO_AOF | PROP_TO_REPL, 0);
    } else {
        commit_to(PROP_TO_REPL, 0);
        commit_to(PROP_TO_AOF, 1);
        ps.nrepl_only = 0;
    }
    ps.stream_db = ps.staged_db;
    ps.ops.len = 0;
    ps.nops = 0;
}

void prop_enter(prop_frame *f) {
    f->up = ps.top;
    f->dirty = srv.dirty;
    f->rewritten = 0;
    f->forced = 0;
    ps.top = f;
}

void prop_force(void) {
    if (ps.top) ps.top->forced = 1;
}

void prop_rewrite(client *c, int argc, const span *argv) {
    if (ps.top) ps.top->rewritten = 1;
    if (prop_active()) stage(c->db->id, argc, argv);
}

void prop_add(int dbid, int argc, const span *argv) {
    if (!prop_active()) return;
    stage(dbid, argc, argv);
    if (!ps.top) commit();
}

void prop_replicas_only(client *c) {
    if (!prop_active()) return;
    if (ps.nops == 0) { /* no SELECT: later operations select from the stream's database */
        ps.lead = 0;
        ps.staged_db = ps.stream_db;
    }
    if (ps.nrepl_only == ps.cap_repl_only) {
        ps.cap_repl_only = ps.cap_repl_only ? ps.cap_repl_only * 2 : 4;
        ps.repl_only = zrealloc(ps.repl_only, sizeof *ps.repl_only * (size_t)ps.cap_repl_only);
    }
    size_t start = ps.ops.len;
    sb_add_command(&ps.ops, c->argc, c->argv);
    ps.repl_only[ps.nrepl_only].start = start;
    ps.repl_only[ps.nrepl_only++].end = ps.ops.len;
    ps.nops++;
    if (ps.top) ps.top->rewritten = 1;
    else commit();
}

void prop_key_gone(int dbid, const char *key, size_t klen) {
    span argv[2] = {{"DEL", 3}, {key, klen}};
    prop_add(dbid, 2, argv);
}

/* ---- effects ------------------------------------------------------------------- */

static void effect_gone(client *c, span key) {
    span argv[2] = {{"DEL", 3}, key};
    stage(c->db->id, 2, argv);
}

static void effect_expire(client *c) {
    span key = c->argv[1];
    dnode *n = db_find(c->db, key.p, key.len);
    if (!n) {
        effect_gone(c, key);
        return;
    }
    if (!(n->flags & DN_EXPIRE)) {
        span argv[2] = {{"PERSIST", 7}, key};
        stage(c->db->id, 2, argv);
        return;
    }
    char ms[24];
    span argv[3] = {{"PEXPIREAT", 9}, key, {ms, ll_to_str(ms, dn_expire(n))}};
    stage(c->db->id, 3, argv);
}

static void effect_set(client *c) {
    span key = c->argv[1];
    dnode *n = db_find(c->db, key.p, key.len);
    if (!n || n->type != OBJ_STRING) {
        effect_gone(c, key);
        return;
    }
    char ms[24];
    span argv[5] = {{"SET", 3}, key, {dn_val(n), dn_vlen(n)}, {"PXAT", 4}, {ms, 0}};
    if (n->flags & DN_EXPIRE) argv[4].len = ll_to_str(ms, dn_expire(n));
    stage(c->db->id, (n->flags & DN_EXPIRE) ? 5 : 3, argv);
}

void prop_leave(prop_frame *f, client *c, const command *cmd) {
    ps.top = f->up;
    /* dirty grew: the dataset changed (a save only resets the counter: SAVE and SHUTDOWN are never
     * propagated, or every replica would run them) */
    if (prop_active() && (srv.dirty > f->dirty || f->forced) && !f->rewritten && !(cmd->props & PROP_NO_PROPAGATE)) {
        if ((cmd->props & PROP_EFFECT_EXPIRE) && c->argc >= 2)
            effect_expire(c);
        else if ((cmd->props & PROP_EFFECT_SET) && c->argc > 3)
            effect_set(c);
        else if (!stage_request_bytes(c))
            stage(c->db->id, c->argc, c->argv);
    }
    if (!ps.top) commit();
}
