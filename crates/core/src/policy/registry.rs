//! The table of named policy models.
use crate::api::PolicyInfo;

pub fn policies() -> Vec<PolicyInfo> {
    vec![PolicyInfo { name: "classic@6.15", base: "", description: "active/inactive LRU with workingset refault detection (mm/vmscan.c, mm/workingset.c, v6.15)" }]
}
