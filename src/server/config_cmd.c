/* config_cmd.c - the CONFIG command: GET / SET (several pairs, all or
 * nothing) / RESETSTAT / REWRITE (in place, keeping comments and unknown
 * lines) / HELP, with Redis 7's replies and error texts.
 *
 * config.c owns the directive table and the value rules and config_load.c
 * reads the configuration at start-up; this file serves the command, using
 * the internals declared in config_internal.h.
 */
#include "acl_file.h"
#include "command.h"
#include "config.h"
#include "config_internal.h"
#include "evict.h"
#include "file_atomic.h"
#include "info.h"
#include "notify.h"
#include "sbuf.h"
#include "reply.h"
#include "server.h"
#include "watchdog.h"
#include "util.h"
#include "zmalloc.h"

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

/* Called after CONFIG SET changed `port` or `bind` (config.h). */
int (*config_port_changed)(void) = NULL;
int (*config_aof_changed)(const char *name, char *err, size_t errlen) = NULL;
void (*config_repl_changed)(void) = NULL;
void (*config_cluster_changed)(void) = NULL;
int (*config_tls_changed)(void) = NULL;

/* ------------------------------------------------------ CONFIG command */

static int span_has_nul(span s) { return memchr(s.p, '\0', s.len) != NULL; }

static int span_eq_span_nocase(span a, span b) {
    return a.len == b.len && strncasecmp(a.p, b.p, a.len) == 0;
}

/* Value as CONFIG GET shows it (*len bytes): `dir` is the working
 * directory, as Redis's getcwd() (the server has changed into it: a
 * relative setting read back would name a directory below it); a binary
 * entry's bytes are unescaped. */
static char *value_for_get(int i, size_t *len) {
    char *v = config_get(&srv.cfg, i);
    *len = config_is_binary(i) ? config_bin_decode(v) : strlen(v);
    if (!strcmp(config_name(config_real(i)), "dir")) {
        char cwd[PATH_MAX];
        if (getcwd(cwd, sizeof cwd)) {
            zfree(v);
            v = zstrdup(cwd);
            *len = strlen(v);
        }
    }
    return v;
}

static void config_get_cmd(client *c) {
    int n = config_count(), m = 0;
    int *idx = zmalloc(sizeof(int) * (size_t)n);
    span *names = zmalloc(sizeof(span) * (size_t)n);
    for (int a = 2; a < c->argc; a++) {
        span p = c->argv[a];
        int is_pattern = memchr(p.p, '*', p.len) || memchr(p.p, '?', p.len) || memchr(p.p, '[', p.len);
        for (int i = 0; i < n; i++) {
            span nm = {config_name(i), strlen(config_name(i))};
            if (is_pattern ? (config_flags(i) & CFG_HID) || !glob_match(p.p, p.len, nm.p, nm.len, 1)
                           : !span_eq_span_nocase(p, nm))
                continue;
            if (!is_pattern) nm = p; /* Redis echoes the name as typed */
            int dup = 0;
            for (int k = 0; k < m && !dup; k++) dup = span_eq_span_nocase(names[k], nm);
            if (!dup) {
                idx[m] = i;
                names[m++] = nm;
            }
        }
    }
    reply_map(c, m);
    for (int k = 0; k < m; k++) {
        size_t len;
        char *v = value_for_get(idx[k], &len);
        reply_bulk(c, names[k].p, names[k].len);
        reply_bulk(c, v, len);
        zfree(v);
    }
    zfree(idx);
    zfree(names);
}

static int protected_allowed(const client *c) {
    int v = srv.cfg.enable_protected_configs;
    return v == DEBUG_CMD_YES || (v == DEBUG_CMD_LOCAL && client_is_local(c));
}

/* Checks CONFIG SET must do before applying anything: the OS limits for
 * maxclients, an existing directory for dir (canon becomes absolute). */
