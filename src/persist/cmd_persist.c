/* cmd_persist.c - snapshots: SAVE, BGSAVE, LASTSAVE, save points, the load
 * at start-up and the save at shutdown (see persist.h).
 *
 * Background saves fork, as Redis does: the child writes the snapshot from
 * its copy-on-write image of the keyspace and exits; the parent keeps
 * serving and reaps the child from the cron. The parent's only pause is
 * the fork itself (copying the page tables). The state of saves lives in
 * one struct, `ps`, read by INFO persistence.
 */
#include "persist.h"
#include "aof.h"
#include "config.h"
#include "db.h"
#include "rdb.h"
#include "reply.h"
#include "sbuf.h"
#include "server.h"
#include "supervise.h"
#include "tracking.h"
#include "util.h"
#include "zmalloc.h"
#include <errno.h>
#include <signal.h>
#ifdef __linux__
#include <sys/prctl.h>
#endif
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#define SAVE_RETRY_SECS 5   /* after a failed background save, wait before the next try */
#define MAX_SAVE_POINTS 32

static struct persist_state {
    pid_t child;                /* background save in progress, 0 if none */
    int child_pipe;             /* read end: the child's copy-on-write size, -1 if none */
    size_t last_cow;            /* rdb_last_cow_size */
    int64_t child_start_ms;
    long long dirty_at_start;   /* srv.dirty when the child forked */
    int last_bgsave_ok;
    long long last_bgsave_secs; /* duration of the last background save, -1 if none */
    int64_t last_try_ms;        /* start of the last background save attempt */
    long long saves;            /* successful saves (rdb_saves) */
    int scheduled;              /* BGSAVE SCHEDULE / inside EXEC: start from the cron */
    int to_sockets;             /* the running child streams to replicas' sockets (no file) */
    persist_repl_done_fn *repl_done; /* replication hears of every finished background save */
    rdb_load_stats last_load;
    struct {                    /* the load in progress (INFO's loading_* fields) */
        long long start_secs;
        int64_t start_us;
        size_t total, done;
        persist_events_fn *events;
    } load;
} ps = {.child_pipe = -1, .last_bgsave_ok = 1, .last_bgsave_secs = -1};

/* ---- configuration ----------------------------------------------------------- */

static void rdb_path(char *buf, size_t cap) {
    char *name = config_get_by_name(&srv.cfg, "dbfilename");
    snprintf(buf, cap, "%s", name && name[0] ? name : "dump.rdb");
    zfree(name);
}

typedef struct save_point {
    long long seconds, changes;
} save_point;

/* The `save` points in force; returns how many. */
static int save_points(save_point *pt, int cap) {
    char *v = config_get_by_name(&srv.cfg, "save");
    int n = 0;
    const char *p = v ? v : "";
    long long a, b;
    int used;
    while (n < cap && sscanf(p, "%lld %lld%n", &a, &b, &used) == 2) {
        pt[n++] = (save_point){a, b};
        p += used;
    }
    zfree(v);
    return n;
}

/* ---- saving -------------------------------------------------------------------- */

static void set_bgsave_ok(int ok) {
    ps.last_bgsave_ok = ok;
    srv.rdb_bgsave_failed = !ok;
}

/* counted: in INFO's rdb_saves (Redis does not count FLUSHALL's save) */
static void saved(int counted) {
    set_bgsave_ok(1);
    srv.dirty = 0;
    srv.lastsave = srv.now_ms / 1000;
    ps.saves += counted;
}

static int save_now(int counted) {
    char path[4096], err[512];
    rdb_path(path, sizeof path);
    rdb_options opt = rdb_current_options();
    if (rdb_save_file(path, &opt, err, sizeof err) != 0) {
        server_log(LOG_WARNING_, "%s", err);
        return -1;
    }
    server_log(LOG_NOTICE_, "DB saved on disk");
    saved(counted);
    return 0;
}

/* The memory a forked child no longer shares with its parent (pages either
 * side wrote since the fork): Private_Dirty of /proc/self/smaps_rollup, 0
 * where the kernel does not provide it. */
static size_t private_dirty_bytes(void) {
    FILE *f = fopen("/proc/self/smaps_rollup", "r");
    if (!f) return 0;
    char line[256];
    size_t kb = 0;
    while (fgets(line, sizeof line, f))
        if (sscanf(line, "Private_Dirty: %zu kB", &kb) == 1) break;
    fclose(f);
    return kb * 1024;
}

