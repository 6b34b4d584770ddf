/* test_config.c - Criterion unit tests for src/server/config.c, src/server/config_load.c
 * and src/server/config_cmd.c.
 *
 * The loader is tested through config_load_string() (config text -> error
 * text instead of exit), config_load() with argv arrays (in-process when it
 * succeeds, in a forked child when it must exit), and CONFIG GET/SET/
 * REWRITE through a fake client whose reply bytes are read back from its
 * output ring. Expected values and error texts were taken from a real
 * redis-server 7.0.15 (CONFIG GET / CONFIG SET / fatal config errors).
 */
#include <criterion/criterion.h>
#include "registry.h"

#include <fcntl.h>
#include <stdarg.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "client.h"
#include "config.h"
#include "config_internal.h" /* the loader's testable core and helpers */
#include "reply.h"
#include "ring.h"
#include "server.h"
#include "zmalloc.h"

/* no "ignored directive" warnings in test output */
static void quiet(void) { config_sandbox = 2; }
TestSuite(config, .init = quiet);

static char err[8192];

/* Loads text over the defaults; asserts success. */
static void load_ok(ferry_config *cfg, const char *text) {
    config_defaults(cfg);
    int rc = config_load_string(cfg, text, err, sizeof err);
    cr_assert_eq(rc, 0, "config should load: %s\n--- error:\n%s", text, err);
}

/* Loads text over the defaults; asserts failure with `want` in the error. */
static void load_err(const char *text, const char *want) {
    ferry_config cfg;
    config_defaults(&cfg);
    int rc = config_load_string(&cfg, text, err, sizeof err);
    cr_assert_eq(rc, -1, "config should fail: %s", text);
    cr_assert(strstr(err, want), "error for [%s] should contain [%s], got:\n%s", text, want, err);
    config_free(&cfg);
}

static char *get(ferry_config *cfg, const char *name) {
    int i = config_lookup(name, strlen(name));
    cr_assert(i >= 0, "no config %s", name);
    static char buf[4096];
    char *v = config_get(cfg, i);
    snprintf(buf, sizeof buf, "%s", v);
    zfree(v);
    return buf;
}

static void write_file(const char *path, const char *text) {
    FILE *f = fopen(path, "w");
    cr_assert(f, "can't write %s", path);
    fputs(text, f);
    fclose(f);
}

/* ------------------------------------------------------------ defaults */

Test(config, defaults) {
    ferry_config c;
    config_defaults(&c);
    cr_assert_eq(c.port, 6379);
    cr_assert_eq(c.bind_count, 2);
    cr_assert_str_eq(c.bind[0], "*");
    cr_assert_str_eq(c.bind[1], "-::*");
    cr_assert_eq(c.protected_mode, 1);
    cr_assert_null(c.requirepass);
    cr_assert_eq(c.maxclients, 10000);
    cr_assert_eq(c.timeout, 0);
    cr_assert_eq(c.tcp_keepalive, 300);
    cr_assert_eq(c.tcp_backlog, 511);
    cr_assert_eq(c.databases, 16);
    cr_assert_eq(c.daemonize, 0);
    cr_assert_null(c.pidfile);
    cr_assert_str_eq(c.logfile, "");
    cr_assert_eq(c.loglevel, LOG_NOTICE_);
    cr_assert_str_eq(c.dir, ".");
    cr_assert_eq(c.hz, 10);
    cr_assert_eq(c.proto_max_bulk_len, 512LL * 1024 * 1024);
    cr_assert_eq(c.client_query_buffer_limit, 1024LL * 1024 * 1024);
    cr_assert_eq(c.cob[COB_NORMAL].hard, 0);
    cr_assert_eq(c.cob[COB_REPLICA].hard, 256ULL << 20);
    cr_assert_eq(c.cob[COB_REPLICA].soft, 64ULL << 20);
    cr_assert_eq(c.cob[COB_REPLICA].soft_seconds, 60);
    cr_assert_eq(c.cob[COB_PUBSUB].hard, 32ULL << 20);
    cr_assert_eq(c.cob[COB_PUBSUB].soft, 8ULL << 20);
    cr_assert_eq(c.cob[COB_PUBSUB].soft_seconds, 60);
    cr_assert_eq(c.enable_debug_command, DEBUG_CMD_NO);
    cr_assert_eq(c.enable_protected_configs, DEBUG_CMD_NO);
    cr_assert_eq(c.metrics_port, 0);
    cr_assert_eq(c.maxmemory, 0);
    cr_assert_eq(c.maxmemory_policy, 0);
    cr_assert_str_eq(config_maxmemory_policy_name(c.maxmemory_policy), "noeviction");
    cr_assert_eq(c.maxmemory_samples, 5);
    cr_assert_eq(c.slowlog_log_slower_than, 10000);
    cr_assert_eq(c.slowlog_max_len, 128);
    cr_assert_eq(c.latency_monitor_threshold, 0);
    cr_assert_eq(c.latency_tracking, 1);
    cr_assert_eq(c.active_expire_effort, 1);
    cr_assert_eq(c.lazyfree_lazy_user_del, 0);
    cr_assert_null(c.config_file);
    /* what redis-benchmark probes */
    cr_assert_str_eq(get(&c, "save"), "3600 1 300 100 60 10000");
    cr_assert_str_eq(get(&c, "appendonly"), "no");
    cr_assert_str_eq(get(&c, "client-output-buffer-limit"),
                     "normal 0 0 0 slave 268435456 67108864 60 pubsub 33554432 8388608 60");
    cr_assert_str_eq(get(&c, "bind"), "* -::*");
    config_free(&c);
}

/* ------------------------------------------------------------- parsing */

static void split_is(const char *line, int n, const char *const *want) {
    int argc;
    char **argv;
    cr_assert_eq(config_split_args(line, &argc, &argv), 0, "split [%s]", line);
    cr_assert_eq(argc, n, "argc of [%s]: %d", line, argc);
    for (int i = 0; i < n; i++) cr_assert_str_eq(argv[i], want[i], "arg %d of [%s]", i, line);
    config_free_args(argc, argv);
}

