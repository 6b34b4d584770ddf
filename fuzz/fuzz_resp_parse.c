/* fuzz_resp_parse.c - libFuzzer target for src/io/resp_parse.c.
 *
 * Why: the request parser reads untrusted bytes that arrive split at
 * arbitrary points. This target feeds the input as a stream of requests in
 * chunks whose sizes come from the input itself, the way a caller would:
 * argv starts with 0 slots and grows on RESP_NEED_ARGV, consumed requests are
 * dropped from the front of the buffer. It checks that every span lies inside
 * the consumed request, that multibulk parsing never writes to the buffer,
 * and that the chunked result equals a one-shot parse of the same bytes
 * (except "too big" errors, which depend on chunking in Redis too), and
 * that the whole-request fast path agrees with the general parser. Each call
 * gets an exact-size heap copy so ASan flags any read past len.
 *
 * Input layout: byte 0 selects the limits (bits 0-1) and the
 * unauthenticated limits (bit 2), bytes 1-2 seed the chunk sizes,
 * the rest is the stream.
 *
 * Build: clang -g -O1 -fsanitize=fuzzer,address,undefined -Iinclude \
 *          fuzz/fuzz_resp_parse.c src/io/resp_parse.c -o fuzz_resp_parse
 * Run:   ./fuzz_resp_parse -max_total_time=20 fuzz/corpus/resp_parse
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "resp_parse.h"

#include "fuzz_check.h"

typedef struct {
    resp_parser p;
    resp_arg *argv;
    size_t cap;
} pstate;

static uint32_t rng_next(uint32_t *s)
{
    uint32_t x = *s;
    x ^= x << 13;
    x ^= x >> 17;
    x ^= x << 5;
    return *s = x;
}

static int is_too_big(const char *err)
{
    return strstr(err, "too big") != NULL;
}

/* Parse work[0..k) through an exact-size copy; grow argv as a caller would. */
static ssize_t call(pstate *ps, char *work, size_t k, const resp_limits *lim)
{
    char *tmp = malloc(k ? k : 1);
    int mbulk = k > 0 && work[0] == '*';
    ssize_t r;

    memcpy(tmp, work, k);
    for (;;) {
        r = resp_parse(&ps->p, tmp, k, lim);
        if (r != RESP_NEED_ARGV)
            break;
        CHECK(ps->p.argc == ps->p.argv_cap);
        ps->cap = ps->cap ? ps->cap * 2 : 1;
        /* storage follows bytes received, never a declared count */
        CHECK(ps->cap <= k + 2);
        ps->argv = realloc(ps->argv, ps->cap * sizeof *ps->argv);
        CHECK(ps->argv != NULL);
        ps->p.argv = ps->argv;
        ps->p.argv_cap = ps->cap;
    }
    if (r > 0) {
        CHECK((size_t)r <= k);
        CHECK(ps->p.argc <= ps->p.argv_cap);
        for (size_t i = 0; i < ps->p.argc; i++) {
            CHECK(ps->argv[i].off <= (size_t)r);
            CHECK(ps->argv[i].len <= (size_t)r - ps->argv[i].off);
        }
    } else if (r == RESP_ERROR) {
        CHECK(ps->p.err != NULL);
        CHECK(resp_parse(&ps->p, tmp, k, lim) == RESP_ERROR); /* sticky */
    } else {
        CHECK(r == RESP_INCOMPLETE);
    }
    if (mbulk)
        CHECK(memcmp(tmp, work, k) == 0);
    memcpy(work, tmp, k);
    free(tmp);
    return r;
}

/* The whole-request fast path (resp_parse_whole) either declines, leaving
 * the parser untouched, or returns exactly what resp_parse returns. buf is
 * not modified (the fast path accepts multibulk requests only). */
