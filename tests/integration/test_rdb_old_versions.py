"""RDB files of old Redis versions (issue 12): ferry loads every encoding
RDB versions 1 to 11 hold for the types it has.

The files are written by rdb_fixture.py from Python values: zipmap hashes
(type 9), ziplist lists/sorted sets/hashes (10, 12, 13), intsets (11),
quicklists of ziplists (14), linked lists, plain sets and hashes (1, 2, 4),
sorted sets with text scores (3, with the 254/255 infinities) and with
binary scores (5), listpacks (16, 17, 18, and 20 in v11), with both expiry
opcodes (EXPIRETIME 0xFD in seconds, EXPIRETIME_MS 0xFC), keys already
expired, several databases, no AUX fields before v7 and no checksum before
v5. Each version's file only holds what that version's Redis wrote.

The oracle is redis-server 7.0 (it reads versions 1 to 10): it loads the
same file as ferry, and the two datasets must agree (type, encoding,
contents, TTL) and match what the fixture meant to write. A file
redis-server refuses is a broken fixture. Version 11 (Redis 7.2) is beyond
redis-server 7.0, so there ferry is only checked against the fixture.

The module also runs with redis-server as FERRY_SERVER (to check the tests
themselves): then the tests of ferry's own behaviour (v11) are skipped.
"""
from __future__ import annotations

import math
import os
import random
import shutil
import struct
import subprocess
import tempfile
import time

import pytest
import redis as redispy

from conftest import start_in as start, start_server
from rdb_fixture import RdbWriter, T, as_bytes, crc64, encode_value, intset, rdb_string, ziplist, zipmap


def _testing_ferry() -> bool:
    """Is FERRY_SERVER ferry (its --version says build=ferry-...) rather
    than a redis-server standing in for it?"""
    path = os.environ.get("FERRY_SERVER")
    if not path:
        return True  # conftest reports the missing binary
    try:
        out = subprocess.run([path, "--version"], capture_output=True, timeout=10).stdout
    except (OSError, subprocess.SubprocessError):
        return True
    return b"ferry" in out


IS_FERRY = _testing_ferry()
ferry_only = pytest.mark.skipif(not IS_FERRY, reason="checks ferry's own behaviour (FERRY_SERVER is redis-server)")


TTL_SLACK_MS = 5000          # ferry vs redis, both loaded within a second or two
INTENT_SLACK_MS = 15000      # vs the expiry the fixture computed at build time
DBS = (0, 7, 15)


# ------------------------------------------------------------------ helpers
def client(server):
    return redispy.Redis(port=server.port, socket_timeout=30)


def snapshot(r, dbs=range(16)):
    """(db, key) -> (type, encoding, contents, pttl or -1) for every key."""
    out = {}
    for db in dbs:
        r.execute_command("SELECT", db)
        for key in r.scan_iter(count=1000):
            t = r.type(key).decode()
            enc = r.object("encoding", key).decode()
            if t == "string":
                v = r.get(key)
            elif t == "list":
                v = r.lrange(key, 0, -1)
            elif t == "set":
                v = sorted(r.smembers(key))
            elif t == "hash":
                v = sorted(r.hgetall(key).items())
            elif t == "zset":
                v = r.zrange(key, 0, -1, withscores=True)
            elif t == "stream":
                v = r.dump(key)  # entries, counters and groups, byte for byte
            else:
                v = None
            pttl = r.pttl(key)
            out[(db, key)] = (t, enc, v, -1 if pttl < 0 else pttl)
    r.execute_command("SELECT", 0)
    return out


def load(kind, data, tmpdirs, *extra):
    """Start a `kind` server on a private copy of the file; its snapshot."""
    d = tmpdirs()
    with open(os.path.join(d, "dump.rdb"), "wb") as f:
        f.write(data)
    s = start(kind, d, *extra)
    try:
        r = client(s)
        snap = snapshot(r)
        r.close()
        return snap
    finally:
        s.cleanup()