static int set_precheck(int i, char **canon, char *err, size_t errlen) {
    const char *name = config_name(config_real(i));
    if (!strcmp(name, "maxclients")) {
        long long want = strtoll(*canon, NULL, 10);
        if (want <= srv.cfg.maxclients) return 0;
        struct rlimit rl;
        rlim_t need = (rlim_t)(want + 32); /* as Redis: 32 descriptors for itself */
        if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < need) {
            rlim_t old = rl.rlim_cur;
            rl.rlim_cur = need < rl.rlim_max ? need : rl.rlim_max;
            if (setrlimit(RLIMIT_NOFILE, &rl) != 0) rl.rlim_cur = old;
            if (rl.rlim_cur < need) {
                snprintf(err, errlen,
                         "The operating system is not able to handle the specified number of clients, try with %lld",
                         (long long)rl.rlim_cur - 32);
                return -1;
            }
        }
        /* the event loop grows with maxclients (+128, as at start-up); Redis
         * grows it the same way and never shrinks it */
        if (srv.el && want + 128 > srv.el->setsize &&
            (want + 128 > INT_MAX || ev_resize(srv.el, (int)(want + 128)) == -1)) {
            snprintf(err, errlen, "The event loop API used by Redis is not able to handle the specified number of clients");
            return -1;
        }
    } else if (!strcmp(name, "dir")) {
        char *abs = realpath(*canon, NULL);
        struct stat st;
        if (!abs || stat(abs, &st) != 0 || !S_ISDIR(st.st_mode)) {
            snprintf(err, errlen, "%s", strerror(abs ? ENOTDIR : errno));
            free(abs);
            return -1;
        }
        zfree(*canon);
        *canon = zstrdup(abs);
        free(abs);
    }
    return 0;
}

static void set_fail(client *c, const char *name, size_t len, const char *why) {
    reply_errorf(c, "ERR CONFIG SET failed (possibly related to argument '%.*s') - %s", (int)len, name, why);
}

/* The current values of the entries CONFIG SET is about to change, in the
 * canonical form config_apply takes (for a rollback). */
static char **snapshot(const int *idx, int n) {
    char **old = zcalloc(sizeof(char *) * (size_t)n);
    char err[256];
    for (int k = 0; k < n; k++) {
        char *v = config_get(&srv.cfg, idx[k]);
        if (config_parse(&srv.cfg, idx[k], v, &old[k], err, sizeof err) == 0) zfree(v);
        else old[k] = v;
    }
    return old;
}

static int is_listen_param(const char *name) {
    return !strcmp(name, "port") || !strcmp(name, "bind") || !strcmp(name, "tls-port");
}

/* Stores every value, then runs what the changes need (rebinding, AOF,
 * eviction). 0, or -1 with Redis's whole error text in err when one of
 * them could not be put in force. */
static int apply_all(const int *idx, char **canon, int n, char *err, size_t errlen) {
    const char *listen = NULL, *tls = NULL;
    int maxmem = 0, watchdog = 0;
    char why[512];
    for (int k = 0; k < n; k++) {
        const char *name = config_name(config_real(idx[k]));
        config_apply(&srv.cfg, idx[k], canon[k]);
        if (!strcmp(name, "dir") && chdir(canon[k]) != 0)
            server_log(LOG_WARNING_, "Can't chdir to '%s': %s", canon[k], strerror(errno));
        if (is_listen_param(name) && !listen) listen = name;
        if (!strncmp(name, "tls-", 4) && !tls) tls = name;
        if (!strcmp(name, "maxmemory")) maxmem = 1;
        if (!strcmp(name, "watchdog-period")) watchdog = 1;
        if (config_aof_changed && (!strncmp(name, "append", 6) || !strncmp(name, "aof-", 4)) &&
            config_aof_changed(name, why, sizeof why) != 0) {
            config_apply(&srv.cfg, idx[k], "no"); /* appendonly yes could not start: it stays off */
            server_log(LOG_WARNING_, "%s", why);
            snprintf(err, errlen, "ERR CONFIG SET failed (possibly related to argument '%s') - Unable to turn on AOF. "
                                  "Check server logs.", name);
            return -1;
        }
    }
    if (tls && config_tls_changed && config_tls_changed() != 0) {
        snprintf(err, errlen, "ERR CONFIG SET failed (possibly related to argument '%s') - Unable to update TLS "
                              "configuration. Check server logs.", tls);
        return -1;
    }
    if (listen && config_port_changed && config_port_changed() != 0) {
        snprintf(err, errlen, "ERR CONFIG SET failed (possibly related to argument '%s') - %s", listen,
                 strcmp(listen, "bind") ? "Unable to listen on this port. Check server logs."
                                         : "Failed to bind to specified addresses.");
        return -1;
    }
    if (maxmem) evict_maxmemory_changed(); /* starts evicting if the new limit is below usage */
    if (watchdog) watchdog_tick(config_get_ll(&srv.cfg, "watchdog-period"), srv.cfg.hz); /* armed at once, as Redis */
    notify_set_flags(srv.cfg.notify_keyspace_events);
    if (config_repl_changed) config_repl_changed(); /* min-replicas-* apply to the next command */
    if (config_cluster_changed) config_cluster_changed(); /* announced ports and hostname show at once */
    return 0;
}

