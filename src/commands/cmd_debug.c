/* cmd_debug.c - the DEBUG command: the test hooks of Redis 7.0's DEBUG that
 * ferry supports (OBJECT, SLEEP, RELOAD, LOADAOF, DIGEST, POPULATE,
 * PROTOCOL, REPLYBUFFER, LISTPACK, QUICKLIST, LOG, STRINGMATCH-TEST ...),
 * with redis-server's reply bytes and error texts. Redis's own test suite and client libraries drive
 * the server through these; the ones that crash or inspect allocator or
 * cluster internals (SEGFAULT, MALLCTL, CLUSTERLINK ...) are not offered.
 * The command's table entry is in cmd_server.c.
 */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "aof.h"
#include "client.h"
#include "cmd_debug.h"
#include "outbuf.h"
#include "config.h"
#include "db.h"
#include "dict.h"
#include "digest.h"
#include "evict.h"
#include "info.h"
#include "persist.h"
#include "reply.h"
#include "server.h"
#include "util.h"
#include "zmalloc.h"

int debug_command_allowed(const client *c) {
    int mode = srv.cfg.enable_debug_command;
    if (mode == DEBUG_CMD_YES) return 1;
    return mode == DEBUG_CMD_LOCAL && client_is_local(c);
}

/* Length of the string as an RDB would serialize it (no compression):
 * small integers as 1+1/2/4 bytes, otherwise a length prefix and the bytes. */
static size_t rdb_string_len(const char *p, size_t len) {
    long long v;
    if (len <= 11 && str_to_ll(p, len, &v)) {
        if (v >= -128 && v <= 127) return 2;
        if (v >= -32768 && v <= 32767) return 3;
        if (v >= -2147483648LL && v <= 2147483647LL) return 5;
    }
    size_t prefix = len < 64 ? 1 : len < 16384 ? 2 : len <= 0xffffffffu ? 5 : 9;
    return prefix + len;
}

static int shared_int(const dnode *n) {
    long long v;
    return n->type == OBJ_STRING && n->enc == ENC_INT && !(n->flags & DN_NOSHARE) && srv.cfg.maxmemory == 0 &&
           str_to_ll(dn_val(n), dn_vlen(n), &v) && v >= 0 && v < 10000;
}

static void debug_object(client *c) {
    dnode *n = dict_find(&c->db->keys, c->argv[2].p, c->argv[2].len);   /* as Redis: no expiry check */
    if (!n) {
        reply_error(c, "ERR no such key");
        return;
    }
    size_t ser = n->type == OBJ_STRING ? rdb_string_len(dn_val(n), dn_vlen(n)) : db_node_memory(n);
    long long idle = (long long)evict_lru_idle(n);
    char line[256];
    snprintf(line, sizeof line, "Value at:%p refcount:%d encoding:%s serializedlength:%zu lru:%u lru_seconds_idle:%lld",
             (void *)n, shared_int(n) ? INT_MAX : 1, obj_enc_name(n), ser, (unsigned)(n->lru & 0xffffff),
             idle < 0 ? 0 : idle);
    reply_status(c, line);
}

/* DEBUG SLEEP seconds: blocks the whole server (decimals allowed; a
 * non-number sleeps 0, as atof). */
static void debug_sleep(client *c) {
    char buf[64];
    double secs = strtod(span_cstr(buf, sizeof buf, c->argv[2]), NULL);
    if (secs > 0) {
        struct timespec ts;
        ts.tv_sec = (time_t)secs;
        ts.tv_nsec = (long)((secs - (double)ts.tv_sec) * 1e9);
        while (nanosleep(&ts, &ts) == -1 && errno == EINTR) {
        }
    }
    reply_ok(c);
}

static void debug_set_active_expire(client *c) {
    char buf[32];
    db_set_active_expire(atoi(span_cstr(buf, sizeof buf, c->argv[2])) != 0);
    reply_ok(c);
}

/* DEBUG PAUSE-CRON 0|1 (Redis's test hook: no periodic work while paused). */
static void debug_pause_cron(client *c) {
    char buf[32];
    srv.cron_paused = atoi(span_cstr(buf, sizeof buf, c->argv[2])) != 0;
    reply_ok(c);
}

