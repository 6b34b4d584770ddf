"""Append-only file: write throughput with fsync, start-up replay and
BGREWRITEAOF, ferry vs redis-server, side by side in one run.

What (every server fresh, in a fresh directory under --tmpdir, started with
--appendonly yes --auto-aof-rewrite-percentage 0 so that no automatic rewrite
moves the writes out of the incremental file mid-run):
  1. throughput: redis-benchmark -c 50 -r 100000 (3-byte values), SET and
     INCR as separate runs, P = 1, 16 and 100, appendfsync everysec and
     always; --trials times, the servers alternating (which one goes first
     flips every trial), a fresh server per run. Recorded: rps, p50 and p99
     (ms); the server's /proc/<pid>/io write_bytes (bytes sent to storage,
     counted when pages are dirtied: a page rewritten after each fsync
     counts again) and wchar (every write(), the sockets' replies included)
     before and after the run, divided by the requests. Then ONE extra run
     per (server, policy), SET at P=16 (a quarter of the requests), with `strace -f -c -e
     trace=fdatasync,fsync -p <pid>` attached to all the server's threads:
     fsync calls per second of the benchmark's wall time and requests per
     fsync (strace slows the server: these rows' rps are not comparable to
     the others; "unavailable" when strace cannot attach).
  2. replay: each server writes --keys distinct SETs (key:%012d, 16-byte
     values, one pipelined connection, appendfsync everysec) into its
     incremental AOF, then SHUTDOWN NOSAVE; --trials times, alternating, it
     restarts on the same directory: ready_s is the wall time from spawn
     until PING answers +PONG, INFO persistence shows loading:0 and DBSIZE
     is --keys; load_s is the "DB loaded from append only file" time both
     log. Each also loads a copy of the other's appendonlydir (ferry:
     *_redis_file_s, compared with redis-server on its own file; redis:
     *_ferry_file_s, a compatibility check).
  3. rewrite: a fresh server with DEBUG POPULATE --keys (key:N = value:N;
     --enable-debug-command yes on both), BGREWRITEAOF (RDB preamble, both
     servers' default), timed from the command until INFO shows
     aof_rewrite_in_progress:0 and aof_rewrite_scheduled:0 (status ok).
     Every 10 ms the server and its children are sampled: VmRSS of each
     (peak parent, peak child, peak sum: shared copy-on-write pages counted
     twice) and PSS summed (smaps_rollup: shared pages counted once).
Output: <out>/aof.csv (one row per measurement, the long format
analysis/persistence.py reads); the medians per server, ferry/redis ratios
and the issue's targets are printed (and made into
results/tables/aof__aof.md by `make reproduce`). Servers and client are not
pinned. A failed measurement is logged and skipped; the exit status is then 1.

Why: the AOF issue asks ferry for >= 4x redis-server's rps with everysec at
P=100, >= 1.2x with always at P=1 and >= 3x with always at P=100, and a
replay of 1M writes in <= 0.5x redis-server's time; bytes and fsyncs per
operation say where the difference comes from.
"""
from __future__ import annotations

import argparse
import math
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

import benchlib as bl
import manifest

sys.path.insert(0, str(bl.REPO))
from analysis import persistence as long_table  # noqa: E402  (the medians and targets, one definition)

COLUMNS = ["experiment", "dataset", "server", "trial", "metric", "value", "unit", "note"]
LOADED_RE = re.compile(rb"DB loaded from append only file: ([0-9.]+) seconds")
POLICIES = ("everysec", "always")
PIPELINES = (1, 16, 100)
TESTS = ("SET", "INCR")
REQUESTS = {1: 200000, 16: 2000000, 100: 5000000}    # 1.5-8 s per run here, either server
KEYSPACE = 100000
VALUE_BYTES = 16                                      # replay fill


# --------------------------------------------------------------------- probes
def info(port: int, section: str) -> dict:
    raw = bl.query(port, "INFO", section, timeout=60).decode("utf-8", "replace")
    return dict(line.split(":", 1) for line in raw.split("\r\n") if ":" in line and not line.startswith("#"))


def proc_io(pid: int) -> dict:
    out = {}
    with open("/proc/%d/io" % pid) as f:
        for line in f:
            k, v = line.split(":", 1)
            out[k.strip()] = int(v)
    return out


