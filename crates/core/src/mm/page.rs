//! Per-page and per-frame state as flat arrays (the simulator's `struct page` and
//! page tables).
//!
//! - [`Pages`] is indexed by the trace's dense page id. Its `pte` word is what the
//!   page-cache/swap slot holds in the kernel: the frame number of a resident page, or a
//!   non-resident tag carrying the page's type and whether its content is in swap
//!   ([`pinfo`]); the workingset shadow of an evicted page sits beside it, with the swap
//!   slot of a swapped-out page ([`Evicted`]). One word per page on the hit path, one
//!   more cache line on a fault.
//! - [`Frames`] is indexed by page frame number: which page occupies it, its folio
//!   flags (`PG_*` plus the PTE young/mapped bits the hardware and rmap see) and the
//!   memcg it is charged to (`folio->memcg_data`).
//!
//! Abstractions: one mapping per page (no shared anon/COW, so `folio_referenced`
//! finds at most one young PTE); base pages only (THP comes with the THP work).

use super::page_alloc::Pfn;

/// `pte` values from here up are non-resident tags; below are frame numbers.
pub const NONRES: u32 = 0xFFFF_0000;
/// `pte` value of a page never touched.
pub const NOT_PRESENT: u32 = NONRES;

/// Is this `pte` word a frame number.
#[inline(always)]
pub fn is_resident(pte: u32) -> bool {
    pte < NONRES
}

/// The [`pinfo`] bits of a non-resident `pte` word.
#[inline(always)]
pub fn pte_info(pte: u32) -> u8 {
    debug_assert!(!is_resident(pte));
    pte as u8
}

/// A non-resident `pte` word with [`pinfo`] bits.
#[inline(always)]
pub fn nonres_pte(info: u8) -> u32 {
    NONRES | info as u32
}
/// `frames.page` value of a frame no trace page occupies (free or kernel-owned).
pub const NO_PAGE: u32 = u32::MAX;

/// Folio flags (`frames.flags`). Bits 16..=30 are private to the policy (MGLRU keeps its
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
    /// Non-resident anon page whose content is in a swap slot.
    pub const SWAPPED: u8 = 1 << 2;
}

/// `PTRS_PER_PTE` on x86-64: page ids per page-table page (one PMD entry maps 512 of
/// them; fault-around never crosses one).
pub const PTRS_PER_PTE: usize = 512;

/// What an evicted page leaves behind: its workingset shadow (0: none), and while it is
/// swapped out, its swap slot, which the kernel's swap PTE holds as the swap entry's
/// offset (the `pte` word is too narrow for it). One record, so the swap-in that reads the
/// shadow finds the slot in the same cache line; 12 bytes (shadow low word, shadow high
/// word, slot), so two in sixteen records straddle a line. All zero is "nothing", so the
/// array comes from zeroed host memory and a page never evicted costs no host memory.
pub type Evicted = [u32; 3];

#[derive(Default)]
pub struct Pages {
    pub pte: Vec<u32>,
    /// Per page: [`Evicted`] (read through [`Pages::shadow`] and [`Pages::swap_slot`]).
    evicted: Vec<Evicted>,
    /// Per 512 page ids (one PMD entry; a trace's page ids stand for one address space):
    /// not `pmd_none` — a page in it was ever faulted or the range holds file pages, so
    /// an anonymous fault there maps a base page, never a THP (sim/huge_memory.rs).
    pub pmd_populated: Vec<bool>,
}

