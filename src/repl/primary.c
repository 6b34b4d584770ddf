/* primary.c - this server as a primary: replicas' SYNC / PSYNC, full syncs
 * (a snapshot on disk sent as a bulk, or streamed diskless to the sockets
 * by the save child), partial resyncs from the backlog, the stream fed to
 * replicas, REPLCONF, WAIT and the replicas' cron (pings, timeouts,
 * min-replicas).
 *
 * A replica's client is an ordinary client with repl_role REPLICA and a
 * replica_link. Its output is the stream: a reader of the shared
 * replication buffer (client.stream), placed where its snapshot ends (or
 * where its partial resync continues). Until its snapshot has been
 * delivered its output is held (out_held): the stream written after the
 * snapshot's fork stays in the shared buffer, and is written once the
 * replica is online. Its output limits are the `replica` class of
 * client-output-buffer-limit, counted in the stream it has not been sent.
 */
#include "repl.h"
#include "repl_int.h"
#include "blocking.h"
#include "config.h"
#include "db.h"
#include "frand.h"
#include "outlimit.h"
#include "persist.h"
#include "propagate.h"
#include "rdb.h"
#include "reply.h"
#include "server.h"
#include "tls.h"
#include "util.h"
#include "zmalloc.h"
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/sendfile.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#define BULK_CHUNK (256 * 1024)

static long long config_ll(const char *name) { return config_get_ll(&srv.cfg, name); }

static ssize_t link_write(client *c, const char *p, size_t n) { return tls_or_plain_write(c->tls, c->fd, p, n); }

/* A short write on a replica's socket outside the event loop (+FULLRESYNC,
 * keep-alive newlines): a fresh or idle socket takes it at once; waits at
 * most a second. 0 or -1. */
static int sync_write(client *c, const char *p, size_t n) {
    int fd = c->fd;
    size_t off = 0;
    while (off < n) {
        ssize_t w = link_write(c, p + off, n - off);
        if (w < 0 && errno == EINTR) continue;
        if (w < 0 && errno == EAGAIN) {
            struct pollfd pf = {.fd = fd, .events = POLLOUT};
            if (poll(&pf, 1, 1000) <= 0) return -1;
            continue;
        }
        if (w <= 0) return -1;
        off += (size_t)w;
    }
    return 0;
}

static const char *replica_name(const client *c, char *buf, size_t cap) {
    const replica_link *r = c->repl;
    snprintf(buf, cap, "%s:%d", r->ip, r->listening_port);
    return buf;
}

/* ---- replicas ------------------------------------------------------------------ */

static replica_link *link_of(client *c) {
    if (c->repl) return c->repl;
    replica_link *r = zcalloc(sizeof *r);
    r->bulk_fd = -1;
    const char *colon = strrchr(c->addr, ':');
    size_t n = colon ? (size_t)(colon - c->addr) : strlen(c->addr);
    if (n >= sizeof r->ip) n = sizeof r->ip - 1;
    memcpy(r->ip, c->addr, n);
    c->repl = r;
    return r;
}

static void add_replica(client *c) {
    if (rs.nreplicas == rs.cap_replicas) {
        rs.cap_replicas = rs.cap_replicas ? rs.cap_replicas * 2 : 4;
        rs.replicas = zrealloc(rs.replicas, sizeof(client *) * (size_t)rs.cap_replicas);
    }
    rs.replicas[rs.nreplicas++] = c;
    c->repl_role = CLIENT_REPL_REPLICA;
    c->flags |= CF_REPLY_OFF; /* a replica hears the stream, not replies (REPLCONF ACK has none) */
    c->out_held = 1;
    link_of(c)->ack_ms = srv.now_ms;
}

/* A replica's command made a reply (reply.c's hook): its link carries the
 * stream only, so it is closed, as Redis does. */
