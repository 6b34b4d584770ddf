/* pubsub.c - publish/subscribe (see pubsub.h): SUBSCRIBE UNSUBSCRIBE
 * PSUBSCRIBE PUNSUBSCRIBE PUBLISH, their shard forms SSUBSCRIBE SUNSUBSCRIBE
 * SPUBLISH (without cluster: a separate namespace, as Redis 7.0 has it), and
 * PUBSUB CHANNELS|NUMSUB|NUMPAT|SHARDCHANNELS|SHARDNUMSUB|HELP.
 *
 * Three registries map a name (channel, shard channel, pattern) to its
 * subscribers in subscription order, which is the delivery order. Each
 * client keeps what it is subscribed to: channel and shard-channel names in
 * a set (O(1) membership, so clients with many channels stay cheap) and its
 * patterns as a list in subscription order (PUNSUBSCRIBE without arguments
 * answers in that order, as Redis 7.0's list does). The state is allocated on
 * the first subscription and freed with the last one.
 *
 * A published message is formatted once per PUBLISH (once per matching
 * pattern) and copied into each subscriber's output ring; only the first
 * byte differs between RESP2 (*) and RESP3 (>). Subscription confirmations
 * and messages are pushes: they are sent even under CLIENT REPLY OFF/SKIP,
 * as Redis 7.0.15 does. After each staged message the subscriber's output is
 * checked against the pubsub client-output-buffer-limit (outlimit.c).
 */
#include "pubsub.h"
#include "command.h"
#include "crc16.h"
#include "dict.h"
#include "outlimit.h"
#include "propagate.h"
#include "reply.h"
#include "server.h"
#include "util.h"
#include "zmalloc.h"
#include <stdio.h>
#include <string.h>

enum { NS_CHANNEL = 0, NS_SHARD = 1, NS_PATTERN = 2, NS_COUNT = 3 };

/* Subscribers of one name, in subscription order. */
typedef struct subs {
    client **v;
    size_t n, cap;
} subs;

/* name -> subs* (the pointer is stored in the node's value bytes) */
static dict registry[NS_COUNT] = {{.rehash_idx = -1}, {.rehash_idx = -1}, {.rehash_idx = -1}};

struct pubsub_state {
    dict names[2];      /* NS_CHANNEL, NS_SHARD: names subscribed to (value-less nodes) */
    dnode **pats;       /* registry[NS_PATTERN] nodes, in subscription order */
    size_t npats, pcap;
};

/* ------------------------------------------------------------ registries */

static dnode *node_new(span key, size_t vlen) {
    dnode *n = dn_new((uint32_t)key.len, (uint32_t)vlen, 0);
    if (key.len) memcpy(dn_key(n), key.p, key.len);
    return n;
}

static span node_name(const dnode *n) { return (span){dn_key(n), dn_klen(n)}; }

static subs *node_subs(const dnode *n) {
    subs *s;
    memcpy(&s, dn_val(n), sizeof s);
    return s;
}

/* Append c to the subscribers of name (creating the entry); returns the node. */
static dnode *registry_add(int ns, span name, client *c) {
    dict *d = &registry[ns];
    dnode *n = dict_find(d, name.p, name.len);
    if (!n) {
        subs *fresh = zcalloc(sizeof *fresh);
        n = node_new(name, sizeof fresh);
        memcpy(dn_val(n), &fresh, sizeof fresh);
        dict_add(d, n);
    }
    subs *s = node_subs(n);
    if (s->n == s->cap) {
        s->cap = s->cap ? s->cap * 2 : 4;
        s->v = zrealloc(s->v, s->cap * sizeof *s->v);
    }
    s->v[s->n++] = c;
    return n;
}

/* Remove c from node n's subscribers, keeping the others' order; the entry
 * goes away with its last subscriber. */
static void registry_remove(int ns, dnode *n, client *c) {
    subs *s = node_subs(n);
    for (size_t i = 0; i < s->n; i++) {
        if (s->v[i] != c) continue;
        memmove(s->v + i, s->v + i + 1, (s->n - i - 1) * sizeof *s->v);
        s->n--;
        break;
    }
    if (s->n) return;
    dict_unlink(&registry[ns], dn_key(n), dn_klen(n));
    zfree(s->v);
    zfree(s);
    dn_free(n);
    if (dict_size(&registry[ns]) == 0) dict_clear(&registry[ns], NULL); /* an idle server holds nothing */
    else dict_maybe_shrink(&registry[ns]);
}

