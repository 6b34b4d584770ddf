/* sbuf.h - a growable, always NUL-terminated byte string for the paths
 * that build text (INFO, CONFIG, CLIENT LIST, config rewrite) and the
 * command stream of the append-only file. Zero-initialise (`sbuf b = {0};`)
 * to start; the reply path never uses it. */
#ifndef FERRY_SBUF_H
#define FERRY_SBUF_H
#include <stddef.h>
#include "span.h"

typedef struct sbuf {
    char *p;
    size_t len, cap;
} sbuf;

/* Ensure room for n more bytes plus the terminator. */
void sb_reserve(sbuf *b, size_t n);
void sb_add(sbuf *b, const char *s, size_t n);
void sb_adds(sbuf *b, const char *s);
void sb_addc(sbuf *b, char c);
void sb_addf(sbuf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Quoted like Redis's sdscatrepr: "..." with \n \r \t \a \b \\ \" \xHH. */
void sb_repr(sbuf *b, const char *s, size_t n);
/* A command as RESP, an array of bulk strings, written after a single
 * reservation (every write propagated to the AOF passes here). */
void sb_add_command(sbuf *b, int argc, const span *argv);
/* The string (never NULL); ownership moves to the caller (zfree). */
char *sb_take(sbuf *b);
void sb_free(sbuf *b);
#endif
