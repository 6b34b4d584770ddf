"""Hand-written differential cases for the sorted-set commands, used by
test_diff_zsets.py (kept apart so that file stays readable). A case is a
list of diffkit steps; CASES run under every encoding threshold and both
protocols, FIXED_CASES set their own thresholds."""
from __future__ import annotations

from diffkit import cmd, sorted_

ENCODINGS = {
    "listpack": ("128", "64"),
    "skiplist": ("0", "64"),
    "tiny": ("4", "8"),
}


def thresholds(entries, value):
    return [("CONFIG", "SET", "zset-max-listpack-entries", entries),
            ("CONFIG", "SET", "zset-max-listpack-value", value)]


DEFAULTS = thresholds("128", "64")

# score texts whose replies (and stored listpack text) are worth comparing
FLOATS = ["0.1", "1e17", "-0", "inf", "-inf", "+inf", "1.5e-7", "3.0", "10000000000000000000",
          "4611686018427387904", "4611686018427388928", "-4611686018427387904", "123.25", "-17",
          "1e-320", "0x10", "2.5e-5", "9007199254740993", "1e300", "-1e-300"]


def watch_case(writer, key="z", setup=()):
    """WATCH key, a write from another connection, then MULTI/EXEC."""
    return list(setup) + [("WATCH", key), cmd(*writer, conn=1), ("MULTI",), ("PING",), ("EXEC",)]


CASES = {}
FIXED_CASES = {}

# ---------------------------------------------------------------------- ZADD
CASES["zadd_basic"] = [
    ("ZADD", "z", "1", "a"), ("ZADD", "z", "2", "b", "3", "c"), ("ZADD", "z", "1", "a"),
    ("ZCARD", "z"), ("ZRANGE", "z", "0", "-1", "WITHSCORES"),
    ("ZADD", "z", "5", "a", "5", "a", "0", "a"), ("ZSCORE", "z", "a"),
    ("ZADD", "z", "2", "bb", "2", "ba", "2", "b2"), ("ZRANGE", "z", "0", "-1", "WITHSCORES"),
    ("TYPE", "z"), ("ZADD", "z", "-1", ""), ("ZRANGE", "z", "0", "0"),
    ("ZADD", "z", "1", b"\x00bin\xff"), ("ZSCORE", "z", b"\x00bin\xff"),
    ("zadd", "z", "7", "LONGMEMBER-LONGMEMBER"), ("ZRANGE", "z", "-2", "-1", "WITHSCORES"),
]
CASES["zadd_options"] = [
    ("ZADD", "z", "1", "a", "2", "b"),
    ("ZADD", "z", "NX", "5", "a", "5", "c"), ("ZRANGE", "z", "0", "-1", "WITHSCORES"),
    ("ZADD", "z", "XX", "6", "a", "6", "d"), ("ZRANGE", "z", "0", "-1", "WITHSCORES"),
    ("ZADD", "z", "CH", "6", "a", "7", "b", "1", "e"), ("ZADD", "z", "XX", "CH", "1", "a", "1", "zz"),
    ("ZADD", "z", "GT", "CH", "0", "a", "10", "b", "1", "f"), ("ZRANGE", "z", "0", "-1", "WITHSCORES"),
    ("ZADD", "z", "LT", "CH", "100", "a", "-1", "b"), ("ZRANGE", "z", "0", "-1", "WITHSCORES"),
    ("ZADD", "z", "XX", "GT", "CH", "9", "b", "100", "e", "5", "new"),
    ("ZADD", "z", "xx", "lt", "ch", "-5", "e"), ("ZRANGE", "z", "0", "-1", "WITHSCORES"),
    ("ZADD", "z", "INCR", "2", "a"), ("ZADD", "z", "INCR", "NX", "2", "a"),
    ("ZADD", "z", "INCR", "XX", "2", "nope"), ("ZADD", "z", "INCR", "GT", "-1", "a"),
    ("ZADD", "z", "INCR", "LT", "-1", "a"), ("ZADD", "z", "INCR", "GT", "0", "a"),
    ("ZADD", "z", "INCR", "NX", "3", "brandnew"), ("ZADD", "z", "CH", "CH", "NX", "1", "q"),
    ("ZADD", "z", "GT", "1", "gtnew"), ("ZADD", "z", "LT", "XX", "1", "ltnew"),
    ("ZRANGE", "z", "0", "-1", "WITHSCORES"),
    ("ZADD", "nokey", "XX", "1", "a"), ("ZADD", "nokey", "XX", "INCR", "1", "a"), ("EXISTS", "nokey"),
    ("ZADD", "z", "0", "a"), ("ZADD", "z", "CH", "-0", "a"), ("ZADD", "z", "CH", "0", "a"),
    ("ZADD", "z", "INCR", "-0", "a"), ("ZSCORE", "z", "a"),
]
CASES["zadd_errors"] = [
    ("SET", "str", "v"),
    ("ZADD", "z"), ("ZADD", "z", "1"), ("ZADD", "z", "1", "a", "2"), ("ZADD", "z", "NX"),
    ("ZADD", "z", "nan", "a"), ("ZADD", "z", "abc", "a"), ("ZADD", "z", "", "a"),
    ("ZADD", "z", " 1", "a"), ("ZADD", "z", "1 ", "a"), ("ZADD", "z", "1e400", "a"),
    ("ZADD", "z", "-1e400", "a"), ("ZADD", "z", "1e-400", "a"), ("ZADD", "z", b"1\x00", "a"),
    ("ZADD", "z", "NX", "XX", "1", "a"), ("ZADD", "z", "GT", "LT", "1", "a"),
    ("ZADD", "z", "GT", "NX", "1", "a"), ("ZADD", "z", "LT", "NX", "1", "a"),
    ("ZADD", "z", "NX", "XX", "GT", "1", "a"), ("ZADD", "z", "INCR", "1", "a", "2", "b"),
    ("ZADD", "z", "INCR", "NX", "XX", "1", "a"), ("ZADD", "z", "NX", "XX", "1"),
    ("ZADD", "z", "1", "a", "x", "b"), ("EXISTS", "z"),
    ("ZADD", "str", "1", "a"), ("ZADD", "str", "XX", "1", "a"), ("ZADD", "str", "x", "a"),
    ("ZADD", "z", b"n\x00x", "1", "a"), ("ZADD", "z", b"nx\x00junk", "1", "a"), ("ZRANGE", "z", "0", "-1"),
    ("ZADD", "z", "INCR"), ("ZADD", "z", "INCR", "1"),
]
CASES["zadd_nan"] = [
    ("ZADD", "z", "inf", "a", "-inf", "b"),
    ("ZADD", "z", "INCR", "-inf", "a"), ("ZADD", "z", "INCR", "inf", "b"),
    ("ZINCRBY", "z", "-inf", "a"), ("ZINCRBY", "z", "+inf", "b"), ("ZINCRBY", "z", "inf", "a"),
    ("ZRANGE", "z", "0", "-1", "WITHSCORES"), ("ZADD", "z", "INCR", "nan", "a"),
    ("ZADD", "z", "inf", "a", "-inf", "b"), ("ZINCRBY", "z", "1", "a"), ("ZSCORE", "z", "a"),
]
CASES["zincrby"] = [
    ("SET", "str", "v"),
    ("ZINCRBY", "z", "1", "a"), ("ZINCRBY", "z", "2.5", "a"), ("ZINCRBY", "z", "-10", "b"),
    ("ZINCRBY", "z", "0.1", "c"), ("ZINCRBY", "z", "0.2", "c"), ("ZRANGE", "z", "0", "-1", "WITHSCORES"),
    ("ZINCRBY", "z", "x", "a"), ("ZINCRBY", "z", "nan", "a"), ("ZINCRBY", "z", "1"),
    ("ZINCRBY", "z", "1", "a", "b"), ("ZINCRBY", "str", "1", "a"), ("ZINCRBY", "str", "x", "a"),
    ("ZINCRBY", "z", "1e308", "big"), ("ZINCRBY", "z", "1e308", "big"), ("ZSCORE", "z", "big"),
    ("ZINCRBY", "z", "-0", "zero"), ("ZSCORE", "z", "zero"), ("ZINCRBY", "new", "5", "m"), ("TYPE", "new"),
]

