"""Differential tests for the string commands (src/commands/cmd_string.c).

Every case is a list of steps run on a fresh (FLUSHALL'ed) keyspace on both
ferry and the reference redis-server; every reply is compared byte for byte
(see diffkit.py). The cases walk through each command's options, option
conflicts, error paths and the encodings OBJECT ENCODING reports.
"""
from __future__ import annotations

import pytest

from conftest import start_server
from diffkit import approx, cmd, flushall, format_report, hello, run_steps, sleep

LLMAX = "9223372036854775807"
LLMIN = "-9223372036854775808"
FAR_S = "4102444800"            # 2100-01-01 in unix seconds
FAR_MS = FAR_S + "000"

CASES = {
    # ---------------------------------------------------------------- GET/SET
    "get_set_basic": [
        ["GET", "k"], ["SET", "k", "v"], ["GET", "k"], ["SET", "k", ""], ["GET", "k"],
        ["SET", "k", b"bin\x00\r\nary"], ["GET", "k"], ["SET", "k", "x" * 5000], ["GET", "k"],
    ],
    "set_expire_options": [
        ["SET", "k", "v", "EX", "100"], approx("TTL", "k"),
        ["SET", "k", "v", "PX", "100000"], approx("TTL", "k"),
        ["SET", "k", "v", "ex", "100", "ex", "200"], approx("TTL", "k"),
        ["SET", "k", "v", "EXAT", FAR_S], ["EXPIRETIME", "k"],
        ["SET", "k", "v", "PXAT", FAR_MS], ["PEXPIRETIME", "k"],
        ["SET", "k", "v"], ["TTL", "k"],
        ["SET", "k", "v", "EXAT", "9223372036854775"], ["GET", "k"],
        ["SET", "k", "v", "PXAT", LLMAX], ["GET", "k"],
        ["SET", "k", "v", "EX", "9223372036854"], ["GET", "k"],
    ],
    "set_invalid_expire": [
        ["SET", "k", "v", "EX", LLMAX], ["SET", "k", "v", "EX", "9223372036854775"],
        ["SET", "k", "v", "PX", LLMAX], ["SET", "k", "v", "PX", "9223372036854775000"],
        ["SET", "k", "v", "EX", "0"], ["SET", "k", "v", "EX", "-1"], ["SET", "k", "v", "PX", "0"],
        ["SET", "k", "v", "PX", LLMIN], ["SET", "k", "v", "EXAT", "0"], ["SET", "k", "v", "PXAT", "-5"],
        ["SET", "k", "v", "EXAT", LLMAX],
        ["SET", "k", "v", "EX", "abc"], ["SET", "k", "v", "EX", "1.5"], ["SET", "k", "v", "EX", " 1"],
        ["SET", "k", "v", "EX", "01"], ["SET", "k", "v", "EX", ""],
        ["EXISTS", "k"],
    ],
    "set_past_absolute": [
        ["SET", "k", "old"], ["SET", "k", "v", "PXAT", "1"], ["GET", "k"], ["EXISTS", "k"],
        ["SET", "k", "v", "EXAT", "1", "GET"], ["GET", "k"],
        ["SET", "k", "v"], ["SET", "k", "v2", "PXAT", "1", "GET"], ["GET", "k"],
    ],
    "set_syntax_conflicts": [
        ["SET", "k", "v", "NX", "XX"], ["SET", "k", "v", "XX", "NX"],
        ["SET", "k", "v", "EX", "1", "PX", "1"], ["SET", "k", "v", "PX", "1", "EX", "1"],
        ["SET", "k", "v", "EX", "1", "EXAT", "1"], ["SET", "k", "v", "PXAT", "1", "PX", "1"],
        ["SET", "k", "v", "EX", "1", "KEEPTTL"], ["SET", "k", "v", "KEEPTTL", "PX", "5"],
        ["SET", "k", "v", "KEEPTTL", "EXAT", "5"], ["SET", "k", "v", "EX"], ["SET", "k", "v", "PXAT"],
        ["SET", "k", "v", "foo"], ["SET", "k", "v", "PERSIST"], ["SET", "k", "v", "EX", "abc", "foo"],
        ["SET", "k", "v", "NXX"], ["SET", "k", "v", "N"], ["SET", "k", "v", ""],
        ["SET", "k", "v", b"nx\x00junk"], ["GET", "k"],
        ["SET", "k", "v2", "NX", "NX"], ["SET", "k", "v3", "GET", "GET"], ["SET", "k", "v4", "KEEPTTL", "KEEPTTL"],
        ["SET", "k", "v5", "xx", "xx", "get"], ["GET", "k"],
    ],
    "set_nx_xx_get": [
        ["SET", "k", "v", "XX"], ["GET", "k"], ["SET", "k", "v", "NX"], ["SET", "k", "w", "NX"], ["GET", "k"],
        ["SET", "k", "w", "XX"], ["GET", "k"],
        ["SET", "n", "v", "XX", "GET"], ["EXISTS", "n"], ["SET", "n", "v", "NX", "GET"], ["GET", "n"],
        ["SET", "n", "w", "NX", "GET"], ["GET", "n"], ["SET", "n", "x", "XX", "GET"], ["GET", "n"],
        ["SET", "n", "y", "GET"], ["SET", "m", "y", "GET"], ["GET", "m"],
    ],
    "set_keepttl": [
        ["SET", "k", "v", "EX", "100"], ["SET", "k", "v2", "KEEPTTL"], approx("TTL", "k"),
        ["SET", "k", "v3", "KEEPTTL", "GET"], approx("TTL", "k"), ["GET", "k"],
        ["SET", "k", "v4"], ["TTL", "k"], ["SET", "new", "v", "KEEPTTL"], ["TTL", "new"],
        ["SET", "k", "v", "PX", "100000"], ["SET", "k", "w", "XX", "KEEPTTL"], approx("TTL", "k"),
        ["SET", "k", "z", "NX", "KEEPTTL"], ["GET", "k"],
    ],
    "set_expiry_lapses": [
        ["SET", "k", "v", "PX", "50"], ["GET", "k"], sleep(0.15), ["GET", "k"], ["EXISTS", "k"],
        ["SET", "k", "v", "PX", "50"], sleep(0.15), ["SET", "k", "w", "NX"], ["GET", "k"],
        ["SET", "j", "v", "PX", "50"], sleep(0.15), ["SET", "j", "w", "XX"], ["GET", "j"],
        ["SET", "j", "v", "PX", "50"], sleep(0.15), ["SET", "j", "w", "KEEPTTL"], ["TTL", "j"],
    ],
    # ------------------------------------------------------- SETNX/SETEX/...
    "setnx": [
        ["SETNX", "k", "v"], ["SETNX", "k", "w"], ["GET", "k"],
        ["SET", "e", "v", "PX", "30"], sleep(0.1), ["SETNX", "e", "new"], ["GET", "e"],
    ],
    "setex_psetex": [
        ["SETEX", "k", "100", "v"], approx("TTL", "k"), ["GET", "k"],
        ["PSETEX", "k", "100000", "w"], approx("TTL", "k"), ["GET", "k"],
        ["SETEX", "k", "0", "v"], ["SETEX", "k", "-1", "v"], ["SETEX", "k", "abc", "v"],
        ["SETEX", "k", LLMAX, "v"], ["SETEX", "k", "9223372036854775", "v"],
        ["PSETEX", "k", "0", "v"], ["PSETEX", "k", "-10", "v"], ["PSETEX", "k", "1.5", "v"],
        ["PSETEX", "k", "9223372036854775800", "v"], ["PSETEX", "k", LLMAX, "v"],
        ["GET", "k"],
        ["SETEX", "k"], ["SETEX", "k", "10"], ["PSETEX", "k", "10", "v", "x"],
    ],
    "getset_getdel": [
        ["GETSET", "k", "v"], ["GETSET", "k", "w"], ["GET", "k"],
        ["SET", "t", "v", "EX", "100"], ["GETSET", "t", "x"], ["TTL", "t"],
        ["GETDEL", "k"], ["GETDEL", "k"], ["EXISTS", "k"],
        ["SET", "e", "v", "PX", "30"], sleep(0.1), ["GETDEL", "e"], ["GETSET", "e", "v"],
    ],
    "getex": [
        ["GETEX", "k"], ["GETEX", "k", "EX", "0"], ["GETEX", "k", "PERSIST"],
        ["SET", "k", "v"], ["GETEX", "k"], ["TTL", "k"],
        ["GETEX", "k", "EX", "100"], approx("TTL", "k"),
        ["GETEX", "k", "PX", "200000"], approx("TTL", "k"),
        ["GETEX", "k", "EXAT", FAR_S], ["EXPIRETIME", "k"],
        ["GETEX", "k", "PXAT", FAR_MS], ["PEXPIRETIME", "k"],
        ["GETEX", "k", "PERSIST"], ["TTL", "k"], ["GETEX", "k", "PERSIST"], ["TTL", "k"],
        ["GETEX", "k", "EX", "5", "EX", "100"], approx("TTL", "k"),
        ["GETEX", "k", "EX", "0"], ["GETEX", "k", "EX", "-1"], ["GETEX", "k", "PX", LLMAX],
        ["GETEX", "k", "EX", "9223372036854775"], ["GETEX", "k", "EXAT", "0"], ["GETEX", "k", "EX", "x"],
        ["GETEX", "k", "NX"], ["GETEX", "k", "XX"], ["GETEX", "k", "GET"], ["GETEX", "k", "KEEPTTL"],
        ["GETEX", "k", "PERSIST", "EX", "5"], ["GETEX", "k", "EX", "5", "PERSIST"],
        ["GETEX", "k", "EX", "5", "PX", "5"], ["GETEX", "k", "EX"], ["GETEX", "k", "foo"],
        ["GETEX", "k", "PERSIST", "PERSIST"], ["GETEX", "nokey", "foo"],
        approx("TTL", "k"),
        ["GETEX", "k", "PXAT", "1"], ["EXISTS", "k"], ["GETEX", "k"],
        ["SET", "k", "v"], ["GETEX", "k", "EXAT", "1"], ["EXISTS", "k"],
    ],
    # ------------------------------------------------------------- multi-key
    "mget_mset": [
        ["MSET", "a", "1", "b", "2", "c", "x" * 60], ["MGET", "a", "b", "c", "nokey"],
        ["MSET", "a"], ["MSET", "a", "b", "c"], ["MSET", "a", "9", "a", "10"], ["GET", "a"],
        ["SET", "t", "v", "EX", "100"], ["MSET", "t", "w"], ["TTL", "t"],
        ["MGET", "x"], ["MGET"],
    ],
    "msetnx": [
        ["MSETNX", "a", "1", "b", "2"], ["MGET", "a", "b"], ["MSETNX", "a", "x", "c", "3"],
        ["MGET", "a", "c"], ["MSETNX", "a", "b", "c"], ["MSETNX", "a"],
        ["MSETNX", "d", "1", "d", "2"], ["GET", "d"],
        ["SET", "e", "v", "PX", "30"], sleep(0.1), ["MSETNX", "e", "new", "f", "x"], ["MGET", "e", "f"],
    ],
    # ---------------------------------------------------------------- editing
    "append_strlen": [
        ["APPEND", "k", "hello"], ["APPEND", "k", " world"], ["GET", "k"], ["STRLEN", "k"],
        ["APPEND", "k", ""], ["STRLEN", "nokey"], ["APPEND", "e", ""], ["EXISTS", "e"], ["STRLEN", "e"],
        ["SET", "n", "12"], ["APPEND", "n", "34"], ["GET", "n"], ["INCR", "n"],
        ["SET", "t", "v", "EX", "100"], ["APPEND", "t", "w"], approx("TTL", "t"), ["GET", "t"],
        ["APPEND", "b", b"\x00\xff"], ["APPEND", "b", b"\r\n"], ["GET", "b"], ["STRLEN", "b"],
    ],
    "getrange_substr": [
        ["SET", "s", "hello world"],
        ["GETRANGE", "s", "0", "4"], ["GETRANGE", "s", "-5", "-1"], ["GETRANGE", "s", "-1", "-5"],
        ["GETRANGE", "s", "0", "-100"], ["GETRANGE", "s", "-100", "-100"], ["GETRANGE", "s", "-100", "-200"],
        ["GETRANGE", "s", "-200", "-100"], ["GETRANGE", "s", "3", "1"], ["GETRANGE", "s", "5", "5"],
        ["GETRANGE", "s", LLMIN, LLMAX], ["GETRANGE", "s", "0", LLMAX], ["GETRANGE", "s", LLMAX, LLMAX],
        ["GETRANGE", "s", "11", "20"], ["GETRANGE", "s", "10", "20"], ["GETRANGE", "s", "-1", "100"],
        ["GETRANGE", "s", "a", "1"], ["GETRANGE", "s", "0", "b"], ["GETRANGE", "s", "0", "9223372036854775808"],
        ["GETRANGE", "nokey", "0", "1"], ["GETRANGE", "nokey", "x", "1"],
        ["SET", "e", ""], ["GETRANGE", "e", "0", "-1"], ["GETRANGE", "e", "-1", "0"], ["GETRANGE", "e", "0", "0"],
        ["SET", "i", "12345"], ["GETRANGE", "i", "1", "2"],
        ["SUBSTR", "s", "1", "3"], ["SUBSTR", "s", "-3", "-1"], ["SUBSTR", "s", "x", "1"],
    ],
    "setrange": [
        ["SETRANGE", "k", "0", "hello"], ["GET", "k"], ["SETRANGE", "k", "6", "world"], ["GET", "k"],
        ["SETRANGE", "k", "1", "EL"], ["GET", "k"], ["SETRANGE", "k", "0", ""], ["STRLEN", "k"],
        ["SETRANGE", "k", "100", ""], ["STRLEN", "k"], ["SETRANGE", "k", LLMAX, ""],
        ["SETRANGE", "n", "3", "x"], ["GET", "n"], ["SETRANGE", "z", "0", ""], ["EXISTS", "z"],
        ["SETRANGE", "z", "5", ""], ["EXISTS", "z"],
        ["SETRANGE", "k", "-1", "x"], ["SETRANGE", "k", "abc", "x"], ["SETRANGE", "k", "1.0", "x"],
        ["SETRANGE", "nokey", "-1", ""], ["SETRANGE", "k", LLMIN, "x"],
        ["SETRANGE", "k", "536870912", "x"], ["SETRANGE", "k", "536870911", "xx"],
        ["SETRANGE", "k", LLMAX, "x"], ["SETRANGE", "new", "536870912", "x"], ["EXISTS", "new"],
        ["SET", "t", "v", "EX", "100"], ["SETRANGE", "t", "2", "w"], approx("TTL", "t"), ["GET", "t"],
    ],
    # --------------------------------------------------------------- counters
    "incr_decr": [
        ["INCR", "c"], ["INCR", "c"], ["DECR", "c"], ["DECR", "d"], ["INCRBY", "c", "100"],
        ["DECRBY", "c", "1000"], ["INCRBY", "c", "-5"], ["DECRBY", "c", "-5"], ["GET", "c"],
        ["INCRBY", "c", "abc"], ["INCRBY", "c", "1.5"], ["INCRBY", "c", ""], ["INCRBY", "c", "+1"],
        ["DECRBY", "c", "x"], ["INCRBY", "c", "9223372036854775808"],
        ["SET", "c", "9"], ["INCR", "c"], ["INCR", "c"], ["SET", "c", "-10"], ["INCR", "c"], ["INCR", "c"],
        ["SET", "c", "100"], ["DECR", "c"], ["GET", "c"], ["SET", "c", "99999"], ["INCR", "c"], ["GET", "c"],
        ["SET", "c", "-1"], ["INCR", "c"], ["INCR", "c"], ["GET", "c"],
    ],
    "incr_overflow": [
        ["SET", "n", LLMAX], ["INCR", "n"], ["INCRBY", "n", "1"], ["DECRBY", "n", "-1"], ["GET", "n"],
        ["SET", "m", LLMIN], ["DECR", "m"], ["INCRBY", "m", "-1"], ["INCRBY", "m", LLMAX],
        ["DECRBY", "x", LLMIN], ["EXISTS", "x"], ["DECRBY", "x", LLMAX], ["DECR", "x"], ["DECR", "x"],
        ["INCRBY", "y", LLMAX], ["INCR", "y"], ["INCRBY", "z", LLMIN], ["DECR", "z"],
        ["SET", "m", LLMIN], ["DECRBY", "m", "1"], ["INCRBY", "m", "9223372036854775807"],
    ],
    "incr_not_integer": [
        ["SET", "f", " 12"], ["INCR", "f"], ["SET", "f", "12 "], ["INCR", "f"], ["SET", "f", "012"],
        ["INCR", "f"], ["SET", "f", "12.0"], ["INCR", "f"], ["SET", "f", "+1"], ["INCR", "f"],
        ["SET", "f", ""], ["INCR", "f"], ["SET", "f", "-0"], ["INCR", "f"], ["SET", "f", "abc"],
        ["DECRBY", "f", "1"], ["SET", "f", "9223372036854775808"], ["INCR", "f"],
        ["SET", "f", "1" * 25], ["INCR", "f"], ["SET", "f", b"1\x00"], ["INCR", "f"],
    ],
    "incr_keeps_ttl": [
        ["SET", "c", "1", "EX", "100"], ["INCR", "c"], approx("TTL", "c"), ["INCRBY", "c", "1000000"],
        approx("TTL", "c"), ["INCRBYFLOAT", "c", "0.5"], approx("TTL", "c"), ["GET", "c"],
        ["SET", "e", "5", "PX", "30"], sleep(0.1), ["INCR", "e"], ["TTL", "e"],
    ],
    "incrbyfloat": [
        ["INCRBYFLOAT", "f", "1.5"], ["INCRBYFLOAT", "f", "-3"], ["INCRBYFLOAT", "f", "1.5"], ["GET", "f"],
        ["INCRBYFLOAT", "f", "1e-5"], ["INCRBYFLOAT", "f", "-1e-5"], ["INCRBYFLOAT", "f", "5.0e3"],
        ["INCRBYFLOAT", "f", "0x10"], ["INCRBYFLOAT", "f", "-0"], ["INCRBYFLOAT", "f", "3.0000000000000000001"],
        ["INCRBYFLOAT", "g", "0.1"], ["INCRBYFLOAT", "g", "0.2"], ["INCRBYFLOAT", "g", "10.5e10"],
        ["INCRBYFLOAT", "h", "1e400"], ["INCRBYFLOAT", "h", "-1e400"],
        ["SET", "big", "1.7976931348623157e308"], ["INCRBYFLOAT", "big", "1.7976931348623157e308"],
        ["INCRBYFLOAT", "f", "abc"], ["INCRBYFLOAT", "f", ""], ["INCRBYFLOAT", "f", " 1"], ["INCRBYFLOAT", "f", "1 "],
        ["INCRBYFLOAT", "f", "inf"], ["INCRBYFLOAT", "f", "-inf"], ["INCRBYFLOAT", "f", "nan"],
        ["INCRBYFLOAT", "f", "+inf"], ["INCRBYFLOAT", "f", "1e5000"],
        ["SET", "s", " 1"], ["INCRBYFLOAT", "s", "1"], ["SET", "s", "1 "], ["INCRBYFLOAT", "s", "1"],
        ["SET", "s", "abc"], ["INCRBYFLOAT", "s", "x"], ["SET", "s", "12"], ["INCRBYFLOAT", "s", "1"],
        ["SET", "s", "1.5e3"], ["INCRBYFLOAT", "s", "1"], ["INCR", "s"],
    ],
    # -------------------------------------------------------------- encodings
    "object_encoding": [
        ["SET", "k", "123"], ["OBJECT", "ENCODING", "k"], ["SET", "k", "12345678901234567890"],
        ["OBJECT", "ENCODING", "k"], ["SET", "k", LLMAX], ["OBJECT", "ENCODING", "k"],
        ["SET", "k", LLMIN], ["OBJECT", "ENCODING", "k"], ["SET", "k", "01"], ["OBJECT", "ENCODING", "k"],
        ["SET", "k", "-0"], ["OBJECT", "ENCODING", "k"], ["SET", "k", "x" * 44], ["OBJECT", "ENCODING", "k"],
        ["SET", "k", "x" * 45], ["OBJECT", "ENCODING", "k"], ["SET", "k", ""], ["OBJECT", "ENCODING", "k"],
        ["SET", "k", "5", "EX", "100"], ["OBJECT", "ENCODING", "k"],
        ["MSET", "a", "1", "b", "x" * 50], ["OBJECT", "ENCODING", "a"], ["OBJECT", "ENCODING", "b"],
        ["MSETNX", "a1", "1", "b1", "hi"], ["OBJECT", "ENCODING", "a1"], ["OBJECT", "ENCODING", "b1"],
        ["SETEX", "sx", "100", "5"], ["OBJECT", "ENCODING", "sx"], ["PSETEX", "px", "100000", "x"],
        ["OBJECT", "ENCODING", "px"], ["GETSET", "px", "7"], ["OBJECT", "ENCODING", "px"],
        ["SETNX", "nx", "5"], ["OBJECT", "ENCODING", "nx"], ["SET", "g", "5", "GET"], ["OBJECT", "ENCODING", "g"],
        ["APPEND", "ap", "5"], ["OBJECT", "ENCODING", "ap"], ["APPEND", "ap", "5"], ["OBJECT", "ENCODING", "ap"],
        ["APPEND", "ap2", "hello"], ["OBJECT", "ENCODING", "ap2"], ["APPEND", "ap3", "y" * 50],
        ["OBJECT", "ENCODING", "ap3"], ["SET", "ap4", "5"], ["APPEND", "ap4", ""], ["OBJECT", "ENCODING", "ap4"],
        ["SETRANGE", "sr", "0", "5"], ["OBJECT", "ENCODING", "sr"], ["SET", "sr", "1"], ["SETRANGE", "sr", "0", "2"],
        ["OBJECT", "ENCODING", "sr"], ["INCR", "sr"], ["OBJECT", "ENCODING", "sr"],
        ["INCRBYFLOAT", "fl", "10"], ["OBJECT", "ENCODING", "fl"], ["INCR", "fl"], ["OBJECT", "ENCODING", "fl"],
        ["INCRBYFLOAT", "fl", "1e30"], ["OBJECT", "ENCODING", "fl"], ["INCRBYFLOAT", "fl", "1e50"],
        ["OBJECT", "ENCODING", "fl"], ["SET", "ii", "abc"], ["SET", "ii", "10"], ["INCR", "ii"],
        ["OBJECT", "ENCODING", "ii"], ["DECRBY", "new", "5"], ["OBJECT", "ENCODING", "new"],
    ],
    # --------------------------------------------------------------------- LCS
    "lcs": [
        ["SET", "a", "ohmytext"], ["SET", "b", "mynewtext"],
        ["LCS", "a", "b"], ["LCS", "a", "b", "LEN"], ["LCS", "a", "b", "IDX"],
        ["LCS", "a", "b", "IDX", "MINMATCHLEN", "4", "WITHMATCHLEN"], ["LCS", "a", "b", "idx", "withmatchlen"],
        ["LCS", "a", "b", "IDX", "MINMATCHLEN", "-5"], ["LCS", "a", "b", "IDX", "LEN"],
        ["LCS", "a", "b", "LEN", "LEN", "IDX"], ["LCS", "a", "b", "foo"], ["LCS", "a", "b", "MINMATCHLEN"],
        ["LCS", "a", "b", "MINMATCHLEN", "x"], ["LCS", "a", "b", "LEN", "MINMATCHLEN", "3"],
        ["LCS", "a", "nokey"], ["LCS", "a", "nokey", "IDX"], ["LCS", "nokey", "nokey2", "LEN"],
        ["SET", "x", "abcabcabcXYZabc"], ["SET", "y", "cbaXYZcbaabcabc"], ["LCS", "x", "y", "IDX", "WITHMATCHLEN"],
        ["LCS", "x", "y"], ["LCS", "y", "x", "IDX"], ["LCS", "x", "x", "IDX", "WITHMATCHLEN"],
        ["SET", "p", "aaaa"], ["SET", "q", "aa"], ["LCS", "p", "q", "IDX"], ["LCS", "q", "p", "IDX"],
    ],
    # ----------------------------------------------------------- arity & RESP3
    "arity": [
        ["GET"], ["GET", "a", "b"], ["SET", "k"], ["SETNX", "k"], ["GETSET", "k"], ["GETDEL"],
        ["GETEX"], ["MGET"], ["MSET"], ["MSETNX", "k"], ["APPEND", "k"], ["STRLEN"], ["GETRANGE", "k", "0"],
        ["SETRANGE", "k", "0"], ["INCR"], ["DECR", "a", "b"], ["INCRBY", "k"], ["DECRBY", "k"],
        ["INCRBYFLOAT", "k"], ["LCS", "a"], ["SUBSTR", "k"],
    ],
    "resp3": [
        hello("3"), ["GET", "k"], ["SET", "k", "v", "NX", "GET"], ["SET", "k", "w", "NX"], ["SET", "k", "x", "GET"],
        ["MGET", "k", "nokey"], ["GETDEL", "nokey"], ["GETEX", "nokey"], ["GETSET", "n", "v"],
        ["INCRBYFLOAT", "f", "1.5"], ["INCR", "i"], ["GETRANGE", "nokey", "0", "1"], ["SET", "a", "ohmytext"],
        ["SET", "b", "mynewtext"], ["LCS", "a", "b", "IDX", "WITHMATCHLEN"], ["LCS", "a", "b"],
        ["SETNX", "k", "v"], ["MSETNX", "z", "1"], ["SET", "k", "v", "XX", "PX", "0"],
    ],
    "multi_exec": [
        ["MULTI"], ["SET", "k", "1"], ["INCR", "k"], ["SET", "k", "v", "EX", "0"], ["INCR", "k"],
        ["GET", "k"], ["EXEC"],
    ],
    "watch": [
        ["SET", "k", "1"], ["WATCH", "k"], cmd("INCR", "k", conn=1), ["MULTI"], ["GET", "k"], ["EXEC"],
        ["WATCH", "k"], cmd("APPEND", "k", "x", conn=1), ["MULTI"], ["GET", "k"], ["EXEC"],
        ["WATCH", "k"], cmd("SETRANGE", "k", "0", "z", conn=1), ["MULTI"], ["GET", "k"], ["EXEC"],
        ["WATCH", "k"], cmd("GETEX", "k", "EX", "100", conn=1), ["MULTI"], ["GET", "k"], ["EXEC"],
        ["WATCH", "k"], cmd("GETDEL", "k", conn=1), ["MULTI"], ["GET", "k"], ["EXEC"],
        ["WATCH", "m"], cmd("MSET", "a", "1", "m", "2", conn=1), ["MULTI"], ["GET", "m"], ["EXEC"],
        ["WATCH", "f"], cmd("INCRBYFLOAT", "f", "1.5", conn=1), ["MULTI"], ["GET", "f"], ["EXEC"],
        ["WATCH", "s"], cmd("SET", "s", "v", "NX", conn=1), ["MULTI"], ["GET", "s"], ["EXEC"],
        ["WATCH", "s"], cmd("SET", "s", "v", "NX", conn=1), ["MULTI"], ["GET", "s"], ["EXEC"],
        ["WATCH", "q"], cmd("GETEX", "q", "PERSIST", conn=1), ["MULTI"], ["GET", "q"], ["EXEC"],
    ],
}

