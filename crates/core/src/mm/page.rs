//! Per-page and per-frame state as flat arrays (the simulator's `struct page` and
//! page tables).
//!
//! - [`Pages`] is indexed by the trace's dense page id. Its `pte` word is what the
//!   page-cache/swap slot holds in the kernel: the frame number of a resident page, or a
//!   non-resident tag carrying the page's type ([`pinfo`]), or, for a swapped-out page,
//!   its swap entry (the kernel's swap PTE). One word per page on the hit path. The
//!   workingset shadow of an evicted page is where the kernel keeps it: at the page for
//!   a file page, at its swap slot for a swapped-out one (a fault reads one more line).
//! - [`Frames`] is indexed by page frame number: which page occupies it, its folio
//!   flags (`PG_*` plus the PTE young/mapped bits the hardware and rmap see) and the
//!   memcg it is charged to (`folio->memcg_data`).
//!
//! Abstractions: one mapping per page (no shared anon/COW, so `folio_referenced`
//! finds at most one young PTE); base pages only (THP comes with the THP work).

use super::page_alloc::{Pfn, OWNER_NOT_BUDDY};
use super::shadows::Shadows;

/// `pte` values from here up are not frame numbers: swap entries ([`swp_entry_to_pte`]),
/// then from [`NONRES`] up the tags of other non-resident pages. Frame numbers stay below
/// (config.rs limits `machine.memory` to fit).
pub const SWP_PTE: u32 = 0x8000_0000;
/// `pte` values from here up are non-resident tags ([`nonres_pte`]).
pub const NONRES: u32 = 0xFFFF_0000;
/// Swap slots a swap PTE can name (config.rs limits `swap.size` to fit).
pub const MAX_SWAP_SLOTS: u64 = (NONRES - SWP_PTE) as u64;
/// `pte` value of a page never touched.
pub const NOT_PRESENT: u32 = NONRES;

/// Is this `pte` word a frame number.
#[inline(always)]
pub fn is_resident(pte: u32) -> bool {
    pte < SWP_PTE
}

/// `is_swap_pte`: the `pte` word of a swapped-out page, carrying its swap slot.
#[inline(always)]
pub fn is_swap_pte(pte: u32) -> bool {
    (SWP_PTE..NONRES).contains(&pte)
}

/// `swp_entry_to_pte`: the `pte` word of a page swapped out to `slot` (as the kernel's
/// non-present PTE holds the swap entry, arch/x86/include/asm/pgtable_64.h 6.12
/// `__swp_entry`; one swap device here, so the entry is the offset alone).
#[inline(always)]
pub fn swp_entry_to_pte(slot: u32) -> u32 {
    debug_assert!((slot as u64) < MAX_SWAP_SLOTS);
    SWP_PTE + slot
}

/// `swp_offset(pte_to_swp_entry(pte))`: the swap slot of a swap `pte` word.
#[inline(always)]
pub fn pte_swap_slot(pte: u32) -> u32 {
    debug_assert!(is_swap_pte(pte));
    pte - SWP_PTE
}

/// The [`pinfo`] bits of a non-resident `pte` word (a swap PTE's are implied: a
/// touched anonymous page in swap).
#[inline(always)]
pub fn pte_info(pte: u32) -> u8 {
    debug_assert!(!is_resident(pte));
    if pte >= NONRES {
        pte as u8
    } else {
        pinfo::TOUCHED | pinfo::SWAPPED
    }
}

/// A non-resident `pte` word with [`pinfo`] bits.
#[inline(always)]
pub fn nonres_pte(info: u8) -> u32 {
    NONRES | info as u32
}
/// `frames.page` value of a frame no trace page occupies (free or kernel-owned).
pub const NO_PAGE: u32 = u32::MAX;

