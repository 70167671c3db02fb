//! `cargo run --release -p reclaimlab-cache --example cachesim -- TRACE ALGO[,ALGO..] SIZE[,SIZE..]`
//! prints `algo size hits misses miss_ratio req_per_s` per run (trace read once, any format).
use std::path::Path;
use std::time::Instant;

fn main() {
    let a: Vec<String> = std::env::args().collect();
    if a.len() < 4 {
        eprintln!("usage: cachesim TRACE ALGO[,ALGO..] SIZE[,SIZE..]");
        std::process::exit(2);
    }
    let mut src = reclaimlab_trace::open(Path::new(&a[1]), None, None).expect("open trace");
    let t0 = Instant::now();
    let (keys, nr) = reclaimlab_trace::read_keys(src.as_mut()).expect("read trace");
    eprintln!("read {} requests, {} keys in {:.3}s", keys.len(), nr, t0.elapsed().as_secs_f64());
    for algo in a[2].split(',') {
        let al = reclaimlab_cache::parse(algo).expect("algo");
        for s in a[3].split(',') {
            let size: usize = s.parse().expect("size");
            let t = Instant::now();
            let st = reclaimlab_cache::algo::simulate(al, size, &keys, nr);
            let dt = t.elapsed().as_secs_f64();
            println!("{} {} {} {} {:.6} {:.0}", al.name, size, st.hits, st.misses, st.miss_ratio(), keys.len() as f64 / dt);
        }
    }
}
