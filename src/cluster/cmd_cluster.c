/* cmd_cluster.c - CLUSTER and its subcommands, ASKING, READONLY and
 * READWRITE. In standalone mode every one of them answers "cluster
 * support disabled", as redis-server 7.0 without cluster-enabled does; they
 * stay in the table so that COMMAND, COMMAND DOCS and ACL rules naming them
 * see redis-server's command set. In cluster mode: the administration
 * subcommands (slots, slot migration states, epochs, MEET, FORGET,
 * REPLICATE, RESET...); what they show (INFO, NODES, SLOTS...) is in
 * cmd_cluster_view.c.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "cluster.h"
#include "cluster_bus.h"
#include "cluster_conf.h"
#include "cmd_cluster.h"
#include "command.h"
#include "config.h"
#include "db.h"
#include "repl.h"
#include "reply.h"
#include "server.h"
#include "util.h"
#include "zmalloc.h"

static void cmd_cluster_disabled(client *c) { reply_error(c, "ERR This instance has cluster support disabled"); }

int cluster_refuse_disabled(client *c) {
    if (cluster) return 0;
    cmd_cluster_disabled(c);
    return 1;
}

static int arg_ll(span s, long long *v) { return str_to_ll(s.p, s.len, v); }

/* A slot number argument: 0..16383, else -1 after Redis's error. */
static int slot_arg(client *c, span s) {
    long long v;
    if (!arg_ll(s, &v) || v < 0 || v >= CLUSTER_SLOTS) {
        reply_error(c, "ERR Invalid or out of range slot");
        return -1;
    }
    return (int)v;
}

/* Redis's error for a subcommand called with too many arguments. */
static void wrong_args(client *c) {
    reply_errorf(c, "ERR unknown subcommand or wrong number of arguments for '%.*s'. Try CLUSTER HELP.",
                 (int)c->argv[1].len, c->argv[1].p);
}

static void changed(unsigned todo) { cluster_todo(CLUSTER_TODO_UPDATE_STATE | CLUSTER_TODO_SAVE_CONFIG | todo); }

/* ---- slots ---------------------------------------------------------------- */

/* Marks the slots in `want` after checking every one (nothing changes on an
 * error): adding needs them free, deleting needs them assigned. */
static int check_slots(client *c, const unsigned char *want, int add) {
    for (int s = 0; s < CLUSTER_SLOTS; s++) {
        if (!want[s]) continue;
        if (add && cluster->slot[s].owner) {
            reply_errorf(c, "ERR Slot %d is already busy", s);
            return -1;
        }
        if (!add && !cluster->slot[s].owner) {
            reply_errorf(c, "ERR Slot %d is already unassigned", s);
            return -1;
        }
    }
    return 0;
}

static void apply_slots(client *c, const unsigned char *want, int add) {
    if (check_slots(c, want, add) < 0) return;
    for (int s = 0; s < CLUSTER_SLOTS; s++) {
        if (!want[s]) continue;
        if (add) {
            /* we are the owner now: an import of it is over */
            cluster->slot[s].importing_from = NULL;
            cluster_add_slot(cluster->myself, s);
        } else {
            cluster_del_slot(s);
        }
    }
    changed(0);
    reply_ok(c);
}

static void slots_cmd(client *c, int add) {
    if (cluster_refuse_disabled(c)) return;
    unsigned char *want = zcalloc(CLUSTER_SLOTS);
    for (int i = 2; i < c->argc; i++) {
        int s = slot_arg(c, c->argv[i]);
        if (s < 0) goto done;
        if (want[s]++) {
            reply_errorf(c, "ERR Slot %d specified multiple times", s);
            goto done;
        }
    }
    apply_slots(c, want, add);
done:
    zfree(want);
}

