/* cmd_stream_cg.c - consumer groups: XGROUP (CREATE, SETID, DESTROY,
 * CREATECONSUMER, DELCONSUMER, HELP), XACK, XPENDING, XCLAIM, XAUTOCLAIM.
 *
 * Redis 7.0's semantics and reply bytes. XCLAIM and XAUTOCLAIM propagate
 * their effects as XCLAIM ... FORCE JUSTID forms (and XGROUP SETID when
 * only the group's last ID moved), never themselves, as redis-server
 * does; entries that were deleted from the stream are dropped from the
 * PEL when a claim meets them.
 */
#include <limits.h>
#include <string.h>

#include "blocking.h"
#include "cmd_stream.h"
#include "command.h"
#include "multi.h"
#include "notify.h"
#include "propagate.h"
#include "reply.h"
#include "server.h"
#include "util.h"
#include "zmalloc.h"

static int parse_ll_msg(client *c, span a, long long *v, const char *msg) {
    if (str_to_ll(a.p, a.len, v)) return 1;
    if (msg) reply_errorf(c, "ERR %s", msg);
    else reply_err_notint(c);
    return 0;
}

static void reply_nogroup(client *c, span key, span g) {
    reply_errorf(c, "NOGROUP No such key '%.*s' or consumer group '%.*s'", (int)key.len, key.p, (int)g.len, g.p);
}

/* The stream and group at argv[1], argv[2] for XACK-like commands: 0 after
 * a WRONGTYPE reply; the stream and group are NULL when missing. */
static int lookup_group(client *c, stream **s, sgroup **g) {
    *g = NULL;
    if (stream_lookup(c, c->argv[1], 0, s) < 0) return 0;
    if (*s) *g = stream_group_find(*s, c->argv[2].p, c->argv[2].len);
    return 1;
}

static void group_notify(client *c, span key, const char *event) {
    srv.dirty++;
    notify_keyspace_event(NOTIFY_STREAM, event, c->db->id, key.p, key.len);
}

/* ---- XGROUP -------------------------------------------------------------------- */

typedef struct xgroup_ctx {
    span key, gname;
    stream *s;
    sgroup *g;
    int mkstream;
    long long entries_read;
} xgroup_ctx;

static void xgroup_container(client *c) {
    char sub[129];
    reply_errorf(c, "ERR unknown subcommand '%s'. Try XGROUP HELP.", span_cstr(sub, sizeof sub, c->argv[1]));
}

static void reply_subcmd_syntax(client *c) {
    reply_errorf(c, "ERR unknown subcommand or wrong number of arguments for '%.*s'. Try XGROUP HELP.",
                 (int)c->argv[1].len, c->argv[1].p);
}

static int entries_read_arg(client *c, span a, long long *v) {
    if (!parse_ll_msg(c, a, v, NULL)) return 0;
    if (*v < 0 && *v != SCG_INVALID_ENTRIES_READ) {
        reply_error(c, "ERR value for ENTRIESREAD must be positive or -1");
        return 0;
    }
    return 1;
}

static int parse_create_opts(client *c, xgroup_ctx *x) {
    for (int i = 5; i < c->argc;) {
        if (span_eq_nocase(c->argv[i], "mkstream")) {
            x->mkstream = 1;
            i++;
        } else if (span_eq_nocase(c->argv[i], "entriesread") && i + 1 < c->argc) {
            if (!entries_read_arg(c, c->argv[i + 1], &x->entries_read)) return 0;
            i += 2;
        } else {
            reply_subcmd_syntax(c);
            return 0;
        }
    }
    return 1;
}

/* Common checks of Redis's xgroupCommand; 0 after replying. */
static int xgroup_prepare(client *c, xgroup_ctx *x) {
    memset(x, 0, sizeof *x);
    x->entries_read = SCG_INVALID_ENTRIES_READ;
    x->key = c->argv[2];
    x->gname = c->argv[3];
    if (span_eq_nocase(c->argv[1], "create") && c->argc >= 5 && !parse_create_opts(c, x)) return 0;
    if (stream_lookup(c, x->key, 1, &x->s) < 0) return 0;
    if (!x->mkstream) {
        if (!x->s) {
            reply_error(c, "ERR The XGROUP subcommand requires the key to exist. Note that for CREATE you may want "
                           "to use the MKSTREAM option to create an empty stream automatically.");
            return 0;
        }
        x->g = stream_group_find(x->s, x->gname.p, x->gname.len);
        if (!x->g && !span_eq_nocase(c->argv[1], "create") && !span_eq_nocase(c->argv[1], "destroy")) {
            reply_errorf(c, "NOGROUP No such consumer group '%.*s' for key name '%.*s'", (int)x->gname.len,
                         x->gname.p, (int)x->key.len, x->key.p);
            return 0;
        }
    }
    return 1;
}

