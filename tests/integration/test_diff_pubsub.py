"""Differential tests for pub/sub (src/commands/pubsub.c and its hooks in dispatch,
PING, RESET, CLIENT LIST and INFO): SUBSCRIBE UNSUBSCRIBE PSUBSCRIBE
PUNSUBSCRIBE PUBLISH, the shard forms SSUBSCRIBE SUNSUBSCRIBE SPUBLISH, and
PUBSUB CHANNELS|NUMSUB|NUMPAT|SHARDCHANNELS|SHARDNUMSUB|HELP.

Cases run in lockstep on ferry and on the reference redis-server 7.0.15 and
compare reply bytes (diffkit). A pushed message is read with `recv(n)`: a
step that sends nothing and reads n replies on that connection, so a missing
or extra message shows up as a mismatch (or a timeout) on that step, and
the closing PING of every connection catches stray bytes.

What is unordered in Redis (its hash order) is compared as sets by the
scenario functions below: UNSUBSCRIBE without arguments over several
channels, PUBSUB CHANNELS (sorted_), several patterns matching one message.
Also here: CLIENT LIST / CLIENT KILL TYPE pubsub, INFO stats counters,
COMMAND INFO / DOCS of the group, disconnects releasing subscriptions, and a
channel with many subscribers that leave in a scrambled order.
"""
from __future__ import annotations

import re
import time

import pytest

from conftest import start_server
from diffkit import cmd, format_report, hello, raw, raw_eof, run_steps, sorted_
from resp_client import RawClient, encode_command, parse

CTX_ERR = ("-ERR Can't execute '%s': only (P|S)SUBSCRIBE / (P|S)UNSUBSCRIBE / PING / QUIT / RESET "
           "are allowed in this context\r\n")


def multi(n, *args, conn=0):
    """A command answered by n replies (SUBSCRIBE a b c: one per channel)."""
    return raw(encode_command(list(args)), n=n, conn=conn)


def recv(n=1, conn=0):
    """Read n pushed messages on a connection without sending anything."""
    return raw(b"", n=n, conn=conn)


def pub(channel, msg, conn=1):
    return cmd("PUBLISH", channel, msg, conn=conn)


BIG = "x" * 10000           # staged apart from the frame (INLINE_BODY is 4096)
EDGE = "y" * 4096           # the largest message copied into the frame

