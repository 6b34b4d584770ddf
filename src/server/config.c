/* config.c - ferry's configuration model: directives, values, defaults.
 *
 * One table describes every directive a Redis 7.0 redis.conf may hold: its
 * type, range, default and whether CONFIG SET may change it. About thirty of
 * them drive ferry and are bound to fields of ferry_config; the others are
 * accepted for compatibility (a warning says they are ignored), validated
 * like Redis validates them, and kept as strings so CONFIG GET answers what
 * Redis would (redis-benchmark probes `save` and `appendonly`).
 *
 * Values move between the loader, CONFIG SET, CONFIG GET and CONFIG REWRITE
 * in one canonical string form: the text CONFIG GET prints. config_parse()
 * turns user text into that form (or an error in Redis's words) and
 * config_apply() stores it, so "validate everything, then apply" - which
 * CONFIG SET needs to be all-or-nothing - comes for free.
 *
 * The loader (command line, files, include) is in config_load.c and the
 * CONFIG command in config_cmd.c; they use the small non-static API at the
 * end of this file, declared in config_internal.h.
 */
#include "config.h"
#include "config_internal.h"
#include "notify.h"
#include "util.h"
#include "zmalloc.h"

#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "config_defs.h"
#include "sbuf.h"

#define defs config_defs
#define NDEFS config_ndefs

/* Values of the entries not bound to ferry_config (index = entry). */
static char *g_store[CONFIG_MAX_DEFS];

int config_sandbox = 0; /* see config_internal.h */

static const char *policy_names[] = {"noeviction", "allkeys-lru", "allkeys-lfu", "allkeys-random",
                                     "volatile-lru", "volatile-lfu", "volatile-random", "volatile-ttl"};

const char *config_maxmemory_policy_name(int policy) {
    return policy >= 0 && policy < 8 ? policy_names[policy] : "noeviction";
}

void config_free_args(int argc, char **argv) {
    for (int i = 0; i < argc; i++) zfree(argv[i]);
    zfree(argv);
}

/* ---------------------------------------------------------- value parsing */

/* Redis memory units: digits then b|k|kb|m|mb|g|gb, any case; "" is 0.
 * Unlike Redis, values that overflow 64 bits are refused. */
int config_parse_memory(const char *s, unsigned long long *out) {
    unsigned long long v = 0, mul = 1;
    const char *p = s;
    for (; *p >= '0' && *p <= '9'; p++) {
        unsigned d = (unsigned)(*p - '0');
        if (v > (ULLONG_MAX - d) / 10) return 0;
        v = v * 10 + d;
    }
    if (!*p || !strcasecmp(p, "b")) mul = 1;
    else if (!strcasecmp(p, "k")) mul = 1000ULL;
    else if (!strcasecmp(p, "kb")) mul = 1024ULL;
    else if (!strcasecmp(p, "m")) mul = 1000ULL * 1000;
    else if (!strcasecmp(p, "mb")) mul = 1024ULL * 1024;
    else if (!strcasecmp(p, "g")) mul = 1000ULL * 1000 * 1000;
    else if (!strcasecmp(p, "gb")) mul = 1024ULL * 1024 * 1024;
    else return 0;
    if (v > ULLONG_MAX / mul) return 0;
    *out = v * mul;
    return 1;
}

/* strtoll over the whole string (Redis's save/cob/oom parsing is this lax). */
static int parse_lax_ll(const char *s, long long *out) {
    if (!*s || isspace((unsigned char)*s)) return 0;
    char *end;
    errno = 0;
    long long v = strtoll(s, &end, 10);
    if (*end || errno == ERANGE) return 0;
    *out = v;
    return 1;
}

/* Iterates an enum spec "name[=value] ..." ('!' = not listed in errors).
 * Returns the position after the item or NULL at the end. */
static const char *spec_next(const char *p, char *name, size_t cap, long *val, int *hidden, int *pos) {
    while (*p == ' ') p++;
    if (!*p) return NULL;
    *hidden = *p == '!';
    if (*hidden) p++;
    size_t n = 0;
    while (*p && *p != ' ' && *p != '=') {
        if (n + 1 < cap) name[n++] = *p;
        p++;
    }
    name[n] = '\0';
    *val = *pos;
    if (*p == '=') *val = strtol(p + 1, (char **)&p, 10);
    (*pos)++;
    return p;
}

static int enum_value(const char *spec, const char *s, long *out) {
    char name[64];
    long v;
    int hid, pos = 0;
    for (const char *p = spec; (p = spec_next(p, name, sizeof name, &v, &hid, &pos));)
        if (!strcasecmp(name, s)) {
            *out = v;
            return 1;
        }
    return 0;
}

/* Appends the first name with value v. */
static void enum_name(const char *spec, long v, sbuf *out) {
    char name[64];
    long val;
    int hid, pos = 0;
    for (const char *p = spec; (p = spec_next(p, name, sizeof name, &val, &hid, &pos));)
        if (val == v) {
            sb_adds(out, name);
            return;
        }
}

