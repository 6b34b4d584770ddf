"""Differential tests for DEBUG (src/commands/cmd_debug.c) against
redis-server 7.0: the subcommands Redis's own test suite and client
libraries drive the server with, reply bytes compared exactly.

PROTOCOL sends one sample of each RESP type in RESP2 and RESP3 (attributes,
big numbers, booleans, verbatim strings, maps, sets, doubles, nulls and a
push message followed by its reply); REPLYBUFFER, LISTPACK, QUICKLIST,
CHANGE-REPL-ID, SET-ACTIVE-EXPIRE, SLEEP, OBJECT, ERROR, LOG, STRINGMATCH-TEST
(a fuzz run of ferry's glob matcher), CONFIG-REWRITE-FORCE-ALL,
SET-DISABLE-DENY-SCRIPTS (scripts then call DEBUG PROTOCOL: every RESP3
type converted to Lua and back, in both script protocols) and the errors
for unknown subcommands and bad arguments. DEBUG HELP is ferry's own subset
of Redis's help: every line it prints is one of redis-server's, in the same
order. Without enable-debug-command both refuse DEBUG with the same text.
"""
from __future__ import annotations

import pytest

from conftest import server_pair
from diffkit import format_report, hello, raw, run_steps
from resp_client import RawClient, encode_command, parse, to_python

TYPES = ["string", "integer", "double", "bignum", "null", "array", "set", "map", "attrib", "verbatim", "true",
         "false", "STRING", "Attrib"]


def protocol_steps():
    return [["DEBUG", "PROTOCOL", t] for t in TYPES]


