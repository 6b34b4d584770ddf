/* acl.h - access control lists (Redis 7.0's ACL model): users, their
 * passwords and selectors (command bitmap, key and channel patterns), the
 * registry of users, the permission check the dispatcher runs for
 * restricted users, and the ACL LOG.
 *
 * A client's `user` is NULL for the default user. Clients whose user is
 * restricted carry CF_ACL_CHECK, so the dispatcher's fast path stays a flag
 * test for everybody else. Rules are parsed and described in acl_rules.c,
 * the log is acl_log.c, the ACL command cmd_acl.c, files acl_file.c.
 */
#ifndef FERRY_ACL_H
#define FERRY_ACL_H

#include <stddef.h>
#include <stdint.h>
#include "client.h"
#include "span.h"

struct command;

#define ACL_MAX_CMDS 1024                 /* command ids; the last bit means "future commands" (+@all) */
#define ACL_WORDS (ACL_MAX_CMDS / 64)
#define ACL_FUTURE_BIT (ACL_MAX_CMDS - 1)

/* user flags */
#define AU_ENABLED      0x01
#define AU_DISABLED     0x02
#define AU_NOPASS       0x04
#define AU_SANITIZE     0x08
#define AU_SKIP_SANITIZE 0x10

/* selector flags */
#define AS_ROOT        0x01
#define AS_ALLKEYS     0x02
#define AS_ALLCMDS     0x04
#define AS_ALLCHANNELS 0x08

/* key pattern permissions */
#define AK_READ  1
#define AK_WRITE 2
#define AK_ALL   3

/* check results (also the ACL LOG reasons) */
enum { ACL_OK = 0, ACL_DENIED_CMD, ACL_DENIED_KEY, ACL_DENIED_AUTH, ACL_DENIED_CHANNEL };
/* ACL LOG contexts */
enum { ACL_CTX_TOPLEVEL = 0, ACL_CTX_MULTI, ACL_CTX_LUA, ACL_CTX_MODULE };

typedef struct acl_str {
    char *p;
    size_t len;
    int flags;                  /* key patterns: AK_* */
    long prefix;                /* "literal*" with no other glob character: the literal's length
                                 * (matched with memcmp); -1 otherwise (glob_match) */
} acl_str;

typedef struct acl_strs {
    acl_str *v;
    int n, cap;
} acl_strs;

/* Allowed first arguments of an otherwise denied command (+select|0). */
typedef struct acl_firstargs {
    int id;
    acl_strs args;
} acl_firstargs;

typedef struct acl_selector {
    int flags;                  /* AS_* */
    uint64_t cmds[ACL_WORDS];   /* bit per command id */
    acl_firstargs *fa;
    int nfa;
    acl_strs keys;              /* key patterns with AK_* flags */
    acl_strs channels;
    struct acl_selector *next;
} acl_selector;

typedef struct acl_user {
    char *name;
    size_t namelen;
    int flags;                  /* AU_* */
    char (*pass)[65];           /* hex SHA-256 hashes, in order added */
    int npass;
    acl_selector *sel;          /* the root selector first, then the (...) ones */
} acl_user;

/* ---- commands (acl.c) */
/* Assigns ids and categories to every command of the table; creates the
 * default user. Called once the command table is built. */
void acl_init(void);
int acl_command_id(const struct command *cmd);
struct command *acl_command_by_id(int id);
int acl_command_count(void);    /* ids are 0 .. count-1 */
uint32_t acl_command_cats(int id);
/* Counted when choosing categories to describe a bitmap (Redis 7.0's table). */
int acl_command_counted(int id);
/* By full name ("config|get"), any case, Redis 7.0 commands ferry lacks
 * included (valid in rules, never run). */
struct command *acl_command_by_fullname(const char *name, size_t len);
/* Categories, in ACL CAT order. */
int acl_category_count(void);
const char *acl_category_name(int i);
int acl_category_by_name(const char *name, size_t len); /* index, -1 unknown */

/* ---- users (acl.c) */
acl_user *acl_default_user(void);
acl_user *acl_user_find(const char *name, size_t len);
/* Creates an empty user (off, resetpass, -@all, the acl-pubsub-default). */
acl_user *acl_user_new(const char *name, size_t len);
void acl_user_free(acl_user *u);
acl_user *acl_user_dup(const acl_user *u);
void acl_user_copy_into(acl_user *dst, const acl_user *src);
/* The registry, sorted by name (ACL USERS / LIST order). */
int acl_user_count(void);
acl_user *acl_user_at(int i);
void acl_user_add(acl_user *u);      /* takes ownership; name not registered */
/* Removes and frees u, disconnecting its clients. */
void acl_user_delete(acl_user *u);
/* Replaces every user but default by the given set (ACL LOAD), the default's
 * rules copied from `def` when not NULL; clients of replaced users are
 * disconnected. Takes ownership of users[]. */
void acl_users_replace(acl_user **users, int n, acl_user *def);
/* The user has all commands, keys and channels in its root selector. */
int acl_user_unrestricted(const acl_user *u);
/* After u changed: CF_ACL_CHECK of its clients, new clients' flags. */
void acl_user_changed(acl_user *u);
/* The user allows authentication with this password. */
int acl_user_check_password(const acl_user *u, const char *pass, size_t len);

