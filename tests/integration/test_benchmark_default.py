"""redis-benchmark's default test list (no -t) runs to the end against ferry
with no error reply (issue #6): it exercises PING, SET/GET/INCR, the list
pushes and pops, SADD/SPOP, HSET, ZADD/ZPOPMIN, LRANGE_100..600 and MSET.
Afterwards the keys it wrote have the right types and sizes. Throughput is
measured elsewhere (scripts/default_suite.py), not asserted here.
"""
from __future__ import annotations

import re
import shutil
import subprocess

import redis

from test_clients import _csv_rows

REDIS_BENCHMARK = shutil.which("redis-benchmark") or "/usr/bin/redis-benchmark"
DEFAULT_TESTS = ["PING_INLINE", "PING_MBULK", "SET", "GET", "INCR", "LPUSH", "RPUSH", "LPOP", "RPOP",
                 "SADD", "HSET", "SPOP", "ZADD", "ZPOPMIN", "LPUSH (needed to benchmark LRANGE)",
                 "LRANGE_100 (first 100 elements)", "LRANGE_300 (first 300 elements)",
                 "LRANGE_500 (first 500 elements)", "LRANGE_600 (first 600 elements)", "MSET (10 keys)"]


def _run(server, *args):
    r = subprocess.run([REDIS_BENCHMARK, "-h", "127.0.0.1", "-p", str(server.port)] + list(args),
                       capture_output=True, timeout=240)
    return r, (r.stdout + r.stderr).decode("utf-8", "replace")


def test_default_run_completes_without_errors(ferry):
    r, text = _run(ferry, "-n", "5000", "-c", "20", "--csv")
    assert r.returncode == 0, text
    assert "ERR" not in text and "WRONGTYPE" not in text, text
    rows = _csv_rows(text)
    assert list(rows) == DEFAULT_TESTS, text
    assert all(float(cells[0]) > 0 for cells in rows.values()), rows
    c = redis.Redis(host="127.0.0.1", port=ferry.port)
    assert c.type("mylist") == b"list"
    # LPUSH x5000 + RPUSH x5000 - LPOP x5000 - RPOP x5000 + LPUSH x5000 (for LRANGE)
    assert c.llen("mylist") == 5000
    # SADD/SPOP and ZADD/ZPOPMIN use one member (no -r): popped empty, deleted
    assert c.exists("myset", "myzset") == 0
    assert c.type("myhash") == b"hash" and c.hlen("myhash") == 1
    assert c.get("counter:__rand_int__") == b"5000"
    lr = c.lrange("mylist", 0, 599)
    assert len(lr) == 600 and len(set(lr)) == 1 and len(lr[0]) == 3   # the -d 3 payload

def test_default_run_pipelined(ferry):
    r, text = _run(ferry, "-n", "20000", "-c", "50", "-P", "16", "-q")
    assert r.returncode == 0, text
    assert "ERR" not in text, text
    names = [m.group(1) for m in re.finditer(r"(?:^|[\r\n])([A-Z_]+[^:\r\n]*): [0-9.]+ requests per second", text)]
    assert names == DEFAULT_TESTS, text
