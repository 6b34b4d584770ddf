/* keyspec.c - finding the keys of a command line from Redis 7.0's key
 * specifications (keyspec_table.c), the one engine behind COMMAND GETKEYS,
 * COMMAND GETKEYSANDFLAGS and ACL key checks.
 *
 * As Redis evaluates them: the specs first, in order (a spec marked NOT_KEY
 * is skipped, a keyword that is not found skips its spec); a spec whose
 * bounds fall outside argv, whose key count is not an integer, that is
 * INCOMPLETE or of unknown type makes the whole evaluation fall back to the
 * command's procedure (keyspec_proc.c), which also replaces the specs of a
 * command whose flags depend on its options (VARIABLE_FLAGS: SET, BITFIELD).
 * Nothing here allocates. */
#include "keyspec.h"
#include "command.h"
#include "util.h"
#include <stdlib.h>
#include <string.h>

static int row_cmp(const void *key, const void *row) {
    return strcmp(key, ((const cmd_keyinfo *)row)->name);
}

const cmd_keyinfo *keyspec_find(const char *fullname) {
    return bsearch(fullname, keyspec_table, keyspec_table_len, sizeof keyspec_table[0], row_cmp);
}

/* A command whose keys are one spec "argv[i] alone" (GET, SET, INCR...):
 * the spec walk gives argv[i] whenever i < argc (slot_key_pos), with the
 * spec's flags when they do not vary with the arguments (key1_pos). */
static void note_single_key(command *cmd) {
    const cmd_keyinfo *ki = cmd->keyinfo;
    cmd->key1_pos = cmd->slot_key_pos = 0;
    /* SET's and BITFIELD's procs choose the flags of their one key, argv[1] */
    int flags_proc = ki && (ki->proc == KSP_SET || ki->proc == KSP_BITFIELD);
    if (!ki || ki->nspecs != 1 || (ki->proc != KSP_NONE && !flags_proc)) return;
    const keyspec *s = &ki->specs[0];
    if ((s->flags & (KS_NOT_KEY | KS_INCOMPLETE)) || s->bs != KS_BS_INDEX || s->bs_pos < 1 ||
        s->fk != KS_FK_RANGE || s->fk_a != 0 || s->fk_b < 1)
        return;
    cmd->slot_key_pos = s->bs_pos;
    if ((s->flags & KS_VARIABLE_FLAGS) || flags_proc) return;
    cmd->key1_pos = s->bs_pos;
    cmd->key1_flags = s->flags;
}

static void attach_one(command *cmd, void *ud) {
    (void)ud;
    cmd->keyinfo = keyspec_find(cmd->fullname);
    note_single_key(cmd);
}

void keyspec_attach_all(void) { command_foreach(attach_one, NULL); }

int keyspec_arg_is(span a, const char *word) {
    size_t n = strlen(word);
    if (a.len < n) return 0;
    for (size_t i = 0; i < n; i++) {
        unsigned char x = (unsigned char)a.p[i], y = (unsigned char)word[i];
        if (x >= 'A' && x <= 'Z') x |= 0x20;
        if (y >= 'A' && y <= 'Z') y |= 0x20;
        if (x != y) return 0;
    }
    return a.len == n || a.p[n] == '\0'; /* compared as a C string, as Redis does */
}

/* The union of the specs' flags; with `inverted`, of their complements (so
 * KS_NOT_KEY is set iff some spec is a real key). */
static uint32_t all_flags(const cmd_keyinfo *ki, int inverted) {
    uint32_t f = 0;
    for (int i = 0; i < ki->nspecs; i++) f |= inverted ? ~ki->specs[i].flags : ki->specs[i].flags;
    return f;
}

int keyspec_has_keys(const command *cmd) {
    const cmd_keyinfo *ki = cmd->keyinfo;
    return ki && (ki->proc != KSP_NONE || (all_flags(ki, 1) & KS_NOT_KEY));
}

/* Where the keys of `s` begin: its index, or the argument after its
 * keyword (0: keyword not found; -1: a search Redis cannot do). The search
 * runs forward from startfrom up to, not including, the last argument, or
 * backward from argc+startfrom down to, not including, argv[1]. */
static int spec_begin(const keyspec *s, const span *argv, int argc) {
    if (s->bs == KS_BS_INDEX) return s->bs_pos;
    if (s->bs != KS_BS_KEYWORD) return -1;
    int start = s->bs_pos > 0 ? s->bs_pos : argc + s->bs_pos;
    int end = s->bs_pos > 0 ? argc - 1 : 1;
    int dir = start <= end ? 1 : -1;
    for (int i = start; i != end && i >= 1 && i < argc; i += dir)
        if (keyspec_arg_is(argv[i], s->keyword)) return i + 1;
    return 0;
}

/* The last key index of `s` whose keys begin at *first (a key count moves
 * *first past itself); -1 when the count is not a non-negative integer. */
static long long spec_last(const keyspec *s, const span *argv, int argc, int *first) {
    if (s->fk == KS_FK_RANGE) {
        if (s->fk_a >= 0) return (long long)*first + s->fk_a;
        if (!s->fk_c) return (long long)argc + s->fk_a;
        return *first + ((argc - *first) / s->fk_c + s->fk_a);
    }
    int at = *first + s->fk_a;
    long long nk;
    if (s->fk_a >= argc || at >= argc || !str_to_ll(argv[at].p, argv[at].len, &nk) || nk < 0) return -1;
    *first += s->fk_b;
    return (long long)*first + (int)nk - 1; /* Redis narrows the count to int */
}

/* Appends the keys of spec `s` at out[n..]; the new count, or -1 if the
 * spec cannot be evaluated on this argv. */
static int spec_keys(const keyspec *s, const span *argv, int argc, keyref *out, int max, int n) {
    if (s->fk != KS_FK_RANGE && s->fk != KS_FK_KEYNUM) return -1;
    int first = spec_begin(s, argv, argc);
    if (first == 0) return n;
    if (first < 0) return -1;
    int step = s->fk == KS_FK_RANGE ? s->fk_b : s->fk_c;
    long long last = spec_last(s, argv, argc, &first);
    if (step < 1 || last < first || last >= argc || first >= argc) return -1;
    for (int i = first; i <= last; i += step, n++)
        if (n < max) out[n] = (keyref){i, s->flags};
    return (s->flags & KS_INCOMPLETE) ? -1 : n;
}

static int specs_keys(const cmd_keyinfo *ki, const span *argv, int argc, keyref *out, int max) {
    int n = 0;
    for (int i = 0; i < ki->nspecs && n >= 0; i++)
        if (!(ki->specs[i].flags & KS_NOT_KEY)) n = spec_keys(&ki->specs[i], argv, argc, out, max, n);
    return n;
}

int command_keys(const command *cmd, const span *argv, int argc, keyref *out, int max) {
    if (cmd->key1_pos && cmd->key1_pos < argc) {
        if (max > 0) out[0] = (keyref){cmd->key1_pos, cmd->key1_flags};
        return 1;
    }
    const cmd_keyinfo *ki = cmd->keyinfo;
    if (!ki) return 0;
    int tried = 0;
    if ((all_flags(ki, 1) & KS_NOT_KEY) && !(all_flags(ki, 0) & KS_VARIABLE_FLAGS)) {
        int n = specs_keys(ki, argv, argc, out, max);
        if (n >= 0) return n;
        tried = 1;
    }
    if (ki->proc == KSP_NONE) return tried ? -1 : 0;
    int n = keyspec_proc_keys(ki->proc, argv, argc, out, max);
    return n > 0 ? n : -1;
}
