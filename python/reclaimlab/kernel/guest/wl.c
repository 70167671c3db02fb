/* wl: reclaimlab's guest workload replayer (runs as /wl inside the QEMU guest).
 *
 * It executes, access by access, an "ops" file the host wrote (python/reclaimlab/kernel/
 * ops.py): every page access the simulator replays is one op here, so guest and simulator
 * see the same page sequence by construction (the generators run on the host only).
 * The ops file is read whole with O_DIRECT (so it does not enter the page cache) into
 * mlocked memory *before* the program moves itself into the workload's cgroup: a cgroup-v2
 * charge stays where it was made, so only the workload's own pages count against memory.max.
 *
 *   wl OPS DATA PROCS [TICK_US]
 *       replay OPS (file pages are 4 KiB pages of DATA) after writing our pid into PROCS (a
 *       cgroup.procs file; "-" for none). With TICK_US > 0, one sleeper per CPU (outside the
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
 * Ops file (little endian): "RLWLOPS1", u64 nr_ops, u64 file_pages, u64 anon_pages, 32 bytes
 * reserved (header 64 bytes), then nr_ops u32 words: bits 28..31 the op, bits 0..27 the page.
 *   0 PREAD   pread(DATA, 4 KiB at page); with WL_MERGE=1 consecutive PREADs are merged up to 64 KiB
 *   1 MAPREAD read one byte of DATA mapped MAP_SHARED read-only
 *   2 ANONW   write anon page: 1/8 pseudo-random bytes, the rest zero (lz4 ~7:1 in zram)
 *   3 ANONR   read one word of anon page
 *   4 SLEEP   advance the workload's schedule by page microseconds and sleep until the clock
 *             reaches it (clock_nanosleep TIMER_ABSTIME, from @@start): the CPU idles, the
 *             clock runs, and time lost to slow work or a late wakeup is made up by the next
 *             sleep instead of adding up (the simulator's sim.trace_pacing=schedule)
 *   15 PHASE  end the current phase; page = index of the next phase
 * At every phase end it prints "@@phase INDEX WALL_NS" and one "@@vm NAME DELTA" line per
 * /proc/vmstat counter that changed, zram's "@@zram ORIG_DATA_SIZE COMPR_DATA_SIZE" if there
 * is a zram device, then "@@phase-end INDEX". Errors: "@@error TEXT", exit 1.
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
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#define PAGE 4096UL
#define CHUNK (1UL << 20)
#define MAXC 512

enum { PREAD = 0, MAPREAD = 1, ANONW = 2, ANONR = 3, SLEEP = 4, PHASE = 15 };

static void die(const char *what) {
    printf("@@error %s: %s\n", what, strerror(errno));
    fflush(stdout);
    exit(1);
}

struct vm { int n; char name[MAXC][48]; unsigned long long val[MAXC]; };

static void read_vmstat(struct vm *v) {
    FILE *f = fopen("/proc/vmstat", "r");
    if (!f) die("/proc/vmstat");
    v->n = 0;
    while (v->n < MAXC && fscanf(f, "%47s %llu", v->name[v->n], &v->val[v->n]) == 2) v->n++;
    fclose(f);
}

static uint64_t now_ns(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (uint64_t)t.tv_sec * 1000000000ULL + (uint64_t)t.tv_nsec;
}

static struct vm before, after;
static uint64_t phase_t0;

static void phase_end(unsigned idx) {
    read_vmstat(&after);
    printf("@@phase %u %llu\n", idx, (unsigned long long)(now_ns() - phase_t0));
    for (int i = 0; i < after.n; i++) {
        /* the counter set is fixed at boot: same index, same name */
        if (i < before.n && after.val[i] != before.val[i])
            printf("@@vm %s %lld\n", after.name[i], (long long)(after.val[i] - before.val[i]));
    }
    FILE *z = fopen("/sys/block/zram0/mm_stat", "r");
    unsigned long long orig, compr;
    if (z) {
        if (fscanf(z, "%llu %llu", &orig, &compr) == 2) printf("@@zram %llu %llu\n", orig, compr);
        fclose(z);
    }
    printf("@@phase-end %u\n", idx);
    fflush(stdout);
    read_vmstat(&before);
    phase_t0 = now_ns();
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

