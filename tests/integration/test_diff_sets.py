"""Differential tests for the set commands (src/commands/cmd_set.c, src/commands/cmd_set_ops.c,
src/keyspace/t_set.c, src/base/intset.c): SADD SREM SMEMBERS SISMEMBER SMISMEMBER SCARD
SPOP SRANDMEMBER SMOVE SINTER SUNION SDIFF and their STORE forms, SINTERCARD
and SSCAN, against the reference redis-server 7.0.15.

Replies are compared byte for byte, except where Redis's own output order
follows its hash table (members of "hashtable" sets: compared as multisets,
`sorted_`) or is random (SPOP/SRANDMEMBER: checked against invariants, see
`check_random_reply`). Sets that are intsets reply in ascending order on
both servers, so those replies are compared exactly, including the results
of SUNION/SDIFF (built as fresh sets, as Redis does).

- CASES: hand-written cases for every command, option and error path,
  WRONGTYPE, counts (negative, zero, LLONG_MIN), SINTERCARD numkeys and
  LIMIT errors, *STORE over keys of other types and with TTLs, OBJECT
  ENCODING across intset -> hashtable conversions (set-max-intset-entries
  and CONFIG SET), RESP3 reply types, MULTI/EXEC and WATCH.
- test_random_members: SPOP/SRANDMEMBER with many counts on intset and
  hashtable sets, invariants checked on ferry's replies with redis as the
  model of the set's contents.
- test_sscan_full_iteration: SSCAN over hashtable sets (cursors differ by
  design): the member sets of full iterations, with MATCH and COUNT.
- test_random_program: seeded random sequences (strings and sets mixed,
  small and default intset thresholds), SPOP and SRANDMEMBER included:
  ferry's SPOP result is removed from redis's copy with SREM, so the two
  keyspaces stay identical.
"""
from __future__ import annotations

import random

import pytest

from conftest import start_server
from diffkit import approx, cmd, format_report, hello, pick_weighted, replies_equal, run_steps, sleep, sorted_
from resp_client import RawClient, parse

LLMAX = "9223372036854775807"
LLMIN = "-9223372036854775808"
WRONGTYPE = b"-WRONGTYPE Operation against a key holding the wrong kind of value\r\n"


def ints(a, b):
    return [str(i) for i in range(a, b)]


