/* cmd_sort.c - SORT and SORT_RO: the elements of a list, set or sorted set
 * sorted numerically or lexicographically, by themselves or by weights
 * looked up through a pattern, with LIMIT, GET patterns and STORE.
 *
 * Why a file of its own: SORT reads every collection type and the string
 * and hash values its patterns name, so it belongs to none of the type
 * groups (Redis keeps it in sort.c, COMMAND DOCS group "generic").
 *
 * What clients can observe is Redis 7.0's, so it is reproduced here:
 *  - patterns: "#" is the element; otherwise the first '*' (searched as a C
 *    string: an embedded NUL ends the search) is replaced by the element
 *    and "->field" after it reads a hash field; a pattern with no '*'
 *    names nothing (GET replies null) and, given to BY, turns sorting off;
 *  - numeric weights are parsed with strtod over the C string (leading
 *    space, hex and "inf" accepted, NaN and ERANGE refused); a weight key
 *    that is missing weighs 0 (numeric) or sorts first (ALPHA);
 *  - ties: numeric weights fall back to comparing the elements as bytes;
 *    ALPHA compares with strcoll (as C strings) unless STORE is given, then
 *    as bytes; equal ALPHA weights keep the input order (glibc's qsort,
 *    which Redis uses, is a stable merge sort: so is ours, and a short
 *    LIMIT's selection keeps exactly the stable order's first items);
 *  - BY without '*' keeps the native order: lists and sorted sets honour
 *    DESC and LIMIT directly; a set is sorted ALPHA anyway when the result
 *    is stored or the caller is a script (so that replicas agree);
 *  - a listpack sorted set is converted to a skiplist (OBJECT ENCODING
 *    shows it), as Redis 7.0 does before it reads one;
 *  - STORE writes a list (or deletes the destination when the result is
 *    empty), raises "sortstore" (or "del") and returns the count.
 */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "acl.h"
#include "blocking.h"
#include "client.h"
#include "command.h"
#include "db.h"
#include "multi.h"
#include "notify.h"
#include "reply.h"
#include "server.h"
#include "t_hash.h"
#include "t_list.h"
#include "t_set.h"
#include "t_zset.h"
#include "util.h"
#include "zmalloc.h"

/* ---- helpers ----------------------------------------------------------- */

/* Redis compares option words as C strings: an embedded NUL ends them. */
static int opt_is(span s, const char *lit) {
    const char *z = memchr(s.p, 0, s.len);
    span t = {s.p, z ? (size_t)(z - s.p) : s.len};
    return span_eq_nocase(t, lit);
}

/* Length of s as a C string (up to its first NUL). */
static size_t cstr_len(span s) {
    const char *z = memchr(s.p, 0, s.len);
    return z ? (size_t)(z - s.p) : s.len;
}

/* The elements' bytes (and ALPHA weights), each NUL-terminated (strtod and
 * strcoll read C strings), bump-allocated from a few blocks that grow
 * geometrically: one allocation per element made a SORT of 10,000
 * elements spend a fifth of its time in malloc and free. */
typedef struct sort_block {
    struct sort_block *next;
    size_t used, cap;
    char data[];
} sort_block;

typedef struct sort_arena {
    sort_block *head; /* the block being filled */
    size_t next_cap;
} sort_arena;

#define ARENA_FIRST 1024
#define ARENA_MAX (1u << 20)

static char *arena_dup(sort_arena *a, const char *p, size_t n) {
    sort_block *b = a->head;
    if (!b || b->cap - b->used < n + 1) {
        size_t cap = a->next_cap ? a->next_cap : ARENA_FIRST;
        if (cap < ARENA_MAX) a->next_cap = cap * 2;
        if (cap < n + 1) cap = n + 1;
        b = zmalloc(sizeof *b + cap);
        b->used = 0;
        b->cap = cap;
        if (a->head && n + 1 > ARENA_FIRST) {
            /* a big element gets a block of its own: keep filling the current one */
            b->next = a->head->next;
            a->head->next = b;
        } else {
            b->next = a->head;
            a->head = b;
        }
    }
    char *s = b->data + b->used;
    if (n) memcpy(s, p, n);
    s[n] = '\0';
    b->used += n + 1;
    return s;
}

