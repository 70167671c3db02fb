//! Built-in scenarios (stub while the engine lands).
use crate::config::SimConfig;
use crate::error::{Error, Result};
use reclaimlab_trace::AccessSource;

pub struct Scenario {
    pub name: &'static str,
    pub description: &'static str,
    overrides: &'static [(&'static str, &'static str)],
}

impl Scenario {
    /// The machine this scenario runs on (defaults plus its overrides).
    pub fn config(&self) -> SimConfig {
        let mut c = SimConfig::default();
        for (k, v) in self.overrides {
            c.set(k, v).expect("scenario overrides are valid keys");
        }
        c
    }
    /// Its access stream, generated from `seed`.
    pub fn source(&self, _seed: u64) -> Result<Box<dyn AccessSource>> {
        Err(Error::invalid("not yet"))
    }
}

static SCENARIOS: &[Scenario] = &[Scenario { name: "default", description: "stub", overrides: &[] }];

pub fn list() -> &'static [Scenario] {
    SCENARIOS
}

pub fn get(name: &str) -> Option<&'static Scenario> {
    SCENARIOS.iter().find(|s| s.name == name)
}
