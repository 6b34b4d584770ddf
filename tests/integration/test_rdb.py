"""RDB snapshots (issue 12): SAVE / BGSAVE / restart on ferry and on
redis-server, files exchanged between the two, crash safety and corrupt
files.

The oracle is redis-server 7.0: the same random program runs on both, both
save, each server loads the other's file, and the datasets of all four are
compared value by value (type, encoding, contents, TTL).
"""
from __future__ import annotations

import os
import random
import shutil
import signal
import tempfile
import time

import pytest
import redis as redispy

from conftest import start_in as start, start_server

KINDS = ["ferry", "redis"]
MISCONF = ("MISCONF Redis is configured to save RDB snapshots, but it's currently unable to persist to disk. "
           "Commands that may modify the data set are disabled, because this instance is configured to report "
           "errors during writes if RDB snapshotting fails (stop-writes-on-bgsave-error option). Please check the "
           "Redis logs for details about the RDB error.")


# ------------------------------------------------------------------ helpers
def client(server):
    return redispy.Redis(port=server.port, socket_timeout=30)


def rand_bytes(rng, n):
    return bytes(rng.randrange(256) for _ in range(n))


def rand_member(rng):
    k = rng.randrange(6)
    if k == 0:
        return str(rng.randrange(-2**40, 2**40))
    if k == 1:
        return str(rng.randrange(-300, 300))
    if k == 2:
        return rand_bytes(rng, rng.randrange(1, 12))
    if k == 3:
        return "m" * rng.randrange(1, 200)  # compressible, LZF past 20 bytes
    return "v%d" % rng.randrange(10**6)


def fill(r, seed, nkeys=300, dbs=(0, 3, 15)):
    """A random dataset over every type and encoding, small and large
    collections, integers, binary values, expiries, several dbs."""
    rng = random.Random(seed)
    for db in dbs:
        r.execute_command("SELECT", db)
        for i in range(nkeys):
            key = "k:%d:%d" % (db, i)
            big = rng.random() < 0.15
            n = rng.randrange(300, 1500) if big else rng.randrange(1, 12)
            t = rng.randrange(5)
            if t == 0:
                r.set(key, rand_member(rng) if not big else rand_bytes(rng, rng.randrange(100, 5000)))
            elif t == 1:
                r.rpush(key, *[rand_member(rng) for _ in range(n)])
            elif t == 2:
                if rng.random() < 0.5:
                    r.sadd(key, *[rng.randrange(-2**62, 2**62) if rng.random() < 0.1 else rng.randrange(-1000, 70000)
                                  for _ in range(n)])
                else:
                    r.sadd(key, *[rand_member(rng) for _ in range(n)])
            elif t == 3:
                r.hset(key, mapping={rand_member(rng): rand_member(rng) for _ in range(n)})
            else:
                scores = [rng.choice([rng.randrange(-100, 100), rng.uniform(-1e6, 1e6), 1e300, -0.5])
                          for _ in range(n)]
                r.zadd(key, {rand_member(rng): s for s in scores})
            if rng.random() < 0.2:
                r.pexpire(key, rng.randrange(10**6, 10**8))
    r.execute_command("SELECT", 0)


def snapshot(r, dbs=range(16)):
    """Every key of every db: type, encoding, contents (order-free where the
    server's order is its hash order) and TTL in ms (-1 for none); compare
    snapshots with same_data, which allows TTLs to differ by the time that
    passed between them."""
    out = {}
    for db in dbs:
        r.execute_command("SELECT", db)
        for key in r.scan_iter(count=1000):
            t = r.type(key).decode()
            enc = r.object("encoding", key)
            if t == "string":
                v = r.get(key)
            elif t == "list":
                v = r.lrange(key, 0, -1)
            elif t == "set":
                v = sorted(r.smembers(key))
            elif t == "hash":
                v = sorted(r.hgetall(key).items())
            else:
                v = r.zrange(key, 0, -1, withscores=True)
            pttl = r.pttl(key)
            out[(db, key)] = (t, enc, v, -1 if pttl < 0 else pttl)
    r.execute_command("SELECT", 0)
    return out


def same_data(a, b, ttl_slack_ms=60000):
    """The two snapshots hold the same keys and values; a TTL differs by at
    most ttl_slack_ms. Returns a list of differences (empty if none)."""
    diffs = ["only in first: %r" % (k,) for k in a.keys() - b.keys()]
    diffs += ["only in second: %r" % (k,) for k in b.keys() - a.keys()]
    for k in a.keys() & b.keys():
        (ta, ea, va, xa), (tb, eb, vb, xb) = a[k], b[k]
        if (ta, ea, va) != (tb, eb, vb) or (xa < 0) != (xb < 0) or abs(xa - xb) > ttl_slack_ms:
            diffs.append("%r: %r != %r" % (k, a[k], b[k]))
    return diffs[:10]