static void arena_free(sort_arena *a) {
    for (sort_block *b = a->head, *next; b; b = next) {
        next = b->next;
        zfree(b);
    }
}

/* One element to sort: its bytes, and its weight (a score, or for ALPHA
 * with BY the bytes of the weight value, NULL when the key is missing).
 * 32 bytes: the merge sort moves items, not pointers to them. */
typedef struct sort_item {
    const char *el;
    size_t len;
    union {
        double score;    /* numeric */
        const char *cmp; /* ALPHA with BY */
    } w;
    size_t cmplen;
} sort_item;

typedef struct sort_ctx {
    int desc, alpha, bypattern, store;
} sort_ctx;

/* Redis's compareStringObjects: bytes, then the shorter first. */
static int cmp_binary(const char *a, size_t al, const char *b, size_t bl) {
    size_t m = al < bl ? al : bl;
    int r = m ? memcmp(a, b, m) : 0;
    if (r) return r;
    return al < bl ? -1 : al > bl ? 1 : 0;
}

static int sort_compare(const sort_ctx *x, const sort_item *a, const sort_item *b) {
    int cmp;
    if (!x->alpha) {
        if (a->w.score > b->w.score) cmp = 1;
        else if (a->w.score < b->w.score) cmp = -1;
        else cmp = cmp_binary(a->el, a->len, b->el, b->len);
    } else if (x->bypattern) {
        if (!a->w.cmp || !b->w.cmp) cmp = a->w.cmp == b->w.cmp ? 0 : !a->w.cmp ? -1 : 1;
        else if (x->store) cmp = cmp_binary(a->w.cmp, a->cmplen, b->w.cmp, b->cmplen);
        else cmp = strcoll(a->w.cmp, b->w.cmp);
    } else {
        if (x->store) cmp = cmp_binary(a->el, a->len, b->el, b->len);
        else cmp = strcoll(a->el, b->el);
    }
    if (x->desc) cmp = cmp > 0 ? -1 : cmp < 0 ? 1 : 0;
    return cmp;
}

/* Runs this short are sorted by insertion before merging. */
#define SORT_RUN 8

/* Stable insertion sort of v[0..n). */
static void insertion_sort(const sort_ctx *x, sort_item *v, size_t n) {
    for (size_t i = 1; i < n; i++) {
        sort_item t = v[i];
        size_t j = i;
        for (; j > 0 && sort_compare(x, &v[j - 1], &t) > 0; j--) v[j] = v[j - 1];
        v[j] = t;
    }
}

/* Stable merge of the sorted runs a[0..n1) and a[n1..n) into out. */
static void merge_runs(const sort_ctx *x, const sort_item *a, size_t n1, size_t n, sort_item *out) {
    size_t i = 0, j = n1, k = 0;
    while (i < n1 && j < n) out[k++] = sort_compare(x, &a[i], &a[j]) <= 0 ? a[i++] : a[j++];
    while (i < n1) out[k++] = a[i++];
    while (j < n) out[k++] = a[j++];
}

/* Stable bottom-up merge sort of v[0..n) (tmp: room for n items): runs of
 * SORT_RUN by insertion, then passes that merge from one buffer into the
 * other. Any stable sort gives the same order as glibc's qsort (a stable
 * merge sort), which Redis uses. */
static void merge_sort(const sort_ctx *x, sort_item *v, sort_item *tmp, size_t n) {
    for (size_t i = 0; i < n; i += SORT_RUN) insertion_sort(x, v + i, n - i < SORT_RUN ? n - i : SORT_RUN);
    sort_item *src = v, *dst = tmp;
    for (size_t w = SORT_RUN; w < n; w *= 2) {
        for (size_t i = 0; i < n; i += 2 * w) {
            size_t left = n - i;
            merge_runs(x, src + i, left < w ? left : w, left < 2 * w ? left : 2 * w, dst + i);
        }
        sort_item *t = src;
        src = dst;
        dst = t;
    }
    if (src != v) memcpy(v, src, n * sizeof *v);
}

