/* acl.c - ACL users and permission checks (Redis 7.0's model; see acl.h).
 *
 * Every command and subcommand gets an id (its bit in a selector's
 * bitmap) and a category mask from its table entry's `acl` field. Users are
 * kept in a name-sorted array (ACL USERS order). The default user is never
 * deleted; a client whose `user` is NULL runs as it. CONFIG SET requirepass
 * is mirrored into the default user's passwords when it changes.
 */
#include "acl.h"
#include "acl_ghost.h"
#include "command.h"
#include "cmd_debug.h"
#include "keyspec.h"
#include "pubsub.h"
#include "reply.h"
#include "server.h"
#include "sha256.h"
#include "util.h"
#include "zmalloc.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *const cat_names[] = {"keyspace", "read", "write", "set", "sortedset", "list", "hash",
                                        "string", "bitmap", "hyperloglog", "geo", "stream", "pubsub", "admin",
                                        "fast", "slow", "blocking", "dangerous", "connection", "transaction",
                                        "scripting"};
#define NCATS ((int)(sizeof cat_names / sizeof cat_names[0]))

enum { CH_NONE = 0, CH_PUBLISH, CH_SUBSCRIBE, CH_PSUBSCRIBE };

static struct {
    command *cmds[ACL_MAX_CMDS];
    uint32_t cats[ACL_MAX_CMDS];
    uint8_t chan[ACL_MAX_CMDS];
    uint8_t counted[ACL_MAX_CMDS]; /* in Redis 7.0's category counts (acl_ghost.h) */
    int ncmds;
    acl_user **users;
    int nusers, cap;
    acl_user *def;
    char *requirepass_seen;     /* the requirepass last mirrored into default (bytes) */
    size_t requirepass_seen_len;
    acl_user *dead;             /* see dead_user() */
    long long denied[5];        /* INFO acl_access_denied_*, by ACL_DENIED_* */
} A;

int acl_category_count(void) { return NCATS; }
const char *acl_category_name(int i) { return cat_names[i]; }

int acl_category_by_name(const char *name, size_t len) {
    for (int i = 0; i < NCATS; i++)
        if (strlen(cat_names[i]) == len && strncasecmp(cat_names[i], name, len) == 0) return i;
    return -1;
}

static uint32_t parse_cats(const char *s) {
    uint32_t m = 0;
    while (s && *s) {
        while (*s == ' ' || *s == '@') s++;
        size_t n = strcspn(s, " ");
        int i = acl_category_by_name(s, n);
        if (i >= 0) m |= 1u << i;
        s += n;
    }
    return m;
}

static int chan_kind(const command *c) {
    const char *n = c->fullname;
    if (!strcmp(n, "publish") || !strcmp(n, "spublish")) return CH_PUBLISH;
    if (!strcmp(n, "subscribe") || !strcmp(n, "ssubscribe")) return CH_SUBSCRIBE;
    if (!strcmp(n, "psubscribe")) return CH_PSUBSCRIBE;
    return CH_NONE;
}

static int by_fullname(const void *a, const void *b) {
    return strcmp((*(command *const *)a)->fullname, (*(command *const *)b)->fullname);
}

static void collect(command *c, void *ud) {
    (void)ud;
    if (A.ncmds < ACL_FUTURE_BIT) A.cmds[A.ncmds++] = c;
}

/* Only the commands the dispatcher finds (a name registered twice counts once). */
static void collect_real(command *c, void *ud) {
    command *top = c->parent ? c->parent : c;
    if (command_lookup_orig(top->name, strlen(top->name)) == top) collect(c, ud);
}

/* Ghost commands (acl_ghost.h) as command structs, made once: a container
 * with its subcommands in a {0}-terminated array, as in a group table. */
