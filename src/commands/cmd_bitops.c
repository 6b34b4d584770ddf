/* cmd_bitops.c - the bitmap commands: SETBIT, GETBIT, BITCOUNT, BITPOS,
 * BITOP and BITFIELD / BITFIELD_RO, with Redis 7.0's replies, error texts,
 * limits and side effects.
 *
 * Why a file of its own: these commands see a string value as an array of
 * bits (bit 0 is the top bit of byte 0) and share the bit helpers below
 * (word-at-a-time popcount and scans, bit fields of 1..64 bits, the
 * overflow rules), which the string commands do not need. The values are
 * the string values of cmd_string.c, stored inline in the keyspace node; an
 * integer-encoded string is its decimal bytes there already, so it reads as
 * Redis's decoded form, and any write lookup leaves the value "raw" as
 * Redis's dbUnshareStringValue does.
 *
 * Writes grow the value (zero padded) only up to the highest byte touched;
 * bit offsets are limited by proto-max-bulk-len. As in Redis 7.0, SETBIT and
 * BITFIELD count a change (dirty, propagation, "setbit", WATCH) only when a
 * bit changed or the value was created or grew, and BITFIELD's OVERFLOW
 * FAIL operations that were refused count nothing.
 */
#include <limits.h>
#include <stdint.h>
#include <string.h>
#include "client.h"
#include "cmd_bitops.h"
#include "command.h"
#include "db.h"
#include "multi.h"
#include "notify.h"
#include "reply.h"
#include "server.h"
#include "util.h"
#include "zmalloc.h"

/* ---- pure helpers (cmd_bitops.h) ---------------------------------------- */

static inline uint64_t load64(const unsigned char *p) {
    uint64_t w;
    memcpy(&w, p, sizeof w);
    return w;
}

long long bits_popcount(const unsigned char *p, size_t n) {
    long long cnt = 0;
    size_t i = 0;
    for (; i + 32 <= n; i += 32)
        cnt += __builtin_popcountll(load64(p + i)) + __builtin_popcountll(load64(p + i + 8)) +
               __builtin_popcountll(load64(p + i + 16)) + __builtin_popcountll(load64(p + i + 24));
    for (; i + 8 <= n; i += 8) cnt += __builtin_popcountll(load64(p + i));
    for (; i < n; i++) cnt += __builtin_popcount(p[i]);
    return cnt;
}

long long bits_pos(const unsigned char *p, size_t n, int bit) {
    uint64_t skipw = bit ? 0 : ~(uint64_t)0;
    unsigned char skipb = bit ? 0 : 0xff;
    size_t i = 0;
    while (i + 8 <= n && load64(p + i) == skipw) i += 8;
    while (i < n && p[i] == skipb) i++;
    if (i == n) return bit ? -1 : (long long)n * 8;
    unsigned v = bit ? p[i] : (unsigned char)~p[i]; /* look for a 1 in v */
    return (long long)i * 8 + (__builtin_clz(v) - (int)(sizeof(unsigned) * 8 - 8));
}

/* The 1..9 bytes holding bits [off, off + bits) as one big-endian number;
 * *nb gets their count. */
static unsigned __int128 field_bytes(const unsigned char *p, uint64_t off, unsigned bits, unsigned *nb) {
    uint64_t b0 = off >> 3;
    unsigned n = (unsigned)(((off & 7) + bits + 7) >> 3);
    unsigned __int128 acc = 0;
    for (unsigned i = 0; i < n; i++) acc = (acc << 8) | p[b0 + i];
    *nb = n;
    return acc;
}

uint64_t bits_get_u(const unsigned char *p, uint64_t off, unsigned bits) {
    unsigned nb;
    unsigned __int128 acc = field_bytes(p, off, bits, &nb);
    unsigned shift = nb * 8 - (unsigned)(off & 7) - bits;
    uint64_t v = (uint64_t)(acc >> shift);
    return bits == 64 ? v : v & (((uint64_t)1 << bits) - 1);
}