CASES = {
    # ------------------------------------------------------------ channels
    "subscribe_publish_unsubscribe": [
        multi(3, "SUBSCRIBE", "a", "b", "a"),
        cmd("PUBSUB", "NUMSUB", "a", "b", "c", conn=1),
        pub("a", "hello"), recv(),
        pub("b", ""), recv(),
        pub("nosub", "x"),
        multi(1, "UNSUBSCRIBE", "a"),
        pub("a", "gone"),
        multi(2, "UNSUBSCRIBE", "b", "zz"),
        ("GET", "k"), ("PING",),
    ],
    "subscribe_case_and_binary_names": [
        multi(3, "SUBSCRIBE", "Chan", "chan", "bin\x00\r\nname"),
        pub("CHAN", "no"), pub("chan", "yes"), recv(),
        pub("bin\x00\r\nname", "m\r\n\x00"), recv(),
        pub("", "empty"),
        multi(1, "SUBSCRIBE", ""), pub("", "empty"), recv(),
        cmd("PUBSUB", "NUMSUB", "", "Chan", conn=1),
    ],
    "message_sizes": [
        multi(1, "SUBSCRIBE", "big"), multi(1, "PSUBSCRIBE", "b*"),
        pub("big", BIG), recv(2),
        pub("big", EDGE), recv(2),
        pub("big", EDGE + "z"), recv(2),
        cmd("PUBLISH", "big", "self?", conn=0),     # refused in RESP2 subscribed mode
    ],
    "publisher_counts_many_subscribers": [
        multi(1, "SUBSCRIBE", "n", conn=2), multi(1, "SUBSCRIBE", "n", conn=3),
        multi(1, "PSUBSCRIBE", "n*", conn=4), multi(2, "SUBSCRIBE", "n", "m", conn=5),
        pub("n", "to-four"), recv(conn=2), recv(conn=3), recv(conn=4), recv(conn=5),
        cmd("PUBSUB", "NUMSUB", "n", "m", conn=1),
        multi(1, "UNSUBSCRIBE", "n", conn=3),
        pub("n", "to-three"), recv(conn=2), recv(conn=4), recv(conn=5),
        cmd("PUBSUB", "NUMPAT", conn=1),
    ],
    # ------------------------------------------------------------ patterns
    "psubscribe_flows": [
        multi(2, "PSUBSCRIBE", "news.*", "h?llo"),
        multi(1, "PSUBSCRIBE", "news.*"),
        pub("news.tech", "m1"), recv(),
        pub("hello", "m2"), recv(),
        pub("hallo", "m3"), recv(),
        pub("nomatch", "m4"),
        cmd("PUBSUB", "NUMPAT", conn=1),
        multi(1, "PUNSUBSCRIBE", "news.*"),
        multi(1, "PUNSUBSCRIBE", "never"),
        multi(1, "PUNSUBSCRIBE"),
        multi(1, "PUNSUBSCRIBE"),
        cmd("PUBSUB", "NUMPAT", conn=1),
        ("GET", "k"),
    ],
    "punsubscribe_all_in_subscription_order": [
        multi(4, "PSUBSCRIBE", "p3", "p1", "p2", "p0"),
        multi(1, "SUBSCRIBE", "c"),
        multi(4, "PUNSUBSCRIBE"),
        multi(1, "UNSUBSCRIBE"),
    ],
    "glob_patterns": [                       # each message matches at most one pattern (order)
        multi(5, "PSUBSCRIBE", "[a-c]x", "[^a]y", "lit\\*", "a?c", "h*llo"),
        pub("bx", "1"), recv(), pub("dx", "no"),
        pub("ay", "no"), pub("by", "2"), recv(),
        pub("lit*", "3"), recv(), pub("litX", "no"),
        pub("abc", "4"), recv(), pub("ac", "no"),
        pub("hllo", "5"), recv(), pub("heeello", "6"), recv(),
        cmd("PUBSUB", "NUMPAT", conn=1),
    ],
    "pattern_and_channel_both_match": [
        multi(1, "SUBSCRIBE", "news.tech"),
        multi(1, "PSUBSCRIBE", "news.*"),
        pub("news.tech", "both"), recv(2),
        pub("news.art", "pattern only"), recv(1),
        cmd("PUBSUB", "NUMSUB", "news.tech", "news.*", conn=1),
    ],
    "pattern_subscriber_across_clients": [
        multi(1, "PSUBSCRIBE", "q*", conn=2), multi(1, "PSUBSCRIBE", "q*", conn=3),
        cmd("PUBSUB", "NUMPAT", conn=1),
        pub("q", "x"), recv(conn=2), recv(conn=3),
        multi(1, "PUNSUBSCRIBE", "q*", conn=2),
        cmd("PUBSUB", "NUMPAT", conn=1),
        pub("qq", "y"), recv(conn=3),
        multi(1, "PUNSUBSCRIBE", conn=3),
        cmd("PUBSUB", "NUMPAT", conn=1),
    ],
    # ------------------------------------------------------ RESP2 context
    "resp2_subscribed_restrictions": [
        multi(1, "SUBSCRIBE", "a"),
        ("GET", "k"), ("SET", "k", "v"), ("CLIENT", "LIST"), ("CLIENT", "REPLY", "OFF"), ("MULTI",),
        ("HELLO", "3"), ("PUBLISH", "a", "x"), ("PUBSUB", "NUMPAT"), ("ECHO", "x"), ("SELECT", "1"),
        ("NOSUCH", "x"), ("GET",), ("SUBSCRIBE",), ("PUBSUB", "NOSUCH"),
        ("PING",), ("PING", "hi"), ("PING", "a", "b"),
        multi(1, "SSUBSCRIBE", "s"), multi(1, "PSUBSCRIBE", "p"),
        multi(1, "SUNSUBSCRIBE", "s"), multi(1, "PUNSUBSCRIBE", "p"),
        ("GET", "k"),
        cmd("GET", "k", conn=1),     # other connections are unaffected
        multi(1, "UNSUBSCRIBE"),
        ("GET", "k"), ("PING",),
        multi(1, "SUBSCRIBE", "a"),
        raw_eof(encode_command(["QUIT"])),
    ],
    "ping_in_each_subscription_kind": [
        multi(1, "PSUBSCRIBE", "p*"), ("PING",), multi(1, "PUNSUBSCRIBE"), ("PING",),
        multi(1, "SSUBSCRIBE", "s"), ("PING", "x"), ("GET", "k"),
        multi(1, "UNSUBSCRIBE"),             # nil: shard channels do not count here...
        ("GET", "k"),                        # ...but keep the client in pub/sub mode
        multi(1, "SUNSUBSCRIBE"), ("PING", "x"), ("GET", "k"),
    ],
    "unsubscribe_with_nothing": [
        multi(1, "UNSUBSCRIBE"), multi(1, "PUNSUBSCRIBE"), multi(1, "SUNSUBSCRIBE"),
        multi(2, "UNSUBSCRIBE", "x", "y"), multi(1, "PUNSUBSCRIBE", "p"), multi(1, "SUNSUBSCRIBE", "s"),
        ("GET", "k"), ("PING",),
        hello("3"),
        multi(1, "UNSUBSCRIBE"), multi(1, "PUNSUBSCRIBE"), multi(1, "SUNSUBSCRIBE"),
        multi(1, "UNSUBSCRIBE", "x"),
        ("GET", "k"), ("PING",),
    ],
    "unsubscribe_counts_include_patterns": [
        multi(2, "SUBSCRIBE", "a", "b"), multi(1, "PSUBSCRIBE", "p*"),
        multi(1, "UNSUBSCRIBE", "a"), multi(1, "UNSUBSCRIBE", "b"),
        multi(1, "UNSUBSCRIBE"),             # nil, count 1: the pattern is left
        ("GET", "k"),
        multi(1, "PUNSUBSCRIBE"),
        ("GET", "k"),
    ],
    # --------------------------------------------------------------- RESP3
    "resp3_push_messages": [
        hello("3"),
        multi(2, "SUBSCRIBE", "c", "d"), multi(1, "PSUBSCRIBE", "c*"),
        ("GET", "k"), ("SET", "k", "v"), ("PING",), ("PING", "x"), ("CLIENT", "GETNAME"),
        pub("c", "other"), recv(2),
        pub("d", "dee"), recv(1),
        multi(3, "PUBLISH", "c", "self"),   # pushes before the count, on the publisher's own link
        ("PUBSUB", "NUMSUB", "c", "d", "e"), ("PUBSUB", "NUMPAT"), sorted_("PUBSUB", "CHANNELS"),
        multi(1, "UNSUBSCRIBE", "c"), multi(1, "PUNSUBSCRIBE"), multi(1, "PUNSUBSCRIBE"),
        hello("2"),
        ("GET", "k"),                        # back in RESP2 while subscribed: refused
        ("PING",),
        pub("d", "resp2 now"), recv(),
        multi(1, "UNSUBSCRIBE"), multi(1, "UNSUBSCRIBE"),
        ("GET", "k"),
    ],
    "resp3_shard_and_patterns": [
        hello("3"),
        multi(2, "SSUBSCRIBE", "s1", "s2"), multi(1, "PSUBSCRIBE", "s*"),
        cmd("SPUBLISH", "s1", "shard", conn=1), recv(),
        pub("s1", "plain"), recv(),
        multi(2, "SPUBLISH", "s2", "self"),
        multi(1, "SUNSUBSCRIBE", "s1"), multi(1, "SUNSUBSCRIBE"), multi(1, "SUNSUBSCRIBE"),
        multi(1, "PUNSUBSCRIBE", "s*"),
    ],
    "hello_while_subscribed": [
        multi(1, "SUBSCRIBE", "z"),
        ("HELLO", "3"),                      # refused in RESP2 subscribed mode
        ("RESET",),
        hello("3"), multi(1, "SUBSCRIBE", "z"),
        hello("3"), ("GET", "k"),
        pub("z", "m"), recv(),
        ("RESET",), ("GET", "k"),
        cmd("PUBSUB", "NUMSUB", "z", conn=1),
    ],
    # ------------------------------------------------------------- shard
    "shard_channels": [
        multi(2, "SSUBSCRIBE", "s1", "s2"),
        cmd("SPUBLISH", "s1", "m", conn=1), recv(),
        pub("s1", "plain publish does not reach shard subscribers"),
        multi(1, "SUBSCRIBE", "a"),
        multi(1, "SUNSUBSCRIBE", "s1"),
        multi(1, "UNSUBSCRIBE", "a"),
        ("GET", "k"),
        multi(1, "SUNSUBSCRIBE", "nope"),
        cmd("PUBSUB", "SHARDCHANNELS", conn=1), cmd("PUBSUB", "SHARDNUMSUB", "s1", "s2", conn=1),
        cmd("PUBSUB", "SHARDCHANNELS", "s*", conn=1), cmd("PUBSUB", "SHARDCHANNELS", "x*", conn=1),
        cmd("PUBSUB", "CHANNELS", conn=1),
        multi(1, "SUNSUBSCRIBE"),
        ("GET", "k"),
        cmd("SPUBLISH", "s2", "nobody", conn=1),
        cmd("SPUBLISH", "s2", conn=1),
    ],
    # ------------------------------------------------------------- PUBSUB
    "pubsub_introspection": [
        ("PUBSUB", "HELP"), ("PUBSUB",), ("PUBSUB", "FOO"), ("pubsub", "help", "x"),
        ("PUBSUB", "CHANNELS"), ("PUBSUB", "NUMSUB"), ("PUBSUB", "NUMPAT"), ("PUBSUB", "SHARDNUMSUB"),
        ("PUBSUB", "CHANNELS", "a*", "x"), ("PUBSUB", "chaNNels", "a", "b"),
        ("PUBSUB", "SHARDCHANNELS", "a", "b"), ("PUBSUB", "NUMPAT", "x"),
        multi(3, "SUBSCRIBE", "alpha", "beta", "alps", conn=1),
        multi(2, "PSUBSCRIBE", "al*", "zz", conn=2),
        sorted_("PUBSUB", "CHANNELS"), sorted_("PUBSUB", "CHANNELS", "al*"),
        ("PUBSUB", "CHANNELS", "b[e]ta"), ("PUBSUB", "CHANNELS", "AL*"), ("PUBSUB", "CHANNELS", ""),
        ("PUBSUB", "NUMSUB", "alpha", "al*", "nope", "alpha"), ("PUBSUB", "NUMPAT"),
        hello("3"),
        ("PUBSUB", "NUMSUB", "alpha", "beta"), ("PUBSUB", "HELP"), ("PUBSUB", "NUMPAT"),
        sorted_("PUBSUB", "CHANNELS", "*p*"),
        ("PUBLISH",), ("PUBLISH", "a"), ("PUBLISH", "a", "b", "c"), ("SPUBLISH", "a"),
    ],
    # ------------------------------------------------- transactions, RESET
    "subscribe_inside_multi": [
        ("MULTI",), ("SUBSCRIBE", "q"), ("GET", "k"), ("EXEC",),
        ("GET", "k"),
        cmd("PUBLISH", "q", "after exec", conn=1), recv(),
        ("RESET",), ("GET", "k"),
        cmd("MULTI", conn=2), cmd("SSUBSCRIBE", "q", conn=2), cmd("PSUBSCRIBE", "q*", conn=2),
        cmd("EXEC", conn=2), cmd("GET", "k", conn=2),
        hello("3", conn=3), cmd("SUBSCRIBE", "r", conn=3), cmd("MULTI", conn=3), cmd("GET", "k", conn=3),
        cmd("PUBLISH", "r", "in multi", conn=1), recv(conn=3),
        cmd("EXEC", conn=3),
    ],
    "reset_drops_everything": [
        multi(1, "SUBSCRIBE", "z"), multi(1, "PSUBSCRIBE", "z*"), multi(1, "SSUBSCRIBE", "zs"),
        ("RESET",),
        cmd("PUBSUB", "NUMSUB", "z", conn=1), cmd("PUBSUB", "NUMPAT", conn=1),
        cmd("PUBSUB", "SHARDNUMSUB", "zs", conn=1),
        pub("z", "nobody"), cmd("SPUBLISH", "zs", "nobody", conn=1),
        ("GET", "k"), ("PING",),
        multi(1, "UNSUBSCRIBE"),
    ],
    "quit_releases_subscriptions": [
        multi(1, "SUBSCRIBE", "z", conn=2), multi(1, "PSUBSCRIBE", "z*", conn=2),
        raw_eof(encode_command(["QUIT"]), conn=2),
        cmd("PUBSUB", "NUMSUB", "z", conn=1), cmd("PUBSUB", "NUMPAT", conn=1),
        pub("z", "nobody"),
    ],
    "client_reply_off_still_pushes": [
        raw(encode_command(["CLIENT", "REPLY", "OFF"]), n=0),
        multi(1, "SUBSCRIBE", "q"),          # confirmations are pushes: sent anyway
        pub("q", "m"), recv(),
        raw_eof(encode_command(["QUIT"])),
        hello("3", conn=2), multi(1, "SUBSCRIBE", "q", conn=2),
        raw(encode_command(["CLIENT", "REPLY", "SKIP"]), n=0, conn=2),
        multi(1, "PUBLISH", "q", "skip", conn=2),   # the push only; the count is skipped
        cmd("PING", conn=2),
    ],
}


