"""TLS plumbing for test_tls.py: a throwaway PKI made with the openssl CLI,
servers with a TLS port, TLS clients (ssl.SSLContext, a raw RESP client over
TLS, a MemoryBIO connection whose raw bytes the test controls).

  make_pki(d)        every key and certificate below, in directory d (EC
                     P-256, signed with SHA-256; a few openssl runs, < 1 s):
                       ca, ca2, rogue    three CAs (rogue: no server trusts it)
                       server, server2   CN 127.0.0.1, SAN IP:127.0.0.1 and
                                         DNS:localhost, signed by ca / ca2
                       client, client2   client certificates of ca / ca2
                       rogue_client      a client certificate of rogue
                       server_enc.key    server.key encrypted (AES-256) with
                                         KEY_PASS
                     -> Pki: pki.path("server.crt"), pki.ca (ca.crt),
                        pki.server_key (server.key) ...
  pki                session-scoped fixture: make_pki in a temp dir
  tls_args(pki, port, auth="yes", which="", key=None)
                     "--tls-port", port, "--tls-cert-file" ... for a server
                     (which="2": the second CA's files; key: another key)
  start_tls(kind, pki, *extra, auth=, which=, key=)
                     conftest's start_server with a TLS port (.tls_port)
  start_tls_only(kind, pki, *extra)
                     a prockit.Proc with `--port 0` and a TLS port only,
                     waited for by TLS PING (conftest waits on the plain port)
  tls_servers        fixture: start(kind, *extra, auth=, tls_only=, which=,
                     key=) -> one of the two above, stopped and its files
                     removed after the test; one that died fails the test
  client_context(pki, cert="client", ca="ca", min_version=, max_version=)
                     ssl.SSLContext for a client (cert=None: no client
                     certificate)
  TlsClient(port, ctx, session=None)
                     RawClient over TLS (read_reply, command, read_until_eof)
  try_tls(port, ctx) "ok" when a TLS PING answers +PONG, "refused: ..." when
                     the handshake fails or the connection closes first
  read_raw_until_closed(sock, timeout)
                     (bytes, "eof"|"reset") until the peer closes
  MemTls(port, ctx)  TLS by ssl.SSLObject + MemoryBIO over a plain socket:
                     .command() through TLS, .raw_send() bytes under it
  client_hello(ctx)  the bytes of a ClientHello made by ctx
  listening_ports(pid)  the TCP ports a process listens on (/proc)
"""
from __future__ import annotations

import os
import shutil
import socket
import ssl
import subprocess
import tempfile
import time

import pytest

from conftest import STARTUP_TIMEOUT, free_port, start_server
from prockit import Proc
from resp_client import RawClient, ServerClosed, encode_command

OPENSSL = shutil.which("openssl") or "/usr/bin/openssl"
KEY_PASS = "ferry-key-pass"
PING = b"*1\r\n$4\r\nPING\r\n"

_EXT = """\
[ca]
basicConstraints = critical, CA:TRUE
keyUsage = critical, keyCertSign, cRLSign
subjectKeyIdentifier = hash

[server]
basicConstraints = critical, CA:FALSE
keyUsage = critical, digitalSignature, keyEncipherment
extendedKeyUsage = serverAuth, clientAuth
subjectAltName = IP:127.0.0.1, DNS:localhost
subjectKeyIdentifier = hash
authorityKeyIdentifier = keyid:always

[client]
basicConstraints = critical, CA:FALSE
keyUsage = critical, digitalSignature, keyEncipherment
extendedKeyUsage = clientAuth
subjectKeyIdentifier = hash
authorityKeyIdentifier = keyid:always
"""

# a minimal config so that the system's openssl.cnf does not add extensions
_REQ_CNF = """\
[req]
distinguished_name = dn
prompt = no
[dn]
CN = unused
"""


class Pki:
    def __init__(self, d: str):
        self.dir = d

    def path(self, name: str) -> str:
        return os.path.join(self.dir, name)

    def __getattr__(self, name):
        # pki.ca -> .../ca.crt, pki.server_key -> .../server.key
        if name.endswith("_key"):
            return self.path(name[:-4] + ".key")
        if name.startswith("_"):
            raise AttributeError(name)
        return self.path(name + ".crt")


