/* hll.c - the HyperLogLog representation, byte for byte as Redis 7.0 keeps
 * it (the PF* commands over it are in src/commands/cmd_hll.c).
 *
 * Why Redis's bytes and not a structure of our own. In Redis an HLL is not a
 * type: it is a string value whose bytes are the sketch, so GET returns
 * them, SET / SETRANGE / APPEND can write any bytes into it, DUMP / RESTORE
 * and RDB files carry it as a plain string, and clients (and replicas of
 * either server) move such strings between servers. To be interchangeable
 * ferry has to produce the same bytes after the same PFADDs, estimate the
 * same cardinality from them, and accept or refuse the same damaged values.
 * Everything here is therefore fixed by Redis's format:
 *
 *  - the 16-byte header: "HYLL", the encoding (0 dense, 1 sparse), three
 *    unused bytes (kept as found), the cached cardinality in 8 bytes,
 *    little-endian, the high bit of the last byte set when it is stale;
 *  - 16384 registers (14 index bits of a 64-bit MurmurHash64A, seed
 *    0xadc83b19), each the position of the first 1 bit in the remaining 50
 *    bits (1..51);
 *  - dense: 6 bits per register, register i at bit 6i of the array, least
 *    significant bits first, possibly straddling two bytes;
 *  - sparse: run-length opcodes, ZERO 00xxxxxx (1..64 zero registers),
 *    XZERO 01xxxxxx yyyyyyyy (1..16384 zeros), VAL 1vvvvvxx (1..4 registers
 *    of value 1..32). A register set in place splits its opcode into up to
 *    three and merges equal neighbouring VALs the way Redis does (the
 *    resulting bytes depend on those choices, not only on the registers),
 *    and the value is promoted to dense when a register exceeds 32 or the
 *    string would pass hll-sparse-max-bytes;
 *  - the estimator of Redis 7.0, Ertl's "improved" estimator over the
 *    register histogram with his tau and sigma series, evaluated in the
 *    same order so that the doubles, hence the rounded answers, agree.
 *
 * Why bounds-checked everywhere. The bytes are untrusted (any client can
 * SET them), so every walk over sparse opcodes carries its end, a 2-byte
 * XZERO cut off by the end of the string reads its missing byte as 0 (the
 * sds terminator Redis reads there, so the same values are accepted), a
 * run that would go past register 16383 stops the walk as damaged, and
 * only a dense value of exactly 12304 bytes is treated as dense. Redis's
 * own int counters could wrap on very long damaged strings (CVE-2025-32023);
 * these walks stop at the first overshoot, which refuses the same values
 * without the wrap.
 *
 * The module is pure: (buf, len[, cap]) in, no keyspace, no replies, so the
 * unit tests and the fuzzer drive exactly the code the commands run.
 */
#include "hll.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define HLL_SEED 0xadc83b19ULL
#define HLL_ALPHA_INF 0.721347520444481703680 /* 0.5 / ln(2) */

#define SP_IS_ZERO(b)  (((b) & 0xc0) == 0x00)
#define SP_IS_XZERO(b) (((b) & 0xc0) == 0x40)
#define SP_VAL_MAX_VALUE 32
#define SP_VAL_MAX_LEN   4
#define SP_ZERO_MAX_LEN  64
#define SP_XZERO_MAX_LEN 16384

/* ---- hashing --------------------------------------------------------- */

uint64_t hll_murmur64a(const void *key, size_t len, uint64_t seed) {
    const uint64_t m = 0xc6a4a7935bd1e995ULL;
    const int r = 47;
    const uint8_t *data = key;
    uint64_t h = seed ^ ((uint64_t)len * m);
    size_t blocks = len / 8;
    for (size_t i = 0; i < blocks; i++) {
        uint64_t k = 0;
        for (int b = 7; b >= 0; b--) k = (k << 8) | data[i * 8 + (size_t)b]; /* little-endian */
        k *= m;
        k ^= k >> r;
        k *= m;
        h ^= k;
        h *= m;
    }
    const uint8_t *tail = data + blocks * 8;
    switch (len & 7) {
    case 7: h ^= (uint64_t)tail[6] << 48; /* fall through */
    case 6: h ^= (uint64_t)tail[5] << 40; /* fall through */
    case 5: h ^= (uint64_t)tail[4] << 32; /* fall through */
    case 4: h ^= (uint64_t)tail[3] << 24; /* fall through */
    case 3: h ^= (uint64_t)tail[2] << 16; /* fall through */
    case 2: h ^= (uint64_t)tail[1] << 8;  /* fall through */
    case 1:
        h ^= (uint64_t)tail[0];
        h *= m;
        break;
    default: break;
    }
    h ^= h >> r;
    h *= m;
    h ^= h >> r;
    return h;
}

