/* tls.c - TLS on client connections with OpenSSL (tls.h).
 *
 * The context. tls_configure() builds an SSL_CTX from the tls-* settings
 * the way redis-server 7.0 reads them (protocols, ciphers, client
 * certificates per tls-auth-clients, the session cache, an encrypted key's
 * password, DH parameters) and swaps it in only when every step worked, so
 * a CONFIG SET naming a missing file leaves the server with the
 * certificates it had. Connections hold a reference to the context they
 * were accepted with (OpenSSL counts them), so a reload never disturbs a
 * connection in flight.
 *
 * Reads. read_ahead lets one read(2) bring what the socket holds, up to
 * OpenSSL's buffer of one full record, and tls_read() decrypts record
 * after record into the caller's buffer while OpenSSL still holds bytes:
 * one drain per pass, no read(2) that is known to return EAGAIN. Buffers
 * are released while empty (RELEASE_BUFFERS): an idle TLS connection
 * costs a few KB, not two records' worth; measured, this costs no CPU at
 * P=1 (8.4 against 8.9 us per request). What does not fit stays inside
 * OpenSSL, where epoll cannot see it: tls_has_pending() tells the caller
 * to come back by itself. An error seen after some bytes were returned is
 * kept (sticky) and reported by the next call, which tls_has_pending()
 * brings about.
 *
 * Writes. A flush hands over the iovecs writev would have taken. Pieces
 * smaller than a record are gathered into one record (a pipeline of 100
 * small replies is one SSL_write and one write(2)); a piece of a record or
 * more is written from its own memory. With partial writes on, OpenSSL
 * returns after each record, and a record that met a full socket stays
 * inside it: the next call must offer the same bytes first and at least as
 * many, which holds because output only grows at its end and what is
 * offered depends only on the unsent bytes (ACCEPT_MOVING_WRITE_BUFFER
 * lets them sit at another address, as a gathered record does).
 */
#include "tls.h"
#include "config.h"
#include "server.h"
#include "zmalloc.h"
#include <errno.h>
#include <limits.h>
#include <openssl/err.h>
#include <openssl/pem.h>
#include <openssl/ssl.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

#define TLS_RECORD 16384             /* plaintext of one full record */
#define WRITE_MAX (4 * 1024 * 1024)  /* most bytes one tls_writev() writes (fairness) */
#define PROTO_DEFAULT (P_TLS12 | P_TLS13)

enum { P_TLS1 = 1, P_TLS11 = 2, P_TLS12 = 4, P_TLS13 = 8 };

struct tls_conn {
    SSL *ssl;
    int sticky;         /* the end or an error met after returning bytes: the next read reports it */
    int sticky_errno;   /* its errno, 0 for the end of the stream */
};

static struct {
    SSL_CTX *ctx;       /* for accepted connections; NULL until configured */
    SSL_CTX *client_ctx; /* for the connection to our primary (tls-replication) */
    char stage[TLS_RECORD];
} T;

/* A tls-* value as a string; "" when unset. The caller frees it. */
static char *setting(const char *name) {
    char *v = config_get_by_name(&srv.cfg, name);
    return v ? v : zstrdup("");
}

/* OpenSSL's latest error as text ("error:80000002:system library::No such file or directory"). */
static const char *ssl_error_text(char *buf, size_t cap) {
    unsigned long e = ERR_get_error();
    if (!e) snprintf(buf, cap, "%s", errno ? strerror(errno) : "unknown error");
    else ERR_error_string_n(e, buf, cap);
    ERR_clear_error();
    return buf;
}

