/* rdb_io.c - RDB primitive encodings (see rdb_io.h).
 *
 * Lengths: the two high bits of the first byte say how the length is
 * stored: 00 six bits, 01 fourteen bits (big-endian, with the next byte),
 * 10 a 32-bit (0x80) or 64-bit (0x81) big-endian length in the following
 * bytes, 11 a special string encoding in the low six bits (8/16/32-bit
 * little-endian integer, or LZF: compressed length, original length, data).
 */
#include "rdb_io.h"
#include "lzf.h"
#include "util.h"
#include "zmalloc.h"
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define LZF_MIN_LEN 20      /* Redis compresses strings longer than this */
#define INT_ENC_MAX_LEN 11  /* longest decimal text of an int32 ("-2147483648") */

/* ---- writer ------------------------------------------------------------ */

void rdbw_init(rdbw *w, int compress) {
    memset(w, 0, sizeof *w);
    w->compress = compress;
}

void rdbw_free(rdbw *w) {
    zfree(w->buf);
    w->buf = NULL;
    w->len = w->cap = 0;
}

static void reserve(rdbw *w, size_t n) {
    if (w->cap - w->len >= n) return;
    size_t cap = w->cap ? w->cap : 256;
    while (cap - w->len < n) cap *= 2;
    w->buf = zrealloc(w->buf, cap);
    w->cap = cap;
}

void rdbw_raw(rdbw *w, const void *p, size_t n) {
    if (!n) return;
    reserve(w, n);
    memcpy(w->buf + w->len, p, n);
    w->len += n;
}

void rdbw_u8(rdbw *w, unsigned v) {
    unsigned char b = (unsigned char)v;
    rdbw_raw(w, &b, 1);
}

void rdbw_u32_le(rdbw *w, uint32_t v) {
    unsigned char b[4];
    for (int i = 0; i < 4; i++) b[i] = (unsigned char)(v >> (8 * i));
    rdbw_raw(w, b, 4);
}

void rdbw_u64_le(rdbw *w, uint64_t v) {
    unsigned char b[8];
    for (int i = 0; i < 8; i++) b[i] = (unsigned char)(v >> (8 * i));
    rdbw_raw(w, b, 8);
}

static void put_be(rdbw *w, uint64_t v, int bytes) {
    unsigned char b[8];
    for (int i = 0; i < bytes; i++) b[i] = (unsigned char)(v >> (8 * (bytes - 1 - i)));
    rdbw_raw(w, b, (size_t)bytes);
}

void rdbw_len(rdbw *w, uint64_t len) {
    if (len < (1 << 6)) {
        rdbw_u8(w, (unsigned)len);
    } else if (len < (1 << 14)) {
        rdbw_u8(w, 0x40 | (unsigned)(len >> 8));
        rdbw_u8(w, (unsigned)(len & 0xff));
    } else if (len <= UINT32_MAX) {
        rdbw_u8(w, 0x80);
        put_be(w, len, 4);
    } else {
        rdbw_u8(w, 0x81);
        put_be(w, len, 8);
    }
}

/* The integer encodings: 1 if v was written as one. */
static int put_int_enc(rdbw *w, long long v) {
    if (v >= INT8_MIN && v <= INT8_MAX) {
        rdbw_u8(w, 0xC0 | RDB_ENC_INT8);
        rdbw_u8(w, (unsigned)(v & 0xff));
    } else if (v >= INT16_MIN && v <= INT16_MAX) {
        rdbw_u8(w, 0xC0 | RDB_ENC_INT16);
        rdbw_u8(w, (unsigned)(v & 0xff));
        rdbw_u8(w, (unsigned)((v >> 8) & 0xff));
    } else if (v >= INT32_MIN && v <= INT32_MAX) {
        rdbw_u8(w, 0xC0 | RDB_ENC_INT32);
        rdbw_u32_le(w, (uint32_t)(int32_t)v);
    } else {
        return 0;
    }
    return 1;
}

/* LZF form if it pays: 1 if written. */
static int put_lzf(rdbw *w, const void *p, size_t n) {
    if (n <= 4) return 0;
    size_t cap = n - 4;
    unsigned char *out = zmalloc(cap);
    size_t clen = lzf_compress(p, n, out, cap);
    if (clen) {
        rdbw_u8(w, 0xC0 | RDB_ENC_LZF);
        rdbw_len(w, clen);
        rdbw_len(w, n);
        rdbw_raw(w, out, clen);
    }
    zfree(out);
    return clen != 0;
}

void rdbw_string(rdbw *w, const void *p, size_t n) {
    long long v;
    if (n <= INT_ENC_MAX_LEN && n > 0 && str_to_ll(p, n, &v) && put_int_enc(w, v)) return;
    if (w->compress && n > LZF_MIN_LEN && put_lzf(w, p, n)) return;
    rdbw_len(w, n);
    rdbw_raw(w, p, n);
}

void rdbw_string_ll(rdbw *w, long long v) {
    if (put_int_enc(w, v)) return;
    char buf[24];
    size_t n = ll_to_str(buf, v);
    rdbw_len(w, n);
    rdbw_raw(w, buf, n);
}

void rdbw_double_bin(rdbw *w, double d) {
    uint64_t bits;
    memcpy(&bits, &d, 8);
    rdbw_u64_le(w, bits);
}

/* ---- reader ------------------------------------------------------------ */

void rdbr_init(rdbr *r, const void *buf, size_t len) {
    memset(r, 0, sizeof *r);
    r->p = buf;
    r->len = len;
}

