//! In-memory speed of the multi-buffer kernels (src/algo/multibuf) against the scalar
//! single-stream code the registry uses, one thread, for MD5, SHA-1 and SHA-256 at 4 KiB
//! and 1 MiB messages per lane: `cargo run --release --example multibuf_speed`.
//!
//! Each figure is the best of 5 runs over 32 MiB of distinct data (every message padded
//! and finished, as a hash job does). "break-even" is how many busy lanes a kernel needs
//! to beat the scalar code: a kernel costs the same whatever the number of busy lanes,
//! so with k of n lanes busy it delivers k/n of its full speed.
use fixity::algo::multibuf_harness::{Lanes, compress_one, finish, initial};
use std::hint::black_box;
use std::time::Instant;

const TOTAL: usize = 32 << 20;
const RUNS: usize = 5;

/// Best time of `RUNS` runs of `f`, in seconds.
fn best(mut f: impl FnMut()) -> f64 {
    (0..RUNS)
        .map(|_| {
            let t = Instant::now();
            f();
            t.elapsed().as_secs_f64()
        })
        .fold(f64::MAX, f64::min)
}

/// GB/s of the scalar code over `data` cut into messages of `size` bytes.
fn scalar(family: &str, data: &[u8], size: usize) -> f64 {
    let whole = size / 64 * 64;
    let secs = best(|| {
        for m in data.chunks_exact(size) {
            let mut st = initial(family);
            compress_one(family, &mut st, &m[..whole]);
            black_box(finish(family, st, &m[whole..], size as u64));
        }
    });
    data.len() as f64 / secs / 1e9
}

/// GB/s of `k` with every lane busy, over `data` cut into messages of `size` bytes.
fn lanes(k: Lanes, family: &str, data: &[u8], size: usize) -> f64 {
    let n = k.lanes();
    let whole = size / 64 * 64;
    let secs = best(|| {
        for group in data.chunks_exact(size * n) {
            let msgs: Vec<&[u8]> = group.chunks_exact(size).collect();
            let mut states = vec![initial(family); n];
            k.compress(&mut states, &msgs, whole / 64);
            for (st, m) in states.iter().zip(&msgs) {
                black_box(finish(family, *st, &m[whole..], size as u64));
            }
        }
    });
    data.len() as f64 / secs / 1e9
}

fn main() {
    let data: Vec<u8> =
        (0..TOTAL as u32).map(|i| (i.wrapping_mul(2654435761) >> 24) as u8).collect();
    println!(
        "{:<7} {:>8} {:>11} {:>11} {:>14} {:>18}",
        "family", "message", "scalar GB/s", "avx2x8 GB/s", "avx512x16 GB/s", "break-even x8/x16"
    );
    for family in ["md5", "sha1", "sha256"] {
        let picked = Lanes::best(family).map_or("none", |k| k.name());
        for (size, label) in [(4096, "4 KiB"), (1 << 20, "1 MiB")] {
            let s = scalar(family, &data, size);
            let mut row = format!("{family:<7} {label:>8} {s:>11.2}");
            let mut even = Vec::new();
            for (n, width) in [(8, 11), (16, 14)] {
                match Lanes::new(family, n) {
                    Some(k) => {
                        let v = lanes(k, family, &data, size);
                        row += &format!(" {v:>width$.2}");
                        // Busy lanes needed: the least k with k/n * v > s.
                        let k_min = (s / v * n as f64).floor() as usize + 1;
                        even.push(if k_min > n { "never".to_string() } else { k_min.to_string() });
                    }
                    None => {
                        row += &format!(" {:>width$}", "n/a");
                        even.push("n/a".into());
                    }
                }
            }
            println!("{row} {:>18}   (dispatch: {picked})", even.join("/"));
        }
    }
}
