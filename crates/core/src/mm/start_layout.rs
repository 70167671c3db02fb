//! `machine.start_layout`: where a booted kernel's free pages are when the workload starts.
//!
//! A kernel that has run for a while holds its own memory (slab, page tables, the initramfs)
//! in pageblocks that early unmovable and reclaimable allocations claimed, and keeps free
//! pages inside those blocks as well as in the movable ones. `/proc/pagetypeinfo` reports
//! both per zone: "Number of blocks type" (pageblocks per migrate type) and the free blocks
//! per migrate type and order. In 6.12 a free block sits on the list of its pageblock's
//! type (`__add_to_free_list` warns otherwise, and `__move_freepages_block` moves a claimed
//! block's free pages with it, mm/page_alloc.c 6.12), so the two tables say how many free
//! pages lie in unmovable and reclaimable pageblocks, where a movable allocation that finds
//! no movable page falls back (`__rmqueue_claim`, `__rmqueue_steal`), boosting the zone's
//! watermark when it tries to claim a block (`try_to_steal_block` → `boost_watermark`).
//!
//! Without this key the machine starts from a fresh buddy allocator and `machine.kernel_used`
//! is taken from it as order-0 unmovable frames ([`super::Mm`]'s `take_kernel_used`), which
//! fills unmovable pageblocks whole. With it, each zone is laid out as listed: its pageblocks
//! get the listed types (the unmovable ones first, from the zone's lowest pfn, then the
//! reclaimable ones, the rest movable: `/proc/pagetypeinfo` gives counts, not places, and an
//! early boot claims the lowest free max-order blocks first), the listed free blocks go on
//! their type's free lists (order by order, largest first; each block of an order below
//! `pageblock_order` into the pageblock of its type that holds the fewest free pages so far,
//! so no block is more free than the counts force), and every other frame of the zone is in
//! use outside the workload, as `machine.kernel_used` is.
//!
//! The guest's zone spans reserved memory the model does not have (the kernel image, the
//! memmap): the model's zone holds its managed pages only, so it has fewer pageblocks than
//! the guest reports. The missing ones are taken from the movable count first (a wholly
//! reserved pageblock keeps the movable type `memmap_init_range` gave it), then from the
//! unmovable and the reclaimable counts, each down to the pageblocks its free blocks need
//! (a partly reserved pageblock is claimed by the first unmovable fallback into it, its
//! reserved pages counting as unmovable, `try_to_steal_block`'s alike_pages): where the
//! reserved pages are is not reported, and this keeps every listed free block.

use super::page_alloc::{MigrateType, Pfn, ZoneSpec, ZoneType, MAX_PAGE_ORDER, NR_PAGE_ORDERS, PAGEBLOCK_NR_PAGES, PAGEBLOCK_ORDER};
use std::collections::{BTreeMap, BTreeSet};

/// The migrate types of the layout, in `/proc/pagetypeinfo`'s order.
pub const TYPES: [MigrateType; 3] = [MigrateType::Unmovable, MigrateType::Movable, MigrateType::Reclaimable];
const NAMES: [&str; 3] = ["unmovable", "movable", "reclaimable"];

/// One zone's pageblocks and free blocks, as `/proc/pagetypeinfo` reports them.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ZoneLayout {
    pub node: u16,
    /// The kernel's zone name: `DMA`, or `DMA32`/`Normal` for the node's zone above it (the
    /// model has one zone per node above ZONE_DMA).
    pub zone: String,
    /// Pageblocks per type ([`TYPES`]' order).
    pub blocks: [u64; 3],
    /// Free blocks per type ([`TYPES`]' order) and order 0..=`MAX_PAGE_ORDER`.
    pub free: [[u64; NR_PAGE_ORDERS]; 3],
}

impl ZoneLayout {
    /// Free pages the layout lists.
    pub fn free_pages(&self) -> u64 {
        self.free.iter().map(|f| f.iter().enumerate().map(|(o, &n)| n << o).sum::<u64>()).sum()
    }
}

/// `machine.start_layout`'s value.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct StartLayout {
    pub zones: Vec<ZoneLayout>,
}

