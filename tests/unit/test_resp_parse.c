/* test_resp_parse.c - Criterion unit tests for src/io/resp_parse.c.
 *
 * Why: the request parser is the server's front door. These tests pin down
 * Redis 7.0's protocol behaviour and error texts, and check the incremental
 * contract: every test input is fed split at every byte boundary (fresh
 * parser per prefix, byte-by-byte growth reusing state, and every pair of
 * split points), with argv storage of 0, 1 and 64 slots grown on
 * RESP_NEED_ARGV. Each call gets an exact-size heap copy of the bytes so
 * AddressSanitizer catches any read past len.
 */
#include <criterion/criterion.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "resp_parse.h"

typedef struct {
    const char *s;
    size_t n;
} bs;
#define S(lit) { lit, sizeof(lit) - 1 }

static const resp_limits DEF = { RESP_MAX_BULK_DEF, RESP_MAX_ARGS, RESP_INLINE_MAX };
static const resp_limits SMALL = { 5, 2, 16 };

static const char E_MBULK_BIG[] = "Protocol error: too big mbulk count string";
static const char E_MBULK_LEN[] = "Protocol error: invalid multibulk length";
static const char E_BULK_BIG[] = "Protocol error: too big bulk count string";
static const char E_BULK_LEN[] = "Protocol error: invalid bulk length";
static const char E_INLINE_BIG[] = "Protocol error: too big inline request";
static const char E_QUOTES[] = "Protocol error: unbalanced quotes in request";

/* ---- harness: a parser plus the request bytes as the parser left them ---- */

typedef struct {
    resp_parser p;
    resp_arg *argv;
    size_t cap;
    char *work; /* request bytes; inline parsing unescapes them in place */
    size_t n;
    int copy;   /* 1: exact-size heap copy per call (ASan), 0: parse work directly */
} harness;

static void h_init(harness *h, const char *in, size_t n, size_t cap)
{
    h->cap = cap;
    h->argv = cap ? malloc(cap * sizeof *h->argv) : NULL;
    h->work = malloc(n ? n : 1);
    memcpy(h->work, in, n);
    h->n = n;
    h->copy = 1;
    resp_parser_init(&h->p, h->argv, cap);
}

static void h_free(harness *h)
{
    free(h->argv);
    free(h->work);
}

/* Parse the first k bytes, growing argv on RESP_NEED_ARGV like a caller. */
static ssize_t h_feed(harness *h, size_t k, const resp_limits *lim)
{
    char *buf = h->work;
    ssize_t r;
    int grows = 0;

    cr_assert(k <= h->n);
    if (h->copy) {
        buf = malloc(k ? k : 1);
        memcpy(buf, h->work, k);
    }
    for (;;) {
        r = resp_parse(&h->p, buf, k, lim);
        if (r != RESP_NEED_ARGV)
            break;
        cr_assert_eq(h->p.argc, h->p.argv_cap, "NEED_ARGV with room left");
        cr_assert(++grows < 64);
        h->cap = h->cap ? h->cap * 2 : 1;
        h->argv = realloc(h->argv, h->cap * sizeof *h->argv);
        h->p.argv = h->argv;
        h->p.argv_cap = h->cap;
    }
    cr_assert(r == RESP_INCOMPLETE || r == RESP_ERROR || r > 0, "bad return %zd", r);
    if (r > 0) {
        cr_assert((size_t)r <= k);
        cr_assert(h->p.argc <= h->p.argv_cap);
        for (size_t i = 0; i < h->p.argc; i++)
            cr_assert(h->argv[i].off <= (size_t)r && h->argv[i].len <= (size_t)r - h->argv[i].off,
                      "span %zu outside request", i);
    }
    if (r == RESP_ERROR)
        cr_assert(h->p.err != NULL);
    if (h->copy) {
        memcpy(h->work, buf, k);
        free(buf);
    }
    return r;
}

/* ---- table-driven cases ---- */

typedef struct {
    bs in;
    ssize_t want;      /* bytes consumed; 0 means all of in; RESP_ERROR */
    const char *err;   /* with RESP_ERROR */
    size_t argc;
    bs av[8];
} tcase;

static void check_args(const harness *h, const tcase *tc, const char *ctx)
{
    cr_assert_eq(h->p.argc, tc->argc, "%s: argc %zu, want %zu", ctx, h->p.argc, tc->argc);
    for (size_t i = 0; i < tc->argc; i++) {
        const resp_arg *a = &h->argv[i];
        cr_assert_eq(a->len, tc->av[i].n, "%s: arg %zu len %zu want %zu", ctx, i, a->len, tc->av[i].n);
        cr_assert(memcmp(h->work + a->off, tc->av[i].s, a->len) == 0, "%s: arg %zu bytes", ctx, i);
    }
}

static void check_outcome(const harness *h, ssize_t r, const tcase *tc, ssize_t want,
                          const char *ctx)
{
    cr_assert_eq(r, want, "%s: got %zd want %zd (err %s)", ctx, r, want,
                 h->p.err ? h->p.err : "-");
    if (r > 0)
        check_args(h, tc, ctx);
    else if (r == RESP_ERROR)
        cr_assert_str_eq(h->p.err, tc->err, "%s", ctx);
}

static void check_case_lim(const tcase *tc, const resp_limits *lim)
{
    static const size_t caps[] = { 0, 1, 64 };
    size_t n = tc->in.n;
    ssize_t want = tc->want ? tc->want : (ssize_t)n;
    ssize_t *fresh = calloc(n + 1, sizeof *fresh);
    char ctx[160];

    for (size_t ci = 0; ci < sizeof caps / sizeof caps[0]; ci++) {
        size_t cap = caps[ci];
        int seen_err = 0;

        /* 1. fresh parser on every prefix: INCOMPLETE until decided, then the outcome */
        for (size_t k = 0; k <= n; k++) {
            harness h;
            h_init(&h, tc->in.s, n, cap);
            fresh[k] = h_feed(&h, k, lim);
            snprintf(ctx, sizeof ctx, "[%.40s] cap %zu prefix %zu", tc->in.s, cap, k);
            if (want > 0) {
                check_outcome(&h, fresh[k], tc, (size_t)want <= k ? want : RESP_INCOMPLETE, ctx);
            } else if (fresh[k] == RESP_ERROR) {
                seen_err = 1;
                cr_assert_str_eq(h.p.err, tc->err, "%s", ctx);
                cr_assert_eq(resp_parse(&h.p, h.work, k, lim), RESP_ERROR, "sticky: %s", ctx);
            } else {
                cr_assert(!seen_err, "error not monotonic: %s", ctx);
                cr_assert_eq(fresh[k], RESP_INCOMPLETE, "%s", ctx);
            }
            h_free(&h);
        }
        snprintf(ctx, sizeof ctx, "[%.40s] cap %zu full", tc->in.s, cap);
        cr_assert_eq(fresh[n], want, "%s", ctx);

        /* 2. one parser, buffer growing one byte per call */
        {
            harness h;
            h_init(&h, tc->in.s, n, cap);
            for (size_t k = 0; k <= n; k++) {
                ssize_t r = h_feed(&h, k, lim);
                snprintf(ctx, sizeof ctx, "[%.40s] cap %zu bytewise %zu", tc->in.s, cap, k);
                cr_assert_eq(r, fresh[k], "%s: %zd vs fresh %zd", ctx, r, fresh[k]);
                if (r != RESP_INCOMPLETE) {
                    check_outcome(&h, r, tc, want, ctx);
                    break;
                }
            }
            h_free(&h);
        }

        /* 3. every pair of split points i <= j, then the full buffer */
        if (n <= 96) {
            for (size_t i = 0; i <= n; i++) {
                for (size_t j = i; j <= n; j++) {
                    harness h;
                    size_t steps[3] = { i, j, n };
                    ssize_t r = RESP_INCOMPLETE;
                    h_init(&h, tc->in.s, n, cap);
                    for (int s = 0; s < 3 && r == RESP_INCOMPLETE; s++) {
                        r = h_feed(&h, steps[s], lim);
                        snprintf(ctx, sizeof ctx, "[%.40s] cap %zu split %zu,%zu at %zu",
                                 tc->in.s, cap, i, j, steps[s]);
                        cr_assert_eq(r, fresh[steps[s]], "%s", ctx);
                    }
                    check_outcome(&h, r, tc, want, ctx);
                    h_free(&h);
                }
            }
        }
    }
    free(fresh);
}

