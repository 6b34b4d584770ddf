/* test_cluster_msg.c - Criterion unit tests for src/cluster/cluster_msg.c
 * (the Redis Cluster bus message codec).
 *
 * Why: ferry nodes and redis-server 7.0.15 nodes must read each other's
 * bus messages byte for byte, and the bus port is open to anyone: a
 * message that is cut short, overlong or whose inner lengths disagree with
 * its totlen must be refused, never read past. The tests decode two MEET
 * messages captured from a real redis-server 7.0.15 (and rebuild them byte
 * for byte), pin the header's offsets and each type's length, round-trip
 * every type, and refuse every truncation and every malformed length.
 */
#include <criterion/criterion.h>
#include <string.h>

#include "cluster_msg.h"

typedef struct fixture_run {
    size_t off, len;
    const char *bytes;
} fixture_run;

/* Captured with a python listener on a bus port after `CLUSTER MEET
 * 127.0.0.1 17498 27498` to redis-server 7.0.15 (port 27421, announced
 * hostname host-a.example, slots 0-2 100 5000 16383, current and config
 * epoch 1), whose replica (port 27422) is gossiped; and the same from that
 * replica (CLUSTER MEET 127.0.0.1 17497 27497). */
/* meet_primary: 2384 bytes; the non-zero runs (everything else is zero) */
static const fixture_run meet_primary_runs[] = {
    {0, 32, "\x52\x43\x6d\x62\x00\x00\x09\x50\x00\x01\x6b\x1d\x00\x02\x00\x01\x00\x00"
        "\x00\x00\x00\x00\x00\x01\x00\x00\x00\x00\x00\x00\x00\x01"},
    {40, 41, "\x32\x32\x62\x36\x38\x63\x34\x37\x33\x66\x33\x30\x33\x66\x35\x63\x31\x38"
        "\x65\x65\x38\x66\x31\x31\x64\x66\x39\x38\x66\x33\x31\x39\x36\x30\x64\x33"
        "\x30\x34\x66\x30\x07"},
    {92, 1, "\x10"},
    {705, 1, "\x01"},
    {2127, 1, "\x80"},
    {2215, 1, "\x01"},
    {2248, 65, "\x92\x2d\x01\x11\x01\x04\x00\x00\x35\x38\x32\x32\x36\x30\x32\x61\x36\x34"
        "\x34\x35\x39\x38\x65\x66\x30\x63\x61\x37\x38\x39\x36\x38\x61\x35\x39\x65"
        "\x30\x34\x32\x30\x31\x61\x36\x39\x64\x34\x65\x62\x6b\x0b\x5d\xbb\x6b\x0b"
        "\x5d\xba\x31\x32\x37\x2e\x30\x2e\x30\x2e\x31"},
    {2350, 32, "\x6b\x1e\x92\x2e\x00\x02\x00\x00\x00\x00\x00\x00\x00\x18\x00\x00\x00\x00"
        "\x68\x6f\x73\x74\x2d\x61\x2e\x65\x78\x61\x6d\x70\x6c\x65"},
};

/* meet_replica: 2360 bytes; the non-zero runs (everything else is zero) */
static const fixture_run meet_replica_runs[] = {
    {0, 32, "\x52\x43\x6d\x62\x00\x00\x09\x38\x00\x01\x6b\x1e\x00\x02\x00\x01\x00\x00"
        "\x00\x00\x00\x00\x00\x01\x00\x00\x00\x00\x00\x00\x00\x01"},
    {40, 41, "\x35\x38\x32\x32\x36\x30\x32\x61\x36\x34\x34\x35\x39\x38\x65\x66\x30\x63"
        "\x61\x37\x38\x39\x36\x38\x61\x35\x39\x65\x30\x34\x32\x30\x31\x61\x36\x39"
        "\x64\x34\x65\x62\x07"},
    {92, 1, "\x10"},
    {705, 1, "\x01"},
    {2127, 41, "\x80\x32\x32\x62\x36\x38\x63\x34\x37\x33\x66\x33\x30\x33\x66\x35\x63\x31"
        "\x38\x65\x65\x38\x66\x31\x31\x64\x66\x39\x38\x66\x33\x31\x39\x36\x30\x64"
        "\x33\x30\x34\x66\x30"},
    {2248, 65, "\x92\x2e\x00\x12\x01\x00\x00\x00\x32\x32\x62\x36\x38\x63\x34\x37\x33\x66"
        "\x33\x30\x33\x66\x35\x63\x31\x38\x65\x65\x38\x66\x31\x31\x64\x66\x39\x38"
        "\x66\x33\x31\x39\x36\x30\x64\x33\x30\x34\x66\x30\x00\x00\x00\x00\x6b\x0b"
        "\x5d\xbd\x31\x32\x37\x2e\x30\x2e\x30\x2e\x31"},
    {2350, 6, "\x6b\x1d\x92\x2d\x01\x01"},
};

#define NAME_A "22b68c473f303f5c18ee8f11df98f31960d304f0"
#define NAME_B "5822602a644598ef0ca78968a59e04201a69d4eb"
#define NAME_X "0123456789abcdef0123456789abcdef01234567"
#define BUFCAP 8192

static size_t load(const fixture_run *runs, size_t n, size_t total, unsigned char *buf) {
    memset(buf, 0, total);
    for (size_t i = 0; i < n; i++) memcpy(buf + runs[i].off, runs[i].bytes, runs[i].len);
    return total;
}

