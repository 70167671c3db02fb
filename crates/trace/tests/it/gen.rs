//! Synthetic generators: determinism, distributions, patterns, phases, validation.

use crate::common::read_all;
use reclaimlab_trace::gen::{generate, Pattern, Phase, Program, Region, Stream};
use reclaimlab_trace::{Access, AccessKind, ErrorKind};

fn run(p: Program, seed: u64) -> Vec<Access> {
    let mut src = generate(p, seed).unwrap();
    read_all(src.as_mut()).unwrap()
}

fn mixed() -> Program {
    let mut a = Region::new("heap", 500, AccessKind::AnonMapped);
    a.write_ratio = 0.3;
    a.cgroup = "a".into();
    let mut b = Region::new("cache", 300, AccessKind::FileRead);
    b.cgroup = "b".into();
    Program {
        regions: vec![a, b],
        phases: vec![Phase {
            name: "mix".into(),
            accesses: 400_000,
            streams: vec![Stream { region: 0, pattern: Pattern::Zipf { alpha: 0.9 }, weight: 3.0 }, Stream { region: 1, pattern: Pattern::Uniform, weight: 1.0 }],
            reclaims: Vec::new(),
        }],
        repeat: 1,
    }
}

#[test]
fn same_seed_same_records_different_seed_different() {
    let a = run(mixed(), 1);
    let b = run(mixed(), 1);
    let c = run(mixed(), 2);
    assert_eq!(a.len(), 400_000);
    assert_eq!(a, b);
    assert_ne!(a, c);
    // Batch size does not change the stream.
    let mut src = generate(mixed(), 1).unwrap();
    let mut all = Vec::new();
    let mut buf = Vec::new();
    while src.read_batch(&mut buf, 1_000_003).unwrap() > 0 {
        all.extend_from_slice(&buf);
    }
    assert_eq!(all, a);
}

#[test]
fn mix_proportions_flags_and_cgroups() {
    let src = generate(mixed(), 9).unwrap();
    assert_eq!(src.meta().format, "gen:program");
    assert_eq!(src.meta().cgroups, ["", "a", "b"]);
    assert_eq!(src.meta().nr_pages, Some(800));
    assert_eq!(src.meta().nr_records, Some(400_000));
    let recs = run(mixed(), 9);
    let n = recs.len() as f64;
    let heap: Vec<&Access> = recs.iter().filter(|a| a.page < 500).collect();
    let frac = heap.len() as f64 / n;
    // Binomial sd = sqrt(.75*.25/4e5) ≈ 0.0007; tolerance 0.005 (> 7 sd).
    assert!((frac - 0.75).abs() < 0.005, "heap fraction {frac}");
    assert!(heap.iter().all(|a| a.cgroup == 1 && a.flags & !1 == 0));
    let wr = heap.iter().filter(|a| a.is_write()).count() as f64 / heap.len() as f64;
    assert!((wr - 0.3).abs() < 0.005, "write ratio {wr}");
    let cache: Vec<&Access> = recs.iter().filter(|a| a.page >= 500).collect();
    assert!(cache.iter().all(|a| a.page < 800 && a.cgroup == 2 && a.flags == AccessKind::FileRead.flags()));
    // Uniform: each of the 300 cache pages gets ≈ 333 hits; all within ±40%.
    let mut hits = [0u32; 300];
    for a in &cache {
        hits[(a.page - 500) as usize] += 1;
    }
    let mean = cache.len() as f64 / 300.0;
    assert!(hits.iter().all(|&h| (h as f64 - mean).abs() < 0.4 * mean), "{hits:?}");
}

/// Least-squares slope of ln(freq) against ln(rank) over ranks 1..=top.
fn zipf_slope(pages: u32, alpha: f64, draws: u64, top: usize) -> f64 {
    let recs = run(Program::zipf(pages, draws, alpha, AccessKind::AnonMapped), 5);
    let mut freq = vec![0u64; pages as usize];
    for a in &recs {
        freq[a.page as usize] += 1;
    }
    let pts: Vec<(f64, f64)> = (0..top).map(|i| (((i + 1) as f64).ln(), (freq[i] as f64).ln())).collect();
    let mx = pts.iter().map(|p| p.0).sum::<f64>() / top as f64;
    let my = pts.iter().map(|p| p.1).sum::<f64>() / top as f64;
    let sxy: f64 = pts.iter().map(|p| (p.0 - mx) * (p.1 - my)).sum();
    let sxx: f64 = pts.iter().map(|p| (p.0 - mx).powi(2)).sum();
    sxy / sxx
}

#[test]
fn zipf_rank_frequency_slope_matches_alpha() {
    // Fit over the top 100 ranks of 2M draws; tolerance ±0.05 on the slope.
    for alpha in [0.6, 1.0, 1.3] {
        let slope = zipf_slope(10_000, alpha, 2_000_000, 100);
        assert!((slope + alpha).abs() < 0.05, "alpha {alpha}: slope {slope}");
    }
}

#[test]
fn zipf_hot_pages_first() {
    let recs = run(Program::zipf(1000, 200_000, 1.0, AccessKind::AnonMapped), 3);
    let mut freq = vec![0u64; 1000];
    for a in &recs {
        freq[a.page as usize] += 1;
    }
    assert!(freq[0] > freq[1] && freq[1] > freq[2] && freq[2] > freq[10] && freq[10] > freq[500]);
    // P(rank 1) = 1/H_1000 ≈ 0.1336.
    let p1 = freq[0] as f64 / 200_000.0;
    assert!((p1 - 0.1336).abs() < 0.004, "{p1}");
}

