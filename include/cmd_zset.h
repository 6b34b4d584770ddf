/* cmd_zset.h - helpers shared by the sorted-set command files
 * (cmd_zset.c: ZADD and reads/ranges; cmd_zset_pop.c: pops, blocking pops,
 * ZRANDMEMBER, ZSCAN; cmd_zset_store.c: ZUNION/ZINTER/ZDIFF and their STORE
 * forms, ZINTERCARD). Not a public API: only those files include it.
 */
#ifndef FERRY_CMD_ZSET_H
#define FERRY_CMD_ZSET_H

#include "client.h"
#include "command.h"
#include "db.h"
#include "t_zset.h"

/* Look key up (write: without hit/miss stats). Returns 1 and sets *n, *zs
 * when it holds a sorted set, 0 when absent, -1 after replying WRONGTYPE. */
int zkey_lookup(client *c, span key, int write, dnode **n, zset **zs);
/* After a write to key's set: raise `event` (a NOTIFY_ZSET event, unless
 * NULL), then delete the key if the set became empty ("del"), else refresh
 * the node's encoding; then WATCH and dirty bookkeeping (changes added to
 * srv.dirty). */
void zkey_written(client *c, span key, dnode *n, zset *zs, long long changes, const char *event);
/* Replace dst with zs (NULL or empty: delete dst), reply the stored set's
 * length, then raise `event` (or "del" when an existing dst was deleted),
 * as Redis's store commands do. Signals waiters, touches WATCH. Takes
 * ownership of zs. */
void zkey_store(client *c, span dst, zset *zs, const char *event);

/* An option name compared as Redis does (C string, case-insensitive). */
int zopt_is(span s, const char *lit);

/* Ranges as ZRANGEBYSCORE / ZRANGEBYLEX parse them: 1 ok, 0 invalid
 * (callers reply the error text). */
int zparse_score_range(span min, span max, zscore_range *r);
int zparse_lex_range(span min, span max, zlex_range *r);

/* A collected element: member bytes (pointing into a set or argv, valid
 * while that is unmodified) and score. */
typedef struct zelem {
    const char *m;
    size_t len;
    double score;
} zelem;
typedef struct zelems {
    zelem *v;
    size_t n, cap;
    zelem inl[16];
} zelems;
void zelems_init(zelems *a);
void zelems_push(zelems *a, const char *m, size_t len, double score);
void zelems_free(zelems *a);

/* Reply a list of elements: RESP2 a flat array (member[, score] ...);
 * RESP3 with scores an array of [member, score] pairs. */
void reply_zelems(client *c, const zelem *v, size_t n, int withscores);
void reply_zelem_pair(client *c, const zelem *e);

/* Commands implemented in cmd_zset_pop.c and cmd_zset_store.c (the
 * group's table is in cmd_zset.c). */
void cmd_zpopmin(client *c);
void cmd_zpopmax(client *c);
void cmd_bzpopmin(client *c);
void cmd_bzpopmax(client *c);
void cmd_zmpop(client *c);
void cmd_bzmpop(client *c);
void cmd_zrandmember(client *c);
void cmd_zscan(client *c);
void cmd_zunionstore(client *c);
void cmd_zinterstore(client *c);
void cmd_zdiffstore(client *c);
void cmd_zunion(client *c);
void cmd_zinter(client *c);
void cmd_zdiff(client *c);
void cmd_zintercard(client *c);

/* The sorted-set value of n. */
static inline zset *zset_of(const dnode *n) { return dn_ptr(n); }

#endif
