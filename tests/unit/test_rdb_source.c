/* test_rdb_source.c - Criterion unit tests for rdb_load_source (rdb.c): an
 * RDB loaded as it arrives, the way a replica with repl-diskless-load
 * reads its primary's snapshot from the socket.
 *
 * Why: the streamed loader runs each step over the bytes it has and, when
 * they run out, undoes the step and runs it again once more has come. A
 * step that changed something before starving, a position kept across a
 * buffer move, or a CRC that misses the dropped prefix would load a
 * different dataset, or refuse a good one, only for some chunkings. So a
 * snapshot is saved by the real writer and loaded back cut at every point,
 * in random chunks with pauses, and compared by DEBUG DIGEST's digest with
 * the dataset it came from; bad streams (cut short, a corrupt byte, bytes
 * after the end, a failing source) must fail with the offset.
 */
#include <criterion/criterion.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "config.h"
#include "db.h"
#include "digest.h"
#include "frand.h"
#include "rdb.h"
#include "registry.h"
#include "server.h"
#include "t_hash.h"
#include "t_list.h"
#include "zmalloc.h"

static void setup(void) {
    config_defaults(&srv.cfg);
    srv.cfg.loglevel = LOG_NOTHING_;
    srv.now_ms = 1700000000000LL;
    srv.lruclock = (uint32_t)(srv.now_ms / 1000);
    db_init_all(srv.cfg.databases);
    registry_init();
}

TestSuite(rdb_source, .init = setup);

/* ---- a dataset and its snapshot ------------------------------------------------ */

static void put_hash(db *d, const char *key, int fields, size_t vlen) {
    hashobj *h = hash_new();
    char *v = zmalloc(vlen);
    memset(v, 'h', vlen);
    for (int i = 0; i < fields; i++) {
        char f[32];
        hash_set(h, f, (size_t)snprintf(f, sizeof f, "field:%d", i), v, vlen);
    }
    zfree(v);
    db_add_ptr(d, key, strlen(key), OBJ_HASH, h->enc, h, -1);
}

static void put_list(db *d, const char *key, int items) {
    tlist *l = tl_new();
    for (int i = 0; i < items; i++) {
        char e[32];
        tl_push(l, 1, e, (size_t)snprintf(e, sizeof e, "item-%d", i * 7919));
    }
    db_add_ptr(d, key, strlen(key), OBJ_LIST, ENC_QUICKLIST, l, -1);
}

/* Strings small, integer and big (compressible and not), hashes in both
 * forms, a list, expiries, two databases. small: a few keys (for every
 * cut point). */
static void fill(int small) {
    db *d0 = db_get(0), *d3 = db_get(3);
    db_set_string(d0, "int", 3, "12345", 5, -1);
    db_set_string(d0, "ttl", 3, "soon", 4, srv.now_ms + 100000);
    put_hash(d0, "hsmall", 3, 5);
    db_set_string(d3, "other", 5, "db three", 8, -1);
    if (small) return;
    size_t big = 300000;
    char *v = zmalloc(big);
    for (size_t i = 0; i < big; i++) v[i] = (char)frand64();
    db_set_string(d0, "random", 6, v, big, -1);
    memset(v, 'x', big);
    db_set_string(d0, "zeros", 5, v, big, -1);
    zfree(v);
    put_hash(d0, "hbig", 2000, 40);
    put_list(d3, "list", 5000);
    for (int i = 0; i < 3000; i++) {
        char k[32], val[32];
        db_set_string(d0, k, (size_t)snprintf(k, sizeof k, "key:%d", i), val,
                      (size_t)snprintf(val, sizeof val, "value %d", i * 31), i % 3 ? -1 : srv.now_ms + 5000000 + i);
    }
}

static void flush_all(void) {
    for (int i = 0; i < db_count(); i++) db_flush(db_get(i));
}

static void dataset_digest(char hex[2 * DIGEST_LEN + 1]) {
    unsigned char d[DIGEST_LEN];
    digest_dataset(d);
    digest_hex(d, hex);
}

/* The dataset saved by the real writer: its bytes and digest; the
 * keyspace is left empty. */
static unsigned char *snapshot(int small, size_t *len, char hex[2 * DIGEST_LEN + 1]) {
    fill(small);
    dataset_digest(hex);
    char path[] = "/tmp/ferry-rdb-source-XXXXXX";
    int fd = mkstemp(path);
    cr_assert(fd >= 0);
    close(fd);
    rdb_options o = {.compress = 1, .checksum = 1};
    char err[256];
    cr_assert_eq(rdb_save_file(path, &o, err, sizeof err), 0, "%s", err);
    FILE *f = fopen(path, "rb");
    struct stat sb;
    cr_assert(f && stat(path, &sb) == 0);
    unsigned char *buf = zmalloc((size_t)sb.st_size);
    cr_assert_eq(fread(buf, 1, (size_t)sb.st_size, f), (size_t)sb.st_size);
    fclose(f);
    unlink(path);
    *len = (size_t)sb.st_size;
    flush_all();
    return buf;
}

