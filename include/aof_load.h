/* aof_load.h - replaying append-only files into the keyspace (aof_load.c).
 *
 * A file is mapped and its commands run one after the other on a client of
 * the loader's own, with the dataset marked as loading (nothing is
 * propagated). A file that starts with "REDIS" is an RDB snapshot, loaded
 * by rdb.c, and any commands after it follow (a Redis 6 AOF with an RDB
 * preamble). A MULTI block runs only once its EXEC has been read, so a
 * transaction is applied whole or not at all.
 *
 * The end of the last file may be cut short (a crash in the middle of a
 * write): with `truncated_ok` everything before the first incomplete
 * command (or the MULTI of an unfinished transaction) is kept, the file is
 * truncated there and a warning is logged; without, it is an error. Bytes
 * that are not a command anywhere else, or an unknown command, are an
 * error naming the file and the offset.
 */
#ifndef FERRY_AOF_LOAD_H
#define FERRY_AOF_LOAD_H

#include <stddef.h>
#include <stdint.h>

#include "rdb.h"

typedef struct aof_load_opts {
    int last;                       /* the last file: its end may be truncated */
    int truncated_ok;               /* aof-load-truncated */
    const rdb_load_hooks *hooks;    /* progress (serving -LOADING), may be NULL */
} aof_load_opts;

typedef struct aof_load_result {
    uint64_t commands;
    size_t size;                    /* bytes kept (the file's size, or where it was truncated) */
    int truncated;                  /* the end was cut and the file truncated */
    rdb_load_stats rdb;             /* of an RDB base or preamble */
} aof_load_result;

/* 0, 1 if the file does not exist, -1 with err. `shown` is the name used in
 * messages. */
int aof_load_file(const char *path, const char *shown, const aof_load_opts *o, aof_load_result *res, char *err,
                  size_t errlen);

#endif
