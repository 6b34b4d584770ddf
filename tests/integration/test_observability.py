"""Observability: the Prometheus endpoint (metrics-port), SLOWLOG, LATENCY,
INFO latencystats and STATS.

Why: the metrics endpoint shares the single-threaded event loop with RESP
clients, so besides the exposition format (checked with promtool when it is
installed) these tests check that hostile HTTP peers -- huge headers, half
sent requests, pipelined keep-alive requests -- never stall RESP traffic.
SLOWLOG/LATENCY/INFO latencystats reply shapes are compared with the
reference redis-server 7.0.15 where they are deterministic.

Needs the lead's wiring (command_call timing hook, registration of
slowlog_commands/latency_commands, latency_record_batch in the read path);
without it the SLOWLOG/LATENCY/STATS/latencystats/histogram tests fail.
"""
from __future__ import annotations

import http.client
import re
import shutil
import socket
import subprocess
import time
import urllib.error
import urllib.request

import pytest
import redis as redispy

from conftest import free_port
from resp_client import RawClient

PROMTOOL = shutil.which("promtool")


@pytest.fixture
def mferry(ferry_factory):
    port = free_port()
    s = ferry_factory("--metrics-port", port, "--enable-debug-command", "yes")
    s.metrics_port = port
    return s


def scrape(server, path="/metrics"):
    with urllib.request.urlopen("http://127.0.0.1:%d%s" % (server.metrics_port, path), timeout=5) as r:
        return r.status, dict(r.headers), r.read().decode()


def rclient(server, **kw):
    kw.setdefault("socket_timeout", 5)
    return redispy.Redis(host="127.0.0.1", port=server.port, **kw)


def parse_exposition(text):
    """{family: {"type":..., "help":..., "samples": [(name, labels, value)]}}"""
    fams, cur = {}, None
    for line in text.splitlines():
        if line.startswith("# HELP "):
            name, _, help_ = line[7:].partition(" ")
            cur = fams.setdefault(name, {"samples": []})
            cur["help"] = help_
        elif line.startswith("# TYPE "):
            name, _, typ = line[7:].partition(" ")
            fams.setdefault(name, {"samples": []})["type"] = typ
        elif line and not line.startswith("#"):
            m = re.match(r'^([a-zA-Z_:][a-zA-Z0-9_:]*)(\{(.*)\})? (\S+)$', line)
            assert m, "bad sample line %r" % line
            labels = dict(re.findall(r'(\w+)="((?:[^"\\]|\\.)*)"', m.group(3) or ""))
            base = re.sub(r"_(bucket|sum|count)$", "", m.group(1))
            fam = fams.get(m.group(1)) or fams.get(base)
            assert fam is not None, "sample %s without HELP/TYPE" % m.group(1)
            fam["samples"].append((m.group(1), labels, float(m.group(4))))
    return fams


def test_metrics_basic_and_help_type(mferry):
    r = rclient(mferry)
    r.set("a", "1")
    r.get("a")
    r.get("missing")
    status, headers, body = scrape(mferry)
    assert status == 200
    assert headers["Content-Type"] == "text/plain; version=0.0.4; charset=utf-8"
    assert int(headers["Content-Length"]) == len(body.encode())
    fams = parse_exposition(body)
    for name, f in fams.items():
        assert name.startswith("ferry_")
        assert "help" in f and "type" in f, name
        if f["type"] == "counter":
            assert name.endswith("_total"), name
    val = lambda fam, **lb: [v for _, l, v in fams[fam]["samples"] if all(l.get(k) == x for k, x in lb.items())]
    assert val("ferry_up") == [1]
    assert val("ferry_db_keys", db="db0") == [1]
    assert val("ferry_keyspace_hits_total") == [1]
    assert val("ferry_keyspace_misses_total") == [1]
    assert val("ferry_commands_total", cmd="set") == [1]
    assert val("ferry_connected_clients")[0] >= 1
    assert val("ferry_version_info")[0] == 1
    assert {l["syscall"] for _, l, _ in fams["ferry_syscalls_total"]["samples"]} == {"read", "writev", "epoll_wait"}


