"""Streams (XADD, XRANGE, consumer groups), keyspace notifications and the
bytes a stream entry costs, ferry vs redis-server, side by side in one run.

What (every server fresh, not pinned, --trials times with the servers
alternating: which one goes first flips every trial):
  1. xadd: redis-benchmark -c 50 -r 1000000 with the custom command
     `XADD bench:s MAXLEN ~ 1000000 * f1 __rand_int__ f2 v2 f3 v3` (f1 is a
     random 12-digit number, so entries differ), P = 1 (-n 200000) and
     P = 100 (-n 6000000: >= 3 s at ferry's rate here), a fresh server per
     run; rps, p50 and p99 (ms).
  2. xrange: one fresh server per trial, bench:s prefilled with 100000
     entries (pipelined XADD, f1 <i> f2 v2 f3 v3), then redis-benchmark -c 50
     `XRANGE bench:s - + COUNT 10` and `XREVRANGE bench:s + - COUNT 10`,
     P = 1 (-n 200000) and P = 100 (-n 1000000); rps, p50, p99.
  3. xreadgroup: stream s prefilled with --group-entries (1000000) entries
     (f1 <i> f2 v2 f3 v3), XGROUP CREATE s g 0, then 10 consumer processes, each
     with its own raw socket: XREADGROUP GROUP g c<i> COUNT 100 STREAMS s >,
     the IDs taken from the reply, then XACK s g <ids> and the next
     XREADGROUP in one write, until XREADGROUP answers nil. acked_per_s: the
     XACK counts summed over the wall time from the start signal to the
     last consumer's end; all entries acked and XPENDING s g 0 at the end
     are checked.
  4. notify: SET with redis-benchmark (-t set -r 100000 -d 3, C = 50, P = 1
     -n 200000 and P = 100 -n 3000000) on a fresh server without
     notifications (rps_off_*) and on a fresh server with CONFIG SET notify-
     keyspace-events KEA and one subscriber (raw socket, PSUBSCRIBE
     __key*__:*, a thread draining recv() and counting bytes) (rps_*, p50,
     p99); on_over_off_* is the server's own rps with / without. Both with
     CONFIG SET client-output-buffer-limit "pubsub 0 0 0": with the default
     32mb hard limit redis-server cut the subscriber off at P = 100 (it
     writes at most 64 KB to a client per event, NET_MAX_WRITES_PER_EVENT, so
     its backlog outgrows 32 MB), which lightens its load. The subscriber
     must receive exactly the bytes of 2 pmessages per SET (else the run
     fails); sub_tail_s is how long after redis-benchmark's exit the last of
     them arrived (delivery deferred past the run).
  5. memory: a fresh server, XADD mem:s * f1 <i mod 1000> f2 <WORDS[i mod 8]>
     f3 <(i * 7919) mod 1000> for i in [0, --entries) (WORDS: red green blue
     cyan magenta yellow black white), pipelined 10000 per write over one
     socket; bytes per entry from INFO memory used_memory and from VmRSS
     (/proc/<pid>/status), after minus before (1000000 entries).
--scale multiplies every -n; ferry-server is measured from a copy taken
at the start (a rebuild mid-run cannot mix two binaries).
Output: <out>/streams.csv (one row per measurement, the long format
analysis/persistence.py reads); the medians per server, ferry/redis ratios
and the issue's targets are printed (and made into
results/tables/streams__streams.md by `make reproduce`). A metric whose
trials spread by more than 20% of their median on either server gets that
noted in its rows (a shared 2-core machine). A failed measurement is logged
and skipped; the exit status is then 1.

Why: issue 15 asks ferry for >= 1.2x redis-server's XADD rps at P = 1 and
>= 3x at P = 100, and for <= 0.8x redis-server's bytes per stream entry;
the range reads, consumer groups and notifications show whether the rest of
the stream and pub/sub paths keep up.
"""
from __future__ import annotations

import argparse
import math
import multiprocessing as mp
import os
import re
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

import benchlib as bl
import manifest

sys.path.insert(0, str(bl.REPO))
from analysis import persistence as long_table  # noqa: E402  (the medians and targets, one definition)

COLUMNS = ["experiment", "dataset", "server", "trial", "metric", "value", "unit", "note"]
PIPELINES = (1, 100)
XADD_CMD = ["XADD", "bench:s", "MAXLEN", "~", "1000000", "*", "f1", "__rand_int__", "f2", "v2", "f3", "v3"]
RANGE_CMDS = {"XRANGE": ["XRANGE", "bench:s", "-", "+", "COUNT", "10"],
              "XREVRANGE": ["XREVRANGE", "bench:s", "+", "-", "COUNT", "10"]}
