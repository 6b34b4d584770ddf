/* null_uring.c - the io_uring backend of ferry-null-server.
 *
 * Why: the epoll backend does one read() and one write() per connection per
 * loop, like ferry and redis-server. This backend asks what batching every
 * connection's I/O into one system call buys: each connection has a multishot
 * recv that fills buffers from one provided-buffer ring, replies are sent
 * with IORING_OP_SEND, and one io_uring_enter() per loop submits every send
 * and waits for the next completions (DEFER_TASKRUN, so completions are run
 * in that call rather than by interrupting us). Raw system calls through
 * libc's syscall(); no liburing.
 *
 * A connection closes once its recv has ended (peer closed or error) and no
 * send is in flight, so its descriptor is never reused under a pending op.
 */
#include "null.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include <linux/io_uring.h>

/* DEFER_TASKRUN (6.1) implies provided-buffer rings (5.19), an enum, not a macro */
#if defined(IORING_SETUP_DEFER_TASKRUN) && defined(IORING_RECV_MULTISHOT) && defined(IORING_ACCEPT_MULTISHOT)

#include <stdint.h>
#include <sys/mman.h>
#include <sys/syscall.h>

#define NU_SQ_ENTRIES 4096
#define NU_CQ_ENTRIES 16384
#define NU_NBUF       1024            /* provided buffers (power of two) */
#define NU_BUFSZ      16384
#define NU_BGID       0

enum { NU_OP_ACCEPT = 0, NU_OP_RECV = 1, NU_OP_SEND = 2 };

typedef struct nu_ring {
    int fd, lfd;
    unsigned *sq_head, *sq_tail, sq_mask, sq_entries, sq_local;
    struct io_uring_sqe *sqes;
    unsigned *cq_head, *cq_tail, cq_mask;
    struct io_uring_cqe *cqes;
    struct io_uring_buf_ring *br;
    char *bufs;
    unsigned br_tail;
    ns_conn **dirty;                  /* connections with replies to send */
    size_t ndirty, dirty_cap;
} nu_ring;

static int nu_enter(nu_ring *r, unsigned wait) {
    unsigned pending = r->sq_local - __atomic_load_n(r->sq_head, __ATOMIC_ACQUIRE);
    long rc;
    __atomic_store_n(r->sq_tail, r->sq_local, __ATOMIC_RELEASE);
    do {
        rc = syscall(__NR_io_uring_enter, r->fd, pending, wait, wait ? IORING_ENTER_GETEVENTS : 0, NULL, 0);
    } while (rc < 0 && errno == EINTR);
    if (rc < 0 && errno != EBUSY && errno != EAGAIN) {
        perror("io_uring_enter");
        return -1;
    }
    return 0;
}

static struct io_uring_sqe *nu_sqe(nu_ring *r) {
    struct io_uring_sqe *s;
    if (r->sq_local - __atomic_load_n(r->sq_head, __ATOMIC_ACQUIRE) == r->sq_entries && nu_enter(r, 0) < 0)
        exit(1);
    s = &r->sqes[r->sq_local++ & r->sq_mask];
    memset(s, 0, sizeof *s);
    return s;
}

static void nu_give_buffer(nu_ring *r, unsigned bid) {
    struct io_uring_buf *b = &r->br->bufs[r->br_tail & (NU_NBUF - 1)];
    b->addr = (uint64_t)(uintptr_t)(r->bufs + (size_t)bid * NU_BUFSZ);
    b->len = NU_BUFSZ;
    b->bid = (uint16_t)bid;
    r->br_tail++;
    __atomic_store_n(&r->br->tail, (uint16_t)r->br_tail, __ATOMIC_RELEASE);
}

static void nu_arm_accept(nu_ring *r) {
    struct io_uring_sqe *s = nu_sqe(r);
    s->opcode = IORING_OP_ACCEPT;
    s->fd = r->lfd;
    s->ioprio = IORING_ACCEPT_MULTISHOT;
    s->accept_flags = SOCK_CLOEXEC;
    s->user_data = NU_OP_ACCEPT;
}

static void nu_arm_recv(nu_ring *r, ns_conn *c) {
    struct io_uring_sqe *s = nu_sqe(r);
    s->opcode = IORING_OP_RECV;
    s->fd = c->fd;
    s->flags = IOSQE_BUFFER_SELECT;
    s->buf_group = NU_BGID;
    s->ioprio = IORING_RECV_MULTISHOT;
    s->user_data = (uint64_t)(uintptr_t)c | NU_OP_RECV;
    c->recv_armed = 1;
}

