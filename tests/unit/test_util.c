/* test_util.c - Criterion unit tests for src/base/util.c.
 *
 * util.c must behave exactly like Redis 7.0.15 (string2ll, string2ld,
 * string2d, ld2string, addReplyDouble, stringmatchlen). Wherever a test
 * says "redis:", the expected value was taken from a real redis-server
 * 7.0.15: INCRBYFLOAT for long doubles, ZADD/ZSCORE for doubles, KEYS for
 * case-sensitive globs, and CONFIG GET / COMMAND LIST FILTERBY PATTERN for
 * nocase globs. The long double expectations assume x86-64 80-bit long
 * double, as Redis on this platform does.
 */
#include <criterion/criterion.h>

#include <errno.h>
#include <float.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "util.h"

#define S(lit) (lit), (sizeof(lit) - 1)

/* ---------------------------------------------------------------- str_to_ll */

static void ll_ok(const char *s, size_t len, long long want) {
    long long v = 12345;
    cr_assert(str_to_ll(s, len, &v) == 1, "str_to_ll(\"%.*s\") should parse", (int)len, s);
    cr_assert(v == want, "str_to_ll(\"%.*s\") = %lld, want %lld", (int)len, s, v, want);
}

static void ll_bad(const char *s, size_t len) {
    long long v = 12345;
    cr_assert(str_to_ll(s, len, &v) == 0, "str_to_ll(\"%.*s\") should fail", (int)len, s);
    cr_assert(v == 12345, "output must be untouched on failure");
}

Test(str_to_ll, valid) {
    ll_ok(S("0"), 0);
    ll_ok(S("1"), 1);
    ll_ok(S("-1"), -1);
    ll_ok(S("9"), 9);
    ll_ok(S("10"), 10);
    ll_ok(S("1234567890"), 1234567890LL);
    ll_ok(S("-1234567890"), -1234567890LL);
    ll_ok(S("9223372036854775807"), LLONG_MAX);
    ll_ok(S("9223372036854775806"), LLONG_MAX - 1);
    ll_ok(S("-9223372036854775808"), LLONG_MIN);
    ll_ok(S("-9223372036854775807"), LLONG_MIN + 1);
    ll_ok(S("1000000000000000000"), 1000000000000000000LL);
    /* Only len bytes are looked at. */
    ll_ok("123", 2, 12);
    ll_ok("0x", 1, 0);
}

Test(str_to_ll, invalid) {
    ll_bad(S(""));
    ll_bad(S("-"));
    ll_bad(S("-0"));
    ll_bad(S("00"));
    ll_bad(S("01"));
    ll_bad(S("-01"));
    ll_bad(S("+1"));
    ll_bad(S("+0"));
    ll_bad(S(" 1"));
    ll_bad(S("1 "));
    ll_bad(S("1a"));
    ll_bad(S("a"));
    ll_bad(S("--1"));
    ll_bad(S("1-"));
    ll_bad(S("0x10"));
    ll_bad(S("1.0"));
    ll_bad(S("1e3"));
    ll_bad(S("\0"));
    ll_bad(S("1\0"));
    ll_bad(S("1\n"));
    /* overflow by one */
    ll_bad(S("9223372036854775808"));
    ll_bad(S("-9223372036854775809"));
    ll_bad(S("10000000000000000000"));
    ll_bad(S("18446744073709551615"));
    ll_bad(S("18446744073709551616"));
    ll_bad(S("99999999999999999999"));
    ll_bad(S("-99999999999999999999"));
    ll_bad(S("-18446744073709551616"));
    ll_bad(S("123456789012345678901"));
    ll_bad(S("00000000000000000001"));
}

Test(str_to_ll, roundtrip) {
    unsigned long long x = 0x9E3779B97F4A7C15ULL;
    char buf[32];
    for (int i = 0; i < 100000; i++) {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        long long v = (long long)(x >> (i % 64));
        if (i & 1) v = -v;
        size_t n = ll_to_str(buf, v);
        long long back;
        cr_assert(str_to_ll(buf, n, &back) == 1 && back == v, "roundtrip %lld", v);
        /* Each extra leading zero makes it invalid. */
        if (v > 0) {
            char z[40];
            z[0] = '0';
            memcpy(z + 1, buf, n);
            cr_assert(str_to_ll(z, n + 1, &back) == 0, "leading zero %s", buf);
        }
    }
}

/* --------------------------------------------------------------- str_to_ull */

static void ull_ok(const char *s, size_t len, unsigned long long want) {
    unsigned long long v = 12345;
    cr_assert(str_to_ull(s, len, &v) == 1, "str_to_ull(\"%.*s\") should parse", (int)len, s);
    cr_assert(v == want, "str_to_ull(\"%.*s\") = %llu, want %llu", (int)len, s, v, want);
}

static void ull_bad(const char *s, size_t len) {
    unsigned long long v = 12345;
    cr_assert(str_to_ull(s, len, &v) == 0, "str_to_ull(\"%.*s\") should fail", (int)len, s);
    cr_assert(v == 12345, "output must be untouched on failure");
}

Test(str_to_ull, valid) {
    ull_ok(S("0"), 0);
    ull_ok(S("1"), 1);
    ull_ok(S("42"), 42);
    ull_ok(S("9223372036854775807"), 9223372036854775807ULL);
    ull_ok(S("9223372036854775808"), 9223372036854775808ULL);
    ull_ok(S("18446744073709551615"), ULLONG_MAX);
    ull_ok(S("18446744073709551614"), ULLONG_MAX - 1);
    ull_ok(S("10000000000000000000"), 10000000000000000000ULL);
    ull_ok("77x", 2, 77);
}

Test(str_to_ull, invalid) {
    ull_bad(S(""));
    ull_bad(S("-"));
    ull_bad(S("-0"));
    ull_bad(S("-1"));
    ull_bad(S("+1"));
    ull_bad(S("01"));
    ull_bad(S("00"));
    ull_bad(S(" 1"));
    ull_bad(S("1 "));
    ull_bad(S("1x"));
    ull_bad(S("\0"));
    ull_bad(S("18446744073709551616"));
    ull_bad(S("18446744073709551620"));
    ull_bad(S("19000000000000000000"));
    ull_bad(S("99999999999999999999"));
    ull_bad(S("100000000000000000000"));
}

/* -------------------------------------------------------- ll_to_str etc. */

