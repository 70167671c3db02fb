/* wl: reclaimlab's guest workload replayer (runs as /wl inside the QEMU guest).
 *
 * It executes, access by access, an "ops" file the host wrote (python/reclaimlab/kernel/
 * ops.py): every page access the simulator replays is one op here, so guest and simulator
 * see the same page sequence by construction (the generators run on the host only).
 * The ops file is read whole with O_DIRECT (so it does not enter the page cache) into
 * mlocked memory *before* the workers move into the workload's cgroups: a cgroup-v2
 * charge stays where it was made, so only the workload's own pages count against memory.max.
 *
 *   wl -x ROOT CWD PROCS TICK_US PROGRAM [ARGS...]
 *       run a real program instead of ops (python/reclaimlab/programs): the child joins
 *       the cgroup of PROCS, chroots into ROOT, changes to CWD and executes PROGRAM with
 *       the environment LC_ALL=C PATH=/usr/bin:/bin (the one it was recorded in), stdin and
 *       stdout on /dev/null; the whole run is one phase, reported as below. A program that
 *       exits non-zero or is killed is an "@@error".
 *   wl OPS DATA PROCS[,PROCS...] [TICK_US]
 *       replay OPS (file pages are 4 KiB pages of DATA) in one worker process per cgroup:
 *       worker i writes its pid into the i-th cgroup.procs file ("-": it stays in the root
 *       cgroup). The workers take turns in the order of the ops (a CGROUP op hands the turn
 *       to another worker through a futex), so the kernel sees the trace's interleaving;
 *       each has its own anonymous mapping and maps DATA itself (MAP_SHARED: one page
 *       cache). At each phase end the worker that reaches it prints every cgroup's
 *       memory.stat. With TICK_US > 0, one sleeper per CPU (outside the
 *       cgroup) wakes every TICK_US microseconds: each wakeup switches address spaces, which
 *       makes QEMU's TCG flush its soft TLB, so PTE accessed bits cleared by reclaim are set
 *       again on the next access as on hardware (docs/kernel.md, "Accessed bits under TCG").
 *
 * Environment:
 *   WL_MERGE=1 (default) merges consecutive PREADs into one read of up to 64 KiB and marks
 *       DATA POSIX_FADV_RANDOM (the laboratory setting, without readahead); WL_MERGE=0 issues
 *       one 4 KiB pread per access and leaves DATA's readahead alone: with readahead on, the
 *       request size steers it (req_count), and the simulator reads 4 KiB per access.
 *   WL_REPORT=CMD runs CMD (the memory layout report of /init) once the ops are loaded,
 *       just before joining the cgroup and starting the workload.
 *   WL_PFNS=1 prints, at the end of the first phase, where the anon pages sit in physical
 *       memory: "@@pfns PRESENT MIN P10 P50 P90 MAX" (from /proc/self/pagemap; root only).
 * The anon mapping follows transparent_hugepage/enabled: MADV_HUGEPAGE under [madvise] (an
 * application asking for THPs), nothing under [always], MADV_NOHUGEPAGE under [never].
 *
 * Ops file (little endian): "RLWLOPS1", u64 nr_ops, u64 file_pages, u64 anon_pages, u64
 * nr_cgroups (0 read as 1), 24 bytes reserved (header 64 bytes), then nr_ops u32 words:
 * bits 28..31 the op, bits 0..27 the page.
 *   0 PREAD   pread(DATA, 4 KiB at page); with WL_MERGE=1 consecutive PREADs are merged up to 64 KiB
 *   1 MAPREAD read one byte of DATA mapped MAP_SHARED read-only
 *   2 ANONW   write anon page: 1/8 pseudo-random bytes, the rest zero (lz4 ~7:1 in zram)
 *   3 ANONR   read one word of anon page
 *   4 SLEEP   advance the workload's schedule by page microseconds and sleep until the clock
 *             reaches it (clock_nanosleep TIMER_ABSTIME, from @@start): the CPU idles, the
 *             clock runs, and time lost to slow work or a late wakeup is made up by the next
 *             sleep instead of adding up (the simulator's sim.trace_pacing=schedule)
 *   5 PWRITE  pwrite(DATA, 4 KiB at page): dirties the page (DATA is opened read-write when
 *             the ops write)
 *   6 MAPWRITE write one byte of DATA mapped MAP_SHARED read-write
 *   7 CGROUP  the next ops run in cgroup page (an index into PROCS): hand over the turn
 *   8 RECLAIM write to a cgroup's memory.reclaim (proactive reclaim); two words: bits 0..7
 *             the cgroup (an index into PROCS; "-" is /sys/fs/cgroup), bits 8..15 swappiness + 1
 *             (0: none), then a word of pages: writes "PAGES*4096" or "PAGES*4096 swappiness=N"
 *             and prints "@@reclaim CGROUP BYTES RESULT" (RESULT 0, or the errno the kernel
 *             returned: EAGAIN (11) when reclaim could not meet the request; others are errors)
 *   15 PHASE  end the current phase; page = index of the next phase
 * At every phase end it prints "@@phase INDEX WALL_NS" and one "@@vm NAME DELTA" line per
 * /proc/vmstat counter that changed, zram's "@@zram ORIG_DATA_SIZE COMPR_DATA_SIZE MEM_USED_TOTAL" if there
 * is a zram device, "@@memstat CGROUP NAME VALUE" for each nonzero memory.stat entry of each
 * cgroup (values since the cgroups were made) and its memory.current (as NAME
 * "memory.current"), then "@@phase-end INDEX". After the last op,
 * when the workers have exited, per cgroup "@@cgevents CGROUP NAME VALUE" (memory.events)
 * and "@@cgpeak CGROUP BYTES" (memory.peak), and "@@wcpu NS": the CPU time the workers (or
 * the program and its children) spent from the start to their exit, user and system
 * (CLOCK_PROCESS_CPUTIME_ID, getrusage RUSAGE_CHILDREN), for a cost per unit of the
 * task's work under TCG (validate --cpu-cost measured).
 * Errors: "@@error TEXT", exit 1.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sched.h>
#include <signal.h>
#include <linux/futex.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define PAGE 4096UL
#define CHUNK (1UL << 20)
#define MAXCG 8 /* python/reclaimlab/kernel/workload.py MAX_CGROUPS */
#define DONE 0xFFFFFFFFu /* turn: the ops are done */
#define FAILED 0xFFFFFFFEu /* turn: a worker died */
#define WAIT 0xFFFFFFFDu /* turn: not started */

