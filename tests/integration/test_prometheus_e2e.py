"""End to end with a real Prometheus server: Debian's prometheus scrapes
ferry's metrics-port every second while redis-py drives load, then the test
asks Prometheus's HTTP API for the rate of commands and a latency quantile
computed from ferry's histogram buckets.

Why: promtool checks the text format; only a real server shows that the
counters move as counters, that the histogram is usable by
histogram_quantile, and that the queries the Grafana dashboard
(scripts/grafana/ferry-dashboard.json) uses return data.
"""
from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import tempfile
import threading
import time
import urllib.parse
import urllib.request

import pytest
import redis as redispy

from conftest import free_port

PROMETHEUS = shutil.which("prometheus")
DASHBOARD = os.path.join(os.path.dirname(__file__), "..", "..", "scripts", "grafana", "ferry-dashboard.json")


def query(port, expr):
    url = "http://127.0.0.1:%d/api/v1/query?%s" % (port, urllib.parse.urlencode({"query": expr}))
    with urllib.request.urlopen(url, timeout=5) as r:
        doc = json.loads(r.read().decode())
    assert doc["status"] == "success", doc
    return doc["data"]["result"]


@pytest.fixture
def prometheus_for(tmp_path):
    procs = []

    def start(metrics_port):
        port = free_port()
        cfg = tmp_path / "prometheus.yml"
        cfg.write_text("global:\n  scrape_interval: 1s\n  evaluation_interval: 1s\n"
                       "scrape_configs:\n  - job_name: ferry\n    static_configs:\n"
                       "      - targets: ['127.0.0.1:%d']\n" % metrics_port)
        log = open(tmp_path / "prometheus.log", "wb")
        p = subprocess.Popen([PROMETHEUS, "--config.file=%s" % cfg, "--storage.tsdb.path=%s" % (tmp_path / "tsdb"),
                              "--web.listen-address=127.0.0.1:%d" % port, "--log.level=warn"],
                             stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
        procs.append(p)
        deadline = time.time() + 20
        while time.time() < deadline:
            try:
                with urllib.request.urlopen("http://127.0.0.1:%d/-/ready" % port, timeout=1) as r:
                    if r.status == 200:
                        return port
            except OSError:
                time.sleep(0.2)
        raise AssertionError("prometheus did not become ready: %s" % (tmp_path / "prometheus.log").read_text()[-2000:])

    yield start
    for p in procs:
        try:
            os.killpg(p.pid, signal.SIGTERM)
            p.wait(timeout=10)
        except (ProcessLookupError, subprocess.TimeoutExpired):
            os.killpg(p.pid, signal.SIGKILL)


@pytest.mark.skipif(PROMETHEUS is None, reason="prometheus not installed (make deps installs it)")
def test_prometheus_scrapes_rates_and_quantiles(ferry_factory, prometheus_for):
    mport = free_port()
    srv = ferry_factory("--metrics-port", mport)
    pport = prometheus_for(mport)
    stop = threading.Event()

    def load():
        r = redispy.Redis(host="127.0.0.1", port=srv.port, socket_timeout=5)
        i = 0
        while not stop.is_set():
            p = r.pipeline(transaction=False)
            for _ in range(50):
                p.set("k%d" % (i % 1000), "v")
                p.get("k%d" % (i % 1000))
                i += 1
            p.execute()

    t = threading.Thread(target=load, daemon=True)
    t.start()
    try:
        rate = quant = hits = None
        deadline = time.time() + 40
        while time.time() < deadline:
            time.sleep(1)
            rate = query(pport, "rate(ferry_commands_processed_total[5s])")
            quant = query(pport, 'histogram_quantile(0.99, sum by (le) (rate(ferry_command_duration_seconds_bucket{cmd="get"}[5s])))')
            hits = query(pport, "rate(ferry_keyspace_hits_total[5s])")
            if rate and quant and hits and float(rate[0]["value"][1]) > 0 and quant[0]["value"][1] not in ("NaN", "+Inf"):
                break
    finally:
        stop.set()
        t.join(timeout=10)
    assert rate, "no rate(ferry_commands_processed_total) from Prometheus"
    r = float(rate[0]["value"][1])
    # redis-py pipelines of 100 commands over loopback: hundreds to millions per second
    assert 100 < r < 50e6, r
    assert hits and float(hits[0]["value"][1]) > 0
    q = float(quant[0]["value"][1])
    # a GET's p99 execution time: positive and well under a second
    assert 0 < q < 0.5, q
    up = query(pport, 'up{job="ferry"}')
    assert up and up[0]["value"][1] == "1"
    # every query of the Grafana dashboard is valid PromQL and returns data
    dash = json.loads(open(DASHBOARD).read())
    exprs = [t["expr"].replace("$instance", ".*") for p in dash["panels"] for t in p["targets"]]
    assert len(exprs) >= 5
    for e in exprs:
        assert query(pport, e), "dashboard query returned no series: %s" % e