fn counts<const N: usize>(v: &str, what: &str) -> Result<[u64; N], String> {
    let xs: Vec<&str> = v.split(',').collect();
    if xs.len() != N {
        return Err(format!("{what} needs {N} comma-separated counts, got '{v}'"));
    }
    let mut out = [0u64; N];
    for (o, x) in out.iter_mut().zip(xs) {
        *o = x.trim().parse().map_err(|_| format!("{what}: '{x}' is not a count"))?;
    }
    Ok(out)
}

impl StartLayout {
    /// Parse `NODE ZONE blocks=U,M,R unmovable=C0,..,C10 movable=.. reclaimable=..` per zone,
    /// zones separated by `;` (a free list left out is empty); `none` or empty: no layout.
    pub fn parse(v: &str) -> Result<Option<StartLayout>, String> {
        let v = v.trim();
        if v.is_empty() || v == "none" {
            return Ok(None);
        }
        let mut zones = Vec::new();
        for z in v.split(';').map(str::trim).filter(|z| !z.is_empty()) {
            let mut words = z.split_whitespace();
            let node =
                words.next().and_then(|n| n.parse::<u16>().ok()).ok_or_else(|| format!("'{z}': expected 'NODE ZONE blocks=U,M,R unmovable=.. movable=.. reclaimable=..'"))?;
            let zone = words.next().ok_or_else(|| format!("'{z}': no zone name after the node"))?.to_string();
            if !matches!(zone.as_str(), "DMA" | "DMA32" | "Normal") {
                return Err(format!("'{z}': zone '{zone}' is not DMA, DMA32 or Normal"));
            }
            let mut blocks = None;
            let mut free = [[0u64; NR_PAGE_ORDERS]; 3];
            for w in words {
                let (k, val) = w.split_once('=').ok_or_else(|| format!("'{z}': '{w}' is not KEY=VALUES"))?;
                if k == "blocks" {
                    blocks = Some(counts::<3>(val, &format!("node {node} {zone} blocks"))?);
                } else if let Some(t) = NAMES.iter().position(|&n| n == k) {
                    free[t] = counts::<NR_PAGE_ORDERS>(val, &format!("node {node} {zone} {k}"))?;
                } else {
                    return Err(format!("'{z}': unknown '{k}' (blocks, unmovable, movable, reclaimable)"));
                }
            }
            let blocks = blocks.ok_or_else(|| format!("node {node} {zone}: no blocks=U,M,R"))?;
            zones.push(ZoneLayout { node, zone, blocks, free });
        }
        if zones.is_empty() {
            return Err("no zone listed".into());
        }
        Ok(Some(StartLayout { zones }))
    }
}

impl std::fmt::Display for StartLayout {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let join = |xs: &[u64]| xs.iter().map(u64::to_string).collect::<Vec<_>>().join(",");
        for (i, z) in self.zones.iter().enumerate() {
            write!(f, "{}{} {} blocks={}", if i > 0 { "; " } else { "" }, z.node, z.zone, join(&z.blocks))?;
            for (t, name) in NAMES.iter().enumerate() {
                write!(f, " {name}={}", join(&z.free[t]))?;
            }
        }
        Ok(())
    }
}

/// How one zone of the machine starts.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ZonePlan {
    /// Index into the machine's zone specs.
    pub zone: usize,
    /// The type of each pageblock the zone owns, by its first pfn.
    pub pageblocks: Vec<(Pfn, MigrateType)>,
    /// The free blocks, `(pfn, order, type)`, in ascending pfn.
    pub free: Vec<(Pfn, u8, MigrateType)>,
    /// Frames of the zone in use (not free).
    pub used: u64,
}

/// Pageblocks whose first pfn is in no zone (the hole below ZONE_DMA, mm/mod.rs `dma_hole`):
/// the kernel's bitmap keeps them `MIGRATE_UNMOVABLE`, as `BuddyAllocator::new` does.
fn in_no_zone(specs: &[ZoneSpec], pfn: Pfn) -> bool {
    !specs.iter().any(|s| s.start_pfn <= pfn && pfn < s.start_pfn + s.nr_pages)
}