static void slots_range_cmd(client *c, int add) {
    if (cluster_refuse_disabled(c)) return;
    if (c->argc % 2 == 1) {
        reply_err_arity(c);
        return;
    }
    unsigned char *want = zcalloc(CLUSTER_SLOTS);
    for (int i = 2; i < c->argc; i += 2) {
        int a = slot_arg(c, c->argv[i]), b = a < 0 ? -1 : slot_arg(c, c->argv[i + 1]);
        if (b < 0) goto done;
        if (a > b) {
            reply_errorf(c, "ERR start slot number %d is greater than end slot number %d", a, b);
            goto done;
        }
        for (int s = a; s <= b; s++)
            if (want[s]++) {
                reply_errorf(c, "ERR Slot %d specified multiple times", s);
                goto done;
            }
    }
    apply_slots(c, want, add);
done:
    zfree(want);
}

static void cl_addslots(client *c) { slots_cmd(c, 1); }
static void cl_delslots(client *c) { slots_cmd(c, 0); }
static void cl_addslotsrange(client *c) { slots_range_cmd(c, 1); }
static void cl_delslotsrange(client *c) { slots_range_cmd(c, 0); }

static void cl_flushslots(client *c) {
    if (cluster_refuse_disabled(c)) return;
    if (dict_size(&db_get(0)->keys)) {
        reply_error(c, "ERR DB must be empty to perform CLUSTER FLUSHSLOTS.");
        return;
    }
    cluster_del_node_slots(cluster->myself);
    changed(0);
    reply_ok(c);
}

/* A node named by an argument, or NULL after err (with %s the name). */
static cluster_node *node_arg(client *c, span s, const char *err) {
    cluster_node *n = cluster_lookup(s.p, s.len);
    if (!n && err) reply_errorf(c, err, (int)s.len, s.p);
    return n;
}

static int setslot_migrating(client *c, int slot) {
    if (cluster->slot[slot].owner != cluster->myself) {
        reply_errorf(c, "ERR I'm not the owner of hash slot %d", slot);
        return -1;
    }
    cluster_node *n = node_arg(c, c->argv[4], "ERR I don't know about node %.*s");
    if (!n) return -1;
    if (cluster_is_replica(n)) {
        reply_error(c, "ERR Target node is not a master");
        return -1;
    }
    cluster->slot[slot].migrating_to = n;
    cluster_slot_refresh(slot);
    return 0;
}

static int setslot_importing(client *c, int slot) {
    if (cluster->slot[slot].owner == cluster->myself) {
        reply_errorf(c, "ERR I'm already the owner of hash slot %d", slot);
        return -1;
    }
    cluster_node *n = node_arg(c, c->argv[4], "ERR I don't know about node %.*s");
    if (!n) return -1;
    if (cluster_is_replica(n)) {
        reply_error(c, "ERR Target node is not a master");
        return -1;
    }
    cluster->slot[slot].importing_from = n;
    cluster_slot_refresh(slot);
    return 0;
}

static int setslot_node(client *c, int slot) {
    cluster_node *n = node_arg(c, c->argv[4], "ERR Unknown node %.*s");
    if (!n) return -1;
    if (cluster_is_replica(n)) {
        reply_error(c, "ERR Target node is not a master");
        return -1;
    }
    cluster_node *me = cluster->myself;
    size_t keys = cluster_keys_in_slot(slot);
    if (cluster->slot[slot].owner == me && n != me && keys) {
        reply_errorf(c, "ERR Can't assign hashslot %d to a different node while I still hold keys for this hash slot.", slot);
        return -1;
    }
    if (!keys) cluster->slot[slot].migrating_to = NULL; /* a migration with nothing left to move is over (refreshed below) */
    int was_mine = cluster->slot[slot].owner == me;
    cluster_del_slot(slot);
    cluster_add_slot(n, slot);
    if (was_mine && n != me && me->numslots == 0 && config_is_yes(&srv.cfg, "cluster-allow-replica-migration")) {
        server_log(LOG_WARNING_, "Configuration change detected. Reconfiguring myself as a replica of " CLUSTER_NAME_FMT,
                   n->name);
        cluster_become_replica_of(n);
    }
    if (n == me && cluster->slot[slot].importing_from) {
        /* the import is over: our claim on the slot needs the greatest epoch */
        if (cluster_bump_epoch_without_consensus())
            server_log(LOG_WARNING_, "configEpoch updated after importing slot %d", slot);
        cluster->slot[slot].importing_from = NULL;
        cluster_slot_refresh(slot);
        cluster_bus_broadcast_pong();
    }
    return 0;
}

