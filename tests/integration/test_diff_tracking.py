"""Differential tests for client-side caching (src/commands/tracking.c,
tracking_cmd.c and their hooks): CLIENT TRACKING with every option and
error, CLIENT CACHING, GETREDIR, TRACKINGINFO, the invalidation messages
(RESP3 pushes, REDIRECT to RESP2 __redis__:invalidate subscribers and to
RESP3 clients, tracking-redir-broken), BCAST prefixes, OPTIN/OPTOUT,
NOLOOP, invalidations after the command's own reply (pipelines, MULTI/EXEC,
scripts, served blocking commands), expiry, eviction, FLUSHDB/FLUSHALL,
tracking-table-max-keys, INFO and CLIENT LIST fields; then a seeded random
program over nine connections of every kind; and redis-py in RESP3 with a
push handler against ferry.

Every step runs on ferry and on redis-server 7.0.15 and everything every
connection received is compared byte for byte and in order (trackkit.py).
Active expiry is off on both servers (DEBUG SET-ACTIVE-EXPIRE 0) so that
expiry happens where the steps say.
"""
from __future__ import annotations

import os
import random
import re
import time

import pytest

from conftest import server_pair
from resp_client import RawClient, parse
from trackkit import ID, Lockstep, close, cmd, pipe, report, send, sleep, sync

SERVER_ARGS = ("--enable-debug-command", "yes")

TRK = ("CLIENT", "TRACKING")
INFO = ("CLIENT", "TRACKINGINFO")


def on(i, *opts):
    return cmd(i, *TRK, "on", *opts)


def off(i):
    return cmd(i, *TRK, "off")


def redirect_target_resp2(i):
    """Connection i: a RESP2 subscriber of __redis__:invalidate."""
    return cmd(i, "SUBSCRIBE", "__redis__:invalidate")


