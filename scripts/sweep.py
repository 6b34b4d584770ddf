"""Throughput/latency sweep: ferry vs redis-server over connections x pipeline
depth x command x value size, with redis-benchmark and build/ferry-bench.

What: for every (test, value size) block, a fresh ferry-server and a fresh
redis-server are started (server pinned to CPU 0, client to CPU 1 when
possible); GET blocks are first filled with every key of the keyspace
(key:%012d, 0..keyspace-1, value of the block's size) so that GETs hit. Then,
for each matrix point (connections C, pipeline P, client, repeat) the same
client command is run against both servers back to back, A B then B A at the
next point (the `order` column is 1 for the server that ran first in its pair,
2 for the second). Headline points (C=50, P in {1,16,100}) get
--headline-repeats repeats (default 3), the others --repeats (default 1).

How many requests: a fixed -n per (client, test, value size, C, P), the same for both
servers (sized per client, since ferry-bench is the faster generator). It is
sized by a calibration pass (short probes of each client against fresh
servers, calibration time counted in the ETA) so that the slower server takes
about --target-seconds (default 1.0 s): n = target * min(probe rps), clamped
to [max(--min-requests, 2*C*P), --max-requests] and rounded up to 1000. If
the resulting ETA exceeds --budget-minutes the target is scaled down. --requests
N skips calibration and uses N everywhere.

Why: the headline comparison of the project (how far batching read/execute/
writev takes ferry against Redis 7.0) needs one consistent, reproducible
matrix; alternating the order and restarting servers per block keeps drift
and state from favouring either server.

Output: <out>/sweep_<tag>.csv with the columns agreed with the analysis
engineer (see COLUMNS); a row is written (and flushed) after every run; the
time window goes to <out>/windows.json for manifest.py.
"""
from __future__ import annotations

import argparse
import math
import time
from pathlib import Path

import benchlib as bl

COLUMNS = ["server", "server_version", "client", "test", "clients", "pipeline", "value_bytes", "persistence",
           "tls", "run", "requests", "rps", "avg_ms", "min_ms", "p50_ms", "p95_ms", "p99_ms", "max_ms",
           "p999_ms", "order", "started_utc"]

FULL_CONNS = [1, 10, 50]
FULL_PIPELINES = [1, 2, 4, 8, 16, 32, 50, 100, 200, 500, 750]
FULL_TESTS = ["SET", "GET", "INCR", "MSET"]
FULL_SIZES = [64, 1024]
HEADLINE_CONNS = 50
HEADLINE_PIPELINES = (1, 16, 100)

QUICK_REQUESTS = 20000


def int_list(s: str) -> list:
    return [int(x) for x in s.split(",") if x.strip()]


def str_list(s: str) -> list:
    return [x.strip() for x in s.split(",") if x.strip()]


def parse_args(argv=None):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--quick", action="store_true",
                    help="tiny smoke matrix: C=50, P in {1,100}, SET+GET, 64 B, redis-benchmark only, "
                         "%d requests, no calibration (< 30 s)" % QUICK_REQUESTS)
    ap.add_argument("--tag", default=None, help="output file is sweep_<tag>.csv (default: full, or quick)")
    ap.add_argument("--out", default=str(bl.REPO / "results" / "bench"), help="output directory")
    ap.add_argument("--repeats", type=int, default=1, help="repeats per matrix point (default 1)")
    ap.add_argument("--headline-repeats", type=int, default=3,
                    help="repeats at the headline points C=50, P in {1,16,100} (default 3; never below --repeats)")
    ap.add_argument("--conns", type=int_list, default=None, help="comma list of connection counts")
    ap.add_argument("--pipelines", type=int_list, default=None, help="comma list of pipeline depths")
    ap.add_argument("--tests", type=str_list, default=None, help="comma list from SET,GET,INCR,MSET")
    ap.add_argument("--sizes", type=int_list, default=None, help="comma list of value sizes in bytes")
    ap.add_argument("--clients", type=str_list, default=None,
                    help="comma list from redis-benchmark,ferry-bench (default both; ferry-bench is skipped "
                         "with a message when build/ferry-bench is missing)")
    ap.add_argument("--servers", type=str_list, default=["ferry", "redis"], help="comma list (default ferry,redis)")
    ap.add_argument("--keyspace", type=int, default=100000, help="-r keyspace (default 100000)")
    ap.add_argument("--requests", type=int, default=None, help="fixed -n for every point (skips calibration)")
    ap.add_argument("--target-seconds", type=float, default=1.0,
                    help="calibrated run length of the slower server per point (default 1.0)")
    ap.add_argument("--min-requests", type=int, default=10000, help="lower clamp of -n (default 10000)")
    ap.add_argument("--max-requests", type=int, default=5000000, help="upper clamp of -n (default 5000000)")
    ap.add_argument("--budget-minutes", type=float, default=42.0,
                    help="scale the calibrated -n down if the ETA exceeds this (default 42)")
    ap.add_argument("--dry-run", action="store_true", help="calibrate, print the plan and ETA, run nothing else")
    ap.add_argument("--no-pin", action="store_true", help="do not pin server/client with taskset")
    ap.add_argument("--ferry", default=None, help="ferry-server binary (default build/ferry-server or $FERRY_SERVER)")
    ap.add_argument("--redis", default=None, help="redis-server binary (default on PATH or $REDIS_SERVER)")
    ap.add_argument("--ferry-bench", default=None, help="ferry-bench binary (default build/ferry-bench)")
    ap.add_argument("--redis-benchmark", default=None, help="redis-benchmark binary (default on PATH)")
    return ap.parse_args(argv)