def diff_servers(a, b):
    """Differences between ferry's (a) and redis-server's (b) snapshots:
    type, encoding, contents and TTL."""
    diffs = ["only in ferry: %r" % (k,) for k in sorted(a.keys() - b.keys())]
    diffs += ["only in redis: %r" % (k,) for k in sorted(b.keys() - a.keys())]
    for k in sorted(a.keys() & b.keys()):
        (ta, ea, va, xa), (tb, eb, vb, xb) = a[k], b[k]
        if (ta, ea, va) != (tb, eb, vb) or (xa < 0) != (xb < 0) or abs(xa - xb) > TTL_SLACK_MS:
            diffs.append("%r: ferry %s != redis %s" % (k, short(a[k]), short(b[k])))
    return diffs[:10]


def diff_intent(got, expected):
    """got: a snapshot; expected: (db, key) -> (type, contents, expire ms or None)."""
    now = time.time() * 1000
    diffs = ["unexpected key: %r" % (k,) for k in sorted(got.keys() - expected.keys())]
    diffs += ["missing key: %r" % (k,) for k in sorted(expected.keys() - got.keys())]
    for k in sorted(got.keys() & expected.keys()):
        t, _enc, v, pttl = got[k]
        et, ev, eexp = expected[k]
        if (t, v) != (et, ev):
            diffs.append("%r: got %s, meant %s" % (k, short((t, v)), short((et, ev))))
        elif (eexp is None) != (pttl < 0) or (eexp is not None and abs(eexp - now - pttl) > INTENT_SLACK_MS):
            diffs.append("%r: pttl %d, meant expiry at %r (now %d)" % (k, pttl, eexp, now))
    return diffs[:10]


def short(x):
    s = repr(x)
    return s if len(s) < 300 else s[:300] + "...(%d chars)" % len(s)


# ------------------------------------------------------------------ values
# Members that exercise every encoding path: each integer width of the
# ziplist/listpack/intset and RDB int-string forms (immediates 0..12, int8,
# int16, int24, int32, int64, the int64 limits), text that only looks
# numeric (never integer-encoded), binary bytes, and strings long enough
# for the 14-bit and 32-bit ziplist lengths and the 5-byte prevlen.
INTS = [0, 1, 7, 12, 13, -1, -5, 127, -128, 128, 255, -129, 4095, -4096, 32767, -32768, 32768,
        70000, -70000, 8388607, -8388608, 8388608, 2**31 - 1, -2**31, 2**31, 2**40, -2**40,
        2**63 - 1, -2**63]
TEXT = [b"007", b"+5", b"-0", b"1.5", b" 3", b"3 ", b"18446744073709551615", b"-9223372036854775809",
        b"", b"\x00", b"\xff\xfe\x00bin\x01", bytes(range(256)), b"hello", "h\u00e9llo".encode(),
        b"x" * 63, b"y" * 64, b"z" * 253, b"w" * 254, b"v" * 300]
HUGE = b"H" * 17000  # past the 14-bit ziplist string length


def members(rng, n, big_strings=True):
    """n distinct members (bytes) drawn from INTS, TEXT and made-up ones."""
    pool = [as_bytes(i) for i in INTS] + (TEXT if big_strings else [t for t in TEXT if len(t) < 60])
    out, seen = [], set()
    for m in rng.sample(pool, min(n, len(pool))) if n <= len(pool) else pool:
        out.append(m)
        seen.add(m)
    i = 0
    while len(out) < n:
        m = rng.choice([b"m%d" % i, as_bytes(rng.randrange(-2**63, 2**63)), as_bytes(rng.randrange(-300, 70000)),
                        bytes(rng.randrange(256) for _ in range(rng.randrange(1, 9)))])
        i += 1
        if m not in seen:
            seen.add(m)
            out.append(m)
    return out


SCORES = [0, 1, -1, 1.5, -0.25, 1e300, -1e300, 3.141592653589793, 0.1, 2**53, 1e-300, 123456789.125]


