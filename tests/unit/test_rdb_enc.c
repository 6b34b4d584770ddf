/* test_rdb_enc.c - Criterion unit tests for src/base/rdb_enc.c, the codecs for
 * the listpacks, ziplists, zipmaps and intsets inside RDB files and DUMP
 * payloads.
 *
 * Why: these bytes leave ferry (DUMP, RDB files read by real Redis) and
 * enter it from anywhere (RESTORE, foreign RDB files). So the builder must
 * write Redis's exact bytes, and the readers must decode every form any
 * Redis version wrote while never reading outside the buffer.
 *
 * Byte identity: the vectors below were captured from redis-server 7.0.15
 * (CONFIG SET rdbcompression no, then DUMP; the listpack or intset is the
 * RDB string inside the payload), from ziplists/zipmaps/intsets extracted
 * from the old RDB files in Redis's own test suite (tests/assets/,
 * RDB versions 3 to 10; decoded elements checked against what
 * redis-server 7.0 shows after loading the file), and from ziplists and
 * zipmaps crafted with every encoding form and accepted by redis-server
 * 7.0's RESTORE with sanitize-dump-payload yes (its deep validation). Small
 * vectors are inline hex, large ones a length and FNV-1a 64 hash of the
 * bytes, rebuilt from a description of their elements (S: a string, R: one
 * byte repeated, D: a sorted-set score, I: an integer element, Q(n)/Z(n):
 * the pairs i,i or i,"v" for i < n).
 *
 * Robustness: every truncation and many single-byte corruptions of valid
 * encodings must give -1 or a consistent result (iteration agrees with the
 * validator, and a listpack rebuilt from the elements holds the same ones).
 * Each input is an exact-size heap copy, so the sanitizer build
 * (EXTRA_CFLAGS=-fsanitize=address,undefined) flags any read past it.
 */
#include <criterion/criterion.h>

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rdb_enc.h"
#include "util.h"
#include "zmalloc.h"

/* ------------------------------------------------------------ vectors */

typedef struct vop {
    char k;             /* s string, r repeat, d score, i integer, q/z pairs */
    const char *s;
    size_t n;
    double d;
    long long i;
} vop;
#define S(x) {'s', x, sizeof(x) - 1, 0, 0}
#define R(c, cnt) {'r', c, cnt, 0, 0}
#define D(x) {'d', NULL, 0, x, 0}
#define I(x) {'i', NULL, 0, 0, x}
#define Q(cnt) {'q', NULL, cnt, 0, 0}
#define Z(cnt) {'z', NULL, cnt, 0, 0}

typedef struct lp_vec {
    const char *name;   /* the command that made the value (and its RDB type) */
    const vop *ops;
    size_t nops;
    const char *hex;    /* the listpack, or NULL: then only len and fnv */
    size_t len;
    uint64_t fnv;
} lp_vec;

typedef struct is_vec {
    const char *name;
    const int64_t *vals;
    size_t n;
    const char *hex;
} is_vec;

typedef struct crafted_vec {
    const char *name;
    char kind;          /* z ziplist (RDB type 13), m zipmap (type 9) */
    const vop *ops;
    size_t nops, nelems;
    const char *hex;    /* NULL: rebuilt with the test writers below */
    size_t len;
    uint64_t fnv;
    size_t lp_len;      /* the listpack redis-server 7.0 DUMPed after RESTORE */
    uint64_t lp_fnv;
} crafted_vec;

typedef struct old_vec {
    const char *name;
    char kind;          /* z ziplist, m zipmap, i intset */
    const char *hex;
    const vop *ops;     /* S = string element, I = integer element */
    size_t nops;
    const char *lp_hex; /* what redis-server 7.0 DUMPs for the key once loaded */
} old_vec;

/* listpack vectors: 18 listpacks from 15 values DUMPed by redis-server 7.0.15 */
static const vop lpv0_ops[] = {S("f1"), S("v1"), S("f2"), S("123")};
static const vop lpv1_ops[] = {S("0"), S("0"), S("127"), S("127"), S("128"), S("128"), S("-1"), S("-1"), S("-64"), S("-64"), S("4095"), S("4095"), S("4096"), S("4096"), S("-4096"), S("-4096"), S("-4097"), S("-4097"), S("32767"), S("32767"), S("32768"), S("32768"), S("-32768"), S("-32768"), S("-32769"), S("-32769"), S("8388607"), S("8388607"), S("8388608"), S("8388608"), S("-8388608"), S("-8388608"), S("-8388609"), S("-8388609"), S("2147483647"), S("2147483647"), S("2147483648"), S("2147483648"), S("-2147483648"), S("-2147483648"), S("-2147483649"), S("-2147483649"), S("9223372036854775807"), S("9223372036854775807"), S("-9223372036854775808"), S("-9223372036854775808")};
static const vop lpv2_ops[] = {S("k0"), S("-0"), S("k1"), S("007"), S("k2"), S("+5"), S("k3"), S("12a"), S("k4"), S(""), S("k5"), S("9223372036854775808"), S("k6"), S("-9223372036854775809"), S("k7"), S(" 1"), S("k8"), S("1 "), S("k9"), S("00"), S("k10"), S("-"), S("k11"), S("0x10"), S("k12"), S("1e3"), S("k13"), S("18446744073709551616"), S("k14"), S("99999999999999999999"), S("k15"), S("-00"), S("k16"), S("1.0"), S("k17"), S("\x00""")};
static const vop lpv3_ops[] = {S("f63"), R("a", 63), S("f64"), R("a", 64), S("f125"), R("a", 125), S("f126"), R("a", 126), S("f127"), R("a", 127), S("f128"), R("a", 128)};
static const vop lpv4_ops[] = {S("f4095"), R("b", 4095), S("f4096"), R("b", 4096)};
static const vop lpv5_ops[] = {S("f16377"), R("c", 16377), S("f16378"), R("c", 16378)};
static const vop lpv6_ops[] = {S("f"), D(-INFINITY), S("b"), D(-2.5), S("g"), D(0.0), S("h"), D(0.1), S("a"), D(1.0), S("c"), D(3.14159), S("d"), D(1e+300), S("e"), D(INFINITY)};
static const vop lpv7_ops[] = {S("m4"), D(-4.611686018427389e+18), S("m3"), D(-4.611686018427388e+18), S("mf"), D(-123.456), S("mc"), D(-1e-05), S("m0"), D(-0.0), S("ma"), D(5e-324), S("m6"), D(1e-300), S("m8"), D(2.5e-05), S("md"), D(0.30000000000000004), S("m9"), D(1000000000000000.0), S("me"), D(4503599627370495.5), S("m7"), D(9007199254740992.0), S("m1"), D(4.611686018427388e+18), S("m2"), D(4.611686018427389e+18), S("m5"), D(1e+19), S("mb"), D(1.7976931348623157e+308)};
static const vop lpv8_ops[] = {S("1"), D(1.0), S("-2"), D(2.0), S("200000"), D(3.0), S("-0"), D(4.0), S("99999999999999999999"), D(5.5), S("128"), D(128.0)};
static const vop lpv9_ops[] = {S("a"), S("b"), S("c"), S("1"), S("2"), S("3"), S("-1"), S(""), S("hello world")};
static const vop lpv10_ops[] = {S("\x00"""), S("1.0"), S("-00"), S("99999999999999999999"), S("18446744073709551616"), S("1e3"), S("0x10"), S("-"), S("00"), S("1 "), S(" 1"), S("-9223372036854775809"), S("9223372036854775808"), S(""), S("12a"), S("+5"), S("007"), S("-0"), S("-9223372036854775808"), S("9223372036854775807"), S("-2147483649"), S("-2147483648"), S("2147483648"), S("2147483647"), S("-8388609"), S("-8388608"), S("8388608"), S("8388607"), S("-32769"), S("-32768"), S("32768"), S("32767"), S("-4097"), S("-4096"), S("4096"), S("4095"), S("-64"), S("-1"), S("128"), S("127"), S("0")};
static const vop lpv11_ops[] = {R("d", 63), R("d", 64), R("e", 4095)};
static const vop lpv12_ops[] = {S("a")};
static const vop lpv13_ops[] = {R("x", 2097145)};
static const vop lpv14_ops[] = {R("y", 2097146)};
static const vop lpv15_ops[] = {S("b")};
static const vop lpv16_ops[] = {Q(32768)};
static const vop lpv17_ops[] = {Q(32767)};
static const lp_vec lp_vectors[] = {
    {"HSET h1 f1 v1 f2 123 (type 16)", lpv0_ops, 4, "1500000004008266310382763103826632037b01ff", 21, 0xf8d511e08f6b2f24ULL},
    {"HSET h2 0 0 127 127 128 128 -1 -1 -64 -64 4095 4095 4096 4096 -4096 -4096 -4097 -4097 32767 32767 32768 3276 (type 16)", lpv1_ops, 46, "f50000002e00000100017f017f01c08002c08002dfff02dfff02dfc002dfc002cfff02cfff02f1001003f1001003d00002d00002f1ffef03f1ffef03f1ff7f03f1ff7f03f200800004f200800004f1008003f1008003f2ff7fff04f2ff7fff04f2ffff7f04f2ffff7f04f30000800005f30000800005f200008004f200008004f3ffff7fff05f3ffff7fff05f3ffffff7f05f3ffffff7f05f4000000800000000009f4000000800000000009f30000008005f30000008005f4ffffff7fffffffff09f4ffffff7fffffffff09f4ffffffffffffff7f09f4ffffffffffffff7f09f4000000000000008009f4000000000000008009ff", 245, 0xa5cd0cbc2a94223dULL},
    {"HSET h3 k0 -0 k1 007 k2 +5 k3 12a k4  k5 9223372036854775808 k6 -9223372036854775809 k7  1 k8 1  k9 00 k10 - (type 16)", lpv2_ops, 36, "e90000002400826b3003822d3003826b31038330303704826b3203822b3503826b33038331326104826b34038001826b3503933932323333373230333638353437373538303814826b3603942d3932323333373230333638353437373538303915826b370382203103826b380382312003826b390382303003836b313004812d02836b313104843078313005836b3132048331653304836b31330494313834343637343430373337303935353136313615836b31340494393939393939393939393939393939393939393915836b313504832d303004836b31360483312e3004836b313704810002ff", 233, 0xada5a70df139a8dbULL},
    {"HSET h4 f63 aaaaaaaaaaaaaaaaaaaa f64 aaaaaaaaaaaaaaaaaaaa f125 aaaaaaaaaaaaaaaaaaaa f126 aaaaaaaaaaaaaaaaaaa (type 16)", lpv3_ops, 12, NULL, 694, 0xf5a18facacc21202ULL},
    {"HSET h5 f4095 bbbbbbbbbbbbbbbbbbbb f4096 bbbbbbbbbbbbbbbbbbbb (type 16)", lpv4_ops, 4, NULL, 8223, 0x785cf6cc9b4a93c4ULL},
    {"HSET h6 f16377 cccccccccccccccccccc f16378 cccccccccccccccccccc (type 16)", lpv5_ops, 4, NULL, 32793, 0xe912ca35b6fc3283ULL},
    {"ZADD z1 1 a -2.5 b 3.14159 c 1e300 d inf e -inf f 0 g 0.1 h (type 17)", lpv6_ops, 16, "760000001000816602842d696e6605816202842d322e3505816702000181680293302e313030303030303030303030303030303114816102010181630292332e313431353839393939393939393939391381640297312e30303030303030303030303030303031652b3330301881650283696e6604ff", 118, 0x80ea5ca0d2d82768ULL},
    {"ZADD z2 -0.0 m0 4611686018427387904 m1 4611686018427388928 m2 -4611686018427387904 m3 -4611686018427388928 m (type 17)", lpv7_ops, 32, "470100002000826d3403972d342e36313136383630313834323733383839652b313818826d3303f400000000000000c009826d6603882d3132332e34353609826d6303972d312e30303030303030303030303030303031652d303518826d30030001826d610397342e39343036353634353834313234363534652d33323418826d36038631652d33303007826d380396322e35303030303030303030303030303031652d303517826d640393302e333030303030303030303030303030303414826d3903f40080c6a47e8d030009826d650392343530333539393632373337303439352e3513826d3703f4000000000000200009826d3103f4000000000000004009826d320396342e36313136383630313834323733383839652b313817826d35038531652b313906826d620397312e37393736393331333438363233313537652b33303818ff", 327, 0x2e911fe9afe82450ULL},
    {"ZADD z3 1 1 2 -2 3 200000 4 -0 5.5 99999999999999999999 128 128 (type 17)", lpv8_ops, 12, "3e0000000c0001010101dffe020201f2400d03040301822d300304019439393939393939393939393939393939393939391583352e3504c08002c08002ff", 62, 0xb41908cb897cad91ULL},
    {"RPUSH l1 a b c 1 2 3 -1  hello world (type 18)", lpv9_ops, 9, "280000000900816102816202816302010102010301dfff0280018b68656c6c6f20776f726c640cff", 40, 0x00de18fea849ce01ULL},
    {"LPUSH l2 0 127 128 -1 -64 4095 4096 -4096 -4097 32767 32768 -32768 -32769 8388607 8388608 -8388608 -8388609 2 (type 18)", lpv10_ops, 41, "10010000290081000283312e3004832d30300494393939393939393939393939393939393939393915943138343436373434303733373039353531363136158331653304843078313005812d02823030038231200382203103942d393232333337323033363835343737353830391593393232333337323033363835343737353830381480018331326104822b35038330303704822d3003f4000000000000008009f4ffffffffffffff7f09f4ffffff7fffffffff09f30000008005f4000000800000000009f3ffffff7f05f3ffff7fff05f200008004f30000800005f2ffff7f04f2ff7fff04f1008003f200800004f1ff7f03f1ffef03d00002f1001003cfff02dfc002dfff02c080027f010001ff", 272, 0xe4e0f08ed5824fa7ULL},
    {"RPUSH l3 dddddddddddddddddddd dddddddddddddddddddd eeeeeeeeeeeeeeeeeeee (type 18)", lpv11_ops, 3, NULL, 4238, 0x533e0b796764deccULL},
    {"RPUSH l4 a xxxxxxxxxxxxxxxxxxxx yyyyyyyyyyyyyyyyyyyy b node 0 (type 18)", lpv12_ops, 1, "0a0000000100816102ff", 10, 0x2d8d09f05d57ad07ULL},
    {"RPUSH l4 a xxxxxxxxxxxxxxxxxxxx yyyyyyyyyyyyyyyyyyyy b node 1 (type 18)", lpv13_ops, 1, NULL, 2097160, 0x16f6cdf18acb4f18ULL},
    {"RPUSH l4 a xxxxxxxxxxxxxxxxxxxx yyyyyyyyyyyyyyyyyyyy b node 2 (type 18)", lpv14_ops, 1, NULL, 2097162, 0xebd058f9851c4a0cULL},
    {"RPUSH l4 a xxxxxxxxxxxxxxxxxxxx yyyyyyyyyyyyyyyyyyyy b node 3 (type 18)", lpv15_ops, 1, "0a0000000100816202ff", 10, 0x478a84f06c116d06ULL},
    {"HSET hbig 0 0 1 1 ... 32767 32767 (type 16)", lpv16_ops, 1, NULL, 253703, 0xf925f43eaa074663ULL},
    {"HSET hbig2 0 0 1 1 ... 32766 32766 (type 16)", lpv17_ops, 1, NULL, 253695, 0x6bd31225c4b926fdULL},
};

