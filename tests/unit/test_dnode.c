/* test_dnode.c - node layout and allocation (src/base/dnode.c, dict.h): the short
 * and wide length forms and the boundary between them, the expiry slot,
 * reshaping (value resize, expiry on/off, rekey) keeping every other field,
 * and the slab: exact size classes, reuse, and used_memory accounting, also
 * for frees made by another thread (dn_remote_*, zmalloc_publish). */
#include <criterion/criterion.h>
#include <pthread.h>
#include <string.h>
#include "dict.h"
#include "zmalloc.h"

static dnode *mk(uint32_t klen, uint32_t vlen, int exp, char kc, char vc) {
    dnode *n = dn_new(klen, vlen, exp);
    memset(dn_key(n), kc, klen);
    memset(dn_val(n), vc, vlen);
    if (exp) dn_set_expire_field(n, 123456789);
    return n;
}

static void check(const dnode *n, uint32_t klen, uint32_t vlen, int exp, char kc, char vc, uint32_t vprefix) {
    cr_assert_eq(dn_klen(n), klen);
    cr_assert_eq(dn_vlen(n), vlen);
    cr_assert_eq(!!(n->flags & DN_EXPIRE), !!exp);
    cr_assert_eq(!!(n->flags & DN_WIDE), dn_needs_wide(klen, vlen));
    if (exp) cr_assert_eq(dn_expire(n), 123456789);
    else cr_assert_eq(dn_expire(n), -1);
    for (uint32_t i = 0; i < klen; i++) cr_assert_eq(dn_key(n)[i], kc, "key byte %u", i);
    for (uint32_t i = 0; i < vprefix; i++) cr_assert_eq(dn_val(n)[i], vc, "value byte %u", i);
    cr_assert_eq(dn_node_size(n), dn_size(klen, vlen, exp));
}

Test(dnode, header_is_16_bytes_and_short_form_has_no_slot) {
    cr_assert_eq(sizeof(dnode), 16);
    cr_assert_eq(dn_size(16, 64, 0), 96, "16 B key + 64 B value: 96 bytes");
    cr_assert_eq(dn_size(16, 64, 1), 108, "the expiry slot: int64 expiry + uint32 volatile-index position");
    cr_assert_eq(dn_size(255, 0, 0), 16 + 8 + 255, "a 255-byte key needs the wide slot");
    cr_assert_eq(dn_size(254, 65534, 0), 16 + 254 + 65534);
    cr_assert_eq(dn_size(0, 65535, 0), 16 + 8 + 65535);
}

Test(dnode, lengths_at_the_boundaries) {
    static const uint32_t ks[] = {0, 1, 254, 255, 256, 1000};
    static const uint32_t vs[] = {0, 8, 65534, 65535, 70000};
    for (size_t a = 0; a < sizeof ks / sizeof ks[0]; a++)
        for (size_t b = 0; b < sizeof vs / sizeof vs[0]; b++)
            for (int e = 0; e < 2; e++) {
                dnode *n = mk(ks[a], vs[b], e, 'k', 'v');
                check(n, ks[a], vs[b], e, 'k', 'v', vs[b]);
                dn_free(n);
            }
}

Test(dnode, resize_value_across_the_wide_boundary_keeps_fields) {
    dnode *n = mk(10, 65000, 1, 'a', 'b');
    n->type = 3;
    n->enc = 7;
    n->lru = 0xABCDEF;
    n->flags |= DN_NOSHARE;
    uint32_t sizes[] = {65534, 65535, 66000, 65534, 100, 101, 0, 65535, 5};
    uint32_t prev = 65000;
    for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; i++) {
        n = dn_resize_value(n, sizes[i]);
        uint32_t keep = prev < sizes[i] ? prev : sizes[i];
        check(n, 10, sizes[i], 1, 'a', 'b', keep);
        cr_assert_eq(n->type, 3);
        cr_assert_eq(n->enc, 7);
        cr_assert_eq(n->lru, 0xABCDEF);
        cr_assert(n->flags & DN_NOSHARE);
        memset(dn_val(n), 'b', sizes[i]);
        prev = sizes[i];
    }
    dn_free(n);
}

Test(dnode, same_class_resize_is_in_place) {
    dnode *n = mk(16, 60, 0, 'k', 'v');    /* 92 bytes: the 96-byte class */
    dnode *m = dn_resize_value(n, 64);      /* 96 bytes: same class */
#if !defined(__SANITIZE_ADDRESS__)         /* (under ASan nodes come from malloc) */
    cr_assert_eq(m, n);
#endif
    check(m, 16, 64, 0, 'k', 'v', 60);
    memset(dn_val(m), 'v', 64);
    dnode *o = dn_resize_value(m, 65);      /* 97 bytes: next class */
    cr_assert_neq(o, m);
    check(o, 16, 65, 0, 'k', 'v', 64);
    dn_free(o);
}

