/* rdb.h - snapshots of the whole keyspace in Redis's RDB file format
 * (version 10, as Redis 7.0 writes it; versions 1 to 11 are read).
 *
 * A save writes the file under a temporary name in `dir`, fsyncs it and
 * renames it over `dbfilename`, so a crash at any point leaves either the
 * old file or the new one, never a torn one. A load reads a whole file and
 * checks it (structure, checksum) before it is accepted; an error names the
 * offset where reading failed and leaves the file untouched.
 */
#ifndef FERRY_RDB_H
#define FERRY_RDB_H

#include <stddef.h>
#include <stdint.h>

#define RDB_VERSION 10              /* what ferry writes (Redis 7.0) */
#define RDB_VERSION_MAX 11          /* newest ferry reads (Redis 7.2) */

typedef struct rdb_options {
    int compress;                   /* rdbcompression */
    int checksum;                   /* rdbchecksum */
    long long key_delay_us;         /* rdb-key-save-delay: sleep per key saved (tests make saves slow) */
    const char *repl_id;            /* a snapshot for replicas: AUX repl-id, repl-offset, repl-stream-db (NULL: none) */
    long long repl_offset;
    int repl_stream_db;
} rdb_options;

/* The options in force (rdbcompression, rdbchecksum), and the replication
 * fields when the replication layer has a history to record (a replica, or
 * a primary with a backlog: a restarted server then continues it). */
rdb_options rdb_current_options(void);
typedef void rdb_repl_info_fn(rdb_options *opt);
void rdb_set_repl_info_hook(rdb_repl_info_fn *fn);

/* The whole keyspace into the file `path` (through a temporary file in the
 * same directory, fsync and rename). 0 on success, -1 with a message in err. */
int rdb_save_file(const char *path, const rdb_options *opt, char *err, size_t errlen);

/* The whole keyspace written to each of fds[0..nfds) (up to 64 sockets of
 * replicas: a diskless full sync), waiting on a full socket; a socket
 * whose write fails is dropped and the others go on. Returns the bit mask
 * of the fds that received it all. */
uint64_t rdb_save_fds(const int *fds, int nfds, const rdb_options *opt);

typedef struct rdb_load_stats {
    uint64_t keys_loaded;
    uint64_t keys_expired;          /* already expired in the file: not loaded */
    uint64_t empty_keys_skipped;
    uint64_t used_mem;              /* the writer's used-mem AUX field, 0 if absent */
    int repl_stream_db;             /* repl-stream-db AUX field (a snapshot for a replica); the caller sets -1 */
    int has_repl_id;                /* repl-id and repl-offset AUX fields were read: */
    char repl_id[41];               /* the replication history the snapshot ends */
    long long repl_offset;          /* ... and its offset there */
    size_t bytes_read;              /* where the RDB ended (an AOF with an RDB preamble goes on after it) */
} rdb_load_stats;

/* How a long load lets the rest of the server run. progress() is called
 * each time `every` more bytes have been read (and once with total bytes
 * at the start); a non-zero return aborts the load ("loading aborted").
 * key_delay_us sleeps after each key (key-load-delay: tests make loads
 * slow). */
typedef struct rdb_load_hooks {
    int (*progress)(void *ud, size_t done, size_t total);
    void *ud;
    size_t every;
    long long key_delay_us;
    int allow_dup;                  /* a key or library that exists is replaced (DEBUG RELOAD MERGE) */
    int keep_expired;               /* keys whose time passed are loaded too (a replica's load: its primary
                                     * deletes them, as Redis's loader does when it is not a master) */
    int quiet_start;                /* no progress call before `every` bytes (a replica's load, as Redis's:
                                     * a small snapshot loads without serving a client -LOADING) */
    /* a key the file holds but whose time had passed: not loaded (NULL: nothing to tell) */
    void (*expired_key)(void *ud, int dbid, const char *key, size_t klen);
    long long (*key_delay)(void *ud); /* if set, key_delay_us read again after each progress call */
    struct db *into;                /* database i loads into into[i] (a replica's swapdb load); NULL: the live ones */
    /* if set, each function library goes here instead of into the registry
     * (a swapdb load: the libraries replace the old ones when it is whole) */
    void (*library)(void *lud, const char *code, size_t len);
    void *library_ud;
} rdb_load_hooks;

/* Function libraries travel in RDB files ahead of the keys (opcode 245, the
 * library's code). The scripting layer plugs in here (registry.c): save
 * writes each library with rdb_write_function; load takes one library's
 * code (replace: one of that name may be overwritten), 0 or -1 with err. */
struct rdbw;
typedef void rdb_functions_save_fn(struct rdbw *w);
typedef int rdb_function_load_fn(const char *code, size_t len, int replace, char *err, size_t errlen);
typedef void rdb_functions_flush_fn(void);
void rdb_set_function_hooks(rdb_functions_save_fn *save, rdb_function_load_fn *load, rdb_functions_flush_fn *flush);
/* Every function library, as rdb_write_function entries (the registered
 * save hook; nothing if none). */
void rdb_save_functions(struct rdbw *w);
/* Drop every function library (a reload that empties the dataset). */
void rdb_flush_functions(void);
/* Register one library's code as a load does; 0, or -1 with err. */
int rdb_add_function(const char *code, size_t len, char *err, size_t errlen);
void rdb_write_function(struct rdbw *w, const char *code, size_t len);

/* Load an RDB image (a whole file in memory) into the keyspace, which
 * should be empty; hooks may be NULL. 0 on success; -1 with err ("... at
 * offset N") on a corrupt or unsupported file or an aborted load, the keys
 * read before the error having been inserted (a failed start-up load is
 * fatal; DEBUG RELOAD flushes). */
int rdb_load_image(const unsigned char *buf, size_t len, const rdb_load_hooks *h, rdb_load_stats *st, char *err,
                   size_t errlen);
/* A streamed load's input (a replica loading its primary's snapshot from
 * the socket as it arrives). read() puts up to cap bytes in buf and returns
 * how many (cap is RDB_SOURCE_MIN_CAP at least); 0 when the snapshot has ended, -1 when it failed (why in err),
 * -2 when nothing came within a short wait (the loader lets the server run
 * through the progress hook, then asks again). */
#define RDB_SOURCE_MIN_CAP 1024
typedef struct rdb_source {
    long (*read)(void *ud, void *buf, size_t cap);
    void *ud;
    size_t expect;                  /* its size, when known; else 0 */
    const char *err;
} rdb_source;
/* rdb_load_image over src: the whole snapshot, and nothing after it. */
int rdb_load_source(rdb_source *src, const rdb_load_hooks *h, rdb_load_stats *st, char *err, size_t errlen);
/* rdb_load_image of the file at path; 1 if the file does not exist (not
 * an error: nothing to load). */
int rdb_load_file(const char *path, const rdb_load_hooks *h, rdb_load_stats *st, char *err, size_t errlen);

/* DUMP / FUNCTION DUMP payloads end with the RDB version (2 bytes, little
 * endian) and a CRC-64 of everything before it (8 bytes). */
#define RDB_PAYLOAD_FOOTER 10
struct rdbw;
/* Append the footer to the payload being written. */
void rdb_payload_finish(struct rdbw *w);
/* The footer of p[0..len) is valid (Redis's verifyDumpPayload): a version
 * ferry reads and a matching checksum. */
int rdb_payload_ok(const unsigned char *p, size_t len);

#endif