CASES = {
    # ------------------------------------------------------------ errors
    "option_errors": [
        cmd(0, *TRK), cmd(0, *TRK, "maybe"), cmd(0, *TRK, "on", "REDIRECT"), cmd(0, *TRK, "on", "REDIRECT", "abc"),
        cmd(0, *TRK, "on", "REDIRECT", "99999"), cmd(0, *TRK, "on", "REDIRECT", "0"),
        cmd(0, *TRK, "on", "REDIRECT", "-1"),
        cmd(0, *TRK, "on", "REDIRECT", ID(1), "REDIRECT", ID(1)),
        cmd(0, *TRK, "on", "PREFIX"), cmd(0, *TRK, "on", "foo"), cmd(0, *TRK, "off", "foo"),
        cmd(0, *TRK, "OFF", "BCAST", "PREFIX", "a", "OPTIN", "OPTOUT"),
        cmd(0, *TRK, "on", "PREFIX", "a"), cmd(0, *TRK, "on", "BCAST", "OPTIN"),
        cmd(0, *TRK, "on", "BCAST", "OPTOUT"), cmd(0, *TRK, "on", "OPTIN", "OPTOUT"),
        cmd(0, *TRK, "on", "OPTIN"), cmd(0, *TRK, "on", "OPTOUT"), cmd(0, *TRK, "on", "BCAST"),
        cmd(0, *TRK, "on", "optin", "noloop"), cmd(0, *INFO), off(0),
        cmd(0, *TRK, "on", "BCAST"), cmd(0, *TRK, "on"), cmd(0, *TRK, "on", "OPTIN", "BCAST"), off(0),
        cmd(0, "CLIENT", "GETREDIR", "x"), cmd(0, "CLIENT", "TRACKINGINFO", "x"),
        cmd(0, *TRK, "on", "REDIRECT", "1x"), cmd(0, *TRK, "on", "REDIRECT", " 1"),
    ],
    "prefix_collisions": [
        on(0, "BCAST", "PREFIX", "ab", "PREFIX", "a", "PREFIX", "c"),
        on(0, "BCAST", "PREFIX", "a", "PREFIX", "ab", "PREFIX", "c"),
        on(0, "BCAST", "PREFIX", "a", "PREFIX", "c", "PREFIX", "ab"),
        on(0, "BCAST", "PREFIX", "a", "PREFIX", "a"),
        on(0, "BCAST", "PREFIX", "", "PREFIX", "a"), on(0, "BCAST", "PREFIX", "a", "PREFIX", ""),
        cmd(0, *INFO),
        # Redis 7.0: a collision found from the second prefix on is an error *and* +OK
        on(0, "BCAST", "PREFIX", "x", "PREFIX", "ab", "PREFIX", "a"), cmd(0, *INFO), off(0),
        on(0, "BCAST", "PREFIX", "x", "PREFIX", "y", "PREFIX", "ab", "PREFIX", "abc"), cmd(0, *INFO), off(0),
        on(0, "BCAST", "PREFIX", "foo", "PREFIX", "bar"),
        on(0, "BCAST", "PREFIX", "fo"), on(0, "BCAST", "PREFIX", "barb"), on(0, "BCAST", "PREFIX", "bar"),
        on(0, "BCAST", "PREFIX", "zz", "PREFIX", "bar"), on(0, "BCAST", "PREFIX", "zz"), on(0, "BCAST"),
        cmd(0, *INFO), on(0, "BCAST", "PREFIX", "q"), cmd(0, *INFO), off(0), cmd(0, *INFO),
        on(0, "BCAST", "PREFIX", "n\x00ul", "PREFIX", "n"),
    ],
    "caching_errors_and_window": [
        cmd(0, "CLIENT", "CACHING", "yes"), cmd(0, "CLIENT", "CACHING"), cmd(0, "CLIENT", "CACHING", "yes", "no"),
        on(0), cmd(0, "CLIENT", "CACHING", "yes"), cmd(0, "CLIENT", "CACHING", "no"), off(0),
        on(0, "OPTIN"), cmd(0, "CLIENT", "CACHING", "no"), cmd(0, "CLIENT", "CACHING", "maybe"),
        cmd(0, "CLIENT", "CACHING", "YES"), cmd(0, *INFO), cmd(0, "CLIENT", "ID"), cmd(0, *INFO),
        cmd(0, "PING"), cmd(0, *INFO), cmd(0, "CLIENT", "CACHING", "yes"), cmd(0, "NOSUCH"), cmd(0, *INFO),
        cmd(0, "CLIENT", "CACHING", "yes"), cmd(0, "GET"), cmd(0, *INFO),
        cmd(0, "CLIENT", "CACHING", "yes"), cmd(0, "CLIENT", "NOSUCH"), cmd(0, *INFO),
        off(0), on(0, "OPTOUT"), cmd(0, "CLIENT", "CACHING", "yes"), cmd(0, "CLIENT", "CACHING", "no"),
        cmd(0, *INFO), off(0), cmd(0, *INFO),
    ],
    "getredir_and_info": [
        cmd(0, "CLIENT", "GETREDIR"), on(0), cmd(0, "CLIENT", "GETREDIR"), on(0, "REDIRECT", ID(1)),
        cmd(0, "CLIENT", "GETREDIR"), cmd(0, *INFO), on(0, "REDIRECT", ID(1), "NOLOOP"), cmd(0, *INFO), off(0),
        cmd(0, "CLIENT", "GETREDIR"), cmd(0, *INFO), cmd(0, "HELLO", "3"), cmd(0, *INFO), on(0, "OPTOUT"),
        cmd(0, "CLIENT", "CACHING", "no"), cmd(0, *INFO), cmd(0, "RESET"), cmd(0, *INFO),
        cmd(0, "CLIENT", "GETREDIR"),
    ],
    # ------------------------------------------------------------ default mode
    "resp3_self_invalidation_order": [
        cmd(0, "HELLO", "3"), on(0), cmd(0, "SET", "a", "1"), cmd(0, "GET", "a"),
        pipe(0, [("SET", "a", "2"), ("GET", "a"), ("PING",)]),
        cmd(0, "MGET", "a", "b", "c"), cmd(1, "MSET", "a", "1", "b", "2", "c", "3"),
        cmd(0, "GET", "a"), cmd(0, "DEL", "a"), cmd(0, "DEL", "a"), cmd(0, "GET", "a"), cmd(1, "SET", "a", "x"),
        cmd(1, "SET", "a", "y"),
    ],
    "redirect_resp2_subscriber": [
        redirect_target_resp2(3), on(0, "REDIRECT", ID(3)), cmd(0, "GET", "a"), cmd(1, "SET", "a", "2"),
        cmd(0, "GET", "a"), cmd(0, "SET", "a", "3"), cmd(0, "MGET", "a", "b"), cmd(1, "DEL", "a", "b"),
        cmd(0, "GET", "a"), cmd(1, "FLUSHALL"), cmd(0, "GET", "x"), cmd(1, "FLUSHDB"),
        cmd(3, "UNSUBSCRIBE"), cmd(0, "GET", "y"), cmd(1, "SET", "y", "1"),      # not subscribed: nothing
        cmd(3, "PSUBSCRIBE", "other*"), cmd(0, "GET", "y"), cmd(1, "SET", "y", "2"),  # any subscription will do
    ],
    "redirect_resp3_client": [
        cmd(3, "HELLO", "3"), on(0, "REDIRECT", ID(3)), cmd(0, "GET", "a"), cmd(1, "SET", "a", "1"),
        cmd(0, "HELLO", "3"), cmd(0, "GET", "a"), cmd(1, "SET", "a", "2"), cmd(0, "GET", "a"), cmd(1, "FLUSHALL"),
        cmd(0, "HELLO", "2"), cmd(0, "GET", "a"), cmd(1, "FLUSHALL"),
        cmd(3, "SUBSCRIBE", "c"), cmd(0, "GET", "a"), cmd(1, "SET", "a", "1"),
        on(0, "REDIRECT", ID(0)), cmd(0, "GET", "b"), cmd(1, "SET", "b", "1"), cmd(0, "HELLO", "3"),
        cmd(0, "GET", "b"), cmd(1, "SET", "b", "1"), cmd(0, "GET", "b"), cmd(0, "SET", "b", "2"),
    ],
    "redirect_broken": [
        cmd(0, "HELLO", "3"), cmd(2, "PING"), on(0, "REDIRECT", ID(2)), cmd(0, "GET", "a"), close(2),
        cmd(1, "SET", "a", "1"), cmd(0, *INFO), cmd(0, "GET", "a"), cmd(1, "SET", "a", "2"), cmd(1, "FLUSHALL"),
        cmd(0, "GET", "a"), cmd(0, "SET", "a", "3"), cmd(0, "HELLO", "2"), cmd(0, "GET", "a"),
        cmd(1, "SET", "a", "2"), cmd(0, *INFO), on(0), cmd(0, *INFO),
    ],
    "different_clients_same_key": [
        cmd(3, "SUBSCRIBE", "__redis__:invalidate"), on(0, "REDIRECT", ID(3)), on(1, "REDIRECT", ID(3)),
        cmd(2, "HELLO", "3"), on(2), cmd(4, "MSET", "k1", "1", "k2", "2"), cmd(0, "GET", "k1"), cmd(1, "GET", "k2"),
        cmd(2, "GET", "k1"), cmd(4, "INCR", "k1"), cmd(4, "INCR", "k2"), cmd(0, "GET", "k1"), cmd(1, "GET", "k1"),
        cmd(4, "DEL", "k1"),
    ],
    "noloop_default_mode": [
        cmd(3, "SUBSCRIBE", "__redis__:invalidate"), on(0, "REDIRECT", ID(3), "NOLOOP"),
        cmd(0, "MGET", "o1", "loop", "o2"), cmd(1, "SET", "o1", "1"), cmd(0, "SET", "loop", "1"),
        cmd(1, "SET", "o2", "1"), cmd(1, "SET", "loop", "2"), cmd(0, "HELLO", "3"), on(0, "NOLOOP"),
        cmd(0, "GET", "x"), cmd(0, "SET", "x", "1"), cmd(0, "GET", "x"), cmd(1, "SET", "x", "2"),
    ],
    "optin_optout": [
        cmd(0, "HELLO", "3"), on(0, "OPTIN"), cmd(0, "GET", "a"), cmd(1, "SET", "a", "1"),
        cmd(0, "CLIENT", "CACHING", "yes"), cmd(0, "GET", "a"), cmd(1, "SET", "a", "2"),
        pipe(0, [("CLIENT", "CACHING", "yes"), ("CLIENT", "GETNAME"), ("GET", "b"), ("GET", "c")]),
        cmd(1, "MSET", "b", "1", "c", "1"),
        pipe(0, [("CLIENT", "CACHING", "yes"), ("MULTI",), ("GET", "d"), ("GET", "e"), ("EXEC",), ("GET", "f")]),
        cmd(1, "MSET", "d", "1", "e", "1", "f", "1"),
        pipe(0, [("MULTI",), ("CLIENT", "CACHING", "yes"), ("GET", "g"), ("EXEC",)]), cmd(1, "SET", "g", "1"),
        off(0), on(0, "OPTOUT"), cmd(0, "GET", "a"), cmd(1, "SET", "a", "1"),
        cmd(0, "CLIENT", "CACHING", "no"), cmd(0, "GET", "a"), cmd(1, "SET", "a", "2"), cmd(0, "GET", "a"),
        cmd(1, "SET", "a", "3"),
    ],
    "multi_exec_order": [
        cmd(0, "HELLO", "3"), on(0), cmd(0, "MSET", "a", "1", "b", "2"), cmd(0, "GET", "a"),
        pipe(0, [("MULTI",), ("INCR", "a"), ("GET", "b"), ("EXEC",)]),
        cmd(0, "MULTI"), cmd(0, "GET", "a"), cmd(0, "SET", "a", "5"), cmd(0, "GET", "b"), cmd(0, "SET", "b", "5"),
        cmd(1, "SET", "zz", "1"), cmd(0, "EXEC"),
        cmd(0, "GET", "a"), cmd(0, "MULTI"), cmd(0, "FLUSHDB"), cmd(0, "EXEC"), cmd(0, "GET", "a"),
        cmd(0, "MULTI"), cmd(0, "SET", "a", "1"), cmd(0, "NOSUCH"), cmd(0, "EXEC"),
        cmd(0, "GET", "a"), cmd(0, "WATCH", "a"), cmd(1, "SET", "a", "9"), cmd(0, "MULTI"), cmd(0, "GET", "a"),
        cmd(0, "EXEC"),
    ],
    "scripts_track_declared_keys": [
        cmd(0, "HELLO", "3"), on(0), cmd(1, "MSET", "k1", "1", "k2", "1"),
        cmd(0, "EVAL", "redis.call('set', 'k3', 'bar')", "2", "k1", "k2"), cmd(1, "MSET", "k2", "2", "k1", "2"),
        cmd(0, "EVAL", "redis.call('get', 'k3')", "2", "k1", "k2"), cmd(1, "MSET", "k2", "2", "k1", "2"),
        cmd(0, "EVAL_RO", "redis.call('ping')", "2", "k1", "k2"), cmd(1, "MSET", "k2", "2", "k1", "2"),
        cmd(0, "EVAL_RO", "redis.call('get', 'k1')", "2", "k1", "k2"), cmd(1, "MSET", "k2", "3", "k1", "3"),
        cmd(0, "EVAL", "redis.call('set','a','x') return redis.call('get','a')", "1", "a"),
        cmd(0, "EVAL", "redis.call('set','a','y') return 1", "1", "a"), cmd(0, "SET", "a", "1"),
        cmd(0, "EVAL", "return redis.call('get','a')", "0"), cmd(0, "SET", "a", "1"),
        on(0, "NOLOOP"), cmd(0, "GET", "k1"), cmd(0, "EVAL", "return redis.call('set', KEYS[1], '2')", "1", "k1"),
        cmd(0, "GET", "k1"), cmd(1, "SET", "k1", "x"),
    ],
    "bcast_prefixes": [
        cmd(3, "SUBSCRIBE", "__redis__:invalidate"), on(0, "BCAST", "REDIRECT", ID(3)),
        cmd(1, "MSET", "a", "1", "b", "2", "c", "3"), off(0),
        on(0, "BCAST", "REDIRECT", ID(3), "PREFIX", "a:", "PREFIX", "b:"),
        pipe(1, [("MULTI",), ("INCR", "a:1"), ("INCR", "a:2"), ("INCR", "b:1"), ("INCR", "b:2"), ("INCR", "c:1"),
                 ("EXEC",)]),
        on(0, "BCAST", "REDIRECT", ID(3), "PREFIX", "c:"), cmd(1, "INCR", "c:1234"),
        cmd(1, "MSET", "a:z", "1", "a:b", "1", "a:ba", "1", "a:", "1", "a:\xff", "1", "b:1", "1"),
        cmd(2, "HELLO", "3"), on(2, "BCAST", "PREFIX", "a:"), cmd(1, "SET", "a:q", "1"),
        pipe(2, [("SET", "a:r", "1"), ("GET", "x"), ("PING",)]),
        cmd(1, "FLUSHALL"), cmd(1, "SET", "d", "1"), off(2), cmd(1, "SET", "a:q", "1"),
    ],
    "bcast_noloop_and_expiry": [
        cmd(3, "SUBSCRIBE", "__redis__:invalidate"), on(0, "BCAST", "REDIRECT", ID(3), "NOLOOP"),
        cmd(1, "SET", "other1", "1"), cmd(0, "SET", "loop", "1"), cmd(1, "SET", "other2", "1"),
        pipe(0, [("SET", "x1", "1"), ("SET", "x2", "1")]), pipe(1, [("SET", "x1", "2"), ("SET", "x3", "1")]),
        pipe(0, [("SET", "y", "1")]), cmd(1, "DEL", "y"),
        cmd(0, "SET", "mykey", "v", "PX", "1"), cmd(0, "SET", "mykeyother", "v"), sleep(0.02),
        cmd(1, "GET", "mykey"),
        pipe(0, [("MULTI",), ("SET", "t", "v", "PX", "1"), ("SET", "t2", "v"), ("DEBUG", "SLEEP", "0.01"),
                 ("GET", "t"), ("EXEC",)]),
        on(1, "BCAST", "NOLOOP", "REDIRECT", ID(3)), cmd(1, "SET", "z", "1"), cmd(0, "SET", "z", "2"),
    ],
    "bcast_switch_from_default": [
        cmd(0, "HELLO", "3"), on(0), cmd(1, "SET", "key1", "1"), cmd(0, "GET", "key1"), off(0),
        on(0, "BCAST"), cmd(1, "INCR", "key1"), cmd(0, "PING"), off(0), on(0), cmd(1, "INCR", "key1"),
    ],
    "lazy_expiry_after_reply": [
        cmd(0, "HELLO", "3"), on(0), pipe(0, [("MULTI",), ("MSET", "x", "1", "y", "2"), ("PEXPIRE", "y", "5"),
                                              ("GET", "y"), ("EXEC",)]),
        sleep(0.02), cmd(0, "MGET", "x", "y"), cmd(0, "GET", "y"), cmd(0, "SET", "z", "1", "PX", "100"),
        cmd(0, "GET", "z"), sleep(0.15), cmd(1, "EXISTS", "z"), cmd(0, "GET", "z"),
        cmd(0, "SET", "w", "1", "PX", "100"), cmd(0, "GET", "w"), sleep(0.15), cmd(0, "SET", "w", "2"),
    ],
    # keys found by the key specs and their procedures (keyspec.c), as COMMAND GETKEYS finds them
    "movable_keys": [
        cmd(0, "HELLO", "3"), on(0),
        cmd(0, "LCS", "a", "b"), cmd(1, "SET", "b", "1"), cmd(0, "SORT_RO", "l", "BY", "w_*"), cmd(1, "RPUSH", "l", "1"),
        cmd(1, "SET", "w_1", "1"), cmd(0, "ZINTERCARD", "2", "z1", "z2"), cmd(1, "ZADD", "z2", "1", "m"),
        cmd(0, "ZUNION", "1x", "u1"), cmd(1, "ZADD", "u1", "1", "m"), cmd(0, "ZDIFF", "3", "d1"), cmd(1, "SET", "d1", "1"),
        cmd(0, "XREAD", "COUNT", "1", "STREAMS", "x1", "x2", "0", "0"), cmd(1, "XADD", "x2", "1-1", "f", "v"),
        cmd(0, "GEORADIUS_RO", "g", "0", "0", "1", "m"), cmd(1, "GEOADD", "g", "0", "0", "m"),
        cmd(0, "LMPOP", "1", "lm", "LEFT"), cmd(0, "BITFIELD_RO", "bf", "GET", "u8", "0"), cmd(1, "SETBIT", "bf", "1", "1"),
    ],
    "writes_of_every_type": [
        cmd(0, "HELLO", "3"), on(0),
        cmd(0, "HSET", "h", "f", "1"), cmd(0, "HGET", "h", "f"), cmd(0, "HDEL", "h", "f"),
        cmd(0, "RPUSH", "l", "a"), cmd(0, "LRANGE", "l", "0", "-1"), cmd(1, "LPUSH", "l", "b"),
        cmd(0, "SADD", "s", "a"), cmd(0, "SMEMBERS", "s"), cmd(1, "SREM", "s", "nope"), cmd(1, "SREM", "s", "a"),
        cmd(0, "ZADD", "z", "1", "a"), cmd(0, "ZSCORE", "z", "a"), cmd(1, "ZINCRBY", "z", "1", "a"),
        cmd(0, "ZUNION", "2", "z", "z2"), cmd(1, "ZADD", "z2", "1", "b"), cmd(0, "SINTERCARD", "2", "s", "s2"),
        cmd(1, "SADD", "s2", "x"), cmd(1, "SADD", "s", "x"),
        cmd(0, "GET", "h"), cmd(1, "HSET", "h", "g", "1"),                                   # WRONGTYPE is tracked
        cmd(0, "EXISTS", "e1", "e2"), cmd(1, "SET", "e2", "1"), cmd(0, "TYPE", "e1"), cmd(1, "SET", "e1", "1"),
        cmd(0, "STRLEN", "s1"), cmd(0, "GETRANGE", "s1", "0", "1"), cmd(1, "APPEND", "s1", "x"),
        cmd(0, "TTL", "t1"), cmd(1, "SET", "t1", "1"), cmd(0, "GET", "t1"), cmd(1, "EXPIRE", "t1", "100"),
        cmd(0, "GET", "t1"), cmd(1, "PERSIST", "t1"), cmd(0, "GET", "t1"), cmd(1, "EXPIRE", "t1", "0"),
        cmd(0, "GET", "r1"), cmd(0, "GET", "r2"), cmd(1, "SET", "r1", "1"), cmd(1, "RENAME", "r1", "r2"),
        cmd(0, "GET", "n1"), cmd(1, "SET", "n1", "1", "NX"), cmd(0, "GET", "n1"), cmd(1, "SET", "n1", "2", "NX"),
        cmd(1, "SET", "n1", "2", "XX"), cmd(0, "GET", "n1"), cmd(1, "GETDEL", "n1"), cmd(1, "GETDEL", "n1"),
        cmd(0, "GET", "m1"), cmd(1, "SET", "m1", "1"), cmd(1, "SELECT", "1"), cmd(0, "GET", "m1"),
        cmd(1, "SET", "m1", "1"), cmd(1, "MOVE", "m1", "0"), cmd(0, "GET", "m1"), cmd(1, "SWAPDB", "0", "1"),
        cmd(1, "COPY", "m1", "m2"), cmd(0, "GET", "m2"), cmd(1, "COPY", "m1", "m2", "REPLACE"),
        cmd(0, "DBSIZE"), cmd(0, "OBJECT", "ENCODING", "m2"), cmd(1, "SET", "m2", "3"),
    ],
    "served_blocking_command": [
        cmd(0, "RPUSH", "list2", "a"), cmd(1, "HELLO", "3"), on(1), cmd(1, "LRANGE", "list2", "0", "-1"),
        send(1, "BLMOVE", "list1", "list2", "LEFT", "LEFT", "0"), sleep(0.05), cmd(0, "RPUSH", "list1", "foo"),
        cmd(1, "GET", "q"), cmd(1, "LRANGE", "list2", "0", "-1"), cmd(0, "LPUSH", "list2", "x"),
    ],
    "client_reply_off_and_skip": [
        cmd(1, "HELLO", "3"), on(1), cmd(0, "SET", "foo", "bar"), cmd(1, "GET", "foo"),
        send(1, "CLIENT", "REPLY", "OFF"), cmd(0, "SET", "foo", "bar2"), cmd(1, "CLIENT", "REPLY", "ON"),
        cmd(2, "HELLO", "3"), on(1, "REDIRECT", ID(2)), cmd(1, "GET", "foo"), send(2, "CLIENT", "REPLY", "OFF"),
        cmd(0, "SET", "foo", "bar3"), cmd(2, "CLIENT", "REPLY", "ON"),
        cmd(1, "GET", "foo"), send(2, "CLIENT", "REPLY", "SKIP"), cmd(0, "SET", "foo", "bar4"),
    ],
    "reset_and_hello": [
        cmd(0, "HELLO", "3"), on(0, "BCAST", "PREFIX", "p"), cmd(1, "SET", "p1", "1"), cmd(0, "RESET"),
        cmd(1, "SET", "p1", "2"), cmd(0, "HELLO", "3"), on(0), cmd(0, "GET", "p1"), cmd(0, "RESET"),
        cmd(1, "SET", "p1", "3"), cmd(0, "HELLO", "3"), on(0), cmd(1, "SET", "p1", "4"),
    ],
    "flush_nulls": [
        cmd(3, "SUBSCRIBE", "__redis__:invalidate"), cmd(2, "HELLO", "3"), on(2), on(0, "REDIRECT", ID(3)),
        cmd(1, "HELLO", "3"), on(1, "REDIRECT", ID(3)), cmd(4, "HELLO", "3"), on(4, "BCAST", "NOLOOP"),
        cmd(1, "FLUSHALL"), cmd(2, "FLUSHDB"), cmd(4, "FLUSHALL", "ASYNC"), cmd(0, "FLUSHDB", "SYNC"),
        pipe(2, [("MULTI",), ("FLUSHDB",), ("PING",), ("EXEC",)]), cmd(2, "FLUSHDB", "BAD"),
    ],
    "info_fields": [
        cmd(3, "SUBSCRIBE", "__redis__:invalidate"), on(0, "REDIRECT", ID(3)), cmd(1, "SET", "key1", "1"),
        cmd(0, "GET", "key1"), cmd(0, "GET", "key2"), on(2, "BCAST", "PREFIX", "prefix:"),
        cmd(1, "SET", "prefix:key1", "1"), on(4, "BCAST", "PREFIX", "prefix:", "PREFIX", "x"),
    ],
}


