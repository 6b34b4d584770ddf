"""`supervised` (src/server/supervise.c): what a service manager hears.

The test plays systemd: it binds the AF_UNIX datagram socket NOTIFY_SOCKET
names (a path, or an abstract '@' name) and starts the server as Debian's
unit does (`--supervised systemd --daemonize no`). READY=1 must come only
once the server accepts (the test connects and PINGs at once, no retry), a
SIGTERM must bring STOPPING=1 and exit status 0, and the datagrams of a
whole run must be the ones redis-server 7.0.15 sends in the same setup.
Also: `auto`, a missing NOTIFY_SOCKET, daemonize ignored under a
supervisor, the final save's STATUS lines, INFO process_supervised and
CONFIG GET supervised as redis-server shows them, and upstart's SIGSTOP.
"""
from __future__ import annotations

import os
import signal
import socket
import time

import pytest

from conftest import free_port
from prockit import NotifySocket, Proc, procs, tmp, wait_port  # noqa: F401 (fixtures)
from resp_client import RawClient, parse

KINDS = ("ferry", "redis")




def base_args(kind, port, *extra):
    args = ["--port", port, "--save", "", "--bind", "127.0.0.1", *extra]
    if kind == "redis":
        args += ["--appendonly", "no"]
    return args


def info_field(port, name):
    with RawClient(port) as c:
        text = parse(c.command("INFO", "server"))[1].decode()
    return dict(ln.split(":", 1) for ln in text.split("\r\n") if ":" in ln)[name]


def run_supervised(procs, kind, notify_env, tmp, *extra, env_extra=None):
    """Starts a server under `notify_env`, waits for READY=1 and checks at
    once that both listeners answer; returns (proc, port, datagrams so far)."""
    port = free_port()
    sock = os.path.join(tmp, "%s.sock" % kind)
    env = dict(env_extra or {})
    if notify_env is not None:
        env["NOTIFY_SOCKET"] = notify_env.env
    p = procs(kind, base_args(kind, port, "--unixsocket", sock, "--supervised", "systemd", "--daemonize", "no",
                              *extra), env=env)
    got = notify_env.recv_until(b"READY=1\n", timeout=20)
    # no retry: a READY=1 sent before the listeners accept fails here
    with RawClient(port, timeout=5) as c:
        assert c.command("PING") == b"+PONG\r\n", kind
    with RawClient(unix=sock, timeout=5) as c:
        assert c.command("PING") == b"+PONG\r\n", kind
    return p, port, got


@pytest.mark.parametrize("where", ["path", "abstract"])
def test_ready_after_listening_stopping_on_sigterm(procs, tmp, where):
    runs = {}
    for kind in KINDS:
        with NotifySocket(os.path.join(tmp, "notify-%s" % kind) if where == "path" else None) as ns:
            p, port, got = run_supervised(procs, kind, ns, tmp)
            assert info_field(port, "process_supervised") == "systemd"
            assert info_field(port, "process_id") == str(p.pid), "supervised: never daemonized"
            assert ns.drain(0.2) == []  # nothing more while it runs
            os.kill(p.pid, signal.SIGTERM)
            got += ns.recv_until(b"STOPPING=1\n", timeout=10)
            assert p.wait(timeout=10) == 0, kind
            got += ns.drain(0.3)
            runs[kind] = got
    assert runs["ferry"] == [b"STATUS=Redis is loading...\n", b"STATUS=Ready to accept connections\n",
                             b"READY=1\n", b"STOPPING=1\n"]
    assert runs["ferry"] == runs["redis"]


def test_auto_finds_notify_socket(procs, tmp):
    runs = {}
    for kind in KINDS:
        with NotifySocket(None) as ns:
            port = free_port()
            p = procs(kind, base_args(kind, port, "--supervised", "auto", "--daemonize", "no"),
                      env={"NOTIFY_SOCKET": ns.env})
            got = ns.recv_until(b"READY=1\n", timeout=20)
            with RawClient(port) as c:
                assert c.command("PING") == b"+PONG\r\n"
                conf = parse(c.command("CONFIG", "GET", "supervised"))[1][1][1]
            runs[kind] = (got, conf, info_field(port, "process_supervised"))
            with RawClient(port) as c:
                c.send_command("SHUTDOWN", "NOSAVE")
                c.read_until_eof()
            assert p.wait(timeout=10) == 0
            runs[kind] += (ns.drain(0.3),)
    assert runs["ferry"][1:] == (b"systemd", "systemd", [b"STOPPING=1\n"])
    assert runs["ferry"] == runs["redis"]


