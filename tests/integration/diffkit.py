"""Differential test framework: the same steps go to ferry and to the
reference redis-server in lockstep, and their raw reply bytes are compared.

A test case is data: a list of steps. A step is either a plain list/tuple of
arguments (sent as a RESP multibulk on connection 0, one reply compared byte
for byte) or a `Step` built with the helpers below:

    cmd(*args, conn=1)        command on another connection of the same case
    sorted_(*args)            array reply compared as a multiset (KEYS)
    approx(*args, tol=1)      integer reply compared within +-tol when both
                              are >= 0 (TTL/PTTL/EXPIRETIME of relative expiries)
    hello(*args)              HELLO reply; the volatile fields id/version are
                              masked, everything else (order, types) compared
    pairs(*args)              flat array (field, value, ...) or RESP3 map compared
                              as a multiset of pairs (HGETALL of a hash table)
    scan_all(*opts)           SCAN 0 .. until cursor 0 on each server; the key
                              sets are compared (and error replies byte for byte)
    kscan_all(cmd, key, *opts)  HSCAN/SSCAN/ZSCAN key 0 .. until cursor 0; the
                              element sets (HSCAN/ZSCAN: pairs) are compared
    raw(data, n=1)            raw bytes (inline commands, pipelines); n replies
    raw_chunked(data, n=1, chunk=1)  same, written a few bytes at a time
    raw_eof(data)             raw bytes; everything up to the server's close
                              is compared (protocol errors, QUIT)
    sleep(seconds)            pause both servers' clients (expiry tests)

Connections are opened lazily per case (connection 0, 1, ...), so per-
connection state (SELECT, HELLO, CLIENT SETNAME, MULTI, WATCH) never leaks
between cases. At the end of a case every still-open connection gets a PING
whose replies must also match, so stray extra reply bytes are caught.

On a mismatch, format_report() shows the mismatching step(s), the steps before
the first one, and both servers' keyspaces (keyspace_dump: INFO keyspace
counts, live keys and their PTTL) taken right after the mismatch when the run
stops there (stop_at_first, desync), else at the end of the case.
"""
from __future__ import annotations

import glob
import os
import time

from resp_client import (RawClient, RespProtocolError, ServerClosed, encode_command, parse,
                         to_bytes)

READ_TIMEOUT = 10.0
EOF_TIMEOUT = 3.0

TIMEOUT = b"<timeout: no complete reply>"
CLOSED = b"<connection closed>"


class Step:
    __slots__ = ("kind", "args", "data", "conn", "mode", "tol", "n", "chunk", "seconds")

    def __init__(self, kind, args=None, data=None, conn=0, mode="exact", tol=0, n=1,
                 chunk=0, seconds=0.0):
        self.kind = kind            # "cmd" | "raw" | "eof" | "scan" | "sleep"
        self.args = [to_bytes(a) for a in args] if args is not None else None
        self.data = data
        self.conn = conn
        self.mode = mode            # "exact" | "sorted" | "pairs" | "approx" | "hello" | "key" (kscan)
        self.tol = tol
        self.n = n
        self.chunk = chunk
        self.seconds = seconds

    def describe(self) -> str:
        if self.kind == "sleep":
            return "sleep(%s)" % self.seconds
        if self.kind in ("raw", "eof"):
            what = "raw" if self.kind == "raw" else "raw_eof"
            return "%s(%s)" % (what, _short(self.data, 160))
        words = " ".join(_short(a, 60) for a in self.args)
        pre = "SCAN-ALL " if self.kind == "scan" else ""
        suf = "" if self.conn == 0 else "  [conn %d]" % self.conn
        mode = "" if self.mode == "exact" else "  [%s]" % self.mode
        return pre + words + suf + mode


def cmd(*args, conn=0):
    return Step("cmd", args=args, conn=conn)


def sorted_(*args, conn=0):
    return Step("cmd", args=args, conn=conn, mode="sorted")


def pairs(*args, conn=0):
    return Step("cmd", args=args, conn=conn, mode="pairs")


def approx(*args, tol=1, conn=0):
    return Step("cmd", args=args, conn=conn, mode="approx", tol=tol)


def hello(*args, conn=0):
    return Step("cmd", args=("HELLO",) + tuple(args), conn=conn, mode="hello")


def scan_all(*opts, conn=0):
    return Step("scan", args=opts, conn=conn)


def kscan_all(command, key, *opts, conn=0):
    return Step("scan", args=(command, key) + tuple(opts), conn=conn, mode="key")


