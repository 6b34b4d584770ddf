/* scan_args.h - argument parsing shared by the SCAN family (SCAN, HSCAN,
 * and the other collection scans): the cursor as Redis 7.0 reads it, and
 * the COUNT / MATCH options of the per-key scans, with Redis's replies on
 * error. */
#ifndef FERRY_SCAN_ARGS_H
#define FERRY_SCAN_ARGS_H

#include "client.h"

/* Cursor as Redis 7.0 parses it (strtoul over the C string): no leading
 * space, optional sign, decimal digits, no overflow; the empty string is 0
 * and a negative value wraps. Stops at an embedded NUL. 0 ok, -1 invalid
 * (the caller replies "ERR invalid cursor"). */
int scan_parse_cursor(span s, unsigned long *out);

/* COUNT and MATCH of HSCAN/SSCAN/ZSCAN (no TYPE: a syntax error there). */
typedef struct scan_coll_opts {
    long long count;                /* default 10 */
    span pat;
    int use_pat;                    /* 0 for no MATCH or MATCH "*" */
} scan_coll_opts;
/* Parses argv[first..]; replies the error and returns -1 if invalid. */
int scan_parse_coll_opts(client *c, int first, scan_coll_opts *o);

#endif
