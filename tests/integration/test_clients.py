"""Real clients against ferry: redis-cli (one-shot, piped, interactive on a
pty, --stat), redis-benchmark, redis-py 5 (RESP2 and RESP3) and raw sockets.
Every external process runs with a timeout; a hung server fails the test.
"""
from __future__ import annotations

import fcntl
import os
import pty
import re
import select
import shutil
import socket
import struct
import subprocess
import termios
import threading
import time

import pytest
import redis as redispy

from resp_client import RawClient, encode_command, parse

REDIS_CLI = shutil.which("redis-cli") or "/usr/bin/redis-cli"
# The version ferry must report in HELLO/INFO (it identifies as a 7.2 server).
# FERRY_MIN_VERSION=7.0 lets this file run against Debian's redis-server 7.0.15
# to validate the tests themselves.
MIN_VERSION = tuple(int(x) for x in os.environ.get("FERRY_MIN_VERSION", "7.2").split("."))
REDIS_BENCHMARK = shutil.which("redis-benchmark") or "/usr/bin/redis-benchmark"
PROC_TIMEOUT = 60


def cli(server, *args, stdin=None, timeout=15):
    return subprocess.run([REDIS_CLI, "-h", "127.0.0.1", "-p", str(server.port)] + list(args),
                          input=stdin, capture_output=True, timeout=timeout)


def rpy(server, **kw):
    kw.setdefault("socket_timeout", 5)
    kw.setdefault("socket_connect_timeout", 5)
    return redispy.Redis(host="127.0.0.1", port=server.port, **kw)


class PtyProcess:
    """A child process on a pseudo-terminal (redis-cli only prompts, and
    --stat only flushes, when it talks to a terminal)."""

    def __init__(self, argv):
        self.master, slave = pty.openpty()
        # a real terminal size, so linenoise does not probe with ESC[6n
        fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", 24, 200, 0, 0))
        self.proc = subprocess.Popen(argv, stdin=slave, stdout=slave, stderr=slave,
                                     close_fds=True, start_new_session=True)
        os.close(slave)
        self.out = b""

    def read_until(self, pattern: bytes, timeout: float = 10.0) -> bytes:
        """Read until `pattern` (regex) matches the accumulated output."""
        deadline = time.monotonic() + timeout
        while not re.search(pattern, self.out):
            left = deadline - time.monotonic()
            if left <= 0:
                raise AssertionError("timeout waiting for %r; output so far:\n%r" % (pattern, self.out))
            r, _, _ = select.select([self.master], [], [], min(left, 0.2))
            if r:
                try:
                    chunk = os.read(self.master, 65536)
                except OSError:
                    chunk = b""
                if not chunk:
                    raise AssertionError("EOF waiting for %r; output so far:\n%r" % (pattern, self.out))
                self.out += chunk
        return self.out

    def read_for(self, seconds: float) -> bytes:
        deadline = time.monotonic() + seconds
        while True:
            left = deadline - time.monotonic()
            if left <= 0:
                return self.out
            r, _, _ = select.select([self.master], [], [], min(left, 0.2))
            if r:
                try:
                    chunk = os.read(self.master, 65536)
                except OSError:
                    return self.out
                if not chunk:
                    return self.out
                self.out += chunk

    def send(self, data: bytes):
        os.write(self.master, data)

    def close(self):
        if self.proc.poll() is None:
            self.proc.kill()
        try:
            self.proc.wait(timeout=5)
        finally:
            os.close(self.master)


# ====================================================================== redis-cli
def test_cli_one_shot(ferry):
    r = cli(ferry, "set", "a", "b")
    assert (r.returncode, r.stdout) == (0, b"OK\n"), r
    r = cli(ferry, "get", "a")
    assert (r.returncode, r.stdout) == (0, b"b\n"), r
    r = cli(ferry, "incr", "n")
    assert (r.returncode, r.stdout) == (0, b"1\n"), r
    r = cli(ferry, "incrby", "n", "41")
    assert (r.returncode, r.stdout) == (0, b"42\n"), r
    r = cli(ferry, "get", "missing")
    assert (r.returncode, r.stdout) == (0, b"\n"), r
    r = cli(ferry, "--no-raw", "get", "missing")
    assert (r.returncode, r.stdout) == (0, b"(nil)\n"), r
    r = cli(ferry, "--no-raw", "incr", "n")
    assert (r.returncode, r.stdout) == (0, b"(integer) 43\n"), r
    r = cli(ferry, "--no-raw", "mget", "a", "missing")
    assert (r.returncode, r.stdout) == (0, b'1) "b"\n2) (nil)\n'), r
    r = cli(ferry, "ping")
    assert (r.returncode, r.stdout) == (0, b"PONG\n"), r