def _run_case(pair, name, steps):
    f, r = pair
    assert f.alive(), "ferry died before case %r; log tail:\n%s" % (name, f.log_tail())
    mismatches, transcript = run_steps(f.port, r.port, steps)
    assert f.alive(), "ferry died during case %r; log tail:\n%s" % (name, f.log_tail())
    if mismatches:
        pytest.fail(format_report(name, mismatches, transcript), pytrace=False)


@pytest.mark.parametrize("name", sorted(CASES))
def test_pubsub_case(pair, name):
    _run_case(pair, name, CASES[name])


def test_context_error_text(pair):
    """The refusal text itself (also compared above, but pinned here so a
    change on both sides is noticed)."""
    for server in pair:
        with RawClient(server.port) as c:
            c.send(encode_command(["SUBSCRIBE", "x"]))
            c.read_reply()
            assert c.command("CLIENT", "ID") == (CTX_ERR % "client|id").encode()
            assert c.command("get", "k") == (CTX_ERR % "get").encode()


# -------------------------------------------------- unordered scenarios
def _messages(c: RawClient, n):
    return [parse(c.read_reply()) for _ in range(n)]


def _unsubscribe_all_scenario(server):
    """UNSUBSCRIBE / SUNSUBSCRIBE without arguments over several names: one
    message per name in hash order, the counts counting down."""
    out = []
    names = ["ch%d" % i for i in range(20)]
    with RawClient(server.port) as c:
        for proto in ("2", "3"):
            c.command("HELLO", proto)
            c.send(encode_command(["SUBSCRIBE"] + names))
            _messages(c, len(names))
            c.send(encode_command(["PSUBSCRIBE", "p1", "p2"]))
            _messages(c, 2)
            c.send(encode_command(["UNSUBSCRIBE"]))
            msgs = _messages(c, len(names))
            out.append(("kinds", proto, sorted({(m[0], m[1][0]) for m in msgs})))
            out.append(("names", proto, sorted(m[1][1][1] for m in msgs)))
            out.append(("counts", proto, [m[1][2] for m in msgs]))
            c.send(encode_command(["PUNSUBSCRIBE"]))
            out.append(("punsub", proto, _messages(c, 2)))
            c.send(encode_command(["SSUBSCRIBE"] + names[:5]))
            _messages(c, 5)
            c.send(encode_command(["SUNSUBSCRIBE"]))
            msgs = _messages(c, 5)
            out.append(("shard names", proto, sorted(m[1][1][1] for m in msgs)))
            out.append(("shard counts", proto, [m[1][2] for m in msgs]))
            out.append(("after", proto, c.command("GET", "k")))
    return out


