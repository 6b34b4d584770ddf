"""Replication: ferry and redis-server as primaries and replicas of each other.

Topologies (primary -> replica): redis->ferry, ferry->redis, ferry->ferry and
the chain ferry->ferry->ferry. With REPL_ORACLE=1 every ferry node is a
redis-server 7.0.15, which proves the harness itself (see replkit.py).

  1/2. full sync carrying preloaded data while random programs (every type,
       INCR, EXPIRE, DEL, MULTI/EXEC, scripts, SELECT 0..3) are written during
       and after the sync, diskless and disk-based; WAIT, then equal DEBUG
       DIGEST, DBSIZE per db and close TTLs on every node (on a mismatch the
       message lists the differing keys, found by DEBUG DIGEST-VALUE)
  1b.  the stream's selected database carried across a full sync, also to a
       sub-replica (repl-stream-db), in every chain of ferry and redis
  3.   replica-read-only (-READONLY), reads on the replica, ROLE on both sides
  4.   partial resync after the link is killed (either side) under write load
  5.   a 16kb backlog overrun while the link is down: a full resync instead
  6.   REPLICAOF NO ONE: every write WAIT confirmed is on the promoted node,
       which then takes writes
  7.   WAIT's count and timeout
  8.   expiry: the primary's expiry reaches the replica as a DEL; a replica
       hides a logically expired key it still holds
  9.   a replica that never reads is dropped at the replica
       client-output-buffer-limit while other clients are served
  10.  a primary with appendonly yes killed -9 and restarted: its AOF holds
       every acknowledged write, and its replica converges on it again
"""
from __future__ import annotations

import random
import threading
import time

import pytest

import replkit as rk
from replkit import digest, info, info_int, poll, replicaof, wait_acks, wait_link_up, wait_sync

PAIRS = {
    "redis->ferry": ("redis", "ferry"),
    "ferry->redis": ("ferry", "redis"),
    "ferry->ferry": ("ferry", "ferry"),
}
TOPOLOGIES = dict(PAIRS, **{"ferry->ferry->ferry": ("ferry", "ferry", "ferry")})


nodes = rk.nodes


def start_topology(nodes, kinds, *extra, primary_extra=()):
    out = []
    for i, kind in enumerate(kinds):
        args = tuple(extra) + (tuple(primary_extra) if i == 0 else ())
        out.append(nodes(kind, *args, name="primary" if i == 0 else "replica%d" % i))
    return out


def link_chain(ns):
    for i in range(1, len(ns)):
        replicaof(ns[i], ns[i - 1])


def sync_chain(ns):
    for i in range(1, len(ns)):
        wait_sync(ns[i], ns[i - 1])


def seed_of(*parts) -> int:
    return random.Random("/".join(map(str, parts))).randrange(1 << 30)


# ---------------------------------------------------------------- 1 and 2
@pytest.mark.parametrize("diskless", ["yes", "no"])
@pytest.mark.parametrize("topo", list(TOPOLOGIES))
def test_full_sync_under_writes(nodes, topo, diskless):
    ns = start_topology(nodes, TOPOLOGIES[topo], "--repl-diskless-sync", diskless)
    primary = ns[0]
    seed = seed_of("full", topo, diskless)
    rk.bulk_load(primary, 4000)
    rk.run_ops(primary, rk.gen_ops(random.Random(seed), 1500))
    full_before = info_int(primary, "sync_full")

    w = rk.Writer(primary, seed, threads=3).start()
    try:
        w.wait_ops(300)              # writes in flight when the sync starts
        link_chain(ns)
        for r in ns[1:]:
            wait_link_up(r)
        w.wait_ops(1500)             # and after it
    finally:
        w.stop()
    assert w.ops_done > 1800

    assert wait_acks(primary, 1) == 1
    sync_chain(ns)
    checked = rk.assert_converged(primary, ns[1:])
    assert checked > 0, "no key with a TTL was compared"
    for r in ns[1:]:
        assert info(r)["role"] == "slave"
    assert info_int(primary, "sync_full") == full_before + 1, rk.repl_summary(primary)


