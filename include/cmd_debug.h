/* cmd_debug.h - the DEBUG command (its subcommands are in cmd_debug.c; its
 * command table entry is in cmd_server.c's table). */
#ifndef FERRY_CMD_DEBUG_H
#define FERRY_CMD_DEBUG_H

#include "client.h"

/* DEBUG <subcommand> [args...]: Redis's test hooks that ferry supports. */
void cmd_debug(client *c);
/* Whether enable-debug-command lets c run DEBUG (yes; local: loopback and
 * unix-socket peers, and fake clients). */
int debug_command_allowed(const client *c);

/* Set by the replication layer: DEBUG REPLICATE's command, fed to the
 * replicas' stream only (never executed here, never in the AOF). */
extern void (*debug_replicate)(int argc, const span *argv);
/* Set in cluster mode: 1 if it handled c's DEBUG subcommand (cluster_debug.c). */
extern int (*debug_cluster)(client *c);

#endif