/* An apply step failed: every entry of the command gets its old value
 * back, and the listeners are bound again if port or bind had changed. */
static void rollback(const int *idx, char **old, int n) {
    int relisten = 0, tls = 0;
    for (int k = 0; k < n; k++) {
        const char *name = config_name(config_real(idx[k]));
        config_apply(&srv.cfg, idx[k], old[k]);
        if (is_listen_param(name)) relisten = 1;
        if (!strncmp(name, "tls-", 4)) tls = 1;
        if (!strcmp(name, "dir") && chdir(old[k]) != 0)
            server_log(LOG_WARNING_, "Can't chdir to '%s': %s", old[k], strerror(errno));
    }
    if (tls && config_tls_changed) config_tls_changed(); /* the old context back, if a new one was made */
    if (relisten && config_port_changed && config_port_changed() != 0)
        server_log(LOG_WARNING_, "Failed to bind the previous addresses back after a failed CONFIG SET");
    notify_set_flags(srv.cfg.notify_keyspace_events);
}

/* CONFIG SET name value [name value ...]: validate all, then apply all. */
static void config_set_cmd(client *c) {
    if ((c->argc - 2) % 2 != 0) {
        reply_err_syntax(c);
        return;
    }
    int n = (c->argc - 2) / 2, ok = 0;
    int *idx = zmalloc(sizeof(int) * (size_t)n);
    char **canon = zcalloc(sizeof(char *) * (size_t)n);
    char err[512];
    for (int k = 0; k < n; k++) {
        span nm = c->argv[2 + 2 * k];
        int i = idx[k] = config_lookup(nm.p, nm.len);
        if (i < 0) {
            reply_errorf(c, "ERR Unknown option or number of arguments for CONFIG SET - '%.*s'", (int)nm.len, nm.p);
            goto out;
        }
        /* these two name the argument as typed, as Redis does */
        if ((config_flags(i) & CFG_PROT) && !protected_allowed(c)) {
            set_fail(c, nm.p, nm.len, "can't set protected config");
            goto out;
        }
        if (config_flags(i) & CFG_IMM) {
            set_fail(c, nm.p, nm.len, "can't set immutable config");
            goto out;
        }
        for (int j = 0; j < k; j++)
            if (span_eq_span_nocase(c->argv[2 + 2 * j], nm)) {
                set_fail(c, nm.p, nm.len, "duplicate parameter");
                goto out;
            }
        if ((srv.loading || srv.async_loading) && (config_flags(i) & CFG_NOLOAD)) {
            reply_error(c, "LOADING Redis is loading the dataset in memory");
            goto out;
        }
    }
    for (int k = 0; k < n; k++) {
        span v = c->argv[3 + 2 * k];
        const char *cname = config_name(idx[k]);
        int bin = config_is_binary(idx[k]); /* requirepass, masterauth: the bytes, escaped */
        char *val = bin ? config_bin_encode(v.p, v.len) : zstrndup(v.p, v.len);
        int rc = !bin && span_has_nul(v) ? (snprintf(err, sizeof err, "argument contains a NUL byte"), -1)
                                         : config_parse(&srv.cfg, idx[k], val, &canon[k], err, sizeof err);
        zfree(val);
        if (rc == 0) rc = set_precheck(idx[k], &canon[k], err, sizeof err);
        if (rc) {
            set_fail(c, cname, strlen(cname), err);
            goto out;
        }
    }
    char **old = snapshot(idx, n);
    if (apply_all(idx, canon, n, err, sizeof err) != 0) {
        rollback(idx, old, n);
        reply_error(c, err);
    } else {
        ok = 1;
    }
    for (int k = 0; k < n; k++) zfree(old[k]);
    zfree(old);
out:
    if (ok) reply_ok(c);
    for (int k = 0; k < n; k++) zfree(canon[k]);
    zfree(canon);
    zfree(idx);
}

