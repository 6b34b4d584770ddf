"""Synthetic results/ directories with known model constants, for tests only.

What: writes a sweep CSV generated from T(p) = p/(t0 + t1 p) with known
(t0, t1) per server plus multiplicative noise, and syscalls, instructions
and memory CSVs that follow known laws, optionally a ceiling CSV with known
medians and side-by-side suite CSVs (default_suite*, option_workloads) with
known medians, plus a manifest.json with correct hashes.

Why: the real sweep CSVs come from another engineer's scripts and may not
exist yet.  The analysis has to be tested on data whose truth is known.
Synthetic data is only ever written to a temporary directory, never into
results/.
"""
from __future__ import annotations

import contextlib
import csv
import importlib
import json
import math
import sys
from pathlib import Path

import numpy as np

# (t0 us/batch, t1 us/op): ferry faster per op and per batch than redis
TRUTH = {"ferry": (6.8, 0.0734), "redis": (14.0, 0.20)}
PIPELINES = (1, 10, 16, 50, 100, 200, 500, 750)
SWEEP_HEADER = ["server", "server_version", "client", "test", "clients", "pipeline",
                "value_bytes", "persistence", "tls", "run", "requests", "rps",
                "avg_ms", "min_ms", "p50_ms", "p95_ms", "p99_ms", "max_ms", "p999_ms",
                "order", "started_utc"]


def sweep_rows(tests=("GET", "SET"), clients=(50,), runs=3, noise=0.01,
               seed=1, pipelines=PIPELINES, truth=TRUTH, value_bytes=64):
    """Rows (dicts) for a sweep following T(p) exactly up to noise."""
    rng = np.random.default_rng(seed)
    rows, order = [], 0
    for test in tests:
        for c in clients:
            for p in pipelines:
                for run in range(runs):
                    for srv in sorted(truth):
                        t0, t1 = truth[srv]
                        T = p / (t0 + t1 * p) * (1.0 + noise * rng.standard_normal())
                        rps = T * 1e6
                        # Little: in flight = C*p -> mean latency = C*p/rps; p50 a bit lower
                        p50 = 0.9 * c * p / rps * 1000.0
                        rows.append({
                            "server": srv, "server_version": "7.2.4" if srv == "ferry" else "7.0.15",
                            "client": "redis-benchmark", "test": test, "clients": c,
                            "pipeline": p, "value_bytes": value_bytes, "persistence": "none",
                            "tls": "off", "run": run, "requests": 1000000,
                            "rps": f"{rps:.2f}", "avg_ms": f"{p50 * 1.05:.3f}",
                            "min_ms": f"{p50 * 0.3:.3f}", "p50_ms": f"{p50:.3f}",
                            "p95_ms": f"{p50 * 1.6:.3f}", "p99_ms": f"{p50 * 2.2:.3f}",
                            "max_ms": f"{p50 * 8:.3f}",
                            "p999_ms": f"{p50 * 3:.3f}" if srv == "ferry" else "",
                            "order": order, "started_utc": f"2026-11-22T10:{order % 60:02d}:00Z"})
                        order += 1
    return rows


def write_csv(path: Path, header: list[str], rows: list[dict]) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "w", newline="", encoding="utf-8") as fh:
        w = csv.DictWriter(fh, fieldnames=header, lineterminator="\n")
        w.writeheader()
        for r in rows:
            w.writerow(r)
    return path


