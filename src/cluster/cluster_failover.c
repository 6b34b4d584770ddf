/* cluster_failover.c - a replica taking its failed master's place, by the
 * election Redis Cluster runs: once the master is FAIL, each replica waits
 * 500-1000 ms plus a second per replica with more data than it (its rank),
 * bumps the current epoch and asks every master for its vote; a master
 * votes once per epoch, for a replica whose master failed (or, in a
 * manual failover, that asked with FORCEACK); with the votes of a majority
 * of the masters the replica takes the slots with the election's epoch,
 * and tells everyone with a PONG.
 *
 * Manual failover (CLUSTER FAILOVER): the replica asks its master to stop
 * writes (MFSTART), waits until it has processed the master's stream up to
 * the offset the master reports while paused, then runs the election at
 * once (its votes are forced). FORCE skips the master; TAKEOVER skips the
 * election too.
 */
#include <stdio.h>
#include <string.h>
#include "cluster.h"
#include "cluster_bus.h"
#include "config.h"
#include "frand.h"
#include "pause.h"
#include "repl.h"
#include "server.h"

#define AUTH_TIMEOUT_MIN_MS 2000
#define ELECTION_FIXED_DELAY_MS 500
#define ELECTION_RANDOM_DELAY_MS 500
#define RANK_DELAY_MS 1000
#define CANT_FAILOVER_LOG_PERIOD_S 10

enum { CANT_NONE, CANT_DATA_AGE, CANT_WAITING_DELAY, CANT_EXPIRED, CANT_WAITING_VOTES };

static long long my_offset(void) {
    repl_summary rs;
    repl_get_summary(&rs);
    return rs.offset;
}

#define NOLOG_FAIL_EXTRA_MS 5000

static void log_cant(int reason) {
    static const char *const why[] = {
        "",
        ("Disconnected from master for longer than allowed. Please check the 'cluster-replica-validity-factor' "
         "configuration option."),
        "Waiting the delay before I can start a new failover.",
        "Failover attempt expired.",
        "Waiting for votes, but majority still not reached.",
    };
    if (reason == cluster->cant_failover_reason &&
        srv.now_ms / 1000 - cluster->lastlog_cant_failover < CANT_FAILOVER_LOG_PERIOD_S)
        return;
    cluster->cant_failover_reason = reason;
    cluster_node *m = cluster->myself->master;
    /* only replicas stalled for a while are worth a line */
    if (m && (m->flags & CN_FAIL) && srv.now_ms - m->fail_time < cluster_node_timeout() + NOLOG_FAIL_EXTRA_MS) return;
    cluster->lastlog_cant_failover = srv.now_ms / 1000;
    server_log(LOG_NOTICE_, "Currently unable to failover: %s", why[reason]);
}

/* Replicas of our master with more data than us. */
static int rank(void) {
    cluster_node *m = cluster->myself->master;
    if (!m) return 0;
    long long mine = my_offset();
    int r = 0;
    for (int i = 0; i < m->nreplicas; i++) {
        cluster_node *x = m->replicas[i];
        if (x != cluster->myself && !(x->flags & CN_NOFAILOVER) && x->repl_offset > mine) r++;
    }
    return r;
}

static void broadcast_bare(uint16_t type, int force_ack) {
    unsigned char buf[CMSG_HDR_LEN];
    cmsg_hdr h;
    cluster_msg_header(&h, type);
    if (force_ack) h.mflags[0] |= CMSG_MF0_FORCEACK;
    size_t len = cmsg_build_bare(buf, sizeof buf, &h, type);
    if (len) cluster_broadcast(buf, len);
}

/* We won (or TAKEOVER): our master's slots are ours. */
static void replace_master(void) {
    cluster_node *me = cluster->myself, *old = me->master;
    if (cluster_is_master(me) || !old) return;
    cluster_set_node_as_master(me);
    repl_unfollow();
    for (int s = 0; s < CLUSTER_SLOTS; s++)
        if (cluster_node_has_slot(old, s)) {
            cluster_del_slot(s);
            cluster_add_slot(me, s);
        }
    cluster_update_state();
    cluster_save_config(1);
    cluster_bus_broadcast_pong();
    cluster_failover_reset_manual();
}

static int64_t data_age(long long timeout) {
    repl_summary rs;
    repl_get_summary(&rs);
    int64_t since = rs.link_up ? rs.last_io_ms : rs.down_since_ms;
    int64_t age = since ? srv.now_ms - since : 0;
    return age > timeout ? age - timeout : age;
}

static int may_run(int manual) {
    cluster_node *me = cluster->myself, *m = me->master;
    if (cluster_is_master(me) || !m || (!(m->flags & CN_FAIL) && !manual) || m->numslots == 0) return 0;
    if (config_is_yes(&srv.cfg, "cluster-replica-no-failover") && !manual) return 0;
    return 1;
}