static void add_ghosts(void) {
    static int made;
    if (made) return;
    made = 1;
    for (int i = 0; i < acl_ghost_count(); i++) {
        const acl_ghost *g = acl_ghost_at(i);
        if (strchr(g->fullname, '|') || command_lookup_orig(g->fullname, strlen(g->fullname))) continue;
        int nsub = 0;
        size_t plen = strlen(g->fullname);
        for (int j = 0; j < acl_ghost_count(); j++) {
            const char *f = acl_ghost_at(j)->fullname;
            nsub += !strncmp(f, g->fullname, plen) && f[plen] == '|';
        }
        command *c = zcalloc(sizeof *c);
        c->name = g->fullname;
        c->acl = g->cats;
        snprintf(c->fullname, sizeof c->fullname, "%s", g->fullname);
        if (nsub) c->subcmds = zcalloc(sizeof *c->subcmds * (size_t)(nsub + 1));
        for (int j = 0, k = 0; j < acl_ghost_count() && nsub; j++) {
            const char *f = acl_ghost_at(j)->fullname;
            if (strncmp(f, g->fullname, plen) || f[plen] != '|') continue;
            command *sub = &c->subcmds[k++];
            sub->name = f + plen + 1;
            sub->acl = acl_ghost_at(j)->cats;
            sub->parent = c;
            snprintf(sub->fullname, sizeof sub->fullname, "%s", f);
        }
        collect(c, NULL);
        for (command *sub = c->subcmds; sub && sub->name; sub++) collect(sub, NULL);
    }
}

command *acl_command_by_fullname(const char *name, size_t len) {
    char low[64];
    if (len == 0 || len >= sizeof low) return NULL;
    for (size_t i = 0; i < len; i++) low[i] = (char)((name[i] >= 'A' && name[i] <= 'Z') ? name[i] + 32 : name[i]);
    low[len] = '\0';
    int lo = 0, hi = A.ncmds - 1;
    while (lo <= hi) {
        int mid = (lo + hi) / 2;
        int r = strcmp(A.cmds[mid]->fullname, low);
        if (r == 0) return A.cmds[mid];
        if (r < 0) lo = mid + 1;
        else hi = mid - 1;
    }
    return NULL;
}

int acl_command_counted(int id) { return A.counted[id]; }

int acl_command_count(void) { return A.ncmds; }
command *acl_command_by_id(int id) { return id >= 0 && id < A.ncmds ? A.cmds[id] : NULL; }
uint32_t acl_command_cats(int id) { return A.cats[id]; }

/* Commands are sorted by full name so ids are stable from run to run; a
 * lookup is a binary search by name. */
int acl_command_id(const command *cmd) {
    if (cmd->acl_id1 > 0 && cmd->acl_id1 <= A.ncmds && A.cmds[cmd->acl_id1 - 1] == cmd) return cmd->acl_id1 - 1;
    int lo = 0, hi = A.ncmds - 1;
    while (lo <= hi) {
        int mid = (lo + hi) / 2;
        int r = strcmp(A.cmds[mid]->fullname, cmd->fullname);
        if (r == 0) return mid;
        if (r < 0) lo = mid + 1;
        else hi = mid - 1;
    }
    return -1;
}

static uint32_t client_flags_for_new(void);

void acl_init(void) {
    A.ncmds = 0;
    command_foreach(collect_real, NULL);
    add_ghosts();
    qsort(A.cmds, (size_t)A.ncmds, sizeof A.cmds[0], by_fullname);
    for (int i = 0; i < A.ncmds; i++) {
        A.cmds[i]->acl_id1 = i + 1; /* acl_command_id() without a search on the command path */
        A.cats[i] = parse_cats(A.cmds[i]->acl);
        A.chan[i] = (uint8_t)chan_kind(A.cmds[i]);
        A.counted[i] = (uint8_t)acl_counted_like_redis70(A.cmds[i]->fullname);
    }
    if (!A.def) {
        A.def = acl_user_new("default", 7);
        acl_user_set(A.def, "+@all", 5);
        acl_user_set(A.def, "~*", 2);
        acl_user_set(A.def, "&*", 2);
        acl_user_set(A.def, "on", 2);
        acl_user_set(A.def, "nopass", 6);
        acl_user_add(A.def);
    }
    client_initial_flags = client_flags_for_new;
    client_user_name = acl_client_username;
}

