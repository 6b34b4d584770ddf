/* net.c - listening sockets and accept.
 *
 * Binds every address of `bind` (a leading '-' marks an address that may be
 * unavailable, as in Redis) on `port` (0: no TCP listener, as in Redis),
 * the same addresses on `tls-port` for TLS clients (tls.h: their handshake
 * runs in the client's own event handlers, so a peer that stalls in it
 * stalls nobody), and the `unixsocket` path when one is configured.
 * accept4() runs in a
 * bounded loop per readiness event. EMFILE/ENFILE do not stop the listeners
 * and do not spin: their read interest is dropped and re-armed by a timer
 * 100 ms later. Connections over maxclients, and non-loopback peers while
 * protected mode applies (protmode.c; a Unix socket peer is local), get
 * Redis's error text and are closed at once. Unix socket clients are made
 * like TCP ones (client_create) minus the TCP options, named by the socket's
 * path (CLIENT LIST addr=<path>:0) and flagged CF_UNIX_SOCKET.
 */
#include "client.h"
#include "config.h"
#include "protmode.h"
#include "reply.h"
#include "server.h"
#include "tls.h"
#include "zmalloc.h"
#include <arpa/inet.h>
#include <errno.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#define MAX_ACCEPTS_PER_CALL 1000
#define ACCEPT_BACKOFF_MS 100

static void accept_handler(evloop *el, int fd, void *data, int mask);

/* The Unix socket listener, -1 when none. The accept handler's data is
 * UNIX_LISTENER for it, TLS_LISTENER for the tls-port ones, NULL for TCP. */
static int unix_fd = -1;
static char unix_listener_tag, tls_listener_tag;
#define UNIX_LISTENER ((void *)&unix_listener_tag)
#define TLS_LISTENER ((void *)&tls_listener_tag)

/* Redis builds a TLS context only when something uses it: a tls-port, or
 * replication or the cluster bus over TLS. */
int net_tls_configure(void) {
    int wanted = srv.cfg.tls_port || config_is_yes(&srv.cfg, "tls-replication") ||
                 config_is_yes(&srv.cfg, "tls-cluster");
    return wanted ? tls_configure() : 0;
}

static void format_addr(const struct sockaddr_storage *sa, char *buf, size_t cap) {
    char ip[INET6_ADDRSTRLEN] = "?";
    int port = 0;
    if (sa->ss_family == AF_INET) {
        const struct sockaddr_in *s = (const struct sockaddr_in *)sa;
        inet_ntop(AF_INET, &s->sin_addr, ip, sizeof ip);
        port = ntohs(s->sin_port);
        snprintf(buf, cap, "%s:%d", ip, port);
    } else if (sa->ss_family == AF_INET6) {
        const struct sockaddr_in6 *s = (const struct sockaddr_in6 *)sa;
        inet_ntop(AF_INET6, &s->sin6_addr, ip, sizeof ip);
        port = ntohs(s->sin6_port);
        snprintf(buf, cap, "%s:%d", ip, port);
    } else {
        snprintf(buf, cap, "?:0");
    }
}

int net_listen_tcp(const char *addr, int port, int backlog) {
    char portstr[16];
    struct addrinfo hints, *res, *p;
    memset(&hints, 0, sizeof hints);
    hints.ai_family = strchr(addr, ':') ? AF_INET6 : AF_INET;
    hints.ai_socktype = SOCK_STREAM;
    hints.ai_flags = AI_PASSIVE;
    snprintf(portstr, sizeof portstr, "%d", port);
    if (strcmp(addr, "*") == 0) addr = NULL, hints.ai_family = AF_INET;
    else if (strcmp(addr, "::*") == 0) addr = NULL, hints.ai_family = AF_INET6;
    if (getaddrinfo(addr, portstr, &hints, &res) != 0) return -1;
    int fd = -1;
    for (p = res; p; p = p->ai_next) {
        fd = socket(p->ai_family, p->ai_socktype | SOCK_NONBLOCK | SOCK_CLOEXEC, p->ai_protocol);
        if (fd == -1) continue;
        int yes = 1;
        setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &yes, sizeof yes);
        if (p->ai_family == AF_INET6) setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &yes, sizeof yes);
        if (bind(fd, p->ai_addr, p->ai_addrlen) == 0 && listen(fd, backlog) == 0) break;
        close(fd);
        fd = -1;
    }
    freeaddrinfo(res);
    return fd;
}

