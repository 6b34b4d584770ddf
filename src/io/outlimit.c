/* outlimit.c - output buffer limits (see outlimit.h).
 *
 * Why: replies are staged in a client's ring until the socket takes them,
 * and a client is never stopped from sending more because it reads nothing
 * (client.c), so these limits, with maxmemory-clients and maxmemory, are
 * what bounds the memory a client's unread replies take, as on Redis. The
 * checks run where the ring must grow (reply.c), after each pass over a
 * client's input (client.c) and from the cron (main.c, as Redis 7's clients
 * cron), so the memory a non-reading client can pin is bounded by about
 * twice its hard limit, and a soft limit is enforced even when the client
 * sends nothing more.
 *
 * Difference from Redis 7.0, kept on purpose: the soft limit is timed in
 * milliseconds (Redis: whole seconds).
 */
#include "outlimit.h"
#include "config.h"
#include "server.h"

int client_output_class(const client *c) {
    if (c->repl_role == CLIENT_REPL_REPLICA) return COB_REPLICA;
    if (c->repl_role == CLIENT_REPL_MASTER) return COB_NORMAL;
    return (c->flags & CF_PUBSUB) ? COB_PUBSUB : COB_NORMAL;
}

/* Redis logs "scheduled to be closed ASAP" where output is added and
 * "closed" from its clients cron, which frees the client at once; ferry
 * frees it before the loop sleeps in both cases, and logs as Redis does. */
static void close_for_limits(client *c, int from_cron) {
    char info[1024];
    client_info_line(c, info, sizeof info);
    server_log(LOG_WARNING_, "Client %s %s for overcoming of output buffer limits.", info,
               from_cron ? "closed" : "scheduled to be closed ASAP");
    client_close_async(c);
}

/* Soft limit bookkeeping: 1 when it has been exceeded for too long. */
static int soft_limit_breached(client *c, const cob_limit *lim, unsigned long long used) {
    if (!lim->soft || used < lim->soft) {
        c->cob_soft_since_ms = 0;
        return 0;
    }
    if (c->cob_soft_since_ms == 0) {
        c->cob_soft_since_ms = srv.now_ms ? srv.now_ms : 1;
        return 0;
    }
    /* soft_seconds <= INT_MAX (config), so this cannot overflow */
    return srv.now_ms - c->cob_soft_since_ms > lim->soft_seconds * 1000;
}

int client_output_over_limits_extra(client *c, size_t extra) {
    unsigned long long staged = (unsigned long long)client_out_used(c) + extra;
    unsigned long long used = staged > OUTPUT_STATIC_ALLOWANCE ? staged - OUTPUT_STATIC_ALLOWANCE : 0;
    int cls = client_output_class(c);
    const cob_limit *lim = &srv.cfg.cob[cls];
    unsigned long long hard = lim->hard;
    /* A replica's hard limit below the backlog's size would close a replica that a partial resync just
     * accepted: that size applies instead, as Redis does (its stream is in the shared buffer anyway). */
    if (cls == COB_REPLICA && hard && c->stream.rb && hard < c->stream.rb->limit) hard = c->stream.rb->limit;
    int breach = (hard && used >= hard) || (used > 0 && client_auth_required(c));
    if (soft_limit_breached(c, lim, used)) breach = 1;
    return breach;
}

static int check_limits(client *c, size_t extra, int from_cron) {
    if (c->flags & CF_CLOSE_ASAP) return 1;
    if (c->flags & CF_FAKE) return 0;
    if (!client_output_over_limits_extra(c, extra)) return 0;
    close_for_limits(c, from_cron);
    return 1;
}

int client_check_output_limits_extra(client *c, size_t extra) { return check_limits(c, extra, 0); }
int client_check_output_limits_cron(client *c) { return check_limits(c, 0, 1); }
