"""The shared replication buffer (Redis 7.0) and PUBLISH reaching replicas.

Every test runs the same assertions with ferry and redis-server in the same
roles (pairs primary->replicas: ferry->ferry, ferry->redis, redis->ferry;
with REPL_ORACLE=1 every ferry node is a redis-server 7.0.15, which proves
the tests themselves). Ideas ported from Redis's
tests/integration/replication-buffer.tcl, with sizes kept small.

A slow replica is one waiting for its snapshot: the primary's
`rdb-key-save-delay` (microseconds per key) makes the disk-based BGSAVE of
100+ keys last minutes; the replica's ROLE says "sync", the primary's INFO
says state=wait_bgsave and rdb_bgsave_in_progress:1. The sync is
disk-based (repl-diskless-sync no) so that a second slow replica attaches
to the first one's BGSAVE on both servers (a diskless one would wait for
the next). Such replicas are
killed before the end of their test (and every node at teardown), so
nothing waits for the snapshot.

Shared replication buffer
  1. two slow replicas attached to the same BGSAVE and a fast one share one
     buffer: ~1 MB written makes mem_total_replication_buffers about 1 MB,
     not 2 (and used_memory grows by less than the data plus twice that);
     killing one slow replica frees nothing (the other still needs every
     byte); once the last slow one is gone and the fast one has caught up,
     the buffer shrinks by the MB written and the history back near
     repl-backlog-size.
  2. with a 16 KB repl-backlog-size, 200 KB written leave ~16 KB of
     history; then a slow replica makes the history (repl_backlog_histlen)
     outgrow it: 2 MB written, it reaches back to where the slow replica
     started. A fast replica sent to follow a dead port during those 2 MB
     (cached primary kept, as in Redis's test) comes back and resyncs
     partially from that history (+CONTINUE counted by sync_partial_ok, no
     full sync) and holds what the primary holds; a raw PSYNC at
     repl_backlog_first_byte_offset gets +CONTINUE and all of that history
     (every SET in it). When the slow replica (SIGSTOPped) is dropped at a
     lowered client-output-buffer-limit while the fast one is kept, the
     history and mem_total_replication_buffers shrink back near
     repl-backlog-size.
  3. a replica's hard client-output-buffer-limit (512kb) below
     repl-backlog-size (100mb) counts as repl-backlog-size: a partial resync
     of 20 MB and then 20 MB transactions of 10 MB SETs do not drop the
     replica (same client, sync_full 1, sync_partial_ok 1); the control:
     repl-backlog-size lowered to 1mb by CONFIG SET (in effect at once:
     INFO's repl_backlog_size says so), the next such transaction does
     drop it (a full resync follows).

PUBLISH propagated to replicas (standalone)
  4. subscribers (SUBSCRIBE and PSUBSCRIBE) on every replica, also down the
     chain ferry->ferry->ferry, receive what is PUBLISHed on the primary:
     plain, inside MULTI/EXEC after a SET (the SET is applied on the
     replica when the message arrives there), from a script; PUBLISH's
     reply on the primary counts only the primary's own receivers. A
     PUBLISH on a replica reaches only that replica's subscribers (not its
     primary's, not its sub-replica's) and leaves its offset alone.
  5. SPUBLISH on the primary reaches SSUBSCRIBE subscribers of the
     replicas (redis-server 7.0 forces its propagation too).
  6. PUBLISH is not written to the append-only file, neither the primary's
     nor the replica's (both appendonly yes), while the SET of the same
     MULTI/EXEC is; the files still load (DEBUG LOADAOF) with the keys.
"""
from __future__ import annotations

import glob
import os
import re
import signal
import socket

import pytest

import replkit as rk
from replkit import digest, info, info_int, poll, replicaof, wait_sync

PAIRS = {
    "ferry->ferry": ("ferry", "ferry"),
    "ferry->redis": ("ferry", "redis"),
    "redis->ferry": ("redis", "ferry"),
}
TOPOLOGIES = dict(PAIRS, **{"ferry->ferry->ferry": ("ferry", "ferry", "ferry")})

SLOW_SAVE_US = 1000000          # rdb-key-save-delay: one second per key saved
BACKLOG = 16384


nodes = rk.nodes


# ---------------------------------------------------------------- helpers
def kill_node(ns, node):
    """SIGKILL a node on purpose (its process group: a BGSAVE child too) and
    forget it, so the fixture does not report it dead."""
    node.close()
    node.server._signal_group(signal.SIGCONT)
    node.server._signal_group(signal.SIGKILL)
    node.server.cleanup()
    ns.nodes.remove(node)


