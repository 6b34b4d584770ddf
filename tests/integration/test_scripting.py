"""Lua scripting (issue 13): EVAL, EVALSHA, their _RO forms and SCRIPT, on
ferry and on redis-server 7.0 in lockstep, reply bytes compared (diffkit).

The cases walk the rules clients depend on: the conversions both ways
(numbers truncated, tables cut at the first nil, err/ok tables, booleans,
nested replies, RESP3 after redis.setresp(3)), redis.call / redis.pcall and
their errors with Redis's texts and "script: <sha>, on @user_script:N."
suffix, read-only globals, the sandbox (no os, io, print, loadfile;
bytecode refused), NOSCRIPT, EVAL_RO refusing writes, noscript commands,
blocking commands that do not block, SELECT inside a script, math.random's
sequence, cjson and bit, scripts inside MULTI and WATCH. Then redis-py's
Lock and register_script against ferry.
"""
from __future__ import annotations

import hashlib
import time

import pytest
import redis as redispy

from conftest import start_server
from diffkit import cmd, format_report, hello, run_steps
from resp_client import encode_command


def ev(script, *keys_and_args, nkeys=None):
    """EVAL script nkeys args... (nkeys defaults to all of them)."""
    n = len(keys_and_args) if nkeys is None else nkeys
    return ["EVAL", script, str(n), *keys_and_args]


def sha(body):
    return hashlib.sha1(body.encode()).hexdigest()