/// Folio flags (`frames.flags`). Bits 16..=29 are private to the policy (MGLRU keeps its
/// generation and reference counts there, as the kernel does in `folio->flags`).
pub mod pg {
    pub const LRU: u32 = 1 << 0;
    pub const ACTIVE: u32 = 1 << 1;
    pub const REFERENCED: u32 = 1 << 2;
    pub const WORKINGSET: u32 = 1 << 3;
    pub const DIRTY: u32 = 1 << 4;
    pub const UNEVICTABLE: u32 = 1 << 5;
    /// Anonymous (swap-backed) folio.
    pub const SWAPBACKED: u32 = 1 << 6;
    pub const RECLAIM: u32 = 1 << 7;
    /// The (single) PTE mapping the page has its accessed bit set.
    pub const YOUNG: u32 = 1 << 8;
    /// The page is mapped by a PTE (mmap access or anon); read()-only page-cache pages
    /// are not.
    pub const MAPPED: u32 = 1 << 9;
    /// `PG_idle` (page_idle / DAMON paddr).
    pub const IDLE: u32 = 1 << 10;
    /// DAMON's view of the accessed bit: set by every access beside `YOUNG`, cleared
    /// only by DAMON's mkold (so reclaim still sees the reference; crate::damon).
    pub const DAMON_ACCESSED: u32 = 1 << 15;
    /// Part of a PMD-mapped transparent huge page (the 512 frames of one aligned
    /// pageblock; see docs/thp.md for how a THP sits on the LRU).
    pub const COMPOUND: u32 = 1 << 11;
    /// `PG_readahead`: reaching this page-cache page starts the next asynchronous
    /// readahead (mm/readahead.c). The kernel shares the bit with `PG_reclaim`; here it
    /// has its own.
    pub const READAHEAD: u32 = 1 << 12;
    /// `PG_locked` of a page whose asynchronous readahead has not completed: an access
    /// waits for its window's I/O (sim/filemap.rs keeps the windows' completion times).
    pub const INFLIGHT: u32 = 1 << 13;
    /// `PG_writeback`: the folio's write to disk has been submitted and not completed.
    pub const WRITEBACK: u32 = 1 << 14;
    /// First policy-private bit.
    pub const POLICY_SHIFT: u32 = 16;
    /// `PG_private` of a page-cache folio: buffer heads are attached (fs/buffer.c
    /// `folio_create_empty_buffers` at its first write), freed with the folio
    /// (`filemap_release_folio`). See [`crate::mm::Mm::attach_buffers`].
    pub const PRIVATE: u32 = 1 << 30;
    /// `PG_head`: the first frame of a THP, which stands on the LRU for the whole folio
    /// of order 9 (`folio_nr_pages` 512; its tails are on no list) until the THP is
    /// split (thp/split.rs), mapped by its PMD or, once part of it was unmapped, by PTEs
    /// (then `MAPPED` and `YOUNG` of each frame are its own PTE's: docs/thp.md).
    pub const HEAD: u32 = 1 << 31;

    /// `folio_nr_pages` from the folio's flags: 512 for `PG_head`, else 1.
    #[inline(always)]
    pub const fn nr_pages(flags: u32) -> u64 {
        if flags & HEAD != 0 {
            crate::thp::HPAGE_PMD_NR as u64
        } else {
            1
        }
    }
}

/// Bits of a non-resident `pte` word.
pub mod pinfo {
    /// The page has been faulted in at least once.
    pub const TOUCHED: u8 = 1 << 0;
    /// File-backed page (fixed at first touch).
    pub const FILE: u8 = 1 << 1;
    /// Non-resident anon page whose content is in a swap slot (never in a tag: implied by
    /// a swap PTE, [`super::pte_info`]).
    pub const SWAPPED: u8 = 1 << 2;
}

/// `PTRS_PER_PTE` on x86-64: page ids per page-table page (one PMD entry maps 512 of
/// them; fault-around never crosses one).
pub const PTRS_PER_PTE: usize = 512;

/// The per-page and per-slot state of evicted pages, kept where the kernel keeps it:
/// the shadow of an evicted page that is not in swap (a file page) at the page's own slot
/// of its mapping's xarray (mm/workingset.c 6.15 `workingset_eviction` via
/// `page_cache_delete`), the shadow of a swapped-out page at its swap slot, in the swap
/// cache (mm/swap_state.c 6.12 `__delete_from_swap_cache`), and the slot itself where the
/// kernel has it, in the swap PTE ([`swp_entry_to_pte`]).
/// A swap-in reads the page's `pte`, then the shadow at its slot; the shadow-node shrinker
/// clears a swap node's 64 shadows in one run of memory, with no slot→page map. All
/// arrays come from zeroed host memory, so a page never evicted, and a slot never used,
/// cost no host memory; a shadow takes 4 bytes while it fits ([`Shadows`]).
pub struct Pages {
    pub pte: Vec<u32>,
    /// Per page: the shadow of an evicted page not in swap (0: none). Read through
    /// [`Pages::shadow`].
    shadow: Shadows,
    /// Per swap slot: the shadow entry the swap cache holds there (0: none).
    swap_shadow: Shadows,
    /// The machine's nodes (what a shadow's node id ranges over).
    nr_nodes: usize,
    /// Per 512 page ids (one PMD entry; a trace's page ids stand for one address space):
    /// not `pmd_none` — a page in it was ever faulted or the range holds file pages, so
    /// an anonymous fault there maps a base page, never a THP (sim/huge_memory.rs).
    pub pmd_populated: Vec<bool>,
    /// The first page id that is not the trace's (`machine.kernel_shmem`'s folios,
    /// sim/kernel_shmem.rs), if any.
    pub kernel_first: Option<usize>,
}

