/* fuzz_cluster_msg.c - libFuzzer target for the cluster bus message codec
 * (src/cluster/cluster_msg.c).
 *
 * Why: the bus port is open to the network and unauthenticated; a message
 * whose totlen, gossip count, extension lengths or publish/module lengths
 * disagree must be refused, never read past. Every input is copied into an
 * exact-size heap block so ASan flags any overread.
 * Checks:
 *  - the input as a message: frame (-2 below 8 bytes; else -1 or a totlen
 *    >= the header), parse, and when it parses every gossip entry and every
 *    extension is walked and lies inside the message, and the extensions
 *    tile the extension area exactly;
 *  - the input with a valid signature and totlen patched in, so parse gets
 *    past the outer checks and reaches the per-type lengths;
 *  - build -> parse of fields taken from the input (a PING/PONG/MEET with
 *    gossip and extensions, and each other type) gives back those fields.
 *
 * Build: make build/fuzz/fuzz_cluster_msg
 * Run:   build/fuzz/fuzz_cluster_msg -max_total_time=30 DIR (a scratch copy of
 *        fuzz/corpus/cluster_msg)
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "cluster_msg.h"
#include "fuzz_check.h"

#define MAX_BUILD 16384

static int inside(const void *p, size_t n, const unsigned char *buf, size_t len) {
    const unsigned char *q = p;
    return q >= buf && n <= len && q - buf <= (ptrdiff_t)(len - n);
}

static void walk(const unsigned char *buf, size_t len) {
    cmsg m;
    if (cmsg_parse(buf, len, &m) != 0) {
        CHECK(m.err != NULL);
        return;
    }
    CHECK(m.h.totlen == len && len >= CMSG_HDR_LEN && m.h.ver == CMSG_VERSION);
    CHECK(m.h.myip_len <= CMSG_IP_MAX);
    int ping = m.h.type <= CMSG_MEET;
    unsigned entries = ping ? m.h.count : 0; /* other types carry no gossip, whatever count says */
    cmsg_gossip g;
    for (unsigned i = 0; i < entries; i++) {
        CHECK(cmsg_gossip_at(&m, i, &g) == 0);
        CHECK(inside(g.nodename, CMSG_GOSSIP_LEN, buf, len) && g.ip_len <= CMSG_IP_MAX);
    }
    CHECK(cmsg_gossip_at(&m, entries, &g) == -1);
    cmsg_ext_iter it;
    cmsg_ext e;
    size_t sum = 0;
    unsigned n = 0;
    int r;
    cmsg_ext_begin(&m, &it);
    while ((r = cmsg_ext_next(&it, &e)) == 1) {
        CHECK(e.len % 8 == 0 && e.len >= CMSG_EXT_HDR_LEN && inside(e.data, e.data_len, buf, len));
        if (e.type == CMSG_EXT_HOSTNAME) CHECK(e.data_len > 0 && e.data[e.data_len - 1] == 0);
        sum += e.len;
        n++;
    }
    CHECK(r == 0);
    if (ping) {
        CHECK(n == m.u.ping.n_ext && sum == m.u.ping.ext_len);
        CHECK(CMSG_HDR_LEN + (size_t)m.h.count * CMSG_GOSSIP_LEN + sum == len);
    }
    if (m.h.type == CMSG_PUBLISH || m.h.type == CMSG_PUBLISHSHARD) {
        CHECK(inside(m.u.publish.channel.p, m.u.publish.channel.len, buf, len));
        CHECK(inside(m.u.publish.message.p, m.u.publish.message.len, buf, len));
    }
    if (m.h.type == CMSG_MODULE) CHECK(inside(m.u.module.payload.p, m.u.module.payload.len, buf, len));
}

static void check_as_message(const uint8_t *data, size_t size) {
    unsigned char *p = malloc(size ? size : 1);
    memcpy(p, data, size);
    long f = cmsg_frame(p, size, CMSG_MAX_TOTLEN);
    if (size < CMSG_FRAME_MIN) CHECK(f == -2);
    else CHECK(f == -1 || f >= CMSG_HDR_LEN);
    walk(p, size);
    free(p);
    if (size < 16) return;
    /* the same bytes, made to pass the outer checks */
    size_t n = size < CMSG_HDR_LEN ? CMSG_HDR_LEN : size;
    unsigned char *q = calloc(n, 1);
    memcpy(q, data, size);
    memcpy(q, CMSG_SIG, 4);
    q[4] = (unsigned char)(n >> 24), q[5] = (unsigned char)(n >> 16), q[6] = (unsigned char)(n >> 8), q[7] = (unsigned char)n;
    q[8] = 0, q[9] = CMSG_VERSION;
    q[12] = 0, q[13] %= CMSG_TYPE_COUNT + 1;
    CHECK(cmsg_frame(q, n, CMSG_MAX_TOTLEN) == (long)n);
    walk(q, n);
    free(q);
}

