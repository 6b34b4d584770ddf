/* nodes_conf.c - reader and writer of nodes.conf / CLUSTER NODES lines, as
 * redis-server 7.0.15 reads and writes them.
 *
 * Why: a cluster node keeps its view of the cluster in this file; ferry must
 * start from a file Redis wrote and write one Redis starts from. The rules
 * below were checked against a real redis-server 7.0.15 (fixtures in
 * tests/unit/fixtures/nodes_conf/, refusals by starting it on crafted files).
 *
 * Reading (Redis reads the file with fgets and splits each line as
 * redis-cli does, with quotes; so do we, with splitargs):
 *  - a zero-length file is "no config yet" (0, no nodes); any other file
 *    must hold exactly one node flagged myself (Redis: "Unrecoverable
 *    error: corrupted cluster config file." for none, an assertion for two);
 *  - lines end at "\n"; a final line without one counts; "\r" before it is
 *    a blank (CRLF files load); a line is cut at its first NUL byte (Redis
 *    reads C strings); empty lines (and lines starting with NUL) are
 *    skipped, but a line of blanks only is refused (Redis crashes on it);
 *  - "vars" (any case) then name/value pairs: currentEpoch, lastVoteEpoch
 *    (any case); other names are skipped; a name without a value refuses
 *    the file; several vars lines may appear anywhere, the last value wins;
 *  - a node line has at least 8 fields; the id and a master id are 40 bytes
 *    of [a-z0-9]; a master field starting with '-' means none;
 *  - the address is split at its first ',' (the hostname follows, maybe
 *    empty), then at its last ':' (so IPv6 addresses are bare, "::1:7000"),
 *    then the port at '@'; without "@cport" the bus port is port + 10000;
 *  - flags are a ',' list of myself, master, slave, fail?, fail, handshake,
 *    noaddr, nofailover, noflags, in any case; an unknown or empty one
 *    refuses the file (Redis panics);
 *  - the 8th field (link state) is not checked by Redis; "connected" reads
 *    as connected, anything else as disconnected;
 *  - slots: "N", "A-B", "[N->-id]" (migrating), "[N-<-id]" (importing);
 *    Redis accepts these on any line (the states are global there) and
 *    refuses a slot outside 0..16383 or a state without a valid id.
 * Where Redis reads a field with atoi/strtoull and so accepts trailing
 * garbage or a reversed range ("5x", "10-5", "[5-x-id]"), we refuse: no
 * Redis-written file has them. We also refuse what Redis would accept but
 * could not write back as read: an ip longer than 45 bytes (Redis overruns
 * its buffer), a hostname longer than 255, ip or hostname bytes that are
 * blanks or quotes, ports above 65535, and lines longer than Redis's fgets
 * buffer.
 *
 * Writing follows clusterGenNodeDescription: the hostname only when not
 * empty, the flags in a fixed order ("noflags" for none), slots ascending
 * with runs as "A-B", then the slot states.
 */
#include "nodes_conf.h"

#include <ctype.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/types.h>

#include "file_atomic.h"
#include "splitargs.h"
#include "zmalloc.h"

#define NC_MIN_FIELDS 8
#define NC_SLOT_MAX (NC_SLOTS - 1)
#define NC_TOKENS_INIT 64

/* The writer's flag names, in Redis's order. */
static const struct {
    unsigned flag;
    const char *name;
} flag_names[] = {
    {NC_MYSELF, "myself"}, {NC_MASTER, "master"},       {NC_SLAVE, "slave"},   {NC_PFAIL, "fail?"},
    {NC_FAIL, "fail"},     {NC_HANDSHAKE, "handshake"}, {NC_NOADDR, "noaddr"}, {NC_NOFAILOVER, "nofailover"},
};
#define NFLAG_NAMES (sizeof flag_names / sizeof flag_names[0])

/* One token of the current line (in the parser's copy of it). */
typedef struct tok {
    const char *p;
    size_t len;
    size_t off; /* offset in the input buffer, for errors */
} tok;

