"""ACL users from configuration (smoke tests, ferry and redis-server side by
side where the bytes can be compared): an `aclfile` loaded at start-up, ACL
SAVE (the file survives a SIGKILL and a restart), ACL LOAD all-or-nothing
with redis-server's file:line errors, a corrupt aclfile refusing start-up,
`user` lines in the config, and aclfile + user lines refused together.
"""
import os
import signal
import subprocess
import tempfile

from conftest import ferry_binary, free_port, redis_binary
from resp_client import parse, to_python

# one single command at most per user: redis-server lists several in its hash table's (random) order
USERS = "user default on nopass ~* &* +@all\nuser alice on >secret ~a* &news +@string -set\n"


def acl_list(server):
    with server.client() as c:
        return to_python(parse(c.command("ACL", "LIST")))


def write(path, text):
    with open(path, "w") as f:
        f.write(text)


def start_pair(ferry_factory, redis_factory, text, *extra):
    """ferry and redis-server, each with its own aclfile holding text."""
    out = []
    for factory in (ferry_factory, redis_factory):
        path = os.path.join(tempfile.mkdtemp(prefix="ferry-acl-"), "users.acl")
        write(path, text)
        out.append((factory("--aclfile", path, *extra), path))
    return out


def test_aclfile_loaded_at_startup_and_auth(ferry_factory, redis_factory):
    (f, _), (r, _) = start_pair(ferry_factory, redis_factory, USERS)
    assert acl_list(f) == acl_list(r)
    assert acl_list(f)[0] == b"user alice on #2bb80d537b1da3e38bd30361aa855686bde0eacd7162fef6a25fe97bf527a25b ~a* resetchannels &news -@all +@string -set"
    for s in (f, r):
        with s.client() as c:
            assert c.command("AUTH", "alice", "secret") == b"+OK\r\n"
            assert c.command("ACL", "WHOAMI").startswith(b"-NOPERM")
            assert c.command("GET", "b") == b"-NOPERM this user has no permissions to access one of the keys used as arguments\r\n"


def test_acl_save_survives_kill_and_restart(ferry_factory, tmp_path):
    path = str(tmp_path / "users.acl")
    write(path, USERS)
    f = ferry_factory("--aclfile", path)
    with f.client() as c:
        assert c.command("ACL", "SETUSER", "bob", "on", ">pw", "(+get ~x)", "%R~r*") == b"+OK\r\n"
        assert c.command("ACL", "SAVE") == b"+OK\r\n"
    before = acl_list(f)
    with open(path) as fh:
        saved = fh.read().splitlines()
    assert [l.encode() for l in saved] == before
    assert not [n for n in os.listdir(tmp_path) if ".tmp-" in n]  # the temp file was renamed
    f._signal_group(signal.SIGKILL)
    f.proc.wait()
    g = ferry_factory("--aclfile", path)
    assert acl_list(g) == before


def test_acl_load_all_or_nothing_with_line_errors(ferry_factory, redis_factory):
    pair = start_pair(ferry_factory, redis_factory, USERS)
    bad = "user carol on +get\n\nfoo bar\nuser dave on +nocmd\nuser carol off\nuser eve (+get\n"
    replies = []
    for s, path in pair:
        write(path, bad)
        with s.client() as c:
            reply = c.command("ACL", "LOAD")
        replies.append(reply.replace(path.encode(), b"FILE"))
        assert b"carol" not in b"".join(acl_list(s))
    assert replies[0] == replies[1]
    assert b"FILE:3 should start with user keyword" in replies[0]
    for s, path in pair:
        write(path, "user zed on nopass +@all ~*\n")
        with s.client() as c:
            assert c.command("ACL", "LOAD") == b"+OK\r\n"
    assert acl_list(pair[0][0]) == acl_list(pair[1][0])


def run_to_exit(binary, *args):
    workdir = tempfile.mkdtemp(prefix="ferry-acl-exit-")
    p = subprocess.run([binary, "--port", str(free_port()), "--save", "", *args], cwd=workdir, capture_output=True,
                       timeout=20, text=True)
    return p.returncode, p.stdout + p.stderr


def test_corrupt_aclfile_refuses_start():
    path = os.path.join(tempfile.mkdtemp(prefix="ferry-acl-"), "bad.acl")
    write(path, "user default on nopass ~* &* +@all\nuser x on +nocmd\n")
    for binary in (ferry_binary(), redis_binary()):
        rc, out = run_to_exit(binary, "--aclfile", path)
        assert rc != 0
        assert ("Aborting Redis startup because of ACL errors: %s:2: Error in applying operation '+nocmd'" % path) in out


def test_user_lines_and_aclfile_together_refused():
    path = os.path.join(tempfile.mkdtemp(prefix="ferry-acl-"), "users.acl")
    write(path, USERS)
    for binary in (ferry_binary(), redis_binary()):
        rc, out = run_to_exit(binary, "--aclfile", path, "--user", "foo", "on")
        assert rc != 0
        assert "users defined in redis.conf and at the same setting an ACL file path is invalid" in out


def test_user_lines_in_config(ferry_factory, redis_factory, tmp_path):
    conf = tmp_path / "ferry.conf"
    conf.write_text("user default on nopass ~* &* +@all -flushall\nuser ops on >pw allkeys +@admin\n")
    servers = []
    for factory in (ferry_factory, redis_factory):
        servers.append(factory("--include", str(conf)))
    assert acl_list(servers[0]) == acl_list(servers[1])
    for s in servers:
        with s.client() as c:
            assert c.command("FLUSHALL") == b"-NOPERM this user has no permissions to run the 'flushall' command\r\n"
