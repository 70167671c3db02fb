//! The emission buffer of generators that produce accesses a chunk at a time (a
//! transaction, a scheduling quantum): the chunk, how much of it was emitted, and how
//! many records the source has emitted in all.

use crate::Access;

#[derive(Clone, Debug, Default)]
pub struct Chunk {
    /// The records of the current chunk (filled by the generator after [`Chunk::restart`]).
    pub pending: Vec<Access>,
    next: usize,
    /// Records emitted so far.
    pub emitted: u64,
}

impl Chunk {
    pub fn with_capacity(n: usize) -> Self {
        Chunk { pending: Vec::with_capacity(n), next: 0, emitted: 0 }
    }

    /// Start a new chunk: the buffer to fill.
    pub fn restart(&mut self) -> &mut Vec<Access> {
        self.pending.clear();
        self.next = 0;
        &mut self.pending
    }

    /// Every record of the current chunk has been emitted.
    pub fn is_spent(&self) -> bool {
        self.next == self.pending.len()
    }

    /// Move up to `max − buf.len()` records of the chunk into `buf`.
    pub fn drain_into(&mut self, buf: &mut Vec<Access>, max: usize) {
        let n = (max - buf.len()).min(self.pending.len() - self.next);
        buf.extend_from_slice(&self.pending[self.next..self.next + n]);
        self.next += n;
        self.emitted += n as u64;
    }

    /// Fraction of `total` records emitted (1.0 for an empty stream).
    pub fn progress(&self, total: Option<u64>) -> Option<f64> {
        let total = total.unwrap_or(0);
        Some(if total == 0 { 1.0 } else { self.emitted as f64 / total as f64 })
    }
}
