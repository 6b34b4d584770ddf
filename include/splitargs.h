/* splitargs.h - the one argument splitter, with redis-cli's quoting.
 *
 * Why: Redis splits inline requests and redis.conf lines with the same
 * rules (sdssplitargs), so ferry has one splitter for both, in a layer below
 * the protocol parser and the configuration. It is a pure function over
 * (buf, len): no allocation, no hidden state, never reads or writes outside
 * buf[0, len), and a NUL byte is ordinary data.
 *
 * The rules:
 *   - tokens are separated by runs of isspace() bytes (C locale: space,
 *     \t \n \v \f \r); inside an unquoted token only space, \t, \n and \r
 *     end it (\v and \f are data there);
 *   - "..." knows \n \r \t \b \a, \xHH (two hex digits, any case) and
 *     backslash + any other byte = that byte (\\ and \" included);
 *   - '...' knows only \' ; every other byte is literal;
 *   - a quote may open in the middle of a token (ab"c d" is "abc d"); the
 *     closing quote ends the token and must be followed by an isspace()
 *     byte or the end of the buffer ("ab"cd is an error);
 *   - a quote that is not closed before len is an error.
 *
 * Tokens are unescaped in place: each token's unescaped bytes are written
 * from its own first byte (the output never outruns the input), so bytes
 * after the token are untouched and a caller whose span array is full may
 * resume later. The span array is the caller's, as in picohttpparser.
 */
#ifndef FERRY_SPLITARGS_H
#define FERRY_SPLITARGS_H

#include <stddef.h>
#include <sys/types.h>

/* Flags. */
#define SPLITARGS_NO_NUL_ESCAPE 1 /* a "\x00" escape is an error (for C-string values) */

#define SPLITARGS_ERROR (-1) /* unbalanced quotes (or a refused NUL escape) */

/* One token: its unescaped bytes are buf[off, off + len). */
typedef struct splitargs_span {
    size_t off;
    size_t len;
} splitargs_span;

/* Splits buf[*pos, len) into out[0, cap), unescaping in place, and returns
 * the number of tokens stored. *pos moves past them: to len when the line
 * is done, otherwise (out is full) to the first byte of the next token, so
 * that a call with more room resumes there (out may be NULL when cap is
 * 0). On SPLITARGS_ERROR buf may have been partly rewritten and *pos and
 * out are unspecified. */
ssize_t splitargs(char *buf, size_t len, size_t *pos, unsigned flags, splitargs_span *out, size_t cap);

#endif
