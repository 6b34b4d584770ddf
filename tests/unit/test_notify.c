/* test_notify.c - Criterion unit tests for the pure parts of
 * src/commands/notify.c: notify-keyspace-events text to class flags and
 * back. The expected canonical texts are what redis-server 7.0.15 answers
 * to CONFIG GET notify-keyspace-events after CONFIG SET of the input
 * (test_diff_notify.py compares the two servers directly).
 */
#include <criterion/criterion.h>

#include <string.h>

#include "notify.h"

static int flags_of(const char *s) { return notify_flags_from_string(s, strlen(s)); }

static void canon_is(const char *in, const char *want) {
    char buf[NOTIFY_TEXT_MAX];
    int f = flags_of(in);
    cr_assert_geq(f, 0, "[%s] should parse", in);
    size_t n = notify_flags_to_string(f, buf, sizeof buf);
    cr_assert_str_eq(buf, want, "[%s]", in);
    cr_assert_eq(n, strlen(want), "[%s] length", in);
}

Test(notify, letters_map_to_classes) {
    cr_assert_eq(flags_of(""), 0);
    cr_assert_eq(flags_of("K"), NOTIFY_KEYSPACE);
    cr_assert_eq(flags_of("E"), NOTIFY_KEYEVENT);
    cr_assert_eq(flags_of("g$lshzxetd"), NOTIFY_ALL);
    cr_assert_eq(flags_of("A"), NOTIFY_ALL);
    cr_assert_eq(flags_of("n"), NOTIFY_NEW);
    cr_assert_eq(flags_of("m"), NOTIFY_KEY_MISS);
    cr_assert_eq(flags_of("An") & NOTIFY_NEW, NOTIFY_NEW, "A does not swallow n");
    cr_assert_eq(flags_of("A") & (NOTIFY_NEW | NOTIFY_KEY_MISS), 0, "n and m are not part of A");
    cr_assert_eq(flags_of("KKK"), NOTIFY_KEYSPACE, "repeats are harmless");
}

Test(notify, unknown_letters_are_refused) {
    cr_assert_eq(flags_of("Kq"), -1);
    cr_assert_eq(flags_of("k"), -1, "case matters");
    cr_assert_eq(flags_of("A "), -1);
    cr_assert_eq(notify_flags_from_string("K\0E", 3), -1, "a NUL is not a class");
}

Test(notify, canonical_text_matches_redis) {
    canon_is("", "");
    canon_is("KEA", "AKE");
    canon_is("KEm", "KEm");
    canon_is("Kx", "xK");
    canon_is("$lshzxetd", "$lshzxetd");
    canon_is("g$lshzxetd", "A");
    canon_is("An", "A");
    canon_is("AnKE", "AKE");
    canon_is("Ag$lshzxetdmnKE", "AKEm");
    canon_is("Kg", "gK");
    canon_is("ndtm", "tdnm");
    canon_is("mEK", "KEm");
}

Test(notify, text_is_cut_to_the_buffer) {
    char buf[4];
    size_t n = notify_flags_to_string(flags_of("g$lshzKE"), buf, sizeof buf);
    cr_assert_eq(n, 8);
    cr_assert_str_eq(buf, "g$l");
    cr_assert_eq(notify_flags_to_string(flags_of("KE"), NULL, 0), 2, "cap 0 only measures");
}

Test(notify, off_costs_nothing_and_publishes_nothing) {
    notify_set_flags(0);
    cr_assert_eq(notify_flags, 0);
    notify_keyspace_event(NOTIFY_GENERIC, "del", 0, "k", 1); /* no subscriber, no effect: must not crash */
    notify_set_flags(flags_of("KEA"));
    notify_keyspace_event(NOTIFY_GENERIC, "del", 0, "k", 1);  /* no subscribers: nothing to deliver */
    notify_set_flags(0);
}
