/* aof.c - the append-only file: appending, fsync policies, rewrite, the
 * start-up load and the commands (see aof.h).
 *
 * The state is one struct, `as`. Appended bytes (the propagation sink,
 * aof_feed) wait in `as.buf` until the write barrier writes them: the io
 * layer runs it before it writes any reply, so a reply never leaves before
 * the write it acknowledges is in the file (and, with `always`, on disk:
 * fdatasync before the first reply of the iteration; every later reply of
 * the same iteration finds the buffer empty). One write and at most one
 * fsync per loop iteration, whatever the number of clients.
 *
 * `everysec` hands the fsync to a thread (one job at a time: the fd). While
 * a job runs, writes are postponed, up to 2 seconds (then written anyway
 * and counted in aof_delayed_fsync), as Redis does, so the main thread
 * never waits on a slow disk.
 *
 * Errors, as Redis 7: with `always` a failed write or fsync exits the
 * server (a write that may not be durable is never acknowledged); with the
 * other policies the bytes stay buffered, writes are refused with -MISCONF
 * and the cron retries until the disk accepts them. A partial write is
 * truncated away when possible, so the file never ends in half a command
 * that a later retry would duplicate.
 */
#include "aof.h"
#include "aof_load.h"
#include "aof_manifest.h"
#include "aof_rewrite.h"
#include "config.h"
#include "db.h"
#include "event.h"
#include "persist.h"
#include "propagate.h"
#include "reply.h"
#include "sbuf.h"
#include "server.h"
#include "tracking.h"
#include "zmalloc.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#define POSTPONE_MAX_MS 2000        /* everysec: longest a write waits for a running fsync */
#define REWRITE_RETRY_MS 5000       /* after a failed rewrite that must happen (appendonly turned on) */

enum { FSYNC_NO, FSYNC_ALWAYS, FSYNC_EVERYSEC };

static struct aof_state {
    int on;                         /* appending: the sink is attached */
    int fd;                         /* the current incremental file, -1 if none */
    aof_manifest m;                 /* the files, as the manifest lists them (or will) */
    int manifest_pending;           /* turned on at runtime: m is persisted when the first rewrite ends */
    sbuf buf;                       /* appended, not written yet */
    long long incr_size;            /* bytes written to the current incremental file */
    long long cur_size, base_size;  /* aof_current_size; its value after the last rewrite (auto rewrite) */
    int unsynced;                   /* written since the last fsync */
    int64_t last_fsync_ms, postponed_ms;
    long long delayed_fsync;
    int write_ok, write_errno;
    /* configuration in force */
    int policy, preamble;
    char *fname, *dirname;
    /* rewrite */
    pid_t child;
    int64_t child_start_ms;
    int keep_from;                  /* index in m.incr of the first increment the new base does not cover */
    int scheduled;
    int64_t retry_at_ms;
    int rewrite_ok;
    long long rewrites, failures, last_rewrite_secs;
    /* the everysec fsync thread */
    pthread_t thread;
    pthread_mutex_t mu;
    pthread_cond_t cv;
    int job_fd, thread_on;
    atomic_int busy;
} as = {.fd = -1, .write_ok = 1, .rewrite_ok = 1, .last_rewrite_secs = -1, .job_fd = -1,
        .mu = PTHREAD_MUTEX_INITIALIZER, .cv = PTHREAD_COND_INITIALIZER};

/* ---- configuration -------------------------------------------------------------- */

static char *conf(const char *name) {
    char *v = config_get_by_name(&srv.cfg, name);
    return v ? v : zstrdup("");
}

int aof_configured(void) { return config_is_yes(&srv.cfg, "appendonly"); }

static void read_config(void) {
    char *p = conf("appendfsync");
    as.policy = !strcmp(p, "always") ? FSYNC_ALWAYS : !strcmp(p, "no") ? FSYNC_NO : FSYNC_EVERYSEC;
    zfree(p);
    as.preamble = config_is_yes(&srv.cfg, "aof-use-rdb-preamble");
    zfree(as.fname);
    zfree(as.dirname);
    as.fname = conf("appendfilename");
    as.dirname = conf("appenddirname");
}

