/* cmd_stream_info.c - XINFO (STREAM [FULL [COUNT n]], GROUPS, CONSUMERS,
 * HELP): what a stream, its consumer groups and their consumers hold, for
 * people and monitoring tools.
 *
 * Replies are Redis 7.0's byte for byte (maps in RESP3, flat arrays in
 * RESP2, fields in Redis's order), including the consumer groups' lag and
 * entries-read under Redis 7.0's rules.
 *
 * radix-tree-nodes: ferry keeps its blocks in an array, not in a radix
 * tree, so the value is computed from the blocks' master IDs as the node
 * count of the rax redis-server would hold for them (16-byte big-endian
 * keys: one node per branching point, per run of bytes between branches
 * and per key). Redis's rax is canonical for keys of equal length (its
 * deletions re-compress what insertions would have built), so the count
 * only depends on the set of blocks, which matches Redis's. Unlike Redis's
 * O(1) counter it costs O(blocks) per XINFO STREAM.
 */
#include <string.h>

#include "cmd_stream.h"
#include "command.h"
#include "reply.h"
#include "server.h"
#include "util.h"

#define XINFO_FULL_DEFAULT_COUNT 10
#define RAX_KEY_LEN 16

/* ---- small helpers ----------------------------------------------------------- */

/* How much of an argument Redis's "%s" shows: the bytes up to a NUL. */
static int cstr_len(span s, size_t max) {
    const char *z = memchr(s.p, '\0', s.len);
    size_t n = z ? (size_t)(z - s.p) : s.len;
    return (int)(n < max ? n : max);
}

static void reply_subcmd_syntax(client *c) {
    reply_errorf(c, "ERR unknown subcommand or wrong number of arguments for '%.*s'. Try XINFO HELP.",
                 cstr_len(c->argv[1], 128), c->argv[1].p);
}

static void field_int(client *c, const char *name, long long v) {
    reply_bulk_cstr(c, name);
    reply_int(c, v);
}

static void field_id(client *c, const char *name, sid id) {
    reply_bulk_cstr(c, name);
    stream_reply_id(c, id);
}

/* The stream at argv[2]; NULL after replying (missing key, wrong type). */
static stream *lookup_or_reply(client *c) {
    stream *s;
    if (stream_lookup(c, c->argv[2], 0, &s) < 0) return NULL;
    if (!s) reply_error(c, "ERR no such key");
    return s;
}

/* At most count (0: all) of the n elements of a list. */
static long capped(size_t n, long long count) {
    return (long)(count && (unsigned long long)count < n ? (size_t)count : n);
}

/* ---- radix-tree-nodes --------------------------------------------------------- */

static sid block_key(const stream *s, size_t i) { return stream_block_master(s, i); }

/* Byte i of an ID as a rax key: ms then seq, big-endian. */
static unsigned key_byte(sid id, int i) {
    uint64_t w = i < 8 ? id.ms : id.seq;
    return (unsigned)(w >> (56 - 8 * (i & 7))) & 0xff;
}

/* Bytes two keys have in common at their start. */
static int key_common(sid a, sid b) {
    if (a.ms != b.ms) return __builtin_clzll(a.ms ^ b.ms) / 8;
    if (a.seq != b.seq) return 8 + __builtin_clzll(a.seq ^ b.seq) / 8;
    return RAX_KEY_LEN;
}

/* Rax nodes for the blocks lo..hi (sorted keys sharing d bytes), from
 * the node reached after those d bytes down: a key's end is a leaf, bytes
 * all keys share make one compressed node, else the node branches on
 * byte d into one subtree per distinct value. */
static size_t rax_nodes_from(const stream *s, size_t lo, size_t hi, int d) {
    if (d == RAX_KEY_LEN) return 1;
    int shared = key_common(block_key(s, lo), block_key(s, hi - 1));
    if (shared > d) return 1 + rax_nodes_from(s, lo, hi, shared);
    size_t nodes = 1;
    for (size_t i = lo, j; i < hi; i = j) {
        unsigned b = key_byte(block_key(s, i), d);
        for (j = i + 1; j < hi && key_byte(block_key(s, j), d) == b; j++) {}
        nodes += rax_nodes_from(s, i, j, d + 1);
    }
    return nodes;
}

static long long rax_node_count(const stream *s) {
    size_t n = stream_block_count(s);
    return n ? (long long)rax_nodes_from(s, 0, n, 0) : 1; /* an empty rax is its root */
}

/* ---- consumer groups: lag --------------------------------------------------------- */

/* Redis 7.0's streamReplyWithCGLag: entries added after the group's last
 * delivered one, or null when that cannot be known. */
static void reply_lag(client *c, const stream *s, const sgroup *g) {
    long long read;
    if (!s->entries_added) {
        reply_int(c, 0);
        return;
    }
    if (g->entries_read != SCG_INVALID_ENTRIES_READ && !stream_range_has_tombstones(s, &g->last_id, NULL))
        read = g->entries_read;
    else read = stream_estimate_distance(s, g->last_id);
    if (read == SCG_INVALID_ENTRIES_READ) reply_null(c);
    else reply_int(c, (long long)s->entries_added - read);
}

