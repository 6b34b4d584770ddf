/* notify.h - keyspace notifications (notify-keyspace-events).
 *
 * A command that changes a key calls notify_keyspace_event() with the
 * event's class and name, as Redis 7.0's commands do (same names, same
 * order). When the class is enabled by notify-keyspace-events, the event
 * is published through pub/sub as
 *   __keyspace@<db>__:<key>  <event>     (class K enabled)
 *   __keyevent@<db>__:<event> <key>      (class E enabled)
 * With notifications off (the default) the call is one load and one test
 * of notify_flags: no measurable cost on the hot path.
 */
#ifndef FERRY_NOTIFY_H
#define FERRY_NOTIFY_H

#include <stddef.h>
#include "span.h"

/* Classes (the letters of notify-keyspace-events). */
#define NOTIFY_KEYSPACE (1 << 0)  /* K */
#define NOTIFY_KEYEVENT (1 << 1)  /* E */
#define NOTIFY_GENERIC  (1 << 2)  /* g */
#define NOTIFY_STRING   (1 << 3)  /* $ */
#define NOTIFY_LIST     (1 << 4)  /* l */
#define NOTIFY_SET      (1 << 5)  /* s */
#define NOTIFY_HASH     (1 << 6)  /* h */
#define NOTIFY_ZSET     (1 << 7)  /* z */
#define NOTIFY_EXPIRED  (1 << 8)  /* x */
#define NOTIFY_EVICTED  (1 << 9)  /* e */
#define NOTIFY_STREAM   (1 << 10) /* t */
#define NOTIFY_KEY_MISS (1 << 11) /* m (not part of A) */
#define NOTIFY_LOADED   (1 << 12) /* module key loaded: never emitted here */
#define NOTIFY_MODULE   (1 << 13) /* d */
#define NOTIFY_NEW      (1 << 14) /* n (not part of A) */
#define NOTIFY_ALL (NOTIFY_GENERIC | NOTIFY_STRING | NOTIFY_LIST | NOTIFY_SET | NOTIFY_HASH | NOTIFY_ZSET | \
                    NOTIFY_EXPIRED | NOTIFY_EVICTED | NOTIFY_STREAM | NOTIFY_MODULE) /* A */

/* The enabled classes (from notify-keyspace-events; 0 = off). */
extern int notify_flags;

/* Publishes `event` on key (key, klen) of database dbid if cls is enabled
 * and at least one of K and E is. */
void notify_keyspace_event_slow(int cls, const char *event, int dbid, const char *key, size_t klen);
static inline void notify_keyspace_event(int cls, const char *event, int dbid, const char *key, size_t klen) {
    if (notify_flags & cls) notify_keyspace_event_slow(cls, event, dbid, key, klen);
}

/* The same for a key given as a span (the command layer's form). */
static inline void notify_key(int cls, const char *event, int dbid, span key) {
    if (notify_flags & cls) notify_keyspace_event_slow(cls, event, dbid, key.p, key.len);
}

/* notify-keyspace-events text <-> flags (CONFIG SET/GET, config file).
 * from_string: the letters' flags ('A' is every class but n and m), -1 for
 * a letter that names no class. to_string: Redis's canonical text ('A' for
 * the whole of A, which then hides n; K, E and m last), NUL-terminated in
 * buf (cut to cap - 1 bytes); returns its full length (at most 16). */
int notify_flags_from_string(const char *s, size_t len);
size_t notify_flags_to_string(int flags, char *buf, size_t cap);
#define NOTIFY_TEXT_MAX 17  /* a buffer that always holds to_string's text */

/* Sets the enabled classes (start-up, CONFIG SET) and tells the keyspace
 * which of its own events (db.h: new, keymiss, expired, evicted) to raise. */
void notify_set_flags(int flags);

/* The keyspace's event hook (db_set_event_hook): publishes a DB_EV_* event. */
void notify_db_event(int ev, int dbid, const char *key, size_t klen);

#endif
