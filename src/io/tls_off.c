/* tls_off.c - the TLS layer of a server built with `make TLS=no` (tls.h):
 * a libc-only server. No context can be configured, so a `tls-port` (or
 * tls-replication, tls-cluster) stops start-up with a clear line, as a
 * redis-server built without TLS refuses it; no TLS connection ever exists.
 */
#include "tls.h"
#include "server.h"
#include <errno.h>

int tls_configure(void) {
    server_log(LOG_WARNING_, "TLS is not supported by this build of ferry (built with TLS=no).");
    return -1;
}

tls_conn *tls_conn_new(int fd) {
    (void)fd;
    return NULL;
}

tls_conn *tls_conn_connect(int fd) {
    (void)fd;
    return NULL;
}

void tls_conn_free(tls_conn *t) { (void)t; }

int tls_handshake(tls_conn *t, int *want_write, char *err, size_t errlen) {
    (void)t, (void)want_write, (void)err, (void)errlen;
    return -1;
}

ssize_t tls_read(tls_conn *t, void *buf, size_t len) {
    (void)t, (void)buf, (void)len;
    errno = EIO;
    return -1;
}

int tls_has_pending(const tls_conn *t) {
    (void)t;
    return 0;
}

ssize_t tls_writev(tls_conn *t, const struct iovec *iov, int cnt) {
    (void)t, (void)iov, (void)cnt;
    errno = EIO;
    return -1;
}