static void check_ll_fmt(long long v, const char *want) {
    char buf[32];
    memset(buf, 'X', sizeof(buf));
    size_t n = ll_to_str(buf, v);
    cr_assert(n == strlen(want), "ll_to_str(%lld) length %zu want %zu", v, n, strlen(want));
    cr_assert(memcmp(buf, want, n) == 0 && buf[n] == '\0', "ll_to_str(%lld) = %.*s", v, (int)n, buf);
    for (size_t i = n + 1; i < sizeof(buf); i++)
        cr_assert(buf[i] == 'X', "ll_to_str wrote past length+1");
    char ref[32];
    snprintf(ref, sizeof(ref), "%lld", v);
    cr_assert_str_eq(buf, ref);
}

static void check_ull_fmt(unsigned long long v) {
    char buf[32], ref[32];
    memset(buf, 'X', sizeof(buf));
    size_t n = ull_to_str(buf, v);
    snprintf(ref, sizeof(ref), "%llu", v);
    cr_assert(n == strlen(ref) && strcmp(buf, ref) == 0, "ull_to_str(%llu) = %s", v, buf);
    for (size_t i = n + 1; i < sizeof(buf); i++)
        cr_assert(buf[i] == 'X', "ull_to_str wrote past length+1");
}

Test(ll_to_str, edges) {
    check_ll_fmt(0, "0");
    check_ll_fmt(1, "1");
    check_ll_fmt(-1, "-1");
    check_ll_fmt(9, "9");
    check_ll_fmt(10, "10");
    check_ll_fmt(99, "99");
    check_ll_fmt(100, "100");
    check_ll_fmt(-100, "-100");
    check_ll_fmt(LLONG_MAX, "9223372036854775807");
    check_ll_fmt(LLONG_MIN, "-9223372036854775808");
    check_ll_fmt(LLONG_MIN + 1, "-9223372036854775807");
    /* every power of ten and its neighbours */
    long long p = 1;
    for (int i = 0; i < 19; i++) {
        char want[32];
        long long vals[] = {p - 1, p, p + 1, -(p - 1), -p, -(p + 1)};
        for (size_t j = 0; j < sizeof(vals) / sizeof(vals[0]); j++) {
            snprintf(want, sizeof(want), "%lld", vals[j]);
            check_ll_fmt(vals[j], want);
        }
        if (i < 18) p *= 10;
    }
}

Test(ull_to_str, edges) {
    check_ull_fmt(0);
    check_ull_fmt(1);
    check_ull_fmt(ULLONG_MAX);
    check_ull_fmt(ULLONG_MAX - 1);
    check_ull_fmt((unsigned long long)LLONG_MAX + 1);
    unsigned long long p = 1;
    for (int i = 0; i < 20; i++) {
        check_ull_fmt(p - 1);
        check_ull_fmt(p);
        check_ull_fmt(p + 1);
        if (i < 19) p *= 10;
    }
    unsigned long long x = 88172645463325252ULL;
    for (int i = 0; i < 100000; i++) {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        check_ull_fmt(x >> (i % 64));
    }
}

/* ---------------------------------------------------------------- str_to_ld */

static long double ld_ok(const char *s, size_t len) {
    long double v = 12345;
    cr_assert(str_to_ld(s, len, &v) == 1, "str_to_ld(\"%.*s\") should parse", (int)(len > 60 ? 60 : len), s);
    return v;
}

static void ld_bad(const char *s, size_t len) {
    long double v = 12345;
    cr_assert(str_to_ld(s, len, &v) == 0, "str_to_ld(\"%.*s\") should fail", (int)(len > 60 ? 60 : len), s);
    cr_assert(v == 12345, "output must be untouched on failure");
}

Test(str_to_ld, accepts) {
    /* redis: INCRBYFLOAT accepts all of these */
    cr_assert(ld_ok(S("1")) == 1.0L);
    cr_assert(ld_ok(S("0.1")) == 0.1L);
    cr_assert(ld_ok(S("-1.5")) == -1.5L);
    cr_assert(ld_ok(S("1e5")) == 100000.0L);
    cr_assert(ld_ok(S("+5")) == 5.0L);
    cr_assert(ld_ok(S(".5")) == 0.5L);
    cr_assert(ld_ok(S("5.")) == 5.0L);
    cr_assert(ld_ok(S("0x10")) == 16.0L);
    cr_assert(ld_ok(S("0X1P3")) == 8.0L);
    cr_assert(ld_ok(S("0e99999")) == 0.0L);
    long double z = ld_ok(S("-0"));
    cr_assert(z == 0 && signbit(z));
    /* Infinity parses, and INCRBYFLOAT then says "increment would produce
     * NaN or Infinity". */
    cr_assert(isinf(ld_ok(S("inf"))) && ld_ok(S("inf")) > 0);
    cr_assert(isinf(ld_ok(S("+inf"))));
    cr_assert(isinf(ld_ok(S("-inf"))) && ld_ok(S("-inf")) < 0);
    cr_assert(isinf(ld_ok(S("INF"))));
    cr_assert(isinf(ld_ok(S("infinity"))));
    /* beyond double range but fine as long double */
    cr_assert(ld_ok(S("1e400")) > 1e300L);
    cr_assert(ld_ok(S("1e4932")) > 1e4931L);
    /* denormal long doubles are accepted, despite ERANGE */
    long double d = ld_ok(S("1e-4940"));
    cr_assert(d > 0 && d < LDBL_MIN);
    /* length limit is < 5120 (MAX_LONG_DOUBLE_CHARS) */
    static char big[6000];
    memset(big, '0', sizeof(big));
    big[5118] = '1';
    cr_assert(ld_ok(big, 5119) == 1.0L);
    cr_assert(ld_ok(big, 5118) == 0.0L);
}

Test(str_to_ld, rejects) {
    ld_bad(S(""));
    ld_bad(S(" 1"));
    ld_bad(S("\t1"));
    ld_bad(S("\n1"));
    ld_bad(S("1 "));
    ld_bad(S("1.5\n"));
    ld_bad(S("1_0"));
    ld_bad(S("1e"));
    ld_bad(S("1e+"));
    ld_bad(S("0x"));
    ld_bad(S("."));
    ld_bad(S("-"));
    ld_bad(S("abc"));
    ld_bad(S("nan"));
    ld_bad(S("-nan"));
    ld_bad(S("NaN"));
    ld_bad(S("nan(123)"));
    ld_bad(S("inf "));
    ld_bad(S("infin"));
    ld_bad(S("1\0"));
    ld_bad(S("\0"));
    /* overflow and underflow to zero */
    ld_bad(S("1e4933"));
    ld_bad(S("-1e4933"));
    ld_bad(S("1e-4951"));
    ld_bad(S("1e-5000"));
    ld_bad(S("0x1p-16446"));
    /* length limit */
    static char big[6000];
    memset(big, '0', sizeof(big));
    big[5119] = '1';
    ld_bad(big, 5120);
    memset(big, '0', sizeof(big));
    ld_bad(big, 5120);
    ld_bad(big, 6000);
}

