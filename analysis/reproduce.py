"""Rebuild every figure and table of the ferry performance report from CSVs.

What: reads <results>/bench/*.csv (schema: analysis/SCHEMA.md) and, without
starting any server, writes <results>/fig/*.{png,pdf} and
<results>/tables/*.{md,tex} (plus <stem>__fit.csv for capacity.py), and
<results>/tables/ceiling__ceiling.{md,tex} when bench/ceiling.csv exists
(analysis/ceiling.py), <results>/tables/values__values.{md,tex} and
<results>/fig/values__rps_vs_size__<test>.{png,pdf} when bench/values.csv
exists (analysis/values.py), and <results>/tables/<kind>__<stem>.{md,tex} for each
default_suite*.csv and option_workloads.csv (analysis/suite.py).  Every
output name embeds the stem of the CSV it came from.  It first checks
<results>/manifest.json if there is one, and warns on stderr about any hash
that does not match.

Why: the paper's claims (T(p) fit, pipeline closure, syscall invariant,
memory per entry) must be regenerated mechanically and byte-identically
from the checked-in measurements; missing measurements (cycles and energy
on a VM) are reported as "unavailable", never estimated.

Usage:  python analysis/reproduce.py --results results
"""
from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

if __package__ in (None, ""):
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

os.environ.setdefault("SOURCE_DATE_EPOCH", "0")

from analysis import ceiling, elements, io_csv, manifest, model, persistence, plots, suite, tables, values  # noqa: E402


def warn(msg: str) -> None:
    print(f"reproduce: warning: {msg}", file=sys.stderr)


def clean(prefix: str, *dirs: Path) -> None:
    """Delete earlier outputs named '<prefix>__*' so none go stale.

    Only fig/ and tables/ are touched; those names belong to this script.
    """
    for d in dirs:
        if d.is_dir():
            for p in sorted(d.glob(f"{prefix}__*")):
                if p.is_file():
                    p.unlink()


def do_sweep(path: Path, fig_dir: Path, tab_dir: Path, n_boot: int) -> list[Path]:
    stem = path.stem
    clean(stem, fig_dir, tab_dir)
    rows = io_csv.load_sweep(path)
    fits = model.fit_sweep(rows, n_boot=n_boot)
    clos = model.closure(rows)
    out = []
    out += tables.write(tab_dir, f"{stem}__headline",
                        [tables.headline_table(stem, model.headline(fits))])
    out += tables.write(tab_dir, f"{stem}__fit", [tables.fit_table(stem, fits)])
    out.append(tables.fit_csv(tab_dir / f"{stem}__fit.csv", fits))
    out += tables.write(tab_dir, f"{stem}__points", [tables.points_table(stem, fits)])
    out += tables.write(tab_dir, f"{stem}__closure", [tables.closure_table(stem, clos)])
    nviol = sum(r["violation"] for r in clos)
    if nviol:
        warn(f"{path.name}: {nviol} pipeline-closure violations (see {stem}__closure.md)")
    out += plots.sweep_figures(stem, fits, clos, fig_dir)
    return out


def do_aux(kind: str, path: Path, fig_dir: Path, tab_dir: Path) -> list[Path]:
    rows = io_csv.load_typed(path, io_csv.AUX_COLUMNS[kind])
    out: list[Path] = []
    if kind == "syscalls":
        pts = model.syscall_points(rows)
        out += tables.write(tab_dir, "syscalls__syscalls",
                            tables.syscalls_tables(pts, model.syscall_summary(pts)))
        for t in plots.tests_of(pts):
            out += plots.save(plots.fig_syscalls(t, plots.by_test(pts, t)),
                              fig_dir, f"syscalls__per_op__{model.safe_name(t)}")
    elif kind in ("instructions", "cycles"):
        pts = model.per_op_points(rows, kind)
        bf = model.batch_fit_per_op(pts)
        tabs = (tables.instructions_tables(pts, bf) if kind == "instructions"
                else [tables.cycles_table(pts)])
        out += tables.write(tab_dir, f"{kind}__{kind}", tabs)
        for t in plots.tests_of(pts):
            out += plots.save(plots.fig_per_op(t, plots.by_test(pts, t), bf,
                                               f"{kind}/op", f"{kind}.csv"),
                              fig_dir, f"{kind}__per_op__{model.safe_name(t)}")
    elif kind == "memory":
        pts = model.memory_points(rows)
        out += tables.write(tab_dir, "memory__memory",
                            tables.memory_tables(pts, model.memory_slopes(pts)))
        for d in pts:
            if d["mismatch"]:
                warn(f"memory.csv: bytes_per_key differs from recomputed for {d['server']} "
                     f"N={d['keys']}")
        if pts:
            out += plots.save(plots.fig_memory(pts), fig_dir, "memory__bytes_per_entry")
    elif kind == "energy":
        pts = [d | {"per_op": d["uj_per_op"]} for d in model.energy_points(rows)]
        out += tables.write(tab_dir, "energy__energy", [tables.energy_table(pts)])
        for t in plots.tests_of(pts):
            out += plots.save(plots.fig_per_op(t, plots.by_test(pts, t), [], "µJ/op",
                                               "energy.csv"),
                              fig_dir, f"energy__per_op__{model.safe_name(t)}")
    return out