static void dir_path(char *buf, size_t cap, const char *name) { aof_path(buf, cap, as.dirname, name); }

static long long file_size(const char *name) {
    char path[4096];
    struct stat sb;
    dir_path(path, sizeof path, name);
    return stat(path, &sb) == 0 ? (long long)sb.st_size : 0;
}

static int persist_manifest(const aof_manifest *m, char *err, size_t errlen) {
    char *mname = aof_manifest_name(as.fname);
    int rc = aof_manifest_persist(as.dirname, mname, m, err, errlen);
    zfree(mname);
    return rc;
}

/* ---- the everysec fsync thread ------------------------------------------------- */

static void *fsync_main(void *arg) {
    (void)arg;
    pthread_mutex_lock(&as.mu);
    for (;;) {
        while (as.job_fd < 0) pthread_cond_wait(&as.cv, &as.mu);
        int fd = as.job_fd;
        as.job_fd = -1;
        pthread_mutex_unlock(&as.mu);
        fdatasync(fd);
        atomic_store(&as.busy, 0);
        pthread_mutex_lock(&as.mu);
    }
    return NULL;
}

static void fsync_in_background(int fd) {
    if (!as.thread_on) {
        sigset_t all, old;
        sigfillset(&all);
        pthread_sigmask(SIG_BLOCK, &all, &old); /* signals stay with the main thread */
        as.thread_on = pthread_create(&as.thread, NULL, fsync_main, NULL) == 0;
        pthread_sigmask(SIG_SETMASK, &old, NULL);
        if (!as.thread_on) {
            fdatasync(fd);
            return;
        }
    }
    atomic_store(&as.busy, 1);
    pthread_mutex_lock(&as.mu);
    as.job_fd = fd;
    pthread_cond_signal(&as.cv);
    pthread_mutex_unlock(&as.mu);
}

/* Before the fd it fsyncs is closed. */
static void wait_fsync_idle(void) {
    while (atomic_load(&as.busy)) usleep(200);
}

/* ---- appending ------------------------------------------------------------------ */

static void aof_feed(const char *p, size_t n) { sb_add(&as.buf, p, n); }

static void write_failed(size_t written, int err) {
    if (written > 0 && ftruncate(as.fd, (off_t)as.incr_size) != 0) { /* keep what went in, drop it here */
        memmove(as.buf.p, as.buf.p + written, as.buf.len - written);
        as.buf.len -= written;
        as.incr_size += (long long)written;
        as.cur_size += (long long)written;
    }
    if (as.write_ok || as.write_errno != err)
        server_log(LOG_WARNING_, "Error writing to the AOF file: %s", strerror(err));
    as.write_ok = 0;
    as.write_errno = err;
    if (as.policy == FSYNC_ALWAYS) {
        server_log(LOG_WARNING_, "Can't recover from AOF write error when the AOF fsync policy is 'always'. "
                                 "Exiting...");
        exit(1);
    }
    srv.aof_write_failed = 1;
}

/* Write the buffer; fsync under `always`. */
static void write_buffer(void) {
    size_t done = 0, len = as.buf.len;
    while (done < len) {
        ssize_t n = write(as.fd, as.buf.p + done, len - done);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) { /* a short write is reported as ENOSPC, as Redis does */
            write_failed(done, n < 0 && done == 0 ? errno : ENOSPC);
            return;
        }
        done += (size_t)n;
    }
    as.buf.len = 0;
    as.incr_size += (long long)len;
    as.cur_size += (long long)len;
    if (!as.write_ok) {
        server_log(LOG_WARNING_, "AOF write error looks solved, Redis can write again.");
        as.write_ok = 1;
        srv.aof_write_failed = 0;
    }
    if (as.policy != FSYNC_ALWAYS) {
        as.unsynced = 1;
        return;
    }
    if (fdatasync(as.fd) != 0) {
        server_log(LOG_WARNING_, "Can't persist AOF for fsync error when the AOF fsync policy is 'always': %s. "
                                 "Exiting...", strerror(errno));
        exit(1);
    }
    as.last_fsync_ms = srv.now_ms;
}

