"""System calls per request: ferry vs redis-server under the same GET load.

What: for each connections C and pipeline P (default C in {1,10,50}, P in
{1,10,100}) one fixed GET workload (default 200000 requests, -r 100000 over a
keyspace pre-filled with 64-byte values so every GET hits) is run with
redis-benchmark against each server, while `strace -c -f -p <pid>` is attached
only for the measured window: strace is started and waited for until it
reports the process attached, then the client runs, then strace is stopped
with SIGINT and its summary table (-o file) is parsed into per-syscall call
counts. One fresh server of each kind serves all points; the order of the
two servers alternates from point to point.

Columns of <out>/syscalls.csv: server, clients, pipeline, test, ops,
read_calls, writev_calls, write_calls, epoll_wait_calls, other_calls, where
  read_calls       = read + readv + recv + recvfrom + recvmsg
  writev_calls     = writev + sendmsg
  write_calls      = write + send + sendto
  epoll_wait_calls = epoll_wait + epoll_pwait + epoll_pwait2
  other_calls      = every other call in the window (accept4, epoll_ctl,
                     close, setsockopt, futex of Redis's idle threads, ...)
ops is the number of requests the client completed.

Why: ferry's design claim is one read per readiness event and one writev per
connection per loop iteration; the syscalls/op ratio at each pipeline depth is
the direct check of that claim against Redis. strace slows the server a lot,
which does not change the counts (only the time per point).
"""
from __future__ import annotations

import argparse
import os
import re
import select
import signal
import subprocess
import tempfile
import time
from pathlib import Path

import benchlib as bl

COLUMNS = ["server", "clients", "pipeline", "test", "ops", "read_calls", "writev_calls", "write_calls",
           "epoll_wait_calls", "other_calls"]
GROUPS = {
    "read_calls": ("read", "readv", "recv", "recvfrom", "recvmsg"),
    "writev_calls": ("writev", "sendmsg"),
    "write_calls": ("write", "send", "sendto"),
    "epoll_wait_calls": ("epoll_wait", "epoll_pwait", "epoll_pwait2"),
}


def int_list(s):
    return [int(x) for x in s.split(",") if x.strip()]


def parse_strace_summary(text: str) -> dict:
    """{syscall: calls} from an `strace -c` summary table.

    Lines look like ' 73.28    0.013595           6      2001           writev'
    or with an errors column before the name; the 'total' row is dropped."""
    counts = {}
    for line in text.splitlines():
        toks = line.split()
        if len(toks) < 5 or not re.match(r"^\d+(\.\d+)?$", toks[0]):
            continue
        name = toks[-1]
        if name == "total":
            continue
        try:
            calls = int(toks[3])
        except ValueError:
            continue
        counts[name] = counts.get(name, 0) + calls
    return counts


def group_counts(counts: dict) -> dict:
    out = {k: sum(counts.get(n, 0) for n in names) for k, names in GROUPS.items()}
    grouped = set(n for names in GROUPS.values() for n in names)
    out["other_calls"] = sum(v for n, v in counts.items() if n not in grouped)
    return out