int hll_pat_len(const void *ele, size_t len, unsigned *index) {
    uint64_t hash = hll_murmur64a(ele, len, HLL_SEED);
    *index = (unsigned)(hash & (HLL_REGISTERS - 1));
    hash >>= HLL_P;
    hash |= (uint64_t)1 << HLL_Q; /* at most Q + 1 */
    return __builtin_ctzll(hash) + 1;
}

/* ---- header ----------------------------------------------------------- */

int hll_header_ok(const uint8_t *buf, size_t len) {
    if (len < HLL_HDR_SIZE || memcmp(buf, "HYLL", 4) != 0) return 0;
    if (buf[4] > HLL_SPARSE) return 0;
    if (buf[4] == HLL_DENSE && len != HLL_DENSE_SIZE) return 0;
    return 1;
}

int hll_encoding(const uint8_t *buf) { return buf[4]; }

size_t hll_init_sparse(uint8_t *buf) {
    memset(buf, 0, HLL_HDR_SIZE);
    memcpy(buf, "HYLL", 4);
    buf[4] = HLL_SPARSE;
    unsigned l = HLL_REGISTERS - 1; /* one XZERO covers them all */
    buf[HLL_HDR_SIZE] = (uint8_t)(0x40 | (l >> 8));
    buf[HLL_HDR_SIZE + 1] = (uint8_t)(l & 0xff);
    return HLL_SPARSE_EMPTY_SIZE;
}

int hll_cache_valid(const uint8_t *buf) { return (buf[15] & 0x80) == 0; }

uint64_t hll_cache_get(const uint8_t *buf) {
    uint64_t v = 0;
    for (int i = 7; i >= 0; i--) v = (v << 8) | buf[8 + i];
    return v;
}

void hll_cache_set(uint8_t *buf, uint64_t card) {
    for (int i = 0; i < 8; i++) buf[8 + i] = (uint8_t)(card >> (8 * i));
}

void hll_invalidate_cache(uint8_t *buf) { buf[15] |= 0x80; }

/* ---- dense ------------------------------------------------------------ */

unsigned hll_dense_get(const uint8_t *regs, unsigned index) {
    size_t bit = (size_t)index * HLL_BITS, byte = bit >> 3;
    unsigned fb = bit & 7;
    unsigned b0 = regs[byte];
    unsigned b1 = byte + 1 < HLL_DENSE_REGS ? regs[byte + 1] : 0; /* the last register fits its byte */
    return ((b0 >> fb) | (b1 << (8 - fb))) & HLL_REGISTER_MAX;
}

void hll_dense_put(uint8_t *regs, unsigned index, unsigned val) {
    size_t bit = (size_t)index * HLL_BITS, byte = bit >> 3;
    unsigned fb = bit & 7, fb8 = 8 - fb;
    val &= HLL_REGISTER_MAX;
    regs[byte] = (uint8_t)((regs[byte] & ~(HLL_REGISTER_MAX << fb)) | (val << fb));
    if (byte + 1 < HLL_DENSE_REGS)
        regs[byte + 1] = (uint8_t)((regs[byte + 1] & ~(HLL_REGISTER_MAX >> fb8)) | (val >> fb8));
}

int hll_dense_set(uint8_t *buf, unsigned index, unsigned count) {
    uint8_t *regs = buf + HLL_HDR_SIZE;
    if (index >= HLL_REGISTERS || count <= hll_dense_get(regs, index)) return HLL_UNCHANGED;
    hll_dense_put(regs, index, count);
    return HLL_CHANGED;
}

