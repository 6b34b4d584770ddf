"""Adversarial suite (issue #5): hostile or broken clients against ferry.

Every case checks that the server stays up and that another client is still
served; where memory is the attack, that the server's RSS stays bounded
(measured from /proc/<pid>/status, as a growth over a baseline so that
sanitizer builds pass too). Where Redis's behaviour is observable the same
way, the bytes are compared with redis-server 7.0.15 (diffkit).

Cases: framing errors; 300 stalled connections declaring huge arrays and
bulks; a >64 KB inline request without CRLF; a non-reading client asking for
gigabytes (evicted by maxmemory-clients); byte-at-a-time (slowloris) clients; numeric extremes in every
count/offset/TTL/increment argument of the string and keys commands; glob
bombs in KEYS and SCAN MATCH; maxclients; idle timeout of a half-sent
request; HTTP POST; a NOAUTH flood; EMFILE; hash flooding.
"""
from __future__ import annotations

import os
import re
import resource
import socket
import subprocess
import threading
import time

import pytest

from conftest import start_server
from diffkit import approx, format_report, raw, raw_eof, run_steps, sorted_
from resp_client import RawClient, encode_command, parse, to_python
from test_diff_conn_server import AuthServer

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
MB = 1024 * 1024


# ------------------------------------------------------------------ helpers
def rss_kb(server) -> int:
    with open("/proc/%d/status" % server.proc.pid) as fh:
        return int(re.search(r"VmRSS:\s+(\d+)", fh.read()).group(1))


def cpu_seconds(server) -> float:
    with open("/proc/%d/stat" % server.proc.pid) as fh:
        fields = fh.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def still_serving(server, password=None):
    with RawClient(server.port, timeout=5) as c:
        if password:
            assert c.command("AUTH", password) == b"+OK\r\n"
        assert c.command("PING") == b"+PONG\r\n", "%s stopped serving" % server.kind
    assert server.alive(), "%s died; log tail:\n%s" % (server.kind, server.log_tail())


def diff(pair, steps, name):
    f, r = pair
    mismatches, transcript = run_steps(f.port, r.port, steps)
    assert f.alive(), "ferry died during %r; log tail:\n%s" % (name, f.log_tail())
    if mismatches:
        pytest.fail(format_report(name, mismatches, transcript), pytrace=False)
    still_serving(f)


class SmallWindowClient(RawClient):
    """Receive buffer set small before connecting, so unread replies stay in
    the server instead of the kernel."""

    def __init__(self, port, rcvbuf=65536, timeout=10.0):
        self.port, self.host, self.timeout = port, "127.0.0.1", timeout
        self.buf, self.eof = bytearray(), False
        self.sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        self.sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, rcvbuf)
        self.sock.settimeout(timeout)
        self.sock.connect(("127.0.0.1", port))


# ------------------------------------------------------------------ framing errors
FRAMING = {
    "count_over_int_max": b"*3000000000\r\n",
    "negative_bulk": b"*1\r\n$-10\r\n",
    "bulk_not_a_number": b"*1\r\n$blabla\r\n",
    "argument_not_a_bulk": b"*2\r\n$3\r\nGET\r\n:1\r\n",
    "argument_plain_text": b"*1\r\nPING\r\n",
    "bulk_over_proto_max": b"*2\r\n$3\r\nGET\r\n$536870913\r\n",
    "count_with_plus": b"*+1\r\n$4\r\nPING\r\n",
    "count_leading_zero": b"*01\r\n$4\r\nPING\r\n",
    "bulk_with_space": b"*1\r\n$ 4\r\nPING\r\n",
    "unbalanced_quotes": b'SET "a b\r\n',
    "after_good_commands": b"*1\r\n$4\r\nPING\r\n*1\r\n$4\r\nPING\r\n*1\r\n$x\r\n",
}


@pytest.mark.parametrize("name", sorted(FRAMING))
def test_framing_errors_close_like_redis(pair, name):
    diff(pair, [raw_eof(FRAMING[name])], name)


