/* sha1.c - SHA-1 as FIPS 180-4 defines it (see sha1.h): 512-bit blocks,
 * eighty rounds over a sixteen-word schedule extended in place, the length
 * in bits appended big-endian after a single 1 bit and zero padding. */
#include "sha1.h"

#include <string.h>

static uint32_t rol(uint32_t x, int n) { return (x << n) | (x >> (32 - n)); }

static void block(sha1_ctx *c, const unsigned char *p) {
    uint32_t w[16];
    for (int i = 0; i < 16; i++)
        w[i] = (uint32_t)p[4 * i] << 24 | (uint32_t)p[4 * i + 1] << 16 | (uint32_t)p[4 * i + 2] << 8 | p[4 * i + 3];
    uint32_t a = c->h[0], b = c->h[1], d3 = c->h[2], d = c->h[3], e = c->h[4];
    for (int t = 0; t < 80; t++) {
        if (t >= 16) w[t & 15] = rol(w[(t - 3) & 15] ^ w[(t - 8) & 15] ^ w[(t - 14) & 15] ^ w[t & 15], 1);
        uint32_t f, k;
        if (t < 20) f = (b & d3) | (~b & d), k = 0x5a827999u;
        else if (t < 40) f = b ^ d3 ^ d, k = 0x6ed9eba1u;
        else if (t < 60) f = (b & d3) | (b & d) | (d3 & d), k = 0x8f1bbcdcu;
        else f = b ^ d3 ^ d, k = 0xca62c1d6u;
        uint32_t tmp = rol(a, 5) + f + e + k + w[t & 15];
        e = d;
        d = d3;
        d3 = rol(b, 30);
        b = a;
        a = tmp;
    }
    c->h[0] += a;
    c->h[1] += b;
    c->h[2] += d3;
    c->h[3] += d;
    c->h[4] += e;
}

void sha1_init(sha1_ctx *c) {
    static const uint32_t iv[5] = {0x67452301u, 0xefcdab89u, 0x98badcfeu, 0x10325476u, 0xc3d2e1f0u};
    memcpy(c->h, iv, sizeof iv);
    c->total = 0;
    c->fill = 0;
}

void sha1_update(sha1_ctx *c, const void *data, size_t n) {
    const unsigned char *p = data;
    c->total += n;
    while (n) {
        size_t take = 64 - c->fill < n ? 64 - c->fill : n;
        memcpy(c->block + c->fill, p, take);
        c->fill += take;
        p += take;
        n -= take;
        if (c->fill == 64) {
            block(c, c->block);
            c->fill = 0;
        }
    }
}

void sha1_final(sha1_ctx *c, unsigned char out[20]) {
    uint64_t bits = c->total * 8;
    unsigned char pad = 0x80, zero = 0, len[8];
    sha1_update(c, &pad, 1);
    while (c->fill != 56) sha1_update(c, &zero, 1);
    for (int i = 0; i < 8; i++) len[i] = (unsigned char)(bits >> (56 - 8 * i));
    sha1_update(c, len, 8);
    for (int i = 0; i < 5; i++)
        for (int j = 0; j < 4; j++) out[4 * i + j] = (unsigned char)(c->h[i] >> (24 - 8 * j));
}

void sha1_hex(const void *p, size_t n, char out[SHA1_HEX_LEN + 1]) {
    static const char hex[] = "0123456789abcdef";
    sha1_ctx c;
    unsigned char d[20];
    sha1_init(&c);
    sha1_update(&c, p, n);
    sha1_final(&c, d);
    for (int i = 0; i < 20; i++) {
        out[2 * i] = hex[d[i] >> 4];
        out[2 * i + 1] = hex[d[i] & 15];
    }
    out[SHA1_HEX_LEN] = '\0';
}
