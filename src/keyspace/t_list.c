/* t_list.c - the list value (see t_list.h): a doubly linked deque of chunks.
 *
 * Why this layout: lists are mostly pushed and popped at the ends, so both
 * ends must be O(1), and big lists must cost little more than their bytes.
 * A chunk keeps its entries in two arrays inside one allocation:
 *
 *     buf: [ gap A | descriptors | gap B | data bytes | gap C ]
 *                  ls          le      ds            de      cap
 *
 * An entry is a descriptor (a LEB128 varint: the low 7 bits first, the high
 * bit set on every byte but the last) in the descriptor array, and its bytes
 * at the same rank in the data array. A LEB128 sequence can be decoded in
 * both directions (walking back, a varint starts after the previous byte
 * whose high bit is clear), so the two arrays can be walked from either end
 * with two cursors, and an element of up to 63 bytes costs exactly one byte
 * of overhead (a Redis listpack entry costs two: a header and a back length).
 * Descriptor value v: even -> a string of v/2 bytes; odd -> a canonical
 * integer stored little-endian in (v >> 1) + 1 bytes (two's complement).
 *
 * Pushing at the head writes into gaps A and B, pushing at the tail into
 * gaps B and C. When a gap runs out the chunk is rebuilt (reshape) into a
 * buffer 1.5x the content, the spare room going mostly to the side that is
 * growing; a chunk that reaches the size limit is compacted to its exact size
 * ("sealed") and a new chunk is started, so the full chunks inside a big list
 * carry no slack. Popping advances ls/ds (head) or retreats le/de (tail)
 * without moving bytes; a chunk that falls below a quarter of its capacity
 * is rebuilt smaller. Everything is amortized O(1) per push and pop.
 */
#include "t_list.h"
#include "db.h"
#include "server.h"
#include "util.h"
#include "zmalloc.h"
#include <stddef.h>
#include <string.h>

typedef struct lchunk {
    struct lchunk *prev, *next;
    uint32_t cap;               /* bytes in buf */
    uint32_t count;             /* entries, never 0 in a list */
    uint32_t ls, le;            /* descriptors in buf[ls, le) */
    uint32_t ds, de;            /* data in buf[ds, de) */
    unsigned char buf[];
} lchunk;

struct tlist {
    lchunk *head, *tail;
    size_t count;
    size_t nchunks;
};

#define CH_HDR offsetof(lchunk, buf)
#define MIN_CAP 24
#define SAFETY_LIMIT 8192       /* bytes per chunk when the limit is a count */
#define SHRINK_MIN_CAP 256

/* ---- entry encoding -------------------------------------------------------- */

typedef struct enc {
    uint64_t v;                 /* descriptor value */
    uint32_t dl, n;             /* descriptor and data lengths */
    unsigned char desc[10];
    unsigned char ibytes[8];
    const unsigned char *data;
} enc;

static uint32_t leb_len(uint64_t v) {
    uint32_t n = 1;
    while (v >= 128) {
        v >>= 7;
        n++;
    }
    return n;
}

static void leb_put(unsigned char *p, uint64_t v) {
    while (v >= 128) {
        *p++ = (unsigned char)(v | 0x80);
        v >>= 7;
    }
    *p = (unsigned char)v;
}

/* Decode the varint starting at p; returns its length. */
static inline uint32_t leb_get(const unsigned char *p, uint64_t *v) {
    if (p[0] < 128) {
        *v = p[0];
        return 1;
    }
    uint64_t r = 0;
    uint32_t i = 0;
    unsigned shift = 0;
    do {
        r |= (uint64_t)(p[i] & 0x7f) << shift;
        shift += 7;
    } while (p[i++] & 0x80);
    *v = r;
    return i;
}

/* Decode the varint that ends just before buf[end] (and starts at or after
 * buf[lo]); returns its length. */
static inline uint32_t leb_get_back(const unsigned char *buf, uint32_t lo, uint32_t end, uint64_t *v) {
    uint32_t q = end - 1;
    while (q > lo && (buf[q - 1] & 0x80)) q--;
    leb_get(buf + q, v);
    return end - q;
}

static inline uint32_t data_len(uint64_t v) { return (v & 1) ? (uint32_t)(v >> 1) + 1 : (uint32_t)(v >> 1); }