enum { PREAD = 0, MAPREAD = 1, ANONW = 2, ANONR = 3, SLEEP = 4, PWRITE = 5, MAPWRITE = 6, CGROUP = 7, RECLAIM = 8, PHASE = 15 };

#include "vmstat.h"

/* What the workers share (MAP_SHARED, made before they fork). */
struct shared {
    uint32_t turn;                  /* the cgroup index whose worker runs; DONE, FAILED */
    uint64_t pos;                   /* the next op */
    uint64_t start_ns, schedule_ns; /* the SLEEP ops' schedule */
    uint64_t phase_t0;
    uint64_t sink;                  /* what the workers read, so that no read is optimised away */
    uint64_t cpu_ns;                /* the workers' CPU time from their first turn to their exit */
    struct vm before;               /* /proc/vmstat at the last phase end */
};
static struct shared *sh;

static long futex(uint32_t *uaddr, int op, uint32_t val) {
    return syscall(SYS_futex, uaddr, op, val, NULL, NULL, 0);
}

static void set_turn(uint32_t t) {
    __atomic_store_n(&sh->turn, t, __ATOMIC_SEQ_CST);
    futex(&sh->turn, FUTEX_WAKE, MAXCG + 1);
}

static void die(const char *what) {
    printf("@@error %s: %s\n", what, strerror(errno));
    fflush(stdout);
    if (sh) set_turn(FAILED);
    exit(1);
}