REQUESTS = {                      # per run at scale 1: >= ~3 s at P = 100 here
    "xadd": {1: 200000, 100: 6000000},
    "xrange": {1: 200000, 100: 1000000},
    "notify": {1: 200000, 100: 3000000},
}
WORDS = ("red", "green", "blue", "cyan", "magenta", "yellow", "black", "white")
CONSUMERS = 10
SPREAD = 0.20
PUBSUB_LIMIT = "pubsub 0 0 0"     # notify: no subscriber cut off (the default 32mb cut redis-server's at P=100)
ENTRY_RE = re.compile(rb"\*2\r\n\$\d+\r\n(\d+-\d+)\r\n\*(\d+)\r\n")
HEAD_RE = re.compile(rb"\*1\r\n\*2\r\n\$\d+\r\n[^\r]*\r\n\*(\d+)\r\n")


# --------------------------------------------------------------------- plumbing
class Recorder:
    def __init__(self):
        self.rows = []
        self.failures = []

    def add(self, experiment, dataset, server, trial, metric, value, unit, note=""):
        self.rows.append(dict(experiment=experiment, dataset=dataset, server=server, trial=trial, metric=metric,
                              value=value, unit=unit, note=note))
        bl.log("streams: %-10s %-10s %-5s #%s %-22s %s %s %s"
               % (experiment, dataset, server, trial, metric, value, unit, note))

    def bench_row(self, exp, ds, kind, trial, sfx, row, note=""):
        self.add(exp, ds, kind, trial, "rps" + sfx, "%.0f" % row["rps"], "req/s", note)
        self.add(exp, ds, kind, trial, "p50_ms" + sfx, "%.3f" % row["p50_ms"], "ms", note)
        self.add(exp, ds, kind, trial, "p99_ms" + sfx, "%.3f" % row["p99_ms"], "ms", note)

    def guard(self, label, fn, *a):
        """Run one measurement; a failure is logged and kept, the run goes on."""
        try:
            return fn(*a)
        except (RuntimeError, OSError, ValueError, subprocess.SubprocessError) as e:
            bl.log("streams: FAILED %s: %s" % (label, e))
            self.failures.append("%s: %s" % (label, str(e).splitlines()[0] if str(e) else type(e).__name__))
            return None


def info(port: int, section: str) -> dict:
    raw = bl.query(port, "INFO", section, timeout=60).decode("utf-8", "replace")
    return dict(line.split(":", 1) for line in raw.split("\r\n") if ":" in line and not line.startswith("#"))


def integer(port: int, *cmd) -> int:
    line = bl.command(port, *cmd, timeout=60)
    if not line.startswith(b":"):
        raise RuntimeError("%s answered %r" % (" ".join(map(str, cmd)), line))
    return int(line[1:])


def ok(port: int, *cmd) -> None:
    line = bl.command(port, *cmd, timeout=60)
    if line != b"+OK":
        raise RuntimeError("%s answered %r" % (" ".join(map(str, cmd)), line))


def first_lines(port: int, k: int, *cmd) -> list:
    """The first k lines of a command's raw reply."""
    with socket.create_connection(("127.0.0.1", port), timeout=60) as s:
        s.sendall(bl.encode_command(*cmd))
        data = b""
        while data.count(b"\r\n") < k:
            chunk = s.recv(65536)
            if not chunk:
                raise RuntimeError("connection closed")
            data += chunk
    return data.split(b"\r\n")[:k]


def custom_bench(port: int, cmd: list, pipeline: int, requests: int, keyspace: int) -> dict:
    """One redis-benchmark run of a custom command (-c 50); its CSV row."""
    argv = [bl.client_binary("redis-benchmark"), "-h", "127.0.0.1", "-p", str(port), "-c", "50",
            "-n", str(requests), "-P", str(pipeline), "-r", str(keyspace), "--csv", *cmd]
    res = bl.run_process(argv, 600, "redis-benchmark")
    rows = bl.parse_bench_csv(res["stdout"])
    if res["returncode"] != 0 or not rows or "rror" in res["stdout"] + res["stderr"]:
        raise RuntimeError("redis-benchmark %s failed: %s %s" % (cmd[0], res["stdout"][-300:], res["stderr"][-300:]))
    return rows[-1]