/* ----------------------------------------------------------------- str_to_d */

static double d_ok(const char *s, size_t len) {
    double v = 12345;
    cr_assert(str_to_d(s, len, &v) == 1, "str_to_d(\"%.*s\") should parse", (int)(len > 60 ? 60 : len), s);
    return v;
}

static void d_bad(const char *s, size_t len) {
    double v = 12345;
    cr_assert(str_to_d(s, len, &v) == 0, "str_to_d(\"%.*s\") should fail", (int)(len > 60 ? 60 : len), s);
    cr_assert(v == 12345, "output must be untouched on failure");
}

/* What Redis string2d does, on a NUL-terminated copy. Used as the oracle for
 * long inputs. */
static int ref_string2d(const char *s, size_t len, double *out) {
    char *b = malloc(len + 1);
    cr_assert(b != NULL);
    memcpy(b, s, len);
    b[len] = '\0';
    char *e;
    errno = 0;
    double v = strtod(b, &e);
    int ok = !(len == 0 || (b[0] == ' ' || (b[0] >= '\t' && b[0] <= '\r')) ||
               (size_t)(e - b) != len || (errno == ERANGE && (isinf(v) || v == 0)) || isnan(v));
    free(b);
    if (ok) *out = v;
    return ok;
}

static void d_same_as_ref(const char *s, size_t len) {
    double a = 0, b = 0;
    int ra = str_to_d(s, len, &a);
    int rb = ref_string2d(s, len, &b);
    cr_assert(ra == rb, "str_to_d accept=%d, strtod oracle=%d for \"%.*s...\" (len %zu)", ra, rb,
              (int)(len > 60 ? 60 : len), s, len);
    if (ra)
        cr_assert(memcmp(&a, &b, sizeof(a)) == 0, "str_to_d %.17g vs oracle %.17g for \"%.*s...\"", a, b,
                  (int)(len > 60 ? 60 : len), s);
}

Test(str_to_d, accepts) {
    /* redis: ZADD accepts these */
    cr_assert(d_ok(S("0.1")) == 0.1);
    cr_assert(d_ok(S("1")) == 1.0);
    cr_assert(d_ok(S("-1.5")) == -1.5);
    cr_assert(d_ok(S("+5")) == 5.0);
    cr_assert(d_ok(S(".5")) == 0.5);
    cr_assert(d_ok(S("5.")) == 5.0);
    cr_assert(d_ok(S("0x10")) == 16.0);
    cr_assert(d_ok(S("1e308")) == 1e308);
    cr_assert(d_ok(S("1.7976931348623157e308")) == DBL_MAX);
    cr_assert(d_ok(S("2.2250738585072014e-308")) == DBL_MIN);
    cr_assert(d_ok(S("4.9e-324")) == 4.9406564584124654e-324);
    cr_assert(d_ok(S("1e-320")) > 0); /* denormal: ERANGE but non-zero, accepted */
    double z = d_ok(S("-0"));
    cr_assert(z == 0 && signbit(z));
    cr_assert(isinf(d_ok(S("inf"))) && d_ok(S("inf")) > 0);
    cr_assert(isinf(d_ok(S("+inf"))) && d_ok(S("+inf")) > 0);
    cr_assert(isinf(d_ok(S("-inf"))) && d_ok(S("-inf")) < 0);
    cr_assert(isinf(d_ok(S("INF"))));
    cr_assert(isinf(d_ok(S("Infinity"))));
    cr_assert(d_ok("1.25junk", 4) == 1.25);
}

Test(str_to_d, rejects) {
    d_bad(S(""));
    d_bad(S(" 1"));
    d_bad(S("\t1"));
    d_bad(S("1 "));
    d_bad(S("1x"));
    d_bad(S("1e"));
    d_bad(S("0x"));
    d_bad(S("."));
    d_bad(S("+"));
    d_bad(S("nan"));
    d_bad(S("NAN"));
    d_bad(S("-nan"));
    d_bad(S("nan(0x1)"));
    d_bad(S("1\0"));
    d_bad(S("infx"));
    /* overflow and underflow to zero; redis: "ERR value is not a valid float" */
    d_bad(S("1e309"));
    d_bad(S("-1e309"));
    d_bad(S("1e-400"));
    d_bad(S("1e-324"));
}

/* string2d has no length limit. redis: ZADD z <6000 zeros>1 a; ZSCORE -> 1 */
Test(str_to_d, long_inputs) {
    size_t cap = 20000;
    char *b = malloc(cap);
    cr_assert(b != NULL);

    memset(b, '0', 6000);
    b[6000] = '1';
    cr_assert(d_ok(b, 6001) == 1.0);
    d_same_as_ref(b, 6001);
    d_same_as_ref(b, 6000); /* all zeros: 0 */
    cr_assert(d_ok(b, 6000) == 0.0);

    /* 400 ones is 1.1e399: overflow. redis rejects it. */
    memset(b, '1', 400);
    d_bad(b, 400);
    memset(b, '1', 6000);
    d_bad(b, 6000);
    memcpy(b + 6000, "e-5999", 6);
    d_same_as_ref(b, 6006);
    cr_assert(d_ok(b, 6006) == 1.1111111111111112);

    /* "0." + 5000 zeros + "1" = 1e-5001: underflow, rejected */
    b[0] = '0';
    b[1] = '.';
    memset(b + 2, '0', 5000);
    b[5002] = '1';
    d_bad(b, 5003);
    d_same_as_ref(b, 5003);
    /* a negative long zero */
    b[0] = '-';
    memset(b + 1, '0', 6000);
    b[6001] = '.';
    memset(b + 6002, '0', 100);
    double z = d_ok(b, 6102);
    cr_assert(z == 0 && signbit(z));

    /* long hex floats. redis: 0x<6000 zeros>1p-1074 -> 4.9406564584124654e-324 */
    const char *hexes[] = {"p-1074", "p-24000", ".8p-24000", "p+0", "", ".", "p", "p+", "x"};
    for (size_t i = 0; i < sizeof(hexes) / sizeof(hexes[0]); i++) {
        size_t n = 0;
        b[n++] = '0';
        b[n++] = 'x';
        if (i == 0) {
            memset(b + n, '0', 6000);
            n += 6000;
            b[n++] = '1';
        } else {
            b[n++] = '1';
            memset(b + n, '0', 6000);
            n += 6000;
        }
        memcpy(b + n, hexes[i], strlen(hexes[i]));
        n += strlen(hexes[i]);
        d_same_as_ref(b, n);
    }
    cr_assert(d_ok(S("0x1p-1074")) == 4.9406564584124654e-324);

    /* garbage at the end / in the middle of long strings */
    memset(b, '5', 7000);
    b[6999] = ' ';
    d_same_as_ref(b, 7000);
    b[3000] = 'e';
    d_same_as_ref(b, 7000);
    memset(b, ' ', 7000);
    d_same_as_ref(b, 7000);
    memset(b, '9', 7000);
    b[10] = '.';
    b[20] = '.';
    d_same_as_ref(b, 7000);
    free(b);
}

