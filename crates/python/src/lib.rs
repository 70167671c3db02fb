//! `reclaimlab._core`: thin PyO3 bindings over `reclaimlab-core` and `reclaimlab-trace`.
//!
//! Every method delegates to the engine's public facade; the Python package
//! (`python/reclaimlab`) builds the user-facing API, CLI and reports on top.
//! Errors map to `reclaimlab.exceptions` classes in [`error`].
// `x % n == 0` stays: `is_multiple_of` is Rust 1.87, the workspace's rust-version 1.75.
#![allow(clippy::manual_is_multiple_of)]

mod cache;
mod damo;
mod damon;
mod error;
mod policy;
mod regions;
mod thp;
mod trace;
mod trace_writer;

use std::sync::Mutex;

use pyo3::prelude::*;
use pyo3::types::PyDict;
use reclaimlab_core::{config, scenario, SimConfig};

use error::{config_invalid, core_err, invalid};
pub use trace::Source;

/// A run configuration: every knob under its kernel name (`vm.swappiness`, ...).
#[pyclass(module = "reclaimlab._core")]
#[derive(Clone)]
pub struct Config {
    inner: SimConfig,
}

#[pymethods]
impl Config {
    /// A configuration with every knob at its default.
    #[new]
    fn new() -> Self {
        Config { inner: SimConfig::default() }
    }

    /// Set a knob by its dotted key (`vm.swappiness`, `cgroup.db.memory.max`, ...) to a
    /// string, an integer, a float or a boolean (`True` is `Y`, as the knobs spell it).
    fn set(&mut self, key: &str, value: &Bound<'_, PyAny>) -> PyResult<()> {
        use pyo3::types::{PyBool, PyFloat, PyInt, PyString};
        let text = if value.is_instance_of::<PyString>() {
            value.extract::<String>()?
        } else if value.is_instance_of::<PyBool>() {
            (if value.is_truthy()? { "Y" } else { "N" }).to_string()
        } else if value.is_instance_of::<PyInt>() || value.is_instance_of::<PyFloat>() {
            value.str()?.to_string()
        } else {
            let kind = value.get_type().name()?.to_string();
            return Err(config_invalid(key, format!("config key '{key}': expected a string or a number, got {kind}")));
        };
        self.inner.set(key, &text).map_err(core_err)
    }

    /// The current value of a knob as a string (None for an unknown key).
    fn get(&self, key: &str) -> Option<String> {
        self.inner.get(key)
    }

    /// Check the cross-key rules (raises ConfigError naming the key).
    fn validate(&self) -> PyResult<()> {
        self.inner.validate().map_err(core_err)
    }

    /// Every knob's current value, cgroups included, as key → string.
    fn items<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let d = PyDict::new(py);
        for k in reclaimlab_core::KNOBS {
            d.set_item(k.key, k.get(&self.inner))?;
        }
        for cg in &self.inner.cgroups {
            for (file, v) in [("memory.max", cg.max), ("memory.high", cg.high), ("memory.low", cg.low), ("memory.min", cg.min)] {
                d.set_item(format!("cgroup.{}.{file}", cg.name), config::format_size(v))?;
            }
        }
        Ok(d)
    }

    fn copy(&self) -> Self {
        self.clone()
    }

    fn __repr__(&self) -> String {
        format!("Config(policy={:?}, machine.memory={})", self.inner.policy, config::format_size(self.inner.memory_bytes))
    }
}

/// Every knob as (key, default, unit, meaning); the meaning ends with the accepted range
/// of a knob whose row has one.
#[pyfunction]
fn knobs() -> Vec<(&'static str, &'static str, &'static str, String)> {
    reclaimlab_core::KNOBS.iter().map(|k| (k.key, k.default, k.unit, k.range.map_or_else(|| k.doc.to_string(), |(lo, hi)| format!("{} ({lo}..{hi})", k.doc)))).collect()
}

/// The per-cgroup knob family `cgroup.<name>.<file>` as (file, default, meaning).
#[pyfunction]
fn cgroup_knobs() -> Vec<(&'static str, &'static str, &'static str)> {
    config::CGROUP_KNOBS.to_vec()
}

/// The CLI's shortcut flags and common keys as (flag, metavar, keys); flag "" = a common
/// key without a flag (crates/core/src/config.rs `KNOB_ALIASES`).
#[pyfunction]
fn knob_aliases() -> Vec<(&'static str, &'static str, Vec<&'static str>)> {
    config::KNOB_ALIASES.iter().map(|a| (a.flag, a.metavar, a.keys.to_vec())).collect()
}

