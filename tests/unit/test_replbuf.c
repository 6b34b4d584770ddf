/* test_replbuf.c - Criterion unit tests for src/base/replbuf.c (the shared
 * replication buffer: the stream in a list of blocks, with readers).
 *
 * Why: every replica is sent the blocks themselves (rb_iov), and a partial
 * resync starts a reader at an old offset of the same blocks. If a block
 * loses, repeats or reorders a byte at a block boundary, if a reader's
 * iovecs skip or repeat a block, if a block a reader is in is dropped
 * (use after free), or if the buffer claims to cover an offset it has
 * dropped, a replica silently applies a corrupt stream and diverges. And if
 * the trim keeps too little, partial resyncs fail; too much, memory grows
 * without bound. The tests compare the buffer with a plain model (every
 * byte ever fed, by stream offset: pat(off)): the block list's shape and
 * memory accounting, feeds of every size around a block, every offset
 * covered and not, the history kept with and without readers, readers
 * consuming in chunks of every size across block boundaries, detaching,
 * limit changes both ways, and a long random program with several readers
 * checked after every step against the invariants the code really keeps.
 */
#include <criterion/criterion.h>

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "frand.h"
#include "replbuf.h"

#define BD ((size_t)RB_BLOCK_DATA)
#define HDR sizeof(rb_block)
#define HUGE_LIMIT ((size_t)1 << 40)

static unsigned char pat(long long off) { return (unsigned char)((off * 131 + (off >> 8) * 7 + 1) & 0xff); }

static void feed_pattern(replbuf *rb, long long *next, size_t n) {
    unsigned char *buf = malloc(n ? n : 1);
    cr_assert_not_null(buf);
    for (size_t i = 0; i < n; i++) buf[i] = pat(*next + (long long)i);
    rb_feed(rb, (const char *)buf, n);
    *next += (long long)n;
    free(buf);
}

/* The block list is well formed and the counters agree with it: blocks
 * follow one another without a gap, every block but the tail is full and
 * not empty, a block bigger than RB_BLOCK_DATA was made for one write (so is
 * full), only an empty buffer has an empty block, and mem and nblocks are
 * the sums over the list. With data, every byte held is the pattern. */
static void check_blocks(const replbuf *rb, int with_data) {
    size_t n = 0, mem = 0;
    const rb_block *last = NULL;
    cr_assert_not_null(rb->head);
    for (const rb_block *b = rb->head; b; b = b->next) {
        n++;
        mem += HDR + b->size;
        cr_assert_geq(b->size, BD, "block at %lld: size %zu", b->off, b->size);
        cr_assert_leq(b->used, b->size);
        if (b->size > BD) cr_assert_eq(b->used, b->size, "big block at %lld not full", b->off);
        if (b->next) {
            cr_assert_eq(b->used, b->size, "non-tail block at %lld holds %zu of %zu", b->off, b->used, b->size);
            cr_assert_eq(b->next->off, b->off + (long long)b->used, "gap after the block at %lld", b->off);
        }
        if (!b->used) cr_assert(b == rb->head && b == rb->tail, "empty block at %lld", b->off);
        if (with_data)
            for (size_t i = 0; i < b->used; i++)
                cr_assert_eq((unsigned char)b->data[i], pat(b->off + (long long)i), "byte at offset %lld",
                             b->off + (long long)i);
        last = b;
    }
    cr_assert_eq(last, rb->tail);
    cr_assert_eq(n, rb->nblocks, "%zu blocks in the list, nblocks %zu", n, rb->nblocks);
    cr_assert_eq(mem, rb->mem, "%zu bytes of blocks in the list, mem %zu", mem, rb->mem);
}

/* The block holding offset at (the tail for rb_end). */
static const rb_block *block_of(const replbuf *rb, long long at) {
    for (const rb_block *b = rb->head; b; b = b->next)
        if (at < b->off + (long long)b->used || b == rb->tail) return b;
    return NULL;
}

static int in_list(const replbuf *rb, const rb_block *x) {
    for (const rb_block *b = rb->head; b; b = b->next)
        if (b == x) return 1;
    return 0;
}

/* r is attached, its offset covered, its block still in the list; its
 * pending bytes are end - offset, and rb_iov gives, in order, each block's
 * bytes from r's offset to the end exactly: one iovec per block (no empty
 * one), each pointing into the block at the right place. With full, every
 * pending byte is also compared with the pattern. */
static void check_reader(const rb_reader *r, int full) {
    const replbuf *rb = r->rb;
    cr_assert_not_null(rb, "reader not attached");
    cr_assert(in_list(rb, r->b), "reader's block is not in the list");
    cr_assert_leq(r->pos, r->b->used);
    long long off = rb_reader_off(r);
    cr_assert(rb_covers(rb, off), "reader at %lld, buffer [%lld, %lld]", off, rb_first(rb), rb_end(rb));
    cr_assert_eq(rb_pending(r), (size_t)(rb_end(rb) - off));
    int max = (int)rb->nblocks + 2;
    struct iovec *iov = malloc(sizeof *iov * (size_t)max);
    cr_assert_not_null(iov);
    int k = rb_iov(r, iov, max);
    cr_assert_leq(k, (int)rb->nblocks);
    long long at = off;
    for (int i = 0; i < k; i++) {
        const rb_block *b = block_of(rb, at);
        cr_assert_gt(iov[i].iov_len, 0, "empty iovec %d", i);
        cr_assert_eq((const char *)iov[i].iov_base, b->data + (at - b->off), "iovec %d for offset %lld", i, at);
        cr_assert_eq(iov[i].iov_len, b->used - (size_t)(at - b->off), "iovec %d for offset %lld", i, at);
        const unsigned char *p = iov[i].iov_base;
        if (full)
            for (size_t j = 0; j < iov[i].iov_len; j++)
                cr_assert_eq(p[j], pat(at + (long long)j), "byte at offset %lld", at + (long long)j);
        at += (long long)iov[i].iov_len;
    }
    cr_assert_eq(at, rb_end(rb), "iovecs end at %lld, buffer at %lld", at, rb_end(rb));
    free(iov);
}

