"""FLUSHALL and snapshots, as Redis 7.0 (flushAllDataAndResetRDB), on ferry
and on redis-server 7.0.15 with the same expectations:

  1. with `save` points set, FLUSHALL saves the empty dataset at once
     (dump.rdb reloads empty; rdb_changes_since_last_save is 0 and rdb_saves
     does not count it, as redis-server 7.0.15 shows) and is still
     propagated to replicas although that save reset the change counter;
  2. a background save in progress is stopped (its snapshot is of data that
     is gone), without counting as a failed save;
  3. a replica whose disk snapshot nobody else waits for, when no `save`
     point is set, has that save stopped when it goes away ("useless" RDB
     child, as Redis's replication.c judges).
"""
from __future__ import annotations

import os
import time

import pytest

import replkit as rk
from polling import poll

nodes = rk.nodes


def persistence(node, field):
    return rk.info_int(node, field, "persistence")


@pytest.mark.parametrize("kind", ["ferry", "redis"])
def test_flushall_saves_and_still_replicates(nodes, kind):
    p = nodes(kind, "--save", "900 1")
    r = nodes(kind)
    rk.replicaof(r, p)
    rk.wait_sync(r, p)
    for i in range(100):
        assert p.call("SET", "k%d" % i, "v") == "OK"
    saves, last = persistence(p, "rdb_saves"), persistence(p, "rdb_last_save_time")
    time.sleep(1.1)
    assert p.call("FLUSHALL") == "OK"
    assert persistence(p, "rdb_last_save_time") > last, "FLUSHALL saved the empty dataset"
    assert persistence(p, "rdb_saves") == saves
    assert persistence(p, "rdb_changes_since_last_save") == 0
    rk.wait_sync(r, p)
    assert r.call("DBSIZE") == 0, "the FLUSHALL reached the replica"
    assert p.call("DEBUG", "RELOAD", "NOSAVE") == "OK"  # dump.rdb as FLUSHALL left it
    assert p.call("DBSIZE") == 0


@pytest.mark.parametrize("kind", ["ferry", "redis"])
def test_flushall_stops_a_running_save_without_an_error(nodes, kind):
    p = nodes(kind)
    assert p.call("DEBUG", "POPULATE", 1000, "key", 10) == "OK"
    assert p.call("CONFIG", "SET", "rdb-key-save-delay", "10000") == "OK"  # 10 s of saving
    assert p.call("BGSAVE") == "Background saving started"
    assert persistence(p, "rdb_bgsave_in_progress") == 1
    t0 = time.monotonic()
    assert p.call("FLUSHALL") == "OK"
    poll(lambda: persistence(p, "rdb_bgsave_in_progress") == 0, 5, "the save to be stopped")
    assert time.monotonic() - t0 < 5
    assert rk.info(p, "persistence")["rdb_last_bgsave_status"] == "ok"


@pytest.mark.parametrize("kind", ["ferry", "redis"])
def test_a_save_no_replica_needs_is_stopped(nodes, kind):
    p = nodes(kind, "--save", "", "--repl-diskless-sync", "no")
    assert p.call("DEBUG", "POPULATE", 1000, "key", 10) == "OK"
    assert p.call("CONFIG", "SET", "rdb-key-save-delay", "10000") == "OK"
    r1, r2 = nodes(kind), nodes(kind)
    for r in (r1, r2):
        rk.replicaof(r, p)
    poll(lambda: persistence(p, "rdb_bgsave_in_progress") == 1 and
         sum(1 for k, v in rk.info(p).items() if k.startswith("slave") and "wait_bgsave" in str(v)) == 2,
         10, "both replicas waiting for the save")
    rk.replicaof(r1, None)
    time.sleep(0.3)
    assert persistence(p, "rdb_bgsave_in_progress") == 1, "the other replica still waits for it"
    rk.replicaof(r2, None)
    poll(lambda: persistence(p, "rdb_bgsave_in_progress") == 0, 5, "the useless save to be stopped")
    # with a save point, the same snapshot is kept for the next save
    assert p.call("CONFIG", "SET", "save", "900 1") == "OK"
    for r in (r1, r2):
        rk.replicaof(r, p)
    poll(lambda: persistence(p, "rdb_bgsave_in_progress") == 1, 10, "a new save")
    time.sleep(0.3)
    for r in (r1, r2):
        rk.replicaof(r, None)
    time.sleep(0.5)
    assert persistence(p, "rdb_bgsave_in_progress") == 1
    assert p.call("CONFIG", "SET", "rdb-key-save-delay", "0") == "OK"
