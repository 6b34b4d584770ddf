"""Replication cost, ferry vs redis-server side by side (`make bench-repl`).

What (every run on fresh servers; --trials times, the two kinds alternating
which goes first each trial, and the replica counts alternating 0,1,2 /
2,1,0; the primary under `taskset -c 0`, redis-benchmark under
`taskset -c 1` when taskset and two CPUs are there, replicas on the client's CPU
(`--replicas-unpinned` leaves them to the scheduler, which on two cores puts them
on the primary's CPU part of the time);
replicas are always the same kind as their primary):
  1. throughput: redis-benchmark -t set -c 50 -P 100 -r 100000 -d 64 -n N
     against a primary with 0, 1 and 2 replicas attached (REPLICAOF, then
     waited for until every replica says master_link_status:up and the
     primary lists it state=online). After the run the replicas must catch
     up to the primary's master_repl_offset and hold the same DBSIZE, and
     the primary's INFO commandstats must count >= N SETs (redis-benchmark
     counts error replies as successes), else the run is a failure.
     Metrics: set_rps, catchup_s (benchmark end -> every replica at the
     primary's offset).
  2. replication lag under that load: every 50 ms (one persistent
     connection to each server) the primary's INFO replication then each
     replica's; lag = primary master_repl_offset - the replica's own
     master_repl_offset (a lower bound of the lag at the primary's sample:
     the replica is read a moment later), the worst replica per sample,
     clamped at 0. Also the primary's view (slaveN offset=, which replicas
     only refresh with REPLCONF ACK, about once a second): ack_lag_*.
     Metrics: lag_median_bytes, lag_max_bytes, ack_lag_median_bytes,
     ack_lag_max_bytes, lag_samples; stream_mb_s (the primary's offset
     growth, first to last sample) and lag_median_ms / lag_max_ms (the lag
     in bytes over that rate: a primary that writes 3x faster makes a
     3x bigger byte lag for the same delay); full_resyncs_during_run (INFO
     stats sync_full growth: a replica dropped, e.g. for its output buffer
     limit, and was fully resynced).
  3. full sync of K keys (DEBUG POPULATE K, default 1000000) to one fresh
     empty replica, disk (repl-diskless-sync no) and diskless
     (repl-diskless-sync yes, repl-diskless-sync-delay 0): seconds from
     sending REPLICAOF until the replica reports master_link_status:up and
     DBSIZE equal to the primary's (polled every 10 ms). Metrics:
     full_sync_disk_s, full_sync_diskless_s (replicas = 1).
Output: <out>/repl.csv (metric, kind, replicas, trial, value), one row per
measurement, written as it goes; a Markdown summary (medians over the
trials, drop vs 0 replicas, ferry/redis ratios) on stdout. The ferry binary
measured is a copy taken at the start (the snapshot may be replaced during
the run). A failed run is logged and skipped; the exit status is then 1.

Why: a replicated primary copies every write into the backlog and to each
replica's socket; this shows what that costs ferry against redis-server,
how far replicas fall behind under a pipelined write load, and how fast a
new replica gets a full copy of the data set.
"""
from __future__ import annotations

import argparse
import os
import shutil
import socket
import statistics
import tempfile
import threading
import time
from pathlib import Path

import benchlib as bl

COLUMNS = ["metric", "kind", "replicas", "trial", "value"]
DEFAULT_FERRY = str(bl.REPO / "build" / "ferry-server")
REPLICA_COUNTS = (0, 1, 2)
KEYSPACE = 100000
VALUE_BYTES = 64
CLIENTS, PIPELINE = 50, 100
SAMPLE_S = 0.05
ATTACH_TIMEOUT = 30.0
CATCHUP_TIMEOUT = 60.0
SYNC_TIMEOUT = 180.0
# every server: no dump at exit, DEBUG from loopback, no 5 s wait before a diskless sync
COMMON_ARGS = ["--enable-debug-command", "local", "--appendonly", "no", "--repl-diskless-sync-delay", "0"]