CASES = {
    "lua_to_resp": [
        ev("return 'hello'"), ev("return ''"), ev("return 42"), ev("return 3.99"), ev("return -3.99"),
        ev("return 1e20"), ev("return 1/0"), ev("return -1/0"), ev("return 0/0"), ev("return -1e30"),
        ev("return 9.3e18"), ev("redis.call('set', 'k', 1/0); return redis.call('get', 'k')"),
        ev("redis.call('set', 'k', 0/0); return redis.call('get', 'k')"), ev("return true"), ev("return false"), ev("return nil"), ev("return {}"),
        ev("return {1, 'two', {3, {4}}, false, 5}"), ev("return {1, 2, nil, 4}"),
        ev("local t = {}; t[1] = 'a'; t[3] = 'c'; return t"), ev("return {a = 1, b = 2}"),
        ev("return {err = 'My error'}"), ev("return {err = 'X'}, 1"), ev("return {ok = 'FINE'}"),
        ev("return redis.error_reply('ERR custom')"), ev("return redis.error_reply('-CODE with dash')"),
        ev("return redis.status_reply('STATUS')"), ev("return {double = 3.5}"), ev("return {1, {err = 'in'}, 3}"),
        ev("return 'bin\\0ary'"), ev("return {KEYS[1], ARGV[1], #KEYS, #ARGV}", "k1", "a1", "a2", nkeys=1),
    ],
    "resp_to_lua": [
        ["SET", "s", "v"], ["RPUSH", "l", "a", "b", "c"], ["HSET", "h", "f", "v"],
        ev("return redis.call('get', 's')"), ev("return redis.call('get', 'nosuch')"),
        ev("return type(redis.call('get', 'nosuch'))"), ev("return redis.call('lrange', 'l', 0, -1)"),
        ev("return redis.call('ping')"), ev("return redis.call('ping')['ok']"), ev("return redis.call('incr', 'n')"),
        ev("return type(redis.call('incr', 'n'))"), ev("return redis.call('hgetall', 'h')"),
        ev("return redis.call('set', 'x', 1.5)"), ev("return redis.call('get', 'x')"),
        ev("return redis.call('set', 'x', 0.1)"), ev("return redis.call('get', 'x')"),
        ev("return redis.call('set', 'x', 100)"), ev("return redis.call('get', 'x')"),
        ev("return redis.call('lpop', 'nolist')"), ev("return redis.call('exists', 's', 'nosuch', 'l')"),
    ],
    "resp3": [
        ["HSET", "h", "f", "v"], ["SADD", "st", "m"], ["ZADD", "z", "1.5", "m"],
        ev("redis.setresp(3); return redis.call('hgetall', 'h')"),
        ev("redis.setresp(3); local r = redis.call('hgetall', 'h'); return r['map']['f']"),
        ev("redis.setresp(3); return redis.call('smembers', 'st')"),
        ev("redis.setresp(3); return redis.call('zscore', 'z', 'm')"),
        ev("redis.setresp(3); return type(redis.call('get', 'nosuch'))"),
        ev("redis.setresp(3); return {map = {a = 1}}"), ev("redis.setresp(3); return {set = {a = true}}"),
        ev("redis.setresp(3); return true"), ev("redis.setresp(3); return false"),
        ev("redis.setresp(3); return {double = 1.5}"), ev("return {set = {a = true, b = true}}"),
        ev("return {big_number = '123'}"), ev("return {verbatim_string = {format = 'txt', string = 'abc'}}"),
        hello("HELLO", "3"), ev("return {map = {a = 1}}"), ev("redis.setresp(3); return {map = {a = 1}}"),
        ev("redis.setresp(3); return redis.call('hgetall', 'h')"), ev("return false"),
        ev("redis.setresp(3); return false"), ev("return nil"), ev("return {big_number = '123'}"),
        ev("return {verbatim_string = {format = 'txt', string = 'abc'}}"), ev("return {double = 2.5}"),
        ev("redis.setresp(3); return redis.call('hgetall', 'nosuch')"),
    ],
    "errors": [
        ["SET", "str", "x"], ["RPUSH", "list", "a"],
        ev("return redis.call('nosuchcmd')"), ev("return redis.pcall('nosuchcmd')"),
        ev("return redis.call('get')"), ev("return redis.pcall('get')"), ev("return redis.call()"),
        ev("return redis.call('incr', 'str')"), ev("return redis.pcall('incr', 'str')"),
        ev("return redis.call('get', 'list')"), ev("local r = redis.pcall('get', 'list'); return r['err']"),
        ev("return redis.call('get', {})"), ev("error('boom')"), ev("error({err = 'TABLE err'})"),
        ev("local x = nil; return x.y"), ev("\n\nreturn redis.call('nosuch')"),
        ev("return 1 +"), ev("syntax error here"), ev("return redis.call('bgsave')"),
        ev("return redis.call('multi')"), ev("return redis.call('eval', 'return 1', 0)"),
        ev("return redis.call('subscribe', 'ch')"),
        ["EVAL", "return 1", "-1"], ["EVAL", "return 1", "2", "a"], ["EVAL", "return 1", "x"], ["EVAL", "return 1"],
        ev("redis.log()"), ev("redis.log('x', 'y')"), ev("redis.log(99, 'y')"), ev("redis.log(redis.LOG_NOTICE, 'hi')"),
        ev("return redis.sha1hex()"), ev("return redis.error_reply()"), ev("return redis.status_reply(5)"),
        ev("redis.setresp('x')"), ev("redis.setresp(4)"), ev("redis.setresp()"),
    ],
    "globals_and_sandbox": [
        ev("a = 1"), ev("return a"), ev("redis = 1"), ev("function f() end"), ev("return type(os)"),
        ev("return type(io)"), ev("return type(print)"), ev("return type(loadfile)"), ev("return type(dofile)"),
        ev("return type(setfenv)"), ev("return type(getfenv)"), ev("return type(debug)"),
        ev("return type(newproxy)"), ev("return type(loadstring)"), ev("return type(require)"),
        ev("return tostring(loadstring(string.dump(function() return 1 end)))"),
        ev("return loadstring('return 7')()"), ev("local a = 5; return a"), ev("return _VERSION"),
        ev("return type(redis.call)"), ev("return redis.LOG_WARNING"), ev("return redis.REPL_ALL"),
        ev("return type(cjson)"), ev("return type(bit)"), ev("return type(coroutine)"),
    ],
    # Every table among the globals is read-only, as in Redis 7.0: a script
    # cannot change what the next script sees. Each write is followed by a
    # use of what it tried to change.
    "readonly_libraries": [
        ev("string.upper = nil"), ev("return string.upper('a')"), ev("redis.call = 1"),
        ev("return redis.call('ping')"), ev("cjson.encode = nil"), ev("return cjson.encode({1})"),
        ev("bit.band = nil"), ev("cmsgpack.pack = nil"), ev("struct.pack = nil"), ev("math.pi = 3"),
        ev("return tostring(math.pi)"), ev("table.insert = nil"), ev("coroutine.create = nil"),
        ev("string.newfn = function() return 1 end"), ev("return type(string.newfn)"),
        ev("rawset(string, 'x', 1)"), ev("rawset(_G, 'x', 1)"), ev("setmetatable(string, {})"),
        ev("local x = _G.string; x.y = 1"), ev("_G.x = 1"), ev("return rawget(_G, 'nosuch')"),
        ev("getmetatable('').__index = {}"), ev("getmetatable('').__index.upper = nil"),
        ev("return getmetatable('').__index == string"), ev("return ('abc'):upper()"),
        ev("return getmetatable(string)"),
        ev("local n = 0; for k, v in pairs(string) do n = n + 1 end; return n"),
        ev("local r = {}; for k in pairs(redis) do r[#r + 1] = k end; table.sort(r); return r"),
        ev("local r = {}; for k in pairs(cjson) do r[#r + 1] = k end; table.sort(r); return r"),
        ev("return rawget(string, 'upper') ~= nil"), ev("return next(string) ~= nil"),
        ev("local t = {}; t.x = 1; rawset(t, 'y', 2); return {t.x, rawget(t, 'y')}"),
        ev("local t = setmetatable({}, {__metatable = 'x'}); return getmetatable(t)"),
        ev("setmetatable(setmetatable({}, {__metatable = 'x'}), {})"), ev("return setmetatable({}, 1)"),
        ev("return pairs(nil)"), ev("return next({}, 'nokey')"), ev("return rawget(1)"), ev("return rawset({}, 1)"),
        ev("local t = {a = 1}; local k, v = next(t); return {k, v}"),
        ev("local c = cjson.new(); c.x = 1; return c.x"),
        ev("local g = getmetatable(_G); g.__index = {}"), ev("return type(getmetatable(_G))"),
        ev("return type(getmetatable(_G).__index)"), ev("setmetatable(_G, {})"),
        ev("return type(getmetatable(redis))"),
    ],
    "acl_check_cmd": [
        ev("return redis.acl_check_cmd('get')"), ev("return redis.acl_check_cmd('set', 'a', 'b')"),
        ev("return redis.acl_check_cmd('nosuch')"), ev("return redis.acl_check_cmd()"),
        ev("return redis.acl_check_cmd(1)"), ev("return redis.acl_check_cmd({})"),
        ev("return redis.acl_check_cmd('config', 'get')"), ev("return redis.acl_check_cmd('config', 'nosuch')"),
    ],
    "libraries": [
        ev("return cjson.encode({1, 2, {a = 3}})"), ev("return cjson.encode({a = 1/3})"),
        ev("return cjson.decode('[1,2,{\"a\":3.5}]')[3].a"), ev("return cjson.encode(cjson.decode('{\"x\":[]}'))"),
        ev("return cjson.decode('\"\\\\u00e9\"')"), ev("return cjson.encode('a\"b')"),
        ev("return bit.band(7, 3)"), ev("return bit.bor(1, 2, 4)"), ev("return bit.tohex(65535)"),
        ev("return bit.lshift(1, 31)"), ev("return string.format('%.3f', 1 / 3)"),
        ev("return table.concat({'a', 'b'}, ',')"), ev("return math.floor(2.7)"),
        ev("return redis.sha1hex('')"), ev("return redis.sha1hex('abc')"), ev("return redis.sha1hex(123)"),
    ],
    "cmsgpack": [
        ev("return cmsgpack.pack(1, -1, 127, 128, 255, 256, 65535, 65536, 4294967295, 4294967296, -32, -33, -128, "
           "-129, -32768, -32769, -2147483648, -2147483649)"),
        ev("return cmsgpack.pack(1.5, 0.1, 1e300, -0.0, 1/0, 0/0, 1e20, -1e20, 2^63, -2^63)"),
        ev("return cmsgpack.pack('', 'abc', string.rep('x', 31), string.rep('x', 32), string.rep('x', 255), "
           "string.rep('x', 256), string.rep('y', 70000))"),
        ev("return cmsgpack.pack({1, 2, 3}, {a = 1}, {}, {1, nil, 3}, {[1] = 1, [3] = 3}, {x = {y = {z = {}}}})"),
        ev("return cmsgpack.pack(true, false, nil)"), ev("return cmsgpack.pack()"),
        ev("local t = {} for i = 1, 20 do t = {t} end return cmsgpack.pack(t)"),
        ev("local t = {} for i = 1, 70000 do t[i] = i end return #cmsgpack.pack(t)"),
        ev("return {cmsgpack.unpack(cmsgpack.pack(1, 'a', {1, 2, {x = 3}}, true))}"),
        ev("return cjson.encode({cmsgpack.unpack(cmsgpack.pack({a = {1, 2}, b = 'x'}))})"),
        ev("return {cmsgpack.unpack_one(cmsgpack.pack(1, 2, 3))}"),
        ev("return {cmsgpack.unpack_one(cmsgpack.pack(1, 2, 3), 2)}"),
        ev("return {cmsgpack.unpack_limit(cmsgpack.pack(1, 2, 3), 2)}"),
        ev("return {cmsgpack.unpack_limit(cmsgpack.pack(1, 2, 3), 2, 2)}"),
        ev("return cmsgpack.unpack_one('abc', 10)"), ev("return cmsgpack.unpack_limit('abc', -1)"),
        ev("return {cmsgpack.unpack('')}"), ev("return cmsgpack.unpack('\\193')"),
        ev("return cmsgpack.unpack('\\205\\1')"), ev("return cmsgpack.unpack('\\220\\255\\255')"),
        ev("return cmsgpack.unpack('\\196\\3abc')"), ev("return cmsgpack.unpack('\\212\\1\\2')"),
        ev("return cmsgpack.unpack('\\217\\3abc')"), ev("return cmsgpack.unpack('\\217\\3ab')"),
        ev("return cmsgpack.unpack('\\219\\255\\255\\255\\255ab')"),
        ev("return cmsgpack.unpack('\\211\\255\\255\\255\\255\\255\\255\\255\\255')"),
        ev("return cmsgpack.unpack('\\202\\63\\192\\0\\0')"),
        ev("return cjson.encode({cmsgpack.unpack('\\130\\161a\\1\\161b\\2')})"),
        ["EVAL", "return cjson.encode({cmsgpack.unpack(ARGV[1])})", "0", b"\x93\x01\xa1x\xc3"],
        ["EVAL", "return {cmsgpack.unpack(ARGV[1])}", "0", b"\xdf\xff\xff\xff\xff"],
    ],
    "evalsha_and_script": [
        ["SCRIPT", "LOAD", "return 'loaded'"], ["EVALSHA", sha("return 'loaded'"), "0"],
        ["EVALSHA", sha("return 'loaded'").upper(), "0"], ["EVALSHA", "0" * 40, "0"], ["EVALSHA", "short", "0"],
        ["EVALSHA_RO", sha("return 'loaded'"), "0"],
        ["SCRIPT", "EXISTS", sha("return 'loaded'"), "0" * 40, "nope"],
        ev("return 'by eval'"), ["EVALSHA", sha("return 'by eval'"), "0"],
        ["SCRIPT", "LOAD", "return +"], ["SCRIPT", "EXISTS", sha("return +")],
        ["SCRIPT", "FLUSH"], ["SCRIPT", "EXISTS", sha("return 'loaded'")], ["EVALSHA", sha("return 'loaded'"), "0"],
        ["SCRIPT", "FLUSH", "ASYNC"], ["SCRIPT", "FLUSH", "SYNC"], ["SCRIPT", "FLUSH", "BAD"],
        ["SCRIPT", "KILL"], ["SCRIPT", "DEBUG", "NO"], ["SCRIPT", "NOSUCH"], ["SCRIPT"],
        ["SCRIPT", "LOAD"], ["SCRIPT", "HELP"],
    ],
    "read_only": [
        ["SET", "k", "v"],
        ["EVAL_RO", "return redis.call('get', KEYS[1])", "1", "k"],
        ["EVAL_RO", "return redis.call('set', KEYS[1], 'x')", "1", "k"],
        ["EVAL_RO", "return redis.pcall('del', 'k')", "0"], ["GET", "k"],
        ["EVAL_RO", "return redis.call('ping')", "0"],
    ],
    "writes_any_key_and_select": [
        ev("redis.call('set', 'undeclared', 'v'); return redis.call('get', 'undeclared')"),
        ev("redis.call('select', 3); redis.call('set', 'in3', 'x'); return redis.call('dbsize')"),
        ["GET", "in3"], ["SELECT", "3"], ["GET", "in3"],
        ev("return redis.call('get', 'in3')"), ["SELECT", "0"],
        ev("redis.call('rpush', KEYS[1], 'a', 'b'); return redis.call('lrange', KEYS[1], 0, -1)", "lst"),
        ["LRANGE", "lst", "0", "-1"],
    ],
    "shebang_flags": [
        ev("#!lua\nreturn 1"), ev("#!lua flags=no-writes\nreturn redis.call('set', 'a', 'b')"),
        ev("#!lua name=x\nreturn 1"), ev("#!lua flags=bad\nreturn 1"), ev("#!js\nreturn 1"),
        ev("#!lua flags=no-writes,allow-oom\nreturn 2"), ev("#!lua flags=\nreturn redis.call('set', 'a', 'b')"),
        ev("#!lua\nerror('x')"), ev("#! lua\nreturn 1"), ev("#!lua  flags=no-writes\nreturn 3"),
        ["SCRIPT", "LOAD", "#!lua name=x\nreturn 1"],
        ["EVAL_RO", "#!lua\nreturn 1", "0"], ["EVAL_RO", "#!lua flags=no-writes\nreturn 1", "0"],
        ["CONFIG", "SET", "maxmemory", "1"],
        ev("return 1"), ev("#!lua\nreturn 1"), ev("#!lua flags=no-writes\nreturn 1"),
        ev("#!lua flags=allow-oom\nreturn redis.call('set', 'a', 'b')"), ev("return redis.call('set', 'a', 'b')"),
        ["CONFIG", "SET", "maxmemory", "0"],
    ],
    "struct": [
        ev("return struct.pack('>I4', 1)"), ev("return struct.pack('<i2h', -1, 300)"),
        ev("return struct.pack('bBhHlLT', -1, 255, -2, 65535, -3, 4, 5)"), ev("return struct.pack('!4 b i', 1, 2)"),
        ev("return struct.pack('fd', 1.5, 0.1)"), ev("return struct.pack('>fd', 1.5, 0.1)"),
        ev("return struct.pack('c3 s', 'abcdef', 'zz')"), ev("return struct.pack('c0', 'whole')"),
        ev("return {struct.unpack('>I4', struct.pack('>I4', 305419896))}"),
        ev("return {struct.unpack('<i2', '\\255\\255')}"), ev("return {struct.unpack('bB', '\\255\\255')}"),
        ev("return {struct.unpack('s c2', 'hi\\0xyz')}"), ev("return {struct.unpack('B c0', '\\3abcdef')}"),
        ev("return {struct.unpack('I4', 'ab')}"), ev("return {struct.unpack('s', 'noend')}"),
        ev("return struct.size('bhlid')"), ev("return struct.size('!8 b d')"), ev("return struct.size('s')"),
        ev("return struct.size('c0')"), ev("return struct.pack('q', 1)"), ev("return struct.pack('i40', 1)"),
        ev("return struct.pack('!3 i', 1)"), ev("return {struct.unpack('I4', 'abcdabcd', 5)}"),
        ev("return {struct.unpack('I4', 'abcd', 0)}"), ev("return struct.pack('c5', 'ab')"),
        ev("return {struct.unpack('>d', struct.pack('>d', 3.25))}"),
        ev("return {struct.unpack('i8', struct.pack('i8', -5))}"),
        ev("return {struct.unpack('I16', struct.pack('I16', 7))}"), ev("return struct.pack('I16', -1)"),
        ev("return {struct.unpack('c0', 'abc')}"), ev("return struct.pack('i', 2^40)"),
        ev("return {struct.unpack('>!4 h i', struct.pack('>!4 h i', 1, -2))}"),
        ["EVAL", "return {struct.unpack(ARGV[1], ARGV[2])}", "0", ">I2 c0 B", b"\x00\x02ab\x07"],
    ],
    "blocking_does_not_block": [
        ev("return redis.call('blpop', 'empty', 0)"), ev("return redis.call('brpoplpush', 'a', 'b', 0)"),
        ev("return redis.call('bzpopmin', 'z', 0)"), ["RPUSH", "full", "x"],
        ev("return redis.call('blpop', 'full', 0)"),
    ],
    "random_sequence": [
        ev("return math.random(100)"), ev("return {math.random(), math.random(1, 1000)}"),
        ev("math.randomseed(7); return {math.random(50), math.random(50)}"), ev("return math.random(100)"),
        ev("return math.random(0)"), ev("return math.random(3, 1)"),
    ],
    "transactions": [
        ["MULTI"], ev("return redis.call('incr', 'c')"), ["INCR", "c"], ["EXEC"],
        ["WATCH", "w"], cmd("EVAL", "return redis.call('set', 'w', 'other')", "0", conn=1),
        ["MULTI"], ["SET", "w", "mine"], ["EXEC"], ["GET", "w"],
        ["MULTI"], ev("return redis.call('nosuch')"), ["EXEC"],
    ],
}


