/* t_hash.c - the hash value type: a listpack of field, value pairs while
 * small, a dict of dnodes (key = field, value = value) once big (see
 * t_hash.h). Also registers the OBJ_HASH hooks (free, dup, memory) with the
 * keyspace, so DEL/FLUSH/COPY/expiry/MEMORY USAGE work for hashes.
 *
 * The thresholds are read from srv.cfg at each write, so CONFIG SET
 * hash-max-listpack-entries/value applies to the next write, as in Redis.
 */
#include "t_hash.h"
#include <string.h>
#include "db.h"
#include "frand.h"
#include "listpack.h"
#include "server.h"
#include "zmalloc.h"

/* Redis's lpSafeToAdd: a listpack never grows past 1 GB. */
#define LP_SAFETY_BYTES ((size_t)1 << 30)

/* ---- nodes of the hash-table encoding ----------------------------------- */

static dnode *field_node(const char *f, size_t flen, const char *v, size_t vlen) {
    dnode *n = dn_new((uint32_t)flen, (uint32_t)vlen, 0);
    memcpy(dn_key(n), f, flen);
    if (vlen) memcpy(dn_val(n), v, vlen);
    return n;
}

static void free_field_node(dnode *n) { dn_free(n); }

static hstr node_field(const dnode *n) { return (hstr){dn_key(n), dn_klen(n)}; }
static hstr node_value(const dnode *n) { return (hstr){dn_val(n), dn_vlen(n)}; }

static hstr lp_str(const unsigned char *lp, size_t off) {
    hstr s;
    s.p = lp_get(lp, off, &s.len);
    return s;
}

/* ---- life cycle --------------------------------------------------------- */

hashobj *hash_new(void) {
    hashobj *h = zmalloc(sizeof *h);
    h->enc = ENC_LISTPACK;
    h->u.lp = lp_new();
    return h;
}

void hash_free(hashobj *h) {
    if (!h) return;
    if (h->enc == ENC_LISTPACK) {
        lp_free(h->u.lp);
    } else {
        dict_clear(h->u.ht, free_field_node);
        zfree(h->u.ht);
    }
    zfree(h);
}

static void add_copy(void *ud, dnode *n) {
    dict_add(ud, field_node(dn_key(n), dn_klen(n), dn_val(n), dn_vlen(n)));
}

hashobj *hash_dup(const hashobj *h) {
    hashobj *d = zmalloc(sizeof *d);
    d->enc = h->enc;
    if (h->enc == ENC_LISTPACK) {
        size_t n = lp_bytes(h->u.lp);
        d->u.lp = zmalloc(n);
        memcpy(d->u.lp, h->u.lp, n);
    } else {
        d->u.ht = zmalloc(sizeof *d->u.ht);
        dict_init(d->u.ht);
        dict_foreach(h->u.ht, add_copy, d->u.ht);
    }
    return d;
}

size_t hash_len(const hashobj *h) {
    return h->enc == ENC_LISTPACK ? lp_count(h->u.lp) / 2 : dict_size(h->u.ht);
}

/* Memory of the nodes: exact for small tables, else the average of the
 * first MEM_SAMPLES nodes in scan order times the size (as Redis's MEMORY
 * USAGE samples), so the cost stays bounded for huge hashes. */
#define MEM_SAMPLES 64

typedef struct mem_acc { size_t bytes, nodes; } mem_acc;

static void mem_add(void *ud, dnode *n) {
    mem_acc *a = ud;
    a->bytes += dn_usable(n);
    a->nodes++;
}

size_t hash_mem(const hashobj *h) {
    size_t m = zmalloc_size((void *)h);
    if (h->enc == ENC_LISTPACK) return m + zmalloc_size(h->u.lp);
    dict *d = h->u.ht;
    m += zmalloc_size(d) + dict_overhead(d);
    mem_acc a = {0, 0};
    size_t total = dict_size(d);
    if (total <= MEM_SAMPLES) {
        dict_foreach(d, mem_add, &a);
        return m + a.bytes;
    }
    unsigned long cur = 0;
    do {
        cur = dict_scan(d, cur, mem_add, &a);
    } while (cur && a.nodes < MEM_SAMPLES);
    return m + (a.nodes ? a.bytes * total / a.nodes : 0);
}

/* ---- conversion --------------------------------------------------------- */

void hash_convert_to_ht(hashobj *h) {
    if (h->enc != ENC_LISTPACK) return;
    unsigned char *lp = h->u.lp;
    dict *d = zmalloc(sizeof *d);
    dict_init(d);
    for (size_t off = lp_first(lp); off != LP_NONE;) {
        size_t voff = lp_next(lp, off);
        hstr f = lp_str(lp, off), v = lp_str(lp, voff);
        dict_add(d, field_node(f.p, f.len, v.p, v.len));
        off = lp_next(lp, voff);
    }
    lp_free(lp);
    h->enc = ENC_HT;
    h->u.ht = d;
}

