/* replica.c - this server as a replica: REPLICAOF's link to a primary.
 *
 * The link is a small state machine driven by the cron and by socket
 * events, as Redis's: connect (non-blocking), PING, then AUTH (masterauth)
 * and the REPLCONFs sent together and their replies read in order, then
 * PSYNC with our own replication id and offset (a server keeps the history
 * it has, so a replica that lost its link, or a primary demoted to a
 * replica of its former replica, can continue without a full sync). The
 * answer is +CONTINUE (the socket becomes the primary's client at once) or
 * +FULLRESYNC, after which the snapshot arrives as a bulk ("$<len>") or
 * diskless ("$EOF:<mark>" ... <mark>). It is written to a temporary file,
 * renamed over dbfilename and loaded, and the socket becomes the primary's
 * client: its requests run with replies off, and every complete request is
 * counted into the offset and passed on to our own replicas and backlog.
 * With tls-replication the link is TLS from its first byte (tls.h): the
 * handshake runs between connect and PING, every read and write of the
 * link goes through link_read()/link_write(), and bytes OpenSSL already
 * holds are consumed without waiting for the socket.
 */
#include "repl_int.h"
#include "blocking.h"
#include "config.h"
#include "db.h"
#include "event.h"
#include "multi.h"
#include "persist.h"
#include "propagate.h"
#include "rdb.h"
#include "repl_proto.h"
#include "sbuf.h"
#include "server.h"
#include "tls.h"
#include "tracking.h"
#include "util.h"
#include "zmalloc.h"
#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#define TRANSFER_CHUNK (64 * 1024)

static long long config_ll(const char *name) { return config_get_ll(&srv.cfg, name); }

const char *replica_link_state_name(void) {
    switch (rs.link) {
    case LINK_CONNECT: return "connect";
    case LINK_CONNECTING: return "connecting";
    case LINK_RECV_PONG: case LINK_RECV_REPLIES: case LINK_RECV_PSYNC: return "handshake";
    case LINK_TRANSFER: return "sync";
    case LINK_CONNECTED: return "connected";
    default: return "none";
    }
}

/* ---- tearing down ------------------------------------------------------------------ */

/* How a full sync's snapshot is loaded (repl-diskless-load, as Redis
 * 7.0): written to disk, then loaded (disabled, and on-empty-db while we
 * hold data); or read from the socket as it arrives, into the live
 * databases (on-empty-db, when they are empty) or into stand-ins swapped
 * in once it is whole (swapdb: a failed transfer leaves the old dataset as
 * it was). */
static int choose_stream_mode(void) {
    char *mode = config_get_by_name(&srv.cfg, "repl-diskless-load");
    int m = !mode || strcmp(mode, "disabled") == 0 ? STREAM_NONE
            : strcmp(mode, "swapdb") == 0      ? STREAM_SWAP
                                               : STREAM_LIVE;
    zfree(mode);
    if (m == STREAM_LIVE)
        for (int i = 0; i < db_count(); i++)
            if (dict_size(&db_get(i)->keys)) return STREAM_NONE;
    return m;
}

/* While a snapshot is loaded from the socket (from its first byte: a
 * primary may wait repl-diskless-sync-delay before it) the server is
 * loading (-LOADING), or, when it continues our own history and goes into
 * stand-ins, async_loading: the old dataset is served. */
static void transfer_mode(int on) {
    if (!on) {
        if (rs.transfer_flag == 1) srv.loading = 0;
        if (rs.transfer_flag == 2) srv.async_loading = 0;
        rs.transfer_flag = 0;
        return;
    }
    if (rs.stream_mode == STREAM_NONE) return;
    int same_history = memcmp(rs.psync_replid, rs.replid, REPLID_LEN) == 0;
    rs.transfer_flag = rs.stream_mode == STREAM_SWAP && same_history ? 2 : 1;
    if (rs.transfer_flag == 1) srv.loading = 1;
    else srv.async_loading = 1;
}

static void close_transfer_file(void) {
    transfer_mode(0);
    if (rs.tmp_fd >= 0) {
        close(rs.tmp_fd);
        unlink(rs.tmp_path);
        rs.tmp_fd = -1;
    }
}

