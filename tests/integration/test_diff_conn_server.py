"""Tests for the connection and server commands (src/commands/cmd_conn.c,
src/commands/cmd_server.c, src/server/info.c): PING ECHO QUIT RESET HELLO AUTH SELECT,
CLIENT *, TIME LASTSAVE ROLE WAIT SHUTDOWN SAVE/BGSAVE MEMORY DEBUG INFO.

Three kinds of tests:
  - differential cases (diffkit): the same steps on ferry and on the
    reference redis-server 7.0.15, replies compared byte for byte, on a
    default pair, a pair with `requirepass` and a pair with DEBUG enabled;
  - scenario functions run against both servers whose observations must be
    equal (CLIENT KILL variants, whose replies depend on client addresses);
  - structural checks of replies that cannot be equal byte for byte (INFO,
    CLIENT LIST, MEMORY STATS, TIME) and of ferry's deliberate differences:
    it reports version 7.2.4 and implements 7.2's CLIENT SETINFO and
    CLIENT NO-TOUCH, and it has no append-only file yet (BGREWRITEAOF replies
    an error).
"""
from __future__ import annotations

import fcntl
import os
import pty
import re
import select
import shutil
import signal
import struct
import subprocess
import termios
import time

import pytest

from conftest import STARTUP_TIMEOUT, ServerProcess, ferry_binary, redis_binary, server_pair
from diffkit import cmd, format_report, hello, raw, raw_eof, run_steps, sleep
from resp_client import RawClient, encode_command, parse

REDIS_CLI = shutil.which("redis-cli") or "/usr/bin/redis-cli"
NOT_INT = b"-ERR value is not an integer or out of range\r\n"


def pipe(*cmds) -> bytes:
    return b"".join(encode_command(list(c)) for c in cmds)


def is_ferry(server) -> bool:
    """ferry's INFO has a ferry_version field; the suite also runs with
    redis-server as FERRY_SERVER (to check the tests), where the tests of
    ferry's own choices are skipped."""
    with RawClient(server.port) as c:
        return b"\r\nferry_version:" in c.command("INFO", "server")


def ferry_only(server):
    if not is_ferry(server):
        pytest.skip("checks a ferry-specific behaviour")


