//! Memory that the input decides: the process-wide limit and fallible allocation.
//!
//! Every allocation whose size comes from an input file (a trace header's page count, its
//! record count, the pages a cache simulation keeps state for) goes through [`reserve`] or
//! [`probe`]: the size is checked against the limit set by `RECLAIMLAB_MAX_MEMORY` (the
//! CLI's `--max-memory` sets it), then allocated with `try_reserve_exact`, so a size the
//! host cannot give is an error naming the size, never an abort. The limit applies to
//! each such request on its own (the largest single structure an input can make the
//! program build), not to the process's resident size. Large arrays read at random ask
//! the host for transparent huge pages ([`huge_pages`]).

use std::fmt::Write as _;

/// The environment variable holding the limit (a size as [`parse_size`] reads it).
pub const ENV: &str = "RECLAIMLAB_MAX_MEMORY";

/// Parse a size as the kernel's `memparse` does (binary K/M/G/T suffixes, optional
/// `iB`/`B`), plus `max` for "no limit".
pub fn parse_size(v: &str) -> std::result::Result<u64, String> {
    let s = v.trim();
    if s == "max" {
        return Ok(u64::MAX);
    }
    let lower = s.to_ascii_lowercase();
    let t = lower.trim_end_matches("ib").trim_end_matches('b');
    let (num, shift) = match t.chars().last() {
        Some('k') => (&t[..t.len() - 1], 10),
        Some('m') => (&t[..t.len() - 1], 20),
        Some('g') => (&t[..t.len() - 1], 30),
        Some('t') => (&t[..t.len() - 1], 40),
        _ => (t, 0),
    };
    let bad = || format!("expected a size like 512M, 4G or a byte count, got '{s}'");
    if num.contains('.') {
        let x: f64 = num.parse().map_err(|_| bad())?;
        if !x.is_finite() || x < 0.0 {
            return Err(bad());
        }
        return Ok((x * (1u64 << shift) as f64) as u64);
    }
    let n: u64 = num.trim().parse().map_err(|_| bad())?;
    n.checked_mul(1u64 << shift).ok_or_else(bad)
}

/// Format bytes the way `parse_size` reads them back.
pub fn format_size(b: u64) -> String {
    if b == u64::MAX {
        return "max".into();
    }
    for (shift, suf) in [(40, "T"), (30, "G"), (20, "M"), (10, "K")] {
        if b >= 1 << shift && b & ((1 << shift) - 1) == 0 {
            return format!("{}{}", b >> shift, suf);
        }
    }
    b.to_string()
}

/// Bytes for a person: `1.5 GiB`, `300.0 MiB`, `12 bytes`.
pub fn human(b: u64) -> String {
    let mut s = String::new();
    let (v, unit) = match b {
        b if b >= 1 << 40 => (b as f64 / (1u64 << 40) as f64, "TiB"),
        b if b >= 1 << 30 => (b as f64 / (1u64 << 30) as f64, "GiB"),
        b if b >= 1 << 20 => (b as f64 / (1u64 << 20) as f64, "MiB"),
        b if b >= 1 << 10 => (b as f64 / (1u64 << 10) as f64, "KiB"),
        b => return format!("{b} bytes"),
    };
    let _ = write!(s, "{v:.1} {unit}");
    s
}

/// The limit in force: `RECLAIMLAB_MAX_MEMORY` read now (unset, empty or `max`: none).
pub fn max_memory() -> Result<Option<u64>, String> {
    match std::env::var(ENV) {
        Ok(v) if !v.trim().is_empty() => match parse_size(&v) {
            Ok(u64::MAX) => Ok(None),
            Ok(b) => Ok(Some(b)),
            Err(e) => Err(format!("{ENV}: {e}")),
        },
        _ => Ok(None),
    }
}

/// Check `bytes` for `what` (e.g. "the trace's 4000000000 page ids") against the limit.
pub fn check(bytes: u64, what: &dyn Fn() -> String) -> Result<(), String> {
    match max_memory()? {
        Some(limit) if bytes > limit => Err(format!("{} would take {}, over the memory limit of {} (--max-memory / {ENV})", what(), human(bytes), human(limit))),
        _ => Ok(()),
    }
}

/// The error for `bytes` the host refused.
pub fn cannot(bytes: u64, what: &dyn Fn() -> String) -> String {
    format!("{} would take {}, which this host cannot allocate", what(), human(bytes))
}

/// Grow `v` by `additional` elements' capacity, exactly, within the limit: the error names
/// `what` and the bytes asked (the vector's whole size once grown).
pub fn reserve<T>(v: &mut Vec<T>, additional: usize, what: &dyn Fn() -> String) -> Result<(), String> {
    let elem = std::mem::size_of::<T>().max(1) as u64;
    let bytes = (v.len() as u64).saturating_add(additional as u64).saturating_mul(elem);
    check(bytes, what)?;
    v.try_reserve_exact(additional).map_err(|_| cannot(bytes, what))
}

/// A vector of `n` copies of `fill`, allocated fallibly within the limit.
pub fn vec_of<T: Clone>(n: usize, fill: T, what: &dyn Fn() -> String) -> Result<Vec<T>, String> {
    let mut v = Vec::new();
    reserve(&mut v, n, what)?;
    v.resize(n, fill);
    Ok(v)
}

