"""Batched-service throughput model T(p) = p/(t0 + t1 p) and its checks.

What: turns typed sweep rows (analysis/io_csv.py) into per-point medians,
fits the linearized model y = p/T = t0 + t1 p per (server, client, test, C,
value_bytes[, persistence, tls]) group with OLS + HC1 + pairs bootstrap,
reports R^2 on y *and* on T, residuals, a curvature check, the pipeline
closure invariant (T*p50_s <= C*p), syscalls/op against the paper's 2/(Cp)
and the per-connection 2/p, instructions/op, bytes/entry, cycles/op, uJ/op.

Why: this is the paper's Sections 3, 6 and Appendix B made executable and
falsifiable on ferry's own data; everything is pure (rows in, plain data
out) so reproduce.py, capacity.py and the tests share one implementation.

Units: T in ops/us (= Mops/s), y and t0 in us, t1 internally us/op and
reported as ns/op (t1_ns), Tmax = 1/t1 in Mops/s, p* = t0/t1 in ops.
"""
from __future__ import annotations

import math
import re
from dataclasses import dataclass, field

import numpy as np

from analysis import stats

BOOT_SEED = 20261122
N_BOOT = 1000
HEADLINE_P = (1, 16, 100)
GROUP_FIELDS = ("server", "client", "test", "clients", "value_bytes",
                "persistence", "tls")


def model_T(p, t0: float, t1: float):
    """Throughput in ops/us for pipeline depth p (scalar or array)."""
    p = np.asarray(p, dtype=float)
    return p / (t0 + t1 * p)


def group_key(row: dict) -> tuple:
    return tuple(row[f] for f in GROUP_FIELDS)


def safe_name(s: str) -> str:
    """File-name-safe form of a label: anything but [A-Za-z0-9._-] -> '-'."""
    return re.sub(r"[^A-Za-z0-9._-]+", "-", str(s)).strip("-") or "x"


def key_label(key: tuple) -> str:
    """Short deterministic label, e.g. 'GET_c50_v64' (+client/tls if unusual)."""
    k = dict(zip(GROUP_FIELDS, key))
    lab = f"{k['test']}_c{k['clients']}_v{k['value_bytes']}"
    if k["client"] != "redis-benchmark":
        lab += f"_{k['client']}"
    if k["tls"] not in ("off", ""):
        lab += f"_tls{k['tls']}"
    if k["persistence"] not in ("none", ""):
        lab += f"_pers{k['persistence']}"
    return safe_name(lab)


def _nanmedian(vals) -> float:
    a = np.asarray([v for v in vals if not math.isnan(v)], dtype=float)
    return float(np.median(a)) if a.size else float("nan")


# ---------------------------------------------------------------- points


@dataclass
class Point:
    """Median over repeats at one pipeline depth of one group."""

    pipeline: int
    n_runs: int
    rps: float            # median rps (ops/s)
    rps_mean: float
    rps_ci: tuple         # 95% t-interval of the mean rps
    cv_pct: float         # coefficient of variation of rps over runs
    p50_ms: float
    p95_ms: float
    p99_ms: float
    p999_ms: float
    rps_runs: tuple       # every run's rps, sorted

    @property
    def T(self) -> float:  # ops/us
        return self.rps / 1e6

    @property
    def y(self) -> float:  # us per batch
        return self.pipeline / self.T


def summarize_points(rows: list[dict]) -> list[Point]:
    """One Point per pipeline depth (median over runs), sorted by P."""
    by_p: dict[int, list[dict]] = {}
    for r in rows:
        by_p.setdefault(r["pipeline"], []).append(r)
    pts = []
    for p in sorted(by_p):
        rs = by_p[p]
        rps = np.asarray(sorted(r["rps"] for r in rs if r["rps"] > 0))  # NaN/0 dropped
        if rps.size == 0:
            continue
        mean, lo, hi = stats.mean_ci(rps)
        cv = float(rps.std(ddof=1) / mean * 100) if rps.size > 1 and mean else float("nan")
        pts.append(Point(
            pipeline=p, n_runs=int(rps.size), rps=float(np.median(rps)),
            rps_mean=mean, rps_ci=(lo, hi), cv_pct=cv,
            p50_ms=_nanmedian(r["p50_ms"] for r in rs),
            p95_ms=_nanmedian(r["p95_ms"] for r in rs),
            p99_ms=_nanmedian(r["p99_ms"] for r in rs),
            p999_ms=_nanmedian(r["p999_ms"] for r in rs),
            rps_runs=tuple(float(v) for v in rps)))
    return pts


