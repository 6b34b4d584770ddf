/* t_stream.c - the stream value type (see t_stream.h): blocks of packed
 * entries, appending, iteration both ways, deletion and trimming.
 *
 * Why blocks of our own and not Redis's listpacks: bytes per entry. Redis
 * spends on every entry a flags element, two ID deltas against the node's
 * master ID (2-4 bytes each with their backlens), a backlen per value and a
 * trailing element count (lp-count) that exists only so the listpack can be
 * walked backwards. A block here holds, per entry:
 *
 *   flags (1 byte: deleted, same fields as the master)
 *   ms delta from the previous entry (varint: 1 byte for IDs added in the
 *   same or the next millisecond), seq (varint: delta from the previous
 *   entry's seq when the ms is the same, else the seq itself)
 *   [field count and fields, only when they differ from the master's]
 *   values: each a varint header, then the bytes for a string, nothing
 *   more for a canonical integer (the header holds it: "1" costs 1 byte)
 *
 * and nothing for walking backwards: a block has at most
 * stream-node-max-entries entries, so reverse iteration decodes the block
 * forwards once and walks the offsets back.
 *
 * Block boundaries are Redis's: every block tracks the size the Redis
 * listpack node of the same entries would have (`rbytes`) and splits where
 * streamAppendItem would (node bytes plus the new entry's field and value
 * bytes reaching stream-node-max-bytes, or live plus deleted entries
 * reaching stream-node-max-entries). So `XADD ... MAXLEN ~ n` and XTRIM's
 * whole-node removal drop exactly the entries redis-server drops, and
 * t_stream_lp.c renders each block as the listpack node Redis would hold.
 *
 * The block array keeps a head offset so trimming the oldest block is
 * O(1), and XADD appends at the tail block, growing it geometrically and
 * shrinking it to fit when it is sealed.
 */
#include "t_stream.h"
#include "t_stream_block.h"

#include <string.h>

#include "db.h"
#include "rdb_enc.h"
#include "util.h"
#include "zmalloc.h"

/* ---- IDs --------------------------------------------------------------- */

size_t sid_fmt(sid id, char *buf) {
    size_t n = ull_to_str(buf, id.ms);
    buf[n++] = '-';
    n += ull_to_str(buf + n, id.seq);
    buf[n] = '\0';
    return n;
}

int sid_incr(sid *id) {
    if (id->seq != UINT64_MAX) id->seq++;
    else if (id->ms != UINT64_MAX) id->ms++, id->seq = 0;
    else return 0;
    return 1;
}

int sid_decr(sid *id) {
    if (id->seq) id->seq--;
    else if (id->ms) id->ms--, id->seq = UINT64_MAX;
    else return 0;
    return 1;
}

/* ---- varints and elements ---------------------------------------------- */

size_t sb_put_varint(unsigned char *p, uint64_t v) {
    size_t n = 0;
    while (v >= 0x80) {
        p[n++] = (unsigned char)(v | 0x80);
        v >>= 7;
    }
    p[n++] = (unsigned char)v;
    return n;
}

size_t sb_get_varint(const unsigned char *p, uint64_t *v) {
    uint64_t r = 0;
    size_t n = 0;
    int shift = 0;
    do {
        r |= (uint64_t)(p[n] & 0x7F) << shift;
        shift += 7;
    } while (p[n++] & 0x80);
    *v = r;
    return n;
}

/* An element is a varint header: (len << 1) for a string of len bytes that
 * follow, (zigzag(v) << 1) | 1 for the canonical decimal text of v. */
static int elem_int(const char *p, size_t len, long long *v) {
    return len && len <= 20 && (p[0] == '-' || (p[0] >= '0' && p[0] <= '9')) && str_to_ll(p, len, v);
}

static uint64_t zigzag(long long v) { return ((uint64_t)v << 1) ^ (uint64_t)(v >> 63); }
static long long unzigzag(uint64_t u) { return (long long)(u >> 1) ^ -(long long)(u & 1); }