# --------------------------------------------------------------------- RESP
class Conn:
    """One persistent RESP2 connection (the sampler must not pay a connect per query)."""

    def __init__(self, port: int, timeout: float = 30.0):
        self.sock = socket.create_connection(("127.0.0.1", port), timeout=timeout)
        self.sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        self.buf = bytearray()

    def close(self) -> None:
        try:
            self.sock.close()
        except OSError:
            pass

    def _line(self) -> bytes:
        while True:
            nl = self.buf.find(b"\r\n")
            if nl >= 0:
                line = bytes(self.buf[:nl])
                del self.buf[:nl + 2]
                return line
            self._fill()

    def _fill(self) -> None:
        chunk = self.sock.recv(1 << 16)
        if not chunk:
            raise RuntimeError("connection closed")
        self.buf += chunk

    def _reply(self):
        line = self._line()
        t, rest = line[:1], line[1:]
        if t == b"+":
            return rest.decode()
        if t == b"-":
            raise RuntimeError("error reply: %s" % rest.decode("utf-8", "replace"))
        if t == b":":
            return int(rest)
        if t == b"$":
            n = int(rest)
            if n < 0:
                return None
            while len(self.buf) < n + 2:
                self._fill()
            data = bytes(self.buf[:n])
            del self.buf[:n + 2]
            return data.decode("utf-8", "replace")
        if t == b"*":
            n = int(rest)
            return None if n < 0 else [self._reply() for _ in range(n)]
        raise RuntimeError("unexpected reply line %r" % line[:100])

    def call(self, *args):
        self.sock.sendall(bl.encode_command(*args))
        return self._reply()

    def info(self, section: str = "replication") -> dict:
        raw = self.call("INFO", section) or ""
        return dict(l.split(":", 1) for l in raw.split("\r\n") if ":" in l and not l.startswith("#"))


def one(port: int, *args, timeout: float = 30.0):
    c = Conn(port, timeout)
    try:
        return c.call(*args)
    finally:
        c.close()


def slaves(info: dict) -> list:
    """The primary's slaveN lines as dicts (ip, port, state, offset, lag)."""
    out = []
    for k, v in info.items():
        if k.startswith("slave") and k[5:].isdigit():
            out.append(dict(f.split("=", 1) for f in v.split(",") if "=" in f))
    return out


def set_calls(port: int) -> int:
    c = Conn(port)
    try:
        stat = c.info("commandstats").get("cmdstat_set", "")
    finally:
        c.close()
    fields = dict(f.split("=", 1) for f in stat.split(",") if "=" in f)
    return int(fields.get("calls", 0))


def sync_full(port: int):
    """INFO stats sync_full (full resyncs served), None if the server has no such field."""
    c = Conn(port)
    try:
        v = c.info("stats").get("sync_full")
    finally:
        c.close()
    return int(v) if v is not None and v.isdigit() else None


def poll(cond, timeout: float, what: str, interval: float = 0.01, detail=lambda: ""):
    """Call cond() until it returns something truthy; RuntimeError after timeout."""
    deadline = time.monotonic() + timeout
    while True:
        v = cond()
        if v:
            return v
        if time.monotonic() > deadline:
            raise RuntimeError("timed out after %.0f s waiting for %s %s" % (timeout, what, detail()))
        time.sleep(interval)


# --------------------------------------------------------------------- servers
def start(kind: str, binary: str, pin: bool, extra=(), replica_cpu=None) -> bl.Server:
    """A server; pin: the primary's CPU; replica_cpu: a replica's CPU (the client's), or None: unpinned."""
    wrapper = ["taskset", "-c", replica_cpu] if replica_cpu else []
    srv = bl.Server(kind, binary, pin=pin, wrapper=wrapper, startup_timeout=30.0)
    srv.extra_args = ["--dir", srv.workdir] + COMMON_ARGS + list(extra)
    return srv.start()


def attach(primary: bl.Server, replica: bl.Server) -> None:
    reply = one(replica.port, "REPLICAOF", "127.0.0.1", primary.port)
    if not str(reply).startswith("OK"):
        raise RuntimeError("REPLICAOF answered %r" % (reply,))


def link_up(port: int) -> bool:
    c = Conn(port)
    try:
        return c.info().get("master_link_status") == "up"
    finally:
        c.close()


def wait_attached(primary: bl.Server, replicas: list, timeout: float) -> None:
    ports = {str(r.port) for r in replicas}

    def ready():
        if not all(link_up(r.port) for r in replicas):
            return False
        c = Conn(primary.port)
        try:
            online = {s.get("port") for s in slaves(c.info()) if s.get("state") == "online"}
        finally:
            c.close()
        return ports <= online

    def detail():
        try:
            return "(primary INFO replication: %s; replica logs: %s)" % (
                one(primary.port, "INFO", "replication").replace("\r\n", " "),
                " | ".join(r.log_tail(3).replace("\n", " / ") for r in replicas))
        except (RuntimeError, OSError) as e:
            return "(%s)" % e
    poll(ready, timeout, "%d replica(s) online" % len(replicas), 0.02, detail)