def group_rows(rows: list[dict]) -> dict[tuple, list[dict]]:
    out: dict[tuple, list[dict]] = {}
    for r in rows:
        out.setdefault(group_key(r), []).append(r)
    return dict(sorted(out.items()))


# ---------------------------------------------------------------- fit


@dataclass
class Fit:
    """Result of fitting one group; NaN fields when not identifiable."""

    key: tuple
    points: list
    n: int
    t0: float = math.nan            # us/batch
    t1: float = math.nan            # us/op
    se_t0: float = math.nan
    se_t1: float = math.nan
    cov: np.ndarray = field(default_factory=lambda: np.full((2, 2), np.nan))
    ci_t0: tuple = (math.nan, math.nan)      # HC1 + t
    ci_t1: tuple = (math.nan, math.nan)
    hc3_t0: tuple = (math.nan, math.nan)     # HC3 + t (small-sample check)
    hc3_t1: tuple = (math.nan, math.nan)
    boot_t0: tuple = (math.nan, math.nan)    # bootstrap percentile
    boot_t1: tuple = (math.nan, math.nan)
    tmax: float = math.nan                   # Mops/s
    ci_tmax: tuple = (math.nan, math.nan)
    boot_tmax: tuple = (math.nan, math.nan)
    pstar: float = math.nan
    ci_pstar: tuple = (math.nan, math.nan)
    boot_pstar: tuple = (math.nan, math.nan)
    n_boot: int = 0
    r2_y: float = math.nan
    r2_T: float = math.nan
    rmse_y: float = math.nan
    resid_y: tuple = ()
    resid_T: tuple = ()
    curv_t: float = math.nan   # HC3 t-stat of an added p^2 term
    curv_crit: float = math.nan  # t(0.975, n-3): |curv_t| above it = curvature
    note: str = ""

    @property
    def t1_ns(self) -> float:
        return self.t1 * 1000.0

    @property
    def curved(self) -> bool:
        """True when the p^2 term is significant at 5 % (HC3)."""
        return bool(abs(self.curv_t) > self.curv_crit)

    @property
    def label(self) -> str:
        return key_label(self.key)

    @property
    def keyd(self) -> dict:
        return dict(zip(GROUP_FIELDS, self.key))

    def T_hat(self, p):
        return model_T(p, self.t0, self.t1)


def _inv_interval(lo: float, hi: float) -> tuple:
    """Interval of 1/x for x in [lo, hi] (upper end inf when lo <= 0)."""
    if math.isnan(lo) or math.isnan(hi):
        return (math.nan, math.nan)
    return (1.0 / hi if hi > 0 else math.nan, 1.0 / lo if lo > 0 else math.inf)


