"""Helpers for the replication tests (test_replication.py).

Nodes
  `Nodes` (a context manager, or the `nodes` fixture of the test file) starts
  servers of kind "ferry" or "redis" on free ports through conftest's
  start_server(). With REPL_ORACLE=1 every "ferry" node is a redis-server, so
  the tests themselves can be proven on the oracle (redis-server 7.0.15) in
  every role. Every node gets `--enable-debug-command yes` (DEBUG DIGEST,
  DEBUG SLEEP, DEBUG SET-ACTIVE-EXPIRE) and `--repl-diskless-sync-delay 0`
  (redis 7.0 waits 5 s for more replicas by default).

Replication
  replicaof(node, master) / replicaof(node, None), wait_sync(replica, master)
  (polls INFO replication until master_link_status:up and equal
  master_repl_offset), wait_acks(master, n) (WAIT), info(node, section),
  digest(node) (DEBUG DIGEST), dbsizes(node) (DBSIZE of db 0..3).

Random write programs
  gen_ops(rng, n) -> a list of "ops", each a list of commands sent in order on
  one connection (a MULTI/EXEC block is one op). Keys are namespaced by type
  (s: strings, c: counters, h: hashes, l: lists, S: sets, z: zsets) so no
  command ever meets a WRONGTYPE; every reply must be a non-error. TTLs are
  long (>= 1000 s) so nothing expires during a test. Writer(node, seed,
  threads) runs such programs on several connections (pipelined batches)
  until stop() or a total count is reached, and fails on any error reply.
"""
from __future__ import annotations

import os
import random
import re
import socket
import threading
import time

import pytest

from conftest import start_server
from resp_client import RawClient, parse
from polling import poll

ORACLE = os.environ.get("REPL_ORACLE", "") not in ("", "0", "no", "false")
NDBS = 4
SYNC_TIMEOUT = 30.0
BASE_ARGS = ("--enable-debug-command", "yes", "--repl-diskless-sync-delay", "0")


class ReplyError(Exception):
    pass


def _py(v):
    tag = v[0]
    if tag in ("error", "bloberror"):
        raise ReplyError(v[1].decode("utf-8", "replace"))
    if tag in ("array", "set", "push"):
        return None if v[1] is None else [_py(x) for x in v[1]]
    if tag == "map":
        return {_py(k): _py(x) for k, x in v[1]}
    if tag == "bulk" or tag == "simple" or tag == "verbatim":
        return None if v[1] is None else v[1].decode("utf-8", "replace")
    return v[1]


def decode(raw: bytes):
    """RESP bytes -> Python (str for strings, int, list, None); error -> ReplyError."""
    return _py(parse(raw))


class Node:
    """One server: .kind is what the test asked for, .real_kind what runs."""

    def __init__(self, kind: str, server, name: str):
        self.kind = kind
        self.server = server
        self.real_kind = server.kind
        self.name = name
        self.port = server.port
        self._admin = None

    def client(self, timeout: float = 10.0) -> RawClient:
        return RawClient(self.port, timeout=timeout)

    def call(self, *args, timeout: float = 10.0):
        """One command on the node's admin connection; error replies raise."""
        if self._admin is None:
            self._admin = self.client()
        try:
            self._admin.send_command(*args)
            return decode(self._admin.read_reply(timeout=timeout))
        except (OSError, TimeoutError) as e:
            self._admin.close()
            self._admin = None
            raise AssertionError("%s: %r failed: %s" % (self, args[:3], e)) from None

    def raw(self, *args, timeout: float = 10.0) -> bytes:
        """The exact reply bytes (errors included) on a fresh connection."""
        with self.client(timeout) as c:
            return c.command(*args)

    def close(self):
        if self._admin is not None:
            self._admin.close()
            self._admin = None

    def log_tail(self, n: int = 40) -> str:
        return self.server.log_tail(n)

    def __repr__(self):
        return "<%s %s(%s) port=%s>" % (self.name, self.kind, self.real_kind, self.port)


class Nodes:
    """Starts nodes; stop_all() kills them and removes their directories."""

    def __init__(self):
        self.nodes = []

    def __call__(self, kind: str, *extra, name: str | None = None) -> Node:
        assert kind in ("ferry", "redis")
        real = "redis" if ORACLE else kind
        srv = start_server(real, *(BASE_ARGS + tuple(str(a) for a in extra)))
        node = Node(kind, srv, name or "n%d" % len(self.nodes))
        self.nodes.append(node)
        return node

    def stop_all(self):
        for n in self.nodes:
            n.close()
            n.server.cleanup()
        self.nodes.clear()

    def dead(self):
        return [n for n in self.nodes if not n.server.alive()]

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.stop_all()


