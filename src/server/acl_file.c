/* acl_file.c - ACL users from configuration: `user` lines of the config
 * file (kept while the config loads, applied once the command table
 * exists), the `aclfile` loaded at start-up and by ACL LOAD (all or
 * nothing), and ACL SAVE (a temporary file, fsync, rename). Messages follow
 * redis-server 7.0's. */
#include "acl_file.h"
#include "acl.h"
#include "config.h"
#include "sbuf.h"
#include "server.h"
#include "zmalloc.h"
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define WARN_SUFFIX "WARNING: ACL errors detected, no change to the previously active ACL rules was performed"

typedef struct conf_line {
    int argc;
    char **argv;
} conf_line;

static conf_line *conf_users;
static int nconf_users;

static char *aclfile_path(void) {
    char *v = config_get_by_name(&srv.cfg, "aclfile");
    if (v && !v[0]) {
        zfree(v);
        v = NULL;
    }
    return v;
}

static span *spans_of(int argc, char **argv) {
    span *s = zmalloc(sizeof *s * (size_t)(argc ? argc : 1));
    for (int i = 0; i < argc; i++) s[i] = (span){argv[i], strlen(argv[i])};
    return s;
}

/* Redis checks a user line's syntax as it reads the config (names of
 * commands are checked later); an unclosed "(" reports as an unknown name. */
static int validate_line(int argc, char **argv, char *err, size_t errlen) {
    span *rules = spans_of(argc - 2, argv + 2);
    acl_user *u = acl_user_new(argv[1], strlen(argv[1]));
    char bad[512];
    const char *e = acl_user_apply_rules(u, rules, argc - 2, 1, bad, sizeof bad);
    acl_user_free(u);
    zfree(rules);
    if (!e) return 0;
    if (e == ACL_ERR_UNMATCHED) e = "Unknown command or category name in ACL";
    snprintf(err, errlen, "Error in user declaration '%s': %s", argv[1], e);
    return -1;
}

void acl_config_users_reset(void) {
    for (int i = 0; i < nconf_users; i++) {
        for (int j = 0; j < conf_users[i].argc; j++) zfree(conf_users[i].argv[j]);
        zfree(conf_users[i].argv);
    }
    zfree(conf_users);
    conf_users = NULL;
    nconf_users = 0;
}

int acl_config_user_line(int argc, char **argv, char *err, size_t errlen) {
    for (int i = 0; i < nconf_users; i++) {
        if (strcmp(conf_users[i].argv[1], argv[1])) continue;
        snprintf(err, errlen,
                 "Error in user declaration '%s': Duplicate user found. A user can only be defined once in config files",
                 argv[1]);
        return -1;
    }
    if (validate_line(argc, argv, err, errlen) != 0) return -1;
    conf_users = zrealloc(conf_users, sizeof *conf_users * (size_t)(nconf_users + 1));
    conf_line *l = &conf_users[nconf_users++];
    l->argc = argc;
    l->argv = zmalloc(sizeof *l->argv * (size_t)argc);
    for (int i = 0; i < argc; i++) l->argv[i] = zstrdup(argv[i]);
    return 0;
}

/* The config file's user lines, applied to the registry. */
static int apply_conf_users(void) {
    for (int i = 0; i < nconf_users; i++) {
        conf_line *l = &conf_users[i];
        acl_user *u = acl_user_find(l->argv[1], strlen(l->argv[1]));
        int fresh = u == NULL;
        if (fresh) u = acl_user_new(l->argv[1], strlen(l->argv[1]));
        else acl_user_set(u, "reset", 5);
        span *rules = spans_of(l->argc - 2, l->argv + 2);
        char bad[512];
        const char *e = acl_user_apply_rules(u, rules, l->argc - 2, 0, bad, sizeof bad);
        zfree(rules);
        if (e) {
            server_log(LOG_WARNING_, "Error loading ACL rule '%s' for the user named '%s': %s", bad, l->argv[1], e);
            if (fresh) acl_user_free(u);
            return -1;
        }
        if (fresh) acl_user_add(u);
        acl_user_changed(u);
    }
    return 0;
}

static char *read_file(const char *path, size_t *len) {
    FILE *f = fopen(path, "r");
    if (!f) return NULL;
    sbuf b = {0};
    char buf[4096];
    size_t n;
    while ((n = fread(buf, 1, sizeof buf, f)) > 0) sb_add(&b, buf, n);
    fclose(f);
    *len = b.len;
    sb_addc(&b, '\0');
    return b.p ? b.p : zstrdup("");
}

