/* outbuf.c - how a client's staged output leaves (see outbuf.h).
 *
 * Why references. A GET of a 64 KB value used to copy the value into the
 * client's ring, and the kernel then copied it again from the ring into
 * the socket. With a pipeline of such GETs the ring also had to hold the
 * whole batch, so it was grown by doubling (copying what it held at every
 * step) and given back at every drain: thousands of brk calls per second
 * and several copies of every byte. Now a value of OUTBUF_REF_MIN bytes or
 * more is staged as a reference: the ring gets the bulk header and the
 * CRLF, the reference records where the value's bytes go between them,
 * and the flush hands writev the value's own memory. The ring stays small
 * and the only copy of the value is the kernel's.
 *
 * Order. The references of a client form a FIFO; each records `gap`, the
 * ring bytes staged between the previous reference (or the oldest unsent
 * ring byte) and itself. A flush walks them: gap bytes of the ring, the
 * reference's bytes, the next gap ... and the ring bytes after the last
 * reference. A partial write advances through the same walk.
 *
 * Lifetime. A referenced node is pinned: DN_PINNED is set and the pin
 * table counts the references to it. Every way a value can change under
 * an unsent reference goes through dn_prepare_change (dict.h): a write
 * lookup (APPEND, SETRANGE, SETBIT, INCR ...), SET overwriting in place,
 * dn_free (DEL, overwrite, expiry, eviction, FLUSHALL, a client killed
 * mid-reply leaves nothing to do) and the resizes that move a node
 * (RENAME, EXPIRE). For a pinned node it calls unpin(), which gives each
 * reference to it a private copy of its unsent bytes and clears the pin;
 * the command then changes the value freely. Handing a whole keyspace to
 * the lazy-free thread first unpins everything (unpin_all), so the thread
 * never meets a pinned node. In the common case (the reply leaves in the
 * same loop iteration and nobody touches the key meanwhile) no byte of the
 * value is copied by the server at all.
 *
 * Holding replies while a big argument streams in. A client pipelining big
 * SETs (ferry-bench -d 65536 -P 100) has, after nearly every read, one
 * request just completed and the next one's value half-received in a block
 * (aside.c). Writing its "+OK" at the end of every loop iteration meant a
 * writev of a few bytes per request or two, and for the client a wakeup to
 * read them: a batch of 100 replies left in about 25 writevs, each waking a
 * client that waits for all 100. So a client's replies stay staged while
 *   - it is filling a block (the rest of a big argument is on its way),
 *   - they are small (HOLD_MAX_BYTES), and
 *   - they have waited less than reply-hold-ms (ferry's own, default 5).
 * The loop then sleeps no longer than the hold has left. A client that
 * waits for each reply before it sends the next request is never held (no
 * request of its follows the reply), and one that stops in the middle of a
 * big argument gets its earlier replies at most reply-hold-ms late.
 * Requiring instead that the client's socket was read in the iteration
 * that just ended lost the gain: with 50 busy clients each one is read
 * about once per millisecond. Measured (ferry-bench SET -d 65536, C = 50,
 * pinned, 5 alternating runs, medians): P = 100 40.3k -> 53.1k rps, P = 16
 * 59.2k -> 65.8k.
 *
 * Sizing (Redis's reply-buffer cron). The ring is not given back when a
 * flush empties it: a busy connection keeps the ring its batches need
 * (only a ring grown past RING_DRAIN_FREE by one huge reply is).
 * The clients cron compares the ring with the most output the client had
 * staged at once in the current window (out_peak): a ring more than twice
 * the peak shrinks to it (at least RING_KEEP_MIN), a ring the peak filled
 * doubles up to RING_GROW_MAX ahead of need; the window restarts every
 * peak-reset-time (5 s, DEBUG REPLYBUFFER changes it). Only an empty ring
 * is resized, so nothing is copied.
 */
#include "outbuf.h"
#include "aside.h"
#include "client_evict.h"
#include "event.h"
#include "outlimit.h"
#include "server.h"
#include "tls.h"
#include "zmalloc.h"
#include <errno.h>
#include <limits.h>
#include <string.h>
#include <sys/uio.h>

#define FLUSH_IOV 128                 /* iovecs per writev */
#define RING_KEEP_MIN 1024            /* an idle client's ring (Redis's PROTO_REPLY_MIN_BYTES) */
#define RING_GROW_MAX (16 * 1024)     /* the cron grows a ring ahead of need up to this */
#define HOLD_MAX_BYTES (16 * 1024)    /* replies held while a big argument arrives: at most this much */
#define RING_DRAIN_FREE (2u << 20)    /* a ring above this (more than a pass's budget: one huge
                                       * reply) is given back when a flush empties it */

