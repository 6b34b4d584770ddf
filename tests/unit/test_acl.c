/* test_acl.c - Criterion unit tests for the ACL model: SHA-256 vectors, the
 * rule parser and its errors, the describer's canonical form (checked
 * against redis-server 7.0's ACL LIST output), and permission matching of
 * commands, first arguments, keys (%R~ / %W~) and channels. */
#include <criterion/criterion.h>
#include <string.h>

#include "acl.h"
#include "command.h"
#include "config.h"
#include "registry.h"
#include "server.h"
#include "sha256.h"
#include "zmalloc.h"

static void setup(void) {
    static int done;
    if (done) return;
    config_defaults(&srv.cfg);
    registry_commands();
    done = 1;
}

/* A fresh user with the space separated rules applied; NULL rules ok. */
static acl_user *user_with(const char *rules, const char **err) {
    acl_user *u = acl_user_new("t", 1);
    span v[32];
    int n = 0;
    char *copy = zstrdup(rules ? rules : "");
    for (char *tok = strtok(copy, " "); tok && n < 32; tok = strtok(NULL, " ")) v[n++] = (span){tok, strlen(tok)};
    static char ebuf[512];
    int bad;
    const char *e = acl_user_set_rules(u, v, n, &bad, ebuf, sizeof ebuf);
    if (err) *err = e;
    zfree(copy);
    return u;
}

static void expect_desc(const char *rules, const char *want) {
    const char *err = NULL;
    acl_user *u = user_with(rules, &err);
    cr_assert_null(err, "%s: %s", rules, err);
    char *d = acl_describe_user(u);
    cr_assert_str_eq(d, want, "rules: %s", rules);
    zfree(d);
    acl_user_free(u);
}

static void expect_err(const char *rules, const char *want) {
    const char *err = NULL;
    acl_user *u = user_with(rules, &err);
    cr_assert_not_null(err, "%s accepted", rules);
    cr_assert_str_eq(err, want);
    acl_user_free(u);
}

