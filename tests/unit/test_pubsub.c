/* test_pubsub.c - Criterion unit tests for src/commands/pubsub.c and src/io/outlimit.c
 * through fake clients (no sockets).
 *
 * Why: the integration suites compare reply bytes with Redis, but they cannot
 * see the registries' bookkeeping: that every subscription is released (no
 * leak, counters back to zero) whether a client unsubscribes, is RESET or is
 * freed; that a channel's subscriber list survives removals from its middle
 * with its order intact; and the exact hard / soft-with-time decisions of
 * the output limit check, which integration tests can only probe coarsely.
 */
#include <criterion/criterion.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "client.h"
#include "command.h"
#include "config.h"
#include "db.h"
#include "outlimit.h"
#include "pubsub.h"
#include "registry.h"
#include "ring.h"
#include "server.h"
#include "zmalloc.h"

static void setup(void) {
    config_defaults(&srv.cfg);
    srv.now_ms = ev_now_ms();
    db_init_all(srv.cfg.databases > 0 ? srv.cfg.databases : 16);
    registry_init();
}

TestSuite(pubsub, .init = setup);

/* ------------------------------------------------------------ helpers */

static char *take_output(client *c, size_t *len) {
    struct iovec iov[2];
    int n = ring_iov(&c->out, iov);
    size_t total = 0;
    for (int i = 0; i < n; i++) total += iov[i].iov_len;
    char *p = malloc(total + 1);
    size_t off = 0;
    for (int i = 0; i < n; i++) {
        memcpy(p + off, iov[i].iov_base, iov[i].iov_len);
        off += iov[i].iov_len;
    }
    p[total] = '\0';
    ring_consume(&c->out, total);
    *len = total;
    return p;
}

static void expect_out(client *c, const char *want) {
    size_t len;
    char *got = take_output(c, &len);
    cr_assert(len == strlen(want) && memcmp(got, want, len) == 0, "got (%zu): %s\nwant: %s", len, got, want);
    free(got);
}

static void drop_output(client *c) {
    size_t len;
    free(take_output(c, &len));
}

static void run(client *c, int argc, const char **argv) {
    char buf[4096];
    size_t n = (size_t)sprintf(buf, "*%d\r\n", argc);
    for (int i = 0; i < argc; i++) n += (size_t)sprintf(buf + n, "$%zu\r\n%s\r\n", strlen(argv[i]), argv[i]);
    client_feed(c, buf, n);
}
#define RUN(c, ...)                                                                                                \
    do {                                                                                                           \
        const char *argv_[] = {__VA_ARGS__};                                                                       \
        run((c), (int)(sizeof argv_ / sizeof argv_[0]), argv_);                                                    \
    } while (0)

static span S(const char *s) { return (span){s, strlen(s)}; }

/* ------------------------------------------------------- subscriptions */

Test(pubsub, subscribe_publish_and_counts) {
    client *a = client_create(-1), *b = client_create(-1);
    RUN(a, "SUBSCRIBE", "ch", "other");
    expect_out(a, "*3\r\n$9\r\nsubscribe\r\n$2\r\nch\r\n:1\r\n*3\r\n$9\r\nsubscribe\r\n$5\r\nother\r\n:2\r\n");
    cr_assert(a->flags & CF_PUBSUB);
    RUN(b, "PSUBSCRIBE", "c*");
    drop_output(b);
    cr_assert_eq(pubsub_publish(S("ch"), S("hi")), 2);
    expect_out(a, "*3\r\n$7\r\nmessage\r\n$2\r\nch\r\n$2\r\nhi\r\n");
    expect_out(b, "*4\r\n$8\r\npmessage\r\n$2\r\nc*\r\n$2\r\nch\r\n$2\r\nhi\r\n");
    cr_assert_eq(pubsub_channel_count(), 2);
    cr_assert_eq(pubsub_pattern_count(), 1);
    pubsub_counts k = pubsub_client_counts(a);
    cr_assert(k.channels == 2 && k.patterns == 0 && k.shard == 0);
    client_free(a);
    client_free(b);
    cr_assert_eq(pubsub_channel_count(), 0);
    cr_assert_eq(pubsub_pattern_count(), 0);
}

