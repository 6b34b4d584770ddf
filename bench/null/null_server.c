/* null_server.c - ferry-null-server: request framing, fixed replies, the
 * epoll backend and main(). See null.h for why this program exists.
 *
 * Framing is real (a request is complete only when its last bulk's CRLF has
 * arrived, pipelined requests are all answered, a partial one waits for more
 * bytes), so the server does the same syscalls per request as ferry and
 * redis-server: one read() per readable connection and one write() of all
 * the replies that read produced.
 */
#include "null.h"

#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <unistd.h>

#define NS_MAX_ARGS  (1024 * 1024)
#define NS_MAX_BULK  (NS_INBUF)      /* a request must fit in the input buffer */
#define NS_EVENTS    256

size_t ns_value_size = 64;
static char *ns_value;               /* ns_value_size bytes of 'x' */

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
    o->buf = NULL;
    o->len = o->cap = 0;
}

static int ns_put(ns_out *o, const char *s, size_t n) {
    if (ns_out_reserve(o, n) < 0) return -1;
    memcpy(o->buf + o->len, s, n);
    o->len += n;
    return 0;
}

static int ns_put_bulk(ns_out *o) {
    char hdr[32];
    int h = snprintf(hdr, sizeof hdr, "$%zu\r\n", ns_value_size);
    if (ns_out_reserve(o, (size_t)h + ns_value_size + 2) < 0) return -1;
    memcpy(o->buf + o->len, hdr, (size_t)h);
    memcpy(o->buf + o->len + h, ns_value, ns_value_size);
    memcpy(o->buf + o->len + h + ns_value_size, "\r\n", 2);
    o->len += (size_t)h + ns_value_size + 2;
    return 0;
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
    return c;
}

void ns_conn_free(ns_conn *c) {
    ns_out_free(&c->out);
    ns_out_free(&c->sending);
    free(c);
}

int ns_conn_feed(ns_conn *c, const char *data, size_t len) {
    long used;
    if (c->inlen == 0) { /* common case: frame straight from the read buffer */
        used = ns_frame(data, len, &c->out);
        if (used < 0) return -1;
        data += used;
        len -= (size_t)used;
        if (len > sizeof c->in) return -1;
        memcpy(c->in, data, len);
        c->inlen = len;
        return 0;
    }
    if (len > sizeof c->in - c->inlen) return -1;
    memcpy(c->in + c->inlen, data, len);
    c->inlen += len;
    used = ns_frame(c->in, c->inlen, &c->out);
    if (used < 0) return -1;
    memmove(c->in, c->in + used, c->inlen - (size_t)used);
    c->inlen -= (size_t)used;
    return 0;
}

/* ---- epoll backend: level-triggered, read() then write() per connection */

static void ns_epoll_close(int ep, ns_conn *c) {
    epoll_ctl(ep, EPOLL_CTL_DEL, c->fd, NULL);
    close(c->fd);
    ns_conn_free(c);
}

/* Writes pending output; waits for EPOLLOUT (and stops reading) while the
 * socket is full. Returns -1 if the connection failed. */
static int ns_epoll_flush(int ep, ns_conn *c) {
    struct epoll_event ev = {.data.ptr = c};
    size_t off = 0;
    while (off < c->out.len) {
        ssize_t w = write(c->fd, c->out.buf + off, c->out.len - off);
        if (w < 0) {
            if (errno == EINTR) continue;
            if (errno != EAGAIN) return -1;
            break;
        }
        off += (size_t)w;
    }
    memmove(c->out.buf, c->out.buf + off, c->out.len - off);
    c->out.len -= off;
    if (!!c->out.len != c->want_out) { /* switch between reading and draining */
        c->want_out = !!c->out.len;
        ev.events = c->want_out ? EPOLLOUT : EPOLLIN;
        return epoll_ctl(ep, EPOLL_CTL_MOD, c->fd, &ev);
    }
    return 0;
}

