/* tracking_cmd.c - the CLIENT subcommands of client-side caching: TRACKING,
 * CACHING, GETREDIR and TRACKINGINFO (their table rows are in cmd_conn.c
 * with the other CLIENT subcommands; the tables they change in
 * tracking.c).
 *
 * Option parsing, the order of the checks and every error text follow
 * Redis 7.0.15, including one of its quirks: a PREFIX that overlaps
 * another given PREFIX after the first one is reported as an error and
 * tracking is enabled all the same (the client reads the error, then +OK).
 */
#include "tracking.h"
#include "reply.h"
#include "server.h"
#include "util.h"
#include "zmalloc.h"
#include <string.h>

#define ERR_PREFIX_TAIL "Prefixes for a single client must not overlap."

/* A connected client by id (Redis's lookupClientByID: no fake clients). */
static client *connected_client(long long id) {
    for (client *t = srv.clients; t; t = t->next)
        if ((long long)t->id == id && !(t->flags & CF_FAKE)) return t;
    return NULL;
}

/* One prefix is a prefix of the other (the empty one overlaps all). */
static int overlaps(span a, span b) {
    size_t n = a.len < b.len ? a.len : b.len;
    return n == 0 || memcmp(a.p, b.p, n) == 0;
}

/* Redis formats the prefixes with %s: they end at a NUL byte. */
static int shown_len(span s) {
    const char *z = s.len ? memchr(s.p, '\0', s.len) : NULL;
    return (int)(z ? (size_t)(z - s.p) : s.len);
}

/* Checks the new prefixes against the client's and against each other.
 * Returns 0 when the error was replied and nothing is to be done; as Redis
 * 7.0, a collision among the given prefixes found from the second one on
 * returns non-zero after replying the error. */
static int check_prefixes(client *c, const span *p, int n) {
    size_t nold;
    const span *old = tracking_client_prefixes(c, &nold);
    for (int i = 0; i < n; i++) {
        for (size_t k = 0; k < nold; k++) {
            if (!overlaps(old[k], p[i])) continue;
            reply_errorf(c, "ERR Prefix '%.*s' overlaps with an existing prefix '%.*s'. " ERR_PREFIX_TAIL,
                         shown_len(p[i]), p[i].p, shown_len(old[k]), old[k].p);
            return 0;
        }
        for (int j = i + 1; j < n; j++) {
            if (!overlaps(p[i], p[j])) continue;
            reply_errorf(c, "ERR Prefix '%.*s' overlaps with another provided prefix '%.*s'. " ERR_PREFIX_TAIL,
                         shown_len(p[i]), p[i].p, shown_len(p[j]), p[j].p);
            return i;
        }
    }
    return 1;
}

/* REDIRECT's argument: 0 with the error replied when it is refused. */
static int parse_redirect(client *c, span arg, tracking_opts *o) {
    long long id;
    if (o->redirect != 0) {
        reply_error(c, "ERR A client can only redirect to a single other client");
        return 0;
    }
    if (!str_to_ll(arg.p, arg.len, &id)) {
        reply_err_notint(c);
        return 0;
    }
    o->target = connected_client(id);
    if (!o->target) {
        reply_error(c, "ERR The client ID you want redirect to does not exist");
        return 0;
    }
    o->redirect = (uint64_t)id;
    return 1;
}

/* The options after ON|OFF; 0 with the error replied. `prefixes` has room
 * for every argument. */
static int parse_options(client *c, tracking_opts *o, span *prefixes) {
    for (int j = 3; j < c->argc; j++) {
        int more = c->argc - 1 - j;
        span a = c->argv[j];
        if (span_eq_nocase(a, "redirect") && more) {
            if (!parse_redirect(c, c->argv[++j], o)) return 0;
        } else if (span_eq_nocase(a, "bcast")) {
            o->flags |= CF_TRACKING_BCAST;
        } else if (span_eq_nocase(a, "optin")) {
            o->flags |= CF_TRACKING_OPTIN;
        } else if (span_eq_nocase(a, "optout")) {
            o->flags |= CF_TRACKING_OPTOUT;
        } else if (span_eq_nocase(a, "noloop")) {
            o->flags |= CF_TRACKING_NOLOOP;
        } else if (span_eq_nocase(a, "prefix") && more) {
            prefixes[o->nprefixes++] = c->argv[++j];
        } else {
            reply_err_syntax(c);
            return 0;
        }
    }
    o->prefixes = prefixes;
    return 1;
}

