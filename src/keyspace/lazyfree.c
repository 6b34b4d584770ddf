/* lazyfree.c - freeing big values on a helper thread (see lazyfree.h).
 *
 * Why: freeing a set of ten million members is ten million free() calls;
 * done on the event loop it stalls every client for seconds. Here the
 * value (or a flushed database's whole key table) is detached from the
 * keyspace at once, by the caller, and only its memory is given back later,
 * by one thread that takes jobs from a queue, oldest first.
 *
 * What makes it safe: a detached value is reachable from nothing else (the
 * keyspace keeps no other pointer to it; blocked keys, WATCH, tracking and
 * the eviction pool hold copies of key names, never nodes or values); the
 * thread calls the types' own destructors (db_free_value), which only use
 * zmalloc/zfree and dn_free; zmalloc.c keeps a per-thread byte count that
 * the thread publishes after each job, and dnode.c keeps the thread's slab
 * frees apart until the event loop collects them (lazyfree_cron).
 *
 * The thread is started by the first job and lives as long as the process.
 */
#include "lazyfree.h"
#include "db.h"
#include "server.h"
#include "t_hash.h"
#include "t_list.h"
#include "t_set.h"
#include "t_stream.h"
#include "t_zset.h"
#include "zmalloc.h"
#include <pthread.h>
#include <stdatomic.h>

typedef struct job {
    struct job *next;
    int type;                   /* a value's type, or -1: a whole key table */
    void *ptr;                  /* the value, or the dict */
    size_t objects;             /* what it counts in lazyfree_pending_objects */
} job;

static struct {
    pthread_mutex_t mu;
    pthread_cond_t cv;
    job *head, *tail;
    int started;
} q = {.mu = PTHREAD_MUTEX_INITIALIZER, .cv = PTHREAD_COND_INITIALIZER};

static _Atomic size_t pending;              /* queued objects not freed yet */
static _Atomic unsigned long long freed;    /* objects the thread freed */

size_t lazyfree_pending(void) { return atomic_load_explicit(&pending, memory_order_relaxed); }
unsigned long long lazyfree_freed(void) { return atomic_load_explicit(&freed, memory_order_relaxed); }
void lazyfree_reset_stats(void) { atomic_store_explicit(&freed, 0, memory_order_relaxed); }

/* ---- the cost estimate --------------------------------------------------------- */

static size_t stream_effort(const stream *s) {
    size_t e = stream_block_count(s);
    if (s->ngroups) e += s->ngroups * (1 + s->groups[0]->pel.len); /* the first group's PEL stands for all */
    return e;
}

size_t lazyfree_effort(const dnode *n) {
    void *p = n->type == OBJ_STRING ? NULL : dn_ptr(n);
    switch (n->type) {
    case OBJ_LIST: return tl_chunks(p);
    case OBJ_SET: return fset_encoding(p) == ENC_HT ? fset_size(p) : 1;
    case OBJ_ZSET: return zset_enc(p) == ENC_SKIPLIST ? zset_len(p) : 1;
    case OBJ_HASH: return ((const hashobj *)p)->enc == ENC_HT ? hash_len(p) : 1;
    case OBJ_STREAM: return stream_effort(p);
    default: return 1;
    }
}

/* ---- the thread ------------------------------------------------------------------ */

static void free_key_node(dnode *n) { db_free_node(n); }

static void run_job(job *j) {
    if (j->type < 0) {
        dict *d = j->ptr;
        dict_clear(d, free_key_node);
        zfree(d);
    } else {
        db_free_value(j->type, j->ptr);
    }
}

static void *thread_main(void *arg) {
    (void)arg;
    dn_remote_thread();
    for (;;) {
        pthread_mutex_lock(&q.mu);
        while (!q.head) pthread_cond_wait(&q.cv, &q.mu);
        job *j = q.head;
        q.head = j->next;
        if (!q.head) q.tail = NULL;
        pthread_mutex_unlock(&q.mu);
        run_job(j);
        size_t n = j->objects;
        zfree(j);
        dn_remote_flush();
        zmalloc_publish(); /* before the counters: a test that sees pending 0 sees the memory back */
        atomic_fetch_add_explicit(&freed, n, memory_order_relaxed);
        atomic_fetch_sub_explicit(&pending, n, memory_order_release);
    }
    return NULL;
}

/* Queue a job; if the thread cannot be started, free it here. */
static void enqueue(int type, void *ptr, size_t objects) {
    job *j = zmalloc(sizeof *j);
    *j = (job){NULL, type, ptr, objects};
    atomic_fetch_add_explicit(&pending, objects, memory_order_relaxed);
    pthread_mutex_lock(&q.mu);
    if (!q.started) {
        pthread_t t;
        q.started = pthread_create(&t, NULL, thread_main, NULL) == 0 ? 1 : -1;
        if (q.started == 1) pthread_detach(t);
    }
    if (q.started < 0) {
        pthread_mutex_unlock(&q.mu);
        run_job(j);
        zfree(j);
        atomic_fetch_sub_explicit(&pending, objects, memory_order_relaxed);
        atomic_fetch_add_explicit(&freed, objects, memory_order_relaxed);
        return;
    }
    if (q.tail) q.tail->next = j;
    else q.head = j;
    q.tail = j;
    pthread_cond_signal(&q.cv);
    pthread_mutex_unlock(&q.mu);
}

/* ---- the callers' side --------------------------------------------------------------- */

static int allowed(int why) {
    switch (why) {
    case LAZY_ALWAYS: return 1;
    case LAZY_USER_DEL: return srv.cfg.lazyfree_lazy_user_del;
    case LAZY_SERVER_DEL: return srv.cfg.lazyfree_lazy_server_del;
    case LAZY_EXPIRE: return srv.cfg.lazyfree_lazy_expire;
    case LAZY_EVICTION: return srv.cfg.lazyfree_lazy_eviction;
    default: return 0;
    }
}

void lazyfree_free_node(dnode *n, int why) {
    /* the setting first: the estimate reads the value (a type's internals) */
    if (why != LAZY_NEVER && n->type != OBJ_STRING && allowed(why) && lazyfree_effort(n) > LAZYFREE_THRESHOLD) {
        enqueue(n->type, dn_ptr(n), 1);
        dn_free(n);
        return;
    }
    db_free_node(n);
}

void lazyfree_free_dict(dict *d) {
    size_t n = dict_size(d);
    if (n == 0) {
        dict_clear(d, free_key_node);
        zfree(d);
        return;
    }
    if (dn_unpin_all_hook) dn_unpin_all_hook(); /* no reply may point into what the thread frees */
    enqueue(-1, d, n);
}

int lazyfree_user_flush_default(void) { return srv.cfg.lazyfree_lazy_user_flush; }

void lazyfree_cron(void) { dn_remote_collect(); }
