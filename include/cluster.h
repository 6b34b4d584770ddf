/* cluster.h - Redis Cluster mode (cluster-enabled yes): this node's view of
 * the cluster (the nodes it knows, who serves each of the 16384 hash slots,
 * the epochs), kept in nodes.conf and exchanged with the other nodes over
 * the cluster bus (cluster_bus.h).
 *
 * The state is one explicit struct, `cluster`, NULL when cluster mode is
 * off: every entry point of the other layers tests that pointer first, so
 * a standalone server pays one predictable branch where it pays anything.
 *
 * Nodes are named by 40 hex digits, not NUL-terminated in the bus format;
 * here a name is always the 40 bytes (CLUSTER_NAMELEN) without terminator,
 * compared with memcmp. The flags are the bus's own bits (CN_*), so a
 * node's flags go on the wire as they are.
 */
#ifndef FERRY_CLUSTER_H
#define FERRY_CLUSTER_H

#include <stdint.h>
#include <stddef.h>
#include "crc16.h"

#define CLUSTER_NAMELEN 40
#define CLUSTER_IPLEN 46            /* INET6_ADDRSTRLEN, as the bus carries it */
#define CLUSTER_HOSTLEN 256

/* node flags (the bus's bits) */
#define CN_MASTER 1
#define CN_SLAVE 2
#define CN_PFAIL 4                  /* we cannot reach it (our own view) */
#define CN_FAIL 8                   /* a majority of masters agreed it failed */
#define CN_MYSELF 16
#define CN_HANDSHAKE 32             /* met, not yet answered a PING: named at random until it does */
#define CN_NOADDR 64                /* its address is unknown */
#define CN_MEET 128                 /* send it MEET, not PING, when connecting */
#define CN_MIGRATE_TO 256           /* a master that got replicas by migration */
#define CN_NOFAILOVER 512           /* a replica that never starts a failover */

enum { CLUSTER_OK = 0, CLUSTER_FAIL = 1 };

struct cluster_link;

typedef struct cluster_report {
    struct cluster_node *from;      /* the master that reported the node failing */
    int64_t time;                   /* last time it said so (ms) */
} cluster_report;

typedef struct cluster_node {
    char name[CLUSTER_NAMELEN];
    unsigned flags;                 /* CN_* */
    uint64_t config_epoch;
    unsigned char slots[CLUSTER_SLOTS / 8]; /* slot s: byte s/8, bit s%8 */
    int numslots;
    struct cluster_node *master;    /* of a replica (may be NULL: unknown yet) */
    struct cluster_node **replicas;
    int nreplicas;
    int64_t ctime, ping_sent, pong_received, data_received, fail_time, voted_time, orphaned_time;
    int64_t repl_offset_time;
    long long repl_offset;
    char ip[CLUSTER_IPLEN];
    char hostname[CLUSTER_HOSTLEN]; /* "" = none announced */
    int port;                       /* clients' port (the TLS port when tls-cluster) */
    int pport;                      /* the other one (plain text when tls-cluster), 0 = none */
    int cport;                      /* bus port */
    struct cluster_link *link;      /* our outbound bus connection to it */
    struct cluster_link *inbound_link; /* its connection to us */
    cluster_report *reports;        /* failure reports about it */
    int nreports;
} cluster_node;

/* A node removed with CLUSTER FORGET is not re-added from gossip for a
 * minute (Redis's blacklist). */
typedef struct cluster_forgotten {
    char name[CLUSTER_NAMELEN];
    int64_t until_s;
} cluster_forgotten;

/* Message counters by bus type (CLUSTER INFO's cluster_stats_messages_*). */
#define CLUSTER_MSG_TYPES 11

typedef struct cluster_state {
    cluster_node *myself;
    uint64_t current_epoch;
    uint64_t last_vote_epoch;
    int state;                      /* CLUSTER_OK / CLUSTER_FAIL */
    int size;                       /* masters serving at least one slot */
    cluster_node **nodes;
    int nnodes, nodes_cap;
    /* per slot: its owner and the node it moves to / from; side by side, so
     * routing a keyed command (cluster_redirect.c) reads one cache line */
    struct cluster_slot {
        cluster_node *owner, *migrating_to, *importing_from;
    } slot[CLUSTER_SLOTS];
    /* served[s]: 1 when slot s is this node's and not moving (owner myself,
     * no migrating_to / importing_from): the routing shortcut's one byte per
     * slot (16 KB stays in cache; the 384 KB slot table missed it once per
     * pipelined SET). Kept by cluster_slot_refresh after every change. */
    unsigned char served[CLUSTER_SLOTS];
    cluster_forgotten *forgotten;
    int nforgotten;
    uint64_t sent[CLUSTER_MSG_TYPES], received[CLUSTER_MSG_TYPES];
    uint64_t links_buffer_limit_exceeded;
    unsigned todo;                  /* CLUSTER_TODO_*: done before the loop sleeps */
    char *config_path;              /* cluster-config-file */
    int lock_fd;                    /* held flock on it */
    int64_t state_change_time;      /* rejoin delay: when the state last went FAIL */
    int64_t among_minority_time;
    /* failover of our master (cluster_failover.c) */
    int64_t failover_auth_time;
    int failover_auth_count, failover_auth_sent, failover_auth_rank;
    uint64_t failover_auth_epoch;
    int cant_failover_reason;
    int64_t lastlog_cant_failover;
    /* manual failover (CLUSTER FAILOVER) */
    int64_t mf_end;
    cluster_node *mf_replica;
    long long mf_master_offset;
    int mf_can_start;
    char announced_ip[CLUSTER_IPLEN]; /* cluster-announce-ip ("": learned from peers) */
    int endpoint_type;              /* cluster-preferred-endpoint-type, ENDPOINT_* */
    int drop_filter;                /* DEBUG DROP-CLUSTER-PACKET-FILTER: type dropped, -1 none, -2 all */
    int bus_fd[16];                 /* bus listeners */
    int bus_nfds;
} cluster_state;

