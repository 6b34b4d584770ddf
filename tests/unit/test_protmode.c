/* test_protmode.c - Criterion unit tests for the protected-mode decision
 * (src/io/protmode.c).
 *
 * Why: whether a peer is refused must depend only on protected-mode, on a
 * password being set and on the peer being loopback, exactly as in
 * redis-server 7.0.15; the integration test can only exercise the address
 * families and addresses the test machine has.
 */
#include <criterion/criterion.h>

#include <arpa/inet.h>
#include <string.h>
#include <sys/un.h>

#include "protmode.h"

static struct sockaddr_storage v4(const char *ip)
{
    struct sockaddr_storage ss;
    memset(&ss, 0, sizeof ss);
    struct sockaddr_in *s = (struct sockaddr_in *)&ss;
    s->sin_family = AF_INET;
    cr_assert_eq(inet_pton(AF_INET, ip, &s->sin_addr), 1);
    return ss;
}

static struct sockaddr_storage v6(const char *ip)
{
    struct sockaddr_storage ss;
    memset(&ss, 0, sizeof ss);
    struct sockaddr_in6 *s = (struct sockaddr_in6 *)&ss;
    s->sin6_family = AF_INET6;
    cr_assert_eq(inet_pton(AF_INET6, ip, &s->sin6_addr), 1);
    return ss;
}

Test(protmode, loopback_addresses)
{
    const char *yes4[] = {"127.0.0.1"};
    const char *no4[] = {"192.0.2.2", "10.0.0.1", "0.0.0.0", "128.0.0.1", "126.255.255.255",
                         "127.0.0.2", "127.1.2.3", "127.255.255.255"}; /* 7.0.15 compares the text 127.0.0.1 */
    for (size_t i = 0; i < sizeof yes4 / sizeof *yes4; i++) {
        struct sockaddr_storage a = v4(yes4[i]);
        cr_assert(peer_is_loopback(&a), "%s", yes4[i]);
    }
    for (size_t i = 0; i < sizeof no4 / sizeof *no4; i++) {
        struct sockaddr_storage a = v4(no4[i]);
        cr_assert(!peer_is_loopback(&a), "%s", no4[i]);
    }
    struct sockaddr_storage l6 = v6("::1"), m6 = v6("::ffff:127.0.0.1"), g6 = v6("2001:db8::1"), z6 = v6("::");
    cr_assert(peer_is_loopback(&l6));
    cr_assert(!peer_is_loopback(&m6)); /* Redis compares the text "::1" only */
    cr_assert(!peer_is_loopback(&g6));
    cr_assert(!peer_is_loopback(&z6));
    struct sockaddr_storage un;
    memset(&un, 0, sizeof un);
    un.ss_family = AF_UNIX;
    cr_assert(peer_is_loopback(&un));
}

Test(protmode, decision_table)
{
    struct sockaddr_storage remote = v4("192.0.2.2"), local = v4("127.0.0.1"), remote6 = v6("2001:db8::2");
    cr_assert(protected_mode_refuses(1, 0, &remote));
    cr_assert(protected_mode_refuses(1, 0, &remote6));
    cr_assert(!protected_mode_refuses(1, 0, &local));
    cr_assert(!protected_mode_refuses(1, 1, &remote));  /* a password lifts it */
    cr_assert(!protected_mode_refuses(0, 0, &remote));  /* protected-mode no */
}

Test(protmode, denied_text)
{
    cr_assert_eq(PROTECTED_MODE_DENIED_LEN, strlen(PROTECTED_MODE_DENIED));
    cr_assert_eq(PROTECTED_MODE_DENIED_LEN, 1067); /* redis-server 7.0.15's reply, CRLF included */
    cr_assert(strncmp(PROTECTED_MODE_DENIED, "-DENIED Redis is running in protected mode", 42) == 0);
    cr_assert(strcmp(PROTECTED_MODE_DENIED + PROTECTED_MODE_DENIED_LEN - 10, "outside.\r\n") == 0);
}