# Cases that need a key of another type (a list): skipped while ferry has no LPUSH.
WRONGTYPE_CASES = {
    "wrongtype_get_set": [
        ["LPUSH", "l", "a"], ["GET", "l"], ["SET", "l", "v", "EX", "0", "GET"], ["SET", "l", "v", "EX", "x", "GET"],
        ["SET", "l", "v", "GET"], ["SET", "l", "v", "NX", "GET"], ["SET", "l", "v", "XX", "GET"], ["TYPE", "l"],
        ["SET", "l", "v", "NX"], ["TYPE", "l"], ["SET", "l", "v", "XX"], ["TYPE", "l"], ["GET", "l"],
        ["LPUSH", "l2", "a"], ["SET", "l2", "now-a-string"], ["GET", "l2"], ["TYPE", "l2"],
        ["LPUSH", "l3", "a"], ["SET", "l3", "v", "KEEPTTL"], ["GET", "l3"],
    ],
    "wrongtype_variants": [
        ["LPUSH", "l", "a"], ["SETNX", "l", "v"], ["TYPE", "l"], ["GETSET", "l", "v"], ["TYPE", "l"],
        ["GETDEL", "l"], ["TYPE", "l"], ["GETEX", "l"], ["GETEX", "l", "EX", "0"], ["GETEX", "l", "foo"],
        ["GETEX", "l", "PERSIST"], ["SETEX", "l", "10", "s"], ["GET", "l"], approx("TTL", "l"),
        ["LPUSH", "m", "a"], ["PSETEX", "m", "10000", "s"], ["GET", "m"],
    ],
    "wrongtype_multi": [
        ["SET", "a", "1"], ["SET", "b", "2"], ["LPUSH", "l", "v"], ["MGET", "a", "l", "nokey", "b", "a"],
        ["MSETNX", "l", "1", "z", "2"], ["EXISTS", "z"], ["MSET", "l", "str"], ["TYPE", "l"],
    ],
    "wrongtype_edit": [
        ["LPUSH", "l", "a"], ["APPEND", "l", "x"], ["STRLEN", "l"], ["GETRANGE", "l", "0", "1"],
        ["GETRANGE", "l", "x", "1"], ["SUBSTR", "l", "0", "1"], ["SETRANGE", "l", "0", "x"],
        ["SETRANGE", "l", "0", ""], ["SETRANGE", "l", "-1", "x"], ["SETRANGE", "l", "x", "x"],
        ["INCR", "l"], ["DECR", "l"], ["INCRBY", "l", "1"], ["INCRBY", "l", "x"], ["DECRBY", "l", LLMIN],
        ["INCRBYFLOAT", "l", "1"], ["INCRBYFLOAT", "l", "x"], ["TYPE", "l"],
        ["SET", "a", "ohmytext"], ["LCS", "a", "l"], ["LCS", "l", "a", "foo"], ["LCS", "l", "a", "LEN"],
    ],
}




