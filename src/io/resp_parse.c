/* resp_parse.c - incremental, span-based RESP request parser (see resp_parse.h).
 *
 * Why this file exists: the network layer must turn a client's query buffer
 * into argv spans with Redis 7.0's protocol rules and exact error texts, at
 * millions of requests per second, without allocating, without trusting a
 * declared count (argv storage is the caller's and grows only with bytes
 * received), and without rescanning bytes when a request arrives in pieces.
 *
 * Resumable state kept in resp_parser between calls:
 *   multibulk (kind 1):
 *     declared == 0            "*<count>" line not parsed yet; pos = offset
 *                              where the search for its CR resumes.
 *     declared > 0, bulk_len<0 expecting the "$<len>" header of argument
 *                              argc; pos = offset where the CR search
 *                              resumes. The header's first byte is derived
 *                              (not stored): it follows the previous
 *                              argument (argv[argc-1] + its 2 trailer
 *                              bytes) or, for the first argument, the
 *                              count line, whose length is known from
 *                              declared because only canonical digits pass.
 *     bulk_len >= 0            pos = offset of the payload.
 *     argc                     arguments of this request completed so far;
 *                              argv[0..argc) is part of the state.
 *   inline (kind 2):
 *     declared == 0            no '\n' found yet; pos = where the search
 *                              resumes.
 *     declared > 0             the line (with its '\n') is declared bytes
 *                              long; pos = where the next token starts
 *                              (only used after RESP_NEED_ARGV).
 *
 * Redis behaviours kept on purpose: a header's CR must be followed by one
 * more byte, which is skipped without checking it is '\n'; the 2 bytes after a
 * bulk payload are skipped likewise; '$' is checked only once the header
 * line is complete; "too big" errors fire only when no CR / '\n' was found in
 * more than max_inline pending bytes; before AUTH (lim->unauthenticated) a
 * count over 10 or a length over 16384 is refused once its header line is
 * complete, after the ordinary checks, as Redis 7.0 does. Unlike Redis 7.0 (strchr), lines are
 * found with memchr, so a NUL byte is ordinary data everywhere.
 *
 * An inline line (without its '\n' and one '\r' before it) is split by
 * splitargs.c, the splitter config lines use too, in place in buf.
 */
#include "resp_parse.h"

#include <limits.h>
#include <string.h>

enum { KIND_NONE = 0, KIND_MBULK = 1, KIND_INLINE = 2 };

static const char ERR_MBULK_TOO_BIG[] = "Protocol error: too big mbulk count string";
static const char ERR_MBULK_LEN[]     = "Protocol error: invalid multibulk length";
static const char ERR_BULK_TOO_BIG[]  = "Protocol error: too big bulk count string";
static const char ERR_BULK_LEN[]      = "Protocol error: invalid bulk length";
static const char ERR_INLINE_TOO_BIG[] = "Protocol error: too big inline request";
static const char ERR_QUOTES[]        = "Protocol error: unbalanced quotes in request";
static const char ERR_UNAUTH_MBULK[]  = "Protocol error: unauthenticated multibulk length";
static const char ERR_UNAUTH_BULK[]   = "Protocol error: unauthenticated bulk length";

/* "Protocol error: expected '$', got '<c>'" for every byte value, built at
 * compile time so p->err can stay a pointer to static text. Redis formats the
 * byte with %c and then replaces '\r' and '\n' in error replies by spaces; a
 * NUL byte ends the C string there, leaving "... got '" (what %c + strlen
 * gives in Redis). */
#define EXP_CH(c) ((c) == '\r' || (c) == '\n' ? ' ' : (char)(c))
#define EXP_MSG(c)                                                        \
    { 'P', 'r', 'o', 't', 'o', 'c', 'o', 'l', ' ', 'e', 'r', 'r', 'o', 'r', \
      ':', ' ', 'e', 'x', 'p', 'e', 'c', 't', 'e', 'd', ' ', '\'', '$',     \
      '\'', ',', ' ', 'g', 'o', 't', ' ', '\'', EXP_CH(c), '\'', '\0' }
#define EXP4(c) EXP_MSG(c), EXP_MSG((c) + 1), EXP_MSG((c) + 2), EXP_MSG((c) + 3)
#define EXP16(c) EXP4(c), EXP4((c) + 4), EXP4((c) + 8), EXP4((c) + 12)
#define EXP64(c) EXP16(c), EXP16((c) + 16), EXP16((c) + 32), EXP16((c) + 48)
static const char expected_dollar[256][sizeof("Protocol error: expected '$', got 'x'")] = {
    EXP64(0), EXP64(64), EXP64(128), EXP64(192)
};

