"""TLS throughput and handshake rate, ferry vs redis-server (`make bench-tls`, issue #20).

What: a throwaway CA and server certificate (EC P-256, made with the openssl
CLI in a temporary directory, removed at the end); each server started with
a TLS port beside its plain one (tls-auth-clients no: no client certificate)
and measured in --rounds rounds (default 3), the two servers alternating
(round r starts with the other server than round r-1), a fresh server per
server and round. In each round, on each server:
  1. for each client (--tools, default both): build/ferry-bench --tls and
     redis-benchmark --tls, each `--cacert CA -p TLSPORT -c 50 -P P -t
     set,get -d 64 -r 100000 -n N --csv -q`, for P = 1, 16, 100 (N per P:
     --requests, default 200000 / 2000000 / 3000000). The server's INFO
     commandstats (on the plain port) must have counted N more SETs and N
     more GETs after each run (redis-benchmark counts error replies as
     successes), else the run is a failure. redis-benchmark with TLS on
     one core is slower than either server at P >= 16, so its figures there
     show the client; ferry-bench (one SSL_write per batch, replies only
     counted) is the client that leaves the server the bottleneck.
  2. the handshake rate: `openssl s_time -connect 127.0.0.1:TLSPORT -new
     -time S -CAfile CA` (full handshakes, no resumption, S = --handshake-
     seconds, default 5). Reported: connections per real second, the count
     s_time prints ("N connections in T real seconds") over the wall time of
     the s_time run measured here (s_time's own T is whole seconds); and the
     server's CPU time (utime + stime from /proc) over that run per
     connection, in microseconds. On two cores one s_time process is the
     bottleneck (it verifies the server's certificate on every connection;
     the server then sits at ~40% of its CPU), so the connection rate shows
     the client's limit and the server's CPU per handshake is the figure
     that compares the servers.
The server runs under `taskset -c 0` and the clients (redis-benchmark,
s_time) under `taskset -c 1` when taskset and two CPUs are there.

Output: <out>/tls.csv (columns test,P,server,client,round,rps: test SET or GET
(rps: requests per second), handshake (P empty; rps: new connections per
second) or handshake_cpu_us (P empty; the "rps" column holds the server's
CPU microseconds per new connection)), written as it goes;
<tables>/tls.md: the medians over the rounds per test and P, ferry / redis,
and the handshake figures; the time window goes to <out>/windows.json.
A failed run is logged and skipped; the exit status is then 1.

Why: TLS moves the cost of every request into OpenSSL's record layer, and
every new connection pays a handshake; this shows what ferry's TLS costs
against redis-server's, at the pipeline depths of the other benchmarks.
"""
from __future__ import annotations

import argparse
import os
import re
import shutil
import statistics
import subprocess
import tempfile
import time
from pathlib import Path

import benchlib as bl

COLUMNS = ["test", "P", "server", "client", "round", "rps"]
TOOLS = ["ferry-bench", "redis-benchmark"]
KEYSPACE = 100000
SERVERS = ["ferry", "redis"]
PIPELINES = [1, 16, 100]
REQUESTS = {1: 200000, 16: 2000000, 100: 3000000}
QUICK_REQUESTS = {1: 20000, 16: 100000, 100: 200000}
CLIENTS = 50
VALUE_BYTES = 64
TESTS = ("SET", "GET")
OPENSSL = shutil.which("openssl") or "/usr/bin/openssl"
S_TIME_RE = re.compile(r"(\d+) connections in (\d+) real seconds")

_EXT = """\
[req]
distinguished_name = dn
prompt = no
[dn]
CN = unused
[ca]
basicConstraints = critical, CA:TRUE
keyUsage = critical, keyCertSign, cRLSign
subjectKeyIdentifier = hash
[server]
basicConstraints = critical, CA:FALSE
keyUsage = critical, digitalSignature, keyEncipherment
extendedKeyUsage = serverAuth
subjectAltName = IP:127.0.0.1, DNS:localhost
subjectKeyIdentifier = hash
authorityKeyIdentifier = keyid:always
"""


