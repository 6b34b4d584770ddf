/* reply.c - RESP2/RESP3 reply encoders that stage bytes in the client's
 * output ring (see reply.h). Small replies are formatted straight into the
 * ring when it has contiguous room; nothing here allocates per reply unless
 * the ring must grow. Output limits (outlimit.c) are checked whenever the
 * ring must grow, and a growth is reported to client eviction. */
#include "reply.h"
#include "client_evict.h"
#include "command.h"
#include "outbuf.h"
#include "outlimit.h"
#include "server.h"
#include "util.h"
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include "zmalloc.h"

const char RESP_OK[] = "+OK\r\n";
const char RESP_PONG[] = "+PONG\r\n";
const char RESP_NULLBULK[] = "$-1\r\n";
const char RESP_ZERO[] = ":0\r\n";
const char RESP_ONE[] = ":1\r\n";
const char RESP_QUEUED[] = "+QUEUED\r\n";

errstat g_errstats[128];
int g_nerrstats;

static reply_to_replica_fn *to_replica;

void reply_set_replica_hook(reply_to_replica_fn *fn) { to_replica = fn; }

/* A reply is dropped (CLIENT REPLY OFF / SKIP, a replica's link). A
 * replica's link carries the stream and nothing else, so a command of the
 * replica's that makes a reply is reported (the hook closes it, as Redis). */
static int muted_slow(client *c) {
    if (c->repl_role == CLIENT_REPL_REPLICA && to_replica && !(c->flags & CF_CLOSE_ASAP)) to_replica(c);
    return 1;
}

static inline int muted(client *c) { return (c->flags & (CF_REPLY_OFF | CF_REPLY_SKIP)) != 0 && muted_slow(c); }

/* The ring must grow (or wrap): the output limits are checked here, before
 * any memory is taken, so one huge reply cannot outrun them. A client
 * scheduled for closing gets nothing more. */
static void stage_slow(client *c, const char *s, size_t n) {
    if (client_check_output_limits_extra(c, n)) return;
    size_t cap = c->out.cap;
    ring_append(&c->out, s, n);
    if (c->out.cap != cap) clients_memory_grew();
}

static inline void stage(client *c, const char *s, size_t n) {
    if (!(c->flags & CF_PENDING_WRITE)) client_mark_pending(c);
    char *w = ring_write_ptr(&c->out, n);
    if (w) {
        memcpy(w, s, n);
        ring_commit(&c->out, n);
    } else {
        stage_slow(c, s, n);
    }
}

void reply_raw(client *c, const char *s, size_t n) {
    if (muted(c)) return;
    stage(c, s, n);
}

void reply_ok(client *c) { reply_raw(c, RESP_OK, 5); }

void reply_status(client *c, const char *s) {
    if (muted(c)) return;
    size_t n = strlen(s);
    stage(c, "+", 1);
    stage(c, s, n);
    stage(c, "\r\n", 2);
}

/* "<prefix><number>\r\n" */
static void reply_prefixed_ll(client *c, char prefix, long long v) {
    char buf[32];
    buf[0] = prefix;
    size_t n = 1 + ll_to_str(buf + 1, v);
    buf[n++] = '\r';
    buf[n++] = '\n';
    stage(c, buf, n);
}

void reply_int(client *c, long long v) {
    if (muted(c)) return;
    if (v == 0) { stage(c, RESP_ZERO, 4); return; }
    if (v == 1) { stage(c, RESP_ONE, 4); return; }
    reply_prefixed_ll(c, ':', v);
}

void reply_bulk(client *c, const char *p, size_t n) {
    if (muted(c)) return;
    size_t need = n + 24;
    char *w = ring_write_ptr(&c->out, need);
    if (w && need <= 4096) { /* one contiguous write for small bulks */
        if (!(c->flags & CF_PENDING_WRITE)) client_mark_pending(c);
        size_t k = 0;
        w[k++] = '$';
        k += ll_to_str(w + k, (long long)n);
        w[k++] = '\r';
        w[k++] = '\n';
        memcpy(w + k, p, n);
        k += n;
        w[k++] = '\r';
        w[k++] = '\n';
        ring_commit(&c->out, k);
        return;
    }
    reply_prefixed_ll(c, '$', (long long)n);
    stage(c, p, n);
    stage(c, "\r\n", 2);
}

void reply_bulk_span(client *c, span s) { reply_bulk(c, s.p, s.len); }

void reply_help(client *c, const char *const *lines) {
    long n = 0;
    while (lines[n]) n++;
    reply_array(c, n);
    for (long i = 0; i < n; i++) reply_status(c, lines[i]);
}
void reply_bulk_value(client *c, dnode *n) {
    const char *p = dn_val(n);
    size_t len = dn_vlen(n);
    if (muted(c) || len < OUTBUF_REF_MIN) {
        reply_bulk(c, p, len);
        return;
    }
    reply_prefixed_ll(c, '$', (long long)len);
    int r = outbuf_stage_ref(c, n, p, len);
    if (r < 0) return; /* closed by its output limit */
    if (r == 0) stage(c, p, len);
    stage(c, "\r\n", 2);
}

void reply_bulk_cstr(client *c, const char *s) { reply_bulk(c, s, strlen(s)); }

void reply_bulk_ll(client *c, long long v) {
    char buf[24];
    size_t n = ll_to_str(buf, v);
    reply_bulk(c, buf, n);
}

void reply_null(client *c) {
    if (muted(c)) return;
    if (c->resp >= 3) stage(c, "_\r\n", 3);
    else stage(c, RESP_NULLBULK, 5);
}

