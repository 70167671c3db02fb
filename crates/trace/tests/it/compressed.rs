//! Native format version 2 (compressed blocks): round trips against the uncompressed
//! writer, damaged and truncated compressed blocks (one error naming the file and the
//! records, never a panic).

use crate::common::{read_all, Scratch};
use reclaimlab_trace::native::{self, NativeReader, NativeWriter, BLOCK_RECORDS, HEADER_LEN};
use reclaimlab_trace::{flags, Access, AccessSource, ErrorKind, FileRange, OpKind, TraceMeta, TraceOp};

const BH: usize = native::BLOCK_HEADER_LEN_V2;

/// Recording-like records: runs of neighbouring pages, a few flag patterns, cgroups,
/// small gaps (compressible, unlike `native.rs`'s uniform random records).
fn records(n: usize, timed: bool, cgroups: u16) -> Vec<Access> {
    let mut rng = reclaimlab_trace::Rng::new(n as u64 + 7);
    let mut page = 0u32;
    (0..n)
        .map(|_| {
            page = if rng.below(8) == 0 { rng.below(20_000) as u32 } else { (page + 1) % 20_000 };
            Access {
                page,
                cgroup: rng.below(cgroups as u64) as u16,
                flags: [0, flags::WRITE, flags::FILE | flags::SYSCALL, flags::FILE | flags::SYSCALL | flags::READ_CONT][rng.below(4) as usize],
                gap: if timed { rng.below(300) as u32 } else { 0 },
            }
        })
        .collect()
}

fn files() -> Vec<FileRange> {
    vec![FileRange { name: "/data/a".into(), first: 100, nr_pages: 50, advice: 2 }, FileRange { name: "/data/b".into(), first: 1000, nr_pages: 7, advice: 0 }]
}

fn write(path: &std::path::Path, recs: &[Access], tick_ps: u64, compress: bool) -> u64 {
    let mut w = NativeWriter::create(path, tick_ps).unwrap();
    w.set_compress(compress).unwrap();
    w.set_cgroups(&["".into(), "web".into(), "db".into()]).unwrap();
    w.set_files(&files()).unwrap();
    w.set_nr_pages(30_000);
    // A memory.reclaim write before the first record and one after the last (the op table).
    let reclaim = |at, swappiness| TraceOp { at, cgroup: 1, kind: OpKind::MemoryReclaim { bytes: 1 << 20, swappiness } };
    w.op(reclaim(0, None)).unwrap();
    for chunk in recs.chunks(10_007) {
        w.write_all(chunk).unwrap();
    }
    w.op(reclaim(recs.len() as u64, Some(60))).unwrap();
    w.finish().unwrap()
}

fn read(path: &std::path::Path) -> (TraceMeta, Vec<Access>) {
    let mut r = NativeReader::open(path).unwrap();
    let recs = read_all(&mut r).unwrap();
    assert_eq!(r.progress(), Some(1.0));
    (r.meta().clone(), recs)
}

/// The error of opening and reading all of `path`.
fn error(path: &std::path::Path) -> reclaimlab_trace::Error {
    match NativeReader::open(path) {
        Err(e) => e,
        Ok(mut r) => read_all(&mut r).expect_err("damaged file must not read"),
    }
}

/// (offset, stored_len) of every block of a version-2 file.
fn blocks(bytes: &[u8]) -> Vec<(usize, usize)> {
    let h = native::Header::decode(&bytes[..HEADER_LEN].try_into().unwrap()).unwrap();
    assert!(h.compressed);
    let mut v = Vec::new();
    let mut off = HEADER_LEN;
    while off < h.table_offset as usize {
        let stored = u32::from_le_bytes(bytes[off + 4..off + 8].try_into().unwrap()) as usize;
        v.push((off, stored));
        off += BH + stored;
    }
    assert_eq!(off, h.table_offset as usize);
    v
}