/* "TLSv1.2 TLSv1.3" -> P_* bits; -1 for a word Redis does not know. */
static int parse_protocols(const char *s) {
    if (!*s) return PROTO_DEFAULT;
    static const struct { const char *name; int bit; } names[] = {
        {"tlsv1", P_TLS1}, {"tlsv1.1", P_TLS11}, {"tlsv1.2", P_TLS12}, {"tlsv1.3", P_TLS13}};
    int bits = 0;
    char buf[256];
    snprintf(buf, sizeof buf, "%s", s);
    for (char *save = NULL, *w = strtok_r(buf, " ", &save); w; w = strtok_r(NULL, " ", &save)) {
        size_t k = 0;
        while (k < sizeof names / sizeof names[0] && strcasecmp(w, names[k].name)) k++;
        if (k == sizeof names / sizeof names[0]) return -1;
        bits |= names[k].bit;
    }
    return bits;
}

static long protocol_options(int bits) {
    long o = 0;
    if (!(bits & P_TLS1)) o |= SSL_OP_NO_TLSv1;
    if (!(bits & P_TLS11)) o |= SSL_OP_NO_TLSv1_1;
    if (!(bits & P_TLS12)) o |= SSL_OP_NO_TLSv1_2;
    if (!(bits & P_TLS13)) o |= SSL_OP_NO_TLSv1_3;
    return o;
}

static int key_password(char *buf, int size, int rwflag, void *u) {
    (void)rwflag;
    const char *pass = u;
    int n = (int)strlen(pass);
    if (n > size) n = size;
    memcpy(buf, pass, (size_t)n);
    return n;
}

/* A certificate chain and its key (decrypted with the pass), by setting name. */
static int load_keypair(SSL_CTX *ctx, const char *cert_name, const char *key_name, const char *pass_name) {
    char *cert = setting(cert_name), *key = setting(key_name), *pass = setting(pass_name);
    char err[256];
    int ok = 0;
    if (SSL_CTX_use_certificate_chain_file(ctx, cert) <= 0) {
        server_log(LOG_WARNING_, "Failed to load certificate: %s: %s", cert, ssl_error_text(err, sizeof err));
    } else {
        SSL_CTX_set_default_passwd_cb(ctx, key_password);
        SSL_CTX_set_default_passwd_cb_userdata(ctx, pass);
        if (SSL_CTX_use_PrivateKey_file(ctx, key, SSL_FILETYPE_PEM) <= 0 || !SSL_CTX_check_private_key(ctx))
            server_log(LOG_WARNING_, "Failed to load private key: %s: %s", key, ssl_error_text(err, sizeof err));
        else ok = 1;
        SSL_CTX_set_default_passwd_cb_userdata(ctx, NULL); /* pass is freed below */
    }
    zfree(cert), zfree(key), zfree(pass);
    return ok ? 0 : -1;
}

static int load_ca(SSL_CTX *ctx) {
    char *cafile = setting("tls-ca-cert-file"), *cadir = setting("tls-ca-cert-dir");
    char err[256];
    int ok = (!*cafile && !*cadir) || SSL_CTX_load_verify_locations(ctx, *cafile ? cafile : NULL, *cadir ? cadir : NULL) > 0;
    if (!ok) server_log(LOG_WARNING_, "Failed to configure CA certificate(s) file/directory: %s", ssl_error_text(err, sizeof err));
    zfree(cafile), zfree(cadir);
    return ok ? 0 : -1;
}

/* What every context needs before its own parts: the settings Redis
 * refuses to start without. */
static int check_required(void) {
    char *cert = setting("tls-cert-file"), *key = setting("tls-key-file"), *auth = setting("tls-auth-clients");
    char *cafile = setting("tls-ca-cert-file"), *cadir = setting("tls-ca-cert-dir");
    int needs_ca = strcmp(auth, "no") || config_is_yes(&srv.cfg, "tls-replication") ||
                   config_is_yes(&srv.cfg, "tls-cluster");
    int ok = 0;
    if (!*cert) server_log(LOG_WARNING_, "No tls-cert-file configured!");
    else if (!*key) server_log(LOG_WARNING_, "No tls-key-file configured!");
    else if (needs_ca && !*cafile && !*cadir)
        server_log(LOG_WARNING_, "Either tls-ca-cert-file or tls-ca-cert-dir must be specified when tls-cluster, "
                                 "tls-replication or tls-auth-clients are enabled!");
    else ok = 1;
    zfree(cert), zfree(key), zfree(auth), zfree(cafile), zfree(cadir);
    return ok ? 0 : -1;
}

