/* cluster_bus.h - the cluster bus: the connections between cluster nodes
 * (cluster_bus.c), the messages they exchange and what they change in the
 * cluster state (cluster_gossip.c), replica elections and manual failover
 * (cluster_failover.c). The wire format is redis-server 7.0's
 * (cluster_msg.h), so ferry and redis-server nodes form one cluster.
 */
#ifndef FERRY_CLUSTER_BUS_H
#define FERRY_CLUSTER_BUS_H

#include <stddef.h>
#include <stdint.h>
#include "client.h"
#include "cluster.h"
#include "cluster_msg.h"

#define CLUSTER_LINK_RBUF_INIT 4096
#define CLUSTER_MF_TIMEOUT_MS 5000          /* a manual failover's time limit */
#define CLUSTER_FAIL_REPORT_VALIDITY_MULT 2  /* failure reports live node_timeout * this */
#define CLUSTER_FAIL_UNDO_TIME_MULT 2        /* a failed master with slots is cleared after this */

/* A TCP connection to another node: outbound (ours, to link->node), or
 * inbound (its, node set once we know who sent the first message). */
typedef struct cluster_link {
    int fd;
    int inbound;
    int connecting;                 /* outbound, connect() in progress */
    struct tls_conn *tls;           /* tls-cluster: the link's TLS connection, else NULL */
    int handshaking;                /* its TLS handshake is in progress */
    int64_t ctime;
    cluster_node *node;
    unsigned char *rbuf;            /* a message being read */
    size_t rlen, rcap;
    unsigned char *sbuf;            /* queued output, sbuf[soff..slen) unsent */
    size_t slen, soff, scap;
    uint64_t bytes_in, bytes_out;
} cluster_link;

/* ---- cluster_bus.c: links ---- */
int cluster_bus_listen(void);               /* 0, or -1 (logged) */
void cluster_bus_cron(void);                /* connects, pings, failure detection: 10 times a second */
void cluster_bus_node_gone(cluster_node *n);  /* frees its links (cluster_del_node) */
void cluster_link_free(cluster_link *l);
/* Queues a built message on the link (counted as sent by its type). */
void cluster_link_send(cluster_link *l, const unsigned char *msg, size_t len);
/* CLUSTER MEET: a handshake node for ip:port (cport the bus port). 0, or -1
 * for a bad address or port. An address already in handshake is not added
 * twice. */
int cluster_bus_start_handshake(const char *ip, int port, int cport);
void cluster_bus_reply_links(client *c);    /* CLUSTER LINKS */

/* ---- cluster_gossip.c: messages ---- */
/* Fills h with this node's header fields (type as given). */
void cluster_msg_header(cmsg_hdr *h, uint16_t type);
/* PING, PONG or MEET to the link's peer, with gossip about other nodes. */
void cluster_send_ping(cluster_link *l, uint16_t type);
void cluster_bus_broadcast_pong(void);       /* a PONG to every connected node */
void cluster_broadcast(const unsigned char *msg, size_t len); /* to every connected, handshaken node */
void cluster_send_fail(const char *name);
void cluster_send_update(cluster_link *l, const cluster_node *n);
/* A whole message read from l: processed. 0 if l was freed meanwhile. */
int cluster_process_message(cluster_link *l, const unsigned char *buf, size_t len);
int cluster_bus_failure_reports(cluster_node *n);   /* valid reports (cleans the old ones) */
void cluster_mark_failing_if_needed(cluster_node *n);
void cluster_set_node_as_master(cluster_node *n);
/* myself becomes a replica of n (CLUSTER REPLICATE, a lost slot owner). */
void cluster_become_replica_of(cluster_node *n);
/* Sharded pub/sub and PUBLISH across the cluster (Redis's bus PUBLISH). */
void cluster_propagate_publish(const char *channel, size_t clen, const char *msg, size_t mlen, int shard);

/* ---- cluster_failover.c: replicas taking over ---- */
void cluster_bus_handle_failover(void);     /* before sleeping, and from the cron */
void cluster_failover_cron(void);
void cluster_bus_manual_failover(int force, int takeover);
void cluster_failover_auth_request(cluster_node *sender, const cmsg *m);
void cluster_failover_auth_ack(cluster_node *sender, const cmsg *m);
void cluster_failover_mfstart(cluster_node *sender, cluster_link *l);
void cluster_failover_reset_manual(void);
int cluster_failover_paused(void);          /* a master paused for a manual failover (mflags PAUSED) */
void cluster_failover_master_offset(cluster_node *sender, const cmsg *m);

#endif
