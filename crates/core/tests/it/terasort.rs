//! The `hadoop-terasort` scenario (seed 002) end to end: both declared policies, swap on
//! (zram) and off, the seed's three concurrency levels (½, 1, 2 tasks per CPU), at a tiny
//! scale; invariants hold, the work is fixed, and more concurrency means more pressure and
//! longer stalls (without the JVM heap model); the JVM heaps, sized as G1 sizes them, stay far below
//! their `-Xmx` and are not swapped at `vm.swappiness=1`.

use reclaimlab_core::scenario;
use reclaimlab_core::sim;

const SCALE: f64 = 1.0 / 32.0; // a 1 GiB machine

fn vm(r: &reclaimlab_core::RunResult, name: &str) -> u64 {
    r.vmstat.iter().find(|(k, _)| *k == name).unwrap_or_else(|| panic!("no vmstat {name}")).1
}

fn metric(r: &reclaimlab_core::RunResult, name: &str) -> f64 {
    r.metrics.iter().find(|(k, _)| k == name).unwrap_or_else(|| panic!("no metric {name}")).1
}

#[test]
fn runs_for_both_policies_swap_on_and_off_at_three_concurrency_levels() {
    let s = scenario::get("hadoop-terasort").unwrap();
    assert_eq!(s.policies, &["classic@6.15", "mglru@6.15"]);
    for policy in s.policies {
        for swap in ["zram", "none"] {
            let mut pressure = Vec::new();
            let mut runtimes = Vec::new();
            let mut baselines = Vec::new();
            for tpc in ["0.5", "1", "2"] {
                // The slot-buffer model (no JVM heap), its reduces' buffers small (100 a
                // job): the concurrency gradient alone.
                let params = [("tasks_per_cpu", tpc), ("heap_mb", "0"), ("reduces", "100")];
                let p = s.terasort_params(SCALE, &params).unwrap().unwrap();
                let mut cfg = s.config_at(SCALE).unwrap();
                cfg.set("policy", policy).unwrap();
                cfg.set("swap.device", swap).unwrap();
                let mut src = s.source_with(7, SCALE, &params).unwrap();
                assert_eq!(src.meta().cgroups, vec!["", "hadoop"]);
                let mut sim = sim::build(&cfg).unwrap();
                loop {
                    let done = sim.run(src.as_mut(), 1 << 20).unwrap();
                    sim.check_invariants().unwrap();
                    if done {
                        break;
                    }
                }
                assert_eq!(sim.accesses(), p.nr_accesses(), "{policy} swap={swap} tpc={tpc}: fixed work");
                let r = sim.finish();
                assert_eq!(vm(&r, "oom_kill"), 0);
                if swap == "none" {
                    assert_eq!(vm(&r, "pswpout"), 0);
                }
                // Spills and outputs are written through the page cache and written back.
                assert!(vm(&r, "pgpgout") > 0, "{policy} swap={swap} tpc={tpc}: no writeback");
                let rt = metric(&r, "runtime_s");
                assert!(rt > 0.0 && rt.is_finite());
                let pr = vm(&r, "pgscan_kswapd") + vm(&r, "pgscan_direct") + vm(&r, "pswpout");
                eprintln!("{policy} swap={swap} tpc={tpc}: runtime {rt:.2}s pgscan+pswpout {pr} refault {}", vm(&r, "workingset_refault_file"));
                pressure.push(pr);
                runtimes.push(rt);
                baselines.push(metric(&r, "baseline_runtime_s"));
            }
            assert!(pressure[2] > pressure[0], "{policy} swap={swap}: 2 tasks/CPU must press harder than ½: {pressure:?}");
            assert!(pressure[1] >= pressure[0], "{policy} swap={swap}: {pressure:?}");
            // The tasks run on the machine's CPUs: at ½ task per CPU half of them idle, so
            // the work alone (the baseline) finishes sooner at 1; memory pressure adds its
            // stalls on top, more of them at 2 tasks per CPU than at ½.
            assert!(baselines[1] < baselines[0], "{policy} swap={swap}: more tasks at work: {baselines:?}");
            let stalls: Vec<f64> = runtimes.iter().zip(&baselines).map(|(r, b)| r - b).collect();
            assert!(stalls.iter().all(|&x| x >= 0.0), "{policy} swap={swap}: {runtimes:?} under {baselines:?}");
            assert!(stalls[2] > stalls[0], "{policy} swap={swap}: more pressure, longer stalls: {stalls:?}");
        }
    }
}

