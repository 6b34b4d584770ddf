/* script_nolua.c - the engine of a server built with `make LUA=no` (see
 * script.h): libc only, no Lua. The scripting commands exist (so COMMAND
 * lists them and clients get a clear answer) and reply with an error. */
#include "script.h"
#include "reply.h"
#include <stdio.h>

int script_engine_available(void) { return 0; }

int script_define(const char *sha, const char *body, size_t len, char *err, size_t errlen) {
    (void)sha, (void)body, (void)len, (void)err, (void)errlen;
    return -1;
}

void script_run(client *c, const char *sha, const span *keys, int nkeys, const span *args, int nargs, unsigned flags) {
    (void)sha, (void)keys, (void)nkeys, (void)args, (void)nargs, (void)flags;
    reply_error(c, "ERR scripting is not available: this ferry-server was built without Lua (make LUA=no)");
}

int script_kill(int function) {
    (void)function;
    return -1;
}

int script_running(const char **name, const client **caller, long long *ms) {
    (void)name, (void)caller, (void)ms;
    return 0;
}

int script_lib_load(const char *code, size_t len, script_fn_list *out, char *err, size_t errlen) {
    (void)code, (void)len, (void)out;
    snprintf(err, errlen, "ERR scripting is not available: this ferry-server was built without Lua (make LUA=no)");
    return -1;
}

void script_fn_release(script_fn *f) { (void)f; }

void script_fcall(client *c, const script_fn *f, const span *keys, int nkeys, const span *args, int nargs) {
    (void)f, (void)keys, (void)nkeys, (void)args, (void)nargs;
    reply_error(c, "ERR scripting is not available: this ferry-server was built without Lua (make LUA=no)");
}

size_t script_functions_memory(void) { return 0; }

void script_functions_reset(void) {}

void script_engine_reset(void) {}

size_t script_engine_memory(void) { return 0; }
