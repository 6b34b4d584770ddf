/* fuzz_rdb_enc.c - libFuzzer target for src/persist/rdb_enc.c, the readers and the
 * listpack builder for the encodings inside RDB files and DUMP payloads.
 *
 * Why: RESTORE payloads and RDB files are untrusted bytes, and their
 * listpacks, ziplists, zipmaps and intsets are parsed by hand: a length
 * trusted one step too early is a heap overflow. The input, an exact-size
 * heap copy so ASan flags any read past len, is validated and iterated, and
 * this target checks that:
 *  - every string element lies inside the buffer;
 *  - the validator and a plain iteration agree (the count, or -1; iteration
 *    alone may only succeed where the header's count is what is wrong);
 *  - the elements of anything that validates, rebuilt into a listpack with
 *    the builder, validate again as the same elements (as text: a "1"
 *    string entry comes back as the integer 1), rlp_bytes predicted the
 *    size, and rebuilding the rebuilt listpack gives the same bytes;
 *  - a valid intset's values ascend, and rintset_build gives back the same
 *    bytes when the input uses the narrowest width.
 *
 * Input layout: byte 0 (mod 4) selects listpack, ziplist, zipmap, intset;
 * the rest is the encoding.
 *
 * Build: make build/fuzz/fuzz_rdb_enc
 * Run:   build/fuzz/fuzz_rdb_enc -max_total_time=30 <scratch copy of fuzz/corpus/rdb_enc>
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rdb_enc.h"
#include "util.h"
#include "zmalloc.h"

#include "fuzz_check.h"

/* Elements as read: integers, or spans of the input (or of a rebuild). */
typedef struct elems {
    renc_elem *e;
    size_t n, cap;
} elems;

static void push(elems *l, const renc_elem *e) {
    if (l->n == l->cap) {
        l->cap = l->cap ? l->cap * 2 : 16;
        l->e = realloc(l->e, l->cap * sizeof *l->e);
        CHECK(l->e);
    }
    l->e[l->n++] = *e;
}

static void inside(const renc_elem *e, const unsigned char *buf, size_t len) {
    if (!e->is_int) CHECK(e->p >= buf && e->len <= len && e->p - buf <= (ptrdiff_t)(len - e->len));
}

/* Reads with the iterator of kind k: the count, or -1 on an error. */
static long long read_all(int k, const unsigned char *b, size_t len, elems *out) {
    rlp_iter li;
    rzl_iter zi;
    rzm_iter mi;
    renc_elem e, v;
    int st = k == 0 ? rlp_iter_init(&li, b, len) : k == 1 ? rzl_iter_init(&zi, b, len) : rzm_iter_init(&mi, b, len);
    long long n = 0;
    while (st >= 0 && (st = k == 0 ? rlp_next(&li, &e) : k == 1 ? rzl_next(&zi, &e) : rzm_next(&mi, &e, &v)) == 1) {
        inside(&e, b, len);
        push(out, &e);
        if (k == 2) {
            inside(&v, b, len);
            push(out, &v);
        }
        n++;
    }
    return st < 0 ? -1 : n;
}

static long long validate(int k, const unsigned char *b, size_t len) {
    return k == 0 ? rlp_validate(b, len) : k == 1 ? rzl_validate(b, len) : rzm_validate(b, len);
}

static uint64_t get16(const unsigned char *p) { return (uint64_t)p[0] | (uint64_t)p[1] << 8; }

/* The header count that made validation fail although iteration worked. */
static int count_wrong(int k, const unsigned char *b, long long m) {
    if (k == 2) return b[0] != 254 && b[0] != m;
    uint64_t c = get16(b + (k == 0 ? 4 : 8));
    return c != 65535 && c != (uint64_t)m;
}

/* An element as text: its bytes, or its decimal form in buf. */
static const void *text(const renc_elem *e, char *buf, size_t *len) {
    if (!e->is_int) {
        *len = e->len;
        return e->p;
    }
    *len = ll_to_str(buf, e->v);
    return buf;
}

static int same_text(const renc_elem *a, const renc_elem *b) {
    char ba[24], bb[24];
    size_t la, lb;
    const void *pa = text(a, ba, &la), *pb = text(b, bb, &lb);
    return la == lb && memcmp(pa, pb, la) == 0;
}

static unsigned char *rebuild(const elems *l, size_t *len) {
    rlp_builder b;
    rlp_init(&b);
    for (size_t i = 0; i < l->n; i++) {
        if (l->e[i].is_int) rlp_append_int(&b, l->e[i].v);
        else rlp_append(&b, l->e[i].p, l->e[i].len);
    }
    CHECK(b.count == l->n);
    size_t predicted = rlp_bytes(&b);
    unsigned char *lp = rlp_finish(&b, len);
    CHECK(lp && *len == predicted);
    return lp;
}

/* The listpack of a valid input's elements holds the same ones, and is a
 * fixed point of rebuilding. */
static void check_rebuild(const elems *l) {
    size_t len, len2;
    unsigned char *lp = rebuild(l, &len);
    elems back = {0};
    CHECK(rlp_validate(lp, len) == (long long)l->n);
    CHECK(read_all(0, lp, len, &back) == (long long)l->n);
    for (size_t i = 0; i < l->n; i++) CHECK(same_text(&l->e[i], &back.e[i]));
    unsigned char *lp2 = rebuild(&back, &len2);
    CHECK(len2 == len && memcmp(lp, lp2, len) == 0);
    zfree(lp2);
    free(back.e);
    zfree(lp);
}

static void fuzz_container(int k, const unsigned char *b, size_t len) {
    long long n = validate(k, b, len);
    elems l = {0};
    long long m = read_all(k, b, len, &l);
    if (n >= 0) {
        CHECK(m == n);
        check_rebuild(&l);
    } else if (m >= 0) {
        CHECK(count_wrong(k, b, m));
    }
    free(l.e);
}

static size_t width_of(int64_t v) { return v >= INT16_MIN && v <= INT16_MAX ? 2 : v >= INT32_MIN && v <= INT32_MAX ? 4 : 8; }

static void fuzz_intset(const unsigned char *b, size_t len) {
    long long n = rintset_validate(b, len);
    if (n < 0) return;
    CHECK(len >= 8);
    int64_t *v = malloc(sizeof *v * (size_t)(n ? n : 1));
    CHECK(v);
    size_t w = 2;
    for (long long i = 0; i < n; i++) {
        v[i] = rintset_get(b, (size_t)i);
        CHECK(i == 0 || v[i - 1] < v[i]);
        if (width_of(v[i]) > w) w = width_of(v[i]);
    }
    size_t blen;
    unsigned char *is = rintset_build(v, (size_t)n, &blen);
    CHECK(rintset_validate(is, blen) == n);
    if (w == b[0]) CHECK(blen == len && memcmp(is, b, len) == 0);
    zfree(is);
    free(v);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    if (size < 1) return 0;
    int k = data[0] % 4;
    size_t len = size - 1;
    unsigned char *b = malloc(len ? len : 1);
    CHECK(b);
    memcpy(b, data + 1, len);
    if (k == 3) fuzz_intset(b, len);
    else fuzz_container(k, b, len);
    free(b);
    return 0;
}
