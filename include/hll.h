/* hll.h - HyperLogLog representation, byte-compatible with Redis 7.0
 * (src/keyspace/hll.c; the commands are in src/commands/cmd_hll.c).
 *
 * An HLL is a plain string: a 16-byte header ("HYLL", encoding byte, three
 * unused bytes, the cached cardinality as 8 little-endian bytes whose last
 * byte's high bit marks it stale) followed by 16384 6-bit registers, either
 * dense (12288 bytes) or sparse (run-length opcodes ZERO, XZERO, VAL).
 *
 * Every function works on caller-owned buffers with explicit lengths and
 * treats the bytes as untrusted: nothing reads or writes outside
 * [buf, buf + len) (or + cap where a capacity is given). Where Redis reads
 * the sds terminator past the end of a truncated 2-byte opcode, these
 * functions use 0, which is the byte Redis finds there, so a damaged value
 * is accepted or refused exactly as redis-server does.
 */
#ifndef FERRY_HLL_H
#define FERRY_HLL_H

#include <stddef.h>
#include <stdint.h>

#define HLL_P            14
#define HLL_Q            (64 - HLL_P)
#define HLL_REGISTERS    (1 << HLL_P)                   /* 16384 */
#define HLL_BITS         6
#define HLL_REGISTER_MAX ((1 << HLL_BITS) - 1)
#define HLL_HDR_SIZE     16
#define HLL_DENSE_REGS   ((HLL_REGISTERS * HLL_BITS + 7) / 8) /* 12288 */
#define HLL_DENSE_SIZE   (HLL_HDR_SIZE + HLL_DENSE_REGS)      /* 12304 */
#define HLL_SPARSE_EMPTY_SIZE (HLL_HDR_SIZE + 2)        /* header + one XZERO of 16384 */
/* Room a sparse buffer needs past its length for one hll_sparse_set. */
#define HLL_SPARSE_SLACK 8

enum { HLL_DENSE = 0, HLL_SPARSE = 1 };

/* hll_sparse_set / hll_add results */
enum {
    HLL_CORRUPT = -1,   /* the representation is damaged (INVALIDOBJ) */
    HLL_UNCHANGED = 0,
    HLL_CHANGED = 1,
    HLL_PROMOTE = 2,    /* sparse cannot hold it: convert to dense, then hll_dense_set */
};

/* Redis's 64-bit MurmurHash2 (MurmurHash64A, little-endian reads). */
uint64_t hll_murmur64a(const void *key, size_t len, uint64_t seed);
/* The register an element goes to (*index, 0..16383) and its run length
 * of zeros plus one (1..51), as Redis's hllPatLen. */
int hll_pat_len(const void *ele, size_t len, unsigned *index);

/* Redis's isHLLObjectOrReply test: at least a header, the magic, encoding
 * dense or sparse, and a dense one exactly HLL_DENSE_SIZE bytes. A value
 * failing it is "not a valid HyperLogLog string value" (WRONGTYPE). */
int hll_header_ok(const uint8_t *buf, size_t len);
/* The whole value checks out: hll_header_ok and, when sparse, opcodes
 * that cover exactly 16384 registers without a VAL running past the end.
 * 1 / 0. (What PFCOUNT / PFMERGE accept.) */
int hll_validate(const uint8_t *buf, size_t len);
int hll_encoding(const uint8_t *buf);               /* buf[4] (header checked) */

/* Writes the empty sparse HLL (HLL_SPARSE_EMPTY_SIZE bytes) into buf. */
size_t hll_init_sparse(uint8_t *buf);

/* Cached cardinality (header bytes 8..15). */
int hll_cache_valid(const uint8_t *buf);
uint64_t hll_cache_get(const uint8_t *buf);
void hll_cache_set(uint8_t *buf, uint64_t card);
void hll_invalidate_cache(uint8_t *buf);

/* Dense registers: regs points at HLL_DENSE_REGS bytes. */
unsigned hll_dense_get(const uint8_t *regs, unsigned index);
void hll_dense_put(uint8_t *regs, unsigned index, unsigned val);
/* Raise register index of a dense HLL (whole buffer) to count if larger:
 * HLL_CHANGED / HLL_UNCHANGED. */
int hll_dense_set(uint8_t *buf, unsigned index, unsigned count);

/* Raise register index of the sparse HLL in buf (*len bytes, room for cap,
 * cap >= *len + HLL_SPARSE_SLACK) to count, as Redis's hllSparseSet: the
 * opcode is split and neighbouring VALs merged, *len updated, the cache
 * invalidated on a change. HLL_PROMOTE (nothing changed) when count > 32
 * or the result would pass max_bytes; HLL_CORRUPT when no opcode holds
 * the register. */
int hll_sparse_set(uint8_t *buf, size_t *len, size_t cap, unsigned index, unsigned count, size_t max_bytes);

/* Convert a sparse HLL to dense into dst (HLL_DENSE_SIZE bytes): the
 * header is copied (cache and unused bytes kept), encoding set dense.
 * 0, or -1 when the opcodes do not cover exactly 16384 registers. */
int hll_sparse_to_dense(const uint8_t *src, size_t len, uint8_t *dst);

/* max[i] = MAX(max[i], register i) over a value (header checked):
 * 0, or -1 for a damaged sparse representation (Redis's hllMerge). */
int hll_merge(uint8_t max[HLL_REGISTERS], const uint8_t *buf, size_t len);

/* Cardinality estimate of a value (header checked; Ertl's estimator as
 * Redis 7.0). *invalid set to 1 for a damaged sparse representation. */
uint64_t hll_count(const uint8_t *buf, size_t len, int *invalid);
/* The same over one byte per register (PFCOUNT of several keys). */
uint64_t hll_count_raw(const uint8_t regs[HLL_REGISTERS]);

/* One sparse opcode at p (p < end): its kind ('z' ZERO, 'Z' XZERO, 'v' VAL),
 * run length, value (VAL) and size in bytes (XZERO is 2 even when only one
 * byte is left; the missing byte reads as 0). */
typedef struct hll_op {
    char kind;
    unsigned runlen, value, size;
} hll_op;
hll_op hll_sparse_op(const uint8_t *p, const uint8_t *end);

/* PFSELFTEST: register packing round trips, then 10^7 elements added to a
 * dense and a sparse (promoted past max_bytes) HLL whose estimates must
 * agree and stay within Redis's error bounds. 0, or -1 with the reason
 * ("TESTFAILED ...") in err. */
int hll_selftest(char *err, size_t errlen, size_t max_bytes, uint64_t seed);

#endif