/* The decimal value 2^-1075 is exactly halfway between 0 and the smallest
 * denormal. The strtod used on long inputs has to keep the sticky digits
 * right: exactly half rounds to even (0, so rejected), and half plus a tiny
 * bit rounds up. redis: ZADD with <2^-1075> fails, and with <2^-1075>000..01
 * gives 4.9406564584124654e-324. */
Test(str_to_d, long_halfway_rounding) {
    /* digits of 5^1075, so that 2^-1075 = 5^1075 e-1075 */
    unsigned char dig[1000];
    size_t nd = 1;
    dig[0] = 1; /* little-endian decimal digits */
    for (int i = 0; i < 1075; i++) {
        unsigned carry = 0;
        for (size_t j = 0; j < nd; j++) {
            unsigned t = dig[j] * 5u + carry;
            dig[j] = (unsigned char)(t % 10);
            carry = t / 10;
        }
        while (carry) {
            dig[nd++] = (unsigned char)(carry % 10);
            carry /= 10;
        }
    }
    cr_assert(nd > 700 && nd < 800);
    size_t cap = nd + 8000;
    char *b = malloc(cap);
    cr_assert(b != NULL);
    size_t n = 0;
    for (size_t j = nd; j-- > 0;) b[n++] = (char)('0' + dig[j]);
    size_t mant = n;
    const char *tails[] = {"", "1", "0", "9"};
    for (size_t t = 0; t < sizeof(tails) / sizeof(tails[0]); t++) {
        for (size_t zeros = 0; zeros <= 6000; zeros += 3000) {
            n = mant;
            memset(b + n, '0', zeros);
            n += zeros;
            memcpy(b + n, tails[t], strlen(tails[t]));
            n += strlen(tails[t]);
            n += (size_t)sprintf(b + n, "e-%zu", (size_t)1075 + zeros + strlen(tails[t]));
            d_same_as_ref(b, n);
            double v;
            int ok = str_to_d(b, n, &v);
            if (tails[t][0] == '1' || tails[t][0] == '9')
                cr_assert(ok && v == 4.9406564584124654e-324, "just above half rounds up");
            else
                cr_assert(!ok, "exactly half rounds to zero and is rejected");
        }
    }
    free(b);
}

/* Random long strings: compare with the strtod oracle. */
Test(str_to_d, long_random_vs_strtod) {
    static const char alpha[] = "0000000001123456789..eE+-xXpP";
    unsigned long long x = 0x243F6A8885A308D3ULL;
    size_t cap = 9000;
    char *b = malloc(cap);
    cr_assert(b != NULL);
    for (int iter = 0; iter < 3000; iter++) {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        size_t len = 5100 + (size_t)(x % 3000);
        int kind = (int)((x >> 20) % 4);
        size_t n = 0;
        if ((x >> 30) & 1) b[n++] = (x >> 31) & 1 ? '-' : '+';
        if (kind == 1) {
            b[n++] = '0';
            b[n++] = 'x';
        }
        /* mostly digits with a single dot and maybe an exponent */
        size_t dot = (x >> 32) % len, ex = len - 1 - (x >> 40) % 12;
        for (; n < len; n++) {
            unsigned long long r = (x >> (n % 50)) ^ (n * 0x9E3779B97F4A7C15ULL);
            char c = (char)('0' + (r >> 7) % 10);
            if (kind == 1 && ((r >> 3) & 3) == 0) c = "abcdefABCDEF"[(r >> 11) % 12];
            if (n == dot) c = '.';
            if (n == ex && kind != 3) c = kind == 1 ? 'p' : 'e';
            if (n == ex + 1 && (r & 1)) c = '-';
            if (kind == 3 && ((r >> 5) % 2000) == 0) c = alpha[(r >> 17) % (sizeof(alpha) - 1)];
            b[n] = c;
        }
        /* sometimes shift most of the value into leading zeros */
        if (kind == 2) memset(b + (b[0] == '-' || b[0] == '+'), '0', len / 2);
        d_same_as_ref(b, len);
    }
    free(b);
}

/* Short random strings go through the stack-buffer path; they must agree with
 * the oracle too. */
Test(str_to_d, short_random_vs_strtod) {
    static const char alpha[] = "0123456789.eE+-xXpPinfaINFAty ";
    unsigned long long x = 0x13198A2E03707344ULL;
    char b[16];
    for (int iter = 0; iter < 200000; iter++) {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        size_t len = (size_t)(x % 9);
        for (size_t i = 0; i < len; i++) b[i] = alpha[(x >> (6 + 5 * i)) % (sizeof(alpha) - 1)];
        d_same_as_ref(b, len);
    }
}

/* Plain decimals ("-?digits[.digits]") take str_to_d's exact fast path
 * when short enough; every one must be strtod's double, bit for bit (the
 * sign of zero included), on both sides of the path's limits (2^53, 16
 * digits, 22 digits after the point). */
Test(str_to_d, plain_decimals_vs_strtod) {
    static const char *edges[] = {
        "0", "-0", "0.0", "-0.0", "00", ".5", "-.5", "5.", "-5.", "1.5", "13.36", "38.11", "-180", "85.05112878",
        "9007199254740992", "9007199254740993", "-9007199254740993", "900719925474099.3", "0.9007199254740993",
        "1234567890123456", "12345678901234567", "0.1234567890123456789012", "0.12345678901234567890123",
        "0.0000000000000000000001", "0.00000000000000000000001", "1.0000000000000000000000", "99999999999999999",
        "4.35", "0.3", "-2.675", "123.456", "1e5", "1.2.3", ".", "-", "--1", "-+1", "+1.5",
    };
    for (size_t i = 0; i < sizeof(edges) / sizeof(edges[0]); i++) d_same_as_ref(edges[i], strlen(edges[i]));
    cr_assert(signbit(d_ok(S("-0.0"))), "-0.0 keeps its sign, as strtod");

    unsigned long long x = 0x2545F4914F6CDD1DULL;
    char b[40];
    for (int iter = 0; iter < 300000; iter++) {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        size_t n = 0, digits = 1 + (size_t)(x % 24), point = (size_t)((x >> 5) % (digits + 2));
        if ((x >> 10) & 1) b[n++] = '-';
        unsigned long long y = x * 0x9E3779B97F4A7C15ULL;
        for (size_t d = 0; d < digits; d++) {
            if (d == point) b[n++] = '.';
            b[n++] = (char)('0' + (y >> 60) % 10);
            y = y * 6364136223846793005ULL + 1442695040888963407ULL;
        }
        d_same_as_ref(b, n);
    }
}

