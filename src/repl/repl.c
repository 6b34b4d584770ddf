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
 * replica (or from becoming a replica), so a server that never had a
 * replica pays nothing for replication. The propagation sink is attached
 * while we are a primary with a backlog (a replica passes on its primary's
 * bytes instead). Replicas get the stream in one block per loop iteration,
 * read back from the backlog (repl_stream_add, repl_flush).
 */
#include "repl.h"
#include "repl_int.h"
#include "reply.h"
#include "client.h"
#include "config.h"
#include "db.h"
#include "evict.h"
#include "frand.h"
#include "persist.h"
#include "propagate.h"
#include "rdb.h"
#include "sbuf.h"
#include "server.h"
#include "zmalloc.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

repl_state rs = {.second_off = -1, .fd = -1, .tmp_fd = -1, .port = 0};

static long long config_ll(const char *name) { return config_get_ll(&srv.cfg, name); }

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

static void prop_sink(const char *p, size_t n) { repl_feed(p, n); }

/* The sink is attached while we are a primary with a backlog: a replica
 * passes on its primary's bytes (replica_applied), and a detached sink
 * spares it encoding its own propagation of every applied command. */
static void update_sink(void) {
    if (rs.has_backlog && !srv.repl_replica) prop_attach(prop_sink, PROP_TO_REPL);
    else prop_detach(prop_sink);
}

void repl_backlog_ensure(void) {
    if (rs.has_backlog) return;
    rb_init(&rs.rb, (size_t)config_ll("repl-backlog-size"), rs.offset + 1);
    rs.has_backlog = 1;
    rs.fed = 0;
    update_sink();
}

/* Stream bytes go into the shared buffer at once (the offset is exact at
 * every moment: WAIT, INFO, snapshots read it). The replicas are readers
 * of the same blocks: they are written once per loop iteration, before
 * the output is flushed (repl_flush). */
void repl_stream_add(const char *p, size_t n) {
    rs.offset += (long long)n;
    if (!rs.has_backlog) return;
    rb_feed(&rs.rb, p, n);
    rs.fed = 1;
}

void repl_feed(const char *p, size_t n) {
    if (rs.has_backlog) repl_stream_add(p, n);
}

void repl_flush(void) {
    if (!rs.fed) return;
    rs.fed = 0;
    if (rs.nreplicas) primary_replicas_fed();
}

static void backlog_resize(void) {
    size_t want = (size_t)config_ll("repl-backlog-size");
    if (rs.has_backlog && want != rs.rb.limit) rb_set_limit(&rs.rb, want);
}

static void backlog_cron(void) {
    if (!rs.has_backlog) return;
    if (rs.nreplicas || srv.repl_replica) {
        rs.no_replicas_since_ms = 0;
        return;
    }
    if (!rs.no_replicas_since_ms) rs.no_replicas_since_ms = srv.now_ms;
    long long ttl = config_ll("repl-backlog-ttl");
    if (ttl && srv.now_ms - rs.no_replicas_since_ms >= ttl * 1000) {
        /* a replica of the old history could not continue from a new backlog */
        repl_change_id();
        rb_free(&rs.rb);
        rs.has_backlog = 0;
        update_sink();
        server_log(LOG_NOTICE_, "Replication backlog freed after %lld seconds without connected replicas.", ttl);
    }
}

void repl_backlog_free(void) {
    if (!rs.has_backlog) return;
    primary_drop_replicas(); /* they leave the buffer first */
    rb_free(&rs.rb);
    rs.has_backlog = 0;
    rs.fed = 0;
}

/* The buffer beyond the backlog's size (and its blocks' headers) is the
 * replicas' own: maxmemory does not count it, as Redis does not. */
static size_t not_counted(void) {
    if (!rs.has_backlog) return 0;
    size_t counted = rs.rb.limit + (rs.rb.limit / RB_BLOCK_DATA + 1) * sizeof(rb_block);
    return rs.rb.mem > counted ? rs.rb.mem - counted : 0;
}

void repl_debug_replicate(int argc, const span *argv) {
    sbuf b = {0};
    sb_add_command(&b, argc, argv);
    repl_feed(b.p, b.len);
    zfree(b.p);
}

/* ---- the dispatcher's rules ------------------------------------------------------ */

