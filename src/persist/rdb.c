/* rdb.c - RDB snapshot files (see rdb.h).
 *
 * Layout: "REDIS0010", AUX fields (redis-ver, redis-bits, ctime, used-mem,
 * aof-base), then per non-empty database SELECTDB and RESIZEDB, then per key
 * [EXPIRETIME_MS] [IDLE | FREQ] type key value, then EOF and the CRC-64 of
 * everything before it (eight zero bytes when rdbchecksum is off).
 *
 * Saving streams: values are encoded into a buffer that is written out
 * whenever it passes a megabyte, with the checksum carried across writes,
 * so a save needs no second copy of the dataset. Loading maps the file and
 * walks it with the bounds-checked reader (rdb_io.c).
 */
#include "rdb.h"
#include "config.h"
#include "crc64.h"
#include "db.h"
#include "evict.h"
#include "rdb_io.h"
#include "rdb_value.h"
#include "server.h"
#include "util.h"
#include "zmalloc.h"
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

enum {
    OP_FUNCTION2 = 245, OP_FUNCTION = 246, OP_MODULE_AUX = 247, OP_IDLE = 248, OP_FREQ = 249, OP_AUX = 250,
    OP_RESIZEDB = 251, OP_EXPIRETIME_MS = 252, OP_EXPIRETIME = 253, OP_SELECTDB = 254, OP_EOF = 255,
};

#define FLUSH_AT (1024 * 1024)

static rdb_repl_info_fn *repl_info_hook;

void rdb_set_repl_info_hook(rdb_repl_info_fn *fn) { repl_info_hook = fn; }

rdb_options rdb_current_options(void) {
    rdb_options o = {.compress = config_is_yes(&srv.cfg, "rdbcompression"), .checksum = config_is_yes(&srv.cfg, "rdbchecksum")};
    char *delay = config_get_by_name(&srv.cfg, "rdb-key-save-delay");
    if (delay) o.key_delay_us = atoll(delay);
    zfree(delay);
    if (repl_info_hook) repl_info_hook(&o);
    return o;
}

/* ---- saving -------------------------------------------------------------- */

/* A save writes to one file, or (diskless replication) to up to 64
 * sockets at once: a socket whose write fails is dropped and the others go
 * on; the save fails when none is left. */
typedef struct saver {
    rdbw w;
    const int *fds;
    int nfds;
    uint64_t dead;              /* fds[i] failed: bit i */
    uint64_t crc;
    int checksum;
    int failed;                 /* errno of the last failed write, 0 if none */
    long long key_delay_us;
    const rdb_options *opt;
} saver;

/* Write all of p to fd; a non-blocking socket is waited for (poll). 0 or errno. */
static int write_fully(int fd, const unsigned char *p, size_t len) {
    size_t off = 0;
    while (off < len) {
        ssize_t n = write(fd, p + off, len - off);
        if (n < 0 && errno == EINTR) continue;
        if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
            struct pollfd pf = {.fd = fd, .events = POLLOUT};
            if (poll(&pf, 1, 60000) <= 0) return ETIMEDOUT;
            continue;
        }
        if (n <= 0) return n < 0 ? errno : EIO;
        off += (size_t)n;
    }
    return 0;
}

static int all_dead(const saver *s) { return s->nfds == 64 ? s->dead == ~0ULL : s->dead == (1ULL << s->nfds) - 1; }

static void flush_out(saver *s) {
    if (s->checksum) s->crc = crc64(s->crc, s->w.buf, s->w.len);
    for (int i = 0; i < s->nfds; i++) {
        if (s->dead & (1ULL << i)) continue;
        int e = write_fully(s->fds[i], s->w.buf, s->w.len);
        if (e) s->failed = e, s->dead |= 1ULL << i;
    }
    s->w.len = 0;
}

static void aux(rdbw *w, const char *k, const char *v) {
    rdbw_u8(w, OP_AUX);
    rdbw_string(w, k, strlen(k));
    rdbw_string(w, v, strlen(v));
}

static void aux_ll(rdbw *w, const char *k, long long v) {
    char buf[24];
    snprintf(buf, sizeof buf, "%lld", v);
    aux(w, k, buf);
}

