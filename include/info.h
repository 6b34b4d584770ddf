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
#endif
