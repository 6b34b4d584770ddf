"""Differential tests for the GEO commands (src/commands/cmd_geo*.c,
src/base/geohash.c) against the reference redis-server.

Every case in CASES runs in lockstep on ferry and redis (diffkit), replies
compared byte for byte, in RESP2 and RESP3, with the default sorted-set
thresholds and with tiny ones (so geo sets are skiplists and STORE results
convert). Searches without ASC/DESC are compared byte for byte too: Redis's
order there is the order of its cell walk, which ferry reproduces. Then a
seeded random program (random and clustered points, duplicate positions so
distances tie, random searches with every option) is compared the same way;
and keyspace notifications, WATCH and blocked BZPOPMIN waiters are checked
on both servers.
"""
from __future__ import annotations

import random
import time

import pytest

from conftest import start_server
from diffkit import cmd, format_report, hello, run_steps
from resp_client import RawClient, encode_command, parse

SICILY = ["GEOADD", "Sicily", "13.361389", "38.115556", "Palermo", "15.087269", "37.502669", "Catania"]
POINTS = ["GEOADD", "pts", "13.361389", "38.115556", "Palermo", "15.087269", "37.502669", "Catania",
          "12.758489", "38.788135", "edge1", "17.241510", "38.788135", "edge2", "-73.9454966", "40.747533",
          "nyc", "139.6917", "35.6895", "tokyo"]
EXTREMES = ["GEOADD", "ext", "180", "85.05112878", "ne", "-180", "-85.05112878", "sw", "180", "-85.05112878",
            "se", "-180", "85.05112878", "nw", "0", "0", "origin", "179.9999", "0", "am_e", "-179.9999", "0",
            "am_w", "0", "85", "npole", "0", "-85", "spole", "0.0000001", "-0.0000001", "tiny"]

SEARCH_OPTS = [[], ["ASC"], ["DESC"], ["WITHDIST"], ["WITHCOORD"], ["WITHHASH"],
               ["WITHDIST", "WITHCOORD", "WITHHASH", "ASC"], ["COUNT", "1"], ["COUNT", "2", "DESC"],
               ["COUNT", "1", "ANY"], ["COUNT", "3", "ANY", "ASC", "WITHDIST"], ["withdist", "desc", "count", "10"]]

