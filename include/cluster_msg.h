/* cluster_msg.h - the binary messages Redis Cluster nodes exchange on the
 * cluster bus (the data port + 10000), as redis-server 7.0.15 writes and
 * checks them: a framer, a parser that yields a view into the caller's
 * buffer, and builders that write into a buffer the caller sized with the
 * cmsg_size_* helpers. Pure and allocation-free, so ferry nodes and
 * redis-server nodes can form one cluster and the codec can be fuzzed and
 * tested at every split point (src/cluster/cluster_msg.c,
 * fuzz/fuzz_cluster_msg.c, tests/unit/test_cluster_msg.c).
 *
 * Wire facts (all integers big-endian): a 2256-byte header, then per type:
 * PING/PONG/MEET: `count` 104-byte gossip entries, then, when mflags[0] has
 * CMSG_MF0_EXT_DATA, `extensions` ping extensions (8-byte header: uint32
 * length of the whole extension, a multiple of 8; uint16 type; uint16
 * unused); FAIL: a node name; PUBLISH/PUBLISHSHARD: uint32 channel_len,
 * uint32 message_len, the channel, the message; UPDATE: uint64 configEpoch,
 * a node name, a slot bitmap; MODULE: uint64 module id, uint32 len, uint8
 * type, the payload; FAILOVER_AUTH_REQUEST/ACK and MFSTART: nothing. A slot
 * bitmap has slot s in byte s/8 as bit (1 << (s & 7)). Node names are 40
 * bytes, not NUL-terminated; an all-zero name means "none" (a master's
 * slaveof). */
#ifndef FERRY_CLUSTER_MSG_H
#define FERRY_CLUSTER_MSG_H

#include <stddef.h>
#include <stdint.h>

#include "span.h"

#define CMSG_SIG "RCmb"
#define CMSG_VERSION 1
#define CMSG_NAMELEN 40           /* a node name: 40 hex characters */
#define CMSG_IPLEN 46             /* an address field (INET6_ADDRSTRLEN), NUL-padded */
#define CMSG_IP_MAX (CMSG_IPLEN - 1) /* the receiver forces the last byte to NUL */
#define CMSG_SLOTS 16384
#define CMSG_SLOT_BYTES (CMSG_SLOTS / 8)
#define CMSG_FRAME_MIN 8          /* sig + totlen: what the framer needs to see */
#define CMSG_HDR_LEN 2256         /* the header; also the smallest totlen accepted */
#define CMSG_GOSSIP_LEN 104
#define CMSG_EXT_HDR_LEN 8
#define CMSG_EXT_ALIGN 8
#define CMSG_FAIL_LEN (CMSG_HDR_LEN + CMSG_NAMELEN)
#define CMSG_UPDATE_DATA_LEN (8 + CMSG_NAMELEN + CMSG_SLOT_BYTES)
#define CMSG_UPDATE_LEN (CMSG_HDR_LEN + CMSG_UPDATE_DATA_LEN)
#define CMSG_PUBLISH_FIXED 8      /* channel_len + message_len before the bytes */
#define CMSG_MODULE_FIXED 13      /* module id + len + type before the payload */
#define CMSG_MAX_TOTLEN UINT32_MAX /* what the wire can say; Redis has no lower cap */

/* Byte offsets of the header's fields (Redis pins the same ones with
 * static asserts, so they stay put across versions). */
enum {
    CMSG_OFF_SIG = 0,
    CMSG_OFF_TOTLEN = 4,
    CMSG_OFF_VER = 8,
    CMSG_OFF_PORT = 10,
    CMSG_OFF_TYPE = 12,
    CMSG_OFF_COUNT = 14,
    CMSG_OFF_CURRENT_EPOCH = 16,
    CMSG_OFF_CONFIG_EPOCH = 24,
    CMSG_OFF_OFFSET = 32,
    CMSG_OFF_SENDER = 40,
    CMSG_OFF_MYSLOTS = 80,
    CMSG_OFF_SLAVEOF = 2128,
    CMSG_OFF_MYIP = 2168,
    CMSG_OFF_EXTENSIONS = 2214,
    CMSG_OFF_NOTUSED1 = 2216,
    CMSG_OFF_PPORT = 2246,
    CMSG_OFF_CPORT = 2248,
    CMSG_OFF_FLAGS = 2250,
    CMSG_OFF_STATE = 2252,
    CMSG_OFF_MFLAGS = 2253,
    CMSG_OFF_DATA = 2256,
};

/* Offsets inside one gossip entry. */
enum {
    CMSG_GOFF_NODENAME = 0,
    CMSG_GOFF_PING_SENT = 40,
    CMSG_GOFF_PONG_RECEIVED = 44,
    CMSG_GOFF_IP = 48,
    CMSG_GOFF_PORT = 94,
    CMSG_GOFF_CPORT = 96,
    CMSG_GOFF_FLAGS = 98,
    CMSG_GOFF_PPORT = 100,
    CMSG_GOFF_NOTUSED1 = 102,
};

