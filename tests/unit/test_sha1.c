/* test_sha1.c - SHA-1 against FIPS 180's published examples and against
 * script ids redis-server 7.0 gave (SCRIPT LOAD "return 1"), at lengths
 * around the 55/56/64-byte padding edges and fed in pieces. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <string.h>

#include "sha1.h"

static void check(const char *in, const char *want) {
    char got[SHA1_HEX_LEN + 1];
    sha1_hex(in, strlen(in), got);
    cr_assert_str_eq(got, want, "sha1(\"%s\")", in);
}

Test(sha1, published_vectors) {
    check("", "da39a3ee5e6b4b0d3255bfef95601890afd80709");
    check("abc", "a9993e364706816aba3e25717850c26c9cd0d89d");
    check("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq", "84983e441c3bd26ebaae4aa1f95129e5e54670f1");
    check("The quick brown fox jumps over the lazy dog", "2fd4e1c67a2d28fced849ee1bb76e7391b93eb12");
}

Test(sha1, redis_script_ids) {
    check("return 1", "e0e1f9fabfc9d4800c877a703b823ac0578ff8db");
}

Test(sha1, million_a_in_pieces) {
    sha1_ctx c;
    unsigned char d[20];
    char chunk[1000];
    memset(chunk, 'a', sizeof chunk);
    sha1_init(&c);
    for (int i = 0; i < 1000; i++) sha1_update(&c, chunk, (size_t)(i % 7 == 0 ? 1000 : 1000));
    sha1_final(&c, d);
    static const unsigned char want[20] = {0x34, 0xaa, 0x97, 0x3c, 0xd4, 0xc4, 0xda, 0xa4, 0xf6, 0x1e,
                                           0xeb, 0x2b, 0xdb, 0xad, 0x27, 0x31, 0x65, 0x34, 0x01, 0x6f};
    cr_assert_arr_eq(d, want, 20);
}

Test(sha1, split_feeding_matches_whole) {
    char buf[200];
    for (int i = 0; i < 200; i++) buf[i] = (char)(i * 7 + 3);
    for (size_t len = 50; len < 140; len++) {
        char whole[SHA1_HEX_LEN + 1];
        sha1_hex(buf, len, whole);
        for (size_t cut = 0; cut <= len; cut += 13) {
            sha1_ctx c;
            unsigned char d[20];
            sha1_init(&c);
            sha1_update(&c, buf, cut);
            sha1_update(&c, buf + cut, len - cut);
            sha1_final(&c, d);
            char hex[SHA1_HEX_LEN + 1];
            for (int i = 0; i < 20; i++) snprintf(hex + 2 * i, 3, "%02x", d[i]);
            cr_assert_str_eq(hex, whole, "len %zu cut %zu", len, cut);
        }
    }
}
