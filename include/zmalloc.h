/* zmalloc.h - allocation wrappers that track used memory (INFO's
 * used_memory, and what maxmemory eviction and the OOM checks compare with
 * the limit). Abort on out-of-memory, like Redis. */
#ifndef FERRY_ZMALLOC_H
#define FERRY_ZMALLOC_H
#include <stddef.h>
void *zmalloc(size_t n);
void *zcalloc(size_t n);
void *zrealloc(void *p, size_t n);
void zfree(void *p);
char *zstrdup(const char *s);
char *zstrndup(const char *s, size_t n);
size_t zmalloc_used(void);
size_t zmalloc_size(void *p);
/* Add delta (may be negative) to used_memory: sub-allocators (dnode.c's
 * slabs) count their live objects rather than their pages. */
void zmalloc_adjust(long long delta);
/* A thread other than the event loop's (lazyfree.c) adds what it allocated
 * and freed since its last call to the used_memory the loop reads. */
void zmalloc_publish(void);
#endif