static const resp_limits default_limits = {
    RESP_MAX_BULK_DEF, RESP_MAX_ARGS, RESP_INLINE_MAX
};

static ssize_t fail(resp_parser *p, const char *msg)
{
    p->err = msg;
    return RESP_ERROR;
}

/* Ready for the next request; argc (the result) and argv are left alone. */
static void clear_state(resp_parser *p)
{
    p->kind = KIND_NONE;
    p->declared = 0;
    p->bulk_len = -1;
    p->pos = 0;
}

void resp_parser_init(resp_parser *p, resp_arg *argv, size_t argv_cap)
{
    p->argv = argv;
    p->argv_cap = argv_cap;
    p->argc = 0;
    p->err = NULL;
    clear_state(p);
}

void resp_parser_reset(resp_parser *p)
{
    p->argc = 0;
    p->err = NULL;
    clear_state(p);
}

/* Strict integer parse with Redis string2ll's rules: optional '-', then
 * "0" alone or a digit 1-9 followed by digits; nothing else; fits in a long
 * long; fewer than 21 bytes. 1 ok, 0 invalid. */
static int parse_ll(const char *s, size_t n, long long *out)
{
    const unsigned char *u = (const unsigned char *)s;
    size_t i = 0;
    int neg = 0;
    unsigned long long v;

    if (n == 0 || n >= 21)
        return 0;
    if (n == 1 && u[0] == '0') {
        *out = 0;
        return 1;
    }
    if (u[0] == '-') {
        neg = 1;
        if (++i == n)
            return 0;
    }
    if (u[i] < '1' || u[i] > '9')
        return 0;
    v = (unsigned long long)(u[i++] - '0');
    for (; i < n; i++) {
        unsigned d = (unsigned)u[i] - '0';
        if (d > 9 || v > (ULLONG_MAX - d) / 10)
            return 0;
        v = v * 10 + d;
    }
    if (neg) {
        if (v > (unsigned long long)LLONG_MAX + 1)
            return 0;
        *out = -(long long)(v - 1) - 1;
    } else {
        if (v > (unsigned long long)LLONG_MAX)
            return 0;
        *out = (long long)v;
    }
    return 1;
}

/* Common case in one pass, no memchr: buf[line] == m, 1..18 canonical digits,
 * then CR and one more byte present. Returns 1 with *val and *cr set, or 0 to
 * let the general path decide (it yields the same answer when this applies). */
static inline int fast_header(const char *buf, size_t len, size_t line, char m,
                              long long *val, size_t *cr)
{
    const unsigned char *b = (const unsigned char *)buf;
    size_t i = line + 1, stop;
    unsigned long long v;
    unsigned d;

    if (len - line < 4 || buf[line] != m)
        return 0;
    d = (unsigned)b[i] - '0';
    if (d > 9)
        return 0;
    v = d;
    i++;
    if (d != 0) {
        stop = line + 19 < len ? line + 19 : len;
        while (i < stop && (d = (unsigned)b[i] - '0') <= 9) {
            v = v * 10 + d;
            i++;
        }
    }
    if (i + 1 >= len || b[i] != '\r')
        return 0;
    *val = (long long)v;
    *cr = i;
    return 1;
}

/* Find the CR ending the header line starting at 'line'; bytes in
 * [line, *scan) are known to hold none. 1: *cr set, the CR and the byte after
 * it are present. 0: need more bytes, *scan updated. -1: no CR in more than
 * max_inline pending bytes. */
static int find_cr(const char *buf, size_t len, size_t line, size_t *scan,
                   size_t max_inline, size_t *cr)
{
    size_t s = *scan > line ? *scan : line;
    const char *q = s < len ? memchr(buf + s, '\r', len - s) : NULL;
    size_t i;

    if (q == NULL) {
        if (len - line > max_inline)
            return -1;
        *scan = len;
        return 0;
    }
    i = (size_t)(q - buf);
    if (i + 1 >= len) {
        *scan = i;
        return 0;
    }
    *cr = i;
    return 1;
}

/* Offset of the "$<len>" header of argument p->argc (see the state notes). */
static size_t header_start(const resp_parser *p)
{
    unsigned long long d;
    size_t n = 1;

    if (p->argc > 0) {
        const resp_arg *a = &p->argv[p->argc - 1];
        return a->off + a->len + 2;
    }
    for (d = (unsigned long long)p->declared; d >= 10; d /= 10)
        n++;
    return 1 + n + 2; /* '*', digits, CR, one more byte */
}