# ------------------------------------------------------------------ INFO & co
@pytest.fixture
def nodes():
    """The test files' `nodes` fixture (imported by name): every node stopped
    at the end, and the test failed with their logs if one died meanwhile."""
    ns = Nodes()
    try:
        yield ns
        dead = ns.dead()
        if dead:
            pytest.fail("node(s) died during the test: %s\n%s" % (
                dead, "\n".join("%r log:\n%s" % (n, n.log_tail()) for n in dead)), pytrace=False)
    finally:
        ns.stop_all()


def parse_info(text: str) -> dict:
    out = {}
    for line in text.splitlines():
        if not line or line.startswith("#") or ":" not in line:
            continue
        k, v = line.split(":", 1)
        out[k] = v
    return out


def info(node: Node, section: str = "replication") -> dict:
    return parse_info(node.call("INFO", section))


REPL_FIELDS = ("role", "connected_slaves", "slave0", "master_link_status", "master_replid",
               "master_repl_offset", "repl_backlog_size", "sync_full", "sync_partial_ok",
               "sync_partial_err")


def repl_summary(node: Node) -> dict:
    d = info(node, "all")
    return {k: d[k] for k in REPL_FIELDS if k in d}


def info_int(node: Node, field: str, section: str = "all") -> int:
    d = info(node, section)
    assert field in d, "%s: no %s in INFO %s" % (node, field, section)
    return int(d[field])


def replicaof(node: Node, master: Node | None):
    if master is None:
        assert node.call("REPLICAOF", "NO", "ONE") == "OK"
    else:
        assert node.call("REPLICAOF", "127.0.0.1", master.port) == "OK"


def wait_link_up(replica: Node, timeout: float = SYNC_TIMEOUT):
    poll(lambda: info(replica).get("master_link_status") == "up", timeout,
         "%r master_link_status:up" % replica,
         diag=lambda: "\nreplica INFO: %r\nreplica log:\n%s" % (info(replica), replica.log_tail(15)))


def wait_sync(replica: Node, master: Node, timeout: float = SYNC_TIMEOUT):
    """Link up and the replica's master_repl_offset equals the master's (writes must
    have stopped; the master's pings to its replicas are caught up as well)."""
    def ok():
        r = info(replica)
        if r.get("master_link_status") != "up":
            return False
        m = info(master)
        return r.get("master_repl_offset") == m.get("master_repl_offset") and \
            r.get("master_replid") == m.get("master_replid")

    poll(ok, timeout, "%r in sync with %r" % (replica, master),
         diag=lambda: "\nreplica: %r\nmaster: %r\nreplica log:\n%s\nmaster log:\n%s"
         % (info(replica), info(master), replica.log_tail(15), master.log_tail(15)))


def wait_acks(master: Node, n: int, timeout_ms: int = 30000) -> int:
    got = master.call("WAIT", n, timeout_ms, timeout=timeout_ms / 1000.0 + 10)
    assert got >= n, "WAIT %d %d on %r returned %r" % (n, timeout_ms, master, got)
    return got


def digest(node: Node) -> str:
    d = node.call("DEBUG", "DIGEST")
    assert isinstance(d, str) and len(d) == 40, d
    return d


def dbsizes(node: Node) -> list:
    with node.client() as c:
        out = []
        for db in range(NDBS):
            assert c.command("SELECT", db) == b"+OK\r\n"
            out.append(decode(c.command("DBSIZE")))
        return out


def pttl(node: Node, db: int, key: str) -> int:
    with node.client() as c:
        c.command("SELECT", db)
        return decode(c.command("PTTL", key))


def keys_with_ttl(node: Node, db: int, limit: int = 10) -> list:
    with node.client() as c:
        c.command("SELECT", db)
        cursor, found = "0", []
        while True:
            cursor, batch = decode(c.command("SCAN", cursor, "COUNT", 200))
            for k in batch:
                if decode(c.command("PTTL", k)) > 0:
                    found.append(k)
                    if len(found) >= limit:
                        return found
            if cursor == "0":
                return found


def all_keys(node: Node, db: int) -> set:
    with node.client() as c:
        c.command("SELECT", db)
        cursor, out = "0", set()
        while True:
            cursor, batch = decode(c.command("SCAN", cursor, "COUNT", 500))
            out.update(batch)
            if cursor == "0":
                return out