void primary_replica_replied(client *c) {
    char info[1024];
    client_info_line(c, info, sizeof info);
    server_log(LOG_WARNING_, "Replica generated a reply to command '%s', disconnecting it: %s",
               c->cmd ? c->cmd->fullname : "<unknown>", info);
    client_close_async(c);
}

/* A replica still waits for a snapshot (c, being freed, is out of the list). */
static int any_waiting(void) {
    for (int i = 0; i < rs.nreplicas; i++) {
        int st = rs.replicas[i]->repl ? rs.replicas[i]->repl->state : 0;
        if (st == RS_WAIT_BGSAVE_START || st == RS_WAIT_BGSAVE_END) return 1;
    }
    return 0;
}

void primary_replica_freed(client *c) {
    replica_link *r = c->repl;
    for (int i = 0; i < rs.nreplicas; i++)
        if (rs.replicas[i] == c) {
            rs.replicas[i] = rs.replicas[--rs.nreplicas];
            break;
        }
    if (r) {
        char name[96];
        server_log(LOG_NOTICE_, "Connection with replica %s lost.", replica_name(c, name, sizeof name));
        if (r->state == RS_WAIT_BGSAVE_END && persist_child_target() == PERSIST_CHILD_DISK && !any_waiting() &&
            !persist_has_save_points())
            persist_kill_disk_child(); /* its snapshot is of use to nobody, as Redis judges */
        rdb_pipe_replica_gone(c);
        if (r->bulk_fd >= 0) close(r->bulk_fd);
        zfree(r);
        c->repl = NULL;
    }
}

void primary_drop_replicas(void) {
    for (int i = 0; i < rs.nreplicas; i++) {
        rb_detach(&rs.replicas[i]->stream);
        client_close_async(rs.replicas[i]);
    }
}

static void go_online(client *c) {
    replica_link *r = c->repl;
    r->state = RS_ONLINE;
    r->ack_ms = srv.now_ms;
    c->out_held = 0;
    if (client_out_used(c)) client_mark_pending(c);
    char name[96];
    server_log(LOG_NOTICE_, "Synchronization with replica %s succeeded", replica_name(c, name, sizeof name));
}

void primary_replicas_fed(void) {
    for (int i = 0; i < rs.nreplicas; i++) {
        client *c = rs.replicas[i];
        if (!c->stream.rb || (c->flags & CF_CLOSE_ASAP)) continue;
        if (client_check_output_limits(c)) continue;
        if (!c->out_held) client_mark_pending(c);
    }
}

/* ---- full sync ----------------------------------------------------------------- */

/* The snapshot c will get stands at offset off: tell it (PSYNC's replicas). */
static void fullresync_reply(client *c, long long off) {
    replica_link *r = c->repl;
    r->initial_off = off;
    if (r->pre_psync) return; /* SYNC: the bulk comes without a preamble */
    char line[128];
    int n = snprintf(line, sizeof line, "+FULLRESYNC %s %lld\r\n", rs.replid, off);
    if (sync_write(c, line, (size_t)n) != 0) client_close_async(c);
}

