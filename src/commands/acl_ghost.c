/* acl_ghost.c - the parts of Redis 7.0's command table that decide how ACL
 * rules are written back, where ferry's table differs from it.
 *
 * ACL LIST / GETUSER describe a bitmap by choosing categories by how many
 * of their commands are allowed, so the counts must be Redis's: the
 * commands Redis 7.0 has and ferry has not (cluster, replication, module
 * commands: "ghosts") take part in categories and in rules (`+asking` is a
 * valid rule, as in Redis) without being runnable, and ferry's commands
 * Redis 7.0 has not (7.2's CLIENT SETINFO / NO-TOUCH, ferry's own) are
 * left out of the counts. Names and categories are redis-server 7.0.15's
 * COMMAND INFO. */
#include "acl_ghost.h"
#include <string.h>

static const acl_ghost ghosts[] = {
    {"asking", "fast connection"},
    {"cluster", "slow"},
    {"cluster|addslots", "admin slow dangerous"},
    {"cluster|addslotsrange", "admin slow dangerous"},
    {"cluster|bumpepoch", "admin slow dangerous"},
    {"cluster|count-failure-reports", "admin slow dangerous"},
    {"cluster|countkeysinslot", "slow"},
    {"cluster|delslots", "admin slow dangerous"},
    {"cluster|delslotsrange", "admin slow dangerous"},
    {"cluster|failover", "admin slow dangerous"},
    {"cluster|flushslots", "admin slow dangerous"},
    {"cluster|forget", "admin slow dangerous"},
    {"cluster|getkeysinslot", "slow"},
    {"cluster|help", "slow"},
    {"cluster|info", "slow"},
    {"cluster|keyslot", "slow"},
    {"cluster|links", "slow"},
    {"cluster|meet", "admin slow dangerous"},
    {"cluster|myid", "slow"},
    {"cluster|nodes", "slow"},
    {"cluster|replicas", "admin slow dangerous"},
    {"cluster|replicate", "admin slow dangerous"},
    {"cluster|reset", "admin slow dangerous"},
    {"cluster|saveconfig", "admin slow dangerous"},
    {"cluster|set-config-epoch", "admin slow dangerous"},
    {"cluster|setslot", "admin slow dangerous"},
    {"cluster|shards", "slow"},
    {"cluster|slaves", "admin slow dangerous"},
    {"cluster|slots", "slow"},
    {"module", "slow"},
    {"module|help", "slow"},
    {"module|list", "admin slow dangerous"},
    {"module|load", "admin slow dangerous"},
    {"module|loadex", "admin slow dangerous"},
    {"module|unload", "admin slow dangerous"},
    {"restore-asking", "keyspace write slow dangerous"},
};

static const char *const not_in_redis70[] = {"client|no-touch", "client|setinfo", "compact", "stats"};

int acl_ghost_count(void) { return (int)(sizeof ghosts / sizeof ghosts[0]); }

const acl_ghost *acl_ghost_at(int i) { return &ghosts[i]; }

int acl_counted_like_redis70(const char *fullname) {
    for (size_t i = 0; i < sizeof not_in_redis70 / sizeof not_in_redis70[0]; i++)
        if (!strcmp(fullname, not_in_redis70[i])) return 0;
    return 1;
}
