/* cmd_stream.c - the stream commands that work on entries: XADD, XRANGE,
 * XREVRANGE, XLEN, XDEL, XTRIM, XSETID, the helpers the other stream
 * command files share (cmd_stream.h), and the `stream_group` table. The
 * reading commands (XREAD, XREADGROUP) are in cmd_stream_read.c, consumer
 * groups in cmd_stream_cg.c, XINFO in cmd_stream_info.c.
 *
 * Replies and error texts are Redis 7.0's byte for byte. What is
 * propagated (AOF) is the effect: XADD with the ID it generated, and
 * approximate trimming (`~`) as the exact trim it turned out to be
 * (`MAXLEN = <length>` / `MINID = <first id>`), as redis-server rewrites
 * them.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
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

/* ---- shared helpers (cmd_stream.h) ---------------------------------------- */

int stream_lookup(client *c, span key, int write, stream **s) {
    dnode *n = write ? db_lookup_write(c->db, key.p, key.len) : db_lookup_read(c->db, key.p, key.len);
    *s = NULL;
    if (!n) return 0;
    if (n->type != OBJ_STREAM) {
        reply_err_wrongtype(c);
        return -1;
    }
    *s = dn_ptr(n);
    return 0;
}

/* string2ull: string2ll when it applies (negative values refused), else
 * strtoull over the whole C string. */
static int parse_ull(const char *p, unsigned long long *v) {
    long long ll;
    size_t len = strlen(p);
    if (str_to_ll(p, len, &ll)) {
        if (ll < 0) return 0;
        *v = (unsigned long long)ll;
        return 1;
    }
    if (!*p) return 0;
    char *end;
    errno = 0;
    *v = strtoull(p, &end, 10);
    return errno != EINVAL && errno != ERANGE && *end == '\0';
}

/* Redis's streamGenericParseIDOrReply over the argument as a C string. */
static int parse_id(span arg, uint64_t missing_seq, int strict, sid *id, int *seq_given) {
    char buf[128];
    if (arg.len > sizeof buf - 1) return 0;
    memcpy(buf, arg.p, arg.len);
    buf[arg.len] = '\0';
    if (strict && (buf[0] == '-' || buf[0] == '+') && buf[1] == '\0') return 0;
    if (seq_given) *seq_given = 1;
    if (buf[0] == '-' && buf[1] == '\0') {
        *id = SID_MIN;
        return 1;
    }
    if (buf[0] == '+' && buf[1] == '\0') {
        *id = SID_MAX;
        return 1;
    }
    unsigned long long ms, seq;
    char *dash = strchr(buf, '-');
    if (dash) *dash = '\0';
    if (!parse_ull(buf, &ms)) return 0;
    if (dash && seq_given && dash[1] == '*' && dash[2] == '\0') {
        seq = 0;
        *seq_given = 0;
    } else if (dash) {
        if (!parse_ull(dash + 1, &seq)) return 0;
    } else {
        seq = missing_seq;
    }
    id->ms = ms;
    id->seq = seq;
    return 1;
}

static const char *const ERR_INVALID_ID = "ERR Invalid stream ID specified as stream command argument";

int stream_parse_id_quiet(span arg, uint64_t missing_seq, int allow_special, sid *id) {
    return parse_id(arg, missing_seq, !allow_special, id, NULL);
}

int stream_parse_id(client *c, span arg, uint64_t missing_seq, int allow_special, sid *id) {
    if (parse_id(arg, missing_seq, !allow_special, id, NULL)) return 1;
    reply_error(c, ERR_INVALID_ID);
    return 0;
}

int stream_parse_id_strict(client *c, span arg, int strict, sid *id, int *seq_given) {
    if (parse_id(arg, 0, strict, id, seq_given)) return 1;
    reply_error(c, ERR_INVALID_ID);
    return 0;
}

void stream_reply_id(client *c, sid id) {
    char buf[48];
    reply_bulk(c, buf, sid_fmt(id, buf));
}

void stream_reply_entry(client *c, const sentry *e) {
    reply_array(c, 2);
    stream_reply_id(c, e->id);
    reply_array(c, (long)(2 * e->nf));
    for (size_t i = 0; i < 2 * e->nf; i++) reply_bulk(c, e->fv[i].p, e->fv[i].len);
}

long stream_reply_range(client *c, const stream *s, sid start, sid end, long count, int rev) {
    stream_iter it;
    sentry e;
    long n = 0;
    stream_iter_init(&it, s, start, end, rev);
    while ((!count || n < count) && stream_iter_next(&it, &e)) n++;
    stream_iter_end(&it);
    reply_array(c, n);
    stream_iter_init(&it, s, start, end, rev);
    for (long i = 0; i < n && stream_iter_next(&it, &e); i++) stream_reply_entry(c, &e);
    stream_iter_end(&it);
    return n;
}

