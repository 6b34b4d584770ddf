/* test_dict.c - Criterion unit tests for src/base/dict.c.
 *
 * Why: the dict is the keyspace, so every command depends on it. The risky
 * parts are the incremental rehash (a key must stay findable while its
 * bucket is still waiting in table[0] or has moved to table[1]) and the SCAN
 * cursor, which must return every key that is present for the whole scan at
 * least once even when the table grows or shrinks between calls. The hash is
 * checked against an independent SipHash implementation written here from
 * the paper's description. That implementation is first checked against
 * published SipHash-2-4 and SipHash-1-3 test vectors.
 *
 * Each structural test also checks the table invariants after each step:
 * used[] counts match the chains, every node sits in the bucket its hash
 * selects, and the table[0] buckets below rehash_idx are empty.
 */
#include <criterion/criterion.h>

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dict.h"
#include "frand.h"
#include "zmalloc.h"

/* ------------------------------------------------------------ helpers */

/* Node with key "<prefix><id>" and a 4-byte value holding id. */
static dnode *mk(const char *prefix, uint32_t id) {
    char k[32];
    int kl = snprintf(k, sizeof k, "%s%u", prefix, id);
    dnode *n = dn_new((uint32_t)kl, 4, 0);
    memcpy(dn_key(n), k, (size_t)kl);
    memcpy(dn_val(n), &id, 4);
    return n;
}

static size_t keyname(char *buf, const char *prefix, uint32_t id) {
    return (size_t)snprintf(buf, 32, "%s%u", prefix, id);
}

static uint32_t node_id(const dnode *n) {
    uint32_t id;
    memcpy(&id, dn_val(n), 4);
    return id;
}

static int has_prefix(const dnode *n, const char *prefix) {
    size_t pl = strlen(prefix);
    return dn_klen(n) > pl && memcmp(dn_key(n), prefix, pl) == 0;
}

static dnode *find_id(dict *d, const char *prefix, uint32_t id) {
    char k[32];
    size_t kl = keyname(k, prefix, id);
    return dict_find(d, k, kl);
}

static dnode *unlink_id(dict *d, const char *prefix, uint32_t id) {
    char k[32];
    size_t kl = keyname(k, prefix, id);
    return dict_unlink(d, k, kl);
}

static void free_node(dnode *n) { dn_free(n); }

/* Structural invariants of the two tables. */
static void check_invariants(const dict *d) {
    for (int t = 0; t < 2; t++) {
        if (!d->table[t]) {
            cr_assert_eq(d->used[t], 0, "table[%d] absent but used=%zu", t, d->used[t]);
            continue;
        }
        size_t size = hashsize(d->bits[t]), count = 0;
        for (size_t i = 0; i < size; i++) {
            for (dnode *n = d->table[t][i]; n; n = n->next) {
                count++;
                size_t want = dict_hash(dn_key(n), dn_klen(n)) & hashmask(d->bits[t]);
                cr_assert_eq(want, i, "node in table[%d] bucket %zu belongs to bucket %zu", t, i, want);
                if (t == 0 && d->rehash_idx != -1)
                    cr_assert_geq((long)i, d->rehash_idx, "node left behind below rehash_idx");
            }
        }
        cr_assert_eq(count, d->used[t], "table[%d]: %zu nodes but used=%zu", t, count, d->used[t]);
    }
    if (d->rehash_idx == -1) cr_assert_null(d->table[1], "table[1] allocated while not rehashing");
    else cr_assert_not_null(d->table[1], "rehashing without table[1]");
}

/* Finds that must not advance the rehash: pause it around the lookups. */
static void assert_all_present(dict *d, const char *prefix, uint32_t lo, uint32_t hi) {
    d->pause_rehash++;
    for (uint32_t i = lo; i < hi; i++) {
        dnode *n = find_id(d, prefix, i);
        cr_assert_not_null(n, "key %s%u not found (rehash_idx=%ld)", prefix, i, d->rehash_idx);
        cr_assert_eq(node_id(n), i);
    }
    d->pause_rehash--;
}

static void fill(dict *d, const char *prefix, uint32_t lo, uint32_t hi) {
    for (uint32_t i = lo; i < hi; i++) dict_add(d, mk(prefix, i));
}

static void finish_rehash(dict *d) {
    while (dict_rehash(d, 100)) {}
    cr_assert(!dict_is_rehashing(d));
}

/* Add keys (rehash not paused) until a growth starts, then pause the
 * rehash so that only explicit dict_rehash() calls move buckets. The add
 * that starts the growth moves no bucket, so table[0] is still full. */
static void start_growth_paused(dict *d, const char *prefix, uint32_t *next) {
    cr_assert_eq(d->pause_rehash, 0);
    finish_rehash(d);
    for (int i = 0; !dict_is_rehashing(d); i++) {
        cr_assert_lt(i, 10000000, "table never grows");
        dict_add(d, mk(prefix, (*next)++));
    }
    cr_assert_eq(d->bits[1], d->bits[0] + 1);
    d->pause_rehash++;
}

/* --------------------------------------------------------- basic ops */

Test(dict, empty) {
    dict d;
    dict_init(&d);
    cr_assert_eq(dict_size(&d), 0);
    cr_assert_null(dict_find(&d, "x", 1));
    cr_assert_null(dict_find_link(&d, "x", 1));
    cr_assert_null(dict_unlink(&d, "x", 1));
    cr_assert_null(dict_random(&d));
    cr_assert_eq(dict_scan(&d, 0, NULL, NULL), 0);
    dict_clear(&d, free_node);
    cr_assert_eq(dict_buckets(&d), 0);
}