def test_metrics_histograms_invariants(mferry):
    r = rclient(mferry)
    p = r.pipeline(transaction=False)
    for i in range(500):
        p.set("k%d" % i, i)
    p.execute()
    r.execute_command("DEBUG", "SLEEP", "0.002")
    fams = parse_exposition(scrape(mferry)[2])
    for fam in ("ferry_command_duration_seconds", "ferry_batch_size"):
        assert fams[fam]["type"] == "histogram"
        series = {}
        for name, labels, v in fams[fam]["samples"]:
            key = labels.get("cmd", "")
            series.setdefault(key, {"buckets": [], "sum": None, "count": None})
            if name.endswith("_bucket"):
                series[key]["buckets"].append((labels["le"], v))
            elif name.endswith("_sum"):
                series[key]["sum"] = v
            else:
                series[key]["count"] = v
        assert series
        for key, s in series.items():
            les = [le for le, _ in s["buckets"]]
            assert les[-1] == "+Inf"
            bounds = [float(x) for x in les[:-1]]
            assert bounds == sorted(bounds) and len(set(bounds)) == len(bounds)
            counts = [v for _, v in s["buckets"]]
            assert counts == sorted(counts), (fam, key)
            assert counts[-1] == s["count"]
            assert s["sum"] is not None and s["sum"] >= 0
    dur = [l for n, l, v in fams["ferry_command_duration_seconds"]["samples"] if n.endswith("_count")]
    assert any(l["cmd"] == "set" for l in dur)
    # the pipelined SETs were executed in batches of more than one command
    bs = [(l["le"], v) for n, l, v in fams["ferry_batch_size"]["samples"] if n.endswith("_bucket")]
    assert dict(bs)["1"] < dict(bs)["+Inf"]
    # DEBUG SLEEP 0.002 lands above 1 ms
    debug = {l["le"]: v for n, l, v in fams["ferry_command_duration_seconds"]["samples"]
             if n.endswith("_bucket") and l["cmd"] == "debug"}
    assert debug["0.001"] == 0 and debug["0.005"] == 1


@pytest.mark.skipif(PROMTOOL is None, reason="promtool not installed")
def test_promtool_check_metrics(mferry):
    r = rclient(mferry)
    r.set("a", 1)
    r.incr("a")
    try:
        r.execute_command("NOSUCH")
    except redispy.ResponseError:
        pass
    body = scrape(mferry)[2]
    p = subprocess.run([PROMTOOL, "check", "metrics"], input=body.encode(), capture_output=True, timeout=30)
    assert p.returncode == 0 and not p.stdout.strip() and not p.stderr.strip(), p.stdout + p.stderr


def raw_http(server, data, timeout=5.0, shut=False):
    s = socket.create_connection(("127.0.0.1", server.metrics_port), timeout=timeout)
    try:
        s.sendall(data)
        if shut:
            s.shutdown(socket.SHUT_WR)
        out = b""
        while True:
            try:
                chunk = s.recv(65536)
            except (ConnectionResetError, socket.timeout):
                break
            if not chunk:
                break
            out += chunk
        return out
    finally:
        s.close()


def test_http_errors(mferry):
    with pytest.raises(urllib.error.HTTPError) as e:
        scrape(mferry, "/nope")
    assert e.value.code == 404
    out = raw_http(mferry, b"POST /metrics HTTP/1.1\r\nHost: x\r\nContent-Length: 3\r\n\r\nabc")
    assert out.startswith(b"HTTP/1.1 405 ")
    assert b"Connection: close" in out
    for bad in (b"garbage\r\n\r\n", b"GET /metrics\r\n\r\n", b"GET /metrics HTTP/9.9\r\n\r\n",
                b"GET  HTTP/1.1\r\n\r\n", b"GET /metrics HTTP/1.1\r\nX: \x01\r\n\r\n"):
        out = raw_http(mferry, bad)
        assert out.startswith(b"HTTP/1.1 400 "), (bad, out[:60])
    # the server is fine afterwards
    assert scrape(mferry)[0] == 200
    assert rclient(mferry).ping()


