//! A WiredTiger cache at b-tree-leaf granularity, for the page-access mimics of MongoDB
//! (seed 001's `tpcc`): which cache slot holds each leaf, and which slot a missing leaf
//! evicts. The cache is anonymous memory of `slots × slot_pages` pages.
//!
//! WiredTiger evicts clean leaves by their read generation, an approximate LRU; CLOCK over
//! the slots stands in for it. A slot is the memory a leaf's in-memory image takes
//! (`leaf_page_max` = 32 KiB for MongoDB collections): evicting a clean page frees that
//! memory and the allocator hands it to the next page read, so a miss rewrites the
//! victim's slot — the cache's anonymous pages are reused, never a stream of new ones.

const NONE: u32 = u32::MAX;

/// CLOCK over `slots` cache slots holding leaves `0..leaves`.
pub struct WtCache {
    /// Slot holding each leaf, or NONE.
    slot_of: Vec<u32>,
    /// Leaf in each slot, or NONE.
    leaf_of: Vec<u32>,
    referenced: Vec<bool>,
    hand: u32,
}

impl WtCache {
    pub fn new(leaves: u32, slots: u32) -> WtCache {
        assert!(slots > 0, "a WiredTiger cache needs at least one slot");
        WtCache { slot_of: vec![NONE; leaves as usize], leaf_of: vec![NONE; slots as usize], referenced: vec![false; slots as usize], hand: 0 }
    }

    /// (slot, hit) for `leaf`; a miss installs it in the CLOCK victim's slot.
    #[inline]
    pub fn lookup(&mut self, leaf: u32) -> (u32, bool) {
        let s = self.slot_of[leaf as usize];
        if s != NONE {
            self.referenced[s as usize] = true;
            return (s, true);
        }
        let n = self.leaf_of.len() as u32;
        let victim = loop {
            let h = self.hand;
            self.hand = if h + 1 == n { 0 } else { h + 1 };
            if self.referenced[h as usize] {
                self.referenced[h as usize] = false;
            } else {
                break h;
            }
        };
        let old = self.leaf_of[victim as usize];
        if old != NONE {
            self.slot_of[old as usize] = NONE;
        }
        self.leaf_of[victim as usize] = leaf;
        self.slot_of[leaf as usize] = victim;
        self.referenced[victim as usize] = true;
        (victim, false)
    }

    /// The slot holding `leaf`, if cached.
    pub fn slot(&self, leaf: u32) -> Option<u32> {
        let s = self.slot_of[leaf as usize];
        (s != NONE).then_some(s)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn clock_evicts_and_rehits() {
        let mut c = WtCache::new(10, 3);
        assert_eq!(c.lookup(0), (0, false));
        assert_eq!(c.lookup(1), (1, false));
        assert_eq!(c.lookup(2), (2, false));
        assert_eq!(c.lookup(1), (1, true));
        // All referenced: the hand clears 0,1,2 and takes slot 0.
        assert_eq!(c.lookup(3), (0, false));
        assert_eq!(c.slot(0), None);
        assert_eq!(c.slot(3), Some(0));
        // 1 and 2 lost their reference bits on that sweep; 3 is referenced: slot 1 goes.
        assert_eq!(c.lookup(4), (1, false));
        assert_eq!(c.slot(1), None);
    }
}
