"""The P=1 ceiling: how fast can any server on this machine answer C=50, P=1?

What: for each test in --tests (default GET, SET) at C=50, P=1, 64-byte
values, runs five servers in alternating rounds (default 5 rounds; in round r
the server order is rotated by r, so each server takes each position once):
  redis         redis-server (Debian's 7.0.15), no persistence
  ferry         build/ferry-server, default configuration
  ferry-nopoll  build/ferry-server --busy-poll-us 0 (no busy polling)
  null-epoll    build/ferry-null-server --io epoll: frames RESP requests and
                answers every command with a fixed reply (GET: a bulk of
                --value-bytes bytes, SET: +OK), no keyspace at all; its
                sockets get ferry's tcp-rcvbuf (--rcvbuf) when ferry's would
  null-uring    the same with io_uring; when io_uring is unavailable the null
                server exits with status 3 and null-uring is skipped with a
                logged note (no row is written for it)
Every run starts a fresh server (pinned to CPU 0 like the sweep), preloads
the keyspace for GET (every key:%012d in 0..keyspace-1 SET with a value of
--value-bytes bytes over one pipelined socket; not measured), then runs
`build/ferry-bench -t <test> -n N -r keyspace -c 50 -P 1 -d 64 --csv` as a
child pinned to CPU 1, and measures, over exactly the client's run:
  - the server's CPU time from /proc/<pid>/stat (utime, stime: fields 14
    and 15, clock ticks / SC_CLK_TCK), read just before the client starts and
    just after it exits. taskset execs the server, so the Popen pid is the
    server's pid; the script checks /proc/<pid>/exe is the server binary;
  - the client's own CPU time (ru_utime, ru_stime of the reaped child, via
    benchlib.run_process; the run at c335b2d read the same through os.wait4);
  - the client's wall time (Popen to reaped).

Why: issue 3's target "ferry >= 1.5x redis-server at P=1" is out of reach on
this 2-core VM: each P=1 request costs several microseconds of kernel CPU
(loopback TCP send including the receiver's softirq and wake-up, recv,
epoll) on the server core and again on the client core, which dwarfs the
user-space work of either server. The null servers do the least work any
server can do, so their rps over redis's is the ceiling for any server
design here; this script makes that measurement reproducible.

Machine load: the per-CPU busy share over each run (from /proc/stat,
softirq and steal included) is logged beside the process figures; the load
before the first run is logged with a warning when any CPU is >= 10 % busy,
and --wait-idle S waits (up to S s) for an idle machine before each run.

A run during which other processes used more than --max-foreign % (default
10) of either pinned core is repeated, up to --retries times after waiting
for an idle machine (the pinned cores' busy share minus the server's and
the client's own CPU share; on an idle machine it is a few %).

Busy polling: ferry's default busy-poll-us is 100, so it spins while idle
(e.g. while the client connects) and its CPU figures include that spinning.
ferry-nopoll shows ferry's true CPU cost per op.

Output: <out>/ceiling.csv (columns: COLUMNS, described in analysis/SCHEMA.md),
one row per run, flushed as it goes; the time window goes to
<out>/windows.json. analysis/reproduce.py turns it into
results/tables/ceiling__ceiling.{md,tex}.
"""
from __future__ import annotations

import argparse
import os
import statistics
import time
from pathlib import Path

import benchlib as bl

COLUMNS = ["server", "server_version", "client", "test", "clients", "pipeline", "value_bytes", "run", "order",
           "requests", "rps", "p50_ms", "p99_ms", "wall_s", "server_user_s", "server_sys_s", "client_user_s",
           "client_sys_s", "started_utc"]
