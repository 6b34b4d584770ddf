/* blocking.c - clients blocked on keys (see blocking.h), for every blocking
 * command: the lists' BLPOP family and the sorted sets' BZPOPMIN family.
 * Nothing here knows what a list is: a blocked client is re-run.
 *
 * Why re-running: a blocking command that finds nothing to pop keeps a copy
 * of its arguments; when a key it waits on is signalled, the command simply
 * runs again and either replies (served) or calls block_for_keys() again
 * (still nothing: it keeps its place in the queues and its deadline). So each
 * command's serving logic is its ordinary code path, and the state after a
 * transaction or a chain of moves is whatever the commands see.
 *
 * Structures:
 *  - one queue (bkey) per (db id, key) that someone waits on, in a dict keyed
 *    by "<db id: 4 bytes><key>"; a queue holds the waiters (bwait: one per
 *    client and key) oldest first, which gives FIFO fairness;
 *  - a list of queues signalled ready since the last blocking_handle_ready();
 *  - a min-heap of the blocked clients that have a deadline, served by a
 *    timer armed for the earliest one (millisecond precision) and by the
 *    cron's call to blocking_handle_timeouts() as a backstop;
 *  - a list of clients unblocked since the last blocking_before_sleep(),
 *    whose pipelined input is processed there, outside any other client's
 *    command (a blocked client stops executing input: client.c keeps its
 *    unparsed bytes in its own query buffer).
 *
 * A queue is freed when its last waiter leaves, unless it sits in the ready
 * list or is being served (then whoever processes it frees it).
 */
#include "blocking.h"
#include "command.h"
#include "db.h"
#include "dict.h"
#include "pause.h"
#include "propagate.h"
#include "reply.h"
#include "server.h"
#include "tracking.h"
#include "util.h"
#include "zmalloc.h"
#include <limits.h>
#include <math.h>
#include <string.h>

typedef struct bkey bkey;

typedef struct bwait {
    bkey *k;
    client *c;
    struct bwait *prev, *next;
} bwait;

struct bkey {
    bwait *first, *last;
    bkey *next_ready;
    dnode *node;                /* its node in `queues` (key = db id + key) */
    int dbid;
    uint8_t ready, serving;
};

typedef struct block_state {
    command *cmd;
    int argc;
    span *argv;                 /* owned copies of the command's arguments */
    int nwaits;
    bwait *waits;               /* one per distinct key */
    int64_t deadline;           /* unix ms, 0 = forever */
    size_t heap_idx;            /* position in the deadline heap, if deadline */
    int null_kind;
    int reblocked;              /* set by block_for_keys during a re-run */
    block_done_fn *done;        /* block_custom: its owner replies on timeout and forgets on disconnect */
} block_state;

int blocking_ready_pending;

static dict queues;
static int queues_ready;
static bkey *ready_head, *ready_tail;
static client **heap;           /* blocked clients with a deadline, earliest first */
static size_t heap_n, heap_cap;
static client **resume;         /* unblocked clients whose input must go on */
static size_t resume_n, resume_cap;
static struct {
    client *c;
    bkey *k;
} rerun;                        /* the re-run in progress */
static long long timer_id = -1; /* the armed deadline timer */
static int64_t timer_when;

#define UNBLOCKED_ERR "UNBLOCKED client unblocked via CLIENT UNBLOCK"

/* ---- timeout argument -------------------------------------------------------- */

int blocking_parse_timeout(client *c, span arg, int64_t *deadline_ms) {
    long double secs;
    if (!str_to_ld(arg.p, arg.len, &secs)) {
        reply_error(c, "ERR timeout is not a float or out of range");
        return 0;
    }
    /* Redis 7.0 rounds seconds * 1000 up (ceill) and casts it to long long;
     * on x86-64 a value out of range (or infinite) becomes LLONG_MIN, hence
     * "negative". -0.0001 rounds up to 0: forever; 0.0001 to 1 ms. */
    long double ms = ceill(secs * 1000.0L);
    long long t = (ms >= -9223372036854775808.0L && ms < 9223372036854775808.0L) ? (long long)ms : LLONG_MIN;
    if (t < 0) {
        reply_error(c, "ERR timeout is negative");
        return 0;
    }
    /* Redis 7.0 adds the current time without an overflow check; a deadline
     * that wraps is never reached: the client waits forever. */
    if (t > 0) t = t > LLONG_MAX - srv.now_ms ? 0 : t + srv.now_ms;
    *deadline_ms = t;
    return 1;
}

