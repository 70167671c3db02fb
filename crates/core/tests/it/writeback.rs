//! Dirty page cache under reclaim and writers under `balance_dirty_pages`, as 6.12 has
//! them (mm/vmscan.c `shrink_folio_list`, MGLRU `sort_folio`, mm/filemap.c
//! `folio_end_writeback`, mm/swap.c `folio_rotate_reclaimable`, mm/page-writeback.c).

use crate::common::*;
use reclaimlab_core::mm::page::{is_resident, pg};
use reclaimlab_core::mm::vmstat::Ev;
use reclaimlab_core::policy::classic::{Classic, Mainline};
use reclaimlab_core::policy::mglru::{self, Mglru};
use reclaimlab_core::policy::ReclaimPolicy;
use reclaimlab_core::sim::engine::Machine;
use reclaimlab_core::sim::Engine;
use reclaimlab_core::vmscan::try_to_free_pages;
use reclaimlab_trace::{generate, AccessKind, Pattern};

const WRITTEN: u32 = 8 * MIB;

/// A 16 MiB machine without swap whose flusher never runs on its own (no periodic
/// writeback, thresholds above what is written): 8 MiB of a file written once with
/// write(), so every file page is dirty when reclaim comes. Its disk takes `write_ns` per
/// page.
/// Its flusher writes everything it is asked for at once (`cost.flusher_page_ns` 0): these
/// tests count on every dirty page being under writeback once reclaim has woken it.
pub fn dirty_machine_with<P: ReclaimPolicy>(policy: P, write_ns: &str) -> Machine<P> {
    dirty_machine_cfg(policy, &[("cost.file_write_ns", write_ns), ("cost.flusher_page_ns", "0")])
}

/// [`dirty_machine_with`] with more settings (`cost.file_write_ns` among them).
fn dirty_machine_cfg<P: ReclaimPolicy>(policy: P, extra: &[(&str, &str)]) -> Machine<P> {
    let base = [
        ("machine.memory", "16M"),
        ("swap.device", "none"),
        ("block.read_ahead_kb", "0"),
        ("vm.dirty_writeback_centisecs", "0"),
        ("vm.dirty_background_bytes", "12M"),
        ("vm.dirty_bytes", "14M"),
    ];
    let cfg = config(&[&base[..], extra].concat());
    let mut log = region("log", WRITTEN, AccessKind::FileRead);
    log.write_ratio = 1.0;
    let p = program(vec![log], vec![phase("write", WRITTEN as u64, &[(0, Pattern::Sequential, 1.0)])]);
    let mut m = Machine::new(&cfg, policy);
    m.run(generate(p, 1).unwrap().as_mut(), u64::MAX).unwrap();
    assert_eq!((m.mm.wb.nr_dirty, m.mm.wb.nr_writeback), (WRITTEN as u64, 0));
    m
}

/// [`dirty_machine_with`] and a disk far slower than a jiffy per page (50 ms), so that
/// nothing completes while direct reclaim sleeps in `reclaim_throttle`.
fn dirty_machine<P: ReclaimPolicy>(policy: P) -> Machine<P> {
    dirty_machine_with(policy, "50000000")
}

fn resident(m: &Machine<impl ReclaimPolicy>, page: u32) -> Option<u32> {
    let pte = m.mm.pages.pte[page as usize];
    is_resident(pte).then_some(pte)
}

