/* test_backlog.c - Criterion unit tests for src/repl/backlog.c (the
 * replication backlog).
 *
 * Why: a partial resync sends a replica the backlog's bytes from its
 * offset on. If the ring loses, repeats or reorders a byte at a wrap, or
 * claims to cover an offset it has dropped, the replica applies a corrupt
 * stream and silently diverges. The tests compare the backlog with a plain
 * model (every byte ever fed, by offset): feeds of every size around the
 * capacity, every offset it should and should not cover, resizing both
 * ways, and a long random sequence.
 */
#include <criterion/criterion.h>

#include <stdlib.h>
#include <string.h>

#include "frand.h"
#include "repl_backlog.h"

static unsigned char pat(long long off) { return (unsigned char)((off * 131 + (off >> 8) * 7 + 1) & 0xff); }

static void feed_pattern(backlog *b, long long *next, size_t n) {
    unsigned char *buf = malloc(n ? n : 1);
    for (size_t i = 0; i < n; i++) buf[i] = pat(*next + (long long)i);
    backlog_feed(b, (const char *)buf, n);
    *next += (long long)n;
    free(buf);
}

/* The bytes from off to the end are exactly the pattern. */
static void check_from(const backlog *b, long long off) {
    cr_assert(backlog_covers(b, off), "offset %lld not covered (first %lld, histlen %zu)", off, b->first, b->histlen);
    const char *p[2];
    size_t n[2];
    int k = backlog_pieces(b, off, p, n);
    long long at = off;
    for (int i = 0; i < k; i++)
        for (size_t j = 0; j < n[i]; j++, at++) cr_assert_eq((unsigned char)p[i][j], pat(at), "byte at offset %lld", at);
    cr_assert_eq(at, backlog_end(b));
}

static void check_all(const backlog *b) {
    for (long long off = b->first; off <= backlog_end(b); off++) check_from(b, off);
    cr_assert_not(backlog_covers(b, b->first - 1));
    cr_assert_not(backlog_covers(b, backlog_end(b) + 1));
}

Test(backlog, empty_covers_only_its_start) {
    backlog b;
    backlog_init(&b, 64, 1);
    cr_assert(backlog_covers(&b, 1));
    cr_assert_not(backlog_covers(&b, 2));
    cr_assert_not(backlog_covers(&b, 0));
    const char *p[2];
    size_t n[2];
    cr_assert_eq(backlog_pieces(&b, 1, p, n), 0);
    backlog_free(&b);
}

Test(backlog, feeds_of_every_size_around_capacity) {
    for (size_t first = 0; first < 70; first += 3)
        for (size_t second = 0; second < 140; second += 7) {
            backlog b;
            long long next = 1;
            backlog_init(&b, 64, next);
            feed_pattern(&b, &next, first);
            feed_pattern(&b, &next, second);
            cr_assert_eq(backlog_end(&b), next);
            cr_assert_eq(b.histlen, (size_t)(first + second < 64 ? first + second : 64));
            check_all(&b);
            backlog_free(&b);
        }
}

Test(backlog, resize_keeps_the_newest_bytes) {
    size_t sizes[] = {16, 64, 200, 7, 1000};
    for (size_t i = 0; i < 5; i++) {
        backlog b;
        long long next = 1000;
        backlog_init(&b, 100, next);
        feed_pattern(&b, &next, 130); /* wrapped */
        backlog_resize(&b, sizes[i]);
        cr_assert_eq(backlog_end(&b), next);
        cr_assert_eq(b.histlen, sizes[i] < 100 ? sizes[i] : 100);
        check_all(&b);
        feed_pattern(&b, &next, 33);
        check_all(&b);
        backlog_free(&b);
    }
}

Test(backlog, random_sequence_matches_the_model) {
    frand_seed(17);
    backlog b;
    long long next = 1;
    backlog_init(&b, 257, next);
    for (int step = 0; step < 3000; step++) {
        uint64_t r = frand64();
        if (r % 50 == 0) backlog_resize(&b, (size_t)(1 + frand_below(600)));
        else feed_pattern(&b, &next, (size_t)frand_below(r % 10 == 0 ? 900 : 40));
        cr_assert_eq(backlog_end(&b), next);
        cr_assert_leq(b.histlen, b.size);
        long long off = b.first + (long long)frand_below(b.histlen + 1);
        check_from(&b, off);
    }
    backlog_free(&b);
}
