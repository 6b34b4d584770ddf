/* util.c - number parsing/formatting and glob matching for ferry.
 *
 * Redis clients see these rules directly: INCR and friends refuse values
 * that Redis refuses, INCRBYFLOAT prints its result the way Redis does, and
 * KEYS/SCAN MATCH/PSUBSCRIBE patterns match the same keys. So each function
 * here reproduces Redis 7.0.15 behaviour, quirks included. Every quirk below
 * was checked against a real redis-server 7.0.15:
 *
 *  - str_to_ll/str_to_ull are strict: no sign other than '-' (and no '-' at
 *    all for unsigned), no spaces, no leading zeros, "-0" is rejected.
 *  - str_to_ld/str_to_d use the C library's strtold/strtod on the whole
 *    string. That means "+5", ".5", "5.", "0x10", "inf", "Infinity" and
 *    denormals are accepted. Leading whitespace, trailing garbage, NaN,
 *    overflow to +-inf and underflow to zero are rejected. (str_to_d
 *    converts plain short decimals itself, to the same double.) str_to_ld also
 *    rejects length >= 5120 (MAX_LONG_DOUBLE_CHARS); str_to_d has no length
 *    limit, so a string of 6000 zeros followed by "1" is a valid score.
 *  - glob_match works like stringmatchlen. It takes no locale into account
 *    and treats bytes as *signed* chars in [a-b] ranges (x86-64 Redis does
 *    this), so "[a-\xff]" covers bytes 0xff and 0x00..'a' but not 0x80. An
 *    empty subject matches only an empty pattern, so "*" does not match "".
 *    (Redis KEYS and SCAN check for a pattern of exactly "*" before they
 *    match, so callers must do the same.) The rest of the bracket rules are
 *    described at glob_elem().
 *
 * The glob matcher is iterative with one backtrack point, so its worst case
 * is O(plen * slen). Redis uses a recursive matcher. Nothing here allocates.
 */
#include "util.h"

#include <errno.h>
#include <float.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Redis MAX_LONG_DOUBLE_CHARS: string2ld refuses inputs this long or longer. */
#define LD_MAX_CHARS (5 * 1024)

/* isspace() in the C locale. Redis calls setlocale(LC_COLLATE) only, so its
 * isspace() always uses these six characters. */
static int c_isspace(unsigned char c) {
    return c == ' ' || (c >= '\t' && c <= '\r');
}

/* ------------------------------------------------------------------------ */
/* Integers                                                                  */
/* ------------------------------------------------------------------------ */

int str_to_ll(const char *s, size_t len, long long *out) {
    const unsigned char *p = (const unsigned char *)s;
    const unsigned char *end = p + len;
    int neg = 0;

    /* The longest valid input is "-9223372036854775808", 20 bytes. */
    if (len == 0 || len > 20) return 0;
    if (*p == '-') {
        neg = 1;
        if (++p == end) return 0;
    }
    if (*p < '1' || *p > '9') {
        if (len == 1 && *p == '0') {
            *out = 0;
            return 1;
        }
        return 0; /* "-0", "01", "+1", " 1", "x" ... */
    }
    /* 1 to 19 digits cannot overflow unsigned long long (max ~1.8e19).
     * A 20-digit string is above LLONG_MAX, so the ndigits check below
     * rejects it. */
    if (end - p > 19) return 0;
    unsigned long long v = 0;
    while (p < end) {
        unsigned d = (unsigned)*p - '0';
        if (d > 9) return 0;
        v = v * 10 + d;
        p++;
    }
    if (neg) {
        if (v > (unsigned long long)LLONG_MAX + 1) return 0;
        /* Two's complement negation in unsigned, then convert: v == 2^63
         * gives LLONG_MIN without signed overflow. */
        *out = v == (unsigned long long)LLONG_MAX + 1 ? LLONG_MIN : -(long long)v;
    } else {
        if (v > (unsigned long long)LLONG_MAX) return 0;
        *out = (long long)v;
    }
    return 1;
}

int str_to_ull(const char *s, size_t len, unsigned long long *out) {
    const unsigned char *p = (const unsigned char *)s;
    const unsigned char *end = p + len;

    /* Longest valid input is "18446744073709551615", 20 digits. */
    if (len == 0 || len > 20) return 0;
    if (*p < '1' || *p > '9') {
        if (len == 1 && *p == '0') {
            *out = 0;
            return 1;
        }
        return 0;
    }
    unsigned long long v = 0;
    while (p < end) {
        unsigned d = (unsigned)*p - '0';
        if (d > 9) return 0;
        /* Only the 20th digit can overflow. */
        if (v > (ULLONG_MAX - d) / 10) return 0;
        v = v * 10 + d;
        p++;
    }
    *out = v;
    return 1;
}

