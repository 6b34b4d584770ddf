/* config.h - server configuration: the values, the directive table that
 * loads them from a redis.conf-style file and the command line, and the
 * CONFIG GET/SET/RESETSTAT/REWRITE commands (config.c, config_load.c,
 * config_cmd.c; their shared internals are in config_internal.h).
 */
#ifndef FERRY_CONFIG_H
#define FERRY_CONFIG_H

#include <stddef.h>

#define CONFIG_MAX_BIND 16

enum { LOG_DEBUG_ = 0, LOG_VERBOSE_ = 1, LOG_NOTICE_ = 2, LOG_WARNING_ = 3, LOG_NOTHING_ = 4 };
enum { COB_NORMAL = 0, COB_REPLICA = 1, COB_PUBSUB = 2, COB_CLASSES = 3 };
enum { DEBUG_CMD_NO = 0, DEBUG_CMD_YES = 1, DEBUG_CMD_LOCAL = 2 };
/* `supervised`, numbered as Redis numbers them (auto is resolved at start-up: supervise.h) */
enum { SUPERVISED_NONE = 0, SUPERVISED_AUTO = 1, SUPERVISED_SYSTEMD = 2, SUPERVISED_UPSTART = 3 };

typedef struct cob_limit {
    unsigned long long hard;        /* bytes, 0 = none */
    unsigned long long soft;        /* bytes, 0 = none */
    long long soft_seconds;
} cob_limit;

typedef struct ferry_config {
    char *config_file;              /* absolute path, or NULL */
    int port;
    char *bind[CONFIG_MAX_BIND];
    int bind_count;
    int protected_mode;
    /* requirepass and masterauth are binary-safe, as Redis's: their bytes
     * may hold NULs, so the length is kept beside them (the bytes are
     * NUL-terminated too). NULL (length 0) = none. */
    char *requirepass;
    size_t requirepass_len;
    char *masterauth;
    size_t masterauth_len;
    long long maxclients;
    long long timeout;              /* seconds, 0 = never */
    int tcp_keepalive;
    int tcp_backlog;
    char *unixsocket;               /* path of the AF_UNIX listener, NULL = none */
    int unixsocketperm;             /* its mode (chmod), 0 = as the umask leaves it */
    int tls_port;                   /* the TLS listeners' port (tls.h), 0 = none */
    int supervised;                 /* SUPERVISED_*: how start-up and shutdown are reported (supervise.c) */
    int databases;
    int daemonize;
    char *pidfile;
    char *logfile;                  /* "" = stdout */
    int loglevel;
    char *dir;
    int hz;
    long long proto_max_bulk_len;
    long long client_query_buffer_limit;
    cob_limit cob[COB_CLASSES];
    int enable_debug_command;
    int enable_protected_configs;
    int enable_module_command;      /* DEBUG_CMD_*: MODULE LOAD/LOADEX/UNLOAD (cmd_module.c) */
    int metrics_port;               /* 0 = disabled */
    long long tcp_rcvbuf;           /* SO_RCVBUF of accepted TCP clients, 0 = the kernel's autotuning */
    int busy_poll_us;               /* longest spin before sleeping in the poll, 0 = never spin */
    int reply_hold_ms;              /* longest wait of replies for a big argument streaming in (outbuf.c), 0 = none */
    unsigned long long maxmemory;
    long long maxmemory_clients;    /* bytes, or -N for N% of maxmemory (as Redis keeps it); 0 = no client eviction */
    int maxmemory_policy;           /* index into the policy names, 0 = noeviction */
    int maxmemory_samples;
    int maxmemory_eviction_tenacity;    /* 0..100: time budget of one eviction run */
    int lfu_log_factor;
    long long busy_reply_threshold; /* ms a script runs before the server answers -BUSY (lua-time-limit) */
    int lfu_decay_time;             /* minutes per LFU counter decrement, 0 = never */
    long long slowlog_log_slower_than;
    long long slowlog_max_len;
    long long latency_monitor_threshold;
    int latency_tracking;
    int active_expire_effort;
    int lazyfree_lazy_user_del;
    int lazyfree_lazy_eviction, lazyfree_lazy_expire, lazyfree_lazy_server_del, lazyfree_lazy_user_flush;
    /* small-encoding thresholds (issue #6) */
    long long hash_max_listpack_entries;
    long long hash_max_listpack_value;
    long long set_max_intset_entries;
    long long zset_max_listpack_entries;
    long long zset_max_listpack_value;
    long long list_max_listpack_size;
    long long stream_node_max_bytes;    /* stream blocks split as Redis splits its listpack nodes */
    long long stream_node_max_entries;   /* > 0: entries per node; -1..-5: 4..64 KB per node */
    int notify_keyspace_events;     /* notify.h's NOTIFY_* classes, 0 = off */
    long long tracking_table_max_keys; /* client-side caching table limit (tracking.c), 0 = none */
    int min_replicas_to_write;          /* writes refused (NOREPLICAS) with fewer good replicas (repl/) */
    int min_replicas_max_lag;           /* seconds since a replica's last ACK for it to count as good */
    int replica_read_only;              /* a replica refuses clients' writes (READONLY) */
    int replica_serve_stale_data;       /* a replica whose link is down still answers (else MASTERDOWN) */
    long long hll_sparse_max_bytes;     /* a sparse HyperLogLog longer than this turns dense (hll.c) */
} ferry_config;

