/* cmd_set.c - the set command group: SADD, SREM, SMEMBERS, SISMEMBER,
 * SMISMEMBER, SCARD, SPOP, SRANDMEMBER, SMOVE and SSCAN here, the set
 * algebra (SINTER, SUNION, SDIFF, their STORE forms, SINTERCARD) in
 * cmd_set_ops.c, and the `set_commands` table.
 *
 * Values are fset (t_set.h): intset or hash table, converted as Redis 7.0
 * does. Replies and error texts follow Redis 7.0 byte for byte; where
 * Redis's output is random (SPOP, SRANDMEMBER) the sizes, types and
 * distinctness rules are the same, and where it follows hash order the
 * members are the same. A set that becomes empty is deleted.
 */
#include <string.h>
#include "client.h"
#include "cmd_set.h"
#include "command.h"
#include "db.h"
#include "frand.h"
#include "multi.h"
#include "notify.h"
#include "propagate.h"
#include "reply.h"
#include "server.h"
#include "t_set.h"
#include "util.h"
#include "zmalloc.h"

/* ---- shared helpers (cmd_set.h) ---------------------------------------- */

int set_lookup(client *c, span key, int write, dnode **n) {
    *n = write ? db_lookup_write(c->db, key.p, key.len) : db_lookup_read(c->db, key.p, key.len);
    if (*n && (*n)->type != OBJ_SET) {
        reply_err_wrongtype(c);
        return -1;
    }
    return 0;
}

void set_put(dnode *n, fset *s) {
    memcpy(dn_val(n), &s, sizeof s);
    n->enc = (uint8_t)fset_encoding(s);
}

void set_written(db *d, span key, long long dirty) {
    touch_watched_key(d, key.p, key.len);
    srv.dirty += dirty;
}

void reply_member(client *c, const fset_member *m) {
    if (m->is_int) reply_bulk_ll(c, m->v);
    else reply_bulk(c, m->p, m->len);
}

void elemvec_push(elemvec *e, const fset_member *m) {
    if (e->n == e->cap) {
        e->cap = e->cap ? e->cap * 2 : 16;
        e->a = zrealloc(e->a, e->cap * sizeof *e->a);
    }
    set_elem *x = &e->a[e->n++];
    x->p = m->is_int ? NULL : m->p;
    x->len = m->len;
    x->v = m->v;
}

void elemvec_free(elemvec *e) {
    zfree(e->a);
    e->a = NULL;
    e->n = e->cap = 0;
}

void reply_elem(client *c, const set_elem *x) {
    if (x->p) reply_bulk(c, x->p, x->len);
    else reply_bulk_ll(c, x->v);
}

static void notify_set(client *c, const char *event, span key) { notify_key(NOTIFY_SET, event, c->db->id, key); }

/* After removals: raise `event` (unless NULL), then delete the key if the
 * set is empty ("del"), else store it back. */
static void set_after_remove(client *c, span key, dnode *n, fset *s, const char *event) {
    set_put(n, s);
    if (event) notify_set(c, event, key);
    if (fset_size(s) == 0) {
        db_delete(c->db, key.p, key.len);
        notify_key(NOTIFY_GENERIC, "del", c->db->id, key);
    } else {
        fset_removed_done(s);
    }
}

/* Reply every member, as a set (RESP3 ~) or an array. */
static void reply_all(client *c, fset *s, int as_set) {
    fset_iter it;
    fset_member m;
    if (as_set) reply_set(c, (long)fset_size(s));
    else reply_array(c, (long)fset_size(s));
    fset_iter_init(&it, s);
    while (fset_iter_next(&it, &m)) reply_member(c, &m);
    fset_iter_end(&it);
}

/* ---- SADD SREM SMEMBERS SISMEMBER SMISMEMBER SCARD ----------------------- */