@pytest.fixture(scope="module")
def pair():
    with server_pair(*SERVER_ARGS) as (f, r):
        yield f, r


def reset_servers(f, r):
    for s in (f, r):
        with RawClient(s.port) as c:
            assert c.command("FLUSHALL") == b"+OK\r\n"
            assert c.command("DEBUG", "SET-ACTIVE-EXPIRE", "0") == b"+OK\r\n"
            assert c.command("CONFIG", "SET", "tracking-table-max-keys", "1000000") == b"+OK\r\n"
            assert c.command("SELECT", "1") == b"+OK\r\n" and c.command("FLUSHDB") == b"+OK\r\n"


def run_case(f, r, steps):
    reset_servers(f, r)
    ls = Lockstep(f.port, r.port)
    try:
        bad = ls.run(steps)
        assert not bad, "mismatch:\n" + report(ls, bad[0])
    finally:
        ls.close()
    return ls


def info_tracking(port):
    with RawClient(port) as c:
        text = parse(c.command("INFO", "everything"))[1].decode()
    return {k: v for k, v in re.findall(r"^(tracking_\w+):(\d+)", text, re.M)}


@pytest.mark.parametrize("name", sorted(CASES))
def test_case(pair, name):
    f, r = pair
    ls = Lockstep(f.port, r.port)
    reset_servers(f, r)
    try:
        bad = ls.run(CASES[name])
        assert not bad, "mismatch:\n" + report(ls, bad[0])
        if name == "info_fields":
            assert info_tracking(f.port) == info_tracking(r.port)
    finally:
        ls.close()