# ---------------------------------------------------------- member lookups
CASES["zscore_zmscore_zcard"] = [
    ("SET", "str", "v"), ("ZADD", "z", "1.5", "a", "-2", "b"),
    ("ZSCORE", "z", "a"), ("ZSCORE", "z", "nope"), ("ZSCORE", "nokey", "a"), ("ZSCORE", "str", "a"),
    ("ZSCORE", "z"), ("ZSCORE", "z", "a", "b"),
    ("ZMSCORE", "z", "a", "nope", "b", "a"), ("ZMSCORE", "nokey", "a", "b"), ("ZMSCORE", "str", "a"),
    ("ZMSCORE", "z"),
    ("ZCARD", "z"), ("ZCARD", "nokey"), ("ZCARD", "str"), ("ZCARD",), ("ZCARD", "z", "x"),
]
CASES["score_formatting"] = [("ZADD", "z", f, "m%d" % i) for i, f in enumerate(FLOATS)] + [
    ("ZRANGE", "z", "0", "-1", "WITHSCORES")] + [("ZSCORE", "z", "m%d" % i) for i in range(len(FLOATS))] + [
    ("ZMSCORE", "z", "m0", "m1", "m2"), ("ZRANGEBYSCORE", "z", "-inf", "+inf", "WITHSCORES"),
    ("ZINCRBY", "z", "0.2", "m0"), ("ZADD", "z", "INCR", "1e-7", "m6"),
    ("ZRANGE", "z", "0", "-1", "WITHSCORES"),
    ("ZPOPMIN", "z", "3"), ("ZPOPMAX", "z", "3"), ("ZUNION", "1", "z", "WITHSCORES"),
]
CASES["zrem"] = [
    ("SET", "str", "v"), ("ZADD", "z", "1", "a", "2", "b", "3", "c", "4", "d"),
    ("ZREM", "z", "a"), ("ZREM", "z", "a"), ("ZREM", "z", "b", "nope", "b", "c"),
    ("ZRANGE", "z", "0", "-1"), ("ZREM", "nokey", "a"), ("ZREM", "str", "a"), ("ZREM", "z"),
    ("ZREM", "z", "d", "d"), ("EXISTS", "z"), ("ZCARD", "z"),
]

# -------------------------------------------------------------------- counts
CASES["zcount"] = [
    ("SET", "str", "v"), ("ZADD", "z", "1", "a", "2", "b", "3", "c", "4", "d", "5", "e", "-inf", "n", "inf", "p"),
    ("ZCOUNT", "z", "-inf", "+inf"), ("ZCOUNT", "z", "2", "4"), ("ZCOUNT", "z", "(2", "4"),
    ("ZCOUNT", "z", "2", "(4"), ("ZCOUNT", "z", "(2", "(4"), ("ZCOUNT", "z", "(2", "(3"),
    ("ZCOUNT", "z", "4", "2"), ("ZCOUNT", "z", "3", "3"), ("ZCOUNT", "z", "(3", "3"),
    ("ZCOUNT", "z", "-inf", "-inf"), ("ZCOUNT", "z", "(-inf", "+inf"), ("ZCOUNT", "z", "inf", "inf"),
    ("ZCOUNT", "z", "", ""), ("ZCOUNT", "z", "(", "10"), ("ZCOUNT", "z", " 2", "0x4"),
    ("ZCOUNT", "z", "1e400", "-1e400"), ("ZCOUNT", "z", "-1e400", "1e400"),
    ("ZCOUNT", "z", b"2\x00junk", "4"), ("ZCOUNT", "z", "nan", "1"), ("ZCOUNT", "z", "(nan", "1"),
    ("ZCOUNT", "z", "1", "x"), ("ZCOUNT", "z", "[1", "2"), ("ZCOUNT", "z", "1", "2)"),
    ("ZCOUNT", "nokey", "0", "1"), ("ZCOUNT", "str", "0", "1"), ("ZCOUNT", "str", "x", "1"),
    ("ZCOUNT", "z", "0"),
]
CASES["zlexcount"] = [
    ("SET", "str", "v"), ("ZADD", "z", "0", "a", "0", "b", "0", "c", "0", "d", "0", "e", "0", "ab", "0", ""),
    ("ZLEXCOUNT", "z", "-", "+"), ("ZLEXCOUNT", "z", "[b", "[d"), ("ZLEXCOUNT", "z", "(b", "[d"),
    ("ZLEXCOUNT", "z", "[b", "(d"), ("ZLEXCOUNT", "z", "(a", "(b"), ("ZLEXCOUNT", "z", "[a", "[a"),
    ("ZLEXCOUNT", "z", "(a", "[a"), ("ZLEXCOUNT", "z", "[d", "[b"), ("ZLEXCOUNT", "z", "+", "-"),
    ("ZLEXCOUNT", "z", "-", "-"), ("ZLEXCOUNT", "z", "+", "+"), ("ZLEXCOUNT", "z", "[", "+"),
    ("ZLEXCOUNT", "z", "(", "+"), ("ZLEXCOUNT", "z", "-", "("), ("ZLEXCOUNT", "z", "-", "[b"),
    ("ZLEXCOUNT", "z", "", "+"), ("ZLEXCOUNT", "z", "a", "+"), ("ZLEXCOUNT", "z", "++", "+"),
    ("ZLEXCOUNT", "z", "-x", "+"), ("ZLEXCOUNT", "z", b"+\x00x", "+"), ("ZLEXCOUNT", "z", "-", b"+\x00"),
    ("ZLEXCOUNT", "nokey", "-", "+"), ("ZLEXCOUNT", "str", "-", "+"), ("ZLEXCOUNT", "str", "x", "+"),
]
# lex ranges over unequal scores: not meaningful, but deterministic in the
# listpack form (in the skiplist the answer depends on the random levels)
FIXED_CASES["lex_on_mixed_scores"] = DEFAULTS + [
    ("ZADD", "mixed", "1", "b", "2", "a", "3", "d", "4", "c", "5", "aa"),
    ("ZLEXCOUNT", "mixed", "[a", "[c"), ("ZLEXCOUNT", "mixed", "[b", "[c"), ("ZLEXCOUNT", "mixed", "-", "[a"),
    ("ZLEXCOUNT", "mixed", "[c", "+"), ("ZLEXCOUNT", "mixed", "(b", "+"),
    ("ZRANGEBYLEX", "mixed", "[a", "[c"), ("ZRANGEBYLEX", "mixed", "[b", "+"), ("ZRANGEBYLEX", "mixed", "-", "[b"),
    ("ZREVRANGEBYLEX", "mixed", "[d", "[a"), ("ZREVRANGEBYLEX", "mixed", "+", "[c"),
    ("ZRANGEBYLEX", "mixed", "[a", "+", "LIMIT", "1", "2"), ("ZREMRANGEBYLEX", "mixed", "[b", "[c"),
    ("ZRANGE", "mixed", "0", "-1"), ("ZREMRANGEBYLEX", "mixed", "(a", "+"), ("ZRANGE", "mixed", "0", "-1"),
]

