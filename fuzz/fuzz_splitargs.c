/* fuzz_splitargs.c - libFuzzer target for src/base/splitargs.c.
 *
 * Why: the splitter rewrites untrusted bytes in place (every inline
 * request, every config line), so an off-by-one is a heap overflow. This
 * target splits the input, an exact-size heap copy so ASan flags any access
 * past len, and checks that:
 *  - spans lie inside the bytes consumed, in order, without overlapping,
 *    and bytes after the stop position are never modified;
 *  - a caller with room for one token per call (resuming where the last
 *    call stopped, as resp_parse.c does on RESP_NEED_ARGV) gets exactly
 *    the same tokens as one with room for all;
 *  - SPLITARGS_NO_NUL_ESCAPE only ever turns a success into an error;
 *  - the tokens quoted with sb_repr (what CONFIG REWRITE writes) and
 *    joined by spaces split back to the same tokens.
 *
 * Input layout: byte 0 bit 0 = SPLITARGS_NO_NUL_ESCAPE for the main split;
 * the rest is the line.
 *
 * Build: make build/fuzz/fuzz_splitargs
 * Run:   build/fuzz/fuzz_splitargs -max_total_time=20 fuzz/corpus/splitargs
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sbuf.h"
#include "splitargs.h"
#include "zmalloc.h"

#include "fuzz_check.h"

typedef struct {
    ssize_t n;            /* tokens, or SPLITARGS_ERROR */
    splitargs_span *sp;   /* n spans */
    char *buf;            /* the split copy */
} split_out;

/* Splits an exact-size copy of in[0, len), `room` spans per call. */
static split_out split(const char *in, size_t len, unsigned flags, size_t room)
{
    split_out o = { 0, malloc((len + 1) * sizeof(splitargs_span)), malloc(len ? len : 1) };
    size_t pos = 0;

    CHECK(o.sp && o.buf);
    memcpy(o.buf, in, len);
    for (;;) {
        size_t before = pos;
        ssize_t got = splitargs(o.buf, len, &pos, flags, o.sp + o.n, room);
        if (got == SPLITARGS_ERROR) {
            o.n = SPLITARGS_ERROR;
            return o;
        }
        CHECK(got >= 0 && (size_t)got <= room && pos <= len);
        for (ssize_t k = o.n; k < o.n + got; k++) {
            CHECK(o.sp[k].off >= before && o.sp[k].len <= pos - o.sp[k].off);
            before = o.sp[k].off + o.sp[k].len;
        }
        o.n += got;
        CHECK(memcmp(o.buf + pos, in + pos, len - pos) == 0); /* the rest untouched */
        if (pos == len)
            return o;
        CHECK((size_t)got == room && (size_t)o.n < len);
    }
}

static void split_free(split_out *o)
{
    free(o->sp);
    free(o->buf);
}

static int same_tokens(const split_out *a, const split_out *b)
{
    if (a->n != b->n)
        return 0;
    for (ssize_t k = 0; k < a->n; k++)
        if (a->sp[k].len != b->sp[k].len ||
            memcmp(a->buf + a->sp[k].off, b->buf + b->sp[k].off, a->sp[k].len) != 0)
            return 0;
    return 1;
}

/* Quotes every token, joins them with spaces, splits the result again. */
static void check_repr_round_trip(const split_out *o)
{
    sbuf b = { 0 };
    split_out again;

    sb_add(&b, "", 0);
    for (ssize_t k = 0; k < o->n; k++) {
        if (k)
            sb_addc(&b, ' ');
        sb_repr(&b, o->buf + o->sp[k].off, o->sp[k].len);
    }
    again = split(b.p, b.len, 0, b.len + 1);
    CHECK(same_tokens(o, &again));
    split_free(&again);
    sb_free(&b);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const char *in = (const char *)data + 1;
    size_t len;
    unsigned flags;
    split_out all, one, other;

    if (size < 1)
        return 0;
    flags = data[0] & 1 ? SPLITARGS_NO_NUL_ESCAPE : 0;
    len = size - 1;
    all = split(in, len, flags, len + 1);
    one = split(in, len, flags, 1);
    CHECK(all.n == one.n);
    if (all.n >= 0)
        CHECK(same_tokens(&all, &one));
    other = split(in, len, flags ^ SPLITARGS_NO_NUL_ESCAPE, len + 1);
    if (flags) /* the flag may only add an error */
        CHECK(all.n == SPLITARGS_ERROR || same_tokens(&all, &other));
    else
        CHECK(other.n == SPLITARGS_ERROR || same_tokens(&all, &other));
    if (all.n >= 0)
        check_repr_round_trip(&all);
    split_free(&all);
    split_free(&one);
    split_free(&other);
    return 0;
}