/* ------------------------------------------------------------ users */

/* requirepass is binary-safe: its bytes are compared and hashed whole. */
static void sync_requirepass(void) {
    const char *rp = srv.cfg.requirepass ? srv.cfg.requirepass : "";
    size_t n = srv.cfg.requirepass_len;
    if (A.requirepass_seen && A.requirepass_seen_len == n && !memcmp(A.requirepass_seen, rp, n)) return;
    int first = A.requirepass_seen == NULL;
    zfree(A.requirepass_seen);
    A.requirepass_seen = zmalloc(n + 1);
    memcpy(A.requirepass_seen, rp, n + 1);
    A.requirepass_seen_len = n;
    if (first && !n) return; /* start-up without requirepass: default stays nopass */
    acl_set_requirepass(rp, n);
}

void acl_set_requirepass(const char *pass, size_t n) {
    acl_user_set(A.def, "resetpass", 9);
    if (n) {
        char *op = zmalloc(n + 2);
        op[0] = '>';
        memcpy(op + 1, pass, n);
        op[n + 1] = '\0';
        acl_user_set(A.def, op, n + 1);
        zfree(op);
    } else {
        acl_user_set(A.def, "nopass", 6);
    }
    acl_user_changed(A.def);
}

acl_user *acl_default_user(void) {
    sync_requirepass();
    return A.def;
}

static int name_cmp(const char *a, size_t alen, const char *b, size_t blen) {
    int r = memcmp(a, b, alen < blen ? alen : blen);
    if (r) return r;
    return alen < blen ? -1 : alen > blen;
}

/* Index of the first user not below name. */
static int lower_bound(const char *name, size_t len) {
    int lo = 0, hi = A.nusers;
    while (lo < hi) {
        int mid = (lo + hi) / 2;
        if (name_cmp(A.users[mid]->name, A.users[mid]->namelen, name, len) < 0) lo = mid + 1;
        else hi = mid;
    }
    return lo;
}

acl_user *acl_user_find(const char *name, size_t len) {
    sync_requirepass();
    int i = lower_bound(name, len);
    if (i < A.nusers && !name_cmp(A.users[i]->name, A.users[i]->namelen, name, len)) return A.users[i];
    return NULL;
}

int acl_user_count(void) {
    sync_requirepass();
    return A.nusers;
}
acl_user *acl_user_at(int i) { return A.users[i]; }

void acl_user_add(acl_user *u) {
    if (A.nusers == A.cap) {
        A.cap = A.cap ? A.cap * 2 : 8;
        A.users = zrealloc(A.users, sizeof *A.users * (size_t)A.cap);
    }
    int i = lower_bound(u->name, u->namelen);
    memmove(A.users + i + 1, A.users + i, sizeof *A.users * (size_t)(A.nusers - i));
    A.users[i] = u;
    A.nusers++;
}

acl_user *acl_user_new(const char *name, size_t len) {
    acl_user *u = zcalloc(sizeof *u);
    u->name = zstrndup(name, len);
    u->namelen = len;
    u->flags = AU_DISABLED;
    u->sel = acl_selector_new(AS_ROOT | (acl_pubsub_default_all() ? AS_ALLCHANNELS : 0));
    return u;
}

void acl_user_free(acl_user *u) {
    if (!u) return;
    while (u->sel) {
        acl_selector *n = u->sel->next;
        acl_selector_free(u->sel);
        u->sel = n;
    }
    zfree(u->pass);
    zfree(u->name);
    zfree(u);
}

