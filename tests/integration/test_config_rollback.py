"""CONFIG SET rollback (src/server/config_cmd.c, src/io/net.c): when a
multi-parameter CONFIG SET passes validation but one change cannot be put
in force (a port another process listens on, an address that can't be
bound), every parameter of the command gets its old value back, the reply
is redis-server's error text, and the server still listens where it did.
"""
from __future__ import annotations

import socket

from conftest import server_pair
from resp_client import RawClient


def get(c, name):
    return c.command("CONFIG", "GET", name)


def test_port_in_use_rolls_back_everything():
    with server_pair() as (f, r):
        blocker = socket.socket()
        blocker.bind(("127.0.0.1", 0))
        blocker.listen(1)
        used = blocker.getsockname()[1]
        try:
            replies, after = {}, {}
            for s in (f, r):
                with RawClient(s.port) as c:
                    names = ("maxmemory", "port", "client-query-buffer-limit", "maxmemory-policy")
                    before = [get(c, n) for n in names]
                    replies[s.kind] = c.command("CONFIG", "SET", "maxmemory", "10000001", "port", str(used),
                                                "client-query-buffer-limit", "10m", "maxmemory-policy",
                                                "allkeys-lru")
                    after[s.kind] = [get(c, n) for n in names]
                    assert after[s.kind] == before
                with RawClient(s.port) as c2:               # still on the old port
                    assert c2.command("PING") == b"+PONG\r\n"
            assert replies["ferry"] == replies["redis"] == (
                b"-ERR CONFIG SET failed (possibly related to argument 'port') - Unable to listen on this port. "
                b"Check server logs.\r\n")
        finally:
            blocker.close()


def test_bind_failure_rolls_back():
    with server_pair() as (f, r):
        replies = {}
        for s in (f, r):
            with RawClient(s.port) as c:
                before = get(c, "bind"), get(c, "timeout")
                replies[s.kind] = c.command("CONFIG", "SET", "timeout", "77", "bind", "127.0.0.1 192.0.2.1")
                assert (get(c, "bind"), get(c, "timeout")) == before
            with RawClient(s.port) as c2:
                assert c2.command("PING") == b"+PONG\r\n"
        assert replies["ferry"] == replies["redis"] == (
            b"-ERR CONFIG SET failed (possibly related to argument 'bind') - Failed to bind to specified "
            b"addresses.\r\n")


def test_successful_port_change_moves_the_listener():
    with server_pair() as (f, _):
        probe = socket.socket()
        probe.bind(("127.0.0.1", 0))
        newport = probe.getsockname()[1]
        probe.close()
        with RawClient(f.port) as c:
            assert c.command("CONFIG", "SET", "port", str(newport)) == b"+OK\r\n"
        with RawClient(newport) as c:
            assert c.command("PING") == b"+PONG\r\n"
            assert c.command("CONFIG", "SET", "port", str(f.port)) == b"+OK\r\n"
        with RawClient(f.port) as c:
            assert c.command("PING") == b"+PONG\r\n"
