/* dnode.c - allocation of dict nodes (see dict.h): one slab allocator with
 * exact 8-byte size classes and no per-object header, plus the operations
 * that change a node's shape (value length, expiry slot, key).
 *
 * Why: a key with a 16-byte name and a 64-byte value is a 96-byte node;
 * glibc's malloc adds an 8-byte chunk header and rounds to 16, so it would
 * take 112 bytes. Millions of same-sized nodes are the common case of a
 * cache, and a slab class per 8 bytes stores each at its exact size. Pages
 * are 64 KB from zmalloc and are never returned (like most allocators'
 * small-object arenas, RSS stays at its high-water mark); freed objects go
 * to their class's free list and are reused first.
 *
 * Accounting: used_memory (zmalloc_used) counts live node bytes, not the
 * pages, so eviction under maxmemory sees frees at once.
 *
 * A keyspace node of a slot-indexed database has DN_LINK_SLOT bytes after
 * its value (DN_SLOTLINK, db_slots.c): every size computed here counts
 * them, and every reshape below carries them to the new node (an in-place
 * resize moves them to the value's new end).
 *
 * Under AddressSanitizer every node comes from zmalloc instead, so overflows
 * between neighbouring nodes are still caught.
 *
 * Threads: the slabs belong to the event loop. A thread that frees values
 * (lazyfree.c) declares itself with dn_remote_thread(); its slab frees go to
 * lists of its own (thread-local, no lock), which dn_remote_flush() hands
 * over under a mutex and the event loop's dn_remote_collect() splices back
 * into the free lists. The event loop's own dn_free pays one thread-local
 * test for this.
 */
#include "dict.h"
#include "zmalloc.h"
#include <pthread.h>
#include <stdatomic.h>
#include <string.h>

#define SLAB_PAGE (64 * 1024)
#define SLAB_CLASSES (DN_SLAB_MAX / 8 + 1)

#if defined(__has_feature)
#if __has_feature(address_sanitizer)
#define DN_NO_SLAB 1
#endif
#endif
#if defined(__SANITIZE_ADDRESS__)
#define DN_NO_SLAB 1
#endif

typedef struct free_obj { struct free_obj *next; } free_obj;

#ifndef DN_NO_SLAB
static struct {
    free_obj *free[SLAB_CLASSES];
    char *cur[SLAB_CLASSES];     /* bump region of the class's newest page */
    char *end[SLAB_CLASSES];
} slab;
#endif

static inline size_t class_size(size_t n) { return (n + 7) & ~(size_t)7; }

#ifndef DN_NO_SLAB
typedef struct obj_list {
    free_obj *head, *tail;
} obj_list;

static _Thread_local int remote;                    /* this thread is not the event loop */
static _Thread_local obj_list mine[SLAB_CLASSES];   /* a remote thread's frees, not handed over yet */
static obj_list handed[SLAB_CLASSES];               /* handed over, under handed_mu */
static pthread_mutex_t handed_mu = PTHREAD_MUTEX_INITIALIZER;
static atomic_int handed_any;

static void list_push(obj_list *l, free_obj *f) {
    f->next = l->head;
    l->head = f;
    if (!l->tail) l->tail = f;
}

/* Append list b to a; b is left empty. */
static void list_splice(obj_list *a, obj_list *b) {
    if (!b->head) return;
    b->tail->next = a->head;
    a->head = b->head;
    if (!a->tail) a->tail = b->tail;
    b->head = b->tail = NULL;
}
#endif

void dn_remote_thread(void) {
#ifndef DN_NO_SLAB
    remote = 1;
#endif
}

void dn_remote_flush(void) {
#ifndef DN_NO_SLAB
    int any = 0;
    pthread_mutex_lock(&handed_mu);
    for (size_t k = 0; k < SLAB_CLASSES; k++) {
        any |= mine[k].head != NULL;
        list_splice(&handed[k], &mine[k]);
    }
    pthread_mutex_unlock(&handed_mu);
    if (any) atomic_store_explicit(&handed_any, 1, memory_order_release);
#endif
}

