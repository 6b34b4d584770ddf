"""Differential tests for SORT, SORT_RO (src/commands/cmd_sort.c) and LCS
(src/commands/cmd_lcs.c) against the reference redis-server 7.0.15.

Replies are compared byte for byte, except where Redis's own order is
undefined: SORT ... BY nosort of a hash-table set (its hash order), and
ALPHA sorts BY a pattern of sets and sorted sets whose weights tie (the
order of ties follows the input order, which for those types is Redis's
hash order): compared as multisets (`sorted_`).

- CASES: every option and error; numeric weights (strtod rules: spaces,
  hex, inf, ERANGE, NaN, empty, embedded NUL), ALPHA with high bytes and
  NULs (strcoll vs byte order under STORE), patterns with strings and
  hash fields, missing keys and fields (null replies, "" when stored), the
  "#" pattern, constant patterns (BY: no sorting; GET: null), LIMIT edge
  cases, BY nosort on lists / sorted sets / sets (set + STORE: sorted
  ALPHA), STORE over other types, with TTLs, deleting the destination when
  empty, MULTI/EXEC, WATCH, RESP3, SORT_RO, the listpack -> skiplist
  conversion Redis does on a sorted set it sorts.
- test_notifications: "sortstore" / "del" events (notifykit).
- test_sort_store_wakes_blocked_pop: a BLPOP waiting on the destination.
- test_random_sort_program: seeded programs mixing list / set / zset /
  weight builders with SORT variants.
- LCS: the docs' examples, every option and error, the proto-max-bulk-len
  cap, and random strings over small alphabets (RESP2 and RESP3).
"""
from __future__ import annotations

import random
import time

import pytest

from diffkit import cmd, format_report, hello, run_steps, sorted_
from notifykit import compare
from resp_client import RawClient, encode_command, parse

LLMAX = "9223372036854775807"
LLMIN = "-9223372036854775808"

WEIGHTS = ["MSET", "w_1", "30", "w_2", "10", "w_3", "20", "w_a", "5", "w_b", "-1", "w_c", "5"]
HASHES = [["HSET", "h_1", "f", "c", "n", "3"], ["HSET", "h_2", "f", "a", "n", "1"],
          ["HSET", "h_3", "f", "b", "n", "2"], ["HSET", "h_a", "f", "z"]]