def test_cli_errors_and_exit_codes(ferry):
    r = cli(ferry, "incr", "a-missing-then-string")
    assert r.returncode == 0 and r.stdout == b"1\n", r
    cli(ferry, "set", "s", "abc")
    r = cli(ferry, "incr", "s")
    assert r.returncode == 0, r
    assert r.stdout == b"ERR value is not an integer or out of range\n\n", r
    r = cli(ferry, "-e", "incr", "s")          # -e: exit status 1 on an error reply
    assert r.returncode == 1, r
    assert b"ERR value is not an integer or out of range" in r.stdout + r.stderr, r
    r = cli(ferry, "-e", "get", "s")
    assert (r.returncode, r.stdout) == (0, b"abc\n"), r
    r = cli(ferry, "nosuchcommand", "x")
    assert r.stdout == b"ERR unknown command 'nosuchcommand', with args beginning with: 'x' \n\n", r


def test_cli_stdin_pipe(ferry):
    script = b"set a b\nget a\nincr x\nincr x\nget nokey\nmget a nokey\nexists a x nokey\nset a\nping\n"
    r = cli(ferry, stdin=script)
    assert r.returncode == 0, r
    assert r.stdout == (b"OK\nb\n1\n2\n\nb\n\n2\n"
                        b"ERR wrong number of arguments for 'set' command\n\nPONG\n"), r
    assert r.stderr == b"", r
    # the data really is there
    assert cli(ferry, "get", "x").stdout == b"2\n"


def test_cli_interactive_pty(ferry):
    prompt = ("127.0.0.1:%d> " % ferry.port).encode()
    p = PtyProcess([REDIS_CLI, "-h", "127.0.0.1", "-p", str(ferry.port)])
    try:
        p.read_until(re.escape(prompt))
        p.send(b"set greeting hello\r")
        p.read_until(b"OK\r\n" + re.escape(prompt))
        p.send(b"get greeting\r")
        p.read_until(b'"hello"\r\n' + re.escape(prompt))
        p.send(b"incr counter\r")
        p.read_until(br"\(integer\) 1\r\n" + re.escape(prompt))
        p.send(b"get nokey\r")
        p.read_until(br"\(nil\)\r\n" + re.escape(prompt))
        p.send(b"incr greeting\r")
        p.read_until(br"\(error\) ERR value is not an integer or out of range\r\n" + re.escape(prompt))
        p.send(b"mget greeting nokey\r")
        p.read_until(br'1\) "hello"\r\n2\) \(nil\)\r\n' + re.escape(prompt))
        p.send(b"select 2\r")
        p.read_until(re.escape(("127.0.0.1:%d[2]> " % ferry.port).encode()))
        p.send(b"quit\r")
        deadline = time.monotonic() + 10
        while p.proc.poll() is None and time.monotonic() < deadline:
            p.read_for(0.1)
        assert p.proc.returncode == 0, p.out
    finally:
        p.close()
    assert rpy(ferry).get("greeting") == b"hello"


def test_cli_stat(ferry):
    rpy(ferry).mset({"a": 1, "b": 2, "c": 3})
    p = PtyProcess([REDIS_CLI, "-h", "127.0.0.1", "-p", str(ferry.port), "--stat", "-i", "0.5"])
    try:
        out = p.read_for(2.2)
        assert p.proc.poll() is None, "redis-cli --stat exited early: %r" % out
    finally:
        p.close()
    text = out.decode("utf-8", "replace")
    lines = [ln.strip() for ln in text.replace("\r", "\n").split("\n") if ln.strip()]
    assert any(ln.startswith("------- data ------") for ln in lines), text
    assert any(re.match(r"^keys\s+mem\s+clients\s+blocked\s+requests\s+connections", ln)
               for ln in lines), text
    data = [ln for ln in lines if re.match(r"^\d+\s+\S+\s+\d+\s+\d+\s+\d+ \(\+\d+\)\s+\d+", ln)]
    assert len(data) >= 2, text
    assert all(d.split()[0] == "3" for d in data), text         # 3 keys
    assert "ERR" not in text, text