/// Reclaim meets only dirty file folios: it frees none of them. It marks them PG_reclaim
/// and keeps them (classic and mglru@6.12 activate them in `shrink_folio_list`, counting
/// nr_vmscan_immediate_reclaim; mglru@6.15's `sort_folio` moves them to the next
/// generation), and — every file folio it took being unqueued dirty — wakes the flusher,
/// which writes them all. When the disk completes a PG_reclaim folio, it is rotated to
/// the tail (pgrotated), and the next reclaim frees it. Reclaim never writes a file folio
/// itself (nr_vmscan_write stays 0: ext4 has no ->writepage).
fn dirty_folios_are_rotated_after_writeback<P: ReclaimPolicy>(policy: P, name: &str, immediate: bool) {
    let mut m = dirty_machine(policy);
    let (reclaimed, _) = try_to_free_pages(&mut m.mm, &mut m.policy, &[0]);
    let v = |m: &Machine<P>, e| m.mm.vmstat.get(e);
    assert_eq!(reclaimed, 0, "{name}: a dirty folio was freed");
    // Fruitless at priority 1, direct reclaim slept a jiffy (NOPROGRESS) per round: too
    // short for this disk to complete a write.
    assert!(m.mm.reclaim_throttle_ns > 0, "{name}: consider_reclaim_throttle slept");
    assert_eq!(v(&m, Ev::PgstealFile), 0, "{name}");
    assert!((0..WRITTEN).all(|p| resident(&m, p).is_some()), "{name}: every written page is still cached");
    assert_eq!(m.mm.wb.nr_writeback + v(&m, Ev::NrWritten), WRITTEN as u64, "{name}: reclaim woke the flusher for all of them");
    assert_eq!(v(&m, Ev::NrWritten), 0, "{name}: the disk has not completed anything yet");
    assert_eq!(v(&m, Ev::NrVmscanWrite), 0, "{name}");
    assert_eq!(v(&m, Ev::NrVmscanImmediate) > 0, immediate, "{name}: nr_vmscan_immediate_reclaim");
    let marked: Vec<u32> = (0..WRITTEN).filter(|&p| m.mm.frames.test(resident(&m, p).unwrap(), pg::RECLAIM)).collect();
    assert!(!marked.is_empty(), "{name}: reclaim marked the folios it met PG_reclaim");
    assert!(marked.iter().all(|&p| m.mm.frames.test(resident(&m, p).unwrap(), pg::WRITEBACK)));
    // The disk completes every write.
    m.end_writeback_due(u64::MAX);
    assert_eq!((m.mm.wb.nr_writeback, v(&m, Ev::NrWritten)), (0, WRITTEN as u64), "{name}");
    assert_eq!(v(&m, Ev::Pgrotated), marked.len() as u64, "{name}: each PG_reclaim folio rotated once");
    eprintln!("{name}: {} marked PG_reclaim, nr_vmscan_immediate_reclaim {}, pgrefill {}", marked.len(), v(&m, Ev::NrVmscanImmediate), v(&m, Ev::Pgrefill));
    for &p in &marked {
        let pfn = resident(&m, p).unwrap();
        assert!(
            m.mm.frames.flags(pfn) & (pg::RECLAIM | pg::WRITEBACK | pg::DIRTY | pg::ACTIVE) == 0 && m.mm.frames.test(pfn, pg::LRU),
            "{name}: rotated folios are clean, inactive, on the LRU"
        );
    }
    m.check_invariants().unwrap();
    // Now they are clean and at the tail: reclaim frees them.
    let (reclaimed, _) = try_to_free_pages(&mut m.mm, &mut m.policy, &[0]);
    assert!(reclaimed > 0 && v(&m, Ev::PgstealFile) == reclaimed, "{name}: {reclaimed} reclaimed after writeback");
    let freed_marked = marked.iter().filter(|&&p| resident(&m, p).is_none()).count() as u64;
    assert!(freed_marked > 0, "{name}: the rotated folios went first");
    m.check_invariants().unwrap();
}

#[test]
fn classic_rotates_dirty_folios_after_writeback() {
    dirty_folios_are_rotated_after_writeback(Classic::new(Mainline), "classic@6.15", true);
}

#[test]
fn mglru_6_12_rotates_dirty_folios_after_writeback() {
    dirty_folios_are_rotated_after_writeback(Mglru::new(mglru::v6_12::Mglru612::new()), "mglru@6.12", true);
}

#[test]
fn mglru_6_15_rotates_dirty_folios_after_writeback() {
    dirty_folios_are_rotated_after_writeback(Mglru::new(mglru::Mainline), "mglru@6.15", false);
}

