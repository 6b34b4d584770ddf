"""MIGRATE (src/commands/cmd_migrate.c) against redis-server 7.0 (the oracle).

Why each group exists:
  - every value type (and both encodings of each) must arrive identical, TTL
    kept, whichever of ferry and redis-server is the source or the target:
    the payloads are DUMP payloads, so both sides must agree on them;
  - COPY, REPLACE, the KEYS form, AUTH and AUTH2 (a target with requirepass,
    a target with an ACL user), the target's errors relayed (BUSYKEY,
    WRONGPASS), +NOKEY, an unreachable target, an unknown host and a target
    that never answers (the timeout) behave as Redis's;
  - the same command sequence, run with ferry and with redis-server as the
    source (each towards a target of the same kind), gets the same reply
    bytes;
  - moved keys leave the source as DEL: in the AOF (reloaded, the keys stay
    gone) and as `del` keyspace events;
  - target connections are cached (one connection at the target, INFO's
    migrate_cached_sockets) and closed after 10 s unused.
"""
from __future__ import annotations

import socket
import threading
import time

import pytest
import redis as redispy

from conftest import start_server
from resp_client import RawClient

KINDS = [("ferry", "ferry"), ("ferry", "redis"), ("redis", "ferry")]


def rc(server, **kw):
    return redispy.Redis(port=server.port, **kw)


@pytest.fixture(scope="module")
def servers():
    started = {}

    def get(name, kind, *extra):
        if name not in started:
            started[name] = start_server(kind, *extra)
        return started[name]

    yield get
    for s in started.values():
        s.cleanup()


def fill_every_type(r):
    """Keys of every type, small and large encodings; some with TTLs."""
    r.set("s:int", 12345)
    r.set("s:short", "hello")
    r.set("s:long", "x" * 5000, px=500000)
    r.set("s:bin", bytes(range(256)))
    r.rpush("l:small", *["a", "1", "bb"])
    r.rpush("l:big", *[("item%d" % i) * 10 for i in range(300)])
    r.pexpire("l:big", 400000)
    r.hset("h:small", mapping={"f1": "v1", "f2": "2"})
    r.hset("h:big", mapping={"field%d" % i: "value%d" % i * 20 for i in range(300)})
    r.sadd("set:int", *range(50))
    r.sadd("set:str", *["m%d" % i for i in range(200)])
    r.sadd("set:small", "a", "b")
    r.zadd("z:small", {"a": 1, "b": 2.5, "c": -3})
    r.zadd("z:big", {"member%d" % i: i / 7 for i in range(300)}, )
    r.pexpire("z:big", 300000)
    for i in range(50):
        r.xadd("st", {"f": i, "g": "v%d" % i}, id="%d-%d" % (1000 + i, i % 3))
    r.xgroup_create("st", "grp", id="1010-0")
    r.xreadgroup("grp", "alice", {"st": ">"}, count=5)
    r.xdel("st", "1003-0")


def snapshot(r, key):
    t = r.type(key).decode()
    if t == "string":
        v = r.get(key)
    elif t == "list":
        v = r.lrange(key, 0, -1)
    elif t == "hash":
        v = sorted(r.hgetall(key).items())
    elif t == "set":
        v = sorted(r.smembers(key))
    elif t == "zset":
        v = r.zrange(key, 0, -1, withscores=True)
    elif t == "stream":
        groups = [(g["name"], g["consumers"], g["pending"], g["last-delivered-id"]) for g in r.xinfo_groups(key)]
        info = r.xinfo_stream(key)
        v = (r.xrange(key), groups, info["length"], info["last-generated-id"])
    else:
        v = None
    return t, v


def keyspace(r):
    return {k: snapshot(r, k) for k in sorted(r.keys("*"))}


