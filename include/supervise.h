/* supervise.h - telling a service manager (systemd, upstart) how the
 * server is doing, as Redis 7.0 does for `supervised` (supervise.c). */
#ifndef FERRY_SUPERVISE_H
#define FERRY_SUPERVISE_H

/* At start-up, right after the configuration is loaded: resolves
 * `supervised auto` (UPSTART_JOB, then NOTIFY_SOCKET), checks the manager is
 * there and, for systemd, sends "STATUS=Redis is loading...". 1 when the
 * server is supervised (it then never daemonizes), else 0. */
int supervise_start(void);
/* Every listener accepts and the data is loaded: systemd gets a STATUS line
 * and READY=1, upstart a SIGSTOP. */
void supervise_ready(void);
/* One line for systemd ("STOPPING=1\n", "STATUS=...\n"), sent while the
 * mode is systemd; failures are logged as Redis logs them. */
void supervise_notify(const char *msg);
/* INFO's process_supervised: "systemd", "upstart" or "no". */
const char *supervise_info(void);

#endif