Test(pubsub, everything_is_released) {
    /* nothing else may allocate meanwhile: a call slower than the default
     * 10 ms threshold on a loaded machine would add a SLOWLOG entry */
    srv.cfg.slowlog_log_slower_than = -1;
    srv.cfg.latency_monitor_threshold = 0;
    client *warm = client_create(-1); /* first calls allocate per-command statistics */
    RUN(warm, "SUBSCRIBE", "w");
    RUN(warm, "SSUBSCRIBE", "w");
    RUN(warm, "PSUBSCRIBE", "w");
    RUN(warm, "UNSUBSCRIBE");
    RUN(warm, "PUNSUBSCRIBE");
    RUN(warm, "SUNSUBSCRIBE");
    RUN(warm, "RESET");
    client_free(warm);
    size_t before = zmalloc_used();
    client *c = client_create(-1);
    char name[32];
    for (int i = 0; i < 2000; i++) {  /* enough to grow and rehash the tables */
        snprintf(name, sizeof name, "chan:%d", i);
        RUN(c, "SUBSCRIBE", name);
        snprintf(name, sizeof name, "shard:%d", i);
        RUN(c, "SSUBSCRIBE", name);
        if (i % 100 == 0) {
            snprintf(name, sizeof name, "pat:%d*", i);
            RUN(c, "PSUBSCRIBE", name);
        }
        drop_output(c);
    }
    cr_assert_eq(pubsub_channel_count(), 2000);
    cr_assert_eq(pubsub_shard_channel_count(), 2000);
    cr_assert_eq(pubsub_pattern_count(), 20);
    RUN(c, "UNSUBSCRIBE");
    RUN(c, "PUNSUBSCRIBE");
    RUN(c, "SUNSUBSCRIBE");
    drop_output(c);
    cr_assert_eq(pubsub_channel_count(), 0);
    cr_assert_eq(pubsub_shard_channel_count(), 0);
    cr_assert_eq(pubsub_pattern_count(), 0);
    cr_assert_null(c->pubsub);
    cr_assert_eq(c->flags & CF_PUBSUB, 0);
    RUN(c, "SUBSCRIBE", "x", "y");
    RUN(c, "PSUBSCRIBE", "x*");
    RUN(c, "RESET");
    cr_assert_null(c->pubsub);
    cr_assert_eq(pubsub_channel_count() + pubsub_pattern_count(), 0);
    RUN(c, "SUBSCRIBE", "x", "y");
    client_free(c);                     /* freed while subscribed */
    cr_assert_eq(pubsub_channel_count(), 0);
    cr_assert_eq(zmalloc_used(), before, "leaked %zd bytes", (ssize_t)(zmalloc_used() - before));
}

Test(pubsub, removal_keeps_delivery_order) {
    enum { N = 9 };
    client *c[N];
    for (int i = 0; i < N; i++) {
        c[i] = client_create(-1);
        RUN(c[i], "SUBSCRIBE", "k");
        drop_output(c[i]);
    }
    RUN(c[0], "UNSUBSCRIBE", "k");
    RUN(c[4], "UNSUBSCRIBE", "k");
    RUN(c[8], "UNSUBSCRIBE", "k");
    client_free(c[5]);
    c[5] = NULL;
    for (int i = 0; i < N; i++)
        if (c[i]) drop_output(c[i]);
    cr_assert_eq(pubsub_publish(S("k"), S("m")), 5);
    for (int i = 0; i < N; i++) {
        if (!c[i]) continue;
        size_t len;
        char *out = take_output(c[i], &len);
        int want = i == 1 || i == 2 || i == 3 || i == 6 || i == 7;
        cr_assert_eq(len != 0, want, "client %d got %zu bytes", i, len);
        free(out);
        client_free(c[i]);
    }
}

Test(pubsub, pushes_ignore_client_reply_off) {
    client *c = client_create(-1);
    RUN(c, "HELLO", "3");
    drop_output(c);
    RUN(c, "CLIENT", "REPLY", "OFF");
    RUN(c, "SUBSCRIBE", "z");
    expect_out(c, ">3\r\n$9\r\nsubscribe\r\n$1\r\nz\r\n:1\r\n");
    RUN(c, "PUBLISH", "z", "self");     /* the push, not the count */
    expect_out(c, ">3\r\n$7\r\nmessage\r\n$1\r\nz\r\n$4\r\nself\r\n");
    cr_assert(c->flags & CF_REPLY_OFF, "the mute flag is restored after a push");
    client_free(c);
}

