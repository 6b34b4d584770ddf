/* aside.c - big bulk arguments read into blocks of their own (aside.h).
 *
 * Why: a SET of a 64 KB value used to cost the kernel's copy into the query
 * buffer, moves of the request's tail to the buffer's front, and the copy
 * of the value into the key's node; a 64 MB value also held twice its size
 * at the peak (the grown query buffer and the node). Redis avoids the last
 * copy for arguments of 32 KB or more by reading them into a buffer of
 * their own that becomes the stored object. So does ferry, with the same
 * threshold:
 *
 *   - When a pass over a client's input ends inside the payload of a bulk
 *     of ASIDE_MIN bytes or more, the part present moves into a block and
 *     the query buffer keeps only the request's other bytes. The next reads
 *     go into the block and take no more than the payload and its CRLF, so
 *     the block holds exactly one argument. On a plain socket the read that
 *     completes the payload also takes a few KB after it into the query
 *     buffer (client.c, read_into_block: one readv), so a pipeline of big
 *     SETs costs one read per request and no copy of its values: each read
 *     ends inside the next payload, which gets its block in turn. Over TLS
 *     (one record at a time, no readv) a block is started only when less
 *     than half of the payload has arrived; otherwise the copy out of the
 *     query buffer is cheaper than the extra reads.
 *   - The block starts with room for a keyspace node's header and key
 *     (db_string_block_head), shaped for the SET family: the key is the
 *     second argument, the value the third (SET, GETSET, SETNX; an expiry
 *     slot when at least five arguments are declared, as SET k v EX n) or
 *     the fourth (SETEX, PSETEX: with an expiry). When the command stores
 *     exactly that shape, db_set_string_block takes the block as the node:
 *     the value is never copied. Any other command reads the argument in
 *     place, as it would in the query buffer.
 *   - Trust: a block is allocated for at most twice what the client held
 *     recently (qpeak), the longest block it has filled before, or
 *     ASIDE_TRUST_MIN, then doubles as bytes arrive, so a stalled 512 MB
 *     declaration costs what was sent (the query buffer's rule, client.c's
 *     read_room), while a client that stores big values again and again
 *     gets its block at once, without regrowing it for every value.
 *   - When the payload is complete the parser records the argument
 *     (resp_parse_take_bulk) and resumes in the query buffer after it; a
 *     request can have up to ASIDE_MAX_ARGS blocks (MSET of big values).
 *     Once complete, the request's argument offsets are copied here
 *     (aside_ready) so that a request held by CLIENT PAUSE runs later from
 *     the same state; the window runs it alone, then aside_done frees the
 *     blocks nobody took.
 *   - A spare block: once the keyspace took a block, a new one of the same
 *     size is set aside for the client's next big argument, as Redis
 *     allocates a new query buffer of the argument's size after handing
 *     the old one over (a client that stored one big value is likely to
 *     store another; an untouched allocation costs no resident memory). A
 *     block nobody took becomes the spare itself. CLIENT LIST shows it as
 *     qbuf-free, and the clients cron frees it with the query buffer's rule
 *     (idle 2 s, or a recent peak under half its size).
 *   - Only ordinary connections: the link to our primary passes each
 *     request's bytes on to our own replicas as they came, so its requests
 *     stay whole in the buffer.
 */
#include "aside.h"

#include "db.h"
#include "server.h"
#include "zmalloc.h"

#include <string.h>

#define ASIDE_TRUST_MIN (64 * 1024)

static size_t block_head(const client *c, size_t argi, size_t len) {
    if (argi < 2 || argi > 3) return 0;
    return db_string_block_head(c->parser.argv[1].len, len, argi == 3 || c->parser.declared >= 5);
}

static int eligible(const client *c, size_t have) {
    const resp_parser *p = &c->parser;
    size_t end = resp_parse_bulk_end(p);
    if (!end || p->bulk_len < ASIDE_MIN || c->fd < 0 || c->repl_role != CLIENT_REPL_NONE) return 0;
    if (c->aside && (c->aside->n >= ASIDE_MAX_ARGS || c->aside->filling || c->aside->ready)) return 0;
    size_t present = have > p->pos ? have - p->pos : 0;
    return present < (size_t)p->bulk_len / 2 || (!c->tls && present < (size_t)p->bulk_len);
}

