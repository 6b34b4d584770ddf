/* evict.h - maxmemory: evicting keys under the eight maxmemory policies,
 * refusing commands that would grow memory when nothing can be evicted (the
 * OOM error), and the per-key access stamps the policies rank keys by.
 *
 * Stamps live in the key's dnode: under an LRU (or non-LFU) policy `lru` is
 * the access time in seconds (srv.lruclock); under an LFU policy `lru` is the
 * time of the last access in minutes and `lfu` Redis's logarithmic 8-bit
 * access counter, which loses one point per lfu-decay-time minutes idle.
 * Switching policy at run time reinterprets the stamps, as in Redis ("will
 * take some time to adjust").
 *
 * Eviction is Redis's: before each command, while used memory (our allocator
 * count) is above maxmemory, sample maxmemory-samples keys per database into
 * a pool of the 16 best candidates and evict the best, until under the limit
 * or out of time (maxmemory-eviction-tenacity); a timer continues the work.
 */
#ifndef FERRY_EVICT_H
#define FERRY_EVICT_H

#include <stddef.h>
#include <stdint.h>
#include "dict.h"
#include "server.h"

struct client;
struct command;

/* maxmemory-policy values (ferry_config.maxmemory_policy); config.c maps
 * them to names in this order */
enum {
    MAXMEMORY_NO_EVICTION = 0,
    MAXMEMORY_ALLKEYS_LRU = 1,
    MAXMEMORY_ALLKEYS_LFU = 2,
    MAXMEMORY_ALLKEYS_RANDOM = 3,
    MAXMEMORY_VOLATILE_LRU = 4,
    MAXMEMORY_VOLATILE_LFU = 5,
    MAXMEMORY_VOLATILE_RANDOM = 6,
    MAXMEMORY_VOLATILE_TTL = 7,
};

/* evict_perform() results, as Redis's performEvictions */
enum { EVICT_OK = 0, EVICT_RUNNING = 1, EVICT_FAIL = 2 };

#define LFU_INIT_VAL 5      /* counter of a new key, so it is not evicted at once */
#define EVPOOL_SIZE 16      /* candidates kept between eviction runs */

/* Bit p set: policy p is allkeys-lfu or volatile-lfu. */
#define EVICT_LFU_POLICIES ((1u << MAXMEMORY_ALLKEYS_LFU) | (1u << MAXMEMORY_VOLATILE_LFU))
static inline int evict_policy_is_lfu(int policy) { return (EVICT_LFU_POLICIES >> (policy & 31)) & 1; }
static inline int evict_lfu_active(void) { return evict_policy_is_lfu(srv.cfg.maxmemory_policy); }
/* Policy p ranks keys by their access stamps (the four -lru and -lfu policies). */
#define EVICT_LRU_LFU_POLICIES                                                                                      \
    ((1u << MAXMEMORY_ALLKEYS_LRU) | (1u << MAXMEMORY_VOLATILE_LRU) | EVICT_LFU_POLICIES)
static inline int evict_policy_is_lru_or_lfu(int policy) { return (EVICT_LRU_LFU_POLICIES >> (policy & 31)) & 1; }

/* ---- access stamps -------------------------------------------------------- */

/* The node's 24-bit `lru` field, as Redis: under LRU (and non-LFU) policies
 * the access clock in seconds modulo 2^24 (194 days; differences are taken
 * modulo 2^24), under LFU policies 16 bits of minutes (modulo 2^16) and an
 * 8-bit logarithmic counter. */
#define LRU_CLOCK_MASK 0xFFFFFFu
static inline uint32_t evict_lru_clock(void) { return srv.lruclock & LRU_CLOCK_MASK; }
/* Seconds since n's LRU stamp. */
static inline uint32_t evict_lru_idle(const dnode *n) { return (evict_lru_clock() - n->lru) & LRU_CLOCK_MASK; }
/* LFU clock: minutes modulo 2^16. */
static inline uint32_t evict_lfu_minutes(void) { return (srv.lruclock / 60) & 0xFFFFu; }
static inline unsigned dn_lfu_counter(const dnode *n) { return n->lru & 0xFFu; }
static inline unsigned dn_lfu_ldt(const dnode *n) { return n->lru >> 8; }
static inline void dn_lfu_set(dnode *n, unsigned ldt, unsigned counter) {
    n->lru = ((ldt & 0xFFFFu) << 8) | (counter & 0xFFu);
}
/* Decay (by minutes idle since the stamp), log-increment and re-stamp. */
void evict_lfu_access(dnode *n);
/* The node's LFU counter after decay (OBJECT FREQ); does not modify it. */
unsigned evict_lfu_get(const dnode *n);

