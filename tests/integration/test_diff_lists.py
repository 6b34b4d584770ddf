"""Differential tests for the list commands (src/commands/cmd_list.c, src/keyspace/t_list.c).

Every case runs on a fresh (FLUSHALL'ed) keyspace on both ferry and the
reference redis-server; every reply is compared byte for byte (diffkit.py).
The hand-written cases walk through each command's arguments and error
paths in the order Redis checks them (argument parsing vs. key type), the
integer boundaries (LLONG_MIN, LLONG_MAX, 2^63), RESP3 null shapes, WATCH
interaction, and lists big enough to span many chunks. The seeded random
programs mix string and list commands over a few keys; they also run with
tiny chunk limits (list-max-listpack-size 1 and 3) so that every chunk
boundary path is taken. The blocking commands are covered here only in
their non-blocking paths (argument errors, data present, MULTI);
test_blocking.py covers blocking itself.
"""
from __future__ import annotations

import random

import pytest

from conftest import server_pair
from diffkit import cmd, format_report, hello, run_steps

LLMAX = "9223372036854775807"
LLMIN = "-9223372036854775808"
P63 = "9223372036854775808"     # 2^63: not an integer for Redis
NP63 = "-9223372036854775809"

BIG = "x" * 10000
NUMS = [str(i) for i in range(300)]