# -------------------------------------------------------------------- ranges
CASES["zrange_rank"] = [
    ("SET", "str", "v"), ("ZADD", "z", "1", "a", "2", "b", "3", "c", "4", "d", "5", "e"),
    ("ZRANGE", "z", "0", "-1"), ("ZRANGE", "z", "1", "3", "WITHSCORES"), ("ZRANGE", "z", "-2", "-1"),
    ("ZRANGE", "z", "-100", "1"), ("ZRANGE", "z", "3", "100"), ("ZRANGE", "z", "3", "1"),
    ("ZRANGE", "z", "5", "10"), ("ZRANGE", "z", "-1", "-2"), ("ZRANGE", "z", "0", "-6"),
    ("ZRANGE", "z", "0", "-1", "REV"), ("ZRANGE", "z", "0", "1", "REV", "WITHSCORES"),
    ("ZRANGE", "z", "0", "0", "withscores", "rev"),
    ("ZREVRANGE", "z", "0", "-1"), ("ZREVRANGE", "z", "1", "2", "WITHSCORES"),
    ("ZRANGE", "z", "9223372036854775807", "-9223372036854775808"),
    ("ZRANGE", "z", "-9223372036854775808", "9223372036854775807"),
    ("ZRANGE", "z", "a", "1"), ("ZRANGE", "z", "0", "1.5"), ("ZRANGE", "z", "0", "99999999999999999999"),
    ("ZRANGE", "nokey", "0", "-1"), ("ZRANGE", "str", "0", "-1"), ("ZRANGE", "z", "0"),
    ("ZRANGE", "z", "0", "1", "LIMIT", "0", "1"), ("ZRANGE", "z", "0", "1", "FOO"),
    ("ZRANGE", "z", "0", "1", "REV", "REV"), ("ZREVRANGE", "z", "0", "1", "REV"),
    ("ZREVRANGE", "z", "0", "1", "BYSCORE"), ("ZRANGE", "z", "0", "1", "WITHSCORES", "WITHSCORES"),
    ("ZRANGE", "z", "0", "1", "LIMIT", "0"), ("ZREVRANGE", "z", "0", "1", "LIMIT", "0", "1"),
    ("ZRANGE", "str", "x", "1"), ("ZRANGE", "z", "0", "-1", "BYRANK"),
]
CASES["zrange_byscore"] = [
    ("SET", "str", "v"), ("ZADD", "z", "1", "a", "2", "b", "2", "bb", "3", "c", "4", "d", "5", "e"),
    ("ZRANGE", "z", "2", "4", "BYSCORE"), ("ZRANGE", "z", "(2", "4", "BYSCORE", "WITHSCORES"),
    ("ZRANGE", "z", "4", "2", "BYSCORE", "REV"), ("ZRANGE", "z", "2", "4", "BYSCORE", "REV"),
    ("ZRANGE", "z", "-inf", "+inf", "BYSCORE", "LIMIT", "1", "2"),
    ("ZRANGE", "z", "+inf", "-inf", "BYSCORE", "REV", "LIMIT", "1", "2", "WITHSCORES"),
    ("ZRANGEBYSCORE", "z", "-inf", "+inf", "LIMIT", "-1", "5"),
    ("ZRANGEBYSCORE", "z", "-inf", "+inf", "LIMIT", "1", "-5"),
    ("ZRANGEBYSCORE", "z", "-inf", "+inf", "LIMIT", "1", "0"),
    ("ZRANGEBYSCORE", "z", "-inf", "+inf", "LIMIT", "6", "1"),
    ("ZRANGEBYSCORE", "z", "-inf", "+inf", "LIMIT", "5", "1"),
    ("ZRANGEBYSCORE", "z", "-inf", "+inf", "LIMIT", "0", "1", "LIMIT", "2", "2"),
    ("ZRANGEBYSCORE", "z", "(1", "(5", "WITHSCORES"), ("ZRANGEBYSCORE", "z", "5", "1"),
    ("ZRANGEBYSCORE", "z", "2", "2"), ("ZRANGEBYSCORE", "z", "(2", "2"),
    ("ZREVRANGEBYSCORE", "z", "+inf", "-inf"), ("ZREVRANGEBYSCORE", "z", "4", "(2", "WITHSCORES"),
    ("ZREVRANGEBYSCORE", "z", "2", "4"), ("ZREVRANGEBYSCORE", "z", "+inf", "-inf", "LIMIT", "2", "2"),
    ("ZREVRANGEBYSCORE", "z", "(5", "(1", "LIMIT", "-1", "1"),
    ("ZRANGEBYSCORE", "z", "a", "1"), ("ZRANGEBYSCORE", "z", "1", "nan"),
    ("ZRANGEBYSCORE", "z", "1", "2", "LIMIT", "x", "1"), ("ZRANGEBYSCORE", "z", "1", "2", "LIMIT", "1"),
    ("ZRANGEBYSCORE", "z", "1", "2", "REV"), ("ZRANGEBYSCORE", "z", "1", "2", "BYSCORE"),
    ("ZRANGEBYSCORE", "z", "1", "2", "WITHSCORE"), ("ZRANGEBYSCORE", "str", "1", "2"),
    ("ZRANGEBYSCORE", "nokey", "1", "2"), ("ZRANGEBYSCORE", "str", "x", "2"),
    ("ZRANGE", "z", "1", "2", "BYSCORE", "BYLEX"), ("ZRANGE", "z", "1", "2", "BYSCORE", "BYSCORE"),
    ("ZRANGE", "z", "x", "2", "BYSCORE"), ("ZRANGE", "z", "1", "2", "BYSCORE", "LIMIT", "0", "x"),
    ("ZRANGE", "z", "1", "2", "BYSCORE", "LIMIT", "0", "99999999999999999999"),
]
CASES["zrange_bylex"] = [
    ("SET", "str", "v"),
    ("ZADD", "z", "0", "a", "0", "b", "0", "c", "0", "d", "0", "e", "0", "f", "0", "ab", "0", "B"),
    ("ZRANGE", "z", "-", "+", "BYLEX"), ("ZRANGE", "z", "[b", "(e", "BYLEX"),
    ("ZRANGE", "z", "(e", "[b", "BYLEX", "REV"), ("ZRANGE", "z", "+", "-", "BYLEX", "REV", "LIMIT", "1", "3"),
    ("ZRANGE", "z", "-", "+", "BYLEX", "LIMIT", "2", "2"), ("ZRANGE", "z", "-", "+", "BYLEX", "WITHSCORES"),
    ("ZRANGEBYLEX", "z", "-", "+"), ("ZRANGEBYLEX", "z", "[a", "[b"), ("ZRANGEBYLEX", "z", "(a", "(b"),
    ("ZRANGEBYLEX", "z", "-", "(c", "LIMIT", "1", "10"), ("ZRANGEBYLEX", "z", "-", "+", "LIMIT", "-1", "2"),
    ("ZRANGEBYLEX", "z", "-", "+", "LIMIT", "0", "-1"), ("ZRANGEBYLEX", "z", "-", "+", "LIMIT", "8", "1"),
    ("ZRANGEBYLEX", "z", "+", "-"), ("ZRANGEBYLEX", "z", "[z", "+"), ("ZRANGEBYLEX", "z", "-", "[A"),
    ("ZREVRANGEBYLEX", "z", "+", "-"), ("ZREVRANGEBYLEX", "z", "[e", "(b"),
    ("ZREVRANGEBYLEX", "z", "+", "-", "LIMIT", "1", "2"), ("ZREVRANGEBYLEX", "z", "-", "+"),
    ("ZRANGEBYLEX", "z", "a", "+"), ("ZRANGEBYLEX", "z", "-", "b"), ("ZRANGEBYLEX", "z", "", "+"),
    ("ZRANGEBYLEX", "z", "-", "+", "WITHSCORES"), ("ZRANGEBYLEX", "z", "-", "+", "LIMIT", "a", "1"),
    ("ZRANGEBYLEX", "z", "-", "+", "REV"), ("ZRANGEBYLEX", "str", "-", "+"), ("ZRANGEBYLEX", "nokey", "-", "+"),
    ("ZRANGEBYLEX", "str", "x", "+"), ("ZRANGE", "z", "a", "b", "BYLEX"),
]
CASES["zrangestore"] = [
    ("SET", "str", "v"), ("ZADD", "z", "1", "a", "2", "b", "3", "c", "4", "d", "5", "e"),
    ("ZRANGESTORE", "d", "z", "0", "2"), ("ZRANGE", "d", "0", "-1", "WITHSCORES"),
    ("ZRANGESTORE", "d", "z", "0", "-1", "REV"), ("ZRANGE", "d", "0", "-1", "WITHSCORES"),
    ("ZRANGESTORE", "d", "z", "(1", "4", "BYSCORE", "LIMIT", "1", "2"), ("ZRANGE", "d", "0", "-1"),
    ("ZRANGESTORE", "d", "z", "[d", "-", "BYLEX", "REV"), ("ZRANGE", "d", "0", "-1"),
    ("ZRANGESTORE", "d", "z", "5", "10"), ("EXISTS", "d"),
    ("ZRANGESTORE", "str", "z", "0", "0"), ("TYPE", "str"), ("ZRANGE", "str", "0", "-1"),
    ("SET", "str", "v"), ("ZRANGESTORE", "d", "str", "0", "-1"), ("ZRANGESTORE", "d", "nokey", "0", "-1"),
    ("SET", "d", "v", "EX", "100"), ("ZRANGESTORE", "d", "z", "0", "0"), ("TTL", "d"),
    ("ZRANGESTORE", "d", "nokey", "0", "-1"), ("EXISTS", "d"),
    ("ZRANGESTORE", "d", "z", "0", "-1", "WITHSCORES"), ("ZRANGESTORE", "d", "z", "0"),
    ("ZRANGESTORE", "d", "z", "0", "1", "LIMIT", "0", "1"), ("ZRANGESTORE", "z", "z", "1", "2"),
    ("ZRANGE", "z", "0", "-1", "WITHSCORES"),
]
CASES["zrank"] = [
    ("SET", "str", "v"), ("ZADD", "z", "1", "a", "2", "b", "3", "c"),
    ("ZRANK", "z", "a"), ("ZRANK", "z", "c"), ("ZREVRANK", "z", "a"), ("ZREVRANK", "z", "c"),
    ("ZRANK", "z", "nope"), ("ZREVRANK", "z", "nope"), ("ZRANK", "nokey", "a"), ("ZRANK", "str", "a"),
    # WITHSCORE alone is Redis 7.2's (test_zrank_withscore.py); past it both reply the arity error
    ("ZREVRANK", "str", "a"), ("ZRANK", "z", "a", "WITHSCORE", "x"), ("ZREVRANK", "z", "a", "WITHSCORE", "x"),
    ("ZRANK", "z"),
]
CASES["zremrange"] = [
    ("SET", "str", "v"),
    ("ZADD", "z", "1", "a", "2", "b", "3", "c", "4", "d", "5", "e", "6", "f"),
    ("ZREMRANGEBYRANK", "z", "0", "0"), ("ZREMRANGEBYRANK", "z", "-1", "-1"), ("ZRANGE", "z", "0", "-1"),
    ("ZREMRANGEBYRANK", "z", "3", "1"), ("ZREMRANGEBYRANK", "z", "10", "20"),
    ("ZREMRANGEBYRANK", "z", "-100", "0"),
    ("ZRANGE", "z", "0", "-1"), ("ZREMRANGEBYRANK", "z", "x", "1"), ("ZREMRANGEBYRANK", "z", "1"),
    ("ZADD", "z", "1", "a", "2", "b", "6", "f"),
    ("ZREMRANGEBYSCORE", "z", "(1", "3"), ("ZRANGE", "z", "0", "-1"), ("ZREMRANGEBYSCORE", "z", "5", "1"),
    ("ZREMRANGEBYSCORE", "z", "(6", "+inf"), ("ZREMRANGEBYSCORE", "z", "x", "1"),
    ("ZREMRANGEBYSCORE", "z", "-inf", "(5"), ("ZRANGE", "z", "0", "-1", "WITHSCORES"),
    ("ZADD", "l", "0", "a", "0", "b", "0", "c", "0", "d", "0", "e"),
    ("ZREMRANGEBYLEX", "l", "(a", "[c"), ("ZRANGE", "l", "0", "-1"), ("ZREMRANGEBYLEX", "l", "+", "-"),
    ("ZREMRANGEBYLEX", "l", "a", "+"), ("ZREMRANGEBYLEX", "l", "[e", "+"), ("ZREMRANGEBYLEX", "l", "-", "+"),
    ("EXISTS", "l"), ("ZREMRANGEBYSCORE", "z", "-inf", "+inf"), ("EXISTS", "z"),
    ("ZREMRANGEBYRANK", "nokey", "0", "-1"), ("ZREMRANGEBYSCORE", "nokey", "0", "1"),
    ("ZREMRANGEBYLEX", "nokey", "-", "+"), ("ZREMRANGEBYRANK", "str", "0", "-1"),
    ("ZREMRANGEBYSCORE", "str", "0", "1"), ("ZREMRANGEBYLEX", "str", "-", "+"),
    ("ZREMRANGEBYLEX", "str", "x", "+"), ("ZADD", "z", "1", "a"), ("ZREMRANGEBYRANK", "z", "0", "-1"),
    ("EXISTS", "z"),
]

