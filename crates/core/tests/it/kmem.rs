//! Slab charged to a memcg (mm/memcontrol.c 6.12 `obj_cgroup_charge`): the page cache's
//! xarray nodes and, on an ext4 file system, the buffer heads of every page written
//! (fs/buffer.c `create_empty_buffers`), counted in memory.stat's `slab_reclaimable` and
//! in memory.current, so a cgroup that writes holds fewer LRU pages at its limit.

use crate::common::*;
use reclaimlab_core::RunResult;
use reclaimlab_trace::{generate, AccessKind, Pattern};

const POLICIES: [&str; 2] = ["classic@6.15", "mglru@6.12"];
const XA_NODE: u64 = 576 + 8;
const BH: u64 = 104 + 8;
const PAGE: u64 = 4096;

fn cg(r: &RunResult, key: &str) -> u64 {
    r.metrics.iter().find(|(k, _)| *k == format!("memcg.a.{key}")).map_or(0, |m| m.1 as u64)
}

/// Cgroup `a` (`memory.max` 8 MiB) writes `log_mib` MiB of `log` with write() once, in
/// order; past 8 MiB reclaim evicts what the flusher has cleaned.
fn run_a(policy: &str, block_size: &str, log_mib: u32) -> RunResult {
    let cfg = config(&[
        ("policy", policy),
        ("machine.memory", "64M"),
        ("swap.device", "none"),
        ("block.read_ahead_kb", "0"),
        ("block.fs_block_size", block_size),
        ("cgroup.a.memory.max", "8M"),
        ("cost.file_write_ns", "1000"),
        ("cost.flusher_page_ns", "0"),
        ("vm.dirty_background_bytes", "64K"),
    ]);
    let mut log = region("log", log_mib * MIB, AccessKind::FileRead);
    log.cgroup = "a".into();
    log.write_ratio = 1.0;
    let p = program(vec![log], vec![phase("write", (log_mib * MIB) as u64, &[(0, Pattern::Sequential, 1.0)])]);
    run_checked(&cfg, generate(p, 1).unwrap().as_mut(), 2_000)
}

#[test]
fn written_pages_carry_buffer_heads_charged_to_their_memcg() {
    for policy in POLICIES {
        // 4 MiB (1,024 pages, 16 xarray leaf nodes), below the limit: 4 buffer heads a page
        // on 1 KiB blocks, 1 on 4 KiB, none without buffer heads.
        for (bs, per_page) in [("1024", 4), ("4096", 1), ("0", 0)] {
            let r = run_a(policy, bs, 4);
            let slab = 16 * XA_NODE + (4 * MIB) as u64 * per_page * BH;
            assert_eq!(cg(&r, "slab_reclaimable"), slab, "{policy} {bs}");
            let lru = cg(&r, "file") + cg(&r, "anon");
            assert_eq!(lru, (4 * MIB) as u64 * PAGE, "{policy} {bs}");
            // memory.current: the LRU pages and the slab's pages, whole.
            assert_eq!(cg(&r, "memory.current_bytes"), lru + slab.div_ceil(PAGE) * PAGE, "{policy} {bs}");
        }
    }
}

#[test]
fn evicted_pages_give_their_buffer_heads_back_and_the_slab_costs_lru_pages() {
    for policy in POLICIES {
        // 16 MiB written through an 8 MiB limit: most of the log was evicted.
        let (none, ext4) = (run_a(policy, "0", 16), run_a(policy, "1024", 16));
        let lru = |r: &RunResult| (cg(r, "file") + cg(r, "anon")) / PAGE;
        for r in [&none, &ext4] {
            assert!(vm(r, "pgsteal_file") > (6 * MIB) as u64, "{policy}");
            // Every resident page was written, so each has its buffers and nothing else
            // does: the slab is those and up to the log's 64 xarray nodes (the run's
            // invariant checks count PG_private folios against the charge every 2,000
            // accesses).
            let bh = lru(r) * if std::ptr::eq(r, &ext4) { 4 * BH } else { 0 };
            let nodes = cg(r, "slab_reclaimable") - bh;
            assert!(nodes % XA_NODE == 0 && nodes <= 64 * XA_NODE, "{policy}: {} B of slab, {} resident", cg(r, "slab_reclaimable"), lru(r));
            let kmem = cg(r, "memory.current_bytes") - lru(r) * PAGE;
            assert!((cg(r, "slab_reclaimable")..=cg(r, "slab_reclaimable") + PAGE).contains(&kmem), "{policy}: {kmem}");
        }
        // At the limit the buffer heads (448 bytes a 4 KiB page) take the place of LRU
        // pages, give or take where each run's last reclaim left it below the limit.
        let bh_pages = lru(&ext4) * 4 * BH / PAGE;
        let displaced = lru(&none) - lru(&ext4);
        assert!((bh_pages / 2..=bh_pages + 64).contains(&displaced), "{policy}: {} against {} pages, {bh_pages} pages of buffer heads", lru(&ext4), lru(&none));
    }
}