CASES = {
    # ------------------------------------------------------------ numeric
    "numeric_list": [
        ["RPUSH", "l", "3", "1", "2", "10", "-5", "1.5", "1e3", " 7", "inf", "-inf", "0x10", "-0", "0"],
        ["SORT", "l"], ["SORT", "l", "DESC"], ["SORT", "l", "ASC"], ["SORT", "l", "desc", "asc"],
        ["SORT_RO", "l"], ["SORT_RO", "l", "DESC", "LIMIT", "2", "3"], ["sort", "l", "limit", "0", "1"],
        ["RPUSH", "dup", "2", "1", "2", "1"], ["SORT", "dup"], ["SORT", "dup", "DESC"],
        ["RPUSH", "eq", "1.0", "1", "01", "1e0", "+1"], ["SORT", "eq"], ["SORT", "eq", "DESC"],
    ],
    "numeric_errors": [
        ["RPUSH", "a", "1", "x"], ["SORT", "a"], ["SORT", "a", "DESC", "LIMIT", "0", "1"], ["SORT", "a", "ALPHA"],
        ["RPUSH", "b", "nan"], ["SORT", "b"], ["RPUSH", "e", "", "2", "-1"], ["SORT", "e"],
        ["RPUSH", "f", b"1\x00abc", "0.5"], ["SORT", "f"], ["RPUSH", "g", "1 "], ["SORT", "g"],
        ["RPUSH", "h", "infinity", "-Infinity", "1"], ["SORT", "h"], ["SORT", "a", "STORE", "dst"],
        ["EXISTS", "dst"], ["SORT", "a", "BY", "nosort"], ["SADD", "s", "1", "x"], ["SORT", "s"],
        ["ZADD", "z", "1", "x"], ["SORT", "z"],
        # ERANGE last: Redis 7.0 does not clear errno before strtod, so after
        # one ERANGE every numeric SORT fails until a system call on the
        # event loop (a new connection's accept) overwrites errno
        ["RPUSH", "c", "1e500"], ["SORT", "c"], ["RPUSH", "d", "1e-400"], ["SORT", "d"],
    ],
    # ------------------------------------------------------------ alpha
    "alpha": [
        ["RPUSH", "l", "banana", "apple", "Cherry", "apple2", "", "10", "9", b"\xff", b"\x80a", "a b"],
        ["SORT", "l", "ALPHA"], ["SORT", "l", "ALPHA", "DESC"], ["SORT", "l", "alpha", "limit", "2", "3"],
        ["SORT", "l", "ALPHA", "STORE", "d"], ["LRANGE", "d", "0", "-1"], ["SORT", "l"],
        ["RPUSH", "n", b"a\x00b", b"a\x00a", "a", b"a\x00"], ["SORT", "n", "ALPHA"], ["SORT", "n", "ALPHA", "DESC"],
        ["SORT", "n", "ALPHA", "STORE", "d"], ["LRANGE", "d", "0", "-1"],
        ["SORT", "n", "ALPHA", "DESC", "STORE", "d"], ["LRANGE", "d", "0", "-1"],
    ],
    # ------------------------------------------------------------ sets and sorted sets
    "sets": [
        ["SADD", "i", "5", "3", "-1", "100", "0"], ["SORT", "i"], ["SORT", "i", "DESC"], ["SORT", "i", "ALPHA"],
        ["SORT", "i", "BY", "nosort"], ["SORT", "i", "BY", "nosort", "DESC"], ["SORT", "i", "BY", "nosort", "LIMIT", "1", "2"],
        ["SORT", "i", "BY", "nosort", "STORE", "d"], ["LRANGE", "d", "0", "-1"],
        ["SADD", "s", "c", "a", "b", "10", "2"], ["SORT", "s", "ALPHA"], ["SORT", "s", "ALPHA", "DESC", "LIMIT", "1", "2"],
        sorted_("SORT", "s", "BY", "nosort"), ["SORT", "s", "BY", "nosort", "STORE", "d"], ["LRANGE", "d", "0", "-1"],
        ["SORT", "s", "BY", "nosort", "DESC", "STORE", "d"], ["LRANGE", "d", "0", "-1"],
        ["SORT", "s", "BY", "nosort", "LIMIT", "1", "3", "STORE", "d"], ["LRANGE", "d", "0", "-1"],
        ["SORT", "s"], ["SORT_RO", "i", "LIMIT", "1", "1"], ["OBJECT", "ENCODING", "i"],
        # from a script, BY nosort of a set is sorted ALPHA (replicas must agree)
        ["EVAL", "return redis.call('sort', KEYS[1], 'by', 'nosort')", "1", "s"],
        ["EVAL", "return redis.call('sort_ro', KEYS[1], 'by', 'nosort', 'desc', 'limit', '1', '3')", "1", "s"],
        ["EVAL", "return redis.call('sort', KEYS[1], 'by', 'nosort', 'get', '#', 'store', 'd2')", "1", "s"],
        ["LRANGE", "d2", "0", "-1"], ["EVAL", "return redis.call('sort', KEYS[1], 'by', 'w_*')", "1", "s"],
    ],
    "zsets": [
        ["ZADD", "z", "3", "c", "1", "a", "2", "b", "2", "bb", "-1", "10"], ["SORT", "z", "ALPHA"],
        ["OBJECT", "ENCODING", "z"], ["SORT", "z", "BY", "nosort"], ["SORT", "z", "BY", "nosort", "DESC"],
        ["SORT", "z", "BY", "nosort", "LIMIT", "1", "2"], ["SORT", "z", "BY", "nosort", "DESC", "LIMIT", "1", "2"],
        ["SORT", "z", "BY", "nosort", "LIMIT", "4", "10"], ["SORT", "z", "BY", "nosort", "LIMIT", "5", "1"],
        ["SORT", "z", "BY", "nosort", "DESC", "LIMIT", "0", "0"], ["SORT", "z", "BY", "nosort", "STORE", "d"],
        ["LRANGE", "d", "0", "-1"], ["SORT", "z"], ["ZADD", "n", "1", "3", "2", "1", "3", "2"], ["SORT", "n"],
        ["SORT", "n", "BY", "nosort", "DESC"], ["ZADD", "e", "1", "x"], ["SORT_RO", "e", "LIMIT", "0", "1"],
        ["OBJECT", "ENCODING", "e"], ["ZADD", "e2", "1", "x"], ["SORT", "e2", "LIMIT", "x", "1"],
        ["OBJECT", "ENCODING", "e2"], ["SORT", "e2", "BADOPT"], ["OBJECT", "ENCODING", "e2"],
        ["ZADD", "big"] + [x for i in range(200) for x in (str(i % 7), "m%03d" % i)],
        ["SORT", "big", "BY", "nosort", "LIMIT", "150", "5"], ["SORT", "big", "BY", "nosort", "DESC", "LIMIT", "150", "5"],
        ["SORT", "big", "ALPHA", "LIMIT", "10", "5"],
    ],
    # ------------------------------------------------------------ patterns
    "by_pattern": [
        WEIGHTS, ["RPUSH", "l", "1", "2", "3", "4"], ["SORT", "l", "BY", "w_*"], ["SORT", "l", "BY", "w_*", "DESC"],
        ["SORT", "l", "BY", "w_*", "LIMIT", "1", "2"], ["SORT", "l", "BY", "w_*", "ALPHA"],
        ["SORT", "l", "BY", "w_*", "ALPHA", "DESC"], ["SORT", "l", "BY", "w_*", "ALPHA", "STORE", "d"],
        ["LRANGE", "d", "0", "-1"], ["RPUSH", "m", "a", "b", "c", "zz"], ["SORT", "m", "BY", "w_*"],
        ["SORT", "m", "BY", "w_*", "DESC"], ["SORT", "m", "BY", "w_*", "ALPHA"],
        ["SORT", "m", "BY", "w_*", "ALPHA", "DESC"], ["SORT", "m", "BY", "nokey_*"], ["SORT", "m", "BY", "nokey_*", "DESC"],
        ["SORT", "m", "BY", "nokey_*", "ALPHA"], ["SORT", "m", "BY", "nokey_*", "ALPHA", "DESC"],
        ["SET", "w_zz", "notnum"], ["SORT", "m", "BY", "w_*"], ["SORT", "m", "BY", "w_*", "ALPHA"],
        ["SORT", "m", "BY", "*"], ["SORT", "m", "BY", "w_*", "BY", "nosort"], ["SORT", "m", "BY", "nosort", "BY", "w_*"],
        ["SORT", "m", "BY", "w_*", "BY", "x*"], ["SORT", "l", "BY", "nosort", "DESC"], ["SORT", "l", "BY", "const"],
        ["SORT", "l", "BY", b"w\x00_*"], ["SORT", "l", "BY", "w_**"],
    ],
    "hash_patterns": [
        ["RPUSH", "l", "1", "2", "3", "a", "9"], *HASHES, ["SORT", "l", "BY", "h_*->n"], ["SORT", "l", "BY", "h_*->f", "ALPHA"],
        ["SORT", "l", "BY", "h_*->f", "ALPHA", "GET", "#", "GET", "h_*->f", "GET", "h_*->n"],
        ["SORT", "l", "BY", "h_*->nofield", "GET", "h_*->f"], ["SORT", "l", "BY", "h_*->", "GET", "h_*->"],
        ["SET", "h_->", "str"], ["SORT", "l", "BY", "nosort", "GET", "h_*->", "GET", "h_*->x->y"],
        ["HSET", "h_1->x", "y", "deep"], ["SORT", "l", "BY", "nosort", "GET", "h_*->x->y"],
        ["SORT", "l", "BY", "nosort", "GET", "*->f"], ["SORT", "l", "BY", "nosort", "GET", "h_->*"],
        ["SORT", "l", "BY", "nosort", "GET", "h_*->f", "STORE", "d"], ["LRANGE", "d", "0", "-1"],
        ["HSET", "h_9", "f", b"x\x00y"], ["SORT", "l", "BY", "nosort", "GET", "h_*->f"],
        ["HSET", "h_1", b"f\x00g", "nul-field"], ["SORT", "l", "BY", "nosort", "GET", b"h_*->f\x00g"],
        ["HSET", "big_1"] + [x for i in range(300) for x in ("f%d" % i, "v%d" % i)],
        ["SORT", "l", "BY", "nosort", "GET", "big_*->f299", "GET", "big_*->f7"],
    ],
    "get_patterns": [
        WEIGHTS, ["RPUSH", "l", "3", "1", "2", "b"], ["SORT", "l", "BY", "w_*", "GET", "#"],
        ["SORT", "l", "BY", "w_*", "GET", "w_*", "GET", "#", "GET", "nokey_*"], ["SORT", "l", "BY", "w_*", "GET", "const"],
        ["SORT", "l", "BY", "w_*", "GET", "#", "LIMIT", "1", "2"], ["SORT", "l", "BY", "w_*", "GET", "#", "LIMIT", "9", "2"],
        ["SORT", "l", "BY", "w_*", "GET", "w_*", "STORE", "d"], ["LRANGE", "d", "0", "-1"],
        ["SORT", "l", "BY", "w_*", "GET", "nokey_*", "STORE", "d"], ["LRANGE", "d", "0", "-1"],
        ["RPUSH", "w_3x", "list"], ["SADD", "w_1x", "set"], ["SORT", "l", "BY", "nosort", "GET", "w_*x"],
        ["SORT", "l", "BY", "nosort", "GET", "w_*x", "STORE", "d"], ["LRANGE", "d", "0", "-1"],
        ["SORT", "l", "BY", "nosort", "GET", "w_*_*"], ["SET", "w_1_*", "star"], ["SORT", "l", "BY", "nosort", "GET", "w_*_*"],
        ["SORT", "l", "BY", "nosort", "GET", "##"], ["SORT", "l", "BY", "nosort", "GET", b"#\x00x"],
        ["SORT", "l", "BY", "nosort", "GET", "*"], ["SET", "3", "three"], ["SORT", "l", "BY", "nosort", "GET", "*"],
        ["SORT", "l", "GET"], ["SORT", "l", "BY"], ["SORT", "nokey", "GET", "#"], ["SORT", "nokey", "GET", "#", "STORE", "d"],
        ["EXISTS", "d"],
    ],
    # ------------------------------------------------------------ LIMIT
    "limit": [
        ["RPUSH", "l", "5", "4", "3", "2", "1"], ["SORT", "l", "LIMIT", "0", "0"], ["SORT", "l", "LIMIT", "0", "-1"],
        ["SORT", "l", "LIMIT", "-5", "2"], ["SORT", "l", "LIMIT", "2", "-3"], ["SORT", "l", "LIMIT", "100", "5"],
        ["SORT", "l", "LIMIT", "3", "100"], ["SORT", "l", "LIMIT", "4", "1"], ["SORT", "l", "LIMIT", "5", "1"],
        ["SORT", "l", "LIMIT", LLMAX, LLMAX], ["SORT", "l", "LIMIT", LLMIN, LLMIN], ["SORT", "l", "LIMIT", "1", LLMAX],
        ["SORT", "l", "LIMIT", "x", "1"], ["SORT", "l", "LIMIT", "1", "1.5"], ["SORT", "l", "LIMIT", "1"],
        ["SORT", "l", "LIMIT", "9223372036854775808", "1"], ["SORT", "l", "LIMIT", " 1", "1"],
        ["SORT", "l", "LIMIT", "0", "1", "LIMIT", "2", "2"], ["SORT", "l", "BY", "nosort", "LIMIT", "-1", "2"],
        ["SORT", "l", "BY", "nosort", "DESC", "LIMIT", "3", "9"], ["SORT", "l", "BY", "nosort", "LIMIT", "5", "9"],
        ["SORT", "l", "BY", "nosort", "DESC", "LIMIT", "2", "0"], ["SORT", "nokey", "LIMIT", "0", "1"],
        ["SORT", "nokey", "BY", "nosort", "DESC", "LIMIT", "1", "1"], ["SORT", "l", "LIMIT", "1", "2", "STORE", "d"],
        ["LRANGE", "d", "0", "-1"], ["SORT", "l", "LIMIT", "9", "2", "STORE", "d"], ["EXISTS", "d"],
    ],
    # ------------------------------------------------------------ STORE
    "store": [
        ["RPUSH", "l", "3", "1", "2"], ["SET", "str", "x"], ["SORT", "l", "STORE", "str"], ["TYPE", "str"],
        ["LRANGE", "str", "0", "-1"], ["OBJECT", "ENCODING", "str"], ["SADD", "set", "a"], ["SORT", "l", "STORE", "set"],
        ["TYPE", "set"], ["SET", "ttl", "x", "EX", "100"], ["SORT", "l", "STORE", "ttl"], ["TTL", "ttl"],
        ["RPUSH", "ttl2", "a"], ["EXPIRE", "ttl2", "100"], ["SORT", "l", "DESC", "STORE", "ttl2"], ["TTL", "ttl2"],
        ["LRANGE", "ttl2", "0", "-1"], ["SORT", "nokey", "STORE", "str"], ["EXISTS", "str"],
        ["SORT", "nokey", "STORE", "str"], ["SORT", "l", "LIMIT", "0", "0", "STORE", "set"], ["EXISTS", "set"],
        ["SORT", "l", "STORE", "l"], ["LRANGE", "l", "0", "-1"], ["SORT", "l", "DESC", "STORE", "a", "STORE", "b"],
        ["EXISTS", "a", "b"], ["LRANGE", "b", "0", "-1"], ["SORT", "l", "STORE"], ["SORT_RO", "l", "STORE", "x"],
        ["EXISTS", "x"], ["HSET", "hh", "f", "v"], ["SORT", "hh", "STORE", "x"], ["SORT", "l", "STORE", "hh", "GET", "#", "GET", "#"],
        ["LRANGE", "hh", "0", "-1"], ["SET", "n", "1"], ["SORT", "n", "STORE", "n"], ["GET", "n"],
        ["RPUSH", "big"] + [str(i) for i in range(400)], ["SORT", "big", "DESC", "STORE", "bigd"], ["LLEN", "bigd"],
        ["LINDEX", "bigd", "0"], ["LINDEX", "bigd", "-1"], ["OBJECT", "ENCODING", "bigd"],
    ],
    # ------------------------------------------------------------ errors, arity, types
    "errors": [
        ["SORT"], ["SORT_RO"], ["SET", "s", "x"], ["SORT", "s"], ["SORT_RO", "s"], ["HSET", "h", "f", "v"], ["SORT", "h"],
        ["XADD", "x", "1-1", "f", "v"], ["SORT", "x"], ["SORT", "s", "BADOPT"], ["RPUSH", "l", "1"], ["SORT", "l", "BADOPT"],
        ["SORT", "l", "ALPHA", "x"], ["SORT", "l", "STORE"], ["SORT", "l", "ASC", "DESC", "ALPHA", "DESC"],
        ["SORT", "s", "LIMIT", "x", "1"], ["SORT", "l", b"alpha\x00x"], ["SORT", "nokey"], ["SORT_RO", "nokey"],
        ["SORT", "nokey", "ALPHA", "DESC", "BY", "w_*"],
    ],
    "getkeys": [
        ["COMMAND", "GETKEYS", "SORT", "a"], ["COMMAND", "GETKEYS", "SORT", "a", "STORE", "b"],
        ["COMMAND", "GETKEYS", "SORT", "a", "STORE", "b", "BY", "x", "GET", "y", "STORE", "c"],
        ["COMMAND", "GETKEYS", "SORT", "a", "STORE", "store", "b"], ["COMMAND", "GETKEYS", "SORT", "a", "GET", "store"],
        ["COMMAND", "GETKEYS", "SORT", "a", "LIMIT", "store", "x", "STORE"],
        ["COMMAND", "GETKEYS", "SORT", "a", "by", "store", "store", "d"], ["COMMAND", "GETKEYS", "SORT_RO", "a", "BY", "x"],
        ["COMMAND", "GETKEYS", "SORT_RO", "a", "STORE", "b"], ["COMMAND", "GETKEYS", "LCS", "a", "b", "IDX"],
        ["COMMAND", "GETKEYS", "SORT"],
    ],
    # ------------------------------------------------------------ transactions, RESP3
    "multi_watch": [
        ["RPUSH", "l", "2", "3", "1"], ["MULTI"], ["SORT", "l", "STORE", "d"], ["SORT_RO", "l", "DESC"], ["LRANGE", "d", "0", "-1"],
        ["SORT", "l", "BADOPT"], ["EXEC"], ["MULTI"], ["SORT", "l", "BY", "x", "GET"], ["EXEC"],
        cmd("WATCH", "d", conn=1), ["SORT", "l", "STORE", "d"], cmd("MULTI", conn=1), cmd("PING", conn=1),
        cmd("EXEC", conn=1), cmd("WATCH", "l", conn=1), ["SORT", "l", "STORE", "e"], cmd("MULTI", conn=1),
        cmd("PING", conn=1), cmd("EXEC", conn=1), cmd("WATCH", "nokey", conn=1), ["SORT", "empty", "STORE", "nokey"],
        cmd("MULTI", conn=1), cmd("PING", conn=1), cmd("EXEC", conn=1), cmd("WATCH", "d", conn=1),
        ["SORT", "empty", "STORE", "d"], cmd("MULTI", conn=1), cmd("PING", conn=1), cmd("EXEC", conn=1),
    ],
    "resp3": [
        hello("3"), ["RPUSH", "l", "b", "a"], ["SET", "w_a", "1"], ["SORT", "l", "ALPHA"],
        ["SORT", "l", "BY", "w_*", "GET", "#", "GET", "w_*"], ["SORT", "l", "STORE", "d"], ["SORT", "nokey"],
        ["SORT", "l", "LIMIT", "x", "1"], ["SET", "k1", "ohmytext"], ["SET", "k2", "mynewtext"], ["LCS", "k1", "k2"],
        ["LCS", "k1", "k2", "LEN"], ["LCS", "k1", "k2", "IDX"], ["LCS", "k1", "k2", "IDX", "WITHMATCHLEN"],
        ["LCS", "k1", "nokey", "IDX"],
    ],
    # ------------------------------------------------------------ LCS
    "lcs_docs": [
        ["MSET", "key1", "ohmytext", "key2", "mynewtext"], ["LCS", "key1", "key2"], ["LCS", "key1", "key2", "LEN"],
        ["LCS", "key1", "key2", "IDX"], ["LCS", "key1", "key2", "IDX", "MINMATCHLEN", "4"],
        ["LCS", "key1", "key2", "IDX", "MINMATCHLEN", "4", "WITHMATCHLEN"], ["LCS", "key1", "key2", "IDX", "WITHMATCHLEN"],
        ["LCS", "key2", "key1", "IDX", "WITHMATCHLEN"], ["LCS", "key1", "key1", "IDX", "WITHMATCHLEN"],
        ["LCS", "key1", "key2", "WITHMATCHLEN"], ["LCS", "key1", "key2", "MINMATCHLEN", "2"],
        ["LCS", "key1", "key2", "LEN", "WITHMATCHLEN"], ["lcs", "key1", "key2", "idx", "minmatchlen", "-3"],
        ["LCS", "key1", "key2", "IDX", "MINMATCHLEN", "100"], ["LCS", "key1", "key2", "IDX", "MINMATCHLEN", "1", "MINMATCHLEN", "3"],
    ],
    "lcs_errors": [
        ["LCS"], ["LCS", "a"], ["SET", "a", "abc"], ["RPUSH", "l", "x"], ["LCS", "a", "l"], ["LCS", "l", "a"],
        ["LCS", "l", "nokey", "BADOPT"], ["LCS", "a", "a", "LEN", "IDX"], ["LCS", "a", "a", "IDX", "LEN"],
        ["LCS", "a", "a", "BADOPT"], ["LCS", "a", "a", "MINMATCHLEN"], ["LCS", "a", "a", "MINMATCHLEN", "x"],
        ["LCS", "a", "a", "MINMATCHLEN", "1.5", "LEN", "IDX"], ["LCS", "a", "a", "LEN", "IDX", "MINMATCHLEN", "x"],
        ["LCS", "nokey", "nokey2"], ["LCS", "nokey", "a", "LEN"], ["LCS", "nokey", "a", "IDX"], ["SET", "e", ""],
        ["LCS", "e", "a", "IDX", "WITHMATCHLEN"], ["SET", "n", "12345"], ["SET", "m", "345"],
        ["LCS", "n", "m", "IDX", "WITHMATCHLEN"], ["LCS", "a", "a", b"len\x00x"],
        ["SET", "b1", b"\x00\xff\x00a"], ["SET", "b2", b"a\x00\xff"], ["LCS", "b1", "b2"], ["LCS", "b1", "b2", "IDX"],
    ],
    "lcs_size_limit": [
        ["CONFIG", "SET", "proto-max-bulk-len", "1mb"], ["SET", "a", "x" * 600], ["SET", "b", "y" * 600],
        ["LCS", "a", "b"], ["LCS", "a", "b", "LEN"], ["SET", "b", "y" * 400], ["LCS", "a", "b", "LEN"],
        ["LCS", "a", "b", "IDX"], ["CONFIG", "SET", "proto-max-bulk-len", "512mb"], ["SET", "b", "y" * 600],
        ["LCS", "a", "b", "LEN"],
    ],
}


