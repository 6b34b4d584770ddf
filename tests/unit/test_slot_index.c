/* test_slot_index.c - Criterion unit tests for the per-slot key index
 * (src/keyspace/db_slots.c and its hooks in db.c, the link bytes in dnode.c).
 *
 * Why: in cluster mode CLUSTER COUNTKEYSINSLOT / GETKEYSINSLOT, slot
 * migration and the deletion of a lost slot's keys read the index instead
 * of the keyspace. The index is threaded through the key nodes, so every
 * path that adds, drops, reallocates or moves a node must keep it in step,
 * or a list points at freed memory. Random programs of every such
 * operation, over many keys in few slots on two databases, are checked
 * after every step against a model of which keys exist, with
 * db_slot_check and db_volatile_check, and by listing the slots' keys. A
 * standalone database must carry no extra byte per key.
 */
#include <criterion/criterion.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "crc16.h"
#include "db.h"
#include "frand.h"
#include "server.h"
#include "zmalloc.h"

#define T0 1700000000000LL /* a fixed "now" in unix ms */
#define NKEYS 240
#define NTAGS 3
#define KEY_MAX 320

static db *d0, *d1;

static void setup(void) {
    memset(&srv.stats, 0, sizeof srv.stats);
    srv.now_ms = T0;
    srv.lruclock = 1234;
    db_init_all(2);
    d0 = db_get(0);
    d1 = db_get(1);
}

TestSuite(slot_index, .init = setup);

/* ---- a pointer-typed value (stands for a list) ------------------------------------- */

static void fake_free(void *p) { free(p); }
static void *fake_dup(const void *p) {
    int *n = malloc(sizeof *n);
    *n = *(const int *)p;
    return n;
}
static size_t fake_mem(const void *p) { return sizeof(int); }
static void *fake_new(int v) {
    int *n = malloc(sizeof *n);
    *n = v;
    return n;
}

/* ---- the keys: most share NTAGS hash tags, some hash whole; a few are long
 * (DN_WIDE nodes) ------------------------------------------------------------------ */

static char keys[NKEYS][KEY_MAX];
static size_t klens[NKEYS];

static void make_keys(void) {
    for (int i = 0; i < NKEYS; i++) {
        int n;
        if (i % 4 == 3) n = snprintf(keys[i], KEY_MAX, "plain%d", i % 12); /* few distinct slots */
        else n = snprintf(keys[i], KEY_MAX, "k%d{tag%d}", i, i % NTAGS);
        if (i % 4 == 3) n += snprintf(keys[i] + n, KEY_MAX - (size_t)n, "#%d", i);
        if (i % 37 == 0) { /* a key too long for the short header */
            memset(keys[i] + n, 'x', 280);
            n += 280;
            keys[i][n] = 0;
        }
        klens[i] = (size_t)n;
    }
}

/* ---- the model: per database position (swapped by SWAPDB), which keys exist
 * and their expiry ----------------------------------------------------------------- */

typedef struct model {
    char present[NKEYS];
    int64_t exp[NKEYS];
} model;

static model m[2];

static int pos_of(const db *d) { return d == d0 ? 0 : 1; }

static void model_set(const db *d, int i, int64_t exp) {
    m[pos_of(d)].present[i] = 1;
    m[pos_of(d)].exp[i] = exp;
}

static void model_del(const db *d, int i) { m[pos_of(d)].present[i] = 0; }

/* The model's keys that the db dropped by expiry (lazy or active) are
 * dropped from the model; every other difference fails. */
static void reconcile(db *d, int step) {
    model *md = &m[pos_of(d)];
    for (int i = 0; i < NKEYS; i++) {
        int actual = db_find(d, keys[i], klens[i]) != NULL;
        if (md->present[i] && !actual && md->exp[i] >= 0 && md->exp[i] < srv.now_ms) md->present[i] = 0;
        cr_assert_eq(actual, md->present[i], "step %d db %d key %d: %s, model says %s", step, d->id, i,
                     actual ? "present" : "absent", md->present[i] ? "present" : "absent");
    }
}

typedef struct listing {
    char seen[NKEYS];
    size_t n, foreign;
} listing;

static void collect(void *arg, const char *key, size_t klen) {
    listing *l = arg;
    l->n++;
    for (int i = 0; i < NKEYS; i++)
        if (klens[i] == klen && memcmp(keys[i], key, klen) == 0) {
            l->seen[i]++;
            return;
        }
    l->foreign++;
}

