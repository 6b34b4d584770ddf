"""Differential tests for MONITOR (src/commands/monitor.c and its hooks in
command_call, EVAL/FCALL, AUTH and HELLO, RESET, CLIENT LIST).

Each case runs on ferry and on redis-server 7.0.15: connection "m" turns
MONITOR on, the steps run on the other connections (every reply compared
byte for byte), then an ECHO marker ends the case and the monitor's stream
up to the marker's line is compared line by line, after replacing the
timestamp with TS and each client address with the index of the
connection it belongs to. What is shown, in which order, with which
database, how arguments are quoted, what is hidden (admin commands,
rejected commands, AUTH / HELLO AUTH arguments) must all match.
Also: the monitor connection's own behaviour (its commands, MONITOR in
MULTI, RESET), two monitors, and `redis-cli monitor`.
"""
from __future__ import annotations

import re
import shutil
import subprocess
import time

import pytest

from conftest import server_pair
from resp_client import RawClient, encode_command, reply_end

SERVER_ARGS = ("--enable-debug-command", "yes")
MARK = "monitor-case-end"
LINE = re.compile(rb"^\+(\d+)\.(\d{6}) \[(\d+) ([^\]]+)\] (.*)$")


def c(i, *args):
    return ("cmd", i, args)


def raw(i, data, n=1):
    return ("raw", i, (data, n))


def send(i, *args):
    """Sent without reading a reply (a command that blocks)."""
    return ("send", i, args)


def read(i):
    """The reply of an earlier send."""
    return ("read", i, ())


def pause(s):
    return ("sleep", 0, s)


LUA_LIB = ("#!lua name=mlib\n"
           "redis.register_function('setk', function(keys, args) return redis.call('set', keys[1], args[1]) end)\n"
           "redis.register_function{function_name='getk', callback=function(keys) return redis.call('get', keys[1]) end,"
           " flags={'no-writes'}}")