/* Start a snapshot for every replica waiting for one. */
static void start_full_sync(int diskless) {
    int n = 0;
    rdb_options opt = rdb_current_options();
    opt.repl_id = rs.replid;
    opt.repl_offset = rs.offset;
    /* a replica passes on its primary's stream, whose selected db the snapshot must carry; a primary's own
     * stream restarts with a SELECT (prop_stream_restart below) */
    opt.repl_stream_db = !srv.repl_replica ? 0 : srv.repl_master && srv.repl_master->db ? srv.repl_master->db->id : rs.master_db;
    for (int i = 0; i < rs.nreplicas; i++) {
        client *c = rs.replicas[i];
        replica_link *r = c->repl;
        if (r->state != RS_WAIT_BGSAVE_START || (c->flags & CF_CLOSE_ASAP)) continue;
        if (diskless && !r->capa_eof) continue;
        r->diskless = diskless;
        r->acked = 0;
        r->state = RS_WAIT_BGSAVE_END;
        r->in_pipe = diskless;
        n++;
        rb_attach(&c->stream, &rs.rb, rb_end(&rs.rb)); /* its stream: what follows the snapshot */
        fullresync_reply(c, rs.offset);
    }
    if (!n) return;
    prop_stream_restart(); /* the stream after the snapshot starts with SELECT */
    char mark[REPLID_LEN + 1];
    frand_hex(mark, REPLID_LEN);
    int fd = -1, exit_fd = -1;
    if (persist_bgsave_for_repl(diskless ? &fd : NULL, diskless ? &exit_fd : NULL, mark, &opt) == 0) {
        if (diskless) rdb_pipe_start(fd, exit_fd);
        return;
    }
    for (int i = 0; i < rs.nreplicas; i++) { /* no snapshot: these replicas must start over */
        replica_link *r = rs.replicas[i]->repl;
        if (r->state == RS_WAIT_BGSAVE_END) {
            server_log(LOG_WARNING_, "BGSAVE for replication failed");
            client_close_async(rs.replicas[i]);
        }
    }
}

/* A disk snapshot started for replicas is already running: c joins it,
 * taking the stream another waiting replica has piled up since its fork. */
static int join_running_save(client *c) {
    if (persist_child_target() != PERSIST_CHILD_DISK) return 0;
    for (int i = 0; i < rs.nreplicas; i++) {
        client *o = rs.replicas[i];
        replica_link *r = o->repl;
        if (o == c || r->state != RS_WAIT_BGSAVE_END || r->diskless) continue;
        replica_link *me = c->repl;
        me->state = RS_WAIT_BGSAVE_END;
        me->diskless = 0;
        rb_attach_as(&c->stream, &o->stream); /* the stream since its fork */
        fullresync_reply(c, r->initial_off); /* the offset of the snapshot it joins */
        server_log(LOG_NOTICE_, "Waiting for end of BGSAVE for SYNC");
        return 1;
    }
    return 0;
}

static void send_bulk(evloop *el, int fd, void *data, int mask);

static void start_bulk(client *c) {
    replica_link *r = c->repl;
    char path[4096];
    char *name = config_get_by_name(&srv.cfg, "dbfilename");
    snprintf(path, sizeof path, "%s", name && name[0] ? name : "dump.rdb");
    zfree(name);
    struct stat st;
    r->bulk_fd = open(path, O_RDONLY);
    if (r->bulk_fd < 0 || fstat(r->bulk_fd, &st) != 0) {
        server_log(LOG_WARNING_, "SYNC failed. Can't open/stat DB after BGSAVE: %s", strerror(errno));
        client_close_async(c);
        return;
    }
    r->bulk_off = 0;
    r->bulk_size = st.st_size;
    r->pre_len = (size_t)snprintf(r->pre, sizeof r->pre, "$%lld\r\n", (long long)st.st_size);
    r->pre_pos = 0;
    r->state = RS_SEND_BULK;
    ev_add(srv.el, c->fd, EV_WRITABLE, send_bulk, c);
}

/* sendfile() for a TLS replica: the file's next bytes read and encrypted.
 * Bytes not taken are read again at the same offset next time, as TLS asks
 * (a record half sent must be offered again). */
static ssize_t send_file_tls(client *c, replica_link *r, size_t want) {
    static char buf[BULK_CHUNK];
    ssize_t n = pread(r->bulk_fd, buf, want, r->bulk_off);
    if (n <= 0) return n;
    ssize_t w = link_write(c, buf, (size_t)n);
    if (w > 0) r->bulk_off += w;
    return w;
}

