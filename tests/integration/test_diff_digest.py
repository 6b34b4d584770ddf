"""Differential tests for DEBUG DIGEST and DEBUG DIGEST-VALUE
(src/keyspace/digest.c) against redis-server 7.0: the same dataset must
give the same digests, byte for byte, so replication tests can compare a
ferry node with a Redis node.

Each case builds a seeded random dataset of strings, lists, sets, sorted
sets and hashes (streams are the documented exception: Redis digests their
internal layout) on both servers, in every encoding (small and big values:
listpack / quicklist, intset / listpack-less hash table, listpack /
skiplist), with integer-looking, binary and empty values, integer,
fractional, huge, tiny and infinite scores. It then compares DEBUG DIGEST
and DEBUG DIGEST-VALUE for every key (and a missing one), also after TTLs
are set and removed, with keys in several databases, after MOVE and
SWAPDB, on logically expired keys still in the keyspace, and on an empty
server. A small Python model of Redis's algorithm pins the numbers, so a
change made alike on both sides would still be noticed.
"""
from __future__ import annotations

import hashlib
import random
import struct
import time

import pytest

from conftest import server_pair
from resp_client import RawClient, parse, to_python

ZERO = b"0" * 40
SEEDS = [1, 7, 2024, 31337]


@pytest.fixture(scope="module")
def digest_pair():
    with server_pair("--enable-debug-command", "yes") as (f, r):
        with RawClient(f.port) as fc, RawClient(r.port) as rc:
            yield fc, rc


@pytest.fixture
def clients(digest_pair):
    fc, rc = digest_pair
    for c in (fc, rc):
        c.command("SELECT", "0")
        assert c.command("FLUSHALL") == b"+OK\r\n"
        assert c.command("DEBUG", "SET-ACTIVE-EXPIRE", "1") == b"+OK\r\n"
    return fc, rc


def both(clients, commands):
    """Send the same commands to both servers; their replies must agree
    (the datasets are then the same)."""
    fc, rc = clients
    mine, theirs = fc.pipeline(commands), rc.pipeline(commands)
    for cmd, a, b in zip(commands, mine, theirs):
        assert a == b, "replies differ for %r:\n ferry: %r\n redis: %r" % (cmd[:4], a[:200], b[:200])
    return theirs


def status(reply: bytes) -> bytes:
    assert reply.startswith(b"+") and reply.endswith(b"\r\n"), reply
    return reply[1:-2]


# ------------------------------------------------------------ reference model
def _sha(b):
    return hashlib.sha1(b).digest()


def _xor(d, b):
    return bytes(x ^ y for x, y in zip(d, _sha(b)))


def _mix(d, b):
    return _sha(_xor(d, b))


_TYPE_NO = {"string": 0, "list": 1, "set": 2, "zset": 3, "hash": 4}


def model_value(d, typ, val, volatile):
    d = _mix(d, struct.pack(">I", _TYPE_NO[typ]))
    if typ == "string":
        d = _mix(d, val)
    elif typ == "list":
        for e in val:
            d = _mix(d, e)
    elif typ == "set":
        for e in val:
            d = _xor(d, e)
    else:  # zset (member, score text) / hash (field, value) pairs
        for a, b in val:
            d = _xor(d, _mix(_mix(bytes(20), a), b))
    if volatile:
        d = _xor(d, b"!!expire!!")
    return d


def read_value(c, key):
    typ = to_python(parse(c.command("TYPE", key))).decode()
    if typ == "string":
        val = to_python(parse(c.command("GET", key)))
    elif typ == "list":
        val = to_python(parse(c.command("LRANGE", key, "0", "-1")))
    elif typ == "set":
        val = to_python(parse(c.command("SMEMBERS", key)))
    elif typ == "hash":
        flat = to_python(parse(c.command("HGETALL", key)))
        val = list(zip(flat[::2], flat[1::2]))
    elif typ == "zset":
        # the reply prints scores with %.17g, as the digest does
        flat = to_python(parse(c.command("ZRANGE", key, "0", "-1", "WITHSCORES")))
        val = list(zip(flat[::2], flat[1::2]))
    else:
        raise AssertionError("unexpected type %r" % typ)
    volatile = to_python(parse(c.command("PTTL", key))) >= 0
    return typ, val, volatile