static void cl_setslot(client *c) {
    if (cluster_refuse_disabled(c)) return;
    if (cluster_is_replica(cluster->myself)) {
        reply_error(c, "ERR Please use SETSLOT only with masters.");
        return;
    }
    int slot = slot_arg(c, c->argv[2]);
    if (slot < 0) return;
    span what = c->argv[3];
    int rc;
    if (span_eq_nocase(what, "migrating") && c->argc == 5) rc = setslot_migrating(c, slot);
    else if (span_eq_nocase(what, "importing") && c->argc == 5) rc = setslot_importing(c, slot);
    else if (span_eq_nocase(what, "stable") && c->argc == 4) {
        cluster->slot[slot].importing_from = cluster->slot[slot].migrating_to = NULL;
        cluster_slot_refresh(slot);
        rc = 0;
    } else if (span_eq_nocase(what, "node") && c->argc == 5) rc = setslot_node(c, slot);
    else {
        reply_error(c, "ERR Invalid CLUSTER SETSLOT action or number of arguments. Try CLUSTER HELP");
        return;
    }
    if (rc < 0) return;
    changed(0); /* as Redis: saved, not fsynced (an epoch bump fsyncs) */
    reply_ok(c);
}

static void cl_countkeysinslot(client *c) {
    if (cluster_refuse_disabled(c)) return;
    long long s;
    if (!arg_ll(c->argv[2], &s)) {
        reply_err_notint(c);
        return;
    }
    if (s < 0 || s >= CLUSTER_SLOTS) {
        reply_error(c, "ERR Invalid slot");
        return;
    }
    reply_int(c, (long long)cluster_keys_in_slot((int)s));
}

static void emit_key(void *arg, const char *key, size_t klen) { reply_bulk((client *)arg, key, klen); }

static void cl_getkeysinslot(client *c) {
    if (cluster_refuse_disabled(c)) return;
    long long s, max;
    if (!arg_ll(c->argv[3], &max) || !arg_ll(c->argv[2], &s)) {
        reply_err_notint(c);
        return;
    }
    if (s < 0 || s >= CLUSTER_SLOTS || max < 0) {
        reply_error(c, "ERR Invalid slot or number of keys");
        return;
    }
    size_t have = cluster_keys_in_slot((int)s), n = (size_t)max < have ? (size_t)max : have;
    reply_array(c, (long)n);
    db_slot_keys(db_get(0), (unsigned)s, n, emit_key, c);
}

static void cl_keyslot(client *c) {
    if (cluster_refuse_disabled(c)) return;
    reply_int(c, key_hash_slot(c->argv[2].p, c->argv[2].len));
}

/* ---- nodes ------------------------------------------------------------------ */

static void cl_meet(client *c) {
    if (cluster_refuse_disabled(c)) return;
    if (c->argc > 5) {
        wrong_args(c);
        return;
    }
    long long port, cport;
    if (!arg_ll(c->argv[3], &port)) {
        reply_errorf(c, "ERR Invalid TCP base port specified: %.*s", (int)c->argv[3].len, c->argv[3].p);
        return;
    }
    if (c->argc == 5) {
        if (!arg_ll(c->argv[4], &cport)) {
            reply_errorf(c, "ERR Invalid TCP bus port specified: %.*s", (int)c->argv[4].len, c->argv[4].p);
            return;
        }
    } else {
        cport = port + 10000;
    }
    char ip[CLUSTER_IPLEN + 1];
    span_cstr(ip, sizeof ip, c->argv[2]);
    if (port < 0 || port > 65535 || cport < 0 || cport > 65535 ||
        cluster_bus_start_handshake(ip, (int)port, (int)cport) < 0) {
        reply_errorf(c, "ERR Invalid node address specified: %.*s:%.*s", (int)c->argv[2].len, c->argv[2].p,
                     (int)c->argv[3].len, c->argv[3].p);
        return;
    }
    reply_ok(c);
}