def scores(rng, n, infinities=True):
    pool = SCORES + ([math.inf, -math.inf] if infinities else [])
    return [float(rng.choice(pool + [rng.uniform(-1e6, 1e6), rng.randrange(-1000, 1000)])) for _ in range(n)]


def zset_value(rng, n):
    ms = members(rng, n)
    return list(zip(ms, scores(rng, n)))


def zset_expected(pairs):
    return [(m, s) for m, s in sorted(((as_bytes(m), float(s)) for m, s in pairs), key=lambda p: (p[1], p[0]))]


# ------------------------------------------------------------------ encodings
# name -> (RDB type, Redis type, versions that wrote it, value maker(rng, big))
def _list(rng, big):
    vals = members(rng, 700 if big else 9)
    return vals + [HUGE] if big else vals


def _set(rng, big):
    return members(rng, 600 if big else 6)


def _intset(width):
    def make(rng, big):
        lo, hi = {2: (-2**15, 2**15), 4: (-2**31, 2**31), 8: (-2**63, 2**63)}[width]
        vals = {lo, hi - 1} | {rng.randrange(-2**15, 2**15) for _ in range(700 if big else 5)}
        return sorted(vals)
    return make


def _hash(rng, big):
    fs = members(rng, 300 if big else 5)
    vs = members(rng, len(fs))
    rng.shuffle(vs)
    return list(zip(fs, vs))


def _small_hash(rng, big):
    """a hash a zipmap could hold in Redis 2.4 (its values stayed small);
    the big one still has values of 254+ bytes for the 5-byte lengths"""
    fs = members(rng, 300 if big else 5, big_strings=big)
    vs = members(rng, len(fs), big_strings=big)
    rng.shuffle(vs)
    return list(zip(fs, vs))


def _zset(rng, big):
    return zset_value(rng, 300 if big else 6)


def _string(rng, big):
    return rng.choice([b"plain", b"12345", b"-7", b"2147483647", b"-2147483648", b"2147483648",
                       b"9223372036854775807", b"007", b"\x00\xffbin"]) if not big else HUGE + b"tail"


ALL = range(1, 12)
ENCODINGS = {
    "string":          (T.STRING, "string", ALL, _string),
    "list-linked":     (T.LIST, "list", range(1, 7), _list),
    "set-plain":       (T.SET, "set", ALL, _set),
    "zset-text":       (T.ZSET, "zset", range(1, 8), _zset),
    "hash-plain":      (T.HASH, "hash", ALL, _hash),
    "zset-binary":     (T.ZSET_2, "zset", range(8, 12), _zset),
    "hash-zipmap":     (T.HASH_ZIPMAP, "hash", range(2, 5), _small_hash),
    "list-ziplist":    (T.LIST_ZIPLIST, "list", range(2, 7), _list),
    "set-intset16":    (T.SET_INTSET, "set", range(2, 12), _intset(2)),
    "set-intset32":    (T.SET_INTSET, "set", range(2, 12), _intset(4)),
    "set-intset64":    (T.SET_INTSET, "set", range(2, 12), _intset(8)),
    "zset-ziplist":    (T.ZSET_ZIPLIST, "zset", range(3, 10), _zset),
    "hash-ziplist":    (T.HASH_ZIPLIST, "hash", range(3, 10), _hash),
    "list-quicklist":  (T.LIST_QUICKLIST, "list", range(7, 10), _list),
    "hash-listpack":   (T.HASH_LISTPACK, "hash", range(10, 12), _hash),
    "zset-listpack":   (T.ZSET_LISTPACK, "zset", range(10, 12), _zset),
    "list-quicklist2": (T.LIST_QUICKLIST_2, "list", range(10, 12), _list),
    "set-listpack":    (T.SET_LISTPACK, "set", range(11, 12), _set),
}


def encodings_of(version):
    return [name for name, (_t, _k, vers, _m) in ENCODINGS.items() if version in vers]