# A full sync starting while the primary's stream has a database other than
# 0 selected: the stream goes on without a new SELECT, so the replica must
# take the stream's database from the sync (Redis: the primary re-emits
# SELECT after a full sync; a replica serving a sub-replica records it as the
# RDB's repl-stream-db aux field, which the sub-replica loads).
CHAINS = dict(TOPOLOGIES, **{"redis->ferry->ferry": ("redis", "ferry", "ferry"),
                             "ferry->redis->ferry": ("ferry", "redis", "ferry"),
                             "ferry->ferry->redis": ("ferry", "ferry", "redis")})


STREAM_DB_CASES = [(t, "select-first") for t in CHAINS] + \
    [(t, "sync-first") for t in CHAINS if len(CHAINS[t]) == 3]


@pytest.mark.parametrize("topo,order", STREAM_DB_CASES)
def test_stream_db_survives_full_sync(nodes, topo, order):
    """select-first: SELECT 3 is in the stream before any replica syncs.
    sync-first: the first replica syncs on a fresh stream, then SELECT 3 and
    writes pass through it; the second replica's full sync from the first
    must carry the stream's database."""
    ns = start_topology(nodes, CHAINS[topo])
    primary = ns[0]
    n = 0
    with primary.client() as c:
        if order == "sync-first":
            replicaof(ns[1], primary)
            wait_sync(ns[1], primary)
        assert c.command("SELECT", 3) == b"+OK\r\n"
        assert c.command("INCR", "x") == b":1\r\n"
        for i in range(1, len(ns)):
            if order == "select-first" or i > 1:
                sync_chain(ns[:i])
                replicaof(ns[i], ns[i - 1])
                wait_sync(ns[i], ns[i - 1])
            assert c.command("INCR", "x") == b":%d\r\n" % (i + 1)
            assert c.command("HSET", "h%d" % i, "f", i) == b":1\r\n"
            n += 1
        assert wait_acks(primary, 1) == 1
    sync_chain(ns)
    want = rk.dbsizes(primary)
    assert want == [0, 0, 0, 1 + n]
    for r in ns[1:]:
        got = rk.dbsizes(r)
        assert got == want, "%r: DBSIZE per db %s, primary %s (writes after the sync landed in another db)" % (r, got, want)
        assert rk.digest(r) == rk.digest(primary), r


# ---------------------------------------------------------------- 3
@pytest.mark.parametrize("topo", list(PAIRS))
def test_read_only_replica_and_role(nodes, topo):
    primary, replica = start_topology(nodes, PAIRS[topo])
    primary.call("SET", "k", "v1")
    primary.call("RPUSH", "l", "a", "b")
    replicaof(replica, primary)
    wait_sync(replica, primary)
    assert wait_acks(primary, 1) == 1

    ro = b"-READONLY You can't write against a read only replica.\r\n"
    for cmd in (("SET", "k", "x"), ("INCR", "n"), ("DEL", "k"), ("LPUSH", "l", "z"),
                ("EVAL", "return redis.call('SET', KEYS[1], 'x')", 1, "k")):
        got = replica.raw(*cmd)
        if cmd[0] == "EVAL":   # the script runs, its write is refused
            assert got.startswith(b"-READONLY You can't write against a read only replica."), (cmd, got)
        else:
            assert got == ro, (cmd, got)
    assert replica.call("GET", "k") == "v1"
    assert replica.call("LRANGE", "l", 0, -1) == ["a", "b"]
    assert replica.call("EVAL_RO", "return redis.call('GET', KEYS[1])", 1, "k") == "v1"
    assert replica.call("DBSIZE") == 2

    # primary: ["master", offset, [[ip, port, offset]]] (ip, port, offset as strings)
    primary.call("SET", "k2", "v2")
    assert wait_acks(primary, 1) == 1
    wait_sync(replica, primary)
    role = primary.call("ROLE")
    assert len(role) == 3 and role[0] == "master", role
    assert isinstance(role[1], int) and role[1] > 0, role
    assert len(role[2]) == 1, role
    ip, port, off = role[2][0]
    assert ip == "127.0.0.1" and port == str(replica.port), role
    assert off.isdigit() and 0 < int(off) <= role[1], role
    poll(lambda: int(primary.call("ROLE")[2][0][2]) == primary.call("ROLE")[1], 30,
         "the replica's acked offset in ROLE to reach the primary's")
    raw = primary.raw("ROLE")
    assert raw.startswith(b"*3\r\n$6\r\nmaster\r\n:"), raw

    # replica: ["slave", host, port, state, offset]
    role = replica.call("ROLE")
    assert role[:4] == ["slave", "127.0.0.1", primary.port, "connected"], role
    assert isinstance(role[4], int) and role[4] > 0, role
    raw = replica.raw("ROLE")
    assert raw.startswith(b"*5\r\n$5\r\nslave\r\n$9\r\n127.0.0.1\r\n:%d\r\n$9\r\nconnected\r\n:" % primary.port), raw

    irep = info(replica)
    assert irep["role"] == "slave" and irep["master_host"] == "127.0.0.1"
    assert irep["master_port"] == str(primary.port) and irep["master_link_status"] == "up"
    iprim = info(primary)
    assert iprim["role"] == "master" and iprim["connected_slaves"] == "1"
    assert iprim["slave0"].startswith("ip=127.0.0.1,port=%d,state=online," % replica.port), iprim["slave0"]