/// Parse a size like the kernel's memparse (`512M`, `4G`, `max`) into bytes.
#[pyfunction]
fn parse_size(value: &str) -> PyResult<u64> {
    config::parse_size(value).map_err(invalid)
}

/// The named policy models as (name, base, description).
#[pyfunction]
fn policies() -> Vec<(&'static str, &'static str, &'static str)> {
    reclaimlab_core::policies().into_iter().map(|p| (p.name, p.base, p.description)).collect()
}

/// The built-in scenarios as (name, description, report), in table order; `report` says
/// what a comparison run of it runs and prints (`policies`, `damon-quota`, `thp-policies`).
#[pyfunction]
fn scenarios() -> Vec<(&'static str, &'static str, &'static str)> {
    scenario::list().iter().map(|s| (s.name, s.description, s.report.name())).collect()
}

fn find_scenario(name: &str) -> PyResult<&'static scenario::Scenario> {
    scenario::get(name).ok_or_else(|| {
        let known: Vec<&str> = scenario::list().iter().map(|s| s.name).collect();
        invalid(format!("unknown scenario '{name}'; known: {}", known.join(", ")))
    })
}

/// The machine configuration of a built-in scenario (at `scale`; only scalable scenarios
/// accept a scale other than 1).
#[pyfunction]
#[pyo3(signature = (name, scale=1.0))]
fn scenario_config(name: &str, scale: f64) -> PyResult<Config> {
    Ok(Config { inner: find_scenario(name)?.config_at(scale).map_err(core_err)? })
}

/// The access stream of a built-in scenario at `scale`, generated from `seed`, with
/// optional workload `params` (a dict name → value, values converted with `str()`; only
/// the names the scenario declares in `scenario_info(name)["params"]`).
#[pyfunction]
#[pyo3(signature = (name, seed, scale=1.0, params=None))]
fn scenario_source(py: Python<'_>, name: &str, seed: u64, scale: f64, params: Option<&Bound<'_, PyDict>>) -> PyResult<Source> {
    let s = find_scenario(name)?;
    let mut kv: Vec<(String, String)> = Vec::new();
    if let Some(d) = params {
        for (k, v) in d.iter() {
            kv.push((k.str()?.to_string(), v.str()?.to_string()));
        }
    }
    let src = py
        .detach(|| {
            let kv: Vec<(&str, &str)> = kv.iter().map(|(k, v)| (k.as_str(), v.as_str())).collect();
            s.source_with(seed, scale, &kv)
        })
        .map_err(core_err)?;
    Ok(Source::new(src))
}

/// What a scenario declares besides its machine and workload: `{"name", "description",
/// "report", "policies" (list as declared; empty = every kernel model and
/// `DEFAULT_CACHE_POLICIES`), "compared" (the policies a comparison runs: those registered,
/// in order), "baseline", "transactions" and "clients"
/// (ints of a transactional scenario, else None), "scalable", "params" (list of (name, default, meaning) accepted by
/// `scenario_source(..., params=...)`)}`.
#[pyfunction]
fn scenario_info<'py>(py: Python<'py>, name: &str) -> PyResult<Bound<'py, PyDict>> {
    let s = find_scenario(name)?;
    let d = PyDict::new(py);
    d.set_item("name", s.name)?;
    d.set_item("description", s.description)?;
    d.set_item("report", s.report.name())?;
    d.set_item("policies", s.policies.to_vec())?;
    d.set_item("compared", s.compared())?;
    d.set_item("baseline", s.baseline)?;
    d.set_item("transactions", s.transactions().map(|t| t.0))?;
    d.set_item("clients", s.transactions().map(|t| t.1))?;
    d.set_item("scalable", s.scalable())?;
    d.set_item("params", s.params.to_vec())?;
    Ok(d)
}

/// A simulated machine replaying one trace.
#[pyclass(module = "reclaimlab._core")]
pub struct Simulation {
    inner: Mutex<Option<reclaimlab_core::Simulation>>,
}

