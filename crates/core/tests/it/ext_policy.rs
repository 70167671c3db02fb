//! Out-of-tree policies through cache_ext's hooks (policy/ext/): an LRU written against
//! the hooks reproduces `cache:lru` counter for counter; a policy naming nothing falls
//! back to the kernel's LRU (again `cache:lru`'s counters); MRU beats LRU on a loop;
//! admission refusals; every policy error stops the run with one message naming the
//! hook and the folio, the machine's invariants intact.
use std::collections::{BTreeMap, HashMap};
use std::sync::{Arc, Mutex};

use crate::common::*;
use reclaimlab_core::config::SimConfig;
use reclaimlab_core::policy::ext::{CacheExtOps, EvictionCtx, Folio, LruvecInfo, OpsFactory};
use reclaimlab_core::{RunResult, Simulation};
use reclaimlab_trace::{generate, AccessKind, AccessSource, Pattern, Program};

/// LRU (or MRU) over the hooks: a stamp per folio, evict the oldest (newest) stamps.
#[derive(Default)]
struct Recency {
    mru: bool,
    clock: u64,
    stamp: HashMap<Folio, u64>,
    order: BTreeMap<u64, Folio>,
    added: Arc<Mutex<u64>>,
}

impl Recency {
    fn touch(&mut self, f: Folio) {
        if let Some(s) = self.stamp.remove(&f) {
            self.order.remove(&s);
        }
        self.clock += 1;
        self.stamp.insert(f, self.clock);
        self.order.insert(self.clock, f);
    }
}

impl CacheExtOps for Recency {
    fn evict_folios(&mut self, ctx: &mut EvictionCtx) -> Result<(), String> {
        let n = ctx.request_nr_folios_to_evict;
        if self.mru {
            ctx.folios_to_evict.extend(self.order.values().rev().take(n));
        } else {
            ctx.folios_to_evict.extend(self.order.values().take(n));
        }
        Ok(())
    }
    fn folio_added(&mut self, f: Folio) {
        *self.added.lock().unwrap() += 1;
        self.touch(f);
    }
    fn folio_accessed(&mut self, f: Folio) {
        // MRU as cache_ext's file-search policy: an access does not reorder.
        if !self.mru {
            self.touch(f);
        }
    }
    fn folio_removed(&mut self, f: Folio) {
        if let Some(s) = self.stamp.remove(&f) {
            self.order.remove(&s);
        }
    }
}

fn factory<T: CacheExtOps + 'static>(make: impl Fn() -> T + Send + 'static) -> OpsFactory {
    Box::new(move |_: &LruvecInfo| Ok(Box::new(make()) as Box<dyn CacheExtOps>))
}

/// Run to the end with invariants checked every `every` accesses; the first error.
fn run_ext(cfg: &SimConfig, f: OpsFactory, src: &mut dyn AccessSource, every: u64) -> Result<RunResult, (String, Simulation)> {
    let mut sim = Simulation::with_policy(cfg, "test:ext", f).map_err(|e| panic!("build: {e}")).unwrap();
    loop {
        match sim.run(src, every) {
            Ok(done) => {
                sim.check_invariants().unwrap();
                if done {
                    return Ok(sim.finish());
                }
            }
            Err(e) => return Err((e.to_string(), sim)),
        }
    }
}

/// Anon and file pages in two cgroups, one limited, zram, then a burst of fresh anon
/// pages: kswapd, direct and memcg limit reclaim (as cache_policy.rs's drivers test).
fn mixed() -> (SimConfig, Program) {
    let mut anon = region("anon", 2 * 1024, AccessKind::AnonMapped);
    anon.cgroup = "a".into();
    let prog = program(
        vec![anon, region("file", 3 * 1024, AccessKind::FileRead), region("burst", 1024, AccessKind::AnonMapped)],
        vec![phase("mix", 120_000, &[(0, Pattern::Zipf { alpha: 0.9 }, 0.5), (1, Pattern::Zipf { alpha: 0.7 }, 0.5)]), phase("burst", 60_000, &[(2, Pattern::Sequential, 1.0)])],
    );
    let cfg = config(&[("machine.memory", "12M"), ("swap.device", "zram"), ("cgroup.a.memory.max", "4M"), ("vm.watermark_scale_factor", "1")]);
    (cfg, prog)
}

/// Every vmstat counter and metric but the policy's name and the `ext.*` metrics.
fn assert_same_counters(ext: &RunResult, builtin: &RunResult) {
    assert_eq!(ext.vmstat, builtin.vmstat);
    let m: Vec<_> = ext.metrics.iter().filter(|(k, _)| !k.starts_with("ext.")).cloned().collect();
    assert_eq!(m.len(), builtin.metrics.len());
    for ((k, a), (l, b)) in m.iter().zip(&builtin.metrics) {
        assert_eq!(k, l);
        assert!(a == b || (a.is_nan() && b.is_nan()), "{k}: ext {a} vs cache:lru {b}");
    }
}

