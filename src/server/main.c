/* main.c - ferry-server entry point: configuration, start-up, the cron
 * timer, signals, and clean shutdown. */
#include "acl_file.h"
#include "blocking.h"
#include "client.h"
#include "client_evict.h"
#include "command.h"
#include "cluster.h"
#include "config.h"
#include "db.h"
#include "dict.h"
#include "frand.h"
#include "info.h"
#include "latency.h"
#include "lazyfree.h"
#include "metrics.h"
#include "migrate.h"
#include "notify.h"
#include "outbuf.h"
#include "outlimit.h"
#include "persist.h"
#include "registry.h"
#include "repl.h"
#include "reply.h"
#include "server.h"
#include "supervise.h"
#include "watchdog.h"
#include "tracking.h"
#include "zmalloc.h"
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

static volatile sig_atomic_t got_signal;

static void on_signal(int sig) { got_signal = sig; }

static void setup_signals(void) {
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_signal;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGTERM, &sa, NULL);
    sigaction(SIGINT, &sa, NULL);
    signal(SIGPIPE, SIG_IGN);
    signal(SIGHUP, SIG_IGN); /* as Redis: a closing terminal or a reload request leaves the server running */
}

/* A client idle for more than `timeout` seconds is closed, unless it waits
 * in a blocking command, is subscribed or is a monitor (as Redis: those are
 * expected to be quiet). */
static int client_timed_out(const client *c, int64_t limit_ms) {
    if (limit_ms <= 0 || (c->flags & (CF_BLOCKED | CF_PUBSUB | CF_MONITOR)) || c->repl_role) return 0;
    return srv.now_ms - c->last_interaction_ms > limit_ms;
}

/* Per-client cron work: idle timeout, and output limits for clients that
 * send nothing more (a soft limit must still expire). */
static void clients_cron(void) {
    int64_t limit_ms = srv.cfg.timeout > 0 ? srv.cfg.timeout * 1000 : 0;
    for (client *c = srv.clients; c; c = c->next) {
        if (c->fd < 0 || (c->flags & CF_CLOSE_ASAP)) continue;
        if (client_timed_out(c, limit_ms)) {
            server_log(LOG_VERBOSE_, "Closing idle client");
            client_close_async(c);
            continue;
        }
        client_check_output_limits_cron(c);
        client_cron_qbuf(c);
        outbuf_cron(c);
        client_cron_argv(c);
    }
}

/* Under AddressSanitizer, free the keyspace before exiting: collection values
 * are reached through pointers stored unaligned after their key, which the
 * leak checker cannot see, so it would report every live collection as
 * leaked. A normal build exits without the walk, as Redis does. */
#if defined(__has_feature)
#if __has_feature(address_sanitizer)
#define FERRY_ASAN 1
#endif
#endif
#if defined(__SANITIZE_ADDRESS__)
#define FERRY_ASAN 1
#endif
static void free_keyspace_if_checked(void) {
#ifdef FERRY_ASAN
    for (int i = 0; i < db_count(); i++) db_flush(db_get(i));
#endif
}

/* SIGTERM / SIGINT: save first if save points are configured, as Redis
 * does; a failed save keeps the server running (logged). */
static void signal_shutdown(void) {
    if (!got_signal || srv.shutdown_asap) return;
    server_log(LOG_WARNING_, "Received %s scheduling shutdown...", got_signal == SIGINT ? "SIGINT" : "SIGTERM");
    got_signal = 0;
    if (persist_shutdown_save(0, 0) != 0) {
        server_log(LOG_WARNING_, "SIGTERM received but errors trying to shut down the server, check the logs for "
                                 "more information");
        return;
    }
    srv.shutdown_asap = 1;
}

static long server_cron(evloop *el, long long id, void *data) {
    srv.now_ms = ev_now_ms();
    srv.lruclock = (uint32_t)(srv.now_ms / 1000);
    if (srv.cron_paused) return 1000 / (srv.cfg.hz > 0 ? srv.cfg.hz : 10); /* DEBUG PAUSE-CRON */
    watchdog_tick(config_get_ll(&srv.cfg, "watchdog-period"), srv.cfg.hz);
    long period_us = 1000000 / (srv.cfg.hz > 0 ? srv.cfg.hz : 10);
    int64_t expire_t0 = ev_mono_us();
    db_active_expire(period_us / 4); /* at most 25% of the CPU, as Redis's slow cycle */
    latency_monitor_add("expire-cycle", (uint64_t)(ev_mono_us() - expire_t0) / 1000);
    db_cron_rehash(1000);
    clients_cron();
    clients_memory_grew(); /* a lowered maxmemory-clients, or growth no hook saw, is noticed within a cron period */
    blocking_handle_timeouts(srv.now_ms);
    lazyfree_cron(); /* node memory the lazy-free thread gave back */
    migrate_cron(); /* idle MIGRATE target connections */
    if (srv.tracking_clients) tracking_limit_table(); /* a limit lowered by CONFIG SET applies while idle */
    size_t used = zmalloc_used();
    if (used > srv.stat_peak_memory) srv.stat_peak_memory = used;
    info_cron_sample();
    persist_cron();
    repl_cron();
    signal_shutdown();
    return 1000 / (srv.cfg.hz > 0 ? srv.cfg.hz : 10);
}

