"""Helpers for the Redis Cluster integration tests (test_cluster_*.py): nodes
of either kind (ferry or the reference redis-server) in cluster mode, each in
its own temporary directory on a port whose bus port (port + 10000) is free
too; forming a cluster with `redis-cli --cluster create`, waiting until every
node agrees it is healthy, killing (-9) / stopping / restarting a node in
place (same directory and port, so its nodes.conf is reused), and small
parsers for CLUSTER NODES / CLUSTER INFO.

A ClusterNode is a conftest.ServerProcess with a fixed port, so the suite's
process handling applies: every node runs in its own process group, is
registered for the interpreter-exit kill, and `cleanup()` stops it and removes
its directory. Use `NodeSet` (a context manager) to own a group of nodes.
"""
from __future__ import annotations

import os
import random
import shutil
import signal
import subprocess
import time

from conftest import _ALL_SERVERS, ServerProcess, _bindable, ferry_binary, redis_binary
from polling import poll
from resp_client import RawClient, parse, to_python

REDIS_CLI = shutil.which("redis-cli") or "/usr/bin/redis-cli"
BUS_OFFSET = 10000
# Client ports come from [PORT_LO, PORT_HI]: their bus ports stay below the
# kernel's ephemeral range (32768 on Linux), so outgoing connections of the
# tests are never handed one of them, and away from 30000+ where Redis's own
# cluster suite may be running on the same machine.
PORT_LO, PORT_HI = 10000, 19999
NODE_TIMEOUT_MS = 1500
CLI_TIMEOUT = 120.0
_RNG = random.Random()

# CLUSTER_ORACLE=1: every "ferry" node of the cluster tests is a redis-server,
# which proves the tests themselves (they must pass on the oracle).
ORACLE = os.environ.get("CLUSTER_ORACLE", "") not in ("", "0", "no", "false")
FERRY = "redis" if ORACLE else "ferry"

CLUSTER_ARGS = ("--cluster-enabled", "yes", "--cluster-config-file", "nodes.conf",
                "--cluster-node-timeout", str(NODE_TIMEOUT_MS),
                "--repl-diskless-sync-delay", "0")


def free_cluster_port(taken=()) -> int:
    """A port p, free right now, whose bus port p + 10000 is free too."""
    for _ in range(500):
        p = _RNG.randint(PORT_LO, PORT_HI)
        if p in taken or p + BUS_OFFSET in taken:
            continue
        if _bindable(p) and _bindable(p + BUS_OFFSET):
            return p
    raise RuntimeError("no free port pair (p, p+%d) in %d..%d" % (BUS_OFFSET, PORT_LO, PORT_HI))


class ReplyError(Exception):
    """An error reply to ClusterNode.call()."""


