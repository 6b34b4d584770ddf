/* cluster_conf.c - between the cluster state and nodes.conf: the state as
 * nodes_conf.c's records (to save it, and for CLUSTER NODES), the records
 * back into the state when the node starts, and the lock that keeps two
 * nodes off one file.
 *
 * Saving replaces the file whole (nodes_conf_save: temp file, fsync,
 * rename, fsync of the directory), so a crash leaves the old file or the
 * new one, never half of one. The lock is an flock on the file; since
 * every save puts a new file in place, the lock is taken again on the new
 * one after each save.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/file.h>
#include <unistd.h>
#include "cluster.h"
#include "cluster_conf.h"
#include "config.h"
#include "nodes_conf.h"
#include "server.h"
#include "zmalloc.h"

static const struct {
    unsigned cn, nc;
} flag_map[] = {
    {CN_MYSELF, NC_MYSELF}, {CN_MASTER, NC_MASTER}, {CN_SLAVE, NC_SLAVE}, {CN_PFAIL, NC_PFAIL},
    {CN_FAIL, NC_FAIL}, {CN_HANDSHAKE, NC_HANDSHAKE}, {CN_NOADDR, NC_NOADDR}, {CN_NOFAILOVER, NC_NOFAILOVER},
};
#define NFLAGS (sizeof flag_map / sizeof flag_map[0])

/* ---- state -> records --------------------------------------------------------- */

static void to_record(nc_node *r, const cluster_node *n, int tls) {
    memset(r, 0, sizeof *r);
    memcpy(r->id, n->name, CLUSTER_NAMELEN);
    snprintf(r->ip, sizeof r->ip, "%s", n->ip);
    r->port = cluster_client_port(n, tls);
    r->cport = n->cport;
    snprintf(r->hostname, sizeof r->hostname, "%s", n->hostname);
    for (size_t i = 0; i < NFLAGS; i++)
        if (n->flags & flag_map[i].cn) r->flags |= flag_map[i].nc;
    if (n->master) memcpy(r->master, n->master->name, CLUSTER_NAMELEN);
    r->ping_sent = n->ping_sent;
    r->pong_recv = n->pong_received;
    r->config_epoch = cluster_is_replica(n) && n->master ? n->master->config_epoch : n->config_epoch;
    r->connected = n->link != NULL || (n->flags & CN_MYSELF);
    memcpy(r->slots, n->slots, sizeof r->slots);
}

/* myself's open slots, in slot order */
static size_t slot_states(nc_slot_state **out) {
    size_t n = 0;
    nc_slot_state *st = NULL;
    for (int s = 0; s < CLUSTER_SLOTS; s++) {
        cluster_node *to = cluster->slot[s].migrating_to, *from = cluster->slot[s].importing_from;
        if (!to && !from) continue;
        st = zrealloc(st, sizeof *st * (n + 1));
        st[n].slot = s;
        st[n].importing = to == NULL;
        memcpy(st[n].id, to ? to->name : from->name, CLUSTER_NAMELEN);
        st[n].id[CLUSTER_NAMELEN] = '\0';
        n++;
    }
    *out = st;
    return n;
}

void cluster_describe_node(sbuf *b, const cluster_node *n, int with_states, int tls) {
    nc_node r;
    to_record(&r, n, tls);
    nc_slot_state *st = NULL;
    if (with_states && (n->flags & CN_MYSELF)) r.nstates = slot_states(&st);
    r.states = st;
    nodes_conf_format_node(b, &r, with_states);
    zfree(st);
}

static int lock_fd(const char *path, int quiet) {
    int fd = open(path, O_WRONLY | O_CREAT | O_CLOEXEC, 0644);
    if (fd == -1) {
        if (!quiet) server_log(LOG_WARNING_, "Can't open %s in order to acquire a lock: %s", path, strerror(errno));
        return -1;
    }
    if (flock(fd, LOCK_EX | LOCK_NB) == -1) {
        if (errno == EWOULDBLOCK)
            server_log(LOG_WARNING_, "Sorry, the cluster configuration file %s is already used by a different Redis "
                       "Cluster node. Please make sure that different nodes use different cluster configuration files.",
                       path);
        else
            server_log(LOG_WARNING_, "Impossible to lock %s: %s", path, strerror(errno));
        close(fd);
        return -1;
    }
    return fd;
}

int cluster_conf_lock(const char *path) {
    int fd = lock_fd(path, 0);
    if (fd < 0) return -1;
    if (cluster->lock_fd >= 0) close(cluster->lock_fd);
    cluster->lock_fd = fd;
    return 0;
}