CASES = {
    # ------------------------------------------------------------ SADD/SREM
    "sadd_basic": [
        ["SADD", "s", "a", "b", "c", "a"], ["SADD", "s", "a"], ["SADD", "s", "d", "a", "e"], ["SCARD", "s"],
        sorted_("SMEMBERS", "s"), ["TYPE", "s"], ["OBJECT", "ENCODING", "s"], ["SISMEMBER", "s", "a"],
        ["SISMEMBER", "s", "z"], ["SADD", "s"], ["SADD"], ["sadd", "S", "x"], ["SCARD", "S"],
    ],
    "sadd_intset_order": [
        ["SADD", "i", "3", "1", "2", "-5", "70000", LLMAX, LLMIN, "0", "-70000"], ["SMEMBERS", "i"],
        ["OBJECT", "ENCODING", "i"], ["SADD", "i", "1", "3"], ["SCARD", "i"], ["SISMEMBER", "i", "70000"],
        ["SISMEMBER", "i", "007"], ["SISMEMBER", "i", "x"], ["SMISMEMBER", "i", "0", "-0", "+1", "1", LLMIN],
    ],
    "intset_width_upgrades": [
        ["SADD", "w", "1"], ["SADD", "w", "32767"], ["SADD", "w", "-32768"], ["SMEMBERS", "w"],
        ["SADD", "w", "32768"], ["SMEMBERS", "w"], ["SADD", "w", "-32769"], ["SMEMBERS", "w"],
        ["SADD", "w", "2147483648"], ["SMEMBERS", "w"], ["SADD", "w", "-2147483649"], ["SMEMBERS", "w"],
        ["SISMEMBER", "w", "2147483647"], ["SISMEMBER", "w", "2147483648"], ["SREM", "w", "2147483648"],
        ["SREM", "w", "-2147483649", "5"], ["SMEMBERS", "w"], ["SADD", "w", "-1", "2", LLMAX], ["SMEMBERS", "w"],
        ["OBJECT", "ENCODING", "w"], ["SADD", "v", LLMIN], ["SADD", "v", "0"], ["SMEMBERS", "v"],
    ],
    "non_canonical_integers_are_strings": [
        ["SADD", "a", "1"], ["SADD", "a", "01"], ["OBJECT", "ENCODING", "a"], sorted_("SMEMBERS", "a"),
        ["SADD", "b", "-0"], ["OBJECT", "ENCODING", "b"], ["SADD", "c", "+1"], ["OBJECT", "ENCODING", "c"],
        ["SADD", "d", " 1"], ["OBJECT", "ENCODING", "d"], ["SADD", "e", "1.0"], ["OBJECT", "ENCODING", "e"],
        ["SADD", "f", "9223372036854775808"], ["OBJECT", "ENCODING", "f"], ["SADD", "g", ""],
        ["OBJECT", "ENCODING", "g"], ["SMEMBERS", "g"], ["SADD", "h", "-9223372036854775809"],
        ["OBJECT", "ENCODING", "h"], ["SISMEMBER", "a", "1"], ["SISMEMBER", "a", "01"], ["SREM", "a", "1"],
        ["SMEMBERS", "a"], ["SADD", "i", "5", "x"], ["OBJECT", "ENCODING", "i"], ["SADD", "j", "x", "5"],
        ["OBJECT", "ENCODING", "j"],
    ],
    "binary_members": [
        ["SADD", "b", b"\x00", b"\x00\x01", b"\xff\r\n", "", " "], ["SCARD", "b"], sorted_("SMEMBERS", "b"),
        ["SISMEMBER", "b", b"\x00"], ["SISMEMBER", "b", b"\x00\x02"], ["SREM", "b", b"\xff\r\n", ""],
        sorted_("SMEMBERS", "b"), ["SADD", "b", "x" * 5000], ["SISMEMBER", "b", "x" * 5000],
        ["SREM", "b", "x" * 4999], ["SCARD", "b"],
    ],
    "srem": [
        ["SREM", "nokey", "a"], ["SADD", "s", "a", "b", "c"], ["SREM", "s", "a", "a", "x"], ["SCARD", "s"],
        ["SREM", "s", "b", "c", "d"], ["EXISTS", "s"], ["SADD", "i", "1", "2", "3"], ["SREM", "i", "x", "01", "2"],
        ["SMEMBERS", "i"], ["SREM", "i", "1", "3", "3"], ["EXISTS", "i"], ["SREM", "i"], ["SREM"],
        ["SADD", "i", "7"], ["SREM", "i", "7", "7", "8"], ["TYPE", "i"],
    ],
    "smismember_scard": [
        ["SMISMEMBER", "nokey", "a", "b"], ["SCARD", "nokey"], ["SISMEMBER", "nokey", "a"],
        ["SADD", "s", "a", "1"], ["SMISMEMBER", "s", "a", "1", "2", "a"], ["SMISMEMBER", "s", "x"],
        ["SMISMEMBER", "s"], ["SISMEMBER", "s"], ["SISMEMBER", "s", "a", "b"], ["SCARD", "s", "x"], ["SCARD"],
    ],
    # ------------------------------------------------------------ WRONGTYPE
    "wrongtype_every_command": [
        ["SET", "str", "v"], ["SADD", "s", "1", "2"], ["SADD", "str", "x"], ["SREM", "str", "x"],
        ["SMEMBERS", "str"], ["SISMEMBER", "str", "x"], ["SMISMEMBER", "str", "x", "y"], ["SCARD", "str"],
        ["SPOP", "str"], ["SPOP", "str", "1"], ["SPOP", "str", "0"], ["SPOP", "str", "-1"],
        ["SRANDMEMBER", "str"], ["SRANDMEMBER", "str", "1"], ["SRANDMEMBER", "str", "-1"],
        ["SRANDMEMBER", "str", "0"], ["SRANDMEMBER", "str", "x"],
        ["SMOVE", "str", "s", "1"], ["SMOVE", "s", "str", "1"], ["SMOVE", "nokey", "str", "1"],
        ["SMEMBERS", "s"], ["SINTER", "s", "str"], ["SINTER", "nokey", "str"], ["SINTER", "str", "nokey"],
        ["SUNION", "s", "str"], ["SUNION", "nokey", "str"], ["SDIFF", "s", "str"], ["SDIFF", "nokey", "str"],
        ["SDIFF", "str"], ["SINTERSTORE", "d", "s", "str"], ["SUNIONSTORE", "d", "str"],
        ["SDIFFSTORE", "d", "nokey", "str"], ["EXISTS", "d"], ["SINTERCARD", "2", "s", "str"],
        ["SINTERCARD", "2", "nokey", "str"], ["SINTERCARD", "1", "str", "LIMIT", "1"], ["SSCAN", "str", "0"],
        ["SSCAN", "str", "0", "COUNT", "0"], ["SSCAN", "str", "x"], ["GET", "s"], ["APPEND", "s", "x"],
        ["INCR", "s"], ["GET", "str"],
    ],
    # ------------------------------------------------------------ SPOP/SRANDMEMBER (deterministic parts)
    "spop_errors_and_edges": [
        ["SPOP", "nokey"], ["SPOP", "nokey", "0"], ["SPOP", "nokey", "5"], ["SPOP", "nokey", "-1"],
        ["SPOP", "nokey", "abc"], ["SADD", "s", "1", "2", "3"], ["SPOP", "s", "-1"], ["SPOP", "s", "abc"],
        ["SPOP", "s", LLMIN], ["SPOP", "s", "1.5"], ["SPOP", "s", ""], ["SPOP", "s", "01"], ["SPOP", "s", "1", "2"],
        ["SPOP", "s", "0"], ["SCARD", "s"], ["SPOP", "s", "3"], ["EXISTS", "s"],
        ["SADD", "s", "5", "-3", "9"], ["SPOP", "s", LLMAX], ["EXISTS", "s"],
        ["SADD", "one", "x"], ["SPOP", "one"], ["EXISTS", "one"], ["SADD", "one", "42"], ["SPOP", "one", "1"],
        ["EXISTS", "one"], ["SADD", "h", "a", "b", "c"], sorted_("SPOP", "h", "10"), ["EXISTS", "h"], ["SPOP"],
    ],
    "srandmember_errors_and_edges": [
        ["SRANDMEMBER", "nokey"], ["SRANDMEMBER", "nokey", "0"], ["SRANDMEMBER", "nokey", "5"],
        ["SRANDMEMBER", "nokey", "-5"], ["SRANDMEMBER", "nokey", "x"], ["SRANDMEMBER", "nokey", LLMIN],
        ["SADD", "s", "10", "20", "30"], ["SRANDMEMBER", "s", LLMIN], ["SRANDMEMBER", "s", "abc"],
        ["SRANDMEMBER", "s", "1.5"], ["SRANDMEMBER", "s", "1", "2"], ["SRANDMEMBER", "s", "0"],
        ["SRANDMEMBER", "s", "3"], ["SRANDMEMBER", "s", "4"], ["SRANDMEMBER", "s", LLMAX], ["SCARD", "s"],
        ["SADD", "one", "x"], ["SRANDMEMBER", "one"], ["SRANDMEMBER", "one", "1"], ["SRANDMEMBER", "one", "-4"],
        ["SRANDMEMBER", "one", "9"], ["SADD", "h", "a", "b", "c"], sorted_("SRANDMEMBER", "h", "3"),
        sorted_("SRANDMEMBER", "h", "100"), ["SRANDMEMBER"],
    ],
    # ------------------------------------------------------------ SMOVE
    "smove": [
        ["SADD", "s", "1", "2", "3"], ["SMOVE", "nokey", "s", "1"], ["SMOVE", "s", "s", "1"],
        ["SMOVE", "s", "s", "9"], ["SMOVE", "s", "d", "1"], ["SMOVE", "s", "d", "9"], ["SMEMBERS", "d"],
        ["OBJECT", "ENCODING", "d"], ["SMOVE", "s", "d", "x"], ["SMOVE", "s", "d", "2"], ["SMEMBERS", "d"],
        ["SADD", "d", "3"], ["SMOVE", "s", "d", "3"], ["EXISTS", "s"], ["SMEMBERS", "d"],
        ["SADD", "t", "a"], ["SMOVE", "t", "n", "a"], ["EXISTS", "t"], ["OBJECT", "ENCODING", "n"],
        ["SMOVE", "d", "n", "1"], ["OBJECT", "ENCODING", "n"], sorted_("SMEMBERS", "n"),
        ["SMOVE", "s"], ["SMOVE", "a", "b", "c", "d"],
    ],
    # ------------------------------------------------------------ algebra
    "sinter_sunion_sdiff_intsets": [
        ["SADD", "a", "1", "2", "3", "4", "5"], ["SADD", "b", "4", "5", "6", "7"], ["SADD", "c", "5", "7", "9"],
        ["SINTER", "a", "b"], ["SINTER", "a", "b", "c"], ["SINTER", "b", "a"], ["SINTER", "a"],
        ["SINTER", "a", "a"], ["SINTER", "a", "nokey"], ["SINTER", "nokey", "a"], ["SINTER", "nokey"],
        ["SUNION", "a", "b"], ["SUNION", "a", "b", "c", "nokey"], ["SUNION", "nokey"], ["SUNION", "c", "c"],
        ["SDIFF", "a", "b"], ["SDIFF", "a", "b", "c"], ["SDIFF", "b", "a"], ["SDIFF", "a", "a"],
        ["SDIFF", "a", "nokey"], ["SDIFF", "nokey", "a"], ["SDIFF", "a"], ["SINTER"], ["SUNION"], ["SDIFF"],
        ["SADD", "d", "-1", LLMAX, "3"], ["SUNION", "d", "a"], ["SDIFF", "d", "a"], ["SINTER", "d", "a"],
    ],
    "sinter_sunion_sdiff_hashtables": [
        ["SADD", "a", "x", "y", "z", "1", "2"], ["SADD", "b", "y", "z", "w", "2", "3"], ["SADD", "i", "1", "2", "9"],
        sorted_("SINTER", "a", "b"), sorted_("SINTER", "a", "i"), sorted_("SINTER", "i", "a"),
        sorted_("SINTER", "a", "b", "i"), sorted_("SUNION", "a", "b"), sorted_("SUNION", "a", "i"),
        sorted_("SUNION", "i", "b", "nokey"), sorted_("SDIFF", "a", "b"), sorted_("SDIFF", "b", "a"),
        ["SDIFF", "a", "a"], sorted_("SDIFF", "a", "i"), ["SDIFF", "i", "a"], ["SDIFF", "i", "a", "b"],
        ["SINTER", "a", "b", "nokey"], sorted_("SDIFF", "a", "nokey", "i"), ["SINTERCARD", "2", "a", "b"],
        ["SINTERCARD", "3", "a", "b", "i"], ["SINTERCARD", "2", "a", "i", "LIMIT", "1"],
    ],
    "store_commands": [
        ["SADD", "a", "1", "2", "3"], ["SADD", "b", "2", "3", "4"], ["SADD", "h", "x", "2"],
        ["SINTERSTORE", "d", "a", "b"], ["SMEMBERS", "d"], ["OBJECT", "ENCODING", "d"],
        ["SUNIONSTORE", "d", "a", "b"], ["SMEMBERS", "d"], ["SDIFFSTORE", "d", "a", "b"], ["SMEMBERS", "d"],
        ["SUNIONSTORE", "d", "a", "h"], ["OBJECT", "ENCODING", "d"], sorted_("SMEMBERS", "d"),
        ["SINTERSTORE", "d", "a", "h"], ["OBJECT", "ENCODING", "d"], ["SMEMBERS", "d"],
        ["SINTERSTORE", "d", "a", "nokey"], ["EXISTS", "d"], ["SINTERSTORE", "d", "a", "nokey"],
        ["SDIFFSTORE", "a", "a", "b"], ["SMEMBERS", "a"], ["SUNIONSTORE", "a", "a", "b"], ["SMEMBERS", "a"],
        ["SDIFFSTORE", "e", "nokey", "a"], ["EXISTS", "e"], ["SUNIONSTORE", "e", "nokey"], ["EXISTS", "e"],
        ["SINTERSTORE", "e"], ["SINTERSTORE", "e", "a", "a"], ["SMEMBERS", "e"], ["SDIFFSTORE", "e", "e"],
        ["SMEMBERS", "e"], ["SDIFFSTORE", "e", "e", "e"], ["EXISTS", "e"],
    ],
    "store_over_other_types_and_ttl": [
        ["SADD", "a", "1", "2"], ["SADD", "b", "2", "3"], ["SET", "dst", "string"],
        ["SINTERSTORE", "dst", "a", "b"], ["TYPE", "dst"], ["SMEMBERS", "dst"],
        ["SET", "dst", "v", "EX", "1000"], ["SUNIONSTORE", "dst", "a", "b"], ["TTL", "dst"], ["TYPE", "dst"],
        ["SMEMBERS", "dst"], ["EXPIRE", "dst", "1000"], ["SDIFFSTORE", "dst", "a", "b"], ["TTL", "dst"],
        ["SET", "dst", "v"], ["SINTERSTORE", "dst", "a", "nokey"], ["EXISTS", "dst"],
        ["SET", "dst", "v"], ["SDIFFSTORE", "dst", "a", "a"], ["EXISTS", "dst"],
        ["SET", "dst", "v"], ["SUNIONSTORE", "dst", "nokey"], ["EXISTS", "dst"],
        ["SET", "src", "v"], ["SUNIONSTORE", "dst", "a", "src"], ["EXISTS", "dst"],
        ["SADD", "x", "1"], ["EXPIRE", "x", "1000"], ["SADD", "x", "2"], approx("TTL", "x"), ["SREM", "x", "1"],
        approx("TTL", "x"), ["SPOP", "x", "0"], approx("TTL", "x"), ["SADD", "x", "3", "4", "5", "6"],
        ["SMOVE", "x", "y", "3"], ["TTL", "y"], approx("TTL", "x"),
        ["SINTERSTORE", "x", "x"], ["TTL", "x"],
    ],
    "sintercard": [
        ["SADD", "s", "1", "2", "3"], ["SADD", "t", "2", "3", "4"], ["SINTERCARD", "1", "s"],
        ["SINTERCARD", "2", "s", "t"], ["SINTERCARD", "2", "s", "nokey"], ["SINTERCARD", "1", "nokey"],
        ["SINTERCARD", "0", "s"], ["SINTERCARD", "-1", "s"], ["SINTERCARD", "abc", "s"], ["SINTERCARD", "", "s"],
        ["SINTERCARD", "3", "s", "t"], ["SINTERCARD", LLMAX, "s"], ["SINTERCARD", "2147483648", "s"],
        ["SINTERCARD", LLMIN, "s"], ["SINTERCARD", "1", "s", "LIMIT"], ["SINTERCARD", "1", "s", "LIMIT", "-1"],
        ["SINTERCARD", "1", "s", "LIMIT", "abc"], ["SINTERCARD", "1", "s", "LIMIT", "1"],
        ["SINTERCARD", "1", "s", "LIMIT", "0"], ["SINTERCARD", "1", "s", "limit", "2"],
        ["SINTERCARD", "1", "s", "LIMIT", LLMAX], ["SINTERCARD", "1", "s", "FOO", "1"],
        ["SINTERCARD", "1", "s", "LIMIT", "1", "LIMIT", "2"], ["SINTERCARD", "1", "nokey", "LIMIT", "-1"],
        ["SINTERCARD", "1", "s", "t"], ["SINTERCARD", "2", "s", "s", "LIMIT", "2"], ["SINTERCARD", "1"],
        ["SINTERCARD", "2", "s"],
    ],
    # ------------------------------------------------------------ SSCAN (intset: exact)
    "sscan_intset_and_errors": [
        ["SSCAN", "nokey", "0"], ["SSCAN", "nokey", "0", "COUNT", "0"], ["SSCAN", "nokey", "abc"],
        ["SADD", "s", "1", "2", "3", "10", "11", "-5"], ["SSCAN", "s", "0"], ["SSCAN", "s", "7"],
        ["SSCAN", "s", "-1"], ["SSCAN", "s", ""], ["SSCAN", "s", "abc"], ["SSCAN", "s", " 1"],
        ["SSCAN", "s", "18446744073709551615"], ["SSCAN", "s", "18446744073709551616"],
        ["SSCAN", "s", "0", "COUNT", "1"], ["SSCAN", "s", "0", "COUNT", "0"], ["SSCAN", "s", "0", "COUNT", "-1"],
        ["SSCAN", "s", "0", "COUNT", "x"], ["SSCAN", "s", "0", "MATCH", "1*"], ["SSCAN", "s", "0", "MATCH", "*"],
        ["SSCAN", "s", "0", "match", "-*", "count", "100"], ["SSCAN", "s", "0", "MATCH"],
        ["SSCAN", "s", "0", "TYPE", "set"], ["SSCAN", "s", "0", "FOO", "bar"], ["SSCAN", "s", "0", "COUNT"],
        ["SSCAN", "s", "0", "MATCH", "[0-1]", "MATCH", "?"], ["SSCAN", "s"], ["SSCAN"],
    ],
    # ------------------------------------------------------------ encodings
    "encoding_conversions": [
        ["CONFIG", "SET", "set-max-intset-entries", "4"], ["SADD", "t", "1", "2", "3", "4"],
        ["OBJECT", "ENCODING", "t"], ["SADD", "t", "4"], ["OBJECT", "ENCODING", "t"], ["SADD", "t", "5"],
        ["OBJECT", "ENCODING", "t"], ["SREM", "t", "5", "4", "3"], ["OBJECT", "ENCODING", "t"],
        sorted_("SMEMBERS", "t"), ["SADD", "u", "1", "2", "3", "4", "5"], ["OBJECT", "ENCODING", "u"],
        ["CONFIG", "SET", "set-max-intset-entries", "0"], ["SADD", "z", "1"], ["OBJECT", "ENCODING", "z"],
        ["CONFIG", "SET", "set-max-intset-entries", "512"], ["SADD", "big"] + ints(0, 512),
        ["OBJECT", "ENCODING", "big"], ["SADD", "big", "512"], ["OBJECT", "ENCODING", "big"], ["SCARD", "big"],
        ["SADD", "big2"] + ints(0, 600), ["OBJECT", "ENCODING", "big2"], ["SINTERCARD", "2", "big", "big2"],
        ["SINTERCARD", "2", "big", "big2", "LIMIT", "100"], ["SINTERSTORE", "d", "big", "big2"],
        ["OBJECT", "ENCODING", "d"], ["SDIFFSTORE", "d", "big2", "big"], ["OBJECT", "ENCODING", "d"],
        ["SMEMBERS", "d"], ["SDIFF", "big2", "big"], ["SUNIONSTORE", "d", "big"], ["OBJECT", "ENCODING", "d"],
        sorted_("SINTER", "big", "t"), ["SADD", "s", "1"], ["SADD", "s", "x"], ["OBJECT", "ENCODING", "s"],
    ],
    "store_encodings_follow_redis_algorithms": [
        ["SADD", "s0", "a", "b", "c", "1", "2", "3", "4", "5", "6", "7"], ["SADD", "s1", "a", "b"],
        ["SADD", "s2", "c"], ["SADD", "s3", "a", "b", "c"],
        ["SDIFFSTORE", "d", "s0", "s1", "s2"], ["OBJECT", "ENCODING", "d"], sorted_("SMEMBERS", "d"),
        ["SDIFFSTORE", "d", "s0", "s1", "s2", "nokey"], ["OBJECT", "ENCODING", "d"],
        ["SDIFFSTORE", "d", "s0", "s3"], ["OBJECT", "ENCODING", "d"], ["SMEMBERS", "d"],
        ["SDIFF", "s0", "s3"], sorted_("SDIFF", "s0", "s1", "s2"),
        ["CONFIG", "SET", "set-max-intset-entries", "4"], ["SADD", "h"] + ints(1, 11),
        ["SREM", "h"] + ints(3, 11), ["OBJECT", "ENCODING", "h"], ["SINTERSTORE", "x", "h"],
        ["OBJECT", "ENCODING", "x"], ["SMEMBERS", "x"], ["SUNIONSTORE", "y", "h"], ["OBJECT", "ENCODING", "y"],
        ["SDIFFSTORE", "z", "h"], ["OBJECT", "ENCODING", "z"], ["SUNION", "h"], ["SDIFF", "h"],
        ["COPY", "h", "hc"], ["OBJECT", "ENCODING", "hc"], sorted_("SMEMBERS", "hc"),
        ["SADD", "k"] + ints(1, 9), ["SUNIONSTORE", "u", "k"], ["OBJECT", "ENCODING", "u"],
        ["SINTERSTORE", "u", "k", "h"], ["OBJECT", "ENCODING", "u"], ["SMEMBERS", "u"],
    ],
    "config_threshold_applies_to_new_conversions": [
        ["SADD", "a"] + ints(0, 10), ["CONFIG", "SET", "set-max-intset-entries", "5"],
        ["OBJECT", "ENCODING", "a"], ["SADD", "a", "3"], ["OBJECT", "ENCODING", "a"], ["SADD", "a", "100"],
        ["OBJECT", "ENCODING", "a"], ["CONFIG", "GET", "set-max-intset-entries"],
        ["CONFIG", "SET", "set-max-intset-entries", "512"], ["SADD", "b"] + ints(0, 10),
        ["OBJECT", "ENCODING", "b"], ["SREM", "a", "100"], ["OBJECT", "ENCODING", "a"],
    ],
    "keyspace_commands_on_sets": [
        ["SADD", "s", "1", "2", "3"], ["SADD", "h", "a", "b"], ["COPY", "s", "c"], ["SADD", "s", "4"],
        ["SMEMBERS", "c"], ["OBJECT", "ENCODING", "c"], ["COPY", "h", "hc"], ["SADD", "h", "z"],
        sorted_("SMEMBERS", "hc"), ["OBJECT", "ENCODING", "hc"], ["RENAME", "s", "r"], ["SMEMBERS", "r"],
        ["EXISTS", "s"], ["MOVE", "r", "1"], ["SELECT", "1"], ["SMEMBERS", "r"], ["FLUSHDB"], ["SELECT", "0"],
        ["DEL", "h", "hc", "c"], ["DBSIZE"], ["SADD", "e", "1"], ["PEXPIRE", "e", "1"], sleep(0.05),
        ["SCARD", "e"], ["SMEMBERS", "e"], ["EXISTS", "e"], ["SADD", "e", "x"], ["TTL", "e"],
        ["UNLINK", "e"], ["TYPE", "e"],
    ],
    # ------------------------------------------------------------ protocol and transactions
    "resp3_reply_types": [
        hello("3"), ["SMEMBERS", "nokey"], ["SADD", "s", "3", "1", "2"], ["SMEMBERS", "s"],
        ["SINTER", "s", "s"], ["SINTER", "s", "nokey"], ["SUNION", "s", "nokey"], ["SDIFF", "s", "nokey"],
        ["SPOP", "nokey"], ["SPOP", "nokey", "1"], ["SPOP", "s", "0"], ["SRANDMEMBER", "nokey"],
        ["SRANDMEMBER", "nokey", "1"], ["SRANDMEMBER", "s", "0"], ["SRANDMEMBER", "s", "5"],
        ["SMISMEMBER", "s", "1", "x"], ["SISMEMBER", "s", "1"], ["SSCAN", "s", "0"], ["SSCAN", "nokey", "0"],
        ["SINTERCARD", "1", "s"], ["SPOP", "s", "3"], ["EXISTS", "s"], ["SADD", "t", "a", "b"],
        sorted_("SMEMBERS", "t"), sorted_("SUNION", "t"), ["SPOP", "t", "0"],
    ],
    "multi_exec": [
        ["MULTI"], ["SADD", "s", "3", "1", "2"], ["SMEMBERS", "s"], ["SPOP", "s", "10"], ["SADD", "s", "x"],
        ["SREM", "s", "x"], ["SCARD", "s"], ["EXEC"], ["MULTI"], ["SADD", "s"], ["EXEC"],
        ["SET", "str", "v"], ["MULTI"], ["SADD", "str", "1"], ["SADD", "t", "1"], ["EXEC"], ["SMEMBERS", "t"],
    ],
    "watch_touched_only_by_changes": [
        ["SADD", "s", "a", "b"], ["WATCH", "s"], cmd("SADD", "s", "a", conn=1), cmd("SREM", "s", "zz", conn=1),
        cmd("SMOVE", "s", "d", "zz", conn=1), cmd("SINTERSTORE", "s2", "s", "nokey", conn=1), ["MULTI"],
        ["PING"], ["EXEC"], ["WATCH", "s"], cmd("SADD", "s", "c", conn=1), ["MULTI"], ["PING"], ["EXEC"],
        ["WATCH", "s"], cmd("SREM", "s", "c", conn=1), ["MULTI"], ["PING"], ["EXEC"],
        ["WATCH", "d"], cmd("SMOVE", "s", "d", "a", conn=1), ["MULTI"], ["PING"], ["EXEC"],
        ["WATCH", "x"], cmd("SUNIONSTORE", "x", "s", conn=1), ["MULTI"], ["PING"], ["EXEC"],
        ["WATCH", "s"], cmd("SPOP", "s", "0", conn=1), ["MULTI"], ["PING"], ["EXEC"],
        ["WATCH", "s"], cmd("SPOP", "s", conn=1), ["MULTI"], ["PING"], ["EXEC"],
    ],
}