# ------------------------------------------------------- differential cases
CASES = {
    "ping_echo": [
        ("PING",), ("PING", "hello"), ("PING", ""), ("PING", "a", "b"), ("ping",),
        ("ECHO", "x"), ("ECHO", ""), ("ECHO",), ("ECHO", "a", "b"), ("echo", "\x00\xff"),
    ],
    "ping_resp3": [
        hello("3"), ("PING",), ("PING", "x"), ("ECHO", "y"), hello("2"), ("PING",),
    ],
    "select": [
        ("SELECT", "1"), ("SET", "k", "v1"), ("GET", "k"), ("SELECT", "0"), ("GET", "k"),
        ("SELECT", "15"), ("SELECT", "16"), ("SELECT", "-1"), ("SELECT", "x"), ("SELECT", "01"),
        ("SELECT", " 1"), ("SELECT", "1.0"), ("SELECT", "+1"), ("SELECT", "99999999999999999999"),
        ("SELECT", "2147483648"), ("SELECT", "-2147483649"), ("SELECT", ""), ("SELECT",),
        ("SELECT", "1", "2"), ("SELECT", "1"), ("GET", "k"), cmd("GET", "k", conn=1),
    ],
    "hello_basic": [
        hello(), hello("2"), hello("3"), ("CLIENT", "GETNAME"), hello("2"), ("CLIENT", "GETNAME"),
        ("HELLO", "4"), ("HELLO", "1"), ("HELLO", "0"), ("HELLO", "-1"), ("HELLO", "x"),
        ("HELLO", "2.0"), ("HELLO", "03"), ("HELLO", ""), ("HELLO", "4", "FOO"),
    ],
    "hello_options": [
        ("HELLO", "2", "AUTH"), ("HELLO", "2", "AUTH", "default"), hello("2", "AUTH", "default", "x"),
        ("HELLO", "2", "AUTH", "nobody", "x"), ("HELLO", "2", "FOO"), ("HELLO", "2", "setname"),
        ("HELLO", "2", "auth", "default", "x", "setname"),
        hello("2", "SETNAME", "foo"), ("CLIENT", "GETNAME"),
        ("HELLO", "2", "SETNAME", "a b"), ("CLIENT", "GETNAME"),
        hello("2", "SETNAME", "a", "SETNAME", "b"), ("CLIENT", "GETNAME"),
        ("HELLO", "3", "SETNAME", "good", "FOO"), ("CLIENT", "GETNAME"),
        ("HELLO", "3", "SETNAME", "c", "SETNAME"), ("CLIENT", "GETNAME"),
        hello("3", "setname", "", "auth", "default", "pw"), ("CLIENT", "GETNAME"),
        hello("2", "SeTnAmE", "mixed"), ("CLIENT", "GETNAME"),
    ],
    "auth_without_requirepass": [
        ("AUTH", "x"), ("AUTH", "default", "x"), ("AUTH", "DEFAULT", "x"), ("AUTH", "foo", "x"),
        ("AUTH", "a", "b", "c"), ("AUTH",), ("auth", "default", ""), ("PING",),
    ],
    "quit": [
        ("SET", "k", "v"), raw_eof(encode_command(["QUIT"])), ("GET", "k"),
        raw_eof(encode_command(["QUIT", "extra", "args"])),
        raw_eof(pipe(["PING"], ["QUIT"], ["PING"])),
    ],
    "reset": [
        ("CLIENT", "SETNAME", "n"), ("SELECT", "3"), ("SET", "k", "db3"), hello("3"),
        ("MULTI",), ("SET", "a", "1"), ("RESET",), ("CLIENT", "GETNAME"), ("GET", "k"),
        ("EXEC",), ("GET", "a"), ("PING",),
        ("WATCH", "w"), cmd("SET", "w", "changed", conn=1), ("RESET",), ("MULTI",), ("PING",), ("EXEC",),
        ("RESET", "x"), ("reset",),
    ],
    "reset_reply_modes": [
        # REPLY OFF is turned back on by RESET (its +RESET is seen) ...
        raw(pipe(["CLIENT", "REPLY", "OFF"], ["PING", "hidden"], ["RESET"])),
        ("PING",),
        # ... but a RESET under an armed SKIP is itself skipped.
        raw(pipe(["CLIENT", "REPLY", "SKIP"], ["RESET"], ["PING", "after"])),
    ],
    "client_basic": [
        ("CLIENT",), ("CLIENT", "FOO"), ("client", "foo", "bar"), ("CLIENT", "ID", "x"),
        ("CLIENT", "GETNAME"), ("CLIENT", "GETNAME", "x"), ("CLIENT", "SETNAME"),
        ("CLIENT", "SETNAME", "a", "b"), ("CLIENT", "SETNAME", "conn-1"), ("CLIENT", "GETNAME"),
        ("CLIENT", "SETNAME", "a b"), ("CLIENT", "SETNAME", "a\nb"), ("CLIENT", "SETNAME", "a\x7f"),
        ("CLIENT", "SETNAME", "\xe9"), ("CLIENT", "SETNAME", "\x00"), ("CLIENT", "GETNAME"),
        ("CLIENT", "SETNAME", "~!{}[]:;,."), ("CLIENT", "GETNAME"),
        ("CLIENT", "SETNAME", ""), ("CLIENT", "GETNAME"),
        hello("3"), ("CLIENT", "GETNAME"), ("CLIENT", "SETNAME", "x"), ("CLIENT", "GETNAME"),
        ("CLIENT", "INFO", "x"), ("CLIENT", "LIST", "TYPE"),
    ],
    "client_flags_and_tracking": [
        ("CLIENT", "NO-EVICT"), ("CLIENT", "NO-EVICT", "on"), ("CLIENT", "NO-EVICT", "OFF"),
        ("CLIENT", "NO-EVICT", "maybe"), ("CLIENT", "NO-EVICT", "on", "x"),
        ("CLIENT", "GETREDIR"), ("CLIENT", "TRACKINGINFO"), hello("3"), ("CLIENT", "TRACKINGINFO"),
        ("CLIENT", "GETREDIR"),
    ],
    "client_pause_validation": [
        ("CLIENT", "PAUSE"), ("CLIENT", "PAUSE", "x"), ("CLIENT", "PAUSE", "-1"), ("CLIENT", "PAUSE", "1.5"),
        ("CLIENT", "PAUSE", "0", "foo"), ("CLIENT", "PAUSE", "0", "ALL", "x"), ("CLIENT", "PAUSE", "0"),
        ("CLIENT", "PAUSE", "0", "write"), ("CLIENT", "PAUSE", "0", "ALL"), ("CLIENT", "UNPAUSE"),
        ("CLIENT", "UNPAUSE", "x"), ("PING",),
    ],
    "client_reply": [
        ("CLIENT", "REPLY"), ("CLIENT", "REPLY", "foo"), ("CLIENT", "REPLY", "ON"),
        raw(pipe(["CLIENT", "REPLY", "SKIP"], ["PING", "a"], ["PING", "b"])),
        raw(pipe(["CLIENT", "REPLY", "OFF"], ["PING", "c"], ["GET", "nokey"], ["CLIENT", "REPLY", "SKIP"],
                 ["PING", "d"], ["CLIENT", "REPLY", "foo"], ["CLIENT", "REPLY", "ON"], ["PING", "e"]), n=2),
        raw(pipe(["CLIENT", "REPLY", "SKIP"], ["CLIENT", "REPLY", "SKIP"], ["PING", "x"], ["PING", "y"])),
        raw(pipe(["CLIENT", "REPLY", "SKIP"], ["CLIENT", "REPLY", "ON"], ["PING", "z"]), n=2),
        raw(pipe(["CLIENT", "REPLY", "SKIP"], ["NOSUCHCOMMAND"], ["PING", "w"])),
        hello("3"),
        raw(pipe(["CLIENT", "REPLY", "SKIP"], ["PING", "a"], ["PING", "b"])),
    ],
    "client_list_filters": [
        ("CLIENT", "LIST", "TYPE", "foo"), ("CLIENT", "LIST", "TYPE", "pubsub"),
        ("CLIENT", "LIST", "TYPE", "master"), ("CLIENT", "LIST", "TYPE", "replica"),
        ("CLIENT", "LIST", "TYPE", "SLAVE"), ("CLIENT", "LIST", "ID"), ("CLIENT", "LIST", "ID", "1", "x"),
        ("CLIENT", "LIST", "ID", "01"), ("CLIENT", "LIST", "ID", "1.5"), ("CLIENT", "LIST", "ID", "999999"),
        ("CLIENT", "LIST", "ID", "-1"), ("CLIENT", "LIST", "ID", "0"),
        ("CLIENT", "LIST", "ID", "99999999999999999999"), ("CLIENT", "LIST", "foo"),
        ("CLIENT", "LIST", "TYPE", "normal", "ID", "1"), ("CLIENT", "LIST", "ID", "1", "TYPE", "normal"),
        hello("3"), ("CLIENT", "LIST", "ID", "999999"), ("CLIENT", "LIST", "TYPE", "pubsub"),
    ],
    "client_kill_errors": [
        ("CLIENT", "KILL"), ("CLIENT", "KILL", "1.2.3.4:5"), ("CLIENT", "KILL", "foo"), ("CLIENT", "KILL", "ID"),
        ("CLIENT", "KILL", "ID", "x"), ("CLIENT", "KILL", "ID", "999999"), ("CLIENT", "KILL", "ID", "0"),
        ("CLIENT", "KILL", "ID", "-5"), ("CLIENT", "KILL", "ID", "01"), ("CLIENT", "KILL", "ADDR", "1.2.3.4:5"),
        ("CLIENT", "KILL", "LADDR", "1.2.3.4:5"), ("CLIENT", "KILL", "TYPE", "foo"),
        ("CLIENT", "KILL", "TYPE", "normal", "SKIPME", "maybe"), ("CLIENT", "KILL", "SKIPME", "yes"),
        ("CLIENT", "KILL", "USER", "nobody"), ("CLIENT", "KILL", "FOO", "bar"),
        ("CLIENT", "KILL", "ID", "1", "ID"), ("CLIENT", "KILL", "ID", "x", "ID"), ("CLIENT", "KILL", "a", "b", "c"),
        ("CLIENT", "KILL", "TYPE", "pubsub"), ("CLIENT", "KILL", "TYPE", "master"),
        ("CLIENT", "KILL", "TYPE", "slave"), ("CLIENT", "KILL", "TYPE", "replica"),
        ("CLIENT", "KILL", "TYPE", "pubsub", "SKIPME", "no"), ("CLIENT", "KILL", "ADDR", "1.2.3.4:5", "SKIPME", "no"),
        ("CLIENT", "KILL", "ID", "999999", "TYPE", "foo"), ("PING",),
    ],
    "server_misc": [
        ("TIME", "x"), ("LASTSAVE", "x"), ("ROLE",), ("ROLE", "x"), ("role",),
        ("WAIT", "0", "0"), ("WAIT", "1", "10"), ("WAIT", "-1", "0"), ("WAIT", "x", "0"), ("WAIT", "0", "x"),
        ("WAIT", "0", "-1"), ("WAIT", "x", "x"), ("WAIT", "0", "1.5"), ("WAIT",), ("WAIT", "0"),
        ("SHUTDOWN", "FOO"), ("SHUTDOWN", "NOSAVE", "SAVE"), ("SHUTDOWN", "ABORT"), ("SHUTDOWN", "abort", "NOW"),
        ("SHUTDOWN", "NOW", "FOO"), ("SHUTDOWN", "ABORT", "FORCE"), ("SHUTDOWN", "SAVE", "ABORT"),
        ("BGSAVE", "foo"), ("BGSAVE", "SCHEDULE", "x"), ("SAVE", "x"), ("BGREWRITEAOF", "x"),
        ("MULTI",), ("SHUTDOWN",), ("SAVE",), ("PING",), ("EXEC",),
        ("MULTI",), ("ROLE",), ("WAIT", "0", "0"), ("EXEC",),
    ],
    "memory": [
        ("MEMORY",), ("MEMORY", "HELP"), ("memory", "help", "x"), ("MEMORY", "FOO"), ("MEMORY", "USAGE"),
        ("MEMORY", "USAGE", "nokey"), ("SET", "a", "1"), ("MEMORY", "USAGE", "a", "SAMPLES"),
        ("MEMORY", "USAGE", "a", "SAMPLES", "x"), ("MEMORY", "USAGE", "a", "FOO", "1"),
        ("MEMORY", "USAGE", "a", "SAMPLES", "-1"), ("MEMORY", "USAGE", "nokey", "SAMPLES", "0"),
        ("MEMORY", "USAGE", "nokey", "samples", "5", "SAMPLES", "6"), ("MEMORY", "USAGE", "a", "samples", "5", "x"),
        ("MEMORY", "STATS", "x"), ("MEMORY", "DOCTOR", "x"), ("MEMORY", "MALLOC-STATS", "x"),
        ("MEMORY", "PURGE", "x"), ("MEMORY", "PURGE"),
        ("MEMORY", "DOCTOR"), hello("3"), ("MEMORY", "DOCTOR"), ("MEMORY", "USAGE", "nokey"),
    ],
    "debug_not_allowed": [
        ("DEBUG",), ("DEBUG", "SLEEP", "0"), ("DEBUG", "HELP"), ("DEBUG", "FOO"), ("debug", "object", "k"),
    ],
    "info_sections": [
        ("INFO", "bogus"), ("INFO", "keyspace"), ("INFO", "cluster"), ("INFO", "CLUSTER"),
        ("INFO", "modules"), ("INFO", "modules", "MODULES"),
        ("SET", "a", "1"), ("SET", "b", "2"), ("SELECT", "3"), ("SET", "c", "3"),
        ("INFO", "keyspace"), ("INFO", "KEYSPACE", "cluster"), ("INFO", "cluster", "keyspace", "cluster"),
        ("INFO", "keyspace", "bogus"), hello("3"), ("INFO", "keyspace"), ("INFO", "nothing"),
    ],
    "info_errorstats": [
        ("CONFIG", "RESETSTAT"), ("INFO", "errorstats"),
        ("GET",), ("SET", "k", "v"), ("INCR", "k"), ("AUTH", "x"), ("HELLO", "4"), ("AUTH", "foo", "x"),
        ("NOSUCHCOMMAND",), ("CLIENT", "NOSUCH"), ("SELECT", "99"),
        ("INFO", "errorstats"),
    ],
}