/// `cost.flusher_page_ns`: the flusher woken by reclaim (`wakeup_flusher_threads`) puts one
/// page under writeback per `cost.flusher_page_ns`, oldest first, the rest staying dirty
/// until their turn — never more than the time since it was woken allows, whatever the
/// disk — so reclaim, which goes on meanwhile, meets dirty folios where an instant flusher
/// has already put every one under writeback: it counts more `nr_vmscan_immediate_reclaim`
/// (6.12: a dirty file folio met by reclaim) and marks fewer writeback folios. In the end
/// every page is written once and the same invariants hold.
fn a_paced_flusher_leaves_folios_dirty_for_reclaim<P: ReclaimPolicy>(policy: impl Fn() -> P, name: &str) {
    const FLUSHER_NS: u64 = 1_000_000;
    let disk = ("cost.file_write_ns", "50000000");
    let mut instant = dirty_machine_cfg(policy(), &[disk, ("cost.flusher_page_ns", "0")]);
    let mut paced = dirty_machine_cfg(policy(), &[disk, ("cost.flusher_page_ns", "1000000")]);
    let woken = paced.mm.now;
    let (r0, _) = try_to_free_pages(&mut instant.mm, &mut instant.policy, &[0]);
    let (r1, _) = try_to_free_pages(&mut paced.mm, &mut paced.policy, &[0]);
    assert_eq!((r0, r1), (0, 0), "{name}: a dirty folio was freed");
    let v = |m: &Machine<P>, e| m.mm.vmstat.get(e);
    assert_eq!(instant.mm.wb.nr_writeback, WRITTEN as u64, "{name}: the instant flusher wrote everything at once");
    let submitted = paced.mm.wb.nr_writeback + v(&paced, Ev::NrWritten);
    let allowed = (paced.mm.now - woken) / FLUSHER_NS + 1;
    assert!(submitted > 0 && submitted <= allowed, "{name}: {submitted} pages submitted in {} ns", paced.mm.now - woken);
    assert!(paced.mm.wb.nr_dirty >= WRITTEN as u64 - submitted, "{name}: the rest are still dirty");
    assert!(paced.mm.wb.in_flight() as u64 == paced.mm.wb.nr_writeback);
    let (i0, i1) = (v(&instant, Ev::NrVmscanImmediate), v(&paced, Ev::NrVmscanImmediate));
    assert!(i1 > i0, "{name}: reclaim met more dirty folios behind a paced flusher ({i1} against {i0})");
    eprintln!("{name}: nr_vmscan_immediate_reclaim {i0} (instant flusher) / {i1} (paced), {submitted} submitted");
    // The flusher and the disk finish: every page written once, each PG_reclaim folio
    // rotated once, nothing dirty.
    paced.end_writeback_due(u64::MAX);
    assert_eq!((paced.mm.wb.nr_dirty, paced.mm.wb.nr_writeback, v(&paced, Ev::NrWritten)), (0, 0, WRITTEN as u64), "{name}");
    assert_eq!(paced.mm.wb.next_done(), u64::MAX, "{name}: the flusher is idle");
    paced.check_invariants().unwrap();
}

#[test]
fn classic_meets_dirty_folios_behind_a_paced_flusher() {
    a_paced_flusher_leaves_folios_dirty_for_reclaim(|| Classic::new(Mainline), "classic@6.15");
}

#[test]
fn mglru_6_12_meets_dirty_folios_behind_a_paced_flusher() {
    a_paced_flusher_leaves_folios_dirty_for_reclaim(|| Mglru::new(mglru::v6_12::Mglru612::new()), "mglru@6.12");
}

/// balance_dirty_pages: a writer dirtying a 32 MiB file far faster than a 1 ms/page disk
/// writes is held at the dirty limit — dirty + writeback never exceeds
/// `vm.dirty_ratio` (20%) of dirtyable memory — and so runs at the disk's pace; with the
/// limit above what it writes, it is never paused.
#[test]
fn writers_are_throttled_at_the_dirty_limit() {
    let pages = 32 * MIB;
    let run = |extra: &[(&str, &str)]| {
        let mut kv = vec![("machine.memory", "64M"), ("swap.device", "none"), ("block.read_ahead_kb", "0"), ("cost.file_write_ns", "1000000")];
        kv.extend_from_slice(extra);
        let cfg = config(&kv);
        let mut out = region("out", pages, AccessKind::FileRead);
        out.write_ratio = 1.0;
        let p = program(vec![out], vec![phase("write", pages as u64, &[(0, Pattern::Sequential, 1.0)])]);
        let mut m = Machine::new(&cfg, Classic::new(Mainline));
        let mut src = generate(p, 1).unwrap();
        let mut peak = 0;
        loop {
            let done = m.run(src.as_mut(), 64).unwrap();
            let (_, thresh) = m.mm.dirty_limits();
            let dirty = m.mm.wb.nr_dirty + m.mm.wb.nr_writeback;
            assert!(dirty <= thresh + 1, "dirty + writeback {dirty} above the limit {thresh}");
            peak = peak.max(dirty);
            if done {
                break;
            }
        }
        m.check_invariants().unwrap();
        let limit = m.mm.dirty_limits().1;
        (Box::new(m).finish(), peak, limit)
    };
    let (r, peak, limit) = run(&[]);
    eprintln!("throttled: limit {limit} peak {peak} runtime {} s, paused {} s", metric(&r, "runtime_s"), metric(&r, "dirty_throttle_s"));
    // ~16k dirtyable pages: the limit is about 3300 pages, the background threshold half.
    assert!((3000..3400).contains(&limit), "limit {limit}");
    assert!(peak > limit * 3 / 4, "the writer got into the throttled range: peak {peak}");
    assert!(metric(&r, "dirty_throttle_s") > 0.0);
    // Everything but what is still dirty or in flight was written, one page per ms.
    let floor = (pages as u64 - limit) as f64 * 1e-3;
    assert!(metric(&r, "runtime_s") >= floor, "runtime {} s < the disk's {floor} s", metric(&r, "runtime_s"));
    assert_eq!(vm(&r, "nr_dirtied"), pages as u64);
    // Limits above the file: no pause, the writer runs at its own pace.
    let (r, _, _) = run(&[("vm.dirty_bytes", "60M"), ("vm.dirty_background_bytes", "50M")]);
    assert_eq!(metric(&r, "dirty_throttle_s"), 0.0);
    assert!(metric(&r, "runtime_s") < 1.0, "runtime {}", metric(&r, "runtime_s"));
}

