"""The Unix socket listener (`unixsocket`, `unixsocketperm`; src/io/net.c),
against redis-server 7.0.15 wherever both can be asked the same thing:
redis-cli -s and redis-py (RESP2 and RESP3) over the socket, a pipelined
batch of 10,000 SETs, the socket file's mode, the file removed at SHUTDOWN
and SIGTERM (and a stale one replaced at start-up), protected mode (a Unix
peer is local), CLIENT LIST's line for a Unix client field by field, CONFIG
GET and INFO, port 0 (Unix socket only), and the start-up failures with
Redis's log lines.
"""
from __future__ import annotations

import os
import shutil
import signal
import socket
import stat
import subprocess
import tempfile

import pytest
import redis as redispy

from conftest import free_port
from prockit import Proc, procs  # noqa: F401 (fixtures)
from resp_client import RawClient, encode_command, parse

REDIS_CLI = shutil.which("redis-cli") or "/usr/bin/redis-cli"
KINDS = ("ferry", "redis")


@pytest.fixture
def sockdir():
    """A short directory for socket paths (sun_path holds 107 bytes)."""
    made = []

    def make():
        d = tempfile.mkdtemp(prefix="fus-", dir="/tmp")
        made.append(d)
        return d

    yield make
    for d in made:
        shutil.rmtree(d, ignore_errors=True)



def server(procs, kind, sock, *extra, port=None):
    """A server with a Unix socket at sock and a TCP port (port=0: none)."""
    port = free_port() if port is None else port
    args = ["--port", port, "--save", "", "--bind", "127.0.0.1", "--unixsocket", sock, *extra]
    if kind == "redis":
        args += ["--appendonly", "no", "--daemonize", "no"]
    p = procs(kind, args, wait_sock=sock)
    p.port = port
    return p


def pair(procs, sockdir, *extra, port=None):
    """ferry and redis-server, each with a socket path of the same length."""
    out = {}
    for kind in KINDS:
        sock = os.path.join(sockdir(), "s.sock")
        out[kind] = (server(procs, kind, sock, *extra, port=port), sock)
    return out


def cli(sock, *args):
    r = subprocess.run([REDIS_CLI, "-s", sock, *args], capture_output=True, text=True, timeout=10)
    return r.returncode, r.stdout, r.stderr


def client_fields(line: str) -> list:
    return [kv.split("=", 1) for kv in line.strip().split(" ")]


# ---------------------------------------------------------------- clients

def test_redis_cli_over_the_socket(procs, sockdir):
    seen = {}
    for kind, (_p, sock) in pair(procs, sockdir).items():
        seen[kind] = [cli(sock, "PING"), cli(sock, "SET", "k", "v v"), cli(sock, "GET", "k"),
                      cli(sock, "GET", "missing"), cli(sock, "INCR", "k"), cli(sock, "DBSIZE")]
    assert seen["ferry"][0] == (0, "PONG\n", "")
    assert seen["ferry"][2] == (0, "v v\n", "")
    assert seen["ferry"] == seen["redis"]


@pytest.mark.parametrize("protocol", [2, 3])
def test_redis_py_over_the_socket(procs, sockdir, protocol):
    seen = {}
    for kind, (_p, sock) in pair(procs, sockdir).items():
        r = redispy.Redis(unix_socket_path=sock, protocol=protocol, socket_timeout=5)
        try:
            out = [r.ping(), r.set("k", "v"), r.get("k"), r.hset("h", mapping={"a": "1", "b": "2"}),
                   r.hgetall("h"), r.zadd("z", {"m": 1.5}), r.zrange("z", 0, -1, withscores=True),
                   r.smembers("nope")]
            info = r.client_info()
            out += [info["resp"], info["flags"], info["addr"] == sock + ":0", info["laddr"] == sock + ":0"]
            if protocol == 3:
                out.append(r.execute_command("HELLO")[b"proto"])
        finally:
            r.close()
        seen[kind] = out
    assert seen["ferry"][2] == b"v" and seen["ferry"][4] == {b"a": b"1", b"b": b"2"}
    assert seen["ferry"][8:12] == [str(protocol), "U", True, True]
    assert seen["ferry"] == seen["redis"]


