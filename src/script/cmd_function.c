/* cmd_function.c - Redis 7 functions: FUNCTION LOAD / DELETE / FLUSH / LIST
 * / STATS / KILL / DUMP / RESTORE / HELP, FCALL and FCALL_RO, with Redis
 * 7.0's replies. The engine (script.h) runs a library's code and calls its
 * functions; this file keeps the libraries.
 *
 * A library is its name, its code and the functions it registered. Function
 * names (compared without case, as library names) are unique across libraries; a load that would break that, or that
 * fails in any way, changes nothing (REPLACE included: the old library is
 * dropped only once the new one has loaded). The list is short in practice
 * (a handful of libraries), so lookups walk it.
 *
 * FUNCTION DUMP is Redis's payload: per library the RDB function opcode
 * (245) and its code as an RDB string, then the DUMP footer (RDB version,
 * CRC-64), so payloads move between ferry and redis-server.
 */
#include "command.h"
#include "monitor.h"
#include "rdb.h"
#include "rdb_io.h"
#include "reply.h"
#include "script.h"
#include "splitargs.h"
#include "server.h"
#include "util.h"
#include "zmalloc.h"
#include <stdio.h>
#include <string.h>
#include <strings.h>

#define RDB_OPCODE_FUNCTION2 245
#define RDB_OPCODE_FUNCTION_PRE_GA 246
#define ERR_NAME "Library names can only contain letters, numbers, or underscores(_) and must be at least one " \
                 "character long"

typedef struct library {
    char *name;
    char *code;
    size_t code_len;
    script_fn_list fns;
    struct library *next;
} library;

static library *libs;

static int nlibs(void) {
    int n = 0;
    for (library *l = libs; l; l = l->next) n++;
    return n;
}

static int nfunctions(void) {
    int n = 0;
    for (library *l = libs; l; l = l->next) n += l->fns.n;
    return n;
}

size_t functions_count(void) { return (size_t)nfunctions(); }
size_t functions_libraries(void) { return (size_t)nlibs(); }

size_t functions_code_bytes(void) {
    size_t n = 0;
    for (library *l = libs; l; l = l->next) n += l->code_len;
    return n;
}

static library *find_lib(const char *name) {
    for (library *l = libs; l; l = l->next)
        if (strcasecmp(l->name, name) == 0) return l;
    return NULL;
}

/* The function called name, in any library but `except`. */
static script_fn *find_fn(const char *name, size_t len, const library *except) {
    for (library *l = libs; l; l = l->next) {
        if (l == except) continue;
        for (int i = 0; i < l->fns.n; i++)
            if (strlen(l->fns.v[i].name) == len && strncasecmp(l->fns.v[i].name, name, len) == 0)
                return &l->fns.v[i];
    }
    return NULL;
}

static void free_lib(library *l) {
    for (int i = 0; i < l->fns.n; i++) script_fn_release(&l->fns.v[i]);
    zfree(l->fns.v);
    zfree(l->name);
    zfree(l->code);
    zfree(l);
}

static void unlink_lib(library *l) {
    for (library **p = &libs; *p; p = &(*p)->next)
        if (*p == l) {
            *p = l->next;
            return;
        }
}

static void flush_all(void) {
    while (libs) {
        library *l = libs;
        libs = l->next;
        free_lib(l);
    }
    script_functions_reset();
}

/* ---- loading ----------------------------------------------------------------- */


/* The "#!<engine> name=<lib>" first line: the engine runs to the first
 * space; the rest is split as Redis splits it (quotes allowed). The library
 * name into name, or -1 with the error text. */
