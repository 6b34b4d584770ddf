/* aof_load.c - replaying an append-only file (see aof_load.h). */
#include "aof_load.h"
#include "aof_parse.h"
#include "client.h"
#include "command.h"
#include "db.h"
#include "dict.h"
#include "server.h"
#include "zmalloc.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

typedef struct replay {
    const char *buf;
    size_t len, pos;
    client *f;                      /* the loader's client */
    span *argv;
    size_t cap, argc;
    const aof_load_opts *o;
    aof_load_result *res;
    size_t next_progress;
    const char *shown;
    char *err;
    size_t errlen;
} replay;

/* The command at `at`: its length, or AOF_INCOMPLETE / AOF_BAD. */
static ssize_t parse_at(replay *r, size_t at) {
    for (;;) {
        ssize_t n = aof_parse_command(r->buf + at, r->len - at, r->argv, r->cap, &r->argc);
        if (n != AOF_MORE_ROOM) return n;
        r->cap = r->argc;
        r->argv = zrealloc(r->argv, sizeof *r->argv * r->cap);
    }
}

static int is_cmd(const replay *r, const char *name) {
    return r->argc >= 1 && r->argv[0].len == strlen(name) && !strncasecmp(r->argv[0].p, name, r->argv[0].len);
}

static int fail_at(replay *r, size_t at, const char *what) {
    snprintf(r->err, r->errlen, "%s reading the append only file %s at offset %zu", what, r->shown, at);
    return -1;
}

/* Run one command (cmd: its lookup, NULL to look it up here). */
static int run_args(replay *r, size_t at, const span *argv, size_t argc, command *cmd) {
    if (!cmd) cmd = command_lookup(argv, (int)argc);
    if (!cmd) {
        char what[160];
        snprintf(what, sizeof what, "Unknown command '%.*s'", (int)(argv[0].len > 64 ? 64 : argv[0].len), argv[0].p);
        return fail_at(r, at, what);
    }
    if (!command_arity_ok(cmd, (int)argc)) return fail_at(r, at, "Bad file format (wrong number of arguments)");
    client *f = r->f;
    if (argc > f->argv_cap) {
        f->argv = zrealloc(f->argv, sizeof(span) * argc);
        f->argv_cap = argc;
    }
    memcpy(f->argv, argv, sizeof(span) * argc);
    f->argc = (int)argc;
    command_call(f, cmd);
    f->argc = 0;
    ring_consume(&f->out, ring_used(&f->out));
    r->res->commands++;
    return 0;
}

static int run(replay *r, size_t at) { return run_args(r, at, r->argv, r->argc, NULL); }

/* ---- the prefetching window ------------------------------------------------
 *
 * A replay is a long run of key commands on random keys, each waiting for
 * its key's bucket and node to come from memory, so commands are taken as
 * client.c takes a pipeline: up to LOAD_WIN plain key commands
 * (command_batchable) are parsed ahead, their keys hashed and buckets
 * prefetched, then the chain heads, then they run in order with the hash
 * handed to the db layer. The window stops before anything else (MULTI,
 * SELECT, an annotation, a bad or incomplete command), which then takes the
 * one-at-a-time path. Parsing ahead changes nothing: it is a pure function
 * of the bytes. */
#define LOAD_WIN 16
#define LOAD_POOL 128

typedef struct load_req {
    size_t at, end;
    command *cmd;
    span *argv;
    size_t argc;
    uint64_t hash;
} load_req;

/* Runs the window at r->pos; returns how many commands it ran (0: none
 * could be taken) or -1. */
static int run_window(replay *r) {
    load_req q[LOAD_WIN];
    span pool[LOAD_POOL];
    int n = 0;
    size_t pooled = 0, pos = r->pos;
    dict *keys = &r->f->db->keys;
    while (n < LOAD_WIN && pos < r->len && r->buf[pos] == '*') {
        ssize_t len = parse_at(r, pos);
        if (len < 0 || r->argc < 2 || r->argc > LOAD_POOL - pooled) break;
        command *cmd = command_lookup(r->argv, (int)r->argc);
        if (!command_batchable(cmd) || !command_arity_ok(cmd, (int)r->argc)) break;
        memcpy(pool + pooled, r->argv, sizeof(span) * r->argc);
        q[n] = (load_req){pos, pos + (size_t)len, cmd, pool + pooled, r->argc,
                          dict_hash(r->argv[1].p, r->argv[1].len)};
        dict_prefetch_bucket(keys, q[n].hash);
        pooled += r->argc;
        pos += (size_t)len;
        n++;
    }
    for (int i = 0; i < n; i++) dict_prefetch_node(keys, q[i].hash);
    for (int i = 0; i < n; i++) dict_prefetch_next(keys, q[i].hash);
    for (int i = 0; i < n; i++) {
        db_set_key_hint(q[i].argv[1].p, q[i].argv[1].len, q[i].hash);
        int rc = run_args(r, q[i].at, q[i].argv, q[i].argc, q[i].cmd);
        db_clear_key_hint();
        if (rc) return -1;
        r->pos = q[i].end;
    }
    return n;
}

