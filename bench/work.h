/* work.h - ferry-bench workloads: test table and pre-encoded request pools.
 *
 * Why: choosing keys and formatting RESP at run time would cost the client
 * more per request than the server spends executing it. Each test is encoded
 * once, before timing, into one contiguous buffer of n requests with random
 * keys; connections then send slices of it, cycling. The first `tail`
 * requests are repeated after the last one, so any run of up to `tail`
 * consecutive requests starting at i < n is a single contiguous slice and a
 * whole pipeline batch goes out with one send() and no copy.
 */
#ifndef FB_WORK_H
#define FB_WORK_H

#include <stddef.h>
#include <stdint.h>

enum {
    FB_T_PING_INLINE,
    FB_T_PING_MBULK,
    FB_T_SET,
    FB_T_GET,
    FB_T_INCR,
    FB_T_MSET,
    FB_T_MGET,
    FB_T_LRANGE_100, /* LRANGE mylist 0 99 */
    FB_T_LRANGE_300,
    FB_T_LRANGE_500,
    FB_T_LRANGE_600,
    FB_T_HGETALL,    /* HGETALL myhash */
    FB_T_SMEMBERS,   /* SMEMBERS myset */
    FB_T_ZRANGE,     /* ZRANGE myzset 0 -1 WITHSCORES */
    FB_T_MIXED,
    FB_T_COUNT
};

#define FB_MULTI_KEYS 10 /* keys per MSET/MGET, like redis-benchmark's MSET */
#define FB_LIST_LEN 600  /* elements the lrange tests' prefill pushes (LRANGE 0 599 needs 600) */
#define FB_COLL_SIZE 1000 /* fields / members of the hgetall, smembers and zrange collections */

/* tests that run when -t is not given: all but mixed and the collection
 * tests (these replace a key's data first, see prefill.h) */
#define FB_T_DEFAULT_MASK ((1u << FB_T_LRANGE_100) - 1)

typedef struct fb_pool {
    char *buf;       /* all requests back to back */
    size_t *off;     /* off[i]: start of request i, i in [0, n + tail]; off[n + tail] = end */
    size_t n;        /* distinct requests: cursors cycle in [0, n) */
    size_t tail;     /* requests [0, tail) repeated after request n - 1 */
} fb_pool;

typedef struct fb_workload {
    int test;             /* FB_T_* */
    int datasize;         /* -d */
    long long keyspace;   /* -r; 0: the fixed key "key:__rand_int__" (collection tests ignore it) */
    int ratio_set, ratio_get; /* mixed: SET:GET */
    uint64_t seed;
} fb_workload;

/* lower-case name used by -t ("ping" selects both ping tests, "lrange" the
 * four lrange ones) */
const char *fb_test_tname(int test);
/* The one fixed key a collection test reads (and its prefill writes):
 * "mylist", "myhash", "myset" or "myzset"; NULL for the other tests. */
const char *fb_test_coll_key(int test);
/* Name shown in the output, as redis-benchmark prints it ("SET", "MSET (10 keys)").
 * Writes into buf (for the mixed test, which includes the ratio). */
const char *fb_test_title(const fb_workload *w, char *buf, size_t cap);

/* Encode the pool for w, able to serve batches of up to max_batch requests.
 * Returns 0, or -1 when out of memory. */
int fb_pool_build(fb_pool *p, const fb_workload *w, size_t max_batch);
void fb_pool_free(fb_pool *p);

/* k consecutive requests from index i (i < n, k <= tail) as one slice */
static inline const char *fb_pool_slice(const fb_pool *p, size_t i, size_t k, size_t *len) {
    *len = p->off[i + k] - p->off[i];
    return p->buf + p->off[i];
}

/* small fast PRNG (splitmix64), also used for cursor placement */
uint64_t fb_rand(uint64_t *state);

#endif
