/* info.c - INFO [section ...], MEMORY STATS / MEMORY DOCTOR and the
 * instantaneous metrics (ops/sec, kbps) sampled from the server cron.
 *
 * The text is Redis 7's: "# Section\r\nfield:value\r\n...", sections in
 * Redis's fixed order separated by one empty line, field names, order and
 * number formats as redis-server 7.0.15 prints them. Fields for subsystems
 * ferry does not have (persistence, replication, scripting, pub/sub,
 * defrag...) are present with the values an idle Redis without them shows,
 * so tools that parse INFO find every field they expect. Not a hot path:
 * formatting uses a growable buffer and snprintf.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/time.h>
#include <sys/utsname.h>
#include <unistd.h>

#include "acl.h"
#include "info.h"
#include "repl.h"
#include "aof.h"
#include "blocking.h"
#include "latency.h"
#include "sbuf.h"
#include "client.h"
#include "command.h"
#include "cmd_cluster.h"
#include "config.h"
#include "db.h"
#include "dict.h"
#include "evict.h"
#include "frand.h"
#include "lazyfree.h"
#include "migrate.h"
#include "persist.h"
#include "pubsub.h"
#include "reply.h"
#include "script.h"
#include "server.h"
#include "supervise.h"
#include "tracking.h"
#include "zmalloc.h"


/* Redis's bytesToHuman: "123B", "1.02K", "967.27M", ... */
static const char *bytes_human(char *buf, size_t cap, unsigned long long n) {
    static const char units[] = "KMGTP";
    double d = (double)n;
    unsigned long long limit = 1024;
    if (n < limit) {
        snprintf(buf, cap, "%lluB", n);
        return buf;
    }
    for (int i = 0; i < 5; i++) {
        d /= 1024;
        limit *= 1024;
        if (n < limit) {
            snprintf(buf, cap, "%.2f%c", d, units[i]);
            return buf;
        }
    }
    snprintf(buf, cap, "%lluB", n);
    return buf;
}

/* ------------------------------------------------- instantaneous metrics */

#define METRIC_SAMPLES 16

typedef struct metric {
    unsigned long long last_val;
    int64_t last_ms;
    long long samples[METRIC_SAMPLES];
    int idx;
} metric;

enum { MET_OPS, MET_NET_IN, MET_NET_OUT, MET_COUNT };
static metric metrics[MET_COUNT];
static size_t startup_memory;

static void metric_track(metric *m, unsigned long long val, int64_t now_ms) {
    if (m->last_ms) {
        int64_t dt = now_ms - m->last_ms;
        long long rate = 0;
        if (dt > 0 && val >= m->last_val) rate = (long long)((val - m->last_val) * 1000 / (unsigned long long)dt);
        m->samples[m->idx] = rate;
        m->idx = (m->idx + 1) % METRIC_SAMPLES;
    }
    m->last_val = val;
    m->last_ms = now_ms;
}

static long long metric_get(const metric *m) {
    long long sum = 0;
    for (int i = 0; i < METRIC_SAMPLES; i++) sum += m->samples[i];
    return sum / METRIC_SAMPLES;
}

/* Called by the server cron every 100 ms. */
void info_cron_sample(void) {
    int64_t now = ev_mono_us() / 1000;
    if (!startup_memory) startup_memory = zmalloc_used();
    metric_track(&metrics[MET_OPS], srv.stats.numcommands, now);
    metric_track(&metrics[MET_NET_IN], srv.stats.net_input_bytes, now);
    metric_track(&metrics[MET_NET_OUT], srv.stats.net_output_bytes, now);
}

/* ------------------------------------------------------ replication id */

void info_change_replid(void) { repl_change_id(); }

/* ------------------------------------------------------ memory figures */

typedef struct memfig {
    size_t used, rss, peak, startup;
    size_t clients_normal;
    repl_mem repl;                  /* the shared replication buffer */
    size_t overhead, dataset;
    size_t keys;
    size_t db_main[64];             /* per-db table + node header overhead (first 64 dbs) */
    size_t db_expires[64];          /* per-db volatile index (first 64 dbs) */
} memfig;

