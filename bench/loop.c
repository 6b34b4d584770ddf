/* loop.c - ferry-bench connections and epoll event loop (closed and open loop).
 *
 * Why this shape: to outrun a single-threaded server the client must do less
 * per request than the server does. So requests are never formatted here
 * (whole pipeline batches are slices of the pre-encoded pool, sent with one
 * send() each, the remainder kept as a pointer when the socket is full),
 * replies are only counted (resp_count.c) from one shared read buffer, and
 * the clock is read once per read(), all replies decoded from it sharing the
 * timestamp. Connections are spread over --threads workers (default 1), each
 * with its own epoll set, histogram and counters, merged at the end.
 *
 * Closed loop: each connection sends a batch of P requests and sends the next
 * batch when all P replies are in; latency = reply time - batch send time.
 * Open loop (--rate R): global request g is due at t_start + g/R and belongs
 * to connection g mod C; a connection sends whatever is due, keeping at most P
 * in flight; requests that cannot go yet wait client-side. Latency is taken
 * from the intended send time, so waiting is included (no coordinated
 * omission). A timerfd wakes the loop at the next due time.
 */
#include "bench.h"
#include "resp_count.h"

#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/timerfd.h>
#include <time.h>
#include <unistd.h>

#define FB_RBUF_SIZE (256 * 1024)
#define FB_MAX_EVENTS 512
#define FB_STALL_NS (30ull * 1000000000ull) /* no reply for this long: give up */

typedef struct fb_conn {
    int fd;
    int idx;               /* global connection index */
    int out_armed;         /* EPOLLOUT registered */
    int done;              /* closed loop: will send nothing more */
    size_t cursor;         /* next pool request */
    const char *wptr;      /* unsent part of the current slice */
    size_t wleft;
    uint64_t sent, recv;   /* this run */
    uint64_t quota;        /* open loop: requests owned by this connection */
    uint64_t batch_ts;     /* closed loop: send time of the current batch */
    fb_resp_state rs;
} fb_conn;

struct fb_conns {
    fb_conn *c;
    int n;
};

typedef struct fb_shared {
    const fb_config *cfg;
    const fb_pool *pool;
    int measure;
    int open;              /* open loop */
    int use_budget;        /* closed loop bounded by -n */
    atomic_llong budget;   /* requests not handed out yet */
    uint64_t t_start;      /* ns, CLOCK_MONOTONIC */
    uint64_t deadline;     /* ns; 0: none */
    double interval;       /* open loop: ns between consecutive global requests */
    int nthreads;
    pthread_barrier_t bar;
} fb_shared;

typedef struct fb_worker {
    fb_shared *sh;
    fb_conn **conns;
    int nconns;
    int active;            /* connections not finished */
    int ep, tfd;
    uint64_t timer_at;     /* armed absolute time; 0: disarmed */
    char *rbuf;
    fb_hist hist;
    uint64_t sent, replies, t_last;
    pthread_t th;
} fb_worker;

static void fb_die(const char *fmt, ...) {
    va_list ap;
    fputs("ferry-bench: ", stderr);
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fputc('\n', stderr);
    exit(1);
}

