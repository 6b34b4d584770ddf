"""Differential tests for XINFO (src/commands/cmd_stream_info.c): STREAM
[FULL [COUNT n]], GROUPS, CONSUMERS and HELP, against the reference
redis-server 7.0, in RESP2 and RESP3.

The streams are built by the same commands on both servers (XADD with
explicit IDs, XDEL, XTRIM, XSETID, XGROUP, XREADGROUP, XACK, XCLAIM,
XAUTOCLAIM) and every XINFO reply is compared byte for byte, except for
the fields that depend on the clock: a consumer's seen-time and idle and
a pending entry's delivery time. Those steps use the `timed` mode below:
both replies are parsed, the clock fields are taken out (by name, and by
position in the PEL entries of XINFO STREAM FULL) and compared within
TIME_TOL ms, and the rest must be equal. radix-tree-nodes is compared
exactly: ferry computes the node count of the rax redis-server would
hold for its blocks.

Also here: the block structure behind radix-tree-keys/-nodes under small
stream-node-max-entries (seeded random XADD/XDEL/XTRIM programs with IDs
that differ in every byte position), COMMAND INFO / DOCS of the container
and its subcommands, keyspace hits and misses, and seeded random programs
mixing consumer-group commands with every XINFO form.
"""
from __future__ import annotations

import random

import pytest

from diffkit import Step, format_report, hello, run_steps
from resp_client import RawClient, RespProtocolError, parse

DEFAULTS = [("CONFIG", "SET", "stream-node-max-entries", "100"),
            ("CONFIG", "SET", "stream-node-max-bytes", "4096")]

TIMED = "timed"
TIME_TOL = 1500                         # ms between the two servers' clock readings
TIME_FIELDS = {b"seen-time", b"idle"}


def timed(*args, conn=0):
    """A step whose reply holds clock-dependent integers (see the module doc)."""
    return Step("cmd", args=args, conn=conn, mode=TIMED)


def nodes(n):
    return [("CONFIG", "SET", "stream-node-max-entries", str(n))]


# ------------------------------------------------------------------ masking
def _mask_pel(v, times):
    """A PEL as XINFO STREAM FULL replies it: [id, consumer, time, count]
    (group) or [id, time, count] (consumer) entries."""
    if v[0] != "array" or v[1] is None:
        return v
    out = []
    for e in v[1]:
        if e[0] == "array" and e[1] is not None and len(e[1]) in (3, 4):
            at = len(e[1]) - 2
            times.append(e[1][at])
            e = ("array", e[1][:at] + [("masked", None)] + e[1][at + 1:])
        out.append(e)
    return ("array", out)


def _mask_value(name, v, times):
    if name in TIME_FIELDS:
        times.append(v)
        return ("masked", None)
    if name == b"pending":
        return _mask_pel(v, times)
    return _mask(v, times)


def _mask(v, times):
    """v with its clock fields replaced by ("masked", None); the replaced
    values appended to times. Field names are found as map keys (RESP3) or
    as the bulk strings of flat field/value arrays (RESP2)."""
    if v[0] == "map":
        return ("map", [(k, _mask_value(k[1], x, times)) for k, x in v[1]])
    if v[0] != "array" or v[1] is None:
        return v
    items, out, i = v[1], [], 0
    while i < len(items):
        it = items[i]
        if it[0] == "bulk" and i + 1 < len(items) and (it[1] in TIME_FIELDS or it[1] == b"pending"):
            out += [it, _mask_value(it[1], items[i + 1], times)]
            i += 2
        else:
            out.append(_mask(it, times))
            i += 1
    return ("array", out)


def timed_equal(a: bytes, b: bytes) -> bool:
    try:
        va, vb = parse(a), parse(b)
    except RespProtocolError:
        return False
    ta, tb = [], []
    if _mask(va, ta) != _mask(vb, tb) or len(ta) != len(tb):
        return False
    return all(x[0] == y[0] == "int" and x[1] >= 0 and y[1] >= 0 and abs(x[1] - y[1]) <= TIME_TOL
               for x, y in zip(ta, tb))


