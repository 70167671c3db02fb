//! Temporary files of atomic writers: named `.<name>.tmp-<pid>-<n>` beside the target
//! `<name>` (hidden, and naming both the target and the process that writes it), renamed
//! into place on success and removed on failure. A process killed while writing (SIGKILL,
//! OOM kill, power loss) cannot remove its own: [`sweep`], run by the next writer of the
//! same target, removes those whose process is gone. Python's `reclaimlab._atomic` uses the
//! same names and the same sweep.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

static COUNTER: AtomicU64 = AtomicU64::new(0);

/// A fresh temporary path for `target` (in its directory), after sweeping stale ones.
pub fn temp_for(target: &Path) -> Option<PathBuf> {
    let name = target.file_name()?.to_string_lossy().into_owned();
    let dir = match target.parent() {
        Some(d) if !d.as_os_str().is_empty() => d.to_path_buf(),
        _ => PathBuf::from("."),
    };
    sweep(&dir, &name);
    Some(dir.join(format!(".{name}.tmp-{}-{}", std::process::id(), COUNTER.fetch_add(1, Ordering::Relaxed))))
}

/// Remove `dir/.<name>.tmp-<pid>-<n>[.<suffix>]` files whose process no longer runs (Linux: no
/// `/proc/<pid>`); returns how many. Errors are ignored: sweeping is a courtesy.
pub fn sweep(dir: &Path, name: &str) -> usize {
    if !Path::new("/proc/self").exists() {
        return 0; // no way to tell a live writer from a dead one
    }
    let prefix = format!(".{name}.tmp-");
    let Ok(entries) = std::fs::read_dir(dir) else { return 0 };
    let mut n = 0;
    for e in entries.flatten() {
        let file = e.file_name();
        let Some(rest) = file.to_str().and_then(|f| f.strip_prefix(&prefix)) else { continue };
        let Some((pid, seq)) = rest.split_once('-') else { continue };
        // Python's writers keep the target's suffix last (`-<n>.png`).
        let seq = seq.split_once('.').map_or(seq, |(n, _)| n);
        if pid.is_empty() || seq.is_empty() || !pid.bytes().chain(seq.bytes()).all(|b| b.is_ascii_digit()) {
            continue;
        }
        if !Path::new("/proc").join(pid).exists() && std::fs::remove_file(e.path()).is_ok() {
            n += 1;
        }
    }
    n
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stale_temporaries_of_dead_processes_are_swept_and_live_ones_kept() {
        let dir = std::env::temp_dir().join(format!("rl-tmp-sweep-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        // pid 2^22 + 1 is above Linux's pid_max limit: never a live process.
        let dead = dir.join(".x.trace.tmp-4194305-0");
        let live = dir.join(format!(".x.trace.tmp-{}-9", std::process::id()));
        let other = dir.join(".y.trace.tmp-4194305-0");
        let dead_py = dir.join(".x.trace.tmp-4194305-3.trace");
        let unrelated = dir.join(".x.trace.tmp-notapid");
        for p in [&dead, &live, &other, &unrelated, &dead_py] {
            std::fs::write(p, b"half").unwrap();
        }
        let t = temp_for(&dir.join("x.trace")).unwrap();
        assert!(t.file_name().unwrap().to_str().unwrap().starts_with(&format!(".x.trace.tmp-{}-", std::process::id())));
        assert!(!dead.exists() && !dead_py.exists(), "a dead writer's temporaries are swept");
        assert!(live.exists() && other.exists() && unrelated.exists());
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