static void xgroup_create(client *c) {
    xgroup_ctx x;
    if (!xgroup_prepare(c, &x)) return;
    if (c->argc > 8) {
        reply_subcmd_syntax(c);
        return;
    }
    sid id;
    span a = c->argv[4];
    if (a.len == 1 && a.p[0] == '$') id = x.s ? x.s->last_id : SID_MIN;
    else if (!stream_parse_id_strict(c, a, 1, &id, NULL)) return;
    if (!x.s) {
        x.s = stream_new();
        db_add_ptr(c->db, x.key.p, x.key.len, OBJ_STREAM, ENC_STREAM, x.s, -1);
        touch_watched_key(c->db, x.key.p, x.key.len);
    }
    if (!stream_group_create(x.s, x.gname.p, x.gname.len, id, x.entries_read)) {
        reply_error(c, "BUSYGROUP Consumer Group name already exists");
        return;
    }
    reply_ok(c);
    group_notify(c, x.key, "xgroup-create");
}

static void xgroup_setid(client *c) {
    xgroup_ctx x;
    if (!xgroup_prepare(c, &x)) return;
    if (c->argc != 5 && c->argc != 7) {
        reply_subcmd_syntax(c);
        return;
    }
    sid id;
    span a = c->argv[4];
    if (a.len == 1 && a.p[0] == '$') id = x.s->last_id;
    else if (!stream_parse_id(c, a, 0, 1, &id)) return;
    if (c->argc == 7) {
        if (!span_eq_nocase(c->argv[5], "entriesread")) {
            reply_subcmd_syntax(c);
            return;
        }
        if (!entries_read_arg(c, c->argv[6], &x.entries_read)) return;
    }
    x.g->last_id = id;
    x.g->entries_read = x.entries_read;
    reply_ok(c);
    group_notify(c, x.key, "xgroup-setid");
}

static void xgroup_destroy(client *c) {
    xgroup_ctx x;
    if (!xgroup_prepare(c, &x)) return;
    if (!x.g) {
        reply_int(c, 0);
        return;
    }
    stream_group_destroy(x.s, x.gname.p, x.gname.len);
    reply_int(c, 1);
    group_notify(c, x.key, "xgroup-destroy");
    signal_key_ready(c->db, x.key.p, x.key.len); /* blocked XREADGROUPs get -NOGROUP */
}

static void xgroup_createconsumer(client *c) {
    xgroup_ctx x;
    if (!xgroup_prepare(c, &x)) return;
    span name = c->argv[4];
    sconsumer *cons = stream_consumer_create(x.g, name.p, name.len, srv.now_ms);
    if (cons) group_notify(c, x.key, "xgroup-createconsumer");
    reply_int(c, cons ? 1 : 0);
}

static void xgroup_delconsumer(client *c) {
    xgroup_ctx x;
    if (!xgroup_prepare(c, &x)) return;
    span name = c->argv[4];
    sconsumer *cons = stream_consumer_find(x.g, name.p, name.len);
    long long pending = 0;
    if (cons) {
        pending = (long long)stream_consumer_delete(x.g, cons);
        group_notify(c, x.key, "xgroup-delconsumer");
    }
    reply_int(c, pending);
}

static void xgroup_help(client *c) {
    static const char *const lines[] = {
        "XGROUP <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
        "CREATE <key> <groupname> <id|$> [option]",
        "    Create a new consumer group. Options are:",
        "    * MKSTREAM",
        "      Create the empty stream if it does not exist.",
        "    * ENTRIESREAD entries_read",
        "      Set the group's entries_read counter (internal use).",
        "CREATECONSUMER <key> <groupname> <consumer>",
        "    Create a new consumer in the specified group.",
        "DELCONSUMER <key> <groupname> <consumer>",
        "    Remove the specified consumer.",
        "DESTROY <key> <groupname>",
        "    Remove the specified group.",
        "SETID <key> <groupname> <id|$> [ENTRIESREAD entries_read]",
        "    Set the current group ID and entries_read counter.",
        "HELP",
        "    Prints this help.",
        NULL};
    reply_help(c, lines);
}

/* ---- XACK ---------------------------------------------------------------------- */