# --------------------------------------------------------------------- lag sampler
class LagSampler(threading.Thread):
    """Every SAMPLE_S: primary INFO replication, then each replica's."""

    def __init__(self, primary: bl.Server, replicas: list):
        super().__init__(daemon=True)
        self.primary = primary
        self.replicas = replicas
        self.stop_evt = threading.Event()
        self.lags, self.ack_lags, self.error = [], [], None
        self.first = self.last = None          # (monotonic time, primary offset) of the first / last sample

    def stream_rate(self):
        """Bytes a second the primary's offset grew between the first and last sample."""
        if not self.first or self.last[0] <= self.first[0]:
            return None
        return (self.last[1] - self.first[1]) / (self.last[0] - self.first[0])

    def run(self):
        conns = []
        try:
            p = Conn(self.primary.port)
            conns.append(p)
            rs = [Conn(r.port) for r in self.replicas]
            conns += rs
            next_t = time.monotonic()
            while not self.stop_evt.is_set():
                t = time.monotonic()
                pinfo = p.info()
                poff = int(pinfo["master_repl_offset"])
                self.last = (t, poff)
                if self.first is None:
                    self.first = self.last
                roffs = [int(c.info()["master_repl_offset"]) for c in rs]
                acks = [int(s.get("offset", 0)) for s in slaves(pinfo)]
                self.lags.append(max(0, max(poff - r for r in roffs)))
                if acks:
                    self.ack_lags.append(max(0, max(poff - a for a in acks)))
                next_t += SAMPLE_S
                delay = next_t - time.monotonic()
                if delay < 0:                        # a slow sample: do not burst to catch up
                    next_t = time.monotonic()
                    delay = 0
                self.stop_evt.wait(delay)
        except (RuntimeError, OSError, KeyError, ValueError) as e:
            self.error = e
        finally:
            for c in conns:
                c.close()


def offsets_equal(primary: bl.Server, replicas: list) -> bool:
    c = Conn(primary.port)
    try:
        poff = int(c.info()["master_repl_offset"])
    finally:
        c.close()
    for r in replicas:
        c = Conn(r.port)
        try:
            if int(c.info()["master_repl_offset"]) != poff:
                return False
        finally:
            c.close()
    return True


# --------------------------------------------------------------------- experiments
class Recorder:
    def __init__(self, path: Path):
        self.rows, self.failures, self.skipped = [], [], []
        self.broken, self.keep_going = set(), False
        self.out = bl.CsvAppender(path, COLUMNS)

    def add(self, metric, kind, replicas, trial, value):
        row = dict(metric=metric, kind=kind, replicas=replicas, trial=trial, value=value)
        self.rows.append(row)
        self.out.add(row)
        bl.log("repl: %-5s r=%d #%d %-22s %s" % (kind, replicas, trial, metric, value))

    def run(self, label, group, fn, *a):
        """fn(*a); a failure is logged, and unless keep_going the later runs
        of the same group (kind + experiment) are skipped: a server without
        working replication would otherwise wait out every deadline."""
        if group in self.broken:
            bl.log("repl: skipped %s (an earlier %s run failed)" % (label, group))
            self.skipped.append(label)
            return None
        try:
            return fn(*a)
        except (RuntimeError, OSError, ValueError, KeyError) as e:
            bl.log("repl: FAILED %s: %s" % (label, e))
            self.failures.append("%s: %s" % (label, str(e).splitlines()[0] if str(e) else type(e).__name__))
            if not self.keep_going:
                self.broken.add(group)
            return None