def populate(node, n, size, prefix):
    """n SETs of `size`-byte values, pipelined; returns the keys."""
    keys = ["%s%d" % (prefix, i) for i in range(n)]
    with node.client(timeout=60) as c:
        for i in range(0, n, 100):
            cmds = [["SET", k, "v" * size] for k in keys[i:i + 100]]
            assert c.pipeline(cmds) == [b"+OK\r\n"] * len(cmds)
    return keys


def slaves(primary) -> dict:
    """INFO replication's slaveN lines by the replica's listening port."""
    out = {}
    for k, v in info(primary).items():
        if re.fullmatch(r"slave\d+", k):
            d = dict(kv.split("=", 1) for kv in v.split(","))
            out[int(d["port"])] = d
    return out


def repl_int(node, field):
    return info_int(node, field, "replication")


def mem_buffers(node):
    return info_int(node, "mem_total_replication_buffers", "memory")


def wait_slow(primary, replicas):
    """Every replica waits for the primary's (slow) BGSAVE: ROLE 'sync' on the
    replica, state=wait_bgsave on the primary, rdb_bgsave_in_progress:1."""
    def ok():
        if info(primary, "persistence").get("rdb_bgsave_in_progress") != "1":
            return False
        sl = slaves(primary)
        return all(r.call("ROLE")[3] == "sync" and sl.get(r.port, {}).get("state") == "wait_bgsave"
                   for r in replicas)

    poll(ok, 30, "replicas %r waiting for the primary's BGSAVE" % (replicas,),
         diag=lambda: "\nprimary: %r, bgsave %r\nroles: %r\nprimary log:\n%s" % (
             slaves(primary), info(primary, "persistence").get("rdb_bgsave_in_progress"),
             [r.call("ROLE") for r in replicas], primary.log_tail(15)))


def start_slow_save(primary, nkeys=100):
    """From now on a BGSAVE of the primary lasts nkeys seconds at least."""
    assert primary.call("CONFIG", "SET", "rdb-key-save-delay", SLOW_SAVE_US) == "OK"
    populate(primary, nkeys, 16, "slow:")


# ---------------------------------------------------------------- 1
@pytest.mark.parametrize("pair", list(PAIRS))
def test_replicas_share_one_buffer(nodes, pair):
    pk, rkind = PAIRS[pair]
    primary = nodes(pk, "--repl-backlog-size", BACKLOG, "--client-output-buffer-limit", "replica 0 0 0",
                    "--repl-diskless-sync", "no", name="primary")
    fast = nodes(rkind, name="fast")
    slow1, slow2 = nodes(rkind, name="slow1"), nodes(rkind, name="slow2")
    replicaof(fast, primary)
    wait_sync(fast, primary)

    start_slow_save(primary)
    replicaof(slow1, primary)
    wait_slow(primary, [slow1])
    replicaof(slow2, primary)           # attaches to the same BGSAVE
    wait_slow(primary, [slow1, slow2])

    used0 = info_int(primary, "used_memory", "memory")
    off0 = repl_int(primary, "master_repl_offset")
    data = 1024 * 1024
    populate(primary, 1024, 1024, "big:")
    written = repl_int(primary, "master_repl_offset") - off0
    assert written > data
    wait_sync(fast, primary)
    wait_slow(primary, [slow1, slow2])

    mem = mem_buffers(primary)
    # one copy of the stream for both slow replicas, the fast one and the backlog
    assert written <= mem < 1.5 * written + 64 * 1024, \
        "mem_total_replication_buffers %d for %d bytes of stream held by two slow replicas" % (mem, written)
    hist = repl_int(primary, "repl_backlog_histlen")
    assert hist >= written, "repl_backlog_histlen %d: the slow replicas' bytes are not history" % hist
    extra = info_int(primary, "used_memory", "memory") - used0 - data
    assert extra < 2 * mem, "used_memory grew by %d beyond the data, buffers %d" % (extra, mem)

    # slow1 gone: slow2 still needs every byte, nothing is freed
    kill_node(nodes, slow1)
    poll(lambda: info(primary)["connected_slaves"] == "2", 30, "the primary to drop slow1")
    assert mem_buffers(primary) >= mem
    assert repl_int(primary, "repl_backlog_histlen") >= hist

    # slow2 gone too and fast caught up: the buffer shrinks back
    wait_sync(fast, primary)
    kill_node(nodes, slow2)
    poll(lambda: info(primary)["connected_slaves"] == "1", 30, "the primary to drop slow2")
    poll(lambda: mem_buffers(primary) < mem - data, 30,
         lambda: "mem_total_replication_buffers to shrink below %d (is %d)" % (mem - data, mem_buffers(primary)))
    poll(lambda: repl_int(primary, "repl_backlog_histlen") <= BACKLOG + 2 * 16384 + 4096, 30,
         lambda: "the history back near repl-backlog-size (%d)" % repl_int(primary, "repl_backlog_histlen"))
    assert repl_int(primary, "repl_backlog_size") == BACKLOG
    # the fast replica was never disturbed
    assert info(fast)["master_link_status"] == "up"
    wait_sync(fast, primary)
    assert digest(fast) == digest(primary)


