/* null_server.c - ferry-null-server: request framing, fixed replies, the
 * epoll backend and main(). See null.h for why this program exists.
 *
 * Framing (frame.c) is real: a request is complete only when its last bulk's
 * CRLF has arrived, pipelined requests are all answered, a partial one waits
 * for more bytes. So the server does the same syscalls per request as ferry
 * and redis-server: one read() per readable connection and one write() of
 * all the replies that read produced.
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

#define NS_EVENTS    256
#define NS_IOV       1024         /* IOV_MAX on Linux */

/* ---- epoll backend: level-triggered, read() then write() per connection */

static void ns_epoll_close(int ep, ns_conn *c) {
    epoll_ctl(ep, EPOLL_CTL_DEL, c->fd, NULL);
    close(c->fd);
    ns_conn_free(c);
}

/* Writes pending output (one write() when it is one piece, else writev()
 * of the buffer's pieces and the referenced bulks); waits for EPOLLOUT (and
 * stops reading) while the socket is full. Returns -1 if the connection
 * failed. */
static int ns_epoll_flush(int ep, ns_conn *c) {
    struct epoll_event ev = {.data.ptr = c};
    struct iovec iov[NS_IOV];
    while (ns_out_pending(&c->out)) {
        int n = ns_out_iov(&c->out, iov, NS_IOV);
        ssize_t w = n == 1 ? write(c->fd, iov[0].iov_base, iov[0].iov_len) : writev(c->fd, iov, n);
        if (w < 0) {
            if (errno == EINTR) continue;
            if (errno != EAGAIN) return -1;
            break;
        }
        ns_out_consume(&c->out, (size_t)w);
    }
    if (ns_out_pending(&c->out) != c->want_out) { /* switch between reading and draining */
        c->want_out = ns_out_pending(&c->out);
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
        c->out.by_ref = 1;
        ev.data.ptr = c;
        if (epoll_ctl(ep, EPOLL_CTL_ADD, fd, &ev) < 0) { close(fd); ns_conn_free(c); }
    }
}

static void ns_epoll_event(int ep, ns_conn *c, uint32_t events) {
    if (events & EPOLLOUT) {
        if (ns_epoll_flush(ep, c) < 0) ns_epoll_close(ep, c);
        return;
    }
    /* straight into the connection's input buffer, as much as it has room
     * for (ferry reads 256 KB into its shared buffer): the only copy made
     * here is moving a partial request to the front, a fraction of a big
     * SET's bytes, so the ceiling stays above a server that reads big
     * values into place */
    size_t room = sizeof c->in - c->inlen; /* 0: one request larger than the buffer */
    ssize_t r = room ? read(c->fd, c->in + c->inlen, room) : 0;
    if (r < 0 && (errno == EAGAIN || errno == EINTR)) return;
    if (r <= 0 || ns_conn_took(c, (size_t)r) < 0) {
        ns_epoll_close(ep, c);
        return;
    }
    if (ns_out_pending(&c->out) && ns_epoll_flush(ep, c) < 0) ns_epoll_close(ep, c);
}

int ns_run_epoll(int lfd) {
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
            else ns_epoll_event(ep, evs[i].data.ptr, evs[i].events);
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
    fputs("Usage: ferry-null-server --port N [--io epoll|uring] [--value-size D] [--bulk-ref-min B] [--rcvbuf N]\n"
          "A RESP server with no data: every request gets a fixed reply\n"
          "(GET: a D-byte bulk, default 64; MGET: D-byte bulks; INCR/DECR/INCRBY: :1;\n"
          "PING: +PONG; CONFIG: *0; anything else: +OK). Binds 127.0.0.1.\n"
          "epoll: bulks of D >= B bytes (default 4096) are written by writev from\n"
          "their one encoded copy, not copied into the output buffer.\n"
          "--rcvbuf N: SO_RCVBUF of accepted sockets, as ferry's tcp-rcvbuf (default 0: the kernel's).\n"
          "Exit status 3: --io uring and io_uring is unavailable.\n"
          "--save X is accepted and ignored (argument compatibility with the servers).\n",
          stderr);
}

int main(int argc, char **argv) {
    int port = 6379, uring = 0, i, lfd;
    size_t value_size = 64;
    for (i = 1; i < argc; i += 2) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (!strcmp(a, "--help")) { ns_usage(); return 0; }
        if (!v) { ns_usage(); return 2; }
        if (!strcmp(a, "--port")) port = atoi(v);
        else if (!strcmp(a, "--value-size")) value_size = (size_t)strtoul(v, NULL, 10);
        else if (!strcmp(a, "--bulk-ref-min")) ns_ref_min = (size_t)strtoul(v, NULL, 10);
        else if (!strcmp(a, "--rcvbuf")) ns_rcvbuf = atoi(v);
        else if (!strcmp(a, "--io") && (!strcmp(v, "epoll") || !strcmp(v, "uring"))) uring = !strcmp(v, "uring");
        else if (strcmp(a, "--save") != 0) { ns_usage(); return 2; }
    }
    if (ns_set_value_size(value_size) < 0) return 2;
    signal(SIGPIPE, SIG_IGN);
    lfd = ns_listen(port);
    if (lfd < 0) {
        perror("listen");
        return 1;
    }
    return uring ? ns_run_uring(lfd) : ns_run_epoll(lfd);
}
