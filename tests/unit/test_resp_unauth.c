/* test_resp_unauth.c - Criterion unit tests for the parser's limits before
 * AUTH (resp_limits.unauthenticated, src/io/resp_parse.c).
 *
 * Why: Redis 7.0 refuses a multibulk count over 10 and a bulk length over
 * 16384 from a client that still has to authenticate, so that an
 * unauthenticated peer cannot make the server hold large requests. The
 * check must fire exactly at those bounds, only after the ordinary checks
 * (an invalid count is still "invalid multibulk length"), whatever way the
 * bytes are split, and the whole-request fast path must decline rather than
 * accept what the general parser refuses.
 */
#include <criterion/criterion.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "resp_parse.h"

static const resp_limits UNAUTH = { RESP_MAX_BULK_DEF, RESP_MAX_ARGS, RESP_INLINE_MAX, 1 };
static const resp_limits AUTHED = { RESP_MAX_BULK_DEF, RESP_MAX_ARGS, RESP_INLINE_MAX, 0 };

/* Parse s fed one byte at a time (argv grown on demand); the first result
 * that is not RESP_INCOMPLETE, with *err set on RESP_ERROR. */
static ssize_t parse_bytewise(const char *s, size_t n, const resp_limits *lim, const char **err)
{
    resp_parser p;
    size_t cap = 1;
    resp_arg *argv = malloc(cap * sizeof *argv);
    char *buf = malloc(n ? n : 1);
    ssize_t r = RESP_INCOMPLETE;

    memcpy(buf, s, n);
    resp_parser_init(&p, argv, cap);
    for (size_t k = 1; k <= n; k++) {
        for (;;) {
            r = resp_parse(&p, buf, k, lim);
            if (r != RESP_NEED_ARGV)
                break;
            cap *= 2;
            argv = realloc(argv, cap * sizeof *argv);
            p.argv = argv;
            p.argv_cap = cap;
        }
        if (r != RESP_INCOMPLETE)
            break;
    }
    *err = r == RESP_ERROR ? p.err : NULL;
    free(argv);
    free(buf);
    return r;
}

static char *mbulk_of(int argc, size_t arglen, size_t *len)
{
    size_t cap = 32 + (size_t)argc * (arglen + 32);
    char *s = malloc(cap), *w = s;
    w += sprintf(w, "*%d\r\n", argc);
    for (int i = 0; i < argc; i++) {
        w += sprintf(w, "$%zu\r\n", arglen);
        memset(w, 'x', arglen);
        w += arglen;
        *w++ = '\r';
        *w++ = '\n';
    }
    *len = (size_t)(w - s);
    return s;
}

Test(resp_unauth, count_bound_is_ten)
{
    const char *err;
    size_t n;
    char *ten = mbulk_of(10, 3, &n);
    cr_assert_eq(parse_bytewise(ten, n, &UNAUTH, &err), (ssize_t)n);
    free(ten);
    char *eleven = mbulk_of(11, 3, &n);
    cr_assert_eq(parse_bytewise(eleven, n, &UNAUTH, &err), RESP_ERROR);
    cr_assert_str_eq(err, "Protocol error: unauthenticated multibulk length");
    cr_assert_eq(parse_bytewise(eleven, n, &AUTHED, &err), (ssize_t)n);
    free(eleven);
}

Test(resp_unauth, refused_on_the_header_alone)
{
    const char *err;
    cr_assert_eq(parse_bytewise("*11\r\n", 5, &UNAUTH, &err), RESP_ERROR);
    cr_assert_str_eq(err, "Protocol error: unauthenticated multibulk length");
    cr_assert_eq(parse_bytewise("*1\r\n$16385\r\n", 12, &UNAUTH, &err), RESP_ERROR);
    cr_assert_str_eq(err, "Protocol error: unauthenticated bulk length");
    cr_assert_eq(parse_bytewise("*1\r\n$16384\r\n", 12, &UNAUTH, &err), RESP_INCOMPLETE);
}

Test(resp_unauth, bulk_bound_is_16384)
{
    const char *err;
    size_t n;
    char *ok = mbulk_of(2, 16384, &n);
    cr_assert_eq(parse_bytewise(ok, n, &UNAUTH, &err), (ssize_t)n);
    free(ok);
    char *big = mbulk_of(2, 16385, &n);
    cr_assert_eq(parse_bytewise(big, n, &UNAUTH, &err), RESP_ERROR);
    cr_assert_str_eq(err, "Protocol error: unauthenticated bulk length");
    cr_assert_eq(parse_bytewise(big, n, &AUTHED, &err), (ssize_t)n);
    free(big);
}

/* The ordinary errors keep precedence, as in Redis. */
Test(resp_unauth, ordinary_errors_first)
{
    const char *err;
    cr_assert_eq(parse_bytewise("*3000000000\r\n", 13, &UNAUTH, &err), RESP_ERROR);
    cr_assert_str_eq(err, "Protocol error: invalid multibulk length");
    cr_assert_eq(parse_bytewise("*011\r\n", 6, &UNAUTH, &err), RESP_ERROR);
    cr_assert_str_eq(err, "Protocol error: invalid multibulk length");
    cr_assert_eq(parse_bytewise("*1\r\n$-10\r\n", 10, &UNAUTH, &err), RESP_ERROR);
    cr_assert_str_eq(err, "Protocol error: invalid bulk length");
    /* empty and null arrays are fine; inline requests have no such limit */
    cr_assert_eq(parse_bytewise("*-5\r\n", 5, &UNAUTH, &err), 5);
    cr_assert_eq(parse_bytewise("*0\r\n", 4, &UNAUTH, &err), 4);
    const char *inl = "a b c d e f g h i j k l\r\n";
    cr_assert_eq(parse_bytewise(inl, strlen(inl), &UNAUTH, &err), (ssize_t)strlen(inl));
}

/* The whole-request fast path declines what the limits refuse. */
Test(resp_unauth, fast_path_declines)
{
    size_t n;
    char *eleven = mbulk_of(11, 1, &n);
    resp_arg argv[16];
    resp_parser p;
    resp_parser_init(&p, argv, 16);
    cr_assert_eq(resp_parse_whole(&p, eleven, n, &UNAUTH), 0);
    cr_assert_eq(resp_parse_whole(&p, eleven, n, &AUTHED), (ssize_t)n);
    free(eleven);
    char *big = mbulk_of(1, 16385, &n);
    resp_parser_init(&p, argv, 16);
    cr_assert_eq(resp_parse_whole(&p, big, n, &UNAUTH), 0);
    cr_assert_eq(resp_parse_whole(&p, big, n, &AUTHED), (ssize_t)n);
    free(big);
}
