"""End-to-end tests of analysis/reproduce.py on synthetic results directories.

These check that outputs are byte-identical across runs and across
directories (with a ceiling.csv among the inputs) (as separate processes with different hash seeds), that every
output name embeds its CSV stem, that missing inputs give "unavailable"
notes, that a manifest mismatch warns without failing (unless --strict),
and that about 1200 sweep rows finish in under 2 minutes.
"""
import hashlib
import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

from analysis.tests import synth

ROOT = Path(__file__).resolve().parents[2]
SCRIPT = ROOT / "analysis" / "reproduce.py"


def run_script(results: Path, *extra: str, hashseed: str = "0"):
    env = dict(os.environ, PYTHONHASHSEED=hashseed, MPLBACKEND="Agg")
    env.pop("SOURCE_DATE_EPOCH", None)
    return subprocess.run([sys.executable, str(SCRIPT), "--results", str(results), *extra],
                          cwd=str(results.parent), env=env, capture_output=True,
                          text=True, timeout=300)


def digest(results: Path) -> dict[str, str]:
    out = {}
    for sub in ("fig", "tables"):
        for p in sorted((results / sub).rglob("*")):
            if p.is_file():
                out[p.relative_to(results).as_posix()] = hashlib.sha256(p.read_bytes()).hexdigest()
    return out


def test_deterministic_across_runs_and_directories(tmp_path: Path):
    res = synth.make_results(tmp_path / "a", with_ceiling=True)
    r1 = run_script(res, hashseed="1")
    assert r1.returncode == 0, r1.stderr
    d1 = digest(res)
    r2 = run_script(res, hashseed="2")
    assert r2.returncode == 0, r2.stderr
    assert digest(res) == d1
    other = tmp_path / "elsewhere" / "deeper"
    other.mkdir(parents=True)
    shutil.copytree(res / "bench", other / "results" / "bench")
    shutil.copy(res / "manifest.json", other / "results" / "manifest.json")
    r3 = run_script(other / "results", hashseed="3")
    assert r3.returncode == 0, r3.stderr
    assert digest(other / "results") == d1
    assert "warning" not in r1.stderr

    names = sorted(d1)
    assert "fig/sweep_20261122__T_vs_p__GET_c50_v64.png" in names
    assert "fig/sweep_20261122__T_vs_p__GET_c50_v64.pdf" in names
    for kind in ("linearized", "residuals"):
        assert f"fig/sweep_20261122__{kind}__SET_c50_v64.pdf" in names
    for t in ("headline", "fit", "points", "closure"):
        assert f"tables/sweep_20261122__{t}.md" in names
        assert f"tables/sweep_20261122__{t}.tex" in names
    assert "fig/syscalls__per_op__GET.png" in names
    assert "tables/ceiling__ceiling.md" in names and "tables/ceiling__ceiling.tex" in names
    allowed = ("sweep_20261122__", "syscalls__", "instructions__", "memory__",
               "cycles__", "energy__", "summary__", "manifest__", "ceiling__")
    assert all(Path(n).name.startswith(allowed) for n in names)
    pdf = (res / "fig" / "sweep_20261122__closure.pdf").read_bytes()
    assert b"CreationDate" not in pdf and b"Producer" not in pdf