static int parse_ids(client *c, int from, sid **ids) {
    int n = c->argc - from;
    *ids = zmalloc((size_t)(n ? n : 1) * sizeof **ids);
    for (int j = 0; j < n; j++) {
        if (!stream_parse_id_strict(c, c->argv[from + j], 1, &(*ids)[j], NULL)) {
            zfree(*ids);
            return -1;
        }
    }
    return n;
}

static void cmd_xack(client *c) {
    stream *s;
    sgroup *g;
    if (!lookup_group(c, &s, &g)) return;
    if (!g) {
        reply_int(c, 0);
        return;
    }
    sid *ids;
    int n = parse_ids(c, 3, &ids);
    if (n < 0) return;
    long long acked = 0;
    for (int j = 0; j < n; j++) acked += stream_pel_ack(g, ids[j]);
    zfree(ids);
    srv.dirty += acked;
    reply_int(c, acked);
}

/* ---- XPENDING ------------------------------------------------------------------ */

typedef struct pending_args {
    long long minidle, count;
    sid start, end;
    span consumer;
} pending_args;

static int parse_pending(client *c, pending_args *p) {
    int i = 3;
    if (span_eq_nocase(c->argv[3], "idle")) {
        if (!parse_ll_msg(c, c->argv[4], &p->minidle, NULL)) return 0;
        if (c->argc < 8) {
            reply_err_syntax(c);
            return 0;
        }
        i += 2;
    }
    if (!parse_ll_msg(c, c->argv[i + 2], &p->count, NULL)) return 0;
    if (p->count < 0) p->count = 0;
    if (!stream_parse_bound(c, c->argv[i], 0, &p->start, 1)) return 0;
    if (!stream_parse_bound(c, c->argv[i + 1], UINT64_MAX, &p->end, 0)) return 0;
    if (i + 3 < c->argc) p->consumer = c->argv[i + 3];
    return 1;
}

static void pending_summary(client *c, const sgroup *g) {
    reply_array(c, 4);
    reply_int(c, (long long)g->pel.len);
    if (!g->pel.len) {
        reply_null(c);
        reply_null(c);
        reply_null_array(c);
        return;
    }
    stream_reply_id(c, sidmap_id(sidmap_first(&g->pel)));
    stream_reply_id(c, sidmap_id(sidmap_last(&g->pel)));
    long n = 0;
    for (size_t i = 0; i < g->nconsumers; i++) n += g->consumers[i]->pel.len > 0;
    reply_array(c, n);
    for (size_t i = 0; i < g->nconsumers; i++) {
        const sconsumer *k = g->consumers[i];
        if (!k->pel.len) continue;
        reply_array(c, 2);
        reply_bulk(c, k->name, k->nlen);
        reply_bulk_ll(c, (long long)k->pel.len);
    }
}

static int pending_match(const snack *n, const pending_args *p, int64_t now) {
    return !p->minidle || now - n->delivery_time >= p->minidle;
}

static void pending_range(client *c, const sgroup *g, const pending_args *p) {
    const sidmap *pel = &g->pel;
    if (p->consumer.p) {
        const sconsumer *k = stream_consumer_find(g, p->consumer.p, p->consumer.len);
        if (!k) {
            reply_array(c, 0);
            return;
        }
        pel = &k->pel;
    }
    int64_t now = srv.now_ms;
    long n = 0;
    for (sidmap_node *x = sidmap_seek(pel, p->start); x && n < p->count && sid_cmp(sidmap_id(x), p->end) <= 0;
         x = sidmap_next(x))
        n += pending_match(sidmap_val(x), p, now);
    reply_array(c, n);
    long k = 0;
    for (sidmap_node *x = sidmap_seek(pel, p->start); x && k < n; x = sidmap_next(x)) {
        const snack *a = sidmap_val(x);
        if (!pending_match(a, p, now)) continue;
        k++;
        reply_array(c, 4);
        stream_reply_id(c, sidmap_id(x));
        reply_bulk(c, a->consumer->name, a->consumer->nlen);
        reply_int(c, now - a->delivery_time < 0 ? 0 : now - a->delivery_time);
        reply_int(c, (long long)a->delivery_count);
    }
}

static void cmd_xpending(client *c) {
    if (c->argc != 3 && (c->argc < 6 || c->argc > 9)) {
        reply_err_syntax(c);
        return;
    }
    pending_args p = {0};
    if (c->argc >= 6 && !parse_pending(c, &p)) return;
    stream *s;
    sgroup *g;
    if (!lookup_group(c, &s, &g)) return;
    if (!g) {
        reply_nogroup(c, c->argv[1], c->argv[2]);
        return;
    }
    if (c->argc == 3) pending_summary(c, g);
    else pending_range(c, g, &p);
}

