"""LATENCY GRAPH (src/server/latency_graph.c) and MEMORY MALLOC-STATS.

LATENCY GRAPH: the error for an event without samples and the arity error
are redis-server's bytes; with samples the first two lines (event, high,
low, all-time high; a rule of 80 dashes) are Redis's format and the chart
under them is ferry's own: one column of '#' per sample, 4 rows, then a
line with the number of samples and their ages.
MEMORY MALLOC-STATS: ferry's plain report of its allocator (no jemalloc).
"""
from __future__ import annotations

import re

from conftest import server_pair
from diffkit import format_report, run_steps
from resp_client import RawClient, parse


def test_graph_errors_match_redis():
    steps = [["LATENCY", "GRAPH", "command"], ["LATENCY", "GRAPH"], ["LATENCY", "GRAPH", "a", "b"],
             ["CONFIG", "SET", "latency-monitor-threshold", "1"], ["LATENCY", "GRAPH", "nosuch"]]
    with server_pair() as (f, r):
        mismatches, transcript = run_steps(f.port, r.port, steps)
        assert not mismatches, format_report("latency graph", mismatches, transcript)


def test_graph_of_samples():
    with server_pair("--enable-debug-command", "yes") as (f, r):
        heads = {}
        for s in (f, r):
            with RawClient(s.port) as c:
                c.command("CONFIG", "SET", "latency-monitor-threshold", "1")
                c.command("DEBUG", "SLEEP", "0.05")
                kind, val = parse(c.command("LATENCY", "GRAPH", "command"))
                assert kind == "bulk"
                heads[s.kind] = val.decode().split("\n")
        mine = heads["ferry"]
        assert re.match(r"^command - high \d+ ms, low \d+ ms \(all time high \d+ ms\)$", mine[0]), mine[0]
        assert mine[1] == heads["redis"][1] == "-" * 80
        assert mine[2:6] == ["#"] * 4
        assert re.match(r"^1 sample\(s\), one column each: the oldest \d+s ago, the newest \d+s ago$", mine[6])
        with RawClient(f.port) as c:
            c.command("HELLO", "3")
            assert c.command("LATENCY", "GRAPH", "command").startswith(b"=")


def test_malloc_stats_text():
    with server_pair() as (f, _):
        with RawClient(f.port) as c:
            kind, val = parse(c.command("MEMORY", "MALLOC-STATS"))
            assert kind == "bulk"
            assert val.startswith(b"ferry allocator: the C library's malloc")
            assert re.search(rb"zmalloc used bytes: \d+\n", val)
