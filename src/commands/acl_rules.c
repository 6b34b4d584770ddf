/* acl_rules.c - the ACL rule language: applying SETUSER rules to a user and
 * its selectors, and describing a user back as rules (ACL LIST, GETUSER,
 * ACL SAVE).
 *
 * The describer follows Redis 7.0: a selector's commands are written as
 * +@all or -@all, then, greedily, the categories that best fit the bitmap
 * (most in common, fewest differences), then the single commands and first
 * arguments still differing.
 */
#include "acl.h"
#include "command.h"
#include "config.h"
#include "sbuf.h"
#include "server.h"
#include "sha256.h"
#include "splitargs.h"
#include "zmalloc.h"
#include <ctype.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

#define E_SYNTAX "Syntax error"
#define E_NOENT "Unknown command or category name in ACL"
#define E_KEYSTAR                                                                                                  \
    "Adding a pattern after the * pattern (or the 'allkeys' flag) is not valid and does not have any effect. Try " \
    "'resetkeys' to start with an empty list of patterns"
#define E_CHANSTAR                                                                                                     \
    "Adding a pattern after the * pattern (or the 'allchannels' flag) is not valid and does not have any effect. Try " \
    "'resetchannels' to start with an empty list of channels"
#define E_NODEV "The password you are trying to remove from the user does not exist"
#define E_BADHASH "The password hash must be exactly 64 characters and contain only lowercase hexadecimal characters"
#define E_CHILD "Allowing first-arg of a subcommand is not supported"

int acl_pubsub_default_all(void) {
    char *v = config_get_by_name(&srv.cfg, "acl-pubsub-default");
    int all = v && !strcmp(v, "allchannels");
    zfree(v);
    return all;
}

/* ------------------------------------------------------ string lists */

static int strs_find(const acl_strs *l, const char *p, size_t len) {
    for (int i = 0; i < l->n; i++)
        if (l->v[i].len == len && !memcmp(l->v[i].p, p, len)) return i;
    return -1;
}

/* The length of `lit` when the pattern is exactly lit + "*" and lit holds no
 * glob character (* ? [ \\): such a pattern matches what starts with lit. */
static long glob_literal_prefix(const char *p, size_t len) {
    if (len == 0 || p[len - 1] != '*') return -1;
    for (size_t i = 0; i + 1 < len; i++)
        if (p[i] == '*' || p[i] == '?' || p[i] == '[' || p[i] == '\\') return -1;
    return (long)len - 1;
}

static void strs_add(acl_strs *l, const char *p, size_t len, int flags) {
    if (l->n == l->cap) {
        l->cap = l->cap ? l->cap * 2 : 4;
        l->v = zrealloc(l->v, sizeof *l->v * (size_t)l->cap);
    }
    l->v[l->n].p = zstrndup(p, len);
    l->v[l->n].len = len;
    l->v[l->n].flags = flags;
    l->v[l->n].prefix = glob_literal_prefix(p, len);
    l->n++;
}

static void strs_clear(acl_strs *l) {
    for (int i = 0; i < l->n; i++) zfree(l->v[i].p);
    zfree(l->v);
    memset(l, 0, sizeof *l);
}

static void strs_copy(acl_strs *dst, const acl_strs *src) {
    memset(dst, 0, sizeof *dst);
    for (int i = 0; i < src->n; i++) strs_add(dst, src->v[i].p, src->v[i].len, src->v[i].flags);
}

/* --------------------------------------------------------- selectors */

acl_selector *acl_selector_new(int flags) {
    acl_selector *s = zcalloc(sizeof *s);
    s->flags = flags;
    return s;
}

static void reset_firstargs(acl_selector *s) {
    for (int i = 0; i < s->nfa; i++) strs_clear(&s->fa[i].args);
    zfree(s->fa);
    s->fa = NULL;
    s->nfa = 0;
}

static void reset_firstargs_for(acl_selector *s, int id) {
    for (int i = 0; i < s->nfa; i++) {
        if (s->fa[i].id != id) continue;
        strs_clear(&s->fa[i].args);
        s->fa[i] = s->fa[--s->nfa];
        return;
    }
}