# ====================================================================== redis-benchmark
BENCH_NAMES = ["PING_INLINE", "PING_MBULK", "SET", "GET", "INCR", "MSET (10 keys)"]


def bench(server, *args, timeout=PROC_TIMEOUT):
    r = subprocess.run([REDIS_BENCHMARK, "-h", "127.0.0.1", "-p", str(server.port)] + list(args),
                       capture_output=True, timeout=timeout)
    return r, (r.stdout + r.stderr).decode("utf-8", "replace")


def _csv_rows(text):
    rows = {}
    for ln in text.splitlines():
        if ln.startswith('"') and not ln.startswith('"test"'):
            cells = [c.strip('"') for c in ln.split('","')]
            rows[cells[0]] = cells[1:]
    return rows


@pytest.mark.parametrize("pipeline", ["1", "100"])
def test_benchmark_csv(ferry, pipeline):
    r, text = bench(ferry, "-t", "ping,set,get,incr,mset", "-n", "20000", "-c", "50",
                    "-P", pipeline, "--csv")
    assert r.returncode == 0, text
    assert "ERR" not in text, text
    assert text.splitlines()[0] == ('"test","rps","avg_latency_ms","min_latency_ms",'
                                    '"p50_latency_ms","p95_latency_ms","p99_latency_ms",'
                                    '"max_latency_ms"'), text
    rows = _csv_rows(text)
    assert sorted(rows) == sorted(BENCH_NAMES), text
    for name, cells in rows.items():
        assert len(cells) == 7, (name, cells)
        assert float(cells[0]) > 0, (name, cells)
    # every INCR really happened, none lost or duplicated
    c = rpy(ferry)
    assert c.get("counter:__rand_int__") == b"20000"
    assert len(c.get("key:__rand_int__")) == 3           # default -d 3


def test_benchmark_quiet_pipelined(ferry):
    r, text = bench(ferry, "-t", "set,get,incr,mset", "-P", "100", "-c", "50", "-n", "100000", "-q")
    assert r.returncode == 0, text
    assert "ERR" not in text, text
    finals = {}
    for part in re.split(r"[\r\n]", text):
        m = re.match(r"^\s*(.+?): ([0-9.]+) requests per second", part)
        if m:
            finals[m.group(1)] = float(m.group(2))
    assert sorted(finals) == sorted(["SET", "GET", "INCR", "MSET (10 keys)"]), text
    assert all(v > 0 for v in finals.values()), finals
    assert rpy(ferry).get("counter:__rand_int__") == b"100000"


def test_benchmark_ping_inline_random_keys(ferry):
    r, text = bench(ferry, "-t", "ping,set,get", "-n", "20000", "-c", "20", "-r", "1000", "-d", "16",
                    "-q")
    assert r.returncode == 0, text
    assert "ERR" not in text, text
    assert re.search(r"PING_INLINE: [0-9.]+ requests per second", text), text
    c = rpy(ferry)
    n = c.dbsize()
    assert 500 <= n <= 1000, n
    keys = [k for k in c.scan_iter(count=200)]
    assert len(set(keys)) == n
    assert all(re.match(rb"^key:\d{12}$", k) for k in keys), keys[:5]
    assert all(len(v) == 16 for v in c.mget(keys[:50]))


# ====================================================================== redis-py
def test_redispy_resp2_basics(ferry):
    r = rpy(ferry)
    assert r.ping() is True
    assert r.set("k", "v") is True
    assert r.get("k") == b"v"
    assert r.get("missing") is None
    assert r.set("k", "w", nx=True) is None
    assert r.set("k", "w", xx=True, get=True) == b"v"
    assert r.mset({"a": "1", "b": "2"}) is True
    assert r.mget("a", "b", "missing") == [b"1", b"2", None]
    assert r.incr("a") == 2
    assert r.incrbyfloat("a", 0.5) == 2.5
    assert r.append("k", "xyz") == 4
    assert r.getrange("k", 1, -1) == b"xyz"
    assert r.exists("a", "b", "missing") == 2
    assert r.delete("a", "b") == 2
    assert r.type("k") == b"string"
    assert r.object("encoding", "k") == b"raw"
    with pytest.raises(redispy.ResponseError, match="not an integer"):
        r.incr("k")
    assert r.dbsize() == 1


