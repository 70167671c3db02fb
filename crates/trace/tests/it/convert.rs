//! convert → native → info equals info of the source, for every source kind.

use crate::common::{data_dir, Scratch};
use reclaimlab_trace::gen::{generate, Program};
use reclaimlab_trace::{convert, info, open, AccessKind, AccessSource, NativeReader, TraceInfo};

fn check(make: &dyn Fn() -> Box<dyn AccessSource>, s: &Scratch, name: &str) -> TraceInfo {
    let out = s.path(&format!("{name}.rcl"));
    let mut src = make();
    let n = convert(src.as_mut(), &out).unwrap();
    let mut expect = info(make().as_mut()).unwrap();
    assert_eq!(n, expect.records);
    let mut native = NativeReader::open(&out).unwrap();
    let got = info(&mut native).unwrap();
    assert_eq!(got.format, "native");
    expect.format = "native".into();
    assert_eq!(got, expect, "{name}");
    // The native file knows its page space and cgroups up front.
    assert_eq!(native.meta().nr_pages, Some(src.nr_pages_seen()));
    got
}

#[test]
fn convert_info_round_trip() {
    let s = Scratch::new("conv");
    let lirs = check(&|| open(&data_dir().join("lirs/multi2.trace.gz"), None, None).unwrap(), &s, "multi2");
    assert_eq!((lirs.records, lirs.pages), (26_311, 5_684));
    assert_eq!((lirs.file, lirs.syscall, lirs.reads, lirs.has_time), (26_311, 26_311, 26_311, false));

    let addr = check(&|| open(&data_dir().join("spec2000-address/twolf.trace.gz"), None, None).unwrap(), &s, "twolf");
    assert_eq!((addr.records, addr.pages, addr.tick_ps, addr.has_time), (482_824, 89, 333, true));
    assert_eq!(addr.anon, addr.records);
    assert!(addr.total_gap_ticks > addr.records && addr.writes > 0);

    let csv = s.path("c.csv");
    std::fs::write(&csv, "page,op,cgroup,gap,type\n5,w,x,3,file\n6,r,,4,anon\n5,r,y,0,file\n").unwrap();
    let c = check(&|| open(&csv, None, None).unwrap(), &s, "csv");
    assert_eq!(c.cgroups, ["", "x", "y"]);
    assert_eq!((c.records, c.pages, c.writes, c.file, c.total_gap_ticks, c.tick_ps), (3, 2, 1, 2, 7, 1000));

    let g = check(&|| generate(Program::zipf(5000, 300_000, 1.1, AccessKind::FileMapped), 4).unwrap(), &s, "gen");
    assert_eq!(g.records, 300_000);
    assert!(g.pages <= 5000 && g.pages > 1000);
}

#[test]
fn failed_conversion_leaves_no_output() {
    let s = Scratch::new("convfail");
    let bad = s.path("bad.trace");
    std::fs::write(&bad, "1\n2\noops\n").unwrap();
    let mut src = open(&bad, Some("lirs"), None).unwrap();
    let out = s.path("out.rcl");
    assert!(convert(src.as_mut(), &out).is_err());
    assert_eq!(s.files(), ["bad.trace"]);
}

#[test]
fn convert_and_info_keep_a_programs_reclaim_ops() {
    use reclaimlab_trace::{Pattern, Phase, Reclaim, Region, Stream, TraceOp};
    let s = Scratch::new("convert-ops");
    let mut region = Region::new("heap", 100, AccessKind::AnonMapped);
    region.cgroup = "app".into();
    let phase =
        |name: &str, reclaims: Vec<Reclaim>| Phase { name: name.into(), accesses: 1000, streams: vec![Stream { region: 0, pattern: Pattern::Uniform, weight: 1.0 }], reclaims };
    let r = Reclaim { cgroup: "app".into(), bytes: 64 << 10, swappiness: Some(10) };
    let prog = Program { regions: vec![region], phases: vec![phase("warm", vec![]), phase("cold", vec![r])], repeat: 2 };
    let src = generate(prog.clone(), 1).unwrap();
    // Phase "cold" starts at records 1000 and 3000 (the second round).
    let want = vec![TraceOp::memory_reclaim(1000, 1, 64 << 10, Some(10)), TraceOp::memory_reclaim(3000, 1, 64 << 10, Some(10))];
    assert_eq!(src.meta().ops, want);
    let out = s.path("p.rcl");
    let mut src = generate(prog, 1).unwrap();
    assert_eq!(reclaimlab_trace::convert(&mut *src, &out).unwrap(), 4000);
    let mut back = reclaimlab_trace::open(&out, None, None).unwrap();
    assert_eq!(back.meta().ops, want);
    let i = reclaimlab_trace::info(&mut *back).unwrap();
    assert_eq!((i.records, i.ops.len()), (4000, 2));

    // A reclaim for a cgroup no region is in, and one of 0 bytes, are program errors.
    let bad = |cgroup: &str, bytes| {
        let mut region = Region::new("heap", 100, AccessKind::AnonMapped);
        region.cgroup = "app".into();
        let r = Reclaim { cgroup: cgroup.into(), bytes, swappiness: None };
        generate(Program { regions: vec![region], phases: vec![phase("p", vec![r])], repeat: 1 }, 1).err().unwrap().to_string()
    };
    assert!(bad("db", 4096).contains("memory.reclaim for unknown cgroup \"db\""), "{}", bad("db", 4096));
    assert!(bad("app", 0).contains("memory.reclaim of 0 bytes"));
}
