"""The append-only file: durability, file layout, loading and rewriting, on
ferry and on redis-server 7.0 (the oracle).

Why each group exists:
  - kill -9 with `appendfsync always` (and `everysec`) must lose no
    acknowledged write (resp. at most about a second of them), and a
    MULTI/EXEC must come back all or nothing;
  - under strace, a write's reply must leave only after the fdatasync/fsync
    of the AOF write holding it (kill -9 keeps the page cache, so only the
    syscall order shows that `always` really syncs before acknowledging);
  - the same random program on both servers: each restarts into the same
    keyspace, and each loads the other's appendonlydir (the Redis 7.0 layout:
    manifest, base .rdb or .aof, incr .aof) into the same keyspace, with and
    without the RDB preamble and across a BGREWRITEAOF; a Redis 6 style
    single appendonly.aof is loaded and migrated;
  - a truncated incr file loads up to the last complete command (or refuses
    to start with aof-load-truncated no), a corrupt one never loads;
  - BGREWRITEAOF under write load keeps every write, also when the server is
    killed in the middle of it;
  - a failing disk (RLIMIT_FSIZE) turns writes into -MISCONF until the AOF
    can be written again, and loses no acknowledged write.

Keyspaces of ferry and redis-server are compared by dumping every key (type,
value, whether it has a TTL and the PTTL within a tolerance), never with
DEBUG DIGEST, whose value differs between the two by design; DEBUG DIGEST is
only compared between runs of the same server.

Environment: AOF_KILL_TRIALS (default 20) sets the number of kill -9 trials
of test_kill9_with_appendfsync_always_loses_no_acknowledged_write.
"""
from __future__ import annotations

import os
import random
import re
import shutil
import signal
import subprocess
import sys
import threading
import time
import uuid

import pytest
import redis as redispy

from conftest import ServerProcess, ferry_binary, free_port, redis_binary, start_in
from resp_client import RawClient, ServerClosed
from polling import poll

KINDS = ["ferry", "redis"]
AOFDIR = "appendonlydir"
MANIFEST = "appendonly.aof.manifest"
KILL_TRIALS = int(os.environ.get("AOF_KILL_TRIALS", "20"))
LONG_TTL = 10**6  # seconds: never expires during a test


# ------------------------------------------------------------------ helpers
def binary(kind):
    return ferry_binary() if kind == "ferry" else redis_binary()


def aof_args(fsync="always", preamble="yes", *extra):
    return ["--appendonly", "yes", "--appendfsync", fsync, "--aof-use-rdb-preamble", preamble, *extra]


def start_aof(kind, d, *extra, fsync="always", preamble="yes", ready="pong"):
    """A server with the AOF on whose --dir is d."""
    return start_in(kind, d, *aof_args(fsync, preamble), *extra, ready=ready)


def client(server, db=0):
    return redispy.Redis(port=server.port, db=db, socket_timeout=30)


def kill9(server):
    """SIGKILL the server's process group (a rewrite child or a wrapper too)."""
    server._signal_group(signal.SIGKILL)
    server.proc.wait(timeout=10)
    server.stop()


def shutdown_nosave(server):
    """SHUTDOWN NOSAVE: the AOF alone must hold the dataset afterwards."""
    c = server.client()
    c.send_command("SHUTDOWN", "NOSAVE")
    try:
        reply = c.read_reply(timeout=10)
        raise AssertionError("SHUTDOWN NOSAVE answered %r" % reply)
    except (ServerClosed, OSError):
        pass
    finally:
        c.close()
    assert server.proc.wait(timeout=15) == 0
    server.stop()


def info(r, section="persistence"):
    return r.info(section)


def wait_rewrite_done(r, timeout=60):
    def done():
        i = info(r)
        return i if not i["aof_rewrite_in_progress"] and not i["aof_rewrite_scheduled"] else None
    return poll(done, timeout, "the AOF rewrite to finish", 0.05)


def read_manifest(d, dirname=AOFDIR, name=MANIFEST):
    """[(file, seq, type)] from the manifest, checking each line's syntax."""
    out = []
    with open(os.path.join(d, dirname, name)) as f:
        for line in f.read().splitlines():
            m = re.fullmatch(r"file (\S+) seq (\d+) type ([bih])", line)
            assert m, "manifest line %r" % line
            out.append((m.group(1), int(m.group(2)), m.group(3)))
    return out


def aof_listing(d, dirname=AOFDIR):
    return sorted(os.listdir(os.path.join(d, dirname)))


def parse_aof_commands(data):
    """[(start, end, [args])] for every complete RESP command in data, and the
    offset where the parse stopped (== len(data) for a whole file)."""
    out, pos = [], 0
    while pos < len(data):
        start = pos
        try:
            nl = data.index(b"\r\n", pos)
            assert data[pos:pos + 1] == b"*"
            argc, pos, args = int(data[pos + 1:nl]), nl + 2, []
            for _ in range(argc):
                nl = data.index(b"\r\n", pos)
                assert data[pos:pos + 1] == b"$"
                n = int(data[pos + 1:nl])
                arg = data[nl + 2:nl + 2 + n]
                assert len(arg) == n and data[nl + 2 + n:nl + 4 + n] == b"\r\n"
                args.append(arg)
                pos = nl + 4 + n
        except (ValueError, AssertionError):
            return out, start
        out.append((start, pos, args))
    return out, pos


def resp(*args):
    out = [b"*%d\r\n" % len(args)]
    for a in args:
        a = a if isinstance(a, bytes) else str(a).encode()
        out.append(b"$%d\r\n%s\r\n" % (len(a), a))
    return b"".join(out)


def dump(server, dbs=range(16)):
    """Every key of every db: (type, value, pttl or -1). Values order-free
    where the server's order is a hash order."""
    out = {}
    for db in dbs:
        r = client(server, db)
        for key in r.scan_iter(count=1000):
            t = r.type(key).decode()
            if t == "string":
                v = r.get(key)
            elif t == "list":
                v = r.lrange(key, 0, -1)
            elif t == "set":
                v = sorted(r.smembers(key))
            elif t == "hash":
                v = sorted(r.hgetall(key).items())
            elif t == "zset":
                v = r.zrange(key, 0, -1, withscores=True)
            elif t == "none":  # expired between SCAN and TYPE
                continue
            else:
                raise AssertionError("unexpected type %s of %r" % (t, key))
            pttl = r.pttl(key)
            out[(db, key)] = (t, v, -1 if pttl < 0 else pttl)
        r.close()
    return out


def dump_diffs(a, b, ttl_slack_ms=60000):
    """Differences between two dumps (empty list: the same keyspace)."""
    diffs = ["only in first: %r %r" % (k, a[k]) for k in sorted(a.keys() - b.keys())]
    diffs += ["only in second: %r %r" % (k, b[k]) for k in sorted(b.keys() - a.keys())]
    for k in sorted(a.keys() & b.keys()):
        (ta, va, xa), (tb, vb, xb) = a[k], b[k]
        if (ta, va) != (tb, vb) or (xa < 0) != (xb < 0) or abs(xa - xb) > ttl_slack_ms:
            diffs.append("%r: %r != %r" % (k, a[k], b[k]))
    return diffs[:15]