#define LOAD(name, total, buf) load(name##_runs, sizeof name##_runs / sizeof name##_runs[0], total, buf)

static unsigned char slots_fixture[CMSG_SLOT_BYTES];

/* A header with every field set to something distinct. */
static cmsg_hdr sample_hdr(uint16_t type) {
    memset(slots_fixture, 0, sizeof slots_fixture);
    cmsg_slot_set(slots_fixture, 0);
    cmsg_slot_set(slots_fixture, 7);
    cmsg_slot_set(slots_fixture, 16383);
    cmsg_hdr h = {0};
    h.type = type;
    h.port = 7000;
    h.pport = 7001;
    h.cport = 17000;
    h.current_epoch = 0x0102030405060708ull;
    h.config_epoch = 42;
    h.offset = 123456789;
    h.sender = NAME_A;
    h.myslots = slots_fixture;
    h.slaveof = NAME_B;
    h.myip = "10.0.0.1";
    h.myip_len = 8;
    h.flags = CMSG_NODE_SLAVE | CMSG_NODE_MYSELF;
    h.state = CMSG_STATE_OK;
    h.mflags[0] = CMSG_MF0_PAUSED;
    h.mflags[2] = 9;
    return h;
}

static void assert_hdr_eq(const cmsg_hdr *a, const cmsg_hdr *b) {
    cr_assert_eq(a->port, b->port);
    cr_assert_eq(a->pport, b->pport);
    cr_assert_eq(a->cport, b->cport);
    cr_assert_eq(a->type, b->type);
    cr_assert_eq(a->current_epoch, b->current_epoch);
    cr_assert_eq(a->config_epoch, b->config_epoch);
    cr_assert_eq(a->offset, b->offset);
    cr_assert_eq(memcmp(a->sender, b->sender, CMSG_NAMELEN), 0);
    cr_assert_eq(memcmp(a->myslots, b->myslots, CMSG_SLOT_BYTES), 0);
    cr_assert_eq(memcmp(a->slaveof, b->slaveof, CMSG_NAMELEN), 0);
    cr_assert_eq(a->myip_len, b->myip_len);
    cr_assert_eq(memcmp(a->myip, b->myip, a->myip_len), 0);
    cr_assert_eq(a->flags, b->flags);
    cr_assert_eq(a->state, b->state);
    cr_assert_eq(memcmp(a->mflags, b->mflags, 3), 0);
}

static cmsg_gossip sample_gossip(const char *name, uint16_t port) {
    cmsg_gossip g = {name, 1700000000u, 1700000001u, "192.168.1.20", 12, port, (uint16_t)(port + 10000),
                     CMSG_NODE_MASTER | CMSG_NODE_PFAIL, 0};
    return g;
}

/* A PING with two gossip entries and a hostname extension. */
static size_t sample_ping(unsigned char *buf, uint16_t type) {
    cmsg_hdr h = sample_hdr(type);
    cmsg_writer w;
    cmsg_writer_init(&w, buf, BUFCAP);
    cr_assert_eq(cmsg_begin_ping(&w, &h), 0);
    cmsg_gossip g1 = sample_gossip(NAME_B, 7002), g2 = sample_gossip(NAME_X, 7003);
    cr_assert_eq(cmsg_add_gossip(&w, &g1), 0);
    cr_assert_eq(cmsg_add_gossip(&w, &g2), 0);
    cr_assert_eq(cmsg_add_ext_hostname(&w, "node-1.example.org", 18), 0);
    return cmsg_finish(&w);
}

Test(cluster_msg, layout_constants) {
    cr_assert_eq(CMSG_HDR_LEN, 2256);
    cr_assert_eq(CMSG_OFF_DATA, CMSG_HDR_LEN);
    cr_assert_eq(CMSG_OFF_SLAVEOF, CMSG_OFF_MYSLOTS + CMSG_SLOT_BYTES);
    cr_assert_eq(CMSG_OFF_MYIP, CMSG_OFF_SLAVEOF + CMSG_NAMELEN);
    cr_assert_eq(CMSG_OFF_EXTENSIONS, CMSG_OFF_MYIP + CMSG_IPLEN);
    cr_assert_eq(CMSG_OFF_PPORT, CMSG_OFF_NOTUSED1 + 30);
    cr_assert_eq(CMSG_GOFF_NOTUSED1 + 2, CMSG_GOSSIP_LEN);
    cr_assert_eq(CMSG_FAIL_LEN, 2296);
    cr_assert_eq(CMSG_UPDATE_LEN, 4352);
    cr_assert_eq(cmsg_size_publish(3, 5), 2256 + 8 + 3 + 5);
    cr_assert_eq(cmsg_size_module(10), 2256 + 13 + 10);
    cr_assert_eq(cmsg_size_ext_hostname(14), 24); /* "host-a.example": 15 with the NUL, padded to 16 */
    cr_assert_eq(cmsg_size_ext_hostname(15), 24);
    cr_assert_eq(cmsg_size_ext_hostname(16), 32);
    cr_assert_eq(cmsg_size_ext(0), 8);
    cr_assert_eq(cmsg_size_ping(2, 24), 2256 + 208 + 24);
    cr_assert_eq(cmsg_size_ping(65536, 0), 0);
    cr_assert_eq(cmsg_size_publish(0xFFFFFFFFu, 1), 0);
}