/* ------------------------------------------------------- ld_to_str_human */

static void human_is(long double v, const char *want) {
    char buf[5 * 1024];
    memset(buf, 'X', sizeof(buf));
    size_t n = ld_to_str_human(buf, sizeof(buf), v);
    cr_assert(n == strlen(want) && memcmp(buf, want, n) == 0 && buf[n] == '\0',
              "ld_to_str_human(%.21Lg) = \"%.*s\", want \"%s\"", v, (int)n, buf, want);
}

static long double LD(const char *s) {
    long double v;
    cr_assert(str_to_ld(s, strlen(s), &v) == 1, "bad literal %s", s);
    return v;
}

Test(ld_to_str_human, incrbyfloat_outputs) {
    /* redis: SET k a; INCRBYFLOAT k b */
    human_is(LD("10.5") + LD("0.1"), "10.6");
    human_is(LD("3.0e3") + LD("0"), "3000");
    human_is(LD("5.0e3") + LD("2.0e2"), "5200");
    human_is(LD("1.1") + LD("2.2"), "3.3");
    human_is(LD("0.1") + LD("0.2"), "0.3");
    human_is(LD("0") + LD("0.1"), "0.1");
    human_is(LD("1") + LD("-1"), "0");
    human_is(LD("-1") + LD("0.5"), "-0.5");
    human_is(LD("0") + LD("-1.5"), "-1.5");
    human_is(LD("0") + LD("1e5"), "100000");
    human_is(LD("0") + LD("0x10"), "16");
    human_is(LD("5") + LD("0X1P3"), "13");
    human_is(LD("0") + LD("0.1e-10"), "0.00000000001");
    human_is(LD("0") + LD("1e-17"), "0.00000000000000001");
    human_is(LD("0") + LD("-1e-17"), "-0.00000000000000001");
    human_is(LD("0") + LD("1.000000000000000009"), "1.00000000000000001");
    human_is(LD("0") + LD("3.0000000000000000001"), "3");
    human_is(LD("0") + LD("1.23456789012345678901234567890"), "1.23456789012345679");
    human_is(LD("0") + LD("123456789012345678"), "123456789012345678");
    human_is(LD("0") + LD("100000000000000000000000000000000000"), "99999999999999999997871448567840768");
    /* -0 and tiny negatives print as "0" */
    human_is(LD("0") + LD("-0"), "0");
    human_is(-0.0L, "0");
    human_is(LD("0") + LD("-0.000000000000000001"), "0");
    human_is(LD("0") + LD("0.000000000000000004"), "0");
    human_is(LD("0") + LD("0.000000000000000005"), "0");
    human_is(LD("0") + LD("1e-4940"), "0");
    human_is(INFINITY, "inf");
    human_is(-INFINITY, "-inf");
}

Test(ld_to_str_human, huge_values) {
    /* redis: INCRBYFLOAT k 1e4932 gives a 4933-digit integer */
    static const char head[] =
        "1000000000000000000006018949387963891323837774254533114773785041352533019486608722407533327779433142773666525563666277";
    static const char tail[] = "38418113791886622720";
    static char buf[5 * 1024];
    size_t n = ld_to_str_human(buf, sizeof(buf), LD("1e4932"));
    cr_assert(n == 4933, "len %zu", n);
    cr_assert(memcmp(buf, head, sizeof(head) - 1) == 0);
    cr_assert(memcmp(buf + n - (sizeof(tail) - 1), tail, sizeof(tail) - 1) == 0);
    /* Like Redis, the cap must hold the untrimmed "%.17Lf" text (4933 digits,
     * '.', 17 zeros) plus NUL, not just the trimmed result. */
    cr_assert(ld_to_str_human(buf, 4951, LD("1e4932")) == 0);
    cr_assert(ld_to_str_human(buf, 4952, LD("1e4932")) == 4933);
    /* LDBL_MAX fits in MAX_LONG_DOUBLE_CHARS */
    n = ld_to_str_human(buf, sizeof(buf), LDBL_MAX);
    cr_assert(n > 4900 && n < sizeof(buf) && buf[n] == '\0');
    n = ld_to_str_human(buf, sizeof(buf), -LDBL_MAX);
    cr_assert(n > 4900 && buf[0] == '-');
    /* redis: SET k 1e400; INCRBYFLOAT k 0 */
    static const char h400[] = "10000000000000000000281880683947586514586453433629052038625910693539685534008629862039363994848";
    n = ld_to_str_human(buf, sizeof(buf), LD("1e400"));
    cr_assert(n == 401 && memcmp(buf, h400, sizeof(h400) - 1) == 0);
    /* redis: SET k -1e3000; INCRBYFLOAT k 1 */
    static const char hm[] = "-999999999999999999986303652052065269762632532929534701829223603769258270821840817729408595625";
    n = ld_to_str_human(buf, sizeof(buf), LD("-1e3000") + 1);
    cr_assert(n == 3001 && memcmp(buf, hm, sizeof(hm) - 1) == 0);
}

Test(ld_to_str_human, small_caps) {
    char buf[8];
    cr_assert(ld_to_str_human(buf, 4, INFINITY) == 0, "inf needs cap 5 like Redis");
    cr_assert(ld_to_str_human(buf, 5, -INFINITY) == 4 && strcmp(buf, "-inf") == 0);
    cr_assert(ld_to_str_human(buf, 5, INFINITY) == 3 && strcmp(buf, "inf") == 0);
    /* "%.17Lf" of 1 is "1.00000000000000000" (19 chars) before trimming,
     * so it needs cap 20 even though the result is "1". */
    cr_assert(ld_to_str_human(buf, sizeof(buf), 1.0L) == 0);
    char big[19];
    cr_assert(ld_to_str_human(big, sizeof(big), 1.0L) == 0);
    char big2[20];
    cr_assert(ld_to_str_human(big2, sizeof(big2), 1.0L) == 1 && strcmp(big2, "1") == 0);
}

/* ----------------------------------------------------------------- d_to_str */

static void dstr_is(double v, const char *want) {
    char buf[64];
    memset(buf, 'X', sizeof(buf));
    size_t n = d_to_str(buf, sizeof(buf), v);
    cr_assert(n == strlen(want) && memcmp(buf, want, n) == 0 && buf[n] == '\0',
              "d_to_str(%.17g) = \"%.*s\", want \"%s\"", v, (int)n, buf, want);
}