#[test]
fn lru_through_the_hooks_matches_cache_lru_counter_for_counter() {
    let (mut cfg, prog) = mixed();
    let ext = run_ext(&cfg, factory(Recency::default), generate(prog.clone(), 5).unwrap().as_mut(), 5000).unwrap_or_else(|(m, _)| panic!("{m}"));
    cfg.set("policy", "cache:lru").unwrap();
    let builtin = run(&cfg, generate(prog, 5).unwrap().as_mut());
    assert!(vm(&builtin, "pswpout") > 0 && vm(&builtin, "pgsteal_direct") > 0);
    assert_eq!(metric(&ext, "ext.fallback_reclaimed_pages"), 0.0);
    assert!(metric(&ext, "ext.policy_reclaimed_pages") > 0.0);
    assert_same_counters(&ext, &builtin);
}

/// cache_ext's fallback: a policy that names nothing leaves every eviction to the
/// kernel's order, here an LRU with second chance: `cache:lru`'s counters.
#[test]
fn a_policy_naming_nothing_falls_back_to_the_kernels_lru() {
    struct Nothing;
    impl CacheExtOps for Nothing {
        fn evict_folios(&mut self, _ctx: &mut EvictionCtx) -> Result<(), String> {
            Ok(())
        }
    }
    let (mut cfg, prog) = mixed();
    let ext = run_ext(&cfg, factory(|| Nothing), generate(prog.clone(), 5).unwrap().as_mut(), 5000).unwrap_or_else(|(m, _)| panic!("{m}"));
    cfg.set("policy", "cache:lru").unwrap();
    let builtin = run(&cfg, generate(prog, 5).unwrap().as_mut());
    assert_eq!(metric(&ext, "ext.policy_reclaimed_pages"), 0.0);
    assert!(metric(&ext, "ext.fallback_reclaimed_pages") > 0.0);
    assert_eq!(metric(&ext, "ext.evict_folios_calls"), metric(&ext, "ext.evict_folios_empty"));
    assert_same_counters(&ext, &builtin);
}

/// A loop over 16 MiB through 8 MiB: LRU faults on every read, MRU keeps most of a
/// memory's worth (cache_ext's file-search case).
#[test]
fn mru_beats_lru_on_a_loop_larger_than_memory() {
    let pages = 4 * 1024;
    let prog = program(vec![region("f", pages, AccessKind::FileRead)], vec![phase("loop", 3 * pages as u64, &[(0, Pattern::Sequential, 1.0)])]);
    let cfg = config(&[("machine.memory", "8M"), ("swap.device", "none"), ("block.read_ahead_kb", "0"), ("fault_around_bytes", "4096")]);
    let faults = |mru: bool| {
        let r = run_ext(&cfg, factory(move || Recency { mru, ..Default::default() }), generate(prog.clone(), 1).unwrap().as_mut(), 4096).unwrap_or_else(|(m, _)| panic!("{m}"));
        metric(&r, "major_faults") as u64
    };
    let (lru, mru) = (faults(false), faults(true));
    assert_eq!(lru, 3 * pages as u64);
    assert!(mru < lru * 3 / 4, "mru {mru} lru {lru}");
}

/// `admit_folio` refusing every folio: the policy hears of none, reclaim takes the
/// refused folios (the run still reclaims), invariants hold.
#[test]
fn refused_folios_never_reach_the_policy() {
    struct Refuse(Recency);
    impl CacheExtOps for Refuse {
        fn evict_folios(&mut self, ctx: &mut EvictionCtx) -> Result<(), String> {
            self.0.evict_folios(ctx)
        }
        fn folio_added(&mut self, f: Folio) {
            self.0.folio_added(f)
        }
        fn admit_folio(&mut self, _f: Folio) -> Result<bool, String> {
            Ok(false)
        }
    }
    let added = Arc::new(Mutex::new(0));
    let a = added.clone();
    let (cfg, prog) = mixed();
    let r = run_ext(&cfg, factory(move || Refuse(Recency { added: a.clone(), ..Default::default() })), generate(prog, 5).unwrap().as_mut(), 5000)
        .unwrap_or_else(|(m, _)| panic!("{m}"));
    assert_eq!(*added.lock().unwrap(), 0);
    assert_eq!(metric(&r, "ext.evict_folios_calls"), 0.0);
    assert!(vm(&r, "pgsteal_kswapd") + vm(&r, "pgsteal_direct") > 0);
}