/* A LIMIT this small a part of the elements (k <= n / SORT_PARTIAL) is
 * selected rather than sorted in full. */
#define SORT_PARTIAL 8

/* Does v[i] come before v[j] in the stable order (ties: input order)? */
static int sorts_before(const sort_ctx *x, const sort_item *v, size_t i, size_t j) {
    int cmp = sort_compare(x, &v[i], &v[j]);
    return cmp < 0 || (cmp == 0 && i < j);
}

/* Restore the max-heap h[0..n) (by sorts_before: the last kept on top) below slot r. */
static void heap_down(const sort_ctx *x, const sort_item *v, size_t *h, size_t n, size_t r) {
    for (;;) {
        size_t c = 2 * r + 1;
        if (c >= n) return;
        if (c + 1 < n && sorts_before(x, v, h[c], h[c + 1])) c++;
        if (!sorts_before(x, v, h[r], h[c])) return;
        size_t t = h[r];
        h[r] = h[c];
        h[c] = t;
        r = c;
    }
}

/* The first k items of v[0..n) in the stable order, in order, in v[0..k)
 * (the rest of v is left unspecified; out: room for k items): one pass
 * keeping the k first seen so far in a max-heap of indices. SORT ...
 * LIMIT 0 10 of 10,000 elements: ~10,000 comparisons instead of ~120,000,
 * and the same items as the full stable sort, ties included. */
static void sort_first(const sort_ctx *x, sort_item *v, sort_item *out, size_t n, size_t k) {
    if (k == 0) return;
    size_t *h = zmalloc(k * sizeof *h);
    for (size_t i = 0; i < k; i++) h[i] = i;
    for (size_t i = k / 2; i-- > 0;) heap_down(x, v, h, k, i);
    for (size_t i = k; i < n; i++) {
        if (sorts_before(x, v, i, h[0])) {
            h[0] = i;
            heap_down(x, v, h, k, 0);
        }
    }
    for (size_t m = k; m > 0; m--) { /* the top is the last of the m left */
        out[m - 1] = v[h[0]];
        h[0] = h[m - 1];
        heap_down(x, v, h, m - 1, 0);
    }
    memcpy(v, out, k * sizeof *v);
    zfree(h);
}

/* ---- patterns ---------------------------------------------------------- */

typedef struct keybuf {
    char *p;
    size_t cap;
} keybuf;

/* The value `pat` names for element el (Redis's lookupKeyByPattern): 1 and
 * the bytes in *out (borrowed: valid until the keyspace next changes), or
 * 0 when it names nothing. Looks keys up for reading (hits, misses,
 * "keymiss", lazy expiry). */
static int pattern_value(client *c, keybuf *kb, span pat, const char *el, size_t ellen, span *out) {
    size_t clen = cstr_len(pat);
    if (clen == 1 && pat.p[0] == '#') {
        out->p = el;
        out->len = ellen;
        return 1;
    }
    const char *star = memchr(pat.p, '*', clen);
    if (!star) return 0;
    /* "->" after the '*' with at least one byte after it (as C strings);
     * the field then runs to the end of the pattern */
    const char *field = NULL;
    size_t fieldlen = 0;
    const char *end = pat.p + clen;
    for (const char *f = star + 1; f + 1 < end; f++) {
        if (f[0] == '-' && f[1] == '>') {
            if (f + 2 < end) {
                field = f + 2;
                fieldlen = pat.len - (size_t)(field - pat.p);
            }
            break;
        }
    }
    size_t prefix = (size_t)(star - pat.p);
    size_t postfix = pat.len - prefix - 1 - (field ? fieldlen + 2 : 0);
    size_t klen = prefix + ellen + postfix;
    if (klen > kb->cap) {
        kb->cap = klen < 64 ? 64 : klen;
        zfree(kb->p);
        kb->p = zmalloc(kb->cap);
    }
    memcpy(kb->p, pat.p, prefix);
    if (ellen) memcpy(kb->p + prefix, el, ellen);
    memcpy(kb->p + prefix + ellen, star + 1, postfix);
    dnode *n = db_lookup_read(c->db, kb->p, klen);
    if (!n) return 0;
    if (field) {
        if (n->type != OBJ_HASH) return 0;
        hstr v;
        if (!hash_get(dn_ptr(n), field, fieldlen, &v)) return 0;
        out->p = v.p;
        out->len = v.len;
        return 1;
    }
    if (n->type != OBJ_STRING) return 0;
    out->p = dn_val(n);
    out->len = dn_vlen(n);
    return 1;
}

