"""Deterministic matplotlib figures for the ferry performance report.

What: T vs p with fitted curves (ferry and redis-server per test), the
linearized fit p/T vs p with its HC1 95% band, residuals in y and in T,
pipeline closure T*p50_s vs C*p, syscalls/op against 2/(Cp) and 2/p,
instructions (or cycles, energy) per op, and bytes/entry.  Each figure is
saved as PNG and PDF.

Why: the paper's figures have to be rebuilt from CSVs alone, and they have to
come out byte-identical on every run.  So this module uses the Agg backend
only, resets rcParams to matplotlib's built-in defaults plus a fixed style,
strips the Software/CreationDate/ModDate/Producer metadata, draws everything
in sorted order, and uses no pyplot global state (every figure is its own
Figure object).

Byte-identical also means identical on another machine (issue 11: a fresh
clone's `make test` rewrote 42 checked-in PNGs).  The fits' last bits used
to depend on the CPU (OpenBLAS kernel, numpy's AVX-512 log/exp), and a
straight line drawn through 100-200 collinear points turns such bits into
different pixels: Agg's stroker picks each join's inner and outer side from
the sign of a cross product that is pure rounding noise when the segments
are collinear.  So the fits are BLAS-free (analysis/stats.py), curve grids
come from log_grid() instead of np.geomspace, no einsum is used, and every
line that is straight on its axes is drawn through its two end points only.
"""
from __future__ import annotations

import math
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
from matplotlib.figure import Figure  # noqa: E402
import numpy as np  # noqa: E402

from analysis import stats  # noqa: E402

COLORS = {"ferry": "#1f77b4", "redis": "#d62728"}
C_COLORS = ["#2ca02c", "#9467bd", "#ff7f0e", "#8c564b", "#e377c2", "#17becf",
            "#7f7f7f", "#bcbd22"]
META = {"png": {"Software": None},
        "pdf": {"CreationDate": None, "ModDate": None, "Producer": None}}
STYLE = {
    "font.family": "DejaVu Sans", "font.size": 8, "axes.titlesize": 8,
    "axes.labelsize": 8, "legend.fontsize": 6.5, "xtick.labelsize": 7,
    "ytick.labelsize": 7, "figure.dpi": 100, "savefig.dpi": 120,
    "axes.grid": True, "grid.alpha": 0.3, "lines.linewidth": 1.2,
    "pdf.fonttype": 3, "svg.hashsalt": "ferry-analysis",
    "path.simplify": False, "figure.autolayout": False,
}


def setup() -> None:
    """Reset matplotlib to a fixed, environment-independent style."""
    matplotlib.rcdefaults()
    matplotlib.rcParams.update(STYLE)


def color(server: str) -> str:
    return COLORS.get(server, "#555555")


def save(fig: Figure, fig_dir: Path, name: str) -> list[Path]:
    fig_dir.mkdir(parents=True, exist_ok=True)
    out = []
    fig.tight_layout()
    for ext in ("png", "pdf"):
        p = fig_dir / f"{name}.{ext}"
        fig.savefig(p, format=ext, metadata=META[ext])
        out.append(p)
    return out


def log_grid(lo: float, hi: float, n: int) -> np.ndarray:
    """n points from lo to hi, evenly spaced in log p, the ends exact.

    Replaces np.geomspace, whose SIMD log/exp give different last bits on
    AVX-512 and AVX2 machines; each point is rounded to 12 significant
    digits, far below a pixel, so libm's last bit does not matter either.
    """
    lo, hi = float(lo), float(hi)
    if n < 2 or lo == hi:
        return np.array([lo, hi])
    r = math.log(hi / lo)
    mid = [float(f"{lo * math.exp(r * i / (n - 1)):.12g}") for i in range(1, n - 1)]
    return np.array([lo, *mid, hi])