@pytest.mark.parametrize("name", sorted(CASES))
def test_strings(pair, name):
    f, r = pair
    mismatches, transcript = run_steps(f.port, r.port, CASES[name])
    assert not mismatches, format_report(name, mismatches, transcript)


@pytest.mark.parametrize("name", sorted(WRONGTYPE_CASES))
def test_strings_wrongtype(pair, name):
    f, r = pair
    with f.client() as c:
        if c.command("LPUSH", "__probe__", "x").startswith(b"-ERR unknown command"):
            pytest.skip("ferry has no LPUSH yet (needed for a non-string key)")
        c.command("DEL", "__probe__")
    mismatches, transcript = run_steps(f.port, r.port, WRONGTYPE_CASES[name])
    assert not mismatches, format_report(name, mismatches, transcript)


def _info_stats(client):
    raw = client.command("INFO", "stats")
    out = {}
    for line in raw.split(b"\r\n"):
        if b":" in line:
            k, v = line.split(b":", 1)
            out[k.decode()] = v.decode()
    return out


def test_keyspace_hit_miss_accounting(pair):
    """Which commands count keyspace hits/misses (read lookups) matches Redis:
    the INFO counters must move by the same amounts on both servers."""
    steps = [["SET", "k", "v"], ["GET", "k"], ["GET", "no"], ["MGET", "k", "no", "k"], ["STRLEN", "no"],
             ["GETRANGE", "k", "0", "1"], ["SET", "k", "w", "GET"], ["SET", "k", "w", "NX"], ["GETSET", "k", "x"],
             ["GETEX", "k"], ["GETDEL", "no"], ["INCR", "c"], ["APPEND", "k", "y"], ["SETRANGE", "k", "0", "z"],
             ["SETNX", "k", "v"], ["MSETNX", "k", "v"], ["LCS", "k", "no"], ["INCRBYFLOAT", "f", "1"]]
    f, r = pair
    flushall(f.port)
    flushall(r.port)

    def counters():
        out = []
        for srv in (f, r):
            with srv.client() as c:
                s = _info_stats(c)
            out.append((int(s.get("keyspace_hits", -1)), int(s.get("keyspace_misses", -1))))
        return out

    before = counters()
    if before[0] == (-1, -1):
        pytest.skip("ferry INFO stats has no keyspace_hits yet")
    mismatches, transcript = run_steps(f.port, r.port, steps, flush=False)
    assert not mismatches, format_report("hit_miss", mismatches, transcript)
    after = counters()
    deltas = [(a[0] - b[0], a[1] - b[1]) for a, b in zip(after, before)]
    assert deltas[0] == deltas[1], "ferry (hits, misses) delta %r, redis %r" % tuple(deltas)


