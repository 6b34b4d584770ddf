"""Differential tests for HyperLogLog (src/commands/cmd_hll.c over
src/keyspace/hll.c) against redis-server 7.0.

An HLL is a string whose bytes are the sketch, so after every interesting
step the cases GET the key and compare the bytes exactly (header, cached
cardinality and its stale bit, sparse opcodes as split and merged, the dense
6-bit packing), besides every reply: PFADD/PFCOUNT/PFMERGE, PFDEBUG
(GETREG, DECODE, ENCODING, TODENSE), the WRONGTYPE and INVALIDOBJ errors for
damaged values written with SET/SETRANGE/APPEND, promotion to dense at
hll-sparse-max-bytes, WATCH and keyspace notifications, and seeded random
programs with thousands of elements compared by GET bytes and PFCOUNT.
"""
from __future__ import annotations

import random
import struct

import pytest

from diffkit import cmd, format_report, raw, run_steps

HDR_SPARSE = b"HYLL\x01\x00\x00\x00" + b"\x00" * 7 + b"\x80"   # stale cache
HDR_DENSE = b"HYLL\x00\x00\x00\x00" + b"\x00" * 7 + b"\x80"
XZERO_ALL = b"\x7f\xff"                                          # 16384 zero registers


def xzero(n):
    return bytes([0x40 | ((n - 1) >> 8), (n - 1) & 0xff])


def zero(n):
    return bytes([n - 1])


def val(v, n):
    return bytes([0x80 | ((v - 1) << 2) | (n - 1)])


def probe(key="h"):
    """The steps that look at a value from every side."""
    return [["GET", key], ["PFCOUNT", key], ["GET", key], ["PFDEBUG", "ENCODING", key],
            ["PFADD", key, "probe-a", "probe-b"], ["GET", key], ["PFCOUNT", key, "nokey"],
            ["PFMERGE", "dst", key], ["GET", "dst"], ["DEL", "dst"]]


def elements(prefix, n, start=0):
    return ["%s%d" % (prefix, i) for i in range(start, start + n)]


