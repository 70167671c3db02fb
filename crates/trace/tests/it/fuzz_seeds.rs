//! The trace readers under byte-level mutation of the fuzz corpus (fuzz/corpus/, the seeds
//! fuzz/fuzz.py mutates), in Rust alone: whatever the bytes, `open` and reading every
//! record end in `Ok` or an `Err` — never a panic, and never more than the file's records
//! plus what its header may claim. The long, supervised campaign (aborts, hangs) is
//! fuzz/fuzz.py's; see docs/reliability.md.

use std::path::PathBuf;

use crate::common::Scratch;
use proptest::prelude::*;
use reclaimlab_trace::{open, read_keys};

/// (format, file name the reader is given, seeds).
fn corpus() -> Vec<(&'static str, &'static str, Vec<Vec<u8>>)> {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../fuzz/corpus");
    [("native", "in.trace"), ("lirs", "in.lirs"), ("address", "in.addr"), ("csv", "in.csv"), ("oracle", "in.oracleGeneral.bin")]
        .into_iter()
        .map(|(fmt, name)| {
            let mut seeds: Vec<(PathBuf, Vec<u8>)> = std::fs::read_dir(root.join(fmt))
                .unwrap()
                .map(|e| {
                    let p = e.unwrap().path();
                    let b = std::fs::read(&p).unwrap();
                    (p, b)
                })
                .collect();
            seeds.sort();
            (fmt, name, seeds.into_iter().map(|(_, b)| b).collect())
        })
        .collect()
}

#[derive(Clone, Debug)]
enum Mutation {
    Flip(usize, u8),
    Set(usize, u8),
    Int(usize, u8, u64),
    Delete(usize, usize),
    Insert(usize, Vec<u8>),
    Truncate(usize),
}

fn mutation() -> impl Strategy<Value = Mutation> {
    let interesting = prop::sample::select(vec![
        0u64,
        1,
        0x7F,
        0x80,
        0xFF,
        0xFFFF,
        0x10000,
        0x7FFF_FFFF,
        0xFFFF_FFFF,
        1 << 32,
        1 << 62,
        u64::MAX,
        u64::MAX - 1,
        65536,
        4_000_000_000,
        1_000_000_000_000,
    ]);
    prop_oneof![
        (any::<usize>(), 0u8..8).prop_map(|(i, b)| Mutation::Flip(i, b)),
        (any::<usize>(), any::<u8>()).prop_map(|(i, v)| Mutation::Set(i, v)),
        (any::<usize>(), prop::sample::select(vec![1u8, 2, 4, 8]), interesting).prop_map(|(i, w, v)| Mutation::Int(i, w, v)),
        (any::<usize>(), 1usize..64).prop_map(|(i, n)| Mutation::Delete(i, n)),
        (any::<usize>(), prop::collection::vec(prop::sample::select(b"0123456789,\n -xls*\x00\xff".to_vec()), 1..12)).prop_map(|(i, v)| Mutation::Insert(i, v)),
        any::<usize>().prop_map(Mutation::Truncate),
    ]
}

fn apply(mut b: Vec<u8>, muts: &[Mutation]) -> Vec<u8> {
    for m in muts {
        let n = b.len();
        match m {
            Mutation::Flip(i, bit) if n > 0 => b[i % n] ^= 1 << bit,
            Mutation::Set(i, v) if n > 0 => b[i % n] = *v,
            Mutation::Int(i, w, v) if n > 0 => {
                // The native header's fields are where a wrong value hurts: aim there often.
                let at = if n >= 64 && i % 2 == 0 { [8, 10, 12, 16, 24, 28, 32, 40, 48][i / 2 % 9] } else { i % n };
                for (k, byte) in v.to_le_bytes().iter().take(*w as usize).enumerate() {
                    if at + k < n {
                        b[at + k] = *byte;
                    }
                }
            }
            Mutation::Delete(i, len) if n > 0 => {
                let at = i % n;
                b.drain(at..(at + len).min(n));
            }
            Mutation::Insert(i, v) => {
                let at = i % (n + 1);
                b.splice(at..at, v.iter().copied());
            }
            Mutation::Truncate(i) if n > 0 => b.truncate(i % n),
            _ => {}
        }
    }
    b
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 400, ..ProptestConfig::default() })]

    #[test]
    fn mutated_seeds_are_read_or_refused_never_a_panic(
        which in any::<usize>(), seed in any::<usize>(), muts in prop::collection::vec(mutation(), 1..6)
    ) {
        // Inputs over 2^40 bytes of claimed records must not make a reader reserve them.
        std::env::set_var(reclaimlab_trace::mem::ENV, "1G");
        let all = corpus();
        let (fmt, name, seeds) = &all[which % all.len()];
        let data = apply(seeds[seed % seeds.len()].clone(), &muts);
        let s = Scratch::new("fuzz");
        let p = s.path(name);
        std::fs::write(&p, &data).unwrap();
        if let Ok(mut src) = open(&p, Some(fmt), None) {
            let mut buf = Vec::new();
            let mut total = 0u64;
            while let Ok(n) = src.read_batch(&mut buf, 4096) {
                if n == 0 {
                    break;
                }
                total += n as u64;
                // A text line or an oracle record is at least 2 bytes; a native record 8.
                prop_assert!(total <= data.len() as u64 * 1000, "{fmt}: {total} records from {} bytes", data.len());
            }
        }
        if let Ok(mut src) = open(&p, Some(fmt), None) {
            let _ = read_keys(src.as_mut());
        }
    }
}