typedef struct nc_parser {
    nodes_conf_fn *on_node;
    void *arg;
    nodes_conf_vars *vars;
    nodes_conf_err *err;
    size_t line_no, line_off;
    int myself_seen;
    char *copy; /* the line, unescaped in place by splitargs */
    size_t copy_cap;
    splitargs_span *spans;
    size_t spans_cap;
    nc_slot_state *states;
    size_t states_cap;
    nc_node node;
} nc_parser;

/* ---- small pure helpers ------------------------------------------------ */

static int tok_is(const tok *t, const char *s) {
    size_t n = strlen(s);
    return t->len == n && memcmp(t->p, s, n) == 0;
}

static int eq_nocase(const char *p, size_t n, const char *s) {
    if (strlen(s) != n) return 0;
    for (size_t i = 0; i < n; i++)
        if (tolower((unsigned char)p[i]) != tolower((unsigned char)s[i])) return 0;
    return 1;
}

/* Decimal digits only (at least one), at most max. */
static int parse_uint(const char *p, size_t n, unsigned long long max, unsigned long long *out) {
    unsigned long long v = 0;
    if (n == 0) return 0;
    for (size_t i = 0; i < n; i++) {
        if (p[i] < '0' || p[i] > '9') return 0;
        unsigned d = (unsigned)(p[i] - '0');
        if (v > (max - d) / 10) return 0;
        v = v * 10 + d;
    }
    *out = v;
    return 1;
}

/* verifyClusterNodeId: exactly 40 bytes of [a-z0-9]. */
static int valid_id(const char *p, size_t n) {
    if (n != NC_ID_LEN) return 0;
    for (size_t i = 0; i < n; i++)
        if (!((p[i] >= 'a' && p[i] <= 'z') || (p[i] >= '0' && p[i] <= '9'))) return 0;
    return 1;
}

/* Bytes that would not survive being written unquoted and split again. */
static int plain_bytes(const char *p, size_t n) {
    for (size_t i = 0; i < n; i++)
        if (isspace((unsigned char)p[i]) || p[i] == '"' || p[i] == '\'' || p[i] == '\0') return 0;
    return 1;
}

static void copy_str(char *dst, const char *p, size_t n) {
    memcpy(dst, p, n);
    dst[n] = '\0';
}

/* ---- errors ------------------------------------------------------------ */

__attribute__((format(printf, 3, 4))) static int fail(nc_parser *ps, size_t off, const char *fmt, ...) {
    nodes_conf_err *e = ps->err;
    if (!e) return -1;
    e->line = ps->line_no;
    e->offset = off;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(e->reason, sizeof e->reason, fmt, ap);
    va_end(ap);
    return -1;
}

/* ---- node line fields -------------------------------------------------- */

static int parse_port(const char *p, size_t n, int *out) {
    unsigned long long v;
    if (!parse_uint(p, n, NC_PORT_MAX, &v)) return 0;
    *out = (int)v;
    return 1;
}

/* "<ip>:<port>[@<cport>][,<hostname>]" */
static int parse_address(nc_parser *ps, const tok *t, nc_node *n) {
    const char *comma = memchr(t->p, ',', t->len);
    size_t alen = comma ? (size_t)(comma - t->p) : t->len;
    if (comma) {
        size_t hlen = t->len - alen - 1;
        if (hlen > NC_HOSTNAME_MAX || !plain_bytes(comma + 1, hlen))
            return fail(ps, t->off + alen + 1, "invalid hostname");
        copy_str(n->hostname, comma + 1, hlen);
    }
    const char *colon = memrchr(t->p, ':', alen);
    if (!colon) return fail(ps, t->off, "no ':' in the node address");
    size_t iplen = (size_t)(colon - t->p);
    if (iplen > NC_IP_MAX || !plain_bytes(t->p, iplen)) return fail(ps, t->off, "invalid ip address");
    copy_str(n->ip, t->p, iplen);
    const char *port = colon + 1, *end = t->p + alen;
    const char *at = memchr(port, '@', (size_t)(end - port));
    if (!parse_port(port, (size_t)((at ? at : end) - port), &n->port))
        return fail(ps, t->off + iplen + 1, "invalid port");
    if (at) {
        if (!parse_port(at + 1, (size_t)(end - at - 1), &n->cport))
            return fail(ps, t->off + (size_t)(at + 1 - t->p), "invalid cluster bus port");
    } else {
        n->cport = n->port + NC_CPORT_INCR;
        if (n->cport > NC_PORT_MAX) return fail(ps, t->off + iplen + 1, "cluster bus port out of range");
    }
    return 0;
}