/// Cgroup writeback (mm/page-writeback.c 6.12, `mdtc`): a writer in a cgroup is also
/// throttled against its own domain — 20 % of its file pages plus its headroom under
/// memory.max — so a 16 MiB cgroup writing 64 MiB on a 256 MiB machine, whose global limit
/// is more than three times the cgroup, is paused; its limit reclaim finds clean or
/// written-back pages (the disk completes writes while it reclaims): no OOM, under either
/// policy. The domain reads the memcg's statistics as last flushed (every 2 s), so between
/// flushes the writer may dirty more than the domain's limit (see
/// [`the_memcg_dirty_domain_reads_flushed_statistics`]).
#[test]
fn a_cgroup_writer_is_throttled_by_its_own_dirty_limit() {
    fn run<P: ReclaimPolicy>(policy: P) -> (f64, u64, u64) {
        let pages = 64 * MIB;
        let cfg = config(&[("machine.memory", "256M"), ("swap.device", "none"), ("block.read_ahead_kb", "0"), ("cost.file_write_ns", "100000"), ("cgroup.w.memory.max", "16M")]);
        let mut out = region("out", pages, AccessKind::FileRead);
        out.write_ratio = 1.0;
        out.cgroup = "w".into();
        let p = program(vec![out], vec![phase("write", pages as u64, &[(0, Pattern::Sequential, 1.0)])]);
        let mut m = Machine::new(&cfg, policy);
        let mut src = generate(p, 1).unwrap();
        m.run(src.as_mut(), u64::MAX).expect("no OOM");
        m.check_invariants().unwrap();
        let global_limit = m.mm.dirty_limits().1;
        let r = Box::new(m).finish();
        (metric(&r, "dirty_throttle_s"), vm(&r, "nr_dirtied"), global_limit)
    }
    for (name, (paused, dirtied, global_limit)) in [("classic", run(Classic::new(Mainline))), ("mglru", run(Mglru::new(mglru::Mainline)))] {
        eprintln!("{name}: paused {paused} s, dirtied {dirtied}, global limit {global_limit}");
        assert_eq!(dirtied, 64 * MIB as u64, "{name}");
        assert!(global_limit > 3 * 4096, "{name}: the global domain alone would never throttle");
        assert!(paused > 0.0, "{name}: the cgroup's own domain paused the writer");
    }
}

/// A 256 MiB machine without swap or periodic writeback and a cgroup `w` of 16 MiB, whose
/// kernel timers run 1000 times slower than the simulated clock (no statistics flush during
/// a run), and `extra`.
fn held_cgroup_config(extra: &[(&str, &str)]) -> reclaimlab_core::config::SimConfig {
    let base = [
        ("machine.memory", "256M"),
        ("swap.device", "none"),
        ("block.read_ahead_kb", "0"),
        ("vm.dirty_writeback_centisecs", "0"),
        ("cgroup.w.memory.max", "16M"),
        ("sim.time_dilation", "0.001"),
    ];
    config(&[&base[..], extra].concat())
}