/* Drop the handshake or transfer in progress; the cron connects again. */
static void cancel_handshake(void) {
    if (rs.fd >= 0) {
        ev_del(srv.el, rs.fd, EV_READABLE | EV_WRITABLE);
        tls_conn_free(rs.tls);
        rs.tls = NULL;
        close(rs.fd);
        rs.fd = -1;
    }
    close_transfer_file();
    if (rs.link != LINK_NONE && rs.link != LINK_CONNECTED) rs.link = LINK_CONNECT;
}

static void link_failed(const char *why) {
    server_log(LOG_WARNING_, "%s", why);
    cancel_handshake();
    rs.link = LINK_CONNECT;
}

void replica_master_freed(client *c) {
    if (srv.repl_master != c) return;
    server_log(LOG_NOTICE_, "Connection with master lost.");
    rs.master_db = c->db ? c->db->id : 0;
    rs.in_multi.len = 0; /* an unfinished transaction never ran: our primary sends it again */
    srv.repl_master = NULL;
    if (rs.link == LINK_CONNECTED) rs.link = srv.repl_replica ? LINK_CONNECT : LINK_NONE;
    /* down since it was marked for closing: CLIENT KILL frees it after the
     * command, maybe long after (a MULTI with DEBUG SLEEP) */
    rs.down_since_ms = c->close_ms ? c->close_ms : srv.now_ms;
}

static void drop_master(void) {
    if (srv.repl_master) client_free(srv.repl_master);
    cancel_handshake();
}

/* ---- sending and reading lines -------------------------------------------------- */

static ssize_t link_write(const char *p, size_t n) { return tls_or_plain_write(rs.tls, rs.fd, p, n); }
static ssize_t link_read(void *buf, size_t n) { return tls_or_plain_read(rs.tls, rs.fd, buf, n); }

static int send_all(const char *p, size_t n) {
    while (n) {
        ssize_t w = link_write(p, n);
        if (w < 0 && errno == EINTR) continue;
        if (w <= 0) return -1; /* the handshake's few bytes fit a fresh socket */
        p += w;
        n -= (size_t)w;
    }
    return 0;
}

/* argv[i] is lens[i] bytes (NULs allowed: masterauth is binary-safe), or
 * a C string when lens is NULL. */
static int send_argv(int argc, const char **argv, const size_t *lens) {
    sbuf b = {0};
    sb_addf(&b, "*%d\r\n", argc);
    for (int i = 0; i < argc; i++) {
        size_t n = lens ? lens[i] : strlen(argv[i]);
        sb_addf(&b, "$%zu\r\n", n);
        sb_add(&b, argv[i], n);
        sb_add(&b, "\r\n", 2);
    }
    int rc = send_all(b.p, b.len);
    zfree(b.p);
    return rc;
}

static int send_command(int argc, const char **argv) { return send_argv(argc, argv, NULL); }

/* AUTH [masteruser] masterauth, the password's bytes whole. 1 if sent
 * (rc: the send failed), 0 when there is no masterauth. */
static int send_auth(int *rc) {
    if (!srv.cfg.masterauth) return 0;
    char *user = config_get_by_name(&srv.cfg, "masteruser");
    const char *pass = srv.cfg.masterauth;
    size_t plen = srv.cfg.masterauth_len;
    const char *a3[] = {"AUTH", user, pass}, *a2[] = {"AUTH", pass};
    size_t l3[] = {4, strlen(user), plen}, l2[] = {4, plen};
    *rc |= user[0] ? send_argv(3, a3, l3) : send_argv(2, a2, l2);
    zfree(user);
    return 1;
}

/* One reply line from the socket into line (without CRLF): 1, 0 if
 * incomplete, -1 on error or EOF. Reads a byte at a time: handshake replies
 * are a few short lines, and nothing after them may be consumed. */
static int read_line(char *line, size_t cap) {
    for (;;) {
        char ch;
        ssize_t n = link_read(&ch, 1);
        if (n < 0 && (errno == EAGAIN || errno == EINTR)) return 0;
        if (n <= 0) return -1;
        rs.last_io_ms = srv.now_ms;
        if (ch == '\n') {
            if (rs.rlen && rs.rbuf[rs.rlen - 1] == '\r') rs.rlen--;
            size_t k = rs.rlen < cap - 1 ? rs.rlen : cap - 1;
            memcpy(line, rs.rbuf, k);
            line[k] = '\0';
            rs.rlen = 0;
            return 1;
        }
        if (rs.rlen < sizeof rs.rbuf) rs.rbuf[rs.rlen++] = ch;
    }
}

/* ---- the handshake --------------------------------------------------------------------- */