static size_t subscriber_count(int ns, span name) {
    dnode *n = dict_find(&registry[ns], name.p, name.len);
    return n ? node_subs(n)->n : 0;
}

size_t pubsub_channel_count(void) { return dict_size(&registry[NS_CHANNEL]); }
size_t pubsub_pattern_count(void) { return dict_size(&registry[NS_PATTERN]); }
size_t pubsub_shard_channel_count(void) { return dict_size(&registry[NS_SHARD]); }

/* -------------------------------------------------------- client state */

static struct pubsub_state *state_get(client *c) {
    if (!c->pubsub) {
        struct pubsub_state *st = zcalloc(sizeof *st);
        dict_init(&st->names[NS_CHANNEL]);
        dict_init(&st->names[NS_SHARD]);
        c->pubsub = st;
    }
    return c->pubsub;
}

pubsub_counts pubsub_client_counts(const client *c) {
    pubsub_counts k = {0, 0, 0};
    const struct pubsub_state *st = c->pubsub;
    if (st) {
        k.channels = dict_size(&st->names[NS_CHANNEL]);
        k.shard = dict_size(&st->names[NS_SHARD]);
        k.patterns = st->npats;
    }
    return k;
}

typedef struct name_visit {
    int (*fn)(span name, int is_pattern, void *ud);
    void *ud;
    int stop;
} name_visit;

static void visit_name(void *ud, dnode *n) {
    name_visit *v = ud;
    if (!v->stop) v->stop = v->fn(node_name(n), 0, v->ud);
}

int pubsub_client_any(client *c, int (*fn)(span name, int is_pattern, void *ud), void *ud) {
    struct pubsub_state *st = c->pubsub;
    if (!st) return 0;
    name_visit v = {fn, ud, 0};
    dict_foreach(&st->names[NS_CHANNEL], visit_name, &v);
    if (!v.stop) dict_foreach(&st->names[NS_SHARD], visit_name, &v);
    for (size_t i = 0; i < st->npats && !v.stop; i++) v.stop = fn(node_name(st->pats[i]), 1, ud);
    return v.stop;
}

/* The count a (un)subscribe confirmation carries: channels + patterns, or
 * shard channels for the shard commands (Redis 7.0). */
static long long confirm_count(const client *c, int ns) {
    pubsub_counts k = pubsub_client_counts(c);
    return ns == NS_SHARD ? (long long)k.shard : (long long)(k.channels + k.patterns);
}

/* Free the state and leave pub/sub mode once nothing is subscribed. */
static void state_release_if_empty(client *c) {
    pubsub_counts k = pubsub_client_counts(c);
    if (k.channels + k.patterns + k.shard) return;
    struct pubsub_state *st = c->pubsub;
    if (st) {
        dict_clear(&st->names[NS_CHANNEL], NULL);
        dict_clear(&st->names[NS_SHARD], NULL);
        zfree(st->pats);
        zfree(st);
        c->pubsub = NULL;
    }
    c->flags &= ~(uint32_t)CF_PUBSUB;
}

/* ------------------------------------------------- subscribe/unsubscribe */

/* 1 if newly subscribed. */
static int subscribe_name(client *c, int ns, span name) {
    struct pubsub_state *st = state_get(c);
    if (dict_find(&st->names[ns], name.p, name.len)) return 0;
    dict_add(&st->names[ns], node_new(name, 0));
    registry_add(ns, name, c);
    return 1;
}

/* 1 if c was subscribed to name. */
static int unsubscribe_name(client *c, int ns, span name) {
    if (!c->pubsub) return 0;
    dnode *mine = dict_unlink(&c->pubsub->names[ns], name.p, name.len);
    if (!mine) return 0;
    dn_free(mine);
    dict_maybe_shrink(&c->pubsub->names[ns]);
    registry_remove(ns, dict_find(&registry[ns], name.p, name.len), c);
    return 1;
}

static long find_pattern(const struct pubsub_state *st, span pat) {
    for (size_t i = 0; st && i < st->npats; i++) {
        const dnode *n = st->pats[i];
        if (dn_klen(n) == pat.len && memcmp(dn_key(n), pat.p, pat.len) == 0) return (long)i;
    }
    return -1;
}

