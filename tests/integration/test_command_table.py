"""The command table against redis-server 7.0's (issue 11).

Every command and subcommand ferry lists must report, in COMMAND INFO, the
arity, flags, key positions and ACL categories redis-server 7.0 reports for
it: these are what propagation (write, may_replicate), scripting
(noscript, allow_busy, stale, loading), OOM checks (denyoom) and ACL
(categories) will read from the table. The key specs (with their notes)
and tips (request/response policies...) of every command both servers have
must be Redis 7.0's too (src/commands/keyspec_table.c, generated from
redis-server by scripts/gen_keyspecs.py; test_specs_and_tips_match_redis).
Commands redis-server 7.0 does not have are listed by name.
"""
from __future__ import annotations

import pytest

from conftest import server_pair
from resp_client import RawClient, parse, to_python

NEWER_THAN_7_0 = {"client|setinfo", "client|no-touch"}
# Commands whose Redis 7.2 signature differs from 7.0's (ferry reports
# redis_version 7.2.x and clients gate on these): name -> the arity ferry
# reports; everything else about them must still match redis-server 7.0.
ARITY_7_2 = {
    "zrank": -3,     # ZRANK key member [WITHSCORE] (7.2)
    "zrevrank": -3,  # ZREVRANK key member [WITHSCORE] (7.2)
}
FERRYS_OWN = {"stats", "compact"}  # the seed spec's per-command statistics (JSON); mem-kv-cpp's name for BGREWRITEAOF


@pytest.fixture(scope="module")
def infos():
    with server_pair() as (f, r):
        with RawClient(f.port) as fc, RawClient(r.port) as rc:
            names = to_python(parse(fc.command("COMMAND", "LIST")))
            out = {}
            for n in names:
                n = n.decode() if isinstance(n, bytes) else n
                fi = to_python(parse(fc.command("COMMAND", "INFO", n)))[0]
                ri = to_python(parse(rc.command("COMMAND", "INFO", n)))[0]
                out[n] = (fi, ri)
            return out


def flatten(entry, prefix=""):
    """name -> (arity, flags, first, last, step, acl) for a command and its subcommands."""
    name, arity, flags, first, last, step, acl = entry[:7]
    name = name.decode() if isinstance(name, bytes) else name
    rows = {name: (arity, sorted(flags), first, last, step, sorted(acl))}
    for sub in entry[9] if len(entry) > 9 and entry[9] else []:
        rows.update(flatten(sub))
    return rows


def test_ferry_lists_commands(infos):
    assert len(infos) > 150


def test_every_command_matches_redis_command_info(infos):
    mismatches = []
    for name, (fi, ri) in sorted(infos.items()):
        assert fi is not None, "ferry lists %s but COMMAND INFO does not know it" % name
        if name in FERRYS_OWN or name in NEWER_THAN_7_0:  # COMMAND LIST names subcommands too
            continue
        if ri is None:
            mismatches.append("%s: unknown to redis-server 7.0" % name)
            continue
        frows, rrows = flatten(fi), flatten(ri)
        for sub, row in sorted(frows.items()):
            if sub in NEWER_THAN_7_0:
                continue
            if sub not in rrows:
                mismatches.append("%s: unknown to redis-server 7.0" % sub)
            elif row != (ARITY_7_2[sub],) + rrows[sub][1:] if sub in ARITY_7_2 else row != rrows[sub]:
                mismatches.append("%s: ferry %r, redis %r" % (sub, row, rrows[sub]))
    assert not mismatches, "\n".join(mismatches)


def specs_and_tips(entry):
    """name -> (tips, key specs) for a command and its subcommands."""
    name = entry[0].decode() if isinstance(entry[0], bytes) else entry[0]
    rows = {name: (entry[7], entry[8])}
    for sub in entry[9] or []:
        rows.update(specs_and_tips(sub))
    return rows


def test_specs_and_tips_match_redis(infos):
    mismatches, compared = [], 0
    for name, (fi, ri) in sorted(infos.items()):
        if ri is None or name in FERRYS_OWN:
            continue
        frows, rrows = specs_and_tips(fi), specs_and_tips(ri)
        for sub, row in sorted(frows.items()):
            if sub in NEWER_THAN_7_0 or sub not in rrows:
                continue
            compared += 1
            if row != rrows[sub]:
                mismatches.append("%s: ferry %r, redis %r" % (sub, row, rrows[sub]))
    assert compared > 200
    assert not mismatches, "\n".join(mismatches)