static void mem_figures(memfig *m) {
    memset(m, 0, sizeof *m);
    m->used = zmalloc_used();
    m->rss = rss_bytes();
    if (m->used > srv.stat_peak_memory) srv.stat_peak_memory = m->used;
    m->peak = srv.stat_peak_memory;
    if (!startup_memory) startup_memory = m->used;
    m->startup = startup_memory;
    for (client *c = srv.clients; c; c = c->next) m->clients_normal += client_memory_usage(c);
    size_t dbs = 0;
    for (int i = 0; i < db_count(); i++) {
        db *d = db_get(i);
        size_t n = dict_size(&d->keys);
        size_t o = dict_overhead(&d->keys) + n * sizeof(dnode), e = db_volatile_overhead(d);
        if (i < 64) {
            m->db_main[i] = o;
            m->db_expires[i] = e;
        }
        dbs += o + e;
        m->keys += n;
    }
    repl_memory(&m->repl);
    m->overhead = m->startup + m->clients_normal + m->repl.total + dbs;
    m->dataset = m->used > m->overhead ? m->used - m->overhead : 0;
}

static double ratio(double a, double b) { return b > 0 ? a / b : 0; }

static unsigned long long total_system_memory(void) {
    long pages = sysconf(_SC_PHYS_PAGES), psize = sysconf(_SC_PAGESIZE);
    return pages > 0 && psize > 0 ? (unsigned long long)pages * (unsigned long long)psize : 0;
}

/* ------------------------------------------------------------- sections */

static const char *executable_path(void) {
    static char path[4096];
    if (!path[0]) {
        ssize_t n = readlink("/proc/self/exe", path, sizeof path - 1);
        if (n > 0) path[n] = '\0';
        else snprintf(path, sizeof path, "%s", srv.executable ? srv.executable : "");
    }
    return path;
}

static unsigned long build_id(void) {
    const char *s = FERRY_OWN_VERSION " " FERRY_VERSION;
    unsigned long h = 1469598103934665603UL;
    for (; *s; s++) h = (h ^ (unsigned char)*s) * 1099511628211UL;
    return h;
}

static void sec_server(sbuf *b) {
    struct utsname u;
    struct timeval tv;
    if (uname(&u) != 0) memset(&u, 0, sizeof u);
    gettimeofday(&tv, NULL);
    long long uptime = (ev_now_ms() - srv.start_ms) / 1000;
    int gcc_major = 0, gcc_minor = 0, gcc_patch = 0;
#ifdef __GNUC__
    gcc_major = __GNUC__;
    gcc_minor = __GNUC_MINOR__;
    gcc_patch = __GNUC_PATCHLEVEL__;
#endif
    sb_addf(b,
              "redis_version:%s\r\nredis_git_sha1:00000000\r\nredis_git_dirty:0\r\nredis_build_id:%lx\r\n"
              "redis_mode:standalone\r\nos:%s %s %s\r\narch_bits:%d\r\nmonotonic_clock:POSIX clock_gettime\r\n"
              "multiplexing_api:%s\r\natomicvar_api:c11-builtin\r\ngcc_version:%d.%d.%d\r\nprocess_id:%ld\r\n"
              "process_supervised:%s\r\nrun_id:%s\r\ntcp_port:%d\r\nserver_time_usec:%lld\r\n"
              "uptime_in_seconds:%lld\r\nuptime_in_days:%lld\r\nhz:%d\r\nconfigured_hz:%d\r\nlru_clock:%u\r\n"
              "executable:%s\r\nconfig_file:%s\r\nio_threads_active:0\r\nferry_version:%s\r\n",
              FERRY_VERSION, build_id(), u.sysname, u.release, u.machine, (int)(sizeof(void *) * 8),
              ev_backend_name(), gcc_major, gcc_minor, gcc_patch, (long)getpid(), supervise_info(), srv.runid,
              srv.cfg.port ? srv.cfg.port : srv.cfg.tls_port, /* Redis shows the TLS port when port is 0 */
              (long long)tv.tv_sec * 1000000 + tv.tv_usec, uptime, uptime / 86400, srv.cfg.hz, srv.cfg.hz,
              (unsigned)(srv.lruclock & 0xffffff), executable_path(),
              srv.cfg.config_file ? srv.cfg.config_file : "", FERRY_OWN_VERSION);
}

