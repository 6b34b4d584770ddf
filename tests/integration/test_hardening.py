"""Hardening features (issue #5), each checked against redis-server 7.0.15
where the behaviour is observable the same way on both:

  - request limits before AUTH ("unauthenticated multibulk/bulk length");
  - protected mode (DENIED for non-loopback peers without a password);
  - protected configs (CONFIG SET dir/dbfilename) and their `local` mode;
  - the idle `timeout` (blocked and subscribed clients are spared: skipped
    until BLPOP / SUBSCRIBE exist on the tested server);
  - client-output-buffer-limit for normal clients (hard, soft, and a single
    huge reply), with Redis's log line;
  - ranges of every numeric configuration (CONFIG SET of extreme values).
The adversarial suite (test_adversarial.py) covers abuse of these limits.
"""
from __future__ import annotations

import re
import socket
import subprocess
import time

import pytest

from conftest import start_server
from diffkit import format_report, hello, raw, raw_eof, run_steps
from resp_client import RawClient, ServerClosed, encode_command, parse, to_python
from test_diff_conn_server import AuthServer, auth_pair  # noqa: F401  (module fixture)


def _diff(f, r, steps, name, flush=True):
    mismatches, transcript = run_steps(f.port, r.port, steps, flush=flush)
    assert f.alive(), "ferry died during %r; log tail:\n%s" % (name, f.log_tail())
    if mismatches:
        pytest.fail(format_report(name, mismatches, transcript), pytrace=False)


def _mbulk(n, arglen=1, name=b"DEL"):
    args = [name] + [b"k" * arglen] * (n - 1)
    return encode_command(args)


def _has_command(server, name):
    with RawClient(server.port) as c:
        r = to_python(parse(c.command("COMMAND", "INFO", name)))
    return bool(r) and r[0] is not None