/* intset vectors: SADD in redis-server 7.0.15, then DUMP (type 11) */
static const int64_t isv0_vals[] = {1LL, 2LL, 3LL};
static const int64_t isv1_vals[] = {-32768LL, 0LL, 32767LL};
static const int64_t isv2_vals[] = {-32769LL, 1LL, 32768LL};
static const int64_t isv3_vals[] = {-2147483648LL, 5LL, 2147483647LL};
static const int64_t isv4_vals[] = {INT64_MIN, -1LL, 0LL, 2147483648LL, 9223372036854775807LL};
static const int64_t isv5_vals[] = {-2147483649LL, 7LL};
static const is_vec is_vectors[] = {
    {"SADD s1 1 2 3", isv0_vals, 3, "0200000003000000010002000300"},
    {"SADD s2 32767 -32768 0", isv1_vals, 3, "020000000300000000800000ff7f"},
    {"SADD s3 32768 -32769 1", isv2_vals, 3, "0400000003000000ff7fffff0100000000800000"},
    {"SADD s4 2147483647 -2147483648 5", isv3_vals, 3, "04000000030000000000008005000000ffffff7f"},
    {"SADD s5 2147483648 -9223372036854775808 9223372036854775807 0 -1", isv4_vals, 5, "08000000050000000000000000000080ffffffffffffffff00000000000000000000008000000000ffffffffffffff7f"},
    {"SADD s6 -2147483649 7", isv5_vals, 2, "0800000002000000ffffff7fffffffff0700000000000000"},
};

/* ziplists and zipmaps crafted with every encoding form; each was RESTOREd
 * (RDB type 13 or 9, RDB version 9) into redis-server 7.0.15 with
 * sanitize-dump-payload yes, read back with HGETALL (the ops below), and
 * DUMPed again as the listpack (lp_len, lp_fnv) it converted it to. */
