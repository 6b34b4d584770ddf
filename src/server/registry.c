/* registry.c - the start-up registry (see registry.h).
 *
 * Why one explicit list: the keyspace frees, copies and measures values
 * through hooks each type registers, the dispatcher finds commands through
 * the groups' tables, and the dict asks maxmemory before it grows. Doing
 * that in constructors that run before main() hid the wiring, made every
 * binary that links a module register it, and fixed the order by the link
 * line; here it is stated once, in order, and a unit test runs only what
 * it asks for. Adding a command group: its command_group in command.h and
 * one line below. */
#include "registry.h"
#include "acl.h"
#include "aof.h"
#include "client.h"
#include "cmd_debug.h"
#include "command.h"
#include "config.h"
#include "db.h"
#include "dict.h"
#include "evict.h"
#include "notify.h"
#include "outbuf.h"
#include "pause.h"
#include "persist.h"
#include "propagate.h"
#include "rdb.h"
#include "repl.h"
#include "script.h"
#include "t_hash.h"
#include "t_list.h"
#include "t_set.h"
#include "t_stream.h"
#include "t_zset.h"

void registry_value_types(void) {
    list_register_type();
    set_register_type();
    hash_register_type();
    zset_register_type();
    stream_register_type();
}

void registry_commands(void) {
    static const command_group *const groups[] = {
        &string_group, &keys_group,   &conn_group, &server_group, &multi_group,
        &introspection_group, &config_group, &slowlog_group, &latency_group, /* LATENCY and STATS */
        &hash_group,   &list_group,   &set_group,  &zset_group,   &pubsub_group, &persist_group, &script_group, &function_group,
        &dump_group,   &aof_group, &stream_group, &stream_read_group, &stream_info_group, &stream_cg_group,
        &sort_group, &lcs_group,
        &hll_group,
        &bitops_group,
        &geo_group,
        &migrate_group,
        &acl_group, &cluster_group, &module_group,
        &repl_group,
    };
    commands_init(groups, sizeof groups / sizeof groups[0]);
    acl_init(); /* command ids and categories, the default user */
}

void registry_hooks(void) {
    dict_expand_veto = evict_expand_veto;
    db_set_key_gone_hook(prop_key_gone);
    db_set_event_hook(notify_db_event);
    client_write_barrier = aof_write_barrier;
    outbuf_init();
    pause_set_script_hook(script_cmd_may_write);
    repl_script_declares_write = script_declares_write;
    debug_replicate = repl_debug_replicate;
    config_aof_changed = aof_config_changed;
    rdb_set_function_hooks(functions_rdb_save, functions_rdb_load, functions_flush);
    command_flushall_done = persist_flushall_done;
}

void registry_init(void) {
    registry_value_types();
    registry_commands();
    registry_hooks();
}