void stream_limits_get(stream_limits *lim) {
    lim->max_bytes = (size_t)srv.cfg.stream_node_max_bytes;
    lim->max_entries = srv.cfg.stream_node_max_entries;
}

void stream_written(client *c, span key, long long dirty) {
    touch_watched_key(c->db, key.p, key.len);
    srv.dirty += dirty;
}

/* ---- XADD / XTRIM arguments -------------------------------------------------- */

typedef struct add_args {
    stream_trim_args trim;
    int trim_idx;               /* argv index of the threshold (0: none) */
    int nomkstream;
    int id_given, seq_given;
    sid id;
} add_args;

static int parse_ll_reply(client *c, span a, long long *v) {
    if (str_to_ll(a.p, a.len, v)) return 1;
    reply_err_notint(c);
    return 0;
}

/* After MAXLEN/MINID at argv[*i]: an optional = or ~. */
static void trim_modifier(client *c, int *i, int moreargs, add_args *a) {
    span next = c->argv[*i + 1];
    a->trim.approx = 0;
    if (moreargs >= 2 && next.len == 1 && (next.p[0] == '~' || next.p[0] == '=')) {
        a->trim.approx = next.p[0] == '~';
        (*i)++;
    }
}

static int trim_option(client *c, int *i, int moreargs, add_args *a, int strategy) {
    if (a->trim.strategy != STRIM_NONE) {
        reply_error(c, "ERR syntax error, MAXLEN and MINID options at the same time are not compatible");
        return 0;
    }
    trim_modifier(c, i, moreargs, a);
    span v = c->argv[*i + 1];
    if (strategy == STRIM_MAXLEN) {
        if (!parse_ll_reply(c, v, &a->trim.maxlen)) return 0;
        if (a->trim.maxlen < 0) {
            reply_error(c, "ERR The MAXLEN argument must be >= 0.");
            return 0;
        }
    } else if (!stream_parse_id_strict(c, v, 1, &a->trim.minid, NULL)) {
        return 0;
    }
    (*i)++;
    a->trim.strategy = strategy;
    a->trim_idx = *i;
    return 1;
}

/* The limit a trim gets when none is given (Redis's default for `~`). */
static long long default_limit(int approx) {
    if (!approx) return 0;
    long long l = 100 * srv.cfg.stream_node_max_entries;
    if (l <= 0) l = 10000;
    if (l > 1000000) l = 1000000;
    return l;
}

/* Redis's streamParseAddOrTrimArgsOrReply: returns the index of the ID
 * (XADD) or of the end of the options, -1 after replying an error. */
static int parse_add_or_trim(client *c, add_args *a, int xadd) {
    memset(a, 0, sizeof *a);
    int limit_given = 0, i = 2;
    for (; i < c->argc; i++) {
        int moreargs = c->argc - 1 - i;
        span o = c->argv[i];
        if (xadd && o.len == 1 && o.p[0] == '*') break;
        if (span_eq_nocase(o, "maxlen") && moreargs) {
            if (!trim_option(c, &i, moreargs, a, STRIM_MAXLEN)) return -1;
        } else if (span_eq_nocase(o, "minid") && moreargs) {
            if (!trim_option(c, &i, moreargs, a, STRIM_MINID)) return -1;
        } else if (span_eq_nocase(o, "limit") && moreargs) {
            if (!parse_ll_reply(c, c->argv[i + 1], &a->trim.limit)) return -1;
            if (a->trim.limit < 0) {
                reply_error(c, "ERR The LIMIT argument must be >= 0.");
                return -1;
            }
            limit_given = 1;
            i++;
        } else if (xadd && span_eq_nocase(o, "nomkstream")) {
            a->nomkstream = 1;
        } else if (xadd) {
            if (!stream_parse_id_strict(c, o, 1, &a->id, &a->seq_given)) return -1;
            a->id_given = 1;
            break;
        } else {
            reply_err_syntax(c);
            return -1;
        }
    }
    if (a->trim.limit && a->trim.strategy == STRIM_NONE) {
        reply_error(c, "ERR syntax error, LIMIT cannot be used without specifying a trimming strategy");
        return -1;
    }
    if (!xadd && a->trim.strategy == STRIM_NONE) {
        reply_error(c, "ERR syntax error, XTRIM must be called with a trimming strategy");
        return -1;
    }
    if (c->flags & CF_OBEY) { /* a replayed effect trims exactly what it says */
        a->trim.limit = 0;
        return i;
    }
    if (limit_given && !a->trim.approx) {
        reply_error(c, "ERR syntax error, LIMIT cannot be used without the special ~ option");
        return -1;
    }
    if (!limit_given) a->trim.limit = default_limit(a->trim.approx);
    return i;
}

