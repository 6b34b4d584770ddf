"""ferry-null-server (bench/null/) end to end, with both I/O backends.

The null server is the yardstick of scripts/ceiling.py: its throughput under
ferry-bench bounds what any server can reach on this machine. That bound is
only meaningful if it answers every request real clients send, over the
same sockets, with correctly framed replies, so this runs redis-cli,
redis-benchmark and ferry-bench against it and checks what comes back. The
io_uring backend is skipped (with the reason) where the kernel refuses
io_uring; it exits with status 3 there by contract.
"""
from __future__ import annotations

import csv
import io
import os
import socket
import subprocess
import time
from pathlib import Path

import pytest

from conftest import free_port

ROOT = Path(__file__).resolve().parents[2]
BUILD = Path(os.path.dirname(os.environ.get("FERRY_SERVER", str(ROOT / "build" / "ferry-server"))))
NULL = BUILD / "ferry-null-server"
BENCH = BUILD / "ferry-bench"

pytestmark = pytest.mark.skipif(not NULL.exists() or not BENCH.exists(),
                                reason="ferry-null-server / ferry-bench not built in %s" % BUILD)


@pytest.fixture(params=["epoll", "uring"])
def null_port(request):
    port = free_port()
    proc = subprocess.Popen([str(NULL), "--port", str(port), "--io", request.param, "--value-size", "10"],
                            stderr=subprocess.PIPE)
    deadline = time.monotonic() + 10
    while True:
        if proc.poll() is not None:
            err = proc.stderr.read().decode()
            if proc.returncode == 3:
                pytest.skip("io_uring unavailable here: " + err.strip())
            raise AssertionError("null server exited %s: %s" % (proc.returncode, err))
        try:
            socket.create_connection(("127.0.0.1", port), timeout=1).close()
            break
        except OSError:
            assert time.monotonic() < deadline, "null server did not listen"
            time.sleep(0.02)
    yield port
    assert proc.poll() is None, "null server died during the test"
    proc.terminate()
    proc.wait(timeout=10)


def exchange(port: int, payload: bytes, expect_len: int, timeout: float = 5.0) -> bytes:
    with socket.create_connection(("127.0.0.1", port), timeout=timeout) as s:
        s.sendall(payload)
        data = b""
        while len(data) < expect_len:
            chunk = s.recv(65536)
            if not chunk:
                break
            data += chunk
        return data


def test_replies_are_framed_per_command(null_port):
    req = (b"*2\r\n$3\r\nGET\r\n$1\r\nk\r\n" b"*3\r\n$4\r\nMGET\r\n$1\r\na\r\n$1\r\nb\r\n"
           b"*2\r\n$4\r\nincr\r\n$1\r\nn\r\n" b"PING\r\n" b"*3\r\n$3\r\nSET\r\n$1\r\nk\r\n$1\r\nv\r\n")
    want = (b"$10\r\nxxxxxxxxxx\r\n" b"*2\r\n$10\r\nxxxxxxxxxx\r\n$10\r\nxxxxxxxxxx\r\n"
            b":1\r\n" b"+PONG\r\n" b"+OK\r\n")
    assert exchange(null_port, req, len(want)) == want


def test_partial_request_waits_then_completes(null_port):
    with socket.create_connection(("127.0.0.1", null_port), timeout=5) as s:
        s.sendall(b"*1\r\n$4\r\nPI")
        s.settimeout(0.3)
        with pytest.raises(socket.timeout):
            s.recv(16)
        s.settimeout(5)
        s.sendall(b"NG\r\n")
        assert s.recv(16) == b"+PONG\r\n"


def test_malformed_request_closes_only_that_connection(null_port):
    with socket.create_connection(("127.0.0.1", null_port), timeout=5) as other:
        assert exchange(null_port, b"*1\r\n+PING\r\n", 1) == b""   # closed, no reply
        other.sendall(b"*1\r\n$4\r\nPING\r\n")
        assert other.recv(16) == b"+PONG\r\n"


def test_redis_cli(null_port):
    out = subprocess.run(["redis-cli", "-p", str(null_port), "MGET", "a", "b", "c"],
                         capture_output=True, text=True, timeout=20, check=True).stdout
    assert out.split() == ["xxxxxxxxxx"] * 3


def test_redis_benchmark_pipelined(null_port):
    out = subprocess.run(["redis-benchmark", "-p", str(null_port), "-n", "20000", "-P", "16", "-q", "--csv",
                          "-t", "set,get,incr,mset"], capture_output=True, text=True, timeout=120, check=True).stdout
    rows = list(csv.DictReader(io.StringIO(out)))
    assert [r["test"] for r in rows] == ["SET", "GET", "INCR", "MSET (10 keys)"]
    assert all(float(r["rps"]) > 0 for r in rows)


def test_ferry_bench_many_connections_and_depths(null_port):
    for args in (["-c", "50", "-P", "1", "-t", "get,set,incr,mset,mget"],
                 ["-c", "200", "-P", "100", "-t", "get,mget", "-d", "1000"]):
        res = subprocess.run([str(BENCH), "-p", str(null_port), "-n", "40000", "--csv"] + args,
                             capture_output=True, text=True, timeout=120)
        assert res.returncode == 0, res.stderr     # exit 1 on any error reply or lost connection
        rows = list(csv.DictReader(io.StringIO(res.stdout)))
        assert len(rows) == len(args[5].split(",")) and all(float(r["rps"]) > 0 for r in rows)
