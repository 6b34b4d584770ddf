/* test_nodes_conf.c - Criterion unit tests for src/cluster/nodes_conf.c (the
 * nodes.conf / CLUSTER NODES reader and writer).
 *
 * Why: ferry must load the nodes.conf a redis-server 7.0.15 node wrote and
 * write one it loads. The fixtures in tests/unit/fixtures/nodes_conf/ were
 * saved by real redis-server 7.0.15 nodes (CLUSTER SAVECONFIG, one CLUSTER
 * NODES reply); every one must parse and re-format byte for byte. The
 * refusals are the files redis-server 7.0.15 refused when started on them.
 * Every prefix of every fixture must parse or fail cleanly, and random
 * records must survive format -> parse.
 */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "nodes_conf.h"
#include "zmalloc.h"

#define FIXDIR "tests/unit/fixtures/nodes_conf/"
#define MAXN 16
#define MAXST 64
#define A "f94c587ad908c0dfe03a92936baec525bf20907e"
#define B "cb7e45713aec8de942b090cc14a006043524e679"
#define ME A " 127.0.0.1:7000@17000 myself,master - 0 0 0 connected"

/* The nodes a parse reported, copied (states included). */
typedef struct got {
    int n;
    nc_node nodes[MAXN];
    nc_slot_state states[MAXN][MAXST];
    size_t lines[MAXN];
    int refuse_at; /* refuse the node with this index (-1: none) */
} got;

static int collect(void *arg, const nc_node *n, size_t line) {
    got *g = arg;
    if (g->n == g->refuse_at) return 1;
    cr_assert_lt(g->n, MAXN);
    cr_assert_leq(n->nstates, MAXST);
    g->nodes[g->n] = *n;
    if (n->nstates) memcpy(g->states[g->n], n->states, n->nstates * sizeof *n->states);
    g->nodes[g->n].states = g->states[g->n];
    g->lines[g->n] = line;
    g->n++;
    return 0;
}

static int parse(const char *s, size_t len, got *g, nodes_conf_vars *v, nodes_conf_err *e) {
    memset(g, 0, sizeof *g);
    g->refuse_at = -1;
    return nodes_conf_parse(s, len, collect, v, g, e);
}

static int parse_s(const char *s, got *g, nodes_conf_err *e) { return parse(s, strlen(s), g, NULL, e); }

static char *slurp(const char *name, size_t *len) {
    char path[256];
    snprintf(path, sizeof path, FIXDIR "%s", name);
    FILE *f = fopen(path, "rb");
    cr_assert_not_null(f, "%s", path);
    char *buf = malloc(1 << 16);
    *len = fread(buf, 1, 1 << 16, f);
    fclose(f);
    return buf;
}

static int same_node(const nc_node *a, const nc_node *b) {
    if (strcmp(a->id, b->id) || strcmp(a->ip, b->ip) || strcmp(a->hostname, b->hostname) ||
        strcmp(a->master, b->master))
        return 0;
    if (a->port != b->port || a->cport != b->cport || a->flags != b->flags || a->ping_sent != b->ping_sent ||
        a->pong_recv != b->pong_recv || a->config_epoch != b->config_epoch || a->connected != b->connected)
        return 0;
    if (memcmp(a->slots, b->slots, sizeof a->slots) || a->nstates != b->nstates) return 0;
    for (size_t i = 0; i < a->nstates; i++)
        if (a->states[i].slot != b->states[i].slot || a->states[i].importing != b->states[i].importing ||
            strcmp(a->states[i].id, b->states[i].id))
            return 0;
    return 1;
}

static const char *const fixtures[] = {"fresh.conf", "node1.conf", "node2.conf", "node3.conf",
                                       "pfail1.conf", "pfail3.conf", "cluster_nodes_handshake.txt"};
#define NFIX (sizeof fixtures / sizeof fixtures[0])