def lib(name, body):
    return "#!lua name=%s\n%s" % (name, body)


FUNCTION_CASES = {
    "function_load_and_call": [
        ["FUNCTION", "FLUSH"],
        ["FUNCTION", "LOAD", lib("lib1", "redis.register_function('f1', function(keys, args) return {keys, args} end)")],
        ["FCALL", "f1", "1", "k", "a"], ["FCALL", "F1", "0"],
        ["FUNCTION", "LOAD", lib("lib1", "redis.register_function('f1', function(keys, args) return 1 end)")],
        ["FUNCTION", "LOAD", "REPLACE", lib("lib1", "redis.register_function('f1', function(keys, args) "
                                                    "return redis.call('set', keys[1], 'x') end)")],
        ["FCALL", "f1", "1", "k"], ["FCALL_RO", "f1", "1", "k"], ["FCALL", "nosuch", "0"],
        ["FCALL", "f1", "bad"], ["FCALL", "f1", "-1"], ["FCALL", "f1", "5", "a"],
        ["FUNCTION", "LOAD", "foo", "bar", lib("x", "redis.register_function('q', function() end)")],
        ["FUNCTION", "LOAD", lib("lib3", "redis.register_function{function_name='g', callback=function() return 2 end, "
                                         "flags={'no-writes'}, description='desc'}")],
        ["FCALL_RO", "g", "0"], ["FUNCTION", "LIST", "WITHCODE", "LIBRARYNAME", "lib3"],
        ["FUNCTION", "LIST", "LIBRARYNAME", "*3"],  # one library: Redis lists several in a random order
        ["FUNCTION", "STATS"], ["FUNCTION", "DELETE", "lib3"], ["FUNCTION", "DELETE", "lib3"], ["FUNCTION", "KILL"],
        ["FUNCTION", "LOAD", lib("lib4", "local function x() error('boom') end redis.register_function('h', "
                                         "function() x() end)")],
        ["FCALL", "h", "0"],
        ["FUNCTION", "LOAD", lib("e10", "redis.register_function{function_name='zy', callback=function() "
                                        "return redis.call('set','a','b') end, flags={'no-writes'}}")],
        ["FCALL", "zy", "0"], ["FUNCTION", "FLUSH", "BAD"], ["FUNCTION", "FLUSH", "ASYNC"], ["FUNCTION", "LIST"],
        ["FUNCTION", "RESTORE", "bad"], ["FUNCTION", "RESTORE", "a", "b", "c"], ["FUNCTION", "HELP"],
        ["FUNCTION", "STATS"],
    ],
    "function_load_errors": [
        ["FUNCTION", "LOAD", lib("lib2", "redis.call('ping')")], ["FUNCTION", "LOAD", lib("lib2", "return 1")],
        ["FUNCTION", "LOAD", "no shebang"], ["FUNCTION", "LOAD", "#!js name=x\n"], ["FUNCTION", "LOAD", "#!lua\n"],
        ["FUNCTION", "LOAD", "#!lua name=lib3 foo=bar\n"], ["FUNCTION", "LOAD", lib("e1", "return +")],
        ["FUNCTION", "LOAD", lib("e2", "redis.register_function{function_name='a', callback=function() end, "
                                       "flags={'bad'}}")],
        ["FUNCTION", "LOAD", lib("e3", "redis.register_function{function_name='a', callback=function() end, foo=1}")],
        ["FUNCTION", "LOAD", lib("e4", "redis.register_function{callback=function() end}")],
        ["FUNCTION", "LOAD", lib("e5", "redis.register_function{function_name='a'}")],
        ["FUNCTION", "LOAD", lib("e6", "redis.register_function('a-b', function() end)")],
        ["FUNCTION", "LOAD", lib("e7", "redis.register_function('a', function() end) "
                                       "redis.register_function('a', function() end)")],
        ["FUNCTION", "LOAD", lib("e8", "redis.register_function()")],
        ["FUNCTION", "LOAD", lib("e8", "redis.register_function('x', 1)")],
        ["FUNCTION", "LOAD", lib("e-9", "redis.register_function('zz', function() end)")],
        ["FUNCTION", "LOAD", lib("e11", "local a = redis.setresp")],
        ["FUNCTION", "LOAD", lib("inf", "while true do end")],
        ["FUNCTION", "LOAD", lib("e12", "redis.register_function('zx', function(k, a) return redis.setresp end)")],
        ["FCALL", "zx", "0"], ["FUNCTION", "LOAD", lib("e13", "redis.register_function('zx', function() end)")],
        ["FUNCTION", "LOAD", "#!LUA name=up\nredis.register_function('up1', function() return 'up' end)"],
        ["FCALL", "up1", "0"], ["FUNCTION", "FLUSH"],
    ],
}