/* Message types (the header's `type`). */
enum {
    CMSG_PING = 0,
    CMSG_PONG = 1,
    CMSG_MEET = 2,
    CMSG_FAIL = 3,
    CMSG_PUBLISH = 4,
    CMSG_FAILOVER_AUTH_REQUEST = 5,
    CMSG_FAILOVER_AUTH_ACK = 6,
    CMSG_UPDATE = 7,
    CMSG_MFSTART = 8,
    CMSG_MODULE = 9,
    CMSG_PUBLISHSHARD = 10,
    CMSG_TYPE_COUNT = 11,
};

/* A node's flags (the header's `flags`, a gossip entry's `flags`). */
enum {
    CMSG_NODE_MASTER = 1,
    CMSG_NODE_SLAVE = 2,
    CMSG_NODE_PFAIL = 4,
    CMSG_NODE_FAIL = 8,
    CMSG_NODE_MYSELF = 16,
    CMSG_NODE_HANDSHAKE = 32,
    CMSG_NODE_NOADDR = 64,
    CMSG_NODE_MEET = 128,
    CMSG_NODE_MIGRATE_TO = 256,
    CMSG_NODE_NOFAILOVER = 512,
};

/* mflags[0] bits. */
enum {
    CMSG_MF0_PAUSED = 1,   /* a master paused for a manual failover */
    CMSG_MF0_FORCEACK = 2, /* vote for this AUTH_REQUEST even if the master is up */
    CMSG_MF0_EXT_DATA = 4, /* ping extensions follow the gossip */
};

/* The cluster state as the sender sees it. */
enum { CMSG_STATE_OK = 0, CMSG_STATE_FAIL = 1 };

/* Ping extension types. 7.0 knows HOSTNAME only and skips the others (which
 * later versions send) after checking their length. */
enum {
    CMSG_EXT_HOSTNAME = 0,       /* a NUL-terminated hostname, padded */
    CMSG_EXT_HUMAN_NODENAME = 1, /* 7.2+ */
    CMSG_EXT_FORGOTTEN_NODE = 2, /* 7.2+: name[40], uint64 ttl */
    CMSG_EXT_SHARDID = 3,        /* 7.2+: shard id[40] */
};

/* The header, decoded. Parsing fills every field (pointers into the
 * buffer); building reads them all but totlen, count and extensions, which
 * the builders compute. */
typedef struct cmsg_hdr {
    uint32_t totlen;
    uint16_t ver, port, type, count;
    uint64_t current_epoch, config_epoch, offset;
    const char *sender;           /* CMSG_NAMELEN bytes */
    const unsigned char *myslots; /* CMSG_SLOT_BYTES; building: NULL = no slots */
    const char *slaveof;          /* CMSG_NAMELEN; building: NULL = a master (zeros) */
    const char *myip;             /* myip_len bytes (no NUL); "" = use the peer's address */
    size_t myip_len;              /* <= CMSG_IP_MAX */
    uint16_t extensions, pport, cport, flags;
    unsigned char state;
    unsigned char mflags[3];
} cmsg_hdr;

/* One gossip entry (ping_sent / pong_received are in seconds). */
typedef struct cmsg_gossip {
    const char *nodename; /* CMSG_NAMELEN bytes */
    uint32_t ping_sent, pong_received;
    const char *ip;       /* ip_len bytes, no NUL */
    size_t ip_len;        /* <= CMSG_IP_MAX */
    uint16_t port, cport, flags, pport;
} cmsg_gossip;

/* One ping extension: its type, and its data after the 8-byte header
 * (padding included; len is the whole extension). */
typedef struct cmsg_ext {
    uint16_t type;
    uint32_t len;
    const unsigned char *data;
    size_t data_len;
} cmsg_ext;

/* A parsed message: a view into the buffer, valid while it lives. */
typedef struct cmsg {
    cmsg_hdr h;
    union {
        struct {                      /* PING, PONG, MEET */
            const unsigned char *gossip; /* h.count entries */
            const unsigned char *ext; /* the extension area (ext_len bytes) */
            size_t ext_len;
            uint16_t n_ext;           /* extensions in it: 0 without CMSG_MF0_EXT_DATA */
            span hostname;            /* the HOSTNAME extension's text; p NULL if none */
        } ping;
        struct {
            const char *nodename;
        } fail;
        struct {                      /* PUBLISH, PUBLISHSHARD */
            span channel, message;
        } publish;
        struct {
            uint64_t config_epoch;
            const char *nodename;
            const unsigned char *slots;
        } update;
        struct {
            uint64_t module_id;
            uint8_t type;
            span payload;
        } module;
    } u;
    const char *err; /* why cmsg_parse refused the message (for a log line) */
} cmsg;

/* The message at buf[0..len): its totlen once CMSG_FRAME_MIN bytes are
 * there; -2 with fewer; -1 for a bad signature, a totlen below
 * CMSG_HDR_LEN or above max_totlen. Redis closes the link on the first two
 * ("Bad message length or signature received from Cluster bus."). */