void aof_write_barrier(void) {
    if (as.buf.len == 0 || as.fd < 0) return;
    if (as.policy == FSYNC_EVERYSEC && atomic_load(&as.busy)) {
        int64_t now = ev_now_ms();
        if (!as.postponed_ms) as.postponed_ms = now;
        if (now - as.postponed_ms < POSTPONE_MAX_MS) return;
        as.delayed_fsync++;
        server_log(LOG_NOTICE_, "Asynchronous AOF fsync is taking too long (disk is busy?). Writing the AOF buffer "
                                "without waiting for fsync to complete, this may slow down Redis.");
    }
    as.postponed_ms = 0;
    write_buffer();
}

static void sync_now(void) {
    if (as.fd < 0) return;
    if (as.buf.len) write_buffer();
    wait_fsync_idle();
    if (fdatasync(as.fd) == 0) as.unsynced = 0;
    as.last_fsync_ms = srv.now_ms;
}

int aof_writes_refused(const char **why) {
    if (!srv.aof_write_failed) return 0;
    *why = strerror(as.write_errno);
    return 1;
}

/* ---- opening ---------------------------------------------------------------------- */

static int open_incr(const char *name, int create) {
    char path[4096];
    dir_path(path, sizeof path, name);
    int fd = open(path, O_WRONLY | O_APPEND | O_CREAT | (create ? O_TRUNC : 0), 0644);
    if (fd < 0) server_log(LOG_WARNING_, "Can't open the append-only file %s: %s", path, strerror(errno));
    return fd;
}

static int make_dir(void) {
    if (mkdir(as.dirname, 0755) == 0 || errno == EEXIST) return 0;
    server_log(LOG_WARNING_, "Can't open or create append-only dir %s: %s", as.dirname, strerror(errno));
    return -1;
}

/* A new incremental file, added to m (not persisted). Its fd, -1 on error. */
static int new_incr(aof_manifest *m) {
    long long seq = m->incr_seq + 1;
    char *name = aof_incr_name(as.fname, seq);
    int fd = open_incr(name, 1);
    if (fd < 0) {
        zfree(name);
        return -1;
    }
    aof_manifest_add_incr(m, name, seq);
    return fd;
}

static void attach(int fd) {
    as.fd = fd;
    as.incr_size = 0;
    as.on = 1;
    as.write_ok = 1;
    srv.aof_write_failed = 0;
    prop_attach(aof_feed, PROP_TO_AOF);
    prop_stream_restart();
}

/* ---- loading at start-up -------------------------------------------------------- */

static int load_one(const char *name, int last, const rdb_load_hooks *h, char *err, size_t errlen) {
    char path[4096];
    dir_path(path, sizeof path, name);
    aof_load_opts o = {.last = last, .truncated_ok = config_is_yes(&srv.cfg, "aof-load-truncated"), .hooks = h};
    aof_load_result res;
    int rc = aof_load_file(path, name, &o, &res, err, errlen);
    if (rc == 1) {
        if (last) return 0; /* an increment created but not written yet */
        snprintf(err, errlen, "The AOF file %.900s doesn't exist", path);
        return -1;
    }
    if (rc == 0) as.cur_size += (long long)res.size;
    return rc;
}

static int load_manifest_files(const rdb_load_hooks *h, char *err, size_t errlen) {
    int total = (as.m.base.name ? 1 : 0) + as.m.nincr;
    if (as.m.base.name && load_one(as.m.base.name, total == 1, h, err, errlen)) return -1;
    for (int i = 0; i < as.m.nincr; i++)
        if (load_one(as.m.incr[i].name, i == as.m.nincr - 1, h, err, errlen)) return -1;
    return 0;
}

