/* fuzz_command.c - libFuzzer target for the whole command path: bytes are
 * fed to a fake client (no socket) of an in-memory server, in chunks whose
 * sizes come from the input, so parsing, dispatch, execution (MULTI, SELECT,
 * every command group) and reply encoding all run under ASan/UBSan. Each
 * input starts from an empty keyspace.
 *
 * Input: byte 0 = chunk-size seed; the rest is the client's byte stream.
 * Build/run: make fuzz (or build/fuzz/fuzz_command -max_total_time=60 DIR). */
#include "client.h"
#include "command.h"
#include "config.h"
#include "db.h"
#include "registry.h"
#include "server.h"
#include <stdint.h>
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

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    if (!ready) setup();
    if (size < 1) return 0;
    unsigned seed = data[0];
    data++;
    size--;
    client *c = client_create(-1);
    size_t off = 0;
    while (off < size && !(c->flags & (CF_CLOSE_AFTER_REPLY | CF_CLOSE_ASAP))) {
        size_t chunk = 1 + (seed % 61);
        seed = seed * 1103515245u + 12345u;
        if (chunk > size - off) chunk = size - off;
        client_feed(c, (const char *)data + off, chunk);
        off += chunk;
        srv.now_ms += seed & 7; /* let time move so expiry paths run */
        ring_consume(&c->out, ring_used(&c->out));
    }
    client_free(c);
    for (int i = 0; i < db_count(); i++) db_flush(db_get(i));
    return 0;
}