void reply_null_array(client *c) {
    if (muted(c)) return;
    if (c->resp >= 3) stage(c, "_\r\n", 3);
    else stage(c, "*-1\r\n", 5);
}

void reply_array(client *c, long n) {
    if (muted(c)) return;
    reply_prefixed_ll(c, '*', n);
}

void reply_map(client *c, long n) {
    if (muted(c)) return;
    if (c->resp >= 3) reply_prefixed_ll(c, '%', n);
    else reply_prefixed_ll(c, '*', n * 2);
}

void reply_set(client *c, long n) {
    if (muted(c)) return;
    reply_prefixed_ll(c, c->resp >= 3 ? '~' : '*', n);
}

void reply_push(client *c, long n) {
    if (muted(c)) return;
    reply_prefixed_ll(c, c->resp >= 3 ? '>' : '*', n);
}

void reply_double(client *c, double d) {
    if (muted(c)) return;
    char buf[64];
    size_t n = d_to_str(buf, sizeof buf, d);
    if (c->resp >= 3) {
        stage(c, ",", 1);
        stage(c, buf, n);
        stage(c, "\r\n", 2);
    } else {
        reply_bulk(c, buf, n);
    }
}

void reply_bool(client *c, int b) {
    if (muted(c)) return;
    if (c->resp >= 3) stage(c, b ? "#t\r\n" : "#f\r\n", 4);
    else stage(c, b ? RESP_ONE : RESP_ZERO, 4);
}

void reply_verbatim(client *c, const char *p, size_t n, const char *ext) {
    if (muted(c)) return;
    if (c->resp < 3) {
        reply_bulk(c, p, n);
        return;
    }
    reply_prefixed_ll(c, '=', (long long)n + 4);
    stage(c, ext, 3);
    stage(c, ":", 1);
    stage(c, p, n);
    stage(c, "\r\n", 2);
}

/* ---- errors ------------------------------------------------------------ */

static void count_error(const char *s, size_t n) {
    size_t plen = 0;
    while (plen < n && s[plen] != ' ') plen++;
    if (plen >= sizeof g_errstats[0].name) plen = sizeof g_errstats[0].name - 1;
    srv.stats.total_error_replies++;
    for (int i = 0; i < g_nerrstats; i++) {
        if (strlen(g_errstats[i].name) == plen && memcmp(g_errstats[i].name, s, plen) == 0) {
            g_errstats[i].count++;
            return;
        }
    }
    if (g_nerrstats == (int)(sizeof g_errstats / sizeof g_errstats[0])) return;
    memcpy(g_errstats[g_nerrstats].name, s, plen);
    g_errstats[g_nerrstats].name[plen] = '\0';
    g_errstats[g_nerrstats].count = 1;
    g_nerrstats++;
}

void errstats_reset(void) {
    g_nerrstats = 0;
    memset(g_errstats, 0, sizeof g_errstats);
}

void reply_count_error(const char *s) { count_error(s, strlen(s)); }

/* An error in reply to our primary's stream means the datasets diverge:
 * logged as Redis logs it (the primary never reads it). */
static void error_to_primary(const client *c, const char *s, size_t n) {
    server_log(LOG_WARNING_, "== CRITICAL == This replica is sending an error to its master: '%.*s' after "
                             "processing the command '%s'", (int)(n > 256 ? 256 : n), s,
               c->cmd ? c->cmd->fullname : "<unknown>");
}

static void stage_error(client *c, const char *s, size_t n) {
    if (c->repl_role == CLIENT_REPL_MASTER) error_to_primary(c, s, n);
    if (muted(c)) return;
    stage(c, "-", 1);
    size_t start = 0;
    for (size_t i = 0; i < n; i++) {
        if (s[i] == '\r' || s[i] == '\n') {
            if (i > start) stage(c, s + start, i - start);
            stage(c, " ", 1);
            start = i + 1;
        }
    }
    if (n > start) stage(c, s + start, n - start);
    stage(c, "\r\n", 2);
}

/* Errors are counted even when the reply is muted (CLIENT REPLY OFF), as Redis does. */
static void reply_error_len(client *c, const char *s, size_t n) {
    count_error(s, n);
    stage_error(c, s, n);
}

void reply_error(client *c, const char *s) { reply_error_len(c, s, strlen(s)); }
void reply_error_counted(client *c, const char *s, size_t n) { stage_error(c, s, n); }

void reply_errorf(client *c, const char *fmt, ...) {
    char buf[1024];
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    if (n < 0) return;
    if ((size_t)n < sizeof buf) {
        reply_error_len(c, buf, (size_t)n);
        return;
    }
    char *big = zmalloc((size_t)n + 1);
    va_start(ap, fmt);
    vsnprintf(big, (size_t)n + 1, fmt, ap);
    va_end(ap);
    reply_error_len(c, big, (size_t)n);
    zfree(big);
}

void reply_err_arity(client *c) {
    reply_errorf(c, "ERR wrong number of arguments for '%s' command", c->cmd ? c->cmd->fullname : "?");
}
void reply_err_syntax(client *c) { reply_error(c, "ERR syntax error"); }
void reply_err_wrongtype(client *c) {
    reply_error(c, "WRONGTYPE Operation against a key holding the wrong kind of value");
}
void reply_err_notint(client *c) { reply_error(c, "ERR value is not an integer or out of range"); }
void reply_err_notfloat(client *c) { reply_error(c, "ERR value is not a valid float"); }