static void check_cases(const tcase *tcs, size_t count, const resp_limits *lim)
{
    for (size_t i = 0; i < count; i++)
        check_case_lim(&tcs[i], lim);
}
#define CHECK_CASES(arr, lim) check_cases(arr, sizeof(arr) / sizeof(arr[0]), lim)

/* One fresh call on a whole buffer with ample argv. */
static ssize_t parse_once(const char *in, size_t n, const resp_limits *lim, harness *h)
{
    h_init(h, in, n, 64);
    return h_feed(h, n, lim);
}

/* ---- multibulk ---- */

Test(resp_mbulk, well_formed)
{
    static const tcase tcs[] = {
        { .in = S("*3\r\n$3\r\nSET\r\n$3\r\nkey\r\n$5\r\nvalue\r\n"), .argc = 3,
          .av = { S("SET"), S("key"), S("value") } },
        { .in = S("*1\r\n$4\r\nPING\r\n"), .argc = 1, .av = { S("PING") } },
        { .in = S("*1\r\n$0\r\n\r\n"), .argc = 1, .av = { S("") } },
        { .in = S("*2\r\n$0\r\n\r\n$0\r\n\r\n"), .argc = 2, .av = { S(""), S("") } },
        { .in = S("*2\r\n$10\r\n0123456789\r\n$12\r\nabcdefghijkl\r\n"), .argc = 2,
          .av = { S("0123456789"), S("abcdefghijkl") } },
        /* binary payloads: CR, LF, CRLF, NUL, '*' and '$' inside bulks */
        { .in = S("*2\r\n$4\r\n\r\n\r\n\r\n$3\r\na\0b\r\n"), .argc = 2,
          .av = { S("\r\n\r\n"), S("a\0b") } },
        { .in = S("*3\r\n$2\r\n\r\r\r\n$2\r\n\n\n\r\n$5\r\n*1\r\n$\r\n"), .argc = 3,
          .av = { S("\r\r"), S("\n\n"), S("*1\r\n$") } },
        /* trailing bytes belong to the next request */
        { .in = S("*1\r\n$1\r\na\r\n*1\r\n"), .want = 11, .argc = 1, .av = { S("a") } },
        /* like Redis, the byte after a header CR and the 2 bytes after a
         * payload are skipped without being checked */
        { .in = S("*1\r\n$1\r\naXY"), .argc = 1, .av = { S("a") } },
        { .in = S("*1\rX$1\rYaZZ"), .argc = 1, .av = { S("a") } },
    };
    CHECK_CASES(tcs, &DEF);
}

Test(resp_mbulk, empty_requests)
{
    static const tcase tcs[] = {
        { .in = S("*0\r\n"), .argc = 0 },
        { .in = S("*-1\r\n"), .argc = 0 },
        { .in = S("*-100\r\n"), .argc = 0 },
        { .in = S("*0\r\n*1\r\n$1\r\na\r\n"), .want = 4, .argc = 0 },
        { .in = S("*-9223372036854775808\r\n"), .argc = 0 },
    };
    CHECK_CASES(tcs, &DEF);
}

Test(resp_mbulk, count_errors)
{
    static const tcase tcs[] = {
        { .in = S("*\r\n"), .want = RESP_ERROR, .err = E_MBULK_LEN },
        { .in = S("*abc\r\n"), .want = RESP_ERROR, .err = E_MBULK_LEN },
        { .in = S("*+1\r\n"), .want = RESP_ERROR, .err = E_MBULK_LEN },
        { .in = S("* 1\r\n"), .want = RESP_ERROR, .err = E_MBULK_LEN },
        { .in = S("*1 \r\n"), .want = RESP_ERROR, .err = E_MBULK_LEN },
        { .in = S("*01\r\n"), .want = RESP_ERROR, .err = E_MBULK_LEN },
        { .in = S("*00\r\n"), .want = RESP_ERROR, .err = E_MBULK_LEN },
        { .in = S("*-0\r\n"), .want = RESP_ERROR, .err = E_MBULK_LEN },
        { .in = S("*-\r\n"), .want = RESP_ERROR, .err = E_MBULK_LEN },
        { .in = S("*1\n\r\n"), .want = RESP_ERROR, .err = E_MBULK_LEN },
        { .in = S("*2147483648\r\n"), .want = RESP_ERROR, .err = E_MBULK_LEN },
        { .in = S("*9223372036854775807\r\n"), .want = RESP_ERROR, .err = E_MBULK_LEN },
        { .in = S("*9223372036854775808\r\n"), .want = RESP_ERROR, .err = E_MBULK_LEN },
        { .in = S("*99999999999999999999\r\n"), .want = RESP_ERROR, .err = E_MBULK_LEN },
        { .in = S("*-9223372036854775809\r\n"), .want = RESP_ERROR, .err = E_MBULK_LEN },
    };
    CHECK_CASES(tcs, &DEF);
}

