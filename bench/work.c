/* work.c - test table and request-pool encoding for ferry-bench (see work.h).
 *
 * Keys follow redis-benchmark: "key:__rand_int__" (and "counter:__rand_int__"
 * for INCR) where, with -r N, each __rand_int__ is replaced by an independent
 * 12-digit zero-padded random number in [0, N); without -r the placeholder is
 * sent literally, so every request hits the same key. Values are -d bytes of
 * 'x'. All requests are RESP multibulk except PING_INLINE.
 *
 * The collection tests read one fixed key, as redis-benchmark's LRANGE_* do
 * ("LRANGE mylist 0 99" ... "0 599"; HGETALL myhash, SMEMBERS myset and
 * ZRANGE myzset 0 -1 WITHSCORES are ferry-bench's own), so their pool is one
 * request; prefill.c puts the data there before the test.
 */
#include "work.h"
#include "out.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define FB_POOL_TARGET_BYTES (16u << 20) /* pool size aimed at */
#define FB_POOL_MIN 1024
#define FB_POOL_MAX 65536
#define FB_KEYLEN_DIGITS 12

static const char *const fb_tnames[FB_T_COUNT] = {
    "ping_inline", "ping_mbulk", "set", "get", "incr", "mset", "mget",
    "lrange_100", "lrange_300", "lrange_500", "lrange_600", "hgetall", "smembers", "zrange",
    "mixed",
};

const char *fb_test_tname(int test) { return fb_tnames[test]; }

const char *fb_test_coll_key(int test) {
    switch (test) {
    case FB_T_LRANGE_100: case FB_T_LRANGE_300: case FB_T_LRANGE_500: case FB_T_LRANGE_600:
        return "mylist";
    case FB_T_HGETALL: return "myhash";
    case FB_T_SMEMBERS: return "myset";
    case FB_T_ZRANGE: return "myzset";
    default: return NULL;
    }
}

const char *fb_test_title(const fb_workload *w, char *buf, size_t cap) {
    switch (w->test) {
    case FB_T_PING_INLINE: return "PING_INLINE";
    case FB_T_PING_MBULK: return "PING_MBULK";
    case FB_T_SET: return "SET";
    case FB_T_GET: return "GET";
    case FB_T_INCR: return "INCR";
    case FB_T_MSET: return "MSET (10 keys)";
    case FB_T_MGET: return "MGET (10 keys)";
    case FB_T_LRANGE_100: return "LRANGE_100 (first 100 elements)";
    case FB_T_LRANGE_300: return "LRANGE_300 (first 300 elements)";
    case FB_T_LRANGE_500: return "LRANGE_500 (first 500 elements)";
    case FB_T_LRANGE_600: return "LRANGE_600 (first 600 elements)";
    case FB_T_HGETALL: return "HGETALL (1000 fields)";
    case FB_T_SMEMBERS: return "SMEMBERS (1000 members)";
    case FB_T_ZRANGE: return "ZRANGE (1000 members WITHSCORES)";
    default:
        snprintf(buf, cap, "MIXED (SET:GET %d:%d)", w->ratio_set, w->ratio_get);
        return buf;
    }
}

uint64_t fb_rand(uint64_t *state) {
    uint64_t z = (*state += UINT64_C(0x9E3779B97F4A7C15));
    z = (z ^ (z >> 30)) * UINT64_C(0xBF58476D1CE4E5B9);
    z = (z ^ (z >> 27)) * UINT64_C(0x94D049BB133111EB);
    return z ^ (z >> 31);
}

/* bulk "<prefix>__rand_int__" with the placeholder substituted under -r */
static void fb_out_key(fb_out *o, const char *prefix, const fb_workload *w, uint64_t *rng) {
    char key[64];
    size_t pl = strlen(prefix);
    memcpy(key, prefix, pl);
    if (w->keyspace > 0) {
        uint64_t r = fb_rand(rng) % (uint64_t)w->keyspace;
        int i;
        for (i = FB_KEYLEN_DIGITS - 1; i >= 0; i--) {
            key[pl + (size_t)i] = (char)('0' + r % 10);
            r /= 10;
        }
    } else {
        memcpy(key + pl, "__rand_int__", FB_KEYLEN_DIGITS);
    }
    fb_out_bulk(o, key, pl + FB_KEYLEN_DIGITS);
}

/* mixed workload: request i is a SET iff it crosses a multiple in the
 * Bresenham sense, giving exactly s SETs in every s+g consecutive requests */
static int fb_mixed_is_set(const fb_workload *w, size_t i) {
    uint64_t t = (uint64_t)w->ratio_set + (uint64_t)w->ratio_get;
    uint64_t ii = i % t;
    return ((ii + 1) * (uint64_t)w->ratio_set) / t > (ii * (uint64_t)w->ratio_set) / t;
}