# A server with requirepass: authentication paths.
AUTH_CASES = {
    "noauth": [
        ("PING",), ("GET", "a"), ("ECHO", "x"), ("SELECT", "1"), ("CLIENT", "ID"), ("INFO", "keyspace"),
        ("HELLO",), ("HELLO", "3"), ("HELLO", "2", "SETNAME", "x"), ("HELLO", "4"), ("HELLO", "x"),
        ("HELLO", "3", "FOO"), ("RESET",), ("PING",), raw_eof(encode_command(["QUIT"])),
    ],
    "auth_paths": [
        ("AUTH", "x"), ("AUTH", "default", "x"), ("AUTH", "foo", "secret"), ("AUTH", "DEFAULT", "secret"),
        ("AUTH", "a", "b", "c"), ("PING",), ("AUTH", "secret"), ("PING",), ("AUTH", "x"), ("PING",),
        ("AUTH", "default", "secret"), ("RESET",), ("PING",), ("AUTH", "default", "secret"), ("PING",),
    ],
    "hello_auth": [
        ("HELLO", "3", "AUTH", "default", "x"), ("HELLO", "3", "AUTH", "foo", "secret"),
        hello("3", "AUTH", "default", "secret", "SETNAME", "nm"), ("CLIENT", "GETNAME"), ("PING",),
        ("HELLO", "4", "AUTH", "default", "secret"), ("HELLO", "2", "AUTH", "default", "bad"), ("PING",),
    ],
    "hello_auth_option_order": [
        ("HELLO", "3", "SETNAME", "a b", "AUTH", "default", "secret"), ("PING",),
        ("HELLO", "3", "AUTH", "default", "bad", "SETNAME", "a b"), ("PING",),
        ("HELLO", "3", "SETNAME", "early"), ("AUTH", "secret"), ("CLIENT", "GETNAME"),
        cmd("HELLO", "3", "AUTH", "default", "secret", "SETNAME", "a b", conn=1), cmd("PING", conn=1),
        cmd("CLIENT", "GETNAME", conn=1),
    ],
}

# A server with enable-debug-command yes.
DEBUG_CASES = {
    "debug_subcommands": [
        ("DEBUG",), ("DEBUG", "FOO"), ("DEBUG", "foo", "bar"), ("DEBUG", "SLEEP"), ("DEBUG", "SLEEP", "0", "1"),
        ("DEBUG", "SLEEP", "0"), ("DEBUG", "SLEEP", "x"), ("DEBUG", "SLEEP", "0.01"), ("DEBUG", "SLEEP", "-1"),
        ("DEBUG", "SET-ACTIVE-EXPIRE"), ("DEBUG", "SET-ACTIVE-EXPIRE", "0"), ("DEBUG", "set-active-expire", "1"),
        ("DEBUG", "SET-ACTIVE-EXPIRE", "x"), ("DEBUG", "SET-ACTIVE-EXPIRE", "1"),
        ("DEBUG", "OBJECT"), ("DEBUG", "OBJECT", "nokey"), ("DEBUG", "OBJECT", "a", "b"),
        ("DEBUG", "ERROR"), ("DEBUG", "ERROR", "foo bar"), ("DEBUG", "ERROR", "ERR custom"),
        ("DEBUG", "ERROR", "line\r\nbreak"), ("DEBUG", "CHANGE-REPL-ID"), ("DEBUG", "CHANGE-REPL-ID", "x"),
        ("DEBUG", "HELP", "x"), ("PING",),
    ],
    "debug_error_not_counted": [
        ("CONFIG", "RESETSTAT"), ("DEBUG", "ERROR", "foo bar"), ("DEBUG", "ERROR", "ERR x"),
        ("INFO", "errorstats"),
    ],
    "debug_active_expire_off": [
        ("DEBUG", "SET-ACTIVE-EXPIRE", "0"), ("SET", "k", "v", "PX", "30"), sleep(0.3),
        ("DBSIZE",), ("GET", "k"), ("DBSIZE",), ("DEBUG", "SET-ACTIVE-EXPIRE", "1"),
    ],
}


