"""Big arguments read into blocks of their own (issue #19, io/aside.c).

A bulk argument of 32 KB or more that has not mostly arrived when a pass
over the client's input ends is received into a block of its own, shaped so
that SET, SETEX, PSETEX, GETSET and SETNX store it as the key's node without
copying it. These tests send big arguments so that they arrive in two parts
(the request's head and the start of the payload, a pause, then the rest:
the server has parsed the head and waits for the payload) and in small
pieces, in every shape the block can be used in or refused by, and compare
every reply and the stored values (DEBUG DIGEST) with redis-server's. They
also cover what happens to a block while it fills or waits: CLIENT PAUSE,
MULTI, a killed client, client-query-buffer-limit, and the memory a big SET
takes at its peak.
"""
from __future__ import annotations

import functools
import random
import re
import time

import pytest

from resp_client import RawClient, encode_command
from polling import poll

KB = 1024
MB = 1024 * KB
KINDS = ["ferry", "redis"]
DEBUG_ON = ("--enable-debug-command", "yes")


@functools.lru_cache(maxsize=64)
def value(tag: str, n: int) -> bytes:
    return random.Random("%s/%d" % (tag, n)).randbytes(n)


def send_split(c: RawClient, req: bytes, head_extra: int = 1000, piece: int = 0) -> None:
    """Send req so that the server sees the head of its (first) big bulk
    before the rest: up to head_extra payload bytes after the first header
    of 32 KB or more, a pause, then the rest (in pieces of `piece` bytes if
    given)."""
    m = re.search(rb"\$(\d{5,})\r\n", req)
    assert m and int(m.group(1)) >= 32 * KB
    cut = m.end() + head_extra
    c.send(req[:cut])
    time.sleep(0.03)
    rest = req[cut:]
    step = piece or len(rest)
    for i in range(0, len(rest), step):
        c.send(rest[i:i + step])


def info_int(c: RawClient, field: str) -> int:
    m = re.search(r"^%s:(\d+)\r?$" % re.escape(field), c.command("INFO").decode(), re.M)
    assert m, field
    return int(m.group(1))


def digest(c: RawClient) -> bytes:
    return c.command("DEBUG", "DIGEST")


