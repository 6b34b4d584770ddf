/* command.h - the command table, lookup and dispatch.
 *
 * Each command group (strings, keys, connection, server, transactions...)
 * is a file with a table of `command` entries, each declared with CMD()
 * below and the table ended by {0}, exported as a `command_group`. The
 * start-up registry (registry.c) hands every group to commands_init(),
 * which builds the lookup index.
 *
 * Adding a command: write its handler in its group's file and add one
 * CMD() line to that file's table, with the flags and ACL categories
 * redis-server 7.0 reports for it in COMMAND INFO (a test compares them).
 */
#ifndef FERRY_COMMAND_H
#define FERRY_COMMAND_H

#include <stdint.h>
#include "client.h"

/* flags (as COMMAND INFO reports them) */
#define CMD_WRITE      (1u << 0)
#define CMD_READONLY   (1u << 1)
#define CMD_DENYOOM    (1u << 2)
#define CMD_ADMIN      (1u << 3)
#define CMD_PUBSUB     (1u << 4)
#define CMD_NOSCRIPT   (1u << 5)
#define CMD_BLOCKING   (1u << 6)
#define CMD_LOADING    (1u << 7)
#define CMD_STALE      (1u << 8)
#define CMD_SKIP_MONITOR (1u << 9)
#define CMD_SKIP_SLOWLOG (1u << 10)
#define CMD_FAST       (1u << 11)
#define CMD_NO_AUTH    (1u << 12)
#define CMD_MAY_REPLICATE (1u << 13)
#define CMD_NO_MULTI   (1u << 14)
#define CMD_ALLOW_BUSY (1u << 15)
#define CMD_SENTINEL   (1u << 16)
#define CMD_MOVABLE_KEYS (1u << 17)
#define CMD_NO_MANDATORY_KEYS (1u << 18)
#define CMD_NO_ASYNC_LOADING (1u << 19)
#define CMD_ASKING     (1u << 20)      /* RESTORE-ASKING: served for a cluster client after -ASK */

/* Properties of ferry's own that decide how the dispatcher treats a
 * command (not reported by COMMAND INFO). */
#define PROP_TX_CONTROL     (1u << 0)   /* runs at once inside MULTI instead of being queued */
#define PROP_EXEC           (1u << 1)   /* EXEC: refusing it aborts the transaction; OOM looks at what is queued */
#define PROP_TX_RELEASE     (1u << 2)   /* gives a transaction's memory back: allowed inside MULTI over maxmemory */
#define PROP_SUBSCRIBED_OK  (1u << 3)   /* allowed in a RESP2 connection's subscribed context */
#define PROP_MISCONF_DENIED (1u << 4)   /* refused like a write after a failed background save (PING, as Redis) */
#define PROP_NUMKEYS_AT_2   (1u << 5)   /* EVAL family: argv[2] counts the keys that follow; the pipeline window
                                         * goes on past it and prefetches the first key */
/* How a call that changed the dataset is propagated (propagate.h). */
#define PROP_NO_PROPAGATE   (1u << 6)   /* nothing of its own: its effects are the calls it makes (EXEC, EVAL) */
#define PROP_EFFECT_EXPIRE  (1u << 7)   /* as PEXPIREAT / PERSIST / DEL of argv[1], from the key's state */
#define PROP_EFFECT_SET     (1u << 8)   /* as SET argv[1] <value> [PXAT ms] (when it has options) */
/* Blocking (blocking.h): re-run when a key it waits on is deleted too. */
#define PROP_WAKE_ON_DELETE (1u << 9)

typedef void cmd_proc(client *c);

