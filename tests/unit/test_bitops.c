/* test_bitops.c - Criterion unit tests for the pure bit helpers of
 * src/commands/cmd_bitops.c (include/cmd_bitops.h): popcount, bit search,
 * bit fields and their overflow rules, BITOP over words. Expected values
 * marked "redis:" were taken from redis-server 7.0.15 (BITFIELD replies).
 */
#include <criterion/criterion.h>

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "cmd_bitops.h"

/* reference implementations, one bit at a time */
static int ref_bit(const unsigned char *p, uint64_t i) { return (p[i >> 3] >> (7 - (i & 7))) & 1; }

static long long ref_popcount(const unsigned char *p, size_t n) {
    long long c = 0;
    for (uint64_t i = 0; i < n * 8; i++) c += ref_bit(p, i);
    return c;
}

static long long ref_pos(const unsigned char *p, size_t n, int bit) {
    for (uint64_t i = 0; i < n * 8; i++)
        if (ref_bit(p, i) == bit) return (long long)i;
    return bit ? -1 : (long long)n * 8;
}

static uint64_t ref_get(const unsigned char *p, uint64_t off, unsigned bits) {
    uint64_t v = 0;
    for (unsigned i = 0; i < bits; i++) v = (v << 1) | (uint64_t)ref_bit(p, off + i);
    return v;
}

Test(bitops, popcount_matches_reference_at_every_length_and_alignment) {
    unsigned char buf[200];
    srand(7);
    for (size_t i = 0; i < sizeof buf; i++) buf[i] = (unsigned char)rand();
    for (size_t start = 0; start < 9; start++)
        for (size_t n = 0; n + start <= sizeof buf; n++)
            cr_assert_eq(bits_popcount(buf + start, n), ref_popcount(buf + start, n), "start %zu n %zu", start, n);
}

Test(bitops, pos_finds_first_bit_or_reports_none) {
    unsigned char buf[80];
    for (int bit = 0; bit <= 1; bit++) {
        for (size_t at = 0; at < sizeof buf * 8; at += 13) {
            memset(buf, bit ? 0x00 : 0xff, sizeof buf);
            buf[at >> 3] ^= (unsigned char)(0x80 >> (at & 7));
            for (size_t n = 1; n <= sizeof buf; n += 7)
                cr_assert_eq(bits_pos(buf, n, bit), ref_pos(buf, n, bit), "bit %d at %zu n %zu", bit, at, n);
        }
        memset(buf, bit ? 0x00 : 0xff, sizeof buf);
        cr_assert_eq(bits_pos(buf, sizeof buf, bit), bit ? -1 : (long long)sizeof buf * 8);
        cr_assert_eq(bits_pos(buf, 0, bit), bit ? -1 : 0);
    }
}

Test(bitops, fields_get_and_set_every_width_and_offset) {
    unsigned char buf[24], want[24];
    srand(11);
    for (unsigned bits = 1; bits <= 64; bits++) {
        for (uint64_t off = 0; off + bits <= 16 * 8; off += 5) {
            for (size_t i = 0; i < sizeof buf; i++) buf[i] = (unsigned char)rand();
            cr_assert_eq(bits_get_u(buf, off, bits), ref_get(buf, off, bits), "u%u at %lu", bits, (unsigned long)off);
            uint64_t v = ((uint64_t)rand() << 40) ^ ((uint64_t)rand() << 20) ^ (uint64_t)rand();
            memcpy(want, buf, sizeof buf);
            for (unsigned i = 0; i < bits; i++) {
                uint64_t b = off + i;
                int x = (int)((v >> (bits - 1 - i)) & 1);
                want[b >> 3] = (unsigned char)((want[b >> 3] & ~(0x80 >> (b & 7))) | (x << (7 - (b & 7))));
            }
            bits_set_u(buf, off, bits, v);
            cr_assert(memcmp(buf, want, sizeof buf) == 0, "set u%u at %lu", bits, (unsigned long)off);
            uint64_t low = bits == 64 ? v : v & (((uint64_t)1 << bits) - 1);
            cr_assert_eq(bits_get_u(buf, off, bits), low);
        }
    }
}

Test(bitops, signed_fields_sign_extend) {
    unsigned char buf[9] = {0x80, 0, 0, 0, 0, 0, 0, 0, 0};
    cr_assert_eq(bits_get_i(buf, 0, 1), -1);
    cr_assert_eq(bits_get_i(buf, 0, 8), -128);
    cr_assert_eq(bits_get_i(buf, 0, 64), INT64_MIN);
    cr_assert_eq(bits_get_i(buf, 1, 8), 0);
    memset(buf, 0xff, sizeof buf);
    cr_assert_eq(bits_get_i(buf, 3, 64), -1);
    cr_assert_eq(bits_get_u(buf, 3, 63), (uint64_t)INT64_MAX);
}