# --------------------------------------------------------------------- certificates
def _openssl(d: str, *args) -> None:
    r = subprocess.run([OPENSSL, *args], cwd=d, capture_output=True, text=True, timeout=60)
    if r.returncode != 0:
        raise SystemExit("tls: openssl %s failed: %s" % (" ".join(args), r.stderr.strip()))


def make_certs(d: str) -> dict:
    """ca.crt, server.crt/server.key (CN and SAN 127.0.0.1) in d; their paths."""
    with open(os.path.join(d, "openssl.cnf"), "w") as f:
        f.write(_EXT)
    for name in ("ca", "server"):
        _openssl(d, "genpkey", "-algorithm", "EC", "-pkeyopt", "ec_paramgen_curve:P-256", "-out", name + ".key")
    _openssl(d, "req", "-config", "openssl.cnf", "-x509", "-new", "-key", "ca.key", "-sha256", "-days", "30",
             "-subj", "/O=ferry bench/CN=ferry bench CA", "-extensions", "ca", "-out", "ca.crt")
    _openssl(d, "req", "-config", "openssl.cnf", "-new", "-key", "server.key", "-subj",
             "/O=ferry bench/CN=127.0.0.1", "-out", "server.csr")
    _openssl(d, "x509", "-req", "-in", "server.csr", "-CA", "ca.crt", "-CAkey", "ca.key", "-CAcreateserial",
             "-days", "30", "-sha256", "-extfile", "openssl.cnf", "-extensions", "server", "-out", "server.crt")
    return {name: os.path.join(d, name) for name in ("ca.crt", "server.crt", "server.key")}


# --------------------------------------------------------------------- servers
def start_server(kind: str, binary: str, certs: dict, pin: bool) -> bl.Server:
    """A fresh server with a TLS port (.tls_port) beside its plain port; a new
    TLS port is tried when the free one was taken meanwhile."""
    err = None
    for _ in range(3):
        tls_port = bl.free_port()
        srv = bl.Server(kind, binary, pin=pin, extra_args=[
            "--tls-port", tls_port, "--tls-cert-file", certs["server.crt"], "--tls-key-file", certs["server.key"],
            "--tls-ca-cert-file", certs["ca.crt"], "--tls-auth-clients", "no"])
        try:
            srv.start()
        except RuntimeError as e:
            srv.cleanup()
            err = e
            continue
        srv.tls_port = tls_port
        return srv
    raise RuntimeError("%s did not start with a TLS port: %s" % (kind, err))


def calls(port: int) -> dict:
    """INFO commandstats calls of SET and GET."""
    raw = bl.query(port, "INFO", "commandstats", timeout=30).decode("utf-8", "replace")
    out = {}
    for line in raw.split("\r\n"):
        m = re.match(r"cmdstat_(set|get):calls=(\d+)", line)
        if m:
            out[m.group(1).upper()] = int(m.group(2))
    return out


# --------------------------------------------------------------------- clients
def benchmark(srv: bl.Server, certs: dict, pipeline: int, requests: int, pin: bool, tool: str) -> dict:
    """One --tls run of SET and GET by tool (ferry-bench or redis-benchmark); {test: rps}."""
    argv = bl.pin_prefix("client", pin) + [
        bl.client_binary(tool), "--tls", "--cacert", certs["ca.crt"], "-h", "127.0.0.1",
        "-p", str(srv.tls_port), "-c", str(CLIENTS), "-P", str(pipeline), "-t", "set,get", "-d", str(VALUE_BYTES),
        "-r", str(KEYSPACE), "-n", str(requests), "--csv", "-q"]
    before = calls(srv.port)
    res = bl.run_process(argv, 120 + requests / 2000.0, tool)
    rows = {r["test"]: r for r in bl.parse_bench_csv(res["stdout"])}
    if res["returncode"] != 0 or not set(TESTS) <= set(rows):
        raise RuntimeError("%s failed (exit %s): %s\nstdout: %s\nstderr: %s"
                           % (tool, res["returncode"], " ".join(argv), res["stdout"].strip()[-300:],
                              res["stderr"].strip()[-300:]))
    after = calls(srv.port)
    for t in TESTS:
        if after.get(t, 0) - before.get(t, 0) < requests:
            raise RuntimeError("the server counted %d %ss for %d sent"
                               % (after.get(t, 0) - before.get(t, 0), t, requests))
    return {t: rows[t]["rps"] for t in TESTS}