def run_to_exit(kind, d, *extra, timeout=15):
    """Start a server that is expected not to come up: (exit status, log)."""
    s = ServerProcess(kind, binary(kind), ["--dir", d, "--dbfilename", "dump.rdb", *extra])
    with open(s.logpath, "wb") as log:
        p = subprocess.Popen(s.argv(free_port()), cwd=s.workdir, stdin=subprocess.DEVNULL, stdout=log,
                             stderr=subprocess.STDOUT, start_new_session=True)
        try:
            rc = p.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            os.killpg(p.pid, signal.SIGKILL)
            p.wait()
            rc = None
    text = open(s.logpath, "rb").read().decode("utf-8", "replace")
    shutil.rmtree(s.workdir, ignore_errors=True)
    return rc, text


# ------------------------------------------------------------------ layout
@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("preamble", ["yes", "no"])
def test_layout_manifest_and_rewrite_names(kind, preamble, tmpdirs):
    """Redis 7.0's names: base seq 1 (.rdb with the preamble, else .aof) and
    incr seq 1 on a fresh start; the incr file holds SELECT then the
    command; BGREWRITEAOF makes base and incr seq 2 and removes seq 1;
    appenddirname/appendfilename rename the directory and the files."""
    d = tmpdirs()
    s = start_aof(kind, d, preamble=preamble)
    try:
        r = client(s)
        ext = "rdb" if preamble == "yes" else "aof"
        assert aof_listing(d) == sorted(["appendonly.aof.1.base." + ext, "appendonly.aof.1.incr.aof", MANIFEST])
        assert read_manifest(d) == [("appendonly.aof.1.base." + ext, 1, "b"), ("appendonly.aof.1.incr.aof", 1, "i")]
        with open(os.path.join(d, AOFDIR, MANIFEST), "rb") as f:
            assert f.read() == (b"file appendonly.aof.1.base.%s seq 1 type b\n"
                                b"file appendonly.aof.1.incr.aof seq 1 type i\n" % ext.encode())
        i = info(r)
        assert (i["aof_enabled"], i["aof_last_write_status"], i["aof_last_bgrewrite_status"], i["aof_rewrites"]) == \
            (1, "ok", "ok", 0)
        assert r.set("a", "1") and r.rpush("l", "x", "y") == 2
        with open(os.path.join(d, AOFDIR, "appendonly.aof.1.incr.aof"), "rb") as f:
            cmds, end = parse_aof_commands(f.read())
        assert [[a.upper() if j == 0 else a for j, a in enumerate(c[2])] for c in cmds] == \
            [[b"SELECT", b"0"], [b"SET", b"a", b"1"], [b"RPUSH", b"l", b"x", b"y"]]
        assert r.bgrewriteaof()
        i = wait_rewrite_done(r)
        assert i["aof_last_bgrewrite_status"] == "ok" and i["aof_rewrites"] == 1
        poll(lambda: aof_listing(d) == sorted(["appendonly.aof.2.base." + ext, "appendonly.aof.2.incr.aof",
                                               MANIFEST]), 10, "the seq 1 files to be removed")
        assert read_manifest(d) == [("appendonly.aof.2.base." + ext, 2, "b"), ("appendonly.aof.2.incr.aof", 2, "i")]
        with open(os.path.join(d, AOFDIR, "appendonly.aof.2.base." + ext), "rb") as f:
            base = f.read()
        assert base.startswith(b"REDIS") if preamble == "yes" else parse_aof_commands(base)[1] == len(base)
        r.set("b", "2")
        before = dump(s)
    finally:
        s.cleanup()
    s = start_aof(kind, d, preamble=preamble)
    try:
        assert not dump_diffs(dump(s), before)
        assert aof_listing(d) == sorted(["appendonly.aof.2.base." + ext, "appendonly.aof.2.incr.aof", MANIFEST])
    finally:
        s.cleanup()
    # other names
    d2 = tmpdirs()
    s = start_aof(kind, d2, "--appenddirname", "aofs", "--appendfilename", "data.aof", preamble=preamble)
    try:
        client(s).set("k", "v")
        assert os.listdir(d2) == ["aofs"]
        assert aof_listing(d2, "aofs") == sorted(["data.aof.1.base." + ext, "data.aof.1.incr.aof", "data.aof.manifest"])
        assert read_manifest(d2, "aofs", "data.aof.manifest") == [("data.aof.1.base." + ext, 1, "b"),
                                                                  ("data.aof.1.incr.aof", 1, "i")]
    finally:
        s.cleanup()


@pytest.mark.parametrize("kind", KINDS)
def test_config_set_appendonly_yes_at_runtime(kind, tmpdirs):
    """Turning the AOF on at runtime rewrites the existing dataset into
    base seq 1; later writes go to incr seq 1; a restart with the AOF on
    holds both."""
    d = tmpdirs()
    s = start_in(kind, d)
    try:
        r = client(s)
        r.set("before", "1")
        r.hset("h", mapping={"f": "v", "g": "w"})
        r.zadd("z", {"a": 1.5, "b": -2})
        r.set("ttl", "x", ex=LONG_TTL)
        assert info(r)["aof_enabled"] == 0
        assert r.config_set("appendonly", "yes")
        assert info(r)["aof_enabled"] == 1
        i = wait_rewrite_done(r)
        assert i["aof_last_bgrewrite_status"] == "ok" and i["aof_rewrites"] == 1
        poll(lambda: os.path.exists(os.path.join(d, AOFDIR, MANIFEST)), 10, "the manifest")
        assert read_manifest(d) == [("appendonly.aof.1.base.rdb", 1, "b"), ("appendonly.aof.1.incr.aof", 1, "i")]
        r.set("after", "2")
        r.rpush("l", "a", "b")
        before = dump(s)
        kill9(s)
        s = start_aof(kind, d, fsync="everysec")
        assert not dump_diffs(dump(s), before)
    finally:
        s.cleanup()


@pytest.mark.parametrize("kind", KINDS)
def test_appendonly_yes_while_a_bgsave_runs_counts_each_write_once(kind, tmpdirs):
    """CONFIG SET appendonly yes during a slow BGSAVE: the rewrite that
    makes the base waits for the save; writes made while it waits are in
    that base, and must not be replayed a second time from the increment."""
    d = tmpdirs()
    s = start_in(kind, d, "--rdb-key-save-delay", "20000")
    try:
        r = client(s)
        for i in range(30):
            r.set("pad:%d" % i, "x")
        r.incr("n")
        assert r.bgsave()
        assert r.config_set("appendonly", "yes")
        for _ in range(4):
            r.incr("n")
        r.config_set("rdb-key-save-delay", "0")
        poll(lambda: info(r)["rdb_bgsave_in_progress"] == 0, 30, "the BGSAVE")
        poll(lambda: os.path.exists(os.path.join(d, AOFDIR, MANIFEST)), 30, "the manifest")
        wait_rewrite_done(r)
        r.incr("n")
        assert r.get("n") == b"6"
        kill9(s)
        s = start_aof(kind, d, fsync="everysec")
        assert client(s).get("n") == b"6"
    finally:
        s.cleanup()


