"""rename-command, CLUSTER/MODULE on a standalone server, and the default
bind address (issue #16: introspection, and configuration files that
hardened deployments use).

`rename-command FLUSHALL ""` and `rename-command CONFIG <secret>` are common
in production configuration files; a server that refuses them at start-up
is no drop-in. Each server is started with the same renames and gets the
same requests; every reply is compared byte for byte with redis-server's
(COMMAND INFO / LIST / COUNT, ACL rules, which name the original commands,
ACL DRYRUN, scripts, the pipelined fast path).
"""
from __future__ import annotations

import subprocess
import time

import pytest

from resp_client import RawClient, encode_command, parse, to_python
from conftest import redis_binary, ferry_binary, free_port

KINDS = ["ferry", "redis"]
FERRYS_OWN = 2  # top-level commands redis-server 7.0 lacks: STATS, COMPACT (test_command_table.py)


def count_as_redis(kind: str, reply: bytes) -> bytes:
    """COMMAND COUNT's reply without ferry's own commands."""
    return b":%d\r\n" % (int(reply[1:-2]) - FERRYS_OWN) if kind == "ferry" else reply
RENAMES = ("--rename-command", "flushdb", "badger", "--rename-command", "KEYS", "",
           "--rename-command", "get", "fetch")

REQUESTS = [
    ["SET", "k", "v"],
    ["FLUSHDB"],
    ["flushdb"],
    ["KEYS", "*"],
    ["GET", "k"],
    ["FETCH", "k"],
    ["fetch", "k"],
    ["COMMAND", "INFO", "badger"],
    ["COMMAND", "INFO", "flushdb"],
    ["COMMAND", "INFO", "keys"],
    ["COMMAND", "INFO", "fetch"],
    ["COMMAND", "COUNT"],
    ["COMMAND", "LIST", "FILTERBY", "PATTERN", "flush*"],
    ["COMMAND", "LIST", "FILTERBY", "PATTERN", "keys"],
    ["COMMAND", "LIST", "FILTERBY", "PATTERN", "badger"],
    ["COMMAND", "GETKEYS", "fetch", "k"],
    ["ACL", "SETUSER", "u1", "+flushdb"],
    ["ACL", "SETUSER", "u1", "+badger"],
    ["ACL", "SETUSER", "u1", "+keys", "+get", "~*", "on", "nopass"],
    ["ACL", "DRYRUN", "u1", "fetch", "k"],
    ["ACL", "DRYRUN", "u1", "get", "k"],
    ["ACL", "DRYRUN", "default", "badger"],
    ["ACL", "DRYRUN", "default", "flushdb"],
    ["EVAL", "return redis.call('fetch', 'k')", "0"],
    ["EVAL", "return redis.pcall('get', 'k')", "0"],
    ["MULTI"],
    ["FETCH", "k"],
    ["GET", "k"],
    ["EXEC"],
    ["FETCH", "k"],
    ["BADGER"],
    ["EXISTS", "k"],
]


def unordered(req: list, reply: bytes):
    """COMMAND LIST's and ACL CAT's order is each server's table order:
    compared as sets, without ferry's own commands."""
    if req[:2] not in (["COMMAND", "LIST"], ["ACL", "CAT"]):
        return reply
    return sorted(set(to_python(parse(reply))) - {b"stats", b"compact"})


def run(kind, s) -> list:
    with RawClient(s.port) as c:
        out = [unordered(r, c.command(*r)) for r in REQUESTS]
        i = REQUESTS.index(["COMMAND", "COUNT"])
        out[i] = count_as_redis(kind, out[i])
        # the pipelined path: the lookup cache must not let the old name through
        c.send(b"".join(encode_command(r) for r in (["SET", "a", "1"], ["FETCH", "a"], ["GET", "a"], ["FETCH", "a"],
                                                     ["GET", "a"], ["get", "a"])))
        out += c.read_replies(6)
    return out


def test_renamed_and_disabled_commands_as_redis(server_factory):
    got = [run(kind, server_factory(kind, *RENAMES)) for kind in KINDS]
    assert got[0] == got[1]


def start_fails(binary: str, *args) -> tuple:
    p = subprocess.run([binary, "--port", str(free_port()), "--save", "", *args], capture_output=True, timeout=20)
    return p.returncode, p.stdout + p.stderr


@pytest.mark.parametrize("args,why", [
    (("--rename-command", "nosuchcmd", "x"), b"No such command in rename-command"),
    (("--rename-command", "get", "set"), b"Target command name already exists"),
], ids=["unknown", "target-exists"])
def test_bad_rename_refused_at_start(args, why):
    rc_f, out_f = start_fails(ferry_binary(), *args)
    rc_r, out_r = start_fails(redis_binary(), *args)
    assert rc_f == rc_r == 1
    for out in (out_f, out_r):
        assert b"FATAL CONFIG FILE ERROR" in out and why in out, out


