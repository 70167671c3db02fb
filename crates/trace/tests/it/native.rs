//! Native format: round trips, truncation, corruption, bad headers, atomic writes.

use crate::common::{read_all, Scratch};
use proptest::prelude::*;
use reclaimlab_trace::native::{self, NativeReader, NativeWriter, BLOCK_RECORDS, HEADER_LEN};
use reclaimlab_trace::{flags, Access, AccessSource, ErrorKind};

fn records(n: usize, timed: bool, cgroups: u16) -> Vec<Access> {
    let mut rng = reclaimlab_trace::Rng::new(n as u64);
    (0..n)
        .map(|_| Access { page: rng.below(5000) as u32, cgroup: rng.below(cgroups as u64) as u16, flags: rng.below(16) as u8, gap: if timed { rng.next_u32() } else { 0 } })
        .collect()
}

fn write(path: &std::path::Path, recs: &[Access], tick_ps: u64, cgroups: &[&str]) -> u64 {
    let mut w = NativeWriter::create(path, tick_ps).unwrap();
    for c in cgroups {
        w.cgroup(c).unwrap();
    }
    // Uneven slices to cross block boundaries mid-slice.
    for chunk in recs.chunks(10_007) {
        w.write_all(chunk).unwrap();
    }
    w.finish().unwrap()
}

#[test]
fn round_trip_without_time() {
    let s = Scratch::new("rt");
    let p = s.path("a.rcl");
    let recs = records(3 * BLOCK_RECORDS + 123, false, 3);
    assert_eq!(write(&p, &recs, 0, &["", "web", "db"]), recs.len() as u64);
    let mut r = NativeReader::open(&p).unwrap();
    let m = r.meta().clone();
    assert_eq!(m.format, "native");
    assert_eq!(m.nr_records, Some(recs.len() as u64));
    assert_eq!(m.nr_pages, Some(recs.iter().map(|a| a.page).max().unwrap() + 1));
    assert_eq!(m.cgroups, vec!["", "web", "db"]);
    assert_eq!(m.tick_ps, 0);
    assert_eq!(read_all(&mut r).unwrap(), recs);
    assert_eq!(r.progress(), Some(1.0));
    // File size is exactly the documented layout: 8-byte records.
    let len = std::fs::metadata(&p).unwrap().len();
    let table = 3 * 2 + 3 + 2;
    assert_eq!(len, HEADER_LEN as u64 + 4 * 12 + recs.len() as u64 * 8 + table);
}

#[test]
fn round_trip_with_time() {
    let s = Scratch::new("rtt");
    let p = s.path("t.rcl");
    let recs = records(BLOCK_RECORDS, true, 5);
    write(&p, &recs, 333, &["", "a", "b", "c", "d"]);
    let mut r = NativeReader::open(&p).unwrap();
    assert_eq!(r.meta().tick_ps, 333);
    assert_eq!(r.meta().cgroups.len(), 5);
    assert_eq!(read_all(&mut r).unwrap(), recs);
    let len = std::fs::metadata(&p).unwrap().len();
    assert_eq!(len, HEADER_LEN as u64 + 12 + recs.len() as u64 * 12 + (5 * 2 + 4));
}

#[test]
fn empty_trace_round_trips() {
    let s = Scratch::new("empty");
    let p = s.path("e.rcl");
    assert_eq!(write(&p, &[], 0, &[]), 0);
    let mut r = NativeReader::open(&p).unwrap();
    assert_eq!(r.meta().nr_records, Some(0));
    assert_eq!(r.meta().cgroups, vec![""]);
    assert!(read_all(&mut r).unwrap().is_empty());
}

#[test]
fn declared_pages_and_late_cgroups() {
    let s = Scratch::new("late");
    let p = s.path("l.rcl");
    let mut w = NativeWriter::create(&p, 0).unwrap();
    w.write(&Access { page: 3, cgroup: 1, flags: 0, gap: 0 }).unwrap();
    w.set_nr_pages(100);
    // cgroup 1 registered after the record using it.
    assert_eq!(w.cgroup("late").unwrap(), 1);
    w.finish().unwrap();
    let r = NativeReader::open(&p).unwrap();
    assert_eq!(r.meta().nr_pages, Some(100));
    assert_eq!(r.meta().cgroups, vec!["", "late"]);
}