static const vop cv0_ops[] = {S("i0"), S("0"), S("i1"), S("12"), S("i2"), S("13"), S("i3"), S("-1"), S("i4"), S("127"), S("i5"), S("-128"), S("i6"), S("128"), S("i7"), S("-129"), S("i8"), S("32767"), S("i9"), S("-32768"), S("i10"), S("32768"), S("i11"), S("-32769"), S("i12"), S("8388607"), S("i13"), S("-8388608"), S("i14"), S("8388608"), S("i15"), S("-8388609"), S("i16"), S("2147483647"), S("i17"), S("-2147483648"), S("i18"), S("2147483648"), S("i19"), S("-2147483649"), S("i20"), S("9223372036854775807"), S("i21"), S("-9223372036854775808")};
static const vop cv1_ops[] = {S("s0"), S(""), S("s63"), R("a", 63), S("s64"), R("b", 64), S("s300"), R("c", 300), S("x"), S("after-300"), S("s16383"), R("d", 16383), S("s16384"), R("e", 16384), S("y"), S("-0"), S("z"), S("007")};
static const vop cv2_ops[] = {S("a"), S("1"), S("b"), S("xy"), S("c"), S("zz")};
static const vop cv3_ops[] = {S("a"), S("1"), S("b"), S("2"), S("c"), S("3")};
static const vop cv4_ops[] = {S("f1"), S("v1"), R("k", 253), R("v", 254), S(""), S(""), S("n"), S("12")};
static const vop cv5_ops[] = {S("a"), S("1"), S("b"), S("22")};
static const vop cv6_ops[] = {S("f0"), S("0"), S("f1"), S("1"), S("f2"), S("2"), S("f3"), S("3"), S("f4"), S("4"), S("f5"), S("5"), S("f6"), S("6"), S("f7"), S("7"), S("f8"), S("8"), S("f9"), S("9"), S("f10"), S("10"), S("f11"), S("11"), S("f12"), S("12"), S("f13"), S("13"), S("f14"), S("14"), S("f15"), S("15"), S("f16"), S("16"), S("f17"), S("17"), S("f18"), S("18"), S("f19"), S("19"), S("f20"), S("20"), S("f21"), S("21"), S("f22"), S("22"), S("f23"), S("23"), S("f24"), S("24"), S("f25"), S("25"), S("f26"), S("26"), S("f27"), S("27"), S("f28"), S("28"), S("f29"), S("29"), S("f30"), S("30"), S("f31"), S("31"), S("f32"), S("32"), S("f33"), S("33"), S("f34"), S("34"), S("f35"), S("35"), S("f36"), S("36"), S("f37"), S("37"), S("f38"), S("38"), S("f39"), S("39"), S("f40"), S("40"), S("f41"), S("41"), S("f42"), S("42"), S("f43"), S("43"), S("f44"), S("44"), S("f45"), S("45"), S("f46"), S("46"), S("f47"), S("47"), S("f48"), S("48"), S("f49"), S("49"), S("f50"), S("50"), S("f51"), S("51"), S("f52"), S("52"), S("f53"), S("53"), S("f54"), S("54"), S("f55"), S("55"), S("f56"), S("56"), S("f57"), S("57"), S("f58"), S("58"), S("f59"), S("59"), S("f60"), S("60"), S("f61"), S("61"), S("f62"), S("62"), S("f63"), S("63"), S("f64"), S("64"), S("f65"), S("65"), S("f66"), S("66"), S("f67"), S("67"), S("f68"), S("68"), S("f69"), S("69"), S("f70"), S("70"), S("f71"), S("71"), S("f72"), S("72"), S("f73"), S("73"), S("f74"), S("74"), S("f75"), S("75"), S("f76"), S("76"), S("f77"), S("77"), S("f78"), S("78"), S("f79"), S("79"), S("f80"), S("80"), S("f81"), S("81"), S("f82"), S("82"), S("f83"), S("83"), S("f84"), S("84"), S("f85"), S("85"), S("f86"), S("86"), S("f87"), S("87"), S("f88"), S("88"), S("f89"), S("89"), S("f90"), S("90"), S("f91"), S("91"), S("f92"), S("92"), S("f93"), S("93"), S("f94"), S("94"), S("f95"), S("95"), S("f96"), S("96"), S("f97"), S("97"), S("f98"), S("98"), S("f99"), S("99"), S("f100"), S("100"), S("f101"), S("101"), S("f102"), S("102"), S("f103"), S("103"), S("f104"), S("104"), S("f105"), S("105"), S("f106"), S("106"), S("f107"), S("107"), S("f108"), S("108"), S("f109"), S("109"), S("f110"), S("110"), S("f111"), S("111"), S("f112"), S("112"), S("f113"), S("113"), S("f114"), S("114"), S("f115"), S("115"), S("f116"), S("116"), S("f117"), S("117"), S("f118"), S("118"), S("f119"), S("119"), S("f120"), S("120"), S("f121"), S("121"), S("f122"), S("122"), S("f123"), S("123"), S("f124"), S("124"), S("f125"), S("125"), S("f126"), S("126"), S("f127"), S("127"), S("f128"), S("128"), S("f129"), S("129"), S("f130"), S("130"), S("f131"), S("131"), S("f132"), S("132"), S("f133"), S("133"), S("f134"), S("134"), S("f135"), S("135"), S("f136"), S("136"), S("f137"), S("137"), S("f138"), S("138"), S("f139"), S("139"), S("f140"), S("140"), S("f141"), S("141"), S("f142"), S("142"), S("f143"), S("143"), S("f144"), S("144"), S("f145"), S("145"), S("f146"), S("146"), S("f147"), S("147"), S("f148"), S("148"), S("f149"), S("149"), S("f150"), S("150"), S("f151"), S("151"), S("f152"), S("152"), S("f153"), S("153"), S("f154"), S("154"), S("f155"), S("155"), S("f156"), S("156"), S("f157"), S("157"), S("f158"), S("158"), S("f159"), S("159"), S("f160"), S("160"), S("f161"), S("161"), S("f162"), S("162"), S("f163"), S("163"), S("f164"), S("164"), S("f165"), S("165"), S("f166"), S("166"), S("f167"), S("167"), S("f168"), S("168"), S("f169"), S("169"), S("f170"), S("170"), S("f171"), S("171"), S("f172"), S("172"), S("f173"), S("173"), S("f174"), S("174"), S("f175"), S("175"), S("f176"), S("176"), S("f177"), S("177"), S("f178"), S("178"), S("f179"), S("179"), S("f180"), S("180"), S("f181"), S("181"), S("f182"), S("182"), S("f183"), S("183"), S("f184"), S("184"), S("f185"), S("185"), S("f186"), S("186"), S("f187"), S("187"), S("f188"), S("188"), S("f189"), S("189"), S("f190"), S("190"), S("f191"), S("191"), S("f192"), S("192"), S("f193"), S("193"), S("f194"), S("194"), S("f195"), S("195"), S("f196"), S("196"), S("f197"), S("197"), S("f198"), S("198"), S("f199"), S("199"), S("f200"), S("200"), S("f201"), S("201"), S("f202"), S("202"), S("f203"), S("203"), S("f204"), S("204"), S("f205"), S("205"), S("f206"), S("206"), S("f207"), S("207"), S("f208"), S("208"), S("f209"), S("209"), S("f210"), S("210"), S("f211"), S("211"), S("f212"), S("212"), S("f213"), S("213"), S("f214"), S("214"), S("f215"), S("215"), S("f216"), S("216"), S("f217"), S("217"), S("f218"), S("218"), S("f219"), S("219"), S("f220"), S("220"), S("f221"), S("221"), S("f222"), S("222"), S("f223"), S("223"), S("f224"), S("224"), S("f225"), S("225"), S("f226"), S("226"), S("f227"), S("227"), S("f228"), S("228"), S("f229"), S("229"), S("f230"), S("230"), S("f231"), S("231"), S("f232"), S("232"), S("f233"), S("233"), S("f234"), S("234"), S("f235"), S("235"), S("f236"), S("236"), S("f237"), S("237"), S("f238"), S("238"), S("f239"), S("239"), S("f240"), S("240"), S("f241"), S("241"), S("f242"), S("242"), S("f243"), S("243"), S("f244"), S("244"), S("f245"), S("245"), S("f246"), S("246"), S("f247"), S("247"), S("f248"), S("248"), S("f249"), S("249"), S("f250"), S("250"), S("f251"), S("251"), S("f252"), S("252"), S("f253"), S("253"), S("f254"), S("254"), S("f255"), S("255"), S("f256"), S("256"), S("f257"), S("257"), S("f258"), S("258"), S("f259"), S("259"), S("f260"), S("260"), S("f261"), S("261"), S("f262"), S("262"), S("f263"), S("263"), S("f264"), S("264"), S("f265"), S("265"), S("f266"), S("266"), S("f267"), S("267"), S("f268"), S("268"), S("f269"), S("269"), S("f270"), S("270"), S("f271"), S("271"), S("f272"), S("272"), S("f273"), S("273"), S("f274"), S("274"), S("f275"), S("275"), S("f276"), S("276"), S("f277"), S("277"), S("f278"), S("278"), S("f279"), S("279"), S("f280"), S("280"), S("f281"), S("281"), S("f282"), S("282"), S("f283"), S("283"), S("f284"), S("284"), S("f285"), S("285"), S("f286"), S("286"), S("f287"), S("287"), S("f288"), S("288"), S("f289"), S("289"), S("f290"), S("290"), S("f291"), S("291"), S("f292"), S("292"), S("f293"), S("293"), S("f294"), S("294"), S("f295"), S("295"), S("f296"), S("296"), S("f297"), S("297"), S("f298"), S("298"), S("f299"), S("299")};
static const vop cv7_ops[] = {Z(32768)};
static const crafted_vec crafted[] = {
    {"ziplist: every integer encoding (F1-FD, FE, C0, F0, D0, E0) at its edges", 'z', cv0_ops, 44, 44, "e3000000d80000002c000002693004f10202693104fd0202693204fe0d0302693304feff0302693404fe7f0302693504fe800302693604c080000402693704c07fff0402693804c0ff7f0402693904c00080040369313005f0008000050369313105f0ff7fff050369313205f0ffff7f050369313305f0000080050369313405d000008000060369313505d0ffff7fff060369313605d0ffffff7f060369313705d000000080060369313805e000000080000000000a0369313905e0ffffff7fffffffff0a0369323005e0ffffffffffffff7f0a0369323105e00000000000000080ff", 227, 0x61addf302f3f9d63ULL, 219, 0x1c2a821171333c65ULL},
    {"ziplist: 6/14/32-bit string lengths, 1- and 5-byte prevlen", 'z', cv1_ops, 18, 18, NULL, 33301, 0x9f50bd80daea4f68ULL, 33293, 0xd83033c1b33bdd70ULL},
    {"ziplist: 5-byte prevlen with a small value, non-minimal string lengths", 'z', cv2_ops, 6, 6, "2f000000220000000600000161fe03000000f2060162fe0300000040027879090163fe0300000080000000027a7aff", 47, 0x195aa7bbf37760a5ULL, 26, 0x3bfb3daaff6afc7cULL},
    {"ziplist: small values in wide integer encodings", 'z', cv3_ops, 6, 6, "280000001d000000060000016103c0010004016203d00200000006016303e00300000000000000ff", 40, 0x33c6988822fc1d3bULL, 22, 0x72bb7f0f45e105a6ULL},
    {"zipmap: 253/254-byte lengths (1 and 5 bytes), empty key and value", 'm', cv4_ops, 8, 8, NULL, 532, 0xf3d4a1ff056118f2ULL, 539, 0x0381a788a151529dULL},
    {"zipmap: free bytes after values", 'm', cv5_ops, 4, 4, "02016101033100000001620201323200ff", 17, 0x96044a7a5e8ce359ULL, 17, 0xab7581d044e3c691ULL},
    {"zipmap: 300 pairs, zmlen 254 (count unknown)", 'm', cv6_ops, 600, 600, NULL, 2782, 0x13f85a08a3d28ba8ULL, 2469, 0x2cb72cf78f120662ULL},
    {"ziplist: 65536 elements, count field 65535", 'z', cv7_ops, 1, 65536, NULL, 229246, 0x14c00e4e37ec52bfULL, 225159, 0xaba5aa77aeb67853ULL},
};

/* ziplists, zipmaps and intsets extracted from tests/assets/ of the
 * Redis test suite, their elements, and what redis-server 7.0.15 DUMPs for
 * the key after loading the file (a listpack, or the same intset). */
static const vop ov0_ops[] = {S("f1"), S("v1"), S("f2"), S("v2")};
static const vop ov1_ops[] = {S("f1"), S("v1"), S("f2"), S("v2")};
static const vop ov2_ops[] = {S("one"), I(1LL), S("two"), I(2LL)};
static const vop ov3_ops[] = {I(7LL)};
static const vop ov4_ops[] = {I(1LL), I(2LL), I(3LL), I(4LL)};
static const vop ov5_ops[] = {I(1LL), I(2LL), I(3LL), S("a"), S("b"), S("c"), I(100000LL), I(6000000000LL)};
static const vop ov6_ops[] = {I(100000LL), I(200000LL), I(300000LL), I(400000LL)};
static const vop ov7_ops[] = {I(1000000000LL), I(2000000000LL), I(3000000000LL), I(4000000000LL), I(5000000000LL), I(6000000000LL)};
static const vop ov8_ops[] = {S("a"), I(1LL), S("b"), I(2LL), S("c"), I(3LL)};
static const vop ov9_ops[] = {S("a"), I(1LL), S("b"), I(2LL), S("c"), I(3LL)};
static const old_vec old_vectors[] = {
    {"hash-zipmap.rdb (RDB version 3): key hash, type 9", 'm', "020266310200763102663202007632ff", ov0_ops, 4, "17000000040082663103827631038266320382763203ff"},
    {"hash-ziplist.rdb (RDB version 9): key hash, type 13", 'z', "1b00000016000000040000026631040276310402663204027632ff", ov1_ops, 4, "17000000040082663103827631038266320382763203ff"},
    {"zset-ziplist.rdb (RDB version 10): key zset, type 12", 'z', "1900000016000000040000036f6e6505f2020374776f05f3ff", ov2_ops, 4, "150000000400836f6e650401018374776f040201ff"},
    {"list-quicklist.rdb (RDB version 8): key list node 0, type 14", 'z', "0d0000000a000000010000f8ff", ov3_ops, 1, "0900000001000701ff"},
    {"encodings.rdb (RDB version 4): key set_zipped_1, type 11", 'i', "02000000040000000100020003000400", ov4_ops, 4, "02000000040000000100020003000400"},
    {"encodings.rdb (RDB version 4): key list_zipped, type 10", 'z', "3000000025000000080000c0010004c0020004c0030004016103016203016303d0a086010006e000bca06501000000ff", ov5_ops, 8, "250000000800010102010301816102816202816302f2a0860104f400bca0650100000009ff"},
    {"encodings.rdb (RDB version 4): key set_zipped_2, type 11", 'i', "0400000004000000a0860100400d0300e0930400801a0600", ov6_ops, 4, "0400000004000000a0860100400d0300e0930400801a0600"},
    {"encodings.rdb (RDB version 4): key set_zipped_3, type 11", 'i', "080000000600000000ca9a3b000000000094357700000000005ed0b20000000000286bee0000000000f2052a0100000000bca06501000000", ov7_ops, 6, "080000000600000000ca9a3b000000000094357700000000005ed0b20000000000286bee0000000000f2052a0100000000bca06501000000"},
    {"encodings.rdb (RDB version 4): key hash_zipped, type 13", 'z', "200000001b000000060000016103c0010004016203c0020004016303c00300ff", ov8_ops, 6, "160000000600816102010181620202018163020301ff"},
    {"encodings.rdb (RDB version 4): key zset_zipped, type 12", 'z', "200000001b000000060000016103c0010004016203c0020004016303c00300ff", ov9_ops, 6, "160000000600816102010181620202018163020301ff"},
};

/* ------------------------------------------------------------ helpers */

static uint64_t fnv1a(const unsigned char *p, size_t n) {
    uint64_t h = 0xcbf29ce484222325ULL;
    for (size_t i = 0; i < n; i++) h = (h ^ p[i]) * 0x100000001b3ULL;
    return h;
}

static unsigned char *unhex(const char *h, size_t *len) {
    size_t n = strlen(h) / 2;
    unsigned char *b = malloc(n ? n : 1);
    for (size_t i = 0; i < n; i++) sscanf(h + 2 * i, "%2hhx", &b[i]);
    *len = n;
    return b;
}