Test(cluster_msg, header_bytes_at_their_offsets) {
    unsigned char buf[BUFCAP];
    size_t n = sample_ping(buf, CMSG_PING);
    cr_assert_eq(n, 2256 + 2 * 104 + 8 + 24);
    cr_assert_eq(memcmp(buf, "RCmb", 4), 0);
    cr_assert_eq(memcmp(buf + 4, "\x00\x00\x09\xc0", 4), 0); /* 2496 */
    cr_assert_eq(memcmp(buf + 8, "\x00\x01\x1b\x58\x00\x00\x00\x02", 8), 0); /* ver 1, port 7000, PING, 2 entries */
    cr_assert_eq(memcmp(buf + 16, "\x01\x02\x03\x04\x05\x06\x07\x08", 8), 0);
    cr_assert_eq(memcmp(buf + 24, "\x00\x00\x00\x00\x00\x00\x00\x2a", 8), 0);
    cr_assert_eq(memcmp(buf + 40, NAME_A, 40), 0);
    cr_assert_eq(buf[80], 0x81); /* slots 0 and 7 */
    cr_assert_eq(buf[80 + 2047], 0x80); /* slot 16383 */
    cr_assert_eq(memcmp(buf + 2128, NAME_B, 40), 0);
    cr_assert_eq(memcmp(buf + 2168, "10.0.0.1\0", 9), 0);
    cr_assert_eq(memcmp(buf + 2214, "\x00\x01", 2), 0); /* one extension */
    cr_assert_eq(memcmp(buf + 2246, "\x1b\x59\x42\x68\x00\x12\x00", 7), 0); /* pport, cport, flags, state */
    cr_assert_eq(buf[2253], CMSG_MF0_PAUSED | CMSG_MF0_EXT_DATA);
    cr_assert_eq(memcmp(buf + 2256, NAME_B, 40), 0); /* first gossip entry */
    cr_assert_eq(memcmp(buf + 2256 + 48, "192.168.1.20\0", 13), 0);
    cr_assert_eq(memcmp(buf + 2256 + 94, "\x1b\x5a\x42\x6a\x00\x05\x00\x00\x00\x00", 10), 0);
    cr_assert_eq(memcmp(buf + 2464, "\x00\x00\x00\x20\x00\x00\x00\x00node-1.example.org\0", 27), 0);
}

/* The primary's MEET: a gossip entry for its replica and a hostname. */
Test(cluster_msg, real_redis_meet_from_a_primary) {
    unsigned char buf[BUFCAP];
    size_t n = LOAD(meet_primary, 2384, buf);
    cr_assert_eq(cmsg_frame(buf, n, CMSG_MAX_TOTLEN), 2384);
    cmsg m;
    cr_assert_eq(cmsg_parse(buf, n, &m), 0, "%s", m.err);
    cr_assert_eq(m.h.type, CMSG_MEET);
    cr_assert_eq(m.h.ver, 1);
    cr_assert_eq(m.h.port, 27421);
    cr_assert_eq(m.h.cport, 37421);
    cr_assert_eq(m.h.pport, 0);
    cr_assert_eq(m.h.current_epoch, 1);
    cr_assert_eq(m.h.config_epoch, 1);
    cr_assert_eq(m.h.offset, 0);
    cr_assert_eq(memcmp(m.h.sender, NAME_A, 40), 0);
    cr_assert(cmsg_name_is_null(m.h.slaveof));
    cr_assert_eq(m.h.myip_len, 0);
    cr_assert_eq(m.h.flags, CMSG_NODE_MASTER | CMSG_NODE_MYSELF | CMSG_NODE_MIGRATE_TO);
    cr_assert_eq(m.h.state, CMSG_STATE_FAIL);
    cr_assert_eq(m.h.mflags[0], CMSG_MF0_EXT_DATA);
    const unsigned owned[] = {0, 1, 2, 100, 5000, 16383};
    int nset = 0;
    for (unsigned s = 0; s < CMSG_SLOTS; s++) nset += cmsg_slot_test(m.h.myslots, s);
    cr_assert_eq(nset, 6);
    for (size_t i = 0; i < 6; i++) cr_assert(cmsg_slot_test(m.h.myslots, owned[i]), "slot %u", owned[i]);
    cr_assert_eq(m.h.count, 1);
    cmsg_gossip g;
    cr_assert_eq(cmsg_gossip_at(&m, 0, &g), 0);
    cr_assert_eq(cmsg_gossip_at(&m, 1, &g), -1);
    cr_assert_eq(cmsg_gossip_at(&m, 0, &g), 0);
    cr_assert_eq(memcmp(g.nodename, NAME_B, 40), 0);
    cr_assert_eq(g.ip_len, 9);
    cr_assert_eq(memcmp(g.ip, "127.0.0.1", 9), 0);
    cr_assert_eq(g.port, 27422);
    cr_assert_eq(g.cport, 37422);
    cr_assert_eq(g.flags, CMSG_NODE_SLAVE);
    cr_assert_eq(g.ping_sent, 1795907003u);
    cr_assert_eq(g.pong_received, 1795907002u);
    cr_assert_eq(m.h.extensions, 1);
    cr_assert_eq(m.u.ping.hostname.len, 14);
    cr_assert_eq(memcmp(m.u.ping.hostname.p, "host-a.example", 14), 0);
    cmsg_ext_iter it;
    cmsg_ext e;
    cmsg_ext_begin(&m, &it);
    cr_assert_eq(cmsg_ext_next(&it, &e), 1);
    cr_assert_eq(e.type, CMSG_EXT_HOSTNAME);
    cr_assert_eq(e.len, 24);
    cr_assert_eq(e.data_len, 16);
    cr_assert_eq(cmsg_ext_next(&it, &e), 0);
}