/* Every slot our keys hash to: the count and the listing are the model's. */
static void check_slots(db *d, int step, int list) {
    model *md = &m[pos_of(d)];
    for (int i = 0; i < NKEYS; i++) {
        unsigned s = key_hash_slot(keys[i], klens[i]);
        size_t want = 0;
        for (int j = 0; j < NKEYS; j++) want += md->present[j] && key_hash_slot(keys[j], klens[j]) == s;
        cr_assert_eq(db_slot_count(d, s), want, "step %d db %d slot %u", step, d->id, s);
        if (!list) continue;
        listing l = {{0}, 0, 0};
        cr_assert_eq(db_slot_keys(d, s, SIZE_MAX, collect, &l), want);
        cr_assert_eq(l.n, want);
        cr_assert_eq(l.foreign, 0);
        for (int j = 0; j < NKEYS; j++)
            cr_assert_eq(l.seen[j], md->present[j] && key_hash_slot(keys[j], klens[j]) == s, "step %d slot %u key %d",
                         step, s, j);
        listing few = {{0}, 0, 0};
        cr_assert_eq(db_slot_keys(d, s, 2, collect, &few), want < 2 ? want : 2);
    }
}

static void check_all(int step) {
    for (int p = 0; p < 2; p++) {
        db *d = p ? d1 : d0;
        cr_assert_eq(db_slot_check(d), 0, "slot index out of step after step %d (db %d)", step, d->id);
        cr_assert_eq(db_volatile_check(d), 0, "volatile index out of step after step %d", step);
        reconcile(d, step);
        if (db_slot_indexed(d)) check_slots(d, step, step % 97 == 0);
    }
}

/* ---- the operations --------------------------------------------------------------- */

static int64_t rand_exp(void) { return frand_below(3) ? -1 : srv.now_ms + (int64_t)frand_below(3000); }

static size_t rand_vlen(void) {
    unsigned r = (unsigned)frand_below(100);
    if (r == 0) return 65535 + frand_below(600); /* a wide value */
    if (r < 10) return 400 + frand_below(300);   /* around the slab's largest class */
    return frand_below(60);
}

static void op_set(db *d, int i) {
    static char val[70000];
    size_t vl = rand_vlen();
    memset(val, 'a' + i % 26, vl);
    int64_t exp = rand_exp();
    db_set_string(d, keys[i], klens[i], val, vl, exp);
    model_set(d, i, exp);
}

static void op_set_block(db *d, int i) {
    size_t vl = 600 + frand_below(2000);
    int64_t exp = rand_exp();
    size_t head = db_string_block_head(klens[i], vl, exp >= 0);
    char *blk = zmalloc(head + vl);
    memset(blk + head, 'b', vl);
    db_set_string_block(d, keys[i], klens[i], blk, vl, exp);
    model_set(d, i, exp);
}

static void op_set_ptr(db *d, int i) {
    if (frand_below(2)) {
        db_set_ptr(d, keys[i], klens[i], OBJ_LIST, 3, fake_new(i));
        model_set(d, i, -1);
    } else if (!db_lookup(d, keys[i], klens[i])) {
        int64_t exp = rand_exp();
        db_add_ptr(d, keys[i], klens[i], OBJ_LIST, 3, fake_new(i), exp);
        model_set(d, i, exp);
    }
}

static void op_expire(db *d, int i, dnode *n) {
    if (!n) return;
    if (frand_below(2)) {
        int64_t exp = srv.now_ms + (int64_t)frand_below(3000);
        db_set_expire(d, n, exp);
        m[pos_of(d)].exp[i] = exp;
    } else {
        db_persist(d, n);
        m[pos_of(d)].exp[i] = -1;
    }
}

static void op_resize(db *d, dnode *n) {
    if (n && n->type == OBJ_STRING) db_resize_value(d, n, rand_vlen());
}

static void op_delete(db *d, int i) {
    switch (frand_below(3)) {
    case 0: db_delete(d, keys[i], klens[i]); break;
    case 1: db_delete_lazy(d, keys[i], klens[i], 0); break;
    default: db_delete_stored(d, keys[i], klens[i]); break;
    }
    model_del(d, i);
}

/* RENAME (same db) or MOVE (to the other): the node travels detached. */
static void op_move(db *from, db *to, int i, dnode *n) {
    int j = from == to ? (int)frand_below(NKEYS) : i;
    if (!n || (j == i && from == to) || db_lookup(to, keys[j], klens[j])) return;
    int64_t exp = m[pos_of(from)].exp[i];
    dnode *u = db_unlink_node(from, keys[i], klens[i]);
    model_del(from, i);
    db_insert_node(to, u, keys[j], klens[j]);
    model_set(to, j, exp);
}

