/* cmd_bitops.h - the pure bit helpers of the bitmap commands
 * (src/commands/cmd_bitops.c), shared with their unit test
 * (tests/unit/test_bitops.c). Bits are numbered as Redis numbers them: bit 0
 * is the most significant bit of byte 0.
 */
#ifndef FERRY_CMD_BITOPS_H
#define FERRY_CMD_BITOPS_H

#include <stddef.h>
#include <stdint.h>

/* Set bits in p[0..n), eight bytes at a time. */
long long bits_popcount(const unsigned char *p, size_t n);

/* Position of the first bit equal to `bit` in p[0..n); when there is none:
 * -1 when looking for a 1, n*8 (the first bit past the end) for a 0. */
long long bits_pos(const unsigned char *p, size_t n, int bit);

/* The bits-wide field (1..64) at bit offset off, as unsigned / sign-extended. */
uint64_t bits_get_u(const unsigned char *p, uint64_t off, unsigned bits);
int64_t bits_get_i(const unsigned char *p, uint64_t off, unsigned bits);
/* Write the low `bits` bits of v at bit offset off. */
void bits_set_u(unsigned char *p, uint64_t off, unsigned bits, uint64_t v);

/* BITFIELD overflow modes. */
enum { BITS_WRAP = 0, BITS_SAT = 1, BITS_FAIL = 2 };

/* Would value + incr overflow a bits-wide field? 0: no; 1 over the maximum,
 * -1 under the minimum. On overflow *out is what WRAP or SAT stores (left
 * alone for FAIL). The tests are Redis 7.0's, with its arithmetic: a SET
 * value far outside the type (incr 0) can report 1 where -1 is meant, so
 * SAT then stores the maximum, as redis-server does. */
int bits_overflow_u(uint64_t value, int64_t incr, unsigned bits, int mode, uint64_t *out);
int bits_overflow_i(int64_t value, int64_t incr, unsigned bits, int mode, int64_t *out);

/* BITOP operations. */
enum { BITS_AND = 0, BITS_OR = 1, BITS_XOR = 2, BITS_NOT = 3 };

/* dst[0..maxlen) = op over the n sources src[i][0..len[i]) (missing bytes
 * read as 0; NOT takes the one source), eight bytes at a time. */
void bits_op(int op, unsigned char *dst, size_t maxlen, const unsigned char *const *src, const size_t *len, int n);

#endif