Test(config, split_args_like_sdssplitargs) {
    split_is("port 7000", 2, (const char *[]){"port", "7000"});
    split_is("  a\tb  ", 2, (const char *[]){"a", "b"});
    split_is("save \"\"", 2, (const char *[]){"save", ""});
    split_is("x \"a b\" 'c d'", 3, (const char *[]){"x", "a b", "c d"});
    split_is("x \"\\x41\\n\\t\\\"\"", 2, (const char *[]){"x", "A\n\t\""});
    split_is("x 'it\\'s'", 2, (const char *[]){"x", "it's"});
    split_is("x ab\"cd\"", 2, (const char *[]){"x", "abcd"});
    split_is("", 0, NULL);
    int argc;
    char **argv;
    cr_assert_eq(config_split_args("x \"abc", &argc, &argv), -1);
    cr_assert_eq(config_split_args("x \"abc\"d", &argc, &argv), -1);
    cr_assert_eq(config_split_args("x 'abc", &argc, &argv), -1);
    cr_assert_eq(config_split_args("x \"\\x00\"", &argc, &argv), -1); /* no NUL bytes in values */
    /* a closing quote ends the token even before \v or \f (Redis 7.0.15:
     * `requirepass "abc"\vdef` is "wrong number of arguments") */
    split_is("x \"a\"\vb 'c'\fd", 5, (const char *[]){"x", "a", "b", "c", "d"});
    split_is("x \"a\"\v", 2, (const char *[]){"x", "a"});
    /* many tokens (the splitter hands them over in batches) */
    split_is("a b c d e f g h i j k l m n o p q r s t", 20,
             (const char *[]){"a", "b", "c", "d", "e", "f", "g", "h", "i", "j",
                              "k", "l", "m", "n", "o", "p", "q", "r", "s", "t"});
}

Test(config, basic_file_text) {
    ferry_config c;
    load_ok(&c, "# comment\n\n   # indented comment\nPORT 7000\r\n  bind 0.0.0.0 ::1  \n"
                "requirepass \"s3 cret\"\nloglevel WARNING\nmaxmemory-policy allkeys-lru\n"
                "protected-mode no\ntimeout 30\ndatabases 4\nhz 100"); /* no final newline */
    cr_assert_eq(c.port, 7000);
    cr_assert_eq(c.bind_count, 2);
    cr_assert_str_eq(c.bind[0], "0.0.0.0");
    cr_assert_str_eq(c.bind[1], "::1");
    cr_assert_str_eq(c.requirepass, "s3 cret");
    cr_assert_eq(c.loglevel, LOG_WARNING_);
    cr_assert_eq(c.maxmemory_policy, 1);
    cr_assert_str_eq(config_maxmemory_policy_name(c.maxmemory_policy), "allkeys-lru");
    cr_assert_eq(c.protected_mode, 0);
    cr_assert_eq(c.timeout, 30);
    cr_assert_eq(c.databases, 4);
    cr_assert_eq(c.hz, 100);
    config_free(&c);
}

Test(config, last_value_wins) {
    ferry_config c;
    load_ok(&c, "port 1\nport 2\nbind 1.2.3.4\nbind 5.6.7.8 9.9.9.9\nrequirepass a\nrequirepass \"\"\n");
    cr_assert_eq(c.port, 2);
    cr_assert_eq(c.bind_count, 2);
    cr_assert_str_eq(c.bind[0], "5.6.7.8");
    cr_assert_null(c.requirepass);
    config_free(&c);
}

/* requirepass and masterauth keep their bytes whole, NULs included
 * (Redis 7.0.15 loads `requirepass "abc\x00def"` as 7 bytes); a "\x00"
 * anywhere else is still refused. */
Test(config, binary_passwords) {
    ferry_config c;
    load_ok(&c, "requirepass \"abc\\x00def\"\nmasterauth \"\\x00a\\\\0\"\n");
    cr_assert_eq(c.requirepass_len, 7);
    cr_assert(!memcmp(c.requirepass, "abc\0def", 8));
    cr_assert_eq(c.masterauth_len, 4);
    cr_assert(!memcmp(c.masterauth, "\0a\\0", 5));
    char *v = config_get(&c, config_lookup("masterauth", 10));
    cr_assert_str_eq(v, "\\0a\\\\0", "escaped canonical text");
    int isdef;
    char *lines = config_rewrite_lines(&c, config_lookup("requirepass", 11), &isdef);
    cr_assert_str_eq(lines, "requirepass \"abc\\x00def\"\n", "written as Redis writes it");
    cr_assert_eq(isdef, 0);
    zfree(lines);
    zfree(v);
    config_free(&c);
    load_ok(&c, "requirepass \"\\x00\"\nmasterauth \"\"\n");
    cr_assert_eq(c.requirepass_len, 1, "a lone NUL is a password");
    cr_assert_null(c.masterauth);
    config_free(&c);
    load_err("dbfilename \"a\\x00b\"", "Unbalanced quotes in configuration line");
    load_err("requirepass a \"\\x00\"", "Unbalanced quotes in configuration line");
    load_err("user bob on \">a\\x00b\"", "Unbalanced quotes in configuration line");
}

/* The escape is decoded leniently and re-encoded to one spelling. */
Test(config, binary_canonical_text) {
    char s[] = "a\\0b\\\\c\\x\\";
    size_t n = config_bin_decode(s);
    cr_assert_eq(n, 8);
    cr_assert(!memcmp(s, "a\0b\\c\\x\\", 9));
    char *e = config_bin_encode(s, n);
    cr_assert_str_eq(e, "a\\0b\\\\c\\\\x\\\\");
    char *again = config_bin_canon("a\\0b\\\\c\\x\\");
    cr_assert_str_eq(again, e);
    zfree(e);
    zfree(again);
}

