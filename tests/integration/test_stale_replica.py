"""A replica with replica-serve-stale-data no whose link to its primary is
down refuses commands without the stale flag with -MASTERDOWN, and judges
EXEC by what it would run, as redis-server does: a transaction that queued
GET or PING while the server was a primary fails at EXEC with EXECABORT
once it has become a stale replica; MULTI itself, INFO and REPLICAOF are
served; once the server is a primary again the queued GET runs.

Every reply is compared byte for byte with redis-server's.
"""
from __future__ import annotations

from resp_client import RawClient


def run(server_factory, kind: str) -> list:
    s = server_factory(kind, "--replica-serve-stale-data", "no")
    out = []
    with RawClient(s.port) as c, RawClient(s.port) as admin:
        out.append(c.command("SET", "xx", "1"))
        for queued in (("GET", "xx"), ("PING",)):
            out.append(c.command("MULTI"))
            out.append(c.command(*queued))
            out.append(admin.command("REPLICAOF", "127.0.0.1", "1"))  # nothing listens: the link stays down
            out.append(c.command("EXEC"))
            out.append(c.command("GET", "xx"))
            out.append(c.command("INFO", "replication")[:1])
            out.append(admin.command("REPLICAOF", "NO", "ONE"))
        out.append(admin.command("REPLICAOF", "127.0.0.1", "1"))
        out.append(c.command("MULTI"))
        out.append(admin.command("REPLICAOF", "NO", "ONE"))
        out.append(c.command("GET", "xx"))
        out.append(c.command("EXEC"))
    return out


def test_stale_replica_refuses_and_judges_exec_as_redis(server_factory):
    ferry, redis = run(server_factory, "ferry"), run(server_factory, "redis")
    assert ferry == redis
    assert ferry[4] == (b"-EXECABORT Transaction discarded because of: MASTERDOWN Link with MASTER is down "
                        b"and replica-serve-stale-data is set to 'no'.\r\n")
    assert ferry[-1] == b"*1\r\n$1\r\n1\r\n"