def test_inline_without_crlf_over_64k(pair):
    diff(pair, [raw_eof(b"a" * (70 * 1024))], "inline_too_big")


def test_mbulk_header_without_crlf_over_64k(pair):
    diff(pair, [raw_eof(b"*" + b"1" * (70 * 1024))], "mbulk_count_too_big")


def test_http_post_is_dropped(pair):
    diff(pair, [raw_eof(b"POST / HTTP/1.1\r\nHost: example.com\r\nContent-Length: 0\r\n\r\n")], "http_post")
    diff(pair, [raw_eof(b"GET / HTTP/1.1\r\nHost: example.com\r\n\r\n")], "http_get_host")


# ------------------------------------------------------------------ memory attacks
def test_stalled_huge_declarations_cost_bytes_received(ferry):
    """300 connections each declare a 2^31-1 element array and a 512 MB bulk,
    send 1 KB of it and stall: memory follows the bytes received."""
    base = rss_kb(ferry)
    socks = []
    try:
        for i in range(300):
            s = socket.create_connection(("127.0.0.1", ferry.port), timeout=5)
            if i % 2:
                s.sendall(b"*2147483647\r\n$536870912\r\n" + b"x" * 1024)
            else:
                s.sendall(b"*2\r\n$3\r\nSET\r\n$536870912\r\n" + b"x" * 1024)
            socks.append(s)
        time.sleep(0.5)
        still_serving(ferry)
        grown = rss_kb(ferry) - base
        assert grown < 64 * 1024, "RSS grew by %d kB for 300 x 1 KB received" % grown
        with RawClient(ferry.port) as c:
            info = c.command("INFO", "clients").decode()
        assert int(re.search(r"connected_clients:(\d+)", info).group(1)) >= 301
    finally:
        for s in socks:
            s.close()
    still_serving(ferry)


@pytest.mark.parametrize("kind", ["ferry", "redis"])
def test_non_reading_client_asking_for_gigabytes(server_factory, kind):
    """A pipeline of 2048 GETs of a 1 MB value (2 GB of replies), never read,
    under maxmemory-clients 32mb: the server keeps reading the client (Redis
    never stops reading one), evicts it once the clients' memory passes the
    limit, RSS stays bounded, and others are served meanwhile. Without a
    limit Redis would buffer the 2 GB, and so would ferry."""
    s = server_factory(kind, "--maxmemory-clients", "32mb")
    with RawClient(s.port) as c:
        assert c.command("CLIENT", "NO-EVICT", "on") == b"+OK\r\n"
        assert c.command("SET", "v", "x" * MB) == b"+OK\r\n"
        base = rss_kb(s)
        hog = SmallWindowClient(s.port)
        try:
            req = encode_command(["GET", "v"]) * 2048
            hog.sock.settimeout(10.0)
            try:
                hog.sock.sendall(req)
            except OSError:
                pass  # reset once evicted
            deadline = time.monotonic() + 10
            while time.monotonic() < deadline:
                info = c.command("INFO", "stats").decode()
                if "evicted_clients:1\r\n" in info:
                    break
                time.sleep(0.05)
            assert "evicted_clients:1\r\n" in info, info
            t0 = time.monotonic()
            still_serving(s)
            assert time.monotonic() - t0 < 1.0
            grown = rss_kb(s) - base
            assert grown < 128 * 1024, "RSS grew by %d kB" % grown
        finally:
            hog.close()
    still_serving(s)


def test_noauth_flood_from_non_reading_clients(server_factory):
    """10 unauthenticated clients flood PINGs (NOAUTH replies) and never
    read: each is closed once 16 KB is unread; RSS stays bounded."""
    f = AuthServer("ferry").start()
    try:
        base = rss_kb(f)
        hogs = [SmallWindowClient(f.port, rcvbuf=4096) for _ in range(10)]
        flood = b"PING\r\n" * 100000
        for h in hogs:
            h.sock.settimeout(2.0)
            try:
                h.sock.sendall(flood)
            except (socket.timeout, OSError):
                pass
        time.sleep(0.5)
        assert rss_kb(f) - base < 64 * 1024
        for h in hogs:
            h.read_until_eof(timeout=10)   # raises TimeoutError if left open
            h.close()
        still_serving(f, password=AuthServer.PASSWORD)
    finally:
        f.cleanup()