void acl_user_copy_into(acl_user *dst, const acl_user *src) {
    while (dst->sel) {
        acl_selector *n = dst->sel->next;
        acl_selector_free(dst->sel);
        dst->sel = n;
    }
    dst->flags = src->flags;
    zfree(dst->pass);
    dst->npass = src->npass;
    dst->pass = src->npass ? zmalloc(sizeof *dst->pass * (size_t)src->npass) : NULL;
    if (src->npass) memcpy(dst->pass, src->pass, sizeof *dst->pass * (size_t)src->npass);
    acl_selector **tail = &dst->sel;
    for (const acl_selector *s = src->sel; s; s = s->next) {
        *tail = acl_selector_dup(s);
        tail = &(*tail)->next;
    }
}

acl_user *acl_user_dup(const acl_user *u) {
    acl_user *d = zcalloc(sizeof *d);
    d->name = zstrndup(u->name, u->namelen);
    d->namelen = u->namelen;
    acl_user_copy_into(d, u);
    return d;
}

/* The user of clients whose user was deleted, until they are freed. */
static acl_user *dead_user(void) {
    if (!A.dead) A.dead = acl_user_new("", 0);
    return A.dead;
}

/* Disconnects every client authenticated as u (not the one running the
 * command: it is closed after its reply, as Redis does). */
static void kill_clients_of(acl_user *u) {
    for (client *c = srv.clients; c; c = c->next) {
        if (c->user != u) continue;
        c->user = dead_user(); /* never dangling, and allowed nothing until it is freed */
        c->flags |= CF_ACL_CHECK;
        if (c == srv.current_client) c->flags |= CF_CLOSE_AFTER_REPLY;
        else client_close_async(c);
    }
}

static void unregister(acl_user *u) {
    for (int i = 0; i < A.nusers; i++) {
        if (A.users[i] != u) continue;
        memmove(A.users + i, A.users + i + 1, sizeof *A.users * (size_t)(A.nusers - i - 1));
        A.nusers--;
        return;
    }
}

void acl_user_delete(acl_user *u) {
    if (u == A.def) return;
    kill_clients_of(u);
    unregister(u);
    acl_user_free(u);
}

void acl_users_replace(acl_user **users, int n, acl_user *def) {
    while (A.nusers > 0) {
        acl_user *u = A.users[A.nusers - 1];
        if (u == A.def) {
            unregister(u);
            continue;
        }
        acl_user_delete(u);
    }
    acl_user_add(A.def);
    if (def) acl_user_copy_into(A.def, def);
    for (int i = 0; i < n; i++) acl_user_add(users[i]);
    zfree(users);
    acl_user_changed(A.def);
}

int acl_user_unrestricted(const acl_user *u) {
    int need = AS_ALLCMDS | AS_ALLKEYS | AS_ALLCHANNELS;
    return (u->sel->flags & need) == need;
}

static uint32_t client_flags_for_new(void) {
    acl_user *d = acl_default_user();
    uint32_t f = 0;
    if ((d->flags & AU_NOPASS) && !(d->flags & AU_DISABLED)) f |= CF_AUTHENTICATED;
    if (!acl_user_unrestricted(d)) f |= CF_ACL_CHECK;
    return f;
}

static int channel_revoked(span name, int is_pattern, void *ud) {
    return acl_check_channel(ud, name.p, name.len, is_pattern) != ACL_OK;
}

void acl_user_changed(acl_user *u) {
    int check = !acl_user_unrestricted(u);
    for (client *c = srv.clients; c; c = c->next) {
        if (acl_client_user(c) != u) continue;
        if (c->pubsub && pubsub_client_any(c, channel_revoked, u)) { /* as Redis 7.0: subscribers are disconnected */
            if (c == srv.current_client) c->flags |= CF_CLOSE_AFTER_REPLY;
            else client_close_async(c);
        }
        if (check) c->flags |= CF_ACL_CHECK;
        else c->flags &= ~(uint32_t)CF_ACL_CHECK;
    }
}

