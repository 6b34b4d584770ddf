"""Cluster throughput: a 2-node ferry cluster vs one ferry node, a 2-node
redis-server cluster and redis-server with io-threads (`make bench-cluster`,
issue #21 item 5).

What: four setups, each started fresh per round, in --rounds rounds (default
3; round r starts one setup later than round r-1, so each setup runs in every
position), on a 2-core machine:
  ferry-1        one ferry node (cluster mode off), `taskset -c 0`; the
                 client `taskset -c 1` (as the other benchmarks pin)
  ferry-2        scripts/ferry-cluster start 2 --cpus 0,1: two ferry nodes,
                 one per core; the client unpinned, sharing both cores with
                 the nodes (there is no third core)
  redis-2        the same two-node cluster of redis-server
  redis-iot2     one redis-server with --io-threads 2 --io-threads-do-reads
                 yes, unpinned (its threads need both cores), client unpinned
In each setup and round, for each P in --pipelines (default 16, 100), each
client of --tools runs SET, then GET, each a run of its own:
  redis-benchmark  `redis-benchmark [--cluster] -h 127.0.0.1 -p PORT -c 50
                   -P P -t set|get -d 64 -r 100000 -n 10^9 -q --csv`;
                   --cluster for the clusters (it gives each of its 50
                   connections one master and keys of that master's slots),
                   plain for the single servers: the same client on every
                   row. build/ferry-bench cannot route by slot, so it is not
                   used here.
  redis-benchmark-t2  the same with --threads 2 (for ferry-1 both threads
                   stay on CPU 1).
  redis-py         the project's redis-py (RedisCluster for the clusters,
                   Redis for the single servers), one process, one
                   connection per node, pipelines of P SETs then P GETs for
                   --py-seconds (default 1) each. It is one Python thread:
                   its row measures the client (tens of thousands of
                   requests per second), not the servers; it shows that a
                   cluster-aware library works against the cluster.
A redis-benchmark run is measured by the servers, not by the client: after
--warmup seconds (default 0.5: connections, cluster discovery), the SET or
GET calls the servers' INFO commandstats count (summed over the masters) over
--window seconds (default 1.5), over the window's length; then the client is
killed. (redis-benchmark's own figure is quantised to 250 ms in its cluster
and threaded modes, and counts a MOVED reply as a success.) A run in which
the servers count a rejected or failed SET/GET (a redirection is a rejected
call) fails. Each row also records the CPU time per request in the window of
the servers (utime + stime, all nodes) and of the client, from /proc: on two
cores the sum bounds what any setup can reach with the client on the same
machine. A run in whose window other processes used more than --max-foreign
% of a core (default 10; the machine's user + system time from /proc/stat
less the servers', the client's and this script's) is repeated, up to
--retries (default 2) times after waiting up to 30 s for an idle machine;
the row records foreign_pct and attempts.
Output: <out>/cluster.csv (COLUMNS; one row per setup, client, test, P and
round, written as it goes); <tables>/cluster.md: medians per setup and the
ratios ferry-2 / ferry-1, ferry-2 / redis-2 and ferry-2 / redis-iot2 (targets
of issue #21: >= 1.7x ferry-1 at P = 16 and 100, >= 3x redis-2 at P = 100);
the time window goes to <out>/windows.json. A failed run is logged and
skipped; the exit status is then 1. A full run takes about 5 minutes.

Why: one ferry node uses one core; a cluster of N nodes is how ferry uses N
cores. This measures what that buys on this machine against the other ways of
using two cores (redis-server's cluster and its I/O threads).
"""
from __future__ import annotations

import argparse
import json
import os
import random
import re
import resource
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import benchlib as bl
import ceiling as cl

COLUMNS = ["setup", "server_version", "nodes", "client", "test", "pipeline", "clients", "round", "order",
           "requests", "window_s", "rps", "server_cpu_us_per_op", "client_cpu_us_per_op", "foreign_pct",
           "attempts", "started_utc"]
