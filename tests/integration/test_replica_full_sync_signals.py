"""What a replica's clients learn when a full sync replaces its dataset,
as on redis-server (its emptyData, or the swap of a dataset loaded aside
with repl-diskless-load swapdb): a client WATCHing a key that existed has
its EXEC fail, and a client with CLIENT TRACKING gets the invalidation
that says every key is gone (RESP3: >2 invalidate null).

Each case runs on a ferry pair and on a redis-server pair; the replica is
moved from one primary to another (a different history: a full sync) and
the two clients' bytes must be what redis-server's clients get.
"""
from __future__ import annotations

import pytest

import replkit as rk
from polling import poll

nodes = rk.nodes


def full_sync_as_seen_by_clients(nodes, kind: str, mode: str) -> dict:
    a, b = nodes(kind), nodes(kind)
    r = nodes(kind, "--repl-diskless-load", mode)
    a.call("SET", "k", "from-a")
    b.call("SET", "k", "from-b")
    rk.replicaof(r, a)
    rk.wait_sync(r, a)
    out = {}
    with r.client() as watcher, r.client() as tracked:
        out["watch"] = watcher.command("WATCH", "k")
        out["hello"] = tracked.command("HELLO", "3")[:2]
        out["tracking"] = tracked.command("CLIENT", "TRACKING", "on")
        out["get"] = tracked.command("GET", "k")
        rk.replicaof(r, b)
        rk.wait_sync(r, b)
        poll(lambda: r.call("GET", "k") == "from-b", 10, "the new dataset")
        out["invalidation"] = tracked.read_reply(timeout=10)
        out["multi"] = watcher.command("MULTI")
        out["queued"] = watcher.command("GET", "k")
        out["exec"] = watcher.command("EXEC")
        out["after"] = tracked.command("GET", "k")
    return out


@pytest.mark.parametrize("mode", ["disabled", "swapdb", "on-empty-db"])
def test_watchers_and_tracking_clients_learn_of_a_full_sync(nodes, mode):
    got = {kind: full_sync_as_seen_by_clients(nodes, kind, mode) for kind in ("ferry", "redis")}
    assert got["ferry"] == got["redis"]
    assert got["ferry"]["exec"] == b"*-1\r\n"  # the transaction was aborted (RESP2 connection)
    assert got["ferry"]["invalidation"] == b">2\r\n$10\r\ninvalidate\r\n_\r\n"
