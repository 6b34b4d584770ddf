/* scan_args.c - the SCAN family's cursor and option parsing (see
 * scan_args.h), in one place so every scan command rejects and accepts
 * exactly the same arguments as Redis 7.0. */
#include "scan_args.h"
#include <ctype.h>
#include <limits.h>
#include <string.h>
#include "reply.h"
#include "util.h"

int scan_parse_cursor(span s, unsigned long *out) {
    size_t len = strnlen(s.p, s.len), i = 0;
    unsigned long v = 0;
    int neg = 0;
    if (len == 0) { *out = 0; return 0; }
    if (isspace((unsigned char)s.p[0])) return -1;
    if (s.p[0] == '+' || s.p[0] == '-') { neg = s.p[0] == '-'; i++; }
    if (i == len) return -1;
    for (; i < len; i++) {
        unsigned d = (unsigned)(s.p[i] - '0');
        if (d > 9) return -1;
        if (v > (ULONG_MAX - d) / 10) return -1;
        v = v * 10 + d;
    }
    *out = neg ? (unsigned long)(0UL - v) : v;
    return 0;
}

int scan_parse_coll_opts(client *c, int first, scan_coll_opts *o) {
    o->count = 10;
    o->use_pat = 0;
    o->pat = (span){NULL, 0};
    for (int i = first; i < c->argc; i += 2) {
        int more = i + 1 < c->argc;
        span a = c->argv[i];
        if (span_eq_nocase(a, "count") && more) {
            if (!str_to_ll(c->argv[i + 1].p, c->argv[i + 1].len, &o->count)) {
                reply_err_notint(c);
                return -1;
            }
            if (o->count < 1) {
                reply_err_syntax(c);
                return -1;
            }
        } else if (span_eq_nocase(a, "match") && more) {
            o->pat = c->argv[i + 1];
            o->use_pat = !(o->pat.len == 1 && o->pat.p[0] == '*');
        } else {
            reply_err_syntax(c);
            return -1;
        }
    }
    return 0;
}