def test_masking_finds_the_clock_fields():
    resp2 = (b"*1\r\n*8\r\n$4\r\nname\r\n$1\r\na\r\n$9\r\nseen-time\r\n:100\r\n$9\r\npel-count\r\n:1\r\n"
             b"$7\r\npending\r\n*1\r\n*3\r\n$3\r\n1-1\r\n:100\r\n:1\r\n")
    later = resp2.replace(b":100\r\n", b":900\r\n")
    assert timed_equal(resp2, later)
    assert not timed_equal(resp2, resp2.replace(b":100\r\n", b":9000\r\n", 1))
    assert not timed_equal(resp2, resp2.replace(b":1\r\n", b":2\r\n"))
    resp3 = b"*1\r\n%3\r\n$4\r\nname\r\n$1\r\na\r\n$7\r\npending\r\n:0\r\n$4\r\nidle\r\n:5\r\n"
    assert timed_equal(resp3, resp3.replace(b":5\r\n", b":7\r\n"))
    assert not timed_equal(resp3, resp3.replace(b":0\r\n", b":1\r\n"))


# ------------------------------------------------------------------ cases
def xadds(key, ids, field="f"):
    return [("XADD", key, i, field, i) for i in ids]


def full_forms(key):
    return [timed("XINFO", "STREAM", key, "FULL"), timed("XINFO", "STREAM", key, "FULL", "COUNT", "0"),
            timed("XINFO", "STREAM", key, "FULL", "COUNT", "1"), timed("XINFO", "STREAM", key, "FULL", "COUNT", "-5"),
            timed("XINFO", "STREAM", key, "full", "count", "2")]


def all_forms(key, group=None):
    out = [("XINFO", "STREAM", key), ("XINFO", "GROUPS", key)] + full_forms(key)
    if group:
        out.append(timed("XINFO", "CONSUMERS", key, group))
    return out


LONG = "x" * 300