def _ossl(d: str, *args) -> None:
    r = subprocess.run([OPENSSL, *args], cwd=d, capture_output=True, text=True, timeout=60)
    if r.returncode != 0:
        raise RuntimeError("openssl %s failed (%d): %s" % (" ".join(args), r.returncode, r.stderr.strip()))


def _key(d: str, name: str) -> None:
    _ossl(d, "genpkey", "-algorithm", "EC", "-pkeyopt", "ec_paramgen_curve:P-256", "-out", name + ".key")


def _ca(d: str, name: str, cn: str) -> None:
    _key(d, name)
    _ossl(d, "req", "-config", "req.cnf", "-x509", "-new", "-key", name + ".key", "-sha256", "-days", "3650",
          "-subj", "/O=ferry tests/CN=" + cn, "-extensions", "ca", "-out", name + ".crt")


def _leaf(d: str, name: str, ca: str, cn: str, ext: str) -> None:
    _key(d, name)
    _ossl(d, "req", "-config", "req.cnf", "-new", "-key", name + ".key", "-subj", "/O=ferry tests/CN=" + cn,
          "-out", name + ".csr")
    _ossl(d, "x509", "-req", "-in", name + ".csr", "-CA", ca + ".crt", "-CAkey", ca + ".key", "-CAcreateserial",
          "-days", "3650", "-sha256", "-extfile", "ext.cnf", "-extensions", ext, "-out", name + ".crt")
    os.unlink(os.path.join(d, name + ".csr"))


def make_pki(d: str) -> Pki:
    with open(os.path.join(d, "ext.cnf"), "w") as f:
        f.write(_EXT)
    with open(os.path.join(d, "req.cnf"), "w") as f:
        f.write(_REQ_CNF + "\n" + _EXT)
    _ca(d, "ca", "ferry test CA")
    _ca(d, "ca2", "ferry test CA 2")
    _ca(d, "rogue", "unknown CA")
    _leaf(d, "server", "ca", "127.0.0.1", "server")
    _leaf(d, "server2", "ca2", "127.0.0.1", "server")
    _leaf(d, "client", "ca", "ferry test client", "client")
    _leaf(d, "client2", "ca2", "ferry test client 2", "client")
    _leaf(d, "rogue_client", "rogue", "ferry test client", "client")
    _ossl(d, "pkey", "-in", "server.key", "-aes256", "-passout", "pass:" + KEY_PASS, "-out", "server_enc.key")
    return Pki(d)


@pytest.fixture(scope="session")
def pki():
    d = tempfile.mkdtemp(prefix="ferry-it-pki-")
    try:
        yield make_pki(d)
    finally:
        shutil.rmtree(d, ignore_errors=True)


# ---------------------------------------------------------------- servers
def tls_args(pki: Pki, port: int, auth: str = "yes", which: str = "", key: str | None = None) -> list:
    """redis-server's TLS arguments: tls-port, the server certificate and key
    of CA `which` ("" or "2"; key: another key file), that CA as the client
    CA, tls-auth-clients."""
    return ["--tls-port", str(port), "--tls-cert-file", pki.path("server%s.crt" % which),
            "--tls-key-file", key or pki.path("server%s.key" % which), "--tls-ca-cert-file",
            pki.path("ca%s.crt" % which), "--tls-auth-clients", auth]


def start_tls(kind: str, pki: Pki, *extra, auth: str = "yes", **tls):
    """start_server(kind) with a TLS port beside the plain one (retried on a
    new TLS port when the free one was taken meanwhile); tls: tls_args's
    which= and key=."""
    err = None
    for _ in range(3):
        tls_port = free_port()
        try:
            s = start_server(kind, *tls_args(pki, tls_port, auth, **tls), *extra)
        except RuntimeError as e:
            err = e
            continue
        s.tls_port = tls_port
        return s
    raise err


