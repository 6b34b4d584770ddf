/* tls.h - TLS on client connections (OpenSSL), the second optional
 * dependency after Lua: `make TLS=no` builds tls_off.c instead, a
 * libc-only server in which tls_configure() fails and so `tls-port`
 * refuses to start.
 *
 * The connection layer is two calls wide on purpose: the client's one read
 * of a pass becomes one tls_read() drain, its one writev of a flush one
 * tls_writev(), so TLS clients keep the batched read/execute/write path.
 * Everything else (handshake, pending decrypted bytes, the context the
 * tls-* settings describe) lives in tls.c.
 */
#ifndef FERRY_TLS_H
#define FERRY_TLS_H

#include <stddef.h>
#include <sys/types.h>
#include <sys/uio.h>
#include <unistd.h>

typedef struct tls_conn tls_conn;

/* Builds a context from the tls-* settings of srv.cfg and puts it in force
 * for the connections accepted from now on (established ones keep theirs).
 * 0, or -1 after logging Redis's reason ("No tls-cert-file configured!",
 * "Failed to load certificate: ..."); the previous context then stays. */
int tls_configure(void);
/* A server-side connection on an accepted socket; NULL (logged) when no
 * context is configured or OpenSSL fails. */
tls_conn *tls_conn_new(int fd);
/* The client side, for the link to our primary (tls-replication). */
tls_conn *tls_conn_connect(int fd);
void tls_conn_free(tls_conn *t);
/* One step of the handshake (either side): 1 done, 0 in progress (it waits for
 * the socket to be readable, or writable when *want_write), -1 failed with
 * OpenSSL's reason in err. Never blocks. */
int tls_handshake(tls_conn *t, int *want_write, char *err, size_t errlen);
/* One drain: decrypted bytes into buf until it is full or the socket has
 * no more. >0 bytes, 0 at the end of the stream, -1 with errno (EAGAIN:
 * nothing yet; EIO: a TLS error, the connection is over). */
ssize_t tls_read(tls_conn *t, void *buf, size_t len);
/* Bytes already read from the socket and not yet returned: the socket will
 * not become readable for them, so the caller reads again by itself. */
int tls_has_pending(const tls_conn *t);
/* The iovecs in order, as one write: small pieces are gathered into one
 * record, big ones go from their own memory. Bytes written (possibly
 * fewer), or -1 with errno (EAGAIN, or EIO). The bytes not written must be
 * offered again, first, on the next call (they may sit in a half-sent
 * record). */
ssize_t tls_writev(tls_conn *t, const struct iovec *iov, int cnt);

/* One read or write of a connection that is TLS when t is non-NULL, else
 * the plain socket fd (the replication links' short exchanges). */
static inline ssize_t tls_or_plain_read(tls_conn *t, int fd, void *buf, size_t n) {
    return t ? tls_read(t, buf, n) : read(fd, buf, n);
}
static inline ssize_t tls_or_plain_write(tls_conn *t, int fd, const void *p, size_t n) {
    struct iovec iov = {(void *)p, n};
    return t ? tls_writev(t, &iov, 1) : write(fd, p, n);
}

#endif