def test_unsubscribe_all_many_channels(pair):
    f, r = pair
    assert _unsubscribe_all_scenario(f) == _unsubscribe_all_scenario(r)


def _many_patterns_scenario(server):
    """One message matching several patterns of one client: one pmessage per
    pattern (in hash order), receivers counted per pattern."""
    with RawClient(server.port) as sub, RawClient(server.port) as p:
        pats = ["*", "a*", "ab*", "?b?", "[a]bc", "abc", "x*"]
        sub.send(encode_command(["PSUBSCRIBE"] + pats))
        _messages(sub, len(pats))
        sub.send(encode_command(["SUBSCRIBE", "abc"]))
        _messages(sub, 1)
        count = p.command("PUBLISH", "abc", "m")
        msgs = _messages(sub, 7)
        first = msgs[0]                      # the channel subscription comes first
        rest = sorted(repr(m) for m in msgs[1:])
        return count, first, rest


def test_several_patterns_match_one_message(pair):
    f, r = pair
    assert _many_patterns_scenario(f) == _many_patterns_scenario(r)


def _client_field(line, name):
    return re.search(r"(?:^| )%s=(\S*)" % re.escape(name), line).group(1)


def _client_list_scenario(server):
    """CLIENT LIST / INFO fields and TYPE filters for pub/sub clients."""
    out = []
    with RawClient(server.port) as a, RawClient(server.port) as b, RawClient(server.port) as adm:
        a.command("CLIENT", "SETNAME", "subber")
        b.command("CLIENT", "SETNAME", "plain")
        a.send(encode_command(["SUBSCRIBE", "c1", "c2"]))
        _messages(a, 2)
        a.send(encode_command(["PSUBSCRIBE", "p*"]))
        _messages(a, 1)
        a.send(encode_command(["SSUBSCRIBE", "s1", "s2", "s3"]))
        _messages(a, 3)
        lst = parse(adm.command("CLIENT", "LIST"))[1].decode()
        for ln in lst.splitlines():
            nm = _client_field(ln, "name")
            if nm in ("subber", "plain"):
                out.append((nm, [_client_field(ln, k) for k in ("flags", "sub", "psub", "ssub")]))
        for t in ("pubsub", "normal", "PUBSUB", "replica", "master"):
            lst = parse(adm.command("CLIENT", "LIST", "TYPE", t))[1].decode()
            out.append((t, sorted(_client_field(ln, "name") for ln in lst.splitlines()
                                  if _client_field(ln, "name"))))
        out.append(("bad type", adm.command("CLIENT", "LIST", "TYPE", "nope")))
        b.command("HELLO", "3")
        b.send(encode_command(["SUBSCRIBE", "c1"]))
        _messages(b, 1)
        info = parse(b.command("CLIENT", "INFO"))[1].decode()
        out.append(("resp3 subscriber", [_client_field(info, k) for k in ("flags", "sub", "psub", "ssub")]))
        out.append(("kill pubsub", adm.command("CLIENT", "KILL", "TYPE", "pubsub")))
        time.sleep(0.1)
        out.append(("after kill", adm.command("PUBSUB", "NUMSUB", "c1", "c2"), adm.command("PUBSUB", "NUMPAT")))
    return out