/* The child: write the file, report its copy-on-write size to the parent
 * through `pipefd`, and leave without running any exit handler of the
 * parent's (no flush of its stdio, no keyspace teardown). */
static void child_save(int pipefd, const rdb_options *opt) {
    signal(SIGTERM, SIG_DFL);
    signal(SIGINT, SIG_DFL);
    char path[4096], err[512];
    rdb_path(path, sizeof path);
    int rc = rdb_save_file(path, opt, err, sizeof err);
    if (rc) {
        server_log(LOG_WARNING_, "%s", err);
    } else {
        server_log(LOG_NOTICE_, "DB saved on disk");
        uint64_t cow = private_dirty_bytes();
        server_log(LOG_NOTICE_, "Fork CoW for RDB: current %llu MB", (unsigned long long)(cow >> 20));
        if (write(pipefd, &cow, sizeof cow) != sizeof cow) rc = 0; /* the figure is lost, the save is not */
    }
    _exit(rc ? 1 : 0);
}

/* The diskless child: "$EOF:<mark>\r\n", the snapshot and the mark again
 * into the pipe `datafd`, whose reader (the parent: repl/rdb_pipe.c) passes
 * them on to every replica; then the report, then it waits until the parent
 * closes `exitfd` (every replica has the bytes) or dies, so the save ends
 * only once the transfer has. A parent that closed the pipe (no replica
 * left) ends the writes with EPIPE. */
static void child_stream(int reportfd, int datafd, int exitfd, const char *mark, const rdb_options *opt) {
    signal(SIGTERM, SIG_DFL);
    signal(SIGINT, SIG_DFL);
    char pre[64];
    int plen = snprintf(pre, sizeof pre, "$EOF:%.40s\r\n", mark);
    int ok = write(datafd, pre, (size_t)plen) == plen && (rdb_save_fds(&datafd, 1, opt) & 1) &&
             write(datafd, mark, 40) == 40;
    close(datafd);
    uint64_t cow = private_dirty_bytes();
    if (write(reportfd, &cow, sizeof cow) != sizeof cow) ok = 0;
    char c;
    while (read(exitfd, &c, 1) < 0 && errno == EINTR) {
    }
    _exit(ok ? 0 : 1);
}

static void close_pipes(int *fds, int n) {
    for (int i = 0; i < n; i++)
        if (fds[i] >= 0) close(fds[i]);
}

void persist_child_follows_parent(pid_t parent) {
#ifdef __linux__
    prctl(PR_SET_PDEATHSIG, SIGKILL);
#endif
    if (getppid() != parent) _exit(1); /* it died before the line above */
}

/* pipes: the report's, then for a diskless save the data and exit pipes. */
static int fork_save(int diskless, int *data_fd, int *exit_fd, const char *mark, const rdb_options *opt) {
    ps.last_try_ms = srv.now_ms;
    int fds[6] = {-1, -1, -1, -1, -1, -1}, *data = fds + 2, *ex = fds + 4; /* report, data, exit */
    if (pipe(fds) != 0) fds[0] = fds[1] = -1;
    if (diskless && (pipe(data) != 0 || pipe(ex) != 0)) {
        server_log(LOG_WARNING_, "Can't save in background: pipe: %s", strerror(errno));
        close_pipes(fds, 6);
        return -1;
    }
    int64_t t0 = ev_mono_us();
    pid_t parent = getpid();
    pid_t pid = fork();
    if (pid < 0) {
        close_pipes(fds, 6);
        set_bgsave_ok(0);
        server_log(LOG_WARNING_, "Can't save in background: fork: %s", strerror(errno));
        return -1;
    }
    if (pid == 0) {
        persist_child_follows_parent(parent);
        if (fds[0] >= 0) close(fds[0]);
        if (diskless) {
            close(data[0]);
            close(ex[1]);
            child_stream(fds[1], data[1], ex[0], mark, opt);
        }
        child_save(fds[1], opt);
    }
    ps.to_sockets = diskless;
    srv.latest_fork_usec = ev_mono_us() - t0;
    srv.stats.total_forks++;
    if (fds[1] >= 0) close(fds[1]);
    if (diskless) {
        close(data[1]);
        close(ex[0]);
        *data_fd = data[0];
        *exit_fd = ex[1];
    }
    ps.child_pipe = fds[0];
    server_log(LOG_NOTICE_, diskless ? "Background RDB transfer started by pid %d" : "Background saving started by pid %d",
               (int)pid);
    ps.child = pid;
    ps.child_start_ms = srv.now_ms;
    ps.dirty_at_start = srv.dirty;
    ps.scheduled = 0;
    return 0;
}

