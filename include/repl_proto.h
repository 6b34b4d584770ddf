/* repl_proto.h - the replies a replica parses from its primary during the
 * handshake and the snapshot transfer, as pure functions over (line, len):
 * the PSYNC answer, the snapshot's bulk header ("$<len>" or
 * "$EOF:<40-byte mark>") and the end-of-stream mark of a diskless
 * transfer. A primary is a peer on the network: every field is checked,
 * nothing is trusted (repl_proto.c; fuzz/fuzz_repl_proto.c). */
#ifndef FERRY_REPL_PROTO_H
#define FERRY_REPL_PROTO_H

#include <stddef.h>

#define REPL_ID_LEN 40
#define REPL_MARK_LEN 40

enum {
    PSYNC_BAD = -1,             /* not a reply PSYNC can get */
    PSYNC_KEEPALIVE = 0,        /* an empty line: a primary busy preparing the snapshot */
    PSYNC_FULL = 1,             /* +FULLRESYNC <id> <offset> */
    PSYNC_CONTINUE = 2,         /* +CONTINUE [<id>] (has_id 0 for a pre-PSYNC2 primary) */
    PSYNC_ERROR = 3,            /* -... (NOMASTERLINK, LOADING, NOPERM, an old primary's ERR) */
};

typedef struct psync_reply {
    char id[REPL_ID_LEN + 1];
    int has_id;
    long long offset;
} psync_reply;

/* The PSYNC answer in line[0..len) (CRLF removed). */
int repl_parse_psync_reply(const char *line, size_t len, psync_reply *out);

/* The snapshot's bulk header: 1 with *size (>= 0) for "$<len>", 2 with the
 * mark for "$EOF:<mark>", 0 for an empty keep-alive line, -1 otherwise. */
int repl_parse_bulk_header(const char *line, size_t len, long long *size, char mark[REPL_MARK_LEN]);

/* A diskless transfer ends when the last 40 bytes received are the mark:
 * tail keeps those bytes across reads (seen counts all bytes so far). */
void repl_tail_push(char tail[REPL_MARK_LEN], const char *p, size_t n);
int repl_tail_is_mark(const char tail[REPL_MARK_LEN], long long seen, const char mark[REPL_MARK_LEN]);

#endif