@pytest.fixture(scope="module")
def pair():
    f = start_server("ferry")
    r = start_server("redis")
    yield f, r
    f.cleanup()
    r.cleanup()


@pytest.mark.parametrize("name", sorted(CASES))
def test_scripting(pair, name):
    f, r = pair
    mismatches, transcript = run_steps(f.port, r.port, CASES[name])
    assert not mismatches, format_report(name, mismatches, transcript)


@pytest.mark.parametrize("name", sorted(FUNCTION_CASES))
def test_functions(pair, name):
    f, r = pair
    mismatches, transcript = run_steps(f.port, r.port, FUNCTION_CASES[name])
    assert not mismatches, format_report(name, mismatches, transcript)


def test_function_dump_restore_both_ways(pair):
    """FUNCTION DUMP payloads are byte-identical, and each server restores
    the other's (APPEND collision, REPLACE, FLUSH policies)."""
    f, r = pair
    fc, rc = redispy.Redis(port=f.port), redispy.Redis(port=r.port)
    code = lib("dl", "redis.register_function('dfn', function() return '%s' end)" % ("x" * 60))
    for c in (fc, rc):
        c.function_flush()
        c.function_load(code)
    fd, rd = fc.function_dump(), rc.function_dump()
    assert fd == rd
    for c, payload in ((fc, rd), (rc, fd)):
        with pytest.raises(redispy.ResponseError, match="Library dl already exists"):
            c.function_restore(payload)
        assert c.function_restore(payload, "REPLACE")
        c.function_flush()
        assert c.function_restore(payload)
        assert c.fcall("dfn", 0) == b"x" * 60
        assert c.function_restore(payload, "FLUSH")


