"""Tests of the value-size analysis (analysis/values.py), its reproduce.py
wiring, and the pure helpers of scripts/values_bench.py.

Synthetic values.csv rows (analysis/tests/synth.py) have known medians:
synth.values_rps() per (server, test, size, P), with runs scaled by
VALUES_RUN_SCALE (median 1.0), so every ratio and every missed target is
checked against numbers written down independently of the code.
"""
import argparse
import math
import subprocess
import sys
from pathlib import Path

import pytest

from analysis import io_csv, reproduce, values
from analysis.tests import synth

ROOT = Path(__file__).resolve().parents[2]


def load_rows(tmp_path: Path, rows: list[dict]) -> list[dict]:
    return values.load(synth.write_csv(tmp_path / "values.csv", synth.VALUES_HEADER, rows))


def by_point(summary):
    return {(d["test"], d["value_bytes"], d["pipeline"]): d for d in summary}


def test_medians_ratios_and_ceiling(tmp_path: Path):
    s = by_point(values.summarize(load_rows(tmp_path, synth.values_rows())))
    assert len(s) == 2 * 5 * 3
    d = s[("SET", 4096, 16)]
    assert d["redis_rps"] == pytest.approx(synth.values_rps("redis", "SET", 4096, 16), abs=0.01)
    assert d["ferry_rps"] == pytest.approx(synth.values_rps("ferry", "SET", 4096, 16), abs=0.01)
    assert d["null_rps"] == pytest.approx(synth.values_rps("null-epoll", "SET", 4096, 16), abs=0.01)
    assert d["null_server"] == "null-epoll"
    assert d["ferry_ratio"] == pytest.approx(1.5, rel=1e-6)
    assert d["ferry_of_ceiling"] == pytest.approx(0.75, rel=1e-6)
    assert math.isnan(d["p100_over_p16"])
    assert s[("SET", 4096, 100)]["p100_over_p16"] == pytest.approx(10 / 4, rel=1e-6)
    assert d["ferry_p99_ms"] == 1.0 and d["redis_p99_ms"] == 2.0
    assert d["ferry_cpu_us"] == 2.0 and d["redis_cpu_us"] == 4.0 and d["runs"] == 3
    assert d["misses"] == []
    assert list(s) == sorted(s)   # points in a fixed order


def test_missed_targets(tmp_path: Path):
    rows = synth.values_rows()
    for r in rows:   # ferry's p99 above redis's at one point
        if (r["test"], r["value_bytes"], r["pipeline"], r["server"]) == ("SET", 1024, 16, "ferry"):
            r["p99_ms"] = "3.000"
    s = by_point(values.summarize(load_rows(tmp_path, rows)))
    g = s[("GET", 16384, 100)]                 # VALUES_OVERRIDE: ferry at 0.8x redis
    assert g["ferry_ratio"] == pytest.approx(0.8, rel=1e-6)
    assert g["ferry_of_ceiling"] == pytest.approx(0.4, rel=1e-6)
    assert g["p100_over_p16"] == pytest.approx(0.8 / 1.5 * 10 / 4, rel=1e-6)
    assert g["misses"] == ["below 1.0x redis", "below 1.2x redis and 90% of the ceiling"]
    assert s[("SET", 1024, 16)]["misses"] == ["p99 above redis"]
    assert s[("SET", 1024, 1)]["misses"] == []   # p99 is judged at P >= 16 only
    # 1.2x at 16 KB is enough when under 90% of the ceiling; 90% is enough when under 1.2x
    base = {"value_bytes": 65536, "pipeline": 16, "p100_over_p16": math.nan, "ferry_p99_ms": 1.0,
            "redis_p99_ms": 1.0}
    assert values.misses(base | {"ferry_ratio": 1.2, "ferry_of_ceiling": 0.5}) == []
    assert values.misses(base | {"ferry_ratio": 1.1, "ferry_of_ceiling": 0.9}) == []
    assert values.misses(base | {"value_bytes": 4096, "ferry_ratio": 1.4, "ferry_of_ceiling": 0.95}) == [
        "below 1.5x redis"]
    assert values.misses(base | {"pipeline": 100, "ferry_ratio": 2.0, "ferry_of_ceiling": 1.0,
                                 "p100_over_p16": 0.85}) == ["P=100 below 0.9x P=16"]
    nan = base | {"ferry_ratio": math.nan, "ferry_of_ceiling": math.nan, "ferry_p99_ms": math.nan}
    assert values.misses(nan) == []


