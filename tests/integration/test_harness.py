"""Self-tests of the test harness (no server needed): the RESP reply reader
must find exact reply boundaries for every RESP2/RESP3 type, and the
differential comparison modes must accept what they should and nothing else."""
from __future__ import annotations

import pytest

from diffkit import approx, cmd, hello, pairs, replies_equal, sorted_
from resp_client import RespProtocolError, parse, reply_end, split_replies, to_python

COMPLETE = [
    b"+OK\r\n", b"-ERR x\r\n", b":-12\r\n", b"$-1\r\n", b"$0\r\n\r\n", b"$3\r\na\r\n\r\n",
    b"*-1\r\n", b"*0\r\n", b"_\r\n", b"#t\r\n", b",1.5\r\n", b",inf\r\n", b"(123456789012345678901\r\n",
    b"!5\r\nERR x\r\n", b"=8\r\ntxt:abcd\r\n",
    b"*3\r\n:1\r\n*2\r\n$1\r\na\r\n_\r\n%1\r\n+k\r\n~2\r\n:1\r\n:2\r\n",
    b"%2\r\n$1\r\na\r\n:1\r\n$1\r\nb\r\n*1\r\n#f\r\n",
    b">3\r\n$7\r\nmessage\r\n$2\r\nch\r\n$2\r\nhi\r\n",
    b"|1\r\n+ttl\r\n:3\r\n$1\r\nv\r\n",                       # attribute + the reply it annotates
    b"$?\r\n;4\r\nHell\r\n;1\r\no\r\n;0\r\n",                  # streamed string
    b"*?\r\n:1\r\n$1\r\nx\r\n.\r\n",                           # streamed aggregate
]


@pytest.mark.parametrize("reply", COMPLETE)
def test_reply_end_exact(reply):
    assert reply_end(reply) == len(reply)
    for cut in range(len(reply)):                 # every proper prefix is incomplete
        assert reply_end(reply[:cut]) == -1, (reply, cut)
    assert reply_end(reply + b"+NEXT\r\n") == len(reply)


def test_split_and_parse():
    data = b"".join(COMPLETE[:15])
    assert split_replies(data) == COMPLETE[:15]
    assert to_python(parse(COMPLETE[15])) == [1, [b"a", None], {b"k": [1, 2]}]
    assert to_python(parse(COMPLETE[16])) == {b"a": 1, b"b": [False]}
    assert parse(b"|1\r\n+ttl\r\n:3\r\n$1\r\nv\r\n")[2] == ("bulk", b"v")
    with pytest.raises(RespProtocolError):
        reply_end(b"?what\r\n")
    with pytest.raises(RespProtocolError):
        reply_end(b"$3\r\nabcXY")


def test_comparison_modes():
    assert replies_equal(cmd("GET", "k"), b"$1\r\nv\r\n", b"$1\r\nv\r\n")
    assert not replies_equal(cmd("GET", "k"), b"$1\r\nv\r\n", b"$1\r\nw\r\n")
    s = sorted_("KEYS", "*")
    assert replies_equal(s, b"*2\r\n$1\r\na\r\n$1\r\nb\r\n", b"*2\r\n$1\r\nb\r\n$1\r\na\r\n")
    assert not replies_equal(s, b"*2\r\n$1\r\na\r\n$1\r\nb\r\n", b"*2\r\n$1\r\nb\r\n$1\r\nb\r\n")
    assert not replies_equal(s, b"*1\r\n$1\r\na\r\n", b"~1\r\n$1\r\na\r\n")
    a = approx("PTTL", "k", tol=100)
    assert replies_equal(a, b":1000\r\n", b":950\r\n")
    assert not replies_equal(a, b":1000\r\n", b":800\r\n")
    assert not replies_equal(a, b":-1\r\n", b":-2\r\n")
    assert not replies_equal(a, b":5\r\n", b"$1\r\n5\r\n")
    h = hello("3")
    r1 = (b"%3\r\n$6\r\nserver\r\n$5\r\nredis\r\n$7\r\nversion\r\n$6\r\n7.0.15\r\n"
          b"$2\r\nid\r\n:5\r\n")
    r2 = r1.replace(b"7.0.15", b"7.2.40").replace(b":5\r\n", b":77\r\n")
    assert replies_equal(h, r1, r2)
    assert not replies_equal(h, r1, r2.replace(b"redis", b"ferry"))
    assert not replies_equal(h, r1, r1.replace(b"%3", b"*6"))


def test_pairs_mode():
    p = pairs("HGETALL", "h")
    ab = b"*4\r\n$1\r\na\r\n$1\r\n1\r\n$1\r\nb\r\n$1\r\n2\r\n"
    ba = b"*4\r\n$1\r\nb\r\n$1\r\n2\r\n$1\r\na\r\n$1\r\n1\r\n"
    swapped = b"*4\r\n$1\r\na\r\n$1\r\n2\r\n$1\r\nb\r\n$1\r\n1\r\n"   # same multiset of bulks
    assert replies_equal(p, ab, ba)
    assert not replies_equal(p, ab, swapped)
    assert replies_equal(sorted_("HGETALL", "h"), ab, swapped)   # why pairs mode exists
    m1 = b"%2\r\n$1\r\na\r\n$1\r\n1\r\n$1\r\nb\r\n$1\r\n2\r\n"
    m2 = b"%2\r\n$1\r\nb\r\n$1\r\n2\r\n$1\r\na\r\n$1\r\n1\r\n"
    assert replies_equal(p, m1, m2)
    assert not replies_equal(p, m1, ab)                      # map vs flat array
    assert not replies_equal(p, m1, m2.replace(b"$1\r\n2", b"$1\r\n3"))
    assert not replies_equal(p, b"*1\r\n$1\r\na\r\n", b"*1\r\n$1\r\nb\r\n")  # odd: exact only
