/* fbtls.c - ferry-bench's connection I/O, plain or TLS (fbtls.h).
 *
 * With FB_TLS the client does per request what a TLS client must and no
 * more: a pipeline batch is one SSL_write (partial writes allowed, so a
 * full socket keeps the batch's unsent tail as with send()), and a read
 * drains OpenSSL's buffers so epoll's silence about bytes it already holds
 * never stalls a connection. Without FB_TLS (a libc-only build) --tls is
 * refused and the calls are send()/read().
 */
#include "fbtls.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <unistd.h>

#ifdef FB_TLS
#include <openssl/err.h>
#include <openssl/ssl.h>

#define FB_TLS_MAX_FD 65536

static SSL_CTX *fb_ctx;
static SSL **fb_ssl; /* by fd */
static const char *fb_sni;

static void fb_tls_die(const char *what) {
    char buf[256];
    ERR_error_string_n(ERR_get_error(), buf, sizeof buf);
    fprintf(stderr, "ferry-bench: %s: %s\n", what, buf);
    exit(1);
}

void fb_tls_setup(const fb_tls_opts *o) {
    if (!o->on) return;
    fb_ctx = SSL_CTX_new(TLS_client_method());
    fb_ssl = calloc(FB_TLS_MAX_FD, sizeof *fb_ssl);
    if (!fb_ctx || !fb_ssl) fb_tls_die("TLS context");
    SSL_CTX_set_mode(fb_ctx, SSL_MODE_ENABLE_PARTIAL_WRITE | SSL_MODE_ACCEPT_MOVING_WRITE_BUFFER);
    SSL_CTX_set_read_ahead(fb_ctx, 1);
    SSL_CTX_set_verify(fb_ctx, o->cacert ? SSL_VERIFY_PEER : SSL_VERIFY_NONE, NULL);
    if (o->cacert && SSL_CTX_load_verify_locations(fb_ctx, o->cacert, NULL) != 1) fb_tls_die(o->cacert);
    if (o->cert && SSL_CTX_use_certificate_chain_file(fb_ctx, o->cert) != 1) fb_tls_die(o->cert);
    if (o->key && SSL_CTX_use_PrivateKey_file(fb_ctx, o->key, SSL_FILETYPE_PEM) != 1) fb_tls_die(o->key);
    fb_sni = o->sni;
}

int fb_tls_attach(int fd) {
    if (!fb_ctx) return 0;
    if (fd >= FB_TLS_MAX_FD) {
        fprintf(stderr, "ferry-bench: fd %d too high for --tls\n", fd);
        return -1;
    }
    SSL *ssl = SSL_new(fb_ctx);
    if (!ssl || !SSL_set_fd(ssl, fd)) fb_tls_die("SSL_new");
    if (fb_sni) SSL_set_tlsext_host_name(ssl, fb_sni);
    if (SSL_connect(ssl) != 1) {
        char buf[256];
        ERR_error_string_n(ERR_get_error(), buf, sizeof buf);
        fprintf(stderr, "ferry-bench: TLS handshake failed: %s\n", buf);
        SSL_free(ssl);
        return -1;
    }
    fb_ssl[fd] = ssl;
    return 0;
}

static ssize_t fb_tls_result(SSL *ssl, int r) {
    if (r > 0) return r;
    switch (SSL_get_error(ssl, r)) {
    case SSL_ERROR_WANT_READ:
    case SSL_ERROR_WANT_WRITE: errno = EAGAIN; return -1;
    case SSL_ERROR_ZERO_RETURN: return 0;
    case SSL_ERROR_SYSCALL: if (!errno) return 0; return -1;
    default: errno = EIO; return -1;
    }
}

ssize_t fb_io_send(int fd, const void *p, size_t len) {
    SSL *ssl = fb_ssl ? fb_ssl[fd] : NULL;
    if (!ssl) return send(fd, p, len, MSG_NOSIGNAL);
    errno = 0;
    return fb_tls_result(ssl, SSL_write(ssl, p, len > 1u << 30 ? 1 << 30 : (int)len));
}

ssize_t fb_io_read(int fd, void *buf, size_t len) {
    SSL *ssl = fb_ssl ? fb_ssl[fd] : NULL;
    if (!ssl) return read(fd, buf, len);
    errno = 0;
    return fb_tls_result(ssl, SSL_read(ssl, buf, len > 1u << 30 ? 1 << 30 : (int)len));
}

int fb_io_pending(int fd) {
    SSL *ssl = fb_ssl ? fb_ssl[fd] : NULL;
    return ssl && SSL_has_pending(ssl);
}

void fb_io_close(int fd) {
    if (fb_ssl && fb_ssl[fd]) {
        SSL_free(fb_ssl[fd]);
        fb_ssl[fd] = NULL;
    }
    close(fd);
}

#else /* a libc-only ferry-bench */

void fb_tls_setup(const fb_tls_opts *o) {
    if (!o->on) return;
    fprintf(stderr, "ferry-bench: --tls: built without TLS (make TLS=no)\n");
    exit(1);
}

int fb_tls_attach(int fd) {
    (void)fd;
    return 0;
}

ssize_t fb_io_send(int fd, const void *p, size_t len) { return send(fd, p, len, MSG_NOSIGNAL); }
ssize_t fb_io_read(int fd, void *buf, size_t len) { return read(fd, buf, len); }

int fb_io_pending(int fd) {
    (void)fd;
    return 0;
}

void fb_io_close(int fd) { close(fd); }

#endif
