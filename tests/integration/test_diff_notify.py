"""Differential tests for keyspace notifications (notify-keyspace-events,
src/commands/notify.c and the events raised by every command and by the
keyspace itself: new, keymiss, expired, evicted).

Each program runs on ferry and on the reference redis-server 7.0.15 with the
same notify-keyspace-events; subscribers (RESP2 and RESP3) PSUBSCRIBE
__key*__:* and the captured messages must be byte-identical and in the same
order (notifykit.py). Programs are hand-written per type, plus seeded random
programs over every type's commands (notify_gen.py), under several settings
(KEA, KEA with n and m, E with one class, K only); some run with the actor
itself subscribed in RESP3, which also compares where each event falls
relative to the command's reply. Expiry (lazy and active), eviction,
blocking pops served later, MULTI/EXEC, scripts and CONFIG SET/GET of the
option are covered too.
"""
from __future__ import annotations

import random
import time

import pytest

from conftest import server_pair
from notify_gen import random_program
from notifykit import END, PATTERN, Subscriber, compare
from resp_client import RawClient, encode_command, parse

FLAG_SETS = ["KEA", "KEAnm", "Eg", "E$", "El", "Es", "Eh", "Ez", "Ex", "Kgm", "KA", "Enm"]


@pytest.fixture(scope="module")
def npair():
    with server_pair("--enable-debug-command", "yes") as p:
        yield p


def _with_payloads(pair, steps):
    """Steps with "@dump:<type>" replaced by a DUMP payload made on redis."""
    if not any(isinstance(a, str) and a.startswith("@dump:") for st in steps for a in st):
        return steps
    makers = {"s": ("SET", "v", "abc"), "l": ("RPUSH", "v", "a", "b"), "h": ("HSET", "v", "f", "g"),
              "z": ("ZADD", "v", "1", "m")}
    payload = {}
    with RawClient(pair[1].port) as c:
        for name, mk in makers.items():
            c.command("DEL", "v")
            c.command(*mk)
            payload[name] = parse(c.command("DUMP", "v"))[1]
        c.command("DEL", "v")
    return [tuple(payload[a[6:]] if isinstance(a, str) and a.startswith("@dump:") else a for a in st)
            for st in steps]


def check(pair, flags, steps, self_sub=False, db_setup=()):
    steps = _with_payloads(pair, steps)
    report = compare(pair[0], pair[1], flags, steps, self_sub=self_sub, db_setup=db_setup)
    assert report is None, report


