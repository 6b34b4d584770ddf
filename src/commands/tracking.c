/* tracking.c - client-side caching: the tracking table, the BCAST prefix
 * table and the invalidation messages (see tracking.h).
 *
 * Why ids: the table maps a key to the ids of the clients that read it,
 * not to client pointers, as Redis does: a client that turns tracking off
 * keeps its entries (they are dropped lazily, when the key changes), and
 * one that turns it on again still hears of the keys it read before. Ids
 * are found through an index of the clients that ever tracked or were
 * named as a REDIRECT target (each leaves the index when it is freed).
 *
 * State, all of it here:
 *  - `table`: key -> the ids of the clients that read it, `items` their total;
 *  - `index`: client id -> client, for the clients above;
 *  - `pfx`: the BCAST prefixes in byte order, each with its subscribers
 *    and the keys changed under it since the last broadcast (key -> id of
 *    the client that changed it last, 0 for the server itself);
 *  - `pend`: invalidations for the client whose command is running, held
 *    until its reply is staged (Redis 7.0's tracking_pending_keys).
 * srv.tracking_live counts table keys and prefixes, so key changes skip
 * this file while both are empty.
 */
#include "tracking.h"
#include "command.h"
#include "dict.h"
#include "keyspec.h"
#include "outlimit.h"
#include "reply.h"
#include "sbuf.h"
#include "server.h"
#include "util.h"
#include "zmalloc.h"
#include <stdlib.h>
#include <string.h>

struct tracking_state {
    uint64_t redirect;          /* REDIRECT client id, 0 = none (kept when tracking goes off) */
    span *prefixes;             /* BCAST prefixes, owned copies, in byte order */
    size_t nprefixes;
    int indexed;                /* in T.index */
};

typedef struct bprefix {
    span name;                  /* owned */
    client **subs;              /* subscribed clients */
    size_t nsubs, capsubs;
    dict keys;                  /* key -> uint64 id of its last modifier */
} bprefix;

typedef struct pending {
    client *c;
    char *key;                  /* NULL: the null invalidation of a flush */
    size_t klen;
} pending;

static struct {
    dict table, index;
    int ready;
    size_t items;
    bprefix **pfx;
    size_t npfx, cappfx;
    pending *pend;
    size_t npend, cappend;
    unsigned limit_rounds;      /* consecutive limit runs that stayed over the limit */
} T;

static void ensure_ready(void) {
    if (T.ready) return;
    dict_init(&T.table);
    dict_init(&T.index);
    T.ready = 1;
}

static void live_update(void) { srv.tracking_live = (T.ready ? dict_size(&T.table) : 0) + T.npfx; }

static int span_cmp(span a, span b) {
    size_t n = a.len < b.len ? a.len : b.len;
    int r = n ? memcmp(a.p, b.p, n) : 0;
    if (r) return r;
    return a.len < b.len ? -1 : a.len > b.len;
}

static span span_copy(span s) {
    char *p = zmalloc(s.len + 1);
    if (s.len) memcpy(p, s.p, s.len);
    return (span){p, s.len};
}

static struct tracking_state *state_of(client *c) {
    if (!c->tracking) c->tracking = zcalloc(sizeof *c->tracking);
    return c->tracking;
}

/* ------------------------------------------------------------- id index */

static void index_add(client *c) {
    struct tracking_state *st = state_of(c);
    if (st->indexed) return;
    ensure_ready();
    dnode *n = dn_new(sizeof c->id, sizeof c, 0);
    memcpy(dn_key(n), &c->id, sizeof c->id);
    memcpy(dn_val(n), &c, sizeof c);
    dict_add(&T.index, n);
    st->indexed = 1;
}

static client *index_find(uint64_t id) {
    if (!T.ready) return NULL;
    dnode *n = dict_find(&T.index, (const char *)&id, sizeof id);
    client *c = NULL;
    if (n) memcpy(&c, dn_val(n), sizeof c);
    return c;
}