def test_pipelined_batch_of_10000_sets(procs, sockdir):
    n = 10000
    batch = b"".join(encode_command(["SET", "key:%d" % i, "value:%d" % i]) for i in range(n))
    batch += encode_command(["GET", "key:%d" % (n - 1)]) + encode_command(["DBSIZE"])
    for kind, (_p, sock) in pair(procs, sockdir).items():
        with RawClient(unix=sock, timeout=30) as c:
            c.send(batch)
            replies = c.read_replies(n + 2, timeout=30)
            assert replies[:n] == [b"+OK\r\n"] * n, kind
            assert replies[n:] == [b"$%d\r\n%s\r\n" % (len(b"value:%d" % (n - 1)), b"value:%d" % (n - 1)),
                                   b":%d\r\n" % n], kind
            c.assert_no_pending()


# ------------------------------------------------------------ the file

@pytest.mark.parametrize("perm", ["700", "755", "770"])
def test_socket_mode_is_unixsocketperm(procs, sockdir, perm):
    for kind, (_p, sock) in pair(procs, sockdir, "--unixsocketperm", perm).items():
        st = os.stat(sock)
        assert stat.S_ISSOCK(st.st_mode), kind
        assert stat.S_IMODE(st.st_mode) == int(perm, 8), (kind, oct(st.st_mode))


def test_socket_mode_without_unixsocketperm_matches_redis(procs, sockdir):
    modes = {kind: stat.S_IMODE(os.stat(sock).st_mode) for kind, (_p, sock) in pair(procs, sockdir).items()}
    assert modes["ferry"] == modes["redis"], modes


def test_stale_file_at_the_path_is_replaced(procs, sockdir):
    for kind in KINDS:
        sock = os.path.join(sockdir(), "s.sock")
        with open(sock, "w") as f:
            f.write("left by a crashed server")
        server(procs, kind, sock)  # waits for PONG on the socket
        assert stat.S_ISSOCK(os.stat(sock).st_mode), kind


@pytest.mark.parametrize("kind", KINDS)
def test_shutdown_nosave_removes_the_file(procs, sockdir, kind):
    sock = os.path.join(sockdir(), "s.sock")
    p = server(procs, kind, sock)
    with RawClient(unix=sock) as c:
        c.send_command("SHUTDOWN", "NOSAVE")
        assert c.read_until_eof() == b""
    assert p.wait() == 0
    assert not os.path.exists(sock)
    assert "Removing the unix socket file." in p.log_messages()


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGINT])
def test_signal_shutdown_removes_socket_and_pidfile(procs, sockdir, sig):
    d = sockdir()
    sock, pidfile = os.path.join(d, "s.sock"), os.path.join(d, "s.pid")
    p = server(procs, "ferry", sock, "--pidfile", pidfile)
    with open(pidfile) as f:
        assert int(f.read()) == p.pid
    os.kill(p.pid, sig)
    assert p.wait() == 0
    assert not os.path.exists(sock) and not os.path.exists(pidfile)
    msgs = p.log_messages()
    tail = msgs[msgs.index("User requested shutdown..."):]
    assert tail == ["User requested shutdown...", "Removing the pid file.", "Removing the unix socket file.",
                    "Redis is now ready to exit, bye bye..."], msgs


# --------------------------------------------------------- who may connect

def _external_ipv4():
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
        try:
            s.connect(("192.0.2.255", 9))  # no packet is sent: only picks the outgoing address
            ip = s.getsockname()[0]
        except OSError:
            return None
    return None if ip.startswith("127.") else ip


