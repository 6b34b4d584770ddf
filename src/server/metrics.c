/* metrics.c - Prometheus text exposition (format 0.0.4) over HTTP/1.1 on a
 * side port (metrics-port, 0 = off), bound to the same addresses as `bind`.
 *
 * Why in-process and on the event loop: a scrape reads counters that only
 * the loop thread may touch, and ferry has no threads. So the HTTP side is
 * deliberately small and defensive: nonblocking sockets registered with
 * ev_add; requests parsed only once the header is complete; headers capped
 * at MC_HDR_MAX bytes (431 and close beyond); only GET/HEAD /metrics is
 * served (404 other paths, 405 other methods, 400 malformed requests, each
 * of the error cases closing the connection); keep-alive and pipelined
 * requests are answered in order; partial writes wait for a writable event
 * and reading pauses until the output drains, so a slow or hostile peer
 * costs at most one buffer and never a blocking call; at most MC_MAX
 * connections (extra ones are closed at accept); idle connections (also
 * half-sent headers) are closed after MC_IDLE_MS. Metric names mirror
 * redis_exporter's with a ferry_ prefix.
 */
#include "metrics.h"
#include "command.h"
#include "db.h"
#include "dict.h"
#include "latency.h"
#include "reply.h"
#include "sbuf.h"
#include "repl.h"
#include "server.h"
#include "zmalloc.h"
#include <errno.h>
#include <netdb.h>
#include <netinet/in.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <unistd.h>

#define MC_MAX 64
#define MC_HDR_MAX 8192
#define MC_IDLE_MS 30000
#define MC_OUT_PAUSE (1024 * 1024)  /* stop answering pipelined requests above this much pending output */

typedef struct mconn {
    int fd;
    char *in;                   /* MC_HDR_MAX bytes */
    size_t inlen;
    sbuf out;
    size_t outpos;
    int close_after;            /* close once out is written */
    int64_t last_ms;
    struct mconn *prev, *next;
} mconn;

static int lfds[CONFIG_MAX_BIND + 1];
static int nlfds;
static mconn *conns;
static int nconns;
static uint64_t scrapes;

/* ------------------------------------------------------------ rendering */

static void family(sbuf *b, const char *name, const char *type, const char *help) {
    sb_addf(b, "# HELP %s %s\n# TYPE %s %s\n", name, help, name, type);
}

static void label_value(sbuf *b, const char *s) {
    for (; *s; s++) {
        if (*s == '\\') sb_add(b, "\\\\", 2);
        else if (*s == '"') sb_add(b, "\\\"", 2);
        else if (*s == '\n') sb_add(b, "\\n", 2);
        else sb_addc(b, *s);
    }
}

static void scalar(sbuf *b, const char *name, const char *type, const char *help, unsigned long long v) {
    family(b, name, type, help);
    sb_addf(b, "%s %llu\n", name, v);
}

typedef struct cmd_walk {
    sbuf *b;
    int what;
} cmd_walk;

enum { W_CALLS, W_FAILED, W_REJECTED, W_DURATION };

/* Boundaries (ns) of ferry_command_duration_seconds. A bucket counts the
 * values whose internal bucket (1/64 of a power of two wide) starts at or
 * below the boundary: exact to within the internal resolution (<= 1.6%). */
static const uint64_t dur_bounds_ns[] = {
    1000, 2500, 5000, 10000, 25000, 50000, 100000, 250000, 500000, 1000000, 2500000, 5000000,
    10000000, 25000000, 50000000, 100000000, 250000000, 500000000, 1000000000, 2500000000ULL,
    5000000000ULL, 10000000000ULL,
};
#define NDUR (sizeof dur_bounds_ns / sizeof dur_bounds_ns[0])