static void send_bulk(evloop *el, int fd, void *data, int mask) {
    (void)mask;
    client *c = data;
    replica_link *r = c->repl;
    if (r->pre_pos < r->pre_len) {
        ssize_t w = link_write(c, r->pre + r->pre_pos, r->pre_len - r->pre_pos);
        if (w < 0 && errno != EAGAIN && errno != EINTR) goto fail;
        if (w > 0) r->pre_pos += (size_t)w;
        if (r->pre_pos < r->pre_len) return;
    }
    if (r->bulk_off < r->bulk_size) {
        size_t want = (size_t)(r->bulk_size - r->bulk_off) < BULK_CHUNK ? (size_t)(r->bulk_size - r->bulk_off) : BULK_CHUNK;
        ssize_t w = c->tls ? send_file_tls(c, r, want) : sendfile(fd, r->bulk_fd, &r->bulk_off, want);
        if (w < 0 && errno != EAGAIN && errno != EINTR) goto fail;
        if (w == 0) goto fail; /* the file shrank */
        if (w > 0) srv.stats.net_output_bytes += (uint64_t)w;
        if (r->bulk_off < r->bulk_size) return;
    }
    close(r->bulk_fd);
    r->bulk_fd = -1;
    ev_del(el, fd, EV_WRITABLE);
    go_online(c);
    return;
fail:
    server_log(LOG_WARNING_, "Write error sending DB to replica: %s", strerror(errno));
    client_close_async(c);
}

void primary_bgsave_done(int ok, int to_sockets) {
    for (int i = 0; i < rs.nreplicas; i++) {
        client *c = rs.replicas[i];
        replica_link *r = c->repl;
        if (r->state != RS_WAIT_BGSAVE_END || r->diskless != to_sockets) continue;
        if (to_sockets) {
            int got_it = r->in_pipe; /* still in the transfer when it ended */
            r->in_pipe = 0;
            if (ok && got_it) {
                go_online(c);
                /* nothing may follow the mark while it loads: the stream starts on its first ACK (which may
                 * have come already: the child is reaped by the cron, after the replica could load) */
                if (!r->pre_psync && !r->acked) c->out_held = 1;
            } else {
                server_log(LOG_WARNING_, "Diskless rdb transfer to a replica failed");
                client_close_async(c);
            }
        } else if (!ok) {
            server_log(LOG_WARNING_, "SYNC failed. BGSAVE child returned an error");
            client_close_async(c);
        } else {
            start_bulk(c);
        }
    }
}

/* ---- SYNC / PSYNC --------------------------------------------------------------- */

static int try_partial(client *c, span id, long long off) {
    char idbuf[REPLID_LEN + 1];
    span_cstr(idbuf, sizeof idbuf, id);
    int same = id.len == REPLID_LEN && strcmp(idbuf, rs.replid) == 0;
    int old = id.len == REPLID_LEN && strcmp(idbuf, rs.replid2) == 0 && off <= rs.second_off;
    if (!same && !old) {
        if (!(id.len == 1 && id.p[0] == '?'))
            server_log(LOG_NOTICE_, "Partial resynchronization not accepted: Replication ID mismatch (Replica asked "
                                    "for '%s', my replication IDs are '%s' and '%s')", idbuf, rs.replid, rs.replid2);
        else server_log(LOG_NOTICE_, "Full resync requested by replica %s", c->addr);
        return 0;
    }
    if (!rs.has_backlog || !rb_covers(&rs.rb, off)) {
        server_log(LOG_NOTICE_, "Unable to partial resync with replica %s for lack of backlog (Replica request was: %lld).",
                   c->addr, off);
        return 0;
    }
    add_replica(c);
    replica_link *r = c->repl;
    r->state = RS_ONLINE;
    r->ack_off = off - 1;
    char line[128];
    int n = r->capa_psync2 ? snprintf(line, sizeof line, "+CONTINUE %s\r\n", rs.replid)
                           : snprintf(line, sizeof line, "+CONTINUE\r\n");
    if (sync_write(c, line, (size_t)n) != 0) {
        client_close_async(c);
        return 1;
    }
    rb_attach(&c->stream, &rs.rb, off);
    c->out_held = 0;
    client_mark_pending(c);
    rs.sync_partial_ok++;
    server_log(LOG_NOTICE_, "Partial resynchronization request from %s accepted. Sending %lld bytes of backlog "
                            "starting from offset %lld.", c->addr, rs.offset - off + 1, off);
    return 1;
}