def test_functions_survive_restart_and_move_between_servers(tmpdirs):
    """Libraries are saved in dump.rdb (ahead of the keys) and loaded at
    start; each server loads the other's file."""
    from conftest import start_in
    files = {}
    for kind in ("ferry", "redis"):
        d = tmpdirs()
        s = start_in(kind, d)
        try:
            c = redispy.Redis(port=s.port)
            c.function_load(lib("persisted", "redis.register_function('pf', function(k, a) return 'kept' end)"))
            c.set("key", "v")
            assert c.save()
        finally:
            s.cleanup()
        files[kind] = d
    for kind, other in (("ferry", "redis"), ("redis", "ferry")):
        s = start_in(kind, files[other])
        try:
            c = redispy.Redis(port=s.port)
            assert c.fcall("pf", 0) == b"kept"
            assert c.get("key") == b"v"  # the keyspace loaded too
        finally:
            s.cleanup()


def test_info_counts_cached_scripts(pair):
    f, _ = pair
    c = redispy.Redis(port=f.port)
    c.script_flush()
    assert c.info("memory")["number_of_cached_scripts"] == 0
    c.eval("return 1", 0)
    c.script_load("return 2")
    c.eval("return 1", 0)
    mem = c.info("memory")
    assert mem["number_of_cached_scripts"] == 2
    assert mem["used_memory_scripts_eval"] == len("return 1") + len("return 2")
    assert mem["used_memory_lua"] > 10000
    assert c.info("commandstats")["cmdstat_eval"]["calls"] >= 2