@pytest.mark.parametrize("kind", KINDS)
def test_appendonly_off_and_on_again_leaves_only_the_manifests_files(kind, tmpdirs):
    """The files of an AOF turned off stay until it is turned on again; the
    rewrite that makes the new base then deletes them, so the directory holds
    exactly what the manifest names."""
    d = tmpdirs()
    s = start_in(kind, d)
    try:
        r = client(s)
        r.set("a", "1")
        for round_ in range(2):
            assert r.config_set("appendonly", "yes")
            wait_rewrite_done(r)
            r.incr("n")
            assert r.config_set("appendonly", "no")
        assert r.config_set("appendonly", "yes")
        wait_rewrite_done(r)
        named = {f for f, _, _ in read_manifest(d)} | {MANIFEST}
        poll(lambda: set(os.listdir(os.path.join(d, AOFDIR))) == named, 10,
             "only the manifest's files in %s" % AOFDIR)
        assert r.get("n") == b"2"
        kill9(s)
        s = start_aof(kind, d, fsync="everysec")
        assert client(s).get("n") == b"2" and client(s).get("a") == b"1"
    finally:
        s.cleanup()


def test_compact_is_an_alias_of_bgrewriteaof(tmpdirs):
    """ferry only: COMPACT answers like BGREWRITEAOF and rewrites the AOF."""
    d = tmpdirs()
    s = start_aof("ferry", d)
    try:
        r = client(s)
        for i in range(50):
            r.incr("c")
        r.rpush("l", *range(20))
        assert r.execute_command("COMPACT") == b"Background append only file rewriting started"
        i = wait_rewrite_done(r)
        assert i["aof_rewrites"] == 1 and i["aof_last_bgrewrite_status"] == "ok"
        assert read_manifest(d) == [("appendonly.aof.2.base.rdb", 2, "b"), ("appendonly.aof.2.incr.aof", 2, "i")]
        before = dump(s)
        kill9(s)
        s = start_aof("ferry", d)
        assert not dump_diffs(dump(s), before)
        assert client(s).get("c") == b"50"
    finally:
        s.cleanup()


# ------------------------------------------------------------------ kill -9 with appendfsync always
class Writer(threading.Thread):
    """One connection pipelining batches of writes to its own keys and
    recording what the server acknowledged, until the connection breaks or
    stop is set."""

    def __init__(self, port, tid, seed, stop):
        super().__init__(daemon=True)
        self.port, self.tid, self.rng, self.stop = port, tid, random.Random(seed), stop
        self.sets = {}             # key -> value (acked)
        self.incr_acked = {}       # key -> highest acked value
        self.incr_sent = {}        # key -> INCRs sent
        self.list_acked = {}       # key -> set of acked elements
        self.list_sent = {}        # key -> LPUSHes sent
        self.hash_acked = {}       # (key, field) -> value
        self.ttl_acked = set()     # keys whose EXPIRE was acked
        self.pairs_sent = {}       # n -> token (MULTI/EXEC: two keys, one value)
        self.pairs_acked = set()
        self.shared_acked = 0
        self.acks = 0
        self.error = None

    def key(self, name):
        return "w%d:%s" % (self.tid, name)

    def batch(self, n0):
        """[(command, expected reply, what to record when it arrives)]."""
        out = []
        for j in range(self.rng.randrange(1, 16)):
            n = n0 + j
            op = self.rng.randrange(7)
            if op == 0:
                k, v = self.key("s:%d" % n), "v%d" % n
                out.append((("SET", k, v), b"+OK\r\n", ("set", k, v)))
            elif op == 1:
                k = self.key("ctr:%d" % self.rng.randrange(3))
                self.incr_sent[k] = self.incr_sent.get(k, 0) + 1
                out.append((("INCR", k), b":", ("incr", k)))
            elif op == 2:
                k, e = self.key("list:%d" % self.rng.randrange(3)), "e%d" % n
                self.list_sent[k] = self.list_sent.get(k, 0) + 1
                out.append((("LPUSH", k, e), b":", ("lpush", k, e)))
            elif op == 3:
                k, f = self.key("hash"), "f%d" % n
                out.append((("HSET", k, f, n), b":1\r\n", ("hset", (k, f), str(n).encode())))
            elif op == 4:
                k = self.key("ttl:%d" % n)
                out.append((("SET", k, "t"), b"+OK\r\n", ("set", k, "t")))
                out.append((("EXPIRE", k, LONG_TTL), b":1\r\n", ("expire", k)))
            else:  # MULTI/EXEC setting two keys to one value: own keys or keys all writers share
                shared = op == 6
                tok = "%s%d:%d" % ("shared" if shared else "tok", self.tid, n)
                ka, kb = ("shared:a", "shared:b") if shared else (self.key("pa:%d" % n), self.key("pb:%d" % n))
                if not shared:
                    self.pairs_sent[n] = tok
                out += [(("MULTI",), b"+OK\r\n", None), (("SET", ka, tok), b"+QUEUED\r\n", None),
                        (("SET", kb, tok), b"+QUEUED\r\n", None),
                        (("EXEC",), b"*2\r\n+OK\r\n+OK\r\n", ("shared",) if shared else ("pair", n))]
        return out

    def record(self, raw, what):
        if what is None:
            return
        op = what[0]
        if op == "set":
            self.sets[what[1]] = what[2]
        elif op == "incr":
            self.incr_acked[what[1]] = max(self.incr_acked.get(what[1], 0), int(raw[1:-2]))
        elif op == "lpush":
            self.list_acked.setdefault(what[1], set()).add(what[2])
        elif op == "hset":
            self.hash_acked[what[1]] = what[2]
        elif op == "expire":
            self.ttl_acked.add(what[1])
        elif op == "pair":
            self.pairs_acked.add(what[1])
        else:
            self.shared_acked += 1

    def run(self):
        try:
            c = RawClient(self.port, timeout=10)
        except OSError:
            return
        n = 0
        try:
            while not self.stop.is_set():
                cmds = self.batch(n)
                n += len(cmds)
                c.send(b"".join(resp(*cmd) for cmd, _, _ in cmds))
                for cmd, expected, what in cmds:
                    raw = c.read_reply()
                    ok = raw.startswith(expected) and raw.endswith(b"\r\n") if expected == b":" else raw == expected
                    if not ok:
                        self.error = "unexpected reply %r to %r" % (raw, cmd)
                        return
                    self.record(raw, what)
                    self.acks += 1
        except TimeoutError:
            self.error = "no reply within 10 s"
        except (OSError, ServerClosed):
            pass  # the server was killed
        finally:
            c.close()

    def check(self, r):
        """The acknowledged writes are all in r (the restarted server); what
        was merely sent is there at most once; pairs are all or nothing."""
        problems = []
        keys = list(self.sets)
        for k, got in zip(keys, r.mget(keys) if keys else []):
            if got != self.sets[k].encode():
                problems.append("SET %s: %r" % (k, got))
        for k, sent in self.incr_sent.items():
            got = int(r.get(k) or 0)
            if not self.incr_acked.get(k, 0) <= got <= sent:
                problems.append("INCR %s: %d, acked %d, sent %d" % (k, got, self.incr_acked.get(k, 0), sent))
        for k, sent in self.list_sent.items():
            got = r.lrange(k, 0, -1)
            if len(got) != len(set(got)) or len(got) > sent:
                problems.append("LPUSH %s: %d elements (%d distinct), %d sent" % (k, len(got), len(set(got)), sent))
            missing = self.list_acked.get(k, set()) - {e.decode() for e in got}
            if missing:
                problems.append("LPUSH %s: acked elements missing: %s" % (k, sorted(missing)[:5]))
        if self.hash_acked:
            h = r.hgetall(self.key("hash"))
            for (k, f), v in self.hash_acked.items():
                if h.get(f.encode()) != v:
                    problems.append("HSET %s %s: %r" % (k, f, h.get(f.encode())))
        pipe = r.pipeline(transaction=False)
        for k in self.ttl_acked:
            pipe.ttl(k)
        for k, ttl in zip(self.ttl_acked, pipe.execute()):
            if not LONG_TTL - 600 < ttl <= LONG_TTL:
                problems.append("EXPIRE %s: TTL %r" % (k, ttl))
        pipe = r.pipeline(transaction=False)
        order = sorted(self.pairs_sent)
        for n in order:
            pipe.mget(self.key("pa:%d" % n), self.key("pb:%d" % n))
        for n, (a, b) in zip(order, pipe.execute()):
            tok = self.pairs_sent[n].encode()
            if (a, b) not in ((tok, tok), (None, None)) or (n in self.pairs_acked and a is None):
                problems.append("MULTI pair %d: %r %r (acked: %s)" % (n, a, b, n in self.pairs_acked))
        return problems[:10]


