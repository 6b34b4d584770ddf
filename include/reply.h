/* reply.h - staging replies in a client's output ring, in RESP2 or RESP3
 * depending on the client's protocol. Nothing here does I/O: replies are
 * flushed once per loop iteration. */
#ifndef FERRY_REPLY_H
#define FERRY_REPLY_H

#include <stddef.h>
#include "client.h"
#include "dict.h"

/* A command of a replica's link (to us, its primary) made a reply, which
 * is dropped: the replication layer's hook reports it and closes the link. */
typedef void reply_to_replica_fn(client *c);
void reply_set_replica_hook(reply_to_replica_fn *fn);

void reply_raw(client *c, const char *s, size_t n);
void reply_ok(client *c);                               /* +OK */
void reply_status(client *c, const char *s);            /* +s */
/* Error replies: text without the leading '-' and without CRLF, e.g.
 * "ERR syntax error" or "WRONGTYPE Operation ...". CR/LF inside are replaced
 * by spaces. Counted in error stats by prefix (first word). */
void reply_error(client *c, const char *s);
/* An error already counted in INFO's error stats (a script passing on the
 * error of a command it called): sent without being counted again. */
void reply_error_counted(client *c, const char *s, size_t n);
/* Counts an error that is not sent (a script's redis.call refused before
 * the command ran: the script gets it as a Lua value). */
void reply_count_error(const char *s);
void reply_errorf(client *c, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void reply_int(client *c, long long v);
void reply_bulk(client *c, const char *p, size_t n);
void reply_bulk_cstr(client *c, const char *s);
/* The string value of a keyspace node as a bulk; a big one is sent from
 * the node's own memory (outbuf.h). */
void reply_bulk_value(client *c, dnode *n);
void reply_bulk_ll(client *c, long long v);
void reply_null(client *c);                             /* $-1 / _ */
void reply_null_array(client *c);                       /* *-1 / _ */
void reply_array(client *c, long n);
void reply_map(client *c, long n);                      /* RESP2: *2n */
void reply_set(client *c, long n);                      /* RESP2: *n */
void reply_push(client *c, long n);                     /* RESP2: *n */
void reply_double(client *c, double d);                 /* RESP2: bulk, RESP3: , */
void reply_bool(client *c, int b);                      /* RESP2: :0/:1, RESP3: #t/#f */
void reply_verbatim(client *c, const char *p, size_t n, const char *ext); /* RESP3 =, RESP2 bulk */
void reply_bulk_span(client *c, span s);
/* A NULL-terminated list of lines as an array of status replies (HELP). */
void reply_help(client *c, const char *const *lines);

/* Common errors (Redis texts) */
void reply_err_arity(client *c);                        /* wrong number of arguments for '%s' command */
void reply_err_syntax(client *c);                       /* ERR syntax error */
void reply_err_wrongtype(client *c);
void reply_err_notint(client *c);                       /* ERR value is not an integer or out of range */
void reply_err_notfloat(client *c);                     /* ERR value is not a valid float */

/* Shared constant replies */
extern const char RESP_OK[], RESP_PONG[], RESP_NULLBULK[], RESP_ZERO[], RESP_ONE[], RESP_QUEUED[];

/* Error stats by prefix ("ERR", "WRONGTYPE" ...), for INFO errorstats. */
typedef struct errstat { char name[32]; unsigned long long count; } errstat;
extern errstat g_errstats[128];
extern int g_nerrstats;
void errstats_reset(void);

#endif