int64_t bits_get_i(const unsigned char *p, uint64_t off, unsigned bits) {
    uint64_t u = bits_get_u(p, off, bits);
    if (bits < 64 && (u & ((uint64_t)1 << (bits - 1)))) u |= ~(uint64_t)0 << bits;
    return (int64_t)u;
}

void bits_set_u(unsigned char *p, uint64_t off, unsigned bits, uint64_t v) {
    unsigned nb;
    unsigned __int128 acc = field_bytes(p, off, bits, &nb);
    unsigned shift = nb * 8 - (unsigned)(off & 7) - bits;
    uint64_t low = bits == 64 ? ~(uint64_t)0 : ((uint64_t)1 << bits) - 1;
    unsigned __int128 mask = (unsigned __int128)low << shift;
    acc = (acc & ~mask) | ((unsigned __int128)(v & low) << shift);
    uint64_t b0 = off >> 3;
    for (unsigned i = nb; i-- > 0; acc >>= 8) p[b0 + i] = (unsigned char)acc;
}

int bits_overflow_u(uint64_t value, int64_t incr, unsigned bits, int mode, uint64_t *out) {
    uint64_t max = ((uint64_t)1 << bits) - 1; /* bits <= 63 */
    int64_t maxincr = (int64_t)(max - value), minincr = (int64_t)(0 - value);
    int dir;
    if (value > max || (incr > 0 && incr > maxincr)) dir = 1;
    else if (incr < 0 && incr < minincr) dir = -1;
    else return 0;
    if (mode == BITS_WRAP) *out = (value + (uint64_t)incr) & max;
    else if (mode == BITS_SAT) *out = dir > 0 ? max : 0;
    return dir;
}

int bits_overflow_i(int64_t value, int64_t incr, unsigned bits, int mode, int64_t *out) {
    int64_t max = bits == 64 ? INT64_MAX : (int64_t)(((uint64_t)1 << (bits - 1)) - 1);
    int64_t min = -max - 1;
    /* both may wrap; they are used only where Redis uses them */
    int64_t maxincr = (int64_t)((uint64_t)max - (uint64_t)value);
    int64_t minincr = (int64_t)((uint64_t)min - (uint64_t)value);
    int dir;
    if (value > max || (bits != 64 && incr > maxincr) || (value >= 0 && incr > 0 && incr > maxincr)) dir = 1;
    else if (value < min || (bits != 64 && incr < minincr) || (value < 0 && incr < 0 && incr < minincr)) dir = -1;
    else return 0;
    if (mode == BITS_WRAP) {
        uint64_t r = (uint64_t)value + (uint64_t)incr;
        if (bits < 64) {
            uint64_t high = ~(uint64_t)0 << bits;
            r = (r & ((uint64_t)1 << (bits - 1))) ? r | high : r & ~high;
        }
        *out = (int64_t)r;
    } else if (mode == BITS_SAT) {
        *out = dir > 0 ? max : min;
    }
    return dir;
}

/* Up to 8 bytes of s (length len) from j, zero padded. */
static inline uint64_t word_at(const unsigned char *s, size_t len, size_t j) {
    if (j + 8 <= len) return load64(s + j);
    uint64_t w = 0;
    if (j < len) memcpy(&w, s + j, len - j);
    return w;
}

void bits_op(int op, unsigned char *dst, size_t maxlen, const unsigned char *const *src, const size_t *len, int n) {
    size_t j = 0;
    for (; j + 8 <= maxlen; j += 8) {
        uint64_t w = word_at(src[0], len[0], j);
        if (op == BITS_NOT) w = ~w;
        for (int i = 1; i < n; i++) {
            uint64_t x = word_at(src[i], len[i], j);
            if (op == BITS_AND) w &= x;
            else if (op == BITS_OR) w |= x;
            else w ^= x;
        }
        memcpy(dst + j, &w, 8);
    }
    for (; j < maxlen; j++) {
        unsigned char b = j < len[0] ? src[0][j] : 0;
        if (op == BITS_NOT) b = (unsigned char)~b;
        for (int i = 1; i < n; i++) {
            unsigned char x = j < len[i] ? src[i][j] : 0;
            if (op == BITS_AND) b &= x;
            else if (op == BITS_OR) b |= x;
            else b ^= x;
        }
        dst[j] = b;
    }
}