int acl_user_check_password(const acl_user *u, const char *pass, size_t len) {
    if (u->flags & AU_NOPASS) return 1;
    char h[65];
    sha256_hex(pass, len, h);
    int ok = 0;
    for (int i = 0; i < u->npass; i++) {
        unsigned char diff = 0;
        for (int j = 0; j < 64; j++) diff |= (unsigned char)(h[j] ^ u->pass[i][j]);
        ok |= diff == 0;
    }
    return ok;
}

/* ---------------------------------------------------------- clients */

const char *acl_client_username(const client *c) { return acl_client_user(c)->name; }

int acl_authenticate(client *c, span user, span pass) {
    acl_user *u = acl_user_find(user.p, user.len);
    if (u && !(u->flags & AU_DISABLED) && acl_user_check_password(u, pass.p, pass.len)) {
        c->user = u == acl_default_user() ? NULL : u;
        c->flags |= CF_AUTHENTICATED;
        if (acl_user_unrestricted(u)) c->flags &= ~(uint32_t)CF_ACL_CHECK;
        else c->flags |= CF_ACL_CHECK;
        return 1;
    }
    A.denied[ACL_DENIED_AUTH]++;
    span obj = c->argc ? c->argv[0] : (span){"AUTH", 4}; /* the command as typed: AUTH or HELLO */
    acl_log_add(c, ACL_DENIED_AUTH, (c->flags & CF_MULTI) ? ACL_CTX_MULTI : ACL_CTX_TOPLEVEL, obj.p, obj.len, user.p,
                user.len);
    return 0;
}

/* ----------------------------------------------------------- checks */

static int first_arg_allowed(const acl_selector *s, int id, const command *cmd, const span *argv, int argc) {
    int idx = cmd->parent ? 2 : 1;
    if (argc <= idx) return 0;
    for (int i = 0; i < s->nfa; i++) {
        if (s->fa[i].id != id) continue;
        for (int j = 0; j < s->fa[i].args.n; j++) {
            const acl_str *a = &s->fa[i].args.v[j];
            if (a->len == argv[idx].len && !strncasecmp(a->p, argv[idx].p, a->len)) return 1;
        }
    }
    return 0;
}

/* Patterns like "user:*" are most of what key rules hold: a byte loop (the
 * prefixes are short) instead of a glob match or a memcmp call. */
static inline int has_prefix(span key, const char *pre, size_t n) {
    if (key.len < n) return 0;
    for (size_t i = 0; i < n; i++)
        if (key.p[i] != pre[i]) return 0;
    return 1;
}

static int key_allowed(const acl_selector *s, span key, uint32_t ksflags) {
    int need = 0;
    if (ksflags & KS_ACCESS) need |= AK_READ;
    if (ksflags & (KS_INSERT | KS_DELETE | KS_UPDATE)) need |= AK_WRITE;
    for (int i = 0; i < s->keys.n; i++) {
        const acl_str *p = &s->keys.v[i];
        if ((p->flags & need) != need) continue;
        if (p->prefix >= 0 ? has_prefix(key, p->p, (size_t)p->prefix) : glob_match(p->p, p->len, key.p, key.len, 0))
            return 1;
    }
    return 0;
}

static int channel_in(const acl_strs *l, const char *ch, size_t len, int is_pattern) {
    for (int i = 0; i < l->n; i++) {
        const acl_str *p = &l->v[i];
        if (is_pattern ? (p->len == len && !memcmp(p->p, ch, len)) : glob_match(p->p, p->len, ch, len, 0)) return 1;
    }
    return 0;
}

#define MAXK 64

static int check_keys(const acl_selector *s, const command *cmd, const span *argv, int argc, int *errpos) {
    if (cmd->key1_pos && cmd->key1_pos < argc) { /* GET, SET, INCR...: command_keys' one key, without the walk */
        if (key_allowed(s, argv[cmd->key1_pos], cmd->key1_flags)) return ACL_OK;
        *errpos = cmd->key1_pos;
        return ACL_DENIED_KEY;
    }
    keyref buf[MAXK], *ks = buf;
    int n = command_keys(cmd, argv, argc, ks, MAXK);
    if (n > MAXK) {
        ks = zmalloc(sizeof *ks * (size_t)n);
        n = command_keys(cmd, argv, argc, ks, n);
    }
    int r = ACL_OK;
    for (int i = 0; i < n && r == ACL_OK; i++) {
        if (!key_allowed(s, argv[ks[i].pos], ks[i].flags)) {
            r = ACL_DENIED_KEY;
            *errpos = ks[i].pos;
        }
    }
    if (ks != buf) zfree(ks);
    return r;
}

