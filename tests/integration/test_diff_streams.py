"""Differential tests for the stream commands (src/commands/cmd_stream*.c,
src/keyspace/t_stream*.c): XADD XRANGE XREVRANGE XLEN XDEL XTRIM XSETID
XREAD XREADGROUP XGROUP XACK XPENDING XCLAIM XAUTOCLAIM, run in lockstep on
ferry and on the reference redis-server and compared byte for byte.

- CASES: hand-written cases for every option and error path: ID forms
  (explicit, "ms", "ms-*", "*" where the reply is not compared), exclusive
  "(" bounds, COUNT, NOMKSTREAM, MAXLEN/MINID with = and ~ and LIMIT (small
  stream-node-max-entries / -bytes so that approximate trimming removes
  whole nodes: ferry's blocks split where Redis's listpack nodes do, so the
  same entries remain), XSETID's checks, groups, pending lists, claims,
  WRONGTYPE, RESP3 map replies, MULTI/EXEC.
- test_blocking_*: XREAD BLOCK and XREADGROUP BLOCK woken by XADD, timeouts,
  `$`, key deletion and type change, XGROUP DESTROY, FIFO order of waiters,
  inside MULTI (no blocking).
- test_random_program: seeded random programs over three stream keys with
  random node sizes; replies compared after masking the fields that hold
  elapsed times (XPENDING's idle).
"""
from __future__ import annotations

import random
import threading
import time

import pytest

from diffkit import cmd, format_report, hello, run_steps, sorted_
from resp_client import RawClient, encode_command, parse, to_python

NODES = lambda n, b=4096: [("CONFIG", "SET", "stream-node-max-entries", str(n)),   # noqa: E731
                           ("CONFIG", "SET", "stream-node-max-bytes", str(b))]


def fill(key, first, n, fields=("a", "b")):
    steps = []
    for i in range(first, first + n):
        args = ["XADD", key, "%d-1" % i]
        for j, f in enumerate(fields):
            args += [f, str(i * 10 + j)]
        steps.append(args)
    return steps


