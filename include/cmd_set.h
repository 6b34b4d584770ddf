/* cmd_set.h - what the set command files share: looking up a set key,
 * storing a changed set back into its keyspace node, write bookkeeping,
 * a list of members to reply with, and the procs of the set-algebra
 * commands (cmd_set_ops.c) for the table in cmd_set.c. */
#ifndef FERRY_CMD_SET_H
#define FERRY_CMD_SET_H

#include <stddef.h>
#include <stdint.h>
#include "client.h"
#include "db.h"
#include "t_set.h"

/* Looks key up (write: no hit/miss stats). Returns 0 with *n the node or
 * NULL if the key does not exist; -1 after replying WRONGTYPE. */
int set_lookup(client *c, span key, int write, dnode **n);
static inline fset *set_of(const dnode *n) { return (fset *)dn_ptr(n); }
/* Store a (possibly moved or converted) set back into its node. */
void set_put(dnode *n, fset *s);
/* After a write to key: WATCH invalidation and `dirty` more changes. */
void set_written(db *d, span key, long long dirty);
/* A member as a bulk reply. */
void reply_member(client *c, const fset_member *m);

/* A growable list of members that stay valid while the sets they come
 * from are not modified: bytes in a dict node (p) or an integer (p NULL). */
typedef struct set_elem {
    const char *p;
    size_t len;
    int64_t v;
} set_elem;
typedef struct elemvec {
    set_elem *a;
    size_t n, cap;
} elemvec;
void elemvec_push(elemvec *e, const fset_member *m);
void elemvec_free(elemvec *e);
void reply_elem(client *c, const set_elem *x);

void cmd_sinter(client *c);
void cmd_sintercard(client *c);
void cmd_sinterstore(client *c);
void cmd_sunion(client *c);
void cmd_sunionstore(client *c);
void cmd_sdiff(client *c);
void cmd_sdiffstore(client *c);

#endif
