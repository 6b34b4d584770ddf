"""Streams in RDB files, DUMP / RESTORE payloads, DEBUG RELOAD and AOF
rewrites, against redis-server 7.0.15.

The same random program of stream commands (node limits from one entry
per node to unlimited, explicit IDs with jumps, entries deleted, streams
trimmed exactly and approximately with LIMIT, groups with PELs, claims,
deleted consumers, empty streams that keep their groups) runs on ferry and
on redis-server, and then:
  - DUMP of every stream is byte-identical between the two (nodes split
    where Redis splits them, the same listpacks, the same LZF choices),
    except for the clock readings (delivery and seen times), which are
    zeroed on both sides before comparing when a stream has groups;
  - each server RESTOREs the other's payloads: XRANGE both ways, XINFO
    STREAM FULL and DUMP of the copy equal the original's, byte for byte;
  - each server loads its own and the other's SAVEd file with the same
    result;
  - DEBUG RELOAD, and an AOF rewrite (RDB preamble or RESTORE commands)
    followed by a restart, keep every stream byte for byte;
  - a Redis 6.2 (RDB 9, stream type 15) file loads on both alike, a Redis
    7.2 one (RDB 11, type 21) on ferry as the type-19 original;
  - payloads broken in one precise way are "ERR Bad data format" (and a
    broken file stops the start-up), byte flips never crash ferry.
stream_rdb.py reads and writes the payloads.
"""
from __future__ import annotations

import os
import random
import shutil
import time

import pytest
import redis as redispy

from conftest import start_in as start
from test_rdb_old_versions import IS_FERRY, ferry_only
from rdb_fixture import RdbWriter, T, rdb_string
from stream_rdb import T15, T19, T21, as_dump, emit, has_clock, masked, parse_dump, raw_id, relaxed

KINDS = ["ferry", "redis"]
NKEYS = 5
LONG = 300


def client(server):
    return redispy.Redis(port=server.port, socket_timeout=60)


# ------------------------------------------------------------------ programs
TEMPLATES = [[b"a"], [b"temp", b"hum"], [b"f1", b"f2", b"1", b"-2"], [b"k" * 30], [b"x", b""]]
VALUES = [b"", b"0", b"1", b"-1", b"007", b"-0", b"+1", b"127", b"128", b"-4096", b"9223372036854775807",
          b"-9223372036854775808", b"18446744073709551615", b"3.14", b"\x00\xff"]


def rand_value(rng):
    k = rng.randrange(6)
    if k < 2:
        return rng.choice(VALUES)
    if k == 2:
        return str(rng.randrange(-2**63, 2**63) >> rng.randrange(64)).encode()
    if k == 3:
        return b"v" * rng.randrange(1, 300)          # compressible: LZF on
    if k == 4:
        return bytes(rng.randrange(256) for _ in range(rng.randrange(1, 40)))
    return b"w%d" % rng.randrange(10**6)