def test_redis_py_lock_and_register_script(pair):
    """redis-py's Lock: acquire, extend, reacquire, release, release of a
    lock lost to expiry, a second owner refused; register_script's
    EVALSHA / EVAL fallback after SCRIPT FLUSH."""
    f, _ = pair
    c = redispy.Redis(port=f.port)
    c.flushall()
    lock = c.lock("res", timeout=10)
    assert lock.acquire(blocking=False)
    other = c.lock("res", timeout=10)
    assert not other.acquire(blocking=False)
    assert lock.extend(5)
    assert 10000 < c.pttl("res") <= 15000
    assert lock.reacquire()
    assert 5000 < c.pttl("res") <= 10000
    lock.release()
    assert c.get("res") is None
    assert other.acquire(blocking=False)
    c.delete("res")  # the lock is lost
    with pytest.raises(redispy.exceptions.LockNotOwnedError):
        other.release()
    incr_by = c.register_script("return redis.call('incrby', KEYS[1], ARGV[1])")
    assert incr_by(keys=["n"], args=[5]) == 5
    c.script_flush()
    assert incr_by(keys=["n"], args=[2]) == 7  # NOSCRIPT, then EVAL by redis-py


# ------------------------------------------------------------------ busy scripts
BUSY = b"-BUSY Redis is busy running a script. You can only call SCRIPT KILL or SHUTDOWN NOSAVE.\r\n"
LOOP = "local i = 0 while true do i = i + 1 end"
WRITE_LOOP = "redis.call('set', 'w', '1') local i = 0 while true do i = i + 1 end"


