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
 *    which Redis uses, is a stable merge sort: so is ours);
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

/* An owned, NUL-terminated copy of n bytes (strtod and strcoll read C strings). */
static char *dup_bytes(const char *p, size_t n) {
    char *s = zmalloc(n + 1);
    if (n) memcpy(s, p, n);
    s[n] = '\0';
    return s;
}

/* One element to sort: its bytes, and its weight (a score, or for ALPHA
 * with BY the bytes of the weight value, NULL when the key is missing). */
typedef struct sort_item {
    char *el;
    size_t len;
    double score;
    char *cmp;
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
        if (a->score > b->score) cmp = 1;
        else if (a->score < b->score) cmp = -1;
        else cmp = cmp_binary(a->el, a->len, b->el, b->len);
    } else if (x->bypattern) {
        if (!a->cmp || !b->cmp) cmp = a->cmp == b->cmp ? 0 : !a->cmp ? -1 : 1;
        else if (x->store) cmp = cmp_binary(a->cmp, a->cmplen, b->cmp, b->cmplen);
        else cmp = strcoll(a->cmp, b->cmp);
    } else {
        if (x->store) cmp = cmp_binary(a->el, a->len, b->el, b->len);
        else cmp = strcoll(a->el, b->el);
    }
    if (x->desc) cmp = cmp > 0 ? -1 : cmp < 0 ? 1 : 0;
    return cmp;
}

/* Stable top-down merge sort of v[0..n) (tmp: room for n items). */
static void merge_sort(const sort_ctx *x, sort_item *v, sort_item *tmp, size_t n) {
    if (n < 2) return;
    size_t n1 = n / 2, n2 = n - n1;
    merge_sort(x, v, tmp, n1);
    merge_sort(x, v + n1, tmp, n2);
    size_t i = 0, j = n1, k = 0;
    while (i < n1 && j < n) tmp[k++] = sort_compare(x, &v[i], &v[j]) <= 0 ? v[i++] : v[j++];
    while (i < n1) tmp[k++] = v[i++];
    /* the rest of the right half is in place already */
    memcpy(v, tmp, k * sizeof *v);
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

/* A weight as Redis 7.0 parses it: strtod over the C string, which must be
 * consumed up to its end; ERANGE and NaN refused. */
static int parse_weight(const char *s, double *out) {
    char *eptr;
    errno = 0;
    double d = strtod(s, &eptr);
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
    long long cnt = 0;
    if (type == OBJ_LIST && dontsort) {
        if (n && end >= start) {
            tl_iter it;
            tl_elem e;
            size_t from = desc ? (size_t)(total - start - 1) : (size_t)start;
            tl_iter_init(&it, dn_ptr(n), from, desc ? TL_HEAD : TL_TAIL);
            while (cnt < vlen && tl_iter_next(&it, &e)) {
                v[cnt].el = dup_bytes(e.p, e.len);
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
                v[cnt].el = dup_bytes(e.p, e.len);
                v[cnt].len = e.len;
                cnt++;
            }
        }
    } else if (type == OBJ_SET) {
        fset_iter it;
        fset_member m;
        fset_iter_init(&it, dn_ptr(n));
        while (cnt < vlen && fset_iter_next(&it, &m)) {
            v[cnt].el = dup_bytes(m.p, m.len);
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
                v[cnt].el = dup_bytes(m, ml);
                v[cnt].len = ml;
                cnt++;
            }
        }
        if (dontsort) {
            end -= start;
            start = 0;
        }
    }

    keybuf kb = {NULL, 0};
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
                    v[j].cmp = dup_bytes(w.p, w.len);
                    v[j].cmplen = w.len;
                }
            } else {
                char *tmp = has_by ? dup_bytes(w.p, w.len) : NULL;
                if (!parse_weight(tmp ? tmp : v[j].el, &v[j].score)) conversion_error = 1;
                zfree(tmp);
            }
        }
        sort_ctx x = {desc, alpha, has_by, has_store};
        sort_item *tmp = zmalloc(sizeof(sort_item) * (size_t)(cnt > 0 ? cnt : 1));
        merge_sort(&x, v, tmp, (size_t)cnt);
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

    for (long long j = 0; j < cnt; j++) {
        zfree(v[j].el);
        zfree(v[j].cmp);
    }
    zfree(v);
    zfree(kb.p);
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