# ------------------------------------------------------------------ random program
KEYS = ["a:1", "a:2", "a:xy", "b:1", "b:2", "k1", "k2", "k3"]
TYPED = {"h:1": "hash", "l:1": "list", "s:1": "set", "z:1": "zset"}

# connection roles: (setup steps, what it does in the program)
READERS = (0, 1, 5, 6)          # default-mode trackers (5 OPTIN, 6 OPTOUT)
ALL = tuple(range(9))


def setup_steps(r):
    noloop = ("NOLOOP",) if r.random() < 0.5 else ()
    return [
        cmd(3, "SUBSCRIBE", "__redis__:invalidate"),
        cmd(7, "HELLO", "3"),
        cmd(0, "HELLO", "3"), on(0, *noloop),
        on(1, "REDIRECT", ID(3)),
        cmd(2, "HELLO", "3"), on(2, "BCAST", "PREFIX", "a:", "PREFIX", "b:", *(("NOLOOP",) if r.random() < 0.5 else ())),
        cmd(5, "HELLO", "3"), on(5, "OPTIN"),
        cmd(6, "HELLO", "3"), on(6, "OPTOUT", "REDIRECT", ID(7), *noloop),
        on(8, "BCAST", "REDIRECT", ID(3)),
        cmd(4, "PING"),
    ]


