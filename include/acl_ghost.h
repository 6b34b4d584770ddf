/* acl_ghost.h - where ferry's command table differs from Redis 7.0's for
 * ACL purposes (see acl_ghost.c): Redis 7.0 commands ferry lacks, kept as
 * rule names and category members only, and ferry commands Redis 7.0
 * lacks, left out of category counts. */
#ifndef FERRY_ACL_GHOST_H
#define FERRY_ACL_GHOST_H

typedef struct acl_ghost {
    const char *fullname;       /* "cluster", "cluster|info" (containers before their subcommands) */
    const char *cats;           /* space separated categories without '@' */
} acl_ghost;

int acl_ghost_count(void);
const acl_ghost *acl_ghost_at(int i);
/* 0 for ferry's commands that Redis 7.0 does not have. */
int acl_counted_like_redis70(const char *fullname);

#endif
