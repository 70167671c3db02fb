//! What the engine benches share: the plain-LRU peer (an array-based doubly-linked-list
//! LRU page cache, no Linux policy — what a generic cache simulator pays per access) and
//! the host memory readings.

use reclaimlab_trace::AccessSource;
use std::time::Instant;

pub const BATCH: usize = 1 << 16;

/// A plain LRU page cache of `frames` entries over `src`: (accesses/s, miss share) of the
/// records after the first `warm` (replayed, untimed, uncounted).
pub fn lru_rate(src: &mut dyn AccessSource, frames: u32, warm: u64) -> (f64, f64) {
    let nr_pages = src.meta().nr_pages.unwrap() as usize;
    const NIL: u32 = u32::MAX;
    let mut slot = vec![NIL; nr_pages];
    let (mut prev, mut next, mut owner) = (vec![NIL; frames as usize + 1], vec![NIL; frames as usize + 1], vec![NIL; frames as usize]);
    let head = frames as usize; // sentinel
    prev[head] = head as u32;
    next[head] = head as u32;
    let mut used = 0u32;
    let (mut n, mut misses) = (0u64, 0u64);
    let mut buf = Vec::with_capacity(BATCH);
    let mut t = Instant::now();
    let mut seen = 0u64;
    loop {
        // Stop a batch at the end of the warm-up, so the timed part starts exactly there.
        let max = if seen < warm { BATCH.min((warm - seen) as usize) } else { BATCH };
        let k = src.read_batch(&mut buf, max).unwrap();
        if k == 0 {
            break;
        }
        let timed = seen >= warm;
        seen += k as u64;
        for a in &buf[..k] {
            let s = slot[a.page as usize];
            let f = if s != NIL {
                let (p, nx) = (prev[s as usize], next[s as usize]);
                next[p as usize] = nx;
                prev[nx as usize] = p;
                s
            } else {
                misses += timed as u64;
                let f = if used < frames {
                    used += 1;
                    used - 1
                } else {
                    let v = prev[head];
                    let (p, nx) = (prev[v as usize], next[v as usize]);
                    next[p as usize] = nx;
                    prev[nx as usize] = p;
                    slot[owner[v as usize] as usize] = NIL;
                    v
                };
                owner[f as usize] = a.page;
                slot[a.page as usize] = f;
                f
            };
            let first = next[head];
            prev[f as usize] = head as u32;
            next[f as usize] = first;
            prev[first as usize] = f;
            next[head] = f;
        }
        if timed {
            n += k as u64;
        } else if seen == warm {
            t = Instant::now();
        }
    }
    (n as f64 / t.elapsed().as_secs_f64(), misses as f64 / n as f64)
}

/// A field of /proc/self/status in bytes (`VmRSS`, `VmHWM`: the peak).
pub fn proc_status_bytes(field: &str) -> u64 {
    let s = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    s.lines().find(|l| l.starts_with(field) && l[field.len()..].starts_with(':')).and_then(|l| l.split_whitespace().nth(1)).and_then(|kb| kb.parse::<u64>().ok()).unwrap_or(0)
        * 1024
}