CASES = {
    "geoadd_basic": [
        SICILY, ["TYPE", "Sicily"], ["ZRANGE", "Sicily", "0", "-1", "WITHSCORES"], ["ZCARD", "Sicily"],
        ["GEOADD", "Sicily", "13.361389", "38.115556", "Palermo"],
        ["GEOADD", "Sicily", "CH", "13.361389", "38.115556", "Palermo", "13.5", "38.1", "Catania"],
        ["GEOADD", "Sicily", "NX", "1", "1", "Palermo", "2", "2", "new"],
        ["GEOADD", "Sicily", "XX", "3", "3", "Palermo", "4", "4", "new2"],
        ["GEOADD", "Sicily", "XX", "CH", "5", "5", "Palermo"],
        ["GEOADD", "Sicily", "ch", "nx", "5", "5", "Palermo"],
        ["GEOADD", "nokey", "XX", "1", "1", "a"], ["EXISTS", "nokey"],
        ["ZRANGE", "Sicily", "0", "-1", "WITHSCORES"], ["OBJECT", "ENCODING", "Sicily"],
    ],
    "geoadd_errors": [
        ["GEOADD", "k", "200", "100", "a"], ["GEOADD", "k", "10", "abc", "a"], ["GEOADD", "k", "x", "1", "a"],
        ["GEOADD", "k", "NX", "XX", "1", "1", "a"], ["GEOADD", "k", "GT", "1", "1", "a"],
        ["GEOADD", "k", "1", "1"], ["GEOADD", "k", "1", "1", "a", "2"], ["GEOADD", "k", "ch", "ch", "ch"],
        ["GEOADD", "k", "1", "1", "a", "181", "0", "b"], ["GEOADD", "k", "1", "1", "a", "0", "85.06", "b"],
        ["GEOADD", "k", "-180.0000001", "0", "a"], ["GEOADD", "k", "1e400", "0", "a"],
        ["GEOADD", "k", "nan", "0", "a"], ["GEOADD", "k", " 1", "0", "a"], ["GEOADD", "k", "", "0", "a"],
        ["EXISTS", "k"], ["SET", "str", "v"], ["GEOADD", "str", "1", "1", "a"], ["GEOADD", "str", "1", "x", "a"],
        ["GEOADD", "k"], ["GEOADD", "k", "1", "1"], ["GEOADD", "k", "NX", "1", "1", "a"],
        ["GEOADD", "k", "1.5e1", "0x10", "hex"], ["GEOPOS", "k", "hex", "a"],
    ],
    "geodist": [
        SICILY, ["GEODIST", "Sicily", "Palermo", "Catania"], ["GEODIST", "Sicily", "Palermo", "Catania", "km"],
        ["GEODIST", "Sicily", "Palermo", "Catania", "KM"], ["GEODIST", "Sicily", "Palermo", "Catania", "mi"],
        ["GEODIST", "Sicily", "Palermo", "Catania", "ft"], ["GEODIST", "Sicily", "Palermo", "Catania", "M"],
        ["GEODIST", "Sicily", "Palermo", "Palermo"], ["GEODIST", "Sicily", "Palermo", "nope"],
        ["GEODIST", "Sicily", "nope", "Palermo", "km"], ["GEODIST", "nokey", "a", "b"],
        ["GEODIST", "nokey", "a", "b", "parsec"], ["GEODIST", "Sicily", "Palermo", "Catania", "parsec"],
        ["GEODIST", "Sicily", "Palermo", "Catania", "km", "extra"], ["SET", "str", "v"],
        ["GEODIST", "str", "a", "b"], ["GEODIST", "str", "a", "b", "bad"], EXTREMES,
        ["GEODIST", "ext", "ne", "sw"], ["GEODIST", "ext", "am_e", "am_w", "km"], ["GEODIST", "ext", "npole", "spole"],
        ["GEODIST", "ext", "origin", "tiny"], ["GEODIST", "ext", "ne", "nw", "mi"], ["GEODIST", "ext", "se", "sw"],
    ],
    "geohash_geopos": [
        SICILY, ["GEOHASH", "Sicily", "Palermo", "Catania", "nope"], ["GEOHASH", "Sicily"], ["GEOHASH", "nokey", "a"],
        ["GEOPOS", "Sicily", "Palermo", "nope", "Catania"], ["GEOPOS", "Sicily"], ["GEOPOS", "nokey", "a", "b"],
        EXTREMES, ["GEOHASH", "ext", "ne", "sw", "se", "nw", "origin", "am_e", "am_w", "npole", "spole", "tiny"],
        ["GEOPOS", "ext", "ne", "sw", "se", "nw", "origin", "am_e", "am_w", "npole", "spole", "tiny"],
        ["ZADD", "z", "0", "zero", "-1", "neg", "4503599627370495", "max52", "4503599627370496", "over",
         "1e20", "huge", "-1e20", "nhuge", "0.5", "half", "inf", "pinf", "-inf", "ninf"],
        ["GEOPOS", "z", "zero", "neg", "max52", "over", "huge", "nhuge", "half", "pinf", "ninf"],
        ["GEOHASH", "z", "zero", "neg", "max52", "over", "huge", "nhuge", "half", "pinf", "ninf"],
        ["GEODIST", "z", "zero", "max52"], ["GEODIST", "z", "neg", "huge"],
        ["GEOSEARCH", "z", "FROMLONLAT", "0", "0", "BYRADIUS", "30000", "km", "ASC", "WITHHASH", "WITHCOORD"],
        ["SET", "str", "v"], ["GEOHASH", "str", "a"], ["GEOPOS", "str", "a"],
    ],
    "georadius": [POINTS] + [
        ["GEORADIUS", "pts", "15", "37", "200", "km"] + o for o in SEARCH_OPTS] + [
        ["GEORADIUS", "pts", "15", "37", "200000", "m", "WITHDIST", "ASC"],
        ["GEORADIUS", "pts", "15", "37", "124.27", "mi", "WITHDIST", "ASC"],
        ["GEORADIUS", "pts", "15", "37", "656168", "ft", "WITHDIST", "ASC"],
        ["GEORADIUS", "pts", "15", "37", "0", "km"], ["GEORADIUS", "pts", "13.361389", "38.115556", "0", "km"],
        ["GEORADIUS", "pts", "0", "0", "20000", "km", "ASC", "WITHDIST"],
        ["GEORADIUS", "pts", "0", "0", "5000", "km", "WITHDIST"],
        ["GEORADIUS", "pts", "15", "37", "200", "km", "STORE", "dst"], ["ZRANGE", "dst", "0", "-1", "WITHSCORES"],
        ["GEORADIUS", "pts", "15", "37", "200", "km", "STOREDIST", "dst"], ["ZRANGE", "dst", "0", "-1", "WITHSCORES"],
        ["GEORADIUS", "pts", "15", "37", "200", "km", "COUNT", "1", "STORE", "dst"],
        ["ZRANGE", "dst", "0", "-1", "WITHSCORES"],
        ["GEORADIUS", "pts", "15", "37", "200", "mi", "STOREDIST", "dst", "DESC", "COUNT", "2"],
        ["ZRANGE", "dst", "0", "-1", "WITHSCORES"], ["TYPE", "dst"],
        ["GEORADIUS", "pts", "-100", "-60", "1", "km", "STORE", "dst"], ["EXISTS", "dst"],
        ["GEORADIUS", "nokey", "15", "37", "200", "km", "STORE", "pts"], ["EXISTS", "pts"],
        ["GEORADIUS", "nokey", "15", "37", "200", "km"],
    ],
    "georadius_ro_bymember": [POINTS] + [
        ["GEORADIUSBYMEMBER", "pts", "Palermo", "300", "km"] + o for o in SEARCH_OPTS] + [
        ["GEORADIUS_RO", "pts", "15", "37", "200", "km", "WITHDIST", "ASC"],
        ["GEORADIUSBYMEMBER_RO", "pts", "Catania", "200", "km", "WITHCOORD", "DESC"],
        ["GEORADIUS_RO", "pts", "15", "37", "200", "km", "STORE", "x"],
        ["GEORADIUSBYMEMBER_RO", "pts", "Catania", "200", "km", "STOREDIST", "x"],
        ["GEORADIUSBYMEMBER", "pts", "nope", "200", "km"], ["GEORADIUSBYMEMBER", "pts", "nope", "x", "km"],
        ["GEORADIUSBYMEMBER", "nokey", "nope", "x", "km"], ["GEORADIUSBYMEMBER", "nokey", "m", "1", "km", "STORE", "d"],
        ["GEORADIUSBYMEMBER", "nokey", "m", "1", "km", "bogus"],
        ["GEORADIUSBYMEMBER", "pts", "Palermo", "300", "km", "STORE", "d"], ["ZRANGE", "d", "0", "-1", "WITHSCORES"],
        ["GEORADIUSBYMEMBER", "pts", "Palermo", "300", "km", "STOREDIST", "d", "STORE", "d2"],
        ["ZRANGE", "d2", "0", "-1", "WITHSCORES"],
        ["GEORADIUSBYMEMBER", "pts", "tokyo", "10000", "km", "STOREDIST", "pts"],
        ["ZRANGE", "pts", "0", "-1", "WITHSCORES"],
    ],
    "geosearch": [POINTS] + [
        ["GEOSEARCH", "pts", "FROMLONLAT", "15", "37", "BYRADIUS", "200", "km"] + o for o in SEARCH_OPTS] + [
        ["GEOSEARCH", "pts", "FROMMEMBER", "Palermo", "BYBOX", "400", "400", "km"] + o for o in SEARCH_OPTS] + [
        ["GEOSEARCH", "pts", "FROMLONLAT", "15", "37", "BYBOX", "400", "400", "km", "ASC", "WITHDIST"],
        ["GEOSEARCH", "pts", "FROMLONLAT", "15", "37", "BYBOX", "100", "600", "km", "ASC", "WITHDIST"],
        ["GEOSEARCH", "pts", "FROMLONLAT", "15", "37", "BYBOX", "600", "100", "km", "ASC", "WITHDIST"],
        ["GEOSEARCH", "pts", "BYRADIUS", "200", "km", "FROMLONLAT", "15", "37", "ASC"],
        ["GEOSEARCH", "pts", "FROMMEMBER", "edge1", "BYBOX", "0", "0", "m", "WITHCOORD"],
        ["GEOSEARCH", "pts", "FROMLONLAT", "0", "0", "BYBOX", "40000", "40000", "km", "ASC", "WITHDIST"],
        ["GEOSEARCH", "pts", "FROMMEMBER", "Palermo", "FROMMEMBER", "Catania", "BYRADIUS", "1", "m"],
        ["GEOSEARCH", "pts", "FROMLONLAT", "15", "37", "BYRADIUS", "200", "km", "COUNT", "2", "COUNT", "1"],
        ["GEOSEARCH", "nokey", "FROMMEMBER", "x", "BYRADIUS", "1", "m"],
        ["GEOSEARCHSTORE", "dst", "pts", "FROMLONLAT", "15", "37", "BYRADIUS", "200", "km"],
        ["ZRANGE", "dst", "0", "-1", "WITHSCORES"],
        ["GEOSEARCHSTORE", "dst", "pts", "FROMLONLAT", "15", "37", "BYRADIUS", "200", "km", "STOREDIST"],
        ["ZRANGE", "dst", "0", "-1", "WITHSCORES"],
        ["GEOSEARCHSTORE", "dst", "pts", "FROMMEMBER", "nyc", "BYBOX", "20000", "20000", "km", "STOREDIST",
         "COUNT", "3", "DESC"], ["ZRANGE", "dst", "0", "-1", "WITHSCORES"],
        ["GEOSEARCHSTORE", "dst", "pts", "FROMLONLAT", "-100", "-60", "BYRADIUS", "1", "km"], ["EXISTS", "dst"],
        ["GEOSEARCHSTORE", "pts", "nokey", "FROMLONLAT", "1", "1", "BYRADIUS", "1", "km"], ["EXISTS", "pts"],
    ],
    "search_errors": [POINTS, ["SET", "str", "v"]] + [
        ["GEORADIUS", "pts", "1", "1", "x", "km"], ["GEORADIUS", "pts", "1", "1", "-1", "km"],
        ["GEORADIUS", "pts", "1", "1", "1", "KMS"], ["GEORADIUS", "pts", "200", "1", "1", "km"],
        ["GEORADIUS", "pts", "1", "x", "1", "km"], ["GEORADIUS", "pts", "1", "1", "1", "km", "count", "0"],
        ["GEORADIUS", "pts", "1", "1", "1", "km", "count", "-3"], ["GEORADIUS", "pts", "1", "1", "1", "km", "count", "x"],
        ["GEORADIUS", "pts", "1", "1", "1", "km", "count"], ["GEORADIUS", "pts", "1", "1", "1", "km", "any"],
        ["GEORADIUS", "pts", "1", "1", "1", "km", "withdist", "store", "x"],
        ["GEORADIUS", "pts", "1", "1", "1", "km", "store"], ["GEORADIUS", "pts", "1", "1", "1", "km", "bogus"],
        ["GEORADIUS", "pts", "1", "1", "1", "km", "frommember", "Palermo"],
        ["GEORADIUS", "pts", "1", "1", "1", "km", "storedist", "x", "withhash"],
        ["GEORADIUS", "str", "1", "1", "1", "km"], ["GEORADIUS", "str", "200", "1", "x", "km"],
        ["GEORADIUSBYMEMBER", "str", "a", "1", "km"], ["GEOSEARCH", "str", "FROMLONLAT", "0", "0", "BYRADIUS", "1", "km"],
        ["GEOSEARCHSTORE", "d", "str", "FROMLONLAT", "0", "0", "BYRADIUS", "1", "km"],
        ["GEOSEARCHSTORE", "str", "pts", "FROMLONLAT", "15", "37", "BYRADIUS", "200", "km"], ["TYPE", "str"],
        ["GEOSEARCH", "pts", "FROMLONLAT", "1", "1", "count", "1"],
        ["GEOSEARCH", "pts", "BYRADIUS", "1", "km", "ASC"], ["geosearch", "pts", "byradius", "1", "km", "asc"],
        ["GEOSEARCH", "pts", "FROMLONLAT", "1", "1", "FROMMEMBER", "Palermo", "BYRADIUS", "1", "km"],
        ["GEOSEARCH", "pts", "FROMMEMBER", "Palermo", "FROMLONLAT", "1", "1", "BYRADIUS", "1", "km"],
        ["GEOSEARCH", "pts", "FROMLONLAT", "1", "1", "BYRADIUS", "1", "km", "BYBOX", "1", "1", "km"],
        ["GEOSEARCH", "pts", "FROMLONLAT", "1", "1", "BYBOX", "-1", "1", "km"],
        ["GEOSEARCH", "pts", "FROMLONLAT", "1", "1", "BYBOX", "x", "1", "km"],
        ["GEOSEARCH", "pts", "FROMLONLAT", "1", "1", "BYBOX", "1", "x", "km"],
        ["GEOSEARCH", "pts", "FROMLONLAT", "1", "1", "BYBOX", "1", "1", "yd"],
        ["GEOSEARCH", "pts", "FROMLONLAT", "1", "1", "BYBOX", "1", "1"],
        ["GEOSEARCH", "pts", "FROMMEMBER", "nope", "BYRADIUS", "1", "km"],
        ["GEOSEARCH", "pts", "FROMLONLAT", "1", "1", "BYRADIUS", "1", "km", "STORE", "x"],
        ["GEOSEARCH", "pts", "FROMLONLAT", "1", "1", "BYRADIUS", "1", "km", "STOREDIST"],
        ["GEOSEARCH", "pts", "FROMLONLAT", "1", "1", "BYRADIUS", "1", "km", "ANY"],
        ["GEOSEARCH", "pts", "FROMLONLAT", "1", "1", "BYRADIUS", "1", "km", "WITHDIST", "COUNT", "0"],
        ["GEOSEARCHSTORE", "d", "pts", "FROMLONLAT", "1", "1", "BYRADIUS", "1", "km", "WITHCOORD"],
        ["GEOSEARCHSTORE", "d", "pts", "FROMLONLAT", "1", "1", "BYRADIUS", "1", "km", "STORE", "x"],
        ["GEOSEARCHSTORE", "d", "pts", "BYRADIUS", "1", "km", "FROMLONLAT", "1"],
        ["GEOSEARCH", "nokey", "FROMMEMBER", "x", "BYRADIUS", "1", "km", "WITHDIST", "ANY"],
        ["GEOSEARCH", "nokey", "FROMLONLAT", "200", "0", "BYRADIUS", "1", "km"],
        ["GEORADIUS", "pts", "1", "1", "1"], ["GEOSEARCH", "pts", "FROMLONLAT", "1", "1", "BYRADIUS"],
    ],
    "extremes": [EXTREMES] + [
        ["GEOSEARCH", "ext", "FROMLONLAT", lon, lat, "BYRADIUS", r, "km", "ASC", "WITHDIST", "WITHCOORD"]
        for lon, lat in (("180", "0"), ("-180", "0"), ("0", "85.05112878"), ("0", "-85.05112878"),
                         ("180", "85.05112878"), ("0", "0"), ("179.99", "84"))
        for r in ("1", "500", "5000", "20000")] + [
        ["GEOSEARCH", "ext", "FROMMEMBER", m, "BYBOX", w, h, "km", "DESC", "WITHHASH"]
        for m in ("ne", "am_e", "origin", "spole") for w, h in (("10", "10"), ("3000", "100"), ("40000", "20000"))] + [
        ["GEORADIUSBYMEMBER", "ext", "am_w", "50", "km", "WITHDIST"],
        ["GEORADIUS", "ext", "180", "85.05112878", "1", "m", "WITHCOORD"],
    ],
    "ties_and_count": [
        ["GEOADD", "t"] + sum([["10", "10", "m%02d" % i] for i in range(50)], []),
        ["GEOADD", "t"] + sum([["10.001", "10", "e%02d" % i] for i in range(12)], []),
        ["GEOADD", "t"] + sum([["9.999", "10", "w%02d" % i] for i in range(12)], []),
    ] + [
        ["GEOSEARCH", "t", "FROMLONLAT", "10", "10", "BYRADIUS", "5", "km", "COUNT", n, order, "WITHDIST"]
        for n in ("1", "3", "7", "8", "41", "60", "74", "100") for order in ("ASC", "DESC")] + [
        ["GEOSEARCH", "t", "FROMLONLAT", "10", "10", "BYRADIUS", "5", "km", "COUNT", "5", "ANY"],
        ["GEOSEARCH", "t", "FROMLONLAT", "10", "10", "BYRADIUS", "5", "km", "COUNT", "55", "ANY", "DESC"],
        ["GEOSEARCH", "t", "FROMLONLAT", "10", "10", "BYRADIUS", "5", "km", "ASC"],
        ["GEOSEARCH", "t", "FROMLONLAT", "10", "10", "BYRADIUS", "5", "km", "DESC"],
        ["GEOSEARCH", "t", "FROMMEMBER", "e00", "BYBOX", "1", "1", "km", "COUNT", "9", "ASC"],
        ["GEORADIUS", "t", "10", "10", "5", "km", "COUNT", "20", "STORE", "s"], ["ZRANGE", "s", "0", "-1"],
        ["GEORADIUS", "t", "10.0005", "10", "5", "km", "COUNT", "20", "DESC", "STOREDIST", "s"],
        ["ZRANGE", "s", "0", "-1", "WITHSCORES"],
    ],
    "watch_and_multi": [
        SICILY, ["WATCH", "Sicily"], cmd("GEOADD", "Sicily", "1", "1", "x", conn=1), ["MULTI"],
        ["GEOPOS", "Sicily", "x"], ["EXEC"],
        ["WATCH", "Sicily"], cmd("GEOADD", "Sicily", "NX", "1", "1", "x", conn=1), ["MULTI"], ["PING"], ["EXEC"],
        ["WATCH", "dst"], cmd("GEOSEARCHSTORE", "dst", "Sicily", "FROMLONLAT", "15", "37", "BYRADIUS", "200", "km",
                              conn=1), ["MULTI"], ["PING"], ["EXEC"],
        ["MULTI"], ["GEOADD", "Sicily", "2", "2", "y"], ["GEORADIUS", "Sicily", "2", "2", "1", "km"],
        ["GEOHASH", "Sicily", "y"], ["EXEC"],
    ],
}