static ssize_t parse_mbulk(resp_parser *p, const char *buf, size_t len,
                           const resp_limits *lim)
{
    size_t pos = p->pos, line, cr = 0;
    long long v;

    if (p->declared == 0) {
        if (!fast_header(buf, len, 0, '*', &v, &cr)) {
            size_t scan = pos;
            int r = find_cr(buf, len, 0, &scan, lim->max_inline, &cr);
            if (r == 0) {
                p->pos = scan;
                return RESP_INCOMPLETE;
            }
            if (r < 0)
                return fail(p, ERR_MBULK_TOO_BIG);
            if (!parse_ll(buf + 1, cr - 1, &v))
                return fail(p, ERR_MBULK_LEN);
        }
        if (v > lim->max_args)
            return fail(p, ERR_MBULK_LEN);
        if (lim->unauthenticated && v > RESP_UNAUTH_MAX_ARGS)
            return fail(p, ERR_UNAUTH_MBULK);
        if (v <= 0) {
            p->argc = 0;
            clear_state(p);
            return (ssize_t)(cr + 2);
        }
        p->declared = v;
        p->argc = 0;
        p->bulk_len = -1;
        line = pos = cr + 2;
    } else {
        line = p->bulk_len < 0 ? header_start(p) : pos;
        if (line > pos)
            return RESP_INCOMPLETE; /* caller broke the contract; stay safe */
    }

    for (;;) {
        unsigned long long need;

        if (p->bulk_len < 0) {
            if (!fast_header(buf, len, line, '$', &v, &cr)) {
                size_t scan = pos;
                int r = find_cr(buf, len, line, &scan, lim->max_inline, &cr);
                if (r == 0) {
                    p->pos = scan;
                    return RESP_INCOMPLETE;
                }
                if (r < 0)
                    return fail(p, ERR_BULK_TOO_BIG);
                if (buf[line] != '$')
                    return fail(p, expected_dollar[(unsigned char)buf[line]]);
                if (!parse_ll(buf + line + 1, cr - line - 1, &v) || v < 0)
                    return fail(p, ERR_BULK_LEN);
            }
            if (v > lim->max_bulk)
                return fail(p, ERR_BULK_LEN);
            if (lim->unauthenticated && v > RESP_UNAUTH_MAX_BULK)
                return fail(p, ERR_UNAUTH_BULK);
            p->bulk_len = v;
            pos = cr + 2;
        }
        /* payload plus the 2 trailer bytes */
        need = (unsigned long long)p->bulk_len + 2;
        if ((unsigned long long)(len - pos) < need) {
            p->pos = pos;
            return RESP_INCOMPLETE;
        }
        if (p->argc >= p->argv_cap) {
            p->pos = pos;
            return RESP_NEED_ARGV;
        }
        p->argv[p->argc].off = pos;
        p->argv[p->argc].len = (size_t)p->bulk_len;
        p->argc++;
        pos += (size_t)need;
        p->bulk_len = -1;
        if ((long long)p->argc == p->declared) {
            clear_state(p);
            return (ssize_t)pos;
        }
        line = pos;
    }
}

/* Split the line buf[r..e) with splitargs (unescaping in place) into
 * argv[p->argc..); RESP_NEED_ARGV when argv fills up before the line ends. */
static ssize_t split_inline(resp_parser *p, char *buf, size_t r, size_t e,
                            size_t total)
{
    resp_arg *out = p->argc < p->argv_cap ? p->argv + p->argc : NULL;
    ssize_t n = splitargs(buf, e, &r, 0, out, p->argv_cap - p->argc);

    if (n < 0)
        return fail(p, ERR_QUOTES);
    p->argc += (size_t)n;
    if (r < e) {
        p->pos = r;
        return RESP_NEED_ARGV;
    }
    clear_state(p);
    return (ssize_t)total;
}

static ssize_t parse_inline(resp_parser *p, char *buf, size_t len,
                            const resp_limits *lim)
{
    size_t total, e, r;

    if (p->declared == 0) {
        size_t s = p->pos;
        const char *nl = s < len ? memchr(buf + s, '\n', len - s) : NULL;
        if (nl == NULL) {
            if (len > lim->max_inline)
                return fail(p, ERR_INLINE_TOO_BIG);
            p->pos = len;
            return RESP_INCOMPLETE;
        }
        total = (size_t)(nl - buf) + 1;
        p->declared = (long long)total;
        p->argc = 0;
        r = 0;
    } else {
        total = (size_t)p->declared;
        r = p->pos;
        if (total > len)
            return RESP_INCOMPLETE; /* caller broke the contract; stay safe */
    }
    e = total - 1;
    if (e > 0 && buf[e - 1] == '\r')
        e--;
    return split_inline(p, buf, r, e, total);
}

