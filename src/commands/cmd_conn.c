/* cmd_conn.c - connection commands: PING ECHO QUIT RESET HELLO AUTH SELECT
 * and the CLIENT container (ID SETNAME GETNAME SETINFO LIST INFO KILL REPLY
 * NO-EVICT NO-TOUCH PAUSE UNPAUSE HELP; TRACKING CACHING GETREDIR TRACKINGINFO
 * are in tracking_cmd.c).
 *
 * These commands change per-connection state (protocol, db, name, auth,
 * reply mode) or look at the list of clients. Reply bytes and error texts
 * follow Redis 7 (7.0.15 is the oracle; SETINFO and NO-TOUCH follow 7.2).
 * AUTH and HELLO AUTH authenticate as an ACL user (acl.h); `requirepass`
 * is the default user's password. CLIENT PAUSE/UNPAUSE are pause.c's.
 */
#include "sbuf.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "acl.h"
#include "blocking.h"
#include "client.h"
#include "command.h"
#include "db.h"
#include "monitor.h"
#include "multi.h"
#include "pause.h"
#include "pubsub.h"
#include "reply.h"
#include "server.h"
#include "tracking.h"
#include "util.h"
#include "zmalloc.h"


#define ERR_WRONGPASS "WRONGPASS invalid username-password pair or user is disabled."
#define ERR_BADNAME "ERR Client names cannot contain spaces, newlines or special characters."

/* ------------------------------------------------------------ helpers */

static int client_authed(const client *c) { return !client_auth_required(c); }

/* Client names and lib attributes: printable ASCII without spaces. */
static int valid_attr(span s) {
    for (size_t i = 0; i < s.len; i++)
        if (s.p[i] < '!' || s.p[i] > '~') return 0;
    return 1;
}

static void set_owned_str(char **dst, span s) {
    zfree(*dst);
    *dst = s.len ? zstrndup(s.p, s.len) : NULL;
}

/* Sets (or, for "", clears) the client's name; replies the error and
 * returns 0 when the name is invalid. */
static int set_name_or_reply(client *c, span name) {
    if (!valid_attr(name)) {
        reply_error(c, ERR_BADNAME);
        return 0;
    }
    set_owned_str(&c->name, name);
    return 1;
}

/* ---------------------------------------------------- simple commands */

/* A subscribed RESP2 client gets ["pong", arg or ""] (a reply of the same
 * shape as the messages it is reading). */
static void cmd_ping(client *c) {
    if (c->argc > 2) {
        reply_err_arity(c);
        return;
    }
    if ((c->flags & CF_PUBSUB) && c->resp == 2) {
        reply_array(c, 2);
        reply_bulk(c, "pong", 4);
        if (c->argc == 1) reply_bulk(c, "", 0);
        else reply_bulk_span(c, c->argv[1]);
        return;
    }
    if (c->argc == 1) reply_raw(c, RESP_PONG, 7);
    else reply_bulk_span(c, c->argv[1]);
}

static void cmd_echo(client *c) { reply_bulk_span(c, c->argv[1]); }

static void cmd_quit(client *c) {
    reply_ok(c);
    c->flags |= CF_CLOSE_AFTER_REPLY;
}

/* RESET: back to the state of a fresh connection (Redis 7.2 semantics:
 * NO-EVICT and NO-TOUCH are turned off too; library name/version are kept). */
static void cmd_reset(client *c) {
    monitor_leave(c);
    tracking_disable(c);
    multi_reset_client(c);
    pubsub_client_reset(c);
    client_set_db(c, 0);
    c->resp = 2;
    zfree(c->name);
    c->name = NULL;
    c->flags &= ~(uint32_t)(CF_REPLY_OFF | CF_REPLY_SKIP_NEXT | CF_NO_EVICT | CF_NO_TOUCH);
    acl_client_reset_auth(c);
    reply_status(c, "RESET");
}

static void cmd_auth(client *c) {
    if (c->argc > 3) {
        reply_err_syntax(c);
        return;
    }
    monitor_redact_arg(1); /* as Redis: MONITOR shows "(redacted)" */
    if (c->argc == 3) monitor_redact_arg(2);
    span user = {"default", 7}, pass = c->argv[c->argc - 1];
    if (c->argc == 2) {
        if (acl_default_user()->flags & AU_NOPASS) {
            reply_error(c, "ERR AUTH <password> called without any password configured for the default user. "
                           "Are you sure your configuration is correct?");
            return;
        }
    } else {
        user = c->argv[1];
    }
    if (!acl_authenticate(c, user, pass)) {
        reply_error(c, ERR_WRONGPASS);
        return;
    }
    reply_ok(c);
}