int blocking_allowed(const client *c) { return !(c->flags & (CF_EXECUTING_EXEC | CF_SCRIPT)); }

size_t blocking_count(void) { return srv.blocked_clients; }

size_t blocking_timeout_count(void) { return heap_n; }

int blocking_serving_key(const client *c, span *key) {
    if (rerun.c != c || !rerun.k) return 0;
    key->p = dn_key(rerun.k->node) + 4;
    key->len = dn_klen(rerun.k->node) - 4;
    return 1;
}

/* ---- queues ---------------------------------------------------------------------- */

static size_t qkey_build(char *buf, int dbid, const char *key, size_t klen) {
    memcpy(buf, &dbid, 4);
    memcpy(buf + 4, key, klen);
    return klen + 4;
}

static bkey *node_bkey(const dnode *n) {
    bkey *k;
    memcpy(&k, dn_val(n), sizeof k);
    return k;
}

static bkey *queue_find(int dbid, const char *key, size_t klen) {
    if (!queues_ready) return NULL;
    char small[260];
    char *buf = klen + 4 <= sizeof small ? small : zmalloc(klen + 4);
    size_t n = qkey_build(buf, dbid, key, klen);
    dnode *node = dict_find(&queues, buf, n);
    if (buf != small) zfree(buf);
    return node ? node_bkey(node) : NULL;
}

static bkey *queue_get(int dbid, const char *key, size_t klen) {
    bkey *k = queue_find(dbid, key, klen);
    if (k) return k;
    if (!queues_ready) {
        dict_init(&queues);
        queues_ready = 1;
    }
    k = zcalloc(sizeof *k);
    k->dbid = dbid;
    dnode *n = dn_new((uint32_t)klen + 4, sizeof(void *), 0);
    qkey_build(dn_key(n), dbid, key, klen);
    memcpy(dn_val(n), &k, sizeof k);
    dict_add(&queues, n);
    k->node = n;
    return k;
}

static void queue_free(bkey *k) {
    dn_free(dict_unlink(&queues, dn_key(k->node), dn_klen(k->node)));
    zfree(k);
}

static void queue_maybe_free(bkey *k) {
    if (!k->first && !k->ready && !k->serving) queue_free(k);
}

static void wait_append(bkey *k, bwait *w) {
    w->k = k;
    w->next = NULL;
    w->prev = k->last;
    if (k->last) k->last->next = w;
    else k->first = w;
    k->last = w;
}

static void wait_remove(bwait *w) {
    bkey *k = w->k;
    if (w->prev) w->prev->next = w->next;
    else k->first = w->next;
    if (w->next) w->next->prev = w->prev;
    else k->last = w->prev;
    queue_maybe_free(k);
}

static void mark_ready(bkey *k) {
    if (k->ready) return;
    k->ready = 1;
    k->next_ready = NULL;
    if (ready_tail) ready_tail->next_ready = k;
    else ready_head = k;
    ready_tail = k;
    blocking_ready_pending = 1;
}

void signal_key_ready(db *d, const char *key, size_t klen) {
    if (srv.blocked_clients == 0) return;
    bkey *k = queue_find(d->id, key, klen);
    if (k && k->first) mark_ready(k);
}

typedef struct signal_ctx {
    db *d;
} signal_ctx;

static void signal_waited(void *ud, dnode *n) {
    signal_ctx *x = ud;
    bkey *k = node_bkey(n);
    if ((x->d && k->dbid != x->d->id) || !k->first) return;
    mark_ready(k);
}

void blocking_signal_db(db *d) {
    if (srv.blocked_clients == 0 || !queues_ready) return;
    signal_ctx x = {d};
    dict_foreach(&queues, signal_waited, &x);
}

/* ---- deadline heap ------------------------------------------------------------------ */

static int64_t deadline_of(size_t i) { return heap[i]->bstate->deadline; }

static void heap_place(size_t i, client *c) {
    heap[i] = c;
    c->bstate->heap_idx = i;
}

static void heap_up(size_t i) {
    client *c = heap[i];
    while (i > 0) {
        size_t p = (i - 1) / 2;
        if (deadline_of(p) <= c->bstate->deadline) break;
        heap_place(i, heap[p]);
        i = p;
    }
    heap_place(i, c);
}