static int subscribe_pattern(client *c, span pat) {
    struct pubsub_state *st = state_get(c);
    if (find_pattern(st, pat) >= 0) return 0;
    if (st->npats == st->pcap) {
        st->pcap = st->pcap ? st->pcap * 2 : 4;
        st->pats = zrealloc(st->pats, st->pcap * sizeof *st->pats);
    }
    st->pats[st->npats++] = registry_add(NS_PATTERN, pat, c);
    return 1;
}

static int unsubscribe_pattern(client *c, span pat) {
    struct pubsub_state *st = c->pubsub;
    long i = find_pattern(st, pat);
    if (i < 0) return 0;
    dnode *n = st->pats[i];
    memmove(st->pats + i, st->pats + i + 1, (st->npats - (size_t)i - 1) * sizeof *st->pats);
    st->npats--;
    registry_remove(NS_PATTERN, n, c);
    return 1;
}

/* Pushes bypass CLIENT REPLY OFF/SKIP (Redis 7.0.15's CLIENT_PUSHING). */
static uint32_t push_begin(client *c) {
    uint32_t mute = c->flags & (CF_REPLY_OFF | CF_REPLY_SKIP);
    c->flags &= ~mute;
    return mute;
}

static void push_end(client *c, uint32_t mute) { c->flags |= mute; }

/* [kind, name or nil, count] */
static void push_confirm(client *c, const char *kind, const span *name, long long count) {
    uint32_t mute = push_begin(c);
    reply_push(c, 3);
    reply_bulk_cstr(c, kind);
    if (name) reply_bulk_span(c, *name);
    else reply_null(c);
    reply_int(c, count);
    push_end(c, mute);
}

static const char *const unsub_kind[NS_COUNT] = {"unsubscribe", "sunsubscribe", "punsubscribe"};

typedef struct node_vec {
    dnode **v;
    size_t n;
} node_vec;

static void collect_node(void *ud, dnode *n) {
    node_vec *nv = ud;
    nv->v[nv->n++] = n;
}

/* All nodes of d (d must not change while the caller walks them). */
static node_vec collect_all(dict *d) {
    node_vec nv = {zmalloc((dict_size(d) ? dict_size(d) : 1) * sizeof(dnode *)), 0};
    dict_foreach(d, collect_node, &nv);
    return nv;
}

/* Unsubscribe c from every channel (or shard channel) it has, one
 * confirmation each when notify; a single [kind, nil, count] when it had
 * none. Returns how many there were. */
static size_t unsubscribe_all_names(client *c, int ns, int notify) {
    size_t done = 0;
    if (c->pubsub && dict_size(&c->pubsub->names[ns])) {
        node_vec nv = collect_all(&c->pubsub->names[ns]);
        for (size_t i = 0; i < nv.n; i++) {
            span name = node_name(nv.v[i]);
            dict_unlink(&c->pubsub->names[ns], name.p, name.len);
            registry_remove(ns, dict_find(&registry[ns], name.p, name.len), c);
            if (notify) push_confirm(c, unsub_kind[ns], &name, confirm_count(c, ns));
            dn_free(nv.v[i]);
        }
        done = nv.n;
        zfree(nv.v);
    }
    if (notify && !done) push_confirm(c, unsub_kind[ns], NULL, confirm_count(c, ns));
    return done;
}

/* The same for patterns, in subscription order. */
static size_t unsubscribe_all_patterns(client *c, int notify) {
    struct pubsub_state *st = c->pubsub;
    size_t n = st ? st->npats : 0;
    for (size_t i = 0; i < n; i++) {
        dnode *p = st->pats[i];
        st->npats = n - i - 1; /* what the confirmation counts */
        if (notify) {
            span name = node_name(p);
            push_confirm(c, unsub_kind[NS_PATTERN], &name, confirm_count(c, NS_PATTERN));
        }
        registry_remove(NS_PATTERN, p, c);
    }
    if (notify && !n) push_confirm(c, unsub_kind[NS_PATTERN], NULL, confirm_count(c, NS_PATTERN));
    return n;
}

void pubsub_client_reset(client *c) {
    if (!c->pubsub) {
        c->flags &= ~(uint32_t)CF_PUBSUB;
        return;
    }
    unsubscribe_all_names(c, NS_CHANNEL, 0);
    unsubscribe_all_names(c, NS_SHARD, 0);
    unsubscribe_all_patterns(c, 0);
    state_release_if_empty(c);
}