static int verify_mode(void) {
    char *auth = setting("tls-auth-clients");
    int v = !strcmp(auth, "yes") ? SSL_VERIFY_PEER | SSL_VERIFY_FAIL_IF_NO_PEER_CERT
            : !strcmp(auth, "optional") ? SSL_VERIFY_PEER : SSL_VERIFY_NONE;
    zfree(auth);
    return v;
}

/* Protocols, ciphers, DH parameters. */
static int load_policy(SSL_CTX *ctx) {
    char *protos = setting("tls-protocols"), *ciphers = setting("tls-ciphers"), *suites = setting("tls-ciphersuites");
    char *dh = setting("tls-dh-params-file");
    int ok = 0, bits = parse_protocols(protos);
    if (bits <= 0) {
        server_log(LOG_WARNING_, "Invalid tls-protocols specified. Use a combination of 'TLSv1', 'TLSv1.1', "
                                 "'TLSv1.2' and 'TLSv1.3'.");
    } else if (*ciphers && !SSL_CTX_set_cipher_list(ctx, ciphers)) {
        server_log(LOG_WARNING_, "Failed to configure ciphers: %s", ciphers);
    } else if (*suites && !SSL_CTX_set_ciphersuites(ctx, suites)) {
        server_log(LOG_WARNING_, "Failed to configure ciphersuites: %s", suites);
    } else {
        SSL_CTX_set_options(ctx, (uint64_t)protocol_options(bits));
        ok = 1;
        if (*dh) {
            BIO *f = BIO_new_file(dh, "r");
            EVP_PKEY *params = f ? PEM_read_bio_Parameters(f, NULL) : NULL;
            int taken = params && SSL_CTX_set0_tmp_dh_pkey(ctx, params); /* the context owns it */
            if (!f) server_log(LOG_WARNING_, "Failed to load %s: %s", dh, strerror(errno));
            else if (!taken) server_log(LOG_WARNING_, "%s: failed to read DH params.", dh);
            if (!taken) {
                EVP_PKEY_free(params);
                ok = 0;
            }
            BIO_free(f);
            ERR_clear_error();
        } else {
            SSL_CTX_set_dh_auto(ctx, 1);
        }
    }
    zfree(protos), zfree(ciphers), zfree(suites), zfree(dh);
    return ok ? 0 : -1;
}

static void set_session_cache(SSL_CTX *ctx) {
    if (!config_is_yes(&srv.cfg, "tls-session-caching")) {
        SSL_CTX_set_session_cache_mode(ctx, SSL_SESS_CACHE_OFF);
        return;
    }
    SSL_CTX_set_session_cache_mode(ctx, SSL_SESS_CACHE_SERVER);
    SSL_CTX_sess_set_cache_size(ctx, config_get_ll(&srv.cfg, "tls-session-cache-size"));
    SSL_CTX_set_timeout(ctx, (long)config_get_ll(&srv.cfg, "tls-session-cache-timeout"));
    SSL_CTX_set_session_id_context(ctx, (const unsigned char *)"ferry", 5);
}

/* The settings both contexts share: options, buffers, protocols, ciphers. */
static SSL_CTX *new_context(const SSL_METHOD *method) {
    SSL_CTX *ctx = SSL_CTX_new(method);
    if (!ctx) return NULL;
    SSL_CTX_set_options(ctx, SSL_OP_NO_COMPRESSION | SSL_OP_NO_RENEGOTIATION | SSL_OP_IGNORE_UNEXPECTED_EOF);
    if (config_is_yes(&srv.cfg, "tls-prefer-server-ciphers")) SSL_CTX_set_options(ctx, SSL_OP_CIPHER_SERVER_PREFERENCE);
    SSL_CTX_set_mode(ctx, SSL_MODE_ENABLE_PARTIAL_WRITE | SSL_MODE_ACCEPT_MOVING_WRITE_BUFFER |
                              SSL_MODE_RELEASE_BUFFERS);
    SSL_CTX_set_read_ahead(ctx, 1);
    if (load_policy(ctx) == 0) return ctx;
    SSL_CTX_free(ctx);
    return NULL;
}

