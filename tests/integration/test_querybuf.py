"""The query buffer's life (src/io/client.c, the clients cron): what
CLIENT LIST shows as qbuf= / qbuf-free= and when the cron resizes it, as
Redis 7.0's unit/querybuf expects.

A client that sends requests holds one 16 KB read chunk; idle for more
than 2 seconds it gives it back (qbuf + qbuf-free = 0). A buffer grown
past 32 KB by a big request is cut down within a cron period once the
requests are small again, but not to nothing. A request left half-sent
across those resizes is still read whole.
"""
from __future__ import annotations

import re
import time

import pytest

from conftest import start_server
from resp_client import RawClient, encode_command


@pytest.fixture
def server():
    s = start_server("ferry")
    try:
        yield s
    finally:
        s.cleanup()


def qbuf_total(admin, name):
    for line in admin.command("CLIENT", "LIST").decode().split("\n"):
        if "name=%s " % name in line:
            q = int(re.search(r" qbuf=(\d+)", line).group(1))
            f = int(re.search(r" qbuf-free=(\d+)", line).group(1))
            return q + f
    raise AssertionError("client %s not listed" % name)


def wait_for(cond, timeout):
    end = time.time() + timeout
    while time.time() < end:
        if cond():
            return True
        time.sleep(0.05)
    return cond()


def test_active_client_holds_a_read_chunk_then_idle_frees_it(server):
    with RawClient(server.port) as admin, RawClient(server.port) as c:
        c.command("CLIENT", "SETNAME", "t1")
        assert 16384 <= qbuf_total(admin, "t1") < 32768
        assert wait_for(lambda: qbuf_total(admin, "t1") == 0, 5.0)
        assert c.command("PING") == b"+PONG\r\n"
        assert 16384 <= qbuf_total(admin, "t1") < 32768


def test_big_buffer_shrinks_when_requests_get_small(server):
    with RawClient(server.port) as admin, RawClient(server.port) as c:
        c.command("CLIENT", "SETNAME", "t2")
        # a 400 KB request of 4 KB arguments grows the query buffer (a single
        # argument of 32 KB or more would go to a block of its own instead)
        assert c.command("RPUSH", "x", *["A" * 4000] * 100) == b":100\r\n"
        big = qbuf_total(admin, "t2")
        assert big > 32768

        def shrunk():
            c.command("SET", "x", "A" * 100)
            now = qbuf_total(admin, "t2")
            return 0 < now < big
        assert wait_for(shrunk, 2.0)


def test_half_sent_request_survives_the_resizes(server):
    with RawClient(server.port) as c:
        req = encode_command(["SET", "k", "v" * 100000])
        c.send(req[:70000])
        time.sleep(3.5)                       # idle: the cron trims the buffer to the pending bytes
        c.send(req[70000:])
        assert c.read_reply() == b"+OK\r\n"
        assert c.command("STRLEN", "k") == b":100000\r\n"
