"""ACL cost on the hot path: SET/GET throughput as a restricted ACL user
versus the default user, on ferry and on redis-server (`make bench-acl`).

What (every server fresh, not pinned, --trials times with the servers
alternating: which one goes first flips every trial, and so does which
user goes first on a server; C = 50; P = 1 and P = 100):
  - the restricted user: `ACL SETUSER bench on >pw ~bench:* ~key:* +@all`
    (key patterns to match on every command; redis-benchmark -r writes its
    keys as key:<12 digits>, e.g. key:000000004242, so ~key:* covers them);
  - redis-benchmark -t set,get -d 3 -r 100000, once as the default user and
    once with `--user bench -a pw`;
  - before the runs, SET/GET as bench are sent once by hand and must answer
    +OK / a bulk (redis-benchmark counts error replies as successes); after
    them INFO errorstats must have no NOPERM/WRONGPASS/NOAUTH entry and the
    server's SET count (INFO commandstats) must have grown by the requests
    sent, so a denied or unauthenticated run can not pass for a fast one.
Output: <out>/acl.csv (experiment, dataset, server, trial, metric, value,
unit, note: experiment acl_set / acl_get, dataset default_user /
restricted_user, metrics rps_p1, rps_p100, p50_ms_pN, p99_ms_pN); the
medians and the ratio restricted/default per server, command and pipeline
are printed. Target: ferry restricted >= 0.95x ferry default. A metric
whose trials spread by more than 20% of the median on a server gets that
noted in its rows (on a loaded 2-core machine P = 1 varies by +-30%
between identical runs, more than the effect measured: use more trials).
The ferry binary measured is a copy taken at the start (a rebuild during
the run would mix two binaries). A failed measurement is logged and
skipped; the exit status is then 1.

Why: ACL checks run before every command; a user with key patterns makes
each command match its keys against them. This shows what that costs on
ferry and whether redis-server pays the same.
"""
from __future__ import annotations

import argparse
import os
import shutil
import socket
import statistics
import tempfile
import time
from pathlib import Path

import benchlib as bl

COLUMNS = ["experiment", "dataset", "server", "trial", "metric", "value", "unit", "note"]
USER, PASSWORD = "bench", "pw"
SETUSER = ["ACL", "SETUSER", USER, "on", ">" + PASSWORD, "~bench:*", "~key:*", "+@all"]
REQUESTS = {1: 200000, 100: 4000000}       # -n per pipeline at scale 1 (per command)
KEYSPACE = 100000
TARGET = 0.95
SPREAD = 0.20
USERS = ("default_user", "restricted_user")


def info(port: int, section: str) -> dict:
    raw = bl.query(port, "INFO", section, timeout=60).decode("utf-8", "replace")
    return dict(line.split(":", 1) for line in raw.split("\r\n") if ":" in line and not line.startswith("#"))


def calls(port: int, cmd: str) -> int:
    stat = info(port, "commandstats").get("cmdstat_" + cmd, "")
    fields = dict(f.split("=", 1) for f in stat.split(",") if "=" in f)
    return int(fields.get("calls", 0))


def auth_errors(port: int) -> dict:
    return {k: v for k, v in info(port, "errorstats").items()
            if k.split("_", 1)[-1] in ("NOPERM", "WRONGPASS", "NOAUTH")}


def check_reply(port: int, want_prefix: bytes, *cmd) -> None:
    """cmd (ACL ...: as the default user; else as the bench user, after
    AUTH on the same connection); its reply's first line must start with
    want_prefix."""
    if cmd[0] == "ACL":
        line = bl.command(port, *cmd)
    else:
        with socket.create_connection(("127.0.0.1", port), timeout=10) as s:
            auth = _line(s, bl.encode_command("AUTH", USER, PASSWORD))
            if auth != b"+OK":
                raise RuntimeError("AUTH %s answered %r" % (USER, auth))
            line = _line(s, bl.encode_command(*cmd))
    if not line.startswith(want_prefix):
        raise RuntimeError("%s answered %r (want %r)" % (" ".join(cmd), line[:200], want_prefix))


def _line(s, request: bytes) -> bytes:
    """Send request; the first line of its reply (the rest is not read:
    one request a connection after this)."""
    s.sendall(request)
    data = b""
    while b"\r\n" not in data:
        chunk = s.recv(4096)
        if not chunk:
            raise RuntimeError("connection closed")
        data += chunk
    head, rest = data.split(b"\r\n", 1)
    if head[:1] == b"$" and int(head[1:]) >= 0:
        while len(rest) < int(head[1:]) + 2:     # drain the bulk so the next reply starts clean
            rest += s.recv(4096)
    return head