def expected_contents(kind, value):
    if kind == "string":
        return as_bytes(value)
    if kind == "list":
        return [as_bytes(v) for v in value]
    if kind == "set":
        return sorted(as_bytes(v) for v in value)
    if kind == "hash":
        return sorted((as_bytes(f), as_bytes(v)) for f, v in value)
    return zset_expected(value)


def build(version, seed, *, aux=None, checksum=True, only=None, used=None):
    """A file of `version` with, per encoding that version wrote, a small
    and a big key without expiry, one expiring in an hour and one that
    expired an hour ago, spread over DBS. Returns (bytes, expected)."""
    rng = random.Random(seed * 100 + version)
    now_s = int(time.time())
    w = RdbWriter(version)
    if aux is None:
        aux = version >= 7
    if aux:
        w.aux("redis-ver", {7: "3.2.13", 8: "4.0.14", 9: "6.2.14", 10: "7.0.15", 11: "7.2.4"}.get(version, "x"))
        w.aux("redis-bits", 64).aux("ctime", now_s).aux("used-mem", 1 << 20).aux("aof-preamble", 0)
    expected = {}
    per_db = {db: [] for db in DBS}
    n_expiring = 0
    for name in only or encodings_of(version):
        rtype, kind, _vers, make = ENCODINGS[name]
        for variant in ("small", "big", "future", "past"):
            db = rng.choice(DBS)
            key = "%s:%s:v%d" % (name, variant, version)
            value = make(rng, variant == "big")
            exp_ms = None
            opts = {}
            if variant in ("future", "past"):
                delta = 3600 if variant == "future" else -3600
                # EXPIRETIME (seconds) is all v1/v2 have; later it is still readable
                n_expiring += 1
                if version < 3 or n_expiring % 3 == 0:
                    opts["expire_s"] = now_s + delta
                    exp_ms = (now_s + delta) * 1000
                else:
                    exp_ms = now_s * 1000 + delta * 1000 + rng.randrange(1000)
                    opts["expire_ms"] = exp_ms
            if version >= 8 and variant == "small":
                opts[rng.choice(["idle", "freq"])] = 5
            if rtype in (T.LIST_QUICKLIST, T.LIST_QUICKLIST_2):
                opts["node_size"] = 128 if variant == "big" else 4
            per_db[db].append((rtype, key, value, opts))
            if variant != "past":
                expected[(db, key.encode())] = (kind, expected_contents(kind, value), exp_ms)
    for db in DBS:
        keys = per_db[db]
        if not keys:
            continue
        w.select_db(db)
        if version >= 7:
            w.resize_db(len(keys), sum(1 for k in keys if "expire_s" in k[3] or "expire_ms" in k[3]))
        for rtype, key, value, opts in keys:
            w.key(rtype, key, value, **opts)
    if used is not None:
        used.update(w.used)
    return w.finish(checksum=checksum), expected


def check_both(data, expected, tmpdirs):
    r = load("redis", data, tmpdirs)
    assert not diff_intent(r, expected), ("redis-server reads the fixture differently: broken fixture",
                                          diff_intent(r, expected))
    f = load("ferry", data, tmpdirs)
    assert not diff_servers(f, r), diff_servers(f, r)
    assert not diff_intent(f, expected), diff_intent(f, expected)