static void cmd_select(client *c) {
    long long id;
    if (!str_to_ll(c->argv[1].p, c->argv[1].len, &id)) {
        reply_err_notint(c);
        return;
    }
    if (id < -2147483648LL || id > 2147483647LL) {
        reply_error(c, "ERR value is out of range, value must between -2147483648 and 2147483647");
        return;
    }
    if (srv.cluster_mode && id != 0) {
        reply_error(c, "ERR SELECT is not allowed in cluster mode");
        return;
    }
    if (id < 0 || id >= db_count()) {
        reply_error(c, "ERR DB index is out of range");
        return;
    }
    client_set_db(c, (int)id);
    reply_ok(c);
}

/* MONITOR shows HELLO's AUTH arguments as "(redacted)": those of every
 * AUTH Redis parses before the first bad option. */
static void hello_redact(client *c) {
    for (int j = 2; j < c->argc; j++) {
        int more = c->argc - 1 - j;
        if (span_eq_nocase(c->argv[j], "auth") && more >= 2) {
            monitor_redact_arg(j + 1);
            monitor_redact_arg(j + 2);
            j += 2;
        } else if (span_eq_nocase(c->argv[j], "setname") && more >= 1) {
            j++;
        } else {
            return;
        }
    }
}

/* HELLO [protover [AUTH user pass] [SETNAME name]]: options are applied in
 * order, as Redis 7.0 does (an AUTH before a bad option stays applied). */
static void cmd_hello(client *c) {
    long long ver = 0;
    if (c->argc >= 2) {
        if (!str_to_ll(c->argv[1].p, c->argv[1].len, &ver)) {
            reply_error(c, "ERR Protocol version is not an integer or out of range");
            return;
        }
        if (ver < 2 || ver > 3) {
            reply_error(c, "NOPROTO unsupported protocol version");
            return;
        }
    }
    hello_redact(c);
    for (int j = 2; j < c->argc; j++) {
        int more = c->argc - 1 - j;
        if (span_eq_nocase(c->argv[j], "auth") && more >= 2) {
            if (!acl_authenticate(c, c->argv[j + 1], c->argv[j + 2])) {
                reply_error(c, ERR_WRONGPASS);
                return;
            }
            j += 2;
        } else if (span_eq_nocase(c->argv[j], "setname") && more >= 1) {
            if (!set_name_or_reply(c, c->argv[j + 1])) return;
            j++;
        } else {
            reply_errorf(c, "ERR Syntax error in HELLO option '%.*s'", (int)c->argv[j].len, c->argv[j].p);
            return;
        }
    }
    if (!client_authed(c)) {
        reply_error(c, "NOAUTH HELLO must be called with the client already authenticated, otherwise the "
                       "HELLO AUTH <user> <pass> option can be used to authenticate the client and select "
                       "the RESP protocol version at the same time");
        return;
    }
    if (ver) c->resp = (int)ver;
    reply_map(c, 7);
    reply_bulk_cstr(c, "server");
    reply_bulk_cstr(c, "redis");
    reply_bulk_cstr(c, "version");
    reply_bulk_cstr(c, FERRY_VERSION);
    reply_bulk_cstr(c, "proto");
    reply_int(c, c->resp);
    reply_bulk_cstr(c, "id");
    reply_int(c, (long long)c->id);
    reply_bulk_cstr(c, "mode");
    reply_bulk_cstr(c, "standalone");
    reply_bulk_cstr(c, "role");
    reply_bulk_cstr(c, "master");
    reply_bulk_cstr(c, "modules");
    reply_array(c, 0);
}

/* --------------------------------------------------------------- CLIENT */

static void client_container(client *c) {
    char sub[129];
    reply_errorf(c, "ERR unknown subcommand '%s'. Try CLIENT HELP.", span_cstr(sub, sizeof sub, c->argv[1]));
}

static void client_id(client *c) { reply_int(c, (long long)c->id); }

static void client_setname(client *c) {
    if (set_name_or_reply(c, c->argv[2])) reply_ok(c);
}

static void client_getname(client *c) {
    if (c->name) reply_bulk_cstr(c, c->name);
    else reply_null(c);
}

