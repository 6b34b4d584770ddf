"""Bitmaps, HyperLogLog, GEO and SORT: throughput of the cheap and the
scanning commands and the memory of a big geo set and of many HLLs,
ferry vs redis-server, side by side in one run (issue 16).

What (every server fresh, not pinned, --trials times with the servers
alternating: which one goes first flips every trial; C = 50 throughout;
rps, p50 and p99 (ms) per run):
  1. setbit: bench:bits prefilled to 16 MB (SETBIT bench:bits 134217727 1),
     then SETBIT bench:bits <random offset in [0, 134217727)> 1 at P = 1 and
     P = 100, then BITCOUNT bench:bits at P = 1 and P = 10 only (every call
     scans all 16 MB, so a deep pipeline only queues). SETBIT is driven by
     this script's own closed-loop client (pyclient below: 50 sockets, one
     epoll loop, requests pre-encoded, a batch of P sent and all P replies
     awaited), not by redis-benchmark: redis-benchmark 7.0 writes
     __rand_int__ as a zero-padded 12-digit number and both servers reject
     "000000123456" as a bit offset (and redis-benchmark does not report
     error replies). At P = 1 that client does ~85-90k SETBIT/s against
     either server here, about redis-benchmark's rate, so it may be the
     bottleneck, which pulls the ratio towards 1. 20,000 SETBITs at P = 1
     go first unrecorded (a warm-up: a fresh server's first run was at
     times half as fast).
  2. pfadd: bench:hll prefilled with 1,000,000 elements (PFADD, 1000
     elements a command, pipelined), then redis-benchmark
     `PFADD bench:hll __rand_int__` (-r 10000000) and `PFCOUNT bench:hll`,
     P = 1 and P = 100.
  3. geosearch: bench:geo filled with 1,000,000 members m<i> at
     deterministic pseudo-random points (random.Random(16)) in the box lon
     12.8..13.9, lat 37.6..38.6 (~96 x 111 km), GEOADD with 100 members a
     command, pipelined; then `GEOSEARCH bench:geo FROMLONLAT 13.36 38.11
     BYRADIUS 5 km ASC COUNT 10` at P = 1 and P = 10 only: 7,323 members lie
     in that circle (the count is in the rows' note) and both servers
     examine every one of them (COUNT without ANY), ~10 ms a call, ~100
     calls/s, so P = 100 (5,000 calls queued, >= 50 s a run) would only
     measure the queue; and `GEOADD bench:geo2 13.36 38.11 m__rand_int__`
     (-r 1000000), P = 1 and P = 100.
  4. sort: bench:list, 10,000 random integers (RPUSH), `SORT bench:list
     LIMIT 0 10`, and bench:set, 10,000 members (SADD), `SORT bench:set
     ALPHA LIMIT 0 10`, P = 1 and P = 10 (every call sorts all 10,000
     elements, so a deep pipeline only queues).
  5. memory: INFO used_memory and VmRSS (/proc/<pid>/status) after minus
     before (a) the geo fill of step 3 (the same fresh server, measured
     before any benchmark touched it): bytes per member; (b) on a fresh
     server, 10,000 HLL keys hll:<k>, each PFADDed 1,000 distinct elements
     in one command: bytes per key. With hll-sparse-max-bytes at its default
     3000 such a key is promoted to the dense encoding (12 KB registers) or
     not depending on how its sparse form grows; the number of keys found
     dense (byte 4 of the HYLL header, GETRANGE, every key checked) is
     recorded as dense_keys.
Every custom command is first sent once by hand with __rand_int__ replaced
and its reply checked (redis-benchmark counts error replies as successes);
the reads' replies are checked for shape (10 members, an integer).
-n is sized so that P = 100 (P = 10) runs last >= ~3 s on ferry; --scale
multiplies it. ferry-server is measured from a copy taken at the start.
Output: <out>/commands.csv (the long format analysis/persistence.py reads;
`make reproduce` makes results/tables/commands__commands.md); the medians,
ferry/redis ratios and targets are printed. A metric whose trials spread by
more than 20% of the median on a server gets that noted. A failed
measurement is logged and skipped; the exit status is then 1.

Why: issue 16 asks whether ferry's bitmap, HyperLogLog, GEO and SORT
paths keep up with redis-server: >= 1.0x its rps at P = 1 and >= 2.0x at
P = 100 for the cheap commands (SETBIT, PFADD, GEOADD, GEOSEARCH COUNT 10),
and what a big geo set and many HLLs cost in memory.
"""
from __future__ import annotations