def keys_of(c):
    return sorted(to_python(parse(c.command("KEYS", "*"))))


def model_dataset(c, dbs):
    final = bytes(20)
    for db in sorted(dbs):
        c.command("SELECT", str(db))
        keys = keys_of(c)
        if not keys:
            continue
        final = _mix(final, struct.pack(">I", db))
        for k in keys:
            final = _xor(final, model_value(_mix(bytes(20), k), *read_value(c, k)))
    c.command("SELECT", "0")
    return final.hex().encode()


# ------------------------------------------------------------ random dataset
def rand_bytes(rng, n):
    return bytes(rng.randrange(256) for _ in range(n))


def rand_elem(rng):
    kind = rng.randrange(8)
    if kind == 0:
        return str(rng.randint(-1000, 1000))
    if kind == 1:
        return str(rng.randint(-2 ** 63, 2 ** 63 - 1))
    if kind == 2:
        return rand_bytes(rng, rng.randint(0, 12))
    if kind == 3:
        return "x" * rng.randint(60, 200)            # past the listpack value limit
    if kind == 4:
        return ""
    return "e%d" % rng.randrange(10 ** 6)


SPECIAL_SCORES = ["inf", "-inf", "+inf", "0", "-0", "1e17", "123456789012", "4503599627370497", "0.1", "1e-300",
                  "5e-324", "1.7976931348623157e308", "-2.5", "3.0", "1e15"]


def rand_score(rng):
    kind = rng.randrange(4)
    if kind == 0:
        return rng.choice(SPECIAL_SCORES)
    if kind == 1:
        return str(rng.randint(-10 ** 6, 10 ** 6))
    if kind == 2:
        return repr(rng.uniform(-1e6, 1e6))
    return repr(rng.random() * 10 ** rng.randint(-20, 20))


def dataset_commands(rng, prefix="k"):
    """Commands building keys of every type (not streams), small and big."""
    cmds = []
    n = 0

    def key():
        nonlocal n
        n += 1
        return "%s:%d" % (prefix, n)

    for v in ["hello", "12345", "-7", "0", "", "9223372036854775807", "01", " 1", "x" * 100,
              rand_bytes(rng, 30), "3.14"]:
        cmds.append(["SET", key(), v])
    for _ in range(5):
        cmds.append(["SET", key(), rand_elem(rng)])
    for size in (1, 5, 100, 300):
        cmds.append(["RPUSH", key()] + [rand_elem(rng) for _ in range(size)])
    cmds.append(["LPUSH", key(), "a", "b", "1", "2"])
    for size in (1, 10, 600):                             # intset, small, past set-max-intset-entries
        cmds.append(["SADD", key()] + [str(rng.randint(-10 ** 9, 10 ** 9)) for _ in range(size)])
    for size in (3, 50, 300):
        cmds.append(["SADD", key()] + [rand_elem(rng) for _ in range(size)])
    for size in (1, 10, 200):                             # listpack, listpack, skiplist
        args = []
        for i in range(size):
            args += [rand_score(rng), "m%d" % i if rng.random() < 0.7 else rand_elem(rng)]
        cmds.append(["ZADD", key()] + args)
    cmds.append(["ZADD", key()] + [a for s in SPECIAL_SCORES for a in (s, "s" + s)])
    cmds.append(["ZADD", key(), "1", "y" * 100, "2", "b"])     # skiplist by value length
    for size in (1, 10, 300):
        args = []
        for i in range(size):
            args += ["f%d" % i if rng.random() < 0.7 else rand_elem(rng), rand_elem(rng)]
        cmds.append(["HSET", key()] + args)
    cmds.append(["HSET", key(), "f", "z" * 100, "n", "42"])    # hashtable by value length
    cmds.append(["HSET", key(), "f", "1", "g", "-2", "h", "v", "", "e"])   # listpack whatever the draws
    cmds.append(["ZADD", key(), "1", "1", "2.5", "b", "-inf", "c"])
    rng.shuffle(cmds)
    return cmds