# ---------------------------------------------------------------- 2
def read_exactly(sock, n, timeout=30):
    sock.settimeout(timeout)
    buf = bytearray()
    while len(buf) < n:
        chunk = sock.recv(min(1 << 20, n - len(buf)))
        assert chunk, "EOF after %d of %d bytes" % (len(buf), n)
        buf += chunk
    return bytes(buf)


def read_line(sock, timeout=30):
    sock.settimeout(timeout)
    buf = b""
    while not buf.endswith(b"\r\n"):
        ch = sock.recv(1)
        assert ch, "EOF after %r" % buf
        buf += ch
    return buf


@pytest.mark.parametrize("pair", list(PAIRS))
def test_backlog_outgrows_its_size_for_a_slow_replica(nodes, pair):
    pk, rkind = PAIRS[pair]
    primary = nodes(pk, "--repl-backlog-size", BACKLOG, "--client-output-buffer-limit", "replica 0 0 0",
                    "--repl-diskless-sync", "no", name="primary")
    fast, slow = nodes(rkind, name="fast"), nodes(rkind, name="slow")
    replicaof(fast, primary)
    wait_sync(fast, primary)
    replid = info(primary)["master_replid"]
    # with the fast replica alone, 200 KB of writes leave ~16 KB of history
    populate(primary, 100, 2000, "pre:")
    wait_sync(fast, primary)
    near = BACKLOG + 2 * 16384 + 4096
    poll(lambda: repl_int(primary, "repl_backlog_histlen") <= near, 30,
         lambda: "the history trimmed to about repl-backlog-size (%d)" % repl_int(primary, "repl_backlog_histlen"))
    assert repl_int(primary, "repl_backlog_first_byte_offset") > 150000

    start_slow_save(primary)
    replicaof(slow, primary)
    wait_slow(primary, [slow])
    slow_start = repl_int(primary, "master_repl_offset")
    full0 = info_int(primary, "sync_full")
    pok0 = info_int(primary, "sync_partial_ok")

    # The fast replica follows a port nobody answers on (its cached primary
    # kept) while 2 MB are written. (Not CLIENT KILL on the primary: the
    # BGSAVE child holds a copy of the socket, the replica would see no EOF.)
    n, size = 200, 10000
    with socket.socket() as nowhere:
        nowhere.bind(("127.0.0.1", 0))
        assert fast.call("REPLICAOF", "127.0.0.1", nowhere.getsockname()[1]) == "OK"
        poll(lambda: info(primary)["connected_slaves"] == "1", 30, "the primary to lose the fast replica")
        populate(primary, n, size, "a:")
        assert fast.call("REPLICAOF", "127.0.0.1", primary.port) == "OK"
    end = repl_int(primary, "master_repl_offset")
    assert end - slow_start > n * size

    hist = repl_int(primary, "repl_backlog_histlen")
    first = repl_int(primary, "repl_backlog_first_byte_offset")
    assert hist > n * size, "repl_backlog_histlen %d did not outgrow repl-backlog-size" % hist
    assert first <= slow_start + 1, \
        "the history starts at %d, after the slow replica's start %d" % (first, slow_start)
    assert repl_int(primary, "repl_backlog_size") == BACKLOG

    # the fast replica comes back and continues from that history
    wait_sync(fast, primary)
    assert info_int(primary, "sync_partial_ok") == pok0 + 1, rk.repl_summary(primary)
    assert info_int(primary, "sync_full") == full0, ("a full resync instead", rk.repl_summary(primary))
    assert info(fast)["master_replid"] == replid
    assert digest(fast) == digest(primary)
    assert fast.call("STRLEN", "a:%d" % (n - 1)) == size
    wait_slow(primary, [slow])          # still waiting for its snapshot

    # a raw PSYNC at the first byte of the history gets all of it
    first = repl_int(primary, "repl_backlog_first_byte_offset")
    hist = repl_int(primary, "repl_backlog_histlen")
    assert first <= slow_start + 1
    s = rk.raw_sync_socket(primary, b"REPLCONF capa eof capa psync2\r\n", rcvbuf=1 << 20)
    try:
        assert read_line(s) == b"+OK\r\n"
        s.sendall(b"PSYNC %s %d\r\n" % (replid.encode(), first))
        line = read_line(s)
        assert line == b"+CONTINUE %s\r\n" % replid.encode(), line
        stream = read_exactly(s, hist)
    finally:
        s.close()
    assert info_int(primary, "sync_partial_ok") == pok0 + 2
    keys = re.findall(rb"\r\n\$\d+\r\na:(\d+)\r\n\$%d\r\n" % size, stream)
    assert sorted(int(k) for k in keys) == list(range(n)), \
        "the history from %d does not hold the %d SETs (found %d)" % (first, n, len(keys))

    # the slow replica (stopped) is dropped at a lowered limit, the fast one kept
    poll(lambda: info(primary)["connected_slaves"] == "2", 30, "the raw PSYNC client to go")
    os.killpg(slow.server.proc.pid, signal.SIGSTOP)
    try:
        wait_sync(fast, primary)
        assert primary.call("CONFIG", "SET", "client-output-buffer-limit", "replica 128kb 0 0") == "OK"
        ids = rk.replica_ids(primary)
        assert len(ids) == 2
        assert primary.call("SET", "trigger", "T" * 65536) == "OK"
        poll(lambda: info(primary)["connected_slaves"] == "1", 30, "the primary to drop the slow replica")
        poll(lambda: repl_int(primary, "repl_backlog_histlen") < near + 65536, 30,
             lambda: "the history back near repl-backlog-size (%d)" % repl_int(primary, "repl_backlog_histlen"))
        poll(lambda: mem_buffers(primary) < 256 * 1024, 30,
             lambda: "mem_total_replication_buffers back near repl-backlog-size (%d)" % mem_buffers(primary))
        wait_sync(fast, primary)
        left = rk.replica_ids(primary)
        assert len(left) == 1 and left <= ids, "the fast replica was dropped too"
        assert fast.call("STRLEN", "trigger") == 65536
        assert digest(fast) == digest(primary)
    finally:
        kill_node(nodes, slow)