Test(nodes_conf, fixtures_reformat_byte_for_byte) {
    for (size_t i = 0; i < NFIX; i++) {
        size_t len;
        char *buf = slurp(fixtures[i], &len);
        got g;
        nodes_conf_vars v;
        nodes_conf_err e;
        cr_assert_eq(parse(buf, len, &g, &v, &e), 0, "%s: line %zu: %s", fixtures[i], e.line, e.reason);
        cr_assert_gt(g.n, 0);
        sbuf out = {0};
        for (int k = 0; k < g.n; k++) nodes_conf_format_node(&out, &g.nodes[k], 1);
        if (v.seen) nodes_conf_format_vars(&out, &v);
        cr_assert_eq(out.len, len, "%s", fixtures[i]);
        cr_assert(memcmp(out.p, buf, len) == 0, "%s:\n%s", fixtures[i], out.p);
        sb_free(&out);
        free(buf);
    }
}

static got *parse_fixture(const char *name, nodes_conf_vars *v) {
    static got g;
    size_t len;
    char *buf = slurp(name, &len);
    cr_assert_eq(parse(buf, len, &g, v, NULL), 0);
    free(buf);
    return &g;
}

Test(nodes_conf, fixture_fields) {
    nodes_conf_vars v;
    got *g = parse_fixture("node1.conf", &v);
    cr_assert_eq(g->n, 3);
    cr_assert_eq(v.current_epoch, 2);
    cr_assert_eq(v.last_vote_epoch, 0);
    cr_assert_eq(v.seen, 1);
    const nc_node *b = &g->nodes[0], *c = &g->nodes[1], *me = &g->nodes[2];
    cr_assert_str_eq(b->id, B);
    cr_assert_str_eq(b->ip, "127.0.0.1");
    cr_assert_eq(b->port, 27102);
    cr_assert_eq(b->cport, 37102);
    cr_assert_str_eq(b->hostname, "host-b.example");
    cr_assert_eq(b->flags, NC_MASTER);
    cr_assert_eq(b->config_epoch, 1);
    cr_assert_eq(b->pong_recv, 1795907014970LL);
    cr_assert(nc_slot_get(b, 5005) && nc_slot_get(b, 10000) && nc_slot_get(b, 16383) && !nc_slot_get(b, 6000));
    cr_assert_str_eq(c->master, A);
    cr_assert_eq(c->flags, NC_SLAVE);
    cr_assert_str_eq(c->hostname, "c3");
    cr_assert_eq(me->flags, NC_MYSELF | NC_MASTER);
    cr_assert_eq(me->master[0], '\0');
    cr_assert(me->connected);
    cr_assert(nc_slot_get(me, 0) && nc_slot_get(me, 5000) && !nc_slot_get(me, 5001) && nc_slot_get(me, 5002));
    cr_assert_eq(me->nstates, 3);
    cr_assert_eq(me->states[0].slot, 100);
    cr_assert_eq(me->states[0].importing, 0);
    cr_assert_str_eq(me->states[0].id, B);
    cr_assert_eq(me->states[2].slot, 7000);
    cr_assert_eq(me->states[2].importing, 1);

    g = parse_fixture("pfail3.conf", &v);
    cr_assert_eq(g->nodes[0].flags, NC_MYSELF | NC_SLAVE | NC_NOFAILOVER);
    cr_assert_eq(g->nodes[2].flags, NC_MASTER | NC_PFAIL);
    cr_assert_eq(g->nodes[2].connected, 0);
    cr_assert_eq(g->nodes[2].ping_sent, 1795907019024LL);

    g = parse_fixture("fresh.conf", &v);
    cr_assert_eq(g->n, 1);
    cr_assert_str_eq(g->nodes[0].ip, "");
    cr_assert_eq(g->nodes[0].port, 0);
    cr_assert_eq(g->nodes[0].cport, 0);

    g = parse_fixture("cluster_nodes_handshake.txt", &v);
    cr_assert_eq(v.seen, 0);
    cr_assert_str_eq(g->nodes[2].ip, "::1");
    cr_assert_eq(g->nodes[2].port, 27109);
    cr_assert_eq(g->nodes[2].cport, 37109);
    cr_assert_eq(g->nodes[2].flags, NC_HANDSHAKE);
}

