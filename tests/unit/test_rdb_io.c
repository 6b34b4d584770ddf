/* test_rdb_io.c - the RDB primitive encodings (src/persist/rdb_io.c): lengths at
 * every encoding boundary, strings (integer encodings exactly where Redis
 * uses them, LZF where it pays), doubles, and the reader's guarantees on
 * truncated and hostile input (sticky first error with its offset, counts
 * bounded by the bytes present). */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "rdb_io.h"
#include "zmalloc.h"

static void roundtrip_len(uint64_t v, size_t want_bytes) {
    rdbw w;
    rdbw_init(&w, 0);
    rdbw_len(&w, v);
    cr_assert_eq(w.len, want_bytes, "length %llu took %zu bytes", (unsigned long long)v, w.len);
    rdbr r;
    rdbr_init(&r, w.buf, w.len);
    cr_assert_eq(rdbr_len(&r), v);
    cr_assert(rdbr_ok(&r));
    cr_assert_eq(rdbr_left(&r), 0);
    rdbw_free(&w);
}

Test(rdb_io, lengths_at_every_boundary) {
    roundtrip_len(0, 1);
    roundtrip_len(63, 1);
    roundtrip_len(64, 2);
    roundtrip_len(16383, 2);
    roundtrip_len(16384, 5);
    roundtrip_len(UINT32_MAX, 5);
    roundtrip_len((uint64_t)UINT32_MAX + 1, 9);
    roundtrip_len(UINT64_MAX, 9);
}

/* The bytes rdbw_string writes for s. */
static size_t encode(const char *s, size_t n, int compress, unsigned char *out, size_t cap) {
    rdbw w;
    rdbw_init(&w, compress);
    rdbw_string(&w, s, n);
    size_t len = w.len < cap ? w.len : cap;
    memcpy(out, w.buf, len);
    rdbw_free(&w);
    return len;
}

Test(rdb_io, integer_encodings_exactly_where_redis_uses_them) {
    struct { const char *s; unsigned first; size_t len; } cases[] = {
        {"0", 0xC0, 2},           {"-128", 0xC0, 2},       {"127", 0xC0, 2},     {"128", 0xC1, 3},
        {"-32768", 0xC1, 3},      {"32768", 0xC2, 5},      {"2147483647", 0xC2, 5},
        {"-2147483648", 0xC2, 5}, {"2147483648", 10, 11},  /* past int32: plain */
        {"007", 3, 4},            {"-0", 2, 3},            {"+1", 2, 3},         {"1 ", 2, 3},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        unsigned char b[32];
        size_t n = encode(cases[i].s, strlen(cases[i].s), 1, b, sizeof b);
        cr_assert_eq(n, cases[i].len, "'%s': %zu bytes", cases[i].s, n);
        cr_assert_eq(b[0], cases[i].first, "'%s': first byte %#x", cases[i].s, b[0]);
        rdbr r;
        rdb_str s;
        rdbr_init(&r, b, n);
        cr_assert(rdbr_string(&r, &s));
        cr_assert_eq(s.len, strlen(cases[i].s));
        cr_assert(memcmp(s.p, cases[i].s, s.len) == 0);
        rdb_str_free(&s);
    }
}

Test(rdb_io, lzf_only_when_enabled_longer_than_20_and_smaller) {
    char rep[200], rnd[200];
    memset(rep, 'a', sizeof rep);
    for (size_t i = 0; i < sizeof rnd; i++) rnd[i] = (char)(i * 131 + 7 * (i >> 3));
    unsigned char b[512];
    cr_assert_eq(encode(rep, 20, 1, b, sizeof b), 21, "20 bytes stay plain");
    size_t n = encode(rep, sizeof rep, 1, b, sizeof b);
    cr_assert_eq(b[0], 0xC3, "long repetitive strings are compressed");
    cr_assert_lt(n, 40);
    cr_assert_eq(encode(rep, sizeof rep, 0, b, sizeof b), 2 + sizeof rep, "rdbcompression no");
    rdbr r;
    rdb_str s;
    n = encode(rep, sizeof rep, 1, b, sizeof b);
    rdbr_init(&r, b, n);
    cr_assert(rdbr_string(&r, &s));
    cr_assert_eq(s.len, sizeof rep);
    cr_assert(memcmp(s.p, rep, s.len) == 0);
    rdb_str_free(&s);
    n = encode(rnd, sizeof rnd, 1, b, sizeof b);
    rdbr_init(&r, b, n);
    cr_assert(rdbr_string(&r, &s));
    cr_assert(memcmp(s.p, rnd, sizeof rnd) == 0);
    rdb_str_free(&s);
}

