/* repl.h - replication with Redis's protocol (repl/): this server as a
 * primary (replicas connect with SYNC/PSYNC, receive a snapshot and then
 * the stream of writes, and continue from the backlog after a broken
 * link), and as a replica (REPLICAOF host port: the handshake, the
 * snapshot, the stream applied in order, acknowledgements).
 *
 * The stream is propagate.c's: the replication layer is one of its sinks.
 * A replica passes on the exact bytes its primary sent (so offsets agree
 * down a chain), never its own propagation.
 */
#ifndef FERRY_REPL_H
#define FERRY_REPL_H

#include <stdint.h>

#include "command.h"

struct sbuf;

extern const command_group repl_group;

/* Set by the scripting layer: does this EVAL/EVALSHA/FCALL declare that it
 * writes (a shebang or function without no-writes)? */
typedef int repl_script_write_fn(const span *argv, int argc);
extern repl_script_write_fn *repl_script_declares_write;

/* Start-up: the replication id, the hooks into the dispatcher, clients
 * and persistence; `replicaof` from the configuration. */
void repl_init(void);
/* The server cron (every tick; its once-a-second work is gated inside). */
void repl_cron(void);
/* Before the loop sleeps: acknowledgements asked for by WAIT, WAIT
 * clients whose replicas have caught up. */
void repl_before_sleep(void);
/* The body of INFO replication. */
void repl_info(struct sbuf *b);
/* DEBUG REPLICATE: one command into the stream to the replicas only. */
void repl_debug_replicate(int argc, const span *argv);
/* INFO stats' sync_full, sync_partial_ok, sync_partial_err. */
enum { REPL_STAT_SYNC_FULL, REPL_STAT_PARTIAL_OK, REPL_STAT_PARTIAL_ERR };
long long repl_stat(int which);
void repl_reset_stats(void);            /* CONFIG RESETSTAT */
/* DEBUG CHANGE-REPL-ID: a new random replication id (the second cleared). */
void repl_change_id(void);
/* What /metrics reports: the role, the link to the primary, replicas and
 * how far the slowest online one is behind (bytes not yet acknowledged). */
typedef struct repl_summary {
    int replica, link_up, replicas;
    long long offset, max_lag_bytes;
    int64_t last_io_ms, down_since_ms;  /* a replica's link: last byte from the primary; down since (0: up) */
    long long announced_offset;     /* what a cluster node tells of its offset: 0 for a replica in a full sync
                                     * (receiving or loading the snapshot), as Redis's replica offset */
} repl_summary;
void repl_get_summary(repl_summary *out);
/* INFO memory's replication figures: the shared buffer's blocks in all
 * (mem_total_replication_buffers), split as Redis splits them into the
 * backlog's share and the replicas' share beyond it. */
typedef struct repl_mem { size_t total, backlog, replicas, not_counted; } repl_mem;
void repl_memory(repl_mem *m);
/* Cluster mode's replication (CLUSTER REPLICATE, failovers): follow the
 * primary at host:port (nothing if already following it), or stop
 * following and become a primary. */
void repl_follow(const char *host, int port);
void repl_unfollow(void);

#endif