/* COPY, to either db. */
static void op_copy(db *from, db *to, int i, dnode *n) {
    int j = (int)frand_below(NKEYS);
    if (!n || db_lookup(to, keys[j], klens[j])) return;
    db_insert_node(to, db_copy_node(n, keys[j], klens[j]), keys[j], klens[j]);
    model_set(to, j, m[pos_of(from)].exp[i]);
}

/* A batch load (RDB) of absent keys, sometimes with a duplicate. */
static void op_load(db *d) {
    db_load l;
    size_t dup;
    char queued[NKEYS] = {0};
    db_load_begin(&l, d);
    for (int k = 0; k < 30; k++) {
        int i = (int)frand_below(NKEYS);
        int exists = db_find(d, keys[i], klens[i]) != NULL;
        if (exists && frand_below(8)) continue;
        int64_t exp = rand_exp();
        dnode *n = db_node_new(keys[i], klens[i], 5, exp);
        memcpy(dn_val(n), "hello", 5);
        db_load_add(&l, n, (size_t)k, &dup); /* -1: some earlier node of the batch was a duplicate */
        if (exists || queued[i]) continue;    /* a duplicate: dropped now or by db_load_end */
        queued[i] = 1;
        model_set(d, i, exp);
    }
    db_load_end(&l, &dup);
}

static void op_add_node(db *d, int i) {
    if (db_find(d, keys[i], klens[i])) return;
    int64_t exp = rand_exp();
    dnode *n = db_node_new(keys[i], klens[i], 3, exp);
    memcpy(dn_val(n), "abc", 3);
    dnode *s = db_add_node(d, n);
    cr_assert_eq(db_find(d, keys[i], klens[i]), s, "db_add_node returns the node as stored");
    model_set(d, i, exp);
}

static void op_rare(db *d, int i) {
    switch (frand_below(5)) {
    case 0: db_flush(d); memset(&m[pos_of(d)], 0, sizeof m[0]); break;
    case 1: db_flush_async(d); memset(&m[pos_of(d)], 0, sizeof m[0]); break;
    case 2: {
        db_swap(d0, d1);
        model t = m[0];
        m[0] = m[1];
        m[1] = t;
        break;
    }
    case 3: {
        unsigned s = key_hash_slot(keys[i], klens[i]);
        size_t before = db_slot_count(d, s), gone = db_slot_delete_all(d, s);
        cr_assert_eq(gone, db_slot_indexed(d) ? before : 0);
        cr_assert_eq(db_slot_count(d, s), 0);
        if (db_slot_indexed(d))
            for (int j = 0; j < NKEYS; j++)
                if (key_hash_slot(keys[j], klens[j]) == s) model_del(d, j);
        break;
    }
    default: op_load(d); break;
    }
}

static void one_step(void) {
    db *d = frand_below(2) ? d1 : d0, *o = d == d0 ? d1 : d0;
    int i = (int)frand_below(NKEYS);
    dnode *n = db_lookup(d, keys[i], klens[i]); /* lazy expiry on some */
    if (!n) model_del(d, i);
    switch (frand_below(14)) {
    case 0: case 1: op_set(d, i); break;
    case 2: op_set_block(d, i); break;
    case 3: op_set_ptr(d, i); break;
    case 4: op_expire(d, i, n); break;
    case 5: case 6: op_resize(d, n); break;
    case 7: op_delete(d, i); break;
    case 8: op_move(d, d, i, n); break;
    case 9: op_move(d, o, i, n); break;
    case 10: op_copy(d, frand_below(2) ? d : o, i, n); break;
    case 11: srv.now_ms += (int64_t)frand_below(60); db_active_expire(1000); break;
    case 12: op_add_node(d, i); break;
    default: if (frand_below(20) == 0) op_rare(d, i); else op_set(d, i); break;
    }
}

static void run_program(uint64_t seed, int steps) {
    db_register_type(OBJ_LIST, fake_free, fake_dup, fake_mem);
    make_keys();
    memset(m, 0, sizeof m);
    frand_seed(seed);
    for (int step = 0; step < steps; step++) {
        one_step();
        check_all(step);
    }
}

/* ---- the tests ----------------------------------------------------------------------- */

Test(slot_index, random_program_both_dbs_indexed) {
    db_enable_slot_index(d0);
    db_enable_slot_index(d1);
    run_program(11, 6000);
}