def fit_points(key: tuple, points: list[Point], n_boot: int = N_BOOT,
               seed: int = BOOT_SEED) -> Fit:
    """Fit y = t0 + t1 p on the per-P medians of one group."""
    fit = Fit(key=key, points=points, n=len(points))
    if len({pt.pipeline for pt in points}) < 2:
        fit.note = "fewer than 2 pipeline depths: not identifiable"
        return fit
    p = np.array([pt.pipeline for pt in points], dtype=float)
    T = np.array([pt.T for pt in points], dtype=float)
    y = p / T
    res = stats.linear_fit(p, y)
    fit.t0, fit.t1 = (float(b) for b in res.beta)
    fit.cov = res.cov_hc1
    fit.se_t0, fit.se_t1 = (float(s) for s in res.se_hc1)
    ci = res.ci(0.95)
    fit.ci_t0, fit.ci_t1 = tuple(map(float, ci[0])), tuple(map(float, ci[1]))
    ci3 = res.ci(0.95, kind="hc3")
    fit.hc3_t0, fit.hc3_t1 = tuple(map(float, ci3[0])), tuple(map(float, ci3[1]))
    fit.tmax = 1.0 / fit.t1 if fit.t1 > 0 else math.nan
    fit.ci_tmax = _inv_interval(*fit.ci_t1)
    fit.pstar = fit.t0 / fit.t1 if fit.t1 > 0 else math.nan
    if res.df > 0 and fit.t1 > 0:
        g = np.array([1.0 / fit.t1, -fit.t0 / fit.t1 ** 2])
        se = math.sqrt(max(stats.quad_form(g, res.cov_hc1), 0.0))
        tq = stats.t_ppf(0.975, res.df)
        fit.ci_pstar = (fit.pstar - tq * se, fit.pstar + tq * se)
    fit.r2_y = stats.r_squared(y, res.fitted)
    T_hat = model_T(p, fit.t0, fit.t1)
    fit.r2_T = stats.r_squared(T, T_hat)
    fit.rmse_y = float(np.sqrt(np.mean(res.resid ** 2)))
    fit.resid_y = tuple(float(e) for e in res.resid)
    fit.resid_T = tuple(float(e) for e in T - T_hat)
    if len(set(p)) >= 4:
        q = stats.ols(np.column_stack([np.ones_like(p), p, p * p]), y)
        se2 = float(q.se_hc3[2])
        fit.curv_t = float(q.beta[2]) / se2 if se2 > 0 else math.nan
        fit.curv_crit = stats.t_ppf(0.975, q.df)
    boot = stats.bootstrap_linear(p, y, n_boot, seed)
    fit.n_boot = int(boot.shape[0])
    if fit.n_boot:
        b0, b1 = boot[:, 0], boot[:, 1]
        fit.boot_t0 = stats.percentile_ci(b0)
        fit.boot_t1 = stats.percentile_ci(b1)
        pos = b1 > 0
        fit.boot_tmax = stats.percentile_ci(1.0 / b1[pos])
        fit.boot_pstar = stats.percentile_ci(b0[pos] / b1[pos])
    return fit


def fit_sweep(rows: list[dict], n_boot: int = N_BOOT,
              seed: int = BOOT_SEED) -> list[Fit]:
    """Fits for every group of a sweep, sorted by group key."""
    return [fit_points(k, summarize_points(g), n_boot, seed)
            for k, g in group_rows(rows).items()]


# ---------------------------------------------------------------- headline


def headline(fits: list[Fit], pipelines=HEADLINE_P) -> list[dict]:
    """ferry vs redis medians (rps, p50, p99) at the given P, with ratios.

    One row per (client, test, C, value_bytes, persistence, tls, P) where at
    least one server has a point; ratios are ferry/redis (NaN if missing).
    """
    by = {}
    for f in fits:
        k = f.keyd
        base = (k["client"], k["test"], k["clients"], k["value_bytes"],
                k["persistence"], k["tls"])
        for pt in f.points:
            by.setdefault(base + (pt.pipeline,), {})[k["server"]] = pt
    out = []
    for base in sorted(by):
        if base[-1] not in pipelines:
            continue
        srv = by[base]
        fe, re_ = srv.get("ferry"), srv.get("redis")

        def g(pt, a):
            return getattr(pt, a) if pt is not None else math.nan
        row = dict(zip(("client", "test", "clients", "value_bytes",
                        "persistence", "tls", "pipeline"), base))
        for a in ("rps", "p50_ms", "p99_ms"):
            row[f"ferry_{a}"], row[f"redis_{a}"] = g(fe, a), g(re_, a)
            r = row[f"redis_{a}"]
            row[f"ratio_{a}"] = row[f"ferry_{a}"] / r if r and not math.isnan(r) else math.nan
        out.append(row)
    return out