ssize_t resp_parse(resp_parser *p, char *buf, size_t len, const resp_limits *lim)
{
    if (p->err)
        return RESP_ERROR;
    if (lim == NULL)
        lim = &default_limits;
    if (p->kind == KIND_NONE) {
        if (len == 0)
            return RESP_INCOMPLETE;
        p->kind = buf[0] == '*' ? KIND_MBULK : KIND_INLINE;
    }
    if (p->pos > len)
        return RESP_INCOMPLETE; /* caller broke the contract; stay safe */
    if (p->kind == KIND_MBULK)
        return parse_mbulk(p, buf, len, lim);
    return parse_inline(p, buf, len, lim);
}

/* The awaited payload is not in buf (see resp_parse.h). The argument's
 * offset is chosen so that off + len + 2, where header_start looks for the
 * next header, is the current position (unsigned arithmetic wraps). */
ssize_t resp_parse_take_bulk(resp_parser *p)
{
    size_t len;

    if (p->kind != KIND_MBULK || p->bulk_len < 0 || p->err)
        return RESP_ERROR;
    if (p->argc >= p->argv_cap)
        return RESP_NEED_ARGV;
    len = (size_t)p->bulk_len;
    p->argv[p->argc].off = p->pos - len - 2;
    p->argv[p->argc].len = len;
    p->argc++;
    p->bulk_len = -1;
    if ((long long)p->argc < p->declared)
        return 0;
    len = p->pos;
    clear_state(p);
    return (ssize_t)len;
}

/* "$<digits>\r?" at buf[pos] with pos + 4 <= len: the length (canonical
 * digits as fast_header accepts them, at most 10) and the offset of the
 * payload, or 0 when this is not such a header. One and two digits are
 * unrolled. */
static inline int whole_bulk_header(const unsigned char *b, size_t len, size_t pos,
                                    unsigned long long *val, size_t *payload)
{
    unsigned long long v = (unsigned)b[pos + 1] - '0';
    size_t i, stop;
    unsigned d;

    if (b[pos] != '$' || v > 9)
        return 0;
    if (b[pos + 2] == '\r') { /* the byte after the CR exists: pos + 4 <= len */
        *val = v;
        *payload = pos + 4;
        return 1;
    }
    if (v == 0)
        return 0;
    d = (unsigned)b[pos + 2] - '0';
    if (d <= 9 && pos + 4 < len && b[pos + 3] == '\r') {
        *val = v * 10 + d;
        *payload = pos + 5;
        return 1;
    }
    i = pos + 2;
    stop = pos + 12 < len ? pos + 12 : len;
    while (i < stop && (d = (unsigned)b[i] - '0') <= 9) {
        v = v * 10 + d;
        i++;
    }
    if (i + 1 >= len || b[i] != '\r')
        return 0;
    *val = v;
    *payload = i + 2;
    return 1;
}

ssize_t resp_parse_whole(resp_parser *p, const char *buf, size_t len, const resp_limits *lim)
{
    const unsigned char *b = (const unsigned char *)buf;
    size_t n, pos, i;

    if (p->kind != KIND_NONE || p->err || len < 4 || b[0] != '*')
        return 0;
    n = (size_t)b[1] - '0';
    if (n - 1 > 8) /* 1..9: no sign, no leading zero */
        return 0;
    pos = 2;
    if (b[2] != '\r') {
        size_t d = (size_t)b[2] - '0';
        if (d > 9 || b[3] != '\r')
            return 0;
        n = n * 10 + d;
        pos = 3;
    }
    pos += 2; /* CR and the byte after it */
    if (lim == NULL)
        lim = &default_limits;
    if (n > p->argv_cap || (long long)n > lim->max_args ||
        (lim->unauthenticated && (long long)n > RESP_UNAUTH_MAX_ARGS))
        return 0;
    for (i = 0; i < n; i++) {
        unsigned long long l;
        size_t start;
        if (pos + 4 > len || !whole_bulk_header(b, len, pos, &l, &start))
            return 0;
        if ((long long)l > lim->max_bulk || len - start < l + 2 ||
            (lim->unauthenticated && (long long)l > RESP_UNAUTH_MAX_BULK))
            return 0;
        p->argv[i].off = start;
        p->argv[i].len = (size_t)l;
        pos = start + (size_t)l + 2;
    }
    p->argc = n;
    return (ssize_t)pos;
}