static void sec_clients(sbuf *b) {
    size_t n = 0, max_in = 0, max_out = 0;
    for (client *c = srv.clients; c; c = c->next) {
        if (c->flags & CF_FAKE) continue;
        n++;
        if (c->qcap > max_in) max_in = c->qcap;
        size_t out = c->out_peak > client_out_used(c) ? (size_t)c->out_peak : client_out_used(c);
        if (out > max_out) max_out = out;
    }
    sb_addf(b,
              "connected_clients:%zu\r\ncluster_connections:%zu\r\nmaxclients:%lld\r\n"
              "client_recent_max_input_buffer:%zu\r\nclient_recent_max_output_buffer:%zu\r\n"
              "blocked_clients:%zu\r\ntracking_clients:%zu\r\nclients_in_timeout_table:%zu\r\n",
              n, cluster_connections(), srv.cfg.maxclients, max_in, max_out, srv.blocked_clients, srv.tracking_clients,
              blocking_timeout_count());
}

static void sec_memory(sbuf *b) {
    memfig m;
    char h1[32], h2[32], h3[32], h4[32], h5[32];
    mem_figures(&m);
    unsigned long long sysmem = total_system_memory();
    size_t net = m.used > m.startup ? m.used - m.startup : 0;
    sb_addf(b,
              "used_memory:%zu\r\nused_memory_human:%s\r\nused_memory_rss:%zu\r\nused_memory_rss_human:%s\r\n"
              "used_memory_peak:%zu\r\nused_memory_peak_human:%s\r\nused_memory_peak_perc:%.2f%%\r\n"
              "used_memory_overhead:%zu\r\nused_memory_startup:%zu\r\nused_memory_dataset:%zu\r\n"
              "used_memory_dataset_perc:%.2f%%\r\nallocator_allocated:%zu\r\nallocator_active:%zu\r\n"
              "allocator_resident:%zu\r\ntotal_system_memory:%llu\r\ntotal_system_memory_human:%s\r\n",
              m.used, bytes_human(h1, sizeof h1, m.used), m.rss, bytes_human(h2, sizeof h2, m.rss), m.peak,
              bytes_human(h3, sizeof h3, m.peak), ratio((double)m.used * 100, (double)m.peak), m.overhead, m.startup,
              m.dataset, ratio((double)m.dataset * 100, (double)net), m.used, m.used, m.rss, sysmem,
              bytes_human(h4, sizeof h4, sysmem));
    size_t lua = script_engine_memory(), scripts = scripts_cache_bytes();
    size_t fvm = script_functions_memory(), fcode = functions_code_bytes();
    char h6[32], h7[32], h8[32];
    sb_addf(b,
              "used_memory_lua:%zu\r\nused_memory_vm_eval:%zu\r\nused_memory_lua_human:%s\r\n"
              "used_memory_scripts_eval:%zu\r\nnumber_of_cached_scripts:%zu\r\nnumber_of_functions:%zu\r\n"
              "number_of_libraries:%zu\r\nused_memory_vm_functions:%zu\r\nused_memory_vm_total:%zu\r\n"
              "used_memory_vm_total_human:%s\r\nused_memory_functions:%zu\r\nused_memory_scripts:%zu\r\n"
              "used_memory_scripts_human:%s\r\nmaxmemory:%llu\r\nmaxmemory_human:%s\r\nmaxmemory_policy:%s\r\n",
              lua, lua, bytes_human(h6, sizeof h6, lua), scripts, scripts_cached(), functions_count(),
              functions_libraries(), fvm, lua + fvm, bytes_human(h7, sizeof h7, lua + fvm), fcode, scripts + fcode,
              bytes_human(h8, sizeof h8, scripts + fcode), srv.cfg.maxmemory,
              bytes_human(h5, sizeof h5, srv.cfg.maxmemory), config_maxmemory_policy_name(srv.cfg.maxmemory_policy));
    sb_addf(b,
              "allocator_frag_ratio:1.00\r\nallocator_frag_bytes:0\r\nallocator_rss_ratio:%.2f\r\n"
              "allocator_rss_bytes:%lld\r\nrss_overhead_ratio:1.00\r\nrss_overhead_bytes:0\r\n"
              "mem_fragmentation_ratio:%.2f\r\nmem_fragmentation_bytes:%lld\r\nmem_not_counted_for_evict:%zu\r\n"
              "mem_replication_backlog:%zu\r\nmem_total_replication_buffers:%zu\r\nmem_clients_slaves:%zu\r\n"
              "mem_clients_normal:%zu\r\nmem_cluster_links:%zu\r\nmem_aof_buffer:0\r\nmem_allocator:libc\r\n"
              "active_defrag_running:0\r\nlazyfree_pending_objects:%zu\r\nlazyfreed_objects:%llu\r\n",
              ratio((double)m.rss, (double)m.used), (long long)m.rss - (long long)m.used,
              ratio((double)m.rss, (double)m.used), (long long)m.rss - (long long)m.used, m.repl.not_counted,
              m.repl.backlog, m.repl.total, m.repl.replicas, m.clients_normal, cluster_links_memory(), lazyfree_pending(), lazyfree_freed());
}

