/* rdb_enc.c - codecs for the compact encodings Redis embeds whole in RDB
 * files and DUMP payloads (contract in rdb_enc.h): a listpack builder that
 * writes the bytes Redis 7.0 writes, and validating readers for listpack,
 * ziplist, zipmap and intset.
 *
 * Why: ferry's in-memory forms are its own, so saving and DUMP must produce
 * Redis's bytes, and loading and RESTORE must read every form any Redis
 * version wrote, from bytes nobody vouches for. Each reader checks a length
 * against the bytes left before it uses it, so no read leaves (buf, len).
 *
 * Listpack entry: encoding (and data), then its "backlen", the size of
 * encoding + data in 7-bit groups, most significant first, every byte but
 * the first with bit 7 set (so it can be read backwards). Encodings:
 *   0xxxxxxx            uint 0..127        10xxxxxx + n    string, n < 64
 *   110xxxxx + 1 byte   int13              1110xxxx + 1 + n string, n < 4096
 *   F0 + u32 LE + n     string             F1/F2/F3/F4     int16/24/32/64 LE
 * Ziplist entry: prevlen (1 byte < 254, else FE + u32 LE), then encoding:
 *   00xxxxxx / 01xxxxxx+1 / 10...+u32 BE  string with 6/14/32-bit length
 *   C0 D0 E0 F0 FE  int16/32/64/24/8 LE,  F1..FD  the values 0..12.
 */
#include "rdb_enc.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "zmalloc.h"

enum { LP_HDR = 6, ZL_HDR = 10, IS_HDR = 8, END = 0xFF, BIGLEN = 0xFE };

/* ---- bytes and integers ------------------------------------------------ */

static uint64_t get_le(const unsigned char *p, int n) {
    uint64_t v = 0;
    for (int i = n - 1; i >= 0; i--) v = v << 8 | p[i];
    return v;
}

static void put_le(unsigned char *p, uint64_t v, int n) {
    for (int i = 0; i < n; i++) p[i] = (unsigned char)(v >> (8 * i));
}

static uint64_t get_be32(const unsigned char *p) {
    return (uint64_t)p[0] << 24 | (uint64_t)p[1] << 16 | (uint64_t)p[2] << 8 | p[3];
}

/* The low `bits` bits of u read as a two's complement number. */
static int64_t sign_extend(uint64_t u, int bits) {
    if (bits == 64) {
        int64_t v;
        memcpy(&v, &u, sizeof v);
        return v;
    }
    uint64_t m = (uint64_t)1 << (bits - 1);
    return (int64_t)((u & ((m << 1) - 1)) ^ m) - (int64_t)m;
}

/* Does v fit a signed integer of `bits` bits? */
static int fits(int64_t v, int bits) {
    if (bits >= 64) return 1;
    int64_t lim = (int64_t)1 << (bits - 1);
    return v >= -lim && v < lim;
}

/* u (1 <= u < 10^19) with the sign applied, if it is an int64. */
static int signed_value(uint64_t u, int neg, int64_t *out) {
    if (u > (uint64_t)INT64_MAX + (uint64_t)neg) return 0;
    *out = neg ? -(int64_t)(u - 1) - 1 : (int64_t)u;
    return 1;
}

/* Redis's lpStringToInt64 rule: s is the canonical decimal text of an
 * int64 ("0", or an optional '-', a digit 1-9 and at most 18 more digits,
 * in range). A number with 20 digits never fits, so 19 bound the loop. */
static int text_int(const unsigned char *s, size_t len, int64_t *out) {
    if (len == 1 && s[0] == '0') {
        *out = 0;
        return 1;
    }
    int neg = len > 0 && s[0] == '-';
    size_t digits = len - (size_t)neg;
    if (digits == 0 || digits > 19 || s[neg] < '1' || s[neg] > '9') return 0;
    uint64_t u = 0;
    for (size_t i = (size_t)neg; i < len; i++) {
        if (s[i] < '0' || s[i] > '9') return 0;
        u = u * 10 + (uint64_t)(s[i] - '0');
    }
    return signed_value(u, neg, out);
}

/* Redis's double2ll: d holds an integer within +-2^62. */
static int double_int(double d, long long *out) {
    if (!(d >= -0x1p62 && d <= 0x1p62)) return 0;
    long long v = (long long)d;
    if ((double)v != d) return 0;
    *out = v;
    return 1;
}

