//! The algorithms, one per file, each as libCacheSim defines it (see `docs/cachesim.md`),
//! and [`TABLE`], the one list of them: name and spellings, how to build and run each,
//! its minimum size, whether it needs the whole trace, libCacheSim's name for it and its
//! form as a reclaim policy (`cache:<name>`). Parsing, building, the simulated kernel's
//! `cache:*` policy rows, the CLI's choices and the agreement tests' name map all read
//! it: adding an algorithm is its file plus one row here.

pub mod arc;
pub mod belady;
pub mod belady_paper;
pub mod car;
pub mod clock;
pub mod clockpro;
pub mod fifo;
pub mod lfu;
pub mod lirs;
pub mod lirs_paper;
pub mod lru;
pub mod s3fifo;
pub mod sieve;
pub mod slru;
pub mod slru_paper;
pub mod twoq;

use crate::evict::Evict;
use crate::{run, Cache, Error, Stats};

/// A constructor of one cache fed request by request: `(size, nr_keys)`.
pub type Build = fn(size: usize, nr_keys: usize) -> Box<dyn Cache>;

/// One algorithm (a row of [`TABLE`]).
pub struct AlgoEntry {
    /// Its name, lower case: `cachesim --algo NAME`, `cache:NAME`.
    pub name: &'static str,
    /// Other spellings [`parse`] accepts (compared, like the name, in lower case without
    /// '-' and '_'; so libCacheSim's `Clock`, `Sieve`, `S3FIFO`, `s3-fifo` are the name).
    pub aliases: &'static [&'static str],
    /// The smallest cache its definition accepts (the CLOCK-Pro and LIRS authors'
    /// simulators refuse smaller ones; below it nothing would be cached); 0: any.
    pub min_size: usize,
    /// Run keys `< nr_keys` through it with `size` objects (the loop monomorphised).
    pub simulate: fn(size: usize, keys: &[u32], nr_keys: u32) -> Stats,
    /// One cache fed request by request; `None` for an offline algorithm, which needs the
    /// whole trace up front (next-access times).
    pub online: Option<Build>,
    /// The class of libCacheSim's Python package with the same definition (miss counts
    /// agree exactly: python/tests/test_cachesim.py), if there is one.
    pub libcachesim: Option<&'static str>,
    /// The algorithm this one is a variant of (a paper's form of a libCacheSim one).
    pub variant_of: Option<&'static str>,
    /// Its form as a reclaim policy of the simulated kernel, if it can evict on demand.
    pub reclaim: Option<Reclaim>,
}

/// An algorithm as the reclaim policy `cache:<name>` (crates/core's policy registry
/// makes one row of each).
pub struct Reclaim {
    /// Build it for eviction on demand ([`crate::evict`]) with a capacity no resident set
    /// reaches, for keys `< nr_keys`.
    pub evict: fn(cap: usize, nr_keys: usize) -> Box<dyn Evict>,
    /// Whose definition it follows, if not only this crate's (`libCacheSim's definition`).
    pub source: &'static str,
    /// What it does, in folios (`reclaimlab policies`).
    pub description: &'static str,
    /// Its place among the `cache:*` rows of `reclaimlab policies` (the order they were
    /// added in, kept so that listing stays as it was; a new row takes the next number).
    pub listed: u8,
}

/// `simulate` of a type built by `new(size, nr_keys)`.
macro_rules! simulate {
    ($t:ty) => {
        |size, keys, nr_keys| run(&mut <$t>::new(size, nr_keys as usize), keys)
    };
}

/// A boxed constructor (`online`, `Reclaim::evict`) from `new` or another `(cap, nr_keys)` function.
macro_rules! boxed {
    ($t:ty) => {
        boxed!($t, new)
    };
    ($t:ty, $new:ident) => {
        |cap, nr_keys| Box::new(<$t>::$new(cap, nr_keys))
    };
}

/// The definition tag most rows carry.
const LIBCACHESIM: &str = "libCacheSim's definition";