static void on_readable(evloop *el, int fd, void *data, int mask);

static void send_replconfs(void) {
    char port[16], *ip = config_get_by_name(&srv.cfg, "replica-announce-ip");
    long long aport = config_ll("replica-announce-port");
    int own = config_is_yes(&srv.cfg, "tls-replication") && srv.cfg.tls_port ? srv.cfg.tls_port : srv.cfg.port;
    snprintf(port, sizeof port, "%lld", aport ? aport : own);
    rs.pending_replies = 0;
    rs.auth_reply_next = 0;
    int rc = 0;
    if (send_auth(&rc)) {
        rs.pending_replies++;
        rs.auth_reply_next = 1;
    }
    const char *lp[] = {"REPLCONF", "listening-port", port};
    rc |= send_command(3, lp);
    rs.pending_replies++;
    if (ip && ip[0]) {
        const char *ia[] = {"REPLCONF", "ip-address", ip};
        rc |= send_command(3, ia);
        rs.pending_replies++;
    }
    const char *capa[] = {"REPLCONF", "capa", "eof", "capa", "psync2"};
    rc |= send_command(5, capa);
    rs.pending_replies++;
    zfree(ip);
    if (rc) link_failed("Error sending the replication handshake to MASTER");
    else rs.link = LINK_RECV_REPLIES;
}

static void send_psync(void) {
    char off[24];
    snprintf(off, sizeof off, "%lld", rs.offset + 1);
    const char *argv[] = {"PSYNC", rs.replid, off, "FAILOVER"};
    server_log(LOG_NOTICE_, "Trying a partial resynchronization (request %s:%s).", rs.replid, off);
    if (send_command(failover_in_progress() ? 4 : 3, argv) != 0) link_failed("Error sending PSYNC to MASTER");
    else rs.link = LINK_RECV_PSYNC;
}

static void on_tls_handshake(evloop *el, int fd, void *data, int mask);
static void send_ping(void);

static void on_connected(evloop *el, int fd, void *data, int mask) {
    (void)data, (void)mask;
    int err = 0;
    socklen_t len = sizeof err;
    if (getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &len) != 0 || err) {
        char why[256];
        snprintf(why, sizeof why, "Error condition on socket for SYNC: %s", strerror(err ? err : errno));
        link_failed(why);
        return;
    }
    ev_del(el, fd, EV_WRITABLE);
    if (config_is_yes(&srv.cfg, "tls-replication")) {
        rs.tls = tls_conn_connect(fd);
        if (!rs.tls) {
            link_failed("Unable to connect to MASTER: no TLS context");
            return;
        }
        ev_add(el, fd, EV_READABLE, on_tls_handshake, NULL);
        on_tls_handshake(el, fd, NULL, EV_READABLE);
        return;
    }
    send_ping();
}

/* The TLS handshake with the primary, one step per socket event. */
static void on_tls_handshake(evloop *el, int fd, void *data, int mask) {
    (void)data, (void)mask;
    int want_write = 0;
    char err[256], why[320];
    int r = tls_handshake(rs.tls, &want_write, err, sizeof err);
    if (r < 0) {
        snprintf(why, sizeof why, "Unable to connect to MASTER: TLS handshake failed: %s", err);
        link_failed(why);
        return;
    }
    if (want_write) ev_add(el, fd, EV_WRITABLE, on_tls_handshake, NULL);
    else if (ev_get_mask(el, fd) & EV_WRITABLE) ev_del(el, fd, EV_WRITABLE);
    if (r == 1) send_ping();
}

static void send_ping(void) {
    ev_add(srv.el, rs.fd, EV_READABLE, on_readable, NULL);
    server_log(LOG_NOTICE_, "Master replied to PING, replication can continue...");
    const char *ping[] = {"PING"};
    rs.link = LINK_RECV_PONG;
    rs.link_ms = srv.now_ms;
    if (send_command(1, ping) != 0) link_failed("Error sending PING to MASTER");
}

