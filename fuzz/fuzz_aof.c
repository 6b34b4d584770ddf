/* fuzz_aof.c - libFuzzer target for the append-only file's readers
 * (src/persist/aof_parse.c): the command reader and the manifest parser, both of
 * which read files a crash, a disk or a person may have damaged.
 *
 * The first byte picks the reader. Commands: the input is read command by
 * command to its end, and for each command read whole every shorter
 * prefix must read as incomplete, never as an error or as another command
 * (the loader tells a cut-short file from a corrupt one by exactly this);
 * every argument must lie inside the input and be followed by CRLF.
 * Manifest: a copy is parsed in place; every name lies inside it, has no
 * '/', and every sequence number is positive.
 *
 * Build: make build/fuzz/fuzz_aof    Run: build/fuzz/fuzz_aof fuzz/corpus/aof
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "aof_parse.h"

#define MAX_ARGS 64
#define PREFIX_CHECK_MAX 4096

static void check(int ok) {
    if (!ok) abort();
}

static void check_command(const char *buf, size_t len, const span *argv, size_t argc, ssize_t n) {
    for (size_t i = 0; i < argc; i++) {
        check(argv[i].p >= buf && argv[i].p + argv[i].len + 2 <= buf + n);
        check(argv[i].p[argv[i].len] == '\r' && argv[i].p[argv[i].len + 1] == '\n');
    }
    if ((size_t)n > PREFIX_CHECK_MAX) return;
    span tmp[MAX_ARGS];
    for (size_t k = 0; k < (size_t)n; k++) {
        size_t c;
        ssize_t r = aof_parse_command(buf, k, tmp, MAX_ARGS, &c);
        /* a prefix that ends after annotations only reads as "nothing yet" */
        check(r == AOF_INCOMPLETE || (r >= 0 && c == 0 && (size_t)r == k));
    }
    (void)len;
}

static void commands(const char *buf, size_t len) {
    span argv[MAX_ARGS];
    size_t pos = 0;
    while (pos < len) {
        size_t argc;
        ssize_t n = aof_parse_command(buf + pos, len - pos, argv, MAX_ARGS, &argc);
        if (n == AOF_MORE_ROOM) {
            check(argc > MAX_ARGS && argc <= AOF_MAX_ARGS);
            return;
        }
        if (n < 0) {
            check(n == AOF_INCOMPLETE || n == AOF_BAD);
            return;
        }
        check((size_t)n <= len - pos);
        if (argc == 0) {
            check((size_t)n == len - pos); /* only annotations were left */
            return;
        }
        check(n > 0);
        check_command(buf + pos, len - pos, argv, argc, n);
        pos += (size_t)n;
    }
}

static void manifest(const char *data, size_t len) {
    char *buf = malloc(len ? len : 1);
    memcpy(buf, data, len);
    aof_manifest_line lines[8];
    int bad = 0, n = aof_manifest_parse(buf, len, lines, 8, &bad);
    if (n < 0) {
        check(bad >= 1);
    } else {
        for (int i = 0; i < n; i++) {
            check(lines[i].name.p >= buf && lines[i].name.p + lines[i].name.len <= buf + len);
            check(lines[i].name.len > 0 && !memchr(lines[i].name.p, '/', lines[i].name.len));
            check(lines[i].seq > 0);
            check(lines[i].type == AOF_FILE_BASE || lines[i].type == AOF_FILE_INCR || lines[i].type == AOF_FILE_HIST);
        }
    }
    free(buf);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    if (size == 0) return 0;
    const char *p = (const char *)data + 1;
    if (data[0] & 1) manifest(p, size - 1);
    else commands(p, size - 1);
    return 0;
}