def info(r, section="persistence"):
    return r.info(section)


def wait_bgsave(r, timeout=60):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        i = info(r)
        if not i["rdb_bgsave_in_progress"]:
            return i
        time.sleep(0.05)
    raise AssertionError("BGSAVE did not finish")


# ------------------------------------------------------------------ tests
@pytest.mark.timeout(300)
def test_files_load_both_ways_with_identical_data(tmpdirs):
    """The same random program on ferry and redis-server; both SAVE; each
    loads its own and the other's file: all four datasets are identical."""
    dirs = {k: tmpdirs() for k in KINDS}
    originals = {}
    for kind in KINDS:
        s = start(kind, dirs[kind])
        try:
            r = client(s)
            fill(r, seed=12)
            assert r.save()
            originals[kind] = snapshot(r)
        finally:
            s.cleanup()
    assert not same_data(originals["ferry"], originals["redis"]), same_data(originals["ferry"], originals["redis"])
    assert len(originals["ferry"]) > 500
    for loader in KINDS:
        for writer in KINDS:
            d = tmpdirs()
            shutil.copy(os.path.join(dirs[writer], "dump.rdb"), os.path.join(d, "dump.rdb"))
            s = start(loader, d)
            try:
                got = snapshot(client(s))
            finally:
                s.cleanup()
            assert not same_data(got, originals[writer]), (loader, writer, same_data(got, originals[writer]))


@pytest.mark.parametrize("kind", KINDS)
def test_restart_after_save_and_kill9_keeps_everything(tmpdirs, kind):
    d = tmpdirs()
    s = start(kind, d)
    r = client(s)
    fill(r, seed=3, nkeys=100, dbs=(0, 1))
    before = snapshot(r)
    assert r.save()
    assert info(r)["rdb_changes_since_last_save"] == 0
    os.killpg(s.proc.pid, signal.SIGKILL)
    s.proc.wait()
    s.stop()
    s2 = start(kind, d)
    try:
        r2 = client(s2)
        assert not same_data(snapshot(r2), before)
        assert info(r2)["rdb_last_load_keys_loaded"] == len(before)
    finally:
        s2.cleanup()
        s.cleanup()


@pytest.mark.parametrize("kind", KINDS)
def test_sigterm_saves_when_save_points_are_configured(tmpdirs, kind):
    d = tmpdirs()
    s = start(kind, d, "--save", "3600 1")
    r = client(s)
    r.set("a", "1")
    r.rpush("l", *range(100))
    before = snapshot(r)
    s.proc.send_signal(signal.SIGTERM)
    assert s.proc.wait(timeout=30) == 0
    s.stop()
    assert os.path.exists(os.path.join(d, "dump.rdb"))
    s2 = start(kind, d)
    try:
        assert not same_data(snapshot(client(s2)), before)
    finally:
        s2.cleanup()
        s.cleanup()


@pytest.mark.parametrize("kind", KINDS)
def test_bgsave_reports_and_the_file_loads(tmpdirs, kind):
    d = tmpdirs()
    s = start(kind, d)
    try:
        r = client(s)
        fill(r, seed=5, nkeys=200, dbs=(0,))
        before = snapshot(r)
        last = r.lastsave()
        time.sleep(1.1)
        assert r.bgsave()
        i = wait_bgsave(r)
        assert i["rdb_last_bgsave_status"] == "ok"
        assert i["rdb_changes_since_last_save"] == 0
        assert r.lastsave() > last
    finally:
        s.cleanup()
    s2 = start(kind, d)
    try:
        assert not same_data(snapshot(client(s2)), before)
    finally:
        s2.cleanup()


@pytest.mark.parametrize("kind", KINDS)
def test_debug_reload_keeps_the_dataset(tmpdirs, kind):
    s = start(kind, tmpdirs(), "--enable-debug-command", "yes")
    try:
        r = client(s)
        assert r.execute_command("DEBUG", "DIGEST") == b"0" * 40
        fill(r, seed=8, nkeys=100, dbs=(0, 2))
        before, digest = snapshot(r), r.execute_command("DEBUG", "DIGEST")
        assert digest != b"0" * 40
        assert r.execute_command("DEBUG", "RELOAD")
        assert not same_data(snapshot(r), before)
        assert r.execute_command("DEBUG", "DIGEST") == digest
        r.set("extra", "1")
        assert r.execute_command("DEBUG", "DIGEST") != digest
    finally:
        s.cleanup()