def test_client_list_and_kill_pubsub(pair):
    f, r = pair
    assert _client_list_scenario(f) == _client_list_scenario(r)


def _info_counts(c):
    info = parse(c.command("INFO", "stats"))[1].decode()
    return {k: int(v) for k, v in re.findall(r"^(pubsub\w*):(\d+)\r$", info, re.M)}


def _info_scenario(server):
    out = []
    with RawClient(server.port) as a, RawClient(server.port) as b, RawClient(server.port) as adm:
        out.append(_info_counts(adm))
        a.send(encode_command(["SUBSCRIBE", "x", "y"]))
        _messages(a, 2)
        b.send(encode_command(["SUBSCRIBE", "y", "z"]))
        _messages(b, 2)
        a.send(encode_command(["PSUBSCRIBE", "p1", "p2"]))
        _messages(a, 2)
        b.send(encode_command(["PSUBSCRIBE", "p2"]))
        _messages(b, 1)
        b.send(encode_command(["SSUBSCRIBE", "s"]))
        _messages(b, 1)
        out.append(_info_counts(adm))
        a.command("RESET")
        out.append(_info_counts(adm))
    time.sleep(0.1)                          # b's disconnect is noticed
    with RawClient(server.port) as adm:
        out.append(_info_counts(adm))
    return out


