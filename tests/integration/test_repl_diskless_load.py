"""A replica loading its primary's snapshot straight from the socket
(repl-diskless-load swapdb / on-empty-db, as Redis 7.0), with ferry and
redis-server 7.0.15 as the primary and ferry as the replica (REPL_ORACLE=1:
redis-server as the replica too, proving the tests on the oracle).

What it must give:
  1. the dataset converges whatever the framing ($<len> from a disk sync,
     $EOF:<mark> from a diskless one) and whichever primary; the replica
     says "Loading DB in memory" and never writes the snapshot to disk;
     on-empty-db with data falls back to disk, as Redis;
  2. the replica reads only as fast as it loads: with key-load-delay the
     primary's transfer is still running seconds in, where a replica that
     buffered to disk would have taken it all at once;
  3. swapdb keeps the old dataset when the link breaks mid-load
     ("Internal error in RDB" in the log), serves it while loading when
     the snapshot continues the replica's own history (async_loading), and
     then converges.
"""
from __future__ import annotations

import time

import pytest

import replkit as rk
from polling import poll

nodes = rk.nodes

KEYS, SIZE = 20000, 1000           # 20 MB: more than the loopback socket buffers hold


def replica_node(nodes, mode, *extra):
    r = nodes("ferry", "--repl-diskless-load", mode, *extra)
    return r


def fill_varied(node, stream, prefix="v"):
    """Every type, expiries, a function library, a big value, four dbs; a
    stream if `stream` (ferry's DEBUG DIGEST of a stream is its own: see
    digest.c, so not when a redis-server is compared with a ferry)."""
    rk.bulk_load(node, n=2000, size=100)
    with node.client(timeout=30.0) as c:
        assert c.command("SET", prefix + ":big", "x" * 300000) == b"+OK\r\n"
        if stream:
            assert c.command("XADD", prefix + ":stream", "*", "f", "v").startswith(b"$")
        lib = "#!lua name=%slib\nredis.register_function('%sf', function() return 1 end)" % (prefix, prefix)
        assert c.command("FUNCTION", "LOAD", "REPLACE", lib).startswith(b"$")


def loading(node) -> int:
    return rk.info_int(node, "loading", "persistence")


@pytest.mark.parametrize("primary_kind", ["ferry", "redis"])
@pytest.mark.parametrize("sync", ["diskless", "disk"])
@pytest.mark.parametrize("mode", ["swapdb", "on-empty-db"])
def test_snapshot_from_the_socket_converges(nodes, primary_kind, sync, mode):
    p = nodes(primary_kind, "--repl-diskless-sync", "yes" if sync == "diskless" else "no")
    r = replica_node(nodes, mode)
    fill_varied(p, stream=p.real_kind == r.real_kind)
    rk.replicaof(r, p)
    rk.wait_sync(r, p)
    rk.assert_converged(p, [r])
    assert r.call("FUNCTION", "LIST")[0][1] == "vlib"
    assert rk.log_matches(r, r"MASTER <-> REPLICA sync: Loading DB in memory")
    assert not rk.log_matches(r, r"from master (with EOF )?to disk"), r.log_tail(20)


def test_on_empty_db_with_data_goes_through_disk(nodes):
    p = nodes("ferry")
    fill_varied(p, stream=True)
    r = replica_node(nodes, "on-empty-db")
    assert r.call("SET", "mine", "1") == "OK"
    rk.replicaof(r, p)
    rk.wait_sync(r, p)
    rk.assert_converged(p, [r])
    assert r.call("EXISTS", "mine") == 0
    assert rk.log_matches(r, r"from master (with EOF )?to disk"), r.log_tail(20)