def strace_window(pid: int, run, attach_timeout: float = 20.0):
    """Attach `strace -c -f` to pid, call run(), detach with SIGINT; return
    (run's result, {syscall: calls})."""
    fd, path = tempfile.mkstemp(prefix="ferry-strace-", suffix=".txt")
    os.close(fd)
    st = subprocess.Popen(["strace", "-c", "-f", "-o", path, "-p", str(pid)], stdin=subprocess.DEVNULL,
                          stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, start_new_session=True)
    try:
        # strace prints "strace: Process N attached[ with K threads]" on stderr
        err = b""
        deadline = time.monotonic() + attach_timeout
        while b"attached" not in err:
            if st.poll() is not None:
                err += st.stderr.read() or b""
                raise RuntimeError("strace exited (%s): %s" % (st.returncode, err.decode(errors="replace").strip()))
            if time.monotonic() > deadline:
                raise RuntimeError("strace did not attach within %.0fs: %r" % (attach_timeout, err))
            r, _, _ = select.select([st.stderr], [], [], 0.1)
            if r:
                err += os.read(st.stderr.fileno(), 4096)
        time.sleep(0.1)      # let the other threads' attach complete
        result = run()
    finally:
        if st.poll() is None:
            st.send_signal(signal.SIGINT)
            try:
                st.wait(timeout=30)
            except subprocess.TimeoutExpired:
                os.killpg(st.pid, signal.SIGKILL)
                st.wait()
        st.stderr.close()
    with open(path) as f:
        text = f.read()
    os.unlink(path)
    counts = parse_strace_summary(text)
    if not counts:
        raise RuntimeError("empty strace summary:\n%s" % text)
    return result, counts


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--conns", type=int_list, default=[1, 10, 50], help="comma list (default 1,10,50)")
    ap.add_argument("--pipelines", type=int_list, default=[1, 10, 100], help="comma list (default 1,10,100)")
    ap.add_argument("--requests", type=int, default=200000, help="GET requests per point (default 200000)")
    ap.add_argument("--keyspace", type=int, default=100000, help="-r keyspace, pre-filled (default 100000)")
    ap.add_argument("--value-bytes", type=int, default=64, help="value size of the filled keys (default 64)")
    ap.add_argument("--quick", action="store_true",
                    help="smoke mode: C=1, P=10, 20000 requests, keyspace 10000")
    ap.add_argument("--servers", default="ferry,redis", help="comma list (default ferry,redis)")
    ap.add_argument("--out", default=str(bl.REPO / "results" / "bench"), help="output directory")
    ap.add_argument("--no-pin", action="store_true", help="do not pin server/client with taskset")
    ap.add_argument("--ferry", default=None, help="ferry-server binary")
    ap.add_argument("--redis", default=None, help="redis-server binary")
    args = ap.parse_args(argv)
    if args.quick:
        args.conns, args.pipelines = [1], [10]
        args.requests, args.keyspace = 20000, 10000
    bl.install_signal_handlers()
    if not bl.which("strace"):
        raise SystemExit("syscalls: strace not found (apt-get install -y strace)")
    rb = bl.client_binary("redis-benchmark")
    if rb is None:
        raise SystemExit("syscalls: redis-benchmark not found (apt-get install -y redis-tools)")
    pin = bl.pinning_available() and not args.no_pin
    kinds = [k.strip() for k in args.servers.split(",") if k.strip()]
    binaries = {k: bl.server_binary(k, getattr(args, k)) for k in kinds}
    out_dir = Path(args.out)
    started = bl.utc_now()
    t0 = time.monotonic()
    rows = []
    servers = {}
    try:
        for k in kinds:
            srv = bl.Server(k, binaries[k], pin=pin).start()
            bl.fill_keys(srv.port, args.keyspace, args.value_bytes)
            servers[k] = srv
        first = 0
        for c in args.conns:
            for p in args.pipelines:
                order = kinds[first:] + kinds[:first]
                first = (first + 1) % len(kinds)
                for k in order:
                    srv = servers[k]
                    if not srv.alive():
                        raise RuntimeError("%s server died; log tail:\n%s" % (k, srv.log_tail()))
                    tp = time.monotonic()
                    res, counts = strace_window(
                        srv.pid, lambda: bl.run_client("redis-benchmark", rb, srv.port, "GET", c, p, args.requests,
                                                       args.value_bytes, args.keyspace, pin,
                                                       timeout=300.0 + args.requests / 1000.0))
                    g = group_counts(counts)
                    row = {"server": k, "clients": c, "pipeline": p, "test": "GET", "ops": args.requests}
                    row.update(g)
                    rows.append(row)
                    bl.log("syscalls: %-5s C=%-2d P=%-3d %d GETs in %.1fs (traced, %.0fk rps): read %.3f/op, "
                           "writev %.3f/op, write %.3f/op, epoll_wait %.3f/op, other %d"
                           % (k, c, p, args.requests, time.monotonic() - tp, res["rps"] / 1e3,
                              g["read_calls"] / args.requests, g["writev_calls"] / args.requests,
                              g["write_calls"] / args.requests, g["epoll_wait_calls"] / args.requests,
                              g["other_calls"]))
    finally:
        for srv in servers.values():
            srv.cleanup()
        bl.record_window(out_dir, "syscalls", started, bl.utc_now(), pinning=bl.pinning_description(pin),
                         rows=len(rows))
    return bl.write_results(out_dir, "syscalls", COLUMNS, rows, t0)


if __name__ == "__main__":
    bl.run_main(main)