/// A broken policy: the run stops with one message naming the hook and the folio, and
/// the machine left behind is consistent.
#[test]
fn a_broken_policy_stops_the_run_naming_the_hook_and_the_folio() {
    enum Bug {
        Twice,
        NotOffered,
        TooMany,
        Raises,
    }
    struct Broken(Recency, Bug);
    impl CacheExtOps for Broken {
        fn evict_folios(&mut self, ctx: &mut EvictionCtx) -> Result<(), String> {
            self.0.evict_folios(ctx)?;
            let first = ctx.folios_to_evict[0];
            match self.1 {
                Bug::Twice => *ctx.folios_to_evict.last_mut().unwrap() = first,
                Bug::NotOffered => ctx.folios_to_evict[0] = 1_000_000,
                Bug::TooMany => ctx.folios_to_evict.extend(self.0.order.values().skip(32).take(33)),
                Bug::Raises => return Err("ZeroDivisionError: division by zero".into()),
            }
            Ok(())
        }
        fn folio_added(&mut self, f: Folio) {
            self.0.folio_added(f)
        }
        fn folio_accessed(&mut self, f: Folio) {
            self.0.folio_accessed(f)
        }
        fn folio_removed(&mut self, f: Folio) {
            self.0.folio_removed(f)
        }
    }
    let (cfg, prog) = mixed();
    for (bug, want) in [
        (Bug::Twice, "policy test:ext: evict_folios: returned folio "),
        (Bug::NotOffered, "policy test:ext: evict_folios: returned folio 1000000, which it was not offered"),
        (Bug::TooMany, "folios; the eviction context holds 32"),
        (Bug::Raises, "policy test:ext: evict_folios: ZeroDivisionError: division by zero"),
    ] {
        let twice = matches!(bug, Bug::Twice);
        let f = factory(move || {
            Broken(
                Recency::default(),
                match bug {
                    Bug::Twice => Bug::Twice,
                    Bug::NotOffered => Bug::NotOffered,
                    Bug::TooMany => Bug::TooMany,
                    Bug::Raises => Bug::Raises,
                },
            )
        });
        let (msg, sim) = run_ext(&cfg, f, generate(prog.clone(), 5).unwrap().as_mut(), 5000).map(|_| ()).unwrap_err();
        assert!(msg.contains(want), "{msg}");
        if twice {
            assert!(msg.ends_with(" twice"), "{msg}");
        }
        assert!(!msg.contains('\n'));
        sim.check_invariants().unwrap();
    }
}

/// `init` failing: the machine is not built.
#[test]
fn a_failing_init_is_a_build_error() {
    struct NoInit;
    impl CacheExtOps for NoInit {
        fn init(&mut self, l: &LruvecInfo) -> Result<(), String> {
            Err(format!("no room for memcg '{}'", l.memcg))
        }
        fn evict_folios(&mut self, _ctx: &mut EvictionCtx) -> Result<(), String> {
            Ok(())
        }
    }
    let e = Simulation::with_policy(&SimConfig::default(), "test:ext", factory(|| NoInit)).map(|_| ()).unwrap_err();
    assert_eq!(e.to_string(), "policy test:ext: init: memcg '' node 0: no room for memcg ''");
}

mod exported {
    //! The C ABI of `rust:PATH:NAME` policies (policy/ext/abi.rs), without dlopen: this
    //! test binary exports policies as a library would and loads its own table.
    use super::*;
    use reclaimlab_core::policy::ext::abi;

    struct Panics;
    impl CacheExtOps for Panics {
        fn evict_folios(&mut self, _ctx: &mut EvictionCtx) -> Result<(), String> {
            panic!("index out of bounds")
        }
    }

    reclaimlab_core::export_cache_ext_policies! {
        "LRU" => |_| Ok(Box::new(Recency::default())),
        "Panics" => |_| Ok(Box::new(Panics)),
    }

    fn table(name: &str) -> Result<OpsFactory, String> {
        // SAFETY: the table is this binary's own static.
        unsafe { abi::factory(reclaimlab_policy_v1(), name) }
    }

    #[test]
    fn lru_through_the_c_abi_matches_cache_lru() {
        let (mut cfg, prog) = mixed();
        let ext = run_ext(&cfg, table("LRU").unwrap(), generate(prog.clone(), 5).unwrap().as_mut(), 5000).unwrap_or_else(|(m, _)| panic!("{m}"));
        cfg.set("policy", "cache:lru").unwrap();
        let builtin = run(&cfg, generate(prog, 5).unwrap().as_mut());
        assert_same_counters(&ext, &builtin);
    }

    #[test]
    fn a_panic_in_the_library_is_the_hooks_error_and_an_unknown_name_is_named() {
        let (cfg, prog) = mixed();
        let (msg, sim) = run_ext(&cfg, table("Panics").unwrap(), generate(prog, 5).unwrap().as_mut(), 5000).map(|_| ()).unwrap_err();
        assert_eq!(msg, "policy test:ext: evict_folios: panicked: index out of bounds");
        sim.check_invariants().unwrap();
        let e = Simulation::with_policy(&SimConfig::default(), "test:ext", table("Nope").unwrap()).map(|_| ()).unwrap_err();
        assert_eq!(e.to_string(), "policy test:ext: init: memcg '' node 0: no policy Nope in this library (it has: LRU Panics)");
    }
}