def test_keepalive_pipelined_requests(mferry):
    req = b"GET /metrics HTTP/1.1\r\nHost: x\r\n\r\n"
    s = socket.create_connection(("127.0.0.1", mferry.metrics_port), timeout=5)
    s.sendall(req * 3 + b"GET /x HTTP/1.1\r\nHost: x\r\n\r\n" + b"HEAD /metrics HTTP/1.1\r\nConnection: close\r\n\r\n")
    data = b""
    while True:
        chunk = s.recv(1 << 16)
        if not chunk:
            break
        data += chunk
    s.close()
    codes, pos = [], 0
    while pos < len(data):
        end = data.index(b"\r\n\r\n", pos) + 4
        head = data[pos:end].decode()
        codes.append(int(head.split()[1]))
        length = int(re.search(r"Content-Length: (\d+)", head).group(1))
        is_head = len(codes) == 5
        pos = end + (0 if is_head else length)
    assert codes == [200, 200, 200, 404, 200]
    # http.client on one connection: keep-alive
    conn = http.client.HTTPConnection("127.0.0.1", mferry.metrics_port, timeout=5)
    for _ in range(3):
        conn.request("GET", "/metrics")
        resp = conn.getresponse()
        assert resp.status == 200
        resp.read()
    conn.close()


def test_huge_header_does_not_block_resp(mferry):
    c = RawClient(mferry.port)
    s = socket.create_connection(("127.0.0.1", mferry.metrics_port), timeout=5)
    s.sendall(b"GET /metrics HTTP/1.1\r\n")
    sent, got = 0, b""
    chunk = b"X-Big: " + b"a" * 65536 + b"\r\n"
    try:
        while sent < 1 << 20:
            s.sendall(chunk)
            sent += len(chunk)
            assert c.command("PING") == b"+PONG\r\n"
    except (BrokenPipeError, ConnectionResetError):
        pass
    try:
        s.settimeout(5)
        while True:
            d = s.recv(65536)
            if not d:
                break
            got += d
    except (ConnectionResetError, socket.timeout):
        pass
    s.close()
    assert got == b"" or got.startswith(b"HTTP/1.1 431 ") or got.startswith(b"HTTP/1.1 400 ")
    assert c.command("PING") == b"+PONG\r\n"
    c.close()
    assert scrape(mferry)[0] == 200


def test_partial_request_held_open(mferry):
    s = socket.create_connection(("127.0.0.1", mferry.metrics_port), timeout=5)
    s.sendall(b"GET /metr")
    r = rclient(mferry)
    for i in range(200):
        r.set("k%d" % i, i)
        assert r.get("k%d" % i) == str(i).encode()
    assert scrape(mferry)[0] == 200  # another scraper is served meanwhile
    s.sendall(b"ics HTTP/1.1\r\nConnection: close\r\n\r\n")
    data = b""
    while True:
        d = s.recv(65536)
        if not d:
            break
        data += d
    s.close()
    assert data.startswith(b"HTTP/1.1 200 OK\r\n")


def test_slow_reader_does_not_block_resp(mferry):
    """Many pipelined scrapes, responses not read: the server parks the
    connection on a writable event and keeps serving RESP clients."""
    s = socket.create_connection(("127.0.0.1", mferry.metrics_port), timeout=10)
    s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 65536)
    n = 600
    s.sendall(b"GET /metrics HTTP/1.1\r\nHost: x\r\n\r\n" * n)
    time.sleep(0.3)
    c = RawClient(mferry.port)
    for _ in range(20):
        assert c.command("PING") == b"+PONG\r\n"
    assert scrape(mferry)[0] == 200
    data, done, pos = b"", 0, 0
    s.settimeout(10)
    while done < n:
        d = s.recv(1 << 16)
        assert d, "connection closed after %d responses" % done
        data += d
        while True:  # count complete responses
            end = data.find(b"\r\n\r\n", pos)
            if end < 0:
                break
            length = int(re.search(rb"Content-Length: (\d+)", data[pos:end]).group(1))
            if len(data) < end + 4 + length:
                break
            pos = end + 4 + length
            done += 1
    s.close()
    assert data.count(b"HTTP/1.1 200 OK\r\n") == n
    c.close()


