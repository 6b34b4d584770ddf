/* null.h - ferry-null-server: a RESP server that keeps no data.
 *
 * Why: to bound what *any* server can reach on this machine. It frames
 * requests exactly as a real server must (multibulk and inline), answers each
 * with a fixed reply chosen by command name, and does nothing else: no
 * keyspace, no allocation per request, no bookkeeping. What it costs per
 * request is the kernel's TCP work plus the framing, so its throughput under
 * ferry-bench is the ceiling for ferry and redis-server alike (issue 3's P = 1
 * target is judged against it in scripts/ceiling.py).
 *
 * Two I/O backends share the framing: epoll with read()/write() per
 * connection (what ferry and redis-server do), and io_uring with multishot
 * recv into provided buffers and sends batched into one io_uring_enter() per
 * loop, to measure whether cross-connection syscall batching moves the
 * ceiling. Linux only, like ferry-bench.
 */
#ifndef FERRY_NULL_H
#define FERRY_NULL_H

#include <stddef.h>
#include <stdint.h>
#include <sys/uio.h>

/* Per-connection unparsed input: the largest request the server accepts.
 * Room for a SET of a 64 KB value (scripts/values_bench.py measures values
 * up to 64 KB) with a 4x margin; also the largest --value-size. */
#define NS_INBUF   (256 * 1024)
#define NS_OUTMAX  (64u << 20)       /* a client that never reads is closed past this */

/* Growable output buffer. With by_ref set (the epoll backend), a bulk of
 * at least ns_ref_min bytes is not copied in: its position in buf is
 * recorded in refs and the one encoded copy is written from there by
 * writev, as a server sends a big stored value from the value's own memory.
 * The pending stream is buf[head..refs[rhead]) + bulk[boff..] + ... +
 * buf[last ref..len). */
typedef struct ns_out {
    char *buf;
    size_t len, cap;
    size_t head;           /* bytes of buf already written */
    size_t *refs;          /* ascending positions in buf where the bulk goes */
    size_t nrefs, refcap;
    size_t rhead;          /* refs[rhead..nrefs) not yet written */
    size_t boff;           /* bytes of refs[rhead]'s bulk already written */
    int by_ref;
} ns_out;

typedef struct ns_conn {
    int fd;
    size_t inlen;
    char in[NS_INBUF];
    ns_out out;       /* replies not yet handed to the kernel */
    ns_out sending;   /* io_uring: the buffer a SEND in flight points into */
    size_t sent;      /* io_uring: bytes of `sending` already sent */
    int inflight;     /* io_uring: SEND in flight */
    int recv_armed;   /* io_uring: multishot recv active */
    int closing;      /* io_uring: peer gone, close once nothing is in flight */
    int dirty;        /* io_uring: on the to-send list */
    int want_out;     /* epoll: registered for EPOLLOUT (socket was full) */
} ns_conn;

/* Bytes of every bulk reply (GET, MGET elements); --value-size. The
 * value is unset (and ns_frame fails on GET) until this is called. */
extern size_t ns_value_size;
int ns_set_value_size(size_t n);
/* Bulks of at least this many value bytes go by reference when the output
 * buffer allows it (--bulk-ref-min; default 4096, ferry's threshold). */
extern size_t ns_ref_min;
extern int ns_rcvbuf; /* SO_RCVBUF of accepted sockets (ferry's tcp-rcvbuf), 0 = the kernel's */

/* Frame every complete request in buf[0..len), appending one reply per
 * request to out. Returns bytes consumed, or -1 on a protocol error (the
 * caller closes the connection). */
long ns_frame(const char *buf, size_t len, ns_out *out);

int ns_out_reserve(ns_out *o, size_t extra);
void ns_out_free(ns_out *o);
/* 1 while any byte of o is unwritten. */
int ns_out_pending(const ns_out *o);
/* Fills iov (at most max entries) with the start of o's pending stream;
 * returns the number of entries. */
int ns_out_iov(const ns_out *o, struct iovec *iov, int max);
/* n bytes of the pending stream were written; o is emptied when none is left. */
void ns_out_consume(ns_out *o, size_t n);

ns_conn *ns_conn_new(int fd);
void ns_conn_free(ns_conn *c);

/* Feed bytes read from c's socket: frames what is complete and keeps the
 * rest. Returns 0, or -1 if the connection must be closed. */
int ns_conn_feed(ns_conn *c, const char *data, size_t len);
/* n bytes were read straight into c->in after its inlen pending ones:
 * frames what is complete and moves the partial request to the front.
 * Returns 0, or -1 on a protocol error. */
int ns_conn_took(ns_conn *c, size_t n);

/* Backends: run forever on the listening socket; return only on a setup
 * failure (uring: 3 = io_uring unavailable). */
int ns_run_epoll(int lfd);
int ns_run_uring(int lfd);

#endif
