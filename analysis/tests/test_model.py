"""Tests of analysis/stats.py and analysis/model.py on data with known truth.

These cover: t quantiles against closed forms and tabulated values, OLS and
bootstrap recovering known t0/t1, HC1/HC3 against a small example worked by
hand, R^2 on y versus R^2 on T, pipeline closure, the syscall verdict,
instruction and memory accounting, and schema errors.
"""
import math
import tempfile
from pathlib import Path

import numpy as np
import pytest

from analysis import io_csv, model, stats
from analysis.tests import synth

# ---------------------------------------------------------------- t quantiles


@pytest.mark.parametrize("q", [0.6, 0.9, 0.95, 0.975, 0.995, 0.9995])
def test_t_ppf_closed_forms_df1_df2(q):
    # df=1 is Cauchy: tan(pi (q - 1/2)); df=2: (2q-1)/sqrt(2 q (1-q))
    assert stats.t_ppf(q, 1) == pytest.approx(math.tan(math.pi * (q - 0.5)), rel=1e-11)
    assert stats.t_ppf(q, 2) == pytest.approx((2 * q - 1) / math.sqrt(2 * q * (1 - q)),
                                              rel=1e-11)


@pytest.mark.parametrize("df,expected", [
    (3, 3.182446305), (5, 2.570581836), (6, 2.446911851), (10, 2.228138852),
    (20, 2.085963447), (30, 2.042272456), (120, 1.979930405)])
def test_t_ppf_table(df, expected):
    assert stats.t_ppf(0.975, df) == pytest.approx(expected, abs=2e-9)


def test_t_ppf_matches_numeric_integral_and_normal_limit():
    df = 100
    t = stats.t_ppf(0.975, df)
    c = math.exp(math.lgamma((df + 1) / 2) - math.lgamma(df / 2)) / math.sqrt(df * math.pi)
    u = np.linspace(0.0, t, 200001)
    f = c * (1 + u * u / df) ** (-(df + 1) / 2)
    h = u[1] - u[0]
    area = h / 3 * (f[0] + f[-1] + 4 * f[1:-1:2].sum() + 2 * f[2:-1:2].sum())
    assert 0.5 + area == pytest.approx(0.975, abs=1e-12)
    assert stats.t_ppf(0.975, 1e7) == pytest.approx(1.959963985, abs=1e-6)
    assert stats.t_ppf(0.025, 7) == pytest.approx(-stats.t_ppf(0.975, 7))
    assert stats.t_cdf(stats.t_ppf(0.9, 4.5), 4.5) == pytest.approx(0.9, abs=1e-14)


# ---------------------------------------------------------------- OLS / HC1


def test_hc1_hc3_hand_example():
    # x = 1..4, y = 1,3,2,5: xbar 2.5, Sxx 5, Sxy 5.5 -> b1 1.1, b0 0
    # e = -0.1, 0.8, -1.3, 0.6; HC0 var(b1) = sum((x-xbar)^2 e^2)/Sxx^2 = 1.415/25
    # HC1 = n/(n-k) * HC0 = 2 * 0.0566 = 0.1132
    # var(b0): a_i = 1/n - xbar (x_i-xbar)/Sxx = 1, .5, 0, -.5 -> sum a^2 e^2 = .26 -> .52
    # cov(b0,b1): sum a_i b_i e_i^2, b_i = (x_i-xbar)/Sxx = -.089 -> HC1 -.178
    # HC3: leverages .7,.3,.3,.7; var(b1) = sum b_i^2 e_i^2/(1-h_i)^2
    #      = .01 + .0064/.49 + .0169/.49 + .0324/.09 = 0.37 + .0233/.49
    res = stats.linear_fit(np.array([1.0, 2, 3, 4]), np.array([1.0, 3, 2, 5]))
    assert res.beta == pytest.approx([0.0, 1.1], abs=1e-12)
    assert res.resid == pytest.approx([-0.1, 0.8, -1.3, 0.6], abs=1e-12)
    assert res.cov_hc1[1, 1] == pytest.approx(0.1132, rel=1e-12)
    assert res.cov_hc1[0, 0] == pytest.approx(0.52, rel=1e-12)
    assert res.cov_hc1[0, 1] == pytest.approx(-0.178, rel=1e-12)
    assert res.se_hc1[1] == pytest.approx(math.sqrt(0.1132), rel=1e-12)
    assert res.cov_hc3[1, 1] == pytest.approx(0.37 + 0.0233 / 0.49, rel=1e-12)
    tq = stats.t_ppf(0.975, 2)
    assert res.ci()[1] == pytest.approx([1.1 - tq * math.sqrt(0.1132),
                                         1.1 + tq * math.sqrt(0.1132)], rel=1e-12)


def _points(truth, noise, seed=3, runs=5):
    """Typed sweep rows, round-tripped through the real CSV writer and loader."""
    rows = synth.sweep_rows(tests=("GET",), clients=(50,), runs=runs, noise=noise,
                            seed=seed, truth=truth)
    with tempfile.TemporaryDirectory() as d:
        return io_csv.load_sweep(synth.write_csv(Path(d) / "s.csv", synth.SWEEP_HEADER, rows))


