/* t_set.c - the set value type (see t_set.h): intset or hash table of
 * member nodes, conversion between them with Redis 7.0's rules, iteration,
 * random members, and the keyspace hooks (free, dup, memory) for OBJ_SET.
 *
 * Memory per member of the hash-table form: one dict node (24-byte header
 * plus the member bytes, no value) and its share of the bucket array;
 * Redis 7.0 spends a dictEntry plus a separate sds string per member. */
#include "t_set.h"
#include "db.h"
#include "frand.h"
#include "intset.h"
#include "server.h"
#include "util.h"
#include "zmalloc.h"
#include <stddef.h>
#include <string.h>

#define HT_TAG 0u

typedef struct set_ht {
    uint32_t tag;       /* HT_TAG; overlays intset.width, which is never 0 */
    dict d;
} set_ht;

_Static_assert(offsetof(intset, width) == 0, "an intset starts with its width");
_Static_assert(offsetof(set_ht, tag) == 0, "a set_ht starts with its tag");

static inline int is_ht(const fset *s) {
    uint32_t tag;
    memcpy(&tag, s, sizeof tag);
    return tag == HT_TAG;
}
static inline intset *as_is(const fset *s) { return (intset *)s; }
static inline set_ht *as_ht(const fset *s) { return (set_ht *)s; }

dict *fset_dict(fset *s) { return &as_ht(s)->d; }
fset *fset_intset_filter(fset *s, int (*keep)(int64_t v, void *ud), void *ud) {
    return (fset *)intset_filter(as_is(s), keep, ud);
}

int fset_encoding(const fset *s) { return is_ht(s) ? ENC_HT : ENC_INTSET; }

size_t fset_size(const fset *s) { return is_ht(s) ? dict_size(&as_ht(s)->d) : intset_len(as_is(s)); }

fset *fset_new_intset(void) { return (fset *)intset_new(); }

fset *fset_new_ht(void) {
    set_ht *h = zmalloc(sizeof *h);
    h->tag = HT_TAG;
    dict_init(&h->d);
    return (fset *)h;
}

/* An integer member as Redis recognises one (isSdsRepresentableAsLongLong). */
static inline int member_int(const char *m, size_t len, long long *v) {
    return len <= 20 && str_to_ll(m, len, v);
}

fset *fset_new_for(const char *m, size_t len) {
    long long v;
    return member_int(m, len, &v) ? fset_new_intset() : fset_new_ht();
}

/* ---- members as dict nodes -------------------------------------------- */

static dnode *member_node(const char *m, size_t len) {
    dnode *n = dn_new((uint32_t)len, 0, 0);
    memcpy(dn_key(n), m, len);
    return n;
}

static void free_member_node(dnode *n) { dn_free(n); }

static int ht_add(set_ht *h, const char *m, size_t len) {
    uint64_t hash;
    if (dict_find_link_h(&h->d, m, len, &hash)) return 0;
    dict_add_h(&h->d, member_node(m, len), hash);
    return 1;
}

static fset *intset_to_ht(intset *is) {
    set_ht *h = as_ht(fset_new_ht());
    for (uint32_t i = 0; i < intset_len(is); i++) {
        char buf[24];
        size_t len = ll_to_str(buf, intset_get(is, i));
        dict_add(&h->d, member_node(buf, len));
    }
    intset_free(is);
    return (fset *)h;
}

/* Redis caps the intset threshold at 2^30 entries. */
static long long intset_max_entries(void) {
    long long max = srv.cfg.set_max_intset_entries;
    return max > (1LL << 30) ? (1LL << 30) : max;
}

static int intset_add_value(fset **s, int64_t v) {
    int added;
    intset *is = intset_add(as_is(*s), v, &added);
    *s = (fset *)is;
    if (added && (long long)intset_len(is) > intset_max_entries()) *s = intset_to_ht(is);
    return added;
}

int fset_add(fset **s, const char *m, size_t len) {
    if (!is_ht(*s)) {
        long long v;
        if (member_int(m, len, &v)) return intset_add_value(s, v);
        *s = intset_to_ht(as_is(*s));
    }
    return ht_add(as_ht(*s), m, len);
}

int fset_add_member(fset **s, const fset_member *m) {
    if (m->is_int && !is_ht(*s)) return intset_add_value(s, m->v);
    return fset_add(s, m->p, m->len);
}

int fset_remove(fset **s, const char *m, size_t len) {
    if (is_ht(*s)) {
        dnode *n = dict_unlink(&as_ht(*s)->d, m, len);
        if (!n) return 0;
        free_member_node(n);
        return 1;
    }
    long long v;
    int removed;
    if (!member_int(m, len, &v)) return 0;
    *s = (fset *)intset_remove(as_is(*s), v, &removed);
    return removed;
}

