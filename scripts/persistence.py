"""Snapshots (issue 12): load time, dump size and BGSAVE under load, ferry
vs redis-server, side by side in one run.

What:
  datasets (the same bytes on both servers, from one seeded generator):
    strings      N keys key:%012d (redis-benchmark's key names), 64 random
                 bytes each (random so LZF cannot shrink them)
    collections  about N elements: three big keys (a hash, a set, a sorted
                 set of N/4 elements each: hashtable / skiplist encodings)
                 and N/4 elements in small collections of 33 (listpack /
                 intset-free string sets), a third of each type
  1. fill + SAVE, alternating which server goes first: the size of the
     dump.rdb each server writes, and the SAVE's time.
  2. load: --trials times, alternating, each server starts on its own file;
     the load time is the "DB loaded from disk: X seconds" both log, and the
     wall time from spawn to the first +PONG; DBSIZE is checked. ferry also
     loads redis-server's file (the "cross" row), to separate the loader
     from the file.
  3. BGSAVE under a write load (strings dataset), per trial and server:
     a quiet BGSAVE first (its duration sizes the loaded run); then
     redis-benchmark -t set -c 50 -P 16 -r N -d 64 runs twice: once without
     a save (baseline p99) and once with BGSAVE sent 0.5 s after it starts,
     with as many requests as last about 0.5 s + 2x the quiet save + 0.5 s
     at the rate the baseline reached. Every 10 ms the memory of the server
     and its children is sampled as PSS (smaps_rollup: shared pages counted
     once), so the peak growth over the pre-save PSS is the memory the save
     really costs (copy-on-write + the child's own). Also recorded: the
     save's duration under load, the share of the benchmark run it covered,
     INFO's rdb_last_cow_size and latest_fork_usec.
Output: <out>/persistence.csv (one row per measurement); the medians per
server, ferry/redis ratios and the issue's targets are printed (and made
into results/tables/persistence__persistence.md by `make reproduce`,
analysis/persistence.py). Servers are not pinned: the BGSAVE child, the parent
and the load generator share the machine's cores as they would in use.

Why: issue 12 asks ferry to load in <= 0.5x redis-server's time, to grow
by <= 0.5x of redis-server's memory during a BGSAVE with a writer p99 no
worse, and to write a file within 5% of redis-server's size. Fork (what
both servers do) or a fork-less snapshot is decided by these figures.
"""
from __future__ import annotations

import argparse
import os
import random
import re
import shutil
import socket
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

import benchlib as bl
import manifest

sys.path.insert(0, str(bl.REPO))
from analysis import persistence as persistence_table  # noqa: E402  (the medians and targets, one definition)

COLUMNS = ["experiment", "dataset", "server", "trial", "metric", "value", "unit", "note"]
LOADED_RE = re.compile(rb"DB loaded from disk: ([0-9.]+) seconds")


# --------------------------------------------------------------------- fill
def _bulk(words) -> bytes:
    return b"*%d\r\n" % len(words) + b"".join(b"$%d\r\n%s\r\n" % (len(w), w) for w in words)


def _send_checked(sock, cmds, want_prefix: bytes, buf: bytearray) -> None:
    sock.sendall(b"".join(cmds))
    got = 0
    while got < len(cmds):
        nl = buf.find(b"\r\n")
        if nl < 0:
            chunk = sock.recv(1 << 16)
            if not chunk:
                raise RuntimeError("connection closed during fill")
            buf += chunk
            continue
        line = bytes(buf[:nl])
        del buf[:nl + 2]
        if not line.startswith(want_prefix):
            raise RuntimeError("fill: unexpected reply %r" % line[:200])
        got += 1


def commands_strings(n: int, seed: int):
    rng = random.Random(seed)
    vals = rng.randbytes(64 * n)
    for i in range(n):
        yield _bulk([b"SET", bl.KEY_FMT.encode() % i, vals[64 * i:64 * i + 64]]), b"+OK"


