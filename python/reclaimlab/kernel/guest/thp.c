/* thp: reclaimlab's THP/compaction/NUMA guest workloads (runs as /thp inside the QEMU
 * guest; python/reclaimlab/kernel/workload.py "thpscale" and "usemem"). The simulator's
 * versions are crates/core/src/scenario/thp.rs `thpscale` and `usemem`; sizes follow
 * the same rules, from the guest's MemTotal (mmtests' MEMTOTAL_BYTES).
 *
 *   thp thpscale DATA MADV MAPSIZE_PCT THREADS[,THREADS...] PROACTIVENESS
 *       mmtests thpscale-bench + thpscale.c: per thread count, in order (one phase each):
 *       sync + drop_caches, then NR threads (thread i pinned to the CPUs of node i % nodes)
 *       each map thread_size = (MAPSIZE / NR) & ~(2 MiB - 1) of anonymous memory and
 *       write it, munmap the first half of every aligned 2 MiB ("punch holes"), map a
 *       second region of thread_size / 2 + 2 MiB (MADV_HUGEPAGE if MADV is 1), read
 *       thread_size / 4 of DATA at offset thread_size * i through a shared mapping, wait
 *       at a barrier, then fault MAPSIZE / NR / 2 MiB / 2 strides of the second region:
 *       a store to the stride's first byte, mincore() of its last page (resident: the
 *       fault mapped a THP), a memset of the 2 MiB, each timed. MAPSIZE = MemTotal *
 *       MAPSIZE_PCT / 100. Per count "@@thpscale NR NHUGE NBASE SUM_HUGE_US SUM_BASE_US".
 *   thp usemem DATA DEFRAG THREADS CACHE_PCT USEMEM_PCT PASSES PROACTIVENESS
 *       mmtests usemem-stress-numa-compact as the model runs it: transparent_hugepage/
 *       defrag = DEFRAG; phase 0: one reader per node (pinned to its CPUs) reads its
 *       share of CACHE_PCT % of MemTotal of DATA through a shared mapping (page cache on
 *       every node; the mapping stays); phase 1: THREADS threads pinned to node 0 write
 *       their share of one anonymous region of USEMEM_PCT % of MemTotal (whole 2 MiB),
 *       page by page, then PASSES more times. "@@usemem THREADS ELAPSED_NS
 *       ANON_HUGE_KB ANON_KB" (smaps_rollup at the end, the region still mapped), then
 *       the region's pages per node (usemem_nodes) and snapshot("usemem").
 *
 * PROACTIVENESS >= 0 is written to /proc/sys/vm/compaction_proactiveness (-1: the kernel's,
 * 20), read back as "@@sysctl compaction_proactiveness N".
 * Both first write 0 to /proc/sys/kernel/numa_balancing (6.12 Debian enables NUMA
 * balancing by default with several nodes, CONFIG_NUMA_BALANCING_DEFAULT_ENABLED; the
 * model has none), print "@@sysctl numa_balancing 0", "@@thp_defrag MODE" and "@@nodes N
 * MEMTOTAL_KB". Phases and counters use wl.c's console protocol: "@@phase INDEX WALL_NS",
 * "@@vm NAME DELTA" per changed /proc/vmstat counter, with zram "@@zram ORIG COMPR MEM_USED"
 * at the phase's fullest (sampled every 10 ms), "@@phase-end INDEX"; then "@@done",
 * exit 0. Errors: "@@error TEXT", exit 1.
 *
 * Pageblocks per migrate type (/proc/pagetypeinfo's "Number of blocks type" table) are
 * printed before the first phase and after each as "@@pageblocks WHEN NODE ZONE
 * UNMOVABLE MOVABLE RECLAIMABLE HIGHATOMIC ISOLATE" (WHEN: start, or the phase index).
 * As thpscale's strides begin, thread 0 copies /sys/kernel/debug/lru_gen (MGLRU's
 * generations per memcg and node) as "@@mglru_gens LINE" lines (docs/validation.md, THP).
 * Where tracefs mounts, each phase also counts the tracepoints that say why the kernel
 * reclaimed or compacted (include/trace/events/{vmscan,compaction}.h, 6.12), printed
 * before "@@phase-end" as "@@trace EVENT ORDER RET COUNT" (RET "-" when the event has
 * none): mm_vmscan_wakeup_kswapd (an allocation asks kswapd to run, with its order),
 * mm_vmscan_kswapd_wake (kswapd starts balancing, with the order it balances for),
 * mm_vmscan_direct_reclaim_begin, mm_compaction_suitable (compaction_suitable()'s
 * verdict: COMPACT_CONTINUE, SKIPPED, or NOT_SUITABLE_ZONE from the fragmentation index),
 * mm_compaction_end (one compact_zone() run; RET is MODE/STATUS: async or sync, and how
 * it ended: success, complete (the scanners met), partial_skipped, contended, ...).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/mount.h>
#include <time.h>
#include <unistd.h>

#define PAGE 4096UL
#define HPAGE (2UL << 20)
#define MAXT 64
#define MAXN 64

#include "vmstat.h"
static struct vm before, after;
static uint64_t phase_t0;

static void die(const char *what) {
    printf("@@error thp: %s: %s\n", what, strerror(errno));
    fflush(stdout);
    exit(1);
}

static uint64_t clock_ns(clockid_t id) {
    struct timespec t;
    clock_gettime(id, &t);
    return (uint64_t)t.tv_sec * 1000000000ULL + (uint64_t)t.tv_nsec;
}

static uint64_t now_ns(void) { return clock_ns(CLOCK_MONOTONIC); }


#define TRACING "/sys/kernel/tracing"
static const char *const events[] = {"vmscan/mm_vmscan_wakeup_kswapd", "vmscan/mm_vmscan_kswapd_wake",
                                     "vmscan/mm_vmscan_direct_reclaim_begin", "compaction/mm_compaction_suitable",
                                     "compaction/mm_compaction_end"};
#define NEV (sizeof events / sizeof *events)
static int tracing;

static int write_file(const char *path, const char *s);

static void trace_setup(void) {
    char path[160];
    if (access(TRACING "/events", F_OK) && mount("none", TRACING, "tracefs", 0, NULL)) return;
    write_file(TRACING "/buffer_size_kb", "8192");
    tracing = 1;
    for (unsigned e = 0; e < NEV; e++) {
        snprintf(path, sizeof path, TRACING "/events/%s/enable", events[e]);
        if (write_file(path, "1")) tracing = 0;
    }
}

/* Counts of (event, order, ret) in the trace buffer since it was last cleared. */
struct tcount { char ev[48]; int order; char ret[32]; unsigned long n; };

