"""Binary-safe passwords: requirepass and masterauth holding NUL bytes,
compared with redis-server 7.0.15 byte for byte.

Redis keeps both as binary strings (requirepass is the default user's
password, hashed whole; masterauth is an sds): CONFIG SET / CONFIG GET give
the exact bytes back in RESP2 and RESP3, AUTH and HELLO AUTH compare every
byte, CONFIG REWRITE writes them quoted with "\\x00" escapes and a restart
reads them back, and a replica sends masterauth to its primary as one bulk
with the NUL in it (a wrong one logs "Unable to AUTH to MASTER: <error>" and
keeps the link down). This is unit/auth's "binary password" tests, widened.
"""
from __future__ import annotations

import os

import pytest

from conftest import ServerProcess, ferry_binary, redis_binary, server_pair
from resp_client import RawClient, parse
from polling import poll

PASS = b"abc\x00def"
ODD = b"\x00p\\0 \"q\"\r\n\xff"   # a NUL first, a backslash before '0', quotes, CRLF, a high byte
KINDS = ("ferry", "redis")


def session(port, steps, resp3=False):
    """Runs steps (commands) on one fresh connection: the raw reply bytes."""
    out = []
    with RawClient(port, timeout=10) as c:
        if resp3:
            c.command("HELLO", "3")
        for args in steps:
            out.append((args, c.command(*args)))
    return out


def assert_same(f, r, steps, resp3=False):
    """Same reply bytes, but a HELLO's map is compared without the fields
    that name the server (hello_fields)."""
    got_f, got_r = session(f.port, steps, resp3), session(r.port, steps, resp3)
    for (args, a), (_, b) in zip(got_f, got_r):
        if args[0] == "HELLO" and a[:1] in (b"%", b"*"):
            assert hello_fields(a) == hello_fields(b), (args, a, b)
        else:
            assert a == b, "%r: ferry %r, redis-server %r" % (args, a, b)
    return got_f


def hello_fields(raw):
    """A HELLO map without the fields that name the server (version, id)."""
    v = parse(raw)
    assert v[0] in ("map", "array"), raw
    pairs = v[1] if v[0] == "map" else list(zip(v[1][::2], v[1][1::2]))
    return {bytes(k[1]): repr(x) for k, x in pairs if bytes(k[1]) not in (b"version", b"id")}


@pytest.fixture
def pair():
    with server_pair() as p:
        yield p


def test_config_set_get_auth_byte_for_byte(pair):
    f, r = pair
    got = assert_same(f, r, [
        ("CONFIG", "SET", "requirepass", PASS), ("CONFIG", "GET", "requirepass"),
        ("AUTH", "abc"), ("AUTH", PASS + b"\x00"), ("AUTH", "default", "abc\x00de"), ("PING",),
        ("AUTH", PASS), ("PING",), ("AUTH", "default", PASS),
        ("CONFIG", "SET", "masterauth", ODD), ("CONFIG", "GET", "masterauth"),
        ("CONFIG", "GET", "requirepass"), ("ACL", "GETUSER", "default"),
    ])
    assert got[1][1] == b"*2\r\n$11\r\nrequirepass\r\n$7\r\nabc\x00def\r\n"
    assert got[2][1].startswith(b"-WRONGPASS")
    assert got[6][1] == b"+OK\r\n"
    # a new connection must authenticate; RESP3 shows the same bytes
    assert_same(f, r, [("PING",), ("AUTH", PASS), ("CONFIG", "GET", "requirepass"),
                       ("CONFIG", "GET", "masterauth")], resp3=False)
    got = assert_same(f, r, [("AUTH", PASS), ("HELLO", "3"), ("CONFIG", "GET", "requirepass"),
                             ("CONFIG", "GET", "masterauth")])
    assert got[2][1] == b"%1\r\n$11\r\nrequirepass\r\n$7\r\nabc\x00def\r\n"
    assert got[3][1] == b"%%1\r\n$10\r\nmasterauth\r\n$%d\r\n%s\r\n" % (len(ODD), ODD)


def test_hello_auth_binary(pair):
    f, r = pair
    for s in (f, r):
        assert session(s.port, [("CONFIG", "SET", "requirepass", ODD)])[0][1] == b"+OK\r\n"
    bad = [("HELLO", "3", "AUTH", "default", ODD[:-1]), ("HELLO", "3", "AUTH", "default", ODD + b"\x00"),
           ("HELLO", "2", "AUTH", "default", ODD[1:]), ("PING",)]
    got = assert_same(f, r, bad)
    assert got[0][1].startswith(b"-WRONGPASS") and got[3][1].startswith(b"-NOAUTH")
    for proto in ("2", "3"):
        replies = [session(s.port, [("HELLO", proto, "AUTH", "default", ODD), ("PING",)]) for s in (f, r)]
        assert hello_fields(replies[0][0][1]) == hello_fields(replies[1][0][1])
        assert replies[0][1][1] == replies[1][1][1] == b"+PONG\r\n"


def test_default_user_hash_and_reset(pair):
    """The default user's password is the SHA-256 of all the bytes; setting
    requirepass "" makes it nopass again, a leading NUL still counts."""
    f, r = pair
    steps = [("CONFIG", "SET", "requirepass", b"\x00"), ("ACL", "GETUSER", "default"), ("ACL", "LIST"),
             ("AUTH", b"\x00"), ("CONFIG", "SET", "requirepass", PASS), ("ACL", "GETUSER", "default"),
             ("AUTH", PASS), ("CONFIG", "SET", "requirepass", ""), ("ACL", "GETUSER", "default"),
             ("CONFIG", "GET", "requirepass")]
    got = assert_same(f, r, steps)
    assert b"516a5e926ce20c5f4d80f00e1a01abdf14986def6588d6abeed9fce090bc660c" in got[5][1]
    assert_same(f, r, [("PING",)])   # no password any more: a new connection is in