def test_connection_limit(mferry):
    socks = [socket.create_connection(("127.0.0.1", mferry.metrics_port), timeout=5) for _ in range(80)]
    try:
        assert rclient(mferry).ping()
    finally:
        for s in socks:
            s.close()
    time.sleep(0.1)
    assert scrape(mferry)[0] == 200


def info_text(server, section):
    with RawClient(server.port) as c:
        raw = c.command("INFO", section)
    head, _, body = raw.partition(b"\r\n")
    assert head.startswith(b"$")
    return body[:int(head[1:])].decode()


def shape(v):
    """Structure of a reply: types and lengths, values of ints replaced."""
    if isinstance(v, list):
        return [shape(x) for x in v]
    if isinstance(v, int):
        return "int"
    return "bytes"


def test_slowlog_matches_redis(ferry_factory, redis_factory):
    outs = []
    for srvr in (ferry_factory("--slowlog-log-slower-than", "0"), redis_factory("--slowlog-log-slower-than", "0")):
        r = rclient(srvr)
        r.execute_command("SLOWLOG", "RESET")
        r.execute_command("CLIENT", "SETNAME", "me")
        r.set("x" * 200, "v")
        r.execute_command("DEL", *["a"] * 40)
        entries = r.execute_command("SLOWLOG", "GET", "-1")
        n = r.execute_command("SLOWLOG", "LEN")
        help_ = r.execute_command("SLOWLOG", "HELP")
        errs = []
        for args in (("SLOWLOG", "GET", "-2"), ("SLOWLOG", "GET", "x"), ("SLOWLOG", "NOPE"),
                     ("SLOWLOG", "GET", "1", "2"), ("SLOWLOG", "LEN", "x")):
            try:
                r.execute_command(*args)
            except redispy.ResponseError as e:
                errs.append(str(e))
        zero = r.execute_command("SLOWLOG", "GET", "0")
        outs.append((entries, n, help_, errs, zero))
    (fe, fn, fh, ferr, fz), (re_, rn, rh, rerr, rz) = outs
    assert fh == rh and ferr == rerr and fz == rz == []
    assert shape(fe) == shape(re_)
    for a, b in zip(fe, re_):
        assert a[3] == b[3]  # argv after truncation
        assert a[5] == b[5]  # client name
        assert re.match(rb"^127\.0\.0\.1:\d+$", a[4])
    assert any(e[3][1].endswith(b"... (72 more bytes)") for e in fe)
    assert any(e[3][-1] == b"... (10 more arguments)" and len(e[3]) == 32 for e in fe)
    ids = [e[0] for e in fe]
    assert ids == sorted(ids, reverse=True)


def test_slowlog_threshold_and_maxlen(ferry_factory):
    s = ferry_factory("--slowlog-log-slower-than", "5000", "--slowlog-max-len", "2", "--enable-debug-command", "yes")
    r = rclient(s)
    r.execute_command("SLOWLOG", "RESET")
    r.set("a", 1)
    assert r.execute_command("SLOWLOG", "LEN") == 0
    for _ in range(3):
        r.execute_command("DEBUG", "SLEEP", "0.006")
    e = r.execute_command("SLOWLOG", "GET")
    assert len(e) == 2 and e[0][2] >= 5000 and e[0][3] == [b"DEBUG", b"SLEEP", b"0.006"]
    r.config_set("slowlog-log-slower-than", -1)
    r.execute_command("SLOWLOG", "RESET")
    r.execute_command("DEBUG", "SLEEP", "0.006")
    assert r.execute_command("SLOWLOG", "LEN") == 0


