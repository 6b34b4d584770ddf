/* crc16.c - CRC-16/XMODEM and the Redis Cluster hash slot of a key (see
 * crc16.h for the parameters and the hash-tag rule).
 *
 * Why tables: a key's slot is computed for every keyed command in cluster
 * mode. One table lookup per byte replaces eight bit steps, but each lookup
 * waits for the previous one (the index depends on the register), about 7
 * cycles a byte: 16-byte keys made the CRC 9% of a pipelined SET's server
 * time. So four bytes are taken per step ("slicing by 4"): the CRC with a
 * zero start is linear in the message, and a 16-bit register is absorbed by
 * the first two bytes, so
 *   crc(r, b0 b1 b2 b3 ...) = T3[b0 ^ r>>8] ^ T2[b1 ^ r&255] ^ T1[b2] ^ T0[b3]
 * where Tk[x] is the register after byte x followed by k zero bytes: four
 * independent lookups per 4 bytes. The tables (4 x 512 bytes) are built
 * from the polynomial on the first call, like crc64.c's: no generated
 * literal to trust. The server is single-threaded; a racing first call would
 * only compute the same values twice. */
#include "crc16.h"

#include <stdbool.h>
#include <string.h>

#define CRC16_XMODEM_POLY 0x1021u

static uint16_t crc16_table[4][256]; /* [k][x]: byte x followed by k zero bytes */
static bool crc16_table_ready;

/* The register after shifting byte b (in the top 8 bits) through 8 steps. */
static uint16_t crc16_byte_step(unsigned b) {
    unsigned r = b << 8;
    for (int bit = 0; bit < 8; bit++)
        r = (r & 0x8000u) ? (r << 1) ^ CRC16_XMODEM_POLY : r << 1;
    return (uint16_t)r;
}

/* One byte through the register, by the first table. */
static inline uint16_t crc16_step(uint16_t crc, unsigned char b) {
    return (uint16_t)((crc << 8) ^ crc16_table[0][((crc >> 8) ^ b) & 0xffu]);
}

static void crc16_init(void) {
    for (unsigned b = 0; b < 256; b++) crc16_table[0][b] = crc16_byte_step(b);
    for (int k = 1; k < 4; k++)
        for (unsigned b = 0; b < 256; b++) crc16_table[k][b] = crc16_step(crc16_table[k - 1][b], 0);
    crc16_table_ready = true;
}

uint16_t crc16(const char *buf, size_t len) {
    if (!crc16_table_ready) crc16_init();
    const unsigned char *p = (const unsigned char *)buf;
    uint16_t crc = 0;
    for (; len >= 4; p += 4, len -= 4)
        crc = crc16_table[3][p[0] ^ (crc >> 8)] ^ crc16_table[2][p[1] ^ (crc & 0xffu)] ^ crc16_table[1][p[2]] ^
              crc16_table[0][p[3]];
    for (; len; p++, len--) crc = crc16_step(crc, *p);
    return crc;
}

unsigned key_hash_slot(const char *key, size_t len) {
    const char *open = len ? memchr(key, '{', len) : NULL;
    if (open) {
        size_t after = (size_t)(open - key) + 1;
        const char *close = memchr(open + 1, '}', len - after);
        if (close && close > open + 1) return crc16(open + 1, (size_t)(close - open - 1)) & (CLUSTER_SLOTS - 1);
    }
    return crc16(key, len) & (CLUSTER_SLOTS - 1);
}