/* A Redis 6 appendonly.aof in `dir`: loaded, then moved into the directory
 * as the base of a new manifest. 1 if there is none. */
static int load_single_file(const rdb_load_hooks *h, char *err, size_t errlen) {
    aof_load_opts o = {.last = 1, .truncated_ok = config_is_yes(&srv.cfg, "aof-load-truncated"), .hooks = h};
    aof_load_result res;
    int rc = aof_load_file(as.fname, as.fname, &o, &res, err, errlen);
    if (rc) return rc;
    char to[4096];
    dir_path(to, sizeof to, as.fname);
    if (make_dir() || rename(as.fname, to) != 0) {
        snprintf(err, errlen, "Can't move %s into %s: %s", as.fname, as.dirname, strerror(errno));
        return -1;
    }
    as.m.base = (aof_file){zstrdup(as.fname), 1};
    as.m.base_seq = 1;
    as.cur_size = (long long)res.size;
    server_log(LOG_NOTICE_, "Successfully migrated an old-style AOF into the AOF directory %s", as.dirname);
    return 0;
}

/* A fresh AOF's base: the dataset as it is (empty: nothing was loaded). */
static int create_base(char *err, size_t errlen) {
    long long seq = as.m.base_seq + 1;
    char *name = aof_base_name(as.fname, seq, as.preamble), path[4096];
    dir_path(path, sizeof path, name);
    int rc;
    if (as.preamble) {
        rdb_options opt = rdb_current_options();
        rc = rdb_save_file(path, &opt, err, errlen);
    } else {
        rc = aof_write_command_base(path, err, errlen);
    }
    if (rc) {
        zfree(name);
        return -1;
    }
    server_log(LOG_NOTICE_, "Creating AOF base file %s on server start", name);
    as.m.base = (aof_file){name, seq};
    as.m.base_seq = seq;
    as.base_size = as.cur_size = file_size(name);
    return 0;
}

int aof_startup(const rdb_load_hooks *h) {
    char err[1024];
    read_config();
    char *mname = aof_manifest_name(as.fname);
    int rc = aof_manifest_load(as.dirname, mname, &as.m, err, sizeof err);
    zfree(mname);
    int64_t t0 = ev_mono_us();
    srv.loading = 1;
    if (rc == 0) rc = load_manifest_files(h, err, sizeof err);
    else if (rc == 1) rc = load_single_file(h, err, sizeof err);
    srv.loading = 0;
    if (rc < 0) {
        if (srv.shutdown_asap) return 1;
        server_log(LOG_WARNING_, "Fatal error loading the AOF: %s", err);
        return -1;
    }
    if (rc == 0) server_log(LOG_NOTICE_, "DB loaded from append only file: %.3f seconds",
                            (double)(ev_mono_us() - t0) / 1e6);
    as.base_size = as.cur_size;
    if (make_dir()) return -1;
    int fd;
    if (as.m.nincr > 0) {
        fd = open_incr(as.m.incr[as.m.nincr - 1].name, 0);
    } else {
        if (!as.m.base.name && create_base(err, sizeof err) != 0) {
            server_log(LOG_WARNING_, "%s", err);
            return -1;
        }
        fd = new_incr(&as.m);
        if (fd >= 0) server_log(LOG_NOTICE_, "Creating AOF incr file %s on server start", as.m.incr[0].name);
        if (fd >= 0 && persist_manifest(&as.m, err, sizeof err) != 0) {
            server_log(LOG_WARNING_, "%s", err);
            return -1;
        }
    }
    if (fd < 0) return -1;
    attach(fd);
    as.incr_size = file_size(as.m.incr[as.m.nincr - 1].name);
    return 0;
}