# --------------------------------------------------------------- hand-written
CASES = {
    "strings": [
        ("SET", "a", "1"), ("SET", "a", "2", "EX", "100"), ("SET", "a", "3", "KEEPTTL"), ("SET", "a", "4", "NX"),
        ("SET", "b", "x", "XX"), ("SET", "a", "5", "XX", "GET"), ("SET", "nx", "v", "GET"), ("SETNX", "a", "z"),
        ("SETNX", "c", "z"), ("SETEX", "d", "100", "v"), ("PSETEX", "d", "100000", "w"), ("GETSET", "d", "q"),
        ("GETSET", "new", "q"), ("MSET", "m1", "1", "m2", "2", "a", "9"), ("MSETNX", "m3", "1", "m1", "2"),
        ("MSETNX", "m4", "1", "m5", "2"), ("APPEND", "ap", "x"), ("APPEND", "ap", "yz"), ("APPEND", "ap", ""),
        ("SETRANGE", "sr", "3", "ab"), ("SETRANGE", "sr", "0", ""), ("SETRANGE", "none", "2", ""),
        ("INCR", "n"), ("DECR", "n"), ("INCRBY", "n", "5"), ("DECRBY", "n", "2"), ("INCRBYFLOAT", "f", "1.5"),
        ("INCR", "ap"), ("GETDEL", "ap"), ("GETDEL", "ap"), ("GETEX", "n", "EX", "100"), ("GETEX", "n", "PERSIST"),
        ("GETEX", "n", "PERSIST"), ("GETEX", "n"), ("GETEX", "n", "PXAT", "1"), ("GET", "n"), ("MGET", "a", "zz"),
        ("STRLEN", "zz"), ("GETRANGE", "zz", "0", "1"), ("LCS", "a", "zz"), ("SET", "ex", "v", "PXAT", "1"),
        ("GET", "ex"),
    ],
    "keys": [
        ("SET", "a", "1"), ("SET", "b", "2"), ("DEL", "a", "zz", "b"), ("UNLINK", "zz"), ("SET", "a", "1"),
        ("UNLINK", "a"), ("SET", "a", "1"), ("EXISTS", "a", "nokey"), ("TOUCH", "a", "nokey"), ("TYPE", "nokey"),
        ("TYPE", "a"), ("TTL", "nokey"), ("PTTL", "a"), ("EXPIRETIME", "nokey"), ("OBJECT", "ENCODING", "nokey"),
        ("OBJECT", "FREQ", "nokey"), ("RENAME", "a", "b"), ("RENAME", "b", "b"), ("RENAME", "zz", "q"),
        ("SET", "c", "3"), ("RENAME", "b", "c"), ("RENAMENX", "c", "d"), ("SET", "e", "1"), ("RENAMENX", "d", "e"),
        ("COPY", "d", "f"), ("COPY", "d", "f"), ("COPY", "d", "f", "REPLACE"), ("COPY", "nokey", "g"),
        ("COPY", "d", "g", "DB", "1"), ("MOVE", "f", "1"), ("MOVE", "g", "1"), ("MOVE", "nokey", "1"),
        ("EXPIRE", "d", "100"), ("EXPIRE", "d", "100", "NX"), ("PEXPIRE", "d", "200000", "GT"), ("PERSIST", "d"),
        ("PERSIST", "d"), ("EXPIREAT", "d", "1"), ("EXPIRE", "e", "0"), ("PEXPIRE", "nokey", "100"),
        ("SET", "x", "1"), ("EXPIRE", "x", "-5"), ("SELECT", "1"), ("SET", "one", "1"), ("DEL", "f"),
        ("SWAPDB", "0", "1"), ("GET", "one"), ("FLUSHDB",), ("SELECT", "0"), ("DBSIZE",),
        ("FLUSHALL",), ("SCAN", "0", "TYPE", "string"), ("DUMP", "nokey"), ("HSCAN", "nokey", "0"),
        ("SSCAN", "nokey", "0"), ("ZSCAN", "nokey", "0"), ("MEMORY", "USAGE", "nokey"), ("OBJECT", "IDLETIME", "nokey"),
        ("OBJECT", "REFCOUNT", "nokey"), ("SET", "x", "1", "PX", "5"), ("@sleep", 0.015), ("SCAN", "0", "TYPE", "list"),
    ],
    "lists": [
        ("LPUSH", "l", "a", "b", "c"), ("RPUSH", "l", "d"), ("LPUSHX", "nol", "x"), ("RPUSHX", "l", "e"),
        ("LINSERT", "l", "BEFORE", "a", "z"), ("LINSERT", "l", "AFTER", "nope", "z"), ("LINSERT", "nol", "AFTER", "a", "z"),
        ("LSET", "l", "0", "q"), ("LSET", "l", "99", "q"), ("LREM", "l", "0", "z"), ("LREM", "l", "0", "nothing"),
        ("LTRIM", "l", "0", "2"), ("LPOP", "l"), ("RPOP", "l", "1"), ("LPOP", "l", "0"), ("LPOP", "nol"),
        ("RPUSH", "src", "1", "2", "3"), ("LMOVE", "src", "dst", "LEFT", "RIGHT"), ("RPOPLPUSH", "src", "dst"),
        ("LMOVE", "src", "src", "RIGHT", "LEFT"), ("LMOVE", "src", "dst", "LEFT", "LEFT"), ("LMOVE", "nol", "dst", "LEFT", "LEFT"),
        ("LMPOP", "2", "nol", "dst", "RIGHT", "COUNT", "5"), ("LMPOP", "1", "nol", "LEFT"), ("RPUSH", "t", "a"),
        ("LTRIM", "t", "5", "10"), ("RPUSH", "t", "a", "b"), ("LREM", "t", "0", "a"), ("LREM", "t", "0", "b"),
        ("BLPOP", "nol", "t2", "0.01"), ("RPUSH", "t2", "x"), ("BLPOP", "nol", "t2", "0"), ("RPUSH", "t3", "x"),
        ("BLMOVE", "t3", "t4", "LEFT", "RIGHT", "0"), ("BLMPOP", "0", "1", "t4", "LEFT"), ("BRPOPLPUSH", "t4", "x", "0.01"),
        ("LRANGE", "nol", "0", "-1"), ("LLEN", "nol"), ("LINDEX", "nol", "0"), ("LPOS", "nol", "a"),
    ],
    "hashes": [
        ("HSET", "h", "f", "v", "g", "w"), ("HSET", "h", "f", "v"), ("HMSET", "h", "x", "1"), ("HSETNX", "h", "f", "z"),
        ("HSETNX", "h2", "f", "z"), ("HINCRBY", "h", "n", "3"), ("HINCRBYFLOAT", "h", "fl", "0.5"), ("HDEL", "h", "nope"),
        ("HDEL", "h", "f", "g"), ("HDEL", "h2", "f"), ("HDEL", "h", "x", "n", "fl"), ("HGET", "h", "f"),
        ("HMGET", "nh", "f"), ("HGETALL", "nh"), ("HLEN", "nh"), ("HEXISTS", "nh", "f"), ("HSTRLEN", "nh", "f"),
        ("HKEYS", "nh"), ("HVALS", "nh"), ("HRANDFIELD", "nh"), ("HINCRBY", "h3", "n", "1"), ("HINCRBYFLOAT", "h4", "n", "1"),
    ],
    "sets": [
        ("SADD", "s", "a", "b", "c"), ("SADD", "s", "a"), ("SREM", "s", "nope"), ("SREM", "s", "a"), ("SADD", "t", "b", "x"),
        ("SMOVE", "s", "t", "b"), ("SMOVE", "s", "t", "nope"), ("SMOVE", "s", "u", "c"), ("SMOVE", "t", "t", "x"),
        ("SMOVE", "nos", "t", "x"), ("SADD", "p", "1", "2"), ("SINTERSTORE", "d", "p", "t"), ("SINTERSTORE", "d", "p", "p"),
        ("SINTERSTORE", "d", "p", "nos"), ("SUNIONSTORE", "d", "p", "t"), ("SDIFFSTORE", "d", "p", "p"),
        ("SDIFFSTORE", "d", "p", "t"), ("SUNIONSTORE", "d", "nos"), ("SPOP", "p", "100"), ("SPOP", "nos"),
        ("SPOP", "nos", "2"), ("SADD", "one", "x"), ("SPOP", "one"), ("SADD", "two", "x", "y"), ("SPOP", "two", "0"),
        ("SMEMBERS", "nos"), ("SISMEMBER", "nos", "a"), ("SCARD", "nos"), ("SINTER", "nos", "t"), ("SUNION", "nos"),
        ("SINTERCARD", "1", "nos"), ("SRANDMEMBER", "nos"), ("SMISMEMBER", "nos", "a"),
    ],
    "zsets": [
        ("ZADD", "z", "1", "a", "2", "b", "3", "c"), ("ZADD", "z", "1", "a"), ("ZADD", "z", "XX", "5", "a"),
        ("ZADD", "z", "NX", "5", "a"), ("ZADD", "z", "GT", "CH", "0", "b"), ("ZADD", "z", "INCR", "1", "c"),
        ("ZADD", "nz", "XX", "1", "a"), ("ZINCRBY", "z", "2", "d"), ("ZREM", "z", "nope"), ("ZREM", "z", "d"),
        ("ZREMRANGEBYSCORE", "z", "100", "200"), ("ZREMRANGEBYSCORE", "z", "0", "1"), ("ZADD", "z", "0", "x", "0", "y"),
        ("ZREMRANGEBYLEX", "z", "[x", "[y"), ("ZREMRANGEBYRANK", "z", "0", "0"), ("ZPOPMIN", "z"), ("ZPOPMAX", "z", "5"),
        ("ZPOPMIN", "z"), ("ZADD", "p", "1", "a", "2", "b"), ("ZADD", "q", "2", "b", "3", "c"),
        ("ZUNIONSTORE", "d", "2", "p", "q"), ("ZINTERSTORE", "d", "2", "p", "q"), ("ZDIFFSTORE", "d", "2", "p", "p"),
        ("ZDIFFSTORE", "d", "2", "p", "q"), ("ZINTERSTORE", "d", "2", "p", "nz"), ("ZRANGESTORE", "d", "p", "0", "-1"),
        ("ZRANGESTORE", "d", "p", "5", "6"), ("ZRANGESTORE", "d", "nz", "0", "-1"), ("ZMPOP", "2", "nz", "q", "MAX", "COUNT", "9"),
        ("ZMPOP", "1", "nz", "MIN"), ("BZPOPMIN", "nz", "p", "0"), ("BZMPOP", "0", "1", "p", "MAX"), ("BZPOPMAX", "nz", "0.01"),
        ("ZSCORE", "nz", "a"), ("ZRANGE", "nz", "0", "-1"), ("ZCARD", "nz"), ("ZRANK", "nz", "a"), ("ZCOUNT", "nz", "0", "1"),
        ("ZRANDMEMBER", "nz"), ("ZMSCORE", "nz", "a"), ("ZUNION", "1", "nz"), ("ZINTER", "1", "nz"), ("ZDIFF", "1", "nz"),
    ],
    "wrongtype_and_errors": [
        ("SET", "s", "1"), ("LPUSH", "s", "x"), ("SADD", "s", "x"), ("HSET", "s", "f", "v"), ("ZADD", "s", "1", "a"),
        ("INCR", "s"), ("LPUSH", "l", "x"), ("GET", "l"), ("INCRBYFLOAT", "s", "abc"), ("SET", "big", "9223372036854775807"),
        ("INCR", "big"), ("HSET", "h", "f", "x"), ("HINCRBY", "h", "f", "1"), ("SETRANGE", "s", "-1", "x"),
        ("ZADD", "z", "1", "a"), ("ZADD", "z", "INCR", "inf", "a"), ("ZADD", "z", "INCR", "-inf", "a"), ("EXPIRE", "s", "abc"),
    ],
    "restore": [
        ("RESTORE", "r1", "0", "@dump:s"), ("RESTORE", "r1", "0", "@dump:s"), ("RESTORE", "r1", "0", "@dump:l", "REPLACE"),
        ("RESTORE", "r2", "100000", "@dump:h"), ("RESTORE", "r2", "1", "@dump:s", "REPLACE", "ABSTTL"),
        ("RESTORE", "r3", "1", "@dump:s", "ABSTTL"), ("RESTORE", "r4", "0", "@dump:z", "IDLETIME", "10"),
        ("RESTORE", "r4", "0", "bad payload", "REPLACE"), ("EXISTS", "r1", "r2", "r3", "r4"),
    ],
    "multi_exec_and_scripts": [
        ("MULTI",), ("SET", "a", "1"), ("LPUSH", "l", "x"), ("INCR", "a"), ("DEL", "l"), ("EXEC",),
        ("EVAL", "redis.call('set', KEYS[1], 'v'); redis.call('hset', KEYS[2], 'f', 'v'); return redis.call('del', KEYS[1], KEYS[2])",
         "2", "k", "h"),
        ("EVAL", "return redis.call('get', KEYS[1])", "1", "missing"),
        ("EVAL", "redis.call('rpush', KEYS[1], 'a'); return redis.call('lpop', KEYS[1])", "1", "l"),
        ("MULTI",), ("ZADD", "z", "1", "a"), ("ZPOPMIN", "z"), ("GET", "nothing"), ("EXEC",),
    ],
    "expiry_lazy": [
        ("SET", "a", "1", "PX", "5"), ("LPUSH", "l", "x"), ("PEXPIRE", "l", "5"), ("HSET", "h", "f", "v"), ("PEXPIRE", "h", "5"),
        ("SADD", "s", "x"), ("PEXPIRE", "s", "5"), ("ZADD", "z", "1", "a"), ("PEXPIRE", "z", "5"), ("SET", "b", "1", "PX", "5"),
        ("SET", "c", "1", "PX", "5"), ("SET", "d", "1", "PX", "5"), ("SET", "e", "1", "PX", "5"), ("SET", "f", "1", "PX", "5"),
        ("@sleep", 0.03), ("GET", "a"), ("LPUSH", "l", "y"), ("HGET", "h", "f"), ("SADD", "s", "y"), ("ZSCORE", "z", "a"),
        ("SET", "b", "2"), ("EXISTS", "c"), ("DEL", "d"), ("TTL", "e"), ("RENAME", "f", "g"), ("SCAN", "0"),
    ],
}


