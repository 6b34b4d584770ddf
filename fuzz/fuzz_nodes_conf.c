/* fuzz_nodes_conf.c - libFuzzer target for the nodes.conf reader and writer
 * (src/cluster/nodes_conf.c).
 *
 * Why: nodes.conf is read at start-up from disk, where a crash, a full disk
 * or a hand edit can leave anything; the same lines come back in CLUSTER
 * NODES replies. Any bytes must be refused or read, never read out of
 * bounds (the input is copied into an exact-size heap block for ASan).
 * Checks:
 *  - the parse returns 0 or -1; on -1 the error line and offset lie inside
 *    the input (line 0 only for "no myself node");
 *  - every node accepted, written back by nodes_conf_format_node and parsed
 *    again, gives the same record (the writer and reader agree);
 *  - the vars read, written back and parsed again give the same values.
 *
 * Build: make build/fuzz/fuzz_nodes_conf
 * Run:   build/fuzz/fuzz_nodes_conf -max_total_time=60 DIR (a scratch copy of
 *        fuzz/corpus/nodes_conf)
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz_check.h"
#include "nodes_conf.h"

#define MYSELF_LINE "0000000000000000000000000000000000000000 :0@0 myself - 0 0 0 connected\n"

static int same_node(const nc_node *a, const nc_node *b) {
    if (strcmp(a->id, b->id) || strcmp(a->ip, b->ip) || strcmp(a->hostname, b->hostname) ||
        strcmp(a->master, b->master) || a->port != b->port || a->cport != b->cport || a->flags != b->flags ||
        a->ping_sent != b->ping_sent || a->pong_recv != b->pong_recv || a->config_epoch != b->config_epoch ||
        a->connected != b->connected || memcmp(a->slots, b->slots, sizeof a->slots) || a->nstates != b->nstates)
        return 0;
    for (size_t i = 0; i < a->nstates; i++)
        if (a->states[i].slot != b->states[i].slot || a->states[i].importing != b->states[i].importing ||
            strcmp(a->states[i].id, b->states[i].id))
            return 0;
    return 1;
}

/* The re-parse of one re-formatted node: it must be the only one. */
typedef struct reparse {
    const nc_node *want;
    int seen;
} reparse;

static int check_again(void *arg, const nc_node *n, size_t line) {
    reparse *r = arg;
    if (line == 1) {
        CHECK(same_node(n, r->want));
        r->seen++;
    }
    return 0;
}

static int check_node(void *arg, const nc_node *n, size_t line) {
    (void)arg;
    CHECK(line >= 1);
    sbuf out = {0};
    nodes_conf_format_node(&out, n, 1);
    if (!(n->flags & NC_MYSELF)) sb_adds(&out, MYSELF_LINE); /* a file needs one */
    reparse r = {n, 0};
    nodes_conf_err e;
    CHECK(nodes_conf_parse(out.p, out.len, check_again, NULL, &r, &e) == 0);
    CHECK(r.seen == 1);
    sb_free(&out);
    return 0;
}

static void check_vars(const nodes_conf_vars *v) {
    sbuf out = {0};
    sb_adds(&out, MYSELF_LINE);
    nodes_conf_format_vars(&out, v);
    nodes_conf_vars again;
    CHECK(nodes_conf_parse(out.p, out.len, NULL, &again, NULL, NULL) == 0);
    CHECK(again.current_epoch == v->current_epoch && again.last_vote_epoch == v->last_vote_epoch);
    sb_free(&out);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    char *p = malloc(size ? size : 1);
    memcpy(p, data, size);
    nodes_conf_vars v;
    nodes_conf_err e;
    int rc = nodes_conf_parse(p, size, check_node, &v, NULL, &e);
    CHECK(rc == 0 || rc == -1);
    if (rc == -1) {
        CHECK(e.offset <= size);
        CHECK(e.line >= 1 || strstr(e.reason, "myself"));
        CHECK(e.reason[0] != '\0');
    } else {
        check_vars(&v);
    }
    free(p);
    return 0;
}