size_t sb_elem_size(const char *p, size_t len) {
    long long v;
    unsigned char tmp[10];
    if (elem_int(p, len, &v)) {
        uint64_t z = zigzag(v);
        if (z >> 62) return 1 + len + 10; /* does not fit the header's 63 bits: store as text */
        return sb_put_varint(tmp, z << 1 | 1);
    }
    return sb_put_varint(tmp, (uint64_t)len << 1) + len;
}

size_t sb_put_elem(unsigned char *out, const char *p, size_t len) {
    long long v;
    if (elem_int(p, len, &v) && !(zigzag(v) >> 62)) return sb_put_varint(out, zigzag(v) << 1 | 1);
    size_t n = sb_put_varint(out, (uint64_t)len << 1);
    memcpy(out + n, p, len);
    return n + len;
}

size_t sb_get_elem(const unsigned char *in, span *out, char *buf) {
    uint64_t h;
    size_t n = sb_get_varint(in, &h);
    if (h & 1) {
        out->p = buf;
        out->len = ll_to_str(buf, unzigzag(h >> 1));
        return n;
    }
    out->p = (const char *)in + n;
    out->len = h >> 1;
    return n + out->len;
}

/* ---- blocks ------------------------------------------------------------ */

/* Redis listpack bytes of the node without its live and deleted counts. */
static uint64_t master_rbytes(const span *f, size_t nf) {
    uint64_t r = 6 + 1 + rlp_int_entry_size((int64_t)nf) + rlp_int_entry_size(0);
    for (size_t i = 0; i < nf; i++) r += rlp_entry_size(f[2 * i].p, f[2 * i].len);
    return r;
}

uint64_t sb_redis_bytes(const sblock *b) {
    return b->rbytes + rlp_int_entry_size(b->live) + rlp_int_entry_size(b->deleted);
}

/* Redis listpack bytes of one entry (flags, deltas, fields, values, lp-count). */
uint64_t sb_entry_rbytes(sid master, sid id, const span *fv, size_t nf, int same) {
    uint64_t r = rlp_int_entry_size(same ? 2 : 0);
    r += rlp_int_entry_size((int64_t)(id.ms - master.ms)) + rlp_int_entry_size((int64_t)(id.seq - master.seq));
    if (!same) r += rlp_int_entry_size((int64_t)nf);
    for (size_t i = 0; i < nf; i++) {
        if (!same) r += rlp_entry_size(fv[2 * i].p, fv[2 * i].len);
        r += rlp_entry_size(fv[2 * i + 1].p, fv[2 * i + 1].len);
    }
    return r + rlp_int_entry_size((int64_t)(same ? nf + 3 : 2 * nf + 4));
}

static void block_reserve(sblock **bp, size_t extra) {
    sblock *b = *bp;
    size_t need = (size_t)b->used + extra;
    if (need <= b->cap) return;
    size_t cap = b->cap * 2;
    if (cap < need) cap = need;
    if (cap < 64) cap = 64;
    b = zrealloc(b, sizeof *b + cap);
    b->cap = (uint32_t)cap;
    *bp = b;
}

sblock *sb_new(sid master, const span *fv, size_t nf, size_t hint) {
    size_t need = 10;
    for (size_t i = 0; i < nf; i++) need += sb_elem_size(fv[2 * i].p, fv[2 * i].len);
    size_t cap = need + hint;
    sblock *b = zmalloc(sizeof *b + cap);
    memset(b, 0, sizeof *b);
    b->master = b->last = master;
    b->cap = (uint32_t)cap;
    b->nfields = (uint32_t)nf;
    size_t o = sb_put_varint(b->data, nf);
    for (size_t i = 0; i < nf; i++) o += sb_put_elem(b->data + o, fv[2 * i].p, fv[2 * i].len);
    b->used = b->entries_off = (uint32_t)o;
    b->rbytes = master_rbytes(fv, nf);
    return b;
}

/* Do the fields fv[0], fv[2].. equal the block's master fields? */
int sb_same_fields(const sblock *b, const span *fv, size_t nf) {
    if (nf != b->nfields) return 0;
    const unsigned char *p = b->data;
    uint64_t n;
    char buf[24];
    p += sb_get_varint(p, &n);
    for (size_t i = 0; i < nf; i++) {
        span f;
        p += sb_get_elem(p, &f, buf);
        if (f.len != fv[2 * i].len || memcmp(f.p, fv[2 * i].p, f.len)) return 0;
    }
    return 1;
}