/// `mem_cgroup_wb_stats` (mm/memcontrol.c 6.12) reads the memcg's dirty, writeback and
/// file pages with `memcg_page_state` after a rate-limited flush: the cgroup's writeback
/// domain sees them as of the last statistics flush. A writer that dirtied 2,048 pages in
/// a 16 MiB cgroup (limit about 20 % of 4,096) since the last flush free-runs; once a
/// flush shows them, it is held at the limit (pos_ratio 0: `max_pause`).
#[test]
fn the_memcg_dirty_domain_reads_flushed_statistics() {
    let pages = 8 * MIB;
    let cfg = held_cgroup_config(&[]);
    let mut out = region("out", pages, AccessKind::FileRead);
    out.write_ratio = 1.0;
    out.cgroup = "w".into();
    let p = program(vec![out], vec![phase("write", pages as u64, &[(0, Pattern::Sequential, 1.0)])]);
    let mut m = Machine::new(&cfg, Classic::new(Mainline));
    m.run(generate(p, 1).unwrap().as_mut(), u64::MAX).unwrap();
    let w = m.mm.memcg_by_name("w").unwrap();
    let c = &m.mm.memcgs[w as usize];
    assert_eq!((c.nr_dirty, c.stat_nr_dirty), (pages as u64, 0), "every page dirty, none flushed");
    assert_eq!(m.mm.vmstat.get(Ev::NrWritten), 0, "the writer was never held: no writeback started");
    let now = m.mm.now;
    assert_eq!(m.mm.balance_dirty_pages(w, 0, now).ns, 0, "stale statistics: free running");
    m.mm.flush_memcg_stats();
    let pause = m.mm.balance_dirty_pages(w, 0, now).ns;
    assert!(pause > 0, "after the flush the domain is over its limit");
    assert!(m.mm.wb.nr_writeback > 0, "and background writeback started");
}

/// `consider_reclaim_throttle` (mm/vmscan.c 6.12): global direct reclaim that has reclaimed
/// nothing by priority 1 sleeps one jiffy (VMSCAN_THROTTLE_NOPROGRESS) — the node's dirty +
/// writeback pages being more than half its reclaimable ones — and the disk completes
/// writes meanwhile: the PG_reclaim folios it wrote rotate to the tail and priority 0
/// frees them. Without the sleep the same call frees nothing (the disk completes nothing in
/// zero time; see [`dirty_folios_are_rotated_after_writeback`] with a disk slower than a
/// jiffy per page).
#[test]
fn direct_reclaim_sleeps_a_jiffy_when_it_makes_no_progress() {
    fn check<P: ReclaimPolicy>(policy: P, name: &str) {
        let mut m = dirty_machine_with(policy, "20000");
        let start = m.mm.now;
        let (reclaimed, spent) = try_to_free_pages(&mut m.mm, &mut m.policy, &[0]);
        let slept = m.mm.reclaim_throttle_ns;
        let jiffy = 4_000_000;
        eprintln!("{name}: reclaimed {reclaimed}, slept {slept} ns, written {}", m.mm.vmstat.get(Ev::NrWritten));
        assert!(slept > 0 && slept <= jiffy, "{name}: one sleep to the next tick, {slept} ns");
        assert_eq!((start + slept) % jiffy, 0, "{name}: schedule_timeout(1) ends at a tick");
        assert!(spent >= slept, "{name}: the sleep is part of the task's stall");
        assert_eq!(m.mm.now, start + slept, "{name}: the task's clock moved by the sleep");
        let written = m.mm.vmstat.get(Ev::NrWritten);
        assert_eq!(written, slept / 20_000, "{name}: the disk wrote one page per 20 us while it slept");
        assert!(reclaimed > 0 && m.mm.vmstat.get(Ev::Pgrotated) > 0, "{name}: folios written in the sleep were rotated and freed");
        assert_eq!(m.mm.vmstat.get(Ev::PgstealDirect), reclaimed);
        m.check_invariants().unwrap();
    }
    check(Classic::new(Mainline), "classic@6.15");
    check(Mglru::new(mglru::Mainline), "mglru@6.15");
}

