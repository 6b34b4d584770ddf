/* cluster_msg.c - the cluster bus message codec (include/cluster_msg.h):
 * framing, parsing into a view and building, byte-compatible with
 * redis-server 7.0.15. The bus is an unauthenticated network port, so every
 * length is checked before it is used, in 64-bit arithmetic (no wrap), and
 * no pointer leaves the buffer. Pure functions over (buf, len): no
 * allocation, no globals. */
#include "cluster_msg.h"

#include <string.h>

/* ---- big-endian fields ---- */

static uint16_t get16(const unsigned char *p) { return (uint16_t)((unsigned)p[0] << 8 | p[1]); }

static uint32_t get32(const unsigned char *p) {
    return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

static uint64_t get64(const unsigned char *p) { return (uint64_t)get32(p) << 32 | get32(p + 4); }

static void put16(unsigned char *p, uint16_t v) {
    p[0] = (unsigned char)(v >> 8);
    p[1] = (unsigned char)v;
}

static void put32(unsigned char *p, uint32_t v) {
    put16(p, (uint16_t)(v >> 16));
    put16(p + 2, (uint16_t)v);
}

static void put64(unsigned char *p, uint64_t v) {
    put32(p, (uint32_t)(v >> 32));
    put32(p + 4, (uint32_t)v);
}

/* A NUL-padded text field of cap bytes, read as the receiver does: its last
 * byte counts as a NUL. */
static size_t field_len(const unsigned char *p, size_t cap) {
    size_t n = 0;
    while (n < cap - 1 && p[n]) n++;
    return n;
}

static size_t align8(size_t n) { return (n + (CMSG_EXT_ALIGN - 1)) / CMSG_EXT_ALIGN * CMSG_EXT_ALIGN; }

/* ---- framing ---- */

long cmsg_frame(const unsigned char *buf, size_t len, uint32_t max_totlen) {
    if (len < CMSG_FRAME_MIN) return -2;
    if (memcmp(buf + CMSG_OFF_SIG, CMSG_SIG, 4) != 0) return -1;
    uint32_t totlen = get32(buf + CMSG_OFF_TOTLEN);
    if (totlen < CMSG_HDR_LEN || totlen > max_totlen) return -1;
    return (long)totlen;
}

/* ---- parsing ---- */

static void parse_header(const unsigned char *b, cmsg_hdr *h) {
    h->totlen = get32(b + CMSG_OFF_TOTLEN);
    h->ver = get16(b + CMSG_OFF_VER);
    h->port = get16(b + CMSG_OFF_PORT);
    h->type = get16(b + CMSG_OFF_TYPE);
    h->count = get16(b + CMSG_OFF_COUNT);
    h->current_epoch = get64(b + CMSG_OFF_CURRENT_EPOCH);
    h->config_epoch = get64(b + CMSG_OFF_CONFIG_EPOCH);
    h->offset = get64(b + CMSG_OFF_OFFSET);
    h->sender = (const char *)b + CMSG_OFF_SENDER;
    h->myslots = b + CMSG_OFF_MYSLOTS;
    h->slaveof = (const char *)b + CMSG_OFF_SLAVEOF;
    h->myip = (const char *)b + CMSG_OFF_MYIP;
    h->myip_len = field_len(b + CMSG_OFF_MYIP, CMSG_IPLEN);
    h->extensions = get16(b + CMSG_OFF_EXTENSIONS);
    h->pport = get16(b + CMSG_OFF_PPORT);
    h->cport = get16(b + CMSG_OFF_CPORT);
    h->flags = get16(b + CMSG_OFF_FLAGS);
    h->state = b[CMSG_OFF_STATE];
    memcpy(h->mflags, b + CMSG_OFF_MFLAGS, 3);
}

static int refuse(cmsg *m, const char *why) {
    m->err = why;
    return -1;
}

/* One extension at p with `left` bytes after it in the message: its length
 * if sound, else 0 with *why. */
static uint32_t ext_check(const unsigned char *p, size_t left, const char **why) {
    if (left < CMSG_EXT_HDR_LEN) {
        *why = "extension data exceeds total packet length";
        return 0;
    }
    uint32_t len = get32(p);
    if (len % CMSG_EXT_ALIGN != 0 || len < CMSG_EXT_HDR_LEN) {
        *why = "extension without proper padding";
        return 0;
    }
    if (len > left) {
        *why = "extension data exceeds total packet length";
        return 0;
    }
    if (get16(p + 4) == CMSG_EXT_HOSTNAME && (len == CMSG_EXT_HDR_LEN || p[len - 1] != '\0')) {
        *why = "extension with missing null terminator";
        return 0;
    }
    return len;
}

static int parse_ping(const unsigned char *b, size_t len, cmsg *m) {
    uint64_t explen = CMSG_HDR_LEN + (uint64_t)m->h.count * CMSG_GOSSIP_LEN;
    if (explen > len) return refuse(m, "gossip count exceeds total packet length");
    m->u.ping.gossip = b + CMSG_OFF_DATA;
    m->u.ping.ext = b + explen;
    m->u.ping.ext_len = 0;
    m->u.ping.n_ext = 0;
    m->u.ping.hostname.p = NULL;
    m->u.ping.hostname.len = 0;
    if (m->h.mflags[0] & CMSG_MF0_EXT_DATA) {
        for (unsigned i = 0; i < m->h.extensions; i++) {
            const char *why = NULL;
            uint32_t el = ext_check(b + explen, len - explen, &why);
            if (!el) return refuse(m, why);
            if (get16(b + explen + 4) == CMSG_EXT_HOSTNAME) {
                m->u.ping.hostname.p = (const char *)b + explen + CMSG_EXT_HDR_LEN;
                m->u.ping.hostname.len = strlen(m->u.ping.hostname.p); /* NUL checked above */
            }
            explen += el;
        }
        m->u.ping.ext_len = (size_t)(explen - (CMSG_HDR_LEN + (uint64_t)m->h.count * CMSG_GOSSIP_LEN));
        m->u.ping.n_ext = m->h.extensions;
    }
    if (explen != len) return refuse(m, "packet length differs from the expected length");
    return 0;
}

/* The expected totlen of a non-ping type, 0 when the data's own lengths
 * cannot be read (too short) - wide, so no sum wraps. */
static uint64_t fixed_explen(const unsigned char *b, size_t len, uint16_t type) {
    switch (type) {
    case CMSG_FAIL: return CMSG_FAIL_LEN;
    case CMSG_UPDATE: return CMSG_UPDATE_LEN;
    case CMSG_FAILOVER_AUTH_REQUEST:
    case CMSG_FAILOVER_AUTH_ACK:
    case CMSG_MFSTART: return CMSG_HDR_LEN;
    case CMSG_PUBLISH:
    case CMSG_PUBLISHSHARD:
        if (len < CMSG_HDR_LEN + CMSG_PUBLISH_FIXED) return 0;
        return (uint64_t)CMSG_HDR_LEN + CMSG_PUBLISH_FIXED + get32(b + CMSG_OFF_DATA) + get32(b + CMSG_OFF_DATA + 4);
    case CMSG_MODULE:
        if (len < CMSG_HDR_LEN + CMSG_MODULE_FIXED) return 0;
        return (uint64_t)CMSG_HDR_LEN + CMSG_MODULE_FIXED + get32(b + CMSG_OFF_DATA + 8);
    default: return len; /* unknown: taken as well formed, as Redis does */
    }
}

static void parse_data(const unsigned char *b, cmsg *m) {
    const unsigned char *d = b + CMSG_OFF_DATA;
    switch (m->h.type) {
    case CMSG_FAIL: m->u.fail.nodename = (const char *)d; break;
    case CMSG_UPDATE:
        m->u.update.config_epoch = get64(d);
        m->u.update.nodename = (const char *)d + 8;
        m->u.update.slots = d + 8 + CMSG_NAMELEN;
        break;
    case CMSG_PUBLISH:
    case CMSG_PUBLISHSHARD:
        m->u.publish.channel.p = (const char *)d + CMSG_PUBLISH_FIXED;
        m->u.publish.channel.len = get32(d);
        m->u.publish.message.p = m->u.publish.channel.p + m->u.publish.channel.len;
        m->u.publish.message.len = get32(d + 4);
        break;
    case CMSG_MODULE:
        m->u.module.module_id = get64(d);
        m->u.module.type = d[12];
        m->u.module.payload.p = (const char *)d + CMSG_MODULE_FIXED;
        m->u.module.payload.len = get32(d + 8);
        break;
    default: break;
    }
}

int cmsg_parse(const unsigned char *buf, size_t len, cmsg *out) {
    memset(out, 0, sizeof *out);
    if (len < CMSG_HDR_LEN) return refuse(out, "message shorter than the header");
    if (memcmp(buf + CMSG_OFF_SIG, CMSG_SIG, 4) != 0) return refuse(out, "bad signature");
    parse_header(buf, &out->h);
    if (out->h.totlen != len) return refuse(out, "totlen differs from the message length");
    if (out->h.ver != CMSG_VERSION) return refuse(out, "unsupported protocol version");
    uint16_t t = out->h.type;
    if (t == CMSG_PING || t == CMSG_PONG || t == CMSG_MEET) return parse_ping(buf, len, out);
    uint64_t explen = fixed_explen(buf, len, t);
    if (explen != len) return refuse(out, "packet length differs from the expected length");
    parse_data(buf, out);
    return 0;
}

static int is_ping(const cmsg *m) {
    return m->h.type == CMSG_PING || m->h.type == CMSG_PONG || m->h.type == CMSG_MEET;
}

int cmsg_gossip_at(const cmsg *m, unsigned i, cmsg_gossip *g) {
    if (!is_ping(m) || i >= m->h.count || !m->u.ping.gossip) return -1;
    const unsigned char *p = m->u.ping.gossip + (size_t)i * CMSG_GOSSIP_LEN;
    g->nodename = (const char *)p + CMSG_GOFF_NODENAME;
    g->ping_sent = get32(p + CMSG_GOFF_PING_SENT);
    g->pong_received = get32(p + CMSG_GOFF_PONG_RECEIVED);
    g->ip = (const char *)p + CMSG_GOFF_IP;
    g->ip_len = field_len(p + CMSG_GOFF_IP, CMSG_IPLEN);
    g->port = get16(p + CMSG_GOFF_PORT);
    g->cport = get16(p + CMSG_GOFF_CPORT);
    g->flags = get16(p + CMSG_GOFF_FLAGS);
    g->pport = get16(p + CMSG_GOFF_PPORT);
    return 0;
}

void cmsg_ext_begin(const cmsg *m, cmsg_ext_iter *it) {
    int ok = is_ping(m) && m->u.ping.ext;
    it->p = ok ? m->u.ping.ext : NULL;
    it->left = ok ? m->u.ping.ext_len : 0;
    it->remaining = ok ? m->u.ping.n_ext : 0;
}

int cmsg_ext_next(cmsg_ext_iter *it, cmsg_ext *e) {
    if (it->remaining == 0) return 0;
    const char *why = NULL;
    uint32_t len = ext_check(it->p, it->left, &why);
    if (!len) return -1;
    e->type = get16(it->p + 4);
    e->len = len;
    e->data = it->p + CMSG_EXT_HDR_LEN;
    e->data_len = len - CMSG_EXT_HDR_LEN;
    it->p += len;
    it->left -= len;
    it->remaining--;
    return 1;
}

/* ---- sizes ---- */

static size_t fit32(uint64_t n) { return n > CMSG_MAX_TOTLEN ? 0 : (size_t)n; }

size_t cmsg_size_ping(unsigned count, size_t ext_bytes) {
    if (count > UINT16_MAX || ext_bytes > CMSG_MAX_TOTLEN) return 0;
    return fit32(CMSG_HDR_LEN + (uint64_t)count * CMSG_GOSSIP_LEN + ext_bytes);
}

size_t cmsg_size_ext(size_t data_len) {
    if (data_len > CMSG_MAX_TOTLEN) return 0;
    return fit32(CMSG_EXT_HDR_LEN + (uint64_t)align8(data_len));
}

size_t cmsg_size_ext_hostname(size_t hostname_len) {
    return hostname_len >= CMSG_MAX_TOTLEN ? 0 : cmsg_size_ext(hostname_len + 1);
}

size_t cmsg_size_publish(size_t channel_len, size_t message_len) {
    if (channel_len > CMSG_MAX_TOTLEN || message_len > CMSG_MAX_TOTLEN) return 0;
    return fit32((uint64_t)CMSG_HDR_LEN + CMSG_PUBLISH_FIXED + channel_len + message_len);
}

size_t cmsg_size_module(size_t payload_len) {
    if (payload_len > CMSG_MAX_TOTLEN) return 0;
    return fit32((uint64_t)CMSG_HDR_LEN + CMSG_MODULE_FIXED + payload_len);
}

/* ---- building ---- */

/* The header of a message of `type` and totlen into b (cap >= CMSG_HDR_LEN);
 * count and extensions are left 0. 0, or -1 for an address too long. */
static int put_header(unsigned char *b, const cmsg_hdr *h, uint16_t type, uint32_t totlen) {
    if (h->myip_len > CMSG_IP_MAX) return -1;
    memset(b, 0, CMSG_HDR_LEN);
    memcpy(b + CMSG_OFF_SIG, CMSG_SIG, 4);
    put32(b + CMSG_OFF_TOTLEN, totlen);
    put16(b + CMSG_OFF_VER, CMSG_VERSION);
    put16(b + CMSG_OFF_PORT, h->port);
    put16(b + CMSG_OFF_TYPE, type);
    put64(b + CMSG_OFF_CURRENT_EPOCH, h->current_epoch);
    put64(b + CMSG_OFF_CONFIG_EPOCH, h->config_epoch);
    put64(b + CMSG_OFF_OFFSET, h->offset);
    memcpy(b + CMSG_OFF_SENDER, h->sender, CMSG_NAMELEN);
    if (h->myslots) memcpy(b + CMSG_OFF_MYSLOTS, h->myslots, CMSG_SLOT_BYTES);
    if (h->slaveof) memcpy(b + CMSG_OFF_SLAVEOF, h->slaveof, CMSG_NAMELEN);
    if (h->myip_len) memcpy(b + CMSG_OFF_MYIP, h->myip, h->myip_len);
    put16(b + CMSG_OFF_PPORT, h->pport);
    put16(b + CMSG_OFF_CPORT, h->cport);
    put16(b + CMSG_OFF_FLAGS, h->flags);
    b[CMSG_OFF_STATE] = h->state;
    memcpy(b + CMSG_OFF_MFLAGS, h->mflags, 3);
    return 0;
}

void cmsg_writer_init(cmsg_writer *w, unsigned char *buf, size_t cap) {
    w->buf = buf;
    w->cap = cap;
    w->len = 0;
    w->count = 0;
    w->extensions = 0;
    w->failed = 0;
}

static int fail(cmsg_writer *w) {
    w->failed = 1;
    return -1;
}

int cmsg_begin_ping(cmsg_writer *w, const cmsg_hdr *h) {
    if (w->failed || w->len != 0 || w->cap < CMSG_HDR_LEN) return fail(w);
    if (h->type != CMSG_PING && h->type != CMSG_PONG && h->type != CMSG_MEET) return fail(w);
    if (put_header(w->buf, h, h->type, 0) != 0) return fail(w);
    w->len = CMSG_HDR_LEN;
    return 0;
}

int cmsg_add_gossip(cmsg_writer *w, const cmsg_gossip *g) {
    if (w->failed || w->len < CMSG_HDR_LEN || w->extensions || w->count >= UINT16_MAX) return fail(w);
    if (g->ip_len > CMSG_IP_MAX || w->cap - w->len < CMSG_GOSSIP_LEN) return fail(w);
    unsigned char *p = w->buf + w->len;
    memset(p, 0, CMSG_GOSSIP_LEN);
    memcpy(p + CMSG_GOFF_NODENAME, g->nodename, CMSG_NAMELEN);
    put32(p + CMSG_GOFF_PING_SENT, g->ping_sent);
    put32(p + CMSG_GOFF_PONG_RECEIVED, g->pong_received);
    if (g->ip_len) memcpy(p + CMSG_GOFF_IP, g->ip, g->ip_len);
    put16(p + CMSG_GOFF_PORT, g->port);
    put16(p + CMSG_GOFF_CPORT, g->cport);
    put16(p + CMSG_GOFF_FLAGS, g->flags);
    put16(p + CMSG_GOFF_PPORT, g->pport);
    w->len += CMSG_GOSSIP_LEN;
    w->count++;
    return 0;
}

/* Room for an extension of `total` bytes; the data is written by the caller. */
static unsigned char *ext_open(cmsg_writer *w, uint16_t type, size_t total) {
    if (w->failed || w->len < CMSG_HDR_LEN || w->extensions >= UINT16_MAX) return NULL;
    if (total == 0 || total > w->cap - w->len || total > CMSG_MAX_TOTLEN - w->len) return NULL;
    unsigned char *p = w->buf + w->len;
    memset(p, 0, total);
    put32(p, (uint32_t)total);
    put16(p + 4, type);
    w->buf[CMSG_OFF_MFLAGS] |= CMSG_MF0_EXT_DATA;
    w->len += total;
    w->extensions++;
    return p + CMSG_EXT_HDR_LEN;
}

int cmsg_add_ext(cmsg_writer *w, uint16_t type, const void *data, size_t data_len) {
    unsigned char *d = ext_open(w, type, cmsg_size_ext(data_len));
    if (!d) return fail(w);
    if (data_len) memcpy(d, data, data_len);
    return 0;
}

int cmsg_add_ext_hostname(cmsg_writer *w, const char *hostname, size_t len) {
    if (memchr(hostname, '\0', len)) return fail(w);
    unsigned char *d = ext_open(w, CMSG_EXT_HOSTNAME, cmsg_size_ext_hostname(len));
    if (!d) return fail(w);
    memcpy(d, hostname, len); /* the NUL and padding are the zeroed rest */
    return 0;
}

size_t cmsg_finish(cmsg_writer *w) {
    if (w->failed || w->len < CMSG_HDR_LEN || w->len > CMSG_MAX_TOTLEN) return 0;
    put32(w->buf + CMSG_OFF_TOTLEN, (uint32_t)w->len);
    put16(w->buf + CMSG_OFF_COUNT, (uint16_t)w->count);
    put16(w->buf + CMSG_OFF_EXTENSIONS, (uint16_t)w->extensions);
    return w->len;
}

/* The header of a non-ping message of total length n into buf: 0 if cap is
 * short or the header refused. */
static size_t begin_fixed(unsigned char *buf, size_t cap, const cmsg_hdr *h, uint16_t type, size_t n) {
    if (n == 0 || cap < n) return 0;
    if (put_header(buf, h, type, (uint32_t)n) != 0) return 0;
    return n;
}

size_t cmsg_build_fail(unsigned char *buf, size_t cap, const cmsg_hdr *h, const char *nodename) {
    size_t n = begin_fixed(buf, cap, h, CMSG_FAIL, CMSG_FAIL_LEN);
    if (n) memcpy(buf + CMSG_OFF_DATA, nodename, CMSG_NAMELEN);
    return n;
}

size_t cmsg_build_update(unsigned char *buf, size_t cap, const cmsg_hdr *h, uint64_t config_epoch,
                         const char *nodename, const unsigned char *slots) {
    size_t n = begin_fixed(buf, cap, h, CMSG_UPDATE, CMSG_UPDATE_LEN);
    if (!n) return 0;
    put64(buf + CMSG_OFF_DATA, config_epoch);
    memcpy(buf + CMSG_OFF_DATA + 8, nodename, CMSG_NAMELEN);
    memcpy(buf + CMSG_OFF_DATA + 8 + CMSG_NAMELEN, slots, CMSG_SLOT_BYTES);
    return n;
}

size_t cmsg_build_publish(unsigned char *buf, size_t cap, const cmsg_hdr *h, int shard, const char *channel,
                          size_t channel_len, const char *message, size_t message_len) {
    uint16_t type = shard ? CMSG_PUBLISHSHARD : CMSG_PUBLISH;
    size_t n = begin_fixed(buf, cap, h, type, cmsg_size_publish(channel_len, message_len));
    if (!n) return 0;
    unsigned char *d = buf + CMSG_OFF_DATA;
    put32(d, (uint32_t)channel_len);
    put32(d + 4, (uint32_t)message_len);
    if (channel_len) memcpy(d + CMSG_PUBLISH_FIXED, channel, channel_len);
    if (message_len) memcpy(d + CMSG_PUBLISH_FIXED + channel_len, message, message_len);
    return n;
}

size_t cmsg_build_module(unsigned char *buf, size_t cap, const cmsg_hdr *h, uint64_t module_id, uint8_t type,
                         const void *payload, size_t len) {
    size_t n = begin_fixed(buf, cap, h, CMSG_MODULE, cmsg_size_module(len));
    if (!n) return 0;
    unsigned char *d = buf + CMSG_OFF_DATA;
    put64(d, module_id);
    put32(d + 8, (uint32_t)len);
    d[12] = type;
    if (len) memcpy(d + CMSG_MODULE_FIXED, payload, len);
    return n;
}

size_t cmsg_build_bare(unsigned char *buf, size_t cap, const cmsg_hdr *h, uint16_t type) {
    if (type != CMSG_FAILOVER_AUTH_REQUEST && type != CMSG_FAILOVER_AUTH_ACK && type != CMSG_MFSTART) return 0;
    return begin_fixed(buf, cap, h, type, CMSG_HDR_LEN);
}

/* ---- small helpers ---- */

int cmsg_slot_test(const unsigned char *slots, unsigned slot) {
    return slot < CMSG_SLOTS && (slots[slot >> 3] >> (slot & 7) & 1);
}

void cmsg_slot_set(unsigned char *slots, unsigned slot) {
    if (slot < CMSG_SLOTS) slots[slot >> 3] |= (unsigned char)(1u << (slot & 7));
}

void cmsg_slot_clear(unsigned char *slots, unsigned slot) {
    if (slot < CMSG_SLOTS) slots[slot >> 3] &= (unsigned char)~(1u << (slot & 7));
}

int cmsg_name_is_null(const char *name) {
    for (int i = 0; i < CMSG_NAMELEN; i++)
        if (name[i]) return 0;
    return 1;
}

const char *cmsg_type_name(int type) {
    static const char *const names[CMSG_TYPE_COUNT] = {
        "ping", "pong", "meet", "fail", "publish", "auth-req", "auth-ack", "update", "mfstart", "module", "publishshard",
    };
    return type >= 0 && type < CMSG_TYPE_COUNT ? names[type] : "unknown";
}