/* ---- XCLAIM / XAUTOCLAIM ------------------------------------------------------- */

typedef struct claim_ctx {
    span key, gname, cname;
    stream *s;
    sgroup *g;
    sconsumer *cons;
    int justid;
    long long retrycount;
    int64_t delivery;
} claim_ctx;

static sconsumer *claim_consumer(client *c, claim_ctx *x) {
    if (x->cons) return x->cons;
    x->cons = stream_consumer_find(x->g, x->cname.p, x->cname.len);
    if (x->cons) {
        x->cons->seen_time = srv.now_ms;
    } else {
        x->cons = stream_consumer_create(x->g, x->cname.p, x->cname.len, srv.now_ms);
        group_notify(c, x->key, "xgroup-createconsumer");
    }
    return x->cons;
}

/* A PEL entry whose stream entry is gone: dropped, and the drop propagated. */
static void drop_missing(client *c, claim_ctx *x, sid id, snack *n) {
    stream_propagate_xclaim(c, x->key, x->g, x->gname, id, n);
    srv.dirty++;
    stream_pel_ack(x->g, id);
}

static void take(client *c, claim_ctx *x, sid id, snack *n) {
    sconsumer *cons = claim_consumer(c, x);
    if (n->consumer != cons) {
        if (n->consumer) stream_pel_move(x->g, n, id, cons);
        else {
            n->consumer = cons;
            sidmap_put(&cons->pel, id, n);
        }
    }
    n->delivery_time = x->delivery;
    if (x->retrycount >= 0) n->delivery_count = (uint64_t)x->retrycount;
    else if (!x->justid) n->delivery_count++;
    stream_propagate_xclaim(c, x->key, x->g, x->gname, id, n);
    srv.dirty++;
}

static void reply_claimed(client *c, const claim_ctx *x, const sid *ids, long n) {
    reply_array(c, n);
    for (long i = 0; i < n; i++) {
        if (x->justid) {
            stream_reply_id(c, ids[i]);
            continue;
        }
        stream_iter it;
        sentry e;
        stream_iter_init(&it, x->s, ids[i], ids[i], 0);
        if (stream_iter_next(&it, &e)) stream_reply_entry(c, &e);
        else reply_null(c);
        stream_iter_end(&it);
    }
}

static int claim_lookup(client *c, claim_ctx *x) {
    memset(x, 0, sizeof *x);
    x->key = c->argv[1];
    x->gname = c->argv[2];
    x->cname = c->argv[3];
    x->retrycount = -1;
    if (!lookup_group(c, &x->s, &x->g)) return 0;
    if (!x->g) {
        reply_nogroup(c, x->key, x->gname);
        return 0;
    }
    return 1;
}

static int claim_option(client *c, claim_ctx *x, int *j, int *force, sid *last, int64_t now) {
    int more = c->argc - 1 - *j;
    span o = c->argv[*j];
    long long v;
    if (span_eq_nocase(o, "force")) *force = 1;
    else if (span_eq_nocase(o, "justid")) x->justid = 1;
    else if (span_eq_nocase(o, "idle") && more) {
        if (!parse_ll_msg(c, c->argv[++*j], &v, "Invalid IDLE option argument for XCLAIM")) return 0;
        x->delivery = now - v;
    } else if (span_eq_nocase(o, "time") && more) {
        if (!parse_ll_msg(c, c->argv[++*j], &v, "Invalid TIME option argument for XCLAIM")) return 0;
        x->delivery = v;
    } else if (span_eq_nocase(o, "retrycount") && more) {
        if (!parse_ll_msg(c, c->argv[++*j], &x->retrycount, "Invalid RETRYCOUNT option argument for XCLAIM"))
            return 0;
    } else if (span_eq_nocase(o, "lastid") && more) {
        if (!stream_parse_id_strict(c, c->argv[++*j], 1, last, NULL)) return 0;
    } else {
        reply_errorf(c, "ERR Unrecognized XCLAIM option '%.*s'", (int)o.len, o.p);
        return 0;
    }
    return 1;
}