/* ---- sparse ----------------------------------------------------------- */

hll_op hll_sparse_op(const uint8_t *p, const uint8_t *end) {
    hll_op op;
    uint8_t b = p[0];
    if (SP_IS_ZERO(b)) {
        op = (hll_op){'z', (unsigned)(b & 0x3f) + 1, 0, 1};
    } else if (SP_IS_XZERO(b)) {
        unsigned b1 = p + 1 < end ? p[1] : 0;
        op = (hll_op){'Z', (((unsigned)(b & 0x3f) << 8) | b1) + 1, 0, 2};
    } else {
        op = (hll_op){'v', (unsigned)(b & 0x3) + 1, (unsigned)((b >> 2) & 0x1f) + 1, 1};
    }
    return op;
}

static uint8_t sp_val(unsigned value, unsigned len) { return (uint8_t)(0x80 | ((value - 1) << 2) | (len - 1)); }
static uint8_t sp_zero(unsigned len) { return (uint8_t)(len - 1); }
static void sp_xzero(uint8_t *p, unsigned len) {
    p[0] = (uint8_t)(0x40 | ((len - 1) >> 8));
    p[1] = (uint8_t)((len - 1) & 0xff);
}

/* A run of zeros as ZERO (up to 64) or XZERO; returns the bytes written. */
static size_t sp_zeros(uint8_t *p, unsigned len) {
    if (len > SP_ZERO_MAX_LEN) {
        sp_xzero(p, len);
        return 2;
    }
    p[0] = sp_zero(len);
    return 1;
}

int hll_sparse_set(uint8_t *buf, size_t *lenp, size_t cap, unsigned index, unsigned count, size_t max_bytes) {
    size_t len = *lenp;
    if (count > SP_VAL_MAX_VALUE) return HLL_PROMOTE;
    if (len < HLL_HDR_SIZE || cap < len + HLL_SPARSE_SLACK || index >= HLL_REGISTERS) return HLL_CORRUPT;

    /* 1: the opcode that covers the register (positions, not pointers: a
     * cut-off XZERO steps past the end) */
    const uint8_t *end = buf + len;
    size_t pos = HLL_HDR_SIZE, prev = 0;
    int has_prev = 0;
    unsigned long first = 0, span = 0;
    while (pos < len) { /* the hot loop of a sparse PFADD: lengths only, the opcode is decoded once found */
        uint8_t b = buf[pos];
        size_t size = 1;
        if (SP_IS_ZERO(b)) {
            span = (unsigned long)(b & 0x3f) + 1;
        } else if (SP_IS_XZERO(b)) {
            span = (((unsigned long)(b & 0x3f) << 8) | (pos + 1 < len ? buf[pos + 1] : 0)) + 1;
            size = 2;
        } else {
            span = (unsigned long)(b & 0x3) + 1;
        }
        if (index <= first + span - 1) break;
        prev = pos;
        has_prev = 1;
        pos += size;
        first += span;
    }
    if (span == 0 || pos >= len) return HLL_CORRUPT;
    hll_op op = hll_sparse_op(buf + pos, end);
    size_t next = pos + op.size;
    int has_next = next < len;

    /* 2: the cases that rewrite one byte in place */
    if (op.kind == 'v') {
        if (op.value >= count) return HLL_UNCHANGED;
        if (op.runlen == 1) {
            buf[pos] = sp_val(count, 1);
            goto updated;
        }
    } else if (op.kind == 'z' && op.runlen == 1) {
        buf[pos] = sp_val(count, 1);
        goto updated;
    }

    /* 3: split the opcode into up to three (at most 5 bytes) */
    {
        uint8_t seq[5];
        size_t n = 0;
        unsigned long last = first + span - 1;
        if (op.kind != 'v') {
            if (index != first) n += sp_zeros(seq + n, (unsigned)(index - first));
            seq[n++] = sp_val(count, 1);
            if (index != last) n += sp_zeros(seq + n, (unsigned)(last - index));
        } else {
            if (index != first) seq[n++] = sp_val(op.value, (unsigned)(index - first));
            seq[n++] = sp_val(count, 1);
            if (index != last) seq[n++] = sp_val(op.value, (unsigned)(last - index));
        }
        long delta = (long)n - (long)op.size;
        if (delta > 0 && len + (size_t)delta > max_bytes) return HLL_PROMOTE;
        if (delta && has_next) memmove(buf + next + delta, buf + next, len - next);
        memcpy(buf + pos, seq, n); /* pos + n <= len + 4 <= cap */
        len = (size_t)((long)len + delta); /* a cut-off XZERO loses the last byte written, as in Redis */
    }

updated:
    /* 4: merge equal adjacent VALs, scanning up to 5 opcodes from the one
     * before the change */
    {
        size_t q = has_prev ? prev : HLL_HDR_SIZE;
        int scan = 5;
        while (q < len && scan-- > 0) {
            uint8_t b = buf[q];
            if (SP_IS_XZERO(b)) {
                q += 2;
                continue;
            }
            if (SP_IS_ZERO(b)) {
                q++;
                continue;
            }
            if (q + 1 < len && (buf[q + 1] & 0x80)) {
                hll_op a = hll_sparse_op(buf + q, buf + len), c = hll_sparse_op(buf + q + 1, buf + len);
                if (a.value == c.value && a.runlen + c.runlen <= SP_VAL_MAX_LEN) {
                    buf[q + 1] = sp_val(a.value, a.runlen + c.runlen);
                    memmove(buf + q, buf + q + 1, len - q - 1);
                    len--;
                    continue; /* try again with the opcode on its right */
                }
            }
            q++;
        }
    }
    *lenp = len;
    hll_invalidate_cache(buf);
    return HLL_CHANGED;
}

