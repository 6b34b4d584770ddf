/* t_stream.h - the stream value type behind XADD, XRANGE, XREADGROUP & co.
 *
 * Storage (designed for bytes per entry; see t_stream.c's essay): entries
 * are packed in blocks of at most stream-node-max-entries entries, each
 * block a single allocation holding its master field names and its
 * entries, IDs delta-encoded against the previous entry and values
 * length-prefixed. Blocks live in an array ordered by ID (XADD only ever
 * appends at the end, so the array is Redis's radix tree without the tree).
 * A block splits where Redis would split its listpack node (each block
 * tracks the size the Redis listpack of the same entries would have), so
 * approximate trimming (`~`) removes exactly the entries redis-server
 * removes and RDB files carry the same nodes.
 *
 * Consumer groups (sgroup) keep their pending entries (the PEL) in an
 * ordered map by ID (sidmap), as do consumers (sconsumer).
 */
#ifndef FERRY_T_STREAM_H
#define FERRY_T_STREAM_H

#include <stddef.h>
#include <stdint.h>
#include "span.h"

typedef struct sid {
    uint64_t ms, seq;
} sid;

static inline int sid_cmp(sid a, sid b) {
    if (a.ms != b.ms) return a.ms < b.ms ? -1 : 1;
    if (a.seq != b.seq) return a.seq < b.seq ? -1 : 1;
    return 0;
}
static inline int sid_is_zero(sid a) { return !a.ms && !a.seq; }
#define SID_MAX ((sid){UINT64_MAX, UINT64_MAX})
#define SID_MIN ((sid){0, 0})
/* ID text: "<ms>-<seq>" into buf (at least 42 bytes); returns its length. */
size_t sid_fmt(sid id, char *buf);
/* The next / previous ID; 0 if there is none (overflow). */
int sid_incr(sid *id);
int sid_decr(sid *id);

/* ---- ordered map by ID (PELs) ----------------------------------------- */
typedef struct sidmap_node sidmap_node;
typedef struct sidmap {
    sidmap_node *head;          /* skiplist header */
    size_t len;
    int level;
} sidmap;
void sidmap_init(sidmap *m);
void sidmap_free(sidmap *m, void (*free_val)(void *));
void *sidmap_get(const sidmap *m, sid id);
/* 1 if inserted, 0 if id was present (value unchanged). */
int sidmap_put(sidmap *m, sid id, void *val);
/* Removes id; returns its value or NULL. */
void *sidmap_del(sidmap *m, sid id);
/* First node with ID >= id (NULL: none); then sidmap_next. */
sidmap_node *sidmap_seek(const sidmap *m, sid id);
/* Last node with ID <= id (NULL: none); then sidmap_prev. */
sidmap_node *sidmap_seek_rev(const sidmap *m, sid id);
sidmap_node *sidmap_first(const sidmap *m);
sidmap_node *sidmap_last(const sidmap *m);
sidmap_node *sidmap_next(const sidmap_node *n);
sidmap_node *sidmap_prev(const sidmap_node *n);
sid sidmap_id(const sidmap_node *n);
void *sidmap_val(const sidmap_node *n);

/* ---- consumer groups -------------------------------------------------- */
struct sconsumer;
typedef struct snack {          /* a pending entry */
    int64_t delivery_time;      /* unix ms of the last delivery */
    uint64_t delivery_count;
    struct sconsumer *consumer;
} snack;

typedef struct sconsumer {
    char *name;
    size_t nlen;
    int64_t seen_time;          /* unix ms of the last interaction */
    sidmap pel;                 /* id -> snack* (shared with the group's PEL) */
} sconsumer;

#define SCG_INVALID_ENTRIES_READ (-1LL)
typedef struct sgroup {
    char *name;
    size_t nlen;
    sid last_id;                /* last delivered ID */
    long long entries_read;     /* logical read counter, or SCG_INVALID_ENTRIES_READ */
    sidmap pel;                 /* id -> snack* (owned here) */
    sconsumer **consumers;      /* ordered by name (Redis's radix-tree order) */
    size_t nconsumers, ccap;
} sgroup;

/* ---- the stream ------------------------------------------------------- */
typedef struct sblock sblock;
typedef struct stream {
    sblock **blk;               /* blocks in ID order: blk[head .. head + nblk) */
    size_t head, nblk, cap;
    uint64_t length;            /* live entries */
    sid last_id;                /* greatest ID ever added (or set by XSETID) */
    sid first_id;               /* first live entry (0-0 if empty) */
    sid max_deleted_id;         /* greatest ID removed by XDEL (or XSETID MAXDELETEDID) */
    uint64_t entries_added;     /* entries ever added */
    sgroup **groups;            /* ordered by name */
    size_t ngroups, gcap;
} stream;

stream *stream_new(void);
void stream_free(stream *s);
stream *stream_dup(const stream *s);
size_t stream_mem(const stream *s);
void stream_register_type(void);