/* An exact-size heap copy, so a read past len is a sanitizer error. */
static unsigned char *dup(const void *p, size_t n) {
    unsigned char *b = malloc(n ? n : 1);
    if (n) memcpy(b, p, n);
    return b;
}

static uint64_t rng_state = 0x9e3779b97f4a7c15ULL;

static uint64_t rnd(void) {
    uint64_t x = rng_state;
    x ^= x >> 12;
    x ^= x << 25;
    x ^= x >> 27;
    rng_state = x;
    return x * 0x2545f4914f6cdd1dULL;
}

static size_t rnd_below(size_t n) { return n ? (size_t)(rnd() % n) : 0; }

/* A list of elements as text; isint: 1 integer, 0 string, -1 unknown. */
typedef struct tlist {
    unsigned char **p;
    size_t *len;
    int *isint;
    size_t n, cap;
} tlist;

static void tl_push(tlist *t, const void *p, size_t len, int isint) {
    if (t->n == t->cap) {
        t->cap = t->cap ? t->cap * 2 : 16;
        t->p = realloc(t->p, t->cap * sizeof *t->p);
        t->len = realloc(t->len, t->cap * sizeof *t->len);
        t->isint = realloc(t->isint, t->cap * sizeof *t->isint);
    }
    t->p[t->n] = dup(p, len);
    t->len[t->n] = len;
    t->isint[t->n++] = isint;
}

static void tl_push_ll(tlist *t, long long v, int isint) {
    char buf[24];
    tl_push(t, buf, ll_to_str(buf, v), isint);
}

static void tl_push_elem(tlist *t, const renc_elem *e) {
    if (e->is_int) tl_push_ll(t, e->v, 1);
    else tl_push(t, e->p, e->len, 0);
}

static void tl_free(tlist *t) {
    for (size_t i = 0; i < t->n; i++) free(t->p[i]);
    free(t->p);
    free(t->len);
    free(t->isint);
    memset(t, 0, sizeof *t);
}

static void tl_push_repeat(tlist *t, char c, size_t n) {
    char *b = malloc(n ? n : 1);
    memset(b, c, n);
    tl_push(t, b, n, -1);
    free(b);
}

static void tl_push_pairs(tlist *t, size_t n, const char *value) {
    for (size_t i = 0; i < n; i++) {
        tl_push_ll(t, (long long)i, -1);
        if (value) tl_push(t, value, strlen(value), -1);
        else tl_push_ll(t, (long long)i, -1);
    }
}

/* The elements ops describe; typed: S means a string element, I an integer. */
static void tl_expand(tlist *t, const vop *ops, size_t n, int typed) {
    char buf[RENC_DOUBLE_TEXT_MAX];
    for (size_t i = 0; i < n; i++) {
        const vop *o = &ops[i];
        if (o->k == 's') tl_push(t, o->s, o->n, typed ? 0 : -1);
        else if (o->k == 'r') tl_push_repeat(t, o->s[0], o->n);
        else if (o->k == 'd') tl_push(t, buf, renc_double_text(o->d, buf, sizeof buf), -1);
        else if (o->k == 'i') tl_push_ll(t, o->i, typed ? 1 : -1);
        else tl_push_pairs(t, o->n, o->k == 'z' ? "v" : NULL);
    }
}

/* Index of the first difference between a and b, or -1 if they agree;
 * with types, a known integer/string form must agree too. */
static long long tl_diff_as(const tlist *a, const tlist *b, int types) {
    size_t n = a->n < b->n ? a->n : b->n;
    for (size_t i = 0; i < n; i++) {
        if (a->len[i] != b->len[i] || memcmp(a->p[i], b->p[i], a->len[i])) return (long long)i;
        if (types && a->isint[i] >= 0 && b->isint[i] >= 0 && a->isint[i] != b->isint[i]) return (long long)i;
    }
    return a->n == b->n ? -1 : (long long)n;
}

static long long tl_diff(const tlist *a, const tlist *b) { return tl_diff_as(a, b, 1); }

/* Iterates: the element count, or -1 if the iterator reports an error. */
static long long read_lp(const unsigned char *lp, size_t len, tlist *out) {
    rlp_iter it;
    renc_elem e;
    long long n = 0;
    int st = rlp_iter_init(&it, lp, len);
    while (st >= 0 && (st = rlp_next(&it, &e)) == 1) {
        if (!e.is_int) cr_assert(e.p >= lp && e.p + e.len <= lp + len - 1);
        tl_push_elem(out, &e);
        n++;
    }
    if (st >= 0) cr_assert_eq(rlp_next(&it, &e), 0, "the end is sticky");
    return st < 0 ? -1 : n;
}

static long long read_zl(const unsigned char *zl, size_t len, tlist *out) {
    rzl_iter it;
    renc_elem e;
    long long n = 0;
    int st = rzl_iter_init(&it, zl, len);
    while (st >= 0 && (st = rzl_next(&it, &e)) == 1) {
        if (!e.is_int) cr_assert(e.p >= zl && e.p + e.len <= zl + len - 1);
        tl_push_elem(out, &e);
        n++;
    }
    return st < 0 ? -1 : n;
}

static long long read_zm(const unsigned char *zm, size_t len, tlist *out) {
    rzm_iter it;
    renc_elem f, v;
    long long n = 0;
    int st = rzm_iter_init(&it, zm, len);
    while (st >= 0 && (st = rzm_next(&it, &f, &v)) == 1) {
        cr_assert(!f.is_int && !v.is_int);
        cr_assert(f.p >= zm && f.p + f.len <= zm + len - 1 && v.p >= zm && v.p + v.len <= zm + len - 1);
        tl_push_elem(out, &f);
        tl_push_elem(out, &v);
        n++;
    }
    return st < 0 ? -1 : n;
}

/* Appends an element as a caller holding it would: integers as integers. */
static void append_elem(rlp_builder *b, const tlist *t, size_t i) {
    rlp_append(b, t->p[i], t->len[i]);
}

static unsigned char *build_lp(const tlist *t, size_t *len) {
    rlp_builder b;
    rlp_init(&b);
    for (size_t i = 0; i < t->n; i++) append_elem(&b, t, i);
    cr_assert_eq(b.count, t->n);
    size_t expect = rlp_bytes(&b);
    unsigned char *lp = rlp_finish(&b, len);
    cr_assert_eq(*len, expect, "rlp_bytes predicts the finished size");
    cr_assert_eq(b.count, 0);
    return lp;
}

/* Builds from ops the way a saver would: scores with rlp_append_double. */
static unsigned char *build_ops(const vop *ops, size_t n, size_t *len) {
    tlist t = {0};
    rlp_builder b;
    rlp_init(&b);
    for (size_t i = 0; i < n; i++) {
        if (ops[i].k == 'd') {
            rlp_append_double(&b, ops[i].d);
            continue;
        }
        if (ops[i].k == 'i') {
            rlp_append_int(&b, ops[i].i);
            continue;
        }
        tl_expand(&t, &ops[i], 1, 0);
        for (size_t j = 0; j < t.n; j++) append_elem(&b, &t, j);
        tl_free(&t);
    }
    return rlp_finish(&b, len);
}

/* The listpack holding a validated input's elements must hold them again
 * (as text: a non-minimal "1" string entry comes back an integer). */
static void check_rebuild(const tlist *t) {
    size_t len;
    unsigned char *lp = build_lp(t, &len);
    unsigned char *c = dup(lp, len);
    cr_assert_eq(rlp_validate(c, len), (long long)t->n);
    tlist back = {0};
    cr_assert_eq(read_lp(c, len, &back), (long long)t->n);
    cr_assert_eq(tl_diff_as(t, &back, 0), -1);
    tl_free(&back);
    free(c);
    zfree(lp);
}

static uint64_t get16(const unsigned char *p) { return (uint64_t)p[0] | (uint64_t)p[1] << 8; }

/* The verdict on arbitrary bytes: -1, or a count that iteration agrees
 * with and whose elements survive a listpack rebuild. Iteration alone may
 * succeed where the validator fails only when the header's count is wrong. */
static void consistent_lp(const unsigned char *buf, size_t len) {
    unsigned char *c = dup(buf, len);
    long long n = rlp_validate(c, len);
    tlist t = {0};
    long long m = read_lp(c, len, &t);
    if (n >= 0) {
        cr_assert_eq(m, n);
        check_rebuild(&t);
    } else if (m >= 0) {
        cr_assert(get16(c + 4) != 65535 && get16(c + 4) != (uint64_t)m);
    }
    tl_free(&t);
    free(c);
}

static void consistent_zl(const unsigned char *buf, size_t len) {
    unsigned char *c = dup(buf, len);
    long long n = rzl_validate(c, len);
    tlist t = {0};
    long long m = read_zl(c, len, &t);
    if (n >= 0) {
        cr_assert_eq(m, n);
        check_rebuild(&t);
    } else if (m >= 0) {
        cr_assert(get16(c + 8) != 65535 && get16(c + 8) != (uint64_t)m);
    }
    tl_free(&t);
    free(c);
}

static void consistent_zm(const unsigned char *buf, size_t len) {
    unsigned char *c = dup(buf, len);
    long long n = rzm_validate(c, len);
    tlist t = {0};
    long long m = read_zm(c, len, &t);
    if (n >= 0) {
        cr_assert_eq(m, n);
        check_rebuild(&t);
    } else if (m >= 0) {
        cr_assert(c[0] != 254 && c[0] != m);
    }
    tl_free(&t);
    free(c);
}

static void consistent_is(const unsigned char *buf, size_t len) {
    unsigned char *c = dup(buf, len);
    long long n = rintset_validate(c, len);
    if (n >= 0) {
        int64_t *v = malloc(sizeof *v * (size_t)(n ? n : 1));
        for (long long i = 0; i < n; i++) v[i] = rintset_get(c, (size_t)i);
        for (long long i = 1; i < n; i++) cr_assert(v[i - 1] < v[i]);
        size_t blen;
        unsigned char *b = rintset_build(v, (size_t)n, &blen);
        cr_assert_eq(rintset_validate(b, blen), n);
        for (long long i = 0; i < n; i++) cr_assert_eq(rintset_get(b, (size_t)i), v[i]);
        cr_assert(blen <= len);
        zfree(b);
        free(v);
    }
    free(c);
}

typedef void (*consistent_fn)(const unsigned char *buf, size_t len);

/* Every single byte set to a few interesting values and a random one. */
static void corrupt_each_byte(const unsigned char *buf, size_t len, consistent_fn check) {
    static const int vals[] = {-1, -0x80, -0xFF, 0x00, 0x7F, 0x80, 0xC0, 0xF0, 0xFE, 0xFF, 256};
    unsigned char *c = dup(buf, len);
    for (size_t i = 0; i < len; i++) {
        for (size_t k = 0; k < sizeof vals / sizeof *vals; k++) {
            int v = vals[k];
            c[i] = v < 0 ? (unsigned char)(buf[i] ^ -v) : v > 255 ? (unsigned char)rnd() : (unsigned char)v;
            check(c, len);
        }
        c[i] = buf[i];
    }
    free(c);
}


#define NV(a) (sizeof(a) / sizeof *(a))

/* ------------------------------------------------------------ writers
 * Test-only ziplist and zipmap writers, making the large crafted vectors
 * (checked against their captured hashes) and random inputs. Integers go
 * in the encoding Redis 2.6-6.2 picks (immediate 0-12, then int8, int16,
 * int24, int32, int64). */

