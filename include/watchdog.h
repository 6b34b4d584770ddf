/* watchdog.h - the software watchdog (watchdog-period, as Redis's): when
 * the event loop has not come back to the cron for watchdog-period
 * milliseconds, SIGALRM logs "--- WATCHDOG TIMER EXPIRED ---" (watchdog.c). */
#ifndef FERRY_WATCHDOG_H
#define FERRY_WATCHDOG_H

/* From the cron and CONFIG SET: re-arms the timer for period_ms (raised to two cron
 * periods at least, as Redis), or disarms it when period_ms is 0. */
void watchdog_tick(long long period_ms, int hz);

#endif