static void cl_forget(client *c) {
    if (cluster_refuse_disabled(c)) return;
    cluster_node *n = node_arg(c, c->argv[2], "ERR Unknown node %.*s");
    if (!n) return;
    cluster_node *me = cluster->myself;
    if (n == me) {
        reply_error(c, "ERR I tried hard but I can't forget myself...");
        return;
    }
    if (cluster_is_replica(me) && me->master == n) {
        reply_error(c, "ERR Can't forget my master!");
        return;
    }
    cluster_forget_for_a_while(n->name);
    cluster_del_node(n);
    changed(0);
    reply_ok(c);
}

static void cl_replicate(client *c) {
    if (cluster_refuse_disabled(c)) return;
    cluster_node *n = node_arg(c, c->argv[2], "ERR Unknown node %.*s");
    if (!n) return;
    cluster_node *me = cluster->myself;
    if (n == me) {
        reply_error(c, "ERR Can't replicate myself");
        return;
    }
    if (cluster_is_replica(n)) {
        reply_error(c, "ERR I can only replicate a master, not a replica.");
        return;
    }
    if (cluster_is_master(me) && (me->numslots || dict_size(&db_get(0)->keys))) {
        reply_error(c, "ERR To set a master the node must be empty and without assigned slots.");
        return;
    }
    cluster_become_replica_of(n);
    changed(0);
    reply_ok(c);
}

static void cl_count_failure_reports(client *c) {
    if (cluster_refuse_disabled(c)) return;
    cluster_node *n = node_arg(c, c->argv[2], "ERR Unknown node %.*s");
    if (n) reply_int(c, cluster_bus_failure_reports(n));
}

static void cl_failover(client *c) {
    if (cluster_refuse_disabled(c)) return;
    int force = 0, takeover = 0;
    if (c->argc == 3 && span_eq_nocase(c->argv[2], "force")) force = 1;
    else if (c->argc == 3 && span_eq_nocase(c->argv[2], "takeover")) takeover = 1;
    else if (c->argc > 3) {
        wrong_args(c);
        return;
    } else if (c->argc == 3) {
        reply_err_syntax(c);
        return;
    }
    cluster_node *me = cluster->myself;
    if (cluster_is_master(me)) {
        reply_error(c, "ERR You should send CLUSTER FAILOVER to a replica");
        return;
    }
    if (!me->master) {
        reply_error(c, "ERR I'm a replica but my master is unknown to me");
        return;
    }
    if (!force && !takeover && (me->master->flags & (CN_FAIL | CN_PFAIL))) {
        reply_error(c, "ERR Master is down or failed, please use CLUSTER FAILOVER FORCE");
        return;
    }
    cluster_bus_manual_failover(force, takeover);
    reply_ok(c);
}

static void cl_reset(client *c) {
    if (cluster_refuse_disabled(c)) return;
    int hard = 0;
    if (c->argc == 3 && span_eq_nocase(c->argv[2], "hard")) hard = 1;
    else if (c->argc == 3 && !span_eq_nocase(c->argv[2], "soft")) {
        reply_err_syntax(c);
        return;
    } else if (c->argc > 3) {
        wrong_args(c);
        return;
    }
    if (cluster_is_master(cluster->myself) && dict_size(&db_get(0)->keys)) {
        reply_error(c, "ERR CLUSTER RESET can't be called with master nodes containing keys");
        return;
    }
    cluster_reset(hard);
    reply_ok(c);
}

static void cl_saveconfig(client *c) {
    if (cluster_refuse_disabled(c)) return;
    char why[256];
    if (cluster_save_config_err(1, why, sizeof why) < 0) {
        reply_errorf(c, "ERR error saving the cluster node config: %s", why);
        return;
    }
    reply_ok(c);
}

static void cl_bumpepoch(client *c) {
    if (cluster_refuse_disabled(c)) return;
    int bumped = cluster_bump_epoch_without_consensus();
    char msg[64];
    snprintf(msg, sizeof msg, "%s %llu", bumped ? "BUMPED" : "STILL", (unsigned long long)cluster->myself->config_epoch);
    reply_status(c, msg);
}

