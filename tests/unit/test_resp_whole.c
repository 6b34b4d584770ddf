/* test_resp_whole.c - Criterion unit tests for resp_parse_whole(), the fast
 * path the client tries before resp_parse() (src/io/resp_parse.c).
 *
 * Why: the fast path must be invisible. Whenever it accepts a request its
 * result (bytes consumed, argc, every argument span) must be exactly what
 * resp_parse() returns from a fresh parser, and whenever it declines it must
 * leave the parser's state untouched so resp_parse() decides alone. Each
 * input is checked at every prefix length, with argv capacities around the
 * argument count, with default and tiny limits, on an exact-size heap copy
 * (AddressSanitizer catches reads past len), and then against a stream of
 * random near-canonical requests.
 */
#include <criterion/criterion.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "resp_parse.h"

static const resp_limits DEF = { RESP_MAX_BULK_DEF, RESP_MAX_ARGS, RESP_INLINE_MAX };
static const resp_limits TINY = { 5, 2, 16 };

/* Compare the fast path with resp_parse on buf[0..n) for one capacity and
 * limit. Returns the fast path's result. */
static ssize_t compare_one(const char *in, size_t n, size_t cap, const resp_limits *lim, const char *ctx)
{
    char *buf = malloc(n ? n : 1);
    resp_arg *fa = malloc((cap ? cap : 1) * sizeof *fa), *ga = malloc((cap ? cap : 1) * sizeof *ga);
    resp_parser f, g;
    ssize_t rf, rg;

    memcpy(buf, in, n);
    resp_parser_init(&f, fa, cap);
    resp_parser_init(&g, ga, cap);
    f.argc = 4242; /* must survive a refusal */
    rf = resp_parse_whole(&f, buf, n, lim);
    rg = resp_parse(&g, buf, n, lim);
    if (rf == 0) {
        cr_assert(f.kind == 0 && f.pos == 0 && f.declared == 0 && f.bulk_len == -1 && f.err == NULL &&
                      f.argc == 4242,
                  "%s: refusal changed the parser state", ctx);
    } else {
        cr_assert_gt(rf, 0, "%s: fast path returned %zd", ctx, rf);
        cr_assert_eq(rf, rg, "%s: fast %zd, resp_parse %zd", ctx, rf, rg);
        cr_assert_eq(f.argc, g.argc, "%s: argc %zu vs %zu", ctx, f.argc, g.argc);
        for (size_t i = 0; i < f.argc; i++)
            cr_assert(fa[i].off == ga[i].off && fa[i].len == ga[i].len, "%s: arg %zu differs", ctx, i);
        cr_assert(f.kind == 0 && f.pos == 0 && f.declared == 0 && f.bulk_len == -1 && f.err == NULL,
                  "%s: fast path left state behind", ctx);
    }
    free(fa);
    free(ga);
    free(buf);
    return rf;
}

/* Every prefix, capacities 0..4 and 64, both limits. Returns the fast
 * path's result on the whole input with capacity 64 and default limits. */
static ssize_t compare_all(const char *in, size_t n)
{
    static const size_t caps[] = { 0, 1, 2, 3, 4, 64 };
    char ctx[96];
    for (size_t len = 0; len <= n; len++)
        for (size_t c = 0; c < sizeof caps / sizeof caps[0]; c++) {
            snprintf(ctx, sizeof ctx, "len %zu/%zu cap %zu", len, n, caps[c]);
            compare_one(in, len, caps[c], &DEF, ctx);
            compare_one(in, len, caps[c], &TINY, ctx);
        }
    return compare_one(in, n, 64, &DEF, "whole");
}

#define CHECK(lit) compare_all(lit, sizeof(lit) - 1)

Test(resp_whole, canonical_requests_take_the_fast_path)
{
#define WHOLE(lit) cr_assert_eq(CHECK(lit), (ssize_t)(sizeof(lit) - 1), "%s", lit)
    WHOLE("*2\r\n$3\r\nGET\r\n$16\r\nkey:000000012345\r\n");
    WHOLE("*1\r\n$4\r\nPING\r\n");
    WHOLE("*2\r\n$0\r\n\r\n$1\r\nx\r\n");
    WHOLE("*3\r\n$3\r\nSET\r\n$1\r\nk\r\n$10\r\n0123456789\r\n");
    /* the bytes after a CR and after a payload are skipped unchecked, as resp_parse does */
    WHOLE("*1\rX$4\rYPINGzz");
    /* a request followed by the next one: only the first is consumed */
    cr_assert_eq(CHECK("*1\r\n$4\r\nPING\r\n*1\r\n$4\r\nPING\r\n"), 14);
    /* three-digit lengths and two-digit counts go through the loops */
    char big[2048];
    size_t n = (size_t)sprintf(big, "*12\r\n");
    for (int i = 0; i < 11; i++) n += (size_t)sprintf(big + n, "$1\r\n%c\r\n", 'a' + i);
    n += (size_t)sprintf(big + n, "$120\r\n");
    memset(big + n, 'v', 120);
    n += 120;
    memcpy(big + n, "\r\n", 2);
    n += 2;
    cr_assert_eq(compare_all(big, n), (ssize_t)n);
}

