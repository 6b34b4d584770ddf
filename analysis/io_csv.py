"""Typed CSV loading for results/bench (schema in analysis/SCHEMA.md).

What: reads sweep, syscalls, instructions, memory, cycles, energy,
ceiling, values and side-by-side suite (default_suite*, option_workloads) CSVs
into lists of dicts with the right Python types, validates required columns,
and classifies the files of a results directory.

Why: the sweep scripts and the analysis are written by different people;
one strict, well-reported loader (no pandas) keeps the contract in one place
and turns schema drift into a clear error instead of a wrong figure.
"""
from __future__ import annotations

import csv
import math
import re
from pathlib import Path

UNAVAILABLE = "unavailable"

# column -> type; "f" float (NaN if empty/unavailable), "i" int, "s" str
SWEEP_COLUMNS = {
    "server": "s", "server_version": "s", "client": "s", "test": "s",
    "clients": "i", "pipeline": "i", "value_bytes": "i", "persistence": "s",
    "tls": "s", "run": "i", "requests": "f", "rps": "f", "avg_ms": "f",
    "min_ms": "f", "p50_ms": "f", "p95_ms": "f", "p99_ms": "f", "max_ms": "f",
    "p999_ms": "f", "order": "i", "started_utc": "s",
}
AUX_COLUMNS = {
    "syscalls": {"server": "s", "clients": "i", "pipeline": "i", "test": "s",
                 "ops": "f", "read_calls": "f", "writev_calls": "f",
                 "write_calls": "f", "epoll_wait_calls": "f", "other_calls": "f"},
    "instructions": {"server": "s", "test": "s", "pipeline": "i",
                     "clients": "i", "ops": "f", "instructions": "f"},
    "memory": {"server": "s", "keys": "i", "key_bytes": "i",
               "value_bytes": "i", "rss_before": "f", "rss_after": "f",
               "bytes_per_key": "f"},
    "cycles": {"server": "s", "test": "s", "pipeline": "i", "clients": "i",
               "ops": "f", "cycles": "f"},
    "energy": {"server": "s", "test": "s", "pipeline": "i", "clients": "i",
               "ops": "f", "duration_s": "f", "energy_uj": "f"},
}
AUX_KINDS = tuple(AUX_COLUMNS)  # fixed order used everywhere
# scripts/unavailable.py: one row per metric this machine cannot measure
UNAVAILABLE_COLUMNS = {"metric": "s", "reason": "s"}
# scripts/ceiling.py: the P=1 ceiling experiment (analysis/ceiling.py)
CEILING_COLUMNS = {
    "server": "s", "server_version": "s", "client": "s", "test": "s",
    "clients": "i", "pipeline": "i", "value_bytes": "i", "run": "i", "order": "i",
    "requests": "f", "rps": "f", "p50_ms": "f", "p99_ms": "f", "wall_s": "f",
    "server_user_s": "f", "server_sys_s": "f", "client_user_s": "f",
    "client_sys_s": "f", "started_utc": "s",
}
# scripts/values_bench.py: the value-size axis (analysis/values.py)
VALUES_COLUMNS = {
    "server": "s", "server_version": "s", "client": "s", "test": "s",
    "clients": "i", "pipeline": "i", "value_bytes": "i", "keyspace": "i", "run": "i", "order": "i",
    "requests": "f", "rps": "f", "p50_ms": "f", "p99_ms": "f", "server_cpu_us_per_op": "f", "wall_s": "f",
    "server_user_s": "f", "server_sys_s": "f", "client_user_s": "f",
    "client_sys_s": "f", "started_utc": "s", "client_cc": "s",
}
# fixed-name files that are neither sweeps nor AUX_KINDS; classify() puts
# them in its aux dict under their stem
OTHER_KNOWN = ("unavailable", "ceiling", "memory_elements", "persistence", "scripting", "aof", "streams",
               "commands", "acl", "repl", "values", "tls", "cluster")
# scripts/default_suite.py (default_suite.csv, default_suite_p<P>.csv) and
# scripts/option_workloads.py: one row per (server, round, test), ferry vs
# redis (analysis/suite.py).  The test's name is in SUITE_NAME_COLUMN[kind];
# latency columns (p50_ms, p99_ms) and keyspace are optional.
SUITE_COLUMNS = {"server": "s", "round": "i", "clients": "i", "pipeline": "i",
                 "requests": "f", "rps": "f"}