static uint32_t int_width(long long v) {
    for (uint32_t w = 1; w < 8; w++) {
        long long lim = 1LL << (8 * w - 1);
        if (v >= -lim && v < lim) return w;
    }
    return 8;
}

static long long int_get(const unsigned char *p, uint32_t w) {
    uint64_t u = 0;
    for (uint32_t i = 0; i < w; i++) u |= (uint64_t)p[i] << (8 * i);
    if (w < 8 && ((u >> (8 * w - 1)) & 1)) u |= ~0ULL << (8 * w);
    return (long long)u;
}

static void enc_make(enc *e, const char *s, size_t n) {
    long long iv;
    if (n <= 20 && str_to_ll(s, n, &iv)) {
        uint32_t w = int_width(iv);
        for (uint32_t i = 0; i < w; i++) e->ibytes[i] = (unsigned char)((unsigned long long)iv >> (8 * i));
        e->v = (uint64_t)(w - 1) * 2 + 1;
        e->n = w;
        e->data = e->ibytes;
    } else {
        e->v = (uint64_t)n * 2;
        e->n = (uint32_t)n;
        e->data = (const unsigned char *)s;
    }
    e->dl = leb_len(e->v);
    leb_put(e->desc, e->v);
}

/* The bytes of the entry whose data starts at c->buf[x]. */
static void entry_bytes(const lchunk *c, uint32_t x, uint64_t v, tl_elem *e) {
    uint32_t n = data_len(v);
    if (v & 1) {
        e->len = ll_to_str(e->ibuf, int_get(c->buf + x, n));
        e->p = e->ibuf;
    } else {
        e->p = (const char *)c->buf + x;
        e->len = n;
    }
}

/* ---- limits ------------------------------------------------------------------ */

static size_t byte_limit(void) {
    long long f = srv.cfg.list_max_listpack_size;
    if (f >= 0) return SAFETY_LIMIT;
    long long lvl = -f - 1;
    return (size_t)4096 << (lvl > 4 ? 4 : lvl);
}

static uint32_t count_limit(void) {
    long long f = srv.cfg.list_max_listpack_size;
    if (f > 0) return f > UINT32_MAX ? UINT32_MAX : (uint32_t)f;
    return f == 0 ? 1 : UINT32_MAX;
}

static inline size_t used(const lchunk *c) { return (size_t)(c->le - c->ls) + (c->de - c->ds); }

/* May c take one more entry of `add` bytes? An empty chunk takes anything. */
static int allows(const lchunk *c, size_t add) {
    return c->count == 0 || (c->count < count_limit() && CH_HDR + used(c) + add <= byte_limit());
}

static inline int room_front(const lchunk *c, uint32_t dl, uint32_t n) { return c->ls >= dl && c->ds - c->le >= n; }
static inline int room_back(const lchunk *c, uint32_t dl, uint32_t n) {
    return c->ds - c->le >= dl && c->cap - c->de >= n;
}

/* ---- chunk allocation and linking ---------------------------------------------- */

static lchunk *chunk_alloc(size_t cap) {
    lchunk *c = zmalloc(CH_HDR + cap);
    size_t usable = zmalloc_size(c) - CH_HDR;
    c->cap = usable > UINT32_MAX ? UINT32_MAX : (uint32_t)usable;
    c->prev = c->next = NULL;
    c->count = 0;
    c->ls = c->le = c->ds = c->de = 0;
    return c;
}

/* Capacity for `need` content bytes: with growth room unless exact, within
 * the chunk size limit (unless one entry alone is bigger). */
static size_t choose_cap(size_t need, int exact) {
    size_t cap = exact ? need : need + need / 2;
    if (cap < MIN_CAP && !exact) cap = MIN_CAP;
    size_t lim = byte_limit() - CH_HDR;
    if (cap > lim) cap = need > lim ? need : lim;
    return cap;
}

/* Put n after `after` (NULL: at the head). */
static void link_after(tlist *l, lchunk *after, lchunk *n) {
    n->prev = after;
    n->next = after ? after->next : l->head;
    if (n->next) n->next->prev = n;
    else l->tail = n;
    if (after) after->next = n;
    else l->head = n;
    l->nchunks++;
}

static void unlink_free(tlist *l, lchunk *c) {
    if (c->prev) c->prev->next = c->next;
    else l->head = c->next;
    if (c->next) c->next->prev = c->prev;
    else l->tail = c->prev;
    l->nchunks--;
    zfree(c);
}

