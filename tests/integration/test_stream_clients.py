"""Streams through real client libraries against the real binary.

- python-rq (pinned in requirements.txt): jobs enqueued, a burst worker
  (`rq worker --burst`, a separate process that forks a work horse per
  job) runs them, and every job's result is read back: rq records each
  result with XADD ... MAXLEN inside a transaction and reads it with
  XREVRANGE, so this is the scenario that failed on ferry before streams
  existed. One job raises: its failure is recorded the same way.
- redis-py's stream API in RESP2 and RESP3: XADD/XRANGE/XREAD and a
  consumer group with XREADGROUP, XACK, XPENDING, XCLAIM, XAUTOCLAIM, and a
  blocked XREAD woken from another connection; both servers give the same
  Python values.
"""
from __future__ import annotations

import os
import subprocess
import sys
import textwrap
import threading
import time

import pytest
import redis

from conftest import server_pair, start_server

JOBS_MODULE = textwrap.dedent("""
    def add(a, b):
        return a + b

    def shout(s):
        return s.upper() * 2

    def fail(msg):
        raise ValueError(msg)
""")


@pytest.fixture
def jobs_dir(tmp_path):
    (tmp_path / "ferry_jobs.py").write_text(JOBS_MODULE)
    return tmp_path


def _run_rq(port, jobs_dir):
    from rq import Queue
    sys.path.insert(0, str(jobs_dir))
    try:
        import ferry_jobs
        conn = redis.Redis(port=port)
        q = Queue("default", connection=conn)
        jobs = [q.enqueue(ferry_jobs.add, i, i * 2) for i in range(20)]
        jobs += [q.enqueue(ferry_jobs.shout, "job%d" % i) for i in range(5)]
        bad = q.enqueue(ferry_jobs.fail, "boom")
        env = dict(os.environ, PYTHONPATH=str(jobs_dir))
        rq_bin = os.path.join(os.path.dirname(sys.executable), "rq")
        proc = subprocess.run([rq_bin, "worker", "--burst", "--url", "redis://127.0.0.1:%d" % port, "default"],
                              env=env, capture_output=True, timeout=120)
        assert proc.returncode == 0, proc.stderr.decode()[-2000:]
        values = []
        for j in jobs:
            j.refresh()
            assert j.get_status() == "finished", (j.id, j.get_status(), proc.stderr.decode()[-2000:])
            values.append(j.return_value())
            res = j.latest_result()
            assert res is not None and res.type == res.Type.SUCCESSFUL
        bad.refresh()
        assert bad.get_status() == "failed"
        latest = bad.latest_result()
        assert latest.type == latest.Type.FAILED and "boom" in latest.exc_string
        return values, conn.type("rq:results:%s" % jobs[0].id)
    finally:
        sys.path.remove(str(jobs_dir))


def test_python_rq_burst_worker(jobs_dir):
    with server_pair() as (f, r):
        got = [_run_rq(s.port, jobs_dir) for s in (f, r)]
    values, ktype = got[0]
    assert values == [3 * i for i in range(20)] + ["JOB%dJOB%d" % (i, i) for i in range(5)]
    assert ktype == b"stream"
    assert got[0] == got[1]


def _redispy_program(port, protocol):
    c = redis.Redis(port=port, protocol=protocol)
    c.flushall()
    out = []
    for i in range(1, 8):
        out.append(c.xadd("s", {"n": i, "sq": i * i}, id="%d-0" % i))
    out.append(c.xadd("s", {"x": "y"}, id="8-0", maxlen=5, approximate=False))
    out.append(c.xlen("s"))
    out.append(c.xrange("s", "-", "+", count=3))
    out.append(c.xrevrange("s", "+", "(5-0"))
    out.append(c.xread({"s": "6-0"}))
    out.append(c.xgroup_create("s", "g", id="0"))
    out.append(c.xreadgroup("g", "alice", {"s": ">"}, count=2))
    out.append(c.xreadgroup("g", "bob", {"s": ">"}))
    out.append(c.xpending("s", "g"))
    rows = c.xpending_range("s", "g", "-", "+", 10)
    out.append([(r["message_id"], r["consumer"], r["times_delivered"]) for r in rows])
    out.append(c.xack("s", "g", "4-0", "5-0"))
    out.append(c.xclaim("s", "g", "carol", 0, ["6-0"], justid=True))
    out.append(c.xautoclaim("s", "g", "dave", 0, "0-0", count=2))
    out.append(c.xdel("s", "7-0"))
    out.append(c.xtrim("s", maxlen=2))
    out.append(c.xrange("s"))
    out.append(c.xgroup_destroy("s", "g"))
    got = {}

    def reader():
        got["r"] = redis.Redis(port=port, protocol=protocol).xread({"s": "$"}, block=5000)

    t = threading.Thread(target=reader)
    t.start()
    for _ in range(200):
        if c.info("clients")["blocked_clients"]:
            break
        time.sleep(0.01)
    c.xadd("s", {"late": "1"}, id="100-0")
    t.join(10)
    out.append(got.get("r"))
    return out


@pytest.mark.parametrize("protocol", [2, 3])
def test_redis_py_stream_api(protocol):
    with server_pair() as (f, r):
        got = [_redispy_program(s.port, protocol) for s in (f, r)]
    assert got[0] == got[1]
    assert got[0][-1] is not None


def test_xadd_star_ids_are_monotonic_and_timestamped():
    s = start_server("ferry")
    try:
        c = redis.Redis(port=s.port)
        before = int(time.time() * 1000)
        ids = [c.xadd("s", {"a": i}) for i in range(2000)]
        after = int(time.time() * 1000)
        parsed = [tuple(int(x) for x in i.split(b"-")) for i in ids]
        assert parsed == sorted(parsed) and len(set(parsed)) == len(parsed)
        assert before - 1000 <= parsed[0][0] <= after + 1000
    finally:
        s.cleanup()
