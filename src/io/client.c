/* client.c - client lifecycle, the read -> parse -> execute batch, and the
 * one-writev-per-iteration flush.
 *
 * Reads go into a shared 256 KB buffer while a client has no partial request
 * pending; only the unparsed tail of a read is copied into the client's own
 * query buffer. Idle clients therefore hold no input memory, and the common
 * pipelined case never copies. A big bulk argument that has not mostly
 * arrived is received into a block of its own, which SET and its kin store
 * as the key's node (aside.c). Replies are staged in the client's output
 * ring (and big values referenced beside it) and written by
 * clients_flush_pending() (outbuf.c) once per loop iteration.
 *
 * A client is never stalled because its replies are unread: clients such
 * as redis-py, go-redis and Jedis write a whole pipeline before reading any
 * reply, so a server that stopped reading until its output drained would
 * deadlock with them once both socket buffers are full. Memory is bounded
 * as Redis bounds it: client-output-buffer-limit per class (outlimit.c),
 * maxmemory-clients (client eviction) and maxmemory, which counts every
 * client buffer.
 *
 * Fairness: one pass over a client's input stops once it has staged
 * PASS_OUTPUT_BUDGET bytes of replies. The rest of its input is then
 * deferred (CF_INPUT_DEFERRED, on srv.deferred_input): its socket is not
 * read, and clients_process_deferred() runs another pass at the end of the
 * loop iteration, after every other ready client has had its turn, while
 * the loop polls without sleeping. The output is flushed between passes,
 * so a client asking for gigabytes costs the others one pass of about a
 * megabyte of copying per iteration. Replies are never dropped.
 */
#include "client.h"
#include "aside.h"
#include "blocking.h"
#include "client_evict.h"
#include "command.h"
#include "db.h"
#include "latency.h"
#include "monitor.h"
#include "multi.h"
#include "pubsub.h"
#include "outbuf.h"
#include "outlimit.h"
#include "reply.h"
#include "server.h"
#include "tls.h"
#include "tracking.h"
#include "zmalloc.h"
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/uio.h>
#include <unistd.h>

#define READ_CHUNK (16 * 1024)
#define SHARED_QBUF (256 * 1024) /* 64 KB split every 16-request pipeline of 4 KB SETs (issue 19) */
#define BIG_BULK (8 * 1024)         /* a bulk this long sizes the reads that complete it (read_room) */
#define BIG_BULK_BATCH 4            /* ... for this many such requests */
#define BIG_BULK_ALONE (1024 * 1024) /* a bulk this long gets room for what it still needs, not for a batch */
#define TAIL_CARRY READ_CHUNK      /* a partial request this small is carried into the shared buffer */
#define BLOCK_TAIL (4 * 1024)       /* bytes after a big payload its completing read takes */
#define GIANT_QBUF (4 * 1024 * 1024) /* a buffer this big is given back as soon as it is drained */
#define PASS_OUTPUT_BUDGET (1024 * 1024) /* reply bytes one pass over a client's input may stage */
#define ARGV_INITIAL 8
#define ARGV_SHRINK 1024            /* argument arrays larger than this shrink when idle */

static char shared_qbuf[SHARED_QBUF];

static void client_readable(evloop *el, int fd, void *data, int mask);

uint32_t (*client_initial_flags)(void);
const char *(*client_user_name)(const client *c);

client *client_create(int fd) {
    client *c = zcalloc(sizeof *c);
    c->id = ++srv.next_client_id;
    c->fd = fd;
    c->resp = 2;
    c->db = db_get(0);
    resp_parser_init(&c->parser, zcalloc(sizeof(resp_arg) * ARGV_INITIAL), ARGV_INITIAL);
    c->argv = zmalloc(sizeof(span) * ARGV_INITIAL);
    c->argv_cap = ARGV_INITIAL;
    ring_init(&c->out);
    c->ctime_ms = c->last_interaction_ms = c->out_peak_since_ms = srv.now_ms;
    if (client_initial_flags) c->flags |= client_initial_flags();
    else if (!srv.cfg.requirepass) c->flags |= CF_AUTHENTICATED;
    if (fd < 0) c->flags |= CF_FAKE;
    c->next = srv.clients;
    if (srv.clients) srv.clients->prev = c;
    srv.clients = c;
    srv.nclients++;
    if (fd >= 0 && ev_add(srv.el, fd, EV_READABLE, client_readable, c) == -1) {
        client_free(c);
        return NULL;
    }
    return c;
}

static void unlink_pending(client *c) {
    if (!(c->flags & CF_PENDING_WRITE)) return;
    client **pp = &srv.pending_write;
    while (*pp && *pp != c) pp = &(*pp)->next_pending;
    if (*pp) *pp = c->next_pending;
    c->flags &= ~CF_PENDING_WRITE;
}

static void unlink_read_again(client *c) {
    if (!c->on_read_again) return;
    client **pp = &srv.read_again;
    while (*pp && *pp != c) pp = &(*pp)->next_read_again;
    if (*pp) *pp = c->next_read_again;
    c->on_read_again = 0;
}