# ---------------------------------------------------------------- 4
@pytest.mark.parametrize("kill", ["master-on-replica", "replica-on-primary"])
@pytest.mark.parametrize("topo", list(PAIRS))
def test_partial_resync_after_link_killed(nodes, topo, kill):
    primary, replica = start_topology(nodes, PAIRS[topo], primary_extra=("--repl-backlog-size", "64mb"))
    seed = seed_of("psync", topo, kill)
    rk.bulk_load(primary, 1000)
    replicaof(replica, primary)
    wait_sync(replica, primary)
    full0 = info_int(primary, "sync_full")
    part0 = info_int(primary, "sync_partial_ok")
    replid = info(primary)["master_replid"]

    old = rk.replica_ids(primary)
    assert len(old) == 1

    w = rk.Writer(primary, seed, threads=2, pause=0.002).start()
    try:
        w.wait_ops(300)
        if kill == "master-on-replica":
            assert replica.call("CLIENT", "KILL", "TYPE", "master") == 1
        else:
            assert primary.call("CLIENT", "KILL", "TYPE", "replica") == 1
        rk.wait_reconnected(primary, replica, old)
        w.wait_ops(600)
    finally:
        w.stop()

    assert wait_acks(primary, 1) == 1
    wait_sync(replica, primary)
    rk.assert_converged(primary, [replica])
    assert info(replica)["master_replid"] == replid
    stats = rk.repl_summary(primary)
    assert int(stats["sync_full"]) == full0, ("a full resync happened instead", stats)
    assert int(stats["sync_partial_ok"]) == part0 + 1, stats


@pytest.mark.parametrize("topo", ["ferry->ferry", "redis->ferry", "ferry->redis"])
def test_link_killed_inside_a_sleeping_transaction_is_down_from_the_kill(nodes, topo):
    """CLIENT KILL of the primary's link inside a MULTI that then sleeps: the
    link is down from the kill, not from when the transaction ended (a
    cluster replica judges its data's age by it: Redis's cluster unit
    06-slave-stop-cond). The primary is paused so the replica cannot
    reconnect before INFO is read."""
    primary, replica = start_topology(nodes, PAIRS[topo])
    replicaof(replica, primary)
    wait_sync(replica, primary)
    assert primary.call("CLIENT", "PAUSE", 5000) == "OK"  # ALL: CLIENT UNPAUSE would wait too
    assert replica.call("MULTI") == "OK"
    assert replica.call("CLIENT", "KILL", "TYPE", "master") == "QUEUED"
    assert replica.call("DEBUG", "SLEEP", 2) == "QUEUED"
    assert replica.call("EXEC") == [1, "OK"]
    r = info(replica)
    assert r["master_link_status"] == "down"
    assert int(r["master_link_down_since_seconds"]) >= 2, r
    wait_link_up(replica)


