/* util.h - number parsing/formatting with Redis's exact rules, and glob matching.
 * Pure functions, no allocation. */
#ifndef FERRY_UTIL_H
#define FERRY_UTIL_H

#include <stddef.h>
#include <stdint.h>

/* Strict integer parse as Redis string2ll: optional '-', digits, no '+', no
 * spaces, no leading zeros (except "0"), fits in long long. 1 ok, 0 fail. */
int str_to_ll(const char *s, size_t len, long long *out);
/* Same, unsigned, for cursors (string2ull rules). */
int str_to_ull(const char *s, size_t len, unsigned long long *out);
/* A SCAN/SSCAN/HSCAN/ZSCAN cursor as Redis 7.0 parses it (strtoul over
 * the C string): no leading space, optional sign, decimal digits, no
 * overflow; the empty string is 0 and a negative value wraps. Stops at an
 * embedded NUL. 1 ok, 0 fail ("ERR invalid cursor"). */
int str_to_scan_cursor(const char *s, size_t len, unsigned long *out);
/* As Redis string2ld: strtold over the whole string, no leading space, not
 * NaN, length < 5k. Used by INCRBYFLOAT. 1 ok, 0 fail. */
int str_to_ld(const char *s, size_t len, long double *out);
/* As Redis string2d / getDoubleFromObject: strtod over whole string, no
 * leading space, not NaN; accepts "inf", "-inf", "+inf". 1 ok, 0 fail. */
int str_to_d(const char *s, size_t len, double *out);

/* Decimal formatting; buf needs 21 bytes (no NUL written beyond length+1). Returns length. */
size_t ll_to_str(char *buf, long long v);
size_t ull_to_str(char *buf, unsigned long long v);
/* The number of decimal digits of v (1 for 0). */
static inline unsigned ull_digits(unsigned long long v) {
    unsigned n = 1;
    for (;;) {
        if (v < 10) return n;
        if (v < 100) return n + 1;
        if (v < 1000) return n + 2;
        if (v < 10000) return n + 3;
        v /= 10000;
        n += 4;
    }
}
/* INCRBYFLOAT's format: Redis ld2string(LD_STR_HUMAN): "%.17Lf" then trailing
 * zeros (and a trailing '.') removed, "-0" -> "0"; inf -> "inf"/"-inf".
 * Returns length, 0 if it does not fit (cap >= 5*1024 always fits). */
size_t ld_to_str_human(char *buf, size_t cap, long double v);
/* Double as Redis 7.0 replies it (addReplyDouble): "%.17g", with "inf", "-inf",
 * "nan". Returns length. cap >= 32. */
size_t d_to_str(char *buf, size_t cap, double v);

/* Glob match with Redis stringmatchlen semantics (*, ?, [abc], [^a], [a-z],
 * \ escapes), in O(len(pat) * len(str)) worst case: patterns like
 * "*a*a*a*a*b" never blow up. nocase: ASCII case-insensitive. 1 match, 0 no. */
int glob_match(const char *pat, size_t plen, const char *str, size_t slen, int nocase);

#endif
