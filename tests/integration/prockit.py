"""Servers started by hand, for the tests of how a server is run rather than
what it answers (Unix socket, supervision, signals, the Debian unit):
conftest's ServerProcess always adds a TCP port and waits for PING on it,
while these tests need port 0, an environment (NOTIFY_SOCKET, UPSTART_JOB),
the exit status, or a readiness they observe themselves.

  Proc(kind, args, env=None)  a ferry or redis-server process in its own
                              session and temp dir (`d`, its cwd), logging to
                              d/server.log (log=False: as args say); .stop()
                              SIGTERM then SIGKILL, .cleanup() removes d too
  NotifySocket(path|None)     a bound AF_UNIX datagram socket playing systemd:
                              .env is NOTIFY_SOCKET's value (None: abstract)
  wait_unix_pong(path, proc)  until PING over the Unix socket answers +PONG
  wait_port(port, proc)       until the TCP port accepts

Fixtures (import them into a test module by name):
  tmp    a short directory under /tmp (a socket path holds 107 bytes)
  procs  start(kind, args, wait_sock=None, **Proc's keywords): Procs
         cleaned up after the test
"""
from __future__ import annotations

import os
import shutil
import signal
import socket
import subprocess
import tempfile
import time

import pytest

from conftest import _ALL_SERVERS, STARTUP_TIMEOUT, STOP_TIMEOUT, ferry_binary, redis_binary


def binary(kind: str) -> str:
    return ferry_binary() if kind == "ferry" else redis_binary()


class Proc:
    """One server process started with exactly `args` (after the binary)."""

    def __init__(self, kind: str, args, env=None, cwd=None, log: bool = True):
        self.kind = kind
        self.d = tempfile.mkdtemp(prefix="ferry-it-%s-" % kind)
        self.logpath = os.path.join(self.d, "server.log")
        self.args = [binary(kind)] + [str(a) for a in args] + (["--logfile", self.logpath] if log else [])
        self._out = open(os.path.join(self.d, "stdout.log"), "ab")
        e = dict(os.environ)
        e.pop("NOTIFY_SOCKET", None)
        e.pop("UPSTART_JOB", None)
        e.update(env or {})
        self.proc = subprocess.Popen(self.args, cwd=cwd or self.d, stdin=subprocess.DEVNULL, stdout=self._out,
                                     stderr=subprocess.STDOUT, env=e, start_new_session=True)
        self.pid = self.proc.pid
        # conftest's last-resort cleanup at interpreter exit kills these too
        self.workdir = self.d
        _ALL_SERVERS.append(self)

    def _signal_group(self, sig) -> None:
        try:
            os.killpg(self.proc.pid, sig)
        except (ProcessLookupError, PermissionError):
            pass

    def alive(self) -> bool:
        return self.proc.poll() is None

    def wait(self, timeout: float = STOP_TIMEOUT) -> int:
        return self.proc.wait(timeout=timeout)

    def stop(self) -> None:
        if self.proc.poll() is None:
            self._signal_group(signal.SIGCONT)  # a stopped process (upstart) must see the TERM
            self._signal_group(signal.SIGTERM)
            try:
                self.proc.wait(timeout=STOP_TIMEOUT)
            except subprocess.TimeoutExpired:
                self._signal_group(signal.SIGKILL)
                self.proc.wait(timeout=STOP_TIMEOUT)
        self._out.close()
        if self in _ALL_SERVERS:
            _ALL_SERVERS.remove(self)

    def cleanup(self) -> None:
        self.stop()
        shutil.rmtree(self.d, ignore_errors=True)

    def output(self) -> str:
        """What the process wrote to stdout/stderr, and its log file."""
        text = ""
        for p in (os.path.join(self.d, "stdout.log"), self.logpath):
            try:
                with open(p, "rb") as f:
                    text += f.read().decode("utf-8", "replace")
            except OSError:
                pass
        return text

    def log_messages(self, path: str | None = None) -> list:
        """The log's lines without "pid:role date time mark " (the message),
        from path or from the default log file."""
        try:
            with open(path or self.logpath, "rb") as f:
                lines = f.read().decode("utf-8", "replace").splitlines()
        except OSError:
            return []
        out = []
        for ln in lines:
            parts = ln.split(" ", 6)  # pid:role day month year time mark message
            out.append(parts[6] if len(parts) == 7 and parts[5] in (".", "-", "*", "#") else ln)
        return out