# ---------------------------------------------------------------- 5
@pytest.mark.parametrize("topo", list(PAIRS))
def test_backlog_overrun_forces_full_resync(nodes, topo):
    primary, replica = start_topology(nodes, PAIRS[topo], primary_extra=("--repl-backlog-size", "16kb"))
    assert primary.call("CONFIG", "GET", "repl-backlog-size") == ["repl-backlog-size", "16384"]
    rk.bulk_load(primary, 400)
    replicaof(replica, primary)
    wait_sync(replica, primary)
    full0 = info_int(primary, "sync_full")
    perr0 = info_int(primary, "sync_partial_err")
    pok0 = info_int(primary, "sync_partial_ok")
    old = rk.replica_ids(primary)
    assert len(old) == 1

    # Drop the link and write ~300 KB in the same transaction: the replica
    # cannot be back before the backlog has been overrun.
    big = "B" * 1000
    with primary.client(timeout=30) as c:
        cmds = [["MULTI"], ["CLIENT", "KILL", "TYPE", "replica"]]
        cmds += [["SET", "over:%d" % i, big] for i in range(300)]
        cmds += [["EXEC"]]
        replies = c.pipeline(cmds)
        assert replies[-1].startswith(b"*301\r\n:1\r\n+OK\r\n"), replies[-1][:60]
    # and more writes while it reconnects
    rk.run_ops(primary, rk.gen_ops(random.Random(seed_of("overrun", topo)), 800))

    rk.wait_reconnected(primary, replica, old)
    assert wait_acks(primary, 1) == 1
    wait_sync(replica, primary)
    rk.assert_converged(primary, [replica])
    assert replica.call("GET", "over:299") == big
    stats = rk.repl_summary(primary)
    assert int(stats["sync_full"]) == full0 + 1, ("no full resync counted", stats)
    assert int(stats["sync_partial_ok"]) == pok0, stats
    assert int(stats["sync_partial_err"]) == perr0 + 1, ("the replica's PSYNC was not counted as refused", stats)


# ---------------------------------------------------------------- 6
@pytest.mark.parametrize("topo", ["redis->ferry", "ferry->ferry"])
def test_promotion_keeps_every_acknowledged_write(nodes, topo):
    primary, replica = start_topology(nodes, PAIRS[topo])
    rk.bulk_load(primary, 2000)
    replicaof(replica, primary)
    wait_sync(replica, primary)

    confirmed = []      # key indexes WAIT confirmed before promotion
    errors = []
    stop = threading.Event()

    def migrate_writer():
        i = 0
        try:
            with primary.client(timeout=30) as c:
                while not stop.is_set():
                    batch = [["SET", "mig:%d" % j, j] for j in range(i, i + 50)]
                    rk.check_replies(batch, c.pipeline(batch))
                    acked = rk.decode(c.command("WAIT", 1, 2000))
                    if acked >= 1:
                        confirmed.append(i + 49)
                    i += 50
        except Exception as e:  # noqa: BLE001
            errors.append(repr(e))

    t = threading.Thread(target=migrate_writer, daemon=True)
    t.start()
    try:
        poll(lambda: len(confirmed) >= 20 or errors, 30, "20 acknowledged batches")
        replicaof(replica, None)             # promote while writes go on
        promoted_at = len(confirmed)
        # the old primary notices the replica is gone; WAIT stops confirming
        poll(lambda: info(primary).get("connected_slaves") == "0" or errors, 30,
             "the old primary to lose its replica")
    finally:
        stop.set()
        t.join(30)
    assert not t.is_alive() and not errors, errors
    assert promoted_at >= 20

    last = max(confirmed)
    keys = ["mig:%d" % j for j in range(last + 1)]
    vals = []
    for i in range(0, len(keys), 500):
        vals += replica.call("MGET", *keys[i:i + 500])
    missing = [k for k, v in zip(keys, vals) if v != k.split(":")[1]]
    assert not missing, "%d acknowledged writes missing on the promoted node, e.g. %s" % (len(missing), missing[:5])

    assert replica.call("ROLE")[0] == "master"
    assert info(replica)["role"] == "master"
    assert replica.call("SET", "after", "promotion") == "OK"
    assert replica.call("INCR", "mig:0") == 1
    assert replica.call("GET", "bulk0:1") == "b" * 64
    assert sum(rk.dbsizes(replica)) >= 2000 + last + 1
    # the old primary is untouched by writes on the promoted node
    assert primary.call("EXISTS", "after") == 0


