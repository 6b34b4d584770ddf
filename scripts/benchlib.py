"""Shared plumbing for ferry's benchmark experiment scripts (stdlib only).

What: start and stop ferry-server / redis-server processes on free loopback
ports (each a fresh process in its own process group and temporary directory,
waited for until it answers PING, killed cleanly at the end and at interpreter
exit); run a load generator (redis-benchmark or build/ferry-bench) and parse
its CSV output; pre-populate keys over one pipelined raw-RESP socket; read a
process's RSS; record each experiment's time window for the manifest.

Why: every experiment (sweep, syscalls, instructions, memory) needs the same
server lifecycle and client handling, and they must behave identically so the
numbers are comparable. Pinning: on a machine with >= 2 CPUs and `taskset`,
the server runs under `taskset -c 0` and the client under `taskset -c 1`
(recorded in the manifest via windows.json); otherwise nothing is pinned.
"""
from __future__ import annotations

import atexit
import csv
import datetime as _dt
import io
import json
import os
import random
import re
import resource
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
DEFAULT_FERRY = REPO / "build" / "ferry-server"
DEFAULT_FERRY_BENCH = REPO / "build" / "ferry-bench"
KEY_FMT = "key:%012d"          # redis-benchmark's key:__rand_int__ expansion (16 bytes)
SERVER_CPU = "0"
CLIENT_CPU = "1"

_RNG = random.Random()
_LIVE: list = []               # every Server started and not yet stopped


# --------------------------------------------------------------------- misc
def utc_now() -> str:
    return _dt.datetime.now(_dt.timezone.utc).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def log(msg: str) -> None:
    print(msg, flush=True)


def which(name: str) -> str | None:
    return shutil.which(name)


def pinning_available() -> bool:
    """taskset present and CPUs 0 and 1 both usable by this process."""
    if not which("taskset"):
        return False
    try:
        cpus = os.sched_getaffinity(0)
    except (AttributeError, OSError):
        cpus = set(range(os.cpu_count() or 1))
    return 0 in cpus and 1 in cpus


def pin_prefix(role: str, enabled: bool) -> list:
    """`taskset -c 0` for the server, `taskset -c 1` for the client, or []."""
    if not enabled:
        return []
    return ["taskset", "-c", SERVER_CPU if role == "server" else CLIENT_CPU]


def pinning_description(enabled: bool) -> dict:
    if enabled:
        return {"server": "taskset -c %s" % SERVER_CPU, "client": "taskset -c %s" % CLIENT_CPU}
    return {"server": "none", "client": "none"}


def install_signal_handlers() -> None:
    """SIGTERM/SIGHUP -> SystemExit so that finally blocks and atexit run."""
    def _exit(signum, _frame):
        raise SystemExit(128 + signum)
    for s in (signal.SIGTERM, signal.SIGHUP):
        try:
            signal.signal(s, _exit)
        except (ValueError, OSError):
            pass


# --------------------------------------------------------------------- ports
def _ephemeral_range():
    try:
        with open("/proc/sys/net/ipv4/ip_local_port_range") as f:
            lo, hi = (int(x) for x in f.read().split())
        return lo, hi
    except (OSError, ValueError):
        return 32768, 60999


def _bindable(port: int) -> bool:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            s.bind(("127.0.0.1", port))
        except OSError:
            return False
    return True


def free_port() -> int:
    """A free TCP port, never 6379, preferably below the ephemeral range so
    that the benchmark's many client sockets cannot be handed it."""
    lo, _hi = _ephemeral_range()
    if lo > 20000:
        for _ in range(100):
            port = _RNG.randint(15000, lo - 1)
            if port != 6379 and _bindable(port):
                return port
    while True:
        with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
            s.bind(("127.0.0.1", 0))
            port = s.getsockname()[1]
        if port != 6379:
            return port