class Program:
    """Stream commands with explicit IDs, deterministic given the seed."""

    def __init__(self, seed, keys=NKEYS, ops=LONG):
        self.rng = random.Random(seed)
        self.cmds = []
        self.ids = {}
        rng = self.rng
        self.config = [("stream-node-max-entries", rng.choice([1, 2, 3, 5, 10, 100, 0])),
                       ("stream-node-max-bytes", rng.choice([0, 1, 64, 200, 500, 4096, 20000]))]
        for k in range(keys):
            key = "s%d" % k
            self.ids[key] = []
            self.tmpl = rng.randrange(len(TEMPLATES))
            self.last = (rng.choice([1, 1000, 10**12, 2**63 - 5]), 0)
            for _ in range(ops):
                self.step(key)
        if keys > 1:
            self.cmd("XTRIM", "s1", "MAXLEN", 0)                 # empty, keeps its groups
            self.cmd("XGROUP", "CREATE", "empty", "g", "$", "MKSTREAM")

    def cmd(self, *a):
        self.cmds.append(a)

    def next_id(self):
        ms, seq = self.last
        r = self.rng.randrange(10)
        if r < 5:
            seq += 1 + (self.rng.randrange(1000) if r == 4 else 0)
        else:
            ms += 1 + self.rng.randrange(1 if r < 8 else 10**6)
            seq = self.rng.choice([0, 0, 1, 7, 2**64 - 2])
        self.last = (ms, seq)
        return "%d-%d" % self.last

    def some_id(self, key):
        ids = self.ids[key]
        return self.rng.choice(ids) if ids else "0-1"

    def fields(self):
        rng = self.rng
        names = TEMPLATES[self.tmpl if rng.random() < 0.7 else rng.randrange(len(TEMPLATES))]
        out = []
        for n in names:
            out += [n, rand_value(rng)]
        return out

    def trim_args(self, key):
        rng = self.rng
        how = [rng.choice(["MAXLEN", "MINID"]), rng.choice(["=", "~", ""])]
        how.append(rng.randrange(0, 60) if how[0] == "MAXLEN" else self.some_id(key))
        if how[1] == "~" and rng.random() < 0.5:
            how += ["LIMIT", rng.choice([0, 1, 5, 100])]
        return [a for a in how if a != ""]

    def step(self, key):
        rng = self.rng
        r = rng.randrange(100)
        if r < 60:
            trim = self.trim_args(key) if r < 6 else []
            i = self.next_id()
            self.ids[key].append(i)
            self.cmd("XADD", key, *trim, i, *self.fields())
        elif r < 68:
            self.cmd("XDEL", key, *[self.some_id(key) for _ in range(rng.randrange(1, 4))])
        elif r < 71:
            self.cmd("XTRIM", key, *self.trim_args(key))
        elif r < 72:
            ms, seq = self.last
            self.last = (ms + 5, 0)
            self.cmd("XSETID", key, "%d-0" % (ms + 5))
        else:
            self.group_step(key, r)

    def group_step(self, key, r):
        rng = self.rng
        g, c = "g%d" % rng.randrange(3), "c%d" % rng.randrange(4)
        if r < 76:
            start = rng.choice(["0", "$", self.some_id(key)])
            extra = ["ENTRIESREAD", rng.randrange(0, 50)] if rng.random() < 0.2 else []
            self.cmd("XGROUP", "CREATE", key, g, start, *extra)
        elif r < 86:
            noack = ["NOACK"] if rng.random() < 0.1 else []
            self.cmd("XREADGROUP", "GROUP", g, c, "COUNT", rng.randrange(1, 6), *noack, "STREAMS", key, ">")
        elif r < 90:
            self.cmd("XACK", key, g, *[self.some_id(key) for _ in range(rng.randrange(1, 4))])
        elif r < 93:
            self.cmd("XCLAIM", key, g, c, 0, self.some_id(key), self.some_id(key), "TIME", 1700000000000 + r,
                     "RETRYCOUNT", rng.randrange(10))
        elif r < 95:
            self.cmd("XAUTOCLAIM", key, g, c, 0, "0-0", "COUNT", rng.randrange(1, 5))
        elif r < 97:
            self.cmd("XGROUP", "CREATECONSUMER", key, g, c)
        elif r < 98:
            self.cmd("XGROUP", "DELCONSUMER", key, g, c)
        elif r < 99:
            self.cmd("XGROUP", "SETID", key, g, self.some_id(key))
        else:
            self.cmd("XGROUP", "DESTROY", key, g)

    def args(self):
        """The node limits as command-line arguments (they survive a restart)."""
        return [x for name, v in self.config for x in ("--" + name, str(v))]

    def run(self, r, config=True):
        for name, v in self.config if config else ():
            r.config_set(name, v)
        for a in self.cmds:
            try:
                r.execute_command(*a)
            except redispy.ResponseError:
                pass


def stream_keys(r):
    return sorted(k for k in r.scan_iter(count=1000) if r.type(k) == b"stream")


def dumps(r):
    return {k: r.dump(k) for k in stream_keys(r)}


def view(r, key):
    """What a client sees of a stream: both ranges and XINFO STREAM FULL."""
    return (r.xrange(key), r.xrevrange(key), r.execute_command("XINFO", "STREAM", key, "FULL"))


def run_on(kind, seed, tmpdirs, *extra, keys=NKEYS, ops=LONG):
    s = start(kind, tmpdirs(), "--enable-debug-command", "yes", *extra)
    Program(seed, keys, ops).run(client(s))
    return s


SEEDS = [1, 2, 3, 4, 5, 6]


