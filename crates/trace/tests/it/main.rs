//! reclaimlab-trace's integration tests, one binary: a module per reader or tool (run one
//! with `cargo test -p reclaimlab-trace --release --test it native::`), helpers in `common`.

mod common;

mod address;
mod compressed;
mod convert;
mod csv;
mod fuzz_seeds;
mod gen;
mod lirs;
mod native;
mod open;