static void close_listeners(const int *fds, int n) {
    for (int i = 0; i < n; i++) {
        ev_del(srv.el, fds[i], EV_READABLE);
        close(fds[i]);
    }
}

/* Every address of `bind` on port into fds (the accept handler gets tag);
 * on failure none stays open. */
static int listen_on(int port, int *fds, int *count, void *tag, const char *kind) {
    *count = 0;
    if (port == 0) return 0;
    for (int i = 0; i < srv.cfg.bind_count; i++) {
        const char *a = srv.cfg.bind[i];
        int optional = a[0] == '-';
        if (optional) a++;
        int fd = net_listen_tcp(a, port, srv.cfg.tcp_backlog);
        if (fd == -1) {
            if (optional) {
                server_log(LOG_NOTICE_, "Could not bind optional address %s:%d: %s", a, port, strerror(errno));
                continue;
            }
            server_log(LOG_WARNING_, "Warning: Could not create server %s listening socket %s:%d: %s", kind, a, port,
                       strerror(errno));
            close_listeners(fds, *count);
            *count = 0;
            return -1;
        }
        fds[(*count)++] = fd;
        ev_add(srv.el, fd, EV_READABLE, accept_handler, tag);
    }
    return *count > 0 || srv.cfg.bind_count == 0 ? 0 : -1; /* bind "": no TCP listener, as Redis */
}

void net_bind_source(int fd, int family) {
    char *a = config_get_by_name(&srv.cfg, "bind-source-addr");
    if (a && a[0]) {
        struct addrinfo hints = {.ai_family = family, .ai_socktype = SOCK_STREAM,
                                 .ai_flags = AI_NUMERICHOST | AI_PASSIVE}, *res = NULL;
        int rc = getaddrinfo(a, NULL, &hints, &res);
        if (rc != 0) server_log(LOG_NOTICE_, "bind-source-addr %s: %s", a, gai_strerror(rc));
        else if (bind(fd, res->ai_addr, res->ai_addrlen) != 0)
            server_log(LOG_NOTICE_, "bind-source-addr %s: %s", a, strerror(errno));
        if (res) freeaddrinfo(res);
    }
    zfree(a);
}

int net_listen_all(void) {
    srv.listen_count = srv.tls_count = 0; /* the caller has what was there before */
    if (listen_on(srv.cfg.port, srv.listen_fds, &srv.listen_count, NULL, "TCP") != 0) return -1;
    if (listen_on(srv.cfg.tls_port, srv.tls_fds, &srv.tls_count, TLS_LISTENER, "TLS") == 0) return 0;
    close_listeners(srv.listen_fds, srv.listen_count);
    srv.listen_count = 0;
    return -2;
}

/* unlink() first: a file left by a server that did not exit cleanly would
 * make bind() fail (Redis does the same, whatever the file is). */
int net_listen_unix(char *err, size_t errlen) {
    const char *path = srv.cfg.unixsocket;
    struct sockaddr_un sa;
    if (!path) return 0;
    if (strlen(path) > sizeof sa.sun_path - 1) {
        snprintf(err, errlen, "unix socket path too long (%zu), must be under %zu", strlen(path), sizeof sa.sun_path);
        return -1;
    }
    unlink(path);
    int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    if (fd == -1) {
        snprintf(err, errlen, "creating socket: %s", strerror(errno));
        return -1;
    }
    memset(&sa, 0, sizeof sa);
    sa.sun_family = AF_UNIX;
    memcpy(sa.sun_path, path, strlen(path) + 1);
    const char *step = "bind";
    if (bind(fd, (struct sockaddr *)&sa, sizeof sa) == 0) {
        step = "listen";
        if (listen(fd, srv.cfg.tcp_backlog) == 0) {
            if (srv.cfg.unixsocketperm) chmod(path, (mode_t)srv.cfg.unixsocketperm);
            unix_fd = fd;
            ev_add(srv.el, fd, EV_READABLE, accept_handler, UNIX_LISTENER);
            return 0;
        }
    }
    snprintf(err, errlen, "%s: %s", step, strerror(errno));
    close(fd);
    return -1;
}