# ---------------------------------------------------------------------- pops
CASES["zpop"] = [
    ("SET", "str", "v"), ("ZADD", "z", "1", "a", "2", "b", "3", "c", "4", "d", "5", "e", "5", "f"),
    ("ZPOPMIN", "z"), ("ZPOPMAX", "z"), ("ZPOPMIN", "z", "1"), ("ZPOPMAX", "z", "2"),
    ("ZPOPMIN", "z", "0"), ("ZPOPMIN", "z", "-1"), ("ZPOPMIN", "z", "x"), ("ZPOPMIN", "z", "1", "2"),
    ("ZPOPMIN", "z", "100"), ("EXISTS", "z"), ("ZPOPMIN", "z"), ("ZPOPMAX", "z", "3"),
    ("ZPOPMIN", "nokey"), ("ZPOPMIN", "nokey", "0"), ("ZPOPMIN", "str"), ("ZPOPMAX", "str", "0"),
    ("ZPOPMAX", "str", "-1"), ("ZPOPMIN",), ("ZADD", "z", "1", "a"), ("ZPOPMAX", "z", "9223372036854775807"),
    ("EXISTS", "z"),
]
CASES["zmpop"] = [
    ("SET", "str", "v"), ("ZADD", "z", "1", "a", "2", "b", "3", "c", "4", "d", "5", "e"),
    ("ZMPOP", "1", "z", "MIN"), ("ZMPOP", "1", "z", "max", "COUNT", "2"),
    ("ZMPOP", "2", "nokey", "z", "MIN", "COUNT", "10"), ("EXISTS", "z"), ("ZMPOP", "1", "z", "MIN"),
    ("ZADD", "z", "1", "a", "2", "b"),
    ("ZMPOP", "0", "z", "MIN"), ("ZMPOP", "-1", "z", "MIN"), ("ZMPOP", "x", "z", "MIN"),
    ("ZMPOP", "2", "z", "MIN"), ("ZMPOP", "1", "z"), ("ZMPOP", "1", "z", "mid"),
    ("ZMPOP", "1", "z", "MIN", "COUNT", "0"), ("ZMPOP", "1", "z", "MIN", "COUNT", "-1"),
    ("ZMPOP", "1", "z", "MIN", "COUNT", "x"), ("ZMPOP", "1", "z", "MIN", "COUNT", "1", "COUNT", "2"),
    ("ZMPOP", "1", "z", "MIN", "COUNT"), ("ZMPOP", "1", "z", "MIN", "foo"),
    ("ZMPOP", "2", "str", "z", "MIN"), ("ZMPOP", "2", "z", "str", "MIN"), ("ZMPOP", "2", "z", "x", "MIN"),
    ("ZMPOP", "3", "z", "x", "MIN"), ("ZMPOP", "1", "nokey", "MAX"),
    ("ZMPOP", "1", "z", "MIN", "COUNT", "9223372036854775807"), ("EXISTS", "z"),
]
CASES["bzpop_immediate"] = [
    ("SET", "str", "v"), ("ZADD", "z", "1", "a", "2", "b", "3", "c", "4", "d"),
    ("ZADD", "y", "10", "x"),
    ("BZPOPMIN", "z", "0"), ("BZPOPMAX", "z", "0"), ("BZPOPMIN", "nokey", "y", "z", "0"),
    ("BZPOPMAX", "nokey", "z", "0.5"), ("BZMPOP", "0", "2", "nokey", "z", "MIN"),
    ("ZADD", "z", "1", "a", "2", "b", "3", "c"),
    ("BZMPOP", "1", "1", "z", "MAX", "COUNT", "2"), ("EXISTS", "z"),
    ("BZPOPMIN", "str", "0"), ("BZPOPMIN", "nokey", "str", "0"), ("BZPOPMIN", "z", "x"),
    ("BZPOPMIN", "z", "-1"), ("BZPOPMIN", "z"), ("BZPOPMAX", "z", "inf"), ("BZPOPMAX", "z", "nan"),
    ("BZMPOP", "x", "1", "z", "MIN"), ("BZMPOP", "-1", "1", "z", "MIN"), ("BZMPOP", "0", "0", "z", "MIN"),
    ("BZMPOP", "0", "1", "z"), ("BZMPOP", "0", "2", "z", "MIN"), ("BZMPOP", "0", "1", "z", "MIN", "COUNT", "0"),
    ("BZMPOP", "0", "1", "str", "MIN"),
    ("MULTI",), ("BZPOPMIN", "nokey", "0"), ("BZPOPMAX", "nokey", "0"), ("BZMPOP", "0", "1", "nokey", "MIN"),
    ("BZPOPMIN", "y", "0"), ("EXEC",),
]