SERVERS = ["redis", "ferry", "ferry-nopoll", "null-epoll", "null-uring"]
DEFAULT_NULL = bl.REPO / "build" / "ferry-null-server"
FERRY_TCP_RCVBUF = 4194304     # ferry's default tcp-rcvbuf (src/io/net.c)
UNAVAILABLE_EXIT = 3            # ferry-null-server --io uring without io_uring
CLIENT = "ferry-bench"
FULL_REQUESTS = 600000
QUICK_REQUESTS = 50000
QUICK_KEYSPACE = 10000
# Preload batch: ~27 KB of SETs per write, so that the bytes in flight stay
# under half of ferry-null-server's 64 KB per-connection input buffer (it
# closes a connection whose buffered partial request plus one full read
# would overflow it). Used for every server so the procedure is the same.
FILL_BATCH = 500


class Unavailable(Exception):
    """The server cannot run on this machine (null-uring without io_uring)."""


def null_rcvbuf_args() -> list:
    """The null server's sockets get ferry's receive buffer, as ferry sets it:
    only when net.core.rmem_max allows it (else both keep autotuning)."""
    try:
        with open("/proc/sys/net/core/rmem_max") as f:
            ok = int(f.read()) >= FERRY_TCP_RCVBUF
    except (OSError, ValueError):
        ok = False
    return ["--rcvbuf", str(FERRY_TCP_RCVBUF)] if ok else []


def str_list(s: str) -> list:
    return [x.strip() for x in s.split(",") if x.strip()]


# --------------------------------------------------------------------- CPU accounting
def parse_proc_stat(text: str) -> tuple:
    """(utime, stime) in clock ticks from the text of /proc/<pid>/stat.

    Field 2 (comm) is parenthesised and may hold spaces or ')', so the fields
    are counted from the last ')': the token after it is field 3 (state),
    utime is field 14 and stime field 15."""
    rest = text[text.rindex(")") + 1:].split()
    return int(rest[14 - 3]), int(rest[15 - 3])


def proc_cpu_seconds(pid: int) -> tuple:
    """(user, system) CPU seconds the process (all its threads) has used."""
    with open("/proc/%d/stat" % pid) as f:
        ut, st = parse_proc_stat(f.read())
    hz = float(os.sysconf("SC_CLK_TCK"))
    return ut / hz, st / hz


def cpu_jiffies() -> dict:
    """{'cpu0': (busy, total), ...} from /proc/stat; idle and iowait are not busy."""
    out = {}
    with open("/proc/stat") as f:
        for line in f:
            if line.startswith("cpu") and line[3:4].isdigit():
                name, *vals = line.split()
                ticks = [int(v) for v in vals[:8]]   # user nice system idle iowait irq softirq steal
                out[name] = (sum(ticks) - ticks[3] - ticks[4], sum(ticks))
    return out


def busy_pct(before: dict, after: dict) -> dict:
    """{'cpu0': % busy between two cpu_jiffies() samples, ...}."""
    out = {}
    for name in sorted(after):
        if name in before:
            db, dt = after[name][0] - before[name][0], after[name][1] - before[name][1]
            out[name] = 100.0 * db / dt if dt > 0 else 0.0
    return out


def wait_until_idle(limit_s: float, threshold: float = 10.0, sample_s: float = 0.5) -> dict:
    """Sample the machine's per-CPU load for sample_s (repeatedly, for up to
    limit_s) until every CPU is below threshold % busy; returns the last
    sample. Other processes on the CPUs distort every figure of a run."""
    deadline = time.monotonic() + limit_s
    while True:
        a = cpu_jiffies()
        time.sleep(sample_s)
        load = busy_pct(a, cpu_jiffies())
        if all(v < threshold for v in load.values()) or time.monotonic() >= deadline:
            return load


def foreign_pct(m: dict, wall: float) -> float:
    """CPU share of the run's two cores not used by the server (core 0) or
    the client (core 1): other processes' work, in % of the wall time.
    NaN when the cores are unknown (no pinning)."""
    cores = m.get("cores") or {}
    s, c = "cpu" + bl.SERVER_CPU, "cpu" + bl.CLIENT_CPU
    if s not in cores or c not in cores or not wall > 0:
        return float("nan")
    server = 100.0 * (m["server_user_s"] + m["server_sys_s"]) / wall
    client = 100.0 * (m["client_user_s"] + m["client_sys_s"]) / wall
    return max(cores[s] - server, cores[c] - client)


