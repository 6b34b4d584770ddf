/* ring.h - growable byte ring for a connection's staged replies.
 *
 * Replies are appended at head and written from tail with at most two iovecs
 * (the ring may wrap). When full, the ring grows (power-of-two capacity,
 * reallocated in place); it never drops bytes. The caller enforces limits.
 */
#ifndef FERRY_RING_H
#define FERRY_RING_H

#include <stddef.h>
#include <sys/uio.h>

typedef struct ring {
    char *buf;
    size_t cap;     /* power of two, or 0 */
    size_t head;    /* next write position */
    size_t tail;    /* next read position */
    size_t used;
} ring;

void ring_init(ring *r);
void ring_free(ring *r);
/* Make room for n more bytes (grows if needed). 0 ok, -1 out of memory. */
int ring_reserve(ring *r, size_t n);
/* Append n bytes; grows as needed. */
void ring_append(ring *r, const void *p, size_t n);
/* Fill up to 2 iovecs with pending data; returns count. */
int ring_iov(const ring *r, struct iovec iov[2]);
/* Mark n bytes as written. */
void ring_consume(ring *r, size_t n);
/* An empty ring takes exactly cap bytes (a power of two, or 0); a ring
 * holding data is left alone. */
void ring_set_capacity(ring *r, size_t cap);
static inline size_t ring_used(const ring *r) { return r->used; }

/* Fast path: contiguous space for n bytes at head, or NULL (then use ring_append). */
static inline char *ring_write_ptr(ring *r, size_t n) {
    if (r->cap - r->used < n) return NULL;
    if (r->head >= r->tail || r->used == 0) {
        if (r->cap - r->head >= n) return r->buf + r->head;
        return NULL;
    }
    return r->buf + r->head; /* head < tail: free space is [head, tail) which is >= n */
}
static inline void ring_commit(ring *r, size_t n) {
    r->head = (r->head + n) & (r->cap - 1);
    r->used += n;
}

#endif