@pytest.mark.parametrize("kind", KINDS)
def test_digest_value_ignores_the_encoding(tmpdirs, kind):
    """The same contents in different encodings (a hash built small then
    converted, one built large and trimmed) digest alike; other contents
    do not; a missing key digests to zeros."""
    s = start(kind, tmpdirs(), "--enable-debug-command", "yes")
    try:
        r = client(s)
        r.hset("small", mapping={"a": "1", "b": "2"})
        r.hset("big", mapping={"a": "1", "b": "2", "c": "x" * 100})
        r.hdel("big", "c")
        assert r.object("encoding", "small") != r.object("encoding", "big")
        r.sadd("s1", 1, 2, 3)
        r.sadd("s2", 3, 2, 1, "x")
        r.srem("s2", "x")
        d = r.execute_command("DEBUG", "DIGEST-VALUE", "small", "big", "s1", "s2", "missing")
        assert d[0] == d[1] and d[2] == d[3] and d[0] != d[2]
        assert d[4] == b"0" * 40
    finally:
        s.cleanup()


@pytest.mark.parametrize("kind", KINDS)
def test_save_points_trigger_a_background_save(tmpdirs, kind):
    d = tmpdirs()
    s = start(kind, d, "--save", "1 3")
    try:
        r = client(s)
        for i in range(5):
            r.set("k%d" % i, i)
        deadline = time.monotonic() + 15
        while time.monotonic() < deadline and info(r)["rdb_changes_since_last_save"] != 0:
            time.sleep(0.1)
        i = wait_bgsave(r)
        assert i["rdb_changes_since_last_save"] == 0
        assert os.path.exists(os.path.join(d, "dump.rdb"))
    finally:
        s.cleanup()


@pytest.mark.parametrize("kind", KINDS)
def test_misconf_after_a_failed_bgsave_until_a_save_succeeds(tmpdirs, kind):
    """With save points configured, a background save that fails (its file
    cannot replace dump.rdb, here a directory) makes writes get -MISCONF
    while reads keep working; once a save succeeds writes work again."""
    d = tmpdirs()
    s = start(kind, d, "--save", "3600 1000")
    try:
        r = client(s)
        r.set("k", "v")
        os.mkdir(os.path.join(d, "dump.rdb"))
        r.bgsave()
        i = wait_bgsave(r)
        assert i["rdb_last_bgsave_status"] == "err"
        with pytest.raises(redispy.ResponseError) as e:
            r.set("k2", "v")
        assert str(e.value) == MISCONF
        assert r.get("k") == b"v"
        with pytest.raises(redispy.ResponseError) as e:
            r.ping()
        assert str(e.value) == MISCONF
        os.rmdir(os.path.join(d, "dump.rdb"))
        assert r.save()
        assert r.set("k2", "v")
    finally:
        s.cleanup()


@pytest.mark.parametrize("kind", KINDS)
def test_kill9_during_bgsave_leaves_the_previous_file(tmpdirs, kind):
    """rdb-key-save-delay makes the child take about 2 s, so the kill lands
    while it writes."""
    d = tmpdirs()
    s = start(kind, d)
    r = client(s)
    r.set("first", "1")
    assert r.save()
    good = open(os.path.join(d, "dump.rdb"), "rb").read()
    pipe = r.pipeline(transaction=False)
    for i in range(20000):
        pipe.set("key:%d" % i, "x" * 100)
    pipe.execute()
    r.config_set("rdb-key-save-delay", 100)
    r.bgsave()
    time.sleep(0.3)
    assert info(r)["rdb_bgsave_in_progress"] == 1
    os.killpg(s.proc.pid, signal.SIGKILL)  # the child too: same process group
    s.proc.wait()
    s.stop()
    assert open(os.path.join(d, "dump.rdb"), "rb").read() == good
    s2 = start(kind, d)
    try:
        assert client(s2).get("first") == b"1"
        assert client(s2).dbsize() == 1
    finally:
        s2.cleanup()
        s.cleanup()


def test_corrupt_files_are_refused_with_file_and_offset(tmpdirs):
    """Flipped and truncated bytes at many offsets: ferry refuses to start,
    names the file and the offset, and leaves the file as it was."""
    d = tmpdirs()
    s = start("ferry", d)
    r = client(s)
    fill(r, seed=9, nkeys=30, dbs=(0,))
    assert r.save()
    s.cleanup()
    good = open(os.path.join(d, "dump.rdb"), "rb").read()
    rng = random.Random(1)
    offsets = sorted(set([0, 5, 9, len(good) - 1, len(good) - 9] + [rng.randrange(len(good)) for _ in range(12)]))
    for off in offsets:
        for bad in (good[:off], good[:off] + bytes([good[off] ^ 0x5A]) + good[off + 1:]):
            dd = tmpdirs()
            path = os.path.join(dd, "dump.rdb")
            open(path, "wb").write(bad)
            with pytest.raises(RuntimeError) as e:
                start("ferry", dd)
            assert open(path, "rb").read() == bad, "the file was changed"
            assert "dump.rdb" in str(e.value) and "offset" in str(e.value), str(e.value)[-500:]