static void sec_persistence(sbuf *b) {
    persist_info(b);
    aof_info(b);
    persist_loading_info(b);
}

static void sec_stats(sbuf *b) {
    const server_stats *s = &srv.stats;
    sb_addf(b,
              "total_connections_received:%llu\r\ntotal_commands_processed:%llu\r\n"
              "instantaneous_ops_per_sec:%lld\r\ntotal_net_input_bytes:%llu\r\ntotal_net_output_bytes:%llu\r\n"
              "total_net_repl_input_bytes:0\r\ntotal_net_repl_output_bytes:0\r\n"
              "instantaneous_input_kbps:%.2f\r\ninstantaneous_output_kbps:%.2f\r\n"
              "instantaneous_input_repl_kbps:0.00\r\ninstantaneous_output_repl_kbps:0.00\r\n"
              "rejected_connections:%llu\r\nsync_full:%lld\r\nsync_partial_ok:%lld\r\nsync_partial_err:%lld\r\n"
              "expired_keys:%llu\r\nexpired_stale_perc:%.2f\r\nexpired_time_cap_reached_count:%llu\r\n"
              "expire_cycle_cpu_milliseconds:%llu\r\nevicted_keys:%llu\r\nevicted_clients:%llu\r\n"
              "total_eviction_exceeded_time:%llu\r\ncurrent_eviction_exceeded_time:%llu\r\n"
              "keyspace_hits:%llu\r\nkeyspace_misses:%llu\r\n",
              (unsigned long long)s->numconnections, (unsigned long long)s->numcommands,
              metric_get(&metrics[MET_OPS]), (unsigned long long)s->net_input_bytes,
              (unsigned long long)s->net_output_bytes, (double)metric_get(&metrics[MET_NET_IN]) / 1024,
              (double)metric_get(&metrics[MET_NET_OUT]) / 1024, (unsigned long long)s->rejected_conn,
              repl_stat(REPL_STAT_SYNC_FULL), repl_stat(REPL_STAT_PARTIAL_OK), repl_stat(REPL_STAT_PARTIAL_ERR),
              (unsigned long long)s->expiredkeys, s->expired_stale_perc * 100,
              (unsigned long long)s->expire_time_cap_count, (unsigned long long)(s->expire_cycle_us / 1000),
              (unsigned long long)s->evictedkeys, (unsigned long long)s->evicted_clients,
              (unsigned long long)evict_exceeded_total_ms(), (unsigned long long)evict_exceeded_current_ms(),
              (unsigned long long)s->keyspace_hits, (unsigned long long)s->keyspace_misses);
    sb_addf(b,
              "pubsub_channels:%zu\r\npubsub_patterns:%zu\r\npubsubshard_channels:%zu\r\nlatest_fork_usec:%lld\r\n"
              "total_forks:%llu\r\nmigrate_cached_sockets:%d\r\nslave_expires_tracked_keys:%zu\r\n"
              "active_defrag_hits:0\r\nactive_defrag_misses:0\r\nactive_defrag_key_hits:0\r\n"
              "active_defrag_key_misses:0\r\ntotal_active_defrag_time:0\r\ncurrent_active_defrag_time:0\r\n"
              "tracking_total_keys:%zu\r\ntracking_total_items:%zu\r\ntracking_total_prefixes:%zu\r\n"
              "unexpected_error_replies:%llu\r\ntotal_error_replies:%llu\r\ndump_payload_sanitizations:0\r\n"
              "total_reads_processed:%llu\r\ntotal_writes_processed:%llu\r\nio_threaded_reads_processed:0\r\n"
              "io_threaded_writes_processed:0\r\nreply_buffer_shrinks:0\r\nreply_buffer_expands:0\r\n",
              pubsub_channel_count(), pubsub_pattern_count(), pubsub_shard_channel_count(), srv.latest_fork_usec,
              (unsigned long long)s->total_forks, migrate_cached_count(), db_replica_tracked_keys(), tracking_table_keys(), tracking_table_items(), tracking_prefix_count(),
              (unsigned long long)s->unexpected_error_replies, (unsigned long long)s->total_error_replies,
              (unsigned long long)s->reads, (unsigned long long)s->writes);
    /* Redis 7.2 (the version ferry reports) ends the section with the ACL denials */
    sb_addf(b, "acl_access_denied_auth:%lld\r\nacl_access_denied_cmd:%lld\r\nacl_access_denied_key:%lld\r\n"
               "acl_access_denied_channel:%lld\r\n",
            acl_denied_count(ACL_DENIED_AUTH), acl_denied_count(ACL_DENIED_CMD), acl_denied_count(ACL_DENIED_KEY),
            acl_denied_count(ACL_DENIED_CHANNEL));
}