/* DEBUG ERROR text: the text is replied as an error, verbatim (CR/LF made
 * spaces). As in Redis it is not counted in the error statistics. */
static void debug_error(client *c) {
    span s = c->argv[2];
    char *msg = zmalloc(s.len + 3);
    msg[0] = '-';
    for (size_t i = 0; i < s.len; i++) msg[i + 1] = (s.p[i] == '\r' || s.p[i] == '\n') ? ' ' : s.p[i];
    memcpy(msg + 1 + s.len, "\r\n", 2);
    reply_raw(c, msg, s.len + 3);
    zfree(msg);
}

/* The lines of redis-server's DEBUG HELP for the subcommands ferry has. */
static const char *const debug_help_lines[] = {
    "DEBUG <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
    "CHANGE-REPL-ID",
    "    Change the replication IDs of the instance.",
    "    Dangerous: should be used only for testing the replication subsystem.",
    "CONFIG-REWRITE-FORCE-ALL",
    "    Like CONFIG REWRITE but writes all configuration options, including",
    "    keywords not listed in original configuration file or default values.",
    "DIGEST",
    "    Output a hex signature representing the current DB content.",
    "DIGEST-VALUE <key> [<key> ...]",
    "    Output a hex signature of the values of all the specified keys.",
    "ERROR <string>",
    "    Return a Redis protocol error with <string> as message. Useful for clients",
    "    unit tests to simulate Redis errors.",
    "LOG <message>",
    "    Write <message> to the server log.",
    "LOADAOF",
    "    Flush the AOF buffers on disk and reload the AOF in memory.",
    "OBJECT <key>",
    "    Show low level info about `key` and associated value.",
    "POPULATE <count> [<prefix>] [<size>]",
    "    Create <count> string keys named key:<num>. If <prefix> is specified then",
    "    it is used instead of the 'key' prefix. These are not propagated to",
    "    replicas. Cluster slots are not respected so keys not belonging to the",
    "    current node can be created in cluster mode.",
    "PROTOCOL <type>",
    "    Reply with a test value of the specified type. <type> can be: string,",
    "    integer, double, bignum, null, array, set, map, attrib, push, verbatim,",
    "    true, false.",
    "RELOAD [option ...]",
    "    Save the RDB on disk and reload it back to memory. Valid <option> values:",
    "    * MERGE: conflicting keys will be loaded from RDB.",
    "    * NOFLUSH: the existing database will not be removed before load, but",
    "      conflicting keys will generate an exception and kill the server.",
    "    * NOSAVE: the database will be loaded from an existing RDB file.",
    "    Examples:",
    "    * DEBUG RELOAD: verify that the server is able to persist, flush and reload",
    "      the database.",
    "    * DEBUG RELOAD NOSAVE: replace the current database with the contents of an",
    "      existing RDB file.",
    "    * DEBUG RELOAD NOSAVE NOFLUSH MERGE: add the contents of an existing RDB",
    "      file to the database.",
    "SET-ACTIVE-EXPIRE <0|1>",
    "    Setting it to 0 disables expiring keys in background when they are not",
    "    accessed (otherwise the Redis behavior). Setting it to 1 reenables back the",
    "    default.",
    "QUICKLIST-PACKED-THRESHOLD <size>",
    "    Sets the threshold for elements to be inserted as plain vs packed nodes",
    "    Default value is 1GB, allows values up to 4GB. Setting to 0 restores to default.",
    "SLEEP <seconds>",
    "    Stop the server for <seconds>. Decimals allowed.",
    "STRINGMATCH-TEST",
    "    Run a fuzz tester against the stringmatchlen() function.",
    "LISTPACK <key>",
    "    Show low level info about the listpack encoding of <key>.",
    "QUICKLIST <key> [<0|1>]",
    "    Show low level info about the quicklist encoding of <key>.",
    "    The optional argument (0 by default) sets the level of detail",
    "PAUSE-CRON <0|1>",
    "    Stop periodic cron job processing.",
    "REPLYBUFFER PEAK-RESET-TIME <NEVER||RESET|time>",
    "    Sets the time (in milliseconds) to wait between client reply buffer peak resets.",
    "    In case NEVER is provided the last observed peak will never be reset",
    "    In case RESET is provided the peak reset time will be restored to the default value",
    "REPLYBUFFER RESIZING <0|1>",
    "    Enable or disable the reply buffer resize cron job",
    "HELP",
    "    Prints this help.",
    NULL,
};