def fmt_load(load: dict) -> str:
    return ", ".join("%s %.0f%%" % (k, v) for k, v in sorted(load.items()))


# --------------------------------------------------------------------- servers
class VariantServer(bl.Server):
    """bl.Server with extra command-line arguments (--busy-poll-us 0, --io ...)."""

    def __init__(self, name: str, binary: str, pin: bool, extra: list):
        super().__init__(name, binary, pin=pin)
        self.extra = list(extra)

    def argv(self, port: int) -> list:
        return super().argv(port) + self.extra

    def start(self) -> "VariantServer":
        try:
            super().start()
        except RuntimeError as e:
            if self.proc is not None and self.proc.returncode == UNAVAILABLE_EXIT:
                raise Unavailable("%s exited with status %d: %s" % (self.kind, UNAVAILABLE_EXIT,
                                                                    self.log_tail(1).strip())) from e
            raise
        self.check_pid_is_server()
        return self

    def check_pid_is_server(self) -> None:
        """taskset execs the server, so Popen's pid must be the server's by
        now, never taskset's (whose /proc/<pid>/stat CPU would be ~0)."""
        exe = os.path.realpath("/proc/%d/exe" % self.pid)
        taskset = bl.which("taskset")
        if taskset and exe == os.path.realpath(taskset):
            raise RuntimeError("pid %d is still taskset, not the server %s (the CPU figures would be wrong)"
                               % (self.pid, self.binary))
        if exe != os.path.realpath(self.binary):
            bl.log("ceiling: note: pid %d runs %s, not %s (a wrapper exec'ed it?)" % (self.pid, exe, self.binary))


def server_specs(args, value_bytes: int) -> dict:
    """{name: (binary, extra argv)} for every server in args.servers."""
    specs = {}
    for name in args.servers:
        if name == "redis":
            specs[name] = (bl.server_binary("redis", args.redis), [])
        elif name == "ferry":
            specs[name] = (bl.server_binary("ferry", args.ferry), [])
        elif name == "ferry-nopoll":
            specs[name] = (bl.server_binary("ferry", args.ferry), ["--busy-poll-us", "0"])
        elif name in ("null-epoll", "null-uring"):
            path = args.null or os.environ.get("FERRY_NULL_SERVER") or str(DEFAULT_NULL)
            if not (os.path.isfile(path) and os.access(path, os.X_OK)):
                raise SystemExit("null server binary not found or not executable: %s (run `make`)" % path)
            specs[name] = (os.path.abspath(path),
                           ["--io", name.split("-", 1)[1], "--value-size", str(value_bytes)] + null_rcvbuf_args())
        else:
            raise SystemExit("unknown server %r (choose from %s)" % (name, ", ".join(SERVERS)))
    return specs


def version_of(name: str, binary: str, ferry_version: str) -> str:
    if name == "redis":
        return bl.server_version("redis", binary)
    if name.startswith("null-"):
        return ferry_version          # built from the same tree as ferry-server
    return bl.server_version("ferry", binary)


