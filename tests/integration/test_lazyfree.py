"""Lazy freeing (src/keyspace/lazyfree.c): UNLINK, FLUSHDB / FLUSHALL ASYNC
and the lazyfree-lazy-* settings free big values on a helper thread.

Two kinds of checks:
  - ferry against the reference redis-server: which deletions go to the
    thread, as INFO memory's lazyfreed_objects / lazyfree_pending_objects
    count them (the 64-allocation threshold, each setting, FLUSH* ASYNC
    counting keys, CONFIG RESETSTAT);
  - ferry alone: UNLINK of a 2M-member set returns at once while another
    connection's PINGs see no stall (DEL of the same set, synchronous, is
    timed for comparison), and used_memory falls back once the thread is
    done, for UNLINK and FLUSHALL ASYNC.
Run against the SANITIZE build (make SANITIZE=address,undefined) these also
exercise the thread's frees under AddressSanitizer.
"""
from __future__ import annotations

import re
import threading
import time

from resp_client import RawClient, encode_command


def info(c: RawClient, field: str) -> int:
    raw = c.command("INFO", "all").decode()
    m = re.search(r"^%s:(\d+)" % field, raw, re.M)
    assert m, field
    return int(m.group(1))


def wait_done(c: RawClient, timeout=30.0):
    deadline = time.monotonic() + timeout
    while info(c, "lazyfree_pending_objects"):
        assert time.monotonic() < deadline, "lazy free never finished"
        time.sleep(0.01)


def fill_set(c: RawClient, key: str, n: int, batch: int = 20000, prefix: str = "m"):
    cmds = []
    for start in range(0, n, batch):
        cmds.append(["SADD", key] + ["%s%d" % (prefix, i) for i in range(start, min(n, start + batch))])
    # a few commands in flight at a time
    for i in range(0, len(cmds), 5):
        c.pipeline(cmds[i:i + 5])


def populate(c: RawClient, n: int, prefix: str = "key", size: int = 1):
    """n string keys (DEBUG POPULATE is not enabled on the test servers)."""
    script = "for i=1,tonumber(ARGV[1]) do redis.call('set', ARGV[2]..i, string.rep('x', tonumber(ARGV[3]))) end"
    assert c.command("EVAL", script, "0", str(n), prefix, str(size)) == b"$-1\r\n"


def counted(c: RawClient, *cmds):
    """lazyfreed_objects gained by running cmds (after the thread is done)."""
    before = info(c, "lazyfreed_objects")
    for cmd in cmds:
        c.command(*cmd)
    wait_done(c)
    return info(c, "lazyfreed_objects") - before


def scenario_counts(server):
    c = RawClient(server.port, timeout=30)
    c.command("FLUSHALL")
    wait_done(c)
    out = {}
    fill_set(c, "s64", 64)
    fill_set(c, "s65", 65)
    out["unlink 64 members"] = counted(c, ["UNLINK", "s64"])
    out["unlink 65 members"] = counted(c, ["UNLINK", "s65"])
    c.command("SET", "str", "x" * 100000)
    out["unlink string"] = counted(c, ["UNLINK", "str"])
    fill_set(c, "ints", 1000, prefix="")
    out["unlink hashtable of ints"] = counted(c, ["UNLINK", "ints"])
    c.command("HSET", "h", *sum([["f%d" % i, "v"] for i in range(1000)], []))
    c.command("ZADD", "z", *sum([[str(i), "m%d" % i] for i in range(1000)], []))
    out["unlink hash, zset"] = counted(c, ["UNLINK", "h", "z"])
    fill_set(c, "big", 100)
    out["del big"] = counted(c, ["DEL", "big"])
    c.command("CONFIG", "SET", "lazyfree-lazy-user-del", "yes")
    fill_set(c, "big", 100)
    out["del big, lazy-user-del"] = counted(c, ["DEL", "big"])
    c.command("CONFIG", "SET", "lazyfree-lazy-user-del", "no")
    fill_set(c, "big", 100)
    out["set over big"] = counted(c, ["SET", "big", "v"])
    c.command("CONFIG", "SET", "lazyfree-lazy-server-del", "yes")
    c.command("DEL", "big")
    fill_set(c, "big", 100)
    out["set over big, lazy-server-del"] = counted(c, ["SET", "big", "v"])
    fill_set(c, "big2", 100)
    out["rename over big, lazy-server-del"] = counted(c, ["RENAME", "big", "big2"])
    c.command("DEL", "big2")
    c.command("CONFIG", "SET", "lazyfree-lazy-server-del", "no")
    c.command("CONFIG", "SET", "lazyfree-lazy-expire", "yes")
    c.command("DEL", "big")
    fill_set(c, "big", 100)
    before = info(c, "lazyfreed_objects")  # active expiry may take it first: count from here
    c.command("PEXPIRE", "big", "20")
    time.sleep(0.1)
    c.command("EXISTS", "big")
    wait_done(c)
    out["expired big, lazy-expire"] = info(c, "lazyfreed_objects") - before
    c.command("CONFIG", "SET", "lazyfree-lazy-expire", "no")
    populate(c, 1000)
    out["flushall sync"] = counted(c, ["FLUSHALL", "SYNC"])
    populate(c, 1000)
    out["flushdb async"] = counted(c, ["FLUSHDB", "ASYNC"])
    c.command("CONFIG", "SET", "lazyfree-lazy-user-flush", "yes")
    populate(c, 700)
    out["flushall, lazy-user-flush"] = counted(c, ["FLUSHALL"])
    c.command("CONFIG", "SET", "lazyfree-lazy-user-flush", "no")
    out["resetstat"] = [c.command("CONFIG", "RESETSTAT"), info(c, "lazyfreed_objects")]
    c.close()
    return out


