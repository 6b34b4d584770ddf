"""A small writer of RDB files of any version (1 to 11), for load tests.

It builds the file byte by byte from Python values, so a test can hold a
key in every encoding old Redis versions wrote, without needing those
versions. Nothing here is compressed (LZF is optional in the format: a
loader accepts plain strings everywhere).

File layout
-----------
``"REDIS"`` and the version as four ASCII digits (``REDIS0006``), then a
sequence of records, then the EOF opcode 0xFF, then -- from version 5
on only -- the CRC-64 of every byte before it, 8 bytes little endian (zero
means "not computed" and is accepted). Records are opcodes or keys:

* 0xFE SELECTDB <len>: the following keys go to that database.
* 0xFB RESIZEDB <len> <len>: size hints (keys, keys with expiry); v7+.
* 0xFA AUX <string> <string>: a named field such as redis-ver; v7+.
* 0xFD EXPIRETIME <int32 LE seconds>: absolute expiry of the next key
  (the only form before version 3).
* 0xFC EXPIRETIME_MS <int64 LE milliseconds>: the same in ms; v3+.
* 0xF8 IDLE <len> / 0xF9 FREQ <byte>: access stamps of the next key; v8+.
* otherwise a key: type byte, key string, value (layout by type below).

Lengths
-------
The top two bits of the first byte decide: 00 -> the other 6 bits are the
length; 01 -> 14 bits, this byte's 6 and the next byte (big endian);
0x80 -> a 32-bit big endian length follows; 0x81 -> a 64-bit one (v7+).
The prefix 11 marks a "special" string encoding: 0xC0/0xC1/0xC2 are
integers stored in 1, 2 or 4 bytes little endian (written in place of
the decimal text of an integer that fits), 0xC3 is LZF (not used here).

Strings are a length and the bytes. Doubles of the old sorted set (type 3)
are a length byte and ASCII text, except the length values 253, 254, 255
which stand alone for nan, +inf and -inf. Type 5 stores an IEEE 754
double as 8 bytes little endian.

Value types
-----------
 0 string                    1 list: count, strings
 2 set: count, strings       3 zset: count, (member, text double)
 4 hash: count, (field, value) pairs
 5 zset: count, (member, binary double)                      v8+
 9 hash as zipmap, 10 list as ziplist, 11 set as intset       v2+
12 zset as ziplist (member, score, ...), 13 hash as ziplist   v3+ (2.6)
14 list as quicklist: node count, then each node a ziplist    v7-v9
16 hash as listpack, 17 zset as listpack,
18 list as quicklist of (container, listpack) nodes           v10+
20 set as listpack                                           v11
The blob types (9 to 20) are one RDB string holding the structure.

Blob structures (all integers little endian unless said otherwise)
------------------------------------------------------------------
Ziplist: u32 total bytes, u32 offset of the last entry (10 when empty),
u16 entry count (65535 = "count them"), the entries, the byte 0xFF. An
entry starts with the byte size of the previous entry (0 for the first),
in one byte when below 254, else 0xFE and a u32; then an encoding:
00xxxxxx string of up to 63 bytes; 01xxxxxx yyyyyyyy string with a 14 bit
big endian length; 0x80 + u32 big endian length; 0xFE int8; 0xC0 int16;
0xF0 int24; 0xD0 int32; 0xE0 int64; 0xF1..0xFD the values 0..12 with no
data byte. Redis stores a string that is the canonical text of an
integer (at most 32 bytes) in the smallest integer form.

Zipmap (hashes before Redis 2.6): one byte of pair count (254 = too many
to say), then per pair: key length, key, value length, one "free" byte
n, value, n unused bytes; a length is one byte when below 254, otherwise
0xFE and a u32. Ends with 0xFF.

Intset: u32 element width in bytes (2, 4 or 8, the smallest that holds
every member), u32 count, the members sorted ascending, each that wide.

Listpack: u32 total bytes, u16 count, entries, 0xFF. An entry is an
encoding with data, then its own size written backwards in 7-bit groups
(most significant group first, all but the first group with bit 7 set).
Encodings: 0xxxxxxx uint7; 10xxxxxx string < 64 bytes; 110xxxxx yyyyyyyy
int13; 1110xxxx yyyyyyyy string < 4096; 0xF0 u32 length string; 0xF1 to
0xF4 int16/24/32/64.

CRC-64: the "Jones" polynomial 0xad93d23594c935a9, processed bit-reflected
(so the table uses 0x95ac9329ac4bc9b5), initial value 0, no final xor;
"123456789" gives 0xe9c6d914c4b8d9ca.
"""
from __future__ import annotations