/* For accepted connections: the server's certificate, clients checked per tls-auth-clients. */
static SSL_CTX *server_context(void) {
    SSL_CTX *ctx = new_context(TLS_server_method());
    if (!ctx) return NULL;
    set_session_cache(ctx);
    SSL_CTX_set_verify(ctx, verify_mode(), NULL);
    if (load_keypair(ctx, "tls-cert-file", "tls-key-file", "tls-key-file-pass") == 0 && load_ca(ctx) == 0) return ctx;
    SSL_CTX_free(ctx);
    return NULL;
}

/* For our connection to a primary (tls-replication): tls-client-cert-file
 * when set, else the server's own, and the primary's certificate checked. */
static SSL_CTX *client_context(void) {
    SSL_CTX *ctx = new_context(TLS_client_method());
    if (!ctx) return NULL;
    char *ccert = setting("tls-client-cert-file");
    int own = *ccert != 0;
    zfree(ccert);
    SSL_CTX_set_verify(ctx, SSL_VERIFY_PEER, NULL);
    if (load_keypair(ctx, own ? "tls-client-cert-file" : "tls-cert-file", own ? "tls-client-key-file" : "tls-key-file",
                     own ? "tls-client-key-file-pass" : "tls-key-file-pass") == 0 &&
        load_ca(ctx) == 0)
        return ctx;
    SSL_CTX_free(ctx);
    return NULL;
}

static int configure(void) {
    if (check_required() != 0) return -1;
    SSL_CTX *sctx = server_context(), *cctx = sctx ? client_context() : NULL;
    if (!cctx) {
        if (sctx) SSL_CTX_free(sctx);
        return -1;
    }
    if (T.ctx) SSL_CTX_free(T.ctx);
    if (T.client_ctx) SSL_CTX_free(T.client_ctx);
    T.ctx = sctx;
    T.client_ctx = cctx;
    return 0;
}

/* OpenSSL's error queue is left empty by every call here, so the hot
 * paths (tls_read, tls_writev) need not clear it before each SSL call for
 * SSL_get_error to read it right: they clear it after each failure. */
int tls_configure(void) {
    int rc = configure();
    ERR_clear_error();
    return rc;
}

static tls_conn *conn_new(SSL_CTX *ctx, int fd, int accept) {
    if (!ctx) return NULL;
    SSL *ssl = SSL_new(ctx);
    if (!ssl || !SSL_set_fd(ssl, fd)) {
        SSL_free(ssl);
        ERR_clear_error();
        return NULL;
    }
    if (accept) SSL_set_accept_state(ssl);
    else SSL_set_connect_state(ssl);
    tls_conn *t = zcalloc(sizeof *t);
    t->ssl = ssl;
    return t;
}

tls_conn *tls_conn_new(int fd) { return conn_new(T.ctx, fd, 1); }
tls_conn *tls_conn_connect(int fd) { return conn_new(T.client_ctx, fd, 0); }

/* No close_notify: redis-server 7.0 sends none either, and the socket may
 * be gone already. */
void tls_conn_free(tls_conn *t) {
    if (!t) return;
    SSL_free(t->ssl);
    zfree(t);
}

/* Why an SSL call failed, for the log. */
static void describe_failure(char *err, size_t errlen) {
    if (ERR_peek_error()) ssl_error_text(err, errlen);
    else snprintf(err, errlen, "%s", errno ? strerror(errno) : "connection closed by the peer");
}