size_t renc_double_text(double d, char *buf, size_t cap) {
    char tmp[RENC_DOUBLE_TEXT_MAX];
    long long v;
    int n;
    if (isnan(d)) n = snprintf(tmp, sizeof tmp, "nan");
    else if (isinf(d)) n = snprintf(tmp, sizeof tmp, d > 0 ? "inf" : "-inf");
    else if (double_int(d, &v)) n = snprintf(tmp, sizeof tmp, "%lld", v);
    else n = snprintf(tmp, sizeof tmp, "%.17g", d);
    if (n < 0 || (size_t)n >= cap) return 0;
    memcpy(buf, tmp, (size_t)n + 1);
    return (size_t)n;
}

/* ---- listpack entries -------------------------------------------------- */

/* The integer encodings wider than 13 bits: tag byte and data bytes. */
static const struct lp_wide {
    unsigned char tag;
    int bytes;
} lp_wide[] = {{0xF1, 2}, {0xF2, 3}, {0xF3, 4}, {0xF4, 8}};

static int lp_wide_bytes(unsigned char tag) {
    for (size_t i = 0; i < sizeof lp_wide / sizeof *lp_wide; i++)
        if (lp_wide[i].tag == tag) return lp_wide[i].bytes;
    return 0;
}

/* Writes v's encoding and data (Redis's narrowest); returns the size. */
static size_t lp_put_int(unsigned char *out, int64_t v) {
    if (v >= 0 && v <= 127) {
        out[0] = (unsigned char)v;
        return 1;
    }
    if (fits(v, 13)) {
        uint64_t u = (uint64_t)v & 0x1FFF;
        out[0] = (unsigned char)(0xC0 | u >> 8);
        out[1] = (unsigned char)u;
        return 2;
    }
    const struct lp_wide *w = lp_wide;
    while (!fits(v, 8 * w->bytes)) w++;
    out[0] = w->tag;
    put_le(out + 1, (uint64_t)v, w->bytes);
    return 1 + (size_t)w->bytes;
}

/* Writes the encoding of a string of n bytes; returns its size. */
static size_t lp_put_strhdr(unsigned char *out, size_t n) {
    if (n < 64) {
        out[0] = (unsigned char)(0x80 | n);
        return 1;
    }
    if (n < 4096) {
        out[0] = (unsigned char)(0xE0 | n >> 8);
        out[1] = (unsigned char)n;
        return 2;
    }
    out[0] = 0xF0;
    put_le(out + 1, n, 4);
    return 5;
}

/* Redis's backlen size for an entry of l bytes (its bounds, 127 included
 * but 16383 not, are what decide the bytes). */
static int backlen_size(uint64_t l) {
    return l <= 127 ? 1 : l < 16383 ? 2 : l < 2097151 ? 3 : l < 268435455 ? 4 : 5;
}

static int put_backlen(unsigned char *out, uint64_t l) {
    int n = backlen_size(l);
    for (int i = 0; i < n; i++) {
        unsigned char g = (unsigned char)(l >> (7 * (n - 1 - i)) & 127);
        out[i] = i ? (unsigned char)(g | 128) : g;
    }
    return n;
}

/* Bytes of encoding (tag plus integer data or string length) for an entry
 * starting with c; 0 for the unused tags F5-FF. */
static size_t lp_enc_size(unsigned char c) {
    if (c < 0xC0) return 1;
    if (c < 0xF0) return 2;
    if (c == 0xF0) return 5;
    int w = lp_wide_bytes(c);
    return w ? 1 + (size_t)w : 0;
}

/* Reads the encoding bytes at p into e; returns how many string bytes
 * follow them (0 for integers). */
static size_t lp_read_enc(const unsigned char *p, renc_elem *e) {
    unsigned char c = p[0];
    *e = (renc_elem){.is_int = 1};
    if (c < 0x80) e->v = c;
    else if (c >= 0xC0 && c < 0xE0) e->v = sign_extend((uint64_t)(c & 0x1F) << 8 | p[1], 13);
    else if (c > 0xF0) e->v = sign_extend(get_le(p + 1, lp_wide_bytes(c)), 8 * lp_wide_bytes(c));
    else e->is_int = 0;
    if (e->is_int) return 0;
    if (c < 0xC0) return c & 0x3F;
    if (c < 0xF0) return (size_t)(c & 0x0F) << 8 | p[1];
    return get_le(p + 1, 4);
}