int cluster_save_config_err(int do_fsync, char *why, size_t whylen) {
    sbuf b = {0};
    for (int i = 0; i < cluster->nnodes; i++)
        if (!(cluster->nodes[i]->flags & CN_HANDSHAKE)) cluster_describe_node(&b, cluster->nodes[i], 1, 0);
    nodes_conf_vars v = {.current_epoch = cluster->current_epoch, .last_vote_epoch = cluster->last_vote_epoch};
    nodes_conf_format_vars(&b, &v);
    int rc = nodes_conf_save(cluster->config_path, &b, do_fsync);
    int err = errno;
    sb_free(&b);
    if (rc < 0) {
        snprintf(why, whylen, "%s", strerror(err));
        return -1;
    }
    if (cluster->lock_fd >= 0) { /* the file is new: lock it again */
        int fd = lock_fd(cluster->config_path, 1);
        if (fd >= 0) {
            close(cluster->lock_fd);
            cluster->lock_fd = fd;
        }
    }
    return 0;
}

int cluster_save_config(int do_fsync) {
    char why[256];
    if (cluster_save_config_err(do_fsync, why, sizeof why) == 0) return 0;
    server_log(LOG_WARNING_, "Could not save the cluster config file %s: %s", cluster->config_path, why);
    return -1;
}

/* ---- records -> state ------------------------------------------------------------ */

static cluster_node *get_or_add(const char *name) {
    cluster_node *n = cluster_lookup(name, CLUSTER_NAMELEN);
    if (!n) {
        n = cluster_node_new(name, 0);
        cluster_add_node(n);
    }
    return n;
}

static int load_node(void *arg, const nc_node *r, size_t line) {
    (void)arg;
    (void)line;
    cluster_node *n = get_or_add(r->id);
    snprintf(n->ip, sizeof n->ip, "%s", r->ip);
    snprintf(n->hostname, sizeof n->hostname, "%s", r->hostname);
    n->port = r->port;
    n->cport = r->cport;
    n->flags = 0;
    for (size_t i = 0; i < NFLAGS; i++)
        if (r->flags & flag_map[i].nc) n->flags |= flag_map[i].cn;
    if (n->flags & CN_MYSELF) cluster->myself = n;
    if (r->master[0]) cluster_set_master(n, get_or_add(r->master));
    else if (n->master) cluster_node_remove_replica(n->master, n), n->master = NULL;
    if (r->ping_sent) n->ping_sent = srv.now_ms;
    if (r->pong_recv) n->pong_received = srv.now_ms;
    n->config_epoch = r->config_epoch;
    for (int s = 0; s < CLUSTER_SLOTS; s++)
        if (nc_slot_get(r, s)) {
            cluster_del_slot(s);
            cluster_add_slot(n, s);
        }
    for (size_t i = 0; i < r->nstates; i++) {
        const nc_slot_state *st = &r->states[i];
        cluster_node *other = get_or_add(st->id);
        if (st->importing) cluster->slot[st->slot].importing_from = other;
        else cluster->slot[st->slot].migrating_to = other;
        cluster_slot_refresh(st->slot);
    }
    return 0;
}

static char *read_file(const char *path, size_t *len, int *missing) {
    *missing = 0;
    FILE *f = fopen(path, "r");
    if (!f) {
        *missing = errno == ENOENT;
        return NULL;
    }
    sbuf b = {0};
    char chunk[65536];
    size_t n;
    while ((n = fread(chunk, 1, sizeof chunk, f)) > 0) sb_add(&b, chunk, n);
    int bad = ferror(f);
    fclose(f);
    if (bad) {
        sb_free(&b);
        return NULL;
    }
    *len = b.len;
    return b.p ? b.p : zcalloc(1);
}

int cluster_conf_load(const char *path) {
    size_t len = 0;
    int missing;
    char *buf = read_file(path, &len, &missing);
    if (!buf) {
        if (missing) return 0;
        server_log(LOG_WARNING_, "Loading the cluster node config from %s: %s", path, strerror(errno));
        return -1;
    }
    if (len == 0) {
        zfree(buf);
        return 0;
    }
    nodes_conf_vars v;
    nodes_conf_err err;
    int rc = nodes_conf_parse(buf, len, load_node, &v, NULL, &err);
    zfree(buf);
    if (rc < 0 || !cluster->myself) {
        server_log(LOG_WARNING_, "Unrecoverable error: corrupted cluster config file \"%s\" at line %zu, offset %zu: %s",
                   path, err.line, err.offset, rc < 0 ? err.reason : "no node marked myself");
        return -1;
    }
    cluster->current_epoch = v.current_epoch;
    cluster->last_vote_epoch = v.last_vote_epoch;
    uint64_t max = cluster_max_epoch();
    if (max > cluster->current_epoch) cluster->current_epoch = max;
    server_log(LOG_NOTICE_, "Node configuration loaded, I'm still " CLUSTER_NAME_FMT, cluster->myself->name);
    return 1;
}