static void unlink_deferred(client *c) {
    if (!(c->flags & CF_INPUT_DEFERRED)) return;
    client **pp = &srv.deferred_input;
    while (*pp && *pp != c) pp = &(*pp)->next_deferred;
    if (*pp) *pp = c->next_deferred;
    c->flags &= ~CF_INPUT_DEFERRED;
}

void (*client_repl_freed)(client *c);
void (*client_repl_applied)(client *c, const char *p, size_t n);

void client_free(client *c) {
    if (srv.current_client == c) srv.current_client = NULL;
    if (c->repl_role && client_repl_freed) client_repl_freed(c);
    rb_detach(&c->stream);
    unblock_client(c, UNBLOCK_DISCONNECT);
    unlink_pending(c);
    unlink_deferred(c);
    unlink_read_again(c);
    if (c->flags & CF_CLOSE_ASAP) {
        client **pp = &srv.close_list;
        while (*pp && *pp != c) pp = &(*pp)->next_close;
        if (*pp) *pp = c->next_close;
    }
    if (c->fd >= 0) {
        ev_del(srv.el, c->fd, EV_READABLE | EV_WRITABLE);
        tls_conn_free(c->tls);
        close(c->fd);
    }
    multi_reset_client(c);
    pubsub_client_reset(c);
    monitor_leave(c);
    if (c->tracking) tracking_client_free(c);
    if (c->prev) c->prev->next = c->next;
    else srv.clients = c->next;
    if (c->next) c->next->prev = c->prev;
    srv.nclients--;
    zfree(c->qbuf);
    aside_free(c);
    zfree(c->parser.argv);
    zfree(c->argv);
    outbuf_release(c);
    ring_free(&c->out);
    zfree(c->name);
    zfree(c->lib_name);
    zfree(c->lib_ver);
    zfree(c);
}

void client_close_async(client *c) {
    if (c->flags & CF_CLOSE_ASAP) return;
    c->flags |= CF_CLOSE_ASAP;
    c->close_ms = srv.now_ms;
    c->next_close = srv.close_list;
    srv.close_list = c;
}

void client_set_db(client *c, int id) { c->db = db_get(id); }

int client_auth_required(const client *c) {
    if (c->flags & CF_AUTHENTICATED) return 0;
    if (client_initial_flags) return !(client_initial_flags() & CF_AUTHENTICATED);
    return srv.cfg.requirepass != NULL; /* NULL = none; a binary one may start with a NUL */
}

void client_mark_pending(client *c) {
    if (c->flags & CF_PENDING_WRITE) return;
    c->flags |= CF_PENDING_WRITE;
    c->next_pending = srv.pending_write;
    srv.pending_write = c;
}

/* The rest of c's input waits for clients_process_deferred() (see the top). */
static void defer_input(client *c) {
    if (c->flags & CF_INPUT_DEFERRED) return;
    c->flags |= CF_INPUT_DEFERRED;
    c->next_deferred = srv.deferred_input;
    srv.deferred_input = c;
}

/* The clients marked for closing; a script's caller waits for its script. */
void clients_free_closed(void) {
    client *keep = NULL;
    while (srv.close_list) {
        client *c = srv.close_list;
        srv.close_list = c->next_close;
        if (c->flags & CF_SCRIPT_CALLER) {
            c->next_close = keep;
            keep = c;
            continue;
        }
        c->flags &= ~CF_CLOSE_ASAP;
        client_free(c);
    }
    srv.close_list = keep;
}

void clients_events_while_busy(void) {
    client *current = srv.current_client;
    srv.now_ms = ev_now_ms();
    srv.el->dont_wait = 1;
    srv.el->no_timers = 1;
    ev_process(srv.el);
    srv.el->no_timers = 0;
    clients_flush_pending();
    clients_free_closed();
    srv.current_client = current;
}

/* TLS clients whose last read left bytes inside the connection, where
 * epoll cannot see them: read again, unless a deferred pass comes first. */
static void clients_read_again(void) {
    client *list = srv.read_again;
    srv.read_again = NULL;
    while (list) {
        client *c = list;
        list = c->next_read_again;
        c->on_read_again = 0;
        if (c->flags & CF_CLOSE_ASAP) continue;
        client_readable(srv.el, c->fd, c, EV_READABLE);
    }
}

void clients_process_deferred(void) {
    clients_read_again();
    client *list = srv.deferred_input;
    srv.deferred_input = NULL; /* a pass that uses its budget again defers the client anew */
    while (list) {
        client *c = list;
        list = c->next_deferred;
        c->flags &= ~CF_INPUT_DEFERRED;
        if (c->flags & (CF_CLOSE_ASAP | CF_BLOCKED)) continue;
        srv.current_client = c;
        client_process_input(c);
        srv.current_client = NULL;
    }
}

static void grow_parser_argv(client *c) {
    size_t cap = c->parser.argv_cap * 2;
    c->parser.argv = zrealloc(c->parser.argv, sizeof(resp_arg) * cap);
    c->parser.argv_cap = cap;
}

static void protocol_error(client *c) {
    char msg[256];
    snprintf(msg, sizeof msg, "ERR %s", c->parser.err ? c->parser.err : "Protocol error");
    reply_error(c, msg);
    server_log(LOG_VERBOSE_, "Protocol error (%s) from client: id=%llu addr=%s", c->parser.err,
               (unsigned long long)c->id, c->addr);
    c->flags |= CF_CLOSE_AFTER_REPLY;
}

