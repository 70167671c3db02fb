//! reclaimlab-cache's integration tests, one binary: a module per area (run one with
//! `cargo test -p reclaimlab-cache --release --test it evict::`), helpers in `common`.

mod common;

mod algorithms;
mod evict;
mod keys;
mod oracle;