SETUPS = ["ferry-1", "ferry-2", "redis-2", "redis-iot2"]
SETUP_KIND = {"ferry-1": "ferry", "ferry-2": "ferry", "redis-2": "redis", "redis-iot2": "redis"}
CLUSTER_NODES = 2
TOOLS = ["redis-benchmark", "redis-benchmark-t2", "redis-py"]
RB_THREADS = {"redis-benchmark": 1, "redis-benchmark-t2": 2}
PIPELINES = [16, 100]
RB_REQUESTS = 1000000000       # redis-benchmark's -n: never reached, the run is stopped after its window
CLIENTS = 50
VALUE_BYTES = 64
KEYSPACE = 100000
TESTS = ("SET", "GET")
FERRY_CLUSTER = bl.REPO / "scripts" / "ferry-cluster"
BUS_OFFSET = 10000
IO_THREADS = ["--io-threads", "2", "--io-threads-do-reads", "yes"]
PY_KEY = "key:%d"
WARMUP_S, WINDOW_S = 0.5, 1.5   # per redis-benchmark run: unmeasured start, then the measured window
QUICK_WARMUP_S, QUICK_WINDOW_S = 0.2, 0.4


# --------------------------------------------------------------------- setups
class Cluster:
    """A 2-node cluster made by scripts/ferry-cluster in a temporary directory;
    .ports are the masters, .port the seed."""

    def __init__(self, binary: str, pin: bool):
        self.binary, self.pin = binary, pin
        self.dir = tempfile.mkdtemp(prefix="ferry-bench-cluster-")
        self.ports, self.port, self.pids = [], None, []

    def start(self) -> "Cluster":
        lo, _hi = bl._ephemeral_range()
        err = ""
        for _ in range(5):      # a base whose ports and bus ports stay below the ephemeral range
            base = random.randint(15000, max(15001, lo - BUS_OFFSET - CLUSTER_NODES - 1))
            argv = [sys.executable, str(FERRY_CLUSTER), "start", str(CLUSTER_NODES), "--port", str(base),
                    "--dir", self.dir, "--server", self.binary] + (["--cpus", "0,1"] if self.pin else ["--no-pin"])
            r = subprocess.run(argv, capture_output=True, text=True, timeout=120, stdin=subprocess.DEVNULL)
            if r.returncode == 0:
                self.ports = [base + i for i in range(CLUSTER_NODES)]
                self.port = base
                state = json.loads((Path(self.dir) / "cluster.json").read_text())
                self.pids = [n["pid"] for n in state["nodes"]]
                return self
            err = (r.stderr or r.stdout).strip()[-500:]
            if "ports in use" not in err:
                break
        self.cleanup()
        raise RuntimeError("ferry-cluster start failed: %s" % err)

    def cleanup(self) -> None:
        subprocess.run([sys.executable, str(FERRY_CLUSTER), "stop", "--dir", self.dir], capture_output=True,
                       timeout=60, stdin=subprocess.DEVNULL)
        shutil.rmtree(self.dir, ignore_errors=True)


class Single:
    """One server (bl.Server) with the Cluster interface."""

    def __init__(self, kind: str, binary: str, pin: bool, extra=()):
        self.srv = bl.Server(kind, binary, pin=pin, extra_args=extra)

    def start(self) -> "Single":
        self.srv.start()
        self.port, self.ports, self.pids = self.srv.port, [self.srv.port], [self.srv.pid]
        return self

    def cleanup(self) -> None:
        self.srv.cleanup()


def make_setup(name: str, binary: str, pin: bool):
    if name == "ferry-1":
        return Single("ferry", binary, pin)
    if name == "redis-iot2":
        return Single("redis", binary, False, IO_THREADS)
    return Cluster(binary, pin)


def is_cluster(name: str) -> bool:
    return name.endswith("-2")


def client_pin(name: str, pin: bool) -> list:
    """Only ferry-1 leaves a core to the client."""
    return bl.pin_prefix("client", pin and name == "ferry-1")


