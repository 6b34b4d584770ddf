/* client.h - one connected client: its socket, query buffer and parser
 * state, the current command's arguments (spans into the query buffer), its
 * output ring, and its transaction / watch state.
 */
#ifndef FERRY_CLIENT_H
#define FERRY_CLIENT_H

#include <stdint.h>
#include <stddef.h>
#include "resp_parse.h"
#include "replbuf.h"
#include "ring.h"
#include "span.h"

/* client flags */
#define CF_CLOSE_AFTER_REPLY 0x0001   /* QUIT, protocol error: flush then close */
#define CF_CLOSE_ASAP        0x0002   /* close without flushing (limits) */
#define CF_MULTI             0x0004
#define CF_DIRTY_CAS         0x0008   /* a watched key was touched */
#define CF_DIRTY_EXEC        0x0010   /* a command failed to queue */
#define CF_PENDING_WRITE     0x0020   /* on srv.pending_write */
#define CF_INPUT_DEFERRED    0x0040   /* on srv.deferred_input: its pass used its output budget */
#define CF_REPLY_OFF         0x0080   /* CLIENT REPLY OFF */
#define CF_REPLY_SKIP_NEXT   0x0100   /* CLIENT REPLY SKIP (armed) */
#define CF_REPLY_SKIP        0x0200   /* skip this command's reply */
#define CF_AUTHENTICATED     0x0400
#define CF_NO_EVICT          0x0800
#define CF_NO_TOUCH          0x1000
#define CF_EXECUTING_EXEC    0x2000
#define CF_PROTECTED         0x4000   /* never closed by timeout (current client) */
#define CF_FAKE              0x8000   /* no socket (tests, fuzzing) */
#define CF_BLOCKED          0x10000   /* waiting in a blocking command (blocking.c) */
#define CF_PUBSUB           0x20000   /* subscribed to >= 1 channel or pattern (pubsub.c) */
#define CF_SCRIPT           0x40000   /* runs a script's redis.call commands: never blocks */
#define CF_SCRIPT_CALLER    0x80000   /* its script is running: not read, not freed until it ends */
/* client-side caching (tracking.h): CLIENT TRACKING ON and its options */
#define CF_TRACKING          0x100000
#define CF_TRACKING_BCAST    0x200000
#define CF_TRACKING_OPTIN    0x400000
#define CF_TRACKING_OPTOUT   0x800000
#define CF_TRACKING_CACHING 0x1000000  /* CLIENT CACHING yes|no given for the next command */
#define CF_TRACKING_NOLOOP  0x2000000
#define CF_TRACKING_BROKEN  0x4000000  /* its REDIRECT client is gone */
#define CF_MONITOR          0x8000000  /* MONITOR (monitor.h) */
#define CF_OBEY            0x10000000  /* replays what a server already executed (the AOF loader):
                                        * commands obey as Redis's mustObeyClient (XADD's LIMIT) */
#define CF_ACL_CHECK       0x40000000  /* its ACL user is restricted: the dispatcher checks permissions (acl.h) */
#define CF_PAUSED          0x20000000  /* held by CLIENT PAUSE (pause.h); CF_BLOCKED is set too */
#define CF_UNIX_SOCKET     0x80000000u /* connected through the unixsocket listener (net.c): flag U */

struct db;
struct command;
struct tls_conn;
struct acl_user;

typedef struct multi_cmd {
    int argc;
    span *argv;                 /* owned copies */
    struct command *cmd;
} multi_cmd;

