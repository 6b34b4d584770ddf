"""Replication stream handed to replicas in blocks (repl.c's repl_flush).

A ferry primary puts every write into its backlog at once (so the offset is
always exact) but appends the stream to its replicas' output only once per
loop iteration, as one block read back from the backlog. These tests press
on the seams of that design:

  1. WAIT in the same pipeline as the writes before it: its target offset
     counts them, and they reach the replica before it sleeps.
  2. replicas attached (full sync, and a partial resync after a killed
     link) while pipelined writes run: none gets bytes from before its
     snapshot or continue offset, none misses one; digests agree.
  3. a 16kb backlog: pipelines far bigger than it, scripts and
     transactions bigger than it behind small writes still waiting for the
     replicas (what waits is passed on first, then the big unit at once),
     down a chain ferry->ferry->ferry and to redis-server: digests agree.
"""
from __future__ import annotations

import pytest

import replkit as rk
from replkit import assert_converged, digest, info, poll, replicaof, wait_acks, wait_link_up, wait_sync


@pytest.fixture
def nodes():
    ns = rk.Nodes()
    try:
        yield ns
    finally:
        ns.stop_all()


@pytest.mark.parametrize("replica_kind", ["ferry", "redis"])
def test_wait_in_the_pipeline_of_its_writes(nodes, replica_kind):
    primary, replica = nodes("ferry", name="primary"), nodes(replica_kind, name="replica")
    replicaof(replica, primary)
    wait_sync(replica, primary)
    with primary.client(timeout=30) as c:
        for round_ in range(5):
            cmds = [["SET", "p%d:%d" % (round_, i), "v" * (i % 90)] for i in range(2000)]
            replies = c.pipeline(cmds + [["WAIT", 1, 20000]])
            assert replies[:-1] == [b"+OK\r\n"] * 2000
            assert replies[-1] == b":1\r\n", replies[-1]
            # the acknowledged offset covers every write of the pipeline
            assert replica.call("GET", "p%d:1999" % round_) == "v" * (1999 % 90)
    assert digest(replica) == digest(primary)


@pytest.mark.parametrize("diskless", ["yes", "no"])
def test_replicas_attached_under_pipelined_writes(nodes, diskless):
    primary = nodes("ferry", "--repl-diskless-sync", diskless, "--repl-backlog-size", "64mb", name="primary")
    first, second = nodes("ferry", name="first"), nodes("ferry", name="second")
    replicaof(first, primary)
    wait_link_up(first)
    writer = rk.Writer(primary, seed=17, threads=2, batch=200).start()
    try:
        writer.wait_ops(2000)
        replicaof(second, primary)          # a full sync in the middle of the bursts
        wait_link_up(second)
        writer.wait_ops(2000)
        ids = rk.replica_ids(primary)
        assert first.call("CLIENT", "KILL", "TYPE", "master") >= 1   # first continues from the backlog
        rk.wait_reconnected(primary, first, ids)
        writer.wait_ops(2000)
    finally:
        writer.stop()
    assert int(info(primary, "stats")["sync_partial_ok"]) >= 1
    wait_acks(primary, 2)
    wait_sync(first, primary)
    wait_sync(second, primary)
    assert_converged(primary, [first, second])


@pytest.mark.parametrize("tail_kind", ["ferry", "redis"])
def test_pipelines_bigger_than_the_backlog(nodes, tail_kind):
    args = ("--repl-backlog-size", 16384)
    primary = nodes("ferry", *args, name="primary")
    middle = nodes("ferry", *args, name="middle")
    tail = nodes(tail_kind, *args, name="tail")
    replicaof(middle, primary)
    wait_sync(middle, primary)
    replicaof(tail, middle)
    wait_sync(tail, middle)
    assert info(primary)["repl_backlog_size"] == "16384"
    script = "for i=1,40 do redis.call('SET', KEYS[1]..i, string.rep(ARGV[1], 1000)) end return 1"
    with primary.client(timeout=60) as c:
        for round_ in range(6):
            size = 40 if round_ % 2 else 700           # 2000 x 700 bytes: ~1.5 MB in one pipeline
            cmds = [["SET", "b%d:%d" % (i % 500, round_), "x" * size] for i in range(2000)]
            # units bigger than the backlog behind a few small writes still waiting for the replicas
            cmds += [["SET", "s%d" % round_, round_], ["EVAL", script, 1, "e%d:" % round_, "z"],
                     ["SET", "t%d" % round_, round_], ["MULTI"], *[["APPEND", "m%d" % i, "y" * 900] for i in range(30)],
                     ["EXEC"], ["INCRBY", "counter", 1]]
            replies = c.pipeline(cmds)
            assert replies[-1] == b":%d\r\n" % (round_ + 1), replies[-5:]
    wait_acks(primary, 1)
    wait_sync(middle, primary)
    wait_sync(tail, middle)
    poll(lambda: tail.call("GET", "counter") == "6", 30, "the counter on the tail")
    assert digest(tail) == digest(middle) == digest(primary)
