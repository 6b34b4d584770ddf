"""Commands with more than three arguments, ferry vs redis-server side by side.

What: for each round, a fresh ferry-server and a fresh redis-server (order
alternating between rounds: A B, B A, ...) each get one redis-benchmark run
per workload, with redis-benchmark's custom-command form over a key range of
-r keys:
    SET key v EX 100000      the TTL-cache write (5 arguments)
    HSET h f v               one field per hash (4 arguments)
    SET key v                the plain write, for reference (3 arguments)
    GET key                  the read, for reference
The workloads run in this order on the same server, so the keyspace grows as
it goes (1M volatile keys, then 1M hashes beside them, then the keys lose
their TTL, then GET reads them): each server sees exactly the same sequence.
Rows go to <out>/option_workloads.csv (server, round, workload, rps, p50);
the printed table gives each server's median rps over the rounds and the
ratio ferry/redis of the medians.

Why: the sweep (`make bench`) uses redis-benchmark's -t tests, which are all
three arguments or fewer. ferry's batched executor handles longer requests
differently (their spans go to a per-window pool), and a TTL cache writes
with SET ... EX, so that path is measured here on its own.
"""
from __future__ import annotations

import argparse
import statistics
import time
from pathlib import Path

import benchlib as bl

COLUMNS = ["server", "round", "workload", "clients", "pipeline", "requests", "keyspace", "rps", "p50_ms"]
VALUE = "v" * 64
WORKLOADS = {
    "SET_EX": ["SET", "key:__rand_int__", VALUE, "EX", "100000"],
    "HSET": ["HSET", "h:__rand_int__", "f", VALUE],
    "SET": ["SET", "key:__rand_int__", VALUE],
    "GET": ["GET", "key:__rand_int__"],
}


def run_one(binary: str, port: int, args: list, clients: int, pipeline: int, requests: int, keyspace: int,
            pin: bool) -> dict:
    argv = bl.pin_prefix("client", pin) + [binary, "-h", "127.0.0.1", "-p", str(port), "-c", str(clients),
                                           "-n", str(requests), "-P", str(pipeline), "-r", str(keyspace),
                                           "-q", "--csv"] + args
    res = bl.run_process(argv, 60.0 + requests / 5000.0, "redis-benchmark")
    rows = bl.parse_bench_csv(res["stdout"])
    if res["returncode"] != 0 or not rows:
        raise RuntimeError("redis-benchmark failed (exit %s): %s\n%s" % (res["returncode"], " ".join(argv),
                                                                       (res["stdout"] + res["stderr"])[-500:]))
    return {"rps": rows[-1]["rps"], "p50_ms": rows[-1]["p50_ms"]}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--clients", type=int, default=50)
    ap.add_argument("--pipeline", type=int, default=100)
    ap.add_argument("--requests", type=int, default=3000000)
    ap.add_argument("--keyspace", type=int, default=1000000)
    ap.add_argument("--workloads", default=",".join(WORKLOADS), help="comma list from " + ",".join(WORKLOADS))
    ap.add_argument("--out", default=str(bl.REPO / "results" / "bench"))
    ap.add_argument("--no-pin", action="store_true")
    a = ap.parse_args()
    pin = not a.no_pin and bl.pinning_available()
    client = bl.client_binary("redis-benchmark")
    binaries = {k: bl.server_binary(k) for k in ("ferry", "redis")}
    names = a.workloads.split(",")
    out_dir = Path(a.out)
    rows, started, t0 = [], bl.utc_now(), time.monotonic()
    try:
        for rnd in range(a.rounds):
            for kind in (["ferry", "redis"] if rnd % 2 == 0 else ["redis", "ferry"]):
                with bl.Server(kind, binaries[kind], pin=pin) as srv:
                    for w in names:
                        r = run_one(client, srv.port, WORKLOADS[w], a.clients, a.pipeline, a.requests, a.keyspace,
                                    pin)
                        rows.append({"server": kind, "round": rnd, "workload": w, "clients": a.clients,
                                     "pipeline": a.pipeline, "requests": a.requests, "keyspace": a.keyspace, **r})
                        bl.log("round %d %-6s %-6s %10.0f rps" % (rnd, kind, w, r["rps"]))
    finally:
        bl.record_window(out_dir, "option_workloads", started, bl.utc_now(), pinning=bl.pinning_description(pin),
                         rows=len(rows))
    print("| workload | ferry rps | redis rps | ratio |")
    print("|---|---|---|---|")
    for w in names:
        med = {k: statistics.median(r["rps"] for r in rows if r["server"] == k and r["workload"] == w)
               for k in ("ferry", "redis")}
        print("| %s | %.0f | %.0f | %.2fx |" % (w, med["ferry"], med["redis"], med["ferry"] / med["redis"]))
    return bl.write_results(out_dir, "option_workloads", COLUMNS, rows, t0)


if __name__ == "__main__":
    bl.run_main(main)