# ------------------------------------------------------------------ fixtures
class AuthServer(ServerProcess):
    """A server started with --requirepass: ready once AUTH + PING succeed
    (conftest's readiness probe is a bare PING, which gets -NOAUTH)."""

    PASSWORD = "secret"

    def __init__(self, kind):
        super().__init__(kind, ferry_binary() if kind == "ferry" else redis_binary(),
                         ("--requirepass", self.PASSWORD))

    def _wait_ready(self) -> None:
        probe = encode_command(["AUTH", self.PASSWORD]) + encode_command(["PING"])
        deadline = time.monotonic() + STARTUP_TIMEOUT
        while True:
            if self.proc.poll() is not None:
                raise RuntimeError("exited with status %s during startup" % self.proc.returncode)
            try:
                with RawClient(self.port, timeout=1.0) as c:
                    c.send(probe)
                    if c.read_replies(2) == [b"+OK\r\n", b"+PONG\r\n"] and self.proc.poll() is None:
                        return
            except (OSError, TimeoutError, Exception):  # noqa: BLE001  not up yet
                pass
            if time.monotonic() > deadline:
                raise TimeoutError("no +PONG after AUTH within %.0fs" % STARTUP_TIMEOUT)
            time.sleep(0.02)


@pytest.fixture(scope="module")
def auth_pair():
    with server_pair(start=lambda kind: AuthServer(kind).start()) as p:
        yield p


@pytest.fixture(scope="module")
def debug_pair():
    with server_pair("--enable-debug-command", "yes") as p:
        yield p


def _run_case(pair, name, steps, flush=True):
    f, r = pair
    assert f.alive(), "ferry died before case %r; log tail:\n%s" % (name, f.log_tail())
    mismatches, transcript = run_steps(f.port, r.port, steps, flush=flush)
    assert f.alive(), "ferry died during case %r; log tail:\n%s" % (name, f.log_tail())
    if mismatches:
        pytest.fail(format_report(name, mismatches, transcript), pytrace=False)


@pytest.mark.parametrize("name", sorted(CASES))
def test_conn_server_case(pair, name):
    _run_case(pair, name, CASES[name])


@pytest.mark.parametrize("name", sorted(AUTH_CASES))
def test_auth_case(auth_pair, name):
    _run_case(auth_pair, name, AUTH_CASES[name], flush=False)   # FLUSHALL itself would need AUTH


@pytest.mark.parametrize("name", sorted(DEBUG_CASES))
def test_debug_case(debug_pair, name):
    _run_case(debug_pair, name, DEBUG_CASES[name])


def test_debug_local_allows_loopback(server_factory):
    f = server_factory("ferry", "--enable-debug-command", "local")
    r = server_factory("redis", "--enable-debug-command", "local")
    mismatches, transcript = run_steps(f.port, r.port, [("DEBUG", "SLEEP", "0"), ("DEBUG", "OBJECT", "nokey")])
    if mismatches:
        pytest.fail(format_report("debug_local", mismatches, transcript), pytrace=False)


# --------------------------------------------- scenarios run on both servers
def _id(c: RawClient) -> int:
    return parse(c.command("CLIENT", "ID"))[1]


def _addr(c: RawClient) -> str:
    host, port = c.sock.getsockname()[:2]
    return "%s:%d" % (host, port)


def _closed(c: RawClient) -> bool:
    """True if the server closed c (a PING gets no answer but EOF)."""
    try:
        c.send(encode_command(["PING"]))
        c.read_reply(timeout=2)
        return False
    except Exception:  # noqa: BLE001  ServerClosed / reset
        return True


def _kill_scenario(server):
    """Observations of CLIENT KILL in its forms; must be equal on both servers."""
    out = []
    port = server.port
    a = RawClient(port)
    try:
        def victim():
            v = RawClient(port)
            v.command("PING")
            return v

        b = victim()
        out.append(("old form other", a.command("CLIENT", "KILL", _addr(b)), _closed(b)))
        b = victim()
        out.append(("id other", a.command("CLIENT", "KILL", "ID", str(_id(b))), _closed(b)))
        b = victim()
        out.append(("addr other", a.command("CLIENT", "KILL", "ADDR", _addr(b)), _closed(b)))
        b = victim()
        out.append(("id self skipme default", a.command("CLIENT", "KILL", "ID", str(_id(a))), _closed(b)))
        out.append(("id+type mismatch", a.command("CLIENT", "KILL", "ID", str(_id(b)), "TYPE", "pubsub"),
                    _closed(b)))
        out.append(("laddr", a.command("CLIENT", "KILL", "LADDR", "127.0.0.1:%d" % port), _closed(b)))
        b, b2 = victim(), victim()
        out.append(("type normal", a.command("CLIENT", "KILL", "TYPE", "normal"), _closed(b), _closed(b2)))
        b = victim()
        out.append(("user default", a.command("CLIENT", "KILL", "USER", "default"), _closed(b)))
        out.append(("self old form", a.command("CLIENT", "KILL", _addr(a)), a.read_until_eof(timeout=3)))
        a.close()
        a = RawClient(port)
        out.append(("self skipme no", a.command("CLIENT", "KILL", "ID", str(_id(a)), "SKIPME", "no"),
                    a.read_until_eof(timeout=3)))
        a.close()
        a = RawClient(port)
        me = str(_id(a))
        a.send(pipe(["MULTI"], ["CLIENT", "KILL", "ID", me, "SKIPME", "no"], ["EXEC"]))
        out.append(("self in exec", a.read_until_eof(timeout=3)))
    finally:
        a.close()
    return out


def test_client_kill_scenarios(ferry, redis):
    got, want = _kill_scenario(ferry), _kill_scenario(redis)
    for g, w in zip(got, want):
        assert g == w, "CLIENT KILL %s: ferry %r, redis %r" % (g[0], g[1:], w[1:])
    assert len(got) == len(want)


