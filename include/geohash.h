/* geohash.h - the geohash arithmetic behind the GEO commands (geohash.c).
 *
 * Why a module of its own: the commands (cmd_geo*.c) must reproduce
 * redis-server 7.0's results bit for bit (scores, decoded coordinates,
 * distances, which cells a search walks and in what order), so every fact
 * of Redis's geohash is kept here in one pure, testable place: no keyspace,
 * no client, no allocation; tests/unit/test_geohash.c checks it alone.
 *
 * A position is stored as the score of a sorted-set member: the 52-bit
 * interleaving (step 26) of the latitude cell (even bits) and the longitude
 * cell (odd bits), over longitude [-180,180] and latitude
 * [-85.05112878,85.05112878] (the Web Mercator limits Redis uses).
 */
#ifndef FERRY_GEOHASH_H
#define FERRY_GEOHASH_H

#include <stdint.h>

#define GEO_STEP_MAX 26
#define GEO_LAT_MIN (-85.05112878)
#define GEO_LAT_MAX 85.05112878
#define GEO_LONG_MIN (-180.0)
#define GEO_LONG_MAX 180.0
#define GEO_EARTH_RADIUS_M 6372797.560856

typedef struct geo_range {
    double min, max;
} geo_range;

typedef struct geo_bits {
    uint64_t bits;
    uint8_t step;           /* bits per coordinate; 0 with bits 0: "no cell" */
} geo_bits;

typedef struct geo_area {
    geo_bits hash;
    geo_range lon, lat;
} geo_area;

typedef struct geo_neighbors {
    geo_bits north, east, west, south, north_east, south_east, north_west, south_west;
} geo_neighbors;

/* The ranges of the stored scores: lon [-180,180], lat +-85.05112878. */
void geo_coord_ranges(geo_range *lon, geo_range *lat);

/* Encode (lon, lat) into a cell of `step` bits per coordinate over the
 * given ranges. 0 when step is not 1..32, a range is empty, or the point
 * is outside the WGS84 limits above or the given ranges. */
int geo_encode(const geo_range *lon_r, const geo_range *lat_r, double lon, double lat, uint8_t step,
               geo_bits *out);
int geo_encode_wgs84(double lon, double lat, uint8_t step, geo_bits *out);
/* The cell's bounds (0 for the "no cell" value). */
int geo_decode(geo_range lon_r, geo_range lat_r, geo_bits h, geo_area *out);
/* The centre of a cell over the stored ranges, clamped to the limits. */
int geo_decode_wgs84_xy(geo_bits h, double xy[2]);
/* The position of a member from its sorted-set score (the score converted
 * to 64 bits as x86-64 code compiled by gcc converts it, so that scores
 * no GEOADD wrote decode as they do in redis-server). */
uint64_t geo_score_bits(double score);
int geo_decode_score(double score, double xy[2]);

/* The 8 cells around h (same step). */
void geo_neighbors_of(const geo_bits *h, geo_neighbors *n);
/* The cell's bits shifted to the 52-bit score scale. */
uint64_t geo_align52(geo_bits h);
/* The score interval [min, max) of the members inside cell h. */
void geo_cell_scores(geo_bits h, uint64_t *min, uint64_t *max);

/* Haversine distance in meters (Earth radius 6372797.560856). */
double geo_distance(double lon1, double lat1, double lon2, double lat2);
/* Distance from the centre (x1, y1) to (x2, y2) into *dist; 0 when it is
 * farther than radius_m. */
int geo_in_radius(double x1, double y1, double x2, double y2, double radius_m, double *dist);
/* Whether (x2, y2) is inside the width_m x height_m box centred on
 * (x1, y1) (Redis's east-west and north-south arc checks); if so its
 * distance from the centre into *dist. */
int geo_in_box(double width_m, double height_m, double x1, double y1, double x2, double y2, double *dist);

/* A search area: a circle (radius) or a box (width x height), in the unit
 * whose size in meters is `conversion`, centred on xy = (lon, lat). */
enum { GEO_SHAPE_CIRCLE = 1, GEO_SHAPE_BOX = 2 };
typedef struct geo_shape {
    int type;
    double xy[2];
    double conversion;
    double radius;
    double width, height;
    double bounds[4];       /* filled by geo_search_cells: min lon, min lat, max lon, max lat */
} geo_shape;

/* The cells a search walks: the centre cell and its neighbours, those that
 * cannot hold results zeroed (step and pruning as Redis computes them). */
typedef struct geo_cells {
    geo_bits hash;
    geo_area area;
    geo_neighbors neighbors;
} geo_cells;
void geo_search_cells(geo_shape *s, geo_cells *out);
/* The 9 cells in Redis's walking order: centre, N, S, E, W, NE, NW, SE, SW. */
void geo_cells_order(const geo_cells *c, geo_bits out[9]);

/* The standard 11-character geohash (base32, latitude over [-90,90]) of
 * the member whose score is given, as GEOHASH prints it; 0 if it cannot
 * be decoded. out gets 11 characters and a NUL. */
int geo_hash_string(double score, char out[12]);

#endif