# ====================================================================== fixtures


def _reset(pair):
    """Default intset threshold on both servers (cases change it)."""
    for srv in pair:
        with srv.client() as c:
            assert c.command("CONFIG", "SET", "set-max-intset-entries", "512") == b"+OK\r\n"


@pytest.mark.parametrize("name", sorted(CASES))
def test_sets(pair, name):
    f, r = pair
    _reset(pair)
    try:
        mismatches, transcript = run_steps(f.port, r.port, CASES[name])
    finally:
        _reset(pair)
    assert not mismatches, format_report(name, mismatches, transcript)
    assert len([t for t in transcript if t[0] != "final"]) == len([s for s in CASES[name]
                                                                   if getattr(s, "kind", "cmd") != "sleep"])


def test_command_info_matches_redis(pair):
    """Arity, flags, key positions and ACL categories as COMMAND INFO reports
    them (ferry leaves tips and key specs empty, so those are not compared)."""
    names = ["sadd", "srem", "smembers", "sismember", "smismember", "scard", "spop", "srandmember", "smove",
             "sinter", "sintercard", "sinterstore", "sunion", "sunionstore", "sdiff", "sdiffstore", "sscan"]
    got = []
    for srv in pair:
        with srv.client() as c:
            v = parse(c.command("COMMAND", "INFO", *names))
        rows = []
        for item in v[1]:
            f = item[1]
            flags = sorted(x[1] for x in f[2][1])
            acl = sorted(x[1] for x in f[6][1])
            rows.append((f[0][1], f[1][1], flags, f[3][1], f[4][1], f[5][1], acl))
        got.append(rows)
    assert got[0] == got[1]