/* DEBUG DIGEST: one fingerprint of the whole dataset (all zeros if empty). */
static void debug_digest(client *c) {
    unsigned char d[DIGEST_LEN];
    char hex[2 * DIGEST_LEN + 1];
    digest_dataset(d);
    digest_hex(d, hex);
    reply_status(c, hex);
}

/* DEBUG DIGEST-VALUE key ...: the fingerprint of each value (zeros for a
 * missing key). */
static void debug_digest_value(client *c) {
    reply_array(c, c->argc - 2);
    for (int j = 2; j < c->argc; j++) {
        unsigned char d[DIGEST_LEN] = {0};
        char hex[2 * DIGEST_LEN + 1];
        dnode *n = db_find(c->db, c->argv[j].p, c->argv[j].len) /* as Redis: no expiry check */;
        if (n) digest_value(n, d);
        digest_hex(d, hex);
        reply_status(c, hex);
    }
}

/* DEBUG POPULATE count [prefix] [size]: string keys prefix:0..count-1 with
 * values "value:N" (cut or zero-padded to size when given); keys that exist
 * are left alone. Redis's tests fill servers with it. */
static void debug_populate(client *c) {
    long long count, size = 0;
    if (!str_to_ll(c->argv[2].p, c->argv[2].len, &count) || count < 0) {
        reply_error(c, "ERR value is out of range, must be positive");
        return;
    }
    if (c->argc == 5 && (!str_to_ll(c->argv[4].p, c->argv[4].len, &size) || size < 0 || size > 512LL * 1024 * 1024)) {
        reply_error(c, "ERR value is out of range, must be positive");
        return;
    }
    char prefix[129] = "key";
    if (c->argc >= 4) span_cstr(prefix, sizeof prefix, c->argv[3]);
    char *val = size ? zcalloc((size_t)size) : NULL;
    for (long long j = 0; j < count; j++) {
        char key[160], num[40];
        int klen = snprintf(key, sizeof key, "%s:%lld", prefix, j);
        if (db_lookup(c->db, key, (size_t)klen)) continue;
        int nlen = snprintf(num, sizeof num, "value:%lld", j);
        if (!size) {
            db_set_string(c->db, key, (size_t)klen, num, (size_t)nlen, -1);
            continue;
        }
        memcpy(val, num, (size_t)(nlen < size ? nlen : size));
        db_set_string(c->db, key, (size_t)klen, val, (size_t)size, -1);
    }
    zfree(val);
    reply_ok(c);
}

/* DEBUG RELOAD: save the dataset, empty it and load the file back. */
/* DEBUG RELOAD [MERGE] [NOFLUSH] [NOSAVE] */
static void debug_reload(client *c) {
    unsigned opts = 0;
    for (int j = 2; j < c->argc; j++) {
        if (span_eq_nocase(c->argv[j], "merge")) opts |= RELOAD_MERGE;
        else if (span_eq_nocase(c->argv[j], "noflush")) opts |= RELOAD_NOFLUSH;
        else if (span_eq_nocase(c->argv[j], "nosave")) opts |= RELOAD_NOSAVE;
        else {
            reply_error(c, "ERR DEBUG RELOAD only supports the MERGE, NOFLUSH and NOSAVE options.");
            return;
        }
    }
    char err[1100];
    if (persist_debug_reload(opts, err, sizeof err) != 0) {
        reply_errorf(c, "ERR %s", err);
        return;
    }
    server_log(LOG_NOTICE_, "DB reloaded by DEBUG RELOAD");
    reply_ok(c);
}