def raw(data: bytes, n: int = 1, conn=0):
    return Step("raw", data=data, n=n, conn=conn)


def raw_chunked(data: bytes, n: int = 1, chunk: int = 1, conn=0):
    return Step("raw", data=data, n=n, chunk=chunk, conn=conn)


def raw_eof(data: bytes, conn=0):
    return Step("eof", data=data, conn=conn)


def sleep(seconds: float):
    return Step("sleep", seconds=seconds)


def pick_weighted(r, ops):
    """The generator chosen from ops, [(weight, fn), ...], by one r.uniform
    draw: the random programs' shared step (one draw per step, so a seed
    always gives the same program)."""
    x = r.uniform(0, sum(w for w, _ in ops))
    for w, f in ops:
        x -= w
        if x <= 0:
            return f
    return ops[-1][1]


def as_step(s) -> Step:
    if isinstance(s, Step):
        return s
    if isinstance(s, (list, tuple)):
        return cmd(*s)
    raise TypeError("bad step %r" % (s,))


def _short(b, n=200) -> str:
    if isinstance(b, str):
        b = b.encode()
    r = repr(bytes(b[:n]))[2:-1]
    return r + ("...(%d bytes)" % len(b) if len(b) > n else "")


# ------------------------------------------------------------------ comparing
def _masked_hello(v):
    """Mask HELLO's id and version values (RESP2 flat array or RESP3 map)."""
    tag = v[0]
    if tag == "map":
        return ("map", [(k, ("masked", None) if k[1] in (b"id", b"version") else x)
                        for k, x in v[1]])
    if tag == "array" and v[1] is not None:
        items = list(v[1])
        for i in range(0, len(items) - 1, 2):
            if items[i][0] in ("bulk", "simple") and items[i][1] in (b"id", b"version"):
                items[i + 1] = ("masked", None)
        return ("array", items)
    return v


# Extra comparison modes registered by a test module: mode name -> function
# of the parsed reply returning a comparable canonical form (e.g. the ACL
# tests' "acl": rule lists whose command order follows a hash table's).
CANONICALIZERS = {}


def _canon(mode, tol, reply):
    """Canonical form of a reply under a comparison mode (None -> use bytes)."""
    if mode == "exact" or not isinstance(reply, bytes) or reply in (TIMEOUT, CLOSED):
        return None
    try:
        v = parse(reply)
    except RespProtocolError:
        return None
    if mode == "sorted" and v[0] in ("array", "set") and v[1] is not None:
        return (v[0], sorted(repr(x) for x in v[1]))
    if mode == "pairs" and v[0] == "map":
        return (v[0], sorted(repr(p) for p in v[1]))
    if mode == "pairs" and v[0] == "array" and v[1] is not None and len(v[1]) % 2 == 0:
        items = v[1]
        return (v[0], sorted(repr((items[i], items[i + 1])) for i in range(0, len(items), 2)))
    if mode == "hello":
        return repr(_masked_hello(v))
    if mode in CANONICALIZERS:
        return CANONICALIZERS[mode](v)
    return None


def _approx_equal(va, vb, tol) -> bool:
    """Parsed replies equal, but for non-negative integers (a remaining
    time, a count) that may differ by tol, also inside arrays."""
    if va == vb:
        return True
    if va[0] == vb[0] == "int" and va[1] >= 0 and vb[1] >= 0:
        return abs(va[1] - vb[1]) <= tol
    if va[0] == vb[0] == "array" and va[1] is not None and vb[1] is not None and len(va[1]) == len(vb[1]):
        return all(_approx_equal(x, y, tol) for x, y in zip(va[1], vb[1]))
    return False


def replies_equal(step: Step, a: bytes, b: bytes) -> bool:
    if a == b:
        return True
    if step.mode == "approx":
        try:
            va, vb = parse(a), parse(b)
        except RespProtocolError:
            return False
        return _approx_equal(va, vb, step.tol)
    ca, cb = _canon(step.mode, step.tol, a), _canon(step.mode, step.tol, b)
    return ca is not None and ca == cb


# ------------------------------------------------------------------ running
class _Conns:
    """Lazily opened connections of one case on one server."""

    def __init__(self, port):
        self.port = port
        self.conns = {}

    def get(self, i) -> RawClient:
        c = self.conns.get(i)
        if c is None:
            c = RawClient(self.port, timeout=READ_TIMEOUT)
            self.conns[i] = c
        return c

    def drop(self, i):
        c = self.conns.pop(i, None)
        if c is not None:
            c.close()

    def close(self):
        for c in self.conns.values():
            c.close()
        self.conns.clear()


