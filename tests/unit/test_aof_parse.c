/* test_aof_parse.c - Criterion unit tests for src/persist/aof_parse.c.
 *
 * Why: the loader decides between "cut short" (keep what is before, with
 * aof-load-truncated) and "corrupt" (refuse to start) from the reader's
 * answer alone, so the reader must say "incomplete" for every prefix of a
 * valid file and "bad" for damage before the end. Each case runs over an
 * exact-size heap copy so AddressSanitizer sees any read past len.
 */
#include <criterion/criterion.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "aof_parse.h"

static char *copy(const char *s, size_t n) {
    char *p = malloc(n ? n : 1);
    memcpy(p, s, n);
    return p;
}

static ssize_t parse(const char *s, size_t n, span *argv, size_t cap, size_t *argc) {
    char *p = copy(s, n);
    ssize_t r = aof_parse_command(p, n, argv, cap, argc);
    /* spans point into p: compare before freeing by re-basing them on s */
    for (size_t i = 0; r >= 0 && i < *argc; i++) argv[i].p = s + (argv[i].p - p);
    free(p);
    return r;
}

#define STREAM "*2\r\n$6\r\nSELECT\r\n$1\r\n0\r\n#TS:1700000000\r\n*3\r\n$3\r\nSET\r\n$1\r\nk\r\n$4\r\nv\r\n\r\r\n*1\r\n$5\r\nMULTI\r\n"

Test(aof_parse, reads_a_stream_command_by_command) {
    const char *s = STREAM;
    size_t len = strlen(s), pos = 0, argc;
    span argv[8];
    ssize_t n = parse(s, len, argv, 8, &argc);
    cr_assert_eq(n, 23);
    cr_assert_eq(argc, 2);
    cr_assert(argv[0].len == 6 && !memcmp(argv[0].p, "SELECT", 6));
    pos += (size_t)n;
    n = parse(s + pos, len - pos, argv, 8, &argc); /* the annotation line comes with the next command */
    cr_assert_eq(argc, 3);
    cr_assert(argv[2].len == 4 && !memcmp(argv[2].p, "v\r\n\r", 4), "a value may hold CRLF");
    pos += (size_t)n;
    n = parse(s + pos, len - pos, argv, 8, &argc);
    cr_assert_eq(argc, 1);
    cr_assert_eq(pos + (size_t)n, len);
}

Test(aof_parse, every_prefix_of_a_valid_stream_is_incomplete_not_bad) {
    const char *s = STREAM;
    size_t len = strlen(s);
    span argv[8];
    for (size_t k = 0; k < len; k++) {
        size_t pos = 0, argc;
        for (;;) {
            ssize_t n = parse(s + pos, k - pos, argv, 8, &argc);
            cr_assert(n != AOF_BAD, "prefix %zu at %zu read as bad", k, pos);
            if (n == AOF_INCOMPLETE || argc == 0) break;
            pos += (size_t)n;
        }
    }
}

Test(aof_parse, damage_is_bad) {
    static const char *const bad[] = {
        "+OK\r\n",                        /* not an array */
        "*x\r\n",                         /* count not a number */
        "*0\r\n",                         /* empty command */
        "*1\r\n:5\r\n",                   /* not a bulk string */
        "*1\r\n$3\r\nabcd\r\n",           /* length does not match */
        "*1\r\n$-1\r\n",                  /* null bulk */
        "*1\n$3\r\nabc\r\n",              /* LF without CR */
        "*123456789012345678901\r\n",     /* count overflows */
        "*1\r\n$99999999999\r\n",         /* argument over the limit */
    };
    span argv[4];
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        size_t argc;
        cr_assert_eq(parse(bad[i], strlen(bad[i]), argv, 4, &argc), AOF_BAD, "case %zu", i);
    }
}

Test(aof_parse, asks_for_room_then_reads) {
    const char *s = "*3\r\n$1\r\na\r\n$1\r\nb\r\n$1\r\nc\r\n";
    span argv[3];
    size_t argc;
    cr_assert_eq(parse(s, strlen(s), argv, 2, &argc), AOF_MORE_ROOM);
    cr_assert_eq(argc, 3);
    cr_assert_eq(parse(s, strlen(s), argv, 3, &argc), (ssize_t)strlen(s));
}

Test(aof_parse, annotations_alone) {
    span argv[1];
    size_t argc = 9;
    cr_assert_eq(parse("#TS:1\r\n", 7, argv, 1, &argc), 7);
    cr_assert_eq(argc, 0);
    cr_assert_eq(parse("#TS:1", 5, argv, 1, &argc), AOF_INCOMPLETE);
}

static int manifest(const char *text, aof_manifest_line *out, int cap, int *bad) {
    size_t n = strlen(text);
    static char keep[4096];
    memcpy(keep, text, n); /* the names point into it after parsing */
    return aof_manifest_parse(keep, n, out, cap, bad);
}

Test(aof_manifest, redis_lines_quotes_comments_and_unknown_keys) {
    aof_manifest_line l[8];
    int bad = 0;
    int n = manifest("file appendonly.aof.1.base.rdb seq 1 type b\n"
                     "# a comment\n\n"
                     "file \"a b.aof\" seq 2 type i newkey x\r\n"
                     "type h seq 7 file old.aof\n",
                     l, 8, &bad);
    cr_assert_eq(n, 3);
    cr_assert(l[0].name.len == 25 && !memcmp(l[0].name.p, "appendonly.aof.1.base.rdb", 25));
    cr_assert_eq(l[0].type, AOF_FILE_BASE);
    cr_assert(l[1].name.len == 7 && !memcmp(l[1].name.p, "a b.aof", 7));
    cr_assert_eq(l[1].seq, 2);
    cr_assert_eq(l[2].type, AOF_FILE_HIST);
    cr_assert_eq(l[2].seq, 7);
}

Test(aof_manifest, bad_lines_are_named) {
    static const char *const bad[] = {
        "file a seq 1\n",                     /* type missing */
        "file a seq 0 type i\n",              /* sequence must be positive */
        "file a seq x type i\n",              /* not a number */
        "file a seq 1 type z\n",              /* unknown type */
        "file ../a seq 1 type i\n",           /* a path, not a name */
        "file \"a seq 1 type i\n",            /* unbalanced quote */
    };
    aof_manifest_line l[4];
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        int line = 0;
        char text[128];
        snprintf(text, sizeof text, "file ok seq 1 type b\n%s", bad[i]);
        cr_assert_eq(manifest(text, l, 4, &line), -1, "case %zu", i);
        cr_assert_eq(line, 2, "case %zu", i);
    }
}
