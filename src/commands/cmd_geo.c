/* cmd_geo.c - the GEO commands that add and read positions: GEOADD,
 * GEODIST, GEOHASH, GEOPOS; the argument parsers and reply formats shared
 * with the searches (cmd_geo.h); and the command table of the whole group
 * (the searches, GEOSEARCH[STORE] and the GEORADIUS family, are in
 * cmd_geo_search.c).
 *
 * Why on sorted sets: as in Redis, a geo index is a plain sorted set whose
 * scores are 52-bit geohashes (geohash.h), so TYPE says zset, every ZSET
 * command works on it, and GEOADD is ZADD with computed scores (same
 * options NX/XX/CH, the same "zadd" event, WATCH and waiter signalling).
 * Argument checks run in redis-server 7.0.15's order with its error texts.
 */
#include <stdio.h>
#include <string.h>
#include "blocking.h"
#include "cmd_geo.h"
#include "cmd_zset.h"
#include "geohash.h"
#include "reply.h"
#include "util.h"
#include "zmalloc.h"

/* ---- shared parsers and replies ------------------------------------------- */

/* A double as Redis's getDoubleFromObjectOrReply parses it; msg is the
 * error text (NULL: "value is not a valid float"). */
static int parse_double(client *c, span s, double *v, const char *msg) {
    if (str_to_d(s.p, s.len, v)) return 1;
    if (msg) reply_error(c, msg);
    else reply_err_notfloat(c);
    return 0;
}

int geo_parse_lonlat(client *c, const span *argv, double xy[2]) {
    for (int i = 0; i < 2; i++)
        if (!parse_double(c, argv[i], &xy[i], NULL)) return 0;
    if (xy[0] < GEO_LONG_MIN || xy[0] > GEO_LONG_MAX || xy[1] < GEO_LAT_MIN || xy[1] > GEO_LAT_MAX) {
        reply_errorf(c, "ERR invalid longitude,latitude pair %f,%f", xy[0], xy[1]);
        return 0;
    }
    return 1;
}

double geo_parse_unit(client *c, span u) {
    if (zopt_is(u, "m")) return 1;
    if (zopt_is(u, "km")) return 1000;
    if (zopt_is(u, "ft")) return 0.3048;
    if (zopt_is(u, "mi")) return 1609.34;
    reply_error(c, "ERR unsupported unit provided. please use M, KM, FT, MI");
    return -1;
}

int geo_parse_distance(client *c, const span *argv, double *conversion, double *radius) {
    double d;
    if (!parse_double(c, argv[0], &d, "ERR need numeric radius")) return 0;
    if (d < 0) {
        reply_error(c, "ERR radius cannot be negative");
        return 0;
    }
    *radius = d;
    double to_m = geo_parse_unit(c, argv[1]);
    if (to_m < 0) return 0;
    *conversion = to_m;
    return 1;
}

int geo_parse_box(client *c, const span *argv, double *conversion, double *width, double *height) {
    double w, h;
    if (!parse_double(c, argv[0], &w, "ERR need numeric width") ||
        !parse_double(c, argv[1], &h, "ERR need numeric height"))
        return 0;
    if (h < 0 || w < 0) {
        reply_error(c, "ERR height or width cannot be negative");
        return 0;
    }
    *height = h;
    *width = w;
    double to_m = geo_parse_unit(c, argv[2]);
    if (to_m < 0) return 0;
    *conversion = to_m;
    return 1;
}

void geo_reply_distance(client *c, double d) {
    char buf[400];
    int n = snprintf(buf, sizeof buf, "%.4f", d);
    if (n < 0) n = 0;
    if ((size_t)n >= sizeof buf) n = (int)sizeof buf - 1;
    reply_bulk(c, buf, (size_t)n);
}

void geo_reply_coord(client *c, double v) {
    char buf[128]; /* |v| <= 180 */
    size_t n = ld_to_str_human(buf, sizeof buf, (long double)v);
    if (c->resp >= 3) {
        reply_raw(c, ",", 1);
        reply_raw(c, buf, n);
        reply_raw(c, "\r\n", 2);
    } else {
        reply_bulk(c, buf, n);
    }
}

/* ---- GEOADD --------------------------------------------------------------- */

/* GEOADD key [NX|XX] [CH] lon lat member ...: ZADD with each member's
 * score the geohash of its position. */
