/* fuzz_lzf.c - libFuzzer target for src/base/lzf.c.
 *
 * Why: lzf_decompress reads untrusted bytes (RDB files, RESTORE payloads)
 * and writes into a caller buffer, so a missed bounds check is a heap
 * overflow; lzf_compress writes up to a caller-given out_cap, and a wrong
 * slack check there is one too. Every buffer below is an exact-size heap
 * block so ASan flags any access outside it. Checks:
 *  - the input as a compressed stream: decompressing never exceeds out_cap;
 *    a stream that decodes must decode the same into an exact-size buffer,
 *    fail with one byte less, and its output must survive compress ->
 *    decompress unchanged;
 *  - the input as raw data: compress (with room to spare) -> decompress
 *    gives it back; compressing again gives the same bytes (the output
 *    depends on the input only); with a tighter out_cap taken from byte 0
 *    the result is 0 or exactly the same stream.
 *
 * Build: make build/fuzz/fuzz_lzf
 * Run:   build/fuzz/fuzz_lzf -max_total_time=30 DIR (a scratch copy of
 *        fuzz/corpus/lzf)
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lzf.h"

#include "fuzz_check.h"

#define MAX_OUT (1 << 17) /* decompression limit for arbitrary streams */

static uint8_t *xmalloc(size_t n) {
    uint8_t *p = malloc(n ? n : 1);
    CHECK(p != NULL);
    return p;
}

static uint8_t *dup_exact(const uint8_t *p, size_t n) {
    uint8_t *q = xmalloc(n);
    if (n) memcpy(q, p, n);
    return q;
}

/* never fails for any input: one header byte per 32 literals + slack */
static size_t bound(size_t n) {
    return n + n / 32 + 4;
}

/* Decompresses in[0, len) into a fresh exact-size buffer of cap bytes. */
static size_t decompress_into(const uint8_t *in, size_t len, size_t cap, uint8_t **out) {
    *out = xmalloc(cap);
    size_t r = lzf_decompress(in, len, *out, cap);
    CHECK(r <= cap);
    return r;
}

/* Compresses in[0, n) into a fresh exact-size buffer of cap bytes. */
static size_t compress_into(const uint8_t *in, size_t n, size_t cap, uint8_t **out) {
    *out = xmalloc(cap);
    size_t r = lzf_compress(in, n, *out, cap);
    CHECK(r <= cap);
    return r;
}

/* in[0, n) must compress (with room) and decompress back to itself;
 * returns the compressed stream, its length in *cn. */
static uint8_t *check_round_trip(const uint8_t *in, size_t n, size_t *cn) {
    uint8_t *c, *back, *again;
    *cn = compress_into(in, n, bound(n), &c);
    CHECK(*cn > 0);
    CHECK(decompress_into(c, *cn, n, &back) == n);
    CHECK(memcmp(back, in, n) == 0);
    free(back);
    CHECK(decompress_into(c, *cn, n - 1, &back) == 0);
    free(back);
    CHECK(compress_into(in, n, bound(n), &again) == *cn);
    CHECK(memcmp(again, c, *cn) == 0);
    free(again);
    return c;
}

static void as_stream(const uint8_t *data, size_t size) {
    uint8_t *out, *exact, *c;
    size_t r = decompress_into(data, size, MAX_OUT, &out);
    if (r == 0) {
        free(out);
        return;
    }
    CHECK(decompress_into(data, size, r, &exact) == r);
    CHECK(memcmp(exact, out, r) == 0);
    free(exact);
    CHECK(decompress_into(data, size, r - 1, &exact) == 0);
    free(exact);
    size_t cn;
    c = check_round_trip(out, r, &cn);
    free(c);
    free(out);
}

static void as_raw(const uint8_t *data, size_t size) {
    uint8_t *c, *tight;
    size_t cn;
    c = check_round_trip(data, size, &cn);
    size_t cap = (size_t)data[0] * (cn + 4) / 255;
    size_t r = compress_into(data, size, cap, &tight);
    CHECK(r == 0 || (r == cn && memcmp(tight, c, cn) == 0));
    if (cap >= cn + 4) CHECK(r == cn);
    free(tight);
    free(c);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    if (size == 0) return 0;
    uint8_t *copy = dup_exact(data, size);
    as_stream(copy, size);
    as_raw(copy, size);
    free(copy);
    return 0;
}