# --------------------------------------------------------------------- measuring
def cpu_seconds(pids: list) -> float:
    total = 0.0
    for pid in pids:
        try:
            with open("/proc/%d/stat" % pid) as f:
                fields = f.read().rsplit(")", 1)[1].split()
            total += (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
        except (OSError, IndexError, ValueError):
            pass
    return total


def calls(ports: list) -> dict:
    """INFO commandstats of SET and GET summed over ports: {test: calls} and
    {test + "_bad": rejected_calls + failed_calls} (a MOVED is a rejected call)."""
    out = {"SET": 0, "GET": 0, "SET_bad": 0, "GET_bad": 0}
    for port in ports:
        raw = bl.query(port, "INFO", "commandstats", timeout=30).decode("utf-8", "replace")
        for m in re.finditer(r"cmdstat_(set|get):calls=(\d+),.*rejected_calls=(\d+),failed_calls=(\d+)", raw):
            t = m.group(1).upper()
            out[t] += int(m.group(2))
            out[t + "_bad"] += int(m.group(3)) + int(m.group(4))
    return out


def rb_argv(name: str, setup, test: str, p: int, pin: bool, threads: int) -> list:
    return client_pin(name, pin) + [bl.client_binary("redis-benchmark")] + (
        ["--cluster"] if is_cluster(name) else []) + (["--threads", str(threads)] if threads > 1 else []) + [
        "-h", "127.0.0.1", "-p", str(setup.port), "-c", str(CLIENTS), "-P", str(p), "-t", test.lower(),
        "-d", str(VALUE_BYTES), "-r", str(KEYSPACE), "-n", str(RB_REQUESTS), "-q", "--csv"]


def task_busy_seconds() -> float:
    """user + nice + system time of all CPUs from /proc/stat: what processes
    were charged (irq and softirq time, which the kernel may keep out of the
    tasks' own figures, left out)."""
    with open("/proc/stat") as f:
        ticks = f.readline().split()[1:4]
    return sum(int(t) for t in ticks) / os.sysconf("SC_CLK_TCK")


def snapshot(setup, test: str, pid: int) -> tuple:
    """(time, calls of test, bad calls of test, servers' CPU s, client's CPU s,
    every CPU's busy s, this process's CPU s)."""
    c = calls(setup.ports)
    me = resource.getrusage(resource.RUSAGE_SELF)
    busy = task_busy_seconds()
    return (time.monotonic(), c[test], c[test + "_bad"], cpu_seconds(setup.pids), cpu_seconds([pid]), busy,
            me.ru_utime + me.ru_stime)


def run_redis_benchmark_test(name: str, setup, test: str, p: int, pin: bool, threads: int, args) -> dict:
    """One redis-benchmark run of test, measured by the servers: after
    --warmup seconds, the calls they count over --window seconds; then the
    client is stopped (its -n is never reached). foreign_pct: the machine's
    busy CPU time in the window not spent by the servers, the client or this
    script, in % of one core."""
    argv = rb_argv(name, setup, test, p, pin, threads)
    proc = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True, start_new_session=True)
    try:
        time.sleep(args.warmup)
        a = snapshot(setup, test, proc.pid)
        time.sleep(args.window)
        b = snapshot(setup, test, proc.pid)
        running = proc.poll() is None
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
        out, err = proc.communicate()
    if not running:
        raise RuntimeError("redis-benchmark ended early (exit %s): %s\nstdout: %s\nstderr: %s"
                           % (proc.returncode, " ".join(argv), out.strip()[-300:], err.strip()[-300:]))
    n, bad, dt = b[1] - a[1], b[2] - a[2], b[0] - a[0]
    if bad or n <= 0:
        raise RuntimeError("the servers counted %d %ss and %d rejected or failed ones in the window" % (n, test, bad))
    foreign = (b[5] - a[5]) - (b[3] - a[3]) - (b[4] - a[4]) - (b[6] - a[6])
    return {"rps": n / dt, "requests": n, "window_s": dt, "server_cpu_us_per_op": (b[3] - a[3]) / n * 1e6,
            "client_cpu_us_per_op": (b[4] - a[4]) / n * 1e6, "foreign_pct": max(0.0, 100.0 * foreign / dt)}


