/* cmd_lolwut.c - LOLWUT [VERSION v [arg ...]]: a little computer art and
 * the version line "Redis ver. x.y.z" that tools print and tests look for.
 *
 * Redis 7.0 draws art for versions 5 and 6 and prints only the version
 * line for any other (its own, 7, by default). ferry takes the same
 * arguments, checked the same way (integers, clamped to the same ranges),
 * and draws its own pictures, deterministic for given arguments:
 *   VERSION 5 [cols [waves [bands]]]  sine waves plotted with Braille dots
 *                                     (2x4 dots a character); defaults 66 8 12
 *   VERSION 6 [cols [rows]]           a plain-text seascape; defaults 80 20
 * Each picture is followed by a blank line (version 5) and a caption that
 * ends with the version line.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "client.h"
#include "cmd_lolwut.h"
#include "reply.h"
#include "sbuf.h"
#include "server.h"
#include "util.h"
#include "zmalloc.h"

#define LOLWUT_MAX_ARGS 3

/* The integer arguments after VERSION v, clamped to [lo, hi]; defaults
 * where absent. 0, or -1 after replying the error. */
static int lolwut_args(client *c, int from, long long *v, int nv, const long long *lo, const long long *hi) {
    for (int j = 0; j < nv && from + j < c->argc; j++) {
        span a = c->argv[from + j];
        if (!str_to_ll(a.p, a.len, &v[j])) {
            reply_err_notint(c);
            return -1;
        }
        if (v[j] < lo[j]) v[j] = lo[j];
        if (v[j] > hi[j]) v[j] = hi[j];
    }
    return 0;
}

/* --------------------------------------------------------- version 5 */

typedef struct dots {
    int w, h;                   /* in dots: w = 2 * cols, h = 4 * lines */
    unsigned char *cell;        /* one byte of Braille dot bits per character */
} dots;

static void dot_set(dots *d, int x, int y) {
    static const unsigned char bit[4][2] = {{0x01, 0x08}, {0x02, 0x10}, {0x04, 0x20}, {0x40, 0x80}};
    if (x < 0 || y < 0 || x >= d->w || y >= d->h) return;
    d->cell[(y / 4) * (d->w / 2) + x / 2] |= bit[y % 4][x % 2];
}

/* Each band is one sine wave across the width, `waves` periods long, its
 * phase shifted band by band; consecutive points are joined vertically. */
static void plot_waves(dots *d, int waves, int bands) {
    double band_h = (double)d->h / bands, amp = band_h * 0.4;
    for (int k = 0; k < bands; k++) {
        double mid = band_h * (k + 0.5);
        int prev = -1;
        for (int x = 0; x < d->w; x++) {
            double phase = 2.0 * M_PI * waves * x / d->w + k * 0.7;
            int y = (int)lround(mid + amp * sin(phase));
            int from = prev < 0 ? y : prev;
            for (int yy = from < y ? from : y; yy <= (from > y ? from : y); yy++) dot_set(d, x, yy);
            prev = y;
        }
    }
}

static void braille_out(sbuf *b, const dots *d) {
    int cols = d->w / 2;
    for (int line = 0; line < d->h / 4; line++) {
        for (int x = 0; x < cols; x++) {
            unsigned v = d->cell[line * cols + x]; /* U+2800 + v in UTF-8 */
            sb_addc(b, (char)0xE2);
            sb_addc(b, (char)(0xA0 | (v >> 6)));
            sb_addc(b, (char)(0x80 | (v & 0x3F)));
        }
        sb_addc(b, '\n');
    }
}

static void lolwut5(client *c, sbuf *b) {
    static const long long lo[] = {1, 1, 1}, hi[] = {1000, 200, 200};
    long long a[LOLWUT_MAX_ARGS] = {66, 8, 12};
    if (lolwut_args(c, 3, a, 3, lo, hi) != 0) return;
    int cols = (int)a[0], lines = (int)((a[0] * a[2] / a[1] + 3) / 4);
    if (lines < 1) lines = 1;
    if (lines > 500) lines = 500;
    dots d = {2 * cols, 4 * lines, zcalloc((size_t)cols * (size_t)lines)};
    plot_waves(&d, (int)a[1], (int)(a[2] < lines ? a[2] : lines));
    braille_out(b, &d);
    zfree(d.cell);
    sb_addf(b, "\nferry: %lld sine waves in %d bands across %d columns. Redis ver. %s\n", a[1],
            (int)(a[2] < lines ? a[2] : lines), cols, FERRY_VERSION);
}

/* --------------------------------------------------------- version 6 */

/* A deterministic scatter for the stars (no random generator involved). */
static int star_at(int x, int y) { return ((unsigned)(x * 7919 + y * 104729) % 23u) == 0; }

static char sea_cell(int x, int y, int cols, int rows) {
    int horizon = rows / 2;
    if (y < horizon) return star_at(x, y) ? '.' : ' ';
    if (y == horizon) return x >= cols / 3 && x < cols / 3 + 6 && cols >= 12 ? '=' : '_';
    return ((x + 2 * (y - horizon)) % 6) < 3 ? '~' : '-';
}

static void lolwut6(client *c, sbuf *b) {
    static const long long lo[] = {1, 1}, hi[] = {1000, 1000};
    long long a[LOLWUT_MAX_ARGS] = {80, 20};
    if (lolwut_args(c, 3, a, 2, lo, hi) != 0) return;
    int cols = (int)a[0], rows = (int)a[1];
    for (int y = 0; y < rows; y++) {
        for (int x = 0; x < cols; x++) sb_addc(b, sea_cell(x, y, cols, rows));
        sb_addc(b, '\n');
    }
    sb_addf(b, "ferry: a night crossing, %dx%d, in plain text.\nRedis ver. %s\n", cols, rows, FERRY_VERSION);
}

void cmd_lolwut(client *c) {
    long long version = FERRY_VERSION[0] - '0';  /* the major version by default */
    if (c->argc >= 3 && span_eq_nocase(c->argv[1], "version") &&
        !str_to_ll(c->argv[2].p, c->argv[2].len, &version)) {
        reply_err_notint(c);
        return;
    }
    int has_args = c->argc >= 3 && span_eq_nocase(c->argv[1], "version");
    sbuf b = {0};
    if (has_args && version == 5) lolwut5(c, &b);
    else if (has_args && version == 6) lolwut6(c, &b);
    else sb_addf(&b, "Redis ver. %s\n", FERRY_VERSION);
    if (b.len) reply_verbatim(c, b.p, b.len, "txt");
    sb_free(&b);
}
