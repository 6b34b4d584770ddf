"""The propagated stream, byte for byte: ferry's append-only file equals
redis-server 7.0.15's for the same requests.

ferry copies a request's own bytes into the stream when they are exactly
the encoding of its arguments (a multibulk request, read whole), and
encodes the arguments otherwise (inline requests, a transaction's queued
commands, arguments read aside because they are big, a command's effect).
Redis always encodes its arguments. Both must give the same bytes: the same
requests sent to both servers, with appendonly yes and appendfsync always,
must leave identical incr files, covering each way in:
  - pipelined multibulk SETs, lower- and mixed-case command names, binary
    and empty values, a 40-argument MSET/HSET;
  - inline requests (quoted arguments too);
  - SELECT between writes, MULTI/EXEC (queued commands), a script's writes;
  - values of 64 KB and 1 MB (big arguments, read aside);
  - writes that change nothing (no propagation), a failed command.
The replicas get the same bytes as the file: a redis-server replica of the
ferry primary ends with the same dataset.
"""
from __future__ import annotations

import os

import pytest

import replkit as rk
from conftest import start_server
from resp_client import RawClient, encode_command

INCR = os.path.join("appendonlydir", "appendonly.aof.1.incr.aof")


def enc(*args) -> bytes:
    return encode_command(args)


def program():
    big = b"B" * 65536 + b"\x00\xff"
    huge = bytes(range(256)) * 4096  # 1 MB
    reqs = [enc("SET", "k1", "v1"), enc("set", "k2", "v2"),
            enc("SeT", "bin", b"\x00\r\n\xff"), enc("SET", "empty", ""),
            enc("MSET", *[x for i in range(20) for x in ("m%d" % i, "v%d" % i)]),
            enc("HSET", "h", *[x for i in range(20) for x in ("f%d" % i, "%d" % i)]),
            b"SET inline1 plain\r\n", b'SET "inline 2" "quoted value"\r\n', b"incrby ctr 5\r\n",
            enc("SELECT", "3"), enc("LPUSH", "l", "a", "b", "c"),
            enc("MULTI"), enc("SET", "tx", "1"), enc("INCR", "ctr"),
            enc("EXEC"), enc("SELECT", "0"),
            enc("EVAL", "redis.call('SET', KEYS[1], ARGV[1]); return redis.call('INCR', KEYS[2])",
                           "2", "sk", "ctr2", "sv"),
            enc("SET", "big", big), enc("APPEND", "big", "tail"),
            enc("SET", "huge", huge), enc("DEL", "nothing-here"),
            enc("LPUSH", "k1", "x"),  # WRONGTYPE: not propagated
            enc("SET", "last", "1")]
    return reqs


def run(server, reqs):
    with RawClient(server.port, timeout=30) as c:
        c.sock.sendall(b"".join(reqs[:8]))  # the first ones pipelined, in one write
        for _ in range(8):
            c.read_reply()
        for r in reqs[8:]:
            c.sock.sendall(r)
            c.read_reply()


def incr_bytes(server) -> bytes:
    with open(os.path.join(server.workdir, INCR), "rb") as f:
        return f.read()


@pytest.fixture
def pair():
    servers = []
    try:
        for kind in ("ferry", "redis"):
            servers.append(start_server(kind, "--appendonly", "yes", "--appendfsync", "always",
                                        "--aof-use-rdb-preamble", "yes"))
        yield servers
    finally:
        for s in servers:
            s.stop()


def test_the_append_only_file_equals_redis_servers(pair):
    ferry, redis = pair
    reqs = program()
    for s in pair:
        run(s, reqs)
    got, want = incr_bytes(ferry), incr_bytes(redis)
    assert len(want) > 1 << 20
    if got != want:
        at = len(os.path.commonprefix([got, want]))
        raise AssertionError("incr files differ at byte %d (ferry %d bytes, redis %d):\nferry: %r\nredis: %r"
                             % (at, len(got), len(want), got[max(0, at - 60):at + 60], want[max(0, at - 60):at + 60]))


def test_a_redis_replica_of_ferry_gets_the_same_dataset():
    with rk.Nodes() as nodes:
        primary, replica = nodes("ferry"), nodes("redis")
        primary.call("SET", "seed", "1")
        rk.replicaof(replica, primary)
        rk.wait_sync(replica, primary)
        run(primary.server, program())
        rk.wait_sync(replica, primary)
        rk.assert_converged(primary, [replica])
        assert replica.call("GET", "inline 2") == "quoted value"
        assert replica.call("STRLEN", "huge") == 1 << 20