# ---------------------------------------------------------------- 7
def test_wait_without_replicas_times_out(nodes):
    primary = nodes("ferry")
    primary.call("SET", "k", "v")
    assert primary.call("WAIT", 0, 0) == 0
    t0 = time.monotonic()
    assert primary.call("WAIT", 1, 300) == 0
    elapsed = time.monotonic() - t0
    assert 0.25 <= elapsed < 10, elapsed


@pytest.mark.parametrize("topo", list(PAIRS))
def test_wait_counts_acknowledging_replicas(nodes, topo):
    primary, replica = start_topology(nodes, PAIRS[topo])
    replicaof(replica, primary)
    wait_sync(replica, primary)
    with primary.client(timeout=30) as c:
        for i in range(20):
            c.pipeline([["SET", "w:%d" % j, j] for j in range(i * 10, i * 10 + 10)])
            t0 = time.monotonic()
            assert rk.decode(c.command("WAIT", 1, 20000)) == 1
            assert time.monotonic() - t0 < 5, "WAIT 1 took %.2fs" % (time.monotonic() - t0)
        # more replicas asked for than exist: the count after the timeout
        c.command("SET", "w:last", "x")
        t0 = time.monotonic()
        assert rk.decode(c.command("WAIT", 2, 400)) == 1
        assert time.monotonic() - t0 >= 0.35
    assert replica.call("GET", "w:199") == "199"
    got = replica.raw("WAIT", 0, 0)
    assert got.startswith(b"-ERR WAIT cannot be used with replica instances."), got


# ---------------------------------------------------------------- 8
@pytest.mark.parametrize("topo", list(PAIRS))
def test_expiry_reaches_replica(nodes, topo):
    primary, replica = start_topology(nodes, PAIRS[topo])
    replicaof(replica, primary)
    wait_sync(replica, primary)
    primary.call("SET", "keep", "1")

    # active expiry on the primary -> DEL on the replica. (No WAIT before the
    # checks: redis-server 7.0's WAIT may take up to a second, the next
    # periodic REPLCONF ACK.)
    primary.call("SET", "soon", "x", "PX", 1500)
    poll(lambda: replica.call("DBSIZE") == 2, 30, "the replica to receive the volatile key")
    exp0 = info_int(primary, "expired_keys")
    poll(lambda: primary.call("DBSIZE") == 1, 30, "active expiry on the primary")
    assert info_int(primary, "expired_keys") == exp0 + 1
    poll(lambda: replica.call("DBSIZE") == 1, 30, "the primary's DEL of an expired key on the replica")

    # no active expiry on the primary: the replica keeps the key but hides it
    assert primary.call("DEBUG", "SET-ACTIVE-EXPIRE", 0) == "OK"
    t0 = time.monotonic()
    primary.call("SET", "hidden", "x", "PX", 1500)
    poll(lambda: replica.call("DBSIZE") == 2, 30, "the replica to receive the second volatile key")
    got = replica.call("GET", "hidden")
    if time.monotonic() - t0 < 1.2:
        assert got == "x"
    poll(lambda: replica.call("GET", "hidden") is None, 30, "the replica to hide a logically expired key")
    assert replica.call("EXISTS", "hidden") == 0
    assert replica.call("PTTL", "hidden") == -2
    assert replica.call("DBSIZE") == 2, "the replica must not delete the key itself"
    assert primary.call("DBSIZE") == 2
    # a read on the primary expires it there and propagates the DEL
    assert primary.call("GET", "hidden") is None
    assert primary.call("DBSIZE") == 1
    poll(lambda: replica.call("DBSIZE") == 1, 30, "the DEL of the lazily expired key on the replica")
    assert replica.call("GET", "keep") == "1"
    wait_sync(replica, primary)
    assert digest(replica) == digest(primary)


