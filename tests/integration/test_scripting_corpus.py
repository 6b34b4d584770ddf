"""Real libraries' Lua scripts on ferry and on redis-server.

The corpus is the scripts that popular Python libraries send, read from the
installed packages (pinned in requirements.txt), not copied here:

  - walrus (arrays, compare-and-swap, locks, rate limiter, zset filter),
  - limits, behind Flask-Limiter (fixed, moving and sliding windows),
  - dramatiq's Redis broker (its whole queue protocol is one script, plus
    the probe for Lua's unpack limit),
  - python-redis-lock and redis-py's Lock.

Each script runs a few hundred times with generated arguments (a seeded
generator per script, keys from a small pool so the runs build on each
other, with plain commands mixed in to set up state) in lockstep on both
servers: every reply must be the same bytes (replies holding a remaining
time in milliseconds: the same within a tolerance), and at the end the
keyspaces must hold the same keys, types, values and expiries.

Then the libraries themselves are driven end to end against ferry through
their own APIs, the same scenario on both servers with the same outcome.
"""
import hashlib
import importlib.util
import os
import random

import pytest
import redis as redispy

from conftest import start_server
from diffkit import approx, cmd, format_report, run_steps

RUNS = 300


def package_file(package, *parts):
    spec = importlib.util.find_spec(package)
    assert spec and spec.submodule_search_locations, "package %s is not installed (make deps)" % package
    return os.path.join(spec.submodule_search_locations[0], *parts)


def read(package, *parts):
    with open(package_file(package, *parts), encoding="utf-8") as f:
        return f.read()


# ------------------------------------------------------------------ programs
# A family is a library's scripts that work on the same keys (a lock's
# acquire and release, an array's operations); its generator takes (rng, i)
# and returns (script, keys, args) for run i, or (None, command) for a plain
# command that sets up state between runs.

def pick(rng, *xs):
    return rng.choice(xs)


def words(rng, n):
    return [pick(rng, "a", "b", "c", "dd", "1", "2.5", "-3", "") for _ in range(n)]


def gen_walrus_array(rng, i):
    op = pick(rng, "append", "append", "extend", "get", "get", "pop", "remove", "set")
    key = [pick(rng, "arr1", "arr2")]
    if op == "append":
        return op, key, words(rng, 1)
    if op == "extend":
        return op, key, words(rng, rng.randint(0, 4))
    if op == "pop":
        return op, key, []
    return op, key, [str(rng.randint(-6, 6))] + (words(rng, 1) if op == "set" else [])


def gen_walrus_cas(rng, i):
    if rng.random() < 0.2:
        return None, ["SET", "cas", pick(rng, "token-1:x", "token-2:y", "zz")]
    return "cas", ["cas"], [pick(rng, "token-1", "token-2", "tok", "", "zz"), "token-%d:v" % rng.randint(1, 2)]


def gen_walrus_lock(rng, i):
    ident = pick(rng, "id1", "id2")
    if rng.random() < 0.5:
        return "lock_release", ["lk", "lk:event"], [ident]
    return "lock_acquire", ["lk"], [ident, pick(rng, "0", "100000", "200000")]


def gen_walrus_rate(rng, i):
    return "rate_limit", [pick(rng, "rl1", "rl2")], [str(rng.randint(1, 5)), str(rng.randint(10, 1000)),
                                                    str(1000 + i * 37)]


def gen_zset_filter(rng, i):
    if rng.random() < 0.4:
        return None, ["ZADD", "zs", str(rng.randint(-20, 20)), pick(rng, "m1", "m2", "m3", "m4", "m5")]
    lo, hi = sorted([rng.randint(-25, 25), rng.randint(-25, 25)])
    return "zset_score_filter", ["zs", pick(rng, "dest1", "dest2")], [pick(rng, str(lo), "(" + str(lo), "-inf"),
                                                                      pick(rng, str(hi), "+inf")]


def gen_incr_expire(rng, i):
    return "incr_expire", [pick(rng, "cnt1", "cnt2")], [str(pick(rng, 1000, 2000)), str(rng.randint(1, 5))]


def gen_moving(rng, i):
    key = [pick(rng, "mw1", "mw2")]
    if rng.random() < 0.6:
        return "acquire_moving_window", key, [str(1000 + i * 3), str(rng.randint(1, 10)), str(rng.randint(5, 50)),
                                              str(rng.randint(1, 3))]
    return "moving_window", key, [str(1000 + i * 3 - rng.randint(0, 60)), str(rng.randint(0, 12))]