/* CLIENT SETINFO LIB-NAME|LIB-VER value (Redis 7.2). */
static void client_setinfo(client *c) {
    span attr = c->argv[2], val = c->argv[3];
    char **dst;
    if (span_eq_nocase(attr, "lib-name")) dst = &c->lib_name;
    else if (span_eq_nocase(attr, "lib-ver")) dst = &c->lib_ver;
    else {
        reply_errorf(c, "ERR Unrecognized option '%.*s'", (int)attr.len, attr.p);
        return;
    }
    if (!valid_attr(val)) {
        reply_errorf(c, "ERR %.*s cannot contain spaces, newlines or special characters.", (int)attr.len, attr.p);
        return;
    }
    set_owned_str(dst, val);
    reply_ok(c);
}

/* Client types as Redis's getClientType: the link to our primary, replicas'
 * links, pub/sub clients (any
 * subscription), normal connections. CT_ALL: no TYPE filter. */
enum { CT_ALL = -2, CT_NONE = -1, CT_NORMAL = 0, CT_REPLICA = 1, CT_PUBSUB = 2, CT_MASTER = 3 };

static int parse_client_type(span s) {
    if (span_eq_nocase(s, "normal")) return CT_NORMAL;
    if (span_eq_nocase(s, "pubsub")) return CT_PUBSUB;
    if (span_eq_nocase(s, "slave") || span_eq_nocase(s, "replica")) return CT_REPLICA;
    if (span_eq_nocase(s, "master")) return CT_MASTER;
    return CT_NONE;
}

static int client_type(const client *t) {
    if (t->repl_role == CLIENT_REPL_MASTER) return CT_MASTER;
    if (t->repl_role == CLIENT_REPL_REPLICA) return CT_REPLICA; /* a MONITOR is a normal client here, as in Redis */
    return (t->flags & CF_PUBSUB) ? CT_PUBSUB : CT_NORMAL;
}

static void reply_unknown_type(client *c, span s) {
    char buf[129];
    reply_errorf(c, "ERR Unknown client type '%s'", span_cstr(buf, sizeof buf, s));
}

/* client_info_line() truncates to its buffer: size the buffer for this
 * client's variable-length fields. The line ends with '\n' as Redis's. */
static void tb_client_line(sbuf *b, client *t) {
    size_t need = 640 + strlen(t->addr) + strlen(t->laddr);
    if (t->name) need += strlen(t->name);
    if (t->lib_name) need += strlen(t->lib_name);
    if (t->lib_ver) need += strlen(t->lib_ver);
    sb_reserve(b, need + 2);
    size_t n = client_info_line(t, b->p + b->len, need);
    b->len += n;
    if (n == 0 || b->p[b->len - 1] != '\n') b->p[b->len++] = '\n';
}

static void reply_sbuf(client *c, sbuf *b) {
    reply_verbatim(c, b->p ? b->p : "", b->len, "txt");
    zfree(b->p);
}

static int cmp_client_id(const void *a, const void *b) {
    uint64_t x = (*(client *const *)a)->id, y = (*(client *const *)b)->id;
    return x < y ? -1 : x > y;
}

/* All real clients, oldest first (Redis's CLIENT LIST order). Caller frees. */
static client **clients_by_id(size_t *n) {
    size_t k = 0;
    for (client *t = srv.clients; t; t = t->next) k++;
    client **v = zmalloc(sizeof *v * (k ? k : 1));
    k = 0;
    for (client *t = srv.clients; t; t = t->next)
        if (!(t->flags & CF_FAKE) || t == srv.current_client) v[k++] = t;
    qsort(v, k, sizeof *v, cmp_client_id);
    *n = k;
    return v;
}

static client *client_by_id(uint64_t id) {
    for (client *t = srv.clients; t; t = t->next)
        if (t->id == id) return t;
    return NULL;
}