static void heap_down(size_t i) {
    client *c = heap[i];
    for (;;) {
        size_t l = 2 * i + 1, m = i;
        int64_t best = c->bstate->deadline;
        if (l < heap_n && deadline_of(l) < best) {
            m = l;
            best = deadline_of(l);
        }
        if (l + 1 < heap_n && deadline_of(l + 1) < best) m = l + 1;
        if (m == i) break;
        heap_place(i, heap[m]);
        i = m;
    }
    heap_place(i, c);
}

static void heap_push(client *c) {
    if (heap_n == heap_cap) {
        heap_cap = heap_cap ? heap_cap * 2 : 16;
        heap = zrealloc(heap, heap_cap * sizeof *heap);
    }
    heap[heap_n] = c;
    heap_up(heap_n++);
}

static void heap_remove(client *c) {
    size_t i = c->bstate->heap_idx;
    client *last = heap[--heap_n];
    if (i == heap_n) return;
    heap_place(i, last);
    heap_up(i);
    heap_down(last->bstate->heap_idx);
}

static long deadline_timer(evloop *el, long long id, void *data);

/* Make sure a timer fires at the earliest deadline. A timer that is no
 * longer the armed one deletes itself when it fires. */
static void arm_timer(void) {
    if (heap_n == 0 || !srv.el) return;
    int64_t when = deadline_of(0);
    if (timer_id != -1 && timer_when <= when) return;
    int64_t now = ev_now_ms();
    timer_when = when;
    timer_id = ev_timer_add(srv.el, when > now ? (long)(when - now) : 0, deadline_timer, NULL);
}

static long deadline_timer(evloop *el, long long id, void *data) {
    if (id != timer_id) return -1;
    timer_id = -1;
    srv.now_ms = ev_now_ms();
    blocking_handle_timeouts(srv.now_ms);
    if (heap_n == 0) return -1;
    int64_t when = deadline_of(0), now = ev_now_ms();
    timer_id = id;
    timer_when = when;
    return when > now ? (long)(when - now) : 1;
}

/* ---- blocking and unblocking ----------------------------------------------------------- */

void block_for_keys(client *c, const span *keys, int nkeys, int64_t deadline_ms, int null_kind) {
    if (c->bstate) { /* a re-run that found nothing: keep place and deadline */
        c->bstate->reblocked = 1;
        return;
    }
    block_state *b = zcalloc(sizeof *b);
    b->cmd = c->cmd;
    b->argc = c->argc;
    b->argv = zmalloc(sizeof(span) * (size_t)c->argc);
    for (int i = 0; i < c->argc; i++) {
        b->argv[i].p = zstrndup(c->argv[i].p, c->argv[i].len);
        b->argv[i].len = c->argv[i].len;
    }
    b->deadline = deadline_ms;
    b->null_kind = null_kind;
    b->waits = zmalloc(sizeof(bwait) * (size_t)(nkeys > 0 ? nkeys : 1));
    for (int i = 0; i < nkeys; i++) {
        bkey *k = queue_get(c->db->id, keys[i].p, keys[i].len);
        int dup = 0;
        for (int j = 0; j < b->nwaits; j++) dup |= b->waits[j].k == k;
        if (dup) continue; /* BLPOP k k: one place in the queue */
        bwait *w = &b->waits[b->nwaits++];
        w->c = c;
        wait_append(k, w);
    }
    c->bstate = b;
    c->flags |= CF_BLOCKED;
    srv.blocked_clients++;
    if (deadline_ms) {
        heap_push(c);
        arm_timer();
    }
}

void block_custom(client *c, int64_t deadline_ms, block_done_fn *done) {
    block_for_keys(c, NULL, 0, deadline_ms, BLOCK_NULL_BULK);
    c->bstate->done = done;
}

static void resume_add(client *c) {
    if (resume_n == resume_cap) {
        resume_cap = resume_cap ? resume_cap * 2 : 16;
        resume = zrealloc(resume, resume_cap * sizeof *resume);
    }
    resume[resume_n++] = c;
}

void blocking_resume(client *c) { resume_add(c); }

static void resume_forget(client *c) {
    for (size_t i = 0; i < resume_n; i++)
        if (resume[i] == c) resume[i] = NULL;
}

/* Leave the blocked state: out of every queue, the heap, the count. */
static void release(client *c) {
    block_state *b = c->bstate;
    for (int i = 0; i < b->nwaits; i++) wait_remove(&b->waits[i]);
    if (b->deadline) heap_remove(c);
    for (int i = 0; i < b->argc; i++) zfree((void *)b->argv[i].p);
    zfree(b->argv);
    zfree(b->waits);
    zfree(b);
    c->bstate = NULL;
    c->flags &= ~CF_BLOCKED;
    srv.blocked_clients--;
}

