//! The workloads of the 2026 refault-distance RFC's cover letter ("[PATCH RFC 00/32]
//! mm/mglru: MGLRU-FG and refault distance support", Kairui Song, 1 May 2026) and of
//! cache_ext (Zussman et al., "cache_ext: Customizing the Page Cache with eBPF", SOSP
//! 2025), as masim-style programs sized for a small machine.
//!
//! Each program keeps its source's shape — what is read through the page cache and what
//! is anonymous, the access pattern, the data-to-memory ratio — at a scale where four
//! policies run in seconds. The numbers below are assumptions stated once, each with
//! where it comes from; none was tuned to the cover letter's results. What the programs
//! leave out (processes that exit, LSM compactions, fsync) is in docs/scenarios.md.

use super::MIB;
use reclaimlab_trace::{AccessKind, Pattern, Phase, Program, Region, Stream};

fn region(name: &str, mib: u32, kind: AccessKind, write_ratio: f64) -> Region {
    let mut r = Region::new(name, mib * MIB, kind);
    r.write_ratio = write_ratio;
    r
}

fn stream(region: usize, pattern: Pattern, weight: f64) -> Stream {
    Stream { region, pattern, weight }
}

fn one_phase(regions: Vec<Region>, accesses: u64, streams: Vec<Stream>) -> Program {
    Program { regions, phases: vec![Phase { name: "run".into(), accesses, streams, reclaims: Vec::new() }], repeat: 1 }
}

/// YCSB's request distribution: `ZipfianGenerator.ZIPFIAN_CONSTANT` = 0.99.
const YCSB_ZIPF: f64 = 0.99;

/// cache_ext's LevelDB GET/SCAN: point GETs (YCSB Zipfian keys) and range SCANs over an
/// LSM store larger than the cgroup's memory. Store 768 MiB on a 256 MiB machine (3×);
/// half the page reads come from scans (each scan reads consecutive SSTable blocks: the
/// store's pages in order, resuming where the last scan stopped), half from GETs; a
/// 16 MiB memtable and block cache (anonymous, uniform).
pub fn leveldb_getscan() -> Program {
    one_phase(
        vec![region("memtable", 16, AccessKind::AnonMapped, 0.3), region("sstables", 768, AccessKind::FileRead, 0.0)],
        6_000_000,
        vec![stream(0, Pattern::Uniform, 0.2), stream(1, Pattern::Zipf { alpha: YCSB_ZIPF }, 0.4), stream(1, Pattern::Sequential, 0.4)],
    )
}

/// MongoDB under YCSB workload B (`readproportion=0.95`, `updateproportion=0.05`,
/// Zipfian): a WiredTiger cache (anonymous, a quarter of memory, as WiredTiger's default
/// of 50 % of RAM − 1 GB leaves on a small box) serving most reads, the collection files
/// (3× memory) read through the page cache on cache misses, 5 % of file accesses writes
/// (updates reaching the files at checkpoints), and the journal appended sequentially.
pub fn ycsb_b() -> Program {
    one_phase(
        vec![
            region("wiredtiger-cache", 128, AccessKind::AnonMapped, 0.05),
            region("collection", 1536, AccessKind::FileRead, 0.05),
            region("journal", 64, AccessKind::FileRead, 1.0),
        ],
        8_000_000,
        vec![stream(0, Pattern::Zipf { alpha: YCSB_ZIPF }, 0.6), stream(1, Pattern::Zipf { alpha: YCSB_ZIPF }, 0.38), stream(2, Pattern::Sequential, 0.02)],
    )
}

/// A kernel build (`make -j20` in a 1 GiB memcg, as in Barry Song's kernel-build runs on
/// linux-mm, May 2026, lkml.iu.edu 2605.3/03287; here at half scale, 512 MiB): the compilers' heaps exceed memory
/// (anonymous, written as they are used: 20 jobs × 32 MiB of cc1 at this scale), every
/// compile reads the hot headers (Zipf 1.0 over 96 MiB of include/ and generated
/// headers) and its own source once (sequential over 384 MiB of sources), and writes its
/// object once (sequential over 128 MiB of objects). Anon-heavy with a file working set:
/// the cover letter's refault_anon is 12× its refault_file.
pub fn kernel_build() -> Program {
    one_phase(
        vec![
            region("cc1-heaps", 640, AccessKind::AnonMapped, 0.5),
            region("headers", 96, AccessKind::FileRead, 0.0),
            region("sources", 384, AccessKind::FileRead, 0.0),
            region("objects", 128, AccessKind::FileRead, 1.0),
        ],
        8_000_000,
        vec![
            stream(0, Pattern::Zipf { alpha: 0.6 }, 0.6),
            stream(1, Pattern::Zipf { alpha: 1.0 }, 0.3),
            stream(2, Pattern::Sequential, 0.07),
            stream(3, Pattern::Sequential, 0.03),
        ],
    )
}

/// fio `rw=randread`, buffered, `random_distribution=zipf:1.2` over one file twice the
/// machine's memory. The cover letter gives no theta; 1.2 is an assumption.
pub fn fio_zipf() -> Program {
    one_phase(vec![region("fio-file", 512, AccessKind::FileRead, 0.0)], 4_000_000, vec![stream(0, Pattern::Zipf { alpha: 1.2 }, 1.0)])
}

/// cache_ext's file search: `grep -r` (ripgrep) over a source tree 1.5× memory, run four
/// times; each pass reads every file once in the same order — a cyclic scan, where LRU
/// and both kernel policies evict each page just before its reuse and MRU would keep
/// two thirds.
pub fn file_search() -> Program {
    one_phase(vec![region("tree", 384, AccessKind::FileRead, 0.0)], 4 * 384 * MIB as u64, vec![stream(0, Pattern::Sequential, 1.0)])
}