Test(config, memory_units) {
    ferry_config c;
    struct { const char *in; unsigned long long want; } t[] = {
        {"0", 0}, {"1b", 1}, {"1B", 1}, {"1k", 1000}, {"1K", 1000}, {"1kb", 1024}, {"1kB", 1024},
        {"1m", 1000000}, {"1mb", 1048576}, {"1g", 1000000000}, {"1gb", 1073741824}, {"16GB", 16ULL << 30},
        {"01", 1}, {"kb", 0}, {"18446744073709551615", ULLONG_MAX},
    };
    for (size_t i = 0; i < sizeof t / sizeof t[0]; i++) {
        char text[64];
        snprintf(text, sizeof text, "maxmemory %s", t[i].in);
        load_ok(&c, text);
        cr_assert_eq(c.maxmemory, t[i].want, "maxmemory %s -> %llu", t[i].in, c.maxmemory);
        config_free(&c);
    }
    load_ok(&c, "proto-max-bulk-len 1gb\nclient-query-buffer-limit 2mb\nclient-output-buffer-limit pubsub 1mb 1kb 5");
    cr_assert_eq(c.proto_max_bulk_len, 1LL << 30);
    cr_assert_eq(c.client_query_buffer_limit, 2LL << 20);
    cr_assert_eq(c.cob[COB_PUBSUB].hard, 1ULL << 20);
    cr_assert_eq(c.cob[COB_PUBSUB].soft, 1024);
    cr_assert_eq(c.cob[COB_PUBSUB].soft_seconds, 5);
    cr_assert_eq(c.cob[COB_REPLICA].hard, 256ULL << 20, "other classes untouched");
    cr_assert_str_eq(get(&c, "proto-max-bulk-len"), "1073741824");
    config_free(&c);
    const char *bad[] = {"maxmemory 1.5gb", "maxmemory -1", "maxmemory +1", "maxmemory 1x", "maxmemory 1kbb",
                         "maxmemory 18446744073709551616", "maxmemory 99999999999gb", "maxmemory 0x10"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) load_err(bad[i], "argument must be a memory value");
    load_err("proto-max-bulk-len 1k", "argument must be between 1048576 and 9223372036854775807 inclusive");
    load_err("client-query-buffer-limit 100", "argument must be between 1048576 and 9223372036854775807 inclusive");
}

Test(config, numeric_ranges) {
    load_err("port 65536", "argument must be between 0 and 65535 inclusive");
    load_err("port -1", "argument must be between 0 and 65535 inclusive");
    load_err("port 1x", "argument couldn't be parsed into an integer");
    load_err("port 007", "argument couldn't be parsed into an integer");
    load_err("port 99999999999999999999", "argument couldn't be parsed into an integer");
    load_err("databases 0", "argument must be between 1 and 2147483647 inclusive");
    load_err("databases 2147483648", "argument must be between 1 and 2147483647 inclusive");
    load_err("maxclients 0", "argument must be between 1 and 4294967295 inclusive");
    load_err("timeout -1", "argument must be between 0 and 2147483647 inclusive");
    load_err("active-expire-effort 11", "argument must be between 1 and 10 inclusive");
    load_err("slowlog-log-slower-than -2", "argument must be between -1 and 9223372036854775807 inclusive");
    load_err("maxmemory-samples 0", "argument must be between 1 and 2147483647 inclusive");
    ferry_config c;
    load_ok(&c, "hz 1000"); /* Redis clamps hz to 1..500 */
    cr_assert_eq(c.hz, 500);
    config_free(&c);
    load_ok(&c, "hz 0");
    cr_assert_eq(c.hz, 1);
    config_free(&c);
    load_ok(&c, "port 0\nslowlog-log-slower-than -1\nmaxclients 4294967295\ntcp-backlog 0\nmetrics-port 9121");
    cr_assert_eq(c.port, 0);
    cr_assert_eq(c.slowlog_log_slower_than, -1);
    cr_assert_eq(c.maxclients, 4294967295LL);
    cr_assert_eq(c.metrics_port, 9121);
    config_free(&c);
}

Test(config, bools_and_enums) {
    ferry_config c;
    load_ok(&c, "daemonize YES\nlatency-tracking No\nlazyfree-lazy-user-del yes\nenable-debug-command local\n"
                "enable-protected-configs yes\nloglevel nothing\noom-score-adj relative\nappendfsync ALWAYS");
    cr_assert_eq(c.daemonize, 1);
    cr_assert_eq(c.latency_tracking, 0);
    cr_assert_eq(c.lazyfree_lazy_user_del, 1);
    cr_assert_eq(c.enable_debug_command, DEBUG_CMD_LOCAL);
    cr_assert_eq(c.enable_protected_configs, DEBUG_CMD_YES);
    cr_assert_eq(c.loglevel, LOG_NOTHING_);
    cr_assert_str_eq(get(&c, "oom-score-adj"), "yes"); /* relative is an alias of yes */
    cr_assert_str_eq(get(&c, "appendfsync"), "always");
    config_free(&c);
    load_err("daemonize maybe", "argument must be 'yes' or 'no'");
    load_err("loglevel loud", "argument(s) must be one of the following: debug, verbose, notice, warning");
    load_err("maxmemory-policy lru",
             "argument(s) must be one of the following: volatile-lru, volatile-lfu, volatile-random, volatile-ttl, "
             "allkeys-lru, allkeys-lfu, allkeys-random, noeviction");
    load_err("enable-debug-command maybe", "argument(s) must be one of the following: no, yes, local");
}

Test(config, bad_lines_redis_style) {
    load_err("port 7000\nfoo bar\n",
             "Reading the configuration file, at line 2\n>>> 'foo bar'\nBad directive or wrong number of arguments\n"
             "(<string>:2)");
    load_err("port 1 2", ">>> 'port 1 2'\nwrong number of arguments");
    load_err("port", ">>> 'port'\nwrong number of arguments");
    load_err("port \"abc", ">>> 'port \"abc'\nUnbalanced quotes in configuration line");
    load_err("requirepass \"abc\"\vdef", ">>> 'requirepass \"abc\"\vdef'\nwrong number of arguments");
    load_err("  port 70000  ", ">>> 'port 70000'\nargument must be between 0 and 65535 inclusive");
    load_err("include", "Bad directive or wrong number of arguments");
    load_err("bind 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17", "Too many bind addresses specified.");
    load_err("save 100", "Invalid save parameters");
    load_err("save 0 5", "Invalid save parameters");
    load_err("client-output-buffer-limit normal 1 2", "Wrong number of arguments in buffer limit configuration.");
    load_err("client-output-buffer-limit master 1 2 3", "Invalid client class specified in buffer limit configuration.");
    load_err("client-output-buffer-limit normal 1 2 -1",
             "Error in hard, soft or soft_seconds setting in buffer limit configuration.");
    load_err("notify-keyspace-events", "wrong number of arguments");
    load_err("notify-keyspace-events Kq", "Invalid event class character. Use 'Ag$lshzxeKEtmdn'.");
    load_err("sentinel monitor x", "sentinel directive while not in sentinel mode");
    load_err("rename-command CONFIG", "Bad directive or wrong number of arguments");
    load_err("loadmodule /x.so", "modules are not supported by ferry");
    load_err("user alice on nonsense", "Error in user declaration 'alice': Syntax error");
    load_err("user", "wrong number of arguments");
    load_err("dir \"\"", "No such file or directory");
}