#define MAX_META_TOKENS 16
static int parse_metadata(const char *code, size_t len, char *name, size_t cap, char *err, size_t errlen) {
    if (len < 2 || code[0] != '#' || code[1] != '!') {
        snprintf(err, errlen, "ERR Missing library metadata");
        return -1;
    }
    const char *nl = memchr(code, '\n', len);
    size_t end = nl ? (size_t)(nl - code) : len, pos = 2;
    while (pos < end && code[pos] != ' ') pos++;
    if (!(pos - 2 == 3 && strncasecmp(code + 2, "lua", 3) == 0)) {
        snprintf(err, errlen, "ERR Engine '%.*s' not found", (int)(pos - 2 > 64 ? 64 : pos - 2), code + 2);
        return -1;
    }
    size_t rest = end - pos;
    char *line = zmalloc(rest + 1);
    memcpy(line, code + pos, rest);
    splitargs_span tok[MAX_META_TOKENS];
    size_t at = 0;
    ssize_t n = splitargs(line, rest, &at, 0, tok, MAX_META_TOKENS);
    int rc = 0, have = 0;
    if (n < 0 || at < rest) {
        snprintf(err, errlen, "ERR Invalid library metadata");
        rc = -1;
    }
    for (ssize_t i = 0; rc == 0 && i < n; i++) {
        const char *t = line + tok[i].off;
        size_t tl = tok[i].len;
        if (tl >= 5 && memcmp(t, "name=", 5) == 0) {
            if (have) {
                snprintf(err, errlen, "ERR Invalid metadata value, name argument was given multiple times");
                rc = -1;
            } else if (tl - 5 >= cap || !script_valid_name(t + 5, tl - 5)) {
                snprintf(err, errlen, "ERR %s", ERR_NAME);
                rc = -1;
            } else {
                memcpy(name, t + 5, tl - 5);
                name[tl - 5] = '\0';
                have = 1;
            }
        } else {
            snprintf(err, errlen, "ERR Invalid metadata value given: %.*s", (int)(tl > 200 ? 200 : tl), t);
            rc = -1;
        }
    }
    zfree(line);
    if (rc == 0 && !have) {
        snprintf(err, errlen, "ERR Library name was not given");
        rc = -1;
    }
    return rc;
}

/* Load a library (replacing one of its name when replace). 0 with its name
 * in name, or -1 with the error text; nothing changes on failure. */
static int load_library(const char *code, size_t len, int replace, char *name, size_t cap, char *err,
                        size_t errlen) {
    if (parse_metadata(code, len, name, cap, err, errlen) != 0) return -1;
    library *old = find_lib(name);
    if (old && !replace) {
        snprintf(err, errlen, "ERR Library '%s' already exists", name);
        return -1;
    }
    library *l = zcalloc(sizeof *l);
    if (script_lib_load(code, len, &l->fns, err, errlen) != 0) {
        free_lib(l);
        return -1;
    }
    for (int i = 0; i < l->fns.n; i++) {
        if (find_fn(l->fns.v[i].name, strlen(l->fns.v[i].name), old)) {
            snprintf(err, errlen, "ERR Function %s already exists", l->fns.v[i].name);
            free_lib(l);
            return -1;
        }
    }
    if (old) {
        unlink_lib(old);
        free_lib(old);
    }
    l->name = zstrdup(name);
    l->code = zmalloc(len + 1);
    memcpy(l->code, code, len);
    l->code[len] = '\0';
    l->code_len = len;
    l->next = libs;
    libs = l;
    return 0;
}

/* ---- in RDB files (rdb.h's hooks, wired by registry.c) ---------------------------- */

void functions_rdb_save(rdbw *w) {
    for (library *l = libs; l; l = l->next) rdb_write_function(w, l->code, l->code_len);
}

int functions_rdb_load(const char *code, size_t len, int replace, char *err, size_t errlen) {
    char name[256];
    return load_library(code, len, replace, name, sizeof name, err, errlen);
}

void functions_flush(void) { flush_all(); }

/* ---- FCALL --------------------------------------------------------------------- */

static void fcall_generic(client *c, int ro) {
    monitor_feed(c); /* before its commands, whatever follows (FCALL is skip-monitor) */
    long long numkeys;
    if (!str_to_ll(c->argv[2].p, c->argv[2].len, &numkeys)) {
        reply_error(c, "ERR Bad number of keys provided");
        return;
    }
    if (numkeys > c->argc - 3) {
        reply_error(c, "ERR Number of keys can't be greater than number of args");
        return;
    }
    if (numkeys < 0) {
        reply_error(c, "ERR Number of keys can't be negative");
        return;
    }
    script_fn *f = find_fn(c->argv[1].p, c->argv[1].len, NULL);
    if (!f) {
        reply_error(c, "ERR Function not found");
        return;
    }
    if ((f->flags & SCRIPT_FLAG_NO_CLUSTER) && srv.cluster_mode) {
        reply_error(c, "ERR Can not run script on cluster, 'no-cluster' flag is set.");
        return;
    }
    if (ro && !(f->flags & SCRIPT_FLAG_NO_WRITES)) {
        reply_error(c, "ERR Can not execute a script with write flag using *_ro command.");
        return;
    }
    int nk = (int)numkeys;
    script_fcall(c, f, c->argv + 3, nk, c->argv + 3 + nk, c->argc - 3 - nk);
}

