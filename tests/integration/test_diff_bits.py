"""Differential tests for the bitmap commands (src/commands/cmd_bitops.c):
SETBIT, GETBIT, BITCOUNT, BITPOS, BITOP, BITFIELD and BITFIELD_RO.

Every case runs on a fresh keyspace on both ferry and the reference
redis-server 7.0 and every reply is compared byte for byte (diffkit.py):
offsets at byte and word boundaries, huge offsets and the proto-max-bulk-len
limit, negative ranges, BIT vs BYTE units, integer-encoded strings, every
BITFIELD type width at its boundaries with each overflow mode, `#` offsets,
errors and their order, MULTI/EXEC and WATCH. Then the dirty counter
(what is propagated), keyspace notifications, and seeded random programs
mixing the bit commands with the string commands that edit the same values.
"""
from __future__ import annotations

import random

import pytest

from diffkit import cmd, flushall, format_report, hello, pick_weighted, run_steps
from notifykit import compare

LLMAX = "9223372036854775807"
LLMIN = "-9223372036854775808"
ULLMAX = "18446744073709551615"
BITS_ERR_LIMIT = str(512 * 1024 * 1024 * 8)         # first bit offset past 512 MB


def _bitfield_boundaries(t, bits):
    """SET / GET / INCRBY of a type at its limits under each overflow mode."""
    signed = t == "i"
    hi = (1 << (bits - 1)) - 1 if signed else (1 << bits) - 1
    lo = -(1 << (bits - 1)) if signed else 0
    ty = "%s%d" % (t, bits)
    vals = [hi, lo, hi + 1, lo - 1, 0, 1, -1, hi * 2 + 3]
    steps = []
    for mode in ("WRAP", "SAT", "FAIL"):
        steps.append(["DEL", "bf"])
        for v in vals:
            if -(1 << 63) <= v < (1 << 63):
                steps.append(["BITFIELD", "bf", "OVERFLOW", mode, "SET", ty, "3", str(v), "GET", ty, "3"])
        steps += [["BITFIELD", "bf", "OVERFLOW", mode, "SET", ty, "0", str(hi if hi < (1 << 63) else 0)],
                  ["BITFIELD", "bf", "OVERFLOW", mode, "INCRBY", ty, "0", "1", "GET", ty, "0"],
                  ["BITFIELD", "bf", "OVERFLOW", mode, "INCRBY", ty, "0", "-1", "INCRBY", ty, "0", LLMAX],
                  ["BITFIELD", "bf", "OVERFLOW", mode, "SET", ty, "0", str(lo)],
                  ["BITFIELD", "bf", "OVERFLOW", mode, "INCRBY", ty, "0", "-1", "GET", ty, "0"],
                  ["BITFIELD", "bf", "OVERFLOW", mode, "INCRBY", ty, "0", LLMIN, "INCRBY", ty, "0", LLMAX],
                  ["BITFIELD", "bf", "OVERFLOW", mode, "SET", ty, "7", LLMIN, "SET", ty, "7", LLMAX],
                  ["BITFIELD", "bf", "OVERFLOW", mode, "INCRBY", ty, "7", "0", "INCRBY", ty, "7", "2"],
                  ["GET", "bf"], ["STRLEN", "bf"]]
    return steps


