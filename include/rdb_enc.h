/* rdb_enc.h - the compact encodings that Redis's RDB files and DUMP payloads
 * embed whole, as byte strings: listpack (Redis 7), ziplist (Redis 2.2 to
 * 6.2), zipmap (Redis < 2.6) and intset. ferry keeps its own in-memory forms
 * (see listpack.h, intset.h), so these are codecs over byte buffers: a
 * builder that writes the bytes Redis would write for the same elements, and
 * validating iterators that read what Redis (any version) wrote.
 *
 * Every reader takes untrusted bytes: each checks the header against the
 * buffer's length, every entry against the bytes left, and the terminator,
 * and fails cleanly (returns -1) instead of reading past the end. Pure
 * functions over (buf, len); the only allocation is the builder's buffer. */
#ifndef FERRY_RDB_ENC_H
#define FERRY_RDB_ENC_H

#include <stddef.h>
#include <stdint.h>

/* One element as read: either a byte string (p, len) or an integer (when
 * is_int; p is NULL). A reader yields integers for the integer encodings
 * of the format; the caller turns them into decimal text if it needs bytes. */
typedef struct renc_elem {
    const unsigned char *p;
    size_t len;
    int64_t v;
    int is_int;
} renc_elem;

/* ---- listpack (Redis 5+ format) ---------------------------------------
 * Header: total bytes (uint32 LE), element count (uint16 LE, 65535 =
 * unknown), entries, terminator 0xFF. The builder encodes an element as an
 * integer exactly when Redis's lpAppend would (see rlp_append), choosing
 * the smallest of Redis's integer and string entry encodings, so the same
 * elements give the bytes redis-server 7.0 writes. */
typedef struct rlp_builder {
    unsigned char *buf;   /* zmalloc'd (NULL until the first append); header written by rlp_finish */
    size_t len, cap;      /* bytes used, the 6 header bytes included; allocated */
    uint32_t count;       /* elements appended */
} rlp_builder;
void rlp_init(rlp_builder *b);
/* Appends a byte string; stored as an integer when it is the canonical
 * decimal text of an int64 (Redis's lpStringToInt64: at most 20 bytes, an
 * optional '-', no '+', no leading zeros, no spaces; "-0" is not one). */
void rlp_append(rlp_builder *b, const void *p, size_t len);
void rlp_append_int(rlp_builder *b, int64_t v);
/* Appends a sorted-set score as Redis 7.0's zzlInsertAt does: the integer
 * when the double holds one within +-2^62, else renc_double_text. */
void rlp_append_double(rlp_builder *b, double d);
/* Bytes the listpack would take if finished now (header, entries and
 * terminator: Redis's lpBytes), for quicklist node sizing. */
size_t rlp_bytes(const rlp_builder *b);
/* Bytes one element takes in a Redis listpack (encoding, data, backlen):
 * rlp_entry_size as rlp_append would store it, rlp_int_entry_size as
 * rlp_append_int. */
size_t rlp_entry_size(const void *p, size_t len);
size_t rlp_int_entry_size(int64_t v);
/* Writes the header (count 65535 from 65535 elements on) and terminator;
 * returns the listpack bytes (owned by the caller, zfree) and its length in
 * *len. The builder is then empty again. Past 4 GiB - 1 bytes (more than a
 * uint32 total) it returns NULL and *len 0, and still empties the builder. */
unsigned char *rlp_finish(rlp_builder *b, size_t *len);
/* Frees an unfinished builder's buffer; the builder is then empty again. */
void rlp_discard(rlp_builder *b);

/* The text Redis 7.0 stores for a sorted-set score in a listpack (Redis
 * 6.2's ziplists differ for -0.0 and some integers beyond 2^52): "nan",
 * "inf", "-inf"; a double that holds an integer within +-2^62 as that
 * integer (so -0.0 gives "0"); any other as printf "%.17g" (3.14159 ->
 * "3.1415899999999999", 1e300 -> "1.0000000000000001e+300", 1e19 ->
 * "1e+19"). Checked against the DUMP output of redis-server 7.0.15. Writes
 * the text and a NUL to buf and returns its length, or 0 if cap is too
 * small (RENC_DOUBLE_TEXT_MAX always suffices). */
