/* aside.h - big bulk arguments read into blocks of their own (aside.c).
 *
 * A bulk argument of ASIDE_MIN bytes or more that has not mostly arrived
 * yet is not accumulated in the client's query buffer: its bytes go from
 * the socket straight into a block allocated for it, laid out so that the
 * keyspace can adopt the block as the key's node (SET, SETEX, GETSET ...
 * store the value without copying it). The query buffer keeps the rest of
 * the request (its headers and other arguments). */
#ifndef FERRY_ASIDE_H
#define FERRY_ASIDE_H

#include "client.h"

#include <sys/types.h>

#define ASIDE_MIN (32 * 1024)       /* Redis's PROTO_MBULK_BIG_ARG */
#define ASIDE_MAX_ARGS 8            /* blocks per request; later big arguments stay in the query buffer */

typedef struct aside_arg {
    char *mem;                      /* the block; NULL once the keyspace took it */
    size_t head;                    /* the payload starts at mem + head */
    size_t len;                     /* payload bytes */
    size_t argi;                    /* which argument of the request */
} aside_arg;

typedef struct client_aside {
    aside_arg arg[ASIDE_MAX_ARGS];
    int n;                          /* blocks complete */
    int filling;                    /* arg[n] is being received */
    size_t cap, got;                /* arg[n]: bytes allocated after head, bytes received (payload and CRLF) */
    int ready;                      /* the request is complete and waits to run (or is held by CLIENT PAUSE) */
    size_t req_len;                 /* its bytes in the query buffer */
    size_t argc;
    resp_arg *args;                 /* its arguments' offsets from the request's first byte (blocks: unused) */
} client_aside;

/* After a pass over pending input: if the parser awaits the payload of a
 * big bulk (see ASIDE_MIN) of the partial request at req (have bytes of it
 * present), moves what of the payload is present into a new block and
 * returns how many of the request's bytes the query buffer keeps; else 0. */
size_t aside_begin(client *c, const char *req, size_t have);
static inline int aside_filling(const client *c) { return c->aside && c->aside->filling; }
/* Where the next read goes while filling, and how much it may take: the
 * block grows by doubling as bytes arrive, never past its payload and CRLF,
 * and never by a declared length alone. */
char *aside_read_room(client *c, size_t *room);
/* Bytes the filling block still lacks: the rest of its payload and CRLF. */
size_t aside_missing(const client *c);
/* n bytes were read there. Returns 1 when the block is complete (the
 * request may then be complete too: aside_ready), 0 otherwise. */
int aside_received(client *c, size_t n);
/* The parser completed a request (req_len bytes in the query buffer) that
 * has blocks: its arguments are kept for aside_span until aside_done. */
void aside_ready(client *c, size_t req_len);
/* Argument i of the ready request whose query-buffer bytes start at base. */
span aside_span(const client *c, const char *base, size_t i);
/* The ready request ran: blocks the keyspace did not take are freed. */
void aside_done(client *c);
/* Bytes held in blocks (client memory, CLIENT LIST qbuf). */
size_t aside_bytes(const client *c);
/* The spare block's size (CLIENT LIST qbuf-free, client memory), 0 if none. */
size_t aside_spare_size(const client *c);
/* From the clients cron, with the query buffer's rule: the spare block goes
 * when the client has been idle for 2 seconds or its recent peak (qpeak)
 * is under half the block. Call before qpeak restarts. */
void aside_cron(client *c);
/* The client is freed: its blocks and spare go. */
void aside_free(client *c);

/* For the keyspace: the block holding argument bytes p, if its payload
 * starts head bytes into it; the caller takes it over (frees it). NULL if
 * p is not the start of such a block. */
void *client_take_block(client *c, const char *p, size_t head);

#endif
