"""A reader and writer of stream payloads in Redis's RDB encoding, for
test_stream_persist.py: compare two servers' DUMP of a stream except for
the clock readings in it, turn a Redis 7.0 payload (type 19) into the
Redis 5-6.2 form (type 15) or the Redis 7.2 one (type 21), and build
payloads broken in one precise way.

Layout (Redis 7.0's rdbSaveObject; every number a length unless said):
  nodes: count, then per node the 16-byte master ID (big endian ms, seq)
         as a string and the listpack as a string (LZF-compressed past
         20 bytes when rdbcompression is on)
  length, last ID (ms, seq)
  [19, 21] first ID, greatest deleted ID, entries added
  groups: count, per group: name, last-delivered ID (ms, seq),
         [19, 21] entries read (-1 is 2^64 - 1),
         PEL: count, per entry 16-byte raw ID, 8-byte LE delivery time,
              delivery count,
         consumers: count, per consumer: name, 8-byte LE seen time,
              [21] 8-byte LE active time, PEL: count, 16-byte raw IDs
A DUMP is the type byte, the payload, the RDB version (2 bytes LE) and the
CRC-64 of all that (8 bytes LE).
"""
from __future__ import annotations

import struct
from dataclasses import dataclass, field

from rdb_fixture import crc64, rdb_len, rdb_string

T15, T19, T21 = 15, 19, 21


def lzf_decompress(data: bytes, out_len: int) -> bytes:
    out = bytearray()
    i = 0
    while i < len(data):
        ctrl = data[i]
        i += 1
        if ctrl < 32:
            out += data[i:i + ctrl + 1]
            i += ctrl + 1
            continue
        n = ctrl >> 5
        if n == 7:
            n += data[i]
            i += 1
        ref = len(out) - ((ctrl & 0x1F) << 8) - data[i] - 1
        i += 1
        for _ in range(n + 2):
            out.append(out[ref])
            ref += 1
    assert len(out) == out_len, (len(out), out_len)
    return bytes(out)


class Reader:
    def __init__(self, b: bytes, pos: int = 0):
        self.b, self.i = b, pos
        self.times = []     # offsets of the 8-byte clock readings

    def raw(self, n):
        assert self.i + n <= len(self.b), "payload too short"
        self.i += n
        return self.b[self.i - n:self.i]

    def byte(self):
        return self.raw(1)[0]

    def length(self):
        f = self.byte()
        if f >> 6 == 0:
            return f & 63
        if f >> 6 == 1:
            return (f & 63) << 8 | self.byte()
        if f == 0x80:
            return struct.unpack(">I", self.raw(4))[0]
        if f == 0x81:
            return struct.unpack(">Q", self.raw(8))[0]
        raise ValueError("length encoding %#x" % f)

    def string(self):
        f = self.b[self.i]
        if f >> 6 != 3:
            return self.raw(self.length())
        self.i += 1
        k = f & 63
        if k == 3:
            clen, ulen = self.length(), self.length()
            return lzf_decompress(self.raw(clen), ulen)
        return str(int.from_bytes(self.raw({0: 1, 1: 2, 2: 4}[k]), "little", signed=True)).encode()

    def time(self):
        self.times.append(self.i)
        return struct.unpack("<q", self.raw(8))[0]


@dataclass
class Consumer:
    name: bytes
    seen: int
    pel: list            # raw 16-byte IDs
    active: int = None


@dataclass
class Group:
    name: bytes
    last: tuple
    entries_read: int
    pel: list            # (raw ID, delivery time, delivery count)
    consumers: list


@dataclass
class Stream:
    nodes: list          # (16-byte key, listpack)
    length: int
    last: tuple
    first: tuple = (0, 0)
    max_deleted: tuple = (0, 0)
    added: int = 0
    groups: list = field(default_factory=list)


def parse(payload: bytes, t: int = T19, pos: int = 0):
    """The stream in a payload (after the type byte): (Stream, Reader)."""
    r = Reader(payload, pos)
    nodes = [(r.string(), r.string()) for _ in range(r.length())]
    s = Stream(nodes, r.length(), (r.length(), r.length()))
    if t != T15:
        s.first, s.max_deleted, s.added = (r.length(), r.length()), (r.length(), r.length()), r.length()
    for _ in range(r.length()):
        name, last = r.string(), (r.length(), r.length())
        er = r.length() if t != T15 else None
        pel = [(r.raw(16), r.time(), r.length()) for _ in range(r.length())]
        cons = []
        for _ in range(r.length()):
            cn, seen = r.string(), r.time()
            active = r.time() if t == T21 else None
            cons.append(Consumer(cn, seen, [r.raw(16) for _ in range(r.length())], active))
        s.groups.append(Group(name, last, er, pel, cons))
    return s, r


def parse_dump(dump: bytes):
    assert dump[0] in (T15, T19, T21), dump[:1]
    s, r = parse(dump, dump[0], 1)
    assert r.i == len(dump) - 10, "bytes after the stream"
    return s, r


def masked(dump: bytes) -> bytes:
    """The DUMP without its CRC and with every clock reading zeroed."""
    _s, r = parse_dump(dump)
    b = bytearray(dump[:-8])
    for off in r.times:
        b[off:off + 8] = bytes(8)
    return bytes(b)


def has_clock(dump: bytes) -> bool:
    return bool(parse_dump(dump)[1].times)


def relaxed(dump: bytes):
    """What replaying commands keeps of a stream (redis-server's own AOF
    replay too): nodes, counters, groups' last IDs and PELs with their
    delivery data, consumers and what they own; not the consumers'
    seen-times or the groups' entries-read counters."""
    s, _ = parse_dump(dump)
    return (s.nodes, s.length, s.last, s.first, s.max_deleted, s.added,
            [(g.name, g.last, g.pel, [(c.name, c.pel) for c in g.consumers]) for g in s.groups])


def u64(v: int) -> int:
    return v & (2**64 - 1)


def emit(s: Stream, t: int = T19) -> bytes:
    """The payload (type byte first) of s as type t, nothing compressed."""
    out = bytearray([t]) + rdb_len(len(s.nodes))
    for key, lp in s.nodes:
        out += rdb_string(key) + rdb_string(lp, False)
    out += rdb_len(s.length) + rdb_len(s.last[0]) + rdb_len(s.last[1])
    if t != T15:
        for v in (*s.first, *s.max_deleted, s.added):
            out += rdb_len(v)
    out += rdb_len(len(s.groups))
    for g in s.groups:
        out += rdb_string(g.name) + rdb_len(g.last[0]) + rdb_len(g.last[1])
        if t != T15:
            out += rdb_len(u64(g.entries_read))
        out += rdb_len(len(g.pel))
        for rid, when, count in g.pel:
            out += rid + struct.pack("<q", when) + rdb_len(count)
        out += rdb_len(len(g.consumers))
        for c in g.consumers:
            out += rdb_string(c.name) + struct.pack("<q", c.seen)
            if t == T21:
                out += struct.pack("<q", c.active if c.active is not None else c.seen)
            out += rdb_len(len(c.pel)) + b"".join(c.pel)
    return bytes(out)


def as_dump(payload: bytes, version: int = 10) -> bytes:
    """A DUMP (RESTORE argument) of a payload: version and CRC-64 added."""
    b = payload + struct.pack("<H", version)
    return b + struct.pack("<Q", crc64(b))


def raw_id(ms: int, seq: int) -> bytes:
    return struct.pack(">QQ", ms, seq)