int tls_handshake(tls_conn *t, int *want_write, char *err, size_t errlen) {
    ERR_clear_error();
    errno = 0;
    int r = SSL_do_handshake(t->ssl);
    if (r == 1) return 1;
    int e = SSL_get_error(t->ssl, r);
    if (e == SSL_ERROR_WANT_READ || e == SSL_ERROR_WANT_WRITE) {
        *want_write = e == SSL_ERROR_WANT_WRITE;
        return 0;
    }
    describe_failure(err, errlen);
    return -1;
}

/* errno for a failed SSL call that is not a retry: 0 for the end of the stream. */
static int failure_errno(int e) {
    if (e == SSL_ERROR_ZERO_RETURN) return 0;
    if (e == SSL_ERROR_SYSCALL && !ERR_peek_error()) return errno ? errno : 0;
    return EIO;
}

ssize_t tls_read(tls_conn *t, void *buf, size_t len) {
    size_t got = 0;
    if (t->sticky) {
        errno = t->sticky_errno;
        return t->sticky_errno ? -1 : 0;
    }
    while (got < len) {
        int want = len - got > INT_MAX ? INT_MAX : (int)(len - got);
        errno = 0;
        int n = SSL_read(t->ssl, (char *)buf + got, want);
        if (n > 0) {
            got += (size_t)n;
            if (!SSL_has_pending(t->ssl)) break; /* the socket was drained by the last read(2) */
            continue;
        }
        int e = SSL_get_error(t->ssl, n);
        if (e == SSL_ERROR_WANT_READ || e == SSL_ERROR_WANT_WRITE) {
            if (got) break;
            errno = EAGAIN;
            return -1;
        }
        int en = failure_errno(e);
        ERR_clear_error();
        if (got) {
            t->sticky = 1;
            t->sticky_errno = en;
            break;
        }
        if (!en) return 0;
        errno = en;
        return -1;
    }
    return (ssize_t)got;
}

int tls_has_pending(const tls_conn *t) { return t->sticky || SSL_has_pending(t->ssl); }

/* The next piece to offer at (i, off): a record gathered into the stage,
 * or a big piece in place. */
static const char *next_piece(const struct iovec *iov, int cnt, int i, size_t off, size_t *n) {
    size_t left = iov[i].iov_len - off;
    if (left >= TLS_RECORD) {
        *n = left > WRITE_MAX ? WRITE_MAX : left;
        return (const char *)iov[i].iov_base + off;
    }
    size_t k = 0;
    for (; i < cnt && k < TLS_RECORD; i++, off = 0) {
        size_t take = iov[i].iov_len - off;
        if (take > TLS_RECORD - k) take = TLS_RECORD - k;
        memcpy(T.stage + k, (const char *)iov[i].iov_base + off, take);
        k += take;
    }
    *n = k;
    return T.stage;
}

ssize_t tls_writev(tls_conn *t, const struct iovec *iov, int cnt) {
    size_t done = 0, off = 0;
    int i = 0;
    while (i < cnt && !iov[i].iov_len) i++;
    while (i < cnt && done < WRITE_MAX) {
        size_t n;
        const char *p = next_piece(iov, cnt, i, off, &n);
        errno = 0;
        int w = SSL_write(t->ssl, p, (int)n);
        if (w <= 0) {
            int e = SSL_get_error(t->ssl, w);
            int retry = e == SSL_ERROR_WANT_WRITE || e == SSL_ERROR_WANT_READ;
            int en = retry ? EAGAIN : failure_errno(e);
            ERR_clear_error();
            if (done) break;
            errno = en ? en : EPIPE;
            return -1;
        }
        done += (size_t)w;
        for (size_t left = (size_t)w; left;) { /* advance (i, off) by w bytes */
            size_t room = iov[i].iov_len - off;
            if (left < room) {
                off += left;
                break;
            }
            left -= room;
            i++, off = 0;
        }
        while (i < cnt && iov[i].iov_len == off) i++, off = 0;
    }
    return (ssize_t)done;
}