def test_ols_recovers_exact_constants_without_noise():
    fits = model.fit_sweep(_points({"ferry": (5.49, 0.0696)}, noise=0.0), n_boot=200)
    (f,) = fits
    assert f.t0 == pytest.approx(5.49, rel=1e-5)
    assert f.t1_ns == pytest.approx(69.6, rel=1e-5)
    assert f.tmax == pytest.approx(1 / 0.0696, rel=1e-5)
    assert f.pstar == pytest.approx(5.49 / 0.0696, rel=1e-5)
    assert f.r2_y == pytest.approx(1.0, abs=1e-9)
    assert f.r2_T == pytest.approx(1.0, abs=1e-9)


def test_ols_and_bootstrap_recover_known_constants_with_noise():
    truth = {"ferry": (6.8, 0.0734), "redis": (14.0, 0.2)}
    fits = {f.keyd["server"]: f for f in model.fit_sweep(_points(truth, noise=0.01))}
    for srv, (t0, t1) in truth.items():
        f = fits[srv]
        assert f.t0 == pytest.approx(t0, rel=0.03)
        assert f.t1 == pytest.approx(t1, rel=0.02)
        assert f.n_boot == model.N_BOOT
        for lo, hi in (f.boot_t0, f.ci_t0, f.hc3_t0):
            assert lo < f.t0 < hi
        for lo, hi in (f.boot_t1, f.ci_t1, f.hc3_t1):
            assert lo < f.t1 < hi
        # truth inside the bootstrap interval widened by its own width (noise)
        w = f.boot_t1[1] - f.boot_t1[0]
        assert f.boot_t1[0] - w < t1 < f.boot_t1[1] + w
        assert f.ci_tmax[0] < f.tmax < f.ci_tmax[1]
        assert f.boot_pstar[0] < f.pstar < f.boot_pstar[1]


def test_bootstrap_is_deterministic_and_shrinks_with_noise():
    x = np.array([1.0, 10, 16, 50, 100, 200, 500, 750])
    rng = np.random.default_rng(0)
    y_noisy = 6.8 + 0.0734 * x + rng.normal(0, 0.5, x.size)
    y_quiet = 6.8 + 0.0734 * x + rng.normal(0, 0.05, x.size)
    a = stats.bootstrap_linear(x, y_noisy, 1000, seed=7)
    b = stats.bootstrap_linear(x, y_noisy, 1000, seed=7)
    assert np.array_equal(a, b)
    assert np.median(a[:, 1]) == pytest.approx(0.0734, abs=0.01)
    wn = np.subtract(*stats.percentile_ci(a[:, 1])[::-1])
    wq = np.subtract(*stats.percentile_ci(stats.bootstrap_linear(x, y_quiet, 1000, 7)[:, 1])[::-1])
    assert wq < wn


def test_r2_on_T_differs_from_r2_on_y_as_expected():
    # Multiplicative noise on T: y = p/T grows with p, so SST(y) is large and
    # R2(y) stays near 1; T saturates, so SST(T) is small relative to the
    # same noise and R2(T) is lower.  Both are computed as 1 - SSE/SST.
    truth = {"ferry": (6.8, 0.0734)}
    gaps = []
    for seed in range(5):
        (f,) = model.fit_sweep(_points(truth, noise=0.05, seed=seed, runs=1), n_boot=10)
        p = np.array([pt.pipeline for pt in f.points], float)
        T = np.array([pt.T for pt in f.points])
        T_hat = p / (f.t0 + f.t1 * p)
        manual = 1 - np.sum((T - T_hat) ** 2) / np.sum((T - T.mean()) ** 2)
        assert f.r2_T == pytest.approx(manual, rel=1e-12)
        assert f.r2_y == pytest.approx(stats.r_squared(p / T, f.t0 + f.t1 * p), rel=1e-12)
        assert f.resid_T == pytest.approx(tuple(T - T_hat))
        assert f.r2_T != pytest.approx(f.r2_y, abs=1e-6)
        gaps.append(f.r2_y - f.r2_T)
    assert np.mean(gaps) > 0


def test_not_identifiable_with_one_pipeline_depth():
    rows = [r for r in _points({"ferry": (6.8, 0.0734)}, 0.0) if r["pipeline"] == 16]
    (f,) = model.fit_sweep(rows, n_boot=10)
    assert math.isnan(f.t0) and "not identifiable" in f.note


def test_median_over_repeats_and_grouping():
    rows = _points({"ferry": (6.8, 0.0734), "redis": (14.0, 0.2)}, 0.02, runs=5)
    fits = model.fit_sweep(rows, n_boot=10)
    assert [f.keyd["server"] for f in fits] == ["ferry", "redis"]
    pt = fits[0].points[0]
    runs = sorted(r["rps"] for r in rows if r["server"] == "ferry" and r["pipeline"] == 1)
    assert pt.n_runs == 5 and pt.rps == pytest.approx(runs[2])
    assert fits[0].label == "GET_c50_v64"