#[test]
fn compressed_reads_back_exactly_what_uncompressed_does() {
    let s = Scratch::new("z-rt");
    for timed in [false, true] {
        let tick = if timed { 250 } else { 0 };
        // Sizes around the block boundary, and a 1-record last block (stored raw).
        for n in [0, 1, 5, BLOCK_RECORDS - 1, BLOCK_RECORDS, BLOCK_RECORDS + 1, 3 * BLOCK_RECORDS + 4321] {
            let recs = records(n, timed, 3);
            let (pv1, pz) = (s.path("v1.rcl"), s.path("z.rcl"));
            assert_eq!(write(&pv1, &recs, tick, false), n as u64);
            assert_eq!(write(&pz, &recs, tick, true), n as u64);
            let (m1, r1) = read(&pv1);
            let (mz, rz) = read(&pz);
            assert_eq!(rz, recs, "n={n} timed={timed}");
            assert_eq!(r1, recs);
            // Every field of the metadata: cgroups, files, tick, pages, count.
            assert_eq!(mz, m1);
            assert_eq!(mz.cgroups, vec!["", "web", "db"]);
            assert_eq!(mz.files, files());
            assert_eq!(mz.tick_ps, tick);
            assert_eq!(mz.nr_pages, Some(30_000));
            assert_eq!(mz.ops.len(), 2);
            let (b1, bz) = (std::fs::read(&pv1).unwrap(), std::fs::read(&pz).unwrap());
            assert_eq!(u16::from_le_bytes([b1[8], b1[9]]), native::VERSION);
            assert_eq!(u16::from_le_bytes([bz[8], bz[9]]), native::VERSION_COMPRESSED);
            // Same header apart from the version and the table offset.
            assert_eq!(b1[12..40], bz[12..40]);
            assert_eq!(b1[48..64], bz[48..64]);
            let table = u32::from_le_bytes(b1[48..52].try_into().unwrap()) as usize;
            assert_eq!(b1[b1.len() - table..], bz[bz.len() - table..]);
            let bl = blocks(&bz);
            assert_eq!(bl.len(), n.div_ceil(BLOCK_RECORDS));
            if n >= 1000 {
                assert!(bz.len() * 3 < b1.len(), "n={n}: {} vs {} bytes", bz.len(), b1.len());
            }
            if n == BLOCK_RECORDS + 1 {
                // A block that does not shrink is stored as its records.
                assert_eq!(bl[1].1, if timed { 12 } else { 8 });
            }
        }
    }
}

#[test]
fn set_compress_only_before_the_first_block() {
    let s = Scratch::new("z-late");
    let mut w = NativeWriter::create(&s.path("l.rcl"), 0).unwrap();
    w.write_all(&records(BLOCK_RECORDS - 1, false, 1)).unwrap();
    w.set_compress(true).unwrap();
    w.write_all(&records(2, false, 1)).unwrap();
    assert!(w.block_bytes() > 0);
    let e = w.set_compress(false).unwrap_err().to_string();
    assert!(e.contains("already been written"), "{e}");
}

#[test]
fn convert_with_compress_round_trips() {
    let s = Scratch::new("z-conv");
    let (a, b) = (s.path("a.rcl"), s.path("b.rcl"));
    let recs = records(2 * BLOCK_RECORDS + 17, true, 3);
    write(&a, &recs, 1000, false);
    let mut src = NativeReader::open(&a).unwrap();
    assert_eq!(reclaimlab_trace::convert_with(&mut src, &b, true).unwrap(), recs.len() as u64);
    let (ma, ra) = read(&a);
    let (mb, rb) = read(&b);
    assert_eq!((ma, ra), (mb, rb));
    assert!(native::Header::decode(&std::fs::read(&b).unwrap()[..HEADER_LEN].try_into().unwrap()).unwrap().compressed);
}

/// A two-block file whose second block is small (300 records), so every byte of it can be
/// damaged in turn; the first block is a loop over 64 pages (it inflates quickly).
fn two_blocks(s: &Scratch) -> (Vec<u8>, Vec<Access>) {
    let p = s.path("two.rcl");
    let mut recs: Vec<Access> = (0..BLOCK_RECORDS).map(|i| Access { page: i as u32 % 64, cgroup: 1, flags: 0, gap: 3 }).collect();
    recs.extend(records(300, true, 3));
    write(&p, &recs, 1000, true);
    (std::fs::read(&p).unwrap(), recs)
}