/* Each block counts the readers of rs positioned in it. */
static void check_counts(const replbuf *rb, const rb_reader *rs, int n) {
    for (const rb_block *b = rb->head; b; b = b->next) {
        uint32_t c = 0;
        for (int i = 0; i < n; i++)
            if (rs[i].rb && rs[i].b == b) c++;
        cr_assert_eq(b->readers, c, "block at %lld counts %u readers, %u are in it", b->off, b->readers, c);
    }
}

/* Attach a reader at every covered offset and check what it would be sent;
 * offsets just outside are refused and leave the reader detached. A pin at
 * rb_first keeps the buffer still while the probe attaches and detaches
 * (rb_detach trims); the pin's own detach may then trim. */
static void check_every_offset(replbuf *rb) {
    check_blocks(rb, 1);
    rb_reader pin = {0};
    const uint32_t head_readers = rb->head->readers;
    cr_assert_eq(rb_attach(&pin, rb, rb_first(rb)), 0);
    cr_assert_eq(pin.b, rb->head);
    cr_assert_eq(rb->head->readers, head_readers + 1);
    for (long long off = rb_first(rb); off <= rb_end(rb); off++) {
        rb_reader r = {0};
        cr_assert_eq(rb_attach(&r, rb, off), 0, "offset %lld refused, buffer [%lld, %lld]", off, rb_first(rb),
                     rb_end(rb));
        cr_assert_eq(rb_reader_off(&r), off);
        /* a reader is placed where its next byte is, not at the end of the block before */
        if (off < rb_end(rb)) cr_assert_lt(r.pos, r.b->used);
        check_reader(&r, 0);
        rb_detach(&r);
        cr_assert_null(r.rb);
    }
    rb_reader r = {0};
    cr_assert_not(rb_covers(rb, rb_first(rb) - 1));
    cr_assert_not(rb_covers(rb, rb_end(rb) + 1));
    cr_assert_eq(rb_attach(&r, rb, rb_first(rb) - 1), -1);
    cr_assert_null(r.rb);
    cr_assert_eq(rb_attach(&r, rb, rb_end(rb) + 1), -1);
    cr_assert_null(r.rb);
    cr_assert_eq(rb_pending(&r), 0);
    cr_assert_eq(pin.b, rb->head);
    cr_assert_eq(rb->head->readers, head_readers + 1, "the probes' counts were not undone");
    rb_detach(&pin);
    check_blocks(rb, 0);
}

/* After an operation that ran rb_trim: nothing more could be dropped. */
static void check_trimmed(const replbuf *rb) {
    cr_assert(rb->head == rb->tail || rb->head->readers || rb_histlen(rb) - rb->head->used < rb->limit,
              "head at %lld (%zu bytes, %u readers) could be dropped: histlen %zu, limit %zu", rb->head->off,
              rb->head->used, rb->head->readers, rb_histlen(rb), rb->limit);
}

/* At any time: the last trim ran when the tail block was made (or later),
 * and since then only the tail has grown, so a head no reader is in stays
 * only while the blocks after it, but for the tail, hold under limit.
 * (So without readers the history is under limit + the head block right
 * after a feed that made a block, but between such feeds it can reach
 * almost limit + two blocks: limit BD + 100, feeds of BD, BD, 1, BD - 1
 * keep all 3 * BD bytes. The trim runs only when a block is added, as in
 * Redis 7's feedReplicationBuffer.) */
static void check_not_overkept(const replbuf *rb) {
    cr_assert(rb->head == rb->tail || rb->head->readers ||
                  rb_histlen(rb) - rb->head->used - rb->tail->used < rb->limit,
              "head at %lld (%zu bytes) kept: histlen %zu, tail %zu, limit %zu", rb->head->off, rb->head->used,
              rb_histlen(rb), rb->tail->used, rb->limit);
}

/* The block offsets before an operation, to check that rb_first only ever
 * moves to one of them. A feed may make a new block (and trim up to it):
 * its offset, the end of the tail block when full, is one more. */
static long long *block_offs(const replbuf *rb, size_t *n) {
    long long *o = malloc(sizeof *o * (rb->nblocks + 1));
    cr_assert_not_null(o);
    size_t k = 0;
    for (const rb_block *b = rb->head; b; b = b->next) o[k++] = b->off;
    o[k++] = rb->tail->off + (long long)rb->tail->size;
    *n = k;
    return o;
}

static int among(const long long *o, size_t n, long long x) {
    for (size_t i = 0; i < n; i++)
        if (o[i] == x) return 1;
    return 0;
}

/* ---- the empty buffer and the block layout ------------------------------------ */

