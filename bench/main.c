/* main.c - ferry-bench: options, test sequencing and output.
 *
 * Why ferry-bench exists: redis-benchmark tops out around 4-5 Mops/s on one
 * core, below what a pipelined single-threaded server can serve, so at high
 * pipeline depths it measures itself. ferry-bench pre-encodes its requests,
 * drives many connections from one epoll thread (or --threads N) and only
 * counts reply framing, so the server is the bottleneck. It takes
 * redis-benchmark's shared options with the same meaning and prints the same
 * --csv columns (plus p999_latency_ms) and -q lines, so scripts can switch
 * between the two; it adds an open-loop mode (--rate) measured without
 * coordinated omission.
 */
#include "bench.h"
#include "prefill.h"

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#define FB_PREFILL_TIMEOUT_MS 30000

static void fb_usage(FILE *f) {
    fputs(
        "Usage: ferry-bench [OPTIONS]\n"
        "\n"
        "Load generator for Redis-protocol servers (pipelined, epoll, pre-encoded requests).\n"
        "\n"
        "Options shared with redis-benchmark:\n"
        " -h <hostname>      Server hostname (default 127.0.0.1)\n"
        " -p <port>          Server port (default 6379)\n"
        " -s <socket>        Server socket (overrides host and port)\n"
        " --tls              Connect over TLS (needs a build with TLS=yes, the default)\n"
        " --cacert <file>    CA certificate file to verify the server with (default: no check)\n"
        " --cert <file>      Client certificate, --key <file> its private key\n"
        " --sni <host>       Server name indication\n"
        " -c <clients>       Number of parallel connections (default 50)\n"
        " -n <requests>      Total number of requests (default 100000)\n"
        " -P <numreq>        Pipeline <numreq> requests (default 1). Closed loop: each\n"
        "                    connection sends a batch of numreq and waits for all replies.\n"
        "                    Open loop: most requests in flight per connection.\n"
        " -t <tests>         Comma separated tests, case-insensitive: ping (= ping_inline,\n"
        "                    ping_mbulk), set, get, incr, mset, mget (10 keys each),\n"
        "                    lrange_100, lrange_300, lrange_500, lrange_600 (lrange = all\n"
        "                    four), hgetall, smembers, zrange, mixed. Tests run in that\n"
        "                    order. Default: ping ... mget.\n"
        "                    Collection tests read one fixed key, written (not timed) just\n"
        "                    before the test on a connection of its own, pipelined: DEL,\n"
        "                    then RPUSH/HSET/SADD/ZADD in chunks of up to 100 elements.\n"
        "                    lrange_N: LRANGE mylist 0 N-1; mylist gets 600 values.\n"
        "                    hgetall: HGETALL myhash, 1000 fields element:%012d.\n"
        "                    smembers: SMEMBERS myset, 1000 members element:%012d.\n"
        "                    zrange: ZRANGE myzset 0 -1 WITHSCORES, the same 1000\n"
        "                    members, scores 0..999.\n"
        " -d <size>          Data size in bytes of SET/MSET values, list elements, hash\n"
        "                    values; set/zset members are padded with x to it (default 3)\n"
        " -r <keyspacelen>   Random keys key:000000000000 .. keyspacelen-1 (12 digits);\n"
        "                    without -r every request uses the literal key:__rand_int__\n"
        "                    (counter:__rand_int__ for incr), like redis-benchmark.\n"
        "                    The collection tests ignore it (one fixed key each).\n"
        " -q                 Quiet: one line per test\n"
        " --csv              CSV output (redis-benchmark's columns + p999_latency_ms)\n"
        "\n"
        "ferry-bench options:\n"
        " --rate <ops/s>     Open loop: total request rate, evenly spaced over connections;\n"
        "                    latency counted from each request's intended send time\n"
        " --duration <s>     Run each test for this long instead of -n requests\n"
        " --threads <n>      Event-loop threads, connections spread over them (default 1)\n"
        " --ratio <S:G>      SET:GET ratio of the mixed test (default 1:10)\n"
        " --seed <n>         Seed for the random keys (default 1)\n"
        " --warmup <s>       Run each test unmeasured for this long first (default 0)\n"
        " --congestion <cc>  TCP congestion control of the connections (cubic, bbr, reno...;\n"
        "                    default: the system's, net.ipv4.tcp_congestion_control)\n"
        " --help             Output this help and exit\n"
        "\n"
        "Exit status: 0, or 1 on any error reply, connection loss or bad option.\n",
        f);
}

