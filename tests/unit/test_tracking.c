/* test_tracking.c - Criterion unit tests for src/commands/tracking.c and
 * src/commands/monitor.c through fake clients (no sockets).
 *
 * Why: the differential tests compare bytes with redis-server, but they
 * cannot see the bookkeeping that keeps the hot path free: srv.observers,
 * srv.tracking_clients and srv.tracking_live must come back to zero once
 * every tracking client and monitor is gone, however it left (OFF, RESET,
 * freed with invalidations still held for its reply), and the table must
 * count a client once per key.
 */
#include <criterion/criterion.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "client.h"
#include "config.h"
#include "db.h"
#include "registry.h"
#include "ring.h"
#include "server.h"
#include "tracking.h"

static void setup(void) {
    config_defaults(&srv.cfg);
    srv.now_ms = ev_now_ms();
    db_init_all(srv.cfg.databases > 0 ? srv.cfg.databases : 16);
    registry_init();
}

TestSuite(tracking, .init = setup);

/* Runs one command as the client being processed (as the event loop does). */
static void run(client *c, const char *resp) {
    srv.current_client = c;
    client_feed(c, resp, strlen(resp));
    srv.current_client = NULL;
}

static char *take_output(client *c) {
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
    return p;
}

static void expect_out(client *c, const char *want) {
    char *got = take_output(c);
    cr_assert_str_eq(got, want);
    free(got);
}

#define HELLO3 "*2\r\n$5\r\nHELLO\r\n$1\r\n3\r\n"
#define TRACK_ON "*3\r\n$6\r\nCLIENT\r\n$8\r\nTRACKING\r\n$2\r\non\r\n"
#define TRACK_OFF "*3\r\n$6\r\nCLIENT\r\n$8\r\nTRACKING\r\n$3\r\noff\r\n"
#define GET_K "*2\r\n$3\r\nGET\r\n$1\r\nk\r\n"
#define SET_K "*3\r\n$3\r\nSET\r\n$1\r\nk\r\n$1\r\n1\r\n"
#define PUSH_K ">2\r\n$10\r\ninvalidate\r\n*1\r\n$1\r\nk\r\n"

static client *tracker(void) {
    client *c = client_create(-1);
    run(c, HELLO3);
    run(c, TRACK_ON);
    free(take_output(c));
    return c;
}

static void expect_idle(void) {
    cr_assert_eq(srv.tracking_clients, 0);
    cr_assert_eq(srv.observers, 0);
    cr_assert_eq(srv.monitors, 0);
}

Test(tracking, a_key_read_twice_counts_once_and_its_change_empties_the_table) {
    client *t = tracker(), *w = client_create(-1);
    cr_assert_eq(srv.tracking_clients, 1);
    run(t, GET_K);
    run(t, GET_K);
    cr_assert_eq(tracking_table_keys(), 1);
    cr_assert_eq(tracking_table_items(), 1);
    expect_out(t, "_\r\n_\r\n");
    run(w, SET_K);
    expect_out(t, PUSH_K);
    cr_assert_eq(tracking_table_keys(), 0);
    cr_assert_eq(srv.tracking_live, 0);
    client_free(t);
    client_free(w);
    expect_idle();
}

Test(tracking, own_change_is_sent_after_the_reply) {
    client *t = tracker();
    run(t, GET_K);
    free(take_output(t));
    run(t, SET_K);
    expect_out(t, "+OK\r\n" PUSH_K);
    cr_assert_eq(srv.observers, 1); /* only the tracking client: the hold is released */
    client_free(t);
    expect_idle();
}

Test(tracking, off_keeps_the_ids_until_the_key_changes) {
    client *t = tracker(), *w = client_create(-1);
    run(t, GET_K);
    run(t, TRACK_OFF);
    free(take_output(t));
    expect_idle();
    cr_assert_eq(tracking_table_keys(), 1); /* as Redis: dropped lazily */
    run(t, TRACK_ON);
    free(take_output(t));
    run(w, SET_K);
    expect_out(t, PUSH_K); /* on again: still told of the key it read before */
    client_free(t);
    client_free(w);
    expect_idle();
}