impl Pages {
    /// No pages yet, for a machine of `nr_nodes` nodes.
    pub fn new(nr_nodes: usize) -> Self {
        Pages { pte: Vec::new(), shadow: Shadows::new(0, nr_nodes), swap_shadow: Shadows::new(0, nr_nodes), nr_nodes, pmd_populated: Vec::new(), kernel_first: None }
    }
    pub fn len(&self) -> usize {
        self.pte.len()
    }
    /// Page ids of the trace's address space (a process's VMAs lie below): `len()` less
    /// the kernel's folios after them.
    pub fn trace_len(&self) -> usize {
        self.kernel_first.unwrap_or(self.pte.len())
    }
    pub fn is_empty(&self) -> bool {
        self.pte.is_empty()
    }
    /// Grow to hold page ids `< n` (called per trace batch, never per access). An
    /// allocation the host cannot make (a trace header naming billions of pages) is an
    /// error naming the size, not an abort.
    pub fn ensure(&mut self, n: usize) -> crate::Result<()> {
        if n > self.pte.len() {
            let more = n - self.pte.len();
            // The arrays together within --max-memory, then each fallibly; the error
            // names their combined size either way.
            let what = || format!("the trace names {n} page ids: their per-page state");
            if n as u64 > MAX_PAGES {
                return Err(crate::Error::invalid(format!("the trace names {n} page ids; at most {MAX_PAGES} fit the frame owner word")));
            }
            let bytes = (n as u64).saturating_mul(Self::BYTES_PER_PAGE as u64);
            reclaimlab_trace::mem::check(bytes, &what)
                .and_then(|_| {
                    // The shadows as wide as they can get (Shadows widens to u64).
                    if self.pte.try_reserve_exact(more).is_err() || Vec::<u64>::new().try_reserve_exact(n).is_err() {
                        return Err(reclaimlab_trace::mem::cannot(bytes, &what));
                    }
                    Ok(())
                })
                .map_err(crate::Error::invalid)?;
            // Read at random by every access: huge pages where the host has them (before
            // `resize` first writes the new part).
            reclaimlab_trace::mem::huge_pages(&mut self.pte);
            self.pte.resize(n, NOT_PRESENT);
            self.shadow.grow(n);
            self.pmd_populated.resize(n.div_ceil(PTRS_PER_PTE), false);
        }
        Ok(())
    }
    /// At most: `pte` and a shadow, 4 bytes while shadows are narrow, 8 once widened
    /// ([`Shadows`]).
    pub const BYTES_PER_PAGE: usize = 4 + 8;

    /// The machine's swap slots (once, before the first swap-out): their shadow array,
    /// from zeroed host memory.
    pub fn set_swap_slots(&mut self, nr: u64) {
        self.swap_shadow = Shadows::new(nr as usize, self.nr_nodes);
    }

    /// Where `page`'s shadow is kept: at its swap slot while it is swapped out, else at
    /// the page.
    #[inline(always)]
    fn shadow_at(&self, page: usize) -> (bool, usize) {
        let pte = self.pte[page];
        if is_swap_pte(pte) {
            (true, pte_swap_slot(pte) as usize)
        } else {
            (false, page)
        }
    }

    /// The workingset shadow of `page` (0: none).
    #[inline(always)]
    pub fn shadow(&self, page: usize) -> u64 {
        match self.shadow_at(page) {
            (true, slot) => self.swap_shadow.get(slot),
            (false, page) => self.shadow.get(page),
        }
    }

    #[inline(always)]
    pub fn set_shadow(&mut self, page: usize, shadow: u64) {
        match self.shadow_at(page) {
            (true, slot) => self.swap_shadow.set(slot, shadow),
            (false, page) => self.shadow.set(page, shadow),
        }
    }

    /// The shadow of `page`, leaving none.
    #[inline(always)]
    pub fn take_shadow(&mut self, page: usize) -> u64 {
        match self.shadow_at(page) {
            (true, slot) => self.swap_shadow.take(slot),
            (false, page) => self.shadow.take(page),
        }
    }

