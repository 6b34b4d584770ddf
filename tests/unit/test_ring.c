/* test_ring.c - Criterion unit tests for src/base/ring.c (the output ring).
 *
 * Why: every reply byte goes through the ring, and the writer sends what
 * ring_iov reports. If wrap-around, growth while wrapped, the
 * ring_write_ptr/ring_commit fast path or consume lose, duplicate or reorder
 * even one byte, clients see corrupt replies. The tests compare the ring with
 * a plain byte-array model: append and consume at every starting offset of a
 * small ring, grow while wrapped, check the 1-or-2-segment iovecs exactly,
 * and run a long random sequence of operations.
 */
#include <criterion/criterion.h>

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "frand.h"
#include "ring.h"

#define MINCAP 1024 /* the ring's smallest capacity (RING_MIN_CAP) */

/* byte i of the test stream */
static unsigned char pat(size_t i) { return (unsigned char)((i * 131u + (i >> 8) * 7u + 1u) & 0xff); }

/* Pending bytes as ring_iov reports them, concatenated. Also checks the
 * segment shape against the ring's own fields. */
static size_t gather(const ring *r, unsigned char *out) {
    struct iovec iov[2];
    int n = ring_iov(r, iov);
    if (r->used == 0) {
        cr_assert_eq(n, 0, "empty ring must report no segments");
        return 0;
    }
    int want = (r->tail + r->used <= r->cap) ? 1 : 2;
    cr_assert_eq(n, want, "tail=%zu used=%zu cap=%zu: %d segments, want %d", r->tail, r->used, r->cap, n, want);
    cr_assert_eq(iov[0].iov_base, r->buf + r->tail, "first segment must start at tail");
    size_t off = 0;
    for (int i = 0; i < n; i++) {
        cr_assert_gt(iov[i].iov_len, 0, "zero-length segment");
        cr_assert_geq((char *)iov[i].iov_base, r->buf);
        cr_assert_leq((char *)iov[i].iov_base + iov[i].iov_len, r->buf + r->cap, "segment runs past the buffer");
        memcpy(out + off, iov[i].iov_base, iov[i].iov_len);
        off += iov[i].iov_len;
    }
    if (n == 2) cr_assert_eq(iov[1].iov_base, r->buf, "second segment must start at buf");
    cr_assert_eq(off, r->used, "segments cover %zu bytes, used=%zu", off, r->used);
    return off;
}

/* The ring holds exactly stream bytes [from, from+len). */
static void assert_holds(const ring *r, size_t from, size_t len) {
    cr_assert_eq(ring_used(r), len);
    unsigned char *tmp = malloc(len ? len : 1);
    size_t got = gather(r, tmp);
    cr_assert_eq(got, len);
    for (size_t i = 0; i < len; i++)
        cr_assert_eq(tmp[i], pat(from + i), "byte %zu of pending data wrong (stream pos %zu)", i, from + i);
    free(tmp);
}

static void append_stream(ring *r, size_t from, size_t n) {
    unsigned char *tmp = malloc(n ? n : 1);
    for (size_t i = 0; i < n; i++) tmp[i] = pat(from + i);
    ring_append(r, tmp, n);
    free(tmp);
}

/* Ring of capacity MINCAP whose tail sits at `off` with nothing pending
 * except one byte (stream position 0), so head = off + 1. */
static void ring_at_offset(ring *r, size_t off) {
    ring_init(r);
    char junk[MINCAP];
    memset(junk, 0xEE, sizeof junk);
    ring_append(r, junk, off);
    append_stream(r, 0, 1);
    ring_consume(r, off);
    cr_assert_eq(r->cap, MINCAP);
    cr_assert_eq(r->tail, off);
    cr_assert_eq(r->head, (off + 1) & (MINCAP - 1));
}

Test(ring, empty_and_first_append) {
    ring r;
    ring_init(&r);
    struct iovec iov[2];
    cr_assert_eq(ring_iov(&r, iov), 0);
    cr_assert_eq(ring_used(&r), 0);
    cr_assert_null(ring_write_ptr(&r, 1), "no buffer yet: fast path must refuse");
    append_stream(&r, 0, 5);
    cr_assert_eq(r.cap, MINCAP);
    assert_holds(&r, 0, 5);
    ring_consume(&r, 5);
    cr_assert_eq(r.head, 0);
    cr_assert_eq(r.tail, 0);
    cr_assert_eq(ring_iov(&r, iov), 0);
    ring_free(&r);
    cr_assert_null(r.buf);
    cr_assert_eq(r.cap, 0);
}

Test(ring, zero_length_append) {
    ring r;
    ring_init(&r);
    ring_append(&r, "", 0);
    cr_assert_eq(ring_used(&r), 0);
    append_stream(&r, 0, 3);
    ring_append(&r, "", 0);
    assert_holds(&r, 0, 3);
    ring_free(&r);
}

/* Fill a MINCAP ring to the brim starting at every offset, then drain it in
 * odd-sized pieces; contents and segment shape are checked at every step. */