def _list_scenario(server):
    """CLIENT LIST / INFO observations with the variable fields removed."""
    port = server.port
    out = []
    with RawClient(port) as a, RawClient(port) as b:
        a.command("CLIENT", "SETNAME", "alpha")
        b.command("CLIENT", "SETNAME", "beta")
        b.command("SELECT", "5")
        ida, idb = _id(a), _id(b)
        lst = parse(a.command("CLIENT", "LIST"))[1].decode()
        names = [re.search(r" name=(\S*)", ln).group(1) for ln in lst.split("\n") if ln]
        # (a harness probe connection may still be listed: unnamed, so ignored)
        out.append(("list names in id order", [n for n in names if n]))
        out.append(("list ends with newline", lst.endswith("\n")))
        one = parse(a.command("CLIENT", "LIST", "ID", str(idb), "999999", str(ida)))[1].decode()
        out.append(("list by id", [re.search(r" name=(\S*)", ln).group(1) for ln in one.split("\n") if ln]))
        info = parse(b.command("CLIENT", "INFO"))[1].decode()
        out.append(("info name/db/cmd", re.search(r" name=(\S*)", info).group(1),
                    re.search(r" db=(\d+)", info).group(1), re.search(r" cmd=(\S+)", info).group(1)))
        a.command("MULTI")
        a.command("PING")
        out.append(("multi flag", re.search(r" flags=(\S+) .* multi=(-?\d+)",
                                            parse(b.command("CLIENT", "LIST", "ID", str(ida)))[1].decode()).groups()))
        a.command("DISCARD")
    return out


def test_client_list_scenario(ferry, redis):
    assert _list_scenario(ferry) == _list_scenario(redis)


CLIENT_LIST_FIELDS = ["id", "addr", "laddr", "fd", "name", "age", "idle", "flags", "db", "sub", "psub", "ssub",
                      "multi", "qbuf", "qbuf-free", "argv-mem", "multi-mem", "rbs", "rbp", "obl", "oll", "omem",
                      "tot-mem", "events", "cmd", "user", "redir", "resp"]


def test_client_list_fields(ferry):
    with RawClient(ferry.port) as a, RawClient(ferry.port) as b:
        b.command("CLIENT", "SETNAME", "other")
        ida, idb = _id(a), _id(b)
        text = parse(a.command("CLIENT", "LIST"))[1].decode()
        assert text.endswith("\n")
        # ours only (a harness probe connection may not be reaped yet)
        lines = [ln for ln in text.split("\n") if re.match(r"id=(%d|%d) " % (ida, idb), ln)]
        assert len(lines) == 2, text
        for ln in lines:
            fields = [kv.split("=", 1)[0] for kv in ln.split(" ")]
            assert fields[:len(CLIENT_LIST_FIELDS)] == CLIENT_LIST_FIELDS, ln
        mine = dict(kv.split("=", 1) for kv in lines[0].split(" "))
        assert int(mine["id"]) == ida
        assert mine["addr"] == _addr(a) and mine["laddr"] == "127.0.0.1:%d" % ferry.port
        assert mine["cmd"] == "client|list" and mine["user"] == "default" and mine["resp"] == "2"
        assert "name=other " in lines[1]
        assert int(mine["age"]) >= 0 and int(mine["idle"]) >= 0 and int(mine["db"]) == 0
        # TYPE normal lists everybody, the other types nobody
        normal = parse(a.command("CLIENT", "LIST", "TYPE", "normal"))[1].decode()
        assert "id=%d " % ida in normal and "id=%d " % idb in normal
        assert a.command("CLIENT", "LIST", "TYPE", "pubsub") == b"$0\r\n\r\n"


def test_client_setinfo_and_no_touch(ferry):
    """7.2 features the 7.0 oracle lacks."""
    ferry_only(ferry)
    with RawClient(ferry.port) as c:
        assert c.command("CLIENT", "SETINFO", "LIB-NAME", "redis-py") == b"+OK\r\n"
        assert c.command("CLIENT", "SETINFO", "lib-ver", "5.0.8") == b"+OK\r\n"
        assert c.command("CLIENT", "SETINFO", "LIB-NAME", "bad name") == \
            b"-ERR LIB-NAME cannot contain spaces, newlines or special characters.\r\n"
        assert c.command("CLIENT", "SETINFO", "badger", "x") == b"-ERR Unrecognized option 'badger'\r\n"
        assert c.command("CLIENT", "SETINFO", "LIB-NAME") == \
            b"-ERR wrong number of arguments for 'client|setinfo' command\r\n"
        info = parse(c.command("CLIENT", "INFO"))[1].decode()
        assert "lib-name=redis-py lib-ver=5.0.8" in info, info
        assert c.command("CLIENT", "NO-TOUCH", "on") == b"+OK\r\n"
        assert re.search(r" flags=\S*T", parse(c.command("CLIENT", "INFO"))[1].decode())
        assert c.command("CLIENT", "NO-TOUCH", "maybe") == b"-ERR syntax error\r\n"
        assert c.command("CLIENT", "NO-EVICT", "on") == b"+OK\r\n"
        assert c.command("RESET") == b"+RESET\r\n"     # 7.2: RESET turns NO-TOUCH / NO-EVICT off
        flags = re.search(r" flags=(\S+)", parse(c.command("CLIENT", "INFO"))[1].decode()).group(1)
        assert flags == "N", flags
        help_lines = parse(c.command("CLIENT", "HELP"))[1]
        text = b"\n".join(x[1] for x in help_lines)
        for word in (b"SETINFO", b"NO-TOUCH", b"NO-EVICT", b"KILL", b"LIST", b"REPLY"):
            assert word in text


def test_hello_reports_ferry_version(ferry):
    ferry_only(ferry)
    with RawClient(ferry.port) as c:
        m = parse(c.command("HELLO", "3"))
        assert m[0] == "map"
        d = {k[1]: v for k, v in m[1]}
        assert d[b"version"] == ("bulk", b"7.2.4")
        assert d[b"id"] == ("int", _id(c))
        assert d[b"proto"] == ("int", 3)


# ------------------------------------------------------ server structural
def test_time_and_lastsave(ferry):
    with RawClient(ferry.port) as c:
        v = parse(c.command("TIME"))
        assert v[0] == "array" and len(v[1]) == 2 and all(x[0] == "bulk" for x in v[1])
        sec, usec = int(v[1][0][1]), int(v[1][1][1])
        assert abs(sec - time.time()) < 5 and 0 <= usec < 1000000
        last = parse(c.command("LASTSAVE"))
        assert last[0] == "int" and abs(last[1] - time.time()) < 120