Test(dict, add_find_unlink_100k) {
    dict d;
    dict_init(&d);
    const uint32_t N = 100000;
    fill(&d, "key:", 0, N);
    cr_assert_eq(dict_size(&d), N);
    check_invariants(&d);
    for (uint32_t i = 0; i < N; i++) {
        dnode *n = find_id(&d, "key:", i);
        cr_assert_not_null(n, "key:%u missing", i);
        cr_assert_eq(node_id(n), i);
    }
    for (uint32_t i = 0; i < 1000; i++) cr_assert_null(find_id(&d, "nokey:", i));
    cr_assert_null(dict_find(&d, "key:", 4), "prefix of a key must not match");
    cr_assert_null(dict_find(&d, "key:1000000", 11));
    /* unlink every odd key */
    for (uint32_t i = 1; i < N; i += 2) {
        dnode *n = unlink_id(&d, "key:", i);
        cr_assert_not_null(n, "unlink key:%u", i);
        cr_assert_eq(node_id(n), i);
        cr_assert_null(n->next, "unlinked node keeps a next pointer");
        dn_free(n);
    }
    cr_assert_eq(dict_size(&d), N / 2);
    cr_assert_null(unlink_id(&d, "key:", 1), "double unlink must return NULL");
    for (uint32_t i = 0; i < N; i++) {
        dnode *n = find_id(&d, "key:", i);
        if (i & 1) cr_assert_null(n, "key:%u should be gone", i);
        else cr_assert(n && node_id(n) == i, "key:%u should remain", i);
    }
    check_invariants(&d);
    for (uint32_t i = 0; i < N; i += 2) dn_free(unlink_id(&d, "key:", i));
    cr_assert_eq(dict_size(&d), 0);
    dict_clear(&d, free_node);
}

Test(dict, binary_keys_and_empty_key) {
    dict d;
    dict_init(&d);
    static const char k1[] = {'a', '\0', 'b'}, k2[] = {'a', '\0', 'c'};
    dnode *a = dn_new(3, 0, 0), *b = dn_new(3, 0, 0), *e = dn_new(0, 0, 0);
    memcpy(dn_key(a), k1, 3);
    memcpy(dn_key(b), k2, 3);
    dict_add(&d, a);
    dict_add(&d, b);
    dict_add(&d, e);
    cr_assert_eq(dict_find(&d, k1, 3), a);
    cr_assert_eq(dict_find(&d, k2, 3), b);
    cr_assert_eq(dict_find(&d, "", 0), e);
    cr_assert_null(dict_find(&d, "a", 1));
    dict_clear(&d, free_node);
}

Test(dict, find_link_allows_node_replacement) {
    dict d;
    dict_init(&d);
    fill(&d, "k", 0, 500);
    for (uint32_t i = 0; i < 500; i += 7) {
        char k[32];
        size_t kl = keyname(k, "k", i);
        dnode **l = dict_find_link(&d, k, kl);
        cr_assert_not_null(l);
        cr_assert_eq(node_id(*l), i);
        dnode *old = *l;
        dnode *m = dn_resize_value(old, 64);   /* a new node: the class changes */
        cr_assert_neq(m, old);
        *l = m;
    }
    for (uint32_t i = 0; i < 500; i++) {
        dnode *n = find_id(&d, "k", i);
        cr_assert(n && node_id(n) == i);
        cr_assert_eq(dn_vlen(n), (i % 7) ? 4u : 64u);
    }
    check_invariants(&d);
    dict_clear(&d, free_node);
}

/* The _h variants: dict_find_link_h reports the key's hash even on a miss
 * (also on an empty dict), and dict_add_h places the node where finds look. */
Test(dict, find_link_h_and_add_h) {
    dict d;
    dict_init(&d);
    uint64_t h = 0;
    cr_assert_null(dict_find_link_h(&d, "k0", 2, &h));
    cr_assert_eq(h, dict_hash("k0", 2), "hash must be reported on an empty dict");
    for (uint32_t i = 0; i < 5000; i++) {
        char k[32];
        size_t kl = keyname(k, "h", i);
        uint64_t hh = ~dict_hash(k, kl);
        cr_assert_null(dict_find_link_h(&d, k, kl, &hh));
        cr_assert_eq(hh, dict_hash(k, kl));
        dict_add_h(&d, mk("h", i), hh);
        if (i % 500 == 0) check_invariants(&d);
    }
    check_invariants(&d);
    for (uint32_t i = 0; i < 5000; i++) {
        char k[32];
        size_t kl = keyname(k, "h", i);
        uint64_t hh = 0;
        dnode **l = dict_find_link_h(&d, k, kl, &hh);
        cr_assert(l && *l && node_id(*l) == i, "h%u not found through dict_find_link_h", i);
        cr_assert_eq(hh, dict_hash(k, kl));
    }
    assert_all_present(&d, "h", 0, 5000);
    dict_clear(&d, free_node);
}

static size_t g_freed_count;
static void counting_free(dnode *n) {
    g_freed_count++;
    dn_free(n);
}