Test(resp_mbulk, bulk_errors)
{
    static const tcase tcs[] = {
        { .in = S("*1\r\nx\r\n"), .want = RESP_ERROR,
          .err = "Protocol error: expected '$', got 'x'" },
        { .in = S("*2\r\n$1\r\na\r\n:1\r\n"), .want = RESP_ERROR,
          .err = "Protocol error: expected '$', got ':'" },
        { .in = S("*1\r\n*1\r\n"), .want = RESP_ERROR,
          .err = "Protocol error: expected '$', got '*'" },
        /* CR / LF are shown as a space, as Redis sanitises error replies */
        { .in = S("*1\r\n\r\n"), .want = RESP_ERROR,
          .err = "Protocol error: expected '$', got ' '" },
        { .in = S("*1\r\n\n\r\n"), .want = RESP_ERROR,
          .err = "Protocol error: expected '$', got ' '" },
        /* %c of NUL ends the C string in Redis's formatting */
        { .in = S("*1\r\n\0\r\n"), .want = RESP_ERROR,
          .err = "Protocol error: expected '$', got '" },
        { .in = S("*1\r\n\xff\r\n"), .want = RESP_ERROR,
          .err = "Protocol error: expected '$', got '\xff'" },
        { .in = S("*1\r\n$\r\n"), .want = RESP_ERROR, .err = E_BULK_LEN },
        { .in = S("*1\r\n$-1\r\n"), .want = RESP_ERROR, .err = E_BULK_LEN },
        { .in = S("*1\r\n$-0\r\n"), .want = RESP_ERROR, .err = E_BULK_LEN },
        { .in = S("*1\r\n$+1\r\n"), .want = RESP_ERROR, .err = E_BULK_LEN },
        { .in = S("*1\r\n$01\r\n"), .want = RESP_ERROR, .err = E_BULK_LEN },
        { .in = S("*1\r\n$ 1\r\n"), .want = RESP_ERROR, .err = E_BULK_LEN },
        { .in = S("*1\r\n$1 \r\n"), .want = RESP_ERROR, .err = E_BULK_LEN },
        { .in = S("*1\r\n$abc\r\n"), .want = RESP_ERROR, .err = E_BULK_LEN },
        { .in = S("*1\r\n$536870913\r\n"), .want = RESP_ERROR, .err = E_BULK_LEN },
        { .in = S("*1\r\n$9223372036854775808\r\n"), .want = RESP_ERROR, .err = E_BULK_LEN },
        { .in = S("*1\r\n$123456789012345678901\r\n"), .want = RESP_ERROR, .err = E_BULK_LEN },
        { .in = S("*3\r\n$3\r\nSET\r\n$1\r\nk\r\n$x\r\n"), .want = RESP_ERROR, .err = E_BULK_LEN },
    };
    CHECK_CASES(tcs, &DEF);
}

Test(resp_mbulk, dollar_checked_only_on_complete_line)
{
    /* as Redis: a bad first byte is reported once the header line is there */
    harness h;
    cr_assert_eq(parse_once("*1\r\nGET", 7, &DEF, &h), RESP_INCOMPLETE);
    h_free(&h);
    cr_assert_eq(parse_once("*1\r\nGET\r", 8, &DEF, &h), RESP_INCOMPLETE);
    h_free(&h);
}

Test(resp_mbulk, valid_headers_wait_for_data)
{
    static const char *ins[] = {
        "*2147483647\r\n",                /* INT_MAX args: fine, just incomplete */
        "*1\r\n$536870912\r\n",           /* exactly proto-max-bulk-len */
        "*1\r\n$536870912\r\nabc",
        "*1000000\r\n$1\r\na\r\n",        /* declared count never asks for argv */
    };
    for (size_t i = 0; i < sizeof ins / sizeof ins[0]; i++) {
        harness h;
        h_init(&h, ins[i], strlen(ins[i]), 1);
        cr_assert_eq(h_feed(&h, strlen(ins[i]), &DEF), RESP_INCOMPLETE, "%s", ins[i]);
        cr_assert_eq(h.cap, 1, "argv grew from a declared count");
        h_free(&h);
    }
    /* zero slots and a huge count: no NEED_ARGV before an argument exists */
    {
        harness h;
        h_init(&h, "*1000000\r\n", 10, 0);
        cr_assert_eq(resp_parse(&h.p, h.work, 10, &DEF), RESP_INCOMPLETE);
        h_free(&h);
    }
}

Test(resp_mbulk, small_limits)
{
    static const tcase tcs[] = {
        { .in = S("*2\r\n$5\r\nhello\r\n$0\r\n\r\n"), .argc = 2, .av = { S("hello"), S("") } },
        { .in = S("*3\r\n"), .want = RESP_ERROR, .err = E_MBULK_LEN },
        { .in = S("*1\r\n$6\r\n"), .want = RESP_ERROR, .err = E_BULK_LEN },
        { .in = S("*-3\r\n"), .argc = 0 },
        /* 16 pending bytes without CR are fine, 17 are too many */
        { .in = S("*0000000000000000000"), .want = RESP_ERROR, .err = E_MBULK_BIG },
        { .in = S("*1\r\n$00000000000000000"), .want = RESP_ERROR, .err = E_BULK_BIG },
        { .in = S("*2\r\n$1\r\na\r\nxxxxxxxxxxxxxxxxxx"), .want = RESP_ERROR, .err = E_BULK_BIG },
    };
    CHECK_CASES(tcs, &SMALL);

    harness h;
    cr_assert_eq(parse_once("*000000000000000", 16, &SMALL, &h), RESP_INCOMPLETE);
    h_free(&h);
    cr_assert_eq(parse_once("*1\r\n$000000000000000", 20, &SMALL, &h), RESP_INCOMPLETE);
    h_free(&h);
    /* a CR found in the same read is not "too big", even past the limit */
    cr_assert_eq(parse_once("*0000000000000000000\r\n", 22, &SMALL, &h), RESP_ERROR);
    cr_assert_str_eq(h.p.err, E_MBULK_LEN);
    h_free(&h);
    cr_assert_eq(parse_once("*1\r\n$xxxxxxxxxxxxxxxxxxxxxxx\r\n", 30, &SMALL, &h), RESP_ERROR);
    cr_assert_str_eq(h.p.err, E_BULK_LEN);
    h_free(&h);
}

static char *repeat(const char *head, char c, size_t n, size_t *total)
{
    size_t hl = strlen(head);
    char *s = malloc(hl + n + 1);
    memcpy(s, head, hl);
    memset(s + hl, c, n);
    s[hl + n] = 0;
    *total = hl + n;
    return s;
}

/* Feeds 'in' in chunks of 'step' bytes to one parser (no copies, large input). */
static ssize_t feed_growing(harness *h, size_t n, size_t step, const resp_limits *lim,
                            size_t *at)
{
    ssize_t r = RESP_INCOMPLETE;
    size_t k = 0;
    h->copy = 0;
    while (r == RESP_INCOMPLETE && k < n) {
        k = k + step < n ? k + step : n;
        r = h_feed(h, k, lim);
    }
    *at = k;
    return r;
}

