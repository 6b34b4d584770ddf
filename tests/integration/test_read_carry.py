"""A partial request carried into the shared read buffer (src/io/client.c,
read_into_shared): when at most 16 KB of a request is pending, the next
read goes after it in the shared 256 KB buffer. Requests cut anywhere,
across reads that each end at a different point, must give the replies
redis-server gives for the same bytes.

Each chunk is sent after a short pause with TCP_NODELAY, so chunk
boundaries are read boundaries (mostly: the kernel may still merge two,
which only makes the test weaker, never wrong).
"""
from __future__ import annotations

import random
import socket
import time

import pytest

from resp_client import encode_command as _encode


def encode_command(*args) -> bytes:
    return _encode(args)


def program(rng: random.Random, n: int, max_bytes: int = 1 << 30) -> bytes:
    """Up to n requests (and max_bytes): SETs of 0..20000-byte values, GETs,
    MSETs, APPENDs, STRLENs."""
    out = []
    for i in range(n):
        k = b"carry:%d" % rng.randrange(8)
        op = rng.randrange(5)
        if op == 0:
            out.append(encode_command(b"SET", k, rng.randbytes(rng.choice([0, 1, 100, 4000, 15000, 20000]))))
        elif op == 1:
            out.append(encode_command(b"GET", k))
        elif op == 2:
            out.append(encode_command(b"MSET", k, rng.randbytes(rng.randrange(3000)), b"carry:x", b"%d" % i))
        elif op == 3:
            out.append(encode_command(b"APPEND", k, rng.randbytes(rng.randrange(50))))
        else:
            out.append(encode_command(b"STRLEN", k))
        if sum(map(len, out)) > max_bytes:
            out.pop()
            break
    return b"".join(out)


def replies_for(port: int, chunks, timeout: float = 20.0) -> bytes:
    with socket.create_connection(("127.0.0.1", port), timeout=timeout) as s:
        s.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        s.sendall(encode_command(b"FLUSHALL"))
        assert s.recv(64) == b"+OK\r\n"
        for c in chunks:
            s.sendall(c)
            time.sleep(0.001)
        s.sendall(encode_command(b"ECHO", b"end-of-program"))
        marker = b"$14\r\nend-of-program\r\n"
        data = b""
        while not data.endswith(marker):
            got = s.recv(1 << 20)
            assert got, "connection closed after %d bytes of replies" % len(data)
            data += got
        return data[:-len(marker)]


def cut(data: bytes, rng: random.Random, sizes) -> list:
    chunks, pos = [], 0
    while pos < len(data):
        n = rng.choice(sizes)
        chunks.append(data[pos:pos + n])
        pos += n
    return chunks


@pytest.mark.parametrize("seed,sizes", [
    (1, [1, 2, 3, 7, 13]),                      # trickling: every read carries the pending part
    (2, [100, 1000, 5000, 16383, 16384, 16385]),  # around the carry limit
    (3, [30000, 70000, 250000, 300000]),          # around the shared buffer's size
])
def test_cut_pipelines_reply_as_redis(pair, seed, sizes):
    rng = random.Random(seed)
    data = program(rng, 400, 12000 if sizes[0] < 10 else 1 << 30)
    chunks = cut(data, rng, sizes)
    f, r = pair
    want = replies_for(r.port, chunks)
    assert replies_for(f.port, chunks) == want


def test_every_cut_of_one_request_across_two_reads(pair):
    """A 300-byte SET then GET, the first read ending at every offset."""
    req = encode_command(b"SET", b"carry:one", bytes(range(256)) + b"x" * 44) + encode_command(b"GET", b"carry:one")
    f, r = pair
    for k in range(1, len(req)):
        chunks = [req[:k], req[k:]]
        assert replies_for(f.port, chunks) == replies_for(r.port, chunks), "cut at %d" % k


