/* test_crc16.c - Criterion unit tests for src/base/crc16.c.
 *
 * Why: a cluster client computes a key's slot itself and sends the command
 * to the node it believes owns that slot; if ferry's CRC16 or hash-tag rule
 * differed by one bit, every such command would be answered with MOVED and
 * the keys of one tag could be spread over several slots. The table-driven
 * CRC is compared with a bit-at-a-time reference, and the slots with values
 * taken from redis-server 7.0.15's CLUSTER KEYSLOT.
 */
#include <criterion/criterion.h>

#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "crc16.h"

/* The definition, one bit at a time: MSB first, polynomial 0x1021. */
static uint16_t crc16_ref(const unsigned char *p, size_t len) {
    unsigned crc = 0;
    for (size_t i = 0; i < len; i++) {
        crc ^= (unsigned)p[i] << 8;
        for (int b = 0; b < 8; b++) crc = (crc & 0x8000u) ? ((crc << 1) ^ 0x1021u) & 0xffffu : (crc << 1) & 0xffffu;
    }
    return (uint16_t)crc;
}

static unsigned slot_of(const char *s) { return key_hash_slot(s, strlen(s)); }

Test(crc16, check_value) {
    cr_assert_eq(crc16("123456789", 9), 0x31C3);
    cr_assert_eq(crc16("", 0), 0);
}

Test(crc16, matches_bitwise_reference) {
    unsigned char buf[300];
    uint64_t seed = 42;
    for (size_t i = 0; i < sizeof buf; i++) {
        seed = seed * 6364136223846793005ULL + 1442695040888963407ULL;
        buf[i] = (unsigned char)(seed >> 56);
    }
    for (size_t off = 0; off < 8; off++)
        for (size_t len = 0; len + off <= sizeof buf; len += 7)
            cr_assert_eq(crc16((const char *)buf + off, len), crc16_ref(buf + off, len), "off %zu len %zu", off, len);
}

/* CLUSTER KEYSLOT answers of redis-server 7.0.15. */
Test(crc16, slots_as_redis) {
    static const struct {
        const char *key;
        unsigned slot;
    } cases[] = {
        {"somekey", 11058}, {"foo", 12182},          {"bar", 5061},
        {"hello", 866},     {"{user1000}.following", 3443}, {"foo{}{bar}", 8363},
        {"foo{{bar}}zap", 4015}, {"foo{bar}{zap}", 5061}, {"{bar", 4015},
        {"", 0},            {"{", 4092},            {"}", 12090},
        {"{}", 15257},      {"a{b}", 3300},         {"{a}}", 15495},
        {"x{y", 2740},      {"abc{de}fg", 15341},   {"a}b{c}", 7365},
        {"123456789", 12739}, {"key:000000001", 13459},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
        cr_assert_eq(slot_of(cases[i].key), cases[i].slot, "%s", cases[i].key);
}

Test(crc16, hash_tags) {
    cr_assert_eq(slot_of("{user1000}.following"), slot_of("{user1000}.followers"));
    cr_assert_eq(slot_of("{user1000}.following"), slot_of("user1000"));
    cr_assert_eq(slot_of("foo{}{bar}"), crc16("foo{}{bar}", 10) & (CLUSTER_SLOTS - 1)); /* empty tag: whole key */
    cr_assert_eq(slot_of("foo{{bar}}zap"), slot_of("{bar"));                             /* first '{' to first '}' */
    cr_assert_eq(slot_of("foo{bar}{zap}"), slot_of("bar"));                              /* the first tag only */
    cr_assert_eq(slot_of("no}tag{here"), crc16("no}tag{here", 11) & (CLUSTER_SLOTS - 1)); /* '}' before '{' */
}

/* Bytes after len are never looked at, and a tag needs its '}' within len. */
Test(crc16, bounded_by_len) {
    const char *s = "ab{cd}ef";
    cr_assert_eq(key_hash_slot(s, 5), crc16(s, 5) & (CLUSTER_SLOTS - 1));
    cr_assert_eq(key_hash_slot(s, 6), slot_of("cd"));
    char bin[4] = {'{', 0, '}', 'x'};
    cr_assert_eq(key_hash_slot(bin, 4), crc16(bin + 1, 1) & (CLUSTER_SLOTS - 1));
    cr_assert_eq(key_hash_slot(NULL, 0), 0);
}

Test(crc16, slots_in_range) {
    char k[32];
    for (int i = 0; i < 100000; i++) {
        int n = snprintf(k, sizeof k, "key:%d", i);
        cr_assert_lt(key_hash_slot(k, (size_t)n), CLUSTER_SLOTS);
    }
}
