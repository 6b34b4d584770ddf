/* script_struct.c - the `struct` library scripts get, as Redis bundles it:
 * struct.pack(fmt, ...), struct.unpack(fmt, s [, pos]) -> values and the
 * next position, struct.size(fmt).
 *
 * Format: '<' little endian, '>' big endian, '!n' alignment n (a power of
 * two, default the platform's 8), ' ' ignored; 'b'/'B' signed/unsigned
 * char, 'h'/'H' short (2), 'l'/'L' long (8), 'T' size_t (8), 'i'/'I' int of
 * n bytes ('i' alone 4, at most 32), 'f' float, 'd' double, 'x' a zero
 * byte, 'cn' n bytes of a string ('c0': all of it when packing, the size
 * unpacked just before when unpacking), 's' a zero-terminated string. Sized
 * items are aligned to min(size, alignment) from the start of the data.
 *
 * unpack reads untrusted bytes: every item is bounds-checked against the
 * data ("data string too short"), a 's' must find its zero byte within it.
 */
#include "script_struct.h"

#include <lauxlib.h>
#include <lua.h>

#include <ctype.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#define MAXINTSIZE 32
#define MAXALIGN 8                      /* alignment of double / pointers / lua_Number here */
#define NATIVE_LITTLE 1

typedef struct header {
    int little;
    int align;
} header;

static int is_pow2(int x) { return x > 0 && (x & (x - 1)) == 0; }

static int getnum(const char **fmt, int df) {
    if (!isdigit((unsigned char)**fmt)) return df;
    int a = 0;
    do {
        if (a > (INT32_MAX / 10)) return a; /* absurd sizes are refused by the callers' checks */
        a = a * 10 + (*((*fmt)++) - '0');
    } while (isdigit((unsigned char)**fmt));
    return a;
}

static size_t optsize(lua_State *L, char opt, const char **fmt) {
    switch (opt) {
    case 'B': case 'b': return 1;
    case 'H': case 'h': return 2;
    case 'L': case 'l': return 8;
    case 'T': return sizeof(size_t);
    case 'f': return sizeof(float);
    case 'd': return sizeof(double);
    case 'x': return 1;
    case 'c': return (size_t)getnum(fmt, 1);
    case 'i': case 'I': {
        int sz = getnum(fmt, 4);
        if (sz > MAXINTSIZE) luaL_error(L, "integral size %d is larger than limit of %d", sz, MAXINTSIZE);
        return (size_t)sz;
    }
    default: return 0;
    }
}

static size_t gettoalign(size_t len, const header *h, char opt, size_t size) {
    if (size == 0 || opt == 'c') return 0;
    if (size > (size_t)h->align) size = (size_t)h->align;
    return (size - (len & (size - 1))) & (size - 1);
}

static void controloptions(lua_State *L, char opt, const char **fmt, header *h) {
    switch (opt) {
    case ' ': return;
    case '>': h->little = 0; return;
    case '<': h->little = 1; return;
    case '!': {
        int a = getnum(fmt, MAXALIGN);
        if (!is_pow2(a)) luaL_error(L, "alignment %d is not a power of 2", a);
        h->align = a;
        return;
    }
    default: luaL_argerror(L, 1, lua_pushfstring(L, "invalid format option '%c'", opt));
    }
}

static void putinteger(lua_State *L, luaL_Buffer *b, int arg, int little, size_t size) {
    lua_Number n = luaL_checknumber(L, arg);
    uint64_t value;
    if (n < 0) value = (n >= -9223372036854775808.0) ? (uint64_t)(int64_t)n : (uint64_t)INT64_MIN;
    else value = n < 18446744073709551616.0 ? (uint64_t)n : UINT64_MAX;
    char buff[MAXINTSIZE];
    for (size_t i = 0; i < size; i++) { /* byte i counts from the least significant */
        unsigned char byte = i < 8 ? (unsigned char)(value >> (8 * i)) : 0;
        buff[little ? i : size - 1 - i] = (char)byte;
    }
    luaL_addlstring(b, buff, size);
}

/* A float or double's bytes in the wanted order (the host is little endian). */
static void put_bytes(luaL_Buffer *b, const void *p, size_t size, int little) {
    char buff[8];
    memcpy(buff, p, size);
    if (little != NATIVE_LITTLE)
        for (size_t i = 0; i < size / 2; i++) {
            char t = buff[i];
            buff[i] = buff[size - 1 - i];
            buff[size - 1 - i] = t;
        }
    luaL_addlstring(b, buff, size);
}

static int l_pack(lua_State *L) {
    const char *fmt = luaL_checkstring(L, 1);
    header h = {NATIVE_LITTLE, 1};
    int arg = 2;
    size_t total = 0;
    luaL_Buffer b;
    luaL_buffinit(L, &b);
    while (*fmt) {
        char opt = *fmt++;
        size_t size = optsize(L, opt, &fmt), toalign = gettoalign(total, &h, opt, size);
        total += toalign;
        while (toalign-- > 0) luaL_addchar(&b, '\0');
        switch (opt) {
        case 'b': case 'B': case 'h': case 'H': case 'l': case 'L': case 'T': case 'i': case 'I':
            putinteger(L, &b, arg++, h.little, size);
            break;
        case 'x': luaL_addchar(&b, '\0'); break;
        case 'f': {
            float f = (float)luaL_checknumber(L, arg++);
            put_bytes(&b, &f, size, h.little);
            break;
        }
        case 'd': {
            double d = (double)luaL_checknumber(L, arg++);
            put_bytes(&b, &d, size, h.little);
            break;
        }
        case 'c': case 's': {
            size_t l;
            const char *s = luaL_checklstring(L, arg++, &l);
            if (size == 0) size = l;
            luaL_argcheck(L, l >= size, arg, "string too short"); /* the number Redis's library reports */
            luaL_addlstring(&b, s, size);
            if (opt == 's') {
                luaL_addchar(&b, '\0');
                size++;
            }
            break;
        }
        default: controloptions(L, opt, &fmt, &h);
        }
        total += size;
    }
    luaL_pushresult(&b);
    return 1;
}