import math
import struct

__all__ = [
    "crc64", "rdb_len", "rdb_string", "double_text", "double_bin",
    "ziplist", "zipmap", "intset", "listpack", "canonical_int",
    "RdbWriter", "T",
]


# ------------------------------------------------------------------ CRC-64
def _crc64_table():
    poly = 0x95AC9329AC4BC9B5  # 0xad93d23594c935a9 with its bits reversed
    table = []
    for i in range(256):
        c = i
        for _ in range(8):
            c = (c >> 1) ^ poly if c & 1 else c >> 1
        table.append(c)
    return table


_CRC_TABLE = _crc64_table()


def crc64(data: bytes, crc: int = 0) -> int:
    for b in data:
        crc = _CRC_TABLE[(crc ^ b) & 0xFF] ^ (crc >> 8)
    return crc


assert crc64(b"123456789") == 0xE9C6D914C4B8D9CA


# ------------------------------------------------------------------ helpers
def as_bytes(v) -> bytes:
    if isinstance(v, bytes):
        return v
    if isinstance(v, bool):
        raise TypeError("bool is not a value")
    if isinstance(v, int):
        return str(v).encode()
    if isinstance(v, str):
        return v.encode()
    raise TypeError("cannot store %r" % (v,))


def canonical_int(b: bytes, maxlen: int = 20):
    """The int64 whose decimal text is exactly b ("12", "-5"; never "012",
    "+1", "-0", " 1"), or None."""
    if not b or len(b) > maxlen:
        return None
    try:
        s = b.decode("ascii")
    except UnicodeDecodeError:
        return None
    if not (s.isdigit() or (s[0] == "-" and s[1:].isdigit())):
        return None
    v = int(s)
    if str(v) != s or not -2**63 <= v < 2**63:
        return None
    return v


# ------------------------------------------------------------------ RDB primitives
def rdb_len(n: int) -> bytes:
    if n < 0:
        raise ValueError("negative length")
    if n < 1 << 6:
        return bytes([n])
    if n < 1 << 14:
        return bytes([0x40 | n >> 8, n & 0xFF])
    if n <= 0xFFFFFFFF:
        return b"\x80" + struct.pack(">I", n)
    return b"\x81" + struct.pack(">Q", n)


def rdb_string(v, int_encode: bool = True) -> bytes:
    """An RDB string; the decimal text of an integer that fits 32 bits is
    written as 0xC0/0xC1/0xC2 plus 1, 2 or 4 bytes (as Redis does) unless
    int_encode is false."""
    b = as_bytes(v)
    if int_encode:
        i = canonical_int(b, 11)
        if i is not None:
            if -2**7 <= i < 2**7:
                return b"\xc0" + struct.pack("<b", i)
            if -2**15 <= i < 2**15:
                return b"\xc1" + struct.pack("<h", i)
            if -2**31 <= i < 2**31:
                return b"\xc2" + struct.pack("<i", i)
    return rdb_len(len(b)) + b