def aof_files(d: str) -> dict:
    """{'base': bytes, 'incr': bytes, 'newest_base': bytes} of <d>/appendonlydir."""
    sizes = {"base": 0, "incr": 0, "newest_base": 0}
    newest = -1.0
    ad = Path(d) / "appendonlydir"
    for p in ad.glob("*") if ad.is_dir() else []:
        st = p.stat()
        if ".base." in p.name:
            sizes["base"] += st.st_size
            if st.st_mtime > newest:
                newest, sizes["newest_base"] = st.st_mtime, st.st_size
        elif p.name.endswith(".incr.aof"):
            sizes["incr"] += st.st_size
    return sizes


# --------------------------------------------------------------------- servers
def aof_args(d: str, policy: str, debug: bool = False) -> list:
    a = ["--dir", d, "--appendonly", "yes", "--appendfsync", policy, "--auto-aof-rewrite-percentage", "0"]
    return a + (["--enable-debug-command", "yes"] if debug else [])


def shutdown_nosave(srv) -> None:
    try:
        bl.command(srv.port, "SHUTDOWN", "NOSAVE", timeout=120)
    except OSError:
        pass
    try:
        srv.proc.wait(timeout=120)
    except subprocess.TimeoutExpired:
        raise RuntimeError("%s did not exit after SHUTDOWN NOSAVE" % srv.kind) from None
    if srv.proc.returncode != 0:
        raise RuntimeError("%s exited with %s after SHUTDOWN NOSAVE:\n%s"
                           % (srv.kind, srv.proc.returncode, srv.log_tail()))


def check_aof_ok(srv) -> None:
    inf = info(srv.port, "persistence")
    if inf.get("aof_enabled") != "1" or inf.get("aof_last_write_status") != "ok":
        raise RuntimeError("%s: aof_enabled %s aof_last_write_status %s\n%s"
                           % (srv.kind, inf.get("aof_enabled"), inf.get("aof_last_write_status"), srv.log_tail()))


class Recorder:
    def __init__(self):
        self.rows = []
        self.failures = []

    def add(self, experiment, dataset, server, trial, metric, value, unit, note=""):
        self.rows.append(dict(experiment=experiment, dataset=dataset, server=server, trial=trial, metric=metric,
                              value=value, unit=unit, note=note))
        bl.log("aof: %-12s %-6s %-5s #%s %-26s %s %s %s"
               % (experiment, dataset, server, trial, metric, value, unit, note))

    def guard(self, label, fn, *a):
        """Run one measurement; a failure is logged and kept, the run goes on."""
        try:
            return fn(*a)
        except (RuntimeError, OSError, subprocess.SubprocessError) as e:
            bl.log("aof: FAILED %s: %s" % (label, e))
            self.failures.append("%s: %s" % (label, str(e).splitlines()[0] if str(e) else type(e).__name__))
            return None


# --------------------------------------------------------------------- 1. throughput
def bench(port: int, test: str, pipeline: int, requests: int) -> dict:
    return bl.run_client("redis-benchmark", bl.client_binary("redis-benchmark"), port, test, 50, pipeline,
                         requests, 3, KEYSPACE, pin=False, timeout=600)


def throughput_once(args, kind, binary, policy, pipeline, test, trial, rec) -> None:
    d = tempfile.mkdtemp(prefix="ferry-bench-aof-", dir=args.tmpdir)
    try:
        with bl.Server(kind, binary, pin=False, extra_args=aof_args(d, policy)) as srv:
            n = args.requests[pipeline]
            io0 = proc_io(srv.pid)
            row = bench(srv.port, test, pipeline, n)
            io1 = proc_io(srv.pid)
            check_aof_ok(srv)
            exp, sfx = "aof_" + policy, "_p%d" % pipeline
            rec.add(exp, test, kind, trial, "rps" + sfx, "%.0f" % row["rps"], "req/s")
            rec.add(exp, test, kind, trial, "p50_ms" + sfx, "%.3f" % row["p50_ms"], "ms")
            rec.add(exp, test, kind, trial, "p99_ms" + sfx, "%.3f" % row["p99_ms"], "ms")
            rec.add(exp, test, kind, trial, "write_bytes_per_op" + sfx,
                    "%.1f" % ((io1["write_bytes"] - io0["write_bytes"]) / n), "B",
                    "/proc/pid/io write_bytes (storage; a page dirtied again after an fsync counts again)")
            rec.add(exp, test, kind, trial, "wchar_per_op" + sfx, "%.1f" % ((io1["wchar"] - io0["wchar"]) / n),
                    "B", "/proc/pid/io wchar (all write() calls, replies to clients included)")
    finally:
        shutil.rmtree(d, ignore_errors=True)


