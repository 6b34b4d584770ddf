/* crc64.h - the CRC-64 Redis puts at the end of RDB files and DUMP
 * payloads: the "Jones" polynomial 0xad93d23594c935a9, reflected input and
 * output, initial value 0, no final xor (CRC-64/Jones as catalogued; the
 * check value of "123456789" is 0xe9c6d914c4b8d9ca). Table driven (slicing
 * by 8; the tables are built on the first call), about 2 GB/s; no state
 * beyond the running value. */
#ifndef FERRY_CRC64_H
#define FERRY_CRC64_H

#include <stddef.h>
#include <stdint.h>

/* The CRC of buf[0, len) continued from `crc` (0 to start). */
uint64_t crc64(uint64_t crc, const void *buf, size_t len);

#endif