static void index_remove(client *c) {
    if (!c->tracking || !c->tracking->indexed) return;
    dnode *n = dict_unlink(&T.index, (const char *)&c->id, sizeof c->id);
    if (n) dn_free(n);
    c->tracking->indexed = 0;
}

/* ------------------------------------------------------------- messages */

/* Pushes bypass CLIENT REPLY OFF/SKIP (Redis's CLIENT_PUSHING). */
static uint32_t push_begin(client *c) {
    uint32_t mute = c->flags & (CF_REPLY_OFF | CF_REPLY_SKIP);
    c->flags &= ~mute;
    return mute;
}

static void push_end(client *c, uint32_t mute) {
    c->flags |= mute;
    client_check_output_limits(c);
}

/* Nothing more is sent to a client that is closing. */
static int can_receive(const client *c) { return !(c->flags & (CF_CLOSE_ASAP | CF_CLOSE_AFTER_REPLY)); }

#define CHANNEL_HEADER "*3\r\n$7\r\nmessage\r\n$20\r\n__redis__:invalidate\r\n"

/* [tracking-redir-broken, id] to a RESP3 tracking client whose REDIRECT
 * client is gone. */
static void push_broken(client *c, uint64_t id) {
    c->flags |= CF_TRACKING_BROKEN;
    if (c->resp <= 2 || !can_receive(c)) return;
    uint32_t mute = push_begin(c);
    reply_push(c, 2);
    reply_bulk(c, "tracking-redir-broken", 21);
    reply_int(c, (long long)id);
    push_end(c, mute);
}

/* One invalidation for tracking client c: to c itself as a RESP3 push, or
 * to its REDIRECT client (a RESP3 push, or a __redis__:invalidate message
 * when it is a subscribed RESP2 client). The payload is a key (sent as a
 * one-element array) or, with as_key 0, ready RESP bytes (a null, or the
 * array of a BCAST prefix). A RESP2 client without redirect gets nothing. */
static void send_invalidation(client *c, const char *p, size_t n, int as_key) {
    client *to = c;
    int redirected = 0;
    if (c->tracking && c->tracking->redirect) {
        to = index_find(c->tracking->redirect);
        if (!to) {
            push_broken(c, c->tracking->redirect);
            return;
        }
        redirected = 1;
    }
    if (!can_receive(to) || (to->resp <= 2 && !(redirected && (to->flags & CF_PUBSUB)))) return;
    uint32_t mute = push_begin(to);
    if (to->resp > 2) {
        reply_push(to, 2);
        reply_bulk(to, "invalidate", 10);
    } else {
        reply_raw(to, CHANNEL_HEADER, sizeof CHANNEL_HEADER - 1);
    }
    if (as_key) {
        reply_array(to, 1);
        reply_bulk(to, p, n);
    } else {
        reply_raw(to, p, n);
    }
    push_end(to, mute);
}

/* The null of a flush, in the protocol of the client it is for. */
static void send_null(client *c) {
    if (c->resp > 2) send_invalidation(c, "_\r\n", 3, 0);
    else send_invalidation(c, "$-1\r\n", 5, 0);
}

/* ------------------------------------------------------------- pending */

static void pending_add(client *c, const char *key, size_t klen) {
    if (T.npend == T.cappend) {
        T.cappend = T.cappend ? T.cappend * 2 : 8;
        T.pend = zrealloc(T.pend, T.cappend * sizeof *T.pend);
    }
    if (T.npend == 0) srv.observers++; /* so the end of the command is reported */
    pending *e = &T.pend[T.npend++];
    e->c = c;
    e->klen = klen;
    e->key = NULL;
    if (key) {
        e->key = zmalloc(klen ? klen : 1);
        if (klen) memcpy(e->key, key, klen);
    }
}

void tracking_flush_pending(void) {
    if (!T.npend) return;
    for (size_t i = 0; i < T.npend; i++) {
        pending *e = &T.pend[i];
        if (e->key) send_invalidation(e->c, e->key, e->klen, 1);
        else send_null(e->c);
        zfree(e->key);
    }
    T.npend = 0;
    srv.observers--;
}

