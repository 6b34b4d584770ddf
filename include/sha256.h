/* sha256.h - SHA-256 (FIPS 180-4), for ACL password hashes: ACL stores
 * and compares passwords as the lowercase hex SHA-256 of their bytes. */
#ifndef FERRY_SHA256_H
#define FERRY_SHA256_H

#include <stddef.h>
#include <stdint.h>

typedef struct sha256_ctx {
    uint32_t h[8];
    uint64_t total;         /* bytes hashed so far */
    unsigned char buf[64];  /* partial block */
    size_t blen;
} sha256_ctx;

void sha256_init(sha256_ctx *ctx);
void sha256_update(sha256_ctx *ctx, const void *data, size_t len);
void sha256_final(sha256_ctx *ctx, unsigned char out[32]);
/* The digest of data as 64 lowercase hex digits and a NUL. */
void sha256_hex(const void *data, size_t len, char out[65]);

#endif