size_t aside_begin(client *c, const char *req, size_t have) {
    if (!eligible(c, have)) return 0;
    const resp_parser *p = &c->parser;
    size_t len = (size_t)p->bulk_len, want = len + 2, present = have - p->pos;
    size_t head = block_head(c, p->argc, len);
    size_t trust = 2 * c->qpeak > ASIDE_TRUST_MIN ? 2 * c->qpeak : ASIDE_TRUST_MIN;
    if (trust < c->aside_trust) trust = c->aside_trust;
    size_t cap = want < trust ? want : trust;
    if (cap < present) cap = present;
    if (!c->aside) c->aside = zcalloc(sizeof *c->aside);
    client_aside *a = c->aside;
    aside_arg *g = &a->arg[a->n];
    if (c->aside_spare && zmalloc_size(c->aside_spare) >= head + cap) {
        g->mem = c->aside_spare;
        c->aside_spare = NULL;
        size_t need = head + want;
        if (zmalloc_size(g->mem) > need + need / 10)
            g->mem = zrealloc(g->mem, need); /* a smaller value than the last: a key keeps no slack */
        cap = zmalloc_size(g->mem) - head < want ? zmalloc_size(g->mem) - head : want;
    } else {
        g->mem = zmalloc(head + cap);
    }
    g->head = head;
    g->len = len;
    g->argi = p->argc;
    memcpy(g->mem + head, req + p->pos, present);
    a->cap = cap;
    a->got = present;
    a->filling = 1;
    return p->pos;
}

char *aside_read_room(client *c, size_t *room) {
    client_aside *a = c->aside;
    aside_arg *g = &a->arg[a->n];
    size_t want = g->len + 2;
    if (a->got == a->cap) {
        size_t cap = a->cap * 2 < want ? a->cap * 2 : want;
        g->mem = zrealloc(g->mem, g->head + cap);
        a->cap = cap;
    }
    *room = a->cap - a->got;
    return g->mem + g->head + a->got;
}

size_t aside_missing(const client *c) {
    const client_aside *a = c->aside;
    return a->arg[a->n].len + 2 - a->got;
}

int aside_received(client *c, size_t n) {
    client_aside *a = c->aside;
    a->got += n;
    if (a->got < a->arg[a->n].len + 2) return 0;
    if (a->got > c->aside_trust) c->aside_trust = a->got;
    a->filling = 0;
    a->n++;
    return 1;
}

void aside_ready(client *c, size_t req_len) {
    client_aside *a = c->aside;
    a->ready = 1;
    a->req_len = req_len;
    a->argc = c->parser.argc;
    a->args = zmalloc(sizeof(resp_arg) * a->argc);
    memcpy(a->args, c->parser.argv, sizeof(resp_arg) * a->argc);
}

span aside_span(const client *c, const char *base, size_t i) {
    const client_aside *a = c->aside;
    for (int k = 0; k < a->n; k++)
        if (a->arg[k].argi == i) return (span){a->arg[k].mem + a->arg[k].head, a->arg[k].len};
    return (span){base + a->args[i].off, a->args[i].len};
}

/* The spare (when there is none yet): the biggest block left over, or, if
 * it is smaller than the biggest block the keyspace took, a new one that
 * size. Other blocks are freed. */
static void keep_spare(client *c, char *left, size_t taken) {
    if (c->aside_spare || (left && zmalloc_size(left) < taken)) {
        zfree(left);
        left = NULL;
    }
    if (!c->aside_spare && (left || taken)) c->aside_spare = left ? left : zmalloc(taken);
}

void aside_done(client *c) {
    client_aside *a = c->aside;
    if (!a) return;
    char *left = NULL;
    size_t taken = 0;
    for (int k = 0; k < a->n; k++) {
        aside_arg *g = &a->arg[k];
        size_t size = g->head + g->len + 2;
        if (!g->mem) {
            if (size > taken) taken = size;
        } else if (!left || zmalloc_size(g->mem) > zmalloc_size(left)) {
            zfree(left);
            left = g->mem;
        } else {
            zfree(g->mem);
        }
    }
    keep_spare(c, left, taken);
    zfree(a->args);
    zfree(a);
    c->aside = NULL;
}

void aside_free(client *c) {
    client_aside *a = c->aside;
    if (a) {
        for (int k = 0; k < a->n; k++) zfree(a->arg[k].mem);
        if (a->filling) zfree(a->arg[a->n].mem);
        zfree(a->args);
        zfree(a);
        c->aside = NULL;
    }
    zfree(c->aside_spare);
    c->aside_spare = NULL;
}

size_t aside_spare_size(const client *c) { return c->aside_spare ? zmalloc_size(c->aside_spare) : 0; }

void aside_cron(client *c) {
    size_t n = aside_spare_size(c);
    if (!n) return;
    if (srv.now_ms - c->last_interaction_ms > 2000 || n / 2 > c->qpeak) {
        zfree(c->aside_spare);
        c->aside_spare = NULL;
    }
}

size_t aside_bytes(const client *c) {
    const client_aside *a = c->aside;
    if (!a) return 0;
    size_t n = a->filling ? a->got : 0;
    for (int k = 0; k < a->n; k++)
        if (a->arg[k].mem) n += a->arg[k].len;
    return n;
}

void *client_take_block(client *c, const char *p, size_t head) {
    client_aside *a = c->aside;
    if (!a || !a->ready) return NULL;
    for (int k = 0; k < a->n; k++) {
        aside_arg *g = &a->arg[k];
        if (g->mem && g->head == head && g->mem + head == p) {
            void *blk = g->mem;
            g->mem = NULL;
            return blk;
        }
    }
    return NULL;
}