static void replace_link(tlist *l, lchunk *old, lchunk *m) {
    m->prev = old->prev;
    m->next = old->next;
    if (m->prev) m->prev->next = m;
    else l->head = m;
    if (m->next) m->next->prev = m;
    else l->tail = m;
}

/* Lay out D descriptor and S data bytes in m, with room for one entry of
 * dl/n at `where` (TL_HEAD, TL_TAIL; -1: none) and the spare room split
 * mostly towards `where`. Sets ls/ds; the caller copies the bytes. */
static void layout(lchunk *m, size_t D, size_t S, uint32_t dl, uint32_t n, int where) {
    size_t Dn = D + (where >= 0 ? dl : 0), Sn = S + (where >= 0 ? n : 0);
    size_t F = m->cap - Dn - Sn;
    size_t front = where == TL_HEAD ? F - F / 8 : where == TL_TAIL ? F / 8 : F / 2;
    size_t back = F - front;
    size_t fa = Dn + Sn ? front * Dn / (Dn + Sn) : 0;
    size_t fc = Dn + Sn ? back * Sn / (Dn + Sn) : 0;
    size_t fb = F - fa - fc;
    if (where == TL_HEAD) {
        fa += dl;
        fb += n;
    } else if (where == TL_TAIL) {
        fb += dl;
        fc += n;
    }
    m->ls = (uint32_t)fa;
    m->le = (uint32_t)(fa + D);
    m->ds = (uint32_t)(fa + D + fb);
    m->de = (uint32_t)(fa + D + fb + S);
}

/* Rebuild c into a new buffer with room for an entry of dl/n at `where`
 * (-1: no entry; exact: no growth room). Returns the new chunk. */
static lchunk *reshape(tlist *l, lchunk *c, uint32_t dl, uint32_t n, int where, int exact) {
    size_t D = c->le - c->ls, S = c->de - c->ds;
    size_t need = D + S + (where >= 0 ? (size_t)dl + n : 0);
    lchunk *m = chunk_alloc(choose_cap(need, exact));
    layout(m, D, S, dl, n, where);
    memcpy(m->buf + m->ls, c->buf + c->ls, D);
    memcpy(m->buf + m->ds, c->buf + c->ds, S);
    m->count = c->count;
    replace_link(l, c, m);
    zfree(c);
    return m;
}

/* A full end chunk gets a neighbour: drop its slack. */
static lchunk *seal(tlist *l, lchunk *c) {
    size_t slack = c->cap - used(c);
    if (slack > 32 && slack * 16 > c->cap) return reshape(l, c, 0, 0, -1, 1);
    return c;
}

static lchunk *maybe_shrink(tlist *l, lchunk *c) {
    if (c->cap >= SHRINK_MIN_CAP && used(c) * 4 < c->cap) return reshape(l, c, 0, 0, -1, 0);
    return c;
}

static void write_front(lchunk *c, const enc *e) {
    c->ls -= e->dl;
    memcpy(c->buf + c->ls, e->desc, e->dl);
    c->ds -= e->n;
    memcpy(c->buf + c->ds, e->data, e->n);
    c->count++;
}

static void write_back(lchunk *c, const enc *e) {
    memcpy(c->buf + c->le, e->desc, e->dl);
    c->le += e->dl;
    memcpy(c->buf + c->de, e->data, e->n);
    c->de += e->n;
    c->count++;
}

/* Write e at one end of c, rebuilding c if the gap there is too small. */
static lchunk *chunk_push(tlist *l, lchunk *c, int where, const enc *e) {
    if (where == TL_HEAD) {
        if (!room_front(c, e->dl, e->n)) c = reshape(l, c, e->dl, e->n, TL_HEAD, 0);
        write_front(c, e);
    } else {
        if (!room_back(c, e->dl, e->n)) c = reshape(l, c, e->dl, e->n, TL_TAIL, 0);
        write_back(c, e);
    }
    return c;
}

/* A new chunk holding only e, linked after `after` (NULL: at the head). */
static lchunk *chunk_new_with(tlist *l, lchunk *after, int where, const enc *e) {
    lchunk *c = chunk_alloc(choose_cap((size_t)e->dl + e->n, 0));
    layout(c, 0, 0, e->dl, e->n, where);
    link_after(l, after, c);
    if (where == TL_HEAD) write_front(c, e);
    else write_back(c, e);
    return c;
}

