"""Errors raised and returned by scripts, against redis-server 7.0: the
reply bytes, and how INFO counts them (commandstats calls / rejected_calls
/ failed_calls, errorstats, total_error_replies).

Redis counts an error once, where it happened: a command a script calls
that fails counts as that command's failure; one refused before it ran
(OOM, wrong arity, unknown command) counts as its rejection; the EVAL that
passes such an error on (raised by redis.call, or returned from
redis.pcall) counts as failed but adds no second error to the error stats.
EXEC's queued commands and a blocked command failed by CLIENT UNBLOCK
follow the same rules. redis.error_reply() adds the generic ERR code to a
text without one. Compared as sets of INFO lines (usec masked).
"""
from __future__ import annotations

import re

import pytest

from conftest import server_pair
from diffkit import format_report, run_steps
from resp_client import RawClient

OOM_SET = "return redis.call('set','x','y')"
CASES = {
    "call_refused_oom": [["CONFIG", "SET", "maxmemory", "1"], ["EVAL", OOM_SET, "1", "x"]],
    "pcall_refused_oom_kept": [
        ["CONFIG", "SET", "maxmemory", "1"],
        ["EVAL", "local t = redis.pcall('set','x','y') if t['err'] == \"OOM command not allowed when used "
                 "memory > 'maxmemory'.\" then return 1 else return 0 end", "1", "x"]],
    "pcall_refused_oom_returned": [["CONFIG", "SET", "maxmemory", "1"],
                                   ["EVAL", "return redis.pcall('set','x','y')", "1", "x"]],
    "call_failed": [["EVAL", "return redis.call('select',99)", "0"]],
    "pcall_failed_kept": [["EVAL", "local t = redis.pcall('select',99) return t['err']", "0"]],
    "pcall_failed_returned": [["EVAL", "return redis.pcall('select',99)", "0"]],
    "unknown_command": [["EVAL", "return redis.call('nosuchcommand')", "0"],
                        ["EVAL", "return redis.pcall('nosuchcommand')", "0"]],
    "wrong_arity": [["EVAL", "return redis.call('get','a','b','c')", "0"],
                    ["EVAL", "return redis.pcall('get','a','b','c')", "0"]],
    "script_own_errors": [["EVAL", "return {err='MY own'}", "0"], ["EVAL", "error('boom')", "0"],
                          ["EVAL", "return redis.call()", "0"], ["EVAL", "a", "0"], ["EVAL", "a"]],
    "error_reply": [["EVAL", "return redis.error_reply('%s')" % t, "0"]
                    for t in ("", "-", "x", "FOO", "FOO bar", "-FOO bar", "foo bar", " x", "--x y", "ERR x")] + [
        ["EVAL", "local t = redis.error_reply('x') return t['err']", "0"]],
    "multi_exec": [["MULTI"], ["SET", "a", "b"], ["AUTH", "a"], ["EXEC"], ["EXEC"]],
    "fcall": [["FUNCTION", "LOAD", "REPLACE",
               "#!lua name=errlib\nredis.register_function('f', function(k, a) return redis.call('select', 99) end)"],
              ["FCALL", "f", "0"]],
}


def _stats(port):
    with RawClient(port) as c:
        text = b"".join(c.command("INFO", s) for s in ("commandstats", "errorstats", "stats")).decode()
    keep = set()
    for line in text.split("\r\n"):
        if line.startswith("cmdstat_"):
            keep.add(re.sub(r"usec=\d+,usec_per_call=[\d.]+,", "", line))
        elif line.startswith("errorstat_") or line.startswith("total_error_replies:"):
            keep.add(line)
    return keep


@pytest.fixture(scope="module")
def pair():
    with server_pair() as p:
        yield p


@pytest.mark.parametrize("name", sorted(CASES))
def test_script_error_case(pair, name):
    f, r = pair
    for s in (f, r):
        with RawClient(s.port) as c:
            c.command("CONFIG", "SET", "maxmemory", "0")
            c.command("CONFIG", "RESETSTAT")
    mismatches, transcript = run_steps(f.port, r.port, CASES[name])
    assert not mismatches, format_report(name, mismatches, transcript)
    for s in (f, r):
        with RawClient(s.port) as c:
            c.command("CONFIG", "SET", "maxmemory", "0")
    fs, rs = _stats(f.port), _stats(r.port)
    fs = {l for l in fs if not l.startswith("cmdstat_config|") and not l.startswith("cmdstat_info")}
    rs = {l for l in rs if not l.startswith("cmdstat_config|") and not l.startswith("cmdstat_info")}
    assert fs == rs, "INFO differs for %s:\n  only ferry: %s\n  only redis: %s" % (name, sorted(fs - rs),
                                                                                    sorted(rs - fs))


def test_unblocked_command_counts_as_failed(pair):
    f, r = pair
    seen = []
    for s in (f, r):
        with RawClient(s.port) as adm, RawClient(s.port) as blocked:
            adm.command("CONFIG", "RESETSTAT")
            cid = blocked.command("CLIENT", "ID")[1:-2]
            blocked.send_command("BLPOP", "nolist", "0")
            for _ in range(100):
                if b"blocked_clients:1" in adm.command("INFO", "clients"):
                    break
            assert adm.command("CLIENT", "UNBLOCK", cid, "ERROR") == b":1\r\n"
            seen.append((blocked.read_reply(), {l for l in _stats(s.port) if "blpop" in l or "UNBLOCKED" in l}))
    assert seen[0] == seen[1]
