"""Diskless full syncs through the save child's pipe (Redis 7's rdb pipe),
with ferry and redis-server 7.0.15 as the primary.

The primary's save child writes the snapshot into a pipe; the primary's
event loop passes each chunk on to every replica of the transfer and reads
the next one only once all of them have taken it. What that must give, on
both servers:

  1. a replica that stops reading (a raw PSYNC socket with a tiny receive
     buffer) is dropped after repl-timeout ("Disconnecting timedout replica
     (full sync)"), while a real replica of the same transfer completes its
     sync ("done reading from pipe, 1 replicas still up") and converges;
  2. when every replica of a transfer goes away, the save child is killed
     ("last replica dropped, killing fork child"): rdb_bgsave_in_progress
     falls to 0 long before the slowed save could have ended, and the
     primary serves on;
  3. a save child killed with SIGKILL mid-transfer: the primary collects it,
     drops the replica whose snapshot was cut short, and the replica's next
     attempt syncs and converges.
"""
from __future__ import annotations

import os
import re
import signal
import socket
import time

import pytest

import replkit as rk
from polling import poll

KEYS, SIZE = 20000, 1000           # a 20 MB snapshot: more than the loopback socket buffers take


nodes = rk.nodes


def diskless_primary(nodes, kind, replicas):
    """A primary whose next diskless sync waits for `replicas` replicas (or 5 s)."""
    p = nodes(kind, "--repl-diskless-sync", "yes", "--rdbcompression", "no")
    for k, v in (("repl-diskless-sync-delay", "5"), ("repl-diskless-sync-max-replicas", str(replicas))):
        assert p.call("CONFIG", "SET", k, v) == "OK"
    assert p.call("DEBUG", "POPULATE", KEYS, "key", SIZE) == "OK"
    return p


def stalled_replica(node) -> socket.socket:
    """A replica that can take a diskless snapshot and never reads it (PSYNC
    is refused while the REPLCONF reply is unread, so that one is read)."""
    s = rk.raw_sync_socket(node, b"REPLCONF capa eof capa psync2\r\n", rcvbuf=4096)
    s.settimeout(10)
    got = b""
    while not got.endswith(b"\r\n"):
        chunk = s.recv(64)
        assert chunk, "connection closed before the REPLCONF reply"
        got += chunk
    assert got == b"+OK\r\n", got
    s.sendall(b"PSYNC ? -1\r\n")
    return s


def transfer_pid(node) -> int:
    with open(node.server.logpath, "rb") as f:
        found = re.findall(rb"Background RDB transfer started by pid (\d+)", f.read())
    return int(found[-1]) if found else 0


def bgsave_running(node) -> bool:
    return rk.info(node, "persistence")["rdb_bgsave_in_progress"] == "1"


@pytest.mark.parametrize("kind", ["ferry", "redis"])
def test_a_stalled_replica_times_out_and_the_other_completes(nodes, kind):
    primary = diskless_primary(nodes, kind, 2)
    assert primary.call("CONFIG", "SET", "repl-timeout", "2") == "OK"
    replica = nodes("ferry")
    sock = stalled_replica(primary)
    try:
        rk.replicaof(replica, primary)
        poll(lambda: rk.log_matches(primary, r"Disconnecting timedout replica \(full sync\)"), 30,
             "the stalled replica to be dropped by repl-timeout")
        poll(lambda: rk.log_matches(primary, r"Diskless rdb transfer, done reading from pipe, 1 replicas still up"),
             30, "the transfer to finish for the replica left")
        rk.wait_sync(replica, primary)
        rk.assert_converged(primary, [replica])
        assert replica.call("DBSIZE") == KEYS
        assert rk.info(primary)["connected_slaves"] == "1"
        assert primary.call("SET", "after", "1") == "OK"
        rk.wait_sync(replica, primary)
        assert replica.call("GET", "after") == "1"
    finally:
        sock.close()


@pytest.mark.parametrize("kind", ["ferry", "redis"])
def test_the_child_is_killed_when_its_last_replica_goes(nodes, kind):
    primary = diskless_primary(nodes, kind, 2)
    # 1 ms a key: the save alone would take 20 s
    assert primary.call("CONFIG", "SET", "rdb-key-save-delay", "1000") == "OK"
    socks = [stalled_replica(primary), stalled_replica(primary)]
    try:
        poll(lambda: transfer_pid(primary) and bgsave_running(primary), 15, "the transfer to start")
        t0 = time.monotonic()
        for s in socks:
            s.close()
        poll(lambda: rk.log_matches(primary, r"Diskless rdb transfer, last replica dropped, killing fork child"), 10,
             "the child to be killed once no replica is left")
        poll(lambda: not bgsave_running(primary), 10, "the killed child to be collected")
        assert time.monotonic() - t0 < 10
        assert rk.info(primary)["connected_slaves"] == "0"
        assert primary.call("SET", "k", "v") == "OK"
        assert primary.call("DBSIZE") == KEYS + 1
    finally:
        for s in socks:
            s.close()


@pytest.mark.parametrize("kind", ["ferry", "redis"])
def test_a_killed_child_is_collected_and_the_replica_syncs_again(nodes, kind):
    primary = diskless_primary(nodes, kind, 1)
    assert primary.call("CONFIG", "SET", "rdb-key-save-delay", "1000") == "OK"
    replica = nodes("ferry")
    rk.replicaof(replica, primary)
    poll(lambda: transfer_pid(primary) and bgsave_running(primary), 15, "the transfer to start")
    pid = transfer_pid(primary)
    assert primary.call("CONFIG", "SET", "rdb-key-save-delay", "0") == "OK"
    os.kill(pid, signal.SIGKILL)
    poll(lambda: transfer_pid(primary) != pid, 30, "a new transfer after the killed one")
    rk.wait_sync(replica, primary)
    rk.assert_converged(primary, [replica])
    assert replica.call("DBSIZE") == KEYS
    assert rk.info_int(primary, "sync_full") >= 2