static void cmd_sadd(client *c) {
    span key = c->argv[1];
    dnode *n;
    if (set_lookup(c, key, 1, &n) < 0) return;
    fset *s = n ? set_of(n) : fset_new_for(c->argv[2].p, c->argv[2].len);
    long long added = 0;
    for (int j = 2; j < c->argc; j++) added += fset_add(&s, c->argv[j].p, c->argv[j].len);
    if (n) set_put(n, s);
    else db_add_ptr(c->db, key.p, key.len, OBJ_SET, fset_encoding(s), s, -1);
    if (added) {
        set_written(c->db, key, added);
        notify_set(c, "sadd", key);
    }
    reply_int(c, added);
}

static void cmd_srem(client *c) {
    span key = c->argv[1];
    dnode *n;
    if (set_lookup(c, key, 1, &n) < 0) return;
    long long removed = 0;
    if (n) {
        fset *s = set_of(n);
        for (int j = 2; j < c->argc && fset_size(s) > 0; j++) removed += fset_remove(&s, c->argv[j].p, c->argv[j].len);
        set_after_remove(c, key, n, s, removed ? "srem" : NULL);
        if (removed) set_written(c->db, key, removed);
    }
    reply_int(c, removed);
}

static void cmd_smembers(client *c) {
    dnode *n;
    if (set_lookup(c, c->argv[1], 0, &n) < 0) return;
    if (!n) reply_set(c, 0);
    else reply_all(c, set_of(n), 1);
}

static void cmd_sismember(client *c) {
    dnode *n;
    if (set_lookup(c, c->argv[1], 0, &n) < 0) return;
    reply_int(c, n && fset_contains(set_of(n), c->argv[2].p, c->argv[2].len));
}

static void cmd_smismember(client *c) {
    dnode *n;
    if (set_lookup(c, c->argv[1], 0, &n) < 0) return;
    reply_array(c, c->argc - 2);
    for (int j = 2; j < c->argc; j++) reply_int(c, n && fset_contains(set_of(n), c->argv[j].p, c->argv[j].len));
}

static void cmd_scard(client *c) {
    dnode *n;
    if (set_lookup(c, c->argv[1], 0, &n) < 0) return;
    reply_int(c, n ? (long long)fset_size(set_of(n)) : 0);
}

/* ---- SMOVE --------------------------------------------------------------- */

static void cmd_smove(client *c) {
    span src = c->argv[1], dst = c->argv[2], m = c->argv[3];
    dnode *sn, *dn;
    sn = db_lookup_write(c->db, src.p, src.len);
    dn = db_lookup_write(c->db, dst.p, dst.len);
    if (!sn) {
        reply_int(c, 0);
        return;
    }
    if (sn->type != OBJ_SET || (dn && dn->type != OBJ_SET)) {
        reply_err_wrongtype(c);
        return;
    }
    if (sn == dn) {
        reply_int(c, fset_contains(set_of(sn), m.p, m.len));
        return;
    }
    fset *s = set_of(sn);
    if (!fset_remove(&s, m.p, m.len)) {
        reply_int(c, 0);
        return;
    }
    set_after_remove(c, src, sn, s, "srem");
    set_written(c->db, src, 1);
    fset *d = dn ? set_of(dn) : fset_new_for(m.p, m.len);
    int added = fset_add(&d, m.p, m.len);
    if (added) set_written(c->db, dst, 1);
    if (dn) set_put(dn, d);
    else db_add_ptr(c->db, dst.p, dst.len, OBJ_SET, fset_encoding(d), d, -1);
    if (added) notify_set(c, "sadd", dst);
    reply_int(c, 1);
}

/* ---- SPOP SRANDMEMBER ---------------------------------------------------- */

/* Selection sampling (Knuth's algorithm S): walking `left` candidates in
 * order, take each with probability need/left; exactly `need` are taken,
 * every subset of that size equally likely. */
typedef struct sampler {
    uint64_t need, left;
} sampler;

