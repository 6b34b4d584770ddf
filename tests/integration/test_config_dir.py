"""CONFIG GET dir is the server's working directory, as redis-server's
getcwd(): a server started with a relative --dir has changed into it, so the
relative text read back would name a directory below it. Redis's Sentinel
suite (07-down-conditions) reads `dir`, sets it to `/`, then sets the value
it read back: with the relative text that failed on ferry ("No such file or
directory") and left the server saving into `/`."""
from __future__ import annotations

import os
import shutil
import tempfile

import pytest

from resp_client import RawClient


@pytest.mark.parametrize("kind", ["ferry", "redis"])
def test_relative_dir_reads_back_absolute_and_can_be_set_again(server_factory, kind):
    top = tempfile.mkdtemp(prefix="ferry-dir-")
    target = os.path.join(top, "a", "b")
    os.makedirs(target)
    try:
        # the servers run in their own temporary directory, a sibling of top
        s = server_factory(kind, "--dir", os.path.join("..", os.path.basename(top), "a", "b"),
                           "--enable-protected-configs", "yes")
        with RawClient(s.port) as c:
            got = c.command("CONFIG", "GET", "dir")
            want = os.path.realpath(target).encode()
            assert got == b"*2\r\n$3\r\ndir\r\n$%d\r\n%s\r\n" % (len(want), want)
            assert c.command("CONFIG", "SET", "dir", want) == b"+OK\r\n"
            assert c.command("CONFIG", "GET", "dir") == got
    finally:
        shutil.rmtree(top, ignore_errors=True)