/// `skip_throttle_noprogress`: no one-jiffy sleep when the node's dirty + writeback pages
/// are at most half its reclaimable pages, or kswapd has given up on the node.
#[test]
fn noprogress_throttle_is_skipped_without_much_dirty_memory() {
    use reclaimlab_core::vmscan::throttle::skip_throttle_noprogress;
    let mut m = dirty_machine(Classic::new(Mainline));
    // 2048 dirty pages, all of the node's 2048 file LRU pages (no swap): 2 * 2048 > 2048.
    assert_eq!(m.mm.nodes[0].nr_write_pending, WRITTEN as u64);
    assert!(!skip_throttle_noprogress(&m.mm, 0));
    m.mm.nodes[0].nr_write_pending = WRITTEN as u64 / 2;
    assert!(skip_throttle_noprogress(&m.mm, 0), "2 * 1024 <= 2048");
    m.mm.nodes[0].nr_write_pending = WRITTEN as u64 / 2 + 1;
    assert!(!skip_throttle_noprogress(&m.mm, 0));
    m.mm.nodes[0].kswapd_failures = 16;
    assert!(skip_throttle_noprogress(&m.mm, 0), "kswapd gave up on the node");
}

/// VMSCAN_THROTTLE_CONGESTED (mm/vmscan.c 6.12 `shrink_node`): classic cgroup reclaim
/// (here a root `memory.reclaim`-like target) that finds every dirty folio it meets under
/// writeback and already PG_reclaim tags its target lruvec LRUVEC_CGROUP_CONGESTED and
/// sleeps a jiffy per `shrink_node` from then on; the tag is cleared when its
/// `do_try_to_free_pages` ends. Cgroup reclaim never takes the NOPROGRESS sleep, so every
/// sleep here is a CONGESTED one. MGLRU's eviction counts no `nr.dirty`: it never sleeps.
#[test]
fn cgroup_reclaim_sleeps_while_its_lruvec_is_congested() {
    use reclaimlab_core::mm::memcontrol::ROOT_MEMCG;
    use reclaimlab_core::vmscan::try_to_free_mem_cgroup_pages;
    let mut m = dirty_machine(Classic::new(Mainline));
    let (reclaimed, spent) = try_to_free_mem_cgroup_pages(&mut m.mm, &mut m.policy, ROOT_MEMCG, 32, &[0]);
    let slept = m.mm.reclaim_throttle_ns;
    eprintln!("classic: reclaimed {reclaimed}, slept {slept} ns");
    assert_eq!(reclaimed, 0, "nothing completes in a jiffy on a 50 ms/page disk");
    assert!(slept >= 2 * 4_000_000, "several CONGESTED sleeps, {slept} ns");
    assert!(spent >= slept);
    let root = m.mm.lruvec_id(ROOT_MEMCG, 0) as usize;
    assert!(!m.mm.lruvecs[root].cgroup_congested, "cleared at the end of do_try_to_free_pages");
    m.check_invariants().unwrap();

    let mut m = dirty_machine(Mglru::new(mglru::v6_12::Mglru612::new()));
    let (reclaimed, _) = try_to_free_mem_cgroup_pages(&mut m.mm, &mut m.policy, ROOT_MEMCG, 32, &[0]);
    assert_eq!((reclaimed, m.mm.reclaim_throttle_ns), (0, 0), "mglru@6.12: no nr.dirty, no congestion, no sleep");
}

/// `reclaim_throttle(VMSCAN_THROTTLE_WRITEBACK)` (kswapd's): it sleeps until more than
/// SWAP_CLUSTER_MAX writes complete (`__acct_reclaim_writeback`), at most HZ/10, and each
/// folio written meanwhile counts in nr_throttled_written.
#[test]
fn writeback_throttle_waits_for_33_writes_or_hz_10() {
    use reclaimlab_core::vmscan::throttle::{reclaim_throttle_ns, Throttle};
    for (write_ns, slept, written) in [(20_000u64, 33 * 20_000u64, 33u64), (50_000_000, 100_000_000, 2)] {
        let mut m = dirty_machine_with(Classic::new(Mainline), &write_ns.to_string());
        m.mm.wakeup_flusher_threads(m.mm.now);
        let t = reclaim_throttle_ns(&mut m.mm, 0, Throttle::Writeback);
        assert_eq!(t, slept, "disk {write_ns} ns/page");
        assert_eq!(m.mm.vmstat.get(Ev::NrThrottledWritten), written, "disk {write_ns} ns/page");
    }
}