CASES = {
    "basics": [
        ["PFADD", "h", "a", "b", "c"], ["GET", "h"], ["PFCOUNT", "h"], ["GET", "h"],
        ["PFADD", "h", "a"], ["GET", "h"], ["PFADD", "h"], ["PFADD", "new"], ["GET", "new"],
        ["PFCOUNT", "new"], ["GET", "new"], ["TYPE", "h"], ["OBJECT", "ENCODING", "h"], ["STRLEN", "h"],
        ["PFCOUNT", "missing"], ["PFCOUNT", "h", "missing"], ["PFCOUNT", "missing", "missing2"],
        ["PFADD", "h", "", b"\x00", b"\xff" * 9, "x" * 1000], ["GET", "h"], ["PFCOUNT", "h"],
        ["PFADD", "h2", "c", "d", "e"], ["PFCOUNT", "h", "h2"], ["GET", "h2"],
        ["PFMERGE", "m", "h", "h2"], ["GET", "m"], ["PFCOUNT", "m"], ["GET", "m"],
        ["PFMERGE", "m"], ["GET", "m"], ["PFMERGE", "empty"], ["GET", "empty"], ["PFMERGE", "m2", "none"],
        ["GET", "m2"], ["PFMERGE", "h", "h2"], ["GET", "h"], ["OBJECT", "ENCODING", "m"],
        ["PFADD"], ["PFCOUNT"], ["PFMERGE"], ["PFDEBUG", "ENCODING"], ["PFSELFTEST", "x"],
    ],
    "sparse_edits": [
        # one element at a time: every split / merge path of the sparse form
        *[step for e in elements("s", 120) for step in (["PFADD", "h", e], ["GET", "h"])],
        ["PFCOUNT", "h"], ["GET", "h"], ["PFDEBUG", "DECODE", "h"],
    ],
    "dense_promotion_default": [
        ["PFADD", "h", *elements("e", 500)], ["PFDEBUG", "ENCODING", "h"], ["GET", "h"],
        ["PFADD", "h", *elements("e", 1500, 500)], ["PFDEBUG", "ENCODING", "h"], ["GET", "h"],
        ["PFADD", "h", *elements("e", 3000, 2000)], ["PFDEBUG", "ENCODING", "h"], ["GET", "h"],
        ["PFCOUNT", "h"], ["GET", "h"], ["PFADD", "h", *elements("e", 20)], ["GET", "h"],
        ["PFADD", "h", *elements("f", 50000)], ["PFCOUNT", "h"], ["GET", "h"],
        ["PFADD", "s", "one"], ["PFCOUNT", "s", "h"], ["PFMERGE", "s", "h"], ["PFDEBUG", "ENCODING", "s"],
        ["GET", "s"], ["PFCOUNT", "s"],
    ],
    "sparse_max_bytes": [
        ["CONFIG", "SET", "hll-sparse-max-bytes", "30"], ["PFADD", "h", *elements("a", 3)], ["GET", "h"],
        ["PFDEBUG", "ENCODING", "h"], ["PFADD", "h", *elements("a", 10)], ["PFDEBUG", "ENCODING", "h"],
        ["GET", "h"], ["CONFIG", "SET", "hll-sparse-max-bytes", "0"], ["PFADD", "z", "x"],
        ["PFDEBUG", "ENCODING", "z"], ["GET", "z"], ["PFADD", "z0"], ["PFDEBUG", "ENCODING", "z0"],
        ["CONFIG", "SET", "hll-sparse-max-bytes", "100000"], ["PFADD", "big", *elements("b", 8000)],
        ["PFDEBUG", "ENCODING", "big"], ["GET", "big"], ["PFCOUNT", "big"],
        ["CONFIG", "GET", "hll-sparse-max-bytes"], ["CONFIG", "SET", "hll-sparse-max-bytes", "3000"],
    ],
    "pfdebug": [
        ["PFDEBUG", "ENCODING", "h"], ["PFDEBUG", "GETREG", "h"], ["PFDEBUG", "nosuch", "h"],
        ["PFADD", "h", *elements("r", 40)], ["PFDEBUG", "DECODE", "h"], ["PFDEBUG", "decode", "h"],
        ["PFDEBUG", "ENCODING", "h"], ["PFDEBUG", "nosuch", "h"], ["PFDEBUG", b"getreg\x00x", "h"],
        ["PFDEBUG", "GETREG", "h"], ["GET", "h"], ["PFDEBUG", "ENCODING", "h"], ["PFDEBUG", "DECODE", "h"],
        ["PFDEBUG", "TODENSE", "h"], ["PFADD", "s", "x"], ["PFDEBUG", "TODENSE", "s"], ["GET", "s"],
        ["PFDEBUG", "TODENSE", "s"], ["PFDEBUG", "GETREG", "s"], ["PFDEBUG", "ENCODING", "s"],
        ["PFDEBUG", "ENCODING", "h", "extra"], ["PFDEBUG", "GETREG"], ["SET", "str", "abc"],
        ["PFDEBUG", "ENCODING", "str"], ["LPUSH", "l", "a"], ["PFDEBUG", "ENCODING", "l"],
        ["PFSELFTEST"],
    ],
    "wrongtype": [
        ["SET", "s", "hello"], ["PFADD", "s", "a"], ["PFCOUNT", "s"], ["PFCOUNT", "s", "x"],
        ["PFMERGE", "d", "s"], ["PFMERGE", "s", "d"], ["EXISTS", "d"], ["GET", "s"],
        ["SET", "i", "12345"], ["PFADD", "i", "a"], ["PFCOUNT", "i"],
        ["SET", "hdr", "HYLL"], ["PFADD", "hdr", "a"], ["SET", "hdr", HDR_SPARSE[:15]], ["PFCOUNT", "hdr"],
        ["SET", "enc2", b"HYLL\x02" + HDR_SPARSE[5:] + XZERO_ALL], ["PFADD", "enc2", "a"], ["PFCOUNT", "enc2"],
        ["SET", "short_dense", HDR_DENSE + b"\x00" * 100], ["PFCOUNT", "short_dense"],
        ["PFADD", "short_dense", "x"], ["PFMERGE", "x", "short_dense"],
        ["SET", "long_dense", HDR_DENSE + b"\x00" * 12289], ["PFCOUNT", "long_dense"],
        ["SET", "magic", b"HYLM\x01" + HDR_SPARSE[5:] + XZERO_ALL], ["PFCOUNT", "magic"],
        ["LPUSH", "l", "a"], ["PFADD", "l", "a"], ["PFCOUNT", "l"], ["PFCOUNT", "l", "s"],
        ["PFMERGE", "l", "s"], ["PFMERGE", "d2", "l"], ["PFDEBUG", "GETREG", "l"],
        ["HSET", "hh", "f", "v"], ["PFCOUNT", "nokey", "hh"],
    ],
    "cache": [
        ["PFADD", "h", "a", "b"], ["GET", "h"], ["PFCOUNT", "h"], ["GET", "h"],
        # a valid cache is returned as stored, whatever the registers say
        ["SETRANGE", "h", "8", b"\x39\x30\x00\x00\x00\x00\x00\x00"], ["PFCOUNT", "h"], ["GET", "h"],
        ["SETRANGE", "h", "8", b"\xff\xff\xff\xff\xff\xff\xff\x7f"], ["PFCOUNT", "h"],
        ["SETRANGE", "h", "15", b"\x80"], ["PFCOUNT", "h"], ["GET", "h"],
        ["SETRANGE", "h", "5", b"abc"], ["PFADD", "h", "zz"], ["GET", "h"], ["PFDEBUG", "TODENSE", "h"],
        ["GET", "h"], ["PFCOUNT", "h"], ["GET", "h"],
    ],
    "watch": [
        ["PFADD", "h", "a"], ["WATCH", "h"], cmd("PFCOUNT", "h", conn=1), ["MULTI"], ["PING"], ["EXEC"],
        ["WATCH", "h"], cmd("PFCOUNT", "h", conn=1), ["MULTI"], ["PING"], ["EXEC"],
        ["WATCH", "h"], cmd("PFADD", "h", "a", conn=1), ["MULTI"], ["PING"], ["EXEC"],
        ["WATCH", "h"], cmd("PFADD", "h", "b", conn=1), ["MULTI"], ["PING"], ["EXEC"],
        ["WATCH", "h"], cmd("PFMERGE", "h", conn=1), ["MULTI"], ["PING"], ["EXEC"],
        ["WATCH", "h"], cmd("PFDEBUG", "TODENSE", "h", conn=1), ["MULTI"], ["PING"], ["EXEC"],
        ["MULTI"], ["PFADD", "h", "c"], ["PFCOUNT", "h"], ["PFMERGE", "x", "h"], ["EXEC"], ["GET", "x"],
    ],
    "notifications": [
        ["CONFIG", "SET", "notify-keyspace-events", "KEA"], cmd("PSUBSCRIBE", "__key*__:*", conn=1),
        ["PFADD", "h", "a"], raw(b"", n=4, conn=1),
        ["PFADD", "h", "a"], ["PFADD", "h", "b", "c"], raw(b"", n=2, conn=1),
        ["PFMERGE", "m", "h"], raw(b"", n=4, conn=1),
        ["PFMERGE", "m", "h"], raw(b"", n=2, conn=1),
        ["CONFIG", "SET", "notify-keyspace-events", ""],
    ],
    "dense_odd_registers": [
        ["SET", "h", HDR_DENSE + b"\xff" * 12288], ["PFCOUNT", "h"], ["GET", "h"], ["PFADD", "h", "a"],
        ["PFCOUNT", "h", "x"], ["PFDEBUG", "GETREG", "h"], ["PFMERGE", "s", "h"], ["GET", "s"],
        ["SET", "h", HDR_DENSE + bytes(range(256)) * 48], ["PFCOUNT", "h"], ["PFCOUNT", "h", "s"],
        ["PFDEBUG", "DECODE", "h"], ["PFDEBUG", "ENCODING", "h"],
        ["SET", "e", HDR_SPARSE + XZERO_ALL], ["OBJECT", "ENCODING", "e"], ["PFCOUNT", "e"],
        ["OBJECT", "ENCODING", "e"], ["SET", "e", HDR_SPARSE[:15] + b"\x00" + XZERO_ALL], ["PFCOUNT", "e"],
        ["OBJECT", "ENCODING", "e"], ["SET", "e", HDR_SPARSE + XZERO_ALL], ["PFDEBUG", "ENCODING", "e"],
        ["OBJECT", "ENCODING", "e"], ["SET", "e", HDR_SPARSE + XZERO_ALL], ["PFADD", "e"],
        ["OBJECT", "ENCODING", "e"], ["GET", "e"],
    ],
    "expire_kept": [
        ["PFADD", "h", "a"], ["EXPIRE", "h", "1000"], ["PFADD", "h", *elements("x", 3000)], ["TTL", "h"],
        ["PFCOUNT", "h"], ["TTL", "h"], ["PFMERGE", "h", "h"], ["TTL", "h"], ["PFDEBUG", "TODENSE", "h"],
        ["TTL", "h"],
    ],
    "dump_restore": [
        ["PFADD", "h", *elements("d", 30)], ["DUMP", "h"], ["PFADD", "d", *elements("d", 3000)],
        ["PFCOUNT", "d"], ["DUMP", "d"], ["COPY", "d", "d2"], ["PFADD", "d2", "new"], ["GET", "d2"],
    ],
}