static void reply_entries_read(client *c, const sgroup *g) {
    reply_bulk_cstr(c, "entries-read");
    if (g->entries_read != SCG_INVALID_ENTRIES_READ) reply_int(c, g->entries_read);
    else reply_null(c);
}

/* ---- XINFO STREAM ------------------------------------------------------------------ */

/* The fields XINFO STREAM and XINFO STREAM FULL open with. */
static void reply_stream_head(client *c, const stream *s) {
    field_int(c, "length", (long long)s->length);
    field_int(c, "radix-tree-keys", (long long)stream_block_count(s));
    field_int(c, "radix-tree-nodes", rax_node_count(s));
    field_id(c, "last-generated-id", s->last_id);
    field_id(c, "max-deleted-entry-id", s->max_deleted_id);
    field_int(c, "entries-added", (long long)s->entries_added);
    field_id(c, "recorded-first-entry-id", s->first_id);
}

/* The first (rev: last) entry, or null. */
static void reply_edge_entry(client *c, const stream *s, int rev) {
    stream_iter it;
    sentry e;
    stream_iter_init(&it, s, SID_MIN, SID_MAX, rev);
    if (stream_iter_next(&it, &e)) stream_reply_entry(c, &e);
    else reply_null(c);
    stream_iter_end(&it);
}

static void reply_stream_summary(client *c, const stream *s) {
    reply_map(c, 10);
    reply_stream_head(c, s);
    field_int(c, "groups", (long long)s->ngroups);
    reply_bulk_cstr(c, "first-entry");
    reply_edge_entry(c, s, 0);
    reply_bulk_cstr(c, "last-entry");
    reply_edge_entry(c, s, 1);
}

/* A group's PEL: [id, consumer, delivery time, delivery count]... */
static void reply_group_pel(client *c, const sgroup *g, long long count) {
    long n = capped(g->pel.len, count);
    reply_array(c, n);
    sidmap_node *x = sidmap_first(&g->pel);
    for (long i = 0; i < n; i++, x = sidmap_next(x)) {
        const snack *k = sidmap_val(x);
        reply_array(c, 4);
        stream_reply_id(c, sidmap_id(x));
        reply_bulk(c, k->consumer->name, k->consumer->nlen);
        reply_int(c, k->delivery_time);
        reply_int(c, (long long)k->delivery_count);
    }
}

/* A consumer's PEL: [id, delivery time, delivery count]... */
static void reply_consumer_pel(client *c, const sconsumer *cons, long long count) {
    long n = capped(cons->pel.len, count);
    reply_array(c, n);
    sidmap_node *x = sidmap_first(&cons->pel);
    for (long i = 0; i < n; i++, x = sidmap_next(x)) {
        const snack *k = sidmap_val(x);
        reply_array(c, 3);
        stream_reply_id(c, sidmap_id(x));
        reply_int(c, k->delivery_time);
        reply_int(c, (long long)k->delivery_count);
    }
}

static void reply_full_consumer(client *c, const sconsumer *cons, long long count) {
    reply_map(c, 4);
    reply_bulk_cstr(c, "name");
    reply_bulk(c, cons->name, cons->nlen);
    field_int(c, "seen-time", cons->seen_time);
    field_int(c, "pel-count", (long long)cons->pel.len);
    reply_bulk_cstr(c, "pending");
    reply_consumer_pel(c, cons, count);
}

static void reply_full_group(client *c, const stream *s, const sgroup *g, long long count) {
    reply_map(c, 7);
    reply_bulk_cstr(c, "name");
    reply_bulk(c, g->name, g->nlen);
    field_id(c, "last-delivered-id", g->last_id);
    reply_entries_read(c, g);
    reply_bulk_cstr(c, "lag");
    reply_lag(c, s, g);
    field_int(c, "pel-count", (long long)g->pel.len);
    reply_bulk_cstr(c, "pending");
    reply_group_pel(c, g, count);
    reply_bulk_cstr(c, "consumers");
    reply_array(c, (long)g->nconsumers);
    for (size_t i = 0; i < g->nconsumers; i++) reply_full_consumer(c, g->consumers[i], count);
}

static void reply_stream_full(client *c, const stream *s, long long count) {
    reply_map(c, 9);
    reply_stream_head(c, s);
    reply_bulk_cstr(c, "entries");
    stream_reply_range(c, s, SID_MIN, SID_MAX, (long)count, 0);
    reply_bulk_cstr(c, "groups");
    reply_array(c, (long)s->ngroups);
    for (size_t i = 0; i < s->ngroups; i++) reply_full_group(c, s, s->groups[i], count);
}

/* The options after the key: none, FULL or FULL COUNT <n> (negative: the
 * default, 0: everything). 0 after replying an error. */