#[test]
fn every_flipped_byte_of_a_compressed_block_is_corrupt_naming_its_records() {
    let s = Scratch::new("z-flip");
    let (bytes, _) = two_blocks(&s);
    let bl = blocks(&bytes);
    assert!(bl[1].1 < 300 * 12, "the second block is compressed");
    let t = s.path("t.rcl");
    // All of block 1, and every 7th byte of block 0 (each read inflates a whole block).
    let block0 = (bl[0].0..bl[0].0 + BH).chain((bl[0].0 + BH..bl[1].0).step_by(7));
    let block1 = bl[1].0..bl[1].0 + BH + bl[1].1;
    for (i, start, end) in block0.map(|i| (i, 0u64, 65536)).chain(block1.map(|i| (i, 65536, 65836))) {
        // The lowest bit at even offsets, the highest at odd ones.
        let bit = if i % 2 == 0 { 0x01u8 } else { 0x80 };
        let mut b = bytes.clone();
        b[i] ^= bit;
        std::fs::write(&t, &b).unwrap();
        let e = error(&t);
        let msg = e.to_string();
        assert_eq!(e.path.as_deref(), Some(t.as_path()));
        match &e.kind {
            ErrorKind::Corrupt { record, what } => {
                assert_eq!(*record, start, "byte {i}: {msg}");
                // The count field names the layout; everything else names the range.
                assert!(what.contains(&format!("records {start}..{end} are damaged")) || what.contains("block header says"), "byte {i}: {msg}");
            }
            k => panic!("byte {i} ^ {bit:#x}: expected Corrupt, got {k:?}"),
        }
        assert!(!msg.contains('\n'), "{msg}");
    }
}

/// Rewrite block `k`'s stored bytes with `f` and fix its length, checksum and the header's
/// table offset, so that only the compressed stream itself is wrong.
fn restore(bytes: &[u8], k: usize, f: impl Fn(&mut Vec<u8>)) -> Vec<u8> {
    let bl = blocks(bytes);
    let (off, len) = bl[k];
    let mut stored = bytes[off + BH..off + BH + len].to_vec();
    f(&mut stored);
    let mut out = bytes[..off + 4].to_vec();
    out.extend_from_slice(&(stored.len() as u32).to_le_bytes());
    out.extend_from_slice(&native::checksum(&stored).to_le_bytes());
    out.extend_from_slice(&stored);
    out.extend_from_slice(&bytes[off + BH + len..]);
    let mut h = native::Header::decode(&out[..HEADER_LEN].try_into().unwrap()).unwrap();
    h.table_offset = (h.table_offset as i64 + stored.len() as i64 - len as i64) as u64;
    out[..HEADER_LEN].copy_from_slice(&h.encode());
    out
}

#[test]
fn bad_zlib_streams_with_good_checksums_are_corrupt() {
    let s = Scratch::new("z-stream");
    let (bytes, recs) = two_blocks(&s);
    let t = s.path("t.rcl");
    type Damage = Box<dyn Fn(&mut Vec<u8>)>;
    let cases: Vec<(&str, Damage)> = vec![
        ("does not inflate", Box::new(|v: &mut Vec<u8>| v[0] ^= 0xff)), // zlib header
        (
            "does not inflate",
            Box::new(|v: &mut Vec<u8>| {
                let n = v.len();
                v[n - 1] ^= 1; // adler32 of the records
            }),
        ),
        (
            "inflates to more than",
            Box::new(|v: &mut Vec<u8>| {
                v.truncate(v.len() - 6); // the stream ends early
            }),
        ),
        ("2 stray bytes", Box::new(|v: &mut Vec<u8>| v.extend_from_slice(&[0, 0]))),
        ("more than its 3600 bytes", Box::new(|v: &mut Vec<u8>| v.resize(3601, 0))),
    ];
    for (want, f) in cases {
        std::fs::write(&t, restore(&bytes, 1, f)).unwrap();
        let mut r = NativeReader::open(&t).unwrap();
        let mut buf = Vec::new();
        // Block 0 is intact and reads first.
        assert_eq!(r.read_batch(&mut buf, BLOCK_RECORDS).unwrap(), BLOCK_RECORDS);
        assert_eq!(buf[..], recs[..BLOCK_RECORDS]);
        let e = r.read_batch(&mut buf, 10).unwrap_err();
        match &e.kind {
            ErrorKind::Corrupt { record: 65536, what } => {
                assert!(what.contains(want) && what.contains("records 65536..65836"), "{want}: {what}")
            }
            k => panic!("{want}: got {k:?}"),
        }
    }
    // A stream that inflates to fewer bytes than the block's records.
    let short = restore(&bytes, 1, |v| {
        let mut recs = vec![0u8; 299 * 12];
        recs[0] = 1;
        *v = zlib_stored(&recs);
    });
    std::fs::write(&t, short).unwrap();
    let msg = error(&t).to_string();
    assert!(msg.contains("inflates to 3588 bytes, not 3600"), "{msg}");
}

