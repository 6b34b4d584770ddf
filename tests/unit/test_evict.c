/* test_evict.c - Criterion unit tests for src/keyspace/evict.c (maxmemory eviction)
 * and dict_sample (src/base/dict.c).
 *
 * Why: eviction quality rests on three pieces that integration tests can only
 * see statistically: the LFU counter (logarithmic increment with the
 * configured factor, decay by idle minutes), the pool's ordering (it must
 * always hold the most evictable candidates seen, in order, with the best at
 * the right), and the samplers (valid nodes within the bucket budget, also
 * during a rehash; volatile-* policies draw from the volatile index and must
 * find a few volatile keys among very many at once). Then evict_perform itself on a small keyspace
 * with controlled stamps: it must get under the limit, pick old/rare/soon-
 * expiring keys, leave non-volatile keys alone under volatile-* policies and
 * report EVICT_FAIL when nothing may go. Time is srv.lruclock (seconds);
 * srv.el is NULL, so no timer is started (tenacity 100 = no time limit).
 */
#include <criterion/criterion.h>

#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "db.h"
#include "evict.h"
#include "frand.h"
#include "server.h"
#include "zmalloc.h"

#define T0 1700000000000LL

static db *d0, *d1;

static void setup(void) {
    memset(&srv.stats, 0, sizeof srv.stats);
    config_defaults(&srv.cfg);
    srv.cfg.maxmemory_eviction_tenacity = 100;
    srv.now_ms = T0;
    srv.lruclock = (uint32_t)(T0 / 1000);
    db_init_all(2);
    d0 = db_get(0);
    d1 = db_get(1);
    frand_seed(4242);
}

TestSuite(evict, .init = setup);

static double uniform(void) { return (double)(frand64() >> 11) * 0x1p-53; }

/* ------------------------------------------------------------- LFU counter */

Test(evict, lfu_incr_below_init_always_counts) {
    /* at or below LFU_INIT_VAL the probability is 1 whatever the factor */
    for (int f = 0; f <= 1000; f += 250) {
        cr_assert_eq(evict_lfu_log_incr(0, f, 0.999999), 1);
        cr_assert_eq(evict_lfu_log_incr(LFU_INIT_VAL, f, 0.999999), LFU_INIT_VAL + 1);
    }
    cr_assert_eq(evict_lfu_log_incr(255, 0, 0.0), 255, "saturates");
}

Test(evict, lfu_incr_probability_threshold) {
    /* counter 15, factor 10: p = 1/((15-5)*10+1) = 1/101 */
    double p = 1.0 / 101.0;
    cr_assert_eq(evict_lfu_log_incr(15, 10, p * 0.999), 16);
    cr_assert_eq(evict_lfu_log_incr(15, 10, p * 1.001), 15);
    /* factor 0: always */
    cr_assert_eq(evict_lfu_log_incr(200, 0, 0.99), 201);
}

static unsigned hits(int factor, long n) {
    uint8_t c = LFU_INIT_VAL;
    for (long i = 0; i < n; i++) c = evict_lfu_log_incr(c, factor, uniform());
    return c;
}

/* The counter after n hits if every step took its expected number of hits:
 * going from c to c+1 takes (c - LFU_INIT_VAL) * factor + 1 on average. */
static double expected_counter(int factor, long n) {
    double c = LFU_INIT_VAL, used = 0;
    while (c < 255) {
        double step = (c - LFU_INIT_VAL) * factor + 1;
        if (used + step > n) return c + (n - used) / step;
        used += step;
        c++;
    }
    return 255;
}

/* Mean counter over `trials` runs of n hits is near the expectation. */
static void check_growth(int factor, long n, int trials, double tol) {
    double sum = 0;
    for (int t = 0; t < trials; t++) sum += hits(factor, n);
    double mean = sum / trials, want = expected_counter(factor, n);
    cr_assert(mean > want - tol && mean < want + tol, "factor %d, %ld hits: mean counter %.2f, expected %.2f", factor,
              n, mean, want);
}

