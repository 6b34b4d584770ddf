/* zset_blocking_stub.c - TEMPORARY weak stand-ins for blocking.h until
 * src/blocking.c (lists helper, branch wt-list) is merged: no blocking,
 * the blocking commands behave as if they timed out at once. The strong
 * definitions in blocking.c replace these; delete this file then. */
#include "blocking.h"
#include "reply.h"
#include "util.h"
#include <math.h>

__attribute__((weak)) int blocking_parse_timeout(client *c, span arg, int64_t *deadline_ms) {
    double d;
    if (!str_to_d(arg.p, arg.len, &d)) {
        reply_error(c, "ERR timeout is not a float or out of range");
        return 0;
    }
    if (d < 0) {
        reply_error(c, "ERR timeout is negative");
        return 0;
    }
    *deadline_ms = 0;
    return 1;
}
__attribute__((weak)) int blocking_allowed(const client *c) { (void)c; return 0; }
__attribute__((weak)) void block_for_keys(client *c, const span *keys, int nkeys, int64_t deadline_ms, int null_kind) {
    (void)keys; (void)nkeys; (void)deadline_ms; (void)null_kind;
    reply_null_array(c);
}
__attribute__((weak)) void signal_key_ready(struct db *d, const char *key, size_t klen) { (void)d; (void)key; (void)klen; }
