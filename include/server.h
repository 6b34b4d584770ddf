/* server.h - the process-wide server state: configuration, databases,
 * clients, listeners and statistics. One instance, `srv`.
 */
#ifndef FERRY_SERVER_H
#define FERRY_SERVER_H

#include <stdint.h>
#include <stddef.h>
#include <sys/types.h>
#include "config.h"
#include "event.h"

#define FERRY_VERSION "7.2.4"       /* Redis-compatible version we report */
#define FERRY_OWN_VERSION "0.1.0"

struct db;
struct client;
struct command;

typedef struct server_stats {
    uint64_t numcommands;
    uint64_t numconnections;
    uint64_t rejected_conn;
    uint64_t expiredkeys;
    uint64_t evictedkeys;
    uint64_t evicted_clients;           /* closed by maxmemory-clients (client_evict.c) */
    uint64_t total_forks;               /* background saves forked (cmd_persist.c) */
    uint64_t eviction_exceeded_us;      /* total time over maxmemory (evict.c) */
    int64_t eviction_exceeded_since_us; /* monotonic start of the current excess, 0 = none */
    uint64_t keyspace_hits;
    uint64_t keyspace_misses;
    uint64_t net_input_bytes;
    uint64_t net_output_bytes;
    uint64_t total_error_replies;
    uint64_t unexpected_error_replies;
    uint64_t reads;                 /* read() calls on client sockets */
    uint64_t writes;                /* writev() calls on client sockets */
    uint64_t active_expire_cycles;
    uint64_t expire_cycle_us;       /* time spent in active expiry cycles */
    uint64_t expire_time_cap_count; /* cycles that ran out of their time budget */
    double expired_stale_perc;      /* moving average of the expired share of keys a cycle met (0..1) */
    uint64_t batches;               /* reads that yielded >= 1 command */
    uint64_t batch_cmds;            /* commands executed from those reads */
    uint64_t out_high_water;        /* most bytes ever staged in one output ring */
} server_stats;

typedef struct server {
    ferry_config cfg;
    evloop *el;
    int listen_fds[CONFIG_MAX_BIND + 1];
    int listen_count;
    int tls_fds[CONFIG_MAX_BIND + 1];   /* the tls-port listeners (net.c, tls.h) */
    int tls_count;
    /* clients */
    struct client *clients;         /* doubly linked list of all clients */
    size_t nclients;
    uint64_t next_client_id;
    struct client *pending_write;   /* singly linked list of clients with staged output */
    struct client *current_client;
    long long latest_fork_usec;     /* how long the last fork() stopped the server (cmd_persist.c) */
    int script_busy;                /* a script ran past busy-reply-threshold: commands may get -BUSY
                                     * (SCRIPT_BUSY_EVAL or SCRIPT_BUSY_FUNCTION: which KILL stops it) */
    int script_disable_deny;        /* DEBUG SET-DISABLE-DENY-SCRIPTS 1: scripts may run noscript commands (a test hook) */
    int loading;                    /* the start-up load runs (cmd_persist.c): commands may get -LOADING */
    int async_loading;              /* a replica takes a new snapshot while serving its old dataset
                                     * (repl-diskless-load swapdb, same history): INFO async_loading,
                                     * no-async-loading commands get -LOADING */
    int aof_write_failed;           /* the AOF could not be written (aof.c): writes get MISCONF */
    int rdb_bgsave_failed;          /* the last background save failed (cmd_persist.c): MISCONF may apply */
    int client_mem_grew;            /* a client's buffers grew since the last eviction check (client_evict.c) */
    struct client *deferred_input;  /* clients with input left after a pass used its budget (client.c) */
    struct client *read_again;      /* TLS clients with bytes already read from their socket (client.c) */
    struct client *close_list;      /* clients to free before sleeping */
    size_t blocked_clients;         /* clients blocked on keys or held by CLIENT PAUSE */
    int client_pause;               /* CLIENT PAUSE in effect (pause.h): PAUSE_WRITE or PAUSE_ALL, 0 = none */
    int64_t client_pause_end_ms;    /* when it ends (unix ms) */
    /* time */
    int64_t start_ms;
    int64_t now_ms;                 /* cached at each event-loop iteration */
    int64_t lastsave;
    uint32_t lruclock;
    /* identity */
    char runid[41];
    pid_t pid;
    char *executable;
    /* state */
    int no_touch;                   /* current command must not update access times (CLIENT NO-TOUCH) */
    int shutdown_asap;
    int cron_paused;                /* DEBUG PAUSE-CRON 1: the cron does nothing but keep the clock */
    int shutdown_nosave;
    long long dirty;
    size_t watched_keys;            /* number of (db,key) watch entries */
    /* client-side caching and MONITOR (tracking.c, monitor.c) */
    size_t tracking_clients;        /* clients with CLIENT TRACKING on */
    size_t tracking_live;           /* keys in the tracking table + BCAST prefixes: 0 = key changes skip tracking */
    size_t monitors;                /* clients in MONITOR mode */
    size_t observers;               /* tracking clients + monitors (+1 while invalidations wait for a reply):
                                     * non-zero, every command_call reports to tracking.c and monitor.c */
    struct client *executing_client; /* the client of the innermost running command_call (a script's own
                                      * client inside EVAL), NULL between commands */
    int cluster_mode;               /* cluster-enabled yes (cluster/): one database, keys by slot */
    int load_as_replica;            /* the start-up load is a replica's (replicaof, or a cluster replica in
                                     * nodes.conf): keys already expired are kept for the primary's DEL */
    int repl_ping_held;             /* a cluster manual failover paused writes: no PING into the replication
                                     * stream, so the replica can reach the offset announced with the pause */
    /* replication (repl/), read by the dispatcher and the keyspace */
    int repl_replica;               /* replicaof is set: clients' writes refused (replica-read-only), keys
                                     * not expired here (the primary's DEL does it) */
    struct client *repl_master;     /* the link to the primary while it is up, else NULL */
    int repl_checks;                /* the dispatcher must apply replication rules (replica, min-replicas) */
    int repl_write_cmd;             /* on a writable replica, a client's write command runs: expired keys it
                                     * meets are deleted (reads only see them as missing) */
    server_stats stats;
    uint64_t stat_peak_memory;
    int64_t accept_pause_until_ms;  /* EMFILE back-off */
} server;

extern server srv;

/* logging in Redis's format: "pid:M dd Mon yyyy hh:mm:ss.mmm * msg" */
void server_log(int level, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* resident set size of the process, from /proc/self/statm (0 if unknown) */
size_t rss_bytes(void);

#define SCRIPT_BUSY_EVAL 1
#define SCRIPT_BUSY_FUNCTION 2
/* The -BUSY error (without "-") for what is running. */
static inline const char *script_busy_error(void) {
    return srv.script_busy == SCRIPT_BUSY_FUNCTION
               ? "BUSY Redis is busy running a script. You can only call FUNCTION KILL or SHUTDOWN NOSAVE."
               : "BUSY Redis is busy running a script. You can only call SCRIPT KILL or SHUTDOWN NOSAVE.";
}

#endif