static inline uint64_t fb_now(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* ---- connections ----------------------------------------------------------- */

/* -s: the Unix socket as a one-entry list of getaddrinfo's shape (freed by
 * fb_unresolve) */
static struct addrinfo *fb_unix_addr(const char *path) {
    struct addrinfo *ai;
    struct sockaddr_un *un;
    if (strlen(path) >= sizeof un->sun_path) {
        fprintf(stderr, "ferry-bench: socket path too long: %s\n", path);
        return NULL;
    }
    ai = calloc(1, sizeof *ai + sizeof *un);
    if (!ai) return NULL;
    un = (struct sockaddr_un *)(ai + 1);
    un->sun_family = AF_UNIX;
    strcpy(un->sun_path, path);
    ai->ai_family = AF_UNIX;
    ai->ai_socktype = SOCK_STREAM;
    ai->ai_addr = (struct sockaddr *)un;
    ai->ai_addrlen = sizeof *un;
    return ai;
}

static void fb_unresolve(const fb_config *cfg, struct addrinfo *res) {
    if (cfg->socket_path) free(res);
    else freeaddrinfo(res);
}

static struct addrinfo *fb_resolve(const fb_config *cfg) {
    struct addrinfo hints, *res = NULL;
    char port[16];
    int rc;
    if (cfg->socket_path) return fb_unix_addr(cfg->socket_path);
    memset(&hints, 0, sizeof hints);
    hints.ai_family = AF_UNSPEC;
    hints.ai_socktype = SOCK_STREAM;
    snprintf(port, sizeof port, "%d", cfg->port);
    rc = getaddrinfo(cfg->host, port, &hints, &res);
    if (rc != 0) {
        fprintf(stderr, "ferry-bench: %s: %s\n", cfg->host, gai_strerror(rc));
        return NULL;
    }
    return res;
}

/* a connected blocking socket with TCP_NODELAY to the first address that
 * answers, or -1 (reason printed) */
static int fb_dial(const fb_config *cfg, const struct addrinfo *res) {
    const struct addrinfo *ai;
    int fd = -1, err = 0, one = 1;
    for (ai = res; ai; ai = ai->ai_next) {
        fd = socket(ai->ai_family, ai->ai_socktype | SOCK_CLOEXEC, ai->ai_protocol);
        if (fd < 0) {
            err = errno;
            continue;
        }
        if (cfg->congestion && !cfg->socket_path &&
            setsockopt(fd, IPPROTO_TCP, TCP_CONGESTION, cfg->congestion, (socklen_t)strlen(cfg->congestion))) {
            fprintf(stderr, "ferry-bench: TCP congestion control %s: %s\n", cfg->congestion, strerror(errno));
            close(fd);
            return -1;
        }
        if (connect(fd, ai->ai_addr, ai->ai_addrlen) == 0) break;
        err = errno;
        close(fd);
        fd = -1;
    }
    if (fd < 0) {
        if (cfg->socket_path)
            fprintf(stderr, "ferry-bench: could not connect to %s: %s\n", cfg->socket_path, strerror(err));
        else
            fprintf(stderr, "ferry-bench: could not connect to %s:%d: %s\n", cfg->host, cfg->port,
                    strerror(err));
        return -1;
    }
    if (!cfg->socket_path) setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    if (fb_tls_attach(fd) != 0) {
        close(fd);
        return -1;
    }
    return fd;
}

int fb_connect_one(const fb_config *cfg) {
    struct addrinfo *res = fb_resolve(cfg);
    int fd;
    if (!res) return -1;
    fd = fb_dial(cfg, res);
    fb_unresolve(cfg, res);
    return fd;
}

fb_conns *fb_connect_all(const fb_config *cfg) {
    struct addrinfo *res = fb_resolve(cfg);
    fb_conns *cs;
    int i;

    if (!res) return NULL;
    cs = calloc(1, sizeof *cs);
    if (cs) cs->c = calloc((size_t)cfg->clients, sizeof *cs->c);
    if (!cs || !cs->c) {
        fprintf(stderr, "ferry-bench: out of memory\n");
        free(cs);
        fb_unresolve(cfg, res);
        return NULL;
    }
    for (i = 0; i < cfg->clients; i++) {
        int fd = fb_dial(cfg, res);
        if (fd < 0) {
            cs->n = i;
            fb_close_all(cs);
            fb_unresolve(cfg, res);
            return NULL;
        }
        fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK);
        cs->c[i].fd = fd;
        cs->c[i].idx = i;
    }
    cs->n = cfg->clients;
    fb_unresolve(cfg, res);
    return cs;
}

void fb_close_all(fb_conns *cs) {
    int i;
    if (!cs) return;
    for (i = 0; i < cs->n; i++) fb_io_close(cs->c[i].fd);
    free(cs->c);
    free(cs);
}

/* ---- sending ----------------------------------------------------------------- */

static void fb_set_out(fb_worker *w, fb_conn *c, int on) {
    struct epoll_event ev;
    ev.events = EPOLLIN | (on ? EPOLLOUT : 0);
    ev.data.ptr = c;
    if (epoll_ctl(w->ep, EPOLL_CTL_MOD, c->fd, &ev) < 0) fb_die("epoll_ctl: %s", strerror(errno));
    c->out_armed = on;
}

/* Send what is pending; on a full socket keep the offset and wait for EPOLLOUT. */
static void fb_flush(fb_worker *w, fb_conn *c) {
    while (c->wleft > 0) {
        ssize_t r = fb_io_send(c->fd, c->wptr, c->wleft);
        if (r > 0) {
            c->wptr += r;
            c->wleft -= (size_t)r;
        } else if (r < 0 && errno == EINTR) {
            continue;
        } else if (r < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
            if (!c->out_armed) fb_set_out(w, c, 1);
            return;
        } else {
            fb_die("connection %d: send: %s (server closed the connection?)", c->idx,
                   r < 0 ? strerror(errno) : "wrote nothing");
        }
    }
    if (c->out_armed) fb_set_out(w, c, 0);
}