static int bgsave_start(void) {
    rdb_options opt = rdb_current_options();
    return fork_save(0, NULL, NULL, NULL, &opt);
}

void persist_set_repl_hook(persist_repl_done_fn *fn) { ps.repl_done = fn; }

int persist_bgsave_for_repl(int *data_fd, int *exit_fd, const char *mark, const rdb_options *opt) {
    if (ps.child || aof_child_running()) return -1;
    if (data_fd) server_log(LOG_NOTICE_, "Starting BGSAVE for SYNC with target: replicas sockets");
    else server_log(LOG_NOTICE_, "Starting BGSAVE for SYNC with target: disk");
    return fork_save(data_fd != NULL, data_fd, exit_fd, mark, opt);
}

void persist_kill_repl_child(void) {
    if (ps.child && ps.to_sockets) kill(ps.child, SIGUSR1); /* reaped by the cron, as any other end */
}

void persist_flushall_done(void) {
    if (ps.child) kill(ps.child, SIGUSR1); /* its snapshot is of data that is gone; reaped by the cron */
    if (persist_has_save_points()) save_now(0);
}

void persist_kill_disk_child(void) {
    if (ps.child && !ps.to_sockets) kill(ps.child, SIGUSR1); /* reaped by the cron */
}

int persist_has_save_points(void) {
    save_point pt[1];
    return save_points(pt, 1) > 0;
}

int persist_child_target(void) { return !ps.child ? PERSIST_CHILD_NONE : ps.to_sockets ? PERSIST_CHILD_SOCKETS : PERSIST_CHILD_DISK; }

/* The child's report, once it has exited (the write end is closed then, so
 * the read never blocks). */
static void read_child_report(void) {
    if (ps.child_pipe < 0) return;
    uint64_t cow = 0;
    if (read(ps.child_pipe, &cow, sizeof cow) == (ssize_t)sizeof cow) ps.last_cow = (size_t)cow;
    close(ps.child_pipe);
    ps.child_pipe = -1;
}

/* The file a stopped save child was writing. */
static void unlink_child_temp(void) {
    char tmp[64];
    snprintf(tmp, sizeof tmp, "temp-%d.rdb", (int)ps.child);
    unlink(tmp);
}

static void bgsave_done(int status) {
    int ok = WIFEXITED(status) && WEXITSTATUS(status) == 0;
    read_child_report();
    if (ps.to_sockets) { /* nothing was saved on disk: the save state stays as it was */
        ps.child = 0;
        ps.to_sockets = 0;
        if (WIFSIGNALED(status) && WTERMSIG(status) == SIGUSR1)
            server_log(LOG_NOTICE_, "Background RDB transfer terminated by signal %d", SIGUSR1);
        else
            server_log(ok ? LOG_NOTICE_ : LOG_WARNING_, "Background RDB transfer %s", ok ? "terminated with success" : "error");
        if (ps.repl_done) ps.repl_done(ok, 1);
        return;
    }
    ps.last_bgsave_secs = (srv.now_ms - ps.child_start_ms) / 1000;
    if (WIFSIGNALED(status) && WTERMSIG(status) == SIGUSR1) unlink_child_temp(); /* stopped on purpose: not a failure */
    else set_bgsave_ok(ok);
    if (ok) {
        server_log(LOG_NOTICE_, "Background saving terminated with success");
        srv.dirty -= ps.dirty_at_start;
        srv.lastsave = srv.now_ms / 1000;
        ps.saves++;
    } else if (WIFSIGNALED(status)) {
        server_log(LOG_WARNING_, "Background saving terminated by signal %d", WTERMSIG(status));
    } else {
        server_log(LOG_WARNING_, "Background saving error");
    }
    ps.child = 0;
    if (ps.repl_done) ps.repl_done(ok, 0);
}

static void reap_child(void) {
    int status;
    if (!ps.child) return;
    pid_t r = waitpid(ps.child, &status, WNOHANG);
    if (r == ps.child) bgsave_done(status);
}