def panels(fits: list) -> dict[tuple, list]:
    """Group fits by key without server -> fits sorted by server."""
    out: dict[tuple, list] = {}
    for f in fits:
        out.setdefault(f.key[1:], []).append(f)
    return {k: sorted(v, key=lambda f: f.key[0]) for k, v in sorted(out.items())}


def _ok(f) -> bool:
    return not math.isnan(f.t0) and not math.isnan(f.t1)


# ---------------------------------------------------------------- sweep figures


def fig_T_vs_p(stem: str, fits: list) -> Figure:
    fig = Figure(figsize=(5.0, 3.4))
    ax = fig.add_subplot()
    for f in fits:
        srv, c = f.keyd["server"], color(f.keyd["server"])
        for pt in f.points:
            ax.scatter([pt.pipeline] * len(pt.rps_runs), np.array(pt.rps_runs) / 1e6,
                       s=6, color=c, alpha=0.35, linewidths=0)
        p = np.array([pt.pipeline for pt in f.points], dtype=float)
        ax.plot(p, [pt.T for pt in f.points], "o", ms=3.5, color=c, label=f"{srv} median")
        if _ok(f):
            grid = log_grid(p.min(), p.max(), 200)
            ax.plot(grid, f.T_hat(grid), "-", color=c,
                    label=f"{srv} fit: t0={f.t0:.2f} µs, t1={f.t1_ns:.1f} ns, "
                          f"R²(T)={f.r2_T:.4f}")
            if f.t1 > 0:
                ax.axhline(f.tmax, color=c, ls=":", lw=0.8)
            if p.min() <= f.pstar <= p.max():
                ax.axvline(f.pstar, color=c, ls="--", lw=0.6)
    ax.set_xscale("log")
    ax.set_xlabel("pipeline depth p")
    ax.set_ylabel("T (Mops/s)")
    ax.set_title(f"T(p) = p/(t0+t1 p), {fits[0].label}\n"
                 f"dotted: Tmax = 1/t1, dashed: p* = t0/t1; data: {stem}.csv")
    ax.legend(loc="upper left")
    return fig


def fig_linearized(stem: str, fits: list) -> Figure:
    fig = Figure(figsize=(5.0, 3.4))
    ax = fig.add_subplot()
    for f in fits:
        srv, c = f.keyd["server"], color(f.keyd["server"])
        p = np.array([pt.pipeline for pt in f.points], dtype=float)
        ax.plot(p, [pt.y for pt in f.points], "o", ms=3.5, color=c, label=f"{srv} p/T")
        if _ok(f):
            ends = np.array([0.0, p.max()])  # a straight line: two points only
            ax.plot(ends, f.t0 + f.t1 * ends, "-", color=c, label=f"{srv}: y = {f.t0:.2f} + "
                    f"{f.t1:.4f} p, R²(y)={f.r2_y:.4f}")
            if np.all(np.isfinite(f.cov)) and f.n > 2:
                grid = np.linspace(0.0, p.max(), 200)
                yh = f.t0 + f.t1 * grid
                (c00, c01), (_, c11) = f.cov
                se = np.sqrt(np.maximum(c00 + 2.0 * c01 * grid + c11 * grid * grid, 0.0))
                tq = stats.t_ppf(0.975, f.n - 2)
                ax.fill_between(grid, yh - tq * se, yh + tq * se, color=c,
                                alpha=0.15, linewidth=0)
    ax.set_xlabel("pipeline depth p")
    ax.set_ylabel("y = p/T (µs per batch)")
    ax.set_title(f"Linearized fit with HC1 95% band, {fits[0].label}\ndata: {stem}.csv")
    ax.legend(loc="upper left")
    return fig