def commands_collections(n: int, seed: int):
    rng = random.Random(seed)
    big = n // 4
    for kind in ("hash", "set", "zset"):
        for start in range(0, big, 100):
            yield _elements(kind, b"big:" + kind.encode(), start, min(big, start + 100), rng), b":"
    small = 33
    for j in range(big // small):
        kind = ("hash", "set", "zset")[j % 3]
        yield _elements(kind, b"small:%d" % j, 0, small, rng), b":"


def _elements(kind: str, key: bytes, start: int, end: int, rng: random.Random) -> bytes:
    if kind == "hash":
        words = [b"HSET", key]
        for i in range(start, end):
            words += [b"field:%d" % i, rng.randbytes(16).hex().encode()]
    elif kind == "set":
        words = [b"SADD", key] + [b"member:%d" % i for i in range(start, end)]
    else:
        words = [b"ZADD", key]
        for i in range(start, end):
            words += [b"%.6f" % rng.uniform(0, 1e6), b"member:%d" % i]
    return _bulk(words)


def fill(port: int, gen) -> float:
    t0 = time.monotonic()
    buf = bytearray()
    with socket.create_connection(("127.0.0.1", port), timeout=600) as s:
        batch, want = [], None
        for cmd, prefix in gen:
            if want is not None and prefix != want:
                _send_checked(s, batch, want, buf)
                batch = []
            want = prefix
            batch.append(cmd)
            if len(batch) >= 1000:
                _send_checked(s, batch, want, buf)
                batch = []
        if batch:
            _send_checked(s, batch, want, buf)
    return time.monotonic() - t0


# --------------------------------------------------------------------- probes
def info_field(port: int, section: str, name: str) -> str:
    raw = bl.query(port, "INFO", section, timeout=60).decode("utf-8", "replace")
    for line in raw.split("\r\n"):
        if line.startswith(name + ":"):
            return line.split(":", 1)[1]
    raise RuntimeError("no %s in INFO %s" % (name, section))


def server_pid(srv) -> int:
    """The server process itself (benchlib may exec it through taskset: same pid)."""
    return srv.proc.pid


# --------------------------------------------------------------------- experiments
class Recorder:
    def __init__(self):
        self.rows = []

    def add(self, experiment, dataset, server, trial, metric, value, unit, note=""):
        self.rows.append(dict(experiment=experiment, dataset=dataset, server=server, trial=trial, metric=metric,
                              value=value, unit=unit, note=note))
        bl.log("persistence: %-6s %-11s %-5s #%s %-22s %s %s %s"
               % (experiment, dataset, server, trial, metric, value, unit, note))


def make_files(args, binaries, datasets, rec, files_dir: Path) -> dict:
    """Each server fills each dataset and SAVEs; returns {(server, dataset): path}."""
    files = {}
    first = 0
    for ds in datasets:
        order = args.servers[first:] + args.servers[:first]
        first = (first + 1) % len(args.servers)
        for kind in order:
            with bl.Server(kind, binaries[kind], pin=False) as srv:
                gen = commands_strings(args.keys, args.seed) if ds == "strings" else \
                    commands_collections(args.keys, args.seed)
                secs = fill(srv.port, gen)
                t0 = time.monotonic()
                reply = bl.command(srv.port, "SAVE", timeout=600)
                if reply != b"+OK":
                    raise RuntimeError("%s SAVE: %r" % (kind, reply))
                save_s = time.monotonic() - t0
                keys = bl.dbsize(srv.port)
                src = Path(srv.workdir) / "dump.rdb"
                dst = files_dir / ("%s_%s.rdb" % (kind, ds))
                shutil.copyfile(src, dst)
                files[(kind, ds)] = dst
                rec.add("save", ds, kind, 0, "fill_s", "%.2f" % secs, "s")
                rec.add("save", ds, kind, 0, "keys", keys, "keys")
                rec.add("save", ds, kind, 0, "save_s", "%.3f" % save_s, "s", "foreground SAVE")
                rec.add("size", ds, kind, 0, "file_bytes", dst.stat().st_size, "B")
    return files


def load_once(kind, binary, path: Path, want_keys: int) -> tuple:
    d = tempfile.mkdtemp(prefix="ferry-bench-load-")
    try:
        shutil.copyfile(path, os.path.join(d, "dump.rdb"))
        t0 = time.monotonic()
        with bl.Server(kind, binary, pin=False, startup_timeout=600,
                       extra_args=["--dir", d, "--dbfilename", "dump.rdb"]) as srv:
            wall = time.monotonic() - t0
            keys = bl.dbsize(srv.port)
            if keys != want_keys:
                raise RuntimeError("%s loaded %d keys from %s, expected %d" % (kind, keys, path, want_keys))
            with open(srv.logpath, "rb") as f:
                m = LOADED_RE.search(f.read())
            if not m:
                raise RuntimeError("%s: no 'DB loaded from disk' line in its log" % kind)
            return float(m.group(1)), wall
    finally:
        shutil.rmtree(d, ignore_errors=True)


def load_trials(args, binaries, datasets, files, rec) -> None:
    want = {ds: int(next(r["value"] for r in rec.rows if r["metric"] == "keys" and r["dataset"] == ds))
            for ds in datasets}
    for trial in range(1, args.trials + 1):
        for ds in datasets:
            order = args.servers if trial % 2 else args.servers[::-1]
            runs = [(k, files[(k, ds)], "") for k in order]
            if "ferry" in args.servers and "redis" in args.servers:
                runs.append(("ferry", files[("redis", ds)], "cross"))
            for kind, path, note in runs:
                secs, wall = load_once(kind, binaries[kind], path, want[ds])
                metric = "load_s" if not note else "load_redis_file_s"
                rec.add("load", ds, kind, trial, metric, "%.3f" % secs, "s", note)
                rec.add("load", ds, kind, trial, metric.replace("load", "start_to_pong"), "%.3f" % wall, "s", note)


def run_benchmark(port: int, requests: int, keys: int) -> subprocess.Popen:
    argv = [bl.client_binary("redis-benchmark"), "-h", "127.0.0.1", "-p", str(port), "-c", "50", "-P", "16",
            "-t", "set", "-d", "64", "-r", str(keys), "-n", str(requests), "-q", "--csv"]
    return subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True, start_new_session=True)