/* Fields for building, drawn from the input. */
typedef struct src {
    const uint8_t *p;
    size_t n, i;
} src;

static uint8_t byte(src *s) { return s->i < s->n ? s->p[s->i++] : 0; }
static uint64_t num(src *s, int bytes) {
    uint64_t v = 0;
    for (int i = 0; i < bytes; i++) v = v << 8 | byte(s);
    return v;
}
static const uint8_t *take(src *s, size_t want, size_t *got) {
    *got = s->n - s->i < want ? s->n - s->i : want;
    const uint8_t *p = s->p + s->i;
    s->i += *got;
    return p;
}

static void fill_hdr(src *s, cmsg_hdr *h, char *names, unsigned char *slots) {
    memset(h, 0, sizeof *h);
    for (int i = 0; i < 2 * CMSG_NAMELEN; i++) names[i] = (char)byte(s);
    for (int i = 0; i < 8; i++) cmsg_slot_set(slots, (unsigned)num(s, 2) % CMSG_SLOTS);
    h->port = (uint16_t)num(s, 2), h->pport = (uint16_t)num(s, 2), h->cport = (uint16_t)num(s, 2);
    h->flags = (uint16_t)num(s, 2);
    h->current_epoch = num(s, 8), h->config_epoch = num(s, 8), h->offset = num(s, 8);
    h->sender = names;
    h->slaveof = byte(s) & 1 ? names + CMSG_NAMELEN : NULL;
    h->myslots = slots;
    h->myip = (const char *)take(s, byte(s) % (CMSG_IP_MAX + 1), &h->myip_len);
    if (memchr(h->myip, 0, h->myip_len)) h->myip_len = 0;
    h->state = byte(s), h->mflags[0] = byte(s), h->mflags[1] = byte(s), h->mflags[2] = byte(s);
}

static void check_hdr(const cmsg_hdr *a, const cmsg_hdr *b, uint16_t type) {
    CHECK(a->type == type && a->port == b->port && a->pport == b->pport && a->cport == b->cport);
    CHECK(a->flags == b->flags && a->state == b->state && a->mflags[1] == b->mflags[1] && a->mflags[2] == b->mflags[2]);
    CHECK(a->current_epoch == b->current_epoch && a->config_epoch == b->config_epoch && a->offset == b->offset);
    CHECK(memcmp(a->sender, b->sender, CMSG_NAMELEN) == 0);
    CHECK(memcmp(a->myslots, b->myslots, CMSG_SLOT_BYTES) == 0);
    CHECK(b->slaveof ? memcmp(a->slaveof, b->slaveof, CMSG_NAMELEN) == 0 : cmsg_name_is_null(a->slaveof));
    CHECK(a->myip_len == b->myip_len && memcmp(a->myip, b->myip, a->myip_len) == 0);
}

static void check_ping_build(src *s, unsigned char *buf, const cmsg_hdr *h0) {
    cmsg_hdr h = *h0;
    h.type = byte(s) % 3;
    cmsg_writer w;
    cmsg_writer_init(&w, buf, MAX_BUILD);
    CHECK(cmsg_begin_ping(&w, &h) == 0);
    unsigned ng = byte(s) % 8, ne = byte(s) % 5;
    cmsg_gossip g[8];
    for (unsigned i = 0; i < ng; i++) {
        g[i].nodename = h.sender;
        g[i].ping_sent = (uint32_t)num(s, 4), g[i].pong_received = (uint32_t)num(s, 4);
        g[i].ip = (const char *)take(s, byte(s) % (CMSG_IP_MAX + 1), &g[i].ip_len);
        if (memchr(g[i].ip, 0, g[i].ip_len)) g[i].ip_len = 0;
        g[i].port = (uint16_t)num(s, 2), g[i].cport = (uint16_t)num(s, 2);
        g[i].flags = (uint16_t)num(s, 2), g[i].pport = (uint16_t)num(s, 2);
        CHECK(cmsg_add_gossip(&w, &g[i]) == 0);
    }
    uint16_t types[5];
    size_t lens[5];
    const uint8_t *datas[5];
    size_t ext_bytes = 0;
    for (unsigned i = 0; i < ne; i++) {
        types[i] = (uint16_t)num(s, 1);
        datas[i] = take(s, byte(s) % 64, &lens[i]);
        if (types[i] == CMSG_EXT_HOSTNAME) {
            if (memchr(datas[i], 0, lens[i])) lens[i] = 0;
            CHECK(cmsg_add_ext_hostname(&w, (const char *)datas[i], lens[i]) == 0);
        } else
            CHECK(cmsg_add_ext(&w, types[i], datas[i], lens[i]) == 0);
        ext_bytes += types[i] == CMSG_EXT_HOSTNAME ? cmsg_size_ext_hostname(lens[i]) : cmsg_size_ext(lens[i]);
    }
    size_t n = cmsg_finish(&w);
    CHECK(n == cmsg_size_ping(ng, ext_bytes));
    cmsg m;
    CHECK(cmsg_parse(buf, n, &m) == 0);
    check_hdr(&m.h, &h, h.type);
    CHECK(m.h.count == ng && m.h.extensions == ne);
    CHECK(ne == 0 ? m.h.mflags[0] == h.mflags[0] : m.h.mflags[0] == (h.mflags[0] | CMSG_MF0_EXT_DATA));
    for (unsigned i = 0; i < ng; i++) {
        cmsg_gossip r;
        CHECK(cmsg_gossip_at(&m, i, &r) == 0);
        CHECK(r.ping_sent == g[i].ping_sent && r.pong_received == g[i].pong_received && r.port == g[i].port);
        CHECK(r.cport == g[i].cport && r.flags == g[i].flags && r.pport == g[i].pport);
        CHECK(r.ip_len == g[i].ip_len && memcmp(r.ip, g[i].ip, r.ip_len) == 0);
    }
    if (!(m.h.mflags[0] & CMSG_MF0_EXT_DATA)) return;
    cmsg_ext_iter it;
    cmsg_ext e;
    cmsg_ext_begin(&m, &it);
    for (unsigned i = 0; i < ne; i++) {
        CHECK(cmsg_ext_next(&it, &e) == 1);
        CHECK(e.type == types[i] && e.data_len >= lens[i] && memcmp(e.data, datas[i], lens[i]) == 0);
        size_t want = types[i] == CMSG_EXT_HOSTNAME ? cmsg_size_ext_hostname(lens[i]) : cmsg_size_ext(lens[i]);
        CHECK(e.len == want);
        for (size_t k = lens[i]; k < e.data_len; k++) CHECK(e.data[k] == 0); /* NUL and padding */
    }
    CHECK(cmsg_ext_next(&it, &e) == 0);
}