extern cluster_state *cluster;

/* To do before sleeping (several changes in one loop iteration, one save). */
#define CLUSTER_TODO_HANDLE_FAILOVER 1
#define CLUSTER_TODO_UPDATE_STATE 2
#define CLUSTER_TODO_SAVE_CONFIG 4
#define CLUSTER_TODO_FSYNC_CONFIG 8
void cluster_todo(unsigned what);

/* Start-up: when cluster-enabled is yes, loads nodes.conf (or creates this
 * node), locks it, listens on the bus port; 0, or -1 after logging why
 * (the server must not start). Does nothing in standalone mode. */
int cluster_init(void);
void cluster_debug_init(void);      /* DEBUG's cluster subcommands (cluster_debug.c) */
/* After the start-up load (see cluster.c): 0, or -1 (the server exits). */
int cluster_verify_with_data(void);
void cluster_before_sleep(void);
void cluster_cron(void);            /* 10 times a second */

/* ---- nodes ---- */
cluster_node *cluster_node_new(const char *name, unsigned flags); /* name NULL: a random one */
cluster_node *cluster_lookup(const char *name, size_t len);        /* NULL if not a 40-byte known name */
void cluster_add_node(cluster_node *n);
void cluster_del_node(cluster_node *n);     /* also frees it: its slots become unassigned */
void cluster_rename_node(cluster_node *n, const char *newname);
void cluster_set_master(cluster_node *n, cluster_node *master);  /* n becomes its replica (master NULL: none) */
int cluster_node_add_replica(cluster_node *m, cluster_node *r);
int cluster_node_remove_replica(cluster_node *m, cluster_node *r);
int cluster_count_non_failing_replicas(const cluster_node *m);
static inline int cluster_is_master(const cluster_node *n) { return (n->flags & CN_MASTER) != 0; }
static inline int cluster_is_replica(const cluster_node *n) { return (n->flags & CN_SLAVE) != 0; }
int cluster_forgotten_has(const char *name);
void cluster_forget_for_a_while(const char *name);

/* ---- slots ---- */
static inline int cluster_node_has_slot(const cluster_node *n, int s) { return (n->slots[s >> 3] >> (s & 7)) & 1; }
/* Recompute served[slot] (every slot: _all) after its owner or migration
 * state changed. */
void cluster_slot_refresh(int slot);
void cluster_slot_refresh_all(void);
int cluster_add_slot(cluster_node *n, int slot);   /* 0, or -1 if assigned */
int cluster_del_slot(int slot);                    /* 0, or -1 if unassigned */
int cluster_del_node_slots(cluster_node *n);       /* returns how many */
void cluster_close_all_slots(void);                /* no migrating/importing left */
/* The epoch rules when a node claims slots (clusterUpdateSlotsConfigWith). */
void cluster_update_slots_config(cluster_node *sender, uint64_t sender_epoch, const unsigned char *slots);

/* ---- epochs ---- */
uint64_t cluster_max_epoch(void);
int cluster_bump_epoch_without_consensus(void);   /* 1 if bumped */
void cluster_handle_epoch_collision(cluster_node *sender);

/* ---- state ---- */
void cluster_update_state(void);
int cluster_save_config(int do_fsync);              /* 0, or -1 (logged) */
/* The node's announced clients' endpoint for redirections and CLUSTER
 * SLOTS, given the connection is TLS or not. */
const char *cluster_endpoint(const cluster_node *n);
/* cluster-preferred-endpoint-type */
enum { ENDPOINT_IP = 0, ENDPOINT_HOSTNAME = 1, ENDPOINT_UNKNOWN = 2 };
int cluster_endpoint_type(void);
int cluster_client_port(const cluster_node *n, int tls);
void cluster_set_own_ports(void);   /* myself's ports, ip and hostname, and the endpoint type, from the settings */
int cluster_bus_port(void);         /* where the bus listens: cluster-port, else port + 10000 */
void cluster_reset(int hard);
/* Per-slot key index of db 0 (keyspace) */
size_t cluster_keys_in_slot(int slot);

/* Settings read by name (they are CONFIG SET-able) */
long long cluster_node_timeout(void);

/* "name" printed as %.40s */
#define CLUSTER_NAME_FMT "%.40s"

#endif
