/* test_client.c - Criterion unit tests for the fake-client command path:
 * src/io/client.c (input buffering, parse/execute batch, output staging),
 * src/commands/command.c (dispatch and errors) and src/commands/multi.c (MULTI/EXEC/WATCH).
 *
 * Why: this is the path every request takes, without the socket. A request
 * split across reads, a long pipeline, argv growth, and output that passes
 * the high-water mark (processing pauses and resumes) are the cases where
 * bytes get lost or reordered. Expected reply bytes were taken from a real
 * redis-server 7.0.15 over a raw socket.
 *
 * Replies are read from the client's output ring with ring_iov, as the
 * writer does, and then consumed.
 */
#include <criterion/criterion.h>

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "client.h"
#include "command.h"
#include "config.h"
#include "db.h"
#include "frand.h"
#include "registry.h"
#include "ring.h"
#include "server.h"

static void setup(void) {
    config_defaults(&srv.cfg);
    srv.now_ms = ev_now_ms();
    srv.lruclock = (uint32_t)(srv.now_ms / 1000);
    db_init_all(srv.cfg.databases > 0 ? srv.cfg.databases : 16);
    registry_init();
}

static void flush_all_dbs(void);

/* The keys the last test left are freed (LeakSanitizer reports them otherwise). */
static void teardown(void) { flush_all_dbs(); }

TestSuite(client, .init = setup, .fini = teardown);

/* ------------------------------------------------------------ helpers */

typedef struct buf {
    char *p;
    size_t len;
} buf;

/* All staged output as ring_iov reports it; consumes it from the ring. */
static buf take_output(client *c) {
    struct iovec iov[2];
    int n = ring_iov(&c->out, iov);
    size_t total = 0;
    for (int i = 0; i < n; i++) total += iov[i].iov_len;
    cr_assert_eq(total, ring_used(&c->out), "ring_iov covers %zu of %zu staged bytes", total, ring_used(&c->out));
    buf b = {malloc(total + 1), total};
    size_t off = 0;
    for (int i = 0; i < n; i++) {
        memcpy(b.p + off, iov[i].iov_base, iov[i].iov_len);
        off += iov[i].iov_len;
    }
    b.p[total] = '\0';
    ring_consume(&c->out, total);
    return b;
}

static void feed_str(client *c, const char *s) { client_feed(c, s, strlen(s)); }

/* Output so far equals want exactly (binary safe). */
static void expect_out(client *c, const char *want, size_t wlen) {
    buf b = take_output(c);
    cr_assert(b.len == wlen && memcmp(b.p, want, wlen) == 0, "reply mismatch:\n got (%zu): %.*s\nwant (%zu): %.*s",
              b.len, (int)(b.len > 400 ? 400 : b.len), b.p, wlen, (int)(wlen > 400 ? 400 : wlen), want);
    free(b.p);
}
#define EXPECT(c, lit) expect_out((c), (lit), sizeof(lit) - 1)

/* RESP multibulk encoding of argv. */
static size_t encode(char *out, int argc, const char **argv) {
    size_t n = (size_t)sprintf(out, "*%d\r\n", argc);
    for (int i = 0; i < argc; i++) n += (size_t)sprintf(out + n, "$%zu\r\n%s\r\n", strlen(argv[i]), argv[i]);
    return n;
}

/* ------------------------------------------------------------- basics */

Test(client, fake_client_created) {
    client *c = client_create(-1);
    cr_assert_not_null(c);
    cr_assert(c->flags & CF_FAKE);
    cr_assert_eq(c->resp, 2);
    cr_assert_eq(c->db, db_get(0));
    cr_assert_eq(ring_used(&c->out), 0);
    cr_assert_eq(srv.clients, c);
    size_t nc = srv.nclients;
    client_free(c);
    cr_assert_eq(srv.nclients, nc - 1);
    cr_assert_null(srv.clients);
}

Test(client, set_ok_and_get) {
    client *c = client_create(-1);
    const char req[] = "*3\r\n$3\r\nSET\r\n$1\r\na\r\n$1\r\nb\r\n";
    client_feed(c, req, sizeof req - 1);
    EXPECT(c, "+OK\r\n");
    feed_str(c, "*2\r\n$3\r\nGET\r\n$1\r\na\r\n");
    EXPECT(c, "$1\r\nb\r\n");
    dnode *n = db_lookup(db_get(0), "a", 1);
    cr_assert(n && dn_vlen(n) == 1 && dn_val(n)[0] == 'b', "SET must reach the keyspace");
    feed_str(c, "*2\r\n$3\r\nGET\r\n$7\r\nmissing\r\n");
    EXPECT(c, "$-1\r\n");
    client_free(c);
}

Test(client, inline_commands) {
    client *c = client_create(-1);
    feed_str(c, "PING\r\n\r\nPING hi\r\n");
    EXPECT(c, "+PONG\r\n$2\r\nhi\r\n");
    feed_str(c, "SET \"sp ace\" 'v 1'\r\nGET \"sp ace\"\r\n");
    EXPECT(c, "+OK\r\n$3\r\nv 1\r\n");
    client_free(c);
}

/* ------------------------------------------------------ split requests */