def test_daemonize_yes_is_ignored_under_systemd(procs, tmp):
    for kind in KINDS:
        with NotifySocket(None) as ns:
            pidfile = os.path.join(tmp, "%s.pid" % kind)
            p, port, _got = run_supervised(procs, kind, ns, tmp, "--daemonize", "yes", "--pidfile", pidfile)
            assert p.alive(), "%s forked away from its supervisor" % kind
            with open(pidfile) as f:
                assert int(f.read()) == p.pid, kind
            os.kill(p.pid, signal.SIGTERM)
            assert ns.recv_until(b"STOPPING=1\n", timeout=10)
            assert p.wait(timeout=10) == 0
            assert not os.path.exists(pidfile), kind


def _unsupervised(procs, kind, mode, env):
    port = free_port()
    p = procs(kind, base_args(kind, port, "--supervised", mode), env=env)
    wait_port(port, p)
    out = (info_field(port, "process_supervised"),)
    with RawClient(port) as c:
        out += (parse(c.command("CONFIG", "GET", "supervised"))[1][1][1],)
        c.send_command("SHUTDOWN", "NOSAVE")
        c.read_until_eof()
    p.wait(timeout=10)
    errors = [m for m in p.log_messages() if "supervision" in m or "Supervised" in m or "supervised" in m]
    return out + (errors,)


@pytest.mark.parametrize("mode,env", [
    ("systemd", {}),                                                 # no NOTIFY_SOCKET
    ("systemd", {"NOTIFY_SOCKET": "/nonexistent-ferry/notify"}),     # nobody listens
    ("auto", {}), ("auto", {"NOTIFY_SOCKET": "/nonexistent-ferry/notify"}),
    ("upstart", {}), ("no", {"NOTIFY_SOCKET": "/nonexistent-ferry/notify"}),
])
def test_without_a_supervisor_as_redis(procs, mode, env):
    got = {kind: _unsupervised(procs, kind, mode, env) for kind in KINDS}
    assert got["ferry"][0] == "no"
    assert got["ferry"] == got["redis"]


def test_supervised_no_sends_nothing(procs, tmp):
    with NotifySocket(None) as ns:
        port = free_port()
        p = procs("ferry", base_args("ferry", port), env={"NOTIFY_SOCKET": ns.env})
        wait_port(port, p)
        with RawClient(port) as c:
            assert c.command("PING") == b"+PONG\r\n"
        os.kill(p.pid, signal.SIGTERM)
        assert p.wait(timeout=10) == 0
        assert ns.drain(0.3) == []


def test_final_save_status_lines(procs, tmp):
    runs = {}
    for kind in KINDS:
        with NotifySocket(None) as ns:
            port = free_port()
            d = os.path.join(tmp, kind)
            os.mkdir(d)
            p = procs(kind, ["--port", port, "--bind", "127.0.0.1", "--save", "900 1", "--dir", d,
                             "--supervised", "systemd"] + (["--appendonly", "no"] if kind == "redis" else []),
                      env={"NOTIFY_SOCKET": ns.env})
            ns.recv_until(b"READY=1\n", timeout=20)
            with RawClient(port) as c:
                assert c.command("SET", "k", "v") == b"+OK\r\n"
                c.send_command("SHUTDOWN")
                c.read_until_eof()
            assert p.wait(timeout=10) == 0
            assert os.path.exists(os.path.join(d, "dump.rdb"))
            runs[kind] = ns.drain(0.3)
    assert runs["ferry"] == [b"STOPPING=1\n", b"STATUS=Saving the final RDB snapshot\n"]
    assert runs["ferry"] == runs["redis"]


def _state(pid):
    with open("/proc/%d/stat" % pid) as f:
        return f.read().rsplit(")", 1)[1].split()[0]


def test_upstart_stops_itself_once_listening(procs):
    """upstart's `expect stop`: SIGSTOP when ready. (redis-server 7.0 stops
    before it listens; ferry once every listener accepts: README.)"""
    port = free_port()
    p = procs("ferry", base_args("ferry", port, "--supervised", "upstart"), env={"UPSTART_JOB": "ferry"})
    deadline = time.monotonic() + 20
    while _state(p.pid) != "T":
        assert p.alive() and time.monotonic() < deadline, "never stopped itself"
        time.sleep(0.02)
    # stopped, yet the kernel completes connections: it listened before stopping
    with socket.create_connection(("127.0.0.1", port), timeout=2):
        pass
    os.kill(p.pid, signal.SIGCONT)  # what upstart does once it has seen the stop
    with RawClient(port) as c:
        assert c.command("PING") == b"+PONG\r\n"
    assert info_field(port, "process_supervised") == "upstart"
    assert "supervised by upstart, will stop to signal readiness." in p.log_messages()
    os.kill(p.pid, signal.SIGTERM)
    assert p.wait(timeout=10) == 0
