//! oracleGeneral read/write round trip and format details.
use reclaimlab_trace::oracle::{next_access, OracleRecord, RECORD_BYTES};
use reclaimlab_trace::{open, read_keys, write_oracle};

#[test]
fn round_trip_keys_sizes_and_next_access() {
    let dir = std::env::temp_dir().join(format!("rl-oracle-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let p = dir.join("t.oracleGeneral");
    let keys: Vec<u32> = vec![5, 1, 5, 2, 1, 1, 7, 5];
    assert_eq!(write_oracle(&p, &keys).unwrap(), 8);
    let bytes = std::fs::read(&p).unwrap();
    assert_eq!(bytes.len(), keys.len() * RECORD_BYTES);
    let recs: Vec<OracleRecord> = bytes.chunks(RECORD_BYTES).map(OracleRecord::decode).collect();
    let ids: Vec<u64> = recs.iter().map(|r| r.obj_id).collect();
    assert_eq!(ids, vec![5, 1, 5, 2, 1, 1, 7, 5]);
    assert!(recs.iter().all(|r| r.obj_size == 1));
    let nx: Vec<i64> = recs.iter().map(|r| r.next_access_vtime).collect();
    assert_eq!(nx, vec![2, 4, 7, -1, 5, -1, -1, -1]);
    assert_eq!(next_access(&keys, 8), nx);
    assert_eq!(recs[3].clock_time, 3);
    // Little-endian layout: obj_id of record 0 at bytes 4..12.
    assert_eq!(&bytes[4..12], &5u64.to_le_bytes());

    // Read back through open() with detection: ids are remapped densely in first-seen order.
    let mut src = open(&p, None, None).unwrap();
    assert_eq!(src.meta().format, "oracle");
    assert_eq!(src.meta().nr_records, Some(8));
    let (back, nr) = read_keys(src.as_mut()).unwrap();
    assert_eq!(back, vec![0, 1, 0, 2, 1, 1, 3, 0]);
    assert_eq!(nr, 4);

    // A truncated file is an error naming the record.
    let bad = dir.join("bad.oracleGeneral");
    std::fs::write(&bad, &bytes[..bytes.len() - 3]).unwrap();
    let e = open(&bad, None, None).err().expect("truncated");
    assert!(e.to_string().contains("bad.oracleGeneral"), "{e}");
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn zst_without_feature_is_a_clear_error() {
    if cfg!(feature = "zstd") {
        return;
    }
    let dir = std::env::temp_dir().join(format!("rl-oracle-zst-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let p = dir.join("t.oracleGeneral.zst");
    std::fs::write(&p, [0u8; 24]).unwrap();
    let e = open(&p, Some("oracle"), None).err().expect("zstd off");
    assert!(e.to_string().contains("zstd"), "{e}");
    assert!(write_oracle(&p, &[1, 2]).is_err());
    std::fs::remove_dir_all(&dir).unwrap();
}

/// Only with `--features zstd`: the compressed variant round-trips.
#[cfg(feature = "zstd")]
#[test]
fn zst_round_trip() {
    let dir = std::env::temp_dir().join(format!("rl-oracle-zstd-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let p = dir.join("t.oracleGeneral.zst");
    let keys: Vec<u32> = (0..100_000u32).map(|i| (i * 7919) % 1000).collect();
    assert_eq!(write_oracle(&p, &keys).unwrap(), keys.len() as u64);
    assert!(std::fs::metadata(&p).unwrap().len() < (keys.len() * RECORD_BYTES) as u64 / 2);
    let mut src = open(&p, None, None).unwrap();
    assert_eq!(src.meta().format, "oracle");
    let (back, nr) = read_keys(src.as_mut()).unwrap();
    assert_eq!(nr, 1000);
    assert_eq!(back.len(), keys.len());
    // Dense remap in first-seen order preserves the equality pattern.
    for i in 1..keys.len() {
        assert_eq!(keys[i] == keys[i - 1], back[i] == back[i - 1]);
    }
    std::fs::remove_dir_all(&dir).unwrap();
}

/// `read_keys` maps a fresh oracleGeneral file into memory (one pass, no records in
/// between); it must hand out the same dense ids as the streaming `read_batch` path,
/// for ids in the flat table and beyond it (hash map), and a source that was already
/// partly read falls back to streaming the rest.
#[test]
fn mapped_read_equals_streaming_read() {
    let dir = std::env::temp_dir().join(format!("rl-oracle-mm-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let p = dir.join("big.oracleGeneral");
    let ids: Vec<u64> = (0..5000u64)
        .map(|i| match i % 4 {
            0 => i % 97,
            1 => (1 << 40) + i % 13,
            2 => (1 << 25) + i % 7,
            _ => i,
        })
        .collect();
    let mut bytes = vec![0u8; ids.len() * RECORD_BYTES];
    for (i, &id) in ids.iter().enumerate() {
        OracleRecord { clock_time: i as u32, obj_id: id, obj_size: 1, next_access_vtime: -1 }.encode(&mut bytes[i * RECORD_BYTES..(i + 1) * RECORD_BYTES]);
    }
    std::fs::write(&p, &bytes).unwrap();
    let mut seen = std::collections::HashMap::new();
    let want: Vec<u32> = ids
        .iter()
        .map(|id| {
            let n = seen.len() as u32;
            *seen.entry(*id).or_insert(n)
        })
        .collect();

    let (mapped, nr) = read_keys(open(&p, None, None).unwrap().as_mut()).unwrap();
    assert_eq!(mapped, want);
    assert_eq!(nr as usize, seen.len());

    let mut src = open(&p, None, None).unwrap();
    let mut buf = Vec::new();
    assert_eq!(src.read_batch(&mut buf, 100).unwrap(), 100);
    let (rest, nr2) = read_keys(src.as_mut()).unwrap();
    let streamed: Vec<u32> = buf.iter().map(|a| a.page).chain(rest).collect();
    assert_eq!(streamed, want);
    assert_eq!(nr2, nr);
    std::fs::remove_dir_all(&dir).unwrap();
}
