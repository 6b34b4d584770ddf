/* cluster_bus.c - the cluster bus connections: the listener on the bus
 * port, one outbound link to every known node and the inbound links other
 * nodes open to us, reading whole messages off them and queueing ours, and
 * the cron that keeps them up and notices nodes that stop answering.
 *
 * Reading: a link reads what the socket has into its buffer, which grows
 * to the length the message header announces; each complete message goes
 * to cluster_process_message (cluster_gossip.c). A peer that sends a bad
 * header loses its link, never more. Writing: messages are appended to the
 * link's send buffer and written when the socket takes them (the loop
 * watches for writability only while something is queued).
 *
 * With tls-cluster yes every link is TLS from its first byte, both ways
 * (tls.h), with the certificates of the client port: the handshake runs
 * first, one step per socket event, then the same reading and writing.
 *
 * As in Redis, every node is pinged at least every node_timeout / 2; a node
 * that has not answered a ping for node_timeout is flagged PFAIL (our own
 * view); the gossip of the other masters turns that into FAIL
 * (cluster_gossip.c).
 */
#include <arpa/inet.h>
#include <errno.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>
#include "client.h"
#include "cluster.h"
#include "cluster_bus.h"
#include "config.h"
#include "event.h"
#include "frand.h"
#include "reply.h"
#include "server.h"
#include "tls.h"
#include "zmalloc.h"

#define BUS_READ_CHUNK 16384
#define HANDSHAKE_TIMEOUT_MIN_MS 1000
#define RANDOM_PING_CANDIDATES 5

static long long cron_iteration;
/* The link whose message is being processed, and whether processing freed
 * it (a message may close its own link: a renamed node, a bad header, a
 * node forgotten or re-addressed by gossip). */
static struct {
    cluster_link *link;
    int freed;
} reading;

/* ---- links -------------------------------------------------------------------- */

static cluster_link *link_new(int fd, cluster_node *n, int inbound) {
    cluster_link *l = zcalloc(sizeof *l);
    l->fd = fd;
    l->node = n;
    l->inbound = inbound;
    l->ctime = srv.now_ms;
    return l;
}

void cluster_link_free(cluster_link *l) {
    if (l == reading.link) reading.freed = 1;
    if (l->fd >= 0) {
        ev_del(srv.el, l->fd, EV_READABLE | EV_WRITABLE);
        tls_conn_free(l->tls);
        close(l->fd);
    }
    if (l->node) {
        if (l->node->link == l) l->node->link = NULL;
        if (l->node->inbound_link == l) l->node->inbound_link = NULL;
    }
    zfree(l->rbuf);
    zfree(l->sbuf);
    zfree(l);
}

void cluster_bus_node_gone(cluster_node *n) {
    if (n->link) cluster_link_free(n->link);
    if (n->inbound_link) cluster_link_free(n->inbound_link);
}

static void on_writable(evloop *el, int fd, void *data, int mask);

static void flush_link(cluster_link *l) {
    while (l->soff < l->slen) {
        ssize_t w = tls_or_plain_write(l->tls, l->fd, l->sbuf + l->soff, l->slen - l->soff);
        if (w < 0) {
            if (errno == EAGAIN || errno == EINTR) break;
            server_log(LOG_DEBUG_, "I/O error writing to node link: %s", strerror(errno));
            cluster_link_free(l);
            return;
        }
        l->soff += (size_t)w;
        l->bytes_out += (uint64_t)w;
    }
    if (l->soff == l->slen) {
        l->soff = l->slen = 0;
        ev_del(srv.el, l->fd, EV_WRITABLE);
    } else {
        ev_add(srv.el, l->fd, EV_WRITABLE, on_writable, l);
    }
}

static void on_writable(evloop *el, int fd, void *data, int mask) {
    (void)el, (void)fd, (void)mask;
    flush_link(data);
}

