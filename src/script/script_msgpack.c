/* script_msgpack.c - the `cmsgpack` library scripts get, as Redis bundles
 * it: pack(v, ...) -> MessagePack bytes of each value, concatenated;
 * unpack(s) -> every value in s; unpack_one(s [, offset]) and
 * unpack_limit(s, limit [, offset]) -> the next offset (-1 at the end)
 * and up to 1 / limit values.
 *
 * Encoding follows that library's choices, which scripts (BullMQ's job
 * data) depend on byte for byte: a number equal to an int64 is the
 * smallest integer form (positive or negative fixint, 8/16/32/64-bit),
 * other numbers float32 when exact, else float64; strings are str (fixstr,
 * str8/16/32); a table whose keys are exactly 1..n is an array, any other
 * a map (in lua_next order); tables nested deeper than 16 and values
 * MessagePack has no form for (functions ...) are nil.
 *
 * Decoding reads untrusted bytes: every read is bounds-checked against the
 * bytes left ("Missing bytes in input."), bin, extension and unknown types
 * are "Bad data format in input." (as in Redis's library), and a declared element count is never
 * trusted for allocation (tables grow as elements actually decode; each
 * element needs at least one byte). Nesting is bounded by the Lua stack
 * check.
 */
#include "script_msgpack.h"
#include "zmalloc.h"

#include <lauxlib.h>
#include <lua.h>

#include <limits.h>
#include <math.h>
#include <stdint.h>
#include <string.h>

#define MAX_NESTING 16

/* ---- encoding -------------------------------------------------------------- */

/* A growable byte buffer of our own: luaL_Buffer may not be used while the
 * table walk pushes and pops values. Nothing between its creation and the
 * final lua_pushlstring raises a Lua error (the stack is grown with
 * lua_checkstack, which does not), so it cannot leak. */
typedef struct mp_buf {
    char *p;
    size_t len, cap;
} mp_buf;

static void put(mp_buf *m, const void *p, size_t n) {
    if (m->len + n > m->cap) {
        size_t cap = m->cap ? m->cap : 64;
        while (cap < m->len + n) cap *= 2;
        char *q = zrealloc(m->p, cap);
        m->p = q;
        m->cap = cap;
    }
    memcpy(m->p + m->len, p, n);
    m->len += n;
}

static void put_be(mp_buf *m, unsigned char tag, uint64_t v, int bytes) {
    unsigned char out[9];
    out[0] = tag;
    for (int i = 0; i < bytes; i++) out[1 + i] = (unsigned char)(v >> (8 * (bytes - 1 - i)));
    put(m, out, (size_t)bytes + 1);
}

static void enc_int(mp_buf *m, int64_t v) {
    if (v >= 0) {
        if (v <= 127) {
            unsigned char c = (unsigned char)v;
            put(m, &c, 1);
        } else if (v <= 0xff) put_be(m, 0xcc, (uint64_t)v, 1);
        else if (v <= 0xffff) put_be(m, 0xcd, (uint64_t)v, 2);
        else if (v <= 0xffffffffLL) put_be(m, 0xce, (uint64_t)v, 4);
        else put_be(m, 0xcf, (uint64_t)v, 8);
    } else {
        if (v >= -32) {
            unsigned char c = (unsigned char)(int8_t)v;
            put(m, &c, 1);
        } else if (v >= -128) put_be(m, 0xd0, (uint64_t)v, 1);
        else if (v >= -32768) put_be(m, 0xd1, (uint64_t)v, 2);
        else if (v >= INT32_MIN) put_be(m, 0xd2, (uint64_t)v, 4);
        else put_be(m, 0xd3, (uint64_t)v, 8);
    }
}

static void enc_number(mp_buf *m, lua_Number n) {
    if (!isinf(n) && n >= -9223372036854775808.0 && n < 9223372036854775808.0 && (lua_Number)(int64_t)n == n) {
        enc_int(m, (int64_t)n);
        return;
    }
    float f = (float)n;
    if ((lua_Number)f == n) {
        uint32_t bits;
        memcpy(&bits, &f, 4);
        put_be(m, 0xca, bits, 4);
    } else {
        uint64_t bits;
        memcpy(&bits, &n, 8);
        put_be(m, 0xcb, bits, 8);
    }
}

static void enc_len(mp_buf *m, size_t n, unsigned fix_tag, size_t fix_max, unsigned t8, unsigned t16, unsigned t32) {
    if (n <= fix_max) {
        unsigned char c = (unsigned char)(fix_tag | n);
        put(m, &c, 1);
    } else if (t8 && n <= 0xff) put_be(m, (unsigned char)t8, n, 1);
    else if (n <= 0xffff) put_be(m, (unsigned char)t16, n, 2);
    else put_be(m, (unsigned char)t32, n, 4);
}

/* The array length if the table at idx has exactly the keys 1..n, else -1. */
static long array_len(lua_State *L, int idx) {
    long count = 0, max = 0;
    lua_pushnil(L);
    while (lua_next(L, idx)) {
        lua_pop(L, 1);
        if (lua_type(L, -1) != LUA_TNUMBER) {
            lua_pop(L, 1);
            return -1;
        }
        lua_Number k = lua_tonumber(L, -1);
        if (k <= 0 || k != floor(k) || k > INT_MAX) { /* lua_rawgeti takes an int */
            lua_pop(L, 1);
            return -1;
        }
        if ((long)k > max) max = (long)k;
        count++;
    }
    return max == count ? count : -1;
}

