/* notify.c - keyspace notifications (notify-keyspace-events, see notify.h).
 *
 * Why: clients that cache values or react to changes (expiry watchers, job
 * queues) subscribe to __keyspace@<db>__:<key> and __keyevent@<db>__:<event>
 * instead of polling, as Redis 7.0 offers. Commands call
 * notify_keyspace_event() where Redis's do; the keyspace raises its own
 * events (a key added, a read miss, an expired or evicted key) through the
 * db_set_event_hook() hook, which lands in notify_db_event() here, so the
 * keyspace layer never includes the pub/sub layer.
 *
 * Events are published through pubsub_publish(), to channel and pattern
 * subscribers alike, RESP2 and RESP3, at the moment the command raises
 * them (inside MULTI/EXEC and scripts too), as Redis does.
 */
#include "notify.h"
#include "db.h"
#include "pubsub.h"
#include "util.h"
#include "zmalloc.h"
#include <string.h>

int notify_flags;

/* The class letters in Redis's canonical order (g$lshzxetdn), then K E m. */
static const struct {
    char letter;
    int flag;
} classes[] = {
    {'g', NOTIFY_GENERIC}, {'$', NOTIFY_STRING},  {'l', NOTIFY_LIST},     {'s', NOTIFY_SET},
    {'h', NOTIFY_HASH},    {'z', NOTIFY_ZSET},    {'x', NOTIFY_EXPIRED},  {'e', NOTIFY_EVICTED},
    {'t', NOTIFY_STREAM},  {'d', NOTIFY_MODULE},  {'n', NOTIFY_NEW},      {'K', NOTIFY_KEYSPACE},
    {'E', NOTIFY_KEYEVENT}, {'m', NOTIFY_KEY_MISS},
};
#define NCLASSES (sizeof classes / sizeof classes[0])
#define FIRST_TAIL 11   /* K: the letters printed after 'A' too */

static int letter_flag(char c) {
    if (c == 'A') return NOTIFY_ALL;
    for (size_t i = 0; i < NCLASSES; i++)
        if (classes[i].letter == c) return classes[i].flag;
    return -1;
}

int notify_flags_from_string(const char *s, size_t len) {
    int flags = 0;
    for (size_t i = 0; i < len; i++) {
        int f = letter_flag(s[i]);
        if (f < 0) return -1;
        flags |= f;
    }
    return flags;
}

size_t notify_flags_to_string(int flags, char *buf, size_t cap) {
    char text[NOTIFY_TEXT_MAX];
    size_t n = 0, from = 0;
    if ((flags & NOTIFY_ALL) == NOTIFY_ALL) {
        text[n++] = 'A';
        from = FIRST_TAIL;      /* Redis prints no class letter after 'A', not even n */
    }
    for (size_t i = from; i < NCLASSES; i++)
        if (flags & classes[i].flag) text[n++] = classes[i].letter;
    if (cap) {
        size_t k = n < cap - 1 ? n : cap - 1;
        memcpy(buf, text, k);
        buf[k] = '\0';
    }
    return n;
}

void notify_set_flags(int flags) {
    notify_flags = flags;
    int ev = 0;
    if (flags & NOTIFY_NEW) ev |= DB_EV_NEW;
    if (flags & NOTIFY_KEY_MISS) ev |= DB_EV_KEYMISS;
    if (flags & NOTIFY_EXPIRED) ev |= DB_EV_EXPIRED;
    if (flags & NOTIFY_EVICTED) ev |= DB_EV_EVICTED;
    db_set_events(ev);
}

void notify_db_event(int ev, int dbid, const char *key, size_t klen) {
    switch (ev) {
    case DB_EV_NEW: notify_keyspace_event(NOTIFY_NEW, "new", dbid, key, klen); break;
    case DB_EV_KEYMISS: notify_keyspace_event(NOTIFY_KEY_MISS, "keymiss", dbid, key, klen); break;
    case DB_EV_EXPIRED: notify_keyspace_event(NOTIFY_EXPIRED, "expired", dbid, key, klen); break;
    case DB_EV_EVICTED: notify_keyspace_event(NOTIFY_EVICTED, "evicted", dbid, key, klen); break;
    default: break;
    }
}

/* Publishes msg on "<prefix><dbid>__:<suffix>" (prefix is "__keyspace@" or
 * "__keyevent@"). Channels up to a few hundred bytes are built on the stack. */
static void publish_on(const char *prefix, int dbid, span suffix, span msg) {
    char small[256], num[24];
    size_t plen = strlen(prefix), nlen = ll_to_str(num, dbid);
    size_t len = plen + nlen + 3 + suffix.len;
    char *ch = len <= sizeof small ? small : zmalloc(len);
    memcpy(ch, prefix, plen);
    memcpy(ch + plen, num, nlen);
    memcpy(ch + plen + nlen, "__:", 3);
    if (suffix.len) memcpy(ch + plen + nlen + 3, suffix.p, suffix.len);
    pubsub_publish((span){ch, len}, msg);
    if (ch != small) zfree(ch);
}

void notify_keyspace_event_slow(int cls, const char *event, int dbid, const char *key, size_t klen) {
    if (!(notify_flags & cls)) return;
    span ev = {event, strlen(event)}, k = {key, klen};
    if (notify_flags & NOTIFY_KEYSPACE) publish_on("__keyspace@", dbid, k, ev);
    if (notify_flags & NOTIFY_KEYEVENT) publish_on("__keyevent@", dbid, ev, k);
}