/* A NUL-terminated copy of p[0..n) in kb (reused from call to call). */
static const char *keybuf_cstr(keybuf *kb, const char *p, size_t n) {
    if (n + 1 > kb->cap) {
        kb->cap = n + 1 < 64 ? 64 : n + 1;
        zfree(kb->p);
        kb->p = zmalloc(kb->cap);
    }
    if (n) memcpy(kb->p, p, n);
    kb->p[n] = '\0';
    return kb->p;
}

/* A weight as Redis 7.0 parses it: strtod over the C string, which must be
 * consumed up to its end; ERANGE and NaN refused. A canonical integer
 * (str_to_ll's strict form) is converted directly: strtod's correctly
 * rounded value of its digits is the same double, at a twentieth of the
 * cost. cstr: w as a C string, or NULL to have one made in scratch. */
static int parse_weight(span w, const char *cstr, keybuf *scratch, double *out) {
    long long ll;
    if (str_to_ll(w.p, w.len, &ll)) {
        *out = (double)ll;
        return 1;
    }
    if (!cstr) cstr = keybuf_cstr(scratch, w.p, w.len);
    char *eptr;
    errno = 0;
    double d = strtod(cstr, &eptr);
    if (eptr[0] != '\0' || errno == ERANGE || isnan(d)) return 0;
    *out = d;
    return 1;
}

/* ---- SORT -------------------------------------------------------------- */