static void claim_ids(client *c, claim_ctx *x, const sid *ids, int n, int force, long long minidle, int64_t now) {
    sid *out = zmalloc((size_t)(n ? n : 1) * sizeof *out);
    long k = 0;
    for (int i = 0; i < n; i++) {
        snack *a = sidmap_get(&x->g->pel, ids[i]);
        if (!stream_has(x->s, ids[i])) {
            if (a) drop_missing(c, x, ids[i], a);
            continue;
        }
        if (force && !a) {
            a = zmalloc(sizeof *a);
            *a = (snack){.delivery_time = now, .delivery_count = 1, .consumer = NULL};
            sidmap_put(&x->g->pel, ids[i], a);
        }
        if (!a || (a->consumer && minidle && now - a->delivery_time < minidle)) continue;
        take(c, x, ids[i], a);
        out[k++] = ids[i];
    }
    reply_claimed(c, x, out, k);
    zfree(out);
}

static void cmd_xclaim(client *c) {
    claim_ctx x;
    if (!claim_lookup(c, &x)) return;
    long long minidle;
    if (!parse_ll_msg(c, c->argv[4], &minidle, "Invalid min-idle-time argument for XCLAIM")) return;
    if (minidle < 0) minidle = 0;
    int j = 5;
    sid tmp;
    while (j < c->argc && stream_parse_id_quiet(c->argv[j], 0, 0, &tmp)) j++;
    int nids = j - 5;
    int64_t now = srv.now_ms;
    int force = 0;
    sid last = SID_MIN;
    x.delivery = -1;
    for (; j < c->argc; j++)
        if (!claim_option(c, &x, &j, &force, &last, now)) return;
    sid *ids = zmalloc((size_t)(nids ? nids : 1) * sizeof *ids);
    for (int i = 0; i < nids; i++) stream_parse_id_quiet(c->argv[5 + i], 0, 0, &ids[i]);
    int moved = 0;
    if (sid_cmp(last, x.g->last_id) > 0) x.g->last_id = last, moved = 1;
    if (x.delivery == -1 || x.delivery < 0 || x.delivery > now) x.delivery = now;
    long long dirty0 = srv.dirty;
    claim_ids(c, &x, ids, nids, force, minidle, now);
    zfree(ids);
    if (moved && srv.dirty == dirty0) {
        stream_propagate_group_id(c, x.key, x.g, x.gname);
        srv.dirty++;
    }
}

typedef struct autoclaim_args {
    long long minidle;
    sid start;
    long count;
} autoclaim_args;

static int parse_autoclaim(client *c, autoclaim_args *a, int *justid) {
    if (!parse_ll_msg(c, c->argv[4], &a->minidle, "Invalid min-idle-time argument for XAUTOCLAIM")) return 0;
    if (a->minidle < 0) a->minidle = 0;
    if (!stream_parse_bound(c, c->argv[5], 0, &a->start, 1)) return 0;
    a->count = 100;
    for (int j = 6; j < c->argc; j++) {
        int more = c->argc - 1 - j;
        if (span_eq_nocase(c->argv[j], "count") && more) {
            long long v;
            if (!str_to_ll(c->argv[j + 1].p, c->argv[j + 1].len, &v) || v < 1 || v > LONG_MAX / 16) {
                reply_error(c, "ERR COUNT must be > 0");
                return 0;
            }
            a->count = (long)v;
            j++;
        } else if (span_eq_nocase(c->argv[j], "justid")) {
            *justid = 1;
        } else {
            reply_err_syntax(c);
            return 0;
        }
    }
    return 1;
}

static void cmd_xautoclaim(client *c) {
    autoclaim_args a;
    int justid = 0;
    if (!parse_autoclaim(c, &a, &justid)) return;
    claim_ctx x;
    if (!claim_lookup(c, &x)) return;
    x.justid = justid;
    int64_t now = srv.now_ms;
    x.delivery = now;
    long count = a.count, attempts = a.count * 10, nclaimed = 0, ndel = 0;
    sid *claimed = zmalloc((size_t)count * sizeof *claimed), *deleted = zmalloc((size_t)count * sizeof *deleted);
    sidmap_node *n = sidmap_seek(&x.g->pel, a.start);
    while (attempts-- && count && n) {
        sid id = sidmap_id(n);
        snack *k = sidmap_val(n);
        sidmap_node *next = sidmap_next(n);
        if (!stream_has(x.s, id)) {
            drop_missing(c, &x, id, k);
            deleted[ndel++] = id;
            count--;
        } else if (!a.minidle || now - k->delivery_time >= a.minidle) {
            take(c, &x, id, k);
            claimed[nclaimed++] = id;
            count--;
        }
        n = next;
    }
    reply_array(c, 3);
    stream_reply_id(c, n ? sidmap_id(n) : SID_MIN);
    reply_claimed(c, &x, claimed, nclaimed);
    reply_array(c, ndel);
    for (long i = 0; i < ndel; i++) stream_reply_id(c, deleted[i]);
    zfree(claimed);
    zfree(deleted);
}