/* ---- argument helpers ---------------------------------------------------- */

/* Redis compares these names as C strings: an embedded NUL ends the argument. */
static span cstr_part(span s) {
    const char *z = memchr(s.p, 0, s.len);
    return (span){ s.p, z ? (size_t)(z - s.p) : s.len };
}

static int name_is(span s, const char *lit) { return span_eq_nocase(cstr_part(s), lit); }

/* A bit offset (BITFIELD: hash, so "#N" means N * bits). Replies and
 * returns 0 when it is not an integer, negative or beyond
 * proto-max-bulk-len bytes. */
static int offset_arg(client *c, span s, int hash, unsigned bits, uint64_t *out) {
    int usehash = hash && s.len && s.p[0] == '#';
    long long v;
    if (!str_to_ll(s.p + usehash, s.len - usehash, &v)) goto bad;
    if (usehash) v = (long long)((unsigned long long)v * bits); /* wraps as Redis's multiplication does */
    if (v < 0 || (v >> 3) >= srv.cfg.proto_max_bulk_len) goto bad;
    if ((unsigned long long)(v >> 3) >= UINT32_MAX - 16) goto bad; /* a node's value length is 32-bit */
    *out = (uint64_t)v;
    return 1;
bad:
    reply_error(c, "ERR bit offset is not an integer or out of range");
    return 0;
}

/* "i1".."i64", "u1".."u63". */
static int type_arg(client *c, span s, int *sign, unsigned *bits) {
    span t = cstr_part(s);
    long long b;
    if (t.len >= 2 && (t.p[0] == 'i' || t.p[0] == 'u') && str_to_ll(t.p + 1, t.len - 1, &b) && b >= 1 &&
        b <= (t.p[0] == 'i' ? 64 : 63)) {
        *sign = t.p[0] == 'i';
        *bits = (unsigned)b;
        return 1;
    }
    reply_error(c, "ERR Invalid bitfield type. Use something like i16 u8. Note that u64 is not supported but i64 is.");
    return 0;
}

static int ll_arg(client *c, span s, long long *out) {
    if (str_to_ll(s.p, s.len, out)) return 1;
    reply_err_notint(c);
    return 0;
}

/* ---- value access -------------------------------------------------------- */

static inline const unsigned char *bytes_of(const dnode *n) { return (const unsigned char *)dn_val(n); }

/* Redis's lookupStringForBitCommand: the string at argv[1], created when
 * missing and grown (zero padded) to hold bit maxbit; left "raw". *grew
 * tells whether it was created or lengthened. NULL after WRONGTYPE. */
static dnode *string_for_write(client *c, uint64_t maxbit, int *grew) {
    span k = c->argv[1];
    dnode *n = db_lookup_write(c->db, k.p, k.len);
    if (n && n->type != OBJ_STRING) {
        reply_err_wrongtype(c);
        return NULL;
    }
    *grew = 0;
    if (!n) {
        n = db_set_string(c->db, k.p, k.len, "", 0, -1);
        *grew = 1;
    }
    size_t need = (size_t)(maxbit >> 3) + 1, olen = dn_vlen(n);
    if (need > olen) {
        n = db_resize_value(c->db, n, need);
        memset(dn_val(n) + olen, 0, need - olen);
        *grew = 1;
    }
    n->enc = ENC_RAW;
    return n;
}

static void changed(client *c, long long changes) {
    touch_watched_key(c->db, c->argv[1].p, c->argv[1].len);
    srv.dirty += changes;
    notify_key(NOTIFY_STRING, "setbit", c->db->id, c->argv[1]);
}

/* A read lookup that replies WRONGTYPE (and returns -1) for a non-string. */
static int read_string(client *c, dnode **out) {
    dnode *n = db_lookup_read(c->db, c->argv[1].p, c->argv[1].len);
    *out = n;
    if (n && n->type != OBJ_STRING) {
        reply_err_wrongtype(c);
        return -1;
    }
    return 0;
}