/* ---- rewrite ------------------------------------------------------------------------ */

static int fork_child(char *err, size_t errlen);

/* Where the child writes. */
static void temp_path(char *buf, size_t cap, pid_t pid) {
    char tmp[64];
    snprintf(tmp, sizeof tmp, "temp-rewriteaof-bg-%d.aof", (int)pid);
    aof_path(buf, cap, as.dirname, tmp);
}

/* The manifest on disk into as.m (the AOF is off: nothing holds it). */
static void reread_manifest(void) {
    char err[512], *mname = aof_manifest_name(as.fname);
    aof_manifest_free(&as.m);
    if (aof_manifest_load(as.dirname, mname, &as.m, err, sizeof err) < 0) server_log(LOG_WARNING_, "%s", err);
    zfree(mname);
}

/* BGREWRITEAOF with the AOF off, as Redis 7: a new base and a manifest
 * naming only it (the increments it covers are deleted). */
static int rewrite_while_off(char *err, size_t errlen) {
    read_config();
    reread_manifest();
    if (make_dir()) {
        snprintf(err, errlen, "ERR Can't create the AOF directory (see the log)");
        return -1;
    }
    as.keep_from = as.m.nincr;
    return fork_child(err, errlen);
}

static void child_rewrite(void) {
    signal(SIGTERM, SIG_DFL);
    signal(SIGINT, SIG_DFL);
    char path[4096], err[512];
    temp_path(path, sizeof path, getpid());
    int rc;
    if (as.preamble) {
        rdb_options opt = rdb_current_options();
        rc = rdb_save_file(path, &opt, err, sizeof err);
    } else {
        rc = aof_write_command_base(path, err, sizeof err);
    }
    if (rc) server_log(LOG_WARNING_, "%s", err);
    _exit(rc ? 1 : 0);
}

/* 0 started, 1 scheduled (a background save runs), 2 scheduled (asked
 * inside EXEC: never fork in the middle of a transaction), -1 with err. */
static int rewrite_start(int in_exec, char *err, size_t errlen) {
    if (as.child) {
        snprintf(err, errlen, "ERR Background append only file rewriting already in progress");
        return -1;
    }
    if (persist_child_running() || in_exec) {
        as.scheduled = 1;
        return in_exec && !persist_child_running() ? 2 : 1;
    }
    if (!as.on) return rewrite_while_off(err, errlen);
    if (as.buf.len && as.fd >= 0) write_buffer();
    aof_manifest next;
    aof_manifest_copy(&next, &as.m);
    int fd = new_incr(&next);
    char why[512];
    if (fd < 0 || (!as.manifest_pending && persist_manifest(&next, why, sizeof why) != 0)) {
        if (fd >= 0) server_log(LOG_WARNING_, "%s", why), close(fd);
        aof_manifest_free(&next);
        snprintf(err, errlen, "ERR Can't open a new AOF increment for the rewrite (see the log)");
        return -1;
    }
    server_log(LOG_NOTICE_, "Creating AOF incr file %s on background rewrite", next.incr[next.nincr - 1].name);
    if (as.fd >= 0) {
        sync_now();
        close(as.fd);
    } else {
        /* turned on at runtime and waiting for this rewrite: what was
         * appended meanwhile is in the dataset the base is made from */
        as.buf.len = 0;
    }
    aof_manifest_free(&as.m);
    as.m = next;
    as.keep_from = as.m.nincr - 1;
    as.fd = fd;
    as.incr_size = 0;
    prop_stream_restart();
    return fork_child(err, errlen);
}