typedef struct zlw {
    unsigned char *b;
    size_t len, cap, prev, last, n;
} zlw;

static void put_le(unsigned char *p, uint64_t v, int n) {
    for (int i = 0; i < n; i++) p[i] = (unsigned char)(v >> (8 * i));
}

static void put_be32(unsigned char *p, uint64_t v) {
    for (int i = 0; i < 4; i++) p[i] = (unsigned char)(v >> (24 - 8 * i));
}

static void zlw_init(zlw *w) {
    memset(w, 0, sizeof *w);
    w->len = w->last = 10;
    w->cap = 64;
    w->b = malloc(w->cap);
}

static void zlw_grow(zlw *w, size_t extra) {
    if (w->len + extra <= w->cap) return;
    while (w->len + extra > w->cap) w->cap *= 2;
    w->b = realloc(w->b, w->cap);
}

/* Appends an entry with encoding+data enc[0, n); big: a 5-byte prevlen. */
static void zlw_raw(zlw *w, const unsigned char *enc, size_t n, int big) {
    zlw_grow(w, n + 6);
    unsigned char *p = w->b + w->len;
    size_t ps = 1;
    if (w->prev < 254 && !big) {
        p[0] = (unsigned char)w->prev;
    } else {
        p[0] = 0xFE;
        put_le(p + 1, w->prev, 4);
        ps = 5;
    }
    memcpy(p + ps, enc, n);
    w->last = w->len;
    w->len += ps + n;
    w->prev = ps + n;
    w->n++;
}

static size_t zl_enc_int(unsigned char *e, long long v) {
    static const struct {
        unsigned char tag;
        int bytes;
    } t[] = {{0xFE, 1}, {0xC0, 2}, {0xF0, 3}, {0xD0, 4}, {0xE0, 8}};
    if (v >= 0 && v <= 12) {
        e[0] = (unsigned char)(0xF1 + v);
        return 1;
    }
    size_t i = 0;
    while (t[i].bytes < 8 && (v < -(1LL << (8 * t[i].bytes - 1)) || v >= 1LL << (8 * t[i].bytes - 1))) i++;
    e[0] = t[i].tag;
    put_le(e + 1, (uint64_t)v, t[i].bytes);
    return 1 + (size_t)t[i].bytes;
}

static size_t zl_enc_str(unsigned char *e, const unsigned char *s, size_t n) {
    size_t h = n < 64 ? 1 : n < 16384 ? 2 : 5;
    if (h == 1) e[0] = (unsigned char)n;
    if (h == 2) e[0] = (unsigned char)(0x40 | n >> 8), e[1] = (unsigned char)n;
    if (h == 5) e[0] = 0x80, put_be32(e + 1, n);
    if (n) memcpy(e + h, s, n);
    return h + n;
}

static void zlw_elem(zlw *w, const unsigned char *s, size_t n, int big) {
    long long v;
    unsigned char *e = malloc(n + 9);
    size_t k = n < 32 && str_to_ll((const char *)s, n, &v) ? zl_enc_int(e, v) : zl_enc_str(e, s, n);
    zlw_raw(w, e, k, big);
    free(e);
}

static unsigned char *zlw_finish(zlw *w, size_t *len) {
    zlw_grow(w, 1);
    w->b[w->len++] = 0xFF;
    put_le(w->b, w->len, 4);
    put_le(w->b + 4, w->last, 4);
    put_le(w->b + 8, w->n < 65535 ? w->n : 65535, 2);
    *len = w->len;
    return realloc(w->b, w->len);
}

static unsigned char *build_zl(const tlist *t, size_t *len) {
    zlw w;
    zlw_init(&w);
    for (size_t i = 0; i < t->n; i++) zlw_elem(&w, t->p[i], t->len[i], 0);
    return zlw_finish(&w, len);
}

static size_t zm_put_len(unsigned char *p, size_t n) {
    if (n < 254) {
        p[0] = (unsigned char)n;
        return 1;
    }
    p[0] = 0xFE;
    put_le(p + 1, n, 4);
    return 5;
}

/* A zipmap of the pairs in t (no free bytes), as Redis < 2.6 wrote it. */
static unsigned char *build_zm(const tlist *t, size_t *len) {
    size_t cap = 2, k = 1;
    for (size_t i = 0; i < t->n; i++) cap += t->len[i] + 6;
    unsigned char *b = malloc(cap);
    b[0] = (unsigned char)(t->n / 2 < 254 ? t->n / 2 : 254);
    for (size_t i = 0; i < t->n; i++) {
        k += zm_put_len(b + k, t->len[i]);
        if (i % 2) b[k++] = 0;
        memcpy(b + k, t->p[i], t->len[i]);
        k += t->len[i];
    }
    b[k++] = 0xFF;
    *len = k;
    return b;
}

/* ------------------------------------------------------------ listpack */

static void check_lp_vector(const lp_vec *x) {
    size_t len, hl;
    unsigned char *lp = build_ops(x->ops, x->nops, &len);
    cr_assert_eq(len, x->len, "%s: %zu bytes, redis %zu", x->name, len, x->len);
    if (x->hex) {
        unsigned char *h = unhex(x->hex, &hl);
        cr_assert(hl == len && memcmp(h, lp, len) == 0, "%s: bytes differ from redis", x->name);
        free(h);
    }
    cr_assert_eq(fnv1a(lp, len), x->fnv, "%s: bytes differ from redis", x->name);
    tlist want = {0}, got = {0};
    tl_expand(&want, x->ops, x->nops, 0);
    unsigned char *c = dup(lp, len);
    cr_assert_eq(rlp_validate(c, len), (long long)want.n, "%s", x->name);
    cr_assert_eq(read_lp(c, len, &got), (long long)want.n, "%s", x->name);
    cr_assert_eq(tl_diff(&want, &got), -1, "%s", x->name);
    size_t len2;
    unsigned char *lp2 = build_lp(&want, &len2);
    cr_assert(len2 == len && memcmp(lp, lp2, len) == 0, "%s: scores as text build the same", x->name);
    zfree(lp2);
    tl_free(&want);
    tl_free(&got);
    free(c);
    zfree(lp);
}

Test(rdb_enc_lp, redis_7_0_dump_vectors_byte_identical) {
    for (size_t v = 0; v < NV(lp_vectors); v++) check_lp_vector(&lp_vectors[v]);
}

/* redis-server 7.0 turned the old and crafted ziplists and zipmaps into
 * listpacks; the builder fed the same elements writes the same bytes. */
Test(rdb_enc_lp, listpacks_redis_converted_from_ziplists_and_zipmaps) {
    for (size_t v = 0; v < NV(crafted); v++) {
        const crafted_vec *x = &crafted[v];
        tlist t = {0};
        tl_expand(&t, x->ops, x->nops, 0);
        size_t len;
        unsigned char *lp = build_lp(&t, &len);
        cr_assert(len == x->lp_len && fnv1a(lp, len) == x->lp_fnv, "%s", x->name);
        zfree(lp);
        tl_free(&t);
    }
    for (size_t v = 0; v < NV(old_vectors); v++) {
        const old_vec *x = &old_vectors[v];
        if (x->kind == 'i') continue;
        tlist t = {0};
        tl_expand(&t, x->ops, x->nops, 1);
        size_t len, hl;
        unsigned char *lp = build_lp(&t, &len), *h = unhex(x->lp_hex, &hl);
        cr_assert(len == hl && memcmp(lp, h, len) == 0, "%s", x->name);
        free(h);
        zfree(lp);
        tl_free(&t);
    }
}

Test(rdb_enc_lp, empty_builder_and_discard) {
    rlp_builder b;
    rlp_init(&b);
    cr_assert_eq(rlp_bytes(&b), 7);
    size_t len;
    unsigned char *lp = rlp_finish(&b, &len);
    static const unsigned char empty[] = {7, 0, 0, 0, 0, 0, 0xFF};
    cr_assert(len == 7 && memcmp(lp, empty, 7) == 0);
    cr_assert_eq(rlp_validate(lp, len), 0);
    zfree(lp);
    rlp_append(&b, "abc", 3);
    rlp_append_int(&b, 5);
    cr_assert_eq(rlp_bytes(&b), 7 + 5 + 2);
    rlp_discard(&b);
    cr_assert(b.buf == NULL && b.count == 0 && rlp_bytes(&b) == 7);
    lp = rlp_finish(&b, &len);
    cr_assert_eq(len, 7);
    zfree(lp);
}

static const struct int_text {
    const char *s;
    size_t len;
    int isint;
    long long v;
} int_texts[] = {
#define T(s, isint, v) {s, sizeof(s) - 1, isint, v}
    T("0", 1, 0), T("1", 1, 1), T("-1", 1, -1), T("10", 1, 10), T("127", 1, 127),
    T("9223372036854775807", 1, INT64_MAX), T("-9223372036854775808", 1, INT64_MIN),
    T("-9223372036854775807", 1, -INT64_MAX), T("1000000000000000000", 1, 1000000000000000000LL),
    T("-0", 0, 0), T("00", 0, 0), T("007", 0, 0), T("-00", 0, 0), T("-01", 0, 0), T("+5", 0, 0),
    T(" 1", 0, 0), T("1 ", 0, 0), T("", 0, 0), T("-", 0, 0), T("--1", 0, 0), T("1-", 0, 0),
    T("9223372036854775808", 0, 0), T("-9223372036854775809", 0, 0),
    T("18446744073709551615", 0, 0), T("18446744073709551616", 0, 0),
    T("99999999999999999999", 0, 0), T("-99999999999999999999", 0, 0),
    T("100000000000000000000", 0, 0), T("1e3", 0, 0), T("0x10", 0, 0), T("1.0", 0, 0),
    T("12a", 0, 0), T("1\0", 0, 0), T("\0001", 0, 0), T("\xff", 0, 0),
#undef T
};

/* Which texts become integers: lpStringToInt64's rule, and ferry's
 * str_to_ll (Redis's string2ll, an independent implementation) agrees. */
Test(rdb_enc_lp, integer_text_rule) {
    for (size_t i = 0; i < NV(int_texts); i++) {
        const struct int_text *x = &int_texts[i];
        rlp_builder b;
        rlp_init(&b);
        rlp_append(&b, x->s, x->len);
        size_t len;
        unsigned char *lp = rlp_finish(&b, &len);
        rlp_iter it;
        renc_elem e;
        cr_assert_eq(rlp_iter_init(&it, lp, len), 0);
        cr_assert_eq(rlp_next(&it, &e), 1);
        cr_assert_eq(e.is_int, x->isint, "\"%s\"", x->s);
        if (x->isint) cr_assert_eq(e.v, x->v, "\"%s\"", x->s);
        else cr_assert(e.len == x->len && memcmp(e.p, x->s, x->len) == 0);
        long long v;
        cr_assert_eq(str_to_ll(x->s, x->len, &v), x->isint, "\"%s\"", x->s);
        zfree(lp);
    }
}

/* Entry bytes (encoding, data, backlen) at every integer width boundary,
 * as they appear in the HSET h2 vector redis-server 7.0 wrote. */