/* DEBUG QUICKLIST-PACKED-THRESHOLD <size>: Redis stores list elements at
 * least this big as plain quicklist nodes. ferry's lists have no such
 * split (every element is stored the same way whatever its size), so the
 * value is checked as Redis checks it and changes nothing. */
static void debug_quicklist_packed_threshold(client *c) {
    char buf[64];
    unsigned long long sz;
    if (!config_parse_memory(span_cstr(buf, sizeof buf, c->argv[2]), &sz) || sz > (1ULL << 32) - (1ULL << 20)) {
        reply_error(c, "ERR argument must be a memory value bigger than 1 and smaller than 4gb");
        return;
    }
    reply_ok(c);
}

static void debug_loadaof(client *c) {
    char err[1100];
    if (aof_debug_loadaof(err, sizeof err) != 0) reply_error(c, err);
    else reply_ok(c);
}

/* ------------------------------------------------------- DEBUG PROTOCOL */

static void protocol_attrib(client *c) {
    static const char attr[] = "|1\r\n$14\r\nkey-popularity\r\n*2\r\n$7\r\nkey:123\r\n:90\r\n";
    if (c->resp >= 3) reply_raw(c, attr, sizeof attr - 1); /* RESP2 has no attributes: the reply alone */
    reply_bulk_cstr(c, "Some real reply following the attribute");
}

static void protocol_bignum(client *c) {
    static const char num[] = "1234567999999999999999999999999999999";
    if (c->resp < 3) {
        reply_bulk(c, num, sizeof num - 1);
        return;
    }
    reply_raw(c, "(", 1);
    reply_raw(c, num, sizeof num - 1);
    reply_raw(c, "\r\n", 2);
}

static void protocol_push(client *c) {
    if (c->resp < 3) {
        reply_error(c, "ERR RESP2 is not supported by this command");
        return;
    }
    reply_push(c, 2);
    reply_bulk_cstr(c, "server-cpu-usage");
    reply_int(c, 42);
    reply_bulk_cstr(c, "Some real reply following the push reply");
}

/* 0, 1, 2 as an array, a set, or a map of n -> (n is odd). */
static void protocol_aggregate(client *c, char kind) {
    if (kind == 'a') reply_array(c, 3);
    else if (kind == 's') reply_set(c, 3);
    else reply_map(c, 3);
    for (int j = 0; j < 3; j++) {
        reply_int(c, j);
        if (kind == 'm') reply_bool(c, j == 1);
    }
}

/* DEBUG PROTOCOL <type>: one sample reply of each RESP type, as client
 * libraries' tests expect it (RESP2 gets the RESP2 form of each). */
static void debug_protocol(client *c) {
    static const char verbatim[] = "This is a verbatim\nstring";
    span t = c->argv[2];
    if (span_eq_nocase(t, "string")) reply_bulk_cstr(c, "Hello World");
    else if (span_eq_nocase(t, "integer")) reply_int(c, 12345);
    else if (span_eq_nocase(t, "double")) reply_double(c, 3.141);
    else if (span_eq_nocase(t, "bignum")) protocol_bignum(c);
    else if (span_eq_nocase(t, "null")) reply_null(c);
    else if (span_eq_nocase(t, "array")) protocol_aggregate(c, 'a');
    else if (span_eq_nocase(t, "set")) protocol_aggregate(c, 's');
    else if (span_eq_nocase(t, "map")) protocol_aggregate(c, 'm');
    else if (span_eq_nocase(t, "attrib")) protocol_attrib(c);
    else if (span_eq_nocase(t, "push")) protocol_push(c);
    else if (span_eq_nocase(t, "verbatim")) reply_verbatim(c, verbatim, sizeof verbatim - 1, "txt");
    else if (span_eq_nocase(t, "true")) reply_bool(c, 1);
    else if (span_eq_nocase(t, "false")) reply_bool(c, 0);
    else
        reply_error(c, "ERR Wrong protocol type name. Please use one of the following: "
                       "string|integer|double|bignum|null|array|set|map|attrib|push|verbatim|true|false");
}

/* ------------------------------------------- DEBUG REPLYBUFFER, LISTPACK */