class Fleet:
    """The fresh servers of one block, restartable after a crash."""

    def __init__(self, kinds, binaries, pin, fill_keys: int, value_bytes: int):
        self.kinds = kinds
        self.binaries = binaries
        self.pin = pin
        self.fill_keys = fill_keys
        self.value_bytes = value_bytes
        self.servers = {}

    def start(self, kind):
        srv = bl.Server(kind, self.binaries[kind], pin=self.pin).start()
        if self.fill_keys:
            bl.fill_keys(srv.port, self.fill_keys, self.value_bytes)
            n = bl.dbsize(srv.port)
            if n != self.fill_keys:
                raise RuntimeError("%s: DBSIZE %d after filling %d keys" % (kind, n, self.fill_keys))
        self.servers[kind] = srv
        return srv

    def __enter__(self):
        for k in self.kinds:
            self.start(k)
        return self

    def get(self, kind):
        srv = self.servers.get(kind)
        if srv is None or not srv.alive():
            if srv is not None:
                bl.log("  !! %s server died (exit %s); log tail:\n%s" % (kind, srv.proc.returncode, srv.log_tail(10)))
                srv.cleanup()
            srv = self.start(kind)
        return srv

    def __exit__(self, *exc):
        for srv in self.servers.values():
            srv.cleanup()
        self.servers = {}


def probe_requests(c: int, p: int) -> int:
    return int(min(60000, max(2000, 2 * c * p)))


def calibrate(tests, sizes, conns, pipelines, kinds, binaries, clients, keyspace, pin):
    """Measure rps of short probes: rps[(client, test, size, C, P)][server],
    plus the mean per-run overhead (wall time not covered by n/rps)."""
    rps = {}
    overheads = []
    t0 = time.monotonic()
    for test in tests:
        for size in sizes:
            fill = keyspace if test == "GET" else 0
            with Fleet(kinds, binaries, pin, fill, size) as fleet:
                for client, cbin in clients:
                    for c in conns:
                        for p in pipelines:
                            n = probe_requests(c, p)
                            for kind in kinds:
                                srv = fleet.get(kind)
                                try:
                                    r = bl.run_client(client, cbin, srv.port, test, c, p, n, size, keyspace, pin)
                                except RuntimeError as e:
                                    bl.log("  !! calibration probe failed: %s" % str(e).splitlines()[0])
                                    continue
                                rps.setdefault((client, test, size, c, p), {})[kind] = r["rps"]
                                overheads.append(max(0.0, r["wall_s"] - n / r["rps"]))
                    bl.log("  calibrated %-4s %4d B %-15s C=%d: %s" % (
                        test, size, client, conns[-1], " ".join(
                            "P%d=%s" % (p, "/".join("%.0fk" % (rps.get((client, test, size, conns[-1], p), {})
                                                               .get(k, 0) / 1e3) for k in kinds))
                            for p in pipelines)))
    overhead = sum(overheads) / len(overheads) if overheads else 0.1
    return rps, overhead, time.monotonic() - t0


def size_requests(rates: dict, c: int, p: int, target: float, lo: int, hi: int) -> int:
    floor = max(lo, 2 * c * p)
    if not rates:
        return int(math.ceil(floor / 1000.0) * 1000)
    n = target * min(rates.values())
    n = min(hi, max(floor, n))
    return int(math.ceil(n / 1000.0) * 1000)


