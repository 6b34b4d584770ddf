/* geohash.c - geohash encoding, decoding, neighbours, distances and the
 * search-cell computation of the GEO commands (see geohash.h).
 *
 * Why it is written the way it is: every number here is one redis-server
 * 7.0 also computes, in the same order of floating-point operations, so
 * that scores, decoded coordinates (printed with 17 digits) and distances
 * (printed with 4 decimals) come out with the same digits, and a search
 * walks the same cells and finds the same members. The constants (step 26,
 * latitude limits +-85.05112878, Earth radius 6372797.560856, Mercator
 * max 20037726.37) are Redis's. Pure functions only: no server headers.
 */
#include "geohash.h"

#include <math.h>
#include <stddef.h>

#define GEO_MERCATOR_MAX 20037726.37
#define GEO_D_R (M_PI / 180.0)

static inline double deg_rad(double a) { return a * GEO_D_R; }
static inline double rad_deg(double a) { return a / GEO_D_R; }

/* ---- bit interleaving ---------------------------------------------------- */

/* The 32 bits of v moved to the even positions of a 64-bit word. */
static uint64_t spread_even(uint32_t v) {
    uint64_t x = v;
    x = (x | (x << 16)) & 0x0000FFFF0000FFFFULL;
    x = (x | (x << 8)) & 0x00FF00FF00FF00FFULL;
    x = (x | (x << 4)) & 0x0F0F0F0F0F0F0F0FULL;
    x = (x | (x << 2)) & 0x3333333333333333ULL;
    x = (x | (x << 1)) & 0x5555555555555555ULL;
    return x;
}

/* The even bits of x gathered into 32 bits (inverse of spread_even). */
static uint32_t gather_even(uint64_t x) {
    x &= 0x5555555555555555ULL;
    x = (x | (x >> 1)) & 0x3333333333333333ULL;
    x = (x | (x >> 2)) & 0x0F0F0F0F0F0F0F0FULL;
    x = (x | (x >> 4)) & 0x00FF00FF00FF00FFULL;
    x = (x | (x >> 8)) & 0x0000FFFF0000FFFFULL;
    x = (x | (x >> 16)) & 0x00000000FFFFFFFFULL;
    return (uint32_t)x;
}

/* A non-negative double below 2^64 truncated to 32 bits the way x86-64
 * does it for a double -> uint32_t conversion (64-bit truncation, low
 * half kept). */
static uint32_t trunc_u32(double d) {
    if (d >= 18446744073709551616.0 || d < 0) return 0;
    return (uint32_t)(uint64_t)d;
}

/* ---- encode / decode ---------------------------------------------------- */

void geo_coord_ranges(geo_range *lon, geo_range *lat) {
    lon->min = GEO_LONG_MIN;
    lon->max = GEO_LONG_MAX;
    lat->min = GEO_LAT_MIN;
    lat->max = GEO_LAT_MAX;
}

int geo_encode(const geo_range *lon_r, const geo_range *lat_r, double lon, double lat, uint8_t step,
               geo_bits *out) {
    if (!out || step > 32 || step == 0 || (lat_r->min == 0 && lat_r->max == 0) ||
        (lon_r->min == 0 && lon_r->max == 0))
        return 0;
    if (lon > GEO_LONG_MAX || lon < GEO_LONG_MIN || lat > GEO_LAT_MAX || lat < GEO_LAT_MIN) return 0;
    out->bits = 0;
    out->step = step;
    if (lat < lat_r->min || lat > lat_r->max || lon < lon_r->min || lon > lon_r->max) return 0;
    double lat_off = (lat - lat_r->min) / (lat_r->max - lat_r->min);
    double lon_off = (lon - lon_r->min) / (lon_r->max - lon_r->min);
    lat_off *= (double)(1ULL << step);
    lon_off *= (double)(1ULL << step);
    out->bits = spread_even(trunc_u32(lat_off)) | (spread_even(trunc_u32(lon_off)) << 1);
    return 1;
}

