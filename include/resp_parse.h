/* resp_parse.h - incremental, span-based RESP request parser.
 *
 * The parser is a pure function over (buf, len): it performs no I/O and no
 * allocation. It recognises one request (a RESP2 multibulk "*N\r\n$L\r\n..."
 * or an inline "cmd arg arg\r\n" line) and reports its arguments as spans
 * (offsets + lengths) into the caller's buffer. State is kept in a
 * resp_parser so that a request split across reads is resumed where the last
 * call stopped, never rescanned from its first byte.
 *
 * Contract for callers:
 *   - buf always starts at the first byte of the request being parsed (the
 *     caller may move/compact the buffer between calls, offsets stay valid);
 *   - a resumed call must see the same prefix bytes as the previous call;
 *   - argv storage is owned by the caller: when it is full the parser returns
 *     RESP_NEED_ARGV and the caller grows p->argv / p->argv_cap and calls
 *     again (storage therefore grows with bytes received, never with a
 *     declared count alone).
 */
#ifndef FERRY_RESP_PARSE_H
#define FERRY_RESP_PARSE_H

#include <stddef.h>
#include <sys/types.h>

#include "splitargs.h"

/* Named limits (Redis defaults). */
#define RESP_INLINE_MAX   (64 * 1024)          /* PROTO_INLINE_MAX_SIZE */
#define RESP_MAX_BULK_DEF (512LL * 1024 * 1024) /* proto-max-bulk-len */
#define RESP_MAX_ARGS     2147483647LL         /* INT_MAX, as Redis 7 */
/* Before AUTH (requirepass set, client not authenticated) Redis 7 refuses
 * larger requests outright ("unauthenticated multibulk/bulk length"). */
#define RESP_UNAUTH_MAX_ARGS 10LL
#define RESP_UNAUTH_MAX_BULK 16384LL

/* Return codes (anything >= 0 is "bytes consumed"). */
#define RESP_ERROR      (-1)
#define RESP_INCOMPLETE (-2)
#define RESP_NEED_ARGV  (-3)

/* An argument: off = offset of its first byte from buf, len = its length.
 * The splitter's span type, so inline lines are split straight into argv. */
typedef splitargs_span resp_arg;

typedef struct resp_limits {
    long long max_bulk;     /* largest accepted bulk length ("invalid bulk length") */
    long long max_args;     /* largest accepted multibulk count ("invalid multibulk length") */
    size_t max_inline;      /* largest inline line / header line without CRLF */
    int unauthenticated;    /* also apply RESP_UNAUTH_MAX_ARGS / RESP_UNAUTH_MAX_BULK */
} resp_limits;

typedef struct resp_parser {
    /* caller-owned argument storage */
    resp_arg *argv;
    size_t argv_cap;
    /* output: number of arguments of the completed request */
    size_t argc;
    /* resumable state (private to resp_parse.c) */
    int kind;              /* 0: not started, 1: multibulk, 2: inline */
    long long declared;    /* multibulk count */
    long long bulk_len;    /* -1 while expecting a "$len" header */
    size_t pos;            /* scanning resumes at buf + pos */
    /* output on RESP_ERROR (sticky until resp_parser_reset) */
    const char *err;       /* static text, e.g. "Protocol error: invalid bulk length" */
} resp_parser;

void resp_parser_init(resp_parser *p, resp_arg *argv, size_t argv_cap);
/* While a bulk's payload is awaited: the buffer length (from the request's
 * first byte) at which that payload and its CRLF are complete; else 0. */
static inline size_t resp_parse_bulk_end(const resp_parser *p) {
    return p->kind == 1 && p->bulk_len >= 0 ? p->pos + (size_t)p->bulk_len + 2 : 0;
}
/* While a bulk's payload is awaited (resp_parse_bulk_end() != 0), the
 * caller may receive that payload and the 2 bytes after it out of band (a
 * block of its own: io/aside.c) instead of in buf. The argument is recorded
 * as complete with its length and an offset that does not address buf
 * (the caller knows where its bytes are); parsing resumes at the same
 * offset of buf, where the next header now goes. Returns > 0 when that was
 * the request's last argument: the request is complete, that many bytes of
 * buf (its headers and other arguments) are consumed, and argc/argv
 * describe it as after resp_parse; 0 when more arguments follow (call
 * resp_parse as bytes arrive); RESP_NEED_ARGV: grow argv and call again. */
ssize_t resp_parse_take_bulk(resp_parser *p);
/* Forget any partial request and any sticky error; keeps argv storage. */
void resp_parser_reset(resp_parser *p);

/* Parse one request from buf[0..len).
 *   > 0  : a complete request occupying that many bytes; p->argc and
 *          p->argv[0..argc) describe it. argc may be 0 (empty inline line,
 *          "*0\r\n", "*-1\r\n"): the caller skips such a request. The parser
 *          resets its own resumable state, ready for the next request.
 *   RESP_INCOMPLETE : need more bytes; progress saved in p.
 *   RESP_NEED_ARGV  : p->argv is full; grow it and call again.
 *   RESP_ERROR      : protocol error, p->err says which (Redis's text).
 * Inline requests are unescaped in place (quotes, \xHH ...), which is why buf
 * is writable; multibulk requests never modify buf. */
ssize_t resp_parse(resp_parser *p, char *buf, size_t len, const resp_limits *lim);

/* Fast path for the common case, for callers that try it before
 * resp_parse: a whole multibulk request already in buf, in canonical form
 * ("*N\r\n" with 1 <= N <= 99 and N <= argv_cap, then for each argument
 * "$L\r\n" with L < 10^10, the payload and two more bytes), parsed from a
 * fresh parser (no partial request, no error). Returns what resp_parse
 * would return (> 0, with argc and argv set the same way), or 0 when the
 * request is not of that form; then only argv entries may have been
 * written (argc and the resumable state are untouched) and resp_parse
 * decides. */
ssize_t resp_parse_whole(resp_parser *p, const char *buf, size_t len, const resp_limits *lim);

#endif
