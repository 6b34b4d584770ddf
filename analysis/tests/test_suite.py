"""Tests of the side-by-side suite tables (analysis/suite.py, issue 11).

These check that reproduce.py gives default_suite.csv, default_suite_p<P>.csv
and option_workloads.csv a table each (medians over rounds, ferry/redis
ratios, the file's latency columns) instead of ignoring them with a warning,
lists them as available inputs, drops a table whose CSV is gone, and reports
a file that lacks its test column as an error; all on synthetic CSVs whose
medians are known (synth.SUITE_TRUTH).
"""
from pathlib import Path

from analysis import io_csv, reproduce, suite
from analysis.tests import synth

HEADER_DEFAULT = ("| test | runs ferry/redis | ferry rps | redis rps | rps ratio | ferry p50 ms | "
                  "redis p50 ms | p50 ratio | ferry p99 ms | redis p99 ms | p99 ratio |")
HEADER_OPTIONS = ("| workload | runs ferry/redis | ferry rps | redis rps | rps ratio | "
                  "ferry p50 ms | redis p50 ms | p50 ratio |")


def test_suite_kind_names_the_files_the_scripts_write():
    assert io_csv.suite_kind("default_suite") == "default_suite"
    assert io_csv.suite_kind("default_suite_p16") == "default_suite"
    assert io_csv.suite_kind("option_workloads") == "option_workloads"
    for stem in ("default_suite_x", "default_suite_p", "option_workloads2", "sweep_full"):
        assert io_csv.suite_kind(stem) is None


def test_summary_medians_and_ratios(tmp_path: Path):
    p = synth.write_csv(tmp_path / "default_suite.csv", synth.DEFAULT_SUITE_HEADER,
                        synth.suite_rows())
    s = suite.summarize(suite.load(p))
    assert [d["name"] for d in s] == list(synth.SUITE_TRUTH)  # file order
    d = s[0]
    assert (d["ferry_rps"], d["redis_rps"]) == (150_000, 110_000)
    assert abs(d["ratio_rps"] - 150 / 110) < 1e-12
    assert (d["ferry_p50_ms"], d["redis_p50_ms"], d["ferry_p99_ms"], d["redis_p99_ms"]) == \
        (0.2, 0.3, 0.4, 0.5)
    assert (d["ferry_runs"], d["redis_runs"]) == (3, 3)


def test_reproduce_writes_suite_tables(tmp_path: Path, capsys):
    res = synth.make_results(tmp_path, with_manifest=False, with_suites=True, tests=("GET",))
    out, issues = reproduce.run(res, n_boot=20)
    assert issues == 0
    assert "not a sweep file" not in capsys.readouterr().err
    tab = res / "tables"
    for name in ("default_suite__default_suite", "default_suite__default_suite_p16",
                 "option_workloads__option_workloads"):
        assert tab / f"{name}.md" in out and tab / f"{name}.tex" in out
    md = (tab / "default_suite__default_suite.md").read_text()
    assert HEADER_DEFAULT in md
    assert "| PING_INLINE | 3/3 | 150,000 | 110,000 | 1.36 | 0.200 | 0.300 | 0.67 | 0.400 | 0.500 | 0.80 |" in md
    assert "| MSET (10 keys) | 3/3 | 90,000 | 110,000 | 0.82 |" in md
    assert "C=50, P=1, 100,000 requests per run" in md
    assert "Geometric mean of the rps ratios over 3 tests: 1.15" in md
    assert "C=50, P=16" in (tab / "default_suite__default_suite_p16.md").read_text()
    opt = (tab / "option_workloads__option_workloads.md").read_text()
    assert HEADER_OPTIONS in opt and "p99" not in opt
    assert "| MSET | 3/3 | 90,000 | 110,000 | 0.82 | 0.400 | 0.200 | 2.00 |" in opt
    assert "keyspace -r 1,000,000" in opt
    tex = (tab / "default_suite__default_suite.tex").read_text()
    assert "MSET (10 keys) & 3/3 & 90,000 & 110,000 & 0.82" in tex
    avail = (tab / "summary__availability.md").read_text()
    assert "| default_suite | default_suite.csv | available |" in avail
    assert "| default_suite | default_suite_p16.csv | available |" in avail
    assert "| option_workloads | option_workloads.csv | available |" in avail
    assert "ignored" not in avail


def test_suite_table_goes_with_its_csv_and_schema_errors_are_reported(tmp_path: Path, capsys):
    res = synth.make_results(tmp_path, with_manifest=False, with_suites=True, tests=("GET",))
    reproduce.run(res, n_boot=20)
    tab = res / "tables"
    (res / "bench" / "default_suite_p16.csv").unlink()
    bad = [{k: v for k, v in r.items() if k != "workload"}
           for r in synth.suite_rows("option_workloads")]
    synth.write_csv(res / "bench" / "option_workloads.csv",
                    [c for c in synth.OPTION_WORKLOADS_HEADER if c != "workload"], bad)
    capsys.readouterr()
    out, issues = reproduce.run(res, n_boot=20)
    assert not (tab / "default_suite__default_suite_p16.md").exists()
    assert not (tab / "option_workloads__option_workloads.md").exists()
    assert (tab / "default_suite__default_suite.md").exists()
    assert issues == 1
    assert "option_workloads.csv: missing columns ['workload']" in capsys.readouterr().err
    assert "| option_workloads | option_workloads.csv | error |" in \
        (tab / "summary__availability.md").read_text()