static void schedule(void) {
    cluster->failover_auth_time = srv.now_ms + ELECTION_FIXED_DELAY_MS + (int64_t)frand_below(ELECTION_RANDOM_DELAY_MS);
    cluster->failover_auth_count = 0;
    cluster->failover_auth_sent = 0;
    cluster->failover_auth_rank = rank();
    cluster->failover_auth_time += cluster->failover_auth_rank * RANK_DELAY_MS;
    if (cluster->mf_end) {
        cluster->failover_auth_time = srv.now_ms;
        cluster->failover_auth_rank = 0;
        cluster_todo(CLUSTER_TODO_HANDLE_FAILOVER);
    }
    server_log(LOG_NOTICE_, "Start of election delayed for %lld milliseconds (rank #%d, offset %lld).",
               (long long)(cluster->failover_auth_time - srv.now_ms), cluster->failover_auth_rank, my_offset());
    cluster_bus_broadcast_pong(); /* our offset, to the other replicas */
}

void cluster_bus_handle_failover(void) {
    long long timeout = cluster_node_timeout();
    int manual = cluster->mf_end && cluster->mf_can_start;
    int64_t auth_timeout = timeout * 2 < AUTH_TIMEOUT_MIN_MS ? AUTH_TIMEOUT_MIN_MS : timeout * 2;
    int64_t auth_age = srv.now_ms - cluster->failover_auth_time;
    if (!may_run(manual)) {
        cluster->cant_failover_reason = CANT_NONE;
        return;
    }
    long long factor = config_get_ll(&srv.cfg, "cluster-replica-validity-factor");
    long long ping_period = config_get_ll(&srv.cfg, "repl-ping-replica-period");
    if (factor && data_age(timeout) > ping_period * 1000 + timeout * factor && !manual) {
        log_cant(CANT_DATA_AGE);
        return;
    }
    if (auth_age > auth_timeout * 2) {
        schedule();
        return;
    }
    if (!cluster->failover_auth_sent && !cluster->mf_end) {
        int r = rank();
        if (r > cluster->failover_auth_rank) {
            long long added = (long long)(r - cluster->failover_auth_rank) * RANK_DELAY_MS;
            cluster->failover_auth_time += added;
            cluster->failover_auth_rank = r;
            server_log(LOG_NOTICE_, "Replica rank updated to #%d, added %lld milliseconds of delay.", r, added);
        }
    }
    if (srv.now_ms < cluster->failover_auth_time) {
        log_cant(CANT_WAITING_DELAY);
        return;
    }
    if (auth_age > auth_timeout) {
        log_cant(CANT_EXPIRED);
        return;
    }
    if (!cluster->failover_auth_sent) {
        cluster->current_epoch++;
        cluster->failover_auth_epoch = cluster->current_epoch;
        server_log(LOG_NOTICE_, "Starting a failover election for epoch %llu.",
                   (unsigned long long)cluster->current_epoch);
        broadcast_bare(CMSG_FAILOVER_AUTH_REQUEST, cluster->mf_end != 0);
        cluster->failover_auth_sent = 1;
        cluster_todo(CLUSTER_TODO_SAVE_CONFIG | CLUSTER_TODO_UPDATE_STATE | CLUSTER_TODO_FSYNC_CONFIG);
        return;
    }
    if (cluster->failover_auth_count >= cluster->size / 2 + 1) {
        server_log(LOG_NOTICE_, "Failover election won: I'm the new master.");
        if (cluster->myself->config_epoch < cluster->failover_auth_epoch) {
            cluster->myself->config_epoch = cluster->failover_auth_epoch;
            server_log(LOG_NOTICE_, "configEpoch set to %llu after successful failover",
                       (unsigned long long)cluster->myself->config_epoch);
        }
        replace_master();
    } else {
        log_cant(CANT_WAITING_VOTES);
    }
}

/* ---- voting (masters) ------------------------------------------------------------ */

static int refuse(const cluster_node *n, const char *why) {
    server_log(LOG_NOTICE_, "Failover auth denied to " CLUSTER_NAME_FMT ": %s", n->name, why);
    return 1;
}