static int min_replicas_on(void) { return srv.cfg.min_replicas_to_write > 0 && srv.cfg.min_replicas_max_lag > 0; }

/* The dispatcher skips the replication rules while none can apply: not a
 * replica, no min-replicas (CONFIG SET min-replicas-* applies to the very
 * next command: config.c calls this). */
void repl_update_checks(void) {
    srv.repl_checks = srv.repl_replica || min_replicas_on();
    update_sink(); /* the role may have changed (replica.c calls this when it does) */
    backlog_resize(); /* CONFIG SET repl-backlog-size applies at once (INFO, the replicas' limit) */
}

repl_script_write_fn *repl_script_declares_write;

static int is_write(const client *c, const command *cmd) {
    if (cmd->flags & CMD_WRITE) return 1;
    if ((cmd->props & PROP_NUMKEYS_AT_2) && !(cmd->flags & CMD_READONLY) && repl_script_declares_write)
        return repl_script_declares_write(c->argv, c->argc);
    if (cmd->props & PROP_EXEC)
        for (int i = 0; i < c->mcount; i++)
            if (c->mstate[i].cmd->flags & CMD_WRITE) return 1;
    return 0;
}

/* Refused on a stale replica (replica-serve-stale-data no, link down): a
 * command without the stale flag, or an EXEC that queued one, as Redis
 * judges EXEC by what it would run (so GET queued while the link was up
 * fails at EXEC once it is down). */
static int denied_when_stale(const client *c, const command *cmd) {
    if (!(cmd->flags & CMD_STALE)) return 1;
    if (cmd->props & PROP_EXEC)
        for (int i = 0; i < c->mcount; i++)
            if (!(c->mstate[i].cmd->flags & CMD_STALE)) return 1;
    return 0;
}

static const char *refusal(client *c, command *cmd) {
    srv.repl_write_cmd = 0;
    if (srv.repl_replica) {
        if (c->repl_role == CLIENT_REPL_MASTER) return NULL;
        if (srv.async_loading && (cmd->flags & CMD_NO_ASYNC_LOADING)) return "LOADING Redis is loading the dataset in memory";
        srv.repl_write_cmd = !srv.cfg.replica_read_only && is_write(c, cmd);
        if (srv.cfg.replica_read_only && is_write(c, cmd)) return "READONLY You can't write against a read only replica.";
        if (rs.link != LINK_CONNECTED && !srv.cfg.replica_serve_stale_data && denied_when_stale(c, cmd))
            return "MASTERDOWN Link with MASTER is down and replica-serve-stale-data is set to 'no'.";
        return NULL;
    }
    if (min_replicas_on() && is_write(c, cmd) && primary_good_replicas() < srv.cfg.min_replicas_to_write)
        return "NOREPLICAS Not enough good replicas to write.";
    return NULL;
}

/* ---- hooks and cron ----------------------------------------------------------------- */

static void link_freed(client *c) {
    if (c->repl_role == CLIENT_REPL_MASTER) replica_master_freed(c);
    else primary_replica_freed(c);
}

/* Snapshots record the history they end (rdb_current_options' hook). */
static void save_info(rdb_options *opt) {
    if (srv.repl_replica) opt->repl_stream_db = srv.repl_master && srv.repl_master->db ? srv.repl_master->db->id : rs.master_db;
    else if (rs.has_backlog) opt->repl_stream_db = 0; /* a restarted primary's stream starts with SELECT anyway */
    else return;
    opt->repl_id = rs.replid;
    opt->repl_offset = rs.offset;
}

/* A server restarted from a snapshot with replication fields continues that
 * history: a replica asks its primary to continue from there; a primary
 * keeps it as its second id, so its replicas continue from it (Redis 7's
 * PSYNC after restart). */
static void restore_history(int will_be_replica) {
    const rdb_load_stats *st = persist_startup_load();
    if (!st || !st->has_repl_id) return;
    memcpy(rs.replid, st->repl_id, sizeof rs.replid);
    rs.offset = st->repl_offset;
    rs.master_db = st->repl_stream_db >= 0 && st->repl_stream_db < db_count() ? st->repl_stream_db : 0;
    if (!will_be_replica) repl_shift_ids();
    repl_backlog_ensure();
    server_log(LOG_NOTICE_, "Replication history %s:%lld restored from the RDB file", st->repl_id, st->repl_offset);
    const char *p;
    size_t n;
    persist_startup_expired(&p, &n);
    if (!will_be_replica && n) repl_feed(p, n); /* the keys that expired while we were down: replicas delete them too */
}