def bench_result(proc: subprocess.Popen) -> dict:
    out, err = proc.communicate(timeout=600)
    rows = [r for r in bl.parse_bench_csv(out) if r["test"] == "SET"]
    if proc.returncode != 0 or not rows:
        raise RuntimeError("redis-benchmark failed: %s %s" % (out[-300:], err[-300:]))
    return rows[-1]


def wait_bgsave(port: int, pid: int, sample: bool) -> dict:
    """BGSAVE, then sample PSS of the server and its children every 10 ms
    until the save is over. Returns the peak PSS (kB) and the duration."""
    base = bl.pss_kb(pid)
    reply = bl.command(port, "BGSAVE")
    if not reply.startswith(b"+Background saving started"):
        raise RuntimeError("BGSAVE: %r" % reply)
    t0 = time.monotonic()
    peak = base
    seen_child = False
    while True:
        kids = bl.children(pid)
        seen_child = seen_child or bool(kids)
        if sample:
            peak = max(peak, bl.pss_kb(pid) + sum(bl.pss_kb(k) for k in kids))
        if seen_child and not kids:
            break
        if not seen_child and time.monotonic() - t0 > 2 and info_field(port, "persistence",
                                                                      "rdb_bgsave_in_progress") == "0":
            break   # a save too quick for the sampler to see its child
        time.sleep(0.01)
    secs = time.monotonic() - t0
    while info_field(port, "persistence", "rdb_bgsave_in_progress") != "0":
        time.sleep(0.01)
    if info_field(port, "persistence", "rdb_last_bgsave_status") != "ok":
        raise RuntimeError("BGSAVE failed")
    return {"base_kb": base, "peak_kb": peak, "secs": secs}