def wait_unix_pong(path: str, proc: Proc, timeout: float = STARTUP_TIMEOUT) -> None:
    deadline = time.monotonic() + timeout
    while True:
        if not proc.alive():
            raise RuntimeError("%s exited (%s) before answering on %s:\n%s"
                               % (proc.kind, proc.proc.returncode, path, proc.output()[-2000:]))
        try:
            with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as s:
                s.settimeout(1.0)
                s.connect(path)
                s.sendall(b"PING\r\n")
                if s.recv(64) == b"+PONG\r\n":
                    return
        except OSError:
            pass
        if time.monotonic() > deadline:
            raise TimeoutError("no +PONG on %s within %.0fs" % (path, timeout))
        time.sleep(0.02)


def wait_port(port: int, proc: Proc, timeout: float = STARTUP_TIMEOUT) -> None:
    deadline = time.monotonic() + timeout
    while True:
        if not proc.alive():
            raise RuntimeError("%s exited (%s) before listening on %d:\n%s"
                               % (proc.kind, proc.proc.returncode, port, proc.output()[-2000:]))
        try:
            socket.create_connection(("127.0.0.1", port), timeout=1.0).close()
            return
        except OSError:
            pass
        if time.monotonic() > deadline:
            raise TimeoutError("port %d not accepting within %.0fs" % (port, timeout))
        time.sleep(0.02)


class NotifySocket:
    """The service manager's end of sd_notify: a bound AF_UNIX datagram
    socket. path=None binds an abstract name ("@..." in NOTIFY_SOCKET)."""

    def __init__(self, path: str | None = None):
        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
        if path is None:
            name = "ferry-it-notify-%d-%d" % (os.getpid(), time.monotonic_ns())
            self.sock.bind("\0" + name)
            self.env = "@" + name
        else:
            self.sock.bind(path)
            self.env = path
        self.path = path

    def recv(self, timeout: float) -> bytes | None:
        """One datagram, or None when none arrives within timeout."""
        self.sock.settimeout(timeout)
        try:
            return self.sock.recv(65536)
        except socket.timeout:
            return None

    def recv_until(self, want: bytes, timeout: float) -> list:
        """Datagrams until one equal to `want` (included); raises when the
        time runs out first."""
        got = []
        deadline = time.monotonic() + timeout
        while True:
            left = deadline - time.monotonic()
            d = self.recv(max(left, 0.001)) if left > 0 else None
            if d is None:
                raise TimeoutError("no %r within %.0fs; got %r" % (want, timeout, got))
            got.append(d)
            if d == want:
                return got

    def drain(self, quiet: float = 0.3) -> list:
        """Every datagram until none comes for `quiet` seconds."""
        got = []
        while True:
            d = self.recv(quiet)
            if d is None:
                return got
            got.append(d)

    def close(self) -> None:
        self.sock.close()
        if self.path:
            try:
                os.unlink(self.path)
            except OSError:
                pass

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()


@pytest.fixture
def tmp():
    d = tempfile.mkdtemp(prefix="ft-", dir="/tmp")
    yield d
    shutil.rmtree(d, ignore_errors=True)


@pytest.fixture
def procs():
    started = []

    def start(kind, args, wait_sock=None, **kw):
        p = Proc(kind, args, **kw)
        started.append(p)
        if wait_sock:
            wait_unix_pong(wait_sock, p)
        return p

    yield start
    for p in started:
        p.cleanup()