def test_headline_ratios():
    rows = _points({"ferry": (6.8, 0.0734), "redis": (14.0, 0.2)}, 0.0, runs=1)
    hl = model.headline(model.fit_sweep(rows, n_boot=10))
    assert [r["pipeline"] for r in hl] == [1, 16, 100]
    r = hl[0]
    assert r["ratio_rps"] == pytest.approx((1 / 6.8734) / (1 / 14.2), rel=1e-4)


# ---------------------------------------------------------------- invariants


def test_closure_flags_only_violations():
    rows = _points({"ferry": (6.8, 0.0734)}, 0.0, runs=1)
    rows[3]["p50_ms"] = rows[3]["p50_ms"] * 2  # ratio 0.9 -> 1.8
    rows[4]["p50_ms"] = math.nan
    out = model.closure(rows)
    bad = [r for r in out if r["violation"]]
    assert len(bad) == 1 and bad[0]["ratio"] == pytest.approx(1.8, rel=1e-3)
    assert sum(not r["checked"] for r in out) == 1
    ok = [r for r in out if r["checked"] and not r["violation"]]
    assert all(r["ratio"] == pytest.approx(0.9, rel=1e-3) for r in ok)


def _typed(rows, kind):
    cols = io_csv.AUX_COLUMNS[kind]
    return [{k: (float(v) if cols[k] == "f" else v) for k, v in r.items()} for r in rows]


def test_syscalls_follow_per_connection_invariant():
    pts = model.syscall_points(_typed(synth.syscall_rows(), "syscalls"))
    assert all(d["ratio_conn"] == pytest.approx(1.0, rel=1e-3) for d in pts)
    assert all(d["ratio_paper"] == pytest.approx(d["clients"], rel=1e-3) for d in pts)
    summ = model.syscall_summary(pts)
    assert [s["verdict"] for s in summ] == ["per-connection 2/p"] * 2
    assert all(s["calls_per_batch"] == pytest.approx(2.0, rel=1e-3) for s in summ)


def test_syscalls_verdict_paper_when_data_follow_2_over_Cp():
    rows = synth.syscall_rows()
    for r in rows:
        r["read_calls"] = r["ops"] // (r["clients"] * r["pipeline"])
        r["writev_calls"], r["write_calls"] = r["read_calls"], 0
    summ = model.syscall_summary(model.syscall_points(_typed(rows, "syscalls")))
    assert summ[0]["verdict"] == "paper 2/(Cp)"
    assert summ[0]["gm_paper"] == pytest.approx(1.0, rel=1e-3)


def test_instructions_batch_model_recovers_per_batch_and_per_op():
    pts = model.per_op_points(_typed(synth.instruction_rows(), "instructions"), "instructions")
    fits = {f["server"]: f for f in model.batch_fit_per_op(pts)}
    assert fits["ferry"]["per_op"] == pytest.approx(700.0, rel=1e-4)
    assert fits["ferry"]["per_batch"] == pytest.approx(9000.0, rel=1e-3)
    assert pts[0]["per_op"] == pytest.approx(700 + 9000, rel=1e-6)


def test_memory_recompute_mismatch_and_slope():
    rows = _typed(synth.memory_rows(), "memory")
    rows[0]["bytes_per_key"] = 120.0
    pts = model.memory_points(rows)
    assert pts[0]["bpk_recomputed"] == pytest.approx(92.0)
    assert pts[0]["mismatch"] and not pts[1]["mismatch"]
    slopes = {s["server"]: s for s in model.memory_slopes(pts)}
    assert slopes["redis"]["slope_bytes_per_key"] == pytest.approx(168.0)


# ---------------------------------------------------------------- schema


def test_schema_missing_column_and_bad_int(tmp_path: Path):
    p = synth.write_csv(tmp_path / "s.csv", ["server", "rps"], [{"server": "ferry", "rps": 1}])
    with pytest.raises(io_csv.SchemaError, match="missing columns"):
        io_csv.load_sweep(p)
    rows = synth.sweep_rows(tests=("GET",), runs=1)
    rows[0]["pipeline"] = "x"
    p = synth.write_csv(tmp_path / "t.csv", synth.SWEEP_HEADER, rows)
    with pytest.raises(io_csv.SchemaError, match="t.csv:2:pipeline"):
        io_csv.load_sweep(p)


def test_empty_p999_is_nan_and_unavailable_file_detected(tmp_path: Path):
    p = synth.write_csv(tmp_path / "s.csv", synth.SWEEP_HEADER,
                        synth.sweep_rows(tests=("GET",), runs=1))
    rows = io_csv.load_sweep(p)
    assert all(math.isnan(r["p999_ms"]) for r in rows if r["server"] == "redis")
    cols = io_csv.AUX_COLUMNS["cycles"]
    q = synth.write_csv(tmp_path / "cycles.csv", list(cols),
                        [{"server": "ferry", "test": "GET", "pipeline": 1, "clients": 1,
                          "ops": "unavailable", "cycles": "unavailable"}])
    assert io_csv.all_unavailable(io_csv.load_typed(q, cols), cols)