typedef struct client {
    uint64_t id;
    int fd;
    struct tls_conn *tls;       /* tls.h: a client of a tls-port listener, NULL for clear text */
    uint32_t flags;
    int resp;                   /* 2 or 3 */
    struct db *db;
    /* input */
    char *qbuf;
    size_t qcap, qlen, qpos;    /* unparsed request starts at qbuf+qpos */
    size_t qpeak;               /* most input held at once since the last cron visit (client_cron_qbuf) */
    size_t input_left;          /* while a request runs: its bytes and those after it (CLIENT LIST qbuf=) */
    resp_parser parser;
    struct client_aside *aside; /* aside.h: big arguments of the request in progress in blocks of their own */
    size_t aside_trust;         /* the longest block this connection has filled (aside.c) */
    char *aside_spare;          /* a block kept for the next big argument (aside.c), or NULL */
    /* current command */
    int argc;
    span *argv;
    size_t argv_cap;
    struct command *cmd, *lastcmd;
    const char *req_raw;        /* while a request read from the socket runs: its bytes as received */
    size_t req_raw_len;         /* (propagate.c copies them through when they encode argv exactly) */
    /* output */
    ring out;
    struct outrefs *refs;       /* outbuf.c: big values sent from their own memory, NULL if none yet */
    size_t out_ref_bytes;       /* their unsent bytes */
    rb_reader stream;           /* a replica's place in the shared replication buffer (replbuf.h): its
                                 * stream is written from there, after the ring */
    uint64_t out_peak;          /* most output staged at once since out_peak_since_ms (CLIENT LIST rbp) */
    int64_t out_peak_since_ms;
    int64_t cob_soft_since_ms;  /* when the soft limit was first exceeded, 0 = not */
    int64_t held_since_ms;      /* its replies wait for its big argument since then (outbuf.c), 0 = not */
    /* transaction */
    multi_cmd *mstate;
    int mcount, mcap;
    struct watched_key *watched; /* list of keys this client watches */
    struct block_state *bstate;  /* blocking.c: set while CF_BLOCKED */
    struct pubsub_state *pubsub; /* pubsub.c: channels and patterns, NULL if none */
    struct tracking_state *tracking; /* tracking.c: redirect, prefixes; NULL until it tracks or is redirected to */
    /* replication (repl/) */
    uint8_t repl_role;          /* CLIENT_REPL_*: the link to our primary, or a replica's link to us */
    uint8_t out_held;           /* its output is not written yet (a replica's stream during its full sync) */
    struct replica_link *repl;  /* a replica's state, on the primary */
    uint8_t cluster_flags;      /* CLF_*: ASKING, READONLY (cluster mode) */
    /* identity & info */
    struct acl_user *user;      /* acl.h: NULL = the default user */
    char *name;
    char *lib_name, *lib_ver;
    char addr[78];              /* "ip:port", or "<unixsocket>:0"; Redis's NET_ADDR_STR_LEN, so a long */
    char laddr[78];             /* socket path is cut where Redis cuts it */
    int64_t ctime_ms;
    int64_t last_interaction_ms;
    uint64_t tot_cmds;
    /* lists */
    struct client *prev, *next;     /* srv.clients */
    struct client *next_pending;    /* srv.pending_write */
    struct client *next_deferred;   /* srv.deferred_input */
    struct client *next_read_again; /* srv.read_again, when on_read_again */
    uint8_t on_read_again;
    struct client *next_close;      /* srv close-async list */
    int64_t close_ms;               /* when client_close_async was asked (a primary's link lost then) */
} client;

enum { CLIENT_REPL_NONE = 0, CLIENT_REPL_MASTER = 1, CLIENT_REPL_REPLICA = 2 };
/* cluster_flags */
#define CLF_ASKING 1                /* ASKING: the next command may use an importing slot */
#define CLF_ASKING_FRESH 2          /* set by ASKING itself: kept past the ASKING command */
#define CLF_READONLY 4              /* READONLY: a replica serves its master's slots' reads */

/* Output staged and not yet written: the ring, the referenced values and a
 * replica's stream. */
static inline size_t client_out_used(const client *c) {
    return ring_used(&c->out) + c->out_ref_bytes + rb_pending(&c->stream);
}

client *client_create(int fd);            /* fd -1 for a fake client */
/* Set by the replication layer: a replication link is being freed; the
 * link to the primary executed a request of n bytes at p (the stream it
 * applied, which goes on to this server's own replicas). */
extern void (*client_repl_freed)(client *c);
extern void (*client_repl_applied)(client *c, const char *p, size_t n);
/* Run before any reply is written to a socket (the append-only file's
 * write barrier: a reply never leaves before the write it acknowledges). */
extern void (*client_write_barrier)(void);
void client_free(client *c);
/* Set by the ACL layer (acl.c): the flags a new connection starts with
 * (CF_AUTHENTICATED when the default user needs no password, CF_ACL_CHECK
 * when it is restricted), and the user name CLIENT LIST shows. NULL until
 * then: requirepass decides, the user is "default". */
extern uint32_t (*client_initial_flags)(void);
extern const char *(*client_user_name)(const client *c);
void client_close_async(client *c);       /* mark CF_CLOSE_ASAP */
/* The clients cron's query buffer resizing: a client idle for more than 2
 * seconds gives its buffer back; a buffer over 32 KB and more than twice
 * the recent peak is cut down to what the peak needs. */