Test(tracking, bcast_prefixes_go_with_their_last_client) {
    client *a = client_create(-1), *b = client_create(-1);
    run(a, "*6\r\n$6\r\nCLIENT\r\n$8\r\nTRACKING\r\n$2\r\non\r\n$5\r\nBCAST\r\n$6\r\nPREFIX\r\n$2\r\np:\r\n");
    run(b, "*4\r\n$6\r\nCLIENT\r\n$8\r\nTRACKING\r\n$2\r\non\r\n$5\r\nBCAST\r\n");
    cr_assert_eq(tracking_prefix_count(), 2);
    cr_assert_eq(srv.tracking_live, 2);
    run(a, "*1\r\n$5\r\nRESET\r\n");
    cr_assert_eq(tracking_prefix_count(), 1);
    client_free(b);
    cr_assert_eq(tracking_prefix_count(), 0);
    cr_assert_eq(srv.tracking_live, 0);
    client_free(a);
    expect_idle();
}

Test(tracking, freed_with_a_held_invalidation) {
    client *t = tracker();
    run(t, GET_K);
    /* an invalidation held for t's reply, then t goes before it is sent */
    srv.current_client = t;
    srv.executing_client = t;
    tracking_invalidate_key(t, "k", 1);
    srv.executing_client = NULL;
    srv.current_client = NULL;
    cr_assert_eq(srv.observers, 2);
    client_free(t);
    expect_idle();
}

Test(tracking, flush_nulls_and_empties_the_table) {
    client *t = tracker(), *w = client_create(-1);
    run(t, GET_K);
    free(take_output(t));
    run(w, "*1\r\n$8\r\nFLUSHALL\r\n");
    expect_out(t, ">2\r\n$10\r\ninvalidate\r\n_\r\n");
    cr_assert_eq(tracking_table_keys(), 0);
    client_free(t);
    client_free(w);
    expect_idle();
}

Test(tracking, table_limit_evicts_down_to_the_limit) {
    client *t = tracker();
    for (int i = 0; i < 300; i++) {
        char cmd[64];
        snprintf(cmd, sizeof cmd, "*2\r\n$3\r\nGET\r\n$4\r\nk%03d\r\n", i);
        run(t, cmd);
    }
    free(take_output(t));
    cr_assert_eq(tracking_table_keys(), 300);
    srv.cfg.tracking_table_max_keys = 10;
    for (int i = 0; i < 5 && tracking_table_keys() > 10; i++) tracking_limit_table(); /* effort grows per run */
    cr_assert_eq(tracking_table_keys(), 10);
    char *out = take_output(t);
    size_t pushes = 0;
    for (const char *p = out; (p = strstr(p, "invalidate")); p++) pushes++;
    cr_assert_eq(pushes, 290);
    free(out);
    run(t, "*1\r\n$8\r\nFLUSHALL\r\n"); /* the table's last keys go too */
    cr_assert_eq(tracking_table_keys(), 0);
    client_free(t);
    expect_idle();
}

Test(tracking, monitors_leave_on_reset_and_free) {
    client *m1 = client_create(-1), *m2 = client_create(-1);
    run(m1, "*1\r\n$7\r\nMONITOR\r\n");
    run(m2, "*1\r\n$7\r\nMONITOR\r\n");
    run(m2, "*1\r\n$7\r\nMONITOR\r\n"); /* ignored */
    cr_assert_eq(srv.monitors, 2);
    cr_assert_eq(srv.observers, 2);
    expect_out(m2, "+OK\r\n");
    run(m1, "*1\r\n$5\r\nRESET\r\n");
    cr_assert_eq(srv.monitors, 1);
    client_free(m2);
    client_free(m1);
    expect_idle();
}