static int sampler_take(sampler *sm) {
    int take = frand_below(sm->left) < sm->need;
    sm->left--;
    if (take) sm->need--;
    return take;
}

/* SPOP from an intset: one pass keeps the unpicked elements in place. */
typedef struct intset_pop {
    sampler sm;
    client *c;
} intset_pop;

/* SPOP is propagated as the SREM of each member it popped. */
static void popped(client *c, const char *p, size_t len) {
    span argv[3] = {{"SREM", 4}, c->argv[1], {p, len}};
    prop_rewrite(c, 3, argv);
}

static void popped_member(client *c, const fset_member *m) {
    char buf[24];
    if (m->is_int) popped(c, buf, ll_to_str(buf, m->v));
    else popped(c, m->p, m->len);
}

static int intset_pop_keep(int64_t v, void *ud) {
    intset_pop *p = ud;
    if (!sampler_take(&p->sm)) return 1;
    reply_bulk_ll(p->c, v);
    char buf[24];
    popped(p->c, buf, ll_to_str(buf, v));
    return 0;
}

/* Pop `count` (0 < count < size) random members, replying them. */
static fset *pop_some(client *c, fset *s, uint64_t count) {
    uint64_t size = fset_size(s);
    reply_set(c, (long)count);
    if (fset_encoding(s) == ENC_INTSET) {
        intset_pop p = {{count, size}, c};
        return fset_intset_filter(s, intset_pop_keep, &p);
    }
    fset_member m;
    if (count * 3 <= size) { /* few: random picks, each removed at once */
        while (count--) {
            fset_random(s, &m);
            reply_member(c, &m);
            popped_member(c, &m);
            fset_remove(&s, m.p, m.len);
        }
        return s;
    }
    /* many: pick nodes in one pass, then unlink them */
    dnode **picked = zmalloc(count * sizeof *picked);
    sampler sm = {count, size};
    size_t k = 0;
    fset_iter it;
    fset_iter_init(&it, s);
    while (sm.need && fset_iter_next(&it, &m))
        if (sampler_take(&sm)) picked[k++] = m.node;
    fset_iter_end(&it);
    for (size_t i = 0; i < k; i++) {
        reply_bulk(c, dn_key(picked[i]), dn_klen(picked[i]));
        popped(c, dn_key(picked[i]), dn_klen(picked[i]));
        fset_remove(&s, dn_key(picked[i]), dn_klen(picked[i]));
    }
    zfree(picked);
    return s;
}

static void spop_with_count(client *c) {
    span key = c->argv[1];
    long long count;
    if (!str_to_ll(c->argv[2].p, c->argv[2].len, &count) || count < 0) {
        reply_error(c, "ERR value is out of range, must be positive");
        return;
    }
    dnode *n;
    if (set_lookup(c, key, 1, &n) < 0) return;
    if (!n || count == 0) {
        reply_set(c, 0);
        return;
    }
    fset *s = set_of(n);
    uint64_t size = fset_size(s);
    notify_set(c, "spop", key); /* Redis raises it before replying */
    if ((uint64_t)count >= size) { /* the whole set */
        db_lookup_read(c->db, key.p, key.len); /* Redis replies through SUNION here: one more keyspace hit */
        reply_all(c, s, 1);
        db_delete(c->db, key.p, key.len);
        notify_key(NOTIFY_GENERIC, "del", c->db->id, key);
        span del[2] = {{"DEL", 3}, key};
        prop_rewrite(c, 2, del);
    } else {
        s = pop_some(c, s, (uint64_t)count);
        /* When few members stay (5 * left <= count), Redis moves them to a
         * new set instead: they may come back as an intset. */
        if ((size - (uint64_t)count) * 5 <= (uint64_t)count) s = fset_rebuild(s);
        set_after_remove(c, key, n, s, NULL);
    }
    set_written(c->db, key, (uint64_t)count < size ? count : (long long)size);
}