void sb_append(sblock **bp, sid id, const span *fv, size_t nf, int flags) {
    sblock *b = *bp;
    int same = sb_same_fields(b, fv, nf);
    size_t need = 1 + 10 + 10 + (same ? 0 : 10);
    for (size_t i = 0; i < nf; i++) {
        if (!same) need += sb_elem_size(fv[2 * i].p, fv[2 * i].len);
        need += sb_elem_size(fv[2 * i + 1].p, fv[2 * i + 1].len);
    }
    block_reserve(bp, need);
    b = *bp;
    b->rbytes += sb_entry_rbytes(b->master, id, fv, nf, same);
    unsigned char *p = b->data + b->used;
    size_t o = 0;
    p[o++] = (unsigned char)((flags & SB_DELETED) | (same ? SB_SAME : 0));
    int first = !b->live && !b->deleted;
    uint64_t dms = first ? 0 : id.ms - b->last.ms;
    o += sb_put_varint(p + o, dms);
    o += sb_put_varint(p + o, first ? 0 : dms ? id.seq : id.seq - b->last.seq);
    if (!same) o += sb_put_varint(p + o, nf);
    for (size_t i = 0; i < nf; i++) {
        if (!same) o += sb_put_elem(p + o, fv[2 * i].p, fv[2 * i].len);
        o += sb_put_elem(p + o, fv[2 * i + 1].p, fv[2 * i + 1].len);
    }
    b->used += (uint32_t)o;
    b->last = id;
    if (flags & SB_DELETED) b->deleted++;
    else b->live++;
}

void sb_seal(sblock **bp) {
    sblock *b = *bp;
    if (b->cap == b->used) return;
    b = zrealloc(b, sizeof *b + b->used);
    b->cap = b->used;
    *bp = b;
}

/* Decodes the entry at offset *off (prev: the previous entry's ID, or the
 * master for the first); fills e (fields from the master when SAME) into
 * the scratch vector and advances *off. Returns the flags. */
int sb_decode(const sblock *b, uint32_t *off, sid *prev, int first, sb_scratch *sc, sentry *e) {
    const unsigned char *p = b->data + *off;
    int flags = *p++;
    uint64_t dms, s;
    p += sb_get_varint(p, &dms);
    p += sb_get_varint(p, &s);
    sid id = *prev;
    if (first) id = b->master;
    else if (dms) id.ms += dms, id.seq = s;
    else id.seq += s;
    *prev = id;
    uint64_t nf = b->nfields;
    if (!(flags & SB_SAME)) p += sb_get_varint(p, &nf);
    if (sc->cap < 2 * nf) {
        sc->cap = 2 * nf;
        sc->fv = zrealloc(sc->fv, sc->cap * sizeof *sc->fv);
        sc->buf = zrealloc(sc->buf, sc->cap * 24);
    }
    if (flags & SB_SAME) {
        const unsigned char *m = b->data;
        uint64_t mn;
        m += sb_get_varint(m, &mn);
        for (uint64_t i = 0; i < nf; i++) m += sb_get_elem(m, &sc->fv[2 * i], sc->buf + 48 * i);
    }
    for (uint64_t i = 0; i < nf; i++) {
        if (!(flags & SB_SAME)) p += sb_get_elem(p, &sc->fv[2 * i], sc->buf + 48 * i);
        p += sb_get_elem(p, &sc->fv[2 * i + 1], sc->buf + 48 * i + 24);
    }
    *off = (uint32_t)(p - b->data);
    e->id = id;
    e->nf = nf;
    e->fv = sc->fv;
    return flags;
}

/* Skips the entry at *off without decoding its elements' text. */
int sb_skip(const sblock *b, uint32_t *off, sid *prev, int first, sid *id) {
    const unsigned char *p = b->data + *off;
    int flags = *p++;
    uint64_t dms, s, nf = b->nfields, h;
    p += sb_get_varint(p, &dms);
    p += sb_get_varint(p, &s);
    *id = *prev;
    if (first) *id = b->master;
    else if (dms) id->ms += dms, id->seq = s;
    else id->seq += s;
    *prev = *id;
    if (!(flags & SB_SAME)) p += sb_get_varint(p, &nf);
    uint64_t n = flags & SB_SAME ? nf : 2 * nf;
    for (uint64_t i = 0; i < n; i++) {
        p += sb_get_varint(p, &h);
        if (!(h & 1)) p += h >> 1;
    }
    *off = (uint32_t)(p - b->data);
    return flags;
}

