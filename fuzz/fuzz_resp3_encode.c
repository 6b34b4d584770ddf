/* fuzz_resp3_encode.c - libFuzzer target for the reply encoders (src/io/reply.c)
 * in RESP2 and RESP3.
 *
 * Why: every byte a client reads comes out of reply.c, and a single bad
 * length, a CR/LF leaking into a status or error line, or a RESP3 type in a
 * RESP2 stream desynchronises the client for the rest of the connection.
 * The input drives a random tree of reply_* calls (aggregates with their
 * elements, bulks of any bytes and sizes, integers, doubles from raw bits,
 * errors with CR/LF, verbatim strings, nulls, booleans) on a fake client,
 * sometimes draining part of the output ring so that staging wraps around
 * it. An independent minimal RESP reader below then parses the produced
 * bytes and checks that they are well formed for the client's protocol and
 * carry exactly the values that were encoded, in order.
 *
 * Input: byte 0 bit 0 selects RESP2/RESP3; the rest drives the generator.
 * Build/run: make fuzz (or build/fuzz/fuzz_resp3_encode -max_total_time=60 DIR).
 */
#include "client.h"
#include "config.h"
#include "db.h"
#include "reply.h"
#include "server.h"
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz_check.h"

#define MAX_DEPTH 6
#define MAX_EVENTS 4096

/* ---- what was encoded: one event per value, in pre-order --------------- */

enum { EV_STATUS, EV_ERROR, EV_INT, EV_BULK, EV_NULL, EV_NULL_ARRAY, EV_ARRAY, EV_MAP, EV_SET, EV_PUSH,
       EV_DOUBLE, EV_BOOL, EV_VERBATIM };

typedef struct event {
    int kind;
    long long ival;     /* integer, bool, aggregate count */
    double dval;
    char *bytes;        /* owned copy: text or payload */
    size_t len;
    char ext[4];        /* verbatim format */
} event;

typedef struct input {
    const uint8_t *p;
    size_t n, pos;
} input;

static event events[MAX_EVENTS];
static int nevents;
static char *out;          /* everything the client would have read */
static size_t out_len, out_cap;

static unsigned take(input *in) { return in->pos < in->n ? in->p[in->pos++] : 0; }

static uint64_t take64(input *in) {
    uint64_t v = 0;
    for (int i = 0; i < 8; i++) v = v << 8 | take(in);
    return v;
}

/* A length: mostly small, sometimes large enough for the ring's slow paths. */
static size_t take_len(input *in) {
    unsigned b = take(in);
    if (b < 200) return b % 40;
    if (b < 250) return (size_t)(b - 200) * 100;
    return 4000 + (size_t)take(in) * 300;
}

static char *take_bytes(input *in, size_t len) {
    char *s = malloc(len + 1);
    for (size_t i = 0; i < len; i++) s[i] = (char)(in->pos < in->n ? in->p[in->pos++] : (uint8_t)('a' + i % 26));
    s[len] = '\0';
    return s;
}

static event *add_event(int kind) {
    CHECK(nevents < MAX_EVENTS);
    event *e = &events[nevents++];
    memset(e, 0, sizeof *e);
    e->kind = kind;
    return e;
}

static void drain(client *c, size_t max) {
    struct iovec iov[2];
    int cnt = ring_iov(&c->out, iov);
    size_t took = 0;
    for (int i = 0; i < cnt && took < max; i++) {
        size_t k = iov[i].iov_len < max - took ? iov[i].iov_len : max - took;
        if (out_len + k > out_cap) {
            out_cap = (out_len + k) * 2;
            out = realloc(out, out_cap);
        }
        memcpy(out + out_len, iov[i].iov_base, k);
        out_len += k;
        took += k;
    }
    ring_consume(&c->out, took);
}

/* ---- the generator -------------------------------------------------------- */

static const char *const help_lines[] = {"FUZZ <subcommand>", "    line two", NULL};

static void gen_value(client *c, input *in, int depth);

static void gen_aggregate(client *c, input *in, int depth, int kind) {
    long n = (long)(take(in) % 6);
    event *e = add_event(kind);
    e->ival = n;
    if (kind == EV_ARRAY) reply_array(c, n);
    else if (kind == EV_MAP) reply_map(c, n);
    else if (kind == EV_SET) reply_set(c, n);
    else reply_push(c, n);
    long items = kind == EV_MAP ? 2 * n : n;
    for (long i = 0; i < items; i++) gen_value(c, in, depth + 1);
}

static void gen_error(client *c, input *in) {
    size_t len = 1 + take_len(in);
    char *s = take_bytes(in, len);
    for (size_t i = 0; i < len; i++)
        if (s[i] == '\0') s[i] = '0'; /* C string API */
    int formatted = take(in) & 1;
    if (formatted) reply_errorf(c, "%s", s);
    else reply_error(c, s);
    for (size_t i = 0; i < len; i++)
        if (s[i] == '\r' || s[i] == '\n') s[i] = ' '; /* what the client must see */
    event *e = add_event(EV_ERROR);
    e->bytes = s;
    e->len = len;
}