/// Check that `bytes` (the estimate of a structure built with ordinary allocations, such
/// as a cache algorithm's per-page arrays) fit the limit and that the host can allocate
/// them now; the memory is given back at once.
pub fn probe(bytes: u64, what: &dyn Fn() -> String) -> Result<(), String> {
    check(bytes, what)?;
    let n = usize::try_from(bytes).map_err(|_| cannot(bytes, what))?;
    let mut v: Vec<u8> = Vec::new();
    v.try_reserve_exact(n).map_err(|_| cannot(bytes, what))?;
    // Keep the optimiser from eliding an allocation nothing reads.
    std::hint::black_box(&mut v);
    Ok(())
}

/// Ask for transparent huge pages under `v`'s allocation, if it is large (a hint, before
/// the memory is first touched; nothing where THP is off or on other targets). An 80 MB
/// key vector is otherwise 20 K page faults on first write, and a 4 MiB lookup table
/// 1 K TLB entries: on a VM each fault and TLB miss costs more than the work done per
/// request. The advice covers the pages the allocation lies in, from the first to the
/// last: a large allocation is a mapping of its own (glibc's `mmap`ped chunk, header
/// included), and advice on part of it would split it in three, after which growing the
/// vector cannot `mremap` it and copies it whole instead.
pub fn huge_pages<T>(v: &mut Vec<T>) {
    #[cfg(all(target_os = "linux", any(target_arch = "x86_64", target_arch = "aarch64")))]
    {
        extern "C" {
            fn madvise(addr: *mut std::ffi::c_void, len: usize, advice: std::ffi::c_int) -> std::ffi::c_int;
        }
        const MADV_HUGEPAGE: std::ffi::c_int = 14;
        const HUGE: usize = 2 << 20;
        let start = v.as_mut_ptr() as usize;
        let end = start + v.capacity() * std::mem::size_of::<T>();
        let (a, b) = (start & !4095, end.next_multiple_of(4096));
        if b >= a + 2 * HUGE {
            // SAFETY: the range is the pages v's allocation lies in (mapped: they hold
            // it); MADV_HUGEPAGE changes how pages are backed, never their contents, and
            // fails harmlessly.
            unsafe { madvise(a as *mut std::ffi::c_void, b - a, MADV_HUGEPAGE) };
        }
    }
    #[cfg(not(all(target_os = "linux", any(target_arch = "x86_64", target_arch = "aarch64"))))]
    let _ = v;
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_round_trip_and_read_like_memparse() {
        assert_eq!(parse_size("512M").unwrap(), 512 << 20);
        assert_eq!(parse_size("1.5G").unwrap(), 3 << 29);
        assert_eq!(parse_size("max").unwrap(), u64::MAX);
        assert!(parse_size("lots").is_err());
        assert_eq!(format_size(4 << 30), "4G");
        assert_eq!(human(3 << 29), "1.5 GiB");
        assert_eq!(human(12), "12 bytes");
    }

    /// The advice covers the whole mapping a large vector lies in (one VMA, `hg` in its
    /// VmFlags): advising only the whole pages inside it split it in three, and the
    /// vector's next growth copied it instead of `mremap`ping it (a 256 GiB machine's
    /// build went from 0.5 ms to 0.35 s).
    #[cfg(all(target_os = "linux", any(target_arch = "x86_64", target_arch = "aarch64")))]
    #[test]
    fn huge_pages_advises_the_whole_mapping_of_a_large_vector() {
        if !std::path::Path::new("/sys/kernel/mm/transparent_hugepage/enabled").exists() {
            return; // a kernel without THP refuses the advice
        }
        let mut v = vec![0u32; 4 << 20]; // 16 MiB: a mapping of its own
        huge_pages(&mut v);
        let (start, end) = (v.as_ptr() as usize, v.as_ptr() as usize + v.capacity() * 4);
        let smaps = std::fs::read_to_string("/proc/self/smaps").unwrap();
        let mut vma = None;
        for line in smaps.lines() {
            if let Some((range, _)) = line.split_once(' ').filter(|(r, _)| r.contains('-') && !r.ends_with(':')) {
                let (a, b) = range.split_once('-').unwrap();
                let (a, b) = (usize::from_str_radix(a, 16).unwrap(), usize::from_str_radix(b, 16).unwrap());
                vma = (a <= start && start < b).then_some((a, b));
            } else if let (Some((a, b)), Some(flags)) = (vma, line.strip_prefix("VmFlags:")) {
                assert!(a <= start && end <= b, "the vector's mapping {a:#x}-{b:#x} does not hold it whole ({start:#x}-{end:#x})");
                assert!(flags.split_whitespace().any(|f| f == "hg"), "not advised: {flags}");
                return;
            }
        }
        panic!("no mapping holds the vector at {start:#x}");
    }

    #[test]
    fn an_impossible_size_is_an_error_not_an_abort() {
        // 2^62 bytes: no host has them (try_reserve fails; vec! would abort).
        let e = probe(1 << 62, &|| "the test's arrays".into()).unwrap_err();
        assert!(e.starts_with("the test's arrays would take 4194304.0 TiB, which this host cannot allocate"), "{e}");
        let mut v: Vec<u64> = Vec::new();
        assert!(reserve(&mut v, 1 << 60, &|| "x".into()).is_err());
        assert_eq!(vec_of(3, 7u8, &|| "x".into()).unwrap(), vec![7, 7, 7]);
    }
}
