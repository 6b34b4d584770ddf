/* cmd_migrate.c - MIGRATE host port key|"" db timeout [COPY] [REPLACE]
 * [AUTH password | AUTH2 username password] [KEYS key ...], as Redis 7.0.
 *
 * Why: moving keys to another server without a client in the middle
 * (redis-cli --cluster, migration tools). Each key goes as its DUMP payload
 * in `RESTORE key ttl payload [REPLACE]` (RESTORE-ASKING in cluster mode,
 * so a target still importing the slot accepts it), preceded by AUTH and by SELECT
 * when the target connection is not in that database yet; everything is
 * written at once, then the replies are read. As in Redis the transfer
 * blocks the server: connect, write and read each wait at most the
 * timeout. Target connections are cached per host and port and closed by
 * the cron after 10 s unused. Keys the target accepted are deleted here
 * (unless COPY) and propagated as one DEL.
 *
 * The small blocking-socket helpers live here too: nothing else in ferry
 * makes outgoing connections, and none of this touches the event loop.
 */
#include "migrate.h"
#include "command.h"
#include "db.h"
#include "dict.h"
#include "lazyfree.h"
#include "monitor.h"
#include "multi.h"
#include "notify.h"
#include "propagate.h"
#include "rdb.h"
#include "rdb_io.h"
#include "rdb_value.h"
#include "reply.h"
#include "sbuf.h"
#include "server.h"
#include "util.h"
#include "zmalloc.h"
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#define MIG_CACHE_MAX 64            /* cached target connections, as Redis */
#define MIG_CACHE_TTL_MS 10000      /* closed once unused for longer */
#define MIG_CHUNK (64 * 1024)       /* written per wait on the socket */
#define MIG_LINE 1024               /* reply line kept (longer ones are cut) */

#ifdef MSG_NOSIGNAL
#define MIG_SEND_FLAGS MSG_NOSIGNAL
#else
#define MIG_SEND_FLAGS 0
#endif

/* ------------------------------------------------ blocking socket helpers */