# ------------------------------------------------------------------ slowloris
def test_slowloris_clients_do_not_delay_others(ferry):
    """20 clients send their commands one byte every 20 ms; a normal client's
    1000 pipelined commands complete at once, and every slow command
    completes too."""
    slow = [RawClient(ferry.port, timeout=30) for _ in range(20)]
    reqs = [encode_command(["SET", "slow:%d" % i, "v" * 20]) for i in range(20)]
    stop = threading.Event()

    def drip():
        pos = 0
        longest = max(len(r) for r in reqs)
        while pos < longest and not stop.is_set():
            for c, r in zip(slow, reqs):
                if pos < len(r):
                    c.send(r[pos:pos + 1])
            pos += 1
            time.sleep(0.02)

    t = threading.Thread(target=drip)
    t.start()
    try:
        time.sleep(0.2)
        with RawClient(ferry.port) as c:
            t0 = time.monotonic()
            replies = c.pipeline([["INCR", "fast"]] * 1000)
            took = time.monotonic() - t0
        assert replies[-1] == b":1000\r\n"
        assert took < 1.0, "1000 pipelined INCRs took %.2fs next to slowloris clients" % took
        t.join(timeout=30)
        for c in slow:
            assert c.read_reply() == b"+OK\r\n"
        with RawClient(ferry.port) as c:
            assert c.command("EXISTS", *["slow:%d" % i for i in range(20)]) == b":20\r\n"
    finally:
        stop.set()
        t.join(timeout=5)
        for c in slow:
            c.close()


# ------------------------------------------------------------------ numeric extremes
EXTREMES = ["-9223372036854775808", "9223372036854775807", "9223372036854775808", "-9223372036854775809",
            "nan", "inf", "-inf", "1e400", "-0", "+1", " 1", "1 ", "0x10", "1.5", "", "-1", "0"]

# (setup steps, command template with "{}" for the extreme value, checks after)
TEMPLATES = [
    ("SET k hello", "SETRANGE k {} x", "GET k"),
    ("SET k hello", "GETRANGE k {} 3", None),
    ("SET k hello", "GETRANGE k 1 {}", None),
    ("SET k hello", "SUBSTR k {} -1", None),
    ("SET n 10", "INCRBY n {}", "GET n"),
    ("SET n 10", "DECRBY n {}", "GET n"),
    ("SET n -9223372036854775807", "DECRBY n {}", "GET n"),
    ("SET n 10", "INCRBYFLOAT n {}", "GET n"),
    ("SET n 1.5", "INCRBYFLOAT n {}", "GET n"),
    ("SET n {}", "INCR n", "GET n"),
    ("SET n {}", "DECR n", "GET n"),
    ("SET n {}", "INCRBYFLOAT n 1", "GET n"),
    ("", "SET k v EX {}", "TTL k"),
    ("", "SET k v PX {}", "PTTL k"),
    ("", "SET k v EXAT {}", "TTL k"),
    ("", "SET k v PXAT {}", "PTTL k"),
    ("", "SETEX k {} v", "TTL k"),
    ("", "PSETEX k {} v", "PTTL k"),
    ("SET k v", "GETEX k EX {}", "TTL k"),
    ("SET k v", "GETEX k PX {}", "PTTL k"),
    ("SET k v", "GETEX k EXAT {}", "TTL k"),
    ("SET k v", "GETEX k PXAT {}", "PTTL k"),
    ("SET k v", "EXPIRE k {}", "TTL k"),
    ("SET k v", "PEXPIRE k {}", "PTTL k"),
    ("SET k v", "EXPIREAT k {}", "TTL k"),
    ("SET k v", "PEXPIREAT k {}", "PTTL k"),
    ("SET k v", "EXPIRE k {} NX", "TTL k"),
    ("SET k v EX 100", "EXPIRE k {} GT", "TTL k"),
    ("SET k v", "SETBIT k {} 1", "STRLEN k"),
    ("SET k v", "SETBIT k 1 {}", "GET k"),
    ("SET k v", "GETBIT k {}", None),
    ("SET k hello", "BITCOUNT k {} -1", None),
    ("SET k hello", "BITCOUNT k 0 {}", None),
    ("SET k hello", "BITCOUNT k 0 {} BIT", None),
    ("SET k hello", "BITPOS k 1 {}", None),
    ("SET k hello", "BITPOS k 0 0 {}", None),
    ("SET k hello", "BITPOS k {} 0", None),
    ("SET a 1", "SCAN {}", None),  # one key: the order of several is hash-dependent
    ("SET a 1", "SCAN 0 COUNT {}", None),
    ("SET k v", "SELECT {}", None),
    ("SET k v", "MOVE k {}", "EXISTS k"),
    ("SET k v", "COPY k k2 DB {}", "EXISTS k2"),
    ("SET k v", "SWAPDB 0 {}", "DBSIZE"),
    ("SET k hello", "LCS k k MINMATCHLEN {}", None),
]


