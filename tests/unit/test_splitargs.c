/* test_splitargs.c - Criterion unit tests for src/base/splitargs.c.
 *
 * Why: one splitter serves inline requests and config lines, so its rules
 * (redis-cli quoting, as Redis's sdssplitargs) are pinned down here once:
 * separators, both kinds of quotes, every escape, every \xHH value, the
 * errors, NUL bytes, and the in-place contract (each token is written from
 * its own first byte; nothing outside buf[0, len) is read or written).
 * Besides fixed cases, every prefix of the tricky lines and many random
 * lines are compared with a small reference model written as a state
 * machine, each run over an exact-size heap copy so AddressSanitizer sees
 * any read past len.
 */
#include <criterion/criterion.h>

#include <ctype.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sbuf.h"
#include "splitargs.h"
#include "zmalloc.h"

typedef struct {
    const char *s;
    size_t n;
} bs;
#define S(lit) {lit, sizeof(lit) - 1}

#define MAXTOK 128

/* A split result: tokens (copied out), or err set. */
typedef struct {
    int err;
    int n;
    size_t off[MAXTOK], len[MAXTOK];
    char *tok[MAXTOK];
} result;

static void result_free(result *r) {
    for (int i = 0; i < r->n; i++) free(r->tok[i]);
    r->n = 0;
}

/* Splits an exact-size heap copy of s[0, n) with splitargs, giving it room
 * for `room` tokens per call (a caller growing its array between calls). */
static void split_room(const char *s, size_t n, unsigned flags, size_t room, result *r) {
    char *buf = malloc(n ? n : 1);
    size_t pos = 0;
    memcpy(buf, s, n);
    r->err = 0;
    r->n = 0;
    for (;;) {
        splitargs_span sp[MAXTOK];
        size_t before = pos;
        ssize_t got = splitargs(buf, n, &pos, flags, room ? sp : NULL, room);
        if (got == SPLITARGS_ERROR) {
            r->err = 1;
            break;
        }
        cr_assert(got >= 0 && (size_t)got <= room && pos <= n);
        for (ssize_t k = 0; k < got; k++) {
            cr_assert_lt(r->n, MAXTOK);
            cr_assert(sp[k].off >= before && sp[k].len <= n - sp[k].off && sp[k].off + sp[k].len <= pos);
            before = sp[k].off + sp[k].len;
            r->off[r->n] = sp[k].off;
            r->len[r->n] = sp[k].len;
            r->tok[r->n] = malloc(sp[k].len ? sp[k].len : 1);
            memcpy(r->tok[r->n], buf + sp[k].off, sp[k].len);
            r->n++;
        }
        if (pos == n) break;
        /* stopped early: only because the array is full, at a token */
        cr_assert_eq((size_t)got, room);
        cr_assert(!strchr(" \t\n\v\f\r", buf[pos]) || !buf[pos]);
        if (!room) room = 1;
    }
    free(buf);
}

static void split(const char *s, size_t n, unsigned flags, result *r) { split_room(s, n, flags, MAXTOK, r); }

/* ---- reference model: the rules of splitargs.h as a state machine ---- */