# ====================================================================== random members
def _members(client, key):
    v = parse(client.command("SMEMBERS", key))
    assert v[0] in ("array", "set"), v
    return [x[1] for x in v[1]]


def check_random_reply(args, reply, members, resp3=False):
    """Invariants of an SPOP/SRANDMEMBER reply given the set's members before
    the command (Redis's replies are random, so only these are fixed).
    Returns the list of returned members."""
    v = parse(reply)
    has_count = len(args) == 3
    size = len(members)
    if not has_count:
        assert v[0] == "bulk" and v[1] in members, (args, reply)
        return [v[1]]
    count = int(args[2])
    is_spop = args[0].upper() == "SPOP"
    want_tag = "set" if (is_spop and resp3) else "array"
    assert v[0] == want_tag, (args, reply)
    got = [x[1] for x in v[1]]
    assert all(x in members for x in got), (args, got, members)
    if count >= 0:
        assert len(got) == min(count, size), (args, len(got), size)
        assert len(set(got)) == len(got), (args, got)
    else:
        assert len(got) == -count, (args, len(got))
    return got


SETUPS = {
    "intset": ["SADD", "k"] + ints(0, 40),
    "intset_wide": ["SADD", "k", LLMIN, "-70000", "0", "5", "70000", LLMAX, "2147483648"],
    "hashtable_small": ["SADD", "k"] + ["m%d" % i for i in range(12)],
    "hashtable_large": ["SADD", "k"] + ["m%d" % i for i in range(700)],
    "hashtable_ints": ["SADD", "k"] + ints(0, 600),
    "single": ["SADD", "k", "only"],
}
COUNTS = ["1", "2", "3", "5", "11", "12", "13", "39", "40", "41", "100", "699", "700", "1000", "-1", "-2",
          "-12", "-50", "-2000", "0"]


