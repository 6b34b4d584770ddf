"""Zero-copy replies of big values (issue #19): lifetime, limits, sizing.

A GET / MGET / GETEX / SET..GET reply of a string of OUTBUF_REF_MIN (4 KB)
or more is staged as a reference to the stored value's memory (outbuf.h):
the node is pinned, and anything that changes, moves or frees it first
gives every unsent reference its own copy. These tests try every way a
value can change under an unsent reference (in the same pipeline, and under
a slow reader that leaves megabytes in the server's hands: writes, deletes,
expiry, eviction, flushes, lazy free, renames, moves) and require the reply
to carry the bytes the command read, byte for byte as redis-server sends
them. Values are random bytes, a distinct stream per value, so a reply
mixed from two values or from freed memory is seen. They also check the
output limits (referenced bytes count), memory accounting, the reply
buffer cron (DEBUG REPLYBUFFER, CLIENT LIST rbs=) and big arguments.

Every test runs the same steps on ferry and on redis-server (Debian
7.0.15) and compares replies, except where a comment says why not. Run the
file against the sanitizer build too (build/san/ferry-server): a reference
left on freed memory is an ASan report there.
"""
from __future__ import annotations

import functools
import random
import re
import socket

import pytest

from conftest import server_pair
from resp_client import RawClient, encode_command
from polling import poll

KB = 1024
MB = 1024 * KB
KINDS = ["ferry", "redis"]
DEBUG_ON = ("--enable-debug-command", "yes")  # DEBUG DIGEST, REPLYBUFFER


# ------------------------------------------------------------------ helpers
@functools.lru_cache(maxsize=64)
def value(tag: str, n: int) -> bytes:
    """n random bytes, a distinct stream per (tag, n)."""
    return random.Random("%s/%d" % (tag, n)).randbytes(n)


def bulk(v: bytes) -> bytes:
    return b"$%d\r\n%s\r\n" % (len(v), v)


def short(b: bytes) -> str:
    """A failure message that does not print megabytes."""
    return "%d bytes %r...%r" % (len(b), b[:60], b[-20:])


class SmallWindowClient(RawClient):
    """A RawClient whose receive buffer is set before connecting, so the
    kernel cannot absorb the replies the test leaves unread: they stay in
    the server's output (the referenced value, for ferry)."""

    def __init__(self, port, rcvbuf=4096, timeout=30.0):
        self.port, self.host, self.timeout = port, "127.0.0.1", timeout
        self.buf, self.eof = bytearray(), False
        self.sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        self.sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, rcvbuf)
        self.sock.settimeout(timeout)
        self.sock.connect(("127.0.0.1", port))
        self.sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)

    def widen(self):
        """Read faster once the test is done holding the replies back (the
        window scale was fixed at connect, so this helps only a little)."""
        self.sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4 * MB)


def client_info(admin: RawClient, name: str) -> dict | None:
    """CLIENT LIST fields of the client named name (None if gone)."""
    raw = admin.command("CLIENT", "LIST")
    text = raw.split(b"\r\n", 1)[1].decode()
    for line in text.splitlines():
        f = dict(kv.split("=", 1) for kv in line.split(" ") if "=" in kv)
        if f.get("name") == name:
            return f
    return None


def info_int(admin: RawClient, field: str) -> int:
    raw = admin.command("INFO").decode()
    m = re.search(r"^%s:(\d+)\r?$" % re.escape(field), raw, re.M)
    assert m, "INFO has no %s" % field
    return int(m.group(1))


def wait_for(cond, what, timeout: float = 10.0, step: float = 0.02):
    """poll() with the awaited thing first (what: a string or a function)."""
    return poll(cond, timeout, what, step)


def is_ferry(admin: RawClient) -> bool:
    """ferry's INFO has ferry_version (the suite may run with redis-server as
    "ferry" to check itself: then the ferry-only expectations are skipped)."""
    return b"\r\nferry_version:" in admin.command("INFO", "server")


def hold_replies(admin: RawClient, name: str, held: int, last=("get", "mget", "exec")):
    """Wait until the client named name has run its commands (the last one
    in `last`) and the server still holds at least `held` bytes of their
    replies (omem), so that a change of the value now would reach memory a
    reference points into."""
    def ok():
        f = client_info(admin, name)
        return f is not None and f["cmd"] in last and int(f["omem"]) >= held
    wait_for(ok, lambda: "%s to hold >= %d bytes of output (last: %r)" % (name, held, client_info(admin, name)))


def slow_reader(server, name: str) -> SmallWindowClient:
    r = SmallWindowClient(server.port)
    assert r.command("CLIENT", "SETNAME", name) == b"+OK\r\n"
    return r