Test(evict, lfu_incr_growth_is_logarithmic) {
    cr_assert_eq(hits(0, 100), LFU_INIT_VAL + 100, "factor 0: every hit counts");
    cr_assert_eq(hits(0, 1000), 255);
    check_growth(1, 100, 200, 1.0);
    check_growth(10, 100, 200, 1.0);
    check_growth(10, 1000, 100, 1.0);
    check_growth(100, 1000, 300, 0.8);
    check_growth(10, 100000, 3, 4.0);
    cr_assert_eq(hits(10, 2000000), 255, "saturates (redis.conf: 1M hits reach 255)");
}

Test(evict, lfu_decay) {
    cr_assert_eq(evict_lfu_decay(10, 100, 100, 1), 10);
    cr_assert_eq(evict_lfu_decay(10, 100, 103, 1), 7);
    cr_assert_eq(evict_lfu_decay(10, 100, 103, 2), 9);
    cr_assert_eq(evict_lfu_decay(10, 100, 109, 3), 7);
    cr_assert_eq(evict_lfu_decay(10, 100, 110, 1), 0);
    cr_assert_eq(evict_lfu_decay(10, 100, 500, 1), 0);
    cr_assert_eq(evict_lfu_decay(10, 100, 500, 0), 10, "decay time 0: never");
    /* minutes are 16-bit: a stamp "after" now wrapped (Redis's LFUTimeElapsed) */
    cr_assert_eq(evict_lfu_decay(10, 65530, 3, 1), 2, "65535 - 65530 + 3 minutes");
}

Test(evict, lfu_access_stamps_and_decays) {
    srv.cfg.maxmemory_policy = MAXMEMORY_ALLKEYS_LFU;
    dnode *n = db_set_string(d0, "k", 1, "v", 1, -1);
    cr_assert_eq(dn_lfu_counter(n), LFU_INIT_VAL);
    cr_assert_eq(dn_lfu_ldt(n), evict_lfu_minutes(), "LFU stamp is in minutes");
    evict_lfu_access(n);
    cr_assert_eq(dn_lfu_counter(n), LFU_INIT_VAL + 1, "first access from the initial value always counts");
    cr_assert_eq(evict_lfu_get(n), LFU_INIT_VAL + 1);
    srv.lruclock += 4 * 60; /* four idle minutes, decay time 1 */
    cr_assert_eq(evict_lfu_get(n), LFU_INIT_VAL + 1 - 4);
    cr_assert_eq(dn_lfu_counter(n), LFU_INIT_VAL + 1, "reading the counter does not change it");
    srv.cfg.lfu_decay_time = 2;
    cr_assert_eq(evict_lfu_get(n), LFU_INIT_VAL + 1 - 2);
    evict_lfu_access(n); /* decays to 4, then 4 <= INIT: +1 */
    cr_assert_eq(dn_lfu_counter(n), 5);
    cr_assert_eq(dn_lfu_ldt(n), evict_lfu_minutes());
}

Test(evict, overwrite_keeps_lfu_only_under_lfu) {
    srv.cfg.maxmemory_policy = MAXMEMORY_ALLKEYS_LFU;
    dnode *n = db_set_string(d0, "k", 1, "v", 1, -1);
    dn_lfu_set(n, dn_lfu_ldt(n), 40);
    n = db_set_string(d0, "k", 1, "w", 1, -1);          /* in place */
    cr_assert_eq(dn_lfu_counter(n), 40);
    n = db_set_string(d0, "k", 1, "longer", 6, -1);     /* new node */
    cr_assert_eq(dn_lfu_counter(n), 40);
    /* an expired key's successor is a new key, in place or not */
    n = db_set_string(d0, "e", 1, "v", 1, T0 + 10);
    dn_lfu_set(n, dn_lfu_ldt(n), 40);
    dnode *f = db_set_string(d0, "f", 1, "v", 1, T0 + 10);
    dn_lfu_set(f, dn_lfu_ldt(f), 40);
    srv.now_ms = T0 + 20;
    cr_assert_eq(dn_lfu_counter(db_set_string(d0, "e", 1, "w", 1, T0 + 50)), LFU_INIT_VAL);
    cr_assert_eq(dn_lfu_counter(db_set_string(d0, "f", 1, "much longer", 11, -1)), LFU_INIT_VAL);
    srv.cfg.maxmemory_policy = MAXMEMORY_ALLKEYS_LRU;
    n = db_set_string(d0, "k", 1, "x", 1, -1);
    cr_assert_eq(n->lru, evict_lru_clock(), "under LRU the field is the clock again");
}

