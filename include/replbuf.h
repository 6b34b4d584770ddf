/* replbuf.h - the shared replication buffer: the replication stream kept
 * once, in a list of blocks, for the backlog and for every replica.
 *
 * Offsets are those of the stream: the first byte fed after rb_init(.., next)
 * has offset `next`, and so on. The buffer holds the bytes [first, end).
 *
 * Readers. A replica's output is not a copy of the stream in its own ring:
 * it is a reader, a position (block, byte) in this buffer. Its socket is
 * written from the blocks themselves (rb_iov), and a reader that has sent
 * a block moves to the next (rb_consume). A block counts the readers
 * positioned in it.
 *
 * History. The oldest block is dropped once no reader is in it and the
 * blocks after it still hold at least `limit` bytes (repl-backlog-size).
 * So the backlog holds at least `limit` bytes of history when the stream
 * has had that many, up to about two blocks more (the oldest is dropped
 * when a feed starts a new block, as Redis trims), and more when a slow reader
 * still needs older bytes: those stay for partial resyncs too, as Redis
 * 7's backlog outgrows its configured size for a lagging replica.
 *
 * Pure: no server state, unit-tested (tests/unit/test_replbuf.c).
 */
#ifndef FERRY_REPLBUF_H
#define FERRY_REPLBUF_H

#include <stddef.h>
#include <stdint.h>
#include <sys/uio.h>

/* Bytes of a block's data (a bigger write gets a block of its size). */
#define RB_BLOCK_DATA (16 * 1024)

typedef struct rb_block {
    struct rb_block *next;
    long long off;              /* stream offset of data[0] */
    size_t size, used;
    uint32_t readers;           /* readers positioned in this block */
    char data[];
} rb_block;

typedef struct replbuf {
    rb_block *head, *tail;      /* never empty: an empty buffer has one empty block */
    size_t limit;               /* history kept for partial resyncs (repl-backlog-size) */
    size_t mem;                 /* bytes allocated for blocks (INFO mem_total_replication_buffers) */
    size_t nblocks;
} replbuf;

typedef struct rb_reader {
    replbuf *rb;                /* NULL: not attached */
    rb_block *b;
    size_t pos;                 /* next byte to send: b->data[pos] */
} rb_reader;

/* An empty buffer whose first byte will have offset `next`. */
void rb_init(replbuf *rb, size_t limit, long long next);
/* Free every block; every reader must have been detached. */
void rb_free(replbuf *rb);
void rb_feed(replbuf *rb, const char *p, size_t n);
/* Change the history kept (trims at once when it shrank). */
void rb_set_limit(replbuf *rb, size_t limit);
/* Drop the oldest blocks no reader needs beyond the history kept. */
void rb_trim(replbuf *rb);

static inline long long rb_first(const replbuf *rb) { return rb->head->off; }
static inline long long rb_end(const replbuf *rb) { return rb->tail->off + (long long)rb->tail->used; }
static inline size_t rb_histlen(const replbuf *rb) { return (size_t)(rb_end(rb) - rb_first(rb)); }
/* Can a reader start at offset off (the next byte it needs)? */
static inline int rb_covers(const replbuf *rb, long long off) { return off >= rb_first(rb) && off <= rb_end(rb); }

/* Position r at offset off, which must be covered (0), else -1. */
int rb_attach(rb_reader *r, replbuf *rb, long long off);
/* Position dst where src is (src attached). */
void rb_attach_as(rb_reader *dst, const rb_reader *src);
/* Leave the buffer (nothing if not attached); the blocks only r needed go. */
void rb_detach(rb_reader *r);

static inline long long rb_reader_off(const rb_reader *r) { return r->b->off + (long long)r->pos; }
/* Bytes from r's position to the end (0 if not attached). */
static inline size_t rb_pending(const rb_reader *r) { return r->rb ? (size_t)(rb_end(r->rb) - rb_reader_off(r)) : 0; }
/* The pending bytes as at most max iovecs, in order; returns how many. */
int rb_iov(const rb_reader *r, struct iovec *iov, int max);
/* n of the pending bytes were sent (n <= rb_pending). */
void rb_consume(rb_reader *r, size_t n);

#endif