BIG = 40 * KB
# (name, setup commands, the command with big arguments, checks after)
SHAPES = [
    ("set", [], ["SET", "k", value("v", BIG)], [["GET", "k"], ["TTL", "k"]]),
    ("set-ex", [], ["SET", "k", value("v", BIG), "EX", "100"], [["GET", "k"], ["TTL", "k"]]),
    ("set-px-nx-new", [], ["SET", "k", value("v", BIG), "PX", "100000", "NX"], [["GET", "k"], ["TTL", "k"]]),
    ("set-nx-exists", [["SET", "k", "old"]], ["SET", "k", value("v", BIG), "NX"], [["GET", "k"]]),
    ("set-xx-get", [["SET", "k", "old"]], ["SET", "k", value("v", BIG), "XX", "GET"], [["GET", "k"]]),
    ("set-nx-get-5args", [], ["SET", "k", value("v", BIG), "NX", "GET"], [["GET", "k"], ["TTL", "k"]]),
    ("set-keepttl", [["SET", "k", "old", "EX", "500"]], ["SET", "k", value("v", BIG), "KEEPTTL"],
     [["GET", "k"], ["TTL", "k"]]),
    ("set-over-ttl", [["SET", "k", "old", "EX", "500"]], ["SET", "k", value("v", BIG)], [["GET", "k"], ["TTL", "k"]]),
    ("set-same-size", [["SET", "k", value("w", BIG)]], ["SET", "k", value("v", BIG)], [["GET", "k"]]),
    ("set-wrongtype-old", [["RPUSH", "k", "a"]], ["SET", "k", value("v", BIG)], [["GET", "k"], ["TYPE", "k"]]),
    ("setex", [], ["SETEX", "k", "100", value("v", BIG)], [["GET", "k"], ["TTL", "k"]]),
    ("psetex", [], ["PSETEX", "k", "100000", value("v", BIG)], [["GET", "k"], ["TTL", "k"]]),
    ("setex-bad-ttl", [], ["SETEX", "k", "-5", value("v", BIG)], [["EXISTS", "k"]]),
    ("getset", [["SET", "k", "old"]], ["GETSET", "k", value("v", BIG)], [["GET", "k"]]),
    ("setnx-new", [], ["SETNX", "k", value("v", BIG)], [["GET", "k"]]),
    ("setnx-exists", [["SET", "k", "old"]], ["SETNX", "k", value("v", BIG)], [["GET", "k"]]),
    ("mset-same-key", [], ["MSET", "k", value("v", BIG), "k", value("w", BIG)], [["GET", "k"]]),
    ("mset-two", [], ["MSET", "k", value("v", BIG), "j", value("w", BIG + 7)], [["GET", "k"], ["GET", "j"]]),
    ("msetnx", [], ["MSETNX", "k", value("v", BIG), "j", "small"], [["GET", "k"], ["GET", "j"]]),
    ("append-new", [], ["APPEND", "k", value("v", BIG)], [["GET", "k"]]),
    ("append-old", [["SET", "k", "old"]], ["APPEND", "k", value("v", BIG)], [["GET", "k"]]),
    ("big-key", [], ["SET", value("key", BIG), value("v", BIG)], [["GET", value("key", BIG)]]),
    ("hset", [], ["HSET", "h", value("f", BIG), value("v", BIG), "g", "1"],
     [["HGET", "h", value("f", BIG)], ["HGET", "h", "g"], ["HLEN", "h"]]),
    ("rpush", [], ["RPUSH", "l", "a", value("v", BIG), "b"], [["LRANGE", "l", "0", "-1"]]),
    ("sadd", [], ["SADD", "s", value("v", BIG)], [["SMEMBERS", "s"]]),
    ("zadd", [], ["ZADD", "z", "1", value("v", BIG)], [["ZRANGE", "z", "0", "-1"]]),
    ("echo", [], ["ECHO", value("v", BIG)], []),
    ("unknown-cmd", [], ["NOSUCHCMD", "k", value("v", BIG)], []),
    ("wrong-arity", [], ["SET", value("v", BIG)], []),
    ("eval", [], ["EVAL", "return redis.call('SET', KEYS[1], ARGV[1])", "1", "k", value("v", BIG)], [["GET", "k"]]),
]


def run_shape(s, setup, cmd, checks, how):
    out = []
    with RawClient(s.port, timeout=30) as c:
        for a in setup:
            c.command(*a)
        req = encode_command(cmd) + encode_command(["PING"])
        if how == "split":
            send_split(c, req)
        elif how == "pieces":
            send_split(c, req, head_extra=10, piece=4000)
        else:
            c.send(req)
        out += c.read_replies(2)
        for a in checks:
            out.append(c.command(*a))
        out.append(digest(c))
    return out


@pytest.mark.parametrize("how", ["split", "pieces", "one-write"])
@pytest.mark.parametrize("name,setup,cmd,checks", SHAPES, ids=[s[0] for s in SHAPES])
def test_shapes(server_factory, name, setup, cmd, checks, how):
    """Every reply and the whole dataset (DEBUG DIGEST) as redis-server's."""
    got = [run_shape(server_factory(kind, *DEBUG_ON), setup, cmd, checks, how) for kind in KINDS]
    assert got[0] == got[1]