def _server_version(server):
    with RawClient(server.port) as c:
        hello = parse(c.command("HELLO", "2"))
    items = hello[1]
    fields = {items[i][1]: items[i + 1] for i in range(0, len(items) - 1, 2)}
    return tuple(int(x) for x in fields[b"version"][1].split(b"."))


def test_redispy_client_setinfo_on_connect(ferry):
    """redis-py 5 sends CLIENT SETINFO LIB-NAME/LIB-VER on connect (and
    ignores an error reply): a 7.2 server accepts it, 7.0 does not know it.
    Either way the connection must stay usable."""
    r = rpy(ferry, lib_name="redis-py", lib_version="5.0.8")
    assert r.ping() is True
    version = _server_version(ferry)
    assert version >= MIN_VERSION, version
    with RawClient(ferry.port) as raw:
        reply = raw.command("CLIENT", "SETINFO", "LIB-NAME", "redis-py")
        if version >= (7, 2):
            assert reply == b"+OK\r\n"
            assert raw.command("CLIENT", "SETINFO", "LIB-VER", "5.0.8") == b"+OK\r\n"
            assert raw.command("CLIENT", "SETINFO", "LIB-NAME", "bad name").startswith(b"-ERR")
        else:
            assert reply == b"-ERR unknown subcommand 'SETINFO'. Try CLIENT HELP.\r\n", reply
        assert raw.command("PING") == b"+PONG\r\n"
    assert r.set("after", "1") is True and r.get("after") == b"1"


def test_redispy_decode_responses(ferry):
    r = rpy(ferry, decode_responses=True)
    r.set("k", "välue")
    assert r.get("k") == "välue"
    assert r.strlen("k") == len("välue".encode())
    assert r.keys("*") == ["k"]
    assert r.client_setname("py") is True and r.client_getname() == "py"


def test_redispy_transaction_pipeline(ferry):
    r = rpy(ferry)
    with r.pipeline(transaction=True) as p:
        p.set("a", 1).incr("a").incrby("a", 10).get("a").mget("a", "nope")
        assert p.execute() == [True, 2, 12, b"12", [b"12", None]]
    with r.pipeline(transaction=True) as p:
        p.set("s", "abc").incr("s").set("t", "ok")
        res = p.execute(raise_on_error=False)
    assert res[0] is True and res[2] is True
    assert isinstance(res[1], redispy.ResponseError)
    assert r.get("t") == b"ok"
    with r.pipeline(transaction=False) as p:
        for i in range(500):
            p.set("p%d" % i, i)
        assert p.execute() == [True] * 500
    assert r.dbsize() == 503


def test_redispy_watch_error(ferry):
    r = rpy(ferry)
    other = rpy(ferry)
    r.set("k", "1")
    with r.pipeline() as p:
        p.watch("k")
        assert p.get("k") == b"1"             # immediate mode after WATCH
        other.set("k", "2")                   # another client changes it
        p.multi()
        p.set("k", "3")
        with pytest.raises(redispy.WatchError):
            p.execute()
    assert r.get("k") == b"2"
    # without interference the same transaction goes through
    with r.pipeline() as p:
        p.watch("k")
        p.multi()
        p.set("k", "3")
        assert p.execute() == [True]
    assert r.get("k") == b"3"
    # the retry helper: first attempt conflicts, the second succeeds
    attempts = []

    def txn(pipe):
        v = int(pipe.get("k"))
        if not attempts:
            other.incr("k")
        attempts.append(v)
        pipe.multi()
        pipe.set("k", v * 10)

    r.transaction(txn, "k")
    assert attempts == [3, 4]
    assert r.get("k") == b"40"


def test_redispy_scan_iter(ferry):
    r = rpy(ferry)
    expected = {("key:%d" % i).encode() for i in range(1000)}
    with r.pipeline(transaction=False) as p:
        for k in expected:
            p.set(k, "v")
        p.execute()
    r.set("other", "x")
    got = list(r.scan_iter(count=100))
    assert set(got) == expected | {b"other"}
    assert len(got) >= 1001
    got = list(r.scan_iter(match="key:1*", count=37))
    assert set(got) == {k for k in expected if k.startswith(b"key:1")}
    assert set(r.scan_iter(_type="string", count=500)) == expected | {b"other"}
    assert sorted(r.keys("key:99*")) == sorted(k for k in expected if k.startswith(b"key:99"))