typedef struct load_state {
    acl_user **users;
    int n;
    acl_user *def;
    sbuf errors;
    const char *path;
} load_state;

static acl_user *loaded_find(load_state *st, const char *name, size_t len) {
    if (len == 7 && !memcmp(name, "default", 7)) return st->def;
    for (int i = 0; i < st->n; i++)
        if (st->users[i]->namelen == len && !memcmp(st->users[i]->name, name, len)) return st->users[i];
    return NULL;
}

/* Checks a line's rules on a scratch user as Redis does: each unknown
 * command or category is reported, other errors only the first. */
static int line_errors(load_state *st, const span *rules, int n, int lineno) {
    int k, bad;
    char **own;
    span *m = acl_merge_selectors(rules, n, &k, &own, &bad);
    if (!m) {
        sb_addf(&st->errors, "%s:%d: Unmatched parenthesis in selector definition.", st->path, lineno);
        return 1;
    }
    acl_user *fake = acl_user_new("fake", 4);
    int errs = 0, syntax = 0;
    for (int i = 0; i < k; i++) {
        char *op = zstrndup(m[i].p, m[i].len);
        const char *e = acl_user_set(fake, op, m[i].len);
        if (e && !strcmp(e, "Unknown command or category name in ACL")) {
            sb_addf(&st->errors, "%s:%d: Error in applying operation '%s': %s. ", st->path, lineno, op, e);
            errs++;
        } else if (e && !syntax) {
            sb_addf(&st->errors, "%s:%d: %s. ", st->path, lineno, e);
            syntax = 1;
            errs++;
        }
        zfree(op);
    }
    acl_user_free(fake);
    acl_merged_free(m, k, own);
    return errs;
}

static void load_line(load_state *st, char *line, size_t len, int lineno) {
    /* split at single spaces, each piece trimmed of \t \r \n (no quoting, as Redis 7.0) */
    int n = 0;
    span *args = zmalloc(sizeof *args * (len + 1));
    for (size_t i = 0, start = 0; i <= len; i++) {
        if (i < len && line[i] != ' ') continue;
        span a = {line + start, i - start};
        while (a.len && strchr("\t\r\n", a.p[0])) a.p++, a.len--;
        while (a.len && strchr("\t\r\n", a.p[a.len - 1])) a.len--;
        args[n++] = a;
        start = i + 1;
    }
    if (!(args[0].len == 4 && !memcmp(args[0].p, "user", 4)) || n < 2) {
        sb_addf(&st->errors, "%s:%d should start with user keyword followed by the username. ", st->path, lineno);
        zfree(args);
        return;
    }
    line_errors(st, args + 2, n - 2, lineno);
    /* the user is created even after errors (later lines naming it are duplicates) */
    if (loaded_find(st, args[1].p, args[1].len)) {
        sb_addf(&st->errors, "WARNING: Duplicate user '%.*s' found on line %d. ", (int)args[1].len, args[1].p, lineno);
        zfree(args);
        return;
    }
    acl_user *u = acl_user_new(args[1].p, args[1].len);
    char bad[512];
    /* rules are applied only while the file has no error (the set is discarded otherwise) */
    const char *e = st->errors.len ? NULL : acl_user_apply_rules(u, args + 2, n - 2, 0, bad, sizeof bad);
    if (e) sb_addf(&st->errors, "%s:%d: Error in applying operation '%s': %s. ", st->path, lineno, bad, e);
    if (args[1].len == 7 && !memcmp(args[1].p, "default", 7)) {
        st->def = u;
    } else {
        st->users = zrealloc(st->users, sizeof *st->users * (size_t)(st->n + 1));
        st->users[st->n++] = u;
    }
    zfree(args);
}

static void load_state_free(load_state *st) {
    for (int i = 0; i < st->n; i++) acl_user_free(st->users[i]);
    zfree(st->users);
    acl_user_free(st->def);
    sb_free(&st->errors);
}