/* ---- clients (acl.c) */
static inline acl_user *acl_client_user(const client *c) { return c->user ? c->user : acl_default_user(); }
const char *acl_client_username(const client *c);
/* AUTH / HELLO AUTH: 1 on success (client now authenticated as the user),
 * 0 on failure (logged in ACL LOG). */
int acl_authenticate(client *c, span user, span pass);
/* RESET: back to the default user, authenticated if it has nopass. */
void acl_client_reset_auth(client *c);
/* Keep the default user's password in step with CONFIG SET requirepass
 * (n bytes, NULs included, as Redis hashes them; n = 0: nopass). */
void acl_set_requirepass(const char *pass, size_t n);

/* ---- checks (acl.c) */
/* May u run cmd with argv? ACL_OK or a reason; *errpos: the argv index of
 * the denied key or channel. */
int acl_check_cmd(const acl_user *u, const struct command *cmd, const span *argv, int argc, int *errpos);
/* Checks the client's command; on denial logs it, replies nothing. */
int acl_check_client(client *c, const struct command *cmd, const span *argv, int argc, int ctx, int *errpos);
/* The dispatcher's check of c->argv (toplevel or multi context). */
int acl_dispatch_check(client *c, const struct command *cmd);
/* 1 when the user's root selector plainly allows c->argv (no channel, at most
 * one key, no first-argument rule): the dispatcher's fast path for restricted
 * users. 0 means "not sure": the full check (acl_dispatch_check) decides. */
int acl_allows_fast(const client *c, const struct command *cmd);
/* SORT's BY and GET patterns name keys no check saw: Redis allows them
 * only when a selector allowing the command may read every key. */
int acl_client_reads_all_keys(client *c);
/* EXEC's second check of a queued command: 1 when denied (error replied). */
int acl_exec_denied(client *c, const struct command *cmd);
/* redis.call from a script run by caller: NULL if allowed, else the error
 * (logged with context "lua"). */
const char *acl_script_refusal(client *caller, const struct command *cmd, const span *argv, int argc);
/* The -NOPERM text of a denial (no "-" or CRLF). */
void acl_denied_message(char *buf, size_t cap, int reason, const struct command *cmd);
int acl_check_channel(const acl_user *u, const char *ch, size_t len, int is_pattern);
/* INFO's acl_access_denied_{auth,cmd,key,channel}: by ACL_DENIED_*. */
long long acl_denied_count(int reason);
void acl_denied_reset(void);

/* ---- rules (acl_rules.c) */
/* Applies one rule to the user; 0 on success, else the error text. */
const char *acl_user_set(acl_user *u, const char *op, size_t len);
/* Applies rules[0..n) to u (a selector may span several rules: "(+get"
 * "~x)"); NULL on success, else the whole error text without "ERR "
 * (written to ebuf; *bad: the failing rule). */
const char *acl_user_set_rules(acl_user *u, const span *rules, int n, int *bad, char *ebuf, size_t ecap);
/* The same, returning the bare error (ACL_ERR_UNMATCHED for a "(" never
 * closed) with the failing rule copied to bad; ignore_unknown: unknown
 * command or category names are not errors (config lines are checked
 * before the command table exists). */
extern const char *const ACL_ERR_UNMATCHED;
const char *acl_user_apply_rules(acl_user *u, const span *rules, int n, int ignore_unknown, char *bad, size_t badcap);
/* Rules as ACL SETUSER reads them: "(a" "b" "c)" joined into "(a b c)".
 * NULL when a "(" is never closed (*bad: its index); else *outn rules,
 * released with acl_merged_free. */
span *acl_merge_selectors(const span *rules, int n, int *outn, char ***owned, int *bad);
void acl_merged_free(span *m, int k, char **owned);
/* Applies one selector rule (commands, keys, channels). */
const char *acl_selector_set(acl_selector *s, const char *op, size_t len);
acl_selector *acl_selector_new(int flags);
void acl_selector_free(acl_selector *s);
acl_selector *acl_selector_dup(const acl_selector *s);
int acl_selector_bit(const acl_selector *s, int id);
/* "user default on nopass ~* &* +@all" without the "user <name> " prefix. */
char *acl_describe_user(const acl_user *u);       /* zmalloc'd */
char *acl_describe_selector(const acl_selector *s); /* keys, channels, commands */
char *acl_describe_commands(const acl_selector *s); /* "+@all -get" */
void acl_key_pattern_str(char *buf, size_t cap, const acl_str *k, size_t *outlen);
/* acl-pubsub-default: 1 when new users get allchannels. */
int acl_pubsub_default_all(void);

/* ---- the ACL command (cmd_acl.c) */
extern const struct command_group acl_group;
/* ACL SAVE / LOAD, set by the server layer (acl_file.c): 0 done, 1 no
 * aclfile configured, -1 failed (message in err). */
extern int (*acl_file_save_hook)(char *err, size_t errlen);
extern int (*acl_file_load_hook)(char *err, size_t errlen);

/* ---- log (acl_log.c) */
void acl_log_add(client *c, int reason, int ctx, const char *object, size_t olen, const char *user, size_t ulen);
void acl_log_reply(client *c, long count);
void acl_log_reset(void);
void acl_log_trim(void);

#endif
