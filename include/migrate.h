/* migrate.h - MIGRATE (cmd_migrate.c): moves keys to another server as
 * RESTORE commands over a blocking connection, kept in a small cache of
 * target connections that the server's cron closes once idle. */
#ifndef FERRY_MIGRATE_H
#define FERRY_MIGRATE_H


/* From the server cron: closes cached connections unused for 10 s. */
void migrate_cron(void);
/* Cached target connections (INFO's migrate_cached_sockets). */
int migrate_cached_count(void);

#endif