void cluster_failover_auth_request(cluster_node *n, const cmsg *m) {
    cluster_node *me = cluster->myself, *master = n->master;
    if (cluster_is_replica(me) || me->numslots == 0) return;
    char why[160];
    if (m->h.current_epoch < cluster->current_epoch) {
        snprintf(why, sizeof why, "reqEpoch (%llu) < curEpoch(%llu)", (unsigned long long)m->h.current_epoch,
                 (unsigned long long)cluster->current_epoch);
        refuse(n, why);
        return;
    }
    if (cluster->last_vote_epoch == cluster->current_epoch) {
        snprintf(why, sizeof why, "already voted for epoch %llu", (unsigned long long)cluster->current_epoch);
        refuse(n, why);
        return;
    }
    int force = (m->h.mflags[0] & CMSG_MF0_FORCEACK) != 0;
    if (cluster_is_master(n) || !master || (!(master->flags & CN_FAIL) && !force)) {
        refuse(n, cluster_is_master(n) ? "it is a master node" : !master ? "I don't know its master" : "its master is up");
        return;
    }
    long long timeout = cluster_node_timeout();
    if (srv.now_ms - master->voted_time < timeout * 2) {
        snprintf(why, sizeof why, "can't vote about this master before %lld milliseconds",
                 (long long)(timeout * 2 - (srv.now_ms - master->voted_time)));
        refuse(n, why);
        return;
    }
    for (int s = 0; s < CLUSTER_SLOTS; s++) {
        if (!cmsg_slot_test(m->h.myslots, (unsigned)s)) continue;
        cluster_node *owner = cluster->slot[s].owner;
        if (!owner || owner->config_epoch <= m->h.config_epoch) continue;
        snprintf(why, sizeof why, "slot %d epoch (%llu) > reqEpoch (%llu)", s, (unsigned long long)owner->config_epoch,
                 (unsigned long long)m->h.config_epoch);
        refuse(n, why);
        return;
    }
    cluster->last_vote_epoch = cluster->current_epoch;
    master->voted_time = srv.now_ms;
    cluster_todo(CLUSTER_TODO_SAVE_CONFIG | CLUSTER_TODO_FSYNC_CONFIG);
    if (n->link && !n->link->connecting) {
        unsigned char buf[CMSG_HDR_LEN];
        cmsg_hdr h;
        cluster_msg_header(&h, CMSG_FAILOVER_AUTH_ACK);
        size_t len = cmsg_build_bare(buf, sizeof buf, &h, CMSG_FAILOVER_AUTH_ACK);
        if (len) cluster_link_send(n->link, buf, len);
    }
    server_log(LOG_NOTICE_, "Failover auth granted to " CLUSTER_NAME_FMT " for epoch %llu", n->name,
               (unsigned long long)cluster->current_epoch);
}

void cluster_failover_auth_ack(cluster_node *sender, const cmsg *m) {
    if (cluster_is_master(sender) && sender->numslots > 0 && m->h.current_epoch >= cluster->failover_auth_epoch) {
        cluster->failover_auth_count++;
        cluster_todo(CLUSTER_TODO_HANDLE_FAILOVER);
    }
}

/* ---- manual failover --------------------------------------------------------------- */

void cluster_failover_reset_manual(void) {
    if (cluster->mf_replica) { /* we were the paused master */
        pause_end();
        srv.repl_ping_held = 0;
    }
    cluster->mf_end = 0;
    cluster->mf_can_start = 0;
    cluster->mf_replica = NULL;
    cluster->mf_master_offset = -1;
}

int cluster_failover_paused(void) { return cluster_is_master(cluster->myself) && cluster->mf_end != 0; }

void cluster_bus_manual_failover(int force, int takeover) {
    cluster_failover_reset_manual();
    cluster->mf_end = srv.now_ms + CLUSTER_MF_TIMEOUT_MS;
    if (takeover) {
        server_log(LOG_WARNING_, "Taking over the master (user request).");
        cluster_bump_epoch_without_consensus();
        replace_master();
    } else if (force) {
        server_log(LOG_WARNING_, "Forced failover user request accepted.");
        cluster->mf_can_start = 1;
    } else {
        server_log(LOG_WARNING_, "Manual failover user request accepted.");
        cluster_node *m = cluster->myself->master;
        if (m && m->link && !m->link->connecting) {
            unsigned char buf[CMSG_HDR_LEN];
            cmsg_hdr h;
            cluster_msg_header(&h, CMSG_MFSTART);
            size_t len = cmsg_build_bare(buf, sizeof buf, &h, CMSG_MFSTART);
            if (len) cluster_link_send(m->link, buf, len);
        }
    }
}

/* Our replica asks for a manual failover: writes stop, and the PING it
 * gets carries the offset it must reach. */
void cluster_failover_mfstart(cluster_node *sender, cluster_link *l) {
    if (sender->master != cluster->myself) return;
    cluster_failover_reset_manual();
    cluster->mf_end = srv.now_ms + CLUSTER_MF_TIMEOUT_MS;
    cluster->mf_replica = sender;
    pause_start(srv.now_ms + CLUSTER_MF_TIMEOUT_MS * 2, PAUSE_WRITE);
    srv.repl_ping_held = 1;
    server_log(LOG_WARNING_, "Manual failover requested by replica " CLUSTER_NAME_FMT ".", sender->name);
    cluster_send_ping(l->inbound && sender->link ? sender->link : l, CMSG_PING);
}

