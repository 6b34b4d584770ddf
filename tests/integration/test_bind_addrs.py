"""`bind ""` (no TCP listener) and `bind-source-addr` (the address outgoing
connections leave from), against redis-server (src/io/net.c).

Redis's unit/networking checks both; these run in `make test`. An empty
bind closes the TCP listeners while the connections already open stay,
CONFIG GET shows it empty and CONFIG SET bind brings the listener back. A
replica with bind-source-addr 127.0.0.2 reaches its primary from that
address, so the primary's INFO shows ip=127.0.0.2, whichever server is the
primary and whichever the replica. And protected mode refuses a client from
127.0.0.2 as redis-server 7.0.15 does: only 127.0.0.1 and ::1 are local.
"""
from __future__ import annotations

import socket

import pytest

from replkit import info, nodes, replicaof, wait_link_up  # noqa: F401  (nodes: fixture)
from resp_client import RawClient


def can_connect(port: int) -> bool:
    try:
        socket.create_connection(("127.0.0.1", port), timeout=2).close()
        return True
    except OSError:
        return False


def loopback_alias_usable() -> bool:
    """127.0.0.2 can be bound and reaches 127.0.0.1 (Linux's whole 127/8)."""
    srv = socket.socket()
    try:
        srv.bind(("127.0.0.1", 0))
        srv.listen(1)
        cli = socket.socket()
        try:
            cli.bind(("127.0.0.2", 0))
            cli.settimeout(2)
            cli.connect(srv.getsockname())
            return True
        except OSError:
            return False
        finally:
            cli.close()
    finally:
        srv.close()


def empty_bind_session(server) -> list:
    out = []
    with RawClient(server.port) as c:
        out.append(c.command("CONFIG", "SET", "bind", ""))
        out.append(c.command("CONFIG", "GET", "bind"))
        out.append(can_connect(server.port))
        out.append(c.command("PING"))                     # the open connection stays
        out.append(c.command("CONFIG", "SET", "bind", "999.999.999.999"))
        out.append(c.command("CONFIG", "GET", "bind"))
        out.append(c.command("CONFIG", "SET", "bind", "127.0.0.1"))
        out.append(can_connect(server.port))
        out.append(c.command("CONFIG", "GET", "bind"))
    return out


def test_empty_bind_closes_the_listener_as_redis(server_factory):
    got = {kind: empty_bind_session(server_factory(kind)) for kind in ("ferry", "redis")}
    assert got["ferry"] == got["redis"]
    assert got["ferry"][:4] == [b"+OK\r\n", b"*2\r\n$4\r\nbind\r\n$0\r\n\r\n", False, b"+PONG\r\n"]
    assert got["ferry"][6:8] == [b"+OK\r\n", True]


@pytest.mark.skipif(not loopback_alias_usable(), reason="127.0.0.2 is not usable here")
@pytest.mark.parametrize("primary_kind,replica_kind", [("ferry", "ferry"), ("redis", "ferry"), ("ferry", "redis")])
def test_replica_connects_from_bind_source_addr(nodes, primary_kind, replica_kind):  # noqa: F811
    primary = nodes(primary_kind, "--protected-mode", "no")   # 127.0.0.2 is not "local" to Redis 7.0
    replica = nodes(replica_kind, "--bind-source-addr", "127.0.0.2")
    replicaof(replica, primary)
    wait_link_up(replica)
    assert "ip=127.0.0.2," in info(primary)["slave0"]


def test_unusable_bind_source_addr_still_replicates(nodes):  # noqa: F811
    """An address that can't be bound (not local) is skipped, as Redis's
    best-effort bind does: the replica connects from the kernel's choice."""
    primary = nodes("ferry")
    replica = nodes("ferry", "--bind-source-addr", "192.0.2.77")
    replicaof(replica, primary)
    wait_link_up(replica)
    assert "ip=127.0.0.1," in info(primary)["slave0"]


def ask_from(port: int, src: str, request: bytes) -> bytes:
    """The reply to request, sent from source address src."""
    with RawClient(port, timeout=5, source=src) as c:
        c.send(request)
        return c.read_reply()


@pytest.mark.skipif(not loopback_alias_usable(), reason="127.0.0.2 is not usable here")
def test_protected_mode_local_means_127_0_0_1(server_factory):
    got = {}
    for kind in ("ferry", "redis"):
        s = server_factory(kind)
        got[kind] = [ask_from(s.port, src, b"PING\r\n") for src in ("127.0.0.1", "127.0.0.2")]
    assert got["ferry"] == got["redis"]
    assert got["ferry"][0] == b"+PONG\r\n" and got["ferry"][1].startswith(b"-DENIED Redis is running in protected")


@pytest.mark.skipif(not loopback_alias_usable(), reason="127.0.0.2 is not usable here")
def test_debug_local_means_127_0_0_1(server_factory):
    got = {}
    for kind in ("ferry", "redis"):
        s = server_factory(kind, "--protected-mode", "no", "--enable-debug-command", "local")
        got[kind] = [ask_from(s.port, src, b"DEBUG SLEEP 0\r\n") for src in ("127.0.0.1", "127.0.0.2")]
    assert got["ferry"] == got["redis"]
    assert got["ferry"][0] == b"+OK\r\n" and got["ferry"][1].startswith(b"-ERR DEBUG command not allowed")