typedef struct outref {
    size_t gap;                       /* ring bytes to send before this reference */
    const char *p;                    /* next byte to send */
    size_t len;                       /* bytes left */
    dnode *node;                      /* the pinned node p points into, or NULL: p is in own */
    char *own;                        /* private copy after an unpin */
} outref;

typedef struct outrefs {
    outref *v;
    int first, n, cap;                /* pending: v[first .. n) */
    size_t gapsum;                    /* ring bytes that precede the last reference */
    client *c;
    struct outrefs *prev, *next;      /* OB.holders */
} outrefs;

typedef struct pin { dnode *node; uint32_t refs; } pin;

static struct {
    pin *pins;                        /* open addressing, linear probing */
    size_t pins_cap, npins;           /* cap a power of two (or 0) */
    outrefs *holders;                 /* clients with an outrefs */
    long long peak_reset_ms;          /* -1: never */
    int resizing;
} OB = {.peak_reset_ms = OUTBUF_PEAK_RESET_DEFAULT_MS, .resizing = 1};

/* ---- the pin table ---------------------------------------------------------- */

static size_t pin_slot(dnode *n) {
    uint64_t h = (uint64_t)(uintptr_t)n * 0x9E3779B97F4A7C15ull;
    return (size_t)(h >> 32) & (OB.pins_cap - 1);
}

static pin *pin_find(dnode *n) {
    if (!OB.pins_cap) return NULL;
    for (size_t i = pin_slot(n);; i = (i + 1) & (OB.pins_cap - 1)) {
        if (OB.pins[i].node == n) return &OB.pins[i];
        if (!OB.pins[i].node) return NULL;
    }
}

static void pin_put(dnode *n, uint32_t refs) {
    size_t i = pin_slot(n);
    while (OB.pins[i].node) i = (i + 1) & (OB.pins_cap - 1);
    OB.pins[i] = (pin){n, refs};
}

static void pins_grow(void) {
    pin *old = OB.pins;
    size_t oldcap = OB.pins_cap;
    OB.pins_cap = oldcap ? oldcap * 2 : 64;
    OB.pins = zcalloc(OB.pins_cap * sizeof(pin));
    for (size_t i = 0; i < oldcap; i++)
        if (old[i].node) pin_put(old[i].node, old[i].refs);
    zfree(old);
}

/* Remove slot i, moving later entries of its probe run back (no tombstones). */
static void pin_remove(pin *p) {
    size_t mask = OB.pins_cap - 1, i = (size_t)(p - OB.pins);
    OB.pins[i].node = NULL;
    OB.npins--;
    for (size_t j = (i + 1) & mask; OB.pins[j].node; j = (j + 1) & mask) {
        pin e = OB.pins[j];
        OB.pins[j].node = NULL;
        pin_put(e.node, e.refs);
    }
}

static void pin_node(dnode *n) {
    pin *p = pin_find(n);
    if (p) {
        p->refs++;
        return;
    }
    if ((OB.npins + 1) * 2 > OB.pins_cap) pins_grow();
    pin_put(n, 1);
    OB.npins++;
    n->flags |= DN_PINNED;
}

static void unpin_one(dnode *n) {
    pin *p = pin_find(n);
    if (p && --p->refs == 0) {
        pin_remove(p);
        n->flags &= ~DN_PINNED;
    }
}

/* ---- references --------------------------------------------------------------- */

static outrefs *refs_of(client *c) {
    if (c->refs) return c->refs;
    outrefs *r = zcalloc(sizeof *r);
    r->c = c;
    r->next = OB.holders;
    if (OB.holders) OB.holders->prev = r;
    OB.holders = r;
    c->refs = r;
    return r;
}

static outref *push_ref(outrefs *r) {
    if (r->n == r->cap) {
        if (r->first > 0) {
            memmove(r->v, r->v + r->first, (size_t)(r->n - r->first) * sizeof(outref));
            r->n -= r->first;
            r->first = 0;
        } else {
            r->cap = r->cap ? r->cap * 2 : 8;
            r->v = zrealloc(r->v, (size_t)r->cap * sizeof(outref));
        }
    }
    return &r->v[r->n++];
}

/* The reference at the front has been sent. */
static void pop_ref(outrefs *r) {
    outref *f = &r->v[r->first++];
    if (f->node) unpin_one(f->node);
    zfree(f->own);
    if (r->first == r->n) r->first = r->n = 0;
}

