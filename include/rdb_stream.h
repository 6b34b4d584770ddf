/* rdb_stream.h - a stream value in Redis's RDB encoding (RDB files, DUMP
 * and RESTORE payloads, the AOF rewrite's RESTORE commands).
 *
 * Saving writes what redis-server 7.0 writes for RDB_TYPE_STREAM_LISTPACKS_2
 * (19): the nodes (16-byte big-endian master ID, listpack), the length,
 * last ID, first ID, greatest deleted ID and entries-added counter, then
 * every consumer group (name, last-delivered ID, entries-read counter, the
 * group PEL with delivery times and counts, the consumers with their
 * seen-time and the raw IDs of their pending entries).
 *
 * Loading reads types 15 (Redis 5-6.2: no first ID, tombstone ID, counters:
 * derived as Redis 7.0 derives them), 19 (Redis 7.0) and 21 (Redis 7.2:
 * consumers also carry an active-time, read and dropped). The payload is
 * untrusted: anything inconsistent (a node key that is not 16 bytes, a
 * node that does not validate, IDs out of order, a length that is not the
 * live entries, a last ID below the last entry, duplicate groups,
 * consumers or PEL entries, a consumer PEL entry missing from its group's
 * PEL, a group PEL entry nobody owns) refuses the whole value.
 */
#ifndef FERRY_RDB_STREAM_H
#define FERRY_RDB_STREAM_H

#include "rdb_io.h"
#include "t_stream.h"

/* The payload of stream s (after the type byte). */
void rdb_save_stream(rdbw *w, const stream *s);
/* Reads a payload of RDB type t (15, 19 or 21) into *out: 1 on success
 * (the caller owns the stream), 0 with r's error set (*out is NULL). */
int rdb_load_stream(rdbr *r, unsigned t, stream **out);

#endif