/* Propagates the call with `~` turned into `=` and the threshold into
 * what the stream now holds, and the ID (idpos > 0) made explicit. */
static void propagate_effect(client *c, const stream *s, const add_args *a, int idpos, sid id) {
    if (!prop_active()) return;
    span *argv = zmalloc((size_t)c->argc * sizeof *argv);
    memcpy(argv, c->argv, (size_t)c->argc * sizeof *argv);
    char idbuf[48], thbuf[48];
    if (idpos > 0) argv[idpos] = (span){idbuf, sid_fmt(id, idbuf)};
    if (a->trim.approx && a->trim_idx) {
        argv[a->trim_idx - 1] = (span){"=", 1};
        if (a->trim.strategy == STRIM_MAXLEN) argv[a->trim_idx] = (span){thbuf, ull_to_str(thbuf, s->length)};
        else argv[a->trim_idx] = (span){thbuf, sid_fmt(s->first_id, thbuf)};
    }
    prop_rewrite(c, c->argc, argv);
    zfree(argv);
}

/* ---- XADD --------------------------------------------------------------------- */

/* The ID the entry gets (Redis's streamAppendItem rules); 0 if none fits. */
static int next_add_id(const stream *s, const add_args *a, sid *id) {
    if (a->id_given && a->seq_given) {
        *id = a->id;
    } else if (a->id_given) {
        if (s->last_id.ms == a->id.ms) {
            if (s->last_id.seq == UINT64_MAX) return 0;
            *id = s->last_id;
            id->seq++;
        } else {
            *id = (sid){a->id.ms, 0};
        }
    } else {
        uint64_t ms = (uint64_t)srv.now_ms;
        *id = ms > s->last_id.ms ? (sid){ms, 0} : s->last_id;
        if (ms <= s->last_id.ms && !sid_incr(id)) return 0;
    }
    return sid_cmp(*id, s->last_id) > 0;
}

static stream *lookup_or_create(client *c, span key, int nomk, int *created) {
    stream *s;
    *created = 0;
    if (stream_lookup(c, key, 1, &s) < 0) return NULL;
    if (s) return s;
    if (nomk) {
        reply_null(c);
        return NULL;
    }
    s = stream_new();
    db_add_ptr(c->db, key.p, key.len, OBJ_STREAM, ENC_STREAM, s, -1);
    *created = 1;
    return s;
}

static void cmd_xadd(client *c) {
    add_args a;
    int idpos = parse_add_or_trim(c, &a, 1);
    if (idpos < 0) return;
    int fpos = idpos + 1, nfv = c->argc - fpos;
    if (nfv < 2 || nfv % 2) {
        reply_err_arity(c);
        return;
    }
    if (a.id_given && a.seq_given && sid_is_zero(a.id)) {
        reply_error(c, "ERR The ID specified in XADD must be greater than 0-0");
        return;
    }
    span key = c->argv[1];
    int created;
    stream *s = lookup_or_create(c, key, a.nomkstream, &created);
    if (!s) return;
    if (s->last_id.ms == UINT64_MAX && s->last_id.seq == UINT64_MAX) {
        reply_error(c, "ERR The stream has exhausted the last possible ID, unable to add more items");
        return;
    }
    sid id;
    if (!next_add_id(s, &a, &id)) {
        if (created) db_delete(c->db, key.p, key.len);
        reply_error(c, "ERR The ID specified in XADD is equal or smaller than the target stream top item");
        return;
    }
    stream_limits lim;
    stream_limits_get(&lim);
    stream_append(s, id, c->argv + fpos, (size_t)nfv / 2, &lim);
    stream_reply_id(c, id);
    stream_written(c, key, 1);
    notify_keyspace_event(NOTIFY_STREAM, "xadd", c->db->id, key.p, key.len);
    if (a.trim.strategy != STRIM_NONE && stream_trim(s, &a.trim))
        notify_keyspace_event(NOTIFY_STREAM, "xtrim", c->db->id, key.p, key.len);
    if (!a.id_given || !a.seq_given || a.trim.approx) propagate_effect(c, s, &a, a.id_given && a.seq_given ? 0 : idpos, id);
    signal_key_ready(c->db, key.p, key.len);
}

/* ---- XTRIM -------------------------------------------------------------------- */