/* ------------------------------------------------------------------- pool */

static void assert_pool_sorted(const evpool *p) {
    int seen_free = 0;
    for (int k = 0; k < EVPOOL_SIZE; k++) {
        if (!p->e[k].key) {
            seen_free = 1;
            continue;
        }
        cr_assert(!seen_free, "used entry %d after a free one", k);
        if (k > 0) cr_assert_leq(p->e[k - 1].idle, p->e[k].idle, "slot %d out of order", k);
    }
    /* every slot owns one of the key buffers, none shared */
    for (int k = 0; k < EVPOOL_SIZE; k++)
        for (int j = 0; j < k; j++) cr_assert_neq(p->e[k].cache, p->e[j].cache, "slots %d and %d share a buffer", j, k);
}

Test(evict, pool_keeps_best_in_order) {
    evpool p;
    evpool_init(&p);
    enum { N = 500 };
    uint64_t v[N];
    for (int i = 0; i < N; i++) v[i] = (uint64_t)i * 7 + 3;
    for (int i = N - 1; i > 0; i--) { /* shuffle */
        int j = (int)frand_below((uint64_t)i + 1);
        uint64_t t = v[i]; v[i] = v[j]; v[j] = t;
    }
    for (int i = 0; i < N; i++) {
        char key[32];
        int kl = snprintf(key, sizeof key, "key:%llu", (unsigned long long)v[i]);
        evpool_insert(&p, v[i], (int)(v[i] % 3), key, (size_t)kl);
        assert_pool_sorted(&p);
    }
    /* exactly the 16 largest, ascending, each with its own key and db */
    for (int k = 0; k < EVPOOL_SIZE; k++) {
        uint64_t want = (uint64_t)(N - EVPOOL_SIZE + k) * 7 + 3;
        cr_assert_not_null(p.e[k].key);
        cr_assert_eq(p.e[k].idle, want, "slot %d: %llu want %llu", k, (unsigned long long)p.e[k].idle,
                     (unsigned long long)want);
        char key[32];
        int kl = snprintf(key, sizeof key, "key:%llu", (unsigned long long)want);
        cr_assert_eq(p.e[k].klen, (uint32_t)kl);
        cr_assert(memcmp(p.e[k].key, key, (size_t)kl) == 0);
        cr_assert_eq(p.e[k].dbid, (int)(want % 3));
    }
    /* less idle than everything in a full pool: refused */
    cr_assert_eq(evpool_insert(&p, 0, 0, "x", 1), -1);
    evpool_clear(&p);
}

