/* test_geohash.c - Criterion unit tests for the geohash arithmetic of the
 * GEO commands (src/base/geohash.c).
 *
 * Why: the commands are only as exact as this module, so the tests pin
 * scores, decoded positions and GEOHASH strings to values redis-server
 * 7.0.15 prints (Palermo, Catania, (1,1)), then check the properties the
 * searches rely on: encode/decode round trips stay inside the cell,
 * boundaries (+-180, +-85.05112878) encode and out-of-range points are
 * refused, neighbours are adjacent cells (wrapping in longitude), a cell's
 * score range holds exactly its points, distances are symmetric and match
 * the haversine, and the search cells always contain the centre.
 */
#include <criterion/criterion.h>

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "geohash.h"

static uint64_t score_of(double lon, double lat) {
    geo_bits h;
    cr_assert(geo_encode_wgs84(lon, lat, GEO_STEP_MAX, &h));
    return geo_align52(h);
}

static void fmt17(char *buf, size_t n, double v) { snprintf(buf, n, "%.17Lf", (long double)v); }

Test(geohash, known_scores) {
    cr_assert_eq(score_of(13.361389, 38.115556), 3479099956230698ULL);
    cr_assert_eq(score_of(15.087269, 37.502669), 3479447370796909ULL);
    cr_assert_eq(score_of(1, 1), 3377822707026402ULL);
}

Test(geohash, known_positions) {
    double xy[2];
    char buf[64];
    cr_assert(geo_decode_score(3479099956230698.0, xy));
    fmt17(buf, sizeof buf, xy[0]);
    cr_assert_str_eq(buf, "13.36138933897018433");
    fmt17(buf, sizeof buf, xy[1]);
    cr_assert_str_eq(buf, "38.11555639549629859");
    cr_assert(geo_decode_score(3377822707026402.0, xy));
    fmt17(buf, sizeof buf, xy[0]);
    cr_assert_str_eq(buf, "0.99999994039535522");
    fmt17(buf, sizeof buf, xy[1]);
    cr_assert_str_eq(buf, "0.99999945914297683");
}

Test(geohash, known_strings) {
    char s[12];
    cr_assert(geo_hash_string(3479099956230698.0, s));
    cr_assert_str_eq(s, "sqc8b49rny0");
    cr_assert(geo_hash_string(3479447370796909.0, s));
    cr_assert_str_eq(s, "sqdtr74hyu0");
    cr_assert(geo_hash_string(3377822707026402.0, s));
    cr_assert_str_eq(s, "s00twy01mt0");
}

Test(geohash, known_distance) {
    double a[2], b[2];
    geo_decode_score(3479099956230698.0, a);
    geo_decode_score(3479447370796909.0, b);
    char buf[32];
    snprintf(buf, sizeof buf, "%.4f", geo_distance(a[0], a[1], b[0], b[1]));
    cr_assert_str_eq(buf, "166274.1516");
    snprintf(buf, sizeof buf, "%.4f", geo_distance(a[0], a[1], b[0], b[1]) / 1000);
    cr_assert_str_eq(buf, "166.2742");
}

Test(geohash, round_trip_stays_in_cell) {
    unsigned seed = 12345;
    for (int i = 0; i < 100000; i++) {
        seed = seed * 1103515245u + 12345u;
        double lon = -180 + 360.0 * (seed % 1000003) / 1000003.0;
        seed = seed * 1103515245u + 12345u;
        double lat = GEO_LAT_MIN + (GEO_LAT_MAX - GEO_LAT_MIN) * (seed % 1000003) / 1000003.0;
        double xy[2];
        uint64_t s = score_of(lon, lat);
        cr_assert_lt(s, 1ULL << 52);
        cr_assert(geo_decode_score((double)s, xy));
        /* a step-26 cell is 360/2^26 degrees wide, 170.1/2^26 high */
        cr_assert_leq(fabs(xy[0] - lon), 360.0 / (1 << 26));
        cr_assert_leq(fabs(xy[1] - lat), 171.0 / (1 << 26));
        /* re-encoding the decoded centre gives the same cell */
        cr_assert_eq(score_of(xy[0], xy[1]), s);
    }
}

Test(geohash, boundaries) {
    geo_bits h;
    cr_assert(geo_encode_wgs84(-180, GEO_LAT_MIN, 26, &h));
    cr_assert_eq(h.bits, 0);
    cr_assert(geo_encode_wgs84(180, 0, 26, &h));
    cr_assert(geo_encode_wgs84(0, GEO_LAT_MAX, 26, &h));
    cr_assert_not(geo_encode_wgs84(180.000001, 0, 26, &h));
    cr_assert_not(geo_encode_wgs84(-180.000001, 0, 26, &h));
    cr_assert_not(geo_encode_wgs84(0, 85.06, 26, &h));
    cr_assert_not(geo_encode_wgs84(0, -85.06, 26, &h));
    cr_assert_not(geo_encode_wgs84(0, 0, 0, &h));
    cr_assert_not(geo_encode_wgs84(0, 0, 33, &h));
    /* the very corner decodes clamped to the limits */
    double xy[2];
    cr_assert(geo_decode_score((double)score_of(180, GEO_LAT_MAX), xy));
    cr_assert_eq(xy[0], 180.0);
    cr_assert_eq(xy[1], GEO_LAT_MAX);
    cr_assert(geo_decode_score(0, xy));
    cr_assert_lt(xy[0], -179.9999);
    cr_assert_lt(xy[1], -85.0511);
}