# ------------------------------------------------------------------ mutations
# Each mutation: the commands that follow `GET k` (k holds the big value
# `old`, db 1's k holds b"db1"); `restore` is a DUMP payload of b"restored"
# made on the same server. They are run in a pipeline after the GET (case 1)
# and from another client while a slow reader holds the GET's reply (case 2).
def _mutations(n: int, restore: bytes):
    new = value("new", n)
    end = str(n - 4)  # writes near the end: bytes a slow reader has surely not been sent
    return {
        "set-same-length": [["SET", "k", new]],
        "set-longer": [["SET", "k", value("new", n + 1000)]],
        "set-short": [["SET", "k", "short"]],
        "set-get": [["SET", "k", new, "GET"], ["SET", "k", value("new2", n)]],
        "getex-then-set": [["GETEX", "k", "PX", "100000"], ["SET", "k", new, "KEEPTTL"]],
        "append": [["APPEND", "k", "tail"]],
        "setrange": [["SETRANGE", "k", "1", "XYZ"], ["SETRANGE", "k", str(n - 2), "QQ"]],
        "setbit": [["SETBIT", "k", str(b), str(1 - old_bit(n, b))] for b in (9, 10, 8 * n - 1)],
        "del": [["DEL", "k"]],
        "unlink": [["UNLINK", "k"]],
        "expire-0": [["EXPIRE", "k", "0"]],
        "pexpireat-1": [["PEXPIREAT", "k", "1"]],
        "expire-then-write": [["EXPIRE", "k", "1000"], ["SETRANGE", "k", end, "ZZZZ"], ["TTL", "k"]],
        "getdel": [["GETDEL", "k"]],
        "rename": [["RENAME", "k", "k2"], ["SETRANGE", "k2", end, "ZZ"], ["GET", "k2"]],
        "move": [["SELECT", "1"], ["DEL", "k"], ["SELECT", "0"], ["MOVE", "k", "1"], ["SELECT", "1"],
                 ["SETRANGE", "k", end, "ZZ"], ["STRLEN", "k"], ["SELECT", "0"]],
        "copy-then-del": [["COPY", "k", "k2"], ["DEL", "k"], ["SETRANGE", "k2", end, "ZZ"], ["GET", "k2"]],
        "flushall": [["FLUSHALL"]],
        "flushall-async": [["FLUSHALL", "ASYNC"]],
        "flushdb-async": [["FLUSHDB", "ASYNC"]],
        "swapdb": [["SWAPDB", "0", "1"], ["SELECT", "1"], ["SETRANGE", "k", end, "ZZ"], ["SELECT", "0"]],
        "restore-replace": [["RESTORE", "k", "0", restore, "REPLACE"]],
        "persist": [["EXPIRE", "k", "1000"], ["PERSIST", "k"], ["SETRANGE", "k", end, "ZZ"]],
        "rename-onto": [["SET", "k2", "other"], ["RENAME", "k2", "k"]],
        "copy-replace-onto": [["SET", "k2", "other"], ["COPY", "k2", "k", "REPLACE"]],
        "mset": [["MSET", "k", "other"]],
        "getset": [["GETSET", "k", new], ["SETRANGE", "k", end, "ZZ"]],
        "set-ex": [["SET", "k", new, "EX", "100"]],
        "bitop-onto": [["SET", "a", "x"], ["BITOP", "NOT", "k", "a"]],
        "sort-store-onto": [["RPUSH", "l", "3", "1", "2"], ["SORT", "l", "STORE", "k"]],
        "lazyfree-del": [["CONFIG", "SET", "lazyfree-lazy-user-del", "yes"], ["DEL", "k"],
                         ["CONFIG", "SET", "lazyfree-lazy-user-del", "no"]],
        "debug-reload": [["DEBUG", "RELOAD"], ["SETRANGE", "k", end, "ZZ"]],
    }