/* Rebuild a parsed PING/PONG/MEET from its view: the same bytes. */
static size_t rebuild_ping(const cmsg *m, unsigned char *out) {
    cmsg_writer w;
    cmsg_writer_init(&w, out, BUFCAP);
    cr_assert_eq(cmsg_begin_ping(&w, &m->h), 0);
    for (unsigned i = 0; i < m->h.count; i++) {
        cmsg_gossip g;
        cr_assert_eq(cmsg_gossip_at(m, i, &g), 0);
        cr_assert_eq(cmsg_add_gossip(&w, &g), 0);
    }
    cmsg_ext_iter it;
    cmsg_ext e;
    cmsg_ext_begin(m, &it);
    while (cmsg_ext_next(&it, &e) == 1) {
        if (e.type == CMSG_EXT_HOSTNAME)
            cr_assert_eq(cmsg_add_ext_hostname(&w, (const char *)e.data, strlen((const char *)e.data)), 0);
        else
            cr_assert_eq(cmsg_add_ext(&w, e.type, e.data, e.data_len), 0);
    }
    return cmsg_finish(&w);
}

Test(cluster_msg, real_redis_meets_rebuilt_byte_for_byte) {
    unsigned char buf[BUFCAP], out[BUFCAP];
    cmsg m;
    size_t n = LOAD(meet_primary, 2384, buf);
    cr_assert_eq(cmsg_parse(buf, n, &m), 0);
    cr_assert_eq(rebuild_ping(&m, out), n);
    cr_assert_eq(memcmp(buf, out, n), 0);
    n = LOAD(meet_replica, 2360, buf);
    cr_assert_eq(cmsg_parse(buf, n, &m), 0, "%s", m.err);
    cr_assert_eq(rebuild_ping(&m, out), n);
    cr_assert_eq(memcmp(buf, out, n), 0);
}

/* The replica's MEET: slaveof is its primary, no extension. */
Test(cluster_msg, real_redis_meet_from_a_replica) {
    unsigned char buf[BUFCAP];
    size_t n = LOAD(meet_replica, 2360, buf);
    cmsg m;
    cr_assert_eq(cmsg_parse(buf, n, &m), 0, "%s", m.err);
    cr_assert_eq(m.h.type, CMSG_MEET);
    cr_assert_eq(m.h.port, 27422);
    cr_assert_eq(memcmp(m.h.sender, NAME_B, 40), 0);
    cr_assert_eq(memcmp(m.h.slaveof, NAME_A, 40), 0);
    cr_assert_eq(m.h.flags, CMSG_NODE_SLAVE | CMSG_NODE_MYSELF);
    cr_assert(cmsg_slot_test(m.h.myslots, 5000)); /* a replica announces its primary's slots */
    cr_assert_eq(m.h.mflags[0], 0);
    cr_assert_eq(m.u.ping.n_ext, 0);
    cr_assert_null(m.u.ping.hostname.p);
    cmsg_gossip g;
    cr_assert_eq(cmsg_gossip_at(&m, 0, &g), 0);
    cr_assert_eq(memcmp(g.nodename, NAME_A, 40), 0);
    cr_assert_eq(g.port, 27421);
    cr_assert_eq(g.flags, CMSG_NODE_MASTER | CMSG_NODE_MIGRATE_TO);
}

static void check_round_trip_ping(uint16_t type) {
    unsigned char buf[BUFCAP];
    size_t n = sample_ping(buf, type);
    cmsg m;
    cr_assert_eq(cmsg_parse(buf, n, &m), 0, "%s", m.err);
    cmsg_hdr h = sample_hdr(type);
    h.mflags[0] |= CMSG_MF0_EXT_DATA;
    assert_hdr_eq(&m.h, &h);
    cr_assert_eq(m.h.count, 2);
    cr_assert_eq(m.h.extensions, 1);
    cmsg_gossip g;
    cr_assert_eq(cmsg_gossip_at(&m, 1, &g), 0);
    cr_assert_eq(memcmp(g.nodename, NAME_X, 40), 0);
    cr_assert_eq(g.ping_sent, 1700000000u);
    cr_assert_eq(g.pong_received, 1700000001u);
    cr_assert_eq(g.ip_len, 12);
    cr_assert_eq(g.port, 7003);
    cr_assert_eq(g.cport, 17003);
    cr_assert_eq(g.flags, CMSG_NODE_MASTER | CMSG_NODE_PFAIL);
    cr_assert_eq(m.u.ping.hostname.len, 18);
    cr_assert_eq(memcmp(m.u.ping.hostname.p, "node-1.example.org", 18), 0);
}

Test(cluster_msg, round_trip_ping_pong_meet) {
    check_round_trip_ping(CMSG_PING);
    check_round_trip_ping(CMSG_PONG);
    check_round_trip_ping(CMSG_MEET);
}