static uint64_t now_ns(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (uint64_t)t.tv_sec * 1000000000ULL + (uint64_t)t.tv_nsec;
}

static struct vm after;
/* Each cgroup's directory ("" for the root cgroup: nothing to print). */
static char cgdir[MAXCG][256];
static unsigned ncg;

/* "@@TAG CGROUP KEY VALUE" for each nonzero "KEY VALUE" line of cgroup file FILE. */
static void print_cgroup_file(const char *tag, const char *file) {
    for (unsigned c = 0; c < ncg; c++) {
        if (!cgdir[c][0]) continue;
        char path[512], key[64];
        unsigned long long v;
        snprintf(path, sizeof path, "%.255s/%.200s", cgdir[c], file);
        FILE *f = fopen(path, "r");
        if (!f) continue;
        while (fscanf(f, "%63s %llu", key, &v) == 2)
            if (v) printf("@@%s %u %s %llu\n", tag, c, key, v);
        fclose(f);
    }
}

/* A one-number cgroup file ("memory.current", "memory.peak") of cgroup c. */
static int read_cgroup_value(unsigned c, const char *file, unsigned long long *v) {
    char path[512];
    snprintf(path, sizeof path, "%.255s/%s", cgdir[c], file);
    FILE *f = fopen(path, "r");
    int ok = f && fscanf(f, "%llu", v) == 1;
    if (f) fclose(f);
    return ok;
}

/* MGLRU's generations at a phase end, one "@@mglru_gen MEMCG_PATH NODE SEQ AGE_MS ANON FILE"
 * line per generation of /sys/kernel/debug/lru_gen ("memcg ID PATH", " node N", then
 * "  SEQ AGE_MS ANON FILE" lines; mm/vmscan.c lru_gen_seq_show): how often the kernel aged
 * (max_seq) and what each generation holds, beside the model's lru_gen.* metrics. With
 * MGLRU off the kernel lists empty generations (seq 0-3); nothing without debugfs. */
static void print_lru_gens(void) {
    FILE *f = fopen("/sys/kernel/debug/lru_gen", "r");
    if (!f) return;
    char line[256], path[200] = "?";
    int node = -1;
    while (fgets(line, sizeof line, f)) {
        unsigned long long seq, age, anon, file;
        int id;
        if (sscanf(line, " memcg %d %199s", &id, path) == 2) continue;
        if (sscanf(line, " node %d", &node) == 1) continue;
        if (sscanf(line, " %llu %llu %llu %llu", &seq, &age, &anon, &file) == 4)
            printf("@@mglru_gen %s %d %llu %llu %llu %llu\n", path, node, seq, age, anon, file);
    }
    fclose(f);
}

static void phase_end(unsigned idx) {
    struct vm *before = &sh->before;
    read_vmstat(&after);
    printf("@@phase %u %llu\n", idx, (unsigned long long)(now_ns() - sh->phase_t0));
    for (int i = 0; i < after.n; i++) {
        /* the counter set is fixed at boot: same index, same name */
        if (i < before->n && after.val[i] != before->val[i])
            printf("@@vm %s %lld\n", after.name[i], (long long)(after.val[i] - before->val[i]));
    }
    FILE *z = fopen("/sys/block/zram0/mm_stat", "r");
    unsigned long long orig, compr, used;
    if (z) {
        /* Documentation/admin-guide/blockdev/zram.rst: orig_data_size compr_data_size
         * mem_used_total (the zsmalloc pool's pages, in bytes) ... */
        if (fscanf(z, "%llu %llu %llu", &orig, &compr, &used) == 3)
            printf("@@zram %llu %llu %llu\n", orig, compr, used);
        fclose(z);
    }
    print_cgroup_file("memstat", "memory.stat");
    print_lru_gens();
    for (unsigned c = 0; c < ncg; c++) {
        unsigned long long cur;
        if (cgdir[c][0] && read_cgroup_value(c, "memory.current", &cur)) printf("@@memstat %u memory.current %llu\n", c, cur);
    }
    printf("@@phase-end %u\n", idx);
    fflush(stdout);
    read_vmstat(before);
    sh->phase_t0 = now_ns();
}

