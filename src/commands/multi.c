/* multi.c - transactions (MULTI/EXEC/DISCARD) and optimistic locking
 * (WATCH/UNWATCH).
 *
 * Queued commands own copies of their arguments. Watched keys live in one
 * server-wide dict keyed by "<db id (4 bytes)><key>", whose node value points
 * at the list of watching clients; any write to a key (including expiry and
 * FLUSH) marks its watchers CF_DIRTY_CAS. When nobody watches anything the
 * write path pays a single branch. The same calls report each changed key
 * to client-side caching (tracking.h), one more branch while nothing is
 * tracked. */
#include "acl.h"
#include "multi.h"
#include "blocking.h"
#include "command.h"
#include "db.h"
#include "reply.h"
#include "server.h"
#include "tracking.h"
#include "zmalloc.h"
#include <string.h>

typedef struct watcher {
    client *c;
    struct watcher *next;
} watcher;

typedef struct watched_key {
    db *d;                      /* db at WATCH time (SWAPDB keeps the id: we store the id) */
    int dbid;
    int expired_at_watch;
    size_t klen;
    struct watched_key *next;
    char key[];
} watched_key;

static dict watch_dict;
static int watch_ready;

static size_t watch_key_build(char *buf, int dbid, const char *key, size_t klen) {
    memcpy(buf, &dbid, 4);
    memcpy(buf + 4, key, klen);
    return klen + 4;
}

static dnode *watch_find(int dbid, const char *key, size_t klen) {
    char small[260];
    char *buf = klen + 4 <= sizeof small ? small : zmalloc(klen + 4);
    size_t n = watch_key_build(buf, dbid, key, klen);
    dnode *node = dict_find(&watch_dict, buf, n);
    if (buf != small) zfree(buf);
    return node;
}

static watcher *node_watchers(dnode *n) {
    watcher *w;
    memcpy(&w, dn_val(n), sizeof w);
    return w;
}

static void node_set_watchers(dnode *n, watcher *w) { memcpy(dn_val(n), &w, sizeof w); }

/* c's watched_key for (dbid, key), or NULL. */
static watched_key *client_watched(client *c, int dbid, const char *key, size_t klen) {
    for (watched_key *wk = c->watched; wk; wk = wk->next)
        if (wk->dbid == dbid && wk->klen == klen && memcmp(wk->key, key, klen) == 0) return wk;
    return NULL;
}

/* A key changed by `modifier` (NULL: the server itself). */
static void key_changed(db *d, const char *key, size_t klen, client *modifier) {
    /* a changed key may wake a waiter that must see it gone or retyped
     * (XREADGROUP answers that its stream no longer exists) */
    signal_key_ready(d, key, klen);
    if (srv.tracking_live) tracking_invalidate_key(modifier, key, klen);
    if (!srv.watched_keys) return;
    dnode *n = watch_find(d->id, key, klen);
    if (!n) return;
    int gone = dict_find(&d->keys, key, klen) == NULL;
    for (watcher *w = node_watchers(n); w; w = w->next) {
        watched_key *wk = gone ? client_watched(w->c, d->id, key, klen) : NULL;
        if (wk && wk->expired_at_watch) { /* a key already expired at WATCH is now deleted: no logical change */
            wk->expired_at_watch = 0;
            continue;
        }
        w->c->flags |= CF_DIRTY_CAS;
    }
}

void touch_watched_key(db *d, const char *key, size_t klen) { key_changed(d, key, klen, srv.executing_client); }

void signal_deleted_key(db *d, const char *key, size_t klen) { key_changed(d, key, klen, NULL); }

/* Does emptying `emptied` (its keys replaced by those of `replaced_with`,
 * NULL for a flush) change what wk sees? Redis 7.0's rules for keys that
 * were already expired at WATCH time: one that is just deleted, or stays
 * expired, is no change; a missing key replaced by an expired one becomes
 * such a key. */
static int replaced_changes(watched_key *wk, db *emptied, db *replaced_with) {
    dnode *was = dict_find(&emptied->keys, wk->key, wk->klen);
    dnode *now = replaced_with ? dict_find(&replaced_with->keys, wk->key, wk->klen) : NULL;
    if (!was && !now) return 0;
    if (wk->expired_at_watch) {
        if (!now) {
            wk->expired_at_watch = 0;
            return 0;
        }
        if (db_is_expired(now)) return 0;
    } else if (!was && db_is_expired(now)) {
        wk->expired_at_watch = 1;
        return 0;
    }
    return 1;
}

void touch_watched_keys_replaced(db *emptied, db *replaced_with) {
    if (!srv.watched_keys) return;
    for (client *c = srv.clients; c; c = c->next)
        for (watched_key *wk = c->watched; wk; wk = wk->next)
            if (wk->dbid == emptied->id && replaced_changes(wk, emptied, replaced_with)) c->flags |= CF_DIRTY_CAS;
}

