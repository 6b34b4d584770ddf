/* replbuf.c - the shared replication buffer (see replbuf.h).
 *
 * Why one buffer. Each replica used to get its own copy of the stream in
 * its output ring, next to the backlog's copy in a byte ring: with two
 * replicas every replicated byte was copied three times and held three
 * times, and a replica waiting for its snapshot piled the stream up in a
 * ring of its own. Now the stream is copied once, into blocks, and the
 * backlog and the replicas are positions in the same blocks. Memory is
 * the stream from the slowest reader (or the history kept, whichever is
 * older) to the end, whatever the number of replicas.
 *
 * Blocks are appended whole and dropped whole from the head, so a
 * reader's (block, pos) stays valid until the reader moves on: a block a
 * reader is in is never dropped.
 */
#include "replbuf.h"
#include "zmalloc.h"
#include <string.h>

static rb_block *block_new(replbuf *rb, size_t size, long long off) {
    rb_block *b = zmalloc(sizeof *b + size);
    b->next = NULL;
    b->off = off;
    b->size = size;
    b->used = 0;
    b->readers = 0;
    rb->mem += sizeof *b + size;
    rb->nblocks++;
    return b;
}

static void block_free(replbuf *rb, rb_block *b) {
    rb->mem -= sizeof *b + b->size;
    rb->nblocks--;
    zfree(b);
}

void rb_init(replbuf *rb, size_t limit, long long next) {
    rb->mem = rb->nblocks = 0;
    rb->limit = limit;
    rb->head = rb->tail = block_new(rb, RB_BLOCK_DATA, next);
}

void rb_free(replbuf *rb) {
    for (rb_block *b = rb->head, *nx; b; b = nx) {
        nx = b->next;
        block_free(rb, b);
    }
    rb->head = rb->tail = NULL;
}

void rb_trim(replbuf *rb) {
    while (rb->head != rb->tail && !rb->head->readers && rb_histlen(rb) - rb->head->used >= rb->limit) {
        rb_block *b = rb->head;
        rb->head = b->next;
        block_free(rb, b);
    }
}

void rb_feed(replbuf *rb, const char *p, size_t n) {
    rb_block *t = rb->tail;
    size_t room = t->size - t->used, a = n < room ? n : room;
    memcpy(t->data + t->used, p, a);
    t->used += a;
    if (a == n) return;
    rb_block *b = block_new(rb, n - a > RB_BLOCK_DATA ? n - a : RB_BLOCK_DATA, t->off + (long long)t->used);
    memcpy(b->data, p + a, n - a);
    b->used = n - a;
    t->next = b;
    rb->tail = b;
    rb_trim(rb);
}

void rb_set_limit(replbuf *rb, size_t limit) {
    rb->limit = limit;
    rb_trim(rb);
}

/* ---- readers ------------------------------------------------------------------ */

static void place(rb_reader *r, replbuf *rb, rb_block *b, size_t pos) {
    r->rb = rb;
    r->b = b;
    r->pos = pos;
    b->readers++;
}

int rb_attach(rb_reader *r, replbuf *rb, long long off) {
    if (!rb_covers(rb, off)) return -1;
    rb_block *b = rb->head;
    while (b != rb->tail && off >= b->off + (long long)b->used) b = b->next;
    place(r, rb, b, (size_t)(off - b->off));
    return 0;
}

void rb_attach_as(rb_reader *dst, const rb_reader *src) { place(dst, src->rb, src->b, src->pos); }

void rb_detach(rb_reader *r) {
    if (!r->rb) return;
    r->b->readers--;
    rb_trim(r->rb);
    r->rb = NULL;
    r->b = NULL;
    r->pos = 0;
}

int rb_iov(const rb_reader *r, struct iovec *iov, int max) {
    int k = 0;
    size_t pos = r->pos;
    for (const rb_block *b = r->b; b && k < max; b = b->next, pos = 0)
        if (b->used > pos) iov[k++] = (struct iovec){(void *)(b->data + pos), b->used - pos};
    return k;
}

void rb_consume(rb_reader *r, size_t n) {
    rb_block *b = r->b;
    int left_head = 0;
    for (;;) {
        size_t t = b->used - r->pos < n ? b->used - r->pos : n;
        r->pos += t;
        n -= t;
        if (r->pos < b->used || !b->next) break;
        left_head |= b == r->rb->head;
        b->readers--;
        b = b->next;
        b->readers++;
        r->b = b;
        r->pos = 0;
    }
    if (left_head) rb_trim(r->rb);
}