static lua_Number getinteger(const char *buff, int little, int issigned, size_t size) {
    uint64_t l = 0;
    for (size_t i = 0; i < size; i++) {
        unsigned char byte = (unsigned char)buff[little ? size - 1 - i : i];
        l = (l << 8) | byte; /* bytes past the low 8 shift out, as a 64-bit value keeps */
    }
    if (!issigned) return (lua_Number)l;
    if (size > 0 && size < 8) {
        uint64_t mask = ~(uint64_t)0 << (size * 8 - 1);
        if (l & mask) l |= mask;
    }
    return (lua_Number)(int64_t)l;
}

static int l_unpack(lua_State *L) {
    header h = {NATIVE_LITTLE, 1};
    const char *fmt = luaL_checkstring(L, 1);
    size_t ld;
    const char *data = luaL_checklstring(L, 2, &ld);
    lua_Integer init = luaL_optinteger(L, 3, 1);
    luaL_argcheck(L, init >= 1, 3, "offset must be 1 or greater");
    int base = lua_gettop(L); /* results go above the arguments */
    size_t pos = (size_t)init - 1;
    while (*fmt) {
        char opt = *fmt++;
        size_t size = optsize(L, opt, &fmt);
        pos += gettoalign(pos, &h, opt, size);
        luaL_argcheck(L, pos <= ld && size <= ld - pos, 2, "data string too short");
        luaL_checkstack(L, 2, "too many results");
        switch (opt) {
        case 'b': case 'B': case 'h': case 'H': case 'l': case 'L': case 'T': case 'i': case 'I':
            lua_pushnumber(L, getinteger(data + pos, h.little, islower((unsigned char)opt), size));
            break;
        case 'x': break;
        case 'f': {
            float f;
            char buff[4];
            for (int i = 0; i < 4; i++) buff[i] = data[pos + (h.little == NATIVE_LITTLE ? (size_t)i : 3 - (size_t)i)];
            memcpy(&f, buff, 4);
            lua_pushnumber(L, (lua_Number)f);
            break;
        }
        case 'd': {
            double d;
            char buff[8];
            for (int i = 0; i < 8; i++) buff[i] = data[pos + (h.little == NATIVE_LITTLE ? (size_t)i : 7 - (size_t)i)];
            memcpy(&d, buff, 8);
            lua_pushnumber(L, (lua_Number)d);
            break;
        }
        case 'c':
            if (size == 0) {
                if (lua_gettop(L) <= base || !lua_isnumber(L, -1)) luaL_error(L, "format 'c0' needs a previous size");
                lua_Number n = lua_tonumber(L, -1);
                lua_pop(L, 1);
                luaL_argcheck(L, n >= 0 && n <= (lua_Number)(ld - pos), 2, "data string too short");
                size = (size_t)n;
            }
            lua_pushlstring(L, data + pos, size);
            break;
        case 's': {
            const char *e = memchr(data + pos, '\0', ld - pos);
            if (!e) luaL_error(L, "unfinished string in data");
            size = (size_t)(e - (data + pos)) + 1;
            lua_pushlstring(L, data + pos, size - 1);
            break;
        }
        default: controloptions(L, opt, &fmt, &h);
        }
        pos += size;
    }
    lua_pushinteger(L, (lua_Integer)pos + 1);
    return lua_gettop(L) - base;
}

static int l_size(lua_State *L) {
    header h = {NATIVE_LITTLE, 1};
    const char *fmt = luaL_checkstring(L, 1);
    size_t pos = 0;
    while (*fmt) {
        char opt = *fmt++;
        size_t size = optsize(L, opt, &fmt);
        pos += gettoalign(pos, &h, opt, size);
        if (opt == 's') luaL_argerror(L, 1, "option 's' has no fixed size");
        else if (opt == 'c' && size == 0) luaL_argerror(L, 1, "option 'c0' has no fixed size");
        if (!isalnum((unsigned char)opt)) controloptions(L, opt, &fmt, &h);
        pos += size;
    }
    lua_pushinteger(L, (lua_Integer)pos);
    return 1;
}

int script_open_struct(lua_State *L) {
    static const luaL_Reg fns[] = {{"pack", l_pack}, {"unpack", l_unpack}, {"size", l_size}, {NULL, NULL}};
    lua_newtable(L);
    for (const luaL_Reg *r = fns; r->name; r++) {
        lua_pushcfunction(L, r->func);
        lua_setfield(L, -2, r->name);
    }
    lua_pushvalue(L, -1);
    lua_setglobal(L, "struct");
    return 1;
}
