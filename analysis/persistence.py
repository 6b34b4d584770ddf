"""Side-by-side measurements in the long format: snapshots (load time, dump
size, BGSAVE under load: results/bench/persistence.csv from
scripts/persistence.py), scripts (EVALSHA throughput, script cache:
results/bench/scripting.csv from scripts/scripting.py) and the append-only
file (fsync throughput, replay, rewrite: results/bench/aof.csv from
scripts/aof.py) and streams (XADD, XRANGE, consumer groups, keyspace
notifications, bytes per entry: results/bench/streams.csv from
scripts/streams.py) and commands (bitmaps, HyperLogLog, GEO, SORT throughput
and memory: results/bench/commands.csv from scripts/commands_bench.py).

What: one row per measurement (experiment, dataset, server, trial, metric,
value, unit). Per (experiment, dataset, metric) this gives each server's
median over its trials and ferry's ratio to redis-server; a metric measured
on ferry loading redis-server's file (*_redis_file_s) is compared with
redis-server loading that same file. The issue's targets are marked met or
not from the ratio.

Why: issues 12, 13, 15 and 16 set targets on exactly these ratios; `make
reproduce` recomputes them from the raw rows (deterministic: fixed order).
"""
from __future__ import annotations

import statistics
from pathlib import Path

from analysis import io_csv
from analysis.tables import Table, fmt

PERSISTENCE_COLUMNS = {"experiment": "s", "dataset": "s", "server": "s", "trial": "i", "metric": "s",
                       "value": "f", "unit": "s", "note": "s"}

# (experiment, metric) -> (target text, predicate on ferry/redis)
TARGETS = {
    ("load", "load_s"): ("<= 0.5", lambda r: r <= 0.5),
    ("size", "file_bytes"): ("within 5%", lambda r: abs(r - 1) <= 0.05),
    ("bgsave", "pss_growth_mb"): ("<= 0.5", lambda r: r <= 0.5),
    ("bgsave", "save_p99_ms"): ("<= 1.0", lambda r: r <= 1.0),
    ("evalsha", "rps_p1"): (">= 1.2", lambda r: r >= 1.2),
    ("evalsha", "rps_p100"): (">= 2.0", lambda r: r >= 2.0),
    ("aof_everysec", "rps_p100"): (">= 4.0", lambda r: r >= 4.0),
    ("aof_always", "rps_p1"): (">= 1.2", lambda r: r >= 1.2),
    ("aof_always", "rps_p100"): (">= 3.0", lambda r: r >= 3.0),
    ("aof_replay", "ready_s"): ("<= 0.5", lambda r: r <= 0.5),
    ("xadd", "rps_p1"): (">= 1.2", lambda r: r >= 1.2),
    ("xadd", "rps_p100"): (">= 3.0", lambda r: r >= 3.0),
    ("memory", "bytes_per_entry_used"): ("<= 0.8", lambda r: r <= 0.8),
    ("bits_setbit", "rps_p1"): (">= 1.0", lambda r: r >= 1.0),
    ("bits_setbit", "rps_p100"): (">= 2.0", lambda r: r >= 2.0),
    ("hll_pfadd", "rps_p1"): (">= 1.0", lambda r: r >= 1.0),
    ("hll_pfadd", "rps_p100"): (">= 2.0", lambda r: r >= 2.0),
    ("geo_geoadd", "rps_p1"): (">= 1.0", lambda r: r >= 1.0),
    ("geo_geoadd", "rps_p100"): (">= 2.0", lambda r: r >= 2.0),
    ("geo_search", "rps_p1"): (">= 1.0", lambda r: r >= 1.0),
    ("geo_search", "rps_p100"): (">= 2.0", lambda r: r >= 2.0),
}
TITLES = {"persistence": "Snapshots", "scripting": "Scripts", "aof": "Append-only file",
          "streams": "Streams and notifications", "commands": "Bitmaps, HyperLogLog, GEO, SORT"}


def load(path: Path) -> list[dict]:
    return io_csv.load_typed(path, PERSISTENCE_COLUMNS)


def _median(rows, exp, ds, metric, server):
    vals = [r["value"] for r in rows if (r["experiment"], r["dataset"], r["metric"], r["server"]) ==
            (exp, ds, metric, server)]
    return (statistics.median(vals), len(vals)) if vals else (None, 0)


def summary(rows: list[dict]) -> list[dict]:
    keys = []
    for r in rows:
        k = (r["experiment"], r["dataset"], r["metric"], r["unit"])
        if k not in keys:
            keys.append(k)
    out = []
    for exp, ds, metric, unit in keys:
        f, nf = _median(rows, exp, ds, metric, "ferry")
        r, nr = _median(rows, exp, ds, metric.replace("_redis_file", ""), "redis")
        ratio = f / r if f is not None and r else None
        target = TARGETS.get((exp, metric))
        met = ("yes" if target[1](ratio) else "no") if target and ratio is not None else ""
        out.append(dict(experiment=exp, dataset=ds, metric=metric, unit=unit, ferry=f, redis=r, ratio=ratio,
                        target=target[0] if target else "", met=met, trials=max(nf, nr)))
    return out


def make_table(stem: str, rows: list[dict]) -> Table:
    t = Table(title=f"{TITLES.get(stem, stem)}: ferry vs redis-server ({stem}.csv, medians)",
              header=["experiment", "dataset", "metric", "unit", "ferry", "redis", "ferry / redis", "target",
                      "met", "trials"])
    for s in summary(rows):
        t.rows.append([s["experiment"], s["dataset"], s["metric"], s["unit"],
                       "-" if s["ferry"] is None else fmt(s["ferry"], ".4g"),
                       "-" if s["redis"] is None else fmt(s["redis"], ".4g"),
                       "-" if s["ratio"] is None else fmt(s["ratio"], ".3f"), s["target"], s["met"],
                       str(s["trials"])])
    if stem == "persistence":
        t.notes.append("*_redis_file_s: ferry loading redis-server's file, against redis-server loading it")
    if stem == "aof":
        t.notes.append("*_redis_file_s: ferry replaying redis-server's appendonlydir, against redis-server "
                       "replaying it; *_ferry_file_s: redis-server replaying ferry's (a compatibility check)")
        t.notes.append("*_strace: one run with strace -f -c attached (slows the server); wchar_per_op counts "
                       "the replies' writes too")
    if stem == "streams":
        t.notes.append("notify: rps_* with notify-keyspace-events KEA and one PSUBSCRIBE __key*__:* subscriber, "
                       "rps_off_* without; on_over_off_* is each server's own with / without")
    if stem == "commands":
        t.notes.append("bits_setbit is driven by scripts/commands_bench.py's own Python client (redis-benchmark's "
                       "zero-padded __rand_int__ is not a valid bit offset); every other row by redis-benchmark")
        t.notes.append("BITCOUNT (16 MB), GEOSEARCH (~7,300 members in the radius) and SORT (10,000 elements) "
                       "scan per call: P = 1 and 10 only")
    return t