def run_writers(server, seed, nthreads=4, duration=None, kill=True):
    """Writers on nthreads connections for duration seconds, then SIGKILL
    (kill=True) or stop; returns the writers."""
    stop = threading.Event()
    writers = [Writer(server.port, t, seed * 100 + t, stop) for t in range(nthreads)]
    for w in writers:
        w.start()
    time.sleep(duration)
    if kill:
        kill9(server)
    stop.set()
    for w in writers:
        w.join(timeout=30)
        assert not w.is_alive()
        assert w.error is None, w.error
    return writers


def check_writers(server, writers):
    r = client(server)
    problems = [p for w in writers for p in w.check(r)]
    a, b = r.mget("shared:a", "shared:b")
    if a != b or (a is None and any(w.shared_acked for w in writers)):
        problems.append("shared MULTI pair: %r %r" % (a, b))
    return problems


@pytest.mark.timeout(600)
@pytest.mark.parametrize("kind", KINDS)
def test_kill9_with_appendfsync_always_loses_no_acknowledged_write(kind, tmpdirs):
    """AOF_KILL_TRIALS trials: four connections pipeline writes, the server
    is killed at a random moment, the restarted server holds every
    acknowledged write and each MULTI/EXEC pair whole or not at all."""
    rng = random.Random(20240607)
    total_acks = 0
    for trial in range(KILL_TRIALS):
        d = tmpdirs()
        s = start_aof(kind, d)
        try:
            writers = run_writers(s, seed=trial, duration=rng.uniform(0.2, 1.0))
            total_acks += sum(w.acks for w in writers)
            s = start_aof(kind, d)
            problems = check_writers(s, writers)
            assert not problems, "trial %d: %s" % (trial, problems)
        finally:
            s.cleanup()
    assert total_acks > 100 * KILL_TRIALS, "too few writes to mean anything: %d" % total_acks


# ------------------------------------------------------------------ reply after fdatasync (strace)
class StracedServer(ServerProcess):
    TRACED = "write,writev,pwrite64,pwritev,sendto,sendmsg,fsync,fdatasync"

    def __init__(self, kind, extra):
        super().__init__(kind, binary(kind), extra)
        self.trace = os.path.join(self.workdir, "trace.txt")

    def argv(self, port):
        return ["strace", "-f", "-tt", "-s", "512", "-e", "trace=" + self.TRACED, "-o", self.trace] + \
            super().argv(port)


def strace_usable():
    if not shutil.which("strace"):
        return "strace is not installed (apt-get install strace)"
    p = subprocess.run(["strace", "-o", "/dev/null", "true"], capture_output=True)
    if p.returncode != 0:
        return "strace cannot trace here (ptrace not permitted?): %s" % p.stderr.decode(errors="replace").strip()
    return None


_CALL = re.compile(r"^(\d+)\s+[\d:.]+\s+(\w+)\((\d+)(.*)$")
_RESUMED = re.compile(r"^(\d+)\s+[\d:.]+\s+<\.\.\. (\w+) resumed>(.*)$")


def parse_strace(text):
    """[{name, fd, text, start, end, ok}] in order of the calls' starts;
    start/end are the line numbers where the call began and returned."""
    events, pending = [], {}
    for i, line in enumerate(text.splitlines()):
        m = _CALL.match(line)
        if m:
            ev = {"pid": m.group(1), "name": m.group(2), "fd": int(m.group(3)), "text": m.group(4), "start": i,
                  "end": None}
            events.append(ev)
            if line.endswith("<unfinished ...>"):
                pending[ev["pid"]] = ev
            else:
                ev["end"] = i
            continue
        m = _RESUMED.match(line)
        if m and m.group(1) in pending:
            ev = pending.pop(m.group(1))
            ev["end"], ev["text"] = i, ev["text"] + m.group(3)
    for ev in events:
        ev["ok"] = ev["end"] is not None and re.search(r"= (\d+)$", ev["text"].strip()) is not None
    return events


@pytest.mark.parametrize("kind", KINDS)
def test_reply_leaves_after_the_aof_is_synced(kind, tmpdirs):
    """appendfsync always, under strace: for each write command, the AOF
    write holding it, then an fsync/fdatasync of that fd, then the reply."""
    why = strace_usable()
    if why:
        pytest.skip(why)
    d = tmpdirs()
    tag = uuid.uuid4().hex[:12]
    s = StracedServer(kind, ["--dir", d, *aof_args("always")]).start()
    keys = ["aoftrace-%s-%d" % (tag, i) for i in range(5)]
    marker = "aoftrace-marker-" + tag
    try:
        c = s.client(timeout=10)
        assert c.command("ECHO", marker) == b"$%d\r\n%s\r\n" % (len(marker), marker.encode())
        for k in keys:
            assert c.command("SET", k, "v") == b"+OK\r\n"
        c.close()
        s.stop()
        with open(s.trace) as f:
            events = parse_strace(f.read())
    finally:
        s.cleanup()
    writes = [e for e in events if e["name"] in ("write", "writev", "pwrite64", "pwritev", "sendto", "sendmsg")]
    syncs = [e for e in events if e["name"] in ("fsync", "fdatasync") and e["ok"]]
    marker_writes = [e for e in writes if marker in e["text"]]
    assert marker_writes, "the ECHO reply is not in the trace"
    cfd = marker_writes[0]["fd"]
    replies = [e for e in writes if e["fd"] == cfd and e["start"] > marker_writes[0]["start"]][:len(keys)]
    assert len(replies) == len(keys), "replies on fd %d: %r" % (cfd, replies)
    for k, reply in zip(keys, replies):
        assert "+OK" in reply["text"], reply
        holders = [e for e in writes if k in e["text"] and e["fd"] != cfd and e["ok"]]
        assert holders, "no write of %s to a file" % k
        w = holders[0]
        assert w["end"] < reply["start"], "the reply to SET %s left before its AOF write" % k
        synced = [f for f in syncs if f["fd"] == w["fd"] and f["start"] > w["end"] and f["end"] < reply["start"]]
        assert synced, "no fsync/fdatasync(%d) between the AOF write of %s and its reply" % (w["fd"], k)