def bgsave_trial(kind, binary, path: Path, keys: int, trial: int, rec) -> None:
    d = tempfile.mkdtemp(prefix="ferry-bench-bgsave-")
    try:
        shutil.copyfile(path, os.path.join(d, "dump.rdb"))
        with bl.Server(kind, binary, pin=False, startup_timeout=600,
                       extra_args=["--dir", d, "--dbfilename", "dump.rdb"]) as srv:
            pid = server_pid(srv)
            quiet = wait_bgsave(srv.port, pid, sample=True)
            rec.add("bgsave", "strings", kind, trial, "quiet_save_s", "%.3f" % quiet["secs"], "s")
            rec.add("bgsave", "strings", kind, trial, "quiet_pss_growth_mb",
                    "%.1f" % ((quiet["peak_kb"] - quiet["base_kb"]) / 1024), "MB")
            base = bench_result(run_benchmark(srv.port, 1000000, keys))
            rps = float(base["rps"])
            rec.add("bgsave", "strings", kind, trial, "nosave_rps", "%.0f" % rps, "req/s")
            rec.add("bgsave", "strings", kind, trial, "nosave_p99_ms", base["p99_ms"], "ms")
            window = 0.5 + 2 * quiet["secs"] + 0.5
            proc = run_benchmark(srv.port, max(100000, int(rps * window)), keys)
            t_start = time.monotonic()
            time.sleep(0.5)
            res = {}
            sampler = threading.Thread(target=lambda: res.update(wait_bgsave(srv.port, pid, sample=True)))
            sampler.start()
            loaded = bench_result(proc)
            t_bench = time.monotonic() - t_start
            sampler.join()
            cow = int(info_field(srv.port, "persistence", "rdb_last_cow_size"))
            fork_us = int(info_field(srv.port, "stats", "latest_fork_usec"))
            covered = min(1.0, res["secs"] / t_bench) if t_bench > 0 else 0
            rec.add("bgsave", "strings", kind, trial, "save_rps", loaded["rps"], "req/s")
            rec.add("bgsave", "strings", kind, trial, "save_p99_ms", loaded["p99_ms"], "ms")
            rec.add("bgsave", "strings", kind, trial, "save_max_ms", loaded["max_ms"], "ms")
            rec.add("bgsave", "strings", kind, trial, "loaded_save_s", "%.3f" % res["secs"], "s",
                    "save covered %.0f%% of the %.1f s benchmark run" % (covered * 100, t_bench))
            rec.add("bgsave", "strings", kind, trial, "pre_save_pss_mb", "%.1f" % (res["base_kb"] / 1024), "MB")
            rec.add("bgsave", "strings", kind, trial, "pss_growth_mb",
                    "%.1f" % ((res["peak_kb"] - res["base_kb"]) / 1024), "MB")
            rec.add("bgsave", "strings", kind, trial, "rdb_last_cow_size_mb", "%.1f" % (cow / 1048576), "MB")
            rec.add("bgsave", "strings", kind, trial, "latest_fork_usec", fork_us, "us")
    finally:
        shutil.rmtree(d, ignore_errors=True)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--keys", type=int, default=1000000, help="keys / elements per dataset (default 1000000)")
    ap.add_argument("--trials", type=int, default=5, help="load trials per server (default 5; BGSAVE: 3)")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--quick", action="store_true", help="smoke mode: 20000 keys, 1 trial")
    ap.add_argument("--skip", default="", help="comma list of load,bgsave to skip")
    ap.add_argument("--out", default=str(bl.REPO / "results" / "bench"), help="output directory")
    ap.add_argument("--ferry", default=None, help="ferry-server binary")
    ap.add_argument("--redis", default=None, help="redis-server binary")
    ap.add_argument("--no-pin", action="store_true", help="accepted for bench_all; servers are never pinned here")
    args = ap.parse_args(argv)
    if args.quick:
        args.keys, args.trials = 20000, 1
    args.servers = ["ferry", "redis"]
    skip = {s.strip() for s in args.skip.split(",") if s.strip()}
    bl.install_signal_handlers()
    binaries = {s: bl.server_binary(s, getattr(args, s)) for s in args.servers}
    rec = Recorder()
    started = bl.utc_now()
    datasets = ["strings", "collections"]
    files_dir = Path(tempfile.mkdtemp(prefix="ferry-bench-rdb-"))
    try:
        files = make_files(args, binaries, datasets, rec, files_dir)
        if "load" not in skip:
            load_trials(args, binaries, datasets, files, rec)
        if "bgsave" not in skip:
            for trial in range(1, min(3, args.trials) + 1):
                order = args.servers if trial % 2 else args.servers[::-1]
                for kind in order:
                    bgsave_trial(kind, binaries[kind], files[(kind, "strings")], args.keys, trial, rec)
    finally:
        shutil.rmtree(files_dir, ignore_errors=True)
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    bl.write_csv(out / "persistence.csv", COLUMNS, rec.rows)
    bl.record_window(out, "persistence", started, bl.utc_now(), pinning=bl.pinning_description(False),
                     keys=args.keys, trials=args.trials, git_sha=bl.git_sha(), cpu_model=manifest.cpu_model())
    typed = [dict(r, value=float(r["value"])) for r in rec.rows]
    for r in persistence_table.summary(typed):
        print("%-7s %-11s %-26s ferry %10.4g  redis %10.4g  ratio %7.3f  target %-9s %s"
              % (r["experiment"], r["dataset"], r["metric"], r["ferry"] or 0, r["redis"] or 0, r["ratio"] or 0,
                 r["target"], r["met"]))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
