"""Instructions per replicated write, ferry vs redis-server, by callgrind.

What: three measurements per server kind, each on fresh servers in a
temporary directory, every server started by this script on free ports:
  primary0  the primary under callgrind, no replica: Ir per SET.
  primary1  the primary under callgrind, one replica (native, same kind)
            online: Ir per SET, the stream to the backlog and the replica
            included (primary2: two replicas).
  replica   the primary native, its one replica under callgrind: Ir per SET
            the replica spends applying the stream (read, parse, execute,
            offset and backlog accounting).
The workload is redis-benchmark -t set -c 50 -P 100 -r 100000 -d 64 -n N
against the primary. Counters are zeroed (callgrind_control -z) once the
servers are ready and dumped (callgrind_control -d) once the workload is
done and every replica has reached the primary's master_repl_offset, so
start-up and the full sync are not counted; the few idle cron ticks of the
window are (about 1% at N = 200000). Ir per SET = dumped total / N.

Why: throughput on this shared 2-core VM is noisy; the instruction count
of the two sides of a replicated write is deterministic, and it is what a
replica takes from the client sharing its CPU in `make bench-repl`.

Usage: .venv/bin/python scripts/repl_instructions.py [--ferry build/ferry-server]
       [--redis /usr/bin/redis-server] [-n 200000] [--only ferry|redis]
       [--keep DIR]  (keeps the dumps for callgrind_annotate)
"""
from __future__ import annotations

import argparse
import glob
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import time


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def cli(port: int, *args: str) -> str:
    r = subprocess.run(["redis-cli", "-p", str(port), *args], capture_output=True, text=True, timeout=60)
    return r.stdout


def info_field(port: int, section: str, field: str) -> str | None:
    for line in cli(port, "INFO", section).splitlines():
        if line.startswith(field + ":"):
            return line.split(":", 1)[1].strip()
    return None


def wait_until(pred, timeout: float, what: str) -> None:
    deadline = time.time() + timeout
    while time.time() < deadline:
        if pred():
            return
        time.sleep(0.1)
    raise RuntimeError("timed out waiting for " + what)


class Proc:
    def __init__(self, binary: str, workdir: str, name: str, callgrind: bool, extra: list):
        self.port = free_port()
        self.dir = os.path.join(workdir, name)
        os.makedirs(self.dir)
        self.out = os.path.join(self.dir, "cg.out")
        argv = [binary, "--port", str(self.port), "--save", "", "--appendonly", "no", "--dir", self.dir,
                "--repl-diskless-sync", "no", *extra]
        if callgrind:
            argv = ["valgrind", "--tool=callgrind", "--callgrind-out-file=" + self.out] + argv
        self.log = open(os.path.join(self.dir, "log"), "w")
        self.p = subprocess.Popen(argv, stdout=self.log, stderr=subprocess.STDOUT)
        wait_until(lambda: cli(self.port, "PING").strip() == "PONG", 120, name + " to answer PING")

    def control(self, flag: str) -> None:
        subprocess.run(["callgrind_control", flag, str(self.p.pid)], check=True, capture_output=True, timeout=120)

    def dumped_total(self) -> tuple[int, str]:
        files = sorted(glob.glob(self.out + ".*"), key=os.path.getmtime)
        with open(files[-1], errors="replace") as f:
            for line in f:
                if line.startswith(("totals:", "summary:")):
                    return int(line.split()[1]), files[-1]
        raise RuntimeError("no totals in " + files[-1])

    def stop(self) -> None:
        self.p.terminate()
        try:
            self.p.wait(timeout=120)
        except subprocess.TimeoutExpired:
            self.p.kill()
            self.p.wait()
        self.log.close()


def measure(kind: str, binary: str, case: str, n: int, keep: str | None) -> float:
    work = tempfile.mkdtemp(prefix="repl-ir-")
    procs = []
    try:
        primary = Proc(binary, work, "primary", case.startswith("primary"), [])
        procs.append(primary)
        measured = primary
        nrep = 1 if case == "replica" else int(case[len("primary"):])
        reps = []
        for i in range(nrep):
            rep = Proc(binary, work, "replica%d" % i, case == "replica", ["--replicaof", "127.0.0.1", str(primary.port)])
            procs.append(rep)
            reps.append(rep)
            wait_until(lambda: info_field(rep.port, "replication", "master_link_status") == "up"
                       and cli(primary.port, "INFO", "replication").count("state=online") == i + 1, 300,
                       "the replica online")
        if case == "replica":
            measured = reps[0]
        measured.control("-z")
        subprocess.run(["redis-benchmark", "-p", str(primary.port), "-t", "set", "-c", "50", "-P", "100",
                        "-r", "100000", "-d", "64", "-n", str(n), "-q"], check=True, capture_output=True, timeout=1800)
        target = int(info_field(primary.port, "replication", "master_repl_offset") or 0)
        for rep in reps:
            wait_until(lambda: int(info_field(rep.port, "replication", "master_repl_offset") or 0) >= target, 600,
                       "the replica to catch up")
        measured.control("-d")
        total, path = measured.dumped_total()
        if keep:
            os.makedirs(keep, exist_ok=True)
            shutil.copy(path, os.path.join(keep, "%s-%s.callgrind" % (kind, case)))
        return total / n
    finally:
        for p in procs:
            p.stop()
        shutil.rmtree(work, ignore_errors=True)


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--ferry", default="build/ferry-server")
    ap.add_argument("--redis", default="/usr/bin/redis-server")
    ap.add_argument("-n", type=int, default=200000)
    ap.add_argument("--only", choices=["ferry", "redis"])
    ap.add_argument("--cases", default="primary0,primary1,replica")
    ap.add_argument("--keep", metavar="DIR", help="copy each dump to DIR/<kind>-<case>.callgrind (callgrind_annotate)")
    args = ap.parse_args()
    kinds = [k for k in ("ferry", "redis") if not args.only or k == args.only]
    print("| server | case | Ir per SET |\n|---|---|---:|")
    for kind in kinds:
        for case in args.cases.split(","):
            ir = measure(kind, args.ferry if kind == "ferry" else args.redis, case, args.n, args.keep)
            print("| %s | %s | %.0f |" % (kind, case, ir), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
