/* aof_manifest.c - the append-only file's manifest: reading, writing
 * atomically, naming (see aof_manifest.h). The line format is parsed by
 * aof_parse.c; this file does the file system side. */
#include "aof_manifest.h"
#include "aof_parse.h"
#include "sbuf.h"
#include "zmalloc.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

void aof_path(char *buf, size_t cap, const char *dir, const char *name) { snprintf(buf, cap, "%s/%s", dir, name); }

static char *name_printf(const char *fmt, const char *fname, long long seq) {
    sbuf b = {0};
    sb_addf(&b, fmt, fname, seq);
    return sb_take(&b);
}

char *aof_incr_name(const char *fname, long long seq) { return name_printf("%s.%lld.incr.aof", fname, seq); }

char *aof_base_name(const char *fname, long long seq, int rdb) {
    return name_printf(rdb ? "%s.%lld.base.rdb" : "%s.%lld.base.aof", fname, seq);
}

char *aof_manifest_name(const char *fname) {
    sbuf b = {0};
    sb_addf(&b, "%s.manifest", fname);
    return sb_take(&b);
}

void aof_sync_dir(const char *dirpath) {
    int fd = open(dirpath, O_RDONLY);
    if (fd < 0) return;
    fsync(fd);
    close(fd);
}

void aof_manifest_add_incr(aof_manifest *m, char *name, long long seq) {
    if (m->nincr == m->capincr) {
        m->capincr = m->capincr ? m->capincr * 2 : 4;
        m->incr = zrealloc(m->incr, sizeof *m->incr * (size_t)m->capincr);
    }
    m->incr[m->nincr++] = (aof_file){name, seq};
    if (seq > m->incr_seq) m->incr_seq = seq;
}

void aof_manifest_free(aof_manifest *m) {
    zfree(m->base.name);
    for (int i = 0; i < m->nincr; i++) zfree(m->incr[i].name);
    zfree(m->incr);
    *m = (aof_manifest){0};
}

void aof_manifest_copy(aof_manifest *dst, const aof_manifest *src) {
    *dst = (aof_manifest){.base = {src->base.name ? zstrdup(src->base.name) : NULL, src->base.seq},
                          .base_seq = src->base_seq, .incr_seq = src->incr_seq};
    for (int i = 0; i < src->nincr; i++) aof_manifest_add_incr(dst, zstrdup(src->incr[i].name), src->incr[i].seq);
}

static char *read_file(const char *path, size_t *len, int *missing) {
    *missing = 0;
    int fd = open(path, O_RDONLY);
    if (fd < 0) {
        *missing = errno == ENOENT;
        return NULL;
    }
    sbuf b = {0};
    char chunk[4096];
    ssize_t n;
    while ((n = read(fd, chunk, sizeof chunk)) > 0) sb_add(&b, chunk, (size_t)n);
    close(fd);
    if (n < 0) {
        sb_free(&b);
        return NULL;
    }
    *len = b.len;
    return sb_take(&b);
}

int aof_manifest_load(const char *dirpath, const char *name, aof_manifest *m, char *err, size_t errlen) {
    char path[4096];
    aof_path(path, sizeof path, dirpath, name);
    size_t len = 0;
    int missing;
    *m = (aof_manifest){0};
    char *buf = read_file(path, &len, &missing);
    if (!buf) {
        if (missing) return 1;
        snprintf(err, errlen, "Can't open the AOF manifest %s: %s", path, strerror(errno));
        return -1;
    }
    aof_manifest_line *lines = zmalloc(sizeof *lines * AOF_MANIFEST_MAX_LINES);
    int bad = 0, n = aof_manifest_parse(buf, len, lines, AOF_MANIFEST_MAX_LINES, &bad);
    int rc = 0;
    if (n < 0) {
        snprintf(err, errlen, "Invalid AOF manifest file format: %s, line %d", path, bad);
        rc = -1;
    }
    for (int i = 0; rc == 0 && i < n; i++) {
        aof_manifest_line *l = &lines[i];
        char *fname = zstrndup(l->name.p, l->name.len);
        if (l->type == AOF_FILE_BASE) {
            if (m->base.name) {
                snprintf(err, errlen, "Found duplicate base file information in the AOF manifest %s", path);
                zfree(fname);
                rc = -1;
                break;
            }
            m->base = (aof_file){fname, l->seq};
            if (l->seq > m->base_seq) m->base_seq = l->seq;
        } else if (l->type == AOF_FILE_INCR) {
            aof_manifest_add_incr(m, fname, l->seq);
        } else {
            zfree(fname); /* history: a file on its way out */
        }
    }
    zfree(lines);
    zfree(buf);
    if (rc) aof_manifest_free(m);
    return rc;
}

/* A name as a manifest token: bare when it has no byte that needs quoting. */
static void add_name(sbuf *b, const char *name) {
    for (const char *p = name; *p; p++)
        if (*p <= ' ' || *p == '"' || *p == '\'' || *p == '\\' || (unsigned char)*p >= 127) {
            sb_repr(b, name, strlen(name));
            return;
        }
    sb_adds(b, name);
}

static void add_line(sbuf *b, const aof_file *f, char type) {
    sb_adds(b, "file ");
    add_name(b, f->name);
    sb_addf(b, " seq %lld type %c\n", f->seq, type);
}

int aof_manifest_persist(const char *dirpath, const char *name, const aof_manifest *m, char *err, size_t errlen) {
    sbuf b = {0};
    if (m->base.name) add_line(&b, &m->base, 'b');
    for (int i = 0; i < m->nincr; i++) add_line(&b, &m->incr[i], 'i');
    char tmp[4200], path[4096];
    snprintf(tmp, sizeof tmp, "%s/temp-%s", dirpath, name);
    aof_path(path, sizeof path, dirpath, name);
    int fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC, 0644), rc = -1;
    if (fd >= 0) {
        ssize_t w = write(fd, b.p ? b.p : "", b.len);
        if (w == (ssize_t)b.len && fsync(fd) == 0) rc = 0;
        int e = errno;
        close(fd);
        errno = e;
    }
    if (rc == 0 && rename(tmp, path) != 0) rc = -1;
    if (rc) {
        snprintf(err, errlen, "Can't persist the AOF manifest %s: %s", path, strerror(errno));
        unlink(tmp);
    } else {
        aof_sync_dir(dirpath);
    }
    sb_free(&b);
    return rc;
}
