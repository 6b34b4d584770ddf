/* cmd_geo.h - helpers shared by the GEO command files (cmd_geo.c: GEOADD,
 * GEODIST, GEOHASH, GEOPOS, the argument parsers and the group's table;
 * cmd_geo_search.c: GEOSEARCH[STORE] and the GEORADIUS family). Not a
 * public API: only those two files include it.
 */
#ifndef FERRY_CMD_GEO_H
#define FERRY_CMD_GEO_H

#include "client.h"

/* argv[0], argv[1]: longitude, latitude, parsed and range-checked as Redis
 * does (replies the error and returns 0 on failure). */
int geo_parse_lonlat(client *c, const span *argv, double xy[2]);
/* A unit name (m, km, ft, mi, any case): meters per unit, or -1 after
 * replying the error. */
double geo_parse_unit(client *c, span unit);
/* <radius> <unit>: 1, or 0 after replying the error. */
int geo_parse_distance(client *c, const span *argv, double *conversion, double *radius);
/* <width> <height> <unit>: 1, or 0 after replying the error. */
int geo_parse_box(client *c, const span *argv, double *conversion, double *width, double *height);
/* Replies: a distance ("%.4f", always a bulk string) and a coordinate
 * (17 decimals, trailing zeroes cut; a RESP3 double). */
void geo_reply_distance(client *c, double d);
void geo_reply_coord(client *c, double v);

/* cmd_geo_search.c */
void cmd_georadius(client *c);
void cmd_georadius_ro(client *c);
void cmd_georadiusbymember(client *c);
void cmd_georadiusbymember_ro(client *c);
void cmd_geosearch(client *c);
void cmd_geosearchstore(client *c);

#endif
