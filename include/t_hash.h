/* t_hash.h - the hash value type (field -> value) with Redis 7.0's two
 * encodings, independent of commands and of the keyspace.
 *
 * A hash starts as a listpack (field, value, field, value ... in insertion
 * order; lookups are a linear scan, which for <= hash-max-listpack-entries
 * short entries is as fast as hashing) and becomes a hash table of dnodes
 * (dict.h: key = field, value = value bytes, one allocation per field) once
 * it has more than srv.cfg.hash_max_listpack_entries fields or a field or
 * value longer than srv.cfg.hash_max_listpack_value bytes. The conversion is
 * one-way, as in Redis.
 *
 * Strings handed out (hash_get, iteration) point into the hash and stay
 * valid until the hash is next modified.
 */
#ifndef FERRY_T_HASH_H
#define FERRY_T_HASH_H

#include <stddef.h>
#include <stdint.h>
#include "dict.h"

typedef struct hashobj {
    uint8_t enc;                    /* ENC_LISTPACK or ENC_HT (db.h) */
    union {
        unsigned char *lp;          /* ENC_LISTPACK */
        dict *ht;                   /* ENC_HT */
    } u;
} hashobj;

/* A borrowed byte string (field or value) inside a hash. */
typedef struct hstr {
    const char *p;
    size_t len;
} hstr;

hashobj *hash_new(void);               /* empty, listpack-encoded */
void hash_free(hashobj *h);
hashobj *hash_dup(const hashobj *h);      /* deep copy, same encoding */
size_t hash_mem(const hashobj *h);     /* bytes allocated for the value (estimate for big tables) */
size_t hash_len(const hashobj *h);

/* 1 and the value in *v if the field exists, else 0. */
int hash_get(hashobj *h, const char *f, size_t flen, hstr *v);
/* Set field = value: 1 if the field is new, 0 if it was updated. Converts
 * to a hash table first if field or value is too long for a listpack, and
 * after inserting if the listpack has too many fields. */
int hash_set(hashobj *h, const char *f, size_t flen, const char *v, size_t vlen);
/* hash_set without the length check: a listpack stays one however long
 * the strings (it still converts past hash-max-listpack-entries fields),
 * as Redis keeps a listpack it loads from an RDB file. */
int hash_set_keep_form(hashobj *h, const char *f, size_t flen, const char *v, size_t vlen);
/* 1 if the field existed and was removed. */
int hash_del(hashobj *h, const char *f, size_t flen);

/* Before a write of several strings (HSET's fields and values): convert to
 * a hash table if the longest is too long for a listpack, or if the total
 * would take the listpack past 1 GB. Redis checks all of a command's
 * arguments up front, even those it will not insert. */
void hash_prepare_write(hashobj *h, size_t longest, size_t total);
void hash_convert_to_ht(hashobj *h);

/* Visit every field/value pair (listpack: insertion order). fn must not
 * modify the hash. */
typedef void hash_visit_fn(void *ud, hstr f, hstr v);
void hash_foreach(hashobj *h, hash_visit_fn *fn, void *ud);

/* The hash-table encoding's SCAN step (dict_scan cursor semantics); calls
 * fn for each pair of the visited bucket(s). Listpack hashes are scanned
 * whole by the caller. */
unsigned long hash_scan_ht(hashobj *h, unsigned long cursor, hash_visit_fn *fn, void *ud);

/* Random sampling (HRANDFIELD). A sampler holds what makes picking an
 * element O(1) for the duration of one command: the offsets of a
 * listpack's fields, or, when about as many picks as fields are wanted
 * from a hash table, its nodes (exactly uniform picks; fewer picks from a
 * big table use dict_random, uniform over buckets then over the chain). */
typedef struct hash_sampler {
    hashobj *h;
    size_t n;                       /* fields */
    size_t *offs;                   /* listpack: offset of every field */
    dnode **nodes;                  /* hash table, many picks: every node */
} hash_sampler;
void hash_sampler_init(hash_sampler *s, hashobj *h, size_t picks);
void hash_sampler_free(hash_sampler *s);
/* A random field (with replacement). */
void hash_sample(hash_sampler *s, hstr *f, hstr *v);
/* `count` distinct random fields (count < number of fields), each given to
 * fn once, in random order. */
void hash_sample_distinct(hash_sampler *s, size_t count, hash_visit_fn *fn, void *ud);

/* Register the OBJ_HASH hooks (free / dup / memory) with the keyspace (registry.c). */
void hash_register_type(void);

#endif
