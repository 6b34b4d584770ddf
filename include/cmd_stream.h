/* cmd_stream.h - helpers shared by the stream command files: cmd_stream.c
 * (XADD, XRANGE, XREVRANGE, XLEN, XDEL, XTRIM, XSETID, XREAD, the
 * `stream_group` table), cmd_stream_cg.c (XGROUP, XREADGROUP, XACK,
 * XPENDING, XCLAIM, XAUTOCLAIM) and cmd_stream_info.c (XINFO).
 */
#ifndef FERRY_CMD_STREAM_H
#define FERRY_CMD_STREAM_H

#include "client.h"
#include "db.h"
#include "t_stream.h"

/* The stream at key: 0 with *s (NULL if the key is missing), -1 after
 * replying WRONGTYPE. write: look up for writing (expiry as a write). */
int stream_lookup(client *c, span key, int write, stream **s);

/* Parses an ID argument as Redis's streamParseID: "ms-seq", "ms" (seq =
 * missing_seq), "-" (0-0) and "+" (max) when allow_special. strict
 * (XRANGE's exclusive "(" prefix handled by the caller) refuses nothing
 * more. On failure replies "ERR Invalid stream ID specified as stream
 * command argument" and returns 0. */
int stream_parse_id(client *c, span arg, uint64_t missing_seq, int allow_special, sid *id);
/* Same without replying (0 on failure). */
int stream_parse_id_quiet(span arg, uint64_t missing_seq, int allow_special, sid *id);
/* A strict ID for XADD/XSETID etc.: "ms-seq" or "ms"; "ms-*" when
 * seq_given is not NULL (*seq_given = 0 then). */
int stream_parse_id_strict(client *c, span arg, int strict, sid *id, int *seq_given);

/* An interval bound (XRANGE, XPENDING, XAUTOCLAIM): an ID with - and +,
 * or "(" and a strict ID for an exclusive bound (start: the next ID, end:
 * the previous one). 0 after replying an error. */
int stream_parse_bound(client *c, span arg, uint64_t missing_seq, sid *id, int start);

/* Replies one entry as Redis: [id, [f1, v1, ...]]. */
void stream_reply_entry(client *c, const sentry *e);
void stream_reply_id(client *c, sid id);
/* Replies the entries of s between start and end (rev: descending), at
 * most count (0: all), as an array; returns how many. */
long stream_reply_range(client *c, const stream *s, sid start, sid end, long count, int rev);

/* The node limits from the configuration. */
void stream_limits_get(stream_limits *lim);

/* Propagation of consumer-group effects (Redis 7.0's forms):
 * XCLAIM key group consumer 0 id TIME ms RETRYCOUNT n FORCE JUSTID LASTID
 * last, and XGROUP SETID key group last ENTRIESREAD n. */
void stream_propagate_xclaim(client *c, span key, const sgroup *g, span gname, sid id, const snack *n);
void stream_propagate_group_id(client *c, span key, const sgroup *g, span gname);

/* Bumps srv.dirty and touches the key (WATCH) after a stream write. */
void stream_written(client *c, span key, long long dirty);

#endif