void repl_init(void) {
    repl_new_id();
    memset(rs.replid2, '0', REPLID_LEN);
    rs.master_db = 0;
    rdb_set_repl_info_hook(save_info);
    rs.last_ping_ms = srv.now_ms; /* the first PING one period after start, as Redis's cron counts */
    client_repl_freed = link_freed;
    client_repl_applied = replica_applied;
    command_repl_refusal = refusal;
    reply_set_replica_hook(primary_replica_replied);
    evict_not_counted = not_counted;
    config_repl_changed = repl_update_checks;
    persist_set_repl_hook(primary_bgsave_done);
    char *ro = config_get_by_name(&srv.cfg, "replicaof");
    restore_history(ro && ro[0]);
    persist_startup_expired_free();
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
    db_replica_expire_cycle();
    primary_cron();
    replica_cron();
    backlog_cron();
}

void repl_before_sleep(void) {
    failover_before_sleep();
    primary_before_sleep();
    repl_flush(); /* just before the loop writes the output */
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
    if (min_replicas_on()) sb_addf(b, "min_slaves_good_slaves:%d\r\n", primary_good_replicas());
    for (int i = 0; i < rs.nreplicas; i++) {
        const client *c = rs.replicas[i];
        const replica_link *r = c->repl;
        sb_addf(b, "slave%d:ip=%s,port=%d,state=%s,offset=%lld,lag=%lld\r\n", i, r->ip, r->listening_port,
                replica_state_name(r->state), r->ack_off, (long long)((srv.now_ms - r->ack_ms) / 1000));
    }
    sb_addf(b, "master_failover_state:%s\r\nmaster_replid:%s\r\nmaster_replid2:%s\r\n"
               "master_repl_offset:%lld\r\nsecond_repl_offset:%lld\r\nrepl_backlog_active:%d\r\n"
               "repl_backlog_size:%lld\r\nrepl_backlog_first_byte_offset:%lld\r\nrepl_backlog_histlen:%zu\r\n",
            failover_state_name(), rs.replid, rs.replid2, rs.offset, rs.second_off, rs.has_backlog,
            rs.has_backlog ? (long long)rs.rb.limit : config_ll("repl-backlog-size"), rs.has_backlog ? rb_first(&rs.rb) : 0,
            rs.has_backlog ? rb_histlen(&rs.rb) : 0);
}

void repl_reset_stats(void) { rs.sync_full = rs.sync_partial_ok = rs.sync_partial_err = 0; }

long long repl_stat(int which) {
    return which == REPL_STAT_SYNC_FULL ? rs.sync_full : which == REPL_STAT_PARTIAL_OK ? rs.sync_partial_ok : rs.sync_partial_err;
}

void repl_memory(repl_mem *m) {
    size_t total = rs.has_backlog ? rs.rb.mem : 0, lim = rs.has_backlog ? rs.rb.limit : 0;
    m->total = total;
    m->replicas = rs.nreplicas && total > lim ? total - lim : 0;
    m->backlog = total - m->replicas;
    m->not_counted = not_counted();
}

void repl_get_summary(repl_summary *out) {
    out->replica = srv.repl_replica;
    out->link_up = rs.link == LINK_CONNECTED;
    out->replicas = rs.nreplicas;
    out->offset = rs.offset;
    out->max_lag_bytes = 0;
    out->last_io_ms = rs.last_io_ms;
    out->announced_offset = srv.repl_replica && (rs.link == LINK_TRANSFER || srv.loading) ? 0 : rs.offset;
    out->down_since_ms = rs.down_since_ms;
    for (int i = 0; i < rs.nreplicas; i++) {
        const replica_link *r = rs.replicas[i]->repl;
        if (r->state == RS_ONLINE && rs.offset - r->ack_off > out->max_lag_bytes) out->max_lag_bytes = rs.offset - r->ack_off;
    }
}