def _split(s):
    return s.split(" ") if s else []


def _template_steps(tpl):
    setup, command, check = tpl
    for v in EXTREMES:
        steps = [("FLUSHALL",)]
        if "{}" in setup:
            steps.append(tuple(x.replace("{}", v) for x in _split(setup)))
        elif setup:
            steps.append(tuple(_split(setup)))
        cmdv = tuple(x.replace("{}", v) if "{}" in x else x for x in _split(command))
        steps.append(cmdv)
        if check:
            c = tuple(_split(check))
            steps.append(approx(*c, tol=1500) if c[0] in ("TTL", "PTTL") else c)
    return steps


@pytest.mark.parametrize("idx", range(len(TEMPLATES)), ids=[t[1].split(" ")[0] + ":" + t[1] for t in TEMPLATES])
def test_numeric_extremes_match_redis(pair, idx):
    name = TEMPLATES[idx][1].split(" ")[0]
    with RawClient(pair[0].port) as c:
        if to_python(parse(c.command("COMMAND", "INFO", name))) == [None]:
            pytest.skip("%s is not implemented by ferry yet" % name)
    diff(pair, _template_steps(TEMPLATES[idx]) + [("SELECT", "0")], "extremes %s" % TEMPLATES[idx][1])


# ------------------------------------------------------------------ glob bombs
def test_glob_bombs_complete_fast(pair):
    f, r = pair
    bombs = ["*a*a*a*a*a*a*a*a*a*a*b", "*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*b",
             "a*" * 30 + "b", "*[a-z]*[a-z]*[a-z]*[a-z]*[a-z]*[a-z]*[a-z]*b", "*?*?*?*?*?*?*?*?*?*?*b"]
    setup = [("MSET",) + tuple(x for i in range(60) for x in ("a" * (2000 + i), "v"))]
    steps = setup + [sorted_("KEYS", b) for b in bombs] + [("SCAN", "0", "MATCH", bombs[0], "COUNT", "1000")]
    diff(pair, steps, "glob_bombs_results")
    with RawClient(f.port, timeout=10) as c:
        for b in bombs:
            t0 = time.monotonic()
            assert c.command("KEYS", b) == b"*0\r\n"
            c.command("SCAN", "0", "MATCH", b, "COUNT", "1000")
            took = time.monotonic() - t0
            assert took < 1.0, "glob %r took %.2fs" % (b, took)


# ------------------------------------------------------------------ connection limits
def test_maxclients_exceeded(server_factory):
    got = {}
    for kind in ("ferry", "redis"):
        s = server_factory(kind, "--maxclients", "5")
        held = [RawClient(s.port) for _ in range(5)]
        for c in held:
            assert c.command("PING") == b"+PONG\r\n"
        with RawClient(s.port) as extra:
            got[kind] = extra.read_until_eof(timeout=5)
        for c in held:
            c.close()
        time.sleep(0.2)
        still_serving(s)
    assert got["ferry"] == got["redis"] == b"-ERR max number of clients reached\r\n"


