/* cmd_module.c - MODULE for a server that loads no modules.
 *
 * ferry has no module API, but clients and tools ask MODULE LIST to find
 * out which modules a server has (to enable RedisJSON or RediSearch
 * features, for instance): they get the empty list redis-server gives
 * without modules. MODULE LOAD, LOADEX and UNLOAD are refused as
 * redis-server refuses them: with `enable-module-command no` (the default)
 * as protected commands, otherwise as a load that failed or a module that
 * is not there. */
#include "command.h"
#include "reply.h"
#include "server.h"

static const char *const module_help_lines[] = {
    "MODULE <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
    "LIST",
    "    Return a list of loaded modules.",
    "LOAD <path> [<arg> ...]",
    "    Load a module library from <path>, passing to it any optional arguments.",
    "LOADEX <path> [[CONFIG NAME VALUE] [CONFIG NAME VALUE]] [ARGS ...]",
    "    Load a module library from <path>, while passing it module configurations and optional arguments.",
    "UNLOAD <name>",
    "    Unload a module.",
    "HELP",
    "    Prints this help.",
    NULL,
};

static int module_command_allowed(const client *c) {
    int mode = srv.cfg.enable_module_command;
    return mode == DEBUG_CMD_YES || (mode == DEBUG_CMD_LOCAL && client_is_local(c));
}

static int refused(client *c) {
    if (module_command_allowed(c)) return 0;
    reply_error(c, "ERR MODULE command not allowed. If the enable-module-command option is set to \"local\", "
                   "you can run it from a local connection, otherwise you need to set this option in the "
                   "configuration file, and then restart the server.");
    return 1;
}

static void module_help(client *c) { reply_help(c, module_help_lines); }
static void module_list(client *c) { reply_array(c, 0); }

static void module_load(client *c) {
    if (!refused(c)) reply_error(c, "ERR Error loading the extension. Please check the server logs.");
}

static void module_unload(client *c) {
    if (!refused(c)) reply_error(c, "ERR Error unloading module: no such module with that name");
}

static void module_container(client *c) {
    char sub[129];
    reply_errorf(c, "ERR unknown subcommand '%s'. Try MODULE HELP.", span_cstr(sub, sizeof sub, c->argv[1]));
}

#define F_MOD (CMD_ADMIN | CMD_NOSCRIPT)
static command module_subcommands[] = {
    CMD("help", module_help, 2, .flags = CMD_LOADING | CMD_STALE, .acl = "slow",
        .summary = "Show helpful text about the different subcommands", .since = "5.0.0", .complexity = "O(1)"),
    CMD("list", module_list, 2, .flags = F_MOD, .acl = "admin slow dangerous",
        .summary = "List all modules loaded by the server", .since = "4.0.0",
        .complexity = "O(N) where N is the number of loaded modules."),
    CMD("load", module_load, -3, .flags = F_MOD | CMD_NO_ASYNC_LOADING, .acl = "admin slow dangerous",
        .summary = "Load a module", .since = "4.0.0", .complexity = "O(1)"),
    CMD("loadex", module_load, -3, .flags = F_MOD | CMD_NO_ASYNC_LOADING, .acl = "admin slow dangerous",
        .summary = "Load a module with extended parameters", .since = "7.0.0", .complexity = "O(1)"),
    CMD("unload", module_unload, 3, .flags = F_MOD | CMD_NO_ASYNC_LOADING, .acl = "admin slow dangerous",
        .summary = "Unload a module", .since = "4.0.0", .complexity = "O(1)"),
    {0},
};

static command module_commands[] = {
    CMD("module", module_container, -2, .acl = "slow", .summary = "A container for module commands",
        .since = "4.0.0", .complexity = "Depends on subcommand.", .subcmds = module_subcommands),
    {0},
};
const command_group module_group = {"server", module_commands};