static const struct int_entry {
    int64_t v;
    const char *hex;
} int_entries[] = {
    {0, "0001"}, {127, "7f01"}, {128, "c08002"}, {-1, "dfff02"}, {-64, "dfc002"},
    {4095, "cfff02"}, {-4096, "d00002"}, {4096, "f1001003"}, {-4097, "f1ffef03"},
    {32767, "f1ff7f03"}, {-32768, "f1008003"}, {32768, "f200800004"}, {-32769, "f2ff7fff04"},
    {8388607, "f2ffff7f04"}, {-8388608, "f200008004"}, {8388608, "f30000800005"},
    {-8388609, "f3ffff7fff05"}, {INT32_MAX, "f3ffffff7f05"}, {INT32_MIN, "f30000008005"},
    {(int64_t)INT32_MAX + 1, "f4000000800000000009"}, {(int64_t)INT32_MIN - 1, "f4ffffff7fffffffff09"},
    {INT64_MAX, "f4ffffffffffffff7f09"}, {INT64_MIN, "f4000000000000008009"},
};

Test(rdb_enc_lp, every_integer_width_boundary) {
    for (size_t i = 0; i < NV(int_entries); i++) {
        for (int as_text = 0; as_text < 2; as_text++) {
            rlp_builder b;
            rlp_init(&b);
            char buf[24];
            if (as_text) rlp_append(&b, buf, ll_to_str(buf, int_entries[i].v));
            else rlp_append_int(&b, int_entries[i].v);
            size_t len, hl;
            unsigned char *lp = rlp_finish(&b, &len), *h = unhex(int_entries[i].hex, &hl);
            cr_assert(len == 7 + hl && memcmp(lp + 6, h, hl) == 0, "%lld", (long long)int_entries[i].v);
            rlp_iter it;
            renc_elem e;
            rlp_iter_init(&it, lp, len);
            cr_assert(rlp_next(&it, &e) == 1 && e.is_int && e.v == int_entries[i].v);
            free(h);
            zfree(lp);
        }
    }
}

/* Sizes of a string entry's encoding and backlen, from the format. */
static size_t str_entry_size(size_t n) {
    size_t l = (n < 64 ? 1 : n < 4096 ? 2 : 5) + n;
    return l + (l <= 127 ? 1 : l < 16383 ? 2 : l < 2097151 ? 3 : 4);
}

Test(rdb_enc_lp, string_length_boundaries) {
    static const size_t edges[] = {0, 63, 125, 4095, 16377, 2097145};
    for (size_t k = 0; k < NV(edges); k++) {
        for (size_t n = edges[k] ? edges[k] - 3 : 0; n <= edges[k] + 3; n++) {
            char *s = malloc(n + 1);
            memset(s, 'a' + (int)(n % 26), n);
            rlp_builder b;
            rlp_init(&b);
            rlp_append(&b, s, n);
            size_t len;
            unsigned char *lp = rlp_finish(&b, &len);
            cr_assert_eq(len, 7 + str_entry_size(n), "length %zu", n);
            unsigned char *c = dup(lp, len);
            tlist t = {0};
            cr_assert_eq(rlp_validate(c, len), 1);
            cr_assert(read_lp(c, len, &t) == 1 && t.len[0] == n && memcmp(t.p[0], s, n) == 0);
            tl_free(&t);
            free(c);
            free(s);
            zfree(lp);
        }
    }
}

/* The header count saturates at 65535 ("unknown"), as in Redis. */
Test(rdb_enc_lp, header_count_saturates) {
    static const size_t counts[] = {65534, 65535, 65536, 70000};
    for (size_t k = 0; k < NV(counts); k++) {
        rlp_builder b;
        rlp_init(&b);
        for (size_t i = 0; i < counts[k]; i++) rlp_append_int(&b, (int64_t)(i % 100));
        size_t len;
        unsigned char *lp = rlp_finish(&b, &len);
        cr_assert_eq(get16(lp + 4), counts[k] < 65535 ? counts[k] : 65535);
        cr_assert_eq(rlp_validate(lp, len), (long long)counts[k]);
        zfree(lp);
    }
}

static const int64_t int_edges[] = {
    0, 1, 12, 13, 63, 64, 127, 128, -1, -128, -129, 4095, 4096, -4096, -4097, 32767, 32768,
    -32768, -32769, 8388607, 8388608, -8388608, -8388609, INT32_MAX, (int64_t)INT32_MAX + 1,
    INT32_MIN, (int64_t)INT32_MIN - 1, INT64_MAX, INT64_MIN, INT64_MAX - 1, INT64_MIN + 1,
};
static const size_t len_edges[] = {0, 1, 2, 62, 63, 64, 65, 124, 125, 126, 127, 128,
                                   4093, 4094, 4095, 4096, 4097, 16377, 16378, 16379};
static const char *const odd_texts[] = {
    "-0", "007", "+5", " 1", "1 ", "00", "-", "", "9223372036854775808", "-9223372036854775809",
    "18446744073709551616", "99999999999999999999", "-00", "1.0", "0x10", "1e3", "12a",
    "-9223372036854775808", "9223372036854775807", "12345678901234567890", "inf", "nan",
};

/* Longest random string element: the inputs cut and corrupted byte by
 * byte stay small. */
static size_t len_cap = SIZE_MAX;

/* One random element, into t (as text, with its expected form) and b. */
static void random_element(tlist *t, rlp_builder *b) {
    char buf[32];
    size_t n;
    int64_t v = int_edges[rnd_below(NV(int_edges))];
    switch (rnd_below(6)) {
    case 0: /* an integer, appended as one */
        rlp_append_int(b, v);
        tl_push_ll(t, v, 1);
        return;
    case 1: /* an integer near a width edge, or of random width, as text */
        if (rnd_below(2)) v = (int64_t)(rnd() >> (1 + rnd_below(63)));
        if (rnd_below(2)) v = -v - 1;
        n = ll_to_str(buf, v);
        break;
    case 2: { /* a string at a length edge: random bytes, or digits */
        do n = len_edges[rnd_below(NV(len_edges))];
        while (n > len_cap);
        char *s = malloc(n + 1);
        int digits = rnd_below(2);
        for (size_t i = 0; i < n; i++) s[i] = digits ? (char)('0' + rnd_below(10)) : (char)rnd();
        long long ll;
        rlp_append(b, s, n);
        tl_push(t, s, n, str_to_ll(s, n, &ll));
        free(s);
        return;
    }
    case 3: /* texts that look like integers but are not, and some that are */
        snprintf(buf, sizeof buf, "%s", odd_texts[rnd_below(NV(odd_texts))]);
        n = strlen(buf);
        break;
    case 4: /* short digit strings, with an optional sign */
        n = 1 + rnd_below(22);
        for (size_t i = 0; i < n; i++) buf[i] = (char)('0' + rnd_below(10));
        if (rnd_below(3) == 0) buf[0] = '-';
        break;
    default: { /* a score */
        double d = rnd_below(2) ? (double)v : ldexp((double)(int64_t)rnd(), (int)rnd_below(200) - 100);
        rlp_append_double(b, d);
        n = renc_double_text(d, buf, sizeof buf);
        tl_push(t, buf, n, -1);
        return;
    }
    }
    long long ll;
    rlp_append(b, buf, n);
    tl_push(t, buf, n, str_to_ll(buf, n, &ll));
}

static unsigned char *random_listpack(tlist *t, size_t max, size_t *len) {
    rlp_builder b;
    rlp_init(&b);
    size_t n = rnd_below(max + 1);
    for (size_t i = 0; i < n; i++) random_element(t, &b);
    size_t expect = rlp_bytes(&b);
    unsigned char *lp = rlp_finish(&b, len);
    cr_assert_eq(*len, expect);
    return lp;
}

Test(rdb_enc_lp, random_round_trips) {
    rng_state = 0x1234567ULL;
    for (int round = 0; round < 400; round++) {
        tlist want = {0}, got = {0};
        size_t len;
        unsigned char *lp = random_listpack(&want, round < 300 ? 40 : 300, &len);
        unsigned char *c = dup(lp, len);
        cr_assert_eq(rlp_validate(c, len), (long long)want.n, "round %d", round);
        cr_assert_eq(read_lp(c, len, &got), (long long)want.n);
        cr_assert_eq(tl_diff(&want, &got), -1, "round %d element %lld", round, tl_diff(&want, &got));
        /* the same elements, handed over as read (integers as integers) */
        size_t len2;
        unsigned char *lp2 = build_lp(&got, &len2);
        cr_assert(len2 == len && memcmp(lp, lp2, len) == 0);
        zfree(lp2);
        tl_free(&want);
        tl_free(&got);
        free(c);
        zfree(lp);
    }
}

/* Small listpacks to cut and corrupt: the inline Redis vectors and a few
 * random ones with every boundary. */
static unsigned char *lp_sample(size_t i, size_t *len) {
    size_t k = 0;
    for (size_t v = 0; v < NV(lp_vectors); v++) {
        if (!lp_vectors[v].hex) continue;
        if (k++ == i) return unhex(lp_vectors[v].hex, len);
    }
    if (i >= k + 8) return NULL;
    tlist t = {0};
    rng_state = 0xabcdef00ULL + i;
    len_cap = 300;
    unsigned char *lp = random_listpack(&t, 12, len), *c = dup(lp, *len);
    len_cap = SIZE_MAX;
    tl_free(&t);
    zfree(lp);
    return c;
}

/* Entry start offsets of a valid listpack, ending with its terminator's. */
static size_t lp_offsets(const unsigned char *lp, size_t len, size_t *off, size_t max) {
    rlp_iter it;
    renc_elem e;
    size_t n = 0;
    rlp_iter_init(&it, lp, len);
    off[n++] = it.pos;
    while (rlp_next(&it, &e) == 1 && n < max) off[n++] = it.pos;
    return n;
}

Test(rdb_enc_lp, every_truncation) {
    size_t len;
    unsigned char *lp;
    for (size_t s = 0; (lp = lp_sample(s, &len)) != NULL; s++) {
        tlist all = {0};
        read_lp(lp, len, &all);
        size_t off[4096], noff = lp_offsets(lp, len, off, 4096), j = 0;
        for (size_t k = 0; k < len; k++) {
            unsigned char *c = dup(lp, k);
            cr_assert_eq(rlp_validate(c, k), -1, "sample %zu cut at %zu", s, k);
            free(c);
            if (k < 6) continue;
            /* cut, re-terminated, header fixed: the readers go deeper */
            unsigned char *t = malloc(k + 1);
            memcpy(t, lp, k);
            t[k] = 0xFF;
            put_le(t, k + 1, 4);
            put_le(t + 4, 65535, 2);
            while (j < noff && off[j] < k) j++;
            if (j < noff && off[j] == k) {
                tlist got = {0};
                cr_assert_eq(rlp_validate(t, k + 1), (long long)j, "sample %zu at entry %zu", s, j);
                read_lp(t, k + 1, &got);
                for (size_t e = 0; e < j; e++) cr_assert(got.len[e] == all.len[e] && !memcmp(got.p[e], all.p[e], got.len[e]));
                tl_free(&got);
            }
            consistent_lp(t, k + 1);
            free(t);
        }
        tl_free(&all);
        free(lp);
    }
}

Test(rdb_enc_lp, single_byte_corruptions) {
    size_t len;
    unsigned char *lp;
    rng_state = 42;
    for (size_t s = 0; (lp = lp_sample(s, &len)) != NULL; s++) {
        corrupt_each_byte(lp, len, consistent_lp);
        free(lp);
    }
}