Test(resp_mbulk, default_64k_header_limits)
{
    size_t n, at;
    harness h;
    char *s;

    /* count line: 65536 pending bytes wait, 65537 are an error */
    s = repeat("*", '1', 65535, &n);
    cr_assert_eq(parse_once(s, n, &DEF, &h), RESP_INCOMPLETE);
    h_free(&h);
    free(s);
    s = repeat("*", '1', 65536, &n);
    cr_assert_eq(parse_once(s, n, &DEF, &h), RESP_ERROR);
    cr_assert_str_eq(h.p.err, E_MBULK_BIG);
    h_free(&h);
    h_init(&h, s, n, 1);
    cr_assert_eq(feed_growing(&h, n, 1, &DEF, &at), RESP_ERROR);
    cr_assert_eq(at, 65537);
    cr_assert_str_eq(h.p.err, E_MBULK_BIG);
    h_free(&h);
    free(s);

    /* bulk header: counted from the header's own first byte */
    s = repeat("*1\r\n$", '1', 65535, &n);
    cr_assert_eq(parse_once(s, n, &DEF, &h), RESP_INCOMPLETE);
    h_free(&h);
    free(s);
    s = repeat("*1\r\n$", '1', 65536, &n);
    cr_assert_eq(parse_once(s, n, &DEF, &h), RESP_ERROR);
    cr_assert_str_eq(h.p.err, E_BULK_BIG);
    h_free(&h);
    h_init(&h, s, n, 1);
    cr_assert_eq(feed_growing(&h, n, 7, &DEF, &at), RESP_ERROR);
    cr_assert_str_eq(h.p.err, E_BULK_BIG);
    h_free(&h);
    free(s);

    /* a non-'$' line with no CR is also "too big bulk count string" */
    s = repeat("*2\r\n$1\r\na\r\n", 'x', 65537, &n);
    cr_assert_eq(parse_once(s, n, &DEF, &h), RESP_ERROR);
    cr_assert_str_eq(h.p.err, E_BULK_BIG);
    h_free(&h);
    free(s);
}

Test(resp_mbulk, large_binary_payload_in_chunks)
{
    const size_t blen = 1 << 20;
    char head[64];
    int hl = snprintf(head, sizeof head, "*2\r\n$3\r\nSET\r\n$%zu\r\n", blen);
    size_t n = (size_t)hl + blen + 2, at;
    char *s = malloc(n);
    harness h;

    memcpy(s, head, (size_t)hl);
    for (size_t i = 0; i < blen; i++)
        s[hl + i] = "\r\n\0*$x"[i % 6];
    memcpy(s + hl + blen, "\r\n", 2);
    h_init(&h, s, n, 1);
    cr_assert_eq(feed_growing(&h, n, 4093, &DEF, &at), (ssize_t)n);
    cr_assert_eq(h.p.argc, 2);
    cr_assert_eq(h.argv[1].off, (size_t)hl);
    cr_assert_eq(h.argv[1].len, blen);
    cr_assert(memcmp(h.work + hl, s + hl, blen) == 0);
    h_free(&h);
    free(s);
}

Test(resp_mbulk, resumes_without_rescanning)
{
    /* White-box: once arguments are complete their bytes are not read again.
     * Scribble over them between calls; the parse must still finish. */
    const char *in = "*3\r\n$3\r\nSET\r\n$3\r\nkey\r\n$5\r\nvalue\r\n";
    size_t n = strlen(in);
    char *buf = malloc(n);
    resp_arg av[4];
    resp_parser p;

    memcpy(buf, in, n);
    resp_parser_init(&p, av, 4);
    cr_assert_eq(resp_parse(&p, buf, 24, &DEF), RESP_INCOMPLETE); /* inside "$5\r" */
    memset(buf, '#', 22);
    cr_assert_eq(resp_parse(&p, buf, n, &DEF), (ssize_t)n);
    cr_assert_eq(p.argc, 3);
    cr_assert_eq(av[0].off, 8);
    cr_assert_eq(av[1].off, 17);
    cr_assert_eq(av[2].off, 26);
    cr_assert(memcmp(buf + 26, "value", 5) == 0);

    /* same while waiting for the header right after the count line */
    memcpy(buf, in, n);
    resp_parser_init(&p, av, 4);
    cr_assert_eq(resp_parse(&p, buf, 4, &DEF), RESP_INCOMPLETE);
    memset(buf, '#', 4);
    cr_assert_eq(resp_parse(&p, buf, n, &DEF), (ssize_t)n);
    cr_assert_eq(p.argc, 3);
    free(buf);
}

Test(resp_mbulk, need_argv_growth)
{
    char in[] = "*3\r\n$3\r\nSET\r\n$1\r\nk\r\n$1\r\nv\r\n";
    size_t n = sizeof in - 1;
    resp_arg *av = malloc(sizeof *av);
    resp_parser p;

    resp_parser_init(&p, av, 1);
    cr_assert_eq(resp_parse(&p, in, n, &DEF), RESP_NEED_ARGV);
    cr_assert_eq(p.argc, 1);
    av = realloc(av, 2 * sizeof *av);
    p.argv = av;
    p.argv_cap = 2;
    cr_assert_eq(resp_parse(&p, in, n, &DEF), RESP_NEED_ARGV);
    av = realloc(av, 3 * sizeof *av);
    p.argv = av;
    p.argv_cap = 3;
    cr_assert_eq(resp_parse(&p, in, n, &DEF), (ssize_t)n);
    cr_assert_eq(p.argc, 3);
    cr_assert(av[0].off == 8 && av[0].len == 3);
    cr_assert(av[1].off == 17 && av[1].len == 1);
    cr_assert(av[2].off == 24 && av[2].len == 1);
    free(av);
}

Test(resp_mbulk, never_writes_buffer)
{
    const char in[] = "*2\r\n$5\r\n\"a b\"\r\n$4\r\n\\x41\r\n";
    char buf[sizeof in];
    harness h;
    memcpy(buf, in, sizeof in);
    cr_assert_eq(parse_once(buf, sizeof in - 1, &DEF, &h), (ssize_t)sizeof in - 1);
    cr_assert(memcmp(h.work, in, sizeof in - 1) == 0);
    h_free(&h);
}

/* ---- inline ---- */

Test(resp_inline, splitting)
{
    static const tcase tcs[] = {
        { .in = S("set a b\r\n"), .argc = 3, .av = { S("set"), S("a"), S("b") } },
        { .in = S("set a b\n"), .argc = 3, .av = { S("set"), S("a"), S("b") } },
        { .in = S("PING\r\n"), .argc = 1, .av = { S("PING") } },
        { .in = S("  set \t a   b  \r\n"), .argc = 3, .av = { S("set"), S("a"), S("b") } },
        { .in = S("a\rb\n"), .argc = 2, .av = { S("a"), S("b") } },
        { .in = S("a\r\r\n"), .argc = 1, .av = { S("a") } },
        /* \v and \f are skipped between tokens but do not end a token */
        { .in = S("\va\vb\f\n"), .argc = 1, .av = { S("a\vb\f") } },
        /* NUL is ordinary data (lines are found with memchr) */
        { .in = S("a\0b c\n"), .argc = 2, .av = { S("a\0b"), S("c") } },
        /* first byte not '*': inline, whatever it is */
        { .in = S("$3\r\nfoo\r\n"), .want = 4, .argc = 1, .av = { S("$3") } },
        { .in = S("get k\r\nget j\r\n"), .want = 7, .argc = 2, .av = { S("get"), S("k") } },
    };
    CHECK_CASES(tcs, &DEF);
}

Test(resp_inline, empty_lines)
{
    static const tcase tcs[] = {
        { .in = S("\r\n"), .argc = 0 },
        { .in = S("\n"), .argc = 0 },
        { .in = S("   \r\n"), .argc = 0 },
        { .in = S(" \t \v\f\r\r\n"), .argc = 0 },
        { .in = S("\n\n"), .want = 1, .argc = 0 },
    };
    CHECK_CASES(tcs, &DEF);
}

