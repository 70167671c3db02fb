//! Readahead and fault-around (mm/readahead.c, mm/filemap.c, mm/memory.c 6.12): what
//! the page cache reads and maps for read() and mapped faults, in counts that follow
//! from the kernel's window rules (`block.read_ahead_kb`, `fault_around_bytes`).

use crate::common::*;
use reclaimlab_trace::{flags, Access, FileRange};

const READ: u8 = flags::FILE | flags::SYSCALL;
const MAPPED: u8 = flags::FILE;

fn file(pages: u32) -> Vec<FileRange> {
    vec![FileRange { name: "f".into(), first: 0, nr_pages: pages, advice: 0 }]
}

fn accesses(pages: impl IntoIterator<Item = u32>, fl: u8) -> Vec<Access> {
    pages.into_iter().map(|page| Access { page, cgroup: 0, flags: fl, gap: 0 }).collect()
}

fn run_with(recs: Vec<Access>, files: Vec<FileRange>, kv: &[(&str, &str)]) -> reclaimlab_core::RunResult {
    let mut all = vec![("machine.memory", "64M"), ("swap.device", "none")];
    all.extend_from_slice(kv);
    run_checked(&config(&all), &mut VecSource::new(recs, files), 1000)
}

/// A sequential read() of a cached-size file with the default 128 KiB window: the
/// first miss reads 4 pages (get_init_ra_size(1, 32)), and from then on every
/// PG_readahead page pushes the window ahead (8, 16, 32, 32, … pages), so the task
/// misses once and every page is read exactly once, with nothing past end of file.
#[test]
fn sequential_read_misses_once_and_reads_each_page_once() {
    let r = run_with(accesses(0..1000, READ), file(1000), &[]);
    assert_eq!(vm(&r, "pgpgin"), 4 * 1000);
    assert_eq!(metric(&r, "major_faults") as u64, 1);
    // Without readahead every page is its own synchronous read.
    let r = run_with(accesses(0..1000, READ), file(1000), &[("block.read_ahead_kb", "0")]);
    assert_eq!(vm(&r, "pgpgin"), 4 * 1000);
    assert_eq!(metric(&r, "major_faults") as u64, 1000);
}

/// Random reads do not read ahead: page_cache_sync_ra finds no cached history before
/// the page (contig_count <= req_count) and reads the page alone. A read right after
/// its predecessor (index - prev_index == 1) is sequential and starts a window of 4.
#[test]
fn random_reads_read_one_page_and_a_successor_starts_a_window() {
    let pages: Vec<u32> = (0..200).map(|i| (i * 7919) % 5000 + 1).collect();
    let r = run_with(accesses(pages.clone(), READ), file(6000), &[]);
    let distinct = {
        let mut p = pages.clone();
        p.sort();
        p.dedup();
        p.len() as u64
    };
    assert_eq!(vm(&r, "pgpgin"), 4 * distinct);
    // 100 then 101: the second read is sequential → pages 101..105 (window 4, marker 102).
    let r = run_with(accesses([100, 101], READ), file(6000), &[]);
    assert_eq!(vm(&r, "pgpgin"), 4 * (1 + 4));
}

/// One read() of 6 pages (a WiredTiger block: READ_CONT records) at a random offset
/// reads exactly those 6 pages (do_page_cache_ra(req_count, 0)); the same pages as six
/// 4 KiB reads look sequential from the second on and read a window past the block.
#[test]
fn a_multi_page_read_is_one_request() {
    let mut one_call = accesses(300..306, READ);
    for a in &mut one_call[1..] {
        a.flags |= flags::READ_CONT;
    }
    let r = run_with(one_call, file(6000), &[]);
    assert_eq!(vm(&r, "pgpgin"), 4 * 6);
    let r = run_with(accesses(300..306, READ), file(6000), &[]);
    assert!(vm(&r, "pgpgin") > 4 * 6, "six single-page reads ramp up readahead: {}", vm(&r, "pgpgin"));
}

/// A mapped fault reads around: 32 pages centred on the fault (ra->start = index - 16),
/// one major fault. Fault-around then maps the 16-page aligned window's cached pages
/// young, so touching them is not a fault; without fault-around each is a minor fault.
#[test]
fn mapped_fault_reads_around_and_maps_its_neighbours() {
    let touch: Vec<u32> = std::iter::once(1000).chain(992..1008).collect();
    let r = run_with(accesses(touch.clone(), MAPPED), file(4096), &[]);
    assert_eq!(vm(&r, "pgpgin"), 4 * 32);
    assert_eq!(vm(&r, "pgmajfault"), 1);
    assert_eq!(vm(&r, "pgfault"), 1, "the 16-page window 992..1008 was mapped by fault-around");
    let r = run_with(accesses(touch, MAPPED), file(4096), &[("fault_around_bytes", "4096")]);
    assert_eq!(vm(&r, "pgmajfault"), 1);
    assert_eq!(vm(&r, "pgfault"), 1 + 15, "every neighbour is a minor fault of its own");
}