/* ---- batched execution ------------------------------------------------------
 *
 * Pipelined key commands spend most of their time waiting for the bucket and
 * the node of a random key to come from memory. So the requests in the
 * buffer are taken in windows of up to WIN_MAX: each is parsed, its command
 * resolved and, for a batchable command (command_batchable), its key hashed
 * and the key's bucket prefetched; then the chain heads are prefetched; then
 * the window's commands execute strictly in order, each with its key's hash
 * handed to the db layer (db_set_key_hint) so it is not computed twice.
 *
 * Parsing ahead never changes what happens: multibulk parsing is a pure
 * function of the bytes and the limits (fixed for the whole call), command
 * lookup and hashing are pure functions of the bytes, and prefetches are
 * hints. The window ends
 *   - after any request that is not a batchable command (MULTI, SELECT, HELLO,
 *     CLIENT, QUIT, RESET, CONFIG ...): what follows is parsed only after it
 *     has run, exactly as one request at a time;
 *   - before an inline request (its parse unescapes the buffer in place, so
 *     it is parsed only when it is next);
 *   - at a protocol error or an incomplete request (an error is reported only
 *     when the request is reached in order);
 *   - after a request with more than WIN_ARGS arguments when the window's
 *     pool of WIN_POOL spans cannot take its arguments (they then stay in
 *     the parser's argv, which the next parse would overwrite). A request
 *     with up to WIN_ARGS arguments keeps its spans in its own entry; a
 *     longer one (SET k v EX 10, HSET k f v, ZADD k s m) in the pool.
 * Before each request the close flags and the pass's output budget are
 * checked as before; stopping early forgets the parsed-ahead requests (the
 * parser is reset and they are parsed again when execution resumes). */
#define WIN_MAX 16
#define WIN_ARGS 3 /* window_add copies exactly 3 */
#define WIN_POOL 64 /* spans for the window's requests with more than WIN_ARGS arguments */
_Static_assert(WIN_ARGS <= ARGV_INITIAL, "window_add copies WIN_ARGS parser entries");

typedef struct win_req {
    size_t end;                 /* offset just past the request in buf */
    command *cmd;               /* command_lookup of its argv (argc > 0) */
    uint64_t hash;              /* dict_hash of key, if hashed */
    span key;                   /* argv[1], or the first key of a PROP_NUMKEYS_AT_2 command */
    int argc;
    int hashed;
    span *args;                 /* all argc spans: argv, the window's pool, or NULL: still in c->parser.argv */
    span argv[WIN_ARGS];        /* the first WIN_ARGS spans (command lookup) */
} win_req;

typedef struct window {
    size_t out_stop;            /* the pass stops once the output ring holds more than this */
    int n;
    int pooled;                 /* pool entries in use */
    ssize_t stop;               /* parse result that ended the window (< 0), or 0 */
    win_req req[WIN_MAX];
    span pool[WIN_POOL];
} window;

static inline int must_stop(client *c, const window *w) {
    return (c->flags & (CF_CLOSE_AFTER_REPLY | CF_CLOSE_ASAP | CF_BLOCKED)) || client_out_used(c) > w->out_stop;
}

/* Record the request the parser just completed (buf[off, end)): resolve its
 * command and, for a batchable one, hash its key and prefetch the bucket.
 * Returns 1 if the window may continue past it. */
static int window_add(client *c, window *w, const char *base, size_t end, command **last) {
    win_req *q = &w->req[w->n++];
    const resp_arg *a = c->parser.argv;
    int argc = (int)c->parser.argc;
    q->end = end;
    q->argc = argc;
    q->hashed = 0;
    if (argc == 0) return 1;
    /* WIN_ARGS entries whatever argc: the parser's argv has >= ARGV_INITIAL, all initialised */
    q->argv[0] = (span){base + a[0].off, a[0].len};
    q->argv[1] = (span){base + a[1].off, a[1].len};
    q->argv[2] = (span){base + a[2].off, a[2].len};
    q->args = argc <= WIN_ARGS ? q->argv : NULL;
    q->cmd = *last = command_lookup_cached(*last, q->argv, argc);
    int numkeys = q->cmd && (q->cmd->props & PROP_NUMKEYS_AT_2);
    if (!command_batchable(q->cmd) && !numkeys) return 0;
    if (argc > WIN_ARGS) {
        if (argc > WIN_POOL - w->pooled) return 0; /* stays in the parser's argv: the window ends here */
        span *p = w->pool + w->pooled;
        for (int i = 0; i < argc; i++) p[i] = (span){base + a[i].off, a[i].len};
        w->pooled += argc;
        q->args = p;
    }
    if (!command_arity_ok(q->cmd, argc) || (c->flags & CF_MULTI) || !(c->flags & CF_AUTHENTICATED)) return 1;
    q->key = q->argv[1];
    long long nk;
    if (numkeys) { /* a script: it cannot change this client's db or flags, so the window goes on */
        if (argc < 4 || !str_to_ll(q->args[2].p, q->args[2].len, &nk) || nk < 1) return 1;
        q->key = q->args[3];
    }
    q->hash = dict_hash(q->key.p, q->key.len);
    q->hashed = 1;
    dict_prefetch_bucket(&c->db->keys, q->hash);
    return 1;
}

