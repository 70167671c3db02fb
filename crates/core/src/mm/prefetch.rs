//! Host-side cache prefetch hints for the random accesses of the access loop and the
//! reclaim paths to the per-page and per-frame arrays. A hint changes no simulated state (it only asks the host CPU to
//! start loading a cache line), so results stay bit-identical with or without it.

/// Host cache line in bytes.
const LINE: usize = 64;

pub use reclaimlab_trace::prefetch::prefetch;

/// Prefetch every cache line of `slice[start..end]`.
#[inline]
pub fn prefetch_range<T>(slice: &[T], start: usize, end: usize) {
    if start >= end {
        return;
    }
    // Steps of one line's worth of elements touch every line from `start` on, whatever
    // the alignment; `end - 1` covers the last.
    let per_line = (LINE / std::mem::size_of::<T>().max(1)).max(1);
    let mut i = start;
    while i < end {
        prefetch(slice, i);
        i += per_line;
    }
    prefetch(slice, end - 1);
}

/// Accesses ahead of the current one whose PTE the access loop prefetches.
const PTE_AHEAD: usize = 16;
/// Accesses ahead whose frame flags it prefetches, or what their fault will read (their
/// PTE, fetched earlier, says which frame or swap slot; a PTE that changes meanwhile only
/// makes the hint useless).
const FLAGS_AHEAD: usize = 8;

/// The access loop's hint before replaying `batch[i]`: the PTE word of a later access,
/// and for a nearer one the folio flags (resident) or what the fault will read (evicted
/// before): a file page's shadow; a swapped page's shadow at its slot, and the word of
/// its slot's bits that the swap-in clears.
#[inline(always)]
pub fn prefetch_access(mm: &super::Mm, batch: &[reclaimlab_trace::Access], i: usize) {
    use super::page::{is_resident, is_swap_pte, pinfo, pte_info, pte_swap_slot};
    if let Some(a) = batch.get(i + PTE_AHEAD) {
        prefetch(&mm.pages.pte, a.page as usize);
    }
    if let Some(a) = batch.get(i + FLAGS_AHEAD) {
        if let Some(&pte) = mm.pages.pte.get(a.page as usize) {
            if is_resident(pte) {
                prefetch(&mm.frames.flags, pte as usize);
            } else if is_swap_pte(pte) {
                let slot = pte_swap_slot(pte);
                mm.pages.prefetch_swap_shadow(slot);
                mm.swap.prefetch_slot(slot);
            } else if pte_info(pte) & pinfo::TOUCHED != 0 {
                mm.pages.prefetch_shadow(a.page as usize);
            }
        }
    }
}