/* ---- the table ----------------------------------------------------------------- */

static command xgroup_subcommands[] = {
    CMD("create", xgroup_create, -5, .flags = CMD_WRITE | CMD_DENYOOM,
        .acl = "write stream slow", CMD_KEYS(2, 2, 1), .summary = "Create a consumer group.", .since = "5.0.0",
        .complexity = "O(1)"),
    CMD("createconsumer", xgroup_createconsumer, 5, .flags = CMD_WRITE | CMD_DENYOOM, .acl = "write stream slow",
        CMD_KEYS(2, 2, 1), .summary = "Create a consumer in a consumer group.", .since = "6.2.0",
        .complexity = "O(1)"),
    CMD("delconsumer", xgroup_delconsumer, 5, .flags = CMD_WRITE, .acl = "write stream slow", CMD_KEYS(2, 2, 1),
        .summary = "Delete a consumer from a consumer group.", .since = "5.0.0", .complexity = "O(1)"),
    CMD("destroy", xgroup_destroy, 4, .flags = CMD_WRITE, .acl = "write stream slow", CMD_KEYS(2, 2, 1),
        .summary = "Destroy a consumer group.", .since = "5.0.0",
        .complexity = "O(N) where N is the number of entries in the group's pending entries list (PEL)."),
    CMD("help", xgroup_help, 2, .flags = CMD_LOADING | CMD_STALE, .acl = "stream slow",
        .summary = "Show helpful text about the different subcommands", .since = "5.0.0", .complexity = "O(1)"),
    CMD("setid", xgroup_setid, -5, .flags = CMD_WRITE, .acl = "write stream slow", CMD_KEYS(2, 2, 1),
        .summary = "Set a consumer group to an arbitrary last delivered ID value.", .since = "5.0.0",
        .complexity = "O(1)"),
    {0},
};

static command stream_cg_commands[] = {
    CMD("xgroup", xgroup_container, -2, .acl = "slow", .subcmds = xgroup_subcommands,
        .summary = "A container for consumer groups commands", .since = "5.0.0",
        .complexity = "Depends on subcommand."),
    CMD("xack", cmd_xack, -4, .flags = CMD_WRITE | CMD_FAST, .acl = "write stream fast", CMD_KEYS(1, 1, 1),
        .summary = "Marks a pending message as correctly processed, effectively removing it from the pending "
                   "entries list of the consumer group. Return value of the command is the number of messages "
                   "successfully acknowledged, that is, the IDs we were actually able to resolve in the PEL.",
        .since = "5.0.0", .complexity = "O(1) for each message ID processed."),
    CMD("xpending", cmd_xpending, -3, .flags = CMD_READONLY, .acl = "read stream slow", CMD_KEYS(1, 1, 1),
        .summary = "Return information and entries from a stream consumer group pending entries list, that are "
                   "messages fetched but never acknowledged.",
        .since = "5.0.0",
        .complexity = "O(N) with N being the number of elements returned, so asking for a small fixed number of "
                      "entries per call is O(1). O(M), where M is the total number of entries scanned when used "
                      "with the IDLE filter. When the command returns just the summary and the list of consumers "
                      "is small, it runs in O(1) time; otherwise, an additional O(N) time for iterating every "
                      "consumer."),
    CMD("xclaim", cmd_xclaim, -6, .flags = CMD_WRITE | CMD_FAST, .props = PROP_NO_PROPAGATE,
        .acl = "write stream fast", CMD_KEYS(1, 1, 1),
        .summary = "Changes (or acquires) ownership of a message in a consumer group, as if the message was "
                   "delivered to the specified consumer.",
        .since = "5.0.0", .complexity = "O(log N) with N being the number of messages in the PEL of the consumer group."),
    CMD("xautoclaim", cmd_xautoclaim, -6, .flags = CMD_WRITE | CMD_FAST, .props = PROP_NO_PROPAGATE,
        .acl = "write stream fast", CMD_KEYS(1, 1, 1),
        .summary = "Changes (or acquires) ownership of messages in a consumer group, as if the messages were "
                   "delivered to the specified consumer.",
        .since = "6.2.0", .complexity = "O(1) if COUNT is small."),
    {0},
};

const command_group stream_cg_group = {"stream", stream_cg_commands};