@pytest.mark.parametrize("kind", ["ferry", "redis"])
def test_bgrewriteaof_with_the_aof_off_writes_a_base_that_debug_loadaof_reads(server_factory, kind):
    """As redis-server 7.0: with appendonly no, BGREWRITEAOF still writes
    appendonlydir/ with a base and a manifest naming only it, and DEBUG
    LOADAOF loads it back (the dataset as of the rewrite)."""
    s = server_factory(kind, "--appendonly", "no", "--enable-debug-command", "yes")
    with RawClient(s.port) as c:
        c.command("SET", "k", "v")
        c.command("EXPIRE", "k", "1000")
        assert c.command("BGREWRITEAOF") == b"+Background append only file rewriting started\r\n"
        deadline = time.time() + 10
        while b"aof_rewrite_in_progress:0" not in c.command("INFO", "persistence") and time.time() < deadline:
            time.sleep(0.02)
        info = c.command("INFO", "persistence")
        assert b"aof_rewrites:1\r\n" in info and b"aof_last_bgrewrite_status:ok" in info
        assert b"aof_enabled:0" in info
        c.command("SET", "later", "x")  # not in the base: gone after the load
        assert c.command("DEBUG", "LOADAOF") == b"+OK\r\n"
        assert c.command("GET", "k") == b"$1\r\nv\r\n"
        assert 990 <= int(c.command("TTL", "k")[1:-2]) <= 1000
        assert c.command("EXISTS", "later") == b":0\r\n"
    d = os.path.join(s.workdir, "appendonlydir")
    with open(os.path.join(d, "appendonly.aof.manifest")) as f:
        assert f.read() == "file appendonly.aof.1.base.rdb seq 1 type b\n"


@pytest.mark.parametrize("kind", ["ferry", "redis"])
def test_bgrewriteaof_in_a_transaction_is_scheduled_and_runs_with_the_aof_off(server_factory, kind):
    """Inside EXEC the rewrite is only scheduled; the cron starts it later,
    whether or not the AOF is on (redis-server 7.0)."""
    s = server_factory(kind, "--appendonly", "no")
    with RawClient(s.port) as c:
        assert c.command("MULTI") == b"+OK\r\n"
        assert c.command("SET", "k", "v") == b"+QUEUED\r\n"
        assert c.command("BGREWRITEAOF") == b"+QUEUED\r\n"
        assert c.command("EXEC") == b"*2\r\n+OK\r\n+Background append only file rewriting scheduled\r\n"
        deadline = time.time() + 10
        while time.time() < deadline:
            info = c.command("INFO", "persistence")
            if b"aof_rewrites:1\r\n" in info and b"aof_rewrite_in_progress:0" in info:
                break
            time.sleep(0.02)
        assert b"aof_rewrites:1\r\n" in info and b"aof_rewrite_scheduled:0" in info
    with open(os.path.join(s.workdir, "appendonlydir", "appendonly.aof.manifest")) as f:
        assert f.read() == "file appendonly.aof.1.base.rdb seq 1 type b\n"


def test_debug_quicklist_packed_threshold_checks_like_redis(server_factory):
    """Accepted and checked as redis-server 7.0 checks it (ferry's lists have
    no plain/packed split, so a valid value changes nothing)."""
    values = ["1b", "100", "0", "1k", "4293918720", "4293918721", "4gb", "4294967296", "abc", "-1", "3.5"]
    replies = []
    for kind in ("ferry", "redis"):
        s = server_factory(kind, "--enable-debug-command", "yes")
        with RawClient(s.port) as c:
            replies.append([c.command("DEBUG", "QUICKLIST-PACKED-THRESHOLD", v) for v in values])
            replies[-1].append(c.command("RPUSH", "l", "x" * 5000))
    assert replies[0] == replies[1]
    assert replies[0][0] == b"+OK\r\n" and replies[0][5].startswith(b"-ERR argument must be a memory value")


@pytest.mark.parametrize("args", [(), ("NOSAVE",), ("NOW", "FORCE"), ("SAVE", "FORCE")])
def test_shutdown_exits_cleanly(ferry_factory, args):
    f = ferry_factory()
    with RawClient(f.port) as c, RawClient(f.port) as other:
        other.command("PING")
        c.send(encode_command(["SHUTDOWN"] + list(args)))
        assert c.read_until_eof(timeout=5) == b""       # no reply, the connection just closes
        assert other.read_until_eof(timeout=5) == b""
    assert f.proc.wait(timeout=5) == 0


def test_memory_usage_and_stats(ferry):
    with RawClient(ferry.port) as c:
        c.command("SET", "small", "v")
        c.command("SET", "big", "x" * 10000)
        small = parse(c.command("MEMORY", "USAGE", "small"))
        big = parse(c.command("MEMORY", "USAGE", "big", "SAMPLES", "0"))
        assert small[0] == big[0] == "int"
        assert 6 <= small[1] < 200 and 10000 <= big[1] < 11000
        for proto in ("2", "3"):
            c.command("HELLO", proto)
            st = parse(c.command("MEMORY", "STATS"))
            if proto == "3":
                assert st[0] == "map"
                pairs = st[1]
            else:
                assert st[0] == "array"
                pairs = list(zip(st[1][::2], st[1][1::2]))
            d = {k[1].decode(): v for k, v in pairs}
            for k in ("peak.allocated", "total.allocated", "startup.allocated", "clients.normal", "overhead.total",
                      "keys.count", "dataset.bytes", "fragmentation.bytes"):
                assert d[k][0] == "int", (k, d[k])
            assert d["keys.count"][1] == 2
            assert "db.0" in d and "db.1" not in d
            assert d["dataset.percentage"][0] == ("double" if proto == "3" else "bulk")
        assert parse(c.command("MEMORY", "MALLOC-STATS"))[0] in ("verbatim", "bulk")


def test_debug_object(ferry_factory):
    f = ferry_factory("--enable-debug-command", "yes")
    with RawClient(f.port) as c:
        c.command("SET", "i", "123")
        c.command("SET", "big", "12345")
        c.command("SET", "s", "hello")
        c.command("SET", "r", "a" * 100)
        pat = (rb"^\+Value at:0x[0-9a-f]+ refcount:(\d+) encoding:(\w+) serializedlength:(\d+) "
               rb"lru:\d+ lru_seconds_idle:\d+\r\n$")
        got = {}
        for k in ("i", "big", "s", "r"):
            m = re.match(pat, c.command("DEBUG", "OBJECT", k))
            assert m, k
            got[k] = (int(m.group(1)), m.group(2).decode(), int(m.group(3)))
        assert got["i"] == (2147483647, "int", 2)
        assert got["big"] == (1, "int", 3)
        assert got["s"] == (1, "embstr", 6)
        assert got["r"][1] == "raw"
        assert parse(c.command("DEBUG", "HELP"))[0] == "array"