/* ---- SETBIT / GETBIT ----------------------------------------------------- */

static void cmd_setbit(client *c) {
    uint64_t off;
    long long on;
    if (!offset_arg(c, c->argv[2], 0, 0, &off)) return;
    if (!str_to_ll(c->argv[3].p, c->argv[3].len, &on) || (on & ~1LL)) {
        reply_error(c, "ERR bit is not an integer or out of range");
        return;
    }
    int grew;
    dnode *n = string_for_write(c, off, &grew);
    if (!n) return;
    unsigned char *p = (unsigned char *)dn_val(n) + (off >> 3);
    unsigned shift = 7 - (unsigned)(off & 7);
    int old = (*p >> shift) & 1;
    if (grew || old != on) {
        *p = (unsigned char)((*p & ~(1u << shift)) | ((unsigned)on << shift));
        changed(c, 1);
    }
    reply_int(c, old);
}

static void cmd_getbit(client *c) {
    uint64_t off;
    dnode *n;
    if (!offset_arg(c, c->argv[2], 0, 0, &off)) return;
    if (read_string(c, &n) < 0) return;
    int bit = 0;
    if (n && (off >> 3) < dn_vlen(n)) bit = (bytes_of(n)[off >> 3] >> (7 - (off & 7))) & 1;
    reply_int(c, bit);
}

/* ---- BITCOUNT / BITPOS --------------------------------------------------- */

/* Unit argument: 1 for BIT, 0 for BYTE, -1 (after a syntax error) else. */
static int unit_arg(client *c, span s) {
    if (name_is(s, "bit")) return 1;
    if (name_is(s, "byte")) return 0;
    reply_err_syntax(c);
    return -1;
}

/* Redis's range rules: start/end in bytes or bits (isbit) of a len-byte
 * string, negative from the end, clamped; the inclusive bit range, or 0
 * when it is empty. */
static int bit_range(long long len, int isbit, long long start, long long end, long long *sbit, long long *ebit) {
    long long tot = isbit ? len * 8 : len;
    if (start < 0) start += tot;
    if (end < 0) end += tot;
    if (start < 0) start = 0;
    if (end < 0) end = 0;
    if (end >= tot) end = tot - 1;
    if (start > end) return 0;
    *sbit = isbit ? start : start * 8;
    *ebit = isbit ? end : end * 8 + 7;
    return 1;
}

static long long count_range(const unsigned char *p, long long sbit, long long ebit) {
    long long b0 = sbit >> 3, b1 = ebit >> 3;
    long long cnt = bits_popcount(p + b0, (size_t)(b1 - b0 + 1));
    cnt -= __builtin_popcount(p[b0] & (0xff00u >> (sbit & 7)) & 0xff);   /* bits before sbit */
    cnt -= __builtin_popcount(p[b1] & ((1u << (7 - (ebit & 7))) - 1));   /* bits after ebit */
    return cnt;
}

static void cmd_bitcount(client *c) {
    dnode *n;
    if (read_string(c, &n) < 0) return;
    if (!n) {
        reply_int(c, 0);
        return;
    }
    long long len = dn_vlen(n), sbit = 0, ebit = len * 8 - 1;
    if (c->argc == 4 || c->argc == 5) {
        long long start, end;
        int isbit = 0;
        if (!ll_arg(c, c->argv[2], &start) || !ll_arg(c, c->argv[3], &end)) return;
        if (start < 0 && end < 0 && start > end) {
            reply_int(c, 0);
            return;
        }
        if (c->argc == 5 && (isbit = unit_arg(c, c->argv[4])) < 0) return;
        if (!bit_range(len, isbit, start, end, &sbit, &ebit)) {
            reply_int(c, 0);
            return;
        }
    } else if (c->argc != 2) {
        reply_err_syntax(c);
        return;
    }
    reply_int(c, len ? count_range(bytes_of(n), sbit, ebit) : 0);
}