static void hist_buckets(sbuf *b, const char *name, const char *labels, const lhist *h, const uint64_t *bounds,
                         size_t nb, double scale) {
    uint64_t cum = 0;
    unsigned i = 0;
    for (size_t k = 0; k < nb; k++) {
        unsigned last = lh_index(bounds[k]);
        for (; i <= last; i++) cum += h->counts[i];
        sb_addf(b, "%s_bucket{%s%sle=\"%.9g\"} %llu\n", name, labels, *labels ? "," : "", (double)bounds[k] * scale,
                (unsigned long long)cum);
    }
    sb_addf(b, "%s_bucket{%s%sle=\"+Inf\"} %llu\n", name, labels, *labels ? "," : "", (unsigned long long)h->total);
    if (*labels) {
        sb_addf(b, "%s_sum{%s} %.9g\n", name, labels, (double)h->sum * scale);
        sb_addf(b, "%s_count{%s} %llu\n", name, labels, (unsigned long long)h->total);
    } else {
        sb_addf(b, "%s_sum %.9g\n", name, (double)h->sum * scale);
        sb_addf(b, "%s_count %llu\n", name, (unsigned long long)h->total);
    }
}

static void per_command(command *cmd, void *ud) {
    cmd_walk *w = ud;
    sbuf *b = w->b;
    if (w->what == W_DURATION) {
        const lhist *h = latency_hist_of(cmd);
        if (!h) return;
        char labels[96];
        snprintf(labels, sizeof labels, "cmd=\"%s\"", cmd->fullname);
        hist_buckets(b, "ferry_command_duration_seconds", labels, h, dur_bounds_ns, NDUR, 1e-9);
        return;
    }
    if (!cmd->calls && !cmd->failed_calls && !cmd->rejected_calls) return;
    unsigned long long v = w->what == W_CALLS ? cmd->calls : w->what == W_FAILED ? cmd->failed_calls
                                                                                  : cmd->rejected_calls;
    const char *name = w->what == W_CALLS    ? "ferry_commands_total"
                       : w->what == W_FAILED ? "ferry_commands_failed_calls_total"
                                             : "ferry_commands_rejected_calls_total";
    sb_addf(b, "%s{cmd=\"", name);
    label_value(b, cmd->fullname);
    sb_addf(b, "\"} %llu\n", v);
}