int net_listening(void) { return srv.listen_count + srv.tls_count + (unix_fd != -1); }

void net_close_unix(void) {
    if (unix_fd == -1) return;
    ev_del(srv.el, unix_fd, EV_READABLE);
    close(unix_fd);
    unix_fd = -1;
    server_log(LOG_NOTICE_, "Removing the unix socket file.");
    if (unlink(srv.cfg.unixsocket) != 0)
        server_log(LOG_WARNING_, "Error removing the unix socket file: %s", strerror(errno));
}

static long rearm_listeners(evloop *el, long long id, void *data) {
    for (int i = 0; i < srv.listen_count; i++)
        if (!(ev_get_mask(el, srv.listen_fds[i]) & EV_READABLE))
            ev_add(el, srv.listen_fds[i], EV_READABLE, accept_handler, NULL);
    for (int i = 0; i < srv.tls_count; i++)
        if (!(ev_get_mask(el, srv.tls_fds[i]) & EV_READABLE))
            ev_add(el, srv.tls_fds[i], EV_READABLE, accept_handler, TLS_LISTENER);
    if (unix_fd != -1 && !(ev_get_mask(el, unix_fd) & EV_READABLE))
        ev_add(el, unix_fd, EV_READABLE, accept_handler, UNIX_LISTENER);
    return -1;
}

static void accept_backoff(evloop *el) {
    static int64_t last_log;
    for (int i = 0; i < srv.listen_count; i++) ev_del(el, srv.listen_fds[i], EV_READABLE);
    for (int i = 0; i < srv.tls_count; i++) ev_del(el, srv.tls_fds[i], EV_READABLE);
    if (unix_fd != -1) ev_del(el, unix_fd, EV_READABLE);
    ev_timer_add(el, ACCEPT_BACKOFF_MS, rearm_listeners, NULL);
    if (srv.now_ms - last_log > 1000) {
        last_log = srv.now_ms;
        server_log(LOG_WARNING_, "Accepting client connection: %s (pausing accept for %d ms)", strerror(errno),
                   ACCEPT_BACKOFF_MS);
    }
}

/* ---- tcp-rcvbuf (ferry's own) -----------------------------------------------
 *
 * A client on the same host (loopback, a container's veth) that pipelines
 * more than the socket's receive window holds, 100 SETs of 4 KB say, has the
 * rest of its request sent by the kernel when the window reopens, and it
 * reopens inside the server's read(): the server's CPU then runs the
 * client's transmission and the loopback delivery of every segment. The
 * kernel's autotuning starts at tcp_rmem's default (128 KB, a window of half
 * that) and grows with what one RTT carries, which on loopback is little.
 * Measured here (C=50, 4 KB SET): P=100 took 2.6 us of server CPU per
 * request against 1.5 at P=16, and 1.45 at both with a 1 MB buffer. So
 * accepted TCP clients get SO_RCVBUF = tcp-rcvbuf (default 4 MB; 0 leaves
 * the kernel's autotuning). The kernel caps SO_RCVBUF at net.core.rmem_max
 * and a capped buffer (Debian's default max is 208 KB) would be smaller than
 * what autotuning reaches, so above rmem_max the option is not set and one
 * warning says so. Memory is the kernel's and is only taken by bytes sent
 * and not yet read, which the kernel's tcp_mem limits bound as before. */
#define RMEM_MAX_PATH "/proc/sys/net/core/rmem_max"

static long long read_rmem_max(void) {
    FILE *f = fopen(RMEM_MAX_PATH, "r");
    long long v = -1;
    if (f) {
        if (fscanf(f, "%lld", &v) != 1) v = -1;
        fclose(f);
    }
    return v;
}

typedef struct rcvbuf_choice {
    long long asked; /* the tcp-rcvbuf this was decided for, -1 before the first */
    int use;         /* SO_RCVBUF to set, 0 = none */
} rcvbuf_choice;

