/* cmd_stream_read.c - XREAD and XREADGROUP: reading new entries from one
 * or more streams, with or without a consumer group, blocking until
 * entries arrive.
 *
 * Blocking follows ferry's model (blocking.h): a read that finds nothing
 * blocks on its keys and is re-run when XADD signals one of them. Before
 * blocking, `$` is replaced in the saved arguments by the stream's last ID
 * at that moment (what Redis stores per blocked key), so the re-run reads
 * what arrived after it. A re-run serves the key that became ready only,
 * as redis-server does, with COUNT or Redis's default of 1000 entries.
 *
 * XREADGROUP's effects are propagated as Redis 7.0.15 propagates them
 * (the command itself never is; checked against redis-server's stream):
 * XCLAIM ... FORCE JUSTID LASTID for each entry delivered into the PEL
 * (the LASTID moves the group, and the XCLAIM creates the consumer on the
 * replica); with NOACK, when entries were delivered, XGROUP SETID ...
 * ENTRIESREAD, preceded by XGROUP CREATECONSUMER if the read created the
 * consumer. A consumer created by a read that delivers nothing, or by a
 * history read, is not propagated, as on redis-server.
 */
#include <string.h>

#include "blocking.h"
#include "cmd_stream.h"
#include "command.h"
#include "notify.h"
#include "propagate.h"
#include "reply.h"
#include "server.h"
#include "util.h"
#include "zmalloc.h"

#define XREAD_BLOCKED_DEFAULT_COUNT 1000

typedef struct xread_args {
    int group;                  /* XREADGROUP */
    long long timeout;          /* ms, -1: no BLOCK */
    long long count;
    int noack;
    span gname, cname;
    int streams_arg, nstreams;
    sid *ids;
    sgroup **groups;
} xread_args;

static int parse_timeout_ms(client *c, span a, long long *ms) {
    if (!str_to_ll(a.p, a.len, ms)) {
        reply_error(c, "ERR timeout is not an integer or out of range");
        return 0;
    }
    if (*ms < 0) {
        reply_error(c, "ERR timeout is negative");
        return 0;
    }
    return 1;
}

static int parse_option(client *c, xread_args *a, int *i) {
    int more = c->argc - *i - 1;
    span o = c->argv[*i];
    if (span_eq_nocase(o, "block") && more) {
        if (c->flags & CF_SCRIPT) {
            reply_errorf(c, "ERR %s command is not allowed with BLOCK option from scripts", a->group ? "xreadgroup" : "xread");
            return 0;
        }
        return parse_timeout_ms(c, c->argv[++*i], &a->timeout);
    }
    if (span_eq_nocase(o, "count") && more) {
        span v = c->argv[++*i];
        if (!str_to_ll(v.p, v.len, &a->count)) {
            reply_err_notint(c);
            return 0;
        }
        if (a->count < 0) a->count = 0;
        return 1;
    }
    if (span_eq_nocase(o, "group") && more >= 2) {
        if (!a->group) {
            reply_error(c, "ERR The GROUP option is only supported by XREADGROUP. You called XREAD instead.");
            return 0;
        }
        a->gname = c->argv[*i + 1];
        a->cname = c->argv[*i + 2];
        *i += 2;
        return 1;
    }
    if (span_eq_nocase(o, "noack")) {
        if (!a->group) {
            reply_error(c, "ERR The NOACK option is only supported by XREADGROUP. You called XREAD instead.");
            return 0;
        }
        a->noack = 1;
        return 1;
    }
    reply_err_syntax(c);
    return 0;
}

static int parse_options(client *c, xread_args *a) {
    for (int i = 1; i < c->argc; i++) {
        int more = c->argc - i - 1;
        if (span_eq_nocase(c->argv[i], "streams") && more) {
            a->streams_arg = i + 1;
            int n = c->argc - a->streams_arg;
            if (n % 2) {
                reply_error(c, "ERR Unbalanced XREAD list of streams: for each stream key an ID or '$' must be "
                               "specified.");
                return 0;
            }
            a->nstreams = n / 2;
            break;
        }
        if (!parse_option(c, a, &i)) return 0;
    }
    if (!a->streams_arg) {
        reply_err_syntax(c);
        return 0;
    }
    if (a->group && !a->gname.p) {
        reply_error(c, "ERR Missing GROUP option for XREADGROUP");
        return 0;
    }
    return 1;
}