# --------------------------------------------------------------- ZRANDMEMBER
CASES["zrandmember_deterministic"] = [
    ("SET", "str", "v"), ("ZADD", "one", "7", "only"),
    ("ZRANDMEMBER", "one"), ("ZRANDMEMBER", "one", "1"), ("ZRANDMEMBER", "one", "1", "WITHSCORES"),
    ("ZRANDMEMBER", "one", "-3"), ("ZRANDMEMBER", "one", "-3", "WITHSCORES"),
    ("ZRANDMEMBER", "one", "5", "withscores"), ("ZRANDMEMBER", "one", "0"),
    ("ZRANDMEMBER", "one", "0", "WITHSCORES"),
    ("ZRANDMEMBER", "nokey"), ("ZRANDMEMBER", "nokey", "2"), ("ZRANDMEMBER", "nokey", "-2", "WITHSCORES"),
    ("ZRANDMEMBER", "str"), ("ZRANDMEMBER", "str", "2"), ("ZRANDMEMBER", "one", "x"),
    ("ZRANDMEMBER", "one", "1.5"), ("ZRANDMEMBER", "one", "2", "WITHSCORE"),
    ("ZRANDMEMBER", "one", "2", "WITHSCORES", "x"), ("ZRANDMEMBER", "one", "-9223372036854775808"),
    ("ZRANDMEMBER", "one", "-9223372036854775808", "WITHSCORES"),
    ("ZRANDMEMBER", "one", "-9223372036854775807", "WITHSCORES"),
    ("ZRANDMEMBER", "one", "4611686018427387904", "WITHSCORES"),
    ("ZRANDMEMBER", "one", "-4611686018427387904", "WITHSCORES"),
    ("ZRANDMEMBER", "one", "4611686018427387903", "WITHSCORES"),
    ("ZRANDMEMBER", "str", "x"), ("ZRANDMEMBER", "nokey", "x"),
    ("ZADD", "z", "1", "a", "2", "b", "3", "c"),
    sorted_("ZRANDMEMBER", "z", "3"), sorted_("ZRANDMEMBER", "z", "100"),
    sorted_("ZRANDMEMBER", "z", "3", "WITHSCORES"),
]