Test(replbuf, empty_covers_only_its_start) {
    replbuf rb;
    rb_init(&rb, 1000, 5);
    cr_assert_eq(rb_first(&rb), 5);
    cr_assert_eq(rb_end(&rb), 5);
    cr_assert_eq(rb_histlen(&rb), 0);
    cr_assert(rb_covers(&rb, 5));
    cr_assert_not(rb_covers(&rb, 4));
    cr_assert_not(rb_covers(&rb, 6));
    cr_assert_eq(rb.nblocks, 1);
    cr_assert_eq(rb.head, rb.tail);
    cr_assert_eq(rb.head->size, BD);
    cr_assert_eq(rb.head->used, 0);
    cr_assert_gt(rb.mem, 0);
    cr_assert_eq(rb.mem, HDR + BD);
    check_blocks(&rb, 1);

    rb_reader r = {0};
    cr_assert_eq(rb_pending(&r), 0, "a detached reader has nothing pending");
    rb_detach(&r); /* not attached: nothing */
    cr_assert_null(r.rb);
    cr_assert_eq(rb_attach(&r, &rb, 4), -1);
    cr_assert_null(r.rb);
    cr_assert_eq(rb_attach(&r, &rb, 6), -1);
    cr_assert_null(r.rb);
    cr_assert_eq(rb.head->readers, 0);
    cr_assert_eq(rb_attach(&r, &rb, 5), 0);
    cr_assert_eq(r.rb, &rb);
    cr_assert_eq(r.b, rb.head);
    cr_assert_eq(r.pos, 0);
    cr_assert_eq(rb.head->readers, 1);
    cr_assert_eq(rb_pending(&r), 0);
    struct iovec iov[4];
    cr_assert_eq(rb_iov(&r, iov, 4), 0);
    rb_consume(&r, 0);
    cr_assert_eq(rb_reader_off(&r), 5);
    check_reader(&r, 1);
    rb_detach(&r);
    cr_assert_null(r.rb);
    cr_assert_eq(rb.head->readers, 0);
    rb_detach(&r); /* twice: nothing */
    cr_assert_eq(rb.head->readers, 0);

    /* nothing to trim, whatever the limit; feeding nothing changes nothing */
    rb_trim(&rb);
    rb_set_limit(&rb, 0);
    cr_assert_eq(rb.limit, 0);
    long long next = 5;
    feed_pattern(&rb, &next, 0);
    cr_assert_eq(rb.nblocks, 1);
    cr_assert_eq(rb_histlen(&rb), 0);
    cr_assert_eq(rb.mem, HDR + BD);

    rb_free(&rb);
    cr_assert_eq(rb.mem, 0);
    cr_assert_eq(rb.nblocks, 0);
    cr_assert_null(rb.head);
    cr_assert_null(rb.tail);
}

/* A write fills the tail, and what does not fit goes into one new block of
 * RB_BLOCK_DATA bytes, or of its own size when bigger. */
Test(replbuf, block_layout) {
    struct {
        size_t feeds[4];
        int nfeeds;
        size_t nblocks, tail_size, tail_used, head_used;
    } cases[] = {
        {{BD - 1, 1}, 2, 1, BD, BD, BD},
        {{BD}, 1, 1, BD, BD, BD},
        {{BD, 1}, 2, 2, BD, 1, BD},
        {{BD + 1}, 1, 2, BD, 1, BD},
        {{3 * BD + 7}, 1, 2, 2 * BD + 7, 2 * BD + 7, BD},
        {{1, 3 * BD}, 2, 2, 2 * BD + 1, 2 * BD + 1, BD},
        {{BD + 1, BD - 1}, 2, 2, BD, BD, BD},
        {{BD + 1, BD - 1, 1}, 3, 3, BD, 1, BD},
        {{BD, BD, BD}, 3, 3, BD, BD, BD},
        {{BD, 2 * BD}, 2, 2, 2 * BD, 2 * BD, BD},
        {{BD, 2 * BD, 1}, 3, 3, BD, 1, BD},
        {{10, 0, 20}, 3, 1, BD, 30, 30},
    };
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        replbuf rb;
        long long next = 1000;
        rb_init(&rb, HUGE_LIMIT, next);
        size_t total = 0;
        for (int i = 0; i < cases[c].nfeeds; i++) {
            feed_pattern(&rb, &next, cases[c].feeds[i]);
            total += cases[c].feeds[i];
        }
        cr_assert_eq(rb.nblocks, cases[c].nblocks, "case %zu: %zu blocks", c, rb.nblocks);
        cr_assert_eq(rb.tail->size, cases[c].tail_size, "case %zu: tail size %zu", c, rb.tail->size);
        cr_assert_eq(rb.tail->used, cases[c].tail_used, "case %zu: tail used %zu", c, rb.tail->used);
        cr_assert_eq(rb.head->used, cases[c].head_used, "case %zu: head used %zu", c, rb.head->used);
        cr_assert_eq(rb_first(&rb), 1000);
        cr_assert_eq(rb_end(&rb), next);
        cr_assert_eq(rb_histlen(&rb), total);
        /* non-tail blocks are full: the memory is the headers, the stream and the tail's room */
        cr_assert_eq(rb.mem, rb.nblocks * HDR + total + (rb.tail->size - rb.tail->used));
        check_blocks(&rb, 1);
        rb_free(&rb);
    }
}

/* ---- bytes at every offset ------------------------------------------------------ */

Test(replbuf, feeds_of_every_size_around_a_block) {
    const size_t sizes[] = {0, 1, 2, BD - 1, BD, BD + 1, 2 * BD, 3 * BD + 7};
    const size_t ns = sizeof sizes / sizeof sizes[0];
    for (size_t i = 0; i < ns; i++)
        for (size_t j = 0; j < ns; j++) {
            replbuf rb;
            long long next = 1;
            rb_init(&rb, HUGE_LIMIT, next);
            feed_pattern(&rb, &next, sizes[i]);
            check_blocks(&rb, 1);
            feed_pattern(&rb, &next, sizes[j]);
            cr_assert_eq(rb_end(&rb), next);
            cr_assert_eq(rb_first(&rb), 1, "nothing is dropped below the limit");
            cr_assert_eq(rb_histlen(&rb), sizes[i] + sizes[j]);
            check_every_offset(&rb);
            rb_free(&rb);
        }
}

Test(replbuf, three_feeds_at_a_large_offset) {
    const size_t sizes[] = {1, BD - 1, BD + 1, 2 * BD + 3};
    const long long start = (1LL << 40) + 12345;
    for (size_t i = 0; i < 4; i++)
        for (size_t j = 0; j < 4; j++)
            for (size_t k = 0; k < 4; k++) {
                replbuf rb;
                long long next = start;
                rb_init(&rb, HUGE_LIMIT, next);
                feed_pattern(&rb, &next, sizes[i]);
                feed_pattern(&rb, &next, sizes[j]);
                feed_pattern(&rb, &next, sizes[k]);
                cr_assert_eq(rb_first(&rb), start);
                cr_assert_eq(rb_end(&rb), next);
                check_every_offset(&rb);
                rb_free(&rb);
            }
}