static void cmd_fcall(client *c) { fcall_generic(c, 0); }

int function_may_write(span name) {
    script_fn *f = find_fn(name.p, name.len, NULL);
    return !f || !(f->flags & SCRIPT_FLAG_NO_WRITES);
}
static void cmd_fcall_ro(client *c) { fcall_generic(c, 1); }

/* ---- FUNCTION subcommands ----------------------------------------------------- */

#define NOLUA_CHECK(c)                                                                                            \
    if (!script_engine_available()) {                                                                             \
        reply_error(c, "ERR scripting is not available: this ferry-server was built without Lua (make LUA=no)"); \
        return;                                                                                                    \
    }

static void function_load(client *c) {
    NOLUA_CHECK(c);
    int replace = 0;
    for (int j = 2; j < c->argc - 1; j++) {
        if (!span_eq_nocase(c->argv[j], "replace")) {
            char a[129];
            reply_errorf(c, "ERR Unknown option given: %s", span_cstr(a, sizeof a, c->argv[j]));
            return;
        }
        replace = 1;
    }
    span code = c->argv[c->argc - 1];
    char name[256], err[1024];
    if (load_library(code.p, code.len, replace, name, sizeof name, err, sizeof err) != 0) {
        reply_error(c, err);
        return;
    }
    srv.dirty++;
    reply_bulk_cstr(c, name);
}

static void function_delete(client *c) {
    char name[256];
    library *l = find_lib(span_cstr(name, sizeof name, c->argv[2]));
    if (!l || c->argv[2].len >= sizeof name) {
        reply_error(c, "ERR Library not found");
        return;
    }
    unlink_lib(l);
    free_lib(l);
    srv.dirty++;
    reply_ok(c);
}

static void reply_sub_arity(client *c) {
    char sub[64];
    reply_errorf(c, "ERR unknown subcommand or wrong number of arguments for '%s'. Try FUNCTION HELP.",
                 span_cstr(sub, sizeof sub, c->argv[1]));
}

static void function_flush(client *c) {
    if (c->argc > 3) {
        reply_sub_arity(c);
        return;
    }
    if (c->argc == 3 && !span_eq_nocase(c->argv[2], "sync") && !span_eq_nocase(c->argv[2], "async")) {
        reply_error(c, "ERR FUNCTION FLUSH only supports SYNC|ASYNC option");
        return;
    }
    flush_all();
    srv.dirty++;
    reply_ok(c);
}

static void reply_flags(client *c, unsigned flags) {
    long n = 0;
    for (int i = 0; i < SCRIPT_FLAG_COUNT; i++) n += (flags >> i) & 1;
    reply_set(c, n);
    for (int i = 0; i < SCRIPT_FLAG_COUNT; i++)
        if (flags & (1u << i)) reply_status(c, script_flag_names[i]);
}

static void reply_library(client *c, const library *l, int withcode) {
    reply_map(c, withcode ? 4 : 3);
    reply_bulk_cstr(c, "library_name");
    reply_bulk_cstr(c, l->name);
    reply_bulk_cstr(c, "engine");
    reply_bulk_cstr(c, "LUA");
    reply_bulk_cstr(c, "functions");
    reply_array(c, l->fns.n);
    for (int i = 0; i < l->fns.n; i++) {
        const script_fn *f = &l->fns.v[i];
        reply_map(c, 3);
        reply_bulk_cstr(c, "name");
        reply_bulk_cstr(c, f->name);
        reply_bulk_cstr(c, "description");
        if (f->desc) reply_bulk_cstr(c, f->desc);
        else reply_null(c);
        reply_bulk_cstr(c, "flags");
        reply_flags(c, f->flags);
    }
    if (withcode) {
        reply_bulk_cstr(c, "library_code");
        reply_bulk(c, l->code, l->code_len);
    }
}

