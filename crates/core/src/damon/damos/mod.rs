//! DAMOS, DAMON-based Operation Schemes (spec E): [`scheme`] (pattern, scheme, the
//! apply round), [`quota`] (time/size quotas, charge windows), [`goal`] (quota goals,
//! the feedback loop), [`prio`] (scores, histogram, `min_score`), [`wmarks`]
//! (activation), [`filter`] (core and ops filters), [`stat`] (per-scheme counters),
//! [`action`] (what an action does to folios, through the policy's hooks).

pub mod action;
pub mod filter;
pub mod goal;
pub mod prio;
pub mod quota;
pub mod scheme;
pub mod stat;
pub mod wmarks;

pub use scheme::{Damos, DamosAccessPattern, DamosAction};