CASES = {
    "help_and_arity": [
        ("XINFO", "HELP"), ("xinfo", "help"), ("XINFO",), ("XINFO", "HELP", "x"), ("XINFO", "STREAM"),
        ("XINFO", "GROUPS"), ("XINFO", "GROUPS", "s", "x"), ("XINFO", "CONSUMERS", "s"),
        ("XINFO", "CONSUMERS", "s", "g", "x"), ("XINFO", "foo"), ("XINFO", "foo", "bar"), ("XINFO", LONG),
        ("XINFO", b"st\x00ream", "s"), ("XINFO", "STREAMS", "s"),
    ],
    "missing_and_wrongtype": [
        ("XINFO", "STREAM", "nokey"), ("XINFO", "STREAM", "nokey", "FULL"), ("XINFO", "STREAM", "nokey", "bogus"),
        ("XINFO", "STREAM", "nokey", "FULL", "COUNT", "x"), ("XINFO", "GROUPS", "nokey"),
        ("XINFO", "CONSUMERS", "nokey", "g"), ("SET", "str", "x"), ("XINFO", "STREAM", "str"),
        ("XINFO", "STREAM", "str", "FULL", "bogus"), ("XINFO", "GROUPS", "str"), ("XINFO", "CONSUMERS", "str", "g"),
        ("LPUSH", "l", "a"), ("XINFO", "STREAM", "l"), ("XINFO", "GROUPS", "l"),
    ],
    "stream_option_errors": xadds("s", ["1-1", "2-2"]) + [
        ("XINFO", "STREAM", "s", "FULL", "bogus"), ("XINFO", "STREAM", "s", "bogus"),
        ("XINFO", "STREAM", "s", "FULL", "COUNT"), ("XINFO", "STREAM", "s", "FULL", "COUNT", "x"),
        ("XINFO", "STREAM", "s", "FULL", "COUNT", "1.5"), ("XINFO", "STREAM", "s", "FULL", "COUNT", ""),
        ("XINFO", "STREAM", "s", "FULL", "COUNT", "99999999999999999999"),
        ("XINFO", "STREAM", "s", "FULL", "CNT", "1"), ("XINFO", "STREAM", "s", "FULL", "COUNT", "1", "x"),
        ("XINFO", "STREAM", "s", "COUNT", "1", "FULL"), ("XINFO", "STREAM", "s", "COUNT", "1"),
        ("XINFO", "StReAm", "s", "x"), ("XINFO", "STREAM", "s", "FULL", "COUNT", "1", "COUNT", "2"),
        ("XINFO", "STREAM", "s", "FULL", "COUNT", "-1"), ("XINFO", "STREAM", "s", "FULL", "COUNT", "0"),
        ("XINFO", "STREAM", "s", "FULL", "COUNT", "+1"),
        ("XINFO", "STREAM", "s", "FULL", "COUNT", "9223372036854775807"),
        ("XINFO", "STREAM", "s", "FULL", "COUNT", "-9223372036854775808"),
    ],
    "nogroup": xadds("s", ["1-1"]) + [
        ("XINFO", "CONSUMERS", "s", "g"), ("XGROUP", "CREATE", "s", "g", "0"), ("XINFO", "CONSUMERS", "s", "G"),
        ("XINFO", "CONSUMERS", "s", b"g\x00x"), ("XINFO", "CONSUMERS", "s", LONG),
        ("XINFO", "CONSUMERS", "s", "a\r\nb"), ("XADD", b"k\x00y", "1-1", "f", "v"),
        ("XINFO", "CONSUMERS", b"k\x00y", "nope"), ("XINFO", "CONSUMERS", "s", ""),
        ("XINFO", "CONSUMERS", "s", "g"),
    ],
    "stream_basic": xadds("s", ["1-1", "1-2", "5-0", "5-1", "7-0"]) + [
        ("XADD", "s", "9-0", "a", "1", "b", "2", "c", "3"), ("XADD", "s", "9-1", "a", "", b"\x00\xff", "x" * 100),
        ("XADD", "s", "10-0", "n", "12345", "m", "-7", "big", "99999999999999999999"),
    ] + all_forms("s") + [
        ("XDEL", "s", "1-1"), ("XINFO", "STREAM", "s"), ("XDEL", "s", "10-0"), ("XINFO", "STREAM", "s"),
        ("XDEL", "s", "5-0"), ("XINFO", "STREAM", "s"), ("XINFO", "STREAM", "s", "FULL", "COUNT", "3"),
        ("XTRIM", "s", "MAXLEN", "2"), ("XINFO", "STREAM", "s"), ("XTRIM", "s", "MINID", "9-1"),
        ("XINFO", "STREAM", "s", "FULL"), ("XTRIM", "s", "MAXLEN", "0"), ("XINFO", "STREAM", "s"),
        ("XINFO", "STREAM", "s", "FULL"), ("XLEN", "s"), ("EXISTS", "s"),
    ],
    "empty_streams": [
        ("XADD", "s", "3-3", "f", "v"), ("XDEL", "s", "3-3"), ("XINFO", "STREAM", "s"),
        ("XINFO", "STREAM", "s", "FULL"),
        ("XINFO", "GROUPS", "s"), ("XGROUP", "CREATE", "m", "g", "$", "MKSTREAM"), ("XINFO", "STREAM", "m"),
        ("XINFO", "STREAM", "m", "FULL"), ("XINFO", "GROUPS", "m"), ("XINFO", "CONSUMERS", "m", "g"),
        ("XADD", "n", "NOMKSTREAM", "1-1", "f", "v"), ("XINFO", "STREAM", "n"),
        ("XADD", "t", "MAXLEN", "0", "1-1", "f", "v"), ("XINFO", "STREAM", "t"), ("XINFO", "STREAM", "t", "FULL"),
    ],
    "xsetid": xadds("s", ["1-1", "2-0", "3-0"]) + [
        ("XSETID", "s", "10-0"), ("XINFO", "STREAM", "s"), ("XSETID", "s", "11-0", "ENTRIESADDED", "50"),
        ("XINFO", "STREAM", "s"), ("XSETID", "s", "12-0", "ENTRIESADDED", "60", "MAXDELETEDID", "11-5"),
        ("XINFO", "STREAM", "s"), ("XINFO", "STREAM", "s", "FULL"), ("XDEL", "s", "2-0"), ("XINFO", "STREAM", "s"),
        ("XADD", "e", "5-5", "f", "v"), ("XDEL", "e", "5-5"),
        ("XSETID", "e", "7-0", "ENTRIESADDED", "9", "MAXDELETEDID", "6-0"), ("XINFO", "STREAM", "e"),
        ("XSETID", "e", "18446744073709551615-18446744073709551615"), ("XINFO", "STREAM", "e"),
    ],
    "big_ids": xadds("s", ["0-1", "255-0", "256-0", "65535-65535", "65536-0", "4294967296-1",
                           "1099511627776-0", "72057594037927935-0", "72057594037927936-0",
                           "18446744073709551615-0", "18446744073709551615-255",
                           "18446744073709551615-18446744073709551614"]) + all_forms("s"),
    "nodes_small": nodes(2) + xadds("s", ["1-1", "1-2", "1-3", "2-0", "256-0", "256-1", "257-0", "65536-9",
                                          "65536-10", "65792-0", "4294967296-0", "4294967296-256"]) + [
        ("XINFO", "STREAM", "s"), ("XDEL", "s", "1-3"), ("XINFO", "STREAM", "s"), ("XDEL", "s", "2-0"),
        ("XINFO", "STREAM", "s"), ("XDEL", "s", "256-0", "256-1"), ("XINFO", "STREAM", "s"),
        ("XTRIM", "s", "MAXLEN", "~", "5"), ("XINFO", "STREAM", "s"), ("XTRIM", "s", "MINID", "65792-0"),
        ("XINFO", "STREAM", "s"), ("XINFO", "STREAM", "s", "FULL", "COUNT", "0"),
    ],
    "nodes_one_per_block": nodes(1) + xadds("s", ["%d-%d" % (1 << (8 * b), b) for b in range(7)]
                                              + ["%d-%d" % ((1 << 56) + 1, 1 << (8 * b)) for b in range(8)]) + [
        ("XINFO", "STREAM", "s"), ("XDEL", "s", "1-0"), ("XINFO", "STREAM", "s"),
        ("XTRIM", "s", "MAXLEN", "3"), ("XINFO", "STREAM", "s"),
    ],
    "node_bytes": [("CONFIG", "SET", "stream-node-max-bytes", "60")]
    + xadds("s", ["%d-0" % i for i in range(1, 30)]) + [
        ("XINFO", "STREAM", "s"), ("CONFIG", "SET", "stream-node-max-bytes", "0"),
        ("CONFIG", "SET", "stream-node-max-entries", "0"), ("XADD", "s", "100-0", "f", "v"), ("XINFO", "STREAM", "s"),
    ],
    # ------------------------------------------------------------ groups
    "groups_listing": xadds("s", ["1-1", "2-1", "3-1"]) + [
        ("XGROUP", "CREATE", "s", "gb", "0"), ("XGROUP", "CREATE", "s", "ga", "$"),
        ("XGROUP", "CREATE", "s", "g", "2-1"), ("XGROUP", "CREATE", "s", "G", "0", "ENTRIESREAD", "0"),
        ("XGROUP", "CREATE", "s", "g1", "1-1", "ENTRIESREAD", "1"), ("XGROUP", "CREATE", "s", b"\x00z", "0"),
        ("XGROUP", "CREATE", "s", b"\xffz", "3-1"), ("XGROUP", "CREATE", "s", "", "0"),
        ("XINFO", "GROUPS", "s"), ("XINFO", "STREAM", "s"), ("XINFO", "STREAM", "s", "FULL"),
        ("XGROUP", "DESTROY", "s", "g"), ("XINFO", "GROUPS", "s"), ("XINFO", "CONSUMERS", "s", "gb"),
    ],
    "lag_rules": xadds("s", ["1-1", "2-1", "3-1", "4-1", "5-1"]) + [
        ("XGROUP", "CREATE", "s", "zero", "0"), ("XGROUP", "CREATE", "s", "last", "$"),
        ("XGROUP", "CREATE", "s", "mid", "3-1"), ("XGROUP", "CREATE", "s", "known", "3-1", "ENTRIESREAD", "3"),
        ("XGROUP", "CREATE", "s", "future", "9-9"), ("XGROUP", "CREATE", "s", "first", "1-1"),
        ("XGROUP", "CREATE", "s", "before", "0-5"), ("XINFO", "GROUPS", "s"),
        ("XREADGROUP", "GROUP", "zero", "c", "COUNT", "2", "STREAMS", "s", ">"), ("XINFO", "GROUPS", "s"),
        ("XDEL", "s", "4-1"), ("XINFO", "GROUPS", "s"), ("XREADGROUP", "GROUP", "zero", "c", "STREAMS", "s", ">"),
        ("XINFO", "GROUPS", "s"), ("XDEL", "s", "1-1"), ("XINFO", "GROUPS", "s"),
        ("XADD", "s", "6-1", "f", "v"), ("XINFO", "GROUPS", "s"),
        ("XGROUP", "SETID", "s", "mid", "5-1", "ENTRIESREAD", "5"), ("XINFO", "GROUPS", "s"),
        ("XGROUP", "SETID", "s", "known", "$"), ("XGROUP", "SETID", "s", "first", "0"), ("XINFO", "GROUPS", "s"),
        ("XTRIM", "s", "MAXLEN", "0"), ("XINFO", "GROUPS", "s"), ("XINFO", "STREAM", "s"),
        ("XSETID", "s", "6-1", "ENTRIESADDED", "100"), ("XINFO", "GROUPS", "s"),
        ("XGROUP", "CREATE", "fresh", "g", "$", "MKSTREAM"), ("XGROUP", "CREATE", "fresh", "h", "0", "MKSTREAM"),
        ("XINFO", "GROUPS", "fresh"), ("XADD", "fresh", "1-1", "f", "v"), ("XINFO", "GROUPS", "fresh"),
    ],
    "readgroup_pel": xadds("s", ["1-1", "2-1", "3-1", "4-1", "5-1", "6-1"]) + [
        ("XGROUP", "CREATE", "s", "g", "0"), ("XGROUP", "CREATE", "s", "h", "0"),
        ("XREADGROUP", "GROUP", "g", "bob", "COUNT", "2", "STREAMS", "s", ">"),
        ("XREADGROUP", "GROUP", "g", "alice", "COUNT", "3", "STREAMS", "s", ">"),
        ("XREADGROUP", "GROUP", "g", "al", "STREAMS", "s", "0"),
        ("XREADGROUP", "GROUP", "h", "x", "NOACK", "STREAMS", "s", ">"),
    ] + all_forms("s", "g") + [
        timed("XINFO", "CONSUMERS", "s", "h"), ("XACK", "s", "g", "1-1", "4-1"), ("XINFO", "GROUPS", "s"),
        timed("XINFO", "CONSUMERS", "s", "g"), timed("XINFO", "STREAM", "s", "FULL", "COUNT", "1"),
        ("XREADGROUP", "GROUP", "g", "bob", "STREAMS", "s", "0"), timed("XINFO", "STREAM", "s", "FULL"),
        ("XDEL", "s", "2-1"), ("XREADGROUP", "GROUP", "g", "bob", "STREAMS", "s", "0"),
        timed("XINFO", "STREAM", "s", "FULL"), ("XGROUP", "DELCONSUMER", "s", "g", "alice"),
        ("XGROUP", "CREATECONSUMER", "s", "g", "zed"), ("XGROUP", "CREATECONSUMER", "s", "g", b"a\x00b"),
        ("XINFO", "GROUPS", "s"), timed("XINFO", "CONSUMERS", "s", "g"), timed("XINFO", "STREAM", "s", "FULL"),
    ],
    "claims": xadds("s", ["1-1", "2-1", "3-1", "4-1"]) + [
        ("XGROUP", "CREATE", "s", "g", "0"), ("XREADGROUP", "GROUP", "g", "a", "STREAMS", "s", ">"),
        ("XCLAIM", "s", "g", "b", "0", "1-1", "2-1", "JUSTID"), timed("XINFO", "STREAM", "s", "FULL"),
        ("XCLAIM", "s", "g", "c", "0", "3-1", "RETRYCOUNT", "7", "TIME", "1000"),
        timed("XINFO", "STREAM", "s", "FULL"), timed("XINFO", "CONSUMERS", "s", "g"),
        ("XCLAIM", "s", "g", "d", "0", "9-9", "FORCE"), ("XCLAIM", "s", "g", "d", "0", "4-1", "IDLE", "5000"),
        timed("XINFO", "STREAM", "s", "FULL"), ("XAUTOCLAIM", "s", "g", "e", "0", "0", "COUNT", "2"),
        timed("XINFO", "STREAM", "s", "FULL"), ("XINFO", "GROUPS", "s"), ("XPENDING", "s", "g"),
        ("XDEL", "s", "4-1"), ("XAUTOCLAIM", "s", "g", "e", "0", "0"), timed("XINFO", "STREAM", "s", "FULL"),
        ("XACK", "s", "g", "1-1", "2-1", "3-1", "4-1", "9-9"), timed("XINFO", "STREAM", "s", "FULL"),
        timed("XINFO", "CONSUMERS", "s", "g"),
    ],
    # Redis 7.0 creates an XREADGROUP consumer only when the read is served
    # (new entries, or its history with an ID); a read that finds nothing
    # (or blocks and times out) leaves no consumer behind.
    "readgroup_consumer_creation": xadds("s", ["1-1"]) + [
        ("XGROUP", "CREATE", "s", "g", "$"), ("XREADGROUP", "GROUP", "g", "c1", "STREAMS", "s", ">"),
        timed("XINFO", "CONSUMERS", "s", "g"), ("XDEL", "s", "1-1"),
        ("XREADGROUP", "GROUP", "g", "c2", "STREAMS", "s", ">"), ("XINFO", "GROUPS", "s"),
        ("XREADGROUP", "GROUP", "g", "c3", "STREAMS", "s", "0"), timed("XINFO", "CONSUMERS", "s", "g"),
        ("XREADGROUP", "GROUP", "g", "c4", "BLOCK", "10", "STREAMS", "s", ">"), ("XINFO", "GROUPS", "s"),
        ("XADD", "s", "2-1", "f", "v"), ("XREADGROUP", "GROUP", "g", "c5", "STREAMS", "s", ">"),
        timed("XINFO", "CONSUMERS", "s", "g"),
    ],
    "full_count_limits": xadds("s", ["%d-0" % i for i in range(1, 26)]) + [
        ("XGROUP", "CREATE", "s", "g", "0"), ("XREADGROUP", "GROUP", "g", "c1", "COUNT", "13", "STREAMS", "s", ">"),
        ("XREADGROUP", "GROUP", "g", "c2", "STREAMS", "s", ">"),
    ] + full_forms("s") + [
        timed("XINFO", "STREAM", "s", "FULL", "COUNT", "12"), timed("XINFO", "STREAM", "s", "FULL", "COUNT", "13"),
        timed("XINFO", "STREAM", "s", "FULL", "COUNT", "25"), timed("XINFO", "STREAM", "s", "FULL", "COUNT", "26"),
    ],
}