int str_to_scan_cursor(const char *s, size_t len, unsigned long *out) {
    size_t n = strnlen(s, len), i = 0;
    unsigned long v = 0;
    int neg = 0;
    if (n == 0) {
        *out = 0;
        return 1;
    }
    if (s[0] == ' ' || (s[0] >= '\t' && s[0] <= '\r')) return 0; /* isspace in the C locale */
    if (s[0] == '+' || s[0] == '-') {
        neg = s[0] == '-';
        i++;
    }
    if (i == n) return 0;
    for (; i < n; i++) {
        unsigned d = (unsigned)(s[i] - '0');
        if (d > 9) return 0;
        if (v > (ULONG_MAX - d) / 10) return 0;
        v = v * 10 + d;
    }
    *out = neg ? 0UL - v : v;
    return 1;
}

/* "00" .. "99", two characters per entry. */
static const char digit_pairs[201] =
    "00010203040506070809"
    "10111213141516171819"
    "20212223242526272829"
    "30313233343536373839"
    "40414243444546474849"
    "50515253545556575859"
    "60616263646566676869"
    "70717273747576777879"
    "80818283848586878889"
    "90919293949596979899";


/* Writes the digits of v and a NUL to buf, returns the digit count. */
static size_t utoa_digits(char *buf, unsigned long long v) {
    unsigned n = ull_digits(v);
    char *p = buf + n;
    *p = '\0';
    while (v >= 100) {
        unsigned i = (unsigned)(v % 100) * 2;
        v /= 100;
        *--p = digit_pairs[i + 1];
        *--p = digit_pairs[i];
    }
    if (v >= 10) {
        unsigned i = (unsigned)v * 2;
        *--p = digit_pairs[i + 1];
        *--p = digit_pairs[i];
    } else {
        *--p = (char)('0' + v);
    }
    return n;
}

size_t ll_to_str(char *buf, long long v) {
    if (v < 0) {
        /* Negate in unsigned so LLONG_MIN works. */
        unsigned long long u = 0ULL - (unsigned long long)v;
        buf[0] = '-';
        return 1 + utoa_digits(buf + 1, u);
    }
    return utoa_digits(buf, (unsigned long long)v);
}

size_t ull_to_str(char *buf, unsigned long long v) {
    return utoa_digits(buf, v);
}

/* ------------------------------------------------------------------------ */
/* Floating point                                                            */
/* ------------------------------------------------------------------------ */

int str_to_ld(const char *s, size_t len, long double *out) {
    char buf[LD_MAX_CHARS];
    char *eptr;
    long double v;

    if (len == 0 || len >= sizeof(buf)) return 0;
    if (c_isspace((unsigned char)s[0])) return 0;
    memcpy(buf, s, len);
    buf[len] = '\0';

    int saved = errno;
    errno = 0;
    v = strtold(buf, &eptr);
    int range = errno == ERANGE;
    errno = saved;

    /* eptr != buf + len also catches an embedded NUL. */
    if (eptr != buf + len) return 0;
    if (range && (isinf(v) || v == 0)) return 0; /* overflow / underflow to 0 */
    if (isnan(v)) return 0;
    *out = v;
    return 1;
}

/* strtod needs a NUL-terminated string and our input does not have one.
 * Short inputs go into a stack buffer. string2d has no length limit, so
 * longer ones go through long_strtod(), which first checks that the whole
 * string fits the strtod grammar. It then builds a short string that rounds
 * to the same double.
 *
 * This is correct because strtod rounds correctly. A midpoint between two
 * adjacent doubles, the underflow-to-zero threshold 2^-1075 and the overflow
 * threshold all have at most about 770 significant decimal digits (in hex,
 * 15 digits). So two values that share their first 800 significant decimal
 * digits (40 hex digits), and are both strictly above that prefix, round the
 * same way. Also, the ERANGE-to-zero and ERANGE-to-inf cases happen for both
 * or for neither.
 */
#define D_STACK_CHARS 512
#define DEC_KEEP 800
#define HEX_KEEP 40
#define EXP_CLAMP 1000000000LL /* far beyond any double exponent */

static int is_dec(unsigned char c) { return c >= '0' && c <= '9'; }
static int is_hex(unsigned char c) {
    return is_dec(c) || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F');
}

/* Parse [+-]?digits+ at p (p < end), saturating at EXP_CLAMP. Returns the end
 * of the exponent, or NULL if there are no digits. */