def gen_sliding(rng, i):
    n = pick(rng, "1", "2")
    keys = ["sw%s:prev" % n, "sw%s:cur" % n]
    if rng.random() < 0.1:  # a window about to roll over: the next call shifts it
        return None, ["SET", keys[1], str(rng.randint(1, 9)), "PX", "900000"]
    if rng.random() < 0.6:
        return "acquire_sliding_window", keys, [str(rng.randint(1, 20)), "1000", str(rng.randint(1, 4))]
    return "sliding_window", keys, ["1000"]


def gen_clear_keys(rng, i):
    if rng.random() < 0.7:
        return None, ["SET", pick(rng, "lim/a", "lim/b", "lim/c/1", "other"), "1"]
    return "clear_keys", [pick(rng, "lim/*", "lim/c*", "nomatch*")], []


DRAMATIQ_COMMANDS = ("enqueue", "enqueue", "enqueue", "fetch", "fetch", "ack", "nack", "requeue", "qsize", "purge")


def gen_dispatch(rng, i):
    command = pick(rng, *DRAMATIQ_COMMANDS)
    queue = pick(rng, "default", "default.DQ", "other")
    msgs = ["m%d" % rng.randint(0, 20) for _ in range(3)]
    extra = {
        "enqueue": [msgs[0], '{"id":"%s","n":%d}' % (msgs[0], i)],
        "fetch": [str(rng.randint(1, 5))],
        "ack": msgs[:1], "nack": msgs[:1], "requeue": msgs,
    }.get(command, [])
    worker = pick(rng, "w1", "w2", "w3")
    ts = 100000 + i * 1000
    return "dispatch", ["dramatiq"], [command, str(ts), queue, worker, "30000", "200000",
                                      pick(rng, "0", "0", "1"), "7999"] + extra


def gen_maxstack(rng, i):
    return "maxstack", [], []


def gen_rlock(rng, i):
    name = pick(rng, "a", "b")
    ident = pick(rng, "id1", "id2")
    if rng.random() < 0.3:
        return None, ["SET", "lock:" + name, ident, "PX", "100000"]
    keys = ["lock:" + name, "lock-signal:" + name]
    script = pick(rng, "unlock", "unlock", "extend", "extend", "reset", "reset_all")
    if script == "reset_all":
        return script, [], []
    return script, keys, [ident, str(rng.randint(10, 100)) if script == "extend" else "1000"]


def gen_redispy_lock(rng, i):
    if rng.random() < 0.3:
        return None, ["SET", "lk", pick(rng, "t1", "t2"), "PX", "100000"]
    token = pick(rng, "t1", "t2")
    script = pick(rng, "release", "extend", "extend", "reacquire")
    if script == "extend":
        return script, ["lk"], [token, str(rng.randint(1000, 5000)), pick(rng, "0", "1")]
    if script == "reacquire":
        return script, ["lk"], [token, str(rng.randint(1000, 5000))]
    return script, ["lk"], [token]


def families():
    """family -> (scripts {name: body}, generator, approx): approx marks
    families whose replies carry a remaining time in milliseconds."""
    import redis.lock
    import redis_lock

    def walrus(*names):
        return {n: read("walrus", "scripts", n + ".lua") for n in names}

    def limits(*names):
        return {n: read("limits", "resources", "redis", "lua_scripts", n + ".lua") for n in names}

    def dramatiq(*names):
        return {n: read("dramatiq", "brokers", "redis", n + ".lua") for n in names}

    arrays = ["array_" + op for op in ("append", "extend", "get", "pop", "remove", "set")]
    return {
        "walrus/array": ({n[6:]: b for n, b in walrus(*arrays).items()}, gen_walrus_array, False),
        "walrus/cas": (walrus("cas"), gen_walrus_cas, False),
        "walrus/lock": (walrus("lock_acquire", "lock_release"), gen_walrus_lock, False),
        "walrus/rate_limit": (walrus("rate_limit"), gen_walrus_rate, False),
        "walrus/zset_score_filter": (walrus("zset_score_filter"), gen_zset_filter, False),
        "limits/fixed_window": (limits("incr_expire"), gen_incr_expire, False),
        "limits/moving_window": (limits("moving_window", "acquire_moving_window"), gen_moving, False),
        "limits/sliding_window": (limits("sliding_window", "acquire_sliding_window"), gen_sliding, True),
        "limits/clear_keys": (limits("clear_keys"), gen_clear_keys, False),
        "dramatiq/dispatch": (dramatiq("dispatch"), gen_dispatch, False),
        "dramatiq/maxstack": (dramatiq("maxstack"), gen_maxstack, False),
        "python-redis-lock": ({n: getattr(redis_lock, a).decode() for n, a in (
            ("unlock", "UNLOCK_SCRIPT"), ("extend", "EXTEND_SCRIPT"), ("reset", "RESET_SCRIPT"),
            ("reset_all", "RESET_ALL_SCRIPT"))}, gen_rlock, False),
        "redis-py/lock": ({n: getattr(redis.lock.Lock, a) for n, a in (
            ("release", "LUA_RELEASE_SCRIPT"), ("extend", "LUA_EXTEND_SCRIPT"),
            ("reacquire", "LUA_REACQUIRE_SCRIPT"))}, gen_redispy_lock, False),
    }


