/* config_cmd.c - loading the configuration and the CONFIG command.
 *
 * config.c owns the directive table and the value rules; this file is what
 * uses them:
 *  - the loader: redis-server's command line (`[file] [--name value ...]`,
 *    "-" for stdin), redis.conf lines split with sdssplitargs rules,
 *    `include`, and fatal errors in Redis's format plus file:line;
 *  - CONFIG GET / SET (several pairs, all or nothing) / RESETSTAT /
 *    REWRITE (in place, keeping comments and unknown lines) / HELP, with
 *    Redis 7's replies and error texts.
 */
#include "command.h"
#include "config.h"
#include "evict.h"
#include "sbuf.h"
#include "reply.h"
#include "server.h"
#include "util.h"
#include "zmalloc.h"

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <glob.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

/* ---- config.c's API (entry flags repeat config.c's values) */
#define CFG_IMM 1
#define CFG_PROT 2
#define CFG_HID 4
int config_count(void);
const char *config_name(int i);
int config_real(int i);
unsigned config_flags(int i);
const char *config_default(int i);
int config_is_multiarg(int i);
int config_is_stored(int i);
int config_lookup(const char *name, size_t len);
char *config_get(const ferry_config *cfg, int i);
int config_parse(const ferry_config *cur, int i, const char *val, char **canon, char *err, size_t errlen);
void config_apply(ferry_config *cfg, int i, const char *canon);
void config_free_args(int argc, char **argv);
char *config_rewrite_lines(const ferry_config *cfg, int i, int *is_default);
char *config_repr(const char *s);
extern int config_sandbox;

/* ---- exported by this file */
int config_split_args(const char *p, int *argc_out, char ***argv_out);
int config_load_string(ferry_config *cfg, const char *text, char *err, size_t errlen);
/* Called after CONFIG SET changed `port` or `bind` (the lead rebinds). */
void (*config_port_changed)(void) = NULL;

/* ---- provided by the server core */
void stats_reset_all(void);

/* ------------------------------------------------------------ strings */

static int hexval(int c) {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    return -1;
}

/* One double-quoted token starting after the '"'. Returns the position
 * after the closing quote, or NULL (unbalanced, or an escaped NUL byte). */
static const char *split_dquoted(const char *p, sbuf *cur) {
    for (;; p++) {
        if (!*p) return NULL;
        if (*p == '\\' && p[1] == 'x' && hexval(p[2]) >= 0 && hexval(p[3]) >= 0) {
            char byte = (char)(hexval(p[2]) * 16 + hexval(p[3]));
            if (!byte) return NULL;
            sb_addc(cur, byte);
            p += 3;
        } else if (*p == '\\' && p[1]) {
            p++;
            char c = *p == 'n' ? '\n' : *p == 'r' ? '\r' : *p == 't' ? '\t' : *p == 'b' ? '\b' : *p == 'a' ? '\a' : *p;
            sb_addc(cur, c);
        } else if (*p == '"') {
            if (p[1] && !isspace((unsigned char)p[1])) return NULL;
            return p + 1;
        } else {
            sb_addc(cur, *p);
        }
    }
}

static const char *split_squoted(const char *p, sbuf *cur) {
    for (;; p++) {
        if (!*p) return NULL;
        if (*p == '\\' && p[1] == '\'') {
            p++;
            sb_addc(cur, '\'');
        } else if (*p == '\'') {
            if (p[1] && !isspace((unsigned char)p[1])) return NULL;
            return p + 1;
        } else {
            sb_addc(cur, *p);
        }
    }
}

/* Splits a line into arguments with redis.conf's rules (sdssplitargs):
 * blanks separate, "..." knows \xHH \n \r \t \b \a escapes, '...' knows \'.
 * Returns 0 and a zmalloc'd vector, or -1 on unbalanced quotes. */
int config_split_args(const char *p, int *argc_out, char ***argv_out) {
    int argc = 0, cap = 4;
    char **argv = zmalloc(sizeof(char *) * (size_t)cap);
    sbuf cur = {0};
    for (;;) {
        while (*p && isspace((unsigned char)*p)) p++;
        if (!*p) break;
        cur.len = 0;
        sb_add(&cur, "", 0);
        while (*p && *p != ' ' && *p != '\n' && *p != '\r' && *p != '\t') {
            if (*p == '"') p = split_dquoted(p + 1, &cur);
            else if (*p == '\'') p = split_squoted(p + 1, &cur);
            else sb_addc(&cur, *p++);
            if (!p) {
                zfree(cur.p);
                config_free_args(argc, argv);
                return -1;
            }
        }
        if (argc == cap) argv = zrealloc(argv, sizeof(char *) * (size_t)(cap *= 2));
        argv[argc++] = zstrndup(cur.p, cur.len);
    }
    zfree(cur.p);
    *argc_out = argc;
    *argv_out = argv;
    return 0;
}