static double D(const char *s) {
    double v;
    cr_assert(str_to_d(s, strlen(s), &v) == 1, "bad literal %s", s);
    return v;
}

Test(d_to_str, zscore_outputs) {
    /* redis: ZADD z <x> a; ZSCORE z a (RESP2) */
    dstr_is(D("0.1"), "0.10000000000000001");
    dstr_is(D("inf"), "inf");
    dstr_is(D("+inf"), "inf");
    dstr_is(D("Infinity"), "inf");
    dstr_is(D("-inf"), "-inf");
    dstr_is(D("0"), "0");
    dstr_is(D("-0"), "-0"); /* skiplist encoding; a listpack stores "0" */
    dstr_is(D("1e308"), "1e+308");
    dstr_is(D("1e-320"), "9.9998886718268301e-321");
    dstr_is(D("1.5e300"), "1.5000000000000001e+300");
    dstr_is(D("123456789012345678"), "1.2345678901234568e+17");
    dstr_is(D("0x10"), "16");
    dstr_is(D(".5"), "0.5");
    dstr_is(D("5."), "5");
    dstr_is(D("2.2250738585072014e-308"), "2.2250738585072014e-308");
    dstr_is(D("4.9e-324"), "4.9406564584124654e-324");
    dstr_is(D("1e22"), "1e+22");
    dstr_is(D("1e16"), "10000000000000000");
    dstr_is(D("1e17"), "1e+17");
    dstr_is(D("100"), "100");
    dstr_is(D("3.0"), "3");
    dstr_is(D("0.30000000000000004"), "0.30000000000000004");
    dstr_is(D("-1.5"), "-1.5");
    /* redis: ZADD z 1 a; ZINCRBY z 0.1 a */
    dstr_is(1.0 + 0.1, "1.1000000000000001");
    dstr_is(-DBL_MAX, "-1.7976931348623157e+308");
    dstr_is(NAN, "nan");
}

Test(d_to_str, caps) {
    char buf[32];
    cr_assert(d_to_str(buf, sizeof(buf), -DBL_MIN) == strlen("-2.2250738585072014e-308"));
    cr_assert(d_to_str(buf, sizeof(buf), -4.9406564584124654e-324) == strlen(buf));
    cr_assert(strcmp(buf, "-4.9406564584124654e-324") == 0);
}

/* --------------------------------------------------------------- glob_match */

struct gcase {
    const char *pat;
    size_t plen;
    const char *str;
    size_t slen;
    int want;
};
#define G(p, s, w) {S(p), S(s), (w)}

/* Collected by comparing KEYS output of redis-server 7.0.15 with glob_match
 * over generated pattern/key corpora. */
static const struct gcase glob_cases[] = {
    /* basics */
    G("h?llo", "hello", 1), G("h?llo", "hllo", 0), G("h*llo", "hllo", 1), G("h*llo", "heeeello", 1),
    G("h[ae]llo", "hallo", 1), G("h[ae]llo", "hillo", 0), G("h[^e]llo", "hallo", 1),
    G("h[^e]llo", "hello", 0), G("h[a-b]llo", "hbllo", 1), G("h[a-b]llo", "hcllo", 0),
    G("h\\*llo", "h*llo", 1), G("h\\*llo", "hallo", 0), G("\\?", "?", 1), G("\\?", "a", 0),
    G("a*", "a", 1), G("*a", "a", 1), G("a*b*c", "abc", 1), G("a*b*c", "aXbXcX", 0),
    G("a*b*c*", "aXbXcX", 1), G("*.txt", "a.txt", 1), G("*.txt", "a.txt.gz", 0),
    G("***a***", "bab", 1), G("a**", "a", 1), G("?*", "a", 1), G("*?", "", 0), G("a?", "a", 0),
    G("abc", "ab", 0), G("ab", "abc", 0), G("ABC", "abc", 0), G("a", "A", 0),
    /* the empty subject only matches the empty pattern ("*" too fails; KEYS
     * and SCAN special-case a pattern that is exactly "*") */
    G("", "", 1), G("*", "", 0), G("**", "", 0), G("?", "", 0), G("", "a", 0), G("[^", "", 0),
    /* NUL bytes are ordinary bytes */
    G("?", "\0", 1), G("a\0b", "a\0b", 1), G("a\0b", "a\0c", 0), G("*\0", "xx\0", 1),
    /* ranges compare as signed char: [a-\xff] is 0xff..'a' = {0xff, 0x00..'a'} */
    G("[a-\xff]", "\xff", 1), G("[a-\xff]", "\0", 1), G("[a-\xff]", "a", 1), G("[a-\xff]", "]", 1),
    G("[a-\xff]", "b", 0), G("[a-\xff]", "\x80", 0), G("[\xff-a]", "\x80", 0), G("[\xff-a]", "A", 1),
    G("[\x80-\xff]", "\x80", 1), G("[\x80-\xff]", "\xff", 1), G("[\x80-\xff]", "a", 0),
    G("[\x80-\xff]", "\0", 0), G("[\0-\x80]", "\0", 1), G("[\0-\x80]", "\x80", 1),
    G("[\0-\x80]", "\xff", 1), G("[\0-\x80]", "a", 0),
    /* reversed ranges are swapped */
    G("[z-a]", "b", 1), G("[z-a]", "z", 1), G("[z-a]", "A", 0),
    /* "a-]" is a range up to ']' whenever 3 bytes are left; the class then
     * stays open */
    G("[a-]", "]", 1), G("[a-]", "^", 1), G("[a-]", "_", 1), G("[a-]", "a", 1), G("[a-]", "-", 0),
    G("[a-]", "b", 0), G("[a-]b", "b", 1), G("[a-]b", "ab", 0), G("[a-]b", "]", 1),
    G("[--]", "-", 1), G("[--]", "A", 1), G("[--]", "]", 1), G("[--]", "a", 0), G("[-]", "-", 1),
    G("[-a]", "-", 1), G("[-a]", "a", 1), G("[-a]", "b", 0), G("[a-z-]", "-", 1),
    /* unterminated classes run to the end of the pattern */
    G("[", "[", 0), G("[", "a", 0), G("[^", "a", 1), G("[^", "\0", 1), G("[^", "ab", 0),
    G("[a", "a", 1), G("[a", "[a", 0), G("[a-z", "b", 1), G("[^a", "b", 1), G("[^a", "a", 0),
    G("x[ab", "xb", 1), G("x[ab", "xbb", 0),
    /* the first ']' closes the class: "[]" is empty and "[^]" matches any byte */
    G("[]", "a", 0), G("[]", "]", 0), G("[]a]", "a", 0), G("[]a]", "]", 0), G("[]a]", "a]", 0),
    G("[^]", "x", 1), G("[^]", "]", 1), G("[^]]", "a]", 1), G("[^]]", "]", 0),
    /* escapes inside classes */
    G("[\\a-z]", "-", 1), G("[\\a-z]", "a", 1), G("[\\a-z]", "z", 1), G("[\\a-z]", "b", 0),
    G("[\\]", "]", 1), G("[\\]", "\\", 0), G("[\\]]", "]", 1), G("[\\\\]", "\\", 1),
    G("[\\", "\\", 1), G("[\\", "a", 0), G("[\\^a]", "^", 1), G("[\\^a]", "b", 0),
    G("[a-\\z]", "\\", 1), G("[a-\\z]", "]", 1), G("[a-\\z]", "^", 1), G("[a-\\z]", "_", 1),
    G("[a-\\z]", "a", 1), G("[a-\\z]", "z", 1), G("[a-\\z]", "b", 0),
    /* escapes outside classes; a trailing lone backslash is literal */
    G("\\", "\\", 1), G("\\", "a", 0), G("x\\", "x\\", 1), G("x\\", "x", 0), G("\\\\", "\\", 1),
    G("\\[a]", "[a]", 1), G("\\[a]", "a", 0), G("*\\", "ab\\", 1),
    /* '!' is not a negation */
    G("[!a]", "a", 1), G("[!a]", "!", 1), G("[!a]", "b", 0),
    G("[^a-z]", "A", 1), G("[^a-z]", "b", 0), G("[^a-z]", "\xff", 1),
    /* special characters are literal inside classes */
    G("[*]", "*", 1), G("[*]", "a", 0), G("[?]", "?", 1), G("[?]", "a", 0), G("[[]", "[", 1),
    G("[^^]", "^", 0), G("[^^]", "a", 1), G("[a^]", "^", 1),
};

