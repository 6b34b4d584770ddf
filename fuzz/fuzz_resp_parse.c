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
 * The "aside" check (bit 3 of byte 0) plays io/aside.c on the stream's
 * first request: while a payload is awaited and the input holds all of it,
 * the payload may be taken out of band (resp_parse_take_bulk) instead of
 * through the buffer, which then lacks those bytes; the request must still
 * come out as the one-shot parse of the bytes as sent.
 *
 * Input layout: byte 0 selects the limits (bits 0-1), the unauthenticated
 * limits (bit 2) and the aside check in addition to the others (bit 3),
 * bytes 1-2 seed the chunk sizes (and the aside check's choices), the rest
 * is the stream.
 *
 * Build: clang -g -O1 -fsanitize=fuzzer,address,undefined -Iinclude \
 *          fuzz/fuzz_resp_parse.c src/io/resp_parse.c src/base/splitargs.c -o fuzz_resp_parse
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

/* A payload the aside check took out of band: argument idx, its offset in
 * the request's bytes as sent and its length. */
typedef struct {
    size_t idx, in_off, len;
} taken_bulk;

static int is_taken(const taken_bulk *tk, size_t ntk, size_t idx)
{
    for (size_t t = 0; t < ntk; t++)
        if (tk[t].idx == idx)
            return 1;
    return 0;
}

/* After RESP_NEED_ARGV with k bytes in the buffer: double argv, from 0 slots. */
static void grow(pstate *ps, size_t k)
{
    CHECK(ps->p.argc == ps->p.argv_cap);
    ps->cap = ps->cap ? ps->cap * 2 : 1;
    /* storage follows bytes received, never a declared count */
    CHECK(ps->cap <= k + 2);
    ps->argv = realloc(ps->argv, ps->cap * sizeof *ps->argv);
    CHECK(ps->argv != NULL);
    ps->p.argv = ps->argv;
    ps->p.argv_cap = ps->cap;
}

/* A complete request of r bytes: every argument lies inside it, except the
 * ones taken out of band (their offsets address no buffer). */
static void check_spans(const pstate *ps, ssize_t r, const taken_bulk *tk, size_t ntk)
{
    CHECK(ps->p.argc <= ps->p.argv_cap);
    for (size_t i = 0; i < ps->p.argc; i++) {
        if (is_taken(tk, ntk, i))
            continue;
        CHECK(ps->argv[i].off <= (size_t)r);
        CHECK(ps->argv[i].len <= (size_t)r - ps->argv[i].off);
    }
}

/* Parse work[0..k) through an exact-size copy; grow argv as a caller would.
 * tk[0..ntk): arguments taken out of band so far (none outside the aside
 * check). */
static ssize_t call(pstate *ps, char *work, size_t k, const resp_limits *lim,
                    const taken_bulk *tk, size_t ntk)
{
    char *tmp = malloc(k ? k : 1);
    int mbulk = k > 0 && work[0] == '*';
    ssize_t r;

    memcpy(tmp, work, k);
    for (;;) {
        r = resp_parse(&ps->p, tmp, k, lim);
        if (r != RESP_NEED_ARGV)
            break;
        grow(ps, k);
    }
    if (r > 0) {
        CHECK((size_t)r <= k);
        check_spans(ps, r, tk, ntk);
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

/* resp_parse_take_bulk with k bytes left in the buffer (cut at the
 * payload), growing argv on RESP_NEED_ARGV as call does. */
static ssize_t take(pstate *ps, size_t k, const taken_bulk *tk, size_t ntk)
{
    ssize_t r;

    while ((r = resp_parse_take_bulk(&ps->p)) == RESP_NEED_ARGV)
        grow(ps, k);
    CHECK(r >= 0);
    if (r > 0) {
        /* the buffer ends where the payload began: all of it is the request */
        CHECK((size_t)r == k);
        check_spans(ps, r, tk, ntk);
    }
    return r;
}

/* With no payload awaited, taking one is refused and changes nothing (a
 * caller that got it wrong keeps a working parser). */
static void check_take_refused(resp_parser *p)
{
    resp_parser before = *p;

    CHECK(resp_parse_take_bulk(p) == RESP_ERROR);
    CHECK(p->argv == before.argv && p->argv_cap == before.argv_cap);
    CHECK(p->argc == before.argc && p->kind == before.kind);
    CHECK(p->declared == before.declared && p->bulk_len == before.bulk_len);
    CHECK(p->pos == before.pos && p->err == before.err);
}

/* The aside check: the first request of in[0..n), arriving in chunks as in
 * the main loop, but whenever a payload is awaited and the input holds the
 * rest of it and its 2 trailer bytes, it is usually (3 times in 4) taken
 * out of band as io/aside.c does: the buffer is cut at the payload (the part
 * already received leaves it), the payload's input bytes are skipped, and
 * bytes after them are appended where the payload began. The result must be
 * the one-shot parse of in: a taken argument's length and offset in the
 * input are its span there; the others' bytes and offsets (shifted by the
 * payloads taken before them) are the same. */
static void check_aside(const char *in, size_t n, const resp_limits *lim, uint32_t seed)
{
    char *ref = malloc(n ? n : 1), *work = malloc(n ? n : 1);
    resp_arg *rargv = malloc((n + 1) * sizeof *rargv);
    /* every bulk needs at least 6 input bytes: "$0\r?" and 2 trailer bytes */
    size_t tk_cap = n / 6 + 1, ntk = 0;
    taken_bulk *tk = malloc(tk_cap * sizeof *tk);
    size_t have = 0, plen = 0, skip = 0; /* input delivered, buffer length, input skipped */
    pstate ps = { .argv = NULL, .cap = 0 };
    resp_parser rp;
    ssize_t want, got;

    resp_parser_init(&ps.p, NULL, 0);
    check_take_refused(&ps.p);

    /* reference: the whole input in one call, ample argv */
    memcpy(ref, in, n);
    resp_parser_init(&rp, rargv, n + 1);
    want = resp_parse(&rp, ref, n, lim);
    CHECK(want != RESP_NEED_ARGV);

    for (;;) {
        uint32_t x = rng_next(&seed);
        size_t step = (x & 3) == 0 ? (x >> 8) % 64 : 1 + (x >> 8) % 8;
        if ((x & 0xff) == 0xff || step > n - have)
            step = n - have;
        memcpy(work + plen, in + have, step);
        plen += step;
        have += step;
        got = call(&ps, work, plen, lim, tk, ntk);
        if (got == RESP_INCOMPLETE && resp_parse_bulk_end(&ps.p) != 0) {
            size_t end = resp_parse_bulk_end(&ps.p);
            size_t len = end - ps.p.pos - 2;
            /* payloads taken before this one all precede it */
            size_t at = ps.p.pos + skip;
            CHECK(end > plen && at <= have);
            if (len + 2 <= n - at && (rng_next(&seed) & 3) != 0) {
                plen = ps.p.pos;
                have = at + len + 2;
                skip += len + 2;
                CHECK(ntk < tk_cap);
                tk[ntk].idx = ps.p.argc;
                tk[ntk].in_off = at;
                tk[ntk].len = len;
                ntk++;
                got = take(&ps, plen, tk, ntk);
                /* more arguments follow: the buffer holds none of their
                 * bytes yet, which the parser must wait for */
                if (got == 0)
                    got = call(&ps, work, plen, lim, tk, ntk);
            }
        }
        if (resp_parse_bulk_end(&ps.p) == 0)
            check_take_refused(&ps.p);
        if (got != RESP_INCOMPLETE || have == n)
            break;
    }

    if (got == RESP_ERROR && is_too_big(ps.p.err) && have < n) {
        /* chunk-dependent, as in Redis: fine whatever one read gives */
    } else if (got > 0) {
        size_t shift = 0, t = 0;

        /* the buffer's bytes plus the payloads taken are the request */
        CHECK(want > 0 && (size_t)got + skip == (size_t)want);
        CHECK(ps.p.argc == rp.argc);
        for (size_t i = 0; i < rp.argc; i++) {
            if (t < ntk && tk[t].idx == i) {
                CHECK(ps.argv[i].len == tk[t].len);
                CHECK(tk[t].in_off == rargv[i].off && tk[t].len == rargv[i].len);
                shift += tk[t].len + 2;
                t++;
                continue;
            }
            CHECK(ps.argv[i].off + shift == rargv[i].off);
            CHECK(ps.argv[i].len == rargv[i].len);
            CHECK(memcmp(work + ps.argv[i].off, ref + rargv[i].off, rargv[i].len) == 0);
        }
        CHECK(t == ntk);
    } else {
        CHECK(got == want);
        if (got == RESP_ERROR)
            CHECK(strcmp(ps.p.err, rp.err) == 0);
    }
    free(ref);
    free(work);
    free(rargv);
    free(tk);
    free(ps.argv);
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
    if (data[0] & 8)
        check_aside(in, n, lim, seed); /* by value: the main loop's chunks stay as they were */

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
            got = call(&ps, work, have, lim, NULL, 0);
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
