/* protmode.c - Redis 7's protected mode (see protmode.h).
 *
 * Why: a server started without a password must not be reachable from the
 * network by accident. Redis 7.0 refuses every non-loopback peer while
 * protected-mode is yes and the default user has no password, with a
 * DENIED reply that explains the fix; net.c calls this at accept time.
 * "Loopback" is what redis-server 7.0.15 compares the peer's address text
 * with: 127.0.0.1 and ::1 only (a client from 127.0.0.2, which Linux also
 * routes over lo, is refused), and Unix sockets.
 */
#include "protmode.h"
#include <netinet/in.h>
#include <string.h>

const char PROTECTED_MODE_DENIED[] =
    "-DENIED Redis is running in protected mode because protected mode is enabled and no "
    "password is set for the default user. In this mode connections are only accepted from "
    "the loopback interface. If you want to connect from external computers to Redis you may "
    "adopt one of the following solutions: 1) Just disable protected mode sending the command "
    "'CONFIG SET protected-mode no' from the loopback interface by connecting to Redis from "
    "the same host the server is running, however MAKE SURE Redis is not publicly accessible "
    "from internet if you do so. Use CONFIG REWRITE to make this change permanent. 2) "
    "Alternatively you can just disable the protected mode by editing the Redis configuration "
    "file, and setting the protected mode option to 'no', and then restarting the server. 3) "
    "If you started the server manually just for testing, restart it with the "
    "'--protected-mode no' option. 4) Setup a an authentication password for the default "
    "user. NOTE: You only need to do one of the above things in order for the server to start "
    "accepting connections from the outside.\r\n";
const size_t PROTECTED_MODE_DENIED_LEN = sizeof PROTECTED_MODE_DENIED - 1;

int peer_is_loopback(const struct sockaddr_storage *peer) {
    if (peer->ss_family == AF_UNIX) return 1;
    if (peer->ss_family == AF_INET) {
        const struct sockaddr_in *s = (const struct sockaddr_in *)peer;
        return ntohl(s->sin_addr.s_addr) == INADDR_LOOPBACK; /* 127.0.0.1 only: 7.0.15 refuses 127.0.0.2 */
    }
    if (peer->ss_family == AF_INET6) {
        const struct sockaddr_in6 *s = (const struct sockaddr_in6 *)peer;
        return IN6_IS_ADDR_LOOPBACK(&s->sin6_addr);
    }
    return 0;
}

int protected_mode_refuses(int protected_mode, int password_set, const struct sockaddr_storage *peer) {
    return protected_mode && !password_set && !peer_is_loopback(peer);
}