static void pending_forget(client *c) {
    size_t k = 0;
    for (size_t i = 0; i < T.npend; i++) {
        if (T.pend[i].c == c) zfree(T.pend[i].key);
        else T.pend[k++] = T.pend[i];
    }
    if (T.npend && !k) srv.observers--;
    T.npend = k;
}

/* The client whose input is processed (a script's caller inside EVAL), NULL
 * for the cron's work: Redis's current_client. Its own invalidations wait
 * for its reply only while its command runs (srv.executing_client). */
static client *running_client(void) { return srv.current_client; }

/* --------------------------------------------------------- the table */

/* A table node's value is its client ids, ascending, 8 bytes each (in the
 * node itself: no pointer the leak checker could not follow). */
static size_t node_nids(const dnode *n) { return dn_vlen(n) / sizeof(uint64_t); }

static uint64_t node_id(const dnode *n, size_t i) {
    uint64_t id;
    memcpy(&id, dn_val(n) + i * sizeof id, sizeof id);
    return id;
}

/* Adds id to the ids of key (creating the key). */
static void table_remember(const char *key, size_t klen, uint64_t id) {
    ensure_ready();
    dnode **link = dict_find_link(&T.table, key, klen);
    if (!link) {
        dnode *n = dn_new((uint32_t)klen, sizeof id, 0);
        memcpy(dn_key(n), key, klen);
        memcpy(dn_val(n), &id, sizeof id);
        dict_add(&T.table, n);
        T.items++;
        live_update();
        return;
    }
    size_t cnt = node_nids(*link), lo = 0, hi = cnt;
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        if (node_id(*link, mid) < id) lo = mid + 1;
        else hi = mid;
    }
    if (lo < cnt && node_id(*link, lo) == id) return;
    dnode *n = dn_resize_value(*link, (uint32_t)((cnt + 1) * sizeof id));
    *link = n;
    char *v = dn_val(n);
    memmove(v + (lo + 1) * sizeof id, v + lo * sizeof id, (cnt - lo) * sizeof id);
    memcpy(v + lo * sizeof id, &id, sizeof id);
    T.items++;
}

/* One tracked client of a changed key: skipped when it no longer tracks
 * in default mode or it changed the key itself under NOLOOP; held until
 * its reply when it is the client whose command runs. */
static void invalidate_for(client *t, const char *key, size_t klen, client *current, int executing) {
    if (!t || (t->flags & (CF_TRACKING | CF_TRACKING_BCAST)) != CF_TRACKING) return;
    if ((t->flags & CF_TRACKING_NOLOOP) && t == current) return;
    if (t == current && executing) pending_add(t, key, klen);
    else send_invalidation(t, key, klen, 1);
}

/* The key leaves the table, each client that tracked it invalidated. */
static void table_invalidate(const char *key, size_t klen, client *current, int executing) {
    if (!T.ready || !dict_size(&T.table)) return;
    dnode *n = dict_unlink(&T.table, key, klen);
    if (!n) return;
    size_t cnt = node_nids(n);
    for (size_t i = 0; i < cnt; i++) invalidate_for(index_find(node_id(n, i)), key, klen, current, executing);
    T.items -= cnt;
    dn_free(n);
    live_update();
}

static void table_clear(void) {
    if (!T.ready) return;
    dict_clear(&T.table, dn_free);
    T.items = 0;
    live_update();
}

/* ------------------------------------------------------------- BCAST */

/* Position of name in pfx (or where it goes); *found set if it is there. */
static size_t prefix_pos(span name, int *found) {
    size_t lo = 0, hi = T.npfx;
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        int r = span_cmp(T.pfx[mid]->name, name);
        if (r == 0) {
            *found = 1;
            return mid;
        }
        if (r < 0) lo = mid + 1;
        else hi = mid;
    }
    *found = 0;
    return lo;
}