# ------------------------------------------------------------------ DUMP
@pytest.mark.parametrize("seed", SEEDS)
def test_dump_is_byte_identical_to_redis(seed, tmpdirs):
    servers = {k: run_on(k, seed, tmpdirs) for k in KINDS}
    try:
        got = {k: dumps(client(s)) for k, s in servers.items()}
        assert sorted(got["ferry"]) == sorted(got["redis"])
        assert len(got["ferry"]) >= NKEYS
        for key, d in got["redis"].items():
            f = got["ferry"][key]
            if not has_clock(d):
                assert f == d, key
            assert masked(f) == masked(d), key
        rf = client(servers["ferry"])
        assert rf.object("encoding", "s0") == b"stream"
        assert rf.memory_usage("s0") > 0
    finally:
        for s in servers.values():
            s.cleanup()


@pytest.mark.parametrize("seed", SEEDS[:3])
def test_restore_of_the_other_servers_payloads(seed, tmpdirs):
    servers = {k: run_on(k, seed, tmpdirs) for k in KINDS}
    try:
        r = {k: client(s) for k, s in servers.items()}
        for src, dst in (("ferry", "redis"), ("redis", "ferry")):
            for key, d in dumps(r[src]).items():
                copy = b"copy:" + key
                assert r[dst].restore(copy, 0, d)
                assert view(r[dst], copy) == view(r[src], key), (src, dst, key)
                assert r[dst].dump(copy) == d, (src, dst, key)
                r[dst].delete(copy)
    finally:
        for s in servers.values():
            s.cleanup()


# ------------------------------------------------------------------ files
@pytest.mark.parametrize("seed", SEEDS[:2])
def test_rdb_files_load_both_ways(seed, tmpdirs):
    dirs, want = {}, {}
    for kind in KINDS:
        s = run_on(kind, seed, tmpdirs)
        try:
            r = client(s)
            want[kind] = {k: (d, view(r, k)) for k, d in dumps(r).items()}
            assert r.save()
            dirs[kind] = r.config_get("dir")["dir"]
            shutil.copy(os.path.join(dirs[kind], "dump.rdb"), os.path.join(dirs[kind], "keep.rdb"))
        finally:
            s.cleanup()
    for loader in KINDS:
        for writer in KINDS:
            d = tmpdirs()
            shutil.copy(os.path.join(dirs[writer], "keep.rdb"), os.path.join(d, "dump.rdb"))
            s = start(loader, d)
            try:
                r = client(s)
                got = {k: (r.dump(k), view(r, k)) for k in stream_keys(r)}
                assert got == want[writer], (loader, writer)
            finally:
                s.cleanup()


@pytest.mark.parametrize("kind", KINDS)
def test_debug_reload_keeps_streams(kind, tmpdirs):
    s = run_on(kind, 11, tmpdirs)
    try:
        r = client(s)
        before, digest = dumps(r), r.execute_command("DEBUG", "DIGEST")
        values = {k: r.execute_command("DEBUG", "DIGEST-VALUE", k) for k in before}
        assert r.execute_command("DEBUG", "RELOAD")
        assert dumps(r) == before
        assert r.execute_command("DEBUG", "DIGEST") == digest
        assert {k: r.execute_command("DEBUG", "DIGEST-VALUE", k) for k in before} == values
        assert r.copy("s0", "s0copy")
        assert r.execute_command("DEBUG", "DIGEST-VALUE", "s0copy") == values[b"s0"]
        r.xadd("s0", {"more": "1"})
        assert r.execute_command("DEBUG", "DIGEST-VALUE", "s0") != values[b"s0"]
        if kind == "ferry" and IS_FERRY:   # ferry's digest covers the groups too (Redis 7.0's only the entries)
            r.xgroup_create("s0copy", "newgroup", id="0")
            assert r.execute_command("DEBUG", "DIGEST-VALUE", "s0copy") != values[b"s0"]
    finally:
        s.cleanup()


def wait_rewrite(r):
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        i = r.info("persistence")
        if not i["aof_rewrite_in_progress"] and not i["aof_rewrite_scheduled"]:
            assert i["aof_last_bgrewrite_status"] == "ok"
            return
        time.sleep(0.05)
    raise AssertionError("the AOF rewrite did not finish")