# ------------------------------------------------------------------ tests
def test_fixture_encoders_match_known_bytes():
    """The writer's building blocks against byte strings from the formats'
    own documentation (no server needed)."""
    assert crc64(b"123456789") == 0xE9C6D914C4B8D9CA
    # ziplist of "2" and "5" (the example in Redis's ziplist.c)
    assert ziplist([b"2", b"5"]) == bytes.fromhex("0f0000000c0000000200 00f3 02f6 ff".replace(" ", ""))
    # zipmap "foo" => "bar", "hello" => "world" (zipmap.c's example)
    assert zipmap([("foo", "bar"), ("hello", "world")]) == b"\x02\x03foo\x03\x00bar\x05hello\x05\x00world\xff"
    # every ziplist integer form, and a 5-byte prevlen after a 300-byte entry
    zl = ziplist([5, -100, 1000, 100000, 2**30, 2**40, b"x" * 300, b"y"])
    for tag in (b"\xf6", b"\xfe\x9c", b"\xc0\xe8\x03", b"\xf0\xa0\x86\x01", b"\xd0\x00\x00\x00\x40",
                b"\xe0\x00\x00\x00\x00\x00\x01\x00\x00", b"\x41\x2c", b"\xfe\x2f\x01\x00\x00\x01y"):
        assert tag in zl, tag
    assert struct.unpack_from("<I", zl, 4)[0] == zl.rindex(b"\xfe\x2f\x01\x00\x00\x01y")
    assert rdb_string("-129") == b"\xc1\x7f\xff" and rdb_string("2147483648") == b"\x0a2147483648"
    assert intset([3, 1, 2]) == struct.pack("<IIhhh", 2, 3, 1, 2, 3)


def test_fixture_listpacks_and_crc_match_redis_dump(tmpdirs):
    """Listpack, intset and string payloads and the CRC-64 are what
    redis-server 7.0 itself produces (DUMP: type, payload, RDB version,
    CRC-64 of all that)."""
    s = start("redis", tmpdirs())
    try:
        r = client(s)
        r.config_set("rdbcompression", "no")  # the fixture writes no LZF
        r.hset("h", mapping={"a": "1", "bb": "-300", "n": "70000"})
        r.zadd("z", {"m": 1.5, "n": 2, "o": -3})
        r.sadd("i", 5, -40000, 2**40)
        r.set("s", "12345")
        r.rpush("l", "x", "7", "yy")
        cases = {"h": (T.HASH_LISTPACK, [("a", "1"), ("bb", "-300"), ("n", "70000")]),
                 "z": (T.ZSET_LISTPACK, [("o", -3), ("m", 1.5), ("n", 2)]),
                 "i": (T.SET_INTSET, [5, -40000, 2**40]),
                 "s": (T.STRING, "12345"),
                 "l": (T.LIST_QUICKLIST_2, ["x", "7", "yy"])}
        for key, (rtype, value) in cases.items():
            dump = r.dump(key)
            assert crc64(dump[:-8]) == struct.unpack("<Q", dump[-8:])[0]
            assert dump[0] == rtype and dump[-10:-8] == b"\x0a\x00", (key, dump)
            assert dump[1:-10] == encode_value(rtype, value, node_size=8), (key, dump)
    finally:
        s.cleanup()


@pytest.mark.parametrize("version", range(1, 11))
def test_old_version_file_loads_like_redis(tmpdirs, version):
    """Every encoding of the version, small and big keys, expiries, three dbs."""
    used = {}
    data, expected = build(version, seed=1, used=used)
    assert len(expected) >= 3 * len(encodings_of(version))
    assert {ENCODINGS[n][0] for n in encodings_of(version)} <= used.keys()
    assert used["SELECTDB"] == len(DBS) and ("AUX" in used) == (version >= 7)
    assert used["EXPIRETIME"] >= 2 and ("EXPIRETIME_MS" in used) == (version >= 3)
    if version < 5:
        assert data.endswith(b"\xff")                   # no checksum after EOF
    check_both(data, expected, tmpdirs)


@pytest.mark.parametrize("version", [7, 9, 10])
def test_without_aux_fields(tmpdirs, version):
    data, expected = build(version, seed=2, aux=False)
    check_both(data, expected, tmpdirs)


@pytest.mark.parametrize("version", [6, 9])
def test_zero_checksum_is_not_checked(tmpdirs, version):
    data, expected = build(version, seed=3, checksum=False)
    assert data.endswith(b"\0" * 8)
    check_both(data, expected, tmpdirs)