static void enum_error(const char *spec, char *err, size_t errlen) {
    sbuf b = {0};
    char name[64];
    long v;
    int hid, pos = 0, n = 0;
    sb_adds(&b, "argument(s) must be one of the following: ");
    for (const char *p = spec; (p = spec_next(p, name, sizeof name, &v, &hid, &pos));) {
        if (hid) continue;
        if (n++) sb_adds(&b, ", ");
        sb_adds(&b, name);
    }
    snprintf(err, errlen, "%s", b.p);
    zfree(b.p);
}

/* Splits on single spaces, as Redis's sdssplitlen(" ") (empty tokens kept). */
static int split_spaces(const char *s, char ***out) {
    int n = 1;
    for (const char *p = s; *p; p++) n += *p == ' ';
    char **v = zmalloc(sizeof(char *) * (size_t)n);
    int i = 0;
    const char *start = s;
    for (const char *p = s;; p++) {
        if (*p == ' ' || !*p) {
            v[i++] = zstrndup(start, (size_t)(p - start));
            start = p + 1;
            if (!*p) break;
        }
    }
    *out = v;
    return n;
}

/* Splits on runs of blanks (no empty tokens). */
static int split_blanks(const char *s, char ***out) {
    int n = 0;
    for (const char *p = s; *p;) {
        while (*p == ' ' || *p == '\t') p++;
        if (!*p) break;
        n++;
        while (*p && *p != ' ' && *p != '\t') p++;
    }
    char **v = zmalloc(sizeof(char *) * (size_t)(n ? n : 1));
    int i = 0;
    for (const char *p = s; *p;) {
        while (*p == ' ' || *p == '\t') p++;
        if (!*p) break;
        const char *st = p;
        while (*p && *p != ' ' && *p != '\t') p++;
        v[i++] = zstrndup(st, (size_t)(p - st));
    }
    *out = v;
    return n;
}

static int flags_parse(const char *spec, const char *s, char **canon, char *err, size_t errlen) {
    char **tok;
    int n = split_spaces(s, &tok), ok = 1;
    long all = 0, v;
    for (int i = 0; i < n; i++) {
        if (!enum_value(spec, tok[i], &v)) ok = 0;
        else all |= v;
    }
    config_free_args(n, tok);
    if (!ok) {
        enum_error(spec, err, errlen);
        return -1;
    }
    if ((all & 1) && (all & 2)) {
        snprintf(err, errlen, "shutdown options SAVE and NOSAVE can't be used simultaneously");
        return -1;
    }
    sbuf b = {0};
    char name[64];
    int hid, pos = 0;
    for (const char *p = spec; (p = spec_next(p, name, sizeof name, &v, &hid, &pos));) {
        if (v && (all & v) == v) {
            if (b.len) sb_addc(&b, ' ');
            sb_adds(&b, name);
        }
    }
    if (!b.len) sb_adds(&b, "default");
    *canon = sb_take(&b);
    return 0;
}

static int save_parse(const char *s, char **canon, char *err, size_t errlen) {
    if (!*s) {
        *canon = zstrdup("");
        return 0;
    }
    char **tok;
    int n = split_spaces(s, &tok), ok = n % 2 == 0;
    sbuf b = {0};
    for (int i = 0; ok && i < n; i += 2) {
        long long secs, changes;
        if (!parse_lax_ll(tok[i], &secs) || !parse_lax_ll(tok[i + 1], &changes) || secs < 1 || changes < 0) ok = 0;
        else sb_addf(&b, "%s%lld %lld", i ? " " : "", secs, changes);
    }
    config_free_args(n, tok);
    if (!ok) {
        zfree(b.p);
        snprintf(err, errlen, "Invalid save parameters");
        return -1;
    }
    *canon = sb_take(&b);
    return 0;
}

static int bind_parse(const char *s, char **canon, char *err, size_t errlen) {
    char **tok;
    int n = split_blanks(s, &tok);
    if (n > CONFIG_MAX_BIND) {
        config_free_args(n, tok);
        snprintf(err, errlen, "Too many bind addresses specified.");
        return -1;
    }
    sbuf b = {0};
    for (int i = 0; i < n; i++) {
        if (i) sb_addc(&b, ' ');
        sb_adds(&b, tok[i]);
    }
    config_free_args(n, tok);
    *canon = sb_take(&b);
    return 0;
}

static int cob_class(const char *s) {
    if (!strcasecmp(s, "normal")) return COB_NORMAL;
    if (!strcasecmp(s, "slave") || !strcasecmp(s, "replica")) return COB_REPLICA;
    if (!strcasecmp(s, "pubsub")) return COB_PUBSUB;
    return -1;
}