int geo_encode_wgs84(double lon, double lat, uint8_t step, geo_bits *out) {
    geo_range lr, la;
    geo_coord_ranges(&lr, &la);
    return geo_encode(&lr, &la, lon, lat, step, out);
}

int geo_decode(geo_range lon_r, geo_range lat_r, geo_bits h, geo_area *out) {
    if ((h.bits == 0 && h.step == 0) || !out || (lat_r.min == 0 && lat_r.max == 0) ||
        (lon_r.min == 0 && lon_r.max == 0))
        return 0;
    out->hash = h;
    uint32_t ilat = gather_even(h.bits), ilon = gather_even(h.bits >> 1);
    double lat_scale = lat_r.max - lat_r.min, lon_scale = lon_r.max - lon_r.min;
    double cells = (double)(1ULL << h.step);
    out->lat.min = lat_r.min + (ilat * 1.0 / cells) * lat_scale;
    out->lat.max = lat_r.min + ((uint32_t)(ilat + 1) * 1.0 / cells) * lat_scale;
    out->lon.min = lon_r.min + (ilon * 1.0 / cells) * lon_scale;
    out->lon.max = lon_r.min + ((uint32_t)(ilon + 1) * 1.0 / cells) * lon_scale;
    return 1;
}

int geo_decode_wgs84_xy(geo_bits h, double xy[2]) {
    geo_range lr, la;
    geo_area a;
    geo_coord_ranges(&lr, &la);
    if (!geo_decode(lr, la, h, &a)) return 0;
    xy[0] = (a.lon.min + a.lon.max) / 2;
    if (xy[0] > GEO_LONG_MAX) xy[0] = GEO_LONG_MAX;
    if (xy[0] < GEO_LONG_MIN) xy[0] = GEO_LONG_MIN;
    xy[1] = (a.lat.min + a.lat.max) / 2;
    if (xy[1] > GEO_LAT_MAX) xy[1] = GEO_LAT_MAX;
    if (xy[1] < GEO_LAT_MIN) xy[1] = GEO_LAT_MIN;
    return 1;
}

/* x86-64 gcc converts double -> uint64_t with cvttsd2si below 2^63 and
 * with cvttsd2si(d - 2^63) ^ 2^63 above; cvttsd2si yields 2^63 for
 * anything out of the int64 range. */
uint64_t geo_score_bits(double d) {
    const double two63 = 9223372036854775808.0;
    if (d < two63) {
        if (!(d > -two63 - 1.0) || d != d) return 1ULL << 63;
        return (uint64_t)(int64_t)d;
    }
    double r = d - two63;
    if (r >= two63) return 0;
    return (uint64_t)(int64_t)r ^ (1ULL << 63);
}

int geo_decode_score(double score, double xy[2]) {
    geo_bits h = {geo_score_bits(score), GEO_STEP_MAX};
    return geo_decode_wgs84_xy(h, xy);
}

/* ---- neighbours --------------------------------------------------------- */

/* Move the cell d (+1/-1) along longitude (odd bits) or latitude (even
 * bits): add or subtract one on the chosen bits only, with the carry
 * passed over the other coordinate's bits. */
static void move_bits(geo_bits *h, int d, int lon) {
    if (d == 0) return;
    const uint64_t odd = 0xaaaaaaaaaaaaaaaaULL, even = 0x5555555555555555ULL;
    uint64_t mine_mask = lon ? odd : even, other_mask = lon ? even : odd;
    uint64_t mine = h->bits & mine_mask, other = h->bits & other_mask;
    uint64_t fill = other_mask >> (64 - h->step * 2);
    if (d > 0) {
        mine = mine + (fill + 1);
    } else {
        mine = mine | fill;
        mine = mine - (fill + 1);
    }
    mine &= mine_mask >> (64 - h->step * 2);
    h->bits = mine | other;
}