AOF = ("--appendonly", "yes", "--appendfsync", "always")


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("preamble", ["yes", "no"])
def test_aof_rewrite_and_restart_keep_streams(kind, preamble, tmpdirs):
    """The rewrite's base alone (RDB preamble, or RESTORE commands when the
    preamble is off) holds every stream byte for byte. (redis-server writes
    XADD, XSETID, XGROUP and XCLAIM commands without the preamble, so its
    nodes are laid out anew: there only the entries are compared.)"""
    d = tmpdirs()
    p = Program(21)
    args = (*AOF, "--aof-use-rdb-preamble", preamble, "--enable-debug-command", "yes", *p.args())
    s = start(kind, d, *args)
    try:
        r = client(s)
        p.run(r, config=False)
        assert r.bgrewriteaof()
        wait_rewrite(r)
        before, digest = dumps(r), r.execute_command("DEBUG", "DIGEST")
        entries = {k: r.xrange(k) for k in before}
    finally:
        s.cleanup()
    s = start(kind, d, *args)
    try:
        r = client(s)
        if (kind == "redis" or not IS_FERRY) and preamble == "no":
            assert {k: r.xrange(k) for k in before} == entries
            return
        assert dumps(r) == before
        assert r.execute_command("DEBUG", "DIGEST") == digest
    finally:
        s.cleanup()