def double_text(d: float) -> bytes:
    """A type-3 score: 253/254/255 alone for nan/+inf/-inf, else a length
    byte and the shortest text that reads back exactly."""
    if math.isnan(d):
        return b"\xfd"
    if d == math.inf:
        return b"\xfe"
    if d == -math.inf:
        return b"\xff"
    if d == int(d) and abs(d) < 2**52:
        s = b"%d" % int(d)
    else:
        s = b"%.17g" % d
    return bytes([len(s)]) + s


def double_bin(d: float) -> bytes:
    return struct.pack("<d", d)


def score_text(d: float) -> bytes:
    """A score as Redis 2.6-7.0 put it in a ziplist or listpack."""
    if d == math.inf:
        return b"inf"
    if d == -math.inf:
        return b"-inf"
    if d == int(d) and abs(d) < 2**53:
        return b"%d" % int(d)
    return b"%.17g" % d


# ------------------------------------------------------------------ ziplist
def _zl_int(i: int) -> bytes:
    if 0 <= i <= 12:
        return bytes([0xF1 + i])
    if -2**7 <= i < 2**7:
        return b"\xfe" + struct.pack("<b", i)
    if -2**15 <= i < 2**15:
        return b"\xc0" + struct.pack("<h", i)
    if -2**23 <= i < 2**23:
        return b"\xf0" + (i & 0xFFFFFF).to_bytes(3, "little")
    if -2**31 <= i < 2**31:
        return b"\xd0" + struct.pack("<i", i)
    return b"\xe0" + struct.pack("<q", i)


def _zl_str(b: bytes) -> bytes:
    n = len(b)
    if n <= 0x3F:
        return bytes([n]) + b
    if n <= 0x3FFF:
        return bytes([0x40 | n >> 8, n & 0xFF]) + b
    return b"\x80" + struct.pack(">I", n) + b


def ziplist(items, int_encode: bool = True) -> bytes:
    """A ziplist of items (bytes, str or int). Python ints, and with
    int_encode the canonical text of an int64 of at most 32 bytes, take an
    integer encoding; everything else a string one."""
    body = bytearray()
    prev = 0
    last = 10
    for it in items:
        if isinstance(it, int) and not isinstance(it, bool):
            payload = _zl_int(it)
        else:
            b = as_bytes(it)
            i = canonical_int(b, 32) if int_encode else None
            payload = _zl_int(i) if i is not None else _zl_str(b)
        prevlen = bytes([prev]) if prev < 254 else b"\xfe" + struct.pack("<I", prev)
        entry = prevlen + payload
        last = 10 + len(body)
        body += entry
        prev = len(entry)
    n = len(items)
    total = 10 + len(body) + 1
    return struct.pack("<IIH", total, last, n if n < 0xFFFF else 0xFFFF) + bytes(body) + b"\xff"


# ------------------------------------------------------------------ zipmap
def _zm_len(n: int) -> bytes:
    return bytes([n]) if n < 254 else b"\xfe" + struct.pack("<I", n)


def zipmap(pairs, free=None) -> bytes:
    """A zipmap of (field, value) pairs; free maps a pair index to a count
    of unused bytes left after that value (as after an in-place update)."""
    free = free or {}
    out = bytearray([len(pairs) if len(pairs) < 254 else 254])
    for idx, (f, v) in enumerate(pairs):
        f, v = as_bytes(f), as_bytes(v)
        nfree = free.get(idx, 0)
        out += _zm_len(len(f)) + f + _zm_len(len(v)) + bytes([nfree]) + v + b"\x00" * nfree
    out += b"\xff"
    return bytes(out)


# ------------------------------------------------------------------ intset
def intset(values) -> bytes:
    vals = sorted(set(int(v) for v in values))
    width = 2
    for v in vals:
        if not -2**15 <= v < 2**15:
            width = max(width, 4)
        if not -2**31 <= v < 2**31:
            width = 8
    fmt = {2: "<h", 4: "<i", 8: "<q"}[width]
    return struct.pack("<II", width, len(vals)) + b"".join(struct.pack(fmt, v) for v in vals)