static void save_header(rdbw *w, const rdb_options *opt) {
    char magic[10];
    snprintf(magic, sizeof magic, "REDIS%04d", RDB_VERSION);
    rdbw_raw(w, magic, 9);
    aux(w, "redis-ver", FERRY_VERSION);
    aux_ll(w, "redis-bits", (long long)sizeof(void *) * 8);
    aux_ll(w, "ctime", (long long)(srv.now_ms / 1000));
    aux_ll(w, "used-mem", (long long)zmalloc_used());
    if (opt->repl_id) { /* where the replication stream goes on after this snapshot */
        aux_ll(w, "repl-stream-db", opt->repl_stream_db);
        aux(w, "repl-id", opt->repl_id);
        aux_ll(w, "repl-offset", opt->repl_offset);
    }
    aux_ll(w, "aof-base", 0);
}

/* The access stamp Redis saves with a key: IDLE seconds under an LRU
 * policy, the FREQ counter under an LFU one, nothing otherwise. */
static void save_stamp(rdbw *w, const dnode *n) {
    int policy = srv.cfg.maxmemory_policy;
    if (evict_policy_is_lfu(policy)) {
        rdbw_u8(w, OP_FREQ);
        rdbw_u8(w, evict_lfu_get(n));
    } else if (evict_policy_is_lru_or_lfu(policy)) {
        uint32_t now = srv.lruclock & 0xFFFFFF, then = n->lru;
        rdbw_u8(w, OP_IDLE);
        rdbw_len(w, now >= then ? now - then : now + 0x1000000u - then);
    }
}

static void save_key(saver *s, const dnode *n) {
    rdbw *w = &s->w;
    int64_t exp = dn_expire(n);
    if (exp >= 0) {
        rdbw_u8(w, OP_EXPIRETIME_MS);
        rdbw_u64_le(w, (uint64_t)exp);
    }
    save_stamp(w, n);
    rdbw_u8(w, rdb_value_type(n));
    rdbw_string(w, dn_key(n), dn_klen(n));
    rdb_save_payload(w, n);
    if (w->len >= FLUSH_AT) flush_out(s);
    if (s->key_delay_us > 0 && !all_dead(s)) usleep((useconds_t)s->key_delay_us);
}

static void save_node_cb(void *ud, dnode *n) { save_key(ud, n); }

static void save_db(saver *s, db *d) {
    if (!dict_size(&d->keys)) return;
    rdbw_u8(&s->w, OP_SELECTDB);
    rdbw_len(&s->w, (uint64_t)d->id);
    rdbw_u8(&s->w, OP_RESIZEDB);
    rdbw_len(&s->w, dict_size(&d->keys));
    rdbw_len(&s->w, d->expires);
    dict_foreach(&d->keys, save_node_cb, s);
}

static rdb_functions_save_fn *functions_save;
static rdb_function_load_fn *function_load;
static rdb_functions_flush_fn *functions_flush;

void rdb_save_functions(rdbw *w) {
    if (functions_save) functions_save(w);
}

void rdb_set_function_hooks(rdb_functions_save_fn *save, rdb_function_load_fn *load, rdb_functions_flush_fn *flush) {
    functions_save = save;
    function_load = load;
    functions_flush = flush;
}

void rdb_flush_functions(void) {
    if (functions_flush) functions_flush();
}

int rdb_add_function(const char *code, size_t len, char *err, size_t errlen) {
    if (function_load) return function_load(code, len, 0, err, errlen);
    snprintf(err, errlen, "this server has no scripting");
    return -1;
}

void rdb_write_function(rdbw *w, const char *code, size_t len) {
    rdbw_u8(w, OP_FUNCTION2);
    rdbw_string(w, code, len);
}

static int write_all(saver *s) {
    save_header(&s->w, s->opt);
    if (functions_save) functions_save(&s->w);
    for (int i = 0; i < db_count(); i++) save_db(s, db_get(i));
    rdbw_u8(&s->w, OP_EOF);
    flush_out(s);
    rdbw_u64_le(&s->w, s->crc); /* not part of its own checksum */
    int checksum = s->checksum;
    s->checksum = 0;
    flush_out(s);
    s->checksum = checksum;
    return s->nfds && !all_dead(s) ? 0 : -1;
}