/* CLIENT LIST [TYPE type] | [ID id ...] */
static void client_list(client *c) {
    int type = CT_ALL;
    sbuf b = {0};
    if (c->argc == 4 && span_eq_nocase(c->argv[2], "type")) {
        type = parse_client_type(c->argv[3]);
        if (type == CT_NONE) {
            reply_unknown_type(c, c->argv[3]);
            return;
        }
    } else if (c->argc > 3 && span_eq_nocase(c->argv[2], "id")) {
        for (int j = 3; j < c->argc; j++) {
            long long id;
            if (!str_to_ll(c->argv[j].p, c->argv[j].len, &id)) {
                reply_error(c, "ERR Invalid client ID");
                return;
            }
        }
        for (int j = 3; j < c->argc; j++) {
            long long id;
            str_to_ll(c->argv[j].p, c->argv[j].len, &id);
            client *t = id > 0 ? client_by_id((uint64_t)id) : NULL;
            if (t) tb_client_line(&b, t);
        }
        reply_sbuf(c, &b);
        return;
    } else if (c->argc != 2) {
        reply_err_syntax(c);
        return;
    }
    size_t n;
    client **v = clients_by_id(&n);
    for (size_t i = 0; i < n; i++)
        if (type == CT_ALL || type == client_type(v[i])) tb_client_line(&b, v[i]);
    zfree(v);
    reply_sbuf(c, &b);
}

static void client_info(client *c) {
    sbuf b = {0};
    tb_client_line(&b, c);
    reply_sbuf(c, &b);
}

/* ---- CLIENT KILL */

typedef struct kill_filter {
    uint64_t id;            /* 0 = any */
    span addr, laddr;       /* .p NULL = any */
    int type;               /* CT_ALL = any */
    int skipme;
    long long maxage;       /* seconds, 0 = any */
    acl_user *user;         /* NULL = any */
} kill_filter;

static int span_eq_str(span s, const char *str) { return strlen(str) == s.len && memcmp(str, s.p, s.len) == 0; }

static int kill_matches(const kill_filter *f, client *c, client *t) {
    if (f->skipme && t == c) return 0;
    if (f->id && t->id != f->id) return 0;
    if (f->addr.p && !span_eq_str(f->addr, t->addr)) return 0;
    if (f->laddr.p && !span_eq_str(f->laddr, t->laddr)) return 0;
    if (f->user && acl_client_user(t) != f->user) return 0;
    if (f->type != CT_ALL && f->type != client_type(t)) return 0;
    if (f->maxage && (srv.now_ms - t->ctime_ms) / 1000 < f->maxage) return 0;
    return 1;
}

/* Closes t: after this reply if it is the caller, else at the loop's end. */
static void kill_client(client *c, client *t) {
    if (t == c) c->flags |= CF_CLOSE_AFTER_REPLY;
    else client_close_async(t);
}

/* Parses the filter form; replies the error and returns 0 on failure. */
static int parse_kill_filter(client *c, kill_filter *f) {
    char buf[129];
    memset(f, 0, sizeof *f);
    f->type = CT_ALL;
    f->skipme = 1;
    for (int i = 2; i < c->argc; i += 2) {
        span opt = c->argv[i], v = i + 1 < c->argc ? c->argv[i + 1] : (span){NULL, 0};
        long long n;
        if (!v.p) {
            reply_err_syntax(c);
            return 0;
        }
        if (span_eq_nocase(opt, "id")) {
            if (!str_to_ll(v.p, v.len, &n) || n <= 0) {
                reply_error(c, "ERR client-id should be greater than 0");
                return 0;
            }
            f->id = (uint64_t)n;
        } else if (span_eq_nocase(opt, "type")) {
            f->type = parse_client_type(v);
            if (f->type == CT_NONE) {
                reply_unknown_type(c, v);
                return 0;
            }
        } else if (span_eq_nocase(opt, "addr")) {
            f->addr = v;
        } else if (span_eq_nocase(opt, "laddr")) {
            f->laddr = v;
        } else if (span_eq_nocase(opt, "user")) {
            f->user = acl_user_find(v.p, v.len);
            if (!f->user) {
                reply_errorf(c, "ERR No such user '%s'", span_cstr(buf, sizeof buf, v));
                return 0;
            }
        } else if (span_eq_nocase(opt, "skipme")) {
            if (span_eq_nocase(v, "yes")) f->skipme = 1;
            else if (span_eq_nocase(v, "no")) f->skipme = 0;
            else {
                reply_err_syntax(c);
                return 0;
            }
        } else if (span_eq_nocase(opt, "maxage")) {   /* Redis 7.4 */
            if (!str_to_ll(v.p, v.len, &n)) {
                reply_error(c, "ERR maxage is not an integer or out of range");
                return 0;
            }
            if (n <= 0) {
                reply_error(c, "ERR maxage should be greater than 0");
                return 0;
            }
            f->maxage = n;
        } else {
            reply_err_syntax(c);
            return 0;
        }
    }
    return 1;
}