# --------------------------------------------------------------------- servers
def server_binary(kind: str, override: str | None = None) -> str:
    if kind == "ferry":
        path = override or os.environ.get("FERRY_SERVER") or str(DEFAULT_FERRY)
    elif kind == "redis":
        path = override or os.environ.get("REDIS_SERVER") or which("redis-server") or "/usr/bin/redis-server"
    else:
        raise ValueError("unknown server kind %r" % kind)
    if not (os.path.isfile(path) and os.access(path, os.X_OK)):
        hint = "run `make`" if kind == "ferry" else "apt-get install -y redis-server"
        raise SystemExit("%s server binary not found or not executable: %s (%s)" % (kind, path, hint))
    return os.path.abspath(path)


def server_version(kind: str, binary: str) -> str:
    """Version from `<binary> --version`: redis's v=X.Y.Z; ferry's own
    build=ferry-X.Y.Z (its v= field is the Redis version it emulates)."""
    try:
        out = subprocess.run([binary, "--version"], capture_output=True, text=True, timeout=10).stdout
    except (OSError, subprocess.SubprocessError):
        return "unknown"
    if kind == "ferry":
        m = re.search(r"build=ferry-(\S+)", out)
        if m:
            return m.group(1)
    m = re.search(r"v=(\S+)", out)
    return m.group(1) if m else (out.strip().splitlines() or ["unknown"])[0]


def ping(port: int, timeout: float = 1.0) -> bool:
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=timeout) as s:
            s.settimeout(timeout)
            s.sendall(b"*1\r\n$4\r\nPING\r\n")
            data = b""
            while not data.endswith(b"\r\n"):
                chunk = s.recv(256)
                if not chunk:
                    break
                data += chunk
            return data == b"+PONG\r\n"
    except OSError:
        return False


class Server:
    """One ferry-server or redis-server process on a free loopback port.

    wrapper: argv prefix placed between taskset and the server (valgrind)."""

    def __init__(self, kind: str, binary: str, pin: bool = True, wrapper=(), startup_timeout: float = 20.0,
                 stop_timeout: float = 10.0, extra_args=()):
        self.kind = kind
        self.extra_args = [str(a) for a in extra_args]
        self.binary = binary
        self.pin = pin
        self.wrapper = list(wrapper)
        self.startup_timeout = startup_timeout
        self.stop_timeout = stop_timeout
        self.port = None
        self.proc = None
        self.workdir = tempfile.mkdtemp(prefix="ferry-bench-%s-" % kind)
        self.logpath = os.path.join(self.workdir, "server.log")
        self._log = None

    @property
    def pid(self) -> int:
        return self.proc.pid

    def argv(self, port: int) -> list:
        args = [self.binary, "--port", str(port), "--save", ""]
        if self.kind == "redis":
            args += ["--appendonly", "no", "--bind", "127.0.0.1", "--dir", self.workdir,
                     "--daemonize", "no"]
        return pin_prefix("server", self.pin) + self.wrapper + args + self.extra_args

    def start(self) -> "Server":
        errors = []
        for _attempt in range(5):          # the free port may be taken meanwhile
            port = free_port()
            self._log = open(self.logpath, "ab")
            self.proc = subprocess.Popen(self.argv(port), cwd=self.workdir, stdin=subprocess.DEVNULL,
                                         stdout=self._log, stderr=subprocess.STDOUT,
                                         start_new_session=True)
            self.port = port
            _LIVE.append(self)
            deadline = time.monotonic() + self.startup_timeout
            while True:
                if self.proc.poll() is not None:
                    errors.append("port %d: exited with status %s" % (port, self.proc.returncode))
                    break
                if ping(port) and self.proc.poll() is None:
                    return self
                if time.monotonic() > deadline:
                    errors.append("port %d: no +PONG within %.0fs" % (port, self.startup_timeout))
                    break
                time.sleep(0.02)
            self.stop()
        raise RuntimeError("%s server failed to start: %s\ncommand: %r\nlog tail:\n%s"
                           % (self.kind, "; ".join(errors), self.argv(self.port), self.log_tail()))

    def alive(self) -> bool:
        return self.proc is not None and self.proc.poll() is None

    def _signal_group(self, sig) -> None:
        # Own session/process group (start_new_session): pgid == our child's pid.
        try:
            os.killpg(self.proc.pid, sig)
        except (ProcessLookupError, PermissionError):
            pass

    def stop(self) -> int | None:
        """SIGTERM, wait (stop_timeout), then SIGKILL. Returns the exit status."""
        p = self.proc
        rc = None
        if p is not None:
            if p.poll() is None:
                self._signal_group(signal.SIGTERM)
                try:
                    p.wait(timeout=self.stop_timeout)
                except subprocess.TimeoutExpired:
                    self._signal_group(signal.SIGKILL)
                    p.wait(timeout=10)
            rc = p.returncode
            self._signal_group(signal.SIGKILL)   # leftovers in the group, if any
        if self._log is not None:
            self._log.close()
            self._log = None
        if self in _LIVE:
            _LIVE.remove(self)
        return rc

    def cleanup(self) -> None:
        self.stop()
        shutil.rmtree(self.workdir, ignore_errors=True)

    def rss_bytes(self) -> int:
        """VmRSS of the server process from /proc/<pid>/status, in bytes."""
        with open("/proc/%d/status" % self.proc.pid) as f:
            for line in f:
                if line.startswith("VmRSS:"):
                    parts = line.split()
                    return int(parts[1]) * {"kB": 1024, "mB": 1 << 20}.get(parts[2], 1024)
        raise RuntimeError("no VmRSS in /proc/%d/status" % self.proc.pid)

    def log_tail(self, n: int = 20) -> str:
        try:
            with open(self.logpath, "rb") as f:
                return b"\n".join(f.read().splitlines()[-n:]).decode("utf-8", "replace")
        except OSError:
            return "(no log)"

    def __enter__(self):
        return self.start()

    def __exit__(self, *exc):
        self.cleanup()