/* A key was accessed (lookup without NO-TOUCH). */
static inline void evict_touch(dnode *n) {
    if (evict_lfu_active()) evict_lfu_access(n);
    else n->lru = evict_lru_clock();
}
/* Stamps of a newly created value. */
static inline void evict_stamp_new(dnode *n) {
    if (evict_lfu_active()) dn_lfu_set(n, evict_lfu_minutes(), LFU_INIT_VAL);
    else n->lru = evict_lru_clock();
}
/* Stamps of value n replacing old under the same key (n may be old itself,
 * overwritten in place): under LFU the key keeps its counter, as Redis's
 * dbOverwrite does (the caller's write lookup already counted the access),
 * unless old had expired (then n is a new key); otherwise a fresh stamp. */
static inline void evict_stamp_replace(dnode *n, const dnode *old, int old_expired) {
    if (__builtin_expect(evict_lfu_active(), 0)) {
        if (old_expired) dn_lfu_set(n, evict_lfu_minutes(), LFU_INIT_VAL);
        else n->lru = old->lru;
    } else {
        n->lru = evict_lru_clock();
    }
}

/* Pure LFU arithmetic (exposed for unit tests). log_incr: one access seen
 * with the uniform random number r in [0,1): the counter grows with
 * probability 1/((counter - LFU_INIT_VAL) * log_factor + 1), saturating at
 * 255. decay: the counter less one per decay_time minutes between the stamp
 * ldt and now, both minutes modulo 2^16 (0 = no decay). */
uint8_t evict_lfu_log_incr(uint8_t counter, int log_factor, double r);
unsigned evict_lfu_decay(unsigned counter, uint32_t ldt, uint32_t now_min, int decay_time);

/* ---- the eviction pool (exposed for unit tests) ------------------------- */

#define EVPOOL_KEY_CACHE 64    /* keys up to this long are copied into a slot buffer */
typedef struct evpool_entry {
    uint64_t idle;              /* rank: larger = evict first */
    char *key;                  /* NULL: free slot; else `cache` or a zmalloc'd copy */
    char *cache;                /* this entry's EVPOOL_KEY_CACHE-byte buffer: moves with it */
    uint32_t klen;
    int dbid;
} evpool_entry;

/* Entries sorted by idle ascending, used ones first: the best candidate is
 * the rightmost used entry. Entries are small so that inserting in the
 * middle moves little; key bytes stay in the buffers. */
typedef struct evpool {
    evpool_entry e[EVPOOL_SIZE];
    char caches[EVPOOL_SIZE][EVPOOL_KEY_CACHE];
} evpool;

void evpool_init(evpool *p);
/* Inserts a candidate in order; when full, drops the least idle entry, or
 * the candidate itself if it is the least idle. Returns its slot or -1. */
int evpool_insert(evpool *p, uint64_t idle, int dbid, const char *key, size_t klen);
void evpool_clear_entry(evpool_entry *e);
void evpool_clear(evpool *p);

/* ---- maxmemory ----------------------------------------------------------- */

/* Evicts keys while used memory is above maxmemory. EVICT_OK: under the
 * limit (or no limit); EVICT_RUNNING: out of time for now, a timer goes on;
 * EVICT_FAIL: over the limit with nothing evictable. */
int evict_perform(void);
/* Memory maxmemory does not count (set by the replication layer: the
 * shared replication buffer beyond the backlog's size, as Redis's
 * freeMemoryGetNotCountedMemory), NULL for none. */
extern size_t (*evict_not_counted)(void);
size_t evict_counted_memory(void);
/* The dispatcher's check before running (or queueing) cmd when maxmemory is
 * set: evicts, then returns 1 if the command must be refused with the OOM
 * error (as Redis 7.0: DENYOOM commands, EXEC of a transaction holding one,
 * and anything but EXEC/DISCARD/QUIT/RESET inside MULTI). */
int evict_refuses_command(struct client *c, const struct command *cmd);
/* CONFIG SET maxmemory: warn if below usage and start evicting right away,
 * from a timer (the next event-loop iteration), without waiting for a
 * command; like Redis, commands queued in the same EXEC still see the keys. */
void evict_maxmemory_changed(void);
/* INFO stats: total_eviction_exceeded_time / current_eviction_exceeded_time (ms). */
uint64_t evict_exceeded_total_ms(void);
uint64_t evict_exceeded_current_ms(void);

/* The keyspace's dict_expand_veto (registered by registry.c): 1 while
 * growing a table by new_table_bytes would cross maxmemory, unless the
 * table is overloaded (load factor 5). */
int evict_expand_veto(size_t new_table_bytes, size_t load);

#endif
