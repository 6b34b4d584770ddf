/* config_bin.c - the canonical text of binary-safe directives (requirepass,
 * masterauth), whose values may hold NUL bytes as Redis's do.
 *
 * Why: every configuration value travels between the loader, CONFIG SET,
 * CONFIG GET and CONFIG REWRITE as one NUL-terminated canonical string
 * (config.c). A binary value is carried in that string escaped - a NUL byte
 * as "\0", a backslash as "\\", every other byte as itself - and decoded
 * where the bytes are needed: in the ferry_config fields (bytes and length),
 * in CONFIG GET's reply and in the quoted line CONFIG REWRITE writes. The
 * escape is internal: no client or file ever sees it.
 */
#include "config_internal.h"
#include "sbuf.h"
#include "zmalloc.h"

#include <string.h>

void config_bin_append(sbuf *b, const char *p, size_t len) {
    sb_add(b, "", 0);
    for (size_t k = 0; k < len; k++) {
        if (p[k] == '\0') sb_add(b, "\\0", 2);
        else if (p[k] == '\\') sb_add(b, "\\\\", 2);
        else sb_addc(b, p[k]);
    }
}

char *config_bin_encode(const char *p, size_t len) {
    sbuf b = {0};
    config_bin_append(&b, p, len);
    return sb_take(&b);
}

/* In place: the output never outruns the input. A backslash before any
 * other byte (or at the end) stands for itself, so every text decodes. */
size_t config_bin_decode(char *s) {
    size_t r = 0, w = 0;
    while (s[r]) {
        if (s[r] == '\\' && (s[r + 1] == '0' || s[r + 1] == '\\')) {
            s[w++] = s[r + 1] == '0' ? '\0' : '\\';
            r += 2;
        } else {
            s[w++] = s[r++];
        }
    }
    s[w] = '\0';
    return w;
}

/* Decoded, then encoded again: the one spelling of the value. */
char *config_bin_canon(const char *text) {
    char *tmp = zstrdup(text);
    size_t n = config_bin_decode(tmp);
    char *canon = config_bin_encode(tmp, n);
    zfree(tmp);
    return canon;
}

void config_bin_store(char **p, size_t *len, const char *canon) {
    zfree(*p);
    char *bytes = zstrdup(canon);
    *len = config_bin_decode(bytes);
    if (*len) {
        *p = bytes;
    } else {
        zfree(bytes);
        *p = NULL;
    }
}
