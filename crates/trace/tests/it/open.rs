//! open(): auto-detection of every format, explicit format names, errors.

use crate::common::{data_dir, read_all, write_gz, Scratch};
use reclaimlab_trace::native::NativeWriter;
use reclaimlab_trace::{detect, open, Access, AccessKind, ErrorKind};

#[test]
fn detects_each_format() {
    let s = Scratch::new("open");
    let native = s.path("n.bin");
    let mut w = NativeWriter::create(&native, 0).unwrap();
    w.write(&Access { page: 4, cgroup: 0, flags: 0, gap: 0 }).unwrap();
    w.finish().unwrap();
    let csv_named = s.path("c.csv");
    std::fs::write(&csv_named, "op,page\nw,1\n").unwrap();
    let csv_unnamed = s.path("c.txt");
    std::fs::write(&csv_unnamed, "\npage,op\n1,w\n").unwrap();
    let lirs_plain = s.path("l.txt");
    std::fs::write(&lirs_plain, "\n*\n12\n13\n").unwrap();
    let addr_gz = s.path("a.gz");
    write_gz(&addr_gz, "s 0x1000 1\nl 0x2000 2\n");
    let cases = [
        (native, "native", 1),
        (csv_named, "csv", 1),
        (csv_unnamed, "csv", 1),
        (lirs_plain, "lirs", 2),
        (addr_gz, "address", 2),
        (data_dir().join("lirs/cs.trace.gz"), "lirs", 6781),
        (data_dir().join("spec2000-address/swim.trace.gz"), "address", 303_193),
    ];
    for (p, fmt, n) in cases {
        assert_eq!(detect(&p).unwrap(), fmt, "{}", p.display());
        let mut src = open(&p, None, None).unwrap();
        assert_eq!(src.meta().format, fmt);
        assert_eq!(read_all(src.as_mut()).unwrap().len(), n, "{}", p.display());
    }
}

#[test]
fn explicit_format_and_kind() {
    let s = Scratch::new("open2");
    let p = s.path("x.data");
    std::fs::write(&p, "5\n6\n").unwrap();
    let mut src = open(&p, Some("lirs"), Some(AccessKind::FileMapped)).unwrap();
    let recs = read_all(src.as_mut()).unwrap();
    assert!(recs.iter().all(|a| a.flags == AccessKind::FileMapped.flags()));
    // Forcing the wrong format gives that format's error.
    let e = open(&p, Some("address"), None).unwrap().read_batch(&mut Vec::new(), 10).unwrap_err();
    assert!(matches!(e.kind, ErrorKind::Parse { line: 1, .. }), "{e:?}");
    let e = open(&p, Some("native"), None).err().unwrap();
    assert!(matches!(e.kind, ErrorKind::BadHeader(_)), "{e:?}");
    let e = open(&p, Some("parquet"), None).err().unwrap();
    assert!(matches!(&e.kind, ErrorKind::InvalidArgument(m) if m.contains("parquet") && m.contains("lirs")), "{e:?}");
}

#[test]
fn unknown_content_lists_formats() {
    let s = Scratch::new("open3");
    let p = s.path("x.txt");
    std::fs::write(&p, "hello world\n").unwrap();
    let e = open(&p, None, None).err().unwrap();
    match &e.kind {
        ErrorKind::BadHeader(m) => {
            for f in ["native", "lirs", "address", "csv"] {
                assert!(m.contains(f), "{m}");
            }
        }
        k => panic!("{k:?}"),
    }
    assert_eq!(e.path.as_deref(), Some(p.as_path()));
    let empty = s.path("empty");
    std::fs::write(&empty, "").unwrap();
    assert!(matches!(open(&empty, None, None).err().unwrap().kind, ErrorKind::BadHeader(_)));
}

#[test]
fn unreadable_file_is_io_error_with_path() {
    let p = std::path::Path::new("/nonexistent/dir/trace.gz");
    let e = open(p, None, None).err().unwrap();
    assert!(matches!(e.kind, ErrorKind::Io(_)));
    assert_eq!(e.path.as_deref(), Some(p));
    assert!(e.to_string().starts_with("/nonexistent/dir/trace.gz: "));
}
