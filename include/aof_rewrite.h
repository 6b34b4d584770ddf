/* aof_rewrite.h - the data as an AOF base made of commands, for
 * aof-use-rdb-preamble no (aof_rewrite.c): the function libraries as one
 * FUNCTION RESTORE, then for each database a SELECT and, per key, a
 * RESTORE of its DUMP payload (ABSTTL with its expiry). Every value type
 * round-trips exactly and redis-server loads the file too; the payloads are
 * binary, where Redis writes SET / RPUSH / HSET ... (see README). */
#ifndef FERRY_AOF_REWRITE_H
#define FERRY_AOF_REWRITE_H

#include <stddef.h>

/* Write the whole dataset as commands to path (created, fsynced). 0 or -1
 * with err. */
int aof_write_command_base(const char *path, char *err, size_t errlen);

#endif