def throughput_run(args, rec, kind, binary, nrep, trial) -> None:
    servers = []
    sampler = None
    try:
        primary = start(kind, binary, args.pin)
        servers.append(primary)
        replicas = []
        for _ in range(nrep):
            r = start(kind, binary, False, replica_cpu=bl.CLIENT_CPU if args.pin and not args.replicas_unpinned else None)
            servers.append(r)
            replicas.append(r)
        for r in replicas:
            attach(primary, r)
        if replicas:
            wait_attached(primary, replicas, ATTACH_TIMEOUT)
        sets0 = set_calls(primary.port)
        syncs0 = sync_full(primary.port)
        argv = bl.client_argv("redis-benchmark", args.bench, primary.port, "SET", CLIENTS, PIPELINE,
                              args.requests, VALUE_BYTES, KEYSPACE, args.pin)
        if replicas:
            sampler = LagSampler(primary, replicas)
            sampler.start()
        res = bl.run_process(argv, 120 + args.requests / 5000.0, "redis-benchmark")
        t_end = time.monotonic()
        if sampler:
            sampler.stop_evt.set()
            sampler.join(30)
        rows = [r for r in bl.parse_bench_csv(res["stdout"]) if r["test"] == "SET"]
        if res["returncode"] != 0 or not rows:
            raise RuntimeError("redis-benchmark failed (exit %s): %s %s"
                               % (res["returncode"], res["stdout"][-300:], res["stderr"][-300:]))
        got = set_calls(primary.port) - sets0
        if got < args.requests:
            raise RuntimeError("the primary counted %d SETs for %d sent" % (got, args.requests))
        catchup = None
        if replicas:
            poll(lambda: offsets_equal(primary, replicas), CATCHUP_TIMEOUT, "replicas to reach the primary's offset")
            catchup = time.monotonic() - t_end
            want = bl.dbsize(primary.port)
            for r in replicas:
                have = bl.dbsize(r.port)
                if have != want:
                    raise RuntimeError("replica on port %d holds %d keys, the primary %d" % (r.port, have, want))
            if sampler.error is not None:
                raise RuntimeError("lag sampler: %s" % sampler.error)
            if not sampler.lags:
                raise RuntimeError("lag sampler took no sample")
            syncs1 = sync_full(primary.port)
        rec.add("set_rps", kind, nrep, trial, "%.0f" % rows[-1]["rps"])
        if replicas:
            rec.add("catchup_s", kind, nrep, trial, "%.3f" % catchup)
            rec.add("lag_samples", kind, nrep, trial, len(sampler.lags))
            rec.add("lag_median_bytes", kind, nrep, trial, "%.0f" % statistics.median(sampler.lags))
            rec.add("lag_max_bytes", kind, nrep, trial, max(sampler.lags))
            rate = sampler.stream_rate()
            if rate:
                rec.add("stream_mb_s", kind, nrep, trial, "%.1f" % (rate / 1e6))
                rec.add("lag_median_ms", kind, nrep, trial, "%.1f" % (1000 * statistics.median(sampler.lags) / rate))
                rec.add("lag_max_ms", kind, nrep, trial, "%.1f" % (1000 * max(sampler.lags) / rate))
            if syncs0 is not None and syncs1 is not None:
                rec.add("full_resyncs_during_run", kind, nrep, trial, syncs1 - syncs0)
            if sampler.ack_lags:
                rec.add("ack_lag_median_bytes", kind, nrep, trial, "%.0f" % statistics.median(sampler.ack_lags))
                rec.add("ack_lag_max_bytes", kind, nrep, trial, max(sampler.ack_lags))
    finally:
        if sampler is not None and sampler.is_alive():
            sampler.stop_evt.set()
            sampler.join(30)
        for s in reversed(servers):
            s.cleanup()


def full_sync_run(args, rec, kind, binary, mode, trial) -> None:
    servers = []
    try:
        primary = start(kind, binary, args.pin, ["--repl-diskless-sync", "yes" if mode == "diskless" else "no"])
        servers.append(primary)
        conf = one(primary.port, "CONFIG", "GET", "repl-diskless-sync*")
        conf = dict(zip(conf[::2], conf[1::2])) if isinstance(conf, list) else {}
        want_conf = {"repl-diskless-sync": "yes" if mode == "diskless" else "no", "repl-diskless-sync-delay": "0"}
        if any(conf.get(k) != v for k, v in want_conf.items()):
            raise RuntimeError("the primary's CONFIG GET repl-diskless-sync* is %r, want %r" % (conf, want_conf))
        reply = one(primary.port, "DEBUG", "POPULATE", args.sync_keys, timeout=600)
        if reply != "OK":
            raise RuntimeError("DEBUG POPULATE answered %r" % (reply,))
        want = bl.dbsize(primary.port)
        if want != args.sync_keys:
            raise RuntimeError("DEBUG POPULATE %d left %d keys" % (args.sync_keys, want))
        replica = start(kind, binary, False)
        servers.append(replica)
        c = Conn(replica.port, timeout=60)
        try:
            t0 = time.monotonic()
            reply = c.call("REPLICAOF", "127.0.0.1", primary.port)
            if not str(reply).startswith("OK"):
                raise RuntimeError("REPLICAOF answered %r" % (reply,))

            def synced():
                return c.info().get("master_link_status") == "up" and c.call("DBSIZE") == want
            poll(synced, SYNC_TIMEOUT, "the full sync of %d keys (%s)" % (want, mode),
                 detail=lambda: "(replica log: %s)" % replica.log_tail(5).replace("\n", " / "))
            secs = time.monotonic() - t0
        finally:
            c.close()
        rec.add("full_sync_%s_s" % mode, kind, 1, trial, "%.3f" % secs)
    finally:
        for s in reversed(servers):
            s.cleanup()


