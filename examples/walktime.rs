//! Times the tree walk alone: `cargo run --release --example walktime DIR [PREFETCH_THREADS]`.
use fixity::walk::{Exclude, WalkOptions, walk};
fn main() {
    let mut args = std::env::args().skip(1);
    let dir = args.next().expect("DIR");
    let threads = args.next().map(|t| t.parse().unwrap()).unwrap_or(4);
    let stat = std::env::var_os("WALK_STAT").is_some();
    let opts = WalkOptions { follow: false, exclude: Exclude::default(), threads, stat };
    let t = std::time::Instant::now();
    let mut n = 0u64;
    walk(std::path::Path::new(&dir), &opts, &mut |_| {
        n += 1;
        true
    });
    println!("{n} entries in {:.1} ms", t.elapsed().as_secs_f64() * 1e3);
}