Test(dnode, expiry_slot_on_and_off) {
    uint32_t vs[] = {3, 70000};
    for (int i = 0; i < 2; i++) {
        dnode *n = mk(300, vs[i], 0, 'x', 'y');
        n->lru = 77;
        n = dn_with_expire_slot(n, 1);
        dn_set_expire_field(n, 123456789);
        check(n, 300, vs[i], 1, 'x', 'y', vs[i]);
        cr_assert_eq(n->lru, 77);
        cr_assert_eq(dn_with_expire_slot(n, 1), n, "already there: unchanged");
        n = dn_with_expire_slot(n, 0);
        check(n, 300, vs[i], 0, 'x', 'y', vs[i]);
        dn_free(n);
    }
}

Test(dnode, rekey_to_long_and_short_keys) {
    dnode *n = mk(5, 20, 1, 'k', 'v');
    char longkey[400];
    memset(longkey, 'L', sizeof longkey);
    n = dn_rekey(n, longkey, sizeof longkey);
    check(n, 400, 20, 1, 'L', 'v', 20);
    n = dn_rekey(n, "SSS", 3);
    check(n, 3, 20, 1, 'S', 'v', 20);
    dn_free(n);
}

Test(dnode, slab_reuses_and_accounts_exact_sizes) {
    dnode *warm = dn_new(16, 64, 0); /* make sure the class has a page */
    size_t before = zmalloc_used();
    dnode *n = dn_new(16, 64, 0);
    size_t after = zmalloc_used();
#if !defined(__SANITIZE_ADDRESS__)
    cr_assert_eq(after - before, 96, "used_memory counts the object's exact size");
    cr_assert_eq(dn_usable(n), 96);
#endif
    dn_free(n);
    cr_assert_eq(zmalloc_used(), before, "a free gives the bytes back to used_memory");
    dnode *m = dn_new(16, 64, 0);
#if !defined(__SANITIZE_ADDRESS__)
    cr_assert_eq(m, n, "a freed object is reused first");
#endif
    dn_free(m);
    dn_free(warm);
    (void)after;
}

Test(dnode, many_nodes_of_many_sizes) {
    enum { N = 20000 };
    static dnode *v[N];
    size_t before = zmalloc_used();
    for (int i = 0; i < N; i++) v[i] = mk((uint32_t)(i % 40), (uint32_t)(i * 7 % 600), i & 1, 'k', (char)('a' + i % 26));
    for (int i = 0; i < N; i += 2) { dn_free(v[i]); v[i] = NULL; }
    for (int i = 1; i < N; i += 2)
        check(v[i], (uint32_t)(i % 40), (uint32_t)(i * 7 % 600), i & 1, 'k', (char)('a' + i % 26), (uint32_t)(i * 7 % 600));
    for (int i = 1; i < N; i += 2) dn_free(v[i]);
    cr_assert_eq(zmalloc_used(), before);
}

/* ---- frees from another thread (lazyfree.c's helper) ---- */

#define REMOTE_N 1000

typedef struct remote_job {
    dnode **nodes;
    void *blocks[REMOTE_N];
} remote_job;

static void *remote_free(void *arg) {
    remote_job *j = arg;
    dn_remote_thread();
    for (int i = 0; i < REMOTE_N; i++) dn_free(j->nodes[i]);
    for (int i = 0; i < REMOTE_N; i++) zfree(j->blocks[i]);
    dn_remote_flush();
    zmalloc_publish();
    return NULL;
}

Test(dnode, remote_thread_frees_are_counted_and_reused) {
    static dnode *nodes[REMOTE_N];
    remote_job j = {.nodes = nodes};
    size_t used0 = zmalloc_used();
    for (int i = 0; i < REMOTE_N; i++) nodes[i] = mk(20, 20, 0, 'k', 'v');
    for (int i = 0; i < REMOTE_N; i++) j.blocks[i] = zmalloc(100);
    cr_assert_gt(zmalloc_used(), used0);
    pthread_t t;
    cr_assert_eq(pthread_create(&t, NULL, remote_free, &j), 0);
    pthread_join(t, NULL);
    cr_assert_eq(zmalloc_used(), used0, "the thread's frees are published to used_memory");
    dn_remote_collect();
    /* the same size class now hands out the nodes the thread freed */
    int reused = 0;
    dnode *again[REMOTE_N];
    for (int i = 0; i < REMOTE_N; i++) again[i] = mk(20, 20, 0, 'k', 'v');
    for (int i = 0; i < REMOTE_N; i++)
        for (int k = 0; k < REMOTE_N && !reused; k++) reused = again[i] == nodes[k];
#if !defined(__SANITIZE_ADDRESS__)
    cr_assert(reused, "collected nodes go back to their class's free list");
#endif
    for (int i = 0; i < REMOTE_N; i++) dn_free(again[i]);
    cr_assert_eq(zmalloc_used(), used0);
}