import argparse
import math
import os
import random
import selectors
import shutil
import socket
import statistics
import sys
import tempfile
import time
from pathlib import Path

import benchlib as bl
import manifest

sys.path.insert(0, str(bl.REPO))
from analysis import persistence as long_table  # noqa: E402  (the medians and targets, one definition)

COLUMNS = ["experiment", "dataset", "server", "trial", "metric", "value", "unit", "note"]
BITS_MAX = 134217727                       # the last bit of a 16 MB bitmap
GEO_BOX = (12.8, 13.9, 37.6, 38.6)         # lon min, lon max, lat min, lat max
GEO_CENTRE = ("13.36", "38.11")
CMDS = {
    "bitcount": ["BITCOUNT", "bench:bits"],
    "pfadd": ["PFADD", "bench:hll", "__rand_int__"],
    "pfcount": ["PFCOUNT", "bench:hll"],
    "geosearch": ["GEOSEARCH", "bench:geo", "FROMLONLAT", *GEO_CENTRE, "BYRADIUS", "5", "km", "ASC", "COUNT", "10"],
    "geoadd": ["GEOADD", "bench:geo2", *GEO_CENTRE, "m__rand_int__"],
    "sort_list": ["SORT", "bench:list", "LIMIT", "0", "10"],
    "sort_set": ["SORT", "bench:set", "ALPHA", "LIMIT", "0", "10"],
}
REQUESTS = {                 # name: {pipeline: -n at scale 1} (P = 100 or 10: >= ~3 s on ferry)
    "setbit": {1: 200000, 100: 10000000},
    "bitcount": {1: 1000, 10: 1000},
    "pfadd": {1: 200000, 100: 8000000},
    "pfcount": {1: 200000, 100: 10000000},
    "geosearch": {1: 500, 10: 1000},
    "geoadd": {1: 200000, 100: 5000000},
    "sort_list": {1: 3000, 10: 3000},
    "sort_set": {1: 2000, 10: 2000},
}
SPREAD = 0.20


# --------------------------------------------------------------------- plumbing
class Recorder:
    def __init__(self):
        self.rows = []
        self.failures = []

    def add(self, experiment, dataset, server, trial, metric, value, unit, note=""):
        self.rows.append(dict(experiment=experiment, dataset=dataset, server=server, trial=trial, metric=metric,
                              value=value, unit=unit, note=note))
        bl.log("commands: %-13s %-16s %-5s #%s %-22s %s %s %s"
               % (experiment, dataset, server, trial, metric, value, unit, note))

    def bench_row(self, exp, ds, kind, trial, p, row, note=""):
        self.add(exp, ds, kind, trial, "rps_p%d" % p, "%.0f" % row["rps"], "req/s", note)
        self.add(exp, ds, kind, trial, "p50_ms_p%d" % p, "%.3f" % row["p50_ms"], "ms", note)
        self.add(exp, ds, kind, trial, "p99_ms_p%d" % p, "%.3f" % row["p99_ms"], "ms", note)

    def guard(self, label, fn, *a):
        """Run one measurement; a failure is logged and kept, the run goes on."""
        try:
            return fn(*a)
        except (RuntimeError, OSError, ValueError, KeyError) as e:
            bl.log("commands: FAILED %s: %s" % (label, e))
            self.failures.append("%s: %s" % (label, str(e).splitlines()[0] if str(e) else type(e).__name__))
            return None


def info(port: int, section: str) -> dict:
    raw = bl.query(port, "INFO", section, timeout=60).decode("utf-8", "replace")
    return dict(line.split(":", 1) for line in raw.split("\r\n") if ":" in line and not line.startswith("#"))


def reply_head(port: int, *cmd) -> bytes:
    """The first line of a command's reply; an error reply raises."""
    line = bl.command(port, *cmd, timeout=120)
    if line[:1] == b"-" or not line:
        raise RuntimeError("%s answered %r" % (" ".join(map(str, cmd)), line))
    return line


def integer(port: int, *cmd) -> int:
    line = reply_head(port, *cmd)
    if line[:1] != b":":
        raise RuntimeError("%s answered %r, not an integer" % (" ".join(map(str, cmd)), line))
    return int(line[1:])