/* Walks the sparse opcodes of buf calling fn for each VAL run; 0 when they
 * cover exactly 16384 registers, -1 at the first overshoot or a short total. */
typedef void val_fn(void *ud, unsigned idx, unsigned runlen, unsigned value);
static int sparse_walk(const uint8_t *buf, size_t len, val_fn *fn, void *ud) {
    const uint8_t *end = buf + len;
    unsigned long idx = 0;
    size_t pos = HLL_HDR_SIZE;
    while (pos < len) {
        hll_op op = hll_sparse_op(buf + pos, end);
        if (idx + op.runlen > HLL_REGISTERS) return -1;
        if (op.kind == 'v' && fn) fn(ud, (unsigned)idx, op.runlen, op.value);
        idx += op.runlen;
        pos += op.size;
    }
    return idx == HLL_REGISTERS ? 0 : -1;
}

int hll_validate(const uint8_t *buf, size_t len) {
    if (!hll_header_ok(buf, len)) return 0;
    if (buf[4] == HLL_DENSE) return 1;
    return sparse_walk(buf, len, NULL, NULL) == 0;
}

static void put_run(void *ud, unsigned idx, unsigned runlen, unsigned value) {
    uint8_t *regs = ud;
    for (unsigned i = 0; i < runlen; i++) hll_dense_put(regs, idx + i, value);
}

int hll_sparse_to_dense(const uint8_t *src, size_t len, uint8_t *dst) {
    if (len < HLL_HDR_SIZE) return -1;
    memset(dst, 0, HLL_DENSE_SIZE);
    memcpy(dst, src, HLL_HDR_SIZE); /* magic, unused bytes and cache as they are */
    dst[4] = HLL_DENSE;
    return sparse_walk(src, len, put_run, dst + HLL_HDR_SIZE);
}

static void max_run(void *ud, unsigned idx, unsigned runlen, unsigned value) {
    uint8_t *max = ud;
    for (unsigned i = 0; i < runlen; i++)
        if (value > max[idx + i]) max[idx + i] = (uint8_t)value;
}