#[test]
fn sequential_visits_every_page_once_per_pass() {
    let recs = run(Program::sequential(1000, 3500, AccessKind::FileMapped), 0);
    for (i, a) in recs.iter().enumerate() {
        assert_eq!(a.page as usize, i % 1000);
    }
}

#[test]
fn loop_sweeps_forward_and_back() {
    let recs = run(Program::zigzag(4, 12, AccessKind::AnonMapped), 0);
    let pages: Vec<u32> = recs.iter().map(|a| a.page).collect();
    assert_eq!(pages, [0, 1, 2, 3, 3, 2, 1, 0, 0, 1, 2, 3]);
    // Every sweep of a large region is a permutation of it.
    let recs = run(Program::zigzag(777, 777 * 4, AccessKind::AnonMapped), 0);
    for sweep in recs.chunks(777) {
        let mut p: Vec<u32> = sweep.iter().map(|a| a.page).collect();
        p.sort_unstable();
        assert_eq!(p, (0..777).collect::<Vec<_>>());
    }
}

#[test]
fn phases_run_in_order_with_exact_counts_and_repeat() {
    let p = Program {
        regions: vec![Region::new("a", 10, AccessKind::AnonMapped), Region::new("b", 20, AccessKind::FileRead)],
        phases: vec![
            Phase { name: "one".into(), accesses: 1000, streams: vec![Stream { region: 0, pattern: Pattern::Uniform, weight: 1.0 }], reclaims: Vec::new() },
            Phase { name: "empty".into(), accesses: 0, streams: vec![Stream { region: 0, pattern: Pattern::Uniform, weight: 1.0 }], reclaims: Vec::new() },
            Phase { name: "two".into(), accesses: 2500, streams: vec![Stream { region: 1, pattern: Pattern::Sequential, weight: 1.0 }], reclaims: Vec::new() },
        ],
        repeat: 2,
    };
    let recs = run(p, 11);
    assert_eq!(recs.len(), 7000);
    for (i, a) in recs.iter().enumerate() {
        let in_one = i % 3500 < 1000;
        assert_eq!(a.page < 10, in_one, "record {i}");
    }
    // Phase "two" scans region b (pages 10..30); 2500 is a multiple of 20, so each round
    // starts at the region base and ends on its last page.
    assert_eq!(recs[1000].page, 10);
    assert_eq!(recs[3499].page, 10 + 19);
    assert_eq!(recs[4500].page, 10);
}

#[test]
fn sequential_cursor_persists_across_phases() {
    let st = || vec![Stream { region: 0, pattern: Pattern::Sequential, weight: 1.0 }];
    let p = Program {
        regions: vec![Region::new("a", 10, AccessKind::AnonMapped)],
        phases: vec![Phase { name: "x".into(), accesses: 7, streams: st(), reclaims: Vec::new() }, Phase { name: "y".into(), accesses: 5, streams: st(), reclaims: Vec::new() }],
        repeat: 1,
    };
    let pages: Vec<u32> = run(p, 0).iter().map(|a| a.page).collect();
    assert_eq!(pages, [0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 0, 1]);
}

#[test]
fn validation_names_the_problem() {
    let bad = |f: &dyn Fn(&mut Program), want: &str| {
        let mut p = mixed();
        f(&mut p);
        let e = p.validate().unwrap_err();
        assert!(matches!(e.kind, ErrorKind::InvalidArgument(_)));
        assert!(e.to_string().contains(want), "{e} (wanted {want:?})");
        assert!(generate(p, 0).is_err());
    };
    bad(&|p| p.regions[1].pages = 0, "region 1 (\"cache\") has zero pages");
    bad(&|p| p.phases.clear(), "no phases");
    bad(&|p| p.phases[0].streams[1].weight = 0.0, "weight 0 must be > 0");
    bad(&|p| p.phases[0].streams[1].weight = -1.0, "weight -1 must be > 0");
    bad(&|p| p.phases[0].streams[0].region = 5, "unknown region index 5");
    bad(&|p| p.phases[0].streams[0].pattern = Pattern::Zipf { alpha: 0.0 }, "alpha 0 must be > 0");
    bad(&|p| p.regions[0].write_ratio = 1.5, "write_ratio 1.5 is outside [0, 1]");
    bad(&|p| p.regions[0].write_ratio = -0.1, "outside [0, 1]");
    bad(&|p| p.phases[0].streams.clear(), "has no streams");
    bad(&|p| p.regions.clear(), "no regions");
    bad(&|p| p.repeat = 0, "repeat");
    bad(&|p| p.regions[0].pages = u32::MAX, "more than 2^32-1");
    mixed().validate().unwrap();
    Program::zipf(10, 10, 1.0, AccessKind::AnonMapped).validate().unwrap();
}

#[test]
fn file_regions_become_the_traces_files() {
    use reclaimlab_trace::{generate, AccessKind, FileRange, Pattern, Phase, Program, Region, Stream};
    let p = Program {
        regions: vec![Region::new("heap", 10, AccessKind::AnonMapped), Region::new("db", 20, AccessKind::FileRead), Region::new("log", 5, AccessKind::FileMapped)],
        phases: vec![Phase { name: "p".into(), accesses: 10, streams: vec![Stream { region: 1, pattern: Pattern::Uniform, weight: 1.0 }], reclaims: Vec::new() }],
        repeat: 1,
    };
    let src = generate(p, 1).unwrap();
    assert_eq!(src.meta().files, vec![FileRange { name: "db".into(), first: 10, nr_pages: 20, advice: 0 }, FileRange { name: "log".into(), first: 30, nr_pages: 5, advice: 0 }]);
}