def test_what_is_freed_lazily_matches_redis(pair):
    got = {s.kind: scenario_counts(s) for s in pair}
    assert got["ferry"] == got["redis"]
    g = got["ferry"]
    assert g["unlink 64 members"] == 0 and g["unlink 65 members"] == 1 and g["flushdb async"] == 1000


def ping_gaps(port: int, stop: threading.Event, gaps: list):
    """PING in a loop until stop; records the slowest round trip."""
    c = RawClient(port, timeout=30)
    worst = 0.0
    while not stop.is_set():
        t0 = time.monotonic()
        c.command("PING")
        worst = max(worst, time.monotonic() - t0)
    gaps.append(worst)
    c.close()


def timed_delete(port: int, verb: str, n: int):
    """(seconds the delete command took, slowest PING meanwhile)."""
    c = RawClient(port, timeout=60)
    fill_set(c, "huge", n)
    assert c.command("SCARD", "huge") == b":%d\r\n" % n
    stop, gaps = threading.Event(), []
    t = threading.Thread(target=ping_gaps, args=(port, stop, gaps))
    t.start()
    time.sleep(0.05)
    t0 = time.monotonic()
    assert c.command(verb, "huge") == b":1\r\n"
    took = time.monotonic() - t0
    time.sleep(0.05)
    stop.set()
    t.join()
    wait_done(c, 60)
    c.close()
    return took, gaps[0]


def test_unlink_does_not_stall_the_loop(ferry):
    n = 2_000_000
    del_took, del_gap = timed_delete(ferry.port, "DEL", n)
    unlink_took, unlink_gap = timed_delete(ferry.port, "UNLINK", n)
    print("\n2M-member set: DEL %.1f ms (slowest PING %.1f ms); UNLINK %.1f ms (slowest PING %.1f ms)"
          % (del_took * 1e3, del_gap * 1e3, unlink_took * 1e3, unlink_gap * 1e3))
    assert unlink_took < 0.05, "UNLINK took %.1f ms" % (unlink_took * 1e3)
    assert unlink_gap < 0.05, "a PING waited %.1f ms during UNLINK" % (unlink_gap * 1e3)
    assert unlink_took * 5 < del_took


def test_memory_falls_back(ferry):
    c = RawClient(ferry.port, timeout=60)
    base = info(c, "used_memory")
    fill_set(c, "s", 300_000)
    c.command("HSET", "h", *sum([["f%d" % i, "v%d" % i] for i in range(50_000)], []))
    peak = info(c, "used_memory")
    assert peak > base + 10_000_000
    assert c.command("UNLINK", "s", "h") == b":2\r\n"
    wait_done(c)
    time.sleep(0.3)  # the clients cron gives the big request's argument arrays back
    after_unlink = info(c, "used_memory")
    assert after_unlink < base + 2_000_000, (base, peak, after_unlink)
    assert info(c, "lazyfreed_objects") == 2
    for db in range(3):
        c.command("SELECT", str(db))
        populate(c, 100_000, "key%d:" % db, 100)
        fill_set(c, "s", 100_000)
    peak = info(c, "used_memory")
    assert c.command("FLUSHALL", "ASYNC") == b"+OK\r\n"
    assert c.command("DBSIZE") == b":0\r\n"
    wait_done(c)
    time.sleep(0.3)
    assert info(c, "used_memory") < base + 2_000_000, (base, peak, info(c, "used_memory"))
    assert info(c, "lazyfreed_objects") == 2 + 3 * 100_001
    # the keyspace still works on the memory the thread gave back
    populate(c, 10_000)
    assert c.command("DBSIZE") == b":10000\r\n"
    c.close()
