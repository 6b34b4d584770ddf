/* intset.c - sorted array of distinct int64 values at the narrowest width
 * that fits them all (see intset.h). Sets of up to set-max-intset-entries
 * integers use it: 2 bytes per element for small values instead of a hash
 * node per member, and ascending iteration order, which is what Redis
 * replies for such sets. */
#include "intset.h"
#include "zmalloc.h"
#include <string.h>

static uint32_t width_for(int64_t v) {
    if (v >= INT16_MIN && v <= INT16_MAX) return 2;
    if (v >= INT32_MIN && v <= INT32_MAX) return 4;
    return 8;
}

static int64_t get_at(const intset *is, uint32_t pos, uint32_t width) {
    const char *p = is->data + (size_t)pos * width;
    if (width == 2) { int16_t x; memcpy(&x, p, 2); return x; }
    if (width == 4) { int32_t x; memcpy(&x, p, 4); return x; }
    int64_t x;
    memcpy(&x, p, 8);
    return x;
}

static void set_at(intset *is, uint32_t pos, int64_t v) {
    char *p = is->data + (size_t)pos * is->width;
    if (is->width == 2) { int16_t x = (int16_t)v; memcpy(p, &x, 2); }
    else if (is->width == 4) { int32_t x = (int32_t)v; memcpy(p, &x, 4); }
    else memcpy(p, &v, 8);
}

static intset *resize(intset *is, uint32_t length) {
    is = zrealloc(is, sizeof(intset) + (size_t)length * is->width);
    return is;
}

int64_t intset_get(const intset *is, uint32_t pos) { return get_at(is, pos, is->width); }

size_t intset_blob_len(const intset *is) { return sizeof(intset) + (size_t)is->length * is->width; }

intset *intset_new(void) {
    intset *is = zmalloc(sizeof(intset));
    is->width = 2;
    is->length = 0;
    return is;
}

void intset_free(intset *is) { zfree(is); }

intset *intset_dup(const intset *is) {
    size_t n = intset_blob_len(is);
    intset *d = zmalloc(n);
    memcpy(d, is, n);
    return d;
}

/* Binary search: 1 and *pos = its index if v is present, else 0 and *pos =
 * the index where v would be inserted. */
static int search(const intset *is, int64_t v, uint32_t *pos) {
    uint32_t lo = 0, hi = is->length;
    if (hi && v > get_at(is, hi - 1, is->width)) { /* appending ascending runs is common */
        *pos = hi;
        return 0;
    }
    while (lo < hi) {
        uint32_t mid = lo + (hi - lo) / 2;
        int64_t x = get_at(is, mid, is->width);
        if (x == v) {
            *pos = mid;
            return 1;
        }
        if (x < v) lo = mid + 1;
        else hi = mid;
    }
    *pos = lo;
    return 0;
}

int intset_find(const intset *is, int64_t v) {
    uint32_t pos;
    return width_for(v) <= is->width && search(is, v, &pos);
}

/* v does not fit the current width, so it is below or above every element:
 * widen all elements (back to front, so nothing is overwritten before it is
 * read) leaving a hole at the front or the back for v. */
static intset *upgrade_and_add(intset *is, int64_t v) {
    uint32_t old = is->width, len = is->length;
    uint32_t front = v < 0;
    is->width = width_for(v);
    is = resize(is, len + 1);
    for (uint32_t i = len; i-- > 0;) set_at(is, i + front, get_at(is, i, old));
    set_at(is, front ? 0 : len, v);
    is->length = len + 1;
    return is;
}

intset *intset_add(intset *is, int64_t v, int *added) {
    *added = 0;
    if (width_for(v) > is->width) {
        *added = 1;
        return upgrade_and_add(is, v);
    }
    uint32_t pos;
    if (search(is, v, &pos)) return is;
    is = resize(is, is->length + 1);
    size_t w = is->width;
    memmove(is->data + (pos + 1) * w, is->data + pos * w, (is->length - pos) * w);
    set_at(is, pos, v);
    is->length++;
    *added = 1;
    return is;
}

intset *intset_remove(intset *is, int64_t v, int *removed) {
    uint32_t pos;
    *removed = 0;
    if (width_for(v) > is->width || !search(is, v, &pos)) return is;
    size_t w = is->width;
    memmove(is->data + pos * w, is->data + (pos + 1) * w, (is->length - pos - 1) * w);
    is->length--;
    *removed = 1;
    return resize(is, is->length);
}

intset *intset_filter(intset *is, int (*keep)(int64_t v, void *ud), void *ud) {
    uint32_t out = 0;
    for (uint32_t i = 0; i < is->length; i++) {
        int64_t v = get_at(is, i, is->width);
        if (keep(v, ud)) set_at(is, out++, v);
    }
    is->length = out;
    return resize(is, out);
}