Test(dict, clear_calls_free_for_every_node) {
    dict d;
    dict_init(&d);
    fill(&d, "k", 0, 3000);
    /* leave it mid-rehash so both tables hold nodes */
    uint32_t n = 0;
    start_growth_paused(&d, "j", &n);
    for (int s = 0; s < 100; s++) dict_rehash(&d, 1);
    cr_assert(d.used[0] > 0 && d.used[1] > 0);
    d.pause_rehash--;
    g_freed_count = 0;
    dict_clear(&d, counting_free);
    cr_assert_eq(g_freed_count, 3000 + n);
    cr_assert_eq(dict_size(&d), 0);
    cr_assert_null(d.table[0]);
    cr_assert_null(d.table[1]);
    cr_assert_eq(d.rehash_idx, -1);
    /* usable after clear */
    fill(&d, "k", 0, 10);
    assert_all_present(&d, "k", 0, 10);
    dict_clear(&d, free_node);
}

/* ------------------------------------------------------ rehash growth */

/* Every key is findable after every single-bucket rehash step, for each
 * growth from 4 up to 4096 buckets. Adds are made with the rehash paused so
 * that only the explicit dict_rehash(d, 1) calls move buckets. */
Test(dict, every_key_findable_at_every_rehash_step) {
    dict d;
    dict_init(&d);
    uint32_t n = 0;
    int growths = 0;
    while (n < 4096) {
        dict_add(&d, mk("g", n));
        n++;
        if (!dict_is_rehashing(&d)) continue;
        growths++;
        cr_assert_eq(d.bits[1], d.bits[0] + 1, "growth must double the table");
        d.pause_rehash++;
        long steps = 0;
        for (;;) {
            check_invariants(&d);
            assert_all_present(&d, "g", 0, n);
            /* also add a key mid-rehash: it must land in table[1] */
            if (steps % 3 == 0 && dict_is_rehashing(&d)) {
                size_t u1 = d.used[1];
                dict_add(&d, mk("g", n)); /* paused: dict_add moves no bucket */
                n++;
                cr_assert_eq(d.used[1], u1 + 1, "adds during rehash go to table[1]");
            }
            if (!dict_rehash(&d, 1)) break;
            steps++;
            cr_assert_leq(steps, (long)hashsize(d.bits[0]) + 1, "rehash does not terminate");
        }
        d.pause_rehash--;
        check_invariants(&d);
        assert_all_present(&d, "g", 0, n);
        cr_assert_eq(dict_size(&d), n);
    }
    cr_assert_geq(growths, 9, "expected at least 9 growths, saw %d", growths);
    dict_clear(&d, free_node);
}

/* Unlinks during a rehash: keys in the not-yet-moved part of table[0] and
 * keys already in table[1] are both removable, and counts stay right. */
Test(dict, unlink_during_rehash) {
    dict d;
    dict_init(&d);
    fill(&d, "u", 0, 1024);
    uint32_t total = 1024;
    start_growth_paused(&d, "u", &total);
    for (int s = 0; s < 200; s++) dict_rehash(&d, 1);
    cr_assert(dict_is_rehashing(&d));
    cr_assert(d.used[0] > 0 && d.used[1] > 0);
    for (uint32_t i = 0; i < total; i += 2) {
        dnode *x = unlink_id(&d, "u", i);
        cr_assert_not_null(x, "u%u", i);
        dn_free(x);
        if (i % 64 == 0) check_invariants(&d);
    }
    check_invariants(&d);
    for (uint32_t i = 0; i < total; i++) {
        dnode *x = find_id(&d, "u", i);
        cr_assert((x != NULL) == (i & 1), "u%u presence wrong", i);
    }
    d.pause_rehash--;
    finish_rehash(&d);
    cr_assert_eq(dict_size(&d), total / 2);
    check_invariants(&d);
    dict_clear(&d, free_node);
}

/* Normal use (no pause): operations move the rehash along by themselves. */
Test(dict, operations_drive_rehash_to_completion) {
    dict d;
    dict_init(&d);
    fill(&d, "r", 0, 3000);
    int started = 0;
    for (uint32_t i = 3000; i < 70000; i++) {
        dict_add(&d, mk("r", i));
        if (dict_is_rehashing(&d)) started = 1;
    }
    cr_assert(started);
    for (int i = 0; i < 200000 && dict_is_rehashing(&d); i++) find_id(&d, "r", (uint32_t)i % 70000);
    cr_assert(!dict_is_rehashing(&d), "lookups must finish a pending rehash");
    check_invariants(&d);
    cr_assert_geq(hashsize(d.bits[0]), 65536);
    assert_all_present(&d, "r", 0, 70000);
    dict_clear(&d, free_node);
}

Test(dict, rehash_us_finishes) {
    dict d;
    dict_init(&d);
    d.pause_rehash++;
    fill(&d, "t", 0, 5000);
    d.pause_rehash--;
    /* with the pause, the table could not grow: 5000 keys in 4 buckets */
    cr_assert_eq(dict_buckets(&d), 4);
    dict_add(&d, mk("t", 5000));
    cr_assert(dict_is_rehashing(&d));
    d.pause_rehash++;
    cr_assert_eq(dict_rehash_us(&d, 100000), 0, "dict_rehash_us must respect pause_rehash");
    d.pause_rehash--;
    for (int i = 0; i < 100 && dict_is_rehashing(&d); i++) dict_rehash_us(&d, 100000);
    cr_assert(!dict_is_rehashing(&d));
    check_invariants(&d);
    assert_all_present(&d, "t", 0, 5001);
    dict_clear(&d, free_node);
}

/* ------------------------------------------------------------- shrink */