/* CLIENT KILL ip:port | CLIENT KILL <filter> <value> ... */
static void client_kill(client *c) {
    if (c->argc == 3) {
        for (client *t = srv.clients; t; t = t->next) {
            if ((t->flags & CF_FAKE) || !span_eq_str(c->argv[2], t->addr)) continue;
            kill_client(c, t);
            reply_ok(c);
            return;
        }
        reply_error(c, "ERR No such client");
        return;
    }
    kill_filter f;
    if (!parse_kill_filter(c, &f)) return;
    long long killed = 0;
    for (client *t = srv.clients; t; t = t->next) {
        if ((t->flags & CF_FAKE) || (t->flags & CF_CLOSE_ASAP) || !kill_matches(&f, c, t)) continue;
        kill_client(c, t);
        killed++;
    }
    reply_int(c, killed);
}

/* CLIENT REPLY ON|OFF|SKIP: only ON answers (+OK, even right after a SKIP);
 * OFF and SKIP are silent. */
static void client_reply(client *c) {
    span m = c->argv[2];
    if (span_eq_nocase(m, "on")) {
        /* also un-mutes this very command when a SKIP was armed before it */
        c->flags &= ~(uint32_t)(CF_REPLY_OFF | CF_REPLY_SKIP_NEXT | CF_REPLY_SKIP);
        reply_ok(c);
    } else if (span_eq_nocase(m, "off")) {
        c->flags |= CF_REPLY_OFF;
    } else if (span_eq_nocase(m, "skip")) {
        if (!(c->flags & CF_REPLY_OFF)) c->flags |= CF_REPLY_SKIP_NEXT;
    } else {
        reply_err_syntax(c);
    }
}

static void client_flag_onoff(client *c, uint32_t flag) {
    if (span_eq_nocase(c->argv[2], "on")) c->flags |= flag;
    else if (span_eq_nocase(c->argv[2], "off")) c->flags &= ~flag;
    else {
        reply_err_syntax(c);
        return;
    }
    reply_ok(c);
}

static void client_no_evict(client *c) { client_flag_onoff(c, CF_NO_EVICT); }
static void client_no_touch(client *c) { client_flag_onoff(c, CF_NO_TOUCH); }

/* CLIENT UNBLOCK id [TIMEOUT|ERROR]: the reason is checked before the id. */
static void client_unblock(client *c) {
    if (c->argc > 4) {
        char sub[129];
        reply_errorf(c, "ERR unknown subcommand or wrong number of arguments for '%s'. Try CLIENT HELP.",
                     span_cstr(sub, sizeof sub, c->argv[1]));
        return;
    }
    int why = UNBLOCK_TIMEOUT;
    if (c->argc == 4) {
        if (span_eq_nocase(c->argv[3], "error")) why = UNBLOCK_ERROR;
        else if (!span_eq_nocase(c->argv[3], "timeout")) {
            reply_error(c, "ERR CLIENT UNBLOCK reason should be TIMEOUT or ERROR");
            return;
        }
    }
    long long id;
    if (!str_to_ll(c->argv[2].p, c->argv[2].len, &id)) {
        reply_err_notint(c);
        return;
    }
    for (client *t = srv.clients; t; t = t->next) {
        if (t->id == (uint64_t)id && (t->flags & CF_BLOCKED) && !(t->flags & CF_PAUSED)) {
            unblock_client(t, why);
            reply_int(c, 1);
            return;
        }
    }
    reply_int(c, 0);
}