static void trace_report(void) {
    if (!tracing) return;
    FILE *f = fopen(TRACING "/trace", "r");
    if (!f) return;
    static struct tcount c[256];
    int nc = 0;
    char line[1024];
    while (fgets(line, sizeof line, f)) {
        if (line[0] == '#') continue;
        for (unsigned e = 0; e < NEV; e++) {
            const char *name = strchr(events[e], '/') + 1;
            char key[64];
            snprintf(key, sizeof key, " %s: ", name);
            char *at = strstr(line, key);
            if (!at) continue;
            char *o = strstr(at, "order="), *r = strstr(at, "ret="), *m = strstr(at, "mode="), *st = strstr(at, "status=");
            int order = o ? atoi(o + 6) : -1;
            char ret[32] = "-", mode[12] = "", status[20] = "";
            if (r) sscanf(r + 4, "%31s", ret);
            if (m && st && sscanf(m + 5, "%11s", mode) == 1 && sscanf(st + 7, "%19s", status) == 1)
                snprintf(ret, sizeof ret, "%s/%s", mode, status);
            int i;
            for (i = 0; i < nc; i++)
                if (!strcmp(c[i].ev, name) && c[i].order == order && !strcmp(c[i].ret, ret)) break;
            if (i == nc && nc < 256) {
                snprintf(c[nc].ev, sizeof c[nc].ev, "%s", name);
                c[nc].order = order;
                snprintf(c[nc].ret, sizeof c[nc].ret, "%s", ret);
                c[nc++].n = 0;
            }
            if (i < nc) c[i].n++;
            break;
        }
    }
    fclose(f);
    for (int i = 0; i < nc; i++) printf("@@trace %s %d %s %lu\n", c[i].ev, c[i].order, c[i].ret, c[i].n);
}