static void function_list(client *c) {
    int withcode = 0;
    span pattern = {NULL, 0};
    for (int j = 2; j < c->argc; j++) {
        if (span_eq_nocase(c->argv[j], "withcode") && !withcode) {
            withcode = 1;
        } else if (span_eq_nocase(c->argv[j], "libraryname") && !pattern.p) {
            if (j + 1 >= c->argc) {
                reply_error(c, "ERR library name argument was not given");
                return;
            }
            pattern = c->argv[++j];
        } else {
            char a[129];
            reply_errorf(c, "ERR Unknown argument %s", span_cstr(a, sizeof a, c->argv[j]));
            return;
        }
    }
    long n = 0;
    for (library *l = libs; l; l = l->next)
        n += !pattern.p || glob_match(pattern.p, pattern.len, l->name, strlen(l->name), 0);
    reply_array(c, n);
    for (library *l = libs; l; l = l->next)
        if (!pattern.p || glob_match(pattern.p, pattern.len, l->name, strlen(l->name), 0))
            reply_library(c, l, withcode);
}

static void function_stats(client *c) {
    if (srv.script_busy == SCRIPT_BUSY_EVAL) { /* Redis answers for functions only, not for a busy EVAL */
        reply_error(c, script_busy_error());
        return;
    }
    reply_map(c, 2);
    reply_bulk_cstr(c, "running_script");
    const char *name;
    const client *caller;
    long long ms;
    if (srv.script_busy == SCRIPT_BUSY_FUNCTION && script_running(&name, &caller, &ms)) {
        reply_map(c, 3);
        reply_bulk_cstr(c, "name");
        reply_bulk_cstr(c, name);
        reply_bulk_cstr(c, "command");
        reply_array(c, caller->argc);
        for (int i = 0; i < caller->argc; i++) reply_bulk_span(c, caller->argv[i]);
        reply_bulk_cstr(c, "duration_ms");
        reply_int(c, ms);
    } else {
        reply_null(c);
    }
    reply_bulk_cstr(c, "engines");
    reply_map(c, 1);
    reply_bulk_cstr(c, "LUA");
    reply_map(c, 2);
    reply_bulk_cstr(c, "libraries_count");
    reply_int(c, nlibs());
    reply_bulk_cstr(c, "functions_count");
    reply_int(c, nfunctions());
}

static void function_kill(client *c) {
    int rc = script_kill(1);
    if (rc == 0) reply_ok(c);
    else if (rc == -3) reply_error(c, script_busy_error());
    else if (rc == -2) reply_error(c, SCRIPT_ERR_UNKILLABLE);
    else reply_error(c, "NOTBUSY No scripts in execution right now.");
}

static void function_dump(client *c) {
    rdbw w;
    rdbw_init(&w, rdb_current_options().compress);
    for (library *l = libs; l; l = l->next) {
        rdbw_u8(&w, RDB_OPCODE_FUNCTION2);
        rdbw_string(&w, l->code, l->code_len);
    }
    rdb_payload_finish(&w);
    reply_bulk(c, (const char *)w.buf, w.len);
    rdbw_free(&w);
}

/* The libraries' code in a FUNCTION DUMP payload: 0 with codes[] (caller
 * frees), or -1 with the error text. */
static int parse_dump(span p, rdb_str **codes, int *n, char *err, size_t errlen) {
    *codes = NULL;
    *n = 0;
    if (!rdb_payload_ok((const unsigned char *)p.p, p.len)) {
        snprintf(err, errlen, "ERR DUMP payload version or checksum are wrong");
        return -1;
    }
    rdbr r;
    rdbr_init(&r, p.p, p.len - RDB_PAYLOAD_FOOTER);
    int cap = 0;
    while (rdbr_left(&r) > 0) {
        unsigned op = rdbr_u8(&r);
        if (op == RDB_OPCODE_FUNCTION_PRE_GA) {
            snprintf(err, errlen, "ERR Pre-GA function format not supported");
            return -1;
        }
        if (op != RDB_OPCODE_FUNCTION2) {
            snprintf(err, errlen, "ERR given type is not a function");
            return -1;
        }
        if (*n == cap) {
            cap = cap ? cap * 2 : 4;
            *codes = zrealloc(*codes, sizeof **codes * (size_t)cap);
        }
        if (!rdbr_string(&r, &(*codes)[*n])) {
            snprintf(err, errlen, "ERR payload does not contain valid library code");
            return -1;
        }
        (*n)++;
    }
    return 0;
}

