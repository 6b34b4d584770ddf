"""Fixtures for ferry's integration tests.

Servers:
  - `ferry`:  a fresh ferry-server (binary from $FERRY_SERVER) per test.
  - `redis`:  a fresh reference redis-server (Debian 7.0.15) per test.
  - `ferry_factory(*extra_args)` / `redis_factory(*extra_args)`: start more
    servers with extra command line arguments; all are killed at teardown.
  - `start_server(kind, *extra_args)`: plain function, for fixtures of any
    scope (see test_differential.py's module-scoped pair).
Every server listens on a free port (never 6379), is started in its own
temporary directory, is waited for until it answers PING, and is killed at
teardown whatever the test's outcome (and at interpreter exit as a last
resort). A server's log tail is attached to startup failures.

Environment:
  FERRY_SERVER     absolute path of ferry-server (required; missing -> error)
  REDIS_SERVER     reference server (default: redis-server on PATH)
"""
from __future__ import annotations

import atexit
import contextlib
import os
import random
import shutil
import signal
import socket
import subprocess
import tempfile
import time

import pytest

from resp_client import RawClient  # noqa: F401  (re-exported for tests)

STARTUP_TIMEOUT = 20.0
STOP_TIMEOUT = 5.0
PER_TEST_TIMEOUT = 150  # seconds, enforced by pytest-timeout when installed

_ALL_SERVERS: list = []
_RNG = random.Random()  # own instance: tests may seed the global one


def _ephemeral_range():
    try:
        with open("/proc/sys/net/ipv4/ip_local_port_range") as f:
            lo, hi = (int(x) for x in f.read().split())
        return lo, hi
    except (OSError, ValueError):
        return 32768, 60999


def _bindable(port: int) -> bool:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            s.bind(("127.0.0.1", port))
        except OSError:
            return False
    return True


def free_port() -> int:
    """A TCP port that is free right now, never 6379.

    Preferably a random port just below the kernel's ephemeral range, so that
    the many client sockets of the tests (redis-benchmark, pools) can never be
    handed the port between our check and the server's bind(); falls back to
    the bind-to-port-0 trick."""
    lo, _hi = _ephemeral_range()
    if lo > 20000:
        for _ in range(50):
            port = _RNG.randint(15000, lo - 1)
            if port != 6379 and _bindable(port):
                return port
    while True:
        with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
            s.bind(("127.0.0.1", 0))
            port = s.getsockname()[1]
        if port != 6379:
            return port


def ferry_binary() -> str:
    path = os.environ.get("FERRY_SERVER")
    if not path:
        raise RuntimeError("FERRY_SERVER is not set: point it at the ferry-server binary "
                           "(e.g. FERRY_SERVER=$PWD/build/ferry-server; `make integration` does this)")
    if not (os.path.isfile(path) and os.access(path, os.X_OK)):
        raise RuntimeError("FERRY_SERVER=%r is not an executable file (not built yet?)" % path)
    return os.path.abspath(path)


def redis_binary() -> str:
    path = os.environ.get("REDIS_SERVER") or shutil.which("redis-server") or "/usr/bin/redis-server"
    if not (os.path.isfile(path) and os.access(path, os.X_OK)):
        raise RuntimeError("reference redis-server not found (%r); run scripts/install-deps.sh" % path)
    return path