void dn_remote_collect(void) {
#ifndef DN_NO_SLAB
    if (!atomic_load_explicit(&handed_any, memory_order_acquire)) return;
    atomic_store_explicit(&handed_any, 0, memory_order_relaxed);
    pthread_mutex_lock(&handed_mu);
    for (size_t k = 0; k < SLAB_CLASSES; k++) {
        if (!handed[k].head) continue;
        handed[k].tail->next = slab.free[k];
        slab.free[k] = handed[k].head;
        handed[k].head = handed[k].tail = NULL;
    }
    pthread_mutex_unlock(&handed_mu);
#endif
}

static void *slab_alloc(size_t n) {
#ifdef DN_NO_SLAB
    return zmalloc(n);
#else
    if (n > DN_SLAB_MAX) return zmalloc(n);
    size_t sz = class_size(n), k = sz / 8;
    free_obj *f = slab.free[k];
    if (f) {
        slab.free[k] = f->next;
    } else {
        if (slab.cur[k] + sz > slab.end[k] || !slab.cur[k]) {
            char *page = zmalloc(SLAB_PAGE);
            zmalloc_adjust(-(long long)zmalloc_size(page)); /* counted per object below */
            slab.cur[k] = page;
            slab.end[k] = page + SLAB_PAGE;
        }
        f = (free_obj *)slab.cur[k];
        slab.cur[k] += sz;
    }
    zmalloc_adjust((long long)sz);
    return f;
#endif
}

static void slab_free(void *p, size_t n) {
#ifdef DN_NO_SLAB
    (void)n;
    zfree(p);
#else
    if (n > DN_SLAB_MAX) {
        zfree(p);
        return;
    }
    size_t sz = class_size(n), k = sz / 8;
    free_obj *f = p;
    zmalloc_adjust(-(long long)sz);
    if (remote) {
        list_push(&mine[k], f);
        return;
    }
    f->next = slab.free[k];
    slab.free[k] = f;
#endif
}

/* Header for the given shape; everything else zero. */
void dn_init_shaped(dnode *n, uint32_t klen, uint32_t vlen, unsigned shape) {
    memset(n, 0, sizeof *n);
    n->flags = (shape & (DN_EXPIRE | DN_SLOTLINK)) | (dn_needs_wide(klen, vlen) ? DN_WIDE : 0);
    if (n->flags & DN_WIDE) {
        char *w = n->data + dn_expire_slot(n->flags);
        memcpy(w, &klen, 4);
        memcpy(w + 4, &vlen, 4);
    } else {
        n->klen8 = (uint8_t)klen;
        n->vlen16 = (uint16_t)vlen;
    }
}

void dn_init(dnode *n, uint32_t klen, uint32_t vlen, int with_expire) {
    dn_init_shaped(n, klen, vlen, with_expire ? DN_EXPIRE : 0);
}

dnode *dn_new_shaped(uint32_t klen, uint32_t vlen, unsigned shape) {
    dnode *n = slab_alloc(dn_size(klen, vlen, shape & DN_EXPIRE) + dn_link_slot(shape));
    dn_init_shaped(n, klen, vlen, shape);
    return n;
}

dnode *dn_new(uint32_t klen, uint32_t vlen, int with_expire) {
    return dn_new_shaped(klen, vlen, with_expire ? DN_EXPIRE : 0);
}

void (*dn_unpin_hook)(dnode *n);
void (*dn_unpin_all_hook)(void);

void dn_free(dnode *n) {
    if (!n) return;
    dn_prepare_change(n);
    slab_free(n, dn_node_size(n));
}

size_t dn_usable(const dnode *n) {
#ifdef DN_NO_SLAB
    return zmalloc_size((void *)n);
#else
    size_t sz = dn_node_size(n);
    return sz > DN_SLAB_MAX ? zmalloc_size((void *)n) : class_size(sz);
#endif
}

/* May a node of `from` bytes at n become `to` bytes without moving? With the
 * slab only within one size class (dn_free finds the class from the size);
 * from malloc when the block is big enough. */
static int same_block(size_t from, size_t to, const dnode *n) {
#ifdef DN_NO_SLAB
    (void)from;
    return to <= zmalloc_size((void *)n);
#else
    if (from > DN_SLAB_MAX || to > DN_SLAB_MAX) return 0;
    (void)n;
    return class_size(from) == class_size(to);
#endif
}