static int too_long(size_t len) { return (long long)len > srv.cfg.hash_max_listpack_value; }

void hash_prepare_write(hashobj *h, size_t longest, size_t total) {
    if (h->enc != ENC_LISTPACK) return;
    if (too_long(longest) || lp_bytes(h->u.lp) + total > LP_SAFETY_BYTES) hash_convert_to_ht(h);
}

/* ---- field access ------------------------------------------------------- */

/* Offset of the field's entry in a listpack hash, or LP_NONE. */
static size_t lp_field(const unsigned char *lp, const char *f, size_t flen) {
    return lp_find(lp, lp_first(lp), f, flen, 1);
}

int hash_get(hashobj *h, const char *f, size_t flen, hstr *v) {
    if (h->enc == ENC_LISTPACK) {
        size_t off = lp_field(h->u.lp, f, flen);
        if (off == LP_NONE) return 0;
        *v = lp_str(h->u.lp, lp_next(h->u.lp, off));
        return 1;
    }
    dnode *n = dict_find(h->u.ht, f, flen);
    if (!n) return 0;
    *v = node_value(n);
    return 1;
}

static int lp_set(hashobj *h, const char *f, size_t flen, const char *v, size_t vlen) {
    unsigned char *lp = h->u.lp;
    size_t off = lp_field(lp, f, flen);
    if (off != LP_NONE) {
        h->u.lp = lp_replace(lp, lp_next(lp, off), v, vlen);
        return 0;
    }
    lp = lp_append(lp, f, flen);
    h->u.lp = lp_append(lp, v, vlen);
    if ((long long)hash_len(h) > srv.cfg.hash_max_listpack_entries) hash_convert_to_ht(h);
    return 1;
}

static int ht_set(dict *d, const char *f, size_t flen, const char *v, size_t vlen) {
    uint64_t hv;
    dnode **link = dict_find_link_h(d, f, flen, &hv);
    if (!link) {
        dict_add_h(d, field_node(f, flen, v, vlen), hv);
        return 1;
    }
    dnode *n = *link;
    if (dn_vlen(n) != vlen) { /* the value lives in the node: resize it in place in the chain */
        n = dn_resize_value(n, (uint32_t)vlen);
        *link = n;
    }
    if (vlen) memcpy(dn_val(n), v, vlen);
    return 0;
}

int hash_set(hashobj *h, const char *f, size_t flen, const char *v, size_t vlen) {
    if (h->enc == ENC_LISTPACK && (too_long(flen) || too_long(vlen))) hash_convert_to_ht(h);
    if (h->enc == ENC_LISTPACK) return lp_set(h, f, flen, v, vlen);
    return ht_set(h->u.ht, f, flen, v, vlen);
}

int hash_set_keep_form(hashobj *h, const char *f, size_t flen, const char *v, size_t vlen) {
    if (h->enc == ENC_LISTPACK) return lp_set(h, f, flen, v, vlen);
    return ht_set(h->u.ht, f, flen, v, vlen);
}

int hash_del(hashobj *h, const char *f, size_t flen) {
    if (h->enc == ENC_LISTPACK) {
        size_t off = lp_field(h->u.lp, f, flen);
        if (off == LP_NONE) return 0;
        h->u.lp = lp_delete(h->u.lp, off, 2);
        return 1;
    }
    dnode *n = dict_unlink(h->u.ht, f, flen);
    if (!n) return 0;
    dn_free(n);
    dict_maybe_shrink(h->u.ht);
    return 1;
}

/* ---- iteration ---------------------------------------------------------- */

typedef struct visit_ctx { hash_visit_fn *fn; void *ud; } visit_ctx;

static void visit_node(void *ud, dnode *n) {
    visit_ctx *v = ud;
    v->fn(v->ud, node_field(n), node_value(n));
}

void hash_foreach(hashobj *h, hash_visit_fn *fn, void *ud) {
    if (h->enc == ENC_LISTPACK) {
        unsigned char *lp = h->u.lp;
        for (size_t off = lp_first(lp); off != LP_NONE;) {
            size_t voff = lp_next(lp, off);
            fn(ud, lp_str(lp, off), lp_str(lp, voff));
            off = lp_next(lp, voff);
        }
        return;
    }
    visit_ctx v = {fn, ud};
    dict_foreach(h->u.ht, visit_node, &v);
}

unsigned long hash_scan_ht(hashobj *h, unsigned long cursor, hash_visit_fn *fn, void *ud) {
    visit_ctx v = {fn, ud};
    return dict_scan(h->u.ht, cursor, visit_node, &v);
}

/* ---- random sampling ---------------------------------------------------- */