static long long lp_hex_validate(const char *hex) {
    size_t len;
    unsigned char *b = unhex(hex, &len);
    long long n = rlp_validate(b, len);
    consistent_lp(b, len);
    free(b);
    return n;
}

Test(rdb_enc_lp, malformed_by_hand) {
    cr_assert_eq(lp_hex_validate("0700000000" "00ff"), 0);
    cr_assert_eq(lp_hex_validate("0800000000" "00ff"), -1, "total != length");
    cr_assert_eq(lp_hex_validate("0700000000" "0000"), -1, "no terminator");
    cr_assert_eq(lp_hex_validate("06000000" "0000"), -1, "too short");
    cr_assert_eq(lp_hex_validate(""), -1);
    cr_assert_eq(lp_hex_validate("09000000" "0100" "0501" "ff"), 1);
    cr_assert_eq(lp_hex_validate("09000000" "0200" "0501" "ff"), -1, "count 2, one entry");
    cr_assert_eq(lp_hex_validate("09000000" "ffff" "0501" "ff"), 1, "count unknown");
    cr_assert_eq(lp_hex_validate("09000000" "0100" "0502" "ff"), -1, "backlen wrong");
    cr_assert_eq(lp_hex_validate("0a000000" "0100" "000081" "ff"), -1, "a 2-byte backlen for size 1");
    cr_assert_eq(lp_hex_validate("09000000" "0100" "ff01" "ff"), -1, "end marker inside");
    for (int tag = 0xF5; tag <= 0xFE; tag++) {
        char hex[64];
        snprintf(hex, sizeof hex, "0a000000" "0100" "%02x0002" "ff", tag);
        cr_assert_eq(lp_hex_validate(hex), -1, "unused tag %02x", tag);
    }
    cr_assert_eq(lp_hex_validate("0a000000" "0100" "813102" "ff"), 1, "\"1\" as a string");
    cr_assert_eq(lp_hex_validate("11000000" "0100" "f40500000000000000" "09" "ff"), 1, "5 as int64");
    cr_assert_eq(lp_hex_validate("0e000000" "0100" "f00100000061" "06" "ff"), 1, "32-bit length");
    cr_assert_eq(lp_hex_validate("0b000000" "0100" "e00161" "03" "ff"), 1, "12-bit length");
    cr_assert_eq(lp_hex_validate("0b000000" "0100" "836161" "03" "ff"), -1, "string past the end");
    cr_assert_eq(lp_hex_validate("0c000000" "0100" "f0ffffffff" "ff"), -1, "huge length");
    cr_assert_eq(lp_hex_validate("0a000000" "0100" "f1ff" "03" "ff"), -1, "int16 cut");
    cr_assert_eq(lp_hex_validate("08000000" "0100" "c0" "ff"), -1, "int13 cut");
}

/* ------------------------------------------------------------ scores */

static const struct score_text {
    double d;
    const char *text;
} score_texts[] = {
    /* every one as it appears in the ZADD vectors' listpacks */
    {1, "1"}, {-2.5, "-2.5"}, {3.14159, "3.1415899999999999"}, {1e300, "1.0000000000000001e+300"},
    {INFINITY, "inf"}, {-INFINITY, "-inf"}, {0.0, "0"}, {-0.0, "0"}, {0.1, "0.10000000000000001"},
    {0x1p62, "4611686018427387904"}, {-0x1p62, "-4611686018427387904"},
    {0x1p62 + 1024, "4.6116860184273889e+18"}, {-0x1p62 - 1024, "-4.6116860184273889e+18"},
    {1e19, "1e+19"}, {1e-300, "1e-300"}, {5e-324, "4.9406564584124654e-324"},
    {2.5e-5, "2.5000000000000001e-05"}, {-1e-5, "-1.0000000000000001e-05"},
    {0.30000000000000004, "0.30000000000000004"}, {1e15, "1000000000000000"},
    {4503599627370495.5, "4503599627370495.5"}, {9007199254740993.0, "9007199254740992"},
    {1.7976931348623157e308, "1.7976931348623157e+308"}, {-123.456, "-123.456"}, {5.5, "5.5"},
    {NAN, "nan"},
};

Test(rdb_enc_double, redis_7_0_score_texts) {
    for (size_t i = 0; i < NV(score_texts); i++) {
        char buf[RENC_DOUBLE_TEXT_MAX];
        size_t n = renc_double_text(score_texts[i].d, buf, sizeof buf);
        cr_assert_str_eq(buf, score_texts[i].text);
        cr_assert_eq(n, strlen(score_texts[i].text));
        cr_assert_eq(renc_double_text(score_texts[i].d, buf, n), 0, "cap without room for the NUL");
        cr_assert_eq(renc_double_text(score_texts[i].d, buf, n + 1), n);
    }
}

/* Integer-valued scores become integer entries, other scores strings. */
Test(rdb_enc_double, scores_in_listpacks) {
    for (size_t i = 0; i < NV(score_texts); i++) {
        rlp_builder b;
        rlp_init(&b);
        rlp_append_double(&b, score_texts[i].d);
        size_t len;
        unsigned char *lp = rlp_finish(&b, &len);
        rlp_iter it;
        renc_elem e;
        rlp_iter_init(&it, lp, len);
        cr_assert_eq(rlp_next(&it, &e), 1);
        double d = score_texts[i].d;
        int integral = d == d && fabs(d) <= 0x1p62 && d == floor(d);
        cr_assert_eq(e.is_int, integral, "%s", score_texts[i].text);
        zfree(lp);
    }
}

/* ------------------------------------------------------------ ziplist, zipmap */

static long long validate_kind(char kind, const unsigned char *b, size_t len) {
    unsigned char *c = dup(b, len);
    long long n = kind == 'z' ? rzl_validate(c, len) : kind == 'm' ? rzm_validate(c, len) : rintset_validate(c, len);
    free(c);
    return n;
}

static long long read_kind(char kind, const unsigned char *b, size_t len, tlist *t) {
    unsigned char *c = dup(b, len);
    long long n = kind == 'z' ? read_zl(c, len, t) : read_zm(c, len, t);
    free(c);
    return n;
}

Test(rdb_enc_zl, old_rdb_file_vectors) {
    for (size_t v = 0; v < NV(old_vectors); v++) {
        const old_vec *x = &old_vectors[v];
        size_t len;
        unsigned char *b = unhex(x->hex, &len);
        tlist want = {0}, got = {0};
        tl_expand(&want, x->ops, x->nops, 1);
        long long pairs = x->kind == 'm' ? (long long)want.n / 2 : (long long)want.n;
        cr_assert_eq(validate_kind(x->kind, b, len), pairs, "%s", x->name);
        if (x->kind == 'i') {
            for (size_t i = 0; i < want.n; i++) tl_push_ll(&got, rintset_get(b, i), 1);
            size_t hl, bl;
            int64_t vals[16];
            for (size_t i = 0; i < want.n; i++) vals[i] = rintset_get(b, i);
            unsigned char *h = unhex(x->lp_hex, &hl), *is = rintset_build(vals, want.n, &bl);
            cr_assert(hl == bl && memcmp(h, is, bl) == 0, "%s: rebuilt as redis 7.0 DUMPs it", x->name);
            free(h);
            zfree(is);
        } else {
            cr_assert_eq(read_kind(x->kind, b, len, &got), pairs, "%s", x->name);
        }
        cr_assert_eq(tl_diff(&want, &got), -1, "%s: element %lld", x->name, tl_diff(&want, &got));
        tl_free(&want);
        tl_free(&got);
        free(b);
    }
}

static unsigned char *crafted_bytes(const crafted_vec *x, const tlist *t, size_t *len) {
    if (x->hex) return unhex(x->hex, len);
    unsigned char *b = x->kind == 'z' ? build_zl(t, len) : build_zm(t, len);
    cr_assert(*len == x->len && fnv1a(b, *len) == x->fnv, "%s: writer differs from the crafted bytes", x->name);
    return b;
}

Test(rdb_enc_zl, crafted_every_form_accepted_by_redis) {
    for (size_t v = 0; v < NV(crafted); v++) {
        const crafted_vec *x = &crafted[v];
        tlist want = {0}, got = {0};
        tl_expand(&want, x->ops, x->nops, 0);
        cr_assert_eq(want.n, x->nelems);
        size_t len;
        unsigned char *b = crafted_bytes(x, &want, &len);
        cr_assert(len == x->len && fnv1a(b, len) == x->fnv);
        long long n = x->kind == 'm' ? (long long)want.n / 2 : (long long)want.n;
        cr_assert_eq(validate_kind(x->kind, b, len), n, "%s", x->name);
        cr_assert_eq(read_kind(x->kind, b, len, &got), n, "%s", x->name);
        cr_assert_eq(tl_diff(&want, &got), -1, "%s: element %lld", x->name, tl_diff(&want, &got));
        tl_free(&want);
        tl_free(&got);
        free(b);
    }
}

static void random_texts(tlist *t, size_t n) {
    rlp_builder b;
    rlp_init(&b);
    for (size_t i = 0; i < n; i++) random_element(t, &b);
    rlp_discard(&b);
}

Test(rdb_enc_zl, random_round_trips) {
    rng_state = 777;
    for (int round = 0; round < 300; round++) {
        tlist want = {0}, got = {0}, gotm = {0};
        random_texts(&want, rnd_below(60) * 2);
        size_t len, mlen;
        unsigned char *zl = build_zl(&want, &len), *zm = build_zm(&want, &mlen);
        cr_assert_eq(validate_kind('z', zl, len), (long long)want.n);
        cr_assert_eq(read_kind('z', zl, len, &got), (long long)want.n);
        cr_assert_eq(tl_diff(&want, &got), -1, "round %d", round);
        cr_assert_eq(validate_kind('m', zm, mlen), (long long)want.n / 2);
        cr_assert_eq(read_kind('m', zm, mlen, &gotm), (long long)want.n / 2);
        for (size_t i = 0; i < want.n; i++)
            cr_assert(gotm.len[i] == want.len[i] && !memcmp(gotm.p[i], want.p[i], want.len[i]));
        tl_free(&want);
        tl_free(&got);
        tl_free(&gotm);
        free(zl);
        free(zm);
    }
}

/* Small ziplists and zipmaps to cut and corrupt. */
static unsigned char *zl_sample(char kind, size_t i, size_t *len) {
    size_t k = 0;
    for (size_t v = 0; v < NV(old_vectors); v++)
        if (old_vectors[v].kind == kind && k++ == i) return unhex(old_vectors[v].hex, len);
    for (size_t v = 0; v < NV(crafted); v++)
        if (crafted[v].kind == kind && crafted[v].hex && k++ == i) return unhex(crafted[v].hex, len);
    if (i >= k + 6) return NULL;
    tlist t = {0};
    rng_state = 0x5eed00ULL + i;
    len_cap = 300;
    random_texts(&t, 2 + 2 * rnd_below(8));
    len_cap = SIZE_MAX;
    unsigned char *b = kind == 'z' ? build_zl(&t, len) : build_zm(&t, len);
    tl_free(&t);
    return b;
}

