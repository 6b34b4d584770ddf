/* splitargs.c - the argument splitter shared by inline requests
 * (resp_parse.c) and configuration lines (config_load.c); the rules are in
 * splitargs.h.
 *
 * Why one file: the two callers used to carry their own copies, which had
 * drifted apart. The inline path is hot, so the splitter works in place
 * over the caller's buffer with a byte-class table and never allocates; the
 * config loader copies its line first and then calls the same code.
 */
#include "splitargs.h"

/* Byte classes. SP: isspace() in the C locale (skipped between tokens and
 * allowed after a closing quote). SEP: the bytes that end an unquoted
 * token (SP without \v and \f). DQ, SQ: the quotes. */
enum { C_SP = 1, C_SEP = 2, C_DQ = 4, C_SQ = 8 };
static const unsigned char cls[256] = {
    [' '] = C_SP | C_SEP, ['\t'] = C_SP | C_SEP, ['\r'] = C_SP | C_SEP,
    ['\n'] = C_SP | C_SEP, ['\v'] = C_SP, ['\f'] = C_SP,
    ['"'] = C_DQ, ['\''] = C_SQ,
};

/* A cursor over one token: bytes are read at r and written at w <= r.
 * The loops copy r and w into locals: stores through b (a char pointer)
 * could alias the struct, which would force a reload per byte. */
typedef struct cursor {
    unsigned char *b;
    size_t len, r, w;
} cursor;

static int hexval(unsigned char c) {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    return -1;
}

static unsigned char unescape(unsigned char c) {
    switch (c) {
    case 'n': return '\n';
    case 'r': return '\r';
    case 't': return '\t';
    case 'b': return '\b';
    case 'a': return '\a';
    default: return c;
    }
}

/* After a closing quote at r - 1: the end of the buffer or an isspace()
 * byte. 0 ok, -1 error. */
static int closed(cursor *c, size_t r, size_t w) {
    c->r = r;
    c->w = w;
    return r >= c->len || (cls[c->b[r]] & C_SP) ? 0 : -1;
}

/* The body of "..." from c->r (just after the opening quote) through the
 * closing quote. 0 ok, -1 error. */
static int double_quoted(cursor *c, unsigned flags) {
    unsigned char *b = c->b;
    size_t len = c->len, r = c->r, w = c->w;
    for (;;) {
        if (r >= len) return -1;
        unsigned char ch = b[r];
        if (ch == '"') return closed(c, r + 1, w);
        if (ch == '\\' && r + 1 < len) {
            int hi, lo;
            if (b[r + 1] == 'x' && r + 3 < len && (hi = hexval(b[r + 2])) >= 0 && (lo = hexval(b[r + 3])) >= 0) {
                ch = (unsigned char)(hi * 16 + lo);
                if (ch == 0 && (flags & SPLITARGS_NO_NUL_ESCAPE)) return -1;
                r += 4;
            } else {
                ch = unescape(b[r + 1]);
                r += 2;
            }
        } else {
            r++;
        }
        b[w++] = ch;
    }
}

/* The body of '...' from c->r through the closing quote. 0 ok, -1 error. */
static int single_quoted(cursor *c) {
    unsigned char *b = c->b;
    size_t len = c->len, r = c->r, w = c->w;
    for (;;) {
        if (r >= len) return -1;
        if (b[r] == '\'') return closed(c, r + 1, w);
        if (b[r] == '\\' && r + 1 < len && b[r + 1] == '\'') r++;
        b[w++] = b[r++];
    }
}

static size_t skip_blanks(const unsigned char *b, size_t len, size_t pos) {
    while (pos < len && (cls[b[pos]] & C_SP)) pos++;
    return pos;
}

/* One token from c->r (its first byte, not a blank), c->w == c->r. Leaves
 * c->r after its last input byte, c->w after its last output byte. 0 ok,
 * -1 error. */
static int token(cursor *c, unsigned flags) {
    unsigned char *b = c->b;
    size_t len = c->len, r = c->r, w = c->w;
    while (r < len) {
        unsigned char k = cls[b[r]];
        if (!(k & (C_SEP | C_DQ | C_SQ))) { /* ordinary byte (\v, \f included) */
            b[w++] = b[r++];
            continue;
        }
        if (k & C_SEP) break;
        c->r = r + 1;
        c->w = w;
        /* a closing quote ends the token */
        return k == C_DQ ? double_quoted(c, flags) : single_quoted(c);
    }
    c->r = r;
    c->w = w;
    return 0;
}

ssize_t splitargs(char *buf, size_t len, size_t *pos, unsigned flags, splitargs_span *out, size_t cap) {
    cursor c = {(unsigned char *)buf, len, 0, 0};
    size_t n = 0, r = skip_blanks(c.b, len, *pos);
    for (; r < len && n < cap; r = skip_blanks(c.b, len, c.r)) {
        c.r = c.w = r;
        if (token(&c, flags) < 0) return SPLITARGS_ERROR;
        out[n].off = r;
        out[n].len = c.w - r;
        n++;
    }
    *pos = r < len ? r : len;
    return (ssize_t)n;
}