def start_tls_only(kind: str, pki: Pki, *extra, auth: str = "no", timeout: float = STARTUP_TIMEOUT) -> Proc:
    """A server with `--port 0` (no plain TCP listener) and a TLS port,
    waited for until a TLS PING answers; .tls_port set."""
    tls_port = free_port()
    args = ["--port", "0", "--save", "", "--bind", "127.0.0.1", *tls_args(pki, tls_port, auth), *extra]
    if kind == "redis":
        args += ["--appendonly", "no", "--daemonize", "no"]
    p = Proc(kind, args)
    p.tls_port = tls_port
    p.port = 0
    ctx = client_context(pki)
    deadline = time.monotonic() + timeout
    while True:
        if not p.alive():
            out = p.output()
            p.cleanup()
            raise RuntimeError("%s exited (%s) before answering TLS on %d:\n%s"
                               % (kind, p.proc.returncode, tls_port, out[-2000:]))
        if try_tls(tls_port, ctx, timeout=1.0) == "ok":
            return p
        if time.monotonic() > deadline:
            out = p.output()
            p.cleanup()
            raise TimeoutError("%s: no TLS +PONG on %d within %.0fs:\n%s" % (kind, tls_port, timeout, out[-2000:]))
        time.sleep(0.05)


@pytest.fixture
def tls_servers(pki):
    """start(kind, *extra, auth="yes", tls_only=False, which=, key=) -> a
    started server (.port, .tls_port, .logpath); every one is stopped after
    the test, and a server that died during the test fails it."""
    started = []

    def start(kind, *extra, auth="yes", tls_only=False, **tls):
        if tls_only:
            s = start_tls_only(kind, pki, *extra, auth=auth)
        else:
            s = start_tls(kind, pki, *extra, auth=auth, **tls)
        started.append(s)
        return s

    yield start
    died = [s for s in started if not s.alive()]
    for s in started:
        s.cleanup()
    if died:
        pytest.fail("server(s) died during the test: %s" % ", ".join("%s tls %d" % (s.kind, s.tls_port)
                                                                     for s in died), pytrace=False)


# ---------------------------------------------------------------- clients
def client_context(pki: Pki, cert: str | None = "client", ca: str = "ca", min_version=None,
                   max_version=None) -> ssl.SSLContext:
    """A client context trusting CA `ca` ("ca", "ca2", "rogue"), presenting
    client certificate `cert` ("client", "client2", "rogue_client", None),
    verifying the server's name (127.0.0.1 is in its SAN)."""
    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
    ctx.load_verify_locations(pki.path(ca + ".crt"))
    if cert:
        ctx.load_cert_chain(pki.path(cert + ".crt"), pki.path(cert + ".key"))
    if min_version is not None:
        ctx.minimum_version = min_version
    if max_version is not None:
        ctx.maximum_version = max_version
    return ctx


def tls_socket(port: int, ctx: ssl.SSLContext, timeout: float = 5.0, session=None) -> ssl.SSLSocket:
    raw = socket.create_connection(("127.0.0.1", port), timeout=timeout)
    raw.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    try:
        return ctx.wrap_socket(raw, server_hostname="127.0.0.1", session=session)
    except BaseException:
        raw.close()
        raise


class TlsClient(RawClient):
    """RawClient over TLS: the handshake is done in the constructor (within
    `timeout`); read_reply/command/pipeline/read_until_eof as RawClient."""

    def __init__(self, port: int, ctx: ssl.SSLContext, timeout: float = 5.0, session=None):
        self.port = port
        self.host = "127.0.0.1"
        self.timeout = timeout
        self.buf = bytearray()
        self.eof = False
        self.sock = tls_socket(port, ctx, timeout, session)

    def _fill(self, deadline: float) -> None:
        try:
            super()._fill(deadline)
        except (ssl.SSLZeroReturnError, ssl.SSLEOFError):   # close_notify, or a close without it
            self.eof = True
            raise ServerClosed("TLS connection closed by server (%s); unparsed bytes %r"
                               % (self.port, bytes(self.buf[:200]))) from None