def _lcs_steps(seed):
    import random
    rnd = random.Random(seed)
    steps = []
    for _ in range(6):
        a = "".join(rnd.choice("abc") for _ in range(rnd.randint(0, 40)))
        b = "".join(rnd.choice("abcd") for _ in range(rnd.randint(0, 40)))
        steps += [["SET", "a", a], ["SET", "b", b], ["LCS", "a", "b"], ["LCS", "b", "a"], ["LCS", "a", "b", "LEN"],
                  ["LCS", "a", "b", "IDX"], ["LCS", "a", "b", "IDX", "MINMATCHLEN", "2", "WITHMATCHLEN"]]
    return steps


@pytest.mark.parametrize("seed", range(8))
def test_lcs_random(pair, seed):
    f, r = pair
    mismatches, transcript = run_steps(f.port, r.port, _lcs_steps(seed))
    assert not mismatches, format_report("lcs_random_%d" % seed, mismatches, transcript)


def _random_ops(seed, n=400):
    """A random mix of string commands over a few keys, with interesting
    arguments (boundaries, negative, non-numeric)."""
    import random
    rnd = random.Random(seed)
    keys = ["k1", "k2", "k3", "n1"]
    ints = ["0", "1", "-1", "5", "-5", "100", "44", "45", LLMAX, LLMIN, "abc", "1.5", "", "07", "-0"]
    vals = ["", "v", "hello world", "123", "-42", "x" * 44, "y" * 45, "3.25", "1e3", b"\x00\xffbin", LLMAX]

    def k():
        return rnd.choice(keys)

    def i():
        return rnd.choice(ints) if rnd.random() < 0.5 else str(rnd.randint(-20, 20))

    def v():
        return rnd.choice(vals)

    gens = [
        lambda: ["GET", k()], lambda: ["SET", k(), v()], lambda: ["SET", k(), v(), rnd.choice(["NX", "XX", "GET"])],
        lambda: ["SET", k(), v(), "EX", i()], lambda: ["SET", k(), v(), "KEEPTTL"], lambda: ["SETNX", k(), v()],
        lambda: ["GETSET", k(), v()], lambda: ["GETDEL", k()], lambda: ["GETEX", k(), "PERSIST"],
        lambda: ["MGET", k(), k(), k()], lambda: ["MSET", k(), v(), k(), v()], lambda: ["MSETNX", k(), v(), k(), v()],
        lambda: ["APPEND", k(), v()], lambda: ["STRLEN", k()], lambda: ["GETRANGE", k(), i(), i()],
        lambda: ["SETRANGE", k(), i(), v()], lambda: ["INCR", k()], lambda: ["DECR", k()],
        lambda: ["INCRBY", k(), i()], lambda: ["DECRBY", k(), i()], lambda: ["INCRBYFLOAT", k(), rnd.choice(ints + vals)],
        lambda: ["OBJECT", "ENCODING", k()], lambda: ["TTL", k()], lambda: ["LCS", k(), k()],
    ]
    return [rnd.choice(gens)() for _ in range(n)]


