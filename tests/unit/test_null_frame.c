/* test_null_frame.c - Criterion unit tests for ferry-null-server's framing
 * (bench/null/frame.c).
 *
 * Why: the null server bounds what any server can reach (scripts/ceiling.py);
 * that bound is only honest if it frames and answers every request a real
 * server would, no more and no fewer. A mixed pipelined stream is fed whole,
 * split at every byte position, and one byte at a time; every way must give
 * exactly the replies written out by hand below. Malformed input must be
 * refused, and a partial request must produce nothing until it completes.
 *
 * frame.c is part of a separate program, so it is included directly (all its
 * names are ns_-prefixed and do not collide with the server's).
 */
#include <criterion/criterion.h>

#include <stdlib.h>
#include <string.h>

#include "../../bench/null/frame.c"

static const char STREAM[] =
    "*2\r\n$3\r\nGET\r\n$3\r\nkey\r\n"
    "*3\r\n$3\r\nset\r\n$1\r\nk\r\n$4\r\nv\r\nv\r\n" /* CRLF inside a bulk */
    "*4\r\n$4\r\nMGET\r\n$1\r\na\r\n$1\r\nb\r\n$1\r\nc\r\n"
    "*2\r\n$4\r\nINCR\r\n$1\r\nn\r\n"
    "PING\r\n"
    "*3\r\n$6\r\nCONFIG\r\n$3\r\nGET\r\n$4\r\nsave\r\n"
    "*1\r\n$4\r\nPING\r\n"
    "*0\r\n"                                            /* empty: no reply */
    "*2\r\n$5\r\nLPUSH\r\n$0\r\n\r\n";

static const char REPLIES[] =
    "$4\r\nxxxx\r\n"
    "+OK\r\n"
    "*3\r\n$4\r\nxxxx\r\n$4\r\nxxxx\r\n$4\r\nxxxx\r\n"
    ":1\r\n"
    "+PONG\r\n"
    "*0\r\n"
    "+PONG\r\n"
    "+OK\r\n";

static void setup(void) { cr_assert_eq(ns_set_value_size(4), 0); }

/* Feeds STREAM to a fresh connection in pieces cut at the given positions. */
static ns_conn *feed_cut(const size_t *cuts, size_t ncuts) {
    ns_conn *c = ns_conn_new(-1);
    size_t prev = 0, i, len = sizeof STREAM - 1;
    cr_assert_not_null(c);
    for (i = 0; i <= ncuts; i++) {
        size_t end = i < ncuts ? cuts[i] : len;
        char *piece = malloc(end - prev + 1); /* exact-size copy: ASan sees over-reads */
        memcpy(piece, STREAM + prev, end - prev);
        cr_assert_eq(ns_conn_feed(c, piece, end - prev), 0, "cut at %zu", end);
        free(piece);
        prev = end;
    }
    return c;
}

static void expect_all_replies(ns_conn *c, const char *what) {
    cr_assert_eq(c->out.len, sizeof REPLIES - 1, "%s: %zu bytes of replies", what, c->out.len);
    cr_assert(memcmp(c->out.buf, REPLIES, c->out.len) == 0, "%s: replies differ", what);
    cr_assert_eq(c->inlen, 0, "%s: %zu bytes left unparsed", what, c->inlen);
    ns_conn_free(c);
}

Test(null_frame, whole_stream, .init = setup) {
    expect_all_replies(feed_cut(NULL, 0), "whole");
}

Test(null_frame, every_split_point, .init = setup) {
    size_t cut;
    for (cut = 1; cut < sizeof STREAM - 1; cut++) {
        char what[32];
        snprintf(what, sizeof what, "cut %zu", cut);
        expect_all_replies(feed_cut(&cut, 1), what);
    }
}

Test(null_frame, one_byte_at_a_time, .init = setup) {
    size_t cuts[sizeof STREAM], i;
    for (i = 0; i < sizeof STREAM - 2; i++) cuts[i] = i + 1;
    expect_all_replies(feed_cut(cuts, sizeof STREAM - 2), "bytewise");
}

Test(null_frame, partial_request_answers_nothing, .init = setup) {
    ns_out o = {0};
    const char *part = "*2\r\n$3\r\nGET\r\n$3\r\nke";
    cr_assert_eq(ns_frame(part, strlen(part), &o), 0);
    cr_assert_eq(o.len, 0);
    cr_assert_eq(ns_frame("*2\r\n", 4, &o), 0);
    cr_assert_eq(o.len, 0);
    ns_out_free(&o);
}

