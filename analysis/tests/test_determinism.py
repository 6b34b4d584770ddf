"""Outputs are byte-identical across machines, not only across runs (issue 11).

A fresh clone's `make test` rewrote 42 checked-in PNGs: the fits' last bits
came from OpenBLAS, whose kernel is chosen per CPU, and from numpy's
AVX-512 log/exp, and Agg turned those bits into different pixels where a
straight line was drawn through 100-200 collinear points.  These tests
check the pieces (no BLAS in the fit, straight lines as two points, a
geomspace-free grid) and then stand in for "another machine" by running
reproduce.py in fresh processes with OpenBLAS's kernel, its thread count
and numpy's SIMD code paths switched by environment variables.
"""
import hashlib
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from analysis import io_csv, model, plots, stats
from analysis.tests import synth

ROOT = Path(__file__).resolve().parents[2]
SCRIPT = ROOT / "analysis" / "reproduce.py"


def test_ols_uses_no_blas_and_matches_lstsq(monkeypatch):
    rng = np.random.default_rng(3)
    p = np.array([1.0, 10, 16, 50, 100, 200, 500, 750])
    y = 6.8 + 0.0734 * p + rng.normal(0, 0.05, p.size)
    X = np.column_stack([np.ones_like(p), p, p * p])
    ref = np.linalg.lstsq(X, y, rcond=None)[0]
    ref_inv = np.linalg.inv(X.T @ X)

    def no_blas(*a, **k):
        raise AssertionError("stats.ols must not use LAPACK (its bits depend on the CPU)")
    for name in ("lstsq", "pinv", "inv", "solve"):
        monkeypatch.setattr(np.linalg, name, no_blas)
    r = stats.ols(X, y)
    assert np.allclose(r.beta, ref, rtol=1e-9, atol=1e-12)
    e2 = r.resid ** 2
    hc1 = ref_inv @ ((X * e2[:, None]).T @ X) @ ref_inv * (p.size / (p.size - 3))
    assert np.allclose(r.cov_hc1, hc1, rtol=1e-8, atol=0)
    with pytest.raises(ValueError):
        stats.ols(np.column_stack([np.ones(4), np.full(4, 2.0)]), np.arange(4.0))


def test_exact_helpers():
    a = np.array([1e16, 1.0, -1e16])
    assert stats.dot(a, np.ones(3)) == 1.0  # exactly rounded, unlike a naive sum
    M = np.array([[2.0, 0.5], [0.5, 3.0]])
    assert stats.quad_form([1.0, 2.0], M) == 2.0 + 2 * 0.5 * 2 + 3.0 * 4
    assert np.array_equal(stats.matmul(M, np.eye(2)), M)


def test_log_grid():
    g = plots.log_grid(1, 1024, 11)
    assert g[0] == 1.0 and g[-1] == 1024.0 and g.size == 11
    assert np.allclose(g, 2.0 ** np.arange(0, 11, 1.0), rtol=1e-11)
    assert list(plots.log_grid(5, 5, 100)) == [5.0, 5.0]


def _fits(tmp_path: Path) -> list:
    res = synth.make_results(tmp_path, with_manifest=False, tests=("GET",))
    rows = io_csv.load_sweep(res / "bench" / "sweep_20261122.csv")
    return model.fit_sweep(rows, n_boot=20)


def test_straight_lines_are_drawn_through_two_points(tmp_path: Path):
    plots.setup()
    fits = _fits(tmp_path)
    fig = plots.fig_linearized("s", fits)
    fit_lines = [ln for ln in fig.axes[0].lines if "y =" in ln.get_label()]
    assert len(fit_lines) == 2
    assert all(len(ln.get_xdata()) == 2 for ln in fit_lines)
    pts = model.syscall_points([{k: float(v) if k not in ("server", "test") else v
                                 for k, v in r.items()} for r in synth.syscall_rows()])
    fig = plots.fig_syscalls("GET", pts)
    refs = [ln for ln in fig.axes[0].lines if ln.get_label().startswith("2/")]
    assert len(refs) == 4 and all(len(ln.get_xdata()) == 2 for ln in refs)


def _foreign_cpu_envs() -> list[dict]:
    """Environments that make this machine compute like other ones: OpenBLAS
    kernels of other CPUs and thread counts, numpy without its best SIMD
    paths (names from numpy itself, so baseline features are never listed)."""
    try:
        from numpy._core import _multiarray_umath as mu
        dispatch = [f for f in mu.__cpu_dispatch__ if mu.__cpu_features__.get(f)]
    except (ImportError, AttributeError):
        dispatch = []
    return [{"OPENBLAS_CORETYPE": "Haswell", "OPENBLAS_NUM_THREADS": "4",
             "NPY_DISABLE_CPU_FEATURES": " ".join(dispatch[1:])},
            {"OPENBLAS_CORETYPE": "Prescott", "OPENBLAS_NUM_THREADS": "1",
             "NPY_DISABLE_CPU_FEATURES": " ".join(dispatch)}]


def _reproduce(results: Path, env: dict) -> dict[str, str]:
    e = {k: v for k, v in os.environ.items()
         if not k.startswith(("OPENBLAS_", "NPY_", "OMP_"))} | {"PYTHONHASHSEED": "0"} | env
    r = subprocess.run([sys.executable, str(SCRIPT), "--results", str(results), "--n-boot", "50"],
                       cwd=str(results.parent), env=e, capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stderr
    return {p.relative_to(results).as_posix(): hashlib.sha256(p.read_bytes()).hexdigest()
            for sub in ("fig", "tables") for p in sorted((results / sub).rglob("*")) if p.is_file()}


def test_outputs_identical_on_other_cpus(tmp_path: Path):
    res = synth.make_results(tmp_path, with_manifest=False, with_suites=True)
    base = _reproduce(res, {})
    assert any(n.endswith("__linearized__GET_c50_v64.png") for n in base)
    for env in _foreign_cpu_envs():
        got = _reproduce(res, env)
        assert sorted(got) == sorted(base)
        differ = sorted(n for n in base if got[n] != base[n])
        assert not differ, f"{env}: {len(differ)} outputs differ, e.g. {differ[:5]}"