/* Loads defaults, then the config file (if any), then --directive args, as
 * redis-server does. On error prints a message naming file:line (or the
 * argument) to stderr and exits(1). */
void config_load(ferry_config *cfg, int argc, char **argv);
/* The loaded configuration's rename-command lines, applied to the command
 * table (after registry_init): -1 after a fatal configuration error on
 * stderr for a name no command has. */
int config_apply_renames(void);
/* The warnings about directives ferry accepts and ignores, logged at
 * WARNING level once the log is set up (with no logfile they went to
 * stderr while loading). */
void config_log_ignored(void);
void config_defaults(ferry_config *cfg);
/* Frees the strings a ferry_config owns. */
void config_free(ferry_config *cfg);
/* A directive's current value as CONFIG GET prints it (zmalloc'd), or NULL
 * for an unknown name. */
char *config_get_by_name(const ferry_config *cfg, const char *name);
/* CONFIG REWRITE of the config file (force_all: every directive, defaults too,
 * as DEBUG CONFIG-REWRITE-FORCE-ALL); -1 with err set ("Rewriting config file: ..."). */
int config_rewrite_file(int force_all, char *err, size_t errlen);
/* A numeric directive's value by name (0 for an unknown name). */
long long config_get_ll(const ferry_config *cfg, const char *name);
/* A value the server changes itself, already canonical (REPLICAOF records
 * `replicaof`, so CONFIG GET and CONFIG REWRITE show the primary in force,
 * as Redis's do). */
void config_set_internal(ferry_config *cfg, const char *name, const char *value);
/* 1 if that value is "yes" (a boolean directive that is on). */
int config_is_yes(const ferry_config *cfg, const char *name);
/* maxmemory-policy number `policy` by name ("allkeys-lfu" ...), as INFO shows it. */
const char *config_maxmemory_policy_name(int policy);

struct client;
void cmd_config(struct client *c);   /* CONFIG GET|SET|RESETSTAT|REWRITE|HELP */
/* Hook the server sets: called after CONFIG SET changed `port` or `bind`
 * (the lead rebinds). NULL = nothing to do. */
/* A memory value in Redis's units (digits, then b|k|kb|m|mb|g|gb in any
 * case; "" is 0). 1 ok, 0 bad or over 64 bits. */
int config_parse_memory(const char *s, unsigned long long *out);
extern int (*config_port_changed)(void);   /* 0, or -1: the addresses could not be bound */
/* CONFIG SET of appendonly, appendfsync or aof-*: 0, or -1 with err (the
 * value is then set back). */
extern int (*config_aof_changed)(const char *name, char *err, size_t errlen);
/* CONFIG SET of any tls-*: the TLS context is rebuilt; 0, or -1 (the
 * values are then set back and the old context stays). */
extern int (*config_tls_changed)(void);
/* Set by the replication layer: told after every CONFIG SET. */
extern void (*config_repl_changed)(void);
/* Set by the cluster layer in cluster mode: told after every CONFIG SET. */
extern void (*config_cluster_changed)(void);

#endif