static void pageblocks(const char *when) {
    FILE *f = fopen("/proc/pagetypeinfo", "r");
    char line[512];
    int on = 0;
    if (!f) return;
    while (fgets(line, sizeof line, f)) {
        if (!strncmp(line, "Number of blocks type", 21)) { on = 1; continue; }
        int node;
        char zone[32];
        unsigned long v[5];
        if (on && sscanf(line, "Node %d, zone %31s %lu %lu %lu %lu %lu", &node, zone, &v[0], &v[1], &v[2], &v[3], &v[4]) == 7)
            printf("@@pageblocks %s %d %s %lu %lu %lu %lu %lu\n", when, node, zone, v[0], v[1], v[2], v[3], v[4]);
        else if (on) on = 0;
    }
    fclose(f);
}

/* The memory as a count begins, after its drop_caches ("count0", "count1", ...): the free
 * lists per zone and migrate type, free blocks per order 0..10 ("@@freelist WHEN NODE ZONE
 * TYPE N0 .. N10", as init.sh prints them at boot and start), the pageblocks per type
 * ("@@zoneblocks WHEN NODE ZONE UNMOVABLE MOVABLE RECLAIMABLE HIGHATOMIC ISOLATE"), each
 * node's meminfo ("@@nodemem WHEN NODE KEY KB", /sys/devices/system/node/nodeN/meminfo) and
 * zram's mm_stat ("@@zram_at WHEN ORIG COMPR MEM_USED ..."), so what one count leaves to the
 * next can be compared with the model's state at the same point. */
static void snapshot(const char *when) {
    FILE *f = fopen("/proc/pagetypeinfo", "r");
    char line[512];
    if (f) {
        /* Per node: its free lists, then its "Number of blocks type" table. */
        while (fgets(line, sizeof line, f)) {
            int node;
            char zone[32], type[32];
            unsigned long v[11];
            if (sscanf(line, "Node %d, zone %31s type %31s %lu %lu %lu %lu %lu %lu %lu %lu %lu %lu %lu", &node, zone,
                                  type, &v[0], &v[1], &v[2], &v[3], &v[4], &v[5], &v[6], &v[7], &v[8], &v[9], &v[10]) == 14) {
                zone[strcspn(zone, ",")] = 0;
                printf("@@freelist %s %d %s %s", when, node, zone, type);
                for (int i = 0; i < 11; i++) printf(" %lu", v[i]);
                printf("\n");
            } else if (sscanf(line, "Node %d, zone %31s %lu %lu %lu %lu %lu", &node, zone, &v[0], &v[1], &v[2], &v[3], &v[4]) == 7)
                printf("@@zoneblocks %s %d %s %lu %lu %lu %lu %lu\n", when, node, zone, v[0], v[1], v[2], v[3], v[4]);
        }
        fclose(f);
    }
    for (int n = 0; n < MAXN; n++) {
        char path[96];
        snprintf(path, sizeof path, "/sys/devices/system/node/node%d/meminfo", n);
        FILE *m = fopen(path, "r");
        if (!m) break;
        while (fgets(line, sizeof line, m)) {
            int node;
            char key[64];
            unsigned long kb;
            if (sscanf(line, "Node %d %63s %lu", &node, key, &kb) == 3) {
                key[strcspn(key, ":")] = 0;
                printf("@@nodemem %s %d %s %lu\n", when, node, key, kb);
            }
        }
        fclose(m);
    }
    FILE *z = fopen("/sys/block/zram0/mm_stat", "r");
    if (z) {
        if (fgets(line, sizeof line, z)) printf("@@zram_at %s %s", when, line);
        fclose(z);
    }
    fflush(stdout);
}

