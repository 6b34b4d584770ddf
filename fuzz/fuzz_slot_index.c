/* fuzz_slot_index.c - libFuzzer target for the per-slot key index
 * (src/keyspace/db_slots.c, its hooks in db.c) and key_hash_slot (crc16.c).
 *
 * Why: the index is threaded through the key nodes, so one path that moves
 * a node without telling it leaves a list pointing into freed memory. The
 * input is a program: each 3-byte instruction picks an operation, a key
 * (one of 64, whose names share a few hash tags and include binary and
 * brace-heavy ones) and a parameter, run on db 0 (indexed) and db 1 (not).
 * After every instruction db_slot_check and db_volatile_check must find
 * nothing, and each key's slot must match a bit-at-a-time CRC16 with the
 * hash-tag rule written out plainly.
 */
#include "config.h"
#include "crc16.h"
#include "db.h"
#include "fuzz_check.h"
#include "registry.h"
#include "server.h"
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define NKEYS 64
#define INSN 3

static int ready;
static char keys[NKEYS][48];
static size_t klens[NKEYS];

static void setup(void) {
    config_defaults(&srv.cfg);
    srv.cfg.loglevel = LOG_NOTHING_;
    srv.cfg.databases = 2;
    srv.now_ms = 1700000000000LL;
    srv.lruclock = (uint32_t)(srv.now_ms / 1000);
    db_init_all(srv.cfg.databases);
    registry_init();
    db_enable_slot_index(db_get(0));
    static const char *shapes[] = {"k%d{t%d}", "{t%d}%d", "x{}{t%d}%d", "{{t%d}}%d", "plain%d-%d", "a}b{t%d}%d"};
    for (int i = 0; i < NKEYS; i++) {
        int n = snprintf(keys[i], sizeof keys[i], shapes[i % 6], i % 6 == 0 ? i : i % 3, i % 6 == 0 ? i % 3 : i);
        if (i % 11 == 0) keys[i][1] = 0; /* a binary key */
        klens[i] = (size_t)n;
    }
    ready = 1;
}

static uint16_t crc16_ref(const char *p, size_t len) {
    unsigned crc = 0;
    for (size_t i = 0; i < len; i++) {
        crc ^= (unsigned)(unsigned char)p[i] << 8;
        for (int b = 0; b < 8; b++) crc = (crc & 0x8000u) ? ((crc << 1) ^ 0x1021u) & 0xffffu : (crc << 1) & 0xffffu;
    }
    return (uint16_t)crc;
}

/* The rule, plainly: the first '{', then the first '}' after it. */
static unsigned slot_ref(const char *k, size_t len) {
    for (size_t s = 0; s < len; s++) {
        if (k[s] != '{') continue;
        for (size_t e = s + 1; e < len; e++)
            if (k[e] == '}') return e > s + 1 ? crc16_ref(k + s + 1, e - s - 1) & 16383u : crc16_ref(k, len) & 16383u;
        break;
    }
    return crc16_ref(k, len) & 16383u;
}

static void one(db *d, db *o, unsigned op, int i, unsigned p) {
    static char val[256 * 5];
    dnode *n = db_lookup(d, keys[i], klens[i]);
    int j = (int)(p % NKEYS);
    switch (op % 12) {
    case 0: db_set_string(d, keys[i], klens[i], val, p * 5, p & 1 ? srv.now_ms + p : -1); break;
    case 1: if (n) db_set_expire(d, n, srv.now_ms + p); break;
    case 2: if (n) db_persist(d, n); break;
    case 3: if (n && n->type == OBJ_STRING) db_resize_value(d, n, p * 5); break;
    case 4: db_delete(d, keys[i], klens[i]); break;
    case 5: if (n && !db_lookup(d, keys[j], klens[j]) && j != i) db_insert_node(d, db_unlink_node(d, keys[i], klens[i]), keys[j], klens[j]); break;
    case 6: if (n && !db_lookup(o, keys[i], klens[i])) db_insert_node(o, db_unlink_node(d, keys[i], klens[i]), keys[i], klens[i]); break;
    case 7: if (n && !db_lookup(o, keys[j], klens[j])) db_insert_node(o, db_copy_node(n, keys[j], klens[j]), keys[j], klens[j]); break;
    case 8: srv.now_ms += p; db_active_expire(1000); break;
    case 9: db_slot_delete_all(d, key_hash_slot(keys[i], klens[i])); break;
    case 10: if (p < 8) db_swap(d, o); else if (p < 16) db_flush(d); break;
    default:
        if (!n) {
            dnode *m = db_node_new(keys[i], klens[i], p % 300, p & 2 ? srv.now_ms + p : -1);
            db_add_node(d, m);
        }
        break;
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    if (!ready) setup();
    db *d0 = db_get(0), *d1 = db_get(1);
    for (size_t at = 0; at + INSN <= size; at += INSN) {
        int second = data[at] & 0x80;
        one(second ? d1 : d0, second ? d0 : d1, data[at] & 0x7f, data[at + 1] % NKEYS, data[at + 2]);
        CHECK(db_slot_check(d0) == 0);
        CHECK(db_slot_check(d1) == 0);
        CHECK(db_volatile_check(d0) == 0);
        CHECK(db_volatile_check(d1) == 0);
    }
    for (int i = 0; i < NKEYS; i++) CHECK(key_hash_slot(keys[i], klens[i]) == slot_ref(keys[i], klens[i]));
    CHECK(key_hash_slot((const char *)data, size) == slot_ref((const char *)data, size));
    db_flush(d0);
    db_flush(d1);
    srv.now_ms = 1700000000000LL;
    return 0;
}
