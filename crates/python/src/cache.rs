//! Reference cache algorithms and miss-ratio curves (`reclaimlab-cache`).

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Instant;

use pyo3::prelude::*;
use pyo3::types::PyDict;
use reclaimlab_cache::keys::Keys;
use reclaimlab_cache::{algo, mrc, Algo};
use reclaimlab_trace::AccessSource;

use crate::error::{invalid, trace_err};
use crate::trace::Source;

/// A whole trace loaded as dense page ids (what the cache algorithms replay). A sparse
/// trace's ids are renumbered in order (`reclaimlab_cache::keys`): same figures, arrays
/// the size of what it requests rather than of its header's page-id space.
#[pyclass(module = "reclaimlab._core", frozen)]
pub struct CacheTrace {
    keys: Arc<Keys>,
    /// What errors name (the trace's path), empty for none.
    name: String,
    read_seconds: f64,
}

impl CacheTrace {
    /// An error about this trace: its name first, as the trace readers' errors.
    fn err(&self, msg: String) -> PyErr {
        invalid(named(&self.name, msg))
    }
}

fn named(name: &str, msg: String) -> String {
    if name.is_empty() {
        msg
    } else {
        format!("{name}: {msg}")
    }
}

#[pymethods]
impl CacheTrace {
    fn __len__(&self) -> usize {
        self.keys.keys.len()
    }
    /// Upper bound of the dense ids (one more than the largest requested).
    #[getter]
    fn nr_pages(&self) -> u32 {
        self.keys.nr_keys
    }
    /// Distinct pages actually requested.
    #[getter]
    fn distinct(&self) -> u64 {
        self.keys.distinct()
    }
    /// Seconds spent reading the trace.
    #[getter]
    fn read_seconds(&self) -> f64 {
        self.read_seconds
    }
    /// The page ids as a list (small traces / tests), as the trace numbers them.
    fn keys(&self) -> Vec<u32> {
        self.keys.original_keys().into_owned()
    }
    /// Write the trace as libCacheSim oracleGeneral (object size 1, next-access times).
    fn write_oracle(&self, py: Python<'_>, path: PathBuf) -> PyResult<u64> {
        let keys = self.keys.clone();
        py.detach(|| reclaimlab_trace::write_oracle(&path, &keys.original_keys())).map_err(trace_err)
    }
}

/// Read a whole source into a CacheTrace; `name` (the trace's path) prefixes errors.
#[pyfunction]
#[pyo3(signature = (source, name = ""))]
fn cache_load(py: Python<'_>, source: &Source, name: &str) -> PyResult<CacheTrace> {
    let mut guard = source.lock()?;
    let src: &mut dyn AccessSource = &mut **guard;
    let t = Instant::now();
    let keys = py.detach(|| -> Result<Keys, reclaimlab_trace::Error> {
        let (keys, nr) = reclaimlab_trace::read_keys(src)?;
        Keys::new(keys, nr).map_err(reclaimlab_trace::Error::invalid)
    });
    let keys = keys.map_err(|mut e| {
        if e.path.is_none() && !name.is_empty() {
            e.path = Some(name.into());
        }
        trace_err(e)
    })?;
    Ok(CacheTrace { keys: Arc::new(keys), name: name.to_string(), read_seconds: t.elapsed().as_secs_f64() })
}

/// A CacheTrace from a list of non-negative ints (dense ids are assigned in order of
/// first appearance).
#[pyfunction]
fn cache_trace_from_keys(keys: Vec<u64>) -> PyResult<CacheTrace> {
    let mut map = std::collections::HashMap::new();
    let mut out = Vec::with_capacity(keys.len());
    for k in keys {
        let n = map.len() as u32;
        out.push(*map.entry(k).or_insert(n));
    }
    let nr_keys = map.len() as u32;
    Ok(CacheTrace { keys: Arc::new(Keys { keys: out, nr_keys, orig: None }), name: String::new(), read_seconds: 0.0 })
}

/// Names of the algorithms (`reclaimlab_cache::TABLE`'s order).
#[pyfunction]
fn cache_algos() -> Vec<&'static str> {
    algo::names().collect()
}

/// Our name → the class of libCacheSim's Python package with the same definition, for
/// the algorithms that have one (the agreement tests' map).
#[pyfunction]
fn cache_libcachesim_names() -> Vec<(&'static str, &'static str)> {
    algo::TABLE.iter().filter_map(|a| Some((a.name, a.libcachesim?))).collect()
}

/// The smallest cache `name` accepts (0: any; CLOCK-Pro 5, lirs-paper 10, as their
/// authors' simulators).
#[pyfunction]
fn cache_min_size(name: &str) -> PyResult<usize> {
    Ok(parse_algo(name)?.min_size)
}

fn parse_algo(name: &str) -> PyResult<Algo> {
    algo::parse(name).map_err(|e| invalid(e.0))
}