Test(resp_inline, quoting)
{
    static const tcase tcs[] = {
        { .in = S("set \"a b\" 'c d'\r\n"), .argc = 3, .av = { S("set"), S("a b"), S("c d") } },
        { .in = S("\"\\x41\"\r\n"), .argc = 1, .av = { S("A") } },
        { .in = S("\"\\x4a\\x4A\\x00\\xff\"\n"), .argc = 1, .av = { S("JJ\0\xff") } },
        { .in = S("\"\\x4g\"\n"), .argc = 1, .av = { S("x4g") } },
        { .in = S("\"\\x4\"\n"), .argc = 1, .av = { S("x4") } },
        { .in = S("\"\\n\\r\\t\\b\\a\\\\\\\"\\z\\'\"\n"), .argc = 1,
          .av = { S("\n\r\t\b\a\\\"z'") } },
        { .in = S("'a\\'b'\n"), .argc = 1, .av = { S("a'b") } },
        { .in = S("'a\\nb\\x41\"'\n"), .argc = 1, .av = { S("a\\nb\\x41\"") } },
        { .in = S("\"\"\n"), .argc = 1, .av = { S("") } },
        { .in = S("'' \"\"\r\n"), .argc = 2, .av = { S(""), S("") } },
        /* a quote can open mid-token; the closing quote ends the token */
        { .in = S("foo\"bar baz\" x\n"), .argc = 2, .av = { S("foobar baz"), S("x") } },
        { .in = S("a'b c'\n"), .argc = 1, .av = { S("ab c") } },
        /* any isspace() byte may follow a closing quote */
        { .in = S("\"a\"\vb\n"), .argc = 2, .av = { S("a"), S("b") } },
        { .in = S("\"a\"\tb\n"), .argc = 2, .av = { S("a"), S("b") } },
        { .in = S("\"a\"\r\r\n"), .argc = 1, .av = { S("a") } },
        { .in = S("set \"k\\r\\n\" \"v\\\"v\"\r\n"), .argc = 3,
          .av = { S("set"), S("k\r\n"), S("v\"v") } },
    };
    CHECK_CASES(tcs, &DEF);
}

Test(resp_inline, quote_errors)
{
    static const tcase tcs[] = {
        { .in = S("\"abc\r\n"), .want = RESP_ERROR, .err = E_QUOTES },
        { .in = S("'abc\n"), .want = RESP_ERROR, .err = E_QUOTES },
        { .in = S("set \"a\"b\r\n"), .want = RESP_ERROR, .err = E_QUOTES },
        { .in = S("set 'a'b\r\n"), .want = RESP_ERROR, .err = E_QUOTES },
        { .in = S("\"a\"\"b\"\n"), .want = RESP_ERROR, .err = E_QUOTES },
        { .in = S("\"abc\\\"\n"), .want = RESP_ERROR, .err = E_QUOTES },
        { .in = S("\"abc\\\n"), .want = RESP_ERROR, .err = E_QUOTES },
        { .in = S("'abc\\'\n"), .want = RESP_ERROR, .err = E_QUOTES },
        { .in = S("\"\n"), .want = RESP_ERROR, .err = E_QUOTES },
        { .in = S("ok ok \"a\n"), .want = RESP_ERROR, .err = E_QUOTES },
        /* the line ends at the first '\n', even inside quotes */
        { .in = S("\"a\nb\" c\n"), .want = RESP_ERROR, .err = E_QUOTES },
    };
    CHECK_CASES(tcs, &DEF);
}

Test(resp_inline, need_argv_keeps_unescaped_args)
{
    const char in[] = "\"x\\x41\" 'b c' d \"\\n\"\r\n";
    char buf[sizeof in];
    resp_arg *av = malloc(sizeof *av);
    resp_parser p;
    size_t n = sizeof in - 1, cap = 1;
    ssize_t r;
    int calls = 0;

    memcpy(buf, in, sizeof in);
    resp_parser_init(&p, av, cap);
    while ((r = resp_parse(&p, buf, n, &DEF)) == RESP_NEED_ARGV) {
        cr_assert_eq(p.argc, cap);
        calls++;
        av = realloc(av, ++cap * sizeof *av);
        p.argv = av;
        p.argv_cap = cap;
    }
    cr_assert_eq(calls, 3);
    cr_assert_eq(r, (ssize_t)n);
    cr_assert_eq(p.argc, 4);
    cr_assert(av[0].len == 2 && memcmp(buf + av[0].off, "xA", 2) == 0);
    cr_assert(av[1].len == 3 && memcmp(buf + av[1].off, "b c", 3) == 0);
    cr_assert(av[2].len == 1 && memcmp(buf + av[2].off, "d", 1) == 0);
    cr_assert(av[3].len == 1 && memcmp(buf + av[3].off, "\n", 1) == 0);
    free(av);
}

Test(resp_inline, resumes_newline_search)
{
    /* White-box: bytes already searched for '\n' are not searched again, so
     * a '\n' planted there between calls is not seen as the line end. */
    char buf[] = "get k\r\n";
    resp_arg av[4];
    resp_parser p;

    resp_parser_init(&p, av, 4);
    cr_assert_eq(resp_parse(&p, buf, 5, &DEF), RESP_INCOMPLETE);
    buf[3] = '\n';
    cr_assert_eq(resp_parse(&p, buf, 7, &DEF), 7);
    cr_assert_eq(p.argc, 2);
}

Test(resp_inline, limits)
{
    size_t n, at;
    harness h;
    char *s;

    s = repeat("", 'a', 65536, &n);
    cr_assert_eq(parse_once(s, n, &DEF, &h), RESP_INCOMPLETE);
    h_free(&h);
    free(s);
    s = repeat("", 'a', 65537, &n);
    cr_assert_eq(parse_once(s, n, &DEF, &h), RESP_ERROR);
    cr_assert_str_eq(h.p.err, E_INLINE_BIG);
    h_free(&h);
    h_init(&h, s, n, 1);
    cr_assert_eq(feed_growing(&h, n, 1, &DEF, &at), RESP_ERROR);
    cr_assert_eq(at, 65537);
    cr_assert_str_eq(h.p.err, E_INLINE_BIG);
    h_free(&h);
    free(s);

    /* a newline present in the buffer wins, however long the line (Redis) */
    s = repeat("", 'a', 100000, &n);
    s[n - 1] = '\n';
    cr_assert_eq(parse_once(s, n, &DEF, &h), (ssize_t)n);
    cr_assert_eq(h.p.argc, 1);
    cr_assert_eq(h.argv[0].len, n - 1);
    h_free(&h);
    free(s);

    static const tcase tcs[] = {
        { .in = S("aaaaaaaaaaaaaaaaa"), .want = RESP_ERROR, .err = E_INLINE_BIG },
    };
    CHECK_CASES(tcs, &SMALL);
    cr_assert_eq(parse_once("aaaaaaaaaaaaaaaa", 16, &SMALL, &h), RESP_INCOMPLETE);
    h_free(&h);
    /* a newline in the same read: accepted past max_inline, as Redis */
    cr_assert_eq(parse_once("set k 12345678901\n", 18, &SMALL, &h), 18);
    cr_assert_eq(h.p.argc, 3);
    h_free(&h);
}