@pytest.mark.parametrize("primary_kind", ["ferry", "redis"])
def test_the_replica_reads_at_the_pace_it_loads(nodes, primary_kind):
    p = nodes(primary_kind, "--repl-diskless-sync", "yes", "--rdbcompression", "no")
    assert p.call("DEBUG", "POPULATE", KEYS, "key", SIZE) == "OK"
    # 100 us a key: at least 2 s to load; clients are served every 100 KB
    r = replica_node(nodes, "swapdb", "--key-load-delay", "100", "--loading-process-events-interval-bytes", "102400")
    rk.replicaof(r, p)
    poll(lambda: rk.log_matches(r, r"Loading DB in memory"), 20, "the load to start")
    time.sleep(1.0)
    # a second in, the primary is still sending: the replica has not taken
    # the 20 MB snapshot faster than it loads it
    assert rk.info_int(p, "rdb_bgsave_in_progress", "persistence") == 1, rk.repl_summary(p)
    assert loading(r) == 1
    with r.client() as c:  # served while loading, as Redis: -LOADING for data commands
        assert c.command("GET", "key:1") == b"-LOADING Redis is loading the dataset in memory\r\n"
    rk.wait_sync(r, p, timeout=60)
    rk.assert_converged(p, [r])


def synced_pair(nodes, primary_kind, *replica_extra):
    p = nodes(primary_kind, "--repl-diskless-sync", "yes", "--rdbcompression", "no")
    assert p.call("DEBUG", "POPULATE", 5000, "old", 1000) == "OK"
    r = replica_node(nodes, "swapdb", *replica_extra)
    rk.replicaof(r, p)
    rk.wait_sync(r, p)
    return p, r


def force_full_resync_slowly(p, r):
    """New data on the primary (DEBUG POPULATE is not propagated), then, in
    one transaction, the link cut and more than a tiny backlog written: the
    replica comes back with the same history and gets a full sync, which it
    loads slowly (200 us a key: 5 s)."""
    for k, v in (("key-load-delay", "200"), ("loading-process-events-interval-bytes", "102400")):
        assert r.call("CONFIG", "SET", k, v) == "OK"
    assert p.call("DEBUG", "POPULATE", KEYS, "new", SIZE) == "OK"
    with p.client() as c:
        cmds = [("MULTI",), ("CLIENT", "KILL", "TYPE", "replica"), ("CONFIG", "SET", "repl-backlog-size", "16384"),
                ("SET", "old:1", "changed")]
        cmds += [("SET", "fill:%d" % i, "A" * 16384) for i in range(10)]
        replies = c.pipeline(cmds + [("EXEC",)])
        assert replies[-1].startswith(b"*13\r\n"), replies[-1][:100]


@pytest.mark.parametrize("primary_kind", ["ferry", "redis"])
def test_async_loading_serves_the_old_dataset(nodes, primary_kind):
    p, r = synced_pair(nodes, primary_kind)
    before = r.call("GET", "old:1")
    force_full_resync_slowly(p, r)
    poll(lambda: rk.info_int(r, "async_loading", "persistence") == 1, 20, "async_loading",
         diag=lambda: r.log_tail(15))
    assert r.call("GET", "old:1") == before   # the old dataset, served while the new one loads
    assert r.call("DBSIZE") == 5000
    assert loading(r) == 0
    assert r.call("CONFIG", "SET", "key-load-delay", "0") == "OK"
    rk.wait_sync(r, p, timeout=60)
    assert r.call("GET", "old:1") == "changed"
    rk.assert_converged(p, [r])


@pytest.mark.parametrize("primary_kind", ["ferry", "redis"])
def test_link_lost_mid_load_keeps_the_old_dataset(nodes, primary_kind):
    p, r = synced_pair(nodes, primary_kind)
    old = rk.digest(r)
    force_full_resync_slowly(p, r)
    poll(lambda: rk.info_int(r, "async_loading", "persistence") == 1, 20, "async_loading")
    # the next sync waits 3 s: time to look at the replica between attempts
    assert p.call("CONFIG", "SET", "repl-diskless-sync-delay", "3") == "OK"
    p.call("CLIENT", "KILL", "TYPE", "replica")
    poll(lambda: rk.log_matches(r, r"Internal error in RDB"), 20, "the failed load in the log",
         diag=lambda: r.log_tail(15))
    poll(lambda: rk.info_int(r, "async_loading", "persistence") == 0, 20, "the load to end")
    assert rk.digest(r) == old
    assert r.call("CONFIG", "SET", "key-load-delay", "0") == "OK"
    rk.wait_sync(r, p, timeout=60)
    rk.assert_converged(p, [r])
