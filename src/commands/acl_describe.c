/* acl_describe.c - a user or selector written back as ACL rules, in Redis
 * 7.0's canonical form (ACL LIST, ACL GETUSER, ACL SAVE): flags, password
 * hashes, key patterns, channels, then the command rules, and each extra
 * selector in parentheses.
 *
 * Command rules start from +@all (the selector may run future commands) or
 * -@all, then repeatedly take the not yet used category with more commands
 * in common with the bitmap than different, preferring the fewest
 * differences and then the most in common; single commands and allowed
 * first arguments fix what the categories could not express.
 */
#include "acl.h"
#include "command.h"
#include "sbuf.h"
#include "zmalloc.h"
#include <string.h>

static void add(sbuf *b, const char *s) { sb_add(b, s, strlen(s)); }

static void apply(acl_selector *s, const char *op) { acl_selector_set(s, op, strlen(op)); }

static char *finish(sbuf *b) {
    sb_add(b, "", 1); /* NUL */
    return b->p;
}

void acl_key_pattern_str(char *buf, size_t cap, const acl_str *k, size_t *outlen) {
    size_t n = 0;
    if (k->flags != AK_ALL) {
        buf[n++] = '%';
        if (k->flags & AK_READ) buf[n++] = 'R';
        if (k->flags & AK_WRITE) buf[n++] = 'W';
    }
    buf[n++] = '~';
    size_t m = k->len < cap - n - 1 ? k->len : cap - n - 1;
    memcpy(buf + n, k->p, m);
    n += m;
    buf[n] = '\0';
    *outlen = n;
}

static void count_cat(const uint64_t *bits, int cat, unsigned long *on, unsigned long *off) {
    *on = *off = 0;
    for (int id = 0; id < acl_command_count(); id++) {
        if (!(acl_command_cats(id) & (1u << cat)) || !acl_command_counted(id)) continue;
        if ((bits[id / 64] >> (id % 64)) & 1) (*on)++;
        else (*off)++;
    }
}

/* The categories that best fit s, applied to fake (and their inverse to a
 * copy of s's bitmap, so each choice only counts what is left). */
static void describe_categories(sbuf *b, const acl_selector *s, acl_selector *fake, int additive) {
    uint64_t temp[ACL_WORDS];
    memcpy(temp, s->cmds, sizeof temp);
    int used[32] = {0};
    for (;;) {
        int best = -1;
        unsigned long mindiff = (unsigned long)-1, maxsame = 0;
        for (int cat = 0; cat < acl_category_count(); cat++) {
            if (used[cat]) continue;
            unsigned long on, off;
            count_cat(temp, cat, &on, &off);
            unsigned long diff = additive ? off : on, same = additive ? on : off;
            if (same > diff && (diff < mindiff || (diff == mindiff && same > maxsame))) {
                best = cat;
                mindiff = diff;
                maxsame = same;
            }
        }
        if (best < 0) return;
        used[best] = 1;
        char op[64], inv[64];
        op[0] = additive ? '+' : '-';
        inv[0] = additive ? '-' : '+';
        op[1] = inv[1] = '@';
        strcpy(op + 2, acl_category_name(best));
        strcpy(inv + 2, acl_category_name(best));
        apply(fake, op);
        acl_selector tmp = {0};
        memcpy(tmp.cmds, temp, sizeof temp);
        apply(&tmp, inv);
        memcpy(temp, tmp.cmds, sizeof temp);
        add(b, op);
        add(b, " ");
    }
}

static void single(sbuf *b, const acl_selector *s, acl_selector *fake, command *cmd) {
    int id = acl_command_id(cmd);
    int ubit = acl_selector_bit(s, id), fbit = acl_selector_bit(fake, id);
    if (ubit != fbit) {
        add(b, ubit ? "+" : "-");
        add(b, cmd->fullname);
        add(b, " ");
        char op[80];
        op[0] = ubit ? '+' : '-';
        strcpy(op + 1, cmd->fullname);
        apply(fake, op);
    }
    for (command *sub = cmd->subcmds; sub && sub->name; sub++) single(b, s, fake, sub);
    if (ubit) return;
    for (int i = 0; i < s->nfa; i++) {
        if (s->fa[i].id != id) continue;
        for (int j = 0; j < s->fa[i].args.n; j++) {
            add(b, "+");
            add(b, cmd->fullname);
            add(b, "|");
            sb_add(b, s->fa[i].args.v[j].p, s->fa[i].args.v[j].len);
            add(b, " ");
        }
    }
}

char *acl_describe_commands(const acl_selector *s) {
    sbuf b = {0};
    int additive = !acl_selector_bit(s, ACL_FUTURE_BIT);
    acl_selector *fake = acl_selector_new(0);
    add(&b, additive ? "-@all " : "+@all ");
    apply(fake, additive ? "-@all" : "+@all");
    describe_categories(&b, s, fake, additive);
    for (int id = 0; id < acl_command_count(); id++) {
        command *cmd = acl_command_by_id(id);
        if (!cmd->parent) single(&b, s, fake, cmd);
    }
    acl_selector_free(fake);
    b.len--; /* the last space */
    return finish(&b);
}

static void describe_keys(sbuf *b, const acl_selector *s) {
    if (s->flags & AS_ALLKEYS) {
        add(b, "~* ");
        return;
    }
    for (int i = 0; i < s->keys.n; i++) {
        char buf[8];
        const acl_str *k = &s->keys.v[i];
        size_t n = 0;
        acl_key_pattern_str(buf, sizeof buf, &(acl_str){"", 0, k->flags}, &n);
        sb_add(b, buf, n);
        sb_add(b, k->p, k->len);
        add(b, " ");
    }
}

char *acl_describe_selector(const acl_selector *s) {
    sbuf b = {0};
    describe_keys(&b, s);
    if (s->flags & AS_ALLCHANNELS) {
        add(&b, "&* ");
    } else {
        add(&b, "resetchannels ");
        for (int i = 0; i < s->channels.n; i++) {
            add(&b, "&");
            sb_add(&b, s->channels.v[i].p, s->channels.v[i].len);
            add(&b, " ");
        }
    }
    char *cmds = acl_describe_commands(s);
    add(&b, cmds);
    zfree(cmds);
    return finish(&b);
}

static const struct {
    int flag;
    const char *name;
} user_flags[] = {{AU_ENABLED, "on"}, {AU_DISABLED, "off"}, {AU_NOPASS, "nopass"},
                  {AU_SKIP_SANITIZE, "skip-sanitize-payload"}, {AU_SANITIZE, "sanitize-payload"}};

char *acl_describe_user(const acl_user *u) {
    sbuf b = {0};
    for (size_t i = 0; i < sizeof user_flags / sizeof user_flags[0]; i++) {
        if (!(u->flags & user_flags[i].flag)) continue;
        add(&b, user_flags[i].name);
        add(&b, " ");
    }
    for (int i = 0; i < u->npass; i++) {
        add(&b, "#");
        sb_add(&b, u->pass[i], 64);
        add(&b, " ");
    }
    for (const acl_selector *s = u->sel; s; s = s->next) {
        char *d = acl_describe_selector(s);
        if (s != u->sel) add(&b, " (");
        add(&b, d);
        if (s != u->sel) add(&b, ")");
        zfree(d);
    }
    return finish(&b);
}