def _corrupt_cases():
    """Damaged values: each is SET (or built with SETRANGE) and then looked
    at from every side."""
    bodies = {
        "empty_body": b"",
        "extra_zero": XZERO_ALL + zero(1),
        "extra_xzero": XZERO_ALL + XZERO_ALL,
        "short": xzero(16383),
        "cut_xzero_ok": xzero(16383) + b"\x40",
        "cut_xzero_bad": b"\x7f",
        "cut_xzero_mid": xzero(100) + b"\x41",
        "val_over": xzero(16383) + val(1, 4),
        "val_after_end": XZERO_ALL + val(1, 1),
        "zero_after_end": XZERO_ALL + zero(1) + val(1, 1),
        "only_vals": val(5, 4) * 4096,
        "only_vals_short": val(5, 4) * 4095,
        "vals_then_cut": val(5, 4) * 4095 + b"\x40",
        "mixed_ok": zero(10) + val(3, 2) + xzero(16000) + val(32, 4) + zero(64) + zero(64) + zero(64) + zero(62) + val(1, 4) + zero(64) + zero(64) + zero(2),
    }
    out = {}
    for name, body in bodies.items():
        steps = [["SET", "h", HDR_SPARSE + body]] + probe()
        steps += [["SET", "h", HDR_SPARSE + body], ["PFDEBUG", "DECODE", "h"], ["PFDEBUG", "GETREG", "h"],
                  ["GET", "h"]]
        steps += [["SET", "h", HDR_SPARSE + body], ["PFDEBUG", "TODENSE", "h"], ["GET", "h"]]
        steps += [["SET", "h", HDR_SPARSE + body], ["PFADD", "g", "q"], ["PFCOUNT", "g", "h"],
                  ["PFMERGE", "g", "h"], ["GET", "g"], ["DEL", "g"]]
        # every element added one by one, to hit the damaged opcode
        steps += [["SET", "h", HDR_SPARSE + body]]
        for e in elements("c", 40):
            steps += [["PFADD", "h", e], ["GET", "h"]]
        out["corrupt_" + name] = steps
    # damage written into a valid value with SETRANGE / APPEND
    out["corrupt_setrange"] = [
        ["PFADD", "h", *elements("v", 200)], ["SETRANGE", "h", "20", b"\xff\xff\xff"], *probe(),
        ["PFADD", "h2", *elements("v", 200)], ["APPEND", "h2", b"\x00"], *probe("h2"),
        ["PFADD", "h3", *elements("v", 200)], ["SETRANGE", "h3", "4", b"\x00"], *probe("h3"),
        ["PFADD", "h4", *elements("v", 5000)], ["SETRANGE", "h4", "100", b"\xff" * 50], *probe("h4"),
        ["PFDEBUG", "GETREG", "h4"], ["APPEND", "h4", "x"], *probe("h4"),
        ["PFADD", "h5", *elements("v", 5000)], ["SETRANGE", "h5", "4", b"\x01"], *probe("h5"),
    ]
    return out