def read_cmd(r):
    k = r.choice(KEYS)
    return r.choice([
        ("GET", k), ("MGET", k, r.choice(KEYS)), ("EXISTS", k), ("STRLEN", k), ("TYPE", k), ("TTL", k),
        ("GETRANGE", k, "0", "2"), ("HGET", "h:1", "f"), ("LRANGE", "l:1", "0", "-1"), ("SMEMBERS", "s:1"),
        ("ZSCORE", "z:1", "m"), ("SISMEMBER", "s:1", "x"), ("HGETALL", "h:1"), ("LLEN", "l:1"),
        ("ZUNION", "2", "z:1", "a:1"), ("SINTERCARD", "1", "s:1"),
        ("EVAL", "return redis.call('get', KEYS[1])", "1", k), ("EVAL_RO", "return 1", "2", k, "k2"),
    ])


def write_cmd(r):
    k = r.choice(KEYS)
    v = str(r.randint(0, 9))
    return r.choice([
        ("SET", k, v), ("SET", k, v), ("DEL", k), ("INCR", k), ("APPEND", k, v), ("MSET", k, v, r.choice(KEYS), v),
        ("SET", k, v, "NX"), ("SET", k, v, "XX"), ("GETDEL", k), ("EXPIRE", k, "0"), ("EXPIRE", k, "100"),
        ("PERSIST", k), ("RENAME", k, r.choice(KEYS)), ("UNLINK", k, r.choice(KEYS)),
        ("HSET", "h:1", "f", v), ("HDEL", "h:1", "f"), ("RPUSH", "l:1", v), ("LPOP", "l:1"), ("SADD", "s:1", v),
        ("SREM", "s:1", v), ("ZADD", "z:1", v, "m"), ("ZREM", "z:1", "m"), ("DEL", "h:1", "l:1"),
        ("EVAL", "return redis.call('set', KEYS[1], ARGV[1])", "1", k, v), ("SETRANGE", k, "1", v),
        ("COPY", k, r.choice(KEYS), "REPLACE"),
    ])