/* ---- sources ---------------------------------------------------------------------- */

/* Gives buf in pieces: it pauses once (-2) at each cut point in cuts[]
 * (ascending) and every `pause_every` reads (0: never); at most `chunk`
 * bytes a read (0: as much as asked), never across a cut; fails (-1) at
 * `fail_at` (SIZE_MAX: never). */
typedef struct script {
    const unsigned char *buf;
    size_t len, pos;
    size_t cuts[2];
    int ncuts, next_cut;
    size_t chunk;
    int pause_every, reads, pauses;
    size_t fail_at;
} script;

static size_t at_most(size_t a, size_t b) { return a < b ? a : b; }

static long scripted(void *ud, void *out, size_t cap) {
    script *s = ud;
    if (s->pos >= s->fail_at) return -1;
    if (s->next_cut < s->ncuts && s->pos == s->cuts[s->next_cut]) {
        s->next_cut++;
        s->pauses++;
        return -2;
    }
    if (s->pause_every && ++s->reads % s->pause_every == 0) {
        s->pauses++;
        return -2;
    }
    if (s->pos == s->len) return 0;
    size_t n = at_most(s->len - s->pos, cap);
    if (s->chunk) n = at_most(n, s->chunk);
    if (s->next_cut < s->ncuts) n = at_most(n, s->cuts[s->next_cut] - s->pos);
    if (s->fail_at != SIZE_MAX) n = at_most(n, s->fail_at - s->pos);
    memcpy(out, s->buf + s->pos, n);
    s->pos += n;
    return (long)n;
}

static int progress_calls;
static int count_progress(void *ud, size_t done, size_t total) {
    (void)ud, (void)done, (void)total;
    progress_calls++;
    return 0;
}

static int delay_reads;
static long long no_delay(void *ud) {
    (void)ud;
    delay_reads++;
    return 0;
}

static int load(script *s, int tell_size, const rdb_load_hooks *h, char *err, size_t errlen) {
    rdb_source src = {scripted, s, tell_size ? s->len : 0, NULL};
    if (s->fail_at != SIZE_MAX) src.err = "the link broke";
    rdb_load_stats st;
    int rc = rdb_load_source(&src, h, &st, err, errlen);
    if (rc == 0) cr_assert_eq(st.bytes_read, s->len);
    return rc;
}

static script whole(const unsigned char *buf, size_t len) {
    return (script){.buf = buf, .len = len, .fail_at = SIZE_MAX};
}

static void expect_loaded(const char *want) {
    char got[2 * DIGEST_LEN + 1];
    dataset_digest(got);
    cr_assert_str_eq(got, want);
    flush_all();
}

/* ---- tests ----------------------------------------------------------------------------- */

Test(rdb_source, a_small_snapshot_cut_at_every_point_loads_the_same_dataset) {
    size_t len;
    char want[2 * DIGEST_LEN + 1];
    unsigned char *buf = snapshot(1, &len, want);
    char err[512];
    for (size_t cut = 0; cut <= len; cut++) {
        for (int tell = 0; tell < 2; tell++) {
            script s = whole(buf, len);
            s.cuts[0] = cut;
            s.ncuts = 1;
            cr_assert_eq(load(&s, tell, NULL, err, sizeof err), 0, "cut %zu: %s", cut, err);
            expect_loaded(want);
        }
        script two = whole(buf, len); /* and in two reads, as asked, with a pause before the rest */
        two.cuts[0] = cut;
        two.cuts[1] = cut + (len - cut) / 2;
        two.ncuts = 2;
        two.chunk = 3;
        cr_assert_eq(load(&two, 0, NULL, err, sizeof err), 0, "cut %zu: %s", cut, err);
        expect_loaded(want);
    }
    zfree(buf);
}

Test(rdb_source, a_big_snapshot_in_random_chunks_with_pauses_loads_the_same_dataset) {
    size_t len;
    char want[2 * DIGEST_LEN + 1];
    unsigned char *buf = snapshot(0, &len, want);
    char err[512];
    size_t chunks[] = {1, 7, 4096, 65536, 0};
    for (size_t i = 0; i < sizeof chunks / sizeof *chunks; i++) {
        for (int pause_every = 0; pause_every <= 3; pause_every += 3) {
            if (chunks[i] == 1 && pause_every) continue; /* a million pauses: the 1-byte case is enough */
            script s = whole(buf, len);
            s.chunk = chunks[i];
            s.pause_every = pause_every;
            s.cuts[0] = len / 3;
            s.cuts[1] = len / 2 + 11;
            s.ncuts = 2;
            cr_assert_eq(load(&s, (int)(i & 1), NULL, err, sizeof err), 0, "chunk %zu: %s", chunks[i], err);
            expect_loaded(want);
        }
    }
    zfree(buf);
}