static void sec_replication(sbuf *b) { repl_info(b); }

static void cpu_line(sbuf *b, const char *name, const struct rusage *ru) {
    sb_addf(b, "used_cpu_sys%s:%ld.%06ld\r\nused_cpu_user%s:%ld.%06ld\r\n", name, (long)ru->ru_stime.tv_sec,
              (long)ru->ru_stime.tv_usec, name, (long)ru->ru_utime.tv_sec, (long)ru->ru_utime.tv_usec);
}

static void sec_cpu(sbuf *b) {
    struct rusage self, children, thread;
    getrusage(RUSAGE_SELF, &self);
    getrusage(RUSAGE_CHILDREN, &children);
#ifdef RUSAGE_THREAD
    getrusage(RUSAGE_THREAD, &thread);
#else
    thread = self;
#endif
    cpu_line(b, "", &self);
    cpu_line(b, "_children", &children);
    cpu_line(b, "_main_thread", &thread);
}

static void cmdstat_one(command *cmd, void *ud) {
    sbuf *b = ud;
    if (!cmd->calls && !cmd->failed_calls && !cmd->rejected_calls) return;
    sb_addf(b, "cmdstat_%s:calls=%llu,usec=%llu,usec_per_call=%.2f,rejected_calls=%llu,failed_calls=%llu\r\n",
              cmd->fullname, (unsigned long long)cmd->calls, (unsigned long long)cmd->usec,
              cmd->calls ? (double)cmd->usec / (double)cmd->calls : 0.0, (unsigned long long)cmd->rejected_calls,
              (unsigned long long)cmd->failed_calls);
}

static void sec_commandstats(sbuf *b) { command_foreach(cmdstat_one, b); }

static int cmp_errstat(const void *a, const void *b) {
    return strcmp(((const errstat *)a)->name, ((const errstat *)b)->name);
}