@pytest.fixture(scope="module")
def pair():
    servers = {"ferry": start_server("ferry"), "redis": start_server("redis")}
    yield servers
    for s in servers.values():
        s.cleanup()


def _run(pair, name, steps):
    for kind in ("ferry", "redis"):
        assert pair[kind].alive(), "%s server died before %s:\n%s" % (kind, name, pair[kind].log_tail())
    mismatches, transcript = run_steps(pair["ferry"].port, pair["redis"].port, steps)
    died = [k for k in ("ferry", "redis") if not pair[k].alive()]
    if died:
        pytest.fail("server(s) %s died during %r:\n%s" % (died, name, pair[died[0]].log_tail()), pytrace=False)
    if mismatches:
        pytest.fail(format_report(name, mismatches, transcript, context=8), pytrace=False)


def _thresholds(entries, value):
    return [["CONFIG", "SET", "zset-max-listpack-entries", str(entries)],
            ["CONFIG", "SET", "zset-max-listpack-value", str(value)]]


DEFAULTS = _thresholds(128, 64)
ENCODINGS = {"listpack": (128, 64), "tiny": (4, 8)}


@pytest.mark.parametrize("proto", ["2", "3"])
@pytest.mark.parametrize("enc", sorted(ENCODINGS))
@pytest.mark.parametrize("name", sorted(CASES))
def test_geo_case(pair, name, enc, proto):
    pre = _thresholds(*ENCODINGS[enc]) + ([hello("3")] if proto == "3" else [])
    _run(pair, "%s [%s, RESP%s]" % (name, enc, proto), pre + CASES[name] + DEFAULTS)