Test(evict, pool_partial_fill_and_long_keys) {
    evpool p;
    evpool_init(&p);
    size_t base = zmalloc_used();
    char longkey[300];
    memset(longkey, 'L', sizeof longkey);
    cr_assert_eq(evpool_insert(&p, 10, 0, "a", 1), 0);
    cr_assert_eq(evpool_insert(&p, 5, 0, longkey, sizeof longkey), 0, "less idle goes left");
    cr_assert_eq(evpool_insert(&p, 20, 1, "c", 1), 2);
    cr_assert_eq(evpool_insert(&p, 15, 1, "b", 1), 2);
    assert_pool_sorted(&p);
    cr_assert_gt(zmalloc_used(), base, "a long key is copied to the heap");
    cr_assert(memcmp(p.e[0].key, longkey, sizeof longkey) == 0);
    cr_assert(memcmp(p.e[1].key, "a", 1) == 0);
    cr_assert(memcmp(p.e[2].key, "b", 1) == 0);
    cr_assert(memcmp(p.e[3].key, "c", 1) == 0);
    cr_assert_null(p.e[4].key);
    /* fill the 12 free slots, then one more pushes the long key out on the left */
    for (int i = 0; i < EVPOOL_SIZE - 4 + 1; i++) evpool_insert(&p, 100 + (uint64_t)i, 0, "z", 1);
    assert_pool_sorted(&p);
    cr_assert_eq(p.e[0].idle, 10);
    cr_assert_eq(p.e[EVPOOL_SIZE - 1].idle, 112);
    cr_assert_eq(zmalloc_used(), base, "the dropped long key was freed");
    evpool_clear(&p);
}

/* ---------------------------------------------------------------- sampling */

static size_t kname(char *buf, int i) { return (size_t)snprintf(buf, 32, "key:%d", i); }

static dnode *put(db *d, int i, int64_t exp, size_t vlen) {
    char k[32], v[2048];
    memset(v, 'v', vlen);
    return db_set_string(d, k, kname(k, i), v, vlen, exp);
}

Test(evict, sample_returns_live_nodes_up_to_count) {
    for (int i = 0; i < 2000; i++) put(d0, i, -1, 8);
    dnode *out[64];
    cr_assert_eq(dict_sample(&d1->keys, out, 5, 50), 0, "empty dict");
    cr_assert_eq(dict_sample(&d0->keys, out, 64, 10000), 64);
    for (int round = 0; round < 200; round++) {
        size_t got = dict_sample(&d0->keys, out, 5, 50);
        cr_assert(got >= 1 && got <= 5, "got %zu", got);
        for (size_t i = 0; i < got; i++) cr_assert_eq(db_lookup(d0, dn_key(out[i]), dn_klen(out[i])), out[i]);
    }
}

static int in_dict(dict *d, dnode *n) { return dict_find(d, dn_key(n), dn_klen(n)) == n; }

Test(evict, sample_while_rehashing) {
    int i = 0;
    while (!dict_is_rehashing(&d0->keys) || dict_size(&d0->keys) < 1000) {
        put(d0, i++, -1, 8);
        cr_assert_lt(i, 1000000);
    }
    cr_assert(dict_is_rehashing(&d0->keys));
    dnode *out[16];
    for (int round = 0; round < 300; round++) {
        size_t got = dict_sample(&d0->keys, out, 16, 160);
        cr_assert_gt(got, 0);
        for (size_t j = 0; j < got; j++) cr_assert(in_dict(&d0->keys, out[j]));
    }
}

/* ---------------------------------------------------------- evict_perform */

static int key_index(const dnode *n) {
    int i = -1;
    sscanf(dn_key(n), "key:%d", &i);
    return i;
}

typedef struct survivors {
    int alive[4000];
} survivors;

static void mark_alive(void *ud, dnode *n) { ((survivors *)ud)->alive[key_index(n)] = 1; }

static void collect(db *d, survivors *s) {
    memset(s, 0, sizeof *s);
    dict_foreach(&d->keys, mark_alive, s);
}

/* Fill 2000 keys of ~1 KB, then set maxmemory so ~a quarter must go. */
static void fill_and_limit(int64_t (*expire_of)(int), void (*stamp)(dnode *, int)) {
    for (int i = 0; i < 2000; i++) {
        dnode *n = put(d0, i, expire_of ? expire_of(i) : -1, 1000);
        if (stamp) stamp(n, i);
    }
    srv.cfg.maxmemory = zmalloc_used() - 500 * 1040;
}

static void lru_by_index(dnode *n, int i) { n->lru = (srv.lruclock - 2000 + (uint32_t)i) & 0xFFFFFF; }

