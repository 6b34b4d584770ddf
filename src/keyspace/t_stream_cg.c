/* t_stream_cg.c - consumer groups of a stream (t_stream.h): the ordered
 * map by ID that holds pending-entry lists, groups and consumers kept in
 * name order, and the stream type's keyspace hooks (free, dup, memory).
 *
 * The PEL map is a skiplist keyed by 128-bit IDs: XACK removes from the
 * middle, XPENDING and XAUTOCLAIM scan ranges, XREADGROUP appends at the
 * end; a skiplist does all of it in O(log n) with one allocation per
 * pending entry. A group's PEL owns the snack records; each consumer's PEL
 * points at the same records.
 */
#include "t_stream.h"
#include "t_stream_block.h"

#include <string.h>

#include "db.h"
#include "frand.h"
#include "zmalloc.h"

/* ---- sidmap: a skiplist by ID ------------------------------------------ */

#define SIDMAP_MAXLEVEL 24

struct sidmap_node {
    sid id;
    void *val;
    sidmap_node *prev;
    sidmap_node *next[];
};

static sidmap_node *node_new(int level, sid id, void *val) {
    sidmap_node *n = zmalloc(sizeof *n + (size_t)level * sizeof n->next[0]);
    n->id = id;
    n->val = val;
    n->prev = NULL;
    for (int i = 0; i < level; i++) n->next[i] = NULL;
    return n;
}

void sidmap_init(sidmap *m) {
    m->head = node_new(SIDMAP_MAXLEVEL, SID_MIN, NULL);
    m->len = 0;
    m->level = 1;
}

void sidmap_free(sidmap *m, void (*free_val)(void *)) {
    if (!m->head) return;
    sidmap_node *n = m->head->next[0];
    while (n) {
        sidmap_node *next = n->next[0];
        if (free_val) free_val(n->val);
        zfree(n);
        n = next;
    }
    zfree(m->head);
    m->head = NULL;
    m->len = 0;
}

/* Fills up[] with the last node before id at every level. */
static sidmap_node *find_prev(const sidmap *m, sid id, sidmap_node **up) {
    sidmap_node *x = m->head;
    for (int i = m->level - 1; i >= 0; i--) {
        while (x->next[i] && sid_cmp(x->next[i]->id, id) < 0) x = x->next[i];
        if (up) up[i] = x;
    }
    return x;
}

void *sidmap_get(const sidmap *m, sid id) {
    sidmap_node *x = find_prev(m, id, NULL)->next[0];
    return x && sid_cmp(x->id, id) == 0 ? x->val : NULL;
}

static int random_level(void) {
    int l = 1;
    while (l < SIDMAP_MAXLEVEL && (frand64() & 3) == 0) l++;
    return l;
}

int sidmap_put(sidmap *m, sid id, void *val) {
    sidmap_node *up[SIDMAP_MAXLEVEL];
    sidmap_node *x = find_prev(m, id, up)->next[0];
    if (x && sid_cmp(x->id, id) == 0) return 0;
    int level = random_level();
    for (int i = m->level; i < level; i++) up[i] = m->head;
    if (level > m->level) m->level = level;
    sidmap_node *n = node_new(level, id, val);
    for (int i = 0; i < level; i++) {
        n->next[i] = up[i]->next[i];
        up[i]->next[i] = n;
    }
    n->prev = up[0] == m->head ? NULL : up[0];
    if (n->next[0]) n->next[0]->prev = n;
    m->len++;
    return 1;
}

void *sidmap_del(sidmap *m, sid id) {
    sidmap_node *up[SIDMAP_MAXLEVEL];
    sidmap_node *x = find_prev(m, id, up)->next[0];
    if (!x || sid_cmp(x->id, id) != 0) return NULL;
    for (int i = 0; i < m->level && up[i]->next[i] == x; i++) up[i]->next[i] = x->next[i];
    if (x->next[0]) x->next[0]->prev = x->prev;
    while (m->level > 1 && !m->head->next[m->level - 1]) m->level--;
    void *v = x->val;
    zfree(x);
    m->len--;
    return v;
}

sidmap_node *sidmap_seek(const sidmap *m, sid id) { return find_prev(m, id, NULL)->next[0]; }

sidmap_node *sidmap_seek_rev(const sidmap *m, sid id) {
    sidmap_node *x = find_prev(m, id, NULL);
    sidmap_node *n = x->next[0];
    if (n && sid_cmp(n->id, id) == 0) return n;
    return x == m->head ? NULL : x;
}

