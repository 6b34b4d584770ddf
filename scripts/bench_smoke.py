"""Smoke test of the benchmark scripts against the real servers (`make test`).

What: into a temporary directory, runs
  - sweep.py --quick (C=50, P in {1,100}, SET+GET, 64 B, redis-benchmark),
    plus, when build/ferry-bench exists, the same with --clients ferry-bench;
  - syscalls.py --quick (C=1, P=10, strace attached);
  - memory.py --quick (N=10000);
  - values_bench.py at one point (64 KB values, P=16, 2000 requests, one
    round of redis, ferry and, when built, the null server);
  - cluster_bench.py --quick, one ferry node and a 2-node ferry cluster
    (scripts/ferry-cluster), redis-benchmark [--cluster] at P=16;
  - unavailable.py and manifest.py;
and asserts that each produced rows with the agreed columns for both servers:
rps > 0 (and p999_ms present for ferry-bench), read/write syscalls > 0,
RSS growth > 0, unavailable.csv well-formed, and a manifest whose csv_sha256
matches the files. Needs build/ferry-server, redis-server, redis-benchmark
and strace. Finishes in well under 60 s; exits non-zero with the reason on
any failure.

Why: the experiment scripts are only run for real by `make bench` (tens of
minutes); this keeps them from rotting between runs.
"""
from __future__ import annotations

import argparse
import csv
import hashlib
import json
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import benchlib as bl

HERE = Path(__file__).resolve().parent
SERVERS = ("ferry", "redis")


class SmokeFailure(Exception):
    pass


def check(cond, msg):
    if not cond:
        raise SmokeFailure(msg)


def run_step(name, argv, timeout):
    t0 = time.monotonic()
    p = subprocess.run([sys.executable, str(HERE / argv[0])] + argv[1:], capture_output=True, text=True,
                       timeout=timeout)
    dt = time.monotonic() - t0
    if p.returncode != 0:
        raise SmokeFailure("%s exited %d\n--- stdout\n%s\n--- stderr\n%s"
                           % (name, p.returncode, p.stdout[-3000:], p.stderr[-3000:]))
    return dt