/* ---------------------------------------------------------- publishing */

#define INLINE_BODY 4096    /* messages up to this size are copied into the frame */

/* One message as staged: `head` is everything up to the message body (its
 * first byte is patched to '*' or '>' per subscriber); `body`, when set, is
 * staged after it with its CRLF, else it is already inside head. */
typedef struct frame {
    char *head;
    size_t len;
    span body;
    char local[512 + INLINE_BODY];
} frame;

static size_t put_bulk_len(char *p, size_t n) {
    p[0] = '$';
    size_t k = 1 + ull_to_str(p + 1, n);
    p[k++] = '\r';
    p[k++] = '\n';
    return k;
}

static size_t put_bulk(char *p, span s) {
    size_t k = put_bulk_len(p, s.len);
    if (s.len) memcpy(p + k, s.p, s.len);
    k += s.len;
    p[k++] = '\r';
    p[k++] = '\n';
    return k;
}

/* [kind, (pattern,) channel, message] */
static void frame_build(frame *f, const char *kind, const span *pattern, span channel, span msg) {
    span k = {kind, strlen(kind)};
    int inline_body = msg.len <= INLINE_BODY;
    size_t need = 4 + (k.len + 32) + (pattern ? pattern->len + 32 : 0) + channel.len + 32 + 32 +
                  (inline_body ? msg.len + 2 : 0);
    f->head = need <= sizeof f->local ? f->local : zmalloc(need);
    char *p = f->head;
    size_t n = 0;
    p[n++] = '*';
    p[n++] = pattern ? '4' : '3';
    p[n++] = '\r';
    p[n++] = '\n';
    n += put_bulk(p + n, k);
    if (pattern) n += put_bulk(p + n, *pattern);
    n += put_bulk(p + n, channel);
    if (inline_body) {
        n += put_bulk(p + n, msg);
        f->body = (span){NULL, 0};
    } else {
        n += put_bulk_len(p + n, msg.len);
        f->body = msg;
    }
    f->len = n;
}

static void frame_free(frame *f) {
    if (f->head != f->local) zfree(f->head);
}

static void deliver(client *c, frame *f) {
    if (c->flags & (CF_CLOSE_ASAP | CF_CLOSE_AFTER_REPLY)) return; /* nothing more is sent to it */
    f->head[0] = c->resp >= 3 ? '>' : '*';
    uint32_t mute = push_begin(c);
    reply_raw(c, f->head, f->len);
    if (f->body.p) {
        reply_raw(c, f->body.p, f->body.len);
        reply_raw(c, "\r\n", 2);
    }
    push_end(c, mute);
    client_check_output_limits(c);
}

static long long deliver_all(const subs *s, frame *f) {
    for (size_t i = 0; i < s->n; i++) deliver(s->v[i], f);
    return (long long)s->n;
}

static long long publish_names(int ns, const char *kind, span channel, span msg) {
    dnode *n = dict_find(&registry[ns], channel.p, channel.len);
    if (!n) return 0;
    frame f;
    frame_build(&f, kind, NULL, channel, msg);
    long long r = deliver_all(node_subs(n), &f);
    frame_free(&f);
    return r;
}

typedef struct pattern_pub {
    span channel, msg;
    long long receivers;
} pattern_pub;

static void publish_to_pattern(void *ud, dnode *n) {
    pattern_pub *pp = ud;
    span pat = node_name(n);
    if (!glob_match(pat.p, pat.len, pp->channel.p, pp->channel.len, 0)) return;
    frame f;
    frame_build(&f, "pmessage", &pat, pp->channel, pp->msg);
    pp->receivers += deliver_all(node_subs(n), &f);
    frame_free(&f);
}

long long pubsub_publish(span channel, span msg) {
    long long receivers = publish_names(NS_CHANNEL, "message", channel, msg);
    pattern_pub pp = {channel, msg, 0};
    if (dict_size(&registry[NS_PATTERN])) dict_foreach(&registry[NS_PATTERN], publish_to_pattern, &pp);
    return receivers + pp.receivers;
}

/* ------------------------------------------------------------- commands */

static const char *const sub_kind[NS_COUNT] = {"subscribe", "ssubscribe", "psubscribe"};