def cpu_seconds(pid: int) -> float:
    """utime + stime of process pid (taskset execs the server: same pid)."""
    with open("/proc/%d/stat" % pid) as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def handshakes(srv: bl.Server, certs: dict, seconds: int, pin: bool) -> tuple:
    """(new TLS connections per real second, server CPU us per connection)
    by openssl s_time -new."""
    argv = bl.pin_prefix("client", pin) + [
        OPENSSL, "s_time", "-connect", "127.0.0.1:%d" % srv.tls_port, "-new", "-time", str(seconds),
        "-CAfile", certs["ca.crt"]]
    cpu0 = cpu_seconds(srv.pid)
    res = bl.run_process(argv, seconds + 60, "openssl s_time")
    cpu = cpu_seconds(srv.pid) - cpu0
    m = S_TIME_RE.search(res["stdout"])
    if res["returncode"] != 0 or not m or int(m.group(1)) == 0:
        raise RuntimeError("openssl s_time failed (exit %s): %s\nstdout: %s\nstderr: %s"
                           % (res["returncode"], " ".join(argv), res["stdout"].strip()[-300:],
                              res["stderr"].strip()[-300:]))
    if not srv.alive():
        raise RuntimeError("%s died during s_time" % srv.kind)
    n = int(m.group(1))
    return n / res["wall_s"], cpu / n * 1e6


# --------------------------------------------------------------------- table
def medians(rows: list) -> dict:
    vals = {}
    for r in rows:
        vals.setdefault((r["test"], r["P"], r["server"], r["client"]), []).append(float(r["rps"]))
    return {k: (statistics.median(v), len(v)) for k, v in vals.items()}


def fmt_rps(x) -> str:
    return "—" if x is None else "{:,.0f}".format(x)


def fmt_us(x) -> str:
    return "—" if x is None else "%.0f" % x


def ratio(f, r) -> str:
    return "—" if f is None or not r else "%.2f" % (f / r)


def make_table(rows: list, args, versions: dict, pin: bool) -> str:
    med = medians(rows)
    get = lambda key: med.get(key, (None, 0))  # noqa: E731
    out = ["## TLS: SET and GET over TLS, and the TLS handshake rate, ferry vs redis-server (tls.csv)", "",
           "--tls -c %d -d %d -r %d, medians over %d rounds (servers alternating); "
           "ferry %s, redis-server %s; pinning: %s." % (CLIENTS, VALUE_BYTES, KEYSPACE, args.rounds,
                                                        versions.get("ferry", "—"), versions.get("redis", "—"),
                                                        "server CPU 0, client CPU 1" if pin else "none"),
           "", "| client | test | P | redis rps | ferry rps | ferry / redis | runs |", "|---|---|---|---|---|---|---|"]
    for tool in args.tools:
        for test in TESTS:
            for p in args.pipelines:
                (r, nr), (f, nf) = get((test, str(p), "redis", tool)), get((test, str(p), "ferry", tool))
                out.append("| %s | %s | %d | %s | %s | %s | %d |" % (tool, test, p, fmt_rps(r), fmt_rps(f), ratio(f, r),
                                                                     max(nr, nf)))
    (r, nr), (f, nf) = get(("handshake", "", "redis", "s_time")), get(("handshake", "", "ferry", "s_time"))
    (rc, _), (fc, _) = get(("handshake_cpu_us", "", "redis", "s_time")), get(("handshake_cpu_us", "", "ferry", "s_time"))
    out += ["", "Full TLS handshakes (openssl s_time -new -time %d, no resumption, one s_time process): new "
            "connections per real second, and the server's CPU time per connection (with one client core the "
            "rate is the client's limit; the CPU per handshake compares the servers):" % args.handshake_seconds, "",
            "| test | redis | ferry | ferry / redis | runs |", "|---|---|---|---|---|",
            "| handshakes per s | %s | %s | %s | %d |" % (fmt_rps(r), fmt_rps(f), ratio(f, r), max(nr, nf)),
            "| server CPU µs per handshake | %s | %s | %s | %d |"
            % (fmt_us(rc), fmt_us(fc), ratio(fc, rc), max(nr, nf)),
            ""]
    return "\n".join(out)