#[test]
fn writer_rejects_unregistered_cgroup_and_leaves_nothing() {
    let s = Scratch::new("unreg");
    let p = s.path("u.rcl");
    let mut w = NativeWriter::create(&p, 0).unwrap();
    w.write(&Access { page: 0, cgroup: 2, flags: 0, gap: 0 }).unwrap();
    let e = w.finish().unwrap_err();
    assert!(matches!(e.kind, ErrorKind::InvalidArgument(_)), "{e}");
    assert!(s.files().is_empty(), "{:?}", s.files());
}

#[test]
fn writer_rejects_bad_flags_and_untimed_gaps() {
    let s = Scratch::new("badw");
    let mut w = NativeWriter::create(&s.path("x.rcl"), 0).unwrap();
    let e = w.write(&Access { page: 0, cgroup: 0, flags: 0x80, gap: 0 }).unwrap_err();
    assert!(e.to_string().contains("record 0: invalid flags 0x80"), "{e}");
    let e = w.write(&Access { page: 0, cgroup: 0, flags: 0, gap: 5 }).unwrap_err();
    assert!(matches!(e.kind, ErrorKind::InvalidArgument(_)), "{e}");
}

#[test]
fn dropped_writer_leaves_no_file() {
    let s = Scratch::new("drop");
    let p = s.path("d.rcl");
    {
        let mut w = NativeWriter::create(&p, 0).unwrap();
        w.write_all(&records(BLOCK_RECORDS + 5, false, 1)).unwrap();
        assert_eq!(s.files().len(), 1, "temp file exists while writing");
        assert!(!p.exists(), "target must not exist before finish");
    }
    assert!(s.files().is_empty(), "{:?}", s.files());
}

#[test]
fn truncation_is_reported_with_record_index_never_panics() {
    let s = Scratch::new("trunc");
    let p = s.path("full.rcl");
    let recs = records(2 * BLOCK_RECORDS + 10, true, 2);
    write(&p, &recs, 1000, &["", "x"]);
    let bytes = std::fs::read(&p).unwrap();
    let rl = 12u64;
    let block = 12 + BLOCK_RECORDS as u64 * rl;
    // (cut offset, the record index the error must name)
    let cuts: Vec<(u64, u64)> = vec![
        (3, 0),
        (HEADER_LEN as u64 - 1, 0),
        (HEADER_LEN as u64, 0),
        (HEADER_LEN as u64 + 12 + 5 * rl + 7, 5),
        (HEADER_LEN as u64 + block, BLOCK_RECORDS as u64),
        (HEADER_LEN as u64 + block + 12 + 100 * rl, BLOCK_RECORDS as u64 + 100),
        (HEADER_LEN as u64 + 2 * block + 12 + 10 * rl, recs.len() as u64), // table cut off
        (bytes.len() as u64 - 1, recs.len() as u64),
    ];
    for (cut, want) in cuts {
        let t = s.path(&format!("cut{cut}.rcl"));
        std::fs::write(&t, &bytes[..cut as usize]).unwrap();
        let e = match NativeReader::open(&t) {
            Err(e) => e,
            Ok(mut r) => read_all(&mut r).unwrap_err(),
        };
        assert_eq!(e.path.as_deref(), Some(t.as_path()));
        match e.kind {
            ErrorKind::Truncated { record } => assert_eq!(record, want, "cut at {cut}"),
            ref k => panic!("cut at {cut}: expected Truncated, got {k:?}"),
        }
        assert!(e.to_string().contains(&t.display().to_string()));
    }
}