def test_latency_monitor_and_histogram_match_redis(ferry_factory, redis_factory):
    outs = []
    for srvr in (ferry_factory("--latency-monitor-threshold", "1", "--enable-debug-command", "yes"),
                 redis_factory("--latency-monitor-threshold", "1", "--enable-debug-command", "yes")):
        r = rclient(srvr)
        for i in range(50):
            r.set("k%d" % i, i)
        r.execute_command("DEBUG", "SLEEP", "0.005")
        latest = r.execute_command("LATENCY", "LATEST")
        hist = r.execute_command("LATENCY", "HISTORY", "command")
        hg = r.execute_command("LATENCY", "HISTOGRAM", "set", "nosuch")
        hall = r.execute_command("LATENCY", "HISTOGRAM")
        info = info_text(srvr, "latencystats")
        help_ = r.execute_command("LATENCY", "HELP")
        reset = r.execute_command("LATENCY", "RESET")
        after = r.execute_command("LATENCY", "LATEST")
        outs.append((latest, hist, hg, hall, info, help_, reset, after))
    f, rd = outs
    assert shape(f[0]) == shape(rd[0]) and f[0][0][0] == b"command" and f[0][0][2] >= 5
    assert shape(f[1]) == shape(rd[1])
    assert len(f[2]) == len(rd[2]) == 2 and f[2][0] == rd[2][0] == b"set"
    assert shape(f[2][1][:3]) == shape(rd[2][1][:3]) and len(f[2][1][3]) % 2 == 0
    fset = f[2][1]
    assert fset[0] == b"calls" and fset[1] == 50 and fset[2] == b"histogram_usec"
    buckets = fset[3]
    assert buckets[-1] == 50 and buckets[1::2] == sorted(buckets[1::2])
    for line in f[4].splitlines()[1:]:
        assert re.match(r"^latency_percentiles_usec_[a-z|]+:p50=\d+\.\d{3},p99=\d+\.\d{3},p99\.9=\d+\.\d{3}$",
                        line), line
    assert "latency_percentiles_usec_set:" in f[4] and "latency_percentiles_usec_debug:" in f[4]
    assert f[5] == rd[5]  # LATENCY HELP, GRAPH included
    assert f[6] == rd[6] == 1 and f[7] == rd[7] == []


def test_latency_tracking_off(ferry_factory):
    s = ferry_factory("--latency-tracking", "no")
    r = rclient(s)
    r.set("a", 1)
    assert info_text(s, "latencystats").strip() == "# Latencystats"
    assert r.execute_command("LATENCY", "HISTOGRAM") in ([], {})


def test_stats_json(mferry):
    import json
    r = rclient(mferry)
    r.set("a", 1)
    r.get("a")
    r.get("b")
    d = json.loads(r.execute_command("STATS"))
    assert d["hits"] == 1 and d["misses"] == 1 and d["hit_rate"] == 0.5
    for k in ("p50_us", "p95_us", "p99_us"):
        assert d[k] >= 0
    assert set(d["batch"]) == {"count", "mean", "p50", "p99", "max"} and d["batch"]["count"] >= 3
    assert set(d["syscalls_per_op"]) == {"read", "writev", "epoll_wait"}
    assert set(d["tail_events"]) == {"over_1ms", "over_10ms"}


def test_slowlog_zero_threshold_logs_pipelined_fast_commands(ferry_factory, redis_factory):
    """With slowlog-log-slower-than 0 every call is logged, including fast
    commands sent in a pipeline (which ferry otherwise times per run)."""
    logged = {}
    for name, factory in (("ferry", ferry_factory), ("redis", redis_factory)):
        s = factory()
        r = rclient(s)
        r.config_set("slowlog-log-slower-than", 0)
        r.slowlog_reset()
        p = r.pipeline(transaction=False)
        for i in range(5):
            p.set("k%d" % i, "v")
            p.get("k%d" % i)
        p.execute()
        logged[name] = [e["command"] for e in r.slowlog_get(20)]
    assert logged["ferry"] == logged["redis"]
    assert b"GET k4" in logged["ferry"] and b"SET k0 v" in logged["ferry"]