# ------------------------------------------------------------------ listpack
def _lp_backlen(n: int) -> bytes:
    groups = []
    while True:
        groups.append(n & 0x7F)
        n >>= 7
        if not n:
            break
    groups.reverse()   # most significant first
    return bytes([groups[0]] + [g | 0x80 for g in groups[1:]])


def _lp_entry(it) -> bytes:
    if isinstance(it, int) and not isinstance(it, bool):
        i = it
    else:
        b = as_bytes(it)
        i = canonical_int(b, 20)
    if i is not None:
        if 0 <= i <= 127:
            enc = bytes([i])
        elif -4096 <= i < 4096:
            u = i & 0x1FFF
            enc = bytes([0xC0 | u >> 8, u & 0xFF])
        elif -2**15 <= i < 2**15:
            enc = b"\xf1" + struct.pack("<h", i)
        elif -2**23 <= i < 2**23:
            enc = b"\xf2" + (i & 0xFFFFFF).to_bytes(3, "little")
        elif -2**31 <= i < 2**31:
            enc = b"\xf3" + struct.pack("<i", i)
        else:
            enc = b"\xf4" + struct.pack("<q", i)
    else:
        n = len(b)
        if n < 64:
            enc = bytes([0x80 | n]) + b
        elif n < 4096:
            enc = bytes([0xE0 | n >> 8, n & 0xFF]) + b
        else:
            enc = b"\xf0" + struct.pack("<I", n) + b
    return enc + _lp_backlen(len(enc))


def listpack(items) -> bytes:
    body = b"".join(_lp_entry(it) for it in items)
    n = len(items)
    return struct.pack("<IH", 6 + len(body) + 1, n if n < 0xFFFF else 0xFFFF) + body + b"\xff"


# ------------------------------------------------------------------ value payloads
class T:
    """RDB type bytes."""
    STRING, LIST, SET, ZSET, HASH, ZSET_2 = 0, 1, 2, 3, 4, 5
    HASH_ZIPMAP, LIST_ZIPLIST, SET_INTSET, ZSET_ZIPLIST, HASH_ZIPLIST, LIST_QUICKLIST = 9, 10, 11, 12, 13, 14
    HASH_LISTPACK, ZSET_LISTPACK, LIST_QUICKLIST_2, SET_LISTPACK = 16, 17, 18, 20


def _chunks(items, size):
    return [items[i:i + size] for i in range(0, len(items), size)] or [[]]


def _zset_sorted(pairs):
    """(member, score) pairs in Redis's order: score, then member bytes."""
    return sorted(((as_bytes(m), float(s)) for m, s in pairs), key=lambda p: (p[1], p[0]))