CASES = {
    "protocol_resp2": protocol_steps() + [
        ["DEBUG", "PROTOCOL", "push"], ["DEBUG", "PROTOCOL", "nosuchtype"], ["DEBUG", "PROTOCOL"],
        ["DEBUG", "PROTOCOL", "string", "extra"],
    ],
    "protocol_resp3": [hello("3")] + protocol_steps() + [
        raw(encode_command(["DEBUG", "PROTOCOL", "push"]), n=2), ["DEBUG", "PROTOCOL", "nosuchtype"],
        ["PING"], hello("2"), ["DEBUG", "PROTOCOL", "map"],
    ],
    "replybuffer": [
        ["DEBUG", "REPLYBUFFER", "peak-reset-time", "100"], ["DEBUG", "REPLYBUFFER", "PEAK-RESET-TIME", "never"],
        ["DEBUG", "REPLYBUFFER", "peak-reset-time", "reset"], ["DEBUG", "REPLYBUFFER", "peak-reset-time", "-5"],
        ["DEBUG", "REPLYBUFFER", "peak-reset-time", "abc"], ["DEBUG", "REPLYBUFFER", "resizing", "0"],
        ["DEBUG", "REPLYBUFFER", "RESIZING", "1"], ["DEBUG", "REPLYBUFFER", "resizing", "abc"],
        ["DEBUG", "REPLYBUFFER", "other", "1"], ["DEBUG", "REPLYBUFFER", "resizing"],
        ["DEBUG", "REPLYBUFFER", "resizing", "1", "2"], ["DEBUG", "REPLYBUFFER"],
    ],
    "encodings": [
        ["HSET", "h", "a", "1"], ["ZADD", "z", "1", "a"], ["RPUSH", "l", "a", "b"], ["SET", "s", "v"],
        ["SADD", "set", "1", "2"], ["DEBUG", "LISTPACK", "h"], ["DEBUG", "LISTPACK", "z"],
        ["DEBUG", "LISTPACK", "l"], ["DEBUG", "LISTPACK", "s"], ["DEBUG", "LISTPACK", "set"],
        ["DEBUG", "LISTPACK", "nokey"], ["DEBUG", "LISTPACK"], ["DEBUG", "LISTPACK", "h", "x"],
        ["DEBUG", "QUICKLIST", "l"], ["DEBUG", "QUICKLIST", "l", "1"], ["DEBUG", "QUICKLIST", "h"],
        ["DEBUG", "QUICKLIST", "nokey"], ["DEBUG", "QUICKLIST", "l", "1", "2"],
        ["DEBUG", "QUICKLIST-PACKED-THRESHOLD", "100"], ["DEBUG", "QUICKLIST-PACKED-THRESHOLD", "5gb"],
        ["DEBUG", "QUICKLIST-PACKED-THRESHOLD", "0"],
    ],
    "misc": [
        ["DEBUG", "CHANGE-REPL-ID"], ["DEBUG", "CHANGE-REPL-ID", "x"], ["DEBUG", "SET-ACTIVE-EXPIRE", "0"],
        ["DEBUG", "SET-ACTIVE-EXPIRE", "abc"], ["DEBUG", "SET-ACTIVE-EXPIRE", "1"], ["DEBUG", "SLEEP", "0"],
        ["DEBUG", "SLEEP", "0.01"], ["DEBUG", "SET", "k", "v"], ["SET", "k", "v"], ["DEBUG", "OBJECT", "nokey"],
        ["DEBUG", "ERROR", "MYERR some text"], ["DEBUG", "ERROR", "line\r\nbreak"], ["DEBUG", "LOG", "hello"],
        ["DEBUG", "LOG"], ["DEBUG", "LOG", "a", "b"], ["DEBUG", "STRINGMATCH-LEN"], ["DEBUG", "JMAP"],
        ["DEBUG", "nosuchsub"], ["DEBUG", "HELP", "x"], ["DEBUG", "PAUSE-CRON", "0"],
    ],
    "stringmatch_test": [["DEBUG", "STRINGMATCH-TEST"], ["DEBUG", "STRINGMATCH-TEST", "x"]],
    # no config file: both answer with the errno Redis's rewrite leaves ("Bad address")
    "config_rewrite_force_all": [["DEBUG", "CONFIG-REWRITE-FORCE-ALL"], ["DEBUG", "CONFIG-REWRITE-FORCE-ALL", "x"]],
    # scripts may call DEBUG once deny-scripts is off; its RESP3 types come back through Lua
    "scripts_call_debug": [
        ["EVAL", "return redis.call('debug', 'protocol', 'map')", "0"],
        ["DEBUG", "SET-DISABLE-DENY-SCRIPTS", "1"],
    ] + [["EVAL", "redis.setresp(%d); return redis.call('debug', 'protocol', '%s')" % (resp, t), "0"]
         for resp in (2, 3) for t in ("attrib", "bignum", "map", "set", "double", "null", "verbatim", "true",
                                      "false", "array", "integer")] + [
        hello("3"),
    ] + [["EVAL", "redis.setresp(3); return redis.call('debug', 'protocol', '%s')" % t, "0"]
         for t in ("attrib", "bignum", "map", "set", "double", "null", "verbatim", "true", "false")] + [
        hello("2"), ["EVAL", "return {big_number='123\\r\\n456'}", "0"], hello("3"),
        ["EVAL", "return {big_number='123\\r\\n456'}", "0"], hello("2"),
        ["DEBUG", "SET-DISABLE-DENY-SCRIPTS", "0"], ["EVAL", "return redis.call('debug', 'protocol', 'map')", "0"],
    ],
}


@pytest.fixture(scope="module")
def debug_pair():
    with server_pair("--enable-debug-command", "yes") as p:
        yield p


@pytest.mark.parametrize("name", sorted(CASES))
def test_debug_case(debug_pair, name):
    f, r = debug_pair
    mismatches, transcript = run_steps(f.port, r.port, CASES[name])
    assert not mismatches, format_report(name, mismatches, transcript)