# --------------------------------------------------------------------- one run
def measure(name: str, spec: tuple, test: str, args, pin: bool, fb: str) -> dict:
    """Fresh server, preload for GET, one measured ferry-bench run; the row's
    measured fields (rps, latencies, wall and CPU seconds)."""
    binary, extra = spec
    srv = VariantServer(name, binary, pin, extra)
    try:
        srv.start()
        if test == "GET":
            bl.fill_keys(srv.port, args.keyspace, args.value_bytes, batch=FILL_BATCH)
            if not name.startswith("null-"):
                n = bl.dbsize(srv.port)
                if n != args.keyspace:
                    raise RuntimeError("%s: DBSIZE %d after filling %d keys" % (name, n, args.keyspace))
        if args.wait_idle > 0:
            load = wait_until_idle(args.wait_idle)
            if any(v >= 10.0 for v in load.values()):
                bl.log("ceiling: WARNING: machine still busy before the run (%s)" % fmt_load(load))
        when = bl.utc_now()
        j0 = cpu_jiffies()
        s_user0, s_sys0 = proc_cpu_seconds(srv.pid)
        r = bl.run_client(CLIENT, fb, srv.port, test, args.conns, args.pipeline, args.requests,
                          args.value_bytes, args.keyspace, pin, congestion=getattr(args, "client_congestion", None))
        s_user1, s_sys1 = proc_cpu_seconds(srv.pid)
        cores = busy_pct(j0, cpu_jiffies())
        if not srv.alive():
            raise RuntimeError("%s died during the run; log tail:\n%s" % (name, srv.log_tail(10)))
    finally:
        srv.cleanup()
    return {"rps": r["rps"], "p50_ms": r.get("p50_ms", ""), "p99_ms": r.get("p99_ms", ""),
            "wall_s": r["wall_s"], "server_user_s": s_user1 - s_user0, "server_sys_s": s_sys1 - s_sys0,
            "client_user_s": r["user_s"], "client_sys_s": r["sys_s"], "started_utc": when, "cores": cores}


def measure_clean(name: str, spec: tuple, test: str, args, pin: bool, fb: str) -> dict:
    """measure(), repeated (up to --retries times, after waiting for an idle
    machine) while other processes took more than --max-foreign % of the
    pinned cores during the run; the last attempt is kept either way."""
    for attempt in range(args.retries + 1):
        m = measure(name, spec, test, args, pin, fb)
        foreign = foreign_pct(m, m["wall_s"])
        if not pin or not foreign > args.max_foreign:
            return m
        bl.log("ceiling: %s %s: %.0f rps with %.0f%% of a core used by other processes (cores %s)%s"
               % (test, name, m["rps"], foreign, fmt_load(m["cores"]),
                  "; retrying" if attempt < args.retries else "; KEPT (retries exhausted)"))
        if attempt < args.retries:
            wait_until_idle(max(args.wait_idle, 30.0))
    return m


def summarize(rows: list) -> None:
    """Log, per test and server, the median rps, ratio to redis and CPU us/op."""
    for test in sorted({r["test"] for r in rows}):
        mine = [r for r in rows if r["test"] == test]
        med = {}
        for name in SERVERS:
            rs = [r for r in mine if r["server"] == name]
            if rs:
                med[name] = (statistics.median(float(r["rps"]) for r in rs),
                             statistics.median((float(r["server_user_s"]) + float(r["server_sys_s"]))
                                               / r["requests"] * 1e6 for r in rs),
                             len(rs))
        for name, (rps, cpu, n) in med.items():
            ratio = rps / med["redis"][0] if "redis" in med else float("nan")
            bl.log("ceiling: %-3s %-12s median %7.0f rps (%d runs), %.2fx redis, server CPU %.2f us/op"
                   % (test, name, rps, n, ratio, cpu))