/// Simulate each (algo, size) pair, in parallel threads; returns dicts with algo, size,
/// hits, misses, miss_ratio, seconds (per run).
#[pyfunction]
#[pyo3(signature = (trace, algos, sizes, threads = 0))]
fn cache_simulate<'py>(py: Python<'py>, trace: &CacheTrace, algos: Vec<String>, sizes: Vec<usize>, threads: usize) -> PyResult<Vec<Bound<'py, PyDict>>> {
    let mut jobs = Vec::new();
    for a in &algos {
        let al = parse_algo(a)?;
        for &s in &sizes {
            if s < al.min_size {
                return Err(invalid(format!("{} needs a cache of at least {} pages (got {s}), as its authors' simulator does", al.name, al.min_size)));
            }
            jobs.push((al, s));
        }
    }
    let keys = trace.keys.clone();
    let nr = keys.nr_keys;
    let threads = if threads == 0 { std::thread::available_parallelism().map(|n| n.get()).unwrap_or(1) } else { threads };
    // The runs' state: the largest run's estimate times the runs at once, checked against
    // --max-memory and the host before any run starts (an algorithm's arrays are ordinary
    // allocations, which would abort).
    let parallel = threads.min(jobs.len()).max(1);
    if let Some(&(al, size)) = jobs.iter().max_by_key(|(al, size)| al.memory_estimate(*size, nr, keys.keys.len())) {
        let one = al.memory_estimate(size, nr, keys.keys.len());
        let what =
            || format!("{parallel} cache simulation{} at once over {nr} page ids (an estimate; the largest is {} of {size} pages)", if parallel > 1 { "s" } else { "" }, al.name);
        reclaimlab_trace::mem::probe(one.saturating_mul(parallel as u64), &what).map_err(|e| trace.err(e))?;
    }
    let results = py.detach(|| {
        let mut out = vec![None; jobs.len()];
        let next = std::sync::atomic::AtomicUsize::new(0);
        let slots: Vec<std::sync::Mutex<Option<(reclaimlab_cache::Stats, f64)>>> = (0..jobs.len()).map(|_| std::sync::Mutex::new(None)).collect();
        std::thread::scope(|s| {
            for _ in 0..threads.min(jobs.len()).max(1) {
                s.spawn(|| loop {
                    let i = next.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                    if i >= jobs.len() {
                        break;
                    }
                    let (al, size) = jobs[i];
                    let t = Instant::now();
                    let st = algo::simulate(al, size, &keys.keys, nr);
                    *slots[i].lock().unwrap() = Some((st, t.elapsed().as_secs_f64()));
                });
            }
        });
        for (i, s) in slots.into_iter().enumerate() {
            out[i] = s.into_inner().unwrap();
        }
        out
    });
    let mut v = Vec::new();
    for ((al, size), r) in jobs.iter().zip(results) {
        let (st, secs) = r.unwrap();
        let d = PyDict::new(py);
        d.set_item("algo", al.name)?;
        d.set_item("size", *size)?;
        d.set_item("hits", st.hits)?;
        d.set_item("misses", st.misses)?;
        d.set_item("miss_ratio", st.miss_ratio())?;
        d.set_item("seconds", secs)?;
        v.push(d);
    }
    Ok(v)
}

/// LRU miss ratios at `sizes` from stack distances (exact; `rate` < 1 → SHARDS sampling).
#[pyfunction]
#[pyo3(signature = (trace, sizes, rate = 1.0))]
fn cache_lru_mrc(py: Python<'_>, trace: &CacheTrace, sizes: Vec<usize>, rate: f64) -> PyResult<Vec<f64>> {
    if !(rate > 0.0 && rate <= 1.0) {
        return Err(invalid(format!("sample rate must be in (0, 1], got {rate}")));
    }
    let keys = trace.keys.clone();
    let nr = keys.nr_keys;
    // Stack distances: a Fenwick tree over the requests (4 bytes each) and the last access
    // of each id (4), SHARDS's renumbering (4 per id); the histogram is at most 8 per id.
    let n = keys.keys.len() as u64;
    let bytes = n * 4 + nr as u64 * 16;
    reclaimlab_trace::mem::probe(bytes, &|| format!("the miss-ratio curve of {n} requests over {nr} page ids")).map_err(|e| trace.err(e))?;
    Ok(py.detach(|| mrc::shards_by(&keys.keys, nr, rate, |k| keys.original(k)).miss_ratios(&sizes)))
}

/// One cache of a reference algorithm fed request by request (`reclaimlab.Cache`). Page
/// numbers of any size get dense ids in order of first request, as `cache_load` numbers a
/// trace. The algorithms keep per-id arrays, so when a new page does not fit the id space
/// the cache is rebuilt at twice the ids and the requests so far are replayed into it (the
/// algorithms are deterministic: same state, amortised one replay per request); with
/// `pages` the id space is fixed, no request is kept, and a page beyond it is an error.
#[pyclass(module = "reclaimlab._core", unsendable)]
pub struct CacheSim {
    algo: Algo,
    size: usize,
    cache: Box<dyn reclaimlab_cache::Cache>,
    ids: std::collections::HashMap<u64, u32>,
    /// The id space `cache` was built for.
    space: u32,
    fixed: bool,
    /// Every request's dense id (not kept with a fixed id space).
    history: Vec<u32>,
    hits: u64,
    misses: u64,
}