def _wait_closed(c, timeout):
    """True if the server closes c within timeout (reads and drops data)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            c.read_until_eof(timeout=max(0.05, deadline - time.monotonic()))
            return True
        except TimeoutError:
            return False
    return False


# ------------------------------------------------------------ before AUTH
PW = AuthServer.PASSWORD
UNAUTH_CASES = {
    "mbulk_11_header_only": [raw_eof(b"*11\r\n")],
    "mbulk_11_whole": [raw_eof(_mbulk(11))],
    "mbulk_10_is_noauth": [raw(_mbulk(10)), ("PING",)],
    "bulk_16385_header_only": [raw_eof(b"*1\r\n$16385\r\n")],
    "bulk_16384_is_noauth": [raw(encode_command([b"SET", b"k", b"v" * 16384])), ("PING",)],
    "bulk_16385_whole": [raw_eof(encode_command([b"SET", b"k", b"v" * 16385]))],
    "invalid_count_first": [raw_eof(b"*3000000000\r\n")],
    "invalid_bulk_first": [raw_eof(b"*1\r\n$-10\r\n")],
    "after_empty_arrays": [raw_eof(b"*0\r\n*-5\r\n*11\r\n")],
    "inline_has_no_limit": [raw(b"a b c d e f g h i j k l m\r\n"), ("PING",)],
    "after_auth_in_pipeline": [raw(encode_command(["AUTH", PW]) + _mbulk(11), n=2), ("PING",)],
    "after_hello_auth": [hello("2", "AUTH", "default", PW), raw(encode_command([b"ECHO", b"x" * 20000]))],
    "after_auth_user_pass": [raw(encode_command(["AUTH", "default", PW]) + encode_command([b"ECHO", b"x" * 20000]),
                                 n=2)],
    "wrong_password_keeps_limit": [raw(encode_command(["AUTH", "nope"])), raw_eof(_mbulk(11))],
    "reset_restores_limit": [("AUTH", PW), raw(_mbulk(12)), ("RESET",),
                             raw_eof(_mbulk(11))],
}


@pytest.mark.parametrize("name", sorted(UNAUTH_CASES))
def test_unauthenticated_limits(auth_pair, name):
    f, r = auth_pair
    _diff(f, r, UNAUTH_CASES[name], name, flush=False)


def test_unauthenticated_output_is_capped(auth_pair):
    """A non-reading client that is not authenticated is closed once its
    unread output passes 16 KB (Redis 7.0.15: CVE-2025-21605), on both."""
    for srv in auth_pair:
        c = SmallWindowClient(srv.port, rcvbuf=4096)
        flood = b"PING\r\n" * 50000   # 50000 NOAUTH replies = 1.7 MB
        try:
            c.send(flood * 4)
        except OSError:
            pass                      # closed while we were still writing
        time.sleep(0.5)
        assert _wait_closed(c, 10), "%s kept a non-reading unauthenticated client" % srv.kind
        c.close()
        with RawClient(srv.port) as other:   # still serving
            assert other.pipeline([["AUTH", PW], ["PING"]]) == [b"+OK\r\n", b"+PONG\r\n"]


# ------------------------------------------------------------ protected mode
def _non_loopback_ipv4():
    try:
        out = subprocess.run(["ip", "-o", "-4", "addr", "show"], capture_output=True, text=True,
                             timeout=5).stdout
    except (OSError, subprocess.SubprocessError):
        return None
    for m in re.finditer(r"inet (\d+\.\d+\.\d+\.\d+)/", out):
        if not m.group(1).startswith("127."):
            return m.group(1)
    return None


ADDR = _non_loopback_ipv4()
needs_addr = pytest.mark.skipif(ADDR is None, reason="no non-loopback IPv4 address on this machine "
                                "(tests/unit/test_protmode.c covers the decision)")


def _from_addr(srv):
    """Everything srv sends to a connection from ADDR that sends nothing,
    until it closes or 1 s passes."""
    s = socket.create_connection((ADDR, srv.port), timeout=3)
    s.settimeout(1.0)
    data = b""
    try:
        while True:
            chunk = s.recv(65536)
            if not chunk:
                return data + b"<closed>"
            data += chunk
    except socket.timeout:
        return data + b"<open>"
    except ConnectionResetError:
        return data + b"<closed>"
    finally:
        s.close()


def _info_field(srv, field):
    with RawClient(srv.port) as c:
        info = c.command("INFO", "stats").decode()
    return int(re.search(r"%s:(\d+)" % field, info).group(1))


@needs_addr
@pytest.mark.parametrize("bind", ["*", "%s 127.0.0.1"])
def test_protected_mode_denies_non_loopback(server_factory, bind):
    bind = bind % ADDR if "%s" in bind else bind
    f = server_factory("ferry", "--bind", bind)
    r = server_factory("redis", "--bind", bind)
    got = {s.kind: _from_addr(s) for s in (f, r)}
    assert got["ferry"] == got["redis"]
    assert got["ferry"].startswith(b"-DENIED Redis is running in protected mode") and got["ferry"].endswith(
        b"outside.\r\n<closed>")
    for s in (f, r):  # rejected, not received
        assert _info_field(s, "rejected_connections") == 1
    # loopback peers are served
    with RawClient(f.port) as c:
        assert c.command("PING") == b"+PONG\r\n"


def start_server_auth(kind, *extra):
    s = AuthServer(kind)
    s.extra_args += [str(a) for a in extra]
    return s.start()


@needs_addr
def test_protected_mode_lifted_by_password(server_factory):
    for kind in ("ferry", "redis"):
        s = start_server_auth(kind, "--bind", "%s 127.0.0.1" % ADDR)
        try:
            assert _from_addr(s) == b"<open>", kind
        finally:
            s.cleanup()


@needs_addr
def test_protected_mode_no(server_factory):
    for kind in ("ferry", "redis"):
        s = server_factory(kind, "--bind", "%s 127.0.0.1" % ADDR, "--protected-mode", "no")
        assert _from_addr(s) == b"<open>", kind


@needs_addr
def test_protected_mode_config_set_at_runtime(server_factory):
    f = server_factory("ferry", "--bind", "%s 127.0.0.1" % ADDR)
    assert _from_addr(f).startswith(b"-DENIED")
    with RawClient(f.port) as c:
        assert c.command("CONFIG", "SET", "protected-mode", "no") == b"+OK\r\n"
    assert _from_addr(f) == b"<open>"


# ------------------------------------------------------------ protected configs
@pytest.mark.parametrize("mode", [None, "yes", "local", "no"])
def test_protected_configs(server_factory, tmp_path, mode):
    extra = () if mode is None else ("--enable-protected-configs", mode)
    f = server_factory("ferry", *extra)
    r = server_factory("redis", *extra)
    d = str(tmp_path)
    steps = [
        ("CONFIG", "SET", "dbfilename", "x.rdb"),
        ("CONFIG", "SET", "DIR", d),
        ("CONFIG", "SET", "maxclients", "100", "dir", d),
        ("CONFIG", "SET", "dir", d, "nosuchconfig", "1"),
        ("CONFIG", "SET", "enable-protected-configs", "yes"),
        ("CONFIG", "SET", "DAEMONIZE", "yes"),
        ("CONFIG", "GET", "dbfilename"),
        ("CONFIG", "SET", "maxclients", "10000"),
    ]
    _diff(f, r, steps, "protected_configs_%s" % mode)


@needs_addr
def test_protected_configs_local_refuses_remote(server_factory, tmp_path):
    args = ("--enable-protected-configs", "local", "--protected-mode", "no", "--bind", "%s 127.0.0.1" % ADDR)
    for kind in ("ferry", "redis"):
        s = server_factory(kind, *args)
        with RawClient(s.port, host=ADDR) as c:
            assert c.command("CONFIG", "SET", "dir", str(tmp_path)) == (
                b"-ERR CONFIG SET failed (possibly related to argument 'dir') - can't set protected config\r\n"), kind
        with RawClient(s.port) as c:
            assert c.command("CONFIG", "SET", "dir", str(tmp_path)) == b"+OK\r\n", kind


# ------------------------------------------------------------ idle timeout
def test_idle_timeout(server_factory):
    for kind in ("ferry", "redis"):
        s = server_factory(kind, "--timeout", "1")
        idle = RawClient(s.port, timeout=6)
        busy = RawClient(s.port, timeout=6)
        assert idle.command("PING") == b"+PONG\r\n"
        t0 = time.monotonic()
        closed_at = None
        while time.monotonic() - t0 < 4.0:
            assert busy.command("PING") == b"+PONG\r\n", kind   # interaction keeps it alive
            if closed_at is None:
                try:
                    idle.assert_no_pending(wait=0.3)
                except AssertionError:
                    closed_at = time.monotonic() - t0
            else:
                time.sleep(0.3)
        assert closed_at is not None, "%s did not close the idle client" % kind
        assert 0.9 <= closed_at <= 3.5, (kind, closed_at)
        idle.close()
        busy.close()


@pytest.mark.parametrize("what", ["blocked", "subscribed"])
def test_idle_timeout_spares_blocked_and_subscribed(server_factory, what):
    s = server_factory("ferry", "--timeout", "1")
    name, args = ("blpop", ["BLPOP", "nolist", "0"]) if what == "blocked" else ("subscribe", ["SUBSCRIBE", "ch"])
    if not _has_command(s, name):
        pytest.skip("%s does not exist on this branch yet (the lead runs this after the merge)" % name.upper())
    c = RawClient(s.port, timeout=6)
    c.send_command(*args)
    if what == "subscribed":
        c.read_reply()
    time.sleep(2.6)
    c.assert_no_pending(wait=0.2)   # raises if the server closed it
    c.close()


# ------------------------------------------------------------ output buffer limits
def _rss_kb(server):
    with open("/proc/%d/status" % server.proc.pid) as fh:
        return int(re.search(r"VmRSS:\s+(\d+)", fh.read()).group(1))


class SmallWindowClient(RawClient):
    """A RawClient whose receive buffer is set small before connecting, so
    the kernel cannot absorb megabytes of replies a test leaves unread (the
    server's own output buffer must hold them)."""

    def __init__(self, port, rcvbuf=65536, timeout=10.0):
        self.port, self.host, self.timeout = port, "127.0.0.1", timeout
        self.buf, self.eof = bytearray(), False
        self.sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        self.sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, rcvbuf)
        self.sock.settimeout(timeout)
        self.sock.connect(("127.0.0.1", port))
        self.sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)


