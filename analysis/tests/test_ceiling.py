"""Tests of the P=1 ceiling analysis (analysis/ceiling.py), its reproduce.py
wiring, and the CPU accounting helpers of scripts/ceiling.py.

Synthetic ceiling.csv rows (analysis/tests/synth.py) have known medians:
rps medians are CEILING_TRUTH's first values and the CPU columns are exact
multiples of known µs/op, so every median, ratio and ceiling is checked
against a number written down independently of the code.
"""
import math
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from analysis import ceiling, io_csv, reproduce
from analysis.tests import synth

ROOT = Path(__file__).resolve().parents[2]


def load_rows(tmp_path: Path, rows: list[dict]) -> list[dict]:
    p = synth.write_csv(tmp_path / "ceiling.csv", synth.CEILING_HEADER, rows)
    return ceiling.load(p)


def by_key(summary):
    return {(d["test"], d["server"]): d for d in summary}


def test_medians_ratios_and_cpu_per_op(tmp_path: Path):
    s = by_key(ceiling.summarize(load_rows(tmp_path, synth.ceiling_rows())))
    assert len(s) == 10
    expect_rps = {"redis": 100_000, "ferry": 115_000, "ferry-nopoll": 112_000,
                  "null-epoll": 118_000, "null-uring": 121_000}
    for test in ("GET", "SET"):
        for srv, rps in expect_rps.items():
            d = s[(test, srv)]
            assert d["runs"] == 5
            assert d["rps"] == rps
            assert d["ratio"] == pytest.approx(rps / 100_000)
            su, ss, cu, cs = synth.CEILING_TRUTH[srv][1]
            assert d["server_user_us"] == pytest.approx(su, abs=1e-9)
            assert d["server_sys_us"] == pytest.approx(ss, abs=1e-9)
            assert d["client_user_us"] == pytest.approx(cu, abs=1e-9)
            assert d["client_sys_us"] == pytest.approx(cs, abs=1e-9)
            assert d["server_total_us"] == pytest.approx(su + ss, abs=1e-9)
    assert s[("GET", "ferry")]["ratio"] == pytest.approx(1.15)
    # servers come in the fixed order, tests sorted
    order = [(d["test"], d["server"]) for d in ceiling.summarize(load_rows(tmp_path, synth.ceiling_rows()))]
    assert order[:5] == [("GET", n) for n in ceiling.SERVER_ORDER]
    assert order[5][0] == "SET"


def test_ceiling_is_the_best_null_server(tmp_path: Path):
    c = ceiling.ceilings(ceiling.summarize(load_rows(tmp_path, synth.ceiling_rows())))
    assert [d["test"] for d in c] == ["GET", "SET"]
    for d in c:
        assert d["best_null"] == "null-uring"
        assert d["null_rps"] == 121_000
        assert d["ceiling_ratio"] == pytest.approx(1.21)
        assert d["ferry_ratio"] == pytest.approx(1.15)
        assert d["ferry_of_ceiling"] == pytest.approx(1.15 / 1.21)
        assert d["missing_nulls"] == []


def test_missing_null_uring_rows(tmp_path: Path):
    servers = ("redis", "ferry", "ferry-nopoll", "null-epoll")
    rows = load_rows(tmp_path, synth.ceiling_rows(servers=servers))
    summary = ceiling.summarize(rows)
    assert {d["server"] for d in summary} == set(servers)
    for d in ceiling.ceilings(summary):
        assert d["best_null"] == "null-epoll"
        assert d["ceiling_ratio"] == pytest.approx(1.18)
        assert d["missing_nulls"] == ["null-uring"]
    c, t = ceiling.make_tables("ceiling", rows)
    md = c.md() + t.md()
    assert "| GET | 100,000 | null-epoll | 118,000 | 1.18 | 1.15 | 0.97 |" in md
    assert "Not measured for GET, SET: null-uring" in md
    assert "| null-uring |" not in md
    assert "| GET | null-epoll | 5 | 118,000 | 1.18 | 0.10 | 3.20 |" in md


def test_no_null_server_or_no_redis_gives_dashes(tmp_path: Path):
    rows = load_rows(tmp_path, synth.ceiling_rows(servers=("redis", "ferry"), tests=("GET",)))
    (d,) = ceiling.ceilings(ceiling.summarize(rows))
    assert d["best_null"] == "" and math.isnan(d["ceiling_ratio"])
    assert "| GET | 100,000 | — | — | — | 1.15 | — |" in ceiling.make_tables("ceiling", rows)[0].md()
    rows = load_rows(tmp_path, synth.ceiling_rows(servers=("ferry", "null-epoll"), tests=("GET",)))
    s = ceiling.summarize(rows)
    assert all(math.isnan(x["ratio"]) for x in s)
    assert math.isnan(ceiling.ceilings(s)[0]["ceiling_ratio"])


