/* command_info.c - the COMMAND command: COUNT, LIST, INFO, DOCS, GETKEYS and
 * HELP, rendered from the command table's metadata (enough for redis-cli's
 * interactive hints and for client libraries that introspect commands). */
#include "command.h"
#include "reply.h"
#include "server.h"
#include "util.h"
#include <string.h>

static const struct { uint32_t bit; const char *name; } flag_names[] = {
    {CMD_WRITE, "write"},         {CMD_READONLY, "readonly"},   {CMD_DENYOOM, "denyoom"},
    {CMD_ADMIN, "admin"},         {CMD_PUBSUB, "pubsub"},       {CMD_NOSCRIPT, "noscript"},
    {CMD_BLOCKING, "blocking"},   {CMD_LOADING, "loading"},     {CMD_STALE, "stale"},
    {CMD_SKIP_MONITOR, "skip_monitor"}, {CMD_SKIP_SLOWLOG, "skip_slowlog"}, {CMD_FAST, "fast"},
    {CMD_NO_AUTH, "no_auth"},     {CMD_MAY_REPLICATE, "may_replicate"}, {CMD_NO_MULTI, "no_multi"},
    {CMD_ALLOW_BUSY, "allow_busy"}, {CMD_NO_ASYNC_LOADING, "no_async_loading"},
    {CMD_NO_MANDATORY_KEYS, "no_mandatory_keys"}, {CMD_MOVABLE_KEYS, "movablekeys"},
};

static void reply_flags(client *c, uint32_t flags) {
    long n = 0;
    for (size_t i = 0; i < sizeof flag_names / sizeof flag_names[0]; i++)
        if (flags & flag_names[i].bit) n++;
    reply_set(c, n);
    for (size_t i = 0; i < sizeof flag_names / sizeof flag_names[0]; i++)
        if (flags & flag_names[i].bit) reply_status(c, flag_names[i].name);
}

/* acl is "read string fast": reply as a set of "@read" ... */
static void reply_acl(client *c, const char *acl) {
    long n = 0;
    const char *p = acl ? acl : "";
    for (const char *q = p; *q;) {
        while (*q == ' ') q++;
        if (!*q) break;
        n++;
        while (*q && *q != ' ') q++;
    }
    reply_set(c, n);
    for (const char *q = p; *q;) {
        while (*q == ' ') q++;
        if (!*q) break;
        const char *e = q;
        while (*e && *e != ' ') e++;
        char buf[64];
        size_t len = (size_t)(e - q) < sizeof buf - 2 ? (size_t)(e - q) : sizeof buf - 2;
        buf[0] = '@';
        memcpy(buf + 1, q, len);
        buf[len + 1] = '\0';
        reply_status(c, buf);
        q = e;
    }
}

static long count_subcmds(const command *cmd) {
    long n = 0;
    for (const command *s = cmd->subcmds; s && s->name; s++) n++;
    return n;
}

static void reply_info(client *c, command *cmd) {
    reply_array(c, 10);
    reply_bulk_cstr(c, cmd->fullname);
    reply_int(c, cmd->arity);
    reply_flags(c, cmd->flags);
    reply_int(c, cmd->first_key);
    reply_int(c, cmd->last_key);
    reply_int(c, cmd->key_step);
    reply_acl(c, cmd->acl);
    reply_array(c, 0); /* tips */
    reply_array(c, 0); /* key specs */
    reply_array(c, count_subcmds(cmd));
    for (command *s = cmd->subcmds; s && s->name; s++) reply_info(c, s);
}

static void reply_docs(client *c, command *cmd) {
    long nsub = count_subcmds(cmd);
    reply_map(c, nsub ? 5 : 4);
    reply_bulk_cstr(c, "summary");
    reply_bulk_cstr(c, cmd->summary ? cmd->summary : "");
    reply_bulk_cstr(c, "since");
    reply_bulk_cstr(c, cmd->since ? cmd->since : "1.0.0");
    reply_bulk_cstr(c, "group");
    reply_bulk_cstr(c, cmd->group ? cmd->group : "generic");
    reply_bulk_cstr(c, "complexity");
    reply_bulk_cstr(c, cmd->complexity ? cmd->complexity : "O(1)");
    if (nsub) {
        reply_bulk_cstr(c, "subcommands");
        reply_map(c, nsub);
        for (command *s = cmd->subcmds; s && s->name; s++) {
            reply_bulk_cstr(c, s->fullname);
            reply_docs(c, s);
        }
    }
}

