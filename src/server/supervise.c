/* supervise.c - `supervised no|upstart|systemd|auto`, as Redis 7.0 reports
 * to a service manager (see supervise.h).
 *
 * systemd (a Type=notify unit) learns that the server is up from a
 * "READY=1" datagram sent to the AF_UNIX socket named by $NOTIFY_SOCKET (a
 * path, or '@' for the abstract namespace), and that it is going down from
 * "STOPPING=1". That protocol is one sendto() per message, so it is spoken
 * here directly rather than through libsystemd's sd_notify(): the server
 * keeps no dependency beyond libc (and Lua), and the few lines below behave
 * as sd_notify(0, msg) does, return value included (0: no NOTIFY_SOCKET,
 * >0 sent, -errno failed), so the log lines match redis-server's.
 *
 * Every message is its own datagram, in Redis's order: "STATUS=Redis is
 * loading..." at start-up, "STATUS=Ready to accept connections" then
 * "READY=1" once every listener accepts and the data is loaded,
 * "STOPPING=1" when a shutdown starts (cmd_persist.c, with the final save's
 * STATUS lines).
 *
 * upstart (`expect stop`) waits for the process to stop itself: SIGSTOP.
 * Redis 7.0 raises it while starting, before it listens; here it is raised
 * when ready, which is what the job's readiness means (a README difference).
 */
#include "supervise.h"
#include "config.h"
#include "server.h"
#include <errno.h>
#include <signal.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

static int supervised;  /* supervise_start succeeded: the mode in srv.cfg.supervised is in force */

/* sd_notify(0, msg) without libsystemd. */
static int notify_send(const char *msg) {
    const char *name = getenv("NOTIFY_SOCKET");
    if (!name || !*name) return 0;
    if (name[0] != '/' && name[0] != '@') return -EAFNOSUPPORT;
    struct sockaddr_un sa;
    size_t n = strlen(name);
    if (n >= sizeof sa.sun_path) return -EINVAL;
    memset(&sa, 0, sizeof sa);
    sa.sun_family = AF_UNIX;
    memcpy(sa.sun_path, name, n);
    socklen_t salen = (socklen_t)(offsetof(struct sockaddr_un, sun_path) + n);
    if (name[0] == '@') sa.sun_path[0] = '\0'; /* abstract: the name is the n bytes, no terminator */
    else salen++;
    int fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
    if (fd == -1) return -errno;
    ssize_t w = sendto(fd, msg, strlen(msg), MSG_NOSIGNAL, (struct sockaddr *)&sa, salen);
    int rc = w < 0 ? -errno : 1;
    close(fd);
    return rc;
}

/* Redis's redisCommunicateSystemd: the message, and a warning if it failed. */
static int notify(const char *msg) {
    int rc = notify_send(msg);
    if (rc == 0) server_log(LOG_WARNING_, "systemd supervision error: NOTIFY_SOCKET not found!");
    else if (rc < 0) server_log(LOG_WARNING_, "systemd supervision error: sd_notify: %d", rc);
    return rc;
}

void supervise_notify(const char *msg) {
    if (srv.cfg.supervised == SUPERVISED_SYSTEMD) notify(msg);
}

int supervise_start(void) {
    int mode = srv.cfg.supervised, ok = 0;
    if (mode == SUPERVISED_AUTO) {
        if (getenv("UPSTART_JOB")) {
            server_log(LOG_VERBOSE_, "Upstart supervision detected.");
            mode = SUPERVISED_UPSTART;
        } else if (getenv("NOTIFY_SOCKET")) {
            server_log(LOG_VERBOSE_, "Systemd supervision detected.");
            mode = SUPERVISED_SYSTEMD;
        }
    }
    if (mode == SUPERVISED_UPSTART) {
        if (!getenv("UPSTART_JOB")) {
            server_log(LOG_WARNING_, "upstart supervision requested, but UPSTART_JOB not found!");
        } else {
            server_log(LOG_NOTICE_, "supervised by upstart, will stop to signal readiness.");
            ok = 1;
        }
    } else if (mode == SUPERVISED_SYSTEMD) {
        ok = notify("STATUS=Redis is loading...\n") > 0;
        if (ok)
            server_log(LOG_NOTICE_, "Supervised by systemd. Please make sure you set appropriate values for "
                                    "TimeoutStartSec and TimeoutStopSec in your service unit.");
    }
    if (ok) srv.cfg.supervised = mode; /* CONFIG GET shows what `auto` found, as Redis's */
    supervised = ok;
    return ok;
}

void supervise_ready(void) {
    if (supervised && srv.cfg.supervised == SUPERVISED_UPSTART) {
        raise(SIGSTOP); /* upstart sends SIGCONT once it has seen the stop */
        unsetenv("UPSTART_JOB");
    }
    if (srv.cfg.supervised != SUPERVISED_SYSTEMD) return;
    notify(srv.repl_replica ? "STATUS=Ready to accept connections in read-only mode. Waiting for MASTER <-> "
                              "REPLICA sync\n"
                            : "STATUS=Ready to accept connections\n");
    notify("READY=1\n");
}

const char *supervise_info(void) {
    if (!supervised) return "no";
    return srv.cfg.supervised == SUPERVISED_SYSTEMD ? "systemd" : "upstart";
}
