"""ferry and redis-server side by side: default_suite*.csv, option_workloads.csv.

What: scripts/default_suite.py (redis-benchmark's default test list;
default_suite.csv at P=1, default_suite_p<P>.csv at -P P) and
scripts/option_workloads.py (commands with more than three arguments) run
each test once per round on a fresh ferry-server and a fresh redis-server.
Per test, in the order of the file, this gives each server's median rps over
the rounds and the ratio ferry/redis of the medians (what the scripts print
and the README quotes), the same for each latency column the file has
(p50, p99), and below the table the geometric mean of the rps ratios.

Why: reproduce.py used to skip these files with a warning (issue 11), so
their numbers had no regenerated table; now `make reproduce` writes one per
CSV like for every other input (deterministic: file order, medians, no
randomness).
"""
from __future__ import annotations

import math
import statistics
from pathlib import Path

from analysis import io_csv
from analysis.tables import Table, fmt

SERVERS = ("ferry", "redis")
LATENCIES = ("p50_ms", "p99_ms")  # used when the CSV has them
TITLES = {"default_suite": "redis-benchmark default tests",
          "option_workloads": "Commands with more than three arguments"}


def columns(path: Path) -> dict[str, str]:
    """The typed columns to read: the required ones of the file's kind plus
    the optional latency and keyspace columns its header has."""
    kind = io_csv.suite_kind(path.stem)
    header = io_csv.read_header(path)
    optional = {c: "f" for c in (*LATENCIES, "keyspace") if c in header}
    return io_csv.SUITE_COLUMNS | {io_csv.SUITE_NAME_COLUMN[kind]: "s"} | optional


def load(path: Path) -> list[dict]:
    """Typed rows; each gets 'name' (the test or workload) and a lower-case server."""
    name = io_csv.SUITE_NAME_COLUMN[io_csv.suite_kind(path.stem)]
    rows = io_csv.load_typed(path, columns(path))
    for r in rows:
        r["name"] = r[name]
        r["server"] = r["server"].lower()
    return rows


def median(vals) -> float:
    """Median of the non-NaN values, NaN when there are none."""
    v = [float(x) for x in vals if not math.isnan(x)]
    return statistics.median(v) if v else math.nan


def ratio(a: float, b: float) -> float:
    return a / b if b > 0 and not math.isnan(a) else math.nan


def latencies(rows: list[dict]) -> list[str]:
    return [c for c in LATENCIES if rows and c in rows[0]]


def summarize(rows: list[dict]) -> list[dict]:
    """One dict per test in file order: runs, medians per server and ratios."""
    out = []
    for name in dict.fromkeys(r["name"] for r in rows):
        mine = [r for r in rows if r["name"] == name]
        d = {"name": name}
        for col in ("rps", *latencies(rows)):
            for s in SERVERS:
                d[f"{s}_{col}"] = median(r[col] for r in mine if r["server"] == s)
            d[f"ratio_{col}"] = ratio(d[f"ferry_{col}"], d[f"redis_{col}"])
        for s in SERVERS:
            d[f"{s}_runs"] = sum(r["server"] == s for r in mine)
        out.append(d)
    return out


def geomean(vals) -> float:
    v = [x for x in vals if x > 0 and math.isfinite(x)]
    return math.exp(math.fsum(math.log(x) for x in v) / len(v)) if v else math.nan


def _setting(rows: list[dict]) -> str:
    keys = sorted({(r["clients"], r["pipeline"], r["requests"], r.get("keyspace", math.nan))
                   for r in rows})
    return "; ".join(f"C={c}, P={p}, {fmt(n, ',.0f')} requests per run"
                     + ("" if math.isnan(k) else f", keyspace -r {fmt(k, ',.0f')}")
                     for c, p, n, k in keys) or "no rows"


def _ratio_note(summary: list[dict], noun: str) -> str:
    rs = [(d["ratio_rps"], d["name"]) for d in summary if not math.isnan(d["ratio_rps"])]
    if not rs:
        return f"No {noun} has both servers' rps."
    lo, hi = min(rs), max(rs)
    return (f"Geometric mean of the rps ratios over {len(rs)} {noun}s: {fmt(geomean(r for r, _ in rs), '.2f')} "
            f"(lowest {fmt(lo[0], '.2f')} {lo[1]}, highest {fmt(hi[0], '.2f')} {hi[1]}).")


def make_table(stem: str, rows: list[dict]) -> Table:
    """Medians per test, ferry vs redis, with ratios; notes give the setting."""
    kind = io_csv.suite_kind(stem)
    lat = latencies(rows)
    name_col = io_csv.SUITE_NAME_COLUMN[kind]
    t = Table(title=f"{TITLES[kind]}: ferry vs redis, medians over rounds ({stem}.csv)",
              header=[name_col, "runs ferry/redis", "ferry rps", "redis rps", "rps ratio"]
              + [h for c in lat for h in (f"ferry {c[:-3]} ms", f"redis {c[:-3]} ms",
                                           f"{c[:-3]} ratio")])
    summary = summarize(rows)
    for d in summary:
        cells = [d["name"], f"{d['ferry_runs']}/{d['redis_runs']}", fmt(d["ferry_rps"], ",.0f"),
                 fmt(d["redis_rps"], ",.0f"), fmt(d["ratio_rps"], ".2f")]
        for c in lat:
            cells += [fmt(d[f"ferry_{c}"], ".3f"), fmt(d[f"redis_{c}"], ".3f"),
                      fmt(d[f"ratio_{c}"], ".2f")]
        t.rows.append(cells)
    t.notes.append(f"Setting: {_setting(rows)}. Each round runs every {name_col} on a fresh "
                   "server of each kind, in alternating order.")
    t.notes.append("Medians over rounds. Ratios are ferry/redis of the medians: above 1 is better "
                   "for rps, below 1 is better for latency. A dash means not measured.")
    t.notes.append(_ratio_note(summary, name_col))
    others = sorted({r["server"] for r in rows} - set(SERVERS))
    if others:
        t.notes.append(f"Rows of other servers are not shown: {', '.join(others)}.")
    return t