# --------------------------------------------------------------------- main
def parse_args(argv=None):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--quick", action="store_true",
                    help="smoke run: 1 round, -n %s, s_time -time 1"
                    % "/".join(str(QUICK_REQUESTS[p]) for p in PIPELINES))
    ap.add_argument("--rounds", type=int, default=None, help="rounds (default 3, --quick 1)")
    ap.add_argument("--requests", type=int, default=None, help="-n for every P (default %s)"
                    % "/".join(str(REQUESTS[p]) for p in PIPELINES))
    ap.add_argument("--pipelines", default=",".join(map(str, PIPELINES)),
                    help="comma list of -P (default %s)" % ",".join(map(str, PIPELINES)))
    ap.add_argument("--handshake-seconds", type=int, default=None, help="s_time -time (default 5, --quick 1)")
    ap.add_argument("--servers", default=",".join(SERVERS), help="comma list of ferry,redis (default both)")
    ap.add_argument("--tools", default=",".join(TOOLS), help="comma list of %s (default both)" % ",".join(TOOLS))
    ap.add_argument("--ferry", "--server", dest="ferry", default=None, help="ferry-server binary")
    ap.add_argument("--redis", default=None, help="redis-server binary")
    ap.add_argument("--out", default=str(bl.REPO / "results" / "bench"), help="CSV directory (default results/bench)")
    ap.add_argument("--tables", default=str(bl.REPO / "results" / "tables"),
                    help="directory of tls.md (default results/tables)")
    ap.add_argument("--no-pin", action="store_true", help="do not use taskset")
    args = ap.parse_args(argv)
    args.rounds = args.rounds or (1 if args.quick else 3)
    args.handshake_seconds = args.handshake_seconds or (1 if args.quick else 5)
    args.pipelines = [int(p) for p in args.pipelines.split(",") if p.strip()]
    base = QUICK_REQUESTS if args.quick else REQUESTS
    args.requests_by_p = {p: args.requests or base.get(p, base[100]) for p in args.pipelines}
    args.servers = [s.strip() for s in args.servers.split(",") if s.strip()]
    args.tools = [t.strip() for t in args.tools.split(",") if t.strip()]
    for t in args.tools:
        if t not in TOOLS:
            raise SystemExit("unknown client %r (choose from %s)" % (t, ",".join(TOOLS)))
    for s in args.servers:
        if s not in SERVERS:
            raise SystemExit("unknown server %r (choose from %s)" % (s, ",".join(SERVERS)))
    return args