#[pymethods]
impl Simulation {
    /// Build the machine from `config` (raises ConfigError naming the bad key). With
    /// `policy=(name, attach)` the reclaim policy is a Python one (cache_ext's hooks):
    /// `attach(memcg, node)` returns the `reclaimlab.Policy` instance of each lruvec, and
    /// the run reports the policy as `name` (`config`'s `policy` is ignored). With
    /// `policy=(name, None)`, `name` is `rust:PATH:NAME`: policy NAME of the shared
    /// library at PATH (an absolute path; docs/plugins.md).
    #[new]
    #[pyo3(signature = (config, policy=None))]
    fn new(py: Python<'_>, config: &Config, policy: Option<(String, Option<Py<PyAny>>)>) -> PyResult<Self> {
        let sim = match policy {
            None => reclaimlab_core::Simulation::new(&config.inner),
            Some((name, Some(attach))) => {
                let f = policy::factory(attach);
                py.detach(|| reclaimlab_core::Simulation::with_policy(&config.inner, &name, f))
            }
            Some((name, None)) => {
                let (path, pol) = name.strip_prefix("rust:").and_then(|r| r.rsplit_once(':')).ok_or_else(|| invalid(format!("policy {name}: expected rust:PATH:NAME")))?;
                let f = policy::dylib_factory(path, pol).map_err(|e| invalid(format!("policy {name}: {e}")))?;
                py.detach(|| reclaimlab_core::Simulation::with_policy(&config.inner, &name, f))
            }
        }
        .map_err(core_err)?;
        Ok(Simulation { inner: Mutex::new(Some(sim)) })
    }

    /// Replay up to `max_accesses` records of `source` (without the GIL).
    /// Returns True once the source is exhausted.
    #[pyo3(signature = (source, max_accesses = u64::MAX))]
    fn run(&self, py: Python<'_>, source: &Source, max_accesses: u64) -> PyResult<bool> {
        let mut sim = self.inner.lock().map_err(|_| invalid("simulation is poisoned"))?;
        let sim = sim.as_mut().ok_or_else(|| invalid("simulation already finished"))?;
        let mut guard = source.lock()?;
        let src: &mut dyn reclaimlab_trace::AccessSource = &mut **guard;
        // A Ctrl-C inside a Python policy's hook stopped the run as that hook's error and
        // re-armed the interrupt (policy.rs): raise it as KeyboardInterrupt, as a Ctrl-C
        // anywhere else does.
        py.detach(|| sim.run(src, max_accesses)).map_err(|e| py.check_signals().err().unwrap_or_else(|| core_err(e)))
    }

    /// Accesses replayed so far.
    #[getter]
    fn accesses(&self) -> PyResult<u64> {
        let sim = self.inner.lock().map_err(|_| invalid("simulation is poisoned"))?;
        Ok(sim.as_ref().map_or(0, |s| s.accesses()))
    }

    /// Close the run and return {policy, vmstat, metrics, timeseries} (a dict).
    fn finish<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let sim = self.inner.lock().map_err(|_| invalid("simulation is poisoned"))?.take().ok_or_else(|| invalid("simulation already finished"))?;
        let r = py.detach(|| sim.finish());
        let out = PyDict::new(py);
        out.set_item("policy", r.policy)?;
        let vmstat = PyDict::new(py);
        for (k, v) in r.vmstat {
            vmstat.set_item(k, v)?;
        }
        out.set_item("vmstat", vmstat)?;
        let metrics = PyDict::new(py);
        for (k, v) in r.metrics {
            metrics.set_item(k, v)?;
        }
        out.set_item("metrics", metrics)?;
        let ts = PyDict::new(py);
        for (k, v) in r.timeseries.columns {
            ts.set_item(k, v)?;
        }
        out.set_item("timeseries", ts)?;
        Ok(out)
    }
}

#[pymodule]
fn _core(m: &Bound<'_, PyModule>) -> PyResult<()> {
    // A panic is an engine bug; pyo3 turns it into a PanicException carrying the
    // message, which the CLI reports in one line. Keep Rust's default hook from also
    // printing "thread panicked at" to the user's terminal.
    std::panic::set_hook(Box::new(|_| {}));
    m.add_class::<Config>()?;
    m.add_class::<Simulation>()?;
    m.add_class::<Source>()?;
    m.add_function(wrap_pyfunction!(knobs, m)?)?;
    m.add_function(wrap_pyfunction!(cgroup_knobs, m)?)?;
    m.add_function(wrap_pyfunction!(parse_size, m)?)?;
    m.add_function(wrap_pyfunction!(policies, m)?)?;
    m.add_function(wrap_pyfunction!(knob_aliases, m)?)?;
    m.add_function(wrap_pyfunction!(scenarios, m)?)?;
    m.add_function(wrap_pyfunction!(scenario_config, m)?)?;
    m.add_function(wrap_pyfunction!(scenario_source, m)?)?;
    m.add_function(wrap_pyfunction!(scenario_info, m)?)?;
    trace::register(m)?;
    trace_writer::register(m)?;
    cache::register(m)?;
    regions::register(m)?;
    damon::register(m)?;
    thp::register(m)?;
    damo::register(m)?;
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    // The cache:* rows a comparison that names no policies runs (`reclaimlab.DEFAULT_CACHE_POLICIES`).
    m.add("DEFAULT_CACHE_POLICIES", scenario::DEFAULT_CACHE_POLICIES.to_vec())?;
    Ok(())
}