Test(rdb_source, pauses_let_the_server_run_and_the_key_delay_is_read_again_after_them) {
    size_t len;
    char want[2 * DIGEST_LEN + 1];
    unsigned char *buf = snapshot(1, &len, want);
    char err[512];
    script s = whole(buf, len);
    s.pause_every = 2;
    s.chunk = 5;
    progress_calls = delay_reads = 0;
    rdb_load_hooks h = {.progress = count_progress, .every = 1u << 30, .key_delay = no_delay};
    cr_assert_eq(load(&s, 0, &h, err, sizeof err), 0, "%s", err);
    cr_assert_gt(progress_calls, 0, "a pause with the step still starved serves the server");
    cr_assert_leq(progress_calls, s.pauses + 1);
    cr_assert_eq(delay_reads, progress_calls, "key-load-delay is read again each time the server ran");
    expect_loaded(want);
    zfree(buf);
}

Test(rdb_source, a_stream_cut_short_fails_at_every_point_with_an_offset) {
    size_t len;
    char want[2 * DIGEST_LEN + 1];
    unsigned char *buf = snapshot(1, &len, want);
    char err[512];
    for (size_t end = 0; end < len; end++) {
        script s = whole(buf, end); /* the source ends early */
        s.chunk = 2;
        cr_assert_eq(load(&s, 0, NULL, err, sizeof err), -1, "ended at %zu", end);
        cr_assert(strstr(err, "at offset"), "%s", err);
        flush_all();
    }
    zfree(buf);
}

Test(rdb_source, a_failing_source_fails_the_load_with_its_reason) {
    size_t len;
    char want[2 * DIGEST_LEN + 1];
    unsigned char *buf = snapshot(0, &len, want);
    char err[512];
    script s = whole(buf, len);
    s.chunk = 1000;
    s.fail_at = len / 2;
    cr_assert_eq(load(&s, 1, NULL, err, sizeof err), -1);
    cr_assert(strstr(err, "the link broke at offset"), "%s", err);
    flush_all();
    zfree(buf);
}

Test(rdb_source, a_corrupt_byte_or_bytes_after_the_end_are_refused) {
    size_t len;
    char want[2 * DIGEST_LEN + 1];
    unsigned char *buf = snapshot(1, &len, want);
    char err[512];
    unsigned char *bad = zmalloc(len + 3);
    memcpy(bad, buf, len);
    bad[len - 12] ^= 0x20; /* inside the last value or the EOF opcode: the checksum no longer matches */
    script s = whole(bad, len);
    s.chunk = 9;
    cr_assert_eq(load(&s, 0, NULL, err, sizeof err), -1);
    flush_all();
    memcpy(bad, buf, len);
    memcpy(bad + len, "xyz", 3);
    script tail = whole(bad, len + 3);
    cr_assert_eq(load(&tail, 0, NULL, err, sizeof err), -1);
    cr_assert(strstr(err, "data after the end of the RDB"), "%s", err);
    flush_all();
    script ok = whole(bad, len); /* the same bytes without the tail load */
    cr_assert_eq(load(&ok, 0, NULL, err, sizeof err), 0, "%s", err);
    expect_loaded(want);
    zfree(bad);
    zfree(buf);
}

Test(rdb_source, into_stand_ins_leaves_the_live_databases_alone_until_swapped) {
    size_t len;
    char want[2 * DIGEST_LEN + 1];
    unsigned char *buf = snapshot(0, &len, want);
    char err[512];
    db_set_string(db_get(0), "old", 3, "dataset", 7, -1);
    char before[2 * DIGEST_LEN + 1];
    dataset_digest(before);
    db *into = db_new_set(db_count());
    rdb_load_hooks h = {.into = into};
    script s = whole(buf, len);
    s.chunk = 10000;
    cr_assert_eq(load(&s, 1, &h, err, sizeof err), 0, "%s", err);
    char during[2 * DIGEST_LEN + 1];
    dataset_digest(during);
    cr_assert_str_eq(during, before, "the live databases did not change");
    cr_assert_gt(dict_size(&into[0].keys), 3000);
    for (int i = 0; i < db_count(); i++) db_swap(db_get(i), &into[i]);
    db_free_set(into, db_count());
    expect_loaded(want);
    zfree(buf);
}