/* ---- list ------------------------------------------------------------------------ */

tlist *tl_new(void) {
    tlist *l = zmalloc(sizeof *l);
    l->head = l->tail = NULL;
    l->count = l->nchunks = 0;
    return l;
}

tlist *tl_new_reserved(int where, size_t count, size_t bytes) {
    tlist *l = tl_new();
    size_t D = count + count / 16, S = bytes; /* one descriptor byte each, a few longer */
    size_t lim = byte_limit() - CH_HDR;
    if (D + S > lim) { /* the first chunk holds what fits */
        D = D * lim / (D + S);
        S = lim - D;
    }
    lchunk *c = chunk_alloc(D + S);
    layout(c, 0, 0, (uint32_t)D, (uint32_t)S, where);
    link_after(l, NULL, c);
    return l;
}

void tl_free(tlist *l) {
    if (!l) return;
    lchunk *c = l->head;
    while (c) {
        lchunk *n = c->next;
        zfree(c);
        c = n;
    }
    zfree(l);
}

tlist *tl_dup(const tlist *l) {
    tlist *d = tl_new();
    for (lchunk *c = l->head; c; c = c->next) {
        size_t D = c->le - c->ls, S = c->de - c->ds;
        lchunk *m = chunk_alloc(D + S);
        m->ls = 0;
        m->le = m->ds = (uint32_t)D;
        m->de = (uint32_t)(D + S);
        memcpy(m->buf, c->buf + c->ls, D);
        memcpy(m->buf + D, c->buf + c->ds, S);
        m->count = c->count;
        link_after(d, d->tail, m);
    }
    d->count = l->count;
    return d;
}

size_t tl_mem(const tlist *l) {
    size_t m = zmalloc_size((void *)l);
    for (lchunk *c = l->head; c; c = c->next) m += zmalloc_size(c);
    return m;
}

size_t tl_len(const tlist *l) { return l->count; }
size_t tl_chunks(const tlist *l) { return l->nchunks; }

void tl_push(tlist *l, int where, const char *s, size_t n) {
    enc e;
    enc_make(&e, s, n);
    lchunk *c = where == TL_HEAD ? l->head : l->tail;
    if (c && allows(c, (size_t)e.dl + e.n)) {
        chunk_push(l, c, where, &e);
    } else {
        if (c) seal(l, c);
        chunk_new_with(l, where == TL_HEAD ? NULL : l->tail, where, &e);
    }
    l->count++;
}

int tl_peek(const tlist *l, int where, tl_elem *e) {
    const lchunk *c = where == TL_HEAD ? l->head : l->tail;
    if (!c) return 0;
    uint64_t v;
    if (where == TL_HEAD) {
        leb_get(c->buf + c->ls, &v);
        entry_bytes(c, c->ds, v, e);
    } else {
        leb_get_back(c->buf, c->ls, c->le, &v);
        entry_bytes(c, c->de - data_len(v), v, e);
    }
    return 1;
}

static void pop_one(tlist *l, lchunk *c, int where) {
    uint64_t v;
    if (where == TL_HEAD) {
        c->ls += leb_get(c->buf + c->ls, &v);
        c->ds += data_len(v);
    } else {
        c->le -= leb_get_back(c->buf, c->ls, c->le, &v);
        c->de -= data_len(v);
    }
    c->count--;
    l->count--;
    if (c->count == 0) unlink_free(l, c);
}

void tl_pop_n(tlist *l, int where, size_t n) {
    while (n > 0 && l->count > 0) {
        lchunk *c = where == TL_HEAD ? l->head : l->tail;
        if (n >= c->count) {
            n -= c->count;
            l->count -= c->count;
            unlink_free(l, c);
            continue;
        }
        for (; n > 0; n--) pop_one(l, c, where);
        maybe_shrink(l, c);
    }
}

/* The chunk holding element idx (< count) and idx's rank in it. */
static lchunk *seek_chunk(const tlist *l, size_t idx, uint32_t *k) {
    lchunk *c;
    if (idx < l->count / 2) {
        c = l->head;
        while (idx >= c->count) {
            idx -= c->count;
            c = c->next;
        }
    } else {
        size_t back = l->count - 1 - idx; /* rank from the tail */
        c = l->tail;
        while (back >= c->count) {
            back -= c->count;
            c = c->prev;
        }
        idx = c->count - 1 - back;
    }
    *k = (uint32_t)idx;
    return c;
}

