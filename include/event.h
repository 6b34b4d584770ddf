/* event.h - the event loop: file events (readable/writable) and timers.
 *
 * One thread, one loop. The readiness backend (epoll on Linux, kqueue on
 * macOS/BSD) is chosen at compile time: event.c #includes event_epoll.c or
 * event_kqueue.c, each a file of static functions with the same names, so
 * there is no vtable. Timers are few (server cron, metrics), kept in a list.
 */
#ifndef FERRY_EVENT_H
#define FERRY_EVENT_H

#include <stdint.h>

#define EV_NONE     0
#define EV_READABLE 1
#define EV_WRITABLE 2

struct evloop;
typedef void ev_file_fn(struct evloop *el, int fd, void *data, int mask);
typedef long ev_timer_fn(struct evloop *el, long long id, void *data); /* ms to next run, or -1 to delete */
typedef void ev_hook_fn(struct evloop *el);

typedef struct ev_file {
    int mask;
    ev_file_fn *rfn, *wfn;
    void *data;
} ev_file;

typedef struct ev_timer {
    long long id;
    int64_t when_ms;
    ev_timer_fn *fn;
    void *data;
    struct ev_timer *next;
} ev_timer;

typedef struct evloop {
    int setsize;
    int maxfd;
    ev_file *files;
    struct ev_fired { int fd, mask; } *fired;
    ev_timer *timers;
    long long next_timer_id;
    int stop;
    ev_hook_fn *before_sleep;
    int dont_wait;              /* set by before_sleep: poll without blocking this once (work is pending) */
    long wait_at_most_ms;       /* set by before_sleep: when > 0, the next poll sleeps no longer than this */
    int no_timers;              /* ev_process leaves timers alone (events served from inside a busy script) */
    void *backend;              /* backend state (epoll fd / kqueue fd + event array) */
    uint64_t polls;             /* number of epoll_wait / kevent calls */
    /* Busy polling before sleeping. Waking a thread that sleeps in the poll
     * costs the waker a cross-CPU wakeup (an IPI; a VM exit under a
     * hypervisor), paid in the *client's* system time. A server faster than
     * its clients sleeps between nearly every batch, so a CPU-bound client
     * (redis-benchmark) runs slower against it. Instead the loop re-polls
     * without blocking for up to spin_us after its last event, then sleeps.
     * spin_us adapts between 0 and busy_poll_us, as the kernel's haltpoll
     * does: it doubles when an event came soon after the spin gave up, and
     * halves when the loop then stayed idle longer than busy_poll_us, so
     * a lightly loaded server does not burn CPU.
     * A spin only pays when the core is ours: on a core shared with a
     * client (a cluster node per core with its benchmark client beside it)
     * the spin takes the CPU the client needs to send the next batch. So
     * every CONTENTION_CHECK_US the loop reads its thread's involuntary
     * context switches (Linux's RUSAGE_THREAD); while the scheduler keeps
     * preempting it, it does not spin. */
    int busy_poll_us;           /* upper bound, 0 = always sleep at once */
    int spin_us;                /* current spin window */
    int64_t last_event_us;      /* ev_mono_us() of the last poll that returned events */
    int64_t contention_check_us; /* ev_mono_us() of the last look at preemptions */
    long nivcsw;                /* the thread's involuntary context switches then */
    int core_shared;            /* preempted often in the last period: no spinning */
} evloop;

evloop *ev_create(int setsize);
void ev_free(evloop *el);
/* Grow or shrink the largest fd + 1 the loop handles (CONFIG SET
 * maxclients); -1 if a registered fd would not fit. */
int ev_resize(evloop *el, int setsize);
int ev_add(evloop *el, int fd, int mask, ev_file_fn *fn, void *data); /* 0 ok, -1 err */
void ev_del(evloop *el, int fd, int mask);
int ev_get_mask(evloop *el, int fd);
long long ev_timer_add(evloop *el, long ms, ev_timer_fn *fn, void *data);
/* Runs one iteration: poll (waiting at most until the next timer), dispatch file events, timers. */
int ev_process(evloop *el);
void ev_run(evloop *el);
void ev_stop(evloop *el);
const char *ev_backend_name(void);
int64_t ev_now_ms(void);       /* CLOCK_REALTIME in ms */
int64_t ev_mono_us(void);      /* CLOCK_MONOTONIC in us */

#endif