def strace_run(args, kind, binary, policy, rec) -> None:
    """One SET P=16 run with strace -c attached: fsyncs per second."""
    exp, n, sfx = "aof_" + policy, args.requests[16] // 4, "_p16_strace"
    note = "one run under strace -f -c (slows the server)"
    strace = bl.which("strace")
    if not strace:
        for m, u in (("fsync_per_s", "1/s"), ("ops_per_fsync", "req")):
            rec.add(exp, "SET", kind, 0, m + sfx, "unavailable", u, "strace not installed")
        return
    d = tempfile.mkdtemp(prefix="ferry-bench-aof-", dir=args.tmpdir)
    try:
        with bl.Server(kind, binary, pin=False, extra_args=aof_args(d, policy)) as srv:
            tr = subprocess.Popen([strace, "-f", "-c", "-e", "trace=fdatasync,fsync", "-p", str(srv.pid)],
                                  stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                                  text=True, start_new_session=True)
            lines, attached = [], threading.Event()

            def reader():
                for line in tr.stderr:
                    lines.append(line)
                    if "attached" in line:
                        attached.set()
                attached.set()
            th = threading.Thread(target=reader, daemon=True)
            th.start()
            attached.wait(15)
            if tr.poll() is not None or not any("attached" in ln for ln in lines):
                if tr.poll() is None:
                    os.killpg(tr.pid, signal.SIGKILL)
                tr.wait()
                why = (" ".join(ln.strip() for ln in lines) or "strace did not attach")[:200]
                for m, u in (("fsync_per_s", "1/s"), ("ops_per_fsync", "req")):
                    rec.add(exp, "SET", kind, 0, m + sfx, "unavailable", u, why)
                return
            try:
                row = bench(srv.port, "SET", 16, n)
            finally:
                tr.send_signal(signal.SIGINT)
                try:
                    tr.wait(timeout=30)
                except subprocess.TimeoutExpired:
                    os.killpg(tr.pid, signal.SIGKILL)
                    tr.wait()
                th.join(10)
            calls, table = 0, False
            for ln in lines:
                tok = ln.split()
                if tok[:1] == ["%"]:
                    table = True
                if len(tok) >= 5 and tok[-1] in ("fdatasync", "fsync"):
                    calls += int(tok[3])
            if not table and tr.returncode not in (0, -signal.SIGINT, 128 + signal.SIGINT):
                raise RuntimeError("%s: strace exited %s without a summary: %s"
                                   % (kind, tr.returncode, "".join(lines)[-300:]))
            # strace -c prints no table at all when no traced call happened: 0 calls
            rec.add(exp, "SET", kind, 0, "rps" + sfx, "%.0f" % row["rps"], "req/s", note)
            rec.add(exp, "SET", kind, 0, "fsync_per_s" + sfx, "%.1f" % (calls / row["wall_s"]), "1/s",
                    "%s: %d fdatasync+fsync calls in %.2f s of benchmark" % (note, calls, row["wall_s"]))
            rec.add(exp, "SET", kind, 0, "ops_per_fsync" + sfx,
                    "%.1f" % (n / calls) if calls else "unavailable", "req", note if calls else "no fsync seen")
    finally:
        shutil.rmtree(d, ignore_errors=True)


def throughput(args, binaries, rec) -> None:
    for trial in range(1, args.trials + 1):
        order = args.servers if trial % 2 else args.servers[::-1]
        for policy in POLICIES:
            for p in PIPELINES:
                for test in TESTS:
                    for kind in order:
                        rec.guard("throughput %s %s P=%d %s #%d" % (kind, policy, p, test, trial), throughput_once,
                                  args, kind, binaries[kind], policy, p, test, trial, rec)
    for policy in POLICIES:
        for kind in args.servers:
            rec.guard("strace %s %s" % (kind, policy), strace_run, args, kind, binaries[kind], policy, rec)


