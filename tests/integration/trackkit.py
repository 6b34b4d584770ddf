"""Lockstep harness for client-side caching (CLIENT TRACKING): the same
steps run on ferry and on the reference redis-server over several
connections each, and after every step everything each connection received
(replies, invalidation pushes, __redis__:invalidate messages) is compared
byte for byte, in order.

Why a sentinel: invalidations arrive on connections that sent nothing, so
after a step every connection is sent CLIENT TRACKINGINFO (a CLIENT
subcommand: it does not end a CLIENT CACHING window, reads no key and is
itself compared) and read up to its reply (or, for a subscribed RESP2
connection, up to the context error it gets instead). Whatever the server
queued for a connection before that reply belongs to the step; BCAST
messages, sent before the server sleeps, are queued by then too. A
connection inside MULTI gets no sentinel (it would be queued): it is read up
to its own reply when the step is its own, else left for a later step.

Steps (plain data, see the helpers):
    cmd(i, *args)      command on connection i, then sync every connection
    pipe(i, cmds)      several commands in one write, then sync
    send(i, *args)     only send (a command that blocks); no sync
    sync()             sync every connection
    sleep(s)           wait (lazy expiry)
    close(i)           close connection i (a REDIRECT target that goes away)
Arguments may be ID(j): connection j's client id on each server.

Client ids differ between the servers: they are replaced by "C<j>" where a
reply carries one (HELLO, CLIENT ID, GETREDIR, TRACKINGINFO's redirect,
the tracking-redir-broken push).
"""
from __future__ import annotations

import re
import socket
import time

from resp_client import RawClient, encode_command, reply_end

READ_TIMEOUT = 5.0
SENTINEL = ("CLIENT", "TRACKINGINFO")
_SENTINEL_REPLY = re.compile(rb"^(%3\r\n|\*6\r\n)\$5\r\nflags\r\n")
_CONTEXT_ERR = b"-ERR Can't execute 'client|trackinginfo'"


class ID:
    """Placeholder for connection j's client id."""

    def __init__(self, j):
        self.j = j

    def __repr__(self):
        return "ID(%d)" % self.j


class Step:
    def __init__(self, kind, conn=0, args=None, cmds=None, seconds=0.0):
        self.kind, self.conn, self.args, self.cmds, self.seconds = kind, conn, args, cmds, seconds

    def describe(self):
        if self.kind == "cmd" or self.kind == "send":
            return "%s[%d] %s" % (self.kind, self.conn, " ".join(_show(a) for a in self.args))
        if self.kind == "pipe":
            return "pipe[%d] %s" % (self.conn, " | ".join(" ".join(_show(a) for a in c) for c in self.cmds))
        if self.kind == "sleep":
            return "sleep(%s)" % self.seconds
        return "%s[%d]" % (self.kind, self.conn)


def _show(a):
    if isinstance(a, ID):
        return repr(a)
    return repr(a) if not isinstance(a, str) or " " in a or not a else a


def cmd(i, *args):
    return Step("cmd", i, args=args)


def pipe(i, cmds):
    return Step("pipe", i, cmds=[tuple(c) for c in cmds])


def send(i, *args):
    return Step("send", i, args=args)


def sync():
    return Step("sync")


def sleep(s):
    return Step("sleep", seconds=s)


def close(i):
    return Step("close", i)


class ConnState:
    """What the harness must know of a connection: its protocol, whether it
    is a subscribed RESP2 connection, whether it is inside MULTI."""

    def __init__(self):
        self.resp = 2
        self.subscribed = False
        self.multi = False
        self.blocked = False
        self.reply_off = False
        self.skip_next = False

    def update(self, args):
        words = [a.upper() if isinstance(a, str) else a for a in args]
        name = words[0] if words else ""
        if name == "HELLO" and len(words) > 1 and words[1] in ("2", "3"):
            self.resp = int(words[1])
        elif name in ("SUBSCRIBE", "PSUBSCRIBE"):
            self.subscribed = True
        elif name in ("UNSUBSCRIBE", "PUNSUBSCRIBE") and len(words) == 1:
            self.subscribed = False
        elif name == "RESET":
            self.resp, self.subscribed, self.multi, self.reply_off = 2, False, False, False
        elif name == "CLIENT" and len(words) == 3 and words[1] == "REPLY" and not self.multi:
            self.reply_off = words[2] == "OFF"
            self.skip_next = words[2] == "SKIP" and not self.reply_off
        elif name == "MULTI":
            self.multi = True
        elif name in ("EXEC", "DISCARD"):
            self.multi = False


class Side:
    """One server's connections."""

    def __init__(self, port):
        self.port = port
        self.conns = {}
        self.ids = {}
        self.state = {}
        self.closed = set()

    def conn(self, i):
        if i not in self.conns:
            c = RawClient(self.port, timeout=READ_TIMEOUT)
            c.send_command("CLIENT", "ID")
            self.ids[i] = int(c.read_reply()[1:-2])
            self.conns[i] = c
            self.state[i] = ConnState()
        return self.conns[i]

    def resolve(self, args):
        out = []
        for a in args:
            if isinstance(a, ID):
                self.conn(a.j)
                out.append(str(self.ids[a.j]))
            else:
                out.append(a)
        return out

    def close_all(self):
        for c in self.conns.values():
            c.close()


def _read_value(c, deadline):
    while True:
        end = reply_end(c.buf, 0)
        if end >= 0:
            v = bytes(c.buf[:end])
            del c.buf[:end]
            return v
        c._fill(deadline)


_PUSHES = (b">2\r\n$10\r\ninvalidate\r\n", b">2\r\n$21\r\ntracking-redir-broken\r\n",
           b"*3\r\n$7\r\nmessage\r\n", b">3\r\n$7\r\nmessage\r\n", b"*4\r\n$8\r\npmessage\r\n",
           b">4\r\n$8\r\npmessage\r\n")