class ConfServer(ServerProcess):
    """`<binary> <conf> --port N ...`; ready once the port accepts (a
    restarted server wants AUTH before PING)."""

    def __init__(self, kind, conf):
        super().__init__(kind, ferry_binary() if kind == "ferry" else redis_binary(), (), ready="accept")
        self.conf = conf

    def argv(self, port):
        base = super().argv(port)
        return [base[0], self.conf] + base[1:]


def rewrite_and_restart(kind, tmp_path):
    conf = str(tmp_path / ("%s.conf" % kind))
    with open(conf, "w") as fh:
        fh.write("# binary passwords\n")
    first = ConfServer(kind, conf).start()
    second = None
    try:
        poll(lambda: session(first.port, [("PING",)])[0][1] == b"+PONG\r\n", 10, "PING")
        set_ = session(first.port, [("CONFIG", "SET", "masterauth", ODD, "requirepass", PASS),
                                    ("AUTH", PASS), ("CONFIG", "REWRITE")])
        assert [x[1] for x in set_] == [b"+OK\r\n"] * 3, set_
        with open(conf, "rb") as fh:
            text = fh.read()
        first.stop()
        second = ConfServer(kind, conf).start()
        ok = lambda: session(second.port, [("AUTH", PASS)])[0][1] == b"+OK\r\n"   # noqa: E731
        poll(ok, 10, "AUTH after the restart")
        after = session(second.port, [("PING",), ("AUTH", PASS), ("CONFIG", "GET", "requirepass"),
                                      ("CONFIG", "GET", "masterauth"), ("ACL", "GETUSER", "default")])
        return text, [x[1] for x in after]
    finally:
        first.cleanup()
        if second is not None:
            second.cleanup()


def test_rewrite_then_restart(tmp_path):
    out = {k: rewrite_and_restart(k, tmp_path) for k in KINDS}
    lines = {k: [ln for ln in text.split(b"\n") if ln.startswith((b"requirepass", b"masterauth", b"user"))]
             for k, (text, _) in out.items()}
    assert sorted(lines["ferry"]) == sorted(lines["redis"]), lines
    assert b'requirepass "abc\\x00def"' in lines["ferry"]
    assert b'masterauth "\\x00p\\\\0 \\"q\\"\\r\\n\\xff"' in lines["ferry"]
    assert out["ferry"][1] == out["redis"][1]
    assert out["ferry"][1][0].startswith(b"-NOAUTH")
    assert out["ferry"][1][2] == b"*2\r\n$11\r\nrequirepass\r\n$7\r\nabc\x00def\r\n"


# ------------------------------------------------------------------ masterauth
def info_field(port, field):
    text = session(port, [("INFO", "replication")])[0][1].decode("latin-1")
    for line in text.split("\r\n"):
        if line.startswith(field + ":"):
            return line.split(":", 1)[1]
    return None


def log_has(server, needle):
    with open(server.logpath, "rb") as fh:
        return needle in fh.read()


@pytest.mark.parametrize("primary_kind,replica_kind",
                         [("ferry", "ferry"), ("redis", "ferry"), ("ferry", "redis"), ("redis", "redis")])
def test_masterauth_binary(server_factory, primary_kind, replica_kind):
    primary = server_factory(primary_kind)
    replica = server_factory(replica_kind, "--repl-diskless-load", "disabled")
    assert session(primary.port, [("CONFIG", "SET", "requirepass", PASS)])[0][1] == b"+OK\r\n"
    got = session(replica.port, [("REPLICAOF", "127.0.0.1", primary.port),
                                 ("CONFIG", "SET", "masterauth", "abc")])
    assert [x[1] for x in got] == [b"+OK\r\n", b"+OK\r\n"]
    wrong = b"Unable to AUTH to MASTER: -WRONGPASS invalid username-password pair or user is disabled."
    poll(lambda: log_has(replica, wrong), 10, "the failed AUTH in the replica's log")
    assert info_field(replica.port, "master_link_status") == "down"
    assert session(replica.port, [("CONFIG", "SET", "masterauth", PASS)])[0][1] == b"+OK\r\n"
    poll(lambda: info_field(replica.port, "master_link_status") == "up", 15, "master_link_status:up")
    with RawClient(primary.port, timeout=10) as c:
        assert c.command("AUTH", PASS) == b"+OK\r\n"
        assert c.command("SET", "k", b"v\x00") == b"+OK\r\n"
    poll(lambda: session(replica.port, [("GET", "k")])[0][1] == b"$2\r\nv\x00\r\n", 15, "the write replicated")


def test_masterauth_from_config_file(server_factory, tmp_path):
    """masterauth "\\x00..." in a ferry replica's file reaches the primary whole."""
    primary = server_factory("redis")
    assert session(primary.port, [("CONFIG", "SET", "requirepass", ODD)])[0][1] == b"+OK\r\n"
    conf = str(tmp_path / "replica.conf")
    with open(conf, "w") as fh:
        fh.write('masterauth "\\x00p\\\\0 \\"q\\"\\r\\n\\xff"\nreplicaof 127.0.0.1 %d\n' % primary.port)
    replica = ConfServer("ferry", conf).start()
    try:
        poll(lambda: info_field(replica.port, "master_link_status") == "up", 15, "master_link_status:up")
        assert not log_has(replica, b"Unable to AUTH")
    finally:
        replica.cleanup()
    assert os.path.exists(conf)