Test(client, command_split_in_two_feeds) {
    client *c = client_create(-1);
    feed_str(c, "*3\r\n$3\r\nSE");
    cr_assert_eq(ring_used(&c->out), 0, "incomplete request must not produce a reply");
    feed_str(c, "T\r\n$1\r\na\r\n$1\r\nb\r\n");
    EXPECT(c, "+OK\r\n");
    cr_assert_eq(c->qlen - c->qpos, 0, "no input left over");
    client_free(c);
}

Test(client, split_at_every_byte) {
    client *c = client_create(-1);
    char req[256];
    const char *argv[] = {"SET", "splitkey", "some value with spaces"};
    size_t n = encode(req, 3, argv);
    for (size_t cut = 1; cut <= n; cut++) {
        client_feed(c, req, cut);
        if (cut < n) cr_assert_eq(ring_used(&c->out), 0, "cut %zu: early reply", cut);
        client_feed(c, req + cut, n - cut);
        EXPECT(c, "+OK\r\n");
        feed_str(c, "GET splitkey\r\n");
        EXPECT(c, "$22\r\nsome value with spaces\r\n");
    }
    client_free(c);
}

/* Feeding nothing is a no-op, also on a fresh client whose query buffer is
 * still NULL (fuzzers and read paths can produce empty chunks). */
Test(client, zero_length_feed) {
    client *c = client_create(-1);
    client_feed(c, "", 0);
    cr_assert_eq(ring_used(&c->out), 0);
    cr_assert_eq(c->qlen, 0);
    feed_str(c, "PING\r\n");
    client_feed(c, "", 0);
    EXPECT(c, "+PONG\r\n");
    client_free(c);
}

Test(client, byte_by_byte) {
    client *c = client_create(-1);
    const char req[] = "*3\r\n$3\r\nSET\r\n$2\r\nbb\r\n$5\r\nhello\r\nGET bb\r\n*2\r\n$3\r\nGET\r\n$2\r\nbb\r\n";
    for (size_t i = 0; i < sizeof req - 1; i++) client_feed(c, req + i, 1);
    EXPECT(c, "+OK\r\n$5\r\nhello\r\n$5\r\nhello\r\n");
    client_free(c);
}

Test(client, large_value_in_chunks) {
    client *c = client_create(-1);
    size_t vlen = 300000;
    char *req = malloc(vlen + 100);
    size_t n = (size_t)sprintf(req, "*3\r\n$3\r\nSET\r\n$3\r\nbig\r\n$%zu\r\n", vlen);
    for (size_t i = 0; i < vlen; i++) req[n + i] = (char)('a' + i % 23);
    n += vlen;
    memcpy(req + n, "\r\n", 2);
    n += 2;
    for (size_t off = 0; off < n; off += 997) client_feed(c, req + off, off + 997 <= n ? 997 : n - off);
    EXPECT(c, "+OK\r\n");
    feed_str(c, "GET big\r\n");
    buf b = take_output(c);
    char hdr[32];
    size_t hl = (size_t)sprintf(hdr, "$%zu\r\n", vlen);
    cr_assert_eq(b.len, hl + vlen + 2);
    cr_assert(memcmp(b.p, hdr, hl) == 0);
    for (size_t i = 0; i < vlen; i++) cr_assert_eq(b.p[hl + i], (char)('a' + i % 23), "byte %zu", i);
    cr_assert(memcmp(b.p + hl + vlen, "\r\n", 2) == 0);
    free(b.p);
    free(req);
    client_free(c);
}

/* ----------------------------------------------------------- pipeline */

/* Feed bytes, draining output and resuming input until everything ran. */
static buf feed_and_drain(client *c, const char *p, size_t n) {
    buf all = {malloc(1), 0};
    client_feed(c, p, n);
    for (int rounds = 0;; rounds++) {
        cr_assert_lt(rounds, 100000);
        buf b = take_output(c);
        all.p = realloc(all.p, all.len + b.len + 1);
        memcpy(all.p + all.len, b.p, b.len);
        all.len += b.len;
        free(b.p);
        if (c->qlen == c->qpos) break;      /* all input consumed */
        client_process_input(c);            /* resume after the pause */
        if (ring_used(&c->out) == 0) break; /* only a partial request is left */
    }
    return all;
}

/* A mixed stream (multibulk and inline, values from 0 bytes to 40 KB) fed
 * in random chunk sizes must give exactly the bytes that the same stream
 * gives when fed at once. */