Test(rdb_enc_zl, every_truncation) {
    size_t len;
    unsigned char *zl;
    for (size_t s = 0; (zl = zl_sample('z', s, &len)) != NULL; s++) {
        rzl_iter it;
        renc_elem e;
        size_t starts[512], n = 0;
        rzl_iter_init(&it, zl, len);
        starts[n++] = it.pos;
        while (rzl_next(&it, &e) == 1 && n < 512) starts[n++] = it.pos;
        for (size_t k = 0, j = 0; k < len; k++) {
            cr_assert_eq(validate_kind('z', zl, k), -1, "sample %zu cut at %zu", s, k);
            if (k < 10) continue;
            unsigned char *t = malloc(k + 1);
            memcpy(t, zl, k);
            t[k] = 0xFF;
            put_le(t, k + 1, 4);
            put_le(t + 8, 65535, 2);
            while (j < n && starts[j] < k) j++;
            if (j < n && starts[j] == k) {
                put_le(t + 4, j ? starts[j - 1] : 10, 4);
                cr_assert_eq(rzl_validate(t, k + 1), (long long)j, "sample %zu at entry %zu", s, j);
            }
            consistent_zl(t, k + 1);
            free(t);
        }
        free(zl);
    }
}

Test(rdb_enc_zm, every_truncation) {
    size_t len;
    unsigned char *zm;
    for (size_t s = 0; (zm = zl_sample('m', s, &len)) != NULL; s++) {
        for (size_t k = 0; k < len; k++) {
            unsigned char *c = dup(zm, k);
            consistent_zm(c, k);
            free(c);
            if (k < 1) continue;
            unsigned char *t = malloc(k + 1);
            memcpy(t, zm, k);
            t[k] = 0xFF;
            t[0] = 254;
            consistent_zm(t, k + 1);
            free(t);
        }
        free(zm);
    }
}

Test(rdb_enc_zl, single_byte_corruptions) {
    size_t len;
    unsigned char *b;
    rng_state = 4242;
    for (size_t s = 0; (b = zl_sample('z', s, &len)) != NULL; s++) {
        corrupt_each_byte(b, len, consistent_zl);
        free(b);
    }
}

Test(rdb_enc_zm, single_byte_corruptions) {
    size_t len;
    unsigned char *b;
    rng_state = 424242;
    for (size_t s = 0; (b = zl_sample('m', s, &len)) != NULL; s++) {
        corrupt_each_byte(b, len, consistent_zm);
        free(b);
    }
}

static long long hex_validate(char kind, const char *hex) {
    size_t len;
    unsigned char *b = unhex(hex, &len);
    long long n = validate_kind(kind, b, len);
    if (kind == 'z') consistent_zl(b, len);
    else if (kind == 'm') consistent_zm(b, len);
    else consistent_is(b, len);
    free(b);
    return n;
}

Test(rdb_enc_zl, malformed_by_hand) {
    cr_assert_eq(hex_validate('z', "0b000000" "0a000000" "0000" "ff"), 0, "empty");
    cr_assert_eq(hex_validate('z', "0b000000" "0b000000" "0000" "ff"), -1, "tail of empty");
    cr_assert_eq(hex_validate('z', "0c000000" "0a000000" "0000" "ff"), -1, "total");
    cr_assert_eq(hex_validate('z', "0b000000" "0a000000" "0000" "00"), -1, "no terminator");
    cr_assert_eq(hex_validate('z', "0a000000" "0a000000" "ff"), -1, "short header");
    cr_assert_eq(hex_validate('z', "0d000000" "0a000000" "0100" "00f2" "ff"), 1);
    cr_assert_eq(hex_validate('z', "0d000000" "0b000000" "0100" "00f2" "ff"), -1, "tail");
    cr_assert_eq(hex_validate('z', "0d000000" "0a000000" "0200" "00f2" "ff"), -1, "count");
    cr_assert_eq(hex_validate('z', "0d000000" "0a000000" "ffff" "00f2" "ff"), 1, "count unknown");
    cr_assert_eq(hex_validate('z', "0d000000" "0a000000" "0100" "01f2" "ff"), -1, "first prevlen");
    cr_assert_eq(hex_validate('z', "11000000" "0a000000" "0100" "fe00000000f2" "ff"), 1, "5-byte prevlen 0");
    cr_assert_eq(hex_validate('z', "10000000" "0a000000" "0100" "fe000000f2" "ff"), -1, "prevlen cut");
    cr_assert_eq(hex_validate('z', "0f000000" "0c000000" "0200" "00f2" "02f3" "ff"), 2);
    cr_assert_eq(hex_validate('z', "0f000000" "0c000000" "0200" "00f2" "03f3" "ff"), -1, "prevlen");
    cr_assert_eq(hex_validate('z', "0f000000" "0c000000" "0200" "00f2" "ff02" "ff"), -1, "end inside");
    static const int bad[] = {0xC1, 0xC8, 0xD1, 0xDF, 0xE1, 0xEF, 0xFF};
    for (size_t i = 0; i < NV(bad); i++) {
        char hex[64];
        snprintf(hex, sizeof hex, "15000000" "0a000000" "0100" "00%02x" "0000000000000000" "ff", bad[i]);
        cr_assert_eq(hex_validate('z', hex), -1, "encoding %02x", bad[i]);
    }
    cr_assert_eq(hex_validate('z', "10000000" "0a000000" "0100" "00f0ffff7f" "ff"), 1, "int24");
    cr_assert_eq(hex_validate('z', "0f000000" "0a000000" "0100" "00f0ffff" "ff"), -1, "int24 cut");
    cr_assert_eq(hex_validate('z', "0e000000" "0a000000" "0100" "00fe80" "ff"), 1, "int8");
    cr_assert_eq(hex_validate('z', "0e000000" "0a000000" "0100" "000261" "ff"), -1, "string past the end");
    cr_assert_eq(hex_validate('z', "11000000" "0a000000" "0100" "0080000000ff" "ff"), -1, "32-bit length");
    cr_assert_eq(hex_validate('z', "11000000" "0a000000" "0100" "008000000001" "ff"), -1, "32-bit length 1");
    cr_assert_eq(hex_validate('z', "12000000" "0a000000" "0100" "00800000000161" "ff"), 1, "32-bit length 1");
}

Test(rdb_enc_zm, malformed_by_hand) {
    cr_assert_eq(hex_validate('m', "00ff"), 0, "empty");
    cr_assert_eq(hex_validate('m', "ff"), -1, "no zmlen");
    cr_assert_eq(hex_validate('m', "0001"), -1, "no terminator");
    cr_assert_eq(hex_validate('m', "0101610100" "62" "ff"), 1);
    cr_assert_eq(hex_validate('m', "0201610100" "62" "ff"), -1, "zmlen");
    cr_assert_eq(hex_validate('m', "fe01610100" "62" "ff"), 1, "zmlen unknown");
    cr_assert_eq(hex_validate('m', "0101610102" "62" "ff"), -1, "free past the end");
    cr_assert_eq(hex_validate('m', "0101610102" "620000" "ff"), 1, "free bytes");
    cr_assert_eq(hex_validate('m', "010161ff00" "62" "ff"), -1, "0xFF value length");
    cr_assert_eq(hex_validate('m', "01ff00ff"), -1, "terminator inside");
    cr_assert_eq(hex_validate('m', "01fe01000000610100" "62" "ff"), 1, "5-byte key length");
    cr_assert_eq(hex_validate('m', "01fe010000" "ff"), -1, "5-byte length cut");
    cr_assert_eq(hex_validate('m', "010161" "ff"), -1, "no value");
    cr_assert_eq(hex_validate('m', "01016101" "ff"), -1, "no free byte");
    cr_assert_eq(hex_validate('m', "0101610200" "62" "ff"), -1, "value past the end");
}

/* ------------------------------------------------------------ intset */

Test(rdb_enc_is, redis_7_0_dump_vectors_byte_identical) {
    for (size_t v = 0; v < NV(is_vectors); v++) {
        const is_vec *x = &is_vectors[v];
        size_t len, hl;
        unsigned char *is = rintset_build(x->vals, x->n, &len), *h = unhex(x->hex, &hl);
        cr_assert(len == hl && memcmp(is, h, len) == 0, "%s", x->name);
        cr_assert_eq(rintset_validate(h, hl), (long long)x->n);
        for (size_t i = 0; i < x->n; i++) cr_assert_eq(rintset_get(h, i), x->vals[i]);
        corrupt_each_byte(h, hl, consistent_is);
        for (size_t k = 0; k < hl; k++) cr_assert_eq(validate_kind('i', h, k), -1, "%s cut at %zu", x->name, k);
        free(h);
        zfree(is);
    }
}

Test(rdb_enc_is, widths_and_round_trips) {
    static const struct {
        int64_t lo, hi;
        uint32_t width;
    } cases[] = {
        {0, 0, 2}, {INT16_MIN, INT16_MAX, 2}, {INT16_MIN - 1, 0, 4}, {0, INT16_MAX + 1, 4},
        {INT32_MIN, INT32_MAX, 4}, {(int64_t)INT32_MIN - 1, 0, 8}, {0, (int64_t)INT32_MAX + 1, 8},
        {INT64_MIN, INT64_MAX, 8},
    };
    for (size_t i = 0; i < NV(cases); i++) {
        int64_t v[3] = {cases[i].lo, cases[i].lo / 2 + cases[i].hi / 2, cases[i].hi};
        size_t n = v[0] == v[2] ? 1 : v[1] == v[0] || v[1] == v[2] ? 2 : 3;
        if (n == 2) v[1] = v[2];
        size_t len;
        unsigned char *is = rintset_build(v, n, &len);
        cr_assert_eq(len, 8 + n * cases[i].width);
        cr_assert_eq(is[0], cases[i].width);
        cr_assert_eq(rintset_validate(is, len), (long long)n);
        for (size_t k = 0; k < n; k++) cr_assert_eq(rintset_get(is, k), v[k]);
        zfree(is);
    }
    size_t len;
    unsigned char *is = rintset_build(NULL, 0, &len);
    cr_assert(len == 8 && is[0] == 2 && rintset_validate(is, len) == 0);
    zfree(is);
}

Test(rdb_enc_is, malformed_by_hand) {
    cr_assert_eq(hex_validate('i', "0200000002000000" "01000200"), 2);
    cr_assert_eq(hex_validate('i', "0400000002000000" "0100000002000000"), 2, "wider than needed");
    cr_assert_eq(hex_validate('i', "0800000001000000" "0100000000000000"), 1, "wider than needed");
    cr_assert_eq(hex_validate('i', "0200000002000000" "02000100"), -1, "descending");
    cr_assert_eq(hex_validate('i', "0200000002000000" "01000100"), -1, "duplicate");
    cr_assert_eq(hex_validate('i', "0200000003000000" "01000200"), -1, "count");
    cr_assert_eq(hex_validate('i', "0200000001000000" "01000200"), -1, "count");
    cr_assert_eq(hex_validate('i', "0200000002000000" "010002"), -1, "cut");
    cr_assert_eq(hex_validate('i', "0300000001000000" "010000"), -1, "encoding 3");
    cr_assert_eq(hex_validate('i', "0000000000000000"), -1, "encoding 0");
    cr_assert_eq(hex_validate('i', "0100000001000000" "05"), -1, "encoding 1");
    cr_assert_eq(hex_validate('i', "1000000001000000" "01000000000000000000000000000000"), -1, "encoding 16");
    cr_assert_eq(hex_validate('i', "0200000000000000"), 0, "empty");
    cr_assert_eq(hex_validate('i', "02000000000000"), -1, "short header");
    cr_assert_eq(hex_validate('i', "02000000ffffffff" "0100"), -1, "huge count");
}
