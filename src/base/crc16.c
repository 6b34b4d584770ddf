/* crc16.c - CRC-16/XMODEM and the Redis Cluster hash slot of a key (see
 * crc16.h for the parameters and the hash-tag rule).
 *
 * Why a table: a key's slot is computed for every keyed command in cluster
 * mode, so the CRC is one lookup and one shift per byte instead of eight
 * bit steps. The 256-entry table (512 bytes) is built from the polynomial
 * on the first call, like crc64.c's: no generated literal to trust. The
 * server is single-threaded; a racing first call would only compute the
 * same values twice. */
#include "crc16.h"

#include <stdbool.h>
#include <string.h>

#define CRC16_XMODEM_POLY 0x1021u

static uint16_t crc16_table[256];
static bool crc16_table_ready;

/* The register after shifting byte b (in the top 8 bits) through 8 steps. */
static uint16_t crc16_byte_step(unsigned b) {
    unsigned r = b << 8;
    for (int bit = 0; bit < 8; bit++)
        r = (r & 0x8000u) ? (r << 1) ^ CRC16_XMODEM_POLY : r << 1;
    return (uint16_t)r;
}

static void crc16_init(void) {
    for (unsigned b = 0; b < 256; b++) crc16_table[b] = crc16_byte_step(b);
    crc16_table_ready = true;
}

uint16_t crc16(const char *buf, size_t len) {
    if (!crc16_table_ready) crc16_init();
    const unsigned char *p = (const unsigned char *)buf;
    uint16_t crc = 0;
    for (size_t i = 0; i < len; i++) crc = (uint16_t)((crc << 8) ^ crc16_table[((crc >> 8) ^ p[i]) & 0xffu]);
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