/* Start offsets (descriptor, data) of entry k of c, walking from the nearer end. */
static void entry_start(const lchunk *c, uint32_t k, uint32_t *d, uint32_t *x) {
    uint64_t v;
    if (k <= c->count / 2) {
        uint32_t dp = c->ls, xp = c->ds;
        for (uint32_t i = 0; i < k; i++) {
            dp += leb_get(c->buf + dp, &v);
            xp += data_len(v);
        }
        *d = dp;
        *x = xp;
    } else {
        uint32_t dp = c->le, xp = c->de;
        for (uint32_t i = c->count; i > k; i--) {
            dp -= leb_get_back(c->buf, c->ls, dp, &v);
            xp -= data_len(v);
        }
        *d = dp;
        *x = xp;
    }
}

static int resolve_index(const tlist *l, long long index, size_t *out) {
    if (index < 0) {
        if ((unsigned long long)-(index + 1) >= l->count) return 0;
        *out = l->count - (size_t)(-(index + 1)) - 1;
    } else {
        if ((unsigned long long)index >= l->count) return 0;
        *out = (size_t)index;
    }
    return 1;
}

int tl_index(const tlist *l, long long index, tl_elem *e) {
    size_t idx;
    if (!resolve_index(l, index, &idx)) return 0;
    uint32_t k, d, x;
    lchunk *c = seek_chunk(l, idx, &k);
    entry_start(c, k, &d, &x);
    uint64_t v;
    leb_get(c->buf + d, &v);
    entry_bytes(c, x, v, e);
    return 1;
}

/* Insert e into c at descriptor offset d / data offset x (an entry boundary). */
static void insert_at(tlist *l, lchunk *c, uint32_t d, uint32_t x, const enc *e);

/* Remove the entry at d/x (lengths dl/n) by shifting what follows; may leave c empty. */
static void remove_at(tlist *l, lchunk *c, uint32_t d, uint32_t x, uint32_t dl, uint32_t n) {
    memmove(c->buf + d, c->buf + d + dl, c->le - d - dl);
    c->le -= dl;
    memmove(c->buf + x, c->buf + x + n, c->de - x - n);
    c->de -= n;
    c->count--;
    l->count--;
}

int tl_set(tlist *l, long long index, const char *s, size_t n) {
    size_t idx;
    if (!resolve_index(l, index, &idx)) return 0;
    uint32_t k, d, x;
    lchunk *c = seek_chunk(l, idx, &k);
    entry_start(c, k, &d, &x);
    uint64_t v;
    uint32_t odl = leb_get(c->buf + d, &v), on = data_len(v);
    enc e;
    enc_make(&e, s, n);
    if (e.dl == odl && e.n == on) {
        memcpy(c->buf + d, e.desc, e.dl);
        memcpy(c->buf + x, e.data, e.n);
        return 1;
    }
    remove_at(l, c, d, x, odl, on);
    insert_at(l, c, d, x, &e);
    return 1;
}

/* Count the entries in descriptor bytes [from, to): one varint ends at
 * each byte whose high bit is clear. */
static uint32_t count_descs(const unsigned char *p, uint32_t from, uint32_t to) {
    uint32_t n = 0;
    for (uint32_t i = from; i < to; i++) n += !(p[i] & 0x80);
    return n;
}

/* Move the entries of c from d/x on into a new chunk linked after c. */
static lchunk *split_at(tlist *l, lchunk *c, uint32_t d, uint32_t x) {
    uint32_t D = c->le - d, S = c->de - x;
    lchunk *r = chunk_alloc(choose_cap((size_t)D + S, 0));
    layout(r, D, S, 0, 0, -1);
    memcpy(r->buf + r->ls, c->buf + d, D);
    memcpy(r->buf + r->ds, c->buf + x, S);
    r->count = count_descs(c->buf, d, c->le);
    c->count -= r->count;
    c->le = d;
    c->de = x;
    link_after(l, c, r);
    return r;
}