def _big_sort_case(seed=16, n=2000):
    """A LIMIT of at most an eighth of the elements is selected, not sorted
    in full (cmd_sort.c's sort_first): big collections with many ties
    (duplicate numbers, equal BY weights, equal numeric values spelled
    differently), LIMIT at the start, in the middle and past the end, ASC
    and DESC, GET, STORE."""
    rnd = random.Random(seed)
    nums = [rnd.choice([str(rnd.randrange(50)), str(rnd.randrange(10 ** 9)), "%d.0" % rnd.randrange(50),
                        "%.3f" % rnd.uniform(-100, 100), "0%d" % rnd.randrange(50), "1e%d" % rnd.randrange(5)])
            for _ in range(n)]
    words = ["member:%d" % rnd.randrange(10 ** 6) for _ in range(n)] + ["a", "B", "b", "\xe9", "", "10", "9"]
    weights = []
    for m in set(nums):
        weights += ["w_" + m, str(rnd.randrange(20))]
    zargs = []
    for i in range(n):
        zargs += [str(rnd.randrange(30)), "z%d" % i]
    steps = [["RPUSH", "big", *nums], ["SADD", "bigs", *words], ["MSET", *weights], ["ZADD", "bigz", *zargs]]
    for limit in (["0", "1"], ["0", "10"], ["7", "10"], ["100", "150"], ["0", "250"], ["0", "251"], ["1995", "10"]):
        for order in ([], ["DESC"]):
            steps += [["SORT", "big", "LIMIT", *limit, *order], ["SORT", "bigs", "ALPHA", "LIMIT", *limit, *order],
                      ["SORT", "big", "BY", "w_*", "LIMIT", *limit, *order],
                      ["SORT", "big", "BY", "w_*", "LIMIT", *limit, *order, "GET", "#", "GET", "w_*"],
                      ["SORT_RO", "bigz", "LIMIT", *limit, *order]]
    steps += [["SORT", "big", "LIMIT", "3", "12", "STORE", "d"], ["LRANGE", "d", "0", "-1"],
              ["SORT", "bigs", "ALPHA", "DESC", "LIMIT", "0", "5", "STORE", "d"], ["LRANGE", "d", "0", "-1"],
              ["RPUSH", "big", "x"], ["SORT", "big", "LIMIT", "0", "10"]]
    return steps