# --------------------------------------------------------------------- summary
def med(rows, metric, kind, nrep):
    vals = [float(r["value"]) for r in rows if r["metric"] == metric and r["kind"] == kind and r["replicas"] == nrep]
    return statistics.median(vals) if vals else None


def spread(rows, metric, kind, nrep):
    vals = [float(r["value"]) for r in rows if r["metric"] == metric and r["kind"] == kind and r["replicas"] == nrep]
    return " (%.0f-%.0f)" % (min(vals), max(vals)) if len(vals) > 1 else ""


def fmt(x, spec="%.0f"):
    return "n/a" if x is None else spec % x


def ratio(a, b):
    return "n/a" if a is None or b is None or not b else "%.2f" % (a / b)


def print_summary(rows, kinds, args, labels) -> None:
    print("\n## Replication benchmark (medians of %d trial(s))\n" % args.trials)
    print("ferry = `%s`, redis = `%s`; SET -c %d -P %d -d %d -r %d -n %d; primary pinned: %s\n"
          % (labels.get("ferry", "-"), labels.get("redis", "-"), CLIENTS, PIPELINE, VALUE_BYTES, KEYSPACE,
             args.requests, "taskset -c 0 (client -c 1)" if args.pin else "no"))
    print("rps: median (min-max over the trials); drop: vs the same kind with 0 replicas\n")
    print("| replicas | ferry rps | ferry drop | redis rps | redis drop | ferry/redis |")
    print("|---:|---:|---:|---:|---:|---:|")
    for n in REPLICA_COUNTS:
        cells = []
        for k in ("ferry", "redis"):
            v, base = med(rows, "set_rps", k, n), med(rows, "set_rps", k, 0)
            drop = "-" if n == 0 or v is None or not base else "%.1f%%" % (100 * (1 - v / base))
            cells += [fmt(v) + spread(rows, "set_rps", k, n), drop]
        print("| %d | %s | %s | %s | %s | %s |" % ((n,) + tuple(cells) + (
            ratio(med(rows, "set_rps", "ferry", n), med(rows, "set_rps", "redis", n)),)))
    print("\nReplication lag under the SET load (worst replica per 50 ms sample; ack = the primary's slaveN "
          "offset; _ms = bytes / stream_mb_s, the primary's offset growth rate)\n")
    print("| replicas | metric | ferry | redis | ferry/redis |")
    print("|---:|---|---:|---:|---:|")
    for n in REPLICA_COUNTS[1:]:
        for m in ("lag_median_bytes", "lag_max_bytes", "ack_lag_median_bytes", "ack_lag_max_bytes",
                  "stream_mb_s", "lag_median_ms", "lag_max_ms", "catchup_s", "full_resyncs_during_run"):
            f, r = med(rows, m, "ferry", n), med(rows, m, "redis", n)
            spec = "%.1f" if m.endswith(("_ms", "mb_s")) else "%.3f" if m.endswith("_s") else "%.0f"
            print("| %d | %s | %s | %s | %s |" % (n, m, fmt(f, spec), fmt(r, spec), ratio(f, r)))
    print("\nFull sync of %d keys to one empty replica (s, REPLICAOF -> link up and same DBSIZE)\n" % args.sync_keys)
    print("| mode | ferry | redis | ferry/redis |")
    print("|---|---:|---:|---:|")
    for mode in ("disk", "diskless"):
        m = "full_sync_%s_s" % mode
        f, r = med(rows, m, "ferry", 1), med(rows, m, "redis", 1)
        print("| %s | %s | %s | %s |" % (mode, fmt(f, "%.3f"), fmt(r, "%.3f"), ratio(f, r)))
    print()