/// Lay out every zone of the machine (`specs`) as `layout` lists. `held_movable`: pages the
/// machine holds outside the workload that the kernel allocated movable
/// (`machine.kernel_shmem` and `machine.kernel_mlocked`: tmpfs and a process's anon pages,
/// `GFP_HIGHUSER_MOVABLE`), split evenly across the nodes; each node's highest zone keeps
/// the movable pageblocks to hold its share beside its free movable pages. Errors name what
/// does not fit.
pub fn plan(layout: &StartLayout, specs: &[ZoneSpec], held_movable: u64) -> Result<Vec<ZonePlan>, String> {
    let nodes = specs.iter().map(|s| s.node).max().map_or(1, |n| n as u64 + 1);
    let highest = |zi: usize| !specs.iter().any(|s| s.node == specs[zi].node && s.nr_pages > 0 && s.start_pfn > specs[zi].start_pfn);
    let mut plans = Vec::new();
    let mut seen = BTreeSet::new();
    for zl in &layout.zones {
        let want = if zl.zone == "DMA" { ZoneType::Dma } else { ZoneType::Normal };
        let zi = specs
            .iter()
            .position(|s| s.node == zl.node && s.zone_type == want && s.nr_pages > 0)
            .ok_or_else(|| format!("node {} has no {} zone in this machine (machine.nodes, machine.zone_dma)", zl.node, zl.zone))?;
        if !seen.insert(zi) {
            return Err(format!("node {} {}: the zone is listed twice (DMA32 and Normal are the same zone of the model)", zl.node, zl.zone));
        }
        let held = if highest(zi) { super::node_share(held_movable, nodes, zl.node as u64) } else { 0 };
        plans.push(plan_zone(zl, specs, zi, held)?);
    }
    if let Some(s) = specs.iter().enumerate().find(|(i, s)| s.nr_pages > 0 && !seen.contains(i)).map(|(_, s)| s) {
        return Err(format!("node {}'s {} zone is not listed", s.node, if s.zone_type == ZoneType::Dma { "DMA" } else { "DMA32/Normal" }));
    }
    Ok(plans)
}

/// [`plan_zone_with`] cutting each type's pageblocks down to what its free blocks need, and
/// if those do not fit there (the runs of whole pageblocks are not aligned, or end in the
/// zone's partial last pageblock), once more leaving that room, and once more giving that
/// partial pageblock to an unmovable one (a zone whose free movable pages fill every frame of
/// its movable pageblocks: the THP guest's node 0, whose DMA32 spans 23 pageblocks of
/// reserved memory the model's zone does not); a layout that fits no way is refused with
/// the first attempt's reason.
fn plan_zone(zl: &ZoneLayout, specs: &[ZoneSpec], zi: usize, held: u64) -> Result<ZonePlan, String> {
    plan_zone_with(zl, specs, zi, held, false, false)
        .or_else(|e| plan_zone_with(zl, specs, zi, held, true, false).or_else(|_| plan_zone_with(zl, specs, zi, held, true, true)).map_err(|_| e))
}

