/* latency_graph.c - LATENCY GRAPH <event>: the latency monitor's samples of
 * one event as a small text chart, for people at a terminal.
 *
 * The first two lines are Redis 7.0's (the event, its high, low and
 * all-time-high latency, then a rule of 80 dashes); the chart under them is
 * ferry's own: one column per sample (the newest 80, oldest on the left), a
 * bar of up to GRAPH_ROWS '#' cells scaled between the low and the high,
 * then one line giving the ages of the oldest and newest samples. An event
 * without samples is Redis's error. The samples live in latency.c.
 */
#include <stdio.h>
#include <string.h>

#include "latency.h"
#include "latency_graph.h"
#include "reply.h"
#include "sbuf.h"
#include "server.h"

#define GRAPH_COLS 80
#define GRAPH_ROWS 4

typedef struct graph_samples {
    int32_t t[GRAPH_COLS];
    uint32_t ms[GRAPH_COLS];
    int n;          /* kept (at most GRAPH_COLS, the newest) */
    uint32_t high, low;
} graph_samples;

static void keep_sample(int32_t t, uint32_t ms, void *ud) {
    graph_samples *g = ud;
    if (g->n == GRAPH_COLS) { /* full: drop the oldest */
        memmove(g->t, g->t + 1, sizeof g->t[0] * (GRAPH_COLS - 1));
        memmove(g->ms, g->ms + 1, sizeof g->ms[0] * (GRAPH_COLS - 1));
        g->n--;
    }
    g->t[g->n] = t;
    g->ms[g->n++] = ms;
}

/* Height of a sample's bar: 1 .. GRAPH_ROWS between low and high. */
static int bar_height(const graph_samples *g, uint32_t ms) {
    if (g->high == g->low) return GRAPH_ROWS;
    return 1 + (int)((uint64_t)(ms - g->low) * (GRAPH_ROWS - 1) / (g->high - g->low));
}

static void draw(sbuf *b, graph_samples *g, const char *name, uint32_t all_time_high) {
    g->high = g->low = g->ms[0];
    for (int j = 1; j < g->n; j++) {
        if (g->ms[j] > g->high) g->high = g->ms[j];
        if (g->ms[j] < g->low) g->low = g->ms[j];
    }
    sb_addf(b, "%s - high %u ms, low %u ms (all time high %u ms)\n", name, g->high, g->low, all_time_high);
    for (int j = 0; j < GRAPH_COLS; j++) sb_addc(b, '-');
    sb_addc(b, '\n');
    for (int row = GRAPH_ROWS; row >= 1; row--) {
        for (int j = 0; j < g->n; j++) sb_addc(b, bar_height(g, g->ms[j]) >= row ? '#' : ' ');
        sb_addc(b, '\n');
    }
    int32_t now = (int32_t)(srv.now_ms / 1000);
    sb_addf(b, "%d sample(s), one column each: the oldest %lds ago, the newest %lds ago\n", g->n,
            (long)(now - g->t[0]), (long)(now - g->t[g->n - 1]));
}

void latency_graph(client *c) {
    int i = lm_find_index(c->argv[2].p, c->argv[2].len);
    if (i < 0 || lm_samples(i) == 0) {
        reply_errorf(c, "ERR No samples available for event '%.*s'", (int)c->argv[2].len, c->argv[2].p);
        return;
    }
    graph_samples g = {.n = 0};
    lm_foreach_sample(i, keep_sample, &g);
    sbuf b = {0};
    draw(&b, &g, lm_name(i), lm_max(i));
    reply_verbatim(c, b.p, b.len, "txt");
    sb_free(&b);
}
