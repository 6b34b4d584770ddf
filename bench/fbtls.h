/* fbtls.h - ferry-bench's connection I/O: plain send/read, or TLS (--tls)
 * when built with OpenSSL (FB_TLS). Connections are named by their fd; a
 * TLS one carries its SSL object in a table indexed by fd, filled before the
 * workers start and only read by the worker that owns the connection.
 */
#ifndef FB_FBTLS_H
#define FB_FBTLS_H

#include <stddef.h>
#include <sys/types.h>

typedef struct fb_tls_opts {
    int on;                 /* --tls */
    const char *cacert;     /* --cacert: verify the server against it; none: no verification */
    const char *cert, *key; /* --cert / --key: a client certificate */
    const char *sni;        /* --sni */
} fb_tls_opts;

/* Set up the client context once (exits with the reason on failure,
 * including a build without OpenSSL). */
void fb_tls_setup(const fb_tls_opts *o);
/* A blocking TLS handshake on a connected fd (when --tls was given): 0,
 * or -1 with the reason printed. */
int fb_tls_attach(int fd);
/* send()/read() through TLS when the fd has it; -1 with errno EAGAIN when
 * it would block, as the plain calls. */
ssize_t fb_io_send(int fd, const void *p, size_t len);
ssize_t fb_io_read(int fd, void *buf, size_t len);
/* Bytes already received and decrypted (or to decrypt) inside the TLS
 * layer: the socket will not signal them. */
int fb_io_pending(int fd);
void fb_io_close(int fd);

#endif