CASES = {
    "data_commands": [
        c(0, "SET", "foo", "bar"), c(0, "GET", "foo"), c(0, "INCR", "n"), c(0, "MSET", "a", "1", "b", "2"),
        c(0, "HSET", "h", "f", "v"), c(0, "HGETALL", "h"), c(0, "RPUSH", "l", "x", "y"), c(0, "LRANGE", "l", "0", "-1"),
        c(0, "SADD", "s", "m"), c(0, "ZADD", "z", "1.5", "m"), c(0, "ZRANGE", "z", "0", "-1", "WITHSCORES"),
        c(0, "DEL", "a", "b", "nope"), c(0, "EXPIRE", "foo", "100"), c(0, "TTL", "foo"), c(0, "KEYS", "h*"),
        c(0, "SCAN", "0", "MATCH", "h"), c(0, "DBSIZE"), c(0, "TYPE", "h"), c(0, "RENAME", "l", "l2"), c(0, "FLUSHDB"),
        c(1, "PING"), c(1, "ECHO", "hi"), c(1, "TIME"), c(1, "INFO", "server"), c(1, "COMMAND", "GETKEYS", "GET", "k"),
        c(1, "CLIENT", "GETREDIR"), c(1, "CLIENT", "SETNAME", "x"), c(1, "CLIENT", "GETNAME"), c(1, "CLIENT", "INFO"),
        c(1, "PUBLISH", "ch", "msg"), c(1, "WATCH", "k"), c(1, "UNWATCH"), c(1, "LASTSAVE"),
        c(1, "OBJECT", "ENCODING", "h"), c(1, "CLIENT", "TRACKING", "on"),
    ],
    "select_shows_new_db": [
        c(0, "SELECT", "1"), c(0, "SET", "k", "1"), c(0, "SELECT", "0"), c(0, "GET", "k"), c(1, "SELECT", "5"),
        c(1, "SWAPDB", "0", "5"), c(1, "MOVE", "k", "0"),
    ],
    "quoting": [
        c(0, "SET", "a b\"c\\d", "\n\r\t\a\b"), c(0, "ECHO", "\x00\x01\x7f\xff"), c(0, "ECHO", "é ü"),
        c(0, "ECHO", ""), c(0, "ECHO", "'single'"), raw(0, b"ECHO inline \"quoted arg\"\r\n"),
        raw(0, b"*2\r\n$4\r\nECHO\r\n$3\r\n\x1b[m\r\n"), c(0, "SET", "12345", "-7"),
    ],
    "hidden_commands": [
        c(0, "CONFIG", "GET", "maxmemory"), c(0, "CLIENT", "LIST"), c(0, "CLIENT", "NO-EVICT", "on"),
        c(0, "DEBUG", "SLEEP", "0"), c(0, "SLOWLOG", "GET"), c(0, "LATENCY", "LATEST"), c(0, "MONITOR"),
        c(0, "CLIENT", "UNPAUSE"),
        # rejected before running: not shown
        c(0, "NOSUCH", "x"), c(0, "GET"), c(0, "CLIENT", "NOSUCH"), c(1, "SUBSCRIBE", "ch"), c(1, "GET", "k"),
        c(1, "PING"), c(1, "UNSUBSCRIBE"),
    ],
    "redaction": [
        c(0, "AUTH", "not-real"), c(0, "AUTH", "user", "not-a-password"), c(0, "AUTH", "a", "b", "c"),
        c(0, "HELLO", "2", "AUTH", "default", "pw"), c(0, "HELLO", "2", "AUTH", "default", "pw", "SETNAME", "nm"),
        c(0, "HELLO", "2", "SETNAME", "nm", "AUTH", "x", "y"), c(0, "HELLO", "2", "BAD", "AUTH", "x", "y"),
        c(0, "HELLO", "2", "AUTH", "x", "y", "BAD", "AUTH", "z", "w"), c(0, "HELLO", "9", "AUTH", "x", "y"),
        c(0, "HELLO", "2", "AUTH", "x"), c(0, "HELLO"),
        c(0, "MULTI"), c(0, "AUTH", "p"), c(0, "EXEC"),
    ],
    "transactions": [
        c(0, "MULTI"), c(0, "SET", "foo", "bar"), c(0, "GET", "foo"), c(0, "EXEC"),
        c(0, "MULTI"), c(0, "SYNTAX", "ERROR"), c(0, "EXEC"),
        c(0, "MULTI"), c(0, "SET", "x", "1"), c(0, "DISCARD"),
        c(0, "WATCH", "w"), c(1, "SET", "w", "1"), c(0, "MULTI"), c(0, "GET", "w"), c(0, "EXEC"),
        c(0, "MULTI"), c(0, "SELECT", "2"), c(0, "SET", "in2", "1"), c(0, "SELECT", "0"), c(0, "EXEC"),
        c(0, "EXEC"), c(0, "MULTI"), c(0, "MULTI"), c(0, "DISCARD"),
    ],
    "scripts": [
        c(0, "EVAL", "redis.call('set', KEYS[1], ARGV[1]) return redis.call('get', KEYS[1])", "1", "k", "v"),
        c(0, "EVAL", "return 1", "0"), c(0, "EVAL", "syntax error here", "0"), c(0, "EVAL", "return 1", "5"),
        c(0, "EVAL", "return 1", "-1"), c(0, "EVAL", "return 1", "x"),
        c(0, "EVAL", "return redis.call('nosuch')", "0"), c(0, "EVAL", "return redis.pcall('get', 'a', 'b')", "0"),
        c(0, "EVAL", "redis.call('select', 3) return redis.call('set', 'z', '1')", "0"),
        c(0, "EVALSHA", "0000000000000000000000000000000000000000", "0"), c(0, "SCRIPT", "LOAD", "return 7"),
        c(0, "EVALSHA", "e4f41b6e8fd0ecb4bdfa0c2e0ac9d4a2b7c7d5cb", "0"),
        c(0, "EVAL_RO", "return redis.call('get', KEYS[1])", "1", "k"),
        c(0, "EVAL", "return redis.call('ping')", "0"), c(0, "EVAL", "return redis.call('incr', 'n')", "0"),
        c(0, "MULTI"), c(0, "EVAL", "return redis.call('get', 'k')", "0"), c(0, "EXEC"),
        c(0, "FUNCTION", "LOAD", "REPLACE", LUA_LIB), c(0, "FCALL", "setk", "1", "fk", "fv"),
        c(0, "FCALL_RO", "getk", "1", "fk"), c(0, "FCALL", "nosuch", "0"), c(0, "FUNCTION", "FLUSH"),
        c(0, "SCRIPT", "FLUSH"),
    ],
    "blocking": [
        send(0, "BLPOP", "bl", "0"), pause(0.05), c(1, "RPUSH", "bl", "a"), read(0),
        c(1, "RPUSH", "bl", "b"), c(0, "BLPOP", "bl", "0"),
        send(0, "BLMOVE", "l2", "l3", "LEFT", "LEFT", "0"), pause(0.05), c(1, "LPUSH", "l2", "z"), read(0),
        c(0, "MULTI"), c(0, "BLPOP", "empty", "0"), c(0, "EXEC"),
        send(0, "BZPOPMIN", "zz", "0.01"), pause(0.1), read(0),
    ],
    "monitor_connection_itself": [
        c("m", "PING"), c("m", "GET", "foo"), c("m", "SET", "foo", "1"), c("m", "MONITOR"), c("m", "ECHO", "x"),
        c("m", "CLIENT", "GETNAME"), c("m", "MULTI"), c("m", "MONITOR"), c("m", "EXEC"), c("m", "HELLO", "3"),
        c("m", "PING"), c(0, "SET", "a", "1"), c("m", "RESET"), c(0, "SET", "after", "reset"), c("m", "PING"),
        c("m", "GET", "after"), c("m", "MONITOR"), c(0, "SET", "again", "1"),
    ],
    "quit": [c(0, "SET", "a", "1"), raw(0, encode_command(["QUIT"])), pause(0.05)],
}