def run_clean(name: str, setup, test: str, p: int, pin: bool, threads: int, args) -> dict:
    """run_redis_benchmark_test(), repeated (up to --retries times, after
    waiting up to 30 s for an idle machine) while other processes took more
    than --max-foreign % of a core in the window; the last attempt is kept."""
    for attempt in range(1, args.retries + 2):
        m = run_redis_benchmark_test(name, setup, test, p, pin, threads, args)
        m["attempts"] = attempt
        if not m["foreign_pct"] > args.max_foreign:
            return m
        bl.log("cluster: %s %s P=%d: %.0f rps with %.0f%% of a core used by other processes%s"
               % (name, test, p, m["rps"], m["foreign_pct"],
                  "; retrying" if attempt <= args.retries else "; KEPT (retries exhausted)"))
        if attempt <= args.retries:
            cl.wait_until_idle(30.0)
    return m


def run_redis_benchmark(name: str, setup, p: int, pin: bool, threads: int, args) -> dict:
    return {t: run_clean(name, setup, t, p, pin, threads, args) for t in TESTS}


def py_worker(argv) -> int:
    """`cluster_bench.py --py-worker PORT CLUSTER P SECONDS`: redis-py pipelines
    of P SETs, then of P GETs, for SECONDS each; prints {test: [requests, s]}."""
    import redis
    from redis.cluster import RedisCluster
    port, cluster, p, seconds = int(argv[0]), argv[1] == "1", int(argv[2]), float(argv[3])
    r = RedisCluster(host="127.0.0.1", port=port) if cluster else redis.Redis(host="127.0.0.1", port=port)
    value, out, rng = b"x" * VALUE_BYTES, {}, random.Random(1)
    for test in TESTS:
        done, t0 = 0, time.monotonic()
        while time.monotonic() - t0 < seconds:
            pipe = r.pipeline(transaction=False)
            for _ in range(p):
                key = PY_KEY % rng.randrange(KEYSPACE)
                pipe.set(key, value) if test == "SET" else pipe.get(key)
            pipe.execute()
            done += p
        out[test] = [done, time.monotonic() - t0]
    print(json.dumps(out))
    return 0


def run_redis_py(name: str, setup, p: int, seconds: float, pin: bool) -> dict:
    argv = client_pin(name, pin) + [sys.executable, str(Path(__file__).resolve()), "--py-worker", str(setup.port),
                                    "1" if is_cluster(name) else "0", str(p), str(seconds)]
    before, cpu0 = calls(setup.ports), cpu_seconds(setup.pids)
    res = bl.run_process(argv, 60 + 4 * seconds, "redis-py")
    server_cpu = cpu_seconds(setup.pids) - cpu0
    if res["returncode"] != 0:
        raise RuntimeError("redis-py client failed (exit %s): %s" % (res["returncode"], res["stderr"].strip()[-500:]))
    got = json.loads(res["stdout"].strip().splitlines()[-1])
    after = calls(setup.ports)
    for t in TESTS:
        if after[t] - before[t] < got[t][0] or after[t + "_bad"] > before[t + "_bad"]:
            raise RuntimeError("the servers counted %d %ss for %d sent, %d rejected or failed"
                               % (after[t] - before[t], t, got[t][0], after[t + "_bad"] - before[t + "_bad"]))
    total = sum(got[t][0] for t in TESTS)
    cpu = res["user_s"] + res["sys_s"]
    return {t: {"rps": got[t][0] / got[t][1], "requests": got[t][0], "window_s": got[t][1],
                "server_cpu_us_per_op": server_cpu / total * 1e6, "client_cpu_us_per_op": cpu / total * 1e6,
                "foreign_pct": None, "attempts": 1} for t in TESTS}


# --------------------------------------------------------------------- table
def medians(rows: list, col: str = "rps") -> dict:
    vals = {}
    for r in rows:
        vals.setdefault((r["client"], r["test"], int(r["pipeline"]), r["setup"]), []).append(float(r[col]))
    return {k: (statistics.median(v), len(v)) for k, v in vals.items()}