/* The ready request with blocks (aside.h), its bytes in the query buffer
 * from base: its arguments are copied into c->argv when it runs. */
static void window_add_aside(client *c, window *w, const char *base, size_t end, command **last) {
    win_req *q = &w->req[w->n++];
    q->end = end;
    q->argc = (int)c->aside->argc;
    q->hashed = 0;
    q->args = NULL;
    for (int i = 0; i < WIN_ARGS && i < q->argc; i++) q->argv[i] = aside_span(c, base, (size_t)i);
    q->cmd = *last = command_lookup_cached(*last, q->argv, q->argc);
}

/* Parse up to WIN_MAX requests from buf[pos, len) (see above). */
static void window_fill(client *c, window *w, char *buf, size_t pos, size_t len, const resp_limits *lim) {
    command *last = c->lastcmd;
    w->n = 0;
    w->pooled = 0;
    w->stop = 0;
    while (w->n < WIN_MAX && pos < len) {
        if (w->n > 0 && buf[pos] != '*') break;
        ssize_t r;
        if (__builtin_expect(c->aside != NULL, 0)) { /* a request with big arguments in blocks: it runs alone */
            r = c->aside->ready ? (ssize_t)c->aside->req_len : resp_parse(&c->parser, buf + pos, len - pos, lim);
            if (r > 0) {
                if (!c->aside->ready) aside_ready(c, (size_t)r);
                window_add_aside(c, w, buf + pos, pos + (size_t)r, &last);
                break;
            }
        } else {
            r = resp_parse_whole(&c->parser, buf + pos, len - pos, lim);
            if (r == 0) r = resp_parse(&c->parser, buf + pos, len - pos, lim);
        }
        if (r == RESP_NEED_ARGV) {
            grow_parser_argv(c);
            continue;
        }
        if (r < 0) {
            if (w->n > 0 && r == RESP_ERROR) resp_parser_reset(&c->parser); /* reported when reached */
            else w->stop = r;
            break;
        }
        size_t off = pos;
        pos += (size_t)r;
        if (!window_add(c, w, buf + off, pos, &last)) break;
    }
    for (int i = 0; i < w->n; i++) /* the bucket lines requested first have arrived by now */
        if (w->req[i].hashed) dict_prefetch_node(&c->db->keys, w->req[i].hash);
    for (int i = 0; i < w->n; i++) /* ... and the heads by now */
        if (w->req[i].hashed) dict_prefetch_next(&c->db->keys, w->req[i].hash);
}

/* Copy the arguments of a request whose spans are still in the parser (the last
 * of its window) from the parser into c->argv. */
static void copy_parser_argv(client *c, const char *base) {
    size_t argc = c->aside ? c->aside->argc : c->parser.argc;
    if (argc > c->argv_cap) {
        zfree(c->argv);
        c->argv_cap = c->parser.argv_cap;
        c->argv = zmalloc(sizeof(span) * c->argv_cap);
    }
    if (c->aside) {
        for (size_t i = 0; i < argc; i++) c->argv[i] = aside_span(c, base, i);
        return;
    }
    for (size_t i = 0; i < argc; i++) {
        c->argv[i].p = base + c->parser.argv[i].off;
        c->argv[i].len = c->parser.argv[i].len;
    }
}

static void dispatch_req(client *c, win_req *q) {
    c->argc = q->argc;
    if (q->hashed) db_set_key_hint(q->key.p, q->key.len, q->hash);
    command_dispatch_resolved(c, q->cmd);
    db_clear_key_hint();
    c->argc = 0;
}

/* Run one request of the window (it starts at buf + off). Its spans are lent
 * to c->argv for the call, or, when they are still in the parser's argv,
 * copied from there. */
static void window_exec(client *c, win_req *q, const char *buf, size_t off) {
    c->req_raw = buf + off;
    c->req_raw_len = q->end - off;
    if (!q->args) {
        copy_parser_argv(c, buf + off);
        dispatch_req(c, q);
    } else {
        span *own = c->argv;
        c->argv = q->args;
        dispatch_req(c, q);
        c->argv = own;
    }
    c->req_raw = NULL;
}

/* Execute the window in order. Returns 0 if execution must stop early. */
static int window_run(client *c, window *w, const char *buf, size_t *pos, size_t len) {
    for (int i = 0; i < w->n; i++) {
        win_req *q = &w->req[i];
        if (i > 0 && must_stop(c, w)) {
            resp_parser_reset(&c->parser); /* forget what was parsed ahead */
            return 0;
        }
        size_t off = *pos;
        *pos = q->end;
        c->input_left = len - off;
        if (q->argc) window_exec(c, q, buf, off);
        c->input_left = 0;
        if (c->repl_role == CLIENT_REPL_MASTER && client_repl_applied) client_repl_applied(c, buf + off, q->end - off);
        if (c->flags & CF_PAUSED) { /* held by CLIENT PAUSE: the request stays first in the buffer */
            *pos = off;             /* (one with blocks stays ready) */
            resp_parser_reset(&c->parser);
            return 0;
        }
        if (c->aside) aside_done(c);
    }
    return 1;
}

