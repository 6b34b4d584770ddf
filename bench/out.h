/* out.h - ferry-bench's growing output buffer and RESP request encoders.
 *
 * Why: the request pools (work.c) and the prefill commands (prefill.c) are
 * both RESP multibulk requests written once, before timing, into one
 * contiguous buffer; this is the one place that knows how to append to such
 * a buffer. An allocation failure is sticky (oom) so callers check once at
 * the end instead of after every append.
 */
#ifndef FB_OUT_H
#define FB_OUT_H

#include <stddef.h>

typedef struct fb_out {
    char *p;
    size_t len, cap;
    int oom;          /* an allocation failed: later appends are dropped */
} fb_out;

/* room for n more bytes at p + len (len unchanged), or NULL (oom set) */
char *fb_out_room(fb_out *o, size_t n);
void fb_out_mem(fb_out *o, const void *s, size_t n);
void fb_out_str(fb_out *o, const char *s);
/* "<c><n>\r\n": an array ('*') or bulk ('$') header */
void fb_out_hdr(fb_out *o, char c, size_t n);
/* n copies of c */
void fb_out_fill(fb_out *o, char c, size_t n);
/* "$<n>\r\n<s>\r\n" */
void fb_out_bulk(fb_out *o, const char *s, size_t n);
void fb_out_free(fb_out *o);

#endif