/// Every algorithm, in the order `cachesim --algo all` runs them.
pub static TABLE: &[AlgoEntry] = &[
    AlgoEntry {
        name: "lru",
        aliases: &[],
        min_size: 0,
        simulate: simulate!(lru::Lru),
        online: Some(boxed!(lru::Lru)),
        libcachesim: Some("LRU"),
        variant_of: None,
        reclaim: Some(Reclaim {
            evict: boxed!(lru::Lru),
            source: LIBCACHESIM,
            description: "LRU: the least recently used folio goes; a reference seen at scan time moves it to the MRU end",
            listed: 0,
        }),
    },
    AlgoEntry {
        name: "fifo",
        aliases: &[],
        min_size: 0,
        simulate: simulate!(fifo::Fifo),
        online: Some(boxed!(fifo::Fifo)),
        libcachesim: Some("FIFO"),
        variant_of: None,
        reclaim: Some(Reclaim {
            evict: boxed!(fifo::Fifo),
            source: LIBCACHESIM,
            description: "FIFO: the oldest folio goes, references ignored",
            listed: 1,
        }),
    },
    AlgoEntry {
        name: "clock",
        aliases: &[],
        min_size: 0,
        simulate: simulate!(clock::Clock),
        online: Some(boxed!(clock::Clock)),
        libcachesim: Some("Clock"),
        variant_of: None,
        reclaim: Some(Reclaim {
            evict: boxed!(clock::Clock),
            source: LIBCACHESIM,
            description: "CLOCK: second chance on the folio's reference bit (the accessed bit or a read()/write())",
            listed: 2,
        }),
    },
    AlgoEntry {
        name: "sieve",
        aliases: &[],
        min_size: 0,
        simulate: simulate!(sieve::Sieve),
        online: Some(boxed!(sieve::Sieve)),
        libcachesim: Some("Sieve"),
        variant_of: None,
        reclaim: Some(Reclaim {
            evict: boxed!(sieve::Sieve),
            source: "",
            description: "SIEVE (Zhang et al., NSDI'24): a FIFO whose hand skips (and clears) visited folios, new folios at the head",
            listed: 5,
        }),
    },
    AlgoEntry {
        name: "s3fifo",
        aliases: &[],
        min_size: 0,
        simulate: simulate!(s3fifo::S3Fifo),
        online: Some(boxed!(s3fifo::S3Fifo)),
        libcachesim: Some("S3FIFO"),
        variant_of: None,
        reclaim: Some(Reclaim {
            evict: boxed!(s3fifo::S3Fifo),
            source: LIBCACHESIM,
            description: "S3-FIFO (Yang et al., SOSP'23): small and main FIFO queues and a ghost queue",
            listed: 4,
        }),
    },
    AlgoEntry {
        name: "arc",
        aliases: &[],
        min_size: 0,
        simulate: simulate!(arc::Arc),
        online: Some(boxed!(arc::Arc)),
        libcachesim: Some("ARC"),
        variant_of: None,
        reclaim: Some(Reclaim {
            evict: boxed!(arc::Arc),
            source: LIBCACHESIM,
            description: "ARC (Megiddo & Modha, FAST'03): adaptive recency/frequency lists T1/T2 with ghost lists B1/B2",
            listed: 3,
        }),
    },
    AlgoEntry {
        name: "belady",
        aliases: &["opt", "min"],
        min_size: 0,
        simulate: |size, keys, nr_keys| run(&mut belady::Belady::new(size, keys, nr_keys), keys),
        online: None,
        libcachesim: Some("Belady"),
        variant_of: None,
        reclaim: None,
    },
    AlgoEntry {
        name: "lirs",
        aliases: &[],
        min_size: 0,
        simulate: simulate!(lirs::Lirs),
        online: Some(boxed!(lirs::Lirs)),
        libcachesim: Some("LIRS"),
        variant_of: None,
        reclaim: Some(Reclaim {
            evict: boxed!(lirs::Lirs, on_demand),
            source: LIBCACHESIM,
            description: "LIRS (Jiang & Zhang, SIGMETRICS'02): LIR blocks (99% of the folios resident at each eviction) by inter-reference recency, resident HIR blocks in Q are evicted",
            listed: 8,
        }),
    },
    AlgoEntry {
        name: "slru",
        aliases: &[],
        min_size: 0,
        simulate: simulate!(slru::Slru),
        online: Some(boxed!(slru::Slru)),
        libcachesim: Some("SLRU"),
        variant_of: None,
        reclaim: Some(Reclaim {
            evict: boxed!(slru::SlruOnDemand),
            source: LIBCACHESIM,
            description: "SLRU, four LRU segments (each a quarter of the folios resident at each eviction), a hit promotes one segment",
            listed: 10,
        }),
    },
    AlgoEntry {
        name: "2q",
        aliases: &["twoq"],
        min_size: 0,
        simulate: simulate!(twoq::TwoQ),
        online: Some(boxed!(twoq::TwoQ)),
        libcachesim: Some("TwoQ"),
        variant_of: None,
        reclaim: Some(Reclaim {
            evict: boxed!(twoq::TwoQ, on_demand),
            source: LIBCACHESIM,
            description: "2Q (Johnson & Shasha, VLDB'94): FIFO A1in (25% of the folios resident at each eviction), ghost A1out, LRU Am for folios refaulting from A1out",
            listed: 9,
        }),
    },
    AlgoEntry {
        name: "lfu",
        aliases: &[],
        min_size: 0,
        simulate: simulate!(lfu::Lfu),
        online: Some(boxed!(lfu::Lfu)),
        libcachesim: Some("LFU"),
        variant_of: None,
        reclaim: Some(Reclaim {
            evict: boxed!(lfu::Lfu),
            source: "",
            description: "LFU, the least frequently used folio goes (ties: first to reach that frequency), frequencies forgotten on eviction",
            listed: 7,
        }),
    },
    AlgoEntry {
        name: "car",
        aliases: &[],
        min_size: 0,
        simulate: simulate!(car::Car),
        online: Some(boxed!(car::Car)),
        libcachesim: None,
        variant_of: None,
        reclaim: Some(Reclaim {
            evict: boxed!(car::Car),
            source: "",
            description: "CAR (Bansal & Modha, FAST'04): ARC's adaptation over two clocks with reference bits",
            listed: 6,
        }),
    },
    AlgoEntry {
        name: "clockpro",
        aliases: &[],
        min_size: clockpro::ClockPro::MIN_SIZE,
        simulate: simulate!(clockpro::ClockPro),
        online: Some(boxed!(clockpro::ClockPro)),
        libcachesim: None,
        variant_of: None,
        reclaim: Some(Reclaim {
            evict: boxed!(clockpro::ClockProOnDemand),
            source: "the authors' simulator",
            description: "CLOCK-Pro (Jiang, Chen & Zhang, USENIX ATC'05): hot and cold pages on one clock, non-resident cold pages in their test period, 5% cold allocation of the folios resident at each eviction",
            listed: 11,
        }),
    },
    AlgoEntry {
        name: "lirs-paper",
        aliases: &[],
        min_size: lirs_paper::LirsPaper::MIN_SIZE,
        simulate: simulate!(lirs_paper::LirsPaper),
        online: Some(boxed!(lirs_paper::LirsPaper)),
        libcachesim: None,
        variant_of: Some("lirs"),
        reclaim: None,
    },
    AlgoEntry {
        name: "s3fifo-paper",
        aliases: &["s3fifo-v0"],
        min_size: 0,
        simulate: simulate!(s3fifo::S3FifoPaper),
        online: Some(boxed!(s3fifo::S3FifoPaper)),
        libcachesim: None,
        variant_of: Some("s3fifo"),
        reclaim: Some(Reclaim {
            evict: boxed!(s3fifo::S3FifoPaper),
            source: "libCacheSim's S3FIFOv0",
            description: "S3-FIFO as in the paper, every new folio into the small queue",
            listed: 12,
        }),
    },
    AlgoEntry {
        name: "slru-paper",
        aliases: &[],
        min_size: 0,
        simulate: simulate!(slru_paper::SlruPaper),
        online: Some(boxed!(slru_paper::SlruPaper)),
        libcachesim: None,
        variant_of: Some("slru"),
        reclaim: None,
    },
    AlgoEntry {
        name: "belady-paper",
        aliases: &["opt-paper", "min-paper"],
        min_size: 0,
        simulate: |size, keys, nr_keys| run(&mut belady_paper::BeladyPaper::new(size, keys, nr_keys), keys),
        online: None,
        libcachesim: None,
        variant_of: Some("belady"),
        reclaim: None,
    },
    AlgoEntry {
        name: "clockpro-paper",
        aliases: &[],
        min_size: clockpro::ClockPro::MIN_SIZE,
        simulate: simulate!(clockpro::ClockProPaper),
        online: Some(boxed!(clockpro::ClockProPaper)),
        libcachesim: None,
        variant_of: Some("clockpro"),
        reclaim: None,
    },
];