def test_cases_cover_every_command():
    want = {"geoadd", "geodist", "geohash", "geopos", "geosearch", "geosearchstore", "georadius", "georadius_ro",
            "georadiusbymember", "georadiusbymember_ro"}
    seen = set()
    for steps in CASES.values():
        for s in steps:
            args = s.args if hasattr(s, "args") else s
            seen.add((args[0].decode() if isinstance(args[0], bytes) else args[0]).lower())
    assert want <= seen, want - seen


def test_command_info_and_docs(pair):
    names = ["geoadd", "geodist", "geohash", "geopos", "geosearch", "geosearchstore", "georadius", "georadius_ro",
             "georadiusbymember", "georadiusbymember_ro"]
    out = {}
    for kind in ("ferry", "redis"):
        with RawClient(pair[kind].port) as c:
            res = []
            for name in names:
                res.append(parse(c.command("COMMAND", "INFO", name))[1][0][1][:7])
                docs = parse(c.command("COMMAND", "DOCS", name))[1][1][1]
                fields = dict((docs[i][1], docs[i + 1]) for i in range(0, len(docs), 2))
                res.append([fields.get(k) for k in (b"summary", b"since", b"group", b"complexity")])
            out[kind] = res
    for a, b in zip(out["ferry"], out["redis"]):
        assert repr(a) == repr(b), (a, b)