impl Pages {
    pub fn len(&self) -> usize {
        self.pte.len()
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
            // Both arrays together within --max-memory, then each fallibly; the error
            // names their combined size either way.
            let what = || format!("the trace names {n} page ids: their per-page state");
            let bytes = (n as u64).saturating_mul(Self::BYTES_PER_PAGE as u64);
            reclaimlab_trace::mem::check(bytes, &what)
                .and_then(|_| {
                    if self.pte.try_reserve_exact(more).is_err() || Vec::<Evicted>::new().try_reserve_exact(n).is_err() {
                        return Err(reclaimlab_trace::mem::cannot(bytes, &what));
                    }
                    Ok(())
                })
                .map_err(crate::Error::invalid)?;
            self.pte.resize(n, NOT_PRESENT);
            if n > self.evicted.len() {
                // A fresh zeroed allocation (mapped on first write), never `resize`, which
                // would write every record; doubling keeps a trace that names its pages
                // batch by batch from copying the records each time.
                let mut grown = vec![Evicted::default(); n.max(2 * self.evicted.len())];
                grown[..self.evicted.len()].copy_from_slice(&self.evicted);
                self.evicted = grown;
            }
            self.pmd_populated.resize(n.div_ceil(PTRS_PER_PTE), false);
        }
        Ok(())
    }
    pub const BYTES_PER_PAGE: usize = 4 + std::mem::size_of::<Evicted>();

    /// The workingset shadow of `page` (0: none).
    #[inline(always)]
    pub fn shadow(&self, page: usize) -> u64 {
        let e = &self.evicted[page];
        e[0] as u64 | (e[1] as u64) << 32
    }

    #[inline(always)]
    pub fn set_shadow(&mut self, page: usize, shadow: u64) {
        let e = &mut self.evicted[page];
        e[0] = shadow as u32;
        e[1] = (shadow >> 32) as u32;
    }

    /// The shadow of `page`, leaving none.
    #[inline(always)]
    pub fn take_shadow(&mut self, page: usize) -> u64 {
        let shadow = self.shadow(page);
        self.set_shadow(page, 0);
        shadow
    }

    /// The swap slot of swapped-out `page`.
    #[inline(always)]
    pub fn swap_slot(&self, page: usize) -> u32 {
        self.evicted[page][2]
    }

    #[inline(always)]
    pub fn set_swap_slot(&mut self, page: usize, slot: u32) {
        self.evicted[page][2] = slot;
    }

    /// Host prefetch hint for `page`'s [`Evicted`] record (no simulated effect).
    #[inline(always)]
    pub fn prefetch_evicted(&self, page: usize) {
        super::prefetch::prefetch(&self.evicted, page);
    }
}

/// Who owns a frame: the occupying page and the memcg it is charged to, kept in one
/// word because reclaim reads both (`folio_lruvec`, eviction): the page complemented
/// (`!page`, so [`NO_PAGE`] is 0) in the low 32 bits, the memcg id (`folio->memcg_data`)
/// above. A free frame's word is 0, so the array comes from zeroed host memory and
/// frames never used cost none. Flags live in their own array so the hit path strides 4
/// bytes per frame.
pub type Owner = u64;

#[inline(always)]
const fn owner(page: u32, memcg: u16) -> Owner {
    (!page) as u64 | (memcg as u64) << 32
}

pub struct Frames {
    /// [`pg`] bits.
    pub flags: Vec<u32>,
    /// [`Owner`] words (read through [`Frames::page`] and [`Frames::memcg`]).
    pub owner: Vec<Owner>,
    /// One past the highest frame ever given a page: the frames from here up have never
    /// held one, so a lookup there (DAMON's random sampling addresses) need not touch
    /// their host memory.
    installed_end: Pfn,
}

impl Frames {
    pub fn new(nr: u32) -> Self {
        Frames { flags: vec![0; nr as usize], owner: vec![owner(NO_PAGE, 0); nr as usize], installed_end: 0 }
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
    #[inline(always)]
    pub fn page(&self, pfn: Pfn) -> u32 {
        !(self.owner[pfn as usize] as u32)
    }
    #[inline(always)]
    pub fn memcg(&self, pfn: Pfn) -> u16 {
        (self.owner[pfn as usize] >> 32) as u16
    }
    #[inline(always)]
    pub fn flags(&self, pfn: Pfn) -> u32 {
        self.flags[pfn as usize]
    }
    /// Install a folio in the frame.
    #[inline(always)]
    pub fn install(&mut self, pfn: Pfn, page: u32, memcg: u16, flags: u32) {
        self.owner[pfn as usize] = owner(page, memcg);
        self.installed_end = self.installed_end.max(pfn + 1);
        self.flags[pfn as usize] = flags;
    }
    /// The frame's page is unmapped (`zap_pte_range`) while the frame stays part of a
    /// large folio, charged to its memcg: the owner's page becomes [`NO_PAGE`], the memcg
    /// and the flags stay.
    #[inline(always)]
    pub fn zap_owner(&mut self, pfn: Pfn) {
        self.owner[pfn as usize] = owner(NO_PAGE, self.memcg(pfn));
    }
    /// The frame goes back to the allocator.
    #[inline(always)]
    pub fn release(&mut self, pfn: Pfn) {
        self.owner[pfn as usize] = owner(NO_PAGE, 0);
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
    pub const BYTES_PER_FRAME: usize = 4 + std::mem::size_of::<Owner>();
}
