/* fuzz_repl_proto.c - libFuzzer target for a replica's parsers of its
 * primary's replies (src/repl/repl_proto.c).
 *
 * Why: a replica reads these lines from a peer on the network (or from
 * whatever listens where REPLICAOF points); a PSYNC answer or bulk header
 * that is cut short, overlong, signed or malformed must be refused, never
 * read out of bounds or turned into a negative transfer size. Every input
 * is copied into an exact-size heap block so ASan flags any overread.
 * Checks:
 *  - +FULLRESYNC gives a 40-byte id of letters and digits and an offset >= 0;
 *    +CONTINUE with an id gives 40 such bytes;
 *  - "$<len>" gives a size >= 0 whose digits reprint as the input;
 *  - the EOF tail: the mark pushed in pieces of any sizes after any bytes is
 *    recognized, and it is not recognized one byte early.
 *
 * Build: make build/fuzz/fuzz_repl_proto
 * Run:   build/fuzz/fuzz_repl_proto -max_total_time=30 DIR (a scratch copy of
 *        fuzz/corpus/repl_proto)
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz_check.h"
#include "repl_proto.h"

static int alnum(char c) { return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'); }

static void check_psync(const char *p, size_t n) {
    psync_reply r;
    int k = repl_parse_psync_reply(p, n, &r);
    CHECK(k >= PSYNC_BAD && k <= PSYNC_ERROR);
    if (k == PSYNC_FULL || (k == PSYNC_CONTINUE && r.has_id)) {
        CHECK(strlen(r.id) == REPL_ID_LEN);
        for (int i = 0; i < REPL_ID_LEN; i++) CHECK(alnum(r.id[i]));
    }
    if (k == PSYNC_FULL) CHECK(r.offset >= 0);
    if (k == PSYNC_KEEPALIVE) CHECK(n == 0);
}

static void check_header(const char *p, size_t n) {
    long long size = -7;
    char mark[REPL_MARK_LEN];
    int h = repl_parse_bulk_header(p, n, &size, mark);
    CHECK(h >= -1 && h <= 2);
    if (h == 1) {
        char buf[32];
        int k = snprintf(buf, sizeof buf, "$%lld", size);
        CHECK(size >= 0);
        CHECK((size_t)k <= n); /* leading zeros may make the input longer */
    }
    if (h == 2) CHECK(memcmp(mark, p + 5, REPL_MARK_LEN) == 0);
}

/* The mark, after the input's bytes, fed in pieces sized by the input. */
static void check_tail(const uint8_t *data, size_t n) {
    static const char mark[REPL_MARK_LEN + 1] = "0123456789abcdefghij0123456789ABCDEFGHIJ";
    char tail[REPL_MARK_LEN] = {0};
    long long seen = 0;
    size_t off = 0;
    while (off < n) { /* the input itself, in pieces of 1..8 bytes */
        size_t k = 1 + data[off] % 8;
        if (k > n - off) k = n - off;
        repl_tail_push(tail, (const char *)data + off, k);
        seen += (long long)k;
        off += k;
    }
    size_t step = n ? 1 + data[0] % 13 : 5;
    for (size_t i = 0; i < REPL_MARK_LEN; i += step) {
        size_t k = step < REPL_MARK_LEN - i ? step : REPL_MARK_LEN - i;
        if (i + k == REPL_MARK_LEN && k > 1) { /* one byte short must not match (unless the input ends so) */
            repl_tail_push(tail, mark + i, k - 1);
            seen += (long long)(k - 1);
            repl_tail_push(tail, mark + i + k - 1, 1);
            seen += 1;
        } else {
            repl_tail_push(tail, mark + i, k);
            seen += (long long)k;
        }
    }
    CHECK(repl_tail_is_mark(tail, seen, mark));
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    char *p = malloc(size ? size : 1);
    memcpy(p, data, size);
    check_psync(p, size);
    check_header(p, size);
    free(p);
    /* the same bytes behind the replies' prefixes, so the fields are reached */
    static const char *const prefixes[] = {"+FULLRESYNC ", "+CONTINUE ", "$", "$EOF:"};
    for (size_t i = 0; i < sizeof prefixes / sizeof prefixes[0]; i++) {
        size_t pl = strlen(prefixes[i]);
        char *q = malloc(pl + size);
        memcpy(q, prefixes[i], pl);
        memcpy(q + pl, data, size);
        check_psync(q, pl + size);
        check_header(q, pl + size);
        free(q);
    }
    check_tail(data, size);
    return 0;
}