/* Resolves stream i's ID argument (and group); 0 after an error reply. */
static int resolve_stream(client *c, xread_args *a, int i) {
    span key = c->argv[a->streams_arg + i], arg = c->argv[a->streams_arg + a->nstreams + i];
    stream *s;
    if (stream_lookup(c, key, 0, &s) < 0) return 0;
    if (a->group) {
        if (!s || !(a->groups[i] = stream_group_find(s, a->gname.p, a->gname.len))) {
            reply_errorf(c, "NOGROUP No such key '%.*s' or consumer group '%.*s' in XREADGROUP with GROUP option",
                         (int)key.len, key.p, (int)a->gname.len, a->gname.p);
            return 0;
        }
    }
    if (arg.len == 1 && arg.p[0] == '$') {
        if (a->group) {
            reply_error(c, "ERR The $ ID is meaningless in the context of XREADGROUP: you want to read the history "
                           "of this consumer by specifying a proper ID, or use the > ID to get new messages. The $ "
                           "ID would just return an empty result set.");
            return 0;
        }
        a->ids[i] = s ? s->last_id : SID_MIN;
        return 1;
    }
    if (arg.len == 1 && arg.p[0] == '>') {
        if (!a->group) {
            reply_error(c, "ERR The > ID can be specified only when calling XREADGROUP using the GROUP <group> "
                           "<consumer> option.");
            return 0;
        }
        a->ids[i] = SID_MAX;
        return 1;
    }
    return stream_parse_id_strict(c, arg, 1, &a->ids[i], NULL);
}

/* ---- serving -------------------------------------------------------------------- */

static void prop_cmd(client *c, int argc, const span *argv) { prop_add(c->db->id, argc, argv); }

void stream_propagate_xclaim(client *c, span key, const sgroup *g, span gname, sid id, const snack *n) {
    if (!prop_active()) return;
    char idb[48], tb[24], cb[24], lb[48];
    span argv[14] = {{"XCLAIM", 6}, key, gname, {n->consumer->name, n->consumer->nlen}, {"0", 1},
                     {idb, sid_fmt(id, idb)}, {"TIME", 4}, {tb, ll_to_str(tb, n->delivery_time)},
                     {"RETRYCOUNT", 10}, {cb, ull_to_str(cb, n->delivery_count)}, {"FORCE", 5},
                     {"JUSTID", 6}, {"LASTID", 6}, {lb, sid_fmt(g->last_id, lb)}};
    prop_cmd(c, 14, argv);
}

void stream_propagate_group_id(client *c, span key, const sgroup *g, span gname) {
    if (!prop_active()) return;
    char idb[48], eb[24];
    span argv[7] = {{"XGROUP", 6}, {"SETID", 5}, key, gname, {idb, sid_fmt(g->last_id, idb)},
                    {"ENTRIESREAD", 11}, {eb, ll_to_str(eb, g->entries_read)}};
    prop_cmd(c, 7, argv);
}

/* The group's logical read counter after delivering id (Redis 7.0). */
static void advance_group(const stream *s, sgroup *g, sid id) {
    if (g->entries_read != SCG_INVALID_ENTRIES_READ && !stream_range_has_tombstones(s, &id, NULL))
        g->entries_read++;
    else if (s->entries_added)
        g->entries_read = stream_estimate_distance(s, id);
    g->last_id = id;
}

/* Records the delivery of id to consumer cons (a new or reassigned PEL entry). */
static snack *deliver(sgroup *g, sconsumer *cons, sid id) {
    snack *n = stream_pel_add(g, cons, id, srv.now_ms);
    if (n) return n;
    n = sidmap_get(&g->pel, id);
    stream_pel_move(g, n, id, cons);
    n->delivery_time = srv.now_ms;
    n->delivery_count = 1;
    return n;
}

typedef struct group_read {
    span key, gname, cname;
    sgroup *g;
    sconsumer *cons;
    int noack;
    int created;                      /* the read created the consumer */
} group_read;

/* New entries after start for a group (XREADGROUP >): replies them and
 * moves the group, the PEL and the propagation along. */
static long reply_group_new(client *c, stream *s, sid start, long count, const group_read *r) {
    stream_iter it;
    sentry e;
    long n = 0;
    stream_iter_init(&it, s, start, SID_MAX, 0);
    while ((!count || n < count) && stream_iter_next(&it, &e)) n++;
    stream_iter_end(&it);
    reply_array(c, n);
    int moved = 0;
    stream_iter_init(&it, s, start, SID_MAX, 0);
    for (long i = 0; i < n && stream_iter_next(&it, &e); i++) {
        if (sid_cmp(e.id, r->g->last_id) > 0) {
            advance_group(s, r->g, e.id);
            moved = 1;
        }
        stream_reply_entry(c, &e);
        if (!r->noack) stream_propagate_xclaim(c, r->key, r->g, r->gname, e.id, deliver(r->g, r->cons, e.id));
    }
    stream_iter_end(&it);
    if (moved && r->noack) {
        if (r->created) {
            span argv[5] = {{"XGROUP", 6}, {"CREATECONSUMER", 14}, r->key, r->gname, r->cname};
            prop_cmd(c, 5, argv);
        }
        stream_propagate_group_id(c, r->key, r->g, r->gname);
    }
    return n;
}

