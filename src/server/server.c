/* server.c - the process-wide server state `srv`, logging in Redis's line
 * format, and process figures (RSS). Kept apart from main.c so unit tests
 * and fuzzers can link the whole server without main; it calls nothing
 * above it. */
#include "server.h"
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

server srv;

void server_log(int level, const char *fmt, ...) {
    if (level < srv.cfg.loglevel) return;
    char msg[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    struct tm tm;
    localtime_r(&ts.tv_sec, &tm);
    char tbuf[64];
    size_t off = strftime(tbuf, sizeof tbuf, "%d %b %Y %H:%M:%S.", &tm);
    snprintf(tbuf + off, sizeof tbuf - off, "%03d", (int)(ts.tv_nsec / 1000000));
    static const char marks[] = ".-*#";
    FILE *fp = stdout;
    int close_it = 0;
    if (srv.cfg.logfile && srv.cfg.logfile[0]) {
        fp = fopen(srv.cfg.logfile, "a");
        if (!fp) return;
        close_it = 1;
    }
    fprintf(fp, "%d:M %s %c %s\n", (int)getpid(), tbuf, marks[level > 3 ? 3 : level], msg);
    fflush(fp);
    if (close_it) fclose(fp);
}

size_t rss_bytes(void) {
    long pages = 0, resident = 0;
    FILE *f = fopen("/proc/self/statm", "r");
    if (!f) return 0;
    if (fscanf(f, "%ld %ld", &pages, &resident) != 2) resident = 0;
    fclose(f);
    return (size_t)resident * (size_t)sysconf(_SC_PAGESIZE);
}