def one_round(args, kind, binary, certs, pin, rnd, sink, rows, failures) -> None:
    def add(test, p, rps, tool="s_time"):
        row = {"test": test, "P": p, "server": kind, "client": tool, "round": rnd, "rps": bl.fmt_num(rps, 2)}
        sink.add(row)
        rows.append(row)

    try:
        srv = start_server(kind, binary, certs, pin)
    except RuntimeError as e:
        failures.append("%s round %d: %s" % (kind, rnd, str(e).splitlines()[0]))
        bl.log("tls: !! %s round %d: %s" % (kind, rnd, e))
        return
    try:
        for tool in args.tools:
            for p in args.pipelines:
                try:
                    got = benchmark(srv, certs, p, args.requests_by_p[p], pin, tool)
                except (RuntimeError, OSError) as e:
                    failures.append("%s %s P=%d round %d: %s" % (kind, tool, p, rnd, str(e).splitlines()[0]))
                    bl.log("tls: !! %s %s P=%d round %d: %s" % (kind, tool, p, rnd, e))
                    continue
                for t in TESTS:
                    add(t, str(p), got[t], tool)
                bl.log("tls: round %d %-5s %-15s P=%-3d SET %10.0f rps  GET %10.0f rps"
                       % (rnd, kind, tool, p, got["SET"], got["GET"]))
        try:
            rate, cpu_us = handshakes(srv, certs, args.handshake_seconds, pin)
            add("handshake", "", rate)
            add("handshake_cpu_us", "", cpu_us)
            bl.log("tls: round %d %-5s handshakes %8.0f conn/s, server CPU %.0f us/conn" % (rnd, kind, rate, cpu_us))
        except (RuntimeError, OSError) as e:
            failures.append("%s handshakes round %d: %s" % (kind, rnd, str(e).splitlines()[0]))
            bl.log("tls: !! %s handshakes round %d: %s" % (kind, rnd, e))
    finally:
        srv.cleanup()


def main(argv=None) -> int:
    args = parse_args(argv)
    bl.install_signal_handlers()
    for tool in args.tools:
        if not bl.client_binary(tool):
            raise SystemExit("tls: %s not found (redis-tools, or make build/ferry-bench)" % tool)
    if not os.path.isfile(OPENSSL):
        raise SystemExit("tls: openssl not found (apt-get install -y openssl)")
    binaries = {s: bl.server_binary(s, getattr(args, s)) for s in args.servers}
    versions = {s: bl.server_version(s, b) for s, b in binaries.items()}
    pin = bl.pinning_available() and not args.no_pin
    tmp = tempfile.mkdtemp(prefix="ferry-bench-tls-")
    if "ferry" in binaries:        # a rebuild during the run must not mix two binaries
        binaries["ferry"] = shutil.copy2(binaries["ferry"], os.path.join(tmp, "ferry-server"))
    out_dir, tab_dir = Path(args.out), Path(args.tables)
    out_path = out_dir / "tls.csv"
    t0, started = time.monotonic(), bl.utc_now()
    bl.log("tls: %s; P %s, -n %s, %d rounds, s_time %d s, pinning %s"
           % (", ".join("%s %s" % kv for kv in versions.items()), ",".join(map(str, args.pipelines)),
              "/".join(str(args.requests_by_p[p]) for p in args.pipelines), args.rounds, args.handshake_seconds,
              bl.pinning_description(pin)))
    rows, failures = [], []
    sink = bl.CsvAppender(out_path, COLUMNS)
    try:
        certs = make_certs(tmp)
        for rnd in range(1, args.rounds + 1):
            order = args.servers if rnd % 2 else args.servers[::-1]
            for kind in order:
                one_round(args, kind, binaries[kind], certs, pin, rnd, sink, rows, failures)
    finally:
        sink.close()
        shutil.rmtree(tmp, ignore_errors=True)
        bl.record_window(out_dir, "tls", started, bl.utc_now(), pinning=bl.pinning_description(pin),
                         rounds=args.rounds, requests=args.requests_by_p, clients=CLIENTS,
                         value_bytes=VALUE_BYTES, handshake_seconds=args.handshake_seconds, rows=sink.count,
                         git_sha=bl.git_sha())
    if rows:
        table = make_table(rows, args, versions, pin)
        tab_dir.mkdir(parents=True, exist_ok=True)
        tmp_md = tab_dir / "tls.md.tmp"
        tmp_md.write_text(table)
        os.replace(tmp_md, tab_dir / "tls.md")
        bl.log("\n" + table)
        bl.log("tls: wrote %s" % (tab_dir / "tls.md"))
    return bl.report_runs("tls", sink.count, out_path, t0, failures)


if __name__ == "__main__":
    bl.run_main(main)