typedef struct collect { command **v; size_t n, cap; } collect;

static void collect_top(command *cmd, void *ud) {
    collect *col = ud;
    if (cmd->parent) return;
    if (col->n < col->cap) col->v[col->n++] = cmd;
}

static size_t all_commands(command **v, size_t cap) {
    collect col = {v, 0, cap};
    command_foreach(collect_top, &col);
    return col.n;
}

#define MAX_CMDS 1024

static void command_list(client *c) {
    static command *v[MAX_CMDS];
    size_t n = all_commands(v, MAX_CMDS);
    const char *pattern = NULL;
    size_t plen = 0;
    if (c->argc == 5 && span_eq_nocase(c->argv[2], "filterby") && span_eq_nocase(c->argv[3], "pattern")) {
        pattern = c->argv[4].p;
        plen = c->argv[4].len;
    } else if (c->argc != 2) {
        reply_err_syntax(c);
        return;
    }
    size_t m = 0;
    for (size_t i = 0; i < n; i++)
        if (!pattern || glob_match(pattern, plen, v[i]->name, strlen(v[i]->name), 1)) v[m++] = v[i];
    reply_array(c, (long)m);
    for (size_t i = 0; i < m; i++) reply_bulk_cstr(c, v[i]->name);
}

static command *lookup_fullname(span s) {
    const char *bar = memchr(s.p, '|', s.len);
    if (!bar) return command_lookup_name(s.p, s.len);
    command *parent = command_lookup_name(s.p, (size_t)(bar - s.p));
    if (!parent) return NULL;
    span sub = {bar + 1, s.len - (size_t)(bar - s.p) - 1};
    for (command *x = parent->subcmds; x && x->name; x++)
        if (span_eq_nocase(sub, x->name)) return x;
    return NULL;
}

void cmd_command(client *c) {
    static command *v[MAX_CMDS];
    if (c->argc == 1) {
        size_t n = all_commands(v, MAX_CMDS);
        reply_array(c, (long)n);
        for (size_t i = 0; i < n; i++) reply_info(c, v[i]);
        return;
    }
    span sub = c->argv[1];
    if (span_eq_nocase(sub, "count") && c->argc == 2) {
        reply_int(c, (long long)command_count());
    } else if (span_eq_nocase(sub, "list")) {
        command_list(c);
    } else if (span_eq_nocase(sub, "info")) {
        if (c->argc == 2) {
            size_t n = all_commands(v, MAX_CMDS);
            reply_array(c, (long)n);
            for (size_t i = 0; i < n; i++) reply_info(c, v[i]);
            return;
        }
        reply_array(c, c->argc - 2);
        for (int i = 2; i < c->argc; i++) {
            command *cmd = lookup_fullname(c->argv[i]);
            if (cmd) reply_info(c, cmd);
            else reply_null_array(c);
        }
    } else if (span_eq_nocase(sub, "docs")) {
        if (c->argc == 2) {
            size_t n = all_commands(v, MAX_CMDS);
            reply_map(c, (long)n);
            for (size_t i = 0; i < n; i++) {
                reply_bulk_cstr(c, v[i]->name);
                reply_docs(c, v[i]);
            }
            return;
        }
        size_t m = 0;
        for (int i = 2; i < c->argc && m < MAX_CMDS; i++) {
            command *cmd = lookup_fullname(c->argv[i]);
            if (cmd) v[m++] = cmd;
        }
        reply_map(c, (long)m);
        for (size_t i = 0; i < m; i++) {
            reply_bulk_cstr(c, v[i]->fullname);
            reply_docs(c, v[i]);
        }
    } else if (span_eq_nocase(sub, "getkeys") && c->argc >= 3) {
        command *cmd = command_lookup(c->argv + 2, c->argc - 2);
        if (!cmd) {
            reply_error(c, "ERR Invalid command specified");
            return;
        }
        int argc = c->argc - 2;
        if ((cmd->arity > 0 && cmd->arity != argc) || argc < -cmd->arity) {
            reply_error(c, "ERR Invalid number of arguments specified for command");
            return;
        }
        if (cmd->props & PROP_NUMKEYS_AT_2) { /* EVAL / FCALL: the keys are counted by argv[2] */
            long long nk;
            if (!str_to_ll(c->argv[4].p, c->argv[4].len, &nk) || nk < 0 || nk > argc - 3) nk = 0;
            reply_array(c, (long)nk);
            for (long long i = 0; i < nk; i++) reply_bulk_span(c, c->argv[5 + i]);
            return;
        }
        int pos[2];
        int nstore = cmd->store_keys ? cmd->store_keys(c->argv + 2, argc, pos) : 0;
        if (nstore) { /* SORT / GEORADIUS ... STORE dst: the key and the destinations */
            reply_array(c, 1 + nstore);
            reply_bulk_span(c, c->argv[3]);
            for (int i = 0; i < nstore; i++) reply_bulk_span(c, c->argv[2 + pos[i]]);
            return;
        }
        if (cmd->first_key == 0) {
            reply_error(c, "ERR The command has no key arguments");
            return;
        }
        int last = cmd->last_key < 0 ? argc + cmd->last_key : cmd->last_key;
        long n = 0;
        for (int i = cmd->first_key; i <= last && i < argc; i += cmd->key_step) n++;
        reply_array(c, n);
        for (int i = cmd->first_key; i <= last && i < argc; i += cmd->key_step) reply_bulk_span(c, c->argv[2 + i]);
    } else if (span_eq_nocase(sub, "help") && c->argc == 2) {
        static const char *const help[] = {
            "COMMAND <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
            "(no subcommand)",
            "    Return details about all Redis commands.",
            "COUNT",
            "    Return the total number of commands in this Redis server.",
            "LIST",
            "    Return a list of all commands in this Redis server.",
            "INFO [<command-name> ...]",
            "    Return details about multiple Redis commands.",
            "    If no command names are given, documentation details for all",
            "    commands are returned.",
            "DOCS [<command-name> ...]",
            "    Return documentation details about multiple Redis commands.",
            "    If no command names are given, documentation details for all",
            "    commands are returned.",
            "GETKEYS <full-command>",
            "    Return the keys from a full Redis command.",
            "HELP",
            "    Print this help.",
            NULL,
        };
        reply_help(c, help);
    } else {
        char name[129];
        size_t n = sub.len < 128 ? sub.len : 128;
        memcpy(name, sub.p, n);
        name[n] = '\0';
        reply_errorf(c, "ERR unknown subcommand or wrong number of arguments for '%s'. Try COMMAND HELP.", name);
    }
}

