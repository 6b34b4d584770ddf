/* test_hashflood.c - Criterion unit tests: hash flooding needs the seed.
 *
 * Why: with a fixed, known SipHash key an attacker can pick keys that all
 * land in one bucket of the keyspace table and turn every lookup into a
 * walk of a long chain. ferry keys SipHash per process (dict_set_seed from
 * getrandom at start-up). This test crafts keys that collide in the low
 * FLOOD_BITS bits under a known seed, checks that they do pile up in one
 * bucket under that seed, and that under other seeds they spread like any
 * keys. With FERRY_HASHFLOOD_KEYS=path it also writes the crafted keys there,
 * one per line, for tests/integration/test_adversarial.py, which sends them
 * to a real server (random seed) and checks its latency stays normal.
 */
#include <criterion/criterion.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dict.h"

#define FLOOD_KEYS 5000
#define FLOOD_BITS 12           /* 5000 * 2^12 = 20M hashes to craft */
#define TABLE_BITS 13           /* the table size for 5000 keys */

static const uint8_t KNOWN_SEED[16] = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16};

static char keys[FLOOD_KEYS][24];
static size_t klens[FLOOD_KEYS];

static void craft(void)
{
    const uint64_t mask = (1u << FLOOD_BITS) - 1;
    unsigned long long counter = 0;
    dict_set_seed(KNOWN_SEED);
    for (int found = 0; found < FLOOD_KEYS; counter++) {
        char buf[24];
        int n = snprintf(buf, sizeof buf, "hf:%llu", counter);
        if ((dict_hash(buf, (size_t)n) & mask) == 0) {
            memcpy(keys[found], buf, (size_t)n + 1);
            klens[found++] = (size_t)n;
        }
    }
}

/* Largest number of the crafted keys sharing one bucket of a 2^TABLE_BITS
 * table, under the current seed. */
static int max_bucket_load(void)
{
    static int load[1 << TABLE_BITS];
    int max = 0;
    memset(load, 0, sizeof load);
    for (int i = 0; i < FLOOD_KEYS; i++) {
        int b = (int)(dict_hash(keys[i], klens[i]) & ((1u << TABLE_BITS) - 1));
        if (++load[b] > max)
            max = load[b];
    }
    return max;
}

Test(hashflood, crafted_keys_collide_only_under_their_seed, .timeout = 120)
{
    craft();
    dict_set_seed(KNOWN_SEED);
    int known = max_bucket_load();
    cr_assert_geq(known, FLOOD_KEYS / 4, "crafted keys should pile up under the known seed (max load %d)", known);

    uint8_t other[16];
    for (int s = 0; s < 8; s++) {
        for (int i = 0; i < 16; i++)
            other[i] = (uint8_t)(KNOWN_SEED[i] * 31 + s * 7 + 1);
        dict_set_seed(other);
        int load = max_bucket_load();
        /* 5000 keys in 8192 buckets: a max load above 12 has probability < 1e-6 */
        cr_assert_leq(load, 12, "seed %d: crafted keys should spread (max load %d)", s, load);
    }

    const char *out = getenv("FERRY_HASHFLOOD_KEYS");
    if (out && *out) {
        FILE *f = fopen(out, "w");
        cr_assert_not_null(f, "cannot write %s", out);
        for (int i = 0; i < FLOOD_KEYS; i++)
            fprintf(f, "%s\n", keys[i]);
        fclose(f);
    }
}