#[test]
fn truncation_after_open_is_reported_while_reading() {
    // The file shrinks between open() and reading (e.g. another process truncates it).
    let s = Scratch::new("shrink");
    let p = s.path("s.rcl");
    let recs = records(2 * BLOCK_RECORDS, false, 1);
    write(&p, &recs, 0, &[]);
    let mut r = NativeReader::open(&p).unwrap();
    let f = std::fs::OpenOptions::new().write(true).open(&p).unwrap();
    f.set_len((HEADER_LEN + 12 + BLOCK_RECORDS * 8 + 12 + 40 * 8 + 3) as u64).unwrap();
    let e = read_all(&mut r).unwrap_err();
    assert!(matches!(e.kind, ErrorKind::Truncated { record } if record == BLOCK_RECORDS as u64 + 40), "{e:?}");
}

#[test]
fn flipped_payload_byte_is_corrupt_with_block_range() {
    let s = Scratch::new("flip");
    let p = s.path("f.rcl");
    let recs = records(3 * BLOCK_RECORDS, false, 1);
    write(&p, &recs, 0, &[]);
    let mut bytes = std::fs::read(&p).unwrap();
    // Record 70000 lives in block 1 (records 65536..131072).
    let block1 = HEADER_LEN + 12 + BLOCK_RECORDS * 8;
    let off = block1 + 12 + (70_000 - BLOCK_RECORDS) * 8 + 2;
    bytes[off] ^= 0x10;
    std::fs::write(&p, &bytes).unwrap();
    let mut r = NativeReader::open(&p).unwrap();
    let mut buf = Vec::new();
    // The first block still reads fine.
    assert_eq!(r.read_batch(&mut buf, BLOCK_RECORDS).unwrap(), BLOCK_RECORDS);
    assert_eq!(buf[..], recs[..BLOCK_RECORDS]);
    let e = r.read_batch(&mut buf, 10).unwrap_err();
    match &e.kind {
        ErrorKind::Corrupt { record, what } => {
            assert_eq!(*record, 65536);
            assert!(what.contains("records 65536..131072"), "{what}");
        }
        k => panic!("expected Corrupt, got {k:?}"),
    }
    assert_eq!(e.path.as_deref(), Some(p.as_path()));
}

#[test]
fn invalid_record_fields_are_corrupt_with_record_index() {
    // Build a valid file, then rewrite one record field and fix its block checksum so
    // only field validation can catch it.
    let s = Scratch::new("field");
    let p = s.path("x.rcl");
    let recs: Vec<Access> = (0..100).map(|i| Access { page: i, cgroup: 0, flags: flags::WRITE, gap: 0 }).collect();
    write(&p, &recs, 0, &[]);
    let orig = std::fs::read(&p).unwrap();
    let payload = HEADER_LEN + 12;
    let cases: [(usize, u8, &str); 4] = [
        (37 * 8 + 3, 0x01, "page"),     // page 37 → 0x01000025 ≥ nr_pages
        (41 * 8 + 4, 0x80, "flags"),    // unknown flag bit
        (42 * 8 + 5, 0x01, "reserved"), // reserved byte
        (43 * 8 + 6, 0x05, "cgroup"),   // cgroup 5 ≥ nr_cgroups 1
    ];
    for (at, val, what) in cases {
        let mut b = orig.clone();
        b[payload + at] = val;
        let sum = native::checksum(&b[payload..payload + 100 * 8]);
        b[HEADER_LEN + 4..HEADER_LEN + 12].copy_from_slice(&sum.to_le_bytes());
        std::fs::write(&p, &b).unwrap();
        let mut r = NativeReader::open(&p).unwrap();
        let e = read_all(&mut r).unwrap_err();
        match &e.kind {
            ErrorKind::Corrupt { record, what: w } => {
                assert_eq!(*record, (at / 8) as u64, "{what}");
                assert!(w.contains(what), "{w}");
            }
            k => panic!("{what}: expected Corrupt, got {k:?}"),
        }
    }
}