#[test]
fn concurrency_parameter_sets_tasks_per_job_not_work() {
    let s = scenario::get("hadoop-terasort").unwrap();
    let at = |tpc: &str| s.terasort_params(1.0, &[("tasks_per_cpu", tpc)]).unwrap().unwrap();
    // The seed: 48 CPUs, 12 jobs, mapreduce.local.{map,reduce}.tasks.maximum = 2, 4, 8.
    assert_eq!((at("0.5").slots(), at("1").slots(), at("2").slots()), (2, 4, 8));
    assert_eq!(at("0.5").nr_accesses(), at("2").nr_accesses());
    // With the JVM heap model each job's anonymous address space is its heap's maximum,
    // whatever the concurrency (what G1 touches of it is the last test's):
    // HADOOP_HEAPSIZE_MAX 22G / 8 = 2.75 GiB, InitialHeapSize 32 GiB / 64.
    assert_eq!(at("2").anon_pages(), at("0.5").anon_pages());
    assert_eq!((at("1").heap_pages, at("1").heap_init_pages), (22528 * 256 / 8, 512 * 256));
    assert_eq!(at("2").anon_pages(), 12 * 22528 * 256 / 8);
    // -Xms: OpenJDK's default (RAM / 64 = 4096 MiB on the benchmark's machine) unless
    // given, at most -Xmx.
    let xms = |v: &str| s.terasort_params(1.0, &[("heap_init_mb", v)]).unwrap().unwrap();
    assert_eq!(xms("4096"), at("1"));
    assert_eq!(xms("22528").heap_init_pages, at("1").heap_pages);
    assert_eq!(xms("40000").heap_init_pages, at("1").heap_pages);
    assert!(s.params.iter().any(|(n, d, _)| *n == "heap_init_mb" && *d == "4096"));
    // Without it, the slot buffers: ×4 from ½ to 2 tasks per CPU.
    let slots = |tpc: &str| s.terasort_params(1.0, &[("tasks_per_cpu", tpc), ("heap_mb", "0")]).unwrap().unwrap();
    assert_eq!(slots("2").anon_pages(), 4 * slots("0.5").anon_pages());
    // Defaults are the declared ones.
    assert_eq!(s.terasort_params(1.0, &[]).unwrap().unwrap(), at("1"));
    assert!(s.params.iter().any(|(n, d, _)| *n == "tasks_per_cpu" && *d == "1"));
    let p = s.terasort_params(1.0, &[("cpus", "8"), ("jobs", "2"), ("tasks_per_cpu", "2"), ("sort_mb", "100")]).unwrap().unwrap();
    assert_eq!((p.cpus, p.jobs, p.slots()), (8, 2, 8));
    assert_eq!(p.sort_buffer_pages, 3052); // 100 MB / 8
}

#[test]
fn scale_is_the_seed_machine_at_8() {
    let s = scenario::get("hadoop-terasort").unwrap();
    assert!(s.scalable());
    assert_eq!(s.config().memory_bytes, 32 << 30);
    let c = s.config_at(8.0).unwrap();
    assert_eq!(c.memory_bytes, 256 << 30);
    assert_eq!(c.get("vm.swappiness").unwrap(), "1");
    let p = s.terasort_params(8.0, &[]).unwrap().unwrap();
    // 100 M TeraGen records of 100 bytes, 32 MiB splits, io.sort.mb = 1000.
    assert!((p.input_pages as f64 * 4096.0 / 1e10 - 1.0).abs() < 1e-5, "{}", p.input_pages);
    assert_eq!(p.split_pages, 32 * 256);
    assert_eq!(p.sort_buffer_pages, (1000e6_f64 / 4096.0).round() as u32);
    assert_eq!(p.maps(), 299);
    // At scale 1 the files alone exceed memory at every concurrency.
    let p1 = s.terasort_params(1.0, &[]).unwrap().unwrap();
    assert!(p1.file_pages() * 4096 > (s.config().memory_bytes as f64 * 0.9) as u64);
}

