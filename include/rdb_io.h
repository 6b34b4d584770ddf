/* rdb_io.h - the primitive encodings of Redis's RDB format: lengths,
 * strings (plain, integer-encoded, LZF-compressed), doubles and times, as a
 * writer that appends to a growing buffer and a reader over bytes.
 *
 * The reader is a bounds-checked cursor over (buf, len), as picohttpparser
 * reads HTTP: every read checks the bytes left, no read allocates more than
 * the bytes that are actually there, and the first error sticks (later reads
 * return zeros and the error and its offset stay those of the first one),
 * so callers can read a whole structure and check once. RDB files and DUMP
 * payloads are untrusted input; nothing here trusts a declared length.
 */
#ifndef FERRY_RDB_IO_H
#define FERRY_RDB_IO_H

#include <stddef.h>
#include <stdint.h>

/* RDB_ENC_* special string encodings (length byte 0b11xxxxxx) */
enum { RDB_ENC_INT8 = 0, RDB_ENC_INT16 = 1, RDB_ENC_INT32 = 2, RDB_ENC_LZF = 3 };

/* ---- writer ------------------------------------------------------------ */

typedef struct rdbw {
    unsigned char *buf;         /* zmalloc'd */
    size_t len, cap;
    int compress;               /* rdbcompression: LZF for strings longer than 20 bytes */
} rdbw;

void rdbw_init(rdbw *w, int compress);
void rdbw_free(rdbw *w);
void rdbw_raw(rdbw *w, const void *p, size_t n);
void rdbw_u8(rdbw *w, unsigned v);
void rdbw_len(rdbw *w, uint64_t len);
/* A string as Redis writes it: up to 11 bytes that are an int32 in
 * canonical decimal become an integer encoding; with compression, longer
 * than 20 bytes and at least 4 bytes smaller compressed, LZF; else plain. */
void rdbw_string(rdbw *w, const void *p, size_t n);
/* A string that is exactly this integer (an INT-encoded string value). */
void rdbw_string_ll(rdbw *w, long long v);
void rdbw_double_bin(rdbw *w, double d);     /* 8 bytes, little-endian IEEE 754 */
void rdbw_u64_le(rdbw *w, uint64_t v);
void rdbw_u32_le(rdbw *w, uint32_t v);

/* ---- reader ------------------------------------------------------------ */

typedef struct rdbr {
    const unsigned char *p;
    size_t len, pos;
    const char *err;            /* first error, NULL while fine */
    size_t err_pos;             /* offset of the first error */
    size_t more;                /* bytes that may still follow len (a streamed load: rdb.c), 0 for a whole image */
    size_t need;                /* starved: the input ran out while more may follow; len must reach this */
} rdbr;

/* A string read from the input: either a span into it (owned = NULL) or
 * bytes decoded into an allocation the reader made (owned, zfree). For an
 * integer encoding, the decimal text. */
typedef struct rdb_str {
    const char *p;
    size_t len;
    char *owned;
    char ibuf[24];              /* integer encodings are written here */
} rdb_str;

void rdbr_init(rdbr *r, const void *buf, size_t len);
/* Set the error (once) at the current position; returns 0. */
int rdbr_fail(rdbr *r, const char *why);
static inline int rdbr_ok(const rdbr *r) { return r->err == NULL; }
static inline size_t rdbr_left(const rdbr *r) { return r->len - r->pos; }
/* What the input can still hold: the bytes left plus those that may follow
 * (a declared count beyond it is corrupt). */
static inline size_t rdbr_bound(const rdbr *r) { return r->more > SIZE_MAX - rdbr_left(r) ? SIZE_MAX : rdbr_left(r) + r->more; }
unsigned rdbr_u8(rdbr *r);
uint32_t rdbr_u32_le(rdbr *r);
uint64_t rdbr_u64_le(rdbr *r);
/* A length; *is_enc set (and the encoding type returned) for the special
 * string encodings. Without is_enc an encoded length is an error. */
uint64_t rdbr_len_enc(rdbr *r, int *is_enc);
uint64_t rdbr_len(rdbr *r);
/* A length that also must not exceed what `unit` bytes per item could fill
 * of the input left (a collection's element count): sizes allocations by
 * the bytes present, not by what a hostile header declares. */
uint64_t rdbr_count(rdbr *r, size_t unit);
/* A string (any encoding). Returns 0 on error (s is then empty). */
int rdbr_string(rdbr *r, rdb_str *s);
void rdb_str_free(rdb_str *s);
double rdbr_double_bin(rdbr *r);
/* The old text form of doubles (RDB_TYPE_ZSET, version < 8): a length byte
 * (253 nan, 254 +inf, 255 -inf) and that many characters. */
double rdbr_double_text(rdbr *r);
/* Skip n bytes; returns a pointer to them (NULL on error). */
const unsigned char *rdbr_bytes(rdbr *r, size_t n);

#endif
