/* repl_backlog.h - the replication backlog: the newest bytes of the
 * replication stream, kept so a replica whose link broke can continue from
 * its offset (PSYNC ... +CONTINUE) instead of loading a whole snapshot.
 *
 * Offsets are those of the stream: the byte fed first after the backlog
 * was created at offset `next` has offset `next`, and so on. The backlog
 * holds [first, first + histlen), histlen <= size; feeding more than size
 * bytes drops the oldest. Pure: no server state, unit-tested.
 */
#ifndef FERRY_REPL_BACKLOG_H
#define FERRY_REPL_BACKLOG_H

#include <stddef.h>

typedef struct backlog {
    char *buf;
    size_t size;                /* capacity (repl-backlog-size) */
    size_t idx;                 /* where the next byte goes */
    size_t histlen;             /* bytes held */
    long long first;            /* stream offset of the oldest byte held */
} backlog;

/* A backlog of `size` bytes whose first byte will have offset `next`. */
void backlog_init(backlog *b, size_t size, long long next);
void backlog_free(backlog *b);
void backlog_feed(backlog *b, const char *p, size_t n);
/* Change the capacity, keeping the newest bytes that fit. */
void backlog_resize(backlog *b, size_t size);
/* The stream offset just past the newest byte held. */
static inline long long backlog_end(const backlog *b) { return b->first + (long long)b->histlen; }
/* Can a replica continue from offset off (the next byte it needs)? */
int backlog_covers(const backlog *b, long long off);
/* The bytes from off to the end, in at most two pieces (the buffer wraps);
 * off must be covered. Returns the number of pieces (0 when off is the end). */
int backlog_pieces(const backlog *b, long long off, const char **p, size_t *n);

#endif
