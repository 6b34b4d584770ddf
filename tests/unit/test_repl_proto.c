/* test_repl_proto.c - Criterion unit tests for src/repl/repl_proto.c (a
 * replica's parsers of its primary's PSYNC answer and snapshot framing).
 *
 * Why: these bytes come from a network peer; a signed or truncated length
 * taken at face value would make the replica read the command stream as
 * snapshot bytes (or wait forever), and a mark found one byte early would
 * cut the snapshot short. The tests pin every accepted form and the
 * malformed ones next to them, and the end-of-stream mark split at every
 * point.
 */
#include <criterion/criterion.h>
#include <string.h>

#include "repl_proto.h"

#define ID "0123456789abcdef0123456789abcdef01234567"

static int psync(const char *s, psync_reply *r) { return repl_parse_psync_reply(s, strlen(s), r); }

Test(repl_proto, psync_replies) {
    psync_reply r;
    cr_assert_eq(psync("+FULLRESYNC " ID " 0", &r), PSYNC_FULL);
    cr_assert_str_eq(r.id, ID);
    cr_assert_eq(r.offset, 0);
    cr_assert_eq(psync("+FULLRESYNC " ID " 987654321", &r), PSYNC_FULL);
    cr_assert_eq(r.offset, 987654321);
    cr_assert_eq(psync("+CONTINUE", &r), PSYNC_CONTINUE);
    cr_assert_eq(r.has_id, 0);
    cr_assert_eq(psync("+CONTINUE " ID, &r), PSYNC_CONTINUE);
    cr_assert(r.has_id);
    cr_assert_str_eq(r.id, ID);
    cr_assert_eq(psync("", &r), PSYNC_KEEPALIVE);
    cr_assert_eq(psync("-NOMASTERLINK Can't SYNC while not connected with my master", &r), PSYNC_ERROR);
    cr_assert_eq(psync("-LOADING", &r), PSYNC_ERROR);
}

Test(repl_proto, psync_malformed) {
    psync_reply r;
    const char *bad[] = {
        "+FULLRESYNC", "+FULLRESYNC " ID, "+FULLRESYNC " ID " ", "+FULLRESYNC " ID " -1", "+FULLRESYNC " ID " 12x",
        "+FULLRESYNC 0123 5", "+FULLRESYNC " ID "0 5", "+FULLRESYNC " ID " 1234567890123456789",
        "+FULLRESYNC 0123456789abcdef0123456789abcdef0123456! 1", "+CONTINUE ", "+CONTINUE " ID "x", "+CONTINUEX",
        "+OK", "$5", "FULLRESYNC " ID " 1",
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
        cr_assert_eq(psync(bad[i], &r), PSYNC_BAD, "%s", bad[i]);
}

Test(repl_proto, bulk_headers) {
    long long size = -5;
    char mark[REPL_MARK_LEN];
    cr_assert_eq(repl_parse_bulk_header("$0", 2, &size, mark), 1);
    cr_assert_eq(size, 0);
    cr_assert_eq(repl_parse_bulk_header("$175", 4, &size, mark), 1);
    cr_assert_eq(size, 175);
    cr_assert_eq(repl_parse_bulk_header("", 0, &size, mark), 0);
    cr_assert_eq(repl_parse_bulk_header("$EOF:" ID, 45, &size, mark), 2);
    cr_assert_eq(memcmp(mark, ID, 40), 0);
    const char *bad[] = {"$", "$-1", "$+5", "$ 5", "$5 ", "$1x", "$EOF:", "$EOF:" ID "8", "$EOF:0123", "*3", "+OK",
                         "$1234567890123456789"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
        cr_assert_eq(repl_parse_bulk_header(bad[i], strlen(bad[i]), &size, mark), -1, "%s", bad[i]);
}

Test(repl_proto, eof_mark_at_every_split) {
    const char *body = "REDIS0010....some snapshot bytes....";
    for (size_t split = 0; split <= REPL_MARK_LEN; split++) {
        char tail[REPL_MARK_LEN] = {0};
        long long seen = 0;
        repl_tail_push(tail, body, strlen(body));
        seen += (long long)strlen(body);
        repl_tail_push(tail, ID, split);
        seen += (long long)split;
        if (split < REPL_MARK_LEN) cr_assert_not(repl_tail_is_mark(tail, seen, ID), "split %zu", split);
        repl_tail_push(tail, ID + split, REPL_MARK_LEN - split);
        seen += (long long)(REPL_MARK_LEN - split);
        cr_assert(repl_tail_is_mark(tail, seen, ID), "split %zu", split);
    }
}

Test(repl_proto, mark_needs_forty_bytes_seen) {
    char tail[REPL_MARK_LEN];
    memcpy(tail, ID, REPL_MARK_LEN); /* stale bytes from before: not a match until 40 were received */
    cr_assert_not(repl_tail_is_mark(tail, 39, ID));
    cr_assert(repl_tail_is_mark(tail, 40, ID));
}