static void cmd_spop(client *c) {
    if (c->argc == 3) {
        spop_with_count(c);
        return;
    }
    if (c->argc > 3) {
        reply_err_syntax(c);
        return;
    }
    span key = c->argv[1];
    dnode *n;
    if (set_lookup(c, key, 1, &n) < 0) return;
    if (!n) {
        reply_null(c);
        return;
    }
    fset *s = set_of(n);
    fset_member m;
    fset_random(s, &m);
    notify_set(c, "spop", key); /* before the reply; "del" comes after it */
    reply_member(c, &m);
    popped_member(c, &m);
    fset_remove(&s, m.p, m.len);
    set_after_remove(c, key, n, s, NULL);
    set_written(c->db, key, 1);
}

/* `count` distinct random members, 0 < count < size, as an array. */
static void srandmember_distinct(client *c, fset *s, uint64_t count) {
    uint64_t size = fset_size(s);
    fset_member m;
    reply_array(c, (long)count);
    if (count * 3 > size) { /* a large share: one pass of selection sampling */
        sampler sm = {count, size};
        fset_iter it;
        fset_iter_init(&it, s);
        while (sm.need && fset_iter_next(&it, &m))
            if (sampler_take(&sm)) reply_member(c, &m);
        fset_iter_end(&it);
        return;
    }
    fset *seen = fset_new_ht(); /* a few: random picks, duplicates skipped */
    while (fset_size(seen) < count) {
        fset_random(s, &m);
        if (fset_add(&seen, m.p, m.len)) reply_member(c, &m);
    }
    fset_free(seen);
}

static void srandmember_with_count(client *c) {
    long long count;
    if (!str_to_ll(c->argv[2].p, c->argv[2].len, &count)) {
        reply_err_notint(c);
        return;
    }
    if (count == INT64_MIN) {
        reply_error(c, "ERR value is out of range, value must between -9223372036854775807 and 9223372036854775807");
        return;
    }
    dnode *n;
    if (set_lookup(c, c->argv[1], 0, &n) < 0) return;
    if (!n || count == 0) {
        reply_array(c, 0);
        return;
    }
    fset *s = set_of(n);
    fset_member m;
    if (count < 0) { /* repetitions allowed */
        reply_array(c, (long)-count);
        for (long long i = 0; i < -count && !(c->flags & CF_CLOSE_ASAP); i++) {
            fset_random(s, &m);
            reply_member(c, &m);
        }
    } else if ((uint64_t)count >= fset_size(s)) {
        reply_all(c, s, 0);
    } else {
        srandmember_distinct(c, s, (uint64_t)count);
    }
}

static void cmd_srandmember(client *c) {
    if (c->argc == 3) {
        srandmember_with_count(c);
        return;
    }
    if (c->argc > 3) {
        reply_err_syntax(c);
        return;
    }
    dnode *n;
    if (set_lookup(c, c->argv[1], 0, &n) < 0) return;
    if (!n) {
        reply_null(c);
        return;
    }
    fset_member m;
    fset_random(set_of(n), &m);
    reply_member(c, &m);
}

/* ---- SSCAN --------------------------------------------------------------- */

typedef struct sscan_opts {
    long long count;
    span pat;
    int use_pat;
} sscan_opts;

static int sscan_parse(client *c, sscan_opts *o) {
    o->count = 10;
    o->use_pat = 0;
    for (int i = 3; i < c->argc; i += 2) {
        int more = i + 1 < c->argc;
        if (span_eq_nocase(c->argv[i], "count") && more) {
            if (!str_to_ll(c->argv[i + 1].p, c->argv[i + 1].len, &o->count)) {
                reply_err_notint(c);
                return -1;
            }
            if (o->count < 1) {
                reply_err_syntax(c);
                return -1;
            }
        } else if (span_eq_nocase(c->argv[i], "match") && more) {
            o->pat = c->argv[i + 1];
            o->use_pat = !(o->pat.len == 1 && o->pat.p[0] == '*');
        } else {
            reply_err_syntax(c);
            return -1;
        }
    }
    return 0;
}

