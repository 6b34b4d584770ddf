/* keyspec_proc.c - the key-finding procedures of commands whose Redis 7.0
 * key specs cannot say everything: keys counted by an argument that may be
 * malformed (EVAL/FCALL, ZUNIONSTORE..., LMPOP...), keys after an option
 * that can appear anywhere (SORT ... STORE, MIGRATE ... KEYS, GEORADIUS ...
 * STORE, XREAD ... STREAMS) and flags that depend on the options (SET ...
 * GET, BITFIELD's subcommands). keyspec.c runs them when the specs fail or
 * have variable flags; each reproduces what redis-server answers to COMMAND
 * GETKEYSANDFLAGS (including the keys it reports without flags). */
#include "keyspec.h"
#include <stdlib.h>
#include <string.h>

static int put(keyref *out, int max, int n, int pos, uint32_t flags) {
    if (n < max) out[n] = (keyref){pos, flags};
    return n + 1;
}

/* atoi() of an argument, as Redis reads these counts (leading blanks, a
 * sign, digits up to the first other byte; long values wrap as glibc's). */
static int arg_atoi(span a) {
    char buf[128];
    size_t n = a.len < sizeof buf - 1 ? a.len : sizeof buf - 1;
    memcpy(buf, a.p, n);
    buf[n] = '\0';
    return (int)strtol(buf, NULL, 10);
}

/* `count_at` counts the keys from `first_at` on; `store_at` (if not 0) is a
 * destination listed after them. No keys when the count is not in
 * 1..argc-first_at. */
static int counted(int store_at, int count_at, int first_at, const span *argv, int argc, keyref *out, int max) {
    int num = arg_atoi(argv[count_at]);
    if (num < 1 || num > argc - first_at) return 0;
    int n = 0;
    for (int i = 0; i < num; i++) n = put(out, max, n, first_at + i, 0);
    return store_at ? put(out, max, n, store_at, 0) : n;
}

/* SORT key [BY p] [LIMIT o c] [GET p ...] [STORE dst]: the last STORE that
 * has an argument after it, skipping the arguments of LIMIT, GET and BY. */
static int sort_keys(const span *argv, int argc, keyref *out, int max) {
    int store = 0;
    for (int i = 2; i < argc; i++) {
        if (keyspec_arg_is(argv[i], "limit")) i += 2;
        else if (keyspec_arg_is(argv[i], "get") || keyspec_arg_is(argv[i], "by")) i += 1;
        else if (keyspec_arg_is(argv[i], "store") && i + 1 < argc) store = i + 1;
    }
    int n = put(out, max, 0, 1, KS_RO | KS_ACCESS);
    return store ? put(out, max, n, store, KS_OW | KS_UPDATE) : n;
}

/* MIGRATE host port key|"" db timeout [COPY] [REPLACE] [AUTH pw] [AUTH2 u pw]
 * [KEYS k ...]: argv[3], or the keys after KEYS (none if argv[3] is not
 * empty then). */
static int migrate_keys(const span *argv, int argc, keyref *out, int max) {
    int first = 3, num = 1;
    for (int i = 6; i < argc; i++) {
        if (keyspec_arg_is(argv[i], "keys")) {
            if (argv[3].len > 0) return 0;
            first = i + 1;
            num = argc - first;
            break;
        }
        if (keyspec_arg_is(argv[i], "auth")) i += 1;
        else if (keyspec_arg_is(argv[i], "auth2")) i += 2;
    }
    int n = 0;
    for (int i = 0; i < num; i++) n = put(out, max, n, first + i, KS_RW | KS_ACCESS | KS_DELETE);
    return n;
}

/* GEORADIUS[BYMEMBER] key ... [STORE|STOREDIST dst]: the key and the last
 * destination named. */
static int georadius_keys(const span *argv, int argc, keyref *out, int max) {
    int store = 0;
    for (int i = 5; i < argc; i++)
        if ((keyspec_arg_is(argv[i], "store") || keyspec_arg_is(argv[i], "storedist")) && i + 1 < argc) store = ++i;
    int n = put(out, max, 0, 1, 0);
    return store ? put(out, max, n, store, 0) : n;
}

/* XREAD[GROUP] [BLOCK ms] [COUNT n] [GROUP g c] [NOACK] STREAMS k ... id ...:
 * the first half of what follows STREAMS (none if odd or empty, or if an
 * unknown option comes first). */
static int xread_keys(const span *argv, int argc, keyref *out, int max) {
    int streams = -1;
    for (int i = 1; i < argc && streams < 0; i++) {
        if (keyspec_arg_is(argv[i], "block") || keyspec_arg_is(argv[i], "count")) i++;
        else if (keyspec_arg_is(argv[i], "group")) i += 2;
        else if (keyspec_arg_is(argv[i], "streams")) streams = i;
        else if (!keyspec_arg_is(argv[i], "noack")) break;
    }
    int num = argc - streams - 1;
    if (streams < 0 || num == 0 || num % 2) return 0;
    int n = 0;
    for (int i = 0; i < num / 2; i++) n = put(out, max, n, streams + 1 + i, 0);
    return n;
}

/* SET key value [... GET ...]: GET reads the old value. */
static int set_keys(const span *argv, int argc, keyref *out, int max) {
    for (int i = 3; i < argc; i++)
        if (keyspec_arg_is(argv[i], "get")) return put(out, max, 0, 1, KS_RW | KS_ACCESS | KS_UPDATE);
    return put(out, max, 0, 1, KS_OW | KS_UPDATE);
}

/* BITFIELD key [GET t o] [OVERFLOW b] ...: read-only while every operation
 * is a complete GET or OVERFLOW; a SET, INCRBY or anything else writes. */
static int bitfield_keys(const span *argv, int argc, keyref *out, int max) {
    int ro = 1;
    for (int i = 2; i < argc && ro; i++) {
        int rest = argc - i - 1;
        if (keyspec_arg_is(argv[i], "get") && rest >= 2) i += 2;
        else if (keyspec_arg_is(argv[i], "overflow") && rest >= 1) i += 1;
        else ro = 0;
    }
    return put(out, max, 0, 1, ro ? KS_RO | KS_ACCESS : KS_RW | KS_ACCESS | KS_UPDATE);
}

int keyspec_proc_keys(keyspec_proc proc, const span *argv, int argc, keyref *out, int max) {
    switch (proc) {
    case KSP_EVAL: return counted(0, 2, 3, argv, argc, out, max);
    case KSP_ZSTORE: return counted(1, 2, 3, argv, argc, out, max);
    case KSP_NUMKEYS_1: return counted(0, 1, 2, argv, argc, out, max);
    case KSP_NUMKEYS_2: return counted(0, 2, 3, argv, argc, out, max);
    case KSP_SORT: return sort_keys(argv, argc, out, max);
    case KSP_SORT_RO: return put(out, max, 0, 1, KS_RO | KS_ACCESS);
    case KSP_MIGRATE: return migrate_keys(argv, argc, out, max);
    case KSP_GEORADIUS: return georadius_keys(argv, argc, out, max);
    case KSP_XREAD: return xread_keys(argv, argc, out, max);
    case KSP_SET: return set_keys(argv, argc, out, max);
    case KSP_BITFIELD: return bitfield_keys(argv, argc, out, max);
    case KSP_NONE: break;
    }
    return 0;
}