/* Decodes the entry at p, with avail bytes before the terminator: its
 * element, and in *size the bytes it spans with its backlen. */
static int lp_entry(const unsigned char *p, size_t avail, renc_elem *e, size_t *size) {
    size_t h = lp_enc_size(p[0]);
    if (h == 0 || h > avail) return -1;
    size_t n = lp_read_enc(p, e);
    if (n > avail - h) return -1;
    if (!e->is_int) {
        e->p = p + h;
        e->len = n;
    }
    unsigned char bl[5];
    size_t bn = (size_t)put_backlen(bl, h + n);
    if (bn > avail - h - n || memcmp(p + h + n, bl, bn) != 0) return -1;
    *size = h + n + bn;
    return 1;
}

/* ---- listpack builder -------------------------------------------------- */

void rlp_init(rlp_builder *b) {
    b->buf = NULL;
    b->len = LP_HDR;    /* the header's bytes are reserved from the start */
    b->cap = 0;
    b->count = 0;
}

/* Room for `extra` more bytes and the terminator; returns the write point. */
static unsigned char *lp_room(rlp_builder *b, size_t extra) {
    size_t need = b->len + extra + 1;
    if (need > b->cap) {
        size_t cap = b->cap ? b->cap * 2 : 64;
        b->cap = cap > need ? cap : need;
        b->buf = zrealloc(b->buf, b->cap);
    }
    return b->buf + b->len;
}

/* Ends the entry of `size` bytes just written: its backlen, the count. */
static void lp_commit(rlp_builder *b, size_t size) {
    b->len += size;
    b->len += (size_t)put_backlen(b->buf + b->len, size);
    b->count++;
}

void rlp_append_int(rlp_builder *b, int64_t v) {
    unsigned char *p = lp_room(b, 9 + 5);
    lp_commit(b, lp_put_int(p, v));
}

void rlp_append(rlp_builder *b, const void *p, size_t len) {
    int64_t v;
    if (text_int(p, len, &v)) {
        rlp_append_int(b, v);
        return;
    }
    unsigned char *out = lp_room(b, 5 + len + 5);
    size_t h = lp_put_strhdr(out, len);
    if (len) memcpy(out + h, p, len);
    lp_commit(b, h + len);
}

void rlp_append_double(rlp_builder *b, double d) {
    char buf[RENC_DOUBLE_TEXT_MAX];
    rlp_append(b, buf, renc_double_text(d, buf, sizeof buf));
}

size_t rlp_bytes(const rlp_builder *b) { return b->len + 1; }

size_t rlp_int_entry_size(int64_t v) {
    unsigned char tmp[9];
    size_t n = lp_put_int(tmp, v);
    return n + (size_t)backlen_size(n);
}

size_t rlp_entry_size(const void *p, size_t len) {
    int64_t v;
    if (text_int(p, len, &v)) return rlp_int_entry_size(v);
    unsigned char tmp[5];
    size_t n = lp_put_strhdr(tmp, len) + len;
    return n + (size_t)backlen_size(n);
}

unsigned char *rlp_finish(rlp_builder *b, size_t *len) {
    lp_room(b, 0);
    size_t total = b->len + 1;
    uint32_t count = b->count;
    unsigned char *lp = b->buf;
    lp[b->len] = END;
    rlp_init(b);
    if (total > UINT32_MAX) {
        zfree(lp);
        *len = 0;
        return NULL;
    }
    lp = zrealloc(lp, total);
    put_le(lp, total, 4);
    put_le(lp + 4, count < 65535 ? count : 65535, 2);
    *len = total;
    return lp;
}

void rlp_discard(rlp_builder *b) {
    zfree(b->buf);
    rlp_init(b);
}

/* ---- listpack reader --------------------------------------------------- */

/* Iterators in a failed state have pos == len (len - 1 is the terminator). */
int rlp_iter_init(rlp_iter *it, const unsigned char *lp, size_t len) {
    it->lp = lp;
    it->len = len;
    it->pos = LP_HDR;
    if (len >= LP_HDR + 1 && get_le(lp, 4) == len && lp[len - 1] == END) return 0;
    it->pos = len;
    return -1;
}