class Run:
    """One server: the monitor, the step connections, the replies."""

    def __init__(self, port):
        self.port = port
        self.conns = {}
        self.replies = []
        self.names = {}

    def conn(self, i):
        if i not in self.conns:
            cl = RawClient(self.port, timeout=5)
            self.conns[i] = cl
            self.names[str(cl.sock.getsockname()[1]).encode()] = str(i).encode()
        return self.conns[i]

    def start_monitor(self):
        m = self.conn("m")
        m.send_command("MONITOR")
        assert m.read_reply() == b"+OK\r\n"

    def step(self, st):
        kind, i, args = st
        if kind == "sleep":
            time.sleep(args)
            return
        cl = self.conn(i)
        if kind == "send":
            cl.send_command(*args)
            return
        if kind == "read":
            self.replies.append((i, cl.read_reply()))
            return
        data, n = (args if kind == "raw" else (encode_command(args), 1))
        if i == "m":          # the monitor's own replies are read with its stream
            cl.send(data)
            time.sleep(0.05)  # processed before the next step's command
            return
        cl.send(data)
        try:
            for _ in range(n):
                self.replies.append((i, mask(cl.read_reply())))
        except Exception as e:  # noqa: BLE001  (a closed connection is a result too)
            self.replies.append((i, type(e).__name__.encode()))

    def monitor_stream(self):
        """Everything the monitor got up to the marker's line, normalized."""
        end = RawClient(self.port)
        end.command("ECHO", MARK)
        end.close()
        m = self.conns["m"]
        out = []
        deadline = time.monotonic() + 5
        while True:
            e = reply_end(m.buf, 0)
            if e < 0:
                m._fill(deadline)
                continue
            v = bytes(m.buf[:e])
            del m.buf[:e]
            out.append(self.normalize(v))
            if MARK.encode() in v:
                return out

    def normalize(self, v):
        mm = LINE.match(v.rstrip(b"\r\n"))
        if not mm:
            return mask(v)
        who = mm.group(4)
        if who != b"lua":
            port = who.rsplit(b":", 1)[-1]
            who = b"conn-" + self.names.get(port, b"other")
        return b"+TS [%s %s] %s" % (mm.group(3), who, mm.group(5))

    def close(self):
        for cl in self.conns.values():
            cl.close()