def syscall_rows(clients=(1, 10, 50), pipelines=PIPELINES, tests=("GET",)):
    """Per-connection law: one read + one writev per batch per connection."""
    rows = []
    for srv in ("ferry", "redis"):
        for test in tests:
            for c in clients:
                for p in pipelines:
                    ops = 1_000_000 - (1_000_000 % (c * p))
                    batches = ops // p
                    rows.append({"server": srv, "clients": c, "pipeline": p, "test": test,
                                 "ops": ops, "read_calls": batches,
                                 "writev_calls": batches if srv == "ferry" else 0,
                                 "write_calls": 0 if srv == "ferry" else batches,
                                 "epoll_wait_calls": max(batches // c, 1),
                                 "other_calls": 17})
    return rows


def instruction_rows(pipelines=PIPELINES):
    rows = []
    for srv, (i0, i1) in (("ferry", (9000.0, 700.0)), ("redis", (20000.0, 1900.0))):
        for p in pipelines:
            ops = 200_000
            rows.append({"server": srv, "test": "GET", "pipeline": p, "clients": 50,
                         "ops": ops, "instructions": int(ops * (i1 + i0 / p))})
    return rows


def memory_rows():
    rows = []
    for srv, bpk in (("ferry", 92.0), ("redis", 168.0)):
        for n in (100_000, 1_000_000):
            before = 3_000_000
            after = before + int(bpk * n)
            rows.append({"server": srv, "keys": n, "key_bytes": 16, "value_bytes": 64,
                         "rss_before": before, "rss_after": after,
                         "bytes_per_key": f"{(after - before) / n:.3f}"})
    return rows


CEILING_HEADER = ["server", "server_version", "client", "test", "clients", "pipeline",
                  "value_bytes", "run", "order", "requests", "rps", "p50_ms", "p99_ms",
                  "wall_s", "server_user_s", "server_sys_s", "client_user_s",
                  "client_sys_s", "started_utc"]
# per server: rps of runs 1..5 (median is the middle one listed first) and
# (server user, server sys, client user, client sys) µs/op, each scaled per run
# by CEILING_CPU_SCALE (median scale 1.0)
CEILING_TRUTH = {
    "redis": ((100_000, 90_000, 110_000, 95_000, 105_000), (0.6, 3.6, 0.5, 3.5)),
    "ferry": ((115_000, 100_000, 130_000, 110_000, 120_000), (0.3, 3.4, 0.5, 3.5)),
    "ferry-nopoll": ((112_000, 99_000, 125_000, 111_000, 114_000), (0.3, 3.3, 0.5, 3.5)),
    "null-epoll": ((118_000, 101_000, 131_000, 117_000, 119_000), (0.1, 3.2, 0.5, 3.5)),
    "null-uring": ((121_000, 120_000, 140_000, 90_000, 122_000), (0.1, 2.9, 0.5, 3.5)),
}
CEILING_CPU_SCALE = (1.0, 0.8, 1.3, 0.9, 1.1)


def ceiling_rows(servers=tuple(CEILING_TRUTH), tests=("GET", "SET"), requests=600_000):
    """Rows of a ceiling.csv whose medians are CEILING_TRUTH's first rps and
    its µs/op exactly (CPU seconds are given to 0.01 s like the script's)."""
    rows = []
    for test in tests:
        for run in range(5):
            for order, srv in enumerate(servers, 1):
                rps_list, us = CEILING_TRUTH[srv]
                rps = rps_list[run]
                cpu = [f"{u * CEILING_CPU_SCALE[run] * requests / 1e6:.2f}" for u in us]
                rows.append({"server": srv, "server_version": "7.0.15" if srv == "redis" else "0.1.0",
                             "client": "ferry-bench", "test": test, "clients": 50, "pipeline": 1,
                             "value_bytes": 64, "run": run + 1, "order": order,
                             "requests": requests, "rps": f"{rps:.2f}", "p50_ms": "0.400",
                             "p99_ms": "1.000", "wall_s": f"{requests / rps + 0.05:.4f}",
                             "server_user_s": cpu[0], "server_sys_s": cpu[1],
                             "client_user_s": cpu[2], "client_sys_s": cpu[3],
                             "started_utc": f"2026-11-22T11:{run:02d}:{order:02d}.000000Z"})
    return rows


VALUES_HEADER = ["server", "server_version", "client", "test", "clients", "pipeline", "value_bytes",
                 "keyspace", "run", "order", "requests", "rps", "p50_ms", "p99_ms", "server_cpu_us_per_op",
                 "wall_s", "server_user_s", "server_sys_s", "client_user_s", "client_sys_s", "started_utc",
                 "client_cc"]
VALUES_BASE = {"redis": 100_000, "ferry": 150_000, "null-epoll": 200_000}
VALUES_P99 = {"redis": 2.0, "ferry": 1.0, "null-epoll": 0.5}
VALUES_CPU = {"redis": 4.0, "ferry": 2.0, "null-epoll": 1.0}
VALUES_RUN_SCALE = (1.0, 0.9, 1.1)        # median 1.0
# (test, value_bytes, pipeline, server) -> rps multiplier on top of values_rps()
VALUES_OVERRIDE = {("GET", 16384, 100, "ferry"): 0.8 / 1.5}


@contextlib.contextmanager
def script_module(name: str):
    """scripts/<name>.py imported as a module (scripts/ on sys.path meanwhile)."""
    scripts = str(Path(__file__).resolve().parents[2] / "scripts")
    sys.path.insert(0, scripts)
    try:
        yield importlib.import_module(name)
    finally:
        sys.path.remove(scripts)


def values_rps(server: str, test: str, size: int, p: int) -> float:
    """Median rps of values_rows(): ferry 1.5x redis and 0.75x the ceiling,
    growing with sqrt(P), falling with size; except VALUES_OVERRIDE."""
    return (VALUES_BASE[server] * math.sqrt(p) / (1 + size / 4096)
            * VALUES_OVERRIDE.get((test, size, p, server), 1.0))


def values_rows(tests=("GET", "SET"), sizes=(64, 1024, 4096, 16384, 65536), pipelines=(1, 16, 100),
                servers=tuple(VALUES_BASE)):
    rows = []
    for test in tests:
        for size in sizes:
            for p in pipelines:
                for run, scale in enumerate(VALUES_RUN_SCALE):
                    for order, srv in enumerate(servers, 1):
                        rps = values_rps(srv, test, size, p) * scale
                        rows.append({"server": srv, "server_version": "7.0.15" if srv == "redis" else "0.1.0",
                                     "client": "ferry-bench", "test": test, "clients": 50, "pipeline": p,
                                     "value_bytes": size, "keyspace": 10000, "run": run + 1, "order": order,
                                     "requests": 100_000, "rps": f"{rps:.2f}", "p50_ms": "0.500",
                                     "p99_ms": f"{VALUES_P99[srv] * scale:.3f}",
                                     "server_cpu_us_per_op": f"{VALUES_CPU[srv] * scale:.3f}",
                                     "wall_s": f"{100_000 / rps:.4f}", "server_user_s": "0.10",
                                     "server_sys_s": "0.20", "client_user_s": "0.1000", "client_sys_s": "0.2000",
                                     "started_utc": f"2026-11-28T12:{run:02d}:{order:02d}.000000Z",
                                     "client_cc": "cubic"})
    return rows


DEFAULT_SUITE_HEADER = ["server", "round", "clients", "pipeline", "requests", "test", "rps",
                        "avg_ms", "min_ms", "p50_ms", "p95_ms", "p99_ms", "max_ms"]
OPTION_WORKLOADS_HEADER = ["server", "round", "workload", "clients", "pipeline", "requests",
                           "keyspace", "rps", "p50_ms"]
# per test: ferry's and redis's rps in rounds 0, 1, 2 (medians 150k and 110k,
# ratio 1.36) and p50/p99 ms scaled per round by SUITE_LAT_SCALE (median 1)
SUITE_TRUTH = {
    "PING_INLINE": ((150_000, 140_000, 160_000), (100_000, 120_000, 110_000), (0.2, 0.4), (0.3, 0.5)),
    "SET": ((150_000, 160_000, 140_000), (110_000, 100_000, 120_000), (0.2, 0.4), (0.25, 0.5)),
    "MSET (10 keys)": ((90_000, 80_000, 100_000), (100_000, 120_000, 110_000), (0.4, 0.8), (0.2, 0.4)),
}
SUITE_LAT_SCALE = (1.0, 0.5, 2.0)


def suite_rows(kind: str = "default_suite", pipeline: int = 1, rounds: int = 3):
    """Rows of a default_suite or option_workloads CSV following SUITE_TRUTH,
    servers alternating as the scripts do."""
    rows = []
    for rnd in range(rounds):
        for srv in (("ferry", "redis") if rnd % 2 == 0 else ("redis", "ferry")):
            for test, (f_rps, r_rps, f_lat, r_lat) in SUITE_TRUTH.items():
                rps = (f_rps if srv == "ferry" else r_rps)[rnd]
                p50, p99 = (x * SUITE_LAT_SCALE[rnd] for x in (f_lat if srv == "ferry" else r_lat))
                row = {"server": srv, "round": rnd, "clients": 50, "pipeline": pipeline,
                       "requests": 100_000, "rps": f"{rps:.2f}", "p50_ms": f"{p50:.3f}"}
                if kind == "default_suite":
                    row |= {"test": test, "avg_ms": f"{p50:.3f}", "min_ms": "0.050",
                            "p95_ms": f"{p99:.3f}", "p99_ms": f"{p99:.3f}", "max_ms": "3.000"}
                else:
                    row |= {"workload": test.split()[0], "keyspace": 1_000_000}
                rows.append(row)
    return rows


def write_suites(bench: Path) -> list[Path]:
    """default_suite.csv (P=1), default_suite_p16.csv and option_workloads.csv."""
    return [write_csv(bench / "default_suite.csv", DEFAULT_SUITE_HEADER, suite_rows()),
            write_csv(bench / "default_suite_p16.csv", DEFAULT_SUITE_HEADER,
                      suite_rows(pipeline=16)),
            write_csv(bench / "option_workloads.csv", OPTION_WORKLOADS_HEADER,
                      suite_rows("option_workloads", pipeline=100, rounds=3))]


def make_results(root: Path, stem: str = "sweep_20261122", big: bool = False,
                 with_manifest: bool = True, with_ceiling: bool = False,
                 with_suites: bool = False, with_values: bool = False, **kw) -> Path:
    """Create <root>/results with synthetic CSVs; returns the results path."""
    res = root / "results"
    bench = res / "bench"
    if big:  # ~1200 rows: 2 servers x 4 tests x 3 C x 8 P x 6 runs
        kw = {"tests": ("GET", "SET", "INCR", "MSET"), "clients": (1, 10, 50),
              "runs": 6} | kw
    write_csv(bench / f"{stem}.csv", SWEEP_HEADER, sweep_rows(**kw))
    write_csv(bench / "syscalls.csv", ["server", "clients", "pipeline", "test", "ops",
                                       "read_calls", "writev_calls", "write_calls",
                                       "epoll_wait_calls", "other_calls"], syscall_rows())
    write_csv(bench / "instructions.csv", ["server", "test", "pipeline", "clients", "ops",
                                           "instructions"], instruction_rows())
    write_csv(bench / "memory.csv", ["server", "keys", "key_bytes", "value_bytes",
                                     "rss_before", "rss_after", "bytes_per_key"],
              memory_rows())
    write_csv(bench / "unavailable.csv", ["metric", "reason"],
              [{"metric": "cycles_per_op", "reason": "perf reports cycles <not supported>"},
               {"metric": "energy_j_per_op", "reason": "/sys/class/powercap/intel-rapl* absent"}])
    if with_ceiling:
        write_csv(bench / "ceiling.csv", CEILING_HEADER, ceiling_rows())
    if with_suites:
        write_suites(bench)
    if with_values:
        write_csv(bench / "values.csv", VALUES_HEADER, values_rows())
    if with_manifest:  # same shape as scripts/manifest.py writes
        from analysis import manifest
        man = {"git_sha": "0" * 40, "git_dirty": False,
               "server_versions": {"ferry": "7.2.4", "redis": "7.0.15"},
               "os": "Debian GNU/Linux 12", "kernel": "6.1.0", "compiler": "gcc 12.2.0",
               "cflags": "-O2", "cpu_model": "synthetic", "cpu_count": 2,
               "pinning": {"server": "0", "client": "1"},
               "time_windows": {"sweep": {"start_utc": "2026-11-22T10:00:00Z",
                                          "end_utc": "2026-11-22T10:30:00Z"}},
               "generated_utc": "2026-11-22T10:31:00Z",
               "csv_sha256": manifest.compute(res)}
        (res / "manifest.json").write_text(json.dumps(man, indent=2, sort_keys=True) + "\n")
    return res