static void render_metrics(sbuf *b) {
    const server_stats *s = &srv.stats;
    size_t nclients = 0;
    uint64_t high_water = s->out_high_water;
    for (client *c = srv.clients; c; c = c->next) {
        if (c->flags & CF_FAKE) continue;
        nclients++;
        uint64_t used = client_out_used(c);
        if (c->out_peak > high_water) high_water = c->out_peak;
        if (used > high_water) high_water = used;
    }
    scalar(b, "ferry_up", "gauge", "Whether the server is up (always 1 when it answers).", 1);
    scalar(b, "ferry_uptime_in_seconds", "gauge", "Seconds since the server started.",
           (unsigned long long)((ev_now_ms() - srv.start_ms) / 1000));
    family(b, "ferry_version_info", "gauge", "Version information: the Redis version reported and ferry's own.");
    sb_addf(b, "ferry_version_info{version=\"%s\",ferry_version=\"%s\"} 1\n", FERRY_VERSION, FERRY_OWN_VERSION);
    scalar(b, "ferry_connected_clients", "gauge", "Number of client connections.", nclients);
    scalar(b, "ferry_blocked_clients", "gauge", "Clients blocked in a blocking command.", srv.blocked_clients);
    scalar(b, "ferry_rejected_connections_total", "counter", "Connections rejected because of maxclients.",
           s->rejected_conn);
    scalar(b, "ferry_connections_received_total", "counter", "Connections accepted.", s->numconnections);
    scalar(b, "ferry_memory_used_bytes", "gauge", "Bytes allocated by the server.", zmalloc_used());
    scalar(b, "ferry_memory_rss_bytes", "gauge", "Resident set size of the process.", rss_bytes());
    family(b, "ferry_db_keys", "gauge", "Keys per database.");
    for (int i = 0; i < db_count(); i++) sb_addf(b, "ferry_db_keys{db=\"db%d\"} %zu\n", i, dict_size(&db_get(i)->keys));
    family(b, "ferry_db_keys_expiring", "gauge", "Keys with an expiry per database.");
    for (int i = 0; i < db_count(); i++) sb_addf(b, "ferry_db_keys_expiring{db=\"db%d\"} %zu\n", i, db_get(i)->expires);
    scalar(b, "ferry_keyspace_hits_total", "counter", "Key lookups that found the key.", s->keyspace_hits);
    scalar(b, "ferry_keyspace_misses_total", "counter", "Key lookups that did not find the key.", s->keyspace_misses);
    scalar(b, "ferry_expired_keys_total", "counter", "Keys removed because they expired.", s->expiredkeys);
    scalar(b, "ferry_evicted_keys_total", "counter", "Keys evicted because of maxmemory.", s->evictedkeys);
    scalar(b, "ferry_commands_processed_total", "counter", "Commands executed.", s->numcommands);
    scalar(b, "ferry_net_input_bytes_total", "counter", "Bytes read from client sockets.", s->net_input_bytes);
    scalar(b, "ferry_net_output_bytes_total", "counter", "Bytes written to client sockets.", s->net_output_bytes);
    scalar(b, "ferry_active_expire_cycles_total", "counter", "Active expiry cycles run by the cron.",
           s->active_expire_cycles);
    scalar(b, "ferry_active_expire_time_cap_reached_total", "counter",
           "Active expiry cycles that ran out of their time budget.", s->expire_time_cap_count);
    family(b, "ferry_active_expire_cpu_seconds_total", "counter", "Time spent in active expiry cycles.");
    sb_addf(b, "ferry_active_expire_cpu_seconds_total %.6f\n", (double)s->expire_cycle_us / 1e6);
    scalar(b, "ferry_output_ring_high_water_bytes", "gauge",
           "Most bytes staged in one connection's output ring since start (or CONFIG RESETSTAT).", high_water);
    family(b, "ferry_syscalls_total", "counter", "System calls of the network path.");
    sb_addf(b, "ferry_syscalls_total{syscall=\"read\"} %llu\n", (unsigned long long)s->reads);
    sb_addf(b, "ferry_syscalls_total{syscall=\"writev\"} %llu\n", (unsigned long long)s->writes);
    sb_addf(b, "ferry_syscalls_total{syscall=\"epoll_wait\"} %llu\n",
            (unsigned long long)(srv.el ? srv.el->polls : 0));
    family(b, "ferry_errors_total", "counter", "Error replies by error prefix.");
    for (int i = 0; i < g_nerrstats; i++) {
        sb_adds(b, "ferry_errors_total{err=\"");
        label_value(b, g_errstats[i].name);
        sb_addf(b, "\"} %llu\n", g_errstats[i].count);
    }
    cmd_walk w = {b, W_CALLS};
    family(b, "ferry_commands_total", "counter", "Calls per command.");
    command_foreach(per_command, &w);
    w.what = W_FAILED;
    family(b, "ferry_commands_failed_calls_total", "counter", "Calls per command that replied an error.");
    command_foreach(per_command, &w);
    w.what = W_REJECTED;
    family(b, "ferry_commands_rejected_calls_total", "counter", "Calls per command refused before execution.");
    command_foreach(per_command, &w);
    w.what = W_DURATION;
    family(b, "ferry_command_duration_seconds", "histogram",
           "Command execution time (recorded when latency-tracking is yes).");
    command_foreach(per_command, &w);
    static const uint64_t batch_bounds[] = {1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1024};
    family(b, "ferry_batch_size", "histogram", "Commands executed per read() of a client socket.");
    hist_buckets(b, "ferry_batch_size", "", latency_hist_batch(), batch_bounds,
                 sizeof batch_bounds / sizeof batch_bounds[0], 1.0);
    repl_summary rsum;
    repl_get_summary(&rsum);
    scalar(b, "ferry_replica", "gauge", "1 if this server is a replica (REPLICAOF), 0 if a primary.", (unsigned long long)rsum.replica);
    scalar(b, "ferry_master_link_up", "gauge", "1 while a replica's link to its primary is up.", (unsigned long long)rsum.link_up);
    scalar(b, "ferry_connected_replicas", "gauge", "Replicas connected to this server.", (unsigned long long)rsum.replicas);
    scalar(b, "ferry_repl_offset_bytes", "gauge", "Replication stream offset (master_repl_offset; a full sync moves a replica's).",
           (unsigned long long)rsum.offset);
    scalar(b, "ferry_replica_lag_bytes", "gauge", "Bytes of the stream the slowest online replica has not acknowledged.",
           (unsigned long long)rsum.max_lag_bytes);
    scalar(b, "ferry_metrics_scrapes_total", "counter", "Scrapes of this endpoint.", scrapes);
}

