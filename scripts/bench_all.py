"""Run every benchmark experiment in order and write the manifest (`make bench`).

What: runs, each as its own process with this Python:
  1. sweep.py        -> <out>/sweep_<tag>.csv   (throughput/latency matrix)
  2. syscalls.py     -> <out>/syscalls.csv      (strace -c, syscalls/op)
  3. ceiling.py      -> <out>/ceiling.csv       (P=1 ceiling: null servers vs redis, CPU/op)
  3b. values_bench.py -> <out>/values.csv       (GET/SET 64 B..64 KB, P=1/16/100, with the null ceiling)
  4. instructions.py -> <out>/instructions.csv  (callgrind, instructions/op)
  5. memory.py       -> <out>/memory.csv        (RSS growth per key)
  6. persistence.py  -> <out>/persistence.csv
                        (RDB load time, dump size, BGSAVE under load)
  6b. aof.py         -> <out>/aof.csv           (AOF fsync throughput, replay, rewrite)
  6c. scripting.py   -> <out>/scripting.csv     (EVALSHA throughput, script cache)
  6d. repl_bench.py  -> <out>/repl.csv          (SET with 0/1/2 replicas, lag, full-sync time)
  6e. tls_bench.py   -> <out>/tls.csv           (SET/GET over TLS, P=1/16/100, handshakes)
  6f. cluster_bench.py -> <out>/cluster.csv     (2-node ferry cluster vs one node, redis cluster, io-threads)
  7. unavailable.py  -> <out>/unavailable.csv   (cycles, energy: why not)
  8. manifest.py     -> results/manifest.json   (versions, machine, windows, sha256)
Each step's full output is shown as it runs and also saved to
build/bench-logs/<step>.log; after each step one summary line is printed
(status, duration, rows written). A failed step does not stop the later ones;
the exit status is non-zero if any step failed. --quick runs every step in its
smoke mode (for checking the pipeline, not for results).

Why: one command that regenerates all the numbers the analysis uses, in a
fixed order, on servers started fresh by each step.
"""
from __future__ import annotations

import argparse
import csv
import subprocess
import sys
import time
from pathlib import Path

import benchlib as bl

HERE = Path(__file__).resolve().parent
STEPS = ["sweep", "syscalls", "ceiling", "values", "instructions", "memory", "persistence", "aof", "scripting", "repl",
         "tls", "cluster", "unavailable", "manifest"]


def count_rows(path: Path) -> int:
    try:
        with open(path, newline="") as f:
            return max(0, sum(1 for _ in csv.reader(f)) - 1)
    except OSError:
        return -1


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out", default=str(bl.REPO / "results" / "bench"), help="CSV directory (default results/bench)")
    ap.add_argument("--manifest", default=str(bl.REPO / "results" / "manifest.json"), help="manifest path")
    ap.add_argument("--tag", default=None, help="sweep tag (default full, or quick with --quick)")
    ap.add_argument("--quick", action="store_true", help="run every step in its quick/smoke mode")
    ap.add_argument("--skip", default="", help="comma list of steps to skip (%s)" % ",".join(STEPS))
    ap.add_argument("--logs", default=str(bl.REPO / "build" / "bench-logs"), help="log directory")
    ap.add_argument("--no-pin", action="store_true", help="do not pin server/client with taskset")
    args = ap.parse_args(argv)
    bl.install_signal_handlers()
    skip = {s.strip() for s in args.skip.split(",") if s.strip()}
    for s in skip:
        if s not in STEPS:
            raise SystemExit("unknown step %r (steps: %s)" % (s, ", ".join(STEPS)))
    out = Path(args.out)
    logs = Path(args.logs)
    logs.mkdir(parents=True, exist_ok=True)
    tag = args.tag or ("quick" if args.quick else "full")
    q = ["--quick"] if args.quick else []
    pin = ["--no-pin"] if args.no_pin else []
    plan = {
        "sweep": (["sweep.py", "--out", str(out), "--tag", tag] + q + pin, [out / ("sweep_%s.csv" % tag)]),
        "syscalls": (["syscalls.py", "--out", str(out)] + q + pin, [out / "syscalls.csv"]),
        "ceiling": (["ceiling.py", "--out", str(out)] + q + pin, [out / "ceiling.csv"]),
        "values": (["values_bench.py", "--out", str(out)] + q + pin, [out / "values.csv"]),
        "instructions": (["instructions.py", "--out", str(out)] + q + pin, [out / "instructions.csv"]),
        "memory": (["memory.py", "--out", str(out)] + q + pin, [out / "memory.csv"]),
        "persistence": (["persistence.py", "--out", str(out)] + q, [out / "persistence.csv"]),
        "aof": (["aof.py", "--out", str(out)] + q, [out / "aof.csv"]),
        "scripting": (["scripting.py", "--out", str(out)] + q, [out / "scripting.csv"]),
        "repl": (["repl_bench.py", "--out", str(out)] + q, [out / "repl.csv"]),
        "tls": (["tls_bench.py", "--out", str(out)] + q + pin, [out / "tls.csv"]),
        "cluster": (["cluster_bench.py", "--out", str(out)] + q + pin, [out / "cluster.csv"]),
        "unavailable": (["unavailable.py", "--out", str(out)], [out / "unavailable.csv"]),
        "manifest": (["manifest.py", "--bench-dir", str(out), "--out", args.manifest], []),
    }
    summary = []
    t_all = time.monotonic()
    for step in STEPS:
        if step in skip:
            summary.append("%-12s skipped" % step)
            bl.log("== %s" % summary[-1])
            continue
        script, outputs = plan[step]
        argv_ = [sys.executable, str(HERE / script[0])] + script[1:]
        logpath = logs / ("%s.log" % step)
        bl.log("== %s: %s (log %s)" % (step, " ".join(argv_[1:]), logpath))
        t0 = time.monotonic()
        with open(logpath, "w") as logf:
            proc = subprocess.Popen(argv_, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, bufsize=1)
            try:
                for line in proc.stdout:
                    sys.stdout.write(line)
                    sys.stdout.flush()
                    logf.write(line)
                rc = proc.wait()
            except BaseException:
                proc.terminate()       # the child cleans up its own servers on SIGTERM
                try:
                    proc.wait(timeout=30)
                except subprocess.TimeoutExpired:
                    proc.kill()
                raise
        dt = time.monotonic() - t0
        rows = ", ".join("%s: %d rows" % (p.name, count_rows(p)) for p in outputs) or "manifest %s" % args.manifest
        line = "%-12s %s in %s; %s" % (step, "ok" if rc == 0 else "FAILED (exit %d)" % rc, bl.human_secs(dt), rows)
        summary.append(line)
        bl.log("== " + line)
    bl.log("\nbench_all summary (%s total):" % bl.human_secs(time.monotonic() - t_all))
    for line in summary:
        bl.log("  " + line)
    return 1 if any("FAILED" in s for s in summary) else 0


if __name__ == "__main__":
    bl.run_main(main)