CASES = {
    # ------------------------------------------------------------ SETBIT/GETBIT
    "setbit_getbit_basic": [
        ["SETBIT", "k", "0", "1"], ["GET", "k"], ["SETBIT", "k", "7", "1"], ["GET", "k"],
        ["SETBIT", "k", "0", "0"], ["GET", "k"], ["GETBIT", "k", "7"], ["GETBIT", "k", "6"],
        ["GETBIT", "k", "8"], ["GETBIT", "k", "100000"], ["GETBIT", "nokey", "0"],
        ["SETBIT", "k", "63", "1"], ["SETBIT", "k", "64", "1"], ["STRLEN", "k"], ["GET", "k"],
        ["SETBIT", "k", "64", "1"], ["SETBIT", "k", "64", "0"], ["GETBIT", "k", "64"], ["STRLEN", "k"],
        ["OBJECT", "ENCODING", "k"],
    ],
    "setbit_grows_to_highest_byte": [
        ["SETBIT", "k", "8191", "1"], ["STRLEN", "k"], ["SETBIT", "k", "100", "0"], ["STRLEN", "k"],
        ["SETBIT", "k", "8192", "0"], ["STRLEN", "k"], ["BITCOUNT", "k"], ["GETBIT", "k", "8191"],
        ["SETBIT", "z", "0", "0"], ["GET", "z"], ["STRLEN", "z"], ["EXISTS", "z"],
    ],
    "setbit_errors": [
        ["SETBIT", "k", "-1", "1"], ["SETBIT", "k", "abc", "1"], ["SETBIT", "k", "1.5", "1"],
        ["SETBIT", "k", BITS_ERR_LIMIT, "1"], ["SETBIT", "k", LLMAX, "1"], ["SETBIT", "k", "", "1"],
        ["SETBIT", "k", "0", "2"], ["SETBIT", "k", "0", "-1"], ["SETBIT", "k", "0", "x"], ["SETBIT", "k", "0", ""],
        ["SETBIT", "k", "-1", "2"], ["SETBIT", "k", "#8", "1"], ["SETBIT", "k", " 1", "1"],
        ["GETBIT", "k", "-1"], ["GETBIT", "k", BITS_ERR_LIMIT], ["GETBIT", "k", "x"], ["GETBIT", "k", LLMIN],
        ["EXISTS", "k"], ["SETBIT", "k"], ["SETBIT", "k", "1", "1", "1"], ["GETBIT", "k"], ["GETBIT", "k", "1", "2"],
        ["LPUSH", "l", "a"], ["SETBIT", "l", "0", "1"], ["GETBIT", "l", "0"], ["SETBIT", "l", "-1", "1"],
        ["GETBIT", "l", "x"], ["SETBIT", "l", "0", "5"],
    ],
    "setbit_huge_offset": [
        ["SETBIT", "k", str(512 * 1024 * 1024 * 8 - 1), "1"], ["STRLEN", "k"], ["BITCOUNT", "k"],
        ["BITPOS", "k", "1"], ["BITPOS", "k", "0"], ["GETBIT", "k", str(512 * 1024 * 1024 * 8 - 1)],
        ["BITCOUNT", "k", "-1", "-1"], ["BITPOS", "k", "1", "-2"], ["DEL", "k"],
    ],
    "setbit_int_encoded": [
        ["SET", "n", "123"], ["OBJECT", "ENCODING", "n"], ["GETBIT", "n", "2"], ["GETBIT", "n", "7"],
        ["GETBIT", "n", "24"], ["BITCOUNT", "n"], ["BITPOS", "n", "1"], ["BITPOS", "n", "0", "1"],
        ["SETBIT", "n", "2", "1"], ["OBJECT", "ENCODING", "n"], ["GET", "n"],
        ["SET", "n", "-9223372036854775808"], ["BITCOUNT", "n"], ["BITFIELD_RO", "n", "GET", "i64", "0"],
        ["SETBIT", "n", "14", "0"], ["GET", "n"], ["OBJECT", "ENCODING", "n"], ["INCR", "n"],
        ["SET", "e", "short"], ["OBJECT", "ENCODING", "e"], ["SETBIT", "e", "1", "1"], ["OBJECT", "ENCODING", "e"],
        ["SET", "n", "7"], ["BITFIELD", "n", "GET", "u8", "0"], ["OBJECT", "ENCODING", "n"],
        ["BITFIELD", "n", "SET", "u8", "0", "55"], ["OBJECT", "ENCODING", "n"], ["GET", "n"],
        ["SET", "n", "10"], ["BITOP", "NOT", "d", "n"], ["GET", "d"], ["OBJECT", "ENCODING", "d"],
        ["SET", "n", "12"], ["APPEND", "n", "3"], ["BITCOUNT", "n", "0", "-1", "BIT"],
    ],
    "setbit_keeps_ttl": [
        ["SET", "k", "abc", "EX", "1000"], ["SETBIT", "k", "100", "1"], ["TTL", "k"],
        ["BITFIELD", "k", "SET", "u8", "200", "3"], ["TTL", "k"], ["BITOP", "OR", "k", "k"], ["TTL", "k"],
    ],
    # --------------------------------------------------------------- BITCOUNT
    "bitcount": [
        ["BITCOUNT", "nokey"], ["BITCOUNT", "nokey", "0", "-1"], ["BITCOUNT", "nokey", "a", "b"],
        ["BITCOUNT", "nokey", "1"], ["BITCOUNT", "nokey", "0", "1", "FOO"],
        ["SET", "k", "foobar"], ["BITCOUNT", "k"], ["BITCOUNT", "k", "0", "0"], ["BITCOUNT", "k", "1", "1"],
        ["BITCOUNT", "k", "1", "1", "BYTE"], ["BITCOUNT", "k", "5", "30", "BIT"], ["BITCOUNT", "k", "5", "30", "bit"],
        ["BITCOUNT", "k", "0", "-1"], ["BITCOUNT", "k", "-2", "-1"], ["BITCOUNT", "k", "-1", "-2"],
        ["BITCOUNT", "k", "-100", "100"], ["BITCOUNT", "k", "100", "200"], ["BITCOUNT", "k", "-100", "-50"],
        ["BITCOUNT", "k", "3", "1"], ["BITCOUNT", "k", "-1", "-2", "FOO"], ["BITCOUNT", "k", "0", "-1", "FOO"],
        ["BITCOUNT", "k", "1"], ["BITCOUNT", "k", "0", "1", "BIT", "x"], ["BITCOUNT", "k", "a", "1"],
        ["BITCOUNT", "k", "1", "a"], ["BITCOUNT", "k", "0", LLMAX], ["BITCOUNT", "k", LLMIN, LLMAX, "BIT"],
        ["BITCOUNT", "k", "-1", "-1", "BIT"], ["BITCOUNT", "k", "-9", "-2", "BIT"], ["BITCOUNT", "k", "7", "7", "BIT"],
        ["BITCOUNT", "k", "7", "8", "BIT"], ["BITCOUNT", "k", "0", "47", "BIT"], ["BITCOUNT", "k", "47", "0", "BIT"],
        ["BITCOUNT", "k", "0", "1", b"bit\x00x"], ["BITCOUNT", "k", "0", "1", "BITS"],
        ["SET", "e", ""], ["BITCOUNT", "e"], ["BITCOUNT", "e", "0", "-1"], ["BITCOUNT", "e", "0", "-1", "BIT"],
        ["BITCOUNT", "e", "1"], ["LPUSH", "l", "a"], ["BITCOUNT", "l"], ["BITCOUNT", "l", "x", "y"], ["BITCOUNT"],
    ],
    "bitcount_word_boundaries": [
        ["SET", "k", "\xff" * 7], ["BITCOUNT", "k"],
        ["SETRANGE", "k", "0", b"\xff" * 33 + b"\x01\x80" + b"\x55" * 30], ["BITCOUNT", "k"],
        ["BITCOUNT", "k", "1", "-1"], ["BITCOUNT", "k", "7", "8"], ["BITCOUNT", "k", "8", "31"],
        ["BITCOUNT", "k", "31", "32"], ["BITCOUNT", "k", "3", "40"], ["BITCOUNT", "k", "63", "64", "BIT"],
        ["BITCOUNT", "k", "60", "300", "BIT"], ["BITCOUNT", "k", "1", "-2", "BIT"], ["BITCOUNT", "k", "263", "272", "BIT"],
    ],
    # ----------------------------------------------------------------- BITPOS
    "bitpos": [
        ["BITPOS", "nokey", "0"], ["BITPOS", "nokey", "1"], ["BITPOS", "nokey", "1", "5", "10"],
        ["BITPOS", "nokey", "0", "a"], ["BITPOS", "nokey", "2"], ["BITPOS", "nokey", "x"], ["BITPOS", "nokey", "-1"],
        ["SET", "k", b"\xff\xf0\x00"], ["BITPOS", "k", "0"], ["BITPOS", "k", "1"], ["BITPOS", "k", "1", "1"],
        ["BITPOS", "k", "0", "0", "0"], ["BITPOS", "k", "0", "0", "-1"], ["BITPOS", "k", "1", "2"],
        ["BITPOS", "k", "1", "2", "-1"], ["BITPOS", "k", "0", "2", "-1"], ["BITPOS", "k", "1", "-1"],
        ["BITPOS", "k", "0", "3"], ["BITPOS", "k", "0", "100"], ["BITPOS", "k", "1", "-100"],
        ["BITPOS", "k", "1", "-100", "-200"], ["BITPOS", "k", "0", "-100", "-200"], ["BITPOS", "k", "1", "2", "1"],
        ["BITPOS", "k", "0", "7", "15", "BIT"], ["BITPOS", "k", "0", "7", "11", "BIT"], ["BITPOS", "k", "0", "12", "12", "BIT"],
        ["BITPOS", "k", "1", "12", "-1", "BIT"], ["BITPOS", "k", "1", "5", "5", "bit"], ["BITPOS", "k", "0", "0", "-1", "BIT"],
        ["BITPOS", "k", "0", "0", "-1", "BYTE"], ["BITPOS", "k", "0", "0", "-1", "FOO"], ["BITPOS", "k", "0", "0", "x", "BIT"],
        ["BITPOS", "k", "0", "x", "1", "FOO"], ["BITPOS", "k", "0", "0", "1", "BIT", "x"], ["BITPOS", "k", "2", "0"],
        ["BITPOS", "k", "1", "0", LLMAX], ["BITPOS", "k", "0", LLMIN, LLMAX, "BIT"], ["BITPOS", "k", "1", "-3", "-2", "BIT"],
        ["SET", "ones", b"\xff" * 20], ["BITPOS", "ones", "0"], ["BITPOS", "ones", "0", "3"],
        ["BITPOS", "ones", "0", "3", "-1"], ["BITPOS", "ones", "0", "3", "-1", "BIT"], ["BITPOS", "ones", "1", "-1"],
        ["BITPOS", "ones", "0", "9", "100", "BIT"],
        ["SET", "e", ""], ["BITPOS", "e", "0"], ["BITPOS", "e", "1"], ["BITPOS", "e", "0", "0"], ["BITPOS", "e", "0", "0", "-1"],
        ["LPUSH", "l", "a"], ["BITPOS", "l", "0"], ["BITPOS", "l", "2"], ["BITPOS", "l", "0", "x"],
    ],
    "bitpos_word_boundaries": [
        ["SET", "z", b"\x00" * 40 + b"\x01"], ["BITPOS", "z", "1"], ["BITPOS", "z", "1", "8"], ["BITPOS", "z", "1", "40"],
        ["BITPOS", "z", "1", "0", "39"], ["BITPOS", "z", "0", "40"], ["BITPOS", "z", "1", "319", "-1", "BIT"],
        ["BITPOS", "z", "1", "320", "327", "BIT"], ["BITPOS", "z", "1", "0", "326", "BIT"],
        ["SET", "o", b"\xff" * 40 + b"\xfe"], ["BITPOS", "o", "0"], ["BITPOS", "o", "0", "8"], ["BITPOS", "o", "0", "0", "39"],
        ["BITPOS", "o", "0", "1", "326", "BIT"], ["BITPOS", "o", "0", "1", "327", "BIT"], ["BITPOS", "o", "0", "63", "65", "BIT"],
    ],
    # ------------------------------------------------------------------ BITOP
    "bitop": [
        ["SET", "a", "foobar"], ["SET", "b", "abcdef"], ["SET", "c", "x"],
        ["BITOP", "AND", "d", "a", "b"], ["GET", "d"], ["BITOP", "or", "d", "a", "b", "c"], ["GET", "d"],
        ["BITOP", "XOR", "d", "a", "b", "c"], ["GET", "d"], ["BITOP", "NOT", "d", "a"], ["GET", "d"],
        ["BITOP", "AND", "d", "a", "nokey"], ["GET", "d"], ["BITOP", "OR", "d", "nokey", "c"], ["GET", "d"],
        ["BITOP", "XOR", "d", "a"], ["GET", "d"], ["OBJECT", "ENCODING", "d"], ["BITOP", "AND", "a", "a", "b"], ["GET", "a"],
        ["BITOP", "NOT", "d", "a", "b"], ["BITOP", "NOT", "d"], ["BITOP", "FOO", "d", "a"], ["BITOP", "AN", "d", "a"],
        ["BITOP", b"and\x00x", "d", "a"], ["BITOP", "AND", "d"], ["BITOP", "NOT", "d", "nokey"], ["EXISTS", "d"],
        ["SET", "d", "x", "EX", "100"], ["BITOP", "AND", "d", "nokey", "nokey2"], ["EXISTS", "d"],
        ["BITOP", "AND", "d", "nokey"], ["SET", "d", "y", "EX", "100"], ["BITOP", "OR", "d", "c"], ["TTL", "d"],
        ["LPUSH", "l", "x"], ["BITOP", "AND", "d", "a", "l"], ["BITOP", "NOT", "d", "l"], ["BITOP", "FOO", "d", "l"],
        ["BITOP", "OR", "l", "a"], ["TYPE", "l"], ["GET", "l"], ["SET", "e", ""], ["BITOP", "OR", "d", "e"], ["EXISTS", "d"],
    ],
    "bitop_long": [
        ["SET", "a", "x" * 100], ["SET", "b", "\x0f" * 37], ["SET", "c", "\xa5" * 64],
        ["BITOP", "AND", "d", "a", "b", "c"], ["GET", "d"], ["BITOP", "OR", "d", "a", "b", "c"], ["GET", "d"],
        ["BITOP", "XOR", "d", "a", "b", "c"], ["GET", "d"], ["BITOP", "NOT", "d", "b"], ["GET", "d"],
        ["BITOP", "AND", "d", "c", "a"], ["GET", "d"], ["BITOP", "XOR", "d", "b", "b"], ["GET", "d"],
        ["SET", "n", "1234567890123"], ["BITOP", "NOT", "d", "n"], ["GET", "d"], ["BITOP", "AND", "d", "n", "a"], ["GET", "d"],
    ],
    # ---------------------------------------------------------------- BITFIELD
    "bitfield_basic": [
        ["BITFIELD", "k"], ["EXISTS", "k"], ["BITFIELD", "k", "GET", "u8", "0"], ["EXISTS", "k"],
        ["BITFIELD", "k", "SET", "i8", "0", "-100", "GET", "i8", "0", "GET", "u8", "0"], ["GET", "k"],
        ["BITFIELD", "k", "SET", "u8", "0", "255", "SET", "u8", "0", "100"], ["GET", "k"],
        ["BITFIELD", "k", "INCRBY", "i5", "100", "1", "GET", "u4", "0"], ["STRLEN", "k"],
        ["BITFIELD", "k", "set", "u2", "#3", "3", "get", "u2", "#3", "GET", "u8", "#0", "INCRBY", "u2", "#3", "-1"],
        ["BITFIELD", "k", "GET", "u8", "#100"], ["BITFIELD", "k", "GET", "i64", "3", "GET", "u63", "3", "GET", "i1", "3"],
        ["BITFIELD", "k", "GET", "u1", "7", "GET", "i1", "7", "GET", "i64", "#1"], ["GET", "k"],
        ["BITFIELD", "w", "SET", "i64", "5", LLMIN, "GET", "i64", "5", "GET", "u63", "5", "GET", "u63", "6"], ["GET", "w"],
        ["BITFIELD", "w", "SET", "u63", "1", LLMAX, "GET", "i64", "0"], ["GET", "w"], ["STRLEN", "w"],
        ["BITFIELD", "w", "INCRBY", "i64", "#1", LLMAX, "INCRBY", "i64", "#1", "1", "INCRBY", "i64", "#1", LLMIN],
        ["BITFIELD", "w", "GET", "u8", "1000"], ["STRLEN", "w"],
        ["BITFIELD", "w", "OVERFLOW", "SAT", "INCRBY", "u8", "0", "1000", "OVERFLOW", "WRAP", "INCRBY", "u8", "0", "1000"],
        ["BITFIELD", "w", "OVERFLOW", "FAIL", "OVERFLOW", "sat", "INCRBY", "i4", "0", "100"],
    ],
    "bitfield_errors": [
        ["BITFIELD", "k", "GET"], ["BITFIELD", "k", "GET", "u8"], ["BITFIELD", "k", "SET", "u8", "0"],
        ["BITFIELD", "k", "INCRBY", "u8", "0"], ["BITFIELD", "k", "OVERFLOW"], ["BITFIELD", "k", "OVERFLOW", "FOO"],
        ["BITFIELD", "k", "FOO"], ["BITFIELD", "k", "GET", "u64", "0"], ["BITFIELD", "k", "GET", "i65", "0"],
        ["BITFIELD", "k", "GET", "u0", "0"], ["BITFIELD", "k", "GET", "i0", "0"], ["BITFIELD", "k", "GET", "I8", "0"],
        ["BITFIELD", "k", "GET", "U8", "0"], ["BITFIELD", "k", "GET", "x8", "0"], ["BITFIELD", "k", "GET", "u", "0"],
        ["BITFIELD", "k", "GET", "", "0"], ["BITFIELD", "k", "GET", "u-1", "0"], ["BITFIELD", "k", "GET", "u08", "0"],
        ["BITFIELD", "k", "GET", "u8 ", "0"], ["BITFIELD", "k", "GET", b"u8\x00z", "0"], ["BITFIELD", "k", "GET", "u8", "-1"],
        ["BITFIELD", "k", "GET", "u8", "x"], ["BITFIELD", "k", "GET", "u8", "#"], ["BITFIELD", "k", "GET", "u8", "#-1"],
        ["BITFIELD", "k", "GET", "u8", "##1"], ["BITFIELD", "k", "GET", "u8", BITS_ERR_LIMIT],
        ["BITFIELD", "k", "GET", "u8", str(512 * 1024 * 1024 * 8 - 1)], ["BITFIELD", "k", "GET", "u8", "#" + str(512 * 1024 * 1024)],
        ["BITFIELD", "k", "GET", "i64", "#" + str(64 * 1024 * 1024 - 1)], ["BITFIELD", "k", "GET", "i64", "#" + LLMAX],
        ["BITFIELD", "k", "GET", "u8", "#2305843009213693952"], ["BITFIELD", "k", "GET", "u2", "#4611686018427387904"],
        ["BITFIELD", "k", "SET", "u8", "0", "x"], ["BITFIELD", "k", "SET", "u8", "0", ULLMAX],
        ["BITFIELD", "k", "INCRBY", "u8", "0", "1.5"], ["BITFIELD", "k", "SET", "u8", "0", "1", "GET"],
        ["BITFIELD", "k", "SET", "u8", "0", "1", "FOO", "u8", "0"], ["BITFIELD", "k", "GET", "u8", "0", "OVERFLOW", "FOO"],
        ["BITFIELD", "k", "OVERFLOW", "FOO", "GET", "bad", "0"], ["BITFIELD", "k", "GET", "bad", "x"],
        ["BITFIELD", "k", "GET", "u8", "x", "SET", "bad", "0", "1"], ["EXISTS", "k"],
        ["LPUSH", "l", "a"], ["BITFIELD", "l"], ["BITFIELD", "l", "GET", "u8", "0"], ["BITFIELD", "l", "SET", "u8", "0", "1"],
        ["BITFIELD", "l", "GET", "bad", "0"], ["BITFIELD_RO", "l", "GET", "u8", "0"], ["BITFIELD"],
    ],
    "bitfield_ro": [
        ["BITFIELD_RO", "k"], ["BITFIELD_RO", "k", "GET", "u8", "0"], ["SET", "k", "abc"],
        ["BITFIELD_RO", "k", "GET", "u8", "0", "GET", "i16", "#1", "get", "u63", "1"],
        ["BITFIELD_RO", "k", "SET", "u8", "0", "1"], ["BITFIELD_RO", "k", "INCRBY", "u8", "0", "1"],
        ["BITFIELD_RO", "k", "GET", "u8", "0", "SET", "u8", "0", "1", "GET", "foo", "0"],
        ["BITFIELD_RO", "k", "OVERFLOW", "SAT"], ["BITFIELD_RO", "k", "OVERFLOW", "FOO"], ["BITFIELD_RO", "k", "FOO"],
        ["BITFIELD_RO", "k", "GET", "u64", "0"], ["GET", "k"], ["BITFIELD_RO"],
    ],
    "bitfield_fail_grows": [
        ["SET", "k", "abc"], ["BITFIELD", "k", "OVERFLOW", "FAIL", "INCRBY", "u2", "100", "100"], ["STRLEN", "k"],
        ["OBJECT", "ENCODING", "k"], ["BITFIELD", "new", "OVERFLOW", "FAIL", "SET", "i8", "0", "128"], ["EXISTS", "new"],
        ["GET", "new"], ["BITFIELD", "new", "OVERFLOW", "FAIL", "SET", "u8", "0", "-1", "INCRBY", "u8", "0", "256"],
        ["BITFIELD", "new", "OVERFLOW", "FAIL", "INCRBY", "u8", "0", "-1", "INCRBY", "i8", "0", "-129"], ["GET", "new"],
    ],
    "bitfield_i64": _bitfield_boundaries("i", 64),
    "bitfield_i63": _bitfield_boundaries("i", 63),
    "bitfield_u63": _bitfield_boundaries("u", 63),
    "bitfield_i1": _bitfield_boundaries("i", 1),
    "bitfield_u1": _bitfield_boundaries("u", 1),
    "bitfield_i8": _bitfield_boundaries("i", 8),
    "bitfield_u8": _bitfield_boundaries("u", 8),
    "bitfield_i33": _bitfield_boundaries("i", 33),
    "bitfield_u32": _bitfield_boundaries("u", 32),
    "bitfield_unaligned_all_widths": [
        ["BITFIELD", "k"] + sum((["SET", "%s%d" % (t, b), str(b * 3 + 1), str(-(1 << (b - 1)) + b)]
                                 for t in "iu" for b in range(1, 65) if not (t == "u" and b == 64)), []),
        ["GET", "k"],
        ["BITFIELD_RO", "k"] + sum((["GET", "%s%d" % (t, b), str(b * 5 + 3)]
                                    for t in "iu" for b in range(1, 65) if not (t == "u" and b == 64)), []),
    ],
    # ------------------------------------------------------- transactions, RESP3
    "multi_exec": [
        ["MULTI"], ["SETBIT", "k", "5", "1"], ["BITFIELD", "k", "INCRBY", "u8", "0", "300"], ["SETBIT", "k", "-1", "1"],
        ["BITCOUNT", "k"], ["BITOP", "NOT", "d", "k"], ["BITPOS", "d", "0"], ["GETBIT", "d", "0"], ["EXEC"],
        ["MULTI"], ["BITFIELD", "k", "FOO"], ["EXEC"], ["GET", "k"],
        ["MULTI"], ["BITOP", "NOT", "d", "a", "b"], ["BITFIELD_RO", "k", "SET", "u8", "0", "1"], ["EXEC"],
    ],
    "watch": [
        ["SET", "k", "a"], ["WATCH", "k"], cmd("SETBIT", "k", "1", "1", conn=1), ["MULTI"], ["GET", "k"], ["EXEC"],
        ["WATCH", "k"], cmd("SETBIT", "k", "1", "0", conn=1), ["MULTI"], ["GET", "k"], ["EXEC"],
        ["WATCH", "k"], cmd("BITFIELD", "k", "SET", "u8", "0", "97", conn=1), ["MULTI"], ["GET", "k"], ["EXEC"],
        ["WATCH", "k"], cmd("BITFIELD", "k", "INCRBY", "u8", "0", "1", conn=1), ["MULTI"], ["GET", "k"], ["EXEC"],
        ["WATCH", "d"], cmd("BITOP", "OR", "d", "k", conn=1), ["MULTI"], ["GET", "d"], ["EXEC"],
        ["WATCH", "d"], cmd("BITOP", "OR", "d", "nokey", conn=1), ["MULTI"], ["GET", "d"], ["EXEC"],
        ["WATCH", "k"], cmd("BITFIELD", "k", "GET", "u8", "0", conn=1), ["MULTI"], ["GET", "k"], ["EXEC"],
    ],
    "resp3": [
        hello("3"), ["BITFIELD", "k", "OVERFLOW", "FAIL", "INCRBY", "u2", "0", "5", "GET", "u2", "0"],
        ["BITFIELD_RO", "k"], ["BITCOUNT", "k"], ["BITPOS", "k", "0"], ["SETBIT", "k", "1", "1"],
    ],
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_bits(pair, name):
    f, r = pair
    mismatches, transcript = run_steps(f.port, r.port, CASES[name])
    assert not mismatches, format_report(name, mismatches, transcript)


def test_bits_proto_max_bulk_len(ferry_factory, redis_factory):
    """Bit offsets are limited by proto-max-bulk-len (in bytes)."""
    args = ("--proto-max-bulk-len", "1048576")
    f, r = ferry_factory(*args), redis_factory(*args)
    lim = 1048576 * 8
    steps = [["SETBIT", "k", str(lim - 1), "1"], ["STRLEN", "k"], ["SETBIT", "k", str(lim), "1"],
             ["GETBIT", "k", str(lim)], ["BITFIELD", "k", "GET", "u8", str(lim - 1)],
             ["BITFIELD", "k", "SET", "i64", str(lim - 1), "-1"], ["STRLEN", "k"], ["BITFIELD", "k", "GET", "u8", str(lim)],
             ["BITFIELD", "k", "GET", "u8", "#131072"], ["BITFIELD", "k", "GET", "u8", "#131071"], ["BITCOUNT", "k"]]
    mismatches, transcript = run_steps(f.port, r.port, steps)
    assert not mismatches, format_report("proto_max_bulk_len", mismatches, transcript)


def _dirty(client):
    for line in client.command("INFO", "persistence").split(b"\r\n"):
        if line.startswith(b"rdb_changes_since_last_save:"):
            return int(line.split(b":")[1])
    raise AssertionError("no rdb_changes_since_last_save")


DIRTY_STEPS = [
    ["SETBIT", "a", "0", "0"], ["SETBIT", "a", "0", "0"], ["SETBIT", "a", "0", "1"], ["SETBIT", "a", "0", "1"],
    ["SETBIT", "a", "90", "0"], ["SET", "n", "123"], ["SETBIT", "n", "2", "1"],
    ["BITFIELD", "b", "SET", "i5", "0", "0"], ["BITFIELD", "b", "SET", "i5", "0", "0"], ["BITFIELD", "b", "SET", "i5", "0", "1"],
    ["BITFIELD", "b", "INCRBY", "i5", "0", "0"], ["BITFIELD", "b", "INCRBY", "i5", "0", "1"],
    ["BITFIELD", "b", "SET", "u8", "90", "0", "SET", "u8", "0", "0", "GET", "u8", "0"],
    ["BITFIELD", "b", "GET", "u8", "0"], ["BITFIELD_RO", "b", "GET", "u8", "0"],
    ["BITFIELD", "b", "OVERFLOW", "FAIL", "INCRBY", "u2", "0", "100"], ["BITFIELD", "b", "OVERFLOW", "FAIL", "INCRBY", "u2", "900", "9"],
    ["BITFIELD", "c", "OVERFLOW", "FAIL", "SET", "u2", "0", "9"], ["EXISTS", "c"],
    ["BITFIELD", "b", "OVERFLOW", "FAIL", "INCRBY", "u2", "0", "100", "INCRBY", "u2", "0", "1"],
    ["BITOP", "OR", "d", "a"], ["BITOP", "OR", "d", "nokey"], ["BITOP", "OR", "d", "nokey"], ["BITOP", "NOT", "x", "a", "b"],
    ["BITCOUNT", "a"], ["BITPOS", "a", "1"], ["GETBIT", "a", "0"],
]


def test_bits_dirty(pair):
    """What counts as a change (and so is propagated): the dirty counter
    moves by the same amount on both servers after every step."""
    f, r = pair
    flushall(f.port)
    flushall(r.port)
    with f.client() as fc, r.client() as rc:
        for st in DIRTY_STEPS:
            before = (_dirty(fc), _dirty(rc))
            replies = (fc.command(*st), rc.command(*st))
            assert replies[0] == replies[1], "%r: ferry %r, redis %r" % (st, replies[0], replies[1])
            delta = (_dirty(fc) - before[0], _dirty(rc) - before[1])
            assert delta[0] == delta[1], "%r: dirty +%d on ferry, +%d on redis" % (st, delta[0], delta[1])


NOTIFY_STEPS = [
    ("SETBIT", "a", "3", "1"), ("SETBIT", "a", "3", "1"), ("SETBIT", "a", "3", "0"), ("SETBIT", "a", "100", "0"),
    ("BITFIELD", "b", "SET", "u8", "0", "7", "INCRBY", "u8", "0", "1"), ("BITFIELD", "b", "SET", "u8", "0", "8"),
    ("BITFIELD", "b", "GET", "u8", "0"), ("BITFIELD", "b", "OVERFLOW", "FAIL", "INCRBY", "u8", "0", "300"),
    ("BITFIELD", "f", "OVERFLOW", "FAIL", "INCRBY", "u8", "0", "300"), ("BITFIELD_RO", "nokey", "GET", "u8", "0"),
    ("BITOP", "AND", "d", "a", "b"), ("BITOP", "AND", "d", "nokey"), ("BITOP", "AND", "d", "nokey"),
    ("SET", "t", "x", "PX", "30"), ("@sleep", 0.1), ("BITOP", "XOR", "t", "a"),  # expired dest: "expired", "set"
    ("SET", "u", "x", "PX", "30"), ("@sleep", 0.1), ("SETBIT", "u", "0", "1"), ("GETBIT", "nokey", "1"),
    ("BITCOUNT", "nokey"), ("BITPOS", "nokey", "1"), ("BITOP", "NOT", "d", "nokey"),
]


@pytest.mark.parametrize("flags", ["KEA", "KA", "E$", "Kg", "KEAnm"])
def test_bits_notifications(pair, flags):
    report = compare(pair[0], pair[1], flags, NOTIFY_STEPS)
    assert report is None, report


def _random_program(seed, n=400):
    """SET/APPEND/SETRANGE and the bit commands over a few keys, with
    offsets and ranges near byte and word boundaries."""
    rnd = random.Random(seed)
    keys = ["k1", "k2", "k3", "n"]
    vals = ["", "a", "foobar", "123", "-7", "\xff\xff", "x" * 9, "y" * 40, "0"]
    offs = ["0", "1", "7", "8", "15", "63", "64", "65", "127", "128", "255", "256", "511", "1000"]
    rng = ["0", "1", "-1", "-2", "2", "7", "8", "9", "-9", "100", "-100", "63", "64"]
    types = ["u1", "i1", "u7", "i8", "u8", "i16", "u31", "i32", "u63", "i64", "i13"]
    nums = ["0", "1", "-1", "100", "-100", "127", "128", "255", "-129", LLMAX, LLMIN, "4294967296"]

    def k():
        return rnd.choice(keys)

    def off():
        o = rnd.choice(offs)
        return "#" + str(rnd.randint(0, 20)) if rnd.random() < 0.15 else o

    def bitfield_ops(write):
        out = []
        for _ in range(rnd.randint(1, 4)):
            x = rnd.random()
            if x < 0.15:
                out += ["OVERFLOW", rnd.choice(["WRAP", "SAT", "FAIL"])]
            elif x < 0.45 or not write:
                out += ["GET", rnd.choice(types), off()]
            else:
                out += [rnd.choice(["SET", "INCRBY"]), rnd.choice(types), off(), rnd.choice(nums)]
        return out

    unit = lambda: rnd.choice([[], [], ["BIT"], ["BYTE"]])
    ops = [
        (3, lambda: ["SET", k(), rnd.choice(vals)]), (2, lambda: ["APPEND", k(), rnd.choice(vals)]),
        (2, lambda: ["SETRANGE", k(), rnd.choice(["0", "3", "9", "17"]), rnd.choice(vals)]),
        (6, lambda: ["SETBIT", k(), rnd.choice(offs), rnd.choice(["0", "1"])]),
        (3, lambda: ["GETBIT", k(), rnd.choice(offs)]),
        (5, lambda: ["BITFIELD", k()] + bitfield_ops(True)), (2, lambda: ["BITFIELD_RO", k()] + bitfield_ops(False)),
        (3, lambda: ["BITOP", rnd.choice(["AND", "OR", "XOR"]), k(), k(), k()] + ([k()] if rnd.random() < .3 else [])),
        (1, lambda: ["BITOP", "NOT", k(), k()]),
        (2, lambda: ["BITCOUNT", k()]), (4, lambda: ["BITCOUNT", k(), rnd.choice(rng), rnd.choice(rng)] + unit()),
        (2, lambda: ["BITPOS", k(), rnd.choice(["0", "1"])]),
        (4, lambda: ["BITPOS", k(), rnd.choice(["0", "1"]), rnd.choice(rng)]),
        (4, lambda: ["BITPOS", k(), rnd.choice(["0", "1"]), rnd.choice(rng), rnd.choice(rng)] + unit()),
        (3, lambda: ["GET", k()]), (1, lambda: ["STRLEN", k()]), (1, lambda: ["OBJECT", "ENCODING", k()]),
        (1, lambda: ["INCR", k()]), (0.5, lambda: ["DEL", k()]), (0.3, lambda: ["LPUSH", k(), "x"]),
    ]
    return [pick_weighted(rnd, ops)() for _ in range(n)]


@pytest.mark.parametrize("seed", range(8))
def test_bits_random(pair, seed):
    f, r = pair
    mismatches, transcript = run_steps(f.port, r.port, _random_program(seed))
    assert not mismatches, format_report("bits_random_%d" % seed, mismatches, transcript)