def show_value(node: Node, db: int, key: str):
    with node.client() as c:
        c.command("SELECT", db)
        t = decode(c.command("TYPE", key))
        read = {"string": ("GET", key), "list": ("LRANGE", key, 0, -1), "set": ("SMEMBERS", key),
                "hash": ("HGETALL", key), "zset": ("ZRANGE", key, 0, -1, "WITHSCORES")}.get(t)
        v = decode(c.command(*read)) if read else None
        if isinstance(v, list) and t in ("set", "hash"):
            v = sorted(v)
        return t, decode(c.command("PTTL", key)), v


def diff_report(master: Node, replica: Node, limit: int = 5) -> str:
    """Which keys differ between two nodes (missing, extra, other value by
    DEBUG DIGEST-VALUE), with their values: for the failure message."""
    lines = []
    for db in range(NDBS):
        mk, rk = all_keys(master, db), all_keys(replica, db)
        for k in sorted(mk - rk)[:limit]:
            lines.append("db%d %s only on master: %r" % (db, k, show_value(master, db, k)))
        for k in sorted(rk - mk)[:limit]:
            lines.append("db%d %s only on replica: %r" % (db, k, show_value(replica, db, k)))
        common = sorted(mk & rk)
        differ = []
        with master.client() as mc, replica.client() as rc:
            mc.command("SELECT", db)
            rc.command("SELECT", db)
            for i in range(0, len(common), 200):
                chunk = common[i:i + 200]
                a = decode(mc.command("DEBUG", "DIGEST-VALUE", *chunk))
                b = decode(rc.command("DEBUG", "DIGEST-VALUE", *chunk))
                differ += [k for k, x, y in zip(chunk, a, b) if x != y]
        for k in differ[:limit]:
            lines.append("db%d %s differs: master %r replica %r"
                         % (db, k, show_value(master, db, k), show_value(replica, db, k)))
        if differ:
            lines.append("db%d: %d of %d common keys differ by DIGEST-VALUE" % (db, len(differ), len(common)))
    return "\n".join(lines) or "(no key differs by DEBUG DIGEST-VALUE; expiry flags or the digest itself?)"


def assert_converged(master: Node, replicas, ttl_keys: int = 5, ttl_slack_ms: int = 3000):
    """Equal DBSIZE per db, equal DEBUG DIGEST, a few TTLs within ttl_slack_ms.
    Returns the number of TTLs compared."""
    md, ms = digest(master), dbsizes(master)
    assert sum(ms) > 0, "master %r is empty" % master
    for r in replicas:
        rs = dbsizes(r)
        rd = digest(r)
        if rs != ms or rd != md:
            raise AssertionError("%r and replica %r differ: DBSIZE per db %s vs %s, DEBUG DIGEST %s vs %s\n%s"
                                 % (master, r, ms, rs, md, rd, diff_report(master, r)))
    checked = 0
    for db in range(NDBS):
        for k in keys_with_ttl(master, db, ttl_keys):
            mt = pttl(master, db, k)
            for r in replicas:
                rt = pttl(r, db, k)
                assert rt > 0 and abs(rt - mt) <= ttl_slack_ms, \
                    "PTTL db%d %s: master %d, replica %r %d" % (db, k, mt, r, rt)
            checked += 1
    return checked


def replica_ids(node: Node) -> set:
    return {c["id"] for c in replica_clients(node)}


def wait_reconnected(primary: Node, replica: Node, old_ids: set, timeout: float = SYNC_TIMEOUT):
    """A replica connection other than old_ids on the primary, and the link up again."""
    poll(lambda: replica_ids(primary) - old_ids, timeout, "%r to reconnect to %r" % (replica, primary),
         diag=lambda: "\nprimary: %r\nprimary log:\n%s\nreplica log:\n%s"
         % (repl_summary(primary), primary.log_tail(15), replica.log_tail(15)))
    wait_link_up(replica, timeout)


# ------------------------------------------------------------------ write programs
NKEYS = 60


def _k(rng, prefix):
    return "%s:%d" % (prefix, rng.randrange(NKEYS))


def _val(rng):
    return "v%d-%s" % (rng.randrange(10 ** 6), "x" * rng.choice((0, 1, 5, 20, 100)))


