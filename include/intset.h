/* intset.h - a sorted array of distinct 64-bit integers, stored at the
 * narrowest width (2, 4 or 8 bytes per element) that holds all of them, in
 * one allocation. The encoding of small all-integer sets ("intset").
 *
 * Adding a value that needs a wider width upgrades every element in place
 * (the new value is then the smallest or the largest, so it goes at one
 * end). Removing never narrows the width, as in Redis. Lookups are binary
 * searches. Functions that change the set return the (possibly moved)
 * allocation; the old pointer must not be used afterwards.
 */
#ifndef FERRY_INTSET_H
#define FERRY_INTSET_H

#include <stddef.h>
#include <stdint.h>

typedef struct intset {
    uint32_t width;     /* bytes per element: 2, 4 or 8 (never 0: see t_set.c) */
    uint32_t length;    /* number of elements */
    char data[];        /* length * width bytes, ascending, native byte order */
} intset;

intset *intset_new(void);
void intset_free(intset *is);
intset *intset_dup(const intset *is);
/* Insert v; *added is 1 if it was not present. */
intset *intset_add(intset *is, int64_t v, int *added);
/* Remove v; *removed is 1 if it was present. */
intset *intset_remove(intset *is, int64_t v, int *removed);
int intset_find(const intset *is, int64_t v);
static inline uint32_t intset_len(const intset *is) { return is->length; }
/* The element at position pos (0 <= pos < length), ascending order. */
int64_t intset_get(const intset *is, uint32_t pos);
/* Keep only the elements for which keep(v, ud) returns nonzero (called in
 * ascending order, once per element); compacts in place and shrinks. */
intset *intset_filter(intset *is, int (*keep)(int64_t v, void *ud), void *ud);
/* Bytes of the allocation's payload (header + elements). */
size_t intset_blob_len(const intset *is);

#endif