int rlp_next(rlp_iter *it, renc_elem *e) {
    if (it->pos >= it->len) return -1;
    if (it->pos == it->len - 1) return 0;
    size_t size;
    if (lp_entry(it->lp + it->pos, it->len - 1 - it->pos, e, &size) < 0) {
        it->pos = it->len;
        return -1;
    }
    it->pos += size;
    return 1;
}

/* n elements were read; the header's count (at hdr) agrees, or says 65535. */
static long long count_agrees(long long n, const unsigned char *hdr) {
    uint64_t c = get_le(hdr, 2);
    return c == 65535 || c == (uint64_t)n ? n : -1;
}

long long rlp_validate(const unsigned char *lp, size_t len) {
    rlp_iter it;
    renc_elem e;
    long long n = 0;
    int st = rlp_iter_init(&it, lp, len);
    while (st >= 0 && (st = rlp_next(&it, &e)) == 1) n++;
    return st < 0 ? -1 : count_agrees(n, lp + 4);
}

/* ---- ziplist reader ---------------------------------------------------- */

static const struct zl_int {
    unsigned char tag;
    int bytes;
} zl_ints[] = {{0xC0, 2}, {0xD0, 4}, {0xE0, 8}, {0xF0, 3}, {0xFE, 1}};

int rzl_iter_init(rzl_iter *it, const unsigned char *zl, size_t len) {
    it->zl = zl;
    it->len = len;
    it->pos = ZL_HDR;
    it->prev_entry_len = 0;
    if (len >= ZL_HDR + 1 && get_le(zl, 4) == len && zl[len - 1] == END) return 0;
    it->pos = len;
    return -1;
}

/* The prevlen field at p: its size (1 or 5) and value in *v; 0 if p holds
 * the end marker or the field is cut off. */
static size_t zl_prevlen(const unsigned char *p, size_t avail, size_t *v) {
    if (p[0] < BIGLEN) {
        *v = p[0];
        return 1;
    }
    if (p[0] == END || avail < 5) return 0;
    *v = get_le(p + 1, 4);
    return 5;
}

/* An integer encoding at p into e: its size with data, 0 if malformed. */
static size_t zl_int(const unsigned char *p, size_t avail, renc_elem *e) {
    *e = (renc_elem){.is_int = 1};
    if (p[0] >= 0xF1 && p[0] <= 0xFD) {
        e->v = p[0] - 0xF1;
        return 1;
    }
    for (size_t i = 0; i < sizeof zl_ints / sizeof *zl_ints; i++) {
        int w = zl_ints[i].bytes;
        if (zl_ints[i].tag != p[0] || (size_t)w >= avail) continue;
        e->v = sign_extend(get_le(p + 1, w), 8 * w);
        return 1 + (size_t)w;
    }
    return 0;
}

/* The encoding and data at p (avail >= 1 bytes before the terminator) into
 * e: their size, 0 if malformed. */
static size_t zl_body(const unsigned char *p, size_t avail, renc_elem *e) {
    unsigned char c = p[0];
    if (c >= 0xC0) return zl_int(p, avail, e);
    size_t h = c < 0x40 ? 1 : c < 0x80 ? 2 : 5;
    if (h > avail) return 0;
    size_t n = c < 0x40 ? c : c < 0x80 ? (size_t)(c & 0x3F) << 8 | p[1] : get_be32(p + 1);
    if (n > avail - h) return 0;
    *e = (renc_elem){.p = p + h, .len = n};
    return h + n;
}

static int zl_fail(rzl_iter *it) {
    it->pos = it->len;
    return -1;
}

/* At the terminator: the tail offset must name the last entry's start. */
static int zl_at_end(rzl_iter *it) {
    if (get_le(it->zl + 4, 4) == it->pos - it->prev_entry_len) return 0;
    return zl_fail(it);
}

int rzl_next(rzl_iter *it, renc_elem *e) {
    if (it->pos >= it->len) return -1;
    if (it->pos == it->len - 1) return zl_at_end(it);
    const unsigned char *p = it->zl + it->pos;
    size_t avail = it->len - 1 - it->pos, prev = 0, body = 0;
    size_t ps = zl_prevlen(p, avail, &prev);
    if (ps && ps < avail && prev == it->prev_entry_len) body = zl_body(p + ps, avail - ps, e);
    if (!body) return zl_fail(it);
    it->prev_entry_len = ps + body;
    it->pos += ps + body;
    return 1;
}

