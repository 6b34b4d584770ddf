"""Replication over TLS (tls-replication), every pairing of ferry and
redis-server 7.0.15 as primary and replica.

Each primary listens on a TLS port with client certificates required
(tls-auth-clients yes); each replica has `tls-replication yes` and is made a
replica of the primary's TLS port, so the link fails unless both ends speak
TLS and the replica presents its certificate. The primary is loaded with
keys in four databases before the replica connects (a full sync, streamed
diskless by both: ferry's loop passes the save child's pipe on to the TLS
connection), written to after the sync (the command stream),
and then both must hold the same data (DBSIZE per db, DEBUG DIGEST, TTLs).
The link is then broken by CLIENT KILL TYPE master on the replica and must
come back with a partial resync over TLS.
"""
from __future__ import annotations

import random

import pytest

import replkit as rk
from conftest import free_port
from polling import poll
from tlskit import pki, tls_args  # noqa: F401  (pki is a fixture)

PAIRS = [("ferry", "ferry"), ("ferry", "redis"), ("redis", "ferry")]


nodes = rk.nodes


def tls_node(nodes, kind, pki, *extra):
    port = free_port()
    node = nodes(kind, *tls_args(pki, port, auth="yes"), "--tls-replication", "yes", *extra)
    node.tls_port = port
    return node


@pytest.mark.parametrize("primary_kind,replica_kind", PAIRS, ids=["%s->%s" % p for p in PAIRS])
def test_full_sync_stream_and_partial_resync_over_tls(nodes, pki, primary_kind, replica_kind):
    primary = tls_node(nodes, primary_kind, pki)
    replica = tls_node(nodes, replica_kind, pki)
    rk.bulk_load(primary, n=4000, size=200)
    assert replica.call("REPLICAOF", "127.0.0.1", primary.tls_port) == "OK"
    rk.wait_sync(replica, primary)
    assert rk.assert_converged(primary, [replica]) > 0
    assert rk.log_matches(primary, r"Starting BGSAVE for SYNC with target: replicas sockets")
    # the replica announced its TLS port (as Redis's replica does under tls-replication)
    slave0 = rk.info(primary)["slave0"]
    assert "port=%d," % replica.tls_port in slave0, slave0
    # the stream, after the snapshot
    rk.run_ops(primary, rk.gen_ops(random.Random(7), 300))
    rk.wait_sync(replica, primary)
    rk.assert_converged(primary, [replica])
    # a broken link continues where it stopped, still over TLS
    full_before = rk.info_int(primary, "sync_full")
    partial_before = rk.info_int(primary, "sync_partial_ok")
    old = rk.replica_ids(primary)
    replica.call("CLIENT", "KILL", "TYPE", "master")
    rk.run_ops(primary, rk.gen_ops(random.Random(8), 100))
    rk.wait_reconnected(primary, replica, old)
    rk.wait_sync(replica, primary)
    rk.assert_converged(primary, [replica])
    assert rk.info_int(primary, "sync_full") == full_before
    assert rk.info_int(primary, "sync_partial_ok") == partial_before + 1


@pytest.mark.parametrize("primary_kind", ["ferry", "redis"])
def test_a_clear_text_replica_cannot_follow_a_tls_port(nodes, pki, primary_kind):
    """Without tls-replication the replica's PING reaches the TLS port in
    clear: the link never comes up, and the primary keeps serving."""
    primary = tls_node(nodes, primary_kind, pki)
    replica = nodes("ferry")
    assert replica.call("REPLICAOF", "127.0.0.1", primary.tls_port) == "OK"
    poll(lambda: rk.log_matches(replica, "Master closed the connection|I/O error|Error|Timeout"), 15,
         "the replica's failed attempt in its log")
    assert rk.info(replica)["master_link_status"] == "down"
    assert primary.call("PING") == "PONG"
    assert rk.info_int(primary, "connected_slaves") == 0