Test(glob_match, redis_cases) {
    for (size_t i = 0; i < sizeof(glob_cases) / sizeof(glob_cases[0]); i++) {
        const struct gcase *c = &glob_cases[i];
        int got = glob_match(c->pat, c->plen, c->str, c->slen, 0);
        cr_expect(got == c->want, "glob_match(\"%.*s\", \"%.*s\") = %d, want %d", (int)c->plen, c->pat,
                  (int)c->slen, c->str, got, c->want);
    }
}

/* Taken from CONFIG GET (and COMMAND LIST FILTERBY PATTERN), which use
 * nocase=1. */
static const struct gcase nocase_cases[] = {
    G("MAXMEM?RY", "maxmemory", 1), G("*MEMORY*", "maxmemory-policy", 1), G("[M]axmemory", "maxmemory", 1),
    G("\\Maxmemory", "maxmemory", 1), G("\\Get", "get", 1), G("[^M]axmemory", "maxmemory", 0),
    /* an escape inside a class compares case-sensitively even in nocase */
    G("[\\M]axmemory", "maxmemory", 0), G("[\\G]et", "get", 0), G("[\\g]et", "get", 1),
    G("[^\\M]axmemory", "maxmemory", 1),
    /* ranges: swapped first, then lower-cased */
    G("[A-z]axmemory", "maxmemory", 1), G("[A-z]et", "set", 1), G("[Z-a]axmemory", "maxmemory", 0),
    G("[Z-a]et", "get", 0), G("[l-N]axmemory", "maxmemory", 0), G("[K-N]AX*", "maxclients", 1),
    G("[n-K]AX*", "maxmemory", 1), G("*-[A-Z]*", "acl-pubsub-default", 1),
    G("*[_-a]*", "aclfile", 1), G("*[Z-_]*", "aclfile", 0), G("*[A-_]*", "a_b", 0),
    G("[A-_]", "_", 0), G("[A-_]", "a", 0), G("[A-_]", "B", 0), G("[A-_]", "[", 0),
    G("G[^E]T", "get", 0), G("get*", "GETSET", 1), G("*", "", 0), G("", "", 1),
    G("A", "a", 1), G("a", "A", 1), G("[a]", "A", 1), G("\xc0", "\xe0", 0),
};

Test(glob_match, nocase_cases) {
    for (size_t i = 0; i < sizeof(nocase_cases) / sizeof(nocase_cases[0]); i++) {
        const struct gcase *c = &nocase_cases[i];
        int got = glob_match(c->pat, c->plen, c->str, c->slen, 1);
        cr_expect(got == c->want, "glob_match(\"%.*s\", \"%.*s\", nocase) = %d, want %d", (int)c->plen, c->pat,
                  (int)c->slen, c->str, got, c->want);
    }
}

