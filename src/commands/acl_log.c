/* acl_log.c - ACL LOG: the recent authentication failures and denied
 * commands, keys and channels, newest first, at most acllog-max-len.
 * An entry equal to one of the GROUP_SCAN most recent ones (same reason,
 * context, object and user, less than 60 s apart) is merged into it: its count grows, its time and
 * client description are refreshed and it moves to the front, as Redis 7.0
 * does. */
#include "acl.h"
#include "config.h"
#include "reply.h"
#include "server.h"
#include "zmalloc.h"
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define GROUP_MS 60000
#define GROUP_SCAN 10 /* how many of the newest entries a new one may merge with */

typedef struct log_entry {
    long long count;
    int reason, ctx;
    char *object, *user;
    size_t olen, ulen;
    char *cinfo;
    long long ctime_ms;
    struct log_entry *next;
} log_entry;

static log_entry *head;
static long long entries;

static long long now_ms(void) {
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static long long max_len(void) {
    char *v = config_get_by_name(&srv.cfg, "acllog-max-len");
    long long n = v ? atoll(v) : 128;
    zfree(v);
    return n;
}

static void entry_free(log_entry *e) {
    zfree(e->object);
    zfree(e->user);
    zfree(e->cinfo);
    zfree(e);
}

void acl_log_trim(void) {
    long long max = max_len(), i = 0;
    log_entry **p = &head;
    while (*p && i < max) {
        p = &(*p)->next;
        i++;
    }
    while (*p) {
        log_entry *e = *p;
        *p = e->next;
        entry_free(e);
        entries--;
    }
}

void acl_log_reset(void) {
    while (head) {
        log_entry *e = head;
        head = e->next;
        entry_free(e);
    }
    entries = 0;
}

/* The description of the client, with cmd= naming the command being checked. */
static char *client_desc(client *c) {
    char buf[2048];
    struct command *last = c->lastcmd;
    if (c->cmd) c->lastcmd = c->cmd;
    size_t n = client_info_line(c, buf, sizeof buf);
    c->lastcmd = last;
    return zstrndup(buf, n);
}

static int same(const log_entry *e, int reason, int ctx, const char *o, size_t olen, const char *u, size_t ulen,
                long long now) {
    return e->reason == reason && e->ctx == ctx && e->olen == olen && !memcmp(e->object, o, olen) &&
           e->ulen == ulen && !memcmp(e->user, u, ulen) && now - e->ctime_ms < GROUP_MS;
}

void acl_log_add(client *c, int reason, int ctx, const char *object, size_t olen, const char *user, size_t ulen) {
    long long now = now_ms();
    client *real = (c->flags & CF_SCRIPT) && srv.current_client ? srv.current_client : c;
    log_entry **p = &head;
    for (int scanned = 0; *p && scanned < GROUP_SCAN; p = &(*p)->next, scanned++) {
        if (!same(*p, reason, ctx, object, olen, user, ulen, now)) continue;
        log_entry *e = *p;
        *p = e->next;
        e->count++;
        e->ctime_ms = now;
        zfree(e->cinfo);
        e->cinfo = client_desc(real);
        e->next = head;
        head = e;
        return;
    }
    log_entry *e = zcalloc(sizeof *e);
    e->count = 1;
    e->reason = reason;
    e->ctx = ctx;
    e->object = zstrndup(object, olen);
    e->olen = olen;
    e->user = zstrndup(user, ulen);
    e->ulen = ulen;
    e->cinfo = client_desc(real);
    e->ctime_ms = now;
    e->next = head;
    head = e;
    entries++;
    acl_log_trim();
}

static const char *reason_name(int r) {
    switch (r) {
    case ACL_DENIED_CMD: return "command";
    case ACL_DENIED_KEY: return "key";
    case ACL_DENIED_AUTH: return "auth";
    case ACL_DENIED_CHANNEL: return "channel";
    default: return "unknown";
    }
}

static const char *ctx_name(int x) {
    switch (x) {
    case ACL_CTX_TOPLEVEL: return "toplevel";
    case ACL_CTX_MULTI: return "multi";
    case ACL_CTX_LUA: return "lua";
    default: return "module";
    }
}

void acl_log_reply(client *c, long count) {
    long n = 0;
    for (log_entry *e = head; e && n < count; e = e->next) n++;
    reply_array(c, n);
    long long now = now_ms();
    log_entry *e = head;
    for (long i = 0; i < n; i++, e = e->next) {
        reply_map(c, 7);
        reply_bulk_cstr(c, "count");
        reply_int(c, e->count);
        reply_bulk_cstr(c, "reason");
        reply_bulk_cstr(c, reason_name(e->reason));
        reply_bulk_cstr(c, "context");
        reply_bulk_cstr(c, ctx_name(e->ctx));
        reply_bulk_cstr(c, "object");
        reply_bulk(c, e->object, e->olen);
        reply_bulk_cstr(c, "username");
        reply_bulk(c, e->user, e->ulen);
        reply_bulk_cstr(c, "age-seconds");
        reply_double(c, (double)(now - e->ctime_ms) / 1000);
        reply_bulk_cstr(c, "client-info");
        reply_bulk_cstr(c, e->cinfo);
    }
}