Test(client, random_chunking_matches_one_shot) {
    frand_seed(77);
    size_t cap = 4u << 20, n = 0;
    char *req = malloc(cap);
    char *big = malloc(40000);
    for (int i = 0; i < 40000; i++) big[i] = (char)('A' + i % 26);
    for (int i = 0; i < 3000 && n < cap - 50000; i++) {
        char k[32];
        sprintf(k, "rk%d", (int)frand_below(50));
        switch (frand_below(6)) {
        case 0: {
            size_t vl = frand_below(10) == 0 ? (size_t)frand_below(40000) : (size_t)frand_below(20);
            n += (size_t)sprintf(req + n, "*3\r\n$3\r\nSET\r\n$%zu\r\n%s\r\n$%zu\r\n", strlen(k), k, vl);
            memcpy(req + n, big, vl);
            n += vl;
            n += (size_t)sprintf(req + n, "\r\n");
            break;
        }
        case 1: n += (size_t)sprintf(req + n, "GET %s\r\n", k); break;
        case 2: n += (size_t)sprintf(req + n, "*2\r\n$6\r\nSTRLEN\r\n$%zu\r\n%s\r\n", strlen(k), k); break;
        case 3: n += (size_t)sprintf(req + n, "INCR ctr%s\r\n", k); break;
        case 4: n += (size_t)sprintf(req + n, "APPEND %s \"x y\"\r\n", k); break;
        default: n += (size_t)sprintf(req + n, "*0\r\n\r\nPING\r\n"); break;
        }
    }
    client *a = client_create(-1);
    buf one = feed_and_drain(a, req, n);
    client_free(a);
    cr_assert_gt(one.len, 100000);
    for (int i = 0; i < db_count(); i++) db_flush(db_get(i));
    client *b = client_create(-1);
    buf chunked = {malloc(1), 0};
    size_t off = 0;
    while (off < n) {
        size_t k = 1 + (frand_below(4) == 0 ? (size_t)frand_below(70000) : (size_t)frand_below(300));
        if (k > n - off) k = n - off;
        buf part = feed_and_drain(b, req + off, k);
        chunked.p = realloc(chunked.p, chunked.len + part.len + 1);
        memcpy(chunked.p + chunked.len, part.p, part.len);
        chunked.len += part.len;
        free(part.p);
        off += k;
    }
    cr_assert_eq(chunked.len, one.len, "chunked feeding produced %zu bytes, one-shot %zu", chunked.len, one.len);
    size_t i = 0;
    while (i < one.len && one.p[i] == chunked.p[i]) i++;
    cr_assert_eq(i, one.len, "outputs differ at byte %zu", i);
    client_free(b);
    free(one.p);
    free(chunked.p);
    free(req);
    free(big);
}



Test(client, pipeline_1000_in_one_feed) {
    client *c = client_create(-1);
    size_t cap = 1000 * 64, n = 0;
    char *req = malloc(cap);
    for (int i = 0; i < 1000; i++) {
        const char *argv[] = {"INCR", "counter"};
        n += encode(req + n, 2, argv);
    }
    uint64_t before = srv.stats.numcommands;
    client_feed(c, req, n);
    cr_assert_eq(srv.stats.numcommands - before, 1000);
    buf b = take_output(c);
    size_t pos = 0;
    for (int i = 1; i <= 1000; i++) {
        char want[32];
        size_t wl = (size_t)sprintf(want, ":%d\r\n", i);
        cr_assert(pos + wl <= b.len && memcmp(b.p + pos, want, wl) == 0, "reply %d out of order or missing at %zu", i,
                  pos);
        pos += wl;
    }
    cr_assert_eq(pos, b.len, "extra output after 1000 replies");
    free(b.p);
    free(req);
    client_free(c);
}

Test(client, pipeline_mixed_commands_in_order) {
    client *c = client_create(-1);
    size_t n = 0;
    char *req = malloc(1000 * 128);
    for (int i = 0; i < 500; i++) {
        char k[32], v[32];
        sprintf(k, "key:%d", i);
        sprintf(v, "val:%d", i * 7);
        const char *set[] = {"SET", k, v};
        const char *get[] = {"GET", k};
        n += encode(req + n, 3, set);
        n += encode(req + n, 2, get);
    }
    client_feed(c, req, n);
    buf b = take_output(c);
    size_t pos = 0;
    for (int i = 0; i < 500; i++) {
        char want[64];
        char v[32];
        size_t vl = (size_t)sprintf(v, "val:%d", i * 7);
        size_t wl = (size_t)sprintf(want, "+OK\r\n$%zu\r\n%s\r\n", vl, v);
        cr_assert(pos + wl <= b.len && memcmp(b.p + pos, want, wl) == 0, "pair %d wrong", i);
        pos += wl;
    }
    cr_assert_eq(pos, b.len);
    free(b.p);
    free(req);
    client_free(c);
}

/* A pass over a client's input stops once it has staged its output budget
 * (1 MB) and defers the rest to the next loop iteration; the next passes go
 * on whether or not anything was written (a client that reads nothing is
 * never stalled), and no request or reply is lost or reordered. */