# --------------------------------------------------------------- set algebra
CASES["zunion_zinter_zdiff"] = [
    ("SET", "str", "v"),
    ("ZADD", "a", "1", "x", "2", "y", "3", "z"), ("ZADD", "b", "10", "y", "20", "z", "30", "w"),
    ("ZADD", "c", "100", "z", "200", "v"),
    ("ZUNION", "2", "a", "b"), ("ZUNION", "2", "a", "b", "WITHSCORES"),
    ("ZUNION", "3", "a", "b", "c", "WITHSCORES", "AGGREGATE", "MAX"),
    ("ZUNION", "3", "a", "b", "c", "WEIGHTS", "1", "2", "-1", "AGGREGATE", "MIN", "WITHSCORES"),
    ("ZUNION", "2", "a", "b", "WEIGHTS", "2", "inf", "WITHSCORES"),
    ("ZUNION", "2", "a", "b", "WEIGHTS", "0", "inf", "WITHSCORES"),
    ("ZUNION", "2", "a", "nokey", "WITHSCORES"), ("ZUNION", "2", "nokey", "nokey2"),
    ("ZUNION", "2", "a", "a", "WITHSCORES"),
    ("ZINTER", "2", "a", "b"), ("ZINTER", "2", "a", "b", "WITHSCORES"),
    ("ZINTER", "3", "a", "b", "c", "WITHSCORES"), ("ZINTER", "2", "b", "a", "AGGREGATE", "MIN", "WITHSCORES"),
    ("ZINTER", "2", "a", "b", "WEIGHTS", "-1", "0.5", "AGGREGATE", "max", "WITHSCORES"),
    ("ZINTER", "2", "a", "nokey"), ("ZINTER", "2", "a", "a", "WITHSCORES"), ("ZINTER", "1", "a"),
    ("ZDIFF", "2", "a", "b"), ("ZDIFF", "2", "a", "b", "WITHSCORES"), ("ZDIFF", "3", "b", "a", "c", "WITHSCORES"),
    ("ZDIFF", "1", "a", "WITHSCORES"), ("ZDIFF", "2", "nokey", "a"), ("ZDIFF", "2", "a", "nokey", "WITHSCORES"),
    ("ZDIFF", "2", "a", "a"),
    ("ZINTERCARD", "2", "a", "b"), ("ZINTERCARD", "2", "a", "b", "LIMIT", "1"),
    ("ZINTERCARD", "2", "a", "b", "LIMIT", "0"), ("ZINTERCARD", "1", "a", "LIMIT", "2"),
    ("ZINTERCARD", "2", "a", "nokey"), ("ZINTERCARD", "2", "a", "b", "LIMIT", "1", "LIMIT", "5"),
]
CASES["set_algebra_errors"] = [
    ("SET", "str", "v"), ("ZADD", "a", "1", "x"), ("ZADD", "b", "2", "x"),
    ("ZUNIONSTORE", "d", "0", "a"), ("ZUNIONSTORE", "d", "-1", "a"), ("ZUNIONSTORE", "d", "x", "a"),
    ("ZUNIONSTORE", "d", "3", "a", "b"), ("ZUNIONSTORE", "d", "2", "a", "b", "WEIGHTS", "1"),
    ("ZUNIONSTORE", "d", "2", "a", "b", "WEIGHTS", "1", "x"),
    ("ZUNIONSTORE", "d", "2", "a", "b", "WEIGHTS", "1", "2", "3"),
    ("ZUNIONSTORE", "d", "2", "a", "b", "AGGREGATE", "foo"), ("ZUNIONSTORE", "d", "2", "a", "b", "AGGREGATE"),
    ("ZUNIONSTORE", "d", "2", "a", "b", "WITHSCORES"), ("ZUNIONSTORE", "d", "2", "a", "str"),
    ("ZUNIONSTORE", "d", "2", "a", "str", "WEIGHTS", "x"),
    ("ZUNIONSTORE", "d", "2", "a", "b", "WEIGHTS", "nan", "1"),
    ("ZUNIONSTORE", "d", "2", "a", "b", "WEIGHTS", "1e400", "1"),
    ("ZUNIONSTORE", "d", "2", "a", "b", "WEIGHTS", " 1", "1"),
    ("ZUNIONSTORE", "d", "1", "a", "WEIGHTS", "2", "WEIGHTS", "3"), ("ZRANGE", "d", "0", "-1", "WITHSCORES"),
    ("ZINTERSTORE", "d", "0", "a"), ("ZINTERSTORE", "d", "2", "a"), ("ZINTERSTORE", "d", "1", "str"),
    ("ZDIFFSTORE", "d", "0", "a"), ("ZDIFFSTORE", "d", "2", "a", "b", "WITHSCORES"),
    ("ZDIFFSTORE", "d", "2", "a", "b", "WEIGHTS", "1", "2"),
    ("ZDIFFSTORE", "d", "2", "a", "b", "AGGREGATE", "SUM"),
    ("ZUNION", "0", "a"), ("ZUNION", "1", "str"), ("ZINTER", "0", "a"), ("ZINTER", "2", "a"),
    ("ZDIFF", "0", "a"), ("ZDIFF", "2", "a", "b", "WEIGHTS", "1", "2"),
    ("ZDIFF", "2", "a", "b", "AGGREGATE", "SUM"),
    ("ZUNION", "1", "a", "WITHSCORES", "WITHSCORES"), ("ZUNION", "1", "a", "FOO"),
    ("ZINTERCARD", "0", "a"), ("ZINTERCARD", "-1", "a"), ("ZINTERCARD", "x", "a"),
    ("ZINTERCARD", "3", "a", "b"),
    ("ZINTERCARD", "2", "a", "b", "LIMIT", "-1"), ("ZINTERCARD", "2", "a", "b", "LIMIT", "x"),
    ("ZINTERCARD", "2", "a", "b", "WITHSCORES"), ("ZINTERCARD", "2", "a", "b", "WEIGHTS", "1", "1"),
    ("ZINTERCARD", "1", "str"), ("ZINTERCARD", "2", "a", "b", "LIMIT"), ("ZUNIONSTORE", "d"),
    ("ZINTERCARD", "1"),
]
CASES["set_algebra_store"] = [
    ("SET", "str", "v"),
    ("ZADD", "a", "1", "x", "2", "y", "3", "z"), ("ZADD", "b", "10", "y", "20", "z", "30", "w"),
    ("ZUNIONSTORE", "d", "2", "a", "b"), ("ZRANGE", "d", "0", "-1", "WITHSCORES"),
    ("ZINTERSTORE", "d", "2", "a", "b", "WEIGHTS", "2", "3"), ("ZRANGE", "d", "0", "-1", "WITHSCORES"),
    ("ZDIFFSTORE", "d", "2", "b", "a"), ("ZRANGE", "d", "0", "-1", "WITHSCORES"),
    ("ZINTERSTORE", "d", "2", "a", "nokey"), ("EXISTS", "d"),
    ("ZUNIONSTORE", "str", "1", "a"), ("TYPE", "str"),
    ("SET", "d", "v", "EX", "100"), ("ZUNIONSTORE", "d", "1", "a"), ("TTL", "d"),
    ("ZUNIONSTORE", "a", "2", "a", "b"), ("ZRANGE", "a", "0", "-1", "WITHSCORES"),
    ("ZINTERSTORE", "a", "2", "a", "b", "AGGREGATE", "MAX"), ("ZRANGE", "a", "0", "-1", "WITHSCORES"),
    ("ZDIFFSTORE", "a", "2", "a", "a"), ("EXISTS", "a"),
    ("ZADD", "inf", "inf", "p", "-inf", "n"), ("ZADD", "ninf", "-inf", "p", "inf", "n"),
    ("ZUNIONSTORE", "s", "2", "inf", "ninf"), ("ZRANGE", "s", "0", "-1", "WITHSCORES"),
    ("ZINTERSTORE", "s", "2", "inf", "ninf", "AGGREGATE", "MIN"), ("ZRANGE", "s", "0", "-1", "WITHSCORES"),
    ("ZUNIONSTORE", "s", "1", "inf", "WEIGHTS", "0"), ("ZRANGE", "s", "0", "-1", "WITHSCORES"),
    ("ZADD", "f1", "0.1", "m"), ("ZADD", "f2", "0.2", "m", "1", "q"), ("ZADD", "f3", "0.3", "m", "1", "q", "2", "r"),
    ("ZUNION", "3", "f3", "f1", "f2", "WITHSCORES"), ("ZUNION", "3", "f1", "f2", "f3", "WITHSCORES"),
    ("ZINTER", "3", "f3", "f2", "f1", "WITHSCORES"),
]

