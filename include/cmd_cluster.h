/* cmd_cluster.h - the CLUSTER subcommands that show the cluster
 * (cmd_cluster_view.c), for cmd_cluster.c's command table, and INFO's
 * cluster section. */
#ifndef FERRY_CMD_CLUSTER_H
#define FERRY_CMD_CLUSTER_H

#include "client.h"
#include "sbuf.h"

/* 1 (after Redis's "cluster support disabled" error) in standalone mode. */
int cluster_refuse_disabled(client *c);
void cl_info(client *c);
void cl_nodes(client *c);
void cl_myid(client *c);
void cl_slots(client *c);
void cl_shards(client *c);
void cl_replicas(client *c);
void cl_links(client *c);
/* INFO's "# Cluster" lines */
void cluster_info_section(sbuf *b);
/* INFO's cluster_connections (bus links, counted as Redis 7.0 counts them) and
 * mem_cluster_links (their buffers); 0 in standalone mode. */
size_t cluster_connections(void);
size_t cluster_links_memory(void);

#endif
