/* command_info.c - the COMMAND command: COUNT, LIST, INFO, DOCS, GETKEYS,
 * GETKEYSANDFLAGS and HELP, rendered from the command table's metadata and
 * Redis 7.0's key specs and tips (keyspec.h) - enough for redis-cli's
 * interactive hints, for client libraries that introspect commands and for
 * cluster clients that route by key specs and request/response policies. */
#include "command.h"
#include "keyspec.h"
#include "zmalloc.h"
#include "reply.h"
#include "server.h"
#include "util.h"
#include <stddef.h>
#include <string.h>
#include <strings.h>

/* in Redis 7.0's order; may_replicate is not shown, as Redis */
static const struct { uint32_t bit; const char *name; } flag_names[] = {
    {CMD_WRITE, "write"},         {CMD_READONLY, "readonly"},   {CMD_DENYOOM, "denyoom"},
    {CMD_ADMIN, "admin"},         {CMD_PUBSUB, "pubsub"},       {CMD_NOSCRIPT, "noscript"},
    {CMD_BLOCKING, "blocking"},   {CMD_LOADING, "loading"},     {CMD_STALE, "stale"},
    {CMD_SKIP_MONITOR, "skip_monitor"}, {CMD_SKIP_SLOWLOG, "skip_slowlog"}, {CMD_ASKING, "asking"}, {CMD_FAST, "fast"},
    {CMD_NO_AUTH, "no_auth"},     {CMD_NO_MANDATORY_KEYS, "no_mandatory_keys"},
    {CMD_NO_ASYNC_LOADING, "no_async_loading"}, {CMD_NO_MULTI, "no_multi"}, {CMD_MOVABLE_KEYS, "movablekeys"},
    {CMD_ALLOW_BUSY, "allow_busy"},
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

static const struct { uint32_t bit; const char *name; } keyflag_names[] = {
    {KS_RO, "RO"},         {KS_RW, "RW"},         {KS_OW, "OW"},           {KS_RM, "RM"},
    {KS_ACCESS, "access"}, {KS_UPDATE, "update"}, {KS_INSERT, "insert"},   {KS_DELETE, "delete"},
    {KS_NOT_KEY, "not_key"}, {KS_INCOMPLETE, "incomplete"}, {KS_VARIABLE_FLAGS, "variable_flags"},
};

static void reply_keyflags(client *c, uint32_t flags) {
    long n = 0;
    for (size_t i = 0; i < sizeof keyflag_names / sizeof keyflag_names[0]; i++)
        if (flags & keyflag_names[i].bit) n++;
    reply_set(c, n);
    for (size_t i = 0; i < sizeof keyflag_names / sizeof keyflag_names[0]; i++)
        if (flags & keyflag_names[i].bit) reply_status(c, keyflag_names[i].name);
}

static void reply_tips(client *c, const cmd_keyinfo *ki) {
    long n = 0;
    for (const char *const *t = ki ? ki->tips : NULL; t && *t; t++) n++;
    reply_set(c, n);
    for (long i = 0; i < n; i++) reply_bulk_cstr(c, ki->tips[i]);
}

/* {type: ..., spec: {...}} of a begin_search or find_keys part */
static void reply_spec_part(client *c, const char *type, long nfields) {
    reply_map(c, 2);
    reply_bulk_cstr(c, "type");
    reply_bulk_cstr(c, type);
    reply_bulk_cstr(c, "spec");
    reply_map(c, nfields);
}

static void reply_int_field(client *c, const char *name, long long v) {
    reply_bulk_cstr(c, name);
    reply_int(c, v);
}

static void reply_begin_search(client *c, const keyspec *s) {
    if (s->bs == KS_BS_INDEX) {
        reply_spec_part(c, "index", 1);
        reply_int_field(c, "index", s->bs_pos);
    } else if (s->bs == KS_BS_KEYWORD) {
        reply_spec_part(c, "keyword", 2);
        reply_bulk_cstr(c, "keyword");
        reply_bulk_cstr(c, s->keyword);
        reply_int_field(c, "startfrom", s->bs_pos);
    } else {
        reply_spec_part(c, "unknown", 0);
    }
}

static void reply_find_keys(client *c, const keyspec *s) {
    if (s->fk == KS_FK_RANGE) {
        reply_spec_part(c, "range", 3);
        reply_int_field(c, "lastkey", s->fk_a);
        reply_int_field(c, "keystep", s->fk_b);
        reply_int_field(c, "limit", s->fk_c);
    } else if (s->fk == KS_FK_KEYNUM) {
        reply_spec_part(c, "keynum", 3);
        reply_int_field(c, "keynumidx", s->fk_a);
        reply_int_field(c, "firstkey", s->fk_b);
        reply_int_field(c, "keystep", s->fk_c);
    } else {
        reply_spec_part(c, "unknown", 0);
    }
}

static void reply_keyspecs(client *c, const cmd_keyinfo *ki) {
    int n = ki ? ki->nspecs : 0;
    reply_set(c, n);
    for (int i = 0; i < n; i++) {
        const keyspec *s = &ki->specs[i];
        reply_map(c, s->notes ? 4 : 3);
        if (s->notes) {
            reply_bulk_cstr(c, "notes");
            reply_bulk_cstr(c, s->notes);
        }
        reply_bulk_cstr(c, "flags");
        reply_keyflags(c, s->flags);
        reply_bulk_cstr(c, "begin_search");
        reply_begin_search(c, s);
        reply_bulk_cstr(c, "find_keys");
        reply_find_keys(c, s);
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
    reply_tips(c, cmd->keyinfo);
    reply_keyspecs(c, cmd->keyinfo);
    reply_set(c, count_subcmds(cmd));
    for (command *s = cmd->subcmds; s && s->name; s++) reply_info(c, s);
}

static void reply_doc_args(client *c, const docarg *args, int n);

static void reply_doc_arg(client *c, const docarg *a) {
    long fields = 2 + (a->key_spec_index >= 0) + !!a->token + !!a->since + !!a->deprecated_since + !!a->flags +
                  (a->nargs > 0);
    reply_map(c, fields);
    reply_bulk_cstr(c, "name");
    reply_bulk_cstr(c, a->name);
    reply_bulk_cstr(c, "type");
    reply_bulk_cstr(c, a->type);
    if (a->key_spec_index >= 0) reply_int_field(c, "key_spec_index", a->key_spec_index);
    static const struct { const char *name; size_t off; } strs[] = {
        {"token", offsetof(docarg, token)},
        {"since", offsetof(docarg, since)},
        {"deprecated_since", offsetof(docarg, deprecated_since)},
    };
    for (size_t i = 0; i < sizeof strs / sizeof strs[0]; i++) {
        const char *v = *(const char *const *)((const char *)a + strs[i].off);
        if (!v) continue;
        reply_bulk_cstr(c, strs[i].name);
        reply_bulk_cstr(c, v);
    }
    if (a->flags) {
        static const char *const names[] = {"optional", "multiple", "multiple_token"};
        reply_bulk_cstr(c, "flags");
        reply_set(c, (a->flags & 1) + ((a->flags >> 1) & 1) + ((a->flags >> 2) & 1));
        for (int i = 0; i < 3; i++)
            if (a->flags & (1u << i)) reply_status(c, names[i]);
    }
    if (a->nargs > 0) {
        reply_bulk_cstr(c, "arguments");
        reply_doc_args(c, a->args, a->nargs);
    }
}

static void reply_doc_args(client *c, const docarg *args, int n) {
    reply_array(c, n);
    for (int i = 0; i < n; i++) reply_doc_arg(c, &args[i]);
}

static void reply_doc_history(client *c, const char *const *h) {
    long n = 0;
    while (h[2 * n]) n++;
    reply_set(c, n);
    for (long i = 0; i < n; i++) {
        reply_array(c, 2);
        reply_bulk_cstr(c, h[2 * i]);
        reply_bulk_cstr(c, h[2 * i + 1]);
    }
}

/* What COMMAND DOCS prints after the complexity: doc flags, deprecation,
 * history and arguments, as Redis 7.0 documents the command. */
static long doc_extra_fields(const cmd_docinfo *d) {
    return d ? !!d->doc_flags + !!d->deprecated_since + !!d->replaced_by + !!d->history + (d->nargs > 0) : 0;
}

static void reply_doc_extra(client *c, const cmd_docinfo *d) {
    if (!d) return;
    if (d->doc_flags) {
        reply_bulk_cstr(c, "doc_flags");
        reply_set(c, !!(d->doc_flags & DOC_DEPRECATED) + !!(d->doc_flags & DOC_SYSCMD));
        if (d->doc_flags & DOC_DEPRECATED) reply_status(c, "deprecated");
        if (d->doc_flags & DOC_SYSCMD) reply_status(c, "syscmd");
    }
    if (d->deprecated_since) {
        reply_bulk_cstr(c, "deprecated_since");
        reply_bulk_cstr(c, d->deprecated_since);
    }
    if (d->replaced_by) {
        reply_bulk_cstr(c, "replaced_by");
        reply_bulk_cstr(c, d->replaced_by);
    }
    if (d->history) {
        reply_bulk_cstr(c, "history");
        reply_doc_history(c, d->history);
    }
    if (d->nargs > 0) {
        reply_bulk_cstr(c, "arguments");
        reply_doc_args(c, d->args, d->nargs);
    }
}

static void reply_docs(client *c, command *cmd) {
    long nsub = count_subcmds(cmd);
    const cmd_docinfo *d = cmd->keyinfo ? &keyspec_docs[cmd->keyinfo - keyspec_table] : NULL;
    reply_map(c, 4 + doc_extra_fields(d) + (nsub ? 1 : 0));
    reply_bulk_cstr(c, "summary");
    reply_bulk_cstr(c, cmd->summary ? cmd->summary : "");
    reply_bulk_cstr(c, "since");
    reply_bulk_cstr(c, cmd->since ? cmd->since : "1.0.0");
    reply_bulk_cstr(c, "group");
    reply_bulk_cstr(c, cmd->group ? cmd->group : "generic");
    reply_bulk_cstr(c, "complexity");
    reply_bulk_cstr(c, cmd->complexity ? cmd->complexity : "O(1)");
    reply_doc_extra(c, d);
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
    if (cmd->parent || !command_callable(cmd)) return;
    if (col->n < col->cap) col->v[col->n++] = cmd;
}

static size_t all_commands(command **v, size_t cap) {
    collect col = {v, 0, cap};
    command_foreach(collect_top, &col);
    return col.n;
}

#define MAX_CMDS 1024

/* COMMAND LIST [FILTERBY MODULE name | ACLCAT category | PATTERN glob]:
 * commands and subcommands (by full name) the filter keeps. */
typedef struct list_filter {
    int type; /* 0 none, 1 module (ferry has no modules: nothing), 2 aclcat, 3 pattern */
    span arg;
} list_filter;

static int has_category(const char *acl, span cat) {
    for (const char *q = acl ? acl : ""; *q;) {
        while (*q == ' ') q++;
        const char *e = q;
        while (*e && *e != ' ') e++;
        if (e > q && (size_t)(e - q) == cat.len && !strncasecmp(q, cat.p, cat.len)) return 1;
        q = e;
    }
    return 0;
}

static int list_keeps(const command *cmd, const list_filter *f) {
    switch (f->type) {
    case 0: return 1;
    case 2: return has_category(cmd->acl, f->arg);
    case 3: return glob_match(f->arg.p, f->arg.len, cmd->fullname, strlen(cmd->fullname), 1);
    default: return 0;
    }
}

static int parse_list_filter(client *c, list_filter *f) {
    f->type = 0;
    if (c->argc == 2) return 1;
    if (c->argc != 5 || !span_eq_nocase(c->argv[2], "filterby")) return 0;
    if (span_eq_nocase(c->argv[3], "module")) f->type = 1;
    else if (span_eq_nocase(c->argv[3], "aclcat")) f->type = 2;
    else if (span_eq_nocase(c->argv[3], "pattern")) f->type = 3;
    else return 0;
    f->arg = c->argv[4];
    return 1;
}

static void command_list(client *c) {
    static command *v[MAX_CMDS];
    list_filter f;
    if (!parse_list_filter(c, &f)) {
        reply_err_syntax(c);
        return;
    }
    size_t n = all_commands(v, MAX_CMDS);
    long m = 0;
    for (size_t i = 0; i < n; i++) {
        m += list_keeps(v[i], &f);
        for (command *s = v[i]->subcmds; s && s->name; s++) m += list_keeps(s, &f);
    }
    reply_array(c, m);
    for (size_t i = 0; i < n; i++) {
        if (list_keeps(v[i], &f)) reply_bulk_cstr(c, v[i]->fullname);
        for (command *s = v[i]->subcmds; s && s->name; s++)
            if (list_keeps(s, &f)) reply_bulk_cstr(c, s->fullname);
    }
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

/* COMMAND GETKEYS / GETKEYSANDFLAGS <command> <arg> ... */
static void command_getkeys(client *c, int with_flags) {
    const span *argv = c->argv + 2;
    int argc = c->argc - 2;
    command *cmd = command_lookup(argv, argc);
    if (!cmd) {
        reply_error(c, "ERR Invalid command specified");
        return;
    }
    if (!keyspec_has_keys(cmd)) {
        reply_error(c, "ERR The command has no key arguments");
        return;
    }
    if (!command_arity_ok(cmd, argc)) {
        reply_error(c, "ERR Invalid number of arguments specified for command");
        return;
    }
    keyref small[64], *keys = small;
    int n = command_keys(cmd, argv, argc, small, 64);
    if (n > 64) {
        keys = zmalloc(sizeof *keys * (size_t)n);
        n = command_keys(cmd, argv, argc, keys, n);
    }
    if (n <= 0 && !(cmd->flags & CMD_NO_MANDATORY_KEYS)) {
        reply_error(c, "ERR Invalid arguments specified for command");
    } else {
        reply_array(c, n > 0 ? n : 0);
        for (int i = 0; i < n; i++) {
            if (with_flags) reply_array(c, 2);
            reply_bulk_span(c, argv[keys[i].pos]);
            if (with_flags) reply_keyflags(c, keys[i].flags);
        }
    }
    if (keys != small) zfree(keys);
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
            else reply_null(c);
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
    } else if ((span_eq_nocase(sub, "getkeys") || span_eq_nocase(sub, "getkeysandflags")) && c->argc >= 3) {
        command_getkeys(c, span_eq_nocase(sub, "getkeysandflags"));
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
            "GETKEYSANDFLAGS <full-command>",
            "    Return the keys and the access flags from a full Redis command.",
            "HELP",
            "    Prints this help.",
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
        .summary = "Get total number of Redis commands", .since = "2.8.13", .complexity = "O(1)"),
    CMD("docs", cmd_command, -2, .flags = CMD_LOADING | CMD_STALE, .acl = "slow connection",
        .summary = "Get array of specific Redis command documentation", .since = "7.0.0",
        .complexity = "O(N) where N is the number of commands to look up"),
    CMD("getkeys", cmd_command, -4, .flags = CMD_LOADING | CMD_STALE, .acl = "slow connection",
        .summary = "Extract keys given a full Redis command", .since = "2.8.13",
        .complexity = "O(N) where N is the number of arguments to the command"),
    CMD("getkeysandflags", cmd_command, -4, .flags = CMD_LOADING | CMD_STALE, .acl = "slow connection",
        .summary = "Extract keys and access flags given a full Redis command", .since = "7.0.0",
        .complexity = "O(N) where N is the number of arguments to the command"),
    CMD("help", cmd_command, 2, .flags = CMD_LOADING | CMD_STALE, .acl = "slow connection",
        .summary = "Show helpful text about the different subcommands", .since = "5.0.0", .complexity = "O(1)"),
    CMD("info", cmd_command, -2, .flags = CMD_LOADING | CMD_STALE, .acl = "slow connection",
        .summary = "Get array of specific Redis command details, or all when no argument is given.",
        .since = "2.8.13", .complexity = "O(N) where N is the number of commands to look up"),
    CMD("list", cmd_command, -2, .flags = CMD_LOADING | CMD_STALE, .acl = "slow connection",
        .summary = "Get an array of Redis command names", .since = "7.0.0",
        .complexity = "O(N) where N is the total number of Redis commands"),
    {0},
};

static command introspection_commands[] = {
    CMD("command", cmd_command, -1, .flags = CMD_LOADING | CMD_STALE, .acl = "slow connection",
        .summary = "Get array of Redis command details", .since = "2.8.13",
        .complexity = "O(N) where N is the total number of Redis commands", .subcmds = command_subcmds),
    {0},
};
const command_group introspection_group = {"server", introspection_commands};