/* zram at its fullest in a phase: the workloads swap pages back in or free them before a
 * phase ends, so a reading at the end would not see the pool full. A thread reads mm_stat
 * every 10 ms and keeps the sample with the most data stored; phase_end prints it as wl.c's
 * "@@zram ORIG_DATA_SIZE COMPR_DATA_SIZE MEM_USED_TOTAL" (the model's
 * swap.zram.compression_ratio is ORIG / MEM_USED_TOTAL: bytes stored per byte of pool). */
#define MM_STAT "/sys/block/zram0/mm_stat"
static struct {
    pthread_t th;
    int running, stop;
    unsigned long long orig, compr, used;
} zs;

static void zram_sample(void) {
    FILE *z = fopen(MM_STAT, "r");
    unsigned long long o, c, u;
    if (!z) return;
    if (fscanf(z, "%llu %llu %llu", &o, &c, &u) == 3 && o > zs.orig) { zs.orig = o; zs.compr = c; zs.used = u; }
    fclose(z);
}

static void *zram_sampler(void *arg) {
    (void)arg;
    const struct timespec tick = {0, 10 * 1000 * 1000};
    while (!__atomic_load_n(&zs.stop, __ATOMIC_RELAXED)) {
        zram_sample();
        nanosleep(&tick, NULL);
    }
    return NULL;
}

static void phase_start(void) {
    zs.orig = zs.compr = zs.used = 0;
    zs.stop = 0;
    zs.running = access(MM_STAT, R_OK) == 0 && pthread_create(&zs.th, NULL, zram_sampler, NULL) == 0;
    if (tracing) {
        int fd = open(TRACING "/trace", O_WRONLY | O_TRUNC);
        if (fd >= 0) close(fd);
    }
    read_vmstat(&before);
    phase_t0 = now_ns();
}

static void phase_end(unsigned idx) {
    uint64_t wall = now_ns() - phase_t0;
    read_vmstat(&after);
    printf("@@phase %u %llu\n", idx, (unsigned long long)wall);
    for (int i = 0; i < after.n; i++)
        if (i < before.n && after.val[i] != before.val[i])
            printf("@@vm %s %lld\n", after.name[i], (long long)(after.val[i] - before.val[i]));
    trace_report();
    if (zs.running) {
        __atomic_store_n(&zs.stop, 1, __ATOMIC_RELAXED);
        pthread_join(zs.th, NULL);
        zs.running = 0;
        zram_sample();
        if (zs.orig) printf("@@zram %llu %llu %llu\n", zs.orig, zs.compr, zs.used);
    }
    printf("@@phase-end %u\n", idx);
    char when[16];
    snprintf(when, sizeof when, "%u", idx);
    pageblocks(when);
    fflush(stdout);
}

static int write_file(const char *path, const char *s) {
    int fd = open(path, O_WRONLY);
    if (fd < 0) return -1;
    ssize_t n = write(fd, s, strlen(s));
    close(fd);
    return n == (ssize_t)strlen(s) ? 0 : -1;
}

static unsigned long long memtotal_bytes(void) {
    FILE *f = fopen("/proc/meminfo", "r");
    char k[64];
    unsigned long long v = 0, kb = 0;
    if (!f) die("/proc/meminfo");
    while (fscanf(f, "%63s %llu kB", k, &v) == 2)
        if (!strcmp(k, "MemTotal:")) kb = v;
    fclose(f);
    return kb << 10;
}

/* Nodes and their CPUs (/sys/devices/system/node/nodeN/cpulist); without NUMA one node
 * with every CPU. */
static int nr_nodes;
static cpu_set_t node_cpus[MAXN];