static void cl_set_config_epoch(client *c) {
    if (cluster_refuse_disabled(c)) return;
    long long e;
    if (!arg_ll(c->argv[2], &e)) {
        reply_err_notint(c);
        return;
    }
    if (e < 0) {
        reply_errorf(c, "ERR Invalid config epoch specified: %lld", e);
        return;
    }
    if (cluster->nnodes > 1) {
        reply_error(c, "ERR The user can assign a config epoch only when the node does not know any other node.");
        return;
    }
    if (cluster->myself->config_epoch != 0) {
        reply_error(c, "ERR Node config epoch is already non-zero");
        return;
    }
    cluster->myself->config_epoch = (uint64_t)e;
    server_log(LOG_WARNING_, "configEpoch set to %llu via CLUSTER SET-CONFIG-EPOCH", (unsigned long long)e);
    if (cluster->current_epoch < (uint64_t)e) cluster->current_epoch = (uint64_t)e;
    changed(CLUSTER_TODO_FSYNC_CONFIG);
    reply_ok(c);
}

static const char *const help_lines[] = {
    "CLUSTER <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
    "ADDSLOTS <slot> [<slot> ...]",
    "    Assign slots to current node.",
    "ADDSLOTSRANGE <start slot> <end slot> [<start slot> <end slot> ...]",
    "    Assign slots which are between <start-slot> and <end-slot> to current node.",
    "BUMPEPOCH",
    "    Advance the cluster config epoch.",
    "COUNT-FAILURE-REPORTS <node-id>",
    "    Return number of failure reports for <node-id>.",
    "COUNTKEYSINSLOT <slot>",
    "    Return the number of keys in <slot>.",
    "DELSLOTS <slot> [<slot> ...]",
    "    Delete slots information from current node.",
    "DELSLOTSRANGE <start slot> <end slot> [<start slot> <end slot> ...]",
    "    Delete slots information which are between <start-slot> and <end-slot> from current node.",
    "FAILOVER [FORCE|TAKEOVER]",
    "    Promote current replica node to being a master.",
    "FORGET <node-id>",
    "    Remove a node from the cluster.",
    "GETKEYSINSLOT <slot> <count>",
    "    Return key names stored by current node in a slot.",
    "FLUSHSLOTS",
    "    Delete current node own slots information.",
    "INFO",
    "    Return information about the cluster.",
    "KEYSLOT <key>",
    "    Return the hash slot for <key>.",
    "MEET <ip> <port> [<bus-port>]",
    "    Connect nodes into a working cluster.",
    "MYID",
    "    Return the node id.",
    "NODES",
    "    Return cluster configuration seen by node. Output format:",
    "    <id> <ip:port> <flags> <master> <pings> <pongs> <epoch> <link> <slot> ...",
    "REPLICATE <node-id>",
    "    Configure current node as replica to <node-id>.",
    "RESET [HARD|SOFT]",
    "    Reset current node (default: soft).",
    "SET-CONFIG-EPOCH <epoch>",
    "    Set config epoch of current node.",
    "SETSLOT <slot> (IMPORTING <node-id>|MIGRATING <node-id>|STABLE|NODE <node-id>)",
    "    Set slot state.",
    "REPLICAS <node-id>",
    "    Return <node-id> replicas.",
    "SAVECONFIG",
    "    Force saving cluster configuration on disk.",
    "SLOTS",
    "    Return information about slots range mappings. Each range is made of:",
    "    start, end, master and replicas IP addresses, ports and ids",
    "SHARDS",
    "    Return information about slot range mappings and the nodes associated with them.",
    "LINKS",
    "    Return information about all network links between this node and its peers.",
    "    Output format is an array where each array element is a map containing attributes of a link",
    "HELP",
    "    Prints this help.",
    NULL,
};

static void cl_help(client *c) {
    if (cluster_refuse_disabled(c)) return;
    reply_help(c, help_lines);
}

/* ---- ASKING, READONLY, READWRITE -------------------------------------------- */

static void cmd_asking(client *c) {
    if (cluster_refuse_disabled(c)) return;
    c->cluster_flags |= CLF_ASKING | CLF_ASKING_FRESH;
    reply_ok(c);
}

static void cmd_readonly(client *c) {
    if (cluster_refuse_disabled(c)) return;
    c->cluster_flags |= CLF_READONLY;
    reply_ok(c);
}