def probe(port: int, cmd: list, want: bytes | None = None) -> bytes:
    """Send cmd once with __rand_int__ as redis-benchmark writes it; check the reply."""
    line = reply_head(port, *[a.replace("__rand_int__", "%012d" % 4242) for a in cmd])
    if want is not None and line != want:
        raise RuntimeError("%s answered %r, expected %r" % (" ".join(cmd), line, want))
    return line


def pipeline_fill(port: int, payloads, marker: bytes) -> float:
    """Write each payload (commands named by marker, e.g. b"$6\\r\\nGEOADD"),
    read its replies (one integer line each); an error reply raises.
    Returns seconds."""
    t0 = time.monotonic()
    with socket.create_connection(("127.0.0.1", port), timeout=300) as s:
        s.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        for data in payloads:
            replies_per_payload = data.count(marker)
            s.sendall(data)
            got = bytearray()
            while got.count(b"\r\n") < replies_per_payload:
                chunk = s.recv(1 << 20)
                if not chunk:
                    raise RuntimeError("connection closed during a fill")
                got += chunk
            if got[:1] == b"-" or b"\r\n-" in got:
                raise RuntimeError("fill: %r" % bytes(got[:200]))
    return time.monotonic() - t0


def custom_bench(port: int, cmd: list, pipeline: int, requests: int, keyspace: int = 0) -> dict:
    """One redis-benchmark run of a custom command (-c 50); its CSV row."""
    argv = [bl.client_binary("redis-benchmark"), "-h", "127.0.0.1", "-p", str(port), "-c", "50",
            "-n", str(requests), "-P", str(pipeline), "--csv"]
    argv += (["-r", str(keyspace)] if keyspace else []) + cmd
    res = bl.run_process(argv, 900, "redis-benchmark")
    rows = bl.parse_bench_csv(res["stdout"])
    if res["returncode"] != 0 or not rows or "rror" in res["stdout"] + res["stderr"]:
        raise RuntimeError("redis-benchmark %s failed: %s %s" % (cmd[0], res["stdout"][-300:], res["stderr"][-300:]))
    return rows[-1]


