"""Capacity planner: how many ferry nodes for a target throughput.

What: N = ceil(target / ((1 - headroom) * T(p))) with T(p) = p/(t0 + t1 p)
from a fitted (t0, t1), plus the range of N implied by the 95% confidence
intervals of t0 and t1 (a conservative box: both at their upper ends gives
the lowest T(p) and so the largest N, and vice versa).

Why: Section 7.3 of the paper turns the model into a sizing rule.  Note
that the paper's worked example (10 Mops/s, 0.8 utilisation, T = 4.164)
gives 10/(0.8*4.164) = 3.0019, whose ceiling is 4, not the 3 printed there.
Here `headroom` is the fraction of capacity kept free (0.2 = run at 80 %).

Either pass --t0/--t1 directly, or look the constants up in a fit table
written by reproduce.py (results/tables/<stem>__fit.csv, or a directory of
them) by --server/--test/--clients/--value-bytes.

  python analysis/capacity.py --target 10M --headroom 0.2 --clients 50 -p 100 \
      --fit-table results/tables --server ferry --test GET --value-bytes 64
  python analysis/capacity.py --target 10M --headroom 0.2 -p 100 --t0 5.49 --t1 69.6
"""
from __future__ import annotations

import argparse
import csv
import math
import sys
from dataclasses import dataclass
from pathlib import Path

if __package__ in (None, ""):
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from analysis.model import model_T  # noqa: E402


@dataclass(frozen=True)
class Plan:
    """Sizing result; T values in Mops/s, target in ops/s."""

    nodes: int
    nodes_lo: int | None     # from the optimistic end of the CIs
    nodes_hi: int | None     # from the pessimistic end (inf -> None)
    T_p: float
    T_lo: float
    T_hi: float
    pstar: float
    per_node_budget: float   # usable ops/s per node


def nodes_for(target_ops: float, headroom: float, T_mops: float) -> int:
    """ceil(target / ((1-headroom) * T)); T in Mops/s, target in ops/s."""
    if not 0.0 <= headroom < 1.0:
        raise ValueError("headroom must be in [0, 1)")
    if not T_mops > 0:
        raise ValueError("T(p) must be positive")
    # round before ceil so 3.0000000000000004 (float noise) does not become 4
    return math.ceil(round(target_ops / ((1.0 - headroom) * T_mops * 1e6), 9))


def plan(target_ops: float, headroom: float, p: float, t0: float, t1_ns: float,
         ci_t0: tuple = (math.nan, math.nan),
         ci_t1_ns: tuple = (math.nan, math.nan)) -> Plan:
    """Size a deployment for pipeline depth p from t0 (us) and t1 (ns/op)."""
    t1 = t1_ns / 1000.0
    T_p = float(model_T(p, t0, t1))
    n = nodes_for(target_ops, headroom, T_p)
    T_lo = T_hi = math.nan
    n_lo = n_hi = None
    if not any(math.isnan(v) for v in (*ci_t0, *ci_t1_ns)):
        den_hi = ci_t0[1] + ci_t1_ns[1] / 1000.0 * p   # slowest batch
        den_lo = ci_t0[0] + ci_t1_ns[0] / 1000.0 * p   # fastest batch
        T_lo = p / den_hi if den_hi > 0 else math.nan
        T_hi = p / den_lo if den_lo > 0 else math.inf
        n_lo = nodes_for(target_ops, headroom, T_hi) if math.isfinite(T_hi) else 1
        n_hi = nodes_for(target_ops, headroom, T_lo) if T_lo > 0 else None
    return Plan(nodes=n, nodes_lo=n_lo, nodes_hi=n_hi, T_p=T_p, T_lo=T_lo,
                T_hi=T_hi, pstar=t0 / t1 if t1 > 0 else math.nan,
                per_node_budget=(1.0 - headroom) * T_p * 1e6)


def parse_rate(s: str) -> float:
    """'10M' -> 1e7, '250k' -> 2.5e5, '1.5e6' -> 1.5e6 (ops/s)."""
    mult = {"k": 1e3, "m": 1e6, "g": 1e9}
    s = s.strip()
    if s and s[-1].lower() in mult:
        return float(s[:-1]) * mult[s[-1].lower()]
    return float(s)


def fit_tables(path: Path) -> list[Path]:
    return sorted(path.glob("*__fit.csv")) if path.is_dir() else [path]


