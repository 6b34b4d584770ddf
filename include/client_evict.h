/* client_evict.h - client eviction (maxmemory-clients): when the memory of
 * all evictable clients together passes the limit, the largest are closed
 * until it no longer does, as Redis 7 does. */
#ifndef FERRY_CLIENT_EVICT_H
#define FERRY_CLIENT_EVICT_H

#include <stddef.h>

/* The limit in bytes: maxmemory-clients, or its percentage of maxmemory
 * (0, disabled, when maxmemory is 0); 0 = no client eviction. */
unsigned long long client_eviction_limit(void);

/* Something grew a client's buffers: the next clients_evict_for_memory()
 * looks at the total again. */
void clients_memory_grew(void);

/* Close the largest evictable clients (not CLIENT NO-EVICT, not fake, not
 * already closing) while the memory of all clients reaches the limit; each
 * is logged and counted in INFO's evicted_clients. Cheap when nothing grew
 * since the last call. Returns the number evicted. */
size_t clients_evict_for_memory(void);

#endif