int main(int argc, char **argv) {
    if (argc != 4 && argc != 5) {
        fprintf(stderr, "usage: wl OPS DATA PROCS [TICK_US]\n");
        return 2;
    }
    int ofd = open(argv[1], O_RDONLY | O_DIRECT);
    if (ofd < 0) die(argv[1]);
    char *hbuf;
    if (posix_memalign((void **)&hbuf, PAGE, PAGE)) die("posix_memalign");
    if (pread(ofd, hbuf, PAGE, 0) < 64) die("ops header");
    if (memcmp(hbuf, "RLWLOPS1", 8)) { errno = EINVAL; die("ops magic"); }
    uint64_t hdr[4];
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
    long tick_us = argc == 5 ? atol(argv[4]) : 0;
    long ncpu = sysconf(_SC_NPROCESSORS_ONLN);
    pid_t tickers[64];
    int nt = 0;
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
    const char *merge_env = getenv("WL_MERGE"), *report = getenv("WL_REPORT");
    int merge = !merge_env || strcmp(merge_env, "0");
    const char *pfns_env = getenv("WL_PFNS");
    int pfns = pfns_env && !strcmp(pfns_env, "1");
    if (report && *report) {
        fflush(stdout);
        if (system(report) != 0) { errno = EIO; die(report); }
    }
    if (strcmp(argv[3], "-")) {
        FILE *pf = fopen(argv[3], "w");
        if (!pf || fprintf(pf, "%d\n", getpid()) < 0 || fclose(pf)) die(argv[3]);
    }

    int dfd = -1;
    char *map = NULL, *anon = NULL;
    if (file_pages) {
        dfd = open(argv[2], O_RDONLY);
        if (dfd < 0) die(argv[2]);
        if (merge) posix_fadvise(dfd, 0, 0, POSIX_FADV_RANDOM);
        map = mmap(NULL, file_pages * PAGE, PROT_READ, MAP_SHARED, dfd, 0);
        if (map == MAP_FAILED) die("mmap data");
        /* No MADV_RANDOM: VM_RAND_READ makes reclaim ignore this mapping's accessed bits
         * (vma_has_recency(), v6.3+). /init turns readahead off on the disk instead. */
    }
    if (anon_pages) {
        anon = mmap(NULL, anon_pages * PAGE, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
        if (anon == MAP_FAILED) die("mmap anon");
        char tbuf[128];
        const char *thp = sysfs_mode("/sys/kernel/mm/transparent_hugepage/enabled", tbuf, sizeof tbuf);
        if (!strcmp(thp, "madvise")) madvise(anon, anon_pages * PAGE, MADV_HUGEPAGE);
        else if (strcmp(thp, "always")) madvise(anon, anon_pages * PAGE, MADV_NOHUGEPAGE);
    }
    static char rbuf[16 * PAGE] __attribute__((aligned(4096)));
    uint64_t rng = 42, sink = 0;
    /* sequential 64 KiB preads: the pending run [run_start, run_start + run_len) */
    uint64_t run_start = 0, run_len = 0;
#define FLUSH_RUN() do { if (run_len) { \
        if (pread(dfd, rbuf, run_len * PAGE, run_start * PAGE) != (ssize_t)(run_len * PAGE)) die("pread"); \
        sink += (unsigned char)rbuf[0]; run_len = 0; } } while (0)

    read_vmstat(&before);
    phase_t0 = now_ns();
    uint64_t start_ns = phase_t0, schedule_ns = 0; /* the SLEEP ops' schedule */
    printf("@@start %llu %llu %llu\n", (unsigned long long)nr_ops, (unsigned long long)file_pages,
           (unsigned long long)anon_pages);
    fflush(stdout);
    for (uint64_t i = 0; i < nr_ops; i++) {
        uint32_t w = ops[i], op = w >> 28;
        uint64_t p = w & 0x0FFFFFFF;
        if (op != PREAD) FLUSH_RUN();
        switch (op) {
        case PREAD:
            if (p >= file_pages) { errno = ERANGE; die("pread page"); }
            if (run_len && (p != run_start + run_len || run_len == (merge ? 16 : 1))) FLUSH_RUN();
            if (!run_len) run_start = p;
            run_len++;
            break;
        case MAPREAD:
            if (p >= file_pages) { errno = ERANGE; die("map page"); }
            sink += *(volatile unsigned char *)(map + p * PAGE);
            break;
        case ANONW: {
            if (p >= anon_pages) { errno = ERANGE; die("anon page"); }
            uint64_t *pg = (uint64_t *)(anon + p * PAGE);
            for (unsigned k = 0; k < PAGE / 8 / 8; k++) pg[k] = splitmix64(&rng);
            break;
        }
        case ANONR:
            if (p >= anon_pages) { errno = ERANGE; die("anon page"); }
            sink += *(volatile uint64_t *)(anon + p * PAGE);
            break;
        case SLEEP: {
            schedule_ns += p * 1000;
            uint64_t at = start_ns + schedule_ns;
            struct timespec ts = {(time_t)(at / 1000000000ULL), (long)(at % 1000000000ULL)};
            while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL) == EINTR) {}
            break;
        }
        case PHASE:
            if (p == 1 && anon_pages && pfns) print_pfns(anon, anon_pages);
            phase_end((unsigned)p - 1);
            break;
        default:
            errno = EINVAL;
            die("bad op");
        }
    }
    FLUSH_RUN();
    for (int t = 0; t < nt; t++) kill(tickers[t], SIGKILL);
    printf("@@done %llu\n", (unsigned long long)(sink & 1));
    fflush(stdout);
    return 0;
}
