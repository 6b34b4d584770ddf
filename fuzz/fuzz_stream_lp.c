/* fuzz_stream_lp.c - libFuzzer target for stream_add_listpack
 * (src/keyspace/t_stream_lp.c), the reader of a stream node as Redis
 * stores it in RDB files and DUMP payloads, and for the stream payload
 * around it (src/persist/rdb_stream.c).
 *
 * Why: a node is a listpack whose elements are counts, flags and ID deltas
 * against the node's key, read from untrusted bytes into a packed block
 * that every stream command then decodes without checks. A node the reader
 * accepts must therefore be a block the rest of the stream code can trust.
 * For every input (an exact-size heap copy, so ASan sees any over-read)
 * this target checks that, when the node is accepted:
 *  - forward and reverse iteration give the same entries, in ascending
 *    order, as many as the stream's length;
 *  - the block rendered back is accepted again and renders to the same
 *    bytes (a fixed point), and a copy (stream_dup) renders the same;
 *  - a node whose key is not above the block's last entry is refused;
 *  - the stream saved as an RDB payload loads back and saves identically.
 *
 * Input layout: 16 bytes of node key (the master ID, big-endian ms then
 * seq), then the listpack.
 *
 * Build: make build/fuzz/fuzz_stream_lp
 * Run:   build/fuzz/fuzz_stream_lp -max_total_time=30 <scratch copy of fuzz/corpus/stream_lp>
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rdb_io.h"
#include "rdb_stream.h"
#include "rdb_value.h"
#include "t_stream.h"
#include "zmalloc.h"

#define CHECK(c)                                                                    \
    do {                                                                            \
        if (!(c)) {                                                                 \
            fprintf(stderr, "CHECK failed: %s at %s:%d\n", #c, __FILE__, __LINE__); \
            abort();                                                                \
        }                                                                           \
    } while (0)

static sid key_id(const uint8_t *p) {
    sid id = {0, 0};
    for (int i = 0; i < 8; i++) {
        id.ms = id.ms << 8 | p[i];
        id.seq = id.seq << 8 | p[8 + i];
    }
    return id;
}

/* Forward and reverse iteration agree and ascend; returns the entry count. */
static uint64_t check_iteration(const stream *s) {
    stream_iter it;
    sentry e;
    sid *ids = NULL;
    size_t n = 0, cap = 0;
    stream_iter_init(&it, s, SID_MIN, SID_MAX, 0);
    while (stream_iter_next(&it, &e)) {
        if (n == cap) ids = realloc(ids, (cap = cap ? 2 * cap : 64) * sizeof *ids);
        CHECK(ids);
        CHECK(!n || sid_cmp(ids[n - 1], e.id) < 0);
        CHECK(e.nf > 0);
        ids[n++] = e.id;
    }
    stream_iter_end(&it);
    stream_iter_init(&it, s, SID_MIN, SID_MAX, 1);
    size_t k = n;
    while (stream_iter_next(&it, &e)) CHECK(k > 0 && !sid_cmp(ids[--k], e.id));
    CHECK(k == 0);
    stream_iter_end(&it);
    free(ids);
    return n;
}

/* The block rendered back: accepted again, to the same bytes. */
static void check_fixpoint(const stream *s) {
    sid master, m2;
    size_t len, len2;
    unsigned char *lp = stream_block_listpack(s, 0, &master, &len);
    CHECK(lp);
    stream *again = stream_new();
    CHECK(stream_add_listpack(again, master, lp, len) == 0);
    CHECK(stream_add_listpack(again, master, lp, len) == -1);
    unsigned char *lp2 = stream_block_listpack(again, 0, &m2, &len2);
    CHECK(len == len2 && !memcmp(lp, lp2, len) && !sid_cmp(master, m2));
    stream *d = stream_dup(again);
    unsigned char *lp3 = stream_block_listpack(d, 0, &m2, &len2);
    CHECK(len == len2 && !memcmp(lp, lp3, len));
    zfree(lp);
    zfree(lp2);
    zfree(lp3);
    stream_free(d);
    stream_free(again);
}

/* As an RDB payload: loads back, saves the same. */
static void check_payload(stream *s) {
    sid last;
    if (stream_last_live_id(s, &last)) s->last_id = last;
    s->entries_added = s->length;
    rdbw w, w2;
    rdbw_init(&w, 1);
    rdb_save_stream(&w, s);
    rdbr r;
    stream *l;
    rdbr_init(&r, w.buf, w.len);
    CHECK(rdb_load_stream(&r, RDB_TYPE_STREAM_LISTPACKS_2, &l) && rdbr_left(&r) == 0);
    rdbw_init(&w2, 1);
    rdb_save_stream(&w2, l);
    CHECK(w.len == w2.len && !memcmp(w.buf, w2.buf, w.len));
    rdbw_free(&w);
    rdbw_free(&w2);
    stream_free(l);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    if (size < 16) return 0;
    size_t len = size - 16;
    unsigned char *lp = malloc(len ? len : 1);
    memcpy(lp, data + 16, len);
    stream *s = stream_new();
    if (stream_add_listpack(s, key_id(data), lp, len) == 0) {
        CHECK(stream_block_count(s) == 1);
        CHECK(check_iteration(s) == s->length);
        stream_loaded(s);
        check_fixpoint(s);
        check_payload(s);
    } else {
        CHECK(stream_block_count(s) == 0 && s->length == 0);
    }
    stream_free(s);
    free(lp);
    return 0;
}