static void dir_of(const char *path, char *buf, size_t cap) {
    const char *slash = strrchr(path, '/');
    if (!slash) {
        snprintf(buf, cap, ".");
        return;
    }
    size_t n = (size_t)(slash - path);
    snprintf(buf, cap, "%.*s", (int)(n ? n : 1), path);
}

/* fsync the directory so the rename itself is durable. */
static void sync_dir(const char *path) {
    char dir[4096];
    dir_of(path, dir, sizeof dir);
    int fd = open(dir, O_RDONLY);
    if (fd < 0) return;
    fsync(fd);
    close(fd);
}

int rdb_save_file(const char *path, const rdb_options *opt, char *err, size_t errlen) {
    char dir[4096], tmp[4200];
    dir_of(path, dir, sizeof dir);
    snprintf(tmp, sizeof tmp, "%s/temp-%d.rdb", dir, (int)getpid());
    int fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    saver s = {.fds = &fd, .nfds = 1, .checksum = opt->checksum, .key_delay_us = opt->key_delay_us, .opt = opt};
    if (fd < 0) {
        snprintf(err, errlen, "Failed opening the temp RDB file %s (in server root dir %s) for saving: %s", tmp, dir,
                 strerror(errno));
        return -1;
    }
    rdbw_init(&s.w, opt->compress);
    int rc = write_all(&s);
    rdbw_free(&s.w);
    if (rc == 0 && fsync(fd) != 0) s.failed = errno, rc = -1;
    close(fd);
    if (rc == 0 && rename(tmp, path) != 0) s.failed = errno, rc = -1;
    if (rc != 0) {
        snprintf(err, errlen, "Write error saving DB on disk: %s", strerror(s.failed ? s.failed : EIO));
        unlink(tmp);
        return -1;
    }
    sync_dir(path);
    return 0;
}

uint64_t rdb_save_fds(const int *fds, int nfds, const rdb_options *opt) {
    if (nfds > 64) nfds = 64;
    saver s = {.fds = fds, .nfds = nfds, .checksum = opt->checksum, .key_delay_us = opt->key_delay_us, .opt = opt};
    rdbw_init(&s.w, opt->compress);
    write_all(&s);
    rdbw_free(&s.w);
    return nfds == 64 ? ~s.dead : ~s.dead & ((1ULL << nfds) - 1);
}

/* ---- loading ------------------------------------------------------------- */

/* A streamed load's input: the bytes from the start of the step being
 * read on, the stream's CRC of those already dropped. */
typedef struct feed {
    rdb_source *src;
    unsigned char *buf;
    size_t len, cap;
    int ended;                  /* the source said there is no more */
} feed;

typedef struct loader {
    rdbr r;
    int version;
    db *d;
    int64_t expire_ms;          /* of the next key, -1 if none */
    int freq;                   /* access stamp of the next key, -1 if none */
    long long idle_secs;
    rdb_load_stats *st;
    db_load q;                  /* keys on their way into l->d (batched, see db.h) */
    const rdb_load_hooks *h;
    size_t next_progress;       /* offset at which progress() is called next */
    long long key_delay_us;
    feed *f;                    /* a streamed load's input, NULL for a whole image */
    size_t base;                /* offset in the input of r's first byte */
    uint64_t crc;               /* CRC-64 of the input before base */
    char *err;
    size_t errlen;
} loader;

static int fail(loader *l, const char *fmt, const char *arg) {
    char msg[512];
    snprintf(msg, sizeof msg, fmt, arg);
    rdbr_fail(&l->r, "");
    snprintf(l->err, l->errlen, "%s at offset %zu", msg, l->base + l->r.err_pos);
    return -1;
}

static int check_header(loader *l) {
    const unsigned char *p = rdbr_bytes(&l->r, 9);
    if (!p || memcmp(p, "REDIS", 5) != 0) return fail(l, "%s", "Wrong signature trying to load DB from file");
    int v = 0;
    for (int i = 5; i < 9; i++) {
        if (p[i] < '0' || p[i] > '9') return fail(l, "%s", "Wrong signature trying to load DB from file");
        v = v * 10 + (p[i] - '0');
    }
    if (v < 1 || v > RDB_VERSION_MAX) return fail(l, "%s", "Can't handle RDB format version");
    l->version = v;
    return 0;
}

