/* script_conv.c - the conversions between RESP and Lua values that
 * scripts see, by Redis's rules (see script_conv.h). Pure functions of
 * their arguments: the reply bytes or the Lua value, and the script's RESP
 * version. */
#include "script_conv.h"
#include "command.h"
#include "reply.h"
#include "zmalloc.h"

#include <lauxlib.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#define REPLY_DEPTH_MAX 1000        /* nesting of a script's result or a command's reply */

/* ---- command replies -> Lua values --------------------------------------- */

/* A line's end (the CR of CRLF) in [p, end), or NULL. */
static const char *line_end(const char *p, const char *end) {
    const char *cr = memchr(p, '\r', (size_t)(end - p));
    return cr && cr + 1 < end ? cr : NULL;
}

void conv_reply_counted_error(client *c, const char *s, size_t n) {
    reply_error_counted(c, s, n);
    if (c->cmd) c->cmd->failed_calls++;
}

void conv_push_field(lua_State *L, const char *field, const char *p, size_t n) {
    lua_newtable(L);
    lua_pushlstring(L, p, n);
    lua_setfield(L, -2, field);
}


static const char *push_aggregate(lua_State *L, char t, long long n, const char *p, const char *end, int depth) {
    lua_newtable(L);
    if (t == '*') {
        for (long long i = 1; i <= n; i++) {
            p = conv_push_reply(L, p, end, depth + 1);
            lua_rawseti(L, -2, (int)i);
        }
        return p;
    }
    lua_newtable(L); /* map or set contents */
    for (long long i = 0; i < n; i++) {
        p = conv_push_reply(L, p, end, depth + 1);
        if (t == '%') p = conv_push_reply(L, p, end, depth + 1);
        else lua_pushboolean(L, 1);
        lua_settable(L, -3);
    }
    lua_setfield(L, -2, t == '%' ? "map" : "set");
    return p;
}

const char *conv_push_reply(lua_State *L, const char *p, const char *end, int depth) {
    const char *e = line_end(p, end);
    if (!e || depth > REPLY_DEPTH_MAX || !lua_checkstack(L, 4)) {
        lua_pushnil(L);
        return end;
    }
    const char *body = p + 1, *next = e + 2;
    size_t blen = (size_t)(e - body);
    long long n = 0;
    switch (*p) {
    case '+': conv_push_field(L, "ok", body, blen); return next;
    case '-': conv_push_field(L, "err", body, blen); return next;
    case ':': lua_pushnumber(L, (lua_Number)strtoll(body, NULL, 10)); return next;
    case '_': lua_pushnil(L); return next;
    case '#': lua_pushboolean(L, *body == 't'); return next;
    case ',': lua_newtable(L); lua_pushnumber(L, strtod(body, NULL)); lua_setfield(L, -2, "double"); return next;
    case '(': conv_push_field(L, "big_number", body, blen); return next;
    case '$': case '=':
        n = strtoll(body, NULL, 10);
        if (n < 0) {
            lua_pushboolean(L, 0);
            return next;
        }
        if (*p == '=' && n >= 4) {
            lua_newtable(L);
            conv_push_field(L, "string", next + 4, (size_t)n - 4);
            lua_pushlstring(L, next, 3);
            lua_setfield(L, -2, "format");
            lua_setfield(L, -2, "verbatim_string");
        } else {
            lua_pushlstring(L, next, (size_t)n);
        }
        return next + n + 2;
    case '*': case '%': case '~': case '>':
        n = strtoll(body, NULL, 10);
        if (n < 0) {
            lua_pushboolean(L, 0);
            return next;
        }
        return push_aggregate(L, *p == '>' ? '*' : *p, n, next, end, depth);
    case '|': /* an attribute map (DEBUG PROTOCOL attrib): read and dropped, the reply follows */
        n = strtoll(body, NULL, 10);
        for (long long i = 0; i < 2 * n && next < end; i++) {
            next = conv_push_reply(L, next, end, depth + 1);
            lua_pop(L, 1);
        }
        return conv_push_reply(L, next, end, depth);
    default: lua_pushnil(L); return end;
    }
}

/* t[name] without metamethods (a script's result may have any metatable,
 * and a metamethod run here would be outside any protected call). */
void conv_raw_field(lua_State *L, int idx, const char *name) {
    if (idx < 0) idx = lua_gettop(L) + idx + 1;
    lua_pushstring(L, name);
    lua_rawget(L, idx);
}

/* A Lua number as Redis's integer reply: truncated; infinities, NaN and
 * numbers out of range give LLONG_MIN, as x86's conversion does in Redis
 * (where the C cast is undefined). */
static long long number_to_ll(double d) {
    if (!(d >= -9223372036854775808.0 && d < 9223372036854775808.0)) return LLONG_MIN;
    return (long long)d;
}

static void reply_value(client *c, lua_State *L, int idx, int resp, int depth);

