/* script_conv.h - RESP replies to Lua values and Lua values to replies,
 * as Redis converts them for scripts (script_conv.c; built with Lua only).
 *
 * Command reply -> Lua: integers are numbers, bulk strings strings, a null
 * is false, arrays are tables; a status is {ok = s} and an error {err = s};
 * RESP3 maps {map = t}, sets {set = t}, doubles {double = n}, big numbers
 * {big_number = s}, verbatim strings {verbatim_string = {format, string}},
 * null nil, booleans booleans.
 *
 * Lua -> reply: strings are bulk strings, numbers integers (truncated;
 * out of range or NaN: LLONG_MIN, as Redis on x86), booleans :1 / null
 * (RESP2 scripts) or RESP3 booleans, a table with an err / ok / double /
 * big_number / verbatim_string / map / set field that form, any other
 * table an array up to its first nil. Tables are read raw: a script's
 * metamethods never run here (outside any protected call).
 */
#ifndef FERRY_SCRIPT_CONV_H
#define FERRY_SCRIPT_CONV_H

#include <lua.h>
#include <stddef.h>
#include "client.h"

/* Pushes {field = p[0..n)}. */
void conv_push_field(lua_State *L, const char *field, const char *p, size_t n);
/* Pushes the reply at p (a whole reply from one of our commands, bounded by
 * end) as a Lua value; returns the byte after it. */
const char *conv_push_reply(lua_State *L, const char *p, const char *end, int depth);
/* Pushes t[name] of the table at idx without metamethods. */
void conv_raw_field(lua_State *L, int idx, const char *name);
/* The Lua value at idx as c's reply; resp is the script's redis.setresp. */
void conv_reply_value(client *c, lua_State *L, int idx, int resp);
/* The field redis.call / pcall set on an error table already counted in
 * the error stats (the name Redis gives it). */
#define CONV_ERR_COUNTED "ignore_error_stats_update"
/* The script's error reply carrying such an error: not counted again, but
 * the script's command (EVAL, FCALL...) counts as failed, as in Redis. */
void conv_reply_counted_error(client *c, const char *s, size_t n);

#endif