/* The consumer's own pending entries from start (XREADGROUP with an ID). */
static long reply_group_history(client *c, const stream *s, sid start, long count, sconsumer *cons) {
    long n = 0;
    for (sidmap_node *x = sidmap_seek(&cons->pel, start); x && (!count || n < count); x = sidmap_next(x)) n++;
    reply_array(c, n);
    sidmap_node *x = sidmap_seek(&cons->pel, start);
    for (long i = 0; i < n; i++, x = sidmap_next(x)) {
        sid id = sidmap_id(x);
        stream_iter it;
        sentry e;
        stream_iter_init(&it, s, id, id, 0);
        if (stream_iter_next(&it, &e)) {
            stream_reply_entry(c, &e);
            snack *k = sidmap_val(x);
            k->delivery_time = srv.now_ms;
            k->delivery_count++;
        } else {
            reply_array(c, 2);
            stream_reply_id(c, id);
            reply_null_array(c);
        }
        stream_iter_end(&it);
    }
    return n;
}

static sconsumer *consumer_for(client *c, sgroup *g, span key, span cname, int *created) {
    sconsumer *cons = stream_consumer_find(g, cname.p, cname.len);
    *created = !cons;
    if (!cons) {
        cons = stream_consumer_create(g, cname.p, cname.len, srv.now_ms);
        srv.dirty++;
        notify_keyspace_event(NOTIFY_STREAM, "xgroup-createconsumer", c->db->id, key.p, key.len);
    }
    cons->seen_time = srv.now_ms;
    return cons;
}

/* Which streams can be served now (and from which ID, in gt[i]). */
static int pick_served(client *c, xread_args *a, int *serve, int *history) {
    int any = 0;
    for (int i = 0; i < a->nstreams; i++) {
        stream *s;
        serve[i] = history[i] = 0;
        stream_lookup(c, c->argv[a->streams_arg + i], 0, &s);
        if (!s) continue;
        sid top;
        if (a->group) {
            if (sid_cmp(a->ids[i], SID_MAX) != 0) serve[i] = history[i] = 1;
            else if (s->length && stream_last_live_id(s, &top) && sid_cmp(top, a->groups[i]->last_id) > 0) {
                serve[i] = 1;
                a->ids[i] = a->groups[i]->last_id;
            }
        } else if (s->length && stream_last_live_id(s, &top) && sid_cmp(top, a->ids[i]) > 0) {
            serve[i] = 1;
        }
        any += serve[i];
    }
    return any;
}

static void serve_one(client *c, xread_args *a, int i, int history, long count) {
    span key = c->argv[a->streams_arg + i];
    stream *s;
    stream_lookup(c, key, 0, &s);
    sid start = a->ids[i];
    sid_incr(&start);
    if (c->resp == 2) reply_array(c, 2);
    reply_bulk(c, key.p, key.len);
    if (!a->group) {
        stream_reply_range(c, s, start, SID_MAX, count, 0);
        return;
    }
    int created;
    sconsumer *cons = consumer_for(c, a->groups[i], key, a->cname, &created);
    if (history) reply_group_history(c, s, start, count, cons);
    else reply_group_new(c, s, start, count, &(group_read){key, a->gname, a->cname, a->groups[i], cons, a->noack, created});
    srv.dirty++;
}

/* Synchronous serving; 1 if it replied. */
static int serve_now(client *c, xread_args *a) {
    int *serve = zmalloc(2 * (size_t)a->nstreams * sizeof *serve), *history = serve + a->nstreams;
    int n = pick_served(c, a, serve, history); /* a consumer is created (and seen) only where served */
    if (n) {
        if (c->resp == 2) reply_array(c, n);
        else reply_map(c, n);
        for (int i = 0; i < a->nstreams; i++)
            if (serve[i]) serve_one(c, a, i, history[i], (long)a->count);
    }
    zfree(serve);
    return n > 0;
}

/* ---- blocking ----------------------------------------------------------------------- */

/* Blocks with `$` arguments replaced by the IDs they resolved to. */
static void block_reader(client *c, xread_args *a) {
    int64_t deadline = a->timeout > 0 ? srv.now_ms + a->timeout : 0;
    span *saved = zmalloc((size_t)a->nstreams * sizeof *saved);
    char(*bufs)[48] = zmalloc((size_t)a->nstreams * sizeof *bufs);
    for (int i = 0; i < a->nstreams; i++) {
        span *arg = &c->argv[a->streams_arg + a->nstreams + i];
        saved[i] = *arg;
        if (arg->len == 1 && arg->p[0] == '$') *arg = (span){bufs[i], sid_fmt(a->ids[i], bufs[i])};
    }
    block_for_keys(c, c->argv + a->streams_arg, a->nstreams, deadline, BLOCK_NULL_ARRAY);
    for (int i = 0; i < a->nstreams; i++) c->argv[a->streams_arg + a->nstreams + i] = saved[i];
    zfree(saved);
    zfree(bufs);
}