def pyclient(port: int, pool: list, reply_len: int, pipeline: int, requests: int, conns: int = 50) -> dict:
    """Closed loop like redis-benchmark -c conns -P pipeline: every socket
    sends a batch of `pipeline` pre-encoded requests (drawn from pool) and
    sends the next once all its replies (reply_len bytes each, e.g. ':1\\r\\n')
    arrived. Latency per batch, from its send to its last reply."""
    rng = random.Random(7)
    batches = [b"".join(rng.choice(pool) for _ in range(pipeline)) for _ in range(max(64, 20000 // pipeline))]
    total = max(conns, requests // pipeline)
    want = reply_len * pipeline
    sel = selectors.DefaultSelector()
    socks, lat, sent, done = [], [], 0, 0
    try:
        for i in range(conns):
            s = socket.create_connection(("127.0.0.1", port), timeout=30)
            s.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            socks.append(s)
        t0 = time.monotonic()
        for i, s in enumerate(socks):
            sel.register(s, selectors.EVENT_READ, [0, time.monotonic()])
            s.sendall(batches[i % len(batches)])
            sent += 1
        while done < total:
            events = sel.select(60)
            if not events:
                raise RuntimeError("pyclient: no reply within 60 s")
            for key, _ in events:
                s, st = key.fileobj, key.data
                data = s.recv(1 << 20)
                if not data:
                    raise RuntimeError("pyclient: connection closed")
                if b"-" in data:
                    raise RuntimeError("pyclient: error reply %r" % data[:200])
                st[0] += len(data)
                if st[0] >= want:
                    now = time.monotonic()
                    lat.append(now - st[1])
                    done += 1
                    if sent < total:
                        st[0], st[1] = st[0] - want, now
                        s.sendall(batches[sent % len(batches)])
                        sent += 1
                    else:
                        sel.unregister(s)
        wall = time.monotonic() - t0
    finally:
        sel.close()
        for s in socks:
            s.close()
    lat.sort()
    return {"rps": total * pipeline / wall, "p50_ms": 1000 * lat[len(lat) // 2],
            "p99_ms": 1000 * lat[min(len(lat) - 1, int(len(lat) * 0.99))]}


def orders(args):
    for trial in range(1, args.trials + 1):
        yield trial, (args.servers if trial % 2 else args.servers[::-1])


def each_trial(args, binaries, rec, name, once) -> None:
    for trial, order in orders(args):
        for kind in order:
            rec.guard("%s %s #%d" % (name, kind, trial), once, args, kind, binaries[kind], trial, rec)


def bench_pair(args, rec, port, kind, trial, name, exp, ds, keyspace=0, check=None, note="") -> None:
    """redis-benchmark CMDS[name] at both of REQUESTS[name]'s pipelines."""
    for p, n in sorted(args.requests[name].items()):
        row = custom_bench(port, CMDS[name], p, n, keyspace)
        if check:
            check()
        rec.bench_row(exp, ds, kind, trial, p, row, note)


# --------------------------------------------------------------------- 1. setbit
def setbit_once(args, kind, binary, trial, rec) -> None:
    rng = random.Random(16)
    pool = [bl.encode_command("SETBIT", "bench:bits", rng.randrange(BITS_MAX), "1") for _ in range(65536)]
    with bl.Server(kind, binary, pin=False) as srv:
        integer(srv.port, "SETBIT", "bench:bits", BITS_MAX, "1")
        if integer(srv.port, "STRLEN", "bench:bits") != (BITS_MAX + 1) // 8:
            raise RuntimeError("%s: bench:bits is not 16 MB" % kind)
        pyclient(srv.port, pool, 4, 1, 20000)       # warm-up, not recorded: a fresh server's first P = 1 run
        for p, n in sorted(args.requests["setbit"].items()):    # was sometimes half as fast (one core shared?)
            row = pyclient(srv.port, pool, 4, p, n)
            rec.bench_row("bits_setbit", "16MB_bitmap", kind, trial, p, row,
                          "random offsets < 2^27; this script's Python client, not redis-benchmark")
        bits = integer(srv.port, "BITCOUNT", "bench:bits")
        if bits < 2:
            raise RuntimeError("%s: BITCOUNT %d after the SETBITs" % (kind, bits))
        probe(srv.port, CMDS["bitcount"], b":%d" % bits)
        bench_pair(args, rec, srv.port, kind, trial, "bitcount", "bits_bitcount", "16MB_bitmap",
                   note="each call scans 16 MB (%d bits set); P = 1 and 10 only" % bits)


# --------------------------------------------------------------------- 2. pfadd
def pfadd_payloads(key: str, elems, per_cmd: int = 1000, per_write: int = 10):
    out, cur = [], []
    for start in range(0, len(elems), per_cmd):
        cur.append(bl.encode_command("PFADD", key, *elems[start:start + per_cmd]))
        if len(cur) == per_write:
            out.append(b"".join(cur))
            cur = []
    if cur:
        out.append(b"".join(cur))
    return out


def pfadd_once(args, kind, binary, trial, rec) -> None:
    n = args.hll_elements
    with bl.Server(kind, binary, pin=False) as srv:
        payloads = pfadd_payloads("bench:hll", ["e%d" % i for i in range(n)])
        pipeline_fill(srv.port, payloads, b"$5\r\nPFADD")
        est = integer(srv.port, "PFCOUNT", "bench:hll")
        if abs(est - n) > 0.05 * n:
            raise RuntimeError("%s: PFCOUNT %d after %d elements" % (kind, est, n))
        probe(srv.port, CMDS["pfadd"])
        ds = "%dk_prefilled" % (n // 1000)
        bench_pair(args, rec, srv.port, kind, trial, "pfadd", "hll_pfadd", ds, 10000000, note="-r 10000000")
        bench_pair(args, rec, srv.port, kind, trial, "pfcount", "hll_pfcount", ds,
                   check=lambda: integer(srv.port, "PFCOUNT", "bench:hll"))


# --------------------------------------------------------------------- 3. geosearch (+ 5a memory)
_GEO_CACHE = {}


def geo_payloads(n: int, per_cmd: int = 100, per_write: int = 100) -> list:
    if n not in _GEO_CACHE:
        rng = random.Random(16)
        lo0, lo1, la0, la1 = GEO_BOX
        cmds = []
        for start in range(0, n, per_cmd):
            args = []
            for i in range(start, min(n, start + per_cmd)):
                args += ["%.6f" % rng.uniform(lo0, lo1), "%.6f" % rng.uniform(la0, la1), "m%d" % i]
            cmds.append(bl.encode_command("GEOADD", "bench:geo", *args))
        _GEO_CACHE[n] = [b"".join(cmds[i:i + per_write]) for i in range(0, len(cmds), per_write)]
    return _GEO_CACHE[n]


def geo_once(args, kind, binary, trial, rec) -> None:
    n = args.geo_members
    payloads = geo_payloads(n)
    with bl.Server(kind, binary, pin=False) as srv:
        time.sleep(0.2)
        used0, rss0 = int(info(srv.port, "memory")["used_memory"]), srv.rss_bytes()
        secs = pipeline_fill(srv.port, payloads, b"$6\r\nGEOADD")
        time.sleep(0.2)
        used1, rss1 = int(info(srv.port, "memory")["used_memory"]), srv.rss_bytes()
        if integer(srv.port, "ZCARD", "bench:geo") != n:
            raise RuntimeError("%s: ZCARD bench:geo is not %d" % (kind, n))
        ds = "%dk_members" % (n // 1000)
        rec.add("mem_geo", ds, kind, trial, "bytes_per_member_used", "%.2f" % ((used1 - used0) / n), "B",
                "INFO used_memory after - before the fill")
        rec.add("mem_geo", ds, kind, trial, "bytes_per_member_rss", "%.2f" % ((rss1 - rss0) / n), "B",
                "VmRSS after - before the fill")
        rec.add("mem_geo", ds, kind, trial, "fill_s", "%.2f" % secs, "s", "GEOADD 100 a command, pipelined")
        inside = int(reply_head(srv.port, *CMDS["geosearch"][:-2])[1:])
        check = probe(srv.port, CMDS["geosearch"])
        if check != b"*10":
            raise RuntimeError("%s: GEOSEARCH COUNT 10 answered %r" % (kind, check))
        bench_pair(args, rec, srv.port, kind, trial, "geosearch", "geo_search", ds,
                   note="%d members within 5 km, COUNT 10; P = 1 and 10 only" % inside)
        probe(srv.port, CMDS["geoadd"], b":1")
        bench_pair(args, rec, srv.port, kind, trial, "geoadd", "geo_geoadd", "new_key", 1000000, note="-r 1000000")


# --------------------------------------------------------------------- 4. sort
def sort_once(args, kind, binary, trial, rec) -> None:
    rng = random.Random(16)
    ints = [str(rng.randrange(1000000000)) for _ in range(args.sort_elements)]
    members = ["member:%d" % rng.randrange(10 ** 12) for _ in range(args.sort_elements)]
    with bl.Server(kind, binary, pin=False) as srv:
        pipeline_fill(srv.port, [bl.encode_command("RPUSH", "bench:list", *ints)], b"RPUSH")
        pipeline_fill(srv.port, [bl.encode_command("SADD", "bench:set", *members)], b"SADD")
        nl, ns = integer(srv.port, "LLEN", "bench:list"), integer(srv.port, "SCARD", "bench:set")
        for name, exp, ds, size in (("sort_list", "sort_list", "%d_ints" % nl, nl),
                                    ("sort_set", "sort_set_alpha", "%d_members" % ns, ns)):
            if probe(srv.port, CMDS[name]) != b"*10":
                raise RuntimeError("%s: %s did not answer 10 elements" % (kind, " ".join(CMDS[name])))
            bench_pair(args, rec, srv.port, kind, trial, name, exp, ds,
                       note="each call sorts all %d elements; P = 1 and 10 only" % size)


# --------------------------------------------------------------------- 5b. memory of many HLLs
def hll_payloads(keys: int, elems: int, per_write: int = 20):
    for k0 in range(0, keys, per_write):
        yield b"".join(bl.encode_command("PFADD", "hll:%d" % k, *["%d:%d" % (k, j) for j in range(elems)])
                       for k in range(k0, min(keys, k0 + per_write)))


def config_get(port: int, name: str) -> int:
    with socket.create_connection(("127.0.0.1", port), timeout=30) as s:
        s.sendall(bl.encode_command("CONFIG", "GET", name))
        data = b""
        while data.count(b"\r\n") < 5:
            chunk = s.recv(4096)
            if not chunk:
                raise RuntimeError("connection closed")
            data += chunk
    return int(data.split(b"\r\n")[4])


def header_bytes(port: int, keys: list) -> bytes:
    """Byte 4 of every key's HYLL header (0 dense, 1 sparse): GETRANGE k 4 4
    pipelined on one socket; every reply is $1\\r\\n<byte>\\r\\n."""
    with socket.create_connection(("127.0.0.1", port), timeout=120) as s:
        s.sendall(b"".join(bl.encode_command("GETRANGE", k, "4", "4") for k in keys))
        got = bytearray()
        while len(got) < 7 * len(keys):
            chunk = s.recv(1 << 20)
            if not chunk:
                raise RuntimeError("connection closed during GETRANGE")
            got += chunk
    if len(got) != 7 * len(keys) or any(got[i:i + 4] != b"$1\r\n" for i in range(0, len(got), 7)):
        raise RuntimeError("GETRANGE k 4 4 answered %r" % bytes(got[:100]))
    return bytes(got[4::7])


def mem_hll_once(args, kind, binary, trial, rec) -> None:
    keys, elems = args.hll_keys, args.hll_key_elements
    with bl.Server(kind, binary, pin=False) as srv:
        time.sleep(0.2)
        used0, rss0 = int(info(srv.port, "memory")["used_memory"]), srv.rss_bytes()
        secs = pipeline_fill(srv.port, hll_payloads(keys, elems), b"$5\r\nPFADD")
        time.sleep(0.2)
        used1, rss1 = int(info(srv.port, "memory")["used_memory"]), srv.rss_bytes()
        if integer(srv.port, "DBSIZE") != keys:
            raise RuntimeError("%s: DBSIZE is not %d" % (kind, keys))
        encs = header_bytes(srv.port, ["hll:%d" % k for k in range(keys)])
        sparse_max = config_get(srv.port, "hll-sparse-max-bytes")
    dense = encs.count(0)
    if dense + encs.count(1) != keys:
        raise RuntimeError("%s: a key has no HYLL encoding byte" % kind)
    ds = "%dk_keys_x_%d" % (keys // 1000, elems)
    note = "hll-sparse-max-bytes %d" % sparse_max
    rec.add("mem_hll", ds, kind, trial, "bytes_per_key_used", "%.1f" % ((used1 - used0) / keys), "B",
            "INFO used_memory after - before; " + note)
    rec.add("mem_hll", ds, kind, trial, "bytes_per_key_rss", "%.1f" % ((rss1 - rss0) / keys), "B",
            "VmRSS after - before")
    rec.add("mem_hll", ds, kind, trial, "dense_keys", str(dense), "keys", "of %d, by the HYLL header's byte 4" % keys)
    rec.add("mem_hll", ds, kind, trial, "fill_s", "%.2f" % secs, "s", "one PFADD of %d elements a key" % elems)


# --------------------------------------------------------------------- main
def note_spread(rows: list) -> list:
    """Add a note to every row of a metric whose trials spread > SPREAD on a server."""
    groups = {}
    for r in rows:
        try:
            groups.setdefault((r["experiment"], r["dataset"], r["metric"], r["server"]), []).append(float(r["value"]))
        except ValueError:
            pass
    noisy = {}
    for k, v in groups.items():
        med = statistics.median(v)
        if len(v) > 1 and med and (max(v) - min(v)) / abs(med) > SPREAD:
            noisy[k] = (max(v) - min(v)) / abs(med)
    for r in rows:
        k = (r["experiment"], r["dataset"], r["metric"], r["server"])
        if k in noisy:
            extra = "spread %.0f%% of the median over trials (shared 2-core machine, other jobs)" % (100 * noisy[k])
            r["note"] = "; ".join(x for x in (r["note"], extra) if x)
    return sorted(noisy)


def print_summary(rows: list) -> None:
    def num(v):
        try:
            return float(v)
        except ValueError:
            return math.nan
    nan = math.nan
    for r in long_table.summary([dict(r, value=num(r["value"])) for r in rows]):
        print("%-14s %-16s %-22s ferry %10.4g  redis %10.4g  ratio %7.3f  target %-7s %s"
              % (r["experiment"], r["dataset"], r["metric"], nan if r["ferry"] is None else r["ferry"],
                 nan if r["redis"] is None else r["redis"], nan if r["ratio"] is None else r["ratio"],
                 r["target"], r["met"]))


STEPS = {"setbit": setbit_once, "pfadd": pfadd_once, "geosearch": geo_once, "sort": sort_once,
         "memory": mem_hll_once}


def parse_args(argv):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--trials", type=int, default=3, help="trials per measurement (default 3)")
    ap.add_argument("--scale", type=float, default=1.0, help="multiplies every -n (%s)" % "; ".join(
        "%s %s" % (k, "/".join("P=%d: %d" % pn for pn in sorted(v.items()))) for k, v in REQUESTS.items()))
    ap.add_argument("--geo-members", type=int, default=1000000, help="bench:geo's size (default 1000000)")
    ap.add_argument("--hll-elements", type=int, default=1000000, help="bench:hll's prefill (default 1000000)")
    ap.add_argument("--hll-keys", type=int, default=10000, help="memory: HLL keys (default 10000)")
    ap.add_argument("--hll-key-elements", type=int, default=1000, help="memory: elements a key (default 1000)")
    ap.add_argument("--sort-elements", type=int, default=10000, help="sort's list and set (default 10000)")
    ap.add_argument("--quick", action="store_true", help="smoke mode: 1 trial, -n / 20, data / 10")
    ap.add_argument("--skip", default="", help="comma list of %s to skip" % ",".join(STEPS))
    ap.add_argument("--tmpdir", default=tempfile.gettempdir(),
                    help="where the measured copy of ferry-server is put (default %(default)s)")
    ap.add_argument("--out", default=str(bl.REPO / "results" / "bench"), help="output directory")
    ap.add_argument("--ferry", "--server", dest="ferry", default=None, help="ferry-server binary")
    ap.add_argument("--redis", default=None, help="redis-server binary")
    ap.add_argument("--no-pin", action="store_true", help="accepted for bench_all; servers are never pinned here")
    args = ap.parse_args(argv)
    if args.quick:
        args.trials, args.scale = 1, args.scale / 20
        args.geo_members, args.hll_elements, args.hll_keys = (x // 10 for x in
                                                              (args.geo_members, args.hll_elements, args.hll_keys))
    args.requests = {k: {p: max(100, int(n * args.scale)) for p, n in v.items()} for k, v in REQUESTS.items()}
    args.servers = ["ferry", "redis"]
    return args


def main(argv=None) -> int:
    args = parse_args(argv)
    skip = {s.strip() for s in args.skip.split(",") if s.strip()}
    bl.install_signal_handlers()
    binaries = {s: bl.server_binary(s, getattr(args, s)) for s in args.servers}
    if not bl.client_binary("redis-benchmark"):
        raise SystemExit("redis-benchmark not found (apt-get install -y redis-tools)")
    t_start = time.monotonic()
    # Measure a private copy of ferry-server: a rebuild during the run would mix two binaries' numbers.
    snap_dir = tempfile.mkdtemp(prefix="ferry-bench-commands-bin-", dir=args.tmpdir)
    source_ferry = binaries["ferry"]
    binaries["ferry"] = shutil.copy2(source_ferry, os.path.join(snap_dir, "ferry-server"))
    rec = Recorder()
    started, load0, sha0 = bl.utc_now(), os.getloadavg(), bl.git_sha()
    digests = {s: manifest.sha256(Path(b)) for s, b in binaries.items()}
    out = Path(args.out)
    try:
        for name, once in STEPS.items():
            if name not in skip:
                each_trial(args, binaries, rec, name, once)
    finally:
        for k in note_spread(rec.rows):
            bl.log("commands: note: %s %s %s on %s spreads > %d%% over its trials"
                   % (k[0], k[1], k[2], k[3], 100 * SPREAD))
        bl.write_csv(out / "commands.csv", COLUMNS, rec.rows)
        shutil.rmtree(snap_dir, ignore_errors=True)
    if manifest.sha256(Path(source_ferry)) != digests["ferry"]:
        bl.log("commands: note: %s was rebuilt during the run; the numbers are of the copy taken at the start "
               "(sha256 %s)" % (source_ferry, digests["ferry"][:16]))
    bl.record_window(out, "commands", started, bl.utc_now(), pinning=bl.pinning_description(False),
                     trials=args.trials, requests=args.requests, geo_members=args.geo_members,
                     hll_elements=args.hll_elements, hll_keys=args.hll_keys, hll_key_elements=args.hll_key_elements,
                     sort_elements=args.sort_elements,
                     loadavg_start=[round(x, 2) for x in load0], loadavg_end=[round(x, 2) for x in os.getloadavg()],
                     binary_sha256={s: d[:16] for s, d in digests.items()}, git_sha=sha0,
                     cpu_model=manifest.cpu_model())
    print_summary(rec.rows)
    return bl.report_runs("commands", len(rec.rows), out / "commands.csv", t_start, rec.failures)


if __name__ == "__main__":
    bl.run_main(main)