/* First bit equal to `bit` in bits [sbit, ebit] of p, or -1. */
static long long pos_range(const unsigned char *p, long long sbit, long long ebit, int bit) {
    long long b = sbit;
    for (; b <= ebit && (b & 7); b++)
        if (((p[b >> 3] >> (7 - (b & 7))) & 1) == bit) return b;
    long long B0 = b >> 3, B1 = (ebit + 1) >> 3; /* whole bytes [B0, B1) */
    if (b <= ebit && B1 > B0) {
        long long r = bits_pos(p + B0, (size_t)(B1 - B0), bit);
        if (r >= 0 && r < (B1 - B0) * 8) return B0 * 8 + r;
        b = B1 * 8;
    }
    for (; b <= ebit; b++)
        if (((p[b >> 3] >> (7 - (b & 7))) & 1) == bit) return b;
    return -1;
}

static void cmd_bitpos(client *c) {
    long long bit;
    if (!ll_arg(c, c->argv[2], &bit)) return;
    if (bit != 0 && bit != 1) {
        reply_error(c, "ERR The bit argument must be 1 or 0.");
        return;
    }
    dnode *n;
    if (read_string(c, &n) < 0) return;
    if (!n) {
        reply_int(c, bit ? -1 : 0);
        return;
    }
    long long len = dn_vlen(n), sbit = 0, ebit = len * 8 - 1;
    int end_given = c->argc >= 5;
    if (c->argc >= 4 && c->argc <= 6) {
        long long start, end = len - 1;
        int isbit = 0;
        if (!ll_arg(c, c->argv[3], &start)) return;
        if (c->argc == 6 && (isbit = unit_arg(c, c->argv[5])) < 0) return;
        if (end_given && !ll_arg(c, c->argv[4], &end)) return;
        if (!bit_range(len, isbit, start, end, &sbit, &ebit)) {
            reply_int(c, -1);
            return;
        }
    } else if (c->argc != 3) {
        reply_err_syntax(c);
        return;
    }
    if (len == 0) {
        reply_int(c, -1);
        return;
    }
    long long pos = pos_range(bytes_of(n), sbit, ebit, (int)bit);
    /* looking for a 0 with no end given: the string reads as zero padded */
    if (pos < 0 && bit == 0 && !end_given) pos = ebit + 1;
    reply_int(c, pos);
}

/* ---- BITOP --------------------------------------------------------------- */

static void cmd_bitop(client *c) {
    span opn = c->argv[1], dest = c->argv[2];
    int op;
    if (name_is(opn, "and")) op = BITS_AND;
    else if (name_is(opn, "or")) op = BITS_OR;
    else if (name_is(opn, "xor")) op = BITS_XOR;
    else if (name_is(opn, "not")) op = BITS_NOT;
    else {
        reply_err_syntax(c);
        return;
    }
    if (op == BITS_NOT && c->argc != 4) {
        reply_error(c, "ERR BITOP NOT must be called with a single source key.");
        return;
    }
    int nsrc = c->argc - 3;
    const unsigned char **src = zmalloc(sizeof *src * (size_t)nsrc);
    size_t *len = zmalloc(sizeof *len * (size_t)nsrc), maxlen = 0;
    for (int j = 0; j < nsrc; j++) {
        dnode *n = db_lookup_read(c->db, c->argv[j + 3].p, c->argv[j + 3].len);
        if (n && n->type != OBJ_STRING) {
            zfree(src);
            zfree(len);
            reply_err_wrongtype(c);
            return;
        }
        src[j] = n ? bytes_of(n) : (const unsigned char *)"";
        len[j] = n ? dn_vlen(n) : 0;
        if (len[j] > maxlen) maxlen = len[j];
    }
    if (maxlen) {
        /* computed aside: the destination may be one of the sources */
        unsigned char *res = zmalloc(maxlen);
        bits_op(op, res, maxlen, src, len, nsrc);
        dnode *n = db_set_string(c->db, dest.p, dest.len, (const char *)res, maxlen, -1);
        n->enc = ENC_RAW;
        zfree(res);
        touch_watched_key(c->db, dest.p, dest.len);
        srv.dirty++;
        notify_key(NOTIFY_STRING, "set", c->db->id, dest);
    } else if (db_delete_stored(c->db, dest.p, dest.len)) {
        touch_watched_key(c->db, dest.p, dest.len);
        srv.dirty++;
        notify_key(NOTIFY_GENERIC, "del", c->db->id, dest);
    }
    zfree(src);
    zfree(len);
    reply_int(c, (long long)maxlen);
}