def compare(clients, dbs=(0,), model=True):
    """DEBUG DIGEST and every key's DEBUG DIGEST-VALUE (one call per key and
    one for all keys of a database plus a missing key) equal on both."""
    fc, rc = clients
    d = both(clients, [["DEBUG", "DIGEST"]])[0]
    for db in dbs:
        both(clients, [["SELECT", str(db)]])
        keys = keys_of(rc)
        assert keys == keys_of(fc)
        both(clients, [["DEBUG", "DIGEST-VALUE", k] for k in keys])
        both(clients, [["DEBUG", "DIGEST-VALUE", *keys, "no:such:key"]])
        assert both(clients, [["DEBUG", "DIGEST-VALUE", "no:such:key"]])[0] == b"*1\r\n+" + ZERO + b"\r\n"
        if model:
            for k in keys:
                want = model_value(bytes(20), *read_value(rc, k)).hex().encode()
                assert fc.command("DEBUG", "DIGEST-VALUE", k) == b"*1\r\n+" + want + b"\r\n", \
                    (k, rc.command("OBJECT", "ENCODING", k))
    both(clients, [["SELECT", "0"]])
    if model:
        assert status(d) == model_dataset(rc, dbs)
    return status(d)


def encodings(c, dbs=(0,)):
    seen = set()
    for db in dbs:
        c.command("SELECT", str(db))
        for k in keys_of(c):
            seen.add((to_python(parse(c.command("TYPE", k))), to_python(parse(c.command("OBJECT", "ENCODING", k)))))
    c.command("SELECT", "0")
    return seen


# ------------------------------------------------------------ tests
def test_empty_server(clients):
    assert both(clients, [["DEBUG", "DIGEST"]])[0] == b"+" + ZERO + b"\r\n"
    both(clients, [["SELECT", "9"], ["DEBUG", "DIGEST"], ["DEBUG", "DIGEST-VALUE", "a", "b"], ["SELECT", "0"]])
    # keys that come and go leave an empty dataset with the empty digest
    both(clients, [["SET", "a", "1"], ["DEL", "a"], ["SADD", "s", "1"], ["SREM", "s", "1"]])
    assert both(clients, [["DEBUG", "DIGEST"]])[0] == b"+" + ZERO + b"\r\n"


def test_known_values(clients):
    """Numbers computed by hand from Redis's algorithm (the model above)."""
    both(clients, [["SET", "a", "b"], ["RPUSH", "l", "1", "x"], ["SADD", "s", "1", "x"],
                   ["ZADD", "z", "1.5", "m"], ["HSET", "h", "f", "v"]])
    fc, _ = clients
    for key, typ, val in [("a", "string", b"b"), ("l", "list", [b"1", b"x"]), ("s", "set", [b"1", b"x"]),
                          ("z", "zset", [(b"m", b"1.5")]), ("h", "hash", [(b"f", b"v")])]:
        want = model_value(bytes(20), typ, val, False).hex().encode()
        assert fc.command("DEBUG", "DIGEST-VALUE", key) == b"*1\r\n+" + want + b"\r\n"
    compare(clients)


@pytest.mark.parametrize("seed", SEEDS)
def test_random_dataset(clients, seed):
    rng = random.Random(seed)
    both(clients, dataset_commands(rng))
    compare(clients)
    _, rc = clients
    seen = encodings(rc)
    for want in [(b"string", b"int"), (b"string", b"embstr"), (b"string", b"raw"), (b"list", b"quicklist"),
                 (b"set", b"intset"), (b"set", b"hashtable"), (b"zset", b"listpack"), (b"zset", b"skiplist"),
                 (b"hash", b"listpack"), (b"hash", b"hashtable")]:
        assert want in seen, want
    assert encodings(clients[0]) == seen


