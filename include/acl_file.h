/* acl_file.h - ACL users from the configuration: `user` lines of the
 * config file, the `aclfile` (start-up, ACL LOAD, ACL SAVE). */
#ifndef FERRY_ACL_FILE_H
#define FERRY_ACL_FILE_H

#include <stddef.h>

/* A `user <name> rules...` config line (argc >= 2), kept until start-up
 * applies it; -1 (message in err) for a second line naming the same user. */
int acl_config_user_line(int argc, char **argv, char *err, size_t errlen);
/* Forgets the user lines read so far (a new config load starts). */
void acl_config_users_reset(void);
/* Applies the user lines, then loads the aclfile; installs the ACL SAVE /
 * LOAD hooks. -1 (logged) when the server must not start. */
int acl_file_startup(void);

/* CONFIG REWRITE: "user <name> <rules>\n" for every user (none when an
 * aclfile is configured: the file's user lines are then dropped);
 * zmalloc'd array and strings, *n of them. */
char **acl_rewrite_user_lines(int *n);

#endif