static void add_firstarg(acl_selector *s, int id, const char *arg, size_t len) {
    acl_firstargs *f = NULL;
    for (int i = 0; i < s->nfa; i++)
        if (s->fa[i].id == id) f = &s->fa[i];
    if (!f) {
        s->fa = zrealloc(s->fa, sizeof *s->fa * (size_t)(s->nfa + 1));
        f = &s->fa[s->nfa++];
        memset(f, 0, sizeof *f);
        f->id = id;
    }
    for (int i = 0; i < f->args.n; i++)
        if (f->args.v[i].len == len && !strncasecmp(f->args.v[i].p, arg, len)) return;
    strs_add(&f->args, arg, len, 0);
}

void acl_selector_free(acl_selector *s) {
    if (!s) return;
    reset_firstargs(s);
    strs_clear(&s->keys);
    strs_clear(&s->channels);
    zfree(s);
}

acl_selector *acl_selector_dup(const acl_selector *s) {
    acl_selector *d = acl_selector_new(s->flags);
    memcpy(d->cmds, s->cmds, sizeof d->cmds);
    strs_copy(&d->keys, &s->keys);
    strs_copy(&d->channels, &s->channels);
    for (int i = 0; i < s->nfa; i++)
        for (int j = 0; j < s->fa[i].args.n; j++)
            add_firstarg(d, s->fa[i].id, s->fa[i].args.v[j].p, s->fa[i].args.v[j].len);
    return d;
}

int acl_selector_bit(const acl_selector *s, int id) {
    if (id < 0) return 0;
    return (int)((s->cmds[id / 64] >> (id % 64)) & 1);
}

static void set_bit(acl_selector *s, int id, int on) {
    if (id < 0) return;
    if (on) {
        s->cmds[id / 64] |= 1ull << (id % 64);
    } else {
        s->cmds[id / 64] &= ~(1ull << (id % 64));
        s->flags &= ~AS_ALLCMDS;
    }
}

/* The command, its first arguments and, for a container, every subcommand. */
static void change_perm(acl_selector *s, command *cmd, int allow) {
    int id = acl_command_id(cmd);
    set_bit(s, id, allow);
    reset_firstargs_for(s, id);
    for (command *sub = cmd->subcmds; sub && sub->name; sub++) set_bit(s, acl_command_id(sub), allow);
}

static void set_category(acl_selector *s, int cat, int allow) {
    for (int id = 0; id < acl_command_count(); id++)
        if (acl_command_cats(id) & (1u << cat)) change_perm(s, acl_command_by_id(id), allow);
}

static void set_all(acl_selector *s, int allow) {
    memset(s->cmds, allow ? 0xff : 0, sizeof s->cmds);
    if (allow) s->flags |= AS_ALLCMDS;
    else s->flags &= ~AS_ALLCMDS;
    reset_firstargs(s);
}

/* "name" or "container|sub", case-insensitive. */
static command *lookup_full(const char *p, size_t len) {
    const char *bar = memchr(p, '|', len);
    command *known = bar ? NULL : command_lookup_orig(p, len); /* the original names, also when renamed */
    if (!bar) return known ? known : acl_command_by_fullname(p, len);
    command *parent = command_lookup_orig(p, (size_t)(bar - p));
    if (!parent) return acl_command_by_fullname(p, len); /* a ghost's subcommand (acl_ghost.h) */
    if (!parent->subcmds) return NULL;
    span sub = {bar + 1, len - (size_t)(bar - p) - 1};
    if (memchr(sub.p, '|', sub.len)) return NULL;
    for (command *s = parent->subcmds; s->name; s++)
        if (span_eq_nocase(sub, s->name)) return s;
    return NULL;
}

static int has_spaces(const char *p, size_t len) {
    for (size_t i = 0; i < len; i++)
        if (isspace((unsigned char)p[i]) || p[i] == 0) return 1;
    return 0;
}