@pytest.mark.parametrize("seed", range(6))
def test_random_ops(pair, seed):
    f, r = pair
    mismatches, transcript = run_steps(f.port, r.port, _random_ops(seed))
    assert not mismatches, format_report("random_ops_%d" % seed, mismatches, transcript)


def test_proto_max_bulk_len(ferry_factory, redis_factory):
    """Size limits follow proto-max-bulk-len (APPEND, SETRANGE, LCS's table)."""
    args = ("--proto-max-bulk-len", "1048576")
    f, r = ferry_factory(*args), redis_factory(*args)
    steps = [
        ["SETRANGE", "k", "1048575", "x"], ["STRLEN", "k"], ["SETRANGE", "k", "1048576", "x"],
        ["SETRANGE", "k", "1048575", "xy"], ["APPEND", "k", "z"], ["APPEND", "k", ""], ["STRLEN", "k"],
        ["SETRANGE", "n", "1048576", "x"], ["EXISTS", "n"], ["SETRANGE", "k", "0", "abc"],
        ["SET", "a", "a" * 500], ["SET", "b", "b" * 500], ["LCS", "a", "b", "LEN"],
        ["SET", "a", "a" * 600], ["LCS", "a", "b"], ["LCS", "a", "b", "IDX"],
    ]
    mismatches, transcript = run_steps(f.port, r.port, steps)
    assert not mismatches, format_report("proto_max_bulk_len", mismatches, transcript)


