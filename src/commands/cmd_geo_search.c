/* cmd_geo_search.c - the GEO searches: GEOSEARCH, GEOSEARCHSTORE,
 * GEORADIUS, GEORADIUS_RO, GEORADIUSBYMEMBER, GEORADIUSBYMEMBER_RO (and
 * the STORE / STOREDIST forms of the GEORADIUS pair), one engine for all.
 *
 * Why it follows Redis so closely: the replies must be byte-identical to
 * redis-server 7.0.15's, and which members a search finds, in which order
 * (also when distances tie or COUNT cuts the list), depends on the exact
 * walk: the centre cell and its 8 neighbours (geo_search_cells), each cell
 * read as the score range [min, max) of the sorted set in ascending order,
 * a cell equal to the one walked just before skipped, ANY stopping at
 * COUNT hits; then the sort: a full sort with libc qsort (as Redis calls
 * it), or, when COUNT keeps fewer than were found, the partial quicksort
 * (Bentley-McIlroy with range pruning) Redis uses, reimplemented below so
 * that ties come out in the same order. Options are parsed in Redis's
 * order and produce its error texts.
 */
#include <stdlib.h>
#include <string.h>
#include "cmd_geo.h"
#include "cmd_zset.h"
#include "geohash.h"
#include "reply.h"
#include "server.h"
#include "util.h"
#include "zmalloc.h"

/* search flavours */
#define GS_COORDS 0x01       /* GEORADIUS[_RO]: lon lat radius unit */
#define GS_MEMBER 0x02       /* GEORADIUSBYMEMBER[_RO]: member radius unit */
#define GS_NOSTORE 0x04      /* the _RO forms: no STORE / STOREDIST */
#define GS_SEARCH 0x08       /* GEOSEARCH[STORE]: FROM... / BY... options */
#define GS_SEARCHSTORE 0x10  /* GEOSEARCHSTORE dst src ... */

enum { SORT_NONE, SORT_ASC, SORT_DESC };

/* A found member: position, distance (meters) from the centre, score;
 * the member bytes point into the source set (unmodified while used). */
typedef struct gpoint {
    double lon, lat, dist, score;
    const char *m;
    size_t len;
} gpoint;

typedef struct gpoints {
    gpoint *v;
    size_t n, cap;
} gpoints;

static void gpoints_push(gpoints *a, const gpoint *p) {
    if (a->n == a->cap) {
        a->cap = a->cap ? a->cap * 2 : 8;
        a->v = zrealloc(a->v, a->cap * sizeof *a->v);
    }
    a->v[a->n++] = *p;
}

/* ---- the walk ------------------------------------------------------------- */

static int in_shape(const geo_shape *s, double score, double xy[2], double *dist) {
    if (!geo_decode_score(score, xy)) return 0;
    if (s->type == GEO_SHAPE_CIRCLE)
        return geo_in_radius(s->xy[0], s->xy[1], xy[0], xy[1], s->radius * s->conversion, dist);
    return geo_in_box(s->width * s->conversion, s->height * s->conversion, s->xy[0], s->xy[1], xy[0], xy[1], dist);
}

/* The members with min <= score < max that lie in the shape, appended in
 * ascending order; stops once `limit` (0: none) points are collected. */
static void collect_cell(const zset *zs, geo_bits cell, const geo_shape *s, gpoints *ga, size_t limit) {
    uint64_t min, max;
    geo_cell_scores(cell, &min, &max);
    zscore_range r = {(double)min, (double)max, 0, 1};
    zs_iter it;
    for (zs_iter_score(&it, zs, &r, 0); zs_iter_valid(&it); zs_iter_next(&it)) {
        double score = zs_iter_score_of(&it);
        if (!zscore_lte_max(score, &r)) break;
        gpoint p = {.score = score, .dist = 0};
        double xy[2];
        if (in_shape(s, score, xy, &p.dist)) {
            p.lon = xy[0];
            p.lat = xy[1];
            p.m = zs_iter_member(&it, &p.len);
            gpoints_push(ga, &p);
        }
        if (ga->n && limit && ga->n >= limit) break;
    }
}