def cpu_table(rows: list, args) -> list:
    """Median CPU us per request of the servers (all nodes) and of the client,
    and the rate both cores could carry at that cost: ncores * 1e6 / (server + client)."""
    srv, cli = medians(rows, "server_cpu_us_per_op"), medians(rows, "client_cpu_us_per_op")
    ncores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1)
    out = ["", "CPU per request (medians; us of CPU time per request in the window, the servers' summed over "
           "nodes) and the rate %d cores could carry at that cost, %d x 10^6 / (server + client us):"
           % (ncores, ncores), "", "| client | test | P | setup | server us/op | client us/op | CPU-bound rate |",
           "|---|---|---|---|---|---|---|"]
    for tool in [t for t in args.tools if t in RB_THREADS]:
        for test in TESTS:
            for p in args.pipelines:
                for setup in args.setups:
                    k = (tool, test, p, setup)
                    if k in srv and k in cli:
                        su, cu = srv[k][0], cli[k][0]
                        out.append("| %s | %s | %d | %s | %.2f | %.2f | %s |"
                                   % (tool, test, p, setup, su, cu, fmt_rps(ncores * 1e6 / (su + cu))))
    return out


def fmt_rps(x) -> str:
    return "—" if x is None else "{:,.0f}".format(x)


def ratio(a, b) -> str:
    return "—" if a is None or not b else "%.2f" % (a / b)


def make_table(rows: list, args, versions: dict, load: str) -> str:
    med = medians(rows)
    get = lambda *k: med.get(k, (None, 0))[0]  # noqa: E731
    out = ["## Cluster: a 2-node ferry cluster vs one ferry node, a 2-node redis-server cluster and redis-server "
           "io-threads 2 (cluster.csv)", "",
           "-c %d -d %d -r %d, SET then GET, medians over %d rounds (setups alternating); ferry %s, redis-server %s; "
           "%s cores. Pinning: ferry-1 on CPU 0 with the client on CPU 1; ferry-2 and redis-2 one node per CPU "
           "(0, 1) with the client unpinned, sharing both; redis-iot2 and its client unpinned. "
           "redis-benchmark runs with --cluster against the clusters. Load average before the runs: %s."
           % (CLIENTS, VALUE_BYTES, KEYSPACE, args.rounds, versions.get("ferry", "—"), versions.get("redis", "—"),
              os.cpu_count(), load), "",
           "| client | test | P | ferry-1 | ferry-2 | redis-2 | redis-iot2 | ferry-2 / ferry-1 | ferry-2 / redis-2 "
           "| ferry-2 / redis-iot2 |", "|---|---|---|---|---|---|---|---|---|---|"]
    for tool in args.tools:
        for test in TESTS:
            for p in args.pipelines:
                v = {s: get(tool, test, p, s) for s in SETUPS}
                out.append("| %s | %s | %d | %s | %s | %s | %s | %s | %s | %s |"
                           % (tool, test, p, *(fmt_rps(v[s]) for s in SETUPS), ratio(v["ferry-2"], v["ferry-1"]),
                              ratio(v["ferry-2"], v["redis-2"]), ratio(v["ferry-2"], v["redis-iot2"])))
    out += ["", "Targets (issue #21): ferry-2 / ferry-1 >= 1.7 at P = 16 and 100; ferry-2 / redis-2 >= 3 at "
            "P = 100. redis-benchmark-t2 is redis-benchmark --threads 2 (for ferry-1 both threads on CPU 1). "
            "The redis-py rows are one Python thread: they measure the client, not the servers."]
    return "\n".join(out + cpu_table(rows, args) + [""])