static void cmd_xtrim(client *c) {
    stream *s;
    span key = c->argv[1];
    add_args a;
    if (parse_add_or_trim(c, &a, 0) < 0) return;
    if (stream_lookup(c, key, 1, &s) < 0) return;
    if (!s) {
        reply_int(c, 0);
        return;
    }
    long long deleted = stream_trim(s, &a.trim);
    if (deleted) {
        notify_keyspace_event(NOTIFY_STREAM, "xtrim", c->db->id, key.p, key.len);
        if (a.trim.approx) propagate_effect(c, s, &a, 0, SID_MIN);
        stream_written(c, key, deleted);
    }
    reply_int(c, deleted);
}

/* ---- XRANGE / XREVRANGE -------------------------------------------------------- */

int stream_parse_bound(client *c, span arg, uint64_t missing_seq, sid *id, int start) {
    int ex = arg.len > 1 && arg.p[0] == '(';
    if (!ex) return stream_parse_id(c, arg, missing_seq, 1, id);
    if (!parse_id((span){arg.p + 1, arg.len - 1}, missing_seq, 1, id, NULL)) {
        reply_error(c, ERR_INVALID_ID);
        return 0;
    }
    if (!(start ? sid_incr(id) : sid_decr(id))) {
        reply_error(c, start ? "ERR invalid start ID for the interval" : "ERR invalid end ID for the interval");
        return 0;
    }
    return 1;
}

static void xrange_generic(client *c, int rev) {
    span sa = rev ? c->argv[3] : c->argv[2], ea = rev ? c->argv[2] : c->argv[3];
    sid start, end;
    long long count = -1;
    if (!stream_parse_bound(c, sa, 0, &start, 1) || !stream_parse_bound(c, ea, UINT64_MAX, &end, 0)) return;
    for (int j = 4; j < c->argc; j++) {
        if (span_eq_nocase(c->argv[j], "count") && j + 1 < c->argc) {
            if (!parse_ll_reply(c, c->argv[++j], &count)) return;
            if (count < 0) count = 0;
        } else {
            reply_err_syntax(c);
            return;
        }
    }
    stream *s;
    if (stream_lookup(c, c->argv[1], 0, &s) < 0) return;
    if (!s) reply_array(c, 0);
    else if (count == 0) reply_null_array(c);
    else stream_reply_range(c, s, start, end, count == -1 ? 0 : (long)count, rev);
}

static void cmd_xrange(client *c) { xrange_generic(c, 0); }
static void cmd_xrevrange(client *c) { xrange_generic(c, 1); }

/* ---- XLEN, XDEL, XSETID ---------------------------------------------------------- */

static void cmd_xlen(client *c) {
    stream *s;
    if (stream_lookup(c, c->argv[1], 0, &s) < 0) return;
    reply_int(c, s ? (long long)s->length : 0);
}

static void cmd_xdel(client *c) {
    stream *s;
    span key = c->argv[1];
    if (stream_lookup(c, key, 1, &s) < 0) return;
    if (!s) {
        reply_int(c, 0);
        return;
    }
    int n = c->argc - 2;
    sid *ids = zmalloc((size_t)n * sizeof *ids);
    for (int j = 0; j < n; j++) {
        if (!stream_parse_id_strict(c, c->argv[j + 2], 1, &ids[j], NULL)) {
            zfree(ids);
            return;
        }
    }
    long long deleted = 0;
    for (int j = 0; j < n; j++) deleted += stream_delete(s, ids[j]);
    zfree(ids);
    if (deleted) {
        stream_written(c, key, deleted);
        notify_keyspace_event(NOTIFY_STREAM, "xdel", c->db->id, key.p, key.len);
    }
    reply_int(c, deleted);
}

typedef struct setid_args {
    sid id, max_xdel;
    long long entries_added;
} setid_args;

static int parse_setid(client *c, setid_args *a) {
    a->max_xdel = SID_MIN;
    a->entries_added = -1;
    if (!stream_parse_id_strict(c, c->argv[2], 1, &a->id, NULL)) return 0;
    for (int i = 3; i < c->argc; i += 2) {
        int more = c->argc - 1 - i;
        if (span_eq_nocase(c->argv[i], "entriesadded") && more) {
            if (!parse_ll_reply(c, c->argv[i + 1], &a->entries_added)) return 0;
            if (a->entries_added < 0) {
                reply_error(c, "ERR entries_added must be positive");
                return 0;
            }
        } else if (span_eq_nocase(c->argv[i], "maxdeletedid") && more) {
            if (!stream_parse_id_strict(c, c->argv[i + 1], 1, &a->max_xdel, NULL)) return 0;
            if (sid_cmp(a->id, a->max_xdel) < 0) {
                reply_error(c, "ERR The ID specified in XSETID is smaller than the provided max_deleted_entry_id");
                return 0;
            }
        } else {
            reply_err_syntax(c);
            return 0;
        }
    }
    return 1;
}

