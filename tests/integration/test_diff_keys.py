"""Differential tests for the generic keyspace commands (src/commands/cmd_keys.c,
src/commands/cmd_expire.c): DEL UNLINK EXISTS TOUCH, the EXPIRE/TTL family, PERSIST,
TYPE, RENAME(NX), COPY, MOVE, KEYS, SCAN, RANDOMKEY, DBSIZE, FLUSHDB,
FLUSHALL, SWAPDB and OBJECT. Every case is a list of steps run in lockstep
on ferry and on the reference redis-server (see diffkit.py); replies are
compared byte for byte unless a step says otherwise. Every error path of
these commands appears in at least one case.

Cases in TYPE_CASES need other modules (lists, hashes, CONFIG...); each is
skipped while ferry does not know the commands in TYPE_CASE_NEEDS yet.

Also here: a ferry-only SCAN guarantee test (every key present for the whole
iteration is returned, while other keys come and go between calls).
"""
from __future__ import annotations

import random
import time

import pytest

from conftest import start_server
from diffkit import approx, cmd, format_report, hello, run_steps, scan_all, sleep, sorted_
from resp_client import RawClient, parse

BIG = "9223372036854775807"      # LLONG_MAX
SMALL = "-9223372036854775808"   # LLONG_MIN
FAR_MS = "99999999999999"        # a unix ms time far in the future
INT_RANGE = "ERR value is out of range"