FAMILIES = families()


def program(family):
    scripts, gen, fuzzy = FAMILIES[family]
    shas = {n: hashlib.sha1(b.encode()).hexdigest() for n, b in scripts.items()}
    rng = random.Random("corpus:" + family)
    steps = [cmd("SCRIPT", "LOAD", b) for b in scripts.values()]
    for i in range(RUNS):
        script, *rest = gen(rng, i)
        if script is None:
            steps.append(cmd(*rest[0]))
            continue
        keys, args = rest
        run = ["EVALSHA", shas[script], str(len(keys)), *keys, *args]
        steps.append(approx(*run, tol=50) if fuzzy else cmd(*run))
    return steps


# ------------------------------------------------------------------ keyspace
TTL_TOLERANCE_MS = 2000


def contents(r):
    """Every key's type, value and expiry (None: none)."""
    out = {}
    for k in sorted(r.keys("*")):
        t = r.type(k)
        v = {b"string": lambda: r.get(k), b"list": lambda: r.lrange(k, 0, -1),
             b"hash": lambda: sorted(r.hgetall(k).items()), b"set": lambda: sorted(r.smembers(k)),
             b"zset": lambda: r.zrange(k, 0, -1, withscores=True)}[t]()
        pttl = r.pttl(k)
        out[k] = (t, v, None if pttl < 0 else pttl)
    return out


def assert_same_keyspace(fport, rport):
    f, r = (contents(redispy.Redis(port=p)) for p in (fport, rport))
    assert sorted(f) == sorted(r), "keys differ:\nferry: %s\nredis: %s" % (sorted(f), sorted(r))
    for k in f:
        (ft, fv, fttl), (rt, rv, rttl) = f[k], r[k]
        assert (ft, fv) == (rt, rv), "key %r: ferry %r, redis %r" % (k, f[k], r[k])
        assert (fttl is None) == (rttl is None), "key %r expiry: ferry %r, redis %r" % (k, fttl, rttl)
        if fttl is not None:
            assert abs(fttl - rttl) <= TTL_TOLERANCE_MS, "key %r expiry: ferry %r, redis %r" % (k, fttl, rttl)


@pytest.fixture(scope="module")
def pair():
    f = start_server("ferry")
    r = start_server("redis")
    yield f, r
    f.cleanup()
    r.cleanup()


def test_corpus_is_complete():
    # Guards against a package layout change silently shrinking the corpus.
    scripts = [b for f in FAMILIES.values() for b in f[0].values()]
    assert len(scripts) == 26
    for body in scripts:
        assert "redis.call" in body or "unpack" in body


@pytest.mark.parametrize("name", sorted(FAMILIES))
def test_library_scripts(pair, name):
    f, r = pair
    mismatches, transcript = run_steps(f.port, r.port, program(name))
    assert not mismatches, format_report(name, mismatches, transcript)
    assert_same_keyspace(f.port, r.port)


# ------------------------------------------------------------------ end to end
def both(pair, scenario):
    """The scenario's outcome on ferry and on redis-server (each flushed)."""
    out = []
    for srv in pair:
        c = redispy.Redis(port=srv.port)
        c.flushall()
        out.append(scenario(srv.port))
    return out