/* The end of the data is cut at `at`: keep what is before it, or fail. */
static int cut_short(replay *r, size_t at) {
    if (!r->o->last || !r->o->truncated_ok) {
        snprintf(r->err, r->errlen,
                 "Unexpected end of file reading the append only file %s at offset %zu. You can: 1) Make a backup of "
                 "your AOF file, then use ./redis-check-aof --fix <filename.manifest>. 2) Alternatively you can set "
                 "the 'aof-load-truncated' configuration option to yes and restart the server.",
                 r->shown, at);
        return -1;
    }
    r->res->truncated = 1;
    r->pos = r->len = at;
    return 0;
}

/* A MULTI at `at` (already parsed): run its commands once EXEC is found. */
static int run_transaction(replay *r, size_t at) {
    size_t pos = r->pos, body = pos;
    for (;;) { /* find the EXEC first */
        ssize_t n = parse_at(r, pos);
        if (n == AOF_INCOMPLETE) return cut_short(r, at);
        if (n < 0) return fail_at(r, pos, "Bad file format");
        if (r->argc == 0) return cut_short(r, at);
        pos += (size_t)n;
        if (is_cmd(r, "exec")) break;
    }
    for (size_t p = body; p < pos;) {
        ssize_t n = parse_at(r, p);
        size_t here = p;
        p += (size_t)n;
        if (r->argc == 0 || is_cmd(r, "exec")) continue;
        if (run(r, here)) return -1;
    }
    r->pos = pos;
    return 0;
}

static int progress(replay *r) {
    const rdb_load_hooks *h = r->o->hooks;
    if (!h || !h->progress || r->pos < r->next_progress) return 0;
    r->next_progress = r->pos + (h->every ? h->every : 1);
    if (h->progress(h->ud, r->pos, r->len) == 0) return 0;
    snprintf(r->err, r->errlen, "loading aborted at offset %zu of %s", r->pos, r->shown);
    return -1;
}

static int replay_commands(replay *r) {
    while (r->pos < r->len) {
        if (progress(r)) return -1;
        int ran = run_window(r);
        if (ran < 0) return -1;
        if (ran > 0) continue;
        size_t at = r->pos;
        ssize_t n = parse_at(r, at);
        if (n == AOF_INCOMPLETE) return cut_short(r, at);
        if (n < 0) return fail_at(r, at, "Bad file format");
        r->pos += (size_t)n;
        if (r->argc == 0) continue;
        int rc = is_cmd(r, "multi") ? run_transaction(r, at) : run(r, at);
        if (rc) return -1;
    }
    return 0;
}

static int replay_image(replay *r) {
    if (r->len >= 5 && memcmp(r->buf, "REDIS", 5) == 0) {
        char why[512];
        if (rdb_load_image((const unsigned char *)r->buf, r->len, r->o->hooks, &r->res->rdb, why, sizeof why) != 0) {
            snprintf(r->err, r->errlen, "Bad file format reading the RDB part of %s: %s", r->shown, why);
            return -1;
        }
        r->pos = r->res->rdb.bytes_read;
    }
    return replay_commands(r);
}

int aof_load_file(const char *path, const char *shown, const aof_load_opts *o, aof_load_result *res, char *err,
                  size_t errlen) {
    memset(res, 0, sizeof *res);
    int fd = open(path, O_RDWR);
    if (fd < 0) {
        if (errno == ENOENT) return 1;
        snprintf(err, errlen, "Can't open the append-only file %s: %s", shown, strerror(errno));
        return -1;
    }
    struct stat sb;
    if (fstat(fd, &sb) != 0) {
        snprintf(err, errlen, "Can't stat the append-only file %s: %s", shown, strerror(errno));
        close(fd);
        return -1;
    }
    size_t size = (size_t)sb.st_size;
    void *map = size ? mmap(NULL, size, PROT_READ, MAP_PRIVATE, fd, 0) : NULL;
    if (map == MAP_FAILED) {
        snprintf(err, errlen, "Can't map the append-only file %s: %s", shown, strerror(errno));
        close(fd);
        return -1;
    }
    replay r = {.buf = map, .len = size, .f = client_create(-1), .o = o, .res = res, .shown = shown, .err = err,
                .errlen = errlen};
    r.f->flags |= CF_AUTHENTICATED | CF_OBEY;
    int rc = size ? replay_image(&r) : 0;
    client_free(r.f);
    zfree(r.argv);
    if (map) munmap(map, size);
    res->size = rc == 0 && res->truncated ? r.len : size;
    if (rc == 0 && res->truncated) {
        if (ftruncate(fd, (off_t)r.len) != 0) {
            snprintf(err, errlen, "Error truncating the AOF file %s: %s", shown, strerror(errno));
            rc = -1;
        } else {
            server_log(LOG_WARNING_, "!!! Warning: short read while loading the AOF file %s!!!", shown);
            server_log(LOG_WARNING_, "AOF %s loaded anyway because aof-load-truncated is enabled (cut at offset %zu)",
                       shown, r.len);
        }
    }
    close(fd);
    return rc;
}