static void cmd_geoadd(client *c) {
    int xx = 0, nx = 0, ch = 0, first = 2;
    for (; first < c->argc; first++) {
        span o = c->argv[first];
        if (zopt_is(o, "nx")) nx = 1;
        else if (zopt_is(o, "xx")) xx = 1;
        else if (zopt_is(o, "ch")) ch = 1;
        else break;
    }
    int elements = (c->argc - first) / 3;
    if ((c->argc - first) % 3 || (xx && nx) || elements == 0) {
        reply_err_syntax(c); /* (no elements: ZADD's own syntax error) */
        return;
    }
    double stack[16], *scores = elements <= 16 ? stack : zmalloc(sizeof(double) * (size_t)elements);
    for (int i = 0; i < elements; i++) {
        double xy[2];
        if (!geo_parse_lonlat(c, c->argv + first + 3 * i, xy)) goto done;
        geo_bits h;
        geo_encode_wgs84(xy[0], xy[1], GEO_STEP_MAX, &h);
        scores[i] = (double)geo_align52(h);
    }
    span key = c->argv[1];
    dnode *n = NULL;
    zset *zs = NULL;
    int r = zkey_lookup(c, key, 1, &n, &zs);
    if (r < 0) goto done;
    if (r == 0) {
        if (xx) {
            reply_int(c, 0);
            goto done;
        }
        zs = zset_new_for_add(c->argv[first + 2].len);
        n = db_add_ptr(c->db, key.p, key.len, OBJ_ZSET, zset_enc(zs), zs, -1);
    }
    int flags = (nx ? ZADD_NX : 0) | (xx ? ZADD_XX : 0);
    long long added = 0, updated = 0;
    for (int i = 0; i < elements; i++) {
        span m = c->argv[first + 3 * i + 2];
        int out = 0;
        double ns;
        zset_add(zs, scores[i], m.p, m.len, flags, &out, &ns); /* a geohash is never NaN */
        if (out & ZADD_OUT_ADDED) added++;
        if (out & ZADD_OUT_UPDATED) updated++;
    }
    reply_int(c, ch ? added + updated : added);
    if (added || updated || zset_len(zs) == 0) {
        zkey_written(c, key, n, zs, added + updated, !added && !updated ? NULL : "zadd");
        if (added) signal_key_ready(c->db, key.p, key.len);
    }
done:
    if (scores != stack) zfree(scores);
}

/* ---- GEODIST / GEOHASH / GEOPOS ------------------------------------------- */

static void cmd_geodist(client *c) {
    double to_m = 1;
    if (c->argc == 5) {
        to_m = geo_parse_unit(c, c->argv[4]);
        if (to_m < 0) return;
    } else if (c->argc > 5) {
        reply_err_syntax(c);
        return;
    }
    zset *zs;
    int r = zkey_lookup(c, c->argv[1], 0, NULL, &zs);
    if (r <= 0) {
        if (r == 0) reply_null(c);
        return;
    }
    double s1, s2, a[2], b[2];
    if (!zset_score(zs, c->argv[2].p, c->argv[2].len, &s1) || !zset_score(zs, c->argv[3].p, c->argv[3].len, &s2) ||
        !geo_decode_score(s1, a) || !geo_decode_score(s2, b)) {
        reply_null(c);
        return;
    }
    geo_reply_distance(c, geo_distance(a[0], a[1], b[0], b[1]) / to_m);
}

static void cmd_geohash(client *c) {
    zset *zs = NULL;
    if (zkey_lookup(c, c->argv[1], 0, NULL, &zs) < 0) return;
    reply_array(c, c->argc - 2);
    for (int j = 2; j < c->argc; j++) {
        double score;
        char buf[12];
        if (!zs || !zset_score(zs, c->argv[j].p, c->argv[j].len, &score) || !geo_hash_string(score, buf))
            reply_null(c);
        else
            reply_bulk(c, buf, 11);
    }
}

static void cmd_geopos(client *c) {
    zset *zs = NULL;
    if (zkey_lookup(c, c->argv[1], 0, NULL, &zs) < 0) return;
    reply_array(c, c->argc - 2);
    for (int j = 2; j < c->argc; j++) {
        double score, xy[2];
        if (!zs || !zset_score(zs, c->argv[j].p, c->argv[j].len, &score) || !geo_decode_score(score, xy)) {
            reply_null_array(c);
            continue;
        }
        reply_array(c, 2);
        geo_reply_coord(c, xy[0]);
        geo_reply_coord(c, xy[1]);
    }
}

