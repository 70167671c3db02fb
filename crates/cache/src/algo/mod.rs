//! The algorithms, one per file, each as libCacheSim defines it (see `docs/cachesim.md`).

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

use crate::{run, Cache, Error, Stats};

/// Algorithm names accepted by [`Algo::parse`] / [`build`] (lower case; the
/// libCacheSim spellings `Clock`, `Sieve`, `S3FIFO`, `s3-fifo`, `OPT`, `TwoQ` are accepted too).
pub const ALGOS: [&str; 18] = [
    "lru",
    "fifo",
    "clock",
    "sieve",
    "s3fifo",
    "arc",
    "belady",
    "lirs",
    "slru",
    "2q",
    "lfu",
    "car",
    "clockpro",
    "lirs-paper",
    "s3fifo-paper",
    "slru-paper",
    "belady-paper",
    "clockpro-paper",
];

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Algo {
    Lru,
    Fifo,
    Clock,
    Sieve,
    S3Fifo,
    Arc,
    Belady,
    Lirs,
    Slru,
    TwoQ,
    Lfu,
    Car,
    ClockPro,
    LirsPaper,
    S3FifoPaper,
    SlruPaper,
    BeladyPaper,
    ClockProPaper,
}

impl Algo {
    pub fn parse(name: &str) -> Result<Algo, Error> {
        Ok(
            match name.to_ascii_lowercase().replace(['-', '_'], "").as_str() {
                "lru" => Algo::Lru,
                "fifo" => Algo::Fifo,
                "clock" => Algo::Clock,
                "sieve" => Algo::Sieve,
                "s3fifo" => Algo::S3Fifo,
                "arc" => Algo::Arc,
                "belady" | "opt" | "min" => Algo::Belady,
                "lirs" => Algo::Lirs,
                "slru" => Algo::Slru,
                "2q" | "twoq" => Algo::TwoQ,
                "lfu" => Algo::Lfu,
                "car" => Algo::Car,
                "clockpro" => Algo::ClockPro,
                "clockpropaper" => Algo::ClockProPaper,
                "lirspaper" => Algo::LirsPaper,
                "s3fifopaper" | "s3fifov0" => Algo::S3FifoPaper,
                "slrupaper" => Algo::SlruPaper,
                "beladypaper" | "optpaper" | "minpaper" => Algo::BeladyPaper,
                _ => {
                    return Err(Error(format!(
                        "unknown cache algorithm {name:?}; known: {}",
                        ALGOS.join(", ")
                    )))
                }
            },
        )
    }
    pub fn name(self) -> &'static str {
        ALGOS[self as usize]
    }
    /// The smallest cache the algorithm's definition accepts (the CLOCK-Pro and LIRS
    /// authors' simulators refuse smaller ones; below it nothing would be cached).
    pub fn min_size(self) -> usize {
        match self {
            Algo::ClockPro | Algo::ClockProPaper => clockpro::ClockPro::MIN_SIZE,
            Algo::LirsPaper => lirs_paper::LirsPaper::MIN_SIZE,
            _ => 0,
        }
    }
    /// An upper bound of the bytes one run keeps for `nr_keys` ids, `size` objects and
    /// `requests` requests: 32 bytes per id (the largest per-id state is LIRS's three
    /// link pairs and a state byte, 25), 8 per cached object (rings, slots) and, offline,
    /// 16 per request and 8 per id (next-access times). What `cachesim` checks against
    /// `--max-memory` and the host before it starts a run.
    pub fn memory_estimate(self, size: usize, nr_keys: u32, requests: usize) -> u64 {
        let ids = nr_keys as u64;
        let objects = (size as u64).min(ids);
        let offline = if self.offline() { requests as u64 * 16 + ids * 8 + objects * 16 } else { 0 };
        ids * 32 + objects * 8 + offline
    }
    /// Needs the whole trace up front (next-access times).
    pub fn offline(self) -> bool {
        matches!(self, Algo::Belady | Algo::BeladyPaper)
    }
}

/// Build an online algorithm (Belady needs the trace: use [`belady::Belady::new`]).
pub fn build(algo: Algo, size: usize, nr_keys: u32) -> Box<dyn Cache> {
    let n = nr_keys as usize;
    match algo {
        Algo::Lru => Box::new(lru::Lru::new(size, n)),
        Algo::Fifo => Box::new(fifo::Fifo::new(size, n)),
        Algo::Clock => Box::new(clock::Clock::new(size, n)),
        Algo::Sieve => Box::new(sieve::Sieve::new(size, n)),
        Algo::S3Fifo => Box::new(s3fifo::S3Fifo::new(size, n)),
        Algo::Arc => Box::new(arc::Arc::new(size, n)),
        Algo::Lirs => Box::new(lirs::Lirs::new(size, n)),
        Algo::Slru => Box::new(slru::Slru::new(size, n)),
        Algo::TwoQ => Box::new(twoq::TwoQ::new(size, n)),
        Algo::Lfu => Box::new(lfu::Lfu::new(size, n)),
        Algo::Car => Box::new(car::Car::new(size, n)),
        Algo::ClockPro => Box::new(clockpro::ClockPro::new(size, n)),
        Algo::ClockProPaper => Box::new(clockpro::ClockProPaper::new(size, n)),
        Algo::LirsPaper => Box::new(lirs_paper::LirsPaper::new(size, n)),
        Algo::S3FifoPaper => Box::new(s3fifo::S3FifoPaper::new(size, n)),
        Algo::SlruPaper => Box::new(slru_paper::SlruPaper::new(size, n)),
        Algo::Belady | Algo::BeladyPaper => {
            panic!("belady is offline: use belady::Belady::new(size, keys, nr_keys)")
        }
    }
}

/// Run `keys` through `algo` with `size` objects; the loop is monomorphised per algorithm.
pub fn simulate(algo: Algo, size: usize, keys: &[u32], nr_keys: u32) -> Stats {
    let n = nr_keys as usize;
    match algo {
        Algo::Lru => run(&mut lru::Lru::new(size, n), keys),
        Algo::Fifo => run(&mut fifo::Fifo::new(size, n), keys),
        Algo::Clock => run(&mut clock::Clock::new(size, n), keys),
        Algo::Sieve => run(&mut sieve::Sieve::new(size, n), keys),
        Algo::S3Fifo => run(&mut s3fifo::S3Fifo::new(size, n), keys),
        Algo::Arc => run(&mut arc::Arc::new(size, n), keys),
        Algo::Belady => run(&mut belady::Belady::new(size, keys, nr_keys), keys),
        Algo::Lirs => run(&mut lirs::Lirs::new(size, n), keys),
        Algo::Slru => run(&mut slru::Slru::new(size, n), keys),
        Algo::TwoQ => run(&mut twoq::TwoQ::new(size, n), keys),
        Algo::Lfu => run(&mut lfu::Lfu::new(size, n), keys),
        Algo::Car => run(&mut car::Car::new(size, n), keys),
        Algo::ClockPro => run(&mut clockpro::ClockPro::new(size, n), keys),
        Algo::ClockProPaper => run(&mut clockpro::ClockProPaper::new(size, n), keys),
        Algo::LirsPaper => run(&mut lirs_paper::LirsPaper::new(size, n), keys),
        Algo::S3FifoPaper => run(&mut s3fifo::S3FifoPaper::new(size, n), keys),
        Algo::SlruPaper => run(&mut slru_paper::SlruPaper::new(size, n), keys),
        Algo::BeladyPaper => run(
            &mut belady_paper::BeladyPaper::new(size, keys, nr_keys),
            keys,
        ),
    }
}