/* Parse and execute the complete requests in buf[*pos, len), stopping early
 * when the client closes or blocks, or when the pass has staged its output
 * budget. Returns 1 if it stopped for the budget with input left. */
static int process_buffer(client *c, char *buf, size_t *pos, size_t len) {
    resp_limits lim = {srv.cfg.proto_max_bulk_len, RESP_MAX_ARGS, RESP_INLINE_MAX, 0};
    uint64_t before = srv.stats.numcommands;
    window w;
    w.out_stop = client_out_used(c) + PASS_OUTPUT_BUDGET;
    while (*pos < len) {
        if (must_stop(c, &w)) break;
        /* AUTH, HELLO and RESET end a window, so this is current for every
         * request the window parses */
        lim.unauthenticated = client_auth_required(c);
        window_fill(c, &w, buf, *pos, len, &lim);
        if (w.n == 0 && w.stop == RESP_ERROR) {
            protocol_error(c);
            *pos = len;
            break;
        }
        if (!window_run(c, &w, buf, pos, len) || w.stop == RESP_INCOMPLETE) break;
    }
    command_stats_flush();
    client_check_output_limits(c);
    uint64_t ran = srv.stats.numcommands - before;
    if (ran) {
        srv.stats.batches++;
        srv.stats.batch_cmds += ran;
        latency_record_batch(ran);
    }
    return *pos < len && !(c->flags & (CF_CLOSE_AFTER_REPLY | CF_CLOSE_ASAP | CF_BLOCKED)) &&
           client_out_used(c) > w.out_stop;
}

/* Keep bytes [from, len) of buf as the client's pending input. */
static void keep_tail(client *c, const char *buf, size_t from, size_t len) {
    size_t n = len - from;
    if (c->qcap < n) {
        size_t cap = c->qcap ? c->qcap : READ_CHUNK;
        while (cap < n) cap *= 2;
        zfree(c->qbuf);
        c->qbuf = zmalloc(cap);
        c->qcap = cap;
        clients_memory_grew();
    }
    memmove(c->qbuf, buf + from, n);
    c->qpos = 0;
    c->qlen = n;
    if (n > c->qpeak) c->qpeak = n;
}

/* Reallocates the query buffer to cap bytes (0: none), its pending input
 * moved to the front first (the parser resumes relative to qpos). */
static void qbuf_resize(client *c, size_t cap) {
    size_t pending = c->qlen - c->qpos;
    if (c->qpos && pending) memmove(c->qbuf, c->qbuf + c->qpos, pending);
    c->qpos = 0;
    c->qlen = pending;
    if (cap == 0) {
        zfree(c->qbuf);
        c->qbuf = NULL;
    } else {
        c->qbuf = zrealloc(c->qbuf, cap);
    }
    c->qcap = cap;
}

void client_process_input(client *c) {
    if (c->qlen <= c->qpos || aside_filling(c)) return;
    int budget_spent = process_buffer(c, c->qbuf, &c->qpos, c->qlen);
    size_t keep = c->qpos < c->qlen ? aside_begin(c, c->qbuf + c->qpos, c->qlen - c->qpos) : 0;
    if (keep) c->qlen = c->qpos + keep; /* the big payload's bytes went to its block */
    if (c->qpos == c->qlen) {
        c->qpos = c->qlen = 0;
        if (c->qcap > GIANT_QBUF && !c->argc) qbuf_resize(c, 0); /* a giant argument's buffer: its value is stored */
        return;
    }
    if (c->qpos > 0 && c->qcap - c->qlen < READ_CHUNK) keep_tail(c, c->qbuf, c->qpos, c->qlen); /* compaction only when room runs low */
    if (budget_spent) defer_input(c);
}

void client_feed(client *c, const char *p, size_t n) {
    if (c->qcap - c->qlen < n) {
        size_t cap = c->qcap ? c->qcap : READ_CHUNK;
        while (cap - c->qlen < n) cap *= 2;
        c->qbuf = zrealloc(c->qbuf, cap);
        c->qcap = cap;
        clients_memory_grew();
    }
    if (n) memcpy(c->qbuf + c->qlen, p, n);
    c->qlen += n;
    if (c->qlen - c->qpos > c->qpeak) c->qpeak = c->qlen - c->qpos;
    client_process_input(c);
}

/* A client that sends requests keeps one read chunk of its own (freed by
 * the cron once it is idle): a request cut by a read boundary is kept
 * there without an allocation, and CLIENT LIST's qbuf-free shows it as
 * Redis's per-client query buffer. */
static void reserve_read_chunk(client *c) {
    c->qbuf = zmalloc(READ_CHUNK);
    c->qcap = READ_CHUNK;
    clients_memory_grew();
}

/* Called for every client from the clients cron. As Redis 7: only a buffer
 * wasting more than 4 KB is touched; idle more than 2 seconds it keeps just
 * its pending input; otherwise, over 32 KB and more than twice the recent
 * peak, it is cut to the peak (never below its pending input or one read
 * chunk). The peak then restarts from what is pending. */