def _write_cmd(rng):
    """One write command; no WRONGTYPE possible (type-namespaced keys)."""
    r = rng.random()
    p = rng.choice("schlSz")
    if r < 0.10:
        return ["SET", _k(rng, "s"), _val(rng)]
    if r < 0.14:
        return ["SET", _k(rng, "s"), _val(rng), "EX", rng.randrange(1000, 100000)]
    if r < 0.17:
        return ["MSET", _k(rng, "s"), _val(rng), _k(rng, "s"), _val(rng)]
    if r < 0.19:
        return ["APPEND", _k(rng, "s"), "ab"]
    if r < 0.26:
        return ["INCR", _k(rng, "c")]
    if r < 0.29:
        return ["INCRBY", _k(rng, "c"), rng.randrange(-50, 50)]
    if r < 0.31:
        return ["INCRBYFLOAT", _k(rng, "s") + "f", "1.5"]
    if r < 0.37:
        key = _k(rng, "h")
        return ["HSET", key, "f%d" % rng.randrange(10), _val(rng), "g%d" % rng.randrange(10), rng.randrange(100)]
    if r < 0.39:
        return ["HDEL", _k(rng, "h"), "f%d" % rng.randrange(10)]
    if r < 0.41:
        return ["HINCRBY", _k(rng, "h"), "n", rng.randrange(1, 9)]
    if r < 0.47:
        return [rng.choice(("LPUSH", "RPUSH")), _k(rng, "l"), _val(rng), _val(rng)]
    if r < 0.50:
        return [rng.choice(("LPOP", "RPOP")), _k(rng, "l")]
    if r < 0.52:
        return ["LTRIM", _k(rng, "l"), 0, 20]
    if r < 0.58:
        return ["SADD", _k(rng, "S")] + ["m%d" % rng.randrange(40) for _ in range(rng.randrange(1, 4))]
    if r < 0.60:
        return ["SREM", _k(rng, "S"), "m%d" % rng.randrange(40)]
    if r < 0.62:
        return ["SPOP", _k(rng, "S")]
    if r < 0.68:
        return ["ZADD", _k(rng, "z"), rng.randrange(1000), "m%d" % rng.randrange(40),
                "%d.5" % rng.randrange(100), "m%d" % rng.randrange(40)]
    if r < 0.70:
        return ["ZINCRBY", _k(rng, "z"), 2, "m%d" % rng.randrange(40)]
    if r < 0.72:
        return ["ZPOPMIN", _k(rng, "z")]
    if r < 0.75:
        return ["EXPIRE", _k(rng, p), rng.randrange(1000, 100000)]
    if r < 0.78:
        return ["PEXPIRE", _k(rng, p), rng.randrange(1000, 100000) * 1000]
    if r < 0.80:
        return ["PERSIST", _k(rng, p)]
    if r < 0.85:
        return ["DEL", _k(rng, p)] + ([_k(rng, rng.choice("schlSz"))] if rng.random() < 0.3 else [])
    if r < 0.92:
        return ["EVAL", "redis.call('SET', KEYS[1], ARGV[1]) "
                        "redis.call('INCRBY', KEYS[2], ARGV[2]) "
                        "redis.call('HSET', KEYS[3], 'script', ARGV[1]) "
                        "return redis.call('GET', KEYS[1])",
                3, _k(rng, "s"), _k(rng, "c"), _k(rng, "h"), _val(rng), rng.randrange(1, 5)]
    if r < 0.95:
        return ["EVAL", "local n = redis.call('RPUSH', KEYS[1], ARGV[1]) "
                        "if n > 10 then redis.call('LPOP', KEYS[1]) end "
                        "redis.call('ZADD', KEYS[2], n, ARGV[1]) return n",
                2, _k(rng, "l"), _k(rng, "z"), _val(rng)]
    return ["SETRANGE", _k(rng, "s"), rng.randrange(0, 30), "zz"]


def gen_ops(rng: random.Random, n: int) -> list:
    """n ops; an op is a list of commands (SELECT, MULTI/EXEC blocks, plain writes)."""
    ops = []
    for _ in range(n):
        r = rng.random()
        if r < 0.06:
            ops.append([["SELECT", rng.randrange(NDBS)]])
        elif r < 0.14:
            ops.append([["MULTI"]] + [_write_cmd(rng) for _ in range(rng.randrange(1, 5))] + [["EXEC"]])
        else:
            ops.append([_write_cmd(rng)])
    return ops


def check_replies(cmds, replies):
    for cmd, raw in zip(cmds, replies):
        v = parse(raw)
        if v[0] == "error":
            raise AssertionError("%r -> %r" % (cmd, raw))
        if cmd[0] == "EXEC":
            assert v[0] == "array" and v[1] is not None, (cmd, raw)
            for item in v[1]:
                assert item[0] != "error", ("in MULTI/EXEC", raw)