def test_getdel_getset_getex_propagate_as_redis(server_factory):
    """What reaches the append-only file for the GET* writers, byte for byte
    as redis-server writes it: GETDEL as DEL (UNLINK under
    lazyfree-lazy-user-del), GETSET as SET, GETEX as PEXPIREAT / PERSIST;
    nothing for a missing key, a wrong type or a plain GETEX."""
    from diffkit import aof_increment
    from resp_client import RawClient
    steps = [["SET", "s", "v"], ["GETDEL", "s"], ["GETDEL", "s"], ["RPUSH", "l", "x"], ["GETDEL", "l"],
             ["GETSET", "s", "w"], ["GETSET", "l", "w"], ["GETEX", "s"],
             ["GETEX", "s", "PXAT", "99999999999999"], ["GETEX", "s", "PERSIST"], ["GETEX", "s", "PERSIST"],
             ["GETEX", "nokey", "PERSIST"], ["CONFIG", "SET", "lazyfree-lazy-user-del", "yes"], ["GETDEL", "s"],
             ["SET", "big", "b" * 70000], ["GETDEL", "big"]]
    streams, replies = {}, {}
    for kind in ("ferry", "redis"):
        s = server_factory(kind, "--appendonly", "yes", "--appendfsync", "always")
        with RawClient(s.port) as c:
            replies[kind] = [c.command(*args) for args in steps]
        streams[kind] = aof_increment(s.workdir)
    assert replies["ferry"] == replies["redis"]
    assert streams["ferry"] == streams["redis"]
    assert b"GETDEL" not in streams["ferry"].upper() and b"UNLINK" in streams["ferry"]