def set_bench(port: int, pipeline: int, requests: int) -> dict:
    return bl.run_client("redis-benchmark", bl.client_binary("redis-benchmark"), port, "SET", 50, pipeline,
                         requests, 3, 100000, pin=False, timeout=600)


def xadd_fill(port: int, key: str, n: int, fields, batch: int = 10000) -> float:
    """XADD key * <fields(i)> for i in [0, n), `batch` per write over one
    socket; every reply must be an ID. Returns seconds."""
    head = b"$4\r\nXADD\r\n" + bl.encode_command(key)[4:] + b"$1\r\n*\r\n"
    t0 = time.monotonic()
    with socket.create_connection(("127.0.0.1", port), timeout=120) as s:
        s.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        for start in range(0, n, batch):
            end = min(n, start + batch)
            parts = []
            for i in range(start, end):
                f = fields(i)
                parts.append(b"*%d\r\n" % (3 + len(f)) + head
                             + b"".join(b"$%d\r\n%s\r\n" % (len(x), x) for x in f))
            s.sendall(b"".join(parts))
            want, got = 2 * (end - start), bytearray()   # "$<len>\r\n<id>\r\n" each
            while got.count(b"\r\n") < want:
                chunk = s.recv(1 << 20)
                if not chunk:
                    raise RuntimeError("connection closed during the XADD fill")
                got += chunk
                if got[:1] == b"-" or b"\r\n-" in got:
                    raise RuntimeError("XADD fill: %r" % bytes(got[:200]))
    return time.monotonic() - t0


def small_fields(i: int) -> tuple:
    return (b"f1", b"%d" % i, b"f2", b"v2", b"f3", b"v3")


def memory_fields(i: int) -> tuple:
    return (b"f1", b"%d" % (i % 1000), b"f2", WORDS[i % 8].encode(), b"f3", b"%d" % (i * 7919 % 1000))


def orders(args):
    for trial in range(1, args.trials + 1):
        yield trial, (args.servers if trial % 2 else args.servers[::-1])


# --------------------------------------------------------------------- 1. xadd
def xadd_once(args, kind, binary, p, trial, rec) -> None:
    with bl.Server(kind, binary, pin=False) as srv:
        row = custom_bench(srv.port, XADD_CMD, p, args.requests["xadd"][p], 1000000)
        xlen = integer(srv.port, "XLEN", "bench:s")
        if xlen < min(args.requests["xadd"][p], 1000000):
            raise RuntimeError("%s: XLEN %d after %d XADDs" % (kind, xlen, args.requests["xadd"][p]))
    rec.bench_row("xadd", "3_fields", kind, trial, "_p%d" % p, row)


def xadd(args, binaries, rec) -> None:
    for trial, order in orders(args):
        for p in PIPELINES:
            for kind in order:
                rec.guard("xadd %s P=%d #%d" % (kind, p, trial), xadd_once, args, kind, binaries[kind], p, trial,
                          rec)


# --------------------------------------------------------------------- 2. xrange
def xrange_once(args, kind, binary, trial, rec) -> None:
    with bl.Server(kind, binary, pin=False) as srv:
        xadd_fill(srv.port, "bench:s", args.range_entries, small_fields)
        if integer(srv.port, "XLEN", "bench:s") != args.range_entries:
            raise RuntimeError("%s: XLEN after the fill is not %d" % (kind, args.range_entries))
        for name, cmd in RANGE_CMDS.items():
            for p in PIPELINES:
                row = custom_bench(srv.port, cmd, p, args.requests["xrange"][p], 100000)
                rec.bench_row("xrange", name, kind, trial, "_p%d" % p, row,
                              "%d entries, COUNT 10" % args.range_entries)


def xrange(args, binaries, rec) -> None:
    for trial, order in orders(args):
        for kind in order:
            rec.guard("xrange %s #%d" % (kind, trial), xrange_once, args, kind, binaries[kind], trial, rec)


# --------------------------------------------------------------------- 3. xreadgroup
def read_batch(sock, buf: bytearray) -> tuple:
    """Read until buf holds the XACK's integer (when the batch began with
    one) and a whole XREADGROUP reply; return (acked or None, ids, or None
    for a nil reply). Field values must not hold CRLF (ours do not)."""
    while True:
        r = parse_batch(buf)
        if r is not None:
            return r
        chunk = sock.recv(1 << 20)
        if not chunk:
            raise RuntimeError("connection closed")
        buf += chunk


