"""Streams in the append-only file: what ferry propagates for stream
commands is the effect Redis 7.0 propagates (XADD with the ID it generated,
`~` trims as the exact trim they turned out to be, XREADGROUP / XCLAIM /
XAUTOCLAIM as XCLAIM ... FORCE JUSTID and XGROUP SETID ... ENTRIESREAD,
consumer creation as XGROUP CREATECONSUMER), so replaying the file gives
the same streams, groups and pending lists, on ferry and on redis-server.

Redis 7.0.15 propagates XREADGROUP's deliveries as XCLAIMs only (their
LASTID moves the group's last ID, not its entries-read counter), so a
group read after an XGROUP SETID ... ENTRIESREAD (h on t below) replays
with the entries-read and lag it had before the read, on redis-server as
on ferry; those two fields of that group are left out of the comparison
with the live state (the replays are still compared whole).
A program of stream commands runs on ferry with `appendonly yes`
(`aof-use-rdb-preamble no`, so the commands themselves are in the file);
ferry is killed with SIGKILL, then ferry restarts on the directory and
redis-server starts on a copy of it: XINFO STREAM FULL of every stream
(times masked) must equal what ferry showed before the kill. The same
with the node size changed between the run and the replay (the `~` trims
must not depend on it), and after BGREWRITEAOF.
"""
from __future__ import annotations

import os
import shutil

import redis as redispy

from conftest import start_in
from test_aof import aof_args, kill9, wait_rewrite_done


def program(c):
    c.config_set("stream-node-max-entries", 5)
    for i in range(60):
        c.xadd("s", {"a": i, "b": "x" * (i % 7)})
    c.xadd("s", {"a": "trim"}, maxlen=40, approximate=True)
    c.execute_command("XADD", "s", "MINID", "~", "0-1", "LIMIT", "3", "*", "a", "limit")
    c.xadd("t", {"f": 1}, id="5-1")
    c.xadd("t", {"f": 2}, id="5-*")
    c.xgroup_create("s", "g", id="0")
    c.xgroup_create("t", "h", id="$", mkstream=True)
    c.execute_command("XGROUP", "CREATE", "u", "g2", "$", "MKSTREAM", "ENTRIESREAD", "0")
    c.xreadgroup("g", "alice", {"s": ">"}, count=10)
    c.xreadgroup("g", "bob", {"s": ">"}, count=5)
    c.xreadgroup("g", "carol", {"s": ">"}, count=3, noack=True)
    ids = [e[0] for e in c.xrange("s", count=12)]
    c.xack("s", "g", ids[0], ids[1])
    c.xclaim("s", "g", "dave", 0, [ids[2], ids[3]])
    c.xclaim("s", "g", "erin", 0, [ids[4]], justid=True, retrycount=9)
    c.xautoclaim("s", "g", "frank", 0, ids[5], count=2)
    c.xdel("s", ids[7])
    c.xautoclaim("s", "g", "gina", 0, "0-0", count=5)
    c.execute_command("XGROUP", "CREATECONSUMER", "s", "g", "henry")
    c.execute_command("XGROUP", "DELCONSUMER", "s", "g", "bob")
    c.execute_command("XGROUP", "SETID", "t", "h", "0", "ENTRIESREAD", "0")
    c.xreadgroup("h", "ivan", {"t": ">"})
    c.execute_command("XSETID", "t", "9-9", "ENTRIESADDED", "10", "MAXDELETEDID", "1-1")
    c.xtrim("s", maxlen=30, approximate=True)
    c.xtrim("s", minid=ids[11])


TIME_FIELDS = {b"seen-time", b"delivery-time", b"active-time", b"idle"}


def _mask(v):
    if isinstance(v, list):
        out, skip = [], False
        for x in v:
            if skip:
                out.append(0)
                skip = False
                continue
            if isinstance(x, bytes) and x in TIME_FIELDS:
                skip = True
            out.append(_mask(x))
        return out
    return v


def _mask_pending(v):
    """XINFO FULL pending entries are [id, consumer, delivery-time, count]
    (group) or [id, delivery-time, count] (consumer): times zeroed."""
    if isinstance(v, list):
        if len(v) in (3, 4) and isinstance(v[0], bytes) and b"-" in v[0] and all(
                isinstance(x, int) for x in v[-2:]):
            v = list(v)
            v[-2] = 0
            return v
        return [_mask_pending(x) for x in v]
    return v


def state(port, nodes=True):
    """XINFO STREAM FULL of every key, times masked; nodes=False also masks
    radix-tree-keys/-nodes (the node layout follows the node size in force
    when the entries were added, so a replay with another size differs
    there, on redis-server too)."""
    c = redispy.Redis(port=port)
    out = {}
    for k in sorted(c.keys()):
        full = _mask_pending(_mask(c.execute_command("XINFO", "STREAM", k, "FULL", "COUNT", "0")))
        if not nodes:
            full = [0 if i > 0 and full[i - 1] in (b"radix-tree-keys", b"radix-tree-nodes") else x
                    for i, x in enumerate(full)]
        out[k] = full
    return out


def _without_read_counters(v, group=b"h"):
    """v with `group`'s entries-read and lag zeroed (see the top)."""
    if isinstance(v, dict):
        return {k: _without_read_counters(x, group) for k, x in v.items()}
    if isinstance(v, list):
        if len(v) > 1 and v[0] == b"name" and v[1] == group:
            return [0 if i > 0 and v[i - 1] in (b"entries-read", b"lag") else x for i, x in enumerate(v)]
        return [_without_read_counters(x, group) for x in v]
    return v


def live_equal(a, b, exact):
    """The replayed state against the live one: whole after a rewrite (the
    rewritten file carries the counters), else without h's counters."""
    return a == b if exact else _without_read_counters(a) == _without_read_counters(b)


def _run(tmpdirs, change_nodes=False, rewrite=False):
    d = tmpdirs()
    f = start_in("ferry", d, *aof_args("always", "no"))
    try:
        c = redispy.Redis(port=f.port)
        program(c)
        if rewrite:
            c.bgrewriteaof()
            wait_rewrite_done(c)
            c.xadd("s", {"after": "rewrite"})
        before = state(f.port, nodes=False)
    finally:
        kill9(f)
    nodes = ["--stream-node-max-entries", "2"] if change_nodes else []
    copy = tmpdirs()
    shutil.copytree(os.path.join(d, "appendonlydir"), os.path.join(copy, "appendonlydir"))
    f2 = start_in("ferry", d, *aof_args("always", "no"), *nodes)
    try:
        assert live_equal(state(f2.port, nodes=False), before, rewrite)
        replayed = state(f2.port)
    finally:
        f2.cleanup()
    r = start_in("redis", copy, *aof_args("always", "no"), *nodes)
    try:
        assert live_equal(state(r.port, nodes=False), before, rewrite)
        assert state(r.port) == replayed   # the same node layout on both replays
    finally:
        r.cleanup()
    assert len(before) == 3 and before[b"s"]


def test_stream_effects_replay_on_ferry_and_redis(tmpdirs):
    _run(tmpdirs)


def test_replay_does_not_depend_on_node_size(tmpdirs):
    _run(tmpdirs, change_nodes=True)


def test_stream_after_bgrewriteaof(tmpdirs):
    _run(tmpdirs, rewrite=True)