Test(bitops, unsigned_overflow_modes) {
    uint64_t out = 12345;
    cr_assert_eq(bits_overflow_u(250, 5, 8, BITS_WRAP, &out), 0);
    cr_assert_eq(bits_overflow_u(250, 6, 8, BITS_WRAP, &out), 1);
    cr_assert_eq(out, 0);
    cr_assert_eq(bits_overflow_u(250, 6, 8, BITS_SAT, &out), 1);
    cr_assert_eq(out, 255);
    cr_assert_eq(bits_overflow_u(3, -4, 8, BITS_WRAP, &out), -1);
    cr_assert_eq(out, 255);
    cr_assert_eq(bits_overflow_u(3, -4, 8, BITS_SAT, &out), -1);
    cr_assert_eq(out, 0);
    out = 77;
    cr_assert_eq(bits_overflow_u(3, -4, 8, BITS_FAIL, &out), -1);
    cr_assert_eq(out, 77);
    /* redis: BITFIELD k OVERFLOW SAT SET u8 0 -1 stores 255 (the value is read as unsigned) */
    cr_assert_eq(bits_overflow_u((uint64_t)-1, 0, 8, BITS_SAT, &out), 1);
    cr_assert_eq(out, 255);
    cr_assert_eq(bits_overflow_u((uint64_t)INT64_MAX, 0, 63, BITS_SAT, &out), 0);
    cr_assert_eq(bits_overflow_u((uint64_t)INT64_MAX, 1, 63, BITS_WRAP, &out), 1);
    cr_assert_eq(out, 0);
    cr_assert_eq(bits_overflow_u(0, 1, 1, BITS_SAT, &out), 0);
    cr_assert_eq(bits_overflow_u(1, 1, 1, BITS_SAT, &out), 1);
    cr_assert_eq(out, 1);
}

Test(bitops, signed_overflow_modes) {
    int64_t out = 0;
    cr_assert_eq(bits_overflow_i(127, 0, 8, BITS_SAT, &out), 0);
    cr_assert_eq(bits_overflow_i(127, 1, 8, BITS_WRAP, &out), 1);
    cr_assert_eq(out, -128);
    cr_assert_eq(bits_overflow_i(-128, -1, 8, BITS_WRAP, &out), -1);
    cr_assert_eq(out, 127);
    cr_assert_eq(bits_overflow_i(-128, -1, 8, BITS_SAT, &out), -1);
    cr_assert_eq(out, -128);
    cr_assert_eq(bits_overflow_i(200, 0, 8, BITS_WRAP, &out), 1);
    cr_assert_eq(out, -56);
    cr_assert_eq(bits_overflow_i(INT64_MAX, 1, 64, BITS_WRAP, &out), 1);
    cr_assert_eq(out, INT64_MIN);
    cr_assert_eq(bits_overflow_i(INT64_MIN, -1, 64, BITS_SAT, &out), -1);
    cr_assert_eq(out, INT64_MIN);
    cr_assert_eq(bits_overflow_i(INT64_MIN, INT64_MAX, 64, BITS_SAT, &out), 0);
    cr_assert_eq(bits_overflow_i(0, 0, 1, BITS_SAT, &out), 0);
    cr_assert_eq(bits_overflow_i(0, 1, 1, BITS_SAT, &out), 1);
    cr_assert_eq(out, 0);
    cr_assert_eq(bits_overflow_i(-1, -1, 1, BITS_WRAP, &out), -1);
    cr_assert_eq(out, 0);
    /* redis: BITFIELD k OVERFLOW SAT SET i63 0 -4611686018427387905 replies the
     * maximum on the next GET (Redis's range arithmetic wraps) */
    cr_assert_eq(bits_overflow_i(-4611686018427387905LL, 0, 63, BITS_SAT, &out), 1);
    cr_assert_eq(out, 4611686018427387903LL);
}

Test(bitops, op_over_words_matches_bytes) {
    unsigned char a[70], b[23], c[41], dst[70];
    srand(3);
    for (size_t i = 0; i < sizeof a; i++) a[i] = (unsigned char)rand();
    for (size_t i = 0; i < sizeof b; i++) b[i] = (unsigned char)rand();
    for (size_t i = 0; i < sizeof c; i++) c[i] = (unsigned char)rand();
    const unsigned char *src[3] = {a, b, c};
    size_t len[3] = {sizeof a, sizeof b, sizeof c};
    for (int op = BITS_AND; op <= BITS_XOR; op++) {
        bits_op(op, dst, sizeof a, src, len, 3);
        for (size_t j = 0; j < sizeof a; j++) {
            unsigned char x = a[j], y = j < sizeof b ? b[j] : 0, z = j < sizeof c ? c[j] : 0;
            unsigned char w = op == BITS_AND ? (x & y & z) : op == BITS_OR ? (x | y | z) : (x ^ y ^ z);
            cr_assert_eq(dst[j], w, "op %d byte %zu", op, j);
        }
    }
    bits_op(BITS_NOT, dst, sizeof b, src + 1, len + 1, 1);
    for (size_t j = 0; j < sizeof b; j++) cr_assert_eq(dst[j], (unsigned char)~b[j]);
}