def test_debug_protocol_exact_bytes(debug_pair):
    """A few replies spelled out, so a change on both sides is noticed."""
    f, _ = debug_pair
    with RawClient(f.port) as c:
        assert c.command("DEBUG", "PROTOCOL", "attrib") == b"$39\r\nSome real reply following the attribute\r\n"
        assert c.command("DEBUG", "PROTOCOL", "map") == b"*6\r\n:0\r\n:0\r\n:1\r\n:1\r\n:2\r\n:0\r\n"
        c.command("HELLO", "3")
        assert c.command("DEBUG", "PROTOCOL", "attrib") == (
            b"|1\r\n$14\r\nkey-popularity\r\n*2\r\n$7\r\nkey:123\r\n:90\r\n"
            b"$39\r\nSome real reply following the attribute\r\n")
        assert c.command("DEBUG", "PROTOCOL", "bignum") == b"(1234567999999999999999999999999999999\r\n"
        assert c.command("DEBUG", "PROTOCOL", "map") == b"%3\r\n:0\r\n#f\r\n:1\r\n#t\r\n:2\r\n#f\r\n"
        assert c.command("DEBUG", "PROTOCOL", "verbatim") == b"=29\r\ntxt:This is a verbatim\nstring\r\n"


def test_debug_help_is_a_subset_of_redis(debug_pair):
    f, r = debug_pair
    with RawClient(f.port) as fc, RawClient(r.port) as rc:
        mine = to_python(parse(fc.command("DEBUG", "HELP")))
        theirs = to_python(parse(rc.command("DEBUG", "HELP")))
    assert mine[0] == theirs[0] and mine[-2:] == theirs[-2:]
    pos = 0
    for line in mine:
        assert line in theirs[pos:], "not in redis-server's DEBUG HELP (in this order): %r" % line
        pos = theirs.index(line, pos) + 1
    titles = {line.split()[0] for line in mine if not line.startswith(b" ")}
    for sub in (b"PROTOCOL", b"REPLYBUFFER", b"LISTPACK", b"QUICKLIST", b"LOG", b"OBJECT", b"SLEEP", b"RELOAD",
                b"STRINGMATCH-TEST"):
        assert sub in titles


def test_debug_refused_without_enable_debug_command():
    with server_pair() as (f, r):
        mismatches, transcript = run_steps(f.port, r.port, [["DEBUG", "PROTOCOL", "string"], ["DEBUG", "HELP"]])
        assert not mismatches, format_report("refused", mismatches, transcript)


class _FerryWithConfig:
    """ferry started from a config file (first argument), on a free port."""

    def __init__(self, conf):
        from conftest import ServerProcess, ferry_binary

        class P(ServerProcess):
            def argv(self, port):
                return [self.binary, conf, "--port", str(port), "--save", ""]

        self.proc = P("ferry", ferry_binary())

    def __enter__(self):
        return self.proc.start()

    def __exit__(self, *exc):
        self.proc.stop()


def _config_all(port):
    with RawClient(port) as c:
        v = to_python(parse(c.command("CONFIG", "GET", "*")))
    return {v[i]: v[i + 1] for i in range(0, len(v), 2) if v[i] != b"port"}


def test_config_rewrite_force_all_reloads(tmp_path):
    """DEBUG CONFIG-REWRITE-FORCE-ALL writes every directive, defaults too;
    the server starts again from that file with the same configuration
    (Redis's "CONFIG REWRITE sanity" test)."""
    conf = tmp_path / "ferry.conf"
    conf.write_text("enable-debug-command yes\nmaxmemory 10mb\nhz 20\nnotify-keyspace-events KEA\n")
    with _FerryWithConfig(str(conf)) as s:
        before = _config_all(s.port)
        with RawClient(s.port) as c:
            assert c.command("DEBUG", "CONFIG-REWRITE-FORCE-ALL") == b"+OK\r\n"
    lines = [l for l in conf.read_text().splitlines() if l and not l.startswith("#")]
    assert len(lines) > 100, "every directive is written, defaults included"
    with _FerryWithConfig(str(conf)) as s:
        after = _config_all(s.port)
    assert after == before