# --------------------------------------------------------------------- 2. replay
def write_aof(args, kind, binary, rec) -> str:
    """A directory whose incremental AOF holds args.keys distinct SETs."""
    d = tempfile.mkdtemp(prefix="ferry-bench-aof-replay-%s-" % kind, dir=args.tmpdir)
    with bl.Server(kind, binary, pin=False, extra_args=aof_args(d, "everysec")) as srv:
        secs = bl.fill_keys(srv.port, args.keys, VALUE_BYTES, timeout=600)
        if bl.dbsize(srv.port) != args.keys:
            raise RuntimeError("%s holds %d keys after the fill" % (kind, bl.dbsize(srv.port)))
        check_aof_ok(srv)
        if info(srv.port, "persistence").get("aof_rewrites", "0") != "0":
            raise RuntimeError("%s rewrote its AOF during the fill" % kind)
        shutdown_nosave(srv)
    sizes = aof_files(d)
    rec.add("aof_replay", "strings", kind, 0, "fill_s", "%.2f" % secs, "s",
            "%d SETs, one pipelined connection, everysec" % args.keys)
    rec.add("aof_replay", "strings", kind, 0, "incr_file_bytes", sizes["incr"], "B")
    rec.add("aof_replay", "strings", kind, 0, "base_file_bytes", sizes["base"], "B", "empty base: no rewrite")
    return d


def replay_once(args, kind, binary, d, keys) -> tuple:
    t0 = time.monotonic()
    with bl.Server(kind, binary, pin=False, startup_timeout=600, extra_args=aof_args(d, "everysec")) as srv:
        while info(srv.port, "persistence").get("loading") != "0":
            time.sleep(0.005)
        got = bl.dbsize(srv.port)
        wall = time.monotonic() - t0
        if got != keys:
            raise RuntimeError("%s loaded %d keys from %s, expected %d" % (kind, got, d, keys))
        with open(srv.logpath, "rb") as f:
            m = LOADED_RE.search(f.read())
        shutdown_nosave(srv)
    if not m:
        raise RuntimeError("%s: no 'DB loaded from append only file' line in its log" % kind)
    return float(m.group(1)), wall


def replay_cross(args, kind, binary, src, keys) -> tuple:
    d = tempfile.mkdtemp(prefix="ferry-bench-aof-cross-", dir=args.tmpdir)
    try:
        shutil.copytree(os.path.join(src, "appendonlydir"), os.path.join(d, "appendonlydir"))
        return replay_once(args, kind, binary, d, keys)
    finally:
        shutil.rmtree(d, ignore_errors=True)


def replay(args, binaries, rec) -> None:
    dirs = {}
    try:
        for kind in args.servers:
            d = rec.guard("replay fill %s" % kind, write_aof, args, kind, binaries[kind], rec)
            if d:
                dirs[kind] = d
        for trial in range(1, args.trials + 1):
            order = [k for k in (args.servers if trial % 2 else args.servers[::-1]) if k in dirs]
            for kind in order:
                r = rec.guard("replay %s #%d" % (kind, trial), replay_once, args, kind, binaries[kind], dirs[kind],
                              args.keys)
                if r:
                    rec.add("aof_replay", "strings", kind, trial, "load_s", "%.3f" % r[0], "s", "server's log")
                    rec.add("aof_replay", "strings", kind, trial, "ready_s", "%.3f" % r[1], "s",
                            "spawn to PONG + loading:0 + DBSIZE right")
            for kind, other in (("ferry", "redis"), ("redis", "ferry")):
                if kind not in dirs or other not in dirs:
                    continue
                r = rec.guard("replay %s on %s's file #%d" % (kind, other, trial), replay_cross, args, kind,
                              binaries[kind], dirs[other], args.keys)
                if r:
                    note = "%s loading %s's appendonlydir" % (kind, other)
                    rec.add("aof_replay", "strings", kind, trial, "load_%s_file_s" % other, "%.3f" % r[0], "s", note)
                    rec.add("aof_replay", "strings", kind, trial, "ready_%s_file_s" % other, "%.3f" % r[1], "s",
                            note)
    finally:
        for d in dirs.values():
            shutil.rmtree(d, ignore_errors=True)