Test(client, pipeline_passes_stop_at_the_budget_and_go_on_without_draining) {
    client *c = client_create(-1);
    char val[4096];
    memset(val, 'v', sizeof val);
    char *set = malloc(sizeof val + 64);
    size_t sl = (size_t)sprintf(set, "*3\r\n$3\r\nSET\r\n$1\r\nV\r\n$%zu\r\n", sizeof val);
    memcpy(set + sl, val, sizeof val);
    sl += sizeof val;
    memcpy(set + sl, "\r\n", 2);
    sl += 2;
    client_feed(c, set, sl);
    EXPECT(c, "+OK\r\n");
    /* 1000 x (GET V, INCR n): ~4 MB of replies */
    size_t n = 0;
    char *req = malloc(1000 * 64);
    for (int i = 0; i < 1000; i++) {
        const char *g[] = {"GET", "V"}, *in[] = {"INCR", "n"};
        n += encode(req + n, 2, g);
        n += encode(req + n, 2, in);
    }
    client_feed(c, req, n);
    cr_assert_gt(c->qlen, c->qpos, "expected input left after a pass that used its budget");
    cr_assert(c->flags & CF_INPUT_DEFERRED);
    cr_assert_eq(srv.deferred_input, c);
    size_t first = ring_used(&c->out);
    cr_assert(first > (1u << 20) && first < (1u << 20) + 16 * 1024, "first pass staged %zu", first);
    /* further passes, with nothing drained in between */
    int rounds = 1;
    while (c->flags & CF_INPUT_DEFERRED) {
        clients_process_deferred();
        cr_assert_lt(++rounds, 100);
    }
    cr_assert_eq(srv.deferred_input, NULL);
    cr_assert_geq(rounds, 4, "4 MB in passes of 1 MB");
    cr_assert_gt(ring_used(&c->out), 4000u * 1000, "the whole pipeline ran with nothing read");
    size_t acap = 8u << 20, alen = 0;
    char *all = malloc(acap);
    buf b = take_output(c);
    cr_assert_leq(b.len, acap);
    memcpy(all, b.p, b.len);
    alen = b.len;
    free(b.p);
    char hdr[16];
    size_t hl = (size_t)sprintf(hdr, "$%zu\r\n", sizeof val), pos = 0;
    int expect_incr = 1;
    while (pos < alen) {
        cr_assert(pos + hl + sizeof val + 2 <= alen, "truncated bulk at %zu", pos);
        cr_assert(memcmp(all + pos, hdr, hl) == 0, "GET reply %d header wrong", expect_incr);
        cr_assert(memcmp(all + pos + hl, val, sizeof val) == 0);
        pos += hl + sizeof val + 2;
        char want[32];
        size_t wl = (size_t)sprintf(want, ":%d\r\n", expect_incr);
        cr_assert(pos + wl <= alen && memcmp(all + pos, want, wl) == 0, "INCR reply %d wrong", expect_incr);
        pos += wl;
        expect_incr++;
    }
    free(all);
    cr_assert_eq(expect_incr, 1001, "got %d of 1000 GET/INCR pairs", expect_incr - 1);
    cr_assert_eq(c->qlen, c->qpos);
    free(req);
    free(set);
    client_free(c);
}

Test(client, many_arguments_grow_argv) {
    client *c = client_create(-1);
    const char *argv[1 + 2 * 100];
    char keys[100][16], vals[100][16];
    argv[0] = "MSET";
    for (int i = 0; i < 100; i++) {
        sprintf(keys[i], "mk%d", i);
        sprintf(vals[i], "mv%d", i);
        argv[1 + 2 * i] = keys[i];
        argv[2 + 2 * i] = vals[i];
    }
    char *req = malloc(16384);
    size_t n = encode(req, 201, argv);
    client_feed(c, req, n);
    EXPECT(c, "+OK\r\n");
    const char *mget[101];
    mget[0] = "MGET";
    for (int i = 0; i < 100; i++) mget[1 + i] = keys[i];
    n = encode(req, 101, mget);
    client_feed(c, req, n);
    char want[4096];
    size_t wl = (size_t)sprintf(want, "*100\r\n");
    for (int i = 0; i < 100; i++) wl += (size_t)sprintf(want + wl, "$%zu\r\n%s\r\n", strlen(vals[i]), vals[i]);
    expect_out(c, want, wl);
    free(req);
    client_free(c);
}

Test(client, select_switches_database) {
    client *c = client_create(-1);
    feed_str(c, "SELECT 1\r\nSET only1 x\r\nSELECT 0\r\nGET only1\r\nSELECT 1\r\nGET only1\r\n");
    EXPECT(c, "+OK\r\n+OK\r\n+OK\r\n$-1\r\n+OK\r\n$1\r\nx\r\n");
    cr_assert_eq(c->db, db_get(1));
    cr_assert_not_null(db_lookup(db_get(1), "only1", 5));
    cr_assert_null(db_lookup(db_get(0), "only1", 5));
    client_free(c);
}

/* ------------------------------------------------------------- errors */

Test(client, unknown_command_error) {
    client *c = client_create(-1);
    uint64_t errs = srv.stats.total_error_replies;
    feed_str(c, "FOO bar baz\r\n");
    EXPECT(c, "-ERR unknown command 'FOO', with args beginning with: 'bar' 'baz' \r\n");
    cr_assert_eq(srv.stats.total_error_replies, errs + 1);
    feed_str(c, "*1\r\n$6\r\nNOSUCH\r\n");
    EXPECT(c, "-ERR unknown command 'NOSUCH', with args beginning with: \r\n");
    feed_str(c, "*1\r\n$3\r\nGET\r\n");
    EXPECT(c, "-ERR wrong number of arguments for 'get' command\r\n");
    /* the connection keeps working */
    feed_str(c, "PING\r\n");
    EXPECT(c, "+PONG\r\n");
    client_free(c);
}

Test(client, protocol_error_closes_after_reply) {
    client *c = client_create(-1);
    feed_str(c, "*1\r\n$x\r\nPING\r\n");
    EXPECT(c, "-ERR Protocol error: invalid bulk length\r\n");
    cr_assert(c->flags & CF_CLOSE_AFTER_REPLY);
    feed_str(c, "PING\r\n");
    cr_assert_eq(ring_used(&c->out), 0, "no command may run after a protocol error");
    client_free(c);
}

/* ------------------------------------------------------- transactions */