/* SUBSCRIBE / SSUBSCRIBE / PSUBSCRIBE channel|pattern ... */
static void subscribe_args(client *c, int ns) {
    for (int j = 1; j < c->argc; j++) {
        if (ns == NS_PATTERN) subscribe_pattern(c, c->argv[j]);
        else subscribe_name(c, ns, c->argv[j]);
        c->flags |= CF_PUBSUB;
        push_confirm(c, sub_kind[ns], &c->argv[j], confirm_count(c, ns));
    }
}

/* UNSUBSCRIBE / SUNSUBSCRIBE / PUNSUBSCRIBE [name ...] */
static void unsubscribe_args(client *c, int ns) {
    if (c->argc == 1) {
        if (ns == NS_PATTERN) unsubscribe_all_patterns(c, 1);
        else unsubscribe_all_names(c, ns, 1);
    } else {
        for (int j = 1; j < c->argc; j++) {
            if (ns == NS_PATTERN) unsubscribe_pattern(c, c->argv[j]);
            else unsubscribe_name(c, ns, c->argv[j]);
            push_confirm(c, unsub_kind[ns], &c->argv[j], confirm_count(c, ns));
        }
    }
    state_release_if_empty(c);
}

static void cmd_subscribe(client *c) { subscribe_args(c, NS_CHANNEL); }
static void cmd_psubscribe(client *c) { subscribe_args(c, NS_PATTERN); }
static void cmd_unsubscribe(client *c) { unsubscribe_args(c, NS_CHANNEL); }
static void cmd_punsubscribe(client *c) { unsubscribe_args(c, NS_PATTERN); }
static void cmd_sunsubscribe(client *c) { unsubscribe_args(c, NS_SHARD); }

/* Inside EXEC (Redis: a "deny blocking" client) only SSUBSCRIBE refuses;
 * SUBSCRIBE and PSUBSCRIBE are allowed there for backward compatibility. */
static void cmd_ssubscribe(client *c) {
    if (c->flags & CF_EXECUTING_EXEC) {
        reply_error(c, "ERR SSUBSCRIBE isn't allowed for a DENY BLOCKING client");
        return;
    }
    subscribe_args(c, NS_SHARD);
}

void (*pubsub_cluster_propagate)(span channel, span msg, int shard);

/* Cluster mode: this node's shard stopped serving slot: every subscriber of
 * a shard channel of the slot is unsubscribed from it (each told with a
 * sunsubscribe), as Redis does. */
void pubsub_shard_slot_removed(unsigned slot) {
    if (!dict_size(&registry[NS_SHARD])) return;
    node_vec nv = collect_all(&registry[NS_SHARD]);
    for (size_t i = 0; i < nv.n; i++) {
        span name = node_name(nv.v[i]);
        if (key_hash_slot(name.p, name.len) != slot) continue;
        char *copy = zmalloc(name.len + 1);
        memcpy(copy, name.p, name.len);
        span own = {copy, name.len};
        for (dnode *n = nv.v[i]; n; n = dict_find(&registry[NS_SHARD], own.p, own.len)) {
            client *c = node_subs(n)->v[0];
            unsubscribe_name(c, NS_SHARD, own);
            push_confirm(c, unsub_kind[NS_SHARD], &own, confirm_count(c, NS_SHARD));
            state_release_if_empty(c);
        }
        zfree(copy);
    }
    zfree(nv.v);
}

long long pubsub_publish_shard(span channel, span msg) { return publish_names(NS_SHARD, "smessage", channel, msg); }

static void cmd_publish(client *c) {
    reply_int(c, pubsub_publish(c->argv[1], c->argv[2]));
    if (pubsub_cluster_propagate) pubsub_cluster_propagate(c->argv[1], c->argv[2], 0); /* the bus reaches every node */
    else prop_replicas_only(c);
}

static void cmd_spublish(client *c) {
    reply_int(c, pubsub_publish_shard(c->argv[1], c->argv[2]));
    if (pubsub_cluster_propagate) pubsub_cluster_propagate(c->argv[1], c->argv[2], 1);
    else prop_replicas_only(c);
}

/* ------------------------------------------------------- RESP2 context */

int pubsub_allowed_in_context(const command *cmd) { return (cmd->props & PROP_SUBSCRIBED_OK) != 0; }