static const unsigned char *parse_exp(const unsigned char *p, const unsigned char *end,
                                      long long *exp) {
    int eneg = 0;
    long long e = 0;
    if (p < end && (*p == '+' || *p == '-')) eneg = *p++ == '-';
    if (p == end || !is_dec(*p)) return NULL;
    while (p < end && is_dec(*p)) {
        if (e < EXP_CLAMP) e = e * 10 + (*p - '0');
        p++;
    }
    *exp = eneg ? -e : e;
    return p;
}

static long long clamp_exp(long long e) {
    if (e > EXP_CLAMP) return EXP_CLAMP;
    if (e < -EXP_CLAMP) return -EXP_CLAMP;
    return e;
}

/* Like strtod() over all of s[0..len), reporting whether the conversion
 * consumed everything and whether ERANGE was set. Only called for long
 * inputs, which cannot be "inf"/"infinity". A long "nan(...)" is NaN, which
 * the caller rejects anyway, so both count as not-a-number here. */
static int long_strtod(const char *s, size_t len, double *out, int *range) {
    const unsigned char *p = (const unsigned char *)s;
    const unsigned char *end = p + len;
    char red[DEC_KEEP + 64];
    size_t rn = 0;
    int neg = 0;

    if (p < end && (*p == '+' || *p == '-')) neg = *p++ == '-';
    if (neg) red[rn++] = '-';

    if (end - p >= 2 && p[0] == '0' && (p[1] == 'x' || p[1] == 'X') &&
        ((p + 2 < end && is_hex(p[2])) ||
         (p + 3 < end && p[2] == '.' && is_hex(p[3])))) {
        /* Hex float: 0x hexdigits [. hexdigits] [p [+-] digits] */
        long long scale = 0; /* binary exponent from dropped/fraction digits */
        size_t kept = 0;
        int seen_dot = 0, sticky = 0, any = 0;
        p += 2;
        red[rn++] = '0';
        red[rn++] = 'x';
        for (; p < end; p++) {
            if (*p == '.' && !seen_dot) {
                seen_dot = 1;
                continue;
            }
            if (!is_hex(*p)) break;
            if (seen_dot) scale -= 4;
            if (!any && *p == '0') continue; /* leading zero */
            any = 1;
            if (kept < HEX_KEEP) {
                red[rn++] = (char)*p;
                kept++;
            } else {
                scale += 4;
                if (*p != '0') sticky = 1;
            }
        }
        long long exp = 0;
        if (p < end && (*p == 'p' || *p == 'P')) {
            p = parse_exp(p + 1, end, &exp);
            if (p == NULL) return 0;
        }
        if (p != end) return 0;
        if (!any) {
            red[rn++] = '0';
            scale = 0;
        } else if (sticky) {
            red[rn++] = '1';
            scale -= 4;
        }
        rn += (size_t)snprintf(red + rn, sizeof(red) - rn, "p%lld",
                               clamp_exp(clamp_exp(exp) + clamp_exp(scale)));
    } else {
        /* Decimal: digits [. digits] [e [+-] digits], at least one digit. */
        long long scale = 0;
        size_t kept = 0;
        int seen_dot = 0, sticky = 0, any = 0, ndig = 0;
        for (; p < end; p++) {
            if (*p == '.' && !seen_dot) {
                seen_dot = 1;
                continue;
            }
            if (!is_dec(*p)) break;
            ndig = 1;
            if (seen_dot) scale--;
            if (!any && *p == '0') continue;
            any = 1;
            if (kept < DEC_KEEP) {
                red[rn++] = (char)*p;
                kept++;
            } else {
                scale++;
                if (*p != '0') sticky = 1;
            }
        }
        if (!ndig) return 0;
        long long exp = 0;
        if (p < end && (*p == 'e' || *p == 'E')) {
            p = parse_exp(p + 1, end, &exp);
            if (p == NULL) return 0;
        }
        if (p != end) return 0;
        if (!any) {
            red[rn++] = '0';
            scale = 0;
        } else if (sticky) {
            red[rn++] = '1';
            scale--;
        }
        rn += (size_t)snprintf(red + rn, sizeof(red) - rn, "e%lld",
                               clamp_exp(clamp_exp(exp) + clamp_exp(scale)));
    }

    char *eptr;
    int saved = errno;
    errno = 0;
    *out = strtod(red, &eptr);
    *range = errno == ERANGE;
    errno = saved;
    return eptr == red + rn;
}