#[test]
fn trailing_garbage_is_corrupt() {
    let s = Scratch::new("trail");
    let p = s.path("g.rcl");
    write(&p, &records(10, false, 1), 0, &[]);
    let mut b = std::fs::read(&p).unwrap();
    b.extend_from_slice(b"junk");
    std::fs::write(&p, &b).unwrap();
    let e = NativeReader::open(&p).err().unwrap();
    assert!(matches!(&e.kind, ErrorKind::Corrupt { record: 10, what } if what.contains("4 bytes of trailing garbage")), "{e:?}");
}

#[test]
fn bad_magic_version_and_header_fields() {
    let s = Scratch::new("magic");
    let p = s.path("h.rcl");
    write(&p, &records(10, false, 1), 0, &[]);
    let orig = std::fs::read(&p).unwrap();
    let cases: [(usize, u8, &str); 5] = [(0, b'X', "bad magic"), (8, 3, "unsupported version 3"), (10, 32, "header_len"), (12, 0x08, "unknown header flags"), (30, 1, "reserved")];
    for (at, val, want) in cases {
        let mut b = orig.clone();
        b[at] = val;
        std::fs::write(&p, &b).unwrap();
        let e = NativeReader::open(&p).err().unwrap();
        match &e.kind {
            ErrorKind::BadHeader(m) => assert!(m.contains(want), "{m}"),
            k => panic!("byte {at}: expected BadHeader, got {k:?}"),
        }
        assert_eq!(e.path.as_deref(), Some(p.as_path()));
    }
    // A text file is not a native trace.
    std::fs::write(&p, "1\n2\n3\n").unwrap();
    assert!(matches!(NativeReader::open(&p).err().unwrap().kind, ErrorKind::BadHeader(_)));
}

#[test]
fn damaged_cgroup_table_is_corrupt() {
    let s = Scratch::new("table");
    let p = s.path("t.rcl");
    write(&p, &records(10, false, 2), 0, &["", "abc"]);
    let mut b = std::fs::read(&p).unwrap();
    let n = b.len();
    b[n - 1] ^= 0x20; // "abc" → "abC"
    std::fs::write(&p, &b).unwrap();
    let e = NativeReader::open(&p).err().unwrap();
    assert!(matches!(&e.kind, ErrorKind::Corrupt { what, .. } if what.contains("cgroup table checksum")), "{e:?}");
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(48))]
    #[test]
    fn proptest_round_trip(
        raw in proptest::collection::vec((0u32..1_000_000, 0u16..4, 0u8..8, any::<u32>()), 0..3000),
        timed in any::<bool>(),
        batch in 1usize..5000,
    ) {
        let s = Scratch::new("prop");
        let p = s.path("p.rcl");
        let recs: Vec<Access> = raw.iter().map(|&(page, cgroup, flags, gap)| Access {
            page, cgroup, flags, gap: if timed { gap } else { 0 },
        }).collect();
        let mut w = NativeWriter::create(&p, if timed { 7 } else { 0 }).unwrap();
        w.set_cgroups(&["".into(), "a".into(), "b".into(), "c".into()]).unwrap();
        w.write_all(&recs).unwrap();
        w.finish().unwrap();
        let mut r = NativeReader::open(&p).unwrap();
        let mut got = Vec::new();
        let mut buf = Vec::new();
        while r.read_batch(&mut buf, batch).unwrap() > 0 {
            prop_assert!(buf.len() <= batch);
            got.extend_from_slice(&buf);
        }
        prop_assert_eq!(got, recs);
    }
}

#[test]
fn every_truncation_offset_of_a_small_file_is_truncated() {
    let s = Scratch::new("every");
    let p = s.path("small.rcl");
    let recs = records(5, true, 2);
    write(&p, &recs, 10, &["", "g"]);
    let bytes = std::fs::read(&p).unwrap();
    for cut in 1..bytes.len() {
        let t = s.path("cut.rcl");
        std::fs::write(&t, &bytes[..cut]).unwrap();
        let e = NativeReader::open(&t).err().expect("truncated file must not open");
        let want = (cut.saturating_sub(HEADER_LEN + 12) / 12).min(5) as u64;
        assert!(matches!(e.kind, ErrorKind::Truncated { record } if record == want), "cut {cut}: {e:?}");
    }
}