static void config_resetstat_cmd(client *c) {
    memset(&srv.stats, 0, sizeof srv.stats);
    stats_reset_all();
    reply_ok(c);
}

static void config_help_cmd(client *c) {
    static const char *const help[] = {
        "CONFIG <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
        "GET <pattern>",
        "    Return parameters matching the glob-like <pattern> and their values.",
        "SET <directive> <value>",
        "    Set the configuration <directive> to <value>.",
        "RESETSTAT",
        "    Reset statistics reported by the INFO command.",
        "REWRITE",
        "    Rewrite the configuration file.",
        "HELP",
        "    Prints this help.",
        NULL,
    };
    reply_help(c, help);
}

#define REWRITE_HEADER "# Generated by CONFIG REWRITE"

static int is_user_line(const char *trimmed) {
    return strncasecmp(trimmed, "user", 4) == 0 && (trimmed[4] == ' ' || trimmed[4] == '\t');
}

/* The new file text: old lines kept (comments, blank and unknown lines,
 * include/user...), the first line of each known directive replaced by
 * its current value and later ones dropped; then changed directives that
 * were not in the file, after a header line (with force_all, every
 * directive, default values included: DEBUG CONFIG-REWRITE-FORCE-ALL). */
static char *rewrite_text(const char *old, int force_all) {
    int n = config_count(), header = 0, appended = 0;
    char *seen = zcalloc((size_t)n);
    sbuf out = {0};
    sb_add(&out, "", 0);
    int nusers, next_user = 0;
    char **users = acl_rewrite_user_lines(&nusers); /* replace the file's `user` lines in order, then appended */
    for (const char *p = old; *p;) {
        const char *nl = strchr(p, '\n');
        size_t len = nl ? (size_t)(nl - p) : strlen(p);
        char *line = zstrndup(p, len), *t = zstrdup(line), **argv;
        size_t *lens;
        int argc, i = -1, isdef;
        config_trim(t);
        if (!strcmp(t, REWRITE_HEADER)) header = 1;
        if (t[0] && t[0] != '#' && config_split_args_bin(t, &argc, &argv, &lens) == 0) { /* `requirepass "\x00"` too */
            if (argc > 0) i = config_lookup(argv[0], strlen(argv[0]));
            config_free_args(argc, argv);
            zfree(lens);
        }
        if (i < 0 && is_user_line(t)) {
            if (next_user < nusers) sb_adds(&out, users[next_user++]);
        } else if (i < 0) {
            sb_adds(&out, line);
            sb_addc(&out, '\n');
        } else if (!seen[config_real(i)]) {
            seen[config_real(i)] = 1;
            char *lines = config_rewrite_lines(&srv.cfg, config_real(i), &isdef);
            sb_adds(&out, lines);
            zfree(lines);
        }
        zfree(line);
        zfree(t);
        p = nl ? nl + 1 : p + len;
    }
    for (int i = 0; i < n; i++) {
        int isdef;
        if (config_real(i) != i || seen[i]) continue;
        char *lines = config_rewrite_lines(&srv.cfg, i, &isdef);
        if ((!isdef || force_all) && lines[0]) {
            if (!header && !appended++) sb_adds(&out, REWRITE_HEADER "\n");
            sb_adds(&out, lines);
        }
        zfree(lines);
    }
    for (; next_user < nusers; next_user++) {
        if (!header && !appended++) sb_adds(&out, REWRITE_HEADER "\n");
        sb_adds(&out, users[next_user]);
    }
    for (int i = 0; i < nusers; i++) zfree(users[i]);
    zfree(users);
    zfree(seen);
    return out.p;
}