class ServerProcess:
    """One server process on a free port."""

    def __init__(self, kind: str, binary: str, extra_args=(), ready: str = "pong"):
        self.kind = kind
        self.ready = ready  # "pong": until PING answers; "accept": until the port accepts (a load may run)
        self.binary = binary
        self.extra_args = [str(a) for a in extra_args]
        self.port = None
        self.proc = None
        self.workdir = tempfile.mkdtemp(prefix="ferry-it-%s-" % kind)
        self.logpath = os.path.join(self.workdir, "server.log")
        self._log = None

    # The ferry command line is the redis-server one: `--port N --save ''`.
    def argv(self, port: int) -> list:
        args = [self.binary, "--port", str(port), "--save", ""]
        if self.kind == "redis":
            args += ["--appendonly", "no", "--bind", "127.0.0.1", "--dir", self.workdir,
                     "--daemonize", "no"]
        return args + self.extra_args

    def start(self) -> "ServerProcess":
        errors = []
        for _attempt in range(5):  # retry: the free port may be taken meanwhile
            port = free_port()
            self._log = open(self.logpath, "ab")
            self.proc = subprocess.Popen(self.argv(port), cwd=self.workdir, stdin=subprocess.DEVNULL,
                                         stdout=self._log, stderr=subprocess.STDOUT,
                                         start_new_session=True)
            self.port = port
            _ALL_SERVERS.append(self)
            try:
                self._wait_ready()
                return self
            except Exception as e:  # noqa: BLE001
                errors.append("port %d: %s" % (port, e))
                self.stop()
        msg = ("%s server failed to start:\n  %s\ncommand: %r\nlog tail:\n%s"
               % (self.kind, "\n  ".join(errors), self.argv(self.port), self.log_tail()))
        shutil.rmtree(self.workdir, ignore_errors=True)
        raise RuntimeError(msg)

    def _wait_ready(self) -> None:
        deadline = time.monotonic() + STARTUP_TIMEOUT
        while True:
            if self.proc.poll() is not None:
                raise RuntimeError("exited with status %s during startup" % self.proc.returncode)
            try:
                with socket.create_connection(("127.0.0.1", self.port), timeout=1.0) as s:
                    if self.ready == "accept":
                        return
                    s.settimeout(1.0)
                    s.sendall(b"*1\r\n$4\r\nPING\r\n")
                    data = b""
                    while not data.endswith(b"\r\n"):
                        chunk = s.recv(256)
                        if not chunk:
                            break
                        data += chunk
                    if data == b"+PONG\r\n":
                        time.sleep(0.01)
                        if self.proc.poll() is None:   # it is our server that answered
                            return
            except OSError:
                pass
            if time.monotonic() > deadline:
                raise TimeoutError("no +PONG within %.0fs" % STARTUP_TIMEOUT)
            time.sleep(0.02)

    def alive(self) -> bool:
        return self.proc is not None and self.proc.poll() is None

    def _signal_group(self, sig) -> None:
        # The server runs in its own session/process group (start_new_session),
        # so a wrapper script's children are stopped too. Never a broad kill.
        try:
            os.killpg(self.proc.pid, sig)
        except (ProcessLookupError, PermissionError):
            pass

    def stop(self) -> None:
        p = self.proc
        if p is not None:
            if p.poll() is None:
                self._signal_group(signal.SIGTERM)
                try:
                    p.wait(timeout=STOP_TIMEOUT)
                except subprocess.TimeoutExpired:
                    self._signal_group(signal.SIGKILL)
                    p.wait(timeout=STOP_TIMEOUT)
            # leftovers of a wrapper whose main process already exited
            self._signal_group(signal.SIGKILL)
        if self._log is not None:
            self._log.close()
            self._log = None
        if self in _ALL_SERVERS:
            _ALL_SERVERS.remove(self)

    def cleanup(self) -> None:
        self.stop()
        shutil.rmtree(self.workdir, ignore_errors=True)

    def log_tail(self, n: int = 30) -> str:
        try:
            with open(self.logpath, "rb") as f:
                lines = f.read().decode("utf-8", "replace").splitlines()
            return "\n".join(lines[-n:])
        except OSError:
            return "<no log>"

    def client(self, timeout: float = 5.0) -> RawClient:
        return RawClient(self.port, timeout=timeout)

    def __repr__(self):
        return "<%s server pid=%s port=%s>" % (self.kind, self.proc and self.proc.pid, self.port)


def start_server(kind: str, *extra_args, ready: str = "pong") -> ServerProcess:
    binary = ferry_binary() if kind == "ferry" else redis_binary()
    return ServerProcess(kind, binary, extra_args, ready).start()


