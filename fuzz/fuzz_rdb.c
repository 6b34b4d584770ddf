/* fuzz_rdb.c - libFuzzer target for the RDB loader: whole files
 * (rdb_load_image) and single values as DUMP/RESTORE payloads carry them
 * (rdb_load_value), both untrusted input. Every value that loads is saved
 * again and the bytes loaded back must load too (the writer's output is
 * always valid). Each input starts from an empty keyspace.
 *
 * Input: byte 0 selects the mode (even: a whole file; odd: one value whose
 * RDB type is byte 1); the rest is the data.
 * Build/run: make fuzz (or build/fuzz/fuzz_rdb -max_total_time=60 DIR). */
#include "config.h"
#include "db.h"
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

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    if (!ready) setup();
    if (size < 1) return 0;
    if (data[0] & 1) {
        one_value(data + 1, size - 1);
    } else {
        rdb_load_stats st;
        char err[512];
        rdb_load_image(data + 1, size - 1, NULL, &st, err, sizeof err);
    }
    for (int i = 0; i < db_count(); i++) db_flush(db_get(i));
    return 0;
}
