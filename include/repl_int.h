/* repl_int.h - state shared by the replication layer's files (repl.c:
 * ids, offsets, backlog, the sink; primary.c: replicas and full syncs;
 * replica.c: the link to our primary; cmd_repl.c: the commands). Not for
 * other layers. */
#ifndef FERRY_REPL_INT_H
#define FERRY_REPL_INT_H

#include "client.h"
#include "replbuf.h"
#include "sbuf.h"
#include <stdint.h>
#include <sys/types.h>

#define REPLID_LEN 40

/* a replica's state, on the primary (Redis's SLAVE_STATE_*) */
enum { RS_WAIT_BGSAVE_START = 6, RS_WAIT_BGSAVE_END = 7, RS_SEND_BULK = 8, RS_ONLINE = 9 };

typedef struct replica_link {
    int state;
    long long ack_off;          /* REPLCONF ACK */
    int64_t ack_ms;             /* when the last ACK came (lag) */
    int listening_port;         /* REPLCONF listening-port */
    char ip[64];                /* REPLCONF ip-address, else the peer's */
    int capa_eof, capa_psync2;
    int pre_psync;              /* it sent SYNC, not PSYNC */
    int acked;                  /* it sent REPLCONF ACK since its snapshot started */
    int diskless;               /* its full sync streams a snapshot to its socket */
    long long initial_off;      /* the offset its snapshot stands at (+FULLRESYNC) */
    int64_t wait_since_ms;      /* when it began to wait for a snapshot */
    /* RS_SEND_BULK: the snapshot file being sent */
    int bulk_fd;
    off_t bulk_off, bulk_size;
    char pre[40];
    size_t pre_len, pre_pos;
    /* a diskless snapshot (rdb_pipe.c) */
    int in_pipe;                /* it is one of the transfer's replicas */
    size_t pipe_pos;            /* bytes of the current chunk it has taken */
    int64_t pipe_io_ms;         /* while its socket is full: its last progress (repl-timeout), else 0 */
} replica_link;

/* the link to our primary (Redis's REPL_STATE_*) */
enum {
    LINK_NONE = 0, LINK_CONNECT, LINK_CONNECTING, LINK_RECV_PONG, LINK_RECV_REPLIES, LINK_RECV_PSYNC,
    LINK_TRANSFER, LINK_CONNECTED,
};

/* a full sync's snapshot: to disk then loaded, or loaded from the socket
 * into the live databases or into stand-ins (repl-diskless-load) */
enum { STREAM_NONE = 0, STREAM_LIVE, STREAM_SWAP };

typedef struct repl_state {
    char replid[REPLID_LEN + 1], replid2[REPLID_LEN + 1];
    long long offset;           /* master_repl_offset: bytes of the stream so far */
    long long second_off;       /* second_repl_offset, -1 if none */
    replbuf rb;                 /* the backlog, shared with the replicas' output (replbuf.h) */
    int has_backlog;
    int fed;                    /* the stream grew since the replicas were last told (repl_flush) */
    int64_t no_replicas_since_ms;
    /* primary side */
    client **replicas;
    int nreplicas, cap_replicas;
    int64_t last_ping_ms;
    long long sync_full, sync_partial_ok, sync_partial_err;
    int get_ack;                /* WAIT asked: send REPLCONF GETACK before sleeping */
    client **waiters;           /* clients blocked in WAIT */
    int nwaiters, cap_waiters;
    /* replica side */
    char *host;
    int port;
    int link;                   /* LINK_* */
    int fd;                     /* the socket before it becomes the master client */
    struct tls_conn *tls;       /* its TLS connection (tls-replication), NULL for clear text */
    char rbuf[1024];            /* handshake replies being read */
    size_t rlen;
    int pending_replies;        /* handshake replies still to read */
    int auth_reply_next;        /* the next of them answers AUTH (its error ends the attempt) */
    int64_t link_ms;            /* when the current step began */
    int64_t last_io_ms;
    int64_t down_since_ms;
    int64_t sync_start_ms;
    long long transfer_size;    /* -1: $EOF: framing */
    int header_read;            /* the bulk header of the transfer has been read */
    int transfer_flag;          /* the transfer set srv.loading (1) or srv.async_loading (2) */
    int stream_mode;            /* STREAM_*: how this full sync's snapshot is loaded (replica.c) */
    long long transfer_read;
    char eofmark[REPLID_LEN];
    char tail[REPLID_LEN];      /* the last bytes written (the mark, at the end) */
    int tmp_fd;
    char tmp_path[512];
    char psync_replid[REPLID_LEN + 1];
    long long psync_off;
    int master_db;              /* the database the primary's stream had selected */
    sbuf in_multi;              /* the stream of a transaction our primary's link is inside (see replica_applied) */
    int64_t last_ack_ms;
} repl_state;

extern repl_state rs;

/* repl.c */
void repl_feed(const char *p, size_t n);          /* stream bytes: offset, backlog, replicas (if a backlog) */
void repl_stream_add(const char *p, size_t n);    /* the same, counted in the offset even without a backlog */
void repl_flush(void);                            /* replicas with new stream bytes are written */
void repl_backlog_ensure(void);
void repl_backlog_free(void);                     /* drops the replicas too */
void repl_shift_ids(void);                        /* promotion: our id becomes the second one */
void repl_new_id(void);
void repl_update_checks(void);                    /* srv.repl_checks */
/* primary.c */
void primary_sync(client *c, int psync);          /* SYNC / PSYNC */
void primary_replconf(client *c);
void primary_wait(client *c);
void primary_cron(void);
void primary_before_sleep(void);
void primary_replica_freed(client *c);
void primary_replica_replied(client *c);          /* reply.c's hook: a replica's command made a reply */
void primary_drop_replicas(void);
void primary_replicas_fed(void);                  /* the stream grew: write the replicas, check their limits */
void primary_bgsave_done(int ok, int to_sockets);
int primary_good_replicas(void);
/* rdb_pipe.c */
int rdb_pipe_start(int fd, int exit_fd);          /* the child's pipe: pass it on to the in_pipe replicas */
void rdb_pipe_replica_gone(client *c);            /* c is being freed */
/* failover.c */
void cmd_failover(client *c);
const char *failover_state_name(void);
int failover_in_progress(void);
void failover_before_sleep(void);
void failover_handshake_failed(void);   /* the PSYNC FAILOVER was refused: back to primary */
void failover_done(void);               /* the target answered PSYNC: it is the primary now */
/* replica.c */
void replica_set_master(const char *host, int port);
void replica_unset_master(void);
void replica_cron(void);
void replica_master_freed(client *c);
void replica_applied(client *c, const char *p, size_t n);
void replica_send_ack(void);
const char *replica_link_state_name(void);

#endif