# ---- big payloads read into blocks, one readv per request -------------------
#
# A payload of 32 KB or more that a pass leaves incomplete goes to a block of
# its own (src/io/aside.c), and the read that completes it also takes up to
# 4 KB of what follows into the query buffer (read_into_block's readv), so in
# a pipeline of big SETs every read ends inside the next payload. Programs of
# big requests of every shape the blocks meet, cut anywhere, must reply as
# redis-server does, and leave the same data behind.

BIG_SIZES = [32 * 1024 - 1, 32 * 1024, 40000, 65536, 65537, 100000, 300000]


def big_program(rng: random.Random, n: int) -> bytes:
    out = []
    for i in range(n):
        k = b"big:%d" % rng.randrange(6)
        v = rng.randbytes(rng.choice(BIG_SIZES))
        op = rng.randrange(12)
        if op == 0:
            out.append(encode_command(b"SET", k, v))
        elif op == 1:
            out.append(encode_command(b"SET", k, v, b"EX", b"1000"))
        elif op == 2:
            out.append(encode_command(b"SETEX", k, b"1000", v))
        elif op == 3:
            out.append(encode_command(b"GETSET", k, v))
        elif op == 4:
            out.append(encode_command(b"MSET", k, v, b"big:m%d" % i, rng.randbytes(rng.choice(BIG_SIZES))))
        elif op == 5:
            out.append(encode_command(b"APPEND", k, v[:rng.choice([50000, 70000])]))
        elif op == 6:
            out.append(encode_command(b"ECHO", v))
        elif op == 7:
            out.append(encode_command(b"RPUSH", b"big:list", v, b"small"))
        elif op == 8:
            out.append(encode_command(b"HSET", b"big:hash", b"f%d" % rng.randrange(3), v))
        elif op == 9:
            out.append(encode_command(b"GET", k))
        elif op == 10:
            out.append(encode_command(b"SET", k, v, b"GET"))
        else:
            out.append(encode_command(b"STRLEN", k) + encode_command(b"EXISTS", k, b"big:list"))
    return b"".join(out)


def readback(port: int) -> bytes:
    reqs = [encode_command(b"GET", b"big:%d" % i) for i in range(6)]
    reqs += [encode_command(b"LRANGE", b"big:list", b"0", b"-1"), encode_command(b"HGETALL", b"big:hash"),
             encode_command(b"DBSIZE")]
    return replies_for(port, [b"".join(reqs)])


@pytest.mark.parametrize("seed,sizes", [
    (11, None),                                  # the whole program in one write
    (12, [4096, 4097, 65536, 65600, 70000]),     # reads ending near payload ends
    (13, [1, 100, 3000, 5000]),                  # small pieces: blocks fill over many reads
    (14, [20000, 150000, 262144, 400000]),       # bigger than the blocks and the shared buffer
])
def test_big_payload_pipelines_reply_as_redis(pair, seed, sizes):
    rng = random.Random(seed)
    data = big_program(rng, 60 if sizes is None or sizes[0] > 1000 else 12)
    chunks = [data] if sizes is None else cut(data, rng, sizes)
    f, r = pair
    want = replies_for(r.port, chunks, timeout=60)
    assert replies_for(f.port, chunks, timeout=60) == want
    got_back = readback(f.port)
    assert got_back == readback(r.port)
    assert b"$" in got_back  # the program left values to compare


def test_big_sets_then_small_requests_in_one_write(pair):
    """After a run of chained big payloads the reads go back to the shared
    buffer: small requests right after the last big one, in the same write
    and in the next one."""
    rng = random.Random(15)
    big = b"".join(encode_command(b"SET", b"big:%d" % i, rng.randbytes(65536)) for i in range(20))
    small = b"".join(encode_command(b"INCR", b"big:n") for _ in range(3000))
    f, r = pair
    for chunks in ([big + small], [big, small + big + small]):
        want = replies_for(r.port, chunks, timeout=60)
        assert replies_for(f.port, chunks, timeout=60) == want
        assert readback(f.port) == readback(r.port)