void cluster_failover_master_offset(cluster_node *sender, const cmsg *m) {
    cluster_node *me = cluster->myself;
    if (cluster->mf_end && cluster_is_replica(me) && me->master == sender && (m->h.mflags[0] & CMSG_MF0_PAUSED) &&
        cluster->mf_master_offset == -1) {
        cluster->mf_master_offset = sender->repl_offset;
        cluster_todo(CLUSTER_TODO_HANDLE_FAILOVER);
        server_log(LOG_WARNING_, "Received replication offset for paused master manual failover: %lld",
                   cluster->mf_master_offset);
    }
}

static void manual_failover_step(void) {
    if (!cluster->mf_end) return;
    if (cluster->mf_end < srv.now_ms) {
        server_log(LOG_WARNING_, "Manual failover timed out.");
        cluster_failover_reset_manual();
        return;
    }
    if (cluster->mf_can_start || cluster->mf_master_offset == -1 || cluster_is_master(cluster->myself)) return;
    if (cluster->mf_master_offset == my_offset()) {
        cluster->mf_can_start = 1;
        server_log(LOG_WARNING_, "All master replication stream processed, manual failover can start.");
        cluster_todo(CLUSTER_TODO_HANDLE_FAILOVER);
    }
}

/* ---- replica migration -------------------------------------------------------------- */

#define MIGRATION_DELAY_MS 5000

static int ok_replicas(const cluster_node *m) {
    int ok = 0;
    for (int i = 0; i < m->nreplicas; i++) ok += !(m->replicas[i]->flags & (CN_FAIL | CN_PFAIL));
    return ok;
}

/* A master with slots whose replicas all failed (and that had some: the
 * MIGRATE_TO flag) gets one replica from the master with the most, if
 * that leaves it more than cluster-migration-barrier: the replica with the
 * smallest name among those of the best-served masters moves, once the
 * master stayed orphaned for MIGRATION_DELAY_MS. */
static void migrate_if_needed(int max_replicas) {
    cluster_node *me = cluster->myself, *mine = me->master, *target = NULL, *candidate = me;
    if (cluster->state != CLUSTER_OK || !mine) return;
    if (ok_replicas(mine) <= config_get_ll(&srv.cfg, "cluster-migration-barrier")) return;
    for (int i = 0; i < cluster->nnodes; i++) {
        cluster_node *n = cluster->nodes[i];
        int ok = cluster_is_master(n) ? cluster_count_non_failing_replicas(n) : 0;
        int orphaned = cluster_is_master(n) && !(n->flags & CN_FAIL) && (n->flags & CN_MIGRATE_TO) && ok == 0;
        if (orphaned) {
            if (!target && n->numslots > 0) target = n;
            if (!n->orphaned_time) n->orphaned_time = srv.now_ms;
        } else {
            n->orphaned_time = 0;
        }
        if (ok == max_replicas)
            for (int j = 0; j < n->nreplicas; j++)
                if (memcmp(n->replicas[j]->name, candidate->name, CLUSTER_NAMELEN) < 0) candidate = n->replicas[j];
    }
    if (target && candidate == me && srv.now_ms - target->orphaned_time > MIGRATION_DELAY_MS) {
        server_log(LOG_NOTICE_, "Migrating to orphaned master " CLUSTER_NAME_FMT, target->name);
        cluster_become_replica_of(target);
    }
}

static void replica_migration_step(void) {
    cluster_node *me = cluster->myself;
    int orphaned = 0, max = 0, mine = 0;
    for (int i = 0; i < cluster->nnodes; i++) {
        cluster_node *n = cluster->nodes[i];
        if (!cluster_is_master(n) || (n->flags & CN_FAIL)) continue;
        int ok = cluster_count_non_failing_replicas(n);
        if (ok == 0 && n->numslots > 0 && (n->flags & CN_MIGRATE_TO)) orphaned++;
        if (ok > max) max = ok;
        if (me->master == n) mine = ok;
    }
    if (orphaned && max >= 2 && mine == max && config_is_yes(&srv.cfg, "cluster-allow-replica-migration"))
        migrate_if_needed(max);
}

void cluster_failover_cron(void) {
    cluster_node *me = cluster->myself;
    /* a replica whose master is known follows it */
    if (cluster_is_replica(me) && me->master && me->master->ip[0] && !cluster->mf_end)
        repl_follow(me->master->ip, me->master->port);
    manual_failover_step();
    if (cluster_is_replica(me)) {
        cluster_bus_handle_failover();
        replica_migration_step();
    }
}