def test_table_rows_and_missing_servers(tmp_path: Path):
    md = values.make_table("values", load_rows(tmp_path, synth.values_rows())).md()
    assert "| GET | 16 KB | 100 | 200,000 | 160,000 | 400,000 | 0.80 | 0.40 | 1.33 | 1.000 | 2.000 | 2.00 | 4.00 " \
           "| 3 | below 1.0x redis; below 1.2x redis and 90% of the ceiling |" in md
    assert "| SET | 64 B | 1 | 98,462 | 147,692 | 196,923 | 1.50 | 0.75 | — |" in md
    assert "| SET | 64 B | 100 |" in md and md.count("| none |") == 29
    rows = load_rows(tmp_path, synth.values_rows(tests=("GET",), sizes=(1024,), servers=("ferry", "null-epoll")))
    md = values.make_table("values", rows).md()
    assert "| GET | 1 KB | 1 | — | 120,000 | 160,000 | — | 0.75 | — |" in md
    assert md.rstrip().count("| — |") >= 3     # no redis: targets not judged


def test_schema_error_on_missing_column(tmp_path: Path):
    header = [h for h in synth.VALUES_HEADER if h != "server_cpu_us_per_op"]
    rows = synth.values_rows(tests=("GET",), sizes=(64,))
    for r in rows:
        del r["server_cpu_us_per_op"]
    with pytest.raises(io_csv.SchemaError, match="server_cpu_us_per_op"):
        values.load(synth.write_csv(tmp_path / "values.csv", header, rows))


def test_reproduce_writes_and_cleans_values_outputs(tmp_path: Path):
    res = synth.make_results(tmp_path, with_manifest=False, tests=("GET",), with_values=True)
    out, issues = reproduce.run(res, n_boot=20)
    tab, fig = res / "tables", res / "fig"
    assert issues == 0
    for name in ("values__values.md", "values__values.tex"):
        assert tab / name in out
    for test in ("GET", "SET"):
        for ext in ("png", "pdf"):
            assert fig / f"values__rps_vs_size__{test}.{ext}" in out
    assert "$\\mu$s/op" in (tab / "values__values.tex").read_text()
    avail = (tab / "summary__availability.md").read_text()
    assert "| values | values.csv | available | 270 rows" in avail and "ignored" not in avail
    png = (fig / "values__rps_vs_size__GET.png").read_bytes()
    reproduce.run(res, n_boot=20)
    assert (fig / "values__rps_vs_size__GET.png").read_bytes() == png   # deterministic
    (res / "bench" / "values.csv").unlink()
    reproduce.run(res, n_boot=20)
    assert not list(tab.glob("values__*")) and not list(fig.glob("values__*"))
    assert "values" not in (tab / "summary__availability.md").read_text()


# ------------------------------------------------ scripts/values_bench.py helpers
@pytest.fixture(scope="module")
def script():
    with synth.script_module("values_bench") as mod:
        yield mod


def test_keyspace_is_capped_by_working_set(script):
    assert script.keyspace_for(64, 10000, 128) == 10000
    assert script.keyspace_for(16384, 10000, 128) == 8192
    assert script.keyspace_for(65536, 10000, 128) == 2048
    assert script.keyspace_for(1 << 30, 10000, 128) == 1


def test_point_args_carry_the_point_and_keep_the_rest(script):
    args = script.parse_args(["--quick", "--max-working-set-mb", "64"])
    assert args.sizes == script.QUICK_SIZES and args.rounds == 1 and args.retries == 0
    pa = script.point_args(args, "SET", 65536, 16, 1234)
    assert (pa.tests, pa.value_bytes, pa.pipeline, pa.requests, pa.keyspace) == (["SET"], 65536, 16, 1234, 1024)
    assert pa.conns == 50 and pa.max_foreign == args.max_foreign and args.pipelines == [1, 16]
    assert isinstance(pa, argparse.Namespace) and args.keyspace == 10000   # args itself untouched
    full = script.parse_args([])
    assert (full.sizes, full.pipelines, full.servers, full.rounds) == (
        [64, 1024, 4096, 16384, 65536], [1, 16, 100], ["redis", "ferry", "null-epoll"], 5)
    with pytest.raises(SystemExit):
        script.parse_args(["--sizes", "300000"])


def test_script_help_runs():
    p = subprocess.run([sys.executable, str(ROOT / "scripts" / "values_bench.py"), "--help"],
                       capture_output=True, text=True, timeout=60)
    assert p.returncode == 0 and "--max-working-set-mb" in p.stdout and "null-epoll" in p.stdout
