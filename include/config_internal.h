/* config_internal.h - the configuration internals, private to the
 * config_*.c files (config.c, config_table.c, config_load.c, config_cmd.c)
 * and to their unit tests and fuzz targets. The rest of the server uses
 * config.h only.
 *
 * Why: config.c owns the directive table and the value rules, config_load.c
 * the file and command-line loader, config_cmd.c the CONFIG command; this
 * header is the one place where the functions they share are declared.
 * Entries are addressed by index (0 .. config_count()-1); an alias entry
 * resolves to its target with config_real().
 */
#ifndef FERRY_CONFIG_INTERNAL_H
#define FERRY_CONFIG_INTERNAL_H

#include <stddef.h>

#include "config.h"

/* Entry flags, as config_flags() returns them. */
#define CFG_IMM 1  /* CONFIG SET refuses: can't set immutable config */
#define CFG_PROT 2 /* protected: needs enable-protected-configs */
#define CFG_HID 4  /* hidden: CONFIG GET matches it only by exact name */
#define CFG_READ 8 /* kept in the string store but read where it is used (config_get_by_name): no warning */
#define CFG_NOLOAD 16 /* CONFIG SET refuses it while a dataset is loading (Redis's DENY_LOADING_CONFIG) */

/* For tests and fuzzers: bit 1 = no file access (include), bit 2 = no
 * "ignored directive" warnings on stderr. */
extern int config_sandbox;

/* ---- config.c: the table and the values */
int config_count(void);
const char *config_name(int i);
int config_real(int i);
unsigned config_flags(int i);
const char *config_default(int i);
int config_is_multiarg(int i);   /* the value is the rest of the line (save, bind ...) */
int config_is_stored(int i);     /* not used by ferry: kept as a string, a warning when set */
/* Exact, case-insensitive; includes hidden entries and aliases. -1 if none. */
int config_lookup(const char *name, size_t len);
/* Entry i's current value as CONFIG GET prints it (zmalloc'd). */
char *config_get(const ferry_config *cfg, int i);
/* Validates text for entry i: 0 and the zmalloc'd canonical value in
 * *canon, or -1 with Redis's reason in err. */
int config_parse(const ferry_config *cur, int i, const char *val, char **canon, char *err, size_t errlen);
/* Stores a canonical value (from config_parse, or a default). */
void config_apply(ferry_config *cfg, int i, const char *canon);
/* The lines CONFIG REWRITE writes for entry i (zmalloc'd, "" = none). */
char *config_rewrite_lines(const ferry_config *cfg, int i, int *is_default);
/* s quoted for a config line (zmalloc'd). */
char *config_repr(const char *s);
/* Frees an argument vector from config_split_args (strings and vector). */
void config_free_args(int argc, char **argv);
/* Entry i holds bytes (requirepass, masterauth): its canonical text is
 * escaped (config_bin.c), and config_parse takes that escaped text. */
int config_is_binary(int i);

/* ---- config_bin.c: the escaped canonical text of binary entries */
struct sbuf;
/* Appends len bytes escaped: NUL as "\0", backslash as "\\". */
void config_bin_append(struct sbuf *b, const char *p, size_t len);
/* len bytes as escaped canonical text (zmalloc'd). */
char *config_bin_encode(const char *p, size_t len);
/* Unescapes s in place (NUL-terminated after the bytes); the byte count. */
size_t config_bin_decode(char *s);
/* The one escaped spelling of an escaped text (zmalloc'd). */
char *config_bin_canon(const char *text);
/* Stores the bytes of canon in *p / *len, freeing the old ones (NULL, 0 if empty). */
void config_bin_store(char **p, size_t *len, const char *canon);

/* ---- config_load.c: lines and files */
/* Splits a config line with redis.conf's rules (splitargs.h; a "\x00"
 * escape is refused). 0 and a zmalloc'd vector of zmalloc'd strings, or -1
 * on unbalanced quotes. */
int config_split_args(const char *line, int *argc_out, char ***argv_out);
/* The same with "\x00" allowed: *lens_out (zmalloc'd) holds each token's
 * length (the tokens are still NUL-terminated after their bytes). */
int config_split_args_bin(const char *line, int *argc_out, char ***argv_out, size_t **lens_out);
/* Loads config text on top of cfg (call config_defaults first). On error
 * returns -1 with a Redis-style explanation (several lines) in err. */
int config_load_string(ferry_config *cfg, const char *text, char *err, size_t errlen);
/* A whole file as a NUL-terminated zmalloc'd string, or NULL with errno. */
char *config_read_file(const char *path);
/* Removes leading and trailing " \t\r\n" in place (as Redis trims lines). */
void config_trim(char *s);

#endif