static void free_codes(rdb_str *codes, int n) {
    for (int i = 0; i < n; i++) rdb_str_free(&codes[i]);
    zfree(codes);
}

static void function_restore(client *c) {
    if (c->argc > 4) {
        reply_sub_arity(c);
        return;
    }
    NOLUA_CHECK(c);
    int policy = 0; /* 0 append, 1 replace, 2 flush */
    if (c->argc == 4) {
        if (span_eq_nocase(c->argv[3], "append")) policy = 0;
        else if (span_eq_nocase(c->argv[3], "replace")) policy = 1;
        else if (span_eq_nocase(c->argv[3], "flush")) policy = 2;
        else {
            reply_error(c, "ERR Wrong restore policy given, value should be either FLUSH, APPEND or REPLACE.");
            return;
        }
    }
    rdb_str *codes;
    int n;
    char err[1024], name[256];
    if (parse_dump(c->argv[2], &codes, &n, err, sizeof err) != 0) {
        free_codes(codes, n);
        reply_error(c, err);
        return;
    }
    /* the current libraries are set aside and come back whole if any
     * library fails */
    library *saved = libs;
    libs = NULL; /* the payload's libraries load alone first, then merge by the policy */
    int rc = 0;
    for (int i = 0; i < n && rc == 0; i++) rc = load_library(codes[i].p, codes[i].len, 0, name, sizeof name, err, sizeof err);
    free_codes(codes, n);
    library *fresh = libs;
    libs = saved;
    if (rc == 0 && policy != 2) { /* merge: collisions with what exists */
        for (library *l = fresh; l && rc == 0; l = l->next) {
            library *old = find_lib(l->name);
            if (old && policy == 0) {
                snprintf(err, sizeof err, "ERR Library %s already exists", l->name);
                rc = -1;
            }
            for (int i = 0; i < l->fns.n && rc == 0; i++) {
                script_fn *f = find_fn(l->fns.v[i].name, strlen(l->fns.v[i].name), old);
                if (f) {
                    snprintf(err, sizeof err, "ERR Function %s already exists", l->fns.v[i].name);
                    rc = -1;
                }
            }
        }
    }
    if (rc != 0) {
        while (fresh) {
            library *l = fresh;
            fresh = l->next;
            free_lib(l);
        }
        reply_error(c, err);
        return;
    }
    if (policy == 2) {
        while (libs) {
            library *l = libs;
            libs = l->next;
            free_lib(l);
        }
    }
    while (fresh) {
        library *l = fresh, *old = find_lib(l->name);
        fresh = l->next;
        if (old) {
            unlink_lib(old);
            free_lib(old);
        }
        l->next = libs;
        libs = l;
    }
    srv.dirty++;
    reply_ok(c);
}

static const char *const function_help_lines[] = {
    "FUNCTION <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
    "LOAD [REPLACE] <FUNCTION CODE>",
    "    Create a new library with the given library name and code.",
    "DELETE <LIBRARY NAME>",
    "    Delete the given library.",
    "LIST [LIBRARYNAME PATTERN] [WITHCODE]",
    "    Return general information on all the libraries:",
    "    * Library name",
    "    * The engine used to run the Library",
    "    * Library description",
    "    * Functions list",
    "    * Library code (if WITHCODE is given)",
    "    It also possible to get only function that matches a pattern using LIBRARYNAME argument.",
    "STATS",
    "    Return information about the current function running:",
    "    * Function name",
    "    * Command used to run the function",
    "    * Duration in MS that the function is running",
    "    If no function is running, return nil",
    "    In addition, returns a list of available engines.",
    "KILL",
    "    Kill the current running function.",
    "FLUSH [ASYNC|SYNC]",
    "    Delete all the libraries.",
    "    When called without the optional mode argument, the behavior is determined by the",
    "    lazyfree-lazy-user-flush configuration directive. Valid modes are:",
    "    * ASYNC: Asynchronously flush the libraries.",
    "    * SYNC: Synchronously flush the libraries.",
    "DUMP",
    "    Return a serialized payload representing the current libraries, can be restored using FUNCTION "
    "RESTORE command",
    "RESTORE <PAYLOAD> [FLUSH|APPEND|REPLACE]",
    "    Restore the libraries represented by the given payload, it is possible to give a restore policy to",
    "    control how to handle existing libraries (default APPEND):",
    "    * FLUSH: delete all existing libraries.",
    "    * APPEND: appends the restored libraries to the existing libraries. On collision, abort.",
    "    * REPLACE: appends the restored libraries to the existing libraries, On collision, replace the old",
    "      libraries with the new libraries (notice that even on this option there is a chance of failure",
    "      in case of functions name collision with another library).",
    "HELP",
    "    Prints this help.",
    NULL,
};

