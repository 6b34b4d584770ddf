/* resp_count.h - resumable RESP reply-framing counter for ferry-bench.
 *
 * Why: a load generator that parses every reply value cannot outrun the
 * server. ferry-bench only needs to know how many complete replies arrived
 * (and whether any were errors), so it feeds every read() straight into this
 * byte-level state machine, which skips bulk payloads without looking at them
 * and keeps just enough state (phase, header number, open-aggregate stack) to
 * resume exactly where the previous read ended, at any byte.
 *
 * Understood types: RESP2 (+ - : $ *) and the RESP3 ones a server may send
 * (_ , # ( = ! ~ > %). Attributes (|) are not supported (protocol error).
 * A "reply" is one top-level value; an array counts once, whatever it holds.
 * It is pure (no I/O, no globals) so tests/unit/test_bench_resp.c can feed
 * it a stream split at every position. Everything is prefixed fb_ so the unit
 * test can #include the .c next to the server's objects.
 */
#ifndef FB_RESP_COUNT_H
#define FB_RESP_COUNT_H

#include <stddef.h>
#include <stdint.h>

#define FB_RESP_MAXDEPTH 32  /* nested aggregates deeper than this: protocol error */
#define FB_RESP_ERRTEXT  128 /* bytes kept of the first error line */

typedef struct fb_resp_state {
    int phase;                        /* FB_PH_* in resp_count.c */
    char type;                        /* type byte of the value being read */
    int neg;                          /* header number had a '-' */
    int ndig;                         /* digits seen in the header number */
    int64_t num;                      /* header number so far */
    int64_t bulk_left;                /* payload bytes of the bulk still to skip */
    int depth;                        /* open aggregates */
    int64_t left[FB_RESP_MAXDEPTH];   /* values still missing per open aggregate */
    int cur_err;                      /* the current top-level reply is/contains an error */
    int capture;                      /* copying the current error line into errtext */
    uint64_t replies;                 /* complete top-level replies, over all calls */
    uint64_t errors;                  /* ...of which were or contained an error */
    int have_errtext;                 /* errtext holds the first error line */
    size_t errlen;
    char errtext[FB_RESP_ERRTEXT];    /* first error, without '-' and CRLF, NUL-terminated */
} fb_resp_state;

/* Start (or restart) at a reply boundary; also clears the counters. */
void fb_resp_init(fb_resp_state *st);

/* Consume buf[0..len) and return how many top-level replies were completed
 * inside it (replies begun in earlier calls included), or -1 on a protocol
 * error (the state is then unusable until fb_resp_init). st->errors counts
 * completed replies that were (or, for arrays, contained) errors. */
long fb_resp_count(const char *buf, size_t len, fb_resp_state *st);

/* Between replies (no partial value pending)? */
int fb_resp_idle(const fb_resp_state *st);

#endif