int rdbr_fail(rdbr *r, const char *why) {
    if (!r->err) {
        r->err = why;
        r->err_pos = r->pos;
    }
    r->pos = r->len; /* nothing more is read */
    return 0;
}

const unsigned char *rdbr_bytes(rdbr *r, size_t n) {
    if (r->err) return NULL;
    if (rdbr_left(r) < n) {
        if (r->more) r->need = n > SIZE_MAX - r->pos ? SIZE_MAX : r->pos + n; /* starved, not corrupt */
        rdbr_fail(r, "unexpected end of data");
        return NULL;
    }
    const unsigned char *p = r->p + r->pos;
    r->pos += n;
    return p;
}

unsigned rdbr_u8(rdbr *r) {
    const unsigned char *p = rdbr_bytes(r, 1);
    return p ? p[0] : 0;
}

static uint64_t get_le(rdbr *r, int bytes) {
    const unsigned char *p = rdbr_bytes(r, (size_t)bytes);
    uint64_t v = 0;
    for (int i = 0; p && i < bytes; i++) v |= (uint64_t)p[i] << (8 * i);
    return v;
}

static uint64_t get_be(rdbr *r, int bytes) {
    const unsigned char *p = rdbr_bytes(r, (size_t)bytes);
    uint64_t v = 0;
    for (int i = 0; p && i < bytes; i++) v = v << 8 | p[i];
    return v;
}

uint32_t rdbr_u32_le(rdbr *r) { return (uint32_t)get_le(r, 4); }
uint64_t rdbr_u64_le(rdbr *r) { return get_le(r, 8); }

uint64_t rdbr_len_enc(rdbr *r, int *is_enc) {
    unsigned b = rdbr_u8(r);
    if (is_enc) *is_enc = 0;
    switch (b >> 6) {
    case 0: return b & 0x3f;
    case 1: return (uint64_t)(b & 0x3f) << 8 | rdbr_u8(r);
    case 2:
        if (b == 0x80) return get_be(r, 4);
        if (b == 0x81) return get_be(r, 8);
        rdbr_fail(r, "unknown length encoding");
        return 0;
    default:
        if (!is_enc) return rdbr_fail(r, "unexpected string encoding");
        *is_enc = 1;
        return b & 0x3f;
    }
}

uint64_t rdbr_len(rdbr *r) { return rdbr_len_enc(r, NULL); }

uint64_t rdbr_count(rdbr *r, size_t unit) {
    uint64_t n = rdbr_len(r);
    if (unit && n > rdbr_bound(r) / unit) return rdbr_fail(r, "element count larger than the data");
    if (unit && n > rdbr_left(r) / unit) { /* a streamed input may hold them once more has come */
        r->need = n * unit > SIZE_MAX - r->pos ? SIZE_MAX : r->pos + n * unit;
        return rdbr_fail(r, "element count larger than the data");
    }
    return n;
}

static int int_string(rdbr *r, rdb_str *s, int bytes) {
    uint64_t u = get_le(r, bytes);
    long long v = bytes == 1 ? (int8_t)u : bytes == 2 ? (int16_t)u : (long long)(int32_t)u;
    if (!rdbr_ok(r)) return 0;
    s->len = ll_to_str(s->ibuf, v);
    s->p = s->ibuf;
    return 1;
}

static int lzf_string(rdbr *r, rdb_str *s) {
    uint64_t clen = rdbr_len(r), len = rdbr_len(r);
    const unsigned char *c = rdbr_bytes(r, clen);
    if (!c) return 0;
    /* LZF expands at most ~255x... a real stream of clen bytes cannot
     * describe more than clen * 264 / 2 bytes: refuse bigger claims before
     * allocating */
    if (len == 0 || len / 132 > clen + 1) return rdbr_fail(r, "bad LZF lengths");
    s->owned = zmalloc(len);
    if (lzf_decompress(c, clen, s->owned, len) != len) {
        zfree(s->owned);
        s->owned = NULL;
        return rdbr_fail(r, "invalid LZF data");
    }
    s->p = s->owned;
    s->len = len;
    return 1;
}

int rdbr_string(rdbr *r, rdb_str *s) {
    int enc;
    s->p = "";
    s->len = 0;
    s->owned = NULL;
    uint64_t n = rdbr_len_enc(r, &enc);
    if (!rdbr_ok(r)) return 0;
    if (enc) {
        switch (n) {
        case RDB_ENC_INT8: return int_string(r, s, 1);
        case RDB_ENC_INT16: return int_string(r, s, 2);
        case RDB_ENC_INT32: return int_string(r, s, 4);
        case RDB_ENC_LZF: return lzf_string(r, s);
        default: return rdbr_fail(r, "unknown string encoding");
        }
    }
    const unsigned char *p = rdbr_bytes(r, n);
    if (!p) return 0;
    s->p = (const char *)p;
    s->len = n;
    return 1;
}

void rdb_str_free(rdb_str *s) {
    zfree(s->owned);
    s->owned = NULL;
}

double rdbr_double_bin(rdbr *r) {
    uint64_t bits = rdbr_u64_le(r);
    double d;
    memcpy(&d, &bits, 8);
    return d;
}

double rdbr_double_text(rdbr *r) {
    unsigned n = rdbr_u8(r);
    if (n == 253) return NAN;
    if (n == 254) return INFINITY;
    if (n == 255) return -INFINITY;
    const unsigned char *p = rdbr_bytes(r, n);
    if (!p) return 0;
    char buf[256];
    memcpy(buf, p, n);
    buf[n] = '\0';
    char *end;
    double d = strtod(buf, &end);
    if (end != buf + n) rdbr_fail(r, "invalid double");
    return d;
}