static int fork_child(char *err, size_t errlen) {
    int64_t t0 = ev_mono_us();
    pid_t parent = getpid();
    pid_t pid = fork();
    if (pid < 0) {
        snprintf(err, errlen, "ERR Can't rewrite append only file in background: fork: %s", strerror(errno));
        as.rewrite_ok = 0;
        return -1;
    }
    if (pid == 0) {
        persist_child_follows_parent(parent);
        child_rewrite();
    }
    srv.latest_fork_usec = ev_mono_us() - t0;
    srv.stats.total_forks++;
    as.child = pid;
    as.child_start_ms = srv.now_ms;
    as.scheduled = 0;
    as.rewrites++; /* as Redis: counted when it starts */
    server_log(LOG_NOTICE_, "Background append only file rewriting started by pid %d", (int)pid);
    return 0;
}

static void remove_file(const char *name) {
    char path[4096];
    dir_path(path, sizeof path, name);
    unlink(path);
}

/* The child wrote the new base: make it the manifest's, with the increments
 * opened since the rewrite began, and delete what it replaces. */
static int install_base(const char *from) {
    long long seq = as.m.base_seq + 1;
    char *name = aof_base_name(as.fname, seq, as.preamble), to[4096], err[512];
    dir_path(to, sizeof to, name);
    aof_manifest next = {.base = {name, seq}, .base_seq = seq, .incr_seq = as.m.incr_seq};
    for (int i = as.keep_from; i < as.m.nincr; i++)
        aof_manifest_add_incr(&next, zstrdup(as.m.incr[i].name), as.m.incr[i].seq);
    int renamed = rename(from, to) == 0;
    if (!renamed) snprintf(err, sizeof err, "%s", strerror(errno));
    if (!renamed || persist_manifest(&next, err, sizeof err) != 0) {
        server_log(LOG_WARNING_, "Can't install the rewritten AOF base %s: %s", name, err);
        aof_manifest_free(&next);
        unlink(from);
        return -1;
    }
    if (as.m.base.name) remove_file(as.m.base.name);
    for (int i = 0; i < as.keep_from; i++) remove_file(as.m.incr[i].name);
    aof_manifest_free(&as.m);
    as.m = next;
    as.keep_from = 0;
    as.manifest_pending = 0;
    as.base_size = file_size(name);
    as.cur_size = as.base_size;
    for (int i = 0; i < as.m.nincr; i++) as.cur_size += file_size(as.m.incr[i].name);
    return 0;
}

static void rewrite_done(int status) {
    char tmp[4096];
    temp_path(tmp, sizeof tmp, as.child);
    as.last_rewrite_secs = (srv.now_ms - as.child_start_ms) / 1000;
    as.child = 0;
    int ok = WIFEXITED(status) && WEXITSTATUS(status) == 0 && install_base(tmp) == 0;
    as.rewrite_ok = ok;
    if (ok) {
        as.failures = 0;
        server_log(LOG_NOTICE_, "Background AOF rewrite terminated with success");
        server_log(LOG_NOTICE_, "Background AOF rewrite finished successfully");
        return;
    }
    unlink(tmp);
    as.failures++;
    server_log(LOG_WARNING_, WIFSIGNALED(status) ? "Background AOF rewrite terminated by signal %d"
                                                 : "Background AOF rewrite terminated with error",
               WIFSIGNALED(status) ? WTERMSIG(status) : 0);
    if (as.manifest_pending) as.retry_at_ms = srv.now_ms + REWRITE_RETRY_MS;
}

static void kill_child(void) {
    if (!as.child) return;
    kill(as.child, SIGUSR1);
    waitpid(as.child, NULL, 0);
    char tmp[4096];
    temp_path(tmp, sizeof tmp, as.child);
    unlink(tmp);
    as.child = 0;
}

int aof_child_running(void) { return as.child != 0; }

static int auto_rewrite_due(void) {
    char *pct_s = conf("auto-aof-rewrite-percentage"), *min_s = conf("auto-aof-rewrite-min-size");
    long long pct = atoll(pct_s), min = atoll(min_s);
    zfree(pct_s);
    zfree(min_s);
    if (pct <= 0 || as.cur_size < min) return 0;
    long long base = as.base_size ? as.base_size : 1;
    long long growth = (as.cur_size * 100 / base) - 100;
    if (growth < pct) return 0;
    server_log(LOG_NOTICE_, "Starting automatic rewriting of AOF on %lld%% growth", growth);
    return 1;
}