CASES = {
    # -------------------------------------------------------------- push / len
    "push_basic": [
        ["LPUSH", "l", "a"], ["LPUSH", "l", "b", "c"], ["RPUSH", "l", "d", "e"], ["LRANGE", "l", "0", "-1"],
        ["LLEN", "l"], ["TYPE", "l"], ["OBJECT", "ENCODING", "l"], ["LLEN", "nokey"],
        ["RPUSH", "l", "", b"bin\x00\r\nary", BIG], ["LRANGE", "l", "-3", "-1"], ["LLEN", "l"],
    ],
    "pushx": [
        ["LPUSHX", "l", "a"], ["RPUSHX", "l", "a", "b"], ["EXISTS", "l"], ["RPUSH", "l", "x"],
        ["LPUSHX", "l", "a", "b"], ["RPUSHX", "l", "c", "d"], ["LRANGE", "l", "0", "-1"],
        ["SET", "s", "v"], ["LPUSHX", "s", "a"], ["RPUSHX", "s", "a"],
    ],
    "push_integers": [
        ["RPUSH", "l", "0", "1", "-1", "127", "128", "-128", "-129", "32767", "32768", "-32769", LLMAX, LLMIN,
         P63, NP63, "007", "-0", "+1", " 1", "1 ", "1.0", "0x1", "1e3"],
        ["LRANGE", "l", "0", "-1"], ["LPOS", "l", "007"], ["LPOS", "l", "7"], ["LPOS", "l", "-0"],
        ["LPOS", "l", "0"], ["LPOS", "l", LLMIN], ["LPOS", "l", P63], ["LREM", "l", "0", "+1"],
        ["LREM", "l", "0", "1"], ["LRANGE", "l", "0", "-1"], ["LINDEX", "l", "-1"], ["LINDEX", "l", "10"],
    ],
    "wrongtype": [
        ["SET", "s", "v"], ["LPUSH", "s", "a"], ["RPUSH", "s", "a"], ["LLEN", "s"], ["LRANGE", "s", "0", "-1"],
        ["LRANGE", "s", "x", "1"], ["LINDEX", "s", "0"], ["LINDEX", "s", "x"], ["LSET", "s", "0", "a"],
        ["LSET", "s", "x", "a"], ["LINSERT", "s", "BEFORE", "a", "b"], ["LINSERT", "s", "middle", "a", "b"],
        ["LREM", "s", "0", "a"], ["LREM", "s", "x", "a"], ["LTRIM", "s", "0", "1"], ["LTRIM", "s", "x", "1"],
        ["LPOS", "s", "a"], ["LPOS", "s", "a", "RANK", "0"], ["LPOP", "s"], ["LPOP", "s", "2"], ["RPOP", "s"],
        ["RPOP", "s", "x"], ["LMOVE", "s", "d", "LEFT", "RIGHT"], ["RPOPLPUSH", "s", "d"], ["LMPOP", "1", "s", "LEFT"],
        ["BLPOP", "s", "0"], ["BRPOP", "nokey", "s", "0"], ["BLMOVE", "s", "d", "LEFT", "LEFT", "0"],
        ["BRPOPLPUSH", "s", "d", "0"], ["BLMPOP", "0", "1", "s", "LEFT"], ["GET", "s"], ["EXISTS", "d"],
    ],
    # -------------------------------------------------------------- pops
    "pop_single": [
        ["LPOP", "nokey"], ["RPOP", "nokey"], ["RPUSH", "l", "a", "b", "c"], ["LPOP", "l"], ["RPOP", "l"],
        ["LPOP", "l"], ["LPOP", "l"], ["EXISTS", "l"],
    ],
    "pop_count": [
        ["LPOP", "nokey", "2"], ["LPOP", "nokey", "0"], ["RPOP", "nokey", "0"], ["RPUSH", "l", "a", "b", "c", "d"],
        ["LPOP", "l", "0"], ["RPOP", "l", "0"], ["LPOP", "l", "1"], ["RPOP", "l", "2"], ["LPOP", "l", "10"],
        ["EXISTS", "l"], ["RPUSH", "l", "1", "2", "3"], ["RPOP", "l", LLMAX], ["EXISTS", "l"],
        ["LPOP", "l", "-1"], ["LPOP", "l", "x"], ["LPOP", "l", LLMIN], ["LPOP", "l", P63], ["LPOP", "l", ""],
        ["LPOP", "l", "1", "2"], ["RPOP", "l", "1", "2"], ["LPOP", "l", "01"],
    ],
    "pop_count_errors_before_type": [
        ["SET", "s", "v"], ["LPOP", "s", "-1"], ["LPOP", "s", "0"], ["RPOP", "s", "0"], ["LPOP", "s", "1", "2"],
    ],
    # -------------------------------------------------------------- LRANGE / LINDEX
    "lrange": [
        ["RPUSH", "l"] + NUMS[:10], ["LRANGE", "l", "0", "-1"], ["LRANGE", "l", "2", "4"], ["LRANGE", "l", "-3", "-1"],
        ["LRANGE", "l", "-100", "100"], ["LRANGE", "l", "5", "2"], ["LRANGE", "l", "10", "20"],
        ["LRANGE", "l", "9", "9"], ["LRANGE", "l", "-1", "-2"], ["LRANGE", "l", LLMIN, LLMAX],
        ["LRANGE", "l", LLMAX, LLMIN], ["LRANGE", "l", "0", LLMIN], ["LRANGE", "l", LLMIN, "0"],
        ["LRANGE", "l", P63, "1"], ["LRANGE", "l", "1", NP63], ["LRANGE", "l", "a", "1"], ["LRANGE", "l", "1", "b"],
        ["LRANGE", "l", "1.5", "2"], ["LRANGE", "nokey", "0", "-1"], ["LRANGE", "nokey", "x", "1"],
        ["LRANGE", "l", " 1", "2"], ["LRANGE", "l", "0", "-11"], ["LRANGE", "l", "0", "-10"],
    ],
    "lindex": [
        ["LINDEX", "nokey", "0"], ["LINDEX", "nokey", "x"], ["RPUSH", "l", "a", "b", "c", "10", "-20"],
        ["LINDEX", "l", "0"], ["LINDEX", "l", "2"], ["LINDEX", "l", "-1"], ["LINDEX", "l", "-5"],
        ["LINDEX", "l", "-6"], ["LINDEX", "l", "5"], ["LINDEX", "l", LLMAX], ["LINDEX", "l", LLMIN],
        ["LINDEX", "l", P63], ["LINDEX", "l", "x"], ["LINDEX", "l", "3"], ["LINDEX", "l", "4"],
    ],
    # -------------------------------------------------------------- LSET
    "lset": [
        ["LSET", "nokey", "0", "a"], ["LSET", "nokey", "x", "a"], ["RPUSH", "l", "a", "b", "c"],
        ["LSET", "l", "0", "A"], ["LSET", "l", "-1", "C"], ["LSET", "l", "1", BIG], ["LSET", "l", "3", "x"],
        ["LSET", "l", "-4", "x"], ["LSET", "l", LLMAX, "x"], ["LSET", "l", LLMIN, "x"], ["LSET", "l", "x", "y"],
        ["LSET", "l", P63, "y"], ["LSET", "l", "1", "12345"], ["LSET", "l", "1", ""], ["LSET", "l", "2", LLMIN],
        ["LRANGE", "l", "0", "-1"],
    ],
    # -------------------------------------------------------------- LINSERT
    "linsert": [
        ["LINSERT", "nokey", "BEFORE", "a", "b"], ["LINSERT", "nokey", "foo", "a", "b"],
        ["RPUSH", "l", "a", "b", "c", "b"], ["LINSERT", "l", "BEFORE", "b", "x"], ["LINSERT", "l", "after", "b", "y"],
        ["LINSERT", "l", "AFTER", "c", "z"], ["LINSERT", "l", "before", "a", "0"], ["LINSERT", "l", "BEFORE", "q", "x"],
        ["LINSERT", "l", "middle", "a", "x"], ["LINSERT", "l", b"before\x00x", "a", "w"],
        ["LINSERT", "l", "BEFORE", "0", "-1"], ["LINSERT", "l", "AFTER", "-1", BIG], ["LRANGE", "l", "0", "-1"],
        ["LINSERT", "l", "BEFORE", "00", "n"], ["LLEN", "l"],
    ],
    # -------------------------------------------------------------- LREM
    "lrem": [
        ["LREM", "nokey", "0", "a"], ["LREM", "nokey", "x", "a"],
        ["RPUSH", "l", "a", "b", "a", "c", "a", "b", "a"], ["LREM", "l", "1", "a"], ["LRANGE", "l", "0", "-1"],
        ["LREM", "l", "-1", "a"], ["LRANGE", "l", "0", "-1"], ["LREM", "l", "-2", "b"], ["LRANGE", "l", "0", "-1"],
        ["LREM", "l", "0", "a"], ["LRANGE", "l", "0", "-1"], ["LREM", "l", "5", "zzz"], ["LREM", "l", "0", "c"],
        ["EXISTS", "l"], ["RPUSH", "l", "1", "2", "1", "01", "1"], ["LREM", "l", LLMIN, "1"],
        ["LRANGE", "l", "0", "-1"], ["LREM", "l", LLMAX, "01"], ["LRANGE", "l", "0", "-1"],
        ["LREM", "l", P63, "2"], ["LREM", "l", "1.0", "2"],
    ],
    "lrem_many": [
        ["RPUSH", "l"] + ["a", "b", "c"] * 300, ["LREM", "l", "100", "b"], ["LLEN", "l"], ["LREM", "l", "-50", "a"],
        ["LRANGE", "l", "0", "20"], ["LRANGE", "l", "-20", "-1"], ["LREM", "l", "0", "c"], ["LLEN", "l"],
        ["LRANGE", "l", "0", "-1"],
    ],
    # -------------------------------------------------------------- LTRIM
    "ltrim": [
        ["LTRIM", "nokey", "0", "1"], ["LTRIM", "nokey", "x", "1"], ["RPUSH", "l"] + NUMS[:10],
        ["LTRIM", "l", "1", "-2"], ["LRANGE", "l", "0", "-1"], ["LTRIM", "l", "-5", "100"], ["LRANGE", "l", "0", "-1"],
        ["LTRIM", "l", LLMIN, LLMAX], ["LRANGE", "l", "0", "-1"], ["LTRIM", "l", "x", "1"], ["LTRIM", "l", "1", P63],
        ["LTRIM", "l", "3", "1"], ["EXISTS", "l"], ["RPUSH", "l", "a", "b"], ["LTRIM", "l", "5", "10"],
        ["EXISTS", "l"], ["RPUSH", "l", "a", "b"], ["LTRIM", "l", "0", "0"], ["LRANGE", "l", "0", "-1"],
        ["LTRIM", "l", LLMAX, LLMAX], ["EXISTS", "l"],
    ],
    # -------------------------------------------------------------- LPOS
    "lpos": [
        ["RPUSH", "l", "a", "b", "c", "a", "b", "a", "1", "a"],
        ["LPOS", "l", "a"], ["LPOS", "l", "b"], ["LPOS", "l", "z"], ["LPOS", "l", "1"],
        ["LPOS", "l", "a", "RANK", "2"], ["LPOS", "l", "a", "RANK", "-1"], ["LPOS", "l", "a", "RANK", "-3"],
        ["LPOS", "l", "a", "RANK", "5"], ["LPOS", "l", "a", "RANK", "-5"], ["LPOS", "l", "a", "COUNT", "0"],
        ["LPOS", "l", "a", "COUNT", "2"], ["LPOS", "l", "a", "COUNT", "2", "RANK", "2"],
        ["LPOS", "l", "a", "COUNT", "0", "RANK", "-2"], ["LPOS", "l", "a", "MAXLEN", "3"],
        ["LPOS", "l", "a", "MAXLEN", "4", "COUNT", "0"], ["LPOS", "l", "a", "MAXLEN", "1", "RANK", "-1"],
        ["LPOS", "l", "a", "MAXLEN", "0", "COUNT", "10"], ["LPOS", "l", "z", "COUNT", "3"],
        ["LPOS", "l", "a", "RANK", "1", "RANK", "-1"], ["LPOS", "l", "a", "count", "1", "rank", "3", "maxlen", "8"],
    ],
    "lpos_errors": [
        ["RPUSH", "l", "a"], ["LPOS", "l", "a", "RANK", "0"], ["LPOS", "l", "a", "RANK", "x"],
        ["LPOS", "l", "a", "RANK", P63], ["LPOS", "l", "a", "COUNT", "-1"], ["LPOS", "l", "a", "COUNT", "x"],
        ["LPOS", "l", "a", "MAXLEN", "-1"], ["LPOS", "l", "a", "MAXLEN", "x"], ["LPOS", "l", "a", "RANK"],
        ["LPOS", "l", "a", "COUNT"], ["LPOS", "l", "a", "MAXLEN"], ["LPOS", "l", "a", "FOO", "1"],
        ["LPOS", "l", "a", "RANK", "1", "FOO"], ["LPOS", "l", "a", "COUNT", LLMIN], ["LPOS", "l", "a", "MAXLEN", LLMIN],
        ["LPOS", "nokey", "a"], ["LPOS", "nokey", "a", "COUNT", "1"], ["LPOS", "nokey", "a", "RANK", "0"],
        ["LPOS", "nokey", "a", "COUNT", "0"], ["LPOS", "l", "a", "RANK", "0", "COUNT", "-1"],
        ["LPOS", "l", "a", "COUNT", "-1", "RANK", "0"],
    ],
    "lpos_extreme_ranks": [
        ["RPUSH", "l", "a", "b", "a", "c", "a"], ["LPOS", "l", "a", "RANK", LLMIN], ["LPOS", "l", "a", "RANK", LLMAX],
        ["LPOS", "l", "a", "RANK", LLMIN, "COUNT", "2"], ["LPOS", "l", "a", "RANK", LLMIN, "COUNT", "0"],
        ["LPOS", "l", "a", "RANK", LLMAX, "COUNT", "0"], ["LPOS", "l", "a", "RANK", "-" + LLMAX],
        ["LPOS", "l", "a", "COUNT", LLMAX], ["LPOS", "l", "a", "MAXLEN", LLMAX, "RANK", "-2"],
    ],
    # -------------------------------------------------------------- LMOVE / RPOPLPUSH
    "lmove": [
        ["LMOVE", "nokey", "d", "LEFT", "RIGHT"], ["EXISTS", "d"], ["RPUSH", "s", "a", "b", "c"],
        ["LMOVE", "s", "d", "LEFT", "RIGHT"], ["LMOVE", "s", "d", "RIGHT", "LEFT"], ["LMOVE", "s", "d", "left", "left"],
        ["EXISTS", "s"], ["LRANGE", "d", "0", "-1"], ["LMOVE", "d", "d", "LEFT", "RIGHT"], ["LRANGE", "d", "0", "-1"],
        ["LMOVE", "d", "d", "RIGHT", "LEFT"], ["LRANGE", "d", "0", "-1"], ["LMOVE", "d", "d", "LEFT", "LEFT"],
        ["LRANGE", "d", "0", "-1"], ["LMOVE", "d", "e", "UP", "LEFT"], ["LMOVE", "d", "e", "LEFT", "DOWN"],
        ["LMOVE", "nokey", "e", "UP", "LEFT"], ["LMOVE", "d", "e", b"left\x00x", "RIGHT"], ["LRANGE", "e", "0", "-1"],
        ["SET", "str", "v"], ["LMOVE", "d", "str", "LEFT", "LEFT"], ["LRANGE", "d", "0", "-1"],
        ["LMOVE", "str", "d", "LEFT", "LEFT"], ["LMOVE", "nokey", "str", "LEFT", "LEFT"],
        ["RPUSH", "one", "x"], ["LMOVE", "one", "one", "LEFT", "RIGHT"], ["LRANGE", "one", "0", "-1"],
        ["RPUSH", "big", BIG], ["LMOVE", "big", "big2", "LEFT", "LEFT"], ["LINDEX", "big2", "0"], ["EXISTS", "big"],
    ],
    "rpoplpush": [
        ["RPOPLPUSH", "nokey", "d"], ["RPUSH", "s", "1", "2", "3"], ["RPOPLPUSH", "s", "d"], ["RPOPLPUSH", "s", "s"],
        ["LRANGE", "s", "0", "-1"], ["LRANGE", "d", "0", "-1"], ["SET", "str", "x"], ["RPOPLPUSH", "s", "str"],
        ["RPOPLPUSH", "str", "s"], ["RPOPLPUSH", "s", "d"], ["RPOPLPUSH", "s", "d"], ["EXISTS", "s"],
        ["LRANGE", "d", "0", "-1"],
    ],
    # -------------------------------------------------------------- LMPOP
    "lmpop": [
        ["LMPOP", "1", "nokey", "LEFT"], ["LMPOP", "2", "a", "b", "RIGHT", "COUNT", "3"],
        ["RPUSH", "b", "1", "2", "3", "4"], ["LMPOP", "2", "a", "b", "LEFT"], ["LMPOP", "2", "a", "b", "RIGHT", "COUNT", "2"],
        ["LMPOP", "2", "a", "b", "left", "count", "10"], ["EXISTS", "b"], ["RPUSH", "a", "x"], ["RPUSH", "b", "y"],
        ["LMPOP", "2", "b", "a", "LEFT", "COUNT", LLMAX], ["LMPOP", "2", "b", "a", "LEFT"], ["SET", "s", "v"],
        ["LMPOP", "2", "nokey", "s", "LEFT"], ["RPUSH", "c", "z"], ["LMPOP", "2", "c", "s", "LEFT"],
        ["LMPOP", "2", "s", "c", "LEFT"],
    ],
    "lmpop_errors": [
        ["LMPOP", "0", "a", "LEFT"], ["LMPOP", "-1", "a", "LEFT"], ["LMPOP", "x", "a", "LEFT"], ["LMPOP", "2", "a", "LEFT"],
        ["LMPOP", LLMAX, "a", "LEFT"], ["LMPOP", P63, "a", "LEFT"], ["LMPOP", "1", "a", "UP"],
        ["LMPOP", "1", "a", "LEFT", "COUNT"], ["LMPOP", "1", "a", "LEFT", "COUNT", "0"],
        ["LMPOP", "1", "a", "LEFT", "COUNT", "-1"], ["LMPOP", "1", "a", "LEFT", "COUNT", "x"],
        ["LMPOP", "1", "a", "LEFT", "COUNT", "1", "COUNT", "1"], ["LMPOP", "1", "a", "LEFT", "FOO"],
        ["LMPOP", "1", "a", "LEFT", "COUNT", P63], ["LMPOP", "1", "a"], ["LMPOP", "1"], ["LMPOP", "1", "a", "b", "c"],
        ["SET", "s", "v"], ["LMPOP", "1", "s", "UP"], ["LMPOP", "0", "s", "LEFT"],
    ],
    # -------------------------------------------------------------- blocking cmds, non-blocking paths
    "blocking_with_data": [
        ["RPUSH", "a", "1", "2", "3"], ["RPUSH", "b", "x"], ["BLPOP", "nokey", "a", "b", "0"], ["BRPOP", "b", "a", "1"],
        ["BLPOP", "a", "a", "0.5"], ["BRPOPLPUSH", "a", "d", "0"], ["BLMOVE", "d", "e", "LEFT", "RIGHT", "0"],
        ["BLMPOP", "0", "2", "nokey", "e", "LEFT", "COUNT", "5"], ["RPUSH", "a", "1", "2", "3"],
        ["BLMPOP", "1.5", "1", "a", "RIGHT"], ["EXISTS", "a", "b", "d", "e"],
    ],
    "blocking_errors": [
        ["BLPOP", "k", "x"], ["BLPOP", "k", "-1"], ["BLPOP", "k", "-0.5"], ["BLPOP", "k", "1e30"], ["BLPOP", "k", "inf"],
        ["BLPOP", "k", "-inf"], ["BLPOP", "k", "nan"], ["BLPOP", "k", ""], ["BLPOP", "k", " 1"], ["BLPOP", "k", "1 "],
        ["BRPOP", "k", "abc"], ["BRPOPLPUSH", "k", "d", "-1"], ["BRPOPLPUSH", "k", "d", "x"],
        ["BLMOVE", "k", "d", "UP", "LEFT", "x"], ["BLMOVE", "k", "d", "LEFT", "UP", "-1"],
        ["BLMOVE", "k", "d", "LEFT", "LEFT", "-1"], ["BLMPOP", "x", "1", "k", "LEFT"], ["BLMPOP", "-1", "1", "k", "LEFT"],
        ["BLMPOP", "-1", "0", "k", "LEFT"], ["BLMPOP", "x", "1", "k", "UP"], ["BLMPOP", "0", "2", "k", "LEFT"],
        ["BLMPOP", "0", "1", "k", "LEFT", "COUNT", "0"], ["BLMPOP", "0", "1", "k", "LEFT", "COUNT"],
        ["BLMPOP", "0", "1", "k", "LEFT", "FOO"], ["BLPOP", "k"], ["BLMPOP", "0", "1", "k"],
        ["BLPOP", "k", "9223372036854775.808"], ["BLPOP", "k", "-9223372036854775.808"],
        ["SET", "s", "v"], ["BLPOP", "s", "x"], ["BLMOVE", "s", "d", "UP", "LEFT", "0"],
    ],
    "blocking_in_multi": [
        ["MULTI"], ["BLPOP", "k", "0"], ["BRPOP", "k", "k2", "0"], ["BLMOVE", "k", "d", "LEFT", "LEFT", "0"],
        ["BRPOPLPUSH", "k", "d", "0"], ["BLMPOP", "0", "1", "k", "LEFT"], ["RPUSH", "k", "a", "b"],
        ["BLPOP", "k", "0"], ["BLMOVE", "k", "d", "LEFT", "LEFT", "0"], ["BLMPOP", "0", "1", "k", "LEFT"],
        ["BLPOP", "k", "0.01"], ["BLPOP", "k", "x"], ["EXEC"], ["LRANGE", "d", "0", "-1"],
        ["MULTI"], ["BLPOP", "k", "x"], ["EXEC"],
    ],
    # -------------------------------------------------------------- RESP3 shapes
    "resp3_shapes": [
        hello("3"), ["LPOP", "nokey"], ["LPOP", "nokey", "2"], ["RPOP", "nokey", "0"], ["LINDEX", "nokey", "0"],
        ["LPOS", "nokey", "a"], ["LPOS", "nokey", "a", "COUNT", "0"], ["LMOVE", "nokey", "d", "LEFT", "LEFT"],
        ["RPOPLPUSH", "nokey", "d"], ["LMPOP", "1", "nokey", "LEFT"], ["RPUSH", "l", "a", "1"], ["LPOP", "l", "0"],
        ["LPOS", "l", "z"], ["LINDEX", "l", "5"], ["LRANGE", "l", "0", "-1"], ["LMPOP", "1", "l", "LEFT", "COUNT", "2"],
        ["MULTI"], ["BLPOP", "k", "0"], ["BLMOVE", "k", "d", "LEFT", "LEFT", "0"], ["BRPOPLPUSH", "k", "d", "0"],
        ["BLMPOP", "0", "1", "k", "LEFT"], ["EXEC"], ["RPUSH", "k", "v"], ["BLPOP", "k", "0"],
    ],
    # -------------------------------------------------------------- arity
    "arity": [
        ["LPUSH", "l"], ["RPUSH"], ["LPUSHX", "l"], ["LLEN"], ["LLEN", "a", "b"], ["LRANGE", "l", "0"],
        ["LINDEX", "l"], ["LSET", "l", "0"], ["LINSERT", "l", "BEFORE", "a"], ["LREM", "l", "0"], ["LTRIM", "l", "0"],
        ["LPOS", "l"], ["LMOVE", "a", "b", "LEFT"], ["RPOPLPUSH", "a"], ["LMPOP", "1", "a"], ["BLPOP", "a"],
        ["BLMOVE", "a", "b", "LEFT", "LEFT"], ["BRPOPLPUSH", "a", "b"], ["BLMPOP", "0", "1", "a"], ["LPOP"],
    ],
    # -------------------------------------------------------------- WATCH / keyspace interplay
    "watch_touches": [
        ["RPUSH", "l", "a", "b"],
        cmd("WATCH", "l", conn=1), ["LTRIM", "l", "0", "-1"], cmd("MULTI", conn=1), cmd("PING", conn=1),
        cmd("EXEC", conn=1),
        cmd("WATCH", "l", conn=1), ["LREM", "l", "0", "zzz"], cmd("MULTI", conn=1), cmd("EXEC", conn=1),
        cmd("WATCH", "l", conn=1), ["LINSERT", "l", "BEFORE", "zzz", "x"], cmd("MULTI", conn=1), cmd("EXEC", conn=1),
        cmd("WATCH", "l", conn=1), ["LSET", "l", "0", "a"], cmd("MULTI", conn=1), cmd("EXEC", conn=1),
        cmd("WATCH", "l", conn=1), ["LPOS", "l", "a"], ["LRANGE", "l", "0", "-1"], cmd("MULTI", conn=1),
        cmd("EXEC", conn=1),
        cmd("WATCH", "l", conn=1), ["LPOP", "l", "0"], cmd("MULTI", conn=1), cmd("EXEC", conn=1),
        cmd("WATCH", "l", conn=1), ["LMOVE", "l", "l", "LEFT", "RIGHT"], cmd("MULTI", conn=1), cmd("EXEC", conn=1),
        cmd("WATCH", "d", conn=1), ["LMOVE", "l", "d", "LEFT", "RIGHT"], cmd("MULTI", conn=1), cmd("EXEC", conn=1),
        cmd("WATCH", "l", conn=1), ["LPUSHX", "nokey", "a"], cmd("MULTI", conn=1), cmd("EXEC", conn=1),
    ],
    "keys_on_lists": [
        ["RPUSH", "l", "a", "b", "1"], ["RENAME", "l", "m"], ["LRANGE", "m", "0", "-1"], ["COPY", "m", "n"],
        ["RPUSH", "n", "c"], ["LRANGE", "m", "0", "-1"], ["LRANGE", "n", "0", "-1"], ["MOVE", "n", "1"],
        ["SELECT", "1"], ["LRANGE", "n", "0", "-1"], ["SELECT", "0"], ["SWAPDB", "0", "1"],
        ["LRANGE", "n", "0", "-1"], ["EXISTS", "m"], ["DEL", "n"], ["EXISTS", "n"], ["SWAPDB", "0", "1"],
        ["EXPIRE", "m", "100"], ["TTL", "m"], ["RPUSH", "m", "x"], ["TTL", "m"], ["LPOP", "m", "10"], ["TTL", "m"],
        ["TYPE", "m"], ["RPUSH", "big"] + NUMS, ["COPY", "big", "big2"], ["LRANGE", "big2", "100", "110"],
        ["OBJECT", "ENCODING", "big2"], ["DBSIZE"],
    ],
    # -------------------------------------------------------------- sizes: many chunks
    "big_lists": [
        ["RPUSH", "l"] + [("v%d" % i) * (i % 7 + 1) for i in range(2000)], ["LLEN", "l"],
        ["LRANGE", "l", "1000", "1010"], ["LINDEX", "l", "1500"], ["LINDEX", "l", "-1500"],
        ["LSET", "l", "1000", BIG], ["LINDEX", "l", "1000"], ["LINSERT", "l", "BEFORE", "v1500" * 3, BIG],
        ["LRANGE", "l", "1499", "1502"], ["LTRIM", "l", "100", "-100"], ["LLEN", "l"], ["LINDEX", "l", "0"],
        ["LPOS", "l", "v999" * 6], ["LREM", "l", "0", BIG], ["LLEN", "l"], ["LPOP", "l", "500"], ["RPOP", "l", "500"],
        ["LLEN", "l"], ["LRANGE", "l", "0", "-1"],
    ],
    "big_elements": [
        ["RPUSH", "l", "x" * 70000, "y" * 5000, "z"], ["LPUSH", "l", "w" * 100000], ["LLEN", "l"],
        ["LINDEX", "l", "0"], ["LINDEX", "l", "1"], ["LSET", "l", "3", "q" * 9000], ["LRANGE", "l", "0", "-1"],
        ["LINSERT", "l", "AFTER", "z" * 1, "m" * 20000], ["LREM", "l", "0", "y" * 5000], ["LRANGE", "l", "0", "-1"],
    ],
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_lists(pair, name):
    f, r = pair
    mismatches, transcript = run_steps(f.port, r.port, CASES[name])
    assert not mismatches, format_report(name, mismatches, transcript)


def _random_program(seed, n=1200):
    """A random mix of list and string commands over a few keys, with
    boundary arguments (negative, huge and non-numeric indexes and counts)."""
    rnd = random.Random(seed)
    keys = ["l1", "l2", "l3", "s1"]
    idx = ["0", "1", "-1", "2", "-2", "5", "-5", "100", "-100", LLMAX, LLMIN, P63, "x", ""]
    vals = ["a", "b", "c", "1", "2", "-1", "007", "", "hello world", LLMAX, LLMIN, "x" * 70, "y" * 300, "12345678"]

    def k():
        return rnd.choice(keys)

    def i():
        return rnd.choice(idx) if rnd.random() < 0.3 else str(rnd.randint(-12, 12))

    def v():
        return rnd.choice(vals)

    def lr():
        return rnd.choice(["LEFT", "RIGHT"])

    def many():
        return [v() for _ in range(rnd.randint(1, 8))]

    gens = [
        (6, lambda: ["RPUSH", k()] + many()), (6, lambda: ["LPUSH", k()] + many()),
        (1, lambda: ["LPUSHX", k()] + many()), (1, lambda: ["RPUSHX", k()] + many()),
        (3, lambda: ["LPOP", k()]), (3, lambda: ["RPOP", k()]), (2, lambda: ["LPOP", k(), i()]),
        (2, lambda: ["RPOP", k(), i()]), (2, lambda: ["LLEN", k()]), (4, lambda: ["LRANGE", k(), i(), i()]),
        (3, lambda: ["LINDEX", k(), i()]), (2, lambda: ["LSET", k(), i(), v()]),
        (2, lambda: ["LINSERT", k(), rnd.choice(["BEFORE", "AFTER", "x"]), v(), v()]),
        (2, lambda: ["LREM", k(), i(), v()]), (2, lambda: ["LTRIM", k(), i(), i()]),
        (2, lambda: ["LPOS", k(), v()]),
        (2, lambda: ["LPOS", k(), v(), "RANK", i(), "COUNT", rnd.choice(["0", "1", "2", "-1"]), "MAXLEN", i()]),
        (2, lambda: ["LMOVE", k(), k(), lr(), lr()]), (1, lambda: ["RPOPLPUSH", k(), k()]),
        (2, lambda: ["LMPOP", "2", k(), k(), lr(), "COUNT", rnd.choice(["1", "2", "5", "0"])]),
        (1, lambda: ["BLPOP", k(), k(), "0.01"]), (1, lambda: ["BLMPOP", "0.01", "1", k(), lr(), "COUNT", "2"]),
        (1, lambda: ["BLMOVE", k(), k(), lr(), lr(), "0.01"]),
        (1, lambda: ["SET", k(), v()]), (1, lambda: ["GET", k()]), (1, lambda: ["DEL", k()]),
        (1, lambda: ["TYPE", k()]), (1, lambda: ["EXISTS", k()]), (1, lambda: ["APPEND", k(), v()]),
        (1, lambda: ["OBJECT", "ENCODING", k()]), (1, lambda: ["LRANGE", k(), "0", "-1"]),
        (1, lambda: ["RENAME", k(), k()]), (1, lambda: ["COPY", k(), k(), "REPLACE"]),
    ]
    weights = [w for w, _ in gens]
    steps = [rnd.choices(gens, weights)[0][1]() for _ in range(n)]
    steps += [["LRANGE", key, "0", "-1"] for key in keys]
    return steps


@pytest.mark.parametrize("seed", range(6))
def test_random_programs(pair, seed):
    f, r = pair
    mismatches, transcript = run_steps(f.port, r.port, _random_program(seed))
    assert not mismatches, format_report("random_lists_%d" % seed, mismatches, transcript)


@pytest.fixture(scope="module", params=["1", "3", "-1"])
def small_chunk_pair(request):
    """Both servers with a small list-max-listpack-size: chunk limits differ
    from the default, replies must not."""
    with server_pair("--list-max-listpack-size", request.param) as p:
        yield p


@pytest.mark.parametrize("seed", range(100, 103))
def test_random_programs_small_chunks(small_chunk_pair, seed):
    f, r = small_chunk_pair
    mismatches, transcript = run_steps(f.port, r.port, _random_program(seed, n=1000))
    assert not mismatches, format_report("random_small_chunks_%d" % seed, mismatches, transcript)


def test_config_list_max_listpack_size(pair):
    """CONFIG SET of the chunk limit applies to lists that already exist."""
    f, r = pair
    steps = [["CONFIG", "SET", "list-max-listpack-size", "2"], ["RPUSH", "l"] + NUMS[:50],
             ["CONFIG", "SET", "list-max-listpack-size", "-5"], ["RPUSH", "l"] + NUMS[50:],
             ["LINSERT", "l", "BEFORE", "25", "x"], ["LRANGE", "l", "0", "-1"],
             ["CONFIG", "GET", "list-max-listpack-size"], ["CONFIG", "SET", "list-max-listpack-size", "-2"]]
    mismatches, transcript = run_steps(f.port, r.port, steps)
    assert not mismatches, format_report("config_list_size", mismatches, transcript)


def test_keyspace_hit_miss_accounting(pair):
    """Read commands (LLEN, LRANGE, LINDEX, LPOS) count hits/misses; the write
    commands do not: INFO's counters must move by the same amounts."""
    steps = [["RPUSH", "l", "a"], ["LLEN", "l"], ["LLEN", "no"], ["LRANGE", "l", "0", "1"], ["LRANGE", "no", "0", "1"],
             ["LINDEX", "l", "0"], ["LINDEX", "no", "0"], ["LPOS", "l", "a"], ["LPOS", "no", "a"], ["LPOP", "no"],
             ["LSET", "l", "0", "b"], ["LINSERT", "l", "BEFORE", "b", "c"], ["LREM", "l", "0", "x"],
             ["LTRIM", "l", "0", "-1"], ["LMOVE", "l", "m", "LEFT", "LEFT"], ["LMPOP", "2", "no", "m", "LEFT"],
             ["RPUSH", "l", "z"], ["BLPOP", "no", "l", "0"], ["RPOPLPUSH", "no", "x"]]
    f, r = pair

    def counters():
        out = []
        for s in (f, r):
            with s.client() as c:
                raw = c.command("INFO", "stats").decode()
            d = dict(line.split(":", 1) for line in raw.split("\r\n") if ":" in line)
            out.append((int(d["keyspace_hits"]), int(d["keyspace_misses"])))
        return out

    mismatches, transcript = run_steps(f.port, r.port, [["FLUSHALL"]])
    before = counters()
    mismatches, transcript = run_steps(f.port, r.port, steps, flush=False)
    assert not mismatches, format_report("hit_miss", mismatches, transcript)
    after = counters()
    deltas = [(a[0] - b[0], a[1] - b[1]) for a, b in zip(after, before)]
    assert deltas[0] == deltas[1], "ferry (hits, misses) delta %r, redis %r" % tuple(deltas)
