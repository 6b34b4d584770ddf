"""Memory per volatile key and idle CPU of active expiry, ferry vs redis-server.

What: for each server in turn (a fresh process on a free port), load N keys
`key:%012d` with 64-byte values, all set with EX 100000 (or without a TTL
with --persistent), through `redis-cli --pipe`; report used_memory growth per
key, then the server's CPU share over --idle seconds of doing nothing but its
cron (from /proc/<pid>/stat utime + stime).

Why: keys with a TTL cost ferry a place in the index of volatile keys, and
the active expiry cycle walks that index; this measures both costs next to
Redis's expires table. Printed only (a one-off check, not part of
`make bench`).
"""
from __future__ import annotations

import argparse
import os
import subprocess
import time

import benchlib as bl


def cpu_ticks(pid: int) -> int:
    fields = open("/proc/%d/stat" % pid).read().rsplit(")", 1)[1].split()
    return int(fields[11]) + int(fields[12])


def used_memory(cli: str, port: int) -> int:
    info = subprocess.run([cli, "-p", str(port), "INFO", "memory"], capture_output=True, text=True,
                          check=True).stdout
    return int(next(ln.split(":")[1] for ln in info.splitlines() if ln.startswith("used_memory:")))


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--keys", type=int, default=1000000)
    ap.add_argument("--idle", type=float, default=10.0, help="seconds of idle CPU measurement")
    ap.add_argument("--persistent", action="store_true", help="keys without a TTL")
    a = ap.parse_args()
    ttl = [] if a.persistent else ["EX", "100000"]
    data = b"".join(bl.encode_command("SET", "key:%012d" % i, "v" * 64, *ttl) for i in range(a.keys))
    cli = bl.which("redis-cli")
    for kind in ("redis", "ferry"):
        with bl.Server(kind, bl.server_binary(kind), pin=False) as srv:
            base = used_memory(cli, srv.port)
            subprocess.run([cli, "-p", str(srv.port), "--pipe"], input=data, capture_output=True, check=True)
            if bl.dbsize(srv.port) != a.keys:
                raise RuntimeError("%s holds %d keys, not %d" % (kind, bl.dbsize(srv.port), a.keys))
            per_key = (used_memory(cli, srv.port) - base) / a.keys
            time.sleep(2)
            t0, w0 = cpu_ticks(srv.pid), time.monotonic()
            time.sleep(a.idle)
            cpu = (cpu_ticks(srv.pid) - t0) / os.sysconf("SC_CLK_TCK") / (time.monotonic() - w0) * 100
            print("%s keys=%d ttl=%s used_memory/key=%.1f B idle_cpu=%.2f%%"
                  % (kind, a.keys, not a.persistent, per_key, cpu), flush=True)
    return 0


if __name__ == "__main__":
    bl.run_main(main)