fn plan_zone_with(zl: &ZoneLayout, specs: &[ZoneSpec], zi: usize, held: u64, slack: bool, unmovable_tail: bool) -> Result<ZonePlan, String> {
    let s = &specs[zi];
    let (start, end) = (s.start_pfn, s.start_pfn + s.nr_pages);
    let name = format!("node {} {}", zl.node, zl.zone);
    // The pageblocks the zone owns: those whose first pfn is in it, and those whose first
    // pfn is in no zone (a zone beginning inside its first pageblock). /proc/pagetypeinfo
    // counts a pageblock in the zone of its first page.
    let owned: Vec<Pfn> =
        ((start >> PAGEBLOCK_ORDER)..=((end - 1) >> PAGEBLOCK_ORDER)).map(|pb| pb << PAGEBLOCK_ORDER).filter(|&p| (start <= p && p < end) || in_no_zone(specs, p)).collect();
    let forced = owned.iter().filter(|&&p| in_no_zone(specs, p)).count() as u64;
    let nb = owned.len() as u64;
    if zl.blocks[0] < forced {
        return Err(format!("{name}: {} unmovable pageblocks, but its first pageblock begins outside the zone and is unmovable", zl.blocks[0]));
    }
    let listed = zl.blocks.iter().sum::<u64>();
    if listed < nb {
        return Err(format!("{name}: {listed} pageblocks listed, but the zone has {nb} (machine.memory, machine.zone_dma)"));
    }
    // The guest's zone spans reserved memory the model's does not (its managed pages only):
    // the pageblocks it lists beyond the model's are taken from the movable count, then the
    // unmovable, then the reclaimable, each down to what its free blocks need (a reserved
    // range's whole pageblocks keep the type memmap_init_range gave them, movable; the
    // partly reserved ones at its edges count as unmovable to an early unmovable fallback,
    // `try_to_steal_block`'s alike_pages, and are claimed).
    // With `slack`: a type's pageblocks are one run (unmovable from the zone's start, then
    // reclaimable, then movable to its end), so free blocks above `pageblock_order` need the
    // run aligned, which may cost its first pageblock, and whole pageblocks, which the
    // zone's last one (movable's) is not when the zone ends inside it.
    let partial_end = end % PAGEBLOCK_NR_PAGES != 0;
    let need = |t: usize| {
        let whole: u64 = (PAGEBLOCK_ORDER..=MAX_PAGE_ORDER).map(|o| zl.free[t][o as usize] << (o - PAGEBLOCK_ORDER)).sum();
        let small: u64 = (0..PAGEBLOCK_ORDER).map(|o| zl.free[t][o as usize] << o).sum();
        let runs = (PAGEBLOCK_ORDER + 1..=MAX_PAGE_ORDER).any(|o| zl.free[t][o as usize] > 0);
        let extra = if slack { u64::from(runs) + u64::from(whole > 0 && t == 1 && partial_end && !unmovable_tail) } else { 0 };
        whole + small.div_ceil(PAGEBLOCK_NR_PAGES as u64 / 2) + extra
    };
    // Movable pageblocks also hold `held`, pages the kernel allocated movable before the
    // workload (the root's tmpfs, a process's mlocked buffer), in use as the guest's are.
    let free_movable: u64 = zl.free[1].iter().enumerate().map(|(o, &n)| n << o).sum();
    let movable_floor = need(1).max((free_movable + held).div_ceil(PAGEBLOCK_NR_PAGES as u64)).min(zl.blocks[1]);
    let mut count = zl.blocks;
    let mut excess = listed - nb;
    for (t, floor) in [(1, movable_floor), (0, need(0).max(forced)), (2, need(2))] {
        let cut = excess.min(count[t].saturating_sub(floor));
        count[t] -= cut;
        excess -= cut;
    }
    if excess > 0 {
        return Err(format!(
            "{name}: the free blocks listed need more pageblocks than the zone's {nb} (unmovable {}, movable {}, reclaimable {} at least)",
            need(0).max(forced),
            need(1),
            need(2)
        ));
    }
    let [nu, _, nr] = count;
    // Types: the forced ones, then the lowest others unmovable, then reclaimable, then movable
    // (with `unmovable_tail`, the zone's partial last pageblock unmovable).
    let mut pageblocks = Vec::with_capacity(owned.len());
    let (mut left_u, mut left_r) = (nu - forced, nr);
    let tail = (unmovable_tail && partial_end && left_u > 0).then(|| owned[owned.len() - 1]);
    left_u -= u64::from(tail.is_some());
    for &p in &owned {
        let mt = if in_no_zone(specs, p) || Some(p) == tail {
            MigrateType::Unmovable
        } else if left_u > 0 {
            left_u -= 1;
            MigrateType::Unmovable
        } else if left_r > 0 {
            left_r -= 1;
            MigrateType::Reclaimable
        } else {
            MigrateType::Movable
        };
        pageblocks.push((p, mt));
    }
    // The zone's frames in a pageblock.
    let span = |p: Pfn| (p.max(start), (p + PAGEBLOCK_NR_PAGES).min(end));
    let mut placed: BTreeMap<Pfn, u8> = BTreeMap::new();
    let mut free = Vec::new();
    for (t, &mt) in TYPES.iter().enumerate() {
        let blocks: Vec<Pfn> = pageblocks.iter().filter(|b| b.1 == mt).map(|b| b.0).collect();
        let capacity: u64 = blocks.iter().map(|&p| (span(p).1 - span(p).0) as u64).sum();
        let listed: u64 = zl.free[t].iter().enumerate().map(|(o, &n)| n << o).sum();
        if listed > capacity {
            return Err(format!("{name}: {listed} free {} pages, but its {} {} pageblocks hold {capacity} frames", NAMES[t], blocks.len(), NAMES[t]));
        }
        let whole = |p: Pfn| span(p) == (p, p + PAGEBLOCK_NR_PAGES);
        // Free pages placed so far per pageblock of this type.
        let mut in_block: BTreeMap<Pfn, u64> = blocks.iter().map(|&p| (p, 0)).collect();
        let mut by_free: BTreeSet<(u64, Pfn)> = blocks.iter().map(|&p| (0, p)).collect();
        for order in (0..=MAX_PAGE_ORDER).rev() {
            let size = 1u32 << order;
            let mut cursor = 0usize; // orders >= pageblock_order: the next candidate's index into `blocks`
            for _ in 0..zl.free[t][order as usize] {
                let buddy_free = |placed: &BTreeMap<Pfn, u8>, p: Pfn| order < MAX_PAGE_ORDER && placed.get(&(p ^ size)) == Some(&order);
                let at = if order >= PAGEBLOCK_ORDER {
                    // A run of 2^(order - 9) whole, empty pageblocks of the type, aligned.
                    let n = (size / PAGEBLOCK_NR_PAGES) as usize;
                    let mut found = None;
                    while cursor < blocks.len() {
                        let p = blocks[cursor];
                        let ok = p % size == 0
                            && cursor + n <= blocks.len()
                            && (0..n).all(|i| blocks[cursor + i] == p + i as u32 * PAGEBLOCK_NR_PAGES && whole(blocks[cursor + i]) && in_block[&blocks[cursor + i]] == 0)
                            && !buddy_free(&placed, p);
                        cursor += 1;
                        if ok {
                            cursor += n - 1;
                            found = Some(p);
                            break;
                        }
                    }
                    found
                } else {
                    // The first aligned place in the pageblock with the fewest free pages.
                    by_free.iter().find_map(|&(_, b)| {
                        let (lo, hi) = span(b);
                        let mut p = lo.next_multiple_of(size);
                        while p + size <= hi {
                            let clear = placed.range(..p + size).next_back().map_or(true, |(&q, &o)| q + (1 << o) <= p);
                            if clear && !buddy_free(&placed, p) {
                                return Some(p);
                            }
                            p += size;
                        }
                        None
                    })
                };
                let p = at.ok_or_else(|| format!("{name}: the {} free blocks of order {order} do not fit its {} {} pageblocks", NAMES[t], blocks.len(), NAMES[t]))?;
                placed.insert(p, order);
                free.push((p, order, mt));
                let mut q = p;
                while q < p + size {
                    let b = q & !(PAGEBLOCK_NR_PAGES - 1);
                    let add = (PAGEBLOCK_NR_PAGES.min(size)) as u64;
                    let was = in_block[&b];
                    by_free.remove(&(was, b));
                    by_free.insert((was + add, b));
                    *in_block.get_mut(&b).unwrap() += add;
                    q += PAGEBLOCK_NR_PAGES.min(size);
                }
            }
        }
    }
    free.sort_unstable_by_key(|b| b.0);
    let used = s.nr_pages as u64 - zl.free_pages();
    Ok(ZonePlan { zone: zi, pageblocks, free, used })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parse_and_print_round_trip() {
        let v = "0 DMA blocks=1,7,0 unmovable=0,0,0,0,0,1,1,1,0,0,0 movable=0,0,0,0,0,0,0,0,0,1,3 reclaimable=0,0,0,0,0,0,0,0,0,0,0; \
                 0 DMA32 blocks=12,106,2 unmovable=0,0,1,1,0,1,0,1,0,1,0 movable=0,1,1,1,4,3,3,4,2,1,37 reclaimable=1,1,0,0,0,1,1,1,0,1,0";
        let l = StartLayout::parse(v).unwrap().unwrap();
        assert_eq!(l.zones.len(), 2);
        assert_eq!(l.zones[1].blocks, [12, 106, 2]);
        assert_eq!(l.zones[0].free_pages(), 224 + 3584);
        assert_eq!(StartLayout::parse(&l.to_string()).unwrap().unwrap(), l);
        assert_eq!(StartLayout::parse("none").unwrap(), None);
        for bad in ["0 DMA", "0 HIGHMEM blocks=1,1,1", "0 DMA blocks=1,2", "0 DMA blocks=1,7,0 unmovable=1,2", "x DMA blocks=1,7,0", "0 DMA blocks=1,7,0 pinned=0"] {
            assert!(StartLayout::parse(bad).is_err(), "{bad}");
        }
    }
}
