//! Shared test helpers: scratch directories, the data directory, reading whole sources.
#![allow(dead_code)]

use std::path::PathBuf;
use std::sync::atomic::{AtomicU64, Ordering};

use reclaimlab_trace::{Access, AccessSource};

static N: AtomicU64 = AtomicU64::new(0);

/// A fresh, empty scratch directory (removed on drop).
pub struct Scratch(pub PathBuf);

impl Scratch {
    pub fn new(tag: &str) -> Scratch {
        let d = std::env::temp_dir().join(format!("reclaimlab-trace-test-{}-{}-{}", std::process::id(), tag, N.fetch_add(1, Ordering::Relaxed)));
        let _ = std::fs::remove_dir_all(&d);
        std::fs::create_dir_all(&d).unwrap();
        Scratch(d)
    }
    pub fn path(&self, name: &str) -> PathBuf {
        self.0.join(name)
    }
    pub fn files(&self) -> Vec<String> {
        let mut v: Vec<String> = std::fs::read_dir(&self.0).unwrap().map(|e| e.unwrap().file_name().to_string_lossy().into_owned()).collect();
        v.sort();
        v
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

pub fn data_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../data/traces")
}

/// Read a whole source in odd-sized batches.
pub fn read_all(src: &mut dyn AccessSource) -> reclaimlab_trace::Result<Vec<Access>> {
    let mut all = Vec::new();
    let mut buf = Vec::new();
    while src.read_batch(&mut buf, 7919)? > 0 {
        all.extend_from_slice(&buf);
    }
    Ok(all)
}

/// Write a gzip file.
pub fn write_gz(path: &std::path::Path, text: &str) {
    use std::io::Write;
    let f = std::fs::File::create(path).unwrap();
    let mut e = flate2::write::GzEncoder::new(f, flate2::Compression::fast());
    e.write_all(text.as_bytes()).unwrap();
    e.finish().unwrap();
}