def test_unavailable_inputs_and_manifest_warning(tmp_path: Path):
    res = synth.make_results(tmp_path, tests=("GET",))
    (res / "bench" / "syscalls.csv").unlink()  # now listed-but-missing in the manifest
    r = run_script(res)
    assert r.returncode == 0, r.stderr
    assert "listed in manifest but missing: results/bench/syscalls.csv" in r.stderr
    tab = res / "tables"
    assert "cycles &lt;not supported>" in (tab / "cycles__unavailable.md").read_text()
    assert "cycles <not supported>" in (tab / "cycles__unavailable.tex").read_text()
    assert "unavailable" in (tab / "energy__unavailable.tex").read_text()
    assert "no syscalls.csv" in (tab / "syscalls__unavailable.md").read_text()
    avail = (tab / "summary__availability.md").read_text()
    assert "| syscalls | syscalls.csv | unavailable |" in avail
    assert "MISSING" in (tab / "manifest__verification.md").read_text()
    env = (tab / "manifest__environment.md").read_text()
    assert "| time_windows | sweep={\"end_utc\"" in env and "csv_sha256" not in env
    assert run_script(res, "--strict").returncode == 1
    # data come back: the stale "unavailable" note is replaced
    synth.write_csv(res / "bench" / "syscalls.csv",
                    ["server", "clients", "pipeline", "test", "ops", "read_calls",
                     "writev_calls", "write_calls", "epoll_wait_calls", "other_calls"],
                    synth.syscall_rows())
    assert run_script(res).returncode == 0
    assert not (tab / "syscalls__unavailable.md").exists()
    assert "per-connection 2/p" in (tab / "syscalls__syscalls.md").read_text()


def test_no_manifest_and_no_sweep_is_graceful(tmp_path: Path):
    res = tmp_path / "results"
    (res / "bench").mkdir(parents=True)
    r = run_script(res)
    assert r.returncode == 0, r.stderr
    assert "no manifest.json" in r.stderr and "no sweep CSVs" in r.stderr
    env = (res / "tables" / "manifest__environment.md").read_text()
    assert "environment unavailable" in env


def test_closure_violation_reported(tmp_path: Path):
    res = synth.make_results(tmp_path, with_manifest=False, tests=("GET",))
    p = res / "bench" / "sweep_20261122.csv"
    lines = p.read_text().splitlines()
    head = lines[0].split(",")
    cells = lines[1].split(",")
    i = head.index("p50_ms")
    cells[i] = str(float(cells[i]) * 3)
    lines[1] = ",".join(cells)
    p.write_text("\n".join(lines) + "\n")
    r = run_script(res)
    assert "1 pipeline-closure violations" in r.stderr
    txt = (res / "tables" / "sweep_20261122__closure.md").read_text()
    assert "1 violations" in txt


def test_1200_rows_under_two_minutes(tmp_path: Path):
    res = synth.make_results(tmp_path, big=True)
    rows = len((res / "bench" / "sweep_20261122.csv").read_text().splitlines()) - 1
    assert rows >= 1100
    t = time.monotonic()
    r = run_script(res)
    assert r.returncode == 0, r.stderr
    assert time.monotonic() - t < 120
    fit = (res / "tables" / "sweep_20261122__fit.csv").read_text().splitlines()
    assert len(fit) == 1 + 2 * 4 * 3  # servers x tests x C
    assert json.loads((res / "manifest.json").read_text())["cpu_model"] == "synthetic"


def test_cycles_and_energy_used_when_present(tmp_path: Path):
    from analysis import reproduce
    res = synth.make_results(tmp_path, with_manifest=False, tests=("GET",))
    synth.write_csv(res / "bench" / "cycles.csv",
                    ["server", "test", "pipeline", "clients", "ops", "cycles"],
                    [{"server": "ferry", "test": "GET", "pipeline": p, "clients": 50,
                      "ops": 1000, "cycles": 1000 * (250 + 5000 / p)} for p in (1, 10, 100)])
    synth.write_csv(res / "bench" / "energy.csv",
                    ["server", "test", "pipeline", "clients", "ops", "duration_s", "energy_uj"],
                    [{"server": "ferry", "test": "GET", "pipeline": 100, "clients": 50,
                      "ops": 4_000_000, "duration_s": 1.0, "energy_uj": 1_400_000}])
    out, issues = reproduce.run(res, n_boot=20)
    tab = res / "tables"
    assert not (tab / "cycles__unavailable.md").exists()
    assert "| ferry | GET | 50 | 1 | 5250.0 |" in (tab / "cycles__cycles.md").read_text()
    assert "| ferry | GET | 50 | 100 | 0.35 | 1.400 |" in (tab / "energy__energy.md").read_text()
    assert (res / "fig" / "cycles__per_op__GET.png") in out
    assert issues == 0