Test(cluster_msg, round_trip_fail_and_update) {
    unsigned char buf[BUFCAP];
    cmsg_hdr h = sample_hdr(0);
    cmsg m;
    size_t n = cmsg_build_fail(buf, sizeof buf, &h, NAME_X);
    cr_assert_eq(n, CMSG_FAIL_LEN);
    cr_assert_eq(cmsg_parse(buf, n, &m), 0, "%s", m.err);
    h.type = CMSG_FAIL;
    assert_hdr_eq(&m.h, &h);
    cr_assert_eq(memcmp(m.u.fail.nodename, NAME_X, 40), 0);

    unsigned char slots[CMSG_SLOT_BYTES] = {0};
    for (unsigned s = 100; s < 200; s++) cmsg_slot_set(slots, s);
    n = cmsg_build_update(buf, sizeof buf, &h, 77, NAME_B, slots);
    cr_assert_eq(n, CMSG_UPDATE_LEN);
    cr_assert_eq(cmsg_parse(buf, n, &m), 0, "%s", m.err);
    h.type = CMSG_UPDATE;
    assert_hdr_eq(&m.h, &h);
    cr_assert_eq(m.u.update.config_epoch, 77);
    cr_assert_eq(memcmp(m.u.update.nodename, NAME_B, 40), 0);
    cr_assert_eq(memcmp(m.u.update.slots, slots, CMSG_SLOT_BYTES), 0);
}

Test(cluster_msg, round_trip_publish_module_bare) {
    unsigned char buf[BUFCAP];
    cmsg_hdr h = sample_hdr(0);
    cmsg m;
    for (int shard = 0; shard <= 1; shard++) {
        size_t n = cmsg_build_publish(buf, sizeof buf, &h, shard, "news", 4, "hello world", 11);
        cr_assert_eq(n, 2256 + 8 + 15);
        cr_assert_eq(cmsg_parse(buf, n, &m), 0, "%s", m.err);
        cr_assert_eq(m.h.type, shard ? CMSG_PUBLISHSHARD : CMSG_PUBLISH);
        cr_assert_eq(m.u.publish.channel.len, 4);
        cr_assert_eq(memcmp(m.u.publish.channel.p, "news", 4), 0);
        cr_assert_eq(m.u.publish.message.len, 11);
        cr_assert_eq(memcmp(m.u.publish.message.p, "hello world", 11), 0);
    }
    size_t n = cmsg_build_publish(buf, sizeof buf, &h, 0, "", 0, "", 0);
    cr_assert_eq(cmsg_parse(buf, n, &m), 0);
    cr_assert_eq(m.u.publish.channel.len + m.u.publish.message.len, 0);

    n = cmsg_build_module(buf, sizeof buf, &h, 0x1122334455667788ull, 200, "payload", 7);
    cr_assert_eq(n, 2256 + 13 + 7);
    cr_assert_eq(cmsg_parse(buf, n, &m), 0, "%s", m.err);
    cr_assert_eq(m.h.type, CMSG_MODULE);
    cr_assert_eq(m.u.module.module_id, 0x1122334455667788ull);
    cr_assert_eq(m.u.module.type, 200);
    cr_assert_eq(m.u.module.payload.len, 7);
    cr_assert_eq(memcmp(m.u.module.payload.p, "payload", 7), 0);

    const uint16_t bare[] = {CMSG_FAILOVER_AUTH_REQUEST, CMSG_FAILOVER_AUTH_ACK, CMSG_MFSTART};
    for (size_t i = 0; i < 3; i++) {
        n = cmsg_build_bare(buf, sizeof buf, &h, bare[i]);
        cr_assert_eq(n, CMSG_HDR_LEN);
        cr_assert_eq(cmsg_parse(buf, n, &m), 0, "%s", m.err);
        h.type = bare[i];
        assert_hdr_eq(&m.h, &h);
    }
    cr_assert_eq(cmsg_build_bare(buf, sizeof buf, &h, CMSG_PING), 0);
    cr_assert_eq(cmsg_build_bare(buf, sizeof buf, &h, CMSG_FAIL), 0);
}

/* Every prefix of a valid message: -2 from the framer below 8 bytes, its
 * totlen after; the parser refuses every length but totlen. */
static void check_every_split(const unsigned char *buf, size_t n) {
    cmsg m;
    for (size_t k = 0; k < n; k++) {
        long f = cmsg_frame(buf, k, CMSG_MAX_TOTLEN);
        if (k < CMSG_FRAME_MIN)
            cr_assert_eq(f, -2, "split %zu", k);
        else
            cr_assert_eq(f, (long)n, "split %zu", k);
        cr_assert_eq(cmsg_parse(buf, k, &m), -1, "split %zu", k);
        cr_assert_not_null(m.err);
    }
    cr_assert_eq(cmsg_parse(buf, n, &m), 0);
    unsigned char longer[BUFCAP + 1];
    memcpy(longer, buf, n);
    longer[n] = 0;
    cr_assert_eq(cmsg_parse(longer, n + 1, &m), -1);
}

