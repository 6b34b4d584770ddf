/* persist.h - when the keyspace is saved and loaded: SAVE, BGSAVE (a forked
 * child writes the snapshot while the parent serves), LASTSAVE, `save`
 * points checked from the cron, the load at start-up and the save at
 * shutdown, and INFO persistence. The file format is rdb.c's. */
#ifndef FERRY_PERSIST_H
#define FERRY_PERSIST_H

#include "command.h"

#include <stdint.h>
#include <sys/types.h>

struct sbuf;
struct rdb_options;

extern const command_group persist_group;

/* Runs the event loop once without waiting, so clients are served (with
 * -LOADING) during a long load; non-zero asks the load to stop (shutdown). */
typedef int persist_events_fn(void);

/* Start-up: load dir/dbfilename if it exists, calling `events` every
 * loading-process-events-interval-bytes. 0 on success (or no file); 1 if a
 * shutdown stopped the load; -1 after logging why (the caller exits: a
 * corrupt file is never half loaded in silence, and it is left as it is). */
int persist_load_at_startup(persist_events_fn *events);

/* A replica's full sync: load the snapshot at path into the (emptied)
 * keyspace as the start-up load does (clients served with -LOADING every
 * loading-process-events-interval-bytes, INFO's loading_* fields, the cron
 * held). 0, or -1 with err. */
struct rdb_load_stats;
int persist_load_for_replica(const char *path, struct rdb_load_stats *st, char *err, size_t errlen);
/* The same from the primary's socket as it arrives (repl-diskless-load);
 * `where` (may be NULL) gives the hooks' into, library and library_ud: the
 * live databases are served meanwhile, without -LOADING when async. */
struct rdb_source;
struct rdb_load_hooks;
int persist_stream_for_replica(struct rdb_source *src, const struct rdb_load_hooks *where, int async,
                               struct rdb_load_stats *st, char *err, size_t errlen);
/* What the start-up load read from an RDB file (its replication fields:
 * a restarted server continues its history), or NULL if none was read. */
const struct rdb_load_stats *persist_startup_load(void);
/* The keys that start-up load found already expired, as the commands that
 * delete them (SELECT / DEL or UNLINK: a restarted primary passes them to
 * its replicas, which still hold those keys); freed by the _free call. */
void persist_startup_expired(const char **p, size_t *n);
void persist_startup_expired_free(void);
/* Cron: reap a finished background save, start one when a save point is
 * due or one was scheduled. */
void persist_cron(void);
/* Shutdown starts: logged and told to systemd (STOPPING=1), background
 * children stopped, then a save if `save` is forced or save points are
 * configured (and not nosave). 0 if the server may exit, -1 if the save
 * failed (logged). */
int persist_shutdown_save(int force_save, int nosave);
/* A background save (BGSAVE's child) is running. */
int persist_child_running(void);
/* A background save failed and stop-writes-on-bgsave-error is yes: write
 * commands are refused with -MISCONF. */
int persist_writes_refused(void);
/* A snapshot for replicas, carrying opt's replication fields: to disk
 * (data_fd NULL: dir/dbfilename, as BGSAVE), or diskless: the child writes
 * "$EOF:<mark>\r\n" <rdb> <mark> (mark: 40 bytes) into a pipe whose read
 * end is *data_fd, and does not exit before the parent closes *exit_fd
 * (every replica has the bytes) or dies. -1 if another child runs or fork
 * fails. */
int persist_bgsave_for_repl(int *data_fd, int *exit_fd, const char *mark, const struct rdb_options *opt);
/* Stop a running diskless snapshot (no replica is left to get it). */
void persist_kill_repl_child(void);
/* Stop a running save to disk (no replica waits for it and no save point
 * is configured): not counted as a failed save, as Redis's SIGUSR1. */
void persist_kill_disk_child(void);
/* After FLUSHALL, as Redis: a running save is stopped (replicas waiting
 * for it sync again), and the empty dataset is saved if `save` is set. */
void persist_flushall_done(void);
/* `save` has at least one point. */
int persist_has_save_points(void);
/* Told of every background save that ends (BGSAVE's too): ok, and whether
 * it was diskless. */
typedef void persist_repl_done_fn(int ok, int to_sockets);
void persist_set_repl_hook(persist_repl_done_fn *fn);
enum { PERSIST_CHILD_NONE = 0, PERSIST_CHILD_DISK = 1, PERSIST_CHILD_SOCKETS = 2 };
/* What the running background save writes to. */
int persist_child_target(void);
/* The body of INFO persistence. */
void persist_info(struct sbuf *b);
/* The loading_* fields Redis ends the section with while a load runs
 * (nothing otherwise). */
void persist_loading_info(struct sbuf *b);
/* DEBUG RELOAD: save (unless NOSAVE), empty the keyspace and the function
 * libraries (unless NOFLUSH), load the file back (MERGE: what exists is
 * replaced by the file's). 0 or -1 with err. */
/* In a save or rewrite child, first thing: it dies with its parent (a
 * server killed with -9 leaves no child writing on; Linux). */
void persist_child_follows_parent(pid_t parent);

#define RELOAD_NOSAVE  (1u << 0)
#define RELOAD_NOFLUSH (1u << 1)
#define RELOAD_MERGE   (1u << 2)
int persist_debug_reload(unsigned opts, char *err, size_t errlen);

#endif