Test(dict, shrink_keeps_every_key_findable) {
    dict d;
    dict_init(&d);
    fill(&d, "s", 0, 10000);
    finish_rehash(&d);
    size_t big = dict_buckets(&d);
    cr_assert_geq(big, 8192);
    dict_maybe_shrink(&d);
    cr_assert(!dict_is_rehashing(&d), "a full table must not shrink");
    /* about 18% full (above the 1/8 threshold): still no shrink */
    for (uint32_t i = 3000; i < 10000; i++) dn_free(unlink_id(&d, "s", i));
    finish_rehash(&d);
    cr_assert_eq(dict_buckets(&d), big);
    dict_maybe_shrink(&d);
    cr_assert(!dict_is_rehashing(&d), "3000 keys in %zu buckets must not shrink", big);
    for (uint32_t i = 100; i < 3000; i++) dn_free(unlink_id(&d, "s", i));
    finish_rehash(&d);
    cr_assert_eq(dict_size(&d), 100);
    dict_maybe_shrink(&d);
    cr_assert(dict_is_rehashing(&d), "a sparse table must start shrinking");
    cr_assert_lt(d.bits[1], d.bits[0]);
    cr_assert_geq(hashsize(d.bits[1]), 100, "shrunk table must still hold all keys in buckets >= used");
    d.pause_rehash++;
    long steps = 0;
    do {
        check_invariants(&d);
        assert_all_present(&d, "s", 0, 100);
        cr_assert_leq(++steps, (long)big + 1);
    } while (dict_rehash(&d, 1));
    d.pause_rehash--;
    check_invariants(&d);
    assert_all_present(&d, "s", 0, 100);
    cr_assert_lt(dict_buckets(&d), big);
    cr_assert_leq(hashsize(d.bits[0]), 256);
    /* delete everything, shrink down to the minimum */
    for (uint32_t i = 0; i < 100; i++) dn_free(unlink_id(&d, "s", i));
    dict_maybe_shrink(&d);
    finish_rehash(&d);
    cr_assert_eq(dict_size(&d), 0);
    cr_assert_leq(dict_buckets(&d), hashsize(DICT_MIN_BITS));
    /* and the dict is still usable */
    fill(&d, "z", 0, 50);
    assert_all_present(&d, "z", 0, 50);
    dict_clear(&d, free_node);
}

Test(dict, shrink_refused_while_paused_or_rehashing) {
    dict d;
    dict_init(&d);
    fill(&d, "p", 0, 4000);
    finish_rehash(&d);
    for (uint32_t i = 10; i < 4000; i++) dn_free(unlink_id(&d, "p", i));
    finish_rehash(&d);
    d.pause_rehash++;
    dict_maybe_shrink(&d);
    cr_assert(!dict_is_rehashing(&d), "no shrink while a safe iteration runs");
    d.pause_rehash--;
    dict_maybe_shrink(&d);
    cr_assert(dict_is_rehashing(&d));
    uint8_t target = d.bits[1];
    dict_maybe_shrink(&d);
    cr_assert_eq(d.bits[1], target, "second shrink while rehashing must be a no-op");
    finish_rehash(&d);
    assert_all_present(&d, "p", 0, 10);
    dict_clear(&d, free_node);
}

/* --------------------------------------------------------------- scan */

typedef struct scan_rec {
    unsigned char *seen;     /* per original id: times returned */
    uint32_t norig;
    const char *orig_prefix;
    size_t calls;
} scan_rec;

static void scan_cb(void *ud, dnode *n) {
    scan_rec *r = ud;
    r->calls++;
    if (has_prefix(n, r->orig_prefix)) {
        uint32_t id = node_id(n);
        cr_assert_lt(id, r->norig);
        if (r->seen[id] < 255) r->seen[id]++;
    }
}

Test(dict, scan_stable_table_returns_each_key_exactly_once) {
    dict d;
    dict_init(&d);
    const uint32_t N = 5000;
    fill(&d, "o", 0, N);
    finish_rehash(&d);
    scan_rec r = {calloc(N, 1), N, "o", 0};
    unsigned long cur = 0;
    size_t iters = 0;
    do {
        cur = dict_scan(&d, cur, scan_cb, &r);
        cr_assert_leq(++iters, dict_buckets(&d));
    } while (cur != 0);
    cr_assert_eq(iters, dict_buckets(&d), "one call per bucket on a stable table");
    for (uint32_t i = 0; i < N; i++) cr_assert_eq(r.seen[i], 1, "o%u returned %d times", i, r.seen[i]);
    free(r.seen);
    dict_clear(&d, free_node);
}

/* Run one scan while `mutate` changes the table between calls. */
static void scan_with(dict *d, scan_rec *r, void (*mutate)(dict *, size_t, void *), void *ud) {
    unsigned long cur = 0;
    size_t iters = 0;
    do {
        cur = dict_scan(d, cur, scan_cb, r);
        mutate(d, iters, ud);
        cr_assert_lt(++iters, 5000000, "scan does not terminate");
    } while (cur != 0);
}

typedef struct grow_ctx {
    uint32_t next;
    uint32_t per_call;
    uint32_t limit;
    int saw_rehash;
} grow_ctx;

static void grow_mut(dict *d, size_t iter, void *ud) {
    grow_ctx *g = ud;
    for (uint32_t k = 0; k < g->per_call && g->next < g->limit; k++) dict_add(d, mk("n", g->next++));
    if (dict_is_rehashing(d)) g->saw_rehash = 1;
}