# ---------------------------------------------------------------- closure


def closure(rows: list[dict]) -> list[dict]:
    """Invariant 1 per row: ratio = rps * p50_s / (C * p); violation if > 1."""
    out = []
    for r in sorted(rows, key=lambda r: (group_key(r), r["pipeline"], r["run"], r["order"])):
        lhs = r["rps"] * r["p50_ms"] / 1000.0
        rhs = r["clients"] * r["pipeline"]
        ratio = lhs / rhs
        out.append({**{f: r[f] for f in GROUP_FIELDS}, "pipeline": r["pipeline"],
                    "run": r["run"], "lhs": lhs, "rhs": rhs, "ratio": ratio,
                    "violation": bool(ratio > 1.0) if not math.isnan(ratio) else False,
                    "checked": not math.isnan(ratio)})
    return out


# ---------------------------------------------------------------- syscalls


def syscall_points(rows: list[dict]) -> list[dict]:
    """Per row: I/O syscalls/op vs 2/(C p) (paper) and 2/p (per connection)."""
    out = []
    for r in sorted(rows, key=lambda r: (r["server"], r["test"], r["clients"], r["pipeline"])):
        ops = r["ops"]
        if not ops or math.isnan(ops):
            continue
        c, p = r["clients"], r["pipeline"]
        io = r["read_calls"] + r["writev_calls"] + r["write_calls"]
        d = {k: r[k] for k in ("server", "test", "clients", "pipeline", "ops")}
        d.update(io_per_op=io / ops, read_per_op=r["read_calls"] / ops,
                 writev_per_op=r["writev_calls"] / ops,
                 write_per_op=r["write_calls"] / ops,
                 epoll_per_op=r["epoll_wait_calls"] / ops,
                 other_per_op=r["other_calls"] / ops,
                 pred_paper=2.0 / (c * p), pred_conn=2.0 / p)
        d["ratio_paper"] = d["io_per_op"] / d["pred_paper"]
        d["ratio_conn"] = d["io_per_op"] / d["pred_conn"]
        out.append(d)
    return out


def _geo(vals) -> float:
    """Geometric mean of the positive finite values (math's log/exp, not
    numpy's, whose last bits depend on the CPU's SIMD code path)."""
    a = [float(v) for v in vals if v > 0 and math.isfinite(v)]
    return math.exp(math.fsum(math.log(v) for v in a) / len(a)) if a else math.nan


def syscall_summary(points: list[dict]) -> list[dict]:
    """Per server: geometric-mean measured/predicted for both models + verdict.

    The verdict names the model whose geometric-mean ratio is closer to 1 in
    log terms; when every point has C == 1 the models coincide.
    """
    out = []
    for srv in sorted({d["server"] for d in points}):
        ds = [d for d in points if d["server"] == srv]
        s = {"server": srv, "n": len(ds)}
        for m in ("paper", "conn"):
            r = [d[f"ratio_{m}"] for d in ds]
            s[f"gm_{m}"] = _geo(r)
            s[f"min_{m}"], s[f"max_{m}"] = float(np.min(r)), float(np.max(r))
        # through-origin slope of io/op on 1/p: syscalls per batch per connection
        x = np.array([1.0 / d["pipeline"] for d in ds])
        yv = np.array([d["io_per_op"] for d in ds])
        s["calls_per_batch"] = stats.dot(x, yv) / stats.dot(x, x)
        s["epoll_per_op_median"] = float(np.median([d["epoll_per_op"] for d in ds]))
        if all(d["clients"] == 1 for d in ds):
            s["verdict"] = "indistinguishable (C = 1 everywhere)"
        else:
            ep, ec = abs(math.log(s["gm_paper"])), abs(math.log(s["gm_conn"]))
            s["verdict"] = ("per-connection 2/p" if ec < ep else "paper 2/(Cp)")
        out.append(s)
    return out


