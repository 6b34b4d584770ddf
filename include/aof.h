/* aof.h - the append-only file (aof.c): every write the server propagates
 * (propagate.h) is appended to the current incremental file of a Redis 7
 * multi-part AOF (aof_manifest.h), and replayed at start-up (aof_load.h).
 *
 * Durability: the bytes a loop iteration appended are written before any
 * reply of that iteration leaves the server (the write barrier, run before
 * every reply write), and with `appendfsync always` also fdatasync'ed:
 * one write and one fsync for all the clients of an iteration (group
 * commit). With `everysec` a background thread fsyncs about once a second;
 * with `no` the kernel decides.
 *
 * Rewrite (BGREWRITEAOF, COMPACT, auto-aof-rewrite-*): a new incremental
 * file is opened and listed in the manifest, then a forked child writes the
 * data as of that instant as the new base; when it succeeds, the manifest
 * becomes that base and the increments opened since, and the old files are
 * deleted.
 */
#ifndef FERRY_AOF_H
#define FERRY_AOF_H

#include "command.h"
#include "rdb.h"

struct sbuf;

extern const command_group aof_group;

/* appendonly is yes in the configuration. */
int aof_configured(void);
/* Start-up with appendonly yes: load the AOF (the manifest's files, or a
 * Redis 6 single file, which is then moved into the directory as the base)
 * and open it for appending. 0, 1 if a shutdown stopped the load, -1 after
 * logging why (the server exits). */
int aof_startup(const rdb_load_hooks *h);
/* Write (and under `always` fsync) what is appended but not written yet.
 * The io layer calls it before writing any reply. */
void aof_write_barrier(void);
/* Cron: the everysec fsync, retrying a failed write, reaping a rewrite,
 * starting a scheduled or automatic one. */
void aof_cron(void);
/* Shutdown: write and fsync everything; stop a rewrite. */
void aof_shutdown(void);
/* A background process (a rewrite) runs: BGSAVE must wait. */
int aof_child_running(void);
/* Writes are refused because the AOF cannot be written (why: strerror). */
int aof_writes_refused(const char **why);
/* CONFIG SET of an aof/append directive took effect: 0, or -1 with err
 * (appendonly yes could not start the AOF). */
int aof_config_changed(const char *name, char *err, size_t errlen);
/* DEBUG LOADAOF: write and fsync, empty the dataset, load the AOF's files
 * again. 0 or -1 with err (the AOF is off). */
int aof_debug_loadaof(char *err, size_t errlen);
/* INFO persistence's aof_* fields. */
void aof_info(struct sbuf *b);

#endif