/* ---- parser lifecycle ---- */

Test(resp_parser, sticky_error_and_reset)
{
    char bad[] = "*x\r\n";
    char good[] = "*1\r\n$1\r\na\r\n";
    resp_arg av[2];
    resp_parser p;

    resp_parser_init(&p, av, 2);
    cr_assert_eq(resp_parse(&p, bad, 4, &DEF), RESP_ERROR);
    cr_assert_str_eq(p.err, E_MBULK_LEN);
    cr_assert_eq(resp_parse(&p, good, 11, &DEF), RESP_ERROR);
    cr_assert_str_eq(p.err, E_MBULK_LEN);
    resp_parser_reset(&p);
    cr_assert_null(p.err);
    cr_assert_eq(p.argv, av);
    cr_assert_eq(p.argv_cap, 2);
    cr_assert_eq(resp_parse(&p, good, 11, &DEF), 11);
    cr_assert_eq(p.argc, 1);
}

Test(resp_parser, reset_drops_partial_request)
{
    char part[] = "*2\r\n$1\r\na\r\n$1";
    char inl[] = "ping\r\n";
    resp_arg av[2];
    resp_parser p;

    resp_parser_init(&p, av, 2);
    cr_assert_eq(resp_parse(&p, part, sizeof part - 1, &DEF), RESP_INCOMPLETE);
    resp_parser_reset(&p);
    cr_assert_eq(resp_parse(&p, inl, 6, &DEF), 6);
    cr_assert_eq(p.argc, 1);
    cr_assert(av[0].off == 0 && av[0].len == 4);
}

Test(resp_parser, empty_buffer_and_null_limits)
{
    resp_arg av[4];
    resp_parser p;
    char buf[] = "*1\r\n$1\r\na\r\n";

    resp_parser_init(&p, av, 4);
    cr_assert_eq(resp_parse(&p, buf, 0, &DEF), RESP_INCOMPLETE);
    cr_assert_eq(resp_parse(&p, buf, 11, NULL), 11); /* NULL: Redis defaults */
    cr_assert_eq(p.argc, 1);
}

/* ---- pipelining ---- */

typedef struct {
    ssize_t want; /* consumed or RESP_ERROR */
    size_t argc;
    bs av[4];
} step;

/* A caller: receives stream bytes according to 'cuts', parses every complete
 * request, drops consumed bytes from the front of its buffer (compaction)
 * and checks the sequence of outcomes. */
static void run_pipeline(const char *stream, size_t n, const step *steps, size_t nsteps,
                         const size_t *cuts, size_t ncuts, size_t cap, const char *ctx)
{
    char *buf = malloc(n ? n : 1);
    size_t have = 0, got = 0, si = 0, ci = 0;
    resp_arg *av = cap ? malloc(cap * sizeof *av) : NULL;
    resp_parser p;

    resp_parser_init(&p, av, cap);
    for (;;) {
        ssize_t r;
        char *tmp;

        /* exact-size copy so out-of-bounds reads are caught */
        tmp = malloc(have ? have : 1);
        memcpy(tmp, buf, have);
        while ((r = resp_parse(&p, tmp, have, &DEF)) == RESP_NEED_ARGV) {
            cap = cap ? cap * 2 : 1;
            av = realloc(av, cap * sizeof *av);
            p.argv = av;
            p.argv_cap = cap;
        }
        memcpy(buf, tmp, have);
        free(tmp);
        if (r == RESP_INCOMPLETE) {
            size_t next = ci < ncuts ? cuts[ci++] : n;
            if (got == n) {
                cr_assert_eq(have, 0, "%s: leftover bytes", ctx);
                break;
            }
            if (next > n)
                next = n;
            if (next <= got)
                continue;
            memcpy(buf + have, stream + got, next - got);
            have += next - got;
            got = next;
            continue;
        }
        cr_assert(si < nsteps, "%s: extra request", ctx);
        cr_assert_eq(r, steps[si].want, "%s: request %zu got %zd", ctx, si, r);
        if (r == RESP_ERROR)
            break;
        cr_assert_eq(p.argc, steps[si].argc, "%s: request %zu argc", ctx, si);
        for (size_t i = 0; i < p.argc; i++) {
            cr_assert_eq(av[i].len, steps[si].av[i].n, "%s: req %zu arg %zu", ctx, si, i);
            cr_assert(memcmp(buf + av[i].off, steps[si].av[i].s, av[i].len) == 0,
                      "%s: req %zu arg %zu bytes", ctx, si, i);
        }
        memmove(buf, buf + r, have - (size_t)r);
        have -= (size_t)r;
        si++;
    }
    cr_assert_eq(si + (si < nsteps && steps[si].want == RESP_ERROR), nsteps, "%s: %zu of %zu",
                 ctx, si, nsteps);
    free(av);
    free(buf);
}

Test(resp_pipeline, mixed_requests_every_split)
{
    static const char stream[] =
        "*3\r\n$3\r\nSET\r\n$1\r\nk\r\n$3\r\nv\r\n\r\n"
        "*0\r\n"
        "get k\r\n"
        "\r\n"
        "*2\r\n$3\r\nGET\r\n$1\r\nk\r\n"
        "set \"a b\" 'c'\n"
        "*-1\r\n"
        "*1\r\n$4\r\nPING\r\n";
    static const step steps[] = {
        { 29, 3, { S("SET"), S("k"), S("v\r\n") } },
        { 4, 0, { { 0, 0 } } },
        { 7, 2, { S("get"), S("k") } },
        { 2, 0, { { 0, 0 } } },
        { 20, 2, { S("GET"), S("k") } },
        { 14, 3, { S("set"), S("a b"), S("c") } },
        { 5, 0, { { 0, 0 } } },
        { 14, 1, { S("PING") } },
    };
    size_t n = sizeof stream - 1;
    char ctx[64];

    /* everything at once */
    run_pipeline(stream, n, steps, 8, NULL, 0, 8, "one read");
    /* byte by byte, with tiny argv */
    {
        size_t *cuts = malloc(n * sizeof *cuts);
        for (size_t i = 0; i < n; i++)
            cuts[i] = i + 1;
        run_pipeline(stream, n, steps, 8, cuts, n, 1, "bytewise");
        free(cuts);
    }
    /* two reads split at every point, and three reads at every pair */
    for (size_t i = 0; i <= n; i++) {
        size_t cuts[1] = { i };
        snprintf(ctx, sizeof ctx, "split %zu", i);
        run_pipeline(stream, n, steps, 8, cuts, 1, 0, ctx);
        for (size_t j = i; j <= n; j += 3) {
            size_t cuts2[2] = { i, j };
            snprintf(ctx, sizeof ctx, "split %zu,%zu", i, j);
            run_pipeline(stream, n, steps, 8, cuts2, 2, 1, ctx);
        }
    }
}

