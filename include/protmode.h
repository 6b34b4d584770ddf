/* protmode.h - Redis 7's protected mode: with protected-mode yes and no
 * password for the default user, only loopback peers are served. */
#ifndef FERRY_PROTMODE_H
#define FERRY_PROTMODE_H

#include <stddef.h>
#include <sys/socket.h>

/* The reply a refused peer gets before the connection is closed. */
extern const char PROTECTED_MODE_DENIED[];
extern const size_t PROTECTED_MODE_DENIED_LEN;

/* 1 if peer is a loopback address (127.0.0.0/8, ::1) or a unix socket. */
int peer_is_loopback(const struct sockaddr_storage *peer);

/* The decision, pure for testing: 1 when a connection from peer must be
 * refused. As in redis-server 7.0.15 the bind addresses do not matter:
 * even an explicit non-loopback bind refuses non-loopback peers. */
int protected_mode_refuses(int protected_mode, int password_set, const struct sockaddr_storage *peer);

#endif