/* Forms Redis accepts that it does not write itself. */
Test(nodes_conf, accepted_variants) {
    got g;
    nodes_conf_vars v;
    nodes_conf_err e;
    const char *crlf = ME " 1-3\r\nvars currentEpoch 5 lastVoteEpoch 4\r\n";
    cr_assert_eq(parse(crlf, strlen(crlf), &g, &v, &e), 0, "%s", e.reason);
    cr_assert(nc_slot_get(&g.nodes[0], 3) && g.nodes[0].connected);
    cr_assert_eq(v.current_epoch, 5);
    cr_assert_eq(v.last_vote_epoch, 4);
    cr_assert_eq(parse_s(ME, &g, &e), 0); /* no final newline */
    cr_assert_eq(g.n, 1);
    cr_assert_eq(parse_s("\n\n" ME "\n\n\n", &g, &e), 0); /* blank lines, and Redis's newline padding */
    cr_assert_eq(g.lines[0], 3);
    cr_assert_eq(parse_s(A " 10.0.0.1:6379 MySelf,MASTER - 0 0 0 connected\n", &g, &e), 0);
    cr_assert_eq(g.nodes[0].cport, 16379); /* pre-4.0 line: port + 10000 */
    cr_assert_eq(g.nodes[0].flags, NC_MYSELF | NC_MASTER);
    cr_assert_eq(parse_s(A " :0@0,, myself,noflags - 0 0 0 whatever\n", &g, &e), 0);
    cr_assert_str_eq(g.nodes[0].hostname, ","); /* hostname: all after the first comma */
    cr_assert_eq(g.nodes[0].connected, 0);
    cr_assert_eq(parse_s(A " 1.2.3.4:1@2, myself - 0 0 0 connected\n", &g, &e), 0);
    cr_assert_str_eq(g.nodes[0].hostname, "");
    cr_assert_eq(g.nodes[0].flags, NC_MYSELF);
    static const char with_nul[] = ME " 1\0garbage \"\n";
    cr_assert_eq(parse(with_nul, sizeof with_nul - 1, &g, NULL, &e), 0, "%s", e.reason);
    cr_assert(nc_slot_get(&g.nodes[0], 1)); /* cut at the NUL, as Redis's C strings */
    cr_assert_eq(parse_s(ME " \"7\" '8-9'\n", &g, &e), 0); /* quoted as redis-cli */
    cr_assert(nc_slot_get(&g.nodes[0], 7) && nc_slot_get(&g.nodes[0], 9));
    cr_assert_eq(parse_s(A " x:1@2 master -abc 0 0 0 connected [5->-" A "]\n" B " 1.1.1.1:1@2 myself,slave " A
                         " 0 0 0 connected\n",
                         &g, &e),
                 0);
    cr_assert_eq(g.nodes[0].nstates, 1); /* states on a non-myself line load (Redis keeps them global) */
    cr_assert_str_eq(g.nodes[0].master, "");
    const char *vars = "VARS currentepoch 9 someday 1\n" ME "\nvars lastVoteEpoch 3\n";
    cr_assert_eq(parse(vars, strlen(vars), &g, &v, &e), 0);
    cr_assert_eq(v.current_epoch, 9);
    cr_assert_eq(v.last_vote_epoch, 3);
    cr_assert_eq(v.unknown, 1);
    cr_assert_eq(v.seen, 2);
    cr_assert_eq(parse("", 0, &g, &v, &e), 0); /* zero length: a new node */
    cr_assert_eq(g.n, 0);
}

typedef struct refusal {
    const char *text;
    size_t line;
    const char *reason;
} refusal;