Test(rdb_io, doubles_binary_and_text) {
    double vals[] = {0, -0.0, 1.5, -2.25e300, INFINITY, -INFINITY};
    for (size_t i = 0; i < sizeof vals / sizeof vals[0]; i++) {
        rdbw w;
        rdbw_init(&w, 0);
        rdbw_double_bin(&w, vals[i]);
        rdbr r;
        rdbr_init(&r, w.buf, w.len);
        double d = rdbr_double_bin(&r);
        cr_assert(memcmp(&d, &vals[i], 8) == 0);
        rdbw_free(&w);
    }
    const unsigned char text[] = {3, '2', '.', '5', 254, 255, 253, 2, 'x', 'y'};
    rdbr r;
    rdbr_init(&r, text, sizeof text);
    cr_assert_eq(rdbr_double_text(&r), 2.5);
    cr_assert(isinf(rdbr_double_text(&r)) && rdbr_ok(&r));
    cr_assert(rdbr_double_text(&r) < 0);
    cr_assert(isnan(rdbr_double_text(&r)));
    rdbr_double_text(&r);
    cr_assert(!rdbr_ok(&r), "\"xy\" is not a double");
}

/* Every proper prefix of a valid stream fails, with the error at or before
 * the cut, and reads past the first error return zeros. */
Test(rdb_io, truncation_fails_cleanly_and_the_first_error_sticks) {
    rdbw w;
    rdbw_init(&w, 1);
    char big[300];
    memset(big, 'q', sizeof big);
    rdbw_len(&w, 70000);
    rdbw_string(&w, "hello", 5);
    rdbw_string(&w, "12345", 5);
    rdbw_string(&w, big, sizeof big);
    rdbw_u64_le(&w, 42);
    for (size_t cut = 0; cut < w.len; cut++) {
        rdbr r;
        rdb_str a, b, c;
        rdbr_init(&r, w.buf, cut);
        rdbr_len(&r);
        rdbr_string(&r, &a);
        rdbr_string(&r, &b);
        rdbr_string(&r, &c);
        uint64_t v = rdbr_u64_le(&r);
        cr_assert(!rdbr_ok(&r), "cut at %zu read fine", cut);
        cr_assert_leq(r.err_pos, cut);
        cr_assert_eq(v, 0);
        rdb_str_free(&a);
        rdb_str_free(&b);
        rdb_str_free(&c);
    }
    rdbw_free(&w);
}

Test(rdb_io, counts_are_bounded_by_the_bytes_present) {
    const unsigned char huge[] = {0x81, 0, 0, 0, 1, 0, 0, 0, 0, 'a'}; /* 2^32 elements, 1 byte */
    rdbr r;
    rdbr_init(&r, huge, sizeof huge);
    cr_assert_eq(rdbr_count(&r, 1), 0);
    cr_assert(!rdbr_ok(&r));
    const unsigned char lzf_claim[] = {0xC3, 2, 0x80, 0x40, 0, 0, 0, 0, 0}; /* 1 GB from 2 bytes */
    rdb_str s;
    rdbr_init(&r, lzf_claim, sizeof lzf_claim);
    cr_assert(!rdbr_string(&r, &s));
    cr_assert_null(s.owned);
}