class ClusterNode(ServerProcess):
    """A cluster-enabled server on a fixed port, restartable in place."""

    def __init__(self, kind: str, extra_args=(), cluster: bool = True):
        binary = ferry_binary() if kind == "ferry" else redis_binary()
        args = (CLUSTER_ARGS if cluster else ()) + tuple(str(a) for a in extra_args)
        super().__init__(kind, binary, args)

    # --------------------------------------------------------- process life
    def start(self, taken=()) -> "ClusterNode":
        errors = []
        for _attempt in range(5):  # the port may be taken between check and bind
            port = free_cluster_port(taken)
            try:
                return self._launch(port)
            except Exception as e:  # noqa: BLE001
                errors.append("port %d: %s" % (port, e))
        raise RuntimeError("%s node failed to start:\n  %s\nlog tail:\n%s"
                           % (self.kind, "\n  ".join(errors), self.log_tail()))

    def _launch(self, port: int) -> "ClusterNode":
        self._log = open(self.logpath, "ab")
        self.port = port
        self.proc = subprocess.Popen(self.argv(port), cwd=self.workdir, stdin=subprocess.DEVNULL,
                                     stdout=self._log, stderr=subprocess.STDOUT,
                                     start_new_session=True)
        if self not in _ALL_SERVERS:
            _ALL_SERVERS.append(self)
        try:
            self._wait_ready()
        except Exception:
            self.stop()
            raise
        return self

    def restart(self) -> "ClusterNode":
        """Start again on the same port and directory (nodes.conf reused)."""
        if self.alive():
            raise RuntimeError("%r is still running" % self)
        self.stop()  # closes the old log handle
        return self._launch(self.port)

    def kill9(self) -> None:
        self._signal_group(signal.SIGKILL)
        self.proc.wait(timeout=10)

    def term(self) -> None:
        """SIGTERM and wait for the exit (Redis saves nodes.conf / RDB on the way)."""
        self._signal_group(signal.SIGTERM)
        self.proc.wait(timeout=20)

    # -------------------------------------------------------------- queries
    def call(self, *args, timeout: float = 5.0):
        """One command on a fresh connection; the reply as Python values
        (an error reply raises ReplyError)."""
        with RawClient(self.port, timeout=timeout) as c:
            v = parse(c.command(*args))
        if v[0] in ("error", "bloberror"):
            raise ReplyError("%r: %s" % (args, _s(v[1])))
        return to_python(v)

    def raw(self, *args, timeout: float = 5.0) -> bytes:
        with RawClient(self.port, timeout=timeout) as c:
            return c.command(*args)

    def node_id(self) -> str:
        return _s(self.call("CLUSTER", "MYID"))

    def info(self) -> dict:
        return parse_info(_s(self.call("CLUSTER", "INFO")))

    def nodes(self) -> list:
        return parse_nodes(_s(self.call("CLUSTER", "NODES")))

    def myself(self) -> dict:
        return next(n for n in self.nodes() if "myself" in n["flags"])

    def addr(self) -> str:
        return "127.0.0.1:%d" % self.port


def _s(v) -> str:
    return v.decode("utf-8", "replace") if isinstance(v, (bytes, bytearray)) else str(v)


# ------------------------------------------------------------------ parsers
def parse_info(text: str) -> dict:
    out = {}
    for line in text.splitlines():
        if ":" in line and not line.startswith("#"):
            k, v = line.split(":", 1)
            out[k] = v.strip()
    return out


def parse_nodes(text: str) -> list:
    """CLUSTER NODES lines as dicts: id, addr (ip:port@bus[,host]), port,
    flags (set), master ('-' or id), link, epoch, slots (list of entries
    as printed: '0-5460', '[5-<-id]', ...)."""
    out = []
    for line in text.splitlines():
        f = line.split()
        if len(f) < 8:
            continue
        hostport = f[1].split("@")[0]
        out.append({"id": f[0], "addr": f[1], "port": int(hostport.rsplit(":", 1)[1]),
                    "flags": set(f[2].split(",")), "master": f[3], "epoch": int(f[6]),
                    "link": f[7], "slots": f[8:]})
    return out


def slot_set(entries) -> set:
    """The slots of CLUSTER NODES slot entries (migration markers ignored)."""
    out = set()
    for e in entries:
        if e.startswith("["):
            continue
        lo, _, hi = e.partition("-")
        out.update(range(int(lo), int(hi or lo) + 1))
    return out


def topology(node: ClusterNode) -> list:
    """node's view as a comparable value: (id, port, role, master, slots)
    sorted by id; flags other than master/slave and times left out."""
    rows = []
    for n in node.nodes():
        role = "master" if "master" in n["flags"] else ("slave" if "slave" in n["flags"] else "?")
        rows.append((n["id"], n["port"], role, n["master"], tuple(sorted(slot_set(n["slots"])))))
    return sorted(rows)


