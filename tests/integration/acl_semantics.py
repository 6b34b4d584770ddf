"""What an ACL rule string allows, for the ACL differential tests
(test_diff_acl.py): which command (or subcommand) a rule string such as
`-@all +@read -get +client|id` lets a user run, evaluated over the commands
both servers have.

Why: when a category is partly allowed, Redis describes the user's rules
(ACL LIST, GETUSER) with a heuristic over the category's size, choosing
between `+@cat -x -y` and `+a +b ...`. ferry has no cluster, replication or
module commands (MIGRATE, RESTORE-ASKING, READONLY ... are in @keyspace,
@write, @dangerous, @fast ...), so on a few rule lists the two pick a
different but equivalent description. Such a mismatch is forgiven only when
(1) every other token (flags, passwords, keys, channels) is the same, in
order, (2) both descriptions allow exactly the same commands among those
both servers have, and (3) one of the categories they name holds a command
only one server has. Anything else still fails.
"""
from __future__ import annotations

import re

from resp_client import RawClient, RespProtocolError, parse

ALL_ON = (b"+@all", b"allcommands")
ALL_OFF = (b"-@all", b"nocommands")


class Tables:
    """Category members (from the reference server) and the commands only
    one of the two servers has."""

    def __init__(self, categories: dict, leaves: frozenset, only_one: frozenset):
        self.categories = categories      # b"read" -> {b"get", b"object|encoding", ...}
        self.leaves = leaves              # commands without subcommands, and subcommands, both servers have
        self.only_one = only_one          # names (command or command|sub) only one server has

    def explains(self, cats) -> bool:
        """Does one of these categories hold a command only one server has?"""
        return any(self.categories.get(c, set()) & self.only_one for c in cats)


def command_list(c: RawClient) -> set:
    v = parse(c.command("COMMAND", "LIST"))
    return {bytes(x[1]).lower() for x in v[1]}


def leaves_of(names: set) -> set:
    parents = {n.split(b"|")[0] for n in names if b"|" in n}
    return {n for n in names if n not in parents}


def load_tables(ferry_client: RawClient, redis_client: RawClient) -> Tables:
    fnames, rnames = command_list(ferry_client), command_list(redis_client)
    cats = {}
    for x in parse(redis_client.command("ACL", "CAT"))[1]:
        cat = bytes(x[1]).lower()
        cats[cat] = {bytes(m[1]).lower() for m in parse(redis_client.command("ACL", "CAT", cat))[1]}
    return Tables(cats, frozenset(leaves_of(fnames) & leaves_of(rnames)), frozenset(fnames ^ rnames))


def _names(tables: Tables, token: bytes) -> set:
    """The leaves one +/- token names."""
    body = token[1:].lower()
    if body.startswith(b"@"):
        return set(tables.categories.get(body[1:], set())) & tables.leaves
    if b"|" in body:
        return {body} & tables.leaves
    return {n for n in tables.leaves if n == body or n.startswith(body + b"|")}


def allowed(tables: Tables, tokens) -> frozenset:
    """The leaves a selector's command tokens allow, applied in order."""
    on = set()
    for t in tokens:
        low = t.lower()
        if low in ALL_ON:
            on = set(tables.leaves)
        elif low in ALL_OFF:
            on = set()
        elif t[:1] == b"+":
            on |= _names(tables, t)
        elif t[:1] == b"-":
            on -= _names(tables, t)
    return frozenset(on)


def _is_cmd(t: bytes) -> bool:
    return t[:1] in (b"+", b"-") or t.lower() in (b"allcommands", b"nocommands")


def segments(text: bytes):
    """[(other tokens, command tokens, categories named)] per selector:
    the root rules, then each (...) in order."""
    out, cur = [], []
    for part in re.split(rb"(\(|\))", text):
        if part in (b"(", b")"):
            out.append(cur)
            cur = []
        else:
            cur += part.split()
    out.append(cur)
    res = []
    for toks in out:
        if not toks:
            continue
        cmds = [t for t in toks if _is_cmd(t)]
        cats = {t[2:].lower() for t in cmds if t[1:2] == b"@"}
        res.append(([t for t in toks if not _is_cmd(t)], cmds, cats))
    return res


def strings_equivalent(tables: Tables, a: bytes, b: bytes) -> bool:
    sa, sb = segments(a), segments(b)
    if len(sa) != len(sb):
        return False
    explained = False
    for (oa, ca, ka), (ob, cb, kb) in zip(sa, sb):
        if oa != ob or allowed(tables, ca) != allowed(tables, cb):
            return False
        explained = explained or (ca != cb and tables.explains(ka | kb))
    return explained or a == b


def _strings(v):
    """Every bulk/simple string of a parsed reply, in order."""
    tag, x = v[0], v[1]
    if tag in ("bulk", "simple", "verbatim"):
        return [bytes(x)] if x is not None else [None]
    if tag == "map":
        return [s for k, e in x for s in _strings(k) + _strings(e)]
    if tag in ("array", "set", "push") and x is not None:
        return [s for e in x for s in _strings(e)]
    return [repr(v).encode()]


def replies_equivalent(tables: Tables, ferry: bytes, redis: bytes, same) -> bool:
    """Two ACL GETUSER/LIST replies equal but for descriptions that are
    equivalent and differ because of the command tables (see above);
    same(x, y): the test's own canonical equality of two strings."""
    try:
        va, vb = parse(ferry), parse(redis)
    except RespProtocolError:
        return False
    if va[0] != vb[0]:
        return False
    sa, sb = _strings(va), _strings(vb)
    if len(sa) != len(sb):
        return False
    return all(x == y or (x is not None and y is not None and (same(x, y) or strings_equivalent(tables, x, y)))
               for x, y in zip(sa, sb))
