/* backlog.c - the replication backlog, a byte ring addressed by stream
 * offset (see repl_backlog.h). */
#include "repl_backlog.h"
#include "zmalloc.h"
#include <string.h>

void backlog_init(backlog *b, size_t size, long long next) {
    b->buf = size ? zmalloc(size) : NULL;
    b->size = size;
    b->idx = 0;
    b->histlen = 0;
    b->first = next;
}

void backlog_free(backlog *b) {
    zfree(b->buf);
    b->buf = NULL;
    b->size = b->idx = b->histlen = 0;
}

void backlog_feed(backlog *b, const char *p, size_t n) {
    if (n < b->size - b->idx) { /* the common case: no wrap (false for size 0) */
        memcpy(b->buf + b->idx, p, n);
        b->idx += n;
        size_t h = b->histlen + n;
        if (h > b->size) {
            b->first += (long long)(h - b->size);
            h = b->size;
        }
        b->histlen = h;
        return;
    }
    if (!b->size) {
        b->first += (long long)n;
        return;
    }
    if (n >= b->size) { /* only the last size bytes survive */
        b->first += (long long)(b->histlen + n - b->size);
        memcpy(b->buf, p + (n - b->size), b->size);
        b->idx = 0;
        b->histlen = b->size;
        return;
    }
    size_t room = b->size - b->idx, a = n < room ? n : room;
    memcpy(b->buf + b->idx, p, a);
    memcpy(b->buf, p + a, n - a);
    b->idx = (b->idx + n) % b->size;
    size_t h = b->histlen + n;
    if (h > b->size) {
        b->first += (long long)(h - b->size);
        h = b->size;
    }
    b->histlen = h;
}

int backlog_covers(const backlog *b, long long off) { return off >= b->first && off <= backlog_end(b); }

int backlog_pieces(const backlog *b, long long off, const char **p, size_t *n) {
    size_t skip = (size_t)(off - b->first), len = b->histlen - skip;
    if (!len) return 0;
    size_t start = (b->idx + b->size - b->histlen + skip) % b->size;
    size_t a = b->size - start < len ? b->size - start : len;
    p[0] = b->buf + start;
    n[0] = a;
    if (a == len) return 1;
    p[1] = b->buf;
    n[1] = len - a;
    return 2;
}

void backlog_resize(backlog *b, size_t size) {
    if (size == b->size) return;
    long long end = backlog_end(b);
    size_t keep = b->histlen < size ? b->histlen : size;
    backlog nb;
    backlog_init(&nb, size, end - (long long)keep);
    const char *p[2];
    size_t n[2];
    int k = keep ? backlog_pieces(b, end - (long long)keep, p, n) : 0;
    for (int i = 0; i < k; i++) backlog_feed(&nb, p[i], n[i]);
    backlog_free(b);
    *b = nb;
}