Test(resp_pipeline, error_after_good_requests)
{
    static const char stream[] = "ping\r\n*1\r\n$1\r\na\r\n*1\r\n$-5\r\n*1\r\n$1\r\nb\r\n";
    static const step steps[] = {
        { 6, 1, { S("ping") } },
        { 11, 1, { S("a") } },
        { RESP_ERROR, 0, { { 0, 0 } } },
    };
    size_t n = sizeof stream - 1;
    char ctx[64];
    for (size_t i = 0; i <= n; i++) {
        size_t cuts[1] = { i };
        snprintf(ctx, sizeof ctx, "split %zu", i);
        run_pipeline(stream, n, steps, 3, cuts, 1, 1, ctx);
    }
}

/* ---- payloads taken out of band (resp_parse_take_bulk, as io/aside.c) ---- */

/* resp_parse with default limits on an exact-size heap copy of buf[0..len)
 * (ASan catches reads past len); multibulk parsing leaves the bytes alone. */
static ssize_t parse_exact(resp_parser *p, const char *buf, size_t len)
{
    char *tmp = malloc(len ? len : 1);
    ssize_t r;

    memcpy(tmp, buf, len);
    r = resp_parse(p, tmp, len, &DEF);
    cr_assert(memcmp(tmp, buf, len) == 0, "multibulk parsing wrote to the buffer");
    free(tmp);
    return r;
}

Test(resp_take_bulk, last_argument)
{
    static const char head[] = "*3\r\n$3\r\nSET\r\n$1\r\nk\r\n$40\r\n";
    const size_t hl = sizeof head - 1;
    resp_arg av[4];
    resp_parser p;

    resp_parser_init(&p, av, 4);
    cr_assert_eq(parse_exact(&p, head, hl), RESP_INCOMPLETE);
    cr_assert_eq(p.pos, hl);
    cr_assert_eq(resp_parse_bulk_end(&p), hl + 42);
    /* the request's bytes in the buffer are its headers and other arguments */
    cr_assert_eq(resp_parse_take_bulk(&p), (ssize_t)hl);
    cr_assert_eq(p.argc, 3);
    cr_assert(av[0].off == 8 && av[0].len == 3);
    cr_assert(av[1].off == 17 && av[1].len == 1);
    cr_assert_eq(av[2].len, 40);
    cr_assert_null(p.err);

    /* ready for the next request, which starts at the buffer's front */
    cr_assert_eq(resp_parse_bulk_end(&p), 0);
    cr_assert_eq(parse_exact(&p, "*1\r\n$4\r\nPING\r\n", 14), 14);
    cr_assert(p.argc == 1 && av[0].off == 8 && av[0].len == 4);
}

Test(resp_take_bulk, middle_argument)
{
    /* MSET k1 <10 bytes aside> k2 v2: the buffer goes on where the payload
     * began, with the next header; tried with that tail arriving split at
     * every point */
    static const char buf[] = "*5\r\n$4\r\nMSET\r\n$2\r\nk1\r\n$10\r\n"
                              "$2\r\nk2\r\n$2\r\nv2\r\n";
    const size_t hl = 27, n = sizeof buf - 1;

    for (size_t cut = hl; cut <= n; cut++) {
        resp_arg av[8];
        resp_parser p;

        resp_parser_init(&p, av, 8);
        cr_assert_eq(parse_exact(&p, buf, hl), RESP_INCOMPLETE);
        cr_assert_eq(resp_parse_bulk_end(&p), hl + 12);
        cr_assert_eq(resp_parse_take_bulk(&p), 0, "more arguments follow");
        cr_assert_eq(p.argc, 3);
        cr_assert_eq(av[2].len, 10);
        cr_assert_eq(resp_parse_bulk_end(&p), 0, "a header is awaited, not a payload");
        cr_assert_eq(parse_exact(&p, buf, hl), RESP_INCOMPLETE);
        if (cut < n)
            cr_assert_eq(parse_exact(&p, buf, cut), RESP_INCOMPLETE, "cut %zu", cut);
        cr_assert_eq(parse_exact(&p, buf, n), (ssize_t)n, "cut %zu", cut);
        cr_assert_eq(p.argc, 5);
        cr_assert(av[0].off == 8 && av[0].len == 4);
        cr_assert(av[1].off == 18 && av[1].len == 2);
        cr_assert_eq(av[2].len, 10);
        cr_assert(av[3].off == hl + 4 && av[3].len == 2);
        cr_assert(av[4].off == hl + 12 && av[4].len == 2);
        cr_assert(memcmp(buf + av[3].off, "k2", 2) == 0 && memcmp(buf + av[4].off, "v2", 2) == 0);
    }
}

Test(resp_take_bulk, two_payloads)
{
    /* MSET k1 <10 aside> k2 <7 aside>: an ordinary argument between them */
    static const char mset[] = "*5\r\n$4\r\nMSET\r\n$2\r\nk1\r\n$10\r\n$2\r\nk2\r\n$7\r\n";
    /* SET <5 aside> <7 aside>: the second header right after a taken payload */
    static const char set[] = "*3\r\n$3\r\nSET\r\n$5\r\n$7\r\n";
    resp_arg av[8];
    resp_parser p;

    resp_parser_init(&p, av, 8);
    cr_assert_eq(parse_exact(&p, mset, 27), RESP_INCOMPLETE);
    cr_assert_eq(resp_parse_take_bulk(&p), 0);
    cr_assert_eq(parse_exact(&p, mset, sizeof mset - 1), RESP_INCOMPLETE);
    cr_assert_eq(resp_parse_bulk_end(&p), sizeof mset - 1 + 9);
    cr_assert_eq(resp_parse_take_bulk(&p), (ssize_t)sizeof mset - 1);
    cr_assert_eq(p.argc, 5);
    cr_assert(av[0].off == 8 && av[0].len == 4);
    cr_assert(av[1].off == 18 && av[1].len == 2);
    cr_assert_eq(av[2].len, 10);
    cr_assert(av[3].off == 31 && av[3].len == 2);
    cr_assert_eq(av[4].len, 7);

    resp_parser_init(&p, av, 8);
    cr_assert_eq(parse_exact(&p, set, 17), RESP_INCOMPLETE);
    cr_assert_eq(resp_parse_take_bulk(&p), 0);
    cr_assert_eq(parse_exact(&p, set, 19), RESP_INCOMPLETE); /* "$7" without its CR */
    cr_assert_eq(resp_parse_bulk_end(&p), 0);
    cr_assert_eq(parse_exact(&p, set, 21), RESP_INCOMPLETE);
    cr_assert_eq(resp_parse_bulk_end(&p), 21 + 9);
    cr_assert_eq(resp_parse_take_bulk(&p), 21);
    cr_assert_eq(p.argc, 3);
    cr_assert(av[0].off == 8 && av[0].len == 3);
    cr_assert_eq(av[1].len, 5);
    cr_assert_eq(av[2].len, 7);
}

