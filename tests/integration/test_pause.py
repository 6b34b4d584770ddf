"""CLIENT PAUSE / CLIENT UNPAUSE (src/commands/pause.c), ferry against the
reference redis-server.

Each scenario is a function of one server that drives several connections
and returns what it observed (reply bytes, "no reply yet", INFO counters);
it runs on ferry and on redis-server and the observations must be equal.
The scenarios also assert the essential facts themselves (a paused write has
no reply before the pause ends), so one that observed nothing cannot pass.

Covered: a write under PAUSE WRITE answered only after UNPAUSE while reads,
PING and INFO run; blocked_clients and CLIENT LIST flags=b for held clients;
a held client's pipeline resuming in order; several held clients resuming
in the order they were held; PUBLISH and PFCOUNT held under WRITE; MULTI/EXEC
(a read-only transaction runs, one with a write is held at EXEC); scripts
(EVAL without flags held, no-writes scripts, EVAL_RO and FCALL of a
no-writes function run, may-replicate commands refused in read-only
scripts); expiry held during a pause (an expired key reads as missing but
is neither deleted nor counted until the pause ends); PAUSE ALL holding
reads too, until its timeout; a later PAUSE merging (the more restrictive
mode, the later end); a held client disconnecting.
"""
from __future__ import annotations

import re
import time

from resp_client import RawClient

NO_REPLY = b"<no reply>"


class Session:
    """Connections to one server for one scenario."""

    def __init__(self, server):
        self.server = server
        self.conns = []
        self.admin = self.conn()
        assert self.admin.command("FLUSHALL") == b"+OK\r\n"
        self.admin.command("FUNCTION", "FLUSH")

    def conn(self) -> RawClient:
        c = RawClient(self.server.port, timeout=10.0)
        self.conns.append(c)
        return c

    def info_field(self, section, field) -> str:
        raw = self.admin.command("INFO", section).decode()
        m = re.search(r"^%s:(\S+)" % field, raw, re.M)
        return m.group(1) if m else ""

    def wait_blocked(self, n, timeout=5.0):
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.info_field("clients", "blocked_clients") == str(n):
                return
            time.sleep(0.005)
        raise AssertionError("%s: blocked_clients never became %d" % (self.server.kind, n))

    def close(self):
        for c in self.conns:
            c.close()
        # never leave a pause behind for the next scenario (UNPAUSE is held
        # under ALL: those scenarios wait for their timeout themselves)
        with RawClient(self.server.port, timeout=10.0) as c:
            c.command("CLIENT", "UNPAUSE")


def pending(c: RawClient, wait=0.15) -> bytes:
    """The next reply if one arrives within `wait`, else NO_REPLY."""
    try:
        return c.read_reply(timeout=wait)
    except TimeoutError:
        return NO_REPLY


def both(pair, scenario):
    out = {}
    for server in pair:
        s = Session(server)
        try:
            out[server.kind] = scenario(s)
        finally:
            s.close()
    assert out["ferry"] == out["redis"], "ferry observed %r\nredis observed %r" % (out["ferry"], out["redis"])
    return out["ferry"]


def test_write_held_reads_pass(pair):
    def scenario(s):
        w, r = s.conn(), s.conn()
        s.admin.command("SET", "k", "old")
        paused = s.admin.command("CLIENT", "PAUSE", "100000", "WRITE")
        w.send_command("SET", "k", "new")
        s.wait_blocked(1)
        reads = [r.command("GET", "k"), r.command("PING"), r.command("EXISTS", "k")]
        early = pending(w)
        flags = re.findall(rb"flags=(\S+)", s.admin.command("CLIENT", "LIST"))
        unpaused = s.admin.command("CLIENT", "UNPAUSE")
        late = w.read_reply(timeout=5)
        return [paused, reads, early, sorted(flags), unpaused, late, r.command("GET", "k"),
                s.info_field("clients", "blocked_clients")]

    got = both(pair, scenario)
    assert got[2] == NO_REPLY and got[5] == b"+OK\r\n" and got[6] == b"$3\r\nnew\r\n"
    assert b"b" in got[3]