# ------------------------------------------------------------------ everysec
@pytest.mark.parametrize("kind", KINDS)
def test_kill9_with_appendfsync_everysec_loses_at_most_two_seconds(kind, tmpdirs):
    """Pipelined SETs for 3 s on one connection, kill -9: what survives is a
    prefix of the acknowledged writes, missing at most 2 s of them."""
    d = tmpdirs()
    s = start_aof(kind, d, fsync="everysec")
    acked = []  # (index, monotonic time of the acknowledgement)
    try:
        c = s.client(timeout=10)
        n, t_end = 0, time.monotonic() + 3.0
        while time.monotonic() < t_end:
            c.send(b"".join(resp("SET", "ev:%d" % i, i) for i in range(n, n + 50)))
            for i in range(n, n + 50):
                assert c.read_reply() == b"+OK\r\n"
                acked.append((i, time.monotonic()))
            n += 50
        c.close()
        kill9(s)
        s = start_aof(kind, d, fsync="everysec")
        r = client(s)
        present = []
        for j in range(0, len(acked), 1000):
            chunk = acked[j:j + 1000]
            present += [v is not None for v in r.mget(["ev:%d" % i for i, _ in chunk])]
    finally:
        s.cleanup()
    assert len(acked) > 1000
    kept = present.index(False) if False in present else len(present)
    assert all(present[:kept]) and not any(present[kept:]), "the surviving writes are not a prefix"
    lost_seconds = acked[-1][1] - acked[kept][1] if kept < len(acked) else 0.0
    assert lost_seconds <= 2.0, "lost %d acknowledged writes (%.2f s of writes)" % (len(acked) - kept, lost_seconds)


# ------------------------------------------------------------------ differential + cross-loading
EVAL_TWO_KEYS = "redis.call('set', KEYS[1], ARGV[1]); return redis.call('incrby', KEYS[2], ARGV[2])"


def make_program(seed, n=700, rewrite_at=None):
    """A deterministic list of steps over every type, with TTLs, MULTI/EXEC,
    SELECT, FLUSHDB, blocking pops, EVAL and (optionally) a BGREWRITEAOF."""
    rng = random.Random(seed)
    abs_ms = int(time.time() * 1000) + LONG_TTL * 1000  # one absolute time for both servers
    K = 12

    def name(prefix):
        return "%s:%d" % (prefix, rng.randrange(K))

    def val():
        return rng.choice(["v%d" % rng.randrange(1000), str(rng.randrange(-10**6, 10**6)), "x" * rng.randrange(1, 90),
                           bytes(rng.randrange(256) for _ in range(rng.randrange(1, 10)))])

    def simple():
        op = rng.randrange(34)
        s, c, f, l, h, t, z = (name(p) for p in ("s", "c", "f", "l", "h", "t", "z"))
        anykey = rng.choice([s, c, f, l, h, t, z])
        return [
            ("SET", s, val()), ("SET", s, val(), "EX", rng.randrange(1000, LONG_TTL)),
            ("SET", s, val(), "PX", rng.randrange(10**6, 10**9)), ("SETEX", s, rng.randrange(1000, LONG_TTL), val()),
            ("APPEND", s, val()), ("GETEX", s, "PERSIST"), ("INCR", c), ("INCRBY", c, rng.randrange(-100, 100)),
            ("INCRBYFLOAT", f, rng.choice(["0.1", "1.25", "-3.75", "1e3", "2.5e-3"])),
            ("RPUSH", l, *[val() for _ in range(rng.randrange(1, 5))]), ("LPUSH", l, val()), ("LPOP", l),
            ("RPOP", l, 2), ("LTRIM", l, 0, rng.randrange(2, 8)), ("LSET", l, 0, val()),
            ("HSET", h, *[x for _ in range(rng.randrange(1, 4)) for x in ("f%d" % rng.randrange(8), val())]),
            ("HDEL", h, "f%d" % rng.randrange(8)), ("HINCRBY", h, "n", rng.randrange(-5, 5)),
            ("HINCRBYFLOAT", h, "fl", "1.5"), ("SADD", t, *[rng.randrange(20) for _ in range(3)]),
            ("SREM", t, rng.randrange(20)), ("SMOVE", t, name("t"), rng.randrange(20)),
            ("ZADD", z, rng.choice([1, -2.5, 3.25, 1e10]), "m%d" % rng.randrange(10)),
            ("ZINCRBY", z, 2.5, "m%d" % rng.randrange(10)), ("ZREM", z, "m%d" % rng.randrange(10)), ("ZPOPMIN", z),
            ("EXPIRE", anykey, rng.randrange(1000, LONG_TTL)), ("PEXPIRE", anykey, rng.randrange(10**6, 10**9)),
            ("PEXPIREAT", anykey, abs_ms + rng.randrange(1000)), ("PERSIST", anykey), ("DEL", anykey, name("s")),
            ("UNLINK", anykey), ("RENAME", s, name("s")), ("MOVE", anykey, rng.randrange(4)),
        ][op]

    steps = []
    for i in range(n):
        if i == rewrite_at:
            steps.append(("rewrite",))
        x = rng.random()
        if x < 0.04:
            steps.append(("cmd", ("SELECT", rng.randrange(4))))
        elif x < 0.045:
            steps.append(("cmd", ("FLUSHDB",)))
        elif x < 0.05:
            steps.append(("cmd", ("SWAPDB", rng.randrange(4), rng.randrange(4))))
        elif x < 0.10:
            steps.append(("multi", [simple() for _ in range(rng.randrange(1, 5))]))
        elif x < 0.12:
            k = name("sp")
            steps.append(("cmd", ("SADD", k, *["m%d" % j for j in range(30)])))
            steps.append(("cmd", ("SPOP", k) if rng.random() < 0.5 else ("SPOP", k, rng.randrange(2, 6))))
        elif x < 0.14:
            steps.append(("cmd", ("EVAL", EVAL_TWO_KEYS, 2, name("s"), name("c"), val(), rng.randrange(100))))
        elif x < 0.16:
            which = rng.randrange(3)
            if which == 0:
                k = name("bl")
                steps.append(("block", k, ("BLPOP", k, 5), ("RPUSH", k, val(), val())))
            elif which == 1:
                k = name("bl")
                steps.append(("block", k, ("BLMOVE", k, name("l"), "LEFT", "RIGHT", 5), ("RPUSH", k, val(), val())))
            else:
                k = name("bz")
                steps.append(("block", k, ("BZPOPMIN", k, 5), ("ZADD", k, 1, "a", 2, "b")))
        else:
            steps.append(("cmd", simple()))
    # keys that expire before the end: gone in every dump
    steps.append(("cmd", ("SELECT", 0)))
    for j in range(3):
        steps.append(("cmd", ("SET", "gone:%d" % j, "v", "PX", 1)))
    steps.append(("cmd", ("PEXPIRE", "s:0", 1)))
    return steps