Test(config, appendonly_and_its_policy) {
    ferry_config c;
    load_ok(&c, "appendonly yes\nappendfsync always\nappenddirname aofs");
    cr_assert_str_eq(get(&c, "appendonly"), "yes");
    cr_assert_str_eq(get(&c, "appendfsync"), "always");
    cr_assert_str_eq(get(&c, "appenddirname"), "aofs");
    config_free(&c);
    load_err("appendfsync sometimes", "argument(s) must be one of the following: everysec, always, no");
}

Test(config, ignored_directives_keep_their_values) {
    ferry_config c;
    load_ok(&c, "save \"\"\nhash-max-ziplist-entries 1000\nslave-priority 5\nlist-max-ziplist-entries 5\n"
                "user default on nopass ~* &* +@all\nrepl-backlog-size 1mb\ntls-port 0\nreplicaof no one\n"
                "notify-keyspace-events KEA\nlatency-tracking-info-percentiles 50.0 99.5 100\n"
                "shutdown-on-sigterm now nosave\nmaxmemory-clients 10%\nunixsocketperm 700\n"
                "oom-score-adj-values -5 200 800\n");
    cr_assert_str_eq(get(&c, "save"), "");
    cr_assert_str_eq(get(&c, "hash-max-listpack-entries"), "1000"); /* alias shares the value */
    cr_assert_str_eq(get(&c, "hash-max-ziplist-entries"), "1000");
    cr_assert_str_eq(get(&c, "replica-priority"), "5");
    cr_assert_str_eq(get(&c, "repl-backlog-size"), "1048576");
    cr_assert_str_eq(get(&c, "replicaof"), "");
    cr_assert_str_eq(get(&c, "notify-keyspace-events"), "AKE");
    cr_assert_str_eq(get(&c, "latency-tracking-info-percentiles"), "50 99.5 100");
    cr_assert_str_eq(get(&c, "shutdown-on-sigterm"), "nosave now");
    cr_assert_str_eq(get(&c, "maxmemory-clients"), "10%");
    cr_assert_str_eq(get(&c, "unixsocketperm"), "700");
    cr_assert_str_eq(get(&c, "oom-score-adj-values"), "-5 200 800");
    config_free(&c);
    load_ok(&c, "replicaof 10.0.0.1 6380");
    cr_assert_str_eq(get(&c, "slaveof"), "10.0.0.1 6380");
    config_free(&c);
}

Test(config, save_lines_accumulate) {
    ferry_config c;
    load_ok(&c, "save 100 1\nsave 200 2\n");
    cr_assert_str_eq(get(&c, "save"), "100 1 200 2");
    config_free(&c);
    load_ok(&c, "save 100 1\nsave \"\"\nsave 200 2\n");
    cr_assert_str_eq(get(&c, "save"), "200 2");
    config_free(&c);
    load_ok(&c, "save 0100 1");
    cr_assert_str_eq(get(&c, "save"), "100 1");
    config_free(&c);
}

/* Value canonicalisation as CONFIG SET then GET show it, checked against
 * redis (parsed, applied, read back). */
static void canon_is(const char *name, const char *in, const char *want) {
    ferry_config c;
    config_defaults(&c);
    char *out = NULL;
    char why[512];
    int i = config_lookup(name, strlen(name));
    int rc = config_parse(&c, i, in, &out, why, sizeof why);
    cr_assert_eq(rc, 0, "%s [%s] should parse: %s", name, in, why);
    config_apply(&c, i, out);
    cr_assert_str_eq(get(&c, name), want, "%s [%s]", name, in);
    zfree(out);
    config_free(&c);
}

static void canon_err(const char *name, const char *in, const char *want) {
    ferry_config c;
    config_defaults(&c);
    char *out = NULL;
    char why[512];
    int rc = config_parse(&c, config_lookup(name, strlen(name)), in, &out, why, sizeof why);
    cr_assert_eq(rc, -1, "%s [%s] should fail", name, in);
    cr_assert_str_eq(why, want, "%s [%s]", name, in);
    config_free(&c);
}

Test(config, canonical_values_match_redis) {
    canon_is("notify-keyspace-events", "Kg", "gK");
    canon_is("notify-keyspace-events", "Ag$lshzxetdmnKE", "AKEm");
    canon_is("notify-keyspace-events", "dtexzhsl$", "$lshzxetd");
    canon_is("notify-keyspace-events", "ndtm", "tdnm");
    canon_is("notify-keyspace-events", "An", "A");
    canon_is("notify-keyspace-events", "", "");
    canon_is("latency-tracking-info-percentiles", "1e1 0.123456789", "10 0.123457");
    canon_is("latency-tracking-info-percentiles", "", "");
    canon_err("latency-tracking-info-percentiles", "101",
              "latency-tracking-info-percentiles parameters should sit between [0.0,100.0]");
    canon_err("latency-tracking-info-percentiles", "50 ", "Invalid latency-tracking-info-percentiles parameters");
    canon_err("latency-tracking-info-percentiles", "nan", "Invalid latency-tracking-info-percentiles parameters");
    canon_is("shutdown-on-sigint", "default now", "now");
    canon_is("shutdown-on-sigint", "force now", "now force");
    canon_err("shutdown-on-sigint", "save nosave", "shutdown options SAVE and NOSAVE can't be used simultaneously");
    canon_err("shutdown-on-sigint", "", "argument(s) must be one of the following: default, save, nosave, now, force");
    canon_is("maxmemory-clients", "0%", "0");
    canon_is("maxmemory-clients", "1gb", "1073741824");
    canon_err("maxmemory-clients", "101%", "percentage argument must be less or equal to 100");
    canon_err("maxmemory-clients", "5.5%", "argument must be a memory or percent value");
    canon_is("maxmemory", "", "0");
    canon_is("client-output-buffer-limit", "replica 1 2 3", "normal 0 0 0 slave 1 2 3 pubsub 33554432 8388608 60");
    canon_is("client-output-buffer-limit", "PUBSUB 1 2 3 normal 1mb 0 0",
             "normal 1048576 0 0 slave 268435456 67108864 60 pubsub 1 2 3");
    canon_is("client-output-buffer-limit", "", "normal 0 0 0 slave 268435456 67108864 60 pubsub 33554432 8388608 60");
    canon_err("save", "100 1 200", "Invalid save parameters");
    canon_err("save", "100  1", "Invalid save parameters");
    canon_is("save", "100 0", "100 0");
    canon_err("oom-score-adj-values", "0 2001 3", "Invalid oom-score-adj-values, elements must be between -2000 and 2000.");
    canon_err("oom-score-adj-values", "1 2", "wrong number of arguments");
    canon_err("dbfilename", "a/b", "dbfilename can't be a path, just a filename");
    canon_err("proc-title-template", "{bad}", "template format is invalid or contains unknown variables");
    canon_is("proc-title-template", "{title} {listen-addr} {server-mode}", "{title} {listen-addr} {server-mode}");
    canon_is("protected-mode", "YES", "yes");
    canon_is("loglevel", "Debug", "debug");
    canon_is("oom-score-adj", "absolute", "absolute");
}