/* DEBUG REPLYBUFFER PEAK-RESET-TIME <never|reset|ms> | RESIZING <0|1>:
 * the knobs of the cron that sizes a client's output ring to its recent
 * peak (outbuf.c). RESIZING takes anything, as Redis's atoi. */
static void debug_replybuffer(client *c) {
    span what = c->argv[2], arg = c->argv[3];
    long long ms;
    if (span_eq_nocase(what, "peak-reset-time")) {
        if (span_eq_nocase(arg, "never")) ms = -1;
        else if (span_eq_nocase(arg, "reset")) ms = OUTBUF_PEAK_RESET_DEFAULT_MS;
        else if (!str_to_ll(arg.p, arg.len, &ms)) {
            reply_err_notint(c);
            return;
        }
        outbuf_set_peak_reset_time(ms);
    } else {
        char buf[32];
        size_t n = arg.len < sizeof buf - 1 ? arg.len : sizeof buf - 1;
        memcpy(buf, arg.p, n);
        buf[n] = '\0';
        outbuf_set_resizing(atoi(buf) != 0);
    }
    reply_ok(c);
}

static int is_replybuffer_knob(span s) { return span_eq_nocase(s, "peak-reset-time") || span_eq_nocase(s, "resizing"); }

/* DEBUG LISTPACK key / DEBUG QUICKLIST key [0|1]: Redis dumps the encoded
 * structure on its standard output. ferry prints one summary line of the
 * value (its encoding, entries' memory) there and replies as Redis does. */
static void debug_dump_encoding(client *c, const char *enc, const char *Enc) {
    dnode *n = dict_find(&c->db->keys, c->argv[2].p, c->argv[2].len);
    if (!n) {
        reply_error(c, "ERR no such key");
        return;
    }
    if (n->type == OBJ_STRING || strcmp(obj_enc_name(n), enc) != 0) {
        reply_errorf(c, "ERR Not a %s encoded object.", enc);
        return;
    }
    char key[129];
    printf("DEBUG %s: key '%s' encoding %s, %zu bytes\n", Enc, span_cstr(key, sizeof key, c->argv[2]), enc,
           db_node_memory(n));
    fflush(stdout);
    char msg[64];
    snprintf(msg, sizeof msg, "%s structure printed on stdout", Enc);
    reply_status(c, msg);
}

/* DEBUG STRINGMATCH-TEST: glob_match (KEYS, SCAN MATCH, PSUBSCRIBE ...) fed
 * random patterns and strings drawn from a small alphabet rich in its
 * special characters; it must return for each without crashing. Uses its
 * own generator state so RANDOMKEY's sequence is not disturbed. */
static uint64_t xorshift64(uint64_t *x) {
    *x ^= *x << 13;
    *x ^= *x >> 7;
    *x ^= *x << 17;
    return *x;
}

static void debug_stringmatch_test(client *c) {
    static const char alphabet[] = "*?[]^-\\ab";
    uint64_t x = 0x9e3779b97f4a7c15ULL;
    char pat[32], str[32];
    for (int i = 0; i < 200000; i++) {
        size_t plen = xorshift64(&x) % sizeof pat, slen = xorshift64(&x) % sizeof str;
        for (size_t j = 0; j < plen; j++) pat[j] = alphabet[xorshift64(&x) % (sizeof alphabet - 1)];
        for (size_t j = 0; j < slen; j++) str[j] = alphabet[xorshift64(&x) % (sizeof alphabet - 1)];
        (void)glob_match(pat, plen, str, slen, (int)(x & 1));
    }
    reply_status(c, "Apparently Redis did not crash: test passed");
}

static void debug_log(client *c) {
    char msg[1024];
    server_log(LOG_WARNING_, "DEBUG LOG: %s", span_cstr(msg, sizeof msg, c->argv[2]));
    reply_ok(c);
}

/* DEBUG CONFIG-REWRITE-FORCE-ALL: CONFIG REWRITE writing every directive,
 * default values included (Redis's test that the result parses again). */