CASES["big_limits"] = _big_sort_case()


@pytest.mark.parametrize("name", sorted(CASES))
def test_sort_lcs(pair, name):
    f, r = pair
    try:
        mismatches, transcript = run_steps(f.port, r.port, CASES[name])
    finally:
        for srv in pair:
            with srv.client() as c:
                c.command("CONFIG", "SET", "proto-max-bulk-len", "512mb")
    assert not mismatches, format_report(name, mismatches, transcript)


def test_command_info_matches_redis(pair):
    """Arity, flags, key positions and ACL categories as COMMAND INFO reports
    them, and the COMMAND DOCS summary, since and complexity."""
    names = ["sort", "sort_ro", "lcs"]
    got = []
    for srv in pair:
        with srv.client() as c:
            v = parse(c.command("COMMAND", "INFO", *names))
            docs = parse(c.command("COMMAND", "DOCS", *names))
        rows = []
        for item in v[1]:
            fl = item[1]
            flags = sorted(x[1] for x in fl[2][1])
            acl = sorted(x[1] for x in fl[6][1])
            rows.append((fl[0][1], fl[1][1], flags, fl[3][1], fl[4][1], fl[5][1], acl))
        for i in range(0, len(docs[1]), 2):
            body = docs[1][i + 1][1]
            d = {body[k][1]: body[k + 1][1] for k in range(0, len(body), 2)
                 if body[k][1] in (b"summary", b"since", b"group", b"complexity")}
            rows.append((docs[1][i][1], sorted(d.items())))
        got.append(rows)
    assert got[0] == got[1]