/* -------------------------------------------------------------- include */

Test(config, include_files_and_globs) {
    char dir[] = "/tmp/ferry-cfg-XXXXXX";
    cr_assert(mkdtemp(dir));
    char a[64], b[64], g1[64], g2[64], text[512];
    snprintf(a, sizeof a, "%s/a.conf", dir);
    snprintf(b, sizeof b, "%s/b.conf", dir);
    snprintf(g1, sizeof g1, "%s/x-1.conf", dir);
    snprintf(g2, sizeof g2, "%s/x-2.conf", dir);
    write_file(b, "port 7001\ntimeout 5\n");
    write_file(g1, "hz 20\n");
    write_file(g2, "hz 30\n");
    snprintf(text, sizeof text, "include %s\ntimeout 6\n", b);
    write_file(a, text);
    ferry_config c;
    snprintf(text, sizeof text, "port 1\ninclude %s\ninclude %s/x-*.conf\ninclude %s/none-*.conf\n", a, dir, dir);
    load_ok(&c, text);
    cr_assert_eq(c.port, 7001, "include is processed in place");
    cr_assert_eq(c.timeout, 6);
    cr_assert_eq(c.hz, 30, "glob matches load in order");
    config_free(&c);
    /* an error inside an included file names that file and its line */
    write_file(b, "port 7001\nbogus yes\n");
    snprintf(text, sizeof text, "include %s", a);
    char want[256];
    snprintf(want, sizeof want, "at line 2\n>>> 'bogus yes'\nBad directive or wrong number of arguments\n(%s:2)", b);
    load_err(text, want);
    snprintf(text, sizeof text, "include %s/missing.conf", dir);
    load_err(text, "Fatal error, can't open config file");
    /* self-inclusion stops */
    snprintf(text, sizeof text, "include %s\n", a);
    write_file(a, text);
    load_err(text, "include nesting is too deep");
    unlink(a), unlink(b), unlink(g1), unlink(g2), rmdir(dir);
}

/* --------------------------------------------------------- command line */

Test(config, command_line_overrides_file) {
    char path[] = "/tmp/ferry-cfg-XXXXXX";
    int fd = mkstemp(path);
    cr_assert(fd >= 0);
    const char *text = "port 7000\nsave 100 1\ntimeout 9\n";
    cr_assert_eq(write(fd, text, strlen(text)), (ssize_t)strlen(text));
    close(fd);
    char *argv[] = {"ferry-server", path, "--port", "7010", "--bind", "127.0.0.1", "::1", "--save", "200", "2",
                    "--client-output-buffer-limit", "normal", "1mb", "0", "0", "--requirepass", "a b\"c",
                    "--maxmemory 10mb", "--appendonly", "no", "--save", NULL};
    ferry_config c;
    config_load(&c, (int)(sizeof argv / sizeof argv[0]) - 1, argv);
    cr_assert_eq(c.port, 7010);
    cr_assert_eq(c.timeout, 9);
    cr_assert_eq(c.bind_count, 2);
    cr_assert_str_eq(c.bind[1], "::1");
    cr_assert_str_eq(c.requirepass, "a b\"c");
    cr_assert_eq(c.maxmemory, 10ULL << 20);
    cr_assert_eq(c.cob[COB_NORMAL].hard, 1ULL << 20);
    cr_assert_str_eq(get(&c, "save"), "", "a trailing --save means save \"\"");
    char *abs = realpath(path, NULL);
    cr_assert_str_eq(c.config_file, abs, "config_file is absolute");
    free(abs);
    config_free(&c);
    char *argv2[] = {"ferry-server", "--save", "--port", "7011", "--requirepass", "--foo", NULL};
    config_load(&c, 6, argv2);
    cr_assert_str_eq(get(&c, "save"), "");
    cr_assert_eq(c.port, 7011);
    cr_assert_str_eq(c.requirepass, "--foo", "a name still waiting for a value takes --foo as value");
    cr_assert_null(c.config_file);
    config_free(&c);
    unlink(path);
}