static void debug_config_rewrite_force_all(client *c) {
    char err[300];
    const char *prefix = "Rewriting config file: ";
    if (!srv.cfg.config_file) /* Redis reports the errno its rewrite leaves behind */
        reply_error(c, "ERR CONFIG-REWRITE-FORCE-ALL failed: Bad address");
    else if (config_rewrite_file(1, err, sizeof err) == 0)
        reply_ok(c);
    else
        reply_errorf(c, "ERR CONFIG-REWRITE-FORCE-ALL failed: %s",
                     strncmp(err, prefix, strlen(prefix)) ? err : err + strlen(prefix));
}

void (*debug_replicate)(int argc, const span *argv);
int (*debug_cluster)(client *c);

void cmd_debug(client *c) {
    if (!debug_command_allowed(c)) {
        reply_error(c, "ERR DEBUG command not allowed. If the enable-debug-command option is set to \"local\", "
                       "you can run it from a local connection, otherwise you need to set this option in the "
                       "configuration file, and then restart the server.");
        return;
    }
    span sub = c->argv[1];
    if (c->argc == 2 && span_eq_nocase(sub, "help")) reply_help(c, debug_help_lines);
    else if (c->argc == 3 && span_eq_nocase(sub, "sleep")) debug_sleep(c);
    else if (c->argc == 3 && span_eq_nocase(sub, "set-active-expire")) debug_set_active_expire(c);
    else if (c->argc == 3 && span_eq_nocase(sub, "pause-cron")) debug_pause_cron(c);
    else if (c->argc == 3 && span_eq_nocase(sub, "object")) debug_object(c);
    else if (c->argc == 3 && span_eq_nocase(sub, "error")) debug_error(c);
    else if (span_eq_nocase(sub, "reload")) debug_reload(c);
    else if (c->argc == 2 && span_eq_nocase(sub, "loadaof")) debug_loadaof(c);
    else if (c->argc == 3 && span_eq_nocase(sub, "quicklist-packed-threshold")) debug_quicklist_packed_threshold(c);
    else if (c->argc >= 3 && c->argc <= 5 && span_eq_nocase(sub, "populate")) debug_populate(c);
    else if (c->argc == 2 && span_eq_nocase(sub, "digest")) debug_digest(c);
    else if (c->argc >= 2 && span_eq_nocase(sub, "digest-value")) debug_digest_value(c);
    else if (c->argc == 3 && span_eq_nocase(sub, "protocol")) debug_protocol(c);
    else if (c->argc == 4 && span_eq_nocase(sub, "replybuffer") && is_replybuffer_knob(c->argv[2]))
        debug_replybuffer(c);
    else if (c->argc == 3 && span_eq_nocase(sub, "listpack")) debug_dump_encoding(c, "listpack", "Listpack");
    else if ((c->argc == 3 || c->argc == 4) && span_eq_nocase(sub, "quicklist"))
        debug_dump_encoding(c, "quicklist", "Quicklist");
    else if (c->argc == 3 && span_eq_nocase(sub, "log")) debug_log(c);
    else if (c->argc == 2 && span_eq_nocase(sub, "stringmatch-test")) debug_stringmatch_test(c);
    else if (c->argc == 2 && span_eq_nocase(sub, "config-rewrite-force-all")) debug_config_rewrite_force_all(c);
    else if (c->argc == 3 && span_eq_nocase(sub, "set-disable-deny-scripts")) { /* hidden, as in Redis */
        srv.script_disable_deny = atoi(span_cstr((char[32]){0}, 32, c->argv[2])) != 0;
        reply_ok(c);
    }
    else if (c->argc >= 3 && span_eq_nocase(sub, "replicate")) {
        if (debug_replicate) debug_replicate(c->argc - 2, c->argv + 2);
        reply_ok(c);
    }
    else if (c->argc == 2 && span_eq_nocase(sub, "change-repl-id")) {
        info_change_replid();
        reply_ok(c);
    } else if (!debug_cluster || !debug_cluster(c)) {
        char buf[129];
        reply_errorf(c, "ERR unknown subcommand or wrong number of arguments for '%s'. Try DEBUG HELP.",
                     span_cstr(buf, sizeof buf, sub));
    }
}