@pytest.mark.parametrize("setup", sorted(SETUPS))
@pytest.mark.parametrize("resp3", [False, True])
def test_random_members(pair, setup, resp3):
    f, r = pair
    _reset(pair)
    with f.client() as fc, r.client() as rc:
        for c in (fc, rc):
            if resp3:
                c.command("HELLO", "3")
        for count in [None] + COUNTS:
            for c in (fc, rc):
                c.command("DEL", "k")
                c.command(*SETUPS[setup])
            enc = fc.command("OBJECT", "ENCODING", "k")
            assert enc == rc.command("OBJECT", "ENCODING", "k")
            members = _members(fc, "k")
            assert sorted(members) == sorted(_members(rc, "k"))
            tail = [] if count is None else [count]
            # SRANDMEMBER: read-only; both servers obey the same invariants
            for _ in range(3):
                args = ["SRANDMEMBER", "k"] + tail
                for c in (fc, rc):
                    check_random_reply(args, c.command(*args), members, resp3)
            assert sorted(_members(fc, "k")) == sorted(members)
            # distribution sanity: picks over many calls cover the set
            if count in (None, "1", "-1") and len(members) <= 40:
                seen = set()
                for _ in range(40 * len(members)):
                    seen.update(check_random_reply(args, fc.command(*args), members, resp3))
                assert seen == set(members), "SRANDMEMBER %s never returned %r" % (
                    tail, set(members) - seen)
            # SPOP: the popped members leave, the rest stay
            args = ["SPOP", "k"] + tail
            if count is not None and int(count) < 0:
                assert fc.command(*args) == rc.command(*args)   # error
                continue
            popped = check_random_reply(args, fc.command(*args), members, resp3)
            check_random_reply(args, rc.command(*args), members, resp3)
            left = sorted(set(members) - set(popped))
            exists = fc.command("EXISTS", "k")
            assert exists == (b":1\r\n" if left else b":0\r\n")
            if left:
                assert sorted(_members(fc, "k")) == left
                # all-integer or all-string sets: the encoding after SPOP does not depend on which
                # members are left
                assert fc.command("OBJECT", "ENCODING", "k") == rc.command("OBJECT", "ENCODING", "k")
            assert fc.command("SCARD", "k") == rc.command("SCARD", "k")


