/* ring.c - growable output ring (see ring.h). Capacity is a power of two so
 * wrap-around is a mask; growth doubles the buffer in place (see ring_grow).
 * Replies are never dropped. */
#include "ring.h"
#include "zmalloc.h"
#include <string.h>

#define RING_MIN_CAP 1024

void ring_init(ring *r) { memset(r, 0, sizeof *r); }

void ring_free(ring *r) {
    zfree(r->buf);
    ring_init(r);
}

/* Grows in place with realloc, which for a large buffer remaps its pages
 * rather than copying them (glibc's mremap), then mends a wrap-around by
 * moving the smaller of its two runs: the run at the start goes just past
 * the old end, or the run at the old end goes to the new end. So growing a
 * ring of hundreds of megabytes costs at most half its bytes, usually far
 * less, instead of all of them. */
static void ring_grow(ring *r, size_t need) {
    size_t old = r->cap;
    size_t cap = old ? old : RING_MIN_CAP;
    while (cap - r->used < need) cap <<= 1;
    r->buf = zrealloc(r->buf, cap);
    r->cap = cap;
    if (r->used == 0) {
        r->head = r->tail = 0;
    } else if (r->head == 0) {
        r->head = old; /* the data ended exactly at the old end: it now continues there */
    } else if (r->head <= r->tail) { /* wrapped: [tail, old) then [0, head) */
        size_t end_run = old - r->tail;
        if (r->head <= end_run) {
            memcpy(r->buf + old, r->buf, r->head);
            r->head = (old + r->head) & (cap - 1);
        } else {
            memcpy(r->buf + cap - end_run, r->buf + r->tail, end_run);
            r->tail = cap - end_run;
        }
    }
}

int ring_reserve(ring *r, size_t n) {
    if (r->cap - r->used < n) ring_grow(r, n);
    return 0;
}

void ring_append(ring *r, const void *p, size_t n) {
    if (n == 0) return; /* buf may still be NULL: no memcpy(NULL + 0, ...) */
    if (r->cap - r->used < n) ring_grow(r, n);
    const char *s = p;
    size_t first = r->cap - r->head;
    if (first >= n) {
        memcpy(r->buf + r->head, s, n);
    } else {
        memcpy(r->buf + r->head, s, first);
        memcpy(r->buf, s + first, n - first);
    }
    r->head = (r->head + n) & (r->cap - 1);
    r->used += n;
}

int ring_iov(const ring *r, struct iovec iov[2]) {
    if (r->used == 0) return 0;
    if (r->tail < r->head) {
        iov[0].iov_base = r->buf + r->tail;
        iov[0].iov_len = r->used;
        return 1;
    }
    iov[0].iov_base = r->buf + r->tail;
    iov[0].iov_len = r->cap - r->tail;
    if (r->head == 0) return 1;
    iov[1].iov_base = r->buf;
    iov[1].iov_len = r->head;
    return 2;
}

void ring_consume(ring *r, size_t n) {
    r->used -= n;
    if (r->used == 0) {
        r->head = r->tail = 0;
    } else {
        r->tail = (r->tail + n) & (r->cap - 1);
    }
}

void ring_set_capacity(ring *r, size_t cap) {
    if (r->used) return;
    zfree(r->buf);
    r->buf = cap ? zmalloc(cap) : NULL;
    r->cap = cap;
    r->head = r->tail = 0;
}