void client_cron_qbuf(client *c) {
    aside_cron(c);
    size_t pending = c->qlen - c->qpos;
    if (c->qcap - pending > 4 * 1024 && !srv.script_busy) {
        if (srv.now_ms - c->last_interaction_ms > 2000) {
            qbuf_resize(c, pending);
        } else if (c->qcap > 32 * 1024 && c->qcap / 2 > c->qpeak) {
            size_t want = c->qpeak > pending ? c->qpeak : pending;
            qbuf_resize(c, want > READ_CHUNK ? want : READ_CHUNK);
        }
    }
    c->qpeak = c->qlen - c->qpos;
}

/* Called for every client from the clients cron: argument arrays grown by
 * a request with many arguments (SADD of 100,000 members) go back to their
 * initial size once no request is pending, as Redis frees a command's argv
 * after it ran (else used_memory keeps them). */
void client_cron_argv(client *c) {
    if (c->argc || c->qlen != c->qpos) return;
    if (c->argv_cap > ARGV_SHRINK) {
        zfree(c->argv);
        c->argv = zmalloc(sizeof(span) * ARGV_INITIAL);
        c->argv_cap = ARGV_INITIAL;
    }
    if (c->parser.argv_cap > ARGV_SHRINK) {
        c->parser.argv = zrealloc(c->parser.argv, sizeof(resp_arg) * ARGV_INITIAL);
        c->parser.argv_cap = ARGV_INITIAL;
        resp_parser_reset(&c->parser);
    }
}

/* Room for the next read into c's own query buffer. A request cut by a
 * read boundary is completed by reads into the client's buffer. With a
 * few KB of room each, a pipeline of 16 KB values was read (and answered)
 * one request per system call; with room for just one more request, each
 * read ends inside the next one, whose part is moved to the front before
 * the next read: another copy of most of every request. So while a bulk of
 * BIG_BULK or more arrives, the buffer has room for a few such requests
 * (BIG_BULK_BATCH), then a read brings several of them and a move happens
 * once per several requests; a bulk above BIG_BULK_ALONE gets room for
 * what it still needs. A declared length is never trusted on its own: the
 * room is at most twice the most input this client has held at once
 * recently (qpeak) or one shared buffer, so a buffer grows by doubling as
 * bytes arrive and a stalled 512 MB declaration costs what it sent. *min
 * is the room below which the buffer is first compacted or grown. */
static size_t read_room(const client *c, size_t *min) {
    size_t end = resp_parse_bulk_end(&c->parser), have = c->qlen - c->qpos;
    size_t need = end > have ? end - have : 0;
    long long bulk = c->parser.bulk_len;
    *min = READ_CHUNK;
    if (bulk < BIG_BULK) return READ_CHUNK;
    size_t want = bulk > BIG_BULK_ALONE ? need : BIG_BULK_BATCH * ((size_t)bulk + 64);
    if (want < need) want = need;
    size_t trust = 2 * c->qpeak > SHARED_QBUF ? 2 * c->qpeak : SHARED_QBUF;
    if (want > trust) want = trust;
    if (need > *min) *min = need < want ? need : want;
    return want > *min ? want : *min;
}

/* A client whose query buffer grew for big requests keeps reading into it
 * (until the cron shrinks it): going through the shared buffer would copy
 * each big request's first part once more. So does one with more than
 * TAIL_CARRY bytes of a request pending; a smaller pending part is carried
 * to the front of the shared buffer and the read goes after it, so a deep
 * pipeline of 16 KB SETs is read 256 KB at a time rather than in the
 * few-request reads of read_room(). A request trickling in a byte per read
 * costs at most TAIL_CARRY bytes of copying per read that way. */
static int reads_into_own_buffer(const client *c) {
    return c->qlen - c->qpos > TAIL_CARRY || c->aside || srv.script_busy || c->qcap > SHARED_QBUF;
}

static void read_failed(client *c, ssize_t n) {
    if (n == 0) server_log(LOG_VERBOSE_, "Client closed connection id=%llu addr=%s", (unsigned long long)c->id, c->addr);
    client_free(c);
}

static void read_again(client *c) {
    if (c->on_read_again) return;
    c->on_read_again = 1;
    c->next_read_again = srv.read_again;
    srv.read_again = c;
}

/* A read's result, counted. Returns the bytes read; 0 when none were
 * (EAGAIN) or when the client is gone (EOF, error: freed). */
static size_t read_counted(client *c, ssize_t n) {
    srv.stats.reads++;
    if (n <= 0) {
        if (n == 0 || (errno != EAGAIN && errno != EINTR)) read_failed(c, n);
        return 0;
    }
    srv.stats.net_input_bytes += (uint64_t)n;
    c->last_interaction_ms = srv.now_ms;
    return (size_t)n;
}

/* One read of up to room bytes into dst (read_counted). */
static size_t read_some(client *c, int fd, char *dst, size_t room) {
    size_t n = read_counted(c, tls_or_plain_read(c->tls, fd, dst, room));
    if (n && c->tls && tls_has_pending(c->tls)) read_again(c);
    return n;
}