# --------------------------------------------------------------------- main
def parse_args(argv):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--ferry", default=None, help="ferry-server binary (default $FERRY_SERVER or %s)" % DEFAULT_FERRY)
    ap.add_argument("--redis", default=None, help="redis-server binary (default: redis-server on PATH)")
    ap.add_argument("--trials", type=int, default=3, help="trials (default 3)")
    ap.add_argument("--requests", type=int, default=3000000, help="SET requests per benchmark run (default 3000000)")
    ap.add_argument("--sync-keys", type=int, default=1000000, help="keys for the full-sync runs (default 1000000)")
    ap.add_argument("--quick", action="store_true", help="smoke run: 1 trial, 200000 requests, 100000 sync keys")
    ap.add_argument("--servers", default="ferry,redis", help="comma list of ferry,redis (default both)")
    ap.add_argument("--skip", default="", help="comma list of throughput,sync to skip")
    ap.add_argument("--out", default=str(bl.REPO / "results" / "bench"), help="output directory")
    ap.add_argument("--no-pin", action="store_true", help="do not use taskset")
    ap.add_argument("--replicas-unpinned", action="store_true",
                    help="leave replicas unpinned (default with pinning: on the client's CPU, so a replica applying "
                         "the stream does not take the primary's CPU on a 2-core machine)")
    ap.add_argument("--keep-going", action="store_true",
                    help="after a failed run, still try the later runs of that kind and experiment")
    args = ap.parse_args(argv)
    if args.quick:
        args.trials, args.requests, args.sync_keys = 1, 200000, 100000
    args.servers = [s.strip() for s in args.servers.split(",") if s.strip()]
    args.skip = {s.strip() for s in args.skip.split(",") if s.strip()}
    if args.ferry is None:
        args.ferry = os.environ.get("FERRY_SERVER") or DEFAULT_FERRY
    return args


def main(argv=None) -> int:
    args = parse_args(argv)
    bl.install_signal_handlers()
    args.bench = bl.client_binary("redis-benchmark")
    if not args.bench:
        raise SystemExit("redis-benchmark not found (apt-get install -y redis-tools)")
    args.pin = bl.pinning_available() and not args.no_pin
    binaries = {s: bl.server_binary(s, getattr(args, s)) for s in args.servers}
    labels = dict(binaries)
    t_start, started, load0 = time.monotonic(), bl.utc_now(), os.getloadavg()
    snap_dir = tempfile.mkdtemp(prefix="ferry-bench-repl-bin-")
    if "ferry" in binaries:      # the snapshot may be replaced during the run
        binaries["ferry"] = shutil.copy2(binaries["ferry"], os.path.join(snap_dir, "ferry-server"))
    out = Path(args.out)
    rec = Recorder(out / "repl.csv")
    rec.keep_going = args.keep_going
    try:
        for trial in range(1, args.trials + 1):
            order = args.servers if trial % 2 else args.servers[::-1]
            counts = REPLICA_COUNTS if trial % 2 else REPLICA_COUNTS[::-1]
            if "throughput" not in args.skip:
                for kind in order:
                    for n in counts:
                        rec.run("%s throughput r=%d #%d" % (kind, n, trial),
                                "%s %s" % (kind, "throughput" if n == 0 else "replicated throughput"), throughput_run,
                                args, rec, kind, binaries[kind], n, trial)
            if "sync" not in args.skip:
                modes = ("disk", "diskless") if trial % 2 else ("diskless", "disk")
                for kind in order:
                    for mode in modes:
                        rec.run("%s full sync %s #%d" % (kind, mode, trial), "%s full sync" % kind, full_sync_run,
                                args, rec, kind, binaries[kind], mode, trial)
    finally:
        rec.out.close()
        shutil.rmtree(snap_dir, ignore_errors=True)
        for s in list(bl._LIVE):      # a run interrupted between start and its own cleanup
            s.cleanup()
    bl.record_window(out, "repl", started, bl.utc_now(), pinning=bl.pinning_description(args.pin),
                     trials=args.trials, requests=args.requests, sync_keys=args.sync_keys, keyspace=KEYSPACE,
                     clients=CLIENTS, pipeline=PIPELINE, value_bytes=VALUE_BYTES,
                     loadavg_start=[round(x, 2) for x in load0],
                     loadavg_end=[round(x, 2) for x in os.getloadavg()], git_sha=bl.git_sha())
    print_summary(rec.rows, args.servers, args, labels)
    for label in rec.skipped:
        bl.log("  skipped: %s" % label)
    return bl.report_runs("repl", rec.out.count, out / "repl.csv", t_start, rec.failures)


if __name__ == "__main__":
    bl.run_main(main)