def fig_residuals(stem: str, fits: list) -> Figure:
    fig = Figure(figsize=(5.0, 4.2))
    ay, aT = fig.add_subplot(2, 1, 1), fig.add_subplot(2, 1, 2)
    for f in fits:
        if not f.resid_y:
            continue
        srv, c = f.keyd["server"], color(f.keyd["server"])
        p = [pt.pipeline for pt in f.points]
        ay.plot(p, f.resid_y, "o-", ms=3, lw=0.7, color=c, label=srv)
        aT.plot(p, f.resid_T, "o-", ms=3, lw=0.7, color=c, label=srv)
    for a, lab in ((ay, "resid y (µs)"), (aT, "resid T (Mops/s)")):
        a.axhline(0.0, color="black", lw=0.6)
        a.set_xscale("log")
        a.set_ylabel(lab)
        a.legend(loc="best")
    aT.set_xlabel("pipeline depth p")
    ay.set_title(f"Residuals, {fits[0].label}; data: {stem}.csv")
    return fig


def fig_closure(stem: str, rows: list[dict]) -> Figure:
    fig = Figure(figsize=(4.4, 4.0))
    ax = fig.add_subplot()
    rows = [r for r in rows if r["checked"] and r["lhs"] > 0]
    for srv in sorted({r["server"] for r in rows}):
        rs = [r for r in rows if r["server"] == srv]
        ax.scatter([r["rhs"] for r in rs], [r["lhs"] for r in rs], s=8,
                   color=color(srv), alpha=0.6, linewidths=0, label=srv)
    bad = [r for r in rows if r["violation"]]
    if bad:
        ax.scatter([r["rhs"] for r in bad], [r["lhs"] for r in bad], s=30,
                   facecolors="none", edgecolors="black", label=f"violations ({len(bad)})")
    if rows:
        lo = min(min(r["rhs"] for r in rows), min(r["lhs"] for r in rows))
        hi = max(max(r["rhs"] for r in rows), max(r["lhs"] for r in rows))
        ax.plot([lo, hi], [lo, hi], "k-", lw=0.8, label="y = x")
        ax.set_xscale("log")
        ax.set_yscale("log")
        ax.legend(loc="upper left")
    ax.set_xlabel("C·p (requests in flight allowed)")
    ax.set_ylabel("T·p50_s")
    ax.set_title(f"Pipeline closure (Invariant 1)\ndata: {stem}.csv")
    return fig


# ---------------------------------------------------------------- aux figures


def fig_syscalls(test: str, points: list[dict]) -> Figure:
    fig = Figure(figsize=(6.4, 3.4))
    ax, ae = fig.add_subplot(1, 2, 1), fig.add_subplot(1, 2, 2)
    cs = sorted({d["clients"] for d in points})
    marks = {"ferry": "o", "redis": "s"}
    for srv in sorted({d["server"] for d in points}):
        for i, c in enumerate(cs):
            ds = [d for d in points if d["server"] == srv and d["clients"] == c]
            if not ds:
                continue
            col = C_COLORS[i % len(C_COLORS)]
            p = [d["pipeline"] for d in ds]
            ax.plot(p, [d["io_per_op"] for d in ds], marks.get(srv, "^"), ms=4,
                    color=col, mfc="none" if srv == "redis" else col,
                    label=f"{srv} C={c}")
            ae.plot(p, [d["epoll_per_op"] for d in ds], marks.get(srv, "^") + "-",
                    ms=4, lw=0.6, color=col, mfc="none" if srv == "redis" else col,
                    label=f"{srv} C={c}")
    allp = sorted({d["pipeline"] for d in points})
    if allp:
        ends = np.array([min(allp), max(allp)], dtype=float)  # straight on log-log
        ax.plot(ends, 2.0 / ends, "k-", lw=1.0, label="2/p (per connection)")
        for i, c in enumerate(cs):
            ax.plot(ends, 2.0 / (c * ends), "--", lw=0.8, color=C_COLORS[i % len(C_COLORS)],
                    label=f"2/(Cp), C={c} (paper)")
    for a in (ax, ae):
        a.set_xscale("log")
        a.set_yscale("log")
        a.set_xlabel("pipeline depth p")
    ax.set_ylabel("(read+writev+write)/op")
    ae.set_ylabel("epoll_wait/op")
    ax.set_title(f"{test}: I/O syscalls per op\ndata: syscalls.csv")
    ae.set_title(f"{test}: epoll_wait per op")
    ax.legend(loc="lower left", fontsize=5.5)
    return fig