def _read(client: RawClient, n: int):
    out = []
    for _ in range(n):
        try:
            out.append(client.read_reply())
        except TimeoutError:
            out.append(TIMEOUT + b" (have %r)" % bytes(client.buf[:120]))
            break
        except ServerClosed:
            out.append(CLOSED)
            break
    return b"".join(out)


def _send(client: RawClient, data: bytes, chunk: int = 0):
    try:
        if chunk:
            for i in range(0, len(data), chunk):
                client.send(data[i:i + chunk])
                time.sleep(0.0005)
        else:
            client.send(data)
        return True
    except OSError:
        return False


def _scan_all(client: RawClient, opts, keyed=False):
    """Run a full SCAN iteration (keyed: opts are HSCAN/SSCAN/ZSCAN and its
    key, then options); return canonical bytes describing it."""
    cursor = b"0"
    keys = set()
    paired = keyed and opts[0].upper() in (b"HSCAN", b"ZSCAN")
    for _ in range(100000):
        if keyed:
            client.send(encode_command(list(opts[:2]) + [cursor] + list(opts[2:])))
        else:
            client.send(encode_command([b"SCAN", cursor] + list(opts)))
        try:
            r = client.read_reply()
        except (TimeoutError, ServerClosed) as e:
            return b"<scan failed: %r>" % (str(e).encode(),)
        v = parse(r)
        if v[0] != "array" or not v[1] or len(v[1]) != 2:
            return r                       # error reply (or garbage): compare bytes
        cur, batch = v[1]
        if cur[0] != "bulk" or batch[0] != "array":
            return b"<bad SCAN reply shape> " + r
        items = [k[1] for k in batch[1]]
        if paired:
            if len(items) % 2:
                return b"<odd element count in a paired scan reply> " + r
            items = [(items[i], items[i + 1]) for i in range(0, len(items), 2)]
        keys.update(items)
        cursor = cur[1]
        if cursor == b"0":
            return b"SCAN-KEYS " + repr(sorted(keys)).encode()
    return b"<SCAN did not terminate>"


class Mismatch:
    def __init__(self, index, step, ferry, redis):
        self.index, self.step, self.ferry, self.redis = index, step, ferry, redis
        self.keyspace = None        # (when, ferry dump, redis dump), see keyspace_dump

    def format(self) -> str:
        return ("  step #%d: %s\n    ferry: %s\n    redis: %s"
                % (self.index, self.step.describe(), _short(self.ferry, 600), _short(self.redis, 600)))


DUMP_MAX_KEYS = 40


def keyspace_dump(port) -> str:
    """Every non-empty db of a server, on a fresh connection and without
    changing it: INFO keyspace's counts (which include expired keys that were
    not reclaimed yet), then KEYS * (live keys only) sorted, each with its PTTL
    (-1: no expiry). Only live keys are looked up, so nothing gets deleted."""
    try:
        with RawClient(port, timeout=2.0) as c:
            info = parse(c.command("INFO", "keyspace"))
            if info[0] not in ("bulk", "verbatim"):
                return "<unavailable: INFO keyspace answered %r>" % (info,)
            info = bytes(info[1]).decode()
            lines = []
            for line in info.splitlines():
                if not line.startswith("db") or ":" not in line:
                    continue
                name, counts = line.split(":", 1)
                c.command("SELECT", name[2:])
                keys = sorted(x[1] for x in parse(c.command("KEYS", "*"))[1])
                shown = ["%s(%s)" % (_short(k, 40), parse(c.command("PTTL", k))[1])
                         for k in keys[:DUMP_MAX_KEYS]]
                more = " ...and %d more" % (len(keys) - DUMP_MAX_KEYS) if len(keys) > DUMP_MAX_KEYS else ""
                lines.append("%s %s, %d live: %s%s" % (name, counts, len(keys), " ".join(shown), more))
            return "\n".join(lines) or "(empty)"
    except (OSError, ServerClosed, RespProtocolError, TypeError, IndexError) as e:
        return "<unavailable: %r>" % (e,)


def _attach_keyspace(m: Mismatch, ferry_port, redis_port, when: str):
    m.keyspace = (when, keyspace_dump(ferry_port), keyspace_dump(redis_port))


