/* frand.h - fast non-cryptographic PRNG (xoshiro256**) seeded from
 * getrandom(), for RANDOMKEY, sampling and eviction; plus the process seed
 * bytes used to key the hash function. */
#ifndef FERRY_FRAND_H
#define FERRY_FRAND_H
#include <stdint.h>
void frand_init(void);                 /* seeds from getrandom(); idempotent */
void frand_seed(uint64_t s);           /* deterministic seed (tests) */
uint64_t frand64(void);
static inline uint64_t frand_below(uint64_t n) { return n ? frand64() % n : 0; }
/* Fills buf with n bytes from getrandom() (falls back to /dev/urandom). */
void frand_secure_bytes(void *buf, size_t n);
/* len random lowercase hex digits into dst, then a NUL (run ids,
 * replication ids, EOF marks). */
void frand_hex(char *dst, size_t len);
#endif
