//! Seed 003's programs under every reclaim policy: thpscale and usemem run with MGLRU as
//! well as the classic LRU (`reclaimlab run thpscale --policy mglru@6.15`), keep their
//! invariants (debug builds check them at the end of each scenario run) and are
//! deterministic; `cache:*` policies, whose folios cannot be taken off the LRU, are
//! refused with a config error.

use reclaimlab_core::config::SimConfig;
use reclaimlab_core::scenario::thp::{thpscale, usemem, ThpscaleParams, UsememParams};

fn cfg(policy: &str) -> SimConfig {
    let mut c = SimConfig::default();
    for (k, v) in
        [("machine.memory", "256M"), ("machine.nodes", "2"), ("swap.device", "zram"), ("policy", policy), ("thp.policy", "thp@5.5"), ("transparent_hugepage.enabled", "always")]
    {
        c.set(k, v).unwrap();
    }
    c
}

#[test]
fn thp_scenarios_run_under_every_lru_policy() {
    let mut reclaimed = Vec::new();
    for p in reclaimlab_core::policies().into_iter().filter(|p| !p.name.starts_with("cache:")) {
        let c = cfg(p.name);
        let tp = ThpscaleParams { threads: vec![3], ..Default::default() };
        let (a, b) = (thpscale(&c, &tp).unwrap(), thpscale(&c, &tp).unwrap());
        assert_eq!(a[0].counters, b[0].counters, "{}: thpscale not deterministic", p.name);
        assert!(!a[0].fault_huge_us.is_empty(), "{}: no huge fault", p.name);
        let mut c = c;
        c.set("transparent_hugepage.defrag", "always").unwrap();
        let up = UsememParams { threads: 2, passes: 2, ..Default::default() };
        let u = usemem(&c, &up).unwrap();
        assert_eq!(u.counters, usemem(&c, &up).unwrap().counters, "{}: usemem not deterministic", p.name);
        let get = |k: &str| a[0].counters.iter().find(|(n, _)| n == k).map_or(0, |(_, v)| *v);
        reclaimed.push((p.name, get("pgsteal_kswapd") + get("pgsteal_direct"), get("pgscan_kswapd") + get("pgscan_direct")));
    }
    // The policy is really the one named: classic and MGLRU reclaim differently.
    let of = |n: &str| reclaimed.iter().find(|r| r.0 == n).map(|r| (r.1, r.2)).unwrap();
    assert_ne!(of("classic@6.15"), of("mglru@6.15"), "{reclaimed:?}");
}

#[test]
fn cache_policies_cannot_run_a_program() {
    let err = thpscale(&cfg("cache:lru"), &ThpscaleParams { threads: vec![1], ..Default::default() }).unwrap_err().to_string();
    assert!(err.contains("policy") && err.contains("cache:lru") && err.contains("folio_isolate_lru"), "{err}");
}
