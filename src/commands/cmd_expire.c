/* cmd_expire.c - key expiry commands: EXPIRE, PEXPIRE, EXPIREAT, PEXPIREAT
 * (with NX/XX/GT/LT), TTL, PTTL, EXPIRETIME, PEXPIRETIME and PERSIST.
 *
 * Split out of cmd_keys.c to keep files short; the procs are listed in the
 * `keys_commands` table there. Semantics and error texts follow Redis 7.0:
 * options are validated before the time argument, a time already in the past
 * deletes the key (and still replies 1), and overflow while converting to
 * absolute milliseconds is "invalid expire time in '<cmd>' command".
 */
#include <limits.h>
#include <stdint.h>
#include "client.h"
#include "command.h"
#include "db.h"
#include "cmd_expire.h"
#include "multi.h"
#include "notify.h"
#include "reply.h"
#include "server.h"
#include "util.h"

#define XF_NX 1
#define XF_XX 2
#define XF_GT 4
#define XF_LT 8


/* Parse NX/XX/GT/LT from argv[3..]. Replies and returns -1 on error. */
static int parse_expire_flags(client *c, int *flags) {
    int f = 0;
    for (int j = 3; j < c->argc; j++) {
        span o = c->argv[j];
        if (span_eq_nocase(o, "nx")) f |= XF_NX;
        else if (span_eq_nocase(o, "xx")) f |= XF_XX;
        else if (span_eq_nocase(o, "gt")) f |= XF_GT;
        else if (span_eq_nocase(o, "lt")) f |= XF_LT;
        else {
            reply_errorf(c, "ERR Unsupported option %.*s", (int)o.len, o.p);
            return -1;
        }
    }
    if ((f & XF_NX) && (f & (XF_XX | XF_GT | XF_LT))) {
        reply_error(c, "ERR NX and XX, GT or LT options at the same time are not compatible");
        return -1;
    }
    if ((f & XF_GT) && (f & XF_LT)) {
        reply_error(c, "ERR GT and LT options at the same time are not compatible");
        return -1;
    }
    *flags = f;
    return 0;
}

/* Whether the flags allow replacing expiry `cur` (-1 = none) with `when`. */
static int expire_flags_allow(int f, int64_t cur, long long when) {
    if ((f & XF_NX) && cur != -1) return 0;
    if ((f & XF_XX) && cur == -1) return 0;
    /* a key without expiry counts as an infinite TTL */
    if ((f & XF_GT) && (cur == -1 || when <= cur)) return 0;
    if ((f & XF_LT) && cur != -1 && when >= cur) return 0;
    return 1;
}

static void expire_generic(client *c, long long basetime, int seconds, const char *name) {
    int flags;
    long long when;
    if (parse_expire_flags(c, &flags) < 0) return;
    if (!str_to_ll(c->argv[2].p, c->argv[2].len, &when)) {
        reply_err_notint(c);
        return;
    }
    if (seconds) {
        if (when > LLONG_MAX / 1000 || when < LLONG_MIN / 1000) goto invalid;
        when *= 1000;
    }
    if (when > LLONG_MAX - basetime) goto invalid;
    when += basetime;

    db *d = c->db;
    const char *key = c->argv[1].p;
    size_t klen = c->argv[1].len;
    dnode *n = db_lookup_write(d, key, klen);
    if (!n || !expire_flags_allow(flags, dn_expire(n), when)) {
        reply_int(c, 0);
        return;
    }
    int past = when <= srv.now_ms;
    if (past) db_delete(d, key, klen);      /* already in the past: delete */
    else db_set_expire(d, n, when);
    touch_watched_key(d, key, klen);
    srv.dirty++;
    if (past) notify_key(NOTIFY_GENERIC, "del", d->id, c->argv[1]);
    reply_int(c, 1);
    if (!past) notify_key(NOTIFY_GENERIC, "expire", d->id, c->argv[1]); /* Redis replies first here */
    return;
invalid:
    reply_errorf(c, "ERR invalid expire time in '%s' command", name);
}

void cmd_expire(client *c) { expire_generic(c, srv.now_ms, 1, "expire"); }
void cmd_pexpire(client *c) { expire_generic(c, srv.now_ms, 0, "pexpire"); }
void cmd_expireat(client *c) { expire_generic(c, 0, 1, "expireat"); }
void cmd_pexpireat(client *c) { expire_generic(c, 0, 0, "pexpireat"); }

/* Read lookup that counts keyspace hits/misses (and notifies a miss) but
 * leaves the access time alone (Redis's LOOKUP_NOTOUCH), as TTL and
 * friends do. */
static dnode *lookup_notouch(client *c, const span *k) {
    return db_lookup_read_notouch(c->db, k->p, k->len, 1);
}

static void ttl_generic(client *c, int ms) {
    dnode *n = lookup_notouch(c, &c->argv[1]);
    if (!n) { reply_int(c, -2); return; }
    int64_t exp = dn_expire(n);
    if (exp == -1) { reply_int(c, -1); return; }
    long long ttl = exp - srv.now_ms;
    if (ttl < 0) ttl = 0;
    reply_int(c, ms ? ttl : (ttl + 500) / 1000);
}

void cmd_ttl(client *c) { ttl_generic(c, 0); }
void cmd_pttl(client *c) { ttl_generic(c, 1); }

static void expiretime_generic(client *c, int ms) {
    dnode *n = lookup_notouch(c, &c->argv[1]);
    if (!n) { reply_int(c, -2); return; }
    int64_t exp = dn_expire(n);
    if (exp == -1) { reply_int(c, -1); return; }
    /* rounded in unsigned arithmetic, as Redis: LLONG_MAX ms does not wrap */
    reply_int(c, ms ? exp : (long long)(((unsigned long long)exp + 500) / 1000));
}

void cmd_expiretime(client *c) { expiretime_generic(c, 0); }
void cmd_pexpiretime(client *c) { expiretime_generic(c, 1); }

void cmd_persist(client *c) {
    db *d = c->db;
    dnode *n = db_lookup_write(d, c->argv[1].p, c->argv[1].len);
    if (!n || dn_expire(n) == -1) {
        reply_int(c, 0);
        return;
    }
    db_persist(d, n);
    touch_watched_key(d, c->argv[1].p, c->argv[1].len);
    srv.dirty++;
    notify_key(NOTIFY_GENERIC, "persist", d->id, c->argv[1]);
    reply_int(c, 1);
}