void client_cron_qbuf(client *c);
/* Shrink c's argument arrays to their initial size when no request is pending. */
void client_cron_argv(client *c);
/* Feed bytes as if read from the socket, then process them (fake clients, tests, fuzzing). */
void client_feed(client *c, const char *p, size_t n);
void client_process_input(client *c);
/* Schedule output flush at the end of this loop iteration. */
void client_mark_pending(client *c);
/* Flush all pending output (one writev per client); called before sleeping. */
void client_set_db(client *c, int id);
/* requirepass is set and the client has not authenticated (Redis's
 * authRequired): tighter request and output limits apply. */
int client_auth_required(const client *c);
/* Bytes the client holds: the struct, its buffers and arrays (INFO's
 * mem_clients_normal, CLIENT LIST's tot-mem, maxmemory-clients). */
size_t client_memory_usage(const client *c);
/* A fake client, a Unix socket client or a loopback peer: the clients the
 * "local" value of enable-debug-command / -module-command /
 * -protected-configs admits, as Redis's islocalClient. */
int client_is_local(const client *c);
/* Human readable "id=.. addr=.. ..." line as CLIENT LIST prints. */
size_t client_info_line(client *c, char *buf, size_t cap);
/* Run one more pass over the input of every client whose last pass used its
 * output budget (CF_INPUT_DEFERRED); called once per loop iteration before
 * the flush. A client that uses its budget again is deferred again. */
void clients_process_deferred(void);
/* A TLS client whose handshake is done (net.c) starts reading: its requests
 * may already wait, decrypted, inside the connection. */
void client_start_reading(client *c);
/* Free the clients marked for closing (a script's caller waits for its
 * script to end). */
void clients_free_closed(void);
/* One turn of the event loop from inside a busy script: file events only
 * (no timers, no blocked clients served, no deferred input), replies
 * flushed, closed clients freed except the script's caller. */
void clients_events_while_busy(void);

/* listening/accept */
/* The TCP listeners of `bind` on `port` and `tls-port` (none for 0); -1 if
 * a required address could not be bound on port, -2 on tls-port. */
int net_listen_all(void);
/* The `unixsocket` listener, if one is configured (a stale file at the
 * path is removed first; mode `unixsocketperm` when non-zero); -1 with
 * Redis's reason in err ("bind: ...") on failure. */
int net_listen_unix(char *err, size_t errlen);
/* When tls-port, tls-replication or tls-cluster is set, (re)builds the TLS
 * context from the tls-* settings (at start-up, and after CONFIG SET of
 * any tls-* as Redis does); 0, or -1 with the reason logged. */
int net_tls_configure(void);
/* Number of listeners (TCP and Unix): 0 = the server can't be reached. */
int net_listening(void);
/* At exit: closes the Unix socket listener and removes its file (logged as
 * Redis logs it). */
void net_close_unix(void);
/* A nonblocking listening socket on addr ("*", "::*", an IPv4 or IPv6
 * address) and port; -1 on failure (errno set). */
int net_listen_tcp(const char *addr, int port, int backlog);
/* Binds the configured addresses, then closes the old listeners; 0, or -1
 * with no listener left (the caller restores the old port/bind). */
int net_rebind(void);
/* bind-source-addr: an outgoing socket fd of this address family (to a
 * primary, to a cluster node) is bound to that address before it connects,
 * when one is set and can be bound; otherwise the kernel picks, as Redis's
 * best effort does (the failure is logged). */
void net_bind_source(int fd, int family);

/* NUL-terminated copy of a span, truncated to cap-1 (for %s in messages;
 * like Redis's C-string handling it shows bytes up to a NUL). */
static inline const char *span_cstr(char *buf, size_t cap, span s) {
    size_t n = s.len < cap - 1 ? s.len : cap - 1;
    __builtin_memcpy(buf, s.p, n);
    buf[n] = '\0';
    return buf;
}

static inline int span_eq_nocase(span s, const char *lit) {
    size_t i = 0;
    for (; i < s.len; i++) {
        char a = s.p[i], b = lit[i];
        if (!b) return 0;
        if (a >= 'A' && a <= 'Z') a = (char)(a + 32);
        if (b >= 'A' && b <= 'Z') b = (char)(b + 32);
        if (a != b) return 0;
    }
    return lit[i] == '\0';
}

#endif
