/* t_stream_lp.c - a stream block as the Redis listpack node redis-server
 * would hold for the same entries, and back (RDB files, DUMP payloads).
 *
 * Node layout (Redis 5+): master entry `live deleted nfields field.. 0`,
 * then per entry `flags ms-delta seq-delta [nfields field value..|value..]
 * lp-count`, the deltas against the master ID (the node's key). Blocks
 * already split where Redis splits its nodes (t_stream.c), so a saved
 * file holds the nodes redis-server would have written.
 *
 * Reading takes untrusted bytes: the listpack is validated whole first
 * (rdb_enc.h), then every count, flag and ID is checked as it is read;
 * anything inconsistent fails the whole node.
 */
#include <string.h>

#include "rdb_enc.h"
#include "util.h"
#include "t_stream.h"
#include "t_stream_block.h"
#include "zmalloc.h"

unsigned char *stream_block_listpack(const stream *s, size_t i, sid *master, size_t *len) {
    const sblock *b = stream_blk(s, i);
    rlp_builder lp;
    rlp_init(&lp);
    rlp_append_int(&lp, b->live);
    rlp_append_int(&lp, b->deleted);
    rlp_append_int(&lp, b->nfields);
    const unsigned char *m = b->data;
    uint64_t nf;
    char buf[24];
    m += sb_get_varint(m, &nf);
    for (uint64_t k = 0; k < nf; k++) {
        span f;
        m += sb_get_elem(m, &f, buf);
        rlp_append(&lp, f.p, f.len);
    }
    rlp_append_int(&lp, 0);
    sb_scratch sc = {0};
    uint32_t off = b->entries_off;
    sid prev = b->master;
    for (uint32_t k = 0; off < b->used; k++) {
        sentry e;
        int flags = sb_decode(b, &off, &prev, k == 0, &sc, &e);
        rlp_append_int(&lp, flags);
        rlp_append_int(&lp, (int64_t)(e.id.ms - b->master.ms));
        rlp_append_int(&lp, (int64_t)(e.id.seq - b->master.seq));
        if (!(flags & SB_SAME)) rlp_append_int(&lp, (int64_t)e.nf);
        for (size_t j = 0; j < e.nf; j++) {
            if (!(flags & SB_SAME)) rlp_append(&lp, e.fv[2 * j].p, e.fv[2 * j].len);
            rlp_append(&lp, e.fv[2 * j + 1].p, e.fv[2 * j + 1].len);
        }
        rlp_append_int(&lp, (int64_t)(flags & SB_SAME ? e.nf + 3 : 2 * e.nf + 4));
    }
    sb_scratch_free(&sc);
    *master = b->master;
    return rlp_finish(&lp, len);
}

/* ---- reading ----------------------------------------------------------- */

typedef struct lp_reader {
    rlp_iter it;
    renc_elem e;
    int pushed;                 /* e holds an element read ahead */
} lp_reader;

static int rd_next(lp_reader *r) {
    if (r->pushed) {
        r->pushed = 0;
        return 1;
    }
    return rlp_next(&r->it, &r->e) == 1;
}

/* The next element as an integer (Redis writes these as integers). */
static int rd_int(lp_reader *r, int64_t *v) {
    if (!rd_next(r) || !r->e.is_int) return 0;
    *v = r->e.v;
    return 1;
}

/* The next element as bytes (integers rendered as their decimal text into buf, 24 bytes). */
static int rd_span(lp_reader *r, span *out, char *buf) {
    if (!rd_next(r)) return 0;
    if (r->e.is_int) *out = (span){buf, ll_to_str(buf, r->e.v)};
    else *out = (span){(const char *)r->e.p, r->e.len};
    return 1;
}

typedef struct lp_fields {
    span *fv;
    char *buf;
    size_t cap;
} lp_fields;

static void fields_reserve(lp_fields *f, size_t n) {
    if (n <= f->cap) return;
    f->cap = n;
    f->fv = zrealloc(f->fv, 2 * n * sizeof *f->fv);
    f->buf = zrealloc(f->buf, 2 * n * 24);
}

static void fields_free(lp_fields *f) {
    zfree(f->fv);
    zfree(f->buf);
}

#define MAX_FIELDS 1000000      /* more is not a stream Redis could have written */

/* Could n more elements follow? Each takes 2 bytes at least (encoding and
 * backlen), so a declared count never sizes an allocation beyond what the
 * listpack's bytes could hold. */
static int could_follow(const lp_reader *r, int64_t n) { return n <= (int64_t)((r->it.len - r->it.pos) / 2); }

