//! LIRS block-trace reader: counts on the real traces, parsing rules, errors.

use crate::common::{data_dir, read_all, write_gz, Scratch};
use reclaimlab_trace::lirs::LirsReader;
use reclaimlab_trace::{flags, AccessKind, AccessSource, ErrorKind};

/// (trace, references, distinct blocks) as this reader counts them. These match the
/// table in data/traces/README.md except where that table counted `wc -l` lines; see the
/// "Counting" note there (2_pools, cs: `*` marker lines; gli: a blank line; backf,
/// zigzag: no final newline).
const TRACES: [(&str, u64, u64); 13] = [
    ("2_pools", 100_000, 9_939),
    ("backf", 9_000, 751),
    ("cpp", 9_047, 1_223),
    ("cs", 6_781, 1_409),
    ("gli", 6_015, 2_529),
    ("loop", 505_500, 1_011),
    ("multi1", 15_858, 2_606),
    ("multi2", 26_311, 5_684),
    ("multi3", 30_241, 7_454),
    ("ps", 10_448, 3_083),
    ("scan", 50_025, 2_001),
    ("sprite", 133_996, 7_075),
    ("zigzag", 52_001, 2_001),
];

#[test]
fn real_lirs_traces_have_reference_counts() {
    for (name, refs, distinct) in TRACES {
        let p = data_dir().join(format!("lirs/{name}.trace.gz"));
        let mut r = LirsReader::open(&p, None).unwrap();
        let recs = read_all(&mut r).unwrap();
        assert_eq!(recs.len() as u64, refs, "{name} references");
        assert_eq!(r.nr_pages_seen() as u64, distinct, "{name} distinct blocks");
        // Dense ids in order of first appearance: each new id is exactly max+1.
        let mut next = 0;
        for a in &recs {
            assert!(a.page <= next);
            if a.page == next {
                next += 1;
            }
            assert_eq!(a.flags, AccessKind::FileRead.flags());
            assert_eq!((a.cgroup, a.gap), (0, 0));
        }
        assert_eq!(next as u64, distinct);
        assert_eq!(r.progress(), Some(1.0), "{name}");
    }
}

#[test]
fn loop_trace_is_a_1011_block_cycle() {
    // loop.trace (CRLF line endings) is 0..=1010 repeated 500 times.
    let mut r = LirsReader::open(&data_dir().join("lirs/loop.trace.gz"), None).unwrap();
    let recs = read_all(&mut r).unwrap();
    for (i, a) in recs.iter().enumerate() {
        assert_eq!(a.page as usize, i % 1011);
    }
}

#[test]
fn parsing_rules_and_kind() {
    let s = Scratch::new("lirs");
    let p = s.path("t.trace");
    std::fs::write(&p, "  7 \n\n*\n42\r\n7\n 18446744073709551615\n").unwrap();
    let mut r = LirsReader::open(&p, Some(AccessKind::AnonMapped)).unwrap();
    let recs = read_all(&mut r).unwrap();
    let pages: Vec<u32> = recs.iter().map(|a| a.page).collect();
    assert_eq!(pages, [0, 1, 0, 2]);
    assert!(recs.iter().all(|a| a.flags == 0));
    assert_eq!(r.meta().format, "lirs");
    assert_eq!(r.meta().tick_ps, 0);
    // Same content gzipped gives the same records.
    let g = s.path("t.trace.gz");
    write_gz(&g, "  7 \n\n*\n42\r\n7\n 18446744073709551615\n");
    let mut r = LirsReader::open(&g, None).unwrap();
    let recs2 = read_all(&mut r).unwrap();
    assert_eq!(recs2.iter().map(|a| a.page).collect::<Vec<_>>(), pages);
    assert!(recs2.iter().all(|a| a.flags == flags::FILE | flags::SYSCALL));
}

#[test]
fn malformed_line_is_parse_error_with_line_number() {
    let s = Scratch::new("lirsbad");
    for (text, line) in [("1\n2\n\nx3\n", 4), ("1\n-2\n", 2), ("1 2\n", 1), ("18446744073709551616\n", 1)] {
        let p = s.path("bad.trace.gz");
        write_gz(&p, text);
        let mut r = LirsReader::open(&p, None).unwrap();
        let e = read_all(&mut r).unwrap_err();
        assert!(matches!(e.kind, ErrorKind::Parse { line: l, .. } if l == line), "{text:?}: {e:?}");
        assert_eq!(e.path.as_deref(), Some(p.as_path()));
    }
}

#[test]
fn missing_file_is_io_error_with_path() {
    let p = data_dir().join("lirs/does-not-exist.trace");
    let e = LirsReader::open(&p, None).err().unwrap();
    assert!(matches!(e.kind, ErrorKind::Io(_)));
    assert!(e.to_string().contains("does-not-exist.trace"));
}
