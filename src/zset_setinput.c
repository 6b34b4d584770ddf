/* zset_setinput.c - plain sets (OBJ_SET) as inputs of ZUNION, ZINTER, ZDIFF,
 * their STORE forms and ZINTERCARD, every member with score 1 (t_zset.h's
 * zset_set_reader), read through the set module's t_set.h.
 * Kept apart so the sorted-set modules do not depend on the set module's
 * internals: they see sets only through this reader. */
#include "t_zset.h"

#include "t_set.h"

static unsigned long set_len(const void *s) { return (unsigned long)fset_size(s); }

static int set_contains(const void *s, const char *m, size_t len) { return fset_contains((fset *)s, m, len); }

static void set_foreach(const void *s, void (*fn)(void *ud, const char *m, size_t len), void *ud) {
    fset_iter it;
    fset_member m;
    fset_iter_init(&it, (fset *)s);
    while (fset_iter_next(&it, &m)) fn(ud, m.p, m.len);
    fset_iter_end(&it);
}

static const zset_set_reader set_reader = {set_len, set_contains, set_foreach};

void zset_setinput_register(void) { zset_register_set_reader(&set_reader); }