/* A re-run for the key that became ready: serves it alone, or blocks on. */
static void serve_ready(client *c, xread_args *a, span ready) {
    int i = 0;
    while (i < a->nstreams && !(c->argv[a->streams_arg + i].len == ready.len && !memcmp(c->argv[a->streams_arg + i].p, ready.p, ready.len))) i++;
    if (i == a->nstreams) i = 0;
    stream *s = NULL;
    dnode *n = db_lookup_read(c->db, ready.p, ready.len);
    if (n && n->type == OBJ_STREAM) s = dn_ptr(n);
    if (a->group && !s) {
        reply_error(c, "UNBLOCKED the stream key no longer exists");
        return;
    }
    sgroup *g = NULL;
    if (a->group && !(g = stream_group_find(s, a->gname.p, a->gname.len))) {
        reply_error(c, "NOGROUP the consumer group this client was blocked on no longer exists");
        return;
    }
    if (g) a->ids[i] = g->last_id, a->groups[i] = g;
    if (!s || sid_cmp(s->last_id, a->ids[i]) <= 0) {
        block_for_keys(c, c->argv + a->streams_arg, a->nstreams, 0, BLOCK_NULL_ARRAY);
        return;
    }
    if (c->resp == 2) reply_array(c, 1);
    else reply_map(c, 1);
    serve_one(c, a, i, 0, a->count ? (long)a->count : XREAD_BLOCKED_DEFAULT_COUNT);
}

static void xread_generic(client *c, int group) {
    xread_args a = {.group = group, .timeout = -1};
    if (!parse_options(c, &a)) return;
    a.ids = zmalloc((size_t)a.nstreams * sizeof *a.ids);
    a.groups = zcalloc((size_t)a.nstreams * sizeof *a.groups);
    span ready;
    int serving = blocking_serving_key(c, &ready);
    int i = 0;
    while (i < a.nstreams && (serving || resolve_stream(c, &a, i))) {
        if (serving) { /* a re-run: only the ready key is looked at (serve_ready) */
            span arg = c->argv[a.streams_arg + a.nstreams + i];
            if (!(arg.len == 1 && arg.p[0] == '>')) stream_parse_id_quiet(arg, 0, 0, &a.ids[i]);
        }
        i++;
    }
    if (i < a.nstreams) goto done;
    if (serving) serve_ready(c, &a, ready);
    else if (serve_now(c, &a)) (void)0;
    else if (a.timeout != -1 && blocking_allowed(c)) block_reader(c, &a);
    else reply_null_array(c);
done:
    zfree(a.ids);
    zfree(a.groups);
}

static void cmd_xread(client *c) { xread_generic(c, 0); }
static void cmd_xreadgroup(client *c) { xread_generic(c, 1); }

static command stream_read_commands[] = {
    CMD("xread", cmd_xread, -4, .flags = CMD_READONLY | CMD_BLOCKING | CMD_MOVABLE_KEYS,
        .acl = "read stream slow blocking", CMD_KEYS(0, 0, 0),
        .summary = "Return never seen elements in multiple streams, with IDs greater than the ones reported by the "
                   "caller for each stream. Can block.",
        .since = "5.0.0",
        .complexity = "For each stream mentioned: O(N) with N being the number of elements being returned, it means "
                      "that XREAD-ing with a fixed COUNT is O(1). Note that when the BLOCK option is used, XADD will "
                      "pay O(M) time in order to serve the M clients blocked on the stream getting new data."),
    CMD("xreadgroup", cmd_xreadgroup, -7, .flags = CMD_WRITE | CMD_BLOCKING | CMD_MOVABLE_KEYS,
        .props = PROP_NO_PROPAGATE | PROP_WAKE_ON_DELETE, .acl = "write stream slow blocking", CMD_KEYS(0, 0, 0),
        .summary = "Return new entries from a stream using a consumer group, or access the history of the pending "
                   "entries for a given consumer. Can block.",
        .since = "5.0.0",
        .complexity = "For each stream mentioned: O(M) with M being the number of elements returned. If M is "
                      "constant (e.g. always asking for the first 10 elements with COUNT), you can consider it "
                      "O(1). On the other side when XREADGROUP blocks, XADD will pay the O(N) time in order to "
                      "serve the N clients blocked on the stream getting new data."),
    {0},
};

const command_group stream_read_group = {"stream", stream_read_commands};