static int flag_of(const char *p, size_t n, unsigned *flag) {
    if (eq_nocase(p, n, "noflags")) {
        *flag = 0;
        return 1;
    }
    for (size_t i = 0; i < NFLAG_NAMES; i++) {
        if (eq_nocase(p, n, flag_names[i].name)) {
            *flag = flag_names[i].flag;
            return 1;
        }
    }
    return 0;
}

static int parse_flags(nc_parser *ps, const tok *t, nc_node *n) {
    size_t i = 0;
    for (;;) {
        const char *c = memchr(t->p + i, ',', t->len - i);
        size_t e = c ? (size_t)(c - t->p) : t->len;
        unsigned f;
        if (!flag_of(t->p + i, e - i, &f)) return fail(ps, t->off + i, "Unknown flag in redis cluster config file");
        if ((f & NC_MYSELF) && ps->myself_seen) return fail(ps, t->off + i, "a second myself node");
        if (f & NC_MYSELF) ps->myself_seen = 1;
        n->flags |= f;
        if (!c) return 0;
        i = e + 1;
    }
}

static int push_state(nc_parser *ps, const nc_slot_state *st) {
    if (ps->node.nstates == ps->states_cap) {
        ps->states_cap = ps->states_cap ? ps->states_cap * 2 : 16;
        ps->states = zrealloc(ps->states, ps->states_cap * sizeof *ps->states);
    }
    ps->states[ps->node.nstates++] = *st;
    return 0;
}

/* "[N->-id]" or "[N-<-id]" */
static int parse_state(nc_parser *ps, const tok *t) {
    nc_slot_state st;
    unsigned long long slot;
    size_t i = 1;
    while (i < t->len && t->p[i] >= '0' && t->p[i] <= '9') i++;
    if (!parse_uint(t->p + 1, i - 1, NC_SLOT_MAX, &slot)) return fail(ps, t->off, "invalid slot in a slot state");
    if (t->len != i + 3 + NC_ID_LEN + 1 || t->p[t->len - 1] != ']') return fail(ps, t->off, "invalid slot state");
    if (memcmp(t->p + i, "->-", 3) == 0)
        st.importing = 0;
    else if (memcmp(t->p + i, "-<-", 3) == 0)
        st.importing = 1;
    else
        return fail(ps, t->off + i, "invalid slot state direction");
    if (!valid_id(t->p + i + 3, NC_ID_LEN)) return fail(ps, t->off + i + 3, "invalid node id in a slot state");
    st.slot = (int)slot;
    copy_str(st.id, t->p + i + 3, NC_ID_LEN);
    return push_state(ps, &st);
}

/* "N", "A-B" or a slot state */
static int parse_slots(nc_parser *ps, const tok *t, nc_node *n) {
    if (t->len && t->p[0] == '[') return parse_state(ps, t);
    const char *dash = memchr(t->p, '-', t->len);
    size_t alen = dash ? (size_t)(dash - t->p) : t->len;
    unsigned long long a, b;
    if (!parse_uint(t->p, alen, NC_SLOT_MAX, &a)) return fail(ps, t->off, "invalid slot");
    b = a;
    if (dash && !parse_uint(dash + 1, t->len - alen - 1, NC_SLOT_MAX, &b))
        return fail(ps, t->off + alen + 1, "invalid slot");
    if (b < a) return fail(ps, t->off, "reversed slot range");
    for (unsigned long long s = a; s <= b; s++) nc_slot_set(n, (int)s);
    return 0;
}