def _non_reading(port):
    return SmallWindowClient(port)


def test_cob_hard_limit_closes_and_logs(ferry_factory):
    # 64 unread replies of 256 KB: far past the limit
    f = ferry_factory("--client-output-buffer-limit", "normal 512kb 0 0")
    with RawClient(f.port) as c:
        assert c.command("SET", "big", "x" * 262144) == b"+OK\r\n"
    c = _non_reading(f.port)
    c.send(encode_command(["GET", "big"]) * 64)
    time.sleep(0.5)
    assert _wait_closed(c, 5), "hard limit did not close the client"
    c.close()
    time.sleep(0.1)
    log = open(f.logpath, "rb").read().decode("utf-8", "replace")
    assert re.search(r"# Client id=\d+ addr=127\.0\.0\.1:\d+ .* scheduled to be closed ASAP for overcoming of "
                     r"output buffer limits\.", log), log[-2000:]
    with RawClient(f.port) as other:
        assert other.command("PING") == b"+PONG\r\n"


def test_cob_no_limit_by_default(ferry):
    """normal 0 0 0: the same pipeline is served in full, never closed."""
    with SmallWindowClient(ferry.port, timeout=20) as c:
        assert c.command("SET", "big", "x" * 262144) == b"+OK\r\n"
        c.send(encode_command(["GET", "big"]) * 64)
        time.sleep(1.0)
        assert all(len(x) == 262144 + 11 for x in c.read_replies(64))  # $262144 CRLF ... CRLF
        assert c.command("PING") == b"+PONG\r\n"


