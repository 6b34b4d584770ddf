/* fuzz_glob.c - libFuzzer target for glob_match (src/base/util.c).
 *
 * Clients control both KEYS/SCAN MATCH/PSUBSCRIBE patterns and key names,
 * so glob_match must never read out of bounds, must stay polynomial, and
 * must give the same answer as a plain reading of the Redis rules. The
 * first input byte picks the split point. The rest is split into pattern
 * and subject, and glob_match runs on them in both case modes. For small
 * inputs, the result is also checked against a separate dynamic-programming
 * matcher. That matcher has its own element parser and tries every
 * (element, position) pair, so it does not depend on the single-backtrack
 * trick.
 *
 * Build: clang -g -fsanitize=fuzzer,address,undefined -Iinclude fuzz/fuzz_glob.c src/base/util.c -lm
 * Run:   ./a.out -max_total_time=20 fuzz/corpus
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "util.h"

static int lower(int c) { return c >= 'A' && c <= 'Z' ? c + 32 : c; }

/* Does the element at p[*i] (not '*') accept ch? Moves *i past it. */
static int elem(const char *p, size_t pl, size_t *i, char ch, int nc) {
    size_t k = *i;
    if (p[k] == '?') {
        *i = k + 1;
        return 1;
    }
    if (p[k] == '[') {
        int neg = 0, m = 0;
        k++;
        if (k < pl && p[k] == '^') neg = 1, k++;
        while (k < pl && p[k] != ']') {
            if (p[k] == '\\' && k + 1 < pl) {
                m |= p[k + 1] == ch; /* case-sensitive even with nocase */
                k += 2;
            } else if (k + 2 < pl && p[k + 1] == '-') {
                int a = (signed char)p[k], b = (signed char)p[k + 2], c = (signed char)ch;
                if (a > b) {
                    int t = a;
                    a = b;
                    b = t;
                }
                if (nc) a = lower(a), b = lower(b), c = lower(c);
                m |= c >= a && c <= b;
                k += 3;
            } else {
                m |= nc ? lower((unsigned char)p[k]) == lower((unsigned char)ch) : p[k] == ch;
                k++;
            }
        }
        if (k < pl) k++;
        *i = k;
        return neg ^ m;
    }
    if (p[k] == '\\' && k + 1 < pl) k++;
    *i = k + 1;
    return nc ? lower((unsigned char)p[k]) == lower((unsigned char)ch) : p[k] == ch;
}

/* Returns the match result, or -1 if the input is too big to check. */
static int dp_match(const char *p, size_t pl, const char *s, size_t sl, int nc) {
    if (sl == 0) return pl == 0;
    if (pl > 256 || sl > 256) return -1;
    size_t start[257];
    size_t ne = 0;
    for (size_t k = 0; k < pl;) {
        start[ne++] = k;
        if (p[k] == '*') {
            k++;
        } else {
            size_t t = k;
            elem(p, pl, &t, 0, nc); /* the split does not depend on the byte */
            k = t;
        }
    }
    /* ok[j][i]: elements j.. match s[i..]. Row ne is the empty pattern. */
    unsigned char *ok = calloc((ne + 1) * (sl + 1), 1);
    if (!ok) return -1;
#define OK(j, i) ok[(j) * (sl + 1) + (i)]
    OK(ne, sl) = 1;
    for (size_t j = ne; j-- > 0;) {
        for (size_t i = sl + 1; i-- > 0;) {
            if (p[start[j]] == '*') {
                OK(j, i) = OK(j + 1, i) || (i < sl && OK(j, i + 1));
            } else if (i < sl) {
                size_t t = start[j];
                OK(j, i) = elem(p, pl, &t, s[i], nc) && OK(j + 1, i + 1);
            }
        }
    }
    int r = OK(0, 0);
#undef OK
    free(ok);
    return r;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    if (size < 1) return 0;
    size_t rest = size - 1;
    size_t plen = rest ? data[0] % (rest + 1) : 0;
    /* Copy into exact-size heap buffers so ASan catches any read past the
     * end of either argument. */
    char *pat = malloc(plen ? plen : 1);
    char *str = malloc(rest - plen ? rest - plen : 1);
    if (!pat || !str) abort();
    memcpy(pat, data + 1, plen);
    memcpy(str, data + 1 + plen, rest - plen);
    size_t slen = rest - plen;

    for (int nc = 0; nc <= 1; nc++) {
        int got = glob_match(pat, plen, str, slen, nc);
        if (got != 0 && got != 1) abort();
        int want = dp_match(pat, plen, str, slen, nc);
        if (want >= 0 && want != got) abort();
    }
    free(pat);
    free(str);
    return 0;
}