/* ---- turning it on and off ------------------------------------------------------------ */

static int aof_enable(char *err, size_t errlen) {
    read_config();
    aof_manifest_free(&as.m);
    char *mname = aof_manifest_name(as.fname);
    aof_manifest old;
    if (aof_manifest_load(as.dirname, mname, &old, err, errlen) == 0)
        as.m = old; /* numbering goes on after it, and its files go once the new base is in */
    zfree(mname);
    if (make_dir()) {
        snprintf(err, errlen, "ERR Can't create the AOF directory (see the log)");
        return -1;
    }
    as.manifest_pending = 1; /* until a base exists, the old manifest (if any) stays as it is */
    as.cur_size = 0;
    attach(-1);
    const client *c = srv.current_client; /* CONFIG SET's caller, if any */
    int rc = rewrite_start(c && (c->flags & CF_EXECUTING_EXEC), err, errlen);
    if (rc < 0) {
        prop_detach(aof_feed);
        as.on = 0;
        return -1;
    }
    if (rc == 1)
        server_log(LOG_WARNING_, "AOF was enabled but there is already another background operation. An AOF "
                                 "background was scheduled to start when possible.");
    else if (rc == 2)
        server_log(LOG_WARNING_, "AOF was enabled during a transaction. An AOF background was scheduled to start "
                                 "when possible.");
    return 0;
}

static void aof_disable(void) {
    kill_child();
    sync_now();
    if (as.fd >= 0) close(as.fd);
    as.fd = -1;
    as.buf.len = 0;
    as.on = 0;
    srv.aof_write_failed = 0;
    prop_detach(aof_feed);
}

int aof_config_changed(const char *name, char *err, size_t errlen) {
    if (!strcmp(name, "appendonly")) {
        int want = aof_configured();
        if (want && !as.on) return aof_enable(err, errlen);
        if (!want && as.on) aof_disable();
        return 0;
    }
    read_config(); /* appendfsync, aof-use-rdb-preamble (the names are immutable) */
    return 0;
}

int aof_debug_loadaof(char *err, size_t errlen) {
    if (!as.on) { /* as Redis: the files on disk, written by BGREWRITEAOF */
        read_config();
        reread_manifest();
        if (!as.m.base.name && !as.m.nincr) {
            snprintf(err, errlen, "ERR There is no AOF to load in %s", as.dirname);
            return -1;
        }
    } else if (as.manifest_pending) {
        snprintf(err, errlen, "ERR The AOF is being created (a rewrite is in progress)");
        return -1;
    }
    sync_now();
    tracking_invalidate_all(); /* as Redis's emptyData: every cached key is gone */
    for (int i = 0; i < db_count(); i++) db_flush(db_get(i));
    rdb_flush_functions();
    as.cur_size = 0;
    srv.loading = 1;
    int rc = load_manifest_files(NULL, err, errlen);
    srv.loading = 0;
    if (rc) { /* as Redis: the dataset is gone and the file cannot give it back */
        server_log(LOG_WARNING_, "Fatal error loading the AOF in DEBUG LOADAOF: %s", err);
        exit(1);
    }
    srv.dirty = 0;
    server_log(LOG_WARNING_, "Append Only File loaded by DEBUG LOADAOF");
    return 0;
}

/* ---- cron, shutdown -------------------------------------------------------------------- */

/* The everysec fsync, and the retry of a failed or postponed write. */
static void cron_sync(void) {
    if (as.buf.len && as.fd >= 0 && (!as.write_ok || as.postponed_ms)) aof_write_barrier();
    if (as.policy == FSYNC_EVERYSEC && as.unsynced && as.fd >= 0 && !atomic_load(&as.busy) &&
        srv.now_ms - as.last_fsync_ms >= 1000) {
        as.unsynced = 0;
        as.last_fsync_ms = srv.now_ms;
        fsync_in_background(as.fd);
    }
}

