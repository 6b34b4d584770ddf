/* keyspec.h - which arguments of a command line are keys, and what the
 * command does with each of them.
 *
 * Redis 7.0 describes every command's keys by "key specifications": where
 * the search for keys begins (an index, or a keyword searched from an
 * index) and how keys are found from there (a range, or a count read from
 * an argument), each spec with flags saying how the key is used (RO, RW,
 * OW, RM; ACCESS, UPDATE, INSERT, DELETE; NOT_KEY, INCOMPLETE,
 * VARIABLE_FLAGS). COMMAND INFO prints them, COMMAND GETKEYS[ANDFLAGS]
 * evaluates them, and ACL key patterns (`%R~`, `%W~`) are checked against
 * the flags of each key. ferry keeps the same specifications as data
 * attached to its command table (keyspec.c) and evaluates them here.
 */
#ifndef FERRY_KEYSPEC_H
#define FERRY_KEYSPEC_H

#include <stdint.h>
#include "span.h"

struct command;

/* key spec flags (as COMMAND INFO prints them) */
#define KS_RO             (1u << 0)
#define KS_RW             (1u << 1)
#define KS_OW             (1u << 2)
#define KS_RM             (1u << 3)
#define KS_ACCESS         (1u << 4)
#define KS_UPDATE         (1u << 5)
#define KS_INSERT         (1u << 6)
#define KS_DELETE         (1u << 7)
#define KS_NOT_KEY        (1u << 8)
#define KS_INCOMPLETE     (1u << 9)
#define KS_VARIABLE_FLAGS (1u << 10)

/* One key of a command line: its index in argv (argv[0] is the command
 * name) and the flags of the spec that found it. */
typedef struct keyref {
    int pos;
    uint32_t flags;
} keyref;

/* The keys of argv[0..argc) for `cmd` (already resolved, arity already
 * checked), in the order redis-server's COMMAND GETKEYSANDFLAGS lists them,
 * including keys of commands with movable keys (EVAL/FCALL numkeys, SORT
 * ... STORE, ZUNIONSTORE, MIGRATE, XREAD STREAMS, GEORADIUS STORE ...).
 * Writes at most `max` entries to out and returns how many keys there are
 * (more than max: call again with a larger buffer), or -1 when the
 * arguments are invalid for key extraction (a numkeys out of range: COMMAND
 * GETKEYS answers "ERR Invalid arguments specified for command", unless
 * the command is CMD_NO_MANDATORY_KEYS: then an empty list, as for 0).
 * Permission checks treat -1 as no keys, as Redis does: the command then
 * rejects its own arguments. Allocation-free. */
int command_keys(const struct command *cmd, const span *argv, int argc, keyref *out, int max);

/* ---- the specifications as data (keyspec_table.c, generated) ---------- */

enum { KS_BS_INDEX = 1, KS_BS_KEYWORD, KS_BS_UNKNOWN };  /* begin_search type */
enum { KS_FK_RANGE = 1, KS_FK_KEYNUM, KS_FK_UNKNOWN };   /* find_keys type */

/* One key specification. begin_search: index bs_pos, or `keyword` searched
 * from bs_pos (negative: from the end, backwards). find_keys: a range
 * (fk_a lastkey, fk_b keystep, fk_c limit) or a key count (fk_a keynumidx,
 * fk_b firstkey, fk_c keystep), relative to where the search began. */
typedef struct keyspec {
    uint32_t flags;             /* KS_* */
    uint8_t bs, fk;             /* KS_BS_*, KS_FK_* */
    int16_t bs_pos;
    const char *keyword;
    int16_t fk_a, fk_b, fk_c;
    const char *notes;          /* NULL or COMMAND INFO's notes */
} keyspec;

/* The procedure Redis 7.0 completes (or, for variable flags, replaces) the
 * specs of a command with (keyspec_proc.c). */
typedef enum keyspec_proc {
    KSP_NONE = 0,
    KSP_EVAL,       /* argv[2] counts the keys from argv[3] (EVAL*, FCALL*) */
    KSP_ZSTORE,     /* argv[2] counts the keys from argv[3], argv[1] the destination */
    KSP_NUMKEYS_1,  /* argv[1] counts the keys from argv[2] */
    KSP_NUMKEYS_2,  /* argv[2] counts the keys from argv[3] (after a timeout) */
    KSP_SORT, KSP_SORT_RO, KSP_MIGRATE, KSP_GEORADIUS, KSP_XREAD, KSP_SET, KSP_BITFIELD,
} keyspec_proc;

/* A command's row: full name ("client|kill"), tips (NULL-terminated, or
 * NULL), key specs. */
typedef struct cmd_keyinfo {
    const char *name;
    const char *const *tips;
    const keyspec *specs;
    int nspecs;
    keyspec_proc proc;
} cmd_keyinfo;

extern const cmd_keyinfo keyspec_table[];   /* sorted by name */

/* ---- COMMAND DOCS (keyspec_docs.c, generated) -------------------------- */

#define DA_OPTIONAL       (1u << 0)   /* argument flags */
#define DA_MULTIPLE       (1u << 1)
#define DA_MULTIPLE_TOKEN (1u << 2)
#define DOC_DEPRECATED    (1u << 0)   /* command doc flags */
#define DOC_SYSCMD        (1u << 1)

/* One argument of a command's syntax; a block or oneof has arguments. */
typedef struct docarg {
    const char *name, *type;
    int key_spec_index;               /* -1: none */
    const char *token, *since, *deprecated_since;
    uint32_t flags;                   /* DA_* */
    const struct docarg *args;
    int nargs;
} docarg;

/* The documentation of keyspec_table[i] is keyspec_docs[i]. */
typedef struct cmd_docinfo {
    uint32_t doc_flags;               /* DOC_* */
    const char *deprecated_since, *replaced_by;
    const char *const *history;       /* version, text, version, text, ..., NULL */
    const docarg *args;
    int nargs;
} cmd_docinfo;

extern const cmd_docinfo keyspec_docs[];
extern const size_t keyspec_table_len;

/* The row of a full name, or NULL (a command Redis 7.0 does not have). */
const cmd_keyinfo *keyspec_find(const char *fullname);
/* Attach every command's row to it (cmd->keyinfo); called by commands_init. */
void keyspec_attach_all(void);
/* The command has keys COMMAND GETKEYS can look for (else "ERR The command
 * has no key arguments"): a procedure, or a spec not marked NOT_KEY. */
int keyspec_has_keys(const struct command *cmd);
/* The procedure part of command_keys (keyspec_proc.c): the keys `proc`
 * finds, as command_keys counts them (0: none or invalid arguments). */
/* strcasecmp(argument, word) == 0 as Redis compares arguments to option
 * names: the argument up to its first NUL byte. */
int keyspec_arg_is(span a, const char *word);
int keyspec_proc_keys(keyspec_proc proc, const span *argv, int argc, keyref *out, int max);

#endif