def test_redispy_expiry(ferry):
    r = rpy(ferry)
    assert r.set("e", "v", ex=1) is True
    assert r.set("p", "v", px=300) is True
    assert r.set("keep", "v", ex=100) is True
    assert r.ttl("e") == 1
    assert 0 < r.pttl("p") <= 300
    time.sleep(1.1)
    assert r.get("e") is None
    assert r.exists("e", "p") == 0
    assert r.ttl("e") == -2
    assert r.ttl("keep") in (98, 99)
    assert r.dbsize() == 1


def test_redispy_expiry_active(ferry):
    """Keys that are never touched again still disappear (active expiry)."""
    r = rpy(ferry)
    with r.pipeline(transaction=False) as p:
        for i in range(200):
            p.set("t%d" % i, "v", px=100)
        p.execute()
    r.set("stay", "1")
    deadline = time.monotonic() + 5
    while r.dbsize() > 1 and time.monotonic() < deadline:
        time.sleep(0.1)
    assert r.dbsize() == 1
    # the cycle that met them reports it, as Redis's does (a moving average
    # that decays by 5% per cycle: still well above 0.00 this soon)
    stats = r.info("stats")
    assert float(stats["expired_stale_perc"]) > 0, stats
    assert stats["expired_keys"] == 200


def test_redispy_lone_expired_key_among_many_persistent_keys(ferry):
    """Active expiry finds a single expired key however many keys have no
    TTL (it walks the keys with a TTL, as Redis samples its expires table),
    so it goes within a cycle or two instead of a pass over the keyspace."""
    r = rpy(ferry)
    with r.pipeline(transaction=False) as p:
        for b in range(200):
            p.mset({"p:%d" % i: "v" for i in range(b * 1000, (b + 1) * 1000)})
        p.execute()
    r.set("lone", "v", px=50)
    deadline = time.monotonic() + 3
    while r.dbsize() > 200000 and time.monotonic() < deadline:
        time.sleep(0.05)
    assert r.dbsize() == 200000
    assert int(r.info("stats")["expired_keys"]) == 1


def test_redispy_resp3(ferry):
    r = rpy(ferry, protocol=3, decode_responses=True)
    hello = r.execute_command("HELLO", "3")
    assert isinstance(hello, dict), hello
    assert set(hello) == {"server", "version", "proto", "id", "mode", "role", "modules"}, hello
    assert hello["server"] == "redis"
    assert hello["proto"] == 3
    assert isinstance(hello["id"], int) and hello["id"] > 0
    assert hello["mode"] == "standalone"
    assert hello["role"] == "master"
    assert hello["modules"] == []
    assert re.fullmatch(r"\d+\.\d+\.\d+", hello["version"]), hello
    assert tuple(int(x) for x in hello["version"].split(".")) >= MIN_VERSION, hello
    assert r.set("k", "v") is True
    assert r.get("k") == "v"
    assert r.get("missing") is None
    assert r.mget("k", "missing") == ["v", None]
    assert r.incrbyfloat("f", "1.25") == 1.25
    assert r.ttl("k") == -1
    with r.pipeline(transaction=True) as p:
        p.incr("n").incr("n").get("missing")
        assert p.execute() == [1, 2, None]


def test_redispy_resp3_watch_error(ferry):
    r = rpy(ferry, protocol=3)
    other = rpy(ferry)
    r.set("k", "1")
    with r.pipeline() as p:
        p.watch("k")
        other.set("k", "2")
        p.multi()
        p.incr("k")
        with pytest.raises(redispy.WatchError):
            p.execute()