# -------------------------------------------------------- groups of nodes
class NodeSet:
    """Starts nodes, owns them, cleans them all up on exit."""

    def __init__(self):
        self.nodes: list = []

    def start(self, kind: str, *extra_args, cluster: bool = True) -> ClusterNode:
        taken = set()
        for n in self.nodes:
            taken.update((n.port, n.port + BUS_OFFSET))
        node = ClusterNode(kind, extra_args, cluster=cluster)
        try:
            node.start(taken)
        except Exception:
            shutil.rmtree(node.workdir, ignore_errors=True)
            raise
        self.nodes.append(node)
        return node

    def start_many(self, kinds, *extra_args) -> list:
        return [self.start(k, *extra_args) for k in kinds]

    def cleanup(self) -> None:
        for n in self.nodes:
            n.cleanup()
        self.nodes.clear()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.cleanup()


# --------------------------------------------------------------- redis-cli
def cli(*args, timeout: float = CLI_TIMEOUT, stdin: str | None = None) -> subprocess.CompletedProcess:
    """redis-cli with arguments; output captured (text), never hangs past timeout."""
    return subprocess.run([REDIS_CLI, *[str(a) for a in args]], capture_output=True, text=True,
                          timeout=timeout, input=stdin, stdin=None if stdin is not None else subprocess.DEVNULL)


def create_cluster(nodes, replicas: int = 0) -> subprocess.CompletedProcess:
    """`redis-cli --cluster create` of nodes (masters first, as redis-cli
    assigns them), then wait until all agree the cluster is ok."""
    r = cli("--cluster", "create", *[n.addr() for n in nodes], "--cluster-replicas", replicas,
            "--cluster-yes")
    assert r.returncode == 0, "cluster create failed (%d):\n%s\n%s" % (r.returncode, r.stdout, r.stderr)
    wait_healthy(nodes)
    return r


def check(node: ClusterNode) -> subprocess.CompletedProcess:
    return cli("--cluster", "check", node.addr(), timeout=30)


def _all_ok(nodes) -> bool:
    try:
        return all(n.info().get("cluster_state") == "ok" for n in nodes)
    except (OSError, Exception):  # noqa: BLE001  (a node restarting)
        return False


def _views_agree(nodes) -> bool:
    """Every node knows every node, none flagged fail/pfail/handshake, and
    all have the same topology."""
    try:
        views = [topology(n) for n in nodes]
        flags = [f for n in nodes for row in n.nodes() for f in row["flags"]]
    except Exception:  # noqa: BLE001
        return False
    bad = {"fail", "fail?", "handshake", "noaddr"}
    return (all(v == views[0] for v in views) and len(views[0]) == len(nodes)
            and not bad.intersection(flags))


def wait_healthy(nodes, timeout: float = 30.0) -> None:
    """cluster_state:ok everywhere, all views equal, `--cluster check` exits 0."""
    def diag():
        return "\n" + "\n".join("%s %s:\n%s" % (n.kind, n.port, _safe_nodes(n)) for n in nodes)

    poll(lambda: _all_ok(nodes) and _views_agree(nodes), timeout=timeout,
         what="cluster_state:ok and equal views on all nodes", interval=0.1, diag=diag)
    poll(lambda: check(nodes[0]).returncode == 0, timeout=timeout,
         what="redis-cli --cluster check exit 0", interval=0.3,
         diag=lambda: check(nodes[0]).stdout)


def _safe_nodes(n) -> str:
    try:
        return _s(n.call("CLUSTER", "NODES"))
    except Exception as e:  # noqa: BLE001
        return "<%s>" % e


def masters(nodes) -> list:
    """The nodes that call themselves master (own view)."""
    return [n for n in nodes if n.alive() and "master" in n.myself()["flags"]]


def replica_of(nodes, master: ClusterNode):
    """The node of nodes (alive) that replicates master, by its own view."""
    mid = master.node_id()
    for n in nodes:
        if n is not master and n.alive() and n.myself()["master"] == mid:
            return n
    return None


def wait_role(node: ClusterNode, role: str, timeout: float) -> float:
    """Wait until node's own flags have role ('master'/'slave'); returns
    the seconds it took."""
    t0 = time.monotonic()
    poll(lambda: role in node.myself()["flags"], timeout=timeout, interval=0.05,
         what=lambda: "%r to become %s" % (node, role), diag=lambda: _safe_nodes(node))
    return time.monotonic() - t0