def test_notifications(pair):
    steps = [
        ("RPUSH", "l", "3", "1", "2"), ("SORT", "l", "STORE", "d"), ("SORT", "l", "STORE", "d"),
        ("SORT", "nokey", "STORE", "d"), ("SORT", "nokey", "STORE", "d"), ("SORT", "l", "BY", "w_*", "GET", "g_*"),
        ("SORT", "l", "BY", "w_*", "GET", "g_*", "STORE", "e"), ("SORT_RO", "l", "GET", "#"), ("LCS", "l2", "nokey"),
        ("SORT", "l", "BADOPT", "STORE", "d"),
    ]
    for flags in ("KEA", "KEAnm", "El", "Eg"):
        report = compare(pair[0], pair[1], flags, steps)
        assert report is None, report
    for srv in pair:
        with srv.client() as c:
            c.command("CONFIG", "SET", "notify-keyspace-events", "")


def test_sort_store_wakes_blocked_pop(pair):
    out = []
    for srv in pair:
        with srv.client() as a, RawClient(srv.port) as b:
            a.command("FLUSHALL")
            b.send(encode_command(["BLPOP", "dst", "5"]))
            time.sleep(0.1)
            a.command("RPUSH", "src", "3", "1", "2")
            n = a.command("SORT", "src", "STORE", "dst")
            popped = b.read_reply()
            rest = a.command("LRANGE", "dst", "0", "-1")
            out.append((n, popped, rest))
    assert out[0] == out[1]
    assert out[0][1] == b"*2\r\n$3\r\ndst\r\n$1\r\n1\r\n"