# ---------------------------------------------------------------- 3
@pytest.mark.parametrize("pair", list(PAIRS))
def test_replica_limit_below_backlog_size_counts_as_backlog_size(nodes, pair):
    pk, rkind = PAIRS[pair]
    primary = nodes(pk, "--repl-backlog-size", "100mb", "--client-output-buffer-limit", "replica 512kb 0 0",
                    name="primary")
    replica = nodes(rkind, name="replica")
    replicaof(replica, primary)
    wait_sync(replica, primary)
    assert info_int(primary, "sync_full") == 1
    big = "A" * (10 * 1024 * 1024)
    old = rk.replica_ids(primary)

    with primary.client(timeout=60) as c:
        replies = c.pipeline([["MULTI"], ["CLIENT", "KILL", "TYPE", "replica"], ["SET", "key", big],
                              ["SET", "key", big], ["DEBUG", "SLEEP", 1], ["EXEC"]])
        assert replies[-1] == b"*4\r\n:1\r\n+OK\r\n+OK\r\n+OK\r\n", replies[-1]
        assert c.command("SET", "key", big) == b"+OK\r\n"
    rk.wait_reconnected(primary, replica, old)
    wait_sync(replica, primary)
    assert info_int(primary, "sync_full") == 1, rk.repl_summary(primary)
    assert info_int(primary, "sync_partial_ok") == 1, rk.repl_summary(primary)

    ids = rk.replica_ids(primary)
    assert len(ids) == 1
    for _ in range(2):
        with primary.client(timeout=60) as c:
            replies = c.pipeline([["MULTI"], ["SET", "key", big], ["SET", "key2", big], ["EXEC"]])
            assert replies[-1] == b"*2\r\n+OK\r\n+OK\r\n", replies[-1]
        wait_sync(replica, primary)
        assert rk.replica_ids(primary) == ids, "the replica was dropped below repl-backlog-size"
        assert info_int(primary, "sync_full") == 1 and info_int(primary, "sync_partial_ok") == 1, \
            rk.repl_summary(primary)
    assert replica.call("STRLEN", "key2") == len(big)

    # control: with the backlog smaller than what is pending, 512kb -> 1mb drops it
    assert primary.call("CONFIG", "SET", "repl-backlog-size", "1mb") == "OK"
    assert repl_int(primary, "repl_backlog_size") == 1024 * 1024, "CONFIG SET repl-backlog-size not in effect"
    with primary.client(timeout=60) as c:
        replies = c.pipeline([["MULTI"], ["SET", "key", big], ["SET", "key3", big], ["EXEC"]])
        assert replies[-1] == b"*2\r\n+OK\r\n+OK\r\n", replies[-1]
    rk.wait_reconnected(primary, replica, ids)
    wait_sync(replica, primary)
    assert info_int(primary, "sync_full") == 2, ("the replica was not dropped", rk.repl_summary(primary))
    assert replica.call("STRLEN", "key3") == len(big)
    assert digest(replica) == digest(primary)


