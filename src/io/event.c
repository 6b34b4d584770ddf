/* event.c - the single-threaded event loop (see event.h).
 *
 * The readiness backend is picked at compile time and #included here: each
 * backend file defines the same static functions (be_create, be_free,
 * be_resize, be_add, be_del, be_poll, be_name), so the loop has no
 * indirection. */
#include "event.h"
#include "zmalloc.h"
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>

#define CONTENTION_CHECK_US 100000 /* how often the loop looks at its preemptions */
#define CONTENTION_PREEMPTIONS 10  /* per period: the core is shared (a lone server sees ~0) */

#if defined(__linux__)
#include "event_epoll.c"
#elif defined(__APPLE__) || defined(__FreeBSD__) || defined(__OpenBSD__) || defined(__NetBSD__) || defined(__DragonFly__)
#include "event_kqueue.c"
#else
#error "ferry needs epoll or kqueue"
#endif

int64_t ev_now_ms(void) {
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

int64_t ev_mono_us(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000 + ts.tv_nsec / 1000;
}

const char *ev_backend_name(void) { return be_name(); }

evloop *ev_create(int setsize) {
    evloop *el = zcalloc(sizeof *el);
    el->setsize = setsize;
    el->maxfd = -1;
    el->files = zcalloc(sizeof(ev_file) * (size_t)setsize);
    el->fired = zcalloc(sizeof(*el->fired) * (size_t)setsize);
    if (be_create(el) == -1) {
        zfree(el->files);
        zfree(el->fired);
        zfree(el);
        return NULL;
    }
    return el;
}

int ev_resize(evloop *el, int setsize) {
    if (setsize == el->setsize) return 0;
    if (setsize <= 0 || el->maxfd >= setsize) return -1;
    if (be_resize(el, setsize) == -1) return -1;
    el->files = zrealloc(el->files, sizeof(ev_file) * (size_t)setsize);
    el->fired = zrealloc(el->fired, sizeof(*el->fired) * (size_t)setsize);
    if (setsize > el->setsize)
        memset(el->files + el->setsize, 0, sizeof(ev_file) * (size_t)(setsize - el->setsize));
    el->setsize = setsize;
    return 0;
}

void ev_free(evloop *el) {
    if (!el) return;
    be_free(el);
    while (el->timers) {
        ev_timer *t = el->timers;
        el->timers = t->next;
        zfree(t);
    }
    zfree(el->files);
    zfree(el->fired);
    zfree(el);
}

int ev_add(evloop *el, int fd, int mask, ev_file_fn *fn, void *data) {
    if (fd < 0 || fd >= el->setsize) {
        errno = ERANGE;
        return -1;
    }
    ev_file *f = &el->files[fd];
    if (be_add(el, fd, f->mask, mask) == -1) return -1;
    f->mask |= mask;
    if (mask & EV_READABLE) f->rfn = fn;
    if (mask & EV_WRITABLE) f->wfn = fn;
    f->data = data;
    if (fd > el->maxfd) el->maxfd = fd;
    return 0;
}

void ev_del(evloop *el, int fd, int mask) {
    if (fd < 0 || fd >= el->setsize) return;
    ev_file *f = &el->files[fd];
    if (f->mask == EV_NONE) return;
    be_del(el, fd, f->mask, mask);
    f->mask &= ~mask;
    if (fd == el->maxfd && f->mask == EV_NONE) {
        int j = el->maxfd - 1;
        while (j >= 0 && el->files[j].mask == EV_NONE) j--;
        el->maxfd = j;
    }
}

int ev_get_mask(evloop *el, int fd) {
    if (fd < 0 || fd >= el->setsize) return 0;
    return el->files[fd].mask;
}

long long ev_timer_add(evloop *el, long ms, ev_timer_fn *fn, void *data) {
    ev_timer *t = zmalloc(sizeof *t);
    t->id = el->next_timer_id++;
    t->when_ms = ev_mono_us() / 1000 + ms;
    t->fn = fn;
    t->data = data;
    t->next = el->timers;
    el->timers = t;
    return t->id;
}

static long ms_to_next_timer(evloop *el) {
    if (!el->timers) return -1;
    int64_t now = ev_mono_us() / 1000, best = INT64_MAX;
    for (ev_timer *t = el->timers; t; t = t->next)
        if (t->when_ms < best) best = t->when_ms;
    return best <= now ? 0 : (long)(best - now);
}

static void run_timers(evloop *el) {
    int64_t now = ev_mono_us() / 1000;
    ev_timer **pp = &el->timers;
    while (*pp) {
        ev_timer *t = *pp;
        if (t->when_ms <= now) {
            long next = t->fn(el, t->id, t->data);
            if (next < 0) {
                *pp = t->next;
                zfree(t);
                continue;
            }
            t->when_ms = ev_mono_us() / 1000 + next;
        }
        pp = &t->next;
    }
}

/* After a sleeping poll: idle_us is how long the loop had no events. */
static void adapt_spin(evloop *el, int64_t idle_us) {
    if (idle_us <= el->busy_poll_us) {
        int grown = el->spin_us < 8 ? 8 : el->spin_us * 2; /* spinning longer would have caught it */
        el->spin_us = grown < el->busy_poll_us ? grown : el->busy_poll_us;
    } else {
        el->spin_us /= 2; /* idle anyway: stop paying for the spin */
    }
}

/* Once a period: was the thread preempted often enough since the last look
 * to call its core shared (see core_shared in event.h)? */
static void note_contention(evloop *el, int64_t now) {
#ifdef RUSAGE_THREAD
    struct rusage ru;
    if (getrusage(RUSAGE_THREAD, &ru) != 0) return;
    el->core_shared = el->contention_check_us && ru.ru_nivcsw - el->nivcsw >= CONTENTION_PREEMPTIONS;
    el->nivcsw = ru.ru_nivcsw;
#endif
    el->contention_check_us = now;
}

/* Polls, re-polling without blocking for up to spin_us after the last event
 * before sleeping (see busy_poll_us in event.h). */
static int poll_events(evloop *el, long timeout) {
    if (timeout == 0 || el->busy_poll_us <= 0) return be_poll(el, timeout);
    int64_t now = ev_mono_us();
    if (now - el->contention_check_us >= CONTENTION_CHECK_US) note_contention(el, now);
    if (el->core_shared) return be_poll(el, timeout);
    if (el->spin_us > el->busy_poll_us) el->spin_us = el->busy_poll_us;
    for (int n;; now = ev_mono_us()) {
        if (now - el->last_event_us >= el->spin_us) break;
        n = be_poll(el, 0);
        if (n > 0) {
            el->last_event_us = ev_mono_us();
            return n;
        }
        el->polls++; /* the caller counts the last poll */
    }
    int n = be_poll(el, timeout);
    if (n > 0) {
        now = ev_mono_us();
        adapt_spin(el, now - el->last_event_us);
        el->last_event_us = now;
    }
    return n;
}

int ev_process(evloop *el) {
    long timeout = el->dont_wait ? 0 : ms_to_next_timer(el);
    if (el->wait_at_most_ms > 0 && (timeout < 0 || timeout > el->wait_at_most_ms)) timeout = el->wait_at_most_ms;
    el->dont_wait = 0;
    el->wait_at_most_ms = 0;
    int n = poll_events(el, timeout);
    el->polls++;
    for (int i = 0; i < n; i++) {
        int fd = el->fired[i].fd, mask = el->fired[i].mask;
        ev_file *f = &el->files[fd];
        int done_read = 0;
        if ((f->mask & mask & EV_READABLE) && f->rfn) {
            f->rfn(el, fd, f->data, mask);
            done_read = 1;
        }
        f = &el->files[fd]; /* the handler may have changed it */
        if ((f->mask & mask & EV_WRITABLE) && f->wfn && (!done_read || f->wfn != f->rfn))
            f->wfn(el, fd, f->data, mask);
    }
    if (!el->no_timers) run_timers(el);
    return n;
}

void ev_run(evloop *el) {
    el->stop = 0;
    while (!el->stop) {
        if (el->before_sleep) el->before_sleep(el);
        if (el->stop) break;
        ev_process(el);
    }
}

void ev_stop(evloop *el) { el->stop = 1; }