Test(evict, allkeys_lru_evicts_oldest) {
    srv.cfg.maxmemory_policy = MAXMEMORY_ALLKEYS_LRU;
    fill_and_limit(NULL, lru_by_index);
    cr_assert_eq(evict_perform(), EVICT_OK);
    cr_assert_leq(zmalloc_used(), srv.cfg.maxmemory);
    cr_assert_geq(srv.stats.evictedkeys, 400);
    survivors s;
    collect(d0, &s);
    int old_alive = 0, new_alive = 0;
    for (int i = 0; i < 500; i++) old_alive += s.alive[i];
    for (int i = 1500; i < 2000; i++) new_alive += s.alive[i];
    cr_assert_lt(old_alive, 250, "oldest quarter: %d of 500 survive", old_alive);
    cr_assert_gt(new_alive, 490, "newest quarter: %d of 500 survive", new_alive);
}

static void lfu_by_index(dnode *n, int i) {
    dn_lfu_set(n, evict_lfu_minutes(), (uint8_t)(i % 2 ? 100 : LFU_INIT_VAL));
}

Test(evict, allkeys_lfu_evicts_rare) {
    srv.cfg.maxmemory_policy = MAXMEMORY_ALLKEYS_LFU;
    fill_and_limit(NULL, lfu_by_index);
    cr_assert_eq(evict_perform(), EVICT_OK);
    survivors s;
    collect(d0, &s);
    int hot_dead = 0;
    for (int i = 1; i < 2000; i += 2) hot_dead += !s.alive[i];
    cr_assert_lt(hot_dead, 10, "frequent keys evicted: %d", hot_dead);
}

static int64_t every_other_volatile(int i) { return i % 2 ? T0 + 1000000 + i * 1000LL : -1; }

Test(evict, volatile_policies_spare_persistent_keys) {
    int policies[] = {MAXMEMORY_VOLATILE_LRU, MAXMEMORY_VOLATILE_LFU, MAXMEMORY_VOLATILE_RANDOM,
                      MAXMEMORY_VOLATILE_TTL};
    for (size_t p = 0; p < sizeof policies / sizeof policies[0]; p++) {
        db_flush(d0);
        srv.stats.evictedkeys = 0;
        srv.cfg.maxmemory = 0;
        srv.cfg.maxmemory_policy = policies[p];
        fill_and_limit(every_other_volatile, NULL);
        cr_assert_eq(evict_perform(), EVICT_OK, "policy %d", policies[p]);
        cr_assert_gt(srv.stats.evictedkeys, 400);
        survivors s;
        collect(d0, &s);
        for (int i = 0; i < 2000; i += 2) cr_assert(s.alive[i], "policy %d evicted persistent key %d", policies[p], i);
        cr_assert_eq(d0->expires, 1000 - srv.stats.evictedkeys);
    }
}

/* A few volatile keys among very many persistent ones: the volatile-*
 * policies sample the volatile index, so a run with no time to spare
 * (tenacity 0) still finds its victims at once. Sampling the key table
 * instead, a run found none in time, let the write through and memory went
 * past the limit (the flaky integration test of this). */
Test(evict, sparse_volatile_keys_are_found_at_once) {
    int policies[] = {MAXMEMORY_VOLATILE_LRU, MAXMEMORY_VOLATILE_LFU, MAXMEMORY_VOLATILE_RANDOM,
                      MAXMEMORY_VOLATILE_TTL};
    for (int i = 0; i < 200000; i++) put(d0, i, -1, 8);
    srv.cfg.maxmemory_eviction_tenacity = 0;
    for (size_t p = 0; p < sizeof policies / sizeof policies[0]; p++) {
        srv.cfg.maxmemory = 0;
        for (int i = 0; i < 10; i++) put(d0, 1000000 + i, T0 + 100000, 1000);
        srv.cfg.maxmemory_policy = policies[p];
        srv.cfg.maxmemory = zmalloc_used() - 5 * 1040;
        srv.stats.evictedkeys = 0;
        cr_assert_eq(evict_perform(), EVICT_OK, "policy %d", policies[p]);
        cr_assert_geq(srv.stats.evictedkeys, 5, "policy %d", policies[p]);
        cr_assert_leq(zmalloc_used(), srv.cfg.maxmemory);
        cr_assert_eq(dict_size(&d0->keys) - d0->expires, 200000, "policy %d evicted a persistent key", policies[p]);
        for (int i = 0; i < 10; i++) { /* drop the survivors for the next policy */
            char k[32];
            db_delete(d0, k, kname(k, 1000000 + i));
        }
        cr_assert_eq(d0->expires, 0);
    }
}