def wait_busy(c, timeout=10):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        r = c.command("PING")
        if r.startswith(b"-BUSY "):
            return
        assert r == b"+PONG\r\n", r
        time.sleep(0.02)
    raise AssertionError("the script never became busy")


@pytest.mark.parametrize("kind", ["ferry", "redis"])
def test_busy_script_killed(kind):
    """Past busy-reply-threshold other clients get -BUSY; SCRIPT KILL stops a
    script that has not written, its caller gets the killed error, and the
    server serves again (both servers, same bytes)."""
    s = start_server(kind, "--busy-reply-threshold", "100")
    try:
        runner, other = s.client(timeout=20), s.client(timeout=20)
        runner.send_command("EVAL", LOOP, "0")
        wait_busy(other)
        assert other.command("GET", "x") == BUSY
        assert other.command("SHUTDOWN") == BUSY
        assert other.command("FUNCTION", "STATS") == BUSY  # it reports on functions only
        assert other.command("SCRIPT", "KILL") == b"+OK\r\n"
        assert runner.read_reply(timeout=10) == (b"-ERR Script killed by user with SCRIPT KILL... script: %s, "
                                                 b"on @user_script:1.\r\n" % sha(LOOP).encode())
        assert other.command("PING") == b"+PONG\r\n"
        assert other.command("SCRIPT", "KILL") == b"-NOTBUSY No scripts in execution right now.\r\n"
    finally:
        s.cleanup()


