/* info.h - the INFO command and its renderer (info.c). */
#ifndef FERRY_INFO_H
#define FERRY_INFO_H
#include <stddef.h>
#include "client.h"
void cmd_info(client *c);
/* sections: space separated list (NULL or "" = default). Returns a zmalloc'd
 * string the caller zfrees; *out receives it, the return value is its length. */
size_t info_render(const char *sections, char **out);
/* Called by the cron every tick: samples for instantaneous_* fields. */
void info_cron_sample(void);
/* DEBUG CHANGE-REPL-ID: a new random replication id. */
void info_change_replid(void);
/* MEMORY STATS and MEMORY DOCTOR (their figures are INFO's). */
void cmd_memory_stats(client *c);
void cmd_memory_doctor(client *c);
/* CONFIG RESETSTAT: every statistic INFO reports (server counters, command
 * stats, latency histograms, error counts) back to zero; peak memory to now. */
void stats_reset_all(void);
#endif
