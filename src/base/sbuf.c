/* sbuf.c - growable text buffer (see sbuf.h). */
#include "sbuf.h"
#include "util.h"
#include "zmalloc.h"
#include <ctype.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

void sb_reserve(sbuf *b, size_t n) {
    if (b->cap - b->len > n) return;
    size_t cap = b->cap ? b->cap : 128;
    while (cap - b->len <= n) cap *= 2;
    b->p = zrealloc(b->p, cap);
    b->cap = cap;
}

void sb_add(sbuf *b, const char *s, size_t n) {
    sb_reserve(b, n);
    if (n) memcpy(b->p + b->len, s, n);
    b->len += n;
    b->p[b->len] = '\0';
}

void sb_adds(sbuf *b, const char *s) { sb_add(b, s, strlen(s)); }
void sb_addc(sbuf *b, char c) { sb_add(b, &c, 1); }

void sb_addf(sbuf *b, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(NULL, 0, fmt, ap);
    va_end(ap);
    if (n <= 0) return;
    sb_reserve(b, (size_t)n);
    va_start(ap, fmt);
    vsnprintf(b->p + b->len, b->cap - b->len, fmt, ap);
    va_end(ap);
    b->len += (size_t)n;
}

/* "<kind><n>\r\n" at p; returns the byte after it (p needs 23 bytes). */
static char *put_len(char *p, char kind, size_t n) {
    *p++ = kind;
    p += ull_to_str(p, n);
    *p++ = '\r';
    *p++ = '\n';
    return p;
}

void sb_add_command(sbuf *b, int argc, const span *argv) {
    size_t need = 24;
    for (int i = 0; i < argc; i++) need += argv[i].len + 25;
    sb_reserve(b, need);
    char *p = put_len(b->p + b->len, '*', (size_t)argc);
    for (int i = 0; i < argc; i++) {
        p = put_len(p, '$', argv[i].len);
        memcpy(p, argv[i].p, argv[i].len);
        p += argv[i].len;
        *p++ = '\r';
        *p++ = '\n';
    }
    b->len = (size_t)(p - b->p);
    b->p[b->len] = '\0';
}

void sb_repr(sbuf *b, const char *s, size_t n) {
    sb_addc(b, '"');
    for (size_t i = 0; i < n; i++) {
        unsigned char ch = (unsigned char)s[i];
        switch (ch) {
        case '\\': sb_adds(b, "\\\\"); break;
        case '"': sb_adds(b, "\\\""); break;
        case '\n': sb_adds(b, "\\n"); break;
        case '\r': sb_adds(b, "\\r"); break;
        case '\t': sb_adds(b, "\\t"); break;
        case '\a': sb_adds(b, "\\a"); break;
        case '\b': sb_adds(b, "\\b"); break;
        default:
            if (isprint(ch)) sb_addc(b, (char)ch);
            else sb_addf(b, "\\x%02x", ch);
        }
    }
    sb_addc(b, '"');
}

char *sb_take(sbuf *b) {
    if (!b->p) return zstrdup("");
    char *p = b->p;
    b->p = NULL;
    b->len = b->cap = 0;
    return p;
}

void sb_free(sbuf *b) {
    zfree(b->p);
    b->p = NULL;
    b->len = b->cap = 0;
}