static int reply_special_table(client *c, lua_State *L, int idx) {
    static const char *const fields[] = {"err", "ok", "double", "big_number", NULL};
    for (int i = 0; fields[i]; i++) {
        conv_raw_field(L, idx, fields[i]);
        int t = lua_type(L, -1);
        if ((i < 2 && t == LUA_TSTRING) || (i == 2 && t == LUA_TNUMBER) || (i == 3 && t == LUA_TSTRING)) {
            size_t n;
            const char *s = lua_tolstring(L, -1, &n);
            if (i == 0) {
                conv_raw_field(L, idx, CONV_ERR_COUNTED);
                int counted = lua_toboolean(L, -1);
                lua_pop(L, 1);
                if (counted) conv_reply_counted_error(c, s, n);
                else reply_error(c, s); /* as given: Redis adds no code ({err = "bad"} is "-bad") */
            } else if (i == 1) {
                reply_status(c, s);
            } else if (i == 2) {
                reply_double(c, lua_tonumber(L, -1));
            } else { /* big number: CR and LF become spaces, as Redis maps them */
                char *digits = zmalloc(n + 1);
                for (size_t k = 0; k < n; k++) digits[k] = s[k] == '\r' || s[k] == '\n' ? ' ' : s[k];
                if (c->resp == 3) {
                    reply_raw(c, "(", 1);
                    reply_raw(c, digits, n);
                    reply_raw(c, "\r\n", 2);
                } else {
                    reply_bulk(c, digits, n);
                }
                zfree(digits);
            }
            lua_pop(L, 1);
            return 1;
        }
        lua_pop(L, 1);
    }
    return 0;
}

/* {verbatim_string = {format = "txt", string = "..."}} */
static int reply_verbatim_table(client *c, lua_State *L, int idx) {
    conv_raw_field(L, idx, "verbatim_string");
    if (!lua_istable(L, -1)) {
        lua_pop(L, 1);
        return 0;
    }
    conv_raw_field(L, lua_gettop(L), "format");
    conv_raw_field(L, lua_gettop(L) - 1, "string");
    size_t n = 0, fl = 0;
    const char *s = lua_tolstring(L, -1, &n), *f = lua_tolstring(L, -2, &fl);
    if (s && f && fl == 3) reply_verbatim(c, s, n, f);
    else reply_bulk(c, s ? s : "", s ? n : 0);
    lua_pop(L, 3);
    return 1;
}

static int reply_map_or_set(client *c, lua_State *L, int idx, int resp, int depth) {
    for (int set = 0; set < 2; set++) {
        conv_raw_field(L, idx, set ? "set" : "map");
        if (!lua_istable(L, -1)) {
            lua_pop(L, 1);
            continue;
        }
        int t = lua_gettop(L);
        long n = 0;
        lua_pushnil(L);
        while (lua_next(L, t)) n++, lua_pop(L, 1);
        if (set) reply_set(c, n);
        else reply_map(c, n);
        lua_pushnil(L);
        while (lua_next(L, t)) {
            reply_value(c, L, -2, resp, depth + 1);
            if (!set) reply_value(c, L, -1, resp, depth + 1);
            lua_pop(L, 1);
        }
        lua_pop(L, 1);
        return 1;
    }
    return 0;
}

static void reply_value(client *c, lua_State *L, int idx, int resp, int depth) {
    if (idx < 0) idx = lua_gettop(L) + idx + 1;
    if (depth > REPLY_DEPTH_MAX || !lua_checkstack(L, 8)) {
        reply_error(c, "ERR reached lua stack limit");
        return;
    }
    switch (lua_type(L, idx)) {
    case LUA_TSTRING: {
        size_t n;
        const char *s = lua_tolstring(L, idx, &n);
        reply_bulk(c, s, n);
        return;
    }
    case LUA_TBOOLEAN:
        if (resp == 3) reply_bool(c, lua_toboolean(L, idx));
        else if (lua_toboolean(L, idx)) reply_int(c, 1);
        else reply_null(c);
        return;
    case LUA_TNUMBER: reply_int(c, number_to_ll(lua_tonumber(L, idx))); return;
    case LUA_TTABLE: break;
    default: reply_null(c); return;
    }
    if (reply_special_table(c, L, idx) || reply_verbatim_table(c, L, idx) || reply_map_or_set(c, L, idx, resp, depth))
        return;
    long n = 0;
    for (;; n++) {
        lua_rawgeti(L, idx, (int)n + 1);
        int nil = lua_isnil(L, -1);
        lua_pop(L, 1);
        if (nil) break;
    }
    reply_array(c, n);
    for (long j = 1; j <= n; j++) {
        lua_rawgeti(L, idx, (int)j);
        reply_value(c, L, -1, resp, depth + 1);
        lua_pop(L, 1);
    }
}


void conv_reply_value(client *c, lua_State *L, int idx, int resp) { reply_value(c, L, idx, resp, 0); }