/// An algorithm: a row of [`TABLE`].
pub type Algo = &'static AlgoEntry;

/// A name as [`parse`] compares it: lower case, without '-' and '_'.
fn fold(name: &str) -> String {
    name.to_ascii_lowercase().replace(['-', '_'], "")
}

/// The row named `name` or one of its aliases (see [`AlgoEntry::aliases`]).
pub fn parse(name: &str) -> Result<Algo, Error> {
    let want = fold(name);
    TABLE
        .iter()
        .find(|a| fold(a.name) == want || a.aliases.iter().any(|&s| fold(s) == want))
        .ok_or_else(|| Error(format!("unknown cache algorithm {name:?}; known: {}", names().collect::<Vec<_>>().join(", "))))
}

/// The names, in [`TABLE`]'s order.
pub fn names() -> impl Iterator<Item = &'static str> {
    TABLE.iter().map(|a| a.name)
}

impl AlgoEntry {
    /// Needs the whole trace up front (next-access times).
    pub fn offline(&self) -> bool {
        self.online.is_none()
    }
    /// An upper bound of the bytes one run keeps for `nr_keys` ids, `size` objects and
    /// `requests` requests: 32 bytes per id (the largest per-id state is LIRS's record: three
    /// link pairs and a state byte, aligned to 32), 8 per cached object (rings, slots) and, offline,
    /// 16 per request and 8 per id (next-access times). What `cachesim` checks against
    /// `--max-memory` and the host before it starts a run.
    pub fn memory_estimate(&self, size: usize, nr_keys: u32, requests: usize) -> u64 {
        let ids = nr_keys as u64;
        let objects = (size as u64).min(ids);
        let offline = if self.offline() { requests as u64 * 16 + ids * 8 + objects * 16 } else { 0 };
        ids * 32 + objects * 8 + offline
    }
    /// Build it as a cache fed request by request (an offline one needs the trace: use
    /// [`belady::Belady::new`] or [`AlgoEntry::simulate`]).
    pub fn build(&self, size: usize, nr_keys: u32) -> Box<dyn Cache> {
        match self.online {
            Some(new) => new(size, nr_keys as usize),
            None => panic!("{} is offline: use belady::Belady::new(size, keys, nr_keys)", self.name),
        }
    }
    /// Build it for eviction on demand, or `None` if it cannot (see [`crate::evict`]).
    pub fn build_evict(&self, cap: usize, nr_keys: usize) -> Option<Box<dyn Evict>> {
        self.reclaim.as_ref().map(|r| (r.evict)(cap, nr_keys))
    }
}

