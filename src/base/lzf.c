/* lzf.c - LZF compression (the liblzf 3.6 stream format) for RDB strings.
 *
 * Why it is written the way it is: RDB files and DUMP payloads carry
 * strings compressed with the LZF that Redis 7.0 builds in, and ferry's
 * DUMP output should be byte-identical to Redis's. Any correct LZF stream
 * would load, but identity needs the same choices at every step, so the
 * compressor follows liblzf's algorithm as configured in Redis exactly:
 *
 *  - a hash table of 2^16 slots, indexed by a hash of the next 3 input
 *    bytes, remembers where each hash was last seen; a candidate back
 *    reference is that position, if it is less than 8 KB back, is not the
 *    first byte of the input and starts with the same 3 bytes;
 *  - a match is extended greedily up to 264 bytes, without reaching the
 *    last 2 input bytes (except for liblzf's 16-byte unrolled first step,
 *    which may run up to 2 bytes further near the end: reproduced);
 *  - "VERY_FAST": after a match only its last two positions are hashed;
 *  - literal bytes are gathered in runs of at most 32, each preceded by a
 *    header byte; the last 2 input bytes are always literals;
 *  - the output-space checks are liblzf's, so for a given out_cap we fail
 *    exactly when it does (Redis passes len - 4 and stores the string raw
 *    when compression fails).
 *
 * One deliberate difference: liblzf leaves its hash table uninitialised
 * (stale slots are rejected by the checks above when they point outside
 * the window, but can in principle offer a valid match); here the table
 * starts empty, so the output depends only on the input.
 *
 * An empty 2^16-slot table costs a 256 KB memset (~2 us), 25 times the
 * cost of compressing a 24-byte string, and short strings are most of a
 * dataset. Inputs under 4 KB use a small open-addressing map from slot
 * number to position instead, sized to the input (a 24-byte string clears
 * 256 bytes); it answers exactly what the big table would. Both live in one
 * 256 KB stack buffer: no allocation, nothing kept between calls.
 *
 * The decompressor checks every run against both buffers before copying;
 * its input is untrusted (RDB files, RESTORE payloads). */
#include "lzf.h"

#include <stdint.h>
#include <string.h>

#define LZF_HLOG 16
#define LZF_HSIZE (1u << LZF_HLOG)
#define LZF_MAX_LIT 32          /* longest literal run */
#define LZF_MAX_OFF (1u << 13)  /* back references reach 8 KB back */
#define LZF_MAX_REF (256u + 8u) /* longest match liblzf looks for */
#define LZF_SMALL_INPUT 4096    /* below this, the hash map instead of the table */

/* map entries pack a position in 16 bits; the map (at most 2 * input size
 * entries) shares the table's buffer */
_Static_assert(LZF_SMALL_INPUT <= 65536 && 2 * LZF_SMALL_INPUT <= LZF_HSIZE, "map must fit");

/* ---- the hash ------------------------------------------------------------ */

/* liblzf's rolling hash: the value keeps the last input bytes shifted in,
 * and the slot number mixes the low 3 of them (unsigned int arithmetic). */
static uint32_t hash_first(const uint8_t *p) {
    return (uint32_t)p[0] << 8 | p[1];
}

static uint32_t hash_next(uint32_t h, const uint8_t *p) {
    return h << 8 | p[2];
}

static uint32_t hash_slot(uint32_t h) {
    return ((h >> (3 * 8 - LZF_HLOG)) - h * 5) & (LZF_HSIZE - 1);
}

/* ---- the table of last positions ----------------------------------------- */

/* Maps a slot number to the last input position stored there; 0 means
 * "none" (position 0 can never be a match, so storing it is the same as
 * storing nothing). Either a direct table of LZF_HSIZE positions, or, for
 * small inputs, linear probing over entries (slot << 16 | position) with
 * 0 = empty, at most half full. */
typedef struct {
    uint32_t *slots;
    uint32_t mask;  /* map only: capacity - 1 */
    unsigned shift; /* map only: 32 - log2(capacity) */
    int direct;
} lzf_table;

static void table_init(lzf_table *t, uint32_t *buf, size_t in_len) {
    t->slots = buf;
    if (in_len >= LZF_SMALL_INPUT) {
        t->direct = 1;
        memset(buf, 0, LZF_HSIZE * sizeof *buf);
        return;
    }
    unsigned bits = 4;
    while (((size_t)1 << bits) < 2 * in_len) bits++;
    t->direct = 0;
    t->mask = (1u << bits) - 1;
    t->shift = 32 - bits;
    memset(buf, 0, ((size_t)1 << bits) * sizeof *buf);
}

/* Where map entries for `slot` start probing (Fibonacci hashing). */
static uint32_t map_home(const lzf_table *t, uint32_t slot) {
    return (slot * 0x9e3779b1u) >> t->shift;
}

/* Stores `pos` under `slot` and returns the position stored before. */
static uint32_t table_swap(lzf_table *t, uint32_t slot, uint32_t pos) {
    if (t->direct) {
        uint32_t old = t->slots[slot];
        t->slots[slot] = pos;
        return old;
    }
    for (uint32_t i = map_home(t, slot);; i = (i + 1) & t->mask) {
        uint32_t e = t->slots[i];
        if (e == 0 || e >> 16 == slot) {
            t->slots[i] = slot << 16 | pos;
            return e & 0xffff;
        }
    }
}

/* ---- compression --------------------------------------------------------- */

/* Output state: out[op] is the next free byte; while a literal run is open
 * its header byte is out[op - lit - 1] (reserved, written when it closes). */
