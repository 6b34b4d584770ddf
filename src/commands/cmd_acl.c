/* cmd_acl.c - the ACL command (SETUSER GETUSER DELUSER LIST USERS WHOAMI CAT
 * LOG GENPASS DRYRUN SAVE LOAD HELP), with Redis 7.0's replies and error
 * texts. The model is acl.h; SAVE and LOAD go through the aclfile hooks
 * the server layer sets (acl_file.c). */
#include "acl.h"
#include "command.h"
#include "reply.h"
#include "sbuf.h"
#include "util.h"
#include "zmalloc.h"
#include <ctype.h>
#include <stdio.h>
#include <string.h>
#include <sys/random.h>

#define F_ACL (CMD_NOSCRIPT | CMD_LOADING | CMD_STALE)
#define F_ACL_ADMIN (CMD_ADMIN | F_ACL)
#define ADMIN_CATS "admin slow dangerous"

int (*acl_file_save_hook)(char *err, size_t errlen);
int (*acl_file_load_hook)(char *err, size_t errlen);

static void acl_container(client *c) {
    char sub[129];
    reply_errorf(c, "ERR unknown subcommand '%s'. Try ACL HELP.", span_cstr(sub, sizeof sub, c->argv[1]));
}

/* Redis's error for extra arguments, naming the subcommand as typed. */
static void reply_sub_syntax(client *c) {
    char sub[129];
    reply_errorf(c, "ERR unknown subcommand or wrong number of arguments for '%s'. Try ACL HELP.",
                 span_cstr(sub, sizeof sub, c->argv[1]));
}

static int bad_username(span s) {
    for (size_t i = 0; i < s.len; i++)
        if (isspace((unsigned char)s.p[i]) || s.p[i] == 0) return 1;
    return 0;
}

static void acl_setuser(client *c) {
    span name = c->argv[2];
    if (bad_username(name)) {
        reply_error(c, "ERR Usernames can't contain spaces or null characters");
        return;
    }
    acl_user *u = acl_user_find(name.p, name.len);
    acl_user *tmp = u ? acl_user_dup(u) : acl_user_new(name.p, name.len);
    char err[1024];
    int bad;
    const char *e = acl_user_set_rules(tmp, c->argv + 3, c->argc - 3, &bad, err, sizeof err);
    if (e) {
        acl_user_free(tmp);
        reply_errorf(c, "ERR %s", e);
        return;
    }
    if (u) {
        acl_user_copy_into(u, tmp);
        acl_user_free(tmp);
    } else {
        acl_user_add(tmp);
        u = tmp;
    }
    acl_user_changed(u);
    reply_ok(c);
}

static void reply_keys(client *c, const acl_selector *s) {
    if (s->flags & AS_ALLKEYS) {
        reply_bulk_cstr(c, "~*");
        return;
    }
    sbuf b = {0};
    for (int i = 0; i < s->keys.n; i++) {
        char pre[8];
        size_t n;
        acl_key_pattern_str(pre, sizeof pre, &(acl_str){"", 0, s->keys.v[i].flags}, &n);
        if (i) sb_addc(&b, ' ');
        sb_add(&b, pre, n);
        sb_add(&b, s->keys.v[i].p, s->keys.v[i].len);
    }
    reply_bulk(c, b.p ? b.p : "", b.len);
    sb_free(&b);
}

static void reply_channels(client *c, const acl_selector *s) {
    if (s->flags & AS_ALLCHANNELS) {
        reply_bulk_cstr(c, "&*");
        return;
    }
    sbuf b = {0};
    for (int i = 0; i < s->channels.n; i++) {
        if (i) sb_addc(&b, ' ');
        sb_addc(&b, '&');
        sb_add(&b, s->channels.v[i].p, s->channels.v[i].len);
    }
    reply_bulk(c, b.p ? b.p : "", b.len);
    sb_free(&b);
}

static void reply_selector(client *c, const acl_selector *s) {
    reply_bulk_cstr(c, "commands");
    char *cmds = acl_describe_commands(s);
    reply_bulk_cstr(c, cmds);
    zfree(cmds);
    reply_bulk_cstr(c, "keys");
    reply_keys(c, s);
    reply_bulk_cstr(c, "channels");
    reply_channels(c, s);
}