@pytest.mark.parametrize("seconds,closed", [(1, True), (10, False)])
def test_cob_soft_limit_after_seconds(ferry_factory, seconds, closed):
    """Over the soft limit continuously: closed once soft_seconds have passed
    (checked from the cron too, so a client that sends nothing more is
    closed), not before. The client reads nothing until 2 s have passed
    (reading would drain it below the limit)."""
    f = ferry_factory("--client-output-buffer-limit", "normal 0 256kb %d" % seconds)
    with RawClient(f.port) as c:
        assert c.command("SET", "big", "x" * 262144) == b"+OK\r\n"
    c = SmallWindowClient(f.port, timeout=20)
    c.send(encode_command(["GET", "big"]) * 64)
    time.sleep(2.0)
    if closed:
        assert _wait_closed(c, 5), "soft limit did not close the client after its seconds"
    else:
        assert len(c.read_replies(64)) == 64
        assert c.command("PING") == b"+PONG\r\n"
    c.close()


def test_cob_soft_limit_resets_when_drained(ferry_factory):
    f = ferry_factory("--client-output-buffer-limit", "normal 0 256kb 1")
    with RawClient(f.port, timeout=10) as c:
        assert c.command("SET", "big", "x" * 262144) == b"+OK\r\n"
        for _ in range(6):   # over the soft limit only briefly each time
            c.send(encode_command(["GET", "big"]) * 4)
            assert len(c.read_replies(4)) == 4
            time.sleep(0.5)
        assert c.command("PING") == b"+PONG\r\n"