static int parse_node(nc_parser *ps, const tok *tv, size_t nt) {
    nc_node *n = &ps->node;
    unsigned long long v;
    memset(n, 0, sizeof *n);
    if (nt < NC_MIN_FIELDS) return fail(ps, ps->line_off, "fewer than 8 fields in a node line");
    if (!valid_id(tv[0].p, tv[0].len)) return fail(ps, tv[0].off, "invalid node id");
    copy_str(n->id, tv[0].p, NC_ID_LEN);
    if (parse_address(ps, &tv[1], n) || parse_flags(ps, &tv[2], n)) return -1;
    if (tv[3].len == 0 || tv[3].p[0] != '-') {
        if (!valid_id(tv[3].p, tv[3].len)) return fail(ps, tv[3].off, "invalid master node id");
        copy_str(n->master, tv[3].p, NC_ID_LEN);
    }
    if (!parse_uint(tv[4].p, tv[4].len, (unsigned long long)LLONG_MAX, &v)) return fail(ps, tv[4].off, "invalid ping-sent time");
    n->ping_sent = (long long)v;
    if (!parse_uint(tv[5].p, tv[5].len, (unsigned long long)LLONG_MAX, &v)) return fail(ps, tv[5].off, "invalid pong-received time");
    n->pong_recv = (long long)v;
    if (!parse_uint(tv[6].p, tv[6].len, ULLONG_MAX, &n->config_epoch)) return fail(ps, tv[6].off, "invalid config epoch");
    n->connected = tok_is(&tv[7], "connected");
    for (size_t j = NC_MIN_FIELDS; j < nt; j++)
        if (parse_slots(ps, &tv[j], n)) return -1;
    n->states = ps->states;
    if (ps->on_node && ps->on_node(ps->arg, n, ps->line_no)) return fail(ps, ps->line_off, "refused by the loader");
    return 0;
}

static int parse_vars(nc_parser *ps, const tok *tv, size_t nt) {
    if (nt % 2 == 0) return fail(ps, tv[nt - 1].off, "a vars name without a value");
    for (size_t j = 1; j < nt; j += 2) {
        unsigned long long *dst = NULL, v;
        if (eq_nocase(tv[j].p, tv[j].len, "currentEpoch"))
            dst = &ps->vars->current_epoch;
        else if (eq_nocase(tv[j].p, tv[j].len, "lastVoteEpoch"))
            dst = &ps->vars->last_vote_epoch;
        if (!dst) {
            ps->vars->unknown++;
            continue;
        }
        if (!parse_uint(tv[j + 1].p, tv[j + 1].len, ULLONG_MAX, &v)) return fail(ps, tv[j + 1].off, "invalid vars value");
        *dst = v;
    }
    ps->vars->seen++;
    return 0;
}

/* ---- lines ------------------------------------------------------------- */

/* Splits the line (copied) into ps->spans; returns the count or -1. */
static ssize_t split_line(nc_parser *ps, const char *line, size_t n) {
    if (n > ps->copy_cap) {
        ps->copy = zrealloc(ps->copy, n);
        ps->copy_cap = n;
    }
    memcpy(ps->copy, line, n);
    size_t pos = 0, count = 0;
    for (;;) {
        if (count == ps->spans_cap) {
            ps->spans_cap = ps->spans_cap ? ps->spans_cap * 2 : NC_TOKENS_INIT;
            ps->spans = zrealloc(ps->spans, ps->spans_cap * sizeof *ps->spans);
        }
        ssize_t k = splitargs(ps->copy, n, &pos, SPLITARGS_NO_NUL_ESCAPE, ps->spans + count, ps->spans_cap - count);
        if (k < 0) return -1;
        count += (size_t)k;
        if (pos >= n) return (ssize_t)count;
    }
}

static int parse_line(nc_parser *ps, const char *line, size_t n) {
    if (n > NC_LINE_MAX) return fail(ps, ps->line_off, "line longer than %d bytes", NC_LINE_MAX);
    const char *nul = memchr(line, '\0', n);
    if (nul) n = (size_t)(nul - line);
    if (n == 0) return 0;
    ssize_t nt = split_line(ps, line, n);
    if (nt < 0) return fail(ps, ps->line_off, "unbalanced quotes");
    if (nt == 0) return fail(ps, ps->line_off, "a line of blanks only");
    tok tv_small[NC_TOKENS_INIT], *tv = (size_t)nt <= NC_TOKENS_INIT ? tv_small : zmalloc((size_t)nt * sizeof *tv);
    for (ssize_t i = 0; i < nt; i++) {
        tv[i].p = ps->copy + ps->spans[i].off;
        tv[i].len = ps->spans[i].len;
        tv[i].off = ps->line_off + ps->spans[i].off;
    }
    int rc = eq_nocase(tv[0].p, tv[0].len, "vars") ? parse_vars(ps, tv, (size_t)nt) : parse_node(ps, tv, (size_t)nt);
    if (tv != tv_small) zfree(tv);
    return rc;
}