/* MOVE, COPY and SWAPDB between an indexed db and a plain one: nodes are
 * reshaped on the way in, and the index travels with the keys it lists. */
Test(slot_index, random_program_one_db_indexed) {
    db_enable_slot_index(d0);
    run_program(12, 6000);
}

Test(slot_index, random_program_other_seed) {
    db_enable_slot_index(d0);
    db_enable_slot_index(d1);
    run_program(977, 6000);
}

/* Standalone: no index, no link bytes, and the checker agrees. */
Test(slot_index, standalone_nodes_carry_no_links) {
    run_program(5, 1500);
    cr_assert_not(db_slot_indexed(d0));
    cr_assert_eq(db_slot_count(d0, 0), 0);
    cr_assert_eq(db_slot_overhead(d0), 0);
    dnode *n = db_set_string(d0, "k", 1, "v", 1, -1);
    cr_assert_eq(n->flags & DN_SLOTLINK, 0);
    cr_assert_eq(db_node_new("x", 1, 1, -1)->flags & DN_SLOTLINK, 0);
}

/* MEMORY USAGE and used_memory count the 16 link bytes of an indexed key. */
Test(slot_index, memory_accounting_includes_links) {
    db_enable_slot_index(d0);
    cr_assert_eq(db_slot_overhead(d0), CLUSTER_SLOTS * (sizeof(void *) + sizeof(size_t)));
    db_set_string(d0, "first", 5, "x", 1, -1); /* the table exists before the measure */
    size_t before = zmalloc_used();
    dnode *a = db_set_string(d0, "alpha", 5, "0123456789", 10, -1);
    size_t grew = zmalloc_used() - before;
    dnode *b = db_set_string(d1, "alpha", 5, "0123456789", 10, -1);
    cr_assert(a->flags & DN_SLOTLINK);
    cr_assert_not(b->flags & DN_SLOTLINK);
    cr_assert_eq(db_node_memory(a), db_node_memory(b) + DN_LINK_SLOT);
    cr_assert_geq(grew, db_node_memory(a));
    before = zmalloc_used();
    db_delete(d0, "alpha", 5);
    cr_assert_eq(before - zmalloc_used(), grew, "the node's bytes come back whole");
}

typedef struct names {
    const char **v;
    char seen[4];
    size_t got;
} names;

static void by_name(void *arg, const char *key, size_t klen) {
    names *nm = arg;
    nm->got++;
    for (int i = 0; i < 4; i++)
        if (strlen(nm->v[i]) == klen && memcmp(nm->v[i], key, klen) == 0) nm->seen[i]++;
}

/* The listing and the counts, by hand. */
Test(slot_index, count_list_delete_a_slot) {
    db_enable_slot_index(d0);
    const char *same[] = {"{user1000}.following", "{user1000}.followers", "user1000", "x{user1000}y"};
    for (int i = 0; i < 4; i++) db_set_string(d0, same[i], strlen(same[i]), "v", 1, i == 1 ? T0 + 10 : -1);
    db_set_string(d0, "foo", 3, "v", 1, -1);
    unsigned s = key_hash_slot("user1000", 8);
    cr_assert_eq(db_slot_count(d0, s), 4);
    cr_assert_eq(db_slot_count(d0, 12182), 1);
    cr_assert_eq(db_slot_count(d0, CLUSTER_SLOTS), 0, "out of range: nothing");
    names nm = {same, {0}, 0};
    cr_assert_eq(db_slot_keys(d0, s, 10, by_name, &nm), 4);
    cr_assert_eq(nm.got, 4);
    for (int i = 0; i < 4; i++) cr_assert_eq(nm.seen[i], 1, "%s listed once", same[i]);
    names two = {same, {0}, 0};
    cr_assert_eq(db_slot_keys(d0, s, 2, by_name, &two), 2);
    cr_assert_eq(two.got, 2);
    srv.now_ms = T0 + 20; /* one key expired but not deleted yet: still counted, as Redis */
    cr_assert_eq(db_slot_count(d0, s), 4);
    cr_assert_eq(db_slot_delete_all(d0, s), 4);
    cr_assert_eq(db_slot_count(d0, s), 0);
    cr_assert_eq(dict_size(&d0->keys), 1);
    cr_assert_eq(d0->expires, 0);
    cr_assert_eq(db_slot_check(d0), 0);
    cr_assert_eq(db_volatile_check(d0), 0);
}