static void collect(const zset *zs, geo_shape *s, gpoints *ga, size_t limit) {
    geo_cells gc;
    geo_bits cells[9];
    geo_search_cells(s, &gc);
    geo_cells_order(&gc, cells);
    unsigned last = 0;
    for (unsigned i = 0; i < 9; i++) {
        if (cells[i].bits == 0 && cells[i].step == 0) continue;
        /* huge radii: adjacent cells may be the same one (the centre, i == 0,
         * is never compared, as in Redis) */
        if (last && cells[i].bits == cells[last].bits && cells[i].step == cells[last].step) continue;
        if (ga->n && limit && ga->n >= limit) break;
        collect_cell(zs, cells[i], s, ga, limit);
        last = i;
    }
}

/* ---- sorting -------------------------------------------------------------- */

static int gp_asc(const void *a, const void *b) {
    const gpoint *x = a, *y = b;
    if (x->dist > y->dist) return 1;
    if (x->dist == y->dist) return 0;
    return -1;
}

static int gp_desc(const void *a, const void *b) { return -gp_asc(a, b); }

typedef int gp_cmp(const void *, const void *);

static void gp_swap(gpoint *a, gpoint *b) {
    gpoint t = *a;
    *a = *b;
    *b = t;
}

static void gp_vecswap(gpoint *a, gpoint *b, long n) {
    for (long i = 0; i < n; i++) gp_swap(a + i, b + i);
}

static gpoint *gp_med3(gpoint *a, gpoint *b, gpoint *c, gp_cmp *cmp) {
    if (cmp(a, b) < 0) return cmp(b, c) < 0 ? b : (cmp(a, c) < 0 ? c : a);
    return cmp(b, c) > 0 ? b : (cmp(a, c) < 0 ? a : c);
}

static void gp_insertion(gpoint *a, long n, gp_cmp *cmp) {
    for (long m = 1; m < n; m++)
        for (long l = m; l > 0 && cmp(&a[l - 1], &a[l]) > 0; l--) gp_swap(&a[l], &a[l - 1]);
}

/* Partial quicksort: only the elements lo..hi (inclusive) of the whole
 * array need to end up in their sorted places; partitions entirely
 * outside that range are left unsorted. Same pivots, partitioning and
 * insertion sort below 7 elements as Redis 7.0's pqsort (which has no
 * "no swaps: switch to insertion sort" shortcut), hence the same order of
 * equal elements. */
static void gp_pqsort(gpoint *a, long n, gp_cmp *cmp, const gpoint *lo, const gpoint *hi) {
    for (;;) {
        if (n < 7) {
            gp_insertion(a, n, cmp);
            return;
        }
        gpoint *pm = a + n / 2;
        if (n > 7) {
            gpoint *pl = a, *pn = a + n - 1;
            if (n > 40) {
                long d = n / 8;
                pl = gp_med3(pl, pl + d, pl + 2 * d, cmp);
                pm = gp_med3(pm - d, pm, pm + d, cmp);
                pn = gp_med3(pn - 2 * d, pn - d, pn, cmp);
            }
            pm = gp_med3(pl, pm, pn, cmp);
        }
        gp_swap(a, pm);
        long pa = 1, pb = 1, pc = n - 1, pd = n - 1;
        int r;
        for (;;) {
            while (pb <= pc && (r = cmp(&a[pb], a)) <= 0) {
                if (r == 0) {
                    gp_swap(&a[pa], &a[pb]);
                    pa++;
                }
                pb++;
            }
            while (pb <= pc && (r = cmp(&a[pc], a)) >= 0) {
                if (r == 0) {
                    gp_swap(&a[pc], &a[pd]);
                    pd--;
                }
                pc--;
            }
            if (pb > pc) break;
            gp_swap(&a[pb], &a[pc]);
            pb++;
            pc--;
        }
        long pn = n, k;
        k = pa < pb - pa ? pa : pb - pa;
        gp_vecswap(a, a + pb - k, k);
        k = pd - pc < pn - pd - 1 ? pd - pc : pn - pd - 1;
        gp_vecswap(a + pb, a + pn - k, k);
        if ((k = pb - pa) > 1) {
            const gpoint *first = a, *last = a + k - 1;
            if (!((lo < first && hi < first) || (lo > last && hi > last))) gp_pqsort(a, k, cmp, lo, hi);
        }
        if ((k = pd - pc) <= 1) return;
        a = a + pn - k;
        n = k;
        const gpoint *first = a, *last = a + k - 1;
        if ((lo < first && hi < first) || (lo > last && hi > last)) return;
    }
}

/* ---- the command ---------------------------------------------------------- */