def old_bit(n: int, bit: int) -> int:
    """Bit `bit` of value("old", n), as SETBIT counts (MSB first): the
    setbit mutation flips bits, so that the change is visible."""
    return (value("old", n)[bit // 8] >> (7 - bit % 8)) & 1


MUTATIONS = list(_mutations(16 * KB, b"").keys())


def restore_payload(c: RawClient) -> bytes:
    assert c.command("SET", "tmp", "restored") == b"+OK\r\n"
    raw = c.command("DUMP", "tmp")
    assert c.command("DEL", "tmp") == b":1\r\n"
    return raw.split(b"\r\n", 1)[1][:-2]


def setup_key(c: RawClient, old: bytes) -> None:
    assert c.pipeline([["FLUSHALL"], ["SELECT", "1"], ["SET", "k", "db1"], ["SELECT", "0"],
                       ["SET", "k", old]]) == [b"+OK\r\n"] * 5


# ------------------------------------------------------------------ case 1
@pytest.fixture(scope="module")
def pair_clients():
    """One ferry and one redis-server for the whole module's pipeline cases,
    with a client and the RESTORE payload of each."""
    with server_pair(*DEBUG_ON) as (f, r):
        cs = []
        for s in (f, r):
            c = RawClient(s.port, timeout=60)
            cs.append((s, c, restore_payload(c)))
        yield cs
        for _s, c, _p in cs:
            c.close()


def run_pipeline_case(c: RawClient, payload: bytes, n: int, mutation: str) -> list:
    old = value("old", n)
    setup_key(c, old)
    cmds = [["GET", "k"]] + _mutations(n, payload)[mutation] + [["GET", "k"], ["DBSIZE"]]
    out = c.pipeline(cmds)
    assert out[0] == bulk(old), "first GET before %s: %s" % (mutation, short(out[0]))
    return out


@pytest.mark.parametrize("n", [4 * KB - 1, 4 * KB, 16 * KB, 64 * KB, MB, 8 * MB], ids=["4k-1", "4k", "16k", "64k", "1m", "8m"])
@pytest.mark.parametrize("mutation", MUTATIONS)
def test_pipeline_get_then_change(pair_clients, n, mutation):
    """GET k, then a change of k, then GET k: all in one sendall."""
    got = [run_pipeline_case(c, payload, n, mutation) for _s, c, payload in pair_clients]
    ferry_out, redis_out = got
    assert len(ferry_out) == len(redis_out)
    for i, (a, b) in enumerate(zip(ferry_out, redis_out)):
        assert a == b, "reply %d of %s: ferry %s, redis %s" % (i, mutation, short(a), short(b))
    if mutation in ("set-get", "getex-then-set"):    # both replies are references to the old value
        assert ferry_out[1] == bulk(value("old", n))
    for s, c, _p in pair_clients:
        assert c.command("PING") == b"+PONG\r\n", s


@pytest.mark.parametrize("n", [64 * KB, MB], ids=["64k", "1m"])
def test_one_pipeline_of_every_change(pair_clients, n):
    """Every mutation of case 1 back to back in a single sendall (the key
    set up again before each), so references of earlier GETs are still
    unsent while later commands change the key."""
    old = value("old", n)
    results = []
    for _s, c, payload in pair_clients:
        cmds, firsts = [], []
        for m in MUTATIONS:
            cmds += [["FLUSHALL"], ["SELECT", "1"], ["SET", "k", "db1"], ["SELECT", "0"], ["SET", "k", old]]
            firsts.append(len(cmds))
            cmds += [["GET", "k"]] + _mutations(n, payload)[m] + [["GET", "k"]]
        results.append((cmds, c.pipeline(cmds)))
    (cmds, fo), (_c, ro) = results
    assert len(fo) == len(ro)
    for i, (a, b) in enumerate(zip(fo, ro)):
        assert a == b, "reply %d (%r): ferry %s, redis %s" % (i, cmds[i][0], short(a), short(b))
    for i, m in zip(firsts, MUTATIONS):
        assert fo[i] == bulk(old), "GET before %s: %s" % (m, short(fo[i]))


# ------------------------------------------------------------------ case 2
SLOW_N = 6 * MB


def slow_reader_case(server, mutation: str, kill: bool) -> tuple:
    """A reader with a 4 KB receive buffer sends GET k twice and reads
    nothing; another client applies the mutation (then reuses the freed
    memory with values of the same size); the reader then reads everything.
    With kill, the reader closes after 256 KB instead."""
    old = value("old", SLOW_N)
    with RawClient(server.port, timeout=60) as admin, slow_reader(server, "slow") as r:
        payload = restore_payload(admin)
        setup_key(admin, old)
        r.send(encode_command(["GET", "k"]) * 2)
        hold_replies(admin, "slow", SLOW_N)
        if kill:
            got = 0
            while got < 256 * KB:
                got += len(r.sock.recv(65536))
            r.close()
            wait_for(lambda: client_info(admin, "slow") is None, "the killed reader to be gone")
        replies = [admin.command(*cmd) for cmd in _mutations(SLOW_N, payload)[mutation]]
        # take the memory a freed value had, with other bytes
        assert admin.command("SET", "scribble", value("scribble", SLOW_N)) == b"+OK\r\n"
        if not kill:
            r.widen()
            out = r.read_replies(2, timeout=60)
            assert out[0] == bulk(old), "first GET after %s: %s" % (mutation, short(out[0]))
            assert out[1] == bulk(old), "second GET after %s: %s" % (mutation, short(out[1]))
            assert r.command("PING") == b"+PONG\r\n"
        assert admin.command("PING") == b"+PONG\r\n"
        state = admin.pipeline([["DBSIZE"], ["GET", "k"], ["DEBUG", "DIGEST"], ["SELECT", "1"],
                                ["DBSIZE"], ["SELECT", "0"]])
    return replies, state


@pytest.mark.parametrize("mutation", MUTATIONS)
def test_slow_reader_then_change(pair_clients, mutation):
    (f, _fc, _fp), (r, _rc, _rp) = pair_clients
    got_f = slow_reader_case(f, mutation, kill=False)
    got_r = slow_reader_case(r, mutation, kill=False)
    assert got_f == got_r


@pytest.mark.parametrize("mutation", ["set-same-length", "setrange", "del", "flushall-async", "rename"])
def test_slow_reader_killed_halfway_then_change(pair_clients, mutation):
    (f, _fc, _fp), (r, _rc, _rp) = pair_clients
    got_f = slow_reader_case(f, mutation, kill=True)
    got_r = slow_reader_case(r, mutation, kill=True)
    assert got_f == got_r


@pytest.mark.parametrize("kind", KINDS)
def test_slow_reader_killed_after_change(server_factory, kind):
    """The reference has its own copy (made by the change) when the reader
    goes away: the copy is freed with the client, the server stays up."""
    s = server_factory(kind, *DEBUG_ON)
    old = value("old", SLOW_N)
    with RawClient(s.port, timeout=30) as admin:
        setup_key(admin, old)
        r = slow_reader(s, "slow")
        r.send(encode_command(["GET", "k"]) * 2)
        hold_replies(admin, "slow", SLOW_N)
        assert admin.command("SETRANGE", "k", "0", "ZZ") == b":%d\r\n" % SLOW_N
        r.close()
        wait_for(lambda: client_info(admin, "slow") is None, "the reader to be gone")
        assert admin.command("DEL", "k") == b":1\r\n"
        assert admin.command("DBSIZE") == b":0\r\n"


@pytest.mark.parametrize("kind", KINDS)
def test_slow_readers_of_other_shapes(server_factory, kind):
    """References held by a GET before QUIT, inside EXEC, on a RESP3
    connection, by the client that then deletes the key itself, by several
    readers of one value (one of them killed), and by a reader killed with
    CLIENT KILL; the value changed or freed meanwhile."""
    s = server_factory(kind, *DEBUG_ON)
    n = SLOW_N
    old = value("old", n)
    scribble = ["SET", "scribble", value("scribble", n)]
    with RawClient(s.port, timeout=30) as admin:
        setup_key(admin, old)
        with slow_reader(s, "quit") as r:
            r.send(encode_command(["GET", "k"]) + encode_command(["QUIT"]))
            hold_replies(admin, "quit", n // 2, last=("quit",))
            assert admin.command("SETRANGE", "k", str(n - 2), "ZZ") == b":%d\r\n" % n
            r.widen()
            assert r.read_until_eof(timeout=30) == bulk(old) + b"+OK\r\n"

        setup_key(admin, old)
        with slow_reader(s, "multi") as r:
            r.send(b"".join(encode_command(c) for c in [["MULTI"], ["GET", "k"], ["GET", "k"], ["EXEC"]]))
            hold_replies(admin, "multi", n)
            assert admin.pipeline([["DEL", "k"], scribble]) == [b":1\r\n", b"+OK\r\n"]
            r.widen()
            assert r.read_replies(4) == [b"+OK\r\n", b"+QUEUED\r\n", b"+QUEUED\r\n", b"*2\r\n" + bulk(old) * 2]

        setup_key(admin, old)
        with slow_reader(s, "resp3") as r:
            assert r.command("HELLO", "3").startswith(b"%")
            r.send(encode_command(["GET", "k"]) * 2)
            hold_replies(admin, "resp3", n)
            assert admin.pipeline([["FLUSHALL"], scribble]) == [b"+OK\r\n"] * 2
            r.widen()
            assert r.read_replies(2) == [bulk(old)] * 2

        setup_key(admin, old)
        with slow_reader(s, "self") as r:
            r.send(b"".join(encode_command(c) for c in [["GET", "k"], ["GET", "k"], ["DEL", "k"], ["SET", "k", "x"]]))
            wait_for(lambda: admin.command("GET", "k") == b"$1\r\nx\r\n", "the reader's own DEL and SET")
            assert admin.command(*scribble) == b"+OK\r\n"
            r.widen()
            assert r.read_replies(4) == [bulk(old)] * 2 + [b":1\r\n", b"+OK\r\n"]

        setup_key(admin, old)
        readers = [slow_reader(s, "r%d" % i) for i in range(4)]
        for r in readers:
            r.send(encode_command(["GET", "k"]))
        for i in range(4):
            hold_replies(admin, "r%d" % i, n // 2)
        assert admin.command("SET", "k", value("new", n)) == b"+OK\r\n"
        readers[1].close()
        assert admin.pipeline([["DEL", "k"], scribble]) == [b":1\r\n", b"+OK\r\n"]
        for i, r in enumerate(readers):
            if i != 1:
                r.widen()
                assert r.read_reply() == bulk(old), "reader %d" % i
            r.close()

        setup_key(admin, old)
        with slow_reader(s, "killed") as r:
            r.send(encode_command(["GET", "k"]) * 2)
            hold_replies(admin, "killed", n)
            cid = client_info(admin, "killed")["id"]
            assert admin.command("CLIENT", "KILL", "ID", cid) == b":1\r\n"
            assert admin.pipeline([["DEL", "k"], scribble, ["DBSIZE"]]) == [b":1\r\n", b"+OK\r\n", b":1\r\n"]
        assert admin.command("PING") == b"+PONG\r\n"


@pytest.mark.parametrize("kind", KINDS)
def test_many_references_between_small_replies(server_factory, kind):
    """600 GETs of four 20 KB values, each followed by a PING or an ECHO,
    unread: hundreds of references with ring bytes between them, more than
    one writev's iovecs; then every value is changed, one deleted and all
    flushed before the reader reads."""
    s = server_factory(kind, *DEBUG_ON)
    n, count = 20000, 600
    vals = [value("v%d" % i, n) for i in range(4)]
    cmds, want = [], []
    for j in range(count):
        small = ["PING"] if j % 3 else ["ECHO", "x" * (j % 50)]
        cmds += [["GET", "k%d" % (j % 4)], small]
        want += [bulk(vals[j % 4]), b"+PONG\r\n" if j % 3 else bulk(b"x" * (j % 50))]
    with RawClient(s.port, timeout=30) as admin, slow_reader(s, "many") as r:
        assert admin.command("MSET", *[x for i, v in enumerate(vals) for x in ("k%d" % i, v)]) == b"+OK\r\n"
        r.send(b"".join(encode_command(c) for c in cmds))
        hold_replies(admin, "many", 4 * MB, last=("ping", "echo"))
        for i in range(4):
            assert admin.command("SETRANGE", "k%d" % i, str(n - 3), "ZZZ") == b":%d\r\n" % n
        assert admin.pipeline([["DEL", "k1"], ["FLUSHALL", "ASYNC"]]) == [b":1\r\n", b"+OK\r\n"]
        r.widen()
        got = r.read_replies(len(cmds), timeout=60)
        bad = [i for i, (g, w) in enumerate(zip(got, want)) if g != w]
        assert not bad, "replies %s differ, first: %s" % (bad[:10], short(got[bad[0]]))


# ------------------------------------------------------------------ case 3
@pytest.mark.parametrize("kind", KINDS)
def test_eviction_under_slow_reader(server_factory, kind):
    s = server_factory(kind, *DEBUG_ON, "--maxmemory", "64mb", "--maxmemory-policy", "allkeys-lru")
    n = 6 * MB
    with RawClient(s.port, timeout=30) as admin:
        for i in range(4):
            assert admin.command("SET", "big:%d" % i, value("big%d" % i, n)) == b"+OK\r\n"
        r = slow_reader(s, "slow")
        r.send(encode_command(["GET", "big:0"]) + encode_command(["GET", "big:1"]))
        hold_replies(admin, "slow", n)
        i = 0

        def evicted():
            nonlocal i
            if admin.command("EXISTS", "big:0", "big:1") == b":0\r\n":
                return True
            # an OOM refusal is fine (Redis counts the unread output): keep trying
            admin.command("SET", "filler:%d" % i, value("filler", n))
            i += 1
            return False
        wait_for(evicted, "big:0 and big:1 to be evicted", timeout=20)
        assert info_int(admin, "evicted_keys") >= 2
        r.widen()
        out = r.read_replies(2, timeout=60)
        assert out[0] == bulk(value("big0", n)), short(out[0])
        assert out[1] == bulk(value("big1", n)), short(out[1])
        r.close()
        assert admin.command("PING") == b"+PONG\r\n"


# ------------------------------------------------------------------ case 4
@pytest.mark.parametrize("kind", KINDS)
def test_active_expiry_under_slow_reader(server_factory, kind):
    s = server_factory(kind, *DEBUG_ON)
    n = SLOW_N
    old = value("old", n)
    with RawClient(s.port, timeout=30) as admin:
        setup_key(admin, old)
        assert admin.command("SELECT", "1") == b"+OK\r\n"
        assert admin.command("FLUSHDB") == b"+OK\r\n"
        assert admin.command("SELECT", "0") == b"+OK\r\n"
        r = slow_reader(s, "slow")
        # one sendall: the GETs run right after the PEXPIRE, well before it fires
        r.send(encode_command(["PEXPIRE", "k", "50"]) + encode_command(["GET", "k"]) * 2)
        hold_replies(admin, "slow", n)
        wait_for(lambda: admin.command("DBSIZE") == b":0\r\n", "active expiry to remove k")
        assert info_int(admin, "expired_keys") == 1
        for i in range(3):
            assert admin.command("SET", "scribble:%d" % i, value("scribble%d" % i, n)) == b"+OK\r\n"
        r.widen()
        out = r.read_replies(3, timeout=60)
        assert out == [b":1\r\n", bulk(old), bulk(old)], [short(x) for x in out]
        r.close()


# ------------------------------------------------------------------ case 5
SCRIPT_GET = "return redis.call('GET', KEYS[1])"
SCRIPT_GET_DEL = "local v = redis.call('GET', KEYS[1]); redis.call('DEL', KEYS[1]); return v"


def mixed_commands(n: int) -> list:
    return [
        ["MSET", "b1", value("b1", n), "b2", value("b2", n), "s1", "small1", "b3", value("b3", n),
         "s2", value("s2", 100)],
        ["MGET", "b1", "s1", "b2", "nokey", "b3", "s2", "b1"],
        ["MGET", "b3", "b2"], ["DEL", "b3"], ["SET", "b2", value("b2x", n)],
        ["MULTI"], ["GET", "b1"], ["DEL", "b1"], ["GET", "b1"], ["EXEC"],
        ["SET", "b1", value("b1", n)],
        ["EVAL", SCRIPT_GET, "1", "b1"],
        ["EVAL", SCRIPT_GET_DEL, "1", "b1"],
        ["SET", "b1", value("b1y", n)],
        ["GET", "b2"], ["EVAL", SCRIPT_GET_DEL, "1", "b2"], ["SET", "b2", "x"],
        ["MULTI"], ["MGET", "b1", "s1"], ["SET", "b1", value("b1z", n), "GET"], ["GETEX", "b1", "PERSIST"],
        ["APPEND", "b1", "!"], ["EXEC"],
        ["GETDEL", "b1"], ["DBSIZE"],
    ]


@pytest.mark.parametrize("proto", [2, 3])
@pytest.mark.parametrize("n", [16 * KB, 2 * MB], ids=["16k", "2m"])
def test_mget_multi_scripts(server_factory, proto, n):
    outs = []
    for kind in KINDS:
        s = server_factory(kind, *DEBUG_ON)
        with RawClient(s.port, timeout=30) as c:
            if proto == 3:
                assert c.command("HELLO", "3").startswith(b"%")
            cmds = mixed_commands(n)
            outs.append(c.pipeline(cmds))
    fo, ro = outs
    for i, (a, b) in enumerate(zip(fo, ro)):
        assert a == b, "reply %d (%r): ferry %s, redis %s" % (i, cmds[i][0], short(a), short(b))
    # script replies are read back by the server: the exact bytes of the value
    assert fo[11] == bulk(value("b1", n)) and fo[12] == bulk(value("b1", n))
    assert fo[15] == bulk(value("b2x", n))


@pytest.mark.parametrize("kind", KINDS)
def test_mget_slow_reader_then_flushall(server_factory, kind):
    s = server_factory(kind, *DEBUG_ON)
    n = 3 * MB
    with RawClient(s.port, timeout=30) as admin:
        assert admin.command("MSET", "a", value("a", n), "s", "small", "b", value("b", n)) == b"+OK\r\n"
        r = slow_reader(s, "slow")
        r.send(encode_command(["MGET", "a", "s", "b", "a"]))
        hold_replies(admin, "slow", 4 * MB)
        assert admin.command("SETRANGE", "a", "0", "ZZ") == b":%d\r\n" % n
        assert admin.command("FLUSHALL", "ASYNC") == b"+OK\r\n"
        assert admin.command("SET", "scribble", value("scribble", n)) == b"+OK\r\n"
        r.widen()
        out = r.read_reply(timeout=60)
        want = b"*4\r\n" + bulk(value("a", n)) + bulk(b"small") + bulk(value("b", n)) + bulk(value("a", n))
        assert out == want, short(out)
        r.close()


# ------------------------------------------------------------------ case 6
@pytest.mark.parametrize("kind", KINDS)
def test_output_limit_counts_referenced_bytes(server_factory, kind):
    s = server_factory(kind, *DEBUG_ON, "--client-output-buffer-limit", "normal 1mb 0 0")
    v = value("v", 512 * KB)
    with RawClient(s.port, timeout=30) as admin:
        assert admin.command("SET", "v", v) == b"+OK\r\n"
        # one GET (512 KB staged) stays under the limit
        r = slow_reader(s, "one")
        r.send(encode_command(["GET", "v"]))
        assert r.read_reply(timeout=30) == bulk(v)
        r.close()
        # eight GETs in one batch: closed once more than 1 MB is staged
        r = slow_reader(s, "many")
        r.send(encode_command(["GET", "v"]) * 8)
        data = r.read_until_eof(timeout=10)
        assert len(data) < 3 * len(bulk(v)), "got %d bytes before the close" % len(data)
        assert (bulk(v) * 8).startswith(data)
        r.close()
        wait_for(lambda: client_info(admin, "many") is None, "the limited client to be gone")
        assert admin.command("GET", "v") == bulk(v)


@pytest.mark.parametrize("kind", KINDS)
def test_used_memory_with_unread_references(server_factory, kind):
    """Deliberate difference: while a big reply is unread, ferry's
    used_memory does not include its value bytes (they are not copied, the
    reply points at the stored value), where redis-server's grows by the
    reply. Once the value changes or is deleted under the unread reply the
    copy is made and ferry's used_memory grows too."""
    s = server_factory(kind, *DEBUG_ON)
    n = 8 * MB
    with RawClient(s.port, timeout=30) as admin:
        u0 = info_int(admin, "used_memory")
        assert admin.command("SET", "k", value("old", n)) == b"+OK\r\n"
        u1 = info_int(admin, "used_memory")
        r = slow_reader(s, "slow")
        r.send(encode_command(["GET", "k"]) * 2)
        hold_replies(admin, "slow", n)
        u2 = info_int(admin, "used_memory")
        ferry = is_ferry(admin)
        if ferry:
            assert u2 - u1 < MB, "ferry copied the referenced value: +%d" % (u2 - u1)
        else:
            assert u2 - u1 > 4 * MB
        assert admin.command("SETRANGE", "k", "0", "ZZ") == b":%d\r\n" % n
        u3 = info_int(admin, "used_memory")
        if ferry:  # the unsent bytes (>= 8 MB held) were copied
            assert u3 - u2 > 4 * MB, "no copy made by the write: +%d" % (u3 - u2)
        assert admin.command("DEL", "k") == b":1\r\n"
        u4 = info_int(admin, "used_memory")
        assert u4 - u0 > 4 * MB, "the unread reply's bytes are gone: +%d" % (u4 - u0)
        r.widen()
        out = r.read_replies(2, timeout=60)
        assert out == [bulk(value("old", n))] * 2, [short(x) for x in out]
        wait_for(lambda: info_int(admin, "used_memory") - u0 < MB, "used_memory to fall back")
        r.close()


# ------------------------------------------------------------------ case 7
@pytest.mark.parametrize("kind", KINDS)
def test_reply_buffers_shrink_after_big_replies(server_factory, kind):
    s = server_factory(kind, *DEBUG_ON)
    with RawClient(s.port, timeout=60) as admin:
        # no window reset until the replies are in: the 1 MB one must have grown mid's buffer
        assert admin.command("DEBUG", "REPLYBUFFER", "PEAK-RESET-TIME", "never") == b"+OK\r\n"
        assert admin.command("SETRANGE", "huge", str(64 * MB - 1), "x") == b":%d\r\n" % (64 * MB)
        assert admin.command("SETRANGE", "mid", str(MB - 1), "y") == b":%d\r\n" % MB
        u0 = info_int(admin, "used_memory")
        big = RawClient(s.port, timeout=60)
        mid = RawClient(s.port, timeout=60)
        assert big.command("CLIENT", "SETNAME", "big") == b"+OK\r\n"
        assert mid.command("CLIENT", "SETNAME", "mid") == b"+OK\r\n"
        out = big.command("GETRANGE", "huge", "0", "-1")    # copied, not referenced
        assert out == bulk(b"\0" * (64 * MB - 1) + b"x")
        out = mid.command("GETRANGE", "mid", "0", "-1")
        assert out == bulk(b"\0" * (MB - 1) + b"y")
        del out
        assert int(client_info(admin, "mid")["rbs"]) > 2048
        # the window is 5 s by default: a shorter one keeps the test short
        assert admin.command("DEBUG", "REPLYBUFFER", "PEAK-RESET-TIME", "500") == b"+OK\r\n"

        def shrunk():
            fb, fm = client_info(admin, "big"), client_info(admin, "mid")
            return int(fb["rbs"]) <= 2048 and int(fm["rbs"]) <= 2048 and \
                info_int(admin, "used_memory") - u0 < 256 * KB
        wait_for(shrunk, lambda: "rbs <= 2048 and used_memory back (big: %r, mid: %r, used_memory %+d)"
                 % (client_info(admin, "big"), client_info(admin, "mid"), info_int(admin, "used_memory") - u0),
                 timeout=15, step=0.2)
        assert big.command("PING") == b"+PONG\r\n" and mid.command("PING") == b"+PONG\r\n"
        big.close()
        mid.close()


@pytest.mark.parametrize("kind", KINDS)
def test_replybuffer_peak_reset_time(server_factory, kind):
    """Redis's unit/replybufsize, step by step."""
    s = server_factory(kind, *DEBUG_ON)
    with RawClient(s.port) as admin, RawClient(s.port) as tc:
        assert admin.command("DEBUG", "REPLYBUFFER", "PEAK-RESET-TIME", "100") == b"+OK\r\n"
        assert tc.command("CLIENT", "SETNAME", "test_client") == b"+OK\r\n"
        assert tc.command("PING") == b"+PONG\r\n"

        def rbs():
            return int(client_info(admin, "test_client")["rbs"])
        wait_for(lambda: 1024 <= rbs() < 2046, lambda: "idle rbs in [1024, 2046) (now %d)" % rbs(),
                 timeout=3, step=0.1)
        v = b"x" * 32768
        assert admin.command("SET", "bigval", v) == b"+OK\r\n"
        assert admin.command("DEBUG", "REPLYBUFFER", "PEAK-RESET-TIME", "never") == b"+OK\r\n"

        def busy():
            assert tc.command("GET", "bigval") == bulk(v)
            return 16384 <= rbs() < 32768
        wait_for(busy, lambda: "busy rbs in [16384, 32768) (now %d)" % rbs(), timeout=3, step=0.1)
        assert admin.command("DEBUG", "REPLYBUFFER", "PEAK-RESET-TIME", "reset") == b"+OK\r\n"


# ------------------------------------------------------------------ case 8
def send_in_pieces(c: RawClient, data: bytes, piece: int) -> None:
    for i in range(0, len(data), piece):
        c.sock.sendall(data[i:i + piece])


@pytest.mark.parametrize("n", [MB, 64 * MB], ids=["1m", "64m"])
@pytest.mark.parametrize("how", ["one-write", "pieces"])
def test_big_arguments(server_factory, n, how):
    """A big SET (then PING) in one write, or a few KB at a time: the value
    is stored exactly (its bytes read back: all of a 1 MB one, slices of a
    64 MB one, and DEBUG DIGEST-VALUE equal to redis-server's)."""
    v = value("arg", n)
    req = encode_command(["SET", "k", v]) + encode_command(["PING"])
    piece = 3000 if n <= MB else 8 * KB
    slices = [(0, 9999), (n // 2 - 5000, n // 2 + 5000), (piece * 7 - 10, piece * 7 + 10), (n - 7000, n - 1)]
    results = []
    for kind in KINDS:
        s = server_factory(kind, *DEBUG_ON)
        with RawClient(s.port, timeout=60) as c:
            if how == "one-write":
                c.send(req)
            else:
                send_in_pieces(c, req, piece)
            assert c.read_replies(2) == [b"+OK\r\n", b"+PONG\r\n"]
            assert c.command("STRLEN", "k") == b":%d\r\n" % n
            if n <= MB:
                got = c.command("GET", "k")
                assert got == bulk(v), short(got)
            for a, b in slices:
                assert c.command("GETRANGE", "k", str(a), str(b)) == bulk(v[a:b + 1]), (a, b)
            assert c.command("PING") == b"+PONG\r\n"
            results.append(c.command("DEBUG", "DIGEST-VALUE", "k"))
    assert results[0] == results[1]


@pytest.mark.parametrize("how", ["header-first", "one-write"])
def test_argument_over_proto_max_bulk_len(server_factory, how):
    limit = MB
    outcome = []
    for kind in KINDS:
        s = server_factory(kind, *DEBUG_ON)
        with RawClient(s.port, timeout=30) as admin, RawClient(s.port, timeout=30) as c:
            assert admin.command("CONFIG", "SET", "proto-max-bulk-len", "1mb") == b"+OK\r\n"
            assert c.command("SET", "k", value("at", limit)) == b"+OK\r\n"  # exactly the limit: fine
            over = encode_command(["SET", "k", value("over", limit + 1)])
            head = over[:over.index(b"$%d\r\n" % (limit + 1)) + len(b"$%d\r\n" % (limit + 1))]
            try:
                c.send(head if how == "header-first" else over)
            except (BrokenPipeError, ConnectionResetError):
                pass
            data = c.read_until_eof(timeout=10)
            if how == "header-first":
                outcome.append(data)
            else:  # the close may overtake the error (the server did not read all we sent)
                assert b"-ERR Protocol error: invalid bulk length\r\n".startswith(data)
            assert admin.command("GET", "k") == bulk(value("at", limit))
            assert admin.command("PING") == b"+PONG\r\n"
            wait_for(lambda: info_int(admin, "connected_clients") == 1, "the refused client to be gone")
    if how == "header-first":
        assert outcome[0] == outcome[1] == b"-ERR Protocol error: invalid bulk length\r\n"