@pytest.mark.parametrize("version", [5, 9])
def test_wrong_checksum_is_refused(tmpdirs, version):
    """From v5 on the file ends in a CRC-64 that must match (before v5 the
    file ends at the EOF opcode: covered by the tests above)."""
    data, _expected = build(version, seed=4, only=["string", "set-plain"])
    bad = data[:-8] + struct.pack("<Q", crc64(data[:-8]) ^ 1)
    for kind in ("redis", "ferry"):
        with pytest.raises(RuntimeError) as e:
            load(kind, bad, tmpdirs)
        assert "checksum" in str(e.value).lower(), (kind, str(e.value)[-500:])


@ferry_only
def test_version_11_ferry_reads_what_redis_7_2_writes(tmpdirs):
    """redis-server 7.0 refuses v11, so only the fixture's intent is the
    reference here (listpack sets, type 20, are new in 7.2)."""
    data, expected = build(11, seed=5, only=[n for n in encodings_of(11) if n != "set-listpack"])
    f = load("ferry", data, tmpdirs)
    assert not diff_intent(f, expected), diff_intent(f, expected)



@ferry_only
def test_version_11_set_listpack(tmpdirs):
    data, expected = build(11, seed=6, only=["set-listpack"])
    f = load("ferry", data, tmpdirs)
    assert not diff_intent(f, expected), diff_intent(f, expected)


def text_score_file(version, entries):
    w = RdbWriter(version)
    w.select_db(0)
    w.key(T.ZSET, "z", entries)
    w.key(T.STRING, "after", "ok")
    return w.finish()


@pytest.mark.parametrize("version", [1, 6])
def test_text_scores_special_lengths(tmpdirs, version):
    """Type 3 scores: 254 = +inf, 255 = -inf, text of every shape."""
    entries = [("pinf", math.inf), ("ninf", -math.inf), ("int", 42), ("neg", -7), ("frac", 0.1),
               ("big", 1.7976931348623157e308), ("tiny", 5e-324), ("x", 2**60)]
    data = text_score_file(version, entries)
    check_both(data, {(0, b"z"): ("zset", zset_expected(entries), None),
                      (0, b"after"): ("string", b"ok", None)}, tmpdirs)


def test_text_score_nan_refused_by_both(tmpdirs):
    """Length 253 (nan) is in the format, but a NaN score is refused."""
    data = text_score_file(6, [("a", 1), ("b", math.nan)])
    for kind in ("redis", "ferry"):
        with pytest.raises(RuntimeError) as e:
            load(kind, data, tmpdirs)
        assert "nan" in str(e.value).lower(), (kind, str(e.value)[-500:])


def test_zipmap_details(tmpdirs):
    """Zipmaps with unused ("free") bytes after values, 253/254-byte
    lengths either side of the 5-byte form, and 254+ pairs (count 254)."""
    pairs = [(b"a", b"1"), (b"k" * 253, b"v" * 253), (b"K" * 254, b"V" * 254), (b"e", b""), (b"", b"empty"),
             (b"n", b"-12")]
    many = [(b"f%d" % i, b"%d" % (i * 7)) for i in range(300)]
    w = RdbWriter(2)
    w.select_db(0)
    w.key(T.HASH_ZIPMAP, "free", payload=rdb_string(zipmap(pairs, free={0: 3, 5: 1, 3: 4}), False))
    w.key(T.HASH_ZIPMAP, "many", many)
    data = w.finish()
    check_both(data, {(0, b"free"): ("hash", sorted(pairs), None), (0, b"many"): ("hash", sorted(many), None)},
               tmpdirs)


def test_quicklist_nodes(tmpdirs):
    """Quicklist (type 14) nodes of any size, one entry each, big entries,
    and an empty node among them (Redis 7.0 skips it)."""
    nodes = [[1, 2, 3], [b"x" * 300], [], [HUGE, b"a"], [-2**63, 2**63 - 1, 12, 13]]
    w = RdbWriter(8)
    w.select_db(0)
    w.key(T.LIST_QUICKLIST, "ql", nodes, node_size=0)
    data = w.finish()
    flat = [as_bytes(v) for n in nodes for v in n]
    check_both(data, {(0, b"ql"): ("list", flat, None)}, tmpdirs)


