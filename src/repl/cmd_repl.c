/* cmd_repl.c - the replication commands: REPLICAOF / SLAVEOF, SYNC, PSYNC,
 * REPLCONF, ROLE and WAIT (their work is in primary.c and replica.c). */
#include "repl.h"
#include "repl_int.h"
#include "reply.h"
#include "server.h"
#include "util.h"
#include <stdio.h>
#include <string.h>

static void cmd_replicaof(client *c) {
    if (srv.cluster_mode) {
        reply_error(c, "ERR REPLICAOF not allowed in cluster mode.");
        return;
    }
    if (span_eq_nocase(c->argv[1], "no") && span_eq_nocase(c->argv[2], "one")) {
        if (srv.repl_replica) {
            replica_unset_master();
            server_log(LOG_NOTICE_, "MASTER MODE enabled (user request from 'id=%llu addr=%s')",
                       (unsigned long long)c->id, c->addr);
        }
        reply_ok(c);
        return;
    }
    if (c->repl_role == CLIENT_REPL_REPLICA) {
        reply_error(c, "ERR Command is not valid when client is a replica.");
        return;
    }
    long long port;
    if (!str_to_ll(c->argv[2].p, c->argv[2].len, &port) || port < 0 || port > 65535) {
        reply_error(c, "ERR Invalid master port");
        return;
    }
    char host[256];
    span_cstr(host, sizeof host, c->argv[1]);
    if (srv.repl_replica && rs.host && strcasecmp(rs.host, host) == 0 && rs.port == port) {
        server_log(LOG_NOTICE_, "REPLICAOF would result into synchronization with the master we are already "
                                "connected with. No operation performed.");
        reply_status(c, "OK Already connected to specified master");
        return;
    }
    replica_set_master(host, (int)port);
    server_log(LOG_NOTICE_, "REPLICAOF %s:%d enabled (user request from 'id=%llu addr=%s')", host, (int)port,
               (unsigned long long)c->id, c->addr);
    reply_ok(c);
}

void repl_follow(const char *host, int port) {
    if (srv.repl_replica && rs.host && strcasecmp(rs.host, host) == 0 && rs.port == port) return;
    replica_set_master(host, port);
    server_log(LOG_NOTICE_, "REPLICAOF %s:%d enabled (cluster)", host, port);
}

void repl_unfollow(void) {
    if (!srv.repl_replica) return;
    replica_unset_master();
    server_log(LOG_NOTICE_, "MASTER MODE enabled (cluster)");
}

static void cmd_sync(client *c) { primary_sync(c, 0); }
static void cmd_psync(client *c) { primary_sync(c, 1); }
static void cmd_replconf(client *c) { primary_replconf(c); }
static void cmd_wait(client *c) { primary_wait(c); }

static void cmd_role(client *c) {
    if (srv.repl_replica) {
        reply_array(c, 5);
        reply_bulk_cstr(c, "slave");
        reply_bulk_cstr(c, rs.host);
        reply_int(c, rs.port);
        reply_bulk_cstr(c, replica_link_state_name());
        reply_int(c, srv.repl_master ? rs.offset : -1);
        return;
    }
    reply_array(c, 3);
    reply_bulk_cstr(c, "master");
    reply_int(c, rs.offset);
    int online = 0;
    for (int i = 0; i < rs.nreplicas; i++) online += ((replica_link *)rs.replicas[i]->repl)->state == RS_ONLINE;
    reply_array(c, online);
    for (int i = 0; i < rs.nreplicas; i++) {
        replica_link *r = rs.replicas[i]->repl;
        if (r->state != RS_ONLINE) continue;
        reply_array(c, 3);
        reply_bulk_cstr(c, r->ip);
        reply_bulk_ll(c, r->listening_port);
        reply_bulk_ll(c, r->ack_off);
    }
}

#define F_REPL (CMD_ADMIN | CMD_NOSCRIPT | CMD_NO_ASYNC_LOADING)
#define REPLICAOF_DOC .summary = "Make the server a replica of another instance, or promote it as master", \
    .since = "5.0.0", .complexity = "O(1)"

static command repl_commands[] = {
    CMD("replicaof", cmd_replicaof, 3, .flags = F_REPL | CMD_STALE, .props = PROP_NO_PROPAGATE,
        .acl = "admin slow dangerous", REPLICAOF_DOC),
    CMD("slaveof", cmd_replicaof, 3, .flags = F_REPL | CMD_STALE, .props = PROP_NO_PROPAGATE,
        .acl = "admin slow dangerous", .summary = "Make the server a replica of another instance, or promote it as master",
        .since = "1.0.0", .complexity = "O(1)"),
    CMD("sync", cmd_sync, 1, .flags = F_REPL | CMD_NO_MULTI, .props = PROP_NO_PROPAGATE, .acl = "admin slow dangerous",
        .summary = "Internal command used for replication", .since = "1.0.0"),
    CMD("psync", cmd_psync, -3, .flags = F_REPL | CMD_NO_MULTI, .props = PROP_NO_PROPAGATE,
        .acl = "admin slow dangerous", .summary = "Internal command used for replication", .since = "2.8.0"),
    CMD("replconf", cmd_replconf, -1,
        .flags = CMD_ADMIN | CMD_NOSCRIPT | CMD_LOADING | CMD_STALE | CMD_ALLOW_BUSY, .props = PROP_NO_PROPAGATE,
        .acl = "admin slow dangerous", .summary = "An internal command for configuring the replication stream",
        .since = "3.0.0", .complexity = "O(1)"),
    CMD("failover", cmd_failover, -1, .flags = CMD_ADMIN | CMD_NOSCRIPT | CMD_STALE, .props = PROP_NO_PROPAGATE,
        .acl = "admin slow dangerous", .summary = "Start a coordinated failover between this server and one of its replicas.",
        .since = "6.2.0", .complexity = "O(1)"),
    CMD("role", cmd_role, 1, .flags = CMD_NOSCRIPT | CMD_LOADING | CMD_STALE | CMD_FAST, .acl = "admin fast dangerous",
        .summary = "Return the role of the instance in the context of replication", .since = "2.8.12",
        .complexity = "O(1)"),
    CMD("wait", cmd_wait, 3, .flags = CMD_NOSCRIPT, .acl = "slow connection", .group = "generic",
        .summary = "Wait for the synchronous replication of all the write commands sent in the context of the "
            "current connection", .since = "3.0.0", .complexity = "O(1)"),
    {0},
};
const command_group repl_group = {"replication", repl_commands};