static bprefix *prefix_get(span name) {
    int found;
    size_t i = prefix_pos(name, &found);
    if (found) return T.pfx[i];
    if (T.npfx == T.cappfx) {
        T.cappfx = T.cappfx ? T.cappfx * 2 : 4;
        T.pfx = zrealloc(T.pfx, T.cappfx * sizeof *T.pfx);
    }
    bprefix *p = zcalloc(sizeof *p);
    p->name = span_copy(name);
    dict_init(&p->keys);
    memmove(T.pfx + i + 1, T.pfx + i, (T.npfx - i) * sizeof *T.pfx);
    T.pfx[i] = p;
    T.npfx++;
    live_update();
    return p;
}

static void prefix_drop_keys(bprefix *p) { dict_clear(&p->keys, dn_free); }

/* c leaves prefix `name`; the prefix goes with its last subscriber (and
 * the keys it collected, unsent, as in Redis). */
static void prefix_unsubscribe(span name, client *c) {
    int found;
    size_t i = prefix_pos(name, &found);
    if (!found) return;
    bprefix *p = T.pfx[i];
    for (size_t k = 0; k < p->nsubs; k++)
        if (p->subs[k] == c) {
            p->subs[k] = p->subs[--p->nsubs];
            break;
        }
    if (p->nsubs) return;
    prefix_drop_keys(p);
    zfree((void *)p->name.p);
    zfree(p->subs);
    zfree(p);
    memmove(T.pfx + i, T.pfx + i + 1, (T.npfx - i - 1) * sizeof *T.pfx);
    T.npfx--;
    live_update();
}

/* c subscribes prefix `name` (once). */
static void prefix_subscribe(client *c, span name) {
    bprefix *p = prefix_get(name);
    for (size_t k = 0; k < p->nsubs; k++)
        if (p->subs[k] == c) return;
    if (p->nsubs == p->capsubs) {
        p->capsubs = p->capsubs ? p->capsubs * 2 : 4;
        p->subs = zrealloc(p->subs, p->capsubs * sizeof *p->subs);
    }
    p->subs[p->nsubs++] = c;
    struct tracking_state *st = state_of(c);
    size_t lo = 0;
    while (lo < st->nprefixes && span_cmp(st->prefixes[lo], name) < 0) lo++;
    st->prefixes = zrealloc(st->prefixes, (st->nprefixes + 1) * sizeof *st->prefixes);
    memmove(st->prefixes + lo + 1, st->prefixes + lo, (st->nprefixes - lo) * sizeof *st->prefixes);
    st->prefixes[lo] = span_copy(name);
    st->nprefixes++;
}

/* Notes key under every prefix it starts with, with who changed it last. */
static void bcast_collect(client *modifier, const char *key, size_t klen) {
    uint64_t id = modifier ? modifier->id : 0;
    for (size_t i = 0; i < T.npfx; i++) {
        bprefix *p = T.pfx[i];
        if (p->name.len > klen || (p->name.len && memcmp(p->name.p, key, p->name.len) != 0)) continue;
        dnode *n = dict_find(&p->keys, key, klen);
        if (!n) {
            n = dn_new((uint32_t)klen, sizeof id, 0);
            memcpy(dn_key(n), key, klen);
            dict_add(&p->keys, n);
        }
        memcpy(dn_val(n), &id, sizeof id);
    }
}

typedef struct node_list {
    dnode **v;
    size_t n;
} node_list;

static void collect_node(void *ud, dnode *n) {
    node_list *l = ud;
    l->v[l->n++] = n;
}

static int cmp_key_nodes(const void *a, const void *b) {
    const dnode *x = *(dnode *const *)a, *y = *(dnode *const *)b;
    return span_cmp((span){dn_key(x), dn_klen(x)}, (span){dn_key(y), dn_klen(y)});
}

static uint64_t node_modifier(const dnode *n) {
    uint64_t id;
    memcpy(&id, dn_val(n), sizeof id);
    return id;
}

/* The array of the keys (in byte order) not last changed by client `skip`
 * (0: all of them), as RESP; 0 if there is none. */