# ------------------------------------------------------------ notifications
def _events(port, steps):
    """Keyspace events (pattern __key*__:*) raised by the steps."""
    with RawClient(port) as a, RawClient(port) as sub:
        a.command("FLUSHALL")
        a.command("CONFIG", "SET", "notify-keyspace-events", "KEA")
        sub.command("PSUBSCRIBE", "__key*__:*")
        replies = [a.command(*s) for s in steps]
        a.command("CONFIG", "SET", "notify-keyspace-events", "")
        time.sleep(0.05)
        msgs = []
        sub.send(encode_command(["PING"]))
        while True:
            r = sub.read_reply(timeout=5)
            if b"pong" in r.lower():
                break
            msgs.append(r)
        return replies, msgs


def test_keyspace_events(pair):
    steps = [SICILY, ["GEOADD", "Sicily", "NX", "13.361389", "38.115556", "Palermo"],
             ["GEOADD", "Sicily", "XX", "1", "1", "Palermo"],
             ["GEORADIUS", "Sicily", "15", "37", "200", "km", "STORE", "d1"],
             ["GEORADIUSBYMEMBER", "Sicily", "Catania", "200", "km", "STOREDIST", "d2"],
             ["GEOSEARCHSTORE", "d3", "Sicily", "FROMLONLAT", "15", "37", "BYRADIUS", "200", "km"],
             ["GEOSEARCHSTORE", "d3", "Sicily", "FROMLONLAT", "-100", "-60", "BYRADIUS", "1", "km"],
             ["GEORADIUS", "nokey", "15", "37", "200", "km", "STORE", "d1"],
             ["GEOSEARCH", "Sicily", "FROMLONLAT", "15", "37", "BYRADIUS", "200", "km"]]
    assert _events(pair["ferry"].port, steps) == _events(pair["redis"].port, steps)


