/* span.h - a byte string that is not owned: a pointer and a length into
 * somebody else's buffer (a query buffer, a mapped file, a Lua string).
 * The base type of every parser's output, so it lives below the layers
 * that use it (client.h, the AOF reader, the script engine). */
#ifndef FERRY_SPAN_H
#define FERRY_SPAN_H

#include <stddef.h>

typedef struct span {
    const char *p;
    size_t len;
} span;

#endif
