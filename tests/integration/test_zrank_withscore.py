"""ZRANK / ZREVRANK ... WITHSCORE (src/commands/cmd_zset.c), Redis 7.2's
addition that client libraries gate on when the server reports 7.2.

redis-server 7.0 (the oracle of the other tests) does not have it, so the
reply bytes are spelled out here as Redis 7.2 documents them: [rank, score]
(score a bulk string in RESP2, a double in RESP3), a null array (RESP2
*-1, RESP3 _) when the member or the key is missing, the plain rank
without WITHSCORE, a syntax error for another fourth argument and the
arity error past it. Both encodings of a sorted set are covered (listpack
and skiplist), and the replies without WITHSCORE are compared with
redis-server 7.0.
"""
from __future__ import annotations

import pytest

from conftest import server_pair, start_server
from diffkit import format_report, hello, run_steps
from resp_client import RawClient


@pytest.fixture(scope="module")
def ferry_client():
    s = start_server("ferry")
    try:
        with RawClient(s.port) as c:
            yield c
    finally:
        s.cleanup()


def fill(c, key, n):
    c.command("DEL", key)
    for i in range(n):
        c.command("ZADD", key, str(i + 0.5), "m%d" % i)


@pytest.mark.parametrize("size", [3, 300])   # listpack, skiplist
def test_withscore_resp2(ferry_client, size):
    c = ferry_client
    c.command("HELLO", "2")
    fill(c, "z", size)
    assert c.command("ZRANK", "z", "m0", "WITHSCORE") == b"*2\r\n:0\r\n$3\r\n0.5\r\n"
    assert c.command("ZRANK", "z", "m2", "withscore") == b"*2\r\n:2\r\n$3\r\n2.5\r\n"
    last = size - 1
    assert c.command("ZREVRANK", "z", "m0", "WITHSCORE") == b"*2\r\n:%d\r\n$3\r\n0.5\r\n" % last
    assert c.command("ZREVRANK", "z", "m%d" % last, "WITHSCORE") == b"*2\r\n:0\r\n$%d\r\n%d.5\r\n" % (
        len(str(last)) + 2, last)
    assert c.command("ZRANK", "z", "nosuch", "WITHSCORE") == b"*-1\r\n"
    assert c.command("ZREVRANK", "nokey", "m0", "WITHSCORE") == b"*-1\r\n"
    assert c.command("ZRANK", "z", "m1") == b":1\r\n"
    assert c.command("ZRANK", "z", "nosuch") == b"$-1\r\n"


def test_withscore_resp3(ferry_client):
    c = ferry_client
    c.command("HELLO", "3")
    fill(c, "z3", 3)
    c.command("ZADD", "z3", "inf", "top", "-1e100", "bottom")
    assert c.command("ZRANK", "z3", "m1", "WITHSCORE") == b"*2\r\n:2\r\n,1.5\r\n"
    assert c.command("ZRANK", "z3", "top", "WITHSCORE") == b"*2\r\n:4\r\n,inf\r\n"
    assert c.command("ZREVRANK", "z3", "bottom", "WITHSCORE") == b"*2\r\n:4\r\n,-1e+100\r\n"
    assert c.command("ZRANK", "z3", "nosuch", "WITHSCORE") == b"_\r\n"
    assert c.command("ZREVRANK", "nokey", "x", "WITHSCORE") == b"_\r\n"
    assert c.command("ZRANK", "z3", "nosuch") == b"_\r\n"
    c.command("HELLO", "2")


def test_withscore_errors(ferry_client):
    c = ferry_client
    fill(c, "ze", 2)
    c.command("SET", "str", "v")
    assert c.command("ZRANK", "ze", "m0", "WITHSCORES") == b"-ERR syntax error\r\n"
    assert c.command("ZRANK", "ze", "m0", "WITHSCORE", "x") == (
        b"-ERR wrong number of arguments for 'zrank' command\r\n")
    assert c.command("ZREVRANK", "ze", "m0", "WITHSCORE", "x") == (
        b"-ERR wrong number of arguments for 'zrevrank' command\r\n")
    assert c.command("ZRANK", "ze") == b"-ERR wrong number of arguments for 'zrank' command\r\n"
    assert c.command("ZRANK", "str", "m0", "WITHSCORE").startswith(b"-WRONGTYPE ")


def test_command_info_arity(ferry_client):
    c = ferry_client
    c.command("HELLO", "2")
    for name in (b"zrank", b"zrevrank"):
        info = c.command("COMMAND", "INFO", name)
        assert info.startswith(b"*1\r\n*10\r\n$%d\r\n%s\r\n:-3\r\n" % (len(name), name)), info[:60]


def test_without_withscore_matches_redis_7_0():
    steps = [["ZADD", "z", "1", "a", "2", "b", "2", "c"], ["ZRANK", "z", "a"], ["ZRANK", "z", "c"],
             ["ZREVRANK", "z", "a"], ["ZRANK", "z", "nosuch"], ["ZRANK", "nokey", "a"], ["SET", "s", "v"],
             ["ZRANK", "s", "a"], hello("3"), ["ZRANK", "z", "nosuch"], ["ZREVRANK", "z", "b"]]
    with server_pair() as (f, r):
        mismatches, transcript = run_steps(f.port, r.port, steps)
        assert not mismatches, format_report("zrank", mismatches, transcript)