def test_busy_share_and_empty_cpu_cells(tmp_path: Path):
    rows = synth.ceiling_rows(servers=("redis",), tests=("SET",))
    for i, r in enumerate(rows):   # wall 2 s, server 1.5 s CPU, client 1.0 s
        r.update(wall_s="2.0", server_user_s="0.5", server_sys_s="1.0",
                 client_user_s="0.25", client_sys_s="0.75")
    rows[0]["server_user_s"] = ""  # one run without server CPU: left out of that median
    (d,) = ceiling.summarize(load_rows(tmp_path, rows))
    assert d["server_busy_pct"] == pytest.approx(75.0)
    assert d["client_busy_pct"] == pytest.approx(50.0)
    assert d["server_user_us"] == pytest.approx(0.5 / 600_000 * 1e6)


def test_schema_error_on_missing_column(tmp_path: Path):
    rows = synth.ceiling_rows(servers=("redis",))
    header = [h for h in synth.CEILING_HEADER if h != "client_sys_s"]
    for r in rows:
        del r["client_sys_s"]
    p = synth.write_csv(tmp_path / "ceiling.csv", header, rows)
    with pytest.raises(io_csv.SchemaError, match="client_sys_s"):
        ceiling.load(p)


def test_reproduce_writes_and_cleans_ceiling_tables(tmp_path: Path):
    res = synth.make_results(tmp_path, with_manifest=False, tests=("GET",), with_ceiling=True)
    out, issues = reproduce.run(res, n_boot=20)
    tab = res / "tables"
    assert tab / "ceiling__ceiling.md" in out and tab / "ceiling__ceiling.tex" in out
    assert issues == 0
    md = (tab / "ceiling__ceiling.md").read_text()
    assert "| SET | 100,000 | null-uring | 121,000 | 1.21 | 1.15 | 0.95 |" in md
    tex = (tab / "ceiling__ceiling.tex").read_text()
    assert "null-uring & 121,000 & 1.21" in tex and "µ" not in tex
    avail = (tab / "summary__availability.md").read_text()
    assert "| ceiling | ceiling.csv | available | 50 rows" in avail
    assert "ignored" not in avail
    (res / "bench" / "ceiling.csv").unlink()
    out, _ = reproduce.run(res, n_boot=20)
    assert not list(tab.glob("ceiling__*"))
    assert "ceiling" not in (tab / "summary__availability.md").read_text()


# ------------------------------------------------ scripts/ceiling.py helpers
@pytest.fixture(scope="module")
def script():
    with synth.script_module("ceiling") as mod:
        yield mod


def test_parse_proc_stat_counts_fields_after_comm(script):
    fields = ["S"] + [str(i) for i in range(4, 53)]   # fields 3..52; field n holds n
    line = "1234 (we(i)rd ) name) " + " ".join(fields) + "\n"
    assert script.parse_proc_stat(line) == (14, 15)


def test_proc_cpu_seconds_sees_own_work(script):
    u0, s0 = script.proc_cpu_seconds(os.getpid())
    t = time.process_time()
    while time.process_time() - t < 0.1:
        pass
    u1, s1 = script.proc_cpu_seconds(os.getpid())
    assert u1 + s1 - u0 - s0 >= 0.05


def test_run_process_reports_child_rusage(script):
    bl = script.bl
    code = "import time\nt=time.process_time()\nwhile time.process_time()-t<0.2: pass\nprint('x,1')"
    r = bl.run_process([sys.executable, "-c", code], 30, "probe")
    assert r["returncode"] == 0 and r["stdout"] == "x,1\n"
    assert r["user_s"] + r["sys_s"] >= 0.15
    assert r["wall_s"] >= r["user_s"] * 0.9
    r = bl.run_process([sys.executable, "-c", "import sys; sys.exit(7)"], 30, "probe")
    assert r["returncode"] == 7 and r["user_s"] + r["sys_s"] < 0.15   # only this child's CPU
    with pytest.raises(RuntimeError, match="timed out"):
        bl.run_process([sys.executable, "-c", "import time; time.sleep(30)"], 0.5, "probe")


def test_script_help_runs():
    p = subprocess.run([sys.executable, str(ROOT / "scripts" / "ceiling.py"), "--help"],
                       capture_output=True, text=True, timeout=60)
    assert p.returncode == 0 and "null-uring" in p.stdout