/// `wb_max_pause(wb, sdtc->wb_dirty)` (mm/page-writeback.c 6.12): a writer held at its
/// memcg domain's limit sleeps `wb_dirty / (1 + bw / 32) + 1` jiffies, where `wb_dirty` is
/// its own wb's dirty + writeback pages (`wb_dirty_limits`; the memcg's, under cgroup
/// writeback) — not the whole machine's. Another cgroup's 2,048 dirty pages must not
/// lengthen it. The jiffies are the kernel's (4 ms at HZ=250, here 1000 times slower than
/// the simulated clock: `sim.time_dilation` 0.001), and the disk writes 5,000 pages per
/// second of the kernel's clock. Held (`task_ratelimit` 0), the writer goes round the loop
/// again after the pause until its wb has at most `wb_stat_error()` (32) such pages.
#[test]
fn a_held_writer_pauses_by_its_own_wb_dirty_pages() {
    const PAGES: u32 = 2048;
    fn held(other_writes: bool) -> (Machine<Classic<Mainline>>, u16, u64) {
        // The flusher puts every page under writeback as soon as the writer starts it.
        let cfg = held_cgroup_config(&[("cost.file_write_ns", "200000000"), ("cost.flusher_page_ns", "0")]);
        let mut other = region("other", PAGES * 4096, AccessKind::FileRead);
        other.write_ratio = if other_writes { 1.0 } else { 0.0 };
        other.cgroup = "o".into();
        let mut out = region("out", PAGES * 4096, AccessKind::FileRead);
        out.write_ratio = 1.0;
        out.cgroup = "w".into();
        let p = program(vec![other, out], vec![phase("other", PAGES as u64, &[(0, Pattern::Sequential, 1.0)]), phase("write", PAGES as u64, &[(1, Pattern::Sequential, 1.0)])]);
        let mut m = Machine::new(&cfg, Classic::new(Mainline));
        m.run(generate(p, 1).unwrap().as_mut(), u64::MAX).unwrap();
        let w = m.mm.memcg_by_name("w").unwrap();
        m.mm.flush_memcg_stats();
        let now = m.mm.now;
        (m, w, now)
    }
    let jiffy_ns = 4_000_000 * 1000;
    let expected = (PAGES as u64 / (1 + 5000 / 32) + 1) * jiffy_ns;
    for other_writes in [false, true] {
        let (mut m, w, now) = held(other_writes);
        let global = m.mm.wb.nr_dirty + m.mm.wb.nr_writeback;
        assert_eq!(global, if other_writes { 2 * PAGES } else { PAGES } as u64);
        let pause = m.mm.balance_dirty_pages(w, 0, now);
        assert_eq!(pause.ns, expected, "other cgroup writing: {other_writes}");
        assert!(pause.again, "2,048 pages of its wb dirty or under writeback: round again");
        // Every write completes: its wb is clean, and the next pause ends the loop.
        let done = m.mm.wb.nth_done(m.mm.wb.nr_writeback as usize).unwrap();
        m.end_writeback_due(done);
        m.mm.now = done;
        let c = &m.mm.memcgs[w as usize];
        assert!(c.nr_dirty + c.nr_writeback <= 32, "{} left", c.nr_dirty + c.nr_writeback);
        let pause = m.mm.balance_dirty_pages(w, 0, done);
        assert_eq!((pause.ns, pause.again), (jiffy_ns, false), "one jiffy, then out of the loop");
    }
}

