"""The value-size axis (results/bench/values.csv): medians, targets, table, figure.

What: per (test, value size, pipeline depth P) over the runs of
scripts/values_bench.py: each server's median rps, p99 and server CPU µs per
request; ferry's ratio to redis-server and its fraction of the null-server
ceiling (the fastest null-* server measured at that point); ferry's own
P=100 / P=16 at the same size; and which of issue 19's targets the point
misses. The figure shows median rps against value size (log-log, each run a
faint dot) for ferry, redis-server and the ceiling, one panel per P in
FIG_PIPELINES, one figure per test.

Why: issue 19 asks that ferry be no slower than Redis at any value size and
well ahead with pipelining, judged against the null server's ceiling; this
turns the raw runs into those ratios, deterministically (fixed orders, no
randomness), for `make reproduce` and for the script's own summary.
"""
from __future__ import annotations

import math
from pathlib import Path

import numpy as np

from analysis import ceiling, io_csv, plots, tables
from analysis.tables import Table, fmt
from matplotlib.figure import Figure  # noqa: E402  (after plots, which selects the Agg backend)

REFERENCE, SUBJECT, NULL_PREFIX = "redis", "ferry", "null-"
FIG_PIPELINES = (16, 100)
NULL_COLOR = "#555555"


def load(path: Path) -> list[dict]:
    return ceiling.load(path, io_csv.VALUES_COLUMNS)


def _ratio(a: float, b: float) -> float:
    return a / b if b > 0 else math.nan


def per_server(rows: list[dict]) -> dict:
    """{(test, value_bytes, pipeline, server): {rps, p99_ms, cpu_us, runs, rps_runs}}."""
    groups: dict = {}
    for r in rows:
        groups.setdefault((r["test"], r["value_bytes"], r["pipeline"], r["server"]), []).append(r)
    return {k: {"rps": ceiling.nanmedian(r["rps"] for r in rs), "p99_ms": ceiling.nanmedian(r["p99_ms"] for r in rs),
                "cpu_us": ceiling.nanmedian(r["server_cpu_us_per_op"] for r in rs), "runs": len(rs),
                "rps_runs": sorted(r["rps"] for r in rs)}
            for k, rs in sorted(groups.items())}


def misses(d: dict) -> list[str]:
    """Issue 19's targets the point d (a summarize() row) misses; NaN is not judged."""
    size, p, ratio = d["value_bytes"], d["pipeline"], d["ferry_ratio"]
    out = []
    if ratio < 1.0:
        out.append("below 1.0x redis")
    if p >= 16 and size in (1024, 4096) and ratio < 1.5:
        out.append("below 1.5x redis")
    if p >= 16 and size >= 16384 and ratio < 1.2 and d["ferry_of_ceiling"] < 0.9:
        out.append("below 1.2x redis and 90% of the ceiling")
    if p == 100 and d["p100_over_p16"] < 0.9:
        out.append("P=100 below 0.9x P=16")
    if p >= 16 and d["ferry_p99_ms"] > d["redis_p99_ms"]:
        out.append("p99 above redis")
    return out


def summarize(rows: list[dict]) -> list[dict]:
    """One dict per (test, value_bytes, pipeline), sorted."""
    med = per_server(rows)
    nan = {"rps": math.nan, "p99_ms": math.nan, "cpu_us": math.nan, "runs": 0}
    out = []
    for test, size, p in sorted({k[:3] for k in med}):
        def get(server):
            return med.get((test, size, p, server), nan)
        nulls = [(v["rps"], k[3]) for k, v in med.items()
                 if k[:3] == (test, size, p) and k[3].startswith(NULL_PREFIX) and not math.isnan(v["rps"])]
        null_rps, null_name = max(nulls) if nulls else (math.nan, "")
        f, r = get(SUBJECT), get(REFERENCE)
        d = {"test": test, "value_bytes": size, "pipeline": p, "redis_rps": r["rps"], "ferry_rps": f["rps"],
             "null_rps": null_rps, "null_server": null_name, "ferry_ratio": _ratio(f["rps"], r["rps"]),
             "ferry_of_ceiling": _ratio(f["rps"], null_rps),
             "p100_over_p16": (_ratio(f["rps"], med.get((test, size, 16, SUBJECT), nan)["rps"])
                               if p == 100 else math.nan),
             "ferry_p99_ms": f["p99_ms"], "redis_p99_ms": r["p99_ms"], "ferry_cpu_us": f["cpu_us"],
             "redis_cpu_us": r["cpu_us"], "runs": min(f["runs"], r["runs"])}
        d["misses"] = misses(d)
        out.append(d)
    return out


def size_label(n: int) -> str:
    return f"{n // 1024} KB" if n >= 1024 and n % 1024 == 0 else f"{n} B"