def main(argv=None) -> int:
    args = parse_args(argv)
    bl.install_signal_handlers()
    pin = bl.pinning_available() and not args.no_pin
    out_dir = Path(args.out)
    tag = args.tag or ("quick" if args.quick else "full")

    if args.quick:
        conns = args.conns or [50]
        pipelines = args.pipelines or [1, 100]
        tests = args.tests or ["SET", "GET"]
        sizes = args.sizes or [64]
        want_clients = args.clients or ["redis-benchmark"]
        fixed_n = args.requests or QUICK_REQUESTS
    else:
        conns = args.conns or FULL_CONNS
        pipelines = args.pipelines or FULL_PIPELINES
        tests = args.tests or FULL_TESTS
        sizes = args.sizes or FULL_SIZES
        want_clients = args.clients or list(bl.CLIENT_CHOICES)
        fixed_n = args.requests
    tests = [t.upper() for t in tests]
    for t in tests:
        if t not in bl.TEST_CHOICES:
            raise SystemExit("unknown test %r (choose from %s)" % (t, ", ".join(bl.TEST_CHOICES)))
    kinds = args.servers
    for k in kinds:
        if k not in ("ferry", "redis"):
            raise SystemExit("unknown server %r" % k)

    binaries = {k: bl.server_binary(k, getattr(args, k)) for k in kinds}
    versions = {k: bl.server_version(k, binaries[k]) for k in kinds}
    clients = []
    for c in want_clients:
        if c not in bl.CLIENT_CHOICES:
            raise SystemExit("unknown client %r" % c)
        b = bl.client_binary(c, args.ferry_bench if c == "ferry-bench" else args.redis_benchmark)
        if b is None:
            where = (args.ferry_bench or str(bl.DEFAULT_FERRY_BENCH)) if c == "ferry-bench" else "redis-benchmark"
            bl.log("sweep: SKIPPING client %s: binary not found (%s); build it with `make` to include it"
                   % (c, where))
            continue
        clients.append((c, b))
    if not clients:
        raise SystemExit("sweep: no load generator available")

    def reps(c, p):
        if not args.quick and c == HEADLINE_CONNS and p in HEADLINE_PIPELINES:
            return max(args.repeats, args.headline_repeats)
        return args.repeats

    started = bl.utc_now()
    t_start = time.monotonic()
    bl.log("sweep[%s]: servers %s, clients %s, C=%s, P=%s, tests %s, sizes %s, pinning %s"
           % (tag, ", ".join("%s %s" % (k, versions[k]) for k in kinds), ",".join(c for c, _ in clients),
              conns, pipelines, ",".join(tests), sizes, bl.pinning_description(pin)))

    # ---- sizing
    if fixed_n:
        rates = {}
        overhead = 0.15
        bl.log("sweep: fixed -n %d for every point (no calibration)" % fixed_n)
    else:
        bl.log("sweep: calibrating -n with short probes (%d points x %d clients x %d servers)..."
               % (len(tests) * len(sizes) * len(conns) * len(pipelines), len(clients), len(kinds)))
        rates, overhead, cal_s = calibrate(tests, sizes, conns, pipelines, kinds, binaries, clients,
                                           args.keyspace, pin)
        bl.log("sweep: calibration took %s; per-run overhead %.3f s" % (bl.human_secs(cal_s), overhead))

    def plan_for(target):
        blocks = []
        predicted = 0.0
        for test in tests:
            for size in sizes:
                pairs = []
                for c in conns:
                    for p in pipelines:
                        for client, cbin in clients:
                            r = rates.get((client, test, size, c, p), {})
                            n = fixed_n or size_requests(r, c, p, target, args.min_requests, args.max_requests)
                            for rep in range(1, reps(c, p) + 1):
                                est = 0.0
                                for k in kinds:
                                    est += n / r[k] if r.get(k) else n / 50000.0
                                    est += overhead
                                pairs.append({"client": client, "cbin": cbin, "c": c, "p": p, "rep": rep, "n": n,
                                              "est": est})
                                predicted += est
                predicted += 1.0 + (args.keyspace / 100000.0 * 1.5 if test == "GET" else 0.0)  # starts + fill
                blocks.append({"test": test, "size": size, "pairs": pairs})
        return blocks, predicted

    target = args.target_seconds
    blocks, predicted = plan_for(target)
    elapsed = time.monotonic() - t_start
    budget = args.budget_minutes * 60.0 - elapsed
    if not fixed_n and predicted > budget > 0:
        for _ in range(8):
            target *= max(0.2, budget / predicted * 0.97)
            blocks, predicted = plan_for(target)
            if predicted <= budget:
                break
        bl.log("sweep: ETA over budget; target scaled to %.2f s per point" % target)
    total_runs = sum(len(b["pairs"]) for b in blocks) * len(kinds)
    bl.log("sweep: %d runs in %d blocks; estimated %s (+%s so far) -> ETA %s"
           % (total_runs, len(blocks), bl.human_secs(predicted), bl.human_secs(elapsed),
              time.strftime("%H:%M:%S", time.localtime(time.time() + predicted))))

    if args.dry_run:
        for blk in blocks:
            for pr in blk["pairs"]:
                bl.log("  plan %-4s %4dB %-15s C=%-2d P=%-3d run%d n=%-7d est %.2fs"
                       % (blk["test"], blk["size"], pr["client"], pr["c"], pr["p"], pr["rep"], pr["n"], pr["est"]))
        bl.log("sweep: dry run, nothing written")
        return 0

    # ---- run
    out_path = out_dir / ("sweep_%s.csv" % tag)
    sink = bl.CsvAppender(out_path, COLUMNS)
    failures = []
    first = 0                           # index into kinds of the server that goes first
    done_est = 0.0
    t_run = time.monotonic()
    npair = sum(len(b["pairs"]) for b in blocks)
    ipair = 0
    try:
        for blk in blocks:
            test, size = blk["test"], blk["size"]
            fill = args.keyspace if test == "GET" else 0
            with Fleet(kinds, binaries, pin, fill, size) as fleet:
                for pr in blk["pairs"]:
                    ipair += 1
                    order = kinds[first:] + kinds[:first]
                    first = (first + 1) % len(kinds)
                    parts = []
                    for pos, kind in enumerate(order, 1):
                        srv = fleet.get(kind)
                        when = bl.utc_now()
                        try:
                            r = bl.run_client(pr["client"], pr["cbin"], srv.port, test, pr["c"], pr["p"], pr["n"],
                                              size, args.keyspace, pin)
                        except RuntimeError as e:
                            failures.append((kind, test, size, pr["client"], pr["c"], pr["p"], pr["rep"],
                                             str(e).splitlines()[0]))
                            bl.log("  !! %s %s: %s" % (kind, test, str(e).splitlines()[0]))
                            parts.append("%s FAILED" % kind)
                            continue
                        sink.add({
                            "server": kind, "server_version": versions[kind], "client": pr["client"],
                            "test": test, "clients": pr["c"], "pipeline": pr["p"], "value_bytes": size,
                            "persistence": "none", "tls": "off", "run": pr["rep"], "requests": pr["n"],
                            "rps": bl.fmt_num(r["rps"], 2), "avg_ms": bl.fmt_num(r.get("avg_ms", "")),
                            "min_ms": bl.fmt_num(r.get("min_ms", "")), "p50_ms": bl.fmt_num(r.get("p50_ms", "")),
                            "p95_ms": bl.fmt_num(r.get("p95_ms", "")), "p99_ms": bl.fmt_num(r.get("p99_ms", "")),
                            "max_ms": bl.fmt_num(r.get("max_ms", "")), "p999_ms": bl.fmt_num(r.get("p999_ms", "")),
                            "order": pos, "started_utc": when})
                        parts.append("%s %.0fk rps (%.2fs)" % (kind, r["rps"] / 1e3, r["wall_s"]))
                    done_est += pr["est"]
                    spent = time.monotonic() - t_run
                    left_est = predicted - done_est
                    ratio = spent / done_est if done_est > 0 else 1.0
                    bl.log("[%d/%d] %-4s %4dB %-15s C=%-2d P=%-3d run%d n=%d: %s | %s elapsed, ~%s left"
                           % (ipair, npair, test, size, pr["client"], pr["c"], pr["p"], pr["rep"], pr["n"],
                              ", ".join(parts), bl.human_secs(spent), bl.human_secs(left_est * ratio)))
    finally:
        sink.close()
        ended = bl.utc_now()
        bl.record_window(out_dir, "sweep_%s" % tag, started, ended, pinning=bl.pinning_description(pin),
                         clients=[c for c, _ in clients], rows=sink.count)
    return bl.report_runs("sweep", sink.count, out_path, t_start, failures)


if __name__ == "__main__":
    bl.run_main(main)