def parse_batch(buf: bytearray):
    """read_batch's result when buf is complete, else None."""
    if buf[:1] == b"-" or b"\r\n-" in buf:
        raise RuntimeError("error reply: %r" % bytes(buf[:200]))
    acked, off = None, 0
    if buf[:1] == b":":
        end = buf.find(b"\r\n")
        if end < 0:
            return None
        acked, off = int(buf[1:end]), end + 2
    if buf[off:off + 5] == b"*-1\r\n" or buf[off:off + 4] == b"*0\r\n":     # nothing left for the group
        return acked, None
    m = HEAD_RE.match(buf, off)
    if not m:
        return None
    ents = ENTRY_RE.findall(buf, m.end())
    if len(ents) != int(m.group(1)) or buf.count(b"\r\n", off) != 5 + sum(4 + 2 * int(nf) for _, nf in ents):
        return None
    return acked, [i for i, _ in ents]


def consumer(port, name, start, results) -> None:
    """One consumer process: read 100, ack them with the next read, until nil."""
    total, reads = 0, 0
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=120) as s:
            s.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            read = bl.encode_command("XREADGROUP", "GROUP", "g", name, "COUNT", "100", "STREAMS", "s", ">")
            start.wait()
            s.sendall(read)
            while True:
                buf = bytearray()
                acked, ids = read_batch(s, buf)
                total += acked or 0
                if ids is None:
                    break
                reads += 1
                ack = [b"*%d\r\n$4\r\nXACK\r\n$1\r\ns\r\n$1\r\ng\r\n" % (3 + len(ids))]
                ack += [b"$%d\r\n%s\r\n" % (len(i), i) for i in ids]
                s.sendall(b"".join(ack) + read)
        results.put((name, total, reads, time.monotonic(), ""))
    except (OSError, RuntimeError, ValueError) as e:
        results.put((name, total, reads, time.monotonic(), "%s: %s" % (type(e).__name__, e)))


def run_consumers(port: int) -> tuple:
    """(acked, wall seconds) of CONSUMERS processes draining group g."""
    ctx = mp.get_context("fork")
    start, results = ctx.Event(), ctx.Queue()
    procs = [ctx.Process(target=consumer, args=(port, "c%d" % i, start, results), daemon=True)
             for i in range(CONSUMERS)]
    for p in procs:
        p.start()
    time.sleep(0.5)                      # every consumer connected and waiting
    t0 = time.monotonic()
    start.set()
    done = [results.get(timeout=600) for _ in procs]
    for p in procs:
        p.join(30)
        if p.is_alive():
            p.kill()
    errs = [d for d in done if d[4]]
    if errs:
        raise RuntimeError("consumer %s: %s" % (errs[0][0], errs[0][4]))
    return sum(d[1] for d in done), max(d[3] for d in done) - t0, sum(d[2] for d in done)


def xreadgroup_once(args, kind, binary, trial, rec) -> None:
    n = args.group_entries
    with bl.Server(kind, binary, pin=False) as srv:
        xadd_fill(srv.port, "s", n, small_fields)
        ok(srv.port, "XGROUP", "CREATE", "s", "g", "0")
        acked, wall, reads = run_consumers(srv.port)
        pending = first_lines(srv.port, 2, "XPENDING", "s", "g")
        if acked != n:
            raise RuntimeError("%s: %d acked of %d entries" % (kind, acked, n))
        if pending != [b"*4", b":0"]:
            raise RuntimeError("%s: XPENDING s g after the drain answered %r, not a count of 0" % (kind, pending))
    note = "%d entries, %d consumers, COUNT 100, XACK + next XREADGROUP in one write" % (n, CONSUMERS)
    rec.add("xreadgroup", "3_fields", kind, trial, "acked_per_s", "%.0f" % (acked / wall), "msg/s", note)
    rec.add("xreadgroup", "3_fields", kind, trial, "drain_s", "%.3f" % wall, "s", "%d XREADGROUP batches" % reads)


def xreadgroup(args, binaries, rec) -> None:
    for trial, order in orders(args):
        for kind in order:
            rec.guard("xreadgroup %s #%d" % (kind, trial), xreadgroup_once, args, kind, binaries[kind], trial, rec)


