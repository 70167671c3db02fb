//! Buddy allocator, compaction and thpscale speed (run: `cargo bench -p reclaimlab-core --bench thp`).
//!
//! Prints, on one core:
//! (a) buddy allocation + free: order-0 movable alloc/free pairs on a 1 GiB zone half full
//!     of scattered pages (each alloc and each free is one operation), beside a peer in the
//!     same run: a bare LIFO free stack (Vec push/pop) — the floor of any allocator;
//! (b) mixed orders 0..=3 and order 9 alloc/free;
//! (c) compaction: pages migrated per second by a whole-zone compaction of a 1 GiB zone
//!     with every other page free;
//! (d) seed 003's thpscale at its default size (1 GiB, 2 nodes, thread counts 1..32,
//!     MADV_HUGEPAGE) per THP policy: wall time.

use reclaimlab_core::mm::lists::ListArena;
use reclaimlab_core::mm::page_alloc::{BuddyAllocator, MigrateType, ZoneSpec, ZoneType};
use reclaimlab_core::scenario::thp::{thpscale, ThpscaleParams};
use reclaimlab_core::sim::process::program_machine;
use reclaimlab_core::thp::compaction::{self, CompactControl, Compactor, MigrateMode};
use reclaimlab_core::thp::policy::THP_POLICIES;
use reclaimlab_core::SimConfig;
use std::time::Instant;

const FRAMES: u32 = 1 << 18; // 1 GiB

/// A zone's allocator, list arena and frame owner words (which hold the buddy orders).
fn zone() -> (BuddyAllocator, ListArena, Vec<u32>) {
    let mut l = ListArena::new(FRAMES);
    let mut w = vec![0; FRAMES as usize];
    let a = BuddyAllocator::new(&[ZoneSpec { node: 0, zone_type: ZoneType::Normal, start_pfn: 0, nr_pages: FRAMES }], &mut l, &mut w);
    (a, l, w)
}

fn best_of<F: FnMut() -> f64>(n: usize, mut f: F) -> f64 {
    (0..n).map(|_| f()).fold(0.0, f64::max)
}

/// Alloc/free operations per second: a working set of `live` blocks of the given orders is
/// kept; each step frees the oldest and allocates a new one.
fn buddy_rate(orders: &[u8], steps: usize) -> f64 {
    let (mut a, mut l, mut w) = zone();
    // Half the zone in scattered order-0 pages: free every other page of the first half.
    let mut held: Vec<u32> = (0..FRAMES).map(|_| a.alloc(&mut l, &mut w, 0, 0, MigrateType::Movable).unwrap()).collect();
    for p in held.drain(..).filter(|p| p % 2 == 0 || *p >= FRAMES / 2) {
        a.free(&mut l, &mut w, p, 0);
    }
    let max_order = *orders.iter().max().unwrap();
    let live = ((FRAMES as usize / 4) >> max_order).min(4096);
    let mut ring: std::collections::VecDeque<(u32, u8)> = std::collections::VecDeque::with_capacity(live + 1);
    for i in 0..live {
        let o = orders[i % orders.len()];
        ring.push_back((a.alloc(&mut l, &mut w, 0, o, MigrateType::Movable).unwrap(), o));
    }
    let t = Instant::now();
    for i in 0..steps {
        let (p, o) = ring.pop_front().unwrap();
        a.free(&mut l, &mut w, p, o);
        let o = orders[i % orders.len()];
        ring.push_back((a.alloc(&mut l, &mut w, 0, o, MigrateType::Movable).unwrap(), o));
    }
    let r = 2.0 * steps as f64 / t.elapsed().as_secs_f64();
    std::hint::black_box(&ring);
    r
}

/// The peer: a LIFO stack of free frame numbers.
fn stack_rate(steps: usize) -> f64 {
    let mut free: Vec<u32> = (0..FRAMES).collect();
    let mut ring: std::collections::VecDeque<u32> = (0..4096).map(|_| free.pop().unwrap()).collect();
    let t = Instant::now();
    for _ in 0..steps {
        free.push(ring.pop_front().unwrap());
        ring.push_back(free.pop().unwrap());
    }
    let r = 2.0 * steps as f64 / t.elapsed().as_secs_f64();
    std::hint::black_box(&ring);
    r
}

fn compaction_rate() -> (f64, u64) {
    let mut c = SimConfig::default();
    c.set("machine.memory", "1G").unwrap();
    c.set("transparent_hugepage.enabled", "never").unwrap();
    let mut m = program_machine(&c).unwrap();
    let t = m.add_task(0);
    let n = FRAMES - 8192;
    let v = m.mmap(n, false, false).unwrap();
    let s = m.procs.vmas[v].start;
    for p in s..s + n {
        m.touch(t, p, true).unwrap();
    }
    for p in (s..s + n).step_by(2) {
        m.madv_dontneed(p, 1);
    }
    let mut cc = CompactControl::new(0, None, MigrateMode::SyncLight, Compactor::Proactive, &m.mm);
    cc.proactiveness = 100;
    cc.ignore_skip_hint = true;
    let t0 = Instant::now();
    compaction::compact_zone(&mut m.mm, &mut cc);
    (cc.nr_migrated as f64 / t0.elapsed().as_secs_f64(), cc.nr_migrated)
}

fn main() {
    let steps = 20_000_000;
    let order0 = best_of(3, || buddy_rate(&[0], steps));
    let stack = best_of(3, || stack_rate(steps));
    println!("(a) buddy order-0 alloc+free: {:.1} M ops/s; LIFO stack peer {:.1} M ops/s ({:.2}x)", order0 / 1e6, stack / 1e6, order0 / stack);
    let mixed = best_of(3, || buddy_rate(&[0, 1, 0, 2, 0, 3], steps));
    let o9 = best_of(3, || buddy_rate(&[9], steps / 20));
    println!("(b) buddy mixed orders 0..3: {:.1} M ops/s; order 9: {:.1} M ops/s", mixed / 1e6, o9 / 1e6);
    let (rate, n) = compaction_rate();
    println!("(c) compaction: {n} pages migrated at {:.1} M pages/s", rate / 1e6);
    let mut total = 0.0;
    for p in THP_POLICIES {
        let t0 = Instant::now();
        // The nine thread counts one after another on one machine (ThpscaleParams::default).
        let mut c = SimConfig::default();
        c.set("machine.memory", "1G").unwrap();
        c.set("machine.nodes", "2").unwrap();
        c.set("thp.policy", p.name).unwrap();
        std::hint::black_box(thpscale(&c, &ThpscaleParams::default()).unwrap());
        let s = t0.elapsed().as_secs_f64();
        total += s;
        println!("(d) thpscale 1 GiB x 9 thread counts, {}: {:.2} s", p.name, s);
    }
    println!("(d) thpscale all policies: {total:.2} s");
}