/* ---------------------------------------------------------- connections */

static void mc_read(evloop *el, int fd, void *data, int mask);
static void mc_write(evloop *el, int fd, void *data, int mask);

static void mc_close(mconn *m) {
    ev_del(srv.el, m->fd, EV_READABLE | EV_WRITABLE);
    close(m->fd);
    if (m->prev) m->prev->next = m->next;
    else conns = m->next;
    if (m->next) m->next->prev = m->prev;
    nconns--;
    sb_free(&m->out);
    zfree(m->in);
    zfree(m);
}

static void respond(mconn *m, int code, const char *reason, const char *ctype, const char *body, size_t blen,
                    int head_only, const char *extra) {
    sb_addf(&m->out,
            "HTTP/1.1 %d %s\r\nContent-Type: %s\r\nContent-Length: %zu\r\nConnection: %s\r\n%s\r\n", code, reason,
            ctype, blen, m->close_after ? "close" : "keep-alive", extra ? extra : "");
    if (!head_only) sb_add(&m->out, body, blen);
}

static void respond_error(mconn *m, int code, const char *reason, const char *extra) {
    char body[128];
    int n = snprintf(body, sizeof body, "%d %s\n", code, reason);
    m->close_after = 1;
    respond(m, code, reason, "text/plain; charset=utf-8", body, (size_t)n, 0, extra);
}

/* Case-insensitive search of header `name` in the header block; value span. */
static int header_value(const char *hdr, size_t len, const char *name, const char **v, size_t *vlen) {
    size_t nl = strlen(name);
    const char *p = hdr, *end = hdr + len;
    while (p < end) {
        const char *eol = memchr(p, '\n', (size_t)(end - p));
        if (!eol) eol = end;
        if ((size_t)(eol - p) > nl && strncasecmp(p, name, nl) == 0 && p[nl] == ':') {
            const char *s = p + nl + 1, *e = eol;
            while (s < e && (*s == ' ' || *s == '\t')) s++;
            while (e > s && (e[-1] == '\r' || e[-1] == ' ' || e[-1] == '\t')) e--;
            *v = s;
            *vlen = (size_t)(e - s);
            return 1;
        }
        p = eol + 1;
    }
    return 0;
}

static int token_is(const char *p, size_t n, const char *lit) { return strlen(lit) == n && strncasecmp(p, lit, n) == 0; }