#[test]
fn file_table_round_trips_and_is_checked() {
    use reclaimlab_trace::FileRange;
    let s = Scratch::new("files");
    let p = s.path("f.rcl");
    let files = vec![FileRange { name: "data/a.db".into(), first: 0, nr_pages: 100, advice: 0 }, FileRange { name: "b".into(), first: 150, nr_pages: 7, advice: 0 }];
    let mut w = NativeWriter::create(&p, 0).unwrap();
    w.cgroup("wl").unwrap();
    w.set_files(&files).unwrap();
    w.write_all(&[Access { page: 3, cgroup: 1, flags: flags::FILE, gap: 0 }]).unwrap();
    w.finish().unwrap();
    let r = NativeReader::open(&p).unwrap();
    assert_eq!(r.meta().files, files);
    assert_eq!(r.meta().cgroups, vec!["".to_string(), "wl".to_string()]);
    assert_ne!(r.header().flags & native::FLAG_HAS_FILES, 0);

    // A trace without files keeps the v1 layout byte for byte (no flag, no table).
    let q = s.path("g.rcl");
    let mut w = NativeWriter::create(&q, 0).unwrap();
    w.write_all(&[Access { page: 3, cgroup: 0, flags: flags::FILE, gap: 0 }]).unwrap();
    w.finish().unwrap();
    let r = NativeReader::open(&q).unwrap();
    assert!(r.meta().files.is_empty());
    assert_eq!(r.header().flags & native::FLAG_HAS_FILES, 0);

    // Overlapping ranges are refused before anything is written.
    let mut w = NativeWriter::create(&s.path("h.rcl"), 0).unwrap();
    let bad = [FileRange { name: "x".into(), first: 0, nr_pages: 10, advice: 0 }, FileRange { name: "y".into(), first: 5, nr_pages: 1, advice: 0 }];
    let e = w.set_files(&bad).unwrap_err().to_string();
    assert!(e.contains("inside the previous file"), "{e}");
}

#[test]
fn corrupt_file_table_is_reported() {
    use reclaimlab_trace::FileRange;
    let s = Scratch::new("files-bad");
    let p = s.path("f.rcl");
    let mut w = NativeWriter::create(&p, 0).unwrap();
    w.set_files(&[FileRange { name: "a".into(), first: 0, nr_pages: 4, advice: 0 }]).unwrap();
    w.write_all(&[Access { page: 1, cgroup: 0, flags: flags::FILE, gap: 0 }]).unwrap();
    w.finish().unwrap();
    // Cut the file table's name short, and fix the header's table length and checksum so
    // that only the table's own structure is wrong.
    let mut bytes = std::fs::read(&p).unwrap();
    bytes.pop();
    let mut h = native::Header::decode(&bytes[..HEADER_LEN].try_into().unwrap()).unwrap();
    h.table_len -= 1;
    let off = h.table_offset as usize;
    h.table_checksum = native::checksum(&bytes[off..]);
    bytes[..HEADER_LEN].copy_from_slice(&h.encode());
    std::fs::write(&p, &bytes).unwrap();
    let e = NativeReader::open(&p).err().unwrap().to_string();
    assert!(e.contains("file table ends inside name 0"), "{e}");
}