CORRUPT_CASES = _corrupt_cases()


@pytest.mark.parametrize("name", sorted(CASES))
def test_hll(pair, name):
    f, r = pair
    mismatches, transcript = run_steps(f.port, r.port, CASES[name])
    assert not mismatches, format_report(name, mismatches, transcript)


@pytest.mark.parametrize("name", sorted(CORRUPT_CASES))
def test_hll_corrupt(pair, name):
    f, r = pair
    mismatches, transcript = run_steps(f.port, r.port, CORRUPT_CASES[name])
    assert not mismatches, format_report(name, mismatches, transcript)


def _truncation_and_flip_steps(seed):
    """A valid sparse value cut at every length and with random byte flips,
    each looked at with PFCOUNT / PFADD / PFMERGE / DECODE."""
    rnd = random.Random(seed)
    steps = [["PFADD", "src", *elements("t%d-" % seed, 60)], ["PFDEBUG", "DECODE", "src"]]
    regs = [0] * 16384
    for _ in range(25):
        regs[rnd.randrange(16384)] = rnd.randint(1, 32)
    body = _encode_sparse(regs)
    full = HDR_SPARSE + body
    for cut in range(len(full) + 1):
        steps += [["SET", "h", full[:cut]], ["PFCOUNT", "h"], ["PFADD", "h", "w%d" % cut], ["GET", "h"],
                  ["SET", "h", full[:cut]], ["PFMERGE", "m", "h"], ["GET", "m"], ["DEL", "m"]]
    for _ in range(60):
        b = bytearray(full)
        i = rnd.randrange(16, len(b))
        b[i] = rnd.randrange(256)
        steps += [["SET", "h", bytes(b)], ["PFCOUNT", "h"], ["PFDEBUG", "DECODE", "h"],
                  ["PFADD", "h", "f%d" % rnd.randrange(1000), "g%d" % rnd.randrange(1000)], ["GET", "h"],
                  ["SET", "h", bytes(b)], ["PFCOUNT", "h", "src"], ["PFMERGE", "src2", "h", "src"], ["GET", "src2"]]
    return steps