def test_cob_hard_limit_bounds_one_huge_reply(ferry_factory):
    """One command asking for 512 MB (MGET of a 1 MB value 512 times) is cut
    off by the hard limit while it is staged: RSS stays far below 512 MB."""
    f = ferry_factory("--client-output-buffer-limit", "normal 8mb 0 0")
    with RawClient(f.port) as c:
        assert c.command("SET", "v", "x" * (1 << 20)) == b"+OK\r\n"
    base = _rss_kb(f)
    c = _non_reading(f.port)
    c.send(encode_command(["MGET"] + ["v"] * 512))
    assert _wait_closed(c, 10)
    c.close()
    assert _rss_kb(f) - base < 64 * 1024, "RSS grew by %d kB" % (_rss_kb(f) - base)
    with RawClient(f.port) as other:
        assert other.command("STRLEN", "v") == b":1048576\r\n"


def test_cob_config_values_diff(server_factory):
    f = server_factory("ferry")
    r = server_factory("redis")
    steps = []
    for v in ["normal 1 1 2147483647", "normal 1 1 2147483648", "normal 1 1 4294967295", "normal 1 1 -1",
              "normal 1x 1 1", "normal -0 1 1", "normal 1k 1kb 1", "normal 10gb 1mb 5", "normal 0 0 0",
              "pubsub 1 2 3 normal 4 5", "nosuch 1 1 1", "replica 1 2 3", "slave 268435456 67108864 60",
              "normal 0 0 0 pubsub 33554432 8388608 60"]:
        steps.append(("CONFIG", "SET", "client-output-buffer-limit", v))
        steps.append(("CONFIG", "GET", "client-output-buffer-limit"))
    _diff(f, r, steps, "cob_config_values")


# ------------------------------------------------------------ numeric config ranges
EXTREMES = ["-9223372036854775809", "-9223372036854775808", "-2147483649", "-2147483648", "-1", "0",
            "2147483647", "2147483648", "4294967295", "4294967296", "9223372036854775807",
            "9223372036854775808", "18446744073709551615", "1e3", "0x10", " 1", "+1", "1gb", "-1gb", "1.5"]
# Not listed: memory values of 2^64 and more, which Redis saturates
# (strtoull) and ferry refuses as not a memory value (a deliberate
# difference, see parse_mem in config.c).


def _numeric_configs():
    src = open(__file__.replace("tests/integration/test_hardening.py", "src/server/config_table.c")).read()
    return sorted(set(re.findall(r'^\s+[IM]\("([a-z0-9-]+)"', src, re.M)))


def test_numeric_config_ranges_match_redis(server_factory):
    f = server_factory("ferry")
    r = server_factory("redis")
    # port would move the servers; maxclients beyond the fd limit makes Redis
    # search for a usable limit in steps of 16 (minutes for 2^31); a
    # watchdog-period would arm Redis's SIGALRM watchdog
    names = [n for n in _numeric_configs() if n not in ("port", "metrics-port", "maxclients", "watchdog-period")]
    steps = []
    for n in names:
        with RawClient(r.port) as c:
            orig = to_python(parse(c.command("CONFIG", "GET", n)))
        if not orig:
            continue
        for v in EXTREMES:
            steps.append(("CONFIG", "SET", n, v))
            steps.append(("CONFIG", "GET", n))
        steps.append(("CONFIG", "SET", n, orig[1]))
    # maxclients: 4294967295 is accepted by Redis through an int overflow
    # (a bug) and refused by ferry; 100000 exceeds the fd limit on both
    for v in ["0", "-1", "1", "4294967296", "10001", "100000"]:
        steps.append(("CONFIG", "SET", "maxclients", v))
        steps.append(("CONFIG", "GET", "maxclients"))
    steps.append(("CONFIG", "SET", "maxclients", "10000"))
    _diff(f, r, steps, "numeric_config_ranges", flush=False)