Test(dict, scan_guarantee_while_growing) {
    static const uint32_t per_call[] = {1, 3, 17, 64, 1000};
    for (size_t v = 0; v < sizeof per_call / sizeof per_call[0]; v++) {
        dict d;
        dict_init(&d);
        const uint32_t N = 700;
        fill(&d, "o", 0, N);
        finish_rehash(&d);
        size_t start_buckets = dict_buckets(&d);
        scan_rec r = {calloc(N, 1), N, "o", 0};
        grow_ctx g = {0, per_call[v], 40000, 0};
        scan_with(&d, &r, grow_mut, &g);
        cr_assert(g.saw_rehash, "scan never ran across a rehash (per_call=%u)", per_call[v]);
        cr_assert_gt(dict_buckets(&d), start_buckets, "table did not grow during the scan");
        for (uint32_t i = 0; i < N; i++)
            cr_assert_geq(r.seen[i], 1, "o%u missed by a scan during growth (per_call=%u)", i, per_call[v]);
        free(r.seen);
        dict_clear(&d, free_node);
    }
}

/* Growth that starts in the middle of the scan, with a large burst. */
Test(dict, scan_guarantee_burst_growth_mid_scan) {
    dict d;
    dict_init(&d);
    const uint32_t N = 2000;
    fill(&d, "o", 0, N);
    finish_rehash(&d);
    scan_rec r = {calloc(N, 1), N, "o", 0};
    unsigned long cur = 0;
    size_t iters = 0;
    uint32_t next = 0;
    do {
        cur = dict_scan(&d, cur, scan_cb, &r);
        iters++;
        if (iters == 100) {
            for (int k = 0; k < 30000; k++) dict_add(&d, mk("n", next++));
        }
        if (iters > 100 && iters % 10 == 0) dict_rehash(&d, 1);
    } while (cur != 0);
    for (uint32_t i = 0; i < N; i++) cr_assert_geq(r.seen[i], 1, "o%u missed", i);
    free(r.seen);
    dict_clear(&d, free_node);
}

typedef struct shrink_ctx {
    uint32_t next_del;      /* deletes "x" keys in order */
    uint32_t nx;
    uint32_t per_call;
    int saw_shrink;
} shrink_ctx;

static void shrink_mut(dict *d, size_t iter, void *ud) {
    shrink_ctx *s = ud;
    for (uint32_t k = 0; k < s->per_call && s->next_del < s->nx; k++) {
        dnode *x = unlink_id(d, "x", s->next_del++);
        cr_assert_not_null(x);
        dn_free(x);
    }
    if (!dict_is_rehashing(d)) {
        uint8_t b = d->bits[0];
        dict_maybe_shrink(d);
        if (dict_is_rehashing(d) && d->bits[1] < b) s->saw_shrink = 1;
    }
    dict_rehash(d, 1);
}

Test(dict, scan_guarantee_while_shrinking) {
    static const uint32_t per_call[] = {2, 5, 50, 400}; /* >= 2: the table must shrink before the scan ends */
    for (size_t v = 0; v < sizeof per_call / sizeof per_call[0]; v++) {
        dict d;
        dict_init(&d);
        const uint32_t N = 300, NX = 30000;
        /* interleave so kept keys are spread over the table */
        for (uint32_t i = 0; i < NX; i++) {
            dict_add(&d, mk("x", i));
            if (i % 100 == 0 && i / 100 < N) dict_add(&d, mk("o", i / 100));
        }
        finish_rehash(&d);
        cr_assert_eq(dict_size(&d), N + NX);
        scan_rec r = {calloc(N, 1), N, "o", 0};
        shrink_ctx s = {0, NX, per_call[v], 0};
        scan_with(&d, &r, shrink_mut, &s);
        cr_assert(s.saw_shrink, "no shrink happened during the scan (per_call=%u)", per_call[v]);
        for (uint32_t i = 0; i < N; i++)
            cr_assert_geq(r.seen[i], 1, "o%u missed by a scan during shrink (per_call=%u)", i, per_call[v]);
        free(r.seen);
        dict_clear(&d, free_node);
    }
}

/* Mixed: grow and shrink repeatedly inside one scan, randomised. */
Test(dict, scan_guarantee_random_resizes) {
    frand_seed(12345);
    long grew = 0, shrank = 0;
    for (int round = 0; round < 20; round++) {
        dict d;
        dict_init(&d);
        const uint32_t N = 200;
        fill(&d, "o", 0, N);
        scan_rec r = {calloc(N, 1), N, "o", 0};
        uint32_t lo = 0, hi = 0; /* live "x" keys are [lo, hi) */
        unsigned long cur = 0;
        size_t iters = 0;
        do {
            cur = dict_scan(&d, cur, scan_cb, &r);
            /* random resizes early on; later only deletes, so the scan ends */
            uint64_t op = iters < 400 ? frand_below(4) : 1 + frand_below(3);
            uint32_t amount = (uint32_t)frand_below(1000);
            if (op == 0) {
                for (uint32_t k = 0; k < amount; k++) dict_add(&d, mk("x", hi++));
            } else if (op == 1) {
                for (uint32_t k = 0; k < amount && lo < hi; k++) dn_free(unlink_id(&d, "x", lo++));
                dict_maybe_shrink(&d);
            } else if (op == 2) {
                dict_rehash(&d, (int)frand_below(5) + 1);
            } else {
                dict_maybe_shrink(&d);
            }
            if (dict_is_rehashing(&d)) {
                if (d.bits[1] > d.bits[0]) grew++;
                else shrank++;
            }
            cr_assert_lt(++iters, 1000000);
        } while (cur != 0);
        check_invariants(&d);
        for (uint32_t i = 0; i < N; i++) cr_assert_geq(r.seen[i], 1, "round %d: o%u missed", round, i);
        free(r.seen);
        dict_clear(&d, free_node);
    }
    cr_assert(grew > 100 && shrank > 100, "scans saw %ld growing and %ld shrinking steps", grew, shrank);
}