# ------------------------------------------------- generic commands, MULTI, WATCH
CASES["generic_on_zsets"] = [
    ("ZADD", "z", "1", "a", "2", "b", "3", "c"),
    ("TYPE", "z"), ("EXISTS", "z"), ("COPY", "z", "z2"), ("ZRANGE", "z2", "0", "-1", "WITHSCORES"),
    ("ZADD", "z2", "9", "a"), ("ZSCORE", "z", "a"), ("RENAME", "z2", "z3"), ("ZRANGE", "z3", "0", "-1"),
    ("EXPIRE", "z3", "100"), ("TTL", "z3"), ("ZADD", "z3", "5", "x"), ("TTL", "z3"),
    ("ZREM", "z3", "a", "b", "c", "x"), ("TTL", "z3"), ("EXISTS", "z3"),
    ("DEL", "z"), ("EXISTS", "z"), ("MOVE", "z3", "1"), ("ZADD", "m", "1", "a"), ("MOVE", "m", "1"),
    ("SELECT", "1"), ("ZRANGE", "m", "0", "-1"), ("FLUSHDB",), ("SELECT", "0"),
    ("ZADD", "z", "1", "a"), ("GET", "z"), ("INCR", "z"), ("APPEND", "z", "x"), ("SET", "z", "v"),
    ("TYPE", "z"), ("ZADD", "z", "1", "a"),
]
CASES["multi_exec"] = [
    ("MULTI",), ("ZADD", "z", "1", "a", "2", "b"), ("ZINCRBY", "z", "5", "a"),
    ("ZRANGE", "z", "0", "-1", "WITHSCORES"), ("ZADD", "z", "x", "a"), ("ZPOPMIN", "z"), ("ZCARD", "z"),
    ("EXEC",), ("MULTI",), ("ZADD", "z"), ("EXEC",),
]
CASES["watch"] = (
    [("ZADD", "z", "1", "a")]
    + watch_case(("ZADD", "z", "NX", "1", "a")) + watch_case(("ZADD", "z", "1", "a"))
    + watch_case(("ZADD", "z", "2", "a")) + watch_case(("ZINCRBY", "z", "1", "b"))
    + watch_case(("ZREM", "z", "nope")) + watch_case(("ZREM", "z", "b"))
    + watch_case(("ZPOPMIN", "z", "0")) + watch_case(("ZREMRANGEBYSCORE", "z", "100", "200"))
    + watch_case(("ZADD", "z", "1", "q")) + watch_case(("ZPOPMAX", "z"))
    + watch_case(("ZUNIONSTORE", "d", "1", "z"), key="d") + watch_case(("ZINTERSTORE", "d", "1", "nokey"), key="d")
    + watch_case(("ZINTERSTORE", "d", "1", "nokey"), key="d")
    + watch_case(("ZRANGESTORE", "d", "z", "0", "-1"), key="d") + watch_case(("ZMPOP", "1", "z", "MIN"))
    + watch_case(("ZREMRANGEBYRANK", "z", "0", "-1"), setup=[("ZADD", "z", "1", "q")])
    + watch_case(("ZRANGE", "z", "0", "-1"), setup=[("ZADD", "z", "1", "q")])
)
CASES["arity"] = [
    ("ZADD", "z"), ("ZINCRBY", "z", "1"), ("ZREM", "z"), ("ZSCORE", "z"), ("ZMSCORE", "z"), ("ZCARD",),
    ("ZCOUNT", "z", "1"), ("ZLEXCOUNT", "z", "-"), ("ZRANGE", "z", "0"), ("ZRANGESTORE", "d", "z", "0"),
    ("ZRANGEBYSCORE", "z", "0"), ("ZREVRANGEBYSCORE", "z", "0"), ("ZRANGEBYLEX", "z", "-"),
    ("ZREVRANGEBYLEX", "z", "+"), ("ZREVRANGE", "z", "0"), ("ZRANK", "z"), ("ZREVRANK", "z"),
    ("ZREMRANGEBYSCORE", "z", "0"), ("ZREMRANGEBYRANK", "z", "0"), ("ZREMRANGEBYLEX", "z", "-"),
    ("ZPOPMIN",), ("ZPOPMAX",), ("BZPOPMIN", "z"), ("BZPOPMAX", "z"), ("ZMPOP", "1", "z"),
    ("BZMPOP", "0", "1", "z"), ("ZRANDMEMBER",), ("ZUNIONSTORE", "d", "1"), ("ZINTERSTORE", "d", "1"),
    ("ZDIFFSTORE", "d", "1"), ("ZUNION", "1"), ("ZINTER", "1"), ("ZDIFF", "1"), ("ZINTERCARD", "1"),
    ("ZSCAN", "z"), ("zadd",), ("ZCOUNT", "z", "1", "2", "3"),
]
CASES["zscan_small_and_errors"] = [
    ("SET", "str", "v"), ("ZADD", "z", "1", "a", "2", "b", "-0", "c", "0.1", "d"),
    ("ZSCAN", "nokey", "0"), ("ZSCAN", "str", "0"), ("ZSCAN", "z", "x"), ("ZSCAN", "z", "-1x"),
    ("ZSCAN", "str", "x"), ("ZSCAN", "z", "0", "COUNT", "0"), ("ZSCAN", "z", "0", "COUNT", "x"),
    ("ZSCAN", "z", "0", "COUNT"), ("ZSCAN", "z", "0", "TYPE", "zset"), ("ZSCAN", "z", "0", "FOO", "bar"),
    ("ZSCAN", "nokey", "0", "FOO"), ("ZSCAN", "nokey", "x"),
]