/* The cluster's cron runs every 100 ms whatever hz is, as Redis's. */
#define CLUSTER_CRON_MS 100
static long cluster_timer(evloop *el, long long id, void *data) {
    (void)el, (void)id, (void)data;
    srv.now_ms = ev_now_ms();
    cluster_cron();
    return CLUSTER_CRON_MS;
}

/* Once every listener accepts, as Redis shows its logo: with
 * always-show-logo (or on a terminal with no logfile) a banner whose last
 * line is "PID: <pid>", the line Redis's test harness waits for before it
 * connects; else Redis's one line. */
static void show_banner(void) {
    int logo = config_is_yes(&srv.cfg, "always-show-logo") ||
               (!(srv.cfg.logfile && srv.cfg.logfile[0]) && isatty(STDOUT_FILENO));
    if (!logo) {
        server_log(LOG_NOTICE_, "Running mode=%s, port=%d.", srv.cluster_mode ? "cluster" : "standalone", srv.cfg.port);
        return;
    }
    server_log(LOG_NOTICE_, "ferry %s (redis-compatible %s), 64 bit, running in %s mode", FERRY_OWN_VERSION,
               FERRY_VERSION, srv.cluster_mode ? "cluster" : "standalone");
    server_log(LOG_NOTICE_, "Port: %d, TLS port: %d, PID: %d", srv.cfg.port, srv.cfg.tls_port, (int)srv.pid);
}

static void before_sleep(evloop *el) {
    el->busy_poll_us = srv.cfg.busy_poll_us;
    blocking_before_sleep();
    clients_process_deferred();
    clients_evict_for_memory();
    clients_free_closed();
    tracking_broadcast();
    repl_before_sleep();
    cluster_before_sleep();
    el->wait_at_most_ms = clients_flush_pending(); /* replies held back wait this long at most */
    clients_free_closed();
    if (srv.deferred_input || srv.read_again) el->dont_wait = 1; /* their next pass is due at once */
    signal_shutdown();
    if (srv.shutdown_asap) ev_stop(el);
}

/* During the start-up load: one turn of the loop without waiting, so
 * clients connect and get -LOADING (or INFO, CONFIG, SHUTDOWN...) while the
 * file is read. Non-zero once a shutdown was asked for. */
static int loading_events(void) {
    srv.el->dont_wait = 1;
    ev_process(srv.el);
    before_sleep(srv.el);
    return srv.shutdown_asap;
}

static void write_pidfile(void) {
    if (!srv.cfg.pidfile) return;
    FILE *f = fopen(srv.cfg.pidfile, "w");
    if (!f) return;
    fprintf(f, "%d\n", (int)getpid());
    fclose(f);
}

static void daemonize(void) {
    if (fork() != 0) exit(0);
    setsid();
    int fd = open("/dev/null", O_RDWR);
    if (fd != -1) {
        dup2(fd, STDIN_FILENO);
        dup2(fd, STDOUT_FILENO);
        dup2(fd, STDERR_FILENO);
        if (fd > STDERR_FILENO) close(fd);
    }
}

/* Raises the descriptor limit for maxclients (+32 for the server itself),
 * lowering maxclients when the OS refuses, as Redis does; returns the event
 * loop size. maxclients <= 2^32-1 (config), so no sum here overflows, and
 * an unlimited rlimit is never read as a negative number. */
static int open_files_limit(void) {
    struct rlimit rl;
    long long want = srv.cfg.maxclients + 32;
    if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur != RLIM_INFINITY && (rlim_t)want > rl.rlim_cur) {
        rlim_t cur = (rlim_t)want < rl.rlim_max ? (rlim_t)want : rl.rlim_max;
        rl.rlim_cur = cur;
        setrlimit(RLIMIT_NOFILE, &rl);
        getrlimit(RLIMIT_NOFILE, &rl);
        if (rl.rlim_cur != RLIM_INFINITY && (long long)rl.rlim_cur < want) {
            long long newmax = (long long)rl.rlim_cur - 32;
            if (newmax < 1) newmax = 1;
            server_log(LOG_WARNING_, "You requested maxclients of %lld requiring at least %lld max file descriptors. "
                       "Server can't set maximum open files to %lld. maxclients is now %lld.",
                       srv.cfg.maxclients, want, want, newmax);
            srv.cfg.maxclients = newmax;
        }
    }
    long long setsize = srv.cfg.maxclients + 128;
    return setsize > INT_MAX ? INT_MAX : (int)setsize;
}