def test_held_pipeline_resumes_in_order(pair):
    def scenario(s):
        c = s.conn()
        s.admin.command("CLIENT", "PAUSE", "100000", "WRITE")
        c.send(b"".join([b"*2\r\n$3\r\nGET\r\n$1\r\na\r\n",
                         b"*3\r\n$3\r\nSET\r\n$1\r\na\r\n$1\r\n1\r\n",
                         b"*2\r\n$3\r\nGET\r\n$1\r\na\r\n",
                         b"*2\r\n$4\r\nINCR\r\n$1\r\na\r\n",
                         b"*1\r\n$4\r\nPING\r\n"]))
        first = c.read_reply(timeout=5)
        s.wait_blocked(1)
        early = pending(c)
        s.admin.command("CLIENT", "UNPAUSE")
        rest = c.read_replies(4, timeout=5)
        return [first, early, rest]

    got = both(pair, scenario)
    assert got[0] == b"$-1\r\n" and got[1] == NO_REPLY
    assert got[2] == [b"+OK\r\n", b"$1\r\n1\r\n", b":2\r\n", b"+PONG\r\n"]


def test_clients_resume_in_order(pair):
    def scenario(s):
        s.admin.command("CLIENT", "PAUSE", "100000", "WRITE")
        cs = [s.conn() for _ in range(3)]
        for i, c in enumerate(cs):
            c.send_command("RPUSH", "l", "c%d" % i)
            s.wait_blocked(i + 1)
        s.admin.command("CLIENT", "UNPAUSE")
        replies = [c.read_reply(timeout=5) for c in cs]
        return [replies, s.admin.command("LRANGE", "l", "0", "-1")]

    got = both(pair, scenario)
    assert got[1] == b"*3\r\n$2\r\nc0\r\n$2\r\nc1\r\n$2\r\nc2\r\n"


def test_publish_and_pfcount_held(pair):
    def scenario(s):
        s.admin.command("PFADD", "h", "x")
        s.admin.command("CLIENT", "PAUSE", "100000", "WRITE")
        a, b = s.conn(), s.conn()
        a.send_command("PFCOUNT", "h")
        s.wait_blocked(1)
        b.send_command("PUBLISH", "ch", "m")
        s.wait_blocked(2)
        early = [pending(a), pending(b)]
        s.admin.command("CLIENT", "UNPAUSE")
        return [early, a.read_reply(timeout=5), b.read_reply(timeout=5)]

    got = both(pair, scenario)
    assert got[0] == [NO_REPLY, NO_REPLY] and got[1] == b":1\r\n"


def test_multi_exec(pair):
    def scenario(s):
        ro, rw = s.conn(), s.conn()
        s.admin.command("SET", "k", "v")
        rw.command("MULTI")
        queued = rw.command("INCR", "n")
        s.admin.command("CLIENT", "PAUSE", "100000", "WRITE")
        read_tx = [ro.command("MULTI"), ro.command("GET", "k"), ro.command("PING"), ro.command("EXEC")]
        rw.send_command("EXEC")
        s.wait_blocked(1)
        early = pending(rw)
        s.admin.command("CLIENT", "UNPAUSE")
        return [queued, read_tx, early, rw.read_reply(timeout=5)]

    got = both(pair, scenario)
    assert got[2] == NO_REPLY and got[3] == b"*1\r\n:1\r\n"


def test_pause_inside_transaction_starts_after_exec(pair):
    def scenario(s):
        c, w = s.conn(), s.conn()
        out = [c.command("MULTI"), c.command("SET", "a", "1"), c.command("CLIENT", "PAUSE", "100000", "WRITE"),
               c.command("SET", "b", "2"), c.command("EXEC")]
        w.send_command("SET", "c", "3")
        s.wait_blocked(1)
        out += [c.command("MGET", "a", "b", "c"), pending(w)]
        s.admin.command("CLIENT", "UNPAUSE")
        out.append(w.read_reply(timeout=5))
        return out

    got = both(pair, scenario)
    assert got[6] == NO_REPLY


def test_scripts(pair):
    def scenario(s):
        s.admin.command("FUNCTION", "LOAD",
                        "#!lua name=lib\nredis.register_function{function_name='ro', "
                        "callback=function() return 'hi' end, flags={'no-writes'}}")
        s.admin.command("SET", "x", "y")
        s.admin.command("CLIENT", "PAUSE", "100000", "WRITE")
        c, w1, w2 = s.conn(), s.conn(), s.conn()
        runs = [c.command("EVAL", "#!lua flags=no-writes\nreturn 'ro'", "0"),
                c.command("EVAL_RO", "return redis.call('get', KEYS[1])", "1", "x"),
                c.command("FCALL", "ro", "0"),
                c.command("EVAL_RO", "return redis.call('publish', 'ch', 'm')", "0")]
        w1.send_command("EVAL", "return 1", "0")
        s.wait_blocked(1)
        w2.send_command("EVAL", "#!lua\nreturn 2", "0")
        s.wait_blocked(2)
        early = [pending(w1), pending(w2)]
        s.admin.command("CLIENT", "UNPAUSE")
        return [runs, early, w1.read_reply(timeout=5), w2.read_reply(timeout=5)]

    got = both(pair, scenario)
    assert got[0][3].startswith(b"-ERR Write commands are not allowed from read-only scripts")
    assert got[1] == [NO_REPLY, NO_REPLY] and got[2] == b":1\r\n"


