"""analysis/elements.py: per-element memory from memory_elements.csv."""
from __future__ import annotations

import csv
from pathlib import Path

import pytest

from analysis import elements, io_csv

HEADER = ["server", "type", "status", "elements", "key", "element_format", "encoding", "rss_before",
          "rss_after", "bytes_per_element", "used_memory_before", "used_memory_after",
          "used_bytes_per_element", "load_s", "note"]


def write(tmp_path: Path, rows: list[list]) -> Path:
    p = tmp_path / "memory_elements.csv"
    with open(p, "w", newline="") as fh:
        w = csv.writer(fh)
        w.writerow(HEADER)
        w.writerows(rows)
    return p


def row(server, typ, status, n, rss0, rss1, um0, um1, note=""):
    return [server, typ, status, n, "k", "f", "hashtable", rss0, rss1, "999", um0, um1, "999", "1", note]


def test_bytes_per_element_recomputed_from_raw_columns(tmp_path):
    p = write(tmp_path, [row("ferry", "hash", "ok", 1000, 1000, 41000, 0, 40000),
                         row("redis", "hash", "ok", 1000, 2000, 82000, 0, 64000)])
    t = elements.make_table("memory_elements", elements.load(p))
    assert t.rows == [["hash", "40.0", "80.0", "0.50", "40.0", "64.0", "0.62", "hashtable / hashtable"]]


def test_unsupported_type_is_listed_with_its_note(tmp_path):
    p = write(tmp_path, [row("ferry", "stream", "unsupported", 0, 0, 0, 0, 0, "unknown command XADD"),
                         row("redis", "stream", "ok", 10, 0, 100, 0, 100),
                         row("ferry", "set", "ok", 10, 0, 30, 0, 30), row("redis", "set", "ok", 10, 0, 60, 0, 60)])
    t = elements.make_table("memory_elements", elements.load(p))
    assert [r[0] for r in t.rows] == ["set", "stream"]
    assert t.rows[0][3] == "0.50"
    assert t.rows[1][1:7] == ["-"] * 6 and "unknown command XADD" in t.rows[1][7]


def test_missing_column_is_a_schema_error(tmp_path):
    p = tmp_path / "memory_elements.csv"
    p.write_text("server,type\nferry,hash\n")
    with pytest.raises(io_csv.SchemaError):
        elements.load(p)