void geo_neighbors_of(const geo_bits *h, geo_neighbors *n) {
    n->east = n->west = n->north = n->south = *h;
    n->south_east = n->south_west = n->north_east = n->north_west = *h;
    move_bits(&n->east, 1, 1);
    move_bits(&n->west, -1, 1);
    move_bits(&n->south, -1, 0);
    move_bits(&n->north, 1, 0);
    move_bits(&n->south_west, -1, 1);
    move_bits(&n->south_west, -1, 0);
    move_bits(&n->south_east, 1, 1);
    move_bits(&n->south_east, -1, 0);
    move_bits(&n->north_west, -1, 1);
    move_bits(&n->north_west, 1, 0);
    move_bits(&n->north_east, 1, 1);
    move_bits(&n->north_east, 1, 0);
}

uint64_t geo_align52(geo_bits h) { return h.bits << (52 - h.step * 2); }

void geo_cell_scores(geo_bits h, uint64_t *min, uint64_t *max) {
    *min = geo_align52(h);
    h.bits++;
    *max = geo_align52(h);
}

/* ---- distances ---------------------------------------------------------- */

double geo_distance(double lon1d, double lat1d, double lon2d, double lat2d) {
    double lat1r = deg_rad(lat1d), lon1r = deg_rad(lon1d);
    double lat2r = deg_rad(lat2d), lon2r = deg_rad(lon2d);
    double u = sin((lat2r - lat1r) / 2);
    double v = sin((lon2r - lon1r) / 2);
    return 2.0 * GEO_EARTH_RADIUS_M * asin(sqrt(u * u + cos(lat1r) * cos(lat2r) * v * v));
}

int geo_in_radius(double x1, double y1, double x2, double y2, double radius_m, double *dist) {
    *dist = geo_distance(x1, y1, x2, y2);
    return !(*dist > radius_m);
}

int geo_in_box(double width_m, double height_m, double x1, double y1, double x2, double y2, double *dist) {
    double lon_dist = geo_distance(x2, y2, x1, y2);
    double lat_dist = geo_distance(x2, y2, x2, y1);
    if (lon_dist > width_m / 2 || lat_dist > height_m / 2) return 0;
    *dist = geo_distance(x1, y1, x2, y2);
    return 1;
}

/* ---- search cells ------------------------------------------------------- */

/* The step whose cells are about as large as the search radius. */
static int steps_for_radius(double range_m, double lat) {
    if (range_m == 0) return 26;
    int step = 1;
    while (range_m < GEO_MERCATOR_MAX) {
        range_m *= 2;
        step++;
    }
    step -= 2;
    if (lat > 66 || lat < -66) {
        step--;
        if (lat > 80 || lat < -80) step--;
    }
    if (step < 1) step = 1;
    if (step > 26) step = 26;
    return step;
}

/* The shape's bounding box: the longitude span taken at the latitude edge
 * nearer the pole (the box is wider there). */
static void bounding_box(geo_shape *s) {
    double lon = s->xy[0], lat = s->xy[1];
    double height = s->conversion * (s->type == GEO_SHAPE_CIRCLE ? s->radius : s->height / 2);
    double width = s->conversion * (s->type == GEO_SHAPE_CIRCLE ? s->radius : s->width / 2);
    const double lat_delta = rad_deg(height / GEO_EARTH_RADIUS_M);
    const double lon_delta_top = rad_deg(width / GEO_EARTH_RADIUS_M / cos(deg_rad(lat + lat_delta)));
    const double lon_delta_bottom = rad_deg(width / GEO_EARTH_RADIUS_M / cos(deg_rad(lat - lat_delta)));
    int south = lat < 0;
    s->bounds[0] = south ? lon - lon_delta_bottom : lon - lon_delta_top;
    s->bounds[2] = south ? lon + lon_delta_bottom : lon + lon_delta_top;
    s->bounds[1] = lat - lat_delta;
    s->bounds[3] = lat + lat_delta;
}