# ---------------------------------------------------------------- 9
@pytest.mark.parametrize("kind", ["ferry", "redis"])
def test_non_reading_replica_is_dropped(nodes, kind):
    primary = nodes(kind, "--client-output-buffer-limit", "replica 1mb 512kb 10")
    primary.call("SET", "seed", "1")
    sock = rk.raw_sync_socket(primary)
    try:
        poll(lambda: len(rk.replica_clients(primary)) == 1, 30, "the raw SYNC client to become a replica")
        val = "V" * 10000
        written = 0
        with primary.client(timeout=30) as c:
            deadline = time.monotonic() + 60
            while rk.replica_clients(primary):
                assert written < 64 << 20, "replica not dropped after %d bytes of writes" % written
                assert time.monotonic() < deadline, "replica not dropped in time"
                batch = [["SET", "big:%d" % (written // 10000 + i), val] for i in range(20)]
                rk.check_replies(batch, c.pipeline(batch))
                written += 20 * 10000
            assert c.command("PING") == b"+PONG\r\n"
        assert written > 512 * 1024, "dropped after only %d bytes" % written
        if primary.real_kind == "redis":
            assert rk.log_matches(primary, r"scheduled to be closed ASAP for overcoming of output buffer limits")
        assert info(primary)["connected_slaves"] == "0"
        # the socket is closed from the server side: draining it reaches EOF
        sock.settimeout(30)
        total = 0
        deadline = time.monotonic() + 30
        while True:
            assert time.monotonic() < deadline, "no EOF on the dropped replica's socket"
            try:
                chunk = sock.recv(1 << 16)
            except ConnectionResetError:
                break
            if not chunk:
                break
            total += len(chunk)
        # another client is served normally
        assert primary.call("GET", "seed") == "1"
        assert primary.call("SET", "after", "x") == "OK"
        assert primary.call("DBSIZE") >= 3
    finally:
        sock.close()


# 10. A primary with `appendonly yes` killed with -9 and restarted: it loads
# its AOF (every acknowledged write under appendfsync always), gets a new
# replication id, and its replica converges on it again (a full resync),
# then follows the new writes.
def _restart_same_port(node):
    import signal
    import subprocess
    srv = node.server
    node.close()
    srv._signal_group(signal.SIGKILL)
    srv.proc.wait(timeout=10)
    srv._log = open(srv.logpath, "ab")
    srv.proc = subprocess.Popen(srv.argv(srv.port), cwd=srv.workdir, stdin=subprocess.DEVNULL, stdout=srv._log,
                                stderr=subprocess.STDOUT, start_new_session=True)
    srv._wait_ready()


@pytest.mark.parametrize("topo", ["ferry->ferry", "ferry->redis"])
def test_primary_restarted_with_aof_keeps_replica_consistent(nodes, topo):
    primary, replica = start_topology(nodes, PAIRS[topo], primary_extra=("--appendonly", "yes", "--appendfsync",
                                                                         "always"))
    seed = seed_of("aof-restart", topo)
    rk.bulk_load(primary, 2000)
    replicaof(replica, primary)
    wait_sync(replica, primary)
    rk.run_ops(primary, rk.gen_ops(random.Random(seed), 800))
    assert wait_acks(primary, 1) == 1
    before = digest(primary)
    old_id = info(primary)["master_replid"]

    _restart_same_port(primary)
    assert digest(primary) == before, "the AOF did not bring back every acknowledged write"
    assert info(primary)["master_replid"] != old_id
    wait_sync(replica, primary)
    rk.assert_converged(primary, [replica], ttl_keys=0)

    rk.run_ops(primary, rk.gen_ops(random.Random(seed + 1), 400))
    assert wait_acks(primary, 1) == 1
    wait_sync(replica, primary)
    rk.assert_converged(primary, [replica], ttl_keys=0)