@atexit.register
def _kill_leftovers() -> None:
    for s in list(_LIVE):
        try:
            s.cleanup()
        except Exception:  # noqa: BLE001
            pass


# --------------------------------------------------------------------- RESP helpers
# --------------------------------------------------------------------- /proc probes
def proc_kb(pid: int, name: str, field: str) -> int:
    """A "<field>: <n> kB" line of /proc/<pid>/<name> (status: VmRSS,
    smaps_rollup: Pss ...), 0 if the process or the line is gone."""
    try:
        with open("/proc/%d/%s" % (pid, name)) as f:
            for line in f:
                if line.startswith(field + ":"):
                    return int(line.split()[1])
    except OSError:
        pass
    return 0


def rss_kb(pid: int) -> int:
    return proc_kb(pid, "status", "VmRSS")


def pss_kb(pid: int) -> int:
    return proc_kb(pid, "smaps_rollup", "Pss")


def children(pid: int) -> list:
    """The direct children of pid (a forked save or rewrite)."""
    try:
        with open("/proc/%d/task/%d/children" % (pid, pid)) as f:
            return [int(x) for x in f.read().split()]
    except OSError:
        return []


def encode_command(*args) -> bytes:
    """One RESP multibulk request (str/int arguments are UTF-8 encoded)."""
    out = [b"*%d\r\n" % len(args)]
    for a in args:
        if not isinstance(a, bytes):
            a = str(a).encode()
        out.append(b"$%d\r\n%s\r\n" % (len(a), a))
    return b"".join(out)


def command(port: int, *args, timeout: float = 10.0) -> bytes:
    """Send one command, return the raw first reply line (enough for
    integer/simple replies such as DBSIZE, FLUSHALL)."""
    with socket.create_connection(("127.0.0.1", port), timeout=timeout) as s:
        s.sendall(encode_command(*args))
        data = b""
        while b"\r\n" not in data:
            chunk = s.recv(4096)
            if not chunk:
                break
            data += chunk
    return data.split(b"\r\n", 1)[0]


def query(port: int, *args, timeout: float = 30.0) -> bytes:
    """One command; the complete reply's payload for +/-/: lines and bulk
    strings (enough for INFO, OBJECT ENCODING, counts)."""
    words = [a if isinstance(a, bytes) else str(a).encode() for a in args]
    with socket.create_connection(("127.0.0.1", port), timeout=timeout) as s:
        s.sendall(b"*%d\r\n" % len(words) + b"".join(b"$%d\r\n%s\r\n" % (len(w), w) for w in words))
        data = b""
        while b"\r\n" not in data:
            chunk = s.recv(1 << 16)
            if not chunk:
                raise RuntimeError("connection closed")
            data += chunk
        head, rest = data.split(b"\r\n", 1)
        if head[:1] != b"$":
            return head
        size = int(head[1:])
        if size < 0:
            return b""
        while len(rest) < size + 2:
            chunk = s.recv(1 << 16)
            if not chunk:
                raise RuntimeError("connection closed")
            rest += chunk
        return rest[:size]


