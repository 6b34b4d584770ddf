/* zmalloc.c - malloc wrappers that keep a running total of live heap bytes
 * (malloc_usable_size), so INFO's used_memory and maxmemory eviction work
 * from the allocator's own figures rather than from RSS. Out of memory
 * aborts, as in Redis: a server that cannot allocate cannot keep promises. */
#include "zmalloc.h"
#include <malloc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static size_t used_memory;

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
    used_memory = used_memory - old + malloc_usable_size(q);
    return q;
}

void zfree(void *p) {
    if (!p) return;
    used_memory -= malloc_usable_size(p);
    free(p);
}

char *zstrndup(const char *s, size_t n) {
    char *d = zmalloc(n + 1);
    memcpy(d, s, n);
    d[n] = '\0';
    return d;
}

char *zstrdup(const char *s) { return zstrndup(s, strlen(s)); }
size_t zmalloc_used(void) { return used_memory; }
size_t zmalloc_size(void *p) { return p ? malloc_usable_size(p) : 0; }
void zmalloc_adjust(long long delta) { used_memory = (size_t)((long long)used_memory + delta); }
