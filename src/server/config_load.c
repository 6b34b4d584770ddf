/* config_load.c - loading the configuration: redis-server's command line
 * (`[file] [--name value ...]`, "-" for stdin), redis.conf lines, `include`,
 * and fatal errors in Redis's format plus file:line.
 *
 * Why a file of its own: the loader runs once at start-up (and for the
 * unit tests and the fuzzer through config_load_string), has nothing to do
 * with serving clients, and is where config text from outside is read.
 * Lines are split by splitargs.c, the splitter inline requests use too;
 * values are checked and stored by config.c. The CONFIG command, which
 * uses config_split_args, config_read_file and config_trim for REWRITE, is
 * in config_cmd.c.
 */
#include "command.h"
#include "config.h"
#include "config_internal.h"
#include "acl_file.h"
#include "sbuf.h"
#include "server.h"
#include "splitargs.h"
#include "zmalloc.h"

#include <ctype.h>
#include <errno.h>
#include <glob.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>

/* ------------------------------------------------------------ strings */

/* Splits a copy of the line in place, a batch of tokens at a time, and
 * copies each token out (with its length when lens_out is not NULL; a
 * "\x00" escape is an error when it is). */
static int split_line(const char *line, int *argc_out, char ***argv_out, size_t **lens_out) {
    size_t len = strlen(line), pos = 0, *lens = NULL;
    char *buf = zstrndup(line, len);
    int argc = 0, cap = 0;
    char **argv = NULL;
    ssize_t n;
    do {
        splitargs_span tok[16];
        n = splitargs(buf, len, &pos, lens_out ? 0 : SPLITARGS_NO_NUL_ESCAPE, tok, sizeof tok / sizeof tok[0]);
        if (n > 0 && argc + (int)n > cap) {
            cap = 2 * cap + (int)n;
            argv = zrealloc(argv, sizeof(char *) * (size_t)cap);
            lens = zrealloc(lens, sizeof(size_t) * (size_t)cap);
        }
        for (ssize_t k = 0; k < n; k++) {
            lens[argc] = tok[k].len;
            argv[argc++] = zstrndup(buf + tok[k].off, tok[k].len);
        }
    } while (n > 0 && pos < len);
    zfree(buf);
    if (n < 0) {
        config_free_args(argc, argv);
        zfree(lens);
        return -1;
    }
    *argc_out = argc;
    *argv_out = argv ? argv : zmalloc(sizeof(char *));
    if (lens_out) *lens_out = lens ? lens : zmalloc(sizeof(size_t));
    else zfree(lens);
    return 0;
}

int config_split_args(const char *line, int *argc_out, char ***argv_out) {
    return split_line(line, argc_out, argv_out, NULL);
}

int config_split_args_bin(const char *line, int *argc_out, char ***argv_out, size_t **lens_out) {
    return split_line(line, argc_out, argv_out, lens_out);
}

