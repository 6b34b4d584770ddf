/* aof_manifest.h - the list of files that make up the append-only file, as
 * Redis 7 keeps it (aof_manifest.c): in `dir`/`appenddirname`, a manifest
 * named `appendfilename`.manifest lists one base file (an RDB snapshot,
 * <appendfilename>.<seq>.base.rdb, or commands, .base.aof) and the
 * incremental files written after it, in order (<appendfilename>.<seq>.incr.aof).
 * The manifest is replaced atomically (a temporary file, fsync, rename,
 * fsync of the directory): a crash leaves the old list or the new one.
 */
#ifndef FERRY_AOF_MANIFEST_H
#define FERRY_AOF_MANIFEST_H

#include <stddef.h>

typedef struct aof_file {
    char *name;                     /* file name inside the directory (zmalloc'd) */
    long long seq;
} aof_file;

typedef struct aof_manifest {
    aof_file base;                  /* name NULL: no base (a fresh AOF: increments only) */
    aof_file *incr;                 /* in order */
    int nincr, capincr;
    long long base_seq, incr_seq;   /* the highest sequence numbers used */
} aof_manifest;

#define AOF_MANIFEST_MAX_LINES 4096

/* Read dirpath/name. 0, 1 if it does not exist, -1 with err (a bad line,
 * two bases...). History entries are left out. */
int aof_manifest_load(const char *dirpath, const char *name, aof_manifest *m, char *err, size_t errlen);
/* Write m as dirpath/name atomically. 0 or -1 with err. */
int aof_manifest_persist(const char *dirpath, const char *name, const aof_manifest *m, char *err, size_t errlen);
void aof_manifest_add_incr(aof_manifest *m, char *name, long long seq);
void aof_manifest_free(aof_manifest *m);
/* A copy (names duplicated). */
void aof_manifest_copy(aof_manifest *dst, const aof_manifest *src);

/* File names for appendfilename `fname` (zmalloc'd). */
char *aof_incr_name(const char *fname, long long seq);
char *aof_base_name(const char *fname, long long seq, int rdb);
char *aof_manifest_name(const char *fname);
/* dir/name in buf. */
void aof_path(char *buf, size_t cap, const char *dir, const char *name);
/* fsync the directory (after a rename or a new file in it). */
void aof_sync_dir(const char *dirpath);

#endif
