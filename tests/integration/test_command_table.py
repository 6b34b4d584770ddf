"""The command table against redis-server 7.0's (issue 11).

Every command and subcommand ferry lists must report, in COMMAND INFO, the
arity, flags, key positions and ACL categories redis-server 7.0 reports for
it: these are what propagation (write, may_replicate), scripting
(noscript, allow_busy, stale, loading), OOM checks (denyoom) and ACL
(categories) will read from the table. Key specs and tips are not reported
by ferry and are not compared. Commands redis-server 7.0 does not have are
listed by name.
"""
from __future__ import annotations

import pytest

from conftest import server_pair
from resp_client import RawClient, parse, to_python

NEWER_THAN_7_0 = {"client|setinfo", "client|no-touch"}
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
        if name in FERRYS_OWN:
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
            elif row != rrows[sub]:
                mismatches.append("%s: ferry %r, redis %r" % (sub, row, rrows[sub]))
    assert not mismatches, "\n".join(mismatches)