static int check_channels(const acl_selector *s, int kind, const span *argv, int argc, int *errpos) {
    int last = kind == CH_PUBLISH ? 2 : argc;
    for (int i = 1; i < last && i < argc; i++) {
        if (!channel_in(&s->channels, argv[i].p, argv[i].len, kind == CH_PSUBSCRIBE)) {
            *errpos = i;
            return ACL_DENIED_CHANNEL;
        }
    }
    return ACL_OK;
}

static int selector_check(const acl_selector *s, const command *cmd, int id, const span *argv, int argc,
                          int *errpos) {
    if (!(s->flags & AS_ALLCMDS) && !(cmd->flags & CMD_NO_AUTH) && !acl_selector_bit(s, id) &&
        !first_arg_allowed(s, id, cmd, argv, argc))
        return ACL_DENIED_CMD;
    if (!(s->flags & AS_ALLKEYS) && (cmd->first_key || (cmd->flags & CMD_MOVABLE_KEYS))) {
        int r = check_keys(s, cmd, argv, argc, errpos);
        if (r != ACL_OK) return r;
    }
    if (!(s->flags & AS_ALLCHANNELS) && A.chan[id] != CH_NONE)
        return check_channels(s, A.chan[id], argv, argc, errpos);
    return ACL_OK;
}

/* No selector allows it: of the selectors' denials, Redis reports the
 * highest reason (channel > key > command), and among equal ones the one at
 * the latest argument. */
int acl_check_cmd(const acl_user *u, const command *cmd, const span *argv, int argc, int *errpos) {
    int id = acl_command_id(cmd);
    int relevant = ACL_DENIED_CMD, pos = 0;
    for (const acl_selector *s = u->sel; s; s = s->next) {
        int p = 0;
        int r = selector_check(s, cmd, id, argv, argc, &p);
        if (r == ACL_OK) return ACL_OK;
        if (r > relevant || (r == relevant && p > pos)) { /* channel over key over command, then the later argument */
            relevant = r;
            pos = p;
        }
    }
    *errpos = pos;
    return relevant;
}

int acl_check_channel(const acl_user *u, const char *ch, size_t len, int is_pattern) {
    for (const acl_selector *s = u->sel; s; s = s->next)
        if ((s->flags & AS_ALLCHANNELS) || channel_in(&s->channels, ch, len, is_pattern)) return ACL_OK;
    return ACL_DENIED_CHANNEL;
}

long long acl_denied_count(int reason) { return A.denied[reason]; }
void acl_denied_reset(void) { memset(A.denied, 0, sizeof A.denied); }

int acl_check_client(client *c, const command *cmd, const span *argv, int argc, int ctx, int *errpos) {
    acl_user *u = acl_client_user(c);
    *errpos = 0;
    int r = acl_check_cmd(u, cmd, argv, argc, errpos);
    if (r == ACL_OK) return r;
    A.denied[r]++;
    if (r == ACL_DENIED_CMD)
        acl_log_add(c, r, ctx, cmd->fullname, strlen(cmd->fullname), u->name, u->namelen);
    else
        acl_log_add(c, r, ctx, argv[*errpos].p, argv[*errpos].len, u->name, u->namelen);
    return r;
}

void acl_denied_message(char *buf, size_t cap, int reason, const command *cmd) {
    if (reason == ACL_DENIED_CMD)
        snprintf(buf, cap, "NOPERM this user has no permissions to run the '%s' command", cmd->fullname);
    else if (reason == ACL_DENIED_KEY)
        snprintf(buf, cap, "NOPERM this user has no permissions to access one of the keys used as arguments");
    else
        snprintf(buf, cap, "NOPERM this user has no permissions to access one of the channels used as arguments");
}

