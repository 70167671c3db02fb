//! A workload of tasks (sim/tasks.rs): each task on its own clock, on the machine's CPUs.

use crate::common::{config, metric, run, Serial, TaskVecSource};
use reclaimlab_trace::{flags, Access, FileRange};

/// `n` read()s of consecutive uncached file pages from `first`, 1 µs of CPU before each.
fn reads(first: u32, n: u32) -> Vec<Access> {
    (first..first + n).map(|page| Access { page, cgroup: 0, flags: flags::FILE | flags::SYSCALL, gap: 1_000 }).collect()
}

/// `n` loads of one anonymous page, `gap_ns` of CPU before each.
fn compute(page: u32, n: u32, gap_ns: u32) -> Vec<Access> {
    vec![Access { page, cgroup: 0, flags: 0, gap: gap_ns }; n as usize]
}

fn files() -> Vec<FileRange> {
    vec![FileRange { name: "a".into(), first: 0, nr_pages: 200, advice: 0 }, FileRange { name: "b".into(), first: 200, nr_pages: 200, advice: 0 }]
}

fn machine(cpus: &str) -> reclaimlab_core::config::SimConfig {
    config(&[("machine.memory", "64M"), ("machine.cpus", cpus), ("block.read_ahead_kb", "0"), ("block.parallel_reads", "2")])
}

#[test]
fn a_task_waiting_for_io_delays_only_itself() {
    let cfg = machine("2");
    let tasks = || TaskVecSource::new(vec![reads(0, 200), reads(200, 200)], vec![None, None], files());
    let parallel = run(&cfg, &mut tasks());
    let serial = run(&cfg, &mut Serial(tasks()));
    let read_s = 200.0 * cfg.cost.file_read_ns as f64 / 1e9;
    let (p, s) = (metric(&parallel, "runtime_s"), metric(&serial, "runtime_s"));
    // Each task waits for its own 200 reads; one clock waits for all 400.
    assert!(p >= read_s && p < 1.1 * read_s, "tasks: {p} s for {read_s} s of reads each");
    assert!(s >= 2.0 * read_s, "one clock: {s} s");
    // A disk that serves one read at a time makes the tasks wait for each other's.
    let mut one = cfg.clone();
    one.set("block.parallel_reads", "1").unwrap();
    let q = metric(&run(&one, &mut tasks()), "runtime_s");
    assert!(q >= 2.0 * read_s, "one read at a time: {q} s");
}

#[test]
fn tasks_share_a_cpu_for_their_work_but_not_for_their_waits() {
    let work = || TaskVecSource::new(vec![compute(400, 200, 10_000), compute(401, 200, 10_000)], vec![None, None], files());
    let (one, two) = (run(&machine("1"), &mut work()), run(&machine("2"), &mut work()));
    for (r, cpus) in [(&one, 1.0), (&two, 2.0)] {
        // 4 ms of work in all (and two first touches); the baseline is the same.
        let (t, b) = (metric(r, "runtime_s"), metric(r, "baseline_runtime_s"));
        assert!((t * cpus - 4e-3).abs() < 0.05e-3 && (b - t).abs() < 1e-9, "{cpus} CPUs: {t} s, baseline {b} s");
    }
    // Waiting for reads leaves the CPU to the other task: two readers on one CPU take
    // about as long as on two.
    let io = || TaskVecSource::new(vec![reads(0, 200), reads(200, 200)], vec![None, None], files());
    let one = metric(&run(&machine("1"), &mut io()), "runtime_s");
    let two = metric(&run(&machine("2"), &mut io()), "runtime_s");
    assert!(one < 1.05 * two, "readers: {one} s on one CPU, {two} s on two");
}

#[test]
fn work_another_task_starts_begins_after_it() {
    let chain = TaskVecSource::new(vec![compute(400, 200, 10_000), compute(401, 200, 10_000)], vec![None, Some(0)], files());
    let side = TaskVecSource::new(vec![compute(400, 200, 10_000), compute(401, 200, 10_000)], vec![None, None], files());
    let (c, s) = (metric(&run(&machine("2"), &mut { chain }), "runtime_s"), metric(&run(&machine("2"), &mut { side }), "runtime_s"));
    assert!((c / s - 2.0).abs() < 0.05, "task 1 after task 0: {c} s; side by side: {s} s");
}

/// `machine.task_cpus`: the trace's task runs where a guest's scheduler put it, kswapd on
/// the CPU it left. Which CPU is which does not matter; moving does (the per-CPU lists
/// the task allocates from are then the ones kswapd freed into).
#[test]
fn the_traces_task_moves_between_cpus_and_kswapd_takes_the_other() {
    use crate::common::{vm, VecSource};
    let pages = 3 * 4096; // a file three times a 16 MiB machine, read twice in order
    let recs: Vec<Access> = (0..2).flat_map(|_| reads(0, pages)).collect();
    let file = vec![FileRange { name: "f".into(), first: 0, nr_pages: pages, advice: 0 }];
    let cfg = |moves: &str| config(&[("machine.memory", "16M"), ("swap.device", "none"), ("block.read_ahead_kb", "0"), ("machine.task_cpus", moves)]);
    let counters = ["pgsteal_kswapd", "pgsteal_direct", "allocstall_normal", "pgscan_kswapd", "pageoutrun"];
    let of = |r: &reclaimlab_core::RunResult| counters.map(|c| vm(r, c));
    let base = run(&cfg("none"), &mut VecSource::new(recs.clone(), file.clone()));
    let on_0 = of(&base);
    assert!(on_0[0] > 0, "kswapd reclaimed nothing: {on_0:?}");
    let on_1 = of(&run(&cfg("0:1"), &mut VecSource::new(recs.clone(), file.clone())));
    assert_eq!(on_0, on_1, "the task on CPU 1 and kswapd on CPU 0 is the same machine");
    let t_end = metric(&base, "runtime_s");
    let moves: Vec<String> = (1..200).map(|i| format!("{}:{}", t_end * i as f64 / 200.0, i % 2)).collect();
    let moving = of(&run(&cfg(&moves.join(",")), &mut VecSource::new(recs.clone(), file.clone())));
    assert_ne!(on_0, moving, "199 moves changed nothing");
    let bad = reclaimlab_core::config::SimConfig::default().set("machine.task_cpus", "1:0,0.5:1").unwrap_err().to_string();
    assert!(bad.contains("machine.task_cpus") && bad.contains("0.5:1"), "{bad}");
    let mut c = reclaimlab_core::config::SimConfig::default();
    c.set("machine.task_cpus", "0:1,2.5:0").unwrap();
    assert_eq!(c.task_cpus, [(0.0, 1), (2.5, 0)]);
    c.set("machine.task_cpus", "0:2").unwrap();
    let err = c.validate().unwrap_err().to_string();
    assert!(err.contains("machine.task_cpus") && err.contains("CPU 2"), "{err}");
}