/* the collection tests: one fixed request each */
static void fb_encode_coll(fb_out *o, int test) {
    static const char *const last[] = {"99", "299", "499", "599"};
    const char *key = fb_test_coll_key(test);
    switch (test) {
    case FB_T_HGETALL:
        fb_out_str(o, "*2\r\n$7\r\nHGETALL\r\n");
        break;
    case FB_T_SMEMBERS:
        fb_out_str(o, "*2\r\n$8\r\nSMEMBERS\r\n");
        break;
    case FB_T_ZRANGE:
        fb_out_str(o, "*5\r\n$6\r\nZRANGE\r\n");
        break;
    default: /* the lrange tests */
        fb_out_str(o, "*4\r\n$6\r\nLRANGE\r\n");
        break;
    }
    fb_out_bulk(o, key, strlen(key));
    if (test == FB_T_ZRANGE) {
        fb_out_str(o, "$1\r\n0\r\n$2\r\n-1\r\n$10\r\nWITHSCORES\r\n");
    } else if (test != FB_T_HGETALL && test != FB_T_SMEMBERS) {
        const char *l = last[test - FB_T_LRANGE_100];
        fb_out_str(o, "$1\r\n0\r\n");
        fb_out_bulk(o, l, strlen(l));
    }
}

static void fb_encode(fb_out *o, const fb_workload *w, size_t i, uint64_t *rng, const char *val) {
    size_t d = (size_t)w->datasize;
    int k, test = w->test;
    if (test == FB_T_MIXED) test = fb_mixed_is_set(w, i) ? FB_T_SET : FB_T_GET;
    switch (test) {
    case FB_T_PING_INLINE:
        fb_out_str(o, "PING\r\n");
        break;
    case FB_T_PING_MBULK:
        fb_out_str(o, "*1\r\n$4\r\nPING\r\n");
        break;
    case FB_T_SET:
        fb_out_str(o, "*3\r\n$3\r\nSET\r\n");
        fb_out_key(o, "key:", w, rng);
        fb_out_bulk(o, val, d);
        break;
    case FB_T_GET:
        fb_out_str(o, "*2\r\n$3\r\nGET\r\n");
        fb_out_key(o, "key:", w, rng);
        break;
    case FB_T_INCR:
        fb_out_str(o, "*2\r\n$4\r\nINCR\r\n");
        fb_out_key(o, "counter:", w, rng);
        break;
    case FB_T_MSET:
        fb_out_hdr(o, '*', 1 + 2 * FB_MULTI_KEYS);
        fb_out_str(o, "$4\r\nMSET\r\n");
        for (k = 0; k < FB_MULTI_KEYS; k++) {
            fb_out_key(o, "key:", w, rng);
            fb_out_bulk(o, val, d);
        }
        break;
    case FB_T_MGET:
        fb_out_hdr(o, '*', 1 + FB_MULTI_KEYS);
        fb_out_str(o, "$4\r\nMGET\r\n");
        for (k = 0; k < FB_MULTI_KEYS; k++) fb_out_key(o, "key:", w, rng);
        break;
    default:
        fb_encode_coll(o, test);
        break;
    }
}

int fb_pool_build(fb_pool *p, const fb_workload *w, size_t max_batch) {
    fb_out o = {0};
    uint64_t rng = w->seed ^ (UINT64_C(0x51ED270B27A4C2D1) * (uint64_t)(w->test + 1));
    char *val = malloc((size_t)w->datasize + 1);
    size_t i, n, est, total;

    memset(p, 0, sizeof *p);
    if (!val) return -1;
    memset(val, 'x', (size_t)w->datasize);

    /* size the pool from one encoded request */
    fb_encode(&o, w, 0, &rng, val);
    est = o.len ? o.len : 1;
    o.len = 0;
    if (w->keyspace == 0 || fb_test_coll_key(w->test)) {
        n = w->test == FB_T_MIXED ? (size_t)(w->ratio_set + w->ratio_get) : 1;
    } else {
        n = FB_POOL_TARGET_BYTES / est;
        if (n < FB_POOL_MIN) n = FB_POOL_MIN;
        if (n > FB_POOL_MAX) n = FB_POOL_MAX;
        if (w->test == FB_T_MIXED) {
            size_t t = (size_t)(w->ratio_set + w->ratio_get);
            n = n / t * t;
            if (n < t) n = t;
        }
    }
    if (max_batch < 1) max_batch = 1;
    total = n + max_batch;
    p->off = malloc((total + 1) * sizeof *p->off);
    if (!p->off) goto oom;
    for (i = 0; i < n; i++) {
        p->off[i] = o.len;
        fb_encode(&o, w, i, &rng, val);
    }
    for (; i < total; i++) { /* the tail: copies of requests [0, max_batch) */
        size_t src = i % n, len;
        p->off[i] = o.len; /* for i == n this is the end of request n - 1 */
        len = p->off[src + 1] - p->off[src];
        if (!fb_out_room(&o, len)) break;
        memcpy(o.p + o.len, o.p + p->off[src], len);
        o.len += len;
    }
    p->off[total] = o.len;
    if (o.oom) goto oom;
    p->buf = o.p;
    p->n = n;
    p->tail = max_batch;
    free(val);
    return 0;
oom:
    free(o.p);
    free(p->off);
    free(val);
    memset(p, 0, sizeof *p);
    return -1;
}

void fb_pool_free(fb_pool *p) {
    free(p->buf);
    free(p->off);
    memset(p, 0, sizeof *p);
}