#[test]
fn madvise_ops_round_trip_and_bad_ones_are_refused() {
    use reclaimlab_trace::{check_ops, OpKind, TraceOp, MADV_DONTNEED, MADV_HUGEPAGE, MADV_NOHUGEPAGE};
    let s = Scratch::new("madvise");
    let p = s.path("m.rcl");
    let ops = vec![
        TraceOp::madvise(0, 0, 512, 1024, MADV_HUGEPAGE),
        TraceOp::memory_reclaim(0, 0, 4096, None),
        TraceOp::madvise(2, 0, 1536, 512, MADV_NOHUGEPAGE),
        TraceOp::madvise(3, 0, 0, u32::MAX, MADV_DONTNEED),
    ];
    let mut w = NativeWriter::create(&p, 0).unwrap();
    w.set_cgroups(&["".into()]).unwrap();
    for op in &ops[..3] {
        w.op(op.clone()).unwrap();
    }
    let recs: Vec<Access> = (0..3).map(|i| Access { page: i, cgroup: 0, flags: 0, gap: 0 }).collect();
    w.write_all(&recs).unwrap();
    w.op(ops[3].clone()).unwrap();
    w.finish().unwrap();
    let r = NativeReader::open(&p).unwrap();
    assert_eq!(r.meta().ops, ops);
    assert!(matches!(r.meta().ops[2].kind, OpKind::Madvise { first: 1536, nr_pages: 512, advice: 15 }));
    // An unknown advice, an empty range and one past the id space are refused.
    for (op, what) in [
        (TraceOp::madvise(0, 0, 0, 8, 3), "advice 3"),
        (TraceOp::madvise(0, 0, 8, 0, MADV_HUGEPAGE), "empty"),
        (TraceOp::madvise(0, 0, u32::MAX, 2, MADV_HUGEPAGE), "past the 32-bit"),
    ] {
        let e = check_ops(&[op], 1, 1).unwrap_err();
        assert!(e.contains(what), "{e}");
    }
}

#[test]
fn op_table_round_trips_after_the_file_table() {
    use reclaimlab_trace::{FileRange, OpKind, TraceOp};
    let s = Scratch::new("ops");
    let p = s.path("o.rcl");
    let files = vec![FileRange { name: "d".into(), first: 0, nr_pages: 8, advice: 0 }];
    let ops = vec![
        TraceOp::memory_reclaim(0, 1, 64 << 20, None),
        TraceOp::memory_reclaim(2, 2, 4096, Some(0)),
        TraceOp::memory_reclaim(2, 0, 1 << 30, Some(200)),
        TraceOp::memory_reclaim(3, 1, 12288, None),
    ];
    let mut w = NativeWriter::create(&p, 0).unwrap();
    w.set_cgroups(&["".into(), "a".into(), "b".into()]).unwrap();
    w.set_files(&files).unwrap();
    for op in &ops[..3] {
        w.op(op.clone()).unwrap();
    }
    let recs: Vec<Access> = (0..3).map(|i| Access { page: i, cgroup: 1, flags: flags::FILE, gap: 0 }).collect();
    w.write_all(&recs).unwrap();
    // An op at the record count goes after the last record.
    w.op(ops[3].clone()).unwrap();
    // One before a record already written is refused.
    let e = w.op(TraceOp::memory_reclaim(1, 1, 4096, None)).unwrap_err().to_string();
    assert!(e.contains("op at record 1 comes after 3"), "{e}");
    w.finish().unwrap();
    let mut r = NativeReader::open(&p).unwrap();
    assert_eq!(r.meta().ops, ops);
    assert_eq!(r.meta().files, files);
    assert_eq!(r.header().flags, native::FLAG_HAS_FILES | native::FLAG_HAS_OPS);
    assert!(matches!(r.meta().ops[1].kind, OpKind::MemoryReclaim { bytes: 4096, swappiness: Some(0) }));
    // The reader's position is the index of the next record.
    assert_eq!(r.position(), Some(0));
    let mut buf = Vec::new();
    assert_eq!(r.read_batch(&mut buf, 2).unwrap(), 2);
    assert_eq!(r.position(), Some(2));
    // Layout: cgroup entries (2 + 2·2 + 1·2 bytes), file table (4 + 11 + 1), op table (4 + 4·20).
    let len = std::fs::metadata(&p).unwrap().len();
    assert_eq!(len, HEADER_LEN as u64 + 12 + 3 * 8 + (2 + 3 + 3) + (4 + 11 + 1) + (4 + 4 * native::OP_LEN as u64));
}