static void fb_bad_opt(const char *msg, const char *arg) {
    fprintf(stderr, "ferry-bench: %s%s%s\n", msg, arg ? ": " : "", arg ? arg : "");
    fprintf(stderr, "Try 'ferry-bench --help'.\n");
    exit(1);
}

static long long fb_parse_ll(const char *opt, const char *s, long long lo, long long hi) {
    char *end;
    long long v;
    errno = 0;
    v = strtoll(s, &end, 10);
    if (errno || end == s || *end || v < lo || v > hi) fb_bad_opt("invalid value for option", opt);
    return v;
}

static double fb_parse_d(const char *opt, const char *s, double lo) {
    char *end;
    double v;
    errno = 0;
    v = strtod(s, &end);
    if (errno || end == s || *end || !(v >= lo) || v > 1e12) fb_bad_opt("invalid value for option", opt);
    return v;
}

/* -t list: returns the selected test bits */
static unsigned fb_parse_tests(const char *list) {
    unsigned bits = 0;
    char *copy = strdup(list), *save = NULL, *tok;
    if (!copy) fb_bad_opt("out of memory", NULL);
    for (tok = strtok_r(copy, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
        int t, found = 0;
        while (*tok == ' ') tok++;
        if (!strcasecmp(tok, "ping")) {
            bits |= (1u << FB_T_PING_INLINE) | (1u << FB_T_PING_MBULK);
            continue;
        }
        if (!strcasecmp(tok, "lrange")) {
            bits |= (1u << FB_T_LRANGE_100) | (1u << FB_T_LRANGE_300) | (1u << FB_T_LRANGE_500) |
                    (1u << FB_T_LRANGE_600);
            continue;
        }
        for (t = 0; t < FB_T_COUNT; t++) {
            if (!strcasecmp(tok, fb_test_tname(t))) {
                bits |= 1u << t;
                found = 1;
            }
        }
        if (!found && *tok) fprintf(stderr, "ferry-bench: unknown test '%s' ignored\n", tok);
    }
    free(copy);
    if (!bits) fb_bad_opt("no known test selected", list);
    return bits;
}

static void fb_parse_ratio(fb_config *cfg, const char *s) {
    char *end;
    long a, b;
    errno = 0;
    a = strtol(s, &end, 10);
    if (errno || end == s || *end != ':') fb_bad_opt("--ratio wants SET:GET, e.g. 1:10", s);
    s = end + 1;
    b = strtol(s, &end, 10);
    if (errno || end == s || *end || a < 0 || b < 0 || a + b == 0 || a > 10000 || b > 10000)
        fb_bad_opt("--ratio wants SET:GET, e.g. 1:10", s);
    cfg->ratio_set = (int)a;
    cfg->ratio_get = (int)b;
}

static void fb_parse_args(fb_config *cfg, int argc, char **argv) {
    int i;
    for (i = 1; i < argc; i++) {
        char *a = argv[i], *val = NULL, *eq;
        char name[32];
        if (!strcmp(a, "--help")) {
            fb_usage(stdout);
            exit(0);
        }
        if (!strcmp(a, "-q")) { cfg->quiet = 1; continue; }
        if (!strcmp(a, "--csv")) { cfg->csv = 1; continue; }
        if (!strcmp(a, "--tls")) { cfg->tls.on = 1; continue; }
        /* every other option takes a value: "-c 50", "--rate 1000" or "--rate=1000" */
        {
            size_t n = strlen(a) < sizeof name - 1 ? strlen(a) : sizeof name - 1;
            memcpy(name, a, n); /* (snprintf here trips gcc's -Wformat-truncation under ASan) */
            name[n] = '\0';
        }
        if (!strncmp(a, "--", 2) && (eq = strchr(a, '=')) != NULL) {
            if ((size_t)(eq - a) < sizeof name) name[eq - a] = '\0';
            val = eq + 1;
        } else if (i + 1 < argc) {
            val = argv[++i];
        } else {
            fb_bad_opt("option needs a value (or is unknown)", a);
        }
        if (!strcmp(name, "-h")) cfg->host = val;
        else if (!strcmp(name, "-p")) cfg->port = (int)fb_parse_ll(name, val, 1, 65535);
        else if (!strcmp(name, "-s")) cfg->socket_path = val;
        else if (!strcmp(name, "--congestion")) cfg->congestion = val;
        else if (!strcmp(name, "-c")) cfg->clients = (int)fb_parse_ll(name, val, 1, 100000);
        else if (!strcmp(name, "-n")) cfg->requests = fb_parse_ll(name, val, 1, (long long)1e15);
        else if (!strcmp(name, "-P")) cfg->pipeline = (int)fb_parse_ll(name, val, 1, 1000000);
        else if (!strcmp(name, "-t")) cfg->tests = fb_parse_tests(val);
        else if (!strcmp(name, "-d")) cfg->datasize = (int)fb_parse_ll(name, val, 0, 512 << 20);
        else if (!strcmp(name, "-r")) cfg->keyspace = fb_parse_ll(name, val, 0, 999999999999LL);
        else if (!strcmp(name, "--rate")) cfg->rate = fb_parse_d(name, val, 0);
        else if (!strcmp(name, "--duration")) cfg->duration = fb_parse_d(name, val, 0);
        else if (!strcmp(name, "--threads")) cfg->threads = (int)fb_parse_ll(name, val, 1, 1024);
        else if (!strcmp(name, "--ratio")) fb_parse_ratio(cfg, val);
        else if (!strcmp(name, "--seed")) cfg->seed = (uint64_t)fb_parse_ll(name, val, 0, (long long)(~0ull >> 1));
        else if (!strcmp(name, "--warmup")) cfg->warmup = fb_parse_d(name, val, 0);
        else if (!strcmp(name, "--cacert")) cfg->tls.cacert = val;
        else if (!strcmp(name, "--cert")) cfg->tls.cert = val;
        else if (!strcmp(name, "--key")) cfg->tls.key = val;
        else if (!strcmp(name, "--sni")) cfg->tls.sni = val;
        else fb_bad_opt("unknown option", a);
    }
    if (cfg->rate < 0 || (cfg->rate > 0 && cfg->rate < 1e-3)) fb_bad_opt("--rate too small", NULL);
}

static double fb_ms(double ns) { return ns / 1e6; }

static void fb_print(const fb_config *cfg, const char *title, const fb_result *r) {
    double rps = r->elapsed > 0 ? (double)r->replies / r->elapsed : 0.0;
    const fb_hist *h = &r->hist;
    double avg = fb_ms(fb_hist_mean(h)), mn = fb_ms((double)(h->count ? h->min : 0));
    double p50 = fb_ms(fb_hist_pct(h, 50)), p95 = fb_ms(fb_hist_pct(h, 95));
    double p99 = fb_ms(fb_hist_pct(h, 99)), p999 = fb_ms(fb_hist_pct(h, 99.9));
    double mx = fb_ms((double)h->max);

    if (cfg->csv) {
        printf("\"%s\",\"%.2f\",\"%.3f\",\"%.3f\",\"%.3f\",\"%.3f\",\"%.3f\",\"%.3f\",\"%.3f\"\n", title,
               rps, avg, mn, p50, p95, p99, mx, p999);
    } else if (cfg->quiet) {
        printf("%s: %.2f requests per second, p50=%.3f msec\n", title, rps, p50);
    } else {
        printf("====== %s ======\n", title);
        printf("  %llu requests completed in %.2f seconds\n", (unsigned long long)r->replies,
               r->elapsed);
        printf("  %d parallel clients, pipeline %d, %d thread%s\n", cfg->clients, cfg->pipeline,
               cfg->threads, cfg->threads == 1 ? "" : "s");
        printf("  %d bytes payload, ", cfg->datasize);
        if (cfg->keyspace > 0) printf("keyspace %lld random keys\n", cfg->keyspace);
        else printf("fixed key\n");
        if (cfg->rate > 0)
            printf("  open loop: target %.2f, achieved %.2f requests per second\n", cfg->rate, rps);
        else
            printf("  closed loop: %.2f requests per second\n", rps);
        printf("  latency (msec): avg %.3f  min %.3f  p50 %.3f  p95 %.3f  p99 %.3f  p99.9 %.3f  max %.3f\n",
               avg, mn, p50, p95, p99, p999, mx);
        if (r->errors) printf("  %llu error replies\n", (unsigned long long)r->errors);
        printf("\n");
    }
    fflush(stdout);
}

/* write the collection test's data on a connection of its own; 0 or -1 */
static int fb_prefill(const fb_config *cfg, const fb_workload *w, const char *title) {
    char err[160];
    int fd, rc;
    if (!fb_prefill_ncmds(w)) return 0;
    fd = fb_connect_one(cfg);
    if (fd < 0) return -1;
    rc = fb_prefill_run(fd, w, FB_PREFILL_TIMEOUT_MS, err, sizeof err);
    fb_io_close(fd);
    if (rc < 0) fprintf(stderr, "ferry-bench: %s: prefill failed: %s\n", title, err);
    return rc;
}

/* error replies go to stderr; returns 1 if there were any */
static int fb_report_errors(const char *title, const char *phase, const fb_result *r) {
    if (!r->errors) return 0;
    fprintf(stderr, "ferry-bench: %s%s: %llu of %llu replies were errors, first: %s\n", title, phase,
            (unsigned long long)r->errors, (unsigned long long)r->replies,
            r->have_errtext ? r->errtext : "(unknown)");
    return 1;
}

int main(int argc, char **argv) {
    fb_config cfg;
    fb_conns *cs;
    fb_result *res;
    int t, status = 0;

    memset(&cfg, 0, sizeof cfg);
    cfg.host = "127.0.0.1";
    cfg.port = 6379;
    cfg.clients = 50;
    cfg.requests = 100000;
    cfg.pipeline = 1;
    cfg.datasize = 3;
    cfg.threads = 1;
    cfg.ratio_set = 1;
    cfg.ratio_get = 10;
    cfg.seed = 1;
    cfg.tests = FB_T_DEFAULT_MASK;
    fb_parse_args(&cfg, argc, argv);
    if (cfg.threads > cfg.clients) cfg.threads = cfg.clients;

    signal(SIGPIPE, SIG_IGN);
    fb_tls_setup(&cfg.tls);
    res = malloc(sizeof *res);
    if (!res) return 1;
    cs = fb_connect_all(&cfg);
    if (!cs) return 1;

    if (cfg.csv)
        printf("\"test\",\"rps\",\"avg_latency_ms\",\"min_latency_ms\",\"p50_latency_ms\","
               "\"p95_latency_ms\",\"p99_latency_ms\",\"max_latency_ms\",\"p999_latency_ms\"\n");
    for (t = 0; t < FB_T_COUNT; t++) {
        fb_workload w;
        fb_pool pool;
        char tbuf[64];
        const char *title;
        if (!(cfg.tests & (1u << t))) continue;
        w.test = t;
        w.datasize = cfg.datasize;
        w.keyspace = cfg.keyspace;
        w.ratio_set = cfg.ratio_set;
        w.ratio_get = cfg.ratio_get;
        w.seed = cfg.seed;
        title = fb_test_title(&w, tbuf, sizeof tbuf);
        if (fb_pool_build(&pool, &w, (size_t)cfg.pipeline) < 0) {
            fprintf(stderr, "ferry-bench: out of memory encoding %s requests\n", title);
            return 1;
        }
        if (fb_prefill(&cfg, &w, title) < 0) return 1;
        if (cfg.warmup > 0) {
            fb_run_test(&cfg, cs, &pool, 0, cfg.warmup, res);
            status |= fb_report_errors(title, " (warm-up)", res);
        }
        fb_run_test(&cfg, cs, &pool, 1, 0, res);
        fb_pool_free(&pool);
        fb_print(&cfg, title, res);
        status |= fb_report_errors(title, "", res);
    }
    fb_close_all(cs);
    free(res);
    return status;
}