/* ---- BITFIELD / BITFIELD_RO ---------------------------------------------- */

enum { BF_GET, BF_SET, BF_INCRBY };

typedef struct bf_op {
    uint64_t off;
    int64_t val;
    uint8_t opcode, mode, sign, bits;
} bf_op;

/* GET reads from a zero-padded copy of the (up to) 9 bytes it spans. */
static void bf_get(client *c, const dnode *n, const bf_op *o) {
    unsigned char buf[9] = {0};
    uint64_t b0 = o->off >> 3;
    size_t len = n ? dn_vlen(n) : 0;
    for (unsigned i = 0; i < 9 && b0 + i < len; i++) buf[i] = bytes_of(n)[b0 + i];
    uint64_t off = o->off & 7;
    if (o->sign) reply_int(c, bits_get_i(buf, off, o->bits));
    else reply_int(c, (long long)bits_get_u(buf, off, o->bits));
}

/* SET / INCRBY; returns 1 when it counts as a change. */
static int bf_write(client *c, dnode *n, const bf_op *o, int grew) {
    unsigned char *p = (unsigned char *)dn_val(n);
    int ov;
    uint64_t oldu, newu, retu;
    if (o->sign) {
        int64_t old = bits_get_i(p, o->off, o->bits), nv, wr = 0;
        if (o->opcode == BF_INCRBY) {
            ov = bits_overflow_i(old, o->val, o->bits, o->mode, &wr);
            nv = ov ? wr : (int64_t)((uint64_t)old + (uint64_t)o->val);
            retu = (uint64_t)nv;
        } else {
            nv = o->val;
            ov = bits_overflow_i(nv, 0, o->bits, o->mode, &wr);
            if (ov) nv = wr;
            retu = (uint64_t)old;
        }
        oldu = (uint64_t)old;
        newu = (uint64_t)nv;
    } else {
        uint64_t old = bits_get_u(p, o->off, o->bits), nv, wr = 0;
        if (o->opcode == BF_INCRBY) {
            ov = bits_overflow_u(old, o->val, o->bits, o->mode, &wr);
            nv = ov ? wr : old + (uint64_t)o->val;
            retu = nv;
        } else {
            nv = (uint64_t)o->val;
            ov = bits_overflow_u(nv, 0, o->bits, o->mode, &wr);
            if (ov) nv = wr;
            retu = old;
        }
        oldu = old;
        newu = nv;
    }
    if (ov && o->mode == BITS_FAIL) {
        reply_null(c);
        return 0;
    }
    reply_int(c, (long long)retu);
    bits_set_u(p, o->off, o->bits, newu);
    return grew || oldu != newu;
}

