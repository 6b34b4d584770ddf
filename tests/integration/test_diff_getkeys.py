"""COMMAND GETKEYS and COMMAND GETKEYSANDFLAGS against redis-server 7.0,
byte for byte (src/commands/keyspec.c, keyspec_proc.c, command_info.c).

- test_every_command: for every command and subcommand ferry has, argument
  lists of every length around its arity (too few, exact, more), filled
  with plain words, with counts (valid, zero, negative, too large, "2x") and
  with the option words key extraction looks for (STORE, KEYS, STREAMS,
  GET, BY, LIMIT...), seeded; both subcommands asked for each list. The
  errors (unknown command, no key arguments, wrong number of arguments,
  invalid arguments) are compared too.
- test_movable_keys: hand-written lines for the commands whose keys move:
  EVAL/FCALL numkeys, ZUNIONSTORE..., SINTERCARD, [B]LMPOP, [B]ZMPOP, SORT
  STORE/BY/GET/LIMIT, GEORADIUS STORE/STOREDIST,
  XREAD/XREADGROUP STREAMS, SET GET, BITFIELD's read-only forms, keyword
  case, embedded NUL bytes, 260 keys, RESP3; COMMAND HELP and COMMAND's
  error replies. (MIGRATE's procedure: tests/unit/test_keyspec.c and
  tests/integration/test_migrate.py.)
"""
from __future__ import annotations

import random

import pytest

from diffkit import cmd, format_report, hello, run_steps
from resp_client import RawClient, parse, to_python

WORDS = ["k1", "k2", "2", "1", "0", "-1", "3", "1x", "", "STORE", "store", "KEYS", "STREAMS", "GET", "BY",
         "LIMIT", "STOREDIST", "AUTH", "AUTH2", "COPY", "GROUP", "COUNT", "BLOCK", "NOACK", "SET", "INCRBY",
         "OVERFLOW", "WEIGHTS", "LEFT", "MIN", "99999999999", "4294967297", "k\x00x", "get\x00x"]


def full_names(port):
    """full command names (subcommands as "config|get") -> arity"""
    with RawClient(port) as c:
        infos = to_python(parse(c.command("COMMAND", "INFO")))
    out = {}

    def walk(e):
        out[e[0].decode()] = -999 if e[9] else e[1]  # a container: see arg_lists
        for s in e[9] or []:
            walk(s)
    for e in infos:
        walk(e)
    return out


@pytest.fixture(scope="module")
def commands(pair):
    """ferry's commands and subcommands that redis-server 7.0 has too, with
    the same arity (the others - ferry's own, newer ones, and those with a
    7.2 signature such as ZRANK ... WITHSCORE - differ by design)."""
    ferry, redis = full_names(pair[0].port), full_names(pair[1].port)
    return {n: a for n, a in ferry.items() if redis.get(n) == a}


def arg_lists(name, arity, rng):
    """Argument lists for a command. A container (CONFIG, CLIENT...) gets a
    few plain ones: its argv[1] names a subcommand, which Redis finds up to
    a NUL byte while ferry compares the whole argument."""
    words = name.split("|")
    if arity == -999:
        return [words, words + ["k"], words + ["k", "2", "x"]]
    need = abs(arity) - len(words)
    lengths = {max(need - 1, 0), need, need + 1, need + 2, need + 3, need + 6}
    if arity > 0:
        lengths = {max(need - 1, 0), need, need + 1}
    out = []
    for n in sorted(lengths):
        out.append(words + ["k%d" % i for i in range(n)])
        out.append(words + ["2"] * n)
        out.append(words + (["k", "1"] * n)[:n])
        for _ in range(10):
            out.append(words + [rng.choice(WORDS) for _ in range(n)])
    return out


def test_every_command(pair, commands):
    rng = random.Random(7)
    steps = []
    for name, arity in sorted(commands.items()):
        for args in arg_lists(name, arity, rng):
            steps.append(cmd("COMMAND", "GETKEYS", *args))
            steps.append(cmd("COMMAND", "GETKEYSANDFLAGS", *args))
    steps += [cmd("COMMAND", "GETKEYS", "nosuchcmd", "a"), cmd("COMMAND", "GETKEYS", "config", "nosuch"),
              cmd("COMMAND", "GETKEYS", "config"), cmd("COMMAND", "GETKEYS"), cmd("COMMAND", "GETKEYSANDFLAGS", "get")]
    assert len(steps) > 5000
    mismatches, transcript = run_steps(pair[0].port, pair[1].port, steps)
    assert not mismatches, format_report("every_command", mismatches, transcript)


def gk(*args):
    return [cmd("COMMAND", "GETKEYS", *args), cmd("COMMAND", "GETKEYSANDFLAGS", *args)]


