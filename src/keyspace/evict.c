/* evict.c - maxmemory enforcement: the eight eviction policies, the
 * eviction pool, LFU counters and the OOM refusal of commands (see evict.h).
 *
 * Why sampling: finding the true least recently (or frequently) used key
 * would need an ordered structure updated on every access. Redis instead
 * samples a few keys per database on each eviction and keeps the best
 * candidates seen so far in a small sorted pool, which approximates true LRU
 * well with 5 samples and costs nothing on the read path but a stamp. We do
 * the same. The volatile-* policies sample the database's index of keys
 * with a TTL (db.h), so finding a candidate costs the same however few keys
 * are volatile. A run that cannot get under the limit within its time
 * budget lets the command through and is continued by a timer, as in Redis.
 */
#include "evict.h"
#include "lazyfree.h"
#include "client.h"
#include "command.h"
#include "db.h"
#include "event.h"
#include "frand.h"
#include "multi.h"
#include "zmalloc.h"

#include <math.h>
#include <string.h>

/* ---- LFU counter ------------------------------------------------------- */

uint8_t evict_lfu_log_incr(uint8_t counter, int log_factor, double r) {
    if (counter == 255) return 255;
    double base = counter > LFU_INIT_VAL ? (double)(counter - LFU_INIT_VAL) : 0.0;
    double p = 1.0 / (base * log_factor + 1.0);
    return r < p ? (uint8_t)(counter + 1) : counter;
}

unsigned evict_lfu_decay(unsigned counter, uint32_t ldt, uint32_t now_min, int decay_time) {
    if (decay_time <= 0) return counter;
    uint32_t elapsed = now_min >= ldt ? now_min - ldt : 65535u - ldt + now_min; /* as Redis */
    uint32_t periods = elapsed / (uint32_t)decay_time;
    return periods >= counter ? 0 : counter - periods;
}

unsigned evict_lfu_get(const dnode *n) {
    return evict_lfu_decay(dn_lfu_counter(n), dn_lfu_ldt(n), evict_lfu_minutes(), srv.cfg.lfu_decay_time);
}

void evict_lfu_access(dnode *n) {
    double r = (double)(frand64() >> 11) * 0x1p-53; /* uniform in [0,1) */
    dn_lfu_set(n, evict_lfu_minutes(), evict_lfu_log_incr((uint8_t)evict_lfu_get(n), srv.cfg.lfu_log_factor, r));
}

/* ---- the pool ------------------------------------------------------------ */

void evpool_init(evpool *p) {
    memset(p, 0, sizeof *p);
    for (int k = 0; k < EVPOOL_SIZE; k++) p->e[k].cache = p->caches[k];
}

void evpool_clear_entry(evpool_entry *e) {
    if (e->key != e->cache) zfree(e->key);
    e->key = NULL;
}

void evpool_clear(evpool *p) {
    for (int k = 0; k < EVPOOL_SIZE; k++) evpool_clear_entry(&p->e[k]);
}

int evpool_insert(evpool *p, uint64_t idle, int dbid, const char *key, size_t klen) {
    evpool_entry *e = p->e;
    int k = 0;
    while (k < EVPOOL_SIZE && e[k].key && e[k].idle < idle) k++;
    if (k == 0 && e[EVPOOL_SIZE - 1].key) return -1; /* full, and less idle than all */
    if (k < EVPOOL_SIZE && !e[k].key) {
        /* an empty slot: the used entries are a prefix, so it is the first free one */
    } else if (!e[EVPOOL_SIZE - 1].key) {
        /* room on the right: shift k.. right; the free last slot's buffer
         * becomes slot k's (its old key pointer is a stale copy of k+1's) */
        char *spare = e[EVPOOL_SIZE - 1].cache;
        memmove(&e[k + 1], &e[k], sizeof e[0] * (size_t)(EVPOOL_SIZE - k - 1));
        e[k].cache = spare;
    } else {
        /* full: drop the least idle (slot 0), shift 1..k-1 left, reuse its buffer */
        k--;
        char *spare = e[0].cache;
        evpool_clear_entry(&e[0]);
        memmove(&e[0], &e[1], sizeof e[0] * (size_t)k);
        e[k].cache = spare;
    }
    e[k].idle = idle;
    e[k].dbid = dbid;
    e[k].klen = (uint32_t)klen;
    e[k].key = klen <= EVPOOL_KEY_CACHE ? e[k].cache : zmalloc(klen);
    memcpy(e[k].key, key, klen);
    return k;
}

/* ---- choosing a victim ---------------------------------------------------- */

static evpool pool;
static int pool_ready;

static int policy_is_volatile(int policy) { return policy >= MAXMEMORY_VOLATILE_LRU; }
static int policy_is_random(int policy) {
    return policy == MAXMEMORY_ALLKEYS_RANDOM || policy == MAXMEMORY_VOLATILE_RANDOM;
}

