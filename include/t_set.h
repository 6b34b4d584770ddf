/* t_set.h - the set value type behind SADD, SINTER & co: an intset while
 * the set holds only integers and at most set-max-intset-entries of them,
 * a hash table of members otherwise (Redis 7.0's two set encodings).
 *
 * An fset pointer designates either an intset or a hash-table set; both
 * start with a 32-bit word that tells which (an intset's width is 2, 4 or
 * 8; the hash-table form has 0 there), so the keyspace node can store a
 * single pointer and a small set costs one allocation. Members of the
 * hash-table form are dict nodes carrying the member as key and no value.
 *
 * Functions that may replace the set (conversion, intset reallocation)
 * take an fset ** and update it; callers store the new pointer back.
 */
#ifndef FERRY_T_SET_H
#define FERRY_T_SET_H

#include <stddef.h>
#include <stdint.h>
#include "dict.h"

typedef struct fset fset;

/* One member as read from a set. p/len always hold its bytes (for an
 * intset element, the decimal digits in buf); is_int says whether it came
 * from an intset, v is then its value. */
typedef struct fset_member {
    const char *p;
    size_t len;
    int64_t v;
    int is_int;
    dnode *node;        /* hash-table member: its node, else NULL */
    char buf[24];
} fset_member;

/* Iteration: intset ascending, hash table in bucket order. The set must
 * not be modified until fset_iter_end. */
typedef struct fset_iter {
    fset *s;
    uint32_t pos;       /* intset position */
    int table;          /* hash table: current table, bucket and next node */
    size_t bucket;
    dnode *next;
} fset_iter;

fset *fset_new_intset(void);
fset *fset_new_ht(void);
/* The encoding Redis 7.0 gives a set created for this first member:
 * intset if it is an integer (string2ll rules), else hash table. */
fset *fset_new_for(const char *m, size_t len);
void fset_free(fset *s);
fset *fset_dup(const fset *s);
/* Bytes allocated for the set (its structure and all members). */
size_t fset_mem(const fset *s);

int fset_encoding(const fset *s);           /* ENC_INTSET or ENC_HT (db.h) */
size_t fset_size(const fset *s);

/* 1 if added. Converts to a hash table when m is not an integer or the
 * intset grows past srv.cfg.set_max_intset_entries. */
int fset_add(fset **s, const char *m, size_t len);
int fset_add_member(fset **s, const fset_member *m);
/* 1 if removed. Call fset_removed_done once after a batch of removals. */
int fset_remove(fset **s, const char *m, size_t len);
void fset_removed_done(fset *s);
int fset_contains(fset *s, const char *m, size_t len);
int fset_contains_member(fset *s, const fset_member *m);

void fset_iter_init(fset_iter *it, fset *s);
int fset_iter_next(fset_iter *it, fset_member *m);   /* 0 at the end */
void fset_iter_end(fset_iter *it);

/* The same members in a freshly built set (intset if they are all
 * integers and not too many, as SADD into a new key would make it); frees s. */
fset *fset_rebuild(fset *s);

/* A random member (the set must not be empty). */
void fset_random(fset *s, fset_member *m);

/* For the hash-table form only (fset_encoding == ENC_HT): its dict. */
dict *fset_dict(fset *s);
/* For the intset form only (fset_encoding == ENC_INTSET): keep the members
 * for which keep(v, ud) is nonzero (called in ascending order); returns
 * the (moved) set. */
fset *fset_intset_filter(fset *s, int (*keep)(int64_t v, void *ud), void *ud);

/* A member from a dict node / an integer, as fset_member. */
void fset_member_from_node(fset_member *m, const dnode *n);
void fset_member_from_int(fset_member *m, int64_t v);

/* Register the OBJ_SET hooks (free / dup / memory) with the keyspace (registry.c). */
void set_register_type(void);

#endif
