"""Scripts (issue 13): EVALSHA throughput and the script cache's memory,
ferry vs redis-server, side by side in one run.

What:
  1. EVALSHA with redis-benchmark (C=50, 100k random keys, P=1 and P=100),
     --trials times, the servers alternating (which one goes first flips
     every trial), each on a fresh server with the script loaded:
       ratelimit  INCR of KEYS[1], EXPIRE 60 when it was created (a fixed-
                  window rate limiter)
       lock_release  redis-py's Lock release script (GET, compare the token
                  in ARGV[1], DEL when it matches)
     recorded: rps, p50 and p99 (ms).
  2. Script cache: a fresh server loads 10k distinct scripts (SCRIPT LOAD,
     pipelined); recorded: RSS growth and INFO's used_memory_lua growth and
     used_memory_scripts, per script.
Output: <out>/scripting.csv (one row per measurement, the long format
analysis/persistence.py reads); the medians, ratios and the issue's targets
are printed and made into results/tables/scripting__scripting.md by
`make reproduce`.

Why: issue 13 asks for >= 1.2x redis-server at P=1 and >= 2x at P=100 for
these two scripts, and for the cache's memory against redis-server's.
"""
from __future__ import annotations

import argparse
import socket
import sys
import time
from pathlib import Path

import benchlib as bl
import manifest

sys.path.insert(0, str(bl.REPO))
from analysis import persistence as long_table  # noqa: E402  (medians, ratios, targets)

COLUMNS = ["experiment", "dataset", "server", "trial", "metric", "value", "unit", "note"]
SCRIPTS = {
    "ratelimit": ("local c = redis.call('incr', KEYS[1]) "
                  "if c == 1 then redis.call('expire', KEYS[1], 60) end return c", []),
    "lock_release": ("local token = redis.call('get', KEYS[1]) "
                     "if not token or token ~= ARGV[1] then return 0 end "
                     "redis.call('del', KEYS[1]) return 1", ["token-1"]),
}


def evalsha_run(port, sha, extra, pipeline, requests, keyspace) -> dict:
    argv = [bl.client_binary("redis-benchmark"), "-h", "127.0.0.1", "-p", str(port), "-c", "50", "-n",
            str(requests), "-P", str(pipeline), "-r", str(keyspace), "--csv", "EVALSHA", sha, "1",
            "key:__rand_int__", *extra]
    res = bl.run_process(argv, 600, "redis-benchmark")
    rows = bl.parse_bench_csv(res["stdout"])
    if res["returncode"] != 0 or not rows:
        raise RuntimeError("redis-benchmark failed: %s %s" % (res["stdout"][-300:], res["stderr"][-300:]))
    return rows[-1]


def pipeline_cmds(port, cmds, timeout=120):
    """Send RESP commands in one go; return the raw replies (one line each:
    SCRIPT LOAD answers a 40-byte bulk)."""
    data = b"".join(bl.encode_command(*c) for c in cmds)
    want = len(cmds)
    with socket.create_connection(("127.0.0.1", port), timeout=timeout) as s:
        s.sendall(data)
        buf = b""
        while buf.count(b"\r\n") < 2 * want:
            chunk = s.recv(1 << 16)
            if not chunk:
                raise RuntimeError("connection closed")
            buf += chunk
    if b"-" in buf[:1] or b"\r\n-" in buf:
        raise RuntimeError("an error reply while loading scripts: %r" % buf[:200])
    return buf


def info_int(port, section, name) -> int:
    for line in bl.query(port, "INFO", section).decode().split("\r\n"):
        if line.startswith(name + ":"):
            return int(line.split(":", 1)[1])
    raise RuntimeError("no %s in INFO %s" % (name, section))