# ------------------------------------------------------------------ INFO
REQUIRED_FIELDS = {
    "Server": ["redis_version", "redis_git_sha1", "redis_git_dirty", "redis_build_id", "redis_mode", "os",
               "arch_bits", "multiplexing_api", "gcc_version", "process_id", "process_supervised", "run_id",
               "tcp_port", "server_time_usec", "uptime_in_seconds", "uptime_in_days", "hz", "configured_hz",
               "lru_clock", "executable", "config_file"],
    "Clients": ["connected_clients", "cluster_connections", "maxclients", "client_recent_max_input_buffer",
                "client_recent_max_output_buffer", "blocked_clients", "tracking_clients",
                "clients_in_timeout_table"],
    "Memory": ["used_memory", "used_memory_human", "used_memory_rss", "used_memory_rss_human", "used_memory_peak",
               "used_memory_peak_human", "used_memory_peak_perc", "used_memory_overhead", "used_memory_dataset",
               "total_system_memory", "total_system_memory_human", "maxmemory", "maxmemory_human",
               "maxmemory_policy", "mem_fragmentation_ratio", "mem_allocator"],
    "Persistence": ["loading", "rdb_changes_since_last_save", "rdb_bgsave_in_progress", "rdb_last_save_time",
                    "rdb_last_bgsave_status", "aof_enabled", "aof_rewrite_in_progress"],
    "Stats": ["total_connections_received", "total_commands_processed", "instantaneous_ops_per_sec",
              "total_net_input_bytes", "total_net_output_bytes", "instantaneous_input_kbps", "rejected_connections",
              "expired_keys", "evicted_keys", "keyspace_hits", "keyspace_misses", "pubsub_channels",
              "total_error_replies"],
    "Replication": ["role", "connected_slaves", "master_replid", "master_repl_offset"],
    "CPU": ["used_cpu_sys", "used_cpu_user", "used_cpu_sys_children", "used_cpu_user_children"],
    "Cluster": ["cluster_enabled"],
}
DEFAULT_SECTIONS = ["Server", "Clients", "Memory", "Persistence", "Stats", "Replication", "CPU", "Modules",
                    "Errorstats", "Cluster", "Keyspace"]
ALL_SECTIONS = ["Server", "Clients", "Memory", "Persistence", "Stats", "Replication", "CPU", "Modules",
                "Commandstats", "Errorstats", "Latencystats", "Cluster", "Keyspace"]
NUMBER = r"-?\d+"
FLOAT = r"-?\d+\.\d+"
HUMAN = r"\d+(B|\.\d\d[KMGTP])"
FORMATS = {
    "used_memory_human": HUMAN, "used_memory_rss_human": HUMAN, "used_memory_peak_human": HUMAN,
    "total_system_memory_human": HUMAN, "maxmemory_human": HUMAN, "used_memory_peak_perc": FLOAT + "%",
    "mem_fragmentation_ratio": FLOAT, "instantaneous_input_kbps": FLOAT, "used_cpu_sys": r"\d+\.\d{6}",
    "used_cpu_user": r"\d+\.\d{6}", "used_cpu_sys_children": r"\d+\.\d{6}", "used_cpu_user_children": r"\d+\.\d{6}",
    "master_replid": r"[0-9a-f]{40}", "run_id": r"[0-9a-f]{40}", "redis_version": r"7\.2\.4",
    "redis_git_sha1": "00000000", "redis_mode": "standalone", "role": "master", "mem_allocator": "libc",
    "multiplexing_api": r"epoll|kqueue", "gcc_version": r"\d+\.\d+\.\d+", "process_supervised": "no",
    "maxmemory_policy": "noeviction", "rdb_last_bgsave_status": "ok", "config_file": r".*", "os": r".+",
    "executable": r"/.+", "redis_build_id": r"[0-9a-f]+", "cluster_enabled": "0",
}


def parse_info(text: str):
    """{section: [(field, value), ...]} in order; asserts Redis's layout."""
    assert text.endswith("\r\n")
    blocks = text.split("\r\n\r\n")
    out = {}
    for i, block in enumerate(blocks):
        lines = block.split("\r\n")
        if i == len(blocks) - 1:
            assert lines[-1] == "", repr(block[-40:])
            lines = lines[:-1]
        assert lines and lines[0].startswith("# "), block[:80]
        title = lines[0][2:]
        assert title not in out
        fields = []
        for ln in lines[1:]:
            assert ":" in ln and "\n" not in ln and "\r" not in ln, ln
            k, v = ln.split(":", 1)
            fields.append((k, v))
        out[title] = fields
    return out


def _info(c: RawClient, *args) -> str:
    v = parse(c.command("INFO", *args))
    assert v[0] in ("bulk", "verbatim")
    return v[1].decode()


def test_info_layout_and_fields(ferry):
    formats = dict(FORMATS)
    if not is_ferry(ferry):
        formats.update(redis_version=r"\d+\.\d+\.\d+", mem_allocator=r"\S+")
    with RawClient(ferry.port) as c:
        c.command("SET", "k", "v")
        secs = parse_info(_info(c))
        assert list(secs) == DEFAULT_SECTIONS
        assert list(parse_info(_info(c, "all"))) == ALL_SECTIONS
        assert list(parse_info(_info(c, "everything"))) == ALL_SECTIONS
        assert list(parse_info(_info(c, "default", "commandstats"))) == \
            [s for s in ALL_SECTIONS if s != "Latencystats"]
        assert list(parse_info(_info(c, "keyspace", "SERVER", "server"))) == ["Server", "Keyspace"]
        for sec, names in REQUIRED_FIELDS.items():
            fields = dict(secs[sec])
            for n in names:
                assert n in fields, "INFO %s lacks %s" % (sec, n)
                fmt = formats.get(n, NUMBER)
                assert re.fullmatch(fmt, fields[n]), "%s:%s does not match %s" % (n, fields[n], fmt)
        srv = dict(secs["Server"])
        assert int(srv["tcp_port"]) == ferry.port
        assert int(srv["process_id"]) == ferry.proc.pid
        assert int(srv["uptime_in_days"]) == int(srv["uptime_in_seconds"]) // 86400
        assert abs(int(srv["server_time_usec"]) / 1e6 - time.time()) < 5
        cl = dict(secs["Clients"])
        assert int(cl["connected_clients"]) >= 1 and int(cl["maxclients"]) > 0
        for _ in range(50):          # the harness's probe connection may take a moment to be reaped
            if dict(parse_info(_info(c, "clients"))["Clients"])["connected_clients"] == "1":
                break
            time.sleep(0.02)
        else:
            pytest.fail("connected_clients never came down to 1")
        st = dict(secs["Stats"])
        assert int(st["total_commands_processed"]) >= 2
        assert dict(secs["Persistence"])["rdb_changes_since_last_save"] == "1"
        assert int(dict(secs["Memory"])["used_memory"]) > 0
        # RESP3: a verbatim string of type txt
        c.command("HELLO", "3")
        raw_reply = c.command("INFO", "server")
        assert re.match(rb"^=\d+\r\ntxt:# Server\r\n", raw_reply), raw_reply[:40]