static void cob_format(sbuf *b, const cob_limit *cob) {
    static const char *names[] = {"normal", "slave", "pubsub"};
    for (int i = 0; i < COB_CLASSES; i++)
        sb_addf(b, "%s%s %llu %llu %lld", i ? " " : "", names[i], cob[i].hard, cob[i].soft, cob[i].soft_seconds);
}


/* Updates the classes named in s (class hard soft seconds ...); all or nothing. */
static int cob_parse_into(const char *s, cob_limit *cob, char *err, size_t errlen) {
    char **tok;
    int n = split_blanks(s, &tok);
    const char *msg = n % 4 ? "Wrong number of arguments in buffer limit configuration." : NULL;
    cob_limit tmp[COB_CLASSES];
    memcpy(tmp, cob, sizeof tmp);
    for (int i = 0; !msg && i < n; i += 4) {
        int cls = cob_class(tok[i]);
        unsigned long long hard, soft;
        long long secs;
        if (cls < 0) {
            msg = "Invalid client class specified in buffer limit configuration.";
        } else if (!config_parse_memory(tok[i + 1], &hard) || !config_parse_memory(tok[i + 2], &soft) ||
                   !parse_lax_ll(tok[i + 3], &secs) || secs < 0 || secs > INT_MAX) {
            /* Redis keeps soft_seconds in an int: 2^31..2^32-1 are refused
             * there too (larger values wrap in Redis; refused here) */
            msg = "Error in hard, soft or soft_seconds setting in buffer limit configuration.";
        } else {
            tmp[cls].hard = hard;
            tmp[cls].soft = soft;
            tmp[cls].soft_seconds = secs;
        }
    }
    config_free_args(n, tok);
    if (msg) {
        snprintf(err, errlen, "%s", msg);
        return -1;
    }
    memcpy(cob, tmp, sizeof tmp);
    return 0;
}

/* keyspace notification classes (notify.h). The field holds the flags;
 * CONFIG GET shows Redis's text, which loses 'n' after 'A' (as Redis's
 * does) while the flags keep it: the canonical value is that text with 'n'
 * appended in that one case, so applying it keeps the flag. */
static int notify_parse(const char *s, char **canon, char *err, size_t errlen) {
    int f = notify_flags_from_string(s, strlen(s));
    if (f < 0) {
        snprintf(err, errlen, "Invalid event class character. Use 'Ag$lshzxeKEtmdn'.");
        return -1;
    }
    char text[NOTIFY_TEXT_MAX];
    notify_flags_to_string(f, text, sizeof text);
    sbuf b = {0};
    sb_adds(&b, text);
    if ((f & NOTIFY_ALL) == NOTIFY_ALL && (f & NOTIFY_NEW)) sb_addc(&b, 'n');
    *canon = sb_take(&b);
    return 0;
}

static int pctl_parse(const char *s, char **canon, char *err, size_t errlen) {
    if (!*s) {
        *canon = zstrdup("");
        return 0;
    }
    char **tok;
    int n = split_spaces(s, &tok);
    const char *msg = NULL;
    sbuf b = {0};
    for (int i = 0; !msg && i < n; i++) {
        char *end, num[64];
        double d = tok[i][0] && !isspace((unsigned char)tok[i][0]) ? strtod(tok[i], &end) : NAN;
        if (isnan(d) || *end) msg = "Invalid latency-tracking-info-percentiles parameters";
        else if (d < 0.0 || d > 100.0) msg = "latency-tracking-info-percentiles parameters should sit between [0.0,100.0]";
        else {
            int len = snprintf(num, sizeof num, "%f", d);
            while (len > 1 && num[len - 1] == '0') num[--len] = '\0';
            if (len > 1 && num[len - 1] == '.') num[--len] = '\0';
            sb_addf(&b, "%s%s", i ? " " : "", num);
        }
    }
    config_free_args(n, tok);
    if (msg) {
        zfree(b.p);
        snprintf(err, errlen, "%s", msg);
        return -1;
    }
    *canon = sb_take(&b);
    return 0;
}

static int oomv_parse(const char *s, char **canon, char *err, size_t errlen) {
    char **tok;
    int n = split_spaces(s, &tok);
    long long v[3];
    const char *msg = n != 3 ? "wrong number of arguments" : NULL;
    for (int i = 0; !msg && i < 3; i++)
        if (!parse_lax_ll(tok[i], &v[i]) || v[i] < -2000 || v[i] > 2000)
            msg = "Invalid oom-score-adj-values, elements must be between -2000 and 2000.";
    config_free_args(n, tok);
    if (msg) {
        snprintf(err, errlen, "%s", msg);
        return -1;
    }
    sbuf b = {0};
    sb_addf(&b, "%lld %lld %lld", v[0], v[1], v[2]);
    *canon = sb_take(&b);
    return 0;
}