int config_rewrite_file(int force_all, char *err, size_t errlen) {
    if (!srv.cfg.config_file) {
        snprintf(err, errlen, "The server is running without a config file");
        return -1;
    }
    char *abs = realpath(srv.cfg.config_file, NULL);
    const char *path = abs ? abs : srv.cfg.config_file;
    char *old = config_read_file(path);
    int rc = -1;
    if (!old && errno != ENOENT) {
        snprintf(err, errlen, "Rewriting config file: %s", strerror(errno));
    } else {
        char *text = rewrite_text(old ? old : "", force_all);
        rc = file_write_atomic(path, text, strlen(text));
        if (rc) snprintf(err, errlen, "Rewriting config file: %s", strerror(errno));
        zfree(text);
    }
    zfree(old);
    free(abs);
    return rc;
}

static void config_rewrite_cmd(client *c) {
    if (!srv.cfg.config_file) {
        reply_error(c, "ERR The server is running without a config file");
        return;
    }
    char err[256];
    int rc = config_rewrite_file(0, err, sizeof err);
    if (rc) {
        server_log(LOG_WARNING_, "CONFIG REWRITE failed: %s", err + strlen("Rewriting config file: "));
        reply_errorf(c, "ERR %s", err);
    } else {
        server_log(LOG_NOTICE_, "CONFIG REWRITE executed with success.");
        reply_ok(c);
    }
}

static void arity_error(client *c, const char *sub) {
    reply_errorf(c, "ERR wrong number of arguments for 'config|%s' command", sub);
}

/* CONFIG GET|SET|RESETSTAT|REWRITE|HELP. Dispatch normally resolves the
 * subcommand and checks arity itself; this is also correct when called
 * directly with any argv. */
void cmd_config(client *c) {
    if (c->argc < 2) {
        reply_error(c, "ERR wrong number of arguments for 'config' command");
        return;
    }
    span s = c->argv[1];
    if (span_eq_nocase(s, "get")) {
        if (c->argc < 3) arity_error(c, "get");
        else config_get_cmd(c);
    } else if (span_eq_nocase(s, "set")) {
        if (c->argc < 4) arity_error(c, "set");
        else config_set_cmd(c);
    } else if (span_eq_nocase(s, "resetstat") || span_eq_nocase(s, "rewrite") || span_eq_nocase(s, "help")) {
        char sub[16];
        for (size_t i = 0; i <= s.len; i++) sub[i] = i < s.len ? (char)tolower((unsigned char)s.p[i]) : '\0';
        if (c->argc != 2) arity_error(c, sub);
        else if (sub[0] == 'h') config_help_cmd(c);
        else if (sub[2] == 's') config_resetstat_cmd(c);
        else config_rewrite_cmd(c);
    } else {
        reply_errorf(c, "ERR unknown subcommand '%.*s'. Try CONFIG HELP.", (int)(s.len > 128 ? 128 : s.len), s.p);
    }
}

/* ---------------------------------------------------------------- table */

#define ADM (CMD_ADMIN | CMD_NOSCRIPT | CMD_LOADING | CMD_STALE)
#define ACL_ADM "admin slow dangerous"
static command config_subcmds[] = {
    CMD("get", cmd_config, -3, .flags = ADM, .acl = ACL_ADM, .summary = "Get the values of configuration parameters",
        .since = "2.0.0", .complexity = "O(N) when N is the number of configuration parameters provided"),
    CMD("set", cmd_config, -4, .flags = ADM, .acl = ACL_ADM,
        .summary = "Set configuration parameters to the given values", .since = "2.0.0",
        .complexity = "O(N) when N is the number of configuration parameters provided"),
    CMD("resetstat", cmd_config, 2, .flags = ADM, .acl = ACL_ADM, .summary = "Reset the stats returned by INFO",
        .since = "2.0.0", .complexity = "O(1)"),
    CMD("rewrite", cmd_config, 2, .flags = ADM, .acl = ACL_ADM,
        .summary = "Rewrite the configuration file with the in memory configuration", .since = "2.8.0",
        .complexity = "O(1)"),
    CMD("help", cmd_config, 2, .flags = CMD_LOADING | CMD_STALE, .acl = "slow",
        .summary = "Show helpful text about the different subcommands", .since = "5.0.0", .complexity = "O(1)"),
    {0},
};

static command config_commands[] = {
    CMD("config", cmd_config, -2, .acl = "slow", .summary = "A container for server configuration commands",
        .since = "2.0.0", .complexity = "Depends on subcommand.", .subcmds = config_subcmds),
    {0},
};
const command_group config_group = {"server", config_commands};
