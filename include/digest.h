/* digest.h - DEBUG DIGEST and DEBUG DIGEST-VALUE: a 160-bit fingerprint of
 * the whole dataset or of single values, so tests can tell whether two
 * datasets (before and after DEBUG RELOAD, a key and its COPY) hold the
 * same data. Equal contents give equal digests whatever the encoding
 * (listpack or hash table, intset or hash table); sets and hashes are
 * digested order-free, lists and streams (entries, counters, groups) in
 * order. Deterministic across processes, but not the same numbers as
 * Redis's (which hashes with SHA-1). */
#ifndef FERRY_DIGEST_H
#define FERRY_DIGEST_H

#include "dict.h"

#define DIGEST_LEN 20

/* The digest of a keyspace node's value (not its key or expiry). */
void digest_value(const dnode *n, unsigned char out[DIGEST_LEN]);
/* The digest of every key, value and expiry of every database; all zeros
 * for an empty dataset. */
void digest_dataset(unsigned char out[DIGEST_LEN]);
/* 40 lowercase hex digits and a NUL into buf. */
void digest_hex(const unsigned char d[DIGEST_LEN], char buf[2 * DIGEST_LEN + 1]);

#endif