@pytest.mark.parametrize("src_kind,dst_kind", KINDS)
def test_every_type_arrives_identical_with_ttl(server_factory, src_kind, dst_kind):
    src, dst = server_factory(src_kind), server_factory(dst_kind)
    rs, rd = rc(src), rc(dst)
    fill_every_type(rs)
    before = keyspace(rs)
    ttls = {k: rs.pttl(k) for k in before}
    keys = list(before)
    for k in keys[:4]:  # the single-key form
        assert rs.execute_command("MIGRATE", "127.0.0.1", dst.port, k, 0, 5000) == b"OK"
    assert rs.execute_command("MIGRATE", "127.0.0.1", dst.port, "", 0, 5000, "KEYS", *keys[4:]) == b"OK"
    assert rs.dbsize() == 0
    assert keyspace(rd) == before
    for k, ttl in ttls.items():
        got = rd.pttl(k)
        if ttl < 0:
            assert got == -1, k
        else:
            assert ttl - 3000 < got <= ttl, (k, ttl, got)


@pytest.mark.parametrize("src_kind,dst_kind", KINDS)
def test_copy_replace_busykey_and_db(server_factory, src_kind, dst_kind):
    src, dst = server_factory(src_kind), server_factory(dst_kind)
    rs, rd = rc(src), rc(dst)
    rs.set("k", "new")
    rd.set("k", "old")
    err = "Target instance replied with error: BUSYKEY Target key name already exists."
    with pytest.raises(redispy.ResponseError, match=err):
        rs.execute_command("MIGRATE", "127.0.0.1", dst.port, "k", 0, 5000)
    assert rs.get("k") == b"new" and rd.get("k") == b"old"
    assert rs.execute_command("MIGRATE", "127.0.0.1", dst.port, "k", 0, 5000, "COPY", "REPLACE") == b"OK"
    assert rs.get("k") == b"new" and rd.get("k") == b"new"
    assert rs.execute_command("MIGRATE", "127.0.0.1", dst.port, "k", 5, 5000) == b"OK"
    assert rs.exists("k") == 0
    assert rc(dst, db=5).get("k") == b"new"
    assert rs.execute_command("MIGRATE", "127.0.0.1", dst.port, "k", 5, 5000) == b"NOKEY"


@pytest.mark.parametrize("src_kind,dst_kind", KINDS)
def test_auth_and_auth2(server_factory, src_kind, dst_kind):
    src = server_factory(src_kind)
    dst = server_factory(dst_kind)
    rc(dst).config_set("requirepass", "sekret")
    rs = rc(src)
    rd = rc(dst, password="sekret")
    rd.execute_command("ACL", "SETUSER", "mover", "on", ">pw2", "~*", "+@all")
    rs.set("a", 1)
    rs.set("b", 2)
    with pytest.raises(redispy.ResponseError, match="Target instance replied with error: NOAUTH"):
        rs.execute_command("MIGRATE", "127.0.0.1", dst.port, "a", 0, 5000)
    with pytest.raises(redispy.ResponseError, match="Target instance replied with error: WRONGPASS"):
        rs.execute_command("MIGRATE", "127.0.0.1", dst.port, "a", 0, 5000, "AUTH", "nope")
    assert rs.execute_command("MIGRATE", "127.0.0.1", dst.port, "a", 0, 5000, "AUTH", "sekret") == b"OK"
    assert rs.execute_command("MIGRATE", "127.0.0.1", dst.port, "", 0, 5000, "AUTH2", "mover", "pw2",
                              "KEYS", "b") == b"OK"
    assert rd.mget("a", "b") == [b"1", b"2"]
    assert rs.dbsize() == 0


class SilentTarget:
    """A TCP server that accepts connections and never answers."""

    def __init__(self):
        self.sock = socket.socket()
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(8)
        self.port = self.sock.getsockname()[1]
        self.conns = []
        self.thread = threading.Thread(target=self._accept, daemon=True)
        self.thread.start()

    def _accept(self):
        try:
            while True:
                self.conns.append(self.sock.accept()[0])
        except OSError:
            pass

    def close(self):
        for c in self.conns:
            c.close()
        self.sock.close()