static int replof_parse(const char *s, char **canon, char *err, size_t errlen) {
    char **tok;
    int n = split_blanks(s, &tok), rc = 0;
    long long port;
    if (n != 2) {
        snprintf(err, errlen, "wrong number of arguments");
        rc = -1;
    } else if (!strcasecmp(tok[0], "no") && !strcasecmp(tok[1], "one")) {
        *canon = zstrdup("");
    } else if (!parse_lax_ll(tok[1], &port) || port < 0 || port > 65535) {
        snprintf(err, errlen, "Invalid master port");
        rc = -1;
    } else {
        sbuf b = {0};
        sb_adds(&b, tok[0]);
        sb_addf(&b, " %lld", port);
        *canon = sb_take(&b);
    }
    config_free_args(n, tok);
    return rc;
}

static int octal_parse(const char *s, char **canon, char *err, size_t errlen) {
    unsigned long v = 0;
    const char *p = s;
    for (; *p >= '0' && *p <= '7' && v <= 07777; p++) v = v * 8 + (unsigned long)(*p - '0');
    if (!*s || *p || v > 07777) {
        snprintf(err, errlen, "argument couldn't be parsed as an octal number");
        return -1;
    }
    sbuf b = {0};
    sb_addf(&b, "%lo", v);
    *canon = sb_take(&b);
    return 0;
}

/* proc-title-template: {variables} must be known ones. */
static int title_template_ok(const char *s) {
    static const char *vars[] = {"{title}", "{listen-addr}", "{server-mode}", "{port}",
                                 "{tls-port}", "{unixsocket}", "{config-file}"};
    for (const char *p = s; *p; p++) {
        if (*p == '}') return 0;
        if (*p != '{') continue;
        const char *e = strchr(p, '}');
        if (!e) return 0;
        size_t n = (size_t)(e - p + 1), k = 0;
        for (; k < sizeof vars / sizeof vars[0]; k++)
            if (strlen(vars[k]) == n && !memcmp(vars[k], p, n)) break;
        if (k == sizeof vars / sizeof vars[0]) return 0;
        p = e;
    }
    return 1;
}

#define HOSTNAME_MAX 256            /* Redis's NET_HOST_STR_LEN */

/* cluster-announce-hostname: what Redis accepts (NULL) or why not. */
static const char *hostname_refusal(const char *s) {
    if (strlen(s) >= HOSTNAME_MAX) return "Hostnames must be less than 256 characters";
    for (const char *p = s; *p; p++)
        if (!isalnum((unsigned char)*p) && *p != '-' && *p != '.')
            return "Hostnames may only contain alphanumeric characters, hyphens or dots";
    return NULL;
}

static int str_parse(const cdef *d, const char *s, char **canon, char *err, size_t errlen) {
    const char *why = !strcmp(d->name, "cluster-announce-hostname") ? hostname_refusal(s) : NULL;
    if (why) {
        snprintf(err, errlen, "%s", why);
        return -1;
    }
    if (!strcmp(d->name, "dbfilename") && strchr(s, '/')) {
        snprintf(err, errlen, "dbfilename can't be a path, just a filename");
        return -1;
    }
    if (!strcmp(d->name, "proc-title-template") && !title_template_ok(s)) {
        snprintf(err, errlen, "template format is invalid or contains unknown variables");
        return -1;
    }
    *canon = zstrdup(s);
    return 0;
}

/* ------------------------------------------------------ fields & values */

/* Quoted for a config line (zmalloc'd). */
char *config_repr(const char *s) {
    sbuf b = {0};
    sb_repr(&b, s, strlen(s));
    return sb_take(&b);
}

static int real_index(int i) {
    if (defs[i].type != CT_ALIAS) return i;
    for (int k = 0; k < NDEFS; k++)
        if (!strcmp(defs[k].name, defs[i].spec)) return k;
    return i; /* not reached: every alias has a target */
}