impl PartialEq for AlgoEntry {
    fn eq(&self, other: &Self) -> bool {
        self.name == other.name
    }
}
impl Eq for AlgoEntry {}

impl std::fmt::Debug for AlgoEntry {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Algo({})", self.name)
    }
}

/// Build an online algorithm (see [`AlgoEntry::build`]).
pub fn build(algo: Algo, size: usize, nr_keys: u32) -> Box<dyn Cache> {
    algo.build(size, nr_keys)
}

/// Run `keys` through `algo` with `size` objects; the loop is monomorphised per algorithm.
pub fn simulate(algo: Algo, size: usize, keys: &[u32], nr_keys: u32) -> Stats {
    (algo.simulate)(size, keys, nr_keys)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_and_aliases_are_unique_after_folding() {
        let mut seen = std::collections::HashSet::new();
        for a in TABLE {
            for s in std::iter::once(a.name).chain(a.aliases.iter().copied()) {
                assert!(seen.insert(fold(s)), "{s} names two algorithms");
            }
            assert_eq!(a.name, a.name.to_ascii_lowercase());
        }
    }

    #[test]
    fn policy_rows_are_numbered_in_sequence_and_variants_name_a_row() {
        let mut listed: Vec<u8> = TABLE.iter().filter_map(|a| a.reclaim.as_ref().map(|r| r.listed)).collect();
        listed.sort_unstable();
        assert_eq!(listed, (0..listed.len() as u8).collect::<Vec<_>>());
        for a in TABLE {
            if let Some(v) = a.variant_of {
                assert!(parse(v).is_ok(), "{} is a variant of unknown {v}", a.name);
            }
        }
    }

    #[test]
    fn each_built_cache_names_its_row() {
        for a in TABLE {
            let c: Box<dyn Cache> = match a.online {
                Some(_) => a.build(16, 4),
                None => continue,
            };
            assert_eq!(c.name(), a.name);
            if let Some(e) = a.build_evict(16, 4) {
                assert_eq!(e.name(), a.name);
            }
        }
    }
}