/* The ON checks, in Redis's order; 0 with the error replied. */
static int check_on(client *c, const tracking_opts *o) {
    uint32_t f = o->flags;
    if (!(f & CF_TRACKING_BCAST) && o->nprefixes) {
        reply_error(c, "ERR PREFIX option requires BCAST mode to be enabled");
        return 0;
    }
    if ((c->flags & CF_TRACKING) && !(c->flags & CF_TRACKING_BCAST) != !(f & CF_TRACKING_BCAST)) {
        reply_error(c, "ERR You can't switch BCAST mode on/off before disabling tracking for this client, and "
                       "then re-enabling it with a different mode.");
        return 0;
    }
    if ((f & CF_TRACKING_BCAST) && (f & (CF_TRACKING_OPTIN | CF_TRACKING_OPTOUT))) {
        reply_error(c, "ERR OPTIN and OPTOUT are not compatible with BCAST");
        return 0;
    }
    if ((f & CF_TRACKING_OPTIN) && (f & CF_TRACKING_OPTOUT)) {
        reply_error(c, "ERR You can't specify both OPTIN mode and OPTOUT mode");
        return 0;
    }
    if (((f & CF_TRACKING_OPTIN) && (c->flags & CF_TRACKING_OPTOUT)) ||
        ((f & CF_TRACKING_OPTOUT) && (c->flags & CF_TRACKING_OPTIN))) {
        reply_error(c, "ERR You can't switch OPTIN/OPTOUT mode before disabling tracking for this client, and "
                       "then re-enabling it with a different mode.");
        return 0;
    }
    return !(f & CF_TRACKING_BCAST) || check_prefixes(c, o->prefixes, o->nprefixes);
}

/* CLIENT TRACKING ON|OFF [REDIRECT id] [PREFIX p ...] [BCAST] [OPTIN] [OPTOUT] [NOLOOP] */
void client_tracking_cmd(client *c) {
    tracking_opts o = {0};
    span *prefixes = zmalloc((size_t)c->argc * sizeof *prefixes);
    int ok = parse_options(c, &o, prefixes);
    if (ok && span_eq_nocase(c->argv[2], "on")) {
        ok = check_on(c, &o);
        if (ok) tracking_enable(c, &o);
    } else if (ok && span_eq_nocase(c->argv[2], "off")) {
        tracking_disable(c);
    } else if (ok) {
        reply_err_syntax(c);
        ok = 0;
    }
    if (ok) reply_ok(c);
    zfree(prefixes);
}

/* CLIENT CACHING YES|NO: for the next command, in OPTIN or OPTOUT mode. */
void client_caching_cmd(client *c) {
    if (!(c->flags & CF_TRACKING)) {
        reply_error(c, "ERR CLIENT CACHING can be called only when the client is in tracking mode with OPTIN or "
                       "OPTOUT mode enabled");
        return;
    }
    span v = c->argv[2];
    if (span_eq_nocase(v, "yes")) {
        if (!(c->flags & CF_TRACKING_OPTIN)) {
            reply_error(c, "ERR CLIENT CACHING YES is only valid when tracking is enabled in OPTIN mode.");
            return;
        }
    } else if (span_eq_nocase(v, "no")) {
        if (!(c->flags & CF_TRACKING_OPTOUT)) {
            reply_error(c, "ERR CLIENT CACHING NO is only valid when tracking is enabled in OPTOUT mode.");
            return;
        }
    } else {
        reply_err_syntax(c);
        return;
    }
    c->flags |= CF_TRACKING_CACHING;
    reply_ok(c);
}

void client_getredir_cmd(client *c) { reply_int(c, tracking_client_redirect(c)); }

/* The flags set of TRACKINGINFO, in Redis's order. */
static void reply_tracking_flags(client *c) {
    const char *names[8];
    int n = 0;
    uint32_t f = c->flags;
    names[n++] = (f & CF_TRACKING) ? "on" : "off";
    if (f & CF_TRACKING_BCAST) names[n++] = "bcast";
    if (f & CF_TRACKING_OPTIN) {
        names[n++] = "optin";
        if (f & CF_TRACKING_CACHING) names[n++] = "caching-yes";
    }
    if (f & CF_TRACKING_OPTOUT) {
        names[n++] = "optout";
        if (f & CF_TRACKING_CACHING) names[n++] = "caching-no";
    }
    if (f & CF_TRACKING_NOLOOP) names[n++] = "noloop";
    if (f & CF_TRACKING_BROKEN) names[n++] = "broken_redirect";
    reply_set(c, n);
    for (int i = 0; i < n; i++) reply_bulk_cstr(c, names[i]);
}

void client_trackinginfo_cmd(client *c) {
    reply_map(c, 3);
    reply_bulk_cstr(c, "flags");
    reply_tracking_flags(c);
    reply_bulk_cstr(c, "redirect");
    reply_int(c, tracking_client_redirect(c));
    reply_bulk_cstr(c, "prefixes");
    size_t n;
    const span *p = tracking_client_prefixes(c, &n);
    reply_array(c, (long)n);
    for (size_t i = 0; i < n; i++) reply_bulk_span(c, p[i]);
}