static const char *add_key_pattern(acl_selector *s, const char *op, size_t len) {
    if (s->flags & AS_ALLKEYS) return E_KEYSTAR;
    int flags = 0;
    size_t off = 1;
    if (op[0] == '%') {
        for (; off < len; off++) {
            char ch = (char)toupper((unsigned char)op[off]);
            if (ch == 'R' && !(flags & AK_READ)) flags |= AK_READ;
            else if (ch == 'W' && !(flags & AK_WRITE)) flags |= AK_WRITE;
            else if (op[off] == '~') {
                off++;
                break;
            } else return E_SYNTAX;
        }
        if (!flags) return E_SYNTAX; /* "%~x" */
    } else {
        flags = AK_ALL;
    }
    if (has_spaces(op + off, len - off)) return E_SYNTAX;
    int i = strs_find(&s->keys, op + off, len - off);
    if (i < 0) strs_add(&s->keys, op + off, len - off, flags);
    else s->keys.v[i].flags |= flags;
    s->flags &= ~AS_ALLKEYS;
    return NULL;
}

static const char *add_channel(acl_selector *s, const char *op, size_t len) {
    if (s->flags & AS_ALLCHANNELS) return E_CHANSTAR;
    if (has_spaces(op + 1, len - 1)) return E_SYNTAX;
    if (strs_find(&s->channels, op + 1, len - 1) < 0) strs_add(&s->channels, op + 1, len - 1, 0);
    s->flags &= ~AS_ALLCHANNELS;
    return NULL;
}

/* +name, +container|sub, +cmd|firstarg */
static const char *allow_command(acl_selector *s, const char *name, size_t len) {
    const char *bar = NULL;
    for (size_t i = len; i > 0; i--)
        if (name[i - 1] == '|') {
            bar = name + i - 1;
            break;
        }
    if (!bar) {
        command *cmd = lookup_full(name, len);
        if (!cmd) return E_NOENT;
        change_perm(s, cmd, 1);
        return NULL;
    }
    command *cmd = lookup_full(name, (size_t)(bar - name));
    if (!cmd) return E_NOENT;
    if (cmd->parent) return E_CHILD;
    size_t sublen = len - (size_t)(bar - name) - 1;
    if (sublen == 0) return E_SYNTAX;
    if (cmd->subcmds) {
        command *sub = lookup_full(name, len);
        if (!sub) return E_NOENT;
        change_perm(s, sub, 1);
        return NULL;
    }
    add_firstarg(s, acl_command_id(cmd), bar + 1, sublen);
    return NULL;
}

static int op_is(const char *op, size_t len, const char *lit) {
    return strlen(lit) == len && !strncasecmp(op, lit, len);
}

const char *acl_selector_set(acl_selector *s, const char *op, size_t len) {
    if (op_is(op, len, "allkeys") || op_is(op, len, "~*")) {
        s->flags |= AS_ALLKEYS;
        strs_clear(&s->keys);
    } else if (op_is(op, len, "resetkeys")) {
        s->flags &= ~AS_ALLKEYS;
        strs_clear(&s->keys);
    } else if (op_is(op, len, "allchannels") || op_is(op, len, "&*")) {
        s->flags |= AS_ALLCHANNELS;
        strs_clear(&s->channels);
    } else if (op_is(op, len, "resetchannels")) {
        s->flags &= ~AS_ALLCHANNELS;
        strs_clear(&s->channels);
    } else if (op_is(op, len, "allcommands") || op_is(op, len, "+@all")) {
        set_all(s, 1);
    } else if (op_is(op, len, "nocommands") || op_is(op, len, "-@all")) {
        set_all(s, 0);
    } else if (len && (op[0] == '~' || op[0] == '%')) {
        return add_key_pattern(s, op, len);
    } else if (len && op[0] == '&') {
        return add_channel(s, op, len);
    } else if (len && op[0] == '+' && (len < 2 || op[1] != '@')) {
        return allow_command(s, op + 1, len - 1);
    } else if (len && op[0] == '-' && (len < 2 || op[1] != '@')) {
        command *cmd = lookup_full(op + 1, len - 1);
        if (!cmd) return E_NOENT;
        change_perm(s, cmd, 0);
    } else if (len >= 2 && (op[0] == '+' || op[0] == '-') && op[1] == '@') {
        int cat = acl_category_by_name(op + 2, len - 2);
        if (cat < 0) return E_NOENT;
        set_category(s, cat, op[0] == '+');
    } else {
        return E_SYNTAX;
    }
    return NULL;
}

