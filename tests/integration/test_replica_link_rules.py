"""What a primary accepts on a replica's link, and the software watchdog,
on ferry and redis-server 7.0.15 with the same expectations (Redis's
replication.tcl checks the same):

  1. a replica's link carries the stream only: a command that makes a reply
     ("PING" after SYNC) gets the link closed, with "Replica generated a
     reply to command 'ping', disconnecting it" in the log;
  2. a replica may not touch the keyspace: GET after PSYNC is refused
     ("== CRITICAL == ... sending an error to its replica", "Replica can't
     interact with the keyspace") and the link closed;
  3. PSYNC with an offset that is not a number is an error, not a sync;
  4. watchdog-period: a loop stuck longer than the period logs
     "--- WATCHDOG TIMER EXPIRED ---", and the server goes on.
"""
from __future__ import annotations

import socket
import time

import pytest

import replkit as rk
from polling import poll

nodes = rk.nodes


def closed_by_server(s: socket.socket, timeout: float = 10.0) -> bool:
    """Reads (and drops) what comes until EOF; True if the server closed."""
    s.settimeout(timeout)
    deadline = time.monotonic() + timeout
    try:
        while time.monotonic() < deadline:
            if not s.recv(65536):
                return True
    except (ConnectionResetError, socket.timeout):
        return False
    return False


@pytest.mark.parametrize("kind", ["ferry", "redis"])
def test_a_reply_on_a_replica_link_closes_it(nodes, kind):
    p = nodes(kind)
    s = rk.raw_sync_socket(p, b"SYNC\r\n", rcvbuf=1 << 20)
    poll(lambda: len(rk.replica_clients(p)) == 1, 10, "the replica to be attached")
    s.sendall(b"PING\r\n")
    assert closed_by_server(s)
    poll(lambda: rk.log_matches(p, r"Replica generated a reply to command 'ping', disconnecting it: "), 10,
         "the log line", diag=lambda: p.log_tail(10))
    assert p.call("PING") == "PONG"


@pytest.mark.parametrize("kind", ["ferry", "redis"])
def test_a_replica_may_not_touch_the_keyspace(nodes, kind):
    p = nodes(kind)
    assert p.call("SET", "foo", "bar") == "OK"
    s = rk.raw_sync_socket(p, b"PSYNC replicationid -1\r\n", rcvbuf=1 << 20)
    s.settimeout(10)
    line = b""
    while not line.endswith(b"\r\n"):
        line += s.recv(1)
    assert line.startswith(b"+FULLRESYNC "), line
    s.sendall(b"GET foo\r\n")
    assert closed_by_server(s)
    for pattern in (r"== CRITICAL == This master is sending an error to its replica: ",
                    r"Replica can't interact with the keyspace",
                    r"Replica generated a reply to command 'get', disconnecting it: "):
        poll(lambda: rk.log_matches(p, pattern), 10, pattern, diag=lambda: p.log_tail(10))
    assert p.call("GET", "foo") == "bar"


@pytest.mark.parametrize("kind", ["ferry", "redis"])
def test_psync_with_an_offset_that_is_not_a_number(nodes, kind):
    p = nodes(kind)
    with p.client() as c:
        assert c.command("PSYNC", "replicationid", "offset_str") == b"-ERR value is not an integer or out of range\r\n"
        assert c.command("PING") == b"+PONG\r\n"
    assert rk.log_matches(p, r"Replica .* asks for synchronization but with a wrong offset")
    assert rk.replica_clients(p) == []


@pytest.mark.parametrize("kind", ["ferry", "redis"])
def test_the_watchdog_reports_a_stuck_loop(nodes, kind):
    p = nodes(kind)
    assert p.call("CONFIG", "SET", "watchdog-period", "200") == "OK"  # armed at once
    assert p.call("DEBUG", "SLEEP", "1") == "OK"
    poll(lambda: rk.log_matches(p, r"--- WATCHDOG TIMER EXPIRED ---"), 5, "the watchdog line",
         diag=lambda: p.log_tail(10))
    assert p.call("CONFIG", "SET", "watchdog-period", "0") == "OK"
    assert p.call("PING") == "PONG"