/* DEBUG refused by enable-debug-command: Redis rejects it before the ACL
 * check (a "protected" command), so the command's own error must win;
 * cmd_debug replies it. */
static int debug_refused(const client *c, const command *cmd) {
    return cmd->proc == cmd_debug && !debug_command_allowed(c);
}

int acl_allows_fast(const client *c, const command *cmd) {
    const acl_selector *s = acl_client_user(c)->sel;
    int id = cmd->acl_id1 - 1;
    if (id < 0 || A.chan[id] != CH_NONE) return 0;
    if (!(s->flags & AS_ALLCMDS) && !acl_selector_bit(s, id)) return 0;
    if ((s->flags & AS_ALLKEYS) || !(cmd->first_key || (cmd->flags & CMD_MOVABLE_KEYS))) return 1;
    return cmd->key1_pos && cmd->key1_pos < c->argc && key_allowed(s, c->argv[cmd->key1_pos], cmd->key1_flags);
}

int acl_dispatch_check(client *c, const command *cmd) {
    int pos;
    if (debug_refused(c, cmd)) return ACL_OK;
    return acl_check_client(c, cmd, c->argv, c->argc, (c->flags & CF_MULTI) ? ACL_CTX_MULTI : ACL_CTX_TOPLEVEL, &pos);
}

int acl_exec_denied(client *c, const command *cmd) {
    int pos;
    int r = acl_check_client(c, cmd, c->argv, c->argc, ACL_CTX_MULTI, &pos);
    if (r == ACL_OK) return 0;
    const char *why = r == ACL_DENIED_CMD   ? "no permission to execute the command or subcommand"
                      : r == ACL_DENIED_KEY ? "no permission to touch the specified keys"
                                            : "no permission to access one of the channels used as arguments";
    reply_errorf(c, "NOPERM ACLs rules changed between the moment the transaction was accumulated and the EXEC "
                    "call. This command is no longer allowed for the following reason: %s", why);
    return 1;
}

const char *acl_script_refusal(client *caller, const command *cmd, const span *argv, int argc) {
    int pos;
    switch (acl_check_client(caller, cmd, argv, argc, ACL_CTX_LUA, &pos)) {
    case ACL_OK: return NULL;
    case ACL_DENIED_CMD: return "ERR The user executing the script can't run this command or subcommand";
    case ACL_DENIED_KEY:
        return "ERR The user executing the script can't access at least one of the keys mentioned in the command "
               "arguments";
    default: return "ERR The user executing the script can't publish to the channel mentioned in the command";
    }
}

void acl_client_reset_auth(client *c) {
    c->user = NULL;
    uint32_t f = client_flags_for_new();
    c->flags = (c->flags & ~(uint32_t)(CF_AUTHENTICATED | CF_ACL_CHECK)) | f;
}

/* A selector that may run the command and read any key: allkeys, or a
 * "*" pattern with read permission. */
static int selector_reads_all(const acl_selector *s) {
    if (s->flags & AS_ALLKEYS) return 1;
    for (int i = 0; i < s->keys.n; i++)
        if ((s->keys.v[i].flags & AK_READ) && s->keys.v[i].len == 1 && s->keys.v[i].p[0] == '*') return 1;
    return 0;
}

int acl_client_reads_all_keys(client *c) {
    if (!(c->flags & CF_ACL_CHECK) || !c->cmd) return 1;
    const acl_user *u = acl_client_user(c);
    int id = acl_command_id(c->cmd);
    for (const acl_selector *s = u->sel; s; s = s->next) {
        int pos;
        if (selector_check(s, c->cmd, id, c->argv, c->argc, &pos) == ACL_OK && selector_reads_all(s)) return 1;
    }
    return 0;
}