def test_geoadd_wakes_bzpopmin(pair):
    out = {}
    for kind in ("ferry", "redis"):
        port = pair[kind].port
        with RawClient(port) as a, RawClient(port) as b:
            a.command("FLUSHALL")
            b.send(encode_command(["BZPOPMIN", "g", "s", "5"]))
            time.sleep(0.1)
            r1 = a.command("GEOADD", "g", "13.361389", "38.115556", "Palermo", "15.087269", "37.502669", "Catania")
            reply = b.read_reply(timeout=5)
            a.command("GEOADD", "src", "1", "1", "x")
            b.send(encode_command(["BZPOPMIN", "s", "5"]))
            time.sleep(0.1)
            r2 = a.command("GEOSEARCHSTORE", "s", "src", "FROMLONLAT", "1", "1", "BYRADIUS", "1", "km", "STOREDIST")
            reply2 = b.read_reply(timeout=5)
            out[kind] = (r1, reply, r2, reply2, a.command("ZRANGE", "g", "0", "-1", "WITHSCORES"))
    assert out["ferry"] == out["redis"]


# ------------------------------------------------------------ random programs
def _coord(r, lo, hi):
    return "%.*f" % (r.choice([0, 2, 6, 9]), r.uniform(lo, hi))


def gen_geo_program(seed, n_ops=250):
    r = random.Random(seed)
    steps = []
    if r.random() < 0.5:
        steps += _thresholds(r.choice([0, 8, 32]), 64)
    centers = [(r.uniform(-180, 180), r.uniform(-85, 85)) for _ in range(4)]
    centers += [(179.9, 0), (-179.9, 10), (0, 84.9), (10, -84.9)]
    names = ["p%d" % i for i in range(120)]
    added = []

    def member():  # mostly members that were added (a search from an absent one is an error)
        return r.choice(added) if added and r.random() < 0.85 else r.choice(names)

    def point():
        k = r.random()
        if k < 0.3:
            return [_coord(r, -180, 180), _coord(r, -85.05112878, 85.05112878)]
        cx, cy = r.choice(centers)
        if k < 0.45:  # exact duplicates: ties
            return ["%.4f" % cx, "%.4f" % cy]
        d = r.choice([0.01, 0.5, 3])
        lon = min(180, max(-180, cx + r.uniform(-d, d)))
        lat = min(85.05, max(-85.05, cy + r.uniform(-d, d)))
        return ["%.6f" % lon, "%.6f" % lat]

    def center_args():
        if r.random() < 0.5:
            return ["FROMMEMBER", member()]
        return ["FROMLONLAT"] + point()

    def shape_args():
        unit = r.choice(["m", "km", "mi", "ft", "KM"])
        scale = {"m": 1000, "km": 1, "mi": 0.62, "ft": 3280, "KM": 1}[unit]
        size = lambda: "%g" % (r.choice([0.5, 5, 50, 400, 3000, 12000]) * scale * r.uniform(0.5, 1.5))
        if r.random() < 0.5:
            return ["BYRADIUS", size(), unit]
        return ["BYBOX", size(), size(), unit]

    def opts(store=False):
        o = []
        if not store:
            for w in ("WITHDIST", "WITHCOORD", "WITHHASH"):
                if r.random() < 0.3:
                    o.append(w)
        if r.random() < 0.7:
            o.append(r.choice(["ASC", "DESC"]))
        if r.random() < 0.5:
            o += ["COUNT", str(r.choice([1, 2, 3, 5, 8, 13, 50]))]
            if r.random() < 0.3:
                o.append("ANY")
        r.shuffle(o)
        return o

    for _ in range(n_ops):
        key = r.choice(["g1", "g1", "g2"])
        k = r.random()
        if k < 0.3:
            args = ["GEOADD", key] + (r.choice([[], [], ["NX"], ["XX"], ["CH"], ["XX", "CH"]]))
            for _ in range(r.randint(1, 6)):
                m = r.choice(names)
                added.append(m)
                args += point() + [m]
            steps.append(args)
        elif k < 0.55:
            steps.append(["GEOSEARCH", key] + center_args() + shape_args() + opts())
        elif k < 0.63:
            unit = r.choice(["m", "km"])
            steps.append(["GEORADIUS" + r.choice(["", "_RO"]), key] + point() +
                         [str(r.choice([1, 10, 200, 2000, 9000])), unit] + opts())
        elif k < 0.7:
            steps.append(["GEORADIUSBYMEMBER" + r.choice(["", "_RO"]), key, member(),
                          str(r.choice([1, 10, 200, 2000, 9000])), "km"] + opts())
        elif k < 0.78:
            dst = r.choice(["d1", "d2", "g2"])
            steps.append(["GEOSEARCHSTORE", dst, key] + center_args() + shape_args() + opts(store=True) +
                         (["STOREDIST"] if r.random() < 0.4 else []))
            steps.append(["ZRANGE", dst, "0", "-1", "WITHSCORES"])
        elif k < 0.82:
            steps.append(["GEORADIUS", key] + point() + ["500", "km", r.choice(["STORE", "STOREDIST"]), "d1"] +
                         opts(store=True))
            steps.append(["ZRANGE", "d1", "0", "-1", "WITHSCORES"])
        elif k < 0.88:
            steps.append(["GEODIST", key, member(), member()] + r.choice([[], ["km"], ["mi"], ["ft"]]))
        elif k < 0.93:
            steps.append(["GEOPOS", key, member(), member(), member()])
        elif k < 0.97:
            steps.append(["GEOHASH", key, member(), member(), member()])
        else:
            steps.append(["ZREM", key] + r.sample(names, 5))
    return steps + DEFAULTS