/* Handles one complete request of hlen bytes (header ending in CRLFCRLF). */
static void handle_request(mconn *m, const char *req, size_t hlen) {
    const char *eol = memchr(req, '\r', hlen);
    const char *sp1 = memchr(req, ' ', (size_t)(eol - req));
    const char *sp2 = sp1 ? memchr(sp1 + 1, ' ', (size_t)(eol - sp1 - 1)) : NULL;
    if (!sp1 || !sp2 || sp1 == req || sp2 == sp1 + 1 || eol[1] != '\n') {
        respond_error(m, 400, "Bad Request", NULL);
        return;
    }
    const char *method = req, *path = sp1 + 1, *ver = sp2 + 1;
    size_t mlen = (size_t)(sp1 - req), plen = (size_t)(sp2 - path), vlen = (size_t)(eol - ver);
    int http11 = token_is(ver, vlen, "HTTP/1.1");
    if (!http11 && !token_is(ver, vlen, "HTTP/1.0")) {
        respond_error(m, 400, "Bad Request", NULL);
        return;
    }
    const char *hdrs = eol + 2, *v;
    size_t hl = hlen - (size_t)(hdrs - req), vl;
    for (size_t i = 0; i < hl; i++) /* control bytes other than CR/LF/TAB: malformed */
        if ((unsigned char)hdrs[i] < 32 && hdrs[i] != '\r' && hdrs[i] != '\n' && hdrs[i] != '\t') {
            respond_error(m, 400, "Bad Request", NULL);
            return;
        }
    int keep = http11;
    if (header_value(hdrs, hl, "Connection", &v, &vl)) {
        if (token_is(v, vl, "close")) keep = 0;
        else if (token_is(v, vl, "keep-alive")) keep = 1;
    }
    int is_get = token_is(method, mlen, "GET") && memcmp(method, "GET", 3) == 0;
    int is_head = token_is(method, mlen, "HEAD") && memcmp(method, "HEAD", 4) == 0;
    if (!is_get && !is_head) {
        respond_error(m, 405, "Method Not Allowed", "Allow: GET, HEAD\r\n");
        return;
    }
    if ((header_value(hdrs, hl, "Content-Length", &v, &vl) && !(vl == 1 && v[0] == '0')) ||
        header_value(hdrs, hl, "Transfer-Encoding", &v, &vl)) {
        respond_error(m, 400, "Bad Request", NULL); /* a GET with a body: we would not know where it ends */
        return;
    }
    const char *q = memchr(path, '?', plen);
    if (q) plen = (size_t)(q - path);
    if (!(plen == 8 && memcmp(path, "/metrics", 8) == 0)) {
        m->close_after = !keep;
        respond(m, 404, "Not Found", "text/plain; charset=utf-8", "404 Not Found\n", 14, is_head, NULL);
        return;
    }
    m->close_after = !keep;
    scrapes++;
    sbuf body = {0};
    render_metrics(&body);
    respond(m, 200, "OK", "text/plain; version=0.0.4; charset=utf-8", body.p, body.len, is_head, NULL);
    sb_free(&body);
}

static const char *find_header_end(const char *p, size_t n) {
    for (size_t i = 3; i < n; i++)
        if (p[i] == '\n' && p[i - 1] == '\r' && p[i - 2] == '\n' && p[i - 3] == '\r') return p + i + 1;
    return NULL;
}

static int mc_flush(mconn *m);

/* Answers the complete requests buffered, while output stays small, and
 * writes the answers. m may be freed. */
static void mc_process(mconn *m) {
    for (;;) {
        int progressed = 0;
        while (!m->close_after && m->out.len - m->outpos < MC_OUT_PAUSE) {
            const char *end = find_header_end(m->in, m->inlen);
            if (!end) {
                if (m->inlen >= MC_HDR_MAX) respond_error(m, 431, "Request Header Fields Too Large", NULL);
                break;
            }
            size_t hlen = (size_t)(end - m->in);
            handle_request(m, m->in, hlen);
            memmove(m->in, end, m->inlen - hlen);
            m->inlen -= hlen;
            progressed = 1;
        }
        if (mc_flush(m) < 0) return;
        if (!progressed || m->out.len) return; /* nothing more, or waiting for the socket */
    }
}

/* Writes what it can; if the socket is full, waits for writability (and
 * stops reading meanwhile). Closes after the last byte if asked. Returns -1
 * if m was closed (freed). */