#[test]
fn bad_workload_parameters_are_errors() {
    let s = scenario::get("hadoop-terasort").unwrap();
    let e = s.source_with(1, 1.0, &[("concurrency", "2")]).err().unwrap().to_string();
    assert!(e.contains("unknown workload parameter") && e.contains("tasks_per_cpu"), "{e}");
    let e = s.source_with(1, 1.0, &[("tasks_per_cpu", "-1")]).err().unwrap().to_string();
    assert!(e.contains("tasks_per_cpu"), "{e}");
    let e = s.source_with(1, 1.0, &[("jobs", "1.5")]).err().unwrap().to_string();
    assert!(e.contains("jobs"), "{e}");
    // Scenarios without parameters reject any.
    let e = scenario::get("default").unwrap().source_with(1, 1.0, &[("tasks_per_cpu", "1")]).err().unwrap().to_string();
    assert!(e.contains("accepted: none"), "{e}");
    assert!(scenario::get("default").unwrap().source_with(1, 1.0, &[]).is_ok());
    // A heap too small for the task slots' buffers is java.lang.OutOfMemoryError.
    let e = s.source_with(1, 1.0, &[("tasks_per_cpu", "2"), ("heap_mb", "4000")]).err().unwrap().to_string();
    assert!(e.contains("heap_pages") && e.contains("OutOfMemoryError"), "{e}");
}

/// The benchmark's heaps under G1's sizing (crates/trace/src/gen/jvmheap.rs) and its one
/// reduce (crates/trace/src/gen/terasort.rs): dead sort buffers pile up while G1's
/// concurrent cycle runs, so each JVM touches more of its `-Xmx` the more tasks it runs;
/// the 20G heap's shuffle passes its merge threshold and writes the map outputs to disk
/// once more, the 22G heap's does not.
#[test]
fn jvm_heaps_grow_with_concurrency_and_the_smaller_heap_merges_to_disk() {
    let s = scenario::get("hadoop-terasort").unwrap();
    let touched = |tpc: &str, heap: &str| {
        let params = [("tasks_per_cpu", tpc), ("heap_mb", heap)];
        let p = s.terasort_params(1.0, &params).unwrap().unwrap();
        let mut src = s.source_with(3, 1.0, &params).unwrap();
        let (mut seen, mut buf, mut writes) = (vec![false; p.nr_pages() as usize], Vec::new(), 0u64);
        while src.read_batch(&mut buf, 1 << 16).unwrap() > 0 {
            for a in &buf {
                seen[a.page as usize] |= !a.is_file();
                writes += (a.is_file() && a.is_write()) as u64;
            }
        }
        assert_eq!(writes, p.file_writes());
        (seen.iter().filter(|&&x| x).count() as f64 / p.anon_pages() as f64, writes)
    };
    let (lo, w22) = touched("0.5", "22528");
    let (hi, _) = touched("2", "22528");
    // The real program's JVMs (docs/terasort-jvm.md, without the GC-time rule): the
    // committed heap peaks at 0.58 and 0.99 of -Xmx at 2 and 8 tasks.
    assert!((0.4..0.7).contains(&lo) && hi > 0.9 && hi <= 1.0, "{lo} {hi}");
    let (_, w20) = touched("0.5", "20480");
    let p = s.terasort_params(1.0, &[]).unwrap().unwrap();
    assert_eq!(w20 - w22, p.jobs as u64 * 285 * p.split_pages as u64);
}