/* Whole file (or stream) into a NUL-terminated zmalloc'd buffer. */
static char *read_stream(FILE *f) {
    sbuf b = {0};
    char chunk[4096];
    size_t n;
    sb_add(&b, "", 0);
    while ((n = fread(chunk, 1, sizeof chunk, f)) > 0) sb_add(&b, chunk, n);
    return b.p;
}

static char *read_file(const char *path) {
    FILE *f = fopen(path, "r");
    if (!f) return NULL;
    struct stat st;
    if (fstat(fileno(f), &st) == 0 && S_ISDIR(st.st_mode)) {
        fclose(f);
        errno = EISDIR;
        return NULL;
    }
    char *text = read_stream(f);
    fclose(f);
    return text;
}

static int count_lines(const char *s) {
    int n = 0;
    for (; *s; s++) n += *s == '\n';
    return n;
}

/* ------------------------------------------------------------- loader */

typedef struct loadctx {
    ferry_config *cfg;
    int depth;          /* include nesting */
    int save_seen;      /* later `save` lines add to the first one */
    char *err;
    size_t errlen;
} loadctx;

static int load_text(loadctx *x, const char *text, const char *src, int offset);

static int load_file(loadctx *x, const char *path, char *why, size_t wlen) {
    char *text = read_file(path);
    if (!text) {
        snprintf(why, wlen, "Fatal error, can't open config file '%s': %s", path, strerror(errno));
        return -1;
    }
    x->depth++;
    int rc = load_text(x, text, path, 0);
    x->depth--;
    zfree(text);
    return rc ? -2 : 0;
}

/* include <file|glob>: files are loaded where the directive stands. */
static int do_include(loadctx *x, const char *pattern, char *why, size_t wlen) {
    if (config_sandbox & 1) {
        snprintf(why, wlen, "include is disabled here");
        return -1;
    }
    if (x->depth >= 16) {
        snprintf(why, wlen, "include nesting is too deep (a file includes itself?)");
        return -1;
    }
    if (!strpbrk(pattern, "*?[")) return load_file(x, pattern, why, wlen);
    glob_t g;
    int rc = glob(pattern, 0, NULL, &g);
    if (rc == GLOB_NOMATCH) return 0;
    if (rc != 0) {
        snprintf(why, wlen, "Failed to expand include pattern '%s'", pattern);
        return -1;
    }
    for (size_t k = 0; rc == 0 && k < g.gl_pathc; k++) rc = load_file(x, g.gl_pathv[k], why, wlen);
    globfree(&g);
    return rc;
}

/* `user` lines: only the default user, enabled, without password and with
 * every permission (what CONFIG REWRITE of a plain Redis writes). Anything
 * else would restrict access in Redis, so ignoring it would be unsafe. */
static int user_line_ok(int argc, char **argv) {
    static const char *ok[] = {"on", "nopass", "~*", "&*", "+@all", "allkeys", "allchannels",
                               "allcommands", "sanitize-payload", "skip-sanitize-payload"};
    if (argc < 2 || strcmp(argv[1], "default")) return 0;
    for (int i = 2; i < argc; i++) {
        size_t k = 0;
        for (; k < sizeof ok / sizeof ok[0]; k++)
            if (!strcasecmp(argv[i], ok[k])) break;
        if (k == sizeof ok / sizeof ok[0]) return 0;
    }
    return 1;
}

static void warn_ignored(const char *src, int line, const char *name) {
    if (config_sandbox & 2) return;
    fprintf(stderr, "ferry: %s:%d: '%s' is not implemented by ferry; the setting is accepted and ignored\n", src,
            line, name);
}