Test(client, multi_set_exec) {
    client *c = client_create(-1);
    feed_str(c, "*1\r\n$5\r\nMULTI\r\n*3\r\n$3\r\nSET\r\n$1\r\nk\r\n$1\r\nv\r\n*1\r\n$4\r\nEXEC\r\n");
    EXPECT(c, "+OK\r\n+QUEUED\r\n*1\r\n+OK\r\n");
    cr_assert_eq(c->flags & CF_MULTI, 0);
    dnode *n = db_lookup(db_get(0), "k", 1);
    cr_assert(n && dn_vlen(n) == 1 && dn_val(n)[0] == 'v');
    feed_str(c, "MULTI\r\nSET k 1\r\nINCR k\r\nGET k\r\nEXEC\r\n");
    EXPECT(c, "+OK\r\n+QUEUED\r\n+QUEUED\r\n+QUEUED\r\n*3\r\n+OK\r\n:2\r\n$1\r\n2\r\n");
    client_free(c);
}

Test(client, multi_queued_args_survive_buffer_reuse) {
    client *c = client_create(-1);
    /* queue commands in separate feeds: queued argv must be copies, not
     * spans into the (reused) query buffer */
    feed_str(c, "MULTI\r\n");
    feed_str(c, "SET first AAAA\r\n");
    feed_str(c, "SET second BBBB\r\n");
    feed_str(c, "GET first\r\n");
    feed_str(c, "EXEC\r\n");
    EXPECT(c, "+OK\r\n+QUEUED\r\n+QUEUED\r\n+QUEUED\r\n*3\r\n+OK\r\n+OK\r\n$4\r\nAAAA\r\n");
    client_free(c);
}

Test(client, multi_errors) {
    client *c = client_create(-1);
    feed_str(c, "EXEC\r\nDISCARD\r\nMULTI\r\nMULTI\r\nDISCARD\r\n");
    EXPECT(c, "-ERR EXEC without MULTI\r\n-ERR DISCARD without MULTI\r\n+OK\r\n-ERR MULTI calls can not be nested\r\n"
              "+OK\r\n");
    feed_str(c, "MULTI\r\nSET k 1\r\nNOSUCH x\r\nEXEC\r\n");
    EXPECT(c, "+OK\r\n+QUEUED\r\n-ERR unknown command 'NOSUCH', with args beginning with: 'x' \r\n"
              "-EXECABORT Transaction discarded because of previous errors.\r\n");
    cr_assert_null(db_lookup(db_get(0), "k", 1), "aborted transaction must not run");
    feed_str(c, "MULTI\r\nGET\r\nEXEC\r\n");
    EXPECT(c, "+OK\r\n-ERR wrong number of arguments for 'get' command\r\n"
              "-EXECABORT Transaction discarded because of previous errors.\r\n");
    feed_str(c, "SET s abc\r\nMULTI\r\nINCR s\r\nSET s 5\r\nEXEC\r\n");
    EXPECT(c, "+OK\r\n+OK\r\n+QUEUED\r\n+QUEUED\r\n*2\r\n-ERR value is not an integer or out of range\r\n+OK\r\n");
    feed_str(c, "MULTI\r\nSET d 1\r\nDISCARD\r\nGET d\r\n");
    EXPECT(c, "+OK\r\n+QUEUED\r\n+OK\r\n$-1\r\n");
    client_free(c);
}

Test(client, watch_aborts_exec_when_key_changes) {
    client *a = client_create(-1), *b = client_create(-1);
    feed_str(a, "SET w 1\r\nWATCH w\r\n");
    EXPECT(a, "+OK\r\n+OK\r\n");
    feed_str(b, "SET w 2\r\n");
    EXPECT(b, "+OK\r\n");
    feed_str(a, "MULTI\r\nSET w 3\r\nEXEC\r\nGET w\r\n");
    EXPECT(a, "+OK\r\n+QUEUED\r\n*-1\r\n$1\r\n2\r\n");
    client_free(a);
    client_free(b);
}

Test(client, watch_untouched_key_execs) {
    client *a = client_create(-1), *b = client_create(-1);
    feed_str(a, "WATCH w other\r\n");
    EXPECT(a, "+OK\r\n");
    feed_str(b, "SET unrelated 2\r\n");
    EXPECT(b, "+OK\r\n");
    feed_str(a, "MULTI\r\nSET w 3\r\nEXEC\r\n");
    EXPECT(a, "+OK\r\n+QUEUED\r\n*1\r\n+OK\r\n");
    /* EXEC unwatches: a later change does not affect the next transaction */
    feed_str(b, "SET w 9\r\n");
    EXPECT(b, "+OK\r\n");
    feed_str(a, "MULTI\r\nGET w\r\nEXEC\r\n");
    EXPECT(a, "+OK\r\n+QUEUED\r\n*1\r\n$1\r\n9\r\n");
    feed_str(a, "MULTI\r\nWATCH x\r\nEXEC\r\n");
    EXPECT(a, "+OK\r\n-ERR WATCH inside MULTI is not allowed\r\n*0\r\n");
    client_free(a);
    client_free(b);
}

Test(client, free_while_in_multi_and_watching) {
    client *a = client_create(-1);
    feed_str(a, "WATCH k1 k2\r\nMULTI\r\nSET k1 v\r\nSET k2 v\r\n");
    EXPECT(a, "+OK\r\n+OK\r\n+QUEUED\r\n+QUEUED\r\n");
    cr_assert_gt(srv.watched_keys, 0);
    client_free(a);
    cr_assert_eq(srv.watched_keys, 0, "freeing a client must drop its watches");
    client *b = client_create(-1);
    feed_str(b, "SET k1 x\r\nGET k1\r\n");
    EXPECT(b, "+OK\r\n$1\r\nx\r\n");
    client_free(b);
}