void sb_scratch_free(sb_scratch *sc) {
    zfree(sc->fv);
    zfree(sc->buf);
    sc->fv = NULL;
    sc->buf = NULL;
    sc->cap = 0;
}

/* ---- the stream -------------------------------------------------------- */

stream *stream_new(void) {
    stream *s = zmalloc(sizeof *s);
    memset(s, 0, sizeof *s);
    return s;
}

sblock *stream_blk(const stream *s, size_t i) { return s->blk[s->head + i]; }

void stream_push_block(stream *s, sblock *b) {
    if (s->head + s->nblk == s->cap) {
        if (s->head && s->head >= s->cap / 2) {
            memmove(s->blk, s->blk + s->head, s->nblk * sizeof *s->blk);
            s->head = 0;
        } else {
            s->cap = s->cap ? s->cap * 2 : 4;
            s->blk = zrealloc(s->blk, s->cap * sizeof *s->blk);
        }
    }
    s->blk[s->head + s->nblk++] = b;
}

void stream_remove_block(stream *s, size_t i) {
    zfree(s->blk[s->head + i]);
    if (i == 0) {
        s->head++;
    } else {
        memmove(s->blk + s->head + i, s->blk + s->head + i + 1, (s->nblk - i - 1) * sizeof *s->blk);
    }
    if (--s->nblk == 0) s->head = 0;
}

static int block_full(const sblock *b, const span *fv, size_t nf, const stream_limits *lim) {
    size_t max_bytes = lim->max_bytes;
    if (!max_bytes || max_bytes > SB_LISTPACK_MAX) max_bytes = SB_LISTPACK_MAX;
    uint64_t tot = 0;
    for (size_t i = 0; i < 2 * nf; i++) tot += fv[i].len;
    if (sb_redis_bytes(b) + tot >= max_bytes) return 1;
    return lim->max_entries && (long long)(b->live + b->deleted) >= lim->max_entries;
}

void stream_append(stream *s, sid id, const span *fv, size_t nf, const stream_limits *lim) {
    sblock **tail = s->nblk ? &s->blk[s->head + s->nblk - 1] : NULL;
    if (!tail || block_full(*tail, fv, nf, lim)) {
        if (tail) sb_seal(tail);
        stream_push_block(s, sb_new(id, fv, nf, 64));
        tail = &s->blk[s->head + s->nblk - 1];
    }
    sb_append(tail, id, fv, nf, 0);
    if (!s->length) s->first_id = id;
    s->length++;
    s->last_id = id;
    s->entries_added++;
}

/* Index of the last block whose master ID is <= id, or -1. */
long stream_find_block(const stream *s, sid id) {
    long lo = 0, hi = (long)s->nblk - 1, r = -1;
    while (lo <= hi) {
        long mid = (lo + hi) / 2;
        if (sid_cmp(stream_blk(s, (size_t)mid)->master, id) <= 0) r = mid, lo = mid + 1;
        else hi = mid - 1;
    }
    return r;
}

/* Marks the entry at *off of block b deleted; returns 1 if it was live. */
static int block_mark_deleted(sblock *b, uint32_t off) {
    if (b->data[off] & SB_DELETED) return 0;
    b->data[off] |= SB_DELETED;
    b->live--;
    b->deleted++;
    return 1;
}

void stream_update_first(stream *s) {
    if (!s->length || !stream_first_id(s, &s->first_id)) s->first_id = SID_MIN;
}