/* How evictable a sampled key is under the policy: larger first. */
static uint64_t node_rank(const dnode *n, int policy) {
    switch (policy) {
    case MAXMEMORY_ALLKEYS_LFU:
    case MAXMEMORY_VOLATILE_LFU: return 255 - evict_lfu_get(n);
    case MAXMEMORY_VOLATILE_TTL: return UINT64_MAX - (uint64_t)dn_expire(n); /* soonest to expire first */
    default: return evict_lru_idle(n);                                       /* idle seconds */
    }
}

/* The keys a policy may evict in d, and the flags a sampled node needs. */
static size_t candidates(const db *d, int policy) {
    return policy_is_volatile(policy) ? d->expires : dict_size(&d->keys);
}

#define SAMPLE_BATCH 64
#define SAMPLE_BUCKETS_PER_KEY 10   /* Redis's dictGetSomeKeys bound */

/* Samples maxmemory-samples candidates of d into the pool: uniform picks
 * from the volatile index, or neighbouring keys of random buckets. */
static void pool_populate(db *d, int policy) {
    dnode *s[SAMPLE_BATCH];
    size_t want = srv.cfg.maxmemory_samples > 0 ? (size_t)srv.cfg.maxmemory_samples : 1;
    while (want) {
        size_t batch = want < SAMPLE_BATCH ? want : SAMPLE_BATCH, got = batch;
        if (policy_is_volatile(policy)) {
            for (size_t i = 0; i < batch; i++) s[i] = db_random_volatile(d);
        } else {
            got = dict_sample(&d->keys, s, batch, batch * SAMPLE_BUCKETS_PER_KEY);
        }
        for (size_t i = 0; i < got; i++) evpool_insert(&pool, node_rank(s[i], policy), d->id, dn_key(s[i]), dn_klen(s[i]));
        want -= batch;
    }
}

/* The best pool entry whose key still exists (and is still volatile when
 * the policy wants that); entries looked at are consumed. */
static dnode *pool_take_best(int policy, db **dbp) {
    for (int k = EVPOOL_SIZE - 1; k >= 0; k--) {
        evpool_entry *e = &pool.e[k];
        if (!e->key) continue;
        db *d = e->dbid < db_count() ? db_get(e->dbid) : NULL;
        dnode *n = d ? dict_find(&d->keys, e->key, e->klen) : NULL;
        evpool_clear_entry(e);
        if (n && (!policy_is_volatile(policy) || (n->flags & DN_EXPIRE))) {
            *dbp = d;
            return n;
        }
    }
    return NULL; /* only ghosts: keys deleted or changed since they were sampled */
}

/* A victim under an LRU/LFU/TTL policy. Returns NULL with *none set when
 * no database has a candidate, NULL with *none clear when out of time. */
static dnode *pick_by_pool(int policy, db **dbp, int64_t deadline_us, int *none) {
    if (!pool_ready) {
        evpool_init(&pool);
        pool_ready = 1;
    }
    for (;;) {
        size_t total = 0;
        for (int i = 0; i < db_count(); i++) {
            db *d = db_get(i);
            size_t n = candidates(d, policy);
            if (n) pool_populate(d, policy);
            total += n;
        }
        if (!total) {
            *none = 1;
            return NULL;
        }
        dnode *n = pool_take_best(policy, dbp);
        if (n) return n;
        if (ev_mono_us() > deadline_us) return NULL;
    }
}

/* A victim under allkeys-random / volatile-random: a random key of the next
 * database that has candidates (rotating across calls, as Redis). */
static dnode *pick_random(int policy, db **dbp, int64_t deadline_us, int *none) {
    static unsigned next_db;
    for (;;) {
        int any = 0;
        for (int i = 0; i < db_count(); i++) {
            db *d = db_get((int)(++next_db % (unsigned)db_count()));
            if (!candidates(d, policy)) continue;
            any = 1;
            dnode *n = policy_is_volatile(policy) ? db_random_volatile(d) : dict_random(&d->keys);
            if (n) {
                *dbp = d;
                return n;
            }
        }
        if (!any) {
            *none = 1;
            return NULL;
        }
        if (ev_mono_us() > deadline_us) return NULL;
    }
}

static void evict_node(db *d, dnode *n) {
    db_key_gone(d, dn_key(n), dn_klen(n));
    dnode *u = db_unlink_node(d, dn_key(n), dn_klen(n));
    signal_deleted_key(d, dn_key(u), dn_klen(u));
    srv.stats.evictedkeys++;
    db_event(d, DB_EV_EVICTED, dn_key(u), dn_klen(u));
    lazyfree_free_node(u, LAZY_EVICTION);
}

/* ---- the eviction run ------------------------------------------------------ */

/* Microseconds one run may take (Redis's curve: 50us per point up to 10,
 * then +15% per point; 100 = unlimited). */
static int64_t time_limit_us(void) {
    int t = srv.cfg.maxmemory_eviction_tenacity;
    if (t <= 10) return 50 * (int64_t)t;
    if (t < 100) return (int64_t)(500.0 * pow(1.15, t - 10.0));
    return INT64_MAX / 2;
}