def do_ceiling(path: Path, tab_dir: Path) -> tuple[list[Path], int]:
    """ceiling__<stem>.{md,tex} from ceiling.csv; returns (paths, rows)."""
    rows = ceiling.load(path)
    return tables.write(tab_dir, f"ceiling__{path.stem}", ceiling.make_tables(path.stem, rows)), len(rows)


def do_elements(path: Path, tab_dir: Path) -> tuple[list[Path], int]:
    """memory_elements__<stem>.{md,tex} from memory_elements.csv."""
    rows = elements.load(path)
    return tables.write(tab_dir, f"memory_elements__{path.stem}", [elements.make_table(path.stem, rows)]), len(rows)


def do_long(path: Path, tab_dir: Path) -> tuple[list[Path], int]:
    """<stem>__<stem>.{md,tex} from a long-format side-by-side CSV
    (persistence.csv, scripting.csv, aof.csv, streams.csv, commands.csv)."""
    rows = persistence.load(path)
    return tables.write(tab_dir, f"{path.stem}__{path.stem}", [persistence.make_table(path.stem, rows)]), len(rows)


def do_suites(aux: dict, fig_dir: Path, tab_dir: Path) -> tuple[list[Path], list[tuple]]:
    """<kind>__<stem>.{md,tex} for every default_suite*.csv and
    option_workloads.csv in aux, after removing every earlier one (so a
    deleted CSV leaves no stale table). Returns (paths, availability rows)."""
    for kind in io_csv.SUITE_NAME_COLUMN:
        clean(kind, fig_dir, tab_dir)
    out, avail = [], []
    for stem in sorted(s for s in aux if io_csv.suite_kind(s)):
        p, kind = aux[stem], io_csv.suite_kind(stem)
        try:
            rows = suite.load(p)
        except io_csv.SchemaError as e:
            warn(str(e))
            avail.append((kind, p.name, "error", str(e)))
            continue
        out += tables.write(tab_dir, f"{kind}__{stem}", [suite.make_table(stem, rows)])
        avail.append((kind, p.name, "available",
                      f"{len(rows)} rows, sha256 {manifest.sha256_file(p)[:16]}"))
    return out, avail


def do_optional(kind: str, aux: dict, fig_dir: Path, tab_dir: Path, make) -> tuple[list[Path], tuple | None]:
    """Clean kind's old outputs, then make(csv, tab_dir) -> (paths, rows) if
    aux has kind's CSV. Returns (paths, availability row or None)."""
    clean(kind, fig_dir, tab_dir)
    p = aux.get(kind)
    if p is None:
        return [], None
    try:
        paths, n = make(p, tab_dir)
    except io_csv.SchemaError as e:
        warn(str(e))
        return [], (kind, p.name, "error", str(e))
    return paths, (kind, p.name, "available", f"{n} rows, sha256 {manifest.sha256_file(p)[:16]}")