fn zlib_stored(b: &[u8]) -> Vec<u8> {
    // A zlib stream holding `b` in one stored (uncompressed) deflate block, built by hand.
    let mut v = vec![0x78, 0x01, 0x01];
    v.extend_from_slice(&(b.len() as u16).to_le_bytes());
    v.extend_from_slice(&(!(b.len() as u16)).to_le_bytes());
    v.extend_from_slice(b);
    let (mut a, mut c) = (1u32, 0u32);
    for &x in b {
        a = (a + x as u32) % 65521;
        c = (c + a) % 65521;
    }
    v.extend_from_slice(&((c << 16) | a).to_be_bytes());
    v
}

#[test]
fn truncated_compressed_files_name_the_records_in_whole_blocks() {
    let s = Scratch::new("z-trunc");
    let (bytes, recs) = two_blocks(&s);
    let bl = blocks(&bytes);
    let n = recs.len() as u64;
    let t = s.path("t.rcl");
    let end1 = bl[1].0 + BH + bl[1].1;
    let mut cuts: Vec<usize> = (1..HEADER_LEN + 20).collect();
    cuts.extend((HEADER_LEN..bl[1].0).step_by(11));
    cuts.extend(bl[1].0 - 1..bytes.len());
    for cut in cuts {
        std::fs::write(&t, &bytes[..cut]).unwrap();
        let e = error(&t);
        let want = if cut < bl[1].0 {
            0
        } else if cut < end1 {
            BLOCK_RECORDS as u64
        } else {
            n
        };
        assert!(matches!(e.kind, ErrorKind::Truncated { record } if record == want), "cut {cut}: {e:?}");
        assert!(e.to_string().contains(&t.display().to_string()));
    }
    // Shrinking after open: the block being read is named.
    std::fs::write(&t, &bytes).unwrap();
    let mut r = NativeReader::open(&t).unwrap();
    std::fs::OpenOptions::new().write(true).open(&t).unwrap().set_len(bl[1].0 as u64 + 20).unwrap();
    let e = read_all(&mut r).unwrap_err();
    assert!(matches!(e.kind, ErrorKind::Truncated { record: 65536 }), "{e:?}");
}

#[test]
fn block_lengths_must_tile_the_block_area() {
    let s = Scratch::new("z-tile");
    let (bytes, _) = two_blocks(&s);
    let t = s.path("t.rcl");
    // The header's table offset says the blocks end 1 byte earlier than they do: still a
    // valid header, so the last block is found to run past it.
    let mut b = bytes.clone();
    let mut h = native::Header::decode(&b[..HEADER_LEN].try_into().unwrap()).unwrap();
    h.table_offset -= 1;
    b[..HEADER_LEN].copy_from_slice(&h.encode());
    b.remove(h.table_offset as usize); // keep the file length consistent with the header
    std::fs::write(&t, &b).unwrap();
    let msg = error(&t).to_string();
    assert!(msg.contains("but the blocks end at byte"), "{msg}");
    // A header whose table offset cannot hold the blocks is a bad header.
    let mut b = bytes.clone();
    h.table_offset = (HEADER_LEN + BH) as u64;
    b[..HEADER_LEN].copy_from_slice(&h.encode());
    std::fs::write(&t, &b).unwrap();
    let e = error(&t);
    assert!(matches!(e.kind, ErrorKind::BadHeader(_)), "{e:?}");
}