static void zero(geo_bits *b) { b->bits = 0, b->step = 0; }

void geo_search_cells(geo_shape *s, geo_cells *out) {
    geo_range lr, la;
    geo_bits hash;
    geo_neighbors nb;
    geo_area area;
    bounding_box(s);
    double min_lon = s->bounds[0], min_lat = s->bounds[1], max_lon = s->bounds[2], max_lat = s->bounds[3];
    double lon = s->xy[0], lat = s->xy[1];
    double radius_m = s->type == GEO_SHAPE_CIRCLE
                          ? s->radius
                          : sqrt((s->width / 2) * (s->width / 2) + (s->height / 2) * (s->height / 2));
    radius_m *= s->conversion;
    int steps = steps_for_radius(radius_m, lat);
    geo_coord_ranges(&lr, &la);
    geo_encode(&lr, &la, lon, lat, (uint8_t)steps, &hash);
    geo_neighbors_of(&hash, &nb);
    geo_decode(lr, la, hash, &area);

    /* a neighbour that does not reach the box's edge: one step coarser */
    int decrease = 0;
    geo_area north = {0}, south = {0}, east = {0}, west = {0};
    geo_decode(lr, la, nb.north, &north);
    geo_decode(lr, la, nb.south, &south);
    geo_decode(lr, la, nb.east, &east);
    geo_decode(lr, la, nb.west, &west);
    if (north.lat.max < max_lat) decrease = 1;
    if (south.lat.min > min_lat) decrease = 1;
    if (east.lon.max < max_lon) decrease = 1;
    if (west.lon.min > min_lon) decrease = 1;
    if (steps > 1 && decrease) {
        steps--;
        geo_encode(&lr, &la, lon, lat, (uint8_t)steps, &hash);
        geo_neighbors_of(&hash, &nb);
        geo_decode(lr, la, hash, &area);
    }

    /* drop the neighbours the box does not reach */
    if (steps >= 2) {
        if (area.lat.min < min_lat) {
            zero(&nb.south);
            zero(&nb.south_west);
            zero(&nb.south_east);
        }
        if (area.lat.max > max_lat) {
            zero(&nb.north);
            zero(&nb.north_east);
            zero(&nb.north_west);
        }
        if (area.lon.min < min_lon) {
            zero(&nb.west);
            zero(&nb.south_west);
            zero(&nb.north_west);
        }
        if (area.lon.max > max_lon) {
            zero(&nb.east);
            zero(&nb.south_east);
            zero(&nb.north_east);
        }
    }
    out->hash = hash;
    out->neighbors = nb;
    out->area = area;
}

void geo_cells_order(const geo_cells *c, geo_bits out[9]) {
    out[0] = c->hash;
    out[1] = c->neighbors.north;
    out[2] = c->neighbors.south;
    out[3] = c->neighbors.east;
    out[4] = c->neighbors.west;
    out[5] = c->neighbors.north_east;
    out[6] = c->neighbors.north_west;
    out[7] = c->neighbors.south_east;
    out[8] = c->neighbors.south_west;
}

/* ---- GEOHASH strings ---------------------------------------------------- */

int geo_hash_string(double score, char out[12]) {
    static const char alphabet[] = "0123456789bcdefghjkmnpqrstuvwxyz";
    double xy[2];
    if (!geo_decode_score(score, xy)) return 0;
    geo_range lr = {-180, 180}, la = {-90, 90};
    geo_bits h = {0, 0};
    geo_encode(&lr, &la, xy[0], xy[1], 26, &h);
    for (int i = 0; i < 11; i++) {
        /* 52 bits make 10 characters and 2 bits; the 11th is always '0' */
        int idx = i == 10 ? 0 : (int)((h.bits >> (52 - (i + 1) * 5)) & 0x1f);
        out[i] = alphabet[idx];
    }
    out[11] = '\0';
    return 1;
}