# ------------------------------------------------------------------ DUMP / RESTORE
def build_values(r):
    r.set("int", "12345")
    r.set("bigint", "123456789012")
    r.set("short", "hello")
    r.set("long", "abc" * 100)
    r.set("binary", bytes(range(256)))
    r.rpush("list", "a", "1", "-7", "x" * 70, "12345678901", "3.5")
    r.sadd("intset", 1, -2, 70000, 2**40)
    r.sadd("strset", "a")
    r.hset("hash", mapping={"f": "v", "n": "42", "long": "y" * 60})
    r.zadd("zset", {"a": 1, "b": -2.5, "c": 3.14159, "d": 1e300, "e": float("inf")})


def test_dump_is_byte_identical_to_redis_for_compact_encodings():
    payloads = {}
    for kind in KINDS:
        s = start_server(kind)
        try:
            r = client(s)
            build_values(r)
            payloads[kind] = {k: r.dump(k) for k in
                              ["int", "bigint", "short", "long", "binary", "list", "intset", "strset", "hash", "zset"]}
        finally:
            s.cleanup()
    for k, want in payloads["redis"].items():
        assert payloads["ferry"][k] == want, "DUMP %s: ferry %r redis %r" % (k, payloads["ferry"][k], want)


@pytest.mark.timeout(300)
def test_restore_accepts_the_other_servers_payloads():
    dumps, snaps = {}, {}
    for kind in KINDS:
        s = start_server(kind)
        try:
            r = client(s)
            fill(r, seed=21, nkeys=200, dbs=(0,))
            snaps[kind] = snapshot(r, dbs=(0,))
            dumps[kind] = {k: (r.dump(k), r.pttl(k)) for k in r.scan_iter(count=1000)}
        finally:
            s.cleanup()
    assert not same_data(snaps["ferry"], snaps["redis"])
    for loader in KINDS:
        for writer in KINDS:
            s = start_server(loader)
            try:
                r = client(s)
                for k, (payload, pttl) in dumps[writer].items():
                    assert r.restore(k, max(pttl, 0), payload) == b"OK"
                got = snapshot(r, dbs=(0,))
                assert not same_data(got, snaps[writer]), (loader, writer, same_data(got, snaps[writer]))
            finally:
                s.cleanup()


def restore_outcome(r, key, payload, *args):
    try:
        return ("ok", r.execute_command("RESTORE", key, 0, payload, *args))
    except redispy.ResponseError as e:
        return ("err", str(e))


def test_corrupt_payloads_get_redis_errors_never_a_crash():
    servers = {k: start_server(k) for k in KINDS}
    try:
        rs = {k: client(s) for k, s in servers.items()}
        build_values(rs["redis"])
        rng = random.Random(4)
        payloads = [rs["redis"].dump(k) for k in ["int", "long", "list", "intset", "strset", "hash", "zset"]]
        cases = []
        for p in payloads:
            for off in sorted(set(rng.randrange(len(p)) for _ in range(10))):
                cases.append(p[:off])
                cases.append(p[:off] + bytes([p[off] ^ 0x21]) + p[off + 1:])
        for i, bad in enumerate(cases):
            out = {k: restore_outcome(r, "bad%d" % i, bad, "REPLACE") for k, r in rs.items()}
            assert out["ferry"] == out["redis"], "payload %r" % bad
        for k, s in servers.items():
            assert rs[k].ping() and s.alive()
    finally:
        for s in servers.values():
            s.cleanup()


def test_restore_arguments_and_errors_match_redis():
    outs = {}
    for kind in KINDS:
        s = start_server(kind)
        try:
            r = client(s)
            r.set("src", "value")
            p = r.dump("src")
            steps = [("src", 0, p), ("new", -1, p), ("new", "x", p), ("new", 0, p, "FOO"),
                     ("new", 0, p, "IDLETIME", -1), ("new", 0, p, "FREQ", 256), ("new", 0, p, "IDLETIME", 1, "FREQ", 1),
                     ("new", 0, p, "REPLACE", "ABSTTL"), ("new", 0, p), ("new", 0, p, "REPLACE"),
                     ("old", 1, p, "ABSTTL"), ("ttl", 100000, p)]
            got = []
            for st in steps:
                try:
                    got.append(r.execute_command("RESTORE", *st))
                except redispy.ResponseError as e:
                    got.append("ERR " + str(e))
            got += [r.exists("old"), r.get("new"), 90000 < r.pttl("ttl") <= 100000]
            outs[kind] = got
        finally:
            s.cleanup()
    assert outs["ferry"] == outs["redis"]