static void bitfield_generic(client *c, int ro) {
    bf_op *ops = zmalloc(sizeof *ops * (size_t)c->argc);
    int nops = 0, mode = BITS_WRAP, readonly = 1;
    uint64_t highest = 0;
    for (int j = 2; j < c->argc; j++) {
        int rem = c->argc - j - 1, opcode;
        span a = c->argv[j];
        if (name_is(a, "get") && rem >= 2) opcode = BF_GET;
        else if (name_is(a, "set") && rem >= 3) opcode = BF_SET;
        else if (name_is(a, "incrby") && rem >= 3) opcode = BF_INCRBY;
        else if (name_is(a, "overflow") && rem >= 1) {
            span t = c->argv[++j];
            if (name_is(t, "wrap")) mode = BITS_WRAP;
            else if (name_is(t, "sat")) mode = BITS_SAT;
            else if (name_is(t, "fail")) mode = BITS_FAIL;
            else {
                reply_error(c, "ERR Invalid OVERFLOW type specified");
                goto out;
            }
            continue;
        } else {
            reply_err_syntax(c);
            goto out;
        }
        int sign;
        unsigned bits;
        uint64_t off;
        long long val = 0;
        if (!type_arg(c, c->argv[j + 1], &sign, &bits) || !offset_arg(c, c->argv[j + 2], 1, bits, &off)) goto out;
        if (opcode != BF_GET) {
            readonly = 0;
            if (highest < off + bits - 1) highest = off + bits - 1;
            if (!ll_arg(c, c->argv[j + 3], &val)) goto out;
        }
        ops[nops++] = (bf_op){ off, val, (uint8_t)opcode, (uint8_t)mode, (uint8_t)sign, (uint8_t)bits };
        j += opcode == BF_GET ? 2 : 3;
    }
    dnode *n;
    int grew = 0;
    if (readonly) {
        if (read_string(c, &n) < 0) goto out;
    } else {
        if (ro) {
            reply_error(c, "ERR BITFIELD_RO only supports the GET subcommand");
            goto out;
        }
        if (!(n = string_for_write(c, highest, &grew))) goto out;
    }
    reply_array(c, nops);
    long long changes = 0;
    for (int i = 0; i < nops; i++) {
        if (ops[i].opcode == BF_GET) bf_get(c, n, &ops[i]);
        else changes += bf_write(c, n, &ops[i], grew);
    }
    if (changes) changed(c, changes);
out:
    zfree(ops);
}

static void cmd_bitfield(client *c) { bitfield_generic(c, 0); }
static void cmd_bitfield_ro(client *c) { bitfield_generic(c, 1); }

/* ---- table --------------------------------------------------------------- */

#define BITFIELD_O "O(1) for each subcommand specified"

static command bitops_commands[] = {
    CMD("setbit", cmd_setbit, 4, .flags = CMD_WRITE | CMD_DENYOOM, .acl = "write bitmap slow", CMD_KEYS(1, 1, 1),
        .summary = "Sets or clears the bit at offset in the string value stored at key", .since = "2.2.0",
        .complexity = "O(1)"),
    CMD("getbit", cmd_getbit, 3, .flags = CMD_READONLY | CMD_FAST, .acl = "read bitmap fast", CMD_KEYS(1, 1, 1),
        .summary = "Returns the bit value at offset in the string value stored at key", .since = "2.2.0",
        .complexity = "O(1)"),
    CMD("bitcount", cmd_bitcount, -2, .flags = CMD_READONLY, .acl = "read bitmap slow", CMD_KEYS(1, 1, 1),
        .summary = "Count set bits in a string", .since = "2.6.0", .complexity = "O(N)"),
    CMD("bitpos", cmd_bitpos, -3, .flags = CMD_READONLY, .acl = "read bitmap slow", CMD_KEYS(1, 1, 1),
        .summary = "Find first bit set or clear in a string", .since = "2.8.7", .complexity = "O(N)"),
    CMD("bitop", cmd_bitop, -4, .flags = CMD_WRITE | CMD_DENYOOM, .acl = "write bitmap slow", CMD_KEYS(2, -1, 1),
        .summary = "Perform bitwise operations between strings", .since = "2.6.0", .complexity = "O(N)"),
    CMD("bitfield", cmd_bitfield, -2, .flags = CMD_WRITE | CMD_DENYOOM, .acl = "write bitmap slow",
        CMD_KEYS(1, 1, 1), .summary = "Perform arbitrary bitfield integer operations on strings", .since = "3.2.0",
        .complexity = BITFIELD_O),
    CMD("bitfield_ro", cmd_bitfield_ro, -2, .flags = CMD_READONLY | CMD_FAST, .acl = "read bitmap fast",
        CMD_KEYS(1, 1, 1),
        .summary = "Perform arbitrary bitfield integer operations on strings. Read-only variant of BITFIELD",
        .since = "6.0.0", .complexity = BITFIELD_O),
    {0},
};
const command_group bitops_group = {"bitmap", bitops_commands};