static int duplicate(loader *l, size_t pos) {
    snprintf(l->err, l->errlen, "duplicate key in the RDB file at offset %zu", pos);
    rdbr_fail(&l->r, "duplicate key");
    return -1;
}

/* The keys queued for l->d are all in (before another db is selected, at
 * the end, and before the keyspace is looked at from outside). */
static int flush_keys(loader *l) {
    size_t dup;
    return db_load_end(&l->q, &dup) == 0 ? 0 : duplicate(l, dup);
}

/* One key: type byte t already read. */
static int load_key(loader *l, unsigned t) {
    size_t key_pos = l->base + l->r.pos - 1;
    rdb_str key;
    if (!rdbr_string(&l->r, &key)) return fail(l, "%s", l->r.err);
    if (!rdb_type_known(t)) {
        char what[300];
        snprintf(what, sizeof what, "key '%.*s' has type %s (RDB type %u), which ferry does not support",
                 (int)(key.len > 200 ? 200 : key.len), key.p, rdb_type_name(t), t);
        rdb_str_free(&key);
        return fail(l, "%s", what);
    }
    rdb_value v;
    if (!rdb_load_value(&l->r, t, &v)) {
        rdb_value_free(&v);
        rdb_str_free(&key);
        return fail(l, "%s", l->r.err);
    }
    int rc = 0;
    if (rdb_value_empty(&v)) {
        l->st->empty_keys_skipped++;
    } else if (l->expire_ms >= 0 && l->expire_ms < srv.now_ms && !(l->h && l->h->keep_expired)) {
        l->st->keys_expired++;
        if (l->h && l->h->expired_key) l->h->expired_key(l->h->ud, l->d->id, key.p, key.len);
    } else {
        dnode *n = rdb_value_node(key.p, key.len, &v, l->expire_ms);
        rdb_value_set_access(n, l->idle_secs, l->freq);
        size_t dup;
        if (l->h && l->h->allow_dup && db_lookup(l->d, key.p, key.len)) { /* MERGE: the file's value wins */
            db_delete(l->d, key.p, key.len);
            db_add_node(l->d, n);
            l->st->keys_loaded++;
        } else if (db_load_add(&l->q, n, key_pos, &dup) == 0) {
            l->st->keys_loaded++;
        } else {
            rc = duplicate(l, dup);
        }
    }
    rdb_value_free(&v);
    rdb_str_free(&key);
    if (l->key_delay_us > 0) usleep((useconds_t)l->key_delay_us);
    l->expire_ms = -1;
    l->freq = -1;
    l->idle_secs = -1;
    return rc;
}

/* AUX fields are informational; used-mem is kept for INFO's
 * loading_rdb_used_mem. */
static int read_aux(loader *l) {
    rdb_str k, v;
    if (!rdbr_string(&l->r, &k)) return fail(l, "%s", l->r.err);
    int ok = rdbr_string(&l->r, &v);
    if (ok && v.len < 32) {
        char num[32];
        memcpy(num, v.p, v.len);
        num[v.len] = '\0';
        if (k.len == 8 && memcmp(k.p, "used-mem", 8) == 0) l->st->used_mem = strtoull(num, NULL, 10);
        if (k.len == 14 && memcmp(k.p, "repl-stream-db", 14) == 0) l->st->repl_stream_db = atoi(num);
        if (k.len == 11 && memcmp(k.p, "repl-offset", 11) == 0) l->st->repl_offset = strtoll(num, NULL, 10);
    }
    if (ok && k.len == 7 && memcmp(k.p, "repl-id", 7) == 0 && v.len == 40) {
        memcpy(l->st->repl_id, v.p, 40);
        l->st->repl_id[40] = '\0';
        l->st->has_repl_id = 1;
    }
    rdb_str_free(&k);
    if (!ok) return fail(l, "%s", l->r.err);
    rdb_str_free(&v);
    return 0;
}

/* Database id: a live one, or its stand-in of a swapdb load. */
static db *target_db(loader *l, int id) { return l->h && l->h->into ? &l->h->into[id] : db_get(id); }

