"""tcp-rcvbuf, ferry's own directive (src/io/net.c): the receive buffer of
accepted TCP client sockets, so that a same-host client pipelining more
than the kernel's initial window does not have its transmission run on the
server's CPU (issue 19: SET of 4-64 KB values at P=100).

The server-side socket's buffer is read from outside with `ss -tm`
(skmem rb<bytes>: the kernel doubles what SO_RCVBUF asks for). Above
net.core.rmem_max the option is not set, autotuning stays, and the log
says why. CONFIG GET * does not list the directive (it is not Redis's).
"""
from __future__ import annotations

import re
import shutil
import subprocess
import time

import pytest

from resp_client import RawClient

pytestmark = pytest.mark.skipif(shutil.which("ss") is None, reason="needs ss (iproute2)")


def rmem_max() -> int:
    with open("/proc/sys/net/core/rmem_max") as f:
        return int(f.read())


def server_side_rb(port: int, client_port: int) -> int:
    """rb of the server's end of the connection from client_port."""
    out = subprocess.run(["ss", "-tmnH", "state", "established",
                          "( sport = :%d and dport = :%d )" % (port, client_port)],
                         capture_output=True, text=True, check=True).stdout
    m = re.search(r"skmem:\([^)]*\brb(\d+)", out)
    assert m, "no server-side socket in ss output: %r" % out
    return int(m.group(1))


def rb_of_new_client(port: int) -> int:
    with RawClient(port) as c:
        assert c.command("PING") == b"+PONG\r\n"   # accepted and set up
        return server_side_rb(port, c.sock.getsockname()[1])


def test_default_is_set_on_accepted_clients_when_rmem_max_allows(ferry):
    with RawClient(ferry.port) as admin:
        assert admin.command("CONFIG", "GET", "tcp-rcvbuf") == b"*2\r\n$10\r\ntcp-rcvbuf\r\n$7\r\n4194304\r\n"
        assert b"tcp-rcvbuf" not in admin.command("CONFIG", "GET", "*")
        rb = rb_of_new_client(ferry.port)
        if rmem_max() >= 4194304:
            assert rb == 2 * 4194304
        else:
            assert rb != 2 * 4194304
            assert "WARNING: tcp-rcvbuf 4194304 is above /proc/sys/net/core/rmem_max" in ferry.log_tail(200)


def test_config_set_applies_to_new_connections_and_zero_leaves_autotuning(ferry):
    with RawClient(ferry.port) as admin:
        small = 256 * 1024
        if rmem_max() < small:
            pytest.skip("net.core.rmem_max below 256 KB")
        assert admin.command("CONFIG", "SET", "tcp-rcvbuf", "256kb") == b"+OK\r\n"
        assert rb_of_new_client(ferry.port) == 2 * small
        assert admin.command("CONFIG", "SET", "tcp-rcvbuf", "0") == b"+OK\r\n"
        assert rb_of_new_client(ferry.port) != 2 * small  # the kernel's, whatever it is


def test_above_rmem_max_is_not_set_and_logged_once(ferry):
    over = rmem_max() + 4096
    if over > 2**31 // 2:
        pytest.skip("net.core.rmem_max too large to exceed through the directive's range")
    with RawClient(ferry.port) as admin:
        assert admin.command("CONFIG", "SET", "tcp-rcvbuf", str(over)) == b"+OK\r\n"
        rbs = [rb_of_new_client(ferry.port) for _ in range(3)]
        assert all(rb < 2 * over for rb in rbs), rbs
        assert all(rb != 2 * rmem_max() for rb in rbs), "capped to rmem_max instead of left to autotuning"
        time.sleep(0.1)
        log = ferry.log_tail(500)
        assert log.count("WARNING: tcp-rcvbuf %d is above /proc/sys/net/core/rmem_max" % over) == 1, log


def test_out_of_range_is_refused(ferry):
    """Refused with the texts redis-server gives for its own memory
    directives (client-query-buffer-limit -1 reads the same there)."""
    prefix = b"-ERR CONFIG SET failed (possibly related to argument 'tcp-rcvbuf') - "
    with RawClient(ferry.port) as admin:
        assert admin.command("CONFIG", "SET", "tcp-rcvbuf", "-1") == prefix + b"argument must be a memory value\r\n"
        assert admin.command("CONFIG", "SET", "tcp-rcvbuf", "4gb") == \
            prefix + b"argument must be between 0 and 1073741823 inclusive\r\n"
        assert admin.command("CONFIG", "GET", "tcp-rcvbuf") == b"*2\r\n$10\r\ntcp-rcvbuf\r\n$7\r\n4194304\r\n"