# ---------------------------------------------------------------- instructions


def per_op_points(rows: list[dict], counter: str) -> list[dict]:
    """Per row: counter/op (instructions, cycles) sorted by server/test/C/p."""
    out = []
    for r in sorted(rows, key=lambda r: (r["server"], r["test"], r["clients"], r["pipeline"])):
        if r["ops"] and not math.isnan(r["ops"]) and not math.isnan(r[counter]):
            out.append({k: r[k] for k in ("server", "test", "clients", "pipeline", "ops")}
                       | {counter: r[counter], "per_op": r[counter] / r["ops"]})
    return out


def batch_fit_per_op(points: list[dict]) -> list[dict]:
    """Per (server, test, C): counter/op * p = i0 + i1 p  (per batch + per op)."""
    groups: dict[tuple, list[dict]] = {}
    for d in points:
        groups.setdefault((d["server"], d["test"], d["clients"]), []).append(d)
    out = []
    for (srv, test, c), ds in sorted(groups.items()):
        p = np.array([d["pipeline"] for d in ds], dtype=float)
        row = {"server": srv, "test": test, "clients": c, "n": len(ds),
               "per_batch": math.nan, "per_op": math.nan, "r2": math.nan}
        if len(set(p)) >= 2:
            yv = np.array([d["per_op"] for d in ds]) * p
            res = stats.linear_fit(p, yv)
            row.update(per_batch=float(res.beta[0]), per_op=float(res.beta[1]),
                       r2=stats.r_squared(yv, res.fitted))
        out.append(row)
    return out


# ---------------------------------------------------------------- memory / energy


def memory_points(rows: list[dict]) -> list[dict]:
    """Per row: recomputed bytes/key and a flag when it differs > 1 %."""
    out = []
    for r in sorted(rows, key=lambda r: (r["server"], r["key_bytes"], r["value_bytes"], r["keys"])):
        bpk = (r["rss_after"] - r["rss_before"]) / r["keys"] if r["keys"] else math.nan
        rep = r["bytes_per_key"]
        mism = (not math.isnan(rep) and not math.isnan(bpk)
                and abs(bpk - rep) > 0.01 * max(abs(bpk), 1e-9))
        out.append({k: r[k] for k in ("server", "keys", "key_bytes", "value_bytes",
                                      "rss_before", "rss_after", "bytes_per_key")}
                   | {"bpk_recomputed": bpk, "mismatch": mism})
    return out


def memory_slopes(points: list[dict]) -> list[dict]:
    """Slope of rss_after vs N per (server, key_bytes, value_bytes), >=2 N."""
    g: dict[tuple, list[dict]] = {}
    for d in points:
        g.setdefault((d["server"], d["key_bytes"], d["value_bytes"]), []).append(d)
    out = []
    for (srv, kb, vb), ds in sorted(g.items()):
        n = np.array([d["keys"] for d in ds], dtype=float)
        if len(set(n)) < 2:
            continue
        res = stats.linear_fit(n, np.array([d["rss_after"] for d in ds]))
        out.append({"server": srv, "key_bytes": kb, "value_bytes": vb,
                    "slope_bytes_per_key": float(res.beta[1]),
                    "intercept_bytes": float(res.beta[0]), "n": len(ds)})
    return out


def energy_points(rows: list[dict]) -> list[dict]:
    """Per row: uJ/op and mean package power (W)."""
    out = []
    for r in sorted(rows, key=lambda r: (r["server"], r["test"], r["clients"], r["pipeline"])):
        if not r["ops"] or math.isnan(r["energy_uj"]):
            continue
        out.append({k: r[k] for k in ("server", "test", "clients", "pipeline", "ops")}
                   | {"uj_per_op": r["energy_uj"] / r["ops"],
                      "power_w": r["energy_uj"] / 1e6 / r["duration_s"]
                      if r["duration_s"] else math.nan})
    return out