@pytest.mark.parametrize("seed", SEEDS[:2])
def test_ttls(clients, seed):
    rng = random.Random(seed)
    both(clients, dataset_commands(rng))
    _, rc = clients
    keys = keys_of(rc)
    before = compare(clients, model=False)
    both(clients, [["EXPIRE", k, str(rng.randint(1000, 100000))] for k in keys[::3]])
    with_ttl = compare(clients)
    assert with_ttl != before
    # the expiry time does not count, only that there is one
    both(clients, [["PEXPIRE", k, str(rng.randint(200000, 900000))] for k in keys[::3]])
    assert compare(clients, model=False) == with_ttl
    both(clients, [["PERSIST", k] for k in keys[::3]])
    assert compare(clients, model=False) == before
    both(clients, [["SET", "t1", "v", "EX", "1000"], ["SETEX", "t2", "1000", "5"], ["RPUSH", "t3", "a"],
                   ["PEXPIREAT", "t3", str(int(time.time() * 1000) + 10 ** 7)], ["SET", "t2", "6", "KEEPTTL"]])
    compare(clients)


def test_several_databases(clients):
    rng = random.Random(99)
    dbs = (0, 1, 5, 15)
    for db in dbs:
        both(clients, [["SELECT", str(db)]] + dataset_commands(rng, prefix="db%d" % db))
    both(clients, [["SELECT", "0"]])
    full = compare(clients, dbs)
    # the same value in another database is another digest
    both(clients, [["SELECT", "1"], ["SET", "same", "v"], ["SELECT", "0"]])
    one = compare(clients, dbs, model=False)
    both(clients, [["SELECT", "1"], ["MOVE", "same", "2"], ["SELECT", "0"]])
    two = compare(clients, dbs + (2,))
    assert len({full, one, two}) == 3
    both(clients, [["SWAPDB", "0", "15"]])
    compare(clients, dbs + (2,))
    both(clients, [["SELECT", "5"], ["FLUSHDB"], ["SELECT", "0"]])
    compare(clients, dbs + (2,))
    both(clients, [["FLUSHALL"]])
    assert both(clients, [["DEBUG", "DIGEST"]])[0] == b"+" + ZERO + b"\r\n"


def test_changes_and_copies(clients):
    """Digests follow the contents through edits, conversions and copies."""
    rng = random.Random(5)
    both(clients, dataset_commands(rng))
    both(clients, [["SADD", "iset", "1", "2", "3"], ["SADD", "iset", "abc"], ["SREM", "iset", "abc"],
                   ["ZADD", "zs", "1", "a", "2", "b"], ["ZINCRBY", "zs", "0.5", "a"],
                   ["ZADD", "zs", "3", "c" * 100], ["ZREM", "zs", "c" * 100],
                   ["HSET", "hh", "a", "1"], ["HINCRBY", "hh", "a", "41"], ["HINCRBYFLOAT", "hh", "b", "0.25"],
                   ["RPUSH", "ll", "1", "2"], ["LSET", "ll", "0", "x" * 80], ["LPUSH", "ll", "-5"],
                   ["SET", "n", "10"], ["INCRBY", "n", "5"], ["APPEND", "n", "0"], ["SETRANGE", "str", "3", "ab"],
                   ["COPY", "zs", "zs2"], ["COPY", "hh", "hh2"], ["RENAME", "ll", "ll2"]])
    compare(clients)
    fc, rc = clients
    for c in (fc, rc):
        a, b = to_python(parse(c.command("DEBUG", "DIGEST-VALUE", "zs", "zs2")))
        assert a == b
    both(clients, [["DEBUG", "RELOAD"]])
    compare(clients)


def test_logically_expired_keys_count(clients):
    """DEBUG DIGEST walks the whole keyspace, keys past their expiry that
    nobody removed yet included, as Redis does."""
    both(clients, [["DEBUG", "SET-ACTIVE-EXPIRE", "0"], ["SET", "live", "v"]])
    live = both(clients, [["DEBUG", "DIGEST"]])[0]
    both(clients, [["SET", "gone", "v", "PX", "1"], ["HSET", "gone2", "f", "v"], ["PEXPIRE", "gone2", "1"]])
    time.sleep(0.05)
    stale = both(clients, [["DEBUG", "DIGEST"]])[0]
    assert stale != live
    both(clients, [["EXISTS", "gone", "gone2"]])   # lazily expired on both
    assert both(clients, [["DEBUG", "DIGEST"]])[0] == live
    both(clients, [["DEBUG", "SET-ACTIVE-EXPIRE", "1"]])