/* The same feeds with a small limit: whatever is kept is exact, and the
 * history is at least the limit. */
Test(replbuf, feeds_with_a_small_limit) {
    const size_t sizes[] = {0, 1, BD - 1, BD, BD + 1, 2 * BD, 3 * BD + 7};
    const size_t ns = sizeof sizes / sizeof sizes[0];
    const size_t limits[] = {0, 1, 100, BD, BD + 1};
    for (size_t l = 0; l < 5; l++)
        for (size_t i = 0; i < ns; i++)
            for (size_t j = 0; j < ns; j++) {
                replbuf rb;
                long long next = 1;
                rb_init(&rb, limits[l], next);
                feed_pattern(&rb, &next, sizes[i]);
                check_not_overkept(&rb);
                feed_pattern(&rb, &next, sizes[j]);
                check_not_overkept(&rb);
                size_t fed = sizes[i] + sizes[j];
                cr_assert_eq(rb_end(&rb), next);
                cr_assert_geq(rb_histlen(&rb), fed < limits[l] ? fed : limits[l]);
                check_every_offset(&rb);
                rb_free(&rb);
            }
}

/* ---- history without readers ---------------------------------------------------- */

Test(replbuf, history_without_readers) {
    const size_t limits[] = {0, 1, 100, BD - 1, BD, BD + 1, 3 * BD + 5, 10 * BD};
    frand_seed(3);
    for (size_t l = 0; l < sizeof limits / sizeof limits[0]; l++) {
        size_t limit = limits[l];
        replbuf rb;
        long long start = 42, next = start;
        rb_init(&rb, limit, next);
        size_t fed = 0, largest = BD, peak = 0;
        int big = l % 2; /* every other limit also gets writes bigger than a block */
        while (fed < 8 * limit + 6 * BD) {
            size_t n = big && frand_below(10) == 0 ? BD + (size_t)frand_below(2 * BD) : (size_t)frand_below(3000);
            long long first0 = rb_first(&rb);
            size_t noffs;
            long long *offs = block_offs(&rb, &noffs);
            const rb_block *tail0 = rb.tail;
            feed_pattern(&rb, &next, n);
            fed += n;
            if (rb.tail->size > largest) largest = rb.tail->size;
            if (rb.mem > peak) peak = rb.mem;
            check_blocks(&rb, 0);
            cr_assert_eq(rb_end(&rb), next);
            cr_assert_geq(rb_histlen(&rb), fed < limit ? fed : limit, "histlen %zu, fed %zu, limit %zu",
                          rb_histlen(&rb), fed, limit);
            /* whole blocks only */
            cr_assert_geq(rb_first(&rb), first0);
            cr_assert(among(offs, noffs, rb_first(&rb)), "rb_first %lld is not where a block began", rb_first(&rb));
            free(offs);
            if (rb.tail != tail0) {
                /* a new block: the feed trimmed */
                check_trimmed(&rb);
                if (rb.head == rb.tail)
                    cr_assert_leq(rb_histlen(&rb), largest);
                else
                    cr_assert_lt(rb_histlen(&rb), limit + largest, "histlen %zu, limit %zu, largest block %zu",
                                 rb_histlen(&rb), limit, largest);
            } else {
                cr_assert_eq(rb_first(&rb), first0, "a feed into the tail trims nothing");
            }
            check_not_overkept(&rb);
        }
        cr_assert_gt(rb_first(&rb), start, "limit %zu: nothing was ever dropped", limit);
        check_every_offset(&rb);
        /* memory is the history, not the stream */
        if (!big) cr_assert_leq(peak, (limit / BD + 2) * (HDR + BD), "limit %zu: peak memory %zu", limit, peak);
        cr_assert_eq(rb.mem, rb.nblocks * HDR + rb_histlen(&rb) + (rb.tail->size - rb.tail->used));
        rb_free(&rb);
        cr_assert_eq(rb.mem, 0);
    }
}

/* The trim's edge: a block goes as soon as the blocks after it hold exactly
 * the limit, and stays while they hold one byte less. */
Test(replbuf, history_of_exactly_the_limit) {
    for (size_t limit = BD - 1; limit <= BD + 1; limit++) {
        replbuf rb;
        long long start = 10, next = start;
        rb_init(&rb, limit, next);
        feed_pattern(&rb, &next, BD);
        feed_pattern(&rb, &next, BD); /* a new block: the first goes iff BD >= limit */
        if (limit <= BD) {
            cr_assert_eq(rb.nblocks, 1, "limit %zu", limit);
            cr_assert_eq(rb_first(&rb), start + (long long)BD);
            cr_assert_eq(rb_histlen(&rb), BD);
        } else {
            cr_assert_eq(rb.nblocks, 2, "limit %zu", limit);
            cr_assert_eq(rb_first(&rb), start);
        }
        check_trimmed(&rb);
        check_every_offset(&rb);
        rb_free(&rb);
    }
    /* the same edge reached by rb_set_limit */
    replbuf rb;
    long long next = 0;
    rb_init(&rb, HUGE_LIMIT, next);
    feed_pattern(&rb, &next, 3 * BD + 5);
    cr_assert_eq(rb.nblocks, 2);
    rb_set_limit(&rb, 2 * BD + 6);
    cr_assert_eq(rb.nblocks, 2, "2 * BD + 5 after the head is under the limit");
    rb_set_limit(&rb, 2 * BD + 5);
    cr_assert_eq(rb.nblocks, 1, "2 * BD + 5 after the head is the limit");
    cr_assert_eq(rb_first(&rb), (long long)BD);
    rb_free(&rb);
}

