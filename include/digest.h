/* digest.h - DEBUG DIGEST and DEBUG DIGEST-VALUE: a 160-bit fingerprint of
 * the whole dataset or of single values, so tests can tell whether two
 * datasets (before and after DEBUG RELOAD, a key and its COPY, a primary
 * and its replica) hold the same data. The numbers are redis-server 7.0's
 * (SHA-1 based, see digest.c), so a ferry node and a Redis node holding the
 * same strings, lists, sets, sorted sets and hashes report the same
 * digests; streams are the exception (ferry's own deterministic digest,
 * Redis's hashes its internal node layout). Equal contents give equal
 * digests whatever the encoding (listpack or hash table, intset or hash
 * table); sets, hashes and sorted sets are digested order-free, lists and
 * streams in order. */
#ifndef FERRY_DIGEST_H
#define FERRY_DIGEST_H

#include "dict.h"

#define DIGEST_LEN 20

/* The digest of a keyspace node's value as DEBUG DIGEST-VALUE reports it:
 * type and contents, and a marker if the key has an expiry (not its key,
 * not the expiry time). */
void digest_value(const dnode *n, unsigned char out[DIGEST_LEN]);
/* The digest of every key and value (and expiry marker) of every database,
 * logically expired keys included; all zeros for an empty dataset. */
void digest_dataset(unsigned char out[DIGEST_LEN]);
/* 40 lowercase hex digits and a NUL into buf. */
void digest_hex(const unsigned char d[DIGEST_LEN], char buf[2 * DIGEST_LEN + 1]);

#endif