static void gen_scalar(client *c, input *in, unsigned op) {
    event *e;
    switch (op) {
    case 0: {
        size_t len = take_len(in);
        char *s = take_bytes(in, len);
        for (size_t i = 0; i < len; i++)
            if (s[i] == '\r' || s[i] == '\n' || s[i] == '\0') s[i] = '.'; /* callers' contract */
        reply_status(c, s);
        e = add_event(EV_STATUS);
        e->bytes = s;
        e->len = len;
        break;
    }
    case 1: gen_error(c, in); break;
    case 2: case 3:
        e = add_event(EV_INT);
        e->ival = (long long)take64(in);
        if (op == 2) reply_int(c, e->ival);
        else {
            reply_bulk_ll(c, e->ival);
            e->kind = EV_BULK;
            e->bytes = malloc(24);
            e->len = (size_t)snprintf(e->bytes, 24, "%lld", e->ival);
        }
        break;
    case 4: {
        size_t len = take_len(in);
        e = add_event(EV_BULK);
        e->bytes = take_bytes(in, len);
        e->len = len;
        reply_bulk(c, e->bytes, len);
        break;
    }
    case 5: add_event(EV_NULL); reply_null(c); break;
    case 6: add_event(EV_NULL_ARRAY); reply_null_array(c); break;
    case 7: {
        uint64_t bits = take64(in);
        double d;
        memcpy(&d, &bits, sizeof d);
        if (take(in) & 1) d = (double)(int64_t)bits / 1024.0; /* ordinary values too */
        e = add_event(EV_DOUBLE);
        e->dval = d;
        reply_double(c, d);
        break;
    }
    case 8: e = add_event(EV_BOOL); e->ival = take(in) & 1; reply_bool(c, (int)e->ival); break;
    case 9: {
        size_t len = take_len(in);
        e = add_event(EV_VERBATIM);
        e->bytes = take_bytes(in, len);
        e->len = len;
        memcpy(e->ext, (take(in) & 1) ? "txt" : "mkd", 4);
        reply_verbatim(c, e->bytes, len, e->ext);
        break;
    }
    default:
        reply_help(c, help_lines);
        e = add_event(EV_ARRAY);
        e->ival = 2;
        for (int i = 0; i < 2; i++) {
            event *l = add_event(EV_STATUS);
            l->len = strlen(help_lines[i]);
            l->bytes = strdup(help_lines[i]);
        }
        break;
    }
}

static void gen_value(client *c, input *in, int depth) {
    unsigned op = take(in) % 15;
    if (take(in) % 8 == 0) drain(c, take_len(in) * 7); /* partial write: the ring wraps */
    if (op >= 11 && depth < MAX_DEPTH && nevents < MAX_EVENTS - 64)
        gen_aggregate(c, in, depth, EV_ARRAY + (int)(op - 11));
    else
        gen_scalar(c, in, op % 11);
}

/* ---- an independent minimal RESP reader ------------------------------------ */

typedef struct reader {
    const char *b;
    size_t n, pos;
    int resp;
    int ev;         /* next expected event */
} reader;

/* The line at r->pos (without CRLF): no bare CR or LF inside. */
static const char *read_line(reader *r, size_t *len) {
    const char *start = r->b + r->pos;
    const char *cr = memchr(start, '\r', r->n - r->pos);
    CHECK(cr != NULL && (size_t)(cr - r->b) + 1 < r->n && cr[1] == '\n');
    *len = (size_t)(cr - start);
    CHECK(memchr(start, '\n', *len) == NULL);
    r->pos = (size_t)(cr - r->b) + 2;
    return start;
}

static long long line_int(const char *s, size_t len) {
    CHECK(len > 0 && len < 21);
    char buf[24];
    memcpy(buf, s, len);
    buf[len] = '\0';
    size_t i = buf[0] == '-';
    CHECK(i < len);
    CHECK(buf[i] != '0' || len == i + 1); /* canonical: no leading zeros */
    CHECK(!(buf[0] == '-' && buf[1] == '0'));
    for (size_t k = i; k < len; k++) CHECK(buf[k] >= '0' && buf[k] <= '9');
    return strtoll(buf, NULL, 10);
}

static const char *read_payload(reader *r, long long len) {
    CHECK(len >= 0 && (unsigned long long)len + 2 <= r->n - r->pos);
    const char *p = r->b + r->pos;
    CHECK(p[len] == '\r' && p[len + 1] == '\n');
    r->pos += (size_t)len + 2;
    return p;
}