# --------------------------------------------------------------------- 4. notify
class Subscriber:
    """PSUBSCRIBE __key*__:* on a raw socket; a thread drains and counts bytes."""

    def __init__(self, port: int):
        self.sock = socket.create_connection(("127.0.0.1", port), timeout=10)
        self.sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4 << 20)
        want = bl.encode_command("psubscribe", "__key*__:*")[4:] + b":1\r\n"
        self.sock.sendall(bl.encode_command("PSUBSCRIBE", "__key*__:*"))
        got = b""
        while len(got) < len(want) + 4:
            chunk = self.sock.recv(4096)
            if not chunk:
                raise RuntimeError("subscriber: connection closed")
            got += chunk
        if got != b"*3\r\n" + want:
            raise RuntimeError("PSUBSCRIBE answered %r" % got)
        self.bytes, self.closed, self.last, self._stop = 0, False, time.monotonic(), False
        self.sock.settimeout(0.05)
        self.thread = threading.Thread(target=self._drain, daemon=True)
        self.thread.start()

    def _drain(self) -> None:
        buf = bytearray(1 << 20)
        while not self._stop:
            try:
                n = self.sock.recv_into(buf)
            except socket.timeout:
                continue
            except OSError:
                n = 0
            if not n:
                self.closed = True
                return
            self.bytes += n
            self.last = time.monotonic()

    def finish(self, quiet: float = 0.3) -> int:
        """Wait until nothing arrived for `quiet` s; stop; return the bytes."""
        while not self.closed and time.monotonic() - self.last < quiet:
            time.sleep(0.05)
        self._stop = True
        self.thread.join(5)
        self.sock.close()
        return self.bytes


def notify_bytes_per_set() -> int:
    """Bytes of the two pmessages (keyspace, keyevent) of one SET key:<12 digits>."""
    key = "key:%012d" % 0
    return (len(bl.encode_command("pmessage", "__key*__:*", "__keyspace@0__:" + key, "set"))
            + len(bl.encode_command("pmessage", "__key*__:*", "__keyevent@0__:set", key)))


def notify_once(args, kind, binary, p, on, trial, rec) -> float:
    n, sfx = args.requests["notify"][p], "_p%d" % p
    with bl.Server(kind, binary, pin=False) as srv:
        ok(srv.port, "CONFIG", "SET", "client-output-buffer-limit", PUBSUB_LIMIT)
        sub = None
        if on:
            ok(srv.port, "CONFIG", "SET", "notify-keyspace-events", "KEA")
            sub = Subscriber(srv.port)
        try:
            row = set_bench(srv.port, p, n)
        finally:
            t_end = time.monotonic()
            got = sub.finish() if sub else 0
    if not on:
        rec.add("notify", "SET", kind, trial, "rps_off" + sfx, "%.0f" % row["rps"], "req/s", "no notifications")
        return row["rps"]
    want = n * notify_bytes_per_set()
    if got == 0:
        raise RuntimeError("%s: the subscriber received nothing" % kind)
    if sub.closed or got != want:
        raise RuntimeError("%s: the subscriber got %d bytes of %d%s" % (kind, got, want,
                                                                          " (disconnected)" if sub.closed else ""))
    rec.bench_row("notify", "SET", kind, trial, sfx, row, "KEA, 1 subscriber, all %d pmessages received" % (2 * n))
    rec.add("notify", "SET", kind, trial, "sub_tail_s" + sfx, "%.3f" % max(0.0, sub.last - t_end), "s",
            "last notification byte after redis-benchmark's exit (delivery deferred past the run)")
    return row["rps"]


def notify(args, binaries, rec) -> None:
    for trial, order in orders(args):
        for p in PIPELINES:
            for kind in order:
                off = rec.guard("notify off %s P=%d #%d" % (kind, p, trial), notify_once, args, kind,
                                binaries[kind], p, False, trial, rec)
                on = rec.guard("notify on %s P=%d #%d" % (kind, p, trial), notify_once, args, kind,
                               binaries[kind], p, True, trial, rec)
                if on and off:
                    rec.add("notify", "SET", kind, trial, "on_over_off_p%d" % p, "%.3f" % (on / off), "1",
                            "rps with KEA + subscriber / rps without, same server binary")


