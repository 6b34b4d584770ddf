/* cmd_cluster.c - the cluster commands a standalone server still knows:
 * READONLY and READWRITE, which redis-server 7.0 without cluster support
 * answers with an error. They exist so that ACL rules naming them
 * (`+readonly`, as Redis's own ACL tests use) are valid rules. */
#include "command.h"
#include "reply.h"

static void cmd_cluster_disabled(client *c) { reply_error(c, "ERR This instance has cluster support disabled"); }

#define F_CLUSTER (CMD_LOADING | CMD_STALE | CMD_FAST)
static command cluster_commands[] = {
    CMD("readonly", cmd_cluster_disabled, 1, .flags = F_CLUSTER, .acl = "fast connection",
        .summary = "Enables read queries for a connection to a cluster replica node", .since = "3.0.0",
        .complexity = "O(1)"),
    CMD("readwrite", cmd_cluster_disabled, 1, .flags = F_CLUSTER, .acl = "fast connection",
        .summary = "Disables read queries for a connection to a cluster replica node", .since = "3.0.0",
        .complexity = "O(1)"),
    {0},
};
const command_group cluster_group = {"cluster", cluster_commands};
