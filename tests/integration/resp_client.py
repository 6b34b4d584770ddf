"""Raw RESP client helpers for ferry's integration tests.

Everything here works on raw bytes: `RawClient.read_reply()` returns the exact
bytes of one complete reply (RESP2 or RESP3, nested aggregates included) so
tests can compare servers byte for byte. `parse()` turns such bytes into a
small tagged Python structure when a test needs to look inside a reply
(SCAN cursors, HELLO maps, approximate TTLs).
"""
from __future__ import annotations

import socket
import time

DEFAULT_TIMEOUT = 5.0

# Reply type bytes.
_LINE_TYPES = frozenset(b"+-:_#,(")     # single line: simple, error, int, null, bool, double, bignum
_BLOB_TYPES = frozenset(b"$=!")         # length-prefixed: bulk, verbatim, blob error
_AGG_TYPES = frozenset(b"*~>")          # N elements: array, set, push
_MAP_TYPES = frozenset(b"%|")           # 2N elements: map, attribute


class RespProtocolError(Exception):
    """The peer sent bytes that are not valid RESP."""


class ServerClosed(Exception):
    """The peer closed the connection before a complete reply arrived."""


def encode_command(args) -> bytes:
    """Encode a command (sequence of bytes/str/int) as a RESP multibulk."""
    out = [b"*%d\r\n" % len(args)]
    for a in args:
        a = to_bytes(a)
        out.append(b"$%d\r\n" % len(a))
        out.append(a)
        out.append(b"\r\n")
    return b"".join(out)


def to_bytes(a) -> bytes:
    if isinstance(a, bytes):
        return a
    if isinstance(a, bytearray):
        return bytes(a)
    if isinstance(a, str):
        return a.encode()
    if isinstance(a, int):
        return str(a).encode()
    if isinstance(a, float):
        return repr(a).encode()
    raise TypeError("cannot encode %r" % (a,))


def _line(buf, pos):
    nl = buf.find(b"\r\n", pos)
    if nl < 0:
        return None, -1
    return bytes(buf[pos + 1:nl]), nl + 2


def reply_end(buf, pos: int = 0) -> int:
    """Offset just past the complete RESP value starting at buf[pos], or -1
    when more bytes are needed. Raises RespProtocolError on garbage."""
    if pos >= len(buf):
        return -1
    t = buf[pos]
    line, after = _line(buf, pos)
    if after < 0:
        return -1
    if t in _LINE_TYPES:
        return after
    if t in _BLOB_TYPES:
        if t == ord("$") and line == b"?":          # streamed string
            p = after
            while True:
                chunk, p2 = _line(buf, p)
                if p2 < 0:
                    return -1
                if buf[p] != ord(";"):
                    raise RespProtocolError("bad streamed chunk at %d" % p)
                n = _int(chunk)
                if n == 0:
                    return p2
                p = p2 + n + 2
                if p > len(buf):
                    return -1
        n = _int(line)
        if n < 0:
            return after
        end = after + n + 2
        if end > len(buf):
            return -1
        if buf[end - 2:end] != b"\r\n":
            raise RespProtocolError("blob not terminated by CRLF at %d" % (end - 2))
        return end
    if t in _AGG_TYPES or t in _MAP_TYPES:
        p = after
        if line == b"?":                               # streamed aggregate
            while True:
                if p >= len(buf):
                    return -1
                if buf[p] == ord("."):
                    _, p2 = _line(buf, p)
                    return p2
                p = reply_end(buf, p)
                if p < 0:
                    return -1
        n = _int(line)
        if n < 0:
            return after
        count = 2 * n if t in _MAP_TYPES else n
        for _ in range(count):
            p = reply_end(buf, p)
            if p < 0:
                return -1
        if t == ord("|"):
            # An attribute is metadata that precedes the actual reply.
            return reply_end(buf, p)
        return p
    raise RespProtocolError("unknown reply type byte %r at offset %d" % (bytes([t]), pos))


def _int(b: bytes) -> int:
    try:
        return int(b)
    except ValueError:
        raise RespProtocolError("bad length/integer %r" % (b,)) from None


def split_replies(data: bytes):
    """Split a byte string made of complete replies into a list of replies.
    Trailing incomplete bytes are returned as the last element prefixed by
    the marker b'<incomplete>'."""
    out, pos = [], 0
    while pos < len(data):
        end = reply_end(data, pos)
        if end < 0:
            out.append(b"<incomplete>" + data[pos:])
            break
        out.append(bytes(data[pos:end]))
        pos = end
    return out


# ------------------------------------------------------------------ parsing
# parse() returns tagged tuples so that RESP2/RESP3 distinctions survive:
#   ("simple", b"OK") ("error", b"ERR ...") ("int", 5) ("bulk", b"..." | None)
#   ("null", None) ("bool", True) ("double", b"1.5") ("bignum", b"...")
#   ("verbatim", b"txt:...") ("array", [...] | None) ("set", [...])
#   ("push", [...]) ("map", [(k, v), ...]) ("attr", [(k, v)...], value)

_TAGS = {ord("+"): "simple", ord("-"): "error", ord("_"): "null", ord("#"): "bool",
         ord(","): "double", ord("("): "bignum", ord("$"): "bulk", ord("="): "verbatim",
         ord("!"): "bloberror", ord("*"): "array", ord("~"): "set", ord(">"): "push",
         ord("%"): "map", ord("|"): "attr", ord(":"): "int"}


def parse(raw: bytes):
    val, end = _parse_at(raw, 0)
    if end != len(raw):
        raise RespProtocolError("trailing bytes after reply: %r" % raw[end:end + 40])
    return val