/* -------------------------------------------------------------- users */

static int valid_hash(const char *p, size_t len) {
    if (len != 64) return 0;
    for (size_t i = 0; i < len; i++)
        if (!((p[i] >= '0' && p[i] <= '9') || (p[i] >= 'a' && p[i] <= 'f'))) return 0;
    return 1;
}

static int pass_find(const acl_user *u, const char *h) {
    for (int i = 0; i < u->npass; i++)
        if (!memcmp(u->pass[i], h, 64)) return i;
    return -1;
}

static const char *password_op(acl_user *u, const char *op, size_t len) {
    char h[65];
    if (op[0] == '>' || op[0] == '<') {
        sha256_hex(op + 1, len - 1, h);
    } else {
        if (!valid_hash(op + 1, len - 1)) return E_BADHASH;
        memcpy(h, op + 1, 64);
        h[64] = '\0';
    }
    int i = pass_find(u, h);
    if (op[0] == '>' || op[0] == '#') {
        if (i < 0) {
            u->pass = zrealloc(u->pass, sizeof *u->pass * (size_t)(u->npass + 1));
            memcpy(u->pass[u->npass++], h, 65);
        }
        u->flags &= ~AU_NOPASS;
        return NULL;
    }
    if (i < 0) return E_NODEV;
    memmove(u->pass + i, u->pass + i + 1, sizeof *u->pass * (size_t)(u->npass - i - 1));
    u->npass--;
    return NULL;
}

static void reset_pass(acl_user *u) {
    zfree(u->pass);
    u->pass = NULL;
    u->npass = 0;
}

static void clear_selectors(acl_user *u) {
    while (u->sel->next) {
        acl_selector *n = u->sel->next->next;
        acl_selector_free(u->sel->next);
        u->sel->next = n;
    }
}

/* "(rule rule ...)": a new selector, or the first failing rule's error. */
static const char *add_selector(acl_user *u, const char *op, size_t len) {
    char *buf = zstrndup(op + 1, len - 2);
    size_t pos = 0, blen = len - 2;
    splitargs_span sp[64];
    acl_selector *s = acl_selector_new(0);
    const char *err = NULL;
    for (;;) {
        ssize_t n = splitargs(buf, blen, &pos, 0, sp, 64);
        if (n < 0) {
            err = E_SYNTAX;
            break;
        }
        for (ssize_t i = 0; i < n && !err; i++) err = acl_selector_set(s, buf + sp[i].off, sp[i].len);
        if (err || n < 64) break;
    }
    zfree(buf);
    if (err) {
        acl_selector_free(s);
        return err;
    }
    acl_selector **tail = &u->sel;
    while (*tail) tail = &(*tail)->next;
    *tail = s;
    return NULL;
}

static void reset_user(acl_user *u) {
    reset_pass(u);
    u->flags &= ~AU_NOPASS;
    acl_selector_set(u->sel, "resetkeys", 9);
    acl_selector_set(u->sel, "resetchannels", 13);
    if (acl_pubsub_default_all()) acl_selector_set(u->sel, "allchannels", 11);
    u->flags = (u->flags & ~(AU_ENABLED | AU_SKIP_SANITIZE)) | AU_DISABLED | AU_SANITIZE;
    clear_selectors(u);
    set_all(u->sel, 0);
}

const char *acl_user_set(acl_user *u, const char *op, size_t len) {
    if (len == 0) return NULL;
    if (op_is(op, len, "on")) {
        u->flags = (u->flags | AU_ENABLED) & ~AU_DISABLED;
    } else if (op_is(op, len, "off")) {
        u->flags = (u->flags | AU_DISABLED) & ~AU_ENABLED;
    } else if (op_is(op, len, "skip-sanitize-payload")) {
        u->flags = (u->flags | AU_SKIP_SANITIZE) & ~AU_SANITIZE;
    } else if (op_is(op, len, "sanitize-payload")) {
        u->flags = (u->flags | AU_SANITIZE) & ~AU_SKIP_SANITIZE;
    } else if (op_is(op, len, "nopass")) {
        u->flags |= AU_NOPASS;
        reset_pass(u);
    } else if (op_is(op, len, "resetpass")) {
        u->flags &= ~AU_NOPASS;
        reset_pass(u);
    } else if (op[0] == '>' || op[0] == '#' || op[0] == '<' || op[0] == '!') {
        return password_op(u, op, len);
    } else if (op[0] == '(' && op[len - 1] == ')') {
        return add_selector(u, op, len);
    } else if (op_is(op, len, "clearselectors")) {
        clear_selectors(u);
    } else if (op_is(op, len, "reset")) {
        reset_user(u);
    } else {
        return acl_selector_set(u->sel, op, len);
    }
    return NULL;
}