Test(nodes_conf, refusals) {
    static const refusal cases[] = {
        /* refused by redis-server 7.0.15 too */
        {"\n\n", 0, "no myself"},
        {A " 1.1.1.1:1@2 master - 0 0 0 connected\n", 0, "no myself"},
        {"vars currentEpoch 1 lastVoteEpoch 1\n", 0, "no myself"},
        {ME "\n" B " 1.1.1.1:1@2 myself,master - 0 0 0 connected\n", 2, "second myself"},
        {A " 1.1.1.1:1@2 myself,master - 0 0 0\n", 1, "fewer than 8"},
        {ME "\n   \n", 2, "blanks only"},
        {ME "\n\r\n", 2, "blanks only"},
        {A " 1.1.1.1:1@2 myself,bogus - 0 0 0 connected\n", 1, "Unknown flag"},
        {A " 1.1.1.1:1@2 myself,,master - 0 0 0 connected\n", 1, "Unknown flag"},
        {A " 1.1.1.1:1@2 myself, - 0 0 0 connected\n", 1, "Unknown flag"},
        {"F94c587ad908c0dfe03a92936baec525bf20907e 1.1.1.1:1@2 myself - 0 0 0 connected\n", 1, "invalid node id"},
        {A "0 1.1.1.1:1@2 myself - 0 0 0 connected\n", 1, "invalid node id"},
        {A " 1.1.1.1:1@2 myself abc 0 0 0 connected\n", 1, "invalid master"},
        {ME " 16384\n", 1, "invalid slot"},
        {ME " 0-16384\n", 1, "invalid slot"},
        {ME " [16384->-" B "]\n", 1, "invalid slot"},
        {ME " [5->-" B "\n", 1, "invalid slot state"},
        {ME " [5->-" "F94c587ad908c0dfe03a92936baec525bf20907e" "]\n", 1, "invalid node id in a slot state"},
        {ME " [5>" B "]\n", 1, "invalid slot state"},
        {ME "\nvars currentEpoch 1 lastVoteEpoch\n", 2, "without a value"},
        {ME " \"1\n", 1, "unbalanced quotes"},
        {A " 1.1.1.1 myself - 0 0 0 connected\n", 1, "no ':'"},
        /* accepted by Redis through atoi/strtoull leniency; never written by it */
        {ME " 10-5\n", 1, "reversed"},
        {ME " 5x\n", 1, "invalid slot"},
        {ME " -5\n", 1, "invalid slot"},
        {ME " \"\"\n", 1, "invalid slot"},
        {ME " [5-x-" B "]\n", 1, "direction"},
        {ME " [5->-" B "]x\n", 1, "invalid slot state"},
        {A " 1.1.1.1:x@2 myself - 0 0 0 connected\n", 1, "invalid port"},
        {A " 1.1.1.1:1@65536 myself - 0 0 0 connected\n", 1, "bus port"},
        {A " 1.1.1.1:60000 myself - 0 0 0 connected\n", 1, "out of range"},
        {A " 1.1.1.1:1@2 myself - -1 0 0 connected\n", 1, "ping"},
        {A " 1.1.1.1:1@2 myself - 0 0x 0 connected\n", 1, "pong"},
        {A " 1.1.1.1:1@2 myself - 0 0 18446744073709551616 connected\n", 1, "epoch"},
        {ME "\nvars currentEpoch -1\n", 2, "vars value"},
        /* Redis would overrun its 46-byte ip buffer, or could not write these back */
        {A " 0123456789012345678901234567890123456789012345:1@2 myself - 0 0 0 connected\n", 1, "ip"},
        {A " \"a b:1@2\" myself - 0 0 0 connected\n", 1, "ip"},
        {A " 1.1.1.1:1@2,\"h'\" myself - 0 0 0 connected\n", 1, "hostname"},
        {A " \"a\\x00:1@2\" myself - 0 0 0 connected\n", 1, "unbalanced"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        got g;
        nodes_conf_err e;
        cr_assert_eq(parse_s(cases[i].text, &g, &e), -1, "accepted: %s", cases[i].text);
        cr_assert_eq(e.line, cases[i].line, "%s: line %zu (%s)", cases[i].text, e.line, e.reason);
        cr_assert_not_null(strstr(e.reason, cases[i].reason), "%s: %s", cases[i].text, e.reason);
        cr_assert_leq(e.offset, strlen(cases[i].text));
    }
    got g;
    nodes_conf_err e;
    cr_assert_eq(parse_s(ME " 99999\n", &g, &e), -1);
    cr_assert_eq(e.offset, strlen(ME) + 1); /* the offending field */
}

Test(nodes_conf, loader_refusal_stops) {
    size_t len;
    char *buf = slurp("node1.conf", &len);
    got g;
    memset(&g, 0, sizeof g);
    g.refuse_at = 1;
    nodes_conf_err e;
    cr_assert_eq(nodes_conf_parse(buf, len, collect, NULL, &g, &e), -1);
    cr_assert_eq(g.n, 1);
    cr_assert_eq(e.line, 2);
    cr_assert_not_null(strstr(e.reason, "loader"));
    free(buf);
}

/* Every prefix: no crash; success or failure; the nodes reported are the
 * full parse's, in order, except that the last may be cut short. */
Test(nodes_conf, every_truncation_point) {
    for (size_t i = 0; i < NFIX; i++) {
        size_t len;
        char *buf = slurp(fixtures[i], &len);
        static got full, part;
        cr_assert_eq(parse(buf, len, &full, NULL, NULL), 0);
        for (size_t cut = 0; cut <= len; cut++) {
            char *p = malloc(cut ? cut : 1); /* exact size: ASan sees any overread */
            memcpy(p, buf, cut);
            nodes_conf_err e;
            int rc = parse(p, cut, &part, NULL, &e);
            cr_assert(rc == 0 || rc == -1);
            cr_assert_leq(part.n, full.n);
            for (int k = 0; k + 1 < part.n; k++) cr_assert(same_node(&part.nodes[k], &full.nodes[k]));
            if (rc == 0 && cut == len) cr_assert_eq(part.n, full.n);
            free(p);
        }
        free(buf);
    }
}

static unsigned long long rnd_state = 88172645463325252ULL;
static unsigned long long rnd(void) {
    rnd_state ^= rnd_state << 13;
    rnd_state ^= rnd_state >> 7;
    rnd_state ^= rnd_state << 17;
    return rnd_state;
}

static void rnd_id(char *id) {
    static const char al[] = "0123456789abcdefghijklmnopqrstuvwxyz";
    for (int i = 0; i < NC_ID_LEN; i++) id[i] = al[rnd() % 36];
    id[NC_ID_LEN] = '\0';
}

static void rnd_word(char *s, size_t max, const char *al) {
    size_t n = rnd() % (max + 1), k = strlen(al);
    for (size_t i = 0; i < n; i++) s[i] = al[rnd() % k];
    s[n] = '\0';
}

static void rnd_node(nc_node *n, nc_slot_state *st) {
    memset(n, 0, sizeof *n);
    rnd_id(n->id);
    rnd_word(n->ip, rnd() % 2 ? NC_IP_MAX : 4, "0123456789abcdef:.");
    rnd_word(n->hostname, rnd() % 2 ? NC_HOSTNAME_MAX : 6, "abc-.:@,XYZ09");
    n->port = (int)(rnd() % (NC_PORT_MAX + 1));
    n->cport = (int)(rnd() % (NC_PORT_MAX + 1));
    n->flags = (unsigned)(rnd() & NC_FLAGS_ALL) | NC_MYSELF;
    if (rnd() % 2) rnd_id(n->master);
    n->ping_sent = (long long)(rnd() >> (1 + rnd() % 63));
    n->pong_recv = (long long)(rnd() >> 1);
    n->config_epoch = rnd() >> (rnd() % 64);
    n->connected = (int)(rnd() % 2);
    int mode = (int)(rnd() % 3);
    for (int s = 0; s < NC_SLOTS; s++)
        if (mode == 1 ? rnd() % 4 == 0 : mode == 2 ? (s / 100) % 2 : 0) nc_slot_set(n, s);
    n->nstates = rnd() % 4;
    for (size_t i = 0; i < n->nstates; i++) {
        st[i].slot = (int)(rnd() % NC_SLOTS);
        st[i].importing = (int)(rnd() % 2);
        rnd_id(st[i].id);
    }
    n->states = st;
}

Test(nodes_conf, random_records_round_trip) {
    for (int iter = 0; iter < 2000; iter++) {
        nc_node n;
        nc_slot_state st[4];
        rnd_node(&n, st);
        sbuf out = {0};
        nodes_conf_format_node(&out, &n, 1);
        got g;
        nodes_conf_err e;
        cr_assert_eq(parse(out.p, out.len, &g, NULL, &e), 0, "%s: %s", out.p, e.reason);
        cr_assert_eq(g.n, 1);
        cr_assert(same_node(&g.nodes[0], &n), "%s", out.p);
        sb_free(&out);
    }
}

Test(nodes_conf, writer_forms) {
    nc_node n;
    memset(&n, 0, sizeof n);
    memcpy(n.id, A, NC_ID_LEN + 1);
    sbuf out = {0};
    nodes_conf_format_node(&out, &n, 1);
    cr_assert_str_eq(out.p, A " :0@0 noflags - 0 0 0 disconnected\n");
    sb_free(&out);
    nc_slot_set(&n, 0);
    nc_slot_set(&n, 2);
    nc_slot_set(&n, 3);
    for (int s = 16380; s < NC_SLOTS; s++) nc_slot_set(&n, s);
    nc_slot_state st = {.slot = 9, .importing = 0};
    memcpy(st.id, B, NC_ID_LEN + 1);
    n.states = &st;
    n.nstates = 1;
    n.flags = NC_MYSELF | NC_SLAVE | NC_FAIL | NC_NOADDR;
    nodes_conf_format_node(&out, &n, 0);
    cr_assert_str_eq(out.p, A " :0@0 myself,slave,fail,noaddr - 0 0 0 disconnected 0 2-3 16380-16383\n");
    out.len = 0;
    nodes_conf_format_node(&out, &n, 1);
    cr_assert_str_eq(out.p, A " :0@0 myself,slave,fail,noaddr - 0 0 0 disconnected 0 2-3 16380-16383 [9->-" B "]\n");
    out.len = 0;
    nodes_conf_vars v = {.current_epoch = 18446744073709551615ULL, .last_vote_epoch = 7};
    nodes_conf_format_vars(&out, &v);
    cr_assert_str_eq(out.p, "vars currentEpoch 18446744073709551615 lastVoteEpoch 7\n");
    sb_free(&out);
}

Test(nodes_conf, save_is_atomic_and_readable) {
    char dir[] = "/tmp/ferry-nc-XXXXXX";
    cr_assert_not_null(mkdtemp(dir));
    char path[64];
    snprintf(path, sizeof path, "%s/nodes.conf", dir);
    sbuf content = {0};
    sb_adds(&content, "old\n");
    cr_assert_eq(nodes_conf_save(path, &content, 1), 0);
    chmod(path, 0600);
    content.len = 0;
    sb_adds(&content, ME "\nvars currentEpoch 0 lastVoteEpoch 0\n");
    cr_assert_eq(nodes_conf_save(path, &content, 1), 0);
    struct stat st;
    cr_assert_eq(stat(path, &st), 0);
    cr_assert_eq(st.st_mode & 0777, 0600); /* the old file's mode is kept */
    FILE *f = fopen(path, "rb");
    char buf[256];
    size_t n = fread(buf, 1, sizeof buf, f);
    fclose(f);
    cr_assert_eq(n, content.len);
    cr_assert(memcmp(buf, content.p, n) == 0);
    got g;
    cr_assert_eq(parse(buf, n, &g, NULL, NULL), 0);
    cr_assert_eq(nodes_conf_save("/nonexistent-dir/x/nodes.conf", &content, 1), -1);
    sb_free(&content);
    unlink(path);
    rmdir(dir);
}
