/* event_kqueue.c - macOS/BSD kqueue backend, #included by event.c (static
 * functions only). kqueue tracks read and write filters separately, so a
 * mask change is one EV_ADD/EV_DELETE per filter; be_poll merges the two
 * filters of one fd into a single fired entry. */
#include <sys/types.h>
#include <sys/event.h>
#include <sys/time.h>
#include <unistd.h>

typedef struct be_state {
    int kqfd;
    struct kevent *events;
} be_state;

static int be_create(evloop *el) {
    be_state *st = zmalloc(sizeof *st);
    st->events = zmalloc(sizeof(struct kevent) * (size_t)el->setsize);
    st->kqfd = kqueue();
    if (st->kqfd == -1) {
        zfree(st->events);
        zfree(st);
        return -1;
    }
    el->backend = st;
    return 0;
}

static void be_free(evloop *el) {
    be_state *st = el->backend;
    close(st->kqfd);
    zfree(st->events);
    zfree(st);
}

static int be_resize(evloop *el, int setsize) {
    be_state *st = el->backend;
    st->events = zrealloc(st->events, sizeof(struct kevent) * (size_t)setsize);
    return 0;
}

static int be_add(evloop *el, int fd, int oldmask, int addmask) {
    be_state *st = el->backend;
    struct kevent ke;
    (void)oldmask;
    if (addmask & EV_READABLE) {
        EV_SET(&ke, fd, EVFILT_READ, EV_ADD, 0, 0, NULL);
        if (kevent(st->kqfd, &ke, 1, NULL, 0, NULL) == -1) return -1;
    }
    if (addmask & EV_WRITABLE) {
        EV_SET(&ke, fd, EVFILT_WRITE, EV_ADD, 0, 0, NULL);
        if (kevent(st->kqfd, &ke, 1, NULL, 0, NULL) == -1) return -1;
    }
    return 0;
}

static void be_del(evloop *el, int fd, int oldmask, int delmask) {
    be_state *st = el->backend;
    struct kevent ke;
    if ((oldmask & delmask) & EV_READABLE) {
        EV_SET(&ke, fd, EVFILT_READ, EV_DELETE, 0, 0, NULL);
        kevent(st->kqfd, &ke, 1, NULL, 0, NULL);
    }
    if ((oldmask & delmask) & EV_WRITABLE) {
        EV_SET(&ke, fd, EVFILT_WRITE, EV_DELETE, 0, 0, NULL);
        kevent(st->kqfd, &ke, 1, NULL, 0, NULL);
    }
}

static int be_poll(evloop *el, long timeout_ms) {
    be_state *st = el->backend;
    struct timespec ts, *tp = NULL;
    if (timeout_ms >= 0) {
        ts.tv_sec = timeout_ms / 1000;
        ts.tv_nsec = (timeout_ms % 1000) * 1000000;
        tp = &ts;
    }
    int n = kevent(st->kqfd, NULL, 0, st->events, el->setsize, tp);
    int out = 0;
    for (int i = 0; i < n; i++) {
        struct kevent *e = &st->events[i];
        int fd = (int)e->ident;
        int mask = e->filter == EVFILT_READ ? EV_READABLE : e->filter == EVFILT_WRITE ? EV_WRITABLE : 0;
        if (e->flags & (EV_EOF | EV_ERROR)) mask |= (e->filter == EVFILT_READ ? EV_READABLE : EV_WRITABLE);
        int merged = 0;
        for (int j = out - 1; j >= 0 && j >= out - 2; j--) {
            if (el->fired[j].fd == fd) {
                el->fired[j].mask |= mask;
                merged = 1;
                break;
            }
        }
        if (!merged) {
            el->fired[out].fd = fd;
            el->fired[out].mask = mask;
            out++;
        }
    }
    return out;
}

static const char *be_name(void) { return "kqueue"; }