def read_csv(path: Path, columns):
    check(path.exists(), "%s was not written" % path)
    with open(path, newline="") as f:
        r = csv.DictReader(f)
        check(r.fieldnames == columns, "%s: columns %s, expected %s" % (path.name, r.fieldnames, columns))
        return list(r)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--keep", action="store_true", help="keep the temporary output directory")
    args = ap.parse_args(argv)
    import sweep, syscalls, memory, values_bench, cluster_bench  # noqa: E401  (column lists)
    t_all = time.monotonic()
    tmp = Path(tempfile.mkdtemp(prefix="ferry-bench-smoke-"))
    try:
        out = str(tmp)
        dt = run_step("sweep --quick", ["sweep.py", "--quick", "--out", out], 60)
        rows = read_csv(tmp / "sweep_quick.csv", sweep.COLUMNS)
        for s in SERVERS:
            mine = [r for r in rows if r["server"] == s]
            check(len(mine) == 4, "sweep: %d rows for %s, expected 4 (SET/GET x P 1/100)" % (len(mine), s))
            check(all(float(r["rps"]) > 0 for r in mine), "sweep: rps <= 0 for %s" % s)
            check({r["test"] for r in mine} == {"SET", "GET"}, "sweep: tests %s" % {r["test"] for r in mine})
            check(all(r["p50_ms"] and r["order"] in ("1", "2") for r in mine), "sweep: missing p50/order for %s" % s)
        print("bench_smoke: sweep --quick ok (%d rows, %.1fs)" % (len(rows), dt))

        if bl.client_binary("ferry-bench"):
            dt = run_step("sweep --quick ferry-bench",
                          ["sweep.py", "--quick", "--clients", "ferry-bench", "--tag", "quick_ferry_bench",
                           "--out", out], 60)
            rows = read_csv(tmp / "sweep_quick_ferry_bench.csv", sweep.COLUMNS)
            for s in SERVERS:
                mine = [r for r in rows if r["server"] == s and r["client"] == "ferry-bench"]
                check(len(mine) == 4, "sweep(ferry-bench): %d rows for %s" % (len(mine), s))
                check(all(float(r["rps"]) > 0 and r["p999_ms"] != "" for r in mine),
                      "sweep(ferry-bench): rps <= 0 or no p999 for %s" % s)
            print("bench_smoke: sweep --quick --clients ferry-bench ok (%d rows, %.1fs)" % (len(rows), dt))
        else:
            print("bench_smoke: build/ferry-bench missing: ferry-bench sweep check skipped")

        dt = run_step("syscalls --quick", ["syscalls.py", "--quick", "--out", out], 60)
        rows = read_csv(tmp / "syscalls.csv", syscalls.COLUMNS)
        for s in SERVERS:
            mine = [r for r in rows if r["server"] == s]
            check(len(mine) == 1, "syscalls: %d rows for %s" % (len(mine), s))
            r = mine[0]
            ops = int(r["ops"])
            check(ops > 0 and int(r["read_calls"]) > 0, "syscalls: no reads for %s: %s" % (s, r))
            check(int(r["writev_calls"]) + int(r["write_calls"]) > 0, "syscalls: no writes for %s: %s" % (s, r))
            check(int(r["read_calls"]) <= ops, "syscalls: more reads than ops at P=10 for %s: %s" % (s, r))
        print("bench_smoke: syscalls --quick ok (%.1fs)" % dt)

        dt = run_step("memory --quick", ["memory.py", "--quick", "--out", out], 60)
        rows = read_csv(tmp / "memory.csv", memory.COLUMNS)
        for s in SERVERS:
            mine = [r for r in rows if r["server"] == s]
            check(len(mine) == 2, "memory: %d rows for %s" % (len(mine), s))
            check(all(int(r["rss_after"]) > int(r["rss_before"]) and float(r["bytes_per_key"]) > 0 for r in mine),
                  "memory: no RSS growth for %s: %s" % (s, mine))
        print("bench_smoke: memory --quick ok (%.1fs)" % dt)

        servers = ["redis", "ferry"] + (["null-epoll"] if (bl.REPO / "build" / "ferry-null-server").exists() else [])
        dt = run_step("values_bench", ["values_bench.py", "--sizes", "65536", "--pipelines", "16", "--rounds", "1",
                                       "--requests", "2000", "--retries", "0", "--max-working-set-mb", "8",
                                       "--servers", ",".join(servers), "--out", out], 60)
        rows = read_csv(tmp / "values.csv", values_bench.COLUMNS)
        for s in servers:
            mine = [r for r in rows if r["server"] == s]
            check(sorted(r["test"] for r in mine) == ["GET", "SET"], "values: tests %s for %s" % (mine, s))
            check(all(float(r["rps"]) > 0 and r["value_bytes"] == "65536" and r["keyspace"] == "128"
                      and r["server_cpu_us_per_op"] != "" for r in mine), "values: bad rows for %s: %s" % (s, mine))
        print("bench_smoke: values_bench ok (%s, %.1fs)" % (",".join(servers), dt))

        dt = run_step("cluster_bench", ["cluster_bench.py", "--quick", "--setups", "ferry-1,ferry-2", "--tools",
                                        "redis-benchmark", "--pipelines", "16", "--out", out, "--tables", out], 60)
        rows = read_csv(tmp / "cluster.csv", cluster_bench.COLUMNS)
        check(sorted((r["setup"], r["test"], r["nodes"]) for r in rows)
              == [("ferry-1", "GET", "1"), ("ferry-1", "SET", "1"), ("ferry-2", "GET", "2"), ("ferry-2", "SET", "2")],
              "cluster: rows %s" % [(r["setup"], r["test"]) for r in rows])
        check(all(float(r["rps"]) > 0 and int(r["requests"]) > 0 for r in rows), "cluster: bad rows %s" % rows)
        print("bench_smoke: cluster_bench ok (%.1fs)" % dt)

        run_step("unavailable", ["unavailable.py", "--out", out], 60)
        rows = read_csv(tmp / "unavailable.csv", ["metric", "reason"])
        check(all(r["metric"] and r["reason"] for r in rows), "unavailable: empty metric/reason")
        run_step("manifest", ["manifest.py", "--bench-dir", out, "--out", str(tmp / "manifest.json")], 60)
        man = json.loads((tmp / "manifest.json").read_text())
        for key in ("git_sha", "server_versions", "os", "kernel", "compiler", "cflags", "cpu_model",
                    "time_windows", "csv_sha256"):
            check(key in man, "manifest: no %s" % key)
        csvs = sorted(tmp.glob("*.csv"))
        check(len(man["csv_sha256"]) == len(csvs), "manifest: %d hashes for %d CSVs" % (len(man["csv_sha256"]),
                                                                                       len(csvs)))
        for p in csvs:
            check(man["csv_sha256"].get(p.name) == hashlib.sha256(p.read_bytes()).hexdigest(),
                  "manifest: wrong sha256 for %s" % p.name)
        check({"sweep_quick", "syscalls", "memory", "values"} <= set(man["time_windows"]),
              "manifest: time windows %s" % sorted(man["time_windows"]))
        print("bench_smoke: unavailable + manifest ok (%d rows unavailable)" % len(rows))
    except (SmokeFailure, subprocess.TimeoutExpired) as e:
        print("bench_smoke: FAILED: %s" % e, file=sys.stderr)
        if args.keep:
            print("bench_smoke: output kept in %s" % tmp, file=sys.stderr)
        return 1
    finally:
        if not args.keep:
            shutil.rmtree(tmp, ignore_errors=True)
    print("bench_smoke: all ok in %.1fs" % (time.monotonic() - t_all))
    return 0


if __name__ == "__main__":
    sys.exit(main())