    /// The swap slot of swapped-out `page` (from its swap PTE).
    #[inline(always)]
    pub fn swap_slot(&self, page: usize) -> u32 {
        pte_swap_slot(self.pte[page])
    }

    /// The swap cache's shadow entry at `slot` (0: none).
    #[inline(always)]
    pub fn swap_shadow(&self, slot: u32) -> u64 {
        self.swap_shadow.get(slot as usize)
    }

    /// `__delete_from_swap_cache`'s shadow entry at `slot` (0: none).
    #[inline(always)]
    pub fn set_swap_shadow(&mut self, slot: u32, shadow: u64) {
        self.swap_shadow.set(slot as usize, shadow);
    }

    /// Drop the shadow entries of `slots` (a swap-cache node freed by the shrinker, or a
    /// slot freed: `clear_shadow_from_swap_cache`).
    #[inline]
    pub fn clear_swap_shadows(&mut self, slots: std::ops::Range<u32>) {
        self.swap_shadow.clear(slots.start as usize..slots.end as usize);
    }

    /// Host prefetch hint for the shadow a fault of non-resident, not swapped `page`
    /// reads (no simulated effect).
    #[inline(always)]
    pub fn prefetch_shadow(&self, page: usize) {
        self.shadow.prefetch(page);
    }

    /// Host prefetch hint for the shadow at `slot`.
    #[inline(always)]
    pub fn prefetch_swap_shadow(&self, slot: u32) {
        self.swap_shadow.prefetch(slot as usize);
    }
}

/// Who owns a frame: the occupying page, complemented (`!page`, at least [`OWNER_TAGS`]);
/// a word below [`OWNER_TAGS`] is a frame without a page, and its value is the buddy
/// allocator's (mm/page_alloc.rs: the frame's buddy order while it heads a free block,
/// as the kernel keeps it in `page->private` of a page no one owns). A word of 0 is "as
/// set up", so the array comes from zeroed host memory and frames never used cost none.
pub type Owner = u32;
/// Owner words below this are a frame without a page ([`NO_PAGE`]); page ids stop below
/// `!OWNER_TAGS` ([`MAX_PAGES`]).
pub const OWNER_TAGS: Owner = 16;
/// Page ids a trace may name: `0..MAX_PAGES` (a page's owner word `!page` must stay at or
/// above [`OWNER_TAGS`]).
pub const MAX_PAGES: u64 = (!OWNER_TAGS) as u64 + 1;

pub struct Frames {
    /// [`pg`] bits, in their own array so the hit path strides 4 bytes per frame.
    pub flags: Vec<u32>,
    /// [`Owner`] words (read through [`Frames::page`]).
    pub owner: Vec<Owner>,
    /// The memcg id each frame is charged to (`folio->memcg_data`; 0, the root, for a
    /// free frame), written only when it changes, and read only once a frame was charged
    /// to another memcg than the root ([`Self::other_memcgs`]): on a machine with one
    /// memcg the array is neither read nor written, so it costs no host memory.
    memcg: Vec<u16>,
    /// A frame was ever charged to a memcg other than the root.
    other_memcgs: bool,
    /// One past the highest frame ever given a page: the frames from here up have never
    /// held one, so a lookup there (DAMON's random sampling addresses) need not touch
    /// their host memory.
    installed_end: Pfn,
}