void cluster_link_send(cluster_link *l, const unsigned char *msg, size_t len) {
    if (l->slen + len > l->scap) {
        if (l->soff) { /* compact first */
            memmove(l->sbuf, l->sbuf + l->soff, l->slen - l->soff);
            l->slen -= l->soff;
            l->soff = 0;
        }
        if (l->slen + len > l->scap) {
            l->scap = (l->slen + len) * 2;
            l->sbuf = zrealloc(l->sbuf, l->scap);
        }
    }
    memcpy(l->sbuf + l->slen, msg, len);
    l->slen += len;
    uint16_t type = (uint16_t)(msg[CMSG_OFF_TYPE] << 8 | msg[CMSG_OFF_TYPE + 1]);
    if (type < CLUSTER_MSG_TYPES) cluster->sent[type]++;
    if (!l->connecting && !l->handshaking) ev_add(srv.el, l->fd, EV_WRITABLE, on_writable, l);
}

/* Reads what there is; each whole message is processed. */
static void on_readable(evloop *el, int fd, void *data, int mask) {
    (void)el, (void)mask;
    cluster_link *l = data;
    for (;;) {
        size_t want = CMSG_FRAME_MIN;
        if (l->rlen >= CMSG_FRAME_MIN) {
            long t = cmsg_frame(l->rbuf, l->rlen, CMSG_MAX_TOTLEN);
            if (t < 0) {
                server_log(LOG_WARNING_, "Bad message length or signature received on the Cluster bus.");
                cluster_link_free(l);
                return;
            }
            want = (size_t)t;
        }
        /* the buffer grows as bytes arrive (doubling, up to the message),
         * never to a length a peer merely declares */
        if (l->rlen == l->rcap && l->rcap < want) {
            size_t cap = l->rcap ? l->rcap * 2 : CLUSTER_LINK_RBUF_INIT;
            size_t limit = want > CLUSTER_LINK_RBUF_INIT ? want : CLUSTER_LINK_RBUF_INIT;
            l->rcap = cap < limit ? cap : limit;
            l->rbuf = zrealloc(l->rbuf, l->rcap);
        }
        size_t end = want < l->rcap ? want : l->rcap, room = end - l->rlen;
        if (room > BUS_READ_CHUNK && l->rlen >= CMSG_FRAME_MIN) room = BUS_READ_CHUNK;
        ssize_t r = tls_or_plain_read(l->tls, fd, l->rbuf + l->rlen, room);
        if (r <= 0) {
            if (r < 0 && (errno == EAGAIN || errno == EINTR)) return;
            server_log(LOG_DEBUG_, "I/O error reading from node link: %s", r == 0 ? "connection closed" : strerror(errno));
            cluster_link_free(l);
            return;
        }
        l->rlen += (size_t)r;
        l->bytes_in += (uint64_t)r;
        if (l->rlen < CMSG_FRAME_MIN || l->rlen < want || want == CMSG_FRAME_MIN) continue;
        size_t len = l->rlen;
        l->rlen = 0;
        reading.link = l;
        reading.freed = 0;
        cluster_process_message(l, l->rbuf, len);
        reading.link = NULL;
        if (reading.freed) return; /* the message closed its own link */
        if (l->rcap > CLUSTER_LINK_RBUF_INIT * 4) { /* a big message passed: give the memory back */
            l->rcap = CLUSTER_LINK_RBUF_INIT;
            l->rbuf = zrealloc(l->rbuf, l->rcap);
        }
    }
}

/* ---- TLS ------------------------------------------------------------------------- */

static void link_ready(cluster_link *l);

/* One step of a link's TLS handshake; once done the link reads and writes. */
static void on_tls_handshake(evloop *el, int fd, void *data, int mask) {
    (void)mask;
    cluster_link *l = data;
    int want_write = 0;
    char err[256];
    int r = tls_handshake(l->tls, &want_write, err, sizeof err);
    if (r < 0) {
        server_log(LOG_VERBOSE_, "TLS handshake on the cluster bus failed: %s", err);
        cluster_link_free(l);
        return;
    }
    if (want_write) ev_add(el, fd, EV_WRITABLE, on_tls_handshake, l);
    else if (ev_get_mask(el, fd) & EV_WRITABLE) ev_del(el, fd, EV_WRITABLE);
    if (r == 0) return;
    l->handshaking = 0;
    ev_add(el, fd, EV_READABLE, on_readable, l);
    if (l->inbound) {
        if (tls_has_pending(l->tls)) on_readable(el, fd, l, EV_READABLE);
        return;
    }
    link_ready(l);
}