static void enc_value(lua_State *L, mp_buf *m, int idx, int level);

static void enc_table(lua_State *L, mp_buf *m, int idx, int level) {
    long n = array_len(L, idx);
    if (n >= 0) {
        enc_len(m, (size_t)n, 0x90, 15, 0, 0xdc, 0xdd);
        for (long j = 1; j <= n; j++) {
            lua_rawgeti(L, idx, (int)j);
            enc_value(L, m, lua_gettop(L), level + 1);
            lua_pop(L, 1);
        }
        return;
    }
    size_t pairs = 0;
    lua_pushnil(L);
    while (lua_next(L, idx)) lua_pop(L, 1), pairs++;
    enc_len(m, pairs, 0x80, 15, 0, 0xde, 0xdf);
    lua_pushnil(L);
    while (lua_next(L, idx)) {
        enc_value(L, m, lua_gettop(L) - 1, level + 1);
        enc_value(L, m, lua_gettop(L), level + 1);
        lua_pop(L, 1);
    }
}

static void enc_value(lua_State *L, mp_buf *m, int idx, int level) {
    unsigned char c;
    if (!lua_checkstack(L, 4)) level = MAX_NESTING; /* no room to walk it: nil, as a table too deep */
    switch (lua_type(L, idx)) {
    case LUA_TSTRING: {
        size_t n;
        const char *s = lua_tolstring(L, idx, &n);
        enc_len(m, n, 0xa0, 31, 0xd9, 0xda, 0xdb);
        put(m, s, n);
        return;
    }
    case LUA_TBOOLEAN: c = lua_toboolean(L, idx) ? 0xc3 : 0xc2; put(m, &c, 1); return;
    case LUA_TNUMBER: enc_number(m, lua_tonumber(L, idx)); return;
    case LUA_TTABLE:
        if (level < MAX_NESTING) {
            enc_table(L, m, idx, level);
            return;
        }
        break;
    default: break;
    }
    c = 0xc0;
    put(m, &c, 1);
}

static int l_pack(lua_State *L) {
    int nargs = lua_gettop(L);
    if (nargs == 0) return luaL_argerror(L, 0, "MessagePack pack needs input.");
    mp_buf m = {0};
    for (int i = 1; i <= nargs; i++) enc_value(L, &m, i, 0);
    lua_pushlstring(L, m.p ? m.p : "", m.len);
    zfree(m.p);
    return 1;
}

/* ---- decoding -------------------------------------------------------------- */

enum { MP_OK, MP_EOF, MP_BADFMT };

typedef struct mp_cur {
    const unsigned char *p;
    size_t left;
    int err;
} mp_cur;

static int need(mp_cur *c, size_t n) {
    if (c->left >= n) return 1;
    c->err = MP_EOF;
    return 0;
}

static uint64_t be(const unsigned char *p, int bytes) {
    uint64_t v = 0;
    for (int i = 0; i < bytes; i++) v = (v << 8) | p[i];
    return v;
}

/* n bytes after a header of hdr bytes, as a Lua string. */
static void dec_bytes(lua_State *L, mp_cur *c, size_t hdr, uint64_t n) {
    if (n > c->left - hdr) {
        c->err = MP_EOF;
        return;
    }
    lua_pushlstring(L, (const char *)c->p + hdr, (size_t)n);
    c->p += hdr + n;
    c->left -= hdr + n;
}

static void dec_value(lua_State *L, mp_cur *c);

static void dec_seq(lua_State *L, mp_cur *c, uint64_t n, int map) {
    lua_newtable(L);
    for (uint64_t i = 0; i < n && c->err == MP_OK; i++) {
        if (c->left == 0) {
            c->err = MP_EOF;
            return;
        }
        if (map) {
            dec_value(L, c);
            if (c->err) return;
            dec_value(L, c);
            if (c->err) return;
            lua_settable(L, -3);
        } else {
            lua_pushnumber(L, (lua_Number)(i + 1));
            dec_value(L, c);
            if (c->err) return;
            lua_settable(L, -3);
        }
    }
}

/* The count of a str/bin/array/map whose length is `bytes` bytes after the tag. */
static int dec_count(mp_cur *c, int bytes, uint64_t *n) {
    if (!need(c, 1 + (size_t)bytes)) return 0;
    *n = be(c->p + 1, bytes);
    return 1;
}