/* Where the numeric fields live: offset and width (int or 64-bit). */
#define FLD(f, m) {f, offsetof(ferry_config, m), sizeof(((ferry_config *)0)->m)}
static const struct { unsigned char f; unsigned short off, size; } fields[] = {
    FLD(F_PORT, port), FLD(F_PROTMODE, protected_mode), FLD(F_MAXCLIENTS, maxclients),
    FLD(F_TIMEOUT, timeout), FLD(F_KEEPALIVE, tcp_keepalive), FLD(F_BACKLOG, tcp_backlog),
    FLD(F_DATABASES, databases), FLD(F_DAEMONIZE, daemonize), FLD(F_LOGLEVEL, loglevel), FLD(F_HZ, hz),
    FLD(F_PMBL, proto_max_bulk_len), FLD(F_QBL, client_query_buffer_limit),
    FLD(F_DEBUGCMD, enable_debug_command), FLD(F_PROTCFG, enable_protected_configs),
    FLD(F_MODULECMD, enable_module_command),
    FLD(F_METRICS, metrics_port), FLD(F_MAXMEMORY, maxmemory), FLD(F_POLICY, maxmemory_policy),
    FLD(F_SAMPLES, maxmemory_samples), FLD(F_SLOWER, slowlog_log_slower_than),
    FLD(F_SLOWLEN, slowlog_max_len), FLD(F_LATMON, latency_monitor_threshold),
    FLD(F_LATTRACK, latency_tracking), FLD(F_AEE, active_expire_effort), FLD(F_LAZYDEL, lazyfree_lazy_user_del),
    FLD(F_LAZY_EVICT, lazyfree_lazy_eviction), FLD(F_LAZY_EXPIRE, lazyfree_lazy_expire),
    FLD(F_LAZY_SERVER_DEL, lazyfree_lazy_server_del), FLD(F_LAZY_FLUSH, lazyfree_lazy_user_flush),
    FLD(F_HASH_LP_ENTRIES, hash_max_listpack_entries), FLD(F_HASH_LP_VALUE, hash_max_listpack_value),
    FLD(F_SET_INTSET_ENTRIES, set_max_intset_entries), FLD(F_ZSET_LP_ENTRIES, zset_max_listpack_entries),
    FLD(F_ZSET_LP_VALUE, zset_max_listpack_value), FLD(F_LIST_LP_SIZE, list_max_listpack_size),
    FLD(F_TENACITY, maxmemory_eviction_tenacity), FLD(F_LFU_LOG, lfu_log_factor), FLD(F_LFU_DECAY, lfu_decay_time),
    FLD(F_BUSYPOLL, busy_poll_us), FLD(F_MAXMEMCLIENTS, maxmemory_clients),
    FLD(F_BUSY_REPLY, busy_reply_threshold), FLD(F_NOTIFY, notify_keyspace_events),
    FLD(F_STREAM_BYTES, stream_node_max_bytes), FLD(F_STREAM_ENTRIES, stream_node_max_entries),
    FLD(F_TRACKING_MAX, tracking_table_max_keys), FLD(F_HLL_SPARSE_MAX, hll_sparse_max_bytes),
    FLD(F_MIN_REPLICAS, min_replicas_to_write), FLD(F_MIN_REPLICAS_LAG, min_replicas_max_lag),
    FLD(F_REPLICA_RO, replica_read_only), FLD(F_REPLICA_STALE, replica_serve_stale_data),
    FLD(F_UNIXSOCKETPERM, unixsocketperm), FLD(F_SUPERVISED, supervised),
    FLD(F_TLS_PORT, tls_port), FLD(F_TCP_RCVBUF, tcp_rcvbuf), FLD(F_REPLY_HOLD, reply_hold_ms),
};

/* 64-bit fields are read as their bit pattern (maxmemory is unsigned). */
static unsigned long long fld_get(const ferry_config *c, int f) {
    for (size_t k = 0; k < sizeof fields / sizeof fields[0]; k++) {
        if (fields[k].f != f) continue;
        const char *p = (const char *)c + fields[k].off;
        if (fields[k].size == sizeof(int)) {
            int v;
            memcpy(&v, p, sizeof v);
            return (unsigned long long)(long long)v;
        }
        unsigned long long v;
        memcpy(&v, p, sizeof v);
        return v;
    }
    return 0;
}

static void fld_set(ferry_config *c, int f, unsigned long long v) {
    for (size_t k = 0; k < sizeof fields / sizeof fields[0]; k++) {
        if (fields[k].f != f) continue;
        char *p = (char *)c + fields[k].off;
        if (fields[k].size == sizeof(int)) {
            int iv = (int)(long long)v;
            memcpy(p, &iv, sizeof iv);
        } else {
            memcpy(p, &v, sizeof v);
        }
    }
}

static char **fld_str(ferry_config *c, int f) {
    switch (f) {
    case F_PIDFILE: return &c->pidfile;
    case F_LOGFILE: return &c->logfile;
    case F_DIR: return &c->dir;
    case F_UNIXSOCKET: return &c->unixsocket;
    default: return NULL;
    }
}

/* A binary entry's bytes and length (config.h: NULL and 0 when empty). */
static char **fld_bin(ferry_config *c, int f, size_t **len) {
    *len = f == F_REQUIREPASS ? &c->requirepass_len : &c->masterauth_len;
    return f == F_REQUIREPASS ? &c->requirepass : &c->masterauth;
}