/* ---- command table -------------------------------------------------------- */

#define GEO_SEARCH_COMPLEXITY                                                                                  \
    "O(N+log(M)) where N is the number of elements in the grid-aligned bounding box area around the shape "   \
    "provided as the filter and M is the number of items inside the shape"
#define GEO_RADIUS_COMPLEXITY                                                                                  \
    "O(N+log(M)) where N is the number of elements inside the bounding box of the circular area delimited "   \
    "by center and radius and M is the number of items inside the index."

static command geo_commands[] = {
    CMD("geoadd", cmd_geoadd, -5, .flags = CMD_WRITE | CMD_DENYOOM, .run_argc = 7, .acl = "write geo slow", CMD_KEYS(1, 1, 1),
        .summary = "Add one or more geospatial items in the geospatial index represented using a sorted set",
        .since = "3.2.0",
        .complexity = "O(log(N)) for each item added, where N is the number of elements in the sorted set."),
    CMD("geodist", cmd_geodist, -4, .flags = CMD_READONLY, .acl = "read geo slow", CMD_KEYS(1, 1, 1),
        .summary = "Returns the distance between two members of a geospatial index", .since = "3.2.0",
        .complexity = "O(log(N))"),
    CMD("geohash", cmd_geohash, -2, .flags = CMD_READONLY, .acl = "read geo slow", CMD_KEYS(1, 1, 1),
        .summary = "Returns members of a geospatial index as standard geohash strings", .since = "3.2.0",
        .complexity = "O(log(N)) for each member requested, where N is the number of elements in the sorted set."),
    CMD("geopos", cmd_geopos, -2, .flags = CMD_READONLY, .acl = "read geo slow", CMD_KEYS(1, 1, 1),
        .summary = "Returns longitude and latitude of members of a geospatial index", .since = "3.2.0",
        .complexity = "O(N) where N is the number of members requested."),
    CMD("geosearch", cmd_geosearch, -7, .flags = CMD_READONLY, .acl = "read geo slow", CMD_KEYS(1, 1, 1),
        .summary = "Query a sorted set representing a geospatial index to fetch members inside an area of a box "
            "or a circle.", .since = "6.2.0", .complexity = GEO_SEARCH_COMPLEXITY),
    CMD("geosearchstore", cmd_geosearchstore, -8, .flags = CMD_WRITE | CMD_DENYOOM, .acl = "write geo slow",
        CMD_KEYS(1, 2, 1),
        .summary = "Query a sorted set representing a geospatial index to fetch members inside an area of a box "
            "or a circle, and store the result in another key.", .since = "6.2.0",
        .complexity = GEO_SEARCH_COMPLEXITY),
    CMD("georadius", cmd_georadius, -6, .flags = CMD_WRITE | CMD_DENYOOM | CMD_MOVABLE_KEYS,
        .acl = "write geo slow", CMD_KEYS(1, 1, 1),
        .summary = "Query a sorted set representing a geospatial index to fetch members matching a given "
            "maximum distance from a point", .since = "3.2.0", .complexity = GEO_RADIUS_COMPLEXITY),
    CMD("georadius_ro", cmd_georadius_ro, -6, .flags = CMD_READONLY, .acl = "read geo slow", CMD_KEYS(1, 1, 1),
        .summary = "A read-only variant for GEORADIUS", .since = "3.2.10", .complexity = GEO_RADIUS_COMPLEXITY),
    CMD("georadiusbymember", cmd_georadiusbymember, -5, .flags = CMD_WRITE | CMD_DENYOOM | CMD_MOVABLE_KEYS,
        .acl = "write geo slow", CMD_KEYS(1, 1, 1),
        .summary = "Query a sorted set representing a geospatial index to fetch members matching a given "
            "maximum distance from a member", .since = "3.2.0", .complexity = GEO_RADIUS_COMPLEXITY),
    CMD("georadiusbymember_ro", cmd_georadiusbymember_ro, -5, .flags = CMD_READONLY, .acl = "read geo slow",
        CMD_KEYS(1, 1, 1), .summary = "A read-only variant for GEORADIUSBYMEMBER", .since = "3.2.10",
        .complexity = GEO_RADIUS_COMPLEXITY),
    {0},
};
const command_group geo_group = {"geo", geo_commands};