long cmsg_frame(const unsigned char *buf, size_t len, uint32_t max_totlen);

/* One whole message (len must be its totlen): 0 with *out filled, or -1
 * with out->err set. Redis keeps the link after such a refusal: it logs
 * and skips the message (silently for a version other than 1). Checks what clusterProcessPacket checks, with the
 * arithmetic done wide: version 1; each type's exact length (gossip count,
 * each extension's length a multiple of 8, at least its header, within the
 * message; a HOSTNAME extension NUL-terminated; publish/module lengths).
 * An unknown type is accepted as Redis does (only its header is read). */
int cmsg_parse(const unsigned char *buf, size_t len, cmsg *out);

/* Gossip entry i of a parsed PING/PONG/MEET: 0, or -1 if i >= count. */
int cmsg_gossip_at(const cmsg *m, unsigned i, cmsg_gossip *g);

/* Walk the extensions of a parsed PING/PONG/MEET; every length is checked
 * again, so the iterator is safe on its own. next: 1 with *e, 0 at the end,
 * -1 on a malformed extension. */
typedef struct cmsg_ext_iter {
    const unsigned char *p;
    size_t left;
    unsigned remaining;
} cmsg_ext_iter;
void cmsg_ext_begin(const cmsg *m, cmsg_ext_iter *it);
int cmsg_ext_next(cmsg_ext_iter *it, cmsg_ext *e);

/* Sizes to allocate before building (0 if the result would not fit in
 * totlen's 32 bits). ext_bytes: the sum of cmsg_size_ext* of the
 * extensions. */
size_t cmsg_size_ping(unsigned count, size_t ext_bytes);
size_t cmsg_size_ext(size_t data_len);
size_t cmsg_size_ext_hostname(size_t hostname_len);
size_t cmsg_size_publish(size_t channel_len, size_t message_len);
size_t cmsg_size_module(size_t payload_len);

/* A PING/PONG/MEET under construction: header, then gossip entries, then
 * extensions, then cmsg_finish. Any step that does not fit (buffer too
 * small, gossip after an extension, a field too long) makes the writer
 * failed and cmsg_finish return 0. */
typedef struct cmsg_writer {
    unsigned char *buf;
    size_t cap, len;
    unsigned count, extensions;
    int failed;
} cmsg_writer;
void cmsg_writer_init(cmsg_writer *w, unsigned char *buf, size_t cap);
/* h->type must be CMSG_PING, CMSG_PONG or CMSG_MEET. */
int cmsg_begin_ping(cmsg_writer *w, const cmsg_hdr *h);
int cmsg_add_gossip(cmsg_writer *w, const cmsg_gossip *g);
/* An extension with data_len bytes of data, zero-padded to 8; sets
 * CMSG_MF0_EXT_DATA. */
int cmsg_add_ext(cmsg_writer *w, uint16_t type, const void *data, size_t data_len);
/* The HOSTNAME extension: the text, a NUL, padding (hostname without NULs). */
int cmsg_add_ext_hostname(cmsg_writer *w, const char *hostname, size_t len);
/* Writes totlen, count and extensions: the message's length, 0 if failed. */
size_t cmsg_finish(cmsg_writer *w);

/* The other types, whole, into buf[0..cap): the length written, 0 if cap is
 * too small or a field does not fit. h->type is ignored (set by the builder);
 * its other fields are written as for a PING. */
size_t cmsg_build_fail(unsigned char *buf, size_t cap, const cmsg_hdr *h, const char *nodename);
size_t cmsg_build_update(unsigned char *buf, size_t cap, const cmsg_hdr *h, uint64_t config_epoch,
                         const char *nodename, const unsigned char *slots);
/* shard: PUBLISHSHARD instead of PUBLISH. */
size_t cmsg_build_publish(unsigned char *buf, size_t cap, const cmsg_hdr *h, int shard, const char *channel,
                          size_t channel_len, const char *message, size_t message_len);
size_t cmsg_build_module(unsigned char *buf, size_t cap, const cmsg_hdr *h, uint64_t module_id, uint8_t type,
                         const void *payload, size_t len);
/* A header-only message: type CMSG_FAILOVER_AUTH_REQUEST, _ACK or CMSG_MFSTART. */
size_t cmsg_build_bare(unsigned char *buf, size_t cap, const cmsg_hdr *h, uint16_t type);

/* Slot bitmaps as the bus carries them. */
int cmsg_slot_test(const unsigned char *slots, unsigned slot);
void cmsg_slot_set(unsigned char *slots, unsigned slot);
void cmsg_slot_clear(unsigned char *slots, unsigned slot);
/* 1 if a name field is all zero bytes (no name: a master's slaveof). */
int cmsg_name_is_null(const char *name);
/* The type's name as Redis logs it and CLUSTER INFO counts it ("ping",
 * "auth-req", ...; "unknown" otherwise). */
const char *cmsg_type_name(int type);

#endif
