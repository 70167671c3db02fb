//! reclaimlab-core's integration tests, one binary: a module per area (run one with
//! `cargo test -p reclaimlab-core --release --test it thp::`), helpers in `common`.

mod common;

mod behaviour;
mod cache_policy;
mod ext_policy;
mod invariants;
mod kernel_shmem;
mod kmem;
mod layers;
mod madvise;
mod memcg_stat;
mod memory_reclaim;
mod mglru;
mod readahead;
mod real_traces;
mod rfc_classic;
mod shadow_nodes;
mod start_layout;
mod tasks;
mod terasort;
mod thp;
mod thp_policies;
mod variants;
mod writeback;