static command command_subcmds[] = {
    CMD("count", cmd_command, 2, .flags = CMD_LOADING | CMD_STALE, .acl = "slow connection",
        .summary = "Returns a count of commands.", .since = "7.0.0", .complexity = "O(N)"),
    CMD("docs", cmd_command, -2, .flags = CMD_LOADING | CMD_STALE, .acl = "slow connection",
        .summary = "Returns documentary information about one, multiple or all commands.", .since = "7.0.0",
        .complexity = "O(N)"),
    CMD("getkeys", cmd_command, -4, .flags = CMD_LOADING | CMD_STALE, .acl = "slow connection",
        .summary = "Extracts the key names from an arbitrary command.", .since = "7.0.0", .complexity = "O(N)"),
    CMD("getkeysandflags", cmd_command, -4, .flags = CMD_LOADING | CMD_STALE, .acl = "slow connection",
        .summary = "Extracts the key names and access flags for an arbitrary command.", .since = "7.0.0",
        .complexity = "O(N)"),
    CMD("help", cmd_command, 2, .flags = CMD_LOADING | CMD_STALE, .acl = "slow connection",
        .summary = "Returns helpful text about the different subcommands.", .since = "7.0.0", .complexity = "O(N)"),
    CMD("info", cmd_command, -2, .flags = CMD_LOADING | CMD_STALE, .acl = "slow connection",
        .summary = "Returns information about one, multiple or all commands.", .since = "7.0.0", .complexity = "O(N)"),
    CMD("list", cmd_command, -2, .flags = CMD_LOADING | CMD_STALE, .acl = "slow connection",
        .summary = "Returns a list of command names.", .since = "7.0.0", .complexity = "O(N)"),
    {0},
};

static command introspection_commands[] = {
    CMD("command", cmd_command, -1, .flags = CMD_LOADING | CMD_STALE, .acl = "slow connection",
        .summary = "Returns detailed information about all commands.", .since = "2.8.13",
        .complexity = "O(N) where N is the total number of Redis commands", .subcmds = command_subcmds),
    {0},
};
const command_group introspection_group = {"server", introspection_commands};