@pytest.mark.parametrize("kind", KINDS)
def test_aof_rewrite_then_more_commands_and_restart(kind, tmpdirs):
    """After a rewrite, stream commands go to the incremental file: a
    restart replays them on the base. This checks the commands'
    propagation as much as the base; replaying commands does not keep the
    consumers' seen-times or the groups' entries-read (redis-server's own
    replay neither), so those are left out."""
    d = tmpdirs()
    p = Program(22, keys=3, ops=150)
    args = (*AOF, "--aof-use-rdb-preamble", "yes", *p.args())
    s = start(kind, d, *args)
    try:
        r = client(s)
        p.cmds, rest = p.cmds[:len(p.cmds) // 2], p.cmds[len(p.cmds) // 2:]
        p.run(r, config=False)
        assert r.bgrewriteaof()
        wait_rewrite(r)
        p.cmds = rest
        p.run(r, config=False)
        before = {k: relaxed(v) for k, v in dumps(r).items()}
    finally:
        s.cleanup()
    s = start(kind, d, *args)
    try:
        after = {k: relaxed(v) for k, v in dumps(client(s)).items()}
        assert sorted(after) == sorted(before)
        for k in before:
            assert after[k] == before[k], k
    finally:
        s.cleanup()


# ------------------------------------------------------------------ other versions
def redis_payloads(tmpdirs, seed=31):
    """Type-19 DUMPs of a program's streams on redis-server."""
    s = run_on("redis", seed, tmpdirs, keys=4, ops=120)
    try:
        return dumps(client(s))
    finally:
        s.cleanup()


def load_file(kind, data, tmpdirs):
    d = tmpdirs()
    with open(os.path.join(d, "dump.rdb"), "wb") as f:
        f.write(data)
    s = start(kind, d)
    try:
        r = client(s)
        return {k: (r.dump(k), view(r, k)) for k in stream_keys(r)}
    finally:
        s.cleanup()


def file_with(payloads, version, t):
    w = RdbWriter(version)
    w.select_db(0)
    w.key(T.STRING, "before", "1")
    for key, d in payloads.items():
        st, _ = parse_dump(d)
        p = emit(st, t)
        w.raw(p[:1] + rdb_string(key) + p[1:])
    w.key(T.STRING, "after", "2")
    return w.finish()


def test_redis_6_2_type_15_loads_as_on_redis(tmpdirs):
    """Type 15 has no first ID, tombstone ID and counters: both servers
    derive the same ones (and write them back as type 19 alike)."""
    data = file_with(redis_payloads(tmpdirs), 9, T15)
    got = {k: load_file(k, data, tmpdirs) for k in KINDS}
    assert got["ferry"] == got["redis"]
    assert len(got["ferry"]) >= 4


@ferry_only
def test_redis_7_2_type_21_loads_as_the_type_19_original(tmpdirs):
    payloads = redis_payloads(tmpdirs)
    got = load_file("ferry", file_with(payloads, 11, T21), tmpdirs)
    assert {k: v[0] for k, v in got.items()} == payloads


# ------------------------------------------------------------------ refusals
def restore_reply(r, key, payload):
    """True, or the error's text."""
    try:
        return r.restore(key, 0, payload, replace=True) in (True, b"OK", "OK")
    except redispy.ResponseError as e:
        return str(e)


def broken_payloads(d):
    """(what, payload) pairs, each broken in one way, CRC recomputed."""
    base, _ = parse_dump(d)
    assert len(base.nodes) >= 2 and base.length > 0
    g = next(x for x in base.groups if x.consumers and x.pel)

    def variant(change):
        st, _ = parse_dump(d)
        gg = next(x for x in st.groups if x.name == g.name)
        change(st, gg)
        return as_dump(emit(st))

    out = [
        ("node key of 15 bytes", variant(lambda st, gg: st.nodes.__setitem__(0, (st.nodes[0][0][:15], st.nodes[0][1])))),
        ("nodes out of order", variant(lambda st, gg: st.nodes.reverse())),
        ("length off by one", variant(lambda st, gg: setattr(st, "length", st.length + 1))),
        ("last ID below the last entry", variant(lambda st, gg: setattr(st, "last", (0, 1)))),
        ("duplicate group", variant(lambda st, gg: st.groups.append(gg))),
        ("duplicate consumer", variant(lambda st, gg: gg.consumers.append(gg.consumers[0]))),
        ("duplicate group PEL entry", variant(lambda st, gg: gg.pel.append(gg.pel[0]))),
        ("consumer PEL entry missing from the group PEL",
         variant(lambda st, gg: gg.consumers[0].pel.append(raw_id(2**64 - 1, 9)))),
        ("group PEL entry without a consumer",
         variant(lambda st, gg: gg.pel.append((raw_id(2**64 - 1, 9), 0, 1)))),
        ("listpack cut short", variant(lambda st, gg: st.nodes.__setitem__(0, (st.nodes[0][0], st.nodes[0][1][:-3])))),
    ]
    return out


@ferry_only
def test_broken_payloads_are_bad_data_format(tmpdirs):
    payloads = redis_payloads(tmpdirs)
    d = next(p for p in payloads.values()
             if has_clock(p) and len(parse_dump(p)[0].nodes) >= 2 and parse_dump(p)[0].length > 0)
    f = start("ferry", tmpdirs())
    rd = start("redis", tmpdirs(), "--sanitize-dump-payload", "yes")
    try:
        rf, rr = client(f), client(rd)
        assert restore_reply(rf, "k", as_dump(emit(parse_dump(d)[0]))) is True   # the writer itself is right
        for what, p in broken_payloads(d):
            assert restore_reply(rf, "k", p) == "Bad data format", what
        for what, p in broken_payloads(d):   # redis-server (deep sanitization) refuses those it checks
            if what.startswith(("node key", "duplicate", "consumer PEL", "group PEL", "listpack")):
                assert restore_reply(rr, "k", p) == "Bad data format", what
        assert rf.ping()
    finally:
        f.cleanup()
        rd.cleanup()


@ferry_only
def test_byte_flips_never_crash(tmpdirs):
    payloads = redis_payloads(tmpdirs)
    rng = random.Random(5)
    f = start("ferry", tmpdirs())
    try:
        r = client(f)
        for d in payloads.values():
            body = bytearray(d[:-10])
            for _ in range(150):
                b = bytearray(body)
                for _ in range(rng.randrange(1, 4)):
                    b[rng.randrange(1, len(b))] ^= 1 << rng.randrange(8)
                reply = restore_reply(r, "k", as_dump(bytes(b)))
                assert reply is True or reply == "Bad data format", reply
                if reply is True:   # whatever loaded is a stream that works
                    view(r, "k")
                    again = r.dump("k")
                    assert restore_reply(r, "k2", again) is True and r.dump("k2") == again
        assert r.ping()
    finally:
        f.cleanup()


@ferry_only
def test_broken_stream_in_a_file_stops_the_start(tmpdirs):
    payloads = redis_payloads(tmpdirs)
    d = next(p for p in payloads.values() if has_clock(p))
    st, _ = parse_dump(d)
    st.groups.append(st.groups[0])
    w = RdbWriter(10)
    w.select_db(0)
    w.raw(bytes([T19]) + b"\x06broken" + emit(st)[1:])
    dd = tmpdirs()
    with open(os.path.join(dd, "dump.rdb"), "wb") as fh:
        fh.write(w.finish())
    with pytest.raises(RuntimeError) as e:
        start("ferry", dd)
    assert "duplicate stream consumer group" in str(e.value), str(e.value)[-600:]
