/* script_names.c - what the engine and the commands both need to know
 * about scripts' names and flags (see script.h): the flag names as Redis
 * spells them (in SCRIPT_FLAG_* bit order) and the rule for function and
 * library names. Compiled with or without Lua. */
#include "script.h"

const char *const script_flag_names[SCRIPT_FLAG_COUNT + 1] = {
    "no-writes", "allow-oom", "allow-stale", "no-cluster", "allow-cross-slot-keys", NULL,
};

int script_flag_bit(const char *p, size_t len) {
    for (int k = 0; k < SCRIPT_FLAG_COUNT; k++) {
        const char *n = script_flag_names[k];
        size_t i = 0;
        while (i < len && n[i] && n[i] == p[i]) i++;
        if (i == len && n[i] == '\0') return 1 << k;
    }
    return 0;
}

int script_valid_name(const char *s, size_t n) {
    if (n == 0) return 0;
    for (size_t i = 0; i < n; i++)
        if (!(s[i] == '_' || (s[i] >= '0' && s[i] <= '9') || ((s[i] | 0x20) >= 'a' && (s[i] | 0x20) <= 'z'))) return 0;
    return 1;
}