# --------------------------------------------------------------------- main
def parse_args(argv=None):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--quick", action="store_true", help="smoke run: 1 round, warm-up %.1f s, window %.1f s, "
                    "redis-py 0.3 s" % (QUICK_WARMUP_S, QUICK_WINDOW_S))
    ap.add_argument("--rounds", type=int, default=None, help="rounds (default 3, --quick 1)")
    ap.add_argument("--warmup", type=float, default=None, help="unmeasured seconds at the start of each "
                    "redis-benchmark run (default %.1f)" % WARMUP_S)
    ap.add_argument("--window", type=float, default=None, help="measured seconds of each redis-benchmark run "
                    "(default %.1f)" % WINDOW_S)
    ap.add_argument("--pipelines", default=",".join(map(str, PIPELINES)), help="comma list of -P")
    ap.add_argument("--py-seconds", type=float, default=None, help="redis-py seconds per test (default 1)")
    ap.add_argument("--setups", default=",".join(SETUPS), help="comma list of %s" % ",".join(SETUPS))
    ap.add_argument("--tools", default=",".join(TOOLS), help="comma list of %s" % ",".join(TOOLS))
    ap.add_argument("--ferry", "--server", dest="ferry", default=None, help="ferry-server binary")
    ap.add_argument("--redis", default=None, help="redis-server binary")
    ap.add_argument("--out", default=str(bl.REPO / "results" / "bench"), help="CSV directory (default results/bench)")
    ap.add_argument("--tables", default=str(bl.REPO / "results" / "tables"), help="directory of cluster.md")
    ap.add_argument("--no-pin", action="store_true", help="do not use taskset")
    ap.add_argument("--max-foreign", type=float, default=10.0, metavar="PCT",
                    help="repeat a redis-benchmark run in whose window other processes used more than PCT %% "
                    "of a core (default 10)")
    ap.add_argument("--retries", type=int, default=None, help="repeats of a disturbed run (default 2, --quick 0)")
    args = ap.parse_args(argv)
    if args.retries is None:
        args.retries = 0 if args.quick else 2
    args.rounds = args.rounds or (1 if args.quick else 3)
    args.py_seconds = args.py_seconds or (0.3 if args.quick else 1.0)
    args.pipelines = [int(p) for p in args.pipelines.split(",") if p.strip()]
    args.warmup = args.warmup or (QUICK_WARMUP_S if args.quick else WARMUP_S)
    args.window = args.window or (QUICK_WINDOW_S if args.quick else WINDOW_S)
    args.setups = [s.strip() for s in args.setups.split(",") if s.strip()]
    args.tools = [t.strip() for t in args.tools.split(",") if t.strip()]
    for s in args.setups:
        if s not in SETUPS:
            raise SystemExit("unknown setup %r (choose from %s)" % (s, ",".join(SETUPS)))
    for t in args.tools:
        if t not in TOOLS:
            raise SystemExit("unknown client %r (choose from %s)" % (t, ",".join(TOOLS)))
    return args


def one_setup(args, name, binary, version, pin, rnd, pos, sink, rows, failures) -> None:
    try:
        setup = make_setup(name, binary, pin).start()
    except RuntimeError as e:
        failures.append("%s round %d: %s" % (name, rnd, str(e).splitlines()[0]))
        bl.log("cluster: !! %s round %d: %s" % (name, rnd, e))
        return
    try:
        for tool in args.tools:
            for p in args.pipelines:
                started = bl.utc_now()
                try:
                    got = (run_redis_benchmark(name, setup, p, pin, RB_THREADS[tool], args) if tool in RB_THREADS
                           else run_redis_py(name, setup, p, args.py_seconds, pin))
                except (RuntimeError, OSError, ValueError) as e:
                    failures.append("%s %s P=%d round %d: %s" % (name, tool, p, rnd, str(e).splitlines()[0]))
                    bl.log("cluster: !! %s %s P=%d round %d: %s" % (name, tool, p, rnd, e))
                    continue
                for t in TESTS:
                    g = got[t]
                    row = {"setup": name, "server_version": version, "nodes": len(setup.ports), "client": tool,
                           "test": t, "pipeline": p, "clients": CLIENTS if tool in RB_THREADS else 1, "round": rnd,
                           "order": pos, "requests": g["requests"], "attempts": g["attempts"],
                           "started_utc": started}
                    row.update({k: bl.fmt_num(g[k], 2 if k == "rps" else 3)
                                for k in ("rps", "window_s", "server_cpu_us_per_op", "client_cpu_us_per_op",
                                          "foreign_pct")})
                    sink.add(row)
                    rows.append(row)
                bl.log("cluster: round %d %-10s %-18s P=%-3d SET %10.0f rps  GET %10.0f rps  (CPU us/op SET, GET: "
                       "servers %.2f, %.2f; client %.2f, %.2f)"
                       % (rnd, name, tool, p, got["SET"]["rps"], got["GET"]["rps"],
                          got["SET"]["server_cpu_us_per_op"], got["GET"]["server_cpu_us_per_op"],
                          got["SET"]["client_cpu_us_per_op"], got["GET"]["client_cpu_us_per_op"]))
    finally:
        setup.cleanup()