Test(cluster_msg, every_truncation_refused) {
    unsigned char buf[BUFCAP];
    cmsg_hdr h = sample_hdr(0);
    check_every_split(buf, sample_ping(buf, CMSG_PONG));
    check_every_split(buf, LOAD(meet_primary, 2384, buf));
    check_every_split(buf, cmsg_build_fail(buf, sizeof buf, &h, NAME_X));
    check_every_split(buf, cmsg_build_publish(buf, sizeof buf, &h, 1, "ch", 2, "msg", 3));
    check_every_split(buf, cmsg_build_module(buf, sizeof buf, &h, 1, 2, "xyz", 3));
    check_every_split(buf, cmsg_build_bare(buf, sizeof buf, &h, CMSG_MFSTART));
    unsigned char slots[CMSG_SLOT_BYTES] = {0};
    check_every_split(buf, cmsg_build_update(buf, sizeof buf, &h, 3, NAME_A, slots));
}

static void set32(unsigned char *p, uint32_t v) {
    p[0] = (unsigned char)(v >> 24);
    p[1] = (unsigned char)(v >> 16);
    p[2] = (unsigned char)(v >> 8);
    p[3] = (unsigned char)v;
}

Test(cluster_msg, bad_signature_version_totlen) {
    unsigned char buf[BUFCAP];
    cmsg m;
    size_t n = sample_ping(buf, CMSG_PING);
    cr_assert_eq(cmsg_frame(buf, n, (uint32_t)n), (long)n);
    cr_assert_eq(cmsg_frame(buf, n, (uint32_t)n - 1), -1); /* over the caller's limit */
    buf[3] = 'B';
    cr_assert_eq(cmsg_frame(buf, n, CMSG_MAX_TOTLEN), -1);
    cr_assert_eq(cmsg_parse(buf, n, &m), -1);
    buf[3] = 'b';
    set32(buf + 4, CMSG_HDR_LEN - 1);
    cr_assert_eq(cmsg_frame(buf, n, CMSG_MAX_TOTLEN), -1);
    set32(buf + 4, 0xFFFFFFFFu);
    cr_assert_eq(cmsg_frame(buf, 8, CMSG_MAX_TOTLEN), (long)0xFFFFFFFFu);
    set32(buf + 4, (uint32_t)n);
    buf[9] = 2; /* version 2 */
    cr_assert_eq(cmsg_parse(buf, n, &m), -1);
    cr_assert_str_eq(m.err, "unsupported protocol version");
    buf[9] = 0;
    cr_assert_eq(cmsg_parse(buf, n, &m), -1);
    buf[9] = 1;
    cr_assert_eq(cmsg_parse(buf, n, &m), 0);
}

Test(cluster_msg, gossip_count_must_match_totlen) {
    unsigned char buf[BUFCAP];
    cmsg m;
    size_t n = LOAD(meet_replica, 2360, buf); /* one entry, no extension */
    const uint16_t counts[] = {0, 2, 3, 0xFFFF};
    for (size_t i = 0; i < 4; i++) {
        buf[14] = (unsigned char)(counts[i] >> 8);
        buf[15] = (unsigned char)counts[i];
        cr_assert_eq(cmsg_parse(buf, n, &m), -1, "count %u", counts[i]);
    }
    buf[14] = 0;
    buf[15] = 1;
    cr_assert_eq(cmsg_parse(buf, n, &m), 0);
    /* extensions without the EXT_DATA flag are not read: the message is then too long */
    n = LOAD(meet_primary, 2384, buf);
    buf[CMSG_OFF_MFLAGS] = 0;
    cr_assert_eq(cmsg_parse(buf, n, &m), -1);
}

/* The primary's MEET with its hostname extension's header changed. */
static int parse_with_ext(uint32_t len, uint16_t count, const char *text) {
    unsigned char buf[BUFCAP];
    cmsg m;
    size_t n = LOAD(meet_primary, 2384, buf);
    size_t ext = 2256 + 104;
    set32(buf + ext, len);
    buf[CMSG_OFF_EXTENSIONS] = (unsigned char)(count >> 8);
    buf[CMSG_OFF_EXTENSIONS + 1] = (unsigned char)count;
    memcpy(buf + ext + 8, text, 16);
    return cmsg_parse(buf, n, &m);
}

Test(cluster_msg, extension_lengths_checked) {
    const char *ok = "host-a.example\0\0";
    cr_assert_eq(parse_with_ext(24, 1, ok), 0);
    cr_assert_eq(parse_with_ext(20, 1, ok), -1); /* not a multiple of 8 */
    cr_assert_eq(parse_with_ext(0, 1, ok), -1);
    cr_assert_eq(parse_with_ext(16, 1, ok), -1); /* sound but leaves bytes over */
    cr_assert_eq(parse_with_ext(32, 1, ok), -1); /* past the end */
    cr_assert_eq(parse_with_ext(0x40000018u, 1, ok), -1); /* 16 low bits would say 24 */
    cr_assert_eq(parse_with_ext(0xFFFFFFF8u, 1, ok), -1);
    cr_assert_eq(parse_with_ext(24, 2, ok), -1); /* a second one is missing */
    cr_assert_eq(parse_with_ext(24, 0, ok), -1); /* then 24 bytes are over */
    cr_assert_eq(parse_with_ext(24, 1, "0123456789abcdef"), -1); /* hostname without NUL */
    cr_assert_eq(parse_with_ext(24, 1, "0123456789abcde\0"), 0);
}