def test_idle_half_request_is_timed_out(ferry_factory):
    f = ferry_factory("--timeout", "1")
    with RawClient(f.port, timeout=5) as c:
        c.send(b"*2\r\n$3\r\nGET\r\n$100\r\nabc")   # never completed
        t0 = time.monotonic()
        assert c.read_until_eof(timeout=5) == b""
        assert 0.8 < time.monotonic() - t0 < 4.0
    still_serving(f)


def test_emfile_does_not_spin(ferry):
    """The descriptor limit is lowered under the running server; more
    connections than descriptors arrive. accept() fails with EMFILE: the
    listener backs off (no busy loop), and once the connections close it
    accepts again."""
    pid = ferry.proc.pid
    resource.prlimit(pid, resource.RLIMIT_NOFILE, (64, 64))
    socks = []
    try:
        for _ in range(100):
            s = socket.socket()
            s.settimeout(2)
            s.connect(("127.0.0.1", ferry.port))   # completes in the backlog
            socks.append(s)
        time.sleep(0.3)
        cpu0, t0 = cpu_seconds(ferry), time.monotonic()
        time.sleep(1.5)
        used = (cpu_seconds(ferry) - cpu0) / (time.monotonic() - t0)
        assert used < 0.3, "server used %.0f%% CPU while out of descriptors" % (used * 100)
        log = open(ferry.logpath, "rb").read().decode("utf-8", "replace")
        assert "Too many open files" in log, log[-1500:]
    finally:
        for s in socks:
            s.close()
    deadline = time.monotonic() + 5
    while True:
        try:
            still_serving(ferry)
            break
        except (OSError, AssertionError, TimeoutError):
            if time.monotonic() > deadline:
                raise
            time.sleep(0.1)


# ------------------------------------------------------------------ hash flooding
def _scan_first_batch(server, n=2000):
    with RawClient(server.port) as c:
        c.pipeline([["SET", "key:%d" % i, "v"] for i in range(n)])
        return to_python(parse(c.command("SCAN", "0", "COUNT", "50")))[1]


def test_hash_seed_differs_per_process(ferry_factory):
    """Two processes order the same keys differently: the SipHash key is
    random per process, so collisions found against one do not carry over."""
    a, b = ferry_factory(), ferry_factory()
    assert _scan_first_batch(a) != _scan_first_batch(b)


def _crafted_keys(tmp_path):
    """Keys colliding in one bucket under a known seed, crafted by the unit
    test tests/unit/test_hashflood.c (built here if needed)."""
    out = str(tmp_path / "flood_keys.txt")
    binary = os.path.join(ROOT, "build", "tests", "test_hashflood")
    subprocess.run(["make", "-s", "-C", ROOT, "build/tests/test_hashflood"], check=True, timeout=300,
                   capture_output=True)
    env = dict(os.environ, FERRY_HASHFLOOD_KEYS=out)
    subprocess.run([binary, "--jobs", "1"], check=True, timeout=300, env=env, capture_output=True)
    with open(out) as fh:
        keys = fh.read().split()
    assert len(keys) == 5000
    return keys


def _timed_pipeline(port, commands):
    with RawClient(port, timeout=30) as c:
        t0 = time.monotonic()
        replies = c.pipeline(commands)
        return time.monotonic() - t0, replies


def test_crafted_collisions_keep_latency_normal(ferry, tmp_path):
    keys = _crafted_keys(tmp_path)
    plain = ["plain:%d" % i for i in range(len(keys))]
    best = {}
    for name, ks in (("plain", plain), ("crafted", keys)):
        _timed_pipeline(ferry.port, [["SET", k, "v"] for k in ks])
        times = [_timed_pipeline(ferry.port, [["GET", k] for k in ks])[0] for _ in range(3)]
        best[name] = min(times)
    assert best["crafted"] < 3 * best["plain"] + 0.05, best
    still_serving(ferry)