static rcvbuf_choice rcvbuf = {-1, 0};

static int client_rcvbuf(void) {
    if (rcvbuf.asked == srv.cfg.tcp_rcvbuf) return rcvbuf.use;
    rcvbuf.asked = srv.cfg.tcp_rcvbuf;
    rcvbuf.use = (int)rcvbuf.asked;
    long long max = read_rmem_max();
    if (rcvbuf.use > 0 && max >= 0 && rcvbuf.use > max) {
        server_log(LOG_WARNING_, "WARNING: tcp-rcvbuf %lld is above %s (%lld): client sockets keep the kernel's "
                   "receive buffer autotuning. Raise net.core.rmem_max to use it.", rcvbuf.asked, RMEM_MAX_PATH, max);
        rcvbuf.use = 0;
    }
    return rcvbuf.use;
}

static void setup_client_socket(int cfd) {
    int yes = 1, rb = client_rcvbuf();
    setsockopt(cfd, IPPROTO_TCP, TCP_NODELAY, &yes, sizeof yes);
    if (rb > 0) setsockopt(cfd, SOL_SOCKET, SO_RCVBUF, &rb, sizeof rb);
    if (srv.cfg.tcp_keepalive > 0) {
        setsockopt(cfd, SOL_SOCKET, SO_KEEPALIVE, &yes, sizeof yes);
#ifdef TCP_KEEPIDLE
        int idle = srv.cfg.tcp_keepalive, intvl = srv.cfg.tcp_keepalive / 3 ? srv.cfg.tcp_keepalive / 3 : 1, cnt = 3;
        setsockopt(cfd, IPPROTO_TCP, TCP_KEEPIDLE, &idle, sizeof idle);
        setsockopt(cfd, IPPROTO_TCP, TCP_KEEPINTVL, &intvl, sizeof intvl);
        setsockopt(cfd, IPPROTO_TCP, TCP_KEEPCNT, &cnt, sizeof cnt);
#endif
    }
}

/* A refused connection: one best-effort write of the reason, then close.
 * Counted as rejected, not as received (as Redis). */
static void refuse(int cfd, const char *msg, size_t len) {
    ssize_t w = len ? write(cfd, msg, len) : 0;
    (void)w;
    srv.stats.rejected_conn++;
    close(cfd);
}

/* ---- TLS: the handshake in the client's own handlers ------------------------------- */

static void tls_handshake_event(evloop *el, int fd, void *data, int mask);

/* Protected mode is decided once the handshake is done, so that the refusal
 * reaches the peer encrypted, as Redis sends it. */
static void tls_established(client *c) {
    struct sockaddr_storage sa;
    socklen_t salen = sizeof sa;
    if (srv.cfg.protected_mode && !srv.cfg.requirepass && getpeername(c->fd, (struct sockaddr *)&sa, &salen) == 0 &&
        protected_mode_refuses(1, 0, &sa)) {
        ev_del(srv.el, c->fd, EV_READABLE); /* nothing more is read: the handshake handler would run again */
        reply_raw(c, PROTECTED_MODE_DENIED, PROTECTED_MODE_DENIED_LEN);
        c->flags |= CF_CLOSE_AFTER_REPLY;
        srv.stats.rejected_conn++;
        return;
    }
    client_start_reading(c);
}

static void tls_step(client *c) {
    int want_write = 0, armed = ev_get_mask(srv.el, c->fd) & EV_WRITABLE;
    char err[256];
    int r = tls_handshake(c->tls, &want_write, err, sizeof err);
    if (r < 0) {
        server_log(LOG_VERBOSE_, "Error accepting a client connection: %s (addr=%s laddr=%s)", err, c->addr, c->laddr);
        client_free(c);
        return;
    }
    if (want_write && !armed) ev_add(srv.el, c->fd, EV_WRITABLE, tls_handshake_event, c);
    if (!want_write && armed) ev_del(srv.el, c->fd, EV_WRITABLE);
    if (r == 1) tls_established(c);
}

static void tls_handshake_event(evloop *el, int fd, void *data, int mask) {
    (void)el, (void)fd, (void)mask;
    srv.now_ms = ev_now_ms();
    tls_step(data);
}