void unblock_client(client *c, int why) {
    if (why == UNBLOCK_DISCONNECT) resume_forget(c);
    if (c->flags & CF_PAUSED) { /* held by CLIENT PAUSE: only leaving lets it go */
        if (why == UNBLOCK_DISCONNECT) pause_forget(c);
        return;
    }
    if (!(c->flags & CF_BLOCKED)) return;
    if (c->bstate->done) {
        c->bstate->done(c, why);
    } else if (why == UNBLOCK_TIMEOUT) {
        if (c->bstate->null_kind == BLOCK_NULL_BULK) reply_null(c);
        else reply_null_array(c);
    } else if (why == UNBLOCK_ERROR) {
        reply_error(c, UNBLOCKED_ERR);
        if (c->bstate->cmd) c->bstate->cmd->failed_calls++; /* the blocked command failed (Redis counts it) */
    }
    release(c);
    if (why != UNBLOCK_DISCONNECT) resume_add(c);
}

void blocking_unblock_all(const char *err) {
    for (client *c = srv.clients; c; c = c->next) {
        if (!(c->flags & CF_BLOCKED) || (c->flags & CF_PAUSED) || c->bstate->done) continue;
        reply_error(c, err);
        if (c->bstate->cmd) c->bstate->cmd->failed_calls++;
        release(c);
        resume_add(c);
    }
}

void blocking_served(client *c) {
    if (!(c->flags & CF_BLOCKED) || (c->flags & CF_PAUSED)) return;
    release(c);
    resume_add(c);
}

void blocking_handle_timeouts(int64_t now_ms) {
    while (heap_n > 0 && deadline_of(0) <= now_ms) unblock_client(heap[0], UNBLOCK_TIMEOUT);
}

/* ---- serving ------------------------------------------------------------------------------ */

/* Run c's blocked command again for ready key k. 1 if it was served. */
static int rerun_client(client *c, bkey *k) {
    block_state *b = c->bstate;
    int argc = c->argc;
    span *argv = c->argv;
    command *cmd = c->cmd;
    client *cur = srv.current_client;
    c->argc = b->argc;
    c->argv = b->argv;
    c->cmd = b->cmd;
    srv.current_client = c;
    rerun.c = c;
    rerun.k = k;
    b->reblocked = 0;
    prop_frame pf;
    prop_enter(&pf);
    client *outer = srv.executing_client;
    srv.executing_client = c;
    uint64_t errs = srv.stats.total_error_replies;
    b->cmd->proc(c);
    if (srv.stats.total_error_replies != errs) b->cmd->failed_calls++; /* as Redis's updateStatsOnUnblock */
    srv.executing_client = outer;
    prop_leave(&pf, c, b->cmd);
    tracking_flush_pending(); /* what its own command invalidated: after its reply */
    rerun.c = NULL;
    rerun.k = NULL;
    srv.current_client = cur;
    c->argc = argc;
    c->argv = argv;
    c->cmd = cmd;
    if (b->reblocked) return 0;
    release(c);
    resume_add(c);
    return 1;
}

/* Serve k's waiters, oldest first: all of them while the key exists;
 * once it is gone, those whose command must hear of it (XREADGROUP). */
static void serve_key(bkey *k) {
    db *d = db_get(k->dbid);
    const char *key = dn_key(k->node) + 4;
    size_t klen = dn_klen(k->node) - 4;
    k->serving = 1;
    bwait *w = k->first;
    while (w && d) {
        bwait *next = w->next; /* a re-run only ever removes its own client's waits */
        if (db_lookup(d, key, klen) || (w->c->bstate->cmd->props & PROP_WAKE_ON_DELETE)) rerun_client(w->c, k);
        w = next;
    }
    k->serving = 0;
}

void blocking_handle_ready(void) {
    while (ready_head) {
        bkey *k = ready_head;
        ready_head = k->next_ready;
        if (!ready_head) ready_tail = NULL;
        k->ready = 0;
        serve_key(k);
        queue_maybe_free(k);
    }
    blocking_ready_pending = 0;
}

void blocking_before_sleep(void) {
    for (size_t i = 0; i < resume_n; i++) { /* resuming may add more at the end */
        client *c = resume[i];
        if (!c || (c->flags & (CF_BLOCKED | CF_CLOSE_ASAP))) continue;
        srv.current_client = c;
        client_process_input(c);
        srv.current_client = NULL;
    }
    resume_n = 0;
}