Test(ring, wraparound_at_every_offset) {
    for (size_t off = 0; off < MINCAP; off++) {
        ring r;
        ring_at_offset(&r, off);
        append_stream(&r, 1, MINCAP - 1); /* exactly full, no growth */
        cr_assert_eq(r.cap, MINCAP, "offset %zu: a full ring must not grow", off);
        cr_assert_eq(r.head, r.tail, "full ring: head meets tail");
        assert_holds(&r, 0, MINCAP);
        cr_assert_null(ring_write_ptr(&r, 1), "full ring: no room");
        size_t pos = 0, chunk = 1 + off % 37;
        while (ring_used(&r)) {
            size_t c = chunk < ring_used(&r) ? chunk : ring_used(&r);
            ring_consume(&r, c);
            pos += c;
            assert_holds(&r, pos, MINCAP - pos);
        }
        cr_assert_eq(pos, MINCAP);
        ring_free(&r);
    }
}

/* Appends that wrap in the middle (split memcpy) at every offset. */
Test(ring, split_append_at_every_offset) {
    for (size_t off = 0; off < MINCAP; off++) {
        ring r;
        ring_at_offset(&r, off);
        size_t n = 700;
        append_stream(&r, 1, n);
        cr_assert_eq(r.cap, MINCAP);
        cr_assert_eq(r.head, (off + 1 + n) & (MINCAP - 1));
        assert_holds(&r, 0, n + 1);
        ring_free(&r);
    }
}

/* Growth while wrapped keeps the contents in order and moves only the
 * smaller of the two runs: the run at the start goes past the old end (tail
 * stays), or the run at the old end goes to the new end. Appending and
 * consuming afterwards still sees one ordered stream. */
Test(ring, growth_while_wrapped_preserves_order) {
    for (size_t off = 0; off < MINCAP; off += 1) {
        ring r;
        ring_at_offset(&r, off);
        append_stream(&r, 1, MINCAP - 1 - (off % 5)); /* full or nearly */
        size_t have = ring_used(&r), tail = r.tail, head = r.head;
        size_t extra = 10 + off % 300;
        append_stream(&r, have, extra);
        cr_assert_eq(r.cap, 2 * MINCAP, "offset %zu: growth must double (cap=%zu)", off, r.cap);
        int wrapped = head != 0 && head <= tail;
        if (wrapped && head <= MINCAP - tail)
            cr_assert_eq(r.tail, tail, "offset %zu: the start run moves, tail stays", off);
        else if (wrapped)
            cr_assert_eq(r.tail, 2 * MINCAP - (MINCAP - tail), "offset %zu: the end run moves to the new end", off);
        else
            cr_assert_eq(r.tail, tail, "offset %zu: unwrapped data stays", off);
        assert_holds(&r, 0, have + extra);
        ring_consume(&r, have);
        append_stream(&r, have + extra, MINCAP);
        assert_holds(&r, have, extra + MINCAP);
        ring_free(&r);
    }
}

Test(ring, big_append_grows_to_power_of_two) {
    ring r;
    ring_init(&r);
    append_stream(&r, 0, 10);
    append_stream(&r, 10, 100000);
    cr_assert_eq(r.cap & (r.cap - 1), 0, "cap %zu not a power of two", r.cap);
    cr_assert_geq(r.cap, 100010);
    cr_assert_lt(r.cap, 2 * 131072 + 1);
    assert_holds(&r, 0, 100010);
    ring_free(&r);
}

Test(ring, reserve_makes_room_without_changing_contents) {
    ring r;
    ring_init(&r);
    cr_assert_eq(ring_reserve(&r, 10), 0);
    cr_assert_geq(r.cap - r.used, 10);
    cr_assert_eq(ring_used(&r), 0);
    ring_free(&r);
    ring_at_offset(&r, 900);
    append_stream(&r, 1, 300); /* wrapped */
    cr_assert_eq(ring_reserve(&r, 5000), 0);
    cr_assert_geq(r.cap - r.used, 5000);
    assert_holds(&r, 0, 301);
    size_t cap = r.cap;
    char *buf = r.buf;
    cr_assert_eq(ring_reserve(&r, 100), 0);
    cr_assert_eq(r.cap, cap, "reserve with room must not reallocate");
    cr_assert_eq(r.buf, buf);
    /* and the reserved room is usable without further growth */
    append_stream(&r, 301, 5000);
    cr_assert_eq(r.cap, cap);
    assert_holds(&r, 0, 5301);
    ring_free(&r);
}

/* ------------------------------------------------------ fast path */

static void put_fast(ring *r, size_t from, size_t n) {
    char *w = ring_write_ptr(r, n);
    cr_assert_not_null(w);
    for (size_t i = 0; i < n; i++) w[i] = (char)pat(from + i);
    ring_commit(r, n);
}