Test(resp_take_bulk, need_argv)
{
    static const char head[] = "*2\r\n$3\r\nGET\r\n$5\r\n";
    const size_t hl = sizeof head - 1;
    resp_arg *av = malloc(sizeof *av);
    resp_parser p;

    /* argv holds exactly the arguments so far: no room for the taken one */
    resp_parser_init(&p, av, 1);
    cr_assert_eq(parse_exact(&p, head, hl), RESP_INCOMPLETE);
    cr_assert_eq(p.argc, 1);
    cr_assert_eq(resp_parse_take_bulk(&p), RESP_NEED_ARGV);
    cr_assert_eq(p.argc, 1);
    cr_assert_eq(resp_parse_bulk_end(&p), hl + 7, "still awaited");
    cr_assert_eq(resp_parse_take_bulk(&p), RESP_NEED_ARGV, "until argv grows");
    av = realloc(av, 2 * sizeof *av);
    p.argv = av;
    p.argv_cap = 2;
    cr_assert_eq(resp_parse_take_bulk(&p), (ssize_t)hl);
    cr_assert_eq(p.argc, 2);
    cr_assert(av[0].off == 8 && av[0].len == 3);
    cr_assert_eq(av[1].len, 5);
    free(av);
}

Test(resp_take_bulk, refused_without_awaited_payload)
{
    static const char get[] = "*2\r\n$3\r\nGET\r\n$1\r\nk\r\n";
    /* MSET k1 <3 bytes aside> k2: the buffer lacks the payload */
    static const char mset[] = "*4\r\n$4\r\nMSET\r\n$2\r\nk1\r\n$3\r\n$2\r\nk2\r\n";
    resp_arg av[4];
    resp_parser p;
    char inl[] = "get k\r\n";
    char bad[] = "*1\r\n$x\r\n";

    /* fresh parser */
    resp_parser_init(&p, av, 4);
    cr_assert_eq(resp_parse_take_bulk(&p), RESP_ERROR);
    cr_assert_null(p.err, "a refusal is no protocol error");

    /* inside the count line, then a header: nothing changes */
    cr_assert_eq(parse_exact(&p, get, 2), RESP_INCOMPLETE);
    cr_assert_eq(resp_parse_take_bulk(&p), RESP_ERROR);
    cr_assert_eq(parse_exact(&p, get, 13), RESP_INCOMPLETE);
    cr_assert_eq(resp_parse_take_bulk(&p), RESP_ERROR);
    cr_assert_eq(parse_exact(&p, get, 15), RESP_INCOMPLETE);
    cr_assert_eq(resp_parse_take_bulk(&p), RESP_ERROR);
    cr_assert_eq(parse_exact(&p, get, sizeof get - 1), (ssize_t)sizeof get - 1);
    cr_assert(p.argc == 2 && av[1].off == 17 && av[1].len == 1);
    /* after a complete request */
    cr_assert_eq(resp_parse_take_bulk(&p), RESP_ERROR);
    cr_assert_null(p.err);

    /* once a payload is taken, the next header is awaited, not a payload:
     * a second take is refused and the request goes on in the buffer */
    resp_parser_init(&p, av, 4);
    cr_assert_eq(parse_exact(&p, mset, 26), RESP_INCOMPLETE);
    cr_assert_eq(resp_parse_bulk_end(&p), 26 + 5);
    cr_assert_eq(resp_parse_take_bulk(&p), 0);
    cr_assert_eq(resp_parse_take_bulk(&p), RESP_ERROR);
    cr_assert_null(p.err);
    cr_assert_eq(p.argc, 3);
    cr_assert_eq(parse_exact(&p, mset, sizeof mset - 1), (ssize_t)sizeof mset - 1);
    cr_assert(p.argc == 4 && av[3].off == 26 + 4 && av[3].len == 2);

    /* inline requests have no payloads */
    resp_parser_init(&p, av, 4);
    cr_assert_eq(resp_parse(&p, inl, 5, &DEF), RESP_INCOMPLETE);
    cr_assert_eq(resp_parse_take_bulk(&p), RESP_ERROR);
    cr_assert_eq(resp_parse(&p, inl, 7, &DEF), 7);
    cr_assert_eq(p.argc, 2);

    /* after a protocol error, which stays */
    resp_parser_init(&p, av, 4);
    cr_assert_eq(resp_parse(&p, bad, sizeof bad - 1, &DEF), RESP_ERROR);
    cr_assert_eq(resp_parse_take_bulk(&p), RESP_ERROR);
    cr_assert_str_eq(p.err, E_BULK_LEN);
}

Test(resp_take_bulk, part_of_payload_in_buffer)
{
    /* Some of the payload arrived with the headers (from none of it to all
     * of it and one trailer byte); as io/aside.c does, that part moves out
     * with the rest and the buffer is cut at p.pos. */
    static const char set[] = "*3\r\n$3\r\nSET\r\n$1\r\nk\r\n$10\r\n0123456789\r\n";
    static const char mset[] = "*5\r\n$4\r\nMSET\r\n$2\r\nk1\r\n$10\r\n0123456789\r\n"
                               "$2\r\nk2\r\n$2\r\nv2\r\n";
    static const char tail[] = "$2\r\nk2\r\n$2\r\nv2\r\n";
    const size_t shl = 25, mhl = 27; /* where the payloads begin */
    resp_arg av[8];
    resp_parser p;

    for (size_t part = 0; part <= 11; part++) {
        char buf[64];

        /* last argument: the whole request in the buffer is its headers */
        resp_parser_init(&p, av, 8);
        cr_assert_eq(parse_exact(&p, set, shl + part), RESP_INCOMPLETE, "part %zu", part);
        cr_assert_eq(p.pos, shl);
        cr_assert_eq(resp_parse_take_bulk(&p), (ssize_t)shl, "part %zu", part);
        cr_assert_eq(p.argc, 3);
        cr_assert(av[0].off == 8 && av[0].len == 3);
        cr_assert(av[1].off == 17 && av[1].len == 1);
        cr_assert_eq(av[2].len, 10);

        /* in the middle: the rest of the request follows the cut */
        resp_parser_init(&p, av, 8);
        cr_assert_eq(parse_exact(&p, mset, mhl + part), RESP_INCOMPLETE, "part %zu", part);
        cr_assert_eq(p.pos, mhl);
        cr_assert_eq(resp_parse_take_bulk(&p), 0, "part %zu", part);
        memcpy(buf, mset, mhl);
        memcpy(buf + mhl, tail, sizeof tail - 1);
        cr_assert_eq(parse_exact(&p, buf, mhl + sizeof tail - 1), (ssize_t)(mhl + sizeof tail - 1));
        cr_assert_eq(p.argc, 5);
        cr_assert(av[1].off == 18 && av[1].len == 2);
        cr_assert_eq(av[2].len, 10);
        cr_assert(av[3].off == mhl + 4 && av[3].len == 2);
        cr_assert(av[4].off == mhl + 12 && av[4].len == 2);
        cr_assert(memcmp(buf + av[4].off, "v2", 2) == 0);
    }

    /* an empty payload whose 2 trailer bytes have not all arrived */
    resp_parser_init(&p, av, 8);
    cr_assert_eq(parse_exact(&p, "*2\r\n$3\r\nGET\r\n$0\r\n\r", 18), RESP_INCOMPLETE);
    cr_assert_eq(resp_parse_bulk_end(&p), 19);
    cr_assert_eq(resp_parse_take_bulk(&p), 17);
    cr_assert(p.argc == 2 && av[1].len == 0);
}