def _setting(rows: list[dict]) -> str:
    keys = sorted({(r["clients"], r["client"], r["client_cc"]) for r in rows})
    return "; ".join(f"C={c}, {cl} (TCP {cc or 'unknown'})" for c, cl, cc in keys) or "no rows"


def make_table(stem: str, rows: list[dict]) -> Table:
    t = Table(title=f"Value sizes: GET and SET, ferry vs redis vs the null-server ceiling ({stem}.csv)",
              header=["test", "value", "P", "redis rps", "ferry rps", "ceiling rps", "ferry / redis",
                      "ferry / ceiling", "ferry P=100 / P=16", "ferry p99 ms", "redis p99 ms",
                      "ferry CPU µs/op", "redis CPU µs/op", "runs", "issue 19 targets missed"])
    for d in summarize(rows):
        t.rows.append([d["test"], size_label(d["value_bytes"]), fmt(d["pipeline"]), fmt(d["redis_rps"], ",.0f"),
                       fmt(d["ferry_rps"], ",.0f"), fmt(d["null_rps"], ",.0f"), fmt(d["ferry_ratio"], ".2f"),
                       fmt(d["ferry_of_ceiling"], ".2f"), fmt(d["p100_over_p16"], ".2f"),
                       fmt(d["ferry_p99_ms"], ".3f"), fmt(d["redis_p99_ms"], ".3f"), fmt(d["ferry_cpu_us"], ".2f"),
                       fmt(d["redis_cpu_us"], ".2f"), fmt(d["runs"]),
                       "" if math.isnan(d["ferry_ratio"]) else "; ".join(d["misses"]) or "none"])
    t.notes.append(f"Setting: {_setting(rows)}; servers alternating run by run, server pinned to CPU 0 and "
                   "client to CPU 1. Medians over runs; ratios are of medians.")
    t.notes.append("Ceiling: the fastest null server (build/ferry-null-server: GET answered with a bulk of the "
                   "value size, SET with +OK, no keyspace). CPU µs/op: server CPU over the client's run / requests.")
    t.notes.append("Targets (issue 19): ferry >= 1.0x redis everywhere; at P >= 16, >= 1.5x for 1 KB and 4 KB, "
                   ">= 1.2x for 16 KB and 64 KB or >= 90% of the ceiling; P=100 >= 0.9x P=16; "
                   "p99 at P >= 16 no worse than redis's.")
    return t


def fig_rps_vs_size(stem: str, test: str, rows: list[dict]):
    """Median rps against value size, one panel per P in FIG_PIPELINES."""
    med = per_server([r for r in rows if r["test"] == test])
    fig = Figure(figsize=(6.4, 3.4))
    sizes = sorted({k[1] for k in med})
    conns = ",".join(str(c) for c in sorted({r["clients"] for r in rows if r["test"] == test}))
    for i, p in enumerate(FIG_PIPELINES):
        ax = fig.add_subplot(1, len(FIG_PIPELINES), i + 1)
        for server in sorted({k[3] for k in med if k[2] == p}):
            pts = [(k[1], v) for k, v in med.items() if k[2] == p and k[3] == server]
            null = server.startswith(NULL_PREFIX)
            c = NULL_COLOR if null else plots.color(server)
            for size, v in pts:
                ax.scatter([size] * len(v["rps_runs"]), np.array(v["rps_runs"]) / 1e3, s=6, color=c,
                           alpha=0.35, linewidths=0)
            ax.plot([s for s, _ in pts], [v["rps"] / 1e3 for _, v in pts], "--" if null else "-",
                    marker="s" if null else "o", ms=3.5, color=c,
                    label=f"{server} (ceiling)" if null else server)
        ax.set_xscale("log", base=2)
        ax.set_yscale("log")
        ax.set_xticks(sizes)
        ax.set_xticklabels([size_label(s) for s in sizes])
        ax.minorticks_off()
        ax.set_xlabel("value size")
        ax.set_ylabel("median rps (thousands)")
        ax.set_title(f"{test}, P={p}, C={conns}")
        if ax.lines:
            ax.legend(loc="lower left")
    fig.suptitle(f"{test} throughput vs value size; data: {stem}.csv", fontsize=8)
    return fig


def write_outputs(path: Path, fig_dir: Path, tab_dir: Path) -> tuple[list[Path], int]:
    """values__<stem>.{md,tex} and values__rps_vs_size__<test>.{png,pdf}; returns (paths, rows)."""
    rows = load(path)
    out = tables.write(tab_dir, f"values__{path.stem}", [make_table(path.stem, rows)])
    for test in sorted({r["test"] for r in rows}):
        out += plots.save(fig_rps_vs_size(path.stem, test, rows), fig_dir, f"values__rps_vs_size__{test}")
    return out, len(rows)