static void sort_generic(client *c, int readonly) {
    int desc = 0, alpha = 0, dontsort = 0, syntax = 0;
    long long limit_start = 0, limit_count = -1;
    span by = {NULL, 0}, store = {NULL, 0};
    int has_by = 0, has_store = 0;
    span *gets = zmalloc(sizeof(span) * (size_t)c->argc);
    int ngets = 0;

    for (int j = 2; j < c->argc; j++) {
        int left = c->argc - j - 1;
        span a = c->argv[j];
        if (opt_is(a, "asc")) {
            desc = 0;
        } else if (opt_is(a, "desc")) {
            desc = 1;
        } else if (opt_is(a, "alpha")) {
            alpha = 1;
        } else if (opt_is(a, "limit") && left >= 2) {
            if (!str_to_ll(c->argv[j + 1].p, c->argv[j + 1].len, &limit_start) ||
                !str_to_ll(c->argv[j + 2].p, c->argv[j + 2].len, &limit_count)) {
                reply_err_notint(c);
                syntax = 1;
                break;
            }
            j += 2;
        } else if (!readonly && opt_is(a, "store") && left >= 1) {
            store = c->argv[++j];
            has_store = 1;
        } else if (opt_is(a, "by") && left >= 1) {
            by = c->argv[++j];
            has_by = 1;
            /* a constant BY pattern: nothing to sort (and it stays so) */
            if (!memchr(by.p, '*', cstr_len(by))) dontsort = 1;
            else if (!acl_client_reads_all_keys(c)) {
                reply_error(c, "ERR BY option of SORT denied due to insufficient ACL permissions.");
                syntax = 1;
                break;
            }
        } else if (opt_is(a, "get") && left >= 1) {
            if (!acl_client_reads_all_keys(c)) {
                reply_error(c, "ERR GET option of SORT denied due to insufficient ACL permissions.");
                syntax = 1;
                break;
            }
            gets[ngets++] = c->argv[++j];
        } else {
            reply_err_syntax(c);
            syntax = 1;
            break;
        }
    }
    if (syntax) {
        zfree(gets);
        return;
    }

    span key = c->argv[1];
    dnode *n = db_lookup_read(c->db, key.p, key.len);
    int type = n ? n->type : OBJ_LIST;
    if (n && type != OBJ_LIST && type != OBJ_SET && type != OBJ_ZSET) {
        zfree(gets);
        reply_err_wrongtype(c);
        return;
    }

    /* a set in hash order is not reproducible: sort it when the result is
     * stored or a script reads it */
    if (dontsort && type == OBJ_SET && (has_store || (c->flags & CF_SCRIPT))) {
        dontsort = 0;
        alpha = 1;
        has_by = 0;
    }

    long long vlen = 0;
    if (n) {
        if (type == OBJ_LIST) {
            vlen = (long long)tl_len(dn_ptr(n));
        } else if (type == OBJ_SET) {
            vlen = (long long)fset_size(dn_ptr(n));
        } else {
            zset *zs = dn_ptr(n);
            if (zs->lp) {
                zset_convert_to_skiplist(zs);
                n->enc = (uint8_t)zset_enc(zs);
            }
            vlen = (long long)zset_len(zs);
        }
    }

    /* LIMIT, clamped to the collection */
    long long start = limit_start < 0 ? 0 : limit_start;
    if (start > vlen) start = vlen;
    long long count = limit_count < -1 ? -1 : limit_count;
    if (count > vlen) count = vlen;
    long long end = count < 0 ? vlen - 1 : start + count - 1;
    if (start >= vlen) {
        start = vlen - 1;
        end = vlen - 2;
    }
    if (end >= vlen) end = vlen - 1;

    long long total = vlen;
    if ((type == OBJ_ZSET || type == OBJ_LIST) && dontsort && (start != 0 || end != vlen - 1)) vlen = end - start + 1;

    sort_item *v = zcalloc(sizeof(sort_item) * (size_t)(vlen > 0 ? vlen : 1));
    sort_arena arena = {NULL, 0};
    long long cnt = 0;
    if (type == OBJ_LIST && dontsort) {
        if (n && end >= start) {
            tl_iter it;
            tl_elem e;
            size_t from = desc ? (size_t)(total - start - 1) : (size_t)start;
            tl_iter_init(&it, dn_ptr(n), from, desc ? TL_HEAD : TL_TAIL);
            while (cnt < vlen && tl_iter_next(&it, &e)) {
                v[cnt].el = arena_dup(&arena, e.p, e.len);
                v[cnt].len = e.len;
                cnt++;
            }
            end -= start;
            start = 0;
        }
    } else if (type == OBJ_LIST) {
        if (n && vlen > 0) {
            tl_iter it;
            tl_elem e;
            tl_iter_init(&it, dn_ptr(n), 0, TL_TAIL);
            while (cnt < vlen && tl_iter_next(&it, &e)) {
                v[cnt].el = arena_dup(&arena, e.p, e.len);
                v[cnt].len = e.len;
                cnt++;
            }
        }
    } else if (type == OBJ_SET) {
        fset_iter it;
        fset_member m;
        fset_iter_init(&it, dn_ptr(n));
        while (cnt < vlen && fset_iter_next(&it, &m)) {
            v[cnt].el = arena_dup(&arena, m.p, m.len);
            v[cnt].len = m.len;
            cnt++;
        }
        fset_iter_end(&it);
    } else {
        zset *zs = dn_ptr(n);
        int rev = dontsort && desc;
        if (vlen > 0) {
            zs_iter it;
            zs_iter_rank(&it, zs, dontsort ? (unsigned long)start : 0, rev);
            for (; cnt < vlen && zs_iter_valid(&it); zs_iter_next(&it)) {
                size_t ml;
                const char *m = zs_iter_member(&it, &ml);
                v[cnt].el = arena_dup(&arena, m, ml);
                v[cnt].len = ml;
                cnt++;
            }
        }
        if (dontsort) {
            end -= start;
            start = 0;
        }
    }

    keybuf kb = {NULL, 0}, scratch = {NULL, 0};
    int conversion_error = 0;
    if (!dontsort) {
        for (long long j = 0; j < cnt; j++) {
            span w;
            if (has_by) {
                if (!pattern_value(c, &kb, by, v[j].el, v[j].len, &w)) continue;
            } else {
                w.p = v[j].el;
                w.len = v[j].len;
            }
            if (alpha) {
                if (has_by) {
                    v[j].w.cmp = arena_dup(&arena, w.p, w.len);
                    v[j].cmplen = w.len;
                }
            } else if (!parse_weight(w, has_by ? NULL : v[j].el, &scratch, &v[j].w.score)) {
                conversion_error = 1;
            }
        }
        sort_ctx x = {desc, alpha, has_by, has_store};
        size_t k = end >= start ? (size_t)end + 1 : 0; /* the items the reply reads */
        sort_item *tmp = zmalloc(sizeof(sort_item) * (size_t)(cnt > 0 ? cnt : 1));
        if (k <= (size_t)cnt / SORT_PARTIAL) sort_first(&x, v, tmp, (size_t)cnt, k);
        else merge_sort(&x, v, tmp, (size_t)cnt);
        zfree(tmp);
    }

    long long range = end - start + 1;
    long long outputlen = ngets ? (long long)ngets * range : range;
    if (conversion_error) {
        reply_error(c, "ERR One or more scores can't be converted into double");
    } else if (!has_store) {
        reply_array(c, (long)outputlen);
        for (long long j = start; j <= end; j++) {
            if (!ngets) reply_bulk(c, v[j].el, v[j].len);
            for (int g = 0; g < ngets; g++) {
                span val;
                if (pattern_value(c, &kb, gets[g], v[j].el, v[j].len, &val)) reply_bulk(c, val.p, val.len);
                else reply_null(c);
            }
        }
    } else {
        tlist *l = tl_new();
        for (long long j = start; j <= end; j++) {
            if (!ngets) tl_push(l, TL_TAIL, v[j].el, v[j].len);
            for (int g = 0; g < ngets; g++) {
                span val;
                if (pattern_value(c, &kb, gets[g], v[j].el, v[j].len, &val)) tl_push(l, TL_TAIL, val.p, val.len);
                else tl_push(l, TL_TAIL, "", 0);
            }
        }
        db *d = c->db;
        if (outputlen > 0) {
            db_set_ptr(d, store.p, store.len, OBJ_LIST, ENC_QUICKLIST, l);
            signal_key_ready(d, store.p, store.len);
            touch_watched_key(d, store.p, store.len);
            notify_key(NOTIFY_LIST, "sortstore", d->id, store);
            srv.dirty += outputlen;
        } else {
            tl_free(l);
            if (db_delete_stored(d, store.p, store.len)) {
                touch_watched_key(d, store.p, store.len);
                notify_key(NOTIFY_GENERIC, "del", d->id, store);
                srv.dirty++;
            }
        }
        reply_int(c, outputlen);
    }

    arena_free(&arena);
    zfree(v);
    zfree(kb.p);
    zfree(scratch.p);
    zfree(gets);
}