static size_t build_array(sbuf *b, const node_list *keys, uint64_t skip) {
    size_t count = 0;
    for (size_t i = 0; i < keys->n; i++) count += !skip || node_modifier(keys->v[i]) != skip;
    if (!count) return 0;
    b->len = 0;
    sb_addf(b, "*%zu\r\n", count);
    for (size_t i = 0; i < keys->n; i++) {
        const dnode *n = keys->v[i];
        if (skip && node_modifier(n) == skip) continue;
        sb_addf(b, "$%u\r\n", dn_klen(n));
        sb_add(b, dn_key(n), dn_klen(n));
        sb_add(b, "\r\n", 2);
    }
    return count;
}

static void broadcast_prefix(bprefix *p) {
    node_list keys = {zmalloc(dict_size(&p->keys) * sizeof(dnode *)), 0};
    dict_foreach(&p->keys, collect_node, &keys);
    qsort(keys.v, keys.n, sizeof *keys.v, cmp_key_nodes);
    sbuf all = {0}, own = {0};
    build_array(&all, &keys, 0);
    for (size_t k = 0; k < p->nsubs; k++) {
        client *c = p->subs[k];
        if (!(c->flags & CF_TRACKING_NOLOOP)) send_invalidation(c, all.p, all.len, 0);
        else if (build_array(&own, &keys, c->id)) send_invalidation(c, own.p, own.len, 0);
    }
    sb_free(&all);
    sb_free(&own);
    zfree(keys.v);
    prefix_drop_keys(p);
}

void tracking_broadcast(void) {
    if (!srv.tracking_clients) return;
    for (size_t i = 0; i < T.npfx; i++)
        if (dict_size(&T.pfx[i]->keys)) broadcast_prefix(T.pfx[i]);
}

/* -------------------------------------------------------- invalidation */

void tracking_invalidate_key(client *modifier, const char *key, size_t klen) {
    if (T.npfx) bcast_collect(modifier, key, klen);
    table_invalidate(key, klen, running_client(), srv.executing_client != NULL);
}

/* Clients oldest first (Redis's list order), for the flush nulls. */
static client *oldest_client(void) {
    client *c = srv.clients;
    while (c && c->next) c = c->next;
    return c;
}

void tracking_invalidate_all(void) {
    if (srv.tracking_clients) {
        client *current = running_client();
        for (client *c = oldest_client(); c; c = c->prev) {
            if (!(c->flags & CF_TRACKING)) continue;
            if (c == current) pending_add(c, NULL, 0);
            else send_null(c);
        }
    }
    table_clear();
}

void tracking_limit_table(void) {
    long long max = srv.cfg.tracking_table_max_keys;
    if (!T.ready || max <= 0 || dict_size(&T.table) <= (size_t)max) {
        T.limit_rounds = 0;
        return;
    }
    /* effort grows with each run that could not get under the limit */
    long effort = 100L * (T.limit_rounds + 1);
    while (effort-- > 0) {
        dnode *n = dict_random(&T.table);
        if (!n) break;
        span k = span_copy((span){dn_key(n), dn_klen(n)});
        table_invalidate(k.p, k.len, running_client(), 0);
        zfree((void *)k.p);
        if (dict_size(&T.table) <= (size_t)max) {
            T.limit_rounds = 0;
            return;
        }
    }
    T.limit_rounds++;
}

/* ------------------------------------------------------- reading keys */

/* Remembers the keys of c's current command (for a script: the EVAL's
 * declared keys), unless OPTIN without CACHING yes or OPTOUT with CACHING no. */
static void remember_keys(client *c) {
    int optin = (c->flags & CF_TRACKING_OPTIN) != 0, optout = (c->flags & CF_TRACKING_OPTOUT) != 0;
    int caching = (c->flags & CF_TRACKING_CACHING) != 0;
    if ((optin && !caching) || (optout && caching) || !c->cmd || (c->cmd->flags & CMD_PUBSUB)) return;
    keyref small[16]; /* a command has at most argc keys */
    int cap = c->argc < 16 ? 16 : c->argc;
    keyref *keys = cap <= 16 ? small : zmalloc((size_t)cap * sizeof *keys);
    int n = command_keys(c->cmd, c->argv, c->argc, keys, cap); /* as COMMAND GETKEYS */
    for (int i = 0; i < n && i < cap; i++) table_remember(c->argv[keys[i].pos].p, c->argv[keys[i].pos].len, c->id);
    if (keys != small) zfree(keys);
}