/* ------------------------------------------------------------ foreach */

static void count_cb(void *ud, dnode *n) {
    unsigned char *seen = ud;
    seen[node_id(n)]++;
}

Test(dict, foreach_visits_each_node_once_during_rehash) {
    dict d;
    dict_init(&d);
    const uint32_t N = 2048;
    fill(&d, "f", 0, N);
    uint32_t n = N;
    start_growth_paused(&d, "f", &n);
    for (int s = 0; s < (int)hashsize(d.bits[0]) / 2; s++) dict_rehash(&d, 1);
    cr_assert(dict_is_rehashing(&d) && d.used[0] > 0 && d.used[1] > 0);
    unsigned char *seen = calloc(n, 1);
    long idx_before = d.rehash_idx;
    dict_foreach(&d, count_cb, seen);
    cr_assert_eq(d.rehash_idx, idx_before, "foreach must not move buckets");
    for (uint32_t i = 0; i < n; i++) cr_assert_eq(seen[i], 1, "f%u visited %d times", i, seen[i]);
    free(seen);
    d.pause_rehash--;
    cr_assert_eq(d.pause_rehash, 0);
    dict_clear(&d, free_node);
}

/* ------------------------------------------------------------- random */

Test(dict, random_returns_present_nodes_and_hits_all) {
    frand_seed(42);
    dict d;
    dict_init(&d);
    fill(&d, "q", 0, 10);
    int hits[10] = {0};
    for (int i = 0; i < 20000; i++) {
        dnode *n = dict_random(&d);
        cr_assert_not_null(n);
        uint32_t id = node_id(n);
        cr_assert_lt(id, 10);
        cr_assert_eq(find_id(&d, "q", id), n, "random node is not the stored node");
        hits[id]++;
    }
    for (int i = 0; i < 10; i++) cr_assert_gt(hits[i], 100, "q%d drawn only %d times of 20000", i, hits[i]);
    /* after deletions only live nodes come back */
    for (uint32_t i = 0; i < 10; i += 2) dn_free(unlink_id(&d, "q", i));
    for (int i = 0; i < 5000; i++) {
        dnode *n = dict_random(&d);
        cr_assert(n && (node_id(n) & 1), "deleted node returned by dict_random");
    }
    dict_clear(&d, free_node);
}

Test(dict, random_during_rehash_and_sparse) {
    frand_seed(7);
    dict d;
    dict_init(&d);
    fill(&d, "w", 0, 5000);
    uint32_t n = 5000;
    start_growth_paused(&d, "w", &n);
    for (int s = 0; s < 3000; s++) dict_rehash(&d, 1);
    cr_assert(dict_is_rehashing(&d));
    unsigned char *seen = calloc(n, 1);
    for (int i = 0; i < 50000; i++) {
        dnode *x = dict_random(&d);
        cr_assert_not_null(x);
        cr_assert_eq(find_id(&d, "w", node_id(x)), x);
        seen[node_id(x)] = 1;
    }
    size_t distinct = 0;
    for (uint32_t i = 0; i < n; i++) distinct += seen[i];
    cr_assert_gt(distinct, n / 2, "random covers only %zu of %u keys", distinct, n);
    free(seen);
    d.pause_rehash--;
    finish_rehash(&d);
    /* very sparse: one key left in a big table */
    for (uint32_t i = 1; i < n; i++) dn_free(unlink_id(&d, "w", i));
    finish_rehash(&d);
    for (int i = 0; i < 100; i++) {
        dnode *x = dict_random(&d);
        cr_assert(x && node_id(x) == 0);
    }
    dict_clear(&d, free_node);
}

/* -------------------------------------------------------------- hashing */

/* Independent SipHash-c-d written from the paper ("SipHash: a fast
 * short-input PRF", Aumasson & Bernstein, 2012): state v0..v3 initialised
 * from the key and the "somepseudorandomlygeneratedbytes" constants, message
 * read as little-endian 64-bit words, last word carries len mod 256 in its
 * top byte, c SipRounds per word, 0xff xored into v2, d SipRounds, output
 * v0^v1^v2^v3. */
static uint64_t rotl64(uint64_t x, int b) { return (x << b) | (x >> (64 - b)); }

static void sipround(uint64_t v[4]) {
    v[0] += v[1]; v[1] = rotl64(v[1], 13); v[1] ^= v[0]; v[0] = rotl64(v[0], 32);
    v[2] += v[3]; v[3] = rotl64(v[3], 16); v[3] ^= v[2];
    v[0] += v[3]; v[3] = rotl64(v[3], 21); v[3] ^= v[0];
    v[2] += v[1]; v[1] = rotl64(v[1], 17); v[1] ^= v[2]; v[2] = rotl64(v[2], 32);
}

static uint64_t le64(const uint8_t *p) {
    uint64_t x = 0;
    for (int i = 7; i >= 0; i--) x = (x << 8) | p[i];
    return x;
}