/* A plain socket's two-part readv (read_counted). */
static size_t readv_some(client *c, int fd, const struct iovec iov[2]) { return read_counted(c, readv(fd, iov, 2)); }

/* Input held for the request in progress, with n more bytes: past
 * client-query-buffer-limit the client is closed (returns 0). */
static int hold_input(client *c, size_t n) {
    size_t held = c->qlen - c->qpos + aside_bytes(c) + n;
    if (held > c->qpeak) c->qpeak = held;
    if ((long long)held <= srv.cfg.client_query_buffer_limit) return 1;
    server_log(LOG_WARNING_, "Closing client that reached max query buffer length: id=%llu addr=%s (qbuf=%zu)",
               (unsigned long long)c->id, c->addr, held);
    client_free(c);
    return 0;
}

/* Room in c's own query buffer for the bytes after a big payload, read by
 * the same system call that completes the payload (read_into_block): 0
 * when there is none to spare or the connection is TLS. */
static size_t block_tail_room(const client *c, size_t missing, size_t room) {
    if (c->tls || room < missing || !c->qcap) return 0;
    size_t free_ = c->qcap - c->qlen;
    return free_ < BLOCK_TAIL ? free_ : BLOCK_TAIL;
}

/* A big argument's block takes the bytes of its payload (aside.h). When
 * this read can complete the payload, up to BLOCK_TAIL bytes after it go
 * to the query buffer in the same readv. In a pipeline of big SETs the
 * read then ends just inside the next request's payload, which gets a
 * block of its own in turn: one read per request and no copy of the
 * value, where 256 KB reads into the shared buffer cost a copy of every
 * value out of it (40% of the server's time for 64 KB SETs, issue 19). */
static size_t read_block_once(client *c, int fd) {
    size_t room, missing = aside_missing(c);
    char *dst = aside_read_room(c, &room);
    size_t tail = block_tail_room(c, missing, room);
    size_t n;
    if (tail) {
        struct iovec iov[2] = {{dst, room}, {c->qbuf + c->qlen, tail}};
        n = readv_some(c, fd, iov);
    } else {
        n = read_some(c, fd, dst, room);
    }
    if (!n) return 0; /* nothing came, or the client is gone */
    size_t body = n < room ? n : room;
    c->qlen += n - body;
    if (!hold_input(c, body) || !aside_received(c, body)) return 0;
    ssize_t r;
    while ((r = resp_parse_take_bulk(&c->parser)) == RESP_NEED_ARGV) grow_parser_argv(c);
    if (r > 0) aside_ready(c, (size_t)r);
    client_process_input(c);
    return tail && n == room + tail ? n : 0;
}

static void read_into_block(client *c, int fd) {
    size_t budget = SHARED_QBUF, n;
    while ((n = read_block_once(c, fd)) && n < budget && aside_filling(c) &&
           !(c->flags & (CF_INPUT_DEFERRED | CF_CLOSE_ASAP | CF_SCRIPT_CALLER)))
        budget -= n;
}

/* At most TAIL_CARRY bytes of a partial request pending: they are moved to
 * the front of the shared buffer and the read appends to them (not while a
 * busy script's caller is still processing its own input from it). The
 * parser's state is relative to the request's start, which stays first. */
static void read_into_shared(client *c, int fd) {
    size_t have = c->qlen - c->qpos;
    if (have) memcpy(shared_qbuf, c->qbuf + c->qpos, have);
    size_t n = read_some(c, fd, shared_qbuf + have, SHARED_QBUF - have);
    if (!n) return; /* the pending part is still where it was */
    n += have;
    c->qpos = c->qlen = 0;
    if (!c->qcap) reserve_read_chunk(c);
    size_t pos = 0;
    int budget_spent = process_buffer(c, shared_qbuf, &pos, n);
    if (pos < n) {
        size_t keep = aside_begin(c, shared_qbuf + pos, n - pos);
        keep_tail(c, shared_qbuf, pos, keep ? pos + keep : n);
    }
    if (budget_spent) defer_input(c);
    if (aside_filling(c)) read_into_block(c, fd); /* its bytes are most likely there already */
}

static void read_into_own(client *c, int fd) {
    size_t min, room = read_room(c, &min);
    if (c->qpos > 0 && c->qcap - c->qlen < min) keep_tail(c, c->qbuf, c->qpos, c->qlen);
    if (c->qcap - c->qlen < min) {
        size_t cap = c->qcap ? c->qcap : READ_CHUNK;
        while (cap - c->qlen < room && room <= READ_CHUNK) cap *= 2;
        if (cap - c->qlen < room) cap = c->qlen + room;
        c->qbuf = zrealloc(c->qbuf, cap);
        c->qcap = cap;
        clients_memory_grew();
    }
    size_t n = read_some(c, fd, c->qbuf + c->qlen, c->qcap - c->qlen);
    if (!n) return;
    c->qlen += n;
    if (!hold_input(c, 0)) return;
    client_process_input(c);
    if (aside_filling(c)) read_into_block(c, fd);
}

static void read_and_process(client *c, int fd) {
    if (aside_filling(c)) read_into_block(c, fd);
    else if (!reads_into_own_buffer(c)) read_into_shared(c, fd);
    else read_into_own(c, fd);
}

