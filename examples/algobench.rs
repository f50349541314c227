//! In-memory throughput of every registered algorithm on one thread, at two message
//! sizes: `cargo run --release --example algobench`. (The full `fixity bench algorithms`
//! command is planned; this is the quick developer check.)
use fixity::algo::ALGORITHMS;
use std::time::Instant;

fn main() {
    let big: Vec<u8> = (0..64u32 << 20).map(|i| (i.wrapping_mul(2654435761) >> 24) as u8).collect();
    println!("{:<10} {:>12} {:>14}", "algorithm", "64 MiB GB/s", "4 KiB msg MB/s");
    for a in ALGORITHMS {
        let mut best = f64::MAX;
        for _ in 0..3 {
            let t = Instant::now();
            let mut h = a.hasher();
            h.update(&big);
            std::hint::black_box(h.finish());
            best = best.min(t.elapsed().as_secs_f64());
        }
        let mut best_small = f64::MAX;
        for _ in 0..3 {
            let t = Instant::now();
            for chunk in big[..16 << 20].chunks(4096) {
                std::hint::black_box(a.digest(chunk));
            }
            best_small = best_small.min(t.elapsed().as_secs_f64());
        }
        println!(
            "{:<10} {:>12.2} {:>14.0}",
            a.name,
            big.len() as f64 / best / 1e9,
            (16 << 20) as f64 / best_small / 1e6
        );
    }
}