static double now_sec(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

Test(glob_match, no_exponential_blowup) {
    static const char pat[] = "*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*b";
    size_t n = 10000;
    char *s = malloc(n);
    cr_assert(s != NULL);
    memset(s, 'a', n);
    double t0 = now_sec();
    cr_assert(glob_match(pat, sizeof(pat) - 1, s, n, 0) == 0);
    cr_assert(glob_match(pat, sizeof(pat) - 1, s, n, 1) == 0);
    double t1 = now_sec();
    cr_assert(t1 - t0 < 1.0, "took %.3fs", t1 - t0);
    s[n - 1] = 'b';
    cr_assert(glob_match(pat, sizeof(pat) - 1, s, n, 0) == 1);
    s[n - 1] = 'B';
    cr_assert(glob_match(pat, sizeof(pat) - 1, s, n, 0) == 0);
    cr_assert(glob_match(pat, sizeof(pat) - 1, s, n, 1) == 1);

    /* Many bracket elements after stars, on a 100k subject. */
    static const char pat2[] = "*[a]*[ab]*[^b]*?*[a-a]*\\a*c";
    size_t m = 100000;
    char *s2 = malloc(m);
    cr_assert(s2 != NULL);
    memset(s2, 'a', m);
    t0 = now_sec();
    cr_assert(glob_match(pat2, sizeof(pat2) - 1, s2, m, 0) == 0);
    t1 = now_sec();
    cr_assert(t1 - t0 < 1.0, "took %.3fs", t1 - t0);
    free(s);
    free(s2);
}

/* Reference matcher: plain recursive backtracking (exponential, small inputs
 * only), with its own element parser. It checks that the single-backtrack
 * shortcut in glob_match changes nothing. */
static int ref_lower(int c) { return c >= 'A' && c <= 'Z' ? c + 32 : c; }

static int ref_elem(const char *p, size_t pl, size_t *i, char ch, int nc) {
    size_t k = *i;
    if (p[k] == '?') {
        *i = k + 1;
        return 1;
    }
    if (p[k] == '[') {
        k++;
        int neg = 0, m = 0;
        if (k < pl && p[k] == '^') neg = 1, k++;
        while (k < pl && p[k] != ']') {
            if (p[k] == '\\' && k + 1 < pl) {
                m |= p[k + 1] == ch;
                k += 2;
            } else if (k + 2 < pl && p[k + 1] == '-') {
                int a = (signed char)p[k], b = (signed char)p[k + 2], c = (signed char)ch;
                if (a > b) {
                    int t = a;
                    a = b;
                    b = t;
                }
                if (nc) a = ref_lower(a), b = ref_lower(b), c = ref_lower(c);
                m |= c >= a && c <= b;
                k += 3;
            } else {
                m |= nc ? ref_lower((unsigned char)p[k]) == ref_lower((unsigned char)ch) : p[k] == ch;
                k++;
            }
        }
        if (k < pl) k++; /* the ']' */
        *i = k;
        return neg ^ m;
    }
    if (p[k] == '\\' && k + 1 < pl) k++;
    *i = k + 1;
    return nc ? ref_lower((unsigned char)p[k]) == ref_lower((unsigned char)ch) : p[k] == ch;
}

static int ref_rest(const char *p, size_t pl, size_t pi, const char *s, size_t sl, size_t si, int nc) {
    if (pi == pl) return si == sl;
    if (p[pi] == '*') {
        for (size_t k = si; k <= sl; k++)
            if (ref_rest(p, pl, pi + 1, s, sl, k, nc)) return 1;
        return 0;
    }
    if (si == sl) return 0;
    size_t ni = pi;
    if (!ref_elem(p, pl, &ni, s[si], nc)) return 0;
    return ref_rest(p, pl, ni, s, sl, si + 1, nc);
}

static int ref_match(const char *p, size_t pl, const char *s, size_t sl, int nc) {
    if (sl == 0) return pl == 0;
    return ref_rest(p, pl, 0, s, sl, 0, nc);
}

Test(glob_match, exhaustive_vs_reference) {
    static const char palpha[] = "ab*?[^]-\\A";
    static const char salpha[] = "ab]-A";
    const size_t np = sizeof(palpha) - 1, ns = sizeof(salpha) - 1;
    char p[8], s[8];
    long checked = 0;
    for (size_t pl = 0; pl <= 4; pl++) {
        size_t ptotal = 1;
        for (size_t i = 0; i < pl; i++) ptotal *= np;
        for (size_t pc = 0; pc < ptotal; pc++) {
            size_t t = pc;
            for (size_t i = 0; i < pl; i++, t /= np) p[i] = palpha[t % np];
            for (size_t sl = 0; sl <= 3; sl++) {
                size_t stotal = 1;
                for (size_t i = 0; i < sl; i++) stotal *= ns;
                for (size_t sc = 0; sc < stotal; sc++) {
                    size_t u = sc;
                    for (size_t i = 0; i < sl; i++, u /= ns) s[i] = salpha[u % ns];
                    for (int nc = 0; nc <= 1; nc++) {
                        int want = ref_match(p, pl, s, sl, nc);
                        int got = glob_match(p, pl, s, sl, nc);
                        if (got != want)
                            cr_assert_fail("glob_match(\"%.*s\", \"%.*s\", %d) = %d, reference %d", (int)pl, p,
                                           (int)sl, s, nc, got, want);
                        checked++;
                    }
                }
            }
        }
    }
    cr_assert(checked > 1000000);
}

Test(glob_match, random_vs_reference) {
    static const char *pieces[] = {"a", "b", "*", "*", "?", "[ab]", "[^a]", "\\a", "[b-a]", "**", "[a", "\\"};
    const size_t npieces = sizeof(pieces) / sizeof(pieces[0]);
    unsigned long long x = 0xA4093822299F31D0ULL;
    char p[64], s[16];
    for (int iter = 0; iter < 200000; iter++) {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        size_t pl = 0, k = (size_t)(x % 8);
        unsigned long long y = x >> 3;
        for (size_t i = 0; i < k; i++, y = y * 6364136223846793005ULL + 1442695040888963407ULL) {
            const char *pc = pieces[(y >> 33) % npieces];
            memcpy(p + pl, pc, strlen(pc));
            pl += strlen(pc);
        }
        size_t sl = (size_t)((x >> 40) % 9);
        for (size_t i = 0; i < sl; i++) s[i] = "abAB"[(x >> (44 + 2 * (i % 9))) & 3];
        int nc = (int)((x >> 62) & 1);
        int want = ref_match(p, pl, s, sl, nc);
        int got = glob_match(p, pl, s, sl, nc);
        if (got != want)
            cr_assert_fail("glob_match(\"%.*s\", \"%.*s\", %d) = %d, reference %d", (int)pl, p, (int)sl, s, nc,
                           got, want);
    }
}

/* ------------------------------------------------------------- d_to_str */

/* d_to_str prints whole numbers below 2^53 itself: the bytes must be
 * printf's %.17g, which is what Redis 7.0 sends, for every double. */
static void check_d_to_str(double v) {
    char got[64], want[64];
    size_t n = d_to_str(got, sizeof got, v);
    snprintf(want, sizeof want, "%.17g", v);
    if (isinf(v) || isnan(v)) return;
    cr_assert_str_eq(got, want, "d_to_str(%a)", v);
    cr_assert_eq(n, strlen(want));
}

Test(d_to_str, matches_printf_17g) {
    const double edges[] = {0.0, -0.0, 1.0, -1.0, 0.5, -0.5, 1e15, 1e16, 1e17, 9007199254740991.0,
                            9007199254740992.0, 9007199254740993.0, -9007199254740991.0, -9007199254740992.0,
                            4503599627370495.5, 123456789.0, -123456789.0, 1e300, -1e-300, DBL_MIN, DBL_MAX};
    for (size_t i = 0; i < sizeof edges / sizeof edges[0]; i++) {
        check_d_to_str(edges[i]);
        check_d_to_str(nextafter(edges[i], INFINITY));
        check_d_to_str(nextafter(edges[i], -INFINITY));
    }
    uint64_t x = 88172645463325252ull;
    for (int i = 0; i < 200000; i++) {
        x ^= x << 13, x ^= x >> 7, x ^= x << 17;
        long long whole = (long long)(x >> (11 + (x & 31))) * ((x & 64) ? -1 : 1);
        check_d_to_str((double)whole);
        double r;
        memcpy(&r, &x, sizeof r);
        check_d_to_str(r);
    }
}

Test(d_to_str, too_small_buffer) {
    char buf[4];
    cr_assert_eq(d_to_str(buf, sizeof buf, 12345.0), 0);
    cr_assert_eq(d_to_str(buf, sizeof buf, 123.0), 3);
    cr_assert_str_eq(buf, "123");
}