# --------------------------------------------------------------------- 5. memory
def memory_once(args, kind, binary, trial, rec) -> None:
    n = args.entries
    with bl.Server(kind, binary, pin=False) as srv:
        time.sleep(0.2)
        used0, rss0 = int(info(srv.port, "memory")["used_memory"]), srv.rss_bytes()
        secs = xadd_fill(srv.port, "mem:s", n, memory_fields)
        time.sleep(0.2)
        used1, rss1 = int(info(srv.port, "memory")["used_memory"]), srv.rss_bytes()
        if integer(srv.port, "XLEN", "mem:s") != n:
            raise RuntimeError("%s: XLEN of mem:s is not %d" % (kind, n))
    ds = "%d_entries" % n
    rec.add("memory", ds, kind, trial, "bytes_per_entry_used", "%.2f" % ((used1 - used0) / n), "B",
            "INFO used_memory after - before")
    rec.add("memory", ds, kind, trial, "bytes_per_entry_rss", "%.2f" % ((rss1 - rss0) / n), "B",
            "VmRSS after - before")
    rec.add("memory", ds, kind, trial, "fill_s", "%.2f" % secs, "s", "pipelined, 10000 per write (client-bound)")


def memory(args, binaries, rec) -> None:
    for trial, order in orders(args):
        for kind in order:
            rec.guard("memory %s #%d" % (kind, trial), memory_once, args, kind, binaries[kind], trial, rec)


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
        print("%-10s %-10s %-22s ferry %10.4g  redis %10.4g  ratio %7.3f  target %-7s %s"
              % (r["experiment"], r["dataset"], r["metric"], nan if r["ferry"] is None else r["ferry"],
                 nan if r["redis"] is None else r["redis"], nan if r["ratio"] is None else r["ratio"],
                 r["target"], r["met"]))


STEPS = {"xadd": xadd, "xrange": xrange, "xreadgroup": xreadgroup, "notify": notify, "memory": memory}


def parse_args(argv):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--trials", type=int, default=3, help="trials per measurement (default 3)")
    ap.add_argument("--scale", type=float, default=1.0, help="multiplies the redis-benchmark requests (%s)"
                    % "; ".join("%s P=1/100: %d/%d" % (k, v[1], v[100]) for k, v in REQUESTS.items()))
    ap.add_argument("--range-entries", type=int, default=100000, help="xrange's stream (default 100000)")
    ap.add_argument("--group-entries", type=int, default=1000000,
                    help="xreadgroup's stream (default 1000000: a drain of >= 1 s)")
    ap.add_argument("--entries", type=int, default=1000000, help="memory's stream (default 1000000)")
    ap.add_argument("--quick", action="store_true", help="smoke mode: 1 trial, requests / 20, streams / 10")
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
        args.range_entries, args.group_entries, args.entries = (x // 10 for x in
                                                                 (args.range_entries, args.group_entries, args.entries))
    args.requests = {k: {p: max(1000, int(n * args.scale)) for p, n in v.items()} for k, v in REQUESTS.items()}
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
    snap_dir = tempfile.mkdtemp(prefix="ferry-bench-streams-bin-", dir=args.tmpdir)
    source_ferry = binaries["ferry"]
    binaries["ferry"] = shutil.copy2(source_ferry, os.path.join(snap_dir, "ferry-server"))
    rec = Recorder()
    started, load0, sha0 = bl.utc_now(), os.getloadavg(), bl.git_sha()
    digests = {s: manifest.sha256(Path(b)) for s, b in binaries.items()}
    out = Path(args.out)
    try:
        for name, step in STEPS.items():
            if name not in skip:
                step(args, binaries, rec)
    finally:
        for k in note_spread(rec.rows):
            bl.log("streams: note: %s %s %s on %s spreads > %d%% over its trials" % (k[0], k[1], k[2], k[3],
                                                                                      100 * SPREAD))
        bl.write_csv(out / "streams.csv", COLUMNS, rec.rows)
        shutil.rmtree(snap_dir, ignore_errors=True)
    if manifest.sha256(Path(source_ferry)) != digests["ferry"]:
        bl.log("streams: note: %s was rebuilt during the run; the numbers are of the copy taken at the start "
               "(sha256 %s)" % (source_ferry, digests["ferry"][:16]))
    bl.record_window(out, "streams", started, bl.utc_now(), pinning=bl.pinning_description(False),
                     trials=args.trials, requests=args.requests, range_entries=args.range_entries,
                     group_entries=args.group_entries, entries=args.entries,
                     loadavg_start=[round(x, 2) for x in load0], loadavg_end=[round(x, 2) for x in os.getloadavg()],
                     binary_sha256={s: d[:16] for s, d in digests.items()}, git_sha=sha0,
                     cpu_model=manifest.cpu_model())
    print_summary(rec.rows)
    return bl.report_runs("streams", len(rec.rows), out / "streams.csv", t_start, rec.failures)


if __name__ == "__main__":
    bl.run_main(main)