def dbsize(port: int) -> int:
    line = command(port, "DBSIZE")
    if not line.startswith(b":"):
        raise RuntimeError("DBSIZE answered %r" % line)
    return int(line[1:])


def fill_keys(port: int, nkeys: int, value_bytes: int, batch: int = 10000, key_fmt: str = KEY_FMT,
              timeout: float = 120.0) -> float:
    """SET key_fmt % i = 'x' * value_bytes for i in [0, nkeys) over one socket,
    `batch` commands per write; every reply must be +OK. Returns seconds."""
    t0 = time.monotonic()
    value = b"x" * value_bytes
    vhdr = b"$%d\r\n" % value_bytes
    with socket.create_connection(("127.0.0.1", port), timeout=timeout) as s:
        s.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        for start in range(0, nkeys, batch):
            end = min(nkeys, start + batch)
            parts = []
            for i in range(start, end):
                k = (key_fmt % i).encode()
                parts.append(b"*3\r\n$3\r\nSET\r\n$%d\r\n%s\r\n%s%s\r\n" % (len(k), k, vhdr, value))
            s.sendall(b"".join(parts))
            want = 5 * (end - start)            # "+OK\r\n" each
            got = bytearray()
            while len(got) < want:
                chunk = s.recv(max(65536, want - len(got)))
                if not chunk:
                    raise RuntimeError("server closed the connection during fill")
                got += chunk
            if bytes(got) != b"+OK\r\n" * (end - start):
                raise RuntimeError("unexpected reply during fill: %r" % bytes(got[:200]))
    return time.monotonic() - t0


# --------------------------------------------------------------------- clients
CLIENT_CHOICES = ("redis-benchmark", "ferry-bench")
TEST_CHOICES = ("SET", "GET", "INCR", "MSET")


def client_binary(client: str, override: str | None = None) -> str | None:
    """Path of the load generator, or None when it does not exist."""
    if client == "redis-benchmark":
        path = override or which("redis-benchmark")
    elif client == "ferry-bench":
        path = override or os.environ.get("FERRY_BENCH") or str(DEFAULT_FERRY_BENCH)
    else:
        raise ValueError(client)
    if path and os.path.isfile(path) and os.access(path, os.X_OK):
        return os.path.abspath(path)
    return None


def normalize_test(name: str) -> str:
    """'MSET (10 keys)' -> 'MSET'; 'SET' -> 'SET'."""
    return name.strip().split()[0].upper() if name.strip() else name


def parse_bench_csv(text: str) -> list:
    """Parse redis-benchmark / ferry-bench --csv output into dicts with keys
    test, rps, avg_ms, min_ms, p50_ms, p95_ms, p99_ms, max_ms, p999_ms
    (p999_ms '' when the client has no such column). Lines that are not CSV
    rows (warnings) are ignored."""
    rows = [r for r in csv.reader(io.StringIO(text)) if r]
    header = None
    out = []
    colmap = {"rps": "rps", "avg_latency_ms": "avg_ms", "min_latency_ms": "min_ms",
              "p50_latency_ms": "p50_ms", "p95_latency_ms": "p95_ms", "p99_latency_ms": "p99_ms",
              "max_latency_ms": "max_ms", "p999_latency_ms": "p999_ms", "p99.9_latency_ms": "p999_ms"}
    for r in rows:
        if r[0].strip().lower() == "test":
            header = [c.strip().lower() for c in r]
            continue
        if header is None or len(r) != len(header):
            continue
        d = {"test": normalize_test(r[0]), "p999_ms": ""}
        ok = True
        for name, val in zip(header[1:], r[1:]):
            key = colmap.get(name)
            if key is None:
                continue
            try:
                d[key] = float(val)
            except ValueError:
                ok = False
        if ok and "rps" in d:
            out.append(d)
    return out