Test(pubsub, large_message_staged_apart) {
    client *c = client_create(-1);
    RUN(c, "SUBSCRIBE", "big");
    drop_output(c);
    size_t n = 100000;
    char *msg = malloc(n);
    memset(msg, 'q', n);
    cr_assert_eq(pubsub_publish(S("big"), (span){msg, n}), 1);
    size_t len;
    char *out = take_output(c, &len);
    const char *head = "*3\r\n$7\r\nmessage\r\n$3\r\nbig\r\n$100000\r\n";
    cr_assert_eq(len, strlen(head) + n + 2);
    cr_assert(memcmp(out, head, strlen(head)) == 0);
    cr_assert(memcmp(out + strlen(head), msg, n) == 0);
    cr_assert(memcmp(out + len - 2, "\r\n", 2) == 0);
    free(out);
    free(msg);
    client_free(c);
}

/* -------------------------------------------------------- output limits */

static void stage_bytes(client *c, size_t n) {
    char *junk = calloc(1, n);
    ring_append(&c->out, junk, n);
    free(junk);
}

Test(pubsub, output_class_follows_subscriptions) {
    client *c = client_create(-1);
    cr_assert_eq(client_output_class(c), COB_NORMAL);
    RUN(c, "SSUBSCRIBE", "s");
    cr_assert_eq(client_output_class(c), COB_PUBSUB);
    RUN(c, "SUNSUBSCRIBE");
    cr_assert_eq(client_output_class(c), COB_NORMAL);
    client_free(c);
}

Test(pubsub, hard_limit_is_immediate) {
    client *c = client_create(-1);
    RUN(c, "SUBSCRIBE", "x");
    drop_output(c);
    srv.cfg.cob[COB_PUBSUB] = (cob_limit){1000, 0, 0};
    stage_bytes(c, OUTPUT_STATIC_ALLOWANCE + 999); /* the first 16 KB are not counted */
    cr_assert_eq(client_output_over_limits(c), 0);
    stage_bytes(c, 1);
    cr_assert_eq(client_output_over_limits(c), 1);
    /* fake clients are never closed, whatever their output */
    cr_assert_eq(client_check_output_limits(c), 0);
    c->flags &= ~(uint32_t)CF_FAKE;
    cr_assert_eq(client_check_output_limits(c), 1);
    cr_assert(c->flags & CF_CLOSE_ASAP);
    cr_assert_eq(client_check_output_limits(c), 1, "already closing: reported as closing, not scheduled twice");
    c->flags |= CF_FAKE;
    client_free(c);
}

Test(pubsub, soft_limit_needs_its_seconds) {
    client *c = client_create(-1);
    RUN(c, "PSUBSCRIBE", "*");
    drop_output(c);
    srv.cfg.cob[COB_PUBSUB] = (cob_limit){0, 100, 2};
    srv.now_ms = 1000000;
    stage_bytes(c, OUTPUT_STATIC_ALLOWANCE + 150);
    cr_assert_eq(client_output_over_limits(c), 0, "first time over: the clock starts");
    srv.now_ms += 2000;
    cr_assert_eq(client_output_over_limits(c), 0, "exactly soft_seconds: not yet");
    srv.now_ms += 1;
    cr_assert_eq(client_output_over_limits(c), 1);
    drop_output(c);                     /* drained: the clock resets */
    stage_bytes(c, OUTPUT_STATIC_ALLOWANCE + 50);
    cr_assert_eq(client_output_over_limits(c), 0);
    stage_bytes(c, 100);
    cr_assert_eq(client_output_over_limits(c), 0, "over again: a new clock");
    srv.now_ms += 1500;
    cr_assert_eq(client_output_over_limits(c), 0);
    /* the normal class has its own (default: none) limits */
    RUN(c, "PUNSUBSCRIBE");
    srv.now_ms += 10000;
    cr_assert_eq(client_output_over_limits(c), 0);
    client_free(c);
}