/* Loads path into the registry; 0, or -1 with the errors in err. */
static int load_file(const char *path, char *err, size_t errlen) {
    size_t len;
    char *text = read_file(path, &len);
    if (!text) {
        snprintf(err, errlen, "Error loading ACLs, opening file '%s': %s", path, strerror(errno));
        return -1;
    }
    load_state st = {0};
    st.path = path;
    int lineno = 0;
    for (char *p = text; p <= text + len;) {
        char *nl = memchr(p, '\n', (size_t)(text + len - p));
        size_t l = nl ? (size_t)(nl - p) : (size_t)(text + len - p);
        lineno++;
        while (l && strchr(" \t\r", p[l - 1])) l--;
        while (l && strchr(" \t\r", *p)) p++, l--;
        if (l) load_line(&st, p, l, lineno);
        if (!nl) break;
        p = nl + 1;
    }
    zfree(text);
    if (st.errors.len) {
        sb_adds(&st.errors, WARN_SUFFIX);
        snprintf(err, errlen, "%.*s", (int)st.errors.len, st.errors.p);
        load_state_free(&st);
        return -1;
    }
    acl_user *def = st.def;
    if (!def) {
        def = acl_user_new("default", 7);
        acl_user_set(def, "+@all", 5);
        acl_user_set(def, "~*", 2);
        acl_user_set(def, "&*", 2);
        acl_user_set(def, "on", 2);
        acl_user_set(def, "nopass", 6);
    }
    acl_users_replace(st.users, st.n, def);
    acl_user_free(def);
    sb_free(&st.errors);
    return 0;
}

static int acl_load_hook(char *err, size_t errlen) {
    char *path = aclfile_path();
    if (!path) return 1;
    int r = load_file(path, err, errlen);
    zfree(path);
    return r;
}

static int write_all(int fd, const char *p, size_t n) {
    while (n) {
        ssize_t w = write(fd, p, n);
        if (w < 0 && errno == EINTR) continue;
        if (w <= 0) return -1;
        p += w;
        n -= (size_t)w;
    }
    return 0;
}

static int save_file(const char *path) {
    sbuf b = {0};
    for (int i = 0; i < acl_user_count(); i++) {
        acl_user *u = acl_user_at(i);
        char *d = acl_describe_user(u);
        sb_adds(&b, "user ");
        sb_add(&b, u->name, u->namelen);
        sb_addc(&b, ' ');
        sb_adds(&b, d);
        sb_addc(&b, '\n');
        zfree(d);
    }
    char tmp[4096];
    snprintf(tmp, sizeof tmp, "%s.tmp-%d-%lld", path, (int)getpid(), (long long)srv.now_ms);
    int fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    int ok = fd >= 0 && write_all(fd, b.p ? b.p : "", b.len) == 0 && fsync(fd) == 0;
    if (fd >= 0 && close(fd) != 0) ok = 0;
    if (ok && rename(tmp, path) != 0) ok = 0;
    if (!ok) {
        server_log(LOG_WARNING_, "Saving the ACL file '%s' failed: %s", path, strerror(errno));
        if (fd >= 0) unlink(tmp);
    }
    sb_free(&b);
    return ok ? 0 : -1;
}

static int acl_save_hook(char *err, size_t errlen) {
    char *path = aclfile_path();
    if (!path) return 1;
    int r = save_file(path);
    zfree(path);
    if (r) snprintf(err, errlen, "There was an error trying to save the ACLs. Please check the server logs for more information");
    return r;
}

int acl_file_startup(void) {
    acl_file_save_hook = acl_save_hook;
    acl_file_load_hook = acl_load_hook;
    acl_default_user(); /* requirepass first: a `user default` line overrides it */
    char *path = aclfile_path();
    if (path && nconf_users) {
        server_log(LOG_WARNING_, "Configuring Redis with users defined in redis.conf and at the same setting an ACL "
                                 "file path is invalid. This setup is very likely to lead to configuration errors and "
                                 "security holes, please define either an ACL file or declare users directly in your "
                                 "redis.conf, but not both.");
        zfree(path);
        return -1;
    }
    if (apply_conf_users() != 0) {
        server_log(LOG_WARNING_, "Critical error while loading ACLs. Exiting.");
        zfree(path);
        return -1;
    }
    if (path) {
        char err[8192];
        if (load_file(path, err, sizeof err) != 0) {
            server_log(LOG_WARNING_, "Aborting Redis startup because of ACL errors: %s", err);
            zfree(path);
            return -1;
        }
    }
    zfree(path);
    return 0;
}

char **acl_rewrite_user_lines(int *n) {
    char *path = aclfile_path();
    *n = 0;
    if (path) {
        zfree(path);
        return NULL;
    }
    int count = acl_user_count();
    char **v = zmalloc(sizeof *v * (size_t)(count ? count : 1));
    for (int i = 0; i < count; i++) {
        acl_user *u = acl_user_at(i);
        char *d = acl_describe_user(u);
        sbuf b = {0};
        sb_adds(&b, "user ");
        sb_add(&b, u->name, u->namelen);
        sb_addc(&b, ' ');
        sb_adds(&b, d);
        sb_addc(&b, '\n');
        v[i] = sb_take(&b);
        zfree(d);
    }
    *n = count;
    return v;
}