def run(results: Path, n_boot: int = model.N_BOOT) -> tuple[list[Path], int]:
    """Produce all outputs; returns (paths written, number of warnings-worthy issues)."""
    bench, fig_dir, tab_dir = results / "bench", results / "fig", results / "tables"
    plots.setup()
    out: list[Path] = []
    issues = 0

    ver = manifest.verify(results)
    for m in ver.messages():
        warn(m)
    issues += 0 if ver.passed or not ver.present else 1
    try:
        man = manifest.load(results)
    except (OSError, ValueError):
        man = None
    env_t, ver_t = tables.manifest_tables(man, ver)
    out += tables.write(tab_dir, "manifest__environment", [env_t])
    out += tables.write(tab_dir, "manifest__verification", [ver_t])
    declared = (man or {}).get("unavailable")
    declared = dict(declared) if isinstance(declared, dict) else {}

    sweeps, aux, other = io_csv.classify(bench)
    avail = []
    if "unavailable" in aux:
        try:
            declared = io_csv.unavailable_reasons(aux["unavailable"]) | declared
            avail.append(("unavailable list", aux["unavailable"].name, "available",
                          ", ".join(sorted(declared)) or "no metric listed"))
        except io_csv.SchemaError as e:
            warn(str(e))
            issues += 1
            avail.append(("unavailable list", aux["unavailable"].name, "error", str(e)))
    for p in other:
        warn(f"{p.name}: not a sweep file and not a known auxiliary file; ignored")
        avail.append(("unknown", p.name, "ignored", "header matches no schema"))
    if not sweeps:
        warn(f"no sweep CSVs in {bench}")
        avail.append(("sweep", "", "unavailable", f"no sweep CSV in {bench.name}/"))
    for p in sweeps:
        try:
            out += do_sweep(p, fig_dir, tab_dir, n_boot)
            avail.append(("sweep", p.name, "available", f"sha256 {manifest.sha256_file(p)[:16]}"))
        except io_csv.SchemaError as e:
            warn(str(e))
            issues += 1
            avail.append(("sweep", p.name, "error", str(e)))
    for kind in io_csv.AUX_KINDS:
        clean(kind, fig_dir, tab_dir)
        p = aux.get(kind)
        reason = declared.get(kind)
        if p is not None:
            try:
                rows = io_csv.load_typed(p, io_csv.AUX_COLUMNS[kind])
            except io_csv.SchemaError as e:
                warn(str(e))
                issues += 1
                avail.append((kind, p.name, "error", str(e)))
                continue
            if rows and not io_csv.all_unavailable(rows, io_csv.AUX_COLUMNS[kind]):
                out += do_aux(kind, p, fig_dir, tab_dir)
                avail.append((kind, p.name, "available",
                              f"{len(rows)} rows, sha256 {manifest.sha256_file(p)[:16]}"))
                continue
            reason = reason or f"{p.name} holds no measured values"
        reason = reason or f"no {kind}.csv in {bench.name}/"
        out += tables.write(tab_dir, f"{kind}__unavailable", [tables.unavailable(kind, reason)])
        avail.append((kind, f"{kind}.csv", "unavailable", reason))
    # optional inputs: no table and no availability row without their CSV
    for kind, make in (("ceiling", do_ceiling), ("memory_elements", do_elements), ("persistence", do_long),
                       ("scripting", do_long), ("aof", do_long), ("streams", do_long),
                       ("commands", do_long),
                       ("values", lambda p, t: values.write_outputs(p, fig_dir, t))):
        paths, row = do_optional(kind, aux, fig_dir, tab_dir, make)
        out += paths
        if row:
            avail.append(row)
            issues += row[2] == "error"
    paths, rows = do_suites(aux, fig_dir, tab_dir)
    out += paths
    avail += rows
    issues += sum(r[2] == "error" for r in rows)
    out += tables.write(tab_dir, "summary__availability", [tables.availability_table(avail)])
    return sorted(set(out)), issues


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description="Rebuild figures and tables from results/bench CSVs.")
    ap.add_argument("--results", type=Path, default=Path("results"),
                    help="results directory holding bench/ (default: results)")
    ap.add_argument("--n-boot", type=int, default=model.N_BOOT,
                    help=f"bootstrap resamples (default {model.N_BOOT})")
    ap.add_argument("--strict", action="store_true",
                    help="exit 1 on manifest mismatch or schema errors")
    a = ap.parse_args(argv)
    t0 = time.monotonic()
    out, issues = run(a.results, a.n_boot)
    print(f"reproduce: wrote {len(out)} files under {a.results}/fig and {a.results}/tables "
          f"in {time.monotonic() - t0:.1f}s")
    return 1 if (a.strict and issues) else 0


if __name__ == "__main__":
    sys.exit(main())