/// `throttle_direct_reclaim` (mm/vmscan.c 6.12): a task entering global direct reclaim
/// while its node's free pages are at most half the min watermarks' sum (the PFMEMALLOC
/// reserve, eaten here by frames taken below the watermarks as reclaimers' own allocations
/// would) counts `pgscan_direct_throttle` and sleeps until kswapd has brought the node back
/// above it (`allow_direct_reclaim`). With the same machine one frame above that point, it
/// reclaims at once.
#[test]
fn direct_reclaim_waits_for_kswapd_below_half_the_pfmemalloc_reserve() {
    use reclaimlab_core::mm::page_alloc::MigrateType;
    use reclaimlab_core::vmscan::throttle::allow_direct_reclaim;
    fn run(below_half: bool) -> (u64, u64, bool, bool) {
        let cfg = config(&[("machine.memory", "64M"), ("swap.device", "none"), ("block.read_ahead_kb", "0")]);
        let data = region("data", 128 * MIB, AccessKind::FileRead);
        let p = program(vec![data], vec![phase("read", 128 * MIB as u64, &[(0, Pattern::Sequential, 1.0)])]);
        let mut m = Machine::new(&cfg, Classic::new(Mainline));
        let mut src = generate(p, 1).unwrap();
        m.run(src.as_mut(), 20_000).unwrap();
        let zones = m.mm.nodes[0].zones.clone();
        let reserve: u64 = zones.iter().map(|&z| m.mm.buddy.zones[z].min_wmark_pages()).sum();
        let target = reserve / 2 + u64::from(!below_half);
        let mut held = Vec::new();
        for &z in &zones {
            while m.mm.buddy.zones.iter().map(|z| z.free_pages).sum::<u64>() > target {
                // From the free lists directly: a per-CPU refill would take a batch.
                match m.mm.buddy.alloc(&mut m.mm.lists, &mut m.mm.frames.owner, z, 0, MigrateType::Movable) {
                    Some(pfn) => held.push(pfn),
                    None => break,
                }
            }
        }
        assert_eq!(m.mm.total_free_pages(), target);
        assert_eq!(allow_direct_reclaim(&m.mm, 0), !below_half);
        let (scanned, start) = (m.mm.vmstat.get(Ev::PgscanKswapd), m.now);
        m.run(src.as_mut(), 1).unwrap();
        let kswapd = m.mm.vmstat.get(Ev::PgscanKswapd) - scanned;
        let woke_after_kswapd = m.kswapd[0].step_end().is_some_and(|end| end > start && m.now >= end);
        (m.mm.vmstat.get(Ev::PgscanDirectThrottle), kswapd, woke_after_kswapd, allow_direct_reclaim(&m.mm, 0))
    }
    let (throttled, kswapd, woke_after_kswapd, allowed) = run(true);
    assert_eq!(throttled, 1);
    assert!(kswapd > 0 && woke_after_kswapd && allowed, "kswapd reclaimed ({kswapd} scanned) and the task went on after its step");
    let (throttled, _, _, _) = run(false);
    assert_eq!(throttled, 0, "above half the reserve: no throttling");
}

/// Each task has its own `current->dirty_paused_when` (mm/page-writeback.c 6.12
/// `balance_dirty_pages`): with the dirty pages between the freerun ceiling and the limit,
/// a task paused just now is paused again, while a task that last paused half a second
/// ago has thought longer than its period and is not paused, even right after another
/// task was — one pause state shared by the tasks would pause it too.
#[test]
fn each_task_is_paced_against_its_own_last_pause() {
    use reclaimlab_core::mm::writeback::DirtyPause;
    // 8 MiB written to a disk that takes 50 ms a page: most of it dirty or under
    // writeback, between the freerun ceiling (1,792) and the limit (3,072); no completion
    // is applied below.
    let cfg = config(&[
        ("machine.memory", "256M"),
        ("swap.device", "none"),
        ("block.read_ahead_kb", "0"),
        ("vm.dirty_writeback_centisecs", "0"),
        ("vm.dirty_background_bytes", "2M"),
        ("vm.dirty_bytes", "12M"),
        ("cost.file_write_ns", "50000000"),
        ("cost.flusher_page_ns", "0"),
    ]);
    let mut log = region("log", WRITTEN, AccessKind::FileRead);
    log.write_ratio = 1.0;
    let p = program(vec![log], vec![phase("write", WRITTEN as u64, &[(0, Pattern::Sequential, 1.0)])]);
    let mut m = Machine::new(&cfg, Classic::new(Mainline));
    m.run(generate(p, 1).unwrap().as_mut(), u64::MAX).unwrap();
    let dirty = m.mm.wb.nr_dirty + m.mm.wb.nr_writeback;
    assert!(dirty > 1792 && dirty < 3072, "{dirty}");
    let t = m.mm.now + 10_000_000_000;
    // A task's first page here is not paused: its think time counts from 0 (the kernel,
    // with no last pause, would pause it one period; mm/writeback.rs).
    assert_eq!(m.mm.balance_dirty_pages(0, 1, t), DirtyPause::NONE, "task 1's first page");
    assert!(m.mm.balance_dirty_pages(0, 1, t).ns > 0, "task 1 again at the same instant");
    let later = t + 500_000_000;
    assert_eq!(m.mm.balance_dirty_pages(0, 2, later), DirtyPause::NONE, "task 2's first page");
    assert!(m.mm.balance_dirty_pages(0, 2, later).ns > 0, "task 2 again at the same instant");
    assert_eq!(m.mm.balance_dirty_pages(0, 1, later), DirtyPause::NONE, "task 1 thought 0.5 s");
    assert!(m.mm.balance_dirty_pages(0, 2, later).ns > 0, "task 2 still paced");
}