static void check_whole(char *buf, size_t k, const resp_limits *lim)
{
    size_t caps[2] = { 4, k + 1 };
    for (int c = 0; c < 2; c++) {
        resp_arg *fa = malloc(caps[c] * sizeof *fa), *ga = malloc(caps[c] * sizeof *ga);
        resp_parser f, g;
        resp_parser_init(&f, fa, caps[c]);
        resp_parser_init(&g, ga, caps[c]);
        ssize_t rf = resp_parse_whole(&f, buf, k, lim);
        if (rf == 0) {
            CHECK(f.kind == 0 && f.argc == 0 && f.err == NULL && f.pos == 0);
        } else {
            ssize_t rg = resp_parse(&g, buf, k, lim);
            CHECK(rf == rg && f.argc == g.argc);
            for (size_t i = 0; i < f.argc; i++)
                CHECK(fa[i].off == ga[i].off && fa[i].len == ga[i].len);
        }
        free(fa);
        free(ga);
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static const resp_limits lims[4] = {
        { RESP_MAX_BULK_DEF, RESP_MAX_ARGS, RESP_INLINE_MAX },
        { 8, 4, 16 },
        { 0, 1, 4 },
        { 64, 16, 64 },
    };
    resp_limits lim_copy;
    const resp_limits *lim;
    const char *in;
    char *work;
    size_t n, base = 0;
    uint32_t seed;
    pstate ps = { .argv = NULL, .cap = 0 };

    if (size < 3)
        return 0;
    lim_copy = lims[data[0] & 3];
    lim_copy.unauthenticated = (data[0] >> 2) & 1; /* before AUTH: 10 args, 16 KB bulks */
    lim = &lim_copy;
    seed = ((uint32_t)data[1] | (uint32_t)data[2] << 8) * 2654435761u | 1u;
    in = (const char *)data + 3;
    n = size - 3;
    work = malloc(n ? n : 1);
    resp_parser_init(&ps.p, NULL, 0);

    while (base < n) {
        size_t rem = n - base, have = 0;
        char *ref = malloc(rem);
        resp_arg *rargv = malloc((rem + 1) * sizeof *rargv);
        resp_parser rp;
        ssize_t want, got;

        /* reference: the whole remainder in one call, ample argv */
        memcpy(ref, in + base, rem);
        check_whole(ref, rem, lim);
        resp_parser_init(&rp, rargv, rem + 1);
        want = resp_parse(&rp, ref, rem, lim);
        CHECK(want != RESP_NEED_ARGV);

        /* chunked: the same bytes arriving in pieces */
        memcpy(work, in + base, rem);
        for (;;) {
            uint32_t x = rng_next(&seed);
            size_t step = (x & 3) == 0 ? (x >> 8) % 64 : 1 + (x >> 8) % 8;
            if ((x & 0xff) == 0xff)
                step = rem;
            have = have + step < rem ? have + step : rem;
            got = call(&ps, work, have, lim);
            if (got != RESP_INCOMPLETE || have == rem)
                break;
        }

        if (got == RESP_ERROR && is_too_big(ps.p.err) && have < rem) {
            /* chunk-dependent, as in Redis: fine whatever one read gives */
        } else {
            CHECK(got == want);
            if (got > 0) {
                CHECK(ps.p.argc == rp.argc);
                for (size_t i = 0; i < rp.argc; i++) {
                    CHECK(ps.argv[i].off == rargv[i].off);
                    CHECK(ps.argv[i].len == rargv[i].len);
                    CHECK(memcmp(work + ps.argv[i].off, ref + rargv[i].off, rargv[i].len) == 0);
                }
            } else if (got == RESP_ERROR) {
                CHECK(strcmp(ps.p.err, rp.err) == 0);
            }
        }
        free(ref);
        free(rargv);
        if (got <= 0)
            break;
        base += (size_t)got;
    }

    resp_parser_reset(&ps.p);
    CHECK(ps.p.err == NULL);
    free(work);
    free(ps.argv);
    return 0;
}