SUITE_NAME_COLUMN = {"default_suite": "test", "option_workloads": "workload"}
_SUITE_STEM = re.compile(r"(default_suite)(_p[0-9]+)?|(option_workloads)")


class SchemaError(ValueError):
    """A CSV does not follow analysis/SCHEMA.md."""


def _convert(value: str, kind: str, where: str):
    v = value.strip()
    if kind == "s":
        return v
    if v == "" or v.lower() == UNAVAILABLE:
        if kind == "i":
            raise SchemaError(f"{where}: integer cell is empty")
        return math.nan
    try:
        if kind == "i":
            f = float(v)
            if f != int(f):
                raise ValueError
            return int(f)
        return float(v)
    except ValueError:
        raise SchemaError(f"{where}: cannot parse {value!r} as "
                          f"{'integer' if kind == 'i' else 'number'}") from None


def read_header(path: Path) -> list[str]:
    with open(path, newline="", encoding="utf-8") as fh:
        row = next(csv.reader(fh), [])
    return [c.strip() for c in row]


def load_typed(path: Path, columns: dict[str, str]) -> list[dict]:
    """Rows of path converted per columns; extra columns are kept as str."""
    with open(path, newline="", encoding="utf-8") as fh:
        reader = csv.DictReader(fh)
        fields = [f.strip() for f in (reader.fieldnames or [])]
        missing = [c for c in columns if c not in fields]
        if missing:
            raise SchemaError(f"{path.name}: missing columns {missing}")
        rows = []
        for lineno, raw in enumerate(reader, start=2):
            raw = {(k or "").strip(): (v or "") for k, v in raw.items()}
            if not any(v.strip() for v in raw.values()):
                continue
            row = {}
            for col, kind in columns.items():
                row[col] = _convert(raw[col], kind, f"{path.name}:{lineno}:{col}")
            rows.append(row)
    return rows


def all_unavailable(rows: list[dict], columns: dict[str, str]) -> bool:
    """True when every numeric non-key cell is NaN (file says 'unavailable')."""
    num = [c for c, k in columns.items() if k == "f"]
    return bool(rows) and all(
        all(isinstance(r[c], float) and math.isnan(r[c]) for c in num)
        for r in rows)


def load_sweep(path: Path) -> list[dict]:
    rows = load_typed(path, SWEEP_COLUMNS)
    for r in rows:
        r["test"] = r["test"].upper()
        r["server"] = r["server"].lower()
        if r["clients"] < 1 or r["pipeline"] < 1:
            raise SchemaError(f"{path.name}: clients and pipeline must be >= 1")
    return rows


def unavailable_reasons(path: Path) -> dict[str, str]:
    """{kind: reason} from unavailable.csv; metric 'cycles_per_op' -> 'cycles'."""
    out: dict[str, str] = {}
    for r in load_typed(path, UNAVAILABLE_COLUMNS):
        metric = r["metric"].strip().lower()
        kind = next((k for k in AUX_KINDS if metric == k or metric.startswith(k + "_")),
                    metric)
        out[kind] = f"{out[kind]}; {r['reason']}" if kind in out else r["reason"]
    return out


def suite_kind(stem: str) -> str | None:
    """'default_suite' for default_suite and default_suite_p<P>,
    'option_workloads' for option_workloads, None for any other stem."""
    m = _SUITE_STEM.fullmatch(stem)
    return (m.group(1) or m.group(3)) if m else None


def classify(bench_dir: Path) -> tuple[list[Path], dict[str, Path], list[Path]]:
    """Split results/bench/*.csv into (sweeps, aux by kind, unrecognised).

    The aux dict also holds the OTHER_KNOWN files ('unavailable', 'ceiling',
    'memory_elements', 'persistence', 'scripting', 'aof', 'streams', 'commands',
    'acl', 'repl', 'values', 'tls', 'cluster') and the side-by-side suites (suite_kind() not None),
    each under its stem, when present.
    """
    sweeps, aux, other = [], {}, []
    if not bench_dir.is_dir():
        return sweeps, aux, other
    for p in sorted(bench_dir.glob("*.csv")):
        if p.stem in AUX_COLUMNS or p.stem in OTHER_KNOWN or suite_kind(p.stem):
            aux[p.stem] = p
        elif set(SWEEP_COLUMNS) <= set(read_header(p)):
            sweeps.append(p)
        else:
            other.append(p)
    return sweeps, aux, other