int outbuf_stage_ref(client *c, dnode *node, const char *p, size_t n) {
    if (n < OUTBUF_REF_MIN || c->fd < 0) return 0;
    if (client_check_output_limits_extra(c, n)) return -1;
    outrefs *r = refs_of(c);
    outref *f = push_ref(r);
    f->gap = ring_used(&c->out) - r->gapsum;
    f->p = p;
    f->len = n;
    f->node = node;
    f->own = NULL;
    r->gapsum += f->gap;
    c->out_ref_bytes += n;
    pin_node(node);
    clients_memory_grew(); /* client eviction counts it */
    return 1;
}

/* Every reference into n gets its own copy of what it has not sent. */
static void unpin(dnode *n) {
    for (outrefs *r = OB.holders; r; r = r->next) {
        for (int i = r->first; i < r->n; i++) {
            outref *f = &r->v[i];
            if (f->node != n) continue;
            f->own = zmalloc(f->len ? f->len : 1);
            memcpy(f->own, f->p, f->len);
            f->p = f->own;
            f->node = NULL;
        }
    }
    pin *p = pin_find(n);
    if (p) pin_remove(p);
    n->flags &= ~DN_PINNED;
}

static void unpin_all(void) {
    for (size_t i = 0; OB.npins && i < OB.pins_cap; i++) {
        if (!OB.pins[i].node) continue;
        unpin(OB.pins[i].node);
        i = (size_t)-1; /* removal moves entries: rescan (few pins, rare call) */
    }
}

void outbuf_init(void) {
    dn_unpin_hook = unpin;
    dn_unpin_all_hook = unpin_all;
}

void outbuf_release(client *c) {
    outrefs *r = c->refs;
    if (!r) return;
    while (r->first < r->n) pop_ref(r);
    if (r->prev) r->prev->next = r->next;
    else OB.holders = r->next;
    if (r->next) r->next->prev = r->prev;
    zfree(r->v);
    zfree(r);
    c->refs = NULL;
    c->out_ref_bytes = 0;
}


/* ---- the flush ------------------------------------------------------------------- */

/* Append to iov the ring bytes [off, off + len) counted from the oldest
 * unsent one; the ring's pending bytes are rv[0..rn). */
static int ring_slice(const struct iovec *rv, int rn, size_t off, size_t len, struct iovec *iov) {
    int k = 0;
    for (int i = 0; i < rn && len; i++) {
        size_t l = rv[i].iov_len;
        if (off >= l) {
            off -= l;
            continue;
        }
        size_t take = l - off < len ? l - off : len;
        iov[k++] = (struct iovec){(char *)rv[i].iov_base + off, take};
        off = 0;
        len -= take;
    }
    return k;
}

/* The iovecs of c's output in order: gaps of the ring and references. */
static int build_iov(client *c, struct iovec *iov) {
    struct iovec rv[2];
    int rn = ring_iov(&c->out, rv), k = 0;
    size_t roff = 0;
    outrefs *r = c->refs;
    for (int i = r->first; i < r->n && k + 3 <= FLUSH_IOV; i++) {
        const outref *f = &r->v[i];
        k += ring_slice(rv, rn, roff, f->gap, iov + k);
        roff += f->gap;
        if (f->len) iov[k++] = (struct iovec){(void *)f->p, f->len};
    }
    if (r->first == r->n || k + 3 <= FLUSH_IOV) k += ring_slice(rv, rn, roff, ring_used(&c->out) - roff, iov + k);
    return k;
}

/* n bytes were written: advance through gaps and references in order. */
static void consume(client *c, size_t n) {
    outrefs *r = c->refs;
    while (n && r->first < r->n) {
        outref *f = &r->v[r->first];
        size_t g = f->gap < n ? f->gap : n;
        ring_consume(&c->out, g);
        f->gap -= g;
        r->gapsum -= g;
        n -= g;
        if (f->gap) break;
        size_t t = f->len < n ? f->len : n;
        f->p += t;
        f->len -= t;
        c->out_ref_bytes -= t;
        n -= t;
        if (f->len == 0) pop_ref(r);
        else break;
    }
    if (n) ring_consume(&c->out, n);
}

static int flush_iov(client *c, struct iovec *iov, int cnt, int stream) {
    if (client_write_barrier) client_write_barrier();
    size_t staged = client_out_used(c); /* the output is fullest just before a flush */
    if (staged > c->out_peak) {
        c->out_peak = staged;
        if (staged > srv.stats.out_high_water) srv.stats.out_high_water = staged;
    }
    ssize_t n = c->tls ? tls_writev(c->tls, iov, cnt) : writev(c->fd, iov, cnt);
    srv.stats.writes++;
    if (n < 0) {
        if (errno == EAGAIN || errno == EINTR) return 0;
        server_log(LOG_VERBOSE_, "Error writing to client: %s", strerror(errno));
        client_free(c);
        return -1;
    }
    srv.stats.net_output_bytes += (uint64_t)n;
    if (stream) rb_consume(&c->stream, (size_t)n);
    else if (c->refs) consume(c, (size_t)n);
    else ring_consume(&c->out, (size_t)n);
    return 0;
}