MOVABLE = [
    *gk("EVAL", "s", "0"), *gk("EVAL", "s", "2", "a", "b", "c"), *gk("EVAL", "s", "3", "a", "b"),
    *gk("EVAL", "s", "-1", "a"), *gk("EVAL", "s", "1x", "a"), *gk("EVAL", "s", " 1", "a"), *gk("EVALSHA", "s", "1", "a"),
    *gk("EVAL_RO", "s", "1", "a"), *gk("EVALSHA_RO", "s", "2", "a", "b"), *gk("FCALL", "f", "1", "a", "b"),
    *gk("FCALL_RO", "f", "0"), *gk("EVAL", "s", "4294967297", "a"),
    *gk("ZUNIONSTORE", "d", "2", "a", "b"), *gk("ZINTERSTORE", "d", "2", "a", "b", "WEIGHTS", "1", "2"),
    *gk("ZDIFFSTORE", "d", "0", "a"), *gk("ZUNIONSTORE", "d", "3", "a", "b"), *gk("ZUNIONSTORE", "d", "1x", "a"),
    *gk("ZUNION", "2", "a", "b", "WITHSCORES"), *gk("ZINTER", "1", "a"), *gk("ZDIFF", "0", "a"),
    *gk("ZINTERCARD", "2", "a", "b", "LIMIT", "1"), *gk("SINTERCARD", "2", "a", "b"), *gk("SINTERCARD", "5", "a"),
    *gk("LMPOP", "2", "a", "b", "LEFT"), *gk("BLMPOP", "0", "2", "a", "b", "LEFT"), *gk("ZMPOP", "1", "a", "MIN"),
    *gk("BZMPOP", "1.5", "1", "a", "MAX", "COUNT", "2"), *gk("BLMPOP", "0", "-2", "a", "LEFT"),
    *gk("SORT", "k"), *gk("SORT", "k", "STORE", "d"), *gk("SORT", "k", "BY", "STORE", "GET", "#", "STORE", "d2"),
    *gk("SORT", "k", "LIMIT", "0", "STORE", "STORE", "x"), *gk("SORT", "k", "store"), *gk("SORT_RO", "k", "STORE", "d"),
    *gk("SORT", "k", "STORE", "a", "STORE", "b"),
    *gk("GEORADIUS", "k", "1", "2", "3", "m", "STORE", "d"), *gk("GEORADIUS", "k", "1", "2", "3", "m", "STOREDIST", "d"),
    *gk("GEORADIUS", "k", "1", "2", "3", "m", "STORE", "a", "STOREDIST", "b"),
    *gk("GEORADIUS", "k", "1", "2", "3", "m", "STOREDIST", "b", "STORE", "a"), *gk("GEORADIUS", "k", "1", "2", "3", "STORE"),
    *gk("GEORADIUSBYMEMBER", "k", "m", "3", "km", "STORE", "d"), *gk("GEORADIUSBYMEMBER", "k", "m", "STORE", "d", "x"),
    *gk("XREAD", "STREAMS", "a", "b", "0", "0"), *gk("XREAD", "COUNT", "2", "STREAMS", "a", "0"),
    *gk("XREAD", "STREAMS", "a", "b", "0"), *gk("XREAD", "BLOCK", "0", "STREAMS", "STREAMS", "0"),
    *gk("XREADGROUP", "GROUP", "g", "c", "NOACK", "STREAMS", "a", ">"), *gk("XREADGROUP", "GROUP", "STREAMS", "c", "STREAMS", "a", ">"),
    *gk("XREAD", "FOO", "STREAMS", "a", "0"),
    *gk("SET", "k", "v"), *gk("SET", "k", "v", "GET"), *gk("SET", "k", "v", "EX", "10", "get"), *gk("SET", "k", "v", "get\x00x"),
    *gk("BITFIELD", "k"), *gk("BITFIELD", "k", "GET", "u8", "0"), *gk("BITFIELD", "k", "GET", "u8", "0", "OVERFLOW", "SAT"),
    *gk("BITFIELD", "k", "SET", "u8", "0", "1"), *gk("BITFIELD", "k", "GET", "u8"), *gk("BITFIELD", "k", "INCRBY", "u8", "0"),
    *gk("BITFIELD_RO", "k", "GET", "u8", "0"),
    *gk("MSET", "a", "1", "b", "2"), *gk("MSET", "a", "1", "b"), *gk("DEL", *["k%d" % i for i in range(100)]),
    *gk("LCS", "a", "b"), *gk("LMOVE", "a", "b", "LEFT", "RIGHT"), *gk("OBJECT", "ENCODING", "k"),
    *gk("MEMORY", "USAGE", "k"), *gk("get", "K"), *gk("PING"), *gk("PUBLISH", "c", "m"),
    *gk("ZUNIONSTORE", "t", "260", *["key%d" % i for i in range(260)]),
    # the rest of COMMAND's surface: help, errors, unknown names
    ["COMMAND", "HELP"], ["COMMAND", "INFO", "nosuch"], ["COMMAND", "INFO", "get|key"],
    ["COMMAND", "INFO", "config|get|key"], ["COMMAND", "DOCS", "nosuch"], ["COMMAND", "COUNT", "x"],
    ["COMMAND", "GETKEYS"], ["COMMAND", "GETKEYSANDFLAGS"], ["COMMAND", "NOSUCH"], ["COMMAND", "LIST", "x"],
    ["COMMAND", "INFO", "get", "set", "sort", "nosuch", "xread"],
]


def test_movable_keys(pair):
    mismatches, transcript = run_steps(pair[0].port, pair[1].port, MOVABLE)
    assert not mismatches, format_report("movable", mismatches, transcript)
    mismatches, transcript = run_steps(pair[0].port, pair[1].port, [hello("HELLO", "3")] + MOVABLE)
    assert not mismatches, format_report("movable_resp3", mismatches, transcript)
