"""Memory per element of one big collection: ferry vs redis-server.

What: for each collection type (hash, set, sorted set) and each server, a
fresh server is started (free loopback port, --save '' and, for redis,
--appendonly no: benchlib.Server), its VmRSS and INFO used_memory are read,
then ONE key is filled with N elements (default 1,000,000) over one socket:
variadic commands of --per-cmd elements each, --batch commands per write
(pipelined), every reply checked to be the integer count of new elements.
The filling connection is closed, the server gets --settle seconds, the
element count (HLEN/SCARD/ZCARD) is checked to be N, and VmRSS and
used_memory are read again:

    bytes_per_element      = (rss_after - rss_before) / N
    used_bytes_per_element = (used_memory_after - used_memory_before) / N

Elements (fixed so both servers store the same bytes):
    hash   key "hash:big",  HSET  field "field:%d"   value "v:%06d" (8 bytes for i < 10^6)
    set    key "set:big",   SADD  member "member:%d"
    zset   key "zset:big",  ZADD  score random.Random(seed).uniform(0, 1e6) as "%.6f",
                                  member "member:%d"
Members are 7-14 bytes ("member:0" .. "member:999999"), fields likewise.
OBJECT ENCODING of the key is recorded (Redis: hashtable / skiplist at
this size).

Servers alternate: for each type the first server to be measured is the
other one than for the previous type. A type a server does not implement
(ferry's hashes or sorted sets before those branches are merged) is
recorded with status "unsupported" and no figures; the run goes on.

Why: per-element cost is what decides how many members fit in memory, and
ferry stores a set member as one dict node (header + bytes) where Redis
7.0 uses a dictEntry plus a separate sds. RSS is the user-visible figure
(allocator overhead and fragmentation included); used_memory is each
server's own allocator accounting, without page-level noise.
"""
from __future__ import annotations

import argparse
import random
import socket
import time
from pathlib import Path

import benchlib as bl

COLUMNS = ["server", "type", "status", "elements", "key", "element_format", "encoding", "rss_before",
           "rss_after", "bytes_per_element", "used_memory_before", "used_memory_after",
           "used_bytes_per_element", "load_s", "note"]

TYPES = {
    "hash": {"key": "hash:big", "cmd": b"HSET", "count": b"HLEN", "format": "field:%d -> v:%06d",
             "probe": ["HSET", "__probe__", "f", "v"]},
    "set": {"key": "set:big", "cmd": b"SADD", "count": b"SCARD", "format": "member:%d",
            "probe": ["SADD", "__probe__", "m"]},
    "zset": {"key": "zset:big", "cmd": b"ZADD", "count": b"ZCARD", "format": "%.6f member:%d",
             "probe": ["ZADD", "__probe__", "1", "m"]},
}


# --------------------------------------------------------------------- RESP
def _bulk(parts) -> bytes:
    return b"".join(b"$%d\r\n%s\r\n" % (len(p), p) for p in parts)


def element_args(kind: str, start: int, end: int, rng: random.Random) -> list:
    """The argument words that add elements [start, end) of a type."""
    out = []
    for i in range(start, end):
        if kind == "hash":
            out += [b"field:%d" % i, b"v:%06d" % i]
        elif kind == "set":
            out.append(b"member:%d" % i)
        else:
            out += [b"%.6f" % rng.uniform(0, 1e6), b"member:%d" % i]
    return out


def _read_lines(sock: socket.socket, nlines: int, buf: bytearray) -> list:
    """nlines complete single-line replies (integers / errors)."""
    lines = []
    while len(lines) < nlines:
        nl = buf.find(b"\r\n")
        if nl < 0:
            chunk = sock.recv(1 << 16)
            if not chunk:
                raise RuntimeError("server closed the connection during fill")
            buf += chunk
            continue
        lines.append(bytes(buf[:nl]))
        del buf[:nl + 2]
    return lines


def fill_one_key(port: int, kind: str, n: int, per_cmd: int, batch: int, seed: int) -> float:
    """Add n elements to TYPES[kind]['key']; returns seconds. Every reply must
    be the integer count of newly added elements."""
    spec = TYPES[kind]
    key = spec["key"].encode()
    rng = random.Random(seed)
    t0 = time.monotonic()
    buf = bytearray()
    with socket.create_connection(("127.0.0.1", port), timeout=300) as s:
        s.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        i = 0
        while i < n:
            cmds, want = [], []
            for _ in range(batch):
                if i >= n:
                    break
                j = min(n, i + per_cmd)
                words = [spec["cmd"], key] + element_args(kind, i, j, rng)
                cmds.append(b"*%d\r\n" % len(words) + _bulk(words))
                want.append(j - i)
                i = j
            s.sendall(b"".join(cmds))
            got = _read_lines(s, len(cmds), buf)
            for line, w in zip(got, want):
                if line != b":%d" % w:
                    raise RuntimeError("%s fill: expected :%d, got %r" % (kind, w, line[:200]))
    return time.monotonic() - t0


def used_memory(port: int) -> int:
    for line in bl.query(port, "INFO", "memory").splitlines():
        if line.startswith(b"used_memory:"):
            return int(line.split(b":", 1)[1])
    raise RuntimeError("no used_memory in INFO memory")


def supported(port: int, kind: str) -> tuple:
    """(True, '') if the server runs the type's fill command, else (False, error)."""
    r = bl.query(port, *TYPES[kind]["probe"])
    bl.query(port, "DEL", "__probe__")
    if r.startswith(b"-"):
        return False, r[1:].decode("utf-8", "replace")
    return True, ""