/* Directives that are not CONFIG parameters. 1 = handled (rc in *rc). */
static int special_directive(loadctx *x, int argc, char **argv, const char *src, int line, char *why,
                             size_t wlen, int *rc) {
    const char *name = argv[0];
    const char *msg = NULL;
    *rc = 0;
    if (!strcmp(name, "include")) {
        if (argc != 2) msg = "Bad directive or wrong number of arguments";
        else *rc = do_include(x, argv[1], why, wlen);
    } else if (!strcmp(name, "rename-command")) {
        msg = argc != 3 ? "Bad directive or wrong number of arguments" : "rename-command is not supported by ferry";
    } else if (!strcmp(name, "user")) {
        if (!user_line_ok(argc, argv))
            msg = "ACL users are not supported by ferry (only 'user default on nopass ~* &* +@all'; use requirepass)";
    } else if (!strcmp(name, "loadmodule")) {
        msg = "modules are not supported by ferry";
    } else if (!strcmp(name, "sentinel")) {
        msg = "sentinel directive while not in sentinel mode";
    } else if (!strcmp(name, "list-max-ziplist-entries") || !strcmp(name, "list-max-ziplist-value") ||
               !strcmp(name, "lua-replicate-commands")) {
        warn_ignored(src, line, name); /* deprecated in Redis 7 too */
    } else {
        return 0;
    }
    if (msg) {
        snprintf(why, wlen, "%s", msg);
        *rc = -1;
    }
    return 1;
}

static char *join_args(int argc, char **argv) {
    sbuf b = {0};
    sb_add(&b, "", 0);
    for (int i = 0; i < argc; i++) {
        if (i) sb_addc(&b, ' ');
        sb_adds(&b, argv[i]);
    }
    return b.p;
}

/* One directive. 0 ok, -1 error explained in why, -2 error already in x->err. */
static int do_directive(loadctx *x, int argc, char **argv, const char *src, int line, char *why, size_t wlen) {
    int rc;
    if (special_directive(x, argc, argv, src, line, why, wlen, &rc)) return rc;
    int i = config_lookup(argv[0], strlen(argv[0]));
    if (i < 0) {
        snprintf(why, wlen, "Bad directive or wrong number of arguments");
        return -1;
    }
    int multi = config_is_multiarg(i);
    if (!multi && argc != 2) {
        snprintf(why, wlen, "wrong number of arguments");
        return -1;
    }
    char *val = multi ? join_args(argc - 1, argv + 1) : zstrdup(argv[1]);
    char *canon = NULL;
    rc = config_parse(x->cfg, i, val, &canon, why, wlen);
    zfree(val);
    if (rc) return -1;
    if (!strcmp(config_name(config_real(i)), "save")) {
        char *cur = config_get(x->cfg, i);
        if (x->save_seen && *canon && *cur) {
            char *both = zmalloc(strlen(cur) + strlen(canon) + 2);
            sprintf(both, "%s %s", cur, canon);
            zfree(canon);
            canon = both;
        }
        zfree(cur);
        x->save_seen = 1;
    }
    config_apply(x->cfg, i, canon);
    if (config_is_stored(i) && strcmp(canon, config_default(i))) warn_ignored(src, line, argv[0]);
    zfree(canon);
    return 0;
}

static void trim(char *s) {
    size_t n = strlen(s), a = 0;
    while (n && strchr(" \t\r\n", s[n - 1])) n--;
    while (a < n && strchr(" \t\r\n", s[a])) a++;
    memmove(s, s + a, n - a);
    s[n - a] = '\0';
}

static int load_line(loadctx *x, char *line, const char *src, int lineno, int offset) {
    char why[1024];
    int argc, rc;
    char **argv;
    if (config_split_args(line, &argc, &argv) == -1) {
        snprintf(why, sizeof why, "Unbalanced quotes in configuration line");
        rc = -1;
    } else {
        rc = 0;
        if (argc > 0) {
            for (char *p = argv[0]; *p; p++) *p = (char)tolower((unsigned char)*p);
            rc = do_directive(x, argc, argv, src, lineno, why, sizeof why);
        }
        config_free_args(argc, argv);
    }
    if (rc == -1) {
        char where[600];
        if (!strcmp(src, "<command line>")) snprintf(where, sizeof where, "(command line option %d)", lineno);
        else snprintf(where, sizeof where, "(%.500s:%d)", src, lineno);
        snprintf(x->err, x->errlen, "Reading the configuration file, at line %d\n>>> '%s'\n%s\n%s", offset + lineno,
                 line, why, where);
    }
    return rc;
}

/* Lines are numbered from offset+1 in the "at line N" message (Redis
 * numbers a file, stdin and the options as one text). */