def test_expiry_held(pair):
    def scenario(s):
        c = s.conn()
        before = int(s.info_field("stats", "expired_keys"))
        c.command("SET", "k", "v", "PX", "50")
        c.command("SET", "k2", "v", "PX", "50")
        s.admin.command("CLIENT", "PAUSE", "100000", "WRITE")
        time.sleep(0.3)  # three active expiry cycles at hz 10
        during = [c.command("GET", "k"), c.command("EXISTS", "k2"), c.command("SCAN", "0"), c.command("DBSIZE"),
                  int(s.info_field("stats", "expired_keys")) - before]
        s.admin.command("CLIENT", "UNPAUSE")
        after = [c.command("GET", "k"), c.command("GET", "k2")]
        return [during, after, int(s.info_field("stats", "expired_keys")) - before]

    got = both(pair, scenario)
    assert got[0] == [b"$-1\r\n", b":0\r\n", b"*2\r\n$1\r\n0\r\n*0\r\n", b":2\r\n", 0] and got[2] == 2


def test_pause_all_holds_reads_until_timeout(pair):
    def scenario(s):
        c = s.conn()
        s.admin.command("SET", "k", "v")
        t0 = time.monotonic()
        s.admin.command("CLIENT", "PAUSE", "400", "ALL")
        c.send_command("GET", "k")
        early = pending(c, 0.1)
        late = c.read_reply(timeout=5)
        waited = time.monotonic() - t0
        assert 0.35 <= waited < 3, "%s: released after %.3fs" % (s.server.kind, waited)
        return [early, late]

    assert both(pair, scenario) == [NO_REPLY, b"$1\r\nv\r\n"]


def test_later_pause_merges(pair):
    """PAUSE 500 WRITE then PAUSE 50 ALL: ALL (the more restrictive) until
    the later end, so a read is held for about 500 ms."""
    def scenario(s):
        c = s.conn()
        t0 = time.monotonic()
        s.admin.command("CLIENT", "PAUSE", "500", "WRITE")
        s.admin.command("CLIENT", "PAUSE", "50", "ALL")
        time.sleep(0.15)
        c.send_command("PING")
        early = pending(c, 0.1)
        late = c.read_reply(timeout=5)
        waited = time.monotonic() - t0
        assert 0.45 <= waited < 3, "%s: released after %.3fs" % (s.server.kind, waited)
        return [early, late]

    assert both(pair, scenario) == [NO_REPLY, b"+PONG\r\n"]


def test_held_client_disconnects(pair):
    def scenario(s):
        a, b = s.conn(), s.conn()
        s.admin.command("CLIENT", "PAUSE", "100000", "WRITE")
        a.send_command("SET", "a", "1")
        b.send_command("SET", "b", "1")
        s.wait_blocked(2)
        a.close()
        s.wait_blocked(1)
        s.admin.command("CLIENT", "UNPAUSE")
        return [b.read_reply(timeout=5), s.admin.command("EXISTS", "a", "b"),
                s.info_field("clients", "blocked_clients")]

    assert both(pair, scenario) == [b"+OK\r\n", b":1\r\n", "0"]


def test_unblock_ignores_held_client(ferry):
    """CLIENT UNBLOCK of a client held by a pause: 0, and the client stays
    held (redis-server 7.0.15 crashes here, so this one is ferry's alone)."""
    admin, w = RawClient(ferry.port, timeout=5), RawClient(ferry.port, timeout=5)
    wid = int(w.command("CLIENT", "ID")[1:-2])
    admin.command("CLIENT", "PAUSE", "100000", "WRITE")
    w.send_command("SET", "k", "v")
    deadline = time.monotonic() + 5
    while b"blocked_clients:1" not in admin.command("INFO", "clients"):
        assert time.monotonic() < deadline
        time.sleep(0.005)
    assert admin.command("CLIENT", "UNBLOCK", str(wid)) == b":0\r\n"
    assert pending(w) == NO_REPLY
    admin.command("CLIENT", "UNPAUSE")
    assert w.read_reply(timeout=5) == b"+OK\r\n"