/* Reads one entry (fields from the master's when SAME): flags, ID, count. */
static int read_entry(lp_reader *r, sid master, const lp_fields *mf, size_t mnf, lp_fields *ent, int *flags,
                      sid *id, size_t *nf) {
    int64_t fl, dms, dseq, n = (int64_t)mnf, cnt;
    if (!rd_int(r, &fl) || !rd_int(r, &dms) || !rd_int(r, &dseq)) return -1;
    if (fl < 0 || fl > 3) return -1;
    id->ms = master.ms + (uint64_t)dms;
    id->seq = master.seq + (uint64_t)dseq;
    if (!(fl & SB_SAME) && (!rd_int(r, &n) || n < 1 || n > MAX_FIELDS || !could_follow(r, 2 * n))) return -1;
    fields_reserve(ent, (size_t)n);
    for (int64_t j = 0; j < n; j++) {
        if (fl & SB_SAME) ent->fv[2 * j] = mf->fv[2 * j];
        else if (!rd_span(r, &ent->fv[2 * j], ent->buf + 48 * j)) return -1;
        if (!rd_span(r, &ent->fv[2 * j + 1], ent->buf + 48 * j + 24)) return -1;
    }
    if (!rd_int(r, &cnt) || cnt != (fl & SB_SAME ? n + 3 : 2 * n + 4)) return -1;
    *flags = (int)fl;
    *nf = (size_t)n;
    return 0;
}

static int read_master(lp_reader *r, lp_fields *mf, int64_t *live, int64_t *deleted, size_t *nf) {
    int64_t n, zero;
    if (!rd_int(r, live) || !rd_int(r, deleted) || !rd_int(r, &n)) return -1;
    /* no live entry is fine (Redis 7.0 keeps a node whose last entry is a
     * tombstone after an exact MINID trim), no entry at all is not */
    if (*live < 0 || *deleted < 0 || (*live == 0 && *deleted == 0) || n < 1 || n > MAX_FIELDS || !could_follow(r, n))
        return -1;
    fields_reserve(mf, (size_t)n);
    for (int64_t j = 0; j < n; j++)
        if (!rd_span(r, &mf->fv[2 * j], mf->buf + 48 * j)) return -1;
    if (!rd_int(r, &zero) || zero != 0) return -1;
    *nf = (size_t)n;
    return 0;
}

/* Reads the entries after the master into block *b; the counts read from
 * the master must match what the entries say. The first entry is the
 * master; live entries ascend. A deleted entry may be out of order: after
 * XSETID below a deleted last entry, Redis appends smaller IDs behind it
 * (and loads such nodes), so only live entries are checked. */
static int add_entries(sblock **b, lp_reader *r, const lp_fields *mf, size_t mnf, int64_t live, int64_t deleted) {
    lp_fields ent = {0};
    int ret = 0;
    sid prev = SID_MIN;         /* the last live entry's ID */
    int any_live = 0;
    for (int64_t k = 0;; k++) {
        int st = rlp_next(&r->it, &r->e);
        if (st == 0) break;
        int flags;
        sid id;
        size_t nf;
        r->pushed = 1;
        if (st < 0 || read_entry(r, (*b)->master, mf, mnf, &ent, &flags, &id, &nf) < 0 ||
            (k == 0 && sid_cmp(id, (*b)->master) != 0) ||
            (!(flags & SB_DELETED) && any_live && sid_cmp(id, prev) <= 0) ||
            ((flags & SB_SAME) && !sb_same_fields(*b, ent.fv, nf))) {
            ret = -1;
            break;
        }
        sb_append(b, id, ent.fv, nf, flags & SB_DELETED);
        if (!(flags & SB_DELETED)) prev = id, any_live = 1;
    }
    fields_free(&ent);
    if (ret == 0 && ((int64_t)(*b)->live != live || (int64_t)(*b)->deleted != deleted)) ret = -1;
    return ret;
}

int stream_add_listpack(stream *s, sid master, const unsigned char *lp, size_t len) {
    if (rlp_validate(lp, len) < 0) return -1;
    if (s->nblk && sid_cmp(master, stream_blk(s, s->nblk - 1)->master) <= 0) return -1;
    lp_reader r = {.pushed = 0};
    if (rlp_iter_init(&r.it, lp, len) < 0) return -1;
    lp_fields mf = {0};
    int64_t live, deleted;
    size_t mnf;
    int ret = -1;
    if (read_master(&r, &mf, &live, &deleted, &mnf) == 0) {
        sblock *b = sb_new(master, mf.fv, mnf, len);
        ret = add_entries(&b, &r, &mf, mnf, live, deleted);
        if (ret == 0) {
            sb_seal(&b);
            stream_push_block(s, b);
            s->length += b->live;
        } else {
            zfree(b);
        }
    }
    fields_free(&mf);
    return ret;
}

void stream_loaded(stream *s) { stream_update_first(s); }