def test_sort_ro_is_tracked(pair):
    """CLIENT TRACKING remembers SORT_RO's key (not its BY/GET lookups), as Redis."""
    out = []
    for srv in pair:
        with srv.client() as a, srv.client() as b:
            b.command("FLUSHALL")
            b.command("RPUSH", "l", "1")
            a.command("HELLO", "3")
            a.command("CLIENT", "TRACKING", "ON")
            got = [a.command("SORT_RO", "l", "BY", "w_*", "GET", "g_*"), a.command("LCS", "l2", "s")]
            b.command("MSET", "w_1", "1", "g_1", "1", "s", "x")
            b.command("RPUSH", "l", "2")
            got.append(a.command("PING"))
            got.append(a.read_reply() if got[-1].startswith(b">") else b"")
            out.append(got)
    assert out[0] == out[1]


def _hits_misses(srv):
    with srv.client() as c:
        raw = c.command("INFO", "stats")
    stats = dict(line.split(b":", 1) for line in raw.split(b"\r\n") if b":" in line)
    return int(stats[b"keyspace_hits"]), int(stats[b"keyspace_misses"])


def test_keyspace_hit_miss_accounting(pair):
    """Pattern lookups count hits and misses as Redis's lookupKeyRead does."""
    steps = [["SORT", "l", "BY", "w_*", "GET", "#", "GET", "g_*", "GET", "h_*->f", "GET", "const"],
             ["SORT", "l", "BY", "nosort", "GET", "w_*"], ["SORT", "nokey"], ["SORT_RO", "l", "STORE", "x"],
             ["LCS", "w_1", "nokey"], ["SORT", "l", "BY", "w_*", "STORE", "d"]]
    for srv in pair:
        with srv.client() as c:
            c.command("FLUSHALL")
            c.command("RPUSH", "l", "1", "2", "3")
            c.command("MSET", "w_1", "3", "w_2", "1", "g_2", "x")
            c.command("HSET", "h_3", "f", "v")
    before = [_hits_misses(s) for s in pair]
    mismatches, transcript = run_steps(pair[0].port, pair[1].port, steps, flush=False)
    assert not mismatches, format_report("hit_miss", mismatches, transcript)
    after = [_hits_misses(s) for s in pair]
    deltas = [(a[0] - b[0], a[1] - b[1]) for a, b in zip(after, before)]
    assert deltas[0] == deltas[1]


