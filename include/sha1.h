/* sha1.h - SHA-1 (FIPS 180-4), for script ids: EVALSHA names a script by
 * the SHA-1 of its body in lowercase hex, as Redis does. Not for security. */
#ifndef FERRY_SHA1_H
#define FERRY_SHA1_H

#include <stddef.h>
#include <stdint.h>

#define SHA1_HEX_LEN 40

typedef struct sha1_ctx {
    uint32_t h[5];
    uint64_t total;             /* bytes fed */
    unsigned char block[64];
    size_t fill;                /* bytes waiting in block */
} sha1_ctx;

void sha1_init(sha1_ctx *c);
void sha1_update(sha1_ctx *c, const void *p, size_t n);
void sha1_final(sha1_ctx *c, unsigned char out[20]);
/* The digest of p[0..n) as 40 lowercase hex digits and a NUL. */
void sha1_hex(const void *p, size_t n, char out[SHA1_HEX_LEN + 1]);

#endif