# --------------------------------------------------------------------- main
def add_run_options(ap, retries_default: int) -> None:
    """The options that measure_clean() and server_specs() read (idle wait,
    foreign-load retries, output, pinning, binaries); scripts/values_bench.py
    takes the same ones."""
    ap.add_argument("--wait-idle", type=float, default=0.0, metavar="S",
                    help="before each run, wait up to S seconds until every CPU is < 10%% busy over 0.5 s "
                         "(for shared machines; default 0: do not wait). The load before the first run is "
                         "always logged")
    ap.add_argument("--max-foreign", type=float, default=10.0, metavar="PCT",
                    help="a run during which other processes used more than PCT %% of either pinned core "
                         "(core busy share from /proc/stat minus the server's or client's own) is "
                         "repeated (default 10)")
    ap.add_argument("--retries", type=int, default=None,
                    help="repeats of such a run (default %d, --quick 0)" % retries_default)
    ap.add_argument("--out", default=str(bl.REPO / "results" / "bench"), help="output directory")
    ap.add_argument("--no-pin", action="store_true", help="do not pin server/client with taskset")
    ap.add_argument("--ferry", default=None, help="ferry-server binary (default build/ferry-server or $FERRY_SERVER)")
    ap.add_argument("--redis", default=None, help="redis-server binary (default on PATH or $REDIS_SERVER)")
    ap.add_argument("--null", default=None,
                    help="null server binary (default build/ferry-null-server or $FERRY_NULL_SERVER)")
    ap.add_argument("--ferry-bench", default=None, help="ferry-bench binary (default build/ferry-bench)")
    ap.add_argument("--client-congestion", default=None, metavar="CC",
                    help="TCP congestion control of ferry-bench's sockets (its --congestion; default: the "
                         "system's net.ipv4.tcp_congestion_control)")


def parse_args(argv=None):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--quick", action="store_true",
                    help="smoke mode: 1 round, %d requests, keyspace %d" % (QUICK_REQUESTS, QUICK_KEYSPACE))
    ap.add_argument("--tests", type=str_list, default=["GET", "SET"], help="comma list from GET,SET (default both)")
    ap.add_argument("--servers", type=str_list, default=list(SERVERS),
                    help="comma list (default %s)" % ",".join(SERVERS))
    ap.add_argument("--rounds", type=int, default=None, help="rounds (default 5, --quick 1)")
    ap.add_argument("--requests", type=int, default=None,
                    help="requests per run (default %d, --quick %d)" % (FULL_REQUESTS, QUICK_REQUESTS))
    ap.add_argument("--conns", type=int, default=50, help="connections C (default 50)")
    ap.add_argument("--pipeline", type=int, default=1, help="pipeline depth P (default 1)")
    ap.add_argument("--value-bytes", type=int, default=64, help="value size d (default 64)")
    ap.add_argument("--keyspace", type=int, default=None,
                    help="-r keyspace, preloaded for GET (default 100000, --quick %d)" % QUICK_KEYSPACE)
    add_run_options(ap, retries_default=3)
    args = ap.parse_args(argv)
    args.rounds = args.rounds or (1 if args.quick else 5)
    if args.retries is None:
        args.retries = 0 if args.quick else 3
    args.requests = args.requests or (QUICK_REQUESTS if args.quick else FULL_REQUESTS)
    args.keyspace = args.keyspace or (QUICK_KEYSPACE if args.quick else 100000)
    args.tests = [t.upper() for t in args.tests]
    for t in args.tests:
        if t not in ("GET", "SET"):
            raise SystemExit("unknown test %r (choose from GET, SET)" % t)
    return args