Test(ring, write_ptr_head_after_tail) {
    ring r;
    ring_init(&r);
    ring_reserve(&r, 1);
    /* tail 500, head 1000: contiguous room is [1000, 1024) only */
    append_stream(&r, 0, 1000);
    ring_consume(&r, 500);
    cr_assert_eq(ring_write_ptr(&r, 24), r.buf + 1000);
    cr_assert_null(ring_write_ptr(&r, 25), "24 contiguous bytes at the end, 25 asked");
    put_fast(&r, 1000, 24);
    cr_assert_eq(r.head, 0, "commit to the end wraps head to 0");
    assert_holds(&r, 500, 524);
    /* now head (0) < tail (500): room is [0, 500) */
    cr_assert_eq(ring_write_ptr(&r, 500), r.buf);
    cr_assert_null(ring_write_ptr(&r, 501));
    put_fast(&r, 1024, 200);
    cr_assert_eq(r.head, 200);
    assert_holds(&r, 500, 724);
    cr_assert_eq(ring_write_ptr(&r, 300), r.buf + 200);
    put_fast(&r, 1224, 300);
    cr_assert_eq(r.used, MINCAP, "filled exactly");
    cr_assert_null(ring_write_ptr(&r, 1));
    assert_holds(&r, 500, 1024);
    /* the slow path still works on a full ring: it grows */
    append_stream(&r, 1524, 10);
    cr_assert_eq(r.cap, 2 * MINCAP);
    assert_holds(&r, 500, 1034);
    ring_free(&r);
}

Test(ring, write_ptr_refuses_non_contiguous_room_then_append_wraps) {
    ring r;
    ring_init(&r);
    ring_reserve(&r, 1);
    append_stream(&r, 0, 1000);
    ring_consume(&r, 500);
    /* 524 bytes free in total but only 24 contiguous at head */
    cr_assert_null(ring_write_ptr(&r, 100));
    append_stream(&r, 1000, 100); /* must wrap, not grow */
    cr_assert_eq(r.cap, MINCAP);
    cr_assert_eq(r.head, 76);
    assert_holds(&r, 500, 600);
    ring_free(&r);
}

Test(ring, write_ptr_on_empty_ring_after_consume) {
    ring r;
    ring_init(&r);
    append_stream(&r, 0, 900);
    ring_consume(&r, 900);
    cr_assert_eq(ring_write_ptr(&r, MINCAP), r.buf, "emptied ring: whole buffer is contiguous");
    put_fast(&r, 0, MINCAP);
    cr_assert_eq(r.head, 0);
    assert_holds(&r, 0, MINCAP);
    ring_free(&r);
}

/* ------------------------------------------------------- set capacity */

Test(ring, set_capacity) {
    ring r;
    ring_init(&r);
    append_stream(&r, 0, 200000);
    size_t cap = r.cap;
    ring_set_capacity(&r, 1024);
    cr_assert_eq(r.cap, cap, "a ring with pending data must not be resized");
    assert_holds(&r, 0, 200000);
    ring_consume(&r, 200000);
    ring_set_capacity(&r, 1024);
    cr_assert_eq(r.cap, 1024);
    cr_assert_not_null(r.buf);
    cr_assert_eq(ring_used(&r), 0);
    append_stream(&r, 3, 1024); /* exactly full, no growth */
    cr_assert_eq(r.cap, 1024);
    assert_holds(&r, 3, 1024);
    ring_consume(&r, 1024);
    ring_set_capacity(&r, 0);
    cr_assert_eq(r.cap, 0);
    cr_assert_null(r.buf);
    /* usable again */
    append_stream(&r, 7, 3000);
    assert_holds(&r, 7, 3000);
    ring_free(&r);
}

/* ------------------------------------------------- random model check */

Test(ring, random_operations_match_model) {
    frand_seed(2024);
    ring r;
    ring_init(&r);
    size_t consumed = 0, produced = 0;
    for (int step = 0; step < 200000; step++) {
        uint64_t op = frand_below(10);
        if (op < 4) {
            size_t n = (size_t)frand_below(op == 0 ? 3000 : 200);
            append_stream(&r, produced, n);
            produced += n;
        } else if (op < 7) {
            size_t n = (size_t)frand_below(64);
            char *w = ring_write_ptr(&r, n);
            if (w) {
                for (size_t i = 0; i < n; i++) w[i] = (char)pat(produced + i);
                ring_commit(&r, n);
            } else {
                append_stream(&r, produced, n);
            }
            produced += n;
        } else if (op < 9) {
            size_t avail = ring_used(&r);
            size_t n = avail ? (size_t)frand_below(avail + 1) : 0;
            if (n) ring_consume(&r, n);
            consumed += n;
        } else {
            if (ring_used(&r) == 0) ring_set_capacity(&r, frand_below(2) ? 4096 : 0);
        }
        cr_assert_eq(ring_used(&r), produced - consumed);
        cr_assert(r.cap == 0 || (r.cap & (r.cap - 1)) == 0);
        cr_assert_eq(r.head, (r.tail + r.used) & (r.cap ? r.cap - 1 : 0), "head/tail/used inconsistent");
        if (step % 97 == 0) assert_holds(&r, consumed, produced - consumed);
    }
    assert_holds(&r, consumed, produced - consumed);
    ring_free(&r);
}