@pytest.mark.parametrize("kind", ["ferry", "redis"])
def test_busy_script_that_wrote_is_unkillable_and_shutdown_nosave_ends_it(kind):
    s = start_server(kind, "--busy-reply-threshold", "100")
    try:
        runner, other = s.client(timeout=20), s.client(timeout=20)
        runner.send_command("EVAL", WRITE_LOOP, "0")
        wait_busy(other)
        assert other.command("SCRIPT", "KILL") == (
            b"-UNKILLABLE Sorry the script already executed write commands against the dataset. You can either "
            b"wait the script termination or kill the server in a hard way using the SHUTDOWN NOSAVE command.\r\n")
        other.send_command("SHUTDOWN", "NOSAVE")
        assert s.proc.wait(timeout=10) == 0
    finally:
        s.cleanup()


def test_busy_script_pcall_cannot_swallow_the_kill():
    """A script that catches errors with pcall in its loop still stops."""
    s = start_server("ferry", "--busy-reply-threshold", "100")
    try:
        runner, other = s.client(timeout=20), s.client(timeout=20)
        runner.send_command("EVAL", "while true do pcall(function() local i = 0 while true do i = i + 1 end end) end",
                            "0")  # the same body as checked below
        wait_busy(other)
        assert other.command("SCRIPT", "KILL") == b"+OK\r\n"
        body = "while true do pcall(function() local i = 0 while true do i = i + 1 end end) end"
        assert runner.read_reply(timeout=10) == (b"-ERR Script killed by user with SCRIPT KILL... script: %s, "
                                                 b"on @user_script:1.\r\n" % sha(body).encode())
        assert runner.command("PING") == b"+PONG\r\n"
    finally:
        s.cleanup()


def test_busy_caller_pipeline_survives_other_clients_traffic():
    """The caller's requests pipelined after a busy function still run, byte
    for byte, although other clients were read (into other buffers) while
    the function was busy; FUNCTION STATS shows the running function."""
    s = start_server("ferry", "--busy-reply-threshold", "50")
    try:
        admin, runner, other = s.client(timeout=20), s.client(timeout=20), s.client(timeout=20)
        code = "#!lua name=spin\nredis.register_function('spin', function() local a = 1 while true do a = a + 1 end end)"
        assert admin.command("FUNCTION", "LOAD", code) == b"$4\r\nspin\r\n"
        runner.send(b"".join(encode_command(c) for c in (("FCALL", "spin", "0"), ("SET", "after", "1"),
                                                             ("GET", "after"))))
        wait_busy(other)
        assert other.command("SET", "junk", "x" * 5000) == BUSY.replace(b"SCRIPT KILL", b"FUNCTION KILL")
        stats = other.command("FUNCTION", "STATS")
        assert b"$7\r\ncommand\r\n*3\r\n$5\r\nFCALL\r\n$4\r\nspin\r\n$1\r\n0\r\n" in stats, stats
        assert other.command("SCRIPT", "KILL") == BUSY.replace(b"SCRIPT KILL", b"FUNCTION KILL")
        assert other.command("FUNCTION", "KILL") == b"+OK\r\n"
        assert runner.read_reply(timeout=10) == (b"-ERR Script killed by user with SCRIPT KILL... script: spin, "
                                                 b"on @user_function:2.\r\n")
        assert runner.read_reply(timeout=10) == b"+OK\r\n"
        assert runner.read_reply(timeout=10) == b"$1\r\n1\r\n"
        assert other.command("GET", "junk") == b"$-1\r\n"
    finally:
        s.cleanup()