def main(argv=None) -> int:
    args = parse_args(argv)
    bl.install_signal_handlers()
    pin = bl.pinning_available() and not args.no_pin
    fb = bl.client_binary(CLIENT, args.ferry_bench)
    if fb is None:
        raise SystemExit("ceiling: %s not found (%s); run `make`"
                         % (CLIENT, args.ferry_bench or bl.DEFAULT_FERRY_BENCH))
    specs = server_specs(args, args.value_bytes)
    ferry_version = bl.server_version("ferry", bl.server_binary("ferry", args.ferry))
    versions = {name: version_of(name, specs[name][0], ferry_version) for name in specs}
    names = list(specs)
    out_dir = Path(args.out)
    out_path = out_dir / "ceiling.csv"
    bl.log("ceiling: %s; tests %s, C=%d P=%d d=%d, %d rounds x %d requests, keyspace %d, pinning %s"
           % (", ".join("%s %s" % (n, versions[n]) for n in names), ",".join(args.tests), args.conns,
              args.pipeline, args.value_bytes, args.rounds, args.requests, args.keyspace,
              bl.pinning_description(pin)))
    load = wait_until_idle(0.0, sample_s=1.0)
    bl.log("ceiling: machine load over 1 s before the runs: %s%s" % (
        fmt_load(load), "" if all(v < 10.0 for v in load.values())
        else " -- WARNING: not idle; other processes distort every figure (see --wait-idle)"))
    started = bl.utc_now()
    t0 = time.monotonic()
    sink = bl.CsvAppender(out_path, COLUMNS)
    rows, failures, unavailable = [], [], {}
    total = len(args.tests) * args.rounds * len(names)
    i = 0
    try:
        for test in args.tests:
            for rnd in range(args.rounds):
                order = names[rnd % len(names):] + names[:rnd % len(names)]
                pos = 0
                for name in order:
                    i += 1
                    if name in unavailable:
                        continue
                    pos += 1
                    try:
                        m = measure_clean(name, specs[name], test, args, pin, fb)
                    except Unavailable as e:
                        unavailable[name] = str(e)
                        bl.log("ceiling: NOTE: skipping %s for the rest of the run (no rows): %s" % (name, e))
                        pos -= 1
                        continue
                    except RuntimeError as e:
                        failures.append((test, rnd + 1, name, str(e).splitlines()[0]))
                        bl.log("  !! %s %s round %d: %s" % (test, name, rnd + 1, str(e).splitlines()[0]))
                        continue
                    row = {"server": name, "server_version": versions[name], "client": CLIENT, "test": test,
                           "clients": args.conns, "pipeline": args.pipeline, "value_bytes": args.value_bytes,
                           "run": rnd + 1, "order": pos, "requests": args.requests,
                           "rps": bl.fmt_num(m["rps"], 2), "p50_ms": bl.fmt_num(m["p50_ms"]),
                           "p99_ms": bl.fmt_num(m["p99_ms"]), "wall_s": bl.fmt_num(m["wall_s"], 4),
                           "server_user_s": bl.fmt_num(m["server_user_s"], 2),
                           "server_sys_s": bl.fmt_num(m["server_sys_s"], 2),
                           "client_user_s": bl.fmt_num(m["client_user_s"], 4),
                           "client_sys_s": bl.fmt_num(m["client_sys_s"], 4), "started_utc": m["started_utc"]}
                    sink.add(row)
                    rows.append(row)
                    cpu = (m["server_user_s"] + m["server_sys_s"]) / args.requests * 1e6
                    ccpu = (m["client_user_s"] + m["client_sys_s"]) / args.requests * 1e6
                    spent = time.monotonic() - t0
                    bl.log("[%d/%d] %-3s round %d %-12s %7.0f rps in %.2fs: server %.2f us/op (%.0f%% busy), "
                           "client %.2f us/op (%.0f%% busy); cores busy: %s | %s elapsed, ~%s left"
                           % (i, total, test, rnd + 1, name, m["rps"], m["wall_s"], cpu,
                              100.0 * (m["server_user_s"] + m["server_sys_s"]) / m["wall_s"], ccpu,
                              100.0 * (m["client_user_s"] + m["client_sys_s"]) / m["wall_s"],
                              fmt_load(m["cores"]), bl.human_secs(spent), bl.human_secs(spent / i * (total - i))))
    finally:
        sink.close()
        bl.record_window(out_dir, "ceiling", started, bl.utc_now(), pinning=bl.pinning_description(pin),
                         rows=sink.count, unavailable=sorted(unavailable))
    summarize([dict(r, requests=args.requests) for r in rows])
    for name, why in sorted(unavailable.items()):
        bl.log("ceiling: %s not measured: %s" % (name, why))
    return bl.report_runs("ceiling", sink.count, out_path, t0, failures)


if __name__ == "__main__":
    bl.run_main(main)