static int save_point_due(void) {
    save_point pt[MAX_SAVE_POINTS];
    int n = save_points(pt, MAX_SAVE_POINTS);
    int64_t now = srv.now_ms / 1000;
    if (!ps.last_bgsave_ok && srv.now_ms - ps.last_try_ms < SAVE_RETRY_SECS * 1000) return 0;
    for (int i = 0; i < n; i++) {
        if (srv.dirty >= pt[i].changes && now - srv.lastsave > pt[i].seconds) {
            server_log(LOG_NOTICE_, "%lld changes in %lld seconds. Saving...", pt[i].changes, pt[i].seconds);
            return 1;
        }
    }
    return 0;
}

void persist_cron(void) {
    reap_child();
    aof_cron();
    if (ps.child || aof_child_running()) return;
    if (ps.scheduled || save_point_due()) bgsave_start();
}

int persist_child_running(void) { return ps.child != 0; }

int persist_writes_refused(void) {
    save_point pt[1];
    return srv.rdb_bgsave_failed && config_is_yes(&srv.cfg, "stop-writes-on-bgsave-error") && save_points(pt, 1) > 0;
}

static void kill_child(void) {
    if (!ps.child) return;
    kill(ps.child, SIGUSR1);
    waitpid(ps.child, NULL, 0);
    read_child_report();
    unlink_child_temp();
    ps.child = 0;
}

/* The first step of every shutdown (SHUTDOWN, SIGTERM, SIGINT), so it says
 * what Redis's prepareForShutdown says, to the log and to systemd, before
 * the final save. */
int persist_shutdown_save(int force_save, int nosave) {
    save_point pt[1];
    server_log(LOG_WARNING_, "User requested shutdown...");
    supervise_notify("STOPPING=1\n");
    kill_child();
    aof_shutdown();
    if (nosave || srv.loading || (!force_save && save_points(pt, 1) == 0)) return 0;
    server_log(LOG_NOTICE_, "Saving the final RDB snapshot before exiting.");
    supervise_notify("STATUS=Saving the final RDB snapshot\n");
    if (save_now(1) == 0) return 0;
    server_log(LOG_WARNING_, "Error trying to save the DB, can't exit.");
    supervise_notify("STATUS=Error trying to save the DB, can't exit.\n");
    return -1;
}

/* ---- loading ------------------------------------------------------------------- */

static long long config_ll(const char *name) { return config_get_ll(&srv.cfg, name); }

static int load_progress(void *ud, size_t done, size_t total) {
    (void)ud;
    ps.load.done = done;
    ps.load.total = total;
    srv.now_ms = ev_now_ms();
    return ps.load.events ? ps.load.events() : 0;
}

static int startup_loaded;       /* persist_startup_load(): ps.last_load is the start-up RDB's */
static struct {
    sbuf cmds;                  /* DEL (or UNLINK) of each key found expired, SELECT before each new db */
    int db;
} expired = {.db = -1};

const rdb_load_stats *persist_startup_load(void) { return startup_loaded ? &ps.last_load : NULL; }

static void note_expired(void *ud, int dbid, const char *key, size_t klen) {
    (void)ud;
    char num[24];
    if (dbid != expired.db) {
        span sel[2] = {{"SELECT", 6}, {num, (size_t)snprintf(num, sizeof num, "%d", dbid)}};
        sb_add_command(&expired.cmds, 2, sel);
        expired.db = dbid;
    }
    span del[2] = {srv.cfg.lazyfree_lazy_expire ? (span){"UNLINK", 6} : (span){"DEL", 3}, {key, klen}};
    sb_add_command(&expired.cmds, 2, del);
}

void persist_startup_expired(const char **p, size_t *n) {
    *p = expired.cmds.p;
    *n = expired.cmds.len;
}

void persist_startup_expired_free(void) {
    zfree(expired.cmds.p);
    expired.cmds = (sbuf){0};
}

