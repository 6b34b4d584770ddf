"""The value-size axis: GET and SET from 64 B to 64 KB, P = 1, 16, 100 (issue 19).

What: for every point (test, value size, pipeline depth P) of --tests
(default GET, SET) x --sizes (default 64, 1024, 4096, 16384, 65536 bytes) x
--pipelines (default 1, 16, 100), at C=50 with build/ferry-bench as the
client, runs three servers in alternating rounds (default 5; in round r the
server order is rotated by r):
  redis         redis-server (Debian's 7.0.15), no persistence
  ferry         build/ferry-server, default configuration
  null-epoll    build/ferry-null-server --io epoll --value-size <size>: GET
                answered with a bulk of <size> bytes (from 16 KB on written
                by writev from its one encoded copy, as ferry sends big
                values from their own memory), SET with +OK, no keyspace:
                the most any server can do here (the ceiling); its sockets
                get ferry's tcp-rcvbuf receive buffer, as ferry's do
(--servers takes any of scripts/ceiling.py's servers.) Each run is
scripts/ceiling.py's measure_clean(): a fresh server pinned to CPU 0, for GET
the keyspace preloaded with values of the size, one ferry-bench run pinned
to CPU 1, the server's CPU time over exactly that run, a run disturbed by
other processes repeated (--max-foreign, --retries).

The client's TCP congestion control: ferry-bench's sockets use cubic
(--client-congestion; '' leaves the system's), Linux's and Debian's
default, whatever net.ipv4.tcp_congestion_control says, and the column
client_cc records it. On this VM the system's is bbr, and BBR's model of a
loopback path (a round trip of a few microseconds) holds ferry-bench's
unacknowledged bytes per connection to 16-28 segments, 1-2 MB. A
100-request batch of 64 KB values (6.4 MB) then leaves ACK-clocked: much of
it is transmitted from inside the server's reads, on the server's CPU, and
from two CPUs at once, so the loopback reorders it (spurious fast
retransmits, DSACKs). Every server is measured with the same client either
way; under bbr ferry's SET of 64 KB at P = 100 made 0.81-0.87 of its P = 16
rate, under cubic 0.98 (see README, "Value sizes").

Keyspace: -r is --keyspace (default 10,000) keys, capped so that keys x size
stays under --max-working-set-mb (default 128 MB): 2,048 keys of 64 KB,
8,192 of 16 KB. Every size is out of the CPU caches either way, and the
preload stays short.

Requests per run: each (point, server) is first calibrated by one short run
(max(10000, 4*C*P) requests, not recorded), then every recorded run of that
server at that point has --seconds (default 1) worth of requests at the
calibrated rate (at least 10*C*P: ten batches per connection). --requests N
fixes N instead and skips the calibration. A full run (30 points x 3 servers
x 5 rounds) takes about 10 minutes on an idle 2-core machine. Five rounds,
not three: on this shared VM a 64 KB point moves by 10-15% from run to run,
and a median of three still swung ferry's 64 KB P=100 / P=16 from 0.83 to
1.08 between runs a day apart.

Why: ferry's lead over redis-server shrinks and reverses as values grow
(issue 19). This records the whole axis with the ceiling beside it, so each
change to the output path is judged by the issue's targets: >= 1.0x redis
everywhere, >= 1.5x at 1 KB and 4 KB with P >= 16, >= 1.2x (or 90 % of the
ceiling) at 16 KB and 64 KB with P >= 16, P=100 >= 0.9 x P=16, and p99 no
worse than redis's at P >= 16.

Output: <out>/values.csv (COLUMNS, described in analysis/SCHEMA.md), one row
per run, flushed as it goes; the time window goes to <out>/windows.json; a
summary table per (test, size, P) is printed at the end by analysis/values.py
(median rps of each server, ferry/redis, ferry as a fraction of the null
ceiling, ferry's P=100 / P=16, medians of p99 and server CPU us/op, and the
issue's targets that the point misses). analysis/reproduce.py turns the CSV into
results/tables/values__values.{md,tex} and results/fig/values__rps_vs_size_*.
"""
from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import benchlib as bl
import ceiling as cl

sys.path.insert(0, str(bl.REPO))
from analysis import values  # noqa: E402  (medians, ratios, issue 19's targets)

COLUMNS = ["server", "server_version", "client", "test", "clients", "pipeline", "value_bytes", "keyspace", "run",
           "order", "requests", "rps", "p50_ms", "p99_ms", "server_cpu_us_per_op", "wall_s", "server_user_s",
           "server_sys_s", "client_user_s", "client_sys_s", "started_utc", "client_cc"]
SERVERS = ["redis", "ferry", "null-epoll"]
SIZES = [64, 1024, 4096, 16384, 65536]
PIPELINES = [1, 16, 100]
QUICK_SIZES = [1024, 16384]
QUICK_PIPELINES = [1, 16]
MIN_CAL_REQUESTS = 10000
DEFAULT_CLIENT_CC = "cubic"   # see the top: the load generator's own TCP, not the servers', is otherwise measured