typedef struct command {
    const char *name;           /* lowercase; subcommands: "setname" (fullname built as "client|setname") */
    cmd_proc *proc;
    int arity;                  /* Redis arity: N exact, -N at least N */
    uint32_t flags;             /* CMD_*, as COMMAND INFO reports them */
    uint32_t props;             /* PROP_*: ferry's dispatch properties */
    const char *acl;            /* space separated ACL categories without '@', e.g. "write string fast" */
    int first_key, last_key, key_step;
    const char *group;          /* "string", "generic", ...; NULL: its command_group's */
    const char *summary;
    const char *since;
    const char *complexity;
    struct command *subcmds;    /* container commands (CLIENT, CONFIG...), {0}-terminated */
    int run_argc;               /* a call of at most this many arguments costs O(1)-ish even though the
                                 * command is not CMD_FAST (PFCOUNT of one key, GEOADD of one member):
                                 * timed per run like a fast command (command.c); 0: never */
    /* filled at runtime */
    const struct cmd_keyinfo *keyinfo; /* Redis 7.0's key specs and tips (keyspec.h), NULL if 7.0 lacks it */
    int key1_pos;               /* its only key is argv[key1_pos] (one index/range spec): command_keys'
                                 * shortcut (the ACL check of every command of a restricted user); 0 if not */
    uint32_t key1_flags;        /* that spec's KS_* flags */
    int slot_key_pos;           /* its only key is argv[slot_key_pos], whatever the spec's flags (SET's
                                 * depend on GET): the cluster's routing shortcut; 0 if not */
    struct command *parent;
    char fullname[48];
    uint64_t calls, usec, rejected_calls, failed_calls;
    uint32_t ns_carry;          /* sub-microsecond remainder of usec (run timing) */
    /* pipeline fast path (command_lookup_cached, command_batchable) */
    char upname[32];            /* the name in uppercase */
    uint32_t cache_len;         /* strlen(name) if the lookup cache may return it, else UINT32_MAX */
    uint8_t batchable;          /* plain key command: see command_batchable() */
    uint8_t alpha;              /* the name is lowercase letters only */
    uint8_t run_timed;          /* timed per run of identical calls (see command.c) */
    struct lhist *lat_hist;     /* its latency histogram, once it ran timed (latency.c) */
    int acl_id1;                /* its ACL command id + 1 (acl.c), 0 before acl_init() numbers it */
    const char *renamed;        /* rename-command: the name clients call it by ("": disabled); NULL: its name */
} command;

/* One entry of a group table: name, handler and arity, then any other field
 * by name; fields left out are 0 / NULL.
 *   CMD("get", cmd_get, 2, .flags = CMD_READONLY | CMD_FAST, .acl = "read string fast", CMD_KEYS(1, 1, 1),
 *       .summary = "Get the value of a key", .since = "1.0.0", .complexity = "O(1)"),
 * `.group` only where it differs from the table's command_group; a
 * container names its table of subcommands with `.subcmds`. */
#define CMD(name_, proc_, arity_, ...) {.name = (name_), .proc = (proc_), .arity = (arity_), __VA_ARGS__}
/* Key positions as COMMAND INFO's first key, last key (-1: the last
 * argument) and step. */
#define CMD_KEYS(first, last, step) .first_key = (first), .last_key = (last), .key_step = (step)

/* A group file's table and the COMMAND DOCS group of its commands (and
 * their subcommands) that name none. */
typedef struct command_group {
    const char *name;
    command *commands;          /* {0}-terminated */
} command_group;

/* Builds the lookup index over the groups (registry.c passes them all). */
void commands_init(const command_group *const *groups, size_t n);
command *command_lookup(const span *argv, int argc);  /* resolves subcommands */
command *command_lookup_name(const char *name, size_t len);
/* Exactly span_eq_nocase(s, cmd->name) for a command the lookup cache may
 * return (else 0): the length first, then each byte against the lowercase
 * name (folding case with | 0x20 when the name is letters only) or against
 * the precomputed uppercase form. */
static inline int command_name_matches(const command *cmd, span s) {
    if (s.len != cmd->cache_len) return 0; /* also: containers, subcommands */
    const char *lo = cmd->name;
    if (cmd->alpha) { /* letters only: x | 0x20 == lo[i] iff x is lo[i] or its uppercase */
        for (size_t i = 0; i < s.len; i++)
            if ((s.p[i] | 0x20) != lo[i]) return 0;
        return 1;
    }
    for (size_t i = 0; i < s.len; i++)
        if (s.p[i] != lo[i] && s.p[i] != cmd->upname[i]) return 0;
    return 1;
}
/* command_lookup(argv, argc), trying `last` first (pipelines repeat the same
 * command; the result is the same either way). */