/* The selected mode of a sysfs "a [b] c" file, "" if unreadable. */
static const char *sysfs_mode(const char *path, char *buf, size_t n) {
    FILE *f = fopen(path, "r");
    buf[0] = 0;
    if (f) {
        if (!fgets(buf, (int)n, f)) buf[0] = 0;
        fclose(f);
    }
    char *l = strchr(buf, '['), *r = l ? strchr(l, ']') : NULL;
    if (!l || !r) return "";
    *r = 0;
    return l + 1;
}

static int cmp_u64(const void *a, const void *b) {
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? -1 : x > y;
}

/* Physical frames of the anon mapping's present pages (pagemap bit 63, PFN bits 0..54):
 * the mapping's entries in one read. */
static void print_pfns(const char *anon, uint64_t pages) {
    int fd = open("/proc/self/pagemap", O_RDONLY);
    uint64_t *pfn = malloc(pages * sizeof *pfn), n = 0;
    ssize_t want = (ssize_t)(pages * sizeof *pfn);
    if (fd < 0 || !pfn || pread(fd, pfn, (size_t)want, (off_t)((uintptr_t)anon / PAGE * 8)) != want) {
        if (fd >= 0) close(fd);
        free(pfn);
        return;
    }
    close(fd);
    for (uint64_t i = 0; i < pages; i++)
        if ((pfn[i] >> 63) && (pfn[i] & ((1ULL << 55) - 1))) pfn[n++] = pfn[i] & ((1ULL << 55) - 1);
    if (n) {
        qsort(pfn, n, sizeof *pfn, cmp_u64);
        printf("@@pfns %llu %llu %llu %llu %llu %llu\n", (unsigned long long)n, (unsigned long long)pfn[0],
               (unsigned long long)pfn[n / 10], (unsigned long long)pfn[n / 2], (unsigned long long)pfn[n * 9 / 10],
               (unsigned long long)pfn[n - 1]);
    }
    free(pfn);
}

static uint64_t splitmix64(uint64_t *s) {
    uint64_t z = (*s += 0x9E3779B97F4A7C15ULL);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
    return z ^ (z >> 31);
}

/* One worker's view of the workload: its own mappings and read buffer. */
struct worker {
    unsigned idx;
    int dfd;
    char *map, *anon;
    uint64_t file_pages, anon_pages;
    const uint32_t *ops;
    uint64_t nr_ops;
    int merge, pfns;
    uint64_t rng, sink;
};

static char rbuf[16 * PAGE] __attribute__((aligned(4096)));

/* Wait for our turn; false when the ops are done or a worker failed. */
static int wait_turn(unsigned idx) {
    for (;;) {
        uint32_t t = __atomic_load_n(&sh->turn, __ATOMIC_SEQ_CST);
        if (t == idx) return 1;
        if (t == DONE) return 0;
        if (t == FAILED) exit(1);
        futex(&sh->turn, FUTEX_WAIT, t);
    }
}