static void function_help(client *c) { reply_help(c, function_help_lines); }

#define SCRIPTING "slow scripting"
#define FCALL_FLAGS (CMD_NOSCRIPT | CMD_STALE | CMD_SKIP_MONITOR | CMD_NO_MANDATORY_KEYS | CMD_MOVABLE_KEYS)
#define FCALL_CX "Depends on the function that is executed."

static command function_subcommands[] = {
    CMD("delete", function_delete, 3, .flags = CMD_WRITE | CMD_NOSCRIPT, .acl = "write slow scripting",
        .summary = "Delete a function by name", .since = "7.0.0", .complexity = "O(1)"),
    CMD("dump", function_dump, 2, .flags = CMD_NOSCRIPT, .acl = SCRIPTING,
        .summary = "Dump all functions into a serialized binary payload", .since = "7.0.0",
        .complexity = "O(N) where N is the number of functions"),
    CMD("flush", function_flush, -2, .flags = CMD_WRITE | CMD_NOSCRIPT, .acl = "write slow scripting",
        .summary = "Deleting all functions", .since = "7.0.0", .complexity = "O(N) where N is the number of functions deleted"),
    CMD("help", function_help, 2, .flags = CMD_LOADING | CMD_STALE, .acl = SCRIPTING,
        .summary = "Show helpful text about the different subcommands", .since = "7.0.0", .complexity = "O(1)"),
    CMD("kill", function_kill, 2, .flags = CMD_NOSCRIPT | CMD_ALLOW_BUSY, .acl = SCRIPTING,
        .summary = "Kill the function currently in execution.", .since = "7.0.0", .complexity = "O(1)"),
    CMD("list", function_list, -2, .flags = CMD_NOSCRIPT, .acl = SCRIPTING,
        .summary = "List information about all the functions", .since = "7.0.0",
        .complexity = "O(N) where N is the number of functions"),
    CMD("load", function_load, -3, .flags = CMD_WRITE | CMD_DENYOOM | CMD_NOSCRIPT, .acl = "write slow scripting",
        .summary = "Create a function with the given arguments (name, code, description)", .since = "7.0.0",
        .complexity = "O(1) (considering compilation time is redundant)"),
    CMD("restore", function_restore, -3, .flags = CMD_WRITE | CMD_DENYOOM | CMD_NOSCRIPT,
        .acl = "write slow scripting", .summary = "Restore all the functions on the given payload", .since = "7.0.0",
        .complexity = "O(N) where N is the number of functions on the payload"),
    CMD("stats", function_stats, 2, .flags = CMD_NOSCRIPT | CMD_ALLOW_BUSY, .acl = SCRIPTING,
        .summary = "Return information about the function currently running (name, description, duration)",
        .since = "7.0.0", .complexity = "O(1)"),
    {0},
};

static command function_commands[] = {
    CMD("fcall", cmd_fcall, -3, .flags = FCALL_FLAGS, .props = PROP_NUMKEYS_AT_2 | PROP_NO_PROPAGATE, .acl = SCRIPTING,
        .summary = "Invoke a function", .since = "7.0.0", .complexity = FCALL_CX),
    CMD("fcall_ro", cmd_fcall_ro, -3, .flags = FCALL_FLAGS | CMD_READONLY, .props = PROP_NUMKEYS_AT_2 | PROP_NO_PROPAGATE,
        .acl = SCRIPTING, .summary = "Invoke a read-only function", .since = "7.0.0", .complexity = FCALL_CX),
    CMD("function", NULL, -2, .acl = "slow", .summary = "A container for function commands", .since = "7.0.0",
        .complexity = "Depends on subcommand.", .subcmds = function_subcommands),
    {0},
};
const command_group function_group = {"scripting", function_commands};