/* queue k consecutive pool requests on c and try to send them */
static void fb_send_k(fb_worker *w, fb_conn *c, size_t k) {
    const fb_pool *pool = w->sh->pool;
    c->wptr = fb_pool_slice(pool, c->cursor, k, &c->wleft);
    c->cursor = (c->cursor + k) % pool->n;
    c->sent += k;
    w->sent += k;
    fb_flush(w, c);
}

/* closed loop: all replies of the last batch are in; send the next one */
static void fb_closed_next(fb_worker *w, fb_conn *c, uint64_t now) {
    fb_shared *sh = w->sh;
    long long k = sh->cfg->pipeline;
    if (sh->deadline && now >= sh->deadline) {
        k = 0;
    } else if (sh->use_budget) {
        long long left = atomic_fetch_sub_explicit(&sh->budget, k, memory_order_relaxed);
        k = left <= 0 ? 0 : (left < k ? left : k);
    }
    if (k == 0) {
        c->done = 1;
        w->active--;
        return;
    }
    c->batch_ts = now;
    fb_send_k(w, c, (size_t)k);
}

/* open loop: intended send time of c's m-th request */
static inline uint64_t fb_intended(const fb_shared *sh, const fb_conn *c, uint64_t m) {
    double g = (double)m * (double)sh->cfg->clients + (double)c->idx;
    return sh->t_start + (uint64_t)(g * sh->interval);
}

/* open loop: how many of c's requests are due by now */
static uint64_t fb_due(const fb_shared *sh, const fb_conn *c, uint64_t now) {
    double g;
    uint64_t due;
    if (now < sh->t_start) return 0;
    g = (double)(now - sh->t_start) / sh->interval - (double)c->idx;
    due = g < 0 ? 0 : (uint64_t)(g / (double)sh->cfg->clients) + 1;
    if (due > c->quota) due = c->quota;
    while (due < c->quota && fb_intended(sh, c, due) <= now) due++; /* fix rounding */
    while (due > 0 && fb_intended(sh, c, due - 1) > now) due--;
    return due;
}

/* open loop: send everything due, as far as the in-flight cap allows */
static void fb_open_pump(fb_worker *w, fb_conn *c, uint64_t now) {
    uint64_t due, k, room;
    if (c->wleft > 0 || c->sent >= c->quota) return;
    due = fb_due(w->sh, c, now);
    if (due <= c->sent) return;
    k = due - c->sent;
    room = (uint64_t)w->sh->cfg->pipeline - (c->sent - c->recv);
    if (k > room) k = room;
    if (k > 0) fb_send_k(w, c, (size_t)k);
}

static int fb_open_finished(const fb_conn *c) { return c->sent == c->quota && c->recv == c->sent; }

/* ---- receiving --------------------------------------------------------------- */

static void fb_on_read_once(fb_worker *w, fb_conn *c);

/* One read, or over TLS until OpenSSL holds nothing more (epoll cannot see those bytes). */
static void fb_on_read(fb_worker *w, fb_conn *c) {
    do fb_on_read_once(w, c);
    while (fb_io_pending(c->fd));
}

static void fb_on_read_once(fb_worker *w, fb_conn *c) {
    fb_shared *sh = w->sh;
    uint64_t now, j;
    long n;
    ssize_t r = fb_io_read(c->fd, w->rbuf, FB_RBUF_SIZE);
    if (r == 0) fb_die("connection %d closed by the server (after %llu replies)", c->idx,
                       (unsigned long long)c->recv);
    if (r < 0) {
        if (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR) return;
        fb_die("connection %d: read: %s", c->idx, strerror(errno));
    }
    now = fb_now();
    n = fb_resp_count(w->rbuf, (size_t)r, &c->rs);
    if (n < 0) fb_die("connection %d: protocol error in the server's reply stream", c->idx);
    if (n == 0) return;
    if ((uint64_t)n > c->sent - c->recv)
        fb_die("connection %d: %ld replies for %llu outstanding requests", c->idx, n,
               (unsigned long long)(c->sent - c->recv));
    w->t_last = now;
    w->replies += (uint64_t)n;
    if (sh->open) {
        if (sh->measure) {
            for (j = c->recv; j < c->recv + (uint64_t)n; j++) {
                uint64_t t = fb_intended(sh, c, j);
                fb_hist_add(&w->hist, now > t ? now - t : 0, 1);
            }
        }
        c->recv += (uint64_t)n;
        fb_open_pump(w, c, now);
        if (fb_open_finished(c)) w->active--;
    } else {
        if (sh->measure) fb_hist_add(&w->hist, now - c->batch_ts, (uint64_t)n);
        c->recv += (uint64_t)n;
        if (c->recv == c->sent) fb_closed_next(w, c, now);
    }
}

