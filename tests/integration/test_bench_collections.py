"""ferry-bench's multi-element reply tests (lrange_100 ... lrange_600, hgetall,
smembers, zrange) and their prefill, against ferry and redis-server.

The numbers these tests produce are only meaningful if every request got
exactly one reply, no reply was an error, and the key read holds what the
README says (prefill: DEL, then RPUSH/HSET/SADD/ZADD in chunks). So for
both servers this runs ferry-bench over a key of the wrong type, then checks
the server's own command counts (INFO commandstats: every request executed
once, the prefill's chunk counts, no failed calls) and the data, and that
the two servers end with the same data. Error replies, in the measured
phase or in the prefill, must make ferry-bench exit 1 with the error text.
"""
from __future__ import annotations

import csv
import io
import os
import subprocess
from pathlib import Path

import pytest

from resp_client import parse, to_python

ROOT = Path(__file__).resolve().parents[2]
BUILD = Path(os.path.dirname(os.environ.get("FERRY_SERVER", str(ROOT / "build" / "ferry-server"))))
BENCH = BUILD / "ferry-bench"

pytestmark = pytest.mark.skipif(not BENCH.exists(), reason="ferry-bench not built in %s" % BUILD)

TITLES = ["LRANGE_100 (first 100 elements)", "LRANGE_300 (first 300 elements)",
          "LRANGE_500 (first 500 elements)", "LRANGE_600 (first 600 elements)",
          "HGETALL (1000 fields)", "SMEMBERS (1000 members)", "ZRANGE (1000 members WITHSCORES)"]
N = 203        # requests per test: not a multiple of C * P, so the last batch is partial
D = 64


def bench(port, *args, timeout=120):
    return subprocess.run([str(BENCH), "-p", str(port)] + [str(a) for a in args],
                          capture_output=True, text=True, timeout=timeout)


def cmd(server, *args):
    c = server.client()
    try:
        return to_python(parse(c.command(*args)))
    finally:
        c.close()


def commandstats(server):
    text = cmd(server, "INFO", "commandstats").decode()
    stats = {}
    for line in text.splitlines():
        if line.startswith("cmdstat_"):
            name, fields = line[len("cmdstat_"):].split(":", 1)
            stats[name] = {k: v for k, v in (f.split("=") for f in fields.split(","))}
    return stats


def snapshot(server):
    return (cmd(server, "LRANGE", "mylist", 0, -1),
            sorted(cmd(server, "HGETALL", "myhash")),
            sorted(cmd(server, "SMEMBERS", "myset")),
            cmd(server, "ZRANGE", "myzset", 0, -1, "WITHSCORES"),
            [cmd(server, "TYPE", k) for k in ("mylist", "myhash", "myset", "myzset")])


def run_all_tests(server):
    for k in ("mylist", "myhash", "myset", "myzset"):   # wrong types: the prefill's DEL fixes them
        cmd(server, "SET", k, "not a collection")
    res = bench(server.port, "-c", 4, "-P", 16, "-n", N, "-d", D, "--csv",
                "-t", "zrange,lrange,smembers,hgetall")
    assert res.returncode == 0, res.stderr
    rows = list(csv.DictReader(io.StringIO(res.stdout)))
    assert [r["test"] for r in rows] == TITLES     # fixed order, whatever -t's order
    assert all(float(r["rps"]) > 0 for r in rows)


def check_counts_and_data(server):
    st = commandstats(server)
    # every request executed exactly once: ferry-bench got one reply per request
    assert int(st["lrange"]["calls"]) == 4 * N
    for c in ("hgetall", "smembers", "zrange"):
        assert int(st[c]["calls"]) == N, c
    # the prefill: one DEL per test, 600 / 100 RPUSHes per lrange test, 1000 / 100 of the others
    assert int(st["del"]["calls"]) == 7
    assert int(st["rpush"]["calls"]) == 4 * 6
    for c in ("hset", "sadd", "zadd"):
        assert int(st[c]["calls"]) == 10, c
    assert all(s.get("failed_calls", "0") == "0" for s in st.values()), st
    assert cmd(server, "LLEN", "mylist") == 600
    assert cmd(server, "LINDEX", "mylist", 599) == b"x" * D
    assert cmd(server, "HLEN", "myhash") == 1000
    assert cmd(server, "HGET", "myhash", "element:000000000999") == b"x" * D
    member = b"element:000000000999" + b"x" * (D - 20)
    assert cmd(server, "SCARD", "myset") == 1000
    assert cmd(server, "SISMEMBER", "myset", member) == 1
    assert cmd(server, "ZCARD", "myzset") == 1000
    assert cmd(server, "ZSCORE", "myzset", member) == b"999"


def test_collection_tests_on_both_servers(ferry, redis):
    for server in (ferry, redis):
        run_all_tests(server)
        check_counts_and_data(server)
    assert snapshot(ferry) == snapshot(redis)


def test_collection_tests_not_in_default_set(ferry):
    res = bench(ferry.port, "-c", 2, "-n", 50, "-q")
    assert res.returncode == 0, res.stderr
    assert "LRANGE" not in res.stdout and "HGETALL" not in res.stdout
    assert cmd(ferry, "EXISTS", "mylist", "myhash", "myset", "myzset") == 0


@pytest.mark.parametrize("kind", ["ferry", "redis"])
def test_error_replies_fail_the_run(kind, server_factory):
    server = server_factory(kind)
    # measured phase: HGETALL refused
    cmd(server, "ACL", "SETUSER", "default", "-hgetall")
    res = bench(server.port, "-c", 2, "-n", 20, "-q", "-t", "hgetall")
    assert res.returncode == 1
    assert "20 of 20 replies were errors" in res.stderr and "NOPERM" in res.stderr, res.stderr
    assert cmd(server, "HLEN", "myhash") == 1000          # the prefill itself went through
    # prefill refused: the run stops before the test
    cmd(server, "ACL", "SETUSER", "default", "+hgetall", "-sadd")
    res = bench(server.port, "-c", 2, "-n", 20, "-q", "-t", "smembers")
    assert res.returncode == 1
    assert "SMEMBERS (1000 members): prefill failed: NOPERM" in res.stderr, res.stderr
    assert "requests per second" not in res.stdout


def test_congestion_option(ferry):
    """--congestion sets the TCP congestion control of every connection
    (scripts/values_bench.py uses cubic); a name the kernel does not know
    fails the run before any request, with the reason."""
    avail = Path("/proc/sys/net/ipv4/tcp_available_congestion_control").read_text().split()
    res = bench(ferry.port, "-c", 3, "-n", 300, "-t", "set", "-q", "--congestion", avail[0])
    assert res.returncode == 0, res.stderr
    assert "SET: " in res.stdout
    res = bench(ferry.port, "-c", 3, "-n", 300, "-t", "set", "-q", "--congestion", "no-such-cc")
    assert res.returncode == 1
    assert "TCP congestion control no-such-cc: No such file or directory" in res.stderr, res.stderr
    assert "requests per second" not in res.stdout