/* ------------------------------------------------- batched execution
 *
 * process_buffer parses a window of pipelined requests ahead, hashes their
 * keys and then runs them in order (src/io/client.c). The reference for every
 * pipeline below is the same requests fed one per read (each window then
 * holds one request): the output of the whole pipeline in one read, and in
 * two reads split at every byte, must be identical to it byte for byte. */

/* Requests: "!" + raw bytes (inline or malformed), else space-separated
 * arguments sent as a multibulk. Returns the total length; ends[i] is the
 * end offset of request i. */
static size_t build_pipeline(char *out, const char *const *reqs, size_t *ends) {
    size_t n = 0;
    for (int i = 0; reqs[i]; i++) {
        if (reqs[i][0] == '!') {
            n += (size_t)sprintf(out + n, "%s", reqs[i] + 1);
        } else {
            char tmp[256], *argv[32], *save = NULL;
            int argc = 0;
            snprintf(tmp, sizeof tmp, "%s", reqs[i]);
            for (char *t = strtok_r(tmp, " ", &save); t; t = strtok_r(NULL, " ", &save)) argv[argc++] = t;
            n += encode(out + n, argc, (const char **)argv);
        }
        ends[i] = n;
    }
    return n;
}

static void flush_all_dbs(void) {
    for (int i = 0; i < db_count(); i++) db_flush(db_get(i));
}

/* Feed p[0..n) cut at the given offsets; returns all output. */
static buf run_cuts(const char *p, size_t n, const size_t *cuts, int ncuts) {
    flush_all_dbs();
    srv.next_client_id = 1000; /* HELLO replies show the id */
    client *c = client_create(-1);
    size_t cap = 1 << 16, len = 0, from = 0;
    char *all = malloc(cap);
    for (int i = 0; i <= ncuts; i++) {
        size_t to = i < ncuts ? cuts[i] : n;
        client_feed(c, p + from, to - from);
        from = to;
        buf b = take_output(c);
        cr_assert_leq(len + b.len, cap);
        memcpy(all + len, b.p, b.len);
        len += b.len;
        free(b.p);
    }
    client_free(c);
    return (buf){all, len};
}

/* One read, one request per read, and two reads split at every byte agree. */
static buf check_batched(const char *const *reqs) {
    char *p = malloc(1 << 16);
    size_t ends[256];
    size_t n = build_pipeline(p, reqs, ends);
    int nreq = 0;
    while (reqs[nreq]) nreq++;
    buf ref = run_cuts(p, n, ends, nreq - 1);
    buf one = run_cuts(p, n, NULL, 0);
    cr_assert(one.len == ref.len && memcmp(one.p, ref.p, ref.len) == 0,
              "one read differs from one request per read:\n got: %.*s\nwant: %.*s", (int)one.len, one.p,
              (int)ref.len, ref.p);
    free(one.p);
    for (size_t cut = 1; cut < n; cut++) {
        buf two = run_cuts(p, n, &cut, 1);
        cr_assert(two.len == ref.len && memcmp(two.p, ref.p, ref.len) == 0, "split at %zu differs", cut);
        free(two.p);
    }
    free(p);
    return ref;
}

static void expect_contains(buf b, const char *needle) {
    cr_assert(memmem(b.p, b.len, needle, strlen(needle)) != NULL, "missing %s in:\n%.*s", needle, (int)b.len, b.p);
}

Test(client, batched_window_mixes_simple_and_special_commands) {
    static const char *const reqs[] = {
        "SET a 1", "GET a", "INCR n", "SELECT 1", "GET a", "SET a one", "GET a", "SELECT 0", "GET a",
        "MSET m1 x m2 y", "MGET m1 m2 a", "GET m1", "HELLO 3", "GET nokey", "GET a", "HELLO 2", "GET nokey",
        "CLIENT REPLY SKIP", "INCR n", "INCR n", "CLIENT REPLY OFF", "INCR n", "CLIENT REPLY ON", "GET n",
        "!*0\r\n", "!GET a\r\n", "GET a", "NOSUCH x", "GET a b", "GET a", "DEL a", "GET a", "QUIT", "GET n", NULL,
    };
    buf b = check_batched(reqs);
    /* spot checks against what one request at a time gives */
    const char head[] = "+OK\r\n$1\r\n1\r\n:1\r\n+OK\r\n$-1\r\n+OK\r\n$3\r\none\r\n+OK\r\n$1\r\n1\r\n";
    cr_assert(b.len > sizeof head && memcmp(b.p, head, sizeof head - 1) == 0, "SELECT inside a window:\n%.*s",
              (int)b.len, b.p);
    expect_contains(b, "_\r\n$1\r\n1\r\n");       /* RESP3 null right after HELLO 3 */
    expect_contains(b, "$-1\r\n:3\r\n+OK\r\n$1\r\n4\r\n"); /* SKIP hid one INCR, OFF hid one */
    cr_assert(b.len >= 5 && memcmp(b.p + b.len - 5, "+OK\r\n", 5) == 0, "nothing may run after QUIT");
    free(b.p);
}