static void cmd_sort(client *c) { sort_generic(c, 0); }
static void cmd_sort_ro(client *c) { sort_generic(c, 1); }

/* ---- the table --------------------------------------------------------- */

#define SORT_COMPLEXITY                                                                                            \
    "O(N+M*log(M)) where N is the number of elements in the list or set to sort, and M the number of returned "   \
    "elements. When the elements are not sorted, complexity is O(N)."

static command sort_commands[] = {
    CMD("sort", cmd_sort, -2, .flags = CMD_WRITE | CMD_DENYOOM | CMD_MOVABLE_KEYS,
        .acl = "write set sortedset list slow dangerous", CMD_KEYS(1, 1, 1),
        .summary = "Sort the elements in a list, set or sorted set", .since = "1.0.0", .complexity = SORT_COMPLEXITY),
    CMD("sort_ro", cmd_sort_ro, -2, .flags = CMD_READONLY | CMD_MOVABLE_KEYS,
        .acl = "read set sortedset list slow dangerous", CMD_KEYS(1, 1, 1),
        .summary = "Sort the elements in a list, set or sorted set. Read-only variant of SORT.", .since = "7.0.0",
        .complexity = SORT_COMPLEXITY),
    {0},
};

const command_group sort_group = {"generic", sort_commands};