/* With tls-cluster, start the link's handshake (0), or -1 if it cannot. */
static int start_tls(cluster_link *l) {
    if (!config_is_yes(&srv.cfg, "tls-cluster")) return 0;
    l->tls = l->inbound ? tls_conn_new(l->fd) : tls_conn_connect(l->fd);
    if (!l->tls) return -1;
    l->handshaking = 1;
    ev_add(srv.el, l->fd, EV_READABLE, on_tls_handshake, l);
    if (!l->inbound) ev_add(srv.el, l->fd, EV_WRITABLE, on_tls_handshake, l); /* the client speaks first */
    return 0;
}

/* ---- inbound ------------------------------------------------------------------- */

static void on_accept(evloop *el, int lfd, void *data, int mask) {
    (void)el, (void)data, (void)mask;
    for (int i = 0; i < 16; i++) {
        int fd = accept4(lfd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
        if (fd < 0) return;
        int one = 1;
        setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
        cluster_link *l = link_new(fd, NULL, 1);
        if (start_tls(l) != 0) {
            cluster_link_free(l);
            continue;
        }
        if (!l->tls) ev_add(srv.el, fd, EV_READABLE, on_readable, l);
    }
}

int cluster_bus_listen(void) {
    int port = cluster_bus_port();
    if (port > 65535) {
        server_log(LOG_WARNING_, "Redis port number too high. Cluster communication port is 10,000 port numbers "
                                 "higher than your Redis port. Your Redis port number must be 55535 or less.");
        return -1;
    }
    cluster->bus_nfds = 0;
    for (int i = 0; i < srv.cfg.bind_count && cluster->bus_nfds < 16; i++) {
        const char *a = srv.cfg.bind[i];
        int optional = a[0] == '-';
        if (optional) a++;
        int fd = net_listen_tcp(a, port, srv.cfg.tcp_backlog);
        if (fd < 0) {
            if (optional) continue;
            server_log(LOG_WARNING_, "Could not bind the cluster bus %s:%d: %s", a, port, strerror(errno));
            return -1;
        }
        cluster->bus_fd[cluster->bus_nfds++] = fd;
        ev_add(srv.el, fd, EV_READABLE, on_accept, NULL);
    }
    return cluster->bus_nfds ? 0 : -1;
}

/* ---- outbound ------------------------------------------------------------------- */

static void on_connected(evloop *el, int fd, void *data, int mask) {
    (void)el, (void)mask;
    cluster_link *l = data;
    int err = 0;
    socklen_t len = sizeof err;
    if (getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &len) < 0 || err) {
        server_log(LOG_VERBOSE_, "Connection with Node " CLUSTER_NAME_FMT " at %s:%d failed: %s", l->node->name,
                   l->node->ip, l->node->cport, strerror(err ? err : errno));
        cluster_link_free(l);
        return;
    }
    l->connecting = 0;
    ev_del(srv.el, fd, EV_WRITABLE);
    if (start_tls(l) != 0) {
        server_log(LOG_VERBOSE_, "Connection with Node " CLUSTER_NAME_FMT " at %s:%d failed: no TLS context",
                   l->node->name, l->node->ip, l->node->cport);
        cluster_link_free(l);
        return;
    }
    if (!l->tls) {
        ev_add(srv.el, fd, EV_READABLE, on_readable, l);
        link_ready(l);
    }
}

/* An outbound link is up (its TLS handshake done, if any). */
static void link_ready(cluster_link *l) {
    if (l->slen) ev_add(srv.el, l->fd, EV_WRITABLE, on_writable, l);
    /* ping at once, keeping the time of an older unanswered ping, so a node
     * that keeps dropping connections is still detected */
    cluster_node *n = l->node;
    int64_t old_ping = n->ping_sent;
    cluster_send_ping(l, (n->flags & CN_MEET) ? CMSG_MEET : CMSG_PING);
    if (old_ping) n->ping_sent = old_ping;
    n->flags &= ~CN_MEET;
    server_log(LOG_DEBUG_, "Connecting with Node " CLUSTER_NAME_FMT " at %s:%d", n->name, n->ip, n->cport);
}

