/* bench.h - shared configuration and run interface of ferry-bench.
 *
 * Why: main.c (options, output) and loop.c (connections, epoll event loop,
 * threads) meet only here: main.c fills fb_config and calls fb_run_test once
 * per test, loop.c fills fb_result.
 */
#ifndef FB_BENCH_H
#define FB_BENCH_H

#include "fbtls.h"
#include <stdint.h>

#include "hist.h"
#include "work.h"

typedef struct fb_config {
    const char *host;
    int port;
    const char *socket_path;  /* -s: a Unix socket instead of host:port */
    const char *congestion;   /* --congestion: TCP congestion control of the sockets, NULL = the system's */
    int clients;          /* -c */
    long long requests;   /* -n */
    int pipeline;         /* -P: closed loop batch; open loop: max in flight per connection */
    int datasize;         /* -d */
    long long keyspace;   /* -r (0: fixed key) */
    int quiet, csv;
    double rate;          /* --rate total ops/s; 0: closed loop */
    double duration;      /* --duration seconds; 0: use -n */
    int threads;          /* --threads */
    int ratio_set, ratio_get;
    uint64_t seed;
    double warmup;        /* --warmup seconds */
    unsigned tests;       /* bit (1u << FB_T_*) per selected test */
    fb_tls_opts tls;      /* --tls, --cacert, --cert, --key, --sni */
} fb_config;

typedef struct fb_result {
    uint64_t replies;     /* complete replies in the measured window */
    uint64_t errors;      /* ...of which error replies */
    uint64_t sent;        /* requests sent */
    double elapsed;       /* seconds from start to the last reply */
    fb_hist hist;         /* latency, ns */
    int have_errtext;
    char errtext[128];    /* first error reply's text */
} fb_result;

typedef struct fb_conns fb_conns;

/* Connect cfg->clients sockets (blocking connect, then non-blocking,
 * TCP_NODELAY). Prints the reason and returns NULL on failure. */
fb_conns *fb_connect_all(const fb_config *cfg);
void fb_close_all(fb_conns *cs);

/* One more connection, blocking, TCP_NODELAY (for prefills). Returns the fd,
 * or -1 with the reason printed. */
int fb_connect_one(const fb_config *cfg);

/* Run one test over the connections. measure == 0 is a warm-up: runs for
 * `seconds` (closed loop) or rate*seconds requests (open loop) and records
 * nothing. A server that closes a connection, or sends something that is not
 * RESP, ends the program with status 1. */
void fb_run_test(const fb_config *cfg, fb_conns *cs, const fb_pool *pool, int measure,
                 double seconds, fb_result *res);

#endif