static int mc_flush(mconn *m) {
    while (m->outpos < m->out.len) {
        ssize_t n = write(m->fd, m->out.p + m->outpos, m->out.len - m->outpos);
        if (n > 0) {
            m->outpos += (size_t)n;
            m->last_ms = srv.now_ms;
            continue;
        }
        if (n < 0 && errno == EINTR) continue;
        if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
            if (ev_get_mask(srv.el, m->fd) & EV_READABLE) ev_del(srv.el, m->fd, EV_READABLE);
            if (!(ev_get_mask(srv.el, m->fd) & EV_WRITABLE)) ev_add(srv.el, m->fd, EV_WRITABLE, mc_write, m);
            return 0;
        }
        mc_close(m);
        return -1;
    }
    m->out.len = m->outpos = 0;
    if (m->close_after) {
        mc_close(m);
        return -1;
    }
    if (ev_get_mask(srv.el, m->fd) & EV_WRITABLE) ev_del(srv.el, m->fd, EV_WRITABLE);
    if (!(ev_get_mask(srv.el, m->fd) & EV_READABLE)) ev_add(srv.el, m->fd, EV_READABLE, mc_read, m);
    return 0;
}

static void mc_write(evloop *el, int fd, void *data, int mask) {
    mconn *m = data;
    if (mc_flush(m) < 0) return;
    if (m->out.len == 0 && m->inlen) mc_process(m); /* requests pipelined behind */
}

static void mc_read(evloop *el, int fd, void *data, int mask) {
    mconn *m = data;
    if (m->inlen >= MC_HDR_MAX) return; /* cannot happen: 431 closes */
    ssize_t n = read(fd, m->in + m->inlen, MC_HDR_MAX - m->inlen);
    if (n == 0 || (n < 0 && errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR)) {
        mc_close(m);
        return;
    }
    if (n < 0) return;
    m->inlen += (size_t)n;
    m->last_ms = srv.now_ms;
    mc_process(m);
}

static void mc_accept(evloop *el, int fd, void *data, int mask) {
    for (int i = 0; i < 100; i++) {
        int cfd = accept4(fd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
        if (cfd == -1) return;
        if (nconns >= MC_MAX) {
            close(cfd);
            continue;
        }
        mconn *m = zcalloc(sizeof *m);
        m->fd = cfd;
        m->in = zmalloc(MC_HDR_MAX);
        m->last_ms = srv.now_ms;
        if (ev_add(el, cfd, EV_READABLE, mc_read, m) == -1) {
            close(cfd);
            zfree(m->in);
            zfree(m);
            continue;
        }
        m->next = conns;
        if (conns) conns->prev = m;
        conns = m;
        nconns++;
    }
}

static long mc_cron(evloop *el, long long id, void *data) {
    for (mconn *m = conns, *next; m; m = next) {
        next = m->next;
        if (srv.now_ms - m->last_ms > MC_IDLE_MS) mc_close(m);
    }
    return 1000;
}


int metrics_listen(void) {
    int port = srv.cfg.metrics_port;
    if (port <= 0) return 0;
    for (int i = 0; i < srv.cfg.bind_count && nlfds < CONFIG_MAX_BIND; i++) {
        const char *a = srv.cfg.bind[i];
        int optional = a[0] == '-';
        if (optional) a++;
        int fd = net_listen_tcp(a, port, 64);
        if (fd == -1) {
            if (optional) continue;
            server_log(LOG_WARNING_, "Could not create metrics listening socket %s:%d: %s", a, port, strerror(errno));
            return -1;
        }
        lfds[nlfds++] = fd;
        ev_add(srv.el, fd, EV_READABLE, mc_accept, NULL);
    }
    if (nlfds == 0) return -1;
    ev_timer_add(srv.el, 1000, mc_cron, NULL);
    server_log(LOG_NOTICE_, "Prometheus metrics on port %d (GET /metrics)", port);
    return 0;
}

void metrics_render(char **out, size_t *len) {
    sbuf b = {0};
    render_metrics(&b);
    *len = b.len;
    *out = sb_take(&b);
}