sidmap_node *sidmap_first(const sidmap *m) { return m->head->next[0]; }
sidmap_node *sidmap_last(const sidmap *m) {
    sidmap_node *x = m->head;
    for (int i = m->level - 1; i >= 0; i--)
        while (x->next[i]) x = x->next[i];
    return x == m->head ? NULL : x;
}
sidmap_node *sidmap_next(const sidmap_node *n) { return n->next[0]; }
sidmap_node *sidmap_prev(const sidmap_node *n) { return n->prev; }
sid sidmap_id(const sidmap_node *n) { return n->id; }
void *sidmap_val(const sidmap_node *n) { return n->val; }

/* ---- groups and consumers ---------------------------------------------- */

/* Name order as Redis's radix tree: bytes, then the shorter first. */
static int name_cmp(const char *a, size_t al, const char *b, size_t bl) {
    int c = memcmp(a, b, al < bl ? al : bl);
    return c ? c : al < bl ? -1 : al > bl;
}

/* Groups and consumers both start with their name and its length. */
typedef struct named {
    char *name;
    size_t nlen;
} named;

/* Binary search of the name-ordered arr[0..n): the index where name is
 * (*found = 1) or would go. */
static size_t name_search(void *const *arr, size_t n, const char *name, size_t nlen, int *found) {
    size_t lo = 0, hi = n;
    *found = 0;
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        const named *x = arr[mid];
        int c = name_cmp(x->name, x->nlen, name, nlen);
        if (c == 0) {
            *found = 1;
            return mid;
        }
        if (c < 0) lo = mid + 1;
        else hi = mid;
    }
    return lo;
}
#define NAME_SEARCH(arr, n, name, nlen, found) name_search((void *const *)(arr), (n), (name), (nlen), (found))

sgroup *stream_group_find(const stream *s, const char *name, size_t nlen) {
    int found;
    size_t i = NAME_SEARCH(s->groups, s->ngroups, name, nlen, &found);
    return found ? s->groups[i] : NULL;
}

static void *insert_at(void *arr, size_t *n, size_t *cap, size_t i, void *item) {
    void **a = arr;
    if (*n == *cap) {
        *cap = *cap ? *cap * 2 : 4;
        a = zrealloc(a, *cap * sizeof *a);
    }
    memmove(a + i + 1, a + i, (*n - i) * sizeof *a);
    a[i] = item;
    (*n)++;
    return a;
}

sgroup *stream_group_create(stream *s, const char *name, size_t nlen, sid last_id, long long entries_read) {
    int found;
    size_t i = NAME_SEARCH(s->groups, s->ngroups, name, nlen, &found);
    if (found) return NULL;
    sgroup *g = zmalloc(sizeof *g);
    memset(g, 0, sizeof *g);
    g->name = zstrndup(name, nlen);
    g->nlen = nlen;
    g->last_id = last_id;
    g->entries_read = entries_read;
    sidmap_init(&g->pel);
    s->groups = insert_at(s->groups, &s->ngroups, &s->gcap, i, g);
    return g;
}

static void consumer_free(sconsumer *c) {
    sidmap_free(&c->pel, NULL);
    zfree(c->name);
    zfree(c);
}

static void group_free(sgroup *g) {
    for (size_t i = 0; i < g->nconsumers; i++) consumer_free(g->consumers[i]);
    zfree(g->consumers);
    sidmap_free(&g->pel, zfree);
    zfree(g->name);
    zfree(g);
}

int stream_group_destroy(stream *s, const char *name, size_t nlen) {
    int found;
    size_t i = NAME_SEARCH(s->groups, s->ngroups, name, nlen, &found);
    if (!found) return 0;
    group_free(s->groups[i]);
    memmove(s->groups + i, s->groups + i + 1, (s->ngroups - i - 1) * sizeof *s->groups);
    s->ngroups--;
    return 1;
}

sconsumer *stream_consumer_find(const sgroup *g, const char *name, size_t nlen) {
    int found;
    size_t i = NAME_SEARCH(g->consumers, g->nconsumers, name, nlen, &found);
    return found ? g->consumers[i] : NULL;
}

sconsumer *stream_consumer_create(sgroup *g, const char *name, size_t nlen, int64_t now_ms) {
    int found;
    size_t i = NAME_SEARCH(g->consumers, g->nconsumers, name, nlen, &found);
    if (found) return NULL;
    sconsumer *c = zmalloc(sizeof *c);
    c->name = zstrndup(name, nlen);
    c->nlen = nlen;
    c->seen_time = now_ms;
    sidmap_init(&c->pel);
    g->consumers = insert_at(g->consumers, &g->nconsumers, &g->ccap, i, c);
    return c;
}

