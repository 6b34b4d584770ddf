/* nodes_conf.h - reader and writer of Redis Cluster's nodes.conf lines
 * (cluster-config-file), the same lines CLUSTER NODES replies.
 *
 * Why: a ferry node must start from a nodes.conf that redis-server 7.0.15
 * wrote and write one that redis-server 7.0.15 reads, byte for byte in the
 * format. This module works over plain records (nc_node), never over the
 * cluster state: the caller converts. The parser is pure over (buf, len)
 * and calls back once per node line; the writer appends one line to an
 * sbuf. The rules, checked against a real redis-server 7.0.15, are in
 * src/cluster/nodes_conf.c.
 *
 * One line per node:
 *   <id> <ip>:<port>@<cport>[,<hostname>] <flags> <master-id|-> <ping-sent>
 *   <pong-recv> <config-epoch> <connected|disconnected> [<slot>|<a>-<b>|
 *   [<slot>->-<id>]|[<slot>-<-<id>]]...
 * and a last line "vars currentEpoch <n> lastVoteEpoch <n>".
 */
#ifndef FERRY_NODES_CONF_H
#define FERRY_NODES_CONF_H

#include <stddef.h>

#include "sbuf.h"

#define NC_ID_LEN 40        /* CLUSTER_NAMELEN: 40 bytes of [a-z0-9] */
#define NC_IP_MAX 45        /* NET_IP_STR_LEN - 1: Redis copies the ip into 46 bytes */
#define NC_HOSTNAME_MAX 255 /* Redis refuses a longer cluster-announce-hostname */
#define NC_SLOTS 16384
#define NC_PORT_MAX 65535
#define NC_CPORT_INCR 10000 /* the bus port of an old line without "@cport" */
/* Redis reads a line with fgets into 1024 + 16384 * 128 bytes; a longer
 * line would be cut in pieces there, so it is refused here. */
#define NC_LINE_MAX (1024 + NC_SLOTS * 128 - 1)
#define NC_REASON_MAX 160
/* What redis-server 7.0.15 logs for a file it refuses (a few refusals are
 * an assertion or a crash there instead; see nodes_conf.c). */
#define NC_REDIS_FMTERR "Unrecoverable error: corrupted cluster config file."

/* Flags, in the order Redis writes them. None is written "noflags". */
#define NC_MYSELF 0x01u
#define NC_MASTER 0x02u
#define NC_SLAVE 0x04u
#define NC_PFAIL 0x08u /* "fail?" */
#define NC_FAIL 0x10u
#define NC_HANDSHAKE 0x20u
#define NC_NOADDR 0x40u
#define NC_NOFAILOVER 0x80u
#define NC_FLAGS_ALL 0xffu

/* A slot being moved: "[slot->-id]" (migrating to id) or "[slot-<-id]"
 * (importing from id). */
typedef struct nc_slot_state {
    int slot;
    int importing; /* 0: migrating to id, 1: importing from id */
    char id[NC_ID_LEN + 1];
} nc_slot_state;

typedef struct nc_node {
    char id[NC_ID_LEN + 1];
    char ip[NC_IP_MAX + 1]; /* may be empty (":0@0" for an unknown address) */
    int port, cport;
    char hostname[NC_HOSTNAME_MAX + 1]; /* empty: none, nothing written */
    unsigned flags;                     /* NC_* */
    char master[NC_ID_LEN + 1];         /* empty: "-" */
    long long ping_sent, pong_recv;     /* ms; Redis only tests them for != 0 on load */
    unsigned long long config_epoch;
    int connected;                     /* 1: "connected", 0: anything else read, "disconnected" written */
    unsigned char slots[NC_SLOTS / 8]; /* slot s is byte s/8, bit (s & 7) */
    /* Slot states in line order. Parsed: valid during the callback only.
     * Written: the caller's array, in slot order, one state per slot, as
     * Redis writes them (it writes them on the myself line only). */
    const nc_slot_state *states;
    size_t nstates;
} nc_node;

typedef struct nodes_conf_vars {
    unsigned long long current_epoch, last_vote_epoch;
    int seen;            /* number of vars lines read */
    unsigned long unknown; /* variables skipped (Redis logs each and goes on) */
} nodes_conf_vars;

typedef struct nodes_conf_err {
    size_t line;   /* 1-based; 0: the file as a whole (no myself node) */
    size_t offset; /* byte offset in buf of the offending field (or line) */
    char reason[NC_REASON_MAX];
} nodes_conf_err;

/* Called once per node line, in file order, with line its 1-based number.
 * A non-zero return stops the parse, which then fails on that line with
 * the reason "refused by the loader". */
typedef int nodes_conf_fn(void *arg, const nc_node *n, size_t line);

/* Parses a whole nodes.conf (or a CLUSTER NODES reply, which has no vars
 * line). Empty input is a node without a config: 0 and no calls. Otherwise
 * the input must name exactly one myself node. vars (may be NULL) is
 * zeroed first, then filled from the vars lines. err may be NULL.
 * Returns 0, or -1 with err set for the first bad line (the nodes before
 * it have been reported). Allocates scratch space only (freed). */
int nodes_conf_parse(const char *buf, size_t len, nodes_conf_fn *on_node, nodes_conf_vars *vars, void *arg,
                     nodes_conf_err *err);

/* Appends n's line, ending with "\n", exactly as Redis 7.0.15 writes it;
 * the slot states only when with_slot_states. */
void nodes_conf_format_node(sbuf *out, const nc_node *n, int with_slot_states);
/* Appends "vars currentEpoch <n> lastVoteEpoch <n>\n". */
void nodes_conf_format_vars(sbuf *out, const nodes_conf_vars *vars);

/* Slot bitmap helpers. */
static inline int nc_slot_get(const nc_node *n, int s) { return (n->slots[s >> 3] >> (s & 7)) & 1; }
static inline void nc_slot_set(nc_node *n, int s) { n->slots[s >> 3] |= (unsigned char)(1u << (s & 7)); }

/* Writes content to path atomically (file_replace; durable: fsynced). 0, or
 * -1 with errno. */
int nodes_conf_save(const char *path, const sbuf *content, int durable);

#endif