void pubsub_context_error(char *buf, size_t cap, const command *cmd) {
    snprintf(buf, cap,
             "Can't execute '%s': only (P|S)SUBSCRIBE / (P|S)UNSUBSCRIBE / PING / QUIT / RESET are allowed in this "
             "context",
             cmd->fullname);
}

/* --------------------------------------------------------------- PUBSUB */

static void reply_wrong_form(client *c) {
    reply_errorf(c, "ERR unknown subcommand or wrong number of arguments for '%.*s'. Try PUBSUB HELP.",
                 (int)(c->argv[1].len > 128 ? 128 : c->argv[1].len), c->argv[1].p);
}

/* CHANNELS / SHARDCHANNELS [pattern] */
static void reply_active(client *c, int ns) {
    if (c->argc > 3) {
        reply_wrong_form(c);
        return;
    }
    node_vec nv = collect_all(&registry[ns]);
    size_t m = 0;
    for (size_t i = 0; i < nv.n; i++) {
        span name = node_name(nv.v[i]);
        if (c->argc == 2 || glob_match(c->argv[2].p, c->argv[2].len, name.p, name.len, 0)) nv.v[m++] = nv.v[i];
    }
    reply_array(c, (long)m);
    for (size_t i = 0; i < m; i++) reply_bulk_span(c, node_name(nv.v[i]));
    zfree(nv.v);
}

/* NUMSUB / SHARDNUMSUB [name ...]: name, count pairs (an array in RESP3 too) */
static void reply_numsub(client *c, int ns) {
    reply_array(c, (long)(c->argc - 2) * 2);
    for (int j = 2; j < c->argc; j++) {
        reply_bulk_span(c, c->argv[j]);
        reply_int(c, (long long)subscriber_count(ns, c->argv[j]));
    }
}

static void pubsub_channels(client *c) { reply_active(c, NS_CHANNEL); }
static void pubsub_shardchannels(client *c) { reply_active(c, NS_SHARD); }
static void pubsub_numsub(client *c) { reply_numsub(c, NS_CHANNEL); }
static void pubsub_shardnumsub(client *c) { reply_numsub(c, NS_SHARD); }
static void pubsub_numpat(client *c) { reply_int(c, (long long)pubsub_pattern_count()); }

static const char *const pubsub_help_lines[] = {
    "PUBSUB <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
    "CHANNELS [<pattern>]",
    "    Return the currently active channels matching a <pattern> (default: '*').",
    "NUMPAT",
    "    Return number of subscriptions to patterns.",
    "NUMSUB [<channel> ...]",
    "    Return the number of subscribers for the specified channels, excluding",
    "    pattern subscriptions(default: no channels).",
    "SHARDCHANNELS [<pattern>]",
    "    Return the currently active shard level channels matching a <pattern> (default: '*').",
    "SHARDNUMSUB [<shardchannel> ...]",
    "    Return the number of subscribers for the specified shard level channel(s)",
    "HELP",
    "    Prints this help.",
    NULL,
};

static void pubsub_help(client *c) { reply_help(c, pubsub_help_lines); }

/* Never reached in practice: command.c resolves the subcommand and rejects
 * unknown ones itself; answers like CLIENT's container if it ever is. */
static void pubsub_container(client *c) {
    char sub[129];
    reply_errorf(c, "ERR unknown subcommand '%s'. Try PUBSUB HELP.", span_cstr(sub, sizeof sub, c->argv[1]));
}

/* ---------------------------------------------------------------- tables */

#define F_SUB (CMD_PUBSUB | CMD_NOSCRIPT | CMD_LOADING | CMD_STALE)
#define F_PUB (CMD_PUBSUB | CMD_LOADING | CMD_STALE | CMD_FAST)
#define F_INTRO (CMD_PUBSUB | CMD_LOADING | CMD_STALE)