/* Joins "(a" "b" "c)" into one "(a b c)" rule. Returns the rules (zmalloc'd
 * spans over zmalloc'd text in *owned, both freed by the caller), or NULL
 * with the index of the unclosed "(" in *bad. */
span *acl_merge_selectors(const span *rules, int n, int *outn, char ***owned, int *bad) {
    span *out = zmalloc(sizeof *out * (size_t)(n ? n : 1));
    char **own = zcalloc(sizeof *own * (size_t)(n ? n : 1));
    int k = 0;
    for (int i = 0; i < n; i++) {
        span r = rules[i];
        if (!(r.len && r.p[0] == '(' && r.p[r.len - 1] != ')')) {
            out[k++] = r;
            continue;
        }
        sbuf b = {0};
        sb_add(&b, r.p, r.len);
        int j = i + 1;
        for (; j < n; j++) {
            sb_addc(&b, ' ');
            sb_add(&b, rules[j].p, rules[j].len);
            if (rules[j].len && rules[j].p[rules[j].len - 1] == ')') break;
        }
        if (j == n) {
            sb_free(&b);
            for (int m = 0; m < k; m++) zfree(own[m]);
            zfree(own);
            zfree(out);
            *bad = i;
            return NULL;
        }
        size_t blen = b.len;
        own[k] = sb_take(&b);
        out[k].p = own[k];
        out[k].len = blen;
        k++;
        i = j;
    }
    *outn = k;
    *owned = own;
    return out;
}

const char *const ACL_ERR_UNMATCHED = "Unmatched parenthesis";

void acl_merged_free(span *m, int k, char **owned) {
    for (int i = 0; i < k; i++) zfree(owned[i]);
    zfree(owned);
    zfree(m);
}

static void copy_rule(char *dst, size_t cap, span r) {
    size_t len = r.len < cap - 1 ? r.len : cap - 1;
    memcpy(dst, r.p, len);
    dst[len] = '\0';
}

const char *acl_user_apply_rules(acl_user *u, const span *rules, int n, int ignore_unknown, char *bad, size_t badcap) {
    int k = 0, first = 0;
    char **own = NULL;
    span *m = acl_merge_selectors(rules, n, &k, &own, &first);
    if (!m) {
        copy_rule(bad, badcap, rules[first]);
        return ACL_ERR_UNMATCHED;
    }
    const char *err = NULL;
    for (int i = 0; i < k && !err; i++) {
        char *op = zstrndup(m[i].p, m[i].len);
        err = acl_user_set(u, op, m[i].len);
        zfree(op);
        if (err && ignore_unknown && !strcmp(err, E_NOENT)) err = NULL;
        if (err) copy_rule(bad, badcap, m[i]);
    }
    for (int i = 0; i < k; i++) zfree(own[i]);
    zfree(own);
    zfree(m);
    return err;
}

const char *acl_user_set_rules(acl_user *u, const span *rules, int n, int *bad, char *ebuf, size_t ecap) {
    char r[512];
    const char *err = acl_user_apply_rules(u, rules, n, 0, r, sizeof r);
    *bad = 0;
    if (!err) return NULL;
    if (err == ACL_ERR_UNMATCHED)
        snprintf(ebuf, ecap, "Unmatched parenthesis in acl selector starting at '%s'.", r);
    else
        snprintf(ebuf, ecap, "Error in ACL SETUSER modifier '%s': %s", r, err);
    return ebuf;
}