static const char *const client_help_lines[] = {
    "CLIENT <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
    "CACHING (YES|NO)",
    "    Enable/disable tracking of the keys for next command in OPTIN/OPTOUT modes.",
    "GETNAME",
    "    Return the name of the current connection.",
    "GETREDIR",
    "    Return the client ID we are redirecting to when tracking is enabled.",
    "ID",
    "    Return the ID of the current connection.",
    "INFO",
    "    Return information about the current client connection.",
    "KILL <ip:port>",
    "    Kill connection made from <ip:port>.",
    "KILL <option> <value> [<option> <value> [...]]",
    "    Kill connections. Options are:",
    "    * ADDR (<ip:port>|<unixsocket>:0)",
    "      Kill connections made from the specified address",
    "    * LADDR (<ip:port>|<unixsocket>:0)",
    "      Kill connections made to specified local address",
    "    * TYPE (NORMAL|MASTER|REPLICA|PUBSUB)",
    "      Kill connections by type.",
    "    * USER <username>",
    "      Kill connections authenticated by <username>.",
    "    * SKIPME (YES|NO)",
    "      Skip killing current connection (default: yes).",
    "    * ID <client-id>",
    "      Kill connections by client id.",
    "    * MAXAGE <maxage>",
    "      Kill connections older than the specified age.",
    "LIST [options ...]",
    "    Return information about client connections. Options:",
    "    * TYPE (NORMAL|MASTER|REPLICA|PUBSUB)",
    "      Return clients of specified type.",
    "    * ID <client-id> [<client-id> ...]",
    "      Return clients of specified IDs only.",
    "UNPAUSE",
    "    Stop the current client pause, resuming traffic.",
    "PAUSE <timeout> [WRITE|ALL]",
    "    Suspend all, or just write, clients for <timeout> milliseconds.",
    "REPLY (ON|OFF|SKIP)",
    "    Control the replies sent to the current connection.",
    "SETNAME <name>",
    "    Assign the name <name> to the current connection.",
    "SETINFO <option> <value>",
    "    Set client meta attr. Options are:",
    "    * LIB-NAME: the client lib name.",
    "    * LIB-VER: the client lib version.",
    "UNBLOCK <clientid> [TIMEOUT|ERROR]",
    "    Unblock the specified blocked client.",
    "TRACKING (ON|OFF) [REDIRECT <id>] [BCAST] [PREFIX <prefix> [...]]",
    "         [OPTIN] [OPTOUT] [NOLOOP]",
    "    Control server assisted client side caching.",
    "TRACKINGINFO",
    "    Report tracking status for the current connection.",
    "NO-EVICT (ON|OFF)",
    "    Protect current client connection from eviction.",
    "NO-TOUCH (ON|OFF)",
    "    Will not touch LRU/LFU stats when this mode is on.",
    "HELP",
    "    Prints this help.",
    NULL,
};

static void client_help(client *c) { reply_help(c, client_help_lines); }

/* ---------------------------------------------------------------- tables */

#define F_CLI (CMD_NOSCRIPT | CMD_LOADING | CMD_STALE)
#define F_CLI_ADMIN (CMD_ADMIN | CMD_NOSCRIPT | CMD_LOADING | CMD_STALE)
#define F_NOAUTH (CMD_NOSCRIPT | CMD_LOADING | CMD_STALE | CMD_FAST | CMD_NO_AUTH | CMD_ALLOW_BUSY)