def _run_case(pair, name, steps):
    f, r = pair
    assert f.alive(), "ferry died before case %r; log tail:\n%s" % (name, f.log_tail())
    mismatches, transcript = run_steps(f.port, r.port, DEFAULTS + list(steps))
    assert f.alive(), "ferry died during case %r; log tail:\n%s" % (name, f.log_tail())
    real = [m for m in mismatches if not (m.step.mode == TIMED and timed_equal(m.ferry, m.redis))]
    if real:
        pytest.fail(format_report(name, real, transcript), pytrace=False)


@pytest.mark.parametrize("resp", [2, 3])
@pytest.mark.parametrize("name", sorted(CASES))
def test_xinfo_case(pair, name, resp):
    head = [hello("3")] if resp == 3 else []
    _run_case(pair, name, head + CASES[name])


def test_command_info_and_docs(pair):
    f, r = pair
    infos = []
    for port in (f.port, r.port):
        with RawClient(port) as c:
            infos.append(parse(c.command("COMMAND", "INFO", "xinfo"))[1][0][1])
    fi, ri = infos
    assert fi[:7] == ri[:7]
    subs = [sorted(repr(s[1][:7]) for s in x[9][1]) for x in (fi, ri)]
    assert subs[0] == subs[1]
    for name in ("xinfo", "xinfo|stream", "xinfo|groups", "xinfo|consumers", "xinfo|help"):
        docs = []
        for port in (f.port, r.port):
            with RawClient(port) as c:
                v = parse(c.command("COMMAND", "DOCS", name))[1][1][1]
            d = {v[i][1]: v[i + 1] for i in range(0, len(v), 2)}
            docs.append({k: d.get(k) for k in (b"summary", b"since", b"group", b"complexity")})
        assert docs[0] == docs[1], (name, docs)


