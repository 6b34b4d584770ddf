/* test_keyspec.c - Criterion unit tests for the key specification engine
 * (src/commands/keyspec.c, keyspec_proc.c) over the generated Redis 7.0
 * table (keyspec_table.c).
 *
 * Each expectation is what redis-server 7.0.15 answers to COMMAND
 * GETKEYSANDFLAGS for the same line (tests/integration/test_diff_getkeys.py
 * compares the two servers directly); here the engine is exercised without
 * a server: index/keyword begin search, range (negative lastkey, step,
 * limit) and keynum find, INCOMPLETE and unknown specs falling back to the
 * procedures, variable flags, the output buffer bound.
 */
#include <criterion/criterion.h>

#include <stdio.h>
#include <string.h>

#include "command.h"
#include "keyspec.h"

#define MAXK 64

typedef struct line {
    span argv[64];
    int argc;
} line;

/* "sort k STORE d" -> argv: space separated words, '' an empty one */
static line split(const char *text) {
    static char buf[1024];
    line l = {.argc = 0};
    snprintf(buf, sizeof buf, "%s", text);
    for (char *p = buf; *p;) {
        while (*p == ' ') *p++ = '\0';
        if (!*p) break;
        char *w = p;
        while (*p && *p != ' ') p++;
        size_t len = (size_t)(p - w);
        l.argv[l.argc++] = (span){w, len == 2 && w[0] == '\'' && w[1] == '\'' ? 0 : len};
    }
    return l;
}

/* the keys of `text` for command `fullname`, as "pos:flags pos:flags" */
static int keys_of(const char *fullname, const char *text, keyref *out) {
    command cmd = {.name = fullname};
    cmd.keyinfo = keyspec_find(fullname);
    cr_assert(cmd.keyinfo, "no row for %s", fullname);
    line l = split(text);
    return command_keys(&cmd, l.argv, l.argc, out, MAXK);
}

static void expect(const char *fullname, const char *text, int n, const int *pos, const uint32_t *flags) {
    keyref out[MAXK];
    int got = keys_of(fullname, text, out);
    cr_assert_eq(got, n, "%s: %d keys, want %d", text, got, n);
    for (int i = 0; i < n && i < MAXK; i++) {
        cr_assert_eq(out[i].pos, pos[i], "%s: key %d at %d, want %d", text, i, out[i].pos, pos[i]);
        cr_assert_eq(out[i].flags, flags[i], "%s: key %d flags %#x, want %#x", text, i, out[i].flags, flags[i]);
    }
}

#define RO_A (KS_RO | KS_ACCESS)
#define OW_U (KS_OW | KS_UPDATE)

Test(keyspec, table_is_sorted_and_found) {
    for (size_t i = 1; i < keyspec_table_len; i++)
        cr_assert(strcmp(keyspec_table[i - 1].name, keyspec_table[i].name) < 0, "%s", keyspec_table[i].name);
    cr_assert(keyspec_find("get"));
    cr_assert(keyspec_find("client|kill"));
    cr_assert_null(keyspec_find("nosuch"));
}

Test(keyspec, index_range) {
    expect("get", "get k", 1, (int[]){1}, (uint32_t[]){RO_A});
    expect("mset", "mset a 1 b 2 c 3", 3, (int[]){1, 3, 5},
           (uint32_t[]){KS_OW | KS_UPDATE, KS_OW | KS_UPDATE, KS_OW | KS_UPDATE});
    expect("del", "del a b c", 3, (int[]){1, 2, 3},
           (uint32_t[]){KS_RM | KS_DELETE, KS_RM | KS_DELETE, KS_RM | KS_DELETE});
    /* two specs: the source, then the destination */
    expect("lmove", "lmove a b left right", 2, (int[]){1, 2},
           (uint32_t[]){KS_RW | KS_ACCESS | KS_DELETE, KS_RW | KS_INSERT});
}

Test(keyspec, keyword_range_with_limit) {
    /* XREAD STREAMS a b 0 0: half of what follows STREAMS */
    expect("xread", "xread count 2 streams a b 0 0", 2, (int[]){4, 5}, (uint32_t[]){RO_A, RO_A});
    /* an odd count: the limit rounds the range down, the specs still hold */
    expect("xread", "xread streams a b 0", 1, (int[]){2}, (uint32_t[]){RO_A});
}

