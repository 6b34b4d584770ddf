/* zset_setinput.c - plain sets (OBJ_SET) as inputs of ZUNION, ZINTER, ZDIFF,
 * their STORE forms and ZINTERCARD, every member with score 1 (t_zset.h's
 * zset_set_reader), read through the set module's t_set.h.
 *
 * Why a separate file with a __has_include guard: the set module is built
 * on another branch; until it is merged there is no t_set.h, this file
 * registers nothing, and set keys given to the sorted-set algebra get
 * WRONGTYPE (no set key can exist without SADD anyway). Once merged, the
 * reader is registered at start-up with no other change. */
#include "t_zset.h"

#if defined(__has_include)
#if __has_include("t_set.h")
#define ZSET_HAVE_SETS 1
#endif
#endif

#ifdef ZSET_HAVE_SETS
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
#else
void zset_setinput_register(void) {}
#endif
