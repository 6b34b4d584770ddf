/* metrics.h - Prometheus exposition on the metrics-port side socket
 * (metrics.c): started from main after the RESP listeners. */
#ifndef FERRY_METRICS_H
#define FERRY_METRICS_H
#include <stddef.h>
/* Binds metrics-port on the `bind` addresses and serves GET /metrics from
 * the event loop. 0 if disabled or listening, -1 if a bind failed. */
int metrics_listen(void);
/* The exposition text (zmalloc'd, caller zfrees), for tests. */
void metrics_render(char **out, size_t *len);
#endif
