//! An out-of-tree reclaim policy: cache_ext's MRU (its file-search policy,
//! paper_examples/mru.bpf.c) written against reclaimlab-core's cache_ext hooks
//! ([`reclaimlab_core::policy::ext::CacheExtOps`]), in a crate of its own.
//!
//! What this file owns: [`Mru`] and its registration, which is all a policy crate
//! provides: [`factory`] for `reclaimlab_core::Simulation::with_policy(&cfg, NAME,
//! factory())` (src/main.rs runs a scenario so), and the export of the `cdylib` that
//! `reclaimlab run --policy rust:PATH/libreclaimlab_policy_example.so:MRU` loads
//! (`export_cache_ext_policies!`, the C ABI of reclaimlab_core::policy::ext::abi).
//!
//! One list, a folio added or accessed goes to its head (most recent), eviction names
//! folios from the head. The list is intrusive over the folio ids (page ids, dense), so
//! no hook allocates or hashes.
use reclaimlab_core::policy::ext::{CacheExtOps, EvictionCtx, Folio, LruvecInfo, OpsFactory};

/// The name runs report.
pub const NAME: &str = "rust:reclaimlab-policy-example:MRU";

const NIL: u32 = u32::MAX;

/// MRU over an intrusive doubly linked list indexed by folio id.
#[derive(Default)]
pub struct Mru {
    prev: Vec<u32>,
    next: Vec<u32>,
    head: Option<u32>,
    tail: Option<u32>,
    len: usize,
}

impl Mru {
    fn grow(&mut self, f: Folio) {
        let n = f as usize + 1;
        if n > self.prev.len() {
            let n = n.max(2 * self.prev.len());
            self.prev.resize(n, NIL);
            self.next.resize(n, NIL);
        }
    }

    fn unlink(&mut self, f: Folio) {
        let (p, n) = (self.prev[f as usize], self.next[f as usize]);
        if p == NIL {
            self.head = (n != NIL).then_some(n)
        } else {
            self.next[p as usize] = n
        }
        if n == NIL {
            self.tail = (p != NIL).then_some(p)
        } else {
            self.prev[n as usize] = p
        }
        self.len -= 1;
    }

    fn push_head(&mut self, f: Folio) {
        self.prev[f as usize] = NIL;
        self.next[f as usize] = self.head.unwrap_or(NIL);
        match self.head {
            Some(h) => self.prev[h as usize] = f,
            None => self.tail = Some(f),
        }
        self.head = Some(f);
        self.len += 1;
    }

    /// Folios held (tests).
    pub fn len(&self) -> usize {
        self.len
    }

    pub fn is_empty(&self) -> bool {
        self.len == 0
    }
}

impl CacheExtOps for Mru {
    fn evict_folios(&mut self, ctx: &mut EvictionCtx) -> Result<(), String> {
        let mut f = self.head.unwrap_or(NIL);
        while f != NIL && ctx.folios_to_evict.len() < ctx.request_nr_folios_to_evict {
            ctx.folios_to_evict.push(f);
            f = self.next[f as usize];
        }
        Ok(())
    }

    fn folio_added(&mut self, f: Folio) {
        self.grow(f);
        self.push_head(f);
    }

    fn folio_accessed(&mut self, f: Folio) {
        self.unlink(f);
        self.push_head(f);
    }

    fn folio_removed(&mut self, f: Folio) {
        self.unlink(f);
    }
}

/// The registration: a fresh [`Mru`] for every lruvec.
pub fn factory() -> OpsFactory {
    Box::new(|_: &LruvecInfo| Ok(Box::new(Mru::default()) as Box<dyn CacheExtOps>))
}

reclaimlab_core::export_cache_ext_policies! {
    "MRU" => |_lruvec| Ok(Box::new(Mru::default())),
}
