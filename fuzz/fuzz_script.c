/* fuzz_script.c - libFuzzer target for scripts over untrusted arguments:
 * EVAL of one of a few fixed scripts, with the input as its ARGV, on a
 * fake client of an in-memory server. The scripts hand the bytes to
 * cjson.decode / encode, cmsgpack.unpack / pack, struct.unpack / pack / size
 * (formats from the input too), to redis.call and redis.pcall as a whole command
 * (any command a script may run, in RESP2 and RESP3 form, so every reply
 * is converted to Lua values), to number conversion and to loadstring
 * (compiled, never run), so the conversions both ways and the engine's
 * error paths run under ASan/UBSan. Each input starts from an empty
 * keyspace.
 *
 * Input: byte 0 picks the script; the rest, split at NUL bytes, is ARGV
 * (at most 8 arguments).
 * Build/run: make fuzz (or build/fuzz/fuzz_script -max_total_time=60 DIR). */
#include "client.h"
#include "command.h"
#include "config.h"
#include "db.h"
#include "registry.h"
#include "server.h"
#include <stdint.h>
#include <stdio.h>
#include <string.h>

static const char *const scripts[] = {
    "return cjson.decode(ARGV[1])",
    "return cjson.encode(cjson.decode(ARGV[1]))",
    "return redis.call(unpack(ARGV))",
    "return redis.pcall(unpack(ARGV))",
    "redis.setresp(3) return redis.pcall(unpack(ARGV))",
    "local t = {} for i, a in ipairs(ARGV) do t[i] = tonumber(a) or a end return t",
    "return {loadstring(ARGV[1] or '')}",
    "return redis.sha1hex(ARGV[1] or '')",
    "return {cmsgpack.unpack(ARGV[1])}",
    "return cmsgpack.pack(cmsgpack.unpack(ARGV[1]))",
    "return {cmsgpack.unpack_limit(ARGV[1], 2, tonumber(ARGV[2]) or 0)}",
    "return cmsgpack.pack(cjson.decode(ARGV[1]))",
    "return {struct.unpack(ARGV[1] or '', ARGV[2] or '')}",
    "return struct.pack(ARGV[1] or '', ARGV[2], ARGV[3])",
    "return struct.size(ARGV[1] or '')",
};
#define NSCRIPTS (sizeof scripts / sizeof scripts[0])
#define MAX_ARGS 8

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

static void add_bulk(char **w, const char *p, size_t n) {
    *w += sprintf(*w, "$%zu\r\n", n);
    memcpy(*w, p, n);
    *w += n;
    memcpy(*w, "\r\n", 2);
    *w += 2;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    if (!ready) setup();
    if (size < 1 || size > 1 << 16) return 0;
    const char *script = scripts[data[0] % NSCRIPTS];
    const char *args[MAX_ARGS];
    size_t lens[MAX_ARGS];
    int nargs = 0;
    size_t start = 1;
    for (size_t i = 1; i <= size && nargs < MAX_ARGS; i++) {
        if (i == size || data[i] == 0) {
            args[nargs] = (const char *)data + start;
            lens[nargs++] = i - start;
            start = i + 1;
        }
    }
    char *req = malloc(size + 64 * (MAX_ARGS + 3) + strlen(script)), *w = req;
    w += sprintf(w, "*%d\r\n", 3 + nargs);
    add_bulk(&w, "EVAL", 4);
    add_bulk(&w, script, strlen(script));
    add_bulk(&w, "0", 1);
    for (int j = 0; j < nargs; j++) add_bulk(&w, args[j], lens[j]);
    client *c = client_create(-1);
    client_feed(c, req, (size_t)(w - req));
    ring_consume(&c->out, ring_used(&c->out));
    client_free(c);
    free(req);
    for (int i = 0; i < db_count(); i++) db_flush(db_get(i));
    return 0;
}
