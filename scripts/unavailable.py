"""Record which metrics this machine cannot measure, and exactly why.

What: probes two metrics the benchmark would like to report and writes
<out>/unavailable.csv (columns metric, reason) with one row per metric that
cannot be measured here:
  cycles_per_op  - `perf stat -x, -e cycles true`: perf missing, a non-zero
                   exit, or a cycles count reported as <not supported> /
                   <not counted> (typical in VMs without a virtual PMU); the
                   reason quotes perf's own output;
  energy_j_per_op - /sys/class/powercap/intel-rapl* absent, or present but
                   its energy_uj counter unreadable.
A metric that turns out to be available gets no row; it is reported on
stdout (these scripts do not collect it).

Why: the analysis must say why a cycles/op or energy/op column is missing
rather than silently leave it out; the reason has to be the machine's, not a
guess.
"""
from __future__ import annotations

import argparse
import glob
import os
import subprocess
import sys
import time
from pathlib import Path

import benchlib as bl

COLUMNS = ["metric", "reason"]


def probe_cycles() -> str | None:
    """None when perf can count cycles here, else the reason."""
    perf = bl.which("perf")
    if not perf:
        return "perf not installed (no `perf` on PATH)"
    try:
        p = subprocess.run([perf, "stat", "-x,", "-e", "cycles", "true"], capture_output=True, text=True,
                           timeout=30)
    except (OSError, subprocess.SubprocessError) as e:
        return "`perf stat -e cycles true` could not run: %s" % e
    err = (p.stderr or "").strip()
    one_line = " | ".join(l.strip() for l in err.splitlines() if l.strip())
    if p.returncode != 0:
        return "`perf stat -e cycles true` failed with exit status %d: %s" % (p.returncode, one_line[:400])
    for line in err.splitlines():
        fields = line.split(",")
        if len(fields) >= 3 and fields[2].startswith("cycles"):
            val = fields[0].strip()
            if val.startswith("<"):
                extra = ""
                try:
                    with open("/proc/sys/kernel/perf_event_paranoid") as f:
                        extra = "; kernel.perf_event_paranoid=%s" % f.read().strip()
                except OSError:
                    pass
                return ("`perf stat -e cycles true` reports cycles %s (output: %s)%s"
                        % (val, line.strip(), extra))
            try:
                float(val)
                return None
            except ValueError:
                return "`perf stat -e cycles true` printed an unparsable count: %s" % line.strip()
    return "`perf stat -e cycles true` printed no cycles line: %s" % one_line[:400]


def probe_energy() -> str | None:
    """None when a RAPL energy counter is readable, else the reason."""
    zones = sorted(glob.glob("/sys/class/powercap/intel-rapl*"))
    if not zones:
        if not os.path.isdir("/sys/class/powercap"):
            return "/sys/class/powercap/intel-rapl* absent (no /sys/class/powercap on this kernel/VM)"
        return "/sys/class/powercap/intel-rapl* absent (powercap present, no RAPL zones)"
    errors = []
    for z in zones:
        path = os.path.join(z, "energy_uj")
        try:
            with open(path) as f:
                int(f.read().strip())
            return None
        except (OSError, ValueError) as e:
            errors.append("%s: %s" % (path, e))
    return "RAPL zones present but no readable energy_uj: %s" % "; ".join(errors)[:400]


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out", default=str(bl.REPO / "results" / "bench"), help="output directory")
    args = ap.parse_args(argv)
    out_dir = Path(args.out)
    started = bl.utc_now()
    t0 = time.monotonic()
    rows = []
    for metric, probe in (("cycles_per_op", probe_cycles), ("energy_j_per_op", probe_energy)):
        reason = probe()
        if reason is None:
            bl.log("unavailable: %s is measurable on this machine (not collected by these scripts)" % metric)
        else:
            rows.append({"metric": metric, "reason": reason})
            bl.log("unavailable: %s: %s" % (metric, reason))
    path = out_dir / "unavailable.csv"
    bl.write_csv(path, COLUMNS, rows)
    bl.record_window(out_dir, "unavailable", started, bl.utc_now(), rows=len(rows))
    bl.log("unavailable: wrote %d rows to %s in %.1fs" % (len(rows), path, time.monotonic() - t0))
    return 0


if __name__ == "__main__":
    sys.exit(main())