@atexit.register
def _kill_leftovers():
    for s in list(_ALL_SERVERS):
        if s.proc is not None:
            s._signal_group(signal.SIGKILL)
        shutil.rmtree(s.workdir, ignore_errors=True)


class ServerFactory:
    def __init__(self):
        self.servers = []

    def __call__(self, kind: str, *extra_args) -> ServerProcess:
        s = start_server(kind, *extra_args)
        self.servers.append(s)
        return s

    def stop_all(self):
        for s in self.servers:
            s.cleanup()
        self.servers.clear()


def _check_exit(server: ServerProcess, request) -> None:
    """After a test: a server that died on its own is a failure of that test."""
    if server.proc is not None and server.proc.poll() is not None:
        pytest.fail("%r died during %s (status %s); log tail:\n%s"
                    % (server, request.node.nodeid, server.proc.returncode, server.log_tail()),
                    pytrace=False)


# ------------------------------------------------------------------ fixtures
@pytest.fixture
def server_factory():
    f = ServerFactory()
    yield f
    f.stop_all()


@pytest.fixture
def ferry_factory(server_factory):
    return lambda *extra: server_factory("ferry", *extra)


@pytest.fixture
def redis_factory(server_factory):
    return lambda *extra: server_factory("redis", *extra)


@pytest.fixture
def ferry(request):
    s = start_server("ferry")
    try:
        yield s
        _check_exit(s, request)
    finally:
        s.cleanup()


@pytest.fixture
def redis(request):
    s = start_server("redis")
    try:
        yield s
        _check_exit(s, request)
    finally:
        s.cleanup()


@pytest.fixture
def raw_client():
    """raw_client(server_or_port, timeout=5) -> RawClient; closed at teardown."""
    clients = []

    def make(target, timeout: float = 5.0) -> RawClient:
        port = target.port if isinstance(target, ServerProcess) else int(target)
        c = RawClient(port, timeout=timeout)
        clients.append(c)
        return c

    yield make
    for c in clients:
        c.close()


# ------------------------------------------------------------------ hooks
def pytest_collection_modifyitems(config, items):
    """Put a hard per-test time limit on everything when pytest-timeout is
    available, so that a hung server fails a test instead of hanging CI."""
    if not config.pluginmanager.hasplugin("timeout"):
        return
    for item in items:
        if item.get_closest_marker("timeout") is None:
            item.add_marker(pytest.mark.timeout(PER_TEST_TIMEOUT))


@contextlib.contextmanager
def server_pair(*extra_args, start=start_server):
    """A ferry and a reference redis-server started alike (start(kind,
    *extra_args)), stopped when the block ends, also if the second fails to
    start."""
    f = start("ferry", *extra_args)
    try:
        r = start("redis", *extra_args)
    except Exception:
        f.cleanup()
        raise
    try:
        yield f, r
    finally:
        f.cleanup()
        r.cleanup()


@pytest.fixture(scope="module")
def pair():
    """A ferry and a reference redis-server shared by a module's differential
    cases (each case starts with FLUSHALL; see diffkit.run_steps)."""
    with server_pair() as p:
        yield p


@pytest.fixture
def tmpdirs():
    """tmpdirs() -> a new temporary directory, removed at teardown (servers'
    --dir for persistence tests)."""
    made = []

    def make():
        d = tempfile.mkdtemp(prefix="ferry-it-dir-")
        made.append(d)
        return d

    yield make
    for d in made:
        shutil.rmtree(d, ignore_errors=True)


def start_in(kind: str, dirpath: str, *extra_args, ready: str = "pong") -> ServerProcess:
    """A server whose snapshot file is dirpath/dump.rdb (ready="accept":
    returned as soon as it listens, while it may still be loading)."""
    return start_server(kind, "--dir", dirpath, "--dbfilename", "dump.rdb", *extra_args, ready=ready)