/* Node limits (stream-node-max-bytes, stream-node-max-entries; 0 =
 * unlimited) used when appending. */
typedef struct stream_limits {
    size_t max_bytes;
    long long max_entries;
} stream_limits;

/* Appends entry id (> s->last_id, checked by the caller) with nf
 * field/value pairs fv[0..2nf). Updates length, last_id, entries_added,
 * first_id. */
void stream_append(stream *s, sid id, const span *fv, size_t nf, const stream_limits *lim);

/* Trimming (XADD / XTRIM): MAXLEN keeps at most `maxlen` entries, MINID
 * drops entries below `minid`; approx removes whole blocks only; limit
 * caps the entries removed when approx (0: no cap). Returns the number
 * removed. */
enum { STRIM_NONE = 0, STRIM_MAXLEN = 1, STRIM_MINID = 2 };
typedef struct stream_trim_args {
    int strategy;
    int approx;
    long long limit;
    long long maxlen;
    sid minid;
} stream_trim_args;
long long stream_trim(stream *s, const stream_trim_args *a);

/* Deletes entry id if present and live: 1 if deleted. Updates
 * max_deleted_id and first_id like XDEL. */
int stream_delete(stream *s, sid id);

/* One entry as iterated: its ID and nf field/value spans (fv[2i], fv[2i+1])
 * pointing into the stream; valid until the next call or a change. */
typedef struct sentry {
    sid id;
    size_t nf;
    const span *fv;
} sentry;

/* Decoding scratch: field/value spans and text for integer elements. */
typedef struct sb_scratch {
    span *fv;
    char *buf;
    size_t cap;
} sb_scratch;

typedef struct stream_iter {
    const stream *s;
    sid start, end;
    int rev, done;
    size_t bi;                  /* current block index */
    uint32_t pos;               /* forward: offset of the next entry; reverse: entries left; UINT32_MAX: not open */
    uint32_t k;                 /* forward: entries read in the block */
    sid prev;                   /* forward: ID of the previous entry in the block */
    struct { uint32_t off; sid prev; } *offs; /* reverse: the block's entries */
    uint32_t ocap;
    sb_scratch sc;
} stream_iter;
/* Live entries with start <= ID <= end, ascending (rev: descending). */
void stream_iter_init(stream_iter *it, const stream *s, sid start, sid end, int rev);
int stream_iter_next(stream_iter *it, sentry *e);
void stream_iter_end(stream_iter *it);

/* First / last live entry ID; 0 if the stream is empty. */
int stream_first_id(const stream *s, sid *id);
int stream_last_live_id(const stream *s, sid *id);
/* Does entry id exist (live)? */
int stream_has(const stream *s, sid id);

/* Redis 7.0's logical-counter helpers (consumer group lag). */
long long stream_estimate_distance(const stream *s, sid id);
int stream_range_has_tombstones(const stream *s, const sid *start, const sid *end);

/* Blocks (XINFO STREAM's radix-tree-keys) and, for RDB/DUMP, each block
 * rendered as the Redis listpack node redis-server would hold: the master
 * ID (*master) and the listpack bytes (zmalloc'd, *len). */
size_t stream_block_count(const stream *s);
sid stream_block_master(const stream *s, size_t i);  /* block i's first ID (its Redis node key) */
unsigned char *stream_block_listpack(const stream *s, size_t i, sid *master, size_t *len);
/* Appends a block read from a Redis listpack node (RDB/RESTORE): validates
 * it fully (structure, IDs ascending and > the previous block's, counts);
 * returns 0 on success, -1 if malformed. Updates length and the block
 * array but not last_id / entries_added / first_id (the loader sets them
 * from the file, then calls stream_loaded). */
int stream_add_listpack(stream *s, sid master, const unsigned char *lp, size_t len);
void stream_loaded(stream *s);

/* Consumer groups. */
sgroup *stream_group_find(const stream *s, const char *name, size_t nlen);
sgroup *stream_group_create(stream *s, const char *name, size_t nlen, sid last_id, long long entries_read);
int stream_group_destroy(stream *s, const char *name, size_t nlen);
sconsumer *stream_consumer_find(const sgroup *g, const char *name, size_t nlen);
sconsumer *stream_consumer_create(sgroup *g, const char *name, size_t nlen, int64_t now_ms);
/* Deletes the consumer and its pending entries (removed from the group's
 * PEL too); returns how many were pending. */
size_t stream_consumer_delete(sgroup *g, sconsumer *c);
/* PEL: add a new pending entry for c (delivery now), move one to another
 * consumer, acknowledge (remove) one. */
snack *stream_pel_add(sgroup *g, sconsumer *c, sid id, int64_t now_ms);
void stream_pel_move(sgroup *g, snack *n, sid id, sconsumer *to);
int stream_pel_ack(sgroup *g, sid id);

#endif