Test(null_frame, malformed_requests_are_refused, .init = setup) {
    static const char *bad[] = {
        "*x\r\n",
        "*1\r\n+PING\r\n",
        "*1\r\n$4\r\nPINGxx\r\n",           /* bulk not followed by CRLF */
        "*1\r\n$99999999\r\n",              /* bulk larger than the input buffer */
        "*1\r\n$-1\r\n",
        "*1\rX",                          /* CR not followed by LF */
        "*123456789012345678901234567890",  /* no CRLF within a number's room */
    };
    size_t i;
    for (i = 0; i < sizeof bad / sizeof *bad; i++) {
        ns_out o = {0};
        cr_assert_eq(ns_frame(bad[i], strlen(bad[i]), &o), -1, "accepted: %s", bad[i]);
        ns_out_free(&o);
    }
}

Test(null_frame, request_larger_than_the_buffer_closes, .init = setup) {
    ns_conn *c = ns_conn_new(-1);
    char *big = malloc(NS_INBUF + 16);
    int h;
    memset(big, 'a', NS_INBUF + 16);
    /* the bulk fits the bulk limit; the request (h + NS_INBUF - 2 bytes)
     * does not fit the buffer, and what is fed never completes it */
    h = sprintf(big, "*1\r\n$%d\r\n", NS_INBUF - 4);
    big[h] = 'a';
    cr_assert_eq(ns_conn_feed(c, big, NS_INBUF - 1000), 0);
    cr_assert_eq(ns_conn_feed(c, big + NS_INBUF - 1000, 1004), -1);
    free(big);
    ns_conn_free(c);
}

/* scripts/values_bench.py sends SETs of 64 KB values, pipelined, in 64 KB
 * reads (READ_64K): each must be answered, none refused. */
Test(null_frame, pipelined_sets_of_64k_values_in_64k_reads, .init = setup) {
    enum { VAL = 64 * 1024, N = 5, READ_64K = 64 * 1024 }; /* reads of 64 KB each */
    char hdr[64];
    int h = sprintf(hdr, "*3\r\n$3\r\nSET\r\n$1\r\nk\r\n$%d\r\n", VAL);
    size_t reqlen = (size_t)h + VAL + 2, total = N * reqlen, off, i;
    char *stream = malloc(total);
    ns_conn *c = ns_conn_new(-1);
    for (i = 0; i < N; i++) {
        char *r = stream + i * reqlen;
        memcpy(r, hdr, (size_t)h);
        memset(r + h, 'v', VAL);
        memcpy(r + h + VAL, "\r\n", 2);
    }
    for (off = 0; off < total; off += READ_64K) {
        size_t chunk = total - off < READ_64K ? total - off : READ_64K;
        cr_assert_eq(ns_conn_feed(c, stream + off, chunk), 0, "refused the read at %zu", off);
    }
    cr_assert_eq(c->out.len, N * 5);
    cr_assert_eq(memcmp(c->out.buf, "+OK\r\n+OK\r\n", 10), 0);
    cr_assert_eq(c->inlen, 0);
    free(stream);
    ns_conn_free(c);
}

/* The epoll backend reads into c->in itself (ns_conn_took): STREAM taken in
 * two reads cut at every point, then in reads of every size up to 7 bytes,
 * gives every reply once and leaves nothing behind. */
static ns_conn *took_in_reads(size_t first, size_t step) {
    ns_conn *c = ns_conn_new(-1);
    size_t len = sizeof STREAM - 1, off = 0;
    cr_assert_not_null(c);
    while (off < len) {
        size_t n = off == 0 ? first : step;
        if (n > len - off) n = len - off;
        cr_assert_leq(n, sizeof c->in - c->inlen);
        memcpy(c->in + c->inlen, STREAM + off, n);
        cr_assert_eq(ns_conn_took(c, n), 0, "read of %zu at %zu", n, off);
        off += n;
    }
    return c;
}

Test(null_frame, reads_into_the_input_buffer_at_every_split, .init = setup) {
    char what[48];
    for (size_t cut = 1; cut < sizeof STREAM - 1; cut++) {
        snprintf(what, sizeof what, "took, cut %zu", cut);
        expect_all_replies(took_in_reads(cut, sizeof STREAM), what);
    }
    for (size_t step = 1; step <= 7; step++) {
        snprintf(what, sizeof what, "took, %zu-byte reads", step);
        expect_all_replies(took_in_reads(step, step), what);
    }
}

Test(null_frame, reads_into_the_input_buffer_refuse_bad_input, .init = setup) {
    ns_conn *c = ns_conn_new(-1);
    static const char bad[] = "*1\r\n$4\r\nPING\r\n*1\r\n$x\r\n";
    memcpy(c->in, bad, sizeof bad - 1);
    cr_assert_eq(ns_conn_took(c, sizeof bad - 1), -1);
    ns_conn_free(c);
}

/* A read as large as the whole input buffer arriving behind a buffered
 * partial request (a big pipelined write) must be framed, not refused. */