CASES = {
    # ------------------------------------------------------------ DEL & co
    "del_unlink": [
        ("SET", "a", "1"), ("SET", "b", "2"), ("SET", "c", "3"),
        ("DEL", "a", "a", "nokey"), ("DEL", "a"), ("EXISTS", "a"),
        ("UNLINK", "b", "c", "b", "zz"), ("DBSIZE",),
        ("DEL",), ("UNLINK",), ("del", "x"),
    ],
    "exists_touch": [
        ("SET", "a", "1"), ("SET", "b", "2"),
        ("EXISTS", "a"), ("EXISTS", "a", "a", "a"), ("EXISTS", "a", "b", "c", "b"),
        ("EXISTS", "nokey"), ("EXISTS",),
        ("TOUCH", "a", "b", "c"), ("TOUCH", "a", "a"), ("TOUCH", "c"), ("TOUCH",),
    ],
    "del_expired_key": [
        ("SET", "a", "1", "PX", "1"), ("SET", "b", "1"), sleep(0.02),
        ("DEL", "a", "b"), ("EXISTS", "a"), ("DBSIZE",),
    ],
    "type": [
        ("SET", "s", "v"), ("TYPE", "s"), ("TYPE", "nokey"), ("type", "S"), ("TYPE",),
        ("TYPE", "a", "b"),
    ],
    # ------------------------------------------------------------- EXPIRE
    "expire_basic": [
        ("SET", "k", "v"), ("TTL", "k"), ("PTTL", "k"), ("EXPIRETIME", "k"), ("PEXPIRETIME", "k"),
        ("EXPIRE", "k", "100"), approx("TTL", "k"), approx("PTTL", "k", tol=50),
        ("PEXPIRE", "k", "100000"), approx("TTL", "k"),
        ("TTL", "nokey"), ("PTTL", "nokey"), ("EXPIRETIME", "nokey"), ("PEXPIRETIME", "nokey"),
        ("EXPIRE", "nokey", "10"), ("PEXPIRE", "nokey", "10"),
        ("EXPIREAT", "nokey", "10"), ("PEXPIREAT", "nokey", "10"),
    ],
    "expireat_exact": [
        ("SET", "k", "v"),
        ("PEXPIREAT", "k", FAR_MS), ("PEXPIRETIME", "k"), ("EXPIRETIME", "k"),
        ("PEXPIREAT", "k", "99999999999500"), ("EXPIRETIME", "k"),
        ("PEXPIREAT", "k", "99999999999499"), ("EXPIRETIME", "k"),
        ("EXPIREAT", "k", "99999999999"), ("PEXPIRETIME", "k"), ("EXPIRETIME", "k"),
        ("PEXPIREAT", "k", BIG), ("PEXPIRETIME", "k"), ("EXPIRETIME", "k"), approx("TTL", "k"),
        approx("PTTL", "k", tol=50), ("PEXPIREAT", "k", "9223372036854775300"), ("EXPIRETIME", "k"),
    ],
    "expire_in_past_deletes": [
        ("SET", "a", "v"), ("EXPIRE", "a", "-1"), ("EXISTS", "a"),
        ("SET", "a", "v"), ("PEXPIRE", "a", "0"), ("EXISTS", "a"),
        ("SET", "a", "v"), ("EXPIREAT", "a", "1"), ("EXISTS", "a"),
        ("SET", "a", "v"), ("PEXPIREAT", "a", SMALL), ("EXISTS", "a"),
        ("SET", "a", "v"), ("EXPIRE", "a", "-100", "LT"), ("EXISTS", "a"),
        ("DBSIZE",),
    ],
    "expire_options": [
        ("SET", "k", "1"),
        ("EXPIRE", "k", "100", "GT"), ("TTL", "k"),           # no ttl = infinite: not greater
        ("EXPIRE", "k", "100", "XX"), ("TTL", "k"),
        ("EXPIRE", "k", "100", "LT"), approx("TTL", "k"),     # anything < infinite
        ("EXPIRE", "k", "50", "LT"), approx("TTL", "k"),
        ("EXPIRE", "k", "60", "LT"), approx("TTL", "k"),
        ("EXPIRE", "k", "60", "GT"), approx("TTL", "k"),
        ("EXPIRE", "k", "10", "gt"), approx("TTL", "k"),
        ("EXPIRE", "k", "10", "XX"), approx("TTL", "k"),
        ("EXPIRE", "k", "20", "NX"), approx("TTL", "k"),
        ("PERSIST", "k"), ("EXPIRE", "k", "10", "XX"), ("TTL", "k"),
        ("EXPIRE", "k", "10", "nx"), ("EXPIRE", "k", "10", "NX"), approx("TTL", "k"),
        ("EXPIRE", "k", "10", "NX", "NX"), ("EXPIRE", "k", "100", "GT", "GT", "XX"),
        approx("TTL", "k"), ("EXPIRE", "k", "5", "XX", "LT"), approx("TTL", "k"),
        ("PEXPIRE", "k", "-1", "GT"), ("EXISTS", "k"),
        ("PEXPIRE", "k", "-1", "LT"), ("EXISTS", "k"),
        ("SET", "k", "1"), ("PEXPIREAT", "k", "1", "NX"), ("EXISTS", "k"),
    ],
    "expire_errors": [
        ("SET", "k", "v"),
        ("EXPIRE", "k", "10", "NX", "XX"), ("EXPIRE", "k", "10", "NX", "GT"),
        ("EXPIRE", "k", "10", "LT", "NX"), ("EXPIRE", "k", "10", "GT", "LT"),
        ("EXPIRE", "k", "10", "XX", "GT", "LT"), ("EXPIRE", "k", "10", "NX", "XX", "GT", "LT"),
        ("EXPIRE", "k", "10", "foo"), ("EXPIRE", "k", "10", "NX", "bar"),
        ("EXPIRE", "k", "10", ""), ("PEXPIRE", "k", "10", "XX", "bogus", "NX"),
        ("EXPIRE", "k", "abc"), ("EXPIRE", "k", "abc", "foo"), ("EXPIRE", "nokey", "abc"),
        ("EXPIRE", "nokey", "10", "NX", "XX"), ("EXPIRE", "k", "10.5"), ("EXPIRE", "k", ""),
        ("EXPIRE", "k", " 10"), ("EXPIRE", "k", "+10"), ("EXPIRE", "k", "010"),
        ("EXPIRE", "k", BIG), ("EXPIRE", "k", SMALL), ("EXPIRE", "k", "9223372036854775"),
        ("EXPIRE", "k", "9223372036854774"), ("EXPIRE", "k", "-9223372036854776"),
        ("PEXPIRE", "k", BIG), ("EXPIREAT", "k", BIG), ("EXPIREAT", "k", SMALL),
        ("EXPIREAT", "k", "9223372036854776"), ("PEXPIRE", "k", "9223372036854775000"),
        ("EXPIRE", "k", "99999999999999999999"), ("TTL", "k"), ("EXPIRE", "k"),
        ("PEXPIREAT", "k"), ("TTL",), ("PTTL", "a", "b"), ("EXPIRETIME",), ("PEXPIRETIME", "a", "b"),
        ("PERSIST",), ("PERSIST", "a", "b"),
    ],
    "persist": [
        ("SET", "k", "v", "EX", "100"), ("PERSIST", "k"), ("TTL", "k"), ("PERSIST", "k"),
        ("PERSIST", "nokey"), ("GET", "k"),
    ],
    "ttl_expired_key": [
        ("SET", "k", "v", "PX", "10"), sleep(0.05),
        ("TTL", "k"), ("PTTL", "k"), ("EXPIRETIME", "k"), ("EXISTS", "k"), ("TYPE", "k"),
        ("PERSIST", "k"), ("EXPIRE", "k", "10"),
    ],
    "expire_then_overwrite": [
        ("SET", "k", "v", "EX", "100"), ("SET", "k", "w"), ("TTL", "k"),
        ("EXPIRE", "k", "100"), ("APPEND", "k", "x"), approx("TTL", "k"),
    ],
    # ------------------------------------------------------------- RENAME
    "rename": [
        ("SET", "a", "1"), ("RENAME", "a", "b"), ("GET", "a"), ("GET", "b"),
        ("RENAME", "b", "b"), ("GET", "b"), ("RENAME", "nokey", "x"), ("RENAME", "nokey", "nokey"),
        ("SET", "c", "3"), ("RENAME", "b", "c"), ("GET", "c"), ("EXISTS", "b"), ("DBSIZE",),
        ("RENAME", "a"), ("RENAME", "a", "b", "c"),
    ],
    "rename_keeps_ttl": [
        ("SET", "a", "1", "PXAT", FAR_MS), ("SET", "b", "2", "EX", "100"),
        ("RENAME", "a", "b"), ("PEXPIRETIME", "b"), ("EXISTS", "a"),
        ("RENAME", "b", "a-much-longer-key-name-than-before-to-force-a-new-node"),
        ("PEXPIRETIME", "a-much-longer-key-name-than-before-to-force-a-new-node"),
        ("SET", "p", "x"), ("SET", "q", "y", "EX", "100"), ("RENAME", "p", "q"), ("TTL", "q"),
    ],
    "renamenx": [
        ("SET", "a", "1"), ("SET", "b", "2"),
        ("RENAMENX", "a", "b"), ("GET", "a"), ("GET", "b"),
        ("RENAMENX", "a", "a"), ("RENAMENX", "a", "c"), ("GET", "c"), ("EXISTS", "a"),
        ("RENAMENX", "nokey", "c"), ("RENAMENX", "nokey", "nokey"), ("RENAMENX", "x"),
    ],
    "rename_expired": [
        ("SET", "a", "1", "PX", "1"), ("SET", "b", "2", "PX", "1"), ("SET", "c", "3"), sleep(0.02),
        ("RENAME", "a", "z"), ("RENAMENX", "c", "b"), ("GET", "b"), ("EXISTS", "c"),
    ],
    # --------------------------------------------------------------- COPY
    "copy": [
        ("SET", "a", "hello", "PXAT", FAR_MS),
        ("COPY", "a", "b"), ("GET", "b"), ("PEXPIRETIME", "b"), ("COPY", "a", "b"),
        ("SET", "b", "other"), ("COPY", "a", "b", "REPLACE"), ("GET", "b"),
        ("PERSIST", "a"), ("COPY", "a", "b", "replace"), ("TTL", "b"),
        ("COPY", "nokey", "b"), ("COPY", "nokey", "b", "REPLACE"), ("GET", "b"),
        ("SET", "n", "123"), ("COPY", "n", "m"), ("OBJECT", "ENCODING", "m"),
        ("APPEND", "b", "!"), ("GET", "a"), ("GET", "b"), ("DBSIZE",),
    ],
    "copy_db": [
        ("SET", "a", "v"), ("COPY", "a", "a", "DB", "1"), ("COPY", "a", "a", "DB", "1"),
        ("COPY", "a", "x", "DB", "1", "REPLACE", "DB", "2"), ("SELECT", "1"), ("GET", "a"),
        ("EXISTS", "x"), ("SELECT", "2"), ("GET", "x"), ("SET", "y", "2"),
        ("COPY", "y", "a", "db", "0"), ("COPY", "y", "a", "db", "0", "replace"), ("SELECT", "0"),
        ("GET", "a"), ("DBSIZE",),
    ],
    "copy_errors": [
        ("SET", "a", "v"),
        ("COPY", "a", "a"), ("COPY", "nokey", "nokey"), ("COPY", "a", "a", "DB", "0"),
        ("COPY", "a", "a", "REPLACE"), ("COPY", "a", "b", "DB", "16"), ("COPY", "a", "b", "DB", "-1"),
        ("COPY", "a", "b", "DB", "abc"), ("COPY", "a", "b", "DB", "99999999999"),
        ("COPY", "a", "b", "DB", "2147483648"), ("COPY", "a", "b", "DB", "-2147483649"),
        ("COPY", "a", "b", "DB"), ("COPY", "a", "b", "foo"), ("COPY", "a", "b", "REPLACE", "x"),
        ("COPY", "a", "b", "DB", "1", "DB", "99"), ("COPY", "a", "b", "DB", "1", "foo"),
        ("COPY", "a"), ("COPY",), ("EXISTS", "b"),
    ],
    # --------------------------------------------------------------- MOVE
    "move": [
        ("SET", "a", "v", "PXAT", FAR_MS), ("MOVE", "a", "1"), ("EXISTS", "a"), ("MOVE", "a", "1"),
        ("SELECT", "1"), ("GET", "a"), ("PEXPIRETIME", "a"), ("MOVE", "a", "0"), ("DBSIZE",),
        ("SELECT", "0"), ("SET", "b", "x"), ("SELECT", "1"), ("SET", "b", "y"),
        ("MOVE", "b", "0"), ("GET", "b"), ("MOVE", "nokey", "0"), ("SELECT", "0"), ("GET", "b"),
        ("GET", "a"), ("EXISTS", "a"),
    ],
    "move_errors": [
        ("SET", "a", "v"),
        ("MOVE", "a", "0"), ("MOVE", "nokey", "0"), ("MOVE", "a", "16"), ("MOVE", "a", "-1"),
        ("MOVE", "a", "abc"), ("MOVE", "a", "99999999999"), ("MOVE", "a", "1.5"), ("MOVE", "a", ""),
        ("MOVE", "a"), ("MOVE", "a", "1", "2"), ("EXISTS", "a"),
    ],
    # ------------------------------------------------------- KEYS, DBSIZE
    "keys": [
        ("MSET", "one", "1", "two", "2", "three", "3", "four", "4", "a*b", "5", "a?b", "6",
         "hello", "7", "hallo", "8", "hxllo", "9", "hllo", "10", "heeeello", "11", "Hello", "12"),
        sorted_("KEYS", "*"), sorted_("KEYS", "*o*"), sorted_("KEYS", "t??"), sorted_("KEYS", "h?llo"),
        sorted_("KEYS", "h*llo"), sorted_("KEYS", "h[ae]llo"), sorted_("KEYS", "h[^e]llo"),
        sorted_("KEYS", "h[a-b]llo"), sorted_("KEYS", "a\\*b"), sorted_("KEYS", "a\\?b"),
        sorted_("KEYS", "nomatch*"), ("KEYS", "one"), ("KEYS", ""), sorted_("KEYS", "*e"),
        sorted_("KEYS", "[hH]ello"), ("DBSIZE",), ("KEYS",), ("KEYS", "a", "b"), ("DBSIZE", "x"),
    ],
    "keys_skips_expired": [
        ("SET", "a", "1", "PX", "1"), ("SET", "b", "2"), sleep(0.02), ("KEYS", "*"), ("KEYS", "a"),
    ],
    "keys_empty": [("KEYS", "*"), ("DBSIZE",), ("RANDOMKEY",)],
    # -------------------------------------------------------------- SCAN
    "scan_small": [
        ("SET", "k", "v"), ("SCAN", "0"), ("SCAN", "0", "COUNT", "100"), ("SCAN", "0", "MATCH", "k"),
        ("SCAN", "0", "MATCH", "x*"), ("SCAN", "0", "TYPE", "string"), ("SCAN", "0", "TYPE", "STRING"),
        ("SCAN", "0", "TYPE", "list"), ("SCAN", "0", "TYPE", "nosuchtype"),
        ("SCAN", "0", "count", "5", "count", "6", "match", "a", "match", "*"),
        ("SCAN", "+0"), ("SCAN", "00"), ("SCAN", ""), ("SCAN", "0", "COUNT", BIG),
        ("SCAN", "0", "COUNT", "9223372036854775"),
    ],
    "scan_empty_db": [("SCAN", "0"), ("SCAN", "-1"), ("SCAN", "18446744073709551615"), ("SCAN", "1")],
    "scan_errors": [
        ("SET", "k", "v"),
        ("SCAN", "abc"), ("SCAN", " 1"), ("SCAN", "1 "), ("SCAN", "+"), ("SCAN", "-"),
        ("SCAN", "18446744073709551616"), ("SCAN", "1.5"), ("SCAN", "0x10"),
        ("SCAN", "-18446744073709551616"), ("SCAN", "abc", "COUNT", "0"),
        ("SCAN", "0", "COUNT", "0"), ("SCAN", "0", "COUNT", "-1"), ("SCAN", "0", "COUNT", "abc"),
        ("SCAN", "0", "COUNT", "99999999999999999999"), ("SCAN", "0", "COUNT", "1.5"),
        ("SCAN", "0", "COUNT"), ("SCAN", "0", "MATCH"), ("SCAN", "0", "TYPE"), ("SCAN", "0", "foo"),
        ("SCAN", "0", "foo", "bar"), ("SCAN", "0", "MATCH", "*", "COUNT"),
        ("SCAN", "0", "COUNT", "0", "foo"), ("SCAN", "0", "foo", "COUNT", "0"), ("SCAN",),
    ],
    "scan_full": [
        ("MSET",) + tuple(x for i in range(300) for x in ("key:%d" % i, str(i))),
        ("MSET",) + tuple(x for i in range(50) for x in ("other:%d" % i, str(i))),
        scan_all(), scan_all("COUNT", "7"), scan_all("COUNT", "1000"), scan_all("MATCH", "key:1*"),
        scan_all("MATCH", "other:*", "COUNT", "3"), scan_all("TYPE", "string", "COUNT", "50"),
        scan_all("TYPE", "hash"), scan_all("MATCH", "nothing*"), scan_all("COUNT", "0"),
    ],
    "scan_deletes_expired": [
        ("MSET", "a", "1", "b", "2", "c", "3"), ("PEXPIRE", "a", "1"), ("PEXPIRE", "b", "1"),
        sleep(0.02), scan_all(), ("DBSIZE",), ("EXISTS", "a", "b", "c"),
    ],
    # --------------------------------------------------------- RANDOMKEY
    "randomkey": [
        ("RANDOMKEY",), ("SET", "only", "v"), ("RANDOMKEY",), ("DEL", "only"), ("RANDOMKEY",),
        ("RANDOMKEY", "x"),
    ],
    "randomkey_expired": [
        ("SET", "a", "1", "PX", "1"), ("SET", "b", "2", "PX", "1"), ("SET", "c", "3"), sleep(0.02),
        ("RANDOMKEY",), ("RANDOMKEY",), ("DEL", "c"), ("SET", "d", "1", "PX", "1"), sleep(0.02),
        ("RANDOMKEY",), ("DBSIZE",),
    ],
    # ---------------------------------------------------- FLUSH / SWAPDB
    "flush": [
        ("SET", "a", "1"), ("SELECT", "1"), ("SET", "b", "2"), ("FLUSHDB",), ("DBSIZE",),
        ("SELECT", "0"), ("DBSIZE",), ("SET", "c", "3"), ("FLUSHDB", "ASYNC"), ("DBSIZE",),
        ("SET", "c", "3"), ("FLUSHDB", "sync"), ("DBSIZE",), ("SET", "c", "3"), ("SELECT", "3"),
        ("SET", "d", "4"), ("FLUSHALL",), ("DBSIZE",), ("SELECT", "0"), ("DBSIZE",),
        ("SET", "x", "1"), ("FLUSHALL", "ASYNC"), ("DBSIZE",), ("SET", "x", "1"),
        ("FLUSHALL", "SYNC"), ("DBSIZE",),
        ("FLUSHDB", "foo"), ("FLUSHDB", "ASYNC", "SYNC"), ("FLUSHDB", "sync", "x"),
        ("FLUSHALL", "foo"), ("FLUSHALL", "async", "async"), ("FLUSHALL", ""),
    ],
    "swapdb": [
        ("SET", "a", "db0"), ("SELECT", "1"), ("SET", "a", "db1"), ("SET", "b", "only1"),
        ("SWAPDB", "0", "1"), ("GET", "a"), ("GET", "b"), ("DBSIZE",), ("SELECT", "0"), ("GET", "a"),
        ("GET", "b"), ("DBSIZE",), ("SWAPDB", "1", "0"), ("GET", "a"), ("SWAPDB", "0", "0"),
        ("GET", "a"), ("SWAPDB", "0", "15"), ("DBSIZE",), ("SWAPDB", "15", "0"), ("DBSIZE",),
        cmd("GET", "b", conn=1), cmd("SELECT", "1", conn=1), cmd("SWAPDB", "0", "1", conn=2),
        cmd("GET", "b", conn=1), cmd("GET", "a", conn=1),
    ],
    "swapdb_errors": [
        ("SWAPDB", "0", "16"), ("SWAPDB", "16", "0"), ("SWAPDB", "-1", "0"), ("SWAPDB", "0", "-1"),
        ("SWAPDB", "abc", "0"), ("SWAPDB", "0", "abc"), ("SWAPDB", "abc", "def"),
        ("SWAPDB", "99999999999", "0"), ("SWAPDB", "0", "99999999999"), ("SWAPDB", "", "0"),
        ("SWAPDB", "1.0", "0"), ("SWAPDB", "0"), ("SWAPDB", "0", "1", "2"),
    ],
    # ------------------------------------------------------------ OBJECT
    "object": [
        ("SET", "i", "123"), ("SET", "big", "12345"), ("SET", "neg", "-1"), ("SET", "e", "hello"),
        ("SET", "r", "x" * 100), ("SET", "z", "0123"),
        ("OBJECT", "ENCODING", "i"), ("OBJECT", "ENCODING", "big"), ("OBJECT", "encoding", "e"),
        ("OBJECT", "Encoding", "r"), ("OBJECT", "ENCODING", "z"), ("OBJECT", "ENCODING", "nokey"),
        ("OBJECT", "REFCOUNT", "i"), ("OBJECT", "REFCOUNT", "big"), ("OBJECT", "REFCOUNT", "neg"),
        ("OBJECT", "REFCOUNT", "e"), ("OBJECT", "REFCOUNT", "z"), ("OBJECT", "REFCOUNT", "nokey"),
        ("INCR", "cnt"), ("OBJECT", "REFCOUNT", "cnt"), ("SET", "cnt", "7", "EX", "100"),
        ("OBJECT", "REFCOUNT", "cnt"), ("COPY", "i", "i2"), ("OBJECT", "REFCOUNT", "i2"),
        ("RENAME", "i2", "i3"), ("OBJECT", "REFCOUNT", "i3"), ("EXPIRE", "i3", "100"),
        ("OBJECT", "REFCOUNT", "i3"), ("MOVE", "i3", "1"), ("SET", "i2", "5"),
        ("OBJECT", "REFCOUNT", "i2"), ("OBJECT", "REFCOUNT", "i"),
        ("APPEND", "i", "4"), ("OBJECT", "REFCOUNT", "i"),
        approx("OBJECT", "IDLETIME", "e"), ("OBJECT", "IDLETIME", "nokey"),
        ("OBJECT", "FREQ", "e"), ("OBJECT", "FREQ", "nokey"),
        ("OBJECT", "HELP"), ("object", "help"),
    ],
    "object_idletime_notouch": [
        ("SET", "k", "v"), ("SET", "k2", "v"), ("SET", "k3", "v"), sleep(2.5),
        ("EXISTS", "k"), ("TYPE", "k"), ("TTL", "k"), ("PTTL", "k"), ("EXPIRETIME", "k"),
        ("OBJECT", "ENCODING", "k"), ("OBJECT", "REFCOUNT", "k"), approx("OBJECT", "IDLETIME", "k"),
        ("TOUCH", "k"), approx("OBJECT", "IDLETIME", "k"), ("GET", "k2"), approx("OBJECT", "IDLETIME", "k2"),
        ("RENAME", "k3", "k4"), approx("OBJECT", "IDLETIME", "k4"),
    ],
    "object_errors": [
        ("SET", "k", "v"),
        ("OBJECT",), ("OBJECT", "foo"), ("OBJECT", "foo", "k"), ("OBJECT", "FOO", "k"),
        ("OBJECT", "x" * 200, "k"), ("OBJECT", "HELP", "x"), ("OBJECT", "ENCODING"),
        ("OBJECT", "ENCODING", "a", "b"), ("OBJECT", "FREQ"), ("OBJECT", "IDLETIME"),
        ("OBJECT", "REFCOUNT", "a", "b"), ("OBJECT", "FREQ", "k"),
    ],
    "object_idletime_rename": [
        ("SET", "k", "v"), ("RENAME", "k", "k2"), approx("OBJECT", "IDLETIME", "k2"),
        ("COPY", "k2", "k3"), approx("OBJECT", "IDLETIME", "k3"), ("TTL", "k3"),
        approx("OBJECT", "IDLETIME", "k3"),
    ],
    # ------------------------------------------------------------- WATCH
    "watch_del_expire_persist": [
        ("SET", "k", "v"),
        ("WATCH", "k"), cmd("DEL", "nokey", conn=1), ("MULTI",), ("PING",), ("EXEC",),
        ("WATCH", "k"), cmd("DEL", "k", conn=1), ("MULTI",), ("PING",), ("EXEC",),
        ("SET", "k", "v"), ("WATCH", "k"), cmd("EXPIRE", "k", "100", conn=1), ("MULTI",), ("PING",),
        ("EXEC",),
        ("WATCH", "k"), cmd("EXPIRE", "k", "100", "NX", conn=1), ("MULTI",), ("PING",), ("EXEC",),
        ("WATCH", "k"), cmd("PERSIST", "k", conn=1), ("MULTI",), ("PING",), ("EXEC",),
        ("WATCH", "k"), cmd("PERSIST", "k", conn=1), ("MULTI",), ("PING",), ("EXEC",),
        ("WATCH", "k"), cmd("UNLINK", "k", conn=1), ("MULTI",), ("PING",), ("EXEC",),
        ("SET", "k", "v"), ("WATCH", "k"), cmd("PEXPIREAT", "k", "1", conn=1), ("MULTI",), ("PING",),
        ("EXEC",), ("EXISTS", "k"),
        ("SET", "k", "v"), ("WATCH", "k"), cmd("EXISTS", "k", conn=1), cmd("TOUCH", "k", conn=1),
        cmd("TYPE", "k", conn=1), cmd("TTL", "k", conn=1), cmd("OBJECT", "ENCODING", "k", conn=1),
        ("MULTI",), ("PING",), ("EXEC",),
    ],
    "watch_rename_copy_move": [
        ("SET", "a", "1"), ("SET", "b", "2"),
        ("WATCH", "a"), cmd("RENAME", "a", "c", conn=1), ("MULTI",), ("PING",), ("EXEC",),
        ("WATCH", "b"), cmd("RENAME", "c", "b", conn=1), ("MULTI",), ("PING",), ("EXEC",),
        ("WATCH", "b"), cmd("RENAMENX", "b", "b", conn=1), cmd("RENAME", "b", "b", conn=1),
        ("MULTI",), ("PING",), ("EXEC",),
        ("WATCH", "d"), cmd("COPY", "b", "d", conn=1), ("MULTI",), ("PING",), ("EXEC",),
        ("WATCH", "b"), cmd("COPY", "b", "e", conn=1), ("MULTI",), ("PING",), ("EXEC",),
        ("WATCH", "b"), cmd("MOVE", "b", "1", conn=1), ("MULTI",), ("PING",), ("EXEC",),
        ("SELECT", "1"), ("WATCH", "d"), cmd("MOVE", "d", "1", conn=1), ("MULTI",), ("PING",),
        ("EXEC",),
        ("WATCH", "e"), cmd("COPY", "e", "e", "DB", "1", conn=1), ("MULTI",), ("PING",), ("EXEC",),
    ],
    "watch_flush_swap": [
        ("SET", "k", "v"),
        ("WATCH", "k"), cmd("FLUSHDB", conn=1), ("MULTI",), ("PING",), ("EXEC",),
        ("SET", "k", "v"), ("WATCH", "k"), cmd("FLUSHALL", conn=1), ("MULTI",), ("PING",), ("EXEC",),
        ("SET", "k", "v"), ("WATCH", "k"), cmd("SWAPDB", "0", "1", conn=1), ("MULTI",), ("PING",),
        ("EXEC",),
        ("WATCH", "k"), cmd("SWAPDB", "0", "1", conn=1), ("MULTI",), ("PING",), ("EXEC",),
        ("WATCH", "k"), cmd("SWAPDB", "0", "0", conn=1), ("MULTI",), ("PING",), ("EXEC",),
        ("WATCH", "k"), cmd("SELECT", "5", conn=1), cmd("FLUSHDB", conn=1), ("MULTI",), ("PING",),
        ("EXEC",),
        # keys that exist in neither db are not touched by FLUSHDB/FLUSHALL/SWAPDB (7.0)
        ("WATCH", "nokey"), cmd("FLUSHDB", conn=1), ("MULTI",), ("PING",), ("EXEC",),
        ("WATCH", "nokey"), cmd("SWAPDB", "0", "1", conn=1), ("MULTI",), ("PING",), ("EXEC",),
        ("WATCH", "nokey"), cmd("FLUSHALL", conn=1), ("MULTI",), ("PING",), ("EXEC",),
    ],
    # ------------------------------------------- transactions and RESP3
    "multi_keys": [
        ("SET", "a", "1"), ("MULTI",), ("EXPIRE", "a", "10", "NX", "XX"), ("RENAME", "a", "b"),
        ("SCAN", "abc"), ("KEYS", "*"), ("TTL", "b"), ("EXEC",),
    ],
}