static int load_text(loadctx *x, const char *text, const char *src, int offset) {
    int lineno = 0;
    for (const char *p = text; *p;) {
        const char *nl = strchr(p, '\n');
        size_t n = nl ? (size_t)(nl - p) : strlen(p);
        char *line = zstrndup(p, n);
        lineno++;
        trim(line);
        int rc = line[0] && line[0] != '#' ? load_line(x, line, src, lineno, offset) : 0;
        zfree(line);
        if (rc) return -1;
        if (!nl) break;
        p = nl + 1;
    }
    return 0;
}

/* Loads config text on top of cfg (call config_defaults first). On error
 * returns -1 with a Redis-style explanation (several lines) in err. */
int config_load_string(ferry_config *cfg, const char *text, char *err, size_t errlen) {
    loadctx x = {cfg, 0, 0, err, errlen};
    if (errlen) err[0] = '\0';
    return load_text(&x, text, "<string>", 0) ? -1 : 0;
}

static void fatal(const char *msg) {
    fprintf(stderr, "\n*** FATAL CONFIG FILE ERROR (Redis %s) ***\n%s\n", FERRY_VERSION, msg);
    exit(1);
}

static void usage(const char *prog) {
    static const char *lines[] = {
        "Usage: %s [/path/to/redis.conf] [options] [-]",
        "       %s - (read config from stdin)",
        "       %s -v or --version",
        "       %s -h or --help",
        "",
        "Examples:",
        "       %s (run the server with default conf)",
        "       echo 'maxmemory 128mb' | %s -",
        "       %s /etc/redis/6379.conf",
        "       %s --port 7777",
        "       %s /etc/myredis.conf --loglevel verbose -",
        "       %s /etc/myredis.conf --loglevel verbose",
        "",
        "ferry is a Redis-compatible server; directives of redis.conf that ferry",
        "does not implement are accepted with a warning and ignored.",
    };
    for (size_t i = 0; i < sizeof lines / sizeof lines[0]; i++) {
        fprintf(stdout, lines[i], prog);
        fputc('\n', stdout);
    }
}

/* The --name value arguments as config text, like redis-server builds it:
 * "--name" starts a line (unless the previous name still lacks a value),
 * other arguments are values, quoted. "-" as first/last argument = stdin. */
static char *options_text(int argc, char **argv, int j, int *use_stdin) {
    sbuf b = {0};
    int have_value = 1;
    sb_add(&b, "", 0);
    for (; j < argc; j++) {
        const char *a = argv[j];
        if (!strcmp(a, "-") && (j == 1 || j == argc - 1)) {
            *use_stdin = 1;
        } else if (have_value && a[0] == '-' && a[1] == '-') {
            int n = 1;
            char **tok;
            if (b.len) sb_addc(&b, '\n');
            sb_adds(&b, a + 2);
            sb_addc(&b, ' ');
            if (config_split_args(a, &n, &tok) == 0) config_free_args(n, tok);
            have_value = n != 1;
            /* `--save` with nothing after it means save "" */
            if (n == 1 && !strcasecmp(a, "--save") &&
                (j == argc - 1 || (argv[j + 1][0] == '-' && argv[j + 1][1] == '-'))) {
                sb_adds(&b, "\"\"");
                have_value = 1;
            }
        } else {
            char *q = config_repr(a);
            sb_adds(&b, q);
            sb_addc(&b, ' ');
            zfree(q);
            have_value = 1;
        }
    }
    return b.p;
}

/* Checks Redis does while loading (it chdirs and opens the log then). */
static void final_checks(const ferry_config *cfg) {
    char msg[1200];
    struct stat st;
    if (stat(cfg->dir, &st) != 0 || !S_ISDIR(st.st_mode)) {
        snprintf(msg, sizeof msg, "Can't chdir to '%.1000s': %s", cfg->dir, strerror(errno ? errno : ENOTDIR));
        fatal(msg);
    }
    if (cfg->logfile && cfg->logfile[0]) {
        FILE *f = fopen(cfg->logfile, "a");
        if (!f) {
            snprintf(msg, sizeof msg, "Can't open the log file: %s", strerror(errno));
            fatal(msg);
        }
        fclose(f);
    }
}