static void reply_flags(client *c, const acl_user *u) {
    static const struct {
        int f;
        const char *name;
    } fl[] = {{AU_ENABLED, "on"}, {AU_DISABLED, "off"}, {AU_NOPASS, "nopass"},
              {AU_SKIP_SANITIZE, "skip-sanitize-payload"}, {AU_SANITIZE, "sanitize-payload"}};
    int n = 0;
    for (size_t i = 0; i < sizeof fl / sizeof fl[0]; i++) n += (u->flags & fl[i].f) != 0;
    reply_set(c, n);
    for (size_t i = 0; i < sizeof fl / sizeof fl[0]; i++)
        if (u->flags & fl[i].f) reply_bulk_cstr(c, fl[i].name);
}

static void acl_getuser(client *c) {
    acl_user *u = acl_user_find(c->argv[2].p, c->argv[2].len);
    if (!u) {
        reply_null(c);
        return;
    }
    reply_map(c, 6);
    reply_bulk_cstr(c, "flags");
    reply_flags(c, u);
    reply_bulk_cstr(c, "passwords");
    reply_array(c, u->npass);
    for (int i = 0; i < u->npass; i++) reply_bulk(c, u->pass[i], 64);
    reply_selector(c, u->sel);
    reply_bulk_cstr(c, "selectors");
    int n = 0;
    for (const acl_selector *s = u->sel->next; s; s = s->next) n++;
    reply_array(c, n);
    for (const acl_selector *s = u->sel->next; s; s = s->next) {
        reply_map(c, 3);
        reply_selector(c, s);
    }
}

static void acl_deluser(client *c) {
    for (int j = 2; j < c->argc; j++) {
        if (c->argv[j].len == 7 && !memcmp(c->argv[j].p, "default", 7)) {
            reply_error(c, "ERR The 'default' user cannot be removed");
            return;
        }
    }
    long long n = 0;
    for (int j = 2; j < c->argc; j++) {
        acl_user *u = acl_user_find(c->argv[j].p, c->argv[j].len);
        if (!u) continue;
        acl_user_delete(u);
        n++;
    }
    reply_int(c, n);
}

static void acl_list(client *c) {
    reply_array(c, acl_user_count());
    for (int i = 0; i < acl_user_count(); i++) {
        acl_user *u = acl_user_at(i);
        char *d = acl_describe_user(u);
        sbuf b = {0};
        sb_adds(&b, "user ");
        sb_add(&b, u->name, u->namelen);
        sb_addc(&b, ' ');
        sb_adds(&b, d);
        reply_bulk(c, b.p, b.len);
        sb_free(&b);
        zfree(d);
    }
}

static void acl_users(client *c) {
    reply_array(c, acl_user_count());
    for (int i = 0; i < acl_user_count(); i++) reply_bulk(c, acl_user_at(i)->name, acl_user_at(i)->namelen);
}

static void acl_whoami(client *c) {
    acl_user *u = acl_client_user(c);
    reply_bulk(c, u->name, u->namelen);
}

static void acl_cat(client *c) {
    if (c->argc > 3) {
        reply_sub_syntax(c);
        return;
    }
    if (c->argc == 2) {
        reply_array(c, acl_category_count());
        for (int i = 0; i < acl_category_count(); i++) reply_bulk_cstr(c, acl_category_name(i));
        return;
    }
    int cat = acl_category_by_name(c->argv[2].p, c->argv[2].len);
    if (cat < 0) {
        char buf[129];
        reply_errorf(c, "ERR Unknown category '%s'", span_cstr(buf, sizeof buf, c->argv[2]));
        return;
    }
    int n = 0;
    for (int id = 0; id < acl_command_count(); id++) n += (acl_command_cats(id) & (1u << cat)) != 0;
    reply_array(c, n);
    for (int id = 0; id < acl_command_count(); id++)
        if (acl_command_cats(id) & (1u << cat)) reply_bulk_cstr(c, acl_command_by_id(id)->fullname);
}

static void acl_log(client *c) {
    long long count = 10;
    if (c->argc == 3) {
        if (span_eq_nocase(c->argv[2], "reset")) {
            acl_log_reset();
            reply_ok(c);
            return;
        }
        if (!str_to_ll(c->argv[2].p, c->argv[2].len, &count)) {
            reply_err_notint(c);
            return;
        }
        if (count < 0) count = 0;
    } else if (c->argc > 3) {
        reply_sub_syntax(c);
        return;
    }
    acl_log_reply(c, (long)count);
}

