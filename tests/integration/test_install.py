"""`make install` / `make uninstall` (Makefile): the server binary, and
nothing else, copied to $(DESTDIR)$(PREFIX)/bin with mode 755, from the
build the tests run (never rebuilt by install when it is up to date), and
the installed copy runs on its own: --version, then a server on a free port
that answers PING from a directory outside the build tree.
"""
from __future__ import annotations

import os
import shutil
import stat
import subprocess
import tempfile

import pytest

from conftest import ServerProcess, ferry_binary

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def _make_args():
    """The BUILD (and LUA) that name the binary under test, so that install
    copies exactly it: build/ferry-server, build/san/... or build/nolua/..."""
    binary = ferry_binary()
    rel = os.path.relpath(os.path.dirname(binary), ROOT)
    if rel.startswith("..") or os.path.basename(binary) != "ferry-server":
        pytest.skip("FERRY_SERVER=%s is not a build of this tree (%s): make install cannot name it"
                    % (binary, ROOT))
    args = ["BUILD=" + rel]
    if rel == "build/nolua":
        args.append("LUA=no")
    return binary, args


def _make(*args):
    return subprocess.run(["make", "--no-print-directory", "-C", ROOT, *args], capture_output=True, text=True,
                          timeout=120)


@pytest.fixture
def destdir():
    d = tempfile.mkdtemp(prefix="ferry-it-destdir-")
    yield d
    shutil.rmtree(d, ignore_errors=True)


def _tree(root):
    out = []
    for dirpath, dirnames, filenames in os.walk(root):
        for n in dirnames + filenames:
            out.append(os.path.relpath(os.path.join(dirpath, n), root))
    return sorted(out)


def test_install_copies_the_built_binary_only(destdir):
    binary, args = _make_args()
    # a dry run first: if the build were stale, install would compile and
    # replace the binary other tests are running
    dry = _make("-n", "install", "DESTDIR=" + destdir, "PREFIX=/usr", *args)
    assert dry.returncode == 0, dry.stderr
    for line in dry.stdout.splitlines():
        assert line.startswith(("install ", "pkg-config ")), \
            "make install would do more than copy (stale build? run make): %r" % line
    before = os.stat(binary)
    r = _make("install", "DESTDIR=" + destdir, "PREFIX=/usr", *args)
    assert r.returncode == 0, r.stdout + r.stderr
    after = os.stat(binary)
    assert (after.st_mtime_ns, after.st_size) == (before.st_mtime_ns, before.st_size), "install rebuilt the server"

    assert _tree(destdir) == ["usr", "usr/bin", "usr/bin/ferry-server"]
    installed = os.path.join(destdir, "usr/bin/ferry-server")
    assert stat.S_IMODE(os.stat(installed).st_mode) == 0o755
    with open(installed, "rb") as a, open(binary, "rb") as b:
        assert a.read() == b.read(), "the installed file is not the binary under test"

    # it runs without the build tree: its version, then a server
    v = subprocess.run([installed, "--version"], capture_output=True, text=True, timeout=10, cwd=destdir)
    assert v.returncode == 0 and v.stdout.startswith("Redis server v=") and "build=ferry-" in v.stdout, v
    server = ServerProcess("ferry", installed).start()  # waits for +PONG on a free port
    try:
        assert server.binary == installed and server.alive()
        assert os.path.realpath(os.readlink("/proc/%d/exe" % server.proc.pid)) == os.path.realpath(installed)
    finally:
        server.cleanup()

    # uninstall removes the binary (and only it)
    u = _make("uninstall", "DESTDIR=" + destdir, "PREFIX=/usr", *args)
    assert u.returncode == 0, u.stderr
    assert _tree(destdir) == ["usr", "usr/bin"]


def test_install_default_prefix_is_usr_local(destdir):
    _binary, args = _make_args()
    dry = _make("-n", "install", "DESTDIR=" + destdir, *args)
    assert dry.returncode == 0, dry.stderr
    assert "install -m 755 " in dry.stdout and \
        dry.stdout.rstrip().endswith(destdir + "/usr/local/bin/ferry-server"), dry.stdout
