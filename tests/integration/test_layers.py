"""The layering of src/ (README, Design): a source file includes headers of
its own layer or of lower ones, except for the includes listed in KNOWN
below, each with the reason it exists. A new upward include fails here:
either the code moves down, a hook goes through server/registry.c, or the
exception is added to KNOWN with its reason.

No server is started; this reads the sources.
"""
import os
import re

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
LAYERS = ["base", "keyspace", "io", "commands", "persist", "repl", "cluster", "script", "server"]

# Headers whose module has no .c of the same name: the layer they belong to.
HEADER_LAYER = {
    "span": "base", "config_internal": "server", "config_defs": "server", "persist": "persist",
    "script": "script", "registry": "server", "cmd_set": "commands", "cmd_zset": "commands",
    "cmd_expire": "commands", "repl_int": "repl", "repl_backlog": "repl",
}

# (file, header): why the upward include is there.
KNOWN = {
    # the server state: clock, counters and the configuration in force
    **{(f, "server"): "srv" for f in (
        "db.c t_hash.c t_list.c t_set.c t_zset.c client.c client_evict.c net.c outbuf.c outlimit.c reply.c aside.c "
        "blocking.c cmd_conn.c cmd_debug.c cmd_lolwut.c cmd_dump.c cmd_expire.c cmd_hash.c cmd_keys.c cmd_list.c cmd_server.c cmd_set.c "
        "cmd_set_ops.c cmd_string.c cmd_zset.c cmd_zset_pop.c cmd_zset_store.c command.c command_info.c multi.c "
        "propagate.c pubsub.c tracking.c tracking_cmd.c monitor.c aof.c aof_load.c cmd_persist.c rdb.c rdb_value.c cmd_function.c cmd_script.c "
        "script_lua.c pause.c lazyfree.c cmd_stream.c cmd_stream_cg.c cmd_stream_info.c cmd_stream_read.c cmd_bitops.c cmd_sort.c cmd_lcs.c cmd_hll.c cmd_geo_search.c "
        "cmd_module.c tls.c tls_off.c").split()},
    **{(f, "config"): "configuration values read by name" for f in (
        "client_evict.c outlimit.c cmd_debug.c aof.c cmd_persist.c rdb.c rdb_value.c script_lua.c").split()},
    ("tls.c", "config"): "the tls-* settings by name", ("net.c", "config"): "tls-replication and tls-cluster by name",
    # the io layer hands every parsed request to the dispatcher
    ("client.c", "command"): "dispatch", ("client.c", "blocking"): "blocked clients",
    ("client.c", "multi"): "transaction state freed with the client",
    ("client.c", "pubsub"): "subscriptions freed with the client",
    ("client.c", "tracking"): "client-side caching state freed with the client, CLIENT LIST redir=",
    ("client.c", "monitor"): "a monitor leaves the monitors when freed",
    ("client.c", "latency"): "batch sizes recorded per pass",
    ("reply.c", "command"): "error statistics per command",
    # keys touched and deleted by the keyspace wake WATCH and count as misses
    ("db.c", "multi"): "touch_watched_key", ("evict.c", "multi"): "touch_watched_key",
    ("evict.c", "command"): "a command's deny-oom test", ("evict.c", "client"): "client memory counts",
    ("evict.c", "event"): "the time budget of an eviction run",
    # commands that drive persistence and the server
    ("command.c", "aof"): "MISCONF after an AOF write error", ("command.c", "persist"): "MISCONF after a failed save",
    ("command.c", "latency"): "command timing", ("cmd_debug.c", "aof"): "DEBUG LOADAOF",
    ("cmd_server.c", "persist"): "SHUTDOWN saves", ("cmd_debug.c", "persist"): "DEBUG RELOAD",
    ("cmd_persist.c", "supervise"): "systemd hears STOPPING=1 and the final save's STATUS from the shutdown's first step",
    ("cmd_server.c", "info"): "INFO, MEMORY STATS and DOCTOR", ("cmd_debug.c", "info"): "DEBUG CHANGE-REPL-ID",
    ("cmd_dump.c", "rdb"): "DUMP/RESTORE payloads are RDB values", ("cmd_dump.c", "rdb_io"): "the same",
    ("cmd_dump.c", "rdb_value"): "the same",
    ("cmd_migrate.c", "rdb"): "MIGRATE sends DUMP payloads", ("cmd_migrate.c", "rdb_io"): "the same",
    ("cmd_migrate.c", "rdb_value"): "the same", ("cmd_migrate.c", "server"): "srv: the clock, dirty",
    # replication: the clock, the role flags the dispatcher and the keyspace read, settings by name
    **{(f, "server"): "srv: the clock, srv.repl_* (role, link to the primary)" for f in (
        "cmd_repl.c failover.c primary.c rdb_pipe.c repl.c replica.c").split()},
    **{(f, "config"): "replication settings (repl-*, replica-*) by name" for f in (
        "primary.c repl.c replica.c").split()},
    # ACL: the clients of a user, requirepass, acl-pubsub-default and acllog-max-len
    ("acl.c", "server"): "srv.clients, requirepass mirrored into the default user",
    ("acl_rules.c", "server"): "acl-pubsub-default", ("acl_rules.c", "config"): "acl-pubsub-default by name",
    ("acl_log.c", "server"): "acllog-max-len, the script's caller", ("acl_log.c", "config"): "acllog-max-len by name",
    # cluster mode: the clock, the listeners' ports and bind addresses, the cluster-* settings by name
    **{(f, "server"): "srv: clock, ports, bind addresses, the event loop" for f in (
        "cluster.c cluster_bus.c cluster_conf.c cluster_failover.c cluster_gossip.c cluster_redirect.c cmd_cluster.c "
        "cmd_cluster_view.c").split()},
    **{(f, "config"): "cluster-* settings by name" for f in (
        "cluster.c cluster_bus.c cluster_conf.c cluster_failover.c cluster_gossip.c cluster_redirect.c cmd_cluster.c "
        "cmd_cluster_view.c").split()},
}


def layer_of_modules():
    mod = dict(HEADER_LAYER)
    for layer in LAYERS:
        for f in os.listdir(os.path.join(ROOT, "src", layer)):
            if f.endswith(".c"):
                mod[f[:-2]] = layer
    return mod


def upward_includes():
    mod = layer_of_modules()
    found = {}
    for layer in LAYERS:
        d = os.path.join(ROOT, "src", layer)
        for f in sorted(os.listdir(d)):
            if not f.endswith(".c"):
                continue
            with open(os.path.join(d, f)) as fh:
                for h in re.findall(r'#include "([a-z0-9_]+)\.h"', fh.read()):
                    hl = mod.get(h)
                    if hl and LAYERS.index(hl) > LAYERS.index(layer):
                        found[(f, h)] = (layer, hl)
    return found


def test_src_is_only_layer_folders():
    entries = sorted(os.listdir(os.path.join(ROOT, "src")))
    assert entries == sorted(LAYERS), "src/ holds %s; every source file belongs in a layer folder" % entries


def test_no_new_upward_include():
    new = {k: v for k, v in upward_includes().items() if k not in KNOWN}
    assert not new, "upward includes (file, header): (its layer, the header's): %s" % new


def test_known_exceptions_still_exist():
    stale = sorted(set(KNOWN) - set(upward_includes()))
    assert not stale, "KNOWN lists includes that are gone (remove them): %s" % stale