@pytest.mark.parametrize("name", sorted(CASES))
@pytest.mark.parametrize("flags", ["KEA", "KEAnm"])
def test_cases(npair, name, flags):
    check(npair, flags, CASES[name])


@pytest.mark.parametrize("name", sorted(CASES))
def test_cases_self_subscribed_resp3(npair, name):
    """The actor is a subscribed RESP3 client: events interleave with replies."""
    check(npair, "KEAnm", CASES[name], self_sub=True)


@pytest.mark.parametrize("flags", FLAG_SETS)
def test_class_filters(npair, flags):
    steps = [s for name in ("strings", "keys", "lists", "hashes", "sets", "zsets", "expiry_lazy") for s in CASES[name]]
    check(npair, flags, steps)


# ------------------------------------------------------------ random programs
@pytest.mark.parametrize("seed", range(24))
def test_random_programs(npair, seed):
    r = random.Random(seed)
    steps = random_program(r, 180)
    flags = ["KEAnm", "KEA", "KEnm$lshzgx", "Eg", "KAm"][seed % 5]
    check(npair, flags, steps, self_sub=seed % 3 == 0)


# ----------------------------------------------------- blocking served later
def _blocked_scenario(server):
    """Blocked pops served by a later push (the served pop's events come
    after the push's), and a BLMOVE served into a new destination."""
    out = []
    with RawClient(server.port) as a, RawClient(server.port) as b, RawClient(server.port) as w:
        a.command("CONFIG", "SET", "notify-keyspace-events", "KEAnm")
        a.command("FLUSHALL")
        sub = Subscriber(server.port, resp3=True)
        try:
            b.send(encode_command(["BLPOP", "q1", "q2", "5"]))
            w.send(encode_command(["BLMOVE", "m", "md", "RIGHT", "LEFT", "5"]))
            c = RawClient(server.port)
            c.send(encode_command(["BZPOPMIN", "zq", "5"]))
            d = RawClient(server.port)
            d.send(encode_command(["BLMPOP", "5", "1", "q2", "LEFT", "COUNT", "3"]))
            time.sleep(0.1)
            out.append(a.command("RPUSH", "q2", "x", "y"))
            out.append(b.read_reply())
            out.append(d.read_reply())
            out.append(a.command("LPUSH", "m", "v"))
            out.append(w.read_reply())
            out.append(a.command("ZADD", "zq", "1", "a", "2", "b"))
            out.append(c.read_reply())
            out.append(a.command("MULTI"))
            out.append(a.command("SET", "k", "v"))
            out.append(a.command("EXEC"))
            a.command("PUBLISH", END, "x")
            out.append(sub.drain())
            c.close()
            d.close()
        finally:
            sub.close()
    return out