static int select_db(loader *l) {
    uint64_t id = rdbr_len(&l->r);
    if (!rdbr_ok(&l->r)) return fail(l, "%s", l->r.err);
    if (id >= (uint64_t)db_count()) {
        char msg[64];
        snprintf(msg, sizeof msg, "%d", db_count());
        return fail(l, "Data file was created with a Redis server configured to handle more than %s databases",
                    msg);
    }
    if (flush_keys(l)) return -1;
    l->d = target_db(l, (int)id);
    db_load_begin(&l->q, l->d);
    return 0;
}

/* RESIZEDB: the db's key count (and volatile count) ahead of its keys; the
 * table is sized for them (never beyond what the bytes at hand could hold:
 * a key takes at least 3 bytes, so a hostile count cannot reserve more; a
 * streamed load, which has only part of the snapshot at hand, grows the
 * table as keys come). */
static int resize_db(loader *l) {
    uint64_t keys = rdbr_len(&l->r);
    rdbr_len(&l->r);
    if (!rdbr_ok(&l->r)) return fail(l, "%s", l->r.err);
    uint64_t most = rdbr_left(&l->r) / 3;
    db_reserve(l->d, (size_t)(keys < most ? keys : most));
    return 0;
}

/* A function library: its code, handed to the scripting layer. */
static int load_function(loader *l) {
    rdb_str code;
    if (!rdbr_string(&l->r, &code)) return fail(l, "%s", l->r.err);
    char why[400];
    int rc = 0;
    if (l->h && l->h->library) l->h->library(l->h->library_ud, code.p, code.len);
    else if (!function_load) rc = fail(l, "%s", "a function library, and this server has no scripting");
    else if (function_load(code.p, code.len, l->h && l->h->allow_dup, why, sizeof why) != 0)
        rc = fail(l, "function library refused: %s", why);
    rdb_str_free(&code);
    return rc;
}

/* One opcode or key; 1 at EOF. */
static int load_step(loader *l) {
    unsigned op = rdbr_u8(&l->r);
    if (!rdbr_ok(&l->r)) return fail(l, "%s", "unexpected end of file (no EOF marker)");
    switch (op) {
    case OP_EOF: return 1;
    case OP_SELECTDB: return select_db(l);
    case OP_RESIZEDB: return resize_db(l);
    case OP_AUX: return read_aux(l);
    case OP_EXPIRETIME_MS: l->expire_ms = (int64_t)rdbr_u64_le(&l->r); break;
    case OP_EXPIRETIME: l->expire_ms = (int64_t)rdbr_u32_le(&l->r) * 1000; break;
    case OP_FREQ: l->freq = (int)rdbr_u8(&l->r); break;
    case OP_IDLE: l->idle_secs = (long long)(rdbr_len(&l->r) & INT64_MAX); break;
    case OP_MODULE_AUX: return fail(l, "%s", "module data (ferry has no modules)");
    case OP_FUNCTION: return fail(l, "%s", "a pre-GA function format, which ferry does not read");
    case OP_FUNCTION2: return load_function(l);
    default: return load_key(l, op);
    }
    return rdbr_ok(&l->r) ? 0 : fail(l, "%s", l->r.err);
}

static int check_crc(loader *l) {
    if (l->version < 5) return 0;
    size_t end = l->r.pos;
    uint64_t want = rdbr_u64_le(&l->r);
    if (!rdbr_ok(&l->r)) return fail(l, "%s", "Short read or OOM loading DB: no checksum");
    if (want == 0) return 0; /* saved with rdbchecksum no */
    uint64_t got = crc64(l->crc, l->r.p, end);
    if (got != want) return fail(l, "%s", "Wrong RDB checksum");
    return 0;
}

/* Let the server run (the progress hook), the queued keys in first. */
static int serve(loader *l) {
    if (flush_keys(l)) return -1;
    size_t at = l->base + l->r.pos;
    size_t total = l->f && l->f->src->expect ? l->f->src->expect : l->base + l->r.len;
    if (l->h->key_delay) l->key_delay_us = l->h->key_delay(l->h->ud);
    if (l->h->progress(l->h->ud, at, total) == 0) return 0;
    snprintf(l->err, l->errlen, "loading aborted at offset %zu", at);
    return -1;
}

/* The progress hook, when `every` more bytes have been read; -1 if it asks
 * to stop. */
static int report_progress(loader *l) {
    if (!l->h || !l->h->progress || l->base + l->r.pos < l->next_progress) return 0;
    l->next_progress = l->base + l->r.pos + (l->h->every ? l->h->every : 1);
    return serve(l);
}