int persist_load_at_startup(persist_events_fn *events) {
    char path[4096], err[1024];
    rdb_path(path, sizeof path);
    int64_t t0 = ev_mono_us();
    rdb_load_hooks h = {load_progress, NULL, (size_t)config_ll("loading-process-events-interval-bytes"),
                        config_ll("key-load-delay"), .expired_key = note_expired,
                        .keep_expired = srv.load_as_replica};
    srv.loading = 1;
    ps.load.start_secs = srv.now_ms / 1000;
    ps.load.start_us = t0;
    ps.load.done = ps.load.total = 0;
    ps.load.events = events;
    if (aof_configured()) { /* as Redis: with appendonly yes the AOF is the data, the RDB file is not read */
        int arc = aof_startup(&h);
        srv.loading = 0;
        return arc;
    }
    int rc = rdb_load_file(path, &h, &ps.last_load, err, sizeof err);
    srv.loading = 0;
    if (rc == 1) return 0;
    if (rc < 0 && srv.shutdown_asap) {
        server_log(LOG_WARNING_, "Loading stopped by a shutdown request.");
        return 1;
    }
    if (rc < 0) {
        server_log(LOG_WARNING_, "Fatal error loading the DB: %s. Exiting.", err);
        for (int i = 0; i < db_count(); i++) db_flush(db_get(i)); /* what was read before the error */
        return -1;
    }
    startup_loaded = rc == 0;
    server_log(LOG_NOTICE_, "DB loaded from disk: %.3f seconds", (double)(ev_mono_us() - t0) / 1e6);
    server_log(LOG_NOTICE_, "Done loading RDB, keys loaded: %llu, keys expired: %llu.",
               (unsigned long long)ps.last_load.keys_loaded, (unsigned long long)ps.last_load.keys_expired);
    return 0;
}

static long long key_delay_now(void *ud) {
    (void)ud;
    return config_ll("key-load-delay");
}

/* A replica's load, from the file at path or (src) from its primary's
 * socket; into the live databases, or into `into` (swapdb), and then with
 * the live ones served (async: no -LOADING). */
static int load_for_replica(const char *path, rdb_source *src, const rdb_load_hooks *where, int async,
                            rdb_load_stats *st, char *err, size_t errlen) {
    rdb_load_hooks h = {load_progress, NULL, (size_t)config_ll("loading-process-events-interval-bytes"),
                        config_ll("key-load-delay")};
    h.quiet_start = 1;
    h.keep_expired = 1;
    h.key_delay = key_delay_now;
    if (where) {
        h.into = where->into;
        h.library = where->library;
        h.library_ud = where->library_ud;
    }
    int64_t t0 = ev_mono_us();
    if (!async) srv.loading = 1;
    ps.load.start_secs = srv.now_ms / 1000;
    ps.load.start_us = t0;
    ps.load.done = ps.load.total = 0;
    int no_timers = srv.el->no_timers;
    srv.el->no_timers = 1; /* the cron (saves, expiry, replication) waits for a whole dataset */
    int rc = src ? rdb_load_source(src, &h, st, err, errlen) : rdb_load_file(path, &h, st, err, errlen);
    srv.el->no_timers = no_timers;
    if (!async) srv.loading = 0;
    if (rc == 0) {
        ps.last_load = *st;
        server_log(LOG_NOTICE_, "Done loading RDB, keys loaded: %llu, keys expired: %llu.",
                   (unsigned long long)st->keys_loaded, (unsigned long long)st->keys_expired);
    }
    return rc == 1 ? -1 : rc;
}

int persist_load_for_replica(const char *path, rdb_load_stats *st, char *err, size_t errlen) {
    return load_for_replica(path, NULL, NULL, 0, st, err, errlen);
}

int persist_stream_for_replica(rdb_source *src, const rdb_load_hooks *where, int async, rdb_load_stats *st, char *err,
                               size_t errlen) {
    return load_for_replica(NULL, src, where, async, st, err, errlen);
}

int persist_debug_reload(unsigned opts, char *err, size_t errlen) {
    if (!(opts & RELOAD_NOSAVE) && save_now(1) != 0) {
        snprintf(err, errlen, "Error trying to save the DB");
        return -1;
    }
    if (!(opts & RELOAD_NOFLUSH)) {
        tracking_invalidate_all(); /* as Redis's emptyData: every cached key is gone */
        for (int i = 0; i < db_count(); i++) db_flush(db_get(i));
        rdb_flush_functions();
    }
    char path[4096], why[1024];
    rdb_path(path, sizeof path);
    rdb_load_hooks h = {.allow_dup = (opts & RELOAD_MERGE) != 0};
    if (rdb_load_file(path, &h, &ps.last_load, why, sizeof why) != 0) {
        snprintf(err, errlen, "Error trying to load the RDB dump: %s", why);
        return -1;
    }
    return 0;
}

/* ---- INFO --------------------------------------------------------------------------- */