def _is_push(v):
    """Something the server sent on its own (not a reply)."""
    return v.startswith(_PUSHES)


def _read_to_sentinel(c):
    """Values up to and including the sentinel's reply."""
    deadline = time.monotonic() + READ_TIMEOUT
    out = []
    while True:
        v = _read_value(c, deadline)
        out.append(v)
        if _SENTINEL_REPLY.match(v) or v.startswith(_CONTEXT_ERR):
            return out


def _read_to_reply(c, n=1):
    """Values up to and including the n-th that is not a push."""
    deadline = time.monotonic() + READ_TIMEOUT
    out = []
    while n > 0:
        v = _read_value(c, deadline)
        out.append(v)
        if not _is_push(v):
            n -= 1
    return out


def _drain(c, wait=0.05):
    """Whatever arrives within `wait` (a connection the server closes)."""
    end = time.monotonic() + wait
    data = bytes(c.buf)
    c.buf.clear()
    while time.monotonic() < end:
        c.sock.settimeout(max(0.001, end - time.monotonic()))
        try:
            chunk = c.sock.recv(65536)
        except (socket.timeout, OSError):
            break
        if not chunk:
            data += b"<closed>"
            break
        data += chunk
    c.sock.settimeout(c.timeout)
    return data


def normalize(data: bytes, side: Side) -> bytes:
    """Client ids as C<j>; HELLO's version masked."""
    names = {str(v).encode(): ("C%d" % k).encode() for k, v in side.ids.items()}

    def sub_id(m):
        return m.group(1) + names.get(m.group(2), b"?" + m.group(2))

    data = re.sub(rb"(\$8\r\nredirect\r\n:)(\d+)", sub_id, data)
    data = re.sub(rb"(\$21\r\ntracking-redir-broken\r\n:)(\d+)", sub_id, data)
    data = re.sub(rb"(\$2\r\nid\r\n:)(\d+)", sub_id, data)
    data = re.sub(rb"(\$7\r\nversion\r\n)\$\d+\r\n[^\r]*\r\n", rb"\1<version>", data)
    return data


def _is_id_query(args):
    words = [a.upper() if isinstance(a, str) else a for a in args]
    return words[:2] in (["CLIENT", "GETREDIR"], ["CLIENT", "ID"])


class Lockstep:
    """Runs steps on both sides; collects per-step, per-connection chunks."""

    def __init__(self, ferry_port, redis_port):
        self.sides = {"ferry": Side(ferry_port), "redis": Side(redis_port)}
        self.log = []

    def close(self):
        for s in self.sides.values():
            s.close_all()

    def run(self, steps, stop_at_first=True):
        mismatches = []
        for n, st in enumerate(steps):
            got = {name: self._apply_or_error(side, st) for name, side in self.sides.items()}
            self.log.append((st, got))
            if got["ferry"] != got["redis"]:
                mismatches.append(n)
                if stop_at_first:
                    break
        return mismatches

    def _apply_or_error(self, side, st):
        try:
            return self._apply(side, st)
        except (TimeoutError, OSError, Exception) as e:  # noqa: BLE001  (reported as the step's outcome)
            return {-1: ("<%s: %s>" % (type(e).__name__, e)).encode()}

    def _apply(self, side, st):
        if st.kind == "sleep":
            time.sleep(st.seconds)
            return {}
        if st.kind == "close":
            side.conn(st.conn).close()
            side.closed.add(st.conn)
            time.sleep(0.02)
            return {}
        own = {}
        if st.kind in ("cmd", "send", "pipe"):
            c = side.conn(st.conn)
            state = side.state[st.conn]
            cmds = [st.args] if st.cmds is None else st.cmds
            expect = len(cmds) + (1 if state.blocked else 0)  # a blocked command's reply comes first
            for a in cmds:
                state.update(a)
            c.send(b"".join(encode_command(side.resolve(a)) for a in cmds))
            if st.kind == "send":
                state.blocked = not (state.reply_off or state.skip_next)
                return {}
            state.blocked = False
            if not state.reply_off:   # its own replies first: the sync must follow the step
                own[st.conn] = b"".join(_read_to_reply(c, expect))
        return self._sync(side, st, own)

    def _sync(self, side, st, out):
        for i in sorted(side.conns):
            s = side.state[i]
            if i in side.closed or s.multi or s.blocked or s.reply_off:
                continue
            c = side.conns[i]
            c.send(encode_command(SENTINEL) * (2 if s.skip_next else 1))
            s.skip_next = False
            out[i] = out.get(i, b"") + b"".join(_read_to_sentinel(c))
        for i, data in out.items():
            if st.kind == "cmd" and i == st.conn and _is_id_query(st.args):
                data = re.sub(rb"^:(\d+)", lambda m: b":C%d" % _id_index(side, m.group(1)), data)
            out[i] = normalize(data, side)
        return out


def _id_index(side, idbytes):
    for k, v in side.ids.items():
        if str(v).encode() == idbytes:
            return k
    return -1


def report(ls: Lockstep, at: int, context: int = 12) -> str:
    lines = []
    lo = max(0, at - context)
    for n in range(lo, min(len(ls.log), at + 1)):
        st, got = ls.log[n]
        mark = ">>" if n == at else "  "
        lines.append("%s %4d %s" % (mark, n, st.describe()))
        if n == at or got["ferry"] != got["redis"]:
            for i in sorted(set(got["ferry"]) | set(got["redis"])):
                f, r = got["ferry"].get(i), got["redis"].get(i)
                if f != r:
                    lines.append("        conn %d ferry: %r" % (i, f))
                    lines.append("        conn %d redis: %r" % (i, r))
    return "\n".join(lines)