SPOP_ENCODING_CASES = [
    # (threshold, members, count). Redis pops one by one while 5 * left >
    # count (the encoding stays), else it moves the few members left to a
    # new set (an intset again if they are all integers and not too many).
    ("4", ints(1, 11), "8"),                                  # 2 left, popped one by one: hashtable stays
    ("4", ints(1, 11), "9"),                                  # 1 left, moved: intset
    ("4", ints(1, 21), "16"),                                 # 4 left, one by one: hashtable
    ("4", ints(1, 21), "17"),                                 # 3 left, moved: intset
    ("4", ints(1, 31), "25"),                                 # 5 left, moved, > threshold: hashtable
    ("512", ints(1, 21), "15"),                               # intset stays intset
    ("512", ["a", "b", "c", "d", "e", "f", "1", "2"], "7"),   # 1 left, moved: depends on which (random)
    ("512", ["a", "b", "c", "d", "e", "f", "g", "h", "i", "j", "k", "1"], "11"),
    ("4", ints(1, 11), "1"),
    ("512", ints(1, 21), "2"),
]


@pytest.mark.parametrize("case", range(len(SPOP_ENCODING_CASES)))
def test_spop_encoding_and_ttl(pair, case):
    """After SPOP with a count (either of Redis's strategies), OBJECT
    ENCODING, SCARD and the TTL are the same on both servers. Where the
    encoding depends on which members are left, SPOP is retried until an
    integer is left, on both servers."""
    threshold, members, count = SPOP_ENCODING_CASES[case]
    out = []
    for srv in pair:
        with srv.client() as c:
            for attempt in range(200):
                c.command("FLUSHALL")
                c.command("CONFIG", "SET", "set-max-intset-entries", threshold)
                c.command("SADD", "s", *members)
                c.command("EXPIRE", "s", "1000")
                enc = c.command("OBJECT", "ENCODING", "s")
                popped = check_random_reply(["SPOP", "s", count], c.command("SPOP", "s", count),
                                            [m.encode() for m in members])
                left = sorted(_members(c, "s"))
                assert left == sorted(set(m.encode() for m in members) - set(popped))
                # mixed members: retry until an integer is left (it may come back as an intset)
                if all(m.isdigit() for m in members) or any(x.isdigit() for x in left):
                    break
            out.append((enc, c.command("OBJECT", "ENCODING", "s"), c.command("SCARD", "s"),
                        int(parse(c.command("TTL", "s"))[1]) > 990, all(x.isdigit() for x in left)))
            c.command("CONFIG", "SET", "set-max-intset-entries", "512")
    assert out[0] == out[1]