void config_load(ferry_config *cfg, int argc, char **argv) {
    config_defaults(cfg);
    if (argc >= 2 && (!strcmp(argv[1], "-v") || !strcmp(argv[1], "--version"))) {
        printf("Redis server v=%s sha=00000000:0 malloc=libc bits=64 build=ferry-%s\n", FERRY_VERSION,
               FERRY_OWN_VERSION);
        exit(0);
    }
    if (argc >= 2 && (!strcmp(argv[1], "-h") || !strcmp(argv[1], "--help"))) {
        usage(argv[0]);
        exit(0);
    }
    const char *file = argc >= 2 && argv[1][0] != '-' ? argv[1] : NULL;
    int use_stdin = 0, lines = 0;
    char *opts = options_text(argc, argv, file ? 2 : 1, &use_stdin);
    char err[8192];
    loadctx x = {cfg, 0, 0, err, sizeof err};
    if (file) {
        char *text = read_file(file);
        if (!text) {
            fprintf(stderr, "Fatal error, can't open config file '%s': %s\n", file, strerror(errno));
            exit(1);
        }
        char *abs = realpath(file, NULL);
        cfg->config_file = zstrdup(abs ? abs : file);
        free(abs);
        if (load_text(&x, text, file, 0)) fatal(err);
        lines = count_lines(text);
        zfree(text);
    }
    if (use_stdin) {
        char *text = read_stream(stdin);
        if (load_text(&x, text, "<stdin>", lines)) fatal(err);
        lines += count_lines(text);
        zfree(text);
    }
    if (opts[0] && load_text(&x, opts, "<command line>", lines + 1)) fatal(err);
    zfree(opts);
    final_checks(cfg);
}

/* ------------------------------------------------------ CONFIG command */

static int span_has_nul(span s) { return memchr(s.p, '\0', s.len) != NULL; }

static int span_eq_span_nocase(span a, span b) {
    return a.len == b.len && strncasecmp(a.p, b.p, a.len) == 0;
}