void primary_sync(client *c, int psync) {
    if (c->repl_role == CLIENT_REPL_REPLICA) return; /* already one: ignored, as Redis */
    if (psync && c->argc > 3 && span_eq_nocase(c->argv[3], "failover")) {
        /* our primary hands its role over (FAILOVER): it must be the history we follow */
        if (!c->argv[1].len || c->argv[1].len != REPLID_LEN || memcmp(c->argv[1].p, rs.replid, REPLID_LEN) != 0) {
            reply_error(c, "ERR PSYNC FAILOVER replid must match my replid.");
            return;
        }
        replica_unset_master();
        server_log(LOG_NOTICE_, "MASTER MODE enabled (failover request from 'id=%llu addr=%s')",
                   (unsigned long long)c->id, c->addr);
    }
    if (srv.repl_replica && rs.link != LINK_CONNECTED) {
        reply_error(c, "NOMASTERLINK Can't SYNC while not connected with my master");
        return;
    }
    if (ring_used(&c->out)) {
        reply_error(c, "ERR SYNC and PSYNC are invalid with pending output");
        return;
    }
    server_log(LOG_NOTICE_, "Replica %s asks for synchronization", c->addr);
    long long offset = 0;
    if (psync && !str_to_ll(c->argv[2].p, c->argv[2].len, &offset)) {
        server_log(LOG_WARNING_, "Replica %s asks for synchronization but with a wrong offset", c->addr);
        reply_err_notint(c);
        return;
    }
    if (psync) {
        if (try_partial(c, c->argv[1], offset)) return;
        if (!(c->argv[1].len == 1 && c->argv[1].p[0] == '?')) rs.sync_partial_err++;
    } else {
        link_of(c)->pre_psync = 1; /* SYNC: no +FULLRESYNC line, no ACKs */
    }
    rs.sync_full++;
    if (!rs.has_backlog && !srv.repl_replica) { /* a new history begins with the first replica */
        repl_change_id();
    }
    repl_backlog_ensure();
    add_replica(c);
    replica_link *r = c->repl;
    r->state = RS_WAIT_BGSAVE_START;
    r->wait_since_ms = srv.now_ms;
    if (!psync) r->capa_eof = 0;
    if (join_running_save(c)) return;
    /* otherwise the cron starts a snapshot (at once, or after repl-diskless-sync-delay) */
    primary_cron();
}

/* ---- REPLCONF -------------------------------------------------------------------- */

static void wake_waiters(void);

void primary_replconf(client *c) {
    if (c->argc % 2 == 0) {
        reply_err_syntax(c);
        return;
    }
    for (int i = 1; i < c->argc; i += 2) {
        span k = c->argv[i], v = c->argv[i + 1];
        long long n;
        if (span_eq_nocase(k, "listening-port")) {
            if (!str_to_ll(v.p, v.len, &n)) {
                reply_err_notint(c);
                return;
            }
            link_of(c)->listening_port = (int)n;
        } else if (span_eq_nocase(k, "ip-address")) {
            span_cstr(link_of(c)->ip, sizeof link_of(c)->ip, v);
        } else if (span_eq_nocase(k, "capa")) {
            if (span_eq_nocase(v, "eof")) link_of(c)->capa_eof = 1;
            else if (span_eq_nocase(v, "psync2")) link_of(c)->capa_psync2 = 1;
        } else if (span_eq_nocase(k, "ack")) {
            if (c->repl_role != CLIENT_REPL_REPLICA) return;
            if (!str_to_ll(v.p, v.len, &n)) return;
            replica_link *r = c->repl;
            if (n > r->ack_off) r->ack_off = n;
            r->ack_ms = srv.now_ms;
            r->acked = 1;
            if (r->state == RS_ONLINE && c->out_held) { /* diskless: the stream starts once it has loaded */
                c->out_held = 0;
                if (client_out_used(c)) client_mark_pending(c);
            }
            if (rs.nwaiters) wake_waiters();
            return; /* no reply */
        } else if (span_eq_nocase(k, "getack")) {
            if (c->repl_role == CLIENT_REPL_MASTER) replica_send_ack();
            return;
        } else if (span_eq_nocase(k, "rdb-only") || span_eq_nocase(k, "rdb-filter-only")) {
            /* accepted, as 7.0 (redis-cli --rdb) */
        } else {
            char buf[128];
            reply_errorf(c, "ERR Unrecognized REPLCONF option: %s", span_cstr(buf, sizeof buf, k));
            return;
        }
    }
    reply_ok(c);
}