def setup_user(port: int) -> None:
    check_reply(port, b"+OK", *SETUSER)
    check_reply(port, b"+OK", "SET", "key:%012d" % 4242, "abc")
    check_reply(port, b"$3", "GET", "key:%012d" % 4242)
    check_reply(port, b"-NOPERM", "SET", "other", "x")      # the patterns are really applied


def bench(port: int, pipeline: int, requests: int, restricted: bool) -> dict:
    argv = [bl.client_binary("redis-benchmark"), "-h", "127.0.0.1", "-p", str(port), "-c", "50",
            "-n", str(requests), "-P", str(pipeline), "-t", "set,get", "-d", "3", "-r", str(KEYSPACE), "--csv"]
    if restricted:
        argv += ["--user", USER, "-a", PASSWORD]
    sets0, errors0 = calls(port, "set"), auth_errors(port)
    res = bl.run_process(argv, 120 + requests / 2000.0, "redis-benchmark")
    rows = {r["test"]: r for r in bl.parse_bench_csv(res["stdout"])}
    if res["returncode"] != 0 or set(rows) < {"SET", "GET"}:
        raise RuntimeError("redis-benchmark failed: %s %s" % (res["stdout"][-300:], res["stderr"][-300:]))
    errors = auth_errors(port)
    if errors != errors0:
        raise RuntimeError("error replies during the run: %s (before it: %s)" % (errors, errors0))
    if calls(port, "set") - sets0 < requests:
        raise RuntimeError("the server counted %d SETs for %d sent" % (calls(port, "set") - sets0, requests))
    return rows


class Recorder:
    def __init__(self):
        self.rows, self.failures = [], []

    def add(self, exp, ds, server, trial, metric, value, unit, note=""):
        self.rows.append(dict(experiment=exp, dataset=ds, server=server, trial=trial, metric=metric,
                              value=value, unit=unit, note=note))
        bl.log("acl: %-8s %-16s %-5s #%s %-10s %s %s" % (exp, ds, server, trial, metric, value, unit))

    def run(self, label, fn, *a):
        try:
            return fn(*a)
        except (RuntimeError, OSError, ValueError, KeyError) as e:
            bl.log("acl: FAILED %s: %s" % (label, e))
            self.failures.append("%s: %s" % (label, str(e).splitlines()[0] if str(e) else type(e).__name__))
            return None


def one_server(args, rec, kind, binary, trial) -> None:
    with bl.Server(kind, binary, pin=False) as srv:
        setup_user(srv.port)
        users = USERS if trial % 2 else USERS[::-1]
        for p, n in sorted(args.requests.items()):
            for user in users:
                rows = bench(srv.port, p, n, user == "restricted_user")
                for test in ("SET", "GET"):
                    r = rows[test]
                    exp = "acl_" + test.lower()
                    rec.add(exp, user, kind, trial, "rps_p%d" % p, "%.0f" % r["rps"], "req/s")
                    rec.add(exp, user, kind, trial, "p50_ms_p%d" % p, "%.3f" % r["p50_ms"], "ms")
                    rec.add(exp, user, kind, trial, "p99_ms_p%d" % p, "%.3f" % r["p99_ms"], "ms")


def note_spread(rows) -> list:
    """Note on every row of a metric whose trials spread > SPREAD of their
    median on a server (a shared machine: P = 1 runs vary by +-30% here)."""
    groups = {}
    for r in rows:
        groups.setdefault((r["server"], r["experiment"], r["dataset"], r["metric"]), []).append(r)
    noisy = []
    for key, rs in groups.items():
        vals = [float(r["value"]) for r in rs]
        med = statistics.median(vals)
        if len(vals) > 1 and med and (max(vals) - min(vals)) / med > SPREAD:
            noisy.append(key)
            for r in rs:
                r["note"] = "trials spread %d%% of the median (shared machine)" % (100 * (max(vals) - min(vals)) / med)
    return noisy


def medians(rows) -> dict:
    vals = {}
    for r in rows:
        if r["metric"].startswith("rps_"):
            vals.setdefault((r["server"], r["experiment"], r["metric"], r["dataset"]), []).append(float(r["value"]))
    return {k: statistics.median(v) for k, v in vals.items()}