Test(geohash, score_bits_like_x86) {
    cr_assert_eq(geo_score_bits(0), 0);
    cr_assert_eq(geo_score_bits(5.9), 5);
    cr_assert_eq(geo_score_bits(-1), UINT64_MAX);
    cr_assert_eq(geo_score_bits(1e20), 0); /* (1e20 - 2^63) is out of range too: 2^63 ^ 2^63 */
    cr_assert_eq(geo_score_bits(-1e20), 1ULL << 63);
    cr_assert_eq(geo_score_bits(9223372036854775808.0 + 4096.0), (1ULL << 63) + 4096);
    cr_assert_eq(geo_score_bits(INFINITY), 0);
}

Test(geohash, neighbours_are_adjacent) {
    for (uint8_t step = 6; step <= 26; step += 5) { /* cells small enough not to wrap */
        geo_bits h;
        geo_range lr, la;
        geo_coord_ranges(&lr, &la);
        cr_assert(geo_encode_wgs84(13.36, 38.11, step, &h));
        geo_neighbors n;
        geo_neighbors_of(&h, &n);
        geo_area c, e, w, no, so, ne;
        geo_decode(lr, la, h, &c);
        geo_decode(lr, la, n.east, &e);
        geo_decode(lr, la, n.west, &w);
        geo_decode(lr, la, n.north, &no);
        geo_decode(lr, la, n.south, &so);
        geo_decode(lr, la, n.north_east, &ne);
        cr_assert_float_eq(e.lon.min, c.lon.max, 1e-9);
        cr_assert_float_eq(w.lon.max, c.lon.min, 1e-9);
        cr_assert_float_eq(e.lat.min, c.lat.min, 1e-9);
        cr_assert_float_eq(no.lat.min, c.lat.max, 1e-9);
        cr_assert_float_eq(so.lat.max, c.lat.min, 1e-9);
        cr_assert_float_eq(no.lon.min, c.lon.min, 1e-9);
        cr_assert_float_eq(ne.lat.min, c.lat.max, 1e-9);
        cr_assert_float_eq(ne.lon.min, c.lon.max, 1e-9);
        cr_assert_eq(n.east.step, step);
    }
    /* east of the last column wraps to the first */
    geo_bits h;
    geo_encode_wgs84(179.99, 0, 4, &h);
    geo_neighbors n;
    geo_neighbors_of(&h, &n);
    geo_range lr, la;
    geo_coord_ranges(&lr, &la);
    geo_area e;
    geo_decode(lr, la, n.east, &e);
    cr_assert_float_eq(e.lon.min, -180.0, 1e-9);
}

Test(geohash, cell_scores_hold_the_cell) {
    geo_bits h;
    geo_encode_wgs84(13.36, 38.11, 10, &h);
    uint64_t min, max;
    geo_cell_scores(h, &min, &max);
    cr_assert_eq(max - min, 1ULL << 32);
    uint64_t s = score_of(13.36, 38.11);
    cr_assert(s >= min && s < max);
}

Test(geohash, distance_properties) {
    cr_assert_eq(geo_distance(10, 20, 10, 20), 0);
    double d1 = geo_distance(-73.9, 40.7, 139.7, 35.7), d2 = geo_distance(139.7, 35.7, -73.9, 40.7);
    cr_assert_float_eq(d1, d2, 1e-6);
    /* a quarter meridian */
    cr_assert_float_eq(geo_distance(0, 0, 0, 90), GEO_EARTH_RADIUS_M * M_PI / 2, 1e-6);
    double dist;
    cr_assert(geo_in_radius(0, 0, 0, 1, 111300, &dist));
    cr_assert_not(geo_in_radius(0, 0, 0, 1, 111000, &dist));
    cr_assert(geo_in_box(1000, 1000, 0, 0, 0.004, 0.004, &dist));
    cr_assert_not(geo_in_box(1000, 1000, 0, 0, 0.005, 0, &dist));
    cr_assert_not(geo_in_box(1000, 1000, 0, 0, 0, 0.005, &dist));
}

Test(geohash, search_cells_contain_centre) {
    double pts[][2] = {{0, 0}, {179.9, 0}, {-180, 85}, {13.36, 38.11}, {0, -85.05}};
    double radii[] = {0, 1, 1000, 100000, 5e6};
    for (size_t i = 0; i < sizeof pts / sizeof pts[0]; i++) {
        for (size_t j = 0; j < sizeof radii / sizeof radii[0]; j++) {
            geo_shape s = {.type = GEO_SHAPE_CIRCLE, .xy = {pts[i][0], pts[i][1]}, .conversion = 1,
                           .radius = radii[j]};
            geo_cells c;
            geo_search_cells(&s, &c);
            uint64_t min, max, sc = score_of(pts[i][0], pts[i][1]);
            geo_cell_scores(c.hash, &min, &max);
            cr_assert(sc >= min && sc < max);
            if (radii[j] <= 1000) { /* (huge radii near a pole: Redis's box goes past the pole) */
                cr_assert_leq(s.bounds[0], pts[i][0]);
                cr_assert_geq(s.bounds[2], pts[i][0]);
            }
        }
    }
}
