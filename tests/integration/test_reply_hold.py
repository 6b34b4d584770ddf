"""Replies held while a big argument streams in (issue #19, io/outbuf.c).

A client pipelining big SETs has, after nearly every read, one request just
answered and the next one's value half-received in a block of its own. ferry
keeps such a client's small replies staged for up to reply-hold-ms (ferry's
own setting, default 5) while that block fills, so a batch of replies leaves
in one writev instead of one per request. These tests pin down the rule:
replies are held while a block fills, and only then; a client that stops in
the middle of a big argument gets its earlier replies once the hold runs
out, even if nothing else happens in the server; big replies are not held;
reply-hold-ms 0 turns it off; and the bytes are the same either way.
"""
from __future__ import annotations

import re
import time

from resp_client import RawClient, encode_command

KB = 1024
BIG = 100 * KB


def big_set(key: str, n: int = BIG, fill: bytes = b"v") -> bytes:
    return encode_command(["SET", key, fill * n])


def head_of(req: bytes, payload_bytes: int) -> tuple:
    """req cut after payload_bytes bytes of its big bulk: (head, rest)."""
    m = re.search(rb"\$(\d{5,})\r\n", req)
    assert m
    cut = m.end() + payload_bytes
    return req[:cut], req[cut:]


def wait_reply(c: RawClient, timeout: float) -> tuple:
    """(the next reply, seconds it took)."""
    t0 = time.monotonic()
    r = c.read_reply(timeout=timeout)
    return r, time.monotonic() - t0


def writes(s) -> int:
    with RawClient(s.port) as c:
        m = re.search(rb"^total_writes_processed:(\d+)\r$", c.command("INFO", "stats"), re.M)
    assert m
    return int(m.group(1))


def test_replies_wait_while_the_next_big_argument_arrives(ferry_factory):
    s = ferry_factory("--reply-hold-ms", "2000")
    head, rest = head_of(big_set("b"), 1000)
    with RawClient(s.port, timeout=10) as c:
        c.send(encode_command(["SET", "a", "1"]) + encode_command(["INCR", "n"]) + head)
        c.assert_no_pending(0.3)          # held: the rest of b's value is on its way
        c.send(rest)
        assert c.read_replies(3, timeout=5) == [b"+OK\r\n", b":1\r\n", b"+OK\r\n"]
        assert c.command("STRLEN", "b") == b":%d\r\n" % BIG


def answer_before_rest(c: RawClient, first: bytes, want: bytes) -> float:
    """Send the request `first`, then the head of a big SET and stop: the
    reply to `first` must be `want`; then the rest, answered +OK. Returns
    the seconds the first reply took."""
    head, rest = head_of(big_set("b"), 1000)
    c.send(first + head)
    reply, took = wait_reply(c, 5)
    assert reply == want
    c.send(rest)
    assert c.read_reply(timeout=5) == b"+OK\r\n"
    return took


def test_a_client_that_stops_mid_argument_gets_its_replies_when_the_hold_ends(ferry_factory):
    """Nothing else happens in the server (hz 1: its timers fire once a
    second), so the reply can only come from the loop waking for the hold."""
    s = ferry_factory("--reply-hold-ms", "300", "--hz", "1")
    with RawClient(s.port, timeout=10) as c:
        took = answer_before_rest(c, encode_command(["SET", "a", "1"]), b"+OK\r\n")
        assert 0.25 <= took < 0.9, took
        assert c.command("GET", "a") == b"$1\r\n1\r\n"


def test_default_hold_is_a_few_milliseconds(ferry_factory):
    s = ferry_factory("--hz", "1")
    with RawClient(s.port, timeout=10) as c:
        took = answer_before_rest(c, encode_command(["PING"]), b"+PONG\r\n")
        assert took < 0.5, took


def test_zero_turns_it_off(ferry_factory):
    s = ferry_factory("--reply-hold-ms", "2000")
    with RawClient(s.port, timeout=10) as c:
        assert c.command("CONFIG", "SET", "reply-hold-ms", "0") == b"+OK\r\n"
        assert c.command("CONFIG", "GET", "reply-hold-ms") == b"*2\r\n$13\r\nreply-hold-ms\r\n$1\r\n0\r\n"
        took = answer_before_rest(c, encode_command(["SET", "a", "1"]), b"+OK\r\n")
        assert took < 1.0, took


def test_big_replies_are_not_held(ferry_factory):
    s = ferry_factory("--reply-hold-ms", "2000")
    with RawClient(s.port, timeout=10) as c:
        c.command("SET", "big", b"g" * (20 * KB))
        took = answer_before_rest(c, encode_command(["GET", "big"]), b"$%d\r\n%s\r\n" % (20 * KB, b"g" * (20 * KB)))
        assert took < 1.0, took


def test_a_pipeline_of_big_sets_is_answered_in_one_or_two_writes(ferry_factory):
    """30 SETs of 64 KB in one write: every request but the first few is
    completed by the read that starts the next one's block, so with the hold
    the 30 replies leave together once the last value is in (without it,
    one writev per read or so)."""
    s = ferry_factory("--reply-hold-ms", "2000")
    n = 30
    stream = b"".join(big_set("k%d" % i, 64 * KB, b"%d" % (i % 10)) for i in range(n))
    with RawClient(s.port, timeout=10) as c:
        c.command("PING")
        before = writes(s)
        c.send(stream)
        assert c.read_replies(n, timeout=10) == [b"+OK\r\n"] * n
        used = writes(s) - before - 1     # - 1: the INFO reply of the first count
        assert 1 <= used <= 2, used
        for i in (0, 17, n - 1):
            assert c.command("GETRANGE", "k%d" % i, "0", "2") == b"$3\r\n%s\r\n" % (b"%d" % (i % 10) * 3)


def test_held_client_killed_mid_argument(ferry_factory):
    s = ferry_factory("--reply-hold-ms", "2000")
    head, _ = head_of(big_set("b"), 1000)
    with RawClient(s.port, timeout=10) as c, RawClient(s.port, timeout=10) as admin:
        c.send(encode_command(["CLIENT", "SETNAME", "victim"]) + head)
        c.assert_no_pending(0.2)
        line = [ln for ln in admin.command("CLIENT", "LIST").decode().splitlines() if "name=victim" in ln]
        assert len(line) == 1
        cid = re.search(r"\bid=(\d+)", line[0]).group(1)
        assert admin.command("CLIENT", "KILL", "ID", cid) == b":1\r\n"
        assert admin.command("PING") == b"+PONG\r\n"
        assert admin.command("EXISTS", "b") == b":0\r\n"