def test_spop_all_members_eventually(pair):
    """Repeated SPOP 1 on a fresh 10-member set: every member comes first
    at some point (the pick is not stuck on one bucket or position)."""
    f, _ = pair
    with f.client() as c:
        for kind, members in (("intset", ints(0, 10)), ("hashtable", ["h%d" % i for i in range(10)])):
            firsts = set()
            for _ in range(400):
                c.command("DEL", "k")
                c.command("SADD", "k", *members)
                firsts.add(parse(c.command("SPOP", "k"))[1])
            assert firsts == {m.encode() for m in members}, kind


# ====================================================================== SSCAN on hashtables
def _sscan_all(client, key, *opts):
    cursor, seen, calls = b"0", [], 0
    while True:
        v = parse(client.command("SSCAN", key, cursor, *opts))
        cursor = v[1][0][1]
        seen.extend(x[1] for x in v[1][1][1])
        calls += 1
        if cursor == b"0" or calls > 100000:
            return sorted(set(seen)), calls


@pytest.mark.parametrize("opts", [(), ("COUNT", "1"), ("COUNT", "7"), ("COUNT", "1000"), ("MATCH", "m1*"),
                                  ("MATCH", "*9", "COUNT", "3"), ("MATCH", "nomatch*")])
def test_sscan_full_iteration(pair, opts):
    f, r = pair
    _reset(pair)
    members = ["m%d" % i for i in range(300)] + ints(0, 300)
    with f.client() as fc, r.client() as rc:
        for c in (fc, rc):
            c.command("DEL", "k")
            c.command("SADD", "k", *members)
            assert c.command("OBJECT", "ENCODING", "k") == b"$9\r\nhashtable\r\n"
        fs, calls = _sscan_all(fc, "k", *opts)
        rs, _ = _sscan_all(rc, "k", *opts)
        assert fs == rs
        if opts == ("COUNT", "1"):
            assert calls > 100      # really incremental


def test_sscan_guarantee_under_changes(pair):
    """Members present for the whole iteration are returned even while other
    members are added and removed (the set grows and shrinks) between calls."""
    f, _ = pair
    stable = ["s%d" % i for i in range(200)]
    with f.client() as c:
        c.command("DEL", "k")
        c.command("SADD", "k", *stable)
        cursor, seen, step = b"0", set(), 0
        while True:
            v = parse(c.command("SSCAN", "k", cursor, "COUNT", "5"))
            cursor = v[1][0][1]
            seen.update(x[1] for x in v[1][1][1])
            step += 1
            if step % 2:
                c.command("SADD", "k", *["t%d_%d" % (step, i) for i in range(50)])
            else:
                c.command("SREM", "k", *["t%d_%d" % (step - 1, i) for i in range(50)])
            if cursor == b"0":
                break
        assert {s.encode() for s in stable} <= seen


# ====================================================================== random programs
SET_KEYS = ["s1", "s2", "s3", "s4", "str"]
MEMBERS = ints(-3, 25) + ["100000", "-70000", LLMAX, LLMIN, "a", "b", "c", "d", "e", "007", "-0", "",
                          "1.5", "x" * 30, b"\x00z"]
THRESHOLDS = {1: "4", 2: "16", 3: "512", 4: "8"}
RANDOM_COMMANDS = 1000


def gen_command(r: random.Random):
    """(mode, args): mode exact | sorted | approx | sscan | spop | srand."""
    k = lambda: r.choice(SET_KEYS)                                   # noqa: E731
    m = lambda: r.choice(MEMBERS)                                    # noqa: E731
    ms = lambda lo=1, hi=6: [m() for _ in range(r.randint(lo, hi))]  # noqa: E731
    ks = lambda lo=1, hi=4: [k() for _ in range(r.randint(lo, hi))]  # noqa: E731
    cnt = lambda: r.choice(["0", "1", "2", "3", "5", "8", "40", "-1", "-3", "-9", "abc", LLMIN])  # noqa: E731
    ops = [
        (14, lambda: ("exact", ["SADD", k()] + ms())),
        (6, lambda: ("exact", ["SREM", k()] + ms())),
        (4, lambda: ("sorted", ["SMEMBERS", k()])),
        (4, lambda: ("exact", ["SISMEMBER", k(), m()])),
        (2, lambda: ("exact", ["SMISMEMBER", k()] + ms())),
        (4, lambda: ("exact", ["SCARD", k()])),
        (4, lambda: ("spop", ["SPOP", k()] + r.choice([[], [cnt()]]))),
        (4, lambda: ("srand", ["SRANDMEMBER", k()] + r.choice([[], [cnt()]]))),
        (3, lambda: ("exact", ["SMOVE", k(), k(), m()])),
        (3, lambda: ("sorted", [r.choice(["SINTER", "SUNION", "SDIFF"])] + ks())),
        (4, lambda: ("exact", [r.choice(["SINTERSTORE", "SUNIONSTORE", "SDIFFSTORE"]), k()] + ks())),
        (2, lambda: ("exact", ["SINTERCARD", str(r.randint(1, 3))] + ks(3, 3)
                     + r.choice([[], ["LIMIT", r.choice(["0", "1", "2", "-1"])]]))),
        (2, lambda: ("sscan", ["SSCAN", k(), "0", "COUNT", "1000"]
                     + r.choice([[], ["MATCH", r.choice(["1*", "*a*", "?", "-*"])]]))),
        (4, lambda: ("exact", ["OBJECT", "ENCODING", k()])),
        (3, lambda: ("exact", ["SET", k(), m()])),
        (2, lambda: ("exact", ["GET", k()])),
        (1, lambda: ("exact", ["APPEND", k(), "x"])),
        (2, lambda: ("exact", ["DEL"] + ks(1, 2))),
        (1, lambda: ("exact", ["TYPE", k()])),
        (1, lambda: ("exact", ["EXISTS", k()])),
        (1, lambda: ("exact", ["EXPIRE", k(), "1000"])),
        (1, lambda: ("approx", ["TTL", k()])),
        (1, lambda: ("exact", ["COPY", k(), k(), "REPLACE"])),
        (1, lambda: ("exact", ["RENAME", k(), k()])),
    ]
    return pick_weighted(r, ops)()


def gen_program(seed: int, n: int = RANDOM_COMMANDS):
    r = random.Random(seed)
    return [gen_command(r) for _ in range(n)]