/* One writev: of the ring and references, or once they are sent, of a
 * replica's stream from the shared replication buffer's own blocks.
 * Returns -1 if the client was freed. */
static int client_write(client *c) {
    struct iovec iov[FLUSH_IOV];
    int cnt = c->out_ref_bytes ? build_iov(c, iov) : ring_iov(&c->out, iov);
    if (cnt) return flush_iov(c, iov, cnt, 0);
    cnt = c->stream.rb ? rb_iov(&c->stream, iov, FLUSH_IOV) : 0;
    return cnt ? flush_iov(c, iov, cnt, 1) : 0;
}

static void client_writable(evloop *el, int fd, void *data, int mask);

static void after_write(client *c) {
    if (client_out_used(c) == 0) {
        if (c->flags & CF_CLOSE_AFTER_REPLY) {
            client_free(c);
            return;
        }
        if (ev_get_mask(srv.el, c->fd) & EV_WRITABLE) ev_del(srv.el, c->fd, EV_WRITABLE);
        if (c->out.cap > RING_DRAIN_FREE) ring_set_capacity(&c->out, 0);
    } else if (!(ev_get_mask(srv.el, c->fd) & EV_WRITABLE)) {
        ev_add(srv.el, c->fd, EV_WRITABLE, client_writable, c);
    }
}

static void client_writable(evloop *el, int fd, void *data, int mask) {
    (void)el;
    (void)fd;
    (void)mask;
    client *c = data;
    if (client_write(c) == -1) return;
    after_write(c);
}

int outbuf_flush_client(client *c) {
    if (client_write(c) == -1) return -1;
    after_write(c);
    return 0;
}

/* Whether c's replies may wait for the big argument it is sending (see the
 * top). *now is the monotonic time in ms, read here when first needed;
 * *left is lowered to the ms before a held client must be written. */
static int hold_replies(client *c, int64_t *now, long *left) {
    if (!srv.cfg.reply_hold_ms || !aside_filling(c) || (c->flags & CF_CLOSE_ASAP) ||
        client_out_used(c) > HOLD_MAX_BYTES)
        return 0;
    if (!*now) *now = ev_mono_us() / 1000;
    if (!c->held_since_ms) c->held_since_ms = *now;
    long rest = (long)(c->held_since_ms + srv.cfg.reply_hold_ms - *now);
    if (rest <= 0) return 0;
    if (*left < 0 || rest < *left) *left = rest;
    return 1;
}

long clients_flush_pending(void) {
    client *held = NULL;
    long left = -1;
    int64_t now = 0;
    while (srv.pending_write) {
        client *c = srv.pending_write;
        srv.pending_write = c->next_pending;
        if (hold_replies(c, &now, &left)) {
            c->next_pending = held; /* stays CF_PENDING_WRITE */
            held = c;
            continue;
        }
        c->held_since_ms = 0;
        c->flags &= ~CF_PENDING_WRITE;
        if (c->flags & CF_CLOSE_ASAP) continue;
        if (c->fd < 0 || c->out_held) continue;
        if (ev_get_mask(srv.el, c->fd) & EV_WRITABLE) continue; /* the writable handler owns it */
        outbuf_flush_client(c);
    }
    srv.pending_write = held;
    return left;
}

/* ---- sizing ---------------------------------------------------------------------- */

static size_t pow2_at_least(size_t n) {
    size_t p = RING_KEEP_MIN;
    while (p < n) p <<= 1;
    return p;
}

void outbuf_cron(client *c) {
    if (OB.resizing && ring_used(&c->out) == 0 && !c->out_ref_bytes) {
        size_t cap = c->out.cap, peak = (size_t)c->out_peak;
        if (cap > RING_KEEP_MIN && peak < cap / 2) {
            ring_set_capacity(&c->out, pow2_at_least(peak + 1));
        } else if (cap && cap < RING_GROW_MAX && peak >= cap) {
            ring_set_capacity(&c->out, cap * 2);
        }
    }
    if (c->refs && c->refs->first == c->refs->n) outbuf_release(c);
    if (OB.peak_reset_ms >= 0 && srv.now_ms - c->out_peak_since_ms >= OB.peak_reset_ms) {
        c->out_peak = client_out_used(c);
        c->out_peak_since_ms = srv.now_ms;
    }
}

void outbuf_set_peak_reset_time(long long ms) { OB.peak_reset_ms = ms < 0 ? -1 : ms; }
void outbuf_set_resizing(int on) { OB.resizing = on; }
