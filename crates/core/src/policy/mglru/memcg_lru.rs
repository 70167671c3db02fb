//! The memcg LRU of global reclaim (include/linux/mmzone.h, mm/vmscan.c, v6.3+; spec
//! C.7): per node, memcgs sit in two generations, old (`seq`) and young (`seq + 1`),
//! each sharded into `MEMCG_NR_BINS` bins. `lru_gen_online_memcg` adds a memcg to the
//! tail of a random bin of the old generation; `lru_gen_rotate_memcg` applies the
//! `MEMCG_LRU_*` operations that `shrink_one` returns, and advances `seq` once the old
//! generation is empty. Root reclaim (`shrink_many`, in `eviction.rs`) visits only the
//! old generation, so a memcg that finished aging (MEMCG_LRU_YOUNG) waits until every
//! other memcg has aged too: "the round-robin incrementing of their max_seq counters
//! ensures the eventual fairness to all eligible memcgs" (mmzone.h). A memcg whose
//! reclaim never needs aging therefore keeps the others out of reclaim.
//!
//! `shrink_one`'s memcg-LRU decisions since v6.7 are here too ([`shrink_one_skip`],
//! [`shrink_one_op`]); v6.6's are in `v6_6::eviction`.
//!
//! Each bin is a `Vec` of lruvec ids, head first (a handful of memcgs: the kernel's
//! `hlist_nulls`, without the races of concurrent reclaimers).

use crate::mm::lruvec::LruvecId;
use reclaimlab_trace::Rng;

/// `MEMCG_NR_GENS`: two valid generations plus one so a stale read never looks young.
pub const MEMCG_NR_GENS: usize = 3;
/// `MEMCG_NR_BINS`.
pub const MEMCG_NR_BINS: usize = 8;

/// `MEMCG_LRU_*`: what `shrink_one` asks `lru_gen_rotate_memcg` to do.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum MemcgLruOp {
    /// `MEMCG_LRU_NOP`: stay where it is.
    Nop,
    /// Head of a random bin of its generation; seg = head (soft limit exceeded).
    Head,
    /// Tail of a random bin of its generation; seg = tail (first attempt below low, or
    /// too small).
    Tail,
    /// Head of a random bin of the old generation (offlined).
    Old,
    /// Tail of a random bin of the young generation (aged, below min, or too small twice).
    Young,
}

/// A memcg's segment in its bin (`lrugen.seg`): only "tail" is ever tested.
#[derive(Clone, Copy, PartialEq, Eq, Debug, Default)]
pub enum Seg {
    #[default]
    Default,
    Head,
    Tail,
}

/// `struct lru_gen_memcg` of one node.
#[derive(Clone, Debug, Default)]
struct NodeMemcgLru {
    seq: u64,
    nr_memcgs: [u32; MEMCG_NR_GENS],
    fifo: [[Vec<LruvecId>; MEMCG_NR_BINS]; MEMCG_NR_GENS],
}

/// The memcg LRU of every node, and each lruvec's `lrugen.gen`/`lrugen.seg`.
#[derive(Clone, Debug)]
pub struct MemcgLru {
    nodes: Vec<NodeMemcgLru>,
    gen: Vec<u8>,
    seg: Vec<Seg>,
    /// Per lruvec: moves to the young generation (MEMCG_LRU_YOUNG), for the metrics.
    young: Vec<u64>,
    /// `get_random_u32_below(MEMCG_NR_BINS)`, seeded from the run's seed.
    rng: Rng,
}

/// `get_memcg_gen`.
fn get_memcg_gen(seq: u64) -> usize {
    (seq % MEMCG_NR_GENS as u64) as usize
}

impl MemcgLru {
    pub fn new(seed: u64) -> Self {
        MemcgLru { nodes: Vec::new(), gen: Vec::new(), seg: Vec::new(), young: Vec::new(), rng: Rng::new(seed ^ 0x3E3C_6000_0000_0001) }
    }

    /// A random bin (`get_random_u32_below(MEMCG_NR_BINS)`).
    pub fn random_bin(&mut self) -> usize {
        self.rng.below(MEMCG_NR_BINS as u64) as usize
    }

    /// `lru_gen_online_memcg` for one lruvec: the tail of `bin` in the old generation.
    /// Lruvecs come online in id order (the kernel draws one bin per memcg).
    pub fn online(&mut self, lv: LruvecId, node: u16, bin: usize) {
        debug_assert_eq!(lv as usize, self.gen.len());
        if self.nodes.len() <= node as usize {
            self.nodes.resize_with(node as usize + 1, NodeMemcgLru::default);
        }
        let n = &mut self.nodes[node as usize];
        let gen = get_memcg_gen(n.seq);
        n.fifo[gen][bin].push(lv);
        n.nr_memcgs[gen] += 1;
        self.gen.push(gen as u8);
        self.seg.push(Seg::Default);
        self.young.push(0);
    }

    /// How often `lv` moved to the young generation.
    pub fn young_moves(&self, lv: LruvecId) -> u64 {
        self.young[lv as usize]
    }

    /// The old generation of `node` (`get_memcg_gen(pgdat->memcg_lru.seq)`).
    pub fn old_gen(&self, node: u16) -> usize {
        get_memcg_gen(self.nodes[node as usize].seq)
    }

    /// `pgdat->memcg_lru.seq`.
    pub fn seq(&self, node: u16) -> u64 {
        self.nodes[node as usize].seq
    }

    /// The lruvecs of one bin, head first.
    pub fn bin(&self, node: u16, gen: usize, bin: usize) -> &[LruvecId] {
        &self.nodes[node as usize].fifo[gen][bin]
    }