void touch_all_watched_keys(db *d) {
    if (d) {
        touch_watched_keys_replaced(d, NULL);
        return;
    }
    for (int i = 0; i < db_count(); i++) touch_watched_keys_replaced(db_get(i), NULL);
}

static void watch_key(client *c, span key) {
    int dbid = c->db->id;
    for (watched_key *wk = c->watched; wk; wk = wk->next)
        if (wk->dbid == dbid && wk->klen == key.len && memcmp(wk->key, key.p, key.len) == 0) return;
    if (!watch_ready) {
        dict_init(&watch_dict);
        watch_ready = 1;
    }
    dnode *n = watch_find(dbid, key.p, key.len);
    if (!n) {
        n = dn_new((uint32_t)key.len + 4, sizeof(void *), 0);
        watch_key_build(dn_key(n), dbid, key.p, key.len);
        node_set_watchers(n, NULL);
        dict_add(&watch_dict, n);
        srv.watched_keys++;
    }
    watcher *w = zmalloc(sizeof *w);
    w->c = c;
    w->next = node_watchers(n);
    node_set_watchers(n, w);
    watched_key *wk = zmalloc(sizeof *wk + key.len);
    wk->dbid = dbid;
    wk->d = c->db;
    wk->klen = key.len;
    memcpy(wk->key, key.p, key.len);
    dnode *kn = dict_find(&c->db->keys, key.p, key.len);
    wk->expired_at_watch = kn && db_is_expired(kn);
    wk->next = c->watched;
    c->watched = wk;
}

static void unwatch_all(client *c) {
    while (c->watched) {
        watched_key *wk = c->watched;
        c->watched = wk->next;
        dnode *n = watch_find(wk->dbid, wk->key, wk->klen);
        if (n) {
            watcher **pp;
            watcher *head = node_watchers(n);
            pp = &head;
            while (*pp && (*pp)->c != c) pp = &(*pp)->next;
            if (*pp) {
                watcher *dead = *pp;
                *pp = dead->next;
                zfree(dead);
            }
            node_set_watchers(n, head);
            if (!head) {
                char buf[4 + 256];
                char *kb = wk->klen + 4 <= sizeof buf ? buf : zmalloc(wk->klen + 4);
                size_t kn = watch_key_build(kb, wk->dbid, wk->key, wk->klen);
                dn_free(dict_unlink(&watch_dict, kb, kn));
                if (kb != buf) zfree(kb);
                srv.watched_keys--;
            }
        }
        zfree(wk);
    }
    c->flags &= ~CF_DIRTY_CAS;
}

/* A watched key that was alive at WATCH time and is now logically expired
 * counts as modified, as in Redis 7. */
static int watched_key_expired(client *c) {
    for (watched_key *wk = c->watched; wk; wk = wk->next) {
        if (wk->expired_at_watch) continue;
        db *d = db_get(wk->dbid);
        dnode *n = dict_find(&d->keys, wk->key, wk->klen);
        if (n && db_is_expired(n)) return 1;
    }
    return 0;
}

static void discard_queue(client *c) {
    for (int i = 0; i < c->mcount; i++) {
        for (int j = 0; j < c->mstate[i].argc; j++) zfree((void *)c->mstate[i].argv[j].p);
        zfree(c->mstate[i].argv);
    }
    zfree(c->mstate);
    c->mstate = NULL;
    c->mcount = c->mcap = 0;
    c->flags &= ~(CF_MULTI | CF_DIRTY_EXEC | CF_DIRTY_CAS);
}

void multi_queue_command(client *c, command *cmd) {
    if (c->flags & CF_DIRTY_EXEC) { /* already doomed: don't waste memory */
        reply_raw(c, RESP_QUEUED, 9);
        return;
    }
    if (c->mcount == c->mcap) {
        c->mcap = c->mcap ? c->mcap * 2 : 4;
        c->mstate = zrealloc(c->mstate, sizeof(multi_cmd) * (size_t)c->mcap);
    }
    multi_cmd *m = &c->mstate[c->mcount++];
    m->argc = c->argc;
    m->cmd = cmd;
    m->argv = zmalloc(sizeof(span) * (size_t)c->argc);
    for (int i = 0; i < c->argc; i++) {
        m->argv[i].p = zstrndup(c->argv[i].p, c->argv[i].len);
        m->argv[i].len = c->argv[i].len;
    }
    reply_raw(c, RESP_QUEUED, 9);
}

void multi_reset_client(client *c) {
    discard_queue(c);
    unwatch_all(c);
}

static void cmd_multi(client *c) {
    if (c->flags & CF_MULTI) {
        reply_error(c, "ERR MULTI calls can not be nested");
        return;
    }
    c->flags |= CF_MULTI;
    reply_ok(c);
}