/// The id space a cache starts with when none is given.
const INITIAL_IDS: u32 = 1024;

impl CacheSim {
    fn build(algo: Algo, size: usize, space: u32) -> PyResult<Box<dyn reclaimlab_cache::Cache>> {
        let what = || format!("a {} cache of {size} pages over {space} page ids", algo.name);
        reclaimlab_trace::mem::probe(algo.memory_estimate(size, space, 0), &what).map_err(invalid)?;
        Ok(reclaimlab_cache::build(algo, size, space))
    }

    /// The dense id of `page`, growing the id space (or refusing) as needed.
    fn id(&mut self, page: u64) -> PyResult<u32> {
        if let Some(&id) = self.ids.get(&page) {
            return Ok(id);
        }
        let id = self.ids.len() as u32;
        if id >= self.space {
            if self.fixed {
                return Err(invalid(format!("page {page} is distinct page {} of a cache made for pages={}", id as u64 + 1, self.space)));
            }
            let space = self.space.saturating_mul(2).max(id + 1);
            let mut cache = Self::build(self.algo, self.size, space)?;
            for &k in &self.history {
                cache.access(k);
            }
            self.cache = cache;
            self.space = space;
        }
        self.ids.insert(page, id);
        Ok(id)
    }

    fn request(&mut self, page: u64) -> PyResult<bool> {
        let id = self.id(page)?;
        if !self.fixed {
            self.history.push(id);
        }
        let hit = self.cache.access(id);
        if hit {
            self.hits += 1;
        } else {
            self.misses += 1;
        }
        Ok(hit)
    }
}

#[pymethods]
impl CacheSim {
    #[new]
    #[pyo3(signature = (algo, size, pages = None))]
    fn new(algo: &str, size: usize, pages: Option<u32>) -> PyResult<Self> {
        let al = parse_algo(algo)?;
        if al.offline() {
            return Err(invalid(format!("{} needs the whole trace ahead (next-access times): use reclaimlab.cachesim(trace, \"{}\", sizes)", al.name, al.name)));
        }
        if size < al.min_size {
            return Err(invalid(format!("{} needs a cache of at least {} pages (got {size}), as its authors' simulator does", al.name, al.min_size)));
        }
        let space = pages.unwrap_or(INITIAL_IDS);
        Ok(CacheSim {
            algo: al,
            size,
            cache: Self::build(al, size, space)?,
            ids: std::collections::HashMap::new(),
            space,
            fixed: pages.is_some(),
            history: Vec::new(),
            hits: 0,
            misses: 0,
        })
    }
    /// The algorithm's name (as `cache_algos` spells it).
    #[getter]
    fn algo(&self) -> &'static str {
        self.algo.name
    }
    /// Capacity in pages.
    #[getter]
    fn size(&self) -> usize {
        self.size
    }
    #[getter]
    fn hits(&self) -> u64 {
        self.hits
    }
    #[getter]
    fn misses(&self) -> u64 {
        self.misses
    }
    /// Distinct pages requested so far.
    #[getter]
    fn distinct(&self) -> usize {
        self.ids.len()
    }
    /// Pages resident now.
    fn __len__(&self) -> usize {
        self.cache.len()
    }
    /// One request: True on a hit (on a miss the page is inserted, evicting as needed).
    fn access(&mut self, page: u64) -> PyResult<bool> {
        self.request(page)
    }
    /// Requests in order; returns (hits, misses) among them.
    fn process(&mut self, pages: Vec<u64>) -> PyResult<(u64, u64)> {
        let (h, m) = (self.hits, self.misses);
        for p in pages {
            self.request(p)?;
        }
        Ok((self.hits - h, self.misses - m))
    }
    /// A loaded trace's requests in order (its page numbers, not `cache_load`'s dense ids);
    /// returns (hits, misses) among them.
    fn process_trace(&mut self, trace: &CacheTrace) -> PyResult<(u64, u64)> {
        let (h, m) = (self.hits, self.misses);
        let keys = trace.keys.clone();
        for &k in &keys.keys {
            self.request(keys.original(k) as u64)?;
        }
        Ok((self.hits - h, self.misses - m))
    }
}

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<CacheTrace>()?;
    m.add_class::<CacheSim>()?;
    m.add_function(wrap_pyfunction!(cache_load, m)?)?;
    m.add_function(wrap_pyfunction!(cache_trace_from_keys, m)?)?;
    m.add_function(wrap_pyfunction!(cache_algos, m)?)?;
    m.add_function(wrap_pyfunction!(cache_libcachesim_names, m)?)?;
    m.add_function(wrap_pyfunction!(cache_min_size, m)?)?;
    m.add_function(wrap_pyfunction!(cache_simulate, m)?)?;
    m.add_function(wrap_pyfunction!(cache_lru_mrc, m)?)?;
    Ok(())
}