Test(keyspec, keynum) {
    expect("zunionstore", "zunionstore d 2 a b", 3, (int[]){1, 3, 4}, (uint32_t[]){OW_U, RO_A, RO_A});
    expect("eval", "eval s 2 a b c", 2, (int[]){3, 4},
           (uint32_t[]){KS_RW | KS_ACCESS | KS_UPDATE, KS_RW | KS_ACCESS | KS_UPDATE});
    /* zero keys through the specs is invalid: the procedure finds none */
    keyref out[MAXK];
    cr_assert_eq(keys_of("eval", "eval s 0", out), -1);
    cr_assert_eq(keys_of("zunionstore", "zunionstore d 3 a b", out), -1);
    /* "1x" is no integer for the specs, but atoi() reads 1: keys without flags */
    expect("eval", "eval s 1x a", 1, (int[]){3}, (uint32_t[]){0});
    expect("zunionstore", "zunionstore d 2x a b", 3, (int[]){3, 4, 1}, (uint32_t[]){0, 0, 0});
}

Test(keyspec, unknown_specs_use_the_procedure) {
    expect("sort", "sort k", 1, (int[]){1}, (uint32_t[]){RO_A});
    expect("sort", "sort k by x get # store d limit 0 1", 2, (int[]){1, 7}, (uint32_t[]){RO_A, OW_U});
    expect("sort", "sort k store a store b", 2, (int[]){1, 5}, (uint32_t[]){RO_A, OW_U});
    expect("sort_ro", "sort_ro k store d", 1, (int[]){1}, (uint32_t[]){RO_A});
}

Test(keyspec, incomplete_specs_use_the_procedure) {
    uint32_t rad = KS_RW | KS_ACCESS | KS_DELETE;
    expect("migrate", "migrate h 1 k 0 100", 1, (int[]){3}, (uint32_t[]){rad});
    expect("migrate", "migrate h 1 '' 0 100 copy keys a b", 2, (int[]){8, 9}, (uint32_t[]){rad, rad});
    keyref out[MAXK]; /* KEYS after a key that is not "": no keys */
    cr_assert_eq(keys_of("migrate", "migrate h 1 k 0 100 keys a", out), -1);
    expect("georadius", "georadius k 1 2 3 m store d", 2, (int[]){1, 7}, (uint32_t[]){RO_A, OW_U});
}

Test(keyspec, variable_flags) {
    expect("set", "set k v", 1, (int[]){1}, (uint32_t[]){OW_U});
    expect("set", "set k v ex 1 GET", 1, (int[]){1}, (uint32_t[]){KS_RW | KS_ACCESS | KS_UPDATE});
    expect("bitfield", "bitfield k get u8 0 overflow sat", 1, (int[]){1}, (uint32_t[]){RO_A});
    expect("bitfield", "bitfield k get u8 0 set u8 0 1", 1, (int[]){1}, (uint32_t[]){KS_RW | KS_ACCESS | KS_UPDATE});
}

Test(keyspec, no_keys_and_not_key_specs) {
    keyref out[MAXK];
    command ping = {.name = "ping", .keyinfo = keyspec_find("ping")};
    cr_assert_not(keyspec_has_keys(&ping));
    line l = split("ping");
    cr_assert_eq(command_keys(&ping, l.argv, l.argc, out, MAXK), 0);
    command own = {.name = "stats"}; /* ferry's own: no row */
    cr_assert_not(keyspec_has_keys(&own));
    cr_assert_eq(command_keys(&own, l.argv, l.argc, out, MAXK), 0);
    command eval = {.name = "eval", .keyinfo = keyspec_find("eval")};
    cr_assert(keyspec_has_keys(&eval));
}

Test(keyspec, not_key_specs_and_missing_keywords_are_skipped) {
    keyref out[MAXK];
    /* SPUBLISH's shard channel is a NOT_KEY spec: no keys, none to look for */
    command spublish = {.name = "spublish", .keyinfo = keyspec_find("spublish")};
    cr_assert_not(keyspec_has_keys(&spublish));
    line l = split("spublish ch msg");
    cr_assert_eq(command_keys(&spublish, l.argv, l.argc, out, MAXK), 0);
    /* GEORADIUS without STORE / STOREDIST: the keyword specs find nothing */
    expect("georadius", "georadius k 1 2 3 m withdist", 1, (int[]){1}, (uint32_t[]){RO_A});
    /* a keyword as the last argument is not searched (nothing could follow it) */
    expect("georadius", "georadius k 1 2 3 m store", 1, (int[]){1}, (uint32_t[]){RO_A});
}

Test(keyspec, output_bound) {
    keyref out[2];
    command del = {.name = "del", .keyinfo = keyspec_find("del")};
    line l = split("del a b c d e");
    cr_assert_eq(command_keys(&del, l.argv, l.argc, out, 2), 5);
    cr_assert_eq(out[1].pos, 2);
}

Test(keyspec, arg_is_compares_as_a_c_string) {
    cr_assert(keyspec_arg_is((span){"STORE", 5}, "store"));
    cr_assert(keyspec_arg_is((span){"get\0x", 5}, "get"));
    cr_assert_not(keyspec_arg_is((span){"ge", 2}, "get"));
    cr_assert_not(keyspec_arg_is((span){"gets", 4}, "get"));
}