/* srv.current_client is the client whose input is processed, NULL between
 * (client-side caching tells a client's own changes from the cron's). */
static void client_readable(evloop *el, int fd, void *data, int mask) {
    client *c = data;
    if (c->flags & (CF_INPUT_DEFERRED | CF_SCRIPT_CALLER)) {
        if (c->tls && tls_has_pending(c->tls)) read_again(c); /* nothing will wake it for these bytes */
        return; /* its next pass comes first (see the top) */
    }
    srv.now_ms = ev_now_ms();
    srv.current_client = c;
    read_and_process(c, fd);
    srv.current_client = NULL;
}

void client_start_reading(client *c) {
    if (ev_add(srv.el, c->fd, EV_READABLE, client_readable, c) == -1) {
        client_free(c);
        return;
    }
    if (tls_has_pending(c->tls)) client_readable(srv.el, c->fd, c, EV_READABLE);
}

void (*client_write_barrier)(void) = NULL;

/* Local as redis-server 7.0.15 judges it for the "local" settings: a Unix
 * socket, or a peer whose address is the text 127.0.0.1 or ::1 (not the
 * rest of 127/8). */
int client_is_local(const client *c) {
    return (c->flags & (CF_FAKE | CF_UNIX_SOCKET)) || !strncmp(c->addr, "127.0.0.1:", 10) ||
           !strncmp(c->addr, "::1:", 4);
}

size_t client_memory_usage(const client *c) {
    size_t m = sizeof *c + c->qcap + aside_bytes(c) + aside_spare_size(c) + c->out.cap + c->argv_cap * sizeof(span) +
               c->parser.argv_cap * sizeof(resp_arg) + (size_t)c->mcap * sizeof(multi_cmd);
    if (c->name) m += strlen(c->name) + 1;
    return m;
}

size_t client_info_line(client *c, char *buf, size_t cap) {
    int64_t now = srv.now_ms;
    char flags[24];
    size_t f = 0;
    if (c->repl_role == CLIENT_REPL_REPLICA) flags[f++] = 'S';
    if (c->repl_role == CLIENT_REPL_MASTER) flags[f++] = 'M';
    if (c->flags & CF_MONITOR) flags[f++] = 'O';
    if (c->flags & CF_PUBSUB) flags[f++] = 'P';
    if (c->flags & CF_MULTI) flags[f++] = 'x';
    if (c->flags & CF_BLOCKED) flags[f++] = 'b';
    if (c->flags & CF_TRACKING) flags[f++] = 't';
    if (c->flags & CF_TRACKING_BROKEN) flags[f++] = 'R';
    if (c->flags & CF_TRACKING_BCAST) flags[f++] = 'B';
    if (c->flags & CF_DIRTY_CAS) flags[f++] = 'd';
    if (c->flags & CF_CLOSE_AFTER_REPLY) flags[f++] = 'c';
    if (c->flags & CF_CLOSE_ASAP) flags[f++] = 'A';
    if (c->flags & CF_UNIX_SOCKET) flags[f++] = 'U';
    if (c->flags & CF_NO_EVICT) flags[f++] = 'e';
    if (c->flags & CF_NO_TOUCH) flags[f++] = 'T';
    if (f == 0) flags[f++] = 'N';
    flags[f] = '\0';
    pubsub_counts subs = pubsub_client_counts(c);
    int n = snprintf(buf, cap,
                     "id=%llu addr=%s laddr=%s fd=%d name=%s age=%lld idle=%lld flags=%s db=%d sub=%zu psub=%zu "
                     "ssub=%zu multi=%d qbuf=%zu qbuf-free=%zu argv-mem=0 multi-mem=0 rbs=%zu rbp=%zu obl=0 oll=0 "
                     "omem=%zu tot-mem=%zu events=%s cmd=%s user=%s redir=%lld resp=%d lib-name=%s lib-ver=%s",
                     (unsigned long long)c->id, c->addr, c->laddr, c->fd, c->name ? c->name : "",
                     (long long)((now - c->ctime_ms) / 1000), (long long)((now - c->last_interaction_ms) / 1000), flags,
                     c->db ? c->db->id : 0, subs.channels, subs.patterns, subs.shard,
                     (c->flags & CF_MULTI) ? c->mcount : -1,
                     (c->input_left ? c->input_left : c->qlen - c->qpos) + aside_bytes(c),
                     c->qcap - c->qlen + aside_spare_size(c), c->out.cap, (size_t)c->out_peak, client_out_used(c),
                     client_memory_usage(c) + rb_pending(&c->stream) /* a replica's share of the stream, as Redis */,
                     (c->fd >= 0 && (ev_get_mask(srv.el, c->fd) & EV_WRITABLE)) ? "rw" : "r",
                     c->lastcmd ? c->lastcmd->fullname : "NULL", client_user_name ? client_user_name(c) : "default",
                     tracking_client_redirect(c), c->resp, c->lib_name ? c->lib_name : "",
                     c->lib_ver ? c->lib_ver : "");
    if (n < 0) return 0;
    return (size_t)n < cap ? (size_t)n : cap - 1;
}