typedef struct {
    uint8_t *out;
    size_t cap, op, lit;
} lzf_out;

/* Opens a new (empty) literal run by reserving its header byte. */
static void run_open(lzf_out *o) {
    o->lit = 0;
    o->op++;
}

/* Closes the literal run: writes its header, or gives back the reserved
 * byte if the run is empty. */
static void run_close(lzf_out *o) {
    if (o->lit)
        o->out[o->op - o->lit - 1] = (uint8_t)(o->lit - 1);
    else
        o->op--;
}

/* Appends one literal byte (space already checked). */
static void put_literal(lzf_out *o, uint8_t b) {
    o->out[o->op++] = b;
    if (++o->lit == LZF_MAX_LIT) {
        run_close(o);
        run_open(o);
    }
}

/* Length of the match at in[ref] for in[ip] (the first 3 bytes are known to
 * be equal), counted exactly as liblzf does: stop at LZF_MAX_REF or 2 bytes
 * before the end, but when more than 16 bytes are allowed first compare 16
 * bytes without looking at the limit. */
static size_t match_length(const uint8_t *in, size_t ref, size_t ip, size_t in_len) {
    size_t maxlen = in_len - ip - 2, len = 2;
    if (maxlen > LZF_MAX_REF) maxlen = LZF_MAX_REF;
    if (maxlen > 16)
        for (size_t stop = len + 16; len < stop;) {
            len++;
            if (in[ref + len] != in[ip + len]) return len;
        }
    do
        len++;
    while (len < maxlen && in[ref + len] == in[ip + len]);
    return len;
}

/* Writes a back reference of `len` bytes to `off` + 1 bytes back. */
static void put_backref(lzf_out *o, size_t len, size_t off) {
    size_t code = len - 2;
    if (code < 7) {
        o->out[o->op++] = (uint8_t)((off >> 8) + (code << 5));
    } else {
        o->out[o->op++] = (uint8_t)((off >> 8) + (7 << 5));
        o->out[o->op++] = (uint8_t)(code - 7);
    }
    o->out[o->op++] = (uint8_t)off;
}

static int same3(const uint8_t *a, const uint8_t *b) {
    return a[0] == b[0] && a[1] == b[1] && a[2] == b[2];
}

static size_t compress_with(lzf_table *t, const uint8_t *in, size_t in_len, lzf_out *o) {
    size_t ip = 0;
    uint32_t h = in_len >= 2 ? hash_first(in) : 0;
    run_open(o);
    while (ip + 2 < in_len) {
        h = hash_next(h, in + ip);
        size_t ref = table_swap(t, hash_slot(h), (uint32_t)ip);
        size_t off = ip - ref - 1;
        if (ref == 0 || off >= LZF_MAX_OFF || !same3(in + ref, in + ip)) {
            if (o->op >= o->cap) return 0;
            put_literal(o, in[ip++]);
            continue;
        }
        if (o->op - (o->lit == 0) + 4 >= o->cap) return 0; /* room for the reference + a header */
        run_close(o);
        size_t len = match_length(in, ref, ip, in_len);
        put_backref(o, len, off);
        run_open(o);
        ip += len;
        if (ip + 2 >= in_len) break;
        /* VERY_FAST: hash only the last two positions the match covered */
        ip -= 2;
        h = hash_first(in + ip);
        for (int k = 0; k < 2; k++, ip++) {
            h = hash_next(h, in + ip);
            table_swap(t, hash_slot(h), (uint32_t)ip);
        }
    }
    if (o->op + 3 > o->cap) return 0; /* at most 2 literals and a header remain */
    while (ip < in_len) put_literal(o, in[ip++]);
    run_close(o);
    return o->op;
}

size_t lzf_compress(const void *in, size_t in_len, void *out, size_t out_cap) {
    /* positions are stored in 32 bits, like liblzf's unsigned int lengths */
    if (in_len == 0 || out_cap == 0 || in_len > UINT32_MAX) return 0;
    uint32_t buf[LZF_HSIZE];
    lzf_table t;
    lzf_out o = {.out = out, .cap = out_cap};
    table_init(&t, buf, in_len);
    return compress_with(&t, in, in_len, &o);
}

/* ---- decompression ------------------------------------------------------- */

/* Copies len bytes from off bytes back; the ranges overlap when off < len
 * (a run repeating a short pattern), which must go byte by byte. */
static void copy_backref(uint8_t *out, size_t op, size_t off, size_t len) {
    if (off >= len) {
        memcpy(out + op, out + op - off, len);
        return;
    }
    for (size_t i = 0; i < len; i++) out[op + i] = out[op - off + i];
}

size_t lzf_decompress(const void *in_, size_t in_len, void *out_, size_t out_cap) {
    const uint8_t *in = in_;
    uint8_t *out = out_;
    size_t ip = 0, op = 0;
    while (ip < in_len) {
        size_t ctrl = in[ip++], len;
        if (ctrl < 32) { /* literal run of ctrl + 1 bytes */
            len = ctrl + 1;
            if (in_len - ip < len || out_cap - op < len) return 0;
            memcpy(out + op, in + ip, len);
            ip += len;
            op += len;
            continue;
        }
        len = ctrl >> 5;
        if (len == 7) {
            if (ip >= in_len) return 0;
            len += in[ip++];
        }
        if (ip >= in_len) return 0;
        size_t off = ((ctrl & 31) << 8 | in[ip++]) + 1;
        len += 2;
        if (off > op || out_cap - op < len) return 0;
        copy_backref(out, op, off, len);
        op += len;
    }
    return op;
}
