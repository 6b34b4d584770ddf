/* outlimit.h - output buffer limits: client-output-buffer-limit per client
 * class (normal, pubsub; ferry has no replicas) and the fixed cap on the
 * output of a client that has not authenticated yet. */
#ifndef FERRY_OUTLIMIT_H
#define FERRY_OUTLIMIT_H

#include <stddef.h>
#include "client.h"

/* Redis counts only what spills past a client's 16 KB static reply
 * buffer against the limits; ferry's ring has no such split, so the first
 * OUTPUT_STATIC_ALLOWANCE bytes of the ring are not counted. A client that
 * has not authenticated yet is closed as soon as anything is counted
 * (Redis 7.0.15, CVE-2025-21605 fix: reply list over 1 KB, i.e. any spill). */
#define OUTPUT_STATIC_ALLOWANCE (16 * 1024)

/* The class whose client-output-buffer-limit applies to c (COB_NORMAL or
 * COB_PUBSUB). */
int client_output_class(const client *c);

/* 1 if c's staged output plus `extra` is over its class's hard limit or the
 * unauthenticated cap, or has been over the soft limit for more than
 * soft_seconds (the soft timer starts, or resets, here). No side effect
 * besides that timer. */
int client_output_over_limits_extra(client *c, size_t extra);
static inline int client_output_over_limits(client *c) { return client_output_over_limits_extra(c, 0); }

/* Checks c's staged output (plus `extra` bytes about to be staged) against
 * its limits: the hard limit and the unauthenticated cap at once, the soft
 * limit once exceeded continuously for more than its soft_seconds. On a
 * breach the client is logged as Redis logs it and scheduled for closing
 * (CF_CLOSE_ASAP; nothing more is written to it). Returns 1 if the client
 * is (now or already) scheduled for closing, else 0. Fake clients (no
 * socket: tests, fuzzing) are never closed. */
int client_check_output_limits_extra(client *c, size_t extra);
/* The same from the clients cron: a breach is logged as "closed", as Redis's
 * cron logs it. */
int client_check_output_limits_cron(client *c);

/* The same, answered inline in the common case: output within the static
 * allowance breaks no limit, and with no soft-limit timer running there is
 * no timer to reset either (checked once per read batch, so once per
 * request at P = 1). */
static inline int client_check_output_limits(client *c) {
    if (client_out_used(c) <= OUTPUT_STATIC_ALLOWANCE && c->cob_soft_since_ms == 0 && !(c->flags & CF_CLOSE_ASAP))
        return 0;
    return client_check_output_limits_extra(c, 0);
}

#endif