/* ---- readers -------------------------------------------------------------------- */

Test(replbuf, a_reader_pins_history_then_consumes_in_chunks) {
    frand_seed(5);
    const size_t limit = 2 * BD + 333;
    replbuf rb;
    long long start = 77, next = start;
    rb_init(&rb, limit, next);
    feed_pattern(&rb, &next, BD + 500);
    rb_reader r = {0};
    const long long off0 = start + 321;
    cr_assert_eq(rb_attach(&r, &rb, off0), 0);
    cr_assert_eq(r.b, rb.head);
    cr_assert_eq(r.pos, 321);

    size_t fed = 0;
    while (fed < 10 * limit) {
        size_t n = frand_below(8) == 0 ? BD + (size_t)frand_below(2 * BD) : (size_t)frand_below(3000);
        feed_pattern(&rb, &next, n);
        fed += n;
        check_blocks(&rb, 0);
        cr_assert(rb_covers(&rb, off0));
        cr_assert_eq(rb_first(&rb), start, "the block the reader is in was dropped");
    }
    cr_assert_eq(rb_reader_off(&r), off0);
    cr_assert_eq(rb_pending(&r), (size_t)(rb_end(&rb) - off0));
    check_reader(&r, 1);
    check_counts(&rb, &r, 1);
    const size_t peak = rb.mem;
    cr_assert_gt(peak, 10 * limit);

    const size_t total = rb_pending(&r);
    unsigned char *got = malloc(total);
    cr_assert_not_null(got);
    size_t gotn = 0;
    int step = 0, boundary_chunks = 0;
    while (rb_pending(&r)) {
        const size_t pend = rb_pending(&r);
        int max = (int)rb.nblocks + 1;
        struct iovec *iov = malloc(sizeof *iov * (size_t)max);
        cr_assert_not_null(iov);
        int k = rb_iov(&r, iov, max);
        cr_assert_gt(k, 0);
        size_t c;
        switch (frand_below(7)) {
        case 0: c = 1; break;
        case 1: c = iov[0].iov_len; break; /* exactly the rest of the block */
        case 2: c = iov[0].iov_len + 1 + (size_t)frand_below(BD); break; /* across a boundary */
        case 3: c = k > 1 ? iov[0].iov_len + iov[1].iov_len : pend; break;
        case 4: c = 1 + (size_t)frand_below(pend); break;
        case 5: c = (size_t)frand_below(2000); break; /* may be 0 */
        default: c = iov[0].iov_len > 1 ? iov[0].iov_len - 1 : 1; break;
        }
        if (c > pend) c = pend;
        /* what would be sent: the first c bytes of the iovecs, in order */
        size_t left = c;
        for (int i = 0; i < k && left; i++) {
            size_t t = iov[i].iov_len < left ? iov[i].iov_len : left;
            memcpy(got + gotn + (c - left), iov[i].iov_base, t);
            left -= t;
        }
        cr_assert_eq(left, 0);
        const long long first_before = rb_first(&rb);
        const size_t mem_before = rb.mem;
        const rb_block *b_before = r.b;
        const int was_head = r.b == rb.head;
        const int whole_block = k > 1 && c == iov[0].iov_len;
        free(iov);

        rb_consume(&r, c);
        gotn += c;
        cr_assert_eq(rb_reader_off(&r), off0 + (long long)gotn);
        check_reader(&r, step % 16 == 0);
        check_blocks(&rb, 0);
        check_counts(&rb, &r, 1);
        if (whole_block) {
            /* the rest of a block sent: the reader is at the start of the next */
            boundary_chunks++;
            cr_assert_neq(r.b, b_before);
            cr_assert_eq(r.pos, 0);
        }
        if (was_head && r.b != b_before) {
            check_trimmed(&rb); /* it left the head: rb_consume trimmed */
            cr_assert_leq(rb.mem, mem_before);
        } else {
            cr_assert_eq(rb_first(&rb), first_before, "the reader stayed in its block or was not in the head");
        }
        cr_assert_geq(rb_histlen(&rb), limit);
        cr_assert_leq(rb_first(&rb), rb_reader_off(&r));
        step++;
    }
    cr_assert_gt(boundary_chunks, 0);
    cr_assert_eq(gotn, total);
    for (size_t i = 0; i < total; i++)
        cr_assert_eq(got[i], pat(off0 + (long long)i), "sent byte at offset %lld", off0 + (long long)i);
    free(got);

    /* all sent: the reader is at the end, in the tail, and the history is back to about the limit */
    struct iovec one[2];
    cr_assert_eq(rb_iov(&r, one, 2), 0);
    cr_assert_eq(r.b, rb.tail);
    cr_assert_eq(r.pos, rb.tail->used);
    cr_assert_neq(rb.head, rb.tail);
    cr_assert_geq(rb_histlen(&rb), limit);
    check_trimmed(&rb);
    cr_assert_lt(rb.mem, peak);
    cr_assert_eq(rb.mem, rb.nblocks * HDR + rb_histlen(&rb) + (rb.tail->size - rb.tail->used));
    check_every_offset(&rb);
    rb_detach(&r);
    rb_free(&rb);
}