void persist_loading_info(sbuf *b) {
    if (!srv.loading) return;
    double perc = ps.load.total ? (double)ps.load.done * 100 / (double)ps.load.total : 0;
    double secs = (double)(ev_mono_us() - ps.load.start_us) / 1e6;
    long long eta = ps.load.done && secs > 0
                        ? (long long)((double)(ps.load.total - ps.load.done) / ((double)ps.load.done / secs))
                        : 1;
    sb_addf(b,
            "loading_start_time:%lld\r\nloading_total_bytes:%zu\r\nloading_rdb_used_mem:%llu\r\n"
            "loading_loaded_bytes:%zu\r\nloading_loaded_perc:%.2f\r\nloading_eta_seconds:%lld\r\n",
            ps.load.start_secs, ps.load.total, (unsigned long long)ps.last_load.used_mem, ps.load.done, perc, eta);
}

void persist_info(sbuf *b) {
    long long cur = ps.child ? (srv.now_ms - ps.child_start_ms) / 1000 : -1;
    sb_addf(b,
            "loading:%d\r\nasync_loading:%d\r\ncurrent_cow_peak:0\r\ncurrent_cow_size:0\r\n"
            "current_cow_size_age:0\r\ncurrent_fork_perc:0.00\r\ncurrent_save_keys_processed:0\r\n"
            "current_save_keys_total:0\r\nrdb_changes_since_last_save:%lld\r\nrdb_bgsave_in_progress:%d\r\n"
            "rdb_last_save_time:%lld\r\nrdb_last_bgsave_status:%s\r\nrdb_last_bgsave_time_sec:%lld\r\n"
            "rdb_current_bgsave_time_sec:%lld\r\nrdb_saves:%lld\r\nrdb_last_cow_size:%zu\r\n"
            "rdb_last_load_keys_expired:%llu\r\nrdb_last_load_keys_loaded:%llu\r\n",
            srv.loading, srv.async_loading, srv.dirty, ps.child != 0, (long long)srv.lastsave, ps.last_bgsave_ok ? "ok" : "err",
            ps.last_bgsave_secs, cur, ps.saves, ps.last_cow, (unsigned long long)ps.last_load.keys_expired,
            (unsigned long long)ps.last_load.keys_loaded);
}

/* ---- commands ------------------------------------------------------------------------- */

static void cmd_save(client *c) {
    if (ps.child) {
        reply_error(c, "ERR Background save already in progress");
        return;
    }
    if (save_now(1) == 0) reply_ok(c);
    else reply_error(c, "ERR");
}

static void cmd_bgsave(client *c) {
    int schedule = c->argc == 2 && span_eq_nocase(c->argv[1], "schedule");
    if (c->argc > 2 || (c->argc == 2 && !schedule)) {
        reply_err_syntax(c);
        return;
    }
    if (ps.child) {
        reply_error(c, "ERR Background save already in progress");
    } else if (aof_child_running() && !schedule) {
        reply_error(c, "ERR An AOF log rewriting in progress: can't BGSAVE right now. Use BGSAVE SCHEDULE in order "
                       "to schedule a BGSAVE whenever possible.");
    } else if (c->flags & CF_EXECUTING_EXEC || aof_child_running()) {
        ps.scheduled = 1;
        reply_status(c, "Background saving scheduled");
    } else if (bgsave_start() == 0) {
        reply_status(c, "Background saving started");
    } else {
        reply_error(c, "ERR");
    }
}

static void cmd_lastsave(client *c) { reply_int(c, (long long)srv.lastsave); }

static command persist_commands[] = {
    CMD("bgsave", cmd_bgsave, -1, .flags = CMD_ADMIN | CMD_NOSCRIPT | CMD_NO_ASYNC_LOADING,
        .acl = "admin slow dangerous", .summary = "Asynchronously save the dataset to disk", .since = "1.0.0",
        .complexity = "O(1)"),
    CMD("lastsave", cmd_lastsave, 1, .flags = CMD_LOADING | CMD_STALE | CMD_FAST, .acl = "admin fast dangerous",
        .summary = "Get the UNIX time stamp of the last successful save to disk", .since = "1.0.0",
        .complexity = "O(1)"),
    CMD("save", cmd_save, 1, .flags = CMD_ADMIN | CMD_NOSCRIPT | CMD_NO_MULTI | CMD_NO_ASYNC_LOADING,
        .acl = "admin slow dangerous", .summary = "Synchronously save the dataset to disk", .since = "1.0.0",
        .complexity = "O(N) where N is the total number of keys in all databases"),
    {0},
};
const command_group persist_group = {"server", persist_commands};