def _parse_at(buf, pos):
    end = reply_end(buf, pos)
    if end < 0:
        raise RespProtocolError("incomplete reply: %r" % bytes(buf[pos:pos + 80]))
    t = buf[pos]
    tag = _TAGS[t]
    line, after = _line(buf, pos)
    if t in _LINE_TYPES:
        if tag == "int":
            return (tag, _int(line)), after
        if tag == "null":
            return (tag, None), after
        if tag == "bool":
            return (tag, line == b"t"), after
        return (tag, line), after
    if t in _BLOB_TYPES:
        if line == b"?":
            return (tag, bytes(buf[after:end])), end     # not produced by Redis
        n = _int(line)
        if n < 0:
            return (tag, None), after
        return (tag, bytes(buf[after:after + n])), after + n + 2
    if line == b"?":
        raise RespProtocolError("streamed aggregates not supported by parse()")
    n = _int(line)
    if n < 0:
        return (tag, None), after
    p = after
    if t in _MAP_TYPES:
        items = []
        for _ in range(n):
            k, p = _parse_at(buf, p)
            v, p = _parse_at(buf, p)
            items.append((k, v))
        if tag == "attr":
            v, p = _parse_at(buf, p)
            return (tag, items, v), p
        return (tag, items), p
    items = []
    for _ in range(n):
        v, p = _parse_at(buf, p)
        items.append(v)
    return (tag, items), p


def to_python(v):
    """Tagged value -> plain Python (bytes, int, list, dict, None, ...)."""
    tag = v[0]
    if tag in ("array", "set", "push"):
        return None if v[1] is None else [to_python(x) for x in v[1]]
    if tag == "map":
        return {to_python(k): to_python(x) for k, x in v[1]}
    if tag == "attr":
        return to_python(v[2])
    return v[1]


# ------------------------------------------------------------------ client
class RawClient:
    """A blocking socket client that sends raw bytes and reads the exact
    bytes of complete replies. Every read has a deadline. With `unix` (a
    path) it connects to that Unix socket instead of host:port; with
    `source` (an address) its TCP connection leaves from that address."""

    def __init__(self, port: int = 0, host: str = "127.0.0.1", timeout: float = DEFAULT_TIMEOUT,
                 unix: str | None = None, source: str | None = None):
        self.port = unix or port  # what error messages name
        self.host = host
        self.timeout = timeout
        self.buf = bytearray()
        self.eof = False
        if unix:
            self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            self.sock.settimeout(timeout)
            try:
                self.sock.connect(unix)
            except OSError:
                self.sock.close()
                raise
        else:
            self.sock = socket.create_connection((host, port), timeout=timeout,
                                                 source_address=(source, 0) if source else None)
            self.sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)

    # -- sending
    def send(self, data: bytes) -> None:
        self.sock.sendall(data)

    def send_command(self, *args) -> None:
        self.send(encode_command(args))

    # -- receiving
    def _fill(self, deadline: float) -> None:
        left = deadline - time.monotonic()
        if left <= 0:
            raise TimeoutError("no complete reply within %.1fs from %s; have %r"
                               % (self.timeout, self.port, bytes(self.buf[:200])))
        self.sock.settimeout(left)
        try:
            chunk = self.sock.recv(1 << 16)
        except socket.timeout:
            raise TimeoutError("no complete reply within %.1fs from %s; have %r"
                               % (self.timeout, self.port, bytes(self.buf[:200]))) from None
        except ConnectionResetError:
            chunk = b""
        if not chunk:
            self.eof = True
            raise ServerClosed("connection closed by server (%s); unparsed bytes %r"
                               % (self.port, bytes(self.buf[:200])))
        self.buf += chunk

    def read_reply(self, timeout: float | None = None) -> bytes:
        deadline = time.monotonic() + (self.timeout if timeout is None else timeout)
        while True:
            end = reply_end(self.buf, 0)
            if end >= 0:
                out = bytes(self.buf[:end])
                del self.buf[:end]
                return out
            self._fill(deadline)

    def read_replies(self, n: int, timeout: float | None = None) -> list:
        deadline = time.monotonic() + (self.timeout if timeout is None else timeout)
        out = []
        for _ in range(n):
            out.append(self.read_reply(timeout=max(0.001, deadline - time.monotonic())))
        return out

    def command(self, *args) -> bytes:
        self.send_command(*args)
        return self.read_reply()

    def pipeline(self, commands) -> list:
        self.send(b"".join(encode_command(c) for c in commands))
        return self.read_replies(len(commands))

    def read_until_eof(self, timeout: float | None = None) -> bytes:
        """Everything the server sends until it closes the connection
        (ECONNRESET counts as a close). Raises TimeoutError if it does not."""
        deadline = time.monotonic() + (self.timeout if timeout is None else timeout)
        while not self.eof:
            try:
                self._fill(deadline)
            except ServerClosed:
                break
        out = bytes(self.buf)
        self.buf.clear()
        return out

    def assert_no_pending(self, wait: float = 0.05) -> None:
        """Fail if the server sent anything not yet read (within `wait`)."""
        if self.buf:
            raise AssertionError("unexpected extra bytes: %r" % bytes(self.buf[:200]))
        self.sock.settimeout(wait)
        try:
            chunk = self.sock.recv(4096)
        except socket.timeout:
            return
        except ConnectionResetError:
            chunk = b""
        finally:
            self.sock.settimeout(self.timeout)
        if chunk:
            raise AssertionError("unexpected extra bytes: %r" % chunk[:200])
        self.eof = True
        raise AssertionError("server closed the connection unexpectedly")

    def close(self) -> None:
        try:
            self.sock.close()
        except OSError:
            pass

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()