def test_ziplist_with_uncounted_length(tmpdirs):
    """Past 65534 entries a ziplist's count field says 65535 ("walk it to
    count"): a list ziplist (type 10) of 70000 entries. (Not in a quicklist
    node: Redis keeps a node's count in 16 bits and never wrote one that
    big; redis-server 7.0 itself loses entries of such a node.)"""
    items = [i % 1000 if i % 3 else b"e%d" % i for i in range(70000)]
    w = RdbWriter(6)
    w.select_db(0)
    w.key(T.LIST_ZIPLIST, "zl", items)
    data = w.finish()
    assert b"\xff\xff" in data[:40]
    check_both(data, {(0, b"zl"): ("list", [as_bytes(v) for v in items], None)}, tmpdirs)


def test_strings_not_integer_encoded_read_the_same(tmpdirs):
    """Writers were free to store numbers as plain text (in RDB strings and
    in ziplists): the value reads back the same either way."""
    w = RdbWriter(6)
    w.select_db(0)
    w.key(T.STRING, "s", "12345", int_encode=False)
    w.key(T.LIST_ZIPLIST, "l", ["1", "300", "-5", "70000"], int_encode=False)
    w.key(T.HASH_ZIPLIST, "h", [("1", "2"), ("-3", "4000000000")], int_encode=False)
    w.key(T.SET, "st", ["1", "2", "-3"], int_encode=False)
    data = w.finish()
    check_both(data, {(0, b"s"): ("string", b"12345", None),
                      (0, b"l"): ("list", [b"1", b"300", b"-5", b"70000"], None),
                      (0, b"h"): ("hash", [(b"-3", b"4000000000"), (b"1", b"2")], None),
                      (0, b"st"): ("set", [b"-3", b"1", b"2"], None)}, tmpdirs)


# Empty collections: Redis 7.0 skips the key ("empty keys skipped"); a file
# could hold them after old Redis bugs. (An empty zipmap or intset is
# refused by redis-server as corrupt, so those are not listed.)
EMPTY_CASES = [
    ("list-linked", T.LIST, 6, {}, True),
    ("set-plain", T.SET, 6, {}, False),
    ("zset-text", T.ZSET, 6, {}, True),
    ("hash-plain", T.HASH, 6, {}, True),
    ("zset-binary", T.ZSET_2, 9, {}, True),
    ("list-ziplist", T.LIST_ZIPLIST, 6, {}, True),
    ("zset-ziplist", T.ZSET_ZIPLIST, 9, {}, True),
    ("hash-ziplist", T.HASH_ZIPLIST, 9, {}, True),
    ("list-quicklist-no-nodes", T.LIST_QUICKLIST, 9, {"node_size": 0}, True),
    ("list-quicklist-empty-node", T.LIST_QUICKLIST, 9, {"node_size": 0, "_nodes": [[]]}, True),
    ("hash-listpack", T.HASH_LISTPACK, 10, {}, True),
    ("zset-listpack", T.ZSET_LISTPACK, 10, {}, True),
    ("list-quicklist2-no-nodes", T.LIST_QUICKLIST_2, 10, {"node_size": 0}, True),
]


@pytest.mark.parametrize("name,rtype,version,opts", [
    pytest.param(n, t, v, o, id=n) for n, t, v, o, _bug in EMPTY_CASES])
def test_empty_collections_are_skipped(tmpdirs, name, rtype, version, opts):
    opts = dict(opts)
    value = opts.pop("_nodes", [])
    w = RdbWriter(version)
    w.select_db(0)
    w.key(rtype, "empty", value, **opts)
    w.key(T.STRING, "after", "ok")
    check_both(w.finish(), {(0, b"after"): ("string", b"ok", None)}, tmpdirs)