static void nu_send(nu_ring *r, ns_conn *c) {
    struct io_uring_sqe *s = nu_sqe(r);
    s->opcode = IORING_OP_SEND;
    s->fd = c->fd;
    s->addr = (uint64_t)(uintptr_t)(c->sending.buf + c->sent);
    s->len = (uint32_t)(c->sending.len - c->sent);
    s->msg_flags = MSG_NOSIGNAL;
    s->user_data = (uint64_t)(uintptr_t)c | NU_OP_SEND;
    c->inflight = 1;
}

static void nu_mark_dirty(nu_ring *r, ns_conn *c) {
    if (c->dirty) return;
    if (r->ndirty == r->dirty_cap) {
        size_t cap = r->dirty_cap ? r->dirty_cap * 2 : 256;
        ns_conn **nd = realloc(r->dirty, cap * sizeof *nd);
        if (!nd) { perror("realloc"); exit(1); }
        r->dirty = nd;
        r->dirty_cap = cap;
    }
    r->dirty[r->ndirty++] = c;
    c->dirty = 1;
}

/* Closes c once its recv has ended and no send is in flight. */
static void nu_maybe_close(ns_conn *c) {
    if (!c->closing || c->recv_armed || c->inflight || c->dirty) return;
    close(c->fd);
    ns_conn_free(c);
}

static void nu_start_closing(ns_conn *c) {
    if (!c->closing && c->recv_armed) shutdown(c->fd, SHUT_RDWR); /* ends the multishot recv */
    c->closing = 1;
}

/* Starts a send for every connection that has replies and none in flight. */
static void nu_flush_dirty(nu_ring *r) {
    size_t i;
    for (i = 0; i < r->ndirty; i++) {
        ns_conn *c = r->dirty[i];
        ns_out t;
        c->dirty = 0;
        if (c->closing || c->inflight || c->out.len == 0) { nu_maybe_close(c); continue; }
        t = c->sending; /* swap: `out` keeps collecting while `sending` is in flight */
        c->sending = c->out;
        c->out = t;
        c->out.len = 0;
        c->sent = 0;
        nu_send(r, c);
    }
    r->ndirty = 0;
}

static void nu_on_recv(nu_ring *r, ns_conn *c, const struct io_uring_cqe *cqe) {
    int more = (cqe->flags & IORING_CQE_F_MORE) != 0;
    if (cqe->res > 0) {
        unsigned bid = cqe->flags >> IORING_CQE_BUFFER_SHIFT;
        if (!c->closing && ns_conn_feed(c, r->bufs + (size_t)bid * NU_BUFSZ, (size_t)cqe->res) < 0)
            nu_start_closing(c);
        nu_give_buffer(r, bid);
        if (c->out.len && !c->closing) nu_mark_dirty(r, c);
    }
    if (more) return;
    c->recv_armed = 0;
    if (!c->closing && (cqe->res > 0 || cqe->res == -ENOBUFS)) nu_arm_recv(r, c); /* ended, not closed */
    else c->closing = 1;
    nu_maybe_close(c);
}

static void nu_on_send(nu_ring *r, ns_conn *c, int res) {
    c->inflight = 0;
    if (res < 0) c->closing = 1;
    else if ((c->sent += (size_t)res) < c->sending.len) { nu_send(r, c); return; }
    else { c->sending.len = 0; c->sent = 0; }
    if (!c->closing && c->out.len) nu_mark_dirty(r, c);
    nu_maybe_close(c);
}

static void nu_on_accept(nu_ring *r, const struct io_uring_cqe *cqe) {
    if (cqe->res >= 0) {
        ns_conn *c = ns_conn_new(cqe->res);
        if (c) nu_arm_recv(r, c);
        else close(cqe->res);
    }
    if (!(cqe->flags & IORING_CQE_F_MORE)) nu_arm_accept(r);
}