@pytest.mark.parametrize("kind", ["ferry", "redis"])
def test_errors_and_timeouts(server_factory, kind):
    src = server_factory(kind)
    rs = rc(src)
    rs.set("a", 1)
    closed = socket.socket()
    closed.bind(("127.0.0.1", 0))
    dead_port = closed.getsockname()[1]
    closed.close()
    with pytest.raises(redispy.ResponseError, match="^IOERR error or timeout writing to target instance$"):
        rs.execute_command("MIGRATE", "127.0.0.1", dead_port, "a", 0, 500)
    with pytest.raises(redispy.ResponseError, match="^IOERR error or timeout connecting to the client$"):
        rs.execute_command("MIGRATE", "no-such-host.invalid", 1, "a", 0, 500)
    silent = SilentTarget()
    try:
        t0 = time.monotonic()
        with pytest.raises(redispy.ResponseError, match="^IOERR error or timeout reading to target instance$"):
            rs.execute_command("MIGRATE", "127.0.0.1", silent.port, "a", 0, 300)
        took = time.monotonic() - t0
        assert 0.25 < took < 3, took
    finally:
        silent.close()
    assert rs.get("a") == b"1"  # nothing moved
    assert rs.execute_command("MIGRATE", "127.0.0.1", dead_port, "missing", 0, 500) == b"NOKEY"


def sequence(target_port, dead_port):
    t = str(target_port)
    return [
        ("SET", "a", "1"), ("SET", "b", "2"), ("RPUSH", "l", "x", "y"), ("SET", "c", "3"),
        ("MIGRATE", "127.0.0.1", t, "a", "0", "1000"),
        ("MIGRATE", "127.0.0.1", t, "a", "0", "1000"),
        ("MIGRATE", "127.0.0.1", t, "b", "0", "1000", "COPY"),
        ("MIGRATE", "127.0.0.1", t, "b", "0", "1000", "COPY"),
        ("MIGRATE", "127.0.0.1", t, "b", "0", "1000", "REPLACE"),
        ("MIGRATE", "127.0.0.1", t, "", "0", "1000", "KEYS", "l", "nokey", "c"),
        ("MIGRATE", "127.0.0.1", t, "", "0", "1000", "KEYS", "x", "y"),
        ("MIGRATE", "127.0.0.1", t, "", "0", "1000", "KEYS"),
        ("MIGRATE", "127.0.0.1", t, "a", "0", "1000", "KEYS", "b"),
        ("MIGRATE", "127.0.0.1", t, "a", "0", "1000", "BOGUS"),
        ("MIGRATE", "127.0.0.1", t, "a", "0", "1000", "AUTH"),
        ("MIGRATE", "127.0.0.1", t, "a", "0", "1000", "AUTH2", "u"),
        ("MIGRATE", "127.0.0.1", t, "a", "0", "notanumber"),
        ("MIGRATE", "127.0.0.1", t, "a", "db", "1000"),
        ("MIGRATE", "127.0.0.1", t, "a", "0"),
        ("SET", "d", "4"),
        ("MIGRATE", "127.0.0.1", t, "d", "0", "1000", "AUTH", "pw"),
        ("MIGRATE", "127.0.0.1", t, "d", "3", "-5"),
        ("MIGRATE", "127.0.0.1", str(dead_port), "d", "0", "300"),
        ("SET", "e", "5"), ("PEXPIRE", "e", "100000"),
        ("MIGRATE", "127.0.0.1", t, "e", "0", "1000"),
        ("DBSIZE",), ("KEYS", "*"),
    ]


def run_sequence(kind, dead_port):
    src, dst = start_server(kind), start_server(kind)
    try:
        with RawClient(src.port) as c:
            replies = [c.command(*cmd) for cmd in sequence(dst.port, dead_port)]
        with RawClient(dst.port) as d:
            after = [d.command("KEYS", "*"), d.command("SELECT", "3"), d.command("KEYS", "*")]
        return replies, after
    finally:
        src.cleanup()
        dst.cleanup()