static int m_space(unsigned char c) { return c == ' ' || (c >= '\t' && c <= '\r'); }
static int m_sep(unsigned char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r'; }
static int m_hex(unsigned char c) { return isxdigit(c) ? (int)strtol((char[]){(char)c, 0}, NULL, 16) : -1; }

enum { M_BLANK, M_PLAIN, M_DQ, M_SQ, M_AFTER_QUOTE };

static void model(const unsigned char *s, size_t n, unsigned flags, result *r) {
    int st = M_BLANK;
    char *cur = malloc(n + 1);
    size_t cl = 0;
    r->err = 0;
    r->n = 0;
    for (size_t i = 0; i <= n; i++) {
        int end = i == n;
        unsigned char c = end ? 0 : s[i];
        switch (st) {
        case M_BLANK:
            if (end || m_space(c)) break;
            cl = 0;
            r->off[r->n] = i;
            st = M_PLAIN;
            /* fall through */
        case M_PLAIN:
            if (end || m_sep(c)) goto emit;
            if (c == '"') st = M_DQ;
            else if (c == '\'') st = M_SQ;
            else cur[cl++] = (char)c;
            break;
        case M_DQ:
            if (end) goto error;
            if (c == '"') {
                st = M_AFTER_QUOTE;
            } else if (c == '\\' && i + 3 < n && s[i + 1] == 'x' && m_hex(s[i + 2]) >= 0 && m_hex(s[i + 3]) >= 0) {
                int v = m_hex(s[i + 2]) * 16 + m_hex(s[i + 3]);
                if (v == 0 && (flags & SPLITARGS_NO_NUL_ESCAPE)) goto error;
                cur[cl++] = (char)v;
                i += 3;
            } else if (c == '\\' && i + 1 < n) {
                const char *from = "nrtba", *to = "\n\r\t\b\a";
                const char *k = s[i + 1] ? strchr(from, s[i + 1]) : NULL;
                cur[cl++] = k ? to[k - from] : (char)s[i + 1];
                i++;
            } else {
                cur[cl++] = (char)c;
            }
            break;
        case M_SQ:
            if (end) goto error;
            if (c == '\'') st = M_AFTER_QUOTE;
            else if (c == '\\' && i + 1 < n && s[i + 1] == '\'') cur[cl++] = s[++i];
            else cur[cl++] = (char)c;
            break;
        case M_AFTER_QUOTE:
            if (!end && !m_space(c)) goto error;
            goto emit;
        }
        continue;
    emit:
        r->len[r->n] = cl;
        r->tok[r->n] = malloc(cl ? cl : 1);
        memcpy(r->tok[r->n], cur, cl);
        r->n++;
        st = M_BLANK;
    }
    free(cur);
    return;
error:
    free(cur);
    result_free(r);
    r->err = 1;
}

static void same_as_model_room(const char *s, size_t n, unsigned flags, size_t room) {
    result got, want;
    split_room(s, n, flags, room, &got);
    model((const unsigned char *)s, n, flags, &want);
    cr_assert_eq(got.err, want.err, "error for [%.*s] (%zu bytes)", (int)n, s, n);
    if (!got.err) cr_assert_eq(got.n, want.n, "argc for [%.*s]", (int)n, s);
    for (int i = 0; i < want.n; i++) {
        cr_assert_eq(got.off[i], want.off[i], "offset of token %d of [%.*s]", i, (int)n, s);
        cr_assert(got.len[i] == want.len[i] && !memcmp(got.tok[i], want.tok[i], got.len[i]),
                  "token %d of [%.*s]", i, (int)n, s);
    }
    result_free(&got);
    result_free(&want);
}

/* Compared with room for every token at once, and for 0, 1 and 2 per call. */
static void same_as_model(const char *s, size_t n, unsigned flags) {
    static const size_t rooms[] = {MAXTOK, 0, 1, 2};
    for (size_t k = 0; k < sizeof rooms / sizeof rooms[0]; k++) same_as_model_room(s, n, flags, rooms[k]);
}

/* ---- fixed cases ---- */

typedef struct {
    bs in;
    int err;
    int argc;
    bs av[8];
} tcase;

static void check_cases(const tcase *tc, size_t count, unsigned flags) {
    for (size_t k = 0; k < count; k++) {
        result r;
        split(tc[k].in.s, tc[k].in.n, flags, &r);
        cr_assert_eq(r.err, tc[k].err, "case %zu: error", k);
        if (!r.err) {
            cr_assert_eq(r.n, tc[k].argc, "case %zu: argc %d", k, r.n);
            for (int i = 0; i < r.n; i++)
                cr_assert(r.len[i] == tc[k].av[i].n && !memcmp(r.tok[i], tc[k].av[i].s, r.len[i]),
                          "case %zu: token %d is [%.*s]", k, i, (int)r.len[i], r.tok[i]);
        }
        result_free(&r);
        same_as_model(tc[k].in.s, tc[k].in.n, flags);
    }
}
#define CHECK_CASES(tcs, flags) check_cases(tcs, sizeof(tcs) / sizeof(tcs[0]), flags)

Test(splitargs, empty_and_blank) {
    static const tcase tcs[] = {
        {.in = S(""), .argc = 0},
        {.in = S(" "), .argc = 0},
        {.in = S(" \t\n\v\f\r"), .argc = 0},
    };
    CHECK_CASES(tcs, 0);
    CHECK_CASES(tcs, SPLITARGS_NO_NUL_ESCAPE);
}

Test(splitargs, unquoted) {
    static const tcase tcs[] = {
        {.in = S("set a b"), .argc = 3, .av = {S("set"), S("a"), S("b")}},
        {.in = S("  set \t a   b  "), .argc = 3, .av = {S("set"), S("a"), S("b")}},
        {.in = S("a\rb\nc"), .argc = 3, .av = {S("a"), S("b"), S("c")}},
        /* \v and \f are skipped between tokens but do not end a token */
        {.in = S("\va\vb\f c"), .argc = 2, .av = {S("a\vb\f"), S("c")}},
        /* NUL is ordinary data, also under the NUL-escape flag */
        {.in = S("a\0b \0"), .argc = 2, .av = {S("a\0b"), S("\0")}},
        {.in = S("\\x41 \\"), .argc = 2, .av = {S("\\x41"), S("\\")}},
        {.in = S("\x80\xff"), .argc = 1, .av = {S("\x80\xff")}},
    };
    CHECK_CASES(tcs, 0);
    CHECK_CASES(tcs, SPLITARGS_NO_NUL_ESCAPE);
}

Test(splitargs, double_quotes) {
    static const tcase tcs[] = {
        {.in = S("\"a b\""), .argc = 1, .av = {S("a b")}},
        {.in = S("\"\""), .argc = 1, .av = {S("")}},
        {.in = S("\"\\n\\r\\t\\b\\a\\\\\\\"\\z\\'\""), .argc = 1, .av = {S("\n\r\t\b\a\\\"z'")}},
        {.in = S("\"\\x41\\x4a\\x4A\\xff\""), .argc = 1, .av = {S("AJJ\xff")}},
        /* not two hex digits: backslash + 'x' is 'x' */
        {.in = S("\"\\x4g\""), .argc = 1, .av = {S("x4g")}},
        {.in = S("\"\\x4\""), .argc = 1, .av = {S("x4")}},
        {.in = S("\"\\x\""), .argc = 1, .av = {S("x")}},
        {.in = S("\"\\X41\""), .argc = 1, .av = {S("X41")}},
        /* a raw NUL inside quotes and an escaped one */
        {.in = S("\"a\0b\""), .argc = 1, .av = {S("a\0b")}},
        {.in = S("\"\\x00\""), .argc = 1, .av = {S("\0")}},
        {.in = S("\"\\\0\""), .argc = 1, .av = {S("\0")}},
        {.in = S("\"a\nb\""), .argc = 1, .av = {S("a\nb")}},
    };
    CHECK_CASES(tcs, 0);
}

Test(splitargs, every_hex_escape) {
    for (int v = 0; v < 256; v++) {
        for (int upper = 0; upper < 2; upper++) {
            char line[16];
            int n = snprintf(line, sizeof line, upper ? "\"\\x%02X\"" : "\"\\x%02x\"", v);
            result r;
            split(line, (size_t)n, 0, &r);
            cr_assert(!r.err && r.n == 1 && r.len[0] == 1 && (unsigned char)r.tok[0][0] == v, "%s", line);
            result_free(&r);
            split(line, (size_t)n, SPLITARGS_NO_NUL_ESCAPE, &r);
            cr_assert_eq(r.err, v == 0, "%s with the NUL-escape flag", line);
            result_free(&r);
        }
    }
}

Test(splitargs, single_quotes) {
    static const tcase tcs[] = {
        {.in = S("'a b'"), .argc = 1, .av = {S("a b")}},
        {.in = S("''"), .argc = 1, .av = {S("")}},
        {.in = S("'it\\'s'"), .argc = 1, .av = {S("it's")}},
        /* nothing else is an escape */
        {.in = S("'a\\nb\\x41\"\\\\x'"), .argc = 1, .av = {S("a\\nb\\x41\"\\\\x")}},
        /* a backslash before the closing quote escapes it */
        {.in = S("'\\\\'"), .err = 1},
        {.in = S("'\\x00'"), .argc = 1, .av = {S("\\x00")}},
    };
    CHECK_CASES(tcs, 0);
    CHECK_CASES(tcs, SPLITARGS_NO_NUL_ESCAPE);
}

Test(splitargs, quotes_inside_tokens) {
    static const tcase tcs[] = {
        /* a quote can open mid-token; the closing quote ends the token */
        {.in = S("foo\"bar baz\" x"), .argc = 2, .av = {S("foobar baz"), S("x")}},
        {.in = S("a'b c'"), .argc = 1, .av = {S("ab c")}},
        {.in = S("'' \"\""), .argc = 2, .av = {S(""), S("")}},
        /* any isspace() byte may follow a closing quote, and ends the token */
        {.in = S("\"a\"\vb"), .argc = 2, .av = {S("a"), S("b")}},
        {.in = S("\"a\"\fb"), .argc = 2, .av = {S("a"), S("b")}},
        {.in = S("'a'\tb"), .argc = 2, .av = {S("a"), S("b")}},
        {.in = S("\"a\"\r\n"), .argc = 1, .av = {S("a")}},
    };
    CHECK_CASES(tcs, 0);
}

Test(splitargs, errors) {
    static const tcase tcs[] = {
        {.in = S("\""), .err = 1},
        {.in = S("'"), .err = 1},
        {.in = S("\"abc"), .err = 1},
        {.in = S("ok ok 'abc"), .err = 1},
        {.in = S("\"a\"b"), .err = 1},
        {.in = S("'a'b"), .err = 1},
        {.in = S("\"a\"\"b\""), .err = 1},
        {.in = S("\"a\"'b'"), .err = 1},
        {.in = S("\"abc\\\""), .err = 1},
        {.in = S("\"abc\\"), .err = 1},
        {.in = S("'abc\\'"), .err = 1},
        {.in = S("\"a\"\0"), .err = 1},
    };
    CHECK_CASES(tcs, 0);
    CHECK_CASES(tcs, SPLITARGS_NO_NUL_ESCAPE);
}

Test(splitargs, byte_after_closing_quote) {
    for (int c = 0; c < 256; c++) {
        char line[] = {'"', 'a', '"', (char)c, 'b'};
        result r;
        int space = c == ' ' || (c >= '\t' && c <= '\r');
        split(line, sizeof line, 0, &r);
        cr_assert_eq(r.err, !space, "byte %d after a closing quote", c);
        if (space) cr_assert(r.n == 2 && r.len[0] == 1 && r.len[1] == 1);
        result_free(&r);
    }
}

/* ---- the in-place contract ---- */

Test(splitargs, in_place_and_resumable) {
    char buf[] = "  \"x\\x41\" 'b c' d\\e \"\\n\"  ";
    const char *orig = "  \"x\\x41\" 'b c' d\\e \"\\n\"  ";
    size_t n = sizeof buf - 1, pos = 0;
    static const bs want[] = {S("xA"), S("b c"), S("d\\e"), S("\n")};
    static const size_t want_off[] = {2, 10, 16, 20}, want_pos[] = {10, 16, 20, 26};
    splitargs_span sp;
    cr_assert_eq(splitargs(buf, n, &pos, 0, NULL, 0), 0);
    cr_assert_eq(pos, 2, "no room: stops at the first token");
    for (int i = 0; i < 4; i++) {
        cr_assert_eq(splitargs(buf, n, &pos, 0, &sp, 1), 1);
        cr_assert_eq(sp.off, want_off[i]);
        cr_assert(sp.len == want[i].n && !memcmp(buf + sp.off, want[i].s, sp.len), "token %d", i);
        cr_assert_eq(pos, want_pos[i], "token %d: resumes at the next token", i);
        /* bytes from the next token on are still the input */
        cr_assert(!memcmp(buf + pos, orig + pos, n - pos));
    }
    cr_assert_eq(splitargs(buf, n, &pos, 0, &sp, 1), 0);
    cr_assert_eq(pos, n);
    pos = n + 5;
    cr_assert_eq(splitargs(buf, n, &pos, 0, &sp, 1), 0);
    cr_assert_eq(pos, n, "a start past len is the end");
}

/* Lines whose every prefix is split, and lines for the random mix. */
static const bs tricky[] = {
    S("set \"a b\" 'c d' e\\f"),
    S("\"\\x41\\x4g\\x4\\n\\\\\\\"\" 'it\\'s' x"),
    S("a\"b c\"\v'd' \"\"''"),
    S(" \t\"a\"\f\"b\"\r'c'\n \"\\x00\" \0 end"),
    S("\"unbalanced 'mixed\" ok"),
    S("'\\''\"\\\"\""),
};

Test(splitargs, every_prefix_matches_model) {
    for (size_t t = 0; t < sizeof tricky / sizeof tricky[0]; t++)
        for (size_t k = 0; k <= tricky[t].n; k++) {
            same_as_model(tricky[t].s, k, 0);
            same_as_model(tricky[t].s, k, SPLITARGS_NO_NUL_ESCAPE);
        }
}

/* Bytes after len are neither read nor written: the same prefix followed
 * by bytes that would change the result if read gives the same tokens. */
Test(splitargs, never_touches_bytes_past_len) {
    static const char poison[] = "41\"' x";
    for (size_t t = 0; t < sizeof tricky / sizeof tricky[0]; t++)
        for (size_t k = 0; k <= tricky[t].n; k++) {
            char buf[128];
            splitargs_span sp[MAXTOK];
            size_t pos = 0;
            result ref;
            memcpy(buf, tricky[t].s, k);
            memcpy(buf + k, poison, sizeof poison);
            split(tricky[t].s, k, 0, &ref);
            ssize_t got = splitargs(buf, k, &pos, 0, sp, MAXTOK);
            cr_assert_eq(got == SPLITARGS_ERROR, ref.err);
            if (!ref.err) {
                cr_assert_eq(got, ref.n);
                for (int i = 0; i < ref.n; i++)
                    cr_assert(sp[i].len == ref.len[i] && !memcmp(buf + sp[i].off, ref.tok[i], ref.len[i]));
            }
            cr_assert(!memcmp(buf + k, poison, sizeof poison), "bytes past len changed");
            result_free(&ref);
        }
}

static uint32_t rng(uint32_t *s) {
    uint32_t x = *s;
    x ^= x << 13;
    x ^= x >> 17;
    x ^= x << 5;
    return *s = x;
}

Test(splitargs, random_lines_match_model) {
    static const char alphabet[] = " \t\v\r\n\"'\\x0aF4gnz\0";
    uint32_t seed = 12345;
    char line[40];
    for (int iter = 0; iter < 200000; iter++) {
        size_t n = rng(&seed) % sizeof line;
        for (size_t i = 0; i < n; i++) line[i] = alphabet[rng(&seed) % (sizeof alphabet - 1)];
        same_as_model(line, n, iter & 1 ? SPLITARGS_NO_NUL_ESCAPE : 0);
    }
}

/* What sb_repr (CONFIG REWRITE, config_repr) writes splits back to the
 * original bytes. */
Test(splitargs, repr_round_trip) {
    uint32_t seed = 777;
    for (int iter = 0; iter < 20000; iter++) {
        char raw[64];
        size_t n = iter < 256 ? 1 : rng(&seed) % sizeof raw;
        for (size_t i = 0; i < n; i++) raw[i] = iter < 256 ? (char)iter : (char)rng(&seed);
        sbuf b = {0};
        sb_repr(&b, raw, n);
        result r;
        split(b.p, b.len, 0, &r);
        cr_assert(!r.err && r.n == 1 && r.len[0] == n && !memcmp(r.tok[0], raw, n), "round trip of %s", b.p);
        result_free(&r);
        sb_free(&b);
    }
}