def test_info_stats_counters(pair):
    f, r = pair
    got, want = _info_scenario(f), _info_scenario(r)
    assert got == want
    assert got[1] == {"pubsub_channels": 3, "pubsub_patterns": 2, "pubsubshard_channels": 1}


def _disconnect_scenario(server):
    """Subscribers that close their sockets (no QUIT) are forgotten, and a
    channel's remaining subscribers keep receiving."""
    out = []
    with RawClient(server.port) as keep, RawClient(server.port) as p:
        keep.send(encode_command(["SUBSCRIBE", "d"]))
        _messages(keep, 1)
        gone = [RawClient(server.port) for _ in range(5)]
        for g in gone:
            g.send(encode_command(["SUBSCRIBE", "d", "e"]))
            _messages(g, 2)
            g.send(encode_command(["PSUBSCRIBE", "d*"]))
            _messages(g, 1)
        out.append(p.command("PUBLISH", "d", "all"))
        for g in gone:
            g.close()
        deadline = time.monotonic() + 5
        while time.monotonic() < deadline and p.command("PUBSUB", "NUMPAT") != b":0\r\n":
            time.sleep(0.02)
        out.append(p.command("PUBSUB", "NUMSUB", "d", "e"))
        out.append(p.command("PUBLISH", "d", "one"))
        out.append(_messages(keep, 2))
    return out


