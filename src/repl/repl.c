/* repl.c - the replication state every role shares: the replication ids
 * and offset, the backlog, the propagation sink, the dispatcher's rules
 * for replicas and min-replicas, and INFO replication (see repl.h).
 *
 * Ids and offsets follow Redis's PSYNC2 design. `replid` names a history
 * of the stream and `offset` counts its bytes. A replica takes both from
 * its primary, so a chain agrees on them. On promotion the old id becomes
 * `replid2`, valid up to `second_off`, so the other replicas of the old
 * primary can continue from the new one without a full sync.
 *
 * The stream reaches replicas through the backlog: it exists from the first
 * replica (or from becoming a replica) and the sink is attached then, so a
 * server that never had a replica pays nothing for replication.
 */
#include "repl.h"
#include "repl_int.h"
#include "client.h"
#include "config.h"
#include "frand.h"
#include "persist.h"
#include "propagate.h"
#include "sbuf.h"
#include "server.h"
#include "zmalloc.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

repl_state rs = {.second_off = -1, .fd = -1, .tmp_fd = -1, .port = 0};

static long long config_ll(const char *name) {
    char *v = config_get_by_name(&srv.cfg, name);
    long long n = v ? atoll(v) : 0;
    zfree(v);
    return n;
}

/* ---- ids ------------------------------------------------------------------------ */

void repl_new_id(void) { frand_hex(rs.replid, REPLID_LEN); }

void repl_change_id(void) {
    repl_new_id();
    memset(rs.replid2, '0', REPLID_LEN);
    rs.replid2[REPLID_LEN] = '\0';
    rs.second_off = -1;
}

void repl_shift_ids(void) {
    memcpy(rs.replid2, rs.replid, sizeof rs.replid2);
    rs.second_off = rs.offset + 1;
    repl_new_id();
}

/* ---- the stream ---------------------------------------------------------------- */

static void prop_sink(const char *p, size_t n) {
    if (srv.repl_replica) return; /* a replica passes on its primary's bytes (replica_applied) */
    repl_feed(p, n);
}

void repl_backlog_ensure(void) {
    if (rs.has_backlog) return;
    backlog_init(&rs.bl, (size_t)config_ll("repl-backlog-size"), rs.offset + 1);
    rs.has_backlog = 1;
    prop_attach(prop_sink);
}

void repl_feed(const char *p, size_t n) {
    if (!rs.has_backlog) return;
    rs.offset += (long long)n;
    backlog_feed(&rs.bl, p, n);
    primary_feed_replicas(p, n);
}

static void backlog_cron(void) {
    if (!rs.has_backlog) return;
    size_t want = (size_t)config_ll("repl-backlog-size");
    if (want != rs.bl.size) backlog_resize(&rs.bl, want);
    if (rs.nreplicas || srv.repl_replica) {
        rs.no_replicas_since_ms = 0;
        return;
    }
    if (!rs.no_replicas_since_ms) rs.no_replicas_since_ms = srv.now_ms;
    long long ttl = config_ll("repl-backlog-ttl");
    if (ttl && srv.now_ms - rs.no_replicas_since_ms >= ttl * 1000) {
        /* a replica of the old history could not continue from a new backlog */
        repl_change_id();
        backlog_free(&rs.bl);
        rs.has_backlog = 0;
        prop_detach(prop_sink);
        server_log(LOG_NOTICE_, "Replication backlog freed after %lld seconds without connected replicas.", ttl);
    }
}

/* ---- the dispatcher's rules ------------------------------------------------------ */

static struct {
    long long min_replicas, max_lag;
} limits;

void repl_update_checks(void) {
    limits.min_replicas = config_ll("min-replicas-to-write");
    limits.max_lag = config_ll("min-replicas-max-lag");
    srv.repl_checks = srv.repl_replica || (limits.min_replicas > 0 && limits.max_lag > 0);
}

static int is_write(const client *c, const command *cmd) {
    if (cmd->flags & CMD_WRITE) return 1;
    if (cmd->props & PROP_EXEC)
        for (int i = 0; i < c->mcount; i++)
            if (c->mstate[i].cmd->flags & CMD_WRITE) return 1;
    return 0;
}

static const char *refusal(client *c, command *cmd) {
    if (srv.repl_replica) {
        if (c->repl_role == CLIENT_REPL_MASTER) return NULL;
        if (is_write(c, cmd) && config_is_yes(&srv.cfg, "replica-read-only"))
            return "READONLY You can't write against a read only replica.";
        if (rs.link != LINK_CONNECTED && !(cmd->flags & CMD_STALE) && !config_is_yes(&srv.cfg, "replica-serve-stale-data"))
            return "MASTERDOWN Link with MASTER is down and replica-serve-stale-data is set to 'no'.";
        return NULL;
    }
    if (limits.min_replicas > 0 && limits.max_lag > 0 && is_write(c, cmd) && rs.good_replicas < limits.min_replicas)
        return "NOREPLICAS Not enough good replicas to write.";
    return NULL;
}

/* ---- hooks and cron ----------------------------------------------------------------- */

static void link_freed(client *c) {
    if (c->repl_role == CLIENT_REPL_MASTER) replica_master_freed(c);
    else primary_replica_freed(c);
}