def mask(v):
    """HELLO's volatile fields and CLIENT ID / INFO values."""
    v = re.sub(rb"(\$2\r\nid\r\n:)\d+", rb"\1ID", v)
    v = re.sub(rb"(\$7\r\nversion\r\n)\$\d+\r\n[^\r]*\r\n", rb"\1<v>", v)
    if v.startswith(b":") and v[1:-2].isdigit() and int(v[1:-2]) > 1000000:
        return b":<big>\r\n"          # LASTSAVE
    if re.match(rb"^\*2\r\n\$10\r\n\d{10}\r\n\$\d\r\n\d+\r\n$", v):
        return b"<time>"
    return re.sub(rb"^(\$\d+\r\n)?(id=\d+ |# Server).*", b"<text>", v, flags=re.S)


def run_case(port, steps):
    run = Run(port)
    try:
        with RawClient(port) as admin:
            admin.command("FLUSHALL")
            admin.command("FUNCTION", "FLUSH")
        run.start_monitor()
        for st in steps:
            run.step(st)
        return run.replies, run.monitor_stream()
    finally:
        run.close()


@pytest.fixture(scope="module")
def pair():
    with server_pair(*SERVER_ARGS) as (f, r):
        yield f, r


def _diff(a, b):
    for n, (x, y) in enumerate(zip(a, b)):
        if x != y:
            return "first difference at %d:\n ferry %r\n redis %r" % (n, x, y)
    return "lengths %d / %d; extra: %r" % (len(a), len(b), (a[len(b):] or b[len(a):])[:3])


@pytest.mark.parametrize("name", sorted(CASES))
def test_case(pair, name):
    f, r = pair
    freplies, fmon = run_case(f.port, CASES[name])
    rreplies, rmon = run_case(r.port, CASES[name])
    assert freplies == rreplies, _diff(freplies, rreplies)
    assert fmon == rmon, _diff(fmon, rmon)


def test_two_monitors_and_line_format(pair):
    for s in pair:
        with RawClient(s.port) as m1, RawClient(s.port) as m2, RawClient(s.port) as c:
            for m in (m1, m2):
                m.send_command("MONITOR")
                assert m.read_reply() == b"+OK\r\n"
            c.command("SET", "k", "v")
            l1, l2 = m1.read_reply(), m2.read_reply()
            assert re.match(rb'^\+\d{10}\.\d{6} \[0 127\.0\.0\.1:\d+\] "SET" "k" "v"\r\n$', l1), (s.kind, l1)
            assert l1 == l2
            now = time.time()
            assert abs(float(l1[1:18]) - now) < 5


def cli_monitor(port, commands):
    p = subprocess.Popen(["redis-cli", "-p", str(port), "monitor"], stdout=subprocess.PIPE,
                         stderr=subprocess.STDOUT)
    try:
        with RawClient(port) as cl:
            deadline = time.time() + 10  # redis-cli may start slowly on a loaded machine
            while b"flags=O" not in cl.command("CLIENT", "LIST") and time.time() < deadline:
                time.sleep(0.05)
            for args in commands:
                cl.command(*args)
            cl.command("ECHO", MARK)
        time.sleep(0.3)
    finally:
        p.terminate()
        out = p.communicate(timeout=5)[0]
    lines = out.decode("utf-8", "replace").splitlines()
    return [re.sub(r"^\d+\.\d{6} \[(\d+) 127\.0\.0\.1:\d+\]", r"TS [\1 addr]", ln) for ln in lines]


@pytest.mark.skipif(not shutil.which("redis-cli"), reason="redis-cli not installed")
def test_redis_cli_monitor(pair):
    f, r = pair
    cmds = [("SET", "k", "a b"), ("GET", "k"), ("SELECT", "3"), ("LPUSH", "l", "\x01"), ("EVAL", "return 1", "0")]
    fo, ro = cli_monitor(f.port, cmds), cli_monitor(r.port, cmds)
    assert fo == ro
    assert fo[0] == "OK" and fo[-1].endswith('"ECHO" "%s"' % MARK)