# ====================================================================== random SORT programs
INT_POOL = [str(i) for i in range(-5, 25)] + ["1.5", "-0.25", "1e2"]
STR_POOL = ["a", "b", "c", "ab", "ba", "Z", "zz", "", "10", "9", "x y", "\xe9"]
LIST_KEYS, SET_KEYS, ZSET_KEYS = ["l1", "l2"], ["si", "ss"], ["z1", "z2"]


def gen_sort_program(seed, n=400):
    rnd = random.Random(seed)
    prog = []

    def member_of(key):
        if key == "si":
            return rnd.choice([str(i) for i in range(-5, 25)])
        if key in ("ss",):
            return rnd.choice(STR_POOL)
        return rnd.choice(INT_POOL + STR_POOL if rnd.random() < 0.2 else INT_POOL)

    for _ in range(n):
        x = rnd.random()
        if x < 0.12:
            k = rnd.choice(LIST_KEYS)
            prog.append(cmd(rnd.choice(["RPUSH", "LPUSH"]), k, *[member_of(k) for _ in range(rnd.randint(1, 5))]))
        elif x < 0.22:
            k = rnd.choice(SET_KEYS)
            prog.append(cmd("SADD", k, *[member_of(k) for _ in range(rnd.randint(1, 5))]))
        elif x < 0.30:
            k = rnd.choice(ZSET_KEYS)
            args = []
            for _ in range(rnd.randint(1, 4)):
                args += [str(rnd.randint(-3, 3)), member_of(k)]
            prog.append(cmd("ZADD", k, *args))
        elif x < 0.38:
            m = rnd.choice(INT_POOL + STR_POOL)
            prog.append(cmd("SET", "w_" + m, rnd.choice(INT_POOL + ["x"] if rnd.random() < 0.05 else INT_POOL)))
        elif x < 0.44:
            m = rnd.choice(INT_POOL + STR_POOL)
            prog.append(cmd("HSET", "h_" + m, "f", rnd.choice(STR_POOL), "n", rnd.choice(INT_POOL)))
        elif x < 0.47:
            prog.append(cmd("DEL", rnd.choice(LIST_KEYS + SET_KEYS + ZSET_KEYS + ["d"])))
        else:
            key = rnd.choice(LIST_KEYS + SET_KEYS + ZSET_KEYS + ["nokey"])
            args = ["SORT_RO" if rnd.random() < 0.2 else "SORT", key]
            by = rnd.choice([None, None, "w_*", "h_*->n", "h_*->f", "nosort", "nokey_*"])
            alpha = rnd.random() < 0.4 or by == "h_*->f"
            limit = rnd.random() < 0.35
            store = args[0] == "SORT" and rnd.random() < 0.3
            if by:
                args += ["BY", by]
            if alpha:
                args.append("ALPHA")
            if rnd.random() < 0.4:
                args.append("DESC")
            # ALPHA BY a pattern: ties keep the input order, which for sets and
            # sorted sets is Redis's hash order; with LIMIT Redis uses a
            # partial quicksort: not generated. BY nosort of a hash-table set
            # (not stored): hash order, compared as a multiset, no LIMIT.
            unordered_input = key in SET_KEYS + ZSET_KEYS
            alpha_by = alpha and by not in (None, "nosort")
            hash_order = key == "ss" and by == "nosort" and not store
            if limit and not alpha_by and not hash_order:
                args += ["LIMIT", str(rnd.randint(-2, 8)), str(rnd.randint(-2, 8))]
            for _ in range(rnd.choice([0, 0, 1, 2])):
                args += ["GET", rnd.choice(["#", "w_*", "h_*->f", "nokey_*", "const"])]
            if store:
                args += ["STORE", "d"]
            if (alpha_by and unordered_input) or hash_order:
                prog.append(sorted_(*args))
            else:
                prog.append(cmd(*args))
            if store and alpha_by and unordered_input:
                # d's order is undefined: compare it as a multiset, then drop it
                prog.append(sorted_("LRANGE", "d", "0", "-1"))
                prog.append(cmd("DEL", "d"))
            elif store:
                prog.append(cmd("LRANGE", "d", "0", "-1"))
    for k in ZSET_KEYS:
        prog.append(cmd("OBJECT", "ENCODING", k))
    return prog