@pytest.mark.parametrize("n", [64 * KB, MB, 8 * MB])
def test_pipeline_of_big_sets_then_reads(server_factory, n):
    """Big SETs pipelined behind and before other requests, several to the
    same key, in one stream written in uneven pieces: every reply and value
    as redis-server's."""
    reqs = []
    for i in range(6):
        reqs.append(["SET", "k%d" % (i % 3), value("p%d" % i, n)])
        reqs.append(["GET", "k%d" % ((i + 1) % 3)])
        reqs.append(["SETEX", "e%d" % i, "100", value("e%d" % i, n // 2)])
        reqs.append(["STRLEN", "k%d" % (i % 3)])
    stream = b"".join(encode_command(r) for r in reqs)
    rng = random.Random(n)
    got = []
    for kind in KINDS:
        s = server_factory(kind, *DEBUG_ON)
        with RawClient(s.port, timeout=60) as c:
            pos = 0
            while pos < len(stream):
                step = rng.choice([1, 7, 100, 4096, 40000, 300000])
                c.send(stream[pos:pos + step])
                pos += step
            got.append((c.read_replies(len(reqs)), digest(c)))
    assert got[0] == got[1]


def test_pause_holds_a_big_set(server_factory):
    """CLIENT PAUSE WRITE holds a SET whose value arrived into a block; it
    runs, with its value, once the pause ends."""
    v = value("pause", MB)
    for kind in KINDS:
        s = server_factory(kind)
        with RawClient(s.port) as admin, RawClient(s.port, timeout=30) as c:
            assert admin.command("SET", "k", "old") == b"+OK\r\n"
            assert admin.command("CLIENT", "PAUSE", "400", "WRITE") == b"+OK\r\n"
            send_split(c, encode_command(["SET", "k", v]) + encode_command(["STRLEN", "k"]))
            time.sleep(0.1)
            assert admin.command("GET", "k") == b"$3\r\nold\r\n"
            assert c.read_replies(2, timeout=10) == [b"+OK\r\n", b":%d\r\n" % len(v)]
            assert admin.command("GET", "k") == b"$%d\r\n%s\r\n" % (len(v), v)


def test_multi_queues_a_big_set(server_factory):
    v = value("multi", MB)
    got = []
    for kind in KINDS:
        s = server_factory(kind, *DEBUG_ON)
        with RawClient(s.port, timeout=30) as c:
            req = b"".join(encode_command(r) for r in (["MULTI"], ["SET", "k", v], ["SETEX", "j", "9", v],
                                                      ["STRLEN", "k"], ["EXEC"]))
            c.send(req[:20])
            send_split(c, req[20:])
            got.append((c.read_replies(5), digest(c)))
    assert got[0] == got[1]


@pytest.mark.parametrize("kind", KINDS)
def test_client_killed_while_its_block_fills(server_factory, kind):
    """A client killed halfway through a 4 MB argument: nothing is stored,
    the server serves others, and (ferry) its memory comes back."""
    s = server_factory(kind)
    with RawClient(s.port) as admin:
        base = info_int(admin, "used_memory")
        c = RawClient(s.port, timeout=30)
        try:
            assert c.command("CLIENT", "SETNAME", "victim") == b"+OK\r\n"
            req = encode_command(["SET", "k", value("kill", 4 * MB)])
            c.send(req[:2 * MB])
            poll(lambda: b"name=victim" in admin.command("CLIENT", "LIST") and
                 int(re.search(rb"name=victim .*?qbuf=(\d+)", admin.command("CLIENT", "LIST")).group(1)) > MB,
                 10, "the victim's half argument to arrive")
            assert admin.command("CLIENT", "KILL", "SKIPME", "yes", "USER", "default") == b":1\r\n"
        finally:
            c.close()
        assert admin.command("EXISTS", "k") == b":0\r\n"
        assert admin.command("SET", "after", "1") == b"+OK\r\n"
        poll(lambda: info_int(admin, "connected_clients") == 1, 10, "the victim to be gone")
        if kind == "ferry":
            poll(lambda: info_int(admin, "used_memory") < base + 512 * KB, 10, "the block to be freed")


@pytest.mark.parametrize("how", ["split", "pieces"])
def test_query_buffer_limit_counts_the_block(server_factory, how):
    """client-query-buffer-limit closes a client whose argument grows past
    it, wherever the argument's bytes are held; the server goes on."""
    got = []
    for kind in KINDS:
        s = server_factory(kind)
        with RawClient(s.port) as admin, RawClient(s.port, timeout=30) as c:
            assert admin.command("CONFIG", "SET", "client-query-buffer-limit", "1mb") == b"+OK\r\n"
            req = encode_command(["SET", "k", value("qbl", 3 * MB)])
            try:
                send_split(c, req, piece=64 * KB if how == "pieces" else 0)
            except (BrokenPipeError, ConnectionResetError):
                pass
            got.append(c.read_until_eof(timeout=10))
            assert admin.command("EXISTS", "k") == b":0\r\n"
            poll(lambda: info_int(admin, "connected_clients") == 1, 10, "the client to be closed")
    assert got == [b"", b""]


def vm_hwm_mb(pid: int) -> int:
    with open("/proc/%d/status" % pid) as f:
        for line in f:
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) // 1024
    raise AssertionError("no VmHWM")


def sanitized(pid: int) -> bool:
    with open("/proc/%d/maps" % pid) as f:
        return "libasan" in f.read()


@pytest.mark.parametrize("piece", [0, 64 * KB], ids=["one-write", "64k-pieces"])
@pytest.mark.parametrize("kind", KINDS)
def test_peak_memory_of_a_big_set(server_factory, kind, piece):
    """A 64 MB SET raises the server's resident high-water mark by about
    the value's size, not twice it (the query buffer and then the node)."""
    s = server_factory(kind)
    if sanitized(s.proc.pid):
        pytest.skip("ASan's allocator keeps freed blocks in quarantine")
    n = 64 * MB
    with RawClient(s.port, timeout=60) as c:
        assert c.command("PING") == b"+PONG\r\n"
        before = vm_hwm_mb(s.proc.pid)
        req = encode_command(["SET", "k", value("peak", n)])
        if piece:
            for i in range(0, len(req), piece):
                c.send(req[i:i + piece])
        else:
            c.send(req)
        assert c.read_reply() == b"+OK\r\n"
        assert c.command("STRLEN", "k") == b":%d\r\n" % n
        grew = vm_hwm_mb(s.proc.pid) - before
    assert grew < 64 * 1.25, "the high-water mark grew by %d MB for a 64 MB value" % grew


def qbuf_fields(admin: RawClient, name: str) -> tuple:
    line = [l for l in admin.command("CLIENT", "LIST").decode().split("\n") if "name=%s " % name in l][0]
    f = dict(kv.split("=", 1) for kv in line.split() if "=" in kv)
    return int(f["qbuf"]), int(f["qbuf-free"])


@pytest.mark.parametrize("kind", KINDS)
def test_room_for_the_next_big_argument_then_given_back(server_factory, kind):
    """After a 1 MB SET the client keeps room for another argument that big
    (CLIENT LIST qbuf-free), as redis-server keeps a query buffer of the
    argument's size; a second big SET uses it; idle, the room is given
    back and used_memory falls by about its size."""
    s = server_factory(kind)
    with RawClient(s.port) as admin, RawClient(s.port, timeout=30) as c:
        assert c.command("CLIENT", "SETNAME", "big") == b"+OK\r\n"
        send_split(c, encode_command(["SET", "k", value("room", MB)]))
        assert c.read_reply() == b"+OK\r\n"
        assert qbuf_fields(admin, "big")[1] >= MB
        send_split(c, encode_command(["SET", "j", value("room2", MB)]))
        assert c.read_reply() == b"+OK\r\n"
        assert c.command("STRLEN", "j") == b":%d\r\n" % MB
        held = info_int(admin, "used_memory")
        poll(lambda: qbuf_fields(admin, "big")[1] < 32 * KB, 10, "the room to be given back")
        assert info_int(admin, "used_memory") < held - MB // 2
        assert c.command("GET", "k") == b"$%d\r\n%s\r\n" % (MB, value("room", MB))


def test_smaller_big_value_after_a_bigger_one_keeps_no_slack(server_factory):
    """The block kept for the next big argument is sized for the last one;
    a smaller value stored from it is trimmed first, so the key's memory is
    about its value's, as redis-server trims a query buffer it keeps as the
    value (its "trim on SET with big value", jemalloc-only there). Checked
    on ferry only: MEMORY USAGE is allocator-specific."""
    s = server_factory("ferry")
    with RawClient(s.port, timeout=30) as c:
        for first, second in ((100000, 33000), (MB, 40000), (300000, 200000)):
            send_split(c, encode_command(["SET", "key", value("trim1", first)]))
            assert c.read_reply() == b"+OK\r\n"
            send_split(c, encode_command(["SET", "key", value("trim2", second)]))
            assert c.read_reply() == b"+OK\r\n"
            usage = int(c.command("MEMORY", "USAGE", "key")[1:-2])
            assert second <= usage < second + second // 10 + 256, (first, second, usage)
            assert c.command("GET", "key") == b"$%d\r\n%s\r\n" % (second, value("trim2", second))
