"""Signals and the log lines tools wait for (src/server/main.c), against
redis-server 7.0.15: SIGHUP is ignored; SIGTERM and SIGINT shut down with
exit status 0, removing the pidfile and the Unix socket; the lines logged
when the server is ready and when it exits are Redis's, in Redis's order;
and the warnings about directives ferry accepts and ignores reach the log
file when there is one (stderr when there is none).
"""
from __future__ import annotations

import os
import re
import signal
import time

import pytest

from conftest import free_port
from prockit import Proc, procs, tmp, wait_port  # noqa: F401 (fixtures)
from resp_client import RawClient

KINDS = ("ferry", "redis")




def start(procs, kind, tmp, *extra):
    port = free_port()
    sock = os.path.join(tmp, "%s.sock" % kind)
    pidfile = os.path.join(tmp, "%s.pid" % kind)
    args = ["--port", port, "--save", "", "--bind", "127.0.0.1", "--unixsocket", sock, "--pidfile", pidfile, *extra]
    if kind == "redis":
        args += ["--appendonly", "no", "--daemonize", "no"]
    p = procs(kind, args)
    wait_port(port, p)
    p.port, p.sock, p.pidfile = port, sock, pidfile
    return p


# the lines init scripts, test harnesses and log watchers look for
WATCHED = re.compile(r"[Rr]eady to accept|User requested shutdown|Removing the|bye bye|scheduling shutdown")


def watched_lines(p):
    """The watched messages, paths made neutral; Redis writes the signal
    handler's line in a format of its own ("pid:signal-handler (time) ..."),
    so only its message is kept."""
    out = []
    for m in p.log_messages():
        if not WATCHED.search(m):
            continue
        m = re.sub(r"^\d+:signal-handler \(\d+\) ", "", m)
        out.append(m.replace(p.sock, "<sock>"))
    return out


@pytest.mark.parametrize("kind", KINDS)
def test_sighup_is_ignored(procs, tmp, kind):
    p = start(procs, kind, tmp)
    for _ in range(3):
        os.kill(p.pid, signal.SIGHUP)
    time.sleep(0.3)  # the cron would have acted by now (hz 10)
    assert p.alive(), "%s died of SIGHUP" % kind
    with RawClient(p.port) as c:
        assert c.command("PING") == b"+PONG\r\n"
    with RawClient(unix=p.sock) as c:
        assert c.command("PING") == b"+PONG\r\n"
    assert not [m for m in watched_lines(p) if "shutdown" in m], p.log_messages()


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGINT])
def test_signal_shutdown_and_log_lines_as_redis(procs, tmp, sig):
    seen = {}
    for kind in KINDS:
        p = start(procs, kind, tmp)
        with RawClient(p.port) as c:
            assert c.command("PING") == b"+PONG\r\n"
        os.kill(p.pid, sig)
        assert p.wait(timeout=10) == 0, kind
        assert not os.path.exists(p.sock) and not os.path.exists(p.pidfile), kind
        seen[kind] = watched_lines(p)
    name = "SIGTERM" if sig == signal.SIGTERM else "SIGINT"
    assert seen["ferry"] == ["Ready to accept connections", "The server is now ready to accept connections at <sock>",
                             "Received %s scheduling shutdown..." % name, "User requested shutdown...",
                             "Removing the pid file.", "Removing the unix socket file.",
                             "Redis is now ready to exit, bye bye..."]
    assert seen["ferry"] == seen["redis"]


def test_shutdown_command_log_lines_as_redis(procs, tmp):
    seen = {}
    for kind in KINDS:
        p = start(procs, kind, tmp)
        with RawClient(unix=p.sock) as c:
            c.send_command("SHUTDOWN", "NOSAVE")
            c.read_until_eof()
        assert p.wait(timeout=10) == 0, kind
        seen[kind] = watched_lines(p)
    assert seen["ferry"][-1] == "Redis is now ready to exit, bye bye..."
    assert seen["ferry"] == seen["redis"]


def _raw_log(p):
    with open(p.logpath) as f:
        return f.read()


def test_ignored_directive_warnings_reach_the_log_file(procs, tmp):
    conf = os.path.join(tmp, "ferry.conf")
    with open(conf, "w") as f:
        f.write("propagation-error-behavior panic\nlogfile %s\n" % os.path.join(tmp, "ferry.log"))
    port = free_port()
    p = procs("ferry", [conf, "--port", port, "--save", ""], log=False)
    p.logpath = os.path.join(tmp, "ferry.log")
    wait_port(port, p)
    log = _raw_log(p)
    # a WARNING line ('#'), written once the log is set up (after the banner)
    m = re.search(r"^\d+:M [^#*]+ # (%s:1: 'propagation-error-behavior' is not implemented by ferry; the setting is "
                  r"accepted and ignored)$" % re.escape(conf), log, re.M)
    assert m, log
    assert log.index("is starting") < m.start()
    assert "not implemented" not in p.output().replace(log, ""), "also on stderr although a log file is set"


def test_ignored_directive_warnings_on_stderr_without_log_file(procs):
    port = free_port()
    p = procs("ferry", ["--port", port, "--save", "", "--propagation-error-behavior", "panic"], log=False)
    wait_port(port, p)
    out = p.output()
    assert "ferry: <command line>:3: 'propagation-error-behavior' is not implemented by ferry; the setting is accepted and " \
           "ignored\n" in out, out
    assert out.count("not implemented") == 1, out
