/* outbuf.h - a client's staged output and how it leaves: the output ring,
 * references to big stored values that are sent from the value's own
 * memory instead of being copied into the ring, the one writev per flush
 * that sends both in order, and the cron that sizes the ring to the
 * client's recent peak (Redis's reply-buffer resizing).
 *
 * A reference pins its node (DN_PINNED, dict.h): before a pinned value is
 * written in place, moved or freed, every reference to it is given its own
 * copy of the bytes still unsent (dn_prepare_change), so what a client was
 * sent is always what its command read, whatever the same pipeline does
 * to the key afterwards.
 */
#ifndef FERRY_OUTBUF_H
#define FERRY_OUTBUF_H

#include <stddef.h>
#include "client.h"
#include "dict.h"

/* Values at least this long are referenced, not copied (see outbuf.c).
 * Measured (make bench-values' GET runs, ferry alone): at 4 KB values a
 * reference beats the copy (P=16 +14%, P=100 +32%, p99 at P=100 halved);
 * at 1 KB the copy wins (P=16 -11% with references). */
#define OUTBUF_REF_MIN (4 * 1024)

/* Install the unpin hooks (once, at start-up). */
void outbuf_init(void);

/* Stage the n value bytes at p, which live in node's value, as a reference
 * (the caller has staged the bulk header and stages the CRLF after).
 * Returns 0 if the caller must copy them instead: a client whose output is
 * read back (no socket), or a value below OUTBUF_REF_MIN. -1 if the client
 * was closed by its output limit (nothing staged). */
int outbuf_stage_ref(client *c, dnode *node, const char *p, size_t n);

/* Flush: one writev of the ring and the references, in order. Returns -1
 * if the client was freed. */
int outbuf_flush_client(client *c);
/* Write every client with pending output (once per loop iteration), but
 * hold a pipelining client's few small replies for a few ms while its next
 * big argument streams in (see outbuf.c). Returns -1, or when a client was
 * held the ms before it must be written: the loop must not sleep longer. */
long clients_flush_pending(void);

/* Drop c's references (the client is being freed). */
void outbuf_release(client *c);

/* Called for every client from the clients cron: the ring is shrunk toward
 * the peak of the last window when that peak used less than half of it,
 * or grown (up to 16 KB) when the peak filled it, and the peak restarts
 * each peak-reset-time. */
void outbuf_cron(client *c);
/* DEBUG REPLYBUFFER PEAK-RESET-TIME ms (negative: never) and RESIZING 0|1. */
#define OUTBUF_PEAK_RESET_DEFAULT_MS 5000
void outbuf_set_peak_reset_time(long long ms);
void outbuf_set_resizing(int on);

#endif