/* Redis trims each line of " \t\r\n" before splitting it. */
void config_trim(char *s) {
    size_t n = strlen(s), a = 0;
    while (n && strchr(" \t\r\n", s[n - 1])) n--;
    while (a < n && strchr(" \t\r\n", s[a])) a++;
    memmove(s, s + a, n - a);
    s[n - a] = '\0';
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

char *config_read_file(const char *path) {
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
    char *text = config_read_file(path);
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

/* Directives ferry accepts and ignores: one warning each, collected while
 * loading because where they go depends on the whole configuration (a
 * logfile may be set further down, or on the command line): the log file
 * once the server logs (config_log_ignored), else stderr when the load
 * ends, as before there was a log file to reach. */
static char **ignored;
static int nignored;

static void ignored_reset(void) {
    for (int i = 0; i < nignored; i++) zfree(ignored[i]);
    zfree(ignored);
    ignored = NULL;
    nignored = 0;
}

static void warn_ignored(const char *src, int line, const char *name) {
    if (config_sandbox & 2) return;
    char msg[1024];
    snprintf(msg, sizeof msg, "%s:%d: '%s' is not implemented by ferry; the setting is accepted and ignored", src,
             line, name);
    ignored = zrealloc(ignored, sizeof *ignored * (size_t)(nignored + 1));
    ignored[nignored++] = zstrdup(msg);
}

/* No log file: the warnings go to stderr now (the log would be stdout). */
static void ignored_to_stderr(const ferry_config *cfg) {
    if (cfg->logfile && cfg->logfile[0]) return;
    for (int i = 0; i < nignored; i++) fprintf(stderr, "ferry: %s\n", ignored[i]);
    ignored_reset();
}

void config_log_ignored(void) {
    for (int i = 0; i < nignored; i++) server_log(LOG_WARNING_, "%s", ignored[i]);
    ignored_reset();
}

/* rename-command lines, applied once the command table exists
 * (config_apply_renames); a load starts without them. */
typedef struct rename_line {
    char *from, *to, *src;
    int line;
} rename_line;
static rename_line *renames;
static int nrenames;

static void renames_reset(void) {
    for (int i = 0; i < nrenames; i++) {
        zfree(renames[i].from);
        zfree(renames[i].to);
        zfree(renames[i].src);
    }
    zfree(renames);
    renames = NULL;
    nrenames = 0;
}

static void rename_record(const char *from, const char *to, const char *src, int line) {
    renames = zrealloc(renames, sizeof *renames * (size_t)(nrenames + 1));
    renames[nrenames++] = (rename_line){zstrdup(from), zstrdup(to), zstrdup(src), line};
}

int config_apply_renames(void) {
    for (int i = 0; i < nrenames; i++) {
        rename_line *r = &renames[i];
        int rc = command_rename(r->from, r->to);
        if (rc == 0) continue;
        fprintf(stderr, "\n*** FATAL CONFIG FILE ERROR (Redis %s) ***\nReading the configuration file, at line %d\n"
                        ">>> 'rename-command \"%s\" \"%s\"'\n%s\n(%s:%d)\n",
                FERRY_VERSION, r->line, r->from, r->to,
                rc == -1 ? "No such command in rename-command" : "Target command name already exists", r->src, r->line);
        return -1;
    }
    renames_reset();
    return 0;
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
        if (argc != 3) msg = "Bad directive or wrong number of arguments";
        else rename_record(argv[1], argv[2], src, line);
    } else if (!strcmp(name, "user")) {
        if (argc < 2) msg = "Bad directive or wrong number of arguments";
        else *rc = acl_config_user_line(argc, argv, why, wlen); /* applied at start-up (acl_file.c) */
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

/* A NUL byte ("\x00") is data only in the value of a binary directive
 * (requirepass, masterauth); elsewhere the line is refused as before. */
static int nul_refused(int argc, char **argv, const size_t *lens) {
    int i = config_lookup(argv[0], strlen(argv[0]));
    for (int k = 0; k < argc; k++)
        if (lens[k] != strlen(argv[k]) && !(k == 1 && argc == 2 && i >= 0 && config_is_binary(i))) return 1;
    return 0;
}

/* One directive. 0 ok, -1 error explained in why, -2 error already in x->err. */
static int do_directive(loadctx *x, int argc, char **argv, const size_t *lens, const char *src, int line, char *why,
                        size_t wlen) {
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
    char *val = multi ? join_args(argc - 1, argv + 1)
                : config_is_binary(i) ? config_bin_encode(argv[1], lens[1]) : zstrdup(argv[1]);
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

static int load_line(loadctx *x, char *line, const char *src, int lineno, int offset) {
    char why[1024];
    int argc, rc;
    char **argv;
    size_t *lens;
    if (config_split_args_bin(line, &argc, &argv, &lens) == -1) {
        snprintf(why, sizeof why, "Unbalanced quotes in configuration line");
        rc = -1;
    } else {
        rc = 0;
        if (argc > 0) {
            for (char *p = argv[0]; *p; p++) *p = (char)tolower((unsigned char)*p);
            if (nul_refused(argc, argv, lens)) {
                snprintf(why, sizeof why, "Unbalanced quotes in configuration line"); /* as a "\x00" always was */
                rc = -1;
            } else {
                rc = do_directive(x, argc, argv, lens, src, lineno, why, sizeof why);
            }
        }
        config_free_args(argc, argv);
        zfree(lens);
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
        config_trim(line);
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
    acl_config_users_reset(); /* a load starts without user lines */
    renames_reset();
    ignored_reset();
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

/* -v / --version and -h / --help print and exit, as redis-server does. */
static void version_or_help(int argc, char **argv) {
    if (argc >= 2 && (!strcmp(argv[1], "-v") || !strcmp(argv[1], "--version"))) {
        printf("Redis server v=%s sha=00000000:0 malloc=libc bits=64 build=ferry-%s\n", FERRY_VERSION,
               FERRY_OWN_VERSION);
        exit(0);
    }
    if (argc >= 2 && (!strcmp(argv[1], "-h") || !strcmp(argv[1], "--help"))) {
        usage(argv[0]);
        exit(0);
    }
}

/* The file named on the command line, remembered (absolute) for CONFIG
 * REWRITE. Returns its number of lines. */
static int load_main_file(loadctx *x, const char *file) {
    char *text = config_read_file(file);
    if (!text) {
        fprintf(stderr, "Fatal error, can't open config file '%s': %s\n", file, strerror(errno));
        exit(1);
    }
    char *abs = realpath(file, NULL);
    x->cfg->config_file = zstrdup(abs ? abs : file);
    free(abs);
    if (load_text(x, text, file, 0)) fatal(x->err);
    int lines = count_lines(text);
    zfree(text);
    return lines;
}

void config_load(ferry_config *cfg, int argc, char **argv) {
    config_defaults(cfg);
    acl_config_users_reset();
    renames_reset();
    ignored_reset();
    version_or_help(argc, argv);
    const char *file = argc >= 2 && argv[1][0] != '-' ? argv[1] : NULL;
    int use_stdin = 0, lines = 0;
    char *opts = options_text(argc, argv, file ? 2 : 1, &use_stdin);
    char err[8192];
    loadctx x = {cfg, 0, 0, err, sizeof err};
    if (file) lines = load_main_file(&x, file);
    if (use_stdin) {
        char *text = read_stream(stdin);
        if (load_text(&x, text, "<stdin>", lines)) fatal(err);
        lines += count_lines(text);
        zfree(text);
    }
    if (opts[0] && load_text(&x, opts, "<command line>", lines + 1)) fatal(err);
    zfree(opts);
    final_checks(cfg);
    ignored_to_stderr(cfg);
}
