//! CSV reader: columns, defaults, cgroups, errors.

use crate::common::{read_all, write_gz, Scratch};
use reclaimlab_trace::csv::CsvReader;
use reclaimlab_trace::{flags, Access, AccessKind, AccessSource, ErrorKind};

#[test]
fn all_columns_any_order() {
    let s = Scratch::new("csv");
    let p = s.path("t.csv");
    std::fs::write(
        &p,
        "gap, cgroup,page,op,type,access\n\
         5,web,100,w,file,syscall\n\
         0,,200,read,anon,mapped\n\
         \n\
         7,db,100,r,,\n\
         1,web,300,write,file,mapped\n",
    )
    .unwrap();
    let mut r = CsvReader::open(&p, None, None).unwrap();
    assert_eq!(r.meta().tick_ps, 1000);
    let recs = read_all(&mut r).unwrap();
    assert_eq!(
        recs,
        [
            Access { page: 0, cgroup: 1, flags: flags::WRITE | flags::FILE | flags::SYSCALL, gap: 5 },
            Access { page: 1, cgroup: 0, flags: 0, gap: 0 },
            Access { page: 0, cgroup: 2, flags: 0, gap: 7 },
            Access { page: 2, cgroup: 1, flags: flags::WRITE | flags::FILE, gap: 1 },
        ]
    );
    assert_eq!(r.cgroups_seen(), ["", "web", "db"]);
    assert_eq!(r.nr_pages_seen(), 3);
}

#[test]
fn page_only_with_kind_defaults_gzipped() {
    let s = Scratch::new("csvgz");
    let p = s.path("t.csv.gz");
    write_gz(&p, "page\n9\n8\n9\n");
    let mut r = CsvReader::open(&p, Some(AccessKind::FileRead), None).unwrap();
    assert_eq!(r.meta().tick_ps, 0, "no gap column: no time");
    let recs = read_all(&mut r).unwrap();
    assert_eq!(recs.iter().map(|a| a.page).collect::<Vec<_>>(), [0, 1, 0]);
    assert!(recs.iter().all(|a| a.flags == flags::FILE | flags::SYSCALL));
}

#[test]
fn unknown_column_is_named() {
    let s = Scratch::new("csvcol");
    let p = s.path("t.csv");
    std::fs::write(&p, "page,colour\n1,red\n").unwrap();
    let e = CsvReader::open(&p, None, None).err().unwrap();
    assert!(matches!(&e.kind, ErrorKind::Parse { line: 1, what } if what.contains("unknown column \"colour\"")), "{e:?}");
    std::fs::write(&p, "op,gap\nr,1\n").unwrap();
    let e = CsvReader::open(&p, None, None).err().unwrap();
    assert!(e.to_string().contains("no `page` column"), "{e}");
    std::fs::write(&p, "page,op,page\n").unwrap();
    let e = CsvReader::open(&p, None, None).err().unwrap();
    assert!(e.to_string().contains("appears twice"), "{e}");
}

#[test]
fn bad_values_name_line_and_column() {
    let s = Scratch::new("csvval");
    let cases = [
        ("page,op\n1,r\n2,x\n", 3, "`op`"),
        ("page,type\n1,anon\n\n2,shm\n", 4, "`type`"),
        ("page,access\n1,dma\n", 2, "`access`"),
        ("page,gap\n1,4294967296\n", 2, "`gap`"),
        ("page\n-1\n", 2, "`page`"),
        ("page\n\n0x10\n", 3, "`page`"),
        ("page,op\n1,r,extra\n", 2, "3 fields"),
        ("page,op\n1\n", 2, "1 fields"),
    ];
    for (text, line, what) in cases {
        let p = s.path("t.csv");
        std::fs::write(&p, text).unwrap();
        let mut r = CsvReader::open(&p, None, None).unwrap();
        let e = read_all(&mut r).unwrap_err();
        match &e.kind {
            ErrorKind::Parse { line: l, what: w } => {
                assert_eq!(*l, line, "{text:?}");
                assert!(w.contains(what), "{text:?}: {w}");
            }
            k => panic!("{text:?}: {k:?}"),
        }
    }
}