def test_blocked_clients_served_later(npair):
    f, r = npair
    assert _blocked_scenario(f) == _blocked_scenario(r)


# ------------------------------------------------------------- active expiry
def _events(server, flags, actions, wait_for, timeout=5.0):
    """Messages seen by a RESP2 subscriber while actions run, until
    wait_for(messages) holds."""
    with RawClient(server.port) as a:
        a.command("CONFIG", "SET", "notify-keyspace-events", flags)
        a.command("FLUSHALL")
        a.command("DEBUG", "SET-ACTIVE-EXPIRE", "1")
        sub = Subscriber(server.port)
        try:
            for act in actions:
                a.command(*act)
            got = []
            deadline = time.monotonic() + timeout
            while not wait_for(got) and time.monotonic() < deadline:
                try:
                    got.append(sub.c.read_reply(timeout=0.2))
                except TimeoutError:
                    pass
            return got
        finally:
            sub.close()


def _names(msgs):
    return sorted(tuple(x[1] for x in parse(m)[1][2:]) for m in msgs)


def test_active_expiry(npair):
    """Keys nobody touches again expire in the background: one "expired"
    per key on both channels."""
    acts = [("SET", "k%d" % i, "v", "PX", "30") for i in range(10)] + [("SADD", "s", "m"), ("PEXPIRE", "s", "30")]
    results = []
    for srv in npair:
        msgs = _events(srv, "KEA", acts, lambda g: sum(b"expired" in m for m in g) >= 22)
        results.append(_names(msgs))
    assert results[0] == results[1]
    assert sum(1 for ch, payload in results[0] if b"expired" in ch + payload) == 22