def test_replies_byte_for_byte_like_redis():
    closed = socket.socket()
    closed.bind(("127.0.0.1", 0))
    dead_port = closed.getsockname()[1]
    closed.close()
    ferry_replies, ferry_after = run_sequence("ferry", dead_port)
    redis_replies, redis_after = run_sequence("redis", dead_port)
    for cmd, f, r in zip(sequence(0, dead_port), ferry_replies, redis_replies):
        assert f == r, (cmd, f, r)
    assert sorted(ferry_after[0].split(b"\r\n")) == sorted(redis_after[0].split(b"\r\n"))
    assert sorted(ferry_after[2].split(b"\r\n")) == sorted(redis_after[2].split(b"\r\n"))


def test_command_info_and_getkeys_like_redis(servers):
    f, r = servers("f", "ferry"), servers("r", "redis")
    cases = [
        ("COMMAND", "INFO", "MIGRATE"),
        ("COMMAND", "GETKEYS", "MIGRATE", "h", "1", "k", "0", "10"),
        ("COMMAND", "GETKEYS", "MIGRATE", "h", "1", "", "0", "10", "COPY", "AUTH2", "u", "p", "KEYS", "x", "y"),
        ("COMMAND", "GETKEYS", "MIGRATE", "h", "1", "", "0", "10", "AUTH", "keys", "KEYS", "z"),
    ]
    with RawClient(f.port) as cf, RawClient(r.port) as cr:
        for case in cases:
            assert cf.command(*case) == cr.command(*case), case


@pytest.mark.parametrize("kind", ["ferry", "redis"])
def test_moved_keys_propagate_as_del_and_notify(server_factory, kind):
    src = server_factory(kind, "--appendonly", "yes", "--enable-debug-command", "yes")
    dst = server_factory(kind)
    rs = rc(src)
    rs.config_set("notify-keyspace-events", "KEg")
    rs.mset({"a": 1, "b": 2, "c": 3})
    ps = rc(src).pubsub()
    ps.psubscribe("__keyspace@0__:*")
    assert ps.get_message(timeout=2)["type"] == "psubscribe"
    assert rs.execute_command("MIGRATE", "127.0.0.1", dst.port, "", 0, 5000, "KEYS", "a", "b") == b"OK"
    assert rs.execute_command("MIGRATE", "127.0.0.1", dst.port, "c", 0, 5000, "COPY") == b"OK"
    events = []
    for _ in range(2):
        m = ps.get_message(timeout=2)
        events.append((m["channel"], m["data"]))
    assert events == [(b"__keyspace@0__:a", b"del"), (b"__keyspace@0__:b", b"del")]
    assert ps.get_message(timeout=0.2) is None  # COPY deletes nothing
    ps.close()
    rs.execute_command("DEBUG", "LOADAOF")
    assert sorted(rs.keys("*")) == [b"c"]


def test_target_connection_cached_then_closed_when_idle(server_factory):
    src, dst = server_factory("ferry"), server_factory("ferry")
    rs, rd = rc(src), rc(dst)
    base = len(rd.client_list())
    for i in range(3):
        rs.set("k%d" % i, i)
        assert rs.execute_command("MIGRATE", "127.0.0.1", dst.port, "k%d" % i, i % 2, 1000) == b"OK"
    assert len(rd.client_list()) == base + 1
    assert rs.info("stats")["migrate_cached_sockets"] == 1
    deadline = time.monotonic() + 15
    while rs.info("stats")["migrate_cached_sockets"] and time.monotonic() < deadline:
        time.sleep(0.5)
    assert rs.info("stats")["migrate_cached_sockets"] == 0
    time.sleep(0.2)
    assert len(rd.client_list()) == base
    rs.set("again", 1)  # a new connection is made after the idle close
    assert rs.execute_command("MIGRATE", "127.0.0.1", dst.port, "again", 0, 1000) == b"OK"
    assert rd.get("again") == b"1"