# ------------------------------------------------------------ fixed thresholds
FIXED_CASES["encoding_conversions"] = thresholds("4", "8") + [
    ("ZADD", "z", "1", "a", "2", "b", "3", "c", "4", "d"), ("OBJECT", "ENCODING", "z"),
    ("ZADD", "z", "5", "a"), ("OBJECT", "ENCODING", "z"), ("ZADD", "z", "5", "e"), ("OBJECT", "ENCODING", "z"),
    ("ZREM", "z", "a", "b", "c", "d"), ("OBJECT", "ENCODING", "z"), ("ZRANGE", "z", "0", "-1", "WITHSCORES"),
    ("ZADD", "l", "1", "12345678"), ("OBJECT", "ENCODING", "l"), ("ZADD", "l", "1", "123456789"),
    ("OBJECT", "ENCODING", "l"), ("ZADD", "l2", "1", "123456789"), ("OBJECT", "ENCODING", "l2"),
    ("ZADD", "dup", "1", "a", "1", "a", "1", "a", "1", "a", "1", "a"), ("OBJECT", "ENCODING", "dup"),
    ("ZADD", "many", "1", "a", "2", "b", "3", "c", "4", "d", "5", "e"), ("OBJECT", "ENCODING", "many"),
    ("ZINCRBY", "zi", "1", "123456789"), ("OBJECT", "ENCODING", "zi"),
    ("ZADD", "lp", "1", "a", "2", "b"), ("CONFIG", "SET", "zset-max-listpack-entries", "1"),
    ("ZADD", "lp", "3", "a"), ("OBJECT", "ENCODING", "lp"), ("ZADD", "lp", "3", "c"), ("OBJECT", "ENCODING", "lp"),
    ("CONFIG", "SET", "zset-max-listpack-entries", "0"), ("ZADD", "zero", "1", "a"), ("OBJECT", "ENCODING", "zero"),
    ("CONFIG", "SET", "zset-max-listpack-entries", "4"), ("CONFIG", "SET", "zset-max-listpack-value", "0"),
    ("ZADD", "v0", "1", ""), ("OBJECT", "ENCODING", "v0"), ("ZADD", "v0", "1", "a"), ("OBJECT", "ENCODING", "v0"),
    ("COPY", "z", "zc"), ("OBJECT", "ENCODING", "zc"), ("COPY", "dup", "dupc"), ("OBJECT", "ENCODING", "dupc"),
]
FIXED_CASES["result_encodings"] = thresholds("4", "8") + [
    ("ZADD", "src", "1", "a", "2", "b", "3", "c", "4", "d", "5", "e", "6", "f"), ("OBJECT", "ENCODING", "src"),
    ("ZRANGESTORE", "d1", "src", "0", "2"), ("OBJECT", "ENCODING", "d1"),
    ("ZRANGESTORE", "d2", "src", "0", "-1"), ("OBJECT", "ENCODING", "d2"),
    ("ZUNIONSTORE", "u1", "1", "src"), ("OBJECT", "ENCODING", "u1"),
    ("ZADD", "small", "1", "a", "2", "b"), ("OBJECT", "ENCODING", "small"),
    ("ZINTERSTORE", "u3", "2", "small", "src"), ("OBJECT", "ENCODING", "u3"),
    ("ZDIFFSTORE", "u4", "2", "src", "small"), ("OBJECT", "ENCODING", "u4"),
    ("ZUNIONSTORE", "u5", "1", "small"), ("OBJECT", "ENCODING", "u5"),
    ("ZADD", "lv", "1", "a", "2", "bbbbbbbbb"), ("OBJECT", "ENCODING", "lv"),
    ("ZRANGESTORE", "d3", "lv", "0", "0"), ("OBJECT", "ENCODING", "d3"),
    ("ZRANGESTORE", "d4", "lv", "0", "-1"), ("OBJECT", "ENCODING", "d4"),
    ("ZUNIONSTORE", "d5", "1", "lv"), ("OBJECT", "ENCODING", "d5"),
    ("ZINTERSTORE", "d6", "1", "lv"), ("OBJECT", "ENCODING", "d6"),
    ("ZRANGESTORE", "d9", "src", "2", "4", "BYSCORE"), ("OBJECT", "ENCODING", "d9"),
    ("ZRANGESTORE", "d10", "src", "-inf", "+inf", "BYSCORE"), ("OBJECT", "ENCODING", "d10"),
    ("ZRANGESTORE", "d11", "src", "+inf", "-inf", "BYSCORE", "REV", "LIMIT", "0", "4"),
    ("OBJECT", "ENCODING", "d11"), ("ZRANGESTORE", "d12", "lv", "-", "+", "BYLEX"), ("OBJECT", "ENCODING", "d12"),
    ("ZRANGESTORE", "d13", "lv", "-", "(b", "BYLEX"), ("OBJECT", "ENCODING", "d13"),
    ("ZADD", "src", "7", "abcdefghijk"), ("ZINTERSTORE", "d14", "2", "src", "src"), ("OBJECT", "ENCODING", "d14"),
    ("ZREMRANGEBYSCORE", "d14", "1", "5"), ("OBJECT", "ENCODING", "d14"),
    ("CONFIG", "SET", "zset-max-listpack-entries", "0"),
    ("ZUNIONSTORE", "d7", "1", "small"), ("OBJECT", "ENCODING", "d7"),
    ("ZRANGESTORE", "d8", "small", "0", "-1"), ("OBJECT", "ENCODING", "d8"),
]
# the listpack keeps scores as text: integers as integers (-0 -> 0)
FIXED_CASES["listpack_score_text"] = DEFAULTS + [("ZADD", "z", f, "m%d" % i) for i, f in enumerate(FLOATS)] + [
    ("OBJECT", "ENCODING", "z"), ("ZSCAN", "z", "0"), ("ZSCAN", "z", "0", "MATCH", "m1*"),
    ("ZSCAN", "z", "0", "COUNT", "1"), ("ZSCAN", "z", "18446744073709551615"),
    ("ZRANGE", "z", "0", "-1", "WITHSCORES"), ("ZSCORE", "z", "m2"),
    ("CONFIG", "SET", "zset-max-listpack-entries", "0"), ("ZADD", "s", "-0", "a"), ("ZSCORE", "s", "a"),
    ("ZRANGESTORE", "lp", "s", "0", "-1"), ("CONFIG", "SET", "zset-max-listpack-entries", "128"),
    ("ZRANGESTORE", "lp", "s", "0", "-1"), ("OBJECT", "ENCODING", "lp"), ("ZSCORE", "lp", "a"),
    ("ZUNIONSTORE", "lp2", "1", "s"), ("ZSCORE", "lp2", "a"), ("ZADD", "t", "-0", "a"), ("ZSCORE", "t", "a"),
    ("ZADD", "t", "INCR", "-0", "b"), ("ZSCORE", "t", "b"),
]
FIXED_CASES["long_members_and_big_sets"] = DEFAULTS + [
    ("ZADD", "big") + tuple(x for i in range(300) for x in (str(i % 17), "member:%03d" % i)),
    ("OBJECT", "ENCODING", "big"), ("ZCARD", "big"), ("ZRANGE", "big", "100", "110", "WITHSCORES"),
    ("ZRANK", "big", "member:250"), ("ZREVRANK", "big", "member:250"), ("ZCOUNT", "big", "3", "(9"),
    ("ZRANGEBYSCORE", "big", "5", "5", "LIMIT", "3", "4"), ("ZREMRANGEBYRANK", "big", "10", "200"),
    ("ZCARD", "big"), ("ZRANGE", "big", "0", "-1"),
    ("ZADD", "long", "1", "x" * 65), ("OBJECT", "ENCODING", "long"), ("ZADD", "long", "2", "y" * 70000),
    ("ZRANGE", "long", "0", "-1", "WITHSCORES"), ("ZSCORE", "long", "y" * 70000),
    ("ZADD", "lp", "1", "y" * 64, "2", "x" * 16000), ("OBJECT", "ENCODING", "lp"),
]

# ------------------------------------------------ plain sets as algebra inputs
# (need ferry's SADD: skipped until the set module is merged)
SET_INPUT_CASES = {
    "sets_as_inputs": [
        ("SADD", "iset", "1", "2", "3"), ("SADD", "hset", "a", "b", "x", "1"),
        ("ZADD", "z", "5", "a", "7", "1", "9", "zz"),
        ("ZUNION", "2", "z", "iset", "WITHSCORES"), ("ZUNION", "3", "z", "iset", "hset", "WITHSCORES"),
        ("ZUNION", "2", "hset", "iset", "WEIGHTS", "2", "3", "WITHSCORES"),
        ("ZINTER", "2", "z", "hset", "WITHSCORES"), ("ZINTER", "2", "hset", "z", "AGGREGATE", "MAX", "WITHSCORES"),
        ("ZINTER", "2", "iset", "hset", "WITHSCORES"), ("ZDIFF", "2", "hset", "z", "WITHSCORES"),
        ("ZDIFF", "2", "z", "hset", "WITHSCORES"), ("ZDIFF", "2", "iset", "z"),
        ("ZINTERCARD", "2", "z", "hset"), ("ZINTERCARD", "3", "z", "hset", "iset"),
        ("ZINTERCARD", "2", "iset", "hset", "LIMIT", "1"),
        ("ZUNIONSTORE", "d", "2", "iset", "hset"), ("ZRANGE", "d", "0", "-1", "WITHSCORES"),
        ("OBJECT", "ENCODING", "d"), ("ZINTERSTORE", "d", "2", "hset", "z", "WEIGHTS", "0.5", "2"),
        ("ZRANGE", "d", "0", "-1", "WITHSCORES"), ("ZDIFFSTORE", "d", "2", "iset", "hset"),
        ("ZRANGE", "d", "0", "-1", "WITHSCORES"), ("ZUNIONSTORE", "iset", "1", "iset"), ("TYPE", "iset"),
        ("ZRANGE", "iset", "0", "-1", "WITHSCORES"), ("ZINTERSTORE", "d", "1", "emptyset"),
        ("SADD", "big") + tuple("m%d" % i for i in range(200)),
        ("ZUNIONSTORE", "d", "1", "big"), ("OBJECT", "ENCODING", "d"), ("ZCARD", "d"),
        ("ZINTERCARD", "2", "big", "d", "LIMIT", "50"),
        ("ZRANGE", "hset", "0", "-1"), ("ZRANGESTORE", "d", "hset", "0", "-1"), ("ZSCORE", "hset", "a"),
    ],
}