# ---------------------------------------------------------------- eviction
def _eviction_events(server):
    with RawClient(server.port) as a:
        a.command("CONFIG", "SET", "notify-keyspace-events", "Ee")
        a.command("CONFIG", "SET", "maxmemory-policy", "allkeys-random")
        a.command("FLUSHALL")
        sub = Subscriber(server.port)
        try:
            used = int(dict(l.split(":", 1) for l in a.command("INFO", "memory").decode().split("\r\n")
                            if ":" in l)["used_memory"])
            a.command("CONFIG", "SET", "maxmemory", str(used + 400_000))
            for i in range(400):
                a.command("SET", "key:%d" % i, "x" * 4000)
            a.command("CONFIG", "SET", "maxmemory", "0")
            dbsize = int(a.command("DBSIZE")[1:-2])
            a.command("PUBLISH", END, "x")
            msgs = sub.drain()
        finally:
            sub.close()
    chans = {parse(m)[1][2][1] for m in msgs}
    keys = [parse(m)[1][3][1] for m in msgs]
    return chans, len(keys), len(set(keys)), dbsize


def test_eviction(npair):
    """allkeys-random: which keys go differs, but each evicted key is one
    __keyevent@0__:evicted message, and keys evicted + kept = keys written."""
    for srv in npair:
        chans, n, distinct, dbsize = _eviction_events(srv)
        assert chans == {b"__keyevent@0__:evicted"}, srv.kind
        assert n == distinct and n > 0, srv.kind
        assert n + dbsize == 400, srv.kind