static void sscan_collect(void *ud, dnode *n) {
    fset_member m;
    fset_member_from_node(&m, n);
    elemvec_push(ud, &m);
}

static void cmd_sscan(client *c) {
    unsigned long cursor;
    if (!str_to_scan_cursor(c->argv[2].p, c->argv[2].len, &cursor)) {
        reply_error(c, "ERR invalid cursor");
        return;
    }
    dnode *n;
    if (set_lookup(c, c->argv[1], 0, &n) < 0) return;
    if (!n) {
        reply_raw(c, "*2\r\n$1\r\n0\r\n*0\r\n", 15);
        return;
    }
    sscan_opts o;
    if (sscan_parse(c, &o) < 0) return;
    fset *s = set_of(n);
    elemvec found = {0};
    fset_member m;
    if (fset_encoding(s) == ENC_INTSET) { /* small: everything at once */
        fset_iter it;
        fset_iter_init(&it, s);
        while (fset_iter_next(&it, &m)) elemvec_push(&found, &m);
        fset_iter_end(&it);
        cursor = 0;
    } else { /* COUNT members or 10*COUNT buckets, whichever comes first */
        long long maxiter = o.count > INT64_MAX / 10 ? INT64_MAX : o.count * 10;
        do {
            cursor = dict_scan(fset_dict(s), cursor, sscan_collect, &found);
        } while (cursor && maxiter-- && found.n < (unsigned long long)o.count);
    }
    size_t kept = 0;
    for (size_t i = 0; i < found.n; i++) {
        set_elem *x = &found.a[i];
        char buf[24];
        const char *p = x->p ? x->p : buf;
        size_t len = x->p ? x->len : ll_to_str(buf, x->v);
        if (!o.use_pat || glob_match(o.pat.p, o.pat.len, p, len, 0)) found.a[kept++] = *x;
    }
    char cbuf[24];
    reply_array(c, 2);
    reply_bulk(c, cbuf, ull_to_str(cbuf, cursor));
    reply_array(c, (long)kept);
    for (size_t i = 0; i < kept; i++) reply_elem(c, &found.a[i]);
    elemvec_free(&found);
}

/* ---- table --------------------------------------------------------------- */

#define W_OOM_FAST (CMD_WRITE | CMD_DENYOOM | CMD_FAST)
#define W_FAST (CMD_WRITE | CMD_FAST)
#define RO_FAST (CMD_READONLY | CMD_FAST)
#define W_OOM (CMD_WRITE | CMD_DENYOOM)
#define INTER_O "O(N*M) worst case where N is the cardinality of the smallest set and M is the number of sets."
#define UNION_O "O(N) where N is the total number of elements in all given sets."

