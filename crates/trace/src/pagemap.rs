//! Dense remapping of foreign keys (block numbers, page frame numbers) to page ids
//! `0..n` in order of first appearance. Used by the text readers at read time so the
//! engine never hashes.

use std::collections::HashMap;
use std::hash::{BuildHasherDefault, Hasher};

/// A multiplicative hasher for `u64` keys (keys are written once as one `u64`).
#[derive(Default, Clone, Copy)]
pub struct U64Hasher(u64);

impl Hasher for U64Hasher {
    #[inline]
    fn finish(&self) -> u64 {
        self.0
    }
    #[inline]
    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.0 = (self.0.rotate_left(8) ^ b as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15);
        }
    }
    #[inline]
    fn write_u64(&mut self, k: u64) {
        // Fold the high bits down: hashbrown uses the top 7 bits as the tag.
        let h = (k ^ self.0).wrapping_mul(0x9E37_79B9_7F4A_7C15);
        self.0 = h ^ (h >> 29);
    }
}

/// Key → dense page id, assigned in order of first appearance.
#[derive(Default)]
pub struct PageMap {
    map: HashMap<u64, u32, BuildHasherDefault<U64Hasher>>,
}

impl PageMap {
    pub fn new() -> Self {
        Self::default()
    }

    /// The dense id of `key`, assigning the next id if it is new; None once more than
    /// `u32::MAX` distinct keys were seen (ids must stay below `u32::MAX`).
    #[inline]
    pub fn id(&mut self, key: u64) -> Option<u32> {
        let next = self.map.len();
        if let Some(&id) = self.map.get(&key) {
            return Some(id);
        }
        if next >= u32::MAX as usize {
            return None;
        }
        self.map.insert(key, next as u32);
        Some(next as u32)
    }

    /// Distinct keys seen (= max id + 1).
    pub fn len(&self) -> u32 {
        self.map.len() as u32
    }

    pub fn is_empty(&self) -> bool {
        self.map.is_empty()
    }
}
