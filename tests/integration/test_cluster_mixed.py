"""A mixed cluster: three redis-server and three ferry nodes. Masters
alternate between kinds (redis R1, ferry F1, redis R3) and each has a
replica of the other kind (F2 replicates R1, R2 replicates F1, F3 replicates
R3), added with `redis-cli --cluster add-node --cluster-slave`. One scenario,
step after step:

  1. every node, of either kind, sees all six healthy with the same
     topology; the replication pairs are the planned ones;
  2. data written through redis-py's RedisCluster reads back;
  3. SIGKILL of redis master R1: ferry F2 is promoted, the data is intact;
  4. R1 restarted in place (its nodes.conf) rejoins as a replica of F2 and
     syncs: GET after READONLY on R1 returns the data;
  5. the other direction: SIGKILL of ferry master F1, redis R2 promoted,
     data intact; F1 restarted rejoins as R2's replica and serves READONLY
     reads.
"""
from __future__ import annotations

import time

import pytest
from redis.cluster import RedisCluster
from redis.crc import key_slot

import clusterkit as ck
from polling import poll
from resp_client import RawClient

PROMOTE_LIMIT = ck.NODE_TIMEOUT_MS / 1000.0 + 5.0


def rc(node) -> RedisCluster:
    return RedisCluster(host="127.0.0.1", port=node.port, socket_timeout=5,
                        cluster_error_retry_attempts=5)


def add_replica(new, master, seed):
    r = ck.cli("--cluster", "add-node", new.addr(), seed.addr(), "--cluster-slave",
               "--cluster-master-id", master.node_id(), timeout=60)
    assert r.returncode == 0, r.stdout + r.stderr


def write_keys(node, n, prefix):
    c = rc(node)
    try:
        data = {}
        for i in range(n):
            k = b"%s:%d" % (prefix, i)
            v = b"\xff\x00" + k
            c.set(k, v)
            data[k] = v
        return data
    finally:
        c.close()


def check_keys(node, data):
    c = rc(node)
    try:
        got = {k: c.get(k) for k in data}
    finally:
        c.close()
    bad = [k for k in data if got[k] != data[k]]
    assert not bad, "%d keys lost or changed, e.g. %r" % (len(bad), bad[:3])


def wait_all(master):
    with RawClient(master.port) as c:
        assert c.command("WAIT", 1, 5000) == b":1\r\n"


def fail_over(all_nodes, master, replica, data):
    """SIGKILL master, replica promoted in time, data intact."""
    wait_all(master)
    t0 = time.monotonic()
    master.kill9()
    ck.wait_role(replica, "master", timeout=PROMOTE_LIMIT + 10)
    took = time.monotonic() - t0
    print("%s master killed, %s replica promoted in %.2fs" % (master.kind, replica.kind, took))
    assert took <= PROMOTE_LIMIT, "promotion took %.2fs" % took
    rest = [n for n in all_nodes if n.alive()]
    poll(lambda: ck._all_ok(rest), timeout=15, what="cluster ok after failover")
    check_keys(replica, data)


def rejoin(all_nodes, old, new_master, data):
    """The killed node restarts in place and becomes new_master's replica."""
    old.restart()
    ck.wait_role(old, "slave", timeout=20)
    assert old.myself()["master"] == new_master.node_id()
    ck.wait_healthy(all_nodes, timeout=30)
    wait_all(new_master)
    mine = ck.slot_set(new_master.myself()["slots"])
    keys = [k for k in data if key_slot(k) in mine]
    assert keys
    with RawClient(old.port) as c:
        assert c.command("READONLY") == b"+OK\r\n"
        for k in keys:
            assert c.command("GET", k) == b"$%d\r\n%s\r\n" % (len(data[k]), data[k]), k


@pytest.mark.timeout(240)
def test_mixed_cluster():
    with ck.NodeSet() as ns:
        r1, f1, r3 = ns.start("redis"), ns.start(ck.FERRY), ns.start("redis")
        f2, r2, f3 = ns.start(ck.FERRY), ns.start("redis"), ns.start(ck.FERRY)
        ck.create_cluster([r1, f1, r3], replicas=0)
        add_replica(f2, r1, r1)
        add_replica(r2, f1, f1)
        add_replica(f3, r3, r1)
        nodes = ns.nodes
        ck.wait_healthy(nodes)

        # 1. everyone's view: six nodes, all connected, the planned pairs
        for n in nodes:
            rows = n.nodes()
            assert len(rows) == 6, "%r knows %d nodes" % (n, len(rows))
            assert all(r["link"] == "connected" for r in rows), n
            assert n.info()["cluster_state"] == "ok"
        for replica, master in ((f2, r1), (r2, f1), (f3, r3)):
            assert "slave" in replica.myself()["flags"]
            assert replica.myself()["master"] == master.node_id()
            role = replica.call("ROLE")
            assert role[0] == b"slave" and role[2] == master.port, (replica, role)

        # 2. data through RedisCluster
        data = write_keys(r1, 600, b"mixed")
        check_keys(f1, data)
        for m in (r1, f1, r3):
            assert int(m.call("DBSIZE")) > 100

        # 3 + 4. redis master dies, ferry replica takes over, redis rejoins
        fail_over(nodes, r1, f2, data)
        more = write_keys(f2, 200, b"after1")
        data.update(more)
        rejoin(nodes, r1, f2, data)

        # 5. ferry master dies, redis replica takes over, ferry rejoins
        fail_over(nodes, f1, r2, data)
        more = write_keys(r2, 200, b"after2")
        data.update(more)
        rejoin(nodes, f1, r2, data)
        check_keys(r3, data)
        r = ck.check(r3)
        assert r.returncode == 0, r.stdout