def lookup(path: Path, server: str, test: str, clients: int | None,
           value_bytes: int | None, client: str | None = None,
           ci: str = "hc1") -> dict:
    """The unique fit-table row matching the filters (error otherwise)."""
    hits = []
    for f in fit_tables(path):
        with open(f, newline="", encoding="utf-8") as fh:
            for r in csv.DictReader(fh):
                if (r["server"] == server and r["test"].upper() == test.upper()
                        and (clients is None or int(r["clients"]) == clients)
                        and (value_bytes is None or int(r["value_bytes"]) == value_bytes)
                        and (client is None or r["client"] == client)):
                    hits.append((f.name, r))
    if len(hits) != 1:
        desc = ", ".join(f"{n}:{r['label']}" for n, r in hits) or "none"
        raise LookupError(f"need exactly one matching fit, found {len(hits)} ({desc}); "
                          "narrow with --clients/--value-bytes/--client or pick one file")
    name, r = hits[0]
    pre = {"bootstrap": "boot_", "hc3": "hc3_"}.get(ci, "ci_")
    return {"source": f"{name}:{r['label']}", "t0": float(r["t0_us"]),
            "t1_ns": float(r["t1_ns"]),
            "ci_t0": (float(r[pre + "t0_lo"]), float(r[pre + "t0_hi"])),
            "ci_t1_ns": (float(r[pre + "t1_ns_lo"]), float(r[pre + "t1_ns_hi"])),
            "clients": int(r["clients"]), "p_min": int(r["p_min"]),
            "p_max": int(r["p_max"])}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description="Size nodes from T(p) = p/(t0+t1 p).")
    ap.add_argument("--target", required=True, type=parse_rate,
                    help="target throughput in ops/s (suffix k/M/G allowed)")
    ap.add_argument("--headroom", type=float, default=0.2,
                    help="fraction of capacity kept free (default 0.2)")
    ap.add_argument("-p", "--pipeline", type=int, required=True)
    ap.add_argument("--clients", type=int, help="C (fit lookup filter)")
    ap.add_argument("--t0", type=float, help="us/batch")
    ap.add_argument("--t1", type=float, help="ns/op")
    ap.add_argument("--t0-ci", type=float, nargs=2, metavar=("LO", "HI"))
    ap.add_argument("--t1-ci", type=float, nargs=2, metavar=("LO", "HI"))
    ap.add_argument("--fit-table", type=Path,
                    help="a <stem>__fit.csv or a directory of them")
    ap.add_argument("--server", default="ferry")
    ap.add_argument("--test")
    ap.add_argument("--value-bytes", type=int)
    ap.add_argument("--client", help="load generator filter")
    ap.add_argument("--ci", choices=("hc1", "hc3", "bootstrap"), default="hc1",
                    help="which 95%% CIs of t0/t1 give the node range (default hc1)")
    a = ap.parse_args(argv)
    notes = []
    if a.t0 is not None and a.t1 is not None:
        src = {"source": "command line", "t0": a.t0, "t1_ns": a.t1,
               "ci_t0": tuple(a.t0_ci or (math.nan, math.nan)),
               "ci_t1_ns": tuple(a.t1_ci or (math.nan, math.nan))}
    elif a.fit_table and a.test:
        try:
            src = lookup(a.fit_table, a.server, a.test, a.clients, a.value_bytes,
                         a.client, a.ci)
        except (LookupError, OSError, KeyError) as e:
            print(f"capacity: {e}", file=sys.stderr)
            return 2
        if not src["p_min"] <= a.pipeline <= src["p_max"]:
            notes.append(f"p={a.pipeline} is outside the measured range "
                         f"[{src['p_min']}, {src['p_max']}]: extrapolation")
    else:
        ap.error("give --t0 and --t1, or --fit-table with --test")
    if not 1 <= a.pipeline <= 1000:
        notes.append("p outside the paper's admissible region [1, 1000]")
    pl = plan(a.target, a.headroom, a.pipeline, src["t0"], src["t1_ns"],
              src["ci_t0"], src["ci_t1_ns"])
    rng = ("n/a (no CI)" if pl.nodes_lo is None and pl.nodes_hi is None else
           f"[{pl.nodes_lo}, {pl.nodes_hi if pl.nodes_hi is not None else 'unbounded'}]")
    print(f"fit: {src['source']}  t0={src['t0']:.4g} us/batch  t1={src['t1_ns']:.4g} ns/op")
    box = ("n/a" if math.isnan(pl.T_lo) and math.isnan(pl.T_hi)
           else f"{pl.T_lo:.4f} .. {pl.T_hi:.4f}")
    print(f"T(p={a.pipeline}) = {pl.T_p:.4f} Mops/s  (CI box: {box})")
    print(f"p* = t0/t1 = {pl.pstar:.1f}; paper suggests p in [p*, 2p*] = "
          f"[{pl.pstar:.0f}, {2 * pl.pstar:.0f}]")
    print(f"usable per node at headroom {a.headroom:g}: {pl.per_node_budget:,.0f} ops/s")
    ci_src = a.ci if src["source"] != "command line" else "as given"
    print(f"nodes = {pl.nodes}   range from 95% CIs ({ci_src}): {rng}")
    print("check pipeline closure (T*p50_s <= C*p) in the closure table before relying on this")
    for n in notes:
        print(f"note: {n}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