def flushall(port):
    try:
        with RawClient(port, timeout=READ_TIMEOUT) as c:
            r = c.command("FLUSHALL")
    except (OSError, ServerClosed) as e:
        raise AssertionError("FLUSHALL before the case failed on port %d: %s" % (port, e)) from None
    if r != b"+OK\r\n":
        raise AssertionError("FLUSHALL before the case on port %d answered %r" % (port, r))


def run_steps(ferry_port: int, redis_port: int, steps, stop_at_first=False, flush=True):
    """Run steps in lockstep on both servers; return (mismatches, transcript).
    transcript is a list of (index, step, ferry_reply, redis_reply)."""
    steps = [as_step(s) for s in steps]
    if flush:
        flushall(ferry_port)
        flushall(redis_port)
    fc, rc = _Conns(ferry_port), _Conns(redis_port)
    mismatches, transcript = [], []
    try:
        for i, st in enumerate(steps):
            if st.kind == "sleep":
                time.sleep(st.seconds)
                continue
            pair = []
            if st.kind == "scan":
                for conns in (fc, rc):
                    pair.append(_scan_all(conns.get(st.conn), st.args, keyed=st.mode == "key"))
            else:
                data = encode_command(st.args) if st.kind == "cmd" else st.data
                n = 1 if st.kind == "cmd" else st.n
                clients = (fc.get(st.conn), rc.get(st.conn))
                sent = [_send(c, data, st.chunk) for c in clients]
                for c, ok in zip(clients, sent):
                    if st.kind == "eof":
                        try:
                            pair.append(c.read_until_eof(timeout=EOF_TIMEOUT))
                        except TimeoutError:
                            pair.append(bytes(c.buf) + TIMEOUT + b" (server did not close)")
                    elif not ok:
                        pair.append(CLOSED + b" (send failed)")
                    else:
                        pair.append(_read(c, n))
            f, r = pair
            transcript.append((i, st, f, r))
            desync = TIMEOUT in f or TIMEOUT in r
            if st.kind == "eof" or f.endswith(CLOSED) or r.endswith(CLOSED):
                fc.drop(st.conn)
                rc.drop(st.conn)
            if not replies_equal(st, f, r):
                mismatches.append(Mismatch(i, st, f, r))
                if stop_at_first or desync:
                    _attach_keyspace(mismatches[0], ferry_port, redis_port, "right after step #%d" % i)
                    return mismatches, transcript
        # Stray bytes check: one PING per connection still open on both sides.
        for ci in sorted(set(fc.conns) & set(rc.conns)):
            st = cmd("PING", conn=ci)
            f, r = (_read(c, 1) if _send(c, b"*1\r\n$4\r\nPING\r\n") else CLOSED
                    for c in (fc.get(ci), rc.get(ci)))
            transcript.append(("final", st, f, r))
            if f != r:
                mismatches.append(Mismatch("final-PING", st, f, r))
        if mismatches:
            _attach_keyspace(mismatches[0], ferry_port, redis_port, "at the end of the case")
    finally:
        fc.close()
        rc.close()
    return mismatches, transcript


def format_report(name, mismatches, transcript, context=4) -> str:
    lines = ["differential case %r: %d mismatching step(s)" % (name, len(mismatches))]
    for m in mismatches[:3]:
        lines.append(m.format())
    if len(mismatches) > 3:
        lines.append("  ... and %d more" % (len(mismatches) - 3))
    first = mismatches[0].index
    if isinstance(first, int):
        lines.append("  transcript before the first mismatch (last %d steps):" % context)
        for idx, st, f, r in transcript:
            if isinstance(idx, int) and first - context <= idx < first:
                lines.append("    #%d %s -> %s" % (idx, st.describe(), _short(f, 120)))
    if mismatches[0].keyspace:
        when, fd, rd = mismatches[0].keyspace
        lines.append("  keyspace %s (dbN keys=.. counts unreclaimed expired keys; the live keys "
                     "are listed with their PTTL):" % when)
        for kind, dump in (("ferry", fd), ("redis", rd)):
            lines.append("    %s:" % kind)
            lines.extend("      " + x for x in dump.splitlines())
    return "\n".join(lines)


def aof_increment(workdir: str) -> bytes:
    """The bytes of a server's one incremental AOF file (appendonlydir)."""
    time.sleep(0.2)
    incr = glob.glob(os.path.join(workdir, "appendonlydir", "*.incr.aof"))
    assert len(incr) == 1, incr
    with open(incr[0], "rb") as fh:
        return fh.read()