size_t stream_consumer_delete(sgroup *g, sconsumer *c) {
    size_t pending = c->pel.len;
    for (sidmap_node *n = sidmap_first(&c->pel); n; n = sidmap_next(n)) zfree(sidmap_del(&g->pel, sidmap_id(n)));
    int found;
    size_t i = NAME_SEARCH(g->consumers, g->nconsumers, c->name, c->nlen, &found);
    if (found) {
        memmove(g->consumers + i, g->consumers + i + 1, (g->nconsumers - i - 1) * sizeof *g->consumers);
        g->nconsumers--;
    }
    consumer_free(c);
    return pending;
}

snack *stream_pel_add(sgroup *g, sconsumer *c, sid id, int64_t now_ms) {
    snack *n = zmalloc(sizeof *n);
    n->delivery_time = now_ms;
    n->delivery_count = 1;
    n->consumer = c;
    if (!sidmap_put(&g->pel, id, n)) {
        zfree(n);
        return NULL;
    }
    sidmap_put(&c->pel, id, n);
    return n;
}

void stream_pel_move(sgroup *g, snack *n, sid id, sconsumer *to) {
    (void)g;
    if (n->consumer == to) return;
    sidmap_del(&n->consumer->pel, id);
    n->consumer = to;
    sidmap_put(&to->pel, id, n);
}

int stream_pel_ack(sgroup *g, sid id) {
    snack *n = sidmap_del(&g->pel, id);
    if (!n) return 0;
    sidmap_del(&n->consumer->pel, id);
    zfree(n);
    return 1;
}

/* ---- keyspace hooks ------------------------------------------------------ */

void stream_free(stream *s) {
    for (size_t i = 0; i < s->nblk; i++) zfree(stream_blk(s, i));
    zfree(s->blk);
    for (size_t i = 0; i < s->ngroups; i++) group_free(s->groups[i]);
    zfree(s->groups);
    zfree(s);
}

static void dup_group(stream *d, const sgroup *g) {
    sgroup *ng = stream_group_create(d, g->name, g->nlen, g->last_id, g->entries_read);
    for (size_t i = 0; i < g->nconsumers; i++) {
        const sconsumer *c = g->consumers[i];
        sconsumer *nc = stream_consumer_create(ng, c->name, c->nlen, c->seen_time);
        for (sidmap_node *n = sidmap_first(&c->pel); n; n = sidmap_next(n)) {
            const snack *x = sidmap_val(n);
            snack *y = stream_pel_add(ng, nc, sidmap_id(n), x->delivery_time);
            y->delivery_count = x->delivery_count;
        }
    }
}

stream *stream_dup(const stream *s) {
    stream *d = stream_new();
    *d = *s;
    d->blk = NULL;
    d->head = d->nblk = d->cap = 0;
    d->groups = NULL;
    d->ngroups = d->gcap = 0;
    for (size_t i = 0; i < s->nblk; i++) {
        const sblock *b = stream_blk(s, i);
        sblock *c = zmalloc(sizeof *c + b->used);
        memcpy(c, b, sizeof *c + b->used);
        c->cap = c->used;
        stream_push_block(d, c);
    }
    for (size_t i = 0; i < s->ngroups; i++) dup_group(d, s->groups[i]);
    return d;
}

static size_t map_mem(const sidmap *m, size_t per_val) {
    return m->len * (sizeof(sidmap_node) + 2 * sizeof(void *) + per_val) + sizeof(sidmap_node) +
           SIDMAP_MAXLEVEL * sizeof(void *);
}

size_t stream_mem(const stream *s) {
    size_t m = sizeof *s + s->cap * sizeof *s->blk;
    for (size_t i = 0; i < s->nblk; i++) m += sizeof(sblock) + stream_blk(s, i)->cap;
    for (size_t i = 0; i < s->ngroups; i++) {
        const sgroup *g = s->groups[i];
        m += sizeof *g + g->nlen + map_mem(&g->pel, sizeof(snack));
        for (size_t j = 0; j < g->nconsumers; j++)
            m += sizeof(sconsumer) + g->consumers[j]->nlen + map_mem(&g->consumers[j]->pel, 0);
    }
    return m;
}

static void hook_free(void *p) { stream_free(p); }
static void *hook_dup(const void *p) { return stream_dup(p); }
static size_t hook_mem(const void *p) { return stream_mem(p); }

void stream_register_type(void) { db_register_type(OBJ_STREAM, hook_free, hook_dup, hook_mem); }
