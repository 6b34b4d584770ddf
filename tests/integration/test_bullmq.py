"""BullMQ (npm, pinned in tests/integration/node/package-lock.json, installed
by scripts/install-deps.sh) against the real binary: its Lua scripts write
each job's events with XADD ... MAXLEN ~ and its QueueEvents reads them
with XREAD BLOCK, so a queue works only when scripting and streams do.
node/bullmq_run.js runs 20 jobs and one that fails through a Worker on each
server; what the queue ends up holding and the events seen must be the
expected ones and the same on ferry and redis-server.
"""
from __future__ import annotations

import json
import os
import shutil
import subprocess

from conftest import server_pair

NODE_DIR = os.path.join(os.path.dirname(os.path.abspath(__file__)), "node")


def _run(port):
    node = shutil.which("node")
    assert node, "node is missing: run scripts/install-deps.sh (make deps)"
    assert os.path.isdir(os.path.join(NODE_DIR, "node_modules", "bullmq")), \
        "BullMQ is not installed: run scripts/install-deps.sh (make deps)"
    p = subprocess.run([node, "bullmq_run.js", str(port)], cwd=NODE_DIR, capture_output=True, timeout=120)
    assert p.returncode == 0, p.stderr.decode()[-3000:]
    return json.loads(p.stdout.decode().strip().splitlines()[-1])


def test_bullmq_queue_worker_and_events():
    with server_pair() as (f, r):
        got = [_run(s.port) for s in (f, r)]
    expected = sorted(3 * i for i in range(20))
    ferry = got[0]
    assert ferry["counts"]["completed"] == 20 and ferry["counts"]["failed"] == 1, ferry
    assert ferry["values"] == expected and ferry["seen"] == expected, ferry
    assert ferry["failed"] == [["bad", "boom", 1]], ferry
    assert ferry["eventsStreamNonEmpty"] is True
    assert got[0] == got[1]