def try_tls(port: int, ctx: ssl.SSLContext, timeout: float = 5.0) -> str:
    """'ok' when a TLS connection's PING answers +PONG; 'refused: <what
    happened>' when the handshake fails or the connection is closed or reset
    before any reply; 'reply: ...' for any other reply. A timeout raises: a
    hang is a failure."""
    try:
        with TlsClient(port, ctx, timeout=timeout) as c:
            c.send(PING)
            reply = c.read_reply()
    except ssl.SSLError as e:
        return "refused: %s" % (e.reason or type(e).__name__)
    except (ServerClosed, ConnectionError) as e:
        return "refused: %s" % type(e).__name__
    except OSError as e:
        if isinstance(e, (TimeoutError, socket.timeout)):
            raise
        return "refused: %s" % type(e).__name__
    return "ok" if reply == b"+PONG\r\n" else "reply: %r" % reply[:80]


def read_raw_until_closed(sock: socket.socket, timeout: float) -> tuple:
    """(bytes received, how it ended: 'eof' or 'reset') until the peer closes;
    TimeoutError if it does not within timeout."""
    deadline = time.monotonic() + timeout
    got = bytearray()
    while True:
        left = deadline - time.monotonic()
        if left <= 0:
            raise TimeoutError("connection still open after %.1fs; got %r" % (timeout, bytes(got[:200])))
        sock.settimeout(left)
        try:
            chunk = sock.recv(65536)
        except socket.timeout:
            raise TimeoutError("connection still open after %.1fs; got %r" % (timeout, bytes(got[:200]))) from None
        except ConnectionResetError:
            return bytes(got), "reset"
        if not chunk:
            return bytes(got), "eof"
        got += chunk


class MemTls:
    """A TLS connection through ssl.SSLObject and two MemoryBIOs over a plain
    TCP socket: the handshake and commands go through TLS, raw_send() puts
    bytes on the wire underneath it."""

    def __init__(self, port: int, ctx: ssl.SSLContext, timeout: float = 5.0):
        self.timeout = timeout
        self.sock = socket.create_connection(("127.0.0.1", port), timeout=timeout)
        self.inc, self.out = ssl.MemoryBIO(), ssl.MemoryBIO()
        self.obj = ctx.wrap_bio(self.inc, self.out, server_hostname="127.0.0.1")
        self._step(self.obj.do_handshake)

    def _flush(self) -> None:
        data = self.out.read()
        if data:
            self.sock.sendall(data)

    def _step(self, fn, *args):
        """fn() with the BIOs pumped until it neither wants to read nor write."""
        deadline = time.monotonic() + self.timeout
        while True:
            try:
                r = fn(*args)
                self._flush()
                return r
            except ssl.SSLWantReadError:
                self._flush()
                left = deadline - time.monotonic()
                if left <= 0:
                    raise TimeoutError("TLS step timed out") from None
                self.sock.settimeout(left)
                chunk = self.sock.recv(65536)
                if not chunk:
                    raise ServerClosed("closed during a TLS step")
                self.inc.write(chunk)

    def command(self, *args) -> bytes:
        """One command through TLS; the first reply's bytes (a short reply)."""
        self.obj.write(encode_command(args))
        self._flush()
        data = b""
        while not data.endswith(b"\r\n"):
            data += self._step(self.obj.read, 65536)
        return data

    def raw_send(self, data: bytes) -> None:
        self.sock.sendall(data)

    def close(self) -> None:
        self.sock.close()


def client_hello(ctx: ssl.SSLContext) -> bytes:
    """The bytes of one ClientHello made by ctx (not sent anywhere)."""
    inc, out = ssl.MemoryBIO(), ssl.MemoryBIO()
    obj = ctx.wrap_bio(inc, out, server_hostname="127.0.0.1")
    try:
        obj.do_handshake()
    except ssl.SSLWantReadError:
        pass
    return out.read()


def listening_ports(pid: int) -> set:
    """The TCP ports process pid listens on (its sockets in /proc/net/tcp{,6}
    in state LISTEN)."""
    inodes = set()
    fd_dir = "/proc/%d/fd" % pid
    for fd in os.listdir(fd_dir):
        try:
            target = os.readlink(os.path.join(fd_dir, fd))
        except OSError:
            continue
        if target.startswith("socket:["):
            inodes.add(target[8:-1])
    ports = set()
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        try:
            with open(table) as f:
                next(f)
                for line in f:
                    fields = line.split()
                    if fields[3] == "0A" and fields[9] in inodes:
                        ports.add(int(fields[1].rsplit(":", 1)[1], 16))
        except OSError:
            pass
    return ports