static command pubsub_subcommands[] = {
    CMD("channels", pubsub_channels, -2, .flags = F_INTRO, .acl = "pubsub slow", .summary = "List active channels",
        .since = "2.8.0",
        .complexity = "O(N) where N is the number of active channels, and assuming constant time pattern "
            "matching (relatively short channels and patterns)"),
    CMD("help", pubsub_help, 2, .flags = CMD_LOADING | CMD_STALE, .acl = "slow",
        .summary = "Show helpful text about the different subcommands", .since = "6.2.0", .complexity = "O(1)"),
    CMD("numpat", pubsub_numpat, 2, .flags = F_INTRO, .acl = "pubsub slow",
        .summary = "Get the count of unique patterns pattern subscriptions", .since = "2.8.0", .complexity = "O(1)"),
    CMD("numsub", pubsub_numsub, -2, .flags = F_INTRO, .acl = "pubsub slow",
        .summary = "Get the count of subscribers for channels", .since = "2.8.0",
        .complexity = "O(N) for the NUMSUB subcommand, where N is the number of requested channels"),
    CMD("shardchannels", pubsub_shardchannels, -2, .flags = F_INTRO, .acl = "pubsub slow",
        .summary = "List active shard channels", .since = "7.0.0",
        .complexity = "O(N) where N is the number of active shard channels, and assuming constant time "
            "pattern matching (relatively short shard channels)."),
    CMD("shardnumsub", pubsub_shardnumsub, -2, .flags = F_INTRO, .acl = "pubsub slow",
        .summary = "Get the count of subscribers for shard channels", .since = "7.0.0",
        .complexity = "O(N) for the SHARDNUMSUB subcommand, where N is the number of requested shard channels"),
    {0},
};

static command pubsub_commands[] = {
    CMD("psubscribe", cmd_psubscribe, -2, .flags = F_SUB, .props = PROP_SUBSCRIBED_OK, .acl = "pubsub slow",
        .summary = "Listen for messages published to channels matching the given patterns", .since = "2.0.0",
        .complexity = "O(N) where N is the number of patterns the client is already subscribed to."),
    CMD("publish", cmd_publish, 3, .flags = F_PUB, .acl = "pubsub fast", .summary = "Post a message to a channel",
        .since = "2.0.0",
        .complexity = "O(N+M) where N is the number of clients subscribed to the receiving channel and M is "
            "the total number of subscribed patterns (by any client)."),
    CMD("pubsub", pubsub_container, -2, .acl = "slow", .summary = "A container for Pub/Sub commands", .since = "2.8.0",
        .complexity = "Depends on subcommand.", .subcmds = pubsub_subcommands),
    CMD("punsubscribe", cmd_punsubscribe, -1, .flags = F_SUB, .props = PROP_SUBSCRIBED_OK, .acl = "pubsub slow",
        .summary = "Stop listening for messages posted to channels matching the given patterns", .since = "2.0.0",
        .complexity = "O(N+M) where N is the number of patterns the client is already subscribed and M is the "
            "number of total patterns subscribed in the system (by any client)."),
    CMD("spublish", cmd_spublish, 3, .flags = F_PUB, .acl = "pubsub fast", CMD_KEYS(1, 1, 1),
        .summary = "Post a message to a shard channel", .since = "7.0.0",
        .complexity = "O(N) where N is the number of clients subscribed to the receiving shard channel."),
    CMD("ssubscribe", cmd_ssubscribe, -2, .flags = F_SUB, .props = PROP_SUBSCRIBED_OK, .acl = "pubsub slow",
        CMD_KEYS(1, -1, 1), .summary = "Listen for messages published to the given shard channels", .since = "7.0.0",
        .complexity = "O(N) where N is the number of shard channels to subscribe to."),
    CMD("subscribe", cmd_subscribe, -2, .flags = F_SUB, .props = PROP_SUBSCRIBED_OK, .acl = "pubsub slow",
        .summary = "Listen for messages published to the given channels", .since = "2.0.0",
        .complexity = "O(N) where N is the number of channels to subscribe to."),
    CMD("sunsubscribe", cmd_sunsubscribe, -1, .flags = F_SUB, .props = PROP_SUBSCRIBED_OK, .acl = "pubsub slow",
        CMD_KEYS(1, -1, 1), .summary = "Stop listening for messages posted to the given shard channels",
        .since = "7.0.0", .complexity = "O(N) where N is the number of clients already subscribed to a shard channel."),
    CMD("unsubscribe", cmd_unsubscribe, -1, .flags = F_SUB, .props = PROP_SUBSCRIBED_OK, .acl = "pubsub slow",
        .summary = "Stop listening for messages posted to the given channels", .since = "2.0.0",
        .complexity = "O(N) where N is the number of clients already subscribed to a channel."),
    {0},
};
const command_group pubsub_group = {"pubsub", pubsub_commands};
