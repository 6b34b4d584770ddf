"""redis-py 5 PubSub against ferry: subscribe / psubscribe / ssubscribe with
get_message, listen(), handlers, run_in_thread, PING while subscribed and
the PUBSUB introspection helpers, in RESP2 and in RESP3 (protocol=3, where
messages arrive as push frames). These check that a real client library's
pub/sub state machine works with ferry's replies; the exact bytes are
compared with Redis in test_diff_pubsub.py.
"""
from __future__ import annotations

import threading
import time

import pytest
import redis as redispy

PROTOCOLS = [2, 3]


def rpy(server, **kw):
    kw.setdefault("socket_timeout", 5)
    kw.setdefault("socket_connect_timeout", 5)
    return redispy.Redis(host="127.0.0.1", port=server.port, **kw)


def next_message(p, timeout=5.0, ignore_subscribe_messages=False, sharded=False):
    """The next message of any type (None would mean a hang: fail)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if sharded:
            m = p.get_sharded_message(ignore_subscribe_messages=ignore_subscribe_messages, timeout=0.1)
        else:
            m = p.get_message(ignore_subscribe_messages=ignore_subscribe_messages, timeout=0.1)
        if m is not None:
            return m
    pytest.fail("no pub/sub message within %.1fs" % timeout)


@pytest.mark.parametrize("proto", PROTOCOLS)
def test_subscribe_get_message(ferry, proto):
    r = rpy(ferry, protocol=proto)
    p = r.pubsub()
    p.subscribe("a", "b")
    assert next_message(p) == {"type": "subscribe", "pattern": None, "channel": b"a", "data": 1}
    assert next_message(p) == {"type": "subscribe", "pattern": None, "channel": b"b", "data": 2}
    assert r.publish("a", "hello") == 1
    assert r.publish("nobody", "x") == 0
    assert next_message(p) == {"type": "message", "pattern": None, "channel": b"a", "data": b"hello"}
    assert r.publish("b", b"\x00bin\r\n") == 1
    assert next_message(p)["data"] == b"\x00bin\r\n"
    assert r.pubsub_numsub("a", "b", "c") == [(b"a", 1), (b"b", 1), (b"c", 0)]
    assert sorted(r.pubsub_channels()) == [b"a", b"b"]
    p.unsubscribe("a")
    assert next_message(p) == {"type": "unsubscribe", "pattern": None, "channel": b"a", "data": 1}
    assert r.publish("a", "gone") == 0
    p.unsubscribe()
    assert next_message(p) == {"type": "unsubscribe", "pattern": None, "channel": b"b", "data": 0}
    assert r.pubsub_channels() == []
    p.close()


@pytest.mark.parametrize("proto", PROTOCOLS)
def test_psubscribe_with_handler(ferry, proto):
    r = rpy(ferry, protocol=proto, decode_responses=True)
    got = []
    p = r.pubsub()
    p.psubscribe(**{"news.*": got.append})
    p.subscribe("news.tech")
    assert next_message(p) == {"type": "psubscribe", "pattern": None, "channel": "news.*", "data": 1}
    assert next_message(p) == {"type": "subscribe", "pattern": None, "channel": "news.tech", "data": 2}
    assert r.pubsub_numpat() == 1
    assert r.publish("news.tech", "both") == 2   # the channel and the pattern
    assert r.publish("news.art", "pattern") == 1
    m = next_message(p, ignore_subscribe_messages=True)
    assert m == {"type": "message", "pattern": None, "channel": "news.tech", "data": "both"}
    deadline = time.monotonic() + 5
    while len(got) < 2 and time.monotonic() < deadline:
        p.get_message(timeout=0.1)           # handler messages are consumed by the handler
    assert got == [{"type": "pmessage", "pattern": "news.*", "channel": "news.tech", "data": "both"},
                   {"type": "pmessage", "pattern": "news.*", "channel": "news.art", "data": "pattern"}]
    p.punsubscribe()
    p.unsubscribe()
    deadline = time.monotonic() + 5
    while p.subscribed and time.monotonic() < deadline:
        p.get_message(timeout=0.1)
    assert not p.subscribed
    assert r.pubsub_numpat() == 0
    p.close()


@pytest.mark.parametrize("proto", PROTOCOLS)
def test_listen_with_publisher_thread(ferry, proto):
    r = rpy(ferry, protocol=proto)
    p = r.pubsub(ignore_subscribe_messages=True)
    p.subscribe("feed")
    deadline = time.monotonic() + 5
    while r.pubsub_numsub("feed")[0][1] != 1:   # subscribed before the publisher starts
        assert time.monotonic() < deadline, "SUBSCRIBE never took effect"
        time.sleep(0.01)
    want = [b"m%d" % i for i in range(50)]

    def publish_all():
        pub = rpy(ferry)
        for m in want:
            pub.publish("feed", m)
        pub.publish("feed", "stop")

    t = threading.Thread(target=publish_all)
    t.start()
    seen = []
    for m in p.listen():
        if m["type"] != "message":
            continue
        if m["data"] == b"stop":
            break
        seen.append(m["data"])
    t.join(10)
    assert seen == want
    p.close()


@pytest.mark.parametrize("proto", PROTOCOLS)
def test_run_in_thread(ferry, proto):
    r = rpy(ferry, protocol=proto)
    got, done = [], threading.Event()

    def handler(m):
        got.append(m["data"])
        if len(got) == 3:
            done.set()

    p = r.pubsub()
    p.subscribe(**{"t1": handler})
    p.psubscribe(**{"t2*": handler})
    th = p.run_in_thread(sleep_time=0.01, daemon=True)
    try:
        deadline = time.monotonic() + 5
        while r.pubsub_numsub("t1")[0][1] != 1 or r.pubsub_numpat() != 1:
            assert time.monotonic() < deadline, "subscriptions never showed up"
            time.sleep(0.01)
        assert r.publish("t1", "x") == 1
        assert r.publish("t2a", "y") == 1
        assert r.publish("t2b", "z") == 1
        assert done.wait(5), got
        assert got == [b"x", b"y", b"z"]
    finally:
        th.stop()
        th.join(5)
    p.close()


@pytest.mark.parametrize("proto", PROTOCOLS)
def test_ping_while_subscribed(ferry, proto):
    """redis-py reports any non-message reply on a PubSub connection as a
    "pong": RESP2's [pong, arg] array and RESP3's plain PING reply alike."""
    r = rpy(ferry, protocol=proto)
    p = r.pubsub()
    p.subscribe("c")
    next_message(p)
    p.ping()
    assert next_message(p) == {"type": "pong", "pattern": None, "channel": None, "data": b""}
    p.ping("hi")
    assert next_message(p) == {"type": "pong", "pattern": None, "channel": None, "data": b"hi"}
    assert r.publish("c", "after ping") == 1
    assert next_message(p)["data"] == b"after ping"
    p.close()


@pytest.mark.parametrize("proto", PROTOCOLS)
def test_sharded_pubsub(ferry, proto):
    r = rpy(ferry, protocol=proto)
    p = r.pubsub()
    p.ssubscribe("s1")
    assert next_message(p, sharded=True) == {"type": "ssubscribe", "pattern": None, "channel": b"s1", "data": 1}
    assert r.spublish("s1", "m") == 1
    assert r.publish("s1", "not for shard subscribers") == 0
    assert next_message(p, sharded=True) == {"type": "smessage", "pattern": None, "channel": b"s1", "data": b"m"}
    assert r.pubsub_shardchannels() == [b"s1"]
    assert r.pubsub_shardnumsub("s1", "s2") == [(b"s1", 1), (b"s2", 0)]
    p.sunsubscribe()
    assert next_message(p, sharded=True) == {"type": "sunsubscribe", "pattern": None, "channel": b"s1", "data": 0}
    assert r.pubsub_shardchannels() == []
    p.close()


@pytest.mark.parametrize("proto", PROTOCOLS)
def test_subscriber_runs_other_commands(ferry, proto):
    """RESP3: a subscribed connection may run any command (its reply reaches
    redis-py as a "pong"); RESP2: the command is refused."""
    r = rpy(ferry, protocol=proto)
    p = r.pubsub()
    p.subscribe("c")
    next_message(p)
    p.execute_command("SET", "k", "v")
    if proto == 3:
        assert next_message(p) == {"type": "pong", "pattern": None, "channel": None, "data": b"OK"}
        assert r.get("k") == b"v"
    else:
        with pytest.raises(redispy.ResponseError, match="Can't execute 'set'"):
            next_message(p)
        assert r.get("k") is None
    p.close()
