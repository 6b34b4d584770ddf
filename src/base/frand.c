/* frand.c - xoshiro256** PRNG (public-domain algorithm by Blackman and
 * Vigna, written from its description) plus getrandom() access. */
#include <stddef.h>
#include "frand.h"
#include <fcntl.h>
#include <string.h>
#include <sys/random.h>
#include <unistd.h>

static uint64_t s[4] = {0x9E3779B97F4A7C15ull, 0xBF58476D1CE4E5B9ull, 0x94D049BB133111EBull, 0x2545F4914F6CDD1Dull};

static inline uint64_t rotl(uint64_t x, int k) { return (x << k) | (x >> (64 - k)); }

uint64_t frand64(void) {
    uint64_t r = rotl(s[1] * 5, 7) * 9, t = s[1] << 17;
    s[2] ^= s[0]; s[3] ^= s[1]; s[1] ^= s[2]; s[0] ^= s[3];
    s[2] ^= t; s[3] = rotl(s[3], 45);
    return r;
}

static uint64_t splitmix(uint64_t *x) {
    uint64_t z = (*x += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

void frand_seed(uint64_t seed) {
    for (int i = 0; i < 4; i++) s[i] = splitmix(&seed);
}

void frand_secure_bytes(void *buf, size_t n) {
    unsigned char *p = buf;
    while (n) {
        ssize_t r = getrandom(p, n, 0);
        if (r <= 0) break;
        p += r; n -= (size_t)r;
    }
    if (n) {
        int fd = open("/dev/urandom", O_RDONLY);
        if (fd >= 0) {
            ssize_t r = read(fd, p, n);
            if (r > 0) n -= (size_t)r;
            close(fd);
        }
    }
}

void frand_init(void) {
    uint64_t seed;
    frand_secure_bytes(&seed, sizeof seed);
    frand_seed(seed);
}

void frand_hex(char *dst, size_t len) {
    static const char hex[] = "0123456789abcdef";
    unsigned char b[64];
    for (size_t i = 0; i < len; i++) {
        if (i % (2 * sizeof b) == 0) frand_secure_bytes(b, sizeof b);
        unsigned char v = b[(i % (2 * sizeof b)) / 2];
        dst[i] = hex[i % 2 ? v & 15 : v >> 4];
    }
    dst[len] = '\0';
}