def _encode_sparse(regs):
    """A straightforward sparse encoding of registers (VAL runs of up to 4,
    ZERO up to 64, XZERO beyond)."""
    out = bytearray()
    i = 0
    while i < len(regs):
        v = regs[i]
        j = i
        while j < len(regs) and regs[j] == v:
            j += 1
        n = j - i
        if v == 0:
            while n:
                k = min(n, 16384)
                out += zero(k) if k <= 64 else xzero(k)
                n -= k
        else:
            while n:
                k = min(n, 4)
                out += val(v, k)
                n -= k
        i = j
    return bytes(out)


@pytest.mark.parametrize("seed", range(3))
def test_hll_truncations_and_flips(pair, seed):
    f, r = pair
    mismatches, transcript = run_steps(f.port, r.port, _truncation_and_flip_steps(seed))
    assert not mismatches, format_report("truncations_%d" % seed, mismatches, transcript)


def _random_program(seed, n=150):
    rnd = random.Random(seed)
    keys = ["k1", "k2", "k3", "k4"]
    pool = 30000

    def k():
        return rnd.choice(keys)

    def els():
        size = rnd.choice([1, 2, 5, 20, 100, 400, 1500])
        return ["e%d" % rnd.randrange(pool) for _ in range(size)]

    gens = [
        (30, lambda: ["PFADD", k(), *els()]),
        (8, lambda: ["PFCOUNT", k()]),
        (4, lambda: ["PFCOUNT", k(), k(), k()]),
        (5, lambda: ["PFMERGE", k(), k(), k()]),
        (2, lambda: ["PFMERGE", k(), k()]),
        (12, lambda: ["GET", k()]),
        (3, lambda: ["PFDEBUG", "ENCODING", k()]),
        (2, lambda: ["PFDEBUG", "DECODE", k()]),
        (1, lambda: ["PFDEBUG", "TODENSE", k()]),
        (1, lambda: ["DEL", k()]),
        (1, lambda: ["SETRANGE", k(), str(rnd.randrange(16, 40)), bytes([rnd.randrange(256)])]),
        (1, lambda: ["CONFIG", "SET", "hll-sparse-max-bytes", rnd.choice(["3000", "200", "8000", "40"])]),
        (1, lambda: ["OBJECT", "ENCODING", k()]),
        (1, lambda: ["STRLEN", k()]),
    ]
    total = sum(w for w, _ in gens)
    steps = []
    for _ in range(n):
        x = rnd.randrange(total)
        for w, g in gens:
            if x < w:
                steps.append(g())
                break
            x -= w
    steps += [["GET", key] for key in keys] + [["PFCOUNT", key] for key in keys]
    steps.append(["CONFIG", "SET", "hll-sparse-max-bytes", "3000"])
    return steps