/* A client accepted on a tls-port listener reads nothing before its handshake. */
static void start_tls(client *c) {
    c->tls = tls_conn_new(c->fd);
    if (!c->tls) {
        server_log(LOG_WARNING_, "Error creating a TLS connection for %s", c->addr);
        client_free(c);
        return;
    }
    ev_add(srv.el, c->fd, EV_READABLE, tls_handshake_event, c);
    tls_step(c);
}

static void accept_handler(evloop *el, int fd, void *data, int mask) {
    srv.now_ms = ev_now_ms();
    for (int i = 0; i < MAX_ACCEPTS_PER_CALL; i++) {
        struct sockaddr_storage sa;
        socklen_t salen = sizeof sa;
        int cfd = accept4(fd, (struct sockaddr *)&sa, &salen, SOCK_NONBLOCK | SOCK_CLOEXEC);
        if (cfd == -1) {
            if (errno == EINTR) continue;
            if (errno == EMFILE || errno == ENFILE || errno == ENOBUFS || errno == ENOMEM) accept_backoff(el);
            else if (errno != EAGAIN && errno != ECONNABORTED)
                server_log(LOG_WARNING_, "Accepting client connection: %s", strerror(errno));
            return;
        }
        if ((long long)srv.nclients >= srv.cfg.maxclients || cfd >= el->setsize) {
            static const char err[] = "-ERR max number of clients reached\r\n";
            refuse(cfd, err, data == TLS_LISTENER ? 0 : sizeof err - 1); /* no clear text to a TLS peer (as Redis) */
            continue;
        }
        if (data != TLS_LISTENER && protected_mode_refuses(srv.cfg.protected_mode, srv.cfg.requirepass != NULL, &sa)) {
            srv.next_client_id++; /* Redis creates the client before refusing it */
            refuse(cfd, PROTECTED_MODE_DENIED, PROTECTED_MODE_DENIED_LEN);
            continue;
        }
        srv.stats.numconnections++;
        if (data == UNIX_LISTENER) {
            client *c = client_create(cfd);
            if (!c) continue;
            c->flags |= CF_UNIX_SOCKET;
            snprintf(c->addr, sizeof c->addr, "%s:0", srv.cfg.unixsocket); /* both ends, as Redis names them */
            snprintf(c->laddr, sizeof c->laddr, "%s:0", srv.cfg.unixsocket);
            server_log(LOG_VERBOSE_, "Accepted connection to %s", srv.cfg.unixsocket);
            continue;
        }
        setup_client_socket(cfd);
        client *c = client_create(cfd);
        if (!c) continue; /* client_create closed it */
        format_addr(&sa, c->addr, sizeof c->addr);
        struct sockaddr_storage la;
        socklen_t lalen = sizeof la;
        if (getsockname(cfd, (struct sockaddr *)&la, &lalen) == 0) format_addr(&la, c->laddr, sizeof c->laddr);
        server_log(LOG_VERBOSE_, "Accepted %s", c->addr);
        if (data == TLS_LISTENER) start_tls(c);
    }
}

/* CONFIG SET port/bind: the new addresses are bound before the old
 * listeners close, so a port in use leaves the server listening where it
 * was; only when the new set collides with the old one (the same port) are
 * the old listeners closed first. -1 (and no listener) if the new
 * addresses can't be bound: the caller puts the old values back and calls
 * this again. The tls-port listeners are rebound with them. */
int net_rebind(void) {
    int old[CONFIG_MAX_BIND + 1], nold = srv.listen_count, oldtls[CONFIG_MAX_BIND + 1], noldtls = srv.tls_count;
    memcpy(old, srv.listen_fds, sizeof(int) * (size_t)nold);
    memcpy(oldtls, srv.tls_fds, sizeof(int) * (size_t)noldtls);
    if (net_listen_all() == 0) {
        close_listeners(old, nold);
        close_listeners(oldtls, noldtls);
        return 0;
    }
    close_listeners(old, nold);
    close_listeners(oldtls, noldtls);
    if (net_listen_all() == 0) return 0;
    server_log(LOG_WARNING_, "Failed to bind to specified addresses.");
    return -1;
}
