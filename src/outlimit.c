/* outlimit.c - client-output-buffer-limit enforcement (see outlimit.h).
 *
 * Staged output is what sits in the client's output ring. A client over its
 * class's hard limit, or over the soft limit continuously for more than
 * soft_seconds, is scheduled to be closed, with the line Redis logs. The
 * check lives apart from the pub/sub code so any producer of output (replies
 * to the normal class too) can reuse it.
 */
#include "outlimit.h"
#include "config.h"
#include "server.h"
#include "zmalloc.h"
#include <string.h>

int client_output_class(const client *c) { return (c->flags & CF_PUBSUB) ? COB_PUBSUB : COB_NORMAL; }

int client_output_over_limits(client *c) {
    const cob_limit *lim = &srv.cfg.cob[client_output_class(c)];
    unsigned long long used = ring_used(&c->out);
    if (lim->hard && used >= lim->hard) return 1;
    if (!lim->soft || used < lim->soft) {
        c->cob_soft_since_ms = 0;
        return 0;
    }
    if (c->cob_soft_since_ms == 0) { /* first time over the soft limit: start the clock */
        c->cob_soft_since_ms = srv.now_ms ? srv.now_ms : 1;
        return 0;
    }
    return srv.now_ms - c->cob_soft_since_ms > lim->soft_seconds * 1000;
}

static void log_limit_close(client *c) {
    size_t cap = 1024 + strlen(c->addr) + strlen(c->laddr);
    if (c->name) cap += strlen(c->name);
    if (c->lib_name) cap += strlen(c->lib_name);
    if (c->lib_ver) cap += strlen(c->lib_ver);
    char *info = zmalloc(cap);
    client_info_line(c, info, cap);
    server_log(LOG_WARNING_, "Client %s scheduled to be closed ASAP for overcoming of output buffer limits.", info);
    zfree(info);
}

int client_check_output_limits(client *c) {
    if (c->flags & (CF_FAKE | CF_CLOSE_ASAP)) return 0;
    if (ring_used(&c->out) == 0) {
        c->cob_soft_since_ms = 0;
        return 0;
    }
    if (!client_output_over_limits(c)) return 0;
    log_limit_close(c);
    client_close_async(c);
    return 1;
}