def print_summary(rows, servers) -> bool:
    """Medians and restricted/default ratios; True when ferry meets the target."""
    med = medians(rows)
    ok = True
    print("\nACL cost: median rps over the trials, restricted user / default user")
    print("%-6s %-8s %-9s %12s %12s %7s" % ("server", "command", "metric", "default", "restricted", "ratio"))
    for server in servers:
        for exp in ("acl_set", "acl_get"):
            for metric in sorted({k[2] for k in med}):
                d = med.get((server, exp, metric, "default_user"))
                r = med.get((server, exp, metric, "restricted_user"))
                if d is None or r is None:
                    continue
                ratio = r / d if d else 0.0
                flag = ""
                if server == "ferry":
                    flag = "  ok" if ratio >= TARGET else "  BELOW %.2f" % TARGET
                    ok = ok and ratio >= TARGET
                print("%-6s %-8s %-9s %12.0f %12.0f %7.3f%s" % (server, exp[4:].upper(), metric, d, r, ratio, flag))
    return ok


def parse_args(argv):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--trials", type=int, default=3, help="trials (default 3)")
    ap.add_argument("--scale", type=float, default=1.0,
                    help="multiplies every -n (P=1: %d, P=100: %d)" % (REQUESTS[1], REQUESTS[100]))
    ap.add_argument("--quick", action="store_true", help="smoke mode: 1 trial, -n / 20")
    ap.add_argument("--servers", default="ferry,redis", help="comma list of ferry,redis (default both)")
    ap.add_argument("--tmpdir", default=tempfile.gettempdir(), help="where the measured ferry copy goes")
    ap.add_argument("--out", default=str(bl.REPO / "results" / "bench"), help="output directory")
    ap.add_argument("--ferry", "--server", dest="ferry", default=None, help="ferry-server binary")
    ap.add_argument("--redis", default=None, help="redis-server binary")
    ap.add_argument("--no-pin", action="store_true", help="accepted for bench_all; servers are never pinned here")
    args = ap.parse_args(argv)
    if args.quick:
        args.trials, args.scale = 1, args.scale / 20
    args.requests = {p: max(1000, int(n * args.scale)) for p, n in REQUESTS.items()}
    args.servers = [s.strip() for s in args.servers.split(",") if s.strip()]
    return args


def main(argv=None) -> int:
    args = parse_args(argv)
    bl.install_signal_handlers()
    if not bl.client_binary("redis-benchmark"):
        raise SystemExit("redis-benchmark not found (apt-get install -y redis-tools)")
    binaries = {s: bl.server_binary(s, getattr(args, s)) for s in args.servers}
    t_start, started, load0 = time.monotonic(), bl.utc_now(), os.getloadavg()
    snap_dir = tempfile.mkdtemp(prefix="ferry-bench-acl-bin-", dir=args.tmpdir)
    if "ferry" in binaries:
        binaries["ferry"] = shutil.copy2(binaries["ferry"], os.path.join(snap_dir, "ferry-server"))
    rec = Recorder()
    out = Path(args.out)
    try:
        for trial in range(1, args.trials + 1):
            order = args.servers if trial % 2 else args.servers[::-1]
            for kind in order:
                rec.run("%s #%d" % (kind, trial), one_server, args, rec, kind, binaries[kind], trial)
    finally:
        for key in note_spread(rec.rows):
            bl.log("acl: note: %s %s %s %s spreads > %d%% over its trials" % (key + (100 * SPREAD,)))
        bl.write_csv(out / "acl.csv", COLUMNS, rec.rows)
        shutil.rmtree(snap_dir, ignore_errors=True)
    bl.record_window(out, "acl", started, bl.utc_now(), pinning=bl.pinning_description(False),
                     trials=args.trials, requests=args.requests, keyspace=KEYSPACE, setuser=" ".join(SETUSER),
                     loadavg_start=[round(x, 2) for x in load0], loadavg_end=[round(x, 2) for x in os.getloadavg()],
                     git_sha=bl.git_sha())
    met = print_summary(rec.rows, args.servers)
    if "ferry" in args.servers and not rec.failures:
        print("target ferry restricted >= %.2fx default: %s" % (TARGET, "met" if met else "NOT met"))
    return bl.report_runs("acl", len(rec.rows), out / "acl.csv", t_start, rec.failures)


if __name__ == "__main__":
    bl.run_main(main)