/* Requests with more than WIN_ARGS arguments keep their spans in the
 * window's pool (WIN_POOL spans) and the window goes on; the one that no
 * longer fits ends the window from the parser's argv. Twelve 5-argument
 * SETs fill 60 of the 64 spans, so the 13th and the long MSET each end a
 * window; arity errors and option errors among them stay in order. */
Test(client, batched_window_pools_long_requests) {
    static const char *const reqs[] = {
        "SET k0 v0 EX 100", "SET k1 v1 EX 100", "SET k2 v2 PX 100000", "SET k3 v3 EX 100", "GET k0",
        "SET k4 v4 EX 100", "SET k5 v5 EX 100", "SET k6 v6 NX EX 100", "SET k0 again XX", "SET k7 v7 EX 0",
        "SET k8 v8 EX 100", "SET k9 v9 EX 100", "HSET hh f v", "SET k10 v10 EX 100", "SET k11 v11 EX 100",
        "SET k12 v12 EX 100", "SET k13 v13 EX 100", "GET k12 extra args here", "TTL k13", "GET k0",
        "MSET a 1 b 2 c 3 d 4 e 5 f 6 g 7 h 8 i 9 j 10 k 11 l 12 m 13 n 14 o 15", "MGET a o k7 k6",
        "ZADD z 1 x 2 y 3 w", "ZRANGE z 0 -1 WITHSCORES", "HGET hh f", "SET k2 v2b EX 100 GET", "PTTL k0",
        NULL,
    };
    buf b = check_batched(reqs);
    expect_contains(b, "+OK\r\n+OK\r\n+OK\r\n+OK\r\n$2\r\nv0\r\n+OK\r\n+OK\r\n+OK\r\n+OK\r\n"
                       "-ERR invalid expire time in 'set' command\r\n+OK\r\n+OK\r\n:1\r\n");
    expect_contains(b, "-ERR wrong number of arguments for 'get' command\r\n:100\r\n$5\r\nagain\r\n+OK\r\n");
    expect_contains(b, "*4\r\n$1\r\n1\r\n$2\r\n15\r\n$-1\r\n$2\r\nv6\r\n:3\r\n");
    expect_contains(b, "$1\r\nv\r\n$2\r\nv2\r\n:-1\r\n");
    free(b.p);
}

Test(client, batched_window_with_multi_in_the_middle) {
    static const char *const reqs[] = {
        "SET k 1", "GET k", "MULTI", "INCR k", "GET k", "SET k2 v", "EXEC", "GET k", "GET k2",
        "MULTI", "GET k", "NOSUCH", "EXEC", "GET k", "MULTI", "SET k 9", "DISCARD", "GET k",
        "WATCH k", "SET k 5", "MULTI", "GET k", "EXEC", "GET k", NULL,
    };
    buf b = check_batched(reqs);
    expect_contains(b, "+OK\r\n$1\r\n1\r\n+OK\r\n+QUEUED\r\n+QUEUED\r\n+QUEUED\r\n*3\r\n:2\r\n$1\r\n2\r\n+OK\r\n");
    expect_contains(b, "-EXECABORT");
    expect_contains(b, "*-1\r\n$1\r\n5\r\n");
    free(b.p);
}

Test(client, batched_window_stops_at_protocol_error) {
    static const char *const reqs[] = {"SET a 1", "GET a", "INCR a", "!*1\r\n$x\r\n", "GET a", NULL};
    buf b = check_batched(reqs);
    static const char want[] = "+OK\r\n$1\r\n1\r\n:2\r\n-ERR Protocol error: invalid bulk length\r\n";
    cr_assert(b.len == sizeof want - 1 && memcmp(b.p, want, b.len) == 0, "%.*s", (int)b.len, b.p);
    free(b.p);
}

Test(client, batched_window_with_authentication) {
    char *saved = srv.cfg.requirepass;
    size_t saved_len = srv.cfg.requirepass_len;
    srv.cfg.requirepass = "pw";
    srv.cfg.requirepass_len = 2;
    static const char *const reqs[] = {"SET a 1", "GET a", "AUTH pw", "SET a 1", "GET a", NULL};
    buf b = check_batched(reqs);
    srv.cfg.requirepass = saved;
    srv.cfg.requirepass_len = saved_len;
    static const char want[] = "-NOAUTH Authentication required.\r\n-NOAUTH Authentication required.\r\n"
                               "+OK\r\n+OK\r\n$1\r\n1\r\n";
    cr_assert(b.len == sizeof want - 1 && memcmp(b.p, want, b.len) == 0, "%.*s", (int)b.len, b.p);
    free(b.p);
}

/* Keys added inside a window make the table grow and rehash between a key's
 * hashing and its lookup; every precomputed hash must still find its key. */
Test(client, batched_pipeline_across_rehash) {
    flush_all_dbs();
    client *c = client_create(-1);
    size_t cap = 4000 * 64, n = 0;
    char *req = malloc(cap);
    for (int i = 0; i < 2000; i++) {
        char k[16], v[16];
        sprintf(k, "rk%d", i);
        sprintf(v, "%d", i);
        const char *set[] = {"SET", k, v}, *get[] = {"GET", k};
        n += encode(req + n, 3, set);
        n += encode(req + n, 2, get);
    }
    client_feed(c, req, n);
    buf b = take_output(c);
    size_t pos = 0;
    for (int i = 0; i < 2000; i++) {
        char want[48];
        int vl = snprintf(want + 32, 16, "%d", i);
        size_t wl = (size_t)sprintf(want, "+OK\r\n$%d\r\n%s\r\n", vl, want + 32);
        cr_assert(pos + wl <= b.len && memcmp(b.p + pos, want, wl) == 0, "pair %d wrong", i);
        pos += wl;
    }
    cr_assert_eq(pos, b.len);
    cr_assert_eq(dict_size(&db_get(0)->keys), 2000);
    free(b.p);
    free(req);
    client_free(c);
}

