"""Tests of the capacity planner (analysis/capacity.py) and the manifest
hashing and verification helper (analysis/manifest.py)."""
import hashlib
import json
import math
from pathlib import Path

import pytest

from analysis import capacity, manifest
from analysis.tests import synth

# ---------------------------------------------------------------- capacity


def test_nodes_formula_and_paper_example():
    # Paper 7.3: 10 Mops/s, run at 80 % (headroom 0.2), T(p) = 4.164 Mops/s:
    # 10 / (0.8 * 4.164) = 3.0019 -> ceil = 4 (the paper prints 3).
    assert capacity.nodes_for(10e6, 0.2, 4.164) == 4
    assert capacity.nodes_for(8e6, 0.2, 5.0) == 2            # exactly 2.0
    assert capacity.nodes_for(3 * 0.9 * 1.1e6, 0.1, 1.1) == 3  # float noise not bumped
    assert capacity.nodes_for(1, 0.0, 100.0) == 1
    with pytest.raises(ValueError):
        capacity.nodes_for(1e6, 1.0, 1.0)


def test_plan_uses_model_and_ci_range():
    pl = capacity.plan(10e6, 0.2, 100, t0=5.49, t1_ns=69.6,
                       ci_t0=(5.20, 5.77), ci_t1_ns=(67.96, 71.28))
    T = 100 / (5.49 + 0.0696 * 100)
    assert pl.T_p == pytest.approx(T)
    assert pl.nodes == math.ceil(10 / (0.8 * T))
    assert pl.T_lo == pytest.approx(100 / (5.77 + 0.07128 * 100))
    assert pl.T_hi == pytest.approx(100 / (5.20 + 0.06796 * 100))
    assert pl.nodes_lo <= pl.nodes <= pl.nodes_hi
    assert pl.pstar == pytest.approx(5.49 / 0.0696)
    no_ci = capacity.plan(10e6, 0.2, 100, 5.49, 69.6)
    assert no_ci.nodes_lo is None and no_ci.nodes_hi is None


def test_parse_rate():
    assert capacity.parse_rate("10M") == 1e7
    assert capacity.parse_rate("250k") == 2.5e5
    assert capacity.parse_rate("1.5e6") == 1.5e6


def test_cli_with_fit_table(tmp_path: Path, capsys):
    from analysis import reproduce
    res = synth.make_results(tmp_path, with_manifest=False, tests=("GET",))
    reproduce.run(res, n_boot=50)
    rc = capacity.main(["--target", "20M", "--headroom", "0.25", "-p", "100",
                        "--fit-table", str(res / "tables"), "--server", "ferry",
                        "--test", "get", "--clients", "50", "--value-bytes", "64"])
    out = capsys.readouterr().out
    assert rc == 0
    T = 100 / (6.8 + 0.0734 * 100)  # the synthetic truth
    assert f"nodes = {math.ceil(20 / (0.75 * T))}" in out
    assert "sweep_20261122__fit.csv:GET_c50_v64" in out
    # no matching fit -> error exit 2
    rc = capacity.main(["--target", "1M", "-p", "1", "--fit-table", str(res / "tables"),
                        "--server", "nosuch", "--test", "GET"])
    assert rc == 2


def test_cli_direct_constants(capsys):
    assert capacity.main(["--target", "10M", "--headroom", "0.2", "-p", "100",
                          "--t0", "5.49", "--t1", "69.6"]) == 0
    out = capsys.readouterr().out
    assert "T(p=100) = 8.0321 Mops/s" in out  # 100/(5.49 + 6.96)
    assert "nodes = 2   " in out  # 10/(0.8*8.0321) = 1.556 -> 2
    assert "CI box: n/a" in out


# ---------------------------------------------------------------- manifest


def test_sha256_and_compute(tmp_path: Path):
    res = synth.make_results(tmp_path, with_manifest=False)
    f = res / "bench" / "memory.csv"
    assert manifest.sha256_file(f) == hashlib.sha256(f.read_bytes()).hexdigest()
    h = manifest.compute(res)
    assert sorted(h) == ["results/bench/instructions.csv", "results/bench/memory.csv",
                         "results/bench/sweep_20261122.csv", "results/bench/syscalls.csv",
                         "results/bench/unavailable.csv"]


def test_verify_ok_mismatch_missing_unlisted(tmp_path: Path):
    res = synth.make_results(tmp_path)
    v = manifest.verify(res)
    assert v.passed and len(v.ok) == 5 and v.messages() == []
    # tamper one CSV, add an unlisted one, list a missing one
    with open(res / "bench" / "memory.csv", "a") as fh:
        fh.write("ferry,10,16,64,1,2,0.1\n")
    (res / "bench" / "extra.csv").write_text("a,b\n1,2\n")
    man = json.loads((res / "manifest.json").read_text())
    man["csv_sha256"]["results/bench/gone.csv"] = "0" * 64
    (res / "manifest.json").write_text(json.dumps(man))
    v = manifest.verify(res)
    assert not v.passed
    assert [m[0] for m in v.mismatched] == ["results/bench/memory.csv"]
    assert v.missing == ["results/bench/gone.csv"]
    assert v.unlisted == ["results/bench/extra.csv"]
    assert len(v.messages()) == 3


def test_verify_accepts_manifest_relative_paths_and_cli(tmp_path: Path, capsys):
    res = synth.make_results(tmp_path, with_manifest=False)
    rel = {f"bench/{p.name}": manifest.sha256_file(p) for p in manifest.csv_files(res)}
    (res / "manifest.json").write_text(json.dumps({"csv_sha256": rel}))
    assert manifest.verify(res).passed
    assert manifest.main(["--verify", str(res)]) == 0
    (res / "manifest.json").write_text("{not json")
    v = manifest.verify(res)
    assert v.present and v.error and not v.passed
    assert manifest.main(["--verify", str(res)]) == 1
    (res / "manifest.json").unlink()
    assert not manifest.verify(res).present
    # --write creates a manifest that then verifies, keeping other keys
    (res / "manifest.json").write_text(json.dumps({"git_sha": "abc"}))
    manifest.main(["--write", str(res)])
    assert manifest.verify(res).passed
    assert json.loads((res / "manifest.json").read_text())["git_sha"] == "abc"
    capsys.readouterr()


def test_checked_in_manifest_matches_checked_in_csvs():
    """The repository's own results: every CSV the analysis reads is listed in
    results/manifest.json with its current sha256 (a CSV rewritten after the
    manifest was written, or a new one never added, fails here)."""
    results = Path(__file__).resolve().parents[2] / "results"
    if not (results / "manifest.json").is_file():
        pytest.skip("no checked-in results")
    v = manifest.verify(results)
    assert v.passed, v.messages()