#define RENC_DOUBLE_TEXT_MAX 32
size_t renc_double_text(double d, char *buf, size_t cap);

/* A validating iterator. rlp_iter_init checks the header (total bytes equal
 * to len, terminator present) and returns -1 if it is wrong; rlp_next
 * returns 1 with the next element, 0 at the terminator, -1 on a malformed
 * entry. An entry is malformed if its encoding is unused (0xF5-0xFF), its
 * data or backlen runs into the terminator, or its backlen is not the bytes
 * Redis writes for its size. Non-minimal encodings are accepted (a short
 * string with a 32-bit length, a small value as a 64-bit integer).
 * rlp_validate walks the whole listpack and also checks the count in the
 * header (when it is not 65535): the element count, or -1. After 0 or -1,
 * rlp_next keeps returning it. */
typedef struct rlp_iter {
    const unsigned char *lp;
    size_t len, pos;
} rlp_iter;
int rlp_iter_init(rlp_iter *it, const unsigned char *lp, size_t len);
int rlp_next(rlp_iter *it, renc_elem *e);
long long rlp_validate(const unsigned char *lp, size_t len);

/* ---- ziplist (Redis 2.2 - 6.2; read only) -----------------------------
 * Header: total bytes (uint32 LE), offset of the last entry (uint32 LE),
 * count (uint16 LE, 65535 = unknown), entries (prevlen, encoding, data),
 * terminator 0xFF. Same contract as the listpack iterator; besides, each
 * entry's prevlen (1 byte below 254, else 0xFE and a uint32 LE, which may
 * hold a small value) must equal the previous entry's size (0 for the
 * first), and at the terminator the tail offset must point at the last
 * entry (10 when empty). Encodings: 00/01/10 strings (6-bit, 14-bit BE,
 * 32-bit BE lengths), 0xC0/0xD0/0xE0/0xF0/0xFE int16/32/64/24/8 LE,
 * 0xF1-0xFD the values 0-12; other 11xxxxxx bytes are malformed. */
typedef struct rzl_iter {
    const unsigned char *zl;
    size_t len, pos;
    size_t prev_entry_len;
} rzl_iter;
int rzl_iter_init(rzl_iter *it, const unsigned char *zl, size_t len);
int rzl_next(rzl_iter *it, renc_elem *e);
long long rzl_validate(const unsigned char *zl, size_t len);

/* ---- zipmap (Redis < 2.6 hashes; read only) ----------------------------
 * zmlen byte, then (key length, key, value length, free byte, value, free
 * bytes) pairs, terminator 0xFF. rzm_next returns 1 with a field and its
 * value, 0 at the end, -1 if malformed. */
typedef struct rzm_iter {
    const unsigned char *zm;
    size_t len, pos;
} rzm_iter;
int rzm_iter_init(rzm_iter *it, const unsigned char *zm, size_t len);
int rzm_next(rzm_iter *it, renc_elem *field, renc_elem *value);
/* Walks the whole zipmap and also checks zmlen (254 = unknown, any other
 * value must be the pair count): the number of pairs, or -1. Lengths are 1 byte below 254, else
 * 0xFE and a uint32 LE (accepted for any value); a 0xFF terminator before
 * the last byte is malformed. Empty zipmaps (and listpacks, ziplists,
 * intsets) are well formed here: an RDB loader rejects empty keys itself. */
long long rzm_validate(const unsigned char *zm, size_t len);

/* ---- intset (Redis format) --------------------------------------------
 * encoding (uint32 LE: 2, 4 or 8), length (uint32 LE), then the values in
 * ascending order, little-endian, each `encoding` bytes.
 * rintset_build writes the intset Redis would hold for the sorted, distinct
 * values v[0, n) (the narrowest encoding that fits them all); the caller
 * zfrees the result. rintset_validate checks the encoding, that the length
 * matches len exactly and that values are strictly ascending: the count or
 * -1. rintset_get reads value i of a validated intset. Wider encodings
 * than needed are accepted (Redis never narrows an intset). */
unsigned char *rintset_build(const int64_t *v, size_t n, size_t *len);
long long rintset_validate(const unsigned char *is, size_t len);
int64_t rintset_get(const unsigned char *is, size_t i);

#endif
