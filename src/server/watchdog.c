/* watchdog.c - the software watchdog (watchdog.h).
 *
 * Redis's watchdog-period is a debugging aid: CONFIG SET and then the
 * cron arm a one-shot ITIMER_REAL each time they run, so SIGALRM is delivered only when the
 * loop has been stuck (a slow command, a long load) for the whole period,
 * and its handler says so in the log. The handler uses only
 * async-signal-safe calls (open, write, getpid, time): the line is built by
 * hand, without stdio. It does not print a stack trace as Redis does (ferry
 * has no symbolizer); the line is what tools and tests look for. SA_RESTART
 * keeps reads and writes going; poll() and sleeps return early (EINTR) and
 * their callers wait again.
 */
#include "watchdog.h"
#include "server.h"
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <string.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

static int armed;

static size_t put_num(char *p, long long v) {
    char tmp[24];
    size_t n = 0;
    do tmp[n++] = (char)('0' + v % 10);
    while ((v /= 10) > 0);
    for (size_t i = 0; i < n; i++) p[i] = tmp[n - 1 - i];
    return n;
}

static void on_alarm(int sig) {
    (void)sig;
    int saved = errno;
    char line[128];
    size_t n = put_num(line, (long long)getpid());
    static const char mid[] = ":signal-handler (";
    memcpy(line + n, mid, sizeof mid - 1);
    n += sizeof mid - 1;
    n += put_num(line + n, (long long)time(NULL));
    static const char tail[] = ") --- WATCHDOG TIMER EXPIRED ---\n";
    memcpy(line + n, tail, sizeof tail - 1);
    n += sizeof tail - 1;
    const char *file = srv.cfg.logfile;
    int fd = file && file[0] ? open(file, O_WRONLY | O_APPEND | O_CREAT, 0644) : STDOUT_FILENO;
    if (fd >= 0) {
        ssize_t w = write(fd, line, n);
        (void)w;
        if (fd != STDOUT_FILENO) close(fd);
    }
    errno = saved;
}

static void set_timer(long long ms) {
    struct itimerval it = {{0, 0}, {(time_t)(ms / 1000), (suseconds_t)(ms % 1000) * 1000}};
    setitimer(ITIMER_REAL, &it, NULL);
}

void watchdog_tick(long long period_ms, int hz) {
    if (period_ms <= 0) {
        if (armed) set_timer(0);
        armed = 0;
        return;
    }
    if (!armed) {
        struct sigaction sa;
        memset(&sa, 0, sizeof sa);
        sa.sa_handler = on_alarm;
        sa.sa_flags = SA_RESTART;
        sigemptyset(&sa.sa_mask);
        sigaction(SIGALRM, &sa, NULL);
        armed = 1;
    }
    long long least = 2 * 1000 / (hz > 0 ? hz : 10);
    set_timer(period_ms < least ? least : period_ms);
}