static void insert_at(tlist *l, lchunk *c, uint32_t d, uint32_t x, const enc *e) {
    size_t add = (size_t)e->dl + e->n;
    l->count++;
    if (allows(c, add)) {
        if (d == c->ls && room_front(c, e->dl, e->n)) {
            write_front(c, e);
        } else if (d == c->le && room_back(c, e->dl, e->n)) {
            write_back(c, e);
        } else {
            if (!room_back(c, e->dl, e->n)) {
                uint32_t rd = d - c->ls, rx = x - c->ds;
                c = reshape(l, c, e->dl, e->n, TL_TAIL, 0);
                d = c->ls + rd;
                x = c->ds + rx;
            }
            memmove(c->buf + d + e->dl, c->buf + d, c->le - d);
            memcpy(c->buf + d, e->desc, e->dl);
            c->le += e->dl;
            memmove(c->buf + x + e->n, c->buf + x, c->de - x);
            memcpy(c->buf + x, e->data, e->n);
            c->de += e->n;
            c->count++;
        }
        return;
    }
    if (d == c->ls) {
        if (c->prev && allows(c->prev, add)) chunk_push(l, c->prev, TL_TAIL, e);
        else chunk_new_with(l, c->prev, TL_TAIL, e);
        return;
    }
    if (d == c->le) {
        if (c->next && allows(c->next, add)) chunk_push(l, c->next, TL_HEAD, e);
        else chunk_new_with(l, c, TL_HEAD, e);
        return;
    }
    lchunk *r = split_at(l, c, d, x);
    if (allows(c, add)) chunk_push(l, c, TL_TAIL, e);
    else if (allows(r, add)) chunk_push(l, r, TL_HEAD, e);
    else chunk_new_with(l, c, TL_TAIL, e);
}

/* ---- needles and iterators ----------------------------------------------------- */

void tl_needle_init(tl_needle *nd, const char *p, size_t n) {
    nd->p = p;
    nd->len = n;
    nd->is_int = n <= 20 && str_to_ll(p, n, &nd->v);
}

void tl_iter_init(tl_iter *it, tlist *l, size_t start, int dir) {
    it->l = l;
    it->dir = dir;
    it->has_cur = 0;
    if (start >= l->count) {
        it->ch = NULL;
        return;
    }
    uint32_t k, d, x;
    it->ch = seek_chunk(l, start, &k);
    entry_start(it->ch, k, &d, &x);
    if (dir == TL_HEAD) { /* backward cursors sit at the end of the next entry */
        uint64_t v;
        d += leb_get(it->ch->buf + d, &v);
        x += data_len(v);
    }
    it->dpos = d;
    it->xpos = x;
}

int tl_iter_next(tl_iter *it, tl_elem *e) {
    lchunk *c = it->ch;
    it->has_cur = 0;
    if (it->dir == TL_TAIL) {
        while (c && it->dpos == c->le) {
            c = it->ch = c->next;
            if (c) {
                it->dpos = c->ls;
                it->xpos = c->ds;
            }
        }
        if (!c) return 0;
        it->cd = it->dpos;
        it->cx = it->xpos;
        it->cdl = leb_get(c->buf + it->cd, &it->cv);
        it->cn = data_len(it->cv);
        it->dpos += it->cdl;
        it->xpos += it->cn;
    } else {
        while (c && it->dpos == c->ls) {
            c = it->ch = c->prev;
            if (c) {
                it->dpos = c->le;
                it->xpos = c->de;
            }
        }
        if (!c) return 0;
        it->cdl = leb_get_back(c->buf, c->ls, it->dpos, &it->cv);
        it->cn = data_len(it->cv);
        it->cd = it->dpos -= it->cdl;
        it->cx = it->xpos -= it->cn;
    }
    it->has_cur = 1;
    if (e) entry_bytes(c, it->cx, it->cv, e);
    return 1;
}

int tl_iter_eq(const tl_iter *it, const tl_needle *nd) {
    const lchunk *c = it->ch;
    if (nd->is_int) return (it->cv & 1) && int_get(c->buf + it->cx, it->cn) == nd->v;
    return !(it->cv & 1) && it->cn == nd->len && memcmp(c->buf + it->cx, nd->p, nd->len) == 0;
}

