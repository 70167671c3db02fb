//! Host-side cache prefetch hint for random accesses to per-page / per-key arrays
//! (the engine's reclaim paths, the cache algorithms' request loop). A hint changes no
//! state (it only asks the host CPU to start loading a cache line), so results stay
//! bit-identical with or without it.

/// Ask the host CPU to start loading the cache line holding `slice[i]` (nothing if `i`
/// is out of range, or on targets without a prefetch instruction).
#[inline(always)]
pub fn prefetch<T>(slice: &[T], i: usize) {
    #[cfg(target_arch = "x86_64")]
    if let Some(x) = slice.get(i) {
        // SAFETY: PREFETCHT0 is a hint; it never faults or reads memory architecturally,
        // and the pointer comes from a live reference.
        unsafe { std::arch::x86_64::_mm_prefetch::<{ std::arch::x86_64::_MM_HINT_T0 }>((x as *const T).cast()) }
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = (slice, i);
}