/* ---- the loop ---------------------------------------------------------------- */

static void fb_arm_timer(fb_worker *w, uint64_t at) {
    struct itimerspec its;
    if (at == w->timer_at) return;
    memset(&its, 0, sizeof its);
    its.it_value.tv_sec = (time_t)(at / 1000000000ull);
    its.it_value.tv_nsec = (long)(at % 1000000000ull);
    if (timerfd_settime(w->tfd, TFD_TIMER_ABSTIME, &its, NULL) < 0)
        fb_die("timerfd_settime: %s", strerror(errno));
    w->timer_at = at;
}

/* open loop: send what is due on every connection, arm the timer for the
 * earliest request that is not due yet and could be sent */
static void fb_open_tick(fb_worker *w) {
    fb_shared *sh = w->sh;
    uint64_t now = fb_now(), next = UINT64_MAX;
    int i;
    for (i = 0; i < w->nconns; i++) {
        fb_conn *c = w->conns[i];
        fb_open_pump(w, c, now);
        if (c->sent < c->quota && c->wleft == 0 &&
            c->sent - c->recv < (uint64_t)sh->cfg->pipeline) {
            uint64_t t = fb_intended(sh, c, c->sent);
            if (t < next) next = t;
        }
    }
    if (next != UINT64_MAX) fb_arm_timer(w, next);
}

static void *fb_worker_run(void *arg) {
    fb_worker *w = arg;
    fb_shared *sh = w->sh;
    struct epoll_event evs[FB_MAX_EVENTS];
    uint64_t last_progress, seen_replies = 0;
    int i;

    if (sh->nthreads > 1) {
        pthread_barrier_wait(&sh->bar); /* all workers ready */
        pthread_barrier_wait(&sh->bar); /* main set t_start */
    }
    if (sh->open) prctl(PR_SET_TIMERSLACK, 1UL, 0, 0, 0); /* precise timer wake-ups */
    w->t_last = sh->t_start;
    last_progress = sh->t_start;
    if (!sh->open) {
        for (i = 0; i < w->nconns; i++) fb_closed_next(w, w->conns[i], i ? fb_now() : sh->t_start);
    } else {
        for (i = 0; i < w->nconns; i++)
            if (w->conns[i]->quota == 0) w->active--;
    }
    while (w->active > 0) {
        int n;
        if (sh->open) fb_open_tick(w);
        n = epoll_wait(w->ep, evs, FB_MAX_EVENTS, 1000);
        if (n < 0) {
            if (errno == EINTR) continue;
            fb_die("epoll_wait: %s", strerror(errno));
        }
        for (i = 0; i < n; i++) {
            fb_conn *c = evs[i].data.ptr;
            if (!c) { /* the timer */
                uint64_t ticks;
                if (read(w->tfd, &ticks, sizeof ticks) < 0 && errno != EAGAIN)
                    fb_die("timerfd read: %s", strerror(errno));
                w->timer_at = 0;
                continue;
            }
            if (evs[i].events & (EPOLLIN | EPOLLERR | EPOLLHUP)) fb_on_read(w, c);
            if ((evs[i].events & EPOLLOUT) && c->wleft > 0) {
                fb_flush(w, c);
                if (sh->open && c->wleft == 0) fb_open_pump(w, c, fb_now());
            }
        }
        if (w->replies != seen_replies || w->replies == w->sent) {
            seen_replies = w->replies;
            last_progress = fb_now();
        } else if (fb_now() - last_progress > FB_STALL_NS) {
            fb_die("no reply from the server for %llu s", FB_STALL_NS / 1000000000ull);
        }
    }
    return NULL;
}