Test(evict, volatile_ttl_evicts_soonest) {
    srv.cfg.maxmemory_policy = MAXMEMORY_VOLATILE_TTL;
    fill_and_limit(every_other_volatile, NULL);
    cr_assert_eq(evict_perform(), EVICT_OK);
    survivors s;
    collect(d0, &s);
    int soon_alive = 0, late_alive = 0;
    for (int i = 1; i < 1000; i += 2) soon_alive += s.alive[i];
    for (int i = 1001; i < 2000; i += 2) late_alive += s.alive[i];
    cr_assert_lt(soon_alive, late_alive / 2, "soon-expiring survivors %d, late %d", soon_alive, late_alive);
}

Test(evict, fail_when_nothing_evictable) {
    srv.cfg.maxmemory_policy = MAXMEMORY_NO_EVICTION;
    fill_and_limit(NULL, NULL);
    cr_assert_eq(evict_perform(), EVICT_FAIL);
    cr_assert_eq(srv.stats.evictedkeys, 0);
    cr_assert_eq(dict_size(&d0->keys), 2000);
    srv.cfg.maxmemory_policy = MAXMEMORY_VOLATILE_LRU; /* no key has a TTL */
    cr_assert_eq(evict_perform(), EVICT_FAIL);
    cr_assert_eq(dict_size(&d0->keys), 2000);
    cr_assert_neq(srv.stats.eviction_exceeded_since_us, 0, "over the limit is timed");
    srv.cfg.maxmemory = 0;
    cr_assert_eq(evict_perform(), EVICT_OK);
    cr_assert_eq(srv.stats.eviction_exceeded_since_us, 0);
}

Test(evict, random_policies_use_every_db) {
    srv.cfg.maxmemory_policy = MAXMEMORY_ALLKEYS_RANDOM;
    for (int i = 0; i < 1000; i++) {
        put(d0, i, -1, 1000);
        put(d1, i, -1, 1000);
    }
    srv.cfg.maxmemory = zmalloc_used() - 600 * 1040;
    cr_assert_eq(evict_perform(), EVICT_OK);
    cr_assert_lt(dict_size(&d0->keys), 1000);
    cr_assert_lt(dict_size(&d1->keys), 1000);
    cr_assert_eq(srv.stats.evictedkeys, 2000 - dict_size(&d0->keys) - dict_size(&d1->keys));
}

Test(evict, long_keys_through_the_pool) {
    srv.cfg.maxmemory_policy = MAXMEMORY_ALLKEYS_LRU;
    char k[200], v[1000];
    memset(v, 'v', sizeof v);
    memset(k, 'K', sizeof k);
    for (int i = 0; i < 1000; i++) {
        int n = snprintf(k + 150, 50, "%d", i);
        dnode *d = db_set_string(d0, k, 150 + (size_t)n, v, sizeof v, -1);
        d->lru = (srv.lruclock - 1000 + (uint32_t)i) & 0xFFFFFF;
    }
    srv.cfg.maxmemory = zmalloc_used() - 300 * 1200;
    cr_assert_eq(evict_perform(), EVICT_OK);
    cr_assert_geq(srv.stats.evictedkeys, 250);
    /* oldest first: key 999 (newest) is still there */
    int n = snprintf(k + 150, 50, "%d", 999);
    cr_assert_not_null(db_lookup(d0, k, 150 + (size_t)n));
}
