/* crc16.h - the CRC16 Redis Cluster hashes keys with, and the hash slot of
 * a key.
 *
 * The CRC is CRC-16/XMODEM (also called CCITT in Redis's sources):
 * polynomial 0x1021, initial value 0, no reflection, no final xor; the
 * check value of "123456789" is 0x31C3. A key's slot is that CRC modulo
 * CLUSTER_SLOTS over the whole key, or, when the key has a hash tag (a '{'
 * followed later by a '}' with at least one byte between them), over the
 * bytes between the first '{' and the first '}' after it only, so related
 * keys ("{user1}.a", "{user1}.b") land in one slot. */
#ifndef FERRY_CRC16_H
#define FERRY_CRC16_H

#include <stddef.h>
#include <stdint.h>

#define CLUSTER_SLOTS 16384

/* CRC-16/XMODEM of buf[0, len). */
uint16_t crc16(const char *buf, size_t len);

/* The hash slot of key[0, len): 0 .. CLUSTER_SLOTS-1. */
unsigned key_hash_slot(const char *key, size_t len);

#endif