void repl_init(void) {
    repl_new_id();
    memset(rs.replid2, '0', REPLID_LEN);
    rs.master_db = 0;
    client_repl_freed = link_freed;
    client_repl_applied = replica_applied;
    command_repl_refusal = refusal;
    persist_set_repl_hook(primary_bgsave_done);
    char *ro = config_get_by_name(&srv.cfg, "replicaof");
    if (ro && ro[0]) {
        char host[256];
        int port;
        if (sscanf(ro, "%255s %d", host, &port) == 2) replica_set_master(host, port);
    }
    zfree(ro);
    repl_update_checks();
}

void repl_cron(void) {
    repl_update_checks();
    primary_cron();
    replica_cron();
    backlog_cron();
}

void repl_before_sleep(void) {
    primary_before_sleep();
}

/* ---- INFO ---------------------------------------------------------------------------- */

static void info_replica_side(sbuf *b) {
    int up = rs.link == LINK_CONNECTED;
    sb_addf(b, "master_host:%s\r\nmaster_port:%d\r\nmaster_link_status:%s\r\nmaster_last_io_seconds_ago:%d\r\n"
               "master_sync_in_progress:%d\r\nslave_read_repl_offset:%lld\r\nslave_repl_offset:%lld\r\n",
            rs.host, rs.port, up ? "up" : "down",
            up && rs.last_io_ms ? (int)((srv.now_ms - rs.last_io_ms) / 1000) : -1, rs.link == LINK_TRANSFER,
            rs.offset, rs.offset);
    if (rs.link == LINK_TRANSFER) {
        long long total = rs.transfer_size > 0 ? rs.transfer_size : 0;
        sb_addf(b, "master_sync_total_bytes:%lld\r\nmaster_sync_read_bytes:%lld\r\nmaster_sync_left_bytes:%lld\r\n"
                   "master_sync_perc:%.2f\r\nmaster_sync_last_io_seconds_ago:%d\r\n",
                total, rs.transfer_read, total - rs.transfer_read,
                total ? (double)rs.transfer_read * 100 / (double)total : 0.0,
                (int)((srv.now_ms - rs.last_io_ms) / 1000));
    }
    if (!up)
        sb_addf(b, "master_link_down_since_seconds:%lld\r\n",
                rs.down_since_ms ? (long long)((srv.now_ms - rs.down_since_ms) / 1000) : -1LL);
    sb_addf(b, "slave_priority:%lld\r\nslave_read_only:%d\r\nreplica_announced:%d\r\n", config_ll("replica-priority"),
            config_is_yes(&srv.cfg, "replica-read-only"), config_is_yes(&srv.cfg, "replica-announced"));
}

static const char *replica_state_name(int st) {
    switch (st) {
    case RS_WAIT_BGSAVE_START: case RS_WAIT_BGSAVE_END: return "wait_bgsave";
    case RS_SEND_BULK: return "send_bulk";
    default: return "online";
    }
}

void repl_info(sbuf *b) {
    sb_addf(b, "role:%s\r\n", srv.repl_replica ? "slave" : "master");
    if (srv.repl_replica) info_replica_side(b);
    sb_addf(b, "connected_slaves:%d\r\n", rs.nreplicas);
    if (limits.min_replicas > 0 && limits.max_lag > 0) sb_addf(b, "min_slaves_good_slaves:%d\r\n", rs.good_replicas);
    for (int i = 0; i < rs.nreplicas; i++) {
        const client *c = rs.replicas[i];
        const replica_link *r = c->repl;
        sb_addf(b, "slave%d:ip=%s,port=%d,state=%s,offset=%lld,lag=%lld\r\n", i, r->ip, r->listening_port,
                replica_state_name(r->state), r->ack_off, (long long)((srv.now_ms - r->ack_ms) / 1000));
    }
    sb_addf(b, "master_failover_state:no-failover\r\nmaster_replid:%s\r\nmaster_replid2:%s\r\n"
               "master_repl_offset:%lld\r\nsecond_repl_offset:%lld\r\nrepl_backlog_active:%d\r\n"
               "repl_backlog_size:%lld\r\nrepl_backlog_first_byte_offset:%lld\r\nrepl_backlog_histlen:%zu\r\n",
            rs.replid, rs.replid2, rs.offset, rs.second_off, rs.has_backlog,
            rs.has_backlog ? (long long)rs.bl.size : config_ll("repl-backlog-size"), rs.has_backlog ? rs.bl.first : 0,
            rs.has_backlog ? rs.bl.histlen : 0);
}

void repl_metrics(sbuf *b) {
    sb_addf(b, "# TYPE ferry_replication_role gauge\nferry_replication_role{role=\"%s\"} 1\n",
            srv.repl_replica ? "replica" : "primary");
    sb_addf(b, "# TYPE ferry_connected_replicas gauge\nferry_connected_replicas %d\n", rs.nreplicas);
    sb_addf(b, "# TYPE ferry_repl_offset_bytes counter\nferry_repl_offset_bytes %lld\n", rs.offset);
    if (srv.repl_replica)
        sb_addf(b, "# TYPE ferry_master_link_up gauge\nferry_master_link_up %d\n", rs.link == LINK_CONNECTED);
    long long lag = 0;
    for (int i = 0; i < rs.nreplicas; i++) {
        const replica_link *r = rs.replicas[i]->repl;
        if (r->state == RS_ONLINE && rs.offset - r->ack_off > lag) lag = rs.offset - r->ack_off;
    }
    sb_addf(b, "# TYPE ferry_replica_lag_bytes gauge\nferry_replica_lag_bytes %lld\n", lag);
}