def encode_value(rtype: int, value, node_size: int = 8, int_encode: bool = True) -> bytes:
    """The payload of a key of RDB type rtype holding value:
    string: bytes/str/int; list: a sequence; set: a sequence of distinct
    members; hash: a sequence of (field, value); zset: a sequence of
    (member, score). node_size splits quicklists (14, 18) into nodes;
    a node may be given explicitly by passing value as a list of lists
    with node_size=0."""
    if rtype == T.STRING:
        return rdb_string(value, int_encode)
    if rtype in (T.LIST, T.SET):
        return rdb_len(len(value)) + b"".join(rdb_string(v, int_encode) for v in value)
    if rtype == T.HASH:
        return rdb_len(len(value)) + b"".join(rdb_string(f, int_encode) + rdb_string(v, int_encode)
                                              for f, v in value)
    if rtype == T.ZSET:
        return rdb_len(len(value)) + b"".join(rdb_string(m, int_encode) + double_text(s) for m, s in value)
    if rtype == T.ZSET_2:
        return rdb_len(len(value)) + b"".join(rdb_string(m, int_encode) + double_bin(s) for m, s in value)
    if rtype == T.HASH_ZIPMAP:
        return rdb_string(zipmap(list(value)), False)
    if rtype == T.LIST_ZIPLIST:
        return rdb_string(ziplist(list(value), int_encode), False)
    if rtype == T.SET_INTSET:
        return rdb_string(intset(value), False)
    if rtype == T.HASH_ZIPLIST:
        return rdb_string(ziplist([x for fv in value for x in fv], int_encode), False)
    if rtype == T.ZSET_ZIPLIST:
        flat = [x for m, s in _zset_sorted(value) for x in (m, score_text(s))]
        return rdb_string(ziplist(flat, int_encode), False)
    if rtype == T.LIST_QUICKLIST:
        nodes = value if node_size == 0 else _chunks(list(value), node_size)
        return rdb_len(len(nodes)) + b"".join(rdb_string(ziplist(list(n), int_encode), False) for n in nodes)
    if rtype == T.LIST_QUICKLIST_2:
        nodes = value if node_size == 0 else _chunks(list(value), node_size)
        return rdb_len(len(nodes)) + b"".join(rdb_len(2) + rdb_string(listpack(list(n)), False) for n in nodes)
    if rtype == T.HASH_LISTPACK:
        return rdb_string(listpack([x for fv in value for x in fv]), False)
    if rtype == T.ZSET_LISTPACK:
        return rdb_string(listpack([x for m, s in _zset_sorted(value) for x in (m, score_text(s))]), False)
    if rtype == T.SET_LISTPACK:
        return rdb_string(listpack(list(value)), False)
    raise ValueError("no encoder for RDB type %d" % rtype)


# ------------------------------------------------------------------ the file
class RdbWriter:
    """w = RdbWriter(7); w.aux("redis-ver", "3.2.0"); w.select_db(0);
    w.key(T.STRING, "k", "v", expire_ms=...); data = w.finish()"""

    def __init__(self, version: int):
        if not 1 <= version <= 99:
            raise ValueError("version")
        self.version = version
        self.buf = bytearray(b"REDIS%04d" % version)
        self.used = {}   # what was written: RDB type / opcode name -> count

    def _count(self, what) -> None:
        self.used[what] = self.used.get(what, 0) + 1

    def raw(self, b: bytes) -> "RdbWriter":
        self.buf += b
        return self

    def aux(self, k, v) -> "RdbWriter":
        self._count("AUX")
        return self.raw(b"\xfa" + rdb_string(k) + rdb_string(v))

    def select_db(self, n: int) -> "RdbWriter":
        self._count("SELECTDB")
        return self.raw(b"\xfe" + rdb_len(n))

    def resize_db(self, keys: int, expires: int) -> "RdbWriter":
        return self.raw(b"\xfb" + rdb_len(keys) + rdb_len(expires))

    def key(self, rtype: int, name, value=None, *, payload: bytes = None, expire_s: int = None,
            expire_ms: int = None, idle: int = None, freq: int = None, **enc) -> "RdbWriter":
        if expire_ms is not None:
            self._count("EXPIRETIME_MS")
            self.raw(b"\xfc" + struct.pack("<q", expire_ms))
        if expire_s is not None:
            self._count("EXPIRETIME")
            self.raw(b"\xfd" + struct.pack("<i", expire_s))
        if idle is not None:
            self._count("IDLE")
            self.raw(b"\xf8" + rdb_len(idle))
        if freq is not None:
            self._count("FREQ")
            self.raw(b"\xf9" + bytes([freq]))
        if payload is None:
            payload = encode_value(rtype, value, **enc)
        self._count(rtype)
        return self.raw(bytes([rtype]) + rdb_string(name) + payload)

    def finish(self, checksum: bool = True) -> bytes:
        """EOF, and from version 5 on the CRC-64 (zero if checksum is false)."""
        out = bytes(self.buf) + b"\xff"
        if self.version >= 5:
            out += struct.pack("<Q", crc64(out) if checksum else 0)
        return out