static inline command *command_lookup_cached(command *last, const span *argv, int argc) {
    if (last && command_name_matches(last, argv[0])) return last;
    return command_lookup(argv, argc);
}
/* Execute c->argv: checks, MULTI queueing, stats. */
void command_dispatch(client *c);
/* command_dispatch with cmd = command_lookup(c->argv, c->argc) already known. */
void command_dispatch_resolved(client *c, command *cmd);
/* Set by the replication layer: while srv.repl_checks, the error ("CODE
 * message") refusing cmd to c (READONLY on a replica, NOREPLICAS, MASTERDOWN),
 * or NULL. Never asked for the primary's own stream. */
extern const char *(*command_repl_refusal)(client *c, command *cmd);
/* Set by the cluster layer in cluster mode (NULL otherwise). redirect: 1
 * if c must go to another node or can't be served (the error is sent, the
 * transaction discarded or flagged), else 0. local: 1 if cmd, as c sent
 * it, is served here without asking redirect (the fast path's test). */
extern int (*command_cluster_redirect)(client *c, command *cmd);
/* Set by the persistence layer: FLUSHALL has emptied the dataset (a save
 * in progress is stopped, and the empty dataset saved if `save` is set). */
extern void (*command_flushall_done)(void);
extern int (*command_cluster_local)(const client *c, const command *cmd);
/* A plain key command (argv[1] is its key, not a container, not a
 * transaction/connection control command, not admin): running it cannot
 * change how the client's following requests are parsed or whether they
 * are executed, so the batched executor may parse and hash past it. */
static inline int command_batchable(const command *cmd) { return cmd && cmd->batchable; }
static inline int command_arity_ok(const command *cmd, int argc) {
    return cmd->arity > 0 ? argc == cmd->arity : argc >= -cmd->arity;
}
/* Close the open timing run (see command_call): call at the end of a batch,
 * before anything may read commandstats from outside a command. */
void command_stats_flush(void);
/* Call a resolved command directly (used by EXEC). */
void command_call(client *c, command *cmd);
/* n errors counted outside any command call (a script's refused redis.call)
 * that the running call must not take as its own failures. */
void command_errors_claimed(uint64_t n);
/* Every command and subcommand, renamed and disabled ones too (what ACL
 * rules and categories cover, as Redis's original command table). */
void command_foreach(void (*fn)(command *cmd, void *ud), void *ud);
/* Top-level commands clients can call (COMMAND COUNT, LIST, INFO, DOCS). */
size_t command_count(void);
static inline int command_callable(const command *cmd) { return !cmd->renamed || cmd->renamed[0]; }
/* The config file's `rename-command from to`: the command is then called
 * by `to` only (an empty `to` disables it). -1 if no command is called
 * `from`, -2 if another command is already called `to` (Redis's two
 * errors). Call after commands_init. */
int command_rename(const char *from, const char *to);
/* The command registered as name (case-insensitive), whatever it was
 * renamed to: what ACL rules name, as in Redis. A linear search. */
command *command_lookup_orig(const char *name, size_t len);
void commands_reset_stats(void);

/* COMMAND ... */
void cmd_command(client *c);

/* the command groups (each in its own file) */
extern const command_group string_group, keys_group, conn_group, server_group, multi_group, introspection_group,
    config_group, slowlog_group, latency_group, hash_group, list_group, set_group, zset_group, pubsub_group,
    dump_group, stream_group, stream_read_group, stream_info_group, stream_cg_group;
extern const command_group sort_group, lcs_group; /* cmd_sort.c (SORT, SORT_RO), cmd_lcs.c (LCS) */
extern const command_group cluster_group; /* cmd_cluster.c (CLUSTER, ASKING, READONLY, READWRITE: cluster support disabled) */
extern const command_group module_group;  /* cmd_module.c (MODULE: no modules) */
extern const command_group hll_group; /* cmd_hll.c (PFADD, PFCOUNT, PFMERGE, PFDEBUG, PFSELFTEST) */
extern const command_group bitops_group; /* cmd_bitops.c (SETBIT, GETBIT, BITCOUNT, BITPOS, BITOP, BITFIELD[_RO]) */
extern const command_group migrate_group; /* cmd_migrate.c (MIGRATE) */
extern const command_group geo_group; /* cmd_geo.c (GEOADD, GEODIST, GEOHASH, GEOPOS, GEOSEARCH[STORE], GEORADIUS*) */

#endif