int stream_delete(stream *s, sid id) {
    long bi = stream_find_block(s, id);
    if (bi < 0) return 0;
    sblock *b = s->blk[s->head + (size_t)bi];
    uint32_t off = b->entries_off;
    sid prev = b->master, cur;
    for (uint32_t k = 0; off < b->used; k++) {
        uint32_t at = off;
        int flags = sb_skip(b, &off, &prev, k == 0, &cur);
        if (flags & SB_DELETED) continue; /* may be out of order (XSETID below a deleted entry) */
        int c = sid_cmp(cur, id);
        if (c > 0) return 0;
        if (c < 0) continue;
        if (b->live == 1) stream_remove_block(s, (size_t)bi);
        else block_mark_deleted(b, at);
        s->length--;
        if (sid_cmp(id, s->max_deleted_id) > 0) s->max_deleted_id = id;
        if (sid_cmp(id, s->first_id) == 0) stream_update_first(s);
        return 1;
    }
    return 0;
}

int stream_has(const stream *s, sid id) {
    stream_iter it;
    sentry e;
    stream_iter_init(&it, s, id, id, 0);
    int r = stream_iter_next(&it, &e);
    stream_iter_end(&it);
    return r;
}

/* Exact trimming inside block 0: marks live entries deleted from the start
 * while `more` says so. Returns how many. */
static long long trim_inside(stream *s, const stream_trim_args *a) {
    sblock *b = stream_blk(s, 0);
    uint32_t off = b->entries_off;
    sid prev = b->master, cur;
    long long n = 0;
    for (uint32_t k = 0; off < b->used; k++) {
        uint32_t at = off;
        int flags = sb_skip(b, &off, &prev, k == 0, &cur);
        if (flags & SB_DELETED) continue;
        if (a->strategy == STRIM_MINID && sid_cmp(cur, a->minid) >= 0) break;
        block_mark_deleted(b, at);
        n++;
        s->length--;
        if (a->strategy == STRIM_MAXLEN && s->length <= (uint64_t)a->maxlen) break;
    }
    return n;
}

long long stream_trim(stream *s, const stream_trim_args *a) {
    long long deleted = 0;
    while (s->nblk) {
        if (a->strategy == STRIM_MAXLEN && s->length <= (uint64_t)a->maxlen) break;
        sblock *b = stream_blk(s, 0);
        long long entries = b->live;
        if (a->limit && deleted + entries > a->limit) break;
        int remove = a->strategy == STRIM_MAXLEN ? (long long)s->length - entries >= a->maxlen
                                                 : sid_cmp(b->last, a->minid) < 0;
        if (remove) {
            stream_remove_block(s, 0);
            s->length -= (uint64_t)entries;
            deleted += entries;
            continue;
        }
        if (a->approx) break;
        deleted += trim_inside(s, a);
        break;
    }
    if (deleted) stream_update_first(s);
    return deleted;
}

/* ---- iteration ----------------------------------------------------------- */

void stream_iter_init(stream_iter *it, const stream *s, sid start, sid end, int rev) {
    memset(it, 0, sizeof *it);
    it->s = s;
    it->start = start;
    it->end = end;
    it->rev = rev;
    if (sid_cmp(start, end) > 0 || !s->nblk) {
        it->done = 1;
        return;
    }
    long bi = stream_find_block(s, rev ? end : start);
    if (!rev) it->bi = bi < 0 ? 0 : (size_t)bi;
    else if (bi < 0) it->done = 1;
    else it->bi = (size_t)bi;
    it->pos = UINT32_MAX; /* the block is not open yet */
}

/* Reverse: decodes the offsets and IDs of block it->bi. */
static void open_rev(stream_iter *it) {
    const sblock *b = stream_blk(it->s, it->bi);
    uint32_t n = b->live + b->deleted;
    if (it->ocap < n) {
        it->ocap = n;
        it->offs = zrealloc(it->offs, n * sizeof *it->offs);
    }
    uint32_t off = b->entries_off;
    sid prev = b->master, cur;
    for (uint32_t k = 0; k < n; k++) {
        it->offs[k].off = off;
        it->offs[k].prev = prev;
        sb_skip(b, &off, &prev, k == 0, &cur);
    }
    it->pos = n;
}

