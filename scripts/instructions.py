"""Instructions per request: ferry vs redis-server, counted by callgrind.

What: each server is run under `valgrind --tool=callgrind
--callgrind-out-file=F`; a fixed redis-benchmark workload (default 200000
requests, C=50, P in {1,100}, tests SET and GET, -r 100000, 64-byte values;
GET runs on a keyspace pre-filled with every key) is run against it; the
server is then stopped with SIGTERM (a clean exit, so callgrind writes F) and
the total Ir is read from F's "totals:" (or "summary:") line. A baseline run
per workload run does the same minus the workload: start, fill if
GET, open one idle connection and PING, keep it idle for as long as the
client ran (at least --idle-seconds: Redis's serverCron costs ~1M Ir per idle
second under callgrind), SIGTERM. The baseline's Ir (startup, fill, idle
event-loop and timer cost, shutdown) is subtracted, so

    instructions = Ir(workload run) - Ir(baseline)

is the server's user-space instruction count for the measured requests (all
threads, including libc and the allocator; kernel work is not counted); ops
is the number of requests the client completed, so instructions/ops is the
per-request figure (the analysis divides; analysis/SCHEMA.md).

Why: instructions/op is a machine-independent, noise-free complement to the
rps sweep (this VM exposes no cycle counter, see unavailable.py), and shows
where batching saves work at P=1 vs P=100.
"""
from __future__ import annotations

import argparse
import os
import socket
import time
from pathlib import Path

import benchlib as bl

COLUMNS = ["server", "test", "pipeline", "clients", "ops", "instructions"]


def int_list(s):
    return [int(x) for x in s.split(",") if x.strip()]


def read_callgrind_total(path: str) -> int:
    """Total Ir from a callgrind output file ('totals:' or 'summary:' line)."""
    totals = summary = None
    with open(path, errors="replace") as f:
        for line in f:
            if line.startswith("totals:"):
                totals = int(line.split()[1])
            elif line.startswith("summary:"):
                summary = int(line.split()[1])
    v = totals if totals is not None else summary
    if v is None:
        raise RuntimeError("no totals:/summary: line in %s" % path)
    return v


