/* cluster_conf.h - the cluster state in nodes.conf (cluster_conf.c): loaded
 * at start-up, saved after every change of epochs, slots or roles (as
 * temp file + fsync + rename), locked against a second node using it; and
 * the node lines CLUSTER NODES shows, which are the file's lines. */
#ifndef FERRY_CLUSTER_CONF_H
#define FERRY_CLUSTER_CONF_H

#include <stddef.h>
#include "cluster.h"
#include "sbuf.h"

/* 1 loaded, 0 no file or an empty one (a new node), -1 refused (logged
 * with the file, line and offset). */
int cluster_conf_load(const char *path);
/* flock the file (a second node on the same file refuses to start):
 * 0, or -1 (logged). */
int cluster_conf_lock(const char *path);
/* Writes the state: 0, or -1 with why. */
int cluster_save_config_err(int do_fsync, char *why, size_t whylen);
/* n's line, "\n" ended; slot_states: its migrating/importing slots too
 * (only myself has them); tls: the client's connection (which port). */
void cluster_describe_node(sbuf *b, const cluster_node *n, int slot_states, int tls);

#endif