static int timer_pending;

static long eviction_timer(evloop *el, long long id, void *data) {
    (void)el, (void)id, (void)data;
    if (evict_perform() == EVICT_RUNNING) return 0; /* go on at the next loop iteration */
    timer_pending = 0;
    return -1;
}

static void start_eviction_timer(void) {
    if (timer_pending || !srv.el) return;
    timer_pending = 1;
    ev_timer_add(srv.el, 0, eviction_timer, NULL);
}

/* Time spent over the limit (INFO stats), as Redis: from the first run
 * that could not get under the limit to the first run that did. */
static void note_result(int result) {
    server_stats *s = &srv.stats;
    if (result != EVICT_OK) {
        if (!s->eviction_exceeded_since_us) s->eviction_exceeded_since_us = ev_mono_us();
    } else if (s->eviction_exceeded_since_us) {
        s->eviction_exceeded_us += (uint64_t)(ev_mono_us() - s->eviction_exceeded_since_us);
        s->eviction_exceeded_since_us = 0;
    }
}

size_t (*evict_not_counted)(void);

size_t evict_counted_memory(void) {
    size_t used = zmalloc_used(), off = evict_not_counted ? evict_not_counted() : 0;
    return used > off ? used - off : 0;
}

int evict_perform(void) {
    unsigned long long max = srv.cfg.maxmemory;
    if (!max || evict_counted_memory() <= max || srv.client_pause) { /* CLIENT PAUSE: nothing is evicted */
        if (srv.stats.eviction_exceeded_since_us) note_result(EVICT_OK);
        return EVICT_OK;
    }
    int policy = srv.cfg.maxmemory_policy, result = EVICT_FAIL;
    if (policy == MAXMEMORY_NO_EVICTION) goto done;
    int64_t start = ev_mono_us(), deadline = start + time_limit_us();
    unsigned long freed = 0;
    while (evict_counted_memory() > max) {
        db *d = NULL;
        int none = 0;
        dnode *n = policy_is_random(policy) ? pick_random(policy, &d, deadline, &none)
                                            : pick_by_pool(policy, &d, deadline, &none);
        if (!n) {
            if (none) goto done; /* nothing left to evict */
            result = EVICT_RUNNING;
            start_eviction_timer();
            goto done;
        }
        evict_node(d, n);
        if (++freed % 16 == 0 && ev_mono_us() > deadline) {
            result = EVICT_RUNNING;
            start_eviction_timer();
            goto done;
        }
    }
    result = EVICT_OK;
done:
    note_result(result);
    return result;
}

/* ---- hooks ------------------------------------------------------------------ */

static int queued_denyoom(const client *c) {
    for (int i = 0; i < c->mcount; i++)
        if (c->mstate[i].cmd->flags & CMD_DENYOOM) return 1;
    return 0;
}

int evict_refuses_command(client *c, const command *cmd) {
    if (evict_perform() != EVICT_FAIL) return 0;
    if (cmd->flags & CMD_DENYOOM) return 1;
    if (cmd->props & PROP_EXEC) return queued_denyoom(c);
    /* queueing in MULTI takes memory too; DISCARD, QUIT and RESET give it back */
    return (c->flags & CF_MULTI) && !(cmd->props & PROP_TX_RELEASE);
}

void evict_maxmemory_changed(void) {
    size_t used = zmalloc_used();
    if (!srv.cfg.maxmemory) return;
    if (srv.cfg.maxmemory < used)
        server_log(LOG_WARNING_, "WARNING: the new maxmemory value set via CONFIG SET (%llu) is smaller than the "
                                 "current memory usage (%zu). This will result in key eviction and/or the inability "
                                 "to accept new write commands depending on the maxmemory-policy.",
                   srv.cfg.maxmemory, used);
    start_eviction_timer(); /* as Redis 7.0: from the event loop, not inside CONFIG SET */
}

static uint64_t exceeded_current_us(void) {
    int64_t since = srv.stats.eviction_exceeded_since_us;
    return since ? (uint64_t)(ev_mono_us() - since) : 0;
}

uint64_t evict_exceeded_current_ms(void) { return exceeded_current_us() / 1000; }
uint64_t evict_exceeded_total_ms(void) { return (srv.stats.eviction_exceeded_us + exceeded_current_us()) / 1000; }

/* Growing a hash table allocates its new bucket array at once (8 bytes per
 * bucket: 8 MB for a 1M-bucket table), which could push used memory far
 * past maxmemory before eviction runs. As Redis does, growth is postponed
 * while it would cross the limit, unless the table is overloaded (load
 * factor 5, Redis's dict_force_resize_ratio). */
int evict_expand_veto(size_t new_table_bytes, size_t load) {
    if (!srv.cfg.maxmemory || load >= 5) return 0;
    return zmalloc_used() + new_table_bytes > srv.cfg.maxmemory;
}