def random_step(r):
    roll = r.random()
    if roll < 0.34:
        c = r.choice(READERS)
        cmds = [read_cmd(r)]
        if c in (5, 6) and r.random() < 0.5:
            cmds.insert(0, ("CLIENT", "CACHING", "yes" if c == 5 else "no"))
        return [pipe(c, cmds)] if len(cmds) > 1 or r.random() < 0.3 else [cmd(c, *cmds[0])]
    if roll < 0.70:
        return [cmd(r.choice(ALL[:3] + (4, 5, 6, 8)), *write_cmd(r))]
    if roll < 0.78:
        c = r.choice((0, 1, 2, 4, 5, 6))
        body = [r.choice([read_cmd, write_cmd])(r) for _ in range(r.randint(1, 3))]
        return [pipe(c, [("MULTI",)] + body + [("EXEC",)])]
    if roll < 0.86:
        c = r.choice((0, 1, 2, 4, 5, 6, 8))
        return [pipe(c, [r.choice([read_cmd, write_cmd])(r) for _ in range(r.randint(2, 4))])]
    if roll < 0.89:
        k = r.choice(KEYS)
        return [cmd(r.choice((0, 4)), "SET", k, "v", "PX", "100"), cmd(r.choice(READERS), "GET", k), sleep(0.12),
                cmd(r.choice((0, 1, 4)), "GET", k)]
    if roll < 0.91:
        return [cmd(r.choice((1, 4, 0)), r.choice(["FLUSHDB", "FLUSHALL"]))]
    if roll < 0.93:
        return [cmd(4, "SELECT", r.choice(["0", "1"]))]
    if roll < 0.95:
        return [cmd(4, "SWAPDB", "0", "1")]
    if roll < 0.97:
        return [off(0), on(0, *(("NOLOOP",) if r.random() < 0.5 else ()))]
    return [cmd(r.choice((0, 1, 2, 5, 6, 8)), *INFO)]


def random_program(seed, n=260):
    r = random.Random(seed)
    steps = setup_steps(r)
    while len(steps) < n:
        steps += random_step(r)
    steps += [close(7), cmd(4, "SET", "k1", "x"), cmd(6, "GET", "k1"), cmd(4, "SET", "k1", "y"), cmd(6, *INFO)]
    return steps


SEEDS = [int(s) for s in os.environ.get("TRACKING_SEEDS", "1 2 3 4 5 6").split()]


