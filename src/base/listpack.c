/* listpack.c - a compact, bidirectional sequence of byte strings in one
 * allocation (see listpack.h for the contract).
 *
 * Why: small hashes, sorted sets and list nodes hold few, short elements.
 * One allocation with 2-3 bytes of framing per element costs a fraction of a
 * hash table entry (bucket pointer + node header + malloc rounding), and a
 * linear scan over a few hundred bytes is as fast as hashing.
 *
 * Entry layout at offset `off`:
 *   header   1 byte  0xxxxxxx            length < 128
 *            2 bytes 10xxxxxx xxxxxxxx   length < 16384 (big-endian 14 bits)
 *            5 bytes 0xC0 + uint32 LE    any other length
 *   bytes    the string
 *   backlen  the size of header + bytes, as 7-bit groups, most significant
 *            group first; every byte but the first has bit 7 set, so it can
 *            be decoded walking backwards from the entry's end.
 */
#include "listpack.h"
#include "zmalloc.h"
#include <string.h>

static uint32_t rd32(const unsigned char *p) {
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

static void wr32(unsigned char *p, uint32_t v) {
    p[0] = (unsigned char)v;
    p[1] = (unsigned char)(v >> 8);
    p[2] = (unsigned char)(v >> 16);
    p[3] = (unsigned char)(v >> 24);
}

static size_t total(const unsigned char *lp) { return rd32(lp); }
static void set_total(unsigned char *lp, size_t n) { wr32(lp, (uint32_t)n); }
static void set_count(unsigned char *lp, uint32_t n) { wr32(lp + 4, n); }

static size_t hdr_size(size_t n) { return n < 128 ? 1 : n < 16384 ? 2 : 5; }

static size_t backlen_size(size_t l) {
    size_t s = 1;
    while (l >= 128) {
        l >>= 7;
        s++;
    }
    return s;
}

size_t lp_entry_size(size_t n) {
    size_t l = hdr_size(n) + n;
    return l + backlen_size(l);
}

/* Writes the entry for s[0..n) at p; returns its size. */
static size_t write_entry(unsigned char *p, const char *s, size_t n) {
    size_t h = hdr_size(n);
    if (h == 1) {
        p[0] = (unsigned char)n;
    } else if (h == 2) {
        p[0] = (unsigned char)(0x80 | (n >> 8));
        p[1] = (unsigned char)n;
    } else {
        p[0] = 0xC0;
        wr32(p + 1, (uint32_t)n);
    }
    if (n) memmove(p + h, s, n);
    size_t l = h + n, bl = backlen_size(l);
    unsigned char *b = p + l;
    for (size_t i = 0; i < bl; i++) { /* b[bl-1] holds the lowest 7 bits */
        unsigned char g = (unsigned char)((l >> (7 * (bl - 1 - i))) & 0x7f);
        b[i] = (unsigned char)(i == 0 ? g : (g | 0x80));
    }
    return l + bl;
}

/* Header size and string length of the entry at p. */
static size_t decode_hdr(const unsigned char *p, size_t *len) {
    if (p[0] < 0x80) {
        *len = p[0];
        return 1;
    }
    if ((p[0] & 0xC0) == 0x80) {
        *len = (size_t)(p[0] & 0x3f) << 8 | p[1];
        return 2;
    }
    *len = rd32(p + 1);
    return 5;
}

static size_t entry_size_at(const unsigned char *lp, size_t off) {
    size_t len, h = decode_hdr(lp + off, &len);
    return h + len + backlen_size(h + len);
}

unsigned char *lp_new(void) {
    unsigned char *lp = zmalloc(LP_HDR);
    set_total(lp, LP_HDR);
    set_count(lp, 0);
    return lp;
}

void lp_free(unsigned char *lp) { zfree(lp); }
uint32_t lp_count(const unsigned char *lp) { return rd32(lp + 4); }
size_t lp_bytes(const unsigned char *lp) { return total(lp); }

size_t lp_first(const unsigned char *lp) { return total(lp) > LP_HDR ? LP_HDR : LP_NONE; }

size_t lp_next(const unsigned char *lp, size_t off) {
    size_t nx = off + entry_size_at(lp, off);
    return nx < total(lp) ? nx : LP_NONE;
}

size_t lp_prev(const unsigned char *lp, size_t off) {
    if (off <= LP_HDR) return LP_NONE;
    size_t l = 0, shift = 0, i = off;
    for (;;) { /* walk back over the previous entry's backlen */
        unsigned char b = lp[--i];
        l |= (size_t)(b & 0x7f) << shift;
        shift += 7;
        if (!(b & 0x80)) break;
    }
    return i - l;
}

size_t lp_last(const unsigned char *lp) { return lp_prev(lp, total(lp)); }

size_t lp_seek(const unsigned char *lp, long index) {
    long n = (long)lp_count(lp);
    if (index < 0) index += n;
    if (index < 0 || index >= n) return LP_NONE;
    size_t off;
    if (index <= n / 2) {
        off = LP_HDR;
        while (index-- > 0) off = lp_next(lp, off);
    } else {
        off = lp_last(lp);
        for (long k = n - 1; k > index; k--) off = lp_prev(lp, off);
    }
    return off;
}

const char *lp_get(const unsigned char *lp, size_t off, size_t *len) {
    size_t h = decode_hdr(lp + off, len);
    return (const char *)lp + off + h;
}

unsigned char *lp_insert(unsigned char *lp, size_t off, const char *s, size_t n) {
    size_t t = total(lp), es = lp_entry_size(n);
    if (off == LP_NONE) off = t;
    lp = zrealloc(lp, t + es);
    memmove(lp + off + es, lp + off, t - off);
    write_entry(lp + off, s, n);
    set_total(lp, t + es);
    set_count(lp, lp_count(lp) + 1);
    return lp;
}

unsigned char *lp_append(unsigned char *lp, const char *s, size_t n) { return lp_insert(lp, LP_NONE, s, n); }
unsigned char *lp_prepend(unsigned char *lp, const char *s, size_t n) { return lp_insert(lp, LP_HDR, s, n); }

unsigned char *lp_delete(unsigned char *lp, size_t off, uint32_t count) {
    size_t t = total(lp), end = off;
    uint32_t removed = 0;
    while (removed < count && end < t) {
        end += entry_size_at(lp, end);
        removed++;
    }
    memmove(lp + off, lp + end, t - end);
    set_total(lp, t - (end - off));
    set_count(lp, lp_count(lp) - removed);
    return zrealloc(lp, t - (end - off));
}

unsigned char *lp_replace(unsigned char *lp, size_t off, const char *s, size_t n) {
    size_t t = total(lp), old = entry_size_at(lp, off), es = lp_entry_size(n);
    if (es == old) { /* same framing: rewrite in place */
        write_entry(lp + off, s, n);
        return lp;
    }
    if (es > old) lp = zrealloc(lp, t - old + es);
    memmove(lp + off + es, lp + off + old, t - off - old);
    write_entry(lp + off, s, n);
    set_total(lp, t - old + es);
    if (es < old) lp = zrealloc(lp, t - old + es);
    return lp;
}

size_t lp_find(const unsigned char *lp, size_t off, const char *s, size_t n, unsigned skip) {
    size_t t = total(lp);
    unsigned k = 0;
    while (off != LP_NONE && off < t) {
        size_t len, h = decode_hdr(lp + off, &len);
        if (k == 0 && len == n && memcmp(lp + off + h, s, n) == 0) return off;
        k = k == skip ? 0 : k + 1;
        off += h + len + backlen_size(h + len);
    }
    return LP_NONE;
}

int lp_valid(const unsigned char *lp, size_t bufsize) {
    if (bufsize < LP_HDR) return 0;
    size_t t = total(lp), off = LP_HDR;
    if (t > bufsize || t < LP_HDR) return 0;
    uint32_t n = 0;
    while (off < t) {
        size_t len, h;
        if (lp[off] >= 0xC0 && lp[off] != 0xC0) return 0;
        size_t need = lp[off] < 0x80 ? 1 : lp[off] == 0xC0 ? 5 : 2;
        if (t - off < need) return 0;
        h = decode_hdr(lp + off, &len);
        if (len > t - off - h) return 0;
        size_t l = h + len, bl = backlen_size(l);
        if (bl > t - off - l) return 0;
        size_t back = 0;
        for (size_t i = 0; i < bl; i++) { /* the backlen, most significant group first */
            unsigned char b = lp[off + l + i];
            if (((b & 0x80) != 0) != (i != 0)) return 0;
            back = back << 7 | (b & 0x7f);
        }
        if (back != l) return 0;
        off += l + bl;
        n++;
    }
    return off == t && n == lp_count(lp);
}
