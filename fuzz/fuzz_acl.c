/* fuzz_acl.c - libFuzzer target for the ACL rule parser and describer
 * (src/commands/acl_rules.c, acl_describe.c).
 *
 * Why: ACL SETUSER rules, `user` config lines and aclfile lines are
 * untrusted text parsed into bitmaps, pattern lists and selectors; the
 * describer must write back rules that rebuild the same user (ACL SAVE then
 * ACL LOAD). The input is split at '\n' into rules applied to a scratch
 * user (under ASan/UBSan); when they apply, its description (split at
 * spaces, selectors merged back as ACL SETUSER does) is applied to a fresh
 * user, whose description must be identical (see round_trippable).
 *
 * Build: make build/fuzz/fuzz_acl
 * Run:   build/fuzz/fuzz_acl -max_total_time=20 fuzz/corpus/acl
 */
#include "acl.h"
#include "config.h"
#include "db.h"
#include "registry.h"
#include "server.h"
#include "zmalloc.h"
#include <ctype.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz_check.h"

#define MAXR 64

static int ready;

static void setup(void) {
    config_defaults(&srv.cfg);
    srv.cfg.loglevel = LOG_NOTHING_;
    db_init_all(srv.cfg.databases);
    registry_init();
    ready = 1;
}

/* Splits buf[0, len) at sep into at most MAXR spans (empty ones kept). */
static int split(const char *buf, size_t len, char sep, span *out) {
    int n = 0;
    size_t start = 0;
    for (size_t i = 0; i <= len && n < MAXR; i++) {
        if (i < len && buf[i] != sep) continue;
        out[n++] = (span){buf + start, i - start};
        start = i + 1;
    }
    return n;
}

/* Redis keeps an allowed first argument as given, spaces and quotes
 * included (`+select|0 a`), and writes it back as is, so such rules do not
 * survive the round trip (in redis-server either): the round trip is only
 * required of inputs without quotes or backslashes, whose rules outside
 * parentheses hold no whitespace, and whose only parentheses are those
 * around a whole one-rule selector (a pattern "~a)" in a selector is
 * ambiguous when read back). */
static int round_trippable(const span *rules, int n) {
    for (int i = 0; i < n; i++) {
        size_t len = rules[i].len;
        int sel = len >= 2 && rules[i].p[0] == '(' && rules[i].p[len - 1] == ')';
        for (size_t j = 0; j < len; j++) {
            char ch = rules[i].p[j];
            if (ch == '"' || ch == '\'' || ch == '\\' || ch == '\0') return 0;
            if (!sel && isspace((unsigned char)ch)) return 0;
            if ((ch == '(' || ch == ')') && !(sel && (j == 0 || j == len - 1))) return 0; /* ambiguous when read back */
        }
    }
    return 1;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    if (!ready) setup();
    char *buf = malloc(size ? size : 1); /* exact size: ASan sees any overread */
    memcpy(buf, data, size);
    span rules[MAXR];
    int n = split(buf, size, '\n', rules);
    acl_user *u = acl_user_new("fuzz", 4);
    char err[1024];
    int bad;
    if (!acl_user_set_rules(u, rules, n, &bad, err, sizeof err) && round_trippable(rules, n)) {
        char *d = acl_describe_user(u);
        span again[MAXR * 4];
        int m = 0;
        size_t dlen = strlen(d), start = 0;
        for (size_t i = 0; i <= dlen && m < MAXR * 4; i++) {
            if (i < dlen && d[i] != ' ') continue;
            again[m++] = (span){d + start, i - start};
            start = i + 1;
        }
        acl_user *v = acl_user_new("fuzz", 4);
        const char *e = acl_user_set_rules(v, again, m, &bad, err, sizeof err);
        if (e) fprintf(stderr, "description '%s' refused: %s\n", d, e);
        CHECK(e == NULL);
        char *d2 = acl_describe_user(v);
        if (strcmp(d, d2)) fprintf(stderr, "'%s' != '%s'\n", d, d2);
        CHECK(strcmp(d, d2) == 0);
        zfree(d2);
        acl_user_free(v);
        zfree(d);
    }
    acl_user_free(u);
    free(buf);
    return 0;
}