/* Plain decimals ("-?digits[.digits]", at most 2^53 as an integer once
 * the point is dropped, at most 22 digits after it) converted exactly:
 * the integer and the power of ten are both exact doubles, so the one
 * IEEE division is correctly rounded, the very value strtod returns
 * (Clinger's fast path). Coordinates and scores are nearly always such
 * strings, and strtod spent ~600 instructions on each. 0: not such a
 * string, use strtod. Needs double arithmetic without extended precision
 * (FLT_EVAL_METHOD 0, x86-64 and arm64). */
static int plain_decimal(const char *s, size_t len, double *out) {
#if defined(FLT_EVAL_METHOD) && FLT_EVAL_METHOD == 0
    static const double pow10[] = {1e0,  1e1,  1e2,  1e3,  1e4,  1e5,  1e6,  1e7,  1e8,  1e9,  1e10, 1e11,
                                   1e12, 1e13, 1e14, 1e15, 1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22};
    const char *p = s, *end = s + len;
    int neg = p < end && *p == '-';
    p += neg;
    uint64_t m = 0;
    int digits = 0, frac = -1; /* frac: digits after the point, -1 before it */
    for (; p < end; p++) {
        if (*p == '.' && frac < 0) {
            frac = 0;
            continue;
        }
        unsigned d = (unsigned)(unsigned char)*p - '0';
        if (d > 9 || ++digits > 16) return 0; /* 16 digits: m < 10^16, no overflow */
        m = m * 10 + d;
        if (frac >= 0) frac++;
    }
    if (digits == 0 || m > (UINT64_C(1) << 53) || frac > 22) return 0;
    double v = (double)m / pow10[frac > 0 ? frac : 0];
    *out = neg ? -v : v;
    return 1;
#else
    (void)s;
    (void)len;
    (void)out;
    return 0;
#endif
}

int str_to_d(const char *s, size_t len, double *out) {
    double v;
    int range;

    if (len == 0 || c_isspace((unsigned char)s[0])) return 0;
    if (plain_decimal(s, len, out)) return 1;
    if (len < D_STACK_CHARS) {
        char buf[D_STACK_CHARS];
        char *eptr;
        memcpy(buf, s, len);
        buf[len] = '\0';
        int saved = errno;
        errno = 0;
        v = strtod(buf, &eptr);
        range = errno == ERANGE;
        errno = saved;
        if (eptr != buf + len) return 0;
    } else {
        if (!long_strtod(s, len, &v, &range)) return 0;
    }
    if (range && (isinf(v) || v == 0)) return 0;
    if (isnan(v)) return 0;
    *out = v;
    return 1;
}

size_t ld_to_str_human(char *buf, size_t cap, long double v) {
    if (isinf(v)) {
        if (cap < 5) return 0; /* room for "-inf\0", as Redis checks */
        if (v > 0) {
            memcpy(buf, "inf", 4);
            return 3;
        }
        memcpy(buf, "-inf", 5);
        return 4;
    }
    int n = snprintf(buf, cap, "%.17Lf", v);
    if (n < 0 || (size_t)n + 1 > cap) return 0;
    size_t l = (size_t)n;
    if (memchr(buf, '.', l) != NULL) {
        while (buf[l - 1] == '0') l--;
        if (buf[l - 1] == '.') l--;
    }
    if (l == 2 && buf[0] == '-' && buf[1] == '0') {
        buf[0] = '0';
        l = 1;
    }
    buf[l] = '\0';
    return l;
}

size_t d_to_str(char *buf, size_t cap, double v) {
    const char *lit = NULL;
    if (isinf(v))
        lit = v > 0 ? "inf" : "-inf";
    else if (isnan(v))
        lit = "nan";
    if (lit) {
        size_t l = strlen(lit);
        if (l + 1 > cap) return 0;
        memcpy(buf, lit, l + 1);
        return l;
    }
    /* A whole number below 2^53 prints under %.17g as its integer digits
     * (no exponent below 1e17, every such value exact): format it as one,
     * several times cheaper than printf's float path (sorted set scores are
     * mostly whole). -0 keeps printf's "-0". */
    if (v > -9007199254740992.0 && v < 9007199254740992.0 && v == (double)(long long)v && !(v == 0 && signbit(v))) {
        char tmp[32];
        size_t l = ll_to_str(tmp, (long long)v);
        tmp[l] = '\0';
        if (l + 1 > cap) return 0;
        memcpy(buf, tmp, l + 1);
        return l;
    }
    int n = snprintf(buf, cap, "%.17g", v);
    if (n < 0 || (size_t)n + 1 > cap) return 0;
    return (size_t)n;
}

/* ------------------------------------------------------------------------ */
/* Glob matching                                                             */
/* ------------------------------------------------------------------------ */