Test(replbuf, iov_with_a_small_max) {
    replbuf rb;
    long long next = 9;
    rb_init(&rb, HUGE_LIMIT, next);
    for (int i = 0; i < 40; i++) feed_pattern(&rb, &next, 1000);
    feed_pattern(&rb, &next, 3 * BD + 10 - 40 * 1000); /* blocks of BD, BD, BD, 10 */
    cr_assert_eq(rb.nblocks, 4);
    cr_assert_eq(rb.tail->used, 10);

    rb_reader r = {0};
    cr_assert_eq(rb_attach(&r, &rb, 9 + 100), 0);
    struct iovec all[8], few[8];
    int n = rb_iov(&r, all, 8);
    cr_assert_eq(n, 4);
    cr_assert_eq(all[0].iov_len, BD - 100);
    cr_assert_eq(all[3].iov_len, 10);
    cr_assert_eq(rb_iov(&r, few, 0), 0);
    for (int max = 1; max <= 5; max++) {
        memset(few, 0, sizeof few);
        int k = rb_iov(&r, few, max);
        cr_assert_eq(k, max < n ? max : n, "max %d: %d iovecs", max, k);
        for (int i = 0; i < k; i++) {
            cr_assert_eq(few[i].iov_base, all[i].iov_base, "max %d, iovec %d", max, i);
            cr_assert_eq(few[i].iov_len, all[i].iov_len, "max %d, iovec %d", max, i);
        }
        for (int i = k; i < 8; i++) cr_assert_null(few[i].iov_base, "max %d: iovec %d written", max, i);
    }
    check_reader(&r, 1);

    /* attached at the end of a full block: placed at the start of the next */
    rb_reader s = {0};
    cr_assert_eq(rb_attach(&s, &rb, 9 + (long long)BD), 0);
    cr_assert_eq(s.b, rb.head->next);
    cr_assert_eq(s.pos, 0);
    cr_assert_eq(rb_iov(&s, few, 1), 1);
    cr_assert_eq(few[0].iov_base, rb.head->next->data);
    cr_assert_eq(few[0].iov_len, BD);
    check_reader(&s, 1);
    rb_reader rs[2] = {r, s};
    check_counts(&rb, rs, 2);
    rb_detach(&r);
    rb_detach(&s);
    rb_free(&rb);
}

Test(replbuf, detach_frees_the_blocks_only_it_needed) {
    const size_t limit = 10;
    replbuf rb;
    long long start = 3, next = start;
    rb_init(&rb, limit, next);
    feed_pattern(&rb, &next, BD / 2);
    rb_reader a = {0};
    cr_assert_eq(rb_attach(&a, &rb, start), 0);
    for (int i = 0; i < 50; i++) feed_pattern(&rb, &next, BD / 10 + (size_t)i);
    cr_assert_eq(rb_first(&rb), start, "the reader's block was dropped");
    size_t nb = rb.nblocks;
    cr_assert_gt(nb, 3);
    check_reader(&a, 1);
    const size_t mem0 = rb.mem;

    rb_detach(&a);
    cr_assert_null(a.rb);
    check_blocks(&rb, 1);
    check_trimmed(&rb);
    cr_assert_gt(rb_first(&rb), start);
    cr_assert_lt(rb.nblocks, nb);
    cr_assert_eq(mem0 - rb.mem, (nb - rb.nblocks) * (HDR + BD), "all blocks here are RB_BLOCK_DATA");
    cr_assert_geq(rb_histlen(&rb), limit);
    cr_assert_lt(rb_histlen(&rb) - rb.head->used, limit);
    rb_free(&rb);
}

Test(replbuf, attach_as_copies_a_position) {
    const size_t limit = 10;
    replbuf rb;
    long long start = 1LL << 33, next = start;
    rb_init(&rb, limit, next);
    feed_pattern(&rb, &next, 100);
    rb_reader rs[3] = {{0}, {0}, {0}};
    cr_assert_eq(rb_attach(&rs[0], &rb, start + 5), 0);
    rb_attach_as(&rs[1], &rs[0]);
    cr_assert_eq(rs[1].rb, &rb);
    cr_assert_eq(rs[1].b, rs[0].b);
    cr_assert_eq(rs[1].pos, rs[0].pos);
    cr_assert_eq(rs[0].b->readers, 2);
    check_counts(&rb, rs, 3);
    feed_pattern(&rb, &next, BD - 23);
    cr_assert_eq(rb_first(&rb), start);

    for (int i = 0; i < 20; i++) feed_pattern(&rb, &next, BD / 3);
    const size_t nb = rb.nblocks, mem = rb.mem;
    cr_assert_gt(nb, 4);

    /* one of two readers in the head goes: the other still needs every block */
    rb_detach(&rs[0]);
    check_counts(&rb, rs, 3);
    cr_assert_eq(rb.nblocks, nb);
    cr_assert_eq(rb.mem, mem);
    cr_assert_eq(rb_first(&rb), start);
    check_reader(&rs[1], 1);
    cr_assert_eq(rb_reader_off(&rs[1]), start + 5);

    /* a copy of a reader further on; then both move independently */
    cr_assert_eq(rb_attach(&rs[2], &rb, start + (long long)BD + 3), 0);
    rb_attach_as(&rs[0], &rs[2]);
    check_counts(&rb, rs, 3);
    rb_consume(&rs[0], 2 * BD);
    cr_assert_eq(rb_reader_off(&rs[0]), start + 3 * (long long)BD + 3);
    cr_assert_eq(rb_reader_off(&rs[2]), start + (long long)BD + 3);
    check_counts(&rb, rs, 3);
    for (int i = 0; i < 3; i++) check_reader(&rs[i], 1);
    cr_assert_eq(rb.nblocks, nb, "the head still has a reader");

    /* the reader in the head goes: blocks up to the next reader's go */
    rb_detach(&rs[1]);
    check_counts(&rb, rs, 3);
    check_blocks(&rb, 1);
    cr_assert_eq(rb.head, rs[2].b);
    cr_assert_eq(rb_first(&rb), start + (long long)BD);
    cr_assert_eq(rb.mem, mem - (HDR + BD));
    rb_detach(&rs[2]);
    check_trimmed(&rb);
    cr_assert_eq(rb.head, rs[0].b, "blocks up to the last reader's went");
    check_counts(&rb, rs, 3);
    rb_detach(&rs[0]);
    check_trimmed(&rb);
    check_blocks(&rb, 1);
    rb_free(&rb);
}

/* A reader at the end of a full tail block, when a write makes a new
 * block: it is sent the new bytes, and consuming moves it into the new
 * block (and lets the old one go). */
