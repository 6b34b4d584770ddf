"""Write results/manifest.json: what was measured, on what, when, and the
sha256 of every result CSV.

What: collects git_sha (and whether the work tree was dirty), the server
versions (from `--version` of the binaries used), os (/etc/os-release
PRETTY_NAME), kernel (uname -r), compiler (first line of `gcc --version`),
cflags (the CFLAGS make expands for this tree, plus the DW_AT_producer string
recorded in build/ferry-server's debug info, i.e. the flags the measured
binary was really compiled with), cpu_model and CPU count (/proc/cpuinfo),
the CPU pinning used, the time window (start/end UTC) of each experiment
(from <bench-dir>/windows.json, written by the experiment scripts), and
csv_sha256: {path relative to the repo root (or to the manifest's directory
when outside the repo): sha256 hex} for every <bench-dir>/*.csv.

Why: a benchmark number is only meaningful with the exact code, toolchain,
machine and time it came from; the hashes tie the manifest to the CSVs the
analysis reads.
"""
from __future__ import annotations

import argparse
import hashlib
import json
import os
import platform
import re
import subprocess
import sys
from pathlib import Path

import benchlib as bl


def run(argv, cwd=None) -> str:
    try:
        return subprocess.run(argv, capture_output=True, text=True, timeout=60, cwd=cwd).stdout
    except (OSError, subprocess.SubprocessError):
        return ""


def os_name() -> str:
    try:
        with open("/etc/os-release") as f:
            for line in f:
                if line.startswith("PRETTY_NAME="):
                    return line.split("=", 1)[1].strip().strip('"')
    except OSError:
        pass
    return platform.platform()


def cpu_model() -> str:
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.lower().startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown"


def make_cflags() -> str:
    out = run(["make", "-s", "--no-print-directory", "-p", "-n", "-f", "Makefile"], cwd=str(bl.REPO))
    for line in out.splitlines():
        m = re.match(r"^CFLAGS\s*:?=\s*(.*)$", line)
        if m:
            return m.group(1).strip()
    return ""


def producer(binary: str) -> str:
    out = run(["readelf", "--debug-dump=info", binary])
    for line in out.splitlines():
        m = re.search(r"DW_AT_producer\s*:\s*(?:\(indirect string, offset: 0x[0-9a-fA-F]+\):\s*)?(.*)$", line)
        if m:
            return m.group(1).strip()
    return ""


def sha256(path: Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--bench-dir", default=str(bl.REPO / "results" / "bench"), help="directory of the CSVs")
    ap.add_argument("--out", default=str(bl.REPO / "results" / "manifest.json"), help="manifest path")
    ap.add_argument("--ferry", default=None, help="ferry-server binary")
    ap.add_argument("--redis", default=None, help="redis-server binary")
    args = ap.parse_args(argv)
    bench_dir = Path(args.bench_dir).resolve()
    out = Path(args.out).resolve()
    ferry = bl.server_binary("ferry", args.ferry)
    redis = bl.server_binary("redis", args.redis)

    sha = run(["git", "rev-parse", "HEAD"], cwd=str(bl.REPO)).strip()
    dirty = bool(run(["git", "status", "--porcelain", "--untracked-files=no"], cwd=str(bl.REPO)).strip())
    windows = {}
    wpath = bench_dir / "windows.json"
    if wpath.exists():
        try:
            windows = json.loads(wpath.read_text())
        except ValueError:
            windows = {}
    pinning = {}
    for w in windows.values():
        if isinstance(w, dict) and w.get("pinning"):
            pinning = w["pinning"]
    if not pinning:
        pinning = bl.pinning_description(bl.pinning_available())

    def rel(p: Path) -> str:
        try:
            return str(p.relative_to(bl.REPO))
        except ValueError:
            return os.path.relpath(p, out.parent)

    csvs = {rel(p): sha256(p) for p in sorted(bench_dir.glob("*.csv"))}
    gcc = run(["gcc", "--version"]).splitlines()
    manifest = {
        "git_sha": sha or "unknown",
        "git_dirty": dirty,
        "server_versions": {"ferry": bl.server_version("ferry", ferry), "redis": bl.server_version("redis", redis)},
        "server_binaries": {"ferry": ferry, "redis": redis},
        "os": os_name(),
        "kernel": platform.release(),
        "compiler": gcc[0].strip() if gcc else "unknown",
        "cflags": make_cflags(),
        "cflags_ferry_binary_producer": producer(ferry),
        "cpu_model": cpu_model(),
        "cpu_count": os.cpu_count(),
        "pinning": pinning,
        "time_windows": {k: {"start_utc": v.get("start_utc"), "end_utc": v.get("end_utc")}
                         for k, v in sorted(windows.items()) if isinstance(v, dict)},
        "csv_sha256": csvs,
        "generated_utc": bl.utc_now(),
    }
    out.parent.mkdir(parents=True, exist_ok=True)
    tmp = out.with_suffix(".json.tmp")
    tmp.write_text(json.dumps(manifest, indent=2) + "\n")
    os.replace(tmp, out)
    bl.log("manifest: wrote %s (%d CSVs hashed, %d time windows, git %s%s)"
           % (out, len(csvs), len(manifest["time_windows"]), manifest["git_sha"][:12], " dirty" if dirty else ""))
    return 0


if __name__ == "__main__":
    sys.exit(main())