/* Value as CONFIG GET shows it: `dir` is absolute, like Redis's getcwd(). */
static char *value_for_get(int i) {
    char *v = config_get(&srv.cfg, i);
    if (!strcmp(config_name(config_real(i)), "dir")) {
        char *abs = realpath(v, NULL);
        if (abs) {
            zfree(v);
            v = zstrdup(abs);
            free(abs);
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
        char *v = value_for_get(idx[k]);
        reply_bulk(c, names[k].p, names[k].len);
        reply_bulk_cstr(c, v);
        zfree(v);
    }
    zfree(idx);
    zfree(names);
}

static int client_is_local(const client *c) {
    return c->fd < 0 || !strncmp(c->addr, "127.", 4) || !strncmp(c->addr, "::1:", 4);
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

/* CONFIG SET name value [name value ...]: validate all, then apply all. */
static void config_set_cmd(client *c) {
    if ((c->argc - 2) % 2 != 0) {
        reply_err_syntax(c);
        return;
    }
    int n = (c->argc - 2) / 2, ok = 0, rebind = 0, maxmem = 0;
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
    }
    for (int k = 0; k < n; k++) {
        span v = c->argv[3 + 2 * k];
        const char *cname = config_name(idx[k]);
        char *val = zstrndup(v.p, v.len);
        int rc = span_has_nul(v) ? (snprintf(err, sizeof err, "argument contains a NUL byte"), -1)
                                 : config_parse(&srv.cfg, idx[k], val, &canon[k], err, sizeof err);
        zfree(val);
        if (rc == 0) rc = set_precheck(idx[k], &canon[k], err, sizeof err);
        if (rc) {
            set_fail(c, cname, strlen(cname), err);
            goto out;
        }
    }
    for (int k = 0; k < n; k++) {
        const char *name = config_name(config_real(idx[k]));
        config_apply(&srv.cfg, idx[k], canon[k]);
        if (!strcmp(name, "dir") && chdir(canon[k]) != 0)
            server_log(LOG_WARNING_, "Can't chdir to '%s': %s", canon[k], strerror(errno));
        if (!strcmp(name, "port") || !strcmp(name, "bind")) rebind = 1;
        if (!strcmp(name, "maxmemory")) maxmem = 1;
    }
    if (rebind && config_port_changed) config_port_changed();
    if (maxmem) evict_maxmemory_changed(); /* starts evicting if the new limit is below usage */
    ok = 1;
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

/* The new file text: old lines kept (comments, blank and unknown lines,
 * include/user...), the first line of each known directive replaced by
 * its current value and later ones dropped; then changed directives that
 * were not in the file, after a header line. */
static char *rewrite_text(const char *old) {
    int n = config_count(), header = 0, appended = 0;
    char *seen = zcalloc((size_t)n);
    sbuf out = {0};
    sb_add(&out, "", 0);
    for (const char *p = old; *p;) {
        const char *nl = strchr(p, '\n');
        size_t len = nl ? (size_t)(nl - p) : strlen(p);
        char *line = zstrndup(p, len), *t = zstrdup(line), **argv;
        int argc, i = -1, isdef;
        trim(t);
        if (!strcmp(t, REWRITE_HEADER)) header = 1;
        if (t[0] && t[0] != '#' && config_split_args(t, &argc, &argv) == 0) {
            if (argc > 0) i = config_lookup(argv[0], strlen(argv[0]));
            config_free_args(argc, argv);
        }
        if (i < 0) {
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
        if (!isdef && lines[0]) {
            if (!header && !appended++) sb_adds(&out, REWRITE_HEADER "\n");
            sb_adds(&out, lines);
        }
        zfree(lines);
    }
    zfree(seen);
    return out.p;
}

/* Writes next to the file, fsyncs, then renames over it. */
static int write_atomically(const char *path, const char *text, char *err, size_t errlen) {
    char tmp[PATH_MAX + 32];
    struct stat st;
    mode_t mode = stat(path, &st) == 0 ? (st.st_mode & 07777) : 0644;
    snprintf(tmp, sizeof tmp, "%s.ferry-tmp-%d", path, (int)getpid());
    int fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, mode);
    if (fd == -1) goto fail;
    size_t len = strlen(text), off = 0;
    while (off < len) {
        ssize_t w = write(fd, text + off, len - off);
        if (w < 0 && errno == EINTR) continue;
        if (w <= 0) goto fail_fd;
        off += (size_t)w;
    }
    if (fsync(fd) == -1) goto fail_fd;
    if (close(fd) == -1) {
        fd = -1;
        goto fail_fd;
    }
    if (rename(tmp, path) == -1) {
        fd = -1;
        goto fail_fd;
    }
    return 0;
fail_fd:;
    int saved = errno;
    if (fd != -1) close(fd);
    unlink(tmp);
    errno = saved;
fail:
    snprintf(err, errlen, "%s", strerror(errno));
    return -1;
}

static void config_rewrite_cmd(client *c) {
    if (!srv.cfg.config_file) {
        reply_error(c, "ERR The server is running without a config file");
        return;
    }
    char err[256], *abs = realpath(srv.cfg.config_file, NULL);
    const char *path = abs ? abs : srv.cfg.config_file;
    char *old = read_file(path);
    int rc = -1;
    if (!old && errno != ENOENT) {
        snprintf(err, sizeof err, "%s", strerror(errno));
    } else {
        char *text = rewrite_text(old ? old : "");
        rc = write_atomically(path, text, err, sizeof err);
        zfree(text);
    }
    zfree(old);
    free(abs);
    if (rc) {
        server_log(LOG_WARNING_, "CONFIG REWRITE failed: %s", err);
        reply_errorf(c, "ERR Rewriting config file: %s", err);
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

#define CMD(...) {__VA_ARGS__, NULL, {0}, 0, 0, 0, 0}
#define ADM (CMD_ADMIN | CMD_NOSCRIPT | CMD_LOADING | CMD_STALE)
#define ACL_ADM "admin slow dangerous"
static command config_subcmds[] = {
    CMD("get", cmd_config, -3, ADM, ACL_ADM, 0, 0, 0, "server", "Get the values of configuration parameters",
        "2.0.0", "O(N) when N is the number of configuration parameters provided", NULL),
    CMD("set", cmd_config, -4, ADM, ACL_ADM, 0, 0, 0, "server", "Set configuration parameters to the given values",
        "2.0.0", "O(N) when N is the number of configuration parameters provided", NULL),
    CMD("resetstat", cmd_config, 2, ADM, ACL_ADM, 0, 0, 0, "server", "Reset the stats returned by INFO", "2.0.0",
        "O(1)", NULL),
    CMD("rewrite", cmd_config, 2, ADM, ACL_ADM, 0, 0, 0, "server",
        "Rewrite the configuration file with the in memory configuration", "2.8.0", "O(1)", NULL),
    CMD("help", cmd_config, 2, CMD_LOADING | CMD_STALE, "slow", 0, 0, 0, "server",
        "Show helpful text about the different subcommands", "5.0.0", "O(1)", NULL),
    {0},
};

command config_commands[] = {
    CMD("config", cmd_config, -2, 0, "slow", 0, 0, 0, "server", "A container for server configuration commands",
        "2.0.0", "Depends on subcommand.", config_subcmds),
    {0},
};
