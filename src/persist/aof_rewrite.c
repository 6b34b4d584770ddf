/* aof_rewrite.c - an AOF base file made of commands (see aof_rewrite.h).
 * Runs in the rewrite child: it reads its copy-on-write image of the
 * keyspace and writes through one buffer, flushed every 64 KB. */
#include "aof_rewrite.h"
#include "db.h"
#include "dict.h"
#include "rdb.h"
#include "rdb_io.h"
#include "rdb_value.h"
#include "sbuf.h"
#include "util.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#define FLUSH_AT (64 * 1024)

typedef struct writer {
    int fd;
    int failed;                     /* errno of the first failed write, 0 if none */
    int compress;
    long long key_delay_us;         /* rdb-key-save-delay (tests make rewrites slow) */
    sbuf b;
} writer;

static void flush_out(writer *w) {
    size_t done = 0;
    while (!w->failed && done < w->b.len) {
        ssize_t n = write(w->fd, w->b.p + done, w->b.len - done);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) w->failed = n < 0 ? errno : EIO;
        else done += (size_t)n;
    }
    w->b.len = 0;
}

static void add_command(writer *w, int argc, const span *argv) {
    sb_add_command(&w->b, argc, argv);
    if (w->b.len >= FLUSH_AT) flush_out(w);
}

static void key_cb(void *ud, dnode *n) {
    writer *w = ud;
    rdbw p;
    rdbw_init(&p, w->compress);
    rdbw_u8(&p, rdb_value_type(n));
    rdb_save_payload(&p, n);
    rdb_payload_finish(&p);
    char ttl[24];
    int has_ttl = (n->flags & DN_EXPIRE) != 0;
    size_t tl = has_ttl ? ll_to_str(ttl, dn_expire(n)) : 1;
    span argv[5] = {{"RESTORE", 7}, {dn_key(n), dn_klen(n)}, {has_ttl ? ttl : "0", tl},
                    {(const char *)p.buf, p.len}, {"ABSTTL", 6}};
    add_command(w, has_ttl ? 5 : 4, argv);
    rdbw_free(&p);
    if (w->key_delay_us > 0) usleep((useconds_t)w->key_delay_us);
}

static void write_functions(writer *w) {
    rdbw p;
    rdbw_init(&p, 0);
    rdb_save_functions(&p);
    if (p.len) {
        rdb_payload_finish(&p);
        span argv[3] = {{"FUNCTION", 8}, {"RESTORE", 7}, {(const char *)p.buf, p.len}};
        add_command(w, 3, argv);
    }
    rdbw_free(&p);
}

int aof_write_command_base(const char *path, char *err, size_t errlen) {
    rdb_options opt = rdb_current_options();
    writer w = {.fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644), .compress = opt.compress,
                .key_delay_us = opt.key_delay_us};
    if (w.fd < 0) {
        snprintf(err, errlen, "Opening the temp file for AOF rewrite in rewriteAppendOnlyFile(): %s", strerror(errno));
        return -1;
    }
    write_functions(&w);
    for (int i = 0; i < db_count(); i++) {
        db *d = db_get(i);
        if (!dict_size(&d->keys)) continue;
        char num[24];
        span argv[2] = {{"SELECT", 6}, {num, ll_to_str(num, i)}};
        add_command(&w, 2, argv);
        dict_foreach(&d->keys, key_cb, &w);
    }
    flush_out(&w);
    if (!w.failed && fsync(w.fd) != 0) w.failed = errno;
    close(w.fd);
    sb_free(&w.b);
    if (w.failed) {
        snprintf(err, errlen, "Write error writing append only file on disk: %s", strerror(w.failed));
        unlink(path);
        return -1;
    }
    return 0;
}