long long rzl_validate(const unsigned char *zl, size_t len) {
    rzl_iter it;
    renc_elem e;
    long long n = 0;
    int st = rzl_iter_init(&it, zl, len);
    while (st >= 0 && (st = rzl_next(&it, &e)) == 1) n++;
    return st < 0 ? -1 : count_agrees(n, zl + 8);
}

/* ---- zipmap reader ----------------------------------------------------- */

int rzm_iter_init(rzm_iter *it, const unsigned char *zm, size_t len) {
    it->zm = zm;
    it->len = len;
    it->pos = 1;
    if (len >= 2 && zm[len - 1] == END) return 0;
    it->pos = len;
    return -1;
}

/* A zipmap length at p: its size (1 or 5) and value; 0 if malformed. */
static size_t zm_len(const unsigned char *p, size_t avail, size_t *n) {
    if (avail < 1 || p[0] == END) return 0;
    if (p[0] < BIGLEN) {
        *n = p[0];
        return 1;
    }
    if (avail < 5) return 0;
    *n = get_le(p + 1, 4);
    return 5;
}

/* A key (length, bytes) or a value (length, free byte, bytes, free bytes)
 * at p into e: the bytes it spans, 0 if malformed. */
static size_t zm_str(const unsigned char *p, size_t avail, int is_value, renc_elem *e) {
    size_t n, fr = 0, h = zm_len(p, avail, &n);
    if (!h || (is_value && h >= avail)) return 0;
    if (is_value) fr = p[h++];
    if (n > avail - h || fr > avail - h - n) return 0;
    *e = (renc_elem){.p = p + h, .len = n};
    return h + n + fr;
}

int rzm_next(rzm_iter *it, renc_elem *field, renc_elem *value) {
    if (it->pos >= it->len) return -1;
    if (it->pos == it->len - 1) return 0;
    const unsigned char *p = it->zm + it->pos;
    size_t avail = it->len - 1 - it->pos;
    size_t a = zm_str(p, avail, 0, field), b = a ? zm_str(p + a, avail - a, 1, value) : 0;
    if (!b) {
        it->pos = it->len;
        return -1;
    }
    it->pos += a + b;
    return 1;
}

long long rzm_validate(const unsigned char *zm, size_t len) {
    rzm_iter it;
    renc_elem f, v;
    long long n = 0;
    int st = rzm_iter_init(&it, zm, len);
    while (st >= 0 && (st = rzm_next(&it, &f, &v)) == 1) n++;
    if (st < 0) return -1;
    return zm[0] == BIGLEN || zm[0] == n ? n : -1;
}

/* ---- intset ------------------------------------------------------------ */

static int int_width(int64_t v) { return fits(v, 16) ? 2 : fits(v, 32) ? 4 : 8; }

unsigned char *rintset_build(const int64_t *v, size_t n, size_t *len) {
    int w = 2;
    for (size_t i = 0; i < n; i++)
        if (int_width(v[i]) > w) w = int_width(v[i]);
    *len = IS_HDR + n * (size_t)w;
    unsigned char *is = zmalloc(*len);
    put_le(is, (uint64_t)w, 4);
    put_le(is + 4, n, 4);
    for (size_t i = 0; i < n; i++) put_le(is + IS_HDR + i * (size_t)w, (uint64_t)v[i], w);
    return is;
}

long long rintset_validate(const unsigned char *is, size_t len) {
    if (len < IS_HDR) return -1;
    uint64_t w = get_le(is, 4), n = get_le(is + 4, 4);
    if ((w != 2 && w != 4 && w != 8) || (len - IS_HDR) % w || (len - IS_HDR) / w != n) return -1;
    for (size_t i = 1; i < n; i++)
        if (rintset_get(is, i - 1) >= rintset_get(is, i)) return -1;
    return (long long)n;
}

int64_t rintset_get(const unsigned char *is, size_t i) {
    int w = (int)get_le(is, 4);
    return sign_extend(get_le(is + IS_HDR + i * (size_t)w, w), 8 * w);
}