def test_stream_key_loads_like_redis(tmpdirs):
    """A real redis-server 7.0 file with a stream (RDB type 19) between other
    keys: ferry loads every key as redis-server does, the stream byte for
    byte (its DUMP). tests/integration/test_stream_persist.py has the rest."""
    d = tmpdirs()
    s = start("redis", d)
    try:
        r = client(s)
        r.set("before", "1")
        r.rpush("alist", "a", "b")
        r.xadd("my:stream", {"f": "v"})
        r.xadd("my:stream", {"f2": "v2"})
        r.hset("ahash", "f", "v")
        assert r.save()
        r.close()
    finally:
        s.cleanup()
    with open(os.path.join(d, "dump.rdb"), "rb") as f:
        data = f.read()
    assert b"my:stream" in data
    a, b = load("ferry", data, tmpdirs), load("redis", data, tmpdirs)
    assert a[(0, b"my:stream")][0] == "stream"
    assert diff_servers(a, b) == []


@pytest.mark.parametrize("rtype,version", [(T.HASH_ZIPLIST, 6), (T.ZSET_ZIPLIST, 9), (T.HASH_LISTPACK, 10),
                                           (T.ZSET_LISTPACK, 10)])
def test_blob_with_long_element_encoding(tmpdirs, rtype, version):
    """A 3-entry ziplist/listpack hash or sorted set with one 100-byte
    element: redis-server 7.0 keeps it a listpack."""
    value = [(b"a", 1), (b"L" * 100, 2), (b"c", 3)]
    kind = "zset" if rtype in (T.ZSET_ZIPLIST, T.ZSET_LISTPACK) else "hash"
    w = RdbWriter(version)
    w.select_db(0)
    w.key(rtype, "k", value)
    data = w.finish()
    r = load("redis", data, tmpdirs)
    f = load("ferry", data, tmpdirs)
    assert r[(0, b"k")][:3] == (kind, "listpack", expected_contents(kind, value))
    assert f[(0, b"k")][:3] == r[(0, b"k")][:3]


@pytest.mark.parametrize("declared", [0, 10, 3000, 10**6])
def test_resizedb_any_declared_count_loads_everything(tmpdirs, declared):
    """RESIZEDB only sizes the table ferry loads into (keys go in through a
    batch that must still grow the table when the count is understated, and
    must not trust a huge one): whatever it says, the keys and big declared
    collections (sized up front from their counts) load as redis-server
    loads them."""
    w = RdbWriter(10)
    w.select_db(0)
    w.resize_db(declared, 0)
    expected = {}
    for i in range(3000):
        w.key(T.STRING, "k%d" % i, "v%d" % i)
        expected[(0, b"k%d" % i)] = ("string", b"v%d" % i, None)
    members = ["m%d" % i for i in range(600)]
    w.key(T.SET, "bigset", members)
    expected[(0, b"bigset")] = ("set", sorted(m.encode() for m in members), None)
    pairs = [("f%d" % i, "v%d" % i) for i in range(600)]
    w.key(T.HASH, "bighash", pairs)
    expected[(0, b"bighash")] = ("hash", sorted((f.encode(), v.encode()) for f, v in pairs), None)
    check_both(w.finish(), expected, tmpdirs)


@ferry_only
@pytest.mark.parametrize("gap", [0, 1, 40, 2000])
def test_duplicate_key_is_refused_with_its_offset(tmpdirs, gap):
    """A key that appears twice (gap keys apart, so both copies may be in
    the insertion batch at once or far apart) stops the load; the error
    gives the offset of the second copy. (redis-server 7.0 panics on it.)"""
    w = RdbWriter(10)
    w.select_db(0)
    w.resize_db(gap + 2, 0)
    w.key(T.STRING, "dup", "first")
    for i in range(gap):
        w.key(T.STRING, "k%d" % i, "v")
    offset = len(w.buf)
    w.key(T.STRING, "dup", "second")
    w.key(T.STRING, "after", "x")
    with pytest.raises(RuntimeError) as e:
        load("ferry", w.finish(), tmpdirs)
    msg = str(e.value)
    assert "duplicate key in the RDB file at offset %d" % offset in msg, msg[-800:]