static void dec_fixed(lua_State *L, mp_cur *c, unsigned t) {
    static const int sizes[] = {1, 2, 4, 8};
    uint64_t v;
    if (t == 0xca || t == 0xcb) {
        int n = t == 0xca ? 4 : 8;
        if (!need(c, 1 + (size_t)n)) return;
        v = be(c->p + 1, n);
        if (n == 4) {
            uint32_t u = (uint32_t)v;
            float f;
            memcpy(&f, &u, 4);
            lua_pushnumber(L, (lua_Number)f);
        } else {
            double d;
            memcpy(&d, &v, 8);
            lua_pushnumber(L, (lua_Number)d);
        }
        c->p += 1 + n;
        c->left -= 1 + (size_t)n;
        return;
    }
    int sign = t >= 0xd0, n = sizes[(t - (sign ? 0xd0 : 0xcc)) & 3];
    if (!need(c, 1 + (size_t)n)) return;
    v = be(c->p + 1, n);
    lua_Number num;
    if (!sign) num = (lua_Number)v;
    else if (n == 1) num = (int8_t)v;
    else if (n == 2) num = (int16_t)v;
    else if (n == 4) num = (int32_t)v;
    else num = (lua_Number)(int64_t)v;
    lua_pushnumber(L, num);
    c->p += 1 + n;
    c->left -= 1 + (size_t)n;
}

static void dec_value(lua_State *L, mp_cur *c) {
    if (!lua_checkstack(L, 4)) {
        c->err = MP_BADFMT;
        return;
    }
    if (!need(c, 1)) return;
    unsigned t = c->p[0];
    uint64_t n;
    if (t <= 0x7f || t >= 0xe0) { /* fixints */
        lua_pushnumber(L, t <= 0x7f ? (lua_Number)t : (lua_Number)(int8_t)t);
        c->p++, c->left--;
    } else if ((t & 0xe0) == 0xa0) {
        dec_bytes(L, c, 1, t & 0x1f);
    } else if ((t & 0xf0) == 0x90 || (t & 0xf0) == 0x80) {
        c->p++, c->left--;
        dec_seq(L, c, t & 0x0f, (t & 0xf0) == 0x80);
    } else if (t == 0xc0 || t == 0xc2 || t == 0xc3) {
        if (t == 0xc0) lua_pushnil(L);
        else lua_pushboolean(L, t == 0xc3);
        c->p++, c->left--;
    } else if (t >= 0xca && t <= 0xd3) {
        dec_fixed(L, c, t);
    } else if (t == 0xd9 || t == 0xda || t == 0xdb) { /* str8/16/32 (bin is not read, as Redis's library) */
        int bytes = t == 0xd9 ? 1 : t == 0xda ? 2 : 4;
        if (dec_count(c, bytes, &n)) dec_bytes(L, c, 1 + (size_t)bytes, n);
    } else if (t >= 0xdc && t <= 0xdf) { /* array16/32, map16/32 */
        int bytes = (t == 0xdc || t == 0xde) ? 2 : 4;
        if (!dec_count(c, bytes, &n)) return;
        c->p += 1 + bytes;
        c->left -= 1 + (size_t)bytes;
        dec_seq(L, c, n, t >= 0xde);
    } else {
        c->err = MP_BADFMT; /* 0xc1, extensions */
    }
}

static int unpack_full(lua_State *L, lua_Integer limit, lua_Integer offset) {
    size_t len;
    const char *s = luaL_checklstring(L, 1, &len);
    int all = limit == 0 && offset == 0;
    if (offset < 0 || limit < 0)
        return luaL_error(L, "Invalid request to unpack with offset of %d and limit of %d.", (int)offset, (int)len);
    if ((size_t)offset > len)
        return luaL_error(L, "Start offset %d greater than input length %d.", (int)offset, (int)len);
    if (all) limit = INT_MAX;
    mp_cur c = {(const unsigned char *)s + offset, len - (size_t)offset, MP_OK};
    int cnt = 0;
    for (; c.left > 0 && cnt < limit; cnt++) {
        dec_value(L, &c);
        if (c.err == MP_EOF) return luaL_error(L, "Missing bytes in input.");
        if (c.err == MP_BADFMT) return luaL_error(L, "Bad data format in input.");
    }
    if (all) return cnt;
    luaL_checkstack(L, 1, "in function unpack");
    lua_pushinteger(L, c.left == 0 ? -1 : (lua_Integer)(len - c.left));
    lua_insert(L, 2);
    return cnt + 1;
}

static int l_unpack(lua_State *L) { return unpack_full(L, 0, 0); }

static int l_unpack_one(lua_State *L) {
    lua_Integer offset = luaL_optinteger(L, 2, 0);
    lua_settop(L, 1);
    return unpack_full(L, 1, offset);
}

static int l_unpack_limit(lua_State *L) {
    lua_Integer limit = luaL_checkinteger(L, 2), offset = luaL_optinteger(L, 3, 0);
    lua_settop(L, 1);
    return unpack_full(L, limit, offset);
}

int script_open_cmsgpack(lua_State *L) {
    static const luaL_Reg fns[] = {
        {"pack", l_pack}, {"unpack", l_unpack}, {"unpack_one", l_unpack_one}, {"unpack_limit", l_unpack_limit},
        {NULL, NULL},
    };
    lua_newtable(L);
    for (const luaL_Reg *r = fns; r->name; r++) {
        lua_pushcfunction(L, r->func);
        lua_setfield(L, -2, r->name);
    }
    lua_pushvalue(L, -1);
    lua_setglobal(L, "cmsgpack");
    return 1;
}
