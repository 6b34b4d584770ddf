/* config_defs.h - the shape of ferry's directive table (private to
 * config.c and config_table.c): value types, entry flags, the ferry_config
 * fields an entry binds to, and the table itself. */
#ifndef FERRY_CONFIG_DEFS_H
#define FERRY_CONFIG_DEFS_H

#include "config_internal.h"

#define CONFIG_MAX_DEFS 256

enum {
    CT_BOOL, CT_INT, CT_MEM, CT_MEMPCT, CT_ENUM, CT_FLAGS, CT_STR, CT_SAVE, CT_BIND,
    CT_COB, CT_NOTIFY, CT_PCTL, CT_OOMV, CT_REPLOF, CT_OCTAL, CT_DIR, CT_BIN, CT_ALIAS
};
/* entry flags, short names for the table (values in config_internal.h) */
#define IMM  CFG_IMM
#define PROT CFG_PROT
#define HID  CFG_HID
#define RD   CFG_READ
#define NOLD CFG_NOLOAD

/* ferry_config fields an entry is bound to; NOF = kept in the string store */
enum {
    NOF, F_PORT, F_BIND, F_PROTMODE, F_REQUIREPASS, F_MAXCLIENTS, F_TIMEOUT, F_KEEPALIVE,
    F_BACKLOG, F_DATABASES, F_DAEMONIZE, F_PIDFILE, F_LOGFILE, F_LOGLEVEL, F_DIR, F_HZ,
    F_PMBL, F_QBL, F_COB, F_DEBUGCMD, F_PROTCFG, F_MODULECMD, F_METRICS, F_MAXMEMORY, F_POLICY,
    F_SAMPLES, F_SLOWER, F_SLOWLEN, F_LATMON, F_LATTRACK, F_AEE, F_LAZYDEL,
    F_LAZY_EVICT, F_LAZY_EXPIRE, F_LAZY_SERVER_DEL, F_LAZY_FLUSH,
    F_HASH_LP_ENTRIES, F_HASH_LP_VALUE, F_SET_INTSET_ENTRIES, F_ZSET_LP_ENTRIES, F_ZSET_LP_VALUE, F_LIST_LP_SIZE,
    F_TENACITY, F_LFU_LOG, F_LFU_DECAY, F_BUSYPOLL, F_MAXMEMCLIENTS, F_BUSY_REPLY, F_NOTIFY,
    F_STREAM_BYTES, F_STREAM_ENTRIES, F_TRACKING_MAX, F_HLL_SPARSE_MAX,
    F_MIN_REPLICAS, F_MIN_REPLICAS_LAG, F_REPLICA_RO, F_REPLICA_STALE, F_MASTERAUTH,
    F_UNIXSOCKET, F_UNIXSOCKETPERM, F_SUPERVISED, F_TLS_PORT, F_TCP_RCVBUF, F_REPLY_HOLD
};

typedef struct cdef {
    const char *name;
    unsigned char type;
    unsigned char fld;
    unsigned char flags;
    long long min;
    unsigned long long max;
    const char *spec;       /* enum/flags names ("a b=2 !hidden"); alias: target name */
    const char *def;        /* default, canonical form */
} cdef;

extern const cdef config_defs[];
extern const int config_ndefs;

#endif
