/* fuzz_keyspec.c - libFuzzer target for the key specification engine
 * (src/commands/keyspec.c, keyspec_proc.c).
 *
 * Why: command_keys() reads client arguments at positions computed from
 * counts the client sends (numkeys, STREAMS halves, keyword searches from
 * the end), and will run for every command of a restricted ACL user, so
 * an off-by-one is an out-of-bounds read of argv. This target runs it over
 * every command of ferry's table that has a row in the generated table
 * (with an argument count its arity allows, as callers guarantee) and
 * arbitrary arguments, each an exact-size heap copy (ASan flags any read
 * past an argument), and checks that:
 *  - commands_init attached the row of the command's full name;
 *  - the result is -1 or a count of at most argc keys, every key position
 *    inside 1..argc-1;
 *  - a call with a smaller output buffer writes a prefix of the same keys
 *    and returns the same count (the documented "call again" contract).
 *
 * Input layout: byte 0-1 = table row (modulo its length); the rest is the
 * arguments after the command name, separated by 0xff bytes.
 *
 * Build: make build/fuzz/fuzz_keyspec
 * Run:   build/fuzz/fuzz_keyspec -max_total_time=20 fuzz/corpus/keyspec
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "command.h"
#include "keyspec.h"
#include "registry.h"

#include "fuzz_check.h"

#define MAX_ARGS 64

static int split(const uint8_t *data, size_t size, const char *name, span *argv) {
    int argc = 0;
    size_t nlen = strlen(name);
    char *p = malloc(nlen ? nlen : 1);
    memcpy(p, name, nlen);
    argv[argc++] = (span){p, nlen};
    size_t start = 0;
    for (size_t i = 0; i <= size && argc < MAX_ARGS; i++) {
        if (i < size && data[i] != 0xff) continue;
        size_t len = i - start;
        char *a = malloc(len ? len : 1);
        memcpy(a, data + start, len);
        argv[argc++] = (span){a, len};
        start = i + 1;
    }
    return argc;
}

/* ferry's command of a full name ("config|get"), or NULL */
static command *by_fullname(const char *name) {
    const char *bar = strchr(name, '|');
    command *c = command_lookup_name(name, bar ? (size_t)(bar - name) : strlen(name));
    if (!c || !bar) return c;
    for (command *s = c->subcmds; s && s->name; s++)
        if (strcmp(s->name, bar + 1) == 0) return s;
    return NULL;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    static int ready;
    if (!ready) {
        registry_commands();
        ready = 1;
    }
    if (size < 2) return 0;
    size_t row = ((size_t)data[0] << 8 | data[1]) % keyspec_table_len;
    command *cmd = by_fullname(keyspec_table[row].name);
    if (!cmd) return 0; /* a Redis 7.0 command ferry does not have */
    CHECK(cmd->keyinfo == &keyspec_table[row]);
    span argv[MAX_ARGS];
    int argc = split(data + 2, size - 2, keyspec_table[row].name, argv);
    if (command_arity_ok(cmd, argc)) {
        keyref all[MAX_ARGS], few[2];
        int n = command_keys(cmd, argv, argc, all, MAX_ARGS);
        CHECK(n >= -1 && n <= argc);
        for (int i = 0; i < n; i++) CHECK(all[i].pos >= 1 && all[i].pos < argc);
        int m = command_keys(cmd, argv, argc, few, 2);
        CHECK(m == n);
        for (int i = 0; i < m && i < 2; i++) CHECK(few[i].pos == all[i].pos && few[i].flags == all[i].flags);
        (void)keyspec_has_keys(cmd);
    }
    for (int i = 0; i < argc; i++) free((void *)argv[i].p);
    return 0;
}