def test_info_field_order_matches_redis(ferry, redis):
    """Every field both servers print appears in the same order (ferry's
    extra fields aside: ferry_version, and Redis 7.2's acl_access_denied_*
    at the end of Stats), section by section."""
    with RawClient(ferry.port) as fc, RawClient(redis.port) as rc:
        f, r = parse_info(_info(fc, "everything")), parse_info(_info(rc, "everything"))
    assert list(f) == list(r)
    for sec in r:
        if sec in ("Commandstats", "Errorstats", "Latencystats", "Keyspace"):
            continue
        fk = [k for k, _ in f[sec] if k != "ferry_version" and not k.startswith("acl_access_denied_")]
        rk = [k for k, _ in r[sec]]
        assert fk == rk, "INFO %s fields differ:\n ferry %s\n redis %s" % (sec, fk, rk)


def test_info_keyspace_after_writes(ferry):
    with RawClient(ferry.port) as c:
        assert _info(c, "keyspace") == "# Keyspace\r\n"
        c.pipeline([["SET", "a", "1"], ["SET", "b", "2", "EX", "1000"], ["SELECT", "7"], ["SET", "c", "3"],
                    ["SET", "d", "4", "PX", "100000"], ["SET", "e", "5", "EX", "500"]])
        ks = parse_info(_info(c, "keyspace"))["Keyspace"]
        assert [k for k, _ in ks] == ["db0", "db7"]
        vals = {k: dict(kv.split("=") for kv in v.split(",")) for k, v in ks}
        assert vals["db0"]["keys"] == "2" and vals["db0"]["expires"] == "1"
        assert vals["db7"]["keys"] == "3" and vals["db7"]["expires"] == "2"
        assert all(re.fullmatch(r"\d+", v["avg_ttl"]) for v in vals.values())
        c.command("FLUSHDB")
        ks = parse_info(_info(c, "keyspace"))["Keyspace"]
        assert [k for k, _ in ks] == ["db0"]


def test_info_commandstats_and_errorstats(ferry):
    with RawClient(ferry.port) as c:
        c.command("CONFIG", "RESETSTAT")
        c.pipeline([["SET", "k", "v"], ["GET", "k"], ["GET", "k"], ["CLIENT", "ID"], ["INCR", "k"],
                    ["GET"], ["NOSUCH"], ["AUTH", "foo", "bar"]])
        cs = dict(parse_info(_info(c, "commandstats"))["Commandstats"])
        pat = r"calls=(\d+),usec=(\d+),usec_per_call=(\d+\.\d\d),rejected_calls=(\d+),failed_calls=(\d+)"
        for v in cs.values():
            assert re.fullmatch(pat, v), v
        get = re.fullmatch(pat, cs["cmdstat_get"]).groups()
        assert get[0] == "2" and get[3] == "1" and get[4] == "0"       # the arity error is a rejected call
        assert re.fullmatch(pat, cs["cmdstat_client|id"]).group(1) == "1"
        assert re.fullmatch(pat, cs["cmdstat_incr"]).group(5) == "1"   # failed
        es = parse_info(_info(c, "errorstats"))["Errorstats"]
        assert es == [("errorstat_ERR", "count=3"), ("errorstat_WRONGPASS", "count=1")]
        st = dict(parse_info(_info(c, "stats"))["Stats"])
        assert st["total_error_replies"] == "4"


def test_info_instantaneous_ops(ferry):
    """The cron samples ops every 100 ms: a busy second shows up."""
    with RawClient(ferry.port) as c:
        batch = pipe(*[["PING"]] * 200)
        deadline = time.monotonic() + 1.2
        while time.monotonic() < deadline:
            c.send(batch)
            c.read_replies(200)
        st = dict(parse_info(_info(c, "stats"))["Stats"])
    assert int(st["instantaneous_ops_per_sec"]) > 100, st["instantaneous_ops_per_sec"]
    assert float(st["instantaneous_input_kbps"]) > 0
    assert float(st["instantaneous_output_kbps"]) > 0


def test_info_replid_changes_with_debug(ferry_factory):
    f = ferry_factory("--enable-debug-command", "yes")
    with RawClient(f.port) as c:
        before = dict(parse_info(_info(c, "replication"))["Replication"])["master_replid"]
        assert c.command("DEBUG", "CHANGE-REPL-ID") == b"+OK\r\n"
        after = dict(parse_info(_info(c, "replication"))["Replication"])["master_replid"]
    assert before != after and re.fullmatch(r"[0-9a-f]{40}", after)


# ------------------------------------------------------------ redis-cli --stat
def test_redis_cli_stat(ferry):
    with RawClient(ferry.port) as c:
        c.pipeline([["SET", "a", "1"], ["SET", "b", "2"]])
    master, slave = pty.openpty()
    fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", 24, 200, 0, 0))
    p = subprocess.Popen([REDIS_CLI, "-h", "127.0.0.1", "-p", str(ferry.port), "--stat", "-i", "0.3"],
                         stdin=slave, stdout=slave, stderr=slave, close_fds=True, start_new_session=True)
    os.close(slave)
    out = b""
    try:
        deadline = time.monotonic() + 1.8
        while time.monotonic() < deadline:
            r, _, _ = select.select([master], [], [], 0.1)
            if r:
                try:
                    out += os.read(master, 65536)
                except OSError:
                    break
        assert p.poll() is None, out
    finally:
        try:
            os.killpg(p.pid, signal.SIGTERM)
        except ProcessLookupError:
            pass
        p.wait(timeout=5)
        os.close(master)
    text = out.decode("utf-8", "replace").replace("\r", "")
    rows = [ln.split() for ln in text.split("\n") if re.match(r"^\d+\s+\S+\s+\d+\s+\d+\s+\d+ \(\+\d+\)", ln)]
    assert len(rows) >= 2, text
    assert all(r[0] == "2" and r[2] == "1" and r[3] == "0" for r in rows), text
    assert "ERR" not in text, text


def test_resetstat_clears_latencystats_like_redis(pair):
    """Which commands INFO latencystats lists (values are timings, so only the
    fields and their percentile keys are compared) before and after CONFIG
    RESETSTAT: every command's histogram must be cleared, as in Redis. The
    order is Redis's command-table hash order, so the lists are sorted."""
    def fields(port):
        with RawClient(port) as c:
            lines = parse_info(_info(c, "latencystats"))["Latencystats"]
        return sorted((k, re.sub(r"=[0-9.]+", "", v)) for k, v in lines)

    seen = {}
    for s in pair:
        with RawClient(s.port) as c:
            c.command("CONFIG", "RESETSTAT")
            c.pipeline([["SET", "k", "v"], ["GET", "k"], ["HSET", "h", "f", "v"], ["CLIENT", "ID"]])
        before = fields(s.port)
        with RawClient(s.port) as c:
            assert c.command("CONFIG", "RESETSTAT") == b"+OK\r\n"
        seen[s.kind] = (before, fields(s.port))
    assert seen["ferry"] == seen["redis"], seen
    before, after = seen["ferry"]
    assert ("latency_percentiles_usec_hset", "p50,p99,p99.9") in before
    assert after == [("latency_percentiles_usec_config|resetstat", "p50,p99,p99.9")]