# RESP3 replies: nulls and the OBJECT HELP array.
CASES["resp3"] = [
    ("SET", "k", "v"),
    hello("3", conn=1),
    cmd("RANDOMKEY", conn=1), cmd("OBJECT", "ENCODING", "nokey", conn=1), cmd("OBJECT", "HELP", conn=1),
    cmd("SCAN", "0", conn=1), cmd("TYPE", "k", conn=1), cmd("TTL", "k", conn=1),
    cmd("FLUSHDB", conn=1), cmd("RANDOMKEY", conn=1), cmd("KEYS", "*", conn=1), cmd("SCAN", "0", conn=1),
]

# Cases that need other type modules, with the commands they need.
TYPE_CASES = {
    "rename_copy_move_types": [
        ("RPUSH", "l", "a", "b", "c"), ("HSET", "h", "f", "v", "g", "w"), ("SADD", "s", "x", "y"),
        ("ZADD", "z", "1", "m", "2", "n"),
        ("TYPE", "l"), ("TYPE", "h"), ("TYPE", "s"), ("TYPE", "z"),
        ("RENAME", "l", "l2"), ("LRANGE", "l2", "0", "-1"), ("COPY", "l2", "l3"), ("RPUSH", "l3", "d"),
        ("LRANGE", "l2", "0", "-1"), ("LRANGE", "l3", "0", "-1"),
        ("COPY", "h", "h2"), ("HSET", "h2", "f", "changed"), ("HGET", "h", "f"), ("HGET", "h2", "f"),
        ("COPY", "s", "s2", "DB", "1"), ("SELECT", "1"), ("SADD", "s2", "z"), ("SCARD", "s2"),
        ("SELECT", "0"), ("SCARD", "s"), ("MOVE", "z", "2"), ("SELECT", "2"), ("ZRANGE", "z", "0", "-1"),
        ("SELECT", "0"), ("RENAMENX", "h", "s"), ("RENAME", "h", "s"), ("TYPE", "s"), ("HGET", "s", "g"),
        ("COPY", "l3", "s2", "REPLACE"), ("TYPE", "s2"), ("EXPIRE", "s2", "100"), approx("TTL", "s2"),
        ("OBJECT", "REFCOUNT", "l2"), ("OBJECT", "ENCODING", "l2"),
        scan_all("TYPE", "list"), scan_all("TYPE", "hash"), scan_all("TYPE", "set"),
        scan_all("TYPE", "zset"), scan_all("TYPE", "string"),
        sorted_("KEYS", "*"), ("DEL", "l2", "l3", "s", "s2", "nokey"), ("DBSIZE",),
        ("RPUSH", "q", "1"), ("FLUSHALL",), ("DBSIZE",),
    ],
}
TYPE_CASES["object_lfu_policy"] = [
    ("SET", "old", "v"), ("CONFIG", "SET", "maxmemory-policy", "allkeys-lfu"),
    ("SET", "k", "v"), ("OBJECT", "FREQ", "k"), approx("OBJECT", "IDLETIME", "k"),
    ("OBJECT", "IDLETIME", "nokey"), ("OBJECT", "FREQ", "nokey"),
    ("CONFIG", "SET", "maxmemory-policy", "volatile-lfu"), approx("OBJECT", "IDLETIME", "k"),
    # (IDLETIME right after leaving LFU reads the LFU bits as a clock in Redis: not compared)
    ("CONFIG", "SET", "maxmemory-policy", "allkeys-lru"), ("OBJECT", "FREQ", "k"),
    ("OBJECT", "REFCOUNT", "k"),
    ("CONFIG", "SET", "maxmemory-policy", "noeviction"), ("OBJECT", "FREQ", "k"),
]
TYPE_CASE_NEEDS = {"rename_copy_move_types": ("rpush", "hset", "sadd", "zadd"),
                   "object_lfu_policy": ("config",)}