CASES = {
    "xadd_ids": [
        ["XADD", "s", "1-1", "a", "1"], ["XADD", "s", "1-1", "a", "1"], ["XADD", "s", "1-0", "a", "1"],
        ["XADD", "s", "1", "a", "2"], ["XADD", "s", "1-*", "a", "3"], ["XADD", "s", "2-*", "a", "4"],
        ["XADD", "s", "0-0", "a", "1"], ["XADD", "z", "0-*", "a", "1"], ["XADD", "z", "0-*", "b", "2"],
        ["XADD", "s", "18446744073709551615-18446744073709551614", "x", "y"],
        ["XADD", "s", "18446744073709551615-*", "x", "y"], ["XADD", "s", "18446744073709551615-*", "x", "y"],
        ["XADD", "s", "*", "x", "y"], ["XRANGE", "s", "-", "+"], ["XLEN", "s"], ["XLEN", "none"],
        ["XADD", "s", "abc", "a", "b"], ["XADD", "s", "1-x", "a", "b"], ["XADD", "s", "-1", "a", "b"],
        ["XADD", "s", "+", "a", "b"], ["XADD", "s", "-", "a", "b"], ["XADD", "s", " 1", "a", "b"],
        ["XADD", "t", "5-1", "a"], ["XADD", "t", "5-1", "a", "b", "c"], ["XADD", "t"], ["XADD", "t", "5"],
        ["XADD", "t", "NOMKSTREAM", "5-1", "a", "b"], ["EXISTS", "t"], ["TYPE", "z"], ["OBJECT", "ENCODING", "z"],
        ["XADD", "t", "5-1", "", ""], ["XRANGE", "t", "-", "+"],
    ],
    "xadd_fields_and_values": [
        ["XADD", "s", "1", "a", "1", "b", "-2", "c", "x" * 70, "d", "9223372036854775807",
         "e", "9223372036854775808", "f", "-0", "g", "007", "h", "1.5", "i", " 3", "j", "-9223372036854775808"],
        ["XADD", "s", "2", "a", "1", "b", "2"], ["XADD", "s", "3", "b", "1", "a", "2"],
        ["XADD", "s", "4", "a", "1", "b", "-2", "c", "x", "d", "1", "e", "1", "f", "1", "g", "1", "h", "1",
         "i", "1", "j", "1"],
        ["XADD", "s", "5", "1", "2", "3", "4"], ["XADD", "s", "6", "y" * 5000, "z" * 70000],
        ["XRANGE", "s", "-", "+"], ["XREVRANGE", "s", "+", "-"],
    ],
    "xrange_bounds": fill("s", 1, 12) + [
        ["XRANGE", "s", "-", "+", "COUNT", "3"], ["XRANGE", "s", "3", "5"], ["XRANGE", "s", "3-1", "5-0"],
        ["XRANGE", "s", "(3-1", "(5-1"], ["XRANGE", "s", "(3", "+"], ["XRANGE", "s", "-", "(5"],
        ["XRANGE", "s", "5", "3"], ["XRANGE", "s", "-", "+", "COUNT", "0"], ["XRANGE", "s", "-", "+", "COUNT", "-1"],
        ["XRANGE", "s", "-", "+", "COUNT"], ["XRANGE", "s", "-", "+", "COUNT", "x"], ["XRANGE", "s", "-", "+", "X"],
        ["XRANGE", "s", "(-", "+"], ["XRANGE", "s", "(", "+"], ["XRANGE", "s", "-", "(+"],
        ["XRANGE", "s", "(18446744073709551615-18446744073709551615", "+"], ["XRANGE", "s", "-", "(0-0"],
        ["XRANGE", "s", "(0", "+", "COUNT", "2"], ["XREVRANGE", "s", "+", "-", "COUNT", "4"],
        ["XREVRANGE", "s", "(10", "(3"], ["XREVRANGE", "s", "5", "5"], ["XREVRANGE", "s", "3", "5"],
        ["XREVRANGE", "s", "+", "-", "COUNT", "0"], ["XRANGE", "none", "-", "+"], ["XREVRANGE", "none", "+", "-"],
        ["XRANGE", "s", "4-1", "4-1"], ["XRANGE", "s", "4-2", "4-3"],
    ],
    "xrange_across_nodes": NODES(3) + fill("s", 1, 20) + [
        ["XRANGE", "s", "4", "11"], ["XREVRANGE", "s", "11", "4"], ["XRANGE", "s", "(6-1", "+", "COUNT", "4"],
        ["XREVRANGE", "s", "(15-1", "-", "COUNT", "5"], ["XDEL", "s", "7-1", "8-1", "9-1", "2-1"],
        ["XRANGE", "s", "6", "11"], ["XREVRANGE", "s", "11", "6"], ["XRANGE", "s", "7", "9"], ["XLEN", "s"],
    ] + NODES(100),
    "xdel": fill("s", 1, 6) + [
        ["XDEL", "s", "3-1"], ["XDEL", "s", "3-1"], ["XDEL", "s", "1-1", "2-1", "9-9"], ["XDEL", "s", "x"],
        ["XDEL", "s", "4-1", "x"], ["XLEN", "s"], ["XDEL", "none", "x"], ["XDEL", "s", "-"], ["XDEL", "s", "+"],
        ["XRANGE", "s", "-", "+"], ["XDEL", "s", "4-1", "5-1", "6-1"], ["XLEN", "s"], ["EXISTS", "s"],
        ["XRANGE", "s", "-", "+"], ["XADD", "s", "6-1", "a", "b"], ["XADD", "s", "7", "a", "b"],
    ],
    "xtrim_exact": NODES(4) + fill("s", 1, 20) + [
        ["XTRIM", "s", "MAXLEN", "15"], ["XLEN", "s"], ["XTRIM", "s", "MAXLEN", "=", "13"],
        ["XTRIM", "s", "MINID", "10"], ["XRANGE", "s", "-", "+", "COUNT", "2"], ["XTRIM", "s", "MINID", "=", "10-2"],
        ["XTRIM", "s", "MAXLEN", "100"], ["XTRIM", "s", "MAXLEN", "0"], ["XLEN", "s"], ["EXISTS", "s"],
        ["XTRIM", "none", "MAXLEN", "0"],
    ] + NODES(100),
    "xtrim_approx": NODES(4) + fill("s", 1, 30) + [
        ["XTRIM", "s", "MAXLEN", "~", "25"], ["XLEN", "s"], ["XTRIM", "s", "MAXLEN", "~", "21"], ["XLEN", "s"],
        ["XTRIM", "s", "MAXLEN", "~", "10", "LIMIT", "4"], ["XLEN", "s"],
        ["XTRIM", "s", "MAXLEN", "~", "10", "LIMIT", "3"], ["XLEN", "s"],
        ["XTRIM", "s", "MINID", "~", "20"], ["XRANGE", "s", "-", "+", "COUNT", "1"],
        ["XTRIM", "s", "MINID", "~", "25", "LIMIT", "100"], ["XRANGE", "s", "-", "+", "COUNT", "1"],
        ["XTRIM", "s", "MAXLEN", "~", "0"], ["XLEN", "s"],
    ] + NODES(100),
    "xtrim_node_bytes": NODES(100, 60) + fill("s", 1, 30, fields=("field-one", "field-two")) + [
        ["XTRIM", "s", "MAXLEN", "~", "25"], ["XLEN", "s"], ["XTRIM", "s", "MAXLEN", "~", "5"], ["XLEN", "s"],
    ] + NODES(100),
    "xtrim_errors": fill("s", 1, 3) + [
        ["XTRIM", "s"], ["XTRIM", "s", "MAXLEN"], ["XTRIM", "s", "FOO", "1"], ["XTRIM", "s", "MAXLEN", "-1"],
        ["XTRIM", "s", "MAXLEN", "x"], ["XTRIM", "s", "MAXLEN", "1", "MINID", "1"],
        ["XTRIM", "s", "MAXLEN", "1", "LIMIT", "1"], ["XTRIM", "s", "MAXLEN", "~", "1", "LIMIT", "-1"],
        ["XTRIM", "s", "MINID", "x"], ["XTRIM", "s", "LIMIT", "1"], ["XTRIM", "s", "MAXLEN", "~"],
        ["XTRIM", "s", "MINID", "~", "+"], ["XTRIM", "s", "MAXLEN", "~", "1", "LIMIT", "x"],
    ],
    "xadd_trimming": NODES(4) + fill("s", 1, 12) + [
        ["XADD", "s", "MAXLEN", "10", "13", "a", "1"], ["XLEN", "s"], ["XADD", "s", "MAXLEN", "~", "5", "14", "a", "1"],
        ["XLEN", "s"], ["XADD", "s", "MINID", "12", "15", "a", "1"], ["XRANGE", "s", "-", "+"],
        ["XADD", "s", "MAXLEN", "=", "2", "LIMIT", "1", "16", "a", "1"],
        ["XADD", "s", "MAXLEN", "~", "2", "LIMIT", "1", "16", "a", "1"], ["XLEN", "s"],
        ["XADD", "s", "LIMIT", "1", "17", "a", "1"], ["XADD", "s", "MAXLEN", "1", "MINID", "1", "17", "a", "1"],
        ["XADD", "s", "MAXLEN", "-1", "17", "a", "1"], ["XADD", "s", "NOMKSTREAM", "MAXLEN", "0", "17", "a", "1"],
        ["XLEN", "s"], ["EXISTS", "s"], ["XADD", "n", "NOMKSTREAM", "MAXLEN", "0", "1", "a", "1"],
        ["XADD", "s", "maxlen", "~", "1", "18-*", "a", "1"],
    ] + NODES(100),
    "xsetid": fill("s", 1, 3) + [
        ["XSETID", "s", "2-1"], ["XSETID", "s", "3-1"], ["XSETID", "s", "10-1"], ["XADD", "s", "10-1", "a", "b"],
        ["XADD", "s", "10-*", "a", "b"], ["XSETID", "none", "1"], ["XSETID", "s", "x"],
        ["XSETID", "s", "20", "ENTRIESADDED", "2"], ["XSETID", "s", "20", "ENTRIESADDED", "-1"],
        ["XSETID", "s", "20", "ENTRIESADDED", "100", "MAXDELETEDID", "21"],
        ["XSETID", "s", "20", "ENTRIESADDED", "100", "MAXDELETEDID", "15"], ["XSETID", "s", "20", "FOO", "1"],
        ["XSETID", "s", "20", "ENTRIESADDED"], ["XDEL", "s", "1-1", "2-1", "3-1", "10-1", "10-2"],
        ["XSETID", "s", "1"], ["XLEN", "s"], ["XADD", "s", "2", "a", "b"], ["XRANGE", "s", "-", "+"],
    ],
    "wrongtype": [
        ["SET", "k", "v"], ["XADD", "k", "1", "a", "b"], ["XRANGE", "k", "-", "+"], ["XREVRANGE", "k", "+", "-"],
        ["XLEN", "k"], ["XDEL", "k", "1"], ["XTRIM", "k", "MAXLEN", "1"], ["XSETID", "k", "1"],
        ["XREAD", "STREAMS", "k", "0"], ["XGROUP", "CREATE", "k", "g", "0"], ["XACK", "k", "g", "1"],
        ["XPENDING", "k", "g"], ["XCLAIM", "k", "g", "c", "0", "1"], ["XAUTOCLAIM", "k", "g", "c", "0", "0"],
        ["XREADGROUP", "GROUP", "g", "c", "STREAMS", "k", ">"], ["XADD", "s", "1", "a", "b"], ["LPUSH", "s", "x"],
    ],
    "xread": fill("s", 1, 5) + fill("t", 3, 3) + [
        ["XREAD", "STREAMS", "s", "0"], ["XREAD", "COUNT", "2", "STREAMS", "s", "t", "0", "3-1"],
        ["XREAD", "STREAMS", "s", "t", "$", "$"], ["XREAD", "STREAMS", "s", "none", "4", "0"],
        ["XREAD", "STREAMS", "none", "0"], ["XREAD", "COUNT", "-5", "STREAMS", "s", "4-1"],
        ["XREAD", "STREAMS", "s"], ["XREAD", "STREAMS", "s", "t", "0"], ["XREAD", "STREAMS", "s", ">"],
        ["XREAD", "STREAMS", "s", "x"], ["XREAD", "GROUP", "g", "c", "STREAMS", "s", "0"],
        ["XREAD", "NOACK", "STREAMS", "s", "0"], ["XREAD", "FOO", "STREAMS", "s", "0"], ["XREAD", "COUNT", "1"],
        ["XREAD", "BLOCK", "x", "STREAMS", "s", "0"], ["XREAD", "BLOCK", "-1", "STREAMS", "s", "0"],
        ["XREAD", "BLOCK", "10", "STREAMS", "s", "0"], ["XREAD", "BLOCK", "10", "STREAMS", "s", "$"],
        ["XREAD", "streams", "s", "5-1"], ["XREAD", "STREAMS", "s", "(4-1"],
        ["XDEL", "s", "5-1"], ["XREAD", "STREAMS", "s", "4-1"], ["XREAD", "STREAMS", "s", "3"],
    ],
    "xread_resp3": [hello("HELLO", "3")] + fill("s", 1, 3) + fill("t", 1, 2) + [
        ["XREAD", "STREAMS", "s", "t", "0", "0"], ["XREAD", "STREAMS", "s", "9"],
        ["XGROUP", "CREATE", "s", "g", "0"], ["XREADGROUP", "GROUP", "g", "c", "STREAMS", "s", ">"],
        ["XPENDING", "s", "g"], ["XRANGE", "s", "-", "+"], ["XREADGROUP", "GROUP", "g", "c", "STREAMS", "s", ">"],
        ["XAUTOCLAIM", "s", "g", "d", "0", "0", "JUSTID"],
    ],
    "groups": fill("s", 1, 6) + [
        ["XGROUP", "CREATE", "s", "g", "0"], ["XGROUP", "CREATE", "s", "g", "0"], ["XGROUP", "CREATE", "s", "h", "$"],
        ["XGROUP", "CREATE", "s", "i", "3", "ENTRIESREAD", "3"], ["XGROUP", "CREATE", "s", "j", "3", "ENTRIESREAD", "-2"],
        ["XGROUP", "CREATE", "s", "j", "3", "MKSTREAM", "FOO"], ["XGROUP", "CREATE", "none", "g", "$"],
        ["XGROUP", "CREATE", "new", "g", "$", "MKSTREAM"], ["XLEN", "new"], ["TYPE", "new"],
        ["XGROUP", "CREATE", "s", "k", "x"], ["XGROUP", "CREATE", "s", "k", "+"], ["XGROUP", "CREATE", "s"],
        ["XGROUP", "SETID", "s", "g", "2"], ["XGROUP", "SETID", "s", "nog", "2"], ["XGROUP", "SETID", "s", "g", "$"],
        ["XGROUP", "SETID", "s", "g", "-"], ["XGROUP", "SETID", "s", "g", "0", "ENTRIESREAD", "0"],
        ["XGROUP", "SETID", "s", "g", "0", "FOO", "0"], ["XGROUP", "SETID", "s", "g", "0", "ENTRIESREAD", "-3"],
        ["XGROUP", "SETID", "none", "g", "0"], ["XGROUP", "CREATECONSUMER", "s", "g", "alice"],
        ["XGROUP", "CREATECONSUMER", "s", "g", "alice"], ["XGROUP", "CREATECONSUMER", "s", "nog", "alice"],
        ["XGROUP", "DELCONSUMER", "s", "g", "bob"], ["XGROUP", "DELCONSUMER", "s", "g", "alice"],
        ["XGROUP", "DESTROY", "s", "h"], ["XGROUP", "DESTROY", "s", "h"], ["XGROUP", "DESTROY", "none", "h"],
        ["XGROUP", "FOO", "s", "g"], ["XGROUP", "HELP"], ["XGROUP", "HELP", "x"], ["XGROUP"],
        ["XGROUP", "CREATE", "s", "g2", "0", "MKSTREAM", "ENTRIESREAD", "1", "MKSTREAM", "x"],
    ],
    "readgroup_pending_ack": fill("s", 1, 6) + [
        ["XGROUP", "CREATE", "s", "g", "0"],
        ["XREADGROUP", "GROUP", "g", "alice", "COUNT", "2", "STREAMS", "s", ">"],
        ["XREADGROUP", "GROUP", "g", "bob", "COUNT", "1", "STREAMS", "s", ">"],
        ["XREADGROUP", "GROUP", "g", "carol", "NOACK", "COUNT", "1", "STREAMS", "s", ">"],
        ["XPENDING", "s", "g"], ["XREADGROUP", "GROUP", "g", "alice", "STREAMS", "s", "0"],
        ["XREADGROUP", "GROUP", "g", "alice", "STREAMS", "s", "1-1"],
        ["XREADGROUP", "GROUP", "g", "alice", "COUNT", "1", "STREAMS", "s", "0"],
        ["XREADGROUP", "GROUP", "g", "dave", "STREAMS", "s", "0"],
        ["XDEL", "s", "2-1"], ["XREADGROUP", "GROUP", "g", "alice", "STREAMS", "s", "0"],
        ["XACK", "s", "g", "1-1", "2-1", "9-9"], ["XACK", "s", "g", "1-1"], ["XACK", "s", "g", "x"],
        ["XACK", "s", "nog", "1-1"], ["XACK", "none", "g", "1-1"], ["XPENDING", "s", "g"],
        ["XREADGROUP", "GROUP", "g", "bob", "STREAMS", "s", ">"], ["XREADGROUP", "GROUP", "g", "bob", "STREAMS", "s", ">"],
        ["XREADGROUP", "GROUP", "nog", "bob", "STREAMS", "s", ">"], ["XREADGROUP", "GROUP", "g", "bob", "STREAMS", "s", "$"],
        ["XREADGROUP", "STREAMS", "s", ">"], ["XREADGROUP", "GROUP", "g", "bob", "STREAMS", "s", "none", ">", ">"],
        ["XREADGROUP", "GROUP", "g", "bob", "BLOCK", "10", "STREAMS", "s", ">"],
        ["XPENDING", "s", "g"], ["XPENDING", "s", "nog"], ["XPENDING", "none", "g"], ["XPENDING", "s", "g", "-"],
        ["XPENDING", "s", "g", "-", "+", "x"], ["XPENDING", "s", "g", "x", "+", "1"],
        ["XPENDING", "s", "g", "IDLE", "x", "-", "+", "1"], ["XPENDING", "s", "g", "IDLE", "1", "-", "+"],
        ["XPENDING", "s", "g", "-", "+", "0"], ["XPENDING", "s", "g", "(3-1", "(5-1", "10", "nobody"],
        ["XGROUP", "DELCONSUMER", "s", "g", "bob"], ["XPENDING", "s", "g"],
    ],
    "claims": fill("s", 1, 6) + [
        ["XGROUP", "CREATE", "s", "g", "0"], ["XREADGROUP", "GROUP", "g", "alice", "STREAMS", "s", ">"],
        ["XCLAIM", "s", "g", "bob", "0", "1-1", "2-1", "JUSTID"], ["XCLAIM", "s", "g", "bob", "0", "3-1"],
        ["XCLAIM", "s", "g", "bob", "3600000", "4-1"], ["XCLAIM", "s", "g", "bob", "0", "9-9", "FORCE"],
        ["XCLAIM", "s", "g", "carol", "0", "1-1", "RETRYCOUNT", "7", "JUSTID"],
        ["XCLAIM", "s", "g", "carol", "0", "4-1", "IDLE", "1000", "JUSTID"],
        ["XCLAIM", "s", "g", "carol", "0", "5-1", "TIME", "1", "JUSTID"],
        ["XCLAIM", "s", "g", "carol", "0", "5-1", "LASTID", "100", "JUSTID"],
        ["XCLAIM", "s", "g", "carol", "0", "5-1", "FOO"], ["XCLAIM", "s", "g", "carol", "x", "5-1"],
        ["XCLAIM", "s", "g", "carol", "0", "5-1", "IDLE", "x"], ["XCLAIM", "s", "g", "carol", "0", "5-1", "TIME", "x"],
        ["XCLAIM", "s", "g", "carol", "0", "5-1", "RETRYCOUNT", "x"], ["XCLAIM", "s", "g", "c", "0", "5-1", "LASTID", "x"],
        ["XCLAIM", "s", "nog", "c", "0", "1-1"], ["XCLAIM", "none", "g", "c", "0", "1-1"],
        ["XCLAIM", "s", "g", "dave", "0", "6-1", "x", "JUSTID"],
        ["XDEL", "s", "2-1"], ["XCLAIM", "s", "g", "dave", "0", "2-1", "3-1"], ["XPENDING", "s", "g"],
        ["XADD", "s", "7-1", "a", "1"], ["XCLAIM", "s", "g", "erin", "0", "7-1", "FORCE", "JUSTID"],
        ["XPENDING", "s", "g"],
        ["XAUTOCLAIM", "s", "g", "frank", "0", "0", "COUNT", "2"], ["XAUTOCLAIM", "s", "g", "frank", "0", "(3-1"],
        ["XDEL", "s", "4-1"], ["XAUTOCLAIM", "s", "g", "gina", "0", "0", "JUSTID"],
        ["XAUTOCLAIM", "s", "g", "gina", "3600000", "0"], ["XAUTOCLAIM", "s", "g", "gina", "0", "0", "COUNT", "0"],
        ["XAUTOCLAIM", "s", "g", "gina", "0", "0", "COUNT", "x"], ["XAUTOCLAIM", "s", "g", "gina", "x", "0"],
        ["XAUTOCLAIM", "s", "g", "gina", "0", "x"], ["XAUTOCLAIM", "s", "g", "gina", "0", "0", "FOO"],
        ["XAUTOCLAIM", "s", "nog", "gina", "0", "0"], ["XAUTOCLAIM", "none", "g", "gina", "0", "0"],
        ["XPENDING", "s", "g"],
    ],
    "multi_exec": fill("s", 1, 2) + [
        ["MULTI"], ["XADD", "s", "3", "a", "b"], ["XREAD", "BLOCK", "0", "STREAMS", "s", "$"],
        ["XGROUP", "CREATE", "s", "g", "0"], ["XREADGROUP", "GROUP", "g", "c", "BLOCK", "0", "STREAMS", "s", ">"],
        ["XREADGROUP", "GROUP", "g", "c", "BLOCK", "0", "STREAMS", "s", ">"], ["EXEC"],
        ["WATCH", "s"], cmd("XADD", "s", "9", "a", "b", conn=1), ["MULTI"], ["XLEN", "s"], ["EXEC"],
        ["WATCH", "s"], cmd("XTRIM", "s", "MAXLEN", "100", conn=1), ["MULTI"], ["XLEN", "s"], ["EXEC"],
        ["WATCH", "s"], cmd("XREADGROUP", "GROUP", "g", "d", "STREAMS", "s", ">", conn=1), ["MULTI"], ["XLEN", "s"],
        ["EXEC"],
    ],
    "delete_and_types": fill("s", 1, 3) + [
        ["DEL", "s"], ["XLEN", "s"], ["XADD", "s", "1", "a", "b"], ["RENAME", "s", "t"], ["XRANGE", "t", "-", "+"],
        ["COPY", "t", "u"], ["XADD", "u", "2", "c", "d"], ["XRANGE", "t", "-", "+"], ["XRANGE", "u", "-", "+"],
        ["XGROUP", "CREATE", "u", "g", "0"], ["XREADGROUP", "GROUP", "g", "c", "STREAMS", "u", ">"],
        ["COPY", "u", "v"], ["XPENDING", "v", "g"], ["XACK", "v", "g", "1-0"], ["XPENDING", "u", "g"],
        ["XPENDING", "v", "g"], ["TYPE", "v"], ["EXPIRE", "v", "100"], ["TTL", "v"], sorted_("KEYS", "*"),
    ],
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_streams(pair, name):
    f, r = pair
    try:
        mismatches, transcript = run_steps(f.port, r.port, CASES[name])
    finally:
        for srv in (f, r):
            with srv.client() as c:
                c.command("CONFIG", "SET", "stream-node-max-entries", "100")
                c.command("CONFIG", "SET", "stream-node-max-bytes", "4096")
    assert not mismatches, format_report(name, mismatches, transcript)


# ---------------------------------------------------------------- blocking

def _blocked_read(port, args, out, key):
    with RawClient(port) as c:
        out[key] = c.command(*args)


def _run_blocking(srv, setup, readers, action, settle=0.15):
    """Runs setup commands, starts blocked readers (each on its own
    connection, in order), runs `action` commands and returns the readers'
    replies."""
    out = {}
    with srv.client() as c:
        c.command("FLUSHALL")
        for s in setup:
            c.command(*s)
        threads = []
        for i, args in enumerate(readers):
            t = threading.Thread(target=_blocked_read, args=(srv.port, args, out, i))
            t.start()
            threads.append(t)
            deadline = time.time() + 5
            while time.time() < deadline:
                if b"blocked_clients:%d" % (i + 1) in c.command("INFO", "clients"):
                    break
                time.sleep(0.01)
        for a in action:
            c.command(*a)
        for t in threads:
            t.join(5)
    return [out.get(i) for i in range(len(readers))]


BLOCKING = {
    "xread_woken_by_xadd": (
        [["XADD", "s", "1", "a", "1"]],
        [["XREAD", "BLOCK", "0", "STREAMS", "s", "$"], ["XREAD", "BLOCK", "0", "STREAMS", "x", "s", "$", "$"],
         ["XREAD", "COUNT", "5", "BLOCK", "0", "STREAMS", "s", "1"]],
        [["XADD", "s", "2", "b", "2"]]),
    "xread_missing_key": (
        [], [["XREAD", "BLOCK", "0", "STREAMS", "s", "$"]], [["XADD", "s", "5", "b", "2"]]),
    "xread_timeout": (
        [["XADD", "s", "1", "a", "1"]], [["XREAD", "BLOCK", "50", "STREAMS", "s", "$"]], [["PING"]]),
    "xreadgroup_woken_fifo": (
        [["XGROUP", "CREATE", "s", "g", "$", "MKSTREAM"]],
        [["XREADGROUP", "GROUP", "g", "a", "BLOCK", "0", "STREAMS", "s", ">"],
         ["XREADGROUP", "GROUP", "g", "b", "BLOCK", "0", "STREAMS", "s", ">"],
         ["XREADGROUP", "GROUP", "g", "c", "COUNT", "1", "BLOCK", "300", "STREAMS", "s", ">"]],
        [["XADD", "s", "1", "a", "1"], ["XADD", "s", "2", "a", "2"], ["XPENDING", "s", "g"]]),
    "xreadgroup_key_deleted": (
        [["XGROUP", "CREATE", "s", "g", "$", "MKSTREAM"]],
        [["XREADGROUP", "GROUP", "g", "a", "BLOCK", "0", "STREAMS", "s", ">"],
         ["XREAD", "BLOCK", "200", "STREAMS", "s", "$"]],
        [["DEL", "s"]]),
    "xreadgroup_key_retyped": (
        [["XGROUP", "CREATE", "s", "g", "$", "MKSTREAM"]],
        [["XREADGROUP", "GROUP", "g", "a", "BLOCK", "0", "STREAMS", "s", ">"]],
        [["MULTI"], ["DEL", "s"], ["SADD", "s", "x"], ["EXEC"]]),
    "xreadgroup_flushall": (
        [["XGROUP", "CREATE", "s", "g", "$", "MKSTREAM"]],
        [["XREADGROUP", "GROUP", "g", "a", "BLOCK", "0", "STREAMS", "s", ">"]], [["FLUSHALL"]]),
    "xreadgroup_group_destroyed": (
        [["XGROUP", "CREATE", "s", "g", "$", "MKSTREAM"]],
        [["XREADGROUP", "GROUP", "g", "a", "BLOCK", "0", "STREAMS", "s", ">"]], [["XGROUP", "DESTROY", "s", "g"]]),
    "xreadgroup_noack": (
        [["XGROUP", "CREATE", "s", "g", "$", "MKSTREAM"]],
        [["XREADGROUP", "GROUP", "g", "a", "NOACK", "BLOCK", "0", "STREAMS", "s", ">"]],
        [["XADD", "s", "1", "a", "1"], ["XPENDING", "s", "g"]]),
    "xread_rename_into": (
        [["XADD", "s", "1", "a", "1"], ["XADD", "t", "9", "z", "9"]],
        [["XREAD", "BLOCK", "0", "STREAMS", "s", "$"]], [["RENAME", "t", "s"]]),
}


@pytest.mark.parametrize("name", sorted(BLOCKING))
def test_blocking(pair, name):
    setup, readers, action = BLOCKING[name]
    got = [_run_blocking(srv, setup, readers, action) for srv in pair]
    assert got[0] == got[1], "%s: ferry %r / redis %r" % (name, got[0], got[1])


def test_blocked_clients_unblock_and_timeouts(pair):
    for srv in pair:
        with srv.client() as c, srv.client() as b:
            c.command("FLUSHALL")
            b.send(encode_command([b"CLIENT", b"ID"]))
            cid = parse(b.read_reply())[1]
            b.send(encode_command([b"XREAD", b"BLOCK", b"0", b"STREAMS", b"s", b"$"]))
            time.sleep(0.1)
            assert c.command("CLIENT", "UNBLOCK", str(cid)) == b":1\r\n"
            assert b.read_reply() in (b"*-1\r\n",), srv.kind
            b.send(encode_command([b"XREAD", b"BLOCK", b"0", b"STREAMS", b"s", b"$"]))
            time.sleep(0.1)
            assert c.command("CLIENT", "UNBLOCK", str(cid), "ERROR") == b":1\r\n"
            assert b.read_reply().startswith(b"-UNBLOCKED"), srv.kind


# ---------------------------------------------------------------- random programs

KEYS = ["s1", "s2", "s3"]
FIELDS = ["a", "b", "c", "field", "1", "22"]
VALUES = ["1", "2", "-7", "x", "hello", "", "9223372036854775807", "yy" * 40]
GROUPS = ["g1", "g2"]
CONSUMERS = ["alice", "bob", "carol"]


class Gen:
    def __init__(self, seed):
        self.r = random.Random(seed)
        self.ms = {k: 1 for k in KEYS}

    def key(self):
        return self.r.choice(KEYS)

    def some_id(self, k):
        hi = self.ms[k] + 2
        return "%d-%d" % (self.r.randint(0, hi), self.r.randint(0, 3))

    def bound(self, k):
        x = self.r.random()
        if x < 0.1:
            return self.r.choice(["-", "+"])
        if x < 0.3:
            return "(" + self.some_id(k)
        if x < 0.4:
            return str(self.r.randint(0, self.ms[k] + 2))
        return self.some_id(k)

    def fields(self):
        n = self.r.choice([1, 2, 2, 3])
        fs = self.r.sample(FIELDS, n) if self.r.random() < 0.3 else FIELDS[:n]
        out = []
        for f in fs:
            out += [f, self.r.choice(VALUES)]
        return out

    def xadd(self):
        k = self.key()
        self.ms[k] += self.r.choice([0, 0, 1, 1, 2, 5])
        idf = self.r.choice(["%d" % self.ms[k], "%d-*" % self.ms[k], "%d-%d" % (self.ms[k], self.r.randint(0, 3))])
        opts = []
        if self.r.random() < 0.2:
            opts = [self.r.choice(["MAXLEN", "MINID"]), self.r.choice(["=", "~", ""])]
            opts = [o for o in opts if o]
            opts.append(str(self.r.randint(0, 12)) if opts[0] == "MAXLEN" else self.some_id(k))
            if "~" in opts and self.r.random() < 0.5:
                opts += ["LIMIT", str(self.r.randint(0, 10))]
        if self.r.random() < 0.05:
            opts = ["NOMKSTREAM"] + opts
        return ["XADD", k] + opts + [idf] + self.fields()

    def command(self):
        r, k = self.r, self.key()
        g, cn = r.choice(GROUPS), r.choice(CONSUMERS)
        ops = [
            (30, self.xadd),
            (6, lambda: ["XRANGE", k, self.bound(k), self.bound(k)] + r.choice([[], ["COUNT", str(r.randint(0, 4))]])),
            (4, lambda: ["XREVRANGE", k, self.bound(k), self.bound(k)] + r.choice([[], ["COUNT", str(r.randint(0, 4))]])),
            (3, lambda: ["XLEN", k]),
            (6, lambda: ["XDEL", k] + [self.some_id(k) for _ in range(r.randint(1, 3))]),
            (3, lambda: ["XTRIM", k, r.choice(["MAXLEN", "MINID"]), r.choice(["=", "~"]),
                         str(r.randint(0, 10)) if r.random() < 0.5 else self.some_id(k)]),
            (3, lambda: ["XREAD", "COUNT", str(r.randint(1, 4)), "STREAMS", k, self.some_id(k)]),
            (3, lambda: ["XGROUP", "CREATE", k, g, r.choice(["0", "$", self.some_id(k)])] + r.choice([[], ["MKSTREAM"]])),
            (1, lambda: ["XGROUP", "SETID", k, g, r.choice(["0", "$", self.some_id(k)])]),
            (1, lambda: ["XGROUP", "DESTROY", k, g]),
            (1, lambda: ["XGROUP", "CREATECONSUMER", k, g, cn]),
            (1, lambda: ["XGROUP", "DELCONSUMER", k, g, cn]),
            (8, lambda: ["XREADGROUP", "GROUP", g, cn, "COUNT", str(r.randint(1, 3))] + r.choice([[], ["NOACK"]])
                + ["STREAMS", k, r.choice([">", ">", ">", "0", self.some_id(k)])]),
            (5, lambda: ["XACK", k, g] + [self.some_id(k) for _ in range(r.randint(1, 3))]),
            (3, lambda: ["XPENDING", k, g]),
            (3, lambda: ["XPENDING", k, g, self.bound(k), self.bound(k), str(r.randint(0, 5))]
                + r.choice([[], [cn]])),
            (3, lambda: ["XCLAIM", k, g, cn, "0"] + [self.some_id(k) for _ in range(r.randint(1, 3))]
                + r.choice([[], ["JUSTID"], ["FORCE"], ["RETRYCOUNT", "3"], ["FORCE", "JUSTID"]])),
            (3, lambda: ["XAUTOCLAIM", k, g, cn, "0", self.some_id(k), "COUNT", str(r.randint(1, 4))]
                + r.choice([[], ["JUSTID"]])),
            (1, lambda: ["XSETID", k, self.some_id(k)]),
            (1, lambda: ["DEL", k]),
            (1, lambda: ["EXISTS", k]),
        ]
        total = sum(w for w, _ in ops)
        x = r.uniform(0, total)
        for w, f in ops:
            x -= w
            if x <= 0:
                return f()
        return ops[0][1]()


def gen_program(seed, n=400):
    g = Gen(seed)
    prog = [["CONFIG", "SET", "stream-node-max-entries", str(g.r.choice([2, 3, 5, 100]))],
            ["CONFIG", "SET", "stream-node-max-bytes", str(g.r.choice([4096, 120, 300]))]]
    return prog + [g.command() for _ in range(n)]


def _masked(args, v):
    """XPENDING's extended form: the idle times are elapsed milliseconds."""
    if args[0] == "XPENDING" and len(args) > 3 and v[0] == "array":
        out = []
        for e in v[1]:
            if e[0] == "array" and len(e[1]) == 4:
                e = ("array", [e[1][0], e[1][1], ("int", 0), e[1][3]])
            out.append(e)
        return ("array", out)
    return v


def test_random_program_is_reproducible():
    assert gen_program(3, 200) == gen_program(3, 200)
    assert len({repr(c) for c in gen_program(3, 300)}) > 150


@pytest.mark.parametrize("seed", [1, 2, 3, 4, 5, 6])
def test_random_program(pair, seed):
    f, r = pair
    program = gen_program(seed)
    log = []
    try:
        with f.client() as fc, r.client() as rc:
            for c in (fc, rc):
                c.command("FLUSHALL")
            for args in program:
                a, b = fc.command(*args), rc.command(*args)
                log.append((args, a))
                if a != b:
                    assert _masked(args, parse(a)) == _masked(args, parse(b)), (
                        "seed %d step %d %r\n ferry %r\n redis %r\n last: %r" % (seed, len(log), args, a[:400],
                                                                             b[:400], log[-6:-1]))
            for k in KEYS:  # final contents
                for q in (["XRANGE", k, "-", "+"], ["XLEN", k], ["XPENDING", k, "g1"], ["XPENDING", k, "g2"]):
                    assert fc.command(*q) == rc.command(*q), (seed, q)
    finally:
        for srv in (f, r):
            with srv.client() as c:
                c.command("CONFIG", "SET", "stream-node-max-entries", "100")
                c.command("CONFIG", "SET", "stream-node-max-bytes", "4096")


def test_xsetid_below_a_deleted_entry_then_xadd(pair):
    """XSETID may go below a deleted last entry; XADD then appends smaller
    IDs behind it in the same node (Redis does). The node keeps working
    (ranges, XDEL) and survives DUMP/RESTORE on both servers."""
    steps = [("XADD", "s", "1-1", "a", "b"), ("XADD", "s", "2-1", "a", "c"), ("XDEL", "s", "2-1"),
             ("XSETID", "s", "1-1"), ("XADD", "s", "1-2", "x", "y"), ("XADD", "s", "1-3", "x", "z")]
    dumps = []
    for srv in pair:
        with srv.client() as c:
            c.command("FLUSHALL")
            for st in steps:
                assert not c.command(*st).startswith(b"-"), st
            dumps.append(parse(c.command("DUMP", "s"))[1])
    assert dumps[0] == dumps[1]
    for srv in pair:
        with srv.client() as c:
            for i, d in enumerate(dumps):
                assert c.command("RESTORE", "r%d" % i, "0", d) == b"+OK\r\n", srv.kind
    checks = [("XRANGE", "r0", "-", "+"), ("XREVRANGE", "r1", "+", "-"), ("XRANGE", "s", "1-2", "1-5"),
              ("XDEL", "r0", "1-2"), ("XRANGE", "r0", "-", "+"), ("XLEN", "r1"), ("XINFO", "STREAM", "r1")]
    got = []
    for srv in pair:
        with srv.client() as c:
            got.append([c.command(*q) for q in checks])
    assert got[0] == got[1]


def test_xreadgroup_propagates_as_redis(server_factory):
    """XREADGROUP's effects in the append-only file, byte for byte as
    redis-server 7.0 writes them (the XCLAIM TIME argument masked): XCLAIM
    per delivered entry; with NOACK, XGROUP SETID (after CREATECONSUMER when
    the read created the consumer); nothing for a history read, a read that
    delivers nothing, or the consumer such reads create; inside MULTI too."""
    import re
    from diffkit import aof_increment
    from resp_client import RawClient
    steps = [["XADD", "s2", "1-1", "a", "1"], ["XADD", "s2", "2-1", "b", "2"], ["XGROUP", "CREATE", "s2", "g", "0"],
             ["XREADGROUP", "GROUP", "g", "c1", "COUNT", "1", "STREAMS", "s2", ">"],
             ["XREADGROUP", "GROUP", "g", "c2", "NOACK", "STREAMS", "s2", ">"],
             ["XREADGROUP", "GROUP", "g", "c3", "STREAMS", "s2", "0"],
             ["XGROUP", "CREATE", "s2", "g2", "0"], ["MULTI"],
             ["XREADGROUP", "GROUP", "g2", "c1", "COUNT", "1", "STREAMS", "s2", ">"],
             ["XREADGROUP", "GROUP", "g2", "c1", "STREAMS", "s2", ">"], ["EXEC"],
             ["XADD", "s3", "1-1", "a", "1"], ["XGROUP", "CREATE", "s3", "g", "$"],
             ["XREADGROUP", "GROUP", "g", "newc", "NOACK", "STREAMS", "s3", ">"],
             ["XADD", "s3", "2-1", "b", "2"], ["XREADGROUP", "GROUP", "g", "c9", "STREAMS", "s3", ">"],
             ["XADD", "s3", "3-1", "c", "3"], ["XREADGROUP", "GROUP", "g", "c9", "NOACK", "STREAMS", "s3", ">"],
             ["XREADGROUP", "GROUP", "g", "c10", "COUNT", "5", "STREAMS", "s3", ">"],
             ["XINFO", "CONSUMERS", "s3", "g"]]
    streams, replies = {}, {}
    for kind in ("ferry", "redis"):
        s = server_factory(kind, "--appendonly", "yes", "--appendfsync", "always")
        with RawClient(s.port) as c:
            replies[kind] = [re.sub(rb":\d+\r\n", b":N\r\n", c.command(*args)) for args in steps]
        streams[kind] = re.sub(rb"\$4\r\nTIME\r\n\$\d+\r\n\d+\r\n", b"TIME", aof_increment(s.workdir))
    assert replies["ferry"] == replies["redis"]
    assert streams["ferry"] == streams["redis"]
    assert b"CREATECONSUMER\r\n$2\r\ns2\r\n$1\r\ng\r\n$2\r\nc2" in streams["ferry"]