static int parse_stream_opts(client *c, int *full, long long *count) {
    int optc = c->argc - 3;
    *full = optc > 0;
    *count = XINFO_FULL_DEFAULT_COUNT;
    if (!optc) return 1;
    if ((optc != 1 && optc != 3) || !span_eq_nocase(c->argv[3], "full") ||
        (optc == 3 && !span_eq_nocase(c->argv[4], "count"))) {
        reply_subcmd_syntax(c);
        return 0;
    }
    if (optc == 3 && !str_to_ll(c->argv[5].p, c->argv[5].len, count)) {
        reply_err_notint(c);
        return 0;
    }
    if (*count < 0) *count = XINFO_FULL_DEFAULT_COUNT;
    return 1;
}

static void xinfo_stream(client *c) {
    stream *s = lookup_or_reply(c);
    int full;
    long long count;
    if (!s || !parse_stream_opts(c, &full, &count)) return;
    if (full) reply_stream_full(c, s, count);
    else reply_stream_summary(c, s);
}

/* ---- XINFO GROUPS, CONSUMERS, HELP ------------------------------------------------- */

static void reply_group_summary(client *c, const stream *s, const sgroup *g) {
    reply_map(c, 6);
    reply_bulk_cstr(c, "name");
    reply_bulk(c, g->name, g->nlen);
    field_int(c, "consumers", (long long)g->nconsumers);
    field_int(c, "pending", (long long)g->pel.len);
    field_id(c, "last-delivered-id", g->last_id);
    reply_entries_read(c, g);
    reply_bulk_cstr(c, "lag");
    reply_lag(c, s, g);
}

static void xinfo_groups(client *c) {
    stream *s = lookup_or_reply(c);
    if (!s) return;
    reply_array(c, (long)s->ngroups);
    for (size_t i = 0; i < s->ngroups; i++) reply_group_summary(c, s, s->groups[i]);
}

static void reply_consumer_summary(client *c, const sconsumer *cons) {
    int64_t idle = srv.now_ms - cons->seen_time;
    reply_map(c, 3);
    reply_bulk_cstr(c, "name");
    reply_bulk(c, cons->name, cons->nlen);
    field_int(c, "pending", (long long)cons->pel.len);
    field_int(c, "idle", idle > 0 ? idle : 0);
}

static void xinfo_consumers(client *c) {
    stream *s = lookup_or_reply(c);
    if (!s) return;
    span key = c->argv[2], gname = c->argv[3];
    const sgroup *g = stream_group_find(s, gname.p, gname.len);
    if (!g) {
        reply_errorf(c, "NOGROUP No such consumer group '%.*s' for key name '%.*s'", cstr_len(gname, gname.len),
                     gname.p, cstr_len(key, key.len), key.p);
        return;
    }
    reply_array(c, (long)g->nconsumers);
    for (size_t i = 0; i < g->nconsumers; i++) reply_consumer_summary(c, g->consumers[i]);
}

static void xinfo_help(client *c) {
    static const char *const help[] = {
        "XINFO <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
        "CONSUMERS <key> <groupname>",
        "    Show consumers of <groupname>.",
        "GROUPS <key>",
        "    Show the stream consumer groups.",
        "STREAM <key> [FULL [COUNT <count>]",
        "    Show information about the stream.",
        "HELP",
        "    Prints this help.",
        NULL,
    };
    reply_help(c, help);
}

/* Reached only if dispatch did not resolve a subcommand. */
static void xinfo_container(client *c) {
    char sub[129];
    reply_errorf(c, "ERR unknown subcommand '%s'. Try XINFO HELP.", span_cstr(sub, sizeof sub, c->argv[1]));
}

/* ---- the table ---------------------------------------------------------------------- */

static command xinfo_subcommands[] = {
    CMD("consumers", xinfo_consumers, 4, .flags = CMD_READONLY, .acl = "read stream slow", CMD_KEYS(2, 2, 1),
        .summary = "List the consumers in a consumer group", .since = "5.0.0", .complexity = "O(1)"),
    CMD("groups", xinfo_groups, 3, .flags = CMD_READONLY, .acl = "read stream slow", CMD_KEYS(2, 2, 1),
        .summary = "List the consumer groups of a stream", .since = "5.0.0", .complexity = "O(1)"),
    CMD("help", xinfo_help, 2, .flags = CMD_LOADING | CMD_STALE, .acl = "stream slow",
        .summary = "Show helpful text about the different subcommands", .since = "5.0.0", .complexity = "O(1)"),
    CMD("stream", xinfo_stream, -3, .flags = CMD_READONLY, .acl = "read stream slow", CMD_KEYS(2, 2, 1),
        .summary = "Get information about a stream", .since = "5.0.0", .complexity = "O(1)"),
    {0},
};

static command stream_info_commands[] = {
    CMD("xinfo", xinfo_container, -2, .acl = "slow", .subcmds = xinfo_subcommands,
        .summary = "A container for stream introspection commands", .since = "5.0.0",
        .complexity = "Depends on subcommand."),
    {0},
};

const command_group stream_info_group = {"stream", stream_info_commands};