/* Sorted by name, as Redis's radix tree of error codes lists them. */
static void sec_errorstats(sbuf *b) {
    errstat sorted[sizeof g_errstats / sizeof g_errstats[0]];
    int n = g_nerrstats;
    memcpy(sorted, g_errstats, sizeof(errstat) * (size_t)n);
    qsort(sorted, (size_t)n, sizeof(errstat), cmp_errstat);
    for (int i = 0; i < n; i++) sb_addf(b, "errorstat_%s:count=%llu\r\n", sorted[i].name, sorted[i].count);
}

static void sec_cluster(sbuf *b) { cluster_info_section(b); }

static void sec_keyspace(sbuf *b) {
    for (int i = 0; i < db_count(); i++) {
        db *d = db_get(i);
        size_t keys = dict_size(&d->keys);
        if (!keys) continue;
        sb_addf(b, "db%d:keys=%zu,expires=%zu,avg_ttl=%lld\r\n", i, keys, d->expires, d->avg_ttl);
    }
}

typedef void section_fn(sbuf *b);

static const struct section {
    const char *name, *title;
    section_fn *fn;             /* NULL: a section with no fields (modules) */
    int in_default;
} sections[] = {
    {"server", "Server", sec_server, 1},
    {"clients", "Clients", sec_clients, 1},
    {"memory", "Memory", sec_memory, 1},
    {"persistence", "Persistence", sec_persistence, 1},
    {"stats", "Stats", sec_stats, 1},
    {"replication", "Replication", sec_replication, 1},
    {"cpu", "CPU", sec_cpu, 1},
    {"modules", "Modules", NULL, 1},
    {"commandstats", "Commandstats", sec_commandstats, 0},
    {"errorstats", "Errorstats", sec_errorstats, 1},
    {"latencystats", "Latencystats", latency_info_section, 0},
    {"cluster", "Cluster", sec_cluster, 1},
    {"keyspace", "Keyspace", sec_keyspace, 1},
};
#define NSECTIONS (sizeof sections / sizeof sections[0])

static unsigned default_mask(void) {
    unsigned m = 0;
    for (size_t i = 0; i < NSECTIONS; i++)
        if (sections[i].in_default) m |= 1u << i;
    return m;
}

/* The sections a request word selects (unknown words select nothing). */
static unsigned word_mask(const char *w, size_t n) {
    span s = {w, n};
    if (span_eq_nocase(s, "default")) return default_mask();
    if (span_eq_nocase(s, "all") || span_eq_nocase(s, "everything")) return (1u << NSECTIONS) - 1;
    for (size_t i = 0; i < NSECTIONS; i++)
        if (span_eq_nocase(s, sections[i].name)) return 1u << i;
    return 0;
}

static void render(sbuf *b, unsigned mask) {
    sb_reserve(b, 1);
    b->p[0] = '\0';
    for (size_t i = 0; i < NSECTIONS; i++) {
        if (!(mask & (1u << i))) continue;
        if (b->len) sb_add(b, "\r\n", 2);
        sb_addf(b, "# %s\r\n", sections[i].title);
        if (sections[i].fn) sections[i].fn(b);
    }
}

/* Renders the space-separated section list (NULL or "" = default) into a
 * zmalloc'd NUL-terminated string; returns its length. */
size_t info_render(const char *list, char **out) {
    unsigned mask = 0;
    int words = 0;
    const char *p = list ? list : "";
    while (*p) {
        while (*p == ' ') p++;
        const char *w = p;
        while (*p && *p != ' ') p++;
        if (p > w) {
            mask |= word_mask(w, (size_t)(p - w));
            words++;
        }
    }
    if (!words) mask = default_mask();
    sbuf b = {0};
    render(&b, mask);
    *out = b.p;
    return b.len;
}

void stats_reset_all(void) {
    memset(&srv.stats, 0, sizeof srv.stats);
    srv.stat_peak_memory = zmalloc_used();
    commands_reset_stats();
    latency_reset_stats();
    errstats_reset();
    lazyfree_reset_stats();
    acl_denied_reset();
    repl_reset_stats();
}

void cmd_info(client *c) {
    unsigned mask = c->argc == 1 ? default_mask() : 0;
    for (int j = 1; j < c->argc; j++) mask |= word_mask(c->argv[j].p, c->argv[j].len);
    sbuf b = {0};
    render(&b, mask);
    reply_verbatim(c, b.p, b.len, "txt");
    zfree(b.p);
}