static int next_fwd(stream_iter *it, sentry *e) {
    while (it->bi < it->s->nblk) {
        const sblock *b = stream_blk(it->s, it->bi);
        if (it->pos == UINT32_MAX) {
            if (sid_cmp(b->master, it->end) > 0) break;
            it->pos = b->entries_off;
            it->prev = b->master;
            it->k = 0;
        }
        while (it->pos < b->used) {
            uint32_t at = it->pos;
            sid prev = it->prev, cur;
            int first = it->k++ == 0;
            int flags = sb_skip(b, &it->pos, &it->prev, first, &cur);
            if (flags & SB_DELETED) continue; /* may be out of order (XSETID below a deleted entry) */
            if (sid_cmp(cur, it->end) > 0) goto done;
            if (sid_cmp(cur, it->start) < 0) continue;
            sb_decode(b, &at, &prev, first, &it->sc, e);
            return 1;
        }
        it->bi++;
        it->pos = UINT32_MAX;
    }
done:
    it->done = 1;
    return 0;
}

static int next_rev(stream_iter *it, sentry *e) {
    for (;;) {
        if (it->pos == UINT32_MAX) open_rev(it);
        const sblock *b = stream_blk(it->s, it->bi);
        while (it->pos) {
            it->pos--;
            uint32_t off = it->offs[it->pos].off;
            sid prev = it->offs[it->pos].prev;
            if (b->data[off] & SB_DELETED) continue;
            sb_decode(b, &off, &prev, it->pos == 0, &it->sc, e);
            if (sid_cmp(e->id, it->end) > 0) continue;
            if (sid_cmp(e->id, it->start) < 0) goto done;
            return 1;
        }
        if (it->bi == 0) break;
        it->bi--;
        it->pos = UINT32_MAX;
    }
done:
    it->done = 1;
    return 0;
}

int stream_iter_next(stream_iter *it, sentry *e) {
    if (it->done) return 0;
    return it->rev ? next_rev(it, e) : next_fwd(it, e);
}

void stream_iter_end(stream_iter *it) {
    zfree(it->offs);
    sb_scratch_free(&it->sc);
    it->offs = NULL;
}

int stream_first_id(const stream *s, sid *id) {
    for (size_t i = 0; i < s->nblk; i++) {
        const sblock *b = stream_blk(s, i);
        if (!b->live) continue;
        uint32_t off = b->entries_off;
        sid prev = b->master;
        for (uint32_t k = 0; off < b->used; k++) {
            int flags = sb_skip(b, &off, &prev, k == 0, id);
            if (!(flags & SB_DELETED)) return 1;
        }
    }
    return 0;
}

int stream_last_live_id(const stream *s, sid *id) {
    stream_iter it;
    sentry e;
    stream_iter_init(&it, s, SID_MIN, SID_MAX, 1);
    int r = stream_iter_next(&it, &e);
    if (r) *id = e.id;
    stream_iter_end(&it);
    return r;
}

size_t stream_block_count(const stream *s) { return s->nblk; }
sid stream_block_master(const stream *s, size_t i) { return stream_blk(s, i)->master; }

/* ---- logical counters (consumer group lag), Redis 7.0's rules ---------- */

int stream_range_has_tombstones(const stream *s, const sid *start, const sid *end) {
    if (!s->length || sid_is_zero(s->max_deleted_id)) return 0;
    if (sid_cmp(s->first_id, s->max_deleted_id) > 0) return 0;
    sid a = start ? *start : SID_MIN, z = end ? *end : SID_MAX;
    return sid_cmp(a, s->max_deleted_id) <= 0 && sid_cmp(s->max_deleted_id, z) <= 0;
}

long long stream_estimate_distance(const stream *s, sid id) {
    if (!s->entries_added) return 0;
    if (!s->length && sid_cmp(id, s->last_id) < 1) return (long long)s->entries_added;
    int cmp_last = sid_cmp(id, s->last_id);
    if (cmp_last == 0) return (long long)s->entries_added;
    if (cmp_last > 0) return SCG_INVALID_ENTRIES_READ;
    int cmp_first = sid_cmp(id, s->first_id);
    if (sid_is_zero(s->max_deleted_id) || sid_cmp(s->max_deleted_id, s->first_id) < 0) {
        if (cmp_first < 0) return (long long)(s->entries_added - s->length);
        if (cmp_first == 0) return (long long)(s->entries_added - s->length + 1);
    }
    return SCG_INVALID_ENTRIES_READ;
}