def int_list(s: str) -> list:
    return [int(x) for x in cl.str_list(s)]


def keyspace_for(size: int, keyspace: int, max_ws_mb: float) -> int:
    """-r for values of `size` bytes: keyspace, capped so keys x size <= max_ws_mb."""
    return max(1, min(keyspace, int(max_ws_mb * (1 << 20)) // max(size, 1)))


def point_args(args, test: str, size: int, pipeline: int, requests: int) -> argparse.Namespace:
    """A copy of args carrying one point's settings, as ceiling.measure() reads them."""
    return argparse.Namespace(**dict(vars(args), tests=[test], value_bytes=size, pipeline=pipeline,
                                     requests=requests,
                                     keyspace=keyspace_for(size, args.keyspace, args.max_working_set_mb)))


def calibrate(name: str, spec: tuple, test: str, pa: argparse.Namespace, pin: bool, fb: str) -> int:
    """Requests for --seconds of this server at this point, from one short run."""
    floor = 10 * pa.conns * pa.pipeline
    cal = argparse.Namespace(**dict(vars(pa), requests=max(MIN_CAL_REQUESTS, 4 * pa.conns * pa.pipeline),
                                    retries=0))
    m = cl.measure(name, spec, test, cal, pin, fb)
    n = max(floor, int(round(pa.seconds * m["rps"] / 1000.0)) * 1000)
    bl.log("values: calibrated %s %s d=%d P=%d: %.0f rps over %d requests -> %d requests per run"
           % (test, name, pa.value_bytes, pa.pipeline, m["rps"], cal.requests, n))
    return n


def make_row(name: str, version: str, pa: argparse.Namespace, test: str, rnd: int, pos: int, m: dict) -> dict:
    cpu = (m["server_user_s"] + m["server_sys_s"]) / pa.requests * 1e6
    return {"server": name, "server_version": version, "client": cl.CLIENT, "test": test, "clients": pa.conns,
            "pipeline": pa.pipeline, "value_bytes": pa.value_bytes, "keyspace": pa.keyspace, "run": rnd,
            "order": pos, "requests": pa.requests, "rps": bl.fmt_num(m["rps"], 2),
            "p50_ms": bl.fmt_num(m["p50_ms"]), "p99_ms": bl.fmt_num(m["p99_ms"]),
            "server_cpu_us_per_op": bl.fmt_num(cpu, 3), "wall_s": bl.fmt_num(m["wall_s"], 4),
            "server_user_s": bl.fmt_num(m["server_user_s"], 2), "server_sys_s": bl.fmt_num(m["server_sys_s"], 2),
            "client_user_s": bl.fmt_num(m["client_user_s"], 4), "client_sys_s": bl.fmt_num(m["client_sys_s"], 4),
            "started_utc": m["started_utc"], "client_cc": pa.client_congestion or bl.system_congestion()}


# --------------------------------------------------------------------- main
def parse_args(argv=None):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--quick", action="store_true",
                    help="smoke mode: sizes %s, P %s, 1 round, 0.3 s runs, no retries"
                    % (",".join(map(str, QUICK_SIZES)), ",".join(map(str, QUICK_PIPELINES))))
    ap.add_argument("--tests", type=cl.str_list, default=["GET", "SET"], help="comma list from GET,SET")
    ap.add_argument("--sizes", type=int_list, default=None, help="value sizes in bytes (default %s)"
                    % ",".join(map(str, SIZES)))
    ap.add_argument("--pipelines", type=int_list, default=None, help="pipeline depths (default %s)"
                    % ",".join(map(str, PIPELINES)))
    ap.add_argument("--servers", type=cl.str_list, default=list(SERVERS),
                    help="comma list from %s (default %s)" % (",".join(cl.SERVERS), ",".join(SERVERS)))
    ap.add_argument("--rounds", type=int, default=None, help="rounds per point (default 5, --quick 1)")
    ap.add_argument("--seconds", type=float, default=None, help="target seconds per run (default 1, --quick 0.3)")
    ap.add_argument("--requests", type=int, default=None, help="fixed requests per run (no calibration)")
    ap.add_argument("--conns", type=int, default=50, help="connections C (default 50)")
    ap.add_argument("--keyspace", type=int, default=10000, help="-r keyspace, preloaded for GET (default 10000)")
    ap.add_argument("--max-working-set-mb", type=float, default=128.0,
                    help="cap keyspace x value size at this many MB (default 128)")
    cl.add_run_options(ap, retries_default=1)
    ap.set_defaults(client_congestion=DEFAULT_CLIENT_CC)
    args = ap.parse_args(argv)
    args.sizes = args.sizes or (QUICK_SIZES if args.quick else SIZES)
    args.pipelines = args.pipelines or (QUICK_PIPELINES if args.quick else PIPELINES)
    args.rounds = args.rounds or (1 if args.quick else 5)
    args.seconds = args.seconds or (0.3 if args.quick else 1.0)
    if args.retries is None:
        args.retries = 0 if args.quick else 1
    args.tests = [t.upper() for t in args.tests]
    for t in args.tests:
        if t not in ("GET", "SET"):
            raise SystemExit("unknown test %r (choose from GET, SET)" % t)
    if any(s < 1 or s > 256 * 1024 for s in args.sizes):
        raise SystemExit("value sizes must be 1 .. 262144 bytes (the null server's request limit)")
    return args


def run_point(test, size, p, names, specs, versions, args, pin, fb, sink, progress) -> list:
    """Every round of one (test, size, P) point; the rows written."""
    rows = []
    base = point_args(args, test, size, p, args.requests or 0)
    requests = {}
    for name in names:
        try:
            requests[name] = args.requests or calibrate(name, specs[name], test, base, pin, fb)
        except (RuntimeError, cl.Unavailable) as e:
            progress["failures"].append((test, size, p, 0, name, str(e).splitlines()[0]))
            bl.log("  !! %s d=%d P=%d %s calibration: %s" % (test, size, p, name, str(e).splitlines()[0]))
    for rnd in range(args.rounds):
        order = names[rnd % len(names):] + names[:rnd % len(names)]
        for pos, name in enumerate([n for n in order if n in requests], start=1):
            progress["i"] += 1
            pa = point_args(args, test, size, p, requests[name])
            try:
                m = cl.measure_clean(name, specs[name], test, pa, pin, fb)
            except (RuntimeError, cl.Unavailable) as e:
                progress["failures"].append((test, size, p, rnd + 1, name, str(e).splitlines()[0]))
                bl.log("  !! %s d=%d P=%d %s round %d: %s" % (test, size, p, name, rnd + 1, str(e).splitlines()[0]))
                continue
            row = make_row(name, versions[name], pa, test, rnd + 1, pos, m)
            sink.add(row)
            rows.append(row)
            spent = time.monotonic() - progress["t0"]
            left = spent / progress["i"] * (progress["total"] - progress["i"])
            bl.log("[%d/%d] %-3s d=%-5d P=%-3d round %d %-10s %9.0f rps in %.2fs, p99 %s ms, server %s us/op; "
                   "cores busy: %s | %s elapsed, ~%s left"
                   % (progress["i"], progress["total"], test, size, p, rnd + 1, name, m["rps"], m["wall_s"],
                      row["p99_ms"], row["server_cpu_us_per_op"], cl.fmt_load(m["cores"]), bl.human_secs(spent),
                      bl.human_secs(left)))
    return rows


def main(argv=None) -> int:
    args = parse_args(argv)
    bl.install_signal_handlers()
    pin = bl.pinning_available() and not args.no_pin
    fb = bl.client_binary(cl.CLIENT, args.ferry_bench)
    if fb is None:
        raise SystemExit("values: %s not found (%s); run `make`"
                         % (cl.CLIENT, args.ferry_bench or bl.DEFAULT_FERRY_BENCH))
    ferry_version = bl.server_version("ferry", bl.server_binary("ferry", args.ferry))
    names = list(args.servers)
    # every binary is checked here: one that vanishes later (a rebuild) fails its runs, not the script
    specs = {size: cl.server_specs(args, size) for size in args.sizes}
    versions = {n: cl.version_of(n, specs[args.sizes[0]][n][0], ferry_version) for n in names}
    out_dir = Path(args.out)
    out_path = out_dir / "values.csv"
    cc = args.client_congestion or bl.system_congestion()
    bl.log("values: %s; tests %s, sizes %s, P %s, C=%d, %d rounds, %s per run, pinning %s, client TCP %s "
           "(the system's: %s)"
           % (", ".join("%s %s" % (n, versions[n]) for n in names), ",".join(args.tests),
              ",".join(map(str, args.sizes)), ",".join(map(str, args.pipelines)), args.conns, args.rounds,
              "%d requests" % args.requests if args.requests else "%.1f s" % args.seconds,
              bl.pinning_description(pin), cc, bl.system_congestion()))
    load = cl.wait_until_idle(0.0, sample_s=1.0)
    bl.log("values: machine load over 1 s before the runs: %s%s" % (
        cl.fmt_load(load), "" if all(v < 10.0 for v in load.values())
        else " -- WARNING: not idle; other processes distort every figure (see --wait-idle)"))
    started = bl.utc_now()
    progress = {"i": 0, "t0": time.monotonic(), "failures": [],
                "total": len(args.tests) * len(args.sizes) * len(args.pipelines) * args.rounds * len(names)}
    sink = bl.CsvAppender(out_path, COLUMNS)
    rows = []
    try:
        for test in args.tests:
            for size in args.sizes:
                for p in args.pipelines:
                    rows += run_point(test, size, p, names, specs[size], versions, args, pin, fb, sink, progress)
    finally:
        sink.close()
        bl.record_window(out_dir, "values", started, bl.utc_now(), pinning=bl.pinning_description(pin),
                         rows=sink.count, client_congestion=cc)
    if rows:
        bl.log("\n" + values.make_table("values", values.load(out_path)).md())
    return bl.report_runs("values", sink.count, out_path, progress["t0"], progress["failures"])


if __name__ == "__main__":
    bl.run_main(main)