def test_renamed_twice(server_factory):
    """rename-command get a, then a b: only b reaches GET, as on redis-server."""
    got = []
    for kind in KINDS:
        s = server_factory(kind, "--rename-command", "get", "a", "--rename-command", "a", "b")
        with RawClient(s.port) as c:
            got.append([c.command("SET", "k", "v"), c.command("B", "k"), c.command("A", "k"), c.command("GET", "k")])
    assert got[0] == got[1]
    assert got[0][1] == b"$1\r\nv\r\n"


def test_rename_survives_config_rewrite(tmp_path):
    """A rename-command line stays in the file across CONFIG REWRITE, and
    the restarted server still refuses the old name."""
    conf = tmp_path / "ferry.conf"
    port = free_port()
    conf.write_text("port %d\nsave \"\"\ndir %s\nrename-command flushdb badger\n" % (port, tmp_path))
    for _round in range(2):
        p = subprocess.Popen([ferry_binary(), str(conf)], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        try:
            c = None
            for _ in range(200):
                try:
                    c = RawClient(port, timeout=5)
                    break
                except OSError:
                    time.sleep(0.02)
            assert c is not None
            with c:
                assert c.command("FLUSHDB").startswith(b"-ERR unknown command 'FLUSHDB'")
                assert c.command("BADGER") == b"+OK\r\n"
                assert c.command("CONFIG", "REWRITE") == b"+OK\r\n"
        finally:
            p.kill()
            p.wait()
    assert "rename-command flushdb badger" in conf.read_text()


STANDALONE = [
    ["CLUSTER", "INFO"], ["CLUSTER", "HELP"], ["CLUSTER", "NODES"], ["CLUSTER", "SLOTS"], ["CLUSTER", "KEYSLOT", "x"],
    ["CLUSTER"], ["CLUSTER", "NOSUCH"], ["ASKING"], ["READONLY"], ["READWRITE"],
    ["MODULE", "LIST"], ["MODULE", "HELP"], ["MODULE", "LOAD", "/nonexistent.so"], ["MODULE", "UNLOAD", "x"],
    ["MODULE", "LOADEX", "/x.so"], ["MODULE"], ["MODULE", "NOSUCH"],
    ["RESTORE-ASKING", "k", "0", "garbage"],
    ["COMMAND", "COUNT"], ["COMMAND", "INFO", "asking", "restore-asking", "cluster|info", "cluster|setslot", "module|list",
                                     "module|help", "cluster|reset"],
    ["COMMAND", "DOCS", "module|loadex", "cluster|slaves", "restore-asking", "asking"],
    ["COMMAND", "LIST", "FILTERBY", "PATTERN", "cl*help"],
    ["ACL", "CAT", "dangerous"],
    ["CONFIG", "GET", "bind"],
]


@pytest.mark.parametrize("module_mode", ["no", "yes"])
def test_cluster_and_module_on_a_standalone_server(server_factory, module_mode):
    got = []
    for kind in KINDS:
        args = ("--enable-module-command", module_mode)
        if kind == "ferry":  # the harness starts redis-server with --bind 127.0.0.1; ferry's default is compared below
            args += ("--bind", "127.0.0.1")
        s = server_factory(kind, *args)
        with RawClient(s.port) as c:
            out = [unordered(r, c.command(*r)) for r in STANDALONE]
            i = STANDALONE.index(["COMMAND", "COUNT"])
            out[i] = count_as_redis(kind, out[i])
            got.append(out)
    assert got[0] == got[1]


def config_get_bind(argv: list) -> bytes:
    port = free_port()
    p = subprocess.Popen(argv + ["--port", str(port), "--save", ""], stdout=subprocess.DEVNULL,
                         stderr=subprocess.DEVNULL)
    try:
        for _ in range(250):
            try:
                with RawClient(port, timeout=5) as c:
                    return c.command("CONFIG", "GET", "bind")
            except OSError:
                time.sleep(0.02)
        raise AssertionError("%s did not start" % argv[0])
    finally:
        p.kill()
        p.wait()


def test_default_bind_is_every_interface():
    """Without a bind directive redis-server listens on every interface
    (`* -::*`; protected mode then refuses other hosts without a password),
    not on loopback only as its sample redis.conf says."""
    assert config_get_bind([ferry_binary()]) == config_get_bind([redis_binary()]) == \
        b"*2\r\n$4\r\nbind\r\n$6\r\n* -::*\r\n"
