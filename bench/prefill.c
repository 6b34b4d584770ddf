/* prefill.c - writes a collection test's key before the test (see prefill.h). */
#include "prefill.h"
#include "fbtls.h"
#include "resp_count.h"

#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#define FB_PREFILL_CHUNK 100          /* elements per command at most */
#define FB_PREFILL_CMD_BYTES (1u << 20) /* ...and about this many bytes */
#define FB_MEMBER_PREFIX_LEN 20       /* "element:" + 12 digits */

static size_t fb_prefill_elems(const fb_workload *w) {
    switch (w->test) {
    case FB_T_LRANGE_100: case FB_T_LRANGE_300: case FB_T_LRANGE_500: case FB_T_LRANGE_600:
        return FB_LIST_LEN;
    case FB_T_HGETALL: case FB_T_SMEMBERS: case FB_T_ZRANGE:
        return FB_COLL_SIZE;
    default:
        return 0;
    }
}

/* elements per chunk command */
static size_t fb_prefill_per(const fb_workload *w) {
    size_t per = FB_PREFILL_CMD_BYTES / ((size_t)w->datasize + 64);
    if (per > FB_PREFILL_CHUNK) per = FB_PREFILL_CHUNK;
    return per ? per : 1;
}

size_t fb_prefill_ncmds(const fb_workload *w) {
    size_t n = fb_prefill_elems(w), per = fb_prefill_per(w);
    return n ? 1 + (n + per - 1) / per : 0;
}

/* bulk "element:%012zu", padded with 'x' to pad bytes if that is longer */
static void fb_out_member(fb_out *o, size_t i, size_t pad) {
    char m[32];
    size_t len = pad > FB_MEMBER_PREFIX_LEN ? pad : FB_MEMBER_PREFIX_LEN;
    snprintf(m, sizeof m, "element:%012zu", i);
    fb_out_hdr(o, '$', len);
    fb_out_mem(o, m, FB_MEMBER_PREFIX_LEN);
    fb_out_fill(o, 'x', len - FB_MEMBER_PREFIX_LEN);
    fb_out_mem(o, "\r\n", 2);
}

/* bulk of d bytes of 'x' */
static void fb_out_value(fb_out *o, size_t d) {
    fb_out_hdr(o, '$', d);
    fb_out_fill(o, 'x', d);
    fb_out_mem(o, "\r\n", 2);
}

/* one element (or field/value, score/member pair) of the chunk commands */
static void fb_out_elem(fb_out *o, int test, size_t i, size_t d) {
    char score[24];
    switch (test) {
    case FB_T_HGETALL:
        fb_out_member(o, i, 0);
        fb_out_value(o, d);
        break;
    case FB_T_SMEMBERS:
        fb_out_member(o, i, d);
        break;
    case FB_T_ZRANGE:
        snprintf(score, sizeof score, "%zu", i);
        fb_out_bulk(o, score, strlen(score));
        fb_out_member(o, i, d);
        break;
    default: /* the lists */
        fb_out_value(o, d);
        break;
    }
}

void fb_prefill_encode(fb_out *o, const fb_workload *w, size_t k) {
    static const char *const cmd[] = {"RPUSH", "HSET", "SADD", "ZADD"};
    const char *key = fb_test_coll_key(w->test), *c;
    size_t n = fb_prefill_elems(w), per = fb_prefill_per(w), first, last, i;
    int pair = w->test == FB_T_HGETALL || w->test == FB_T_ZRANGE;
    if (!key) return;
    if (k == 0) {
        fb_out_str(o, "*2\r\n$3\r\nDEL\r\n");
        fb_out_bulk(o, key, strlen(key));
        return;
    }
    first = (k - 1) * per;
    last = first + per < n ? first + per : n;
    c = w->test == FB_T_HGETALL ? cmd[1]
        : w->test == FB_T_SMEMBERS ? cmd[2]
        : w->test == FB_T_ZRANGE ? cmd[3] : cmd[0];
    fb_out_hdr(o, '*', 2 + (last - first) * (pair ? 2 : 1));
    fb_out_bulk(o, c, strlen(c));
    fb_out_bulk(o, key, strlen(key));
    for (i = first; i < last; i++) fb_out_elem(o, w->test, i, (size_t)w->datasize);
}

static int fb_send_all(int fd, const char *p, size_t len, char *err, size_t errcap) {
    while (len > 0) {
        ssize_t r = fb_io_send(fd, p, len);
        if (r < 0 && errno == EINTR) continue;
        if (r <= 0) {
            snprintf(err, errcap, "send: %s", r < 0 ? strerror(errno) : "wrote nothing");
            return -1;
        }
        p += r;
        len -= (size_t)r;
    }
    return 0;
}

/* read until `want` replies are counted in st */
static int fb_recv_replies(int fd, fb_resp_state *st, uint64_t want, int timeout_ms, char *err,
                           size_t errcap) {
    char buf[16384];
    while (st->replies < want) {
        struct pollfd pfd = {.fd = fd, .events = POLLIN};
        int pr = fb_io_pending(fd) ? 1 : poll(&pfd, 1, timeout_ms);
        ssize_t r;
        if (pr < 0 && errno == EINTR) continue;
        if (pr == 0) {
            snprintf(err, errcap, "no reply for %d ms", timeout_ms);
            return -1;
        }
        r = pr < 0 ? -1 : fb_io_read(fd, buf, sizeof buf);
        if (r < 0 && errno == EINTR) continue;
        if (r <= 0) {
            snprintf(err, errcap, "read: %s", r < 0 ? strerror(errno) : "connection closed");
            return -1;
        }
        if (fb_resp_count(buf, (size_t)r, st) < 0) {
            snprintf(err, errcap, "protocol error in the replies");
            return -1;
        }
    }
    return 0;
}

int fb_prefill_run(int fd, const fb_workload *w, int timeout_ms, char *err, size_t errcap) {
    size_t ncmds = fb_prefill_ncmds(w), k;
    fb_out o = {0};
    fb_resp_state st;
    int rc = 0;

    fb_resp_init(&st);
    for (k = 0; k < ncmds && rc == 0; k++) {
        o.len = 0;
        fb_prefill_encode(&o, w, k);
        if (o.oom) {
            snprintf(err, errcap, "out of memory");
            rc = -1;
        } else {
            rc = fb_send_all(fd, o.p, o.len, err, errcap);
        }
    }
    fb_out_free(&o);
    if (rc == 0) rc = fb_recv_replies(fd, &st, ncmds, timeout_ms, err, errcap);
    if (rc == 0 && st.replies != ncmds) {
        snprintf(err, errcap, "%llu replies to %zu commands", (unsigned long long)st.replies, ncmds);
        rc = -1;
    }
    if (rc == 0 && st.errors) {
        snprintf(err, errcap, "%s", st.have_errtext ? st.errtext : "error reply");
        rc = -1;
    }
    return rc;
}