static int parse_all(nc_parser *ps, const char *buf, size_t len) {
    size_t off = 0;
    while (off < len) {
        const char *nl = memchr(buf + off, '\n', len - off);
        size_t end = nl ? (size_t)(nl - buf) : len;
        ps->line_no++;
        ps->line_off = off;
        if (parse_line(ps, buf + off, end - off)) return -1;
        off = end + 1;
    }
    if (len && !ps->myself_seen) {
        ps->line_no = 0;
        return fail(ps, 0, "no myself node");
    }
    return 0;
}

int nodes_conf_parse(const char *buf, size_t len, nodes_conf_fn *on_node, nodes_conf_vars *vars, void *arg,
                     nodes_conf_err *err) {
    nodes_conf_vars scratch_vars;
    nc_parser ps;
    memset(&ps, 0, sizeof ps);
    ps.on_node = on_node;
    ps.arg = arg;
    ps.vars = vars ? vars : &scratch_vars;
    ps.err = err;
    memset(ps.vars, 0, sizeof *ps.vars);
    if (err) memset(err, 0, sizeof *err);
    int rc = parse_all(&ps, buf, len);
    zfree(ps.copy);
    zfree(ps.spans);
    zfree(ps.states);
    return rc;
}

/* ---- writer ------------------------------------------------------------ */

static void format_flags(sbuf *out, unsigned flags) {
    int first = 1;
    for (size_t i = 0; i < NFLAG_NAMES; i++) {
        if (!(flags & flag_names[i].flag)) continue;
        if (!first) sb_addc(out, ',');
        sb_adds(out, flag_names[i].name);
        first = 0;
    }
    if (first) sb_adds(out, "noflags");
}

static void format_slots(sbuf *out, const nc_node *n) {
    int s = 0;
    while (s < NC_SLOTS) {
        if (!n->slots[s >> 3]) { /* a whole empty byte */
            s = (s | 7) + 1;
            continue;
        }
        if (!nc_slot_get(n, s)) {
            s++;
            continue;
        }
        int e = s;
        while (e + 1 < NC_SLOTS && nc_slot_get(n, e + 1)) e++;
        if (e == s)
            sb_addf(out, " %d", s);
        else
            sb_addf(out, " %d-%d", s, e);
        s = e + 1;
    }
}

void nodes_conf_format_node(sbuf *out, const nc_node *n, int with_slot_states) {
    sb_add(out, n->id, strnlen(n->id, NC_ID_LEN));
    sb_addf(out, " %s:%d@%d", n->ip, n->port, n->cport);
    if (n->hostname[0]) sb_addf(out, ",%s", n->hostname);
    sb_addc(out, ' ');
    format_flags(out, n->flags);
    sb_addc(out, ' ');
    if (n->master[0])
        sb_add(out, n->master, strnlen(n->master, NC_ID_LEN));
    else
        sb_addc(out, '-');
    sb_addf(out, " %lld %lld %llu %s", n->ping_sent, n->pong_recv, n->config_epoch,
            n->connected ? "connected" : "disconnected");
    format_slots(out, n);
    for (size_t i = 0; with_slot_states && i < n->nstates; i++) {
        const nc_slot_state *st = &n->states[i];
        sb_addf(out, " [%d%s%.40s]", st->slot, st->importing ? "-<-" : "->-", st->id);
    }
    sb_addc(out, '\n');
}

void nodes_conf_format_vars(sbuf *out, const nodes_conf_vars *vars) {
    sb_addf(out, "vars currentEpoch %llu lastVoteEpoch %llu\n", vars->current_epoch, vars->last_vote_epoch);
}

int nodes_conf_save(const char *path, const sbuf *content, int durable) {
    return file_replace(path, content->p ? content->p : "", content->len, durable);
}