Test(acl, sha256_vectors) {
    char h[65];
    sha256_hex("abc", 3, h);
    cr_assert_str_eq(h, "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
    sha256_hex("", 0, h);
    cr_assert_str_eq(h, "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
    const char *two = "abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq";
    sha256_hex(two, strlen(two), h);
    cr_assert_str_eq(h, "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");
}

Test(acl, describer_matches_redis, .init = setup) {
    expect_desc("", "off resetchannels -@all");
    expect_desc("reset", "off sanitize-payload resetchannels -@all");
    expect_desc("+@read -get", "off resetchannels -@all +@read -get");
    expect_desc("+@all -@read", "off resetchannels +@all -@read");
    expect_desc("+@all -@write +get", "off resetchannels +@all -@write");
    expect_desc("+@hash -hset", "off resetchannels -@all +@hash -hset");
    expect_desc("+@string -get +@read", "off resetchannels -@all +@read +@string");
    expect_desc("on >abc +@all -get ~k* %R~r* &ch",
                "on #ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad ~k* %R~r* resetchannels &ch "
                "+@all -get");
    expect_desc("(+get ~x) (+set %W~y*)",
                "off resetchannels -@all (~x resetchannels -@all +get) (%W~y* resetchannels -@all +set)");
    expect_desc("+@all -config|set", "off resetchannels +@all -config|set");
    expect_desc("-@all +client -client|kill", "off resetchannels -@all +client -client|kill");
    expect_desc("+select|0", "off resetchannels -@all +select|0");
    expect_desc("%RW~a %W~b ~c %R~c", "off ~a %W~b ~c resetchannels -@all");
    expect_desc("allkeys allchannels allcommands nopass on", "on nopass ~* &* +@all");
    expect_desc("(+get ~x) clearselectors", "off resetchannels -@all");
    /* Redis 7.0 commands ferry lacks are valid rule names and count in categories */
    expect_desc("+asking -@all +cluster|info", "off resetchannels -@all +cluster|info");
    expect_desc("+@all -@admin", "off resetchannels +@all -@admin");
    expect_desc("+@all -@dangerous", "off resetchannels +@all -@dangerous");
}

Test(acl, parser_errors, .init = setup) {
    expect_err("+nope", "Error in ACL SETUSER modifier '+nope': Unknown command or category name in ACL");
    expect_err("+@nope", "Error in ACL SETUSER modifier '+@nope': Unknown command or category name in ACL");
    expect_err("%X~a", "Error in ACL SETUSER modifier '%X~a': Syntax error");
    expect_err("bogus", "Error in ACL SETUSER modifier 'bogus': Syntax error");
    expect_err("-select|0", "Error in ACL SETUSER modifier '-select|0': Unknown command or category name in ACL");
    expect_err("+get|", "Error in ACL SETUSER modifier '+get|': Syntax error");
    expect_err("+config|get|x",
               "Error in ACL SETUSER modifier '+config|get|x': Allowing first-arg of a subcommand is not supported");
    expect_err("#abc", "Error in ACL SETUSER modifier '#abc': The password hash must be exactly 64 characters and "
                       "contain only lowercase hexadecimal characters");
    expect_err("<abc", "Error in ACL SETUSER modifier '<abc': The password you are trying to remove from the user "
                       "does not exist");
    expect_err("(+get", "Unmatched parenthesis in acl selector starting at '(+get'.");
    expect_err("(+get ~x abc)", "Error in ACL SETUSER modifier '(+get ~x abc)': Syntax error");
    expect_err("~* ~a", "Error in ACL SETUSER modifier '~a': Adding a pattern after the * pattern (or the 'allkeys' "
                        "flag) is not valid and does not have any effect. Try 'resetkeys' to start with an empty "
                        "list of patterns");
}

Test(acl, passwords, .init = setup) {
    acl_user *u = user_with("on >one >two <one", NULL);
    cr_assert_eq(u->npass, 1);
    cr_assert(acl_user_check_password(u, "two", 3));
    cr_assert_not(acl_user_check_password(u, "one", 3));
    acl_user_set(u, "nopass", 6);
    cr_assert(acl_user_check_password(u, "anything", 8));
    acl_user_free(u);
}

static int check(acl_user *u, const char *line, int *pos) {
    span v[16];
    int n = 0;
    char *copy = zstrdup(line);
    for (char *tok = strtok(copy, " "); tok && n < 16; tok = strtok(NULL, " ")) v[n++] = (span){tok, strlen(tok)};
    command *cmd = command_lookup(v, n);
    cr_assert_not_null(cmd, "%s", line);
    int r = acl_check_cmd(u, cmd, v, n, pos);
    zfree(copy);
    return r;
}

Test(acl, matching, .init = setup) {
    int pos;
    acl_user *u = user_with("+@all ~k* %R~r* %W~w* &ch* +select|0 -select", NULL);
    cr_assert_eq(check(u, "get k1", &pos), ACL_OK);
    cr_assert_eq(check(u, "get r1", &pos), ACL_OK);
    cr_assert_eq(check(u, "set r1 v", &pos), ACL_DENIED_KEY);
    cr_assert_eq(pos, 1);
    cr_assert_eq(check(u, "get w1", &pos), ACL_DENIED_KEY);
    cr_assert_eq(check(u, "set w1 v", &pos), ACL_OK);
    cr_assert_eq(check(u, "mset k1 v x v", &pos), ACL_DENIED_KEY);
    cr_assert_eq(pos, 3);
    cr_assert_eq(check(u, "publish chan m", &pos), ACL_OK);
    cr_assert_eq(check(u, "publish other m", &pos), ACL_DENIED_CHANNEL);
    cr_assert_eq(check(u, "psubscribe ch*", &pos), ACL_OK);
    cr_assert_eq(check(u, "psubscribe ch1*", &pos), ACL_DENIED_CHANNEL); /* patterns match literally */
    cr_assert_eq(check(u, "select 1", &pos), ACL_DENIED_CMD);
    acl_user_free(u);
    u = user_with("-@all +select|0 (+get ~x)", NULL);
    cr_assert_eq(check(u, "select 0", &pos), ACL_OK);
    cr_assert_eq(check(u, "select 1", &pos), ACL_DENIED_CMD);
    cr_assert_eq(check(u, "get x", &pos), ACL_OK);
    cr_assert_eq(check(u, "get y", &pos), ACL_DENIED_KEY);
    cr_assert_eq(check(u, "auth a b", &pos), ACL_OK); /* no-auth commands always pass */
    acl_user_free(u);
}

Test(acl, registry_sorted_and_default_kept, .init = setup) {
    acl_user_add(acl_user_new("zz", 2));
    acl_user_add(acl_user_new("aa", 2));
    int n = acl_user_count();
    for (int i = 1; i < n; i++) cr_assert(strcmp(acl_user_at(i - 1)->name, acl_user_at(i)->name) < 0);
    acl_user_delete(acl_user_find("zz", 2));
    acl_user_delete(acl_default_user()); /* refused */
    cr_assert_not_null(acl_user_find("default", 7));
    cr_assert_null(acl_user_find("zz", 2));
}
