/* test_event_busypoll.c - Criterion unit tests for the event loop's busy
 * polling before sleep (busy_poll_us / spin_us in include/event.h).
 *
 * Why: the spin window must grow while events keep arriving soon after the
 * loop would have slept (so a busy server stays awake and its clients do not
 * pay a cross-CPU wakeup per batch), shrink when the loop is idle longer
 * than the bound (so a lightly loaded server burns no CPU), never exceed the
 * bound, and stay off when busy_poll_us is 0. Events arrive through a pipe.
 */
#include <criterion/criterion.h>

#include <unistd.h>

#include "event.h"

static int fired;

static void on_read(evloop *el, int fd, void *data, int mask) {
    char b[16];
    (void)el, (void)data, (void)mask;
    if (read(fd, b, sizeof b) > 0) fired++;
}

typedef struct {
    evloop *el;
    int p[2];
} loop_pipe;

static loop_pipe setup_loop(int busy_poll_us) {
    loop_pipe lp;
    lp.el = ev_create(64);
    cr_assert_not_null(lp.el);
    cr_assert_eq(pipe(lp.p), 0);
    cr_assert_eq(ev_add(lp.el, lp.p[0], EV_READABLE, on_read, NULL), 0);
    lp.el->busy_poll_us = busy_poll_us;
    fired = 0;
    return lp;
}

static void teardown_loop(loop_pipe *lp) {
    ev_del(lp->el, lp->p[0], EV_READABLE);
    close(lp->p[0]);
    close(lp->p[1]);
    ev_free(lp->el);
}

/* One event after idle_us without events; returns the spin window after it. */
static int event_after(loop_pipe *lp, int idle_us) {
    if (idle_us) usleep((useconds_t)idle_us);
    cr_assert_eq(write(lp->p[1], "x", 1), 1);
    int before = fired;
    cr_assert_eq(ev_process(lp->el), 1);
    cr_assert_eq(fired, before + 1);
    return lp->el->spin_us;
}

Test(busypoll, grows_under_load_up_to_the_bound) {
    loop_pipe lp = setup_loop(5000); /* a wide bound: usleep oversleeps under load */
    event_after(&lp, 0);
    int last = lp.el->spin_us, grew = 0;
    for (int i = 0; i < 20; i++) {
        /* sleep past the current window so the loop blocks, but wake well
         * within the bound: spinning longer would have caught the event */
        int w = event_after(&lp, last + 5 < 1000 ? last + 5 : 1000);
        cr_assert_leq(w, 5000);
        if (w > last) grew = 1;
        last = w;
    }
    cr_assert(grew, "spin window never grew while events came within the bound");
    teardown_loop(&lp);
}

Test(busypoll, shrinks_when_idle_past_the_bound) {
    loop_pipe lp = setup_loop(100);
    lp.el->spin_us = 100;
    lp.el->last_event_us = ev_mono_us();
    int w1 = event_after(&lp, 5000);
    cr_assert_lt(w1, 100);
    int w2 = event_after(&lp, 5000);
    cr_assert_lt(w2, w1);
    teardown_loop(&lp);
}

Test(busypoll, disabled_when_bound_is_zero) {
    loop_pipe lp = setup_loop(0);
    for (int i = 0; i < 5; i++) cr_assert_eq(event_after(&lp, 20), 0);
    teardown_loop(&lp);
}

Test(busypoll, spin_catches_an_event_written_within_the_window) {
    loop_pipe lp = setup_loop(10000);
    lp.el->spin_us = 10000;
    lp.el->last_event_us = ev_mono_us();
    /* the byte is already there: the first non-blocking poll returns it and
     * the window is left as it is */
    cr_assert_eq(event_after(&lp, 0), 10000);
    teardown_loop(&lp);
}