Test(resp_whole, non_canonical_forms_are_left_to_resp_parse)
{
    cr_assert_eq(CHECK("*0\r\n"), 0);
    cr_assert_eq(CHECK("*-1\r\n"), 0);
    cr_assert_eq(CHECK("*01\r\n$1\r\na\r\n"), 0);
    cr_assert_eq(CHECK("*100\r\n"), 0);
    cr_assert_eq(CHECK("*1\r\n$01\r\na\r\n"), 0);
    cr_assert_eq(CHECK("*1\r\n$-1\r\n"), 0);
    cr_assert_eq(CHECK("*1\r\n:1\r\na\r\n"), 0);
    cr_assert_eq(CHECK("*1\r\n$1 \r\na\r\n"), 0);
    cr_assert_eq(CHECK("*1\r\n$12345678901\r\n"), 0);
    cr_assert_eq(CHECK("*1 \r\n$1\r\na\r\n"), 0);
    cr_assert_eq(CHECK("PING\r\n"), 0);
    cr_assert_eq(CHECK("*2\r\n$1\r\na\r\n"), 0); /* incomplete */
    cr_assert_eq(CHECK("*1\r\n$6\r\nabc\r\n"), 0);
}

Test(resp_whole, limits_and_capacity_are_respected)
{
    const char req[] = "*3\r\n$3\r\nSET\r\n$1\r\nk\r\n$6\r\nvalue6\r\n";
    size_t n = sizeof req - 1;
    cr_assert_eq(compare_one(req, n, 2, &DEF, "cap 2"), 0, "needs argv growth: resp_parse's call");
    cr_assert_eq(compare_one(req, n, 3, &TINY, "tiny"), 0, "3 args > max_args 2, 6 bytes > max_bulk 5");
    cr_assert_eq(compare_one(req, n, 3, &DEF, "cap 3"), (ssize_t)n);
    cr_assert_eq(compare_one(req, n, 3, NULL, "null limits"), (ssize_t)n);
}

Test(resp_whole, not_used_on_a_partial_request)
{
    const char req[] = "*2\r\n$3\r\nGET\r\n$1\r\nk\r\n";
    resp_arg av[4];
    resp_parser p;
    resp_parser_init(&p, av, 4);
    cr_assert_eq(resp_parse(&p, (char *)req, 10, &DEF), RESP_INCOMPLETE);
    cr_assert_eq(resp_parse_whole(&p, req, sizeof req - 1, &DEF), 0, "a resumed request is resp_parse's");
    cr_assert_eq(resp_parse(&p, (char *)req, sizeof req - 1, &DEF), (ssize_t)(sizeof req - 1));
    p.err = "sticky";
    p.kind = 0;
    cr_assert_eq(resp_parse_whole(&p, req, sizeof req - 1, &DEF), 0, "a sticky error is resp_parse's");
}

/* Random near-canonical requests: mostly valid, with one mutation (digit,
 * sign, CR, '$', truncation) in some. */
Test(resp_whole, random_requests_match_resp_parse)
{
    static const char alphabet[] = "*$\r\n0123456789-+ ax";
    unsigned seed = 12345;
    char buf[512];
    int accepted = 0;
    for (int iter = 0; iter < 4000; iter++) {
        seed = seed * 1103515245u + 12345u;
        int argc = (int)(seed >> 16) % 5 + 1;
        size_t n = (size_t)sprintf(buf, "*%d\r\n", argc);
        for (int i = 0; i < argc; i++) {
            seed = seed * 1103515245u + 12345u;
            size_t l = (seed >> 16) % 3 == 0 ? (seed >> 8) % 120 : (seed >> 8) % 12;
            n += (size_t)sprintf(buf + n, "$%zu\r\n", l);
            memset(buf + n, 'p', l);
            n += l;
            memcpy(buf + n, "\r\n", 2);
            n += 2;
        }
        seed = seed * 1103515245u + 12345u;
        if ((seed >> 16) % 3 == 0) {
            size_t at = (seed >> 4) % n;
            seed = seed * 1103515245u + 12345u;
            buf[at] = alphabet[(seed >> 16) % (sizeof alphabet - 1)];
        }
        char ctx[64];
        for (size_t len = n > 40 ? n - 40 : 0; len <= n; len++) {
            snprintf(ctx, sizeof ctx, "iter %d len %zu", iter, len);
            compare_one(buf, len, 8, &DEF, ctx);
            compare_one(buf, len, 3, &TINY, ctx);
        }
        accepted += compare_one(buf, n, 8, &DEF, "full") > 0;
    }
    cr_assert_gt(accepted, 2000, "the fast path should take most requests (%d)", accepted);
}