def run_ops(node: Node, ops, batch: int = 64):
    """Runs ops on one fresh connection, pipelined in batches; checks replies."""
    with node.client(timeout=30.0) as c:
        cmds = [cmd for op in ops for cmd in op]
        for i in range(0, len(cmds), batch):
            chunk = cmds[i:i + batch]
            check_replies(chunk, c.pipeline(chunk))
        return len(cmds)


def bulk_load(node: Node, n: int = 3000, size: int = 64):
    """n string keys spread over dbs 0..3 plus a few big collections, by script."""
    script = ("for i=1,tonumber(ARGV[1]) do redis.call('SET', ARGV[2]..i, string.rep('b', tonumber(ARGV[3]))) end "
              "for i=1,200 do redis.call('HSET', ARGV[2]..'hash', 'f'..i, i) "
              "redis.call('RPUSH', ARGV[2]..'list', i) redis.call('SADD', ARGV[2]..'set', i) "
              "redis.call('ZADD', ARGV[2]..'zset', i, 'm'..i) end "
              "redis.call('PEXPIRE', ARGV[2]..'hash', 500000000) return 1")
    with node.client(timeout=30.0) as c:
        for db in range(NDBS):
            assert c.command("SELECT", db) == b"+OK\r\n"
            assert c.command("EVAL", script, 0, n // NDBS, "bulk%d:" % db, size) == b":1\r\n"


class Writer:
    """Threads writing seeded random programs to `node` until stop() (or
    `total` ops per thread). Errors (error replies, dead connections) are
    collected and raised by stop()."""

    def __init__(self, node: Node, seed: int, threads: int = 3, total: int | None = None,
                 batch: int = 32, pause: float = 0.0):
        self.node = node
        self.seed = seed
        self.nthreads = threads
        self.total = total
        self.batch = batch
        self.pause = pause
        self.ops_done = 0
        self.errors = []
        self._stop = threading.Event()
        self._lock = threading.Lock()
        self._threads = []

    def start(self) -> "Writer":
        for i in range(self.nthreads):
            t = threading.Thread(target=self._run, args=(i,), daemon=True)
            t.start()
            self._threads.append(t)
        return self

    def _run(self, idx: int):
        rng = random.Random("%s/%d" % (self.seed, idx))
        done = 0
        try:
            with self.node.client(timeout=30.0) as c:
                while not self._stop.is_set() and (self.total is None or done < self.total):
                    ops = gen_ops(rng, self.batch)
                    cmds = [cmd for op in ops for cmd in op]
                    check_replies(cmds, c.pipeline(cmds))
                    done += len(ops)
                    with self._lock:
                        self.ops_done += len(ops)
                    if self.pause:
                        time.sleep(self.pause)
        except Exception as e:  # noqa: BLE001
            self.errors.append("writer %d: %r" % (idx, e))

    def wait_ops(self, n: int, timeout: float = 60.0):
        """Waits until at least n more ops have been written (from now)."""
        target = self.ops_done + n
        poll(lambda: self.ops_done >= target or self.errors or not self.running(), timeout,
             "%d more writes on %r" % (n, self.node))
        assert not self.errors, self.errors

    def running(self) -> bool:
        return any(t.is_alive() for t in self._threads)

    def join(self, timeout: float = 120.0):
        deadline = time.monotonic() + timeout
        for t in self._threads:
            t.join(max(0.1, deadline - time.monotonic()))
        assert not self.running(), "writers still running"
        assert not self.errors, self.errors

    def stop(self):
        self._stop.set()
        self.join()


# ------------------------------------------------------------------ raw replicas
def raw_sync_socket(node: Node, command: bytes = b"SYNC\r\n", rcvbuf: int = 4096) -> socket.socket:
    """A socket that asks for a full sync and never reads (small receive buffer)."""
    s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, rcvbuf)
    s.connect(("127.0.0.1", node.port))
    s.sendall(command)
    return s


def client_list(node: Node) -> list:
    out = []
    for line in node.call("CLIENT", "LIST").splitlines():
        out.append(dict(kv.split("=", 1) for kv in line.split(" ") if "=" in kv))
    return out


def replica_clients(node: Node) -> list:
    return [c for c in client_list(node) if "S" in c.get("flags", "")]


def log_matches(node: Node, pattern: str) -> bool:
    try:
        with open(node.server.logpath, "rb") as f:
            text = f.read().decode("utf-8", "replace")
    except OSError:
        return False
    return re.search(pattern, text) is not None