void fb_run_test(const fb_config *cfg, fb_conns *cs, const fb_pool *pool, int measure,
                 double seconds, fb_result *res) {
    fb_shared sh;
    fb_worker *ws;
    int nthreads = cfg->threads < cs->n ? cfg->threads : cs->n;
    int t, i;
    uint64_t rng = cfg->seed ^ UINT64_C(0xC0FFEE) ^ (uint64_t)measure;
    uint64_t t_end = 0;
    long long total = 0;

    memset(&sh, 0, sizeof sh);
    sh.cfg = cfg;
    sh.pool = pool;
    sh.measure = measure;
    sh.nthreads = nthreads;
    sh.open = cfg->rate > 0;
    if (sh.open) {
        sh.interval = 1e9 / cfg->rate;
        total = (long long)(measure ? (cfg->duration > 0 ? cfg->duration * cfg->rate
                                                         : (double)cfg->requests)
                                    : seconds * cfg->rate);
    } else if (measure && cfg->duration <= 0) {
        sh.use_budget = 1;
        atomic_init(&sh.budget, cfg->requests);
    }

    for (i = 0; i < cs->n; i++) {
        fb_conn *c = &cs->c[i];
        c->out_armed = 0;
        c->done = 0;
        c->wptr = NULL;
        c->wleft = 0;
        c->sent = c->recv = 0;
        c->cursor = (size_t)(fb_rand(&rng) % pool->n);
        c->quota = total > c->idx ? (uint64_t)(total - c->idx + cs->n - 1) / (uint64_t)cs->n : 0;
        fb_resp_init(&c->rs);
    }

    ws = calloc((size_t)nthreads, sizeof *ws);
    if (!ws) fb_die("out of memory");
    for (t = 0; t < nthreads; t++) {
        fb_worker *w = &ws[t];
        w->sh = &sh;
        w->conns = calloc((size_t)cs->n / (size_t)nthreads + 1, sizeof *w->conns);
        w->rbuf = malloc(FB_RBUF_SIZE);
        if (!w->conns || !w->rbuf) fb_die("out of memory");
        fb_hist_reset(&w->hist);
        w->ep = epoll_create1(EPOLL_CLOEXEC);
        if (w->ep < 0) fb_die("epoll_create1: %s", strerror(errno));
        w->tfd = -1;
        if (sh.open) {
            struct epoll_event ev = {.events = EPOLLIN, .data.ptr = NULL};
            w->tfd = timerfd_create(CLOCK_MONOTONIC, TFD_NONBLOCK | TFD_CLOEXEC);
            if (w->tfd < 0 || epoll_ctl(w->ep, EPOLL_CTL_ADD, w->tfd, &ev) < 0)
                fb_die("timerfd: %s", strerror(errno));
        }
    }
    for (i = 0; i < cs->n; i++) {
        fb_worker *w = &ws[i % nthreads];
        struct epoll_event ev = {.events = EPOLLIN, .data.ptr = &cs->c[i]};
        if (epoll_ctl(w->ep, EPOLL_CTL_ADD, cs->c[i].fd, &ev) < 0)
            fb_die("epoll_ctl: %s", strerror(errno));
        w->conns[w->nconns++] = &cs->c[i];
        w->active++;
    }

    if (nthreads > 1) {
        pthread_barrier_init(&sh.bar, NULL, (unsigned)nthreads + 1);
        for (t = 0; t < nthreads; t++)
            if (pthread_create(&ws[t].th, NULL, fb_worker_run, &ws[t]) != 0)
                fb_die("pthread_create failed");
        pthread_barrier_wait(&sh.bar);
    }
    sh.t_start = fb_now();
    if (!sh.open && (!measure || cfg->duration > 0))
        sh.deadline = sh.t_start + (uint64_t)((measure ? cfg->duration : seconds) * 1e9);
    if (nthreads > 1) {
        pthread_barrier_wait(&sh.bar);
        for (t = 0; t < nthreads; t++) pthread_join(ws[t].th, NULL);
        pthread_barrier_destroy(&sh.bar);
    } else {
        fb_worker_run(&ws[0]);
    }

    memset(res, 0, sizeof *res);
    fb_hist_reset(&res->hist);
    for (t = 0; t < nthreads; t++) {
        fb_worker *w = &ws[t];
        fb_hist_merge(&res->hist, &w->hist);
        res->replies += w->replies;
        if (w->t_last > t_end) t_end = w->t_last;
        close(w->ep);
        if (w->tfd >= 0) close(w->tfd);
        free(w->conns);
        free(w->rbuf);
    }
    for (i = 0; i < cs->n; i++) {
        fb_conn *c = &cs->c[i];
        res->sent += c->sent;
        res->errors += c->rs.errors;
        if (!res->have_errtext && c->rs.have_errtext) {
            res->have_errtext = 1;
            snprintf(res->errtext, sizeof res->errtext, "%s", c->rs.errtext);
        }
    }
    res->elapsed = t_end > sh.t_start ? (double)(t_end - sh.t_start) / 1e9 : 0.0;
    free(ws);
}
