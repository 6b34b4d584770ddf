/* cmd_lcs.c - LCS key1 key2 [LEN] [IDX] [MINMATCHLEN len] [WITHMATCHLEN]:
 * the longest common subsequence of two string values.
 *
 * Why its own file: it is a string command (COMMAND DOCS group "string")
 * but shares nothing with cmd_string.c's value handling; it is a DP over a
 * transient (len1+1) x (len2+1) table of 32-bit lengths, capped like Redis
 * 7.0 by proto-max-bulk-len.
 *
 * Which common subsequence, and which matches IDX reports, depends on how
 * ties are broken while walking the table back from the end: as Redis does,
 * equal bytes are taken, otherwise the walk moves up in the first string
 * only when that keeps a strictly longer LCS, else left in the second.
 * Matches are reported from the end of the strings backwards, a match
 * closed when the walk leaves a run of consecutive equal bytes (or reaches
 * the start of either string), and dropped when shorter than MINMATCHLEN.
 */
#include <malloc.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "client.h"
#include "command.h"
#include "db.h"
#include "reply.h"
#include "server.h"
#include "util.h"
#include "zmalloc.h"

static int opt_is(span s, const char *lit) {
    const char *z = memchr(s.p, 0, s.len);
    span t = {s.p, z ? (size_t)(z - s.p) : s.len};
    return span_eq_nocase(t, lit);
}

/* One match: ranges in the first and the second string, inclusive. */
typedef struct lcs_match {
    uint32_t a0, a1, b0, b1;
} lcs_match;

static void cmd_lcs(client *c) {
    dnode *na = db_lookup_read(c->db, c->argv[1].p, c->argv[1].len);
    dnode *nb = db_lookup_read(c->db, c->argv[2].p, c->argv[2].len);
    if ((na && na->type != OBJ_STRING) || (nb && nb->type != OBJ_STRING)) {
        reply_error(c, "ERR The specified keys must contain string values");
        return;
    }
    int getlen = 0, getidx = 0, withmatchlen = 0;
    long long minmatchlen = 0;
    for (int j = 3; j < c->argc; j++) {
        int more = c->argc - 1 - j;
        if (opt_is(c->argv[j], "idx")) {
            getidx = 1;
        } else if (opt_is(c->argv[j], "len")) {
            getlen = 1;
        } else if (opt_is(c->argv[j], "withmatchlen")) {
            withmatchlen = 1;
        } else if (opt_is(c->argv[j], "minmatchlen") && more) {
            if (!str_to_ll(c->argv[j + 1].p, c->argv[j + 1].len, &minmatchlen)) {
                reply_err_notint(c);
                return;
            }
            if (minmatchlen < 0) minmatchlen = 0;
            j++;
        } else {
            reply_err_syntax(c);
            return;
        }
    }
    if (getlen && getidx) {
        reply_error(c, "ERR If you want both the length and indexes, please just use IDX.");
        return;
    }
    size_t al = na ? dn_vlen(na) : 0, bl = nb ? dn_vlen(nb) : 0;
    if (al >= UINT32_MAX - 1 || bl >= UINT32_MAX - 1) {
        reply_error(c, "ERR String too long for LCS");
        return;
    }
    unsigned long long cells = (unsigned long long)(al + 1) * (bl + 1);
    unsigned long long bytes = cells * sizeof(uint32_t);
    uint32_t *t = NULL;
    if (bytes < SIZE_MAX && bytes / cells == sizeof(uint32_t)) {
        if (bytes > (unsigned long long)srv.cfg.proto_max_bulk_len) {
            reply_error(c, "ERR Insufficient memory, transient memory for LCS exceeds proto-max-bulk-len");
            return;
        }
        t = malloc((size_t)bytes);
    }
    if (!t) {
        reply_error(c, "ERR Insufficient memory, failed allocating transient memory for LCS");
        return;
    }
    zmalloc_adjust((long long)malloc_usable_size(t));
    const unsigned char *a = na ? (const unsigned char *)dn_val(na) : (const unsigned char *)"";
    const unsigned char *b = nb ? (const unsigned char *)dn_val(nb) : (const unsigned char *)"";
    size_t w = bl + 1;
#define L(i, j) t[(size_t)(i) * w + (j)]
    for (size_t i = 0; i <= al; i++) {
        for (size_t j = 0; j <= bl; j++) {
            if (i == 0 || j == 0) L(i, j) = 0;
            else if (a[i - 1] == b[j - 1]) L(i, j) = L(i - 1, j - 1) + 1;
            else {
                uint32_t up = L(i - 1, j), left = L(i, j - 1);
                L(i, j) = up > left ? up : left;
            }
        }
    }
    uint32_t total = L(al, bl);
    int compute = getidx || !getlen;
    char *result = compute ? zmalloc((size_t)total + 1) : NULL;
    lcs_match *m = NULL;
    size_t nm = 0, mcap = 0;
    uint32_t idx = total;
    uint32_t a0 = (uint32_t)al, a1 = 0, b0 = 0, b1 = 0; /* a0 == al: no open match */
    size_t i = al, j = bl;
    while (compute && i > 0 && j > 0) {
        int emit = 0;
        if (a[i - 1] == b[j - 1]) {
            result[idx - 1] = (char)a[i - 1];
            if (a0 == al) {
                a0 = a1 = (uint32_t)(i - 1);
                b0 = b1 = (uint32_t)(j - 1);
            } else if (a0 == i && b0 == j) {
                a0--;
                b0--;
            } else {
                emit = 1;
            }
            if (a0 == 0 || b0 == 0) emit = 1;
            idx--;
            i--;
            j--;
        } else {
            if (L(i - 1, j) > L(i, j - 1)) i--;
            else j--;
            if (a0 != al) emit = 1;
        }
        if (emit) {
            uint32_t len = a1 - a0 + 1;
            if (getidx && (minmatchlen == 0 || len >= minmatchlen)) {
                if (nm == mcap) {
                    mcap = mcap ? mcap * 2 : 16;
                    m = zrealloc(m, mcap * sizeof *m);
                }
                m[nm++] = (lcs_match){a0, a1, b0, b1};
            }
            a0 = (uint32_t)al;
        }
    }
#undef L
    zmalloc_adjust(-(long long)malloc_usable_size(t));
    free(t);

    if (getidx) {
        reply_map(c, 2);
        reply_bulk_cstr(c, "matches");
        reply_array(c, (long)nm);
        for (size_t k = 0; k < nm; k++) {
            reply_array(c, 2 + withmatchlen);
            reply_array(c, 2);
            reply_int(c, m[k].a0);
            reply_int(c, m[k].a1);
            reply_array(c, 2);
            reply_int(c, m[k].b0);
            reply_int(c, m[k].b1);
            if (withmatchlen) reply_int(c, (long long)m[k].a1 - m[k].a0 + 1);
        }
        reply_bulk_cstr(c, "len");
        reply_int(c, total);
    } else if (getlen) {
        reply_int(c, total);
    } else {
        reply_bulk(c, result, total);
    }
    zfree(m);
    zfree(result);
}

static command lcs_commands[] = {
    CMD("lcs", cmd_lcs, -3, .flags = CMD_READONLY, .acl = "read string slow", CMD_KEYS(1, 2, 1),
        .summary = "Find longest common substring", .since = "7.0.0",
        .complexity = "O(N*M) where N and M are the lengths of s1 and s2, respectively"),
    {0},
};

const command_group lcs_group = {"string", lcs_commands};