static int ascii_lower(int c) {
    return (c >= 'A' && c <= 'Z') ? c + ('a' - 'A') : c;
}

/* A pattern is a sequence of '*' and single-character elements. This
 * function takes the element that starts at pat[*pi] (not '*'), tells
 * whether it accepts the character c, and moves *pi past it. How the
 * pattern splits into elements depends only on the pattern, never on c,
 * which is what lets glob_match use a single backtrack point.
 *
 * Element rules (Redis stringmatchlen):
 *   ?      any byte
 *   \x     the byte x (nocase applies); a lone trailing '\' is a literal '\'
 *   [...]  a class. A leading '^' negates it. Inside the class:
 *          - "\x" is the literal x, compared case-SENSITIVELY even in nocase
 *            mode. A '\' that is the last byte of the pattern is a literal
 *            '\'.
 *          - "a-b" is a range whenever at least three bytes are left, even
 *            when b is ']' or '\'. So "[a-]" is the range ']'..'a' and the
 *            class is not closed. Reversed ranges are swapped. Bytes compare
 *            as signed char. With nocase the bounds are swapped first and
 *            then lower-cased, so "[Z-a]" matches nothing in nocase mode.
 *          - the first ']' closes the class, so "[]" is empty and matches
 *            nothing, and "[^]" matches any byte.
 *          - with no closing ']' the class runs to the end of the pattern:
 *            "[a" is {a}, "[" matches nothing, and "[^" matches any byte.
 *   other  that byte (ASCII case-insensitive if nocase)
 */
static int glob_elem(const char *pat, size_t plen, size_t *pi, char c, int nocase) {
    size_t i = *pi;
    unsigned char pc = (unsigned char)pat[i];

    if (pc == '?') {
        *pi = i + 1;
        return 1;
    }
    if (pc == '[') {
        int neg, match = 0;
        i++;
        neg = i < plen && pat[i] == '^';
        if (neg) i++;
        for (;;) {
            if (i >= plen) break; /* unterminated: class ends at pattern end */
            if (pat[i] == '\\' && i + 1 < plen) {
                if (pat[i + 1] == c) match = 1;
                i += 2;
            } else if (pat[i] == ']') {
                i++;
                break;
            } else if (i + 2 < plen && pat[i + 1] == '-') {
                int lo = (signed char)pat[i];
                int hi = (signed char)pat[i + 2];
                int x = (signed char)c;
                if (lo > hi) {
                    int t = lo;
                    lo = hi;
                    hi = t;
                }
                if (nocase) {
                    lo = ascii_lower(lo);
                    hi = ascii_lower(hi);
                    x = ascii_lower(x);
                }
                if (x >= lo && x <= hi) match = 1;
                i += 3;
            } else {
                if (nocase ? ascii_lower((unsigned char)pat[i]) == ascii_lower((unsigned char)c)
                           : pat[i] == c)
                    match = 1;
                i++;
            }
        }
        *pi = i;
        return neg ? !match : match;
    }
    if (pc == '\\' && i + 1 < plen) {
        i++;
        pc = (unsigned char)pat[i];
    }
    *pi = i + 1;
    if (nocase) return ascii_lower(pc) == ascii_lower((unsigned char)c);
    return pc == (unsigned char)c;
}

/* Classic two-pointer glob matching. Every non-star element consumes
 * exactly one byte and its match depends only on that byte. So when a
 * later '*' is reached, the earlier star's backtrack point is no longer
 * needed: anything the earlier star could absorb, the later one can absorb
 * instead. Each backtrack advances star_s, so the work is
 * O(plen * slen). */
int glob_match(const char *pat, size_t plen, const char *str, size_t slen, int nocase) {
    size_t p = 0, s = 0;
    size_t star_p = 0, star_s = 0;
    int have_star = 0;

    /* Redis's matcher only loops while the subject is non-empty. So an
     * empty subject matches only the empty pattern, not even "*". */
    if (slen == 0) return plen == 0;

    while (s < slen) {
        if (p < plen && pat[p] == '*') {
            while (p < plen && pat[p] == '*') p++;
            if (p == plen) return 1; /* trailing star eats the rest */
            have_star = 1;
            star_p = p;
            star_s = s;
            continue;
        }
        if (p < plen) {
            size_t np = p;
            if (glob_elem(pat, plen, &np, str[s], nocase)) {
                p = np;
                s++;
                continue;
            }
        }
        if (!have_star) return 0;
        /* Let the last star absorb one more byte and retry after it. */
        p = star_p;
        s = ++star_s;
    }
    while (p < plen && pat[p] == '*') p++;
    return p == plen;
}