static void parse_cpulist(const char *s, cpu_set_t *set) {
    CPU_ZERO(set);
    while (*s && *s != '\n') {
        char *end;
        long a = strtol(s, &end, 10), b = a;
        if (end == s) break;
        if (*end == '-') b = strtol(end + 1, &end, 10);
        for (long c = a; c <= b && c < CPU_SETSIZE; c++) CPU_SET(c, set);
        s = *end == ',' ? end + 1 : end;
    }
}

static void find_nodes(void) {
    nr_nodes = 0;
    for (int n = 0; n < MAXN; n++) {
        char path[96], buf[256];
        snprintf(path, sizeof path, "/sys/devices/system/node/node%d/cpulist", n);
        FILE *f = fopen(path, "r");
        if (!f) break;
        if (!fgets(buf, sizeof buf, f)) buf[0] = 0;
        fclose(f);
        parse_cpulist(buf, &node_cpus[n]);
        nr_nodes++;
    }
    if (!nr_nodes) {
        nr_nodes = 1;
        CPU_ZERO(&node_cpus[0]);
        for (long c = 0; c < sysconf(_SC_NPROCESSORS_ONLN) && c < CPU_SETSIZE; c++) CPU_SET(c, &node_cpus[0]);
    }
}

/* Pin the calling thread to the CPUs of node n (a node without CPUs: leave it). */
static void pin_node(int n) {
    if (CPU_COUNT(&node_cpus[n])) pthread_setaffinity_np(pthread_self(), sizeof(cpu_set_t), &node_cpus[n]);
}

/* An anonymous mapping of len bytes starting on a 2 MiB boundary (the slack unmapped),
 * as the model's VMAs are. */