/// `mmap_miss`: without fault-around's hits, more than MMAP_LOTSAMISS (100) mapped
/// misses turn read-around off, and later faults read one page each. With fault-around,
/// each fault's mapped neighbours count as hits, so read-around stays on.
#[test]
fn lots_of_mapped_misses_turn_read_around_off() {
    // Faults 64 pages apart: windows never overlap.
    let faults: Vec<u32> = (0..150).map(|i| i * 64 + 32).collect();
    let r = run_with(accesses(faults.clone(), MAPPED), file(150 * 64), &[("fault_around_bytes", "4096")]);
    assert_eq!(vm(&r, "pgpgin"), 4 * (100 * 32 + 50));
    let r = run_with(accesses(faults, MAPPED), file(150 * 64), &[]);
    assert_eq!(vm(&r, "pgpgin"), 4 * 150 * 32);
}

/// Readahead stops at the end of the file and never reads another file's pages.
#[test]
fn readahead_stays_inside_the_file() {
    let files = vec![FileRange { name: "a".into(), first: 0, nr_pages: 10, advice: 0 }, FileRange { name: "b".into(), first: 10, nr_pages: 100, advice: 0 }];
    // A mapped fault at a's page 9: read-around is pages 0..10 of a only.
    let r = run_with(accesses([9], MAPPED), files.clone(), &[]);
    assert_eq!(vm(&r, "pgpgin"), 4 * 10);
    // Page 50 belongs to no file of a trace with a table that stops at 40: read alone.
    let r = run_with(accesses([50], MAPPED), vec![FileRange { name: "a".into(), first: 0, nr_pages: 40, advice: 0 }], &[]);
    assert_eq!(vm(&r, "pgpgin"), 4);
}

/// Pages read ahead that come back from eviction are workingset refaults like any
/// other (filemap_add_folio → workingset_refault), counted whether or not the task
/// asked for them.
#[test]
fn readahead_pages_refault_through_the_workingset() {
    // 16 MiB machine, a file of twice that read sequentially twice.
    let pages = 2 * 16 * MIB;
    let recs = accesses((0..pages).chain(0..pages), READ);
    let mut kv = vec![("machine.memory", "16M")];
    kv.push(("swap.device", "none"));
    let r = run_checked(&config(&kv), &mut VecSource::new(recs, file(pages)), 10_000);
    assert_eq!(vm(&r, "pgpgin"), 4 * 2 * pages as u64, "every page read twice, each once per pass");
    assert!(vm(&r, "workingset_refault_file") > 0);
    assert!(metric(&r, "major_faults") < 10.0, "readahead keeps the stream ahead of the task: {}", metric(&r, "major_faults"));
}

/// Asynchronous readahead takes disk time: its pages are cached at once but locked until
/// the disk serves the window (one request of `cost.file_read_ns`), and a read that
/// reaches them waits. A sequential read of 1,000 pages is one synchronous window and 33
/// asynchronous ones (8, 16, then 32 pages), so the task waits about 34 reads of 80 µs,
/// less the time it spends reading the pages meanwhile — where without readahead it
/// waits 1,000.
#[test]
fn asynchronous_readahead_paces_a_sequential_reader_by_the_disk() {
    let r = run_with(accesses(0..1000, READ), file(1000), &[]);
    let waited = metric(&r, "io_wait_s") / 80e-6;
    assert!((32.0..=34.0).contains(&waited), "waited {waited:.1} reads");
    let r0 = run_with(accesses(0..1000, READ), file(1000), &[("block.read_ahead_kb", "0")]);
    assert!(metric(&r0, "io_wait_s") / 80e-6 > 1000.0);
}

/// `task_cpu_s` is the task's time on its CPU: a cold read() waits for the disk
/// (`cost.file_read_ns`, off its CPU) after the fault's own work (`cost.major_fault_ns`
/// and the access, on it). 1,000 reads without readahead: 1,000 × (100 + 1,500) ns on
/// the CPU of a runtime that also waits 1,000 × 80 µs; with readahead the CPU is nearly
/// the same and the waits fall to the asynchronous windows the task catches up with.
#[test]
fn task_cpu_leaves_out_the_disk_waits() {
    let r0 = run_with(accesses(0..1000, READ), file(1000), &[("block.read_ahead_kb", "0")]);
    let cpu = metric(&r0, "task_cpu_s");
    assert!((cpu - 1000.0 * 1.6e-6).abs() < 1e-9, "task CPU {cpu}");
    assert!((metric(&r0, "runtime_s") - cpu - 1000.0 * 80e-6).abs() < 1e-9);
    let r = run_with(accesses(0..1000, READ), file(1000), &[]);
    let waits = metric(&r, "runtime_s") - metric(&r, "task_cpu_s");
    assert!((waits - metric(&r, "io_wait_s")).abs() < 1e-3 * waits.max(1e-9) + 2e-6, "waits {waits} vs io_wait {}", metric(&r, "io_wait_s"));
    assert!(metric(&r, "task_cpu_s") < 2.0 * cpu);
}
