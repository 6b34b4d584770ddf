/* event_epoll.c - Linux epoll backend, #included by event.c (static functions only). */
#include <sys/epoll.h>
#include <unistd.h>

typedef struct be_state {
    int epfd;
    struct epoll_event *events;
} be_state;

static int be_create(evloop *el) {
    be_state *st = zmalloc(sizeof *st);
    st->events = zmalloc(sizeof(struct epoll_event) * (size_t)el->setsize);
    st->epfd = epoll_create1(EPOLL_CLOEXEC);
    if (st->epfd == -1) {
        zfree(st->events);
        zfree(st);
        return -1;
    }
    el->backend = st;
    return 0;
}

static void be_free(evloop *el) {
    be_state *st = el->backend;
    close(st->epfd);
    zfree(st->events);
    zfree(st);
}

static int be_resize(evloop *el, int setsize) {
    be_state *st = el->backend;
    st->events = zrealloc(st->events, sizeof(struct epoll_event) * (size_t)setsize);
    return 0;
}

static int be_add(evloop *el, int fd, int oldmask, int addmask) {
    be_state *st = el->backend;
    struct epoll_event ee = {0};
    int mask = oldmask | addmask;
    ee.events = ((mask & EV_READABLE) ? EPOLLIN : 0) | ((mask & EV_WRITABLE) ? EPOLLOUT : 0);
    ee.data.fd = fd;
    return epoll_ctl(st->epfd, oldmask == EV_NONE ? EPOLL_CTL_ADD : EPOLL_CTL_MOD, fd, &ee);
}

static void be_del(evloop *el, int fd, int oldmask, int delmask) {
    be_state *st = el->backend;
    struct epoll_event ee = {0};
    int mask = oldmask & ~delmask;
    ee.events = ((mask & EV_READABLE) ? EPOLLIN : 0) | ((mask & EV_WRITABLE) ? EPOLLOUT : 0);
    ee.data.fd = fd;
    epoll_ctl(st->epfd, mask != EV_NONE ? EPOLL_CTL_MOD : EPOLL_CTL_DEL, fd, &ee);
}

static int be_poll(evloop *el, long timeout_ms) {
    be_state *st = el->backend;
    int n = epoll_wait(st->epfd, st->events, el->setsize, (int)timeout_ms);
    for (int i = 0; i < n; i++) {
        struct epoll_event *e = &st->events[i];
        int mask = 0;
        if (e->events & EPOLLIN) mask |= EV_READABLE;
        if (e->events & EPOLLOUT) mask |= EV_WRITABLE;
        if (e->events & (EPOLLERR | EPOLLHUP)) mask |= EV_READABLE | EV_WRITABLE;
        el->fired[i].fd = e->data.fd;
        el->fired[i].mask = mask;
    }
    return n < 0 ? 0 : n;
}

static const char *be_name(void) { return "epoll"; }