/* A new node of the given shape carrying n's header fields (type, enc,
 * lru, flags other than the shape bits), expiry and key. The link bytes,
 * if any, are copied by the caller once the value is in place. */
static dnode *reshape(const dnode *n, uint32_t klen, uint32_t vlen, int with_expire, int with_links) {
    dnode *m = dn_new_shaped(klen, vlen, (with_expire ? DN_EXPIRE : 0) | (with_links ? DN_SLOTLINK : 0));
    m->next = n->next; /* callers relink m where n was */
    m->type = n->type;
    m->enc = n->enc;
    m->lru = n->lru;
    m->flags |= n->flags & ~DN_SHAPE_FLAGS;
    if (with_expire && (n->flags & DN_EXPIRE)) memcpy(m->data, n->data, DN_EXPIRE_SLOT); /* expiry and index position */
    return m;
}

/* n's link bytes into m (both with DN_SLOTLINK, m's value length set). */
static void copy_links(dnode *m, const dnode *n) {
    if ((n->flags & DN_SLOTLINK) && (m->flags & DN_SLOTLINK)) memcpy(dn_links(m), dn_links(n), DN_LINK_SLOT);
}

dnode *dn_resize_value(dnode *n, uint32_t newvlen) {
    uint32_t klen = dn_klen(n), vlen = dn_vlen(n);
    if (newvlen == vlen) return n;
    dn_prepare_change(n);
    int exp = (n->flags & DN_EXPIRE) != 0;
    size_t links = dn_link_slot(n->flags);
    if (dn_needs_wide(klen, vlen) == dn_needs_wide(klen, newvlen) &&
        same_block(dn_size(klen, vlen, exp) + links, dn_size(klen, newvlen, exp) + links, n)) {
        /* same block and layout: only the length changes, and the links
         * move to the value's new end */
        char saved[DN_LINK_SLOT];
        if (links) memcpy(saved, dn_links(n), DN_LINK_SLOT);
        if (n->flags & DN_WIDE) memcpy(n->data + dn_expire_slot(n->flags) + 4, &newvlen, 4);
        else n->vlen16 = (uint16_t)newvlen;
        if (links) memcpy(dn_links(n), saved, DN_LINK_SLOT);
        return n;
    }
    dnode *m = reshape(n, klen, newvlen, exp, links != 0);
    memcpy(dn_key(m), dn_key(n), klen);
    memcpy(dn_val(m), dn_val(n), vlen < newvlen ? vlen : newvlen);
    copy_links(m, n);
    dn_free(n);
    return m;
}

dnode *dn_with_expire_slot(dnode *n, int with_expire) {
    int has = (n->flags & DN_EXPIRE) != 0;
    if (has == (with_expire != 0)) return n;
    uint32_t klen = dn_klen(n), vlen = dn_vlen(n);
    dnode *m = reshape(n, klen, vlen, with_expire, (n->flags & DN_SLOTLINK) != 0);
    memcpy(dn_key(m), dn_key(n), (size_t)klen + vlen + dn_link_slot(n->flags));
    dn_free(n);
    return m;
}

dnode *dn_rekey(dnode *n, const char *key, uint32_t klen) {
    uint32_t vlen = dn_vlen(n);
    int exp = (n->flags & DN_EXPIRE) != 0;
    dnode *m = reshape(n, klen, vlen, exp, (n->flags & DN_SLOTLINK) != 0);
    memcpy(dn_key(m), key, klen);
    memcpy(dn_val(m), dn_val(n), vlen);
    copy_links(m, n);
    dn_free(n);
    return m;
}

dnode *dn_with_links(dnode *n, int with_links) {
    int has = (n->flags & DN_SLOTLINK) != 0;
    if (has == (with_links != 0)) return n;
    uint32_t klen = dn_klen(n), vlen = dn_vlen(n);
    dn_prepare_change(n);
    dnode *m = reshape(n, klen, vlen, (n->flags & DN_EXPIRE) != 0, with_links);
    memcpy(dn_key(m), dn_key(n), (size_t)klen + vlen);
    dn_free(n);
    return m;
}