def test_redispy_many_connections(ferry):
    pool = redispy.ConnectionPool(host="127.0.0.1", port=ferry.port, max_connections=64,
                                  socket_timeout=5)
    errors = []

    def worker(i):
        try:
            c = redispy.Redis(connection_pool=pool)
            for j in range(50):
                c.incr("shared")
                c.set("w%d" % i, j)
        except Exception as e:  # noqa: BLE001
            errors.append(e)

    threads = [threading.Thread(target=worker, args=(i,)) for i in range(32)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(30)
    assert not errors, errors
    r = redispy.Redis(connection_pool=pool)
    assert r.get("shared") == b"1600"
    assert r.mget(["w%d" % i for i in range(32)]) == [b"49"] * 32
    pool.disconnect()


# ====================================================================== raw sockets
def test_raw_inline_commands(ferry, raw_client):
    c = raw_client(ferry)
    c.send(b"PING\r\n")
    assert c.read_reply() == b"+PONG\r\n"
    c.send(b"SET a b\r\n")
    assert c.read_reply() == b"+OK\r\n"
    c.send(b"GET a\r\n")
    assert c.read_reply() == b"$1\r\nb\r\n"
    c.send(b'SET q "x y"\r\nGET q\r\nPING\n')
    assert c.read_replies(3) == [b"+OK\r\n", b"$3\r\nx y\r\n", b"+PONG\r\n"]
    c.assert_no_pending()


def test_raw_protocol_error_closes(ferry, raw_client):
    c = raw_client(ferry)
    c.send(b"*1\r\n$x\r\n")
    assert c.read_until_eof() == b"-ERR Protocol error: invalid bulk length\r\n"
    # the server is fine and serves others
    d = raw_client(ferry)
    assert d.command("PING") == b"+PONG\r\n"


def test_raw_quit(ferry, raw_client):
    c = raw_client(ferry)
    c.send(encode_command(["QUIT"]))
    assert c.read_until_eof() == b"+OK\r\n"


def test_raw_big_pipeline_in_order(ferry, raw_client):
    """20000 pipelined commands written while replies are read concurrently;
    all replies come back complete and in order."""
    n = 20000
    c = raw_client(ferry, timeout=30)
    payload = b"".join(encode_command(["INCR", "ctr"]) for _ in range(n))
    payload += encode_command(["GET", "ctr"])
    sender = threading.Thread(target=c.send, args=(payload,))
    sender.start()
    replies = c.read_replies(n + 1, timeout=30)
    sender.join(30)
    assert replies[:n] == [b":%d\r\n" % (i + 1) for i in range(n)]
    assert replies[n] == b"$5\r\n20000\r\n"


def test_raw_large_values(ferry, raw_client):
    c = raw_client(ferry, timeout=30)
    big = os.urandom(4 * 1024 * 1024)
    assert c.command("SET", "big", big) == b"+OK\r\n"
    assert c.command("GET", "big") == b"$%d\r\n" % len(big) + big + b"\r\n"
    assert c.command("STRLEN", "big") == b":%d\r\n" % len(big)
    assert c.command("APPEND", "big", b"tail") == b":%d\r\n" % (len(big) + 4)


def test_raw_partial_command_then_disconnect(ferry, raw_client):
    for data in (b"*3\r\n$3\r\nSET\r\n$1\r\nk", b"*2\r\n$4\r\nECHO\r\n$100\r\nabc", b"PIN"):
        c = raw_client(ferry)
        c.send(data)
        c.close()
    c = raw_client(ferry)
    assert c.command("EXISTS", "k") == b":0\r\n"
    assert c.command("PING") == b"+PONG\r\n"


def test_raw_many_connections(ferry, raw_client):
    clients = [raw_client(ferry) for _ in range(200)]
    for i, c in enumerate(clients):
        c.send(encode_command(["SET", "c%d" % i, i]))
    for c in clients:
        assert c.read_reply() == b"+OK\r\n"
    assert clients[0].command("DBSIZE") == b":200\r\n"
    for c in clients[::2]:
        c.close()
    assert clients[1].command("DBSIZE") == b":200\r\n"


def test_raw_resp3_hello_structure(ferry, raw_client):
    c = raw_client(ferry)
    v = parse(c.command("HELLO", "3"))
    assert v[0] == "map"
    keys = [k[1] for k, _ in v[1]]
    assert keys == [b"server", b"version", b"proto", b"id", b"mode", b"role", b"modules"]
    d = {k[1]: x for k, x in v[1]}
    assert d[b"proto"] == ("int", 3)
    assert d[b"modules"] == ("array", [])
    assert c.command("GET", "missing") == b"_\r\n"


def test_server_survives_client_flood_of_errors(ferry, raw_client):
    c = raw_client(ferry)
    c.send(b"".join(encode_command(["NOPE%d" % i]) for i in range(1000)))
    replies = c.read_replies(1000)
    assert replies[0] == b"-ERR unknown command 'NOPE0', with args beginning with: \r\n"
    assert all(r.startswith(b"-ERR unknown command 'NOPE") for r in replies)
    assert c.command("PING") == b"+PONG\r\n"


def test_port_is_never_default(ferry):
    assert ferry.port != 6379
    with socket.create_connection(("127.0.0.1", ferry.port), timeout=5):
        pass