# --------------------------------------------------------------------- main
def measure(kind: str, server_kind: str, binary: str, args, pin: bool) -> dict:
    spec = TYPES[kind]
    row = {"server": server_kind, "type": kind, "elements": args.elements, "key": spec["key"],
           "element_format": spec["format"]}
    with bl.Server(server_kind, binary, pin=pin) as srv:
        ok, err = supported(srv.port, kind)
        if not ok:
            row.update(status="unsupported", note=err)
            bl.log("memory_elements: %-5s %-4s unsupported (%s)" % (server_kind, kind, err))
            return row
        time.sleep(args.settle)
        rss0, used0 = srv.rss_bytes(), used_memory(srv.port)
        secs = fill_one_key(srv.port, kind, args.elements, args.per_cmd, args.batch, args.seed)
        time.sleep(args.settle)
        count = bl.query(srv.port, spec["count"], spec["key"])
        if count != b":%d" % args.elements:
            raise RuntimeError("%s %s: %s answered %r after adding %d elements"
                               % (server_kind, kind, spec["count"].decode(), count, args.elements))
        rss1, used1 = srv.rss_bytes(), used_memory(srv.port)
        enc = bl.query(srv.port, "OBJECT", "ENCODING", spec["key"]).decode()
    n = float(args.elements)
    row.update(status="ok", encoding=enc, rss_before=rss0, rss_after=rss1,
               bytes_per_element="%.1f" % ((rss1 - rss0) / n), used_memory_before=used0,
               used_memory_after=used1, used_bytes_per_element="%.1f" % ((used1 - used0) / n),
               load_s="%.2f" % secs)
    bl.log("memory_elements: %-5s %-4s N=%d: rss %d -> %d (%.1f B/elem), used_memory %.1f B/elem, %s, load %.1fs"
           % (server_kind, kind, args.elements, rss0, rss1, (rss1 - rss0) / n, (used1 - used0) / n, enc, secs))
    return row


def print_table(rows: list, kinds: list, servers: list) -> None:
    def cell(r, col):
        if r is None:
            return "-"
        if r.get("status") != "ok":
            return r.get("status", "-")
        return r[col]

    header = "%-5s" % "type"
    for s in servers:
        header += " | %14s | %14s" % (s + " rss B/el", s + " used B/el")
    if "ferry" in servers and "redis" in servers:
        header += " | ferry/redis rss"
    print(header)
    print("-" * len(header))
    for k in kinds:
        by = {r["server"]: r for r in rows if r["type"] == k}
        line = "%-5s" % k
        for s in servers:
            line += " | %14s | %14s" % (cell(by.get(s), "bytes_per_element"), cell(by.get(s), "used_bytes_per_element"))
        f, r = by.get("ferry"), by.get("redis")
        if "ferry" in servers and "redis" in servers:
            if f and r and f.get("status") == r.get("status") == "ok":
                line += " | %15.2f" % (float(f["bytes_per_element"]) / float(r["bytes_per_element"]))
            else:
                line += " | %15s" % "-"
        print(line)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--elements", type=int, default=1000000, help="elements in the one key (default 1000000)")
    ap.add_argument("--types", default="hash,set,zset", help="comma list of hash,set,zset (default all)")
    ap.add_argument("--per-cmd", type=int, default=100, help="elements per HSET/SADD/ZADD (default 100)")
    ap.add_argument("--batch", type=int, default=100, help="commands per write (default 100)")
    ap.add_argument("--seed", type=int, default=1, help="seed of the sorted-set scores (default 1)")
    ap.add_argument("--settle", type=float, default=0.5, help="seconds before each RSS read (default 0.5)")
    ap.add_argument("--quick", action="store_true", help="smoke mode: 10000 elements")
    ap.add_argument("--servers", default="ferry,redis", help="comma list (default ferry,redis)")
    ap.add_argument("--out", default=str(bl.REPO / "results" / "bench"), help="output directory")
    ap.add_argument("--no-pin", action="store_true", help="do not pin the server with taskset")
    ap.add_argument("--ferry", default=None, help="ferry-server binary")
    ap.add_argument("--redis", default=None, help="redis-server binary")
    args = ap.parse_args(argv)
    if args.quick:
        args.elements = 10000
    kinds = [k.strip() for k in args.types.split(",") if k.strip()]
    for k in kinds:
        if k not in TYPES:
            ap.error("unknown type %r (hash, set, zset)" % k)
    bl.install_signal_handlers()
    pin = bl.pinning_available() and not args.no_pin
    servers = [s.strip() for s in args.servers.split(",") if s.strip()]
    binaries = {s: bl.server_binary(s, getattr(args, s)) for s in servers}
    out_dir = Path(args.out)
    started = bl.utc_now()
    t0 = time.monotonic()
    rows = []
    first = 0
    try:
        for k in kinds:
            order = servers[first:] + servers[:first]
            first = (first + 1) % len(servers)
            for s in order:
                rows.append(measure(k, s, binaries[s], args, pin))
    finally:
        bl.record_window(out_dir, "memory_elements", started, bl.utc_now(), pinning=bl.pinning_description(pin),
                         rows=len(rows))
    print_table(rows, kinds, servers)
    status = bl.write_results(out_dir, "memory_elements", COLUMNS, rows, t0)
    return status if any(r.get("status") == "ok" for r in rows) else 1


if __name__ == "__main__":
    bl.run_main(main)