static void nu_reap(nu_ring *r) {
    unsigned h = *r->cq_head, t = __atomic_load_n(r->cq_tail, __ATOMIC_ACQUIRE);
    for (; h != t; h++) {
        const struct io_uring_cqe *cqe = &r->cqes[h & r->cq_mask];
        uint64_t ud = cqe->user_data;
        ns_conn *c = (ns_conn *)(uintptr_t)(ud & ~(uint64_t)3);
        switch (ud & 3) {
        case NU_OP_ACCEPT: nu_on_accept(r, cqe); break;
        case NU_OP_RECV: nu_on_recv(r, c, cqe); break;
        default: nu_on_send(r, c, cqe->res); break;
        }
    }
    __atomic_store_n(r->cq_head, h, __ATOMIC_RELEASE);
}

static int nu_unavailable(const char *what) {
    fprintf(stderr, "io_uring unavailable: %s: %s\n", what, strerror(errno));
    return 3;
}

static int nu_setup(nu_ring *r, int lfd) {
    struct io_uring_params p;
    struct io_uring_buf_reg reg;
    size_t sqsz, cqsz, i;
    unsigned *array;
    char *ring;
    memset(&p, 0, sizeof p);
    p.flags = IORING_SETUP_SINGLE_ISSUER | IORING_SETUP_DEFER_TASKRUN | IORING_SETUP_CQSIZE;
    p.cq_entries = NU_CQ_ENTRIES;
    r->lfd = lfd;
    r->fd = (int)syscall(__NR_io_uring_setup, NU_SQ_ENTRIES, &p);
    if (r->fd < 0) return nu_unavailable("io_uring_setup");
    if (!(p.features & IORING_FEAT_SINGLE_MMAP)) { errno = ENOTSUP; return nu_unavailable("single mmap"); }
    sqsz = p.sq_off.array + p.sq_entries * sizeof(unsigned);
    cqsz = p.cq_off.cqes + p.cq_entries * sizeof(struct io_uring_cqe);
    ring = mmap(NULL, sqsz > cqsz ? sqsz : cqsz, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_POPULATE, r->fd,
                IORING_OFF_SQ_RING);
    r->sqes = mmap(NULL, p.sq_entries * sizeof(struct io_uring_sqe), PROT_READ | PROT_WRITE,
                   MAP_SHARED | MAP_POPULATE, r->fd, IORING_OFF_SQES);
    if (ring == MAP_FAILED || r->sqes == MAP_FAILED) return nu_unavailable("mmap");
    r->sq_head = (unsigned *)(ring + p.sq_off.head);
    r->sq_tail = (unsigned *)(ring + p.sq_off.tail);
    r->sq_mask = *(unsigned *)(ring + p.sq_off.ring_mask);
    r->sq_entries = p.sq_entries;
    r->sq_local = *r->sq_tail;
    array = (unsigned *)(ring + p.sq_off.array);
    for (i = 0; i < p.sq_entries; i++) array[i] = (unsigned)i; /* identity: slot i is sqes[i] */
    r->cq_head = (unsigned *)(ring + p.cq_off.head);
    r->cq_tail = (unsigned *)(ring + p.cq_off.tail);
    r->cq_mask = *(unsigned *)(ring + p.cq_off.ring_mask);
    r->cqes = (struct io_uring_cqe *)(ring + p.cq_off.cqes);

    r->br = mmap(NULL, NU_NBUF * sizeof(struct io_uring_buf), PROT_READ | PROT_WRITE,
                 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    r->bufs = malloc((size_t)NU_NBUF * NU_BUFSZ);
    if (r->br == MAP_FAILED || !r->bufs) return nu_unavailable("buffers");
    memset(&reg, 0, sizeof reg);
    reg.ring_addr = (uint64_t)(uintptr_t)r->br;
    reg.ring_entries = NU_NBUF;
    reg.bgid = NU_BGID;
    if (syscall(__NR_io_uring_register, r->fd, IORING_REGISTER_PBUF_RING, &reg, 1) < 0)
        return nu_unavailable("register buffer ring");
    for (i = 0; i < NU_NBUF; i++) nu_give_buffer(r, (unsigned)i);
    return 0;
}

int ns_run_uring(int lfd) {
    static nu_ring r;
    int rc = nu_setup(&r, lfd);
    if (rc) return rc;
    nu_arm_accept(&r);
    for (;;) {
        nu_flush_dirty(&r);
        if (nu_enter(&r, 1) < 0) return 1;
        nu_reap(&r);
    }
}

#else /* kernel headers too old for the features used above */

int ns_run_uring(int lfd) {
    (void)lfd;
    fputs("io_uring unavailable: built against kernel headers without multishot recv/DEFER_TASKRUN\n", stderr);
    return 3;
}

#endif
