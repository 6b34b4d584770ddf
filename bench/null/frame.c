/* frame.c - ferry-null-server's request framing, fixed replies and
 * per-connection buffers, shared by both I/O backends.
 *
 * Pure functions over (buf, len) plus growable output buffers: no I/O, so
 * tests/unit/test_null_frame.c can feed requests split at every byte.
 */
#include "null.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>

#define NS_MAX_ARGS  (1024 * 1024)
#define NS_MAX_BULK  (NS_INBUF)      /* a request must fit in the input buffer */

size_t ns_value_size = 64;
size_t ns_ref_min = 4096;
int ns_rcvbuf = 0;
static char *ns_bulk;                /* the whole reply "$N\r\n" + N x 'x' + "\r\n" */
static size_t ns_bulk_len;

int ns_set_value_size(size_t n) {
    char hdr[32], *v;
    int h = snprintf(hdr, sizeof hdr, "$%zu\r\n", n);
    if (n > NS_INBUF || !(v = malloc((size_t)h + n + 2))) return -1;
    memcpy(v, hdr, (size_t)h);
    memset(v + h, 'x', n);
    memcpy(v + h + n, "\r\n", 2);
    free(ns_bulk);
    ns_bulk = v;
    ns_bulk_len = (size_t)h + n + 2;
    ns_value_size = n;
    return 0;
}

int ns_out_reserve(ns_out *o, size_t extra) {
    size_t need = o->len + extra, cap = o->cap ? o->cap : 4096;
    char *nb;
    if (need <= o->cap) return 0;
    if (need > NS_OUTMAX) return -1;
    while (cap < need) cap *= 2;
    nb = realloc(o->buf, cap);
    if (!nb) return -1;
    o->buf = nb;
    o->cap = cap;
    return 0;
}

void ns_out_free(ns_out *o) {
    free(o->buf);
    free(o->refs);
    o->buf = NULL;
    o->refs = NULL;
    o->len = o->cap = o->head = o->nrefs = o->refcap = o->rhead = o->boff = 0;
}

int ns_out_pending(const ns_out *o) {
    return o->head < o->len || o->rhead < o->nrefs;
}

int ns_out_iov(const ns_out *o, struct iovec *iov, int max) {
    size_t pos = o->head, r = o->rhead, boff = o->boff;
    int n = 0;
    while (n < max) {
        size_t next = r < o->nrefs ? o->refs[r] : o->len;
        if (pos < next) {
            iov[n].iov_base = o->buf + pos;
            iov[n++].iov_len = next - pos;
            pos = next;
        } else if (r < o->nrefs) {
            iov[n].iov_base = ns_bulk + boff;
            iov[n++].iov_len = ns_bulk_len - boff;
            boff = 0;
            r++;
        } else {
            break;
        }
    }
    return n;
}

void ns_out_consume(ns_out *o, size_t n) {
    while (n > 0) {
        size_t next = o->rhead < o->nrefs ? o->refs[o->rhead] : o->len, take;
        if (o->head < next) {
            take = next - o->head < n ? next - o->head : n;
            o->head += take;
        } else if (o->rhead < o->nrefs) {
            take = ns_bulk_len - o->boff < n ? ns_bulk_len - o->boff : n;
            o->boff += take;
            if (o->boff == ns_bulk_len) {
                o->boff = 0;
                o->rhead++;
            }
        } else {
            break; /* more than was pending: cannot happen */
        }
        n -= take;
    }
    if (!ns_out_pending(o)) o->len = o->head = o->nrefs = o->rhead = 0;
}

/* Records a bulk by reference at the end of o. */
static int ns_put_ref(ns_out *o) {
    size_t *nr, cap = o->refcap ? o->refcap * 2 : 64;
    if ((o->nrefs - o->rhead + 1) * ns_bulk_len + o->len > NS_OUTMAX) return -1;
    if (o->nrefs == o->refcap) {
        nr = realloc(o->refs, cap * sizeof *nr);
        if (!nr) return -1;
        o->refs = nr;
        o->refcap = cap;
    }
    o->refs[o->nrefs++] = o->len;
    return 0;
}

static int ns_put(ns_out *o, const char *s, size_t n) {
    if (ns_out_reserve(o, n) < 0) return -1;
    memcpy(o->buf + o->len, s, n);
    o->len += n;
    return 0;
}

/* Encoded once by ns_set_value_size: a reply is one copy. */
static int ns_put_bulk(ns_out *o) {
    if (ns_bulk && o->by_ref && ns_value_size >= ns_ref_min) return ns_put_ref(o);
    return ns_bulk ? ns_put(o, ns_bulk, ns_bulk_len) : -1;
}

static int ns_is(const char *name, size_t len, const char *word) {
    return strlen(word) == len && strncasecmp(name, word, len) == 0;
}

/* The fixed reply for a command whose name is name[0..len) and that has
 * nargs arguments in all. */