static uint64_t ref_siphash(int c, int dr, const uint8_t key[16], const uint8_t *m, size_t len) {
    uint64_t k0 = le64(key), k1 = le64(key + 8);
    uint64_t v[4] = {k0 ^ 0x736f6d6570736575ull, k1 ^ 0x646f72616e646f6dull, k0 ^ 0x6c7967656e657261ull,
                     k1 ^ 0x7465646279746573ull};
    size_t words = len / 8 + 1; /* always one final word */
    for (size_t w = 0; w < words; w++) {
        uint8_t blk[8] = {0};
        size_t take = len - w * 8 < 8 ? len - w * 8 : 8;
        if (w == words - 1) {
            take = len % 8;
            blk[7] = (uint8_t)(len & 0xff);
        }
        memcpy(blk, m + w * 8, take);
        uint64_t mi = le64(blk);
        v[3] ^= mi;
        for (int i = 0; i < c; i++) sipround(v);
        v[0] ^= mi;
    }
    v[2] ^= 0xff;
    for (int i = 0; i < dr; i++) sipround(v);
    return v[0] ^ v[1] ^ v[2] ^ v[3];
}

static const uint8_t KEY_SEQ[16] = {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15};
static const uint8_t KEY_ZERO[16] = {0};

Test(siphash, reference_matches_published_vectors) {
    uint8_t msg[64];
    for (int i = 0; i < 64; i++) msg[i] = (uint8_t)i;
    /* SipHash-2-4, key 00..0f (paper appendix A and the reference vectors) */
    cr_assert_eq(ref_siphash(2, 4, KEY_SEQ, msg, 0), 0x726fdb47dd0e0e31ull);
    cr_assert_eq(ref_siphash(2, 4, KEY_SEQ, msg, 1), 0x74f839c593dc67fdull);
    cr_assert_eq(ref_siphash(2, 4, KEY_SEQ, msg, 8), 0x93f5f5799a932462ull);
    cr_assert_eq(ref_siphash(2, 4, KEY_SEQ, msg, 15), 0xa129ca6149be45e5ull);
    cr_assert_eq(ref_siphash(2, 4, KEY_SEQ, msg, 63), 0x958a324ceb064572ull);
    /* SipHash-1-3, all-zero key, message 00 01 02 ... (reference
     * implementation github.com/veorq/SipHash, as used by OCaml's tests) */
    static const uint64_t sip13_zero_key[16] = {
        0xd1fba762150c532cull, 0x68a914128e01e473ull, 0x010bac45c41e3669ull, 0x4d4c9a4a8ef6e0adull,
        0x7cc43f98813e4dbdull, 0x5abe2169dff36275ull, 0xe3c25f87624f1cdbull, 0x2f098ab0c751325aull,
        0xead411e67ebe2eeaull, 0x75927f9d95124362ull, 0xaf9f77a65ab51a1dull, 0xfe64ce8b6617fcffull,
        0xa6baf4fb0f9fe1c2ull, 0xa0cf3211850f8e0dull, 0x7f86049379fbfe67ull, 0xf30eb725bb91c9eaull,
    };
    for (size_t len = 0; len < 16; len++)
        cr_assert_eq(ref_siphash(1, 3, KEY_ZERO, msg, len), sip13_zero_key[len], "ref 1-3 zero key len %zu", len);
}

Test(siphash, dict_hash_is_siphash13) {
    uint8_t msg[65];
    for (int i = 0; i < 65; i++) msg[i] = (uint8_t)i;
    dict_set_seed(KEY_SEQ);
    for (size_t len = 0; len <= 64; len++) {
        uint64_t want = ref_siphash(1, 3, KEY_SEQ, msg, len);
        uint64_t got = dict_hash((const char *)msg, len);
        cr_assert_eq(got, want, "key 00..0f len %zu: dict_hash %016llx, SipHash-1-3 %016llx", len,
                     (unsigned long long)got, (unsigned long long)want);
    }
    dict_set_seed(KEY_ZERO);
    cr_assert_eq(dict_hash((const char *)msg, 0), 0xd1fba762150c532cull);
    cr_assert_eq(dict_hash((const char *)msg, 7), 0x2f098ab0c751325aull);
    cr_assert_eq(dict_hash((const char *)msg, 15), 0xf30eb725bb91c9eaull);
    /* high bytes (sign extension bugs) and unaligned input */
    uint8_t hi[80];
    for (int i = 0; i < 80; i++) hi[i] = (uint8_t)(0xff - i * 3);
    uint8_t key[16];
    for (int i = 0; i < 16; i++) key[i] = (uint8_t)(0xa5 ^ (i * 17));
    dict_set_seed(key);
    for (size_t off = 0; off < 8; off++)
        for (size_t len = 0; len <= 64; len++)
            cr_assert_eq(dict_hash((const char *)hi + off, len), ref_siphash(1, 3, key, hi + off, len),
                         "off %zu len %zu", off, len);
}

Test(siphash, seed_changes_hashes) {
    uint8_t s1[16], s2[16];
    for (int i = 0; i < 16; i++) s1[i] = (uint8_t)i, s2[i] = (uint8_t)(i * 7 + 1);
    char k[32];
    int differ = 0;
    for (uint32_t i = 0; i < 100; i++) {
        size_t kl = keyname(k, "seed", i);
        dict_set_seed(s1);
        uint64_t a = dict_hash(k, kl), a2 = dict_hash(k, kl);
        dict_set_seed(s2);
        uint64_t b = dict_hash(k, kl);
        cr_assert_eq(a, a2, "hash must be deterministic for a seed");
        differ += a != b;
    }
    cr_assert_eq(differ, 100, "only %d of 100 hashes changed with the seed", differ);
    /* one key bit flip changes the hash */
    dict_set_seed(s1);
    uint64_t h1 = dict_hash("abc", 3);
    s1[15] ^= 0x80;
    dict_set_seed(s1);
    cr_assert_neq(dict_hash("abc", 3), h1);
}

