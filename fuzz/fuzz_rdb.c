/* fuzz_rdb.c - libFuzzer target for the RDB loader: whole files
 * (rdb_load_image) and single values as DUMP/RESTORE payloads carry them
 * (rdb_load_value), both untrusted input. Every value that loads is saved
 * again and the bytes loaded back must load too (the writer's output is
 * always valid). Each input starts from an empty keyspace.
 *
 * A whole file is also loaded as a replica streams it from its primary
 * (rdb_load_source), in chunks whose sizes and pauses byte 0 chooses; the
 * outcome must be the image's: the same dataset when the image loads to
 * its last byte, a failure when it fails.
 *
 * Input: byte 0 selects the mode (even: a whole file; odd: one value whose
 * RDB type is byte 1); the rest is the data.
 * Build/run: make fuzz (or build/fuzz/fuzz_rdb -max_total_time=60 DIR). */
#include "config.h"
#include "db.h"
#include "digest.h"
#include "rdb.h"
#include "rdb_io.h"
#include "rdb_value.h"
#include "registry.h"
#include "server.h"
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

static int ready;

static void setup(void) {
    config_defaults(&srv.cfg);
    srv.cfg.loglevel = LOG_NOTHING_;
    srv.now_ms = 1700000000000LL;
    srv.lruclock = (uint32_t)(srv.now_ms / 1000);
    db_init_all(srv.cfg.databases);
    registry_init();
    ready = 1;
}

static void one_value(const uint8_t *data, size_t size) {
    if (size < 1) return;
    rdbr r;
    rdb_value v;
    rdbr_init(&r, data + 1, size - 1);
    if (!rdb_load_value(&r, data[0], &v)) {
        if (rdbr_ok(&r)) abort(); /* a failure always says why */
        rdb_value_free(&v);
        return;
    }
    dnode *n = v.type == OBJ_STRING ? db_set_string(db_get(0), "k", 1, v.str.p, v.str.len, -1)
               : v.ptr ? db_add_ptr(db_get(0), "k", 1, v.type, v.enc, v.ptr, -1) : NULL;
    if (v.type != OBJ_STRING) v.ptr = NULL; /* the keyspace owns it now */
    rdb_value_free(&v);
    if (!n) return;
    rdbw w;
    rdbw_init(&w, data[0] & 2);
    rdb_save_payload(&w, n);
    rdbr_init(&r, w.buf, w.len);
    if (!rdb_load_value(&r, rdb_value_type(n), &v) || rdbr_left(&r) != 0) abort(); /* our own output must load */
    rdb_value_free(&v);
    rdbw_free(&w);
}

/* The file in chunks of 1..2^k bytes (k from the mode byte), pausing
 * every few reads. */
typedef struct chunker {
    const uint8_t *p;
    size_t len, pos;
    unsigned shift, reads;
} chunker;

static long chunked(void *ud, void *out, size_t cap) {
    chunker *c = ud;
    if (++c->reads % 5 == 0) return -2;
    size_t n = c->len - c->pos, most = (size_t)1 << c->shift;
    if (n > cap) n = cap;
    if (n > most) n = most;
    memcpy(out, c->p + c->pos, n);
    c->pos += n;
    return (long)n;
}

static void flush_all(void) {
    for (int i = 0; i < db_count(); i++) db_flush(db_get(i));
}

static void whole_file(const uint8_t *data, size_t size, unsigned mode) {
    rdb_load_stats st;
    char err[512];
    int rc = rdb_load_image(data, size, NULL, &st, err, sizeof err);
    int to_the_end = rc == 0 && st.bytes_read == size;
    unsigned char want[DIGEST_LEN], got[DIGEST_LEN];
    digest_dataset(want);
    flush_all();
    chunker c = {.p = data, .len = size, .shift = (mode >> 1) % 17};
    rdb_source src = {chunked, &c, mode & 0x80 ? size : 0, NULL};
    int src_rc = rdb_load_source(&src, NULL, &st, err, sizeof err);
    if (rc != 0 && src_rc == 0) abort(); /* the stream accepted what the image refused */
    if (to_the_end && src_rc != 0) abort(); /* ... or refused what it accepted */
    digest_dataset(got);
    if (to_the_end && memcmp(want, got, DIGEST_LEN) != 0) abort(); /* a different dataset */
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    if (!ready) setup();
    if (size < 1) return 0;
    if (data[0] & 1) {
        one_value(data + 1, size - 1);
    } else {
        whole_file(data + 1, size - 1, data[0]);
    }
    flush_all();
    return 0;
}