Test(cluster_msg, unknown_extensions_skipped) {
    unsigned char buf[BUFCAP];
    cmsg_hdr h = sample_hdr(CMSG_PONG);
    cmsg_writer w;
    cmsg_writer_init(&w, buf, sizeof buf);
    cr_assert_eq(cmsg_begin_ping(&w, &h), 0);
    unsigned char forgotten[48] = {0};
    memcpy(forgotten, NAME_X, 40);
    forgotten[47] = 60;
    cr_assert_eq(cmsg_add_ext(&w, CMSG_EXT_FORGOTTEN_NODE, forgotten, sizeof forgotten), 0);
    cr_assert_eq(cmsg_add_ext(&w, 0x9999, "abc", 3), 0); /* padded to 8 */
    cr_assert_eq(cmsg_add_ext_hostname(&w, "h", 1), 0);
    cr_assert_eq(cmsg_add_ext(&w, CMSG_EXT_SHARDID, NAME_B, 40), 0);
    size_t n = cmsg_finish(&w);
    cr_assert_eq(n, 2256 + 56 + 16 + 16 + 48);
    cmsg m;
    cr_assert_eq(cmsg_parse(buf, n, &m), 0, "%s", m.err);
    cr_assert_eq(m.u.ping.n_ext, 4);
    cr_assert_eq(m.u.ping.hostname.len, 1);
    cmsg_ext_iter it;
    cmsg_ext e;
    const uint16_t types[] = {CMSG_EXT_FORGOTTEN_NODE, 0x9999, CMSG_EXT_HOSTNAME, CMSG_EXT_SHARDID};
    const size_t lens[] = {56, 16, 16, 48};
    cmsg_ext_begin(&m, &it);
    for (size_t i = 0; i < 4; i++) {
        cr_assert_eq(cmsg_ext_next(&it, &e), 1);
        cr_assert_eq(e.type, types[i]);
        cr_assert_eq(e.len, lens[i]);
    }
    cr_assert_eq(cmsg_ext_next(&it, &e), 0);
    cr_assert_eq(memcmp(buf + 2256 + 56 + 8, "abc\0\0\0\0\0", 8), 0);
}

Test(cluster_msg, publish_and_module_lengths_checked) {
    unsigned char buf[BUFCAP];
    cmsg_hdr h = sample_hdr(0);
    cmsg m;
    size_t n = cmsg_build_publish(buf, sizeof buf, &h, 0, "ch", 2, "msg", 3);
    set32(buf + 2256, 3); /* channel one longer */
    cr_assert_eq(cmsg_parse(buf, n, &m), -1);
    set32(buf + 2256, 0x80000000u); /* the two lengths sum to 2^32 + 5: no wrap */
    set32(buf + 2260, 0x80000005u);
    cr_assert_eq(cmsg_parse(buf, n, &m), -1);
    set32(buf + 2256, 0);
    set32(buf + 2260, 5);
    cr_assert_eq(cmsg_parse(buf, n, &m), 0); /* the same bytes read as one message */
    cr_assert_eq(m.u.publish.channel.len, 0);
    /* a PUBLISH too short to hold its lengths */
    n = cmsg_build_bare(buf, sizeof buf, &h, CMSG_MFSTART);
    buf[13] = CMSG_PUBLISH;
    cr_assert_eq(cmsg_parse(buf, n, &m), -1);
    buf[13] = CMSG_MODULE;
    cr_assert_eq(cmsg_parse(buf, n, &m), -1);
    n = cmsg_build_module(buf, sizeof buf, &h, 1, 2, "xyz", 3);
    set32(buf + 2256 + 8, 0xFFFFFFFFu);
    cr_assert_eq(cmsg_parse(buf, n, &m), -1);
    /* FAIL and UPDATE of the wrong size */
    n = cmsg_build_fail(buf, sizeof buf, &h, NAME_X);
    buf[13] = CMSG_UPDATE;
    cr_assert_eq(cmsg_parse(buf, n, &m), -1);
    buf[13] = CMSG_FAILOVER_AUTH_ACK;
    cr_assert_eq(cmsg_parse(buf, n, &m), -1);
}

Test(cluster_msg, unknown_type_accepted_as_redis_does) {
    unsigned char buf[BUFCAP];
    cmsg_hdr h = sample_hdr(0);
    cmsg m;
    size_t n = cmsg_build_fail(buf, sizeof buf, &h, NAME_X);
    buf[13] = 42;
    cr_assert_eq(cmsg_parse(buf, n, &m), 0);
    cr_assert_eq(m.h.type, 42);
    cr_assert_str_eq(cmsg_type_name(m.h.type), "unknown");
    cmsg_gossip g;
    cr_assert_eq(cmsg_gossip_at(&m, 0, &g), -1);
    cmsg_ext_iter it;
    cmsg_ext e;
    cmsg_ext_begin(&m, &it);
    cr_assert_eq(cmsg_ext_next(&it, &e), 0);
}