/* Runs config_load in a child; returns its exit status and output. */
static int run_child(char **argv, int argc, char *out, size_t cap, int want_stderr, const char *stdin_text) {
    int p[2], in[2];
    cr_assert_eq(pipe(p), 0);
    cr_assert_eq(pipe(in), 0);
    pid_t pid = fork();
    cr_assert(pid >= 0);
    if (pid == 0) {
        dup2(p[1], want_stderr ? 2 : 1);
        dup2(in[0], 0);
        close(p[0]), close(in[1]);
        ferry_config c;
        config_load(&c, argc, argv);
        printf("LOADED port=%d\n", c.port);
        fflush(stdout);
        _exit(42);
    }
    close(p[1]), close(in[0]);
    if (stdin_text) cr_assert_eq(write(in[1], stdin_text, strlen(stdin_text)), (ssize_t)strlen(stdin_text));
    close(in[1]);
    size_t n = 0;
    ssize_t r;
    while (n + 1 < cap && (r = read(p[0], out + n, cap - 1 - n)) > 0) n += (size_t)r;
    out[n] = '\0';
    close(p[0]);
    int st;
    waitpid(pid, &st, 0);
    return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

Test(config, fatal_errors_exit_1) {
    char out[8192];
    char *a1[] = {"ferry-server", "--port", "70000", NULL};
    cr_assert_eq(run_child(a1, 3, out, sizeof out, 1, NULL), 1);
    /* prefixes: sanitizers may append their own notes to stderr at exit */
    const char *want1 = "\n*** FATAL CONFIG FILE ERROR (Redis " FERRY_VERSION ") ***\n"
                        "Reading the configuration file, at line 2\n>>> 'port \"70000\"'\n"
                        "argument must be between 0 and 65535 inclusive\n(command line option 1)\n";
    cr_assert_eq(strncmp(out, want1, strlen(want1)), 0, "%s", out);
    char *a2[] = {"ferry-server", "--appendfsync", "sometimes", NULL};
    cr_assert_eq(run_child(a2, 3, out, sizeof out, 1, NULL), 1);
    cr_assert(strstr(out, "argument(s) must be one of the following: everysec, always, no"), "%s", out);
    char *a3[] = {"ferry-server", "/nonexistent/ferry.conf", NULL};
    cr_assert_eq(run_child(a3, 2, out, sizeof out, 1, NULL), 1);
    const char *want3 = "Fatal error, can't open config file '/nonexistent/ferry.conf': No such file or directory\n";
    cr_assert_eq(strncmp(out, want3, strlen(want3)), 0, "%s", out);
    char *a4[] = {"ferry-server", "--dir", "/nonexistent/dir", NULL};
    cr_assert_eq(run_child(a4, 3, out, sizeof out, 1, NULL), 1);
    cr_assert(strstr(out, "Can't chdir to '/nonexistent/dir'"), "%s", out);
    char *a5[] = {"ferry-server", "--port", "1", "--bogus", "x", NULL};
    cr_assert_eq(run_child(a5, 5, out, sizeof out, 1, NULL), 1);
    cr_assert(strstr(out, ">>> 'bogus \"x\"'\nBad directive or wrong number of arguments"), "%s", out);
}

Test(config, version_help_and_stdin) {
    char out[8192];
    char *v[] = {"ferry-server", "--version", NULL};
    cr_assert_eq(run_child(v, 2, out, sizeof out, 0, NULL), 0);
    cr_assert_str_eq(out, "Redis server v=" FERRY_VERSION " sha=00000000:0 malloc=libc bits=64 build=ferry-"
                          FERRY_OWN_VERSION "\n");
    char *v2[] = {"ferry-server", "-v", NULL};
    cr_assert_eq(run_child(v2, 2, out, sizeof out, 0, NULL), 0);
    cr_assert(strstr(out, "ferry"));
    char *h[] = {"ferry-server", "-h", NULL};
    cr_assert_eq(run_child(h, 2, out, sizeof out, 0, NULL), 0);
    cr_assert(strstr(out, "Usage: ferry-server [/path/to/redis.conf] [options] [-]"), "%s", out);
    char *s[] = {"ferry-server", "-", "--timeout", "3", NULL};
    cr_assert_eq(run_child(s, 4, out, sizeof out, 0, "port 7123\n"), 42);
    cr_assert_str_eq(out, "LOADED port=7123\n");
    char *s2[] = {"ferry-server", "--port", "7124", "-", NULL};
    cr_assert_eq(run_child(s2, 4, out, sizeof out, 0, "port 7125\n"), 42);
    cr_assert_str_eq(out, "LOADED port=7124\n", "options come after stdin");
}

/* ------------------------------------------------------ CONFIG command */

static client *fake;
static char out[65536];
static int port_changes, port_fails; /* port_fails: the next calls of the hook fail (a port in use) */
static int on_port_changed(void) {
    port_changes++;
    if (port_fails > 0) {
        port_fails--;
        return -1;
    }
    return 0;
}

static void cmd_setup(void) {
    config_sandbox = 2;
    config_defaults(&srv.cfg);
    registry_commands(); /* the command table and ACL's default user (requirepass sets its password) */
    fake = client_create(-1);
    config_port_changed = on_port_changed;
}

static void cmd_teardown(void) {
    client_free(fake);
    config_free(&srv.cfg);
}

TestSuite(config_cmd, .init = cmd_setup, .fini = cmd_teardown);

/* Runs CONFIG with the given arguments (NULL-terminated); returns the reply bytes. */
static const char *run(const char *a0, ...) {
    span argv[32];
    int argc = 0;
    va_list ap;
    va_start(ap, a0);
    for (const char *a = a0; a && argc < 32; a = va_arg(ap, const char *)) argv[argc++] = (span){a, strlen(a)};
    va_end(ap);
    span *saved = fake->argv;
    int saved_argc = fake->argc;
    fake->argv = argv;
    fake->argc = argc;
    cmd_config(fake);
    fake->argv = saved;
    fake->argc = saved_argc;
    struct iovec iov[2];
    int n = ring_iov(&fake->out, iov);
    size_t len = 0;
    for (int i = 0; i < n && len + iov[i].iov_len < sizeof out; i++) {
        memcpy(out + len, iov[i].iov_base, iov[i].iov_len);
        len += iov[i].iov_len;
    }
    ring_consume(&fake->out, len);
    out[len] = '\0';
    return out;
}

#define SETERR(name, why) "-ERR CONFIG SET failed (possibly related to argument '" name "') - " why "\r\n"

Test(config_cmd, get_replies_like_redis) {
    cr_assert_str_eq(run("config", "get", "timeout", NULL), "*2\r\n$7\r\ntimeout\r\n$1\r\n0\r\n");
    cr_assert_str_eq(run("config", "get", "TIMEOUT", "timeout", NULL), "*2\r\n$7\r\nTIMEOUT\r\n$1\r\n0\r\n");
    cr_assert_str_eq(run("config", "get", "save", NULL), "*2\r\n$4\r\nsave\r\n$23\r\n3600 1 300 100 60 10000\r\n");
    cr_assert_str_eq(run("config", "get", "appendonly", NULL), "*2\r\n$10\r\nappendonly\r\n$2\r\nno\r\n");
    cr_assert_str_eq(run("config", "get", "bind", NULL), "*2\r\n$4\r\nbind\r\n$6\r\n* -::*\r\n");
    cr_assert_str_eq(run("config", "get", "client-output-buffer-limit", NULL),
                     "*2\r\n$26\r\nclient-output-buffer-limit\r\n$67\r\n"
                     "normal 0 0 0 slave 268435456 67108864 60 pubsub 33554432 8388608 60\r\n");
    cr_assert_str_eq(run("config", "get", "maxmemory-p*", NULL),
                     "*2\r\n$16\r\nmaxmemory-policy\r\n$10\r\nnoeviction\r\n");
    cr_assert_str_eq(run("config", "get", "nosuch", "no-such-*", NULL), "*0\r\n");
    cr_assert_str_eq(run("config", "get", "key-load-delay", NULL), "*2\r\n$14\r\nkey-load-delay\r\n$1\r\n0\r\n");
    cr_assert_str_eq(run("config", "get", "key-load-*", NULL), "*0\r\n", "hidden configs need the exact name");
    cr_assert_str_eq(run("config", "get", "databases", NULL), "*2\r\n$9\r\ndatabases\r\n$2\r\n16\r\n");
    char *cwd = getcwd(NULL, 0);
    char want[4200];
    snprintf(want, sizeof want, "*2\r\n$3\r\ndir\r\n$%zu\r\n%s\r\n", strlen(cwd), cwd);
    cr_assert_str_eq(run("config", "get", "dir", NULL), want, "dir is absolute");
    free(cwd);
    fake->resp = 3;
    cr_assert_str_eq(run("config", "get", "appendonly", NULL), "%1\r\n$10\r\nappendonly\r\n$2\r\nno\r\n");
    /* '*' lists every visible config once: 192 in Redis 7.0.15 */
    const char *all = run("config", "get", "*", NULL);
    cr_assert_eq(strncmp(all, "%192\r\n", 6), 0, "%.20s", all);
}

Test(config_cmd, set_errors_like_redis) {
    cr_assert_str_eq(run("config", "set", "foo", "bar", NULL),
                     "-ERR Unknown option or number of arguments for CONFIG SET - 'foo'\r\n");
    cr_assert_str_eq(run("config", "set", "port", "1", "hz", NULL), "-ERR syntax error\r\n");
    cr_assert_str_eq(run("config", "set", "PORT", "abc", NULL), SETERR("port", "argument couldn't be parsed into an integer"));
    cr_assert_str_eq(run("config", "set", "port", "70000", NULL), SETERR("port", "argument must be between 0 and 65535 inclusive"));
    cr_assert_str_eq(run("config", "set", "databases", "3", NULL), SETERR("databases", "can't set immutable config"));
    cr_assert_str_eq(run("config", "set", "enable-protected-configs", "yes", NULL),
                     SETERR("enable-protected-configs", "can't set immutable config"));
    cr_assert_str_eq(run("config", "set", "dir", "/tmp", NULL), SETERR("dir", "can't set protected config"));
    cr_assert_str_eq(run("config", "set", "dbfilename", "x.rdb", NULL), SETERR("dbfilename", "can't set protected config"));
    cr_assert_str_eq(run("config", "set", "hz", "1", "HZ", "2", NULL), SETERR("HZ", "duplicate parameter"));
    cr_assert_str_eq(run("config", "set", "hz", "abc", "databases", "5", NULL), SETERR("databases", "can't set immutable config"));
    cr_assert_str_eq(run("config", "set", "slave-priority", "x", NULL), SETERR("slave-priority", "argument couldn't be parsed into an integer"));
    cr_assert_str_eq(run("config", "set", "appendfsync", "sometimes", NULL),
                     SETERR("appendfsync", "argument(s) must be one of the following: everysec, always, no"));
    cr_assert_str_eq(run("config", "set", NULL), "-ERR wrong number of arguments for 'config|set' command\r\n");
    cr_assert_str_eq(run("config", "get", NULL), "-ERR wrong number of arguments for 'config|get' command\r\n");
    cr_assert_str_eq(run("config", "help", "x", NULL), "-ERR wrong number of arguments for 'config|help' command\r\n");
    cr_assert_str_eq(run("config", "foo", NULL), "-ERR unknown subcommand 'foo'. Try CONFIG HELP.\r\n");
    cr_assert_str_eq(run("config", "rewrite", NULL), "-ERR The server is running without a config file\r\n");
}

Test(config_cmd, set_is_all_or_nothing) {
    cr_assert_str_eq(run("config", "set", "timeout", "5", "maxmemory", "1mb", "hz", "abc", NULL),
                     SETERR("hz", "argument couldn't be parsed into an integer"));
    cr_assert_eq(srv.cfg.timeout, 0);
    cr_assert_eq(srv.cfg.maxmemory, 0);
    cr_assert_str_eq(run("config", "set", "timeout", "5", "maxmemory", "1mb", "maxmemory-policy", "allkeys-lfu",
                         "client-output-buffer-limit", "pubsub 1 2 3", "requirepass", "pw", "loglevel", "debug",
                         "save", "", "hz", "1000", NULL),
                     "+OK\r\n");
    cr_assert_eq(srv.cfg.timeout, 5);
    cr_assert_eq(srv.cfg.maxmemory, 1 << 20);
    cr_assert_eq(srv.cfg.maxmemory_policy, 2);
    cr_assert_eq(srv.cfg.cob[COB_PUBSUB].soft_seconds, 3);
    cr_assert_str_eq(srv.cfg.requirepass, "pw");
    cr_assert_eq(srv.cfg.loglevel, LOG_DEBUG_);
    cr_assert_eq(srv.cfg.hz, 500);
    cr_assert_str_eq(run("config", "get", "save", NULL), "*2\r\n$4\r\nsave\r\n$0\r\n\r\n");
    cr_assert_str_eq(run("config", "set", "requirepass", "", NULL), "+OK\r\n");
    cr_assert_null(srv.cfg.requirepass);
    cr_assert_eq(port_changes, 0);
    cr_assert_str_eq(run("config", "set", "port", "7001", NULL), "+OK\r\n");
    cr_assert_eq(srv.cfg.port, 7001);
    cr_assert_eq(port_changes, 1, "the listeners hook runs after a port change");
}

Test(config_cmd, set_rolls_back_when_an_apply_step_fails) {
    port_changes = 0;
    port_fails = 1;
    cr_assert_str_eq(run("config", "set", "maxmemory", "10000001", "port", "7002", "timeout", "9",
                         "client-query-buffer-limit", "10m", NULL),
                     SETERR("port", "Unable to listen on this port. Check server logs."));
    cr_assert_eq(srv.cfg.maxmemory, 0, "every parameter of the command gets its old value back");
    cr_assert_eq(srv.cfg.port, 6379);
    cr_assert_eq(srv.cfg.timeout, 0);
    cr_assert_eq(srv.cfg.client_query_buffer_limit, 1024LL * 1024 * 1024);
    cr_assert_eq(port_changes, 2, "the listeners are bound again for the old port");
    port_fails = 1;
    cr_assert_str_eq(run("config", "set", "timeout", "3", "bind", "10.0.0.1", NULL),
                     SETERR("bind", "Failed to bind to specified addresses."));
    cr_assert_eq(srv.cfg.timeout, 0);
    cr_assert_str_eq(run("config", "get", "bind", NULL), "*2\r\n$4\r\nbind\r\n$6\r\n* -::*\r\n");
}

Test(config_cmd, protected_configs_when_enabled) {
    srv.cfg.enable_protected_configs = DEBUG_CMD_YES;
    char dir[] = "/tmp/ferry-dir-XXXXXX";
    cr_assert(mkdtemp(dir));
    cr_assert_str_eq(run("config", "set", "dir", dir, NULL), "+OK\r\n");
    char *cwd = getcwd(NULL, 0);
    cr_assert_str_eq(cwd, dir, "CONFIG SET dir changes the working directory");
    free(cwd);
    cr_assert_str_eq(run("config", "set", "dir", "/nonexistent-ferry", NULL), SETERR("dir", "No such file or directory"));
    cr_assert_str_eq(run("config", "set", "dbfilename", "a/b", NULL),
                     SETERR("dbfilename", "dbfilename can't be a path, just a filename"));
    srv.cfg.enable_protected_configs = DEBUG_CMD_LOCAL; /* the fake client counts as local */
    cr_assert_str_eq(run("config", "set", "dbfilename", "x.rdb", NULL), "+OK\r\n");
    rmdir(dir);
}

Test(config_cmd, help_and_resetstat) {
    cr_assert_str_eq(run("config", "help", NULL),
                     "*11\r\n+CONFIG <subcommand> [<arg> [value] [opt] ...]. Subcommands are:\r\n+GET <pattern>\r\n"
                     "+    Return parameters matching the glob-like <pattern> and their values.\r\n"
                     "+SET <directive> <value>\r\n+    Set the configuration <directive> to <value>.\r\n"
                     "+RESETSTAT\r\n+    Reset statistics reported by the INFO command.\r\n+REWRITE\r\n"
                     "+    Rewrite the configuration file.\r\n+HELP\r\n+    Prints this help.\r\n");
    srv.stats.numcommands = 7;
    srv.stats.keyspace_hits = 3;
    cr_assert_str_eq(run("config", "resetstat", NULL), "+OK\r\n");
    cr_assert_eq(srv.stats.numcommands, 0);
    cr_assert_eq(srv.stats.keyspace_hits, 0);
}

Test(config_cmd, rewrite_keeps_comments_and_updates) {
    char path[] = "/tmp/ferry-rw-XXXXXX";
    int fd = mkstemp(path);
    cr_assert(fd >= 0);
    close(fd);
    write_file(path, "# top comment\nport 7000\n  # indented comment\n\nBind 127.0.0.1\nslaveof 127.0.0.1 1\n"
                     "save 100 1\nsave 200 2\nmaxmemory 1gb\nlist-max-ziplist-entries 5\ninclude /dev/null\nhz 10\nhz 11\n");
    chmod(path, 0640);
    srv.cfg.config_file = zstrdup(path);
    cr_assert_str_eq(run("config", "set", "maxmemory", "2mb", "timeout", "5", "client-output-buffer-limit",
                         "normal 1mb 2mb 3", "notify-keyspace-events", "KEA", "requirepass", "p \"w\"", NULL),
                     "+OK\r\n");
    cr_assert_str_eq(run("config", "rewrite", NULL), "+OK\r\n");
    FILE *f = fopen(path, "r");
    char text[4096];
    size_t n = fread(text, 1, sizeof text - 1, f);
    fclose(f);
    text[n] = '\0';
    cr_assert_str_eq(text, "# top comment\nport 6379\n  # indented comment\n\nbind * -::*\n"
                           "save 3600 1\nsave 300 100\nsave 60 10000\nmaxmemory 2mb\nlist-max-ziplist-entries 5\n"
                           "include /dev/null\nhz 10\n# Generated by CONFIG REWRITE\n"
                           "client-output-buffer-limit normal 1mb 2mb 3\nnotify-keyspace-events \"AKE\"\n"
                           "requirepass \"p \\\"w\\\"\"\ntimeout 5\n"
                           "user default on #f6bede6fb04d20d7bb40c565a1940b77b5ea0d2da1380b4a5308daf213522af3 ~* &* +@all\n");
    struct stat st;
    stat(path, &st);
    cr_assert_eq(st.st_mode & 0777, 0640, "the file mode is kept");
    /* the rewritten file loads back to the same values */
    ferry_config c;
    load_ok(&c, text);
    cr_assert_eq(c.maxmemory, 2 << 20);
    cr_assert_eq(c.timeout, 5);
    cr_assert_str_eq(c.requirepass, "p \"w\"");
    cr_assert_eq(c.cob[COB_NORMAL].soft_seconds, 3);
    config_free(&c);
    /* a second rewrite with nothing changed is stable */
    cr_assert_str_eq(run("config", "rewrite", NULL), "+OK\r\n");
    f = fopen(path, "r");
    char again[4096];
    n = fread(again, 1, sizeof again - 1, f);
    fclose(f);
    again[n] = '\0';
    cr_assert_str_eq(again, text);
    unlink(path);
}