def blocked_clients(c):
    return int(re.search(rb"blocked_clients:(\d+)", c.command("INFO", "clients")).group(1))


def run_program(server, steps):
    """Run the steps; return the number of rewrites started."""
    c, b = server.client(timeout=10), server.client(timeout=10)
    db, bdb, rewrites = 0, 0, 0
    try:
        for st in steps:
            if st[0] == "cmd":
                reply = c.command(*st[1])
                if st[1][0] == "SELECT":
                    assert reply == b"+OK\r\n"
                    db = st[1][1]
            elif st[0] == "multi":
                replies = c.pipeline([("MULTI",), *st[1], ("EXEC",)])
                assert replies[0] == b"+OK\r\n" and replies[-1].startswith(b"*"), replies
            elif st[0] == "block":
                _, key, bcmd, push = st
                if bdb != db:
                    assert b.command("SELECT", db) == b"+OK\r\n"
                    bdb = db
                c.command("DEL", key)
                b.send_command(*bcmd)
                poll(lambda: blocked_clients(c) == 1, 10, "the client to block")
                assert c.command(*push).startswith(b":")
                got = b.read_reply()
                assert got.startswith((b"*3", b"*2", b"$")), (bcmd, got)
            elif st[0] == "rewrite":
                assert c.command("CONFIG", "SET", "rdb-key-save-delay", "10000") == b"+OK\r\n"
                assert c.command("BGREWRITEAOF") == b"+Background append only file rewriting started\r\n"
                rewrites += 1
        if rewrites:
            r = client(server)
            assert info(r)["aof_rewrite_in_progress"] == 1, "the rewrite ended before the program did"
            wait_rewrite_done(r)
            r.config_set("rdb-key-save-delay", 0)
            i = info(r)
            assert i["aof_last_bgrewrite_status"] == "ok" and i["aof_rewrites"] == rewrites
        time.sleep(0.05)  # the PX 1 keys expire
    finally:
        c.close()
        b.close()
    return rewrites


def without_spop_sets(d):
    """SPOP picks members at random: those sets differ between servers."""
    return {k: v for k, v in d.items() if not k[1].startswith(b"sp:")}


@pytest.mark.timeout(300)
@pytest.mark.parametrize("preamble,rewrite", [("yes", False), ("no", False), ("yes", True), ("no", True)],
                         ids=["preamble", "no-preamble", "preamble-rewrite", "no-preamble-rewrite"])
def test_same_program_restarts_and_cross_loads(preamble, rewrite, tmpdirs):
    """The same program on ferry and redis-server with the AOF on; each
    restarts into its dump; each loads a copy of the other's appendonlydir
    into the other's dump; the two dumps agree (but for SPOP's sets)."""
    steps = make_program(seed=77 if rewrite else 41, rewrite_at=350 if rewrite else None)
    dirs, before, layout = {}, {}, {}
    for kind in KINDS:
        dirs[kind] = tmpdirs()
        s = start_aof(kind, dirs[kind], "--enable-debug-command", "yes", preamble=preamble)
        try:
            run_program(s, steps)
            before[kind] = dump(s)
            assert len(before[kind]) > 30
            assert any(k[0] != 0 for k in before[kind]), "no key outside db 0"
            assert not any(k[1].startswith(b"gone:") for k in before[kind])
            shutdown_nosave(s)
            layout[kind] = (aof_listing(dirs[kind]), read_manifest(dirs[kind]))
        finally:
            s.cleanup()
    for loader in KINDS:
        for writer in KINDS:
            d = dirs[writer] if loader == writer else tmpdirs()
            if loader != writer:
                shutil.copytree(os.path.join(dirs[writer], AOFDIR), os.path.join(d, AOFDIR))
            s = start_aof(loader, d, preamble=preamble)
            try:
                diffs = dump_diffs(dump(s), before[writer])
                assert not diffs, "%s loading %s's AOF: %s" % (loader, writer, diffs)
            finally:
                s.cleanup()
    diffs = dump_diffs(without_spop_sets(before["ferry"]), without_spop_sets(before["redis"]))
    assert not diffs, "ferry and redis-server ran the program to different keyspaces: %s" % diffs
    assert layout["ferry"] == layout["redis"], "appendonlydir files and manifest differ"


@pytest.mark.parametrize("kind", KINDS)
def test_version6_single_appendonly_aof_is_loaded_and_migrated(kind, tmpdirs):
    """A Redis 6 style dir/appendonly.aof (RESP, no appendonlydir) is
    loaded, moved into appendonlydir as the base and named in a new
    manifest with a new incr file; later writes survive a restart."""
    d = tmpdirs()
    abs_ms = int(time.time() * 1000) + LONG_TTL * 1000
    cmds = [("SELECT", 0), ("SET", "a", "1"), ("RPUSH", "l", "x", "y", "z"), ("INCR", "c"), ("INCR", "c"),
            ("SET", "t", "temp"), ("PEXPIREAT", "t", abs_ms), ("MULTI",), ("SET", "m1", "v"), ("SET", "m2", "v"),
            ("EXEC",), ("SELECT", 2), ("HSET", "h", "f", "v", "g", "w"), ("SADD", "s", "m1", "m2"),
            ("ZADD", "z", 1, "a", 2.5, "b"), ("DEL", "nothing"), ("SELECT", 0), ("LPOP", "l")]
    with open(os.path.join(d, "appendonly.aof"), "wb") as f:
        f.write(b"".join(resp(*c) for c in cmds))
    s = start_in(kind, d, "--appendonly", "yes", "--appendfsync", "always")
    try:
        got = dump(s)
        ttl = got.pop((0, b"t"))
        assert ttl[:2] == ("string", b"temp") and abs(ttl[2] - (abs_ms - time.time() * 1000)) < 60000
        assert got == {(0, b"a"): ("string", b"1", -1), (0, b"l"): ("list", [b"y", b"z"], -1),
                       (0, b"c"): ("string", b"2", -1), (0, b"m1"): ("string", b"v", -1),
                       (0, b"m2"): ("string", b"v", -1), (2, b"h"): ("hash", [(b"f", b"v"), (b"g", b"w")], -1),
                       (2, b"s"): ("set", [b"m1", b"m2"], -1), (2, b"z"): ("zset", [(b"a", 1.0), (b"b", 2.5)], -1)}
        assert not os.path.exists(os.path.join(d, "appendonly.aof"))
        assert aof_listing(d) == sorted(["appendonly.aof", "appendonly.aof.1.incr.aof", MANIFEST])
        assert read_manifest(d) == [("appendonly.aof", 1, "b"), ("appendonly.aof.1.incr.aof", 1, "i")]
        client(s).set("new", "after-migration")
        before = dump(s)
        kill9(s)
        s = start_aof(kind, d)
        assert not dump_diffs(dump(s), before)
    finally:
        s.cleanup()


