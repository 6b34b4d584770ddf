/* aof_parse.c - commands and manifest lines of the append-only file (see
 * aof_parse.h). Bounds-checked readers over bytes: every read is checked
 * against len first, numbers are parsed digit by digit with overflow
 * checks, and CRLF is found with memchr. */
#include "aof_parse.h"
#include "splitargs.h"
#include "util.h"

#include <string.h>
#include <strings.h>

/* A decimal number terminated by CRLF at p[0, len), 0..max: its value in
 * *out and the bytes up to and including the LF; AOF_INCOMPLETE / AOF_BAD. */
static ssize_t read_number_line(const char *p, size_t len, long long max, long long *out) {
    const char *cr = memchr(p, '\r', len < 21 ? len : 21);
    if (!cr) return len > 20 ? AOF_BAD : AOF_INCOMPLETE;
    size_t n = (size_t)(cr - p);
    long long v;
    if (!str_to_ll(p, n, &v) || v < 0 || v > max) return AOF_BAD;
    if (n + 1 >= len) return AOF_INCOMPLETE;
    if (p[n + 1] != '\n') return AOF_BAD;
    *out = v;
    return (ssize_t)(n + 2);
}

/* Annotation lines ('#' ... LF) at the start of buf: their length, or
 * AOF_INCOMPLETE if one is not finished. */
static ssize_t skip_annotations(const char *buf, size_t len) {
    size_t pos = 0;
    while (pos < len && buf[pos] == '#') {
        const char *lf = memchr(buf + pos, '\n', len - pos);
        if (!lf) return AOF_INCOMPLETE;
        pos = (size_t)(lf - buf) + 1;
    }
    return (ssize_t)pos;
}

ssize_t aof_parse_command(const char *buf, size_t len, span *argv, size_t cap, size_t *argc) {
    *argc = 0;
    ssize_t skip = skip_annotations(buf, len);
    if (skip < 0) return skip;
    size_t pos = (size_t)skip;
    if (pos == len) return (ssize_t)pos;
    if (buf[pos] != '*') return AOF_BAD;
    long long n;
    ssize_t r = read_number_line(buf + pos + 1, len - pos - 1, AOF_MAX_ARGS, &n);
    if (r < 0) return r;
    if (n < 1) return AOF_BAD;
    pos += 1 + (size_t)r;
    if ((size_t)n > cap) {
        *argc = (size_t)n;
        return AOF_MORE_ROOM;
    }
    for (long long i = 0; i < n; i++) {
        if (pos == len) return AOF_INCOMPLETE;
        if (buf[pos] != '$') return AOF_BAD;
        long long alen;
        r = read_number_line(buf + pos + 1, len - pos - 1, AOF_MAX_ARG_LEN, &alen);
        if (r < 0) return r;
        pos += 1 + (size_t)r;
        if (len - pos < (size_t)alen + 2) return AOF_INCOMPLETE;
        if (buf[pos + (size_t)alen] != '\r' || buf[pos + (size_t)alen + 1] != '\n') return AOF_BAD;
        argv[i] = (span){buf + pos, (size_t)alen};
        pos += (size_t)alen + 2;
    }
    *argc = (size_t)n;
    return (ssize_t)pos;
}

/* ---- manifest ---------------------------------------------------------------- */

#define MANIFEST_MAX_TOKENS 16

static int parse_seq(const char *p, size_t n, long long *out) {
    return str_to_ll(p, n, out) && *out > 0 ? 0 : -1;
}

/* One line (without its LF): 1 with *out filled, 0 if blank or a comment,
 * -1 if bad. Unknown keys are ignored, as Redis does. */
static int parse_line(char *line, size_t n, aof_manifest_line *out) {
    while (n && (line[n - 1] == '\r' || line[n - 1] == ' ' || line[n - 1] == '\t')) n--;
    size_t lead = 0;
    while (lead < n && (line[lead] == ' ' || line[lead] == '\t')) lead++;
    if (lead == n || line[lead] == '#') return 0;
    splitargs_span tok[MANIFEST_MAX_TOKENS];
    size_t at = 0;
    ssize_t got = splitargs(line, n, &at, 0, tok, MANIFEST_MAX_TOKENS);
    if (got < 6 || got % 2 || at != n) return -1;
    size_t ntok = (size_t)got;
    *out = (aof_manifest_line){{NULL, 0}, 0, 0};
    for (size_t i = 0; i < ntok; i += 2) {
        const char *k = line + tok[i].off, *v = line + tok[i + 1].off;
        size_t kl = tok[i].len, vl = tok[i + 1].len;
        if (kl == 4 && !strncasecmp(k, "file", 4)) {
            out->name = (span){v, vl};
        } else if (kl == 3 && !strncasecmp(k, "seq", 3)) {
            if (parse_seq(v, vl, &out->seq)) return -1;
        } else if (kl == 4 && !strncasecmp(k, "type", 4)) {
            if (vl != 1 || (v[0] != AOF_FILE_BASE && v[0] != AOF_FILE_HIST && v[0] != AOF_FILE_INCR)) return -1;
            out->type = (aof_file_type)v[0];
        }
    }
    if (!out->name.p || out->name.len == 0 || !out->seq || !out->type) return -1;
    if (memchr(out->name.p, '/', out->name.len) || memchr(out->name.p, '\0', out->name.len)) return -1;
    return 1;
}

int aof_manifest_parse(char *buf, size_t len, aof_manifest_line *out, int cap, int *bad_line) {
    int n = 0, lineno = 0;
    size_t pos = 0;
    while (pos < len) {
        char *lf = memchr(buf + pos, '\n', len - pos);
        size_t end = lf ? (size_t)(lf - buf) : len;
        lineno++;
        aof_manifest_line l;
        int r = parse_line(buf + pos, end - pos, &l);
        if (r < 0 || (r > 0 && n == cap)) {
            *bad_line = lineno;
            return -1;
        }
        if (r > 0) out[n++] = l;
        pos = end + 1;
    }
    return n;
}