int hll_merge(uint8_t max[HLL_REGISTERS], const uint8_t *buf, size_t len) {
    if (len < HLL_HDR_SIZE) return -1;
    if (buf[4] == HLL_DENSE) {
        if (len != HLL_DENSE_SIZE) return -1;
        for (unsigned i = 0; i < HLL_REGISTERS; i++) {
            unsigned v = hll_dense_get(buf + HLL_HDR_SIZE, i);
            if (v > max[i]) max[i] = (uint8_t)v;
        }
        return 0;
    }
    return sparse_walk(buf, len, max_run, max);
}

/* ---- the estimator ----------------------------------------------------- */

/* Ertl, "New cardinality estimation algorithms for HyperLogLog sketches"
 * (arXiv:1702.01284): the series below, evaluated until they stop moving. */
static double hll_tau(double x) {
    if (x == 0. || x == 1.) return 0.;
    double zp, y = 1.0, z = 1 - x;
    do {
        x = sqrt(x);
        zp = z;
        y *= 0.5;
        z -= pow(1 - x, 2) * y;
    } while (zp != z);
    return z / 3;
}

static double hll_sigma(double x) {
    if (x == 1.) return INFINITY;
    double zp, y = 1, z = x;
    do {
        x *= x;
        zp = z;
        z += x * y;
        y += y;
    } while (zp != z);
    return z;
}

static uint64_t estimate(const long histo[HLL_REGISTER_MAX + 1]) {
    double m = HLL_REGISTERS;
    double z = m * hll_tau((m - (double)histo[HLL_Q + 1]) / m);
    for (int j = HLL_Q; j >= 1; --j) {
        z += (double)histo[j];
        z *= 0.5;
    }
    z += m * hll_sigma((double)histo[0] / m);
    double e = (double)llroundl(HLL_ALPHA_INF * m * m / z);
    return (uint64_t)e;
}

static void histo_run(void *ud, unsigned idx, unsigned runlen, unsigned value) {
    (void)idx;
    long *h = ud;
    h[value] += runlen;
    h[0] -= runlen; /* counted as zeros below */
}

uint64_t hll_count(const uint8_t *buf, size_t len, int *invalid) {
    long histo[HLL_REGISTER_MAX + 1] = {0};
    if (len >= HLL_HDR_SIZE && buf[4] == HLL_DENSE && len == HLL_DENSE_SIZE) {
        for (unsigned i = 0; i < HLL_REGISTERS; i++) histo[hll_dense_get(buf + HLL_HDR_SIZE, i)]++;
    } else if (len >= HLL_HDR_SIZE && buf[4] == HLL_SPARSE) {
        histo[0] = HLL_REGISTERS;
        if (sparse_walk(buf, len, histo_run, histo) != 0) {
            if (invalid) *invalid = 1;
            return 0;
        }
    } else {
        if (invalid) *invalid = 1;
        return 0;
    }
    return estimate(histo);
}

uint64_t hll_count_raw(const uint8_t regs[HLL_REGISTERS]) {
    long histo[HLL_REGISTER_MAX + 1] = {0};
    for (unsigned i = 0; i < HLL_REGISTERS; i++) histo[regs[i] & HLL_REGISTER_MAX]++;
    return estimate(histo);
}

/* ---- self test --------------------------------------------------------- */

static uint64_t xorshift(uint64_t *s) {
    uint64_t x = *s;
    x ^= x << 13;
    x ^= x >> 7;
    x ^= x << 17;
    return *s = x;
}

/* Sparse add with promotion, for the self test: the value lives in *sp
 * (capacity *cap) until it turns dense into dense (then *dense_now = 1). */
static int st_add(uint8_t **sp, size_t *len, size_t *cap, uint8_t *dense, int *dense_now, const void *ele,
                  size_t elen, size_t max_bytes) {
    unsigned idx;
    int cnt = hll_pat_len(ele, elen, &idx);
    if (*dense_now) return hll_dense_set(dense, idx, (unsigned)cnt);
    if (*cap < *len + HLL_SPARSE_SLACK) {
        size_t nc = (*len + HLL_SPARSE_SLACK) * 2;
        uint8_t *np = realloc(*sp, nc);
        if (!np) return HLL_CORRUPT;
        *sp = np;
        *cap = nc;
    }
    int r = hll_sparse_set(*sp, len, *cap, idx, (unsigned)cnt, max_bytes);
    if (r != HLL_PROMOTE) return r;
    if (hll_sparse_to_dense(*sp, *len, dense) != 0) return HLL_CORRUPT;
    *dense_now = 1;
    return hll_dense_set(dense, idx, (unsigned)cnt);
}

