"""Hostile peers on a ferry node's cluster bus port (port + 10000), in a
three-node ferry cluster: garbage, a truncated header, a header declaring a
huge totlen, a well-formed PING from a node nobody knows carrying bogus
gossip (unknown names, impossible addresses, FAIL flags about the real
nodes) and a claim on every slot with a huge epoch, the same PING cut into
one-byte writes, a PING whose count disagrees with its length, and 200
connections of random bytes. After each: the node answers PING and CLUSTER
INFO (cluster_state:ok), and every node's view (ids, roles, slots) is the one
it had before. Messages are built with struct from the offsets in
include/cluster_msg.h (Redis 7.0's layout).
"""
from __future__ import annotations

import os
import random
import socket
import struct
import time

import pytest

import clusterkit as ck
from resp_client import RawClient

HDR_LEN = 2256
GOSSIP_LEN = 104
TYPE_PING = 0
FLAG_MASTER, FLAG_PFAIL, FLAG_FAIL = 1, 4, 8


def header(msg_type: int, count: int, totlen: int, sender: bytes, port: int,
           slots: bytes = b"\x00" * 2048, epoch: int = 0, flags: int = FLAG_MASTER) -> bytes:
    h = bytearray(HDR_LEN)
    h[0:4] = b"RCmb"
    struct.pack_into(">IHHHH", h, 4, totlen, 1, port, msg_type, count)
    struct.pack_into(">QQQ", h, 16, epoch, epoch, 0)
    h[40:80] = sender
    h[80:80 + 2048] = slots
    h[2128:2168] = b"\x00" * 40                     # slaveof: none
    h[2168:2168 + 9] = b"127.0.0.1"                 # myip
    struct.pack_into(">H", h, 2214, 0)              # no extensions
    struct.pack_into(">HHH", h, 2246, 0, port + 10000, flags)
    h[2252] = 0                                     # state ok
    return bytes(h)


def gossip(name: bytes, ip: bytes, port: int, flags: int) -> bytes:
    g = bytearray(GOSSIP_LEN)
    g[0:40] = name
    struct.pack_into(">II", g, 40, 0, 0)
    g[48:48 + len(ip)] = ip
    struct.pack_into(">HHHH", g, 94, port, port + 10000 if port < 55000 else 1, flags, 0)
    return bytes(g)


def bogus_ping(known_ids, rng) -> bytes:
    sender = os.urandom(20).hex().encode()
    entries = [gossip(i.encode(), b"127.0.0.1", 1, FLAG_FAIL | FLAG_PFAIL) for i in known_ids]
    entries.append(gossip(os.urandom(20).hex().encode(), b"999.1.2.3", 0, FLAG_MASTER))
    entries.append(gossip(b"z" * 40, b"\xff" * 45, 65535, 0xFFFF))
    entries.append(gossip(sender, b"::1", 7000, FLAG_MASTER))
    body = b"".join(entries)
    return header(TYPE_PING, len(entries), HDR_LEN + len(body), sender, rng.randint(1, 9999),
                  slots=b"\xff" * 2048, epoch=2 ** 63) + body


def send(bus_port: int, data: bytes, chunk: int = 0, linger: float = 0.05, want: int = 0) -> bytes:
    """Send data (in chunks of `chunk` bytes when set); return up to `want`
    bytes of the node's answer (read within 2 s)."""
    got = b""
    with socket.create_connection(("127.0.0.1", bus_port), timeout=2) as s:
        try:
            if chunk:
                for i in range(0, len(data), chunk):
                    s.sendall(data[i:i + chunk])
            else:
                s.sendall(data)
            time.sleep(linger)
            while len(got) < want:
                b = s.recv(want - len(got))
                if not b:
                    break
                got += b
        except OSError:
            pass  # the node may close the link first: that is fine
    return got


def assert_pong(reply: bytes) -> None:
    """A well-formed PING, even from a stranger, is answered with a PONG:
    proof that the message was parsed as such."""
    assert len(reply) >= HDR_LEN and reply[:4] == b"RCmb", reply[:16]
    totlen, _ver, _port, mtype = struct.unpack_from(">IHHH", reply, 4)
    assert mtype == 1 and totlen >= HDR_LEN, (mtype, totlen)


@pytest.fixture(scope="module")
def trio():
    with ck.NodeSet() as ns:
        nodes = ns.start_many([ck.FERRY] * 3)
        ck.create_cluster(nodes, replicas=0)
        yield nodes


def assert_unchanged(nodes, before):
    target = nodes[0]
    with RawClient(target.port) as c:
        assert c.command("PING") == b"+PONG\r\n"
    assert target.info()["cluster_state"] == "ok"
    for n in nodes:
        assert ck.topology(n) == before[n.port], "%r's view changed:\n%s" % (n, n.call("CLUSTER", "NODES"))


CASES = ["garbage", "truncated", "huge_totlen", "bogus_ping", "bogus_ping_bytewise",
         "count_mismatch", "random_x200"]


@pytest.mark.parametrize("case", CASES)
def test_bus_hostile(trio, case):
    rng = random.Random(case)
    nodes = trio
    before = {n.port: ck.topology(n) for n in nodes}
    bus = nodes[0].port + ck.BUS_OFFSET
    known = [n.node_id() for n in nodes]
    if case == "garbage":
        send(bus, b"GET / HTTP/1.1\r\nHost: x\r\n\r\n" + b"garbage\x00" * 2000)
    elif case == "truncated":
        send(bus, header(TYPE_PING, 0, HDR_LEN, b"a" * 40, 7000)[:100], linger=0.3)
    elif case == "huge_totlen":
        h = header(TYPE_PING, 0, 0xFFFFFFF0, b"b" * 40, 7000)
        send(bus, h + os.urandom(64 * 1024), linger=0.3)
    elif case == "bogus_ping":
        assert_pong(send(bus, bogus_ping(known, rng), linger=0.3, want=HDR_LEN))
    elif case == "bogus_ping_bytewise":
        assert_pong(send(bus, bogus_ping(known, rng), chunk=1, linger=0.3, want=HDR_LEN))
    elif case == "count_mismatch":
        p = bytearray(bogus_ping(known, rng))
        struct.pack_into(">H", p, 14, 60000)    # count says 60000 entries
        send(bus, bytes(p), linger=0.3)
    elif case == "random_x200":
        for i in range(200):
            data = os.urandom(rng.randint(1, 4096))
            if i % 4 == 0:
                data = b"RCmb" + data
            send(bus, data, linger=0)
    time.sleep(0.2)
    assert_unchanged(nodes, before)
    assert nodes[0].alive()
