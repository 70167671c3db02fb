//! The table of named policy models: one row each (name, base, builder, description).
//! A new variant is a new row, not an edit of an existing model.

use super::classic::{Classic, Mainline};
use crate::api::PolicyInfo;
use crate::config::SimConfig;
use crate::error::{Error, Result};
use crate::sim::engine::Machine;
use crate::sim::Engine;

pub struct PolicyEntry {
    pub name: &'static str,
    pub base: &'static str,
    pub description: &'static str,
    pub build: fn(&SimConfig) -> Box<dyn Engine>,
}

pub static POLICIES: &[PolicyEntry] = &[PolicyEntry {
    name: "classic@6.15",
    base: "",
    description: "active/inactive LRU with workingset refault detection (mm/vmscan.c, mm/workingset.c, v6.15)",
    build: |cfg| Box::new(Machine::new(cfg, Classic::new(Mainline))),
}];

pub fn find(name: &str) -> Result<&'static PolicyEntry> {
    POLICIES.iter().find(|p| p.name == name).ok_or_else(|| {
        let names: Vec<&str> = POLICIES.iter().map(|p| p.name).collect();
        Error::config("policy", format!("unknown policy '{name}'; known: {}", names.join(", ")))
    })
}

pub fn policies() -> Vec<PolicyInfo> {
    POLICIES.iter().map(|p| PolicyInfo { name: p.name, base: p.base, description: p.description }).collect()
}
