/* client_evict.c - maxmemory-clients (see client_evict.h).
 *
 * Why: a client is never stopped from sending more because it reads
 * nothing (client.c), so unread replies and query buffers can grow without
 * bound on a server whose normal clients have no output limit (Redis's
 * default). maxmemory-clients bounds all clients together: the largest go
 * first, and only as many as needed.
 *
 * Cost: a scan of every client, done only in a loop iteration in which some
 * client's output ring or query buffer grew (the rest of the time a flag
 * test), and only when the limit is set. Redis keeps clients in memory
 * buckets instead; a scan is simpler and costs nothing at the default. */
#include "client_evict.h"
#include "client.h"
#include "config.h"
#include "server.h"

void clients_memory_grew(void) { srv.client_mem_grew = 1; }

unsigned long long client_eviction_limit(void) {
    long long v = srv.cfg.maxmemory_clients;
    if (v >= 0) return (unsigned long long)v;
    return srv.cfg.maxmemory / 100 * (unsigned long long)-v + srv.cfg.maxmemory % 100 * (unsigned long long)-v / 100;
}

/* As Redis: the total counts every client (CLIENT NO-EVICT ones too), the
 * victim is the largest that may be evicted. */
static client *largest(size_t *total) {
    client *big = NULL;
    size_t big_mem = 0;
    *total = 0;
    for (client *c = srv.clients; c; c = c->next) {
        if (c->flags & (CF_FAKE | CF_CLOSE_ASAP)) continue;
        /* values referenced by unsent replies count as if copied (outbuf.h) */
        size_t m = client_memory_usage(c) + c->out_ref_bytes;
        *total += m;
        if (!(c->flags & CF_NO_EVICT) && m > big_mem) {
            big = c;
            big_mem = m;
        }
    }
    return big;
}

static void evict(client *c) {
    char info[1024];
    client_info_line(c, info, sizeof info);
    server_log(LOG_NOTICE_, "Evicting client: %s", info);
    srv.stats.evicted_clients++;
    client_close_async(c);
}

size_t clients_evict_for_memory(void) {
    if (!srv.client_mem_grew) return 0;
    srv.client_mem_grew = 0;
    unsigned long long limit = client_eviction_limit();
    if (!limit) return 0;
    size_t n = 0, total;
    for (client *c = largest(&total); c && total >= limit; c = largest(&total)) {
        evict(c);
        n++;
    }
    return n;
}