static void cmd_discard(client *c) {
    if (!(c->flags & CF_MULTI)) {
        reply_error(c, "ERR DISCARD without MULTI");
        return;
    }
    discard_queue(c);
    unwatch_all(c);
    reply_ok(c);
}

/* EXEC refused by the dispatcher (arity, auth...): the whole transaction goes. */
void multi_exec_abort(client *c, const char *reason) {
    discard_queue(c);
    unwatch_all(c);
    reply_errorf(c, "EXECABORT Transaction discarded because of: %s", reason);
}

static void cmd_exec(client *c) {
    if (!(c->flags & CF_MULTI)) {
        reply_error(c, "ERR EXEC without MULTI");
        return;
    }
    if (c->flags & CF_DIRTY_EXEC) {
        reply_error(c, "EXECABORT Transaction discarded because of previous errors.");
        discard_queue(c);
        unwatch_all(c);
        return;
    }
    if ((c->flags & CF_DIRTY_CAS) || watched_key_expired(c)) {
        reply_null_array(c);
        discard_queue(c);
        unwatch_all(c);
        return;
    }
    unwatch_all(c); /* unwatch before executing, as Redis does */
    multi_cmd *q = c->mstate;
    int n = c->mcount;
    c->mstate = NULL;
    c->mcount = c->mcap = 0;
    c->flags &= ~CF_MULTI;
    c->flags |= CF_EXECUTING_EXEC;
    int orig_argc = c->argc;
    span *orig_argv = c->argv;
    command *exec_cmd = c->cmd;
    reply_array(c, n);
    for (int i = 0; i < n; i++) {
        c->argc = q[i].argc;
        c->argv = q[i].argv;
        if ((c->flags & CF_ACL_CHECK) && acl_exec_denied(c, q[i].cmd)) continue;
        command_call(c, q[i].cmd);
    }
    c->argc = orig_argc;
    c->argv = orig_argv;
    c->cmd = exec_cmd;
    c->flags &= ~CF_EXECUTING_EXEC;
    for (int i = 0; i < n; i++) {
        for (int j = 0; j < q[i].argc; j++) zfree((void *)q[i].argv[j].p);
        zfree(q[i].argv);
    }
    zfree(q);
}

static void cmd_watch(client *c) {
    if (c->flags & CF_MULTI) {
        reply_error(c, "ERR WATCH inside MULTI is not allowed");
        return;
    }
    for (int i = 1; i < c->argc; i++) watch_key(c, c->argv[i]);
    reply_ok(c);
}

static void cmd_unwatch(client *c) {
    unwatch_all(c);
    reply_ok(c);
}

static command multi_commands[] = {
    CMD("multi", cmd_multi, 1, .flags = CMD_NOSCRIPT | CMD_LOADING | CMD_STALE | CMD_FAST | CMD_ALLOW_BUSY,
        .props = PROP_TX_CONTROL, .acl = "fast transaction", .summary = "Starts a transaction.", .since = "1.2.0",
        .complexity = "O(1)"),
    CMD("exec", cmd_exec, 1, .flags = CMD_NOSCRIPT | CMD_LOADING | CMD_STALE | CMD_SKIP_SLOWLOG,
        .props = PROP_TX_CONTROL | PROP_EXEC | PROP_NO_PROPAGATE, .acl = "slow transaction",
        .summary = "Executes all commands in a transaction.", .since = "1.2.0",
        .complexity = "Depends on commands in the transaction"),
    CMD("discard", cmd_discard, 1, .flags = CMD_NOSCRIPT | CMD_LOADING | CMD_STALE | CMD_FAST | CMD_ALLOW_BUSY,
        .props = PROP_TX_CONTROL | PROP_TX_RELEASE, .acl = "fast transaction", .summary = "Discards a transaction.",
        .since = "2.0.0", .complexity = "O(N), when N is the number of queued commands"),
    CMD("watch", cmd_watch, -2, .flags = CMD_NOSCRIPT | CMD_LOADING | CMD_STALE | CMD_FAST | CMD_ALLOW_BUSY,
        .props = PROP_TX_CONTROL, .acl = "fast transaction", CMD_KEYS(1, -1, 1),
        .summary = "Monitors changes to keys to determine the execution of a transaction.", .since = "2.2.0",
        .complexity = "O(1) for every key."),
    CMD("unwatch", cmd_unwatch, 1, .flags = CMD_NOSCRIPT | CMD_LOADING | CMD_STALE | CMD_FAST | CMD_ALLOW_BUSY,
        .acl = "fast transaction", .summary = "Forgets about watched keys of a transaction.", .since = "2.2.0",
        .complexity = "O(1)"),
    {0},
};
const command_group multi_group = {"transactions", multi_commands};