impl Frames {
    pub fn new(nr: u32) -> Self {
        // Zeroed host memory (nothing written here), under huge pages where the host has
        // them: every fault and eviction reads a frame's flags and owner at random.
        let (mut flags, mut owner) = (vec![0; nr as usize], vec![!NO_PAGE; nr as usize]);
        reclaimlab_trace::mem::huge_pages(&mut flags);
        reclaimlab_trace::mem::huge_pages(&mut owner);
        Frames { flags, owner, memcg: vec![0; nr as usize], other_memcgs: false, installed_end: 0 }
    }
    /// Has the frame ever held a page (else it holds [`NO_PAGE`]; no memory read).
    #[inline(always)]
    pub fn ever_installed(&self, pfn: Pfn) -> bool {
        pfn < self.installed_end
    }
    /// One past the highest frame ever given a page.
    #[inline(always)]
    pub fn installed_end(&self) -> Pfn {
        self.installed_end
    }
    /// The frame's page, or [`NO_PAGE`].
    #[inline(always)]
    pub fn page(&self, pfn: Pfn) -> u32 {
        let w = self.owner[pfn as usize];
        if w < OWNER_TAGS {
            NO_PAGE
        } else {
            !w
        }
    }
    #[inline(always)]
    pub fn memcg(&self, pfn: Pfn) -> u16 {
        if self.other_memcgs {
            self.memcg[pfn as usize]
        } else {
            crate::mm::memcontrol::ROOT_MEMCG
        }
    }
    /// Charge the frame to `memcg`, writing only a change.
    #[inline(always)]
    fn set_memcg(&mut self, pfn: Pfn, memcg: u16) {
        if memcg == crate::mm::memcontrol::ROOT_MEMCG && !self.other_memcgs {
            return;
        }
        self.other_memcgs = true;
        let m = &mut self.memcg[pfn as usize];
        if *m != memcg {
            *m = memcg;
        }
    }
    #[inline(always)]
    pub fn flags(&self, pfn: Pfn) -> u32 {
        self.flags[pfn as usize]
    }
    /// Install a folio in the frame.
    #[inline(always)]
    pub fn install(&mut self, pfn: Pfn, page: u32, memcg: u16, flags: u32) {
        debug_assert!(page != NO_PAGE, "frame {pfn}: a folio without a page is installed by migrate_folio's zap_owner");
        self.owner[pfn as usize] = !page;
        self.set_memcg(pfn, memcg);
        self.installed_end = self.installed_end.max(pfn + 1);
        self.flags[pfn as usize] = flags;
    }
    /// The frame's page is unmapped (`zap_pte_range`) while the frame stays part of a
    /// large folio, charged to its memcg: the owner's page becomes [`NO_PAGE`], the memcg
    /// and the flags stay.
    #[inline(always)]
    pub fn zap_owner(&mut self, pfn: Pfn) {
        self.owner[pfn as usize] = OWNER_NOT_BUDDY;
    }
    /// The frame goes back to the allocator.
    #[inline(always)]
    pub fn release(&mut self, pfn: Pfn) {
        self.owner[pfn as usize] = OWNER_NOT_BUDDY;
        self.set_memcg(pfn, 0);
        self.flags[pfn as usize] = 0;
    }
    #[inline(always)]
    pub fn test(&self, pfn: Pfn, f: u32) -> bool {
        self.flags[pfn as usize] & f != 0
    }
    #[inline(always)]
    pub fn set(&mut self, pfn: Pfn, f: u32) {
        self.flags[pfn as usize] |= f;
    }
    #[inline(always)]
    pub fn clear(&mut self, pfn: Pfn, f: u32) {
        self.flags[pfn as usize] &= !f;
    }
    /// `TestClearPageX`.
    #[inline(always)]
    pub fn test_and_clear(&mut self, pfn: Pfn, f: u32) -> bool {
        let old = self.flags[pfn as usize];
        self.flags[pfn as usize] = old & !f;
        old & f != 0
    }
    #[inline(always)]
    pub fn is_file(&self, pfn: Pfn) -> bool {
        !self.test(pfn, pg::SWAPBACKED)
    }
    /// Host bytes per frame: flags, owner (also a free frame's buddy order) and memcg
    /// (whose array a machine with one memcg never writes).
    pub const BYTES_PER_FRAME: usize = 4 + std::mem::size_of::<Owner>() + 2;
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_frame_without_a_page_reads_no_page_whatever_the_allocator_keeps_in_its_word() {
        let mut f = Frames::new(4);
        assert_eq!(f.page(0), NO_PAGE, "as set up");
        f.install(1, 5, 0, pg::LRU);
        assert_eq!(f.page(1), 5);
        f.release(1);
        assert_eq!((f.page(1), f.owner[1]), (NO_PAGE, OWNER_NOT_BUDDY));
        for tag in 1..OWNER_TAGS {
            f.owner[2] = tag; // a free block's head: its buddy order + 1
            assert_eq!(f.page(2), NO_PAGE);
        }
        // The highest page id there is; a frame of a large folio whose page is unmapped
        // keeps the not-a-buddy word.
        f.install(3, (MAX_PAGES - 1) as u32, 0, pg::COMPOUND);
        assert_eq!(f.page(3), (MAX_PAGES - 1) as u32);
        f.zap_owner(3);
        assert_eq!((f.page(3), f.owner[3], f.flags(3)), (NO_PAGE, OWNER_NOT_BUDDY, pg::COMPOUND));
    }

    #[test]
    fn page_ids_stop_below_the_owner_words_tags() {
        let mut p = Pages::new(1);
        let err = p.ensure(MAX_PAGES as usize + 1).unwrap_err();
        assert!(err.to_string().contains("fit the frame owner word"), "{err}");
        assert!(p.is_empty());
    }
}
