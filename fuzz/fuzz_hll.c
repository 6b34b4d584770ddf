/* fuzz_hll.c - libFuzzer target for the HyperLogLog representation
 * (src/keyspace/hll.c).
 *
 * Why: an HLL is a string any client can write (SET, SETRANGE, RESTORE),
 * and PFADD / PFCOUNT / PFMERGE / PFDEBUG walk its sparse opcodes and edit
 * them in place, so the validator, the counter, the merge, the conversion
 * and the sparse editor all see arbitrary bytes. Every buffer is an
 * exact-size heap block so ASan flags any access outside it. Checks:
 *  - validate, count (invalid flag), merge and sparse->dense agree on
 *    whether the value is damaged;
 *  - a valid sparse value and its dense conversion hold the same registers
 *    (merge) and give the same estimate;
 *  - sparse edits (registers and counts taken from the input) stay inside
 *    the buffer; on a valid value (not ending in a cut-off XZERO, which
 *    Redis's editor mangles and so does ours) an edit keeps it valid, sets exactly that
 *    register to max(old, count), never grows it past max_bytes, and
 *    PROMOTE changes nothing.
 *
 * Input: byte 0 picks the form (bit 0: prepend a sparse header so the
 * opcodes are reached, bit 1: prepend a dense header and pad to the dense
 * size), byte 1 the edit count and max_bytes, the rest is the value.
 *
 * Build: make build/fuzz/fuzz_hll
 * Run:   build/fuzz/fuzz_hll -max_total_time=30 DIR (a scratch copy of
 *        fuzz/corpus/hll)
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hll.h"

#include "fuzz_check.h"

static uint8_t *xmalloc(size_t n) {
    uint8_t *p = malloc(n ? n : 1);
    CHECK(p != NULL);
    return p;
}

static uint8_t max_a[HLL_REGISTERS], max_b[HLL_REGISTERS];

/* The last opcode is an XZERO cut off by the end (its missing byte reads
 * as 0, as Redis reads its terminator): such a value can be valid, but an
 * edit there loses a byte exactly as Redis's does, so it may not stay so. */
static int ends_cut(const uint8_t *v, size_t len) {
    size_t pos = HLL_HDR_SIZE;
    while (pos < len) pos += hll_sparse_op(v + pos, v + len).size;
    return pos > len;
}

/* register i of a valid value, through a fresh merge */
static void registers(const uint8_t *v, size_t len, uint8_t *out) {
    memset(out, 0, HLL_REGISTERS);
    CHECK(hll_merge(out, v, len) == 0);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    if (size < 2) return 0;
    unsigned mode = data[0], knob = data[1];
    data += 2;
    size -= 2;
    size_t len = size;
    if (mode & 2) len = HLL_DENSE_SIZE;
    else if (mode & 1) len = size + HLL_HDR_SIZE;
    if (len > 1 << 16) return 0;
    uint8_t *v = xmalloc(len);
    if (mode & 2) {
        memset(v, 0, len);
        memcpy(v, "HYLL", 4);
        memcpy(v + HLL_HDR_SIZE, data, size < HLL_DENSE_REGS ? size : HLL_DENSE_REGS);
    } else if (mode & 1) {
        memset(v, 0, HLL_HDR_SIZE);
        memcpy(v, "HYLL\x01", 5);
        if (size) memcpy(v + HLL_HDR_SIZE, data, size);
    } else if (size) {
        memcpy(v, data, size);
    }

    int hdr = hll_header_ok(v, len), ok = hll_validate(v, len);
    CHECK(!ok || hdr);
    if (!hdr) goto done;
    int inv = 0;
    uint64_t card = hll_count(v, len, &inv);
    CHECK(inv == !ok);
    memset(max_a, 0, sizeof max_a);
    CHECK((hll_merge(max_a, v, len) == 0) == ok);
    int sparse = hll_encoding(v) == HLL_SPARSE;
    if (sparse) {
        uint8_t *d = xmalloc(HLL_DENSE_SIZE);
        int conv = hll_sparse_to_dense(v, len, d);
        CHECK((conv == 0) == ok);
        if (ok) {
            CHECK(hll_validate(d, HLL_DENSE_SIZE));
            CHECK(hll_count(d, HLL_DENSE_SIZE, NULL) == card);
            registers(d, HLL_DENSE_SIZE, max_b);
            CHECK(memcmp(max_a, max_b, HLL_REGISTERS) == 0);
            CHECK(hll_count_raw(max_a) == card);
        }
        free(d);
        for (const uint8_t *p = v + HLL_HDR_SIZE; p < v + len;) p += hll_sparse_op(p, v + len).size;
    } else if (ok) {
        CHECK(hll_count_raw(max_a) == card);
    }

    /* sparse edits: registers and counts from the input */
    if (sparse) {
        size_t max_bytes = 20 + (size_t)(knob >> 3) * 40;
        unsigned edits = 1 + (knob & 7);
        size_t cur = len;
        uint8_t *w = xmalloc(cur + HLL_SPARSE_SLACK);
        memcpy(w, v, cur);
        int valid = ok && !ends_cut(w, cur);
        for (unsigned e = 0; e < edits; e++) {
            unsigned idx = (unsigned)(hll_murmur64a(&e, sizeof e, len) & (HLL_REGISTERS - 1));
            unsigned cnt = 1 + (unsigned)(hll_murmur64a(&e, sizeof e, knob) % 40);
            if (valid) registers(w, cur, max_a);
            size_t before = cur;
            int r = hll_sparse_set(w, &cur, before + HLL_SPARSE_SLACK, idx, cnt, max_bytes);
            CHECK(r >= HLL_CORRUPT && r <= HLL_PROMOTE);
            CHECK(cur <= before + 4);
            if (valid) {
                CHECK(r != HLL_CORRUPT);
                if (r == HLL_PROMOTE) {
                    CHECK(cur == before);
                    CHECK(cnt > 32 || before + 3 > max_bytes);
                } else {
                    CHECK(hll_validate(w, cur));
                    registers(w, cur, max_b);
                    if (max_a[idx] < cnt) max_a[idx] = (uint8_t)cnt;
                    CHECK(memcmp(max_a, max_b, HLL_REGISTERS) == 0);
                    CHECK(r == HLL_CHANGED || cur == before);
                    CHECK(cur <= before || cur <= max_bytes);
                }
            }
            if (r == HLL_PROMOTE || r == HLL_CORRUPT) break;
            uint8_t *nw = xmalloc(cur + HLL_SPARSE_SLACK); /* exact room for the next edit */
            memcpy(nw, w, cur);
            free(w);
            w = nw;
            valid = valid && hll_validate(w, cur) && !ends_cut(w, cur);
        }
        free(w);
    }
done:
    free(v);
    return 0;
}