static void acl_genpass(client *c) {
    long long bits = 256;
    if (c->argc > 3) {
        reply_sub_syntax(c);
        return;
    }
    if (c->argc == 3 && !str_to_ll(c->argv[2].p, c->argv[2].len, &bits)) {
        reply_err_notint(c);
        return;
    }
    if (bits <= 0 || bits > 4096) {
        reply_error(c, "ERR ACL GENPASS argument must be the number of bits for the output password, a positive "
                       "number up to 4096");
        return;
    }
    size_t chars = (size_t)(bits + 3) / 4;
    unsigned char raw[512];
    size_t need = (chars + 1) / 2, got = 0;
    while (got < need) {
        ssize_t r = getrandom(raw + got, need - got, 0);
        if (r > 0) got += (size_t)r;
    }
    static const char hex[] = "0123456789abcdef";
    char out[1025];
    for (size_t i = 0; i < chars; i++) out[i] = hex[(raw[i / 2] >> ((i % 2) ? 0 : 4)) & 15];
    reply_bulk(c, out, chars);
}

/* A Redis 7.0 command ferry lacks (acl_ghost.h): its rules are checked
 * as Redis checks them (it has no keys here). */
static command *ghost_lookup(const span *argv, int argc) {
    command *cmd = acl_command_by_fullname(argv[0].p, argv[0].len);
    if (cmd && command_lookup_orig(cmd->name, strlen(cmd->name))) return NULL; /* a real command, renamed */
    if (!cmd || !cmd->subcmds || argc < 2) return cmd;
    char full[64];
    int n = snprintf(full, sizeof full, "%s|%.*s", cmd->fullname, (int)argv[1].len, argv[1].p);
    return n > 0 && (size_t)n < sizeof full ? acl_command_by_fullname(full, (size_t)n) : NULL;
}

static void acl_dryrun(client *c) {
    char buf[129];
    acl_user *u = acl_user_find(c->argv[2].p, c->argv[2].len);
    if (!u) {
        reply_errorf(c, "ERR User '%s' not found", span_cstr(buf, sizeof buf, c->argv[2]));
        return;
    }
    command *cmd = command_lookup(c->argv + 3, c->argc - 3);
    if (!cmd) cmd = ghost_lookup(c->argv + 3, c->argc - 3);
    if (!cmd) {
        reply_errorf(c, "ERR Command '%s' not found", span_cstr(buf, sizeof buf, c->argv[3]));
        return;
    }
    if (!command_arity_ok(cmd, c->argc - 3)) {
        reply_errorf(c, "ERR wrong number of arguments for '%s' command", cmd->fullname);
        return;
    }
    int pos = 0;
    int r = acl_check_cmd(u, cmd, c->argv + 3, c->argc - 3, &pos);
    if (r == ACL_OK) {
        reply_ok(c);
        return;
    }
    char msg[512];
    if (r == ACL_DENIED_CMD)
        snprintf(msg, sizeof msg, "This user has no permissions to run the '%s' command", cmd->fullname);
    else
        snprintf(msg, sizeof msg, "This user has no permissions to access the '%s' %s",
                 span_cstr(buf, sizeof buf, c->argv[3 + pos]), r == ACL_DENIED_KEY ? "key" : "channel");
    reply_bulk_cstr(c, msg);
}

#define ERR_NOFILE                                                                                                    \
    "ERR This Redis instance is not configured to use an ACL file. You may want to specify users via the ACL "       \
    "SETUSER command and then issue a CONFIG REWRITE (assuming you have a Redis configuration file set) in order to " \
    "store users in the Redis configuration."

static void file_op(client *c, int (*hook)(char *, size_t)) {
    char err[1024];
    int r = hook ? hook(err, sizeof err) : 1;
    if (r == 1) {
        reply_error(c, ERR_NOFILE);
        return;
    }
    if (r != 0) {
        reply_errorf(c, "ERR %s", err);
        return;
    }
    reply_ok(c);
}

static void acl_save(client *c) { file_op(c, acl_file_save_hook); }
static void acl_load(client *c) { file_op(c, acl_file_load_hook); }