@pytest.mark.parametrize("proto", ["2", "3"])
@pytest.mark.parametrize("seed", list(range(1, 13)))
def test_random_geo_program(pair, seed, proto):
    pre = [hello("3")] if proto == "3" else []
    _run(pair, "random geo program seed=%d RESP%s" % (seed, proto), pre + gen_geo_program(seed))


GETKEYS = [
    ("GEORADIUS", "src", "0", "0", "1", "km", "STORE", "d1", "STOREDIST", "d2"),
    ("GEORADIUS", "src", "0", "0", "1", "km", "STOREDIST", "d2", "STORE", "d1"),
    ("GEORADIUS", "src", "0", "0", "1", "km", "STORE", "d1", "STORE", "d2"),
    ("GEORADIUSBYMEMBER", "src", "m", "1", "km", "STORE", "d1"),
    ("GEORADIUSBYMEMBER", "src", "m", "1", "km"),
    ("GEORADIUS", "src", "0", "0", "1", "km"),
    ("SORT", "s", "BY", "x", "STORE", "d"),
    ("SORT", "s", "STORE", "a", "STORE", "b"),
    ("GEOSEARCHSTORE", "dst", "src", "FROMLONLAT", "0", "0", "BYRADIUS", "1", "km"),
]


def test_command_getkeys_finds_store_destinations(pair):
    """COMMAND GETKEYS reports the STORE / STOREDIST destinations of
    GEORADIUS[BYMEMBER] (and SORT's) as redis-server's key specs find them."""
    got = []
    for kind in ("ferry", "redis"):
        with pair[kind].client() as c:
            got.append([c.command("COMMAND", "GETKEYS", *q) for q in GETKEYS])
    assert got[0] == got[1]