/* Map DATA and the anon space in this worker (after it joined its cgroup). */
static void worker_map(struct worker *w, const char *data, int writes) {
    if (w->file_pages) {
        w->dfd = open(data, writes ? O_RDWR : O_RDONLY);
        if (w->dfd < 0) die(data);
        if (w->merge) posix_fadvise(w->dfd, 0, 0, POSIX_FADV_RANDOM);
        w->map = mmap(NULL, w->file_pages * PAGE, PROT_READ | (writes ? PROT_WRITE : 0), MAP_SHARED, w->dfd, 0);
        if (w->map == MAP_FAILED) die("mmap data");
        /* No MADV_RANDOM: VM_RAND_READ makes reclaim ignore this mapping's accessed bits
         * (vma_has_recency(), v6.3+). /init turns readahead off on the disk instead. */
    }
    if (w->anon_pages) {
        /* A length that is a multiple of 2 MiB gets a PMD-aligned address (mm/mmap.c 6.12
         * __get_unmapped_area), so anon pages 512 i .. 512 i + 511 share a huge page, as the
         * simulator's trace lays them out (kernel/ops.py write_sim_trace). */
        size_t len = (w->anon_pages * PAGE + (2u << 20) - 1) & ~(size_t)((2u << 20) - 1);
        w->anon = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
        if (w->anon == MAP_FAILED) die("mmap anon");
        char tbuf[128];
        const char *thp = sysfs_mode("/sys/kernel/mm/transparent_hugepage/enabled", tbuf, sizeof tbuf);
        if (!strcmp(thp, "madvise")) madvise(w->anon, w->anon_pages * PAGE, MADV_HUGEPAGE);
        else if (strcmp(thp, "always")) madvise(w->anon, w->anon_pages * PAGE, MADV_NOHUGEPAGE);
    }
}

/* Run ops while it is this worker's turn; returns when the turn passes or the ops end. */
static void worker_run(struct worker *w) {
    /* sequential 64 KiB preads: the pending run [run_start, run_start + run_len) */
    uint64_t run_start = 0, run_len = 0;
#define FLUSH_RUN() do { if (run_len) { \
        if (pread(w->dfd, rbuf, run_len * PAGE, run_start * PAGE) != (ssize_t)(run_len * PAGE)) die("pread"); \
        w->sink += (unsigned char)rbuf[0]; run_len = 0; } } while (0)
    while (sh->pos < w->nr_ops) {
        uint32_t word = w->ops[sh->pos], op = word >> 28;
        uint64_t p = word & 0x0FFFFFFF;
        if (op != PREAD) FLUSH_RUN();
        if (op == CGROUP && p != w->idx) {
            if (p >= ncg) { errno = ERANGE; die("cgroup op"); }
            sh->pos++;
            set_turn((uint32_t)p);
            return;
        }
        sh->pos++;
        switch (op) {
        case PREAD:
            if (p >= w->file_pages) { errno = ERANGE; die("pread page"); }
            if (run_len && (p != run_start + run_len || run_len == (w->merge ? 16 : 1))) FLUSH_RUN();
            if (!run_len) run_start = p;
            run_len++;
            break;
        case MAPREAD:
            if (p >= w->file_pages) { errno = ERANGE; die("map page"); }
            w->sink += *(volatile unsigned char *)(w->map + p * PAGE);
            break;
        case PWRITE:
            if (p >= w->file_pages) { errno = ERANGE; die("pwrite page"); }
            memset(rbuf, (int)(p | 1), PAGE);
            if (pwrite(w->dfd, rbuf, PAGE, (off_t)(p * PAGE)) != (ssize_t)PAGE) die("pwrite");
            break;
        case MAPWRITE:
            if (p >= w->file_pages) { errno = ERANGE; die("map write page"); }
            *(volatile unsigned char *)(w->map + p * PAGE) += 1;
            break;
        case ANONW: {
            if (p >= w->anon_pages) { errno = ERANGE; die("anon page"); }
            uint64_t *pg = (uint64_t *)(w->anon + p * PAGE);
            for (unsigned k = 0; k < PAGE / 8 / 8; k++) pg[k] = splitmix64(&w->rng);
            break;
        }
        case ANONR:
            if (p >= w->anon_pages) { errno = ERANGE; die("anon page"); }
            w->sink += *(volatile uint64_t *)(w->anon + p * PAGE);
            break;
        case SLEEP: {
            sh->schedule_ns += p * 1000;
            uint64_t at = sh->start_ns + sh->schedule_ns;
            struct timespec ts = {(time_t)(at / 1000000000ULL), (long)(at % 1000000000ULL)};
            while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL) == EINTR) {}
            break;
        }
        case CGROUP: /* already ours */
            break;
        case RECLAIM: {
            unsigned c = (unsigned)(p & 0xFF), sw = (unsigned)((p >> 8) & 0xFF);
            if (c >= ncg || sh->pos >= w->nr_ops) { errno = ERANGE; die("reclaim op"); }
            unsigned long long bytes = (unsigned long long)(w->ops[sh->pos++] & 0x0FFFFFFF) * PAGE;
            char path[512], req[64];
            snprintf(path, sizeof path, "%.255s/memory.reclaim", cgdir[c][0] ? cgdir[c] : "/sys/fs/cgroup");
            int n = sw ? snprintf(req, sizeof req, "%llu swappiness=%u", bytes, sw - 1) : snprintf(req, sizeof req, "%llu", bytes);
            int fd = open(path, O_WRONLY);
            if (fd < 0) die(path);
            int err = write(fd, req, (size_t)n) == n ? 0 : errno;
            close(fd);
            if (err && err != EAGAIN) { errno = err; die("memory.reclaim"); }
            printf("@@reclaim %u %llu %d\n", c, bytes, err);
            fflush(stdout);
            break;
        }
        case PHASE:
            if (p == 1 && w->anon_pages && w->pfns) print_pfns(w->anon, w->anon_pages);
            phase_end((unsigned)p - 1);
            break;
        default:
            errno = EINVAL;
            die("bad op");
        }
    }
    FLUSH_RUN();
