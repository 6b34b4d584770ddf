"""Seeded random programs over every type's commands, for the keyspace
notification differential test (test_diff_notify.py, notifykit.py).

A few key names shared by all types, so commands meet missing keys, keys of
another type (WRONGTYPE), keys that empty out and go ("del"), keys that are
created ("new"), short TTLs that lapse before the next access (lazy
"expired", with active expiry off), other databases (SELECT, MOVE, COPY DB,
SWAPDB), MULTI/EXEC and scripts. Commands whose effect is random (SPOP of
part of a set, SRANDMEMBER ...) are left out or used where they are
deterministic (SPOP of more members than any set holds).
"""
from __future__ import annotations

from diffkit import pick_weighted

KEYS = ["a", "b", "c", "d", "e", "f"]
MEMBERS = ["x", "y", "z", "1", "2", "3"]


def key(r):
    return r.choice(KEYS)


def mem(r):
    return r.choice(MEMBERS)


def num(r, lo=-3, hi=6):
    return str(r.randint(lo, hi))


# ------------------------------------------------------------------ strings
def g_string(r):
    k = key(r)
    opts = r.choice([[], ["EX", "100"], ["PX", "100000"], ["KEEPTTL"], ["NX"], ["XX"], ["GET"], ["XX", "GET"],
                     ["PXAT", "1"]])
    return r.choice([
        ["SET", k, num(r)] + opts, ["SETNX", k, "v"], ["SETEX", k, "100", "v"], ["PSETEX", k, "100000", "v"],
        ["GETSET", k, "v"], ["GETDEL", k], ["GETEX", k] + r.choice([[], ["EX", "50"], ["PERSIST"], ["PXAT", "1"]]),
        ["MSET", k, "1", key(r), "2"], ["MSETNX", k, "1", key(r), "2"], ["APPEND", k, r.choice(["", "ab"])],
        ["SETRANGE", k, num(r, 0, 4), r.choice(["", "zz"])], ["INCR", k], ["DECR", k], ["INCRBY", k, num(r)],
        ["DECRBY", k, num(r)], ["INCRBYFLOAT", k, "0.5"], ["GET", k], ["MGET", k, key(r)], ["STRLEN", k],
        ["GETRANGE", k, "0", "-1"], ["LCS", k, key(r)],
    ])


# --------------------------------------------------------------------- keys
def g_keys(r):
    k = key(r)
    return r.choice([
        ["DEL", k, key(r)], ["UNLINK", k], ["EXISTS", k, key(r)], ["TOUCH", k], ["TYPE", k], ["RENAME", k, key(r)],
        ["RENAMENX", k, key(r)], ["COPY", k, key(r)], ["COPY", k, key(r), "REPLACE"], ["COPY", k, k, "DB", "1"],
        ["MOVE", k, "1"], ["EXPIRE", k, r.choice(["100", "0", "-1"])], ["PEXPIRE", k, r.choice(["50000", "200000"]), r.choice(["NX", "XX", "GT", "LT"])],
        ["EXPIREAT", k, r.choice(["1", "99999999999"])], ["PERSIST", k],
        ["OBJECT", "ENCODING", k], ["DBSIZE"],
    ])


def g_db(r):
    return r.choice([["SELECT", "1"], ["SELECT", "0"], ["SWAPDB", "0", "1"], ["FLUSHDB"]])


def g_lapse(r):
    """A TTL that is over by the next step (lazy expiry on next access)."""
    k = key(r)
    return r.choice([[["PEXPIRE", k, "5"], ["@sleep", 0.012]], [["SET", k, "v", "PX", "5"], ["@sleep", 0.012]],
                     [["PSETEX", k, "5", "v"], ["@sleep", 0.012]]])


# -------------------------------------------------------------------- lists
def g_list(r):
    k = key(r)
    return r.choice([
        ["LPUSH", k, mem(r), mem(r)], ["RPUSH", k, mem(r)], ["LPUSHX", k, mem(r)], ["RPUSHX", k, mem(r)],
        ["LPOP", k], ["RPOP", k, r.choice(["0", "1", "5"])], ["LINSERT", k, r.choice(["BEFORE", "AFTER"]), mem(r), "i"],
        ["LSET", k, num(r, -2, 2), "s"], ["LREM", k, num(r, -1, 1), mem(r)], ["LTRIM", k, num(r, 0, 2), num(r, -1, 3)],
        ["LMOVE", k, key(r), r.choice(["LEFT", "RIGHT"]), r.choice(["LEFT", "RIGHT"])], ["RPOPLPUSH", k, key(r)],
        ["LMPOP", "2", k, key(r), r.choice(["LEFT", "RIGHT"]), "COUNT", num(r, 1, 3)],
        ["BLPOP", k, key(r), "0.01"], ["BRPOP", k, "0.01"], ["BLMOVE", k, key(r), "LEFT", "LEFT", "0.01"],
        ["BLMPOP", "0.01", "1", k, "RIGHT"], ["LRANGE", k, "0", "-1"], ["LLEN", k], ["LINDEX", k, "0"], ["LPOS", k, mem(r)],
    ])