static int setid_allowed(client *c, const stream *s, const setid_args *a) {
    sid top;
    if (s->length && stream_last_live_id(s, &top)) {
        if (sid_cmp(a->id, top) < 0) {
            reply_error(c, "ERR The ID specified in XSETID is smaller than the target stream top item");
            return 0;
        }
        if (a->entries_added != -1 && s->length > (uint64_t)a->entries_added) {
            reply_error(c, "ERR The entries_added specified in XSETID is smaller than the target stream length");
            return 0;
        }
    }
    return 1;
}

static void cmd_xsetid(client *c) {
    setid_args a;
    if (!parse_setid(c, &a)) return;
    stream *s;
    span key = c->argv[1];
    if (stream_lookup(c, key, 1, &s) < 0) return;
    if (!s) {
        reply_error(c, "ERR no such key");
        return;
    }
    if (!setid_allowed(c, s, &a)) return;
    s->last_id = a.id;
    if (a.entries_added != -1) s->entries_added = (uint64_t)a.entries_added;
    if (!sid_is_zero(a.max_xdel)) s->max_deleted_id = a.max_xdel;
    stream_written(c, key, 1);
    notify_keyspace_event(NOTIFY_STREAM, "xsetid", c->db->id, key.p, key.len);
    reply_ok(c);
}

/* ---- the table --------------------------------------------------------------------- */

#define STREAM_DOC(s, v, x) .summary = (s), .since = (v), .complexity = (x)

static command stream_commands[] = {
    CMD("xadd", cmd_xadd, -5, .flags = CMD_WRITE | CMD_DENYOOM | CMD_FAST, .acl = "write stream fast",
        CMD_KEYS(1, 1, 1),
        STREAM_DOC("Appends a new entry to a stream", "5.0.0",
                   "O(1) when adding a new entry, O(N) when trimming where N being the number of entries evicted.")),
    CMD("xrange", cmd_xrange, -4, .flags = CMD_READONLY, .acl = "read stream slow", CMD_KEYS(1, 1, 1),
        STREAM_DOC("Return a range of elements in a stream, with IDs matching the specified IDs interval", "5.0.0",
                   "O(N) with N being the number of elements being returned. If N is constant (e.g. always asking "
                   "for the first 10 elements with COUNT), you can consider it O(1).")),
    CMD("xrevrange", cmd_xrevrange, -4, .flags = CMD_READONLY, .acl = "read stream slow", CMD_KEYS(1, 1, 1),
        STREAM_DOC("Return a range of elements in a stream, with IDs matching the specified IDs interval, in reverse "
                   "order (from greater to smaller IDs) compared to XRANGE",
                   "5.0.0",
                   "O(N) with N being the number of elements returned. If N is constant (e.g. always asking for the "
                   "first 10 elements with COUNT), you can consider it O(1).")),
    CMD("xlen", cmd_xlen, 2, .flags = CMD_READONLY | CMD_FAST, .acl = "read stream fast", CMD_KEYS(1, 1, 1),
        STREAM_DOC("Return the number of entries in a stream", "5.0.0", "O(1)")),
    CMD("xdel", cmd_xdel, -3, .flags = CMD_WRITE | CMD_FAST, .acl = "write stream fast", CMD_KEYS(1, 1, 1),
        STREAM_DOC("Removes the specified entries from the stream. Returns the number of items actually deleted, that "
                   "may be different from the number of IDs passed in case certain IDs do not exist.",
                   "5.0.0", "O(1) for each single item to delete in the stream, regardless of the stream size.")),
    CMD("xtrim", cmd_xtrim, -4, .flags = CMD_WRITE, .acl = "write stream slow", CMD_KEYS(1, 1, 1),
        STREAM_DOC("Trims the stream to (approximately if '~' is passed) a certain size", "5.0.0",
                   "O(N), with N being the number of evicted entries. Constant times are very small however, since "
                   "entries are organized in macro nodes containing multiple entries that can be released with a "
                   "single deallocation.")),
    CMD("xsetid", cmd_xsetid, -3, .flags = CMD_WRITE | CMD_DENYOOM | CMD_FAST, .acl = "write stream fast",
        CMD_KEYS(1, 1, 1), STREAM_DOC("An internal command for replicating stream values", "5.0.0", "O(1)")),
    {0},
};

const command_group stream_group = {"stream", stream_commands};