/* Appends entry r's current value in canonical form. */
static void value_of(const ferry_config *c, int r, sbuf *b) {
    const cdef *d = &defs[r];
    sb_add(b, "", 0);
    if (d->fld == NOF) {
        sb_adds(b, g_store[r] ? g_store[r] : d->def);
        return;
    }
    char **s = fld_str((ferry_config *)c, d->fld);
    size_t *len;
    if (s) {
        if (*s) sb_adds(b, *s);
    } else if (d->type == CT_BIN) {
        s = fld_bin((ferry_config *)c, d->fld, &len);
        config_bin_append(b, *s, *len);
    } else if (d->fld == F_BIND) {
        for (int i = 0; i < c->bind_count; i++) {
            if (i) sb_addc(b, ' ');
            sb_adds(b, c->bind[i]);
        }
    } else if (d->fld == F_COB) {
        cob_format(b, c->cob);
    } else if (d->type == CT_MEM) {
        sb_addf(b, "%llu", fld_get(c, d->fld));
    } else if (d->type == CT_MEMPCT) {
        long long v = (long long)fld_get(c, d->fld);
        if (v < 0) sb_addf(b, "%lld%%", -v);
        else sb_addf(b, "%lld", v);
    } else if (d->type == CT_OCTAL) {
        sb_addf(b, "%llo", fld_get(c, d->fld));
    } else if (d->type == CT_BOOL) {
        sb_adds(b, fld_get(c, d->fld) ? "yes" : "no");
    } else if (d->type == CT_ENUM) {
        enum_name(d->spec, (long)fld_get(c, d->fld), b);
    } else if (d->type == CT_NOTIFY) {
        char text[NOTIFY_TEXT_MAX];
        notify_flags_to_string((int)fld_get(c, d->fld), text, sizeof text);
        sb_adds(b, text);
    } else {
        sb_addf(b, "%lld", (long long)fld_get(c, d->fld));
    }
}

/* Does a value get joined from several arguments in a config file? */
static int is_multiarg(int type) {
    return type == CT_SAVE || type == CT_BIND || type == CT_COB || type == CT_PCTL || type == CT_OOMV ||
           type == CT_REPLOF || type == CT_FLAGS;
}

static int range_error(const cdef *d, char *err, size_t errlen) {
    snprintf(err, errlen, "argument must be between %lld and %llu inclusive", d->min, d->max);
    return -1;
}

static int num_parse(const cdef *d, const char *s, char **canon, char *err, size_t errlen) {
    sbuf b = {0};
    if (d->type == CT_INT) {
        long long v;
        if (!str_to_ll(s, strlen(s), &v)) {
            snprintf(err, errlen, "argument couldn't be parsed into an integer");
            return -1;
        }
        if (v < d->min || (v > 0 && (unsigned long long)v > d->max)) return range_error(d, err, errlen);
        if (d->fld == F_HZ) v = v < 1 ? 1 : v > 500 ? 500 : v; /* Redis clamps */
        sb_addf(&b, "%lld", v);
    } else {
        unsigned long long v;
        size_t n = strlen(s);
        if (d->type == CT_MEMPCT && n > 1 && s[n - 1] == '%') {
            long long pct;
            if (!str_to_ll(s, n - 1, &pct) || pct < 0) goto notmem;
            if (pct > 100) {
                snprintf(err, errlen, "percentage argument must be less or equal to 100");
                return -1;
            }
            sb_addf(&b, pct ? "%lld%%" : "%lld", pct);
            *canon = sb_take(&b);
            return 0;
        }
        if (!config_parse_memory(s, &v)) goto notmem;
        if (v < (unsigned long long)d->min || v > d->max) return range_error(d, err, errlen);
        sb_addf(&b, "%llu", v);
    }
    *canon = sb_take(&b);
    return 0;
notmem:
    snprintf(err, errlen, d->type == CT_MEMPCT ? "argument must be a memory or percent value"
                                               : "argument must be a memory value");
    return -1;
}

/* ------------------------------------------------------------- the API */

int config_count(void) { return NDEFS; }
const char *config_name(int i) { return defs[i].name; }
int config_real(int i) { return real_index(i); }
unsigned config_flags(int i) { return defs[real_index(i)].flags; }
const char *config_default(int i) { return defs[real_index(i)].def; }
int config_is_multiarg(int i) { return is_multiarg(defs[real_index(i)].type); }
int config_is_binary(int i) { return defs[real_index(i)].type == CT_BIN; }
int config_is_stored(int i) { return defs[real_index(i)].fld == NOF && !(defs[real_index(i)].flags & CFG_READ); }

/* Exact, case-insensitive; includes hidden entries and aliases. */
int config_lookup(const char *name, size_t len) {
    for (int i = 0; i < NDEFS; i++)
        if (strlen(defs[i].name) == len && !strncasecmp(defs[i].name, name, len)) return i;
    return -1;
}

/* Entry i's current value as CONFIG GET prints it (zmalloc'd). `dir` is
 * returned as configured; config_cmd.c makes it absolute. */
char *config_get(const ferry_config *cfg, int i) {
    sbuf b = {0};
    value_of(cfg, real_index(i), &b);
    return sb_take(&b);
}

/* Validates text for entry i. On success *canon is the zmalloc'd canonical
 * value (relative values like client-output-buffer-limit are merged with
 * cur's). On failure err holds Redis's reason. */