Test(replbuf, reader_at_the_end_of_a_full_tail_block) {
    for (int how = 0; how < 2; how++) {
        replbuf rb;
        long long start = 100, next = start;
        rb_init(&rb, 1, next);
        feed_pattern(&rb, &next, BD);
        cr_assert_eq(rb.tail->used, rb.tail->size);
        rb_reader r = {0};
        if (how == 0) {
            cr_assert_eq(rb_attach(&r, &rb, rb_end(&rb)), 0);
        } else {
            cr_assert_eq(rb_attach(&r, &rb, start), 0);
            rb_consume(&r, BD); /* all of it: nowhere to move to yet */
        }
        cr_assert_eq(r.b, rb.tail);
        cr_assert_eq(r.pos, BD);
        cr_assert_eq(rb_pending(&r), 0);
        struct iovec iov[4];
        cr_assert_eq(rb_iov(&r, iov, 4), 0);

        rb_block *old = rb.tail;
        feed_pattern(&rb, &next, 10);
        cr_assert_eq(rb.nblocks, 2, "the block the reader is in stays");
        cr_assert_eq(rb.head, old);
        cr_assert_eq(r.b, old);
        cr_assert_eq(rb_pending(&r), 10);
        cr_assert_eq(rb_iov(&r, iov, 1), 1, "the reader's empty rest of a block is no iovec");
        cr_assert_eq(iov[0].iov_base, rb.tail->data);
        cr_assert_eq(iov[0].iov_len, 10);
        check_reader(&r, 1);

        if (how == 0) {
            rb_consume(&r, 4);
            cr_assert_eq(r.pos, 4);
        } else {
            rb_consume(&r, 0); /* even nothing sent moves it on */
            cr_assert_eq(r.pos, 0);
        }
        cr_assert_eq(r.b, rb.tail);
        cr_assert_eq(rb.tail->readers, 1);
        cr_assert_eq(rb.nblocks, 1, "the old block, no longer needed, went");
        cr_assert_eq(rb.mem, HDR + BD);
        cr_assert_eq(rb_first(&rb), start + (long long)BD);
        check_reader(&r, 1);
        check_blocks(&rb, 1);
        rb_detach(&r);
        rb_free(&rb);
    }
}

/* ---- limit changes -------------------------------------------------------------- */

Test(replbuf, set_limit_shrinks_at_once_and_grows_keeping_everything) {
    replbuf rb;
    long long start = 1, next = start;
    rb_init(&rb, HUGE_LIMIT, next);
    for (int i = 0; i < 100; i++) feed_pattern(&rb, &next, 1638 + (size_t)i);
    const size_t nb = rb.nblocks, mem = rb.mem;
    cr_assert_geq(nb, 10);
    cr_assert_eq(rb_first(&rb), start);

    /* growing: nothing goes */
    rb_set_limit(&rb, 2 * HUGE_LIMIT);
    cr_assert_eq(rb.limit, 2 * HUGE_LIMIT);
    cr_assert_eq(rb.nblocks, nb);
    cr_assert_eq(rb.mem, mem);
    cr_assert_eq(rb_first(&rb), start);

    /* shrinking: trimmed at once, whole blocks, history still >= limit */
    rb_set_limit(&rb, 3 * BD + 1);
    check_blocks(&rb, 1);
    check_trimmed(&rb);
    cr_assert_lt(rb.nblocks, nb);
    cr_assert_lt(rb.mem, mem);
    cr_assert_eq((rb_first(&rb) - start) % (long long)BD, 0);
    cr_assert_geq(rb_histlen(&rb), 3 * BD + 1);
    /* 168750 bytes fed, the tail holds 4910: 3 full blocks and the tail are
     * the fewest holding 3 * BD + 1 bytes */
    cr_assert_eq(rb_histlen(&rb), 3 * BD + 4910);
    cr_assert_eq(rb.nblocks, 4);
    const long long first = rb_first(&rb);
    const size_t nb2 = rb.nblocks;

    /* growing again keeps everything, and feeding then drops nothing until the history reaches the limit */
    rb_set_limit(&rb, 20 * BD);
    cr_assert_eq(rb_first(&rb), first);
    cr_assert_eq(rb.nblocks, nb2);
    while (rb_histlen(&rb) + 3000 < 20 * BD) {
        feed_pattern(&rb, &next, 3000);
        cr_assert_eq(rb_first(&rb), first);
    }
    check_every_offset(&rb);

    /* limit 0: only the tail stays, and its end is still covered */
    rb_set_limit(&rb, 0);
    cr_assert_eq(rb.nblocks, 1);
    cr_assert_eq(rb.head, rb.tail);
    cr_assert_eq(rb_end(&rb), next);
    cr_assert_eq(rb.mem, HDR + BD);
    check_every_offset(&rb);
    feed_pattern(&rb, &next, BD);
    cr_assert_eq(rb.nblocks, 1, "with limit 0 a new block drops the full one");
    check_every_offset(&rb);
    rb_free(&rb);
}

/* ---- a long random program ------------------------------------------------------ */

#define NR 6