static void check_double_text(const char *s, size_t len, double want) {
    char buf[64];
    CHECK(len > 0 && len < sizeof buf);
    memcpy(buf, s, len);
    buf[len] = '\0';
    if (isnan(want)) {
        CHECK(strcmp(buf, "nan") == 0);
        return;
    }
    if (isinf(want)) {
        CHECK(strcmp(buf, want > 0 ? "inf" : "-inf") == 0);
        return;
    }
    char *end;
    double got = strtod(buf, &end);
    CHECK(*end == '\0');
    CHECK(got == want);
}

static void read_value(reader *r);

static void expect_bytes(const char *p, size_t len, const event *e) {
    CHECK(len == e->len);
    CHECK(len == 0 || memcmp(p, e->bytes, len) == 0);
}

/* A RESP2 bulk string: "$len" line already read into (line, len). */
static void read_bulk_body(reader *r, const char *line, size_t len, const event *e) {
    long long blen = line_int(line, len);
    const char *p = read_payload(r, blen);
    if (e->kind == EV_DOUBLE) check_double_text(p, (size_t)blen, e->dval);
    else expect_bytes(p, (size_t)blen, e);
}

static void read_aggregate(reader *r, const event *e, const char *line, size_t len) {
    long long n = line_int(line, len);
    long long items = e->ival;
    if (e->kind == EV_MAP) items = r->resp >= 3 ? e->ival : 2 * e->ival;
    CHECK(n == items);
    long long children = e->kind == EV_MAP ? 2 * e->ival : e->ival;
    for (long long i = 0; i < children; i++) read_value(r);
}

static void read_value(reader *r) {
    CHECK(r->ev < nevents);
    const event *e = &events[r->ev++];
    CHECK(r->pos < r->n);
    char tag = r->b[r->pos++];
    size_t len;
    const char *line = read_line(r, &len);
    int r3 = r->resp >= 3;
    switch (e->kind) {
    case EV_STATUS: CHECK(tag == '+'); expect_bytes(line, len, e); break;
    case EV_ERROR: CHECK(tag == '-'); expect_bytes(line, len, e); break;
    case EV_INT: CHECK(tag == ':'); CHECK(line_int(line, len) == e->ival); break;
    case EV_BULK: CHECK(tag == '$'); read_bulk_body(r, line, len, e); break;
    case EV_NULL: CHECK(r3 ? tag == '_' && len == 0 : tag == '$' && line_int(line, len) == -1); break;
    case EV_NULL_ARRAY: CHECK(r3 ? tag == '_' && len == 0 : tag == '*' && line_int(line, len) == -1); break;
    case EV_ARRAY: CHECK(tag == '*'); read_aggregate(r, e, line, len); break;
    case EV_MAP: CHECK(tag == (r3 ? '%' : '*')); read_aggregate(r, e, line, len); break;
    case EV_SET: CHECK(tag == (r3 ? '~' : '*')); read_aggregate(r, e, line, len); break;
    case EV_PUSH: CHECK(tag == (r3 ? '>' : '*')); read_aggregate(r, e, line, len); break;
    case EV_DOUBLE:
        if (r3) {
            CHECK(tag == ',');
            check_double_text(line, len, e->dval);
        } else {
            CHECK(tag == '$');
            read_bulk_body(r, line, len, e);
        }
        break;
    case EV_BOOL:
        if (r3) CHECK(tag == '#' && len == 1 && line[0] == (e->ival ? 't' : 'f'));
        else CHECK(tag == ':' && line_int(line, len) == e->ival);
        break;
    case EV_VERBATIM:
        if (r3) {
            CHECK(tag == '=');
            long long vlen = line_int(line, len);
            const char *p = read_payload(r, vlen);
            CHECK(vlen >= 4 && memcmp(p, e->ext, 3) == 0 && p[3] == ':');
            expect_bytes(p + 4, (size_t)vlen - 4, e);
        } else {
            CHECK(tag == '$');
            read_bulk_body(r, line, len, e);
        }
        break;
    default: CHECK(0);
    }
}

/* ---- the target ----------------------------------------------------------- */

static int ready;

static void setup(void) {
    config_defaults(&srv.cfg);
    srv.cfg.loglevel = LOG_NOTHING_;
    db_init_all(srv.cfg.databases);
    ready = 1;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    if (!ready) setup();
    if (size < 1) return 0;
    input in = {data + 1, size - 1, 0};
    client *c = client_create(-1);
    c->resp = (data[0] & 1) ? 3 : 2;
    nevents = 0;
    out_len = 0;
    int top = 0;
    while (in.pos < in.n && nevents < MAX_EVENTS - 64) {
        gen_value(c, &in, 0);
        top++;
    }
    drain(c, SIZE_MAX);
    reader r = {out, out_len, 0, c->resp, 0};
    for (int i = 0; i < top; i++) read_value(&r);
    CHECK(r.pos == out_len);   /* nothing unexpected after the last value */
    CHECK(r.ev == nevents);
    for (int i = 0; i < nevents; i++) free(events[i].bytes);
    client_free(c);
    return 0;
}