@pytest.mark.parametrize("seed", range(8))
def test_hll_random_programs(pair, seed):
    f, r = pair
    mismatches, transcript = run_steps(f.port, r.port, _random_program(seed))
    assert not mismatches, format_report("random_%d" % seed, mismatches, transcript)


def test_hll_estimates_many_elements(pair):
    """PFCOUNT along the way to 200000 elements, single and merged, with the
    bytes of both the sparse-then-dense value and of a merge of two keys."""
    f, r = pair
    steps = []
    for i in range(100):
        steps.append(["PFADD", "big", *elements("b", 2000, i * 2000)])
        if i % 10 == 0 or i < 5:
            steps += [["PFCOUNT", "big"], ["GET", "big"]]
        if i % 25 == 0:
            steps += [["PFADD", "other", *elements("o", 500, i * 500)], ["PFCOUNT", "big", "other"],
                      ["PFMERGE", "u", "other", "big"], ["GET", "u"], ["PFCOUNT", "u"]]
    steps += [["PFCOUNT", "big"], ["GET", "big"], ["PFDEBUG", "GETREG", "big"]]
    mismatches, transcript = run_steps(f.port, r.port, steps)
    assert not mismatches, format_report("many_elements", mismatches, transcript)


def test_hll_cardinality_header_layout(pair):
    """The cached cardinality is 8 little-endian bytes at offset 8."""
    f, r = pair
    with f.client() as c:
        c.command("FLUSHALL")
        c.command("PFADD", "h", *elements("x", 1000))
        n = int(c.command("PFCOUNT", "h")[1:].strip())
        v = c.command("GET", "h")
        body = v[v.index(b"\r\n") + 2:]
        assert body[:4] == b"HYLL"
        assert struct.unpack("<Q", body[8:16])[0] == n
        c.command("FLUSHALL")


def test_command_info_and_docs(pair):
    """COMMAND INFO (name .. ACL categories) and COMMAND DOCS summary, since,
    group and complexity as redis-server reports them."""
    from resp_client import RawClient, parse
    f, r = pair
    out = {}
    for kind, port in (("ferry", f.port), ("redis", r.port)):
        with RawClient(port) as c:
            res = []
            for name in ("pfadd", "pfcount", "pfmerge", "pfdebug", "pfselftest"):
                info = parse(c.command("COMMAND", "INFO", name))[1][0][1]
                res.append(info[:7])
                docs = parse(c.command("COMMAND", "DOCS", name))[1][1][1]
                fields = dict((docs[i][1], docs[i + 1]) for i in range(0, len(docs), 2))
                res.append([fields.get(k) for k in (b"summary", b"since", b"group", b"complexity")])
            out[kind] = res
    for a, b in zip(out["ferry"], out["redis"]):
        assert repr(a) == repr(b), (a, b)


def test_propagation_to_aof(server_factory):
    """What reaches the append-only file: PFADD / PFMERGE / PFDEBUG TODENSE
    that changed something, and PFCOUNT of one key when it wrote the cached
    cardinality back (not when the cache was valid, not PFCOUNT of several
    keys, not a PFADD that changed nothing), byte for byte as redis-server."""
    from diffkit import aof_increment
    from resp_client import RawClient
    streams = {}
    for kind in ("ferry", "redis"):
        s = server_factory(kind, "--appendonly", "yes", "--appendfsync", "always")
        with RawClient(s.port) as c:
            for args in (["PFADD", "h", "a", "b", "c"], ["PFCOUNT", "h"], ["PFCOUNT", "h"], ["PFADD", "h", "a"],
                         ["PFCOUNT", "h", "x"], ["PFDEBUG", "TODENSE", "h"], ["PFDEBUG", "TODENSE", "h"],
                         ["PFMERGE", "m", "h"], ["PFDEBUG", "GETREG", "m"], ["PFADD", "n"], ["PFCOUNT", "n"]):
                c.command(*args)
        streams[kind] = aof_increment(s.workdir)
    assert streams["ferry"] == streams["redis"]