static int64_t mono_ms(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* Waits up to ms for events on fd: 1 ready, 0 timed out (errno ETIMEDOUT),
 * -1 on error. */
static int wait_fd(int fd, short events, long ms) {
    struct pollfd p = {.fd = fd, .events = events};
    int r;
    do r = poll(&p, 1, ms > INT_MAX ? INT_MAX : (int)ms);
    while (r < 0 && errno == EINTR);
    if (r == 0) errno = ETIMEDOUT;
    return r;
}

static int try_connect(const struct addrinfo *ai) {
    int fd = socket(ai->ai_family, ai->ai_socktype, ai->ai_protocol);
    if (fd < 0) return -1;
    int fl = fcntl(fd, F_GETFL, 0);
    fcntl(fd, F_SETFL, fl | O_NONBLOCK);
    fcntl(fd, F_SETFD, FD_CLOEXEC);
    if (connect(fd, ai->ai_addr, ai->ai_addrlen) == 0 || errno == EINPROGRESS) return fd;
    close(fd);
    return -1;
}

/* A non-blocking connect to host:port, waited for up to ms. Like Redis,
 * the socket is returned even when the connection failed or is still
 * pending (the first write tells); -1 when no address could be tried. */
static int sock_connect(const char *host, int port, long ms) {
    char portstr[16];
    snprintf(portstr, sizeof portstr, "%d", port);
    struct addrinfo hints, *res;
    memset(&hints, 0, sizeof hints);
    hints.ai_family = AF_UNSPEC;
    hints.ai_socktype = SOCK_STREAM;
    if (getaddrinfo(host, portstr, &hints, &res) != 0) return -1;
    int fd = -1;
    for (const struct addrinfo *ai = res; ai && fd < 0; ai = ai->ai_next) fd = try_connect(ai);
    freeaddrinfo(res);
    if (fd < 0) return -1;
    int one = 1;
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    wait_fd(fd, POLLOUT, ms);
    return fd;
}

/* Writes n bytes in chunks, each allowed ms: 0, or -1 with errno
 * (ETIMEDOUT when the target did not take the bytes in time). */
static int sock_write_all(int fd, const char *p, size_t n, long ms) {
    while (n > 0) {
        size_t chunk = n > MIG_CHUNK ? MIG_CHUNK : n;
        int64_t deadline = mono_ms() + ms;
        while (chunk > 0) {
            ssize_t w = send(fd, p, chunk, MIG_SEND_FLAGS);
            if (w > 0) {
                p += w, n -= (size_t)w, chunk -= (size_t)w;
                continue;
            }
            if (w < 0 && errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR) return -1;
            long left = (long)(deadline - mono_ms());
            if (left <= 0) return errno = ETIMEDOUT, -1;
            if (wait_fd(fd, POLLOUT, left) <= 0) return -1;
        }
    }
    return 0;
}

/* One byte within the deadline: 1, or -1 (errno ETIMEDOUT on timeout,
 * ECONNRESET when the target closed). */
static int read_byte(int fd, char *ch, int64_t deadline) {
    for (;;) {
        ssize_t r = read(fd, ch, 1);
        if (r == 1) return 1;
        if (r == 0) return errno = ECONNRESET, -1;
        if (errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR) return -1;
        long left = (long)(deadline - mono_ms());
        if (left <= 0) return errno = ETIMEDOUT, -1;
        if (wait_fd(fd, POLLIN, left) <= 0) return -1;
    }
}

/* One reply line without its CRLF into buf (cut to MIG_LINE - 1 bytes),
 * within ms: its length (0 for an empty line), or -1 with errno. */
static long sock_read_line(int fd, char *buf, long ms) {
    int64_t deadline = mono_ms() + ms;
    size_t len = 0;
    char ch;
    for (;;) {
        if (read_byte(fd, &ch, deadline) < 0) return -1;
        if (ch == '\n') break;
        if (len < MIG_LINE - 1) buf[len++] = ch;
    }
    if (len && buf[len - 1] == '\r') len--;
    buf[len] = '\0';
    return (long)len;
}

/* ------------------------------------------------ the connection cache */

typedef struct mig_conn {
    char *host, *port;          /* as given to MIGRATE */
    int fd;
    long long last_dbid;        /* -1: SELECT before the next RESTORE */
    int64_t last_use_ms;
} mig_conn;

static mig_conn conns[MIG_CACHE_MAX];
static int nconns;

int migrate_cached_count(void) { return nconns; }

static int same(span s, const char *z) { return strlen(z) == s.len && memcmp(s.p, z, s.len) == 0; }

static int conn_find(span host, span port) {
    for (int i = 0; i < nconns; i++)
        if (same(host, conns[i].host) && same(port, conns[i].port)) return i;
    return -1;
}

static void conn_drop(int i) {
    int saved = errno; /* the caller still decides on the failure's errno */
    close(conns[i].fd);
    zfree(conns[i].host);
    zfree(conns[i].port);
    conns[i] = conns[--nconns];
    errno = saved;
}

static void conn_close(span host, span port) {
    int i = conn_find(host, port);
    if (i >= 0) conn_drop(i);
}

void migrate_cron(void) {
    for (int i = nconns - 1; i >= 0; i--)
        if (srv.now_ms - conns[i].last_use_ms > MIG_CACHE_TTL_MS) conn_drop(i);
}

/* The cached connection to host:port, or a new one; NULL (error replied)
 * when no connection could be attempted. */
static mig_conn *conn_get(client *c, span host, span port, long timeout) {
    int i = conn_find(host, port);
    if (i >= 0) {
        conns[i].last_use_ms = srv.now_ms;
        return &conns[i];
    }
    if (nconns == MIG_CACHE_MAX) { /* full: the least recently used goes */
        int old = 0;
        for (int j = 1; j < nconns; j++)
            if (conns[j].last_use_ms < conns[old].last_use_ms) old = j;
        conn_drop(old);
    }
    char *h = zstrndup(host.p, host.len), *p = zstrndup(port.p, port.len);
    int fd = sock_connect(h, atoi(p), timeout);
    if (fd < 0) {
        zfree(h);
        zfree(p);
        reply_error(c, "IOERR error or timeout connecting to the client");
        return NULL;
    }
    conns[nconns] = (mig_conn){.host = h, .port = p, .fd = fd, .last_dbid = -1, .last_use_ms = srv.now_ms};
    return &conns[nconns++];
}

/* ------------------------------------------------ MIGRATE */

typedef struct mig_req {
    span host, port;
    int copy, replace;
    int user_at, pass_at;       /* argv index of AUTH2's username / the password, 0: none */
    long long timeout, dbid;
    int first, nkeys;           /* the keys: argv[first .. first+nkeys) */
} mig_req;

/* Options from argv[6], then the timeout and the database, in Redis's
 * order (so the same error wins). */
static int parse_args(client *c, mig_req *r) {
    memset(r, 0, sizeof *r);
    r->host = c->argv[1], r->port = c->argv[2];
    r->first = 3, r->nkeys = 1;
    for (int j = 6; j < c->argc; j++) {
        span a = c->argv[j];
        int more = c->argc - 1 - j;
        if (span_eq_nocase(a, "copy")) {
            r->copy = 1;
        } else if (span_eq_nocase(a, "replace")) {
            r->replace = 1;
        } else if (span_eq_nocase(a, "auth") && more >= 1) {
            r->user_at = 0, r->pass_at = ++j;
            monitor_redact_arg(j);
        } else if (span_eq_nocase(a, "auth2") && more >= 2) {
            r->user_at = ++j, r->pass_at = ++j;
            monitor_redact_arg(j - 1);
            monitor_redact_arg(j);
        } else if (span_eq_nocase(a, "keys")) {
            if (c->argv[3].len != 0)
                return reply_error(c, "ERR When using MIGRATE KEYS option, the key argument must be set to the "
                                      "empty string"), 0;
            r->first = j + 1, r->nkeys = c->argc - j - 1;
            break;
        } else {
            return reply_err_syntax(c), 0;
        }
    }
    span t = c->argv[5], d = c->argv[4];
    if (!str_to_ll(t.p, t.len, &r->timeout) || !str_to_ll(d.p, d.len, &r->dbid)) return reply_err_notint(c), 0;
    if (r->timeout <= 0) r->timeout = 1000;
    return 1;
}

/* The keys that exist (read lookups, as Redis): their names and nodes. */
static int find_keys(client *c, const mig_req *r, span *keys, dnode **nodes) {
    int n = 0;
    for (int j = 0; j < r->nkeys; j++) {
        span k = c->argv[r->first + j];
        dnode *node = db_lookup_read(c->db, k.p, k.len);
        if (node) keys[n] = k, nodes[n++] = node;
    }
    return n;
}

static void add_restore(sbuf *out, span key, const dnode *n, int replace) {
    int64_t expire = dn_expire(n);
    long long ttl = 0;
    if (expire >= 0) ttl = expire - srv.now_ms < 1 ? 1 : expire - srv.now_ms;
    rdbw w;
    rdbw_init(&w, rdb_current_options().compress);
    rdbw_u8(&w, rdb_value_type(n));
    rdb_save_payload(&w, n);
    rdb_payload_finish(&w);
    char ttlbuf[24];
    /* a cluster node sends RESTORE-ASKING: the target may be importing the slot */
    span cmd = srv.cluster_mode ? (span){"RESTORE-ASKING", 14} : (span){"RESTORE", 7};
    span argv[5] = {cmd, key, {ttlbuf, ll_to_str(ttlbuf, ttl)}, {(const char *)w.buf, w.len}, {"REPLACE", 7}};
    sb_add_command(out, replace ? 5 : 4, argv);
    rdbw_free(&w);
}

/* The whole request: [AUTH] [SELECT] RESTORE... */
static void build_request(client *c, const mig_req *r, int select, const span *keys, dnode **nodes, int n,
                          sbuf *out) {
    if (r->pass_at) {
        span auth[3] = {{"AUTH", 4}};
        int argc = 1;
        if (r->user_at) auth[argc++] = c->argv[r->user_at];
        auth[argc++] = c->argv[r->pass_at];
        sb_add_command(out, argc, auth);
    }
    if (select) {
        char num[24];
        span sel[2] = {{"SELECT", 6}, {num, ll_to_str(num, r->dbid)}};
        sb_add_command(out, 2, sel);
    }
    for (int j = 0; j < n; j++) add_restore(out, keys[j], nodes[j], r->replace);
}

enum { MIG_DONE, MIG_RETRY };

/* A connection failure before any key moved: the connection is dropped,
 * and the attempt is made once more unless it timed out (as Redis). */
static int socket_failed(client *c, const mig_req *r, int may_retry, int writing) {
    conn_close(r->host, r->port);
    if (errno != ETIMEDOUT && may_retry) return MIG_RETRY;
    reply_error(c, writing ? "IOERR error or timeout writing to target instance"
                           : "IOERR error or timeout reading to target instance");
    return MIG_DONE;
}

/* A key the target accepted leaves this server (DEL's effects). */
static void delete_moved(client *c, span key) {
    db_delete_lazy(c->db, key.p, key.len, LAZY_SERVER_DEL);
    touch_watched_key(c->db, key.p, key.len);
    notify_key(NOTIFY_GENERIC, "del", c->db->id, key);
    srv.dirty++;
}

/* The first error among the AUTH, SELECT and this RESTORE reply, or NULL. */
static const char *first_error(const char *auth, const char *sel, const char *restore) {
    if (auth && auth[0] == '-') return auth;
    if (sel && sel[0] == '-') return sel;
    return restore[0] == '-' ? restore : NULL;
}

typedef struct mig_replies {
    char auth[MIG_LINE], sel[MIG_LINE], line[MIG_LINE];
    int target_err, sock_err, acked; /* acked: RESTORE replies read */
} mig_replies;

/* Reads the RESTORE replies, deleting (unless COPY) each key accepted;
 * del collects them after del[0] for the propagated DEL. */
static int read_restores(client *c, const mig_req *r, mig_conn *cs, int select, const span *keys, int n,
                         mig_replies *rp, span *del) {
    int ndel = 0;
    for (rp->acked = 0; rp->acked < n; rp->acked++) {
        if (sock_read_line(cs->fd, rp->line, (long)r->timeout) <= 0) {
            rp->sock_err = 1;
            break;
        }
        const char *err = first_error(r->pass_at ? rp->auth : NULL, select ? rp->sel : NULL, rp->line);
        if (err && !rp->target_err) {
            cs->last_dbid = -1;
            rp->target_err = 1;
            reply_errorf(c, "ERR Target instance replied with error: %s", err + 1);
        } else if (!err && !r->copy) {
            delete_moved(c, keys[rp->acked]);
            del[++ndel] = keys[rp->acked];
        }
    }
    return ndel;
}

/* One attempt: connect (or reuse), send, read, apply. */
static int migrate_once(client *c, const mig_req *r, const span *keys, dnode **nodes, int n, int may_retry) {
    mig_conn *cs = conn_get(c, r->host, r->port, (long)r->timeout);
    if (!cs) return MIG_DONE;
    int select = cs->last_dbid != r->dbid;
    sbuf req = {0};
    build_request(c, r, select, keys, nodes, n, &req);
    errno = 0;
    int wrote = sock_write_all(cs->fd, req.p, req.len, (long)r->timeout);
    sb_free(&req);
    if (wrote < 0) return socket_failed(c, r, may_retry, 1);
    mig_replies *rp = zcalloc(sizeof *rp);
    if ((r->pass_at && sock_read_line(cs->fd, rp->auth, (long)r->timeout) <= 0) ||
        (select && sock_read_line(cs->fd, rp->sel, (long)r->timeout) <= 0)) {
        zfree(rp);
        return socket_failed(c, r, may_retry, 0);
    }
    span *del = zmalloc(sizeof(span) * (size_t)(n + 1));
    int ndel = read_restores(c, r, cs, select, keys, n, rp, del);
    int status = MIG_DONE;
    if (!rp->target_err && rp->sock_err && rp->acked == 0 && may_retry && errno != ETIMEDOUT) {
        status = socket_failed(c, r, may_retry, 0);
    } else {
        if (rp->sock_err) conn_close(r->host, r->port);
        if (ndel) {
            del[0] = (span){"DEL", 3};
            prop_rewrite(c, ndel + 1, del);
        }
        if (!rp->target_err && rp->sock_err) {
            reply_error(c, "IOERR error or timeout reading to target instance");
        } else if (!rp->target_err) {
            cs->last_dbid = r->dbid;
            reply_ok(c);
        }
    }
    zfree(del);
    zfree(rp);
    return status;
}

static void cmd_migrate(client *c) {
    mig_req r;
    if (!parse_args(c, &r)) return;
    span *keys = zmalloc(sizeof(span) * (size_t)(r.nkeys + 1));
    dnode **nodes = zmalloc(sizeof(dnode *) * (size_t)(r.nkeys + 1));
    int n = find_keys(c, &r, keys, nodes);
    if (n == 0) {
        reply_status(c, "NOKEY");
    } else if (migrate_once(c, &r, keys, nodes, n, 1) == MIG_RETRY) {
        migrate_once(c, &r, keys, nodes, n, 0);
    }
    zfree(keys);
    zfree(nodes);
}

static command migrate_commands[] = {
    CMD("migrate", cmd_migrate, -6, .flags = CMD_WRITE | CMD_MOVABLE_KEYS, .acl = "keyspace write slow dangerous",
        CMD_KEYS(3, 3, 1), .summary = "Atomically transfer a key from a Redis instance to another one.",
        .since = "2.6.0",
        .complexity = "This command actually executes a DUMP+DEL in the source instance, and a RESTORE in the "
            "target instance. See the pages of these commands for time complexity. Also an O(N) data transfer "
            "between the two instances is performed."),
    {0},
};
const command_group migrate_group = {"generic", migrate_commands};