Test(cluster_msg, builders_refuse_what_does_not_fit) {
    unsigned char buf[BUFCAP];
    cmsg_hdr h = sample_hdr(CMSG_PING);
    cmsg_writer w;
    cmsg_writer_init(&w, buf, CMSG_HDR_LEN - 1);
    cr_assert_eq(cmsg_begin_ping(&w, &h), -1);
    cr_assert_eq(cmsg_finish(&w), 0);

    cmsg_writer_init(&w, buf, CMSG_HDR_LEN + 103); /* no room for an entry */
    cr_assert_eq(cmsg_begin_ping(&w, &h), 0);
    cmsg_gossip g = sample_gossip(NAME_B, 1);
    cr_assert_eq(cmsg_add_gossip(&w, &g), -1);
    cr_assert_eq(cmsg_finish(&w), 0);

    cmsg_writer_init(&w, buf, sizeof buf); /* gossip after an extension */
    cr_assert_eq(cmsg_begin_ping(&w, &h), 0);
    cr_assert_eq(cmsg_add_ext_hostname(&w, "x", 1), 0);
    cr_assert_eq(cmsg_add_gossip(&w, &g), -1);
    cr_assert_eq(cmsg_finish(&w), 0);

    cmsg_writer_init(&w, buf, sizeof buf);
    cr_assert_eq(cmsg_begin_ping(&w, &h), 0);
    cr_assert_eq(cmsg_add_ext_hostname(&w, "a\0b", 3), -1); /* a NUL inside */
    cmsg_writer_init(&w, buf, sizeof buf);
    g.ip_len = CMSG_IPLEN; /* no room for the NUL */
    cr_assert_eq(cmsg_begin_ping(&w, &h), 0);
    cr_assert_eq(cmsg_add_gossip(&w, &g), -1);

    h.type = CMSG_FAIL;
    cmsg_writer_init(&w, buf, sizeof buf);
    cr_assert_eq(cmsg_begin_ping(&w, &h), -1);
    h.myip_len = CMSG_IPLEN;
    cr_assert_eq(cmsg_build_fail(buf, sizeof buf, &h, NAME_X), 0);
    h.myip_len = 0;
    cr_assert_eq(cmsg_build_fail(buf, CMSG_FAIL_LEN - 1, &h, NAME_X), 0);
    cr_assert_eq(cmsg_build_publish(buf, 2256 + 8 + 4, &h, 0, "ab", 2, "abc", 3), 0);
    cr_assert_eq(cmsg_build_module(buf, 2256 + 13, &h, 1, 1, "a", 1), 0);
    cr_assert_eq(cmsg_build_update(buf, CMSG_UPDATE_LEN - 1, &h, 1, NAME_A, slots_fixture), 0);
}

Test(cluster_msg, empty_myip_and_master_slaveof_are_zeros) {
    unsigned char buf[BUFCAP];
    cmsg_hdr h = sample_hdr(CMSG_PING);
    h.slaveof = NULL;
    h.myslots = NULL;
    h.myip = NULL;
    h.myip_len = 0;
    cmsg_writer w;
    cmsg_writer_init(&w, buf, sizeof buf);
    cr_assert_eq(cmsg_begin_ping(&w, &h), 0);
    size_t n = cmsg_finish(&w);
    cr_assert_eq(n, CMSG_HDR_LEN);
    for (size_t i = CMSG_OFF_MYSLOTS; i < CMSG_OFF_EXTENSIONS; i++) cr_assert_eq(buf[i], 0, "byte %zu", i);
    cmsg m;
    cr_assert_eq(cmsg_parse(buf, n, &m), 0);
    cr_assert(cmsg_name_is_null(m.h.slaveof));
    cr_assert_eq(m.h.myip_len, 0);
    cr_assert_eq(m.h.count, 0);
    cr_assert_eq(m.u.ping.n_ext, 0);
}

Test(cluster_msg, myip_without_nul_reads_45_bytes) {
    unsigned char buf[BUFCAP];
    cmsg_hdr h = sample_hdr(CMSG_MFSTART);
    size_t n = cmsg_build_bare(buf, sizeof buf, &h, CMSG_MFSTART);
    memset(buf + CMSG_OFF_MYIP, 'a', CMSG_IPLEN);
    cmsg m;
    cr_assert_eq(cmsg_parse(buf, n, &m), 0);
    cr_assert_eq(m.h.myip_len, CMSG_IP_MAX);
}

Test(cluster_msg, slot_bits_and_names) {
    unsigned char s[CMSG_SLOT_BYTES] = {0};
    cmsg_slot_set(s, 9);
    cr_assert_eq(s[1], 0x02);
    cr_assert(cmsg_slot_test(s, 9));
    cr_assert_not(cmsg_slot_test(s, 8));
    cr_assert_not(cmsg_slot_test(s, CMSG_SLOTS)); /* out of range: not set, not touched */
    cmsg_slot_set(s, CMSG_SLOTS);
    cmsg_slot_clear(s, 9);
    cr_assert_eq(s[1], 0);
    cr_assert_str_eq(cmsg_type_name(CMSG_PING), "ping");
    cr_assert_str_eq(cmsg_type_name(CMSG_FAILOVER_AUTH_REQUEST), "auth-req");
    cr_assert_str_eq(cmsg_type_name(CMSG_FAILOVER_AUTH_ACK), "auth-ack");
    cr_assert_str_eq(cmsg_type_name(CMSG_PUBLISHSHARD), "publishshard");
    cr_assert_str_eq(cmsg_type_name(-1), "unknown");
    cr_assert_str_eq(cmsg_type_name(CMSG_TYPE_COUNT), "unknown");
    cr_assert_not(cmsg_name_is_null(NAME_A));
}