static command client_subcommands[] = {
    CMD("caching", client_caching_cmd, 3, .flags = F_CLI, .acl = "slow connection",
        .summary = "Instruct the server about tracking or not keys in the next request", .since = "6.0.0",
        .complexity = "O(1)"),
    CMD("getname", client_getname, 2, .flags = F_CLI, .acl = "slow connection",
        .summary = "Get the current connection name", .since = "2.6.9", .complexity = "O(1)"),
    CMD("getredir", client_getredir_cmd, 2, .flags = F_CLI, .acl = "slow connection",
        .summary = "Get tracking notifications redirection client ID if any", .since = "6.0.0", .complexity = "O(1)"),
    CMD("help", client_help, 2, .flags = CMD_LOADING | CMD_STALE, .acl = "slow connection",
        .summary = "Show helpful text about the different subcommands", .since = "5.0.0", .complexity = "O(1)"),
    CMD("id", client_id, 2, .flags = F_CLI, .acl = "slow connection",
        .summary = "Returns the client ID for the current connection", .since = "5.0.0", .complexity = "O(1)"),
    CMD("info", client_info, 2, .flags = F_CLI, .acl = "slow connection",
        .summary = "Returns information about the current client connection.", .since = "6.2.0", .complexity = "O(1)"),
    CMD("kill", client_kill, -3, .flags = F_CLI_ADMIN, .acl = "admin slow dangerous connection",
        .summary = "Kill the connection of a client", .since = "2.4.0",
        .complexity = "O(N) where N is the number of client connections"),
    CMD("list", client_list, -2, .flags = F_CLI_ADMIN, .acl = "admin slow dangerous connection",
        .summary = "Get the list of client connections", .since = "2.4.0",
        .complexity = "O(N) where N is the number of client connections"),
    CMD("no-evict", client_no_evict, 3, .flags = F_CLI_ADMIN, .acl = "admin slow dangerous connection",
        .summary = "Set client eviction mode for the current connection", .since = "7.0.0", .complexity = "O(1)"),
    CMD("no-touch", client_no_touch, 3, .flags = F_CLI, .acl = "slow connection",
        .summary = "Controls whether commands sent by the client affect the LRU/LFU of accessed keys",
        .since = "7.2.0", .complexity = "O(1)"),
    CMD("pause", pause_cmd_pause, -3, .flags = F_CLI_ADMIN, .acl = "admin slow dangerous connection",
        .summary = "Stop processing commands from clients for some time", .since = "2.9.50", .complexity = "O(1)"),
    CMD("reply", client_reply, 3, .flags = F_CLI, .acl = "slow connection",
        .summary = "Instruct the server whether to reply to commands", .since = "3.2.0", .complexity = "O(1)"),
    CMD("setinfo", client_setinfo, 4, .flags = F_CLI, .acl = "slow connection",
        .summary = "Sets information specific to the client or connection.", .since = "7.2.0", .complexity = "O(1)"),
    CMD("setname", client_setname, 3, .flags = F_CLI, .acl = "slow connection",
        .summary = "Set the current connection name", .since = "2.6.9", .complexity = "O(1)"),
    CMD("tracking", client_tracking_cmd, -3, .flags = F_CLI, .acl = "slow connection",
        .summary = "Enable or disable server assisted client side caching support", .since = "6.0.0",
        .complexity = "O(1). Some options may introduce additional complexity."),
    CMD("trackinginfo", client_trackinginfo_cmd, 2, .flags = F_CLI, .acl = "slow connection",
        .summary = "Return information about server assisted client side caching for the current connection",
        .since = "6.2.0", .complexity = "O(1)"),
    CMD("unblock", client_unblock, -3, .flags = F_CLI_ADMIN, .acl = "admin slow dangerous connection",
        .summary = "Unblock a client blocked in a blocking command from a different connection", .since = "5.0.0",
        .complexity = "O(log N) where N is the number of client connections"),
    CMD("unpause", pause_cmd_unpause, 2, .flags = F_CLI_ADMIN, .acl = "admin slow dangerous connection",
        .summary = "Resume processing of clients that were paused", .since = "6.2.0",
        .complexity = "O(N) Where N is the number of paused clients"),
    {0},
};

static command conn_commands[] = {
    CMD("auth", cmd_auth, -2, .flags = F_NOAUTH, .acl = "fast connection", .summary = "Authenticate to the server",
        .since = "1.0.0", .complexity = "O(N) where N is the number of passwords defined for the user"),
    CMD("client", client_container, -2, .acl = "slow", .summary = "A container for client connection commands",
        .since = "2.4.0", .complexity = "Depends on subcommand.", .subcmds = client_subcommands),
    CMD("echo", cmd_echo, 2, .flags = CMD_LOADING | CMD_STALE | CMD_FAST, .acl = "fast connection",
        .summary = "Echo the given string", .since = "1.0.0", .complexity = "O(1)"),
    CMD("hello", cmd_hello, -1, .flags = F_NOAUTH, .acl = "fast connection", .summary = "Handshake with Redis",
        .since = "6.0.0", .complexity = "O(1)"),
    CMD("ping", cmd_ping, -1, .flags = CMD_FAST, .props = PROP_SUBSCRIBED_OK | PROP_MISCONF_DENIED,
        .acl = "fast connection", .summary = "Ping the server", .since = "1.0.0", .complexity = "O(1)"),
    CMD("quit", cmd_quit, -1, .flags = F_NOAUTH, .props = PROP_TX_CONTROL | PROP_TX_RELEASE | PROP_SUBSCRIBED_OK,
        .acl = "fast connection", .summary = "Close the connection", .since = "1.0.0", .complexity = "O(1)"),
    CMD("reset", cmd_reset, 1, .flags = F_NOAUTH, .props = PROP_TX_CONTROL | PROP_TX_RELEASE | PROP_SUBSCRIBED_OK,
        .acl = "fast connection", .summary = "Reset the connection", .since = "6.2.0", .complexity = "O(1)"),
    CMD("select", cmd_select, 2, .flags = CMD_LOADING | CMD_STALE | CMD_FAST, .acl = "fast connection",
        .summary = "Change the selected database for the current connection", .since = "1.0.0", .complexity = "O(1)"),
    {0},
};
const command_group conn_group = {"connection", conn_commands};