int config_parse(const ferry_config *cur, int i, const char *val, char **canon, char *err, size_t errlen) {
    const cdef *d = &defs[real_index(i)];
    long v;
    switch (d->type) {
    case CT_BOOL:
        if (strcasecmp(val, "yes") && strcasecmp(val, "no")) {
            snprintf(err, errlen, "argument must be 'yes' or 'no'");
            return -1;
        }
        *canon = zstrdup(strcasecmp(val, "yes") ? "no" : "yes");
        return 0;
    case CT_INT:
    case CT_MEM:
    case CT_MEMPCT: return num_parse(d, val, canon, err, errlen);
    case CT_ENUM:
        if (!enum_value(d->spec, val, &v)) {
            enum_error(d->spec, err, errlen);
            return -1;
        } else {
            sbuf b = {0};
            enum_name(d->spec, v, &b);
            *canon = sb_take(&b);
            return 0;
        }
    case CT_FLAGS: return flags_parse(d->spec, val, canon, err, errlen);
    case CT_SAVE: return save_parse(val, canon, err, errlen);
    case CT_BIND: return bind_parse(val, canon, err, errlen);
    case CT_NOTIFY: return notify_parse(val, canon, err, errlen);
    case CT_PCTL: return pctl_parse(val, canon, err, errlen);
    case CT_OOMV: return oomv_parse(val, canon, err, errlen);
    case CT_REPLOF: return replof_parse(val, canon, err, errlen);
    case CT_OCTAL: return octal_parse(val, canon, err, errlen);
    case CT_COB: {
        cob_limit cob[COB_CLASSES];
        memcpy(cob, cur->cob, sizeof cob);
        if (cob_parse_into(val, cob, err, errlen)) return -1;
        sbuf b = {0};
        cob_format(&b, cob);
        *canon = sb_take(&b);
        return 0;
    }
    case CT_DIR:
        if (!*val) {
            snprintf(err, errlen, "%s", strerror(ENOENT));
            return -1;
        }
        *canon = zstrdup(val);
        return 0;
    case CT_BIN: *canon = config_bin_canon(val); return 0;
    default: return str_parse(d, val, canon, err, errlen);
    }
}

/* Stores a canonical value (from config_parse, or a default). */
long long config_get_ll(const ferry_config *cfg, const char *name) {
    char *v = config_get_by_name(cfg, name);
    long long n = v ? atoll(v) : 0;
    zfree(v);
    return n;
}

void config_set_internal(ferry_config *cfg, const char *name, const char *value) {
    int i = config_lookup(name, strlen(name));
    if (i >= 0) config_apply(cfg, i, value);
}

void config_apply(ferry_config *cfg, int i, const char *canon) {
    int r = real_index(i);
    const cdef *d = &defs[r];
    char **s = fld_str(cfg, d->fld);
    long v;
    if (d->fld == NOF) {
        zfree(g_store[r]);
        g_store[r] = zstrdup(canon);
    } else if (s) {
        zfree(*s);
        *s = (*canon || d->fld == F_LOGFILE || d->fld == F_DIR) ? zstrdup(canon) : NULL;
    } else if (d->type == CT_BIN) {
        size_t *len;
        s = fld_bin(cfg, d->fld, &len);
        config_bin_store(s, len, canon);
    } else if (d->fld == F_BIND) {
        char **tok;
        int n = split_blanks(canon, &tok);
        for (int k = 0; k < cfg->bind_count; k++) zfree(cfg->bind[k]);
        cfg->bind_count = 0;
        for (int k = 0; k < n; k++) {
            if (k < CONFIG_MAX_BIND) cfg->bind[cfg->bind_count++] = tok[k];
            else zfree(tok[k]);
        }
        zfree(tok);
    } else if (d->fld == F_COB) {
        char err[8];
        cob_parse_into(canon, cfg->cob, err, sizeof err);
    } else if (d->type == CT_MEM) {
        fld_set(cfg, d->fld, strtoull(canon, NULL, 10));
    } else if (d->type == CT_MEMPCT) {
        size_t n = strlen(canon);
        long long pct = n && canon[n - 1] == '%' ? strtoll(canon, NULL, 10) : 0;
        fld_set(cfg, d->fld, pct ? (unsigned long long)-pct : strtoull(canon, NULL, 10));
    } else if (d->type == CT_OCTAL) {
        fld_set(cfg, d->fld, strtoull(canon, NULL, 8));
    } else if (d->type == CT_BOOL) {
        fld_set(cfg, d->fld, !strcmp(canon, "yes"));
    } else if (d->type == CT_ENUM) {
        if (enum_value(d->spec, canon, &v)) fld_set(cfg, d->fld, (unsigned long long)(long long)v);
    } else if (d->type == CT_NOTIFY) {
        fld_set(cfg, d->fld, (unsigned long long)(long long)notify_flags_from_string(canon, strlen(canon)));
    } else {
        fld_set(cfg, d->fld, (unsigned long long)strtoll(canon, NULL, 10));
    }
}

