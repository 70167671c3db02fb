//! The real traces shipped in data/traces replay end to end: LIRS block traces as
//! page-cache reads on a machine smaller than their footprint, SPEC CPU2000 address
//! traces as anonymous memory with zram. Every record is replayed, invariants hold,
//! and a footprint larger than memory shows up as refaults.

use crate::common::*;
use std::path::PathBuf;

fn data(rel: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../data/traces").join(rel)
}

#[test]
fn lirs_traces_replay() {
    // (trace, references as the reader counts them, distinct blocks)
    for (name, refs, blocks) in [
        ("2_pools", 100_000u64, 9_939u64),
        ("backf", 9_000, 751),
        ("cpp", 9_047, 1_223),
        ("cs", 6_781, 1_409),
        ("gli", 6_015, 2_529),
        ("loop", 505_500, 1_011),
        ("multi1", 15_858, 2_606),
        ("multi2", 26_311, 5_684),
        ("multi3", 30_241, 7_454),
        ("ps", 10_448, 3_083),
        ("scan", 50_025, 2_001),
        ("sprite", 133_996, 7_075),
        ("zigzag", 52_001, 2_001),
    ] {
        let cfg = config(&[("machine.memory", "4M"), ("swap.device", "none")]);
        let mut src = reclaimlab_trace::open(&data(&format!("lirs/{name}.trace.gz")), None, None).unwrap();
        let r = run_checked(&cfg, src.as_mut(), 25_000);
        assert_eq!(metric(&r, "accesses") as u64, refs, "{name}");
        assert_eq!(metric(&r, "rss_unlimited_bytes") as u64, blocks * 4096, "{name}: distinct pages");
        // Every block is read from storage at least once; beyond 4 MiB (1024 pages) some refault.
        assert!(vm(&r, "pgpgin") / 4 >= blocks, "{name}");
        if blocks > 1100 {
            assert!(vm(&r, "workingset_refault_file") > 0, "{name}: footprint > memory must refault");
        }
    }
}

#[test]
fn spec_address_traces_replay() {
    for (name, refs, pages) in [("gcc", 515_683u64, 294u64), ("gzip", 481_044, 39_856), ("mcf", 727_230, 1_442), ("swim", 303_193, 135), ("twolf", 482_824, 89)] {
        // 96 MiB: gzip (156 MiB) must swap, the others fit.
        let cfg = config(&[("machine.memory", "96M"), ("swap.device", "zram"), ("swap.size", "256M")]);
        let mut src = reclaimlab_trace::open(&data(&format!("spec2000-address/{name}.trace.gz")), None, None).unwrap();
        let r = run_checked(&cfg, src.as_mut(), 100_000);
        assert_eq!(metric(&r, "accesses") as u64, refs, "{name}");
        assert_eq!(metric(&r, "rss_unlimited_bytes") as u64, pages * 4096, "{name}");
        // Address traces carry time: the runtime is the instruction gaps, not access_ns.
        assert!(metric(&r, "baseline_runtime_s") > 0.0);
        if pages > 24_576 {
            assert!(vm(&r, "pswpout") > 0, "{name}: anon footprint > memory must swap");
        } else {
            assert_eq!(vm(&r, "pswpout"), 0, "{name} fits in memory");
        }
    }
}