def test_protected_mode_never_refuses_a_unix_client(procs, sockdir):
    ext = _external_ipv4()
    for kind in KINDS:
        sock = os.path.join(sockdir(), "s.sock")
        p = server(procs, kind, sock, "--protected-mode", "yes", "--bind", "0.0.0.0")
        if ext:  # protected mode is in force: a TCP peer that is not loopback is refused
            with socket.create_connection((ext, p.port), timeout=5) as s:
                s.settimeout(5)
                s.sendall(b"PING\r\n")
                assert s.recv(100).startswith(b"-DENIED Redis is running in protected mode"), kind
        with RawClient(unix=sock) as c:
            assert c.command("PING") == b"+PONG\r\n", kind
            assert c.command("SET", "a", "1") == b"+OK\r\n", kind


def test_a_unix_client_is_local_for_the_local_settings(procs, sockdir):
    """enable-protected-configs / -debug-command / -module-command local
    admit a Unix socket client (Redis's islocalClient): the same replies as
    redis-server's."""
    got = []
    for kind, (_p, sock) in pair(procs, sockdir, "--enable-protected-configs", "local", "--enable-debug-command",
                                 "local", "--enable-module-command", "local").items():
        with RawClient(unix=sock) as c:
            got.append([c.command("CONFIG", "SET", "dbfilename", "other.rdb"),
                        c.command("DEBUG", "SET-ACTIVE-EXPIRE", "1"),
                        c.command("MODULE", "UNLOAD", "nosuchmodule")])
    assert got[0] == got[1]
    assert got[0][:2] == [b"+OK\r\n", b"+OK\r\n"]


def test_maxclients_applies_to_unix_clients(procs, sockdir):
    for kind, (_p, sock) in pair(procs, sockdir, "--maxclients", "1").items():
        with RawClient(unix=sock) as a, RawClient(unix=sock) as b:
            assert a.command("PING") == b"+PONG\r\n"
            assert b.read_until_eof() == b"-ERR max number of clients reached\r\n", kind


# ------------------------------------------------- CLIENT LIST, CONFIG, INFO

# differ between any two connections or servers, or by design (README: the
# buffer sizes ferry reports are its own; lib-name/lib-ver are 7.2 fields)
VOLATILE = {"id", "age", "idle", "fd", "qbuf", "qbuf-free", "argv-mem", "multi-mem", "rbs", "rbp", "obl", "oll",
            "omem", "tot-mem"}
FERRY_ONLY = ["lib-name", "lib-ver"]


def _own_line(c, sock):
    cid = parse(c.command("CLIENT", "ID"))[1]
    line = parse(c.command("CLIENT", "LIST", "ID", str(cid)))[1].decode()
    info = parse(c.command("CLIENT", "INFO"))[1].decode()
    return [(k, v.replace(sock, "<sock>")) for k, v in client_fields(line)], client_fields(info)


def test_client_list_line_of_a_unix_client(procs, sockdir):
    lines = {}
    for kind, (_p, sock) in pair(procs, sockdir).items():
        with RawClient(unix=sock) as c, RawClient(unix=sock) as other:
            assert c.command("CLIENT", "SETNAME", "uc") == b"+OK\r\n"
            c.command("SELECT", "3")
            other.command("SUBSCRIBE", "ch")
            mine, info = _own_line(c, sock)
            assert [k for k, _ in info] == [k for k, _ in mine], "CLIENT INFO's fields are CLIENT LIST's"
            lst = parse(c.command("CLIENT", "LIST"))[1].decode()
            other_line = [ln for ln in lst.splitlines() if " name=uc " not in ln and "cmd=subscribe" in ln]
            lines[kind] = (mine, [(k, v.replace(sock, "<sock>")) for k, v in client_fields(other_line[0])])
    for idx in (0, 1):
        f = [(k, v) for k, v in lines["ferry"][idx] if k not in VOLATILE and k not in FERRY_ONLY]
        r = [(k, v) for k, v in lines["redis"][idx] if k not in VOLATILE]
        assert f == r
    mine = dict(lines["ferry"][0])
    assert mine["addr"] == mine["laddr"] == "<sock>:0" and mine["flags"] == "U"
    assert dict(lines["ferry"][1])["flags"] == "PU"   # Redis's order: P before U
    assert [k for k, _ in lines["ferry"][0]][-2:] == FERRY_ONLY