/* ---- streamed input ----------------------------------------------------------
 *
 * A replica loading its primary's snapshot straight from the socket (Redis's
 * repl-diskless-load) reads it as it comes: each step (an opcode, a key with
 * its value) runs over the bytes already here, and one that runs out of
 * them (rdbr's `need`: starved, not corrupt) is undone and run again once
 * more has come. Undoing is cheap because a step changes nothing before it
 * has read all it needs: a key goes into the keyspace after its value has
 * been read whole. So that a value arriving slowly is not parsed over and
 * over, a step is retried when the bytes it asked for are here and either
 * the buffer has doubled or the source has paused (which it says at most
 * ten times a second). Bytes before the step are dropped, their CRC kept,
 * so the buffer holds about the largest value, not the snapshot. */
#define FEED_CHUNK (64 * 1024)

static void feed_reserve(feed *f, size_t cap) {
    if (cap <= f->cap) return;
    f->buf = zrealloc(f->buf, cap);
    f->cap = cap;
}

/* Drop what l has read; the rest moves to the front. */
static void feed_compact(loader *l) {
    feed *f = l->f;
    size_t done = l->r.pos;
    if (!done) return;
    l->crc = crc64(l->crc, f->buf, done);
    memmove(f->buf, f->buf + done, f->len - done);
    f->len -= done;
    l->base += done;
    l->r.pos = 0;
}

static void feed_publish(loader *l) {
    feed *f = l->f;
    size_t seen = l->base + f->len;
    l->r.p = f->buf;
    l->r.len = f->len;
    l->r.more = f->ended ? 0 : !f->src->expect ? SIZE_MAX : f->src->expect > seen ? f->src->expect - seen : 1;
}

/* One read from the source into the buffer (grown to RDB_SOURCE_MIN_CAP
 * of room at least): FEED_GOT (bytes, or the end), FEED_PAUSED, or -1
 * (failed: l's error set). */
enum { FEED_GOT = 0, FEED_PAUSED = 1 };

static int feed_pull(loader *l) {
    feed *f = l->f;
    if (f->cap - f->len < RDB_SOURCE_MIN_CAP)
        feed_reserve(f, f->cap * 2 > f->len + FEED_CHUNK ? f->cap * 2 : f->len + FEED_CHUNK);
    long n = f->src->read(f->src->ud, f->buf + f->len, f->cap - f->len);
    if (n > 0) f->len += (size_t)n;
    else if (n == 0) f->ended = 1;
    else if (n == -1) return fail(l, "%s", f->src->err ? f->src->err : "read error");
    else return FEED_PAUSED;
    return FEED_GOT;
}

/* Read until the buffer holds `need` bytes and has doubled, or holds
 * `need` and the source pauses, or the source ends. The buffer grows as
 * bytes arrive, never ahead of them: a hostile length costs no memory the
 * snapshot does not fill. */
static int feed_more(loader *l, size_t need) {
    feed *f = l->f;
    feed_compact(l);
    need -= l->base;
    size_t goal = f->len * 2 > f->len + FEED_CHUNK ? f->len * 2 : f->len + FEED_CHUNK;
    while ((f->len < need || f->len < goal) && !f->ended) {
        int got = feed_pull(l);
        if (got < 0) return -1;
        if (got == FEED_PAUSED && f->len >= need) break;
        if (got == FEED_PAUSED && l->h && l->h->progress && serve(l)) return -1;
    }
    feed_publish(l);
    return 0;
}

typedef int step_fn(loader *l);

/* fn, run again over more input each time it starves. Only the position
 * goes back: a starved step has changed nothing else that its rerun does
 * not set again (a key's expiry and access stamp are dropped only once the
 * key is in). */
static int run_step(loader *l, step_fn *fn) {
    for (;;) {
        size_t at = l->r.pos;
        int rc = fn(l);
        if (rc >= 0 || !l->r.need) return rc;
        size_t need = l->base + l->r.need;
        l->r.err = NULL;
        l->r.need = 0;
        l->r.pos = at;
        if (feed_more(l, need)) return -1;
    }
}