def client_argv(client: str, binary: str, port: int, test: str, clients: int, pipeline: int, requests: int,
                value_bytes: int, keyspace: int, pin: bool, congestion: str | None = None) -> list:
    """congestion: ferry-bench's --congestion (its sockets' TCP congestion
    control); None leaves the system's."""
    return pin_prefix("client", pin) + [
        binary, "-h", "127.0.0.1", "-p", str(port), "-c", str(clients), "-n", str(requests),
        "-P", str(pipeline), "-t", test.lower(), "-d", str(value_bytes), "-r", str(keyspace), "-q", "--csv"] + (
        ["--congestion", congestion] if congestion else [])


def system_congestion() -> str:
    """net.ipv4.tcp_congestion_control, or "" where it cannot be read."""
    try:
        return Path("/proc/sys/net/ipv4/tcp_congestion_control").read_text().strip()
    except OSError:
        return ""


def run_process(argv: list, timeout: float, label: str) -> dict:
    """Run argv to completion in its own process group; returns {'stdout',
    'stderr', 'returncode', 'wall_s', 'user_s', 'sys_s'}. The CPU seconds are
    the child's own (the RUSAGE_CHILDREN growth across its reaping: the
    scripts reap one child at a time, and taskset execs what it pins). A
    timeout kills the group and raises RuntimeError."""
    ru0 = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.monotonic()
    proc = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True, start_new_session=True)
    try:
        out, err = proc.communicate(timeout=timeout)
    except BaseException as e:     # timeout or interrupted: do not leave the process running
        try:
            os.killpg(proc.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        proc.communicate()
        if isinstance(e, subprocess.TimeoutExpired):
            raise RuntimeError("%s timed out after %.0fs: %s" % (label, timeout, " ".join(argv))) from None
        raise
    wall = time.monotonic() - t0
    ru1 = resource.getrusage(resource.RUSAGE_CHILDREN)
    return {"stdout": out, "stderr": err, "returncode": proc.returncode, "wall_s": wall,
            "user_s": ru1.ru_utime - ru0.ru_utime, "sys_s": ru1.ru_stime - ru0.ru_stime}


def run_client(client: str, binary: str, port: int, test: str, clients: int, pipeline: int, requests: int,
               value_bytes: int, keyspace: int, pin: bool, timeout: float | None = None,
               congestion: str | None = None) -> dict:
    """Run one load-generator process; return its parsed row plus 'wall_s'
    and the client's own CPU seconds ('user_s', 'sys_s').
    Raises RuntimeError on failure (exit status, no row, timeout)."""
    argv = client_argv(client, binary, port, test, clients, pipeline, requests, value_bytes, keyspace, pin,
                       congestion)
    if timeout is None:
        timeout = 60.0 + requests / 5000.0
    res = run_process(argv, timeout, client)
    out, err = res["stdout"], res["stderr"]
    rows = parse_bench_csv(out)
    want = normalize_test(test)
    rows = [r for r in rows if r["test"] == want]
    if res["returncode"] != 0 or not rows:
        raise RuntimeError("%s failed (exit %s): %s\nstdout: %s\nstderr: %s"
                           % (client, res["returncode"], " ".join(argv), out.strip()[-500:], err.strip()[-500:]))
    row = rows[-1]
    row.update(wall_s=res["wall_s"], user_s=res["user_s"], sys_s=res["sys_s"], stderr=err.strip())
    return row


# --------------------------------------------------------------------- output
def write_csv(path: Path, columns: list, rows: list) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(path.suffix + ".tmp")
    with open(tmp, "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=columns, lineterminator="\n")
        w.writeheader()
        for r in rows:
            w.writerow({c: r.get(c, "") for c in columns})
    os.replace(tmp, path)


class CsvAppender:
    """Writes the header at open and flushes every row (partial results survive)."""

    def __init__(self, path: Path, columns: list):
        path.parent.mkdir(parents=True, exist_ok=True)
        self.path = path
        self.columns = columns
        self._f = open(path, "w", newline="")
        self._w = csv.DictWriter(self._f, fieldnames=columns, lineterminator="\n")
        self._w.writeheader()
        self._f.flush()
        self.count = 0

    def add(self, row: dict) -> None:
        self._w.writerow({c: row.get(c, "") for c in self.columns})
        self._f.flush()
        self.count += 1

    def close(self) -> None:
        self._f.close()


def fmt_num(x, nd: int = 3) -> str:
    if x == "" or x is None:
        return ""
    return ("%%.%df" % nd) % x


def git_sha() -> str:
    """HEAD, with "-dirty" when tracked files have changes (a window records
    what it measured: the manifest's global fields describe the sweep)."""
    def git(*args):
        try:
            return subprocess.run(["git", *args], capture_output=True, text=True, timeout=30,
                                  cwd=str(REPO)).stdout.strip()
        except (OSError, subprocess.SubprocessError):
            return ""
    sha = git("rev-parse", "HEAD")
    return sha + ("-dirty" if git("status", "--porcelain", "--untracked-files=no") else "")


def record_window(out_dir: Path, name: str, start: str, end: str, **extra) -> None:
    """Merge {name: {start_utc, end_utc, **extra}} into <out_dir>/windows.json,
    which manifest.py turns into the manifest's per-experiment time windows."""
    out_dir.mkdir(parents=True, exist_ok=True)
    path = out_dir / "windows.json"
    data = {}
    if path.exists():
        try:
            data = json.loads(path.read_text())
        except (OSError, ValueError):
            data = {}
    entry = {"start_utc": start, "end_utc": end}
    entry.update(extra)
    data[name] = entry
    tmp = path.with_suffix(".json.tmp")
    tmp.write_text(json.dumps(data, indent=2, sort_keys=True) + "\n")
    os.replace(tmp, path)


def write_results(out_dir: Path, name: str, columns: list, rows: list, t0: float) -> int:
    """Write <out_dir>/<name>.csv, log it, and return the script's exit
    status: 0 if any row was measured, else 1."""
    path = out_dir / (name + ".csv")
    write_csv(path, columns, rows)
    log("%s: wrote %d rows to %s in %s" % (name, len(rows), path, human_secs(time.monotonic() - t0)))
    return 0 if rows else 1


def report_runs(name: str, count: int, path, t0: float, failures: list) -> int:
    """Log how many rows went to path and every failed run; return the
    script's exit status: 1 if any run failed or no row was written."""
    log("%s: wrote %d rows to %s in %s; %d failed runs"
        % (name, count, path, human_secs(time.monotonic() - t0), len(failures)))
    for f in failures:
        log("  failed: %s" % (f,))
    return 1 if failures or count == 0 else 0


def run_main(main) -> None:
    """Entry point of the experiment scripts: exit with main()'s status;
    Ctrl-C exits 130 (servers are stopped by the atexit/signal handlers)."""
    try:
        sys.exit(main())
    except KeyboardInterrupt:
        print("%s: interrupted" % sys.argv[0], file=sys.stderr)
        sys.exit(130)


def human_secs(s: float) -> str:
    s = max(0, int(round(s)))
    if s >= 3600:
        return "%dh%02dm%02ds" % (s // 3600, s % 3600 // 60, s % 60)
    if s >= 60:
        return "%dm%02ds" % (s // 60, s % 60)
    return "%ds" % s


if __name__ == "__main__":
    import argparse
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0] +
                                 " Run directly: start both servers, PING them, print versions and pinning, stop.",
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--no-pin", action="store_true", help="do not use taskset")
    args = ap.parse_args()
    install_signal_handlers()
    pin = pinning_available() and not args.no_pin
    print("pinning:", pinning_description(pin))
    for kind in ("ferry", "redis"):
        b = server_binary(kind)
        with Server(kind, b, pin=pin) as srv:
            print("%s %s on port %d pid %d rss %d bytes" % (kind, server_version(kind, b), srv.port, srv.pid,
                                                            srv.rss_bytes()))
    for c in CLIENT_CHOICES:
        print("client %s: %s" % (c, client_binary(c) or "missing"))
    sys.exit(0)
