/* resp_count.c - resumable RESP reply-framing counter (see resp_count.h).
 *
 * Why a hand-written state machine: it is the only per-reply work the load
 * generator does, so it must be cheap (simple lines are skipped with memchr,
 * bulk payloads by pointer arithmetic, and a bulk that lies whole in the
 * buffer, the bulk of an LRANGE or HGETALL reply, in one step without
 * touching the state) and exact across arbitrary read()
 * boundaries (a reply may be split anywhere, even inside "\r\n").
 */
#include "resp_count.h"

#include <string.h>

enum {
    FB_PH_TYPE = 0, /* expecting a type byte */
    FB_PH_LINE,     /* inside a simple line, up to and including '\n' */
    FB_PH_NUM,      /* header number of $ * etc., up to '\r' */
    FB_PH_NUM_LF,   /* '\n' after a header number */
    FB_PH_BULK,     /* skipping bulk_left payload bytes */
    FB_PH_BULK_CR,  /* '\r' after a bulk payload */
    FB_PH_BULK_LF,  /* '\n' after a bulk payload */
    FB_PH_BAD       /* protocol error seen */
};

void fb_resp_init(fb_resp_state *st) {
    memset(st, 0, sizeof *st);
    st->phase = FB_PH_TYPE;
}

int fb_resp_idle(const fb_resp_state *st) {
    return st->phase == FB_PH_TYPE && st->depth == 0;
}

/* One value finished: close every aggregate it completes. Returns 1 when a
 * top-level reply is complete. */
static int fb_value_done(fb_resp_state *st) {
    while (st->depth > 0) {
        if (--st->left[st->depth - 1] > 0) return 0;
        st->depth--;
    }
    st->replies++;
    if (st->cur_err) {
        st->errors++;
        st->cur_err = 0;
    }
    return 1;
}

static long fb_bad(fb_resp_state *st) {
    st->phase = FB_PH_BAD;
    return -1;
}

static void fb_capture(fb_resp_state *st, const char *p, size_t n) {
    size_t room = sizeof st->errtext - 1 - st->errlen;
    if (n > room) n = room;
    memcpy(st->errtext + st->errlen, p, n);
    st->errlen += n;
}

/* A header number ended: start the bulk / aggregate, or finish a null/empty
 * one. Returns 1 if a top-level reply completed, -1 on a protocol error. */
static int fb_header_done(fb_resp_state *st) {
    int64_t n = st->neg ? -st->num : st->num;
    if (st->ndig == 0 || (n < 0 && n != -1)) return -1;
    switch (st->type) {
    case '$': case '=': case '!':
        if (n < 0) break; /* null bulk */
        st->bulk_left = n;
        st->phase = FB_PH_BULK;
        return 0;
    default: /* * ~ > % */
        if (n <= 0) break; /* null or empty aggregate */
        if (st->depth == FB_RESP_MAXDEPTH) return -1;
        if (st->type == '%') {
            if (n > INT64_MAX / 2) return -1;
            n *= 2;
        }
        st->left[st->depth++] = n;
        st->phase = FB_PH_TYPE;
        return 0;
    }
    st->phase = FB_PH_TYPE;
    return fb_value_done(st);
}

/* Fast path for the commonest value of big replies: a whole non-null bulk
 * "$<n>\r\n<n bytes>\r\n" inside [p, end) (p at the '$'). Returns the byte
 * after it, or NULL to take the byte-wise path, which also handles a bulk
 * split across reads and judges anything malformed. */
static const char *fb_fast_bulk(const char *p, const char *end) {
    const char *q = p + 1;
    uint64_t n = 0;
    int nd = 0;
    while (q < end && *q >= '0' && *q <= '9' && nd < 18) {
        n = n * 10 + (uint64_t)(*q++ - '0');
        nd++;
    }
    if (nd == 0 || end - q < 2 || q[0] != '\r' || q[1] != '\n') return NULL;
    q += 2;
    if ((uint64_t)(end - q) < n + 2) return NULL;
    q += n;
    if (q[0] != '\r' || q[1] != '\n') return NULL;
    return q + 2;
}

long fb_resp_count(const char *buf, size_t len, fb_resp_state *st) {
    const char *p = buf, *end = buf + len;
    long done = 0;

    if (st->phase == FB_PH_BAD) return -1;
    while (p < end) {
        switch (st->phase) {
        case FB_PH_TYPE:
            if (*p == '$') {
                const char *q = fb_fast_bulk(p, end);
                if (q) {
                    p = q;
                    done += fb_value_done(st);
                    break;
                }
            }
            st->type = *p++;
            switch (st->type) {
            case '+': case ':': case '_': case ',': case '#': case '(':
                st->phase = FB_PH_LINE;
                break;
            case '-':
                st->cur_err = 1;
                st->capture = !st->have_errtext;
                st->errlen = 0;
                st->phase = FB_PH_LINE;
                break;
            case '!':
                st->cur_err = 1;
                if (!st->have_errtext) {
                    memcpy(st->errtext, "(blob error)", sizeof "(blob error)");
                    st->have_errtext = 1;
                }
                /* fallthrough */
            case '$': case '=': case '*': case '~': case '>': case '%':
                st->phase = FB_PH_NUM;
                st->num = 0;
                st->neg = 0;
                st->ndig = 0;
                break;
            default:
                return fb_bad(st);
            }
            break;

        case FB_PH_LINE: {
            const char *nl = memchr(p, '\n', (size_t)(end - p));
            if (st->capture) fb_capture(st, p, (size_t)((nl ? nl : end) - p));
            if (!nl) {
                p = end;
                break;
            }
            p = nl + 1;
            if (st->capture) {
                if (st->errlen > 0 && st->errtext[st->errlen - 1] == '\r') st->errlen--;
                st->errtext[st->errlen] = '\0';
                st->have_errtext = 1;
                st->capture = 0;
            }
            st->phase = FB_PH_TYPE;
            done += fb_value_done(st);
            break;
        }

        case FB_PH_NUM: {
            char c = *p++;
            if (c >= '0' && c <= '9') {
                if (st->num > (INT64_MAX - 9) / 10) return fb_bad(st);
                st->num = st->num * 10 + (c - '0');
                st->ndig++;
            } else if (c == '-' && st->ndig == 0 && !st->neg) {
                st->neg = 1;
            } else if (c == '\r') {
                st->phase = FB_PH_NUM_LF;
            } else {
                return fb_bad(st);
            }
            break;
        }

        case FB_PH_NUM_LF: {
            int r;
            if (*p++ != '\n') return fb_bad(st);
            r = fb_header_done(st);
            if (r < 0) return fb_bad(st);
            done += r;
            break;
        }

        case FB_PH_BULK: {
            size_t avail = (size_t)(end - p);
            if ((uint64_t)st->bulk_left > avail) {
                st->bulk_left -= (int64_t)avail;
                p = end;
            } else {
                p += st->bulk_left;
                st->bulk_left = 0;
                st->phase = FB_PH_BULK_CR;
            }
            break;
        }

        case FB_PH_BULK_CR:
            if (*p++ != '\r') return fb_bad(st);
            st->phase = FB_PH_BULK_LF;
            break;

        case FB_PH_BULK_LF:
            if (*p++ != '\n') return fb_bad(st);
            st->phase = FB_PH_TYPE;
            done += fb_value_done(st);
            break;

        default:
            return fb_bad(st);
        }
    }
    return done;
}
