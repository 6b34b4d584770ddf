/* prefill.h - the data a collection test reads, written before it runs.
 *
 * Why: LRANGE, HGETALL, SMEMBERS and ZRANGE measure nothing unless their key
 * holds the collection. redis-benchmark times an LPUSH test to build its list;
 * ferry-bench instead writes each collection test's key on a connection of
 * its own just before the test (and its warm-up), pipelined and untimed:
 * DEL key, then RPUSH / HSET / SADD / ZADD in chunks of up to 100 elements
 * (fewer when -d is large, so a command stays near 1 MB), waiting for every
 * reply. Contents, for -d = d:
 *   mylist  FB_LIST_LEN values of d bytes of 'x' (as redis-benchmark's LPUSH)
 *   myhash  FB_COLL_SIZE fields element:000000000000 .. element:000000000999
 *           (redis-benchmark's HSET field names), values d bytes of 'x'
 *   myset   FB_COLL_SIZE members element:000000000000 ..., padded with 'x'
 *           to d bytes when d > 20
 *   myzset  the same members, member i with score i
 * Encoding is separate from the I/O so the unit test can check the commands
 * and run the whole exchange over a socketpair.
 */
#ifndef FB_PREFILL_H
#define FB_PREFILL_H

#include <stddef.h>

#include "out.h"
#include "work.h"

/* Commands w's prefill sends (0 for tests without one): DEL plus the chunks */
size_t fb_prefill_ncmds(const fb_workload *w);

/* Append prefill command k (0 <= k < fb_prefill_ncmds(w)) to o */
void fb_prefill_encode(fb_out *o, const fb_workload *w, size_t k);

/* Send w's prefill on the blocking socket fd and wait (at most timeout_ms
 * without progress) for all its replies. Returns 0, or -1 with the reason
 * (I/O error, timeout, protocol error, or the first error reply's text) in
 * err. */
int fb_prefill_run(int fd, const fb_workload *w, int timeout_ms, char *err, size_t errcap);

#endif