# ------------------------------------------------------------------ config
CONFIG_INPUTS = ["KEA", "", "KEm", "Kx", "$lshzxetd", "An", "AnKE", "Ag$lshzxetdmnKE", "gK", "ndtm", "E", "Em",
                 "AKEm", "xeA", "lllK", "n", "d", "t"]


def test_config_set_get(npair):
    """CONFIG SET/GET of the option: Redis's canonical text, and its error."""
    for value in CONFIG_INPUTS + ["Kq", "A b", "k"]:
        got = []
        for srv in npair:
            with RawClient(srv.port) as c:
                got.append((c.command("CONFIG", "SET", "notify-keyspace-events", value),
                            c.command("CONFIG", "GET", "notify-keyspace-events")))
        assert got[0] == got[1], value


def test_new_event_kept_under_A(npair):
    """'AnKE' shows as "AKE" but still raises "new" (the flag is kept)."""
    check(npair, "AnKE", [("SET", "a", "1"), ("LPUSH", "l", "x"), ("GET", "miss")])


def test_startup_option(server_factory):
    """notify-keyspace-events from the command line is in force at start."""
    for kind in ("ferry", "redis"):
        srv = server_factory(kind, "--notify-keyspace-events", "KEA")
        with RawClient(srv.port) as c:
            assert c.command("CONFIG", "GET", "notify-keyspace-events") == \
                b"*2\r\n$22\r\nnotify-keyspace-events\r\n$3\r\nAKE\r\n"
            sub = Subscriber(srv.port)
            c.command("SET", "k", "v")
            c.command("PUBLISH", END, "x")
            msgs = sub.drain()
            sub.close()
        assert [tuple(x[1] for x in parse(m)[1][2:]) for m in msgs] == \
            [(b"__keyspace@0__:k", b"set"), (b"__keyevent@0__:set", b"k")], kind


def test_channel_subscribers_and_binary_keys(npair):
    """Plain SUBSCRIBE to a notification channel, and key names with
    spaces, CRLF and NUL bytes."""
    def scenario(srv):
        with RawClient(srv.port) as a, RawClient(srv.port) as s:
            a.command("CONFIG", "SET", "notify-keyspace-events", "KEA")
            s.send(encode_command(["SUBSCRIBE", "__keyspace@0__:bin\r\n\x00 key", "__keyevent@0__:del", END]))
            subs = [s.read_reply() for _ in range(3)]
            a.command("SET", "bin\r\n\x00 key", "v")
            a.command("DEL", "bin\r\n\x00 key", "other")
            a.command("PUBLISH", END, "x")
            return subs, [s.read_reply() for _ in range(3)]
    assert scenario(npair[0]) == scenario(npair[1])
    assert PATTERN