# --------------------------------------------------------------------- 3. rewrite
def rewrite_once(args, kind, binary, trial, rec) -> None:
    d = tempfile.mkdtemp(prefix="ferry-bench-aof-rw-", dir=args.tmpdir)
    try:
        with bl.Server(kind, binary, pin=False, startup_timeout=60,
                       extra_args=aof_args(d, "everysec", debug=True)) as srv:
            pid = srv.pid
            t0 = time.monotonic()
            reply = bl.command(srv.port, "DEBUG", "POPULATE", args.keys, timeout=600)
            if reply != b"+OK" or bl.dbsize(srv.port) != args.keys:
                raise RuntimeError("%s DEBUG POPULATE: %r" % (kind, reply))
            populate_s = time.monotonic() - t0
            time.sleep(0.2)
            base_rss, base_pss = bl.rss_kb(pid), bl.pss_kb(pid)
            peak = {"parent": base_rss, "child": 0, "sum": base_rss, "pss": base_pss}
            t0 = time.monotonic()
            reply = bl.command(srv.port, "BGREWRITEAOF", timeout=60)
            if not reply.startswith(b"+Background append only file rewriting"):
                raise RuntimeError("%s BGREWRITEAOF: %r" % (kind, reply))
            seen = False
            while True:
                kids = bl.children(pid)
                prss = bl.rss_kb(pid)
                crss = [bl.rss_kb(k) for k in kids]
                peak["parent"] = max(peak["parent"], prss)
                peak["child"] = max([peak["child"]] + crss)
                peak["sum"] = max(peak["sum"], prss + sum(crss))
                peak["pss"] = max(peak["pss"], bl.pss_kb(pid) + sum(bl.pss_kb(k) for k in kids))
                inf = info(srv.port, "persistence")
                busy = inf.get("aof_rewrite_in_progress") == "1" or inf.get("aof_rewrite_scheduled") == "1"
                seen = seen or busy or bool(kids)
                if seen and not busy:
                    break
                if not seen and time.monotonic() - t0 > 5:
                    raise RuntimeError("%s: no rewrite seen within 5 s" % kind)
                if time.monotonic() - t0 > 600:
                    raise RuntimeError("%s: rewrite still running after 600 s" % kind)
                time.sleep(0.01)
            secs = time.monotonic() - t0
            if inf.get("aof_last_bgrewrite_status") != "ok":
                raise RuntimeError("%s: aof_last_bgrewrite_status %s\n%s"
                                   % (kind, inf.get("aof_last_bgrewrite_status"), srv.log_tail()))
            cow = int(inf.get("aof_last_cow_size", "0"))
            sizes = aof_files(d)
            if bl.dbsize(srv.port) != args.keys:
                raise RuntimeError("%s lost keys in the rewrite" % kind)
    finally:
        shutil.rmtree(d, ignore_errors=True)
    mb = 1024.0
    ds = "populate"
    rec.add("aof_rewrite", ds, kind, trial, "populate_s", "%.3f" % populate_s, "s")
    rec.add("aof_rewrite", ds, kind, trial, "rewrite_s", "%.3f" % secs, "s",
            "BGREWRITEAOF to aof_rewrite_in_progress:0 (10 ms polling)")
    rec.add("aof_rewrite", ds, kind, trial, "base_file_bytes", sizes["newest_base"], "B", "RDB preamble")
    rec.add("aof_rewrite", ds, kind, trial, "pre_rewrite_rss_mb", "%.1f" % (base_rss / mb), "MB")
    rec.add("aof_rewrite", ds, kind, trial, "peak_parent_rss_mb", "%.1f" % (peak["parent"] / mb), "MB")
    rec.add("aof_rewrite", ds, kind, trial, "peak_child_rss_mb", "%.1f" % (peak["child"] / mb), "MB")
    rec.add("aof_rewrite", ds, kind, trial, "peak_sum_rss_mb", "%.1f" % (peak["sum"] / mb), "MB",
            "parent + children VmRSS (shared pages counted twice)")
    rec.add("aof_rewrite", ds, kind, trial, "pss_growth_mb", "%.1f" % ((peak["pss"] - base_pss) / mb), "MB",
            "peak PSS of parent + children over the pre-rewrite PSS")
    rec.add("aof_rewrite", ds, kind, trial, "aof_last_cow_size_mb", "%.1f" % (cow / 1048576.0), "MB")


def rewrite(args, binaries, rec) -> None:
    for trial in range(1, args.trials + 1):
        for kind in (args.servers if trial % 2 else args.servers[::-1]):
            rec.guard("rewrite %s #%d" % (kind, trial), rewrite_once, args, kind, binaries[kind], trial, rec)