@pytest.mark.parametrize("seed", SEEDS)
def test_random_program(pair, seed):
    f, r = pair
    reset_servers(f, r)
    ls = Lockstep(f.port, r.port)
    try:
        bad = ls.run(random_program(seed))
        assert not bad, "seed %d mismatch:\n%s" % (seed, report(ls, bad[0]))
        assert info_tracking(f.port) == info_tracking(r.port)
    finally:
        ls.close()


# ------------------------------------------------------------------ outside the lockstep
def client_fields(port, conns, idx, ids):
    """flags= and redir= of connection idx in CLIENT LIST, redir as C<j>."""
    line = parse(conns[idx].command("CLIENT", "LIST", "ID", str(ids[idx])))[1].decode()
    info = parse(conns[idx].command("CLIENT", "INFO"))[1].decode()
    out = []
    for text in (line, info):
        flags = re.search(r" flags=(\S+)", text).group(1)
        redir = int(re.search(r" redir=(-?\d+)", text).group(1))
        names = {v: "C%d" % k for k, v in ids.items()}
        out.append((flags, names.get(redir, str(redir))))
    return out


def test_client_list_flags_and_redir(pair):
    f, r = pair
    results = {}
    for s in (f, r):
        conns = {j: RawClient(s.port) for j in range(3)}
        ids = {j: int(c.command("CLIENT", "ID")[1:-2]) for j, c in conns.items()}
        rid = ids[2]
        seen = [client_fields(s.port, conns, 0, ids)]
        try:
            assert conns[0].command("HELLO", "3").startswith(b"%")
            for args in (("on",), ("on", "REDIRECT", str(rid)), ("off",), ("on", "BCAST"), ("off",),
                         ("on", "OPTIN", "NOLOOP")):
                assert conns[0].command("CLIENT", "TRACKING", *args) == b"+OK\r\n"
                seen.append(client_fields(s.port, conns, 0, ids))
            assert conns[0].command("CLIENT", "TRACKING", "on", "OPTIN", "REDIRECT", str(rid)) == b"+OK\r\n"
            conns[0].command("GET", "k")
            conns.pop(2).close()
            time.sleep(0.05)
            conns[1].command("SET", "k", "1")
            conns[0].read_reply()                    # tracking-redir-broken? (CACHING not given: nothing)
        except TimeoutError:
            pass
        finally:
            seen.append(client_fields(s.port, conns, 0, ids))
            conns[1].send_command("MONITOR")
            assert conns[1].read_reply() == b"+OK\r\n"
            seen.append(client_fields(s.port, conns, 0, ids))
            for c in conns.values():
                c.close()
        results[s.kind] = seen
    assert results["ferry"] == results["redis"]


def monitor_flags(port):
    with RawClient(port) as m, RawClient(port) as o:
        m.send_command("MONITOR")
        assert m.read_reply() == b"+OK\r\n"
        mid = int(o.command("CLIENT", "ID")[1:-2]) - 1
        text = parse(o.command("CLIENT", "LIST"))[1].decode()
        return sorted(re.search(r" flags=(\S+)", ln).group(1) for ln in text.splitlines() if ln and mid >= 0)


def test_monitor_client_flag(pair):
    f, r = pair
    assert monitor_flags(f.port) == monitor_flags(r.port) == ["N", "O"]


def table_limit_run(port, nkeys, limit):
    """Track nkeys keys with a REDIRECT to a subscriber, lower the limit:
    the keys invalidated (and the table size after)."""
    with RawClient(port) as admin, RawClient(port) as sub, RawClient(port) as t:
        admin.command("FLUSHALL")
        sid = int(sub.command("CLIENT", "ID")[1:-2])
        sub.command("SUBSCRIBE", "__redis__:invalidate")
        assert t.command("CLIENT", "TRACKING", "on", "REDIRECT", str(sid), "NOLOOP") == b"+OK\r\n"
        for i in range(nkeys):
            t.command("GET", "key%d" % i)
        assert admin.command("CONFIG", "SET", "tracking-table-max-keys", str(limit)) == b"+OK\r\n"
        got = []
        for _ in range(nkeys - limit):
            msg = parse(sub.read_reply(timeout=5))
            got.append(msg[1][2][1][0][1].decode())
        sub.send_command("PING")
        assert sub.read_reply() == b"*2\r\n$4\r\npong\r\n$0\r\n\r\n"      # nothing more
        keys = info_tracking(port)["tracking_total_keys"]
        admin.command("CONFIG", "SET", "tracking-table-max-keys", "1000000")
        return got, int(keys)


@pytest.mark.parametrize("nkeys,limit", [(2, 1), (250, 1), (50, 20)])
def test_tracking_table_max_keys(pair, nkeys, limit):
    f, r = pair
    reset_servers(f, r)
    for s in (f, r):
        got, left = table_limit_run(s.port, nkeys, limit)
        assert left == limit, s.kind
        assert len(set(got)) == nkeys - limit and set(got) <= {"key%d" % i for i in range(nkeys)}, s.kind


def limit_in_multi(port):
    """Redis's regression test for #11715: the limit applied before a queued
    command sends the invalidation before +QUEUED."""
    with RawClient(port) as admin, RawClient(port) as c:
        admin.command("CONFIG", "SET", "tracking-table-max-keys", "2")
        c.command("HELLO", "3")
        c.command("CLIENT", "TRACKING", "on")
        c.command("MGET", "1{tag}", "2{tag}")
        assert c.command("MULTI") == b"+OK\r\n"
        admin.command("CONFIG", "SET", "tracking-table-max-keys", "1")
        c.send_command("PING")
        c.send_command("EXEC")
        out = [c.read_reply() for _ in range(3)]
        admin.command("CONFIG", "SET", "tracking-table-max-keys", "1000000")
        return [re.sub(rb"[12]\{tag\}", b"K", x) for x in out]