static char *map_aligned(size_t len) {
    char *p = mmap(NULL, len + HPAGE, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (p == MAP_FAILED) die("mmap anon");
    uintptr_t a = ((uintptr_t)p + HPAGE - 1) & ~(HPAGE - 1);
    if (a > (uintptr_t)p) munmap(p, a - (uintptr_t)p);
    uintptr_t end = (uintptr_t)p + len + HPAGE;
    if (end > a + len) munmap((char *)(a + len), end - (a + len));
    return (char *)a;
}

static int thp_madv; /* thpscale: MADV_HUGEPAGE on the second region */
static char *data_map;
static size_t data_len;
static volatile uint64_t sink;

static void map_data(const char *path, size_t need) {
    int fd = open(path, O_RDONLY);
    if (fd < 0) die(path);
    off_t size = lseek(fd, 0, SEEK_END);
    if (size < (off_t)need) { errno = EFBIG; die("data file smaller than the workload needs"); }
    data_len = need;
    data_map = mmap(NULL, need, PROT_READ, MAP_SHARED, fd, 0);
    if (data_map == MAP_FAILED) die("mmap data");
    close(fd);
}

/* ---- the first THP faults' cost ---- */

/* The THP fault's own cost on the guest's clock: the first store to each of the first
 * PROBE_MAX 2 MiB of the run's first anonymous region, made while memory is still free (no
 * reclaim, no compaction), each store's CPU time (the faulting thread's); "@@thpfault
 * MEDIAN_NS N" once a run. Under TCG clearing a huge page (clear_huge_page's 512
 * clear_page) is emulated store by store, far slower against the rest of the kernel's work
 * than on hardware; validate's --cpu-cost measured gives the model's cost.clear_page_ns
 * from it (thp_compare). */
#define PROBE_MAX 32
static uint64_t probe_ns[PROBE_MAX];
static int probe_n;

/* The store's CPU time, not its wall time: usemem's threads share node 0's one CPU. */
static void probe_store(char *p, int probing) {
    if (!probing || probe_n >= PROBE_MAX) { *(volatile char *)p = 1; return; }
    uint64_t t0 = clock_ns(CLOCK_THREAD_CPUTIME_ID);
    *(volatile char *)p = 1;
    probe_ns[probe_n++] = clock_ns(CLOCK_THREAD_CPUTIME_ID) - t0;
}

static int cmp_u64(const void *a, const void *b) {
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return (x > y) - (x < y);
}

static void probe_report(void) {
    static int done;
    if (done || !probe_n) return;
    done = 1;
    qsort(probe_ns, (size_t)probe_n, sizeof probe_ns[0], cmp_u64);
    printf("@@thpfault %llu %d\n", (unsigned long long)probe_ns[probe_n / 2], probe_n);
}

/* ---- thpscale ---- */

struct tjob {
    int idx, nr;
    size_t thread_size, nr_hpages;
    int probe; /* time the first THP faults (the first count) */
    pthread_barrier_t *bar;
    uint64_t nhuge, nbase;
    double sum_huge_us, sum_base_us;
};

/* MGLRU's generations per memcg and node as the strides begin ("@@mglru_gens LINE" per line
 * of /sys/kernel/debug/lru_gen: "memcg ID PATH", " node N", "  SEQ AGE_MS ANON FILE"),
 * so the model's choice between anon and file can be checked against the kernel's. */
static void lru_gen_dump(void) {
    FILE *f = fopen("/sys/kernel/debug/lru_gen", "r");
    if (!f) return;
    char line[256];
    while (fgets(line, sizeof line, f)) printf("@@mglru_gens %s", line);
    fclose(f);
    fflush(stdout);
}

static void *thpscale_worker(void *arg) {
    struct tjob *j = arg;
    pin_node(j->idx % nr_nodes);
    size_t ts = j->thread_size;
    char *first = map_aligned(ts);
    for (size_t off = 0; off < ts; off += HPAGE) { /* ts: whole 2 MiB */
        probe_store(first + off, j->idx == 0 && j->probe);
        memset(first + off, 1, HPAGE);
    }
    for (size_t off = 0; off < ts; off += HPAGE)
        if (munmap(first + off, HPAGE / 2)) die("munmap hole");
    char *second = map_aligned(ts / 2 + HPAGE);
    if (thp_madv && madvise(second, ts / 2 + HPAGE, MADV_HUGEPAGE)) die("madvise");
    const char *f = data_map + ts * (size_t)j->idx;
    uint64_t s = 0;
    for (size_t off = 0; off < ts / 4; off += PAGE) s += (unsigned char)f[off];
    sink += s;
    pthread_barrier_wait(j->bar);
    if (j->idx == 0) lru_gen_dump();
    for (size_t k = 0; k < j->nr_hpages; k++) {
        char *p = second + k * HPAGE;
        uint64_t t0 = now_ns();
        *(volatile char *)p = 1;
        unsigned char vec = 0;
        if (mincore(p + HPAGE - PAGE, PAGE, &vec)) die("mincore");
        memset(p, 2, HPAGE);
        double us = (now_ns() - t0) / 1000.0;
        if (vec & 1) { j->nhuge++; j->sum_huge_us += us; }
        else { j->nbase++; j->sum_base_us += us; }
    }
    for (size_t off = 0; off < ts; off += HPAGE) munmap(first + off + HPAGE / 2, HPAGE / 2);
    munmap(second, ts / 2 + HPAGE);
    return NULL;
}

static int thpscale(char **argv) {
    const char *data = argv[2];
    thp_madv = atoi(argv[3]);
    int pct = atoi(argv[4]);
    unsigned long long total = memtotal_bytes() * (unsigned long long)pct / 100;
    map_data(data, total + (16UL << 20));
    unsigned idx = 0;
    for (char *tok = strtok(argv[5], ","); tok; tok = strtok(NULL, ","), idx++) {
        int nr = atoi(tok);
        if (nr < 1 || nr > MAXT) { errno = EINVAL; die("thread count"); }
        phase_start();
        sync();
        if (write_file("/proc/sys/vm/drop_caches", "3")) die("drop_caches");
        char when[16];
        snprintf(when, sizeof when, "count%u", idx);
        snapshot(when);
        struct tjob jobs[MAXT];
        pthread_t th[MAXT];
        pthread_barrier_t bar;
        pthread_barrier_init(&bar, NULL, (unsigned)nr);
        for (int i = 0; i < nr; i++) {
            jobs[i] = (struct tjob){.idx = i, .nr = nr, .thread_size = (total / nr) & ~(HPAGE - 1),
                                    .nr_hpages = total / nr / HPAGE / 2, .probe = idx == 0, .bar = &bar};
            if (pthread_create(&th[i], NULL, thpscale_worker, &jobs[i])) die("pthread_create");
        }
        uint64_t nh = 0, nb = 0;
        double sh = 0, sb = 0;
        for (int i = 0; i < nr; i++) {
            pthread_join(th[i], NULL);
            nh += jobs[i].nhuge; nb += jobs[i].nbase; sh += jobs[i].sum_huge_us; sb += jobs[i].sum_base_us;
        }
        pthread_barrier_destroy(&bar);
        printf("@@thpscale %d %llu %llu %.0f %.0f\n", nr, (unsigned long long)nh, (unsigned long long)nb, sh, sb);
        probe_report();
        phase_end(idx);
    }
    return 0;
}

/* ---- usemem ---- */

struct ujob {
    int node;
    char *start;
    size_t len;
    int passes, probe;
};

static void *reader(void *arg) {
    struct ujob *j = arg;
    pin_node(j->node);
    uint64_t s = 0;
    for (size_t off = 0; off < j->len; off += PAGE) s += (unsigned char)j->start[off];
    sink += s;
    return NULL;
}

static void *usemem_worker(void *arg) {
    struct ujob *j = arg;
    pin_node(0);
    for (size_t off = 0; off < j->len; off += PAGE) {
        if (off % HPAGE == 0) probe_store(j->start + off, j->probe);
        j->start[off] = 1;
    }
    for (int pass = 1; pass <= j->passes; pass++)
        for (size_t off = 0; off < j->len; off += PAGE) j->start[off] = (char)(pass + 1);
    return NULL;
}

static void smaps_anon(unsigned long long *huge_kb, unsigned long long *anon_kb) {
    FILE *f = fopen("/proc/self/smaps_rollup", "r");
    char line[256];
    *huge_kb = *anon_kb = 0;
    if (!f) return;
    while (fgets(line, sizeof line, f)) {
        sscanf(line, "AnonHugePages: %llu", huge_kb);
        sscanf(line, "Anonymous: %llu", anon_kb);
    }
    fclose(f);
}

/* The region's resident pages per node, "@@usemem_nodes PAGES_N0 PAGES_N1 ...": its VMA's
 * "N<node>=<pages>" fields in /proc/self/numa_maps (THPs counted in base pages, swapped-out
 * pages in none; fs/proc/task_mmu.c 6.12 show_numa_map). */
static void usemem_nodes(const char *region) {
    char line[4096], head[32];
    unsigned long long pages[MAXN] = {0};
    snprintf(head, sizeof head, "%lx ", (unsigned long)region);
    FILE *f = fopen("/proc/self/numa_maps", "r");
    while (f && fgets(line, sizeof line, f)) {
        if (strncmp(line, head, strlen(head))) continue;
        for (char *t = strtok(line, " \n"); t; t = strtok(NULL, " \n")) {
            int n;
            unsigned long long v;
            if (sscanf(t, "N%d=%llu", &n, &v) == 2 && n >= 0 && n < MAXN) pages[n] = v;
        }
    }
    if (f) fclose(f);
    printf("@@usemem_nodes");
    for (int n = 0; n < nr_nodes; n++) printf(" %llu", pages[n]);
    printf("\n");
}

static int usemem(char **argv) {
    const char *data = argv[2], *defrag = argv[3];
    int threads = atoi(argv[4]), cache_pct = atoi(argv[5]), usemem_pct = atoi(argv[6]), passes = atoi(argv[7]);
    if (threads < 1 || threads > MAXT) { errno = EINVAL; die("threads"); }
    if (write_file("/sys/kernel/mm/transparent_hugepage/defrag", defrag)) die("transparent_hugepage/defrag");
    unsigned long long total = memtotal_bytes();
    size_t cache = (size_t)(total / PAGE * (unsigned long long)cache_pct / 100) * PAGE;
    map_data(data, cache);
    phase_start();
    struct ujob r[MAXN];
    pthread_t th[MAXT > MAXN ? MAXT : MAXN];
    size_t share = cache / PAGE / (size_t)nr_nodes * PAGE;
    for (int n = 0; n < nr_nodes; n++) {
        r[n] = (struct ujob){.node = n, .start = data_map + share * (size_t)n,
                             .len = n == nr_nodes - 1 ? cache - share * (size_t)n : share};
        if (pthread_create(&th[n], NULL, reader, &r[n])) die("pthread_create");
    }
    for (int n = 0; n < nr_nodes; n++) pthread_join(th[n], NULL);
    phase_end(0);
    phase_start();
    size_t hp = (size_t)(total / PAGE * (unsigned long long)usemem_pct / 100) * PAGE / HPAGE;
    if (hp < (size_t)threads) hp = (size_t)threads;
    size_t pages = hp * HPAGE, per = (hp + (size_t)threads - 1) / (size_t)threads * HPAGE;
    char *region = map_aligned(pages);
    struct ujob u[MAXT];
    uint64_t t0 = now_ns();
    for (int i = 0; i < threads; i++) {
        size_t a = per * (size_t)i, b = a + per < pages ? a + per : pages;
        u[i] = (struct ujob){.node = 0, .start = region + a, .len = b > a ? b - a : 0, .passes = passes, .probe = i == 0};
        if (pthread_create(&th[i], NULL, usemem_worker, &u[i])) die("pthread_create");
    }
    for (int i = 0; i < threads; i++) pthread_join(th[i], NULL);
    uint64_t elapsed = now_ns() - t0;
    unsigned long long huge_kb, anon_kb;
    smaps_anon(&huge_kb, &anon_kb);
    printf("@@usemem %d %llu %llu %llu\n", threads, (unsigned long long)elapsed, huge_kb, anon_kb);
    probe_report();
    usemem_nodes(region);
    snapshot("usemem");
    phase_end(1);
    munmap(region, pages);
    return 0;
}

int main(int argc, char **argv) {
    setvbuf(stdout, NULL, _IOLBF, 0);
    int thpscale_args = argc == 7 && !strcmp(argv[1], "thpscale");
    int usemem_args = argc == 9 && !strcmp(argv[1], "usemem");
    if (!thpscale_args && !usemem_args) {
        fprintf(stderr, "usage: thp thpscale DATA MADV MAPSIZE_PCT THREADS[,...] PROACTIVENESS | "
                        "thp usemem DATA DEFRAG THREADS CACHE_PCT USEMEM_PCT PASSES PROACTIVENESS\n");
        return 2;
    }
    const char *proact = argv[argc - 1], *pfile = "/proc/sys/vm/compaction_proactiveness";
    if (atoi(proact) >= 0 && write_file(pfile, proact)) die("compaction_proactiveness");
    FILE *pf = fopen(pfile, "r");
    int pv;
    if (pf) {
        if (fscanf(pf, "%d", &pv) == 1) printf("@@sysctl compaction_proactiveness %d\n", pv);
        fclose(pf);
    }
    find_nodes();
    trace_setup();
    pageblocks("start");
    if (write_file("/proc/sys/kernel/numa_balancing", "0") == 0) printf("@@sysctl numa_balancing 0\n");
    printf("@@nodes %d %llu\n", nr_nodes, memtotal_bytes() >> 10);
    int rc = thpscale_args ? thpscale(argv) : usemem(argv);
    char buf[128] = "";
    FILE *f = fopen("/sys/kernel/mm/transparent_hugepage/defrag", "r");
    if (f) {
        if (!fgets(buf, sizeof buf, f)) buf[0] = 0;
        fclose(f);
        buf[strcspn(buf, "\n")] = 0;
        printf("@@thp_defrag %s\n", buf);
    }
    printf("@@done %llu\n", (unsigned long long)(sink & 1));
    fflush(stdout);
    return rc;
}