/* After the checksum: the source must end there. */
static int feed_finish(loader *l) {
    feed *f = l->f;
    while (l->r.pos == f->len && !f->ended) {
        int got = feed_pull(l);
        if (got < 0) return -1;
        if (got == FEED_PAUSED && l->h && l->h->progress && serve(l)) return -1;
    }
    if (l->r.pos == f->len) return 0;
    l->r.len = f->len;
    return fail(l, "%s", "data after the end of the RDB");
}

/* ---- the whole load ------------------------------------------------------------ */

static int load_all(loader *l) {
    memset(l->st, 0, sizeof *l->st);
    l->key_delay_us = l->h ? l->h->key_delay_us : 0;
    db_load_begin(&l->q, l->d);
    if (l->h && l->h->quiet_start) l->next_progress = l->h->every;
    int rc = report_progress(l) || run_step(l, check_header) ? -1 : 0;
    while (rc == 0 && (rc = run_step(l, load_step)) == 0) rc = report_progress(l);
    size_t dup;
    if (db_load_end(&l->q, &dup) != 0 && rc >= 0) rc = duplicate(l, dup); /* always drained: the db owns every node */
    if (rc < 0 || run_step(l, check_crc) < 0) return -1;
    if (l->f && feed_finish(l)) return -1;
    l->st->bytes_read = l->base + l->r.pos;
    return 0;
}

int rdb_load_image(const unsigned char *buf, size_t len, const rdb_load_hooks *h, rdb_load_stats *st, char *err,
                   size_t errlen) {
    loader l = {.expire_ms = -1, .freq = -1, .idle_secs = -1, .st = st, .h = h, .err = err, .errlen = errlen};
    l.d = target_db(&l, 0);
    rdbr_init(&l.r, buf, len);
    return load_all(&l);
}

int rdb_load_source(rdb_source *src, const rdb_load_hooks *h, rdb_load_stats *st, char *err, size_t errlen) {
    feed f = {.src = src};
    loader l = {.expire_ms = -1, .freq = -1, .idle_secs = -1, .st = st, .h = h, .err = err, .errlen = errlen, .f = &f};
    l.d = target_db(&l, 0);
    rdbr_init(&l.r, NULL, 0);
    feed_publish(&l);
    int rc = load_all(&l);
    zfree(f.buf);
    return rc;
}

int rdb_load_file(const char *path, const rdb_load_hooks *h, rdb_load_stats *st, char *err, size_t errlen) {
    int fd = open(path, O_RDONLY);
    if (fd < 0) {
        if (errno == ENOENT) return 1;
        snprintf(err, errlen, "Can't open %s: %s", path, strerror(errno));
        return -1;
    }
    struct stat sb;
    if (fstat(fd, &sb) != 0) {
        close(fd);
        snprintf(err, errlen, "Can't stat %s: %s", path, strerror(errno));
        return -1;
    }
    static const unsigned char empty[1];
    void *map = sb.st_size ? mmap(NULL, (size_t)sb.st_size, PROT_READ, MAP_PRIVATE, fd, 0) : (void *)empty;
    close(fd);
    if (map == MAP_FAILED) {
        snprintf(err, errlen, "Can't map %s: %s", path, strerror(errno));
        return -1;
    }
    char why[512];
    int rc = rdb_load_image(map, (size_t)sb.st_size, h, st, why, sizeof why);
    if (sb.st_size) munmap(map, (size_t)sb.st_size);
    if (rc) snprintf(err, errlen, "%s: %s", path, why);
    return rc;
}

/* ---- DUMP payload footer ------------------------------------------------------ */

void rdb_payload_finish(rdbw *w) {
    rdbw_u8(w, RDB_VERSION & 0xff);
    rdbw_u8(w, RDB_VERSION >> 8);
    rdbw_u64_le(w, crc64(0, w->buf, w->len));
}

int rdb_payload_ok(const unsigned char *p, size_t len) {
    if (len < RDB_PAYLOAD_FOOTER) return 0;
    const unsigned char *f = p + len - RDB_PAYLOAD_FOOTER;
    unsigned ver = (unsigned)f[0] | (unsigned)f[1] << 8;
    if (ver > RDB_VERSION_MAX) return 0;
    uint64_t want = 0;
    for (int i = 0; i < 8; i++) want |= (uint64_t)f[2 + i] << (8 * i);
    return crc64(0, p, len - 8) == want;
}
