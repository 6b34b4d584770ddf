"""redis-benchmark's default test list, ferry vs redis-server side by side.

What: for each round, a fresh ferry-server and a fresh redis-server (order
alternating between rounds: A B, B A, ...) each get one run of
`redis-benchmark -c C -n N -P P --csv` with no -t, i.e. redis-benchmark's
own default list (PING, SET/GET/INCR, LPUSH/RPUSH/LPOP/RPOP, SADD, HSET,
SPOP, ZADD, ZPOPMIN, LRANGE_100..600, MSET). Every row is kept in
results/bench/default_suite.csv (server, round, test, rps, latencies); the
printed table gives, per test, each server's median rps over the rounds and
the ratio ferry/redis of the medians.

Why: issue #6 asks for the default run side by side; it is also the broadest
single view of per-type throughput. redis-benchmark is one process on one
core; at -P 1 it, not the server, is usually the bottleneck (see README).
"""
from __future__ import annotations

import argparse
import statistics
import subprocess
import time
from pathlib import Path

import benchlib as bl

COLUMNS = ["server", "round", "clients", "pipeline", "requests", "test", "rps", "avg_ms", "min_ms", "p50_ms",
           "p95_ms", "p99_ms", "max_ms"]


def run_default(binary: str, port: int, clients: int, pipeline: int, requests: int, pin: bool) -> list:
    argv = bl.pin_prefix("client", pin) + [binary, "-h", "127.0.0.1", "-p", str(port), "-c", str(clients),
                                           "-n", str(requests), "-P", str(pipeline), "--csv"]
    proc = subprocess.run(argv, capture_output=True, text=True, timeout=600, stdin=subprocess.DEVNULL)
    rows = bl.parse_bench_csv(proc.stdout)
    # the full names ("LPUSH (needed to benchmark LRANGE)" is not "LPUSH")
    names = [ln.split('","')[0].strip('"') for ln in proc.stdout.splitlines()
             if ln.startswith('"') and not ln.startswith('"test"')]
    if len(names) == len(rows):
        for r, name in zip(rows, names):
            r["test"] = name
    if proc.returncode != 0 or not rows or "ERR" in proc.stdout + proc.stderr:
        raise RuntimeError("redis-benchmark failed (exit %s): %s\n%s" % (proc.returncode, proc.stdout[-500:],
                                                                        proc.stderr[-500:]))
    return rows


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("-c", "--clients", type=int, default=50)
    ap.add_argument("-n", "--requests", type=int, default=100000)
    ap.add_argument("-P", "--pipeline", type=int, default=1)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--out", default=str(bl.REPO / "results" / "bench"))
    ap.add_argument("--no-pin", action="store_true")
    ap.add_argument("--ferry", default=None)
    ap.add_argument("--redis", default=None)
    args = ap.parse_args(argv)
    bl.install_signal_handlers()
    pin = bl.pinning_available() and not args.no_pin
    bench = bl.client_binary("redis-benchmark")
    kinds = ["ferry", "redis"]
    binaries = {k: bl.server_binary(k, getattr(args, k)) for k in kinds}
    out_dir = Path(args.out)
    started, t0 = bl.utc_now(), time.monotonic()
    rows = []
    try:
        for rnd in range(args.rounds):
            for k in (kinds if rnd % 2 == 0 else kinds[::-1]):
                with bl.Server(k, binaries[k], pin=pin) as srv:
                    for r in run_default(bench, srv.port, args.clients, args.pipeline, args.requests, pin):
                        r.update(server=k, round=rnd, clients=args.clients, pipeline=args.pipeline,
                                 requests=args.requests)
                        rows.append(r)
                bl.log("default suite: round %d %s done" % (rnd, k))
    finally:
        bl.record_window(out_dir, "default_suite", started, bl.utc_now(), pinning=bl.pinning_description(pin),
                         rows=len(rows))
    tests = list(dict.fromkeys(r["test"] for r in rows))
    bl.log("| test | ferry rps | redis rps | ratio |\n|---|---|---|---|")
    for t in tests:
        med = {k: statistics.median(float(r["rps"]) for r in rows if r["test"] == t and r["server"] == k)
               for k in kinds}
        bl.log("| %s | %.0f | %.0f | %.2f |" % (t, med["ferry"], med["redis"], med["ferry"] / med["redis"]))
    name = "default_suite" if args.pipeline == 1 else "default_suite_p%d" % args.pipeline
    return bl.write_results(out_dir, name, COLUMNS, rows, t0)


if __name__ == "__main__":
    bl.run_main(main)
