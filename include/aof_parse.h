/* aof_parse.h - the append-only file's two formats, read as pure functions
 * over (buf, len) with spans out and no allocation (aof_parse.c), so the
 * loader, its tests and a libFuzzer target share them.
 *
 * Commands: RESP arrays of bulk strings, as Redis writes them
 * ("*<argc>\r\n" then "$<len>\r\n<bytes>\r\n" per argument). A line
 * starting with '#' is an annotation (Redis's "#TS:<unix time>" with
 * aof-timestamp-enabled) and is skipped.
 *
 * Manifest: one line per file, "file <name> seq <n> type <b|h|i>", with
 * redis-cli quoting for names that need it; blank lines and '#' comments
 * are skipped.
 */
#ifndef FERRY_AOF_PARSE_H
#define FERRY_AOF_PARSE_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "span.h"

#define AOF_MAX_ARGS (1024 * 1024)          /* arguments in one command */
#define AOF_MAX_ARG_LEN (512LL * 1024 * 1024) /* bytes in one argument (proto-max-bulk-len's default) */

#define AOF_INCOMPLETE (-2)                 /* the buffer ends inside the command */
#define AOF_BAD (-1)                        /* not a command */
#define AOF_MORE_ROOM (-3)                  /* *argc arguments do not fit in cap: grow argv and call again */

/* One command at buf[0, len): returns the bytes it takes (annotation lines
 * before it included), with argv[0, *argc) pointing into buf; or one of the
 * negative codes above. *argc is 0 when only annotations remain before the
 * end of the buffer (the return value is then the bytes they take). */
ssize_t aof_parse_command(const char *buf, size_t len, span *argv, size_t cap, size_t *argc);

typedef enum { AOF_FILE_BASE = 'b', AOF_FILE_HIST = 'h', AOF_FILE_INCR = 'i' } aof_file_type;

typedef struct aof_manifest_line {
    span name;                              /* unescaped, inside the caller's buffer */
    long long seq;
    aof_file_type type;
} aof_manifest_line;

/* Manifest lines of buf[0, len) into out[0, cap): unescaped in place (the
 * buffer is modified). Returns the number of lines, or -1 with the 1-based
 * line number of the first bad line in *bad_line (an unknown key, a missing
 * value, a bad type or sequence, more than cap lines). */
int aof_manifest_parse(char *buf, size_t len, aof_manifest_line *out, int cap, int *bad_line);

#endif