/* WITHHASH prints the score converted to long long (as x86-64 converts
 * an out-of-range double: LLONG_MIN). */
static long long score_as_ll(double s) {
    if (s >= -9223372036854775808.0 && s < 9223372036854775808.0) return (long long)s;
    return (long long)(-9223372036854775807LL - 1);
}

static void geo_search(client *c, int src_idx, int flags) {
    span storekey = {NULL, 0};
    int has_store = 0, storedist = 0;
    zset *zs = NULL;
    int r = zkey_lookup(c, c->argv[src_idx], 0, NULL, &zs);
    if (r < 0) return;
    if (r == 0) zs = NULL;

    int base;
    geo_shape shape;
    memset(&shape, 0, sizeof shape);
    if (flags & GS_COORDS) {
        base = 6;
        shape.type = GEO_SHAPE_CIRCLE;
        if (!geo_parse_lonlat(c, c->argv + 2, shape.xy)) return;
        if (!geo_parse_distance(c, c->argv + base - 2, &shape.conversion, &shape.radius)) return;
    } else if ((flags & GS_MEMBER) && !zs) {
        base = 5; /* nothing to look up: parse the options, then reply empty */
    } else if (flags & GS_MEMBER) {
        base = 5;
        shape.type = GEO_SHAPE_CIRCLE;
        double score;
        if (!zset_score(zs, c->argv[2].p, c->argv[2].len, &score) || !geo_decode_score(score, shape.xy)) {
            reply_error(c, "ERR could not decode requested zset member");
            return;
        }
        if (!geo_parse_distance(c, c->argv + base - 2, &shape.conversion, &shape.radius)) return;
    } else {
        base = 2;
        if (flags & GS_SEARCHSTORE) {
            base = 3;
            storekey = c->argv[1];
            has_store = 1;
        }
    }

    int withdist = 0, withhash = 0, withcoords = 0, frommember = 0, fromloc = 0, byradius = 0, bybox = 0;
    int sort = SORT_NONE, any = 0;
    long long count = 0;
    int remaining = c->argc - base;
    for (int i = 0; i < remaining; i++) {
        span a = c->argv[base + i];
        if (zopt_is(a, "withdist")) {
            withdist = 1;
        } else if (zopt_is(a, "withhash")) {
            withhash = 1;
        } else if (zopt_is(a, "withcoord")) {
            withcoords = 1;
        } else if (zopt_is(a, "any")) {
            any = 1;
        } else if (zopt_is(a, "asc")) {
            sort = SORT_ASC;
        } else if (zopt_is(a, "desc")) {
            sort = SORT_DESC;
        } else if (zopt_is(a, "count") && i + 1 < remaining) {
            span v = c->argv[base + i + 1];
            if (!str_to_ll(v.p, v.len, &count)) {
                reply_err_notint(c);
                return;
            }
            if (count <= 0) {
                reply_error(c, "ERR COUNT must be > 0");
                return;
            }
            i++;
        } else if ((zopt_is(a, "store") || zopt_is(a, "storedist")) && i + 1 < remaining &&
                   !(flags & GS_NOSTORE) && !(flags & GS_SEARCH)) {
            storekey = c->argv[base + i + 1];
            has_store = 1;
            storedist = zopt_is(a, "storedist");
            i++;
        } else if (zopt_is(a, "storedist") && (flags & GS_SEARCH) && (flags & GS_SEARCHSTORE)) {
            storedist = 1;
        } else if (zopt_is(a, "frommember") && i + 1 < remaining && (flags & GS_SEARCH) && !fromloc) {
            if (zs) {
                span m = c->argv[base + i + 1];
                double score;
                if (!zset_score(zs, m.p, m.len, &score) || !geo_decode_score(score, shape.xy)) {
                    reply_error(c, "ERR could not decode requested zset member");
                    return;
                }
            }
            frommember = 1;
            i++;
        } else if (zopt_is(a, "fromlonlat") && i + 2 < remaining && (flags & GS_SEARCH) && !frommember) {
            if (!geo_parse_lonlat(c, c->argv + base + i + 1, shape.xy)) return;
            fromloc = 1;
            i += 2;
        } else if (zopt_is(a, "byradius") && i + 2 < remaining && (flags & GS_SEARCH) && !bybox) {
            if (!geo_parse_distance(c, c->argv + base + i + 1, &shape.conversion, &shape.radius)) return;
            shape.type = GEO_SHAPE_CIRCLE;
            byradius = 1;
            i += 2;
        } else if (zopt_is(a, "bybox") && i + 3 < remaining && (flags & GS_SEARCH) && !byradius) {
            if (!geo_parse_box(c, c->argv + base + i + 1, &shape.conversion, &shape.width, &shape.height)) return;
            shape.type = GEO_SHAPE_BOX;
            bybox = 1;
            i += 3;
        } else {
            reply_err_syntax(c);
            return;
        }
    }

    if (has_store && (withdist || withhash || withcoords)) {
        reply_errorf(c, "ERR %s is not compatible with WITHDIST, WITHHASH and WITHCOORD options",
                     (flags & GS_SEARCHSTORE) ? "GEOSEARCHSTORE" : "STORE option in GEORADIUS");
        return;
    }
    span name = c->argv[0];
    int name_len = (int)strnlen(name.p, name.len);
    if ((flags & GS_SEARCH) && !(frommember || fromloc)) {
        reply_errorf(c, "ERR exactly one of FROMMEMBER or FROMLONLAT can be specified for %.*s", name_len, name.p);
        return;
    }
    if ((flags & GS_SEARCH) && !(byradius || bybox)) {
        reply_errorf(c, "ERR exactly one of BYRADIUS and BYBOX can be specified for %.*s", name_len, name.p);
        return;
    }
    if (any && !count) {
        reply_error(c, "ERR the ANY argument requires COUNT argument");
        return;
    }

    if (!zs) {
        if (has_store) zkey_store(c, storekey, NULL, NULL);
        else reply_array(c, 0);
        return;
    }

    /* COUNT keeps the nearest: sort ascending unless told otherwise (or ANY) */
    if (count != 0 && sort == SORT_NONE && !any) sort = SORT_ASC;

    gpoints ga = {NULL, 0, 0};
    collect(zs, &shape, &ga, any ? (size_t)count : 0);
    if (ga.n == 0 && !has_store) {
        reply_array(c, 0);
        return;
    }
    long total = (long)ga.n;
    long returned = (count == 0 || total < count) ? total : (long)count;
    if (sort != SORT_NONE && total > 1) {
        gp_cmp *cmp = sort == SORT_ASC ? gp_asc : gp_desc;
        if (returned == total) qsort(ga.v, ga.n, sizeof *ga.v, cmp);
        else gp_pqsort(ga.v, total, cmp, ga.v, ga.v + returned - 1);
    }

    if (!has_store) {
        int opts = withdist + withcoords + withhash;
        reply_array(c, returned);
        for (long i = 0; i < returned; i++) {
            gpoint *p = &ga.v[i];
            if (opts) reply_array(c, opts + 1);
            reply_bulk(c, p->m, p->len);
            if (withdist) geo_reply_distance(c, p->dist / shape.conversion);
            if (withhash) reply_int(c, score_as_ll(p->score));
            if (withcoords) {
                reply_array(c, 2);
                geo_reply_coord(c, p->lon);
                geo_reply_coord(c, p->lat);
            }
        }
    } else {
        zset *dst = NULL;
        if (returned) {
            size_t maxlen = 0;
            for (long i = 0; i < returned; i++)
                if (ga.v[i].len > maxlen) maxlen = ga.v[i].len;
            dst = zset_new((size_t)returned, maxlen);
            for (long i = 0; i < returned; i++) {
                gpoint *p = &ga.v[i];
                zset_insert_new(dst, storedist ? p->dist / shape.conversion : p->score, p->m, p->len);
            }
        }
        zkey_store(c, storekey, dst, (flags & GS_SEARCH) ? "geosearchstore" : "georadiusstore");
        if (returned > 1) srv.dirty += returned - 1; /* Redis counts one change per stored member */
    }
    zfree(ga.v);
}

void cmd_georadius(client *c) { geo_search(c, 1, GS_COORDS); }
void cmd_georadius_ro(client *c) { geo_search(c, 1, GS_COORDS | GS_NOSTORE); }
void cmd_georadiusbymember(client *c) { geo_search(c, 1, GS_MEMBER); }
void cmd_georadiusbymember_ro(client *c) { geo_search(c, 1, GS_MEMBER | GS_NOSTORE); }
void cmd_geosearch(client *c) { geo_search(c, 1, GS_SEARCH); }
void cmd_geosearchstore(client *c) { geo_search(c, 2, GS_SEARCH | GS_SEARCHSTORE); }
