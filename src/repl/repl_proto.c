/* repl_proto.c - a replica's parsers of its primary's handshake replies
 * and snapshot framing (see repl_proto.h). */
#include "repl_proto.h"
#include <string.h>

/* A decimal without sign in p[0..n), at most 18 digits. 1 and *v, or 0. */
static int parse_uint(const char *p, size_t n, long long *v) {
    if (n == 0 || n > 18) return 0;
    long long x = 0;
    for (size_t i = 0; i < n; i++) {
        if (p[i] < '0' || p[i] > '9') return 0;
        x = x * 10 + (p[i] - '0');
    }
    *v = x;
    return 1;
}

static int is_id(const char *p, size_t n) {
    if (n != REPL_ID_LEN) return 0;
    for (size_t i = 0; i < n; i++)
        if (!((p[i] >= '0' && p[i] <= '9') || (p[i] >= 'a' && p[i] <= 'z') || (p[i] >= 'A' && p[i] <= 'Z'))) return 0;
    return 1;
}

static int starts(const char *line, size_t len, const char *lit) {
    size_t n = strlen(lit);
    return len >= n && memcmp(line, lit, n) == 0;
}

int repl_parse_psync_reply(const char *line, size_t len, psync_reply *out) {
    memset(out, 0, sizeof *out);
    if (len == 0) return PSYNC_KEEPALIVE;
    if (line[0] == '-') return PSYNC_ERROR;
    if (starts(line, len, "+FULLRESYNC ")) {
        const char *p = line + 12, *end = line + len;
        const char *sp = memchr(p, ' ', (size_t)(end - p));
        if (!sp || !is_id(p, (size_t)(sp - p)) || !parse_uint(sp + 1, (size_t)(end - sp - 1), &out->offset))
            return PSYNC_BAD;
        memcpy(out->id, p, REPL_ID_LEN);
        out->has_id = 1;
        return PSYNC_FULL;
    }
    if (len == 9 && memcmp(line, "+CONTINUE", 9) == 0) return PSYNC_CONTINUE;
    if (starts(line, len, "+CONTINUE ")) {
        if (!is_id(line + 10, len - 10)) return PSYNC_BAD;
        memcpy(out->id, line + 10, REPL_ID_LEN);
        out->has_id = 1;
        return PSYNC_CONTINUE;
    }
    return PSYNC_BAD;
}

int repl_parse_bulk_header(const char *line, size_t len, long long *size, char mark[REPL_MARK_LEN]) {
    if (len == 0) return 0;
    if (line[0] != '$') return -1;
    if (len == 5 + REPL_MARK_LEN && memcmp(line + 1, "EOF:", 4) == 0) {
        memcpy(mark, line + 5, REPL_MARK_LEN);
        return 2;
    }
    return parse_uint(line + 1, len - 1, size) ? 1 : -1;
}

void repl_tail_push(char tail[REPL_MARK_LEN], const char *p, size_t n) {
    if (n >= REPL_MARK_LEN) {
        memcpy(tail, p + n - REPL_MARK_LEN, REPL_MARK_LEN);
        return;
    }
    memmove(tail, tail + n, REPL_MARK_LEN - n);
    memcpy(tail + REPL_MARK_LEN - n, p, n);
}

int repl_tail_is_mark(const char tail[REPL_MARK_LEN], long long seen, const char mark[REPL_MARK_LEN]) {
    return seen >= REPL_MARK_LEN && memcmp(tail, mark, REPL_MARK_LEN) == 0;
}