def _run_case(pair, name, steps):
    f, r = pair
    assert f.alive(), "ferry died before case %r; log tail:\n%s" % (name, f.log_tail())
    mismatches, transcript = run_steps(f.port, r.port, steps)
    assert f.alive(), "ferry died during case %r; log tail:\n%s" % (name, f.log_tail())
    if mismatches:
        pytest.fail(format_report(name, mismatches, transcript), pytrace=False)


def _ferry_knows(port, name) -> bool:
    with RawClient(port) as c:
        rep = c.command(name)        # arity error if it exists, unknown command if not
    return not rep.startswith(b"-ERR unknown command")


@pytest.mark.parametrize("name", sorted(CASES))
def test_keys_case(pair, name):
    _run_case(pair, name, CASES[name])


@pytest.mark.parametrize("name", sorted(TYPE_CASES))
def test_keys_types_case(pair, name):
    missing = [c for c in TYPE_CASE_NEEDS[name] if not _ferry_knows(pair[0].port, c)]
    if missing:
        pytest.skip("ferry lacks %s" % ", ".join(missing))
    _run_case(pair, name, TYPE_CASES[name])


# ------------------------------------------------------- SCAN guarantee
def _scan_guarantee(server, seed):
    """Insert 5000 keys, then SCAN with COUNT 10 while adding and deleting
    other keys between calls (enough to force the table to grow and later to
    shrink). Every one of the 5000 keys, present throughout, must be
    returned; the iteration must terminate."""
    rng = random.Random(seed)
    stable = ["stable:%d" % i for i in range(5000)]
    with RawClient(server.port, timeout=10) as c:
        assert c.command("FLUSHALL") == b"+OK\r\n"
        for i in range(0, len(stable), 500):
            c.pipeline([["SET", k, "1"] for k in stable[i:i + 500]])
        seen = set()
        cursor = b"0"
        churn_next = 0
        live_churn = []
        calls = 0
        while True:
            rep = parse(c.command("SCAN", cursor, "COUNT", "10"))
            assert rep[0] == "array" and len(rep[1]) == 2, rep
            cursor = rep[1][0][1]
            for k in rep[1][1][1]:
                seen.add(k[1].decode())
            calls += 1
            # churn: grow by up to 40 keys per call for a while, then delete
            cmds = []
            if calls < 400:
                for _ in range(rng.randint(0, 40)):
                    k = "churn:%d" % churn_next
                    churn_next += 1
                    live_churn.append(k)
                    cmds.append(["SET", k, "x"])
            elif live_churn:
                for _ in range(min(len(live_churn), rng.randint(20, 80))):
                    cmds.append(["DEL", live_churn.pop(rng.randrange(len(live_churn)))])
            if cmds:
                c.pipeline(cmds)
            if cursor == b"0":
                break
            assert calls < 200000, "SCAN did not terminate"
        missing = [k for k in stable if k not in seen]
        assert not missing, "%d stable keys never returned, e.g. %r" % (len(missing), missing[:5])
        return calls


def test_scan_guarantee_ferry(ferry):
    for seed in (1, 2):
        _scan_guarantee(ferry, seed)


def test_scan_guarantee_with_expiring_keys(ferry):
    """Keys expiring during the scan are dropped from replies (and deleted);
    the persistent keys are all still returned."""
    with RawClient(ferry.port, timeout=10) as c:
        c.command("FLUSHALL")
        c.pipeline([["SET", "p:%d" % i, "1"] for i in range(2000)])
        c.pipeline([["SET", "v:%d" % i, "1", "PX", "30"] for i in range(2000)])
        time.sleep(0.1)
        seen, cursor = set(), b"0"
        while True:
            rep = parse(c.command("SCAN", cursor, "COUNT", "25"))
            cursor = rep[1][0][1]
            seen.update(k[1].decode() for k in rep[1][1][1])
            if cursor == b"0":
                break
        assert not any(k.startswith("v:") for k in seen)
        assert all("p:%d" % i in seen for i in range(2000))
        assert c.command("DBSIZE") == b":2000\r\n"