static void check_other_builds(src *s, unsigned char *buf, const cmsg_hdr *h) {
    cmsg m;
    size_t cl, ml;
    const char *ch = (const char *)take(s, byte(s), &cl), *msg = (const char *)take(s, byte(s), &ml);
    int shard = byte(s) & 1;
    size_t n = cmsg_build_publish(buf, MAX_BUILD, h, shard, ch, cl, msg, ml);
    CHECK(n == cmsg_size_publish(cl, ml) && cmsg_parse(buf, n, &m) == 0);
    check_hdr(&m.h, h, shard ? CMSG_PUBLISHSHARD : CMSG_PUBLISH);
    CHECK(m.u.publish.channel.len == cl && memcmp(m.u.publish.channel.p, ch, cl) == 0);
    CHECK(m.u.publish.message.len == ml && memcmp(m.u.publish.message.p, msg, ml) == 0);
    uint64_t id = num(s, 8);
    uint8_t mt = byte(s);
    n = cmsg_build_module(buf, MAX_BUILD, h, id, mt, ch, cl);
    CHECK(n == cmsg_size_module(cl) && cmsg_parse(buf, n, &m) == 0);
    check_hdr(&m.h, h, CMSG_MODULE);
    CHECK(m.u.module.module_id == id && m.u.module.type == mt && m.u.module.payload.len == cl);
    n = cmsg_build_fail(buf, MAX_BUILD, h, h->sender);
    CHECK(n == CMSG_FAIL_LEN && cmsg_parse(buf, n, &m) == 0);
    check_hdr(&m.h, h, CMSG_FAIL);
    CHECK(memcmp(m.u.fail.nodename, h->sender, CMSG_NAMELEN) == 0);
    uint64_t ce = num(s, 8);
    n = cmsg_build_update(buf, MAX_BUILD, h, ce, h->sender, h->myslots);
    CHECK(n == CMSG_UPDATE_LEN && cmsg_parse(buf, n, &m) == 0);
    check_hdr(&m.h, h, CMSG_UPDATE);
    CHECK(m.u.update.config_epoch == ce && memcmp(m.u.update.slots, h->myslots, CMSG_SLOT_BYTES) == 0);
    uint16_t bare = (const uint16_t[]){CMSG_FAILOVER_AUTH_REQUEST, CMSG_FAILOVER_AUTH_ACK, CMSG_MFSTART}[byte(s) % 3];
    n = cmsg_build_bare(buf, MAX_BUILD, h, bare);
    CHECK(n == CMSG_HDR_LEN && cmsg_parse(buf, n, &m) == 0);
    check_hdr(&m.h, h, bare);
}

static void check_builds(const uint8_t *data, size_t size) {
    src s = {data, size, 0};
    char names[2 * CMSG_NAMELEN];
    unsigned char slots[CMSG_SLOT_BYTES] = {0};
    cmsg_hdr h;
    fill_hdr(&s, &h, names, slots);
    unsigned char *buf = malloc(MAX_BUILD);
    check_ping_build(&s, buf, &h);
    check_other_builds(&s, buf, &h);
    free(buf);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    check_as_message(data, size);
    check_builds(data, size);
    return 0;
}
