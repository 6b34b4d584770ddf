/* out.c - ferry-bench's growing output buffer and RESP encoders (see out.h). */
#include "out.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

char *fb_out_room(fb_out *o, size_t n) {
    if (o->oom) return NULL;
    if (o->len + n > o->cap) {
        size_t nc = o->cap ? o->cap : 4096;
        char *np;
        while (nc < o->len + n) nc *= 2;
        np = realloc(o->p, nc);
        if (!np) {
            o->oom = 1;
            return NULL;
        }
        o->p = np;
        o->cap = nc;
    }
    return o->p + o->len;
}

void fb_out_mem(fb_out *o, const void *s, size_t n) {
    char *d = fb_out_room(o, n);
    if (!d) return;
    memcpy(d, s, n);
    o->len += n;
}

void fb_out_str(fb_out *o, const char *s) { fb_out_mem(o, s, strlen(s)); }

void fb_out_fill(fb_out *o, char c, size_t n) {
    char *d = fb_out_room(o, n);
    if (!d) return;
    memset(d, c, n);
    o->len += n;
}

void fb_out_hdr(fb_out *o, char c, size_t n) {
    char tmp[32];
    int k = snprintf(tmp, sizeof tmp, "%c%zu\r\n", c, n);
    fb_out_mem(o, tmp, (size_t)k);
}

void fb_out_bulk(fb_out *o, const char *s, size_t n) {
    fb_out_hdr(o, '$', n);
    fb_out_mem(o, s, n);
    fb_out_mem(o, "\r\n", 2);
}

void fb_out_free(fb_out *o) {
    free(o->p);
    memset(o, 0, sizeof *o);
}