STAT_STEPS = [
    ("XADD", "s", "1-1", "f", "v"), ("XGROUP", "CREATE", "s", "g", "0"), ("XINFO", "STREAM", "s"),
    ("XINFO", "STREAM", "nokey"), ("XINFO", "STREAM", "s", "FULL"), ("XINFO", "STREAM", "s", "bogus"),
    ("XINFO", "GROUPS", "s"), ("XINFO", "GROUPS", "nokey"), ("XINFO", "CONSUMERS", "s", "g"),
    ("XINFO", "CONSUMERS", "s", "nogroup"), ("XINFO", "CONSUMERS", "nokey", "g"), ("XINFO", "HELP"),
    ("SET", "str", "x"), ("XINFO", "STREAM", "str"),
]


def _stats(port):
    with RawClient(port) as c:
        info = parse(c.command("INFO", "stats"))[1].decode()
    return {k: int(v) for k, v in (line.split(":") for line in info.split("\r\n")
                                   if line.startswith(("keyspace_hits:", "keyspace_misses:")))}


def test_keyspace_hits_misses(pair):
    f, r = pair
    seen = []
    for port in (f.port, r.port):
        with RawClient(port) as c:
            assert c.command("FLUSHALL") == b"+OK\r\n"
            assert c.command("CONFIG", "RESETSTAT") == b"+OK\r\n"
            per_step = []
            for st in STAT_STEPS:
                c.command(*st)
                per_step.append(_stats(port))
        seen.append(per_step)
    for st, a, b in zip(STAT_STEPS, *seen):
        assert a == b, "after %r: ferry %r, redis %r" % (st, a, b)