/* ---- WAIT -------------------------------------------------------------------------- */

typedef struct waiter {
    long long target;
    long long want;
} waiter;

static waiter *wstate;          /* parallel to rs.waiters */

static int acked(long long target) {
    int n = 0;
    for (int i = 0; i < rs.nreplicas; i++) {
        replica_link *r = rs.replicas[i]->repl;
        if (r->state == RS_ONLINE && r->ack_off >= target) n++;
    }
    return n;
}

static void forget_waiter(int i) {
    rs.waiters[i] = rs.waiters[--rs.nwaiters];
    wstate[i] = wstate[rs.nwaiters];
}

static void wait_done(client *c, int why) {
    for (int i = 0; i < rs.nwaiters; i++)
        if (rs.waiters[i] == c) {
            if (why != UNBLOCK_DISCONNECT) reply_int(c, acked(wstate[i].target));
            forget_waiter(i);
            return;
        }
}

static void wake_waiters(void) {
    for (int i = 0; i < rs.nwaiters;) {
        int n = acked(wstate[i].target);
        if (n < wstate[i].want) {
            i++;
            continue;
        }
        client *c = rs.waiters[i];
        forget_waiter(i);
        reply_int(c, n);
        blocking_served(c);
        client_mark_pending(c);
    }
}

void primary_wait(client *c) {
    long long n, timeout;
    if (srv.repl_replica) {
        reply_error(c, "ERR WAIT cannot be used with replica instances. Please also note that since Redis 4.0 if a "
                       "replica is configured to be writable (which is not the default) writes to replicas are just "
                       "local and are not propagated.");
        return;
    }
    if (!str_to_ll(c->argv[1].p, c->argv[1].len, &n)) {
        reply_err_notint(c);
        return;
    }
    if (!str_to_ll(c->argv[2].p, c->argv[2].len, &timeout)) {
        reply_error(c, "ERR timeout is not an integer or out of range");
        return;
    }
    if (timeout < 0) {
        reply_error(c, "ERR timeout is negative");
        return;
    }
    int got = acked(rs.offset);
    if (got >= n || !blocking_allowed(c)) {
        reply_int(c, got);
        return;
    }
    if (rs.nwaiters == rs.cap_waiters) {
        rs.cap_waiters = rs.cap_waiters ? rs.cap_waiters * 2 : 8;
        rs.waiters = zrealloc(rs.waiters, sizeof(client *) * (size_t)rs.cap_waiters);
        wstate = zrealloc(wstate, sizeof(waiter) * (size_t)rs.cap_waiters);
    }
    rs.waiters[rs.nwaiters] = c;
    wstate[rs.nwaiters++] = (waiter){rs.offset, n};
    block_custom(c, timeout ? srv.now_ms + timeout : 0, wait_done);
    rs.get_ack = 1;
}

/* ---- cron and before sleep ----------------------------------------------------------- */