static void collect_node(void *ud, dnode *n) {
    dnode ***w = ud;
    *(*w)++ = n;
}

/* Every node of a hash table, in table order (n = its size). */
static dnode **all_nodes(dict *d, size_t n) {
    dnode **v = zmalloc((n ? n : 1) * sizeof *v), **w = v;
    dict_foreach(d, collect_node, &w);
    return v;
}

void hash_sampler_init(hash_sampler *s, hashobj *h, size_t picks) {
    s->h = h;
    s->n = hash_len(h);
    s->offs = NULL;
    s->nodes = NULL;
    if (s->n == 0) return;
    if (h->enc == ENC_HT) {
        if (picks >= s->n / 2) s->nodes = all_nodes(h->u.ht, s->n);
        return;
    }
    s->offs = zmalloc(s->n * sizeof *s->offs);
    size_t i = 0;
    for (size_t off = lp_first(h->u.lp); off != LP_NONE; off = lp_next(h->u.lp, lp_next(h->u.lp, off)))
        s->offs[i++] = off;
}

void hash_sampler_free(hash_sampler *s) {
    zfree(s->offs);
    zfree(s->nodes);
    s->offs = NULL;
    s->nodes = NULL;
}

static void lp_pair(const unsigned char *lp, size_t off, hstr *f, hstr *v) {
    *f = lp_str(lp, off);
    *v = lp_str(lp, lp_next(lp, off));
}

void hash_sample(hash_sampler *s, hstr *f, hstr *v) {
    if (s->offs) {
        lp_pair(s->h->u.lp, s->offs[frand_below(s->n)], f, v);
        return;
    }
    dnode *n = s->nodes ? s->nodes[frand_below(s->n)] : dict_random(s->h->u.ht);
    *f = node_field(n);
    *v = node_value(n);
}

/* Picks count of the n slots of v uniformly (partial Fisher-Yates): they
 * end up in v[0..count). */
static void shuffle_prefix(void **v, size_t n, size_t count) {
    for (size_t i = 0; i < count; i++) {
        size_t j = i + frand_below(n - i);
        void *t = v[i];
        v[i] = v[j];
        v[j] = t;
    }
}

/* An open-addressing set of node pointers (distinct picks from a big table). */
typedef struct ptrset { const void **slot; size_t mask; } ptrset;

static int ptrset_add(ptrset *p, const void *x) {
    size_t i = (size_t)(((uintptr_t)x >> 4) * 0x9E3779B97F4A7C15ull) & p->mask;
    while (p->slot[i]) {
        if (p->slot[i] == x) return 0;
        i = (i + 1) & p->mask;
    }
    p->slot[i] = x;
    return 1;
}

/* Few fields out of many: random picks, skipping repeats. */
static void ht_sample_sparse(dict *d, size_t count, hash_visit_fn *fn, void *ud) {
    size_t cap = 16;
    while (cap < count * 2) cap <<= 1;
    ptrset p = {zcalloc(cap * sizeof *p.slot), cap - 1};
    for (size_t got = 0; got < count;) {
        dnode *n = dict_random(d);
        if (!ptrset_add(&p, n)) continue;
        got++;
        fn(ud, node_field(n), node_value(n));
    }
    zfree(p.slot);
}

void hash_sample_distinct(hash_sampler *s, size_t count, hash_visit_fn *fn, void *ud) {
    hashobj *h = s->h;
    if (count > s->n) count = s->n;
    if (h->enc == ENC_HT && count * 3 <= s->n) {
        ht_sample_sparse(h->u.ht, count, fn, ud);
        return;
    }
    void **v = zmalloc(s->n * sizeof *v);
    if (h->enc == ENC_LISTPACK) {
        for (size_t i = 0; i < s->n; i++) v[i] = (void *)(uintptr_t)s->offs[i];
    } else {
        dnode **all = s->nodes ? s->nodes : all_nodes(h->u.ht, s->n);
        for (size_t i = 0; i < s->n; i++) v[i] = all[i];
        if (all != s->nodes) zfree(all);
    }
    shuffle_prefix(v, s->n, count);
    for (size_t i = 0; i < count; i++) {
        hstr f, val;
        if (h->enc == ENC_LISTPACK) {
            lp_pair(h->u.lp, (size_t)(uintptr_t)v[i], &f, &val);
        } else {
            f = node_field(v[i]);
            val = node_value(v[i]);
        }
        fn(ud, f, val);
    }
    zfree(v);
}

/* ---- keyspace hooks ----------------------------------------------------- */

static void hook_free(void *p) { hash_free(p); }
static void *hook_dup(const void *p) { return hash_dup(p); }
static size_t hook_mem(const void *p) { return hash_mem(p); }

void hash_register_type(void) {
    db_register_type(OBJ_HASH, hook_free, hook_dup, hook_mem);
}
