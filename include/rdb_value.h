/* rdb_value.h - one value in Redis's RDB encoding: the type byte and the
 * payload, as an RDB file stores it after the key and as DUMP returns it.
 *
 * Saving writes what redis-server 7.0 writes for the same value and
 * encoding: strings (integer-encoded when they are int32s, LZF per
 * rdbcompression), lists as quicklist-2 nodes of listpacks, sets as an
 * intset or members, hashes and sorted sets as a listpack or entries,
 * streams as their listpack nodes and groups (rdb_stream.h).
 * Loading reads every encoding Redis 2.x to 7.2 wrote for the types ferry
 * has; a type it does not have (modules) is an error that names the type. Loaded values take the encoding ferry's own commands would
 * give them under the current thresholds. */
#ifndef FERRY_RDB_VALUE_H
#define FERRY_RDB_VALUE_H

#include <stdint.h>
#include "dict.h"
#include "rdb_io.h"

/* RDB value types */
enum {
    RDB_TYPE_STRING = 0, RDB_TYPE_LIST = 1, RDB_TYPE_SET = 2, RDB_TYPE_ZSET = 3, RDB_TYPE_HASH = 4,
    RDB_TYPE_ZSET_2 = 5, RDB_TYPE_MODULE = 6, RDB_TYPE_MODULE_2 = 7, RDB_TYPE_HASH_ZIPMAP = 9,
    RDB_TYPE_LIST_ZIPLIST = 10, RDB_TYPE_SET_INTSET = 11, RDB_TYPE_ZSET_ZIPLIST = 12,
    RDB_TYPE_HASH_ZIPLIST = 13, RDB_TYPE_LIST_QUICKLIST = 14, RDB_TYPE_STREAM_LISTPACKS = 15,
    RDB_TYPE_HASH_LISTPACK = 16, RDB_TYPE_ZSET_LISTPACK = 17, RDB_TYPE_LIST_QUICKLIST_2 = 18,
    RDB_TYPE_STREAM_LISTPACKS_2 = 19, RDB_TYPE_SET_LISTPACK = 20, RDB_TYPE_STREAM_LISTPACKS_3 = 21,
};

/* A value read from RDB: its keyspace type and either the string bytes or
 * the structure pointer (db_add_ptr's argument), with the encoding. */
typedef struct rdb_value {
    int type;                   /* OBJ_* */
    int enc;                    /* ENC_* */
    void *ptr;                  /* collections */
    rdb_str str;                /* OBJ_STRING */
} rdb_value;

/* The RDB type byte of a keyspace node's value (by its encoding), and its
 * payload; an RDB file has the key between the two, DUMP has none. */
unsigned rdb_value_type(const dnode *n);
void rdb_save_payload(rdbw *w, const dnode *n);
/* Is t a type byte rdb_load_value accepts (else the loader names it)? */
int rdb_type_known(unsigned t);
/* The name of an RDB type byte for error messages ("stream", "module" ...). */
const char *rdb_type_name(unsigned t);
/* Read the payload of a value of RDB type t. 1 on success (the caller owns
 * v: insert it or rdb_value_free it); 0 with r's error set. */
int rdb_load_value(rdbr *r, unsigned t, rdb_value *v);
struct db;
/* A key node holding v with the encoding Redis gives a loaded value (not
 * in any db yet); takes v. */
dnode *rdb_value_node(const char *key, size_t klen, rdb_value *v, int64_t expire_ms);
/* rdb_value_node inserted under key, which must be absent (RESTORE). */
dnode *rdb_value_store(struct db *d, const char *key, size_t klen, rdb_value *v, int64_t expire_ms);
/* The access stamp an RDB file (IDLE, FREQ) or RESTORE (IDLETIME, FREQ)
 * gives a key, kept when the policy uses it: -1 = not given. */
void rdb_value_set_access(dnode *n, long long idle_secs, int freq);
/* A collection with no elements (Redis skips such keys when loading and
 * refuses them in RESTORE). */
int rdb_value_empty(const rdb_value *v);
void rdb_value_free(rdb_value *v);

#endif