def test_walrus_end_to_end(pair):
    from walrus import Database

    def scenario(port):
        db = Database(port=port)
        arr = db.Array("arr")
        arr.extend(["a", "b", "c"])
        arr.append("d")
        popped = arr.pop()
        arr[0] = "z"
        del arr[1]
        lock = db.lock("lk", ttl=10000)
        acquired = lock.acquire(block=False)
        again = db.lock("lk", ttl=10000).acquire(block=False)
        lock.release()
        rl = db.rate_limit("rl", limit=3, per=60)
        limited = [rl.limit("user") for _ in range(5)]
        return [list(arr), popped, acquired, again, limited, sorted(db.keys("*"))]

    f, r = both(pair, scenario)
    assert f == r
    assert f[2] is True and f[3] is False and f[4] == [False, False, False, True, True]


def test_limits_end_to_end(pair):
    from limits import RateLimitItemPerMinute
    from limits.storage import RedisStorage
    from limits.strategies import (FixedWindowRateLimiter, MovingWindowRateLimiter,
                                   SlidingWindowCounterRateLimiter)

    def scenario(port):
        storage = RedisStorage("redis://127.0.0.1:%d" % port)
        item = RateLimitItemPerMinute(5)
        out = []
        for cls in (FixedWindowRateLimiter, MovingWindowRateLimiter, SlidingWindowCounterRateLimiter):
            lim = cls(storage)
            out.append([lim.hit(item, cls.__name__, "u1") for _ in range(7)])
            out.append(lim.test(item, cls.__name__, "u2"))
            out.append(lim.get_window_stats(item, cls.__name__, "u1").remaining)
        storage.reset()
        return out

    f, r = both(pair, scenario)
    assert f == r
    assert f[0] == [True] * 5 + [False] * 2


def test_python_redis_lock_end_to_end(pair):
    import redis_lock

    def scenario(port):
        conn = redispy.Redis(port=port)
        a = redis_lock.Lock(conn, "job", expire=30, id="A")
        b = redis_lock.Lock(conn, "job", expire=30, id="B")
        got_a = a.acquire(blocking=False)
        got_b = b.acquire(blocking=False)
        a.extend(60)
        ttl_ok = 50 <= conn.ttl("lock:job") <= 60
        try:
            b.release()
            wrong_release = "released"
        except redis_lock.NotAcquired:
            wrong_release = "NotAcquired"
        a.release()
        got_b2 = b.acquire(blocking=False)
        redis_lock.reset_all(conn)
        return [got_a, got_b, ttl_ok, wrong_release, got_b2, conn.exists("lock:job")]

    f, r = both(pair, scenario)
    assert f == r == [True, False, True, "NotAcquired", True, 0]


def test_dramatiq_broker_end_to_end(pair):
    import dramatiq
    from dramatiq.brokers.redis import RedisBroker

    def scenario(port):
        broker = RedisBroker(host="127.0.0.1", port=port, namespace="dq")
        dramatiq.set_broker(broker)
        seen = []

        @dramatiq.actor(broker=broker, max_retries=0, queue_name="q")
        def add(x, y):
            seen.append(x + y)
            if x + y == 13:
                raise ValueError("unlucky")

        for i in range(20):
            add.send(i, 3)
        worker = dramatiq.Worker(broker, worker_threads=2, worker_timeout=50)
        worker.start()
        try:
            broker.join("q", timeout=20000)
            worker.join()
        finally:
            worker.stop()
        dead = redispy.Redis(port=port).zcard("dq:q.XQ")
        broker.close()
        return [sorted(seen), dead]

    f, r = both(pair, scenario)
    assert f == r
    assert f[0] == list(range(3, 23)) and f[1] == 1


def test_scripts_survive_script_flush_via_noscript_reload(pair):
    """redis-py's Script objects run EVALSHA and reload on -NOSCRIPT: the
    path every library above takes after a restart or SCRIPT FLUSH."""
    f, _ = pair
    c = redispy.Redis(port=f.port)
    c.flushall()
    script = c.register_script(read("walrus", "scripts", "lock_acquire.lua"))
    assert script(keys=["k"], args=["id", 1000]) == 1
    c.script_flush()
    assert script(keys=["k2"], args=["id", 1000]) == 1
    assert c.pttl("k2") > 0