/* INFO commandstats in the same pipeline as the commands it counts. */
Test(client, batched_commandstats_calls_exact) {
    client *c = client_create(-1);
    feed_str(c, "CONFIG RESETSTAT\r\n");
    EXPECT(c, "+OK\r\n");
    size_t n = 0;
    char *req = malloc(200 * 64);
    for (int i = 0; i < 150; i++) {
        const char *get[] = {"GET", "x"};
        n += encode(req + n, 2, get);
    }
    const char *info[] = {"INFO", "commandstats"};
    n += encode(req + n, 2, info);
    client_feed(c, req, n);
    buf b = take_output(c);
    cr_assert(memmem(b.p, b.len, "cmdstat_get:calls=150,", 22) != NULL, "%.*s", (int)b.len, b.p);
    free(b.p);
    free(req);
    client_free(c);
}

/* Output passes the high-water mark in the middle of a window that ends
 * with an incomplete request: the parsed-ahead requests and the partial one
 * must be parsed again from where execution stopped. */
Test(client, batched_window_paused_with_partial_request_pending) {
    flush_all_dbs();
    client *c = client_create(-1);
    size_t vlen = 100 * 1024;
    char *set = malloc(vlen + 64);
    size_t sl = (size_t)sprintf(set, "*3\r\n$3\r\nSET\r\n$1\r\nV\r\n$%zu\r\n", vlen);
    memset(set + sl, 'v', vlen);
    memcpy(set + sl + vlen, "\r\n", 2);
    client_feed(c, set, sl + vlen + 2);
    EXPECT(c, "+OK\r\n");
    char req[1024];
    size_t n = 0;
    const char *get[] = {"GET", "V"}, *incr[] = {"INCR", "cnt"};
    for (int i = 0; i < 9; i++) n += encode(req + n, 2, get);
    client_feed(c, req, n); /* ~900 KB staged, under the high-water mark */
    n = 0;
    for (int i = 0; i < 5; i++) n += encode(req + n, 2, get);
    size_t whole = n + encode(req + n, 2, incr), part = n + 12; /* INCR cut inside its key header */
    client_feed(c, req, part);
    cr_assert_gt(c->qlen, c->qpos, "expected GETs left unexecuted over the high-water mark");
    size_t got = 0;
    for (int rounds = 0; rounds < 10 && ring_used(&c->out); rounds++) {
        buf b = take_output(c);
        got += b.len;
        free(b.p);
        client_process_input(c);
    }
    client_feed(c, req + part, whole - part);
    buf b = take_output(c);
    got += b.len;
    cr_assert(b.len >= 4 && memcmp(b.p + b.len - 4, ":1\r\n", 4) == 0, "INCR reply missing");
    size_t one = (size_t)snprintf(NULL, 0, "$%zu\r\n", vlen) + vlen + 2;
    cr_assert_eq(got, 14 * one + 4, "every GET answered once, then INCR");
    free(b.p);
    free(set);
    client_free(c);
}

/* ------------------------------------------- query buffer resizing (cron) */

/* The clients cron trims a buffer grown by a big request once requests are
 * small again, frees it after 2 idle seconds, and a request half received
 * across both is still read whole. */
Test(client, cron_resizes_the_query_buffer_around_pending_input) {
    client *c = client_create(-1);
    size_t big = 300000;
    char *req = malloc(big + 64);
    int hdr = sprintf(req, "*3\r\n$3\r\nSET\r\n$1\r\nk\r\n$%zu\r\n", big);
    memset(req + hdr, 'v', big);
    memcpy(req + hdr + big, "\r\n", 2);
    size_t total = (size_t)hdr + big + 2;
    client_feed(c, req, total);
    EXPECT(c, "+OK\r\n");
    size_t grown = c->qcap;
    cr_assert_gt(grown, 32 * 1024);
    client_cron_qbuf(c);              /* the peak of this period was the big request: kept */
    cr_assert_eq(c->qcap, grown);
    client_cron_qbuf(c);              /* nothing since: cut down, not to nothing */
    cr_assert(c->qcap > 0 && c->qcap < grown, "qcap %zu", c->qcap);
    client_feed(c, req, 1000);        /* a big request, partly received */
    c->last_interaction_ms = srv.now_ms - 3000;
    client_cron_qbuf(c);              /* idle: only the pending bytes stay */
    cr_assert_eq(c->qcap, 1000);
    cr_assert_eq(c->qlen - c->qpos, 1000);
    client_feed(c, req + 1000, total - 1000);
    EXPECT(c, "+OK\r\n");
    c->last_interaction_ms = srv.now_ms - 3000;
    client_cron_qbuf(c);
    cr_assert_eq(c->qcap, 0, "an idle client with nothing pending holds no buffer");
    feed_str(c, "*1\r\n$4\r\nPING\r\n");
    EXPECT(c, "+PONG\r\n");
    free(req);
    client_free(c);
}