void fset_removed_done(fset *s) {
    if (is_ht(s)) dict_maybe_shrink(&as_ht(s)->d);
}

int fset_contains(fset *s, const char *m, size_t len) {
    if (is_ht(s)) return dict_find(&as_ht(s)->d, m, len) != NULL;
    long long v;
    return member_int(m, len, &v) && intset_find(as_is(s), v);
}

int fset_contains_member(fset *s, const fset_member *m) {
    if (m->is_int && !is_ht(s)) return intset_find(as_is(s), m->v);
    return fset_contains(s, m->p, m->len);
}

/* ---- reading members ---------------------------------------------------- */

void fset_member_from_node(fset_member *m, const dnode *n) {
    m->p = dn_key(n);
    m->len = dn_klen(n);
    m->is_int = 0;
    m->v = 0;
    m->node = (dnode *)n;
}

void fset_member_from_int(fset_member *m, int64_t v) {
    m->v = v;
    m->is_int = 1;
    m->node = NULL;
    m->len = ll_to_str(m->buf, v);
    m->p = m->buf;
}

void fset_iter_init(fset_iter *it, fset *s) {
    it->s = s;
    it->pos = 0;
    it->table = 0;
    it->bucket = 0;
    it->next = NULL;
    if (is_ht(s)) as_ht(s)->d.pause_rehash++; /* keep nodes where they are */
}

void fset_iter_end(fset_iter *it) {
    if (is_ht(it->s)) as_ht(it->s)->d.pause_rehash--;
}

int fset_iter_next(fset_iter *it, fset_member *m) {
    if (!is_ht(it->s)) {
        intset *is = as_is(it->s);
        if (it->pos >= intset_len(is)) return 0;
        fset_member_from_int(m, intset_get(is, it->pos++));
        return 1;
    }
    dict *d = &as_ht(it->s)->d;
    while (!it->next) {
        if (it->table > 1 || !d->table[it->table]) return 0;
        if (it->bucket >= hashsize(d->bits[it->table])) {
            it->table++;
            it->bucket = 0;
            continue;
        }
        it->next = d->table[it->table][it->bucket++];
    }
    fset_member_from_node(m, it->next);
    it->next = it->next->next;
    return 1;
}

void fset_random(fset *s, fset_member *m) {
    if (is_ht(s)) {
        fset_member_from_node(m, dict_random(&as_ht(s)->d));
    } else {
        intset *is = as_is(s);
        fset_member_from_int(m, intset_get(is, (uint32_t)frand_below(intset_len(is))));
    }
}

/* ---- whole-value operations and keyspace hooks ---------------------------- */

fset *fset_rebuild(fset *s) {
    fset *fresh = fset_new_intset();
    fset_iter it;
    fset_member m;
    fset_iter_init(&it, s);
    while (fset_iter_next(&it, &m)) fset_add_member(&fresh, &m);
    fset_iter_end(&it);
    fset_free(s);
    return fresh;
}

void fset_free(fset *s) {
    if (!s) return;
    if (is_ht(s)) {
        dict_clear(&as_ht(s)->d, free_member_node);
        zfree(s);
    } else {
        intset_free(as_is(s));
    }
}

fset *fset_dup(const fset *s) {
    if (!is_ht(s)) return (fset *)intset_dup(as_is(s));
    fset *copy = fset_new_ht();
    fset_iter it;
    fset_member m;
    fset_iter_init(&it, (fset *)s); /* pauses rehashing only: contents unchanged */
    while (fset_iter_next(&it, &m)) dict_add(&as_ht(copy)->d, member_node(m.p, m.len));
    fset_iter_end(&it);
    return copy;
}

size_t fset_mem(const fset *s) {
    if (!is_ht(s)) return zmalloc_size((void *)s);
    const dict *d = &as_ht(s)->d;
    size_t total = zmalloc_size((void *)s) + dict_overhead(d);
    for (int t = 0; t < 2; t++) {
        if (!d->table[t]) continue;
        for (size_t i = 0; i < hashsize(d->bits[t]); i++)
            for (const dnode *n = d->table[t][i]; n; n = n->next) total += dn_usable(n);
    }
    return total;
}

static void hook_free(void *p) { fset_free(p); }
static void *hook_dup(const void *p) { return fset_dup(p); }
static size_t hook_mem(const void *p) { return fset_mem(p); }

void set_register_type(void) {
    db_register_type(OBJ_SET, hook_free, hook_dup, hook_mem);
}
