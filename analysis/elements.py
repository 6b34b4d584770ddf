"""Memory per element of one big collection (results/bench/memory_elements.csv).

What: scripts/memory_elements.py fills one hash, set or sorted set with 1M
elements on each server and records RSS and used_memory before and after.
Per type this gives each server's bytes per element (RSS growth / elements,
and used_memory growth / elements) and ferry's ratio to redis-server. Rows
whose status is not "ok" (a type a server does not support) are listed with
their note instead of a number.

Why: the per-key memory target of issue 3 is about string keys; collections
are where most memory of a real keyspace goes, so `make reproduce`
regenerates this table too (deterministic: fixed order, no randomness).
"""
from __future__ import annotations

from pathlib import Path

from analysis import io_csv
from analysis.tables import Table, fmt

ELEMENTS_COLUMNS = {
    "server": "s", "type": "s", "status": "s", "elements": "f", "encoding": "s",
    "rss_before": "f", "rss_after": "f", "used_memory_before": "f", "used_memory_after": "f",
    "note": "s",
}


def load(path: Path) -> list[dict]:
    return io_csv.load_typed(path, ELEMENTS_COLUMNS)


def per_element(rows: list[dict]) -> dict[tuple[str, str], dict]:
    """{(type, server): {rss, used, encoding, status, note}}, bytes/element
    recomputed from the raw before/after columns."""
    out = {}
    for r in rows:
        ok = r["status"] == "ok" and r["elements"] > 0
        out[(r["type"], r["server"])] = {
            "rss": (r["rss_after"] - r["rss_before"]) / r["elements"] if ok else float("nan"),
            "used": (r["used_memory_after"] - r["used_memory_before"]) / r["elements"] if ok else float("nan"),
            "encoding": r["encoding"], "status": r["status"], "note": r["note"],
        }
    return out


def make_table(stem: str, rows: list[dict]) -> Table:
    pe = per_element(rows)
    types = sorted({t for t, _ in pe})
    t = Table(title=f"Memory per element of one 1M-element collection ({stem}.csv)",
              header=["type", "ferry RSS B/elem", "redis RSS B/elem", "ratio (RSS)",
                      "ferry used_memory B/elem", "redis used_memory B/elem", "ratio (used)",
                      "encodings (ferry / redis)"])
    for ty in types:
        f, r = pe.get((ty, "ferry")), pe.get((ty, "redis"))
        if not f or not r or f["status"] != "ok" or r["status"] != "ok":
            why = "; ".join(f"{s}: {d['status']} {d['note']}".strip() for s, d in (("ferry", f), ("redis", r)) if d)
            t.rows.append([ty, "-", "-", "-", "-", "-", "-", why or "no rows"])
            continue
        t.rows.append([ty, fmt(f["rss"], ".1f"), fmt(r["rss"], ".1f"), fmt(f["rss"] / r["rss"], ".2f"),
                       fmt(f["used"], ".1f"), fmt(r["used"], ".1f"), fmt(f["used"] / r["used"], ".2f"),
                       f"{f['encoding']} / {r['encoding']}"])
    t.notes.append("bytes per element = (after - before) / elements, from the raw columns")
    return t