static void connect_master(void) {
    char port[16];
    snprintf(port, sizeof port, "%d", rs.port);
    struct addrinfo hints = {.ai_family = AF_UNSPEC, .ai_socktype = SOCK_STREAM}, *res = NULL;
    rs.link_ms = srv.now_ms;
    if (getaddrinfo(rs.host, port, &hints, &res) != 0) {
        server_log(LOG_WARNING_, "Unable to connect to MASTER: can't resolve %s", rs.host);
        return;
    }
    int fd = -1;
    for (struct addrinfo *ai = res; ai && fd < 0; ai = ai->ai_next) {
        fd = socket(ai->ai_family, ai->ai_socktype | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
        if (fd < 0) continue;
        net_bind_source(fd, ai->ai_family);
        if (connect(fd, ai->ai_addr, ai->ai_addrlen) != 0 && errno != EINPROGRESS) {
            close(fd);
            fd = -1;
        }
    }
    freeaddrinfo(res);
    if (fd < 0) {
        server_log(LOG_WARNING_, "Unable to connect to MASTER: %s", strerror(errno));
        return;
    }
    int one = 1;
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    rs.fd = fd;
    rs.rlen = 0;
    rs.link = LINK_CONNECTING;
    ev_add(srv.el, fd, EV_WRITABLE, on_connected, NULL);
    server_log(LOG_NOTICE_, "Connecting to MASTER %s:%d", rs.host, rs.port);
    server_log(LOG_NOTICE_, "MASTER <-> REPLICA sync started");
}

/* ---- becoming connected ---------------------------------------------------------- */

static void become_connected(void) {
    int fd = rs.fd;
    tls_conn *tls = rs.tls;
    ev_del(srv.el, fd, EV_READABLE | EV_WRITABLE);
    rs.fd = -1;
    rs.tls = NULL;
    client *m = client_create(fd);
    if (!m) {
        tls_conn_free(tls);
        rs.link = LINK_CONNECT;
        return;
    }
    m->tls = tls;
    m->repl_role = CLIENT_REPL_MASTER;
    m->flags |= CF_AUTHENTICATED | CF_OBEY | CF_REPLY_OFF;
    m->flags &= ~CF_ACL_CHECK;
    m->user = NULL;
    snprintf(m->addr, sizeof m->addr, "%s:%d", rs.host, rs.port);
    client_set_db(m, rs.master_db < db_count() ? rs.master_db : 0);
    srv.repl_master = m;
    rs.link = LINK_CONNECTED;
    rs.last_io_ms = srv.now_ms;
    rs.down_since_ms = 0;
    if (m->tls) client_start_reading(m); /* stream bytes OpenSSL already holds */
}

static void on_continue(const psync_reply *r) {
    if (r->has_id && memcmp(r->id, rs.replid, REPLID_LEN) != 0) {
        /* the primary's history has a new name: ours follows, and our replicas must hear of it */
        memcpy(rs.replid2, rs.replid, sizeof rs.replid2);
        rs.second_off = rs.offset + 1;
        memcpy(rs.replid, r->id, sizeof rs.replid);
        primary_drop_replicas();
    }
    repl_backlog_ensure();
    server_log(LOG_NOTICE_, "Successful partial resynchronization with master.");
    server_log(LOG_NOTICE_, "MASTER <-> REPLICA sync: Master accepted a Partial Resynchronization.");
    become_connected();
}

static void on_fullresync(const psync_reply *r) {
    memcpy(rs.psync_replid, r->id, sizeof rs.psync_replid);
    rs.psync_off = r->offset;
    server_log(LOG_NOTICE_, "Full resync from master: %s:%lld", r->id, r->offset);
    rs.stream_mode = choose_stream_mode();
    snprintf(rs.tmp_path, sizeof rs.tmp_path, "temp-%lld.%d.rdb", (long long)(srv.now_ms / 1000), (int)getpid());
    if (rs.stream_mode == STREAM_NONE) rs.tmp_fd = open(rs.tmp_path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (rs.stream_mode == STREAM_NONE && rs.tmp_fd < 0) {
        link_failed("Opening the temp file needed for MASTER <-> REPLICA synchronization failed");
        return;
    }
    rs.transfer_size = 0;
    rs.header_read = 0; /* the bulk header is still to come */
    rs.transfer_read = 0;
    rs.sync_start_ms = srv.now_ms;
    rs.link = LINK_TRANSFER;
}

static void fail_with(const char *what, const char *line) {
    char why[400];
    snprintf(why, sizeof why, "%s: '%.300s'", what, line);
    link_failed(why);
}

static void handshake_reply(const char *line) {
    switch (rs.link) {
    case LINK_RECV_PONG:
        /* an error that only says authentication is needed is fine: AUTH follows */
        if (line[0] == '-' && strncmp(line, "-NOAUTH", 7) && strncmp(line, "-NOPERM", 7) &&
            strncmp(line, "-ERR operation not permitted", 28))
            fail_with("Error reply to PING from master", line);
        else send_replconfs();
        return;
    case LINK_RECV_REPLIES:
        if (line[0] == '-' && rs.auth_reply_next) {
            char why[400];
            snprintf(why, sizeof why, "Unable to AUTH to MASTER: %.300s", line); /* Redis's words, unquoted */
            link_failed(why);
            return;
        }
        if (line[0] == '-') server_log(LOG_NOTICE_, "(Non critical) Master does not understand REPLCONF: %.300s", line);
        rs.auth_reply_next = 0;
        if (--rs.pending_replies == 0) send_psync();
        return;
    case LINK_RECV_PSYNC:
    {
        psync_reply r;
        int kind = repl_parse_psync_reply(line, strlen(line), &r);
        if (kind == PSYNC_FULL) on_fullresync(&r);
        else if (kind == PSYNC_CONTINUE) on_continue(&r);
        else if (kind != PSYNC_KEEPALIVE && failover_in_progress()) failover_handshake_failed();
        else if (kind != PSYNC_KEEPALIVE) fail_with("Unexpected reply to PSYNC from master", line);
    }
        if (rs.link == LINK_TRANSFER || rs.link == LINK_CONNECTED) failover_done();
        return;
    default:
        return;
    }
}

/* ---- the snapshot ---------------------------------------------------------------------- */

static void snapshot_loaded(const rdb_load_stats *st);

/* The old dataset goes, as Redis's emptyData on a full sync: a client
 * WATCHing a key that existed fails its EXEC, and every tracking client
 * is told that all its cached keys are gone. */
static void empty_data(void) {
    touch_all_watched_keys(NULL);
    tracking_invalidate_all();
    for (int i = 0; i < db_count(); i++) db_flush(db_get(i));
}

static void load_snapshot(void) {
    char path[4096], err[1024];
    char *name = config_get_by_name(&srv.cfg, "dbfilename");
    snprintf(path, sizeof path, "%s", name && name[0] ? name : "dump.rdb");
    zfree(name);
    if (fsync(rs.tmp_fd) != 0 || rename(rs.tmp_path, path) != 0) {
        link_failed("Failed trying to rename the temp DB into dump.rdb in MASTER <-> REPLICA synchronization");
        return;
    }
    close(rs.tmp_fd);
    rs.tmp_fd = -1;
    transfer_mode(0);
    server_log(LOG_NOTICE_, "MASTER <-> REPLICA sync: Flushing old data");
    empty_data();
    rdb_flush_functions();
    server_log(LOG_NOTICE_, "MASTER <-> REPLICA sync: Loading DB in memory");
    rdb_load_stats st = {.repl_stream_db = -1};
    ev_del(srv.el, rs.fd, EV_READABLE); /* clients are served during the load: not this socket */
    int rc = persist_load_for_replica(path, &st, err, sizeof err);
    if (rs.fd >= 0) ev_add(srv.el, rs.fd, EV_READABLE, on_readable, NULL);
    if (rc != 0) {
        char why[1200];
        snprintf(why, sizeof why, "Failed trying to load the MASTER synchronization DB from disk: %s", err);
        empty_data();
        link_failed(why);
        return;
    }
    snapshot_loaded(&st);
}

/* The snapshot is in: a new history, ours the primary's from it on. */
static void snapshot_loaded(const rdb_load_stats *st) {
    memcpy(rs.replid, rs.psync_replid, sizeof rs.replid);
    memset(rs.replid2, '0', REPLID_LEN);
    rs.second_off = -1;
    rs.offset = rs.psync_off;
    repl_backlog_free();
    rs.master_db = st->repl_stream_db >= 0 && st->repl_stream_db < db_count() ? st->repl_stream_db : 0; /* where the stream goes on */
    rs.has_backlog = 0;
    repl_backlog_ensure();
    server_log(LOG_NOTICE_, "MASTER <-> REPLICA sync: Finished with success");
    become_connected();
    replica_send_ack(); /* a diskless primary starts the stream on the first ACK */
}

/* Read the bulk header line ("$<len>" or "$EOF:<mark>"), skipping keep-alive newlines. */
static int transfer_header(void) {
    char line[128];
    for (;;) {
        int r = read_line(line, sizeof line);
        if (r <= 0) return r;
        if (line[0] == '-') {
            fail_with("MASTER aborted replication with an error", line + 1);
            return -2;
        }
        int h = repl_parse_bulk_header(line, strlen(line), &rs.transfer_size, rs.eofmark);
        if (h == 0) continue;
        if (h < 0) {
            fail_with("Bad protocol from MASTER, the first byte is not '$' or the length is invalid", line);
            return -2;
        }
        if (h == 2) rs.transfer_size = -1;
        rs.header_read = 1;
        if (rs.stream_mode == STREAM_NONE && rs.transfer_size < 0)
            server_log(LOG_NOTICE_, "MASTER <-> REPLICA sync: receiving streamed RDB from master with EOF to disk");
        else if (rs.stream_mode == STREAM_NONE)
            server_log(LOG_NOTICE_, "MASTER <-> REPLICA sync: receiving %lld bytes from master to disk", rs.transfer_size);
        return 1;
    }
}

static void transfer_data(void) {
    static char buf[TRANSFER_CHUNK];
    size_t want = sizeof buf;
    if (rs.transfer_size >= 0 && (long long)want > rs.transfer_size - rs.transfer_read)
        want = (size_t)(rs.transfer_size - rs.transfer_read);
    ssize_t n = want ? link_read(buf, want) : 0;
    if (n < 0 && (errno == EAGAIN || errno == EINTR)) return;
    if (want && n <= 0) {
        link_failed("I/O error trying to sync with MASTER: connection lost");
        return;
    }
    rs.last_io_ms = srv.now_ms;
    if (n > 0 && write(rs.tmp_fd, buf, (size_t)n) != n) {
        link_failed("Write error writing to the DB file on disk during MASTER <-> REPLICA sync");
        return;
    }
    rs.transfer_read += n;
    int done;
    if (rs.transfer_size < 0) { /* the last 40 bytes seen so far end the stream when they are the mark */
        repl_tail_push(rs.tail, buf, (size_t)n);
        done = repl_tail_is_mark(rs.tail, rs.transfer_read, rs.eofmark);
        if (done && ftruncate(rs.tmp_fd, rs.transfer_read - REPLID_LEN) != 0) {
            link_failed("Error truncating the RDB file received from the master");
            return;
        }
    } else {
        done = rs.transfer_read == rs.transfer_size;
    }
    if (done) load_snapshot();
}

/* ---- loading from the socket ------------------------------------------------------ */

/* The link as an rdb_source: reads wait up to a tenth of a second (the
 * loader serves clients between), fail after repl-timeout with nothing.
 * With $EOF: framing the last 40 bytes read are held back until more
 * follows, so the mark that ends the stream is never handed out. */
typedef struct link_feed {
    rdb_source src;
    int fd;                     /* the link this load reads (a REPLICAOF meanwhile closes it) */
    char held[REPLID_LEN];
    size_t nheld;
    int ended;
} link_feed;

#define FEED_WAIT_MS 100

static long feed_wait(link_feed *f) {
    if (rs.tls && tls_has_pending(rs.tls)) return 1;
    struct pollfd pf = {.fd = f->fd, .events = POLLIN};
    if (poll(&pf, 1, FEED_WAIT_MS) > 0) return 1;
    srv.now_ms = ev_now_ms();
    if (srv.now_ms - rs.last_io_ms <= config_ll("repl-timeout") * 1000) return -2;
    f->src.err = "Timeout receiving bulk data from MASTER... If the problem persists try to set the "
                 "'repl-timeout' parameter in redis.conf to a larger value.";
    return -1;
}

/* Bytes of the link, held-back ones first. */
static long feed_read(void *ud, void *buf, size_t cap) {
    link_feed *f = ud;
    char *out = buf;
    if (f->ended) return 0;
    if (rs.fd != f->fd || rs.link != LINK_TRANSFER) {
        f->src.err = "the replication link was closed during the load";
        return -1;
    }
    size_t room = cap;
    if (rs.transfer_size >= 0 && (long long)room > rs.transfer_size - rs.transfer_read)
        room = (size_t)(rs.transfer_size - rs.transfer_read);
    if (rs.transfer_size >= 0 && room == 0) return 0;
    if (rs.transfer_size < 0) {
        memcpy(out, f->held, f->nheld);
        room = cap - f->nheld;
    }
    for (;;) {
        ssize_t n = link_read(out + (rs.transfer_size < 0 ? f->nheld : 0), room);
        if (n < 0 && (errno == EAGAIN || errno == EINTR)) {
            long w = feed_wait(f);
            if (w != 1) return w;
            continue;
        }
        if (n <= 0) {
            f->src.err = "I/O error trying to sync with MASTER: connection lost";
            return -1;
        }
        rs.last_io_ms = srv.now_ms = ev_now_ms();
        rs.transfer_read += n;
        if (rs.transfer_size >= 0) return n;
        size_t all = f->nheld + (size_t)n, keep = all < REPLID_LEN ? all : REPLID_LEN;
        memcpy(f->held, out + all - keep, keep);
        f->nheld = keep;
        f->ended = keep == REPLID_LEN && memcmp(f->held, rs.eofmark, REPLID_LEN) == 0;
        if (all - keep || f->ended) return (long)(all - keep);
        room = cap - f->nheld; /* fewer than 40 bytes so far: nothing to hand out yet */
    }
}

/* A swapdb load's function libraries wait here, each a length and code. */
static void keep_library(void *ud, const char *code, size_t len) {
    sb_add(ud, (const char *)&len, sizeof len);
    sb_add(ud, code, len);
}

static void swap_libraries(const sbuf *libs) {
    rdb_flush_functions();
    for (size_t at = 0; at < libs->len;) {
        size_t len;
        memcpy(&len, libs->p + at, sizeof len);
        char why[400];
        if (rdb_add_function(libs->p + at + sizeof len, len, why, sizeof why) != 0)
            server_log(LOG_WARNING_, "MASTER <-> REPLICA sync: a function library was refused: %s", why);
        at += sizeof len + len;
    }
}

/* Load the snapshot as it arrives (the bulk header has been read). */
static void stream_snapshot(void) {
    server_log(LOG_NOTICE_, "MASTER <-> REPLICA sync: Loading DB in memory");
    transfer_mode(1);
    db *into = rs.stream_mode == STREAM_SWAP ? db_new_set(db_count()) : NULL;
    sbuf libs = {0};
    rdb_load_hooks where = {.into = into, .library = into ? keep_library : NULL, .library_ud = &libs};
    if (!into) {
        server_log(LOG_NOTICE_, "MASTER <-> REPLICA sync: Flushing old data");
        empty_data();
        rdb_flush_functions();
    }
    link_feed f = {.src = {feed_read, NULL, rs.transfer_size > 0 ? (size_t)rs.transfer_size : 0, NULL}, .fd = rs.fd};
    f.src.ud = &f;
    rdb_load_stats st = {.repl_stream_db = -1};
    char err[1024];
    ev_del(srv.el, rs.fd, EV_READABLE); /* clients are served during the load: not this socket */
    int rc = persist_stream_for_replica(&f.src, &where, rs.transfer_flag == 2, &st, err, sizeof err);
    int cancelled = rs.fd != f.fd || rs.link != LINK_TRANSFER;
    if (rc == 0 && !cancelled && into) {
        for (int i = 0; i < db_count(); i++) touch_watched_keys_replaced(db_get(i), &into[i]);
        for (int i = 0; i < db_count(); i++) db_swap(db_get(i), &into[i]);
        tracking_invalidate_all(); /* as Redis's swap of the loaded dataset in */
        swap_libraries(&libs);
    }
    sb_free(&libs);
    if (into) db_free_set(into, db_count()); /* the old dataset, or the half-loaded one */
    else if (rc != 0 || cancelled)
        empty_data();
    transfer_mode(0);
    if (cancelled) return;
    ev_add(srv.el, rs.fd, EV_READABLE, on_readable, NULL);
    if (rc != 0) {
        server_log(LOG_WARNING_, "Internal error in RDB reading from the MASTER: %s", err);
        link_failed("Failed trying to load the MASTER synchronization DB from socket, check server logs.");
        return;
    }
    snapshot_loaded(&st);
}

static void link_readable(void) {
    if (rs.link == LINK_TRANSFER) {
        if (!rs.header_read) {
            int r = transfer_header();
            if (r == -1) link_failed("I/O error reading bulk count from MASTER");
            if (r <= 0) return;
            if (rs.stream_mode != STREAM_NONE) {
                stream_snapshot();
                return;
            }
        }
        transfer_data();
        return;
    }
    char line[512];
    while (rs.link >= LINK_RECV_PONG && rs.link <= LINK_RECV_PSYNC) {
        int r = read_line(line, sizeof line);
        if (r == 0) return;
        if (r < 0) {
            link_failed("Master closed the connection during the replication handshake");
            return;
        }
        handshake_reply(line);
    }
}

/* Over TLS, a transfer's bytes may already sit inside OpenSSL, where the
 * socket's readiness does not show them. */
static void on_readable(evloop *el, int fd, void *data, int mask) {
    (void)el, (void)fd, (void)data, (void)mask;
    srv.now_ms = ev_now_ms();
    do link_readable();
    while (rs.tls && rs.link == LINK_TRANSFER && tls_has_pending(rs.tls));
}

/* ---- the stream ---------------------------------------------------------------------- */

/* A transaction counts once its EXEC has run (as Redis's replica offsets):
 * until then its bytes wait, so neither our offset nor a snapshot taken for
 * our own replicas ever stands inside one (a sub-replica would get an EXEC
 * without its MULTI, and lose the writes). */
void replica_applied(client *c, const char *p, size_t n) {
    rs.last_io_ms = srv.now_ms;
    if (c->flags & CF_MULTI) {
        sb_add(&rs.in_multi, p, n);
        return;
    }
    if (rs.in_multi.len) {
        repl_stream_add(rs.in_multi.p, rs.in_multi.len);
        rs.in_multi.len = 0;
    }
    repl_stream_add(p, n);
}

void replica_send_ack(void) {
    client *m = srv.repl_master;
    if (!m) return;
    char off[24], line[96];
    int ol = snprintf(off, sizeof off, "%lld", rs.offset);
    int n = snprintf(line, sizeof line, "*3\r\n$8\r\nREPLCONF\r\n$3\r\nACK\r\n$%d\r\n%s\r\n", ol, off);
    ring_append(&m->out, line, (size_t)n);
    client_mark_pending(m);
    rs.last_ack_ms = srv.now_ms;
}

/* ---- REPLICAOF -------------------------------------------------------------------------- */

void replica_set_master(const char *host, int port) {
    if (!srv.repl_replica)
        blocking_unblock_all("UNBLOCKED force unblock from blocking operation, instance state changed (master -> replica?)");
    drop_master();
    zfree(rs.host);
    rs.host = zstrdup(host);
    rs.port = port;
    char value[300];
    snprintf(value, sizeof value, "%s %d", host, port);
    config_set_internal(&srv.cfg, "replicaof", value);
    srv.repl_replica = 1;
    repl_update_checks();
    repl_backlog_ensure(); /* our history so far is what we offer our primary to continue from */
    rs.link = LINK_CONNECT;
    rs.down_since_ms = 0;
    server_log(LOG_NOTICE_, "Connecting to MASTER %s:%d", host, port);
    connect_master();
}

void replica_unset_master(void) {
    if (!srv.repl_replica) return;
    drop_master();
    zfree(rs.host);
    rs.host = NULL;
    config_set_internal(&srv.cfg, "replicaof", "");
    rs.link = LINK_NONE;
    srv.repl_replica = 0;
    repl_update_checks();
    repl_shift_ids();
    primary_drop_replicas(); /* they continue from us under the new id */
    prop_stream_restart();
    server_log(LOG_NOTICE_, "MASTER MODE enabled (user request from 'id=0')");
}

void replica_cron(void) {
    if (!srv.repl_replica) return;
    long long timeout = config_ll("repl-timeout") * 1000;
    if (rs.link == LINK_CONNECT) {
        if (srv.now_ms - rs.link_ms >= 1000) connect_master(); /* a retry a second, as Redis's replication cron */
        return;
    }
    if (rs.link > LINK_CONNECT && rs.link < LINK_CONNECTED) {
        int64_t since = rs.link == LINK_TRANSFER ? rs.last_io_ms : rs.link_ms;
        if (srv.now_ms - since > timeout) link_failed(rs.link == LINK_TRANSFER ? "Timeout receiving bulk data from MASTER... If the problem persists try to set the 'repl-timeout' parameter in redis.conf to a larger value." : "Timeout connecting to the MASTER...");
        return;
    }
    if (rs.link == LINK_CONNECTED && srv.repl_master) {
        if (srv.now_ms - srv.repl_master->last_interaction_ms > timeout) {
            server_log(LOG_WARNING_, "MASTER timeout: no data nor PING received...");
            client_free(srv.repl_master);
            return;
        }
        if (srv.now_ms - rs.last_ack_ms >= 1000) replica_send_ack();
    }
}
