/* fuzz_config.c - libFuzzer target for the config loader (src/server/config.c,
 * src/server/config_load.c, src/base/splitargs.c).
 *
 * Why: config files and CONFIG SET values are text from outside, with
 * quoting, escapes, units and ranges; a crash, a leak or an out-of-range
 * value that slips through would take the server down at start-up or at
 * runtime. The input is loaded as config text over the defaults with
 * config_load_string (include and warnings disabled). Then:
 *  - the fields ferry uses must be inside their documented ranges;
 *  - every directive's value, as CONFIG GET prints it, must be accepted
 *    again by config_parse (what CONFIG SET does) and come back unchanged,
 *    so GET -> SET round trips and CONFIG REWRITE output reloads.
 * ASan/LSan check memory; each input gets an exact-size heap copy.
 *
 * Build (links the server without main.c):
 *   clang -g -O1 -fsanitize=fuzzer,address,undefined -D_GNU_SOURCE -Iinclude fuzz/fuzz_config.c \
 *     $(ls src/[a-z]*.c | grep -v -e main.c -e event_epoll.c -e event_kqueue.c) -lm -o fuzz_config
 * Run:   ./fuzz_config -max_total_time=60 fuzz/corpus/config
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "config.h"
#include "config_internal.h"
#include "zmalloc.h"


static void check_ranges(const ferry_config *c) {
    if (c->port < 0 || c->port > 65535) abort();
    if (c->bind_count < 0 || c->bind_count > CONFIG_MAX_BIND) abort();
    for (int i = 0; i < c->bind_count; i++)
        if (!c->bind[i] || !c->bind[i][0]) abort();
    if (c->databases < 1 || c->hz < 1 || c->hz > 500) abort();
    if (c->maxclients < 1 || c->timeout < 0 || c->tcp_keepalive < 0 || c->tcp_backlog < 0) abort();
    if (c->loglevel < LOG_DEBUG_ || c->loglevel > LOG_NOTHING_) abort();
    if (c->maxmemory_policy < 0 || c->maxmemory_policy > 7 || c->maxmemory_samples < 1) abort();
    if (c->proto_max_bulk_len < 1024 * 1024 || c->client_query_buffer_limit < 1024 * 1024) abort();
    if (c->slowlog_log_slower_than < -1 || c->slowlog_max_len < 0 || c->latency_monitor_threshold < 0) abort();
    if (c->active_expire_effort < 1 || c->active_expire_effort > 10) abort();
    if (c->enable_debug_command < 0 || c->enable_debug_command > 2) abort();
    for (int i = 0; i < COB_CLASSES; i++)
        if (c->cob[i].soft_seconds < 0) abort();
    if (!c->logfile || !c->dir || !c->dir[0]) abort();
    if (!c->requirepass != !c->requirepass_len || !c->masterauth != !c->masterauth_len) abort();
}

static void check_round_trip(const ferry_config *c) {
    char err[512];
    for (int i = 0; i < config_count(); i++) {
        if (config_real(i) != i) continue;
        char *v = config_get(c, i), *again = NULL;
        if (!strcmp(config_name(i), "replicaof") && !v[0]) { /* "" is written "no one" */
            zfree(v);
            continue;
        }
        if (config_parse(c, i, v, &again, err, sizeof err) != 0) {
            fprintf(stderr, "%s: GET value [%s] rejected: %s\n", config_name(i), v, err);
            abort();
        }
        if (strcmp(v, again) != 0) {
            fprintf(stderr, "%s: [%s] re-parsed as [%s]\n", config_name(i), v, again);
            abort();
        }
        zfree(v);
        zfree(again);
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    config_sandbox = 3;
    char *text = malloc(size + 1);
    if (!text) return 0;
    memcpy(text, data, size);
    text[size] = '\0';
    ferry_config cfg;
    char err[4096];
    config_defaults(&cfg);
    if (config_load_string(&cfg, text, err, sizeof err) != 0 && !err[0]) abort(); /* errors are explained */
    check_ranges(&cfg);
    check_round_trip(&cfg);
    config_free(&cfg);
    free(text);
    return 0;
}
