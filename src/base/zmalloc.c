/* zmalloc.c - malloc wrappers that keep a running total of live heap bytes
 * (malloc_usable_size), so INFO's used_memory and maxmemory eviction work
 * from the allocator's own figures rather than from RSS. Out of memory
 * aborts, as in Redis: a server that cannot allocate cannot keep promises.
 *
 * Threads: the lazy-free thread (lazyfree.c) frees values too. Each thread
 * counts into its own thread-local total (no atomic instruction on the
 * event loop's hot path); the other threads publish theirs into one atomic
 * (zmalloc_publish), and used_memory, read by the event loop, is its own
 * total plus what was published. */
#include "zmalloc.h"
#include <malloc.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static _Thread_local long long used_memory; /* this thread's net bytes */
static _Atomic long long published;         /* other threads' net bytes */

static void oom(size_t n) {
    fprintf(stderr, "ferry: out of memory allocating %zu bytes\n", n);
    fflush(stderr);
    abort();
}

void *zmalloc(size_t n) {
    void *p = malloc(n ? n : 1);
    if (!p) oom(n);
    used_memory += malloc_usable_size(p);
    return p;
}

void *zcalloc(size_t n) {
    void *p = calloc(1, n ? n : 1);
    if (!p) oom(n);
    used_memory += malloc_usable_size(p);
    return p;
}

void *zrealloc(void *p, size_t n) {
    if (!p) return zmalloc(n);
    size_t old = malloc_usable_size(p);
    void *q = realloc(p, n ? n : 1);
    if (!q) oom(n);
    used_memory += (long long)malloc_usable_size(q) - (long long)old;
    return q;
}

void zfree(void *p) {
    if (!p) return;
    used_memory -= (long long)malloc_usable_size(p);
    free(p);
}

char *zstrndup(const char *s, size_t n) {
    char *d = zmalloc(n + 1);
    memcpy(d, s, n);
    d[n] = '\0';
    return d;
}

char *zstrdup(const char *s) { return zstrndup(s, strlen(s)); }
size_t zmalloc_used(void) {
    long long t = used_memory + atomic_load_explicit(&published, memory_order_relaxed);
    return t > 0 ? (size_t)t : 0;
}

void zmalloc_publish(void) {
    atomic_fetch_add_explicit(&published, used_memory, memory_order_relaxed);
    used_memory = 0;
}
size_t zmalloc_size(void *p) { return p ? malloc_usable_size(p) : 0; }
void zmalloc_adjust(long long delta) { used_memory += delta; }