def test_bounded_calls_timed_per_run_keep_counts_and_zero_threshold_log(ferry_factory, redis_factory):
    """PFCOUNT of one key and GEOADD of one member are timed per run like
    fast commands (command.run_argc); their wider forms one by one. Either
    way commandstats counts every call, and slowlog-log-slower-than 0 still
    logs each call as redis-server does."""
    seen = {}
    for name, factory in (("ferry", ferry_factory), ("redis", redis_factory)):
        s = factory()
        r = rclient(s)
        r.pfadd("h1", "a", "b")
        r.pfadd("h2", "c")
        for threshold in (10000, 0):
            r.config_set("slowlog-log-slower-than", threshold)
            r.config_resetstat()
            r.slowlog_reset()
            p = r.pipeline(transaction=False)
            for i in range(4):
                p.pfcount("h1")
                p.geoadd("g", (13.36, 38.11, "m%d" % i))
            p.pfcount("h1", "h2")
            p.geoadd("g", (13.0, 38.0, "x1", 13.1, 38.1, "x2"))
            p.execute()
            stats = r.info("commandstats")
            calls = {k: v["calls"] for k, v in stats.items() if k in ("cmdstat_pfcount", "cmdstat_geoadd")}
            log = [e["command"] for e in r.slowlog_get(20) if not e["command"].startswith(b"CONFIG")]
            seen[(name, threshold)] = (calls, log)
    for threshold in (10000, 0):
        assert seen[("ferry", threshold)] == seen[("redis", threshold)]
    calls, log = seen[("ferry", 0)]
    assert calls == {"cmdstat_pfcount": 5, "cmdstat_geoadd": 5}
    assert b"PFCOUNT h1" in log and b"GEOADD g 13.36 38.11 m3" in log and len(log) >= 10


def test_output_ring_high_water_tracks_largest_flush(mferry):
    """ferry_output_ring_high_water_bytes reports the fullest output ring:
    a 200 KB value read once pushes it past 200 KB, and it stays there after
    the client disconnects."""
    r = rclient(mferry)
    r.set("big", "x" * 200_000)
    assert len(r.get("big")) == 200_000
    r.close()
    fams = parse_exposition(scrape(mferry)[2])
    (_, _, value), = fams["ferry_output_ring_high_water_bytes"]["samples"]
    assert 200_000 < value < 4 * 1024 * 1024, value


def _latencystats_shape(r):
    """INFO latencystats with the numbers masked, one line per command, sorted."""
    with RawClient(r.connection_pool.connection_kwargs["port"]) as c:
        text = c.command("INFO", "latencystats").decode()
    lines = [ln for ln in text.split("\r\n") if ln.startswith("latency_percentiles_usec_set")]
    return [re.sub(r"=\d+\.\d{3}", "=N", ln) for ln in lines]


def test_latencystats_percentiles_config_matches_redis(ferry_factory, redis_factory):
    shapes = []
    for srvr in (ferry_factory("--latency-tracking-info-percentiles", "50 99.5 100 0 12.25"),
                 redis_factory("--latency-tracking-info-percentiles", "50 99.5 100 0 12.25")):
        r = rclient(srvr)
        r.set("a", "b")
        one = _latencystats_shape(r)
        r.execute_command("CONFIG", "SET", "latency-tracking-info-percentiles", "")
        none = _latencystats_shape(r)
        r.execute_command("CONFIG", "SET", "latency-tracking-info-percentiles", "99.9")
        last = _latencystats_shape(r)
        shapes.append((one, none, last))
    assert shapes[0] == shapes[1]
    assert shapes[0][0] == ["latency_percentiles_usec_set:p50=N,p99.5=N,p100=N,p0=N,p12.25=N"]