def throughput(args, binaries, rec) -> None:
    for trial in range(1, args.trials + 1):
        order = ["ferry", "redis"] if trial % 2 else ["redis", "ferry"]
        for kind in order:
            with bl.Server(kind, binaries[kind], pin=False) as srv:
                for name, (body, extra) in SCRIPTS.items():
                    sha = bl.query(srv.port, "SCRIPT", "LOAD", body).decode()
                    for p in (1, 100):
                        n = args.requests * (10 if p == 100 else 1)
                        row = evalsha_run(srv.port, sha, extra, p, n, args.keyspace)
                        for metric, key, unit in (("rps", "rps", "req/s"), ("p50", "p50_ms", "ms"),
                                                  ("p99", "p99_ms", "ms")):
                            rec.append(dict(experiment="evalsha", dataset=name, server=kind, trial=trial,
                                            metric="%s_p%d" % (metric, p), value=row[key], unit=unit, note=""))
                        bl.log("scripting: %-5s %-12s P=%-3d %10.0f rps p99 %.3f ms"
                               % (kind, name, p, row["rps"], row["p99_ms"]))


def cache_memory(args, binaries, rec) -> None:
    for kind in ("ferry", "redis"):
        with bl.Server(kind, binaries[kind], pin=False) as srv:
            bl.query(srv.port, "EVAL", "return 1", "0")   # the Lua state exists before the baseline
            time.sleep(0.2)
            rss0, lua0 = srv.rss_bytes(), info_int(srv.port, "memory", "used_memory_lua")
            for start in range(0, args.scripts, 1000):
                pipeline_cmds(srv.port, [("SCRIPT", "LOAD", "return 'script number %d'" % i)
                                         for i in range(start, min(args.scripts, start + 1000))])
            time.sleep(0.2)
            rss1, lua1 = srv.rss_bytes(), info_int(srv.port, "memory", "used_memory_lua")
            cached = info_int(srv.port, "memory", "number_of_cached_scripts")
            if cached != args.scripts + 1:
                raise RuntimeError("%s caches %d scripts, expected %d" % (kind, cached, args.scripts + 1))
            n = float(args.scripts)
            for metric, v in (("rss_bytes_per_script", (rss1 - rss0) / n),
                              ("lua_bytes_per_script", (lua1 - lua0) / n)):
                rec.append(dict(experiment="cache", dataset="%d scripts" % args.scripts, server=kind, trial=1,
                                metric=metric, value="%.1f" % v, unit="B", note=""))
            bl.log("scripting: %-5s cache of %d scripts: RSS +%.0f B/script, Lua +%.0f B/script"
                   % (kind, args.scripts, (rss1 - rss0) / n, (lua1 - lua0) / n))


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--trials", type=int, default=3)
    ap.add_argument("--requests", type=int, default=200000, help="requests at P=1 (x10 at P=100)")
    ap.add_argument("--keyspace", type=int, default=100000)
    ap.add_argument("--scripts", type=int, default=10000)
    ap.add_argument("--quick", action="store_true", help="smoke mode: 1 trial, 20000 requests, 1000 scripts")
    ap.add_argument("--out", default=str(bl.REPO / "results" / "bench"), help="output directory")
    ap.add_argument("--ferry", default=None)
    ap.add_argument("--redis", default=None)
    ap.add_argument("--no-pin", action="store_true", help="accepted for bench_all; servers are never pinned here")
    args = ap.parse_args(argv)
    if args.quick:
        args.trials, args.requests, args.scripts = 1, 20000, 1000
    bl.install_signal_handlers()
    binaries = {s: bl.server_binary(s, getattr(args, s)) for s in ("ferry", "redis")}
    started = bl.utc_now()
    rows = []
    throughput(args, binaries, rows)
    cache_memory(args, binaries, rows)
    out = Path(args.out)
    bl.write_csv(out / "scripting.csv", COLUMNS, rows)
    bl.record_window(out, "scripting", started, bl.utc_now(), pinning=bl.pinning_description(False),
                     trials=args.trials, git_sha=bl.git_sha(), cpu_model=manifest.cpu_model())
    typed = [dict(r, value=float(r["value"])) for r in rows]
    for r in long_table.summary(typed):
        print("%-8s %-14s %-24s ferry %10.4g  redis %10.4g  ratio %7.3f  target %-7s %s"
              % (r["experiment"], r["dataset"], r["metric"], r["ferry"] or 0, r["redis"] or 0, r["ratio"] or 0,
                 r["target"], r["met"]))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