void tracking_after_call(client *c, command *cmd, int toplevel) {
    if ((cmd->flags & CMD_READONLY) && !(cmd->props & PROP_NUMKEYS_AT_2) && srv.tracking_clients) {
        client *caller = (c->flags & CF_SCRIPT) ? srv.current_client : c;
        if (caller && (caller->flags & (CF_TRACKING | CF_TRACKING_BCAST)) == CF_TRACKING) remember_keys(caller);
    }
    if (toplevel) tracking_flush_pending();
}

void tracking_command_done(client *c, const command *cmd) {
    if (!(c->flags & CF_TRACKING_CACHING) || (c->flags & CF_MULTI)) return;
    const command *top = cmd && cmd->parent ? cmd->parent : cmd;
    if (top && strcmp(top->name, "client") == 0) return;
    c->flags &= ~(uint32_t)CF_TRACKING_CACHING;
}

/* ------------------------------------------------------ client state */

void tracking_enable(client *c, const tracking_opts *o) {
    if (!(c->flags & CF_TRACKING)) {
        srv.tracking_clients++;
        srv.observers++;
    }
    c->flags |= CF_TRACKING;
    c->flags &= ~(uint32_t)(CF_TRACKING_BROKEN | CF_TRACKING_BCAST | CF_TRACKING_OPTIN | CF_TRACKING_OPTOUT |
                            CF_TRACKING_NOLOOP);
    state_of(c)->redirect = o->redirect;
    index_add(c);
    if (o->target) index_add(o->target);
    if (o->flags & CF_TRACKING_BCAST) {
        c->flags |= CF_TRACKING_BCAST;
        if (o->nprefixes == 0) prefix_subscribe(c, (span){"", 0});
        for (int i = 0; i < o->nprefixes; i++) prefix_subscribe(c, o->prefixes[i]);
    }
    c->flags |= o->flags & (CF_TRACKING_OPTIN | CF_TRACKING_OPTOUT | CF_TRACKING_NOLOOP);
}

void tracking_disable(client *c) {
    struct tracking_state *st = c->tracking;
    if ((c->flags & CF_TRACKING_BCAST) && st) {
        for (size_t i = 0; i < st->nprefixes; i++) {
            prefix_unsubscribe(st->prefixes[i], c);
            zfree((void *)st->prefixes[i].p);
        }
        zfree(st->prefixes);
        st->prefixes = NULL;
        st->nprefixes = 0;
    }
    if (!(c->flags & CF_TRACKING)) return;
    srv.tracking_clients--;
    srv.observers--;
    c->flags &= ~(uint32_t)(CF_TRACKING | CF_TRACKING_BROKEN | CF_TRACKING_BCAST | CF_TRACKING_OPTIN |
                            CF_TRACKING_OPTOUT | CF_TRACKING_CACHING | CF_TRACKING_NOLOOP);
}

void tracking_client_free(client *c) {
    tracking_disable(c);
    pending_forget(c);
    index_remove(c);
    zfree(c->tracking);
    c->tracking = NULL;
}

long long tracking_client_redirect(const client *c) {
    return (c->flags & CF_TRACKING) && c->tracking ? (long long)c->tracking->redirect : -1;
}

uint64_t tracking_redirect_id(const client *c) { return c->tracking ? c->tracking->redirect : 0; }

const span *tracking_client_prefixes(const client *c, size_t *n) {
    *n = c->tracking ? c->tracking->nprefixes : 0;
    return *n ? c->tracking->prefixes : NULL;
}

size_t tracking_table_keys(void) { return T.ready ? dict_size(&T.table) : 0; }
size_t tracking_table_items(void) { return T.items; }
size_t tracking_prefix_count(void) { return T.npfx; }