static int ns_reply(ns_out *o, const char *name, size_t len, long nargs) {
    char hdr[32];
    long i;
    if (ns_is(name, len, "GET")) return ns_put_bulk(o);
    if (ns_is(name, len, "PING")) return ns_put(o, "+PONG\r\n", 7);
    if (ns_is(name, len, "INCR") || ns_is(name, len, "DECR") || ns_is(name, len, "INCRBY"))
        return ns_put(o, ":1\r\n", 4);
    if (ns_is(name, len, "CONFIG")) return ns_put(o, "*0\r\n", 4);
    if (ns_is(name, len, "MGET")) {
        int h = snprintf(hdr, sizeof hdr, "*%ld\r\n", nargs - 1);
        if (ns_put(o, hdr, (size_t)h) < 0) return -1;
        for (i = 1; i < nargs; i++)
            if (ns_put_bulk(o) < 0) return -1;
        return 0;
    }
    return ns_put(o, "+OK\r\n", 5);
}

/* Parses the decimal after a type byte up to CRLF at p (p < end). Returns the
 * position after CRLF, NULL if incomplete, or (const char *)-1 on error. */
static const char *ns_number(const char *p, const char *end, long max, long *out) {
    const char *cr = memchr(p, '\r', (size_t)(end - p));
    long v = 0;
    if (!cr || cr + 1 >= end) return (cr || end - p < 24) ? NULL : (const char *)-1;
    if (cr[1] != '\n' || cr == p) return (const char *)-1;
    for (; p < cr; p++) {
        if (*p < '0' || *p > '9' || v > max / 10) return (const char *)-1;
        v = v * 10 + (*p - '0');
    }
    if (v > max) return (const char *)-1;
    *out = v;
    return cr + 2;
}

/* One request at buf: returns its length, 0 if incomplete, -1 on error;
 * appends its reply. */
static long ns_one(const char *buf, size_t len, ns_out *o) {
    const char *p = buf, *end = buf + len, *name = NULL;
    size_t namelen = 0;
    long nargs, i;
    if (*p != '*') { /* inline: the first word is the command */
        const char *nl = memchr(p, '\n', len), *w = p;
        if (!nl) return len > NS_INBUF ? -1 : 0;
        while (w < nl && *w == ' ') w++;
        name = w;
        while (w < nl && *w != ' ' && *w != '\r') w++;
        if (w > name && ns_reply(o, name, (size_t)(w - name), 1) < 0) return -1;
        return (long)(nl + 1 - buf);
    }
    p = ns_number(p + 1, end, NS_MAX_ARGS, &nargs);
    if (p == (const char *)-1) return -1;
    if (!p) return 0;
    for (i = 0; i < nargs; i++) {
        long blen;
        if (p >= end) return 0;
        if (*p != '$') return -1;
        p = ns_number(p + 1, end, NS_MAX_BULK, &blen);
        if (p == (const char *)-1) return -1;
        if (!p || end - p < blen + 2) return 0;
        if (p[blen] != '\r' || p[blen + 1] != '\n') return -1;
        if (i == 0) { name = p; namelen = (size_t)blen; }
        p += blen + 2;
    }
    if (nargs > 0 && ns_reply(o, name, namelen, nargs) < 0) return -1;
    return (long)(p - buf);
}

long ns_frame(const char *buf, size_t len, ns_out *out) {
    size_t off = 0;
    while (off < len) {
        long n = ns_one(buf + off, len - off, out);
        if (n < 0) return -1;
        if (n == 0) break;
        off += (size_t)n;
    }
    return (long)off;
}

ns_conn *ns_conn_new(int fd) {
    ns_conn *c = calloc(1, sizeof *c);
    int one = 1;
    if (!c) return NULL;
    c->fd = fd;
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    if (ns_rcvbuf > 0) setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &ns_rcvbuf, sizeof ns_rcvbuf);
    return c;
}

void ns_conn_free(ns_conn *c) {
    ns_out_free(&c->out);
    ns_out_free(&c->sending);
    free(c);
}

int ns_conn_took(ns_conn *c, size_t n) {
    c->inlen += n;
    long used = ns_frame(c->in, c->inlen, &c->out);
    if (used < 0) return -1;
    if (used > 0) memmove(c->in, c->in + used, c->inlen - (size_t)used);
    c->inlen -= (size_t)used;
    return 0;
}

int ns_conn_feed(ns_conn *c, const char *data, size_t len) {
    long used;
    if (c->inlen == 0) { /* common case: frame straight from the read buffer */
        used = ns_frame(data, len, &c->out);
        if (used < 0) return -1;
        data += used;
        len -= (size_t)used;
    }
    /* the rest goes through the input buffer, a buffer-full at a time: a
     * read may bring more than the space left behind a partial request */
    while (len > 0) {
        size_t n = sizeof c->in - c->inlen;
        if (n > len) n = len;
        if (n == 0) return -1; /* one request larger than the buffer */
        memcpy(c->in + c->inlen, data, n);
        data += n;
        len -= n;
        if (ns_conn_took(c, n) < 0) return -1;
    }
    return 0;
}
