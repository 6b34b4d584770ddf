"""Keyspace-notification differential harness (test_diff_notify.py).

A program (a list of steps) runs on one "actor" connection of a server
whose notify-keyspace-events is set; subscribers on other connections
PSUBSCRIBE __key*__:* (one in RESP2, one in RESP3) and capture every message
until an end marker published after the program. The same program on ferry
and on redis-server must give the same replies and byte-identical message
streams, in the same order.

A step is a tuple of arguments (a command on the actor), or:
    ("@sleep", seconds)          pause (lazy expiry of a key with a short TTL)
    ("@conn", i, *args)          a command on extra connection i (i >= 1)
    ("@send", i, *args)          send on extra connection i, reply not read yet
    ("@recv", i)                 read one reply on extra connection i
Replies of UNORDERED commands (hash-ordered members) are compared sorted.

With self_sub the actor itself is a subscribed RESP3 client: each command's
output is everything up to its reply, pushed notifications included, so the
order of a command's events relative to its reply is compared too.
"""
from __future__ import annotations

import time

from resp_client import RawClient, encode_command, parse

PATTERN = "__key*__:*"
END = "notify-test-end"
# replies holding members in hash order: compared as multisets
UNORDERED = {b"SMEMBERS", b"SUNION", b"SDIFF", b"SINTER", b"HGETALL", b"HKEYS", b"HVALS", b"KEYS",
             b"SPOP", b"HRANDFIELD"}


class Subscriber:
    """A connection that PSUBSCRIBEs the notification channels and the end
    marker, in RESP2 or RESP3."""

    def __init__(self, port, resp3=False):
        self.c = RawClient(port, timeout=10)
        if resp3:
            self.c.command("HELLO", "3")
        self.c.send(encode_command(["PSUBSCRIBE", PATTERN]))
        self.c.read_reply()
        self.c.send(encode_command(["SUBSCRIBE", END]))
        self.c.read_reply()

    def drain(self):
        """Every message up to the end marker (not included)."""
        out = []
        while True:
            m = self.c.read_reply()
            if END.encode() in m and b"pmessage" not in m:
                return out
            out.append(m)

    def close(self):
        self.c.close()


def canon_reply(args, raw):
    """A reply as compared: the raw bytes, or sorted items for UNORDERED."""
    if args and args[0].upper() == b"SCAN" and raw[:1] == b"*":
        v = parse(raw)
        return ("scan", v[1][0], sorted(repr(x) for x in v[1][1][1]))
    if args and args[0].upper() in UNORDERED and raw[:1] in (b"*", b"~", b"%"):
        v = parse(raw)
        if v[0] == "map":
            return ("map", sorted(repr(p) for p in v[1]))
        if v[1] is not None:
            return (v[0], sorted(repr(x) for x in v[1]))
    return raw


def _b(a):
    if isinstance(a, bytes):
        return a
    return str(a).encode()


MARK = b"$11\r\nnotify-mark\r\n"


def read_through_reply(c, args):
    """RESP3 self-subscriber: everything the command sent (pushed messages
    and its reply, which Redis may interleave) up to the reply of the ECHO
    sent after it, as a list of top-level replies; a lone reply of an
    UNORDERED command is canonicalised."""
    out = []
    while True:
        m = c.read_reply()
        if m == MARK:
            break
        out.append(m)
    plain = [i for i, m in enumerate(out) if not m.startswith(b">")]
    if len(plain) == 1:
        out[plain[0]] = canon_reply(args, out[plain[0]])
    return out


def send_marked(c, args):
    c.send(encode_command(args) + encode_command(["ECHO", "notify-mark"]))


def run_program(server, flags, steps, self_sub=False, db_setup=()):
    """Replies and captured messages of steps on server (see module doc)."""
    actor = RawClient(server.port, timeout=10)
    extra = {}
    subs = []
    try:
        actor.command("CONFIG", "SET", "notify-keyspace-events", flags)
        for cmd in (("FLUSHALL",), ("DEBUG", "SET-ACTIVE-EXPIRE", "0")) + tuple(db_setup):
            actor.command(*cmd)
        subs = [Subscriber(server.port), Subscriber(server.port, resp3=True)]
        if self_sub:
            actor.command("HELLO", "3")
            actor.send(encode_command(["PSUBSCRIBE", PATTERN]))
            actor.read_reply()
        replies = []
        queued = False      # inside MULTI: commands are only queued (no marker)
        for st in steps:
            name = str(st[0]).upper()
            replies.append(_run_step(actor, extra, st, self_sub and name != "MULTI" and (not queued or name in ("EXEC", "DISCARD"))))
            if name == "MULTI":
                queued = True
            elif name in ("EXEC", "DISCARD"):
                queued = False
        if self_sub:
            send_marked(actor, ["PUBLISH", END, "x"])
            replies.append(read_through_reply(actor, []))
        else:
            replies.append(actor.command("PUBLISH", END, "x"))
        return replies, [s.drain() for s in subs]
    finally:
        for s in subs:
            s.close()
        for c in extra.values():
            c.close()
        actor.close()


def _conn(server_port, extra, i):
    if i not in extra:
        extra[i] = RawClient(server_port, timeout=10)
    return extra[i]


def _run_step(actor, extra, st, self_sub):
    head = st[0]
    if head == "@sleep":
        time.sleep(st[1])
        return None
    if head == "@conn":
        c = _conn(actor.port, extra, st[1])
        return canon_reply([_b(a) for a in st[2:]], c.command(*st[2:]))
    if head == "@send":
        _conn(actor.port, extra, st[1]).send(encode_command(list(st[2:])))
        return None
    if head == "@recv":
        return extra[st[1]].read_reply()
    args = [_b(a) for a in st]
    if self_sub:
        send_marked(actor, args)
        return read_through_reply(actor, args)
    actor.send(encode_command(args))
    return canon_reply(args, actor.read_reply())


def describe_message(m):
    """A pushed message as (channel, payload) for reports."""
    v = parse(m)
    items = v[1]
    return tuple(x[1] for x in items[-2:])


def compare(ferry, redis, flags, steps, self_sub=False, db_setup=()):
    """Run on both; return None if equal, else a report."""
    fr, fm = run_program(ferry, flags, steps, self_sub, db_setup)
    rr, rm = run_program(redis, flags, steps, self_sub, db_setup)
    lines = []
    for i, (a, b) in enumerate(zip(fr, rr)):
        if a != b:
            what = steps[i] if i < len(steps) else ("PUBLISH", END)
            lines.append("step %d %r:\n  ferry %r\n  redis %r" % (i, what, a, b))
            break
    for k, (a, b) in enumerate(zip(fm, rm)):
        if a != b:
            da = [describe_message(m) for m in a]
            db = [describe_message(m) for m in b]
            n = 0
            while n < min(len(da), len(db)) and da[n] == db[n]:
                n += 1
            lines.append("subscriber %d (%s): messages differ at #%d\n  ferry %r\n  redis %r"
                         % (k, "RESP3" if k else "RESP2", n, da[max(0, n - 3):n + 4], db[max(0, n - 3):n + 4]))
            if da == db:
                lines.append("  (same messages, different bytes)")
    if not lines:
        return None
    return "flags %r self_sub=%s\n%s" % (flags, self_sub, "\n".join(lines))