static void ns_epoll_accept(int ep, int lfd) {
    for (;;) {
        struct epoll_event ev = {.events = EPOLLIN};
        int fd = accept4(lfd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
        ns_conn *c;
        if (fd < 0) return;
        c = ns_conn_new(fd);
        if (!c) { close(fd); continue; }
        ev.data.ptr = c;
        if (epoll_ctl(ep, EPOLL_CTL_ADD, fd, &ev) < 0) { close(fd); ns_conn_free(c); }
    }
}

static void ns_epoll_event(int ep, ns_conn *c, uint32_t events, char *rbuf) {
    if (events & EPOLLOUT) {
        if (ns_epoll_flush(ep, c) < 0) ns_epoll_close(ep, c);
        return;
    }
    ssize_t r = read(c->fd, rbuf, NS_INBUF);
    if (r < 0 && (errno == EAGAIN || errno == EINTR)) return;
    if (r <= 0 || ns_conn_feed(c, rbuf, (size_t)r) < 0) {
        ns_epoll_close(ep, c);
        return;
    }
    if (c->out.len && ns_epoll_flush(ep, c) < 0) ns_epoll_close(ep, c);
}

int ns_run_epoll(int lfd) {
    static char rbuf[NS_INBUF];
    struct epoll_event evs[NS_EVENTS], lev = {.events = EPOLLIN, .data.ptr = NULL};
    int ep = epoll_create1(EPOLL_CLOEXEC), i, n;
    if (ep < 0 || epoll_ctl(ep, EPOLL_CTL_ADD, lfd, &lev) < 0) {
        perror("epoll");
        return 1;
    }
    for (;;) {
        n = epoll_wait(ep, evs, NS_EVENTS, -1);
        for (i = 0; i < n; i++) {
            if (!evs[i].data.ptr) ns_epoll_accept(ep, lfd);
            else ns_epoll_event(ep, evs[i].data.ptr, evs[i].events, rbuf);
        }
    }
}

/* ---- main */

static int ns_listen(int port) {
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port)};
    int one = 1, fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (fd < 0) return -1;
    setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    if (bind(fd, (struct sockaddr *)&a, sizeof a) < 0 || listen(fd, 511) < 0) {
        close(fd);
        return -1;
    }
    return fd;
}

static void ns_usage(void) {
    fputs("Usage: ferry-null-server --port N [--io epoll|uring] [--value-size D]\n"
          "A RESP server with no data: every request gets a fixed reply\n"
          "(GET: a D-byte bulk, default 64; MGET: D-byte bulks; INCR/DECR/INCRBY: :1;\n"
          "PING: +PONG; CONFIG: *0; anything else: +OK). Binds 127.0.0.1.\n"
          "Exit status 3: --io uring and io_uring is unavailable.\n"
          "--save X is accepted and ignored (argument compatibility with the servers).\n",
          stderr);
}

int main(int argc, char **argv) {
    int port = 6379, uring = 0, i, lfd;
    for (i = 1; i < argc; i += 2) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (!strcmp(a, "--help")) { ns_usage(); return 0; }
        if (!v) { ns_usage(); return 2; }
        if (!strcmp(a, "--port")) port = atoi(v);
        else if (!strcmp(a, "--value-size")) ns_value_size = (size_t)strtoul(v, NULL, 10);
        else if (!strcmp(a, "--io") && (!strcmp(v, "epoll") || !strcmp(v, "uring"))) uring = !strcmp(v, "uring");
        else if (strcmp(a, "--save") != 0) { ns_usage(); return 2; }
    }
    if (ns_value_size > NS_INBUF || !(ns_value = malloc(ns_value_size + 1))) return 2;
    memset(ns_value, 'x', ns_value_size);
    signal(SIGPIPE, SIG_IGN);
    lfd = ns_listen(port);
    if (lfd < 0) {
        perror("listen");
        return 1;
    }
    return uring ? ns_run_uring(lfd) : ns_run_epoll(lfd);
}