#[test]
fn bad_ops_are_refused_by_writer_and_reader() {
    use reclaimlab_trace::TraceOp;
    let s = Scratch::new("ops-bad");
    let rec = Access { page: 0, cgroup: 0, flags: 0, gap: 0 };
    // Writer: zero bytes, swappiness over 200, an unknown cgroup, an op past the end.
    let mut w = NativeWriter::create(&s.path("a.rcl"), 0).unwrap();
    let e = w.op(TraceOp::memory_reclaim(0, 0, 0, None)).unwrap_err().to_string();
    assert!(e.contains("memory.reclaim of 0 bytes"), "{e}");
    let e = w.op(TraceOp::memory_reclaim(0, 0, 4096, Some(201))).unwrap_err().to_string();
    assert!(e.contains("swappiness=201 is outside 0..=200"), "{e}");
    w.op(TraceOp::memory_reclaim(0, 3, 4096, None)).unwrap();
    w.write(&rec).unwrap();
    let e = w.finish().unwrap_err().to_string();
    assert!(e.contains("names cgroup 3 but the trace has 1"), "{e}");
    let mut w = NativeWriter::create(&s.path("b.rcl"), 0).unwrap();
    w.op(TraceOp::memory_reclaim(5, 0, 4096, None)).unwrap();
    w.write(&rec).unwrap();
    let e = w.finish().unwrap_err().to_string();
    assert!(e.contains("past the trace's end (1 records)"), "{e}");
    assert!(!s.path("b.rcl").exists());

    // Reader: an op table whose kind byte is unknown (checksum fixed so that only the
    // table's content is wrong).
    let p = s.path("c.rcl");
    let mut w = NativeWriter::create(&p, 0).unwrap();
    w.op(TraceOp::memory_reclaim(0, 0, 4096, None)).unwrap();
    w.write(&rec).unwrap();
    w.finish().unwrap();
    let mut bytes = std::fs::read(&p).unwrap();
    let n = bytes.len();
    bytes[n - 10] = 9; // the kind byte of the last (only) entry
    let mut h = native::Header::decode(&bytes[..HEADER_LEN].try_into().unwrap()).unwrap();
    h.table_checksum = native::checksum(&bytes[h.table_offset as usize..]);
    bytes[..HEADER_LEN].copy_from_slice(&h.encode());
    std::fs::write(&p, &bytes).unwrap();
    let e = NativeReader::open(&p).err().unwrap().to_string();
    assert!(e.contains("op 0 has unknown kind 9"), "{e}");
}

/// issue 24: a header `tick_ps` near 2^64 made the replay wrap its clock (46 s, a wrapped
/// runtime); tick_ps is bounded at one second and a trace's time at 2^62 ps.
#[test]
fn tick_and_duration_are_bounded() {
    let s = Scratch::new("tick");
    let p = s.path("t.rcl");
    write(&p, &records(10, true, 1), 1000, &[]);
    let mut b = std::fs::read(&p).unwrap();
    b[32..40].copy_from_slice(&(u64::MAX - 5).to_le_bytes());
    std::fs::write(&p, &b).unwrap();
    match NativeReader::open(&p).err().unwrap().kind {
        ErrorKind::BadHeader(m) => assert!(m.contains("tick_ps is 18446744073709551610, over the limit"), "{m}"),
        k => panic!("expected BadHeader, got {k:?}"),
    }
    // The writer refuses to make such a file.
    assert!(NativeWriter::create(&s.path("w.rcl"), native::MAX_TICK_PS + 1).is_err());
    // One second per tick: 4.6e6 ticks at most; the record whose gap passes it is named.
    let gaps = [1000u32, 4_000_000, 1_000_000, 5];
    let recs: Vec<Access> = gaps.iter().map(|&gap| Access { page: 1, cgroup: 0, flags: 0, gap }).collect();
    write(&p, &recs, native::MAX_TICK_PS, &[]);
    let mut r = NativeReader::open(&p).unwrap();
    let mut buf = Vec::new();
    let e = r.read_batch(&mut buf, 100).err().unwrap();
    match e.kind {
        ErrorKind::Corrupt { record, what } => {
            assert_eq!(record, 2);
            assert!(what.contains("clock passes 4611686018427387904 ps"), "{what}");
        }
        k => panic!("expected Corrupt, got {k:?}"),
    }
    // Just under the limit reads whole.
    let recs: Vec<Access> = [1000u32, 4_000_000].iter().map(|&gap| Access { page: 1, cgroup: 0, flags: 0, gap }).collect();
    write(&p, &recs, native::MAX_TICK_PS, &[]);
    assert_eq!(read_all(&mut NativeReader::open(&p).unwrap()).unwrap().len(), 2);
}