# ------------------------------------------------------------------ truncated and corrupt files
def build_tail_aof(kind, d):
    """An AOF whose incr file ends with SET t1, SET t2, MULTI, SET t3, SET t4,
    EXEC: returns (incr path, its bytes, [(start, end, args)])."""
    s = start_aof(kind, d)
    try:
        r = client(s)
        r.set("a", "1")
        r.rpush("l", "x", "y")
        r.hset("h", "f", "v")
        r.set("t1", "one")
        r.set("t2", "two")
        p = r.pipeline(transaction=True)
        p.set("t3", "three")
        p.set("t4", "four")
        p.execute()
    finally:
        s.cleanup()
    path = os.path.join(d, AOFDIR, "appendonly.aof.1.incr.aof")
    with open(path, "rb") as f:
        data = f.read()
    cmds, end = parse_aof_commands(data)
    assert end == len(data)
    assert [c[2][0].upper() for c in cmds[-6:]] == [b"SET", b"SET", b"MULTI", b"SET", b"SET", b"EXEC"]
    return path, data, cmds


def fresh_copy(src, dst):
    shutil.rmtree(os.path.join(dst, AOFDIR), ignore_errors=True)
    shutil.copytree(os.path.join(src, AOFDIR), os.path.join(dst, AOFDIR))


@pytest.mark.timeout(300)
@pytest.mark.parametrize("kind", KINDS)
def test_truncated_incr_file(kind, tmpdirs):
    """Every cut inside the last commands (SET t2, MULTI, SET t3, SET t4,
    EXEC): aof-load-truncated yes loads every complete command before the
    cut (an unfinished MULTI/EXEC not at all) and cuts the file back to a
    command boundary, so that later appends load; aof-load-truncated no
    refuses to start and names the file, unless the cut is on a command
    boundary outside the MULTI."""
    good = tmpdirs()
    _path, data, cmds = build_tail_aof(kind, good)
    t1, t2 = cmds[-6:-4]
    clean_ends = {c[1] for c in cmds[:-4]}  # boundaries outside the transaction
    work = tmpdirs()
    wpath = os.path.join(work, AOFDIR, "appendonly.aof.1.incr.aof")
    checked_append = 0
    for cut in range(t2[0] + 1, len(data)):
        fresh_copy(good, work)
        os.truncate(wpath, cut)
        keep_t2 = cut >= t2[1]  # the transaction is never whole: cut < len(data)
        valid_end = t2[1] if keep_t2 else t1[1]
        # aof-load-truncated yes
        s = start_aof(kind, work, "--aof-load-truncated", "yes")
        try:
            r = client(s)
            got = r.mget("a", "t1", "t2", "t3", "t4")
            assert got == [b"1", b"one", b"two" if keep_t2 else None, None, None], "cut at %d: %r" % (cut, got)
            assert r.dbsize() == 4 + keep_t2
            # cut back to a command boundary that keeps what was loaded (Redis
            # 7.0 keeps a partial MULTI... whose commands it did not apply)
            with open(wpath, "rb") as f:
                rest = f.read()
            assert parse_aof_commands(rest)[1] == len(rest) and valid_end <= len(rest) <= cut, \
                "cut at %d: the file was cut back to %d" % (cut, len(rest))
            if cut <= t2[1] and (cut % 2 == 0 or cut == t2[1]):
                # appends after the cut load with aof-load-truncated no
                # (not after a partial MULTI: Redis 7.0 would swallow them)
                r.set("appended", cut)
                s.cleanup()
                s = start_aof(kind, work, "--aof-load-truncated", "no")
                assert client(s).get("appended") == str(cut).encode()
                checked_append += 1
        finally:
            s.cleanup()
        # aof-load-truncated no
        fresh_copy(good, work)
        os.truncate(wpath, cut)
        if cut in clean_ends:
            s = start_aof(kind, work, "--aof-load-truncated", "no")
            try:
                assert client(s).get("t2") == (b"two" if keep_t2 else None)
            finally:
                s.cleanup()
        else:
            rc, log = run_to_exit(kind, work, *aof_args(), "--aof-load-truncated", "no")
            assert rc not in (0, None), "cut at %d: exit status %r" % (cut, rc)
            assert "appendonly.aof.1.incr.aof" in log, "cut at %d: log does not name the file:\n%s" % (cut, log[-800:])
    assert checked_append > 10


