"""Memory per key: ferry vs redis-server, measured as resident set growth.

What: for each key count N (default 100000 and 1000000) and value size
(default 64 and 8 bytes), a fresh server is started, its VmRSS is read from
/proc/<pid>/status, N keys "key:%012d" (16 bytes) are SET with a value of
that many bytes over one socket (pipelined raw RESP, --batch commands per
write, every reply checked to be +OK, DBSIZE checked to be N), the server is
given --settle seconds, VmRSS is read again, and

    bytes_per_key = (rss_after - rss_before) / N

RSS values are in bytes. Both servers, in alternating order.

Why: ferry stores small strings in its own compact layout; RSS growth per key
against Redis 7.0 (jemalloc) is the user-visible cost of that choice. RSS
includes allocator overhead and fragmentation, which is the point; it is a
whole-process figure, so small N gives a noisier number.
"""
from __future__ import annotations

import argparse
import time
from pathlib import Path

import benchlib as bl

COLUMNS = ["server", "keys", "key_bytes", "value_bytes", "rss_before", "rss_after", "bytes_per_key"]


def int_list(s):
    return [int(x) for x in s.split(",") if x.strip()]


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--keys", type=int_list, default=[100000, 1000000], help="comma list of N (default 100000,1000000)")
    ap.add_argument("--values", type=int_list, default=[64, 8], help="comma list of value sizes (default 64,8)")
    ap.add_argument("--batch", type=int, default=10000, help="commands per write (default 10000)")
    ap.add_argument("--settle", type=float, default=0.5, help="seconds to wait before the second RSS read")
    ap.add_argument("--quick", action="store_true", help="smoke mode: N=10000 only")
    ap.add_argument("--servers", default="ferry,redis", help="comma list (default ferry,redis)")
    ap.add_argument("--out", default=str(bl.REPO / "results" / "bench"), help="output directory")
    ap.add_argument("--no-pin", action="store_true", help="do not pin the server with taskset")
    ap.add_argument("--ferry", default=None, help="ferry-server binary")
    ap.add_argument("--redis", default=None, help="redis-server binary")
    args = ap.parse_args(argv)
    if args.quick:
        args.keys = [10000]
    bl.install_signal_handlers()
    pin = bl.pinning_available() and not args.no_pin
    kinds = [k.strip() for k in args.servers.split(",") if k.strip()]
    binaries = {k: bl.server_binary(k, getattr(args, k)) for k in kinds}
    key_bytes = len(bl.KEY_FMT % 0)
    out_dir = Path(args.out)
    started = bl.utc_now()
    t0 = time.monotonic()
    rows = []
    first = 0
    try:
        for n in args.keys:
            for vb in args.values:
                order = kinds[first:] + kinds[:first]
                first = (first + 1) % len(kinds)
                for k in order:
                    with bl.Server(k, binaries[k], pin=pin) as srv:
                        time.sleep(args.settle)
                        before = srv.rss_bytes()
                        secs = bl.fill_keys(srv.port, n, vb, batch=args.batch, timeout=300.0)
                        got = bl.dbsize(srv.port)
                        if got != n:
                            raise RuntimeError("%s: DBSIZE %d after loading %d keys" % (k, got, n))
                        time.sleep(args.settle)
                        after = srv.rss_bytes()
                    bpk = (after - before) / float(n)
                    rows.append({"server": k, "keys": n, "key_bytes": key_bytes, "value_bytes": vb,
                                 "rss_before": before, "rss_after": after, "bytes_per_key": "%.1f" % bpk})
                    bl.log("memory: %-5s N=%-7d value %2d B: rss %d -> %d bytes, %.1f bytes/key (load %.1fs)"
                           % (k, n, vb, before, after, bpk, secs))
    finally:
        bl.record_window(out_dir, "memory", started, bl.utc_now(), pinning=bl.pinning_description(pin),
                         rows=len(rows))
    return bl.write_results(out_dir, "memory", COLUMNS, rows, t0)


if __name__ == "__main__":
    bl.run_main(main)
