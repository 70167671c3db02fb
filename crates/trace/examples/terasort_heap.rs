//! How much of each JVM's heap the `hadoop-terasort` trace touches over the run, as a share
//! of `-Xmx` (the figures of docs/terasort-jvm.md, "What the model does with it"):
//!
//!     cargo run --release -p reclaimlab-trace --example terasort_heap -- TASKS_PER_CPU HEAP_MB [CONC_CYCLE_MAPS]
//!
//! at the scenario's `--scale 1` sizes (HEAP_MB as the scenario's `heap_mb`: 22528, 20480).
use reclaimlab_trace::gen::{TeraSortParams, TeraSortSource};
use reclaimlab_trace::AccessSource;

fn main() {
    let a: Vec<f64> = std::env::args().skip(1).map(|x| x.parse().expect("a number")).collect();
    assert!(a.len() >= 2, "usage: terasort_heap TASKS_PER_CPU HEAP_MB [CONC_CYCLE_MAPS]");
    // The scenario at scale 1: -Xmx and InitialHeapSize in the benchmark's MiB ÷ 8.
    let p = TeraSortParams {
        tasks_per_cpu: a[0],
        heap_pages: (a[1] * 32.0) as u32,
        heap_init_pages: 4096 * 32,
        conc_cycle_maps: a.get(2).copied().unwrap_or(2.0),
        ..TeraSortParams::default()
    };
    let (n, base, heap) = (p.nr_accesses(), p.heap_base(0), p.heap_pages as usize);
    let mut seen = vec![false; heap * p.jobs as usize];
    let (mut touched, mut done, mut next, mut area) = (0u64, 0u64, n / 10, 0.0);
    let share = |t: u64| t as f64 / p.jobs as f64 / heap as f64;
    let mut src = TeraSortSource::new(p.clone(), 1).unwrap();
    let mut buf = Vec::new();
    while src.read_batch(&mut buf, 1 << 16).unwrap() > 0 {
        for x in buf.iter().filter(|x| !x.is_file()) {
            let i = (x.page - base) as usize;
            touched += !seen[i] as u64;
            seen[i] = true;
        }
        done += buf.len() as u64;
        area += buf.len() as f64 * touched as f64;
        if done >= next {
            println!("{:>3} % of the accesses: heap touched {:.3} of -Xmx (mean over the jobs)", done * 100 / n, share(touched));
            next += n / 10;
        }
    }
    println!("mean over the run: {:.3}; pages the shuffle merged to disk per job: {}", area / n as f64 / p.jobs as f64 / heap as f64, p.reduce_merged(0));
}