void config_defaults(ferry_config *cfg) {
    memset(cfg, 0, sizeof *cfg);
    for (int i = 0; i < NDEFS; i++)
        if (defs[i].type != CT_ALIAS) config_apply(cfg, i, defs[i].def);
}

/* Frees the strings a ferry_config owns (not the compatibility store). */
void config_free(ferry_config *cfg) {
    for (int k = 0; k < cfg->bind_count; k++) zfree(cfg->bind[k]);
    cfg->bind_count = 0;
    char **strs[] = {&cfg->requirepass, &cfg->masterauth, &cfg->pidfile, &cfg->logfile, &cfg->dir, &cfg->config_file,
                     &cfg->unixsocket};
    for (size_t k = 0; k < sizeof strs / sizeof strs[0]; k++) {
        zfree(*strs[k]);
        *strs[k] = NULL;
    }
    cfg->requirepass_len = cfg->masterauth_len = 0;
}

static void mem_human(sbuf *b, unsigned long long v) {
    if (v && v % (1024ULL * 1024 * 1024) == 0) sb_addf(b, "%llugb", v / (1024ULL * 1024 * 1024));
    else if (v && v % (1024ULL * 1024) == 0) sb_addf(b, "%llumb", v / (1024ULL * 1024));
    else if (v && v % 1024 == 0) sb_addf(b, "%llukb", v / 1024);
    else sb_addf(b, "%llu", v);
}

static void cob_lines(sbuf *b, const cob_limit *cob, int force) {
    static const char *names[] = {"normal", "slave", "pubsub"};
    cob_limit def[COB_CLASSES];
    char err[8];
    memset(def, 0, sizeof def);
    cob_parse_into(defs[config_lookup("client-output-buffer-limit", 26)].def, def, err, sizeof err);
    for (int k = 0; k < COB_CLASSES; k++) {
        if (!memcmp(&cob[k], &def[k], sizeof def[k]) && !(force && k == 0)) continue;
        sb_addf(b, "client-output-buffer-limit %s ", names[k]);
        mem_human(b, cob[k].hard);
        sb_addc(b, ' ');
        mem_human(b, cob[k].soft);
        sb_addf(b, " %lld\n", cob[k].soft_seconds);
        force = 0;
    }
}

/* The lines CONFIG REWRITE writes for entry i ("" = none, e.g. replicaof
 * unset), zmalloc'd; *is_default tells whether the value is the default. */
char *config_rewrite_lines(const ferry_config *cfg, int i, int *is_default) {
    int r = real_index(i);
    const cdef *d = &defs[r];
    sbuf v = {0}, b = {0};
    value_of(cfg, r, &v);
    *is_default = !strcmp(v.p, d->def);
    sb_add(&b, "", 0);
    if (d->type == CT_MEM) {
        sb_addf(&b, "%s ", d->name);
        mem_human(&b, strtoull(v.p, NULL, 10));
        sb_addc(&b, '\n');
    } else if (d->type == CT_SAVE && v.len) {
        char **tok;
        int n = split_spaces(v.p, &tok);
        for (int k = 0; k + 1 < n; k += 2) sb_addf(&b, "save %s %s\n", tok[k], tok[k + 1]);
        config_free_args(n, tok);
    } else if (d->type == CT_COB) {
        cob_lines(&b, cfg->cob, 1);
    } else if (d->type == CT_BIN) {
        sb_adds(&b, d->name);
        sb_addc(&b, ' ');
        sb_repr(&b, v.p, config_bin_decode(v.p)); /* "\x00" for a NUL, as Redis writes it */
        sb_addc(&b, '\n');
    } else if (d->type == CT_REPLOF) {
        if (v.len) {
            sb_adds(&b, "replicaof ");
            sb_adds(&b, v.p);
            sb_addc(&b, '\n');
        }
    } else {
        sb_adds(&b, d->name);
        sb_addc(&b, ' ');
        char *abs = d->type == CT_DIR ? realpath(v.p, NULL) : NULL; /* written absolute, as Redis does */
        if (abs) sb_repr(&b, abs, strlen(abs));
        else if (d->type == CT_STR || d->type == CT_DIR || d->type == CT_NOTIFY || !v.len) sb_repr(&b, v.p, v.len);
        else sb_adds(&b, v.p);
        free(abs);
        sb_addc(&b, '\n');
    }
    zfree(v.p);
    return sb_take(&b);
}

/* A directive's value by name, for other modules (config.h). */
char *config_get_by_name(const ferry_config *cfg, const char *name) {
    int i = config_lookup(name, strlen(name));
    return i < 0 ? NULL : config_get(cfg, i);
}

int config_is_yes(const ferry_config *cfg, const char *name) {
    char *v = config_get_by_name(cfg, name);
    int yes = v && strcmp(v, "yes") == 0;
    zfree(v);
    return yes;
}