def fig_per_op(test: str, points: list[dict], fits: list[dict], ylabel: str,
               source: str) -> Figure:
    """Counter/op vs p per server and C, with the i0/p + i1 curve if fitted."""
    fig = Figure(figsize=(5.0, 3.4))
    ax = fig.add_subplot()
    cs = sorted({d["clients"] for d in points})
    for srv in sorted({d["server"] for d in points}):
        for i, c in enumerate(cs):
            ds = [d for d in points if d["server"] == srv and d["clients"] == c]
            if not ds:
                continue
            col = C_COLORS[i % len(C_COLORS)] if len(cs) > 1 else color(srv)
            p = np.array([d["pipeline"] for d in ds], dtype=float)
            ax.plot(p, [d["per_op"] for d in ds], "o" if srv == "ferry" else "s",
                    ms=4, color=col, mfc=col if srv == "ferry" else "none",
                    label=f"{srv} C={c}")
            fit = [f for f in fits if (f["server"], f["test"], f["clients"]) == (srv, test, c)]
            if fit and not math.isnan(fit[0]["per_op"]) and p.size > 1:
                grid = log_grid(p.min(), p.max(), 100)
                ax.plot(grid, fit[0]["per_batch"] / grid + fit[0]["per_op"], "-",
                        lw=0.8, color=col)
    ax.set_xscale("log")
    ax.set_xlabel("pipeline depth p")
    ax.set_ylabel(ylabel)
    ax.set_title(f"{test}: {ylabel} vs p\ndata: {source}")
    ax.legend(loc="upper right")
    return fig


def fig_memory(points: list[dict]) -> Figure:
    fig = Figure(figsize=(5.0, 3.4))
    ax = fig.add_subplot()
    cats = sorted({(d["key_bytes"], d["value_bytes"], d["keys"]) for d in points})
    srvs = sorted({d["server"] for d in points})
    w = 0.8 / max(len(srvs), 1)
    for j, srv in enumerate(srvs):
        vals = []
        for cat in cats:
            ds = [d["bpk_recomputed"] for d in points if d["server"] == srv
                  and (d["key_bytes"], d["value_bytes"], d["keys"]) == cat]
            vals.append(float(np.median(ds)) if ds else math.nan)
        ax.bar(np.arange(len(cats)) + j * w, vals, width=w, color=color(srv), label=srv)
    ax.set_xticks(np.arange(len(cats)) + 0.4 - w / 2)
    ax.set_xticklabels([f"k{k}/v{v}\nN={n:,}" for k, v, n in cats], fontsize=6)
    ax.set_ylabel("bytes per key ((RSS after - before)/N)")
    ax.set_title("Memory per entry\ndata: memory.csv")
    ax.legend(loc="upper left")
    return fig


def sweep_figures(stem: str, fits: list, closure_rows: list[dict],
                  fig_dir: Path) -> list[Path]:
    out = []
    for _, fs in panels(fits).items():
        lab = fs[0].label
        for kind, fn in (("T_vs_p", fig_T_vs_p), ("linearized", fig_linearized),
                         ("residuals", fig_residuals)):
            out += save(fn(stem, fs), fig_dir, f"{stem}__{kind}__{lab}")
    out += save(fig_closure(stem, closure_rows), fig_dir, f"{stem}__closure")
    return out


def tests_of(points: list[dict]) -> list[str]:
    return sorted({d["test"] for d in points})


def by_test(points: list[dict], test: str) -> list[dict]:
    return [d for d in points if d["test"] == test]


__all__ = ["setup", "save", "sweep_figures", "fig_syscalls", "fig_per_op",
           "fig_memory", "tests_of", "by_test", "log_grid"]