static int connect_to(const char *ip, int port) {
    char ports[16];
    snprintf(ports, sizeof ports, "%d", port);
    struct addrinfo hints = {.ai_family = AF_UNSPEC, .ai_socktype = SOCK_STREAM, .ai_flags = AI_NUMERICHOST};
    struct addrinfo *res = NULL;
    if (getaddrinfo(ip, ports, &hints, &res) != 0) return -1;
    int fd = socket(res->ai_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    if (fd >= 0) net_bind_source(fd, res->ai_family);
    if (fd >= 0 && connect(fd, res->ai_addr, res->ai_addrlen) != 0 && errno != EINPROGRESS) {
        close(fd);
        fd = -1;
    }
    freeaddrinfo(res);
    if (fd >= 0) {
        int one = 1;
        setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    }
    return fd;
}

static void connect_node(cluster_node *n) {
    int fd = connect_to(n->ip, n->cport);
    if (fd < 0) {
        if (!n->ping_sent) n->ping_sent = srv.now_ms; /* unreachable counts as unanswered */
        server_log(LOG_DEBUG_, "Unable to connect to Cluster Node [%s]:%d -> %s", n->ip, n->cport, strerror(errno));
        return;
    }
    cluster_link *l = link_new(fd, n, 0);
    l->connecting = 1;
    n->link = l;
    ev_add(srv.el, fd, EV_WRITABLE, on_connected, l);
}

/* ---- MEET ----------------------------------------------------------------------- */

static int normalize_ip(const char *ip, char *out, size_t outlen) {
    struct in_addr a4;
    struct in6_addr a6;
    if (inet_pton(AF_INET, ip, &a4) == 1) return inet_ntop(AF_INET, &a4, out, (socklen_t)outlen) ? 0 : -1;
    if (inet_pton(AF_INET6, ip, &a6) == 1) return inet_ntop(AF_INET6, &a6, out, (socklen_t)outlen) ? 0 : -1;
    return -1;
}

int cluster_bus_start_handshake(const char *ip, int port, int cport) {
    char norm[CLUSTER_IPLEN];
    if (normalize_ip(ip, norm, sizeof norm) < 0) return -1;
    if (port <= 0 || port > 65535 || cport <= 0 || cport > 65535) return -1;
    for (int i = 0; i < cluster->nnodes; i++) { /* already meeting it */
        cluster_node *n = cluster->nodes[i];
        if ((n->flags & CN_HANDSHAKE) && !strcasecmp(n->ip, norm) && n->port == port && n->cport == cport) return 0;
    }
    cluster_node *n = cluster_node_new(NULL, CN_HANDSHAKE | CN_MEET);
    snprintf(n->ip, sizeof n->ip, "%s", norm);
    n->port = port;
    n->cport = cport;
    cluster_add_node(n);
    return 0;
}

/* ---- cron ----------------------------------------------------------------------- */

/* Once a second: ping the node (of a few random ones) whose pong is oldest. */
static void ping_random(void) {
    cluster_node *pick = NULL;
    for (int i = 0; i < RANDOM_PING_CANDIDATES && cluster->nnodes > 1; i++) {
        cluster_node *n = cluster->nodes[frand_below((uint64_t)cluster->nnodes)];
        if (!n->link || n->link->connecting || n->ping_sent || (n->flags & (CN_MYSELF | CN_HANDSHAKE))) continue;
        if (!pick || n->pong_received < pick->pong_received) pick = n;
    }
    if (pick) cluster_send_ping(pick->link, CMSG_PING);
}

/* Reconnect a link that stays silent; ping a node not pinged for half the
 * timeout; PFAIL a node that does not answer. 1 if the state may change. */
static int watch_node(cluster_node *n, long long timeout) {
    int64_t now = srv.now_ms;
    int64_t ping_delay = now - n->ping_sent, data_delay = now - n->data_received;
    cluster_link *l = n->link;
    if (l && !l->connecting && now - l->ctime > timeout && n->ping_sent && ping_delay > timeout / 2 &&
        data_delay > timeout / 2) {
        cluster_link_free(l); /* reconnected by the next cron */
        l = NULL;
    }
    /* a link still connecting takes the ping too: it goes once connected,
     * and a node we cannot reach is then timed from now */
    if (l && !n->ping_sent && now - n->pong_received > timeout / 2) {
        cluster_send_ping(l, CMSG_PING);
        return 0;
    }
    if (cluster->mf_end && cluster_is_master(cluster->myself) && cluster->mf_replica == n && l && !l->connecting) {
        cluster_send_ping(l, CMSG_PING);
        return 0;
    }
    if (!n->ping_sent) return 0;
    int64_t delay = ping_delay < data_delay ? ping_delay : data_delay;
    if (delay > timeout && !(n->flags & (CN_PFAIL | CN_FAIL))) {
        server_log(LOG_DEBUG_, "*** NODE " CLUSTER_NAME_FMT " possibly failing", n->name);
        n->flags |= CN_PFAIL;
        return 1;
    }
    return 0;
}

/* A link whose unsent output outgrew cluster-link-sendbuf-limit (a peer
 * that stopped reading) is dropped; the next cron connects again. */
static void check_sendbuf(cluster_link *l, unsigned long long limit) {
    if (!l || !limit || l->slen - l->soff <= limit) return;
    server_log(LOG_WARNING_, "Freeing cluster link(%s node " CLUSTER_NAME_FMT ", used memory: %zu) due to "
               "exceeding send buffer memory limit.", l->inbound ? "from" : "to", l->node->name, l->scap);
    cluster->links_buffer_limit_exceeded++;
    cluster_link_free(l);
}

void cluster_bus_cron(void) {
    long long timeout = cluster_node_timeout();
    long long hs_timeout = timeout < HANDSHAKE_TIMEOUT_MIN_MS ? HANDSHAKE_TIMEOUT_MIN_MS : timeout;
    cron_iteration++;
    cluster_set_own_ports();
    for (int i = 0; i < cluster->nnodes; i++) {
        cluster_node *n = cluster->nodes[i];
        if (n->flags & (CN_MYSELF | CN_NOADDR)) continue;
        if ((n->flags & CN_HANDSHAKE) && srv.now_ms - n->ctime > hs_timeout) {
            cluster_del_node(n);
            i--;
            continue;
        }
        if (!n->link) connect_node(n);
    }
    if (cron_iteration % 10 == 0) ping_random();
    unsigned long long limit = (unsigned long long)config_get_ll(&srv.cfg, "cluster-link-sendbuf-limit");
    for (int i = 0; i < cluster->nnodes; i++) {
        check_sendbuf(cluster->nodes[i]->link, limit);
        check_sendbuf(cluster->nodes[i]->inbound_link, limit);
    }
    int update = 0;
    for (int i = 0; i < cluster->nnodes; i++) {
        cluster_node *n = cluster->nodes[i];
        if (n->flags & (CN_MYSELF | CN_NOADDR | CN_HANDSHAKE)) continue;
        update |= watch_node(n, timeout);
    }
    cluster_failover_cron();
    if (update) cluster_todo(CLUSTER_TODO_UPDATE_STATE);
}

/* ---- CLUSTER LINKS --------------------------------------------------------------- */

static void link_entry(client *c, const cluster_link *l, const char *dir) {
    int events = ev_get_mask(srv.el, l->fd);
    reply_map(c, 6);
    reply_bulk_cstr(c, "direction");
    reply_bulk_cstr(c, dir);
    reply_bulk_cstr(c, "node");
    reply_bulk(c, l->node->name, CLUSTER_NAMELEN);
    reply_bulk_cstr(c, "create-time");
    reply_int(c, l->ctime);
    reply_bulk_cstr(c, "events");
    reply_bulk_cstr(c, (events & EV_READABLE) && (events & EV_WRITABLE) ? "rw" : (events & EV_WRITABLE) ? "w" : "r");
    reply_bulk_cstr(c, "send-buffer-allocated");
    reply_int(c, (long long)l->scap);
    reply_bulk_cstr(c, "send-buffer-used");
    reply_int(c, (long long)(l->slen - l->soff));
}

void cluster_bus_reply_links(client *c) {
    long n = 0;
    for (int i = 0; i < cluster->nnodes; i++) {
        cluster_node *x = cluster->nodes[i];
        n += (x->link != NULL) + (x->inbound_link != NULL);
    }
    reply_array(c, n);
    for (int i = 0; i < cluster->nnodes; i++) {
        cluster_node *x = cluster->nodes[i];
        if (x->link) link_entry(c, x->link, "to");
        if (x->inbound_link) link_entry(c, x->inbound_link, "from");
    }
}
