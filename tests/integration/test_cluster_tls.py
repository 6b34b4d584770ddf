"""Redis Cluster with tls-cluster yes: the bus between ferry nodes, and
between ferry and redis-server 7.0.15 nodes, is TLS from its first byte.

Three masters (two ferry, one redis-server) with a TLS port beside the
plain one, `tls-cluster yes` and `tls-replication yes`, one certificate
authority. They meet over their bus ports and must:
  - agree on a healthy cluster (cluster_state:ok, equal views, no fail or
    handshake flags), each bus on its TLS port + 10000 as Redis derives it;
  - serve a redis-py RedisCluster client over TLS (keys in every node's
    slots written and read back);
  - take a ferry replica of the redis-server master (replicating over TLS)
    and promote it when that master is killed -9: failure reports, the
    election and the new configuration all travel over the TLS bus;
and a ferry node whose bus speaks clear text must not get into the cluster.
"""
from __future__ import annotations

import time

import pytest
from redis.cluster import ClusterNode as PyNode
from redis.cluster import RedisCluster
from redis.crc import key_slot

import clusterkit as ck
from polling import poll
from tlskit import pki, tls_args  # noqa: F401  (pki is a fixture)

KINDS = (ck.FERRY, ck.FERRY, "redis")   # CLUSTER_ORACLE=1: all redis-server


def start_tls_node(ns, kind, pki, tls_cluster="yes"):
    """A node with a TLS port whose + 10000 (its bus port under tls-cluster, as Redis derives it) is free."""
    taken = {p for n in ns.nodes for p in (n.port, n.port + ck.BUS_OFFSET, n.tls_port, n.tls_port + ck.BUS_OFFSET)}
    tls_port = ck.free_cluster_port(taken)
    node = ns.start(kind, *tls_args(pki, tls_port, auth="yes"), "--tls-cluster", tls_cluster,
                    "--tls-replication", "yes")
    node.tls_port = tls_port
    node.bus_port = (tls_port if tls_cluster == "yes" else node.port) + ck.BUS_OFFSET
    return node


def meet(a, b):
    """a meets b at its announced client port and its bus port."""
    port = b.tls_port if b.bus_port == b.tls_port + ck.BUS_OFFSET else b.port
    assert a.call("CLUSTER", "MEET", "127.0.0.1", port, b.bus_port) == b"OK"


def healthy(nodes) -> bool:
    return ck._all_ok(nodes) and ck._views_agree(nodes)


def wait_healthy(nodes):
    poll(lambda: healthy(nodes), 30, "a healthy cluster over the TLS bus",
         diag=lambda: "\n".join(ck._safe_nodes(n) for n in nodes))


def tls_client(pki, node) -> RedisCluster:
    return RedisCluster(startup_nodes=[PyNode("127.0.0.1", node.tls_port)], ssl=True,
                        ssl_ca_certs=pki.ca, ssl_certfile=pki.path("client.crt"),
                        ssl_keyfile=pki.path("client.key"), socket_timeout=10)


def key_in(node, prefix):
    """A key whose slot `node` serves."""
    for i in range(100000):
        k = "%s:%d" % (prefix, i)
        if any(lo <= key_slot(k.encode()) <= hi for lo, hi in node.slot_ranges):
            return k
    raise AssertionError("no key for %r" % node)


@pytest.fixture
def tls_cluster(pki):
    with ck.NodeSet() as ns:
        nodes = [start_tls_node(ns, k, pki) for k in KINDS]
        per = 16384 // len(nodes)
        for i, n in enumerate(nodes):
            lo, hi = i * per, (16383 if i == len(nodes) - 1 else (i + 1) * per - 1)
            assert n.call("CLUSTER", "ADDSLOTSRANGE", lo, hi) == b"OK"
            n.slot_ranges = [(lo, hi)]
        for n in nodes[1:]:
            meet(nodes[0], n)
        wait_healthy(nodes)
        yield ns, nodes


def test_nodes_meet_and_serve_over_tls(tls_cluster, pki):
    ns, nodes = tls_cluster
    # every node knows every node's ports (CLUSTER NODES: ip:port@cport) and its bus port is the TLS port's
    for n in nodes:
        assert n.myself()["addr"].split("@")[1].split(",")[0] == str(n.bus_port)
    for n in nodes:
        rows = {r["id"]: r for r in n.nodes()}
        for m in nodes:
            addr = rows[m.node_id()]["addr"]
            # a clear-text client is shown the plain port, as redis-server 7.0 shows it
            assert addr.startswith("127.0.0.1:%d@%d" % (m.port, m.bus_port)), (n, addr)
    rc = tls_client(pki, nodes[0])
    try:
        owned = [(n, key_in(n, "k%d" % i), "v%d" % i) for i, n in enumerate(nodes)]
        for _, k, v in owned:
            assert rc.set(k, v)
        for n, k, v in owned:  # through the client, and on the node owning the slot
            assert rc.get(k) == v.encode()
            assert n.call("GET", k) == v.encode()
    finally:
        rc.close()


def test_failover_over_the_tls_bus(tls_cluster, pki):
    ns, nodes = tls_cluster
    victim = nodes[2]                        # the redis-server master
    replica = start_tls_node(ns, ck.FERRY, pki)
    meet(nodes[0], replica)
    poll(lambda: healthy(nodes + [replica]), 30, "the fourth node to join")
    assert replica.call("CLUSTER", "REPLICATE", victim.node_id()) == b"OK"
    k = key_in(victim, "fo")
    rc = tls_client(pki, nodes[0])
    try:
        assert rc.set(k, "before")
    finally:
        rc.close()
    poll(lambda: replica.call("DBSIZE") == 1, 30, "the key replicated over TLS")
    assert ck.parse_info(ck._s(replica.call("INFO", "replication")))["master_link_status"] == "up"
    victim_id = victim.node_id()
    victim.kill9()
    ck.wait_role(replica, "master", 30)
    survivors = [nodes[0], nodes[1], replica]
    poll(lambda: ck._all_ok(survivors), 30, "cluster_state:ok after the failover")
    for n in survivors:  # the killed master is FAIL everywhere, its slots the replica's
        poll(lambda: "fail" in next(r for r in n.nodes() if r["id"] == victim_id)["flags"], 30,
             lambda: "%r to see the old master failed" % n)
    assert replica.call("GET", k) == b"before"
    rc = tls_client(pki, nodes[1])
    try:
        assert rc.get(k) == b"before"
        assert rc.set(k, "after")
    finally:
        rc.close()
    assert replica.call("GET", k) == b"after"


def test_a_clear_text_bus_cannot_join(tls_cluster, pki):
    ns, nodes = tls_cluster
    plain = start_tls_node(ns, ck.FERRY, pki, tls_cluster="no")
    plain_id = plain.node_id()
    meet(plain, nodes[0])
    # over 3 s the TLS node never learns the clear-text node, which never gets past its handshake
    for _ in range(30):
        assert not any(r["id"] == plain_id for r in nodes[0].nodes())
        assert all("handshake" in r["flags"] for r in plain.nodes() if "myself" not in r["flags"])
        time.sleep(0.1)
    assert healthy(nodes)
