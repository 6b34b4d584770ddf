"""A server built with `make LUA=no` (libc only): it starts, serves, links
no Lua library, and every scripting command replies with one clear error.
The binary is $FERRY_SERVER_NOLUA (make integration builds it)."""
from __future__ import annotations

import os
import subprocess

import pytest

from conftest import ServerProcess

NOLUA = os.environ.get("FERRY_SERVER_NOLUA", "")
pytestmark = pytest.mark.skipif(not os.path.isfile(NOLUA), reason="no LUA=no build ($FERRY_SERVER_NOLUA)")
ERR = b"-ERR scripting is not available: this ferry-server was built without Lua (make LUA=no)\r\n"


def test_libc_only_build_refuses_scripts_clearly():
    libs = subprocess.run(["ldd", NOLUA], capture_output=True, text=True).stdout
    assert "lua" not in libs.lower(), libs
    s = ServerProcess("ferry", NOLUA).start()
    try:
        with s.client() as c:
            assert c.command("SET", "k", "v") == b"+OK\r\n"
            for args in (("EVAL", "return 1", "0"), ("EVALSHA", "a" * 40, "0"), ("EVAL_RO", "return 1", "0"),
                         ("SCRIPT", "LOAD", "return 1")):
                assert c.command(*args) == ERR, args
            assert c.command("SCRIPT", "EXISTS", "a" * 40) == b"*1\r\n:0\r\n"
            assert c.command("GET", "k") == b"$1\r\nv\r\n"
    finally:
        s.cleanup()
