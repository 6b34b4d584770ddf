"""Slow subscribers and the pubsub class of client-output-buffer-limit
(src/io/outlimit.c, called by src/commands/pubsub.c after staging each message).

A subscriber that never reads, with a tiny receive buffer, while a publisher
sends large messages: the subscriber must be disconnected at the hard limit,
the server's peak RSS must stay far below what the messages would have
taken, the publisher must be served throughout, and the server must log
Redis's line. The soft limit closes a subscriber only after it has stayed
over it for soft_seconds. Every scenario also runs against redis-server, so
the expectations are Redis's behaviour, not ours.
"""
from __future__ import annotations

import re
import socket
import time

import pytest

from resp_client import RawClient, encode_command, parse, reply_end

KINDS = ["ferry", "redis"]
MSG = b"x" * 100_000
LOG_RE = re.compile(r"Client id=\d+ addr=\S+ .*flags=P .*sub=1 .* for overcoming of output buffer limits\.")


def vm_kb(pid, field):
    with open("/proc/%d/status" % pid) as f:
        for line in f:
            if line.startswith(field + ":"):
                return int(line.split()[1])
    raise AssertionError("no %s in /proc/%d/status" % (field, pid))


def read_one(sock):
    buf = b""
    while True:
        end = reply_end(buf) if buf else -1
        if end > 0:
            return buf[:end]
        chunk = sock.recv(65536)
        if not chunk:
            raise AssertionError("closed while reading a reply")
        buf += chunk


def lazy_subscriber(port, channel, proto=2):
    """A subscriber with a 4 KB receive buffer that reads nothing after its
    confirmation."""
    s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
    s.settimeout(5)
    s.connect(("127.0.0.1", port))
    if proto == 3:
        s.sendall(encode_command(["HELLO", "3"]))
        assert read_one(s).startswith(b"%7")
    s.sendall(encode_command(["SUBSCRIBE", channel]))
    assert b"subscribe" in read_one(s)
    return s


def drain_until_eof(sock, timeout=10.0):
    """Read everything the server sent; True if it then closed the socket."""
    sock.settimeout(0.5)
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            if not sock.recv(1 << 20):
                return True
        except socket.timeout:
            continue
        except ConnectionResetError:
            return True
    return False


def log_text(server):
    with open(server.logpath, "rb") as f:
        return f.read().decode("utf-8", "replace")


def wait_numsub(c, channel, want, timeout=5.0):
    deadline = time.monotonic() + timeout
    while True:
        got = parse(c.command("PUBSUB", "NUMSUB", channel))[1][1][1]
        if got == want or time.monotonic() > deadline:
            return got
        time.sleep(0.02)


@pytest.mark.parametrize("proto", [2, 3])
@pytest.mark.parametrize("kind", KINDS)
def test_slow_subscriber_hits_hard_limit(server_factory, kind, proto):
    srv = server_factory(kind)
    with RawClient(srv.port) as adm, RawClient(srv.port, timeout=10) as pub:
        assert adm.command("CONFIG", "SET", "client-output-buffer-limit", "pubsub 1mb 512kb 60") == b"+OK\r\n"
        sub = lazy_subscriber(srv.port, "big", proto)
        peak_before = vm_kb(srv.proc.pid, "VmHWM")
        replies = []
        t0 = time.monotonic()
        for _ in range(600):                     # 60 MB published in all
            replies.append(pub.command("PUBLISH", "big", MSG))
        elapsed = time.monotonic() - t0
        peak_growth_mb = (vm_kb(srv.proc.pid, "VmHWM") - peak_before) / 1024

        assert set(replies) <= {b":1\r\n", b":0\r\n"}, set(replies)
        assert b":0\r\n" in replies, "the subscriber was never disconnected"
        first_zero = replies.index(b":0\r\n")
        assert all(r == b":0\r\n" for r in replies[first_zero:])
        # the kernel's socket buffers take a few MB before the server stages anything
        assert 11 <= first_zero < 250, first_zero
        # unbounded, the ring would have grown to ~55 MB
        assert peak_growth_mb < 20, "peak RSS grew by %.1f MB" % peak_growth_mb
        assert elapsed < 30, elapsed
        assert pub.command("PING") == b"+PONG\r\n"
        assert pub.command("PUBSUB", "NUMSUB", "big") == b"*2\r\n$3\r\nbig\r\n:0\r\n"
        assert drain_until_eof(sub), "the server did not close the subscriber"
        sub.close()
        assert LOG_RE.search(log_text(srv)), log_text(srv)[-2000:]
        assert "scheduled to be closed ASAP" in log_text(srv)


@pytest.mark.parametrize("kind", KINDS)
def test_slow_subscriber_soft_limit_needs_time(server_factory, kind):
    srv = server_factory(kind)
    with RawClient(srv.port) as adm, RawClient(srv.port, timeout=10) as pub:
        assert adm.command("CONFIG", "SET", "client-output-buffer-limit", "pubsub 0 256kb 1") == b"+OK\r\n"
        sub = lazy_subscriber(srv.port, "soft")
        # publish until the server holds more than the soft limit for it
        for _ in range(300):
            assert pub.command("PUBLISH", "soft", MSG) == b":1\r\n"
            lst = parse(adm.command("CLIENT", "LIST", "TYPE", "pubsub"))[1].decode()
            if int(re.search(r" omem=(\d+)", lst).group(1)) > 300 * 1024:
                break
        else:
            pytest.fail("the subscriber's output never passed the soft limit")
        # over the soft limit, but not for long enough: still subscribed
        assert pub.command("PUBLISH", "soft", MSG) == b":1\r\n"
        assert wait_numsub(adm, "soft", 1, timeout=0) == 1
        time.sleep(2.2)                          # > soft_seconds, in Redis's whole-second clock too
        assert pub.command("PUBLISH", "soft", b"one more") in (b":1\r\n", b":0\r\n")
        assert wait_numsub(adm, "soft", 0) == 0
        assert drain_until_eof(sub)
        sub.close()
        assert LOG_RE.search(log_text(srv)), log_text(srv)[-2000:]


@pytest.mark.parametrize("kind", KINDS)
def test_fast_subscriber_is_not_limited(server_factory, kind):
    """A subscriber that keeps reading receives everything, even far more
    than the limits in total."""
    srv = server_factory(kind)
    with RawClient(srv.port) as adm, RawClient(srv.port, timeout=10) as pub, \
            RawClient(srv.port, timeout=10) as sub:
        assert adm.command("CONFIG", "SET", "client-output-buffer-limit", "pubsub 1mb 512kb 60") == b"+OK\r\n"
        sub.send(encode_command(["SUBSCRIBE", "f"]))
        sub.read_reply()
        want = b"*3\r\n$7\r\nmessage\r\n$1\r\nf\r\n$100000\r\n" + MSG + b"\r\n"
        for i in range(100):                      # 10 MB in all, read as it comes
            assert pub.command("PUBLISH", "f", MSG) == b":1\r\n", i
            assert sub.read_reply() == want, i
        assert pub.command("PUBSUB", "NUMSUB", "f") == b"*2\r\n$1\r\nf\r\n:1\r\n"