# ------------------------------------------------------------------- hashes
def g_hash(r):
    k = key(r)
    return r.choice([
        ["HSET", k, mem(r), "v", mem(r), "w"], ["HMSET", k, mem(r), "v"], ["HSETNX", k, mem(r), "v"],
        ["HDEL", k, mem(r), mem(r)], ["HINCRBY", k, mem(r), num(r)], ["HINCRBYFLOAT", k, mem(r), "1.5"],
        ["HGET", k, mem(r)], ["HMGET", k, mem(r)], ["HGETALL", k], ["HLEN", k], ["HEXISTS", k, mem(r)],
        ["HSTRLEN", k, mem(r)], ["HKEYS", k],
    ])


# --------------------------------------------------------------------- sets
def g_set(r):
    k = key(r)
    return r.choice([
        ["SADD", k, mem(r), mem(r)], ["SREM", k, mem(r), mem(r)], ["SMOVE", k, key(r), mem(r)],
        ["SPOP", k, "100"], ["SINTERSTORE", k, key(r), key(r)], ["SUNIONSTORE", k, key(r), key(r)],
        ["SDIFFSTORE", k, key(r), key(r)], ["SMEMBERS", k], ["SISMEMBER", k, mem(r)], ["SCARD", k],
        ["SINTER", k, key(r)], ["SUNION", k, key(r)], ["SDIFF", k, key(r)], ["SINTERCARD", "2", k, key(r)],
    ])


# ------------------------------------------------------------- sorted sets
def g_zset(r):
    k = key(r)
    flags = r.choice([[], ["NX"], ["XX"], ["GT"], ["LT"], ["CH"], ["XX", "CH"]])
    return r.choice([
        ["ZADD", k] + flags + [num(r), mem(r), num(r), mem(r)], ["ZADD", k, "INCR", num(r), mem(r)],
        ["ZINCRBY", k, num(r), mem(r)], ["ZREM", k, mem(r), mem(r)], ["ZREMRANGEBYSCORE", k, num(r), num(r)],
        ["ZREMRANGEBYRANK", k, num(r, -2, 1), num(r, -1, 2)], ["ZREMRANGEBYLEX", k, "[1", "[y"],
        ["ZPOPMIN", k], ["ZPOPMAX", k, num(r, 0, 3)], ["ZMPOP", "2", k, key(r), r.choice(["MIN", "MAX"]), "COUNT", "2"],
        ["BZPOPMIN", k, "0.01"], ["BZMPOP", "0.01", "1", k, "MAX"], ["ZRANGESTORE", k, key(r), "0", num(r, -1, 2)],
        ["ZUNIONSTORE", k, "2", key(r), key(r)], ["ZINTERSTORE", k, "2", key(r), key(r)],
        ["ZDIFFSTORE", k, "2", key(r), key(r)], ["ZRANGE", k, "0", "-1", "WITHSCORES"], ["ZSCORE", k, mem(r)],
        ["ZCARD", k], ["ZRANK", k, mem(r)], ["ZUNION", "2", k, key(r)],
    ])


def g_multi(r):
    body = [pick_weighted(r, SIMPLE)(r) for _ in range(r.randint(1, 4))]
    body = [s for s in body if s[0] not in ("SCAN", "SMEMBERS", "SUNION", "SDIFF", "SINTER", "HGETALL", "HKEYS")]
    return [["MULTI"]] + body + [["EXEC"]]


def g_script(r):
    k1, k2 = key(r), key(r)
    return r.choice([
        ["EVAL", "redis.call('incr', KEYS[1]); return redis.call('del', KEYS[2])", "2", k1, k2],
        ["EVAL", "return redis.pcall('lpush', KEYS[1], 'e')", "1", k1],
        ["EVAL", "return redis.call('exists', KEYS[1])", "1", k1],
    ])


SIMPLE = [(5, g_string), (4, g_keys), (5, g_list), (4, g_hash), (4, g_set), (5, g_zset)]
ALL = SIMPLE + [(1, g_db), (1.5, g_lapse), (0.7, g_multi), (0.7, g_script)]


def random_program(r, n):
    """About n steps (a generator may give several)."""
    steps = []
    while len(steps) < n:
        s = pick_weighted(r, ALL)(r)
        if s and isinstance(s[0], list):
            steps.extend(tuple(x) for x in s)
        else:
            steps.append(tuple(s))
    return steps