def callgrind_run(kind, binary, pin, out_file, fill_keys, value_bytes, workload, idle_seconds):
    """Start the server under callgrind, fill, run workload(port) or idle,
    SIGTERM, and return (Ir total, workload result or None)."""
    wrapper = ["valgrind", "--tool=callgrind", "--callgrind-out-file=%s" % out_file]
    srv = bl.Server(kind, binary, pin=pin, wrapper=wrapper, startup_timeout=180.0, stop_timeout=600.0)
    result = None
    try:
        srv.start()
        if fill_keys:
            bl.fill_keys(srv.port, fill_keys, value_bytes, timeout=600.0)
        if workload is None:
            with socket.create_connection(("127.0.0.1", srv.port), timeout=30) as s:   # the idle connection
                s.sendall(b"*1\r\n$4\r\nPING\r\n")
                s.recv(64)
                time.sleep(idle_seconds)
        else:
            result = workload(srv.port)
        rc = srv.stop()                       # SIGTERM, wait for callgrind to write its file
    finally:
        srv.cleanup()
    if rc not in (0, None) and not os.path.exists(out_file):
        raise RuntimeError("%s under callgrind exited %s without writing %s" % (kind, rc, out_file))
    return read_callgrind_total(out_file), result


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--requests", type=int, default=200000, help="requests per workload (default 200000)")
    ap.add_argument("--clients", type=int, default=50, help="connections (default 50)")
    ap.add_argument("--pipelines", type=int_list, default=[1, 100], help="comma list (default 1,100)")
    ap.add_argument("--tests", default="SET,GET", help="comma list from SET,GET,INCR,MSET (default SET,GET)")
    ap.add_argument("--keyspace", type=int, default=100000, help="-r keyspace; GET pre-fills it (default 100000)")
    ap.add_argument("--value-bytes", type=int, default=64, help="value size (default 64)")
    ap.add_argument("--idle-seconds", type=float, default=1.0, help="minimum baseline idle time (default 1)")
    ap.add_argument("--quick", action="store_true", help="smoke mode: 20000 requests, P=100 only, keyspace 10000")
    ap.add_argument("--servers", default="ferry,redis", help="comma list (default ferry,redis)")
    ap.add_argument("--out", default=str(bl.REPO / "results" / "bench"), help="output directory")
    ap.add_argument("--keep", action="store_true", help="keep the callgrind.out files (in <out>/callgrind/)")
    ap.add_argument("--no-pin", action="store_true", help="do not pin server/client with taskset")
    ap.add_argument("--ferry", default=None, help="ferry-server binary")
    ap.add_argument("--redis", default=None, help="redis-server binary")
    args = ap.parse_args(argv)
    if args.quick:
        args.requests, args.pipelines, args.keyspace = 20000, [100], 10000
    bl.install_signal_handlers()
    if not bl.which("valgrind"):
        raise SystemExit("instructions: valgrind not found (apt-get install -y valgrind)")
    rb = bl.client_binary("redis-benchmark")
    if rb is None:
        raise SystemExit("instructions: redis-benchmark not found (apt-get install -y redis-tools)")
    pin = bl.pinning_available() and not args.no_pin
    kinds = [k.strip() for k in args.servers.split(",") if k.strip()]
    tests = [t.strip().upper() for t in args.tests.split(",") if t.strip()]
    binaries = {k: bl.server_binary(k, getattr(args, k)) for k in kinds}
    out_dir = Path(args.out)
    cg_dir = out_dir / "callgrind"
    cg_dir.mkdir(parents=True, exist_ok=True)
    started = bl.utc_now()
    t0 = time.monotonic()
    rows = []
    files = []
    try:
        for k in kinds:
            for test in tests:
                fill = args.keyspace if test == "GET" else 0
                for p in args.pipelines:
                    stem = "callgrind.%s.%s.c%d.p%d" % (k, test, args.clients, p)
                    f = str(cg_dir / (stem + ".out"))
                    fb = str(cg_dir / (stem + ".baseline.out"))
                    files += [f, fb]
                    tw = time.monotonic()

                    def workload(port, test=test, p=p):
                        return bl.run_client("redis-benchmark", rb, port, test, args.clients, p, args.requests,
                                             args.value_bytes, args.keyspace, pin,
                                             timeout=600.0 + args.requests / 200.0)
                    total, res = callgrind_run(k, binaries[k], pin, f, fill, args.value_bytes, workload, 0)
                    idle = max(args.idle_seconds, res["wall_s"])
                    base, _ = callgrind_run(k, binaries[k], pin, fb, fill, args.value_bytes, None, idle)
                    net = total - base
                    per_op = net / args.requests
                    rows.append({"server": k, "test": test, "pipeline": p, "clients": args.clients,
                                 "ops": args.requests, "instructions": net})
                    bl.log("instructions: %-5s %-4s C=%d P=%-3d: %d Ir - baseline %d (fill %d, idle %.1fs) = %d "
                           "over %d ops -> %.0f Ir/op (%.0fs, %.0fk rps under callgrind)"
                           % (k, test, args.clients, p, total, base, fill, idle, net, args.requests, per_op,
                              time.monotonic() - tw, res["rps"] / 1e3))
    finally:
        if not args.keep:
            for f in files:
                try:
                    os.unlink(f)
                except OSError:
                    pass
            try:
                cg_dir.rmdir()
            except OSError:
                pass
        bl.record_window(out_dir, "instructions", started, bl.utc_now(), pinning=bl.pinning_description(pin),
                         rows=len(rows))
    return bl.write_results(out_dir, "instructions", COLUMNS, rows, t0)


if __name__ == "__main__":
    bl.run_main(main)
