//! SPEC CPU2000 address-trace reader: counts on the real traces, parsing, errors.

use crate::common::{data_dir, read_all, Scratch};
use reclaimlab_trace::address::{AddressReader, DEFAULT_TICK_PS};
use reclaimlab_trace::{flags, AccessKind, AccessSource, ErrorKind};

/// (trace, references, distinct 4 KiB pages) from data/traces/README.md.
const TRACES: [(&str, u64, u64); 5] = [("gcc", 515_683, 294), ("gzip", 481_044, 39_856), ("mcf", 727_230, 1_442), ("swim", 303_193, 135), ("twolf", 482_824, 89)];

#[test]
fn real_address_traces_have_reference_counts() {
    for (name, refs, pages) in TRACES {
        let p = data_dir().join(format!("spec2000-address/{name}.trace.gz"));
        let mut r = AddressReader::open(&p, None, None).unwrap();
        assert_eq!(r.meta().tick_ps, DEFAULT_TICK_PS);
        let recs = read_all(&mut r).unwrap();
        assert_eq!(recs.len() as u64, refs, "{name} references");
        assert_eq!(r.nr_pages_seen() as u64, pages, "{name} distinct pages");
        assert!(recs.iter().all(|a| a.flags & !flags::WRITE == 0), "{name}: anon mapped");
        assert!(recs.iter().any(|a| a.is_write()) && recs.iter().any(|a| !a.is_write()));
        assert!(recs.iter().any(|a| a.gap > 0));
    }
}

#[test]
fn first_lines_of_gcc_decode_exactly() {
    // gcc.trace.gz begins: "s 0x1fffff50 1", "l 0x1fffff58 1", "l 0x1fffff88 6",
    // "l 0x1fffff90 2", "l 0x1fffff98 2" — all in page 0x1ffff.
    let mut r = AddressReader::open(&data_dir().join("spec2000-address/gcc.trace.gz"), None, Some(1000)).unwrap();
    let mut buf = Vec::new();
    r.read_batch(&mut buf, 5).unwrap();
    let got: Vec<(u32, bool, u32)> = buf.iter().map(|a| (a.page, a.is_write(), a.gap)).collect();
    assert_eq!(got, [(0, true, 1), (0, false, 1), (0, false, 6), (0, false, 2), (0, false, 2)]);
    assert_eq!(r.meta().tick_ps, 1000);
}

#[test]
fn parsing_and_kind_override() {
    let s = Scratch::new("addr");
    let p = s.path("a.trace");
    std::fs::write(&p, "l 0x1000 3\n\ns 0x1fff 0\n  l   0X2000   7  \nl 0x0 1\n").unwrap();
    let mut r = AddressReader::open(&p, Some(AccessKind::FileMapped), None).unwrap();
    let recs = read_all(&mut r).unwrap();
    let got: Vec<(u32, u8, u32)> = recs.iter().map(|a| (a.page, a.flags, a.gap)).collect();
    let f = flags::FILE;
    assert_eq!(got, [(0, f, 3), (0, f | flags::WRITE, 0), (1, f, 7), (2, f, 1)]);
}

#[test]
fn malformed_lines_are_parse_errors_with_line_numbers() {
    let s = Scratch::new("addrbad");
    let cases = [
        ("l 0x10 1\nx 0x10 1\n", 2, "operation"),
        ("l 0x10 1\nl 0x10 1\n\nl 10 1\n", 4, "0x"),
        ("l 0xZZ 1\n", 1, "hexadecimal"),
        ("l 0x10 -1\n", 1, "gap"),
        ("l 0x10\n", 1, "expected"),
        ("l 0x10 1 9\n", 1, "expected"),
    ];
    for (text, line, what) in cases {
        let p = s.path("bad.trace");
        std::fs::write(&p, text).unwrap();
        let mut r = AddressReader::open(&p, None, None).unwrap();
        let e = read_all(&mut r).unwrap_err();
        match &e.kind {
            ErrorKind::Parse { line: l, what: w } => {
                assert_eq!(*l, line, "{text:?}");
                assert!(w.contains(what), "{w}");
            }
            k => panic!("{text:?}: {k:?}"),
        }
    }
}