/* A rewrite is due: scheduled (inside EXEC, or while a BGSAVE ran; also
 * with the AOF off, as Redis), the base of an AOF turned on at runtime, or
 * the automatic one. */
static int rewrite_due(void) {
    int retry_ok = srv.now_ms >= as.retry_at_ms;
    if (as.scheduled && retry_ok) return 1;
    if (!as.on) return 0;
    return as.manifest_pending ? retry_ok : auto_rewrite_due();
}

void aof_cron(void) {
    if (as.child) {
        int status;
        if (waitpid(as.child, &status, WNOHANG) == as.child) rewrite_done(status);
    }
    if (as.on) cron_sync();
    if (as.child || persist_child_running() || !rewrite_due()) return;
    char err[256];
    if (rewrite_start(0, err, sizeof err) < 0) server_log(LOG_WARNING_, "%s", err);
}

void aof_shutdown(void) {
    kill_child();
    if (!as.on) return;
    sync_now();
    server_log(LOG_NOTICE_, "Calling fsync() on the AOF file.");
}

/* ---- INFO, commands --------------------------------------------------------------------- */

void aof_info(sbuf *b) {
    long long cur = as.child ? (srv.now_ms - as.child_start_ms) / 1000 : -1;
    sb_addf(b,
            "aof_enabled:%d\r\naof_rewrite_in_progress:%d\r\naof_rewrite_scheduled:%d\r\n"
            "aof_last_rewrite_time_sec:%lld\r\naof_current_rewrite_time_sec:%lld\r\naof_last_bgrewrite_status:%s\r\n"
            "aof_rewrites:%lld\r\naof_rewrites_consecutive_failures:%lld\r\naof_last_write_status:%s\r\n"
            "aof_last_cow_size:0\r\nmodule_fork_in_progress:0\r\nmodule_fork_last_cow_size:0\r\n",
            as.on, as.child != 0, as.scheduled, as.last_rewrite_secs, cur, as.rewrite_ok ? "ok" : "err", as.rewrites,
            as.failures, as.write_ok ? "ok" : "err");
    if (as.on)
        sb_addf(b,
                "aof_current_size:%lld\r\naof_base_size:%lld\r\naof_pending_rewrite:%d\r\naof_buffer_length:%zu\r\n"
                "aof_pending_bio_fsync:%d\r\naof_delayed_fsync:%lld\r\n",
                as.cur_size + (long long)as.buf.len, as.base_size, as.scheduled, as.buf.len, atomic_load(&as.busy),
                as.delayed_fsync);
}

static void cmd_bgrewriteaof(client *c) {
    char err[256];
    int rc = rewrite_start((c->flags & CF_EXECUTING_EXEC) != 0, err, sizeof err);
    if (rc < 0) reply_error(c, err);
    else if (rc > 0) reply_status(c, "Background append only file rewriting scheduled");
    else reply_status(c, "Background append only file rewriting started");
}

static command aof_commands[] = {
    CMD("bgrewriteaof", cmd_bgrewriteaof, 1, .flags = CMD_ADMIN | CMD_NOSCRIPT | CMD_NO_ASYNC_LOADING,
        .acl = "admin slow dangerous", .summary = "Asynchronously rewrite the append-only file", .since = "1.0.0",
        .complexity = "O(1)"),
    CMD("compact", cmd_bgrewriteaof, 1, .flags = CMD_ADMIN | CMD_NOSCRIPT | CMD_NO_ASYNC_LOADING,
        .acl = "admin slow dangerous", .group = "server",
        .summary = "ferry: BGREWRITEAOF under mem-kv-cpp's name", .since = "7.0.0", .complexity = "O(1)"),
    {0},
};
const command_group aof_group = {"server", aof_commands};