# ---------------------------------------------------------------- 4
class Sub:
    """A subscribed connection on a node (RESP2)."""

    def __init__(self, node, cmd, *channels):
        self.node = node
        self.c = node.client(timeout=5)
        self.c.send_command(cmd, *channels)
        for i, ch in enumerate(channels):
            got = rk.decode(self.c.read_reply())
            assert got == [cmd.lower(), ch, i + 1], got

    def next(self):
        try:
            return rk.decode(self.c.read_reply())
        except TimeoutError:
            raise AssertionError("%r: no pub/sub message within %.0f s" % (self.node, self.c.timeout)) from None

    def close(self):
        self.c.close()


def start_chain(nodes, kinds, *extra):
    ns = [nodes(k, *extra, name="primary" if i == 0 else "replica%d" % i) for i, k in enumerate(kinds)]
    for i in range(1, len(ns)):
        replicaof(ns[i], ns[i - 1])
    for i in range(1, len(ns)):
        wait_sync(ns[i], ns[i - 1])
    return ns


@pytest.mark.parametrize("topo", list(TOPOLOGIES))
def test_publish_reaches_replica_subscribers(nodes, topo):
    ns = start_chain(nodes, TOPOLOGIES[topo])
    primary, replicas = ns[0], ns[1:]
    psub = Sub(primary, "SUBSCRIBE", "ch")
    subs = [(r, Sub(r, "SUBSCRIBE", "ch", "ch2"), Sub(r, "PSUBSCRIBE", "c*")) for r in replicas]

    def expect(channel, msg, apply=None):
        """Every replica's subscribers get msg; `apply` is checked on the
        replica as soon as the message arrived there."""
        for r, s, p in subs:
            assert s.next() == ["message", channel, msg], (r, channel, msg)
            if apply:
                assert r.call("GET", apply[0]) == apply[1], \
                    "%r: %s arrived before the SET before it was applied" % (r, msg)
            assert p.next() == ["pmessage", "c*", channel, msg], (r, channel, msg)

    # the reply counts the primary's own receivers only
    assert primary.call("PUBLISH", "ch", "m1") == 1
    assert psub.next() == ["message", "ch", "m1"]
    expect("ch", "m1")
    assert primary.call("PUBLISH", "ch2", "m2") == 0
    expect("ch2", "m2")

    # a SET then a PUBLISH: the SET is on the replica when the message is
    assert primary.call("SET", "k", "v1") == "OK"
    assert primary.call("PUBLISH", "ch2", "after-v1") == 0
    expect("ch2", "after-v1", apply=("k", "v1"))
    # in MULTI/EXEC
    with primary.client() as c:
        replies = c.pipeline([["MULTI"], ["SET", "k", "v2"], ["PUBLISH", "ch", "in-multi"], ["EXEC"]])
        assert replies[-1] == b"*2\r\n+OK\r\n:1\r\n", replies[-1]
    assert psub.next() == ["message", "ch", "in-multi"]
    expect("ch", "in-multi", apply=("k", "v2"))
    # from a script
    assert primary.call("EVAL", "redis.call('SET', KEYS[1], ARGV[1]) "
                                "return redis.call('PUBLISH', 'ch2', ARGV[1])", 1, "k", "v3") == 0
    expect("ch2", "v3", apply=("k", "v3"))

    # a PUBLISH on a replica stays on that replica
    first = replicas[0]
    assert first.call("PUBLISH", "ch", "local") == 2
    _, s, p = subs[0]
    assert s.next() == ["message", "ch", "local"]
    assert p.next() == ["pmessage", "c*", "ch", "local"]
    assert primary.call("PUBLISH", "ch", "marker") == 1
    assert psub.next() == ["message", "ch", "marker"], "the replica's PUBLISH reached its primary"
    expect("ch", "marker")          # a sub-replica gets the marker first: not the replica's PUBLISH
    for r in ns[1:]:
        wait_sync(r, ns[ns.index(r) - 1])
    assert repl_int(first, "master_repl_offset") == repl_int(primary, "master_repl_offset")
    for r in replicas:
        assert r.call("GET", "k") == "v3"
    psub.close()
    for _, s, p in subs:
        s.close()
        p.close()