def test_long_socket_path_is_cut_as_redis_cuts_it(procs):
    """addr/laddr hold 77 bytes (Redis's NET_ADDR_STR_LEN)."""
    seen = {}
    for kind in KINDS:
        d = tempfile.mkdtemp(prefix="fus-" + "x" * 60 + "-", dir="/tmp")
        try:
            sock = os.path.join(d, "s.sock")
            server(procs, kind, sock)
            with RawClient(unix=sock) as c:
                f = dict(client_fields(parse(c.command("CLIENT", "INFO"))[1].decode()))
            seen[kind] = (len(f["addr"]), f["addr"] == sock[:77], f["laddr"] == f["addr"])
        finally:
            shutil.rmtree(d, ignore_errors=True)
    assert seen["ferry"] == seen["redis"] == (77, True, True)


def test_config_get_and_info(procs, sockdir):
    seen = {}
    for kind, (_p, sock) in pair(procs, sockdir, "--unixsocketperm", "0750", port=0).items():
        with RawClient(unix=sock) as c:
            got = parse(c.command("CONFIG", "GET", "unixsocket*"))
            conf = {got[1][i][1]: got[1][i + 1][1] for i in range(0, len(got[1]), 2)}
            assert conf[b"unixsocket"] == sock.encode()
            info = parse(c.command("INFO", "server"))[1].decode()
            fields = dict(ln.split(":", 1) for ln in info.split("\r\n") if ":" in ln)
            seen[kind] = (conf[b"unixsocketperm"], fields["tcp_port"], fields["process_supervised"],
                          c.command("CONFIG", "SET", "unixsocket", "/tmp/elsewhere.sock"),
                          c.command("CONFIG", "SET", "unixsocketperm", "777"))
    assert seen["ferry"][:3] == (b"750", "0", "no")
    assert seen["ferry"] == seen["redis"]


def test_port_0_listens_on_the_socket_only(procs, sockdir):
    seen = {}
    for kind, (p, sock) in pair(procs, sockdir, port=0).items():
        ready = [m.replace(sock, "<sock>") for m in p.log_messages() if "eady to accept" in m]
        seen[kind] = ready
        with RawClient(unix=sock) as c:
            assert c.command("PING") == b"+PONG\r\n"
        tcp = subprocess.run(["ss", "-ltnpH"], capture_output=True, text=True).stdout
        assert "pid=%d," % p.pid not in tcp, "%s listens on TCP with port 0:\n%s" % (kind, tcp)
    assert seen["ferry"] == ["The server is now ready to accept connections at <sock>"]
    assert seen["ferry"] == seen["redis"]


# --------------------------------------------------------- start-up failures

def _failure(procs, kind, *args):
    p = procs(kind, ["--save", "", *args])
    rc = p.wait(timeout=20)
    msgs = [m for m in p.log_messages() if "nix socket" in m or "listen anywhere" in m]
    return rc, msgs


@pytest.mark.parametrize("case", ["missing_dir", "too_long", "nowhere"])
def test_startup_failures_as_redis(procs, sockdir, case):
    if case == "missing_dir":
        args = ["--port", "0", "--unixsocket", "/nonexistent-ferry-dir/s.sock"]
    elif case == "too_long":
        args = ["--port", "0", "--unixsocket", "/tmp/" + "y" * 120]
    else:
        args = ["--port", "0"]
    got = {kind: _failure(procs, kind, *args) for kind in KINDS}
    assert got["ferry"][0] == 1 and len(got["ferry"][1]) == 1, got
    assert got["ferry"] == got["redis"]