# --------------------------------------------------------------------- main
def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--trials", type=int, default=3, help="trials per measurement (default 3)")
    ap.add_argument("--keys", type=int, default=1000000, help="writes replayed / keys rewritten (default 1000000)")
    ap.add_argument("--scale", type=float, default=1.0,
                    help="multiplies the throughput runs' requests (P=1/16/100: %s)"
                    % "/".join(str(REQUESTS[p]) for p in PIPELINES))
    ap.add_argument("--quick", action="store_true", help="smoke mode: 1 trial, 20000 keys, requests / 20")
    ap.add_argument("--skip", default="", help="comma list of throughput,replay,rewrite to skip")
    ap.add_argument("--tmpdir", default=tempfile.gettempdir(),
                    help="where both servers' directories are made (default %(default)s)")
    ap.add_argument("--out", default=str(bl.REPO / "results" / "bench"), help="output directory")
    ap.add_argument("--ferry", default=None, help="ferry-server binary")
    ap.add_argument("--redis", default=None, help="redis-server binary")
    ap.add_argument("--no-pin", action="store_true", help="accepted for bench_all; servers are never pinned here")
    args = ap.parse_args(argv)
    if args.quick:
        args.trials, args.keys, args.scale = 1, 20000, args.scale / 20
    args.requests = {p: max(1000, int(n * args.scale)) for p, n in REQUESTS.items()}
    args.servers = ["ferry", "redis"]
    skip = {s.strip() for s in args.skip.split(",") if s.strip()}
    bl.install_signal_handlers()
    binaries = {s: bl.server_binary(s, getattr(args, s)) for s in args.servers}
    if not bl.client_binary("redis-benchmark"):
        raise SystemExit("redis-benchmark not found (apt-get install -y redis-tools)")
    t_start = time.monotonic()
    # Measure a private copy of ferry-server: a rebuild during the run (make test
    # on the same tree) would otherwise mix two binaries' numbers.
    snap_dir = tempfile.mkdtemp(prefix="ferry-bench-aof-bin-", dir=args.tmpdir)
    source_ferry = binaries["ferry"]
    binaries["ferry"] = shutil.copy2(source_ferry, os.path.join(snap_dir, "ferry-server"))
    rec = Recorder()
    started, load0, sha0 = bl.utc_now(), os.getloadavg(), bl.git_sha()   # the tree the copy was built from
    digests = {s: manifest.sha256(Path(b)) for s, b in binaries.items()}
    try:
        if "throughput" not in skip:
            throughput(args, binaries, rec)
        if "replay" not in skip:
            replay(args, binaries, rec)
        if "rewrite" not in skip:
            rewrite(args, binaries, rec)
    finally:
        out = Path(args.out)
        out.mkdir(parents=True, exist_ok=True)
        bl.write_csv(out / "aof.csv", COLUMNS, rec.rows)
        shutil.rmtree(snap_dir, ignore_errors=True)
    if manifest.sha256(Path(source_ferry)) != digests["ferry"]:
        bl.log("aof: note: %s was rebuilt during the run; the numbers are of the copy taken at the start "
               "(sha256 %s)" % (source_ferry, digests["ferry"][:16]))
    bl.record_window(out, "aof", started, bl.utc_now(), pinning=bl.pinning_description(False),
                     keys=args.keys, trials=args.trials, requests=args.requests, tmpdir=args.tmpdir,
                     loadavg_start=[round(x, 2) for x in load0], loadavg_end=[round(x, 2) for x in os.getloadavg()],
                     binary_sha256={s: d[:16] for s, d in digests.items()},
                     git_sha=sha0, cpu_model=manifest.cpu_model())

    def num(v):
        try:
            return float(v)
        except ValueError:
            return math.nan
    typed = [dict(r, value=num(r["value"])) for r in rec.rows]
    for r in long_table.summary(typed):
        print("%-12s %-8s %-26s ferry %10.4g  redis %10.4g  ratio %7.3f  target %-7s %s"
              % (r["experiment"], r["dataset"], r["metric"], r["ferry"] if r["ferry"] is not None else math.nan,
                 r["redis"] if r["redis"] is not None else math.nan,
                 r["ratio"] if r["ratio"] is not None else math.nan, r["target"], r["met"]))
    return bl.report_runs("aof", len(rec.rows), out / "aof.csv", t_start, rec.failures)


if __name__ == "__main__":
    bl.run_main(main)