void tl_iter_delete(tl_iter *it) {
    lchunk *c = it->ch;
    tlist *l = it->l;
    it->has_cur = 0;
    if (c->count == 1) {
        lchunk *n = it->dir == TL_TAIL ? c->next : c->prev;
        l->count--;
        unlink_free(l, c);
        it->ch = n;
        if (n) {
            it->dpos = it->dir == TL_TAIL ? n->ls : n->le;
            it->xpos = it->dir == TL_TAIL ? n->ds : n->de;
        }
        return;
    }
    uint32_t d = it->cd, x = it->cx, dl = it->cdl, n = it->cn;
    size_t before = (size_t)(d - c->ls) + (x - c->ds);
    size_t after = (size_t)(c->le - d - dl) + (c->de - x - n);
    if (before < after) { /* shift the head side right */
        memmove(c->buf + c->ls + dl, c->buf + c->ls, d - c->ls);
        c->ls += dl;
        memmove(c->buf + c->ds + n, c->buf + c->ds, x - c->ds);
        c->ds += n;
        it->dpos = d + dl;
        it->xpos = x + n;
        c->count--;
        l->count--;
    } else {
        remove_at(l, c, d, x, dl, n);
        it->dpos = d;
        it->xpos = x;
    }
}

void tl_iter_insert(tl_iter *it, int after, const char *s, size_t n) {
    enc e;
    enc_make(&e, s, n);
    uint32_t d = it->cd, x = it->cx;
    if (after) {
        d += it->cdl;
        x += it->cn;
    }
    insert_at(it->l, it->ch, d, x, &e);
    it->ch = NULL;
    it->has_cur = 0;
}

/* ---- tidying after deletions ------------------------------------------------------ */

/* One chunk holding c's entries then n's (its right neighbour), replacing both. */
static lchunk *merge_next(tlist *l, lchunk *c) {
    lchunk *n = c->next;
    size_t D1 = c->le - c->ls, S1 = c->de - c->ds, D2 = n->le - n->ls, S2 = n->de - n->ds;
    lchunk *m = chunk_alloc(choose_cap(D1 + D2 + S1 + S2, 1));
    layout(m, D1 + D2, S1 + S2, 0, 0, -1);
    memcpy(m->buf + m->ls, c->buf + c->ls, D1);
    memcpy(m->buf + m->ls + D1, n->buf + n->ls, D2);
    memcpy(m->buf + m->ds, c->buf + c->ds, S1);
    memcpy(m->buf + m->ds + S1, n->buf + n->ds, S2);
    m->count = c->count + n->count;
    unlink_free(l, n);
    replace_link(l, c, m);
    zfree(c);
    return m;
}

void tl_tidy(tlist *l) {
    size_t half = (byte_limit() - CH_HDR) / 2;
    for (lchunk *c = l->head; c; c = c->next) {
        while (c->next && used(c) + used(c->next) <= half &&
               (uint64_t)c->count + c->next->count <= count_limit())
            c = merge_next(l, c);
        c = maybe_shrink(l, c);
    }
}

/* ---- consistency check (tests) --------------------------------------------------- */

static int chunk_ok(const lchunk *c) {
    if (!(c->ls <= c->le && c->le <= c->ds && c->ds <= c->de && c->de <= c->cap)) return 0;
    if (c->count == 0 || count_descs(c->buf, c->ls, c->le) != c->count) return 0;
    if (c->le > c->ls && (c->buf[c->le - 1] & 0x80)) return 0;
    size_t data = 0;
    uint32_t dp = c->ls;
    while (dp < c->le) {
        uint64_t v;
        dp += leb_get(c->buf + dp, &v);
        data += data_len(v);
    }
    return dp == c->le && data == (size_t)(c->de - c->ds);
}

int tl_check(const tlist *l) {
    size_t count = 0, chunks = 0;
    const lchunk *prev = NULL;
    for (const lchunk *c = l->head; c; c = c->next) {
        if (c->prev != prev || !chunk_ok(c)) return 0;
        count += c->count;
        chunks++;
        prev = c;
    }
    return prev == l->tail && count == l->count && chunks == l->nchunks;
}

/* ---- keyspace hooks ----------------------------------------------------- */

static void list_free_value(void *p) { tl_free(p); }
static void *list_dup_value(const void *p) { return tl_dup(p); }
static size_t list_mem_value(const void *p) { return tl_mem(p); }

void list_register_type(void) {
    db_register_type(OBJ_LIST, list_free_value, list_dup_value, list_mem_value);
}