int hll_selftest(char *err, size_t errlen, size_t max_bytes, uint64_t seed) {
    int rc = -1;
    uint8_t *regs = calloc(1, HLL_DENSE_REGS), *counters = malloc(HLL_REGISTERS);
    uint8_t *ref = calloc(1, HLL_DENSE_SIZE), *dense = malloc(HLL_DENSE_SIZE);
    size_t cap = HLL_SPARSE_EMPTY_SIZE + HLL_SPARSE_SLACK, len;
    uint8_t *sp = malloc(cap);
    if (!regs || !counters || !ref || !dense || !sp) {
        snprintf(err, errlen, "TESTFAILED out of memory");
        goto done;
    }
    seed |= 1;
    /* 1: every register reads back what was written, whatever its neighbours */
    for (int round = 0; round < 1000; round++) {
        for (unsigned i = 0; i < HLL_REGISTERS; i++) {
            counters[i] = (uint8_t)(xorshift(&seed) & HLL_REGISTER_MAX);
            hll_dense_put(regs, i, counters[i]);
        }
        for (unsigned i = 0; i < HLL_REGISTERS; i++) {
            unsigned v = hll_dense_get(regs, i);
            if (v != counters[i]) {
                snprintf(err, errlen, "TESTFAILED Register %u should be %u but is %u", i, counters[i], v);
                goto done;
            }
        }
    }
    /* 2: dense and sparse agree, sparse while small, error within bounds */
    memcpy(ref, "HYLL", 4);
    ref[4] = HLL_DENSE;
    len = hll_init_sparse(sp);
    int dense_now = 0;
    double relerr = 1.04 / sqrt(HLL_REGISTERS);
    uint64_t checkpoint = 1, base = xorshift(&seed);
    for (uint64_t j = 1; j <= 10000000; j++) {
        uint8_t ele[8];
        uint64_t e = j ^ base;
        for (int b = 0; b < 8; b++) ele[b] = (uint8_t)(e >> (8 * b));
        unsigned idx;
        int cnt = hll_pat_len(ele, sizeof ele, &idx);
        hll_dense_set(ref, idx, (unsigned)cnt);
        if (st_add(&sp, &len, &cap, dense, &dense_now, ele, sizeof ele, max_bytes) == HLL_CORRUPT) {
            snprintf(err, errlen, "TESTFAILED sparse representation corrupted");
            goto done;
        }
        if (j != checkpoint) continue;
        if (j < max_bytes / 2 && dense_now) {
            snprintf(err, errlen, "TESTFAILED sparse encoding not used");
            goto done;
        }
        uint64_t c1 = hll_count(ref, HLL_DENSE_SIZE, NULL);
        uint64_t c2 = dense_now ? hll_count(dense, HLL_DENSE_SIZE, NULL) : hll_count(sp, len, NULL);
        if (c1 != c2) {
            snprintf(err, errlen, "TESTFAILED dense/sparse disagree");
            goto done;
        }
        long long abserr = (long long)checkpoint - (long long)c1;
        if (abserr < 0) abserr = -abserr;
        unsigned long long maxerr = (unsigned long long)ceil(relerr * 6 * (double)checkpoint);
        if (j == 10) maxerr = 1; /* very few registers set */
        if ((unsigned long long)abserr > maxerr) {
            snprintf(err, errlen, "TESTFAILED Too big error. card:%llu abserr:%llu", (unsigned long long)checkpoint,
                     (unsigned long long)abserr);
            goto done;
        }
        checkpoint *= 10;
    }
    rc = 0;
done:
    free(regs);
    free(counters);
    free(ref);
    free(dense);
    free(sp);
    return rc;
}