# ---------------------------------------------------------------- 5
@pytest.mark.parametrize("topo", list(TOPOLOGIES))
def test_spublish_reaches_replica_subscribers(nodes, topo):
    ns = start_chain(nodes, TOPOLOGIES[topo])
    primary, replicas = ns[0], ns[1:]
    subs = [Sub(r, "SSUBSCRIBE", "sch") for r in replicas]
    assert primary.call("SPUBLISH", "sch", "s1") == 0
    with primary.client() as c:
        replies = c.pipeline([["MULTI"], ["SET", "k", "v"], ["SPUBLISH", "sch", "s2"], ["EXEC"]])
        assert replies[-1] == b"*2\r\n+OK\r\n:0\r\n", replies[-1]
    for r, s in zip(replicas, subs):
        assert s.next() == ["smessage", "sch", "s1"], r
        assert s.next() == ["smessage", "sch", "s2"], r
        assert r.call("GET", "k") == "v"
        s.close()


# ---------------------------------------------------------------- 6
def aof_files(node):
    d = node.call("CONFIG", "GET", "dir")[1]
    sub = node.call("CONFIG", "GET", "appenddirname")[1]
    files = sorted(glob.glob(os.path.join(d, sub, "*")))
    assert files, "no AOF file under %s/%s" % (d, sub)
    out = {}
    for f in files:
        with open(f, "rb") as fh:
            out[os.path.basename(f)] = fh.read()
    return out


@pytest.mark.parametrize("pair", list(PAIRS))
def test_publish_not_in_the_aof(nodes, pair):
    primary, replica = start_chain(nodes, PAIRS[pair], "--appendonly", "yes", "--appendfsync", "always")
    sub = Sub(replica, "SUBSCRIBE", "news")
    assert primary.call("SET", "plain", "p") == "OK"
    assert primary.call("PUBLISH", "news", "alone") == 0
    with primary.client() as c:
        replies = c.pipeline([["MULTI"], ["SET", "aofkey", "aofval"], ["PUBLISH", "news", "with-set"],
                              ["INCR", "n"], ["EXEC"]])
        assert replies[-1] == b"*3\r\n+OK\r\n:0\r\n:1\r\n", replies[-1]
    assert primary.call("PUBLISH", "news", "last") == 0
    assert sub.next() == ["message", "news", "alone"]
    assert sub.next() == ["message", "news", "with-set"]
    assert replica.call("GET", "aofkey") == "aofval"
    assert sub.next() == ["message", "news", "last"]
    sub.close()
    wait_sync(replica, primary)

    for node in (primary, replica):
        poll(lambda: info(node, "persistence").get("aof_rewrite_in_progress") == "0"
             and info(node, "persistence").get("aof_rewrite_scheduled") == "0", 30, "%r: no AOF rewrite" % node)
        files = aof_files(node)
        blob = b"".join(files.values())
        assert not re.search(rb"publish", blob, re.I), \
            "%r: PUBLISH in the AOF: %r" % (node, {k: v[-400:] for k, v in files.items()})
        assert b"aofkey" in blob and b"aofval" in blob, "%r: the SET of the transaction is not in the AOF" % node
        assert b"plain" in blob
        assert node.call("DEBUG", "LOADAOF") == "OK"
        assert node.call("GET", "aofkey") == "aofval"
        assert node.call("GET", "plain") == "p"
        assert node.call("GET", "n") == "1"
        assert node.call("DBSIZE") == 3