static command set_commands[] = {
    CMD("sadd", cmd_sadd, -3, .flags = W_OOM_FAST, .acl = "write set fast", CMD_KEYS(1, 1, 1),
        .summary = "Add one or more members to a set", .since = "1.0.0",
        .complexity = "O(1) for each element added, so O(N) to add N elements when the command is called with "
            "multiple arguments."),
    CMD("srem", cmd_srem, -3, .flags = W_FAST, .acl = "write set fast", CMD_KEYS(1, 1, 1),
        .summary = "Remove one or more members from a set", .since = "1.0.0",
        .complexity = "O(N) where N is the number of members to be removed."),
    CMD("smembers", cmd_smembers, 2, .flags = CMD_READONLY, .acl = "read set slow", CMD_KEYS(1, 1, 1),
        .summary = "Get all the members in a set", .since = "1.0.0",
        .complexity = "O(N) where N is the set cardinality."),
    CMD("sismember", cmd_sismember, 3, .flags = RO_FAST, .acl = "read set fast", CMD_KEYS(1, 1, 1),
        .summary = "Determine if a given value is a member of a set", .since = "1.0.0", .complexity = "O(1)"),
    CMD("smismember", cmd_smismember, -3, .flags = RO_FAST, .acl = "read set fast", CMD_KEYS(1, 1, 1),
        .summary = "Returns the membership associated with the given elements for a set", .since = "6.2.0",
        .complexity = "O(N) where N is the number of elements being checked for membership"),
    CMD("scard", cmd_scard, 2, .flags = RO_FAST, .acl = "read set fast", CMD_KEYS(1, 1, 1),
        .summary = "Get the number of members in a set", .since = "1.0.0", .complexity = "O(1)"),
    CMD("spop", cmd_spop, -2, .flags = W_FAST, .acl = "write set fast", CMD_KEYS(1, 1, 1),
        .summary = "Remove and return one or multiple random members from a set", .since = "1.0.0",
        .complexity = "Without the count argument O(1), otherwise O(N) where N is the value of the passed count."),
    CMD("srandmember", cmd_srandmember, -2, .flags = CMD_READONLY, .acl = "read set slow", CMD_KEYS(1, 1, 1),
        .summary = "Get one or multiple random members from a set", .since = "1.0.0",
        .complexity = "Without the count argument O(1), otherwise O(N) where N is the absolute value of the "
            "passed count."),
    CMD("smove", cmd_smove, 4, .flags = W_FAST, .acl = "write set fast", CMD_KEYS(1, 2, 1),
        .summary = "Move a member from one set to another", .since = "1.0.0", .complexity = "O(1)"),
    CMD("sinter", cmd_sinter, -2, .flags = CMD_READONLY, .acl = "read set slow", CMD_KEYS(1, -1, 1),
        .summary = "Intersect multiple sets", .since = "1.0.0", .complexity = INTER_O),
    CMD("sintercard", cmd_sintercard, -3, .flags = CMD_READONLY | CMD_MOVABLE_KEYS, .acl = "read set slow",
        .summary = "Intersect multiple sets and return the cardinality of the result", .since = "7.0.0",
        .complexity = INTER_O),
    CMD("sinterstore", cmd_sinterstore, -3, .flags = W_OOM, .acl = "write set slow", CMD_KEYS(1, -1, 1),
        .summary = "Intersect multiple sets and store the resulting set in a key", .since = "1.0.0",
        .complexity = INTER_O),
    CMD("sunion", cmd_sunion, -2, .flags = CMD_READONLY, .acl = "read set slow", CMD_KEYS(1, -1, 1),
        .summary = "Add multiple sets", .since = "1.0.0", .complexity = UNION_O),
    CMD("sunionstore", cmd_sunionstore, -3, .flags = W_OOM, .acl = "write set slow", CMD_KEYS(1, -1, 1),
        .summary = "Add multiple sets and store the resulting set in a key", .since = "1.0.0", .complexity = UNION_O),
    CMD("sdiff", cmd_sdiff, -2, .flags = CMD_READONLY, .acl = "read set slow", CMD_KEYS(1, -1, 1),
        .summary = "Subtract multiple sets", .since = "1.0.0", .complexity = UNION_O),
    CMD("sdiffstore", cmd_sdiffstore, -3, .flags = W_OOM, .acl = "write set slow", CMD_KEYS(1, -1, 1),
        .summary = "Subtract multiple sets and store the resulting set in a key", .since = "1.0.0",
        .complexity = UNION_O),
    CMD("sscan", cmd_sscan, -3, .flags = CMD_READONLY, .acl = "read set slow", CMD_KEYS(1, 1, 1),
        .summary = "Incrementally iterate Set elements", .since = "2.8.0",
        .complexity = "O(1) for every call. O(N) for a complete iteration, including enough command calls for "
            "the cursor to return back to 0. N is the number of elements inside the collection.."),
    {0},
};
const command_group set_group = {"set", set_commands};