def test_command_info_bytes_match_redis():
    """The whole COMMAND INFO reply (flags in Redis's order, tips, key specs
    with notes) byte for byte in RESP2 and RESP3, for every command and
    subcommand both servers have, except containers (their subcommands come
    in Redis's hash order) and the 7.2 signatures of ARITY_7_2."""
    with server_pair() as (f, r):
        with RawClient(f.port) as fc, RawClient(r.port) as rc:
            fnames = {n.decode() for n in to_python(parse(fc.command("COMMAND", "LIST")))}
            rnames = {n.decode() for n in to_python(parse(rc.command("COMMAND", "LIST")))}
            containers = {n.split("|")[0] for n in fnames if "|" in n}
            names = sorted((fnames & rnames) - containers - set(ARITY_7_2) - NEWER_THAN_7_0)
            assert len(names) > 250
            mismatches = []
            for proto in ("2", "3"):
                fc.command("HELLO", proto)
                rc.command("HELLO", proto)
                for n in names:
                    if fc.command("COMMAND", "INFO", n) != rc.command("COMMAND", "INFO", n):
                        mismatches.append("RESP%s %s" % (proto, n))
            assert not mismatches, mismatches


DOC_EXTRAS = (b"doc_flags", b"deprecated_since", b"replaced_by", b"history", b"arguments")


def test_command_docs_match_redis():
    """COMMAND DOCS: Redis 7.0's doc flags, deprecation, history and argument
    trees (src/commands/keyspec_docs.c) for every command and subcommand
    both servers have, in the same field order; whole replies byte for byte
    for a sample without subcommands (whose order is Redis's hash order)."""
    with server_pair() as (f, r):
        with RawClient(f.port) as fc, RawClient(r.port) as rc:
            fc.command("HELLO", "3")
            rc.command("HELLO", "3")
            fnames = {n.decode() for n in to_python(parse(fc.command("COMMAND", "LIST")))}
            rnames = {n.decode() for n in to_python(parse(rc.command("COMMAND", "LIST")))}
            both = sorted((fnames & rnames) - NEWER_THAN_7_0)
            assert len(both) > 200
            mismatches = []
            for n in both:
                fd = list(to_python(parse(fc.command("COMMAND", "DOCS", n))).values())[0]
                rd = list(to_python(parse(rc.command("COMMAND", "DOCS", n))).values())[0]
                fx = [(k, v) for k, v in fd.items() if k in DOC_EXTRAS]
                rx = [(k, v) for k, v in rd.items() if k in DOC_EXTRAS]
                if fx != rx:
                    mismatches.append("%s: ferry %r\n  redis %r" % (n, fx, rx))
            assert not mismatches, "\n".join(mismatches)
            for proto in ("2", "3"):
                fc.command("HELLO", proto)
                rc.command("HELLO", proto)
                for n in ("georadius", "set", "client|kill", "xadd", "zadd", "command|list", "get", "sort"):
                    assert fc.command("COMMAND", "DOCS", n) == rc.command("COMMAND", "DOCS", n), (proto, n)


def test_command_list_filters_match_redis():
    """COMMAND LIST lists subcommands by full name; FILTERBY ACLCAT / PATTERN
    / MODULE keep what Redis keeps (compared as sets over the commands both
    servers have); syntax errors alike."""
    with server_pair() as (f, r):
        with RawClient(f.port) as fc, RawClient(r.port) as rc:
            def names(c, *args):
                return {n.decode() for n in to_python(parse(c.command("COMMAND", "LIST", *args)))}
            common = names(fc) & names(rc)
            assert "client|list" in common and "set" in common
            for args in (("FILTERBY", "ACLCAT", "scripting"), ("filterby", "aclcat", "keyspace"),
                         ("FILTERBY", "ACLCAT", "nosuch"), ("FILTERBY", "PATTERN", "config*"),
                         ("FILTERBY", "PATTERN", "cl*help"), ("FILTERBY", "PATTERN", "*|*re*"),
                         ("FILTERBY", "MODULE", "x")):
                assert names(fc, *args) & common == names(rc, *args) & common, args
            for args in (("bad",), ("FILTERBY", "bad"), ("FILTERBY", "bad", "x"), ("FILTERBY", "ACLCAT", "a", "b")):
                assert fc.command("COMMAND", "LIST", *args) == rc.command("COMMAND", "LIST", *args), args
