"""ferry started as Debian's redis-server.service starts redis-server:

    ExecStart=/usr/bin/redis-server /etc/redis/redis.conf --supervised systemd --daemonize no
    Type=notify

with this machine's /etc/redis/redis.conf (from the redis-server package),
copied with only port, dir, logfile, pidfile and unixsocket pointed at
temporary paths. The test plays systemd (it binds NOTIFY_SOCKET): READY=1
arrives, redis-cli -s works, SIGHUP leaves the server running, SIGTERM
brings STOPPING=1, exit status 0, and the socket and pidfile gone. The
datagrams and the watched log lines are compared with redis-server run the
same way. Skipped, saying why, when the package's file is not installed.
"""
from __future__ import annotations

import os
import re
import shutil
import signal
import subprocess
import time

import pytest

from conftest import free_port
from prockit import NotifySocket, Proc, tmp  # noqa: F401 (fixtures)
from resp_client import RawClient

DEBIAN_CONF = "/etc/redis/redis.conf"
REDIS_CLI = shutil.which("redis-cli") or "/usr/bin/redis-cli"
KINDS = ("ferry", "redis")

pytestmark = pytest.mark.skipif(
    not os.path.isfile(DEBIAN_CONF),
    reason="%s is not installed (Debian package redis-server); the unit's configuration is not checked in"
           % DEBIAN_CONF)


def debian_conf_copy(d: str, port: int) -> dict:
    """The package's redis.conf with the five paths/ports rewritten; every
    other line as shipped. Returns the paths."""
    paths = {"port": str(port), "dir": os.path.join(d, "data"), "logfile": os.path.join(d, "redis-server.log"),
             "pidfile": os.path.join(d, "redis-server.pid"), "unixsocket": os.path.join(d, "redis-server.sock")}
    os.mkdir(paths["dir"])
    with open(DEBIAN_CONF) as f:
        lines = f.read().split("\n")
    done = set()
    for i, ln in enumerate(lines):
        m = re.match(r"^(#\s*)?(port|dir|logfile|pidfile|unixsocket)\s", ln)
        if not m:
            continue
        name, commented = m.group(2), bool(m.group(1))
        if commented and (name != "unixsocket" or name in done):
            continue  # only the shipped example line of unixsocket is turned on
        lines[i] = "%s %s" % (name, paths[name])
        done.add(name)
    for name in set(paths) - done:  # not in this version of the file
        lines.append("%s %s" % (name, paths[name]))
    paths["conf"] = os.path.join(d, "redis.conf")
    with open(paths["conf"], "w") as f:
        f.write("\n".join(lines))
    return paths



def run_as_the_unit(kind: str, d: str) -> dict:
    port = free_port()
    paths = debian_conf_copy(d, port)
    out = {}
    with NotifySocket(os.path.join(d, "notify")) as ns:
        p = Proc(kind, [paths["conf"], "--supervised", "systemd", "--daemonize", "no"], env={"NOTIFY_SOCKET": ns.env},
                 log=False)
        try:
            out["start"] = ns.recv_until(b"READY=1\n", timeout=20)
            r = subprocess.run([REDIS_CLI, "-s", paths["unixsocket"], "PING"], capture_output=True, text=True,
                               timeout=10)
            assert (r.returncode, r.stdout) == (0, "PONG\n"), (kind, r)
            with open(paths["pidfile"]) as f:
                assert int(f.read()) == p.pid, "%s: the pidfile names the process systemd started" % kind
            os.kill(p.pid, signal.SIGHUP)
            time.sleep(0.3)
            assert p.alive(), "%s: SIGHUP stopped it" % kind
            with RawClient(unix=paths["unixsocket"]) as c:
                assert c.command("SET", "k", "v") == b"+OK\r\n"
                out["unix_flags"] = re.search(rb"flags=(\S+)", c.command("CLIENT", "INFO")).group(1)
            os.kill(p.pid, signal.SIGTERM)
            out["stop"] = ns.recv_until(b"STOPPING=1\n", timeout=10)
            out["rc"] = p.wait(timeout=20)
            out["stop"] += ns.drain(0.3)
            out["left"] = sorted(n for n in ("unixsocket", "pidfile") if os.path.exists(paths[n]))
            # the shipped save points: the key is written at shutdown
            out["dump"] = os.path.exists(os.path.join(paths["dir"], "dump.rdb"))
            msgs = p.log_messages(paths["logfile"])
            out["warnings"] = [m for m in msgs if "not implemented by ferry" in m]
            out["log"] = [re.sub(r"^\d+:signal-handler \(\d+\) ", "", m).replace(paths["unixsocket"], "<sock>")
                          for m in msgs if re.search(r"[Rr]eady to|Supervised|shutdown|Removing the|bye bye", m)]
        finally:
            p.cleanup()
    return out


def test_started_as_debians_unit_starts_it(tmp):
    seen = {}
    for kind in KINDS:
        d = os.path.join(tmp, kind)
        os.mkdir(d)
        seen[kind] = run_as_the_unit(kind, d)
    f = seen["ferry"]
    assert f["start"][-1] == b"READY=1\n" and f["stop"][0] == b"STOPPING=1\n"
    assert f["rc"] == 0 and f["left"] == [] and f["dump"] and f["unix_flags"] == b"U"
    assert f["warnings"] == [], "directives of Debian's redis.conf ferry only accepts: %s" % f["warnings"]
    assert "Ready to accept connections" in f["log"] and "Redis is now ready to exit, bye bye..." in f["log"]
    for key in ("start", "stop", "rc", "left", "dump", "unix_flags", "log"):
        assert f[key] == seen["redis"][key], key