def test_random_sort_program_is_reproducible():
    a, b = gen_sort_program(3, 100), gen_sort_program(3, 100)
    assert [s.describe() for s in a] == [s.describe() for s in b]


@pytest.mark.parametrize("seed", [1, 2, 3, 4, 5, 6])
def test_random_sort_program(pair, seed):
    f, r = pair
    mismatches, transcript = run_steps(f.port, r.port, gen_sort_program(seed))
    assert not mismatches, format_report("random_sort_%d" % seed, mismatches, transcript)


# ====================================================================== random LCS
def _rand_str(rnd, alphabet, lo, hi):
    return "".join(rnd.choice(alphabet) for _ in range(rnd.randint(lo, hi)))


@pytest.mark.parametrize("seed", [11, 12, 13])
def test_random_lcs(pair, seed):
    rnd = random.Random(seed)
    steps = []
    for i in range(120):
        if i == 60:
            steps.append(hello("3"))
        alphabet = rnd.choice(["ab", "abc", "acgt", "abcdefgh", "a"])
        a = _rand_str(rnd, alphabet, 0, 60)
        b = _rand_str(rnd, alphabet, 0, 60)
        steps.append(cmd("MSET", "a", a, "b", b))
        steps.append(cmd("LCS", "a", "b"))
        steps.append(cmd("LCS", "b", "a", "LEN"))
        steps.append(cmd("LCS", "a", "b", "IDX", "WITHMATCHLEN"))
        steps.append(cmd("LCS", "a", "b", "IDX", "MINMATCHLEN", str(rnd.randint(0, 5))))
    mismatches, transcript = run_steps(pair[0].port, pair[1].port, steps)
    assert not mismatches, format_report("random_lcs_%d" % seed, mismatches, transcript)