/// `read_keys` takes a fresh native reader's page ids block by block without `Access`
/// records in between (`read_all_keys`); the ids, the page bound and every error must be
/// those of the streaming path, for untimed, timed and compressed files, and a reader that
/// was already partly read streams the rest.
#[test]
fn read_keys_equals_streaming_read() {
    let s = Scratch::new("keys");
    for (timed, compress) in [(false, false), (true, false), (false, true), (true, true)] {
        let p = s.path("k.rcl");
        let recs = records(2 * BLOCK_RECORDS + 777, timed, 2);
        let mut w = NativeWriter::create(&p, if timed { 1000 } else { 0 }).unwrap();
        w.set_compress(compress).unwrap();
        w.cgroup("x").unwrap();
        w.write_all(&recs).unwrap();
        w.finish().unwrap();
        let want: Vec<u32> = recs.iter().map(|a| a.page).collect();
        let nr = want.iter().copied().max().unwrap() + 1;
        let mut r = NativeReader::open(&p).unwrap();
        assert_eq!(reclaimlab_trace::read_keys(&mut r).unwrap(), (want.clone(), nr), "timed {timed} compress {compress}");
        assert_eq!(r.position(), Some(recs.len() as u64));
        let mut r = NativeReader::open(&p).unwrap();
        let mut buf = Vec::new();
        assert_eq!(r.read_batch(&mut buf, 100).unwrap(), 100);
        let (rest, nr2) = reclaimlab_trace::read_keys(&mut r).unwrap();
        let streamed: Vec<u32> = buf.iter().map(|a| a.page).chain(rest).collect();
        assert_eq!((streamed, nr2), (want, nr));
    }
    // A bad field in the second block: the same error (record, text) both ways.
    let p = s.path("bad.rcl");
    let recs = records(BLOCK_RECORDS + 50, false, 1);
    write(&p, &recs, 0, &[]);
    let mut b = std::fs::read(&p).unwrap();
    let payload = HEADER_LEN + 12 + BLOCK_RECORDS * 8 + 12;
    b[payload + 7 * 8 + 5] = 1; // reserved byte of record BLOCK_RECORDS + 7
    let sum = native::checksum(&b[payload..payload + 50 * 8]);
    b[payload - 8..payload].copy_from_slice(&sum.to_le_bytes());
    std::fs::write(&p, &b).unwrap();
    let streamed = read_all(&mut NativeReader::open(&p).unwrap()).unwrap_err();
    let keys = reclaimlab_trace::read_keys(&mut NativeReader::open(&p).unwrap()).unwrap_err();
    assert_eq!(keys.to_string(), streamed.to_string());
    assert!(matches!(keys.kind, ErrorKind::Corrupt { record, .. } if record == BLOCK_RECORDS as u64 + 7), "{keys}");
    // A clock past 2^62 ps: the record that passes it, both ways.
    let recs: Vec<Access> = [1000u32, 4_000_000, 1_000_000, 5].iter().map(|&gap| Access { page: 1, cgroup: 0, flags: 0, gap }).collect();
    write(&p, &recs, native::MAX_TICK_PS, &[]);
    let streamed = read_all(&mut NativeReader::open(&p).unwrap()).unwrap_err();
    let keys = reclaimlab_trace::read_keys(&mut NativeReader::open(&p).unwrap()).unwrap_err();
    assert_eq!(keys.to_string(), streamed.to_string());
    assert!(matches!(keys.kind, ErrorKind::Corrupt { record: 2, .. }), "{keys}");
}
