/* failover.c - FAILOVER: a primary hands its role to one of its replicas
 * without losing a write (Redis 7.0's coordinated failover).
 *
 * States (INFO's master_failover_state):
 *   no-failover;
 *   waiting-for-sync: writes are held (a CLIENT PAUSE WRITE), the replicas
 *     are asked for acknowledgements, and the first target (the one named by
 *     TO, or any online replica) whose acknowledged offset reaches ours is
 *     chosen; past TIMEOUT the failover is aborted, or with FORCE goes on to
 *     the named target anyway;
 *   failover-in-progress: this server became a replica of the target and
 *     sends it PSYNC <replid> <offset> FAILOVER, on which the target
 *     promotes itself (primary.c) and answers +CONTINUE with its new id.
 * Any error of that handshake (a refused PSYNC) reverts this server to a
 * primary; the pause ends either way.
 */
#include "repl.h"
#include "repl_int.h"
#include "pause.h"
#include "reply.h"
#include "server.h"
#include "util.h"
#include <limits.h>
#include <stdio.h>
#include <string.h>

enum { FO_NONE = 0, FO_WAIT_SYNC, FO_IN_PROGRESS };

static struct {
    int state;
    int has_target, force;
    char host[256];
    int port;
    int64_t end_ms;             /* TIMEOUT, 0 = none */
} fo;

const char *failover_state_name(void) {
    return fo.state == FO_WAIT_SYNC ? "waiting-for-sync" : fo.state == FO_IN_PROGRESS ? "failover-in-progress" : "no-failover";
}

int failover_in_progress(void) { return fo.state == FO_IN_PROGRESS; }

static void finish(void) {
    fo.state = FO_NONE;
    pause_end();
}

static void abort_failover(const char *why) {
    server_log(LOG_NOTICE_, "FAILOVER to %s:%d aborted: %s", fo.has_target ? fo.host : "any-host", fo.port, why);
    if (fo.state == FO_IN_PROGRESS) replica_unset_master(); /* back to primary; its replicas resync with it */
    finish();
}

void failover_handshake_failed(void) {
    if (fo.state != FO_IN_PROGRESS) return;
    abort_failover("Failover target rejected psync request");
}

void failover_done(void) {
    if (fo.state != FO_IN_PROGRESS) return;
    server_log(LOG_NOTICE_, "Failover target %s:%d is now the primary.", fo.host, fo.port);
    finish();
}

static client *find_replica(const char *host, int port) {
    for (int i = 0; i < rs.nreplicas; i++) {
        replica_link *r = rs.replicas[i]->repl;
        if (r->listening_port == port && strcasecmp(r->ip, host) == 0) return rs.replicas[i];
    }
    return NULL;
}

static void go_to(const char *host, int port) {
    if (host != fo.host) snprintf(fo.host, sizeof fo.host, "%s", host);
    fo.port = port;
    fo.state = FO_IN_PROGRESS;
    server_log(LOG_NOTICE_, "Failover target %s:%d is synced, failing over.", host, port);
    replica_set_master(host, port);
}

/* The once-per-loop check of a failover waiting for its target. */
void failover_before_sleep(void) {
    if (fo.state != FO_WAIT_SYNC) return;
    for (int i = 0; i < rs.nreplicas; i++) {
        replica_link *r = rs.replicas[i]->repl;
        if (r->state != RS_ONLINE || r->ack_off != rs.offset) continue;
        if (fo.has_target && (r->listening_port != fo.port || strcasecmp(r->ip, fo.host) != 0)) continue;
        go_to(r->ip, r->listening_port);
        return;
    }
    if (fo.end_ms && srv.now_ms >= fo.end_ms) {
        if (fo.force && fo.has_target) {
            server_log(LOG_NOTICE_, "FAILOVER to %s:%d time out exceeded, failing over.", fo.host, fo.port);
            go_to(fo.host, fo.port);
        } else {
            abort_failover("Replica never caught up before timeout");
        }
        return;
    }
    /* no GETACK here: each adds to the offset the replicas must reach; their ACK each second does it */
}

void cmd_failover(client *c) {
    int abort_ = 0, force = 0, has_to = 0;
    long long port = 0, timeout = 0;
    char host[256] = "";
    for (int j = 1; j < c->argc; j++) {
        if (span_eq_nocase(c->argv[j], "to") && j + 2 < c->argc && !has_to) {
            span_cstr(host, sizeof host, c->argv[j + 1]);
            if (!str_to_ll(c->argv[j + 2].p, c->argv[j + 2].len, &port)) {
                reply_err_notint(c);
                return;
            }
            has_to = 1;
            j += 2;
        } else if (span_eq_nocase(c->argv[j], "timeout") && j + 1 < c->argc && !timeout) {
            if (!str_to_ll(c->argv[j + 1].p, c->argv[j + 1].len, &timeout)) {
                reply_err_notint(c);
                return;
            }
            if (timeout <= 0) {
                reply_error(c, "ERR FAILOVER timeout must be greater than 0");
                return;
            }
            j++;
        } else if (span_eq_nocase(c->argv[j], "force") && !force) {
            force = 1;
        } else if (span_eq_nocase(c->argv[j], "abort") && !abort_) {
            abort_ = 1;
        } else {
            reply_err_syntax(c);
            return;
        }
    }
    if (abort_) {
        if (has_to || force || timeout) reply_error(c, "ERR FAILOVER ABORT does not take any other arguments");
        else if (fo.state == FO_NONE) reply_error(c, "ERR No failover in progress.");
        else {
            abort_failover("Failover manually aborted");
            reply_ok(c);
        }
        return;
    }
    if (force && (!timeout || !has_to)) {
        reply_error(c, "ERR FAILOVER with force option requires both a timeout and target HOST and IP.");
        return;
    }
    if (srv.repl_replica) {
        reply_error(c, "ERR FAILOVER is not valid when server is a replica.");
        return;
    }
    if (!rs.nreplicas) {
        reply_error(c, "ERR FAILOVER requires connected replicas.");
        return;
    }
    if (fo.state != FO_NONE) {
        reply_error(c, "ERR FAILOVER already in progress.");
        return;
    }
    if (has_to) {
        client *t = find_replica(host, (int)port);
        if (!t) {
            reply_error(c, "ERR FAILOVER target HOST and PORT is not a replica.");
            return;
        }
        if (((replica_link *)t->repl)->state != RS_ONLINE) {
            reply_error(c, "ERR FAILOVER target replica is not online.");
            return;
        }
        snprintf(fo.host, sizeof fo.host, "%s", host);
        fo.port = (int)port;
    }
    fo.has_target = has_to;
    fo.force = force;
    fo.end_ms = timeout ? srv.now_ms + timeout : 0;
    fo.state = FO_WAIT_SYNC;
    pause_start(LLONG_MAX, PAUSE_WRITE); /* no write may land after the target caught up */
    rs.get_ack = 1;
    server_log(LOG_NOTICE_, "FAILOVER requested to %s:%lld.", has_to ? host : "any-host", has_to ? port : 0LL);
    reply_ok(c);
}