Test(dict, overhead_counts_bucket_arrays) {
    dict d;
    dict_init(&d);
    cr_assert_eq(dict_overhead(&d), 0);
    fill(&d, "m", 0, 100);
    finish_rehash(&d);
    cr_assert_eq(dict_overhead(&d), hashsize(d.bits[0]) * sizeof(dnode *));
    uint32_t n = 100;
    start_growth_paused(&d, "m", &n);
    cr_assert_eq(dict_overhead(&d), (hashsize(d.bits[0]) + hashsize(d.bits[1])) * sizeof(dnode *));
    d.pause_rehash--;
    dict_clear(&d, free_node);
}

/* The _hashed lookups (hash computed earlier by the caller, as the batched
 * executor does) find exactly what dict_find finds, whether the table is
 * stable or in the middle of a rehash, including absent keys; the prefetch
 * hints change nothing. */
Test(dict, find_hashed_matches_find_at_every_rehash_step) {
    dict d;
    dict_init(&d);
    cr_assert_null(dict_find_hashed(&d, "x", 1, dict_hash("x", 1)), "empty dict");
    dict_prefetch_bucket(&d, 0);
    dict_prefetch_node(&d, 0);
    uint32_t n = 0;
    int checked_rehashing = 0;
    while (n < 3000) {
        dict_add(&d, mk("f", n++));
        d.pause_rehash++;
        for (uint32_t i = 0; i < n + 5; i += (n > 200 ? 37 : 1)) {
            char k[32];
            size_t kl = keyname(k, "f", i);
            uint64_t h = dict_hash(k, kl);
            dict_prefetch_bucket(&d, h);
            dict_prefetch_node(&d, h);
            dnode *want = dict_find(&d, k, kl), **l = dict_find_link_hashed(&d, k, kl, h);
            cr_assert_eq(dict_find_hashed(&d, k, kl, h), want, "f%u (rehash_idx=%ld)", i, d.rehash_idx);
            cr_assert_eq(l ? *l : NULL, want);
            cr_assert_eq(want != NULL, i < n);
        }
        checked_rehashing += dict_is_rehashing(&d);
        d.pause_rehash--;
    }
    cr_assert_gt(checked_rehashing, 100);
    check_invariants(&d);
    dict_clear(&d, free_node);
}

/* ------------------------------------------------ batched insertion */

/* Add ids through a batch; every duplicate handed back is recorded (its
 * tag must be its id) and freed. Returns the number of duplicates. */
static int batch_fill(dict_batch *b, const char *prefix, const uint32_t *ids, size_t n, uint32_t *dup_tags) {
    int dups = 0;
    size_t tag;
    for (size_t i = 0; i < n; i++) {
        dnode *n0 = mk(prefix, ids[i]);
        dnode *dup = dict_batch_add(b, n0, dict_hash(dn_key(n0), dn_klen(n0)), ids[i], &tag);
        if (dup) {
            cr_assert_eq(node_id(dup), tag, "the duplicate comes back with its own tag");
            dup_tags[dups++] = (uint32_t)tag;
            dn_free(dup);
        }
    }
    dnode *dup;
    while ((dup = dict_batch_flush(b, &tag))) {
        cr_assert_eq(node_id(dup), tag);
        dup_tags[dups++] = (uint32_t)tag;
        dn_free(dup);
    }
    return dups;
}

Test(dict, reserve_sizes_an_empty_table_only) {
    dict d;
    dict_init(&d);
    dict_reserve(&d, 100000);
    cr_assert_geq(2 * hashsize(d.bits[0]), 100000, "room for 100k at load factor 2");
    cr_assert_lt(hashsize(d.bits[0]), 100000, "no bigger than growth would make it");
    unsigned bits = d.bits[0];
    fill(&d, "r", 0, 99000);
    cr_assert(!dict_is_rehashing(&d), "no rehash while filling what was reserved");
    cr_assert_eq(d.bits[0], bits);
    dict_reserve(&d, 10000000); /* in use: no effect */
    cr_assert_eq(d.bits[0], bits);
    check_invariants(&d);
    dict_clear(&d, free_node);
}

Test(dict, batch_inserts_in_order_and_finds_duplicates) {
    /* reserved for 5000: the batched path; then 20000 more: the table must
     * grow, so the one-at-a-time path takes over mid-stream */
    for (int reserve = 0; reserve < 2; reserve++) {
        dict d;
        dict_init(&d);
        if (reserve) dict_reserve(&d, 5000);
        fill(&d, "b", 0, 100); /* present before the batch */
        enum { N = 25000 };
        static uint32_t ids[N + 40], dups[N];
        size_t n = 0;
        for (uint32_t i = 100; i < N; i++) {
            ids[n++] = i;
            if (i % 1000 == 0) ids[n++] = i;         /* right after itself: both in the queue */
            if (i % 997 == 0) ids[n++] = i - 50;     /* 50 back: already inserted */
        }
        ids[n++] = 7;                                /* present before the batch */
        dict_batch b;
        dict_batch_init(&b, &d);
        int nd = batch_fill(&b, "b", ids, n, dups);
        int want = 0;
        for (uint32_t i = 100; i < N; i++) want += (i % 1000 == 0) + (i % 997 == 0);
        cr_assert_eq(nd, want + 1, "reserve=%d: %d duplicates, want %d", reserve, nd, want + 1);
        cr_assert_eq(dups[nd - 1], 7);
        cr_assert_eq(dict_size(&d), N);
        finish_rehash(&d);
        check_invariants(&d);
        assert_all_present(&d, "b", 0, N);
        dict_clear(&d, free_node);
    }
}