Test(null_frame, full_buffer_read_behind_a_partial_request, .init = setup) {
    static const char req[] = "*1\r\n$4\r\nPING\r\n";
    size_t reqlen = sizeof req - 1, n = 3 * NS_INBUF / reqlen + 1, i, off = 0, total = n * reqlen;
    char *stream = malloc(total);
    ns_conn *c = ns_conn_new(-1);
    for (i = 0; i < n; i++) memcpy(stream + i * reqlen, req, reqlen);
    cr_assert_eq(ns_conn_feed(c, stream, 5), 0); /* a partial request stays buffered */
    off = 5;
    while (off < total) {
        size_t chunk = total - off < NS_INBUF ? total - off : NS_INBUF;
        cr_assert_eq(ns_conn_feed(c, stream + off, chunk), 0, "refused a %zu-byte read at %zu", chunk, off);
        off += chunk;
    }
    cr_assert_eq(c->out.len, n * 7, "%zu replies' bytes for %zu requests", c->out.len, n);
    cr_assert_eq(c->inlen, 0);
    free(stream);
    ns_conn_free(c);
}

/* Drains o by ns_out_iov (at most max_iov pieces) and ns_out_consume of
 * `step` bytes at a time, as writes that take only part of what is offered
 * do; returns the bytes in stream order (malloc'ed, *len set). */
static char *drain(ns_out *o, int max_iov, size_t step, size_t *len) {
    struct iovec iov[8];
    size_t cap = 1 << 16;
    char *got = malloc(cap);
    *len = 0;
    while (ns_out_pending(o)) {
        int n = ns_out_iov(o, iov, max_iov), i;
        size_t want = step, took = 0;
        cr_assert(n > 0 && n <= max_iov, "%d pieces", n);
        for (i = 0; i < n && took < want; i++) {
            size_t k = iov[i].iov_len < want - took ? iov[i].iov_len : want - took;
            cr_assert(*len + k <= cap);
            memcpy(got + *len, iov[i].iov_base, k);
            *len += k;
            took += k;
        }
        ns_out_consume(o, took);
    }
    cr_assert_eq(o->len, 0);
    cr_assert_eq(o->nrefs, 0);
    return got;
}

/* With bulks by reference the connection's output is the same byte stream,
 * drained in any piece size and any number of pieces per write. */
Test(null_frame, bulks_by_reference_give_the_same_stream, .init = setup) {
    size_t step, len;
    int max_iov;
    ns_ref_min = 0;
    for (max_iov = 1; max_iov <= 8; max_iov++) {
        for (step = 1; step <= sizeof REPLIES; step++) {
            ns_conn *c = ns_conn_new(-1);
            char *got;
            c->out.by_ref = 1;
            cr_assert_eq(ns_conn_feed(c, STREAM, sizeof STREAM - 1), 0);
            cr_assert_eq(c->out.nrefs, 4, "GET and MGET's three bulks by reference");
            cr_assert_eq(c->out.len, sizeof REPLIES - 1 - 4 * 10, "bulk bytes not copied");
            got = drain(&c->out, max_iov, step, &len);
            cr_assert_eq(len, sizeof REPLIES - 1, "iov %d step %zu: %zu bytes", max_iov, step, len);
            cr_assert(memcmp(got, REPLIES, len) == 0, "iov %d step %zu: stream differs", max_iov, step);
            free(got);
            ns_conn_free(c);
        }
    }
}

/* Below --bulk-ref-min the bulk is copied; without by_ref (io_uring) always. */
Test(null_frame, small_bulks_and_uring_copy, .init = setup) {
    ns_out o = {0};
    size_t len;
    char *got;
    ns_ref_min = 5; /* value size is 4 */
    o.by_ref = 1;
    cr_assert_eq(ns_frame("*2\r\n$3\r\nGET\r\n$1\r\nk\r\n", 20, &o), 20);
    cr_assert_eq(o.nrefs, 0);
    cr_assert_eq(o.len, 10);
    ns_ref_min = 4;
    cr_assert_eq(ns_frame("*2\r\n$3\r\nGET\r\n$1\r\nk\r\n", 20, &o), 20);
    cr_assert_eq(o.nrefs, 1);
    got = drain(&o, 8, 1000, &len);
    cr_assert_eq(len, 20);
    cr_assert(memcmp(got, "$4\r\nxxxx\r\n$4\r\nxxxx\r\n", 20) == 0);
    free(got);
    o.by_ref = 0;
    cr_assert_eq(ns_frame("*2\r\n$3\r\nGET\r\n$1\r\nk\r\n", 20, &o), 20);
    cr_assert_eq(o.nrefs, 0);
    cr_assert_eq(o.len, 10);
    ns_out_free(&o);
}