int main(int argc, char **argv) {
    srv.executable = argv[0];
    config_load(&srv.cfg, argc, argv);
    int supervised = supervise_start(); /* first, as Redis: systemd hears "loading" before anything else */
    frand_init();
    uint8_t seed[16];
    frand_secure_bytes(seed, sizeof seed);
    dict_set_seed(seed);
    if (srv.cfg.daemonize && !supervised) daemonize(); /* a supervisor watches the process it started */
    srv.pid = getpid();
    srv.start_ms = srv.now_ms = ev_now_ms();
    srv.lastsave = srv.now_ms / 1000;
    srv.lruclock = (uint32_t)(srv.now_ms / 1000);
    frand_hex(srv.runid, 40);
    setup_signals();
    server_log(LOG_NOTICE_, "oO0OoO0OoO0Oo ferry is starting oO0OoO0OoO0Oo");
    server_log(LOG_NOTICE_, "ferry version=%s (redis-compatible %s), bits=64, pid=%d, just started", FERRY_OWN_VERSION,
               FERRY_VERSION, (int)srv.pid);
    config_log_ignored();
    int setsize = open_files_limit();
    srv.el = ev_create(setsize);
    if (!srv.el) {
        server_log(LOG_WARNING_, "Failed creating the event loop. Error message: '%s'", strerror(errno));
        return 1;
    }
    srv.el->before_sleep = before_sleep;
    db_init_all(srv.cfg.databases);
    registry_init();
    if (config_apply_renames() != 0) return 1;
    notify_set_flags(srv.cfg.notify_keyspace_events); /* the configured classes, now that the hooks are set */
    latency_clock_init();
    if (chdir(srv.cfg.dir) != 0) {
        server_log(LOG_WARNING_, "Can't chdir to '%s': %s", srv.cfg.dir, strerror(errno));
        return 1;
    }
    if (acl_file_startup() != 0) return 1; /* user lines, aclfile (relative to dir, as Redis) */
    config_port_changed = net_rebind;
    config_tls_changed = net_tls_configure;
    if (net_tls_configure() != 0) {
        server_log(LOG_WARNING_, "Failed to configure TLS. Check logs for more info.");
        return 1;
    }
    int listening = net_listen_all();
    if (listening != 0) {
        server_log(LOG_WARNING_, "Failed listening on port %d (%s), aborting.",
                   listening == -2 ? srv.cfg.tls_port : srv.cfg.port, listening == -2 ? "tls" : "tcp");
        return 1;
    }
    char neterr[256];
    if (net_listen_unix(neterr, sizeof neterr) != 0) {
        server_log(LOG_WARNING_, "Failed opening Unix socket: %s", neterr);
        return 1;
    }
    if (!net_listening()) {
        server_log(LOG_WARNING_, "Configured to not listen anywhere, exiting.");
        return 1;
    }
    if (metrics_listen() == -1) {
        server_log(LOG_WARNING_, "Failed listening on metrics port %d (tcp), aborting.", srv.cfg.metrics_port);
        return 1;
    }
    if (cluster_init() != 0) return 1;
    write_pidfile();
    show_banner();
    server_log(LOG_NOTICE_, "Server initialized");
    char *ro = config_get_by_name(&srv.cfg, "replicaof");
    srv.load_as_replica = cluster ? cluster_is_replica(cluster->myself) : ro && ro[0];
    zfree(ro);
    int loaded = persist_load_at_startup(loading_events);
    if (loaded < 0) return 1;
    if (loaded == 0) {
        if (cluster_verify_with_data() != 0) return 1;
        if (cluster) cluster_update_state(); /* a replica's first sync may hold the cron back (no timers while loading) */
        repl_init(); /* after the load: a configured replicaof connects now */
        ev_timer_add(srv.el, 1, server_cron, NULL);
        if (cluster) ev_timer_add(srv.el, CLUSTER_CRON_MS, cluster_timer, NULL);
        /* redis-server 7.0's words: init scripts and test harnesses wait for them */
        if (srv.listen_count || srv.tls_count) server_log(LOG_NOTICE_, "Ready to accept connections");
        if (srv.cfg.unixsocket)
            server_log(LOG_NOTICE_, "The server is now ready to accept connections at %s", srv.cfg.unixsocket);
        supervise_ready(); /* every listener accepts, the data is loaded */
        ev_run(srv.el);
    }
    while (srv.clients) client_free(srv.clients);
    free_keyspace_if_checked();
    if (srv.cfg.pidfile) {
        server_log(LOG_NOTICE_, "Removing the pid file.");
        unlink(srv.cfg.pidfile);
    }
    net_close_unix(); /* the file too: a client must not find a socket nobody listens on */
    server_log(LOG_WARNING_, "Redis is now ready to exit, bye bye..."); /* Redis's words, as above */
    return 0;
}