# ------------------------------------------------------------------ random programs
def _id_gen(r):
    """IDs that grow by steps touching every byte of the 16-byte rax key."""
    state = {"ms": r.choice([0, 1, 255, 65535, 1 << 40, 1 << 62]), "seq": 0}

    def nxt():
        x = r.random()
        if x < 0.45:
            state["seq"] += r.choice([1, 1, 2, 255, 256, 70000, 1 << 33])
        else:
            state["ms"] += r.choice([1, 2, 255, 256, 65536, 1 << 24, 1 << 40])
            state["seq"] = r.choice([0, 0, 7, 1 << 40])
        return "%d-%d" % (state["ms"], state["seq"])
    return nxt


def gen_block_program(seed, n=300):
    """XADD/XDEL/XTRIM under small node limits, XINFO STREAM after each."""
    r = random.Random(seed)
    steps = nodes(r.choice([1, 2, 3, 5, 100]))
    nxt, ids = _id_gen(r), []
    for _ in range(n):
        x = r.random()
        if x < 0.6 or not ids:
            ids.append(nxt())
            steps.append(("XADD", "s", ids[-1], "f", "v"))
        elif x < 0.85:
            steps.append(("XDEL", "s") + tuple(r.choice(ids) for _ in range(r.randint(1, 3))))
        elif x < 0.93:
            steps.append(("XTRIM", "s", "MAXLEN", r.choice(["~", "="]), str(r.randint(0, 20))))
        else:
            steps.append(("XTRIM", "s", "MINID", r.choice(["~", "="]), r.choice(ids)))
        steps.append(("XINFO", "STREAM", "s"))
    return steps