#undef FLUSH_RUN
    set_turn(DONE);
}

/* The cgroups: PROCS ("PATH/cgroup.procs" or "-" for the root cgroup, comma-separated),
 * one per worker; fills procs[], cgdir[] and ncg. */
static void parse_procs(char *arg, char **procs) {
    ncg = 0;
    for (char *tok = strtok(arg, ","); tok; tok = strtok(NULL, ",")) {
        if (ncg == MAXCG) { errno = E2BIG; die("more cgroups than MAXCG"); }
        procs[ncg] = tok;
        cgdir[ncg][0] = 0;
        if (strcmp(tok, "-")) {
            snprintf(cgdir[ncg], sizeof cgdir[ncg], "%.255s", tok);
            char *slash = strrchr(cgdir[ncg], '/');
            if (slash) *slash = 0;
        }
        ncg++;
    }
}

/* Move this process into the cgroup whose cgroup.procs is PROCS ("-": stay in the root). */
static void join_cgroup(const char *procs) {
    if (!strcmp(procs, "-")) return;
    FILE *pf = fopen(procs, "w");
    if (!pf || fprintf(pf, "%d\n", getpid()) < 0 || fclose(pf)) die(procs);
}

static pid_t tickers[64];
static int nt;

/* One sleeper per CPU waking every tick_us (see TICK_US above); none for 0. */
static void start_tickers(long tick_us) {
    long ncpu = sysconf(_SC_NPROCESSORS_ONLN);
    for (long c = 0; tick_us > 0 && c < ncpu && c < 64; c++) {
        pid_t pid = fork();
        if (pid < 0) die("fork ticker");
        if (pid == 0) {
            cpu_set_t set;
            CPU_ZERO(&set);
            CPU_SET(c, &set);
            sched_setaffinity(0, sizeof set, &set);
            struct timespec ts = {tick_us / 1000000, (tick_us % 1000000) * 1000};
            for (;;) nanosleep(&ts, NULL);
        }
        tickers[nt++] = pid;
    }
}

static void stop_tickers(void) {
    for (int t = 0; t < nt; t++) kill(tickers[t], SIGKILL);
}