def test_table_limit_before_queued_command(pair):
    f, r = pair
    reset_servers(f, r)
    assert limit_in_multi(f.port) == limit_in_multi(r.port)


def eviction_before_reply(port, noloop):
    """An evicted tracked key is invalidated before the reply of the command
    that evicted it (the eviction runs before the command); not at all for a
    NOLOOP client (the evicting command is its own)."""
    with RawClient(port) as c:
        c.command("HELLO", "3")
        c.command("CLIENT", "TRACKING", "on", *(["NOLOOP"] if noloop else []))
        used = int(re.search(rb"used_memory:(\d+)", c.command("INFO", "memory")).group(1))
        c.command("CONFIG", "SET", "maxmemory-policy", "volatile-random")
        c.command("CONFIG", "SET", "maxmemory", str(used + 100 * 1024))
        c.command("SETEX", "volatile-key", "10000", "x")
        c.command("GET", "volatile-key")
        c.command("SETRANGE", "big-key", "200000", "x")      # 200 KB: over the limit
        c.send_command("STRLEN", "big-key")
        out = [c.read_reply()]
        if not out[0].startswith(b":"):
            out.append(c.read_reply())
        c.command("DEL", "big-key")
        c.command("CONFIG", "SET", "maxmemory", "0")
        c.command("CONFIG", "SET", "maxmemory-policy", "noeviction")
        return out


@pytest.mark.parametrize("noloop", [False, True])
def test_eviction_invalidation_before_reply(pair, noloop):
    f, r = pair
    reset_servers(f, r)
    push = [] if noloop else [b">2\r\n$10\r\ninvalidate\r\n*1\r\n$12\r\nvolatile-key\r\n"]
    assert eviction_before_reply(f.port, noloop) == eviction_before_reply(r.port, noloop) == push + [b":200001\r\n"]


def active_expiry_run(port):
    """An actively expired tracked key is invalidated with no command of
    the tracking client (NOLOOP does not hide it: no client changed it)."""
    with RawClient(port) as c, RawClient(port) as b:
        c.command("DEBUG", "SET-ACTIVE-EXPIRE", "1")
        c.command("HELLO", "3")
        b.command("HELLO", "3")
        c.command("CLIENT", "TRACKING", "on", "NOLOOP")
        b.command("CLIENT", "TRACKING", "on", "BCAST", "NOLOOP")
        c.command("SET", "gone", "1", "PX", "50")
        c.command("GET", "gone")
        out = [c.read_reply(timeout=5), b.read_reply(timeout=5)]
        c.command("DEBUG", "SET-ACTIVE-EXPIRE", "0")
        return out


def test_active_expiry_invalidation(pair):
    f, r = pair
    reset_servers(f, r)
    assert active_expiry_run(f.port) == active_expiry_run(r.port)


# ------------------------------------------------------------------ redis-py
class CachingClient:
    """A client-side cache over redis-py in RESP3 (the pinned redis-py 5.0
    has no built-in one): CLIENT TRACKING on, invalidation pushes read by a
    push handler, values served from the cache until invalidated. Before a
    cached value is served the connection is drained of what the server sent
    (a PING's reply comes after every invalidation queued before it)."""

    def __init__(self, port, bcast=False):
        import redis
        self.r = redis.Redis(port=port, protocol=3, single_connection_client=True, decode_responses=True)
        self.cache = {}
        self.invalidations = []
        self.hits = 0
        self.prefix = "user:" if bcast else ""     # BCAST: only keys under the prefix are invalidated
        self.r.connection._parser.set_push_handler(self._on_push)
        opts = ["BCAST", "PREFIX", "user:"] if bcast else []
        assert self.r.execute_command("CLIENT", "TRACKING", "on", *opts)

    def _on_push(self, msg):
        if msg and msg[0] == "invalidate":
            keys = msg[1]
            self.invalidations.append(None if keys is None else sorted(keys))
            if keys is None:
                self.cache.clear()
            for k in keys or ():
                self.cache.pop(k, None)

    def get(self, key):
        self.r.ping()
        if key in self.cache:
            self.hits += 1
            return self.cache[key]
        v = self.r.get(key)
        if key.startswith(self.prefix):
            self.cache[key] = v
        return v

    def close(self):
        self.r.close()


def redispy_run(port, seed, bcast=False):
    import redis
    rng = random.Random(seed)
    w = redis.Redis(port=port, decode_responses=True)
    w.flushall()
    cc = CachingClient(port, bcast)
    stale = 0
    try:
        keys = ["user:%d" % i for i in range(6)] + ["other:%d" % i for i in range(3)]
        for _ in range(400):
            k = rng.choice(keys)
            op = rng.random()
            if op < 0.5:
                if cc.get(k) != w.get(k):
                    stale += 1
            elif op < 0.8:
                w.set(k, str(rng.randint(0, 99)))
            elif op < 0.9:
                w.delete(k)
            elif op < 0.95:
                w.expire(k, 0)
            elif op < 0.97:
                w.flushdb()
            else:
                cc.r.set(k, "own")       # its own write: invalidated after the reply
        cc.r.ping()
        return stale, cc.hits, cc.invalidations
    finally:
        cc.close()
        w.close()


@pytest.mark.parametrize("bcast", [False, True])
def test_redispy_client_side_cache(pair, bcast):
    f, r = pair
    reset_servers(f, r)
    fs, fh, finv = redispy_run(f.port, 7, bcast)
    rs, rh, rinv = redispy_run(r.port, 7, bcast)
    assert fs == 0 and rs == 0          # never a stale value from the cache
    assert fh > 20                      # the cache served reads
    assert (fh, finv) == (rh, rinv)     # and exactly the same invalidations as redis-server