def test_disconnect_releases_subscriptions(pair):
    f, r = pair
    assert _disconnect_scenario(f) == _disconnect_scenario(r)


def _crowd_scenario(server, n=60):
    """Many subscribers on one channel leaving in a scrambled order: the
    counts and the deliveries stay right (removal from the middle)."""
    out = []
    subs = [RawClient(server.port) for _ in range(n)]
    try:
        with RawClient(server.port) as p:
            for s in subs:
                s.send(encode_command(["SUBSCRIBE", "crowd"]))
            for s in subs:
                _messages(s, 1)
            order = [(i * 37) % n for i in range(n)]       # 37 is prime to 60: a permutation
            for k, i in enumerate(order):
                if k % 10 == 0:
                    out.append(p.command("PUBLISH", "crowd", "k%d" % k))
                    out.append(p.command("PUBSUB", "NUMSUB", "crowd"))
                subs[i].send(encode_command(["UNSUBSCRIBE", "crowd"]))
                # the messages published while it was subscribed, then the confirmation
                got = _messages(subs[i], k // 10 + 2)
                out.append((i, got))
            out.append(p.command("PUBSUB", "NUMSUB", "crowd"))
            out.append(p.command("PUBSUB", "CHANNELS"))
    finally:
        for s in subs:
            s.close()
    return out


def test_many_subscribers_leave_in_any_order(pair):
    f, r = pair
    assert _crowd_scenario(f) == _crowd_scenario(r)


# ------------------------------------------------------ command metadata
PUBSUB_COMMANDS = ["subscribe", "unsubscribe", "psubscribe", "punsubscribe", "publish", "pubsub",
                   "ssubscribe", "sunsubscribe", "spublish"]


def _norm_info(v):
    """COMMAND INFO entry without key specs (ferry does not report them) and
    with subcommands in name order (Redis lists them in hash order)."""
    items = v[1]
    base = [repr(x) for x in items[:8]]
    subs = sorted(repr(_norm_info(s)) for s in items[9][1])
    return base, subs


def _pairs(v):
    """(key, value) pairs of a RESP3 map or a RESP2 flat array."""
    if v[0] == "map":
        return v[1]
    return list(zip(v[1][0::2], v[1][1::2]))


def _norm_docs(v):
    out = {}
    for k, x in _pairs(v):
        key = k[1]
        if key == b"subcommands":
            out[key] = sorted((sk[1], repr(sorted(_norm_docs(sv).items()))) for sk, sv in _pairs(x))
        elif key in (b"summary", b"since", b"group", b"complexity"):
            out[key] = x[1]
    return out


def test_command_info_and_docs(pair):
    f, r = pair
    with RawClient(f.port) as fc, RawClient(r.port) as rc:
        for name in PUBSUB_COMMANDS:
            fi, ri = parse(fc.command("COMMAND", "INFO", name)), parse(rc.command("COMMAND", "INFO", name))
            assert _norm_info(fi[1][0]) == _norm_info(ri[1][0]), name
            fd, rd = parse(fc.command("COMMAND", "DOCS", name)), parse(rc.command("COMMAND", "DOCS", name))
            assert _norm_docs(_pairs(fd)[0][1]) == _norm_docs(_pairs(rd)[0][1]), name