/* WL_REPORT: the memory layout report of /init, just before the workload. */
static void report(void) {
    const char *cmd = getenv("WL_REPORT");
    if (cmd && *cmd) {
        fflush(stdout);
        if (system(cmd) != 0) { errno = EIO; die(cmd); }
    }
}

/* After the workload: each cgroup's memory.events and memory.peak, then "@@done". */
static uint64_t cpu_now_ns(void) {
    struct timespec t;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
    return (uint64_t)t.tv_sec * 1000000000ull + (uint64_t)t.tv_nsec;
}

static int finish(void) {
    printf("@@wcpu %llu\n", (unsigned long long)sh->cpu_ns);
    print_cgroup_file("cgevents", "memory.events");
    for (unsigned c = 0; c < ncg; c++) {
        unsigned long long peak;
        if (cgdir[c][0] && read_cgroup_value(c, "memory.peak", &peak)) printf("@@cgpeak %u %llu\n", c, peak);
    }
    printf("@@done %llu\n", (unsigned long long)(sh->sink & 1));
    fflush(stdout);
    return 0;
}

/* "wl -x ROOT CWD PROCS TICK_US PROGRAM [ARGS...]": one real program as one phase. */
static int run_program(char **argv) {
    const char *root = argv[2], *cwd = argv[3];
    char *procs[MAXCG];
    parse_procs(argv[4], procs);
    if (ncg != 1) { errno = EINVAL; die("a program runs in one cgroup"); }
    sh = mmap(NULL, sizeof *sh, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    if (sh == MAP_FAILED) { sh = NULL; die("mmap shared"); }
    start_tickers(atol(argv[5]));
    report();
    read_vmstat(&sh->before);
    sh->phase_t0 = sh->start_ns = now_ns();
    printf("@@start 0 0 0\n");
    fflush(stdout);
    pid_t pid = fork();
    if (pid < 0) die("fork program");
    if (pid == 0) {
        join_cgroup(procs[0]);
        int null = open("/dev/null", O_RDWR);
        if (null < 0 || dup2(null, 0) < 0 || dup2(null, 1) < 0) die("/dev/null");
        if (chroot(root) || chdir(cwd)) die(root);
        char *env[] = {"LC_ALL=C", "PATH=/usr/bin:/bin", NULL};
        execve(argv[6], argv + 6, env);
        die(argv[6]);
    }
    int st;
    if (waitpid(pid, &st, 0) < 0) die("waitpid");
    stop_tickers();
    struct rusage ru;
    if (!getrusage(RUSAGE_CHILDREN, &ru))
        sh->cpu_ns = ((uint64_t)(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) * 1000000ull +
                      (uint64_t)(ru.ru_utime.tv_usec + ru.ru_stime.tv_usec)) * 1000ull;
    if (WIFSIGNALED(st)) {
        printf("@@error program %s: killed by signal %d\n", argv[6], WTERMSIG(st));
        return 1;
    }
    if (WEXITSTATUS(st)) {
        printf("@@error program %s: exit status %d\n", argv[6], WEXITSTATUS(st));
        return 1;
    }
    phase_end(0);
    return finish();
}

int main(int argc, char **argv) {
    if (argc >= 7 && !strcmp(argv[1], "-x")) return run_program(argv);
    if (argc != 4 && argc != 5) {
        fprintf(stderr, "usage: wl OPS DATA PROCS[,PROCS...] [TICK_US]\n");
        return 2;
    }
    int ofd = open(argv[1], O_RDONLY | O_DIRECT);
    if (ofd < 0) die(argv[1]);
    char *hbuf;
    if (posix_memalign((void **)&hbuf, PAGE, PAGE)) die("posix_memalign");
    if (pread(ofd, hbuf, PAGE, 0) < 64) die("ops header");
    if (memcmp(hbuf, "RLWLOPS1", 8)) { errno = EINVAL; die("ops magic"); }
    uint64_t hdr[5];
    memcpy(hdr, hbuf, sizeof hdr);
    uint64_t nr_ops = hdr[1], file_pages = hdr[2], anon_pages = hdr[3];
    uint64_t bytes = (64 + nr_ops * 4 + PAGE - 1) & ~(PAGE - 1);
    char *obuf;
    if (posix_memalign((void **)&obuf, PAGE, bytes)) die("posix_memalign ops");
    for (uint64_t at = 0; at < bytes;) {
        ssize_t got = pread(ofd, obuf + at, bytes - at < CHUNK ? bytes - at : CHUNK, at);
        if (got <= 0) die("ops read");
        at += (uint64_t)got;
        if (got % PAGE) break; /* the end of the file */
    }
    close(ofd);
    if (mlock(obuf, bytes)) die("mlock ops");
    const uint32_t *ops = (const uint32_t *)(obuf + 64);
    char *procs[MAXCG];
    parse_procs(argv[3], procs);
    if (ncg != (hdr[4] ? hdr[4] : 1)) { errno = EINVAL; die("ops cgroups vs PROCS"); }
    int writes = 0;
    for (uint64_t i = 0; i < nr_ops && !writes; i++) writes = (ops[i] >> 28) == PWRITE || (ops[i] >> 28) == MAPWRITE;
    sh = mmap(NULL, sizeof *sh, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    if (sh == MAP_FAILED) { sh = NULL; die("mmap shared"); }
    if (mlock(sh, sizeof *sh)) die("mlock shared");
    start_tickers(argc == 5 ? atol(argv[4]) : 0);
    const char *merge_env = getenv("WL_MERGE"), *pfns_env = getenv("WL_PFNS");
    report();
    sh->turn = WAIT;
    pid_t workers[MAXCG];
    for (unsigned c = 0; c < ncg; c++) {
        fflush(stdout);
        pid_t pid = fork();
        if (pid < 0) die("fork worker");
        if (pid) { workers[c] = pid; continue; }
        join_cgroup(procs[c]);
        struct worker w = {.idx = c, .dfd = -1, .file_pages = file_pages, .anon_pages = anon_pages, .ops = ops,
                           .nr_ops = nr_ops, .merge = !merge_env || strcmp(merge_env, "0"),
                           .pfns = pfns_env && !strcmp(pfns_env, "1"), .rng = 42 + c};
        worker_map(&w, argv[2], writes);
        uint64_t cpu0 = cpu_now_ns();
        while (wait_turn(c)) worker_run(&w);
        __atomic_add_fetch(&sh->cpu_ns, cpu_now_ns() - cpu0, __ATOMIC_SEQ_CST);
        __atomic_add_fetch(&sh->sink, w.sink, __ATOMIC_SEQ_CST);
        fflush(stdout);
        _exit(0);
    }
    read_vmstat(&sh->before);
    sh->phase_t0 = sh->start_ns = now_ns();
    printf("@@start %llu %llu %llu\n", (unsigned long long)nr_ops, (unsigned long long)file_pages,
           (unsigned long long)anon_pages);
    fflush(stdout);
    /* The first op names the first cgroup when there are several. */
    set_turn(nr_ops && (ops[0] >> 28) == CGROUP ? (ops[0] & 0x0FFFFFFF) : 0);
    int failed = 0;
    for (unsigned left = ncg; left;) {
        int st;
        pid_t pid = wait(&st);
        if (pid < 0) break;
        for (unsigned c = 0; c < ncg; c++) {
            if (pid != workers[c]) continue;
            left--;
            if (WIFEXITED(st) && !WEXITSTATUS(st)) break;
            /* die() printed its own error; a signal (the OOM killer) did not */
            if (WIFSIGNALED(st) && !failed) printf("@@error worker %u (cgroup %s): killed by signal %d\n", c, procs[c], WTERMSIG(st));
            failed = 1;
            set_turn(FAILED); /* the others stop waiting */
        }
    }
    stop_tickers();
    if (failed) {
        fflush(stdout);
        return 1;
    }
    return finish();
}