static void acl_help(client *c) {
    static const char *const lines[] = {
        "ACL <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
        "CAT [<category>]",
        "    List all commands that belong to <category>, or all command categories",
        "    when no category is specified.",
        "DELUSER <username> [<username> ...]",
        "    Delete a list of users.",
        "DRYRUN <username> <command> [<arg> ...]",
        "    Returns whether the user can execute the given command without executing the command.",
        "GETUSER <username>",
        "    Get the user's details.",
        "GENPASS [<bits>]",
        "    Generate a secure 256-bit user password. The optional `bits` argument can",
        "    be used to specify a different size.",
        "LIST",
        "    Show users details in config file format.",
        "LOAD",
        "    Reload users from the ACL file.",
        "LOG [<count> | RESET]",
        "    Show the ACL log entries.",
        "SAVE",
        "    Save the current config to the ACL file.",
        "SETUSER <username> <attribute> [<attribute> ...]",
        "    Create or modify a user with the specified attributes.",
        "USERS",
        "    List all the registered usernames.",
        "WHOAMI",
        "    Return the current connection username.",
        "HELP",
        "    Prints this help.",
        NULL};
    reply_help(c, lines);
}

#define N_USERS "O(N). Where N is the number of configured users."
static command acl_subcommands[] = {
    CMD("cat", acl_cat, -2, .flags = F_ACL, .acl = "slow",
        .summary = "List the ACL categories or the commands inside a category", .since = "6.0.0",
        .complexity = "O(1) since the categories and commands are a fixed set."),
    CMD("deluser", acl_deluser, -3, .flags = F_ACL_ADMIN, .acl = ADMIN_CATS,
        .summary = "Remove the specified ACL users and the associated rules", .since = "6.0.0",
        .complexity = "O(1) amortized time considering the typical user."),
    CMD("dryrun", acl_dryrun, -4, .flags = F_ACL_ADMIN, .acl = ADMIN_CATS,
        .summary = "Returns whether the user can execute the given command without executing the command.",
        .since = "7.0.0", .complexity = "O(1)."),
    CMD("genpass", acl_genpass, -2, .flags = F_ACL, .acl = "slow",
        .summary = "Generate a pseudorandom secure password to use for ACL users", .since = "6.0.0",
        .complexity = "O(1)"),
    CMD("getuser", acl_getuser, 3, .flags = F_ACL_ADMIN, .acl = ADMIN_CATS,
        .summary = "Get the rules for a specific ACL user", .since = "6.0.0",
        .complexity = "O(N). Where N is the number of password, command and pattern rules that the user has."),
    CMD("help", acl_help, 2, .flags = CMD_LOADING | CMD_STALE, .acl = "slow",
        .summary = "Show helpful text about the different subcommands", .since = "6.0.0", .complexity = "O(1)"),
    CMD("list", acl_list, 2, .flags = F_ACL_ADMIN, .acl = ADMIN_CATS,
        .summary = "List the current ACL rules in ACL config file format", .since = "6.0.0", .complexity = N_USERS),
    CMD("load", acl_load, 2, .flags = F_ACL_ADMIN, .acl = ADMIN_CATS,
        .summary = "Reload the ACLs from the configured ACL file", .since = "6.0.0", .complexity = N_USERS),
    CMD("log", acl_log, -2, .flags = F_ACL_ADMIN, .acl = ADMIN_CATS,
        .summary = "List latest events denied because of ACLs in place", .since = "6.0.0",
        .complexity = "O(N) with N being the number of entries shown."),
    CMD("save", acl_save, 2, .flags = F_ACL_ADMIN, .acl = ADMIN_CATS,
        .summary = "Save the current ACL rules in the configured ACL file", .since = "6.0.0", .complexity = N_USERS),
    CMD("setuser", acl_setuser, -3, .flags = F_ACL_ADMIN, .acl = ADMIN_CATS,
        .summary = "Modify or create the rules for a specific ACL user", .since = "6.0.0",
        .complexity = "O(N). Where N is the number of rules provided."),
    CMD("users", acl_users, 2, .flags = F_ACL_ADMIN, .acl = ADMIN_CATS,
        .summary = "List the username of all the configured ACL rules", .since = "6.0.0", .complexity = N_USERS),
    CMD("whoami", acl_whoami, 2, .flags = F_ACL, .acl = "slow",
        .summary = "Return the name of the user associated to the current connection", .since = "6.0.0",
        .complexity = "O(1)"),
    {0},
};

static command acl_commands[] = {
    CMD("acl", acl_container, -2, .acl = "slow", .summary = "A container for Access List Control commands",
        .since = "6.0.0", .complexity = "Depends on subcommand.", .subcmds = acl_subcommands),
    {0},
};
const command_group acl_group = {"server", acl_commands};