static const char ping_cmd[] = "*1\r\n$4\r\nPING\r\n";
static const char getack_cmd[] = "*3\r\n$8\r\nREPLCONF\r\n$6\r\nGETACK\r\n$1\r\n*\r\n";

void primary_before_sleep(void) {
    if (rs.get_ack && !srv.repl_replica) {
        int online = 0;
        for (int i = 0; i < rs.nreplicas; i++) online += ((replica_link *)rs.replicas[i]->repl)->state == RS_ONLINE;
        if (online) repl_feed(getack_cmd, sizeof getack_cmd - 1);
    }
    rs.get_ack = 0;
}

/* Online replicas whose last ACK is at most min-replicas-max-lag seconds old. */
int primary_good_replicas(void) {
    int good = 0;
    for (int i = 0; i < rs.nreplicas; i++) {
        const replica_link *r = rs.replicas[i]->repl;
        good += r->state == RS_ONLINE && srv.now_ms - r->ack_ms <= (int64_t)srv.cfg.min_replicas_max_lag * 1000;
    }
    return good;
}

static void once_a_second(void) {
    long long timeout = config_ll("repl-timeout");
    for (int i = 0; i < rs.nreplicas; i++) {
        client *c = rs.replicas[i];
        replica_link *r = c->repl;
        if (r->state == RS_WAIT_BGSAVE_END && r->in_pipe && r->pipe_io_ms &&
            srv.now_ms - r->pipe_io_ms > timeout * 1000) {
            char name[96];
            server_log(LOG_WARNING_, "Disconnecting timedout replica (full sync): %s", replica_name(c, name, sizeof name));
            client_close_async(c);
            continue;
        }
        if (r->state == RS_ONLINE) {
            if (srv.now_ms - r->ack_ms > timeout * 1000 && !r->pre_psync /* SYNC replicas send no ACKs */) {
                char name[96];
                server_log(LOG_WARNING_, "Disconnecting timedout replica (streaming sync): %s",
                           replica_name(c, name, sizeof name));
                client_close_async(c);
                continue;
            }
        } else if ((r->state == RS_WAIT_BGSAVE_START || (r->state == RS_WAIT_BGSAVE_END && !r->diskless)) &&
                   sync_write(c, "\n", 1) != 0) {
            client_close_async(c); /* a newline now and then keeps a waiting replica from timing out */
        }
    }
}

static void maybe_start_sync(void) {
    if (persist_child_target() != PERSIST_CHILD_NONE) return;
    int waiting = 0, capa_all = 1;
    int64_t oldest = 0;
    for (int i = 0; i < rs.nreplicas; i++) {
        replica_link *r = rs.replicas[i]->repl;
        if (r->state != RS_WAIT_BGSAVE_START) continue;
        waiting++;
        capa_all &= r->capa_eof;
        if (!oldest || r->wait_since_ms < oldest) oldest = r->wait_since_ms;
    }
    if (!waiting) return;
    int diskless = config_is_yes(&srv.cfg, "repl-diskless-sync") && capa_all;
    if (diskless) {
        long long delay = config_ll("repl-diskless-sync-delay"), max = config_ll("repl-diskless-sync-max-replicas");
        if (srv.now_ms - oldest < delay * 1000 && !(max > 0 && waiting >= max)) return;
    }
    start_full_sync(diskless);
}

void primary_cron(void) {
    static int64_t last_second;
    maybe_start_sync();
    if (srv.now_ms - last_second < 1000) return;
    last_second = srv.now_ms;
    once_a_second();
    long long period = config_ll("repl-ping-replica-period");
    if (!srv.repl_replica && rs.nreplicas && !srv.repl_ping_held && srv.now_ms - rs.last_ping_ms >= period * 1000) {
        rs.last_ping_ms = srv.now_ms;
        repl_feed(ping_cmd, sizeof ping_cmd - 1);
    }
}