static void cmd_readwrite(client *c) {
    if (cluster_refuse_disabled(c)) return;
    c->cluster_flags &= (uint8_t)~CLF_READONLY;
    reply_ok(c);
}

#define F_CLUSTER (CMD_LOADING | CMD_STALE | CMD_FAST)
#define F_CADMIN (CMD_ADMIN | CMD_STALE | CMD_NO_ASYNC_LOADING)

static command cluster_subcommands[] = {
    CMD("addslots", cl_addslots, -3, .flags = F_CADMIN, .acl = "admin slow dangerous",
        .summary = "Assign new hash slots to receiving node", .since = "3.0.0",
        .complexity = "O(N) where N is the total number of hash slot arguments"),
    CMD("addslotsrange", cl_addslotsrange, -4, .flags = F_CADMIN, .acl = "admin slow dangerous",
        .summary = "Assign new hash slots to receiving node", .since = "7.0.0",
        .complexity = "O(N) where N is the total number of the slots between the start slot and end slot arguments."),
    CMD("bumpepoch", cl_bumpepoch, 2, .flags = F_CADMIN, .acl = "admin slow dangerous",
        .summary = "Advance the cluster config epoch", .since = "3.0.0",
        .complexity = "O(1)"),
    CMD("count-failure-reports", cl_count_failure_reports, 3, .flags = CMD_ADMIN | CMD_STALE, .acl = "admin slow dangerous",
        .summary = "Return the number of failure reports active for a given node", .since = "3.0.0",
        .complexity = "O(N) where N is the number of failure reports"),
    CMD("countkeysinslot", cl_countkeysinslot, 3, .flags = CMD_STALE, .acl = "slow",
        .summary = "Return the number of local keys in the specified hash slot", .since = "3.0.0",
        .complexity = "O(1)"),
    CMD("delslots", cl_delslots, -3, .flags = F_CADMIN, .acl = "admin slow dangerous",
        .summary = "Set hash slots as unbound in receiving node", .since = "3.0.0",
        .complexity = "O(N) where N is the total number of hash slot arguments"),
    CMD("delslotsrange", cl_delslotsrange, -4, .flags = F_CADMIN, .acl = "admin slow dangerous",
        .summary = "Set hash slots as unbound in receiving node", .since = "7.0.0",
        .complexity = "O(N) where N is the total number of the slots between the start slot and end slot arguments."),
    CMD("failover", cl_failover, -2, .flags = F_CADMIN, .acl = "admin slow dangerous",
        .summary = "Forces a replica to perform a manual failover of its master.", .since = "3.0.0",
        .complexity = "O(1)"),
    CMD("flushslots", cl_flushslots, 2, .flags = F_CADMIN, .acl = "admin slow dangerous",
        .summary = "Delete a node's own slots information", .since = "3.0.0",
        .complexity = "O(1)"),
    CMD("forget", cl_forget, 3, .flags = F_CADMIN, .acl = "admin slow dangerous",
        .summary = "Remove a node from the nodes table", .since = "3.0.0",
        .complexity = "O(1)"),
    CMD("getkeysinslot", cl_getkeysinslot, 4, .flags = CMD_STALE, .acl = "slow",
        .summary = "Return local key names in the specified hash slot", .since = "3.0.0",
        .complexity = "O(log(N)) where N is the number of requested keys"),
    CMD("help", cl_help, 2, .flags = CMD_LOADING | CMD_STALE, .acl = "slow",
        .summary = "Show helpful text about the different subcommands", .since = "5.0.0",
        .complexity = "O(1)"),
    CMD("info", cl_info, 2, .flags = CMD_STALE, .acl = "slow",
        .summary = "Provides info about Redis Cluster node state", .since = "3.0.0",
        .complexity = "O(1)"),
    CMD("keyslot", cl_keyslot, 3, .flags = CMD_STALE, .acl = "slow",
        .summary = "Returns the hash slot of the specified key", .since = "3.0.0",
        .complexity = "O(N) where N is the number of bytes in the key"),
    CMD("links", cl_links, 2, .flags = CMD_STALE, .acl = "slow",
        .summary = "Returns a list of all TCP links to and from peer nodes in cluster", .since = "7.0.0",
        .complexity = "O(N) where N is the total number of Cluster nodes"),
    CMD("meet", cl_meet, -4, .flags = F_CADMIN, .acl = "admin slow dangerous",
        .summary = "Force a node cluster to handshake with another node", .since = "3.0.0",
        .complexity = "O(1)"),
    CMD("myid", cl_myid, 2, .flags = CMD_STALE, .acl = "slow",
        .summary = "Return the node id", .since = "3.0.0",
        .complexity = "O(1)"),
    CMD("nodes", cl_nodes, 2, .flags = CMD_STALE, .acl = "slow",
        .summary = "Get Cluster config for the node", .since = "3.0.0",
        .complexity = "O(N) where N is the total number of Cluster nodes"),
    CMD("replicas", cl_replicas, 3, .flags = CMD_ADMIN | CMD_STALE, .acl = "admin slow dangerous",
        .summary = "List replica nodes of the specified master node", .since = "5.0.0",
        .complexity = "O(1)"),
    CMD("replicate", cl_replicate, 3, .flags = F_CADMIN, .acl = "admin slow dangerous",
        .summary = "Reconfigure a node as a replica of the specified master node", .since = "3.0.0",
        .complexity = "O(1)"),
    CMD("reset", cl_reset, -2, .flags = CMD_ADMIN | CMD_NOSCRIPT | CMD_STALE, .acl = "admin slow dangerous",
        .summary = "Reset a Redis Cluster node", .since = "3.0.0",
        .complexity = "O(N) where N is the number of known nodes. The command may execute a FLUSHALL as a side effect."),
    CMD("saveconfig", cl_saveconfig, 2, .flags = F_CADMIN, .acl = "admin slow dangerous",
        .summary = "Forces the node to save cluster state on disk", .since = "3.0.0",
        .complexity = "O(1)"),
    CMD("set-config-epoch", cl_set_config_epoch, 3, .flags = F_CADMIN, .acl = "admin slow dangerous",
        .summary = "Set the configuration epoch in a new node", .since = "3.0.0",
        .complexity = "O(1)"),
    CMD("setslot", cl_setslot, -4, .flags = F_CADMIN, .acl = "admin slow dangerous",
        .summary = "Bind a hash slot to a specific node", .since = "3.0.0",
        .complexity = "O(1)"),
    CMD("shards", cl_shards, 2, .flags = CMD_STALE, .acl = "slow",
        .summary = "Get array of cluster slots to node mappings", .since = "7.0.0",
        .complexity = "O(N) where N is the total number of cluster nodes"),
    CMD("slaves", cl_replicas, 3, .flags = CMD_ADMIN | CMD_STALE, .acl = "admin slow dangerous",
        .summary = "List replica nodes of the specified master node", .since = "3.0.0",
        .complexity = "O(1)"),
    CMD("slots", cl_slots, 2, .flags = CMD_STALE, .acl = "slow",
        .summary = "Get array of Cluster slot to node mappings", .since = "3.0.0",
        .complexity = "O(N) where N is the total number of Cluster nodes"),
    {0},
};

static command cluster_commands[] = {
    CMD("cluster", cmd_cluster_disabled, -2, .acl = "slow", .summary = "A container for cluster commands",
        .since = "3.0.0", .complexity = "Depends on subcommand.", .subcmds = cluster_subcommands),
    CMD("asking", cmd_asking, 1, .flags = CMD_FAST, .acl = "fast connection",
        .summary = "Sent by cluster clients after an -ASK redirect", .since = "3.0.0", .complexity = "O(1)"),
    CMD("readonly", cmd_readonly, 1, .flags = F_CLUSTER, .acl = "fast connection",
        .summary = "Enables read queries for a connection to a cluster replica node", .since = "3.0.0",
        .complexity = "O(1)"),
    CMD("readwrite", cmd_readwrite, 1, .flags = F_CLUSTER, .acl = "fast connection",
        .summary = "Disables read queries for a connection to a cluster replica node", .since = "3.0.0",
        .complexity = "O(1)"),
    {0},
};
const command_group cluster_group = {"cluster", cluster_commands};