def gen_group_program(seed, n=250):
    """Stream and consumer-group commands on one stream, every XINFO form in between."""
    r = random.Random(seed)
    steps = nodes(r.choice([2, 4, 100]))
    nxt, ids = _id_gen(r), []
    groups, consumers = ["g1", "g2", "ga"], ["c1", "c2", "c10", "d"]
    for _ in range(n):
        x = r.random()
        g, c = r.choice(groups), r.choice(consumers)
        if x < 0.3 or not ids:
            ids.append(nxt())
            st = ("XADD", "s", ids[-1], "f", "v")
        elif x < 0.38:
            st = ("XDEL", "s", r.choice(ids))
        elif x < 0.42:
            st = ("XTRIM", "s", "MAXLEN", r.choice(["~", "="]), str(r.randint(0, 10)))
        elif x < 0.5:
            st = ("XGROUP", "CREATE", "s", g, r.choice(["0", "$", r.choice(ids)]))
        elif x < 0.53:
            st = ("XGROUP", "SETID", "s", g, r.choice(["0", "$", r.choice(ids)]))
        elif x < 0.65:
            st = ("XREADGROUP", "GROUP", g, c, "COUNT", str(r.randint(1, 4)), "STREAMS", "s", r.choice([">", ">", "0"]))
        elif x < 0.72:
            st = ("XACK", "s", g) + tuple(r.choice(ids) for _ in range(r.randint(1, 3)))
        elif x < 0.77:
            st = ("XCLAIM", "s", g, c, "0", r.choice(ids))
        elif x < 0.79:
            st = ("XGROUP", "DELCONSUMER", "s", g, c)
        elif x < 0.8:
            st = ("XGROUP", "DESTROY", "s", g)
        elif x < 0.86:
            st = ("XINFO", "GROUPS", "s")
        elif x < 0.93:
            st = timed("XINFO", "STREAM", "s", "FULL", "COUNT", str(r.choice([0, 1, 3, 10])))
        else:
            st = timed("XINFO", "CONSUMERS", "s", g)
        steps.append(st)
        if r.random() < 0.3:
            steps.append(("XINFO", "STREAM", "s"))
    return steps + [("XINFO", "STREAM", "s"), ("XINFO", "GROUPS", "s"),
                    timed("XINFO", "STREAM", "s", "FULL", "COUNT", "0")]


def _describe(steps):
    return [s.describe() if isinstance(s, Step) else repr(s) for s in steps]


def test_random_programs_are_reproducible():
    assert _describe(gen_block_program(3)) == _describe(gen_block_program(3))
    assert _describe(gen_group_program(3)) == _describe(gen_group_program(3))


@pytest.mark.parametrize("seed", range(12))
def test_random_block_program(pair, seed):
    _run_case(pair, "gen_block_program(%d)" % seed, gen_block_program(seed))


@pytest.mark.parametrize("seed", range(8))
def test_random_group_program(pair, seed):
    _run_case(pair, "gen_group_program(%d)" % seed, gen_group_program(seed))


def test_random_group_program_resp3(pair):
    _run_case(pair, "gen_group_program(100) in RESP3", [hello("3")] + gen_group_program(100))
