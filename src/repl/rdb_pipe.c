/* rdb_pipe.c - a diskless full sync's snapshot, passed from the save
 * child's pipe to the replicas' sockets by the event loop (Redis 7's rdb
 * pipe).
 *
 * Why not let the child write the sockets. It did: but a child writing
 * several sockets in turn goes at the pace of the slowest replica, the
 * server could not tell a stalled replica from a slow one (repl-timeout
 * did not apply during the transfer), and a child whose replicas had all
 * gone went on saving for nobody. Now the child writes one pipe, and the
 * loop here reads a chunk from it and writes that chunk to every replica
 * of the transfer; it reads the next chunk only when every replica has
 * taken the last one, so the child is paced by the replicas through the
 * pipe. A replica that takes nothing for repl-timeout is dropped
 * (primary.c's cron), and when the last one goes the child is killed.
 *
 * The end: at the pipe's end-of-file every replica still here has every
 * byte; closing the exit pipe then lets the child exit, and its exit (the
 * save's end, persist_repl_done) puts the replicas online.
 */
#include "repl.h"
#include "repl_int.h"
#include "event.h"
#include "persist.h"
#include "server.h"
#include "tls.h"
#include "zmalloc.h"
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <unistd.h>

#define PIPE_CHUNK (16 * 1024)

static struct {
    int fd, exit_fd;            /* the pipe's read end, the exit pipe's write end; -1 when no transfer */
    char buf[PIPE_CHUNK];
    size_t len;                 /* bytes of the chunk being written (0: read the next) */
    int pending;                /* replicas that have not taken the whole chunk yet */
} rp = {.fd = -1, .exit_fd = -1};

static void pipe_readable(evloop *el, int fd, void *data, int mask);

static int in_transfer(const client *c) {
    const replica_link *r = c->repl;
    return r && r->in_pipe && !(c->flags & CF_CLOSE_ASAP);
}

static int replicas_left(void) {
    int n = 0;
    for (int i = 0; i < rs.nreplicas; i++) n += in_transfer(rs.replicas[i]);
    return n;
}

static void close_fds(void) {
    if (rp.fd >= 0) {
        ev_del(srv.el, rp.fd, EV_READABLE);
        close(rp.fd);
    }
    if (rp.exit_fd >= 0) close(rp.exit_fd);
    rp.fd = rp.exit_fd = -1;
    rp.len = 0;
    rp.pending = 0;
}

/* No replica is left: the child has nobody to save for. */
static void last_dropped(void) {
    server_log(LOG_WARNING_, "Diskless rdb transfer, last replica dropped, killing fork child.");
    close_fds();
    persist_kill_repl_child();
}

static void resume_reading(void) {
    rp.len = 0;
    if (rp.fd >= 0) ev_add(srv.el, rp.fd, EV_READABLE, pipe_readable, NULL);
}

/* Write what c has not taken of the chunk. 1 when it has all of it, 0 when
 * its socket is full, -1 when it was dropped. */
static int write_chunk(client *c) {
    replica_link *r = c->repl;
    while (r->pipe_pos < rp.len) {
        ssize_t w = tls_or_plain_write(c->tls, c->fd, rp.buf + r->pipe_pos, rp.len - r->pipe_pos);
        if (w > 0) {
            r->pipe_pos += (size_t)w;
            r->pipe_io_ms = srv.now_ms;
            srv.stats.net_output_bytes += (uint64_t)w;
            continue;
        }
        if (w < 0 && (errno == EAGAIN || errno == EINTR)) {
            if (!r->pipe_io_ms) r->pipe_io_ms = srv.now_ms; /* repl-timeout runs while its socket is full */
            return 0;
        }
        server_log(LOG_WARNING_, "Diskless rdb transfer, write error sending DB to replica: %s",
                   w < 0 ? strerror(errno) : "connection closed");
        r->in_pipe = 0;
        client_close_async(c);
        return -1;
    }
    r->pipe_io_ms = 0;
    return 1;
}

static void replica_writable(evloop *el, int fd, void *data, int mask) {
    (void)mask;
    client *c = data;
    int rc = write_chunk(c);
    if (rc == 0) return;
    ev_del(el, fd, EV_WRITABLE);
    if (--rp.pending > 0) return;
    if (!replicas_left()) last_dropped();
    else resume_reading();
}

static void transfer_done(void) {
    int up = replicas_left();
    if (up) server_log(LOG_NOTICE_, "Diskless rdb transfer, done reading from pipe, %d replicas still up.", up);
    close_fds(); /* the exit pipe's end lets the child exit: its end puts them online */
}

static void pipe_readable(evloop *el, int fd, void *data, int mask) {
    (void)data;
    (void)mask;
    ssize_t n = read(fd, rp.buf, sizeof rp.buf);
    if (n < 0) {
        if (errno == EAGAIN || errno == EINTR) return;
        server_log(LOG_WARNING_, "Diskless rdb transfer, read error from the save child: %s", strerror(errno));
        n = 0;
    }
    if (n == 0) {
        transfer_done();
        return;
    }
    rp.len = (size_t)n;
    rp.pending = 0;
    for (int i = 0; i < rs.nreplicas; i++) {
        client *c = rs.replicas[i];
        if (!in_transfer(c)) continue;
        ((replica_link *)c->repl)->pipe_pos = 0;
        if (write_chunk(c) == 0) {
            rp.pending++;
            ev_add(el, c->fd, EV_WRITABLE, replica_writable, c);
        }
    }
    if (!replicas_left()) last_dropped();
    else if (rp.pending) ev_del(el, fd, EV_READABLE); /* the next chunk when they all have this one */
}

int rdb_pipe_start(int fd, int exit_fd) {
    fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK);
    rp.fd = fd;
    rp.exit_fd = exit_fd;
    rp.len = 0;
    rp.pending = 0;
    for (int i = 0; i < rs.nreplicas; i++) ((replica_link *)rs.replicas[i]->repl)->pipe_io_ms = 0;
    return ev_add(srv.el, fd, EV_READABLE, pipe_readable, NULL);
}

void rdb_pipe_replica_gone(client *c) {
    replica_link *r = c->repl;
    if (!r->in_pipe) return;
    r->in_pipe = 0;
    if (rp.fd < 0) return;
    if (rp.len && r->pipe_pos < rp.len) { /* it held the next chunk up */
        if (c->fd >= 0) ev_del(srv.el, c->fd, EV_WRITABLE);
        if (--rp.pending == 0 && replicas_left()) resume_reading();
    }
    if (!replicas_left()) last_dropped();
}