    /// `lruvec->lrugen.gen`.
    pub fn gen_of(&self, lv: LruvecId) -> usize {
        self.gen[lv as usize] as usize
    }

    /// `lruvec->lrugen.seg`.
    pub fn seg_of(&self, lv: LruvecId) -> Seg {
        self.seg[lv as usize]
    }

    /// `lru_gen_rotate_memcg`.
    pub fn rotate(&mut self, lv: LruvecId, node: u16, op: MemcgLruOp) {
        let bin = self.random_bin();
        let n = &mut self.nodes[node as usize];
        let old = self.gen[lv as usize] as usize;
        let (mut new, mut seg) = (old, Seg::Default);
        match op {
            MemcgLruOp::Head => seg = Seg::Head,
            MemcgLruOp::Tail => seg = Seg::Tail,
            MemcgLruOp::Old => new = get_memcg_gen(n.seq),
            MemcgLruOp::Young => {
                new = get_memcg_gen(n.seq + 1);
                self.young[lv as usize] += 1;
            }
            MemcgLruOp::Nop => return,
        }
        self.seg[lv as usize] = seg;
        self.gen[lv as usize] = new as u8;
        for list in n.fifo[old].iter_mut() {
            if let Some(i) = list.iter().position(|&x| x == lv) {
                list.remove(i);
                break;
            }
        }
        let list = &mut n.fifo[new][bin];
        match op {
            MemcgLruOp::Head | MemcgLruOp::Old => list.insert(0, lv),
            _ => list.push(lv),
        }
        n.nr_memcgs[old] -= 1;
        n.nr_memcgs[new] += 1;
        if n.nr_memcgs[old] == 0 && old == get_memcg_gen(n.seq) {
            n.seq += 1;
        }
    }
}

/// `shrink_one`'s skips since v6.7 ("mm/mglru: reclaim offlined memcgs harder"; 6.12
/// stable and v6.15 have it, v6.6 tests the size first: `v6_6::eviction`): below
/// min → young; below low → tail on the first attempt (the second reclaims it and
/// counts MEMCG_LOW).
pub fn shrink_one_skip(seg: Seg, below_min: bool, below_low: bool) -> Option<MemcgLruOp> {
    if below_min {
        return Some(MemcgLruOp::Young);
    }
    if below_low && seg != Seg::Tail {
        return Some(MemcgLruOp::Tail);
    }
    None
}

/// `shrink_one`'s operation after reclaim since v6.7 ("mm/mglru: respect min_ttl_ms with
/// memcgs"; every memcg online): aged → young; not aged but still sizable → stay; too
/// small → tail once, then young.
pub fn shrink_one_op(success: bool, sizable: bool, seg: Seg) -> MemcgLruOp {
    if success {
        MemcgLruOp::Young
    } else if sizable {
        MemcgLruOp::Nop
    } else if seg != Seg::Tail {
        MemcgLruOp::Tail
    } else {
        MemcgLruOp::Young
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Two memcgs on one node, both old: aging one (YOUNG) leaves the other alone in the
    /// old generation; aging the second empties the old generation, so `seq` advances
    /// and both are old again (mmzone.h's "alternate when the last memcg is moved").
    #[test]
    fn generations_alternate_when_the_old_one_empties() {
        let mut l = MemcgLru::new(1);
        l.online(0, 0, 3);
        l.online(1, 0, 5);
        assert_eq!((l.seq(0), l.old_gen(0), l.gen_of(0), l.gen_of(1)), (0, 0, 0, 0));
        l.rotate(0, 0, MemcgLruOp::Young);
        assert_eq!((l.seq(0), l.gen_of(0), l.gen_of(1)), (0, 1, 0));
        assert!(l.bin(0, 0, 3).is_empty());
        assert_eq!(l.bin(0, 0, 5), &[1]);
        l.rotate(1, 0, MemcgLruOp::Young);
        assert_eq!((l.seq(0), l.old_gen(0), l.gen_of(0), l.gen_of(1)), (1, 1, 1, 1));
        assert_eq!((l.young_moves(0), l.young_moves(1)), (1, 1));
        let old: usize = (0..MEMCG_NR_BINS).map(|b| l.bin(0, 1, b).len()).sum();
        assert_eq!(old, 2);
    }

    /// TAIL keeps the generation and marks the segment; HEAD inserts at the head of a
    /// bin; NOP changes nothing.
    #[test]
    fn tail_and_head_keep_the_generation() {
        let mut l = MemcgLru::new(2);
        for lv in 0..3 {
            l.online(lv, 0, 0);
        }
        assert_eq!(l.bin(0, 0, 0), &[0, 1, 2]);
        l.rotate(1, 0, MemcgLruOp::Tail);
        assert_eq!((l.gen_of(1), l.seg_of(1), l.seq(0)), (0, Seg::Tail, 0));
        l.rotate(2, 0, MemcgLruOp::Head);
        assert_eq!(l.seg_of(2), Seg::Head);
        let b = (0..MEMCG_NR_BINS).find(|&b| l.bin(0, 0, b).contains(&2)).unwrap();
        assert_eq!(l.bin(0, 0, b)[0], 2);
        l.rotate(0, 0, MemcgLruOp::Nop);
        assert_eq!(l.bin(0, 0, 0)[0], 0);
        // YOUNG resets the segment.
        l.rotate(1, 0, MemcgLruOp::Young);
        assert_eq!((l.gen_of(1), l.seg_of(1)), (1, Seg::Default));
    }
}