@pytest.mark.parametrize("kind", KINDS)
def test_corrupt_incr_file_never_loads(kind, tmpdirs):
    """A damaged command in the middle of the incr file (not at its end)
    stops start-up whatever aof-load-truncated says; the log names the file;
    the file is left as it was."""
    good = tmpdirs()
    _path, data, cmds = build_tail_aof(kind, good)
    mid = cmds[len(cmds) // 2]
    argc_end = data.index(b"\r\n", mid[0])
    bulk = data.index(b"$", mid[0])
    damages = {"argc marker": (mid[0], b"X"), "bulk marker": (bulk, b"#"), "argc digit": (argc_end - 1, b"z"),
               "line end": (argc_end, b"\n")}
    work = tmpdirs()
    wpath = os.path.join(work, AOFDIR, "appendonly.aof.1.incr.aof")
    for what, (off, byte) in damages.items():
        bad = data[:off] + byte + data[off + 1:]
        for setting in ("yes", "no"):
            fresh_copy(good, work)
            with open(wpath, "wb") as f:
                f.write(bad)
            rc, log = run_to_exit(kind, work, *aof_args(), "--aof-load-truncated", setting)
            assert rc not in (0, None), "%s, aof-load-truncated %s: exit status %r" % (what, setting, rc)
            assert "appendonly.aof.1.incr.aof" in log, "%s: the log does not name the file:\n%s" % (what, log[-800:])
            with open(wpath, "rb") as f:
                assert f.read() == bad, "%s: the file was changed" % what


# ------------------------------------------------------------------ rewrite under load
def preload(r, n=3000):
    pipe = r.pipeline(transaction=False)
    for i in range(0, n, 100):
        pipe.mset({"pre:%d" % j: "x" * 20 for j in range(i, i + 100)})
    pipe.execute()


@pytest.mark.parametrize("kind", KINDS)
def test_bgrewriteaof_under_write_load_keeps_everything(kind, tmpdirs):
    """Writes from four connections while a BGREWRITEAOF (slowed down by
    rdb-key-save-delay) runs: afterwards the manifest names the new base and
    incr only, and a restart gives the same DEBUG DIGEST."""
    d = tmpdirs()
    s = start_aof(kind, d, "--enable-debug-command", "yes", fsync="everysec")
    try:
        r = client(s)
        preload(r)
        r.config_set("rdb-key-save-delay", 300)  # ~1 s for 3000 keys
        stop = threading.Event()
        writers = [Writer(s.port, t, 500 + t, stop) for t in range(4)]
        for w in writers:
            w.start()
        poll(lambda: sum(w.acks for w in writers) > 200, 10, "writes")
        assert r.bgrewriteaof()
        acks_at_start = sum(w.acks for w in writers)
        assert info(r)["aof_rewrite_in_progress"] == 1
        i = wait_rewrite_done(r)
        acks_during = sum(w.acks for w in writers) - acks_at_start
        time.sleep(0.2)
        stop.set()
        for w in writers:
            w.join(timeout=30)
            assert w.error is None, w.error
        assert acks_during > 100, "too few writes during the rewrite: %d" % acks_during
        assert i["aof_last_bgrewrite_status"] == "ok" and i["aof_rewrites"] == 1
        r.config_set("rdb-key-save-delay", 0)
        poll(lambda: aof_listing(d) == sorted(["appendonly.aof.2.base.rdb", "appendonly.aof.2.incr.aof", MANIFEST]),
             10, "the history files to go")
        assert read_manifest(d) == [("appendonly.aof.2.base.rdb", 2, "b"), ("appendonly.aof.2.incr.aof", 2, "i")]
        digest, size = r.execute_command("DEBUG", "DIGEST"), r.dbsize()
        s.cleanup()
        s = start_aof(kind, d, "--enable-debug-command", "yes", fsync="everysec")
        r = client(s)
        assert r.execute_command("DEBUG", "DIGEST") == digest
        assert r.dbsize() == size
        problems = check_writers(s, writers)
        assert not problems, problems
    finally:
        s.cleanup()


@pytest.mark.timeout(300)
@pytest.mark.parametrize("kind", KINDS)
def test_kill9_during_rewrite(kind, tmpdirs):
    """kill -9 at random moments of a slowed-down BGREWRITEAOF under write
    load (appendfsync always): the server restarts, its manifest names only
    files that exist, no acknowledged write is lost."""
    rng = random.Random(99)
    for trial in range(4):
        d = tmpdirs()
        s = start_aof(kind, d)
        try:
            r = client(s)
            preload(r)
            r.config_set("rdb-key-save-delay", 300)
            stop = threading.Event()
            writers = [Writer(s.port, t, 900 + 10 * trial + t, stop) for t in range(3)]
            for w in writers:
                w.start()
            time.sleep(0.1)
            assert r.bgrewriteaof()
            time.sleep(rng.uniform(0.05, 1.3))
            kill9(s)
            stop.set()
            for w in writers:
                w.join(timeout=30)
                assert w.error is None, w.error
            s = start_aof(kind, d)
            r = client(s)
            for name, _seq, _t in read_manifest(d):
                assert os.path.exists(os.path.join(d, AOFDIR, name)), "trial %d: manifest names missing %s" % (
                    trial, name)
            assert r.exists(*["pre:%d" % i for i in range(0, 3000, 7)]) == len(range(0, 3000, 7))
            problems = check_writers(s, writers)
            assert not problems, "trial %d: %s" % (trial, problems)
        finally:
            s.cleanup()


# ------------------------------------------------------------------ disk errors
FSIZE_WRAPPER = ("import os, resource, signal, sys\n"
                 "signal.signal(signal.SIGXFSZ, signal.SIG_IGN)\n"
                 "resource.setrlimit(resource.RLIMIT_FSIZE, (int(sys.argv[1]), resource.RLIM_INFINITY))\n"
                 "os.execv(sys.argv[2], sys.argv[2:])\n")


class FsizeLimitedServer(ServerProcess):
    """The server exec'd from a wrapper that ignores SIGXFSZ (so a write past
    the limit fails with EFBIG or is cut short) and sets a soft RLIMIT_FSIZE,
    which the test can lift later with prlimit (same pid after exec)."""

    def __init__(self, kind, limit, extra):
        super().__init__(kind, binary(kind), extra)
        self.limit = limit

    def argv(self, port):
        return [sys.executable, "-c", FSIZE_WRAPPER, str(self.limit)] + super().argv(port)


MISCONF_AOF = ("MISCONF Errors writing to the AOF file: No space left on device",
               "MISCONF Errors writing to the AOF file: File too large")


@pytest.mark.parametrize("kind", KINDS)
def test_aof_write_errors_refuse_writes_until_the_disk_recovers(kind, tmpdirs):
    """appendfsync everysec and a 32 KB file size limit: once the AOF cannot
    be written, writes (and PING) get -MISCONF and INFO says
    aof_last_write_status:err, reads still work; when the limit is lifted
    the server writes again by itself, and after a restart every
    acknowledged write is there."""
    d = tmpdirs()
    s = FsizeLimitedServer(kind, 32768, ["--dir", d, *aof_args("everysec")]).start()
    try:
        r = client(s)
        acked, err = [], None
        for i in range(5000):
            try:
                assert r.set("k%d" % i, "x" * 100)
                acked.append(i)
            except redispy.ResponseError as e:
                err = str(e)
                break
        assert err in MISCONF_AOF, err
        assert 100 < len(acked) < 400
        assert info(r)["aof_last_write_status"] == "err"
        with pytest.raises(redispy.ResponseError) as e:
            r.ping()
        assert str(e.value) in MISCONF_AOF
        with pytest.raises(redispy.ResponseError) as e:
            r.incr("counter")
        assert str(e.value) in MISCONF_AOF
        assert r.get("k0") == b"x" * 100 and r.get("counter") is None
        import resource
        resource.prlimit(s.proc.pid, resource.RLIMIT_FSIZE, (resource.RLIM_INFINITY, resource.RLIM_INFINITY))
        poll(lambda: info(r)["aof_last_write_status"] == "ok", 10, "the AOF to be writable again")
        assert r.set("after", "1")
        assert r.ping()
    finally:
        s.cleanup()
    s = start_aof(kind, d, fsync="everysec")
    try:
        r = client(s)
        got = r.mget(["k%d" % i for i in acked])
        missing = [i for i, v in zip(acked, got) if v != b"x" * 100]
        assert not missing, "acknowledged writes lost: %s" % missing[:10]
        assert r.get("after") == b"1"
    finally:
        s.cleanup()


@pytest.mark.parametrize("kind", ["ferry", "redis"])
def test_appendonly_turned_on_inside_exec_schedules_the_rewrite(server_factory, kind):
    """CONFIG SET appendonly yes inside MULTI/EXEC does not fork in the middle
    of the transaction: the rewrite is scheduled (Redis's log line) and runs
    from the cron, and the transaction's write is in the new file."""
    s = server_factory(kind)
    c = redispy.Redis(port=s.port)
    forks = c.info("stats")["total_forks"]
    p = c.pipeline(transaction=True)
    p.set("foo", "bar")
    p.config_set("appendonly", "yes")
    assert p.execute() == [True, True]
    poll(lambda: "AOF was enabled during a transaction. An AOF background was scheduled to start when possible."
         in s.log_tail(50), 10, "the scheduling log line", diag=lambda: s.log_tail(20))
    poll(lambda: c.info("stats")["total_forks"] > forks and not c.info("persistence")["aof_rewrite_in_progress"]
         and c.info("persistence")["aof_last_bgrewrite_status"] == "ok", 20, "the scheduled rewrite")
    base = [f for f in os.listdir(os.path.join(s.workdir, "appendonlydir")) if ".base." in f]
    assert len(base) == 1, base
    with open(os.path.join(s.workdir, "appendonlydir", base[0]), "rb") as fh:
        assert b"foo" in fh.read()  # the transaction's write made it into the rewritten base