def _is_plain_reply(v):
    """Error, null or empty aggregate: deterministic on both servers."""
    return v[0] in ("error", "null", "int") or v[1] is None or (v[0] in ("array", "set") and not v[1])


def _run_random_step(fc, rc, mode, args):
    """Run one random-program step; returns None or a mismatch text."""
    if mode == "spop":
        fr = fc.command(*args)
        fv = parse(fr)
        if _is_plain_reply(fv):
            rr = rc.command(*args)
            return None if fr == rr else "ferry %r redis %r" % (fr, rr)
        members = _members(rc, args[1])
        popped = check_random_reply(args, fr, members)
        srem = rc.command("SREM", args[1], *popped)          # keep redis in step with ferry
        if srem != b":%d\r\n" % len(popped):
            return "redis SREM of popped answered %r" % srem
        left = len(members) - len(popped)
        if len(args) == 3 and left and 5 * left <= len(popped):
            # Redis moves the few members left to a new set (see test_spop_encoding_and_ttl):
            # do the same to redis's copy, keeping the TTL
            rest = _members(rc, args[1])
            when = rc.command("PEXPIRETIME", args[1])
            rc.command("DEL", args[1])
            rc.command("SADD", args[1], *rest)
            if when != b":-1\r\n":
                rc.command("PEXPIREAT", args[1], when[1:-2])
        return None
    fr, rr = fc.command(*args), rc.command(*args)
    if mode == "exact":
        return None if fr == rr else "ferry %r redis %r" % (fr, rr)
    if mode == "sorted":
        return None if replies_equal(sorted_(*args), fr, rr) else "ferry %r redis %r" % (fr, rr)
    if mode == "approx":     # a relative TTL read at slightly different times
        return None if replies_equal(approx(*args, tol=1), fr, rr) else "ferry %r redis %r" % (fr, rr)
    if mode == "sscan":
        fv, rv = parse(fr), parse(rr)
        if fv[0] != "array" or rv[0] != "array":
            return None if fr == rr else "ferry %r redis %r" % (fr, rr)
        same = fv[1][0] == rv[1][0] and sorted(map(repr, fv[1][1][1])) == sorted(map(repr, rv[1][1][1]))
        return None if same else "ferry %r redis %r" % (fr, rr)
    # srand
    fv, rv = parse(fr), parse(rr)
    if _is_plain_reply(fv) or _is_plain_reply(rv):
        return None if fr == rr else "ferry %r redis %r" % (fr, rr)
    members = _members(rc, args[1])
    check_random_reply(args, fr, members)
    check_random_reply(args, rr, members)
    return None


def test_random_program_is_reproducible():
    assert gen_program(7, 200) == gen_program(7, 200)
    assert len({repr(c) for c in gen_program(7, 200)}) > 100


@pytest.mark.parametrize("seed", sorted(THRESHOLDS))
def test_random_program(pair, seed):
    f, r = pair
    program = gen_program(seed)
    log = []
    with f.client() as fc, r.client() as rc:
        for c in (fc, rc):
            c.command("FLUSHALL")
            c.command("CONFIG", "SET", "set-max-intset-entries", THRESHOLDS[seed])
        try:
            for i, (mode, args) in enumerate(program):
                try:
                    err = _run_random_step(fc, rc, mode, args)
                except AssertionError as e:
                    err = "invariant: %s" % e
                log.append("#%d %s %s" % (i, mode, args))
                if err:
                    pytest.fail("random program seed=%d (threshold %s), step #%d %s %r: %s\nbefore:\n%s"
                                % (seed, THRESHOLDS[seed], i, mode, args, err, "\n".join(log[-10:-1])),
                                pytrace=False)
            # the keyspaces ended identical
            for key in SET_KEYS:
                t = fc.command("TYPE", key)
                assert t == rc.command("TYPE", key)
                if t == b"+set\r\n":
                    assert sorted(_members(fc, key)) == sorted(_members(rc, key))
                    assert fc.command("OBJECT", "ENCODING", key) == rc.command("OBJECT", "ENCODING", key)
        finally:
            _reset(pair)


def _hits_misses(srv):
    with srv.client() as c:
        raw = c.command("INFO", "stats")
    stats = dict(line.split(b":", 1) for line in raw.split(b"\r\n") if b":" in line)
    return int(stats[b"keyspace_hits"]), int(stats[b"keyspace_misses"])


@pytest.mark.parametrize("steps", [
    [["SADD", "s", "1"], ["SADD", "no2", "1"], ["SREM", "s", "x"], ["SREM", "no", "x"]],
    [["SMEMBERS", "s"], ["SMEMBERS", "no"], ["SISMEMBER", "s", "1"], ["SISMEMBER", "no", "1"],
     ["SMISMEMBER", "no", "1"], ["SCARD", "s"], ["SCARD", "no"]],
    [["SPOP", "no"], ["SPOP", "no", "1"], ["SRANDMEMBER", "no"], ["SRANDMEMBER", "no", "2"],
     ["SRANDMEMBER", "s", "5"], ["SPOP", "s", "5"]],
    [["SMOVE", "no", "s", "1"], ["SMOVE", "s", "no", "zz"]],
    [["SINTER", "s", "no"], ["SUNION", "s", "no"], ["SDIFF", "no", "s"], ["SINTERCARD", "2", "s", "no"]],
    [["SINTERSTORE", "d", "s", "no"], ["SUNIONSTORE", "d", "s", "no"], ["SDIFFSTORE", "d", "no", "s"]],
    [["SSCAN", "s", "0"], ["SSCAN", "no", "0"]],
], ids=["write", "read", "random", "smove", "algebra", "store", "sscan"])
def test_keyspace_hit_miss_accounting(pair, steps):
    """The same commands count keyspace hits and misses (read lookups) as in
    Redis: the INFO counters move by the same amounts on both servers."""
    f, r = pair
    for srv in pair:
        with srv.client() as c:
            c.command("FLUSHALL")
            c.command("SADD", "s", "1", "2", "3")
    before = [_hits_misses(s) for s in pair]
    mismatches, transcript = run_steps(f.port, r.port, steps, flush=False)
    assert not mismatches, format_report("hit_miss", mismatches, transcript)
    after = [_hits_misses(s) for s in pair]
    deltas = [(a[0] - b[0], a[1] - b[1]) for a, b in zip(after, before)]
    assert deltas[0] == deltas[1], "ferry (hits, misses) delta %r, redis %r" % tuple(deltas)