def load_average() -> str:
    try:
        return " / ".join("%.2f" % x for x in os.getloadavg())
    except OSError:
        return "unknown"


def main(argv=None) -> int:
    if argv is None and sys.argv[1:2] == ["--py-worker"]:
        return py_worker(sys.argv[2:])
    args = parse_args(argv)
    bl.install_signal_handlers()
    if set(RB_THREADS) & set(args.tools) and not bl.client_binary("redis-benchmark"):
        raise SystemExit("cluster: redis-benchmark not found (apt-get install -y redis-tools)")
    kinds = {SETUP_KIND[s] for s in args.setups}
    binaries = {k: bl.server_binary(k, getattr(args, k)) for k in kinds}
    versions = {k: bl.server_version(k, b) for k, b in binaries.items()}
    pin = bl.pinning_available() and not args.no_pin
    tmp = tempfile.mkdtemp(prefix="ferry-bench-cluster-bin-")
    if "ferry" in binaries:        # a rebuild during the run must not mix two binaries
        binaries["ferry"] = shutil.copy2(binaries["ferry"], os.path.join(tmp, "ferry-server"))
    out_dir, tab_dir = Path(args.out), Path(args.tables)
    out_path = out_dir / "cluster.csv"
    t0, started, load = time.monotonic(), bl.utc_now(), load_average()
    bl.log("cluster: %s; setups %s, tools %s, P %s, warm-up %.1f s + window %.1f s, %d rounds, load average %s"
           % (", ".join("%s %s" % kv for kv in versions.items()), ",".join(args.setups), ",".join(args.tools),
              ",".join(map(str, args.pipelines)), args.warmup, args.window,
              args.rounds, load))
    rows, failures = [], []
    sink = bl.CsvAppender(out_path, COLUMNS)
    try:
        for rnd in range(1, args.rounds + 1):
            k = (rnd - 1) % len(args.setups)
            order = args.setups[k:] + args.setups[:k]
            for pos, name in enumerate(order, start=1):
                kind = SETUP_KIND[name]
                one_setup(args, name, binaries[kind], versions[kind], pin, rnd, pos, sink, rows, failures)
    finally:
        sink.close()
        shutil.rmtree(tmp, ignore_errors=True)
        bl.record_window(out_dir, "cluster", started, bl.utc_now(), pinning=bl.pinning_description(pin),
                         rounds=args.rounds, warmup_s=args.warmup, window_s=args.window, clients=CLIENTS,
                         value_bytes=VALUE_BYTES, load_average=load, rows=sink.count, git_sha=bl.git_sha())
    if rows:
        table = make_table(rows, args, versions, load)
        tab_dir.mkdir(parents=True, exist_ok=True)
        tmp_md = tab_dir / "cluster.md.tmp"
        tmp_md.write_text(table)
        os.replace(tmp_md, tab_dir / "cluster.md")
        bl.log("\n" + table)
        bl.log("cluster: wrote %s" % (tab_dir / "cluster.md"))
    return bl.report_runs("cluster", sink.count, out_path, t0, failures)


if __name__ == "__main__":
    bl.run_main(main)
