"""LOLWUT (src/commands/cmd_lolwut.c): ferry's own drawings under Redis
7.0's arguments.

The art differs from redis-server's by design, so what is compared with it
is what clients and tools rely on: the errors for non-integer arguments
(byte for byte), the plain version line for the default and unknown
versions, the reply type (bulk in RESP2, verbatim txt in RESP3), and the
last line "Redis ver. <the version INFO reports>". The drawings obey their
arguments (columns, rows, clamping to the same ranges as Redis) and are
deterministic: the same arguments give the same bytes.
"""
from __future__ import annotations

import pytest

from conftest import server_pair, start_server
from diffkit import format_report, run_steps
from resp_client import RawClient, parse


@pytest.fixture(scope="module")
def ferry_client():
    s = start_server("ferry")
    try:
        with RawClient(s.port) as c:
            yield c
    finally:
        s.cleanup()


def text(c, *args):
    kind, val = parse(c.command("LOLWUT", *args))
    assert kind == "bulk", (kind, val)
    return val.decode()


def version_line(c):
    info = c.command("INFO", "server").decode()
    v = [ln.split(":", 1)[1].strip() for ln in info.split("\r\n") if ln.startswith("redis_version:")][0]
    return "Redis ver. %s" % v


def test_errors_match_redis():
    steps = [["LOLWUT", "VERSION", "x"], ["LOLWUT", "version", "5", "abc"], ["LOLWUT", "VERSION", "6", "1", "x"],
             ["LOLWUT", "VERSION", "5", "1", "2", "x"], ["LOLWUT", "VERSION", ""]]
    with server_pair() as (f, r):
        mismatches, transcript = run_steps(f.port, r.port, steps)
        assert not mismatches, format_report("lolwut", mismatches, transcript)


def test_plain_version_line(ferry_client):
    c = ferry_client
    line = version_line(c) + "\n"
    for args in ((), ("VERSION",), ("5",), ("foo", "bar"), ("VERSION", "1"), ("VERSION", "7"), ("VERSION", "-3")):
        assert text(c, *args) == line, args


def test_version5_obeys_columns(ferry_client):
    c = ferry_client
    out = text(c, "VERSION", "5", "20", "4", "8")
    art, caption = out.rstrip("\n").split("\n\n")
    rows = art.split("\n")
    assert all(len(r) == 20 for r in rows) and len(rows) == 10   # 20 * 8 / 4 dots high, 4 dots a line
    assert all(0x2800 <= ord(ch) <= 0x28FF for r in rows for ch in r)
    assert caption.endswith(version_line(c))
    assert out == text(c, "VERSION", "5", "20", "4", "8")          # deterministic
    assert text(c, "VERSION", "5", "-1").split("\n")[0] == text(c, "VERSION", "5", "1").split("\n")[0]
    assert len(text(c, "VERSION", "5", "5000", "200", "1").split("\n")[0]) == 1000   # clamped


def test_version6_obeys_columns_and_rows(ferry_client):
    c = ferry_client
    out = text(c, "VERSION", "6", "30", "7")
    lines = out.rstrip("\n").split("\n")
    assert len(lines) == 7 + 2 and all(len(ln) == 30 for ln in lines[:7])
    assert lines[-1] == version_line(c)
    assert out == text(c, "VERSION", "6", "30", "7")
    default = text(c, "VERSION", "6").rstrip("\n").split("\n")
    assert len(default) == 20 + 2 and len(default[0]) == 80
    assert len(text(c, "VERSION", "6", "0", "0").split("\n")[0]) == 1  # clamped to 1x1


def test_resp3_verbatim(ferry_client):
    c = ferry_client
    c.command("HELLO", "3")
    try:
        reply = c.command("LOLWUT")
        line = version_line(c).encode() + b"\n"
        assert reply == b"=%d\r\ntxt:%s\r\n" % (len(line) + 4, line)
    finally:
        c.command("HELLO", "2")