Test(replbuf, random_program_matches_the_model) {
    frand_seed(20240607);
    for (int round = 0; round < 4; round++) {
        replbuf rb;
        const long long start = round == 3 ? (1LL << 41) + 17 : round * 1000003LL;
        long long next = start;
        size_t limit = round == 0 ? 0 : (size_t)frand_below(4 * BD);
        rb_init(&rb, limit, next);
        rb_reader rs[NR];
        long long roff[NR]; /* the model of each attached reader's offset */
        memset(rs, 0, sizeof rs);
        int dropped = 0;
        size_t drop_limit = 0;
        int nfeeds = 0, nattach = 0, nrefused = 0, nconsume = 0, ndetach = 0, nlimit = 0, ndrops = 0;
        for (int step = 0; step < 3000; step++) {
            const long long first0 = rb_first(&rb);
            const size_t hist0 = rb_histlen(&rb);
            size_t noffs;
            long long *offs = block_offs(&rb, &noffs);
            const rb_block *tail0 = rb.tail;
            int trimmed = 0;
            const uint64_t op = frand_below(100);
            const int i = (int)frand_below(NR);
            if (op < 40) {
                size_t n = frand_below(10) == 0 ? (size_t)frand_below(3 * BD + 100) : (size_t)frand_below(2000);
                feed_pattern(&rb, &next, n);
                trimmed = rb.tail != tail0;
                nfeeds++;
            } else if (op < 48) {
                if (!rs[i].rb) {
                    /* anywhere, or at an edge: first - 2 .. first + 1, end - 1 .. end + 2 */
                    long long off = frand_below(3) ? first0 - 2 + (long long)frand_below(hist0 + 5)
                                    : frand_below(2)  ? first0 - 2 + (long long)frand_below(4)
                                                      : rb_end(&rb) - 1 + (long long)frand_below(4);
                    int want = off >= first0 && off <= rb_end(&rb) ? 0 : -1;
                    cr_assert_eq(rb_attach(&rs[i], &rb, off), want, "attach at %lld, buffer [%lld, %lld]", off,
                                 first0, rb_end(&rb));
                    if (want == 0) {
                        roff[i] = off;
                        nattach++;
                    } else {
                        cr_assert_null(rs[i].rb);
                        nrefused++;
                    }
                }
            } else if (op < 52) {
                int j = (int)frand_below(NR);
                if (!rs[i].rb && rs[j].rb) {
                    rb_attach_as(&rs[i], &rs[j]);
                    cr_assert_eq(rs[i].b, rs[j].b);
                    cr_assert_eq(rs[i].pos, rs[j].pos);
                    roff[i] = roff[j];
                    nattach++;
                }
            } else if (op < 85) {
                if (rs[i].rb) {
                    size_t pend = rb_pending(&rs[i]);
                    struct iovec iov[2];
                    int k = rb_iov(&rs[i], iov, 2);
                    size_t c;
                    switch (frand_below(5)) {
                    case 0: c = 0; break;
                    case 1: c = pend; break;
                    case 2: c = k ? iov[0].iov_len : 0; break;
                    case 3: c = k ? iov[0].iov_len + (size_t)frand_below(pend - iov[0].iov_len + 1) : 0; break;
                    default: c = (size_t)frand_below(pend + 1); break;
                    }
                    const rb_block *b0 = rs[i].b;
                    const int was_head = b0 == rb.head;
                    rb_consume(&rs[i], c);
                    roff[i] += (long long)c;
                    trimmed = was_head && rs[i].b != b0;
                    nconsume++;
                }
            } else if (op < 93) {
                if (rs[i].rb) {
                    rb_detach(&rs[i]);
                    cr_assert_null(rs[i].rb);
                    trimmed = 1;
                    ndetach++;
                } else {
                    rb_detach(&rs[i]); /* not attached: nothing */
                }
            } else {
                uint64_t w = frand_below(4);
                limit = w == 0 ? 0 : w == 1 ? (size_t)frand_below(200) : (size_t)frand_below(6 * BD);
                rb_set_limit(&rb, limit);
                cr_assert_eq(rb.limit, limit);
                trimmed = 1;
                nlimit++;
            }

            /* the blocks, the counters, the stream's end */
            check_blocks(&rb, step % 8 == 0);
            check_counts(&rb, rs, NR);
            cr_assert_eq(rb_end(&rb), next);
            /* every reader: where the model says, covered, sent exactly the pattern from there */
            for (int j = 0; j < NR; j++)
                if (rs[j].rb) {
                    cr_assert_eq(rb_reader_off(&rs[j]), roff[j], "step %d: reader %d at %lld, model %lld", step, j,
                                 rb_reader_off(&rs[j]), roff[j]);
                    check_reader(&rs[j], step % 8 == 0);
                }
            /* the history: the first offset only moves forward, to where a block began */
            cr_assert_geq(rb_first(&rb), first0);
            cr_assert(among(offs, noffs, rb_first(&rb)), "step %d: rb_first %lld is not where a block began", step,
                      rb_first(&rb));
            free(offs);
            if (rb_first(&rb) != first0) {
                cr_assert(trimmed, "step %d: blocks dropped by an operation that does not trim", step);
                dropped = 1;
                drop_limit = limit;
                ndrops++;
            }
            /* at least the limit is kept from the last drop on (the history only grows between drops) */
            if (!dropped) cr_assert_eq(rb_first(&rb), start);
            else cr_assert_geq(rb_histlen(&rb), drop_limit, "step %d: histlen %zu, limit at the last drop %zu", step,
                               rb_histlen(&rb), drop_limit);
            /* and not more than needed */
            if (trimmed) check_trimmed(&rb);
            check_not_overkept(&rb);
        }
        cr_log_info("round %d: %d feeds, %d attaches, %d refused, %d consumes, %d detaches, %d limits, %d drops",
                    round, nfeeds, nattach, nrefused, nconsume, ndetach, nlimit, ndrops);
        cr_assert_gt(nfeeds, 500);
        cr_assert_gt(nattach, 20);
        cr_assert_gt(nrefused, 0);
        cr_assert_gt(nconsume, 200);
        cr_assert_gt(ndetach, 20);
        cr_assert_gt(nlimit, 20);
        cr_assert_gt(ndrops, 20);
        for (int j = 0; j < NR; j++) {
            rb_detach(&rs[j]);
            check_counts(&rb, rs, NR);
        }
        check_trimmed(&rb);
        check_every_offset(&rb);
        rb_free(&rb);
        cr_assert_eq(rb.mem, 0);
        cr_assert_eq(rb.nblocks, 0);
    }
}