/* ----------------------------------------------------------- MEMORY ... */

static void kv_int(client *c, const char *k, long long v) {
    reply_bulk_cstr(c, k);
    reply_int(c, v);
}

static void kv_double(client *c, const char *k, double v) {
    reply_bulk_cstr(c, k);
    reply_double(c, v);
}

void cmd_memory_stats(client *c) {
    memfig m;
    mem_figures(&m);
    int ndb = 0;
    for (int i = 0; i < db_count() && i < 64; i++)
        if (dict_size(&db_get(i)->keys)) ndb++;
    size_t net = m.used > m.startup ? m.used - m.startup : 0;
    reply_map(c, 27 + ndb);
    kv_int(c, "peak.allocated", (long long)m.peak);
    kv_int(c, "total.allocated", (long long)m.used);
    kv_int(c, "startup.allocated", (long long)m.startup);
    kv_int(c, "replication.backlog", 0);
    kv_int(c, "clients.slaves", 0);
    kv_int(c, "clients.normal", (long long)m.clients_normal);
    kv_int(c, "cluster.links", (long long)cluster_links_memory());
    kv_int(c, "aof.buffer", 0);
    kv_int(c, "lua.caches", (long long)scripts_cache_bytes());
    kv_int(c, "functions.caches", 0);
    for (int i = 0; i < db_count() && i < 64; i++) {
        if (!dict_size(&db_get(i)->keys)) continue;
        char name[16];
        snprintf(name, sizeof name, "db.%d", i);
        reply_bulk_cstr(c, name);
        reply_map(c, 3);
        kv_int(c, "overhead.hashtable.main", (long long)m.db_main[i]);
        kv_int(c, "overhead.hashtable.expires", (long long)m.db_expires[i]);
        kv_int(c, "overhead.hashtable.slot-to-keys", 0);
    }
    kv_int(c, "overhead.total", (long long)m.overhead);
    kv_int(c, "keys.count", (long long)m.keys);
    kv_int(c, "keys.bytes-per-key", m.keys ? (long long)(net / m.keys) : 0);
    kv_int(c, "dataset.bytes", (long long)m.dataset);
    kv_double(c, "dataset.percentage", ratio((double)m.dataset * 100, (double)net));
    kv_double(c, "peak.percentage", ratio((double)m.used * 100, (double)m.peak));
    kv_int(c, "allocator.allocated", (long long)m.used);
    kv_int(c, "allocator.active", (long long)m.used);
    kv_int(c, "allocator.resident", (long long)m.rss);
    kv_double(c, "allocator-fragmentation.ratio", 1.0);
    kv_int(c, "allocator-fragmentation.bytes", 0);
    kv_double(c, "allocator-rss.ratio", ratio((double)m.rss, (double)m.used));
    kv_int(c, "allocator-rss.bytes", (long long)m.rss - (long long)m.used);
    kv_double(c, "rss-overhead.ratio", 1.0);
    kv_int(c, "rss-overhead.bytes", 0);
    kv_double(c, "fragmentation", ratio((double)m.rss, (double)m.used));
    kv_int(c, "fragmentation.bytes", (long long)m.rss - (long long)m.used);
}

/* MEMORY DOCTOR: Redis's two "nothing to report" answers. */
void cmd_memory_doctor(client *c) {
    static const char empty[] =
        "Hi Sam, this instance is empty or is using very little memory, my issues detector can't be used in "
        "these conditions. Please, leave for your mission on Earth and fill it with some data. The new Sam and I "
        "will be back to our programming as soon as I finished rebooting.\n";
    static const char fine[] = "Hi Sam, I can't find any memory issue in your instance. I can only account for "
                               "what occurs on this base.\n";
    if (zmalloc_used() < 5 * 1024 * 1024) reply_verbatim(c, empty, sizeof empty - 1, "txt");
    else reply_verbatim(c, fine, sizeof fine - 1, "txt");
}
