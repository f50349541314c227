//! In-memory speed of the multi-buffer kernels (src/algo/multibuf) against the scalar
//! single-stream code the registry uses, one thread, for MD5, SHA-1 and SHA-256 at 4 KiB
//! and 1 MiB messages per lane: `cargo run --release --example multibuf_speed [FAMILY]`
//! (`md5`, `sha1`, `sha256` or `blake3`: that family only).
//!
//! BLAKE3's rows compare the `blake3` crate (one `blake3::hash` per message: the
//! "scalar" column, though the crate is multi-lane within a message) with its lane
//! kernels (`multibuf::b3`), 16 messages per call as the lane engine hands them over,
//! from 1 KiB to 256 KiB per message: where the crate catches up is each kernel's
//! `max_input` in the lane engine. Their last column is the best kernel over the same 16
//! messages again and again, in the cache, as in the lane engine (which hashes files it
//! has just read).
//!
//! Each figure is the best of 5 runs (in CPU time of the thread, so that a busy machine
//! disturbs it less) over 32 MiB of distinct data, every message padded
//! and finished as a hash job does: by the scalar code in the scalar column, in the lanes
//! (`final_blocks`) in the kernels' columns. "break-even" is how many busy lanes a kernel needs
//! to beat the scalar code: a kernel costs the same whatever the number of busy lanes,
//! so with k of n lanes busy it delivers k/n of its full speed.
use fixity::algo::multibuf_harness::{
    Blake3Lanes, Lanes, compress_one, digest, final_blocks, finish, initial,
};
use std::hint::black_box;

const TOTAL: usize = 32 << 20;
const RUNS: usize = 5;

/// The CPU time this thread has used, in seconds: unlike the wall clock, it does not
/// count the time other processes of a busy machine hold the core.
fn cpu_time() -> f64 {
    let mut t = libc::timespec { tv_sec: 0, tv_nsec: 0 };
    // SAFETY: `t` is a valid timespec for the call to fill.
    let r = unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut t) };
    assert_eq!(r, 0, "clock_gettime(CLOCK_THREAD_CPUTIME_ID)");
    t.tv_sec as f64 + t.tv_nsec as f64 * 1e-9
}

/// Best CPU time of `RUNS` runs of `f`, in seconds.
fn best(mut f: impl FnMut()) -> f64 {
    (0..RUNS)
        .map(|_| {
            let t = cpu_time();
            f();
            cpu_time() - t
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
            // Equal sizes: every lane has the same number of final blocks.
            let last: Vec<([u8; 128], usize)> =
                msgs.iter().map(|m| final_blocks(family, &m[whole..], size as u64)).collect();
            let tails: Vec<&[u8]> = last.iter().map(|(b, n)| &b[..*n]).collect();
            k.compress(&mut states, &tails, last[0].1 / 64);
            for st in &states {
                black_box(digest(family, st));
            }
        }
    });
    data.len() as f64 / secs / 1e9
}

/// GB/s of the `blake3` crate, one message at a time.
fn b3_crate(data: &[u8], size: usize) -> f64 {
    let secs = best(|| {
        for m in data.chunks_exact(size) {
            black_box(blake3::hash(m));
        }
    });
    data.len() as f64 / secs / 1e9
}

/// GB/s of a BLAKE3 lane kernel, 16 messages at a time.
fn b3_lanes(k: Blake3Lanes, data: &[u8], size: usize) -> f64 {
    let secs = best(|| {
        for group in data.chunks_exact(size * 16) {
            let msgs: Vec<&[u8]> = group.chunks_exact(size).collect();
            black_box(k.hash_many(&msgs));
        }
    });
    data.len() as f64 / secs / 1e9
}

/// GB/s of a BLAKE3 lane kernel over the same 16 messages again and again (32 MiB in
/// all): the bytes in the cache, as in the lane engine, which hashes files it has just
/// read.
fn b3_lanes_cached(k: Blake3Lanes, data: &[u8], size: usize) -> f64 {
    let msgs: Vec<&[u8]> = data[..size * 16].chunks_exact(size).collect();
    let secs = best(|| {
        for _ in 0..data.len() / (size * 16) {
            black_box(k.hash_many(black_box(&msgs)));
        }
    });
    data.len() as f64 / secs / 1e9
}

fn blake3_rows(data: &[u8]) {
    let every = Blake3Lanes::every();
    for (size, label) in [
        (1024, "1 KiB"),
        (4096, "4 KiB"),
        (16384, "16 KiB"),
        (65536, "64 KiB"),
        (262144, "256 KiB"),
    ] {
        let mut row = format!("{:<7} {label:>7} {:>7.2}", "blake3", b3_crate(data, size));
        for name in ["avx2x8", "avx512x8", "avx512x16", "portable"] {
            match every.iter().find(|k| k.name() == name) {
                Some(&k) => row += &format!(" {:>10.2}", b3_lanes(k, data, size)),
                None => row += &format!(" {:>10}", "n/a"),
            }
        }
        if let Some(&k) = every.first().filter(|k| k.lanes() > 1) {
            row += &format!(" {:>10.2}", b3_lanes_cached(k, data, size));
        }
        println!(
            "{row}   (scalar: the blake3 crate; then the portable code, and the best kernel \
             with its messages in the cache)"
        );
    }
}

fn main() {
    let data: Vec<u8> =
        (0..TOTAL as u32).map(|i| (i.wrapping_mul(2654435761) >> 24) as u8).collect();
    const KERNELS: [&str; 3] = ["avx2x8", "avx512x8", "avx512x16"];
    let mut head = format!("{:<7} {:>7} {:>7}", "family", "message", "scalar");
    for k in KERNELS {
        head += &format!(" {k:>10}");
    }
    println!("{head}   (GB/s; break-even: busy lanes to beat scalar, (the estimate in use))");
    let only = std::env::args().nth(1);
    if only.as_deref().is_none_or(|o| o == "blake3") {
        blake3_rows(&data);
    }
    for family in ["md5", "sha1", "sha256"] {
        if only.as_deref().is_some_and(|o| o != family) {
            continue;
        }
        let picked = Lanes::best(family).map_or("none", |k| k.name());
        let every = Lanes::every(family);
        for (size, label) in [(4096, "4 KiB"), (1 << 20, "1 MiB")] {
            let s = scalar(family, &data, size);
            let mut row = format!("{family:<7} {label:>7} {s:>7.2}");
            let mut even = Vec::new();
            for name in KERNELS {
                let Some(&k) = every.iter().find(|k| k.name() == name) else {
                    row += &format!(" {:>10}", "n/a");
                    continue;
                };
                let v = lanes(k, family, &data, size);
                row += &format!(" {v:>10.2}");
                // Busy lanes needed: the least b with b/n * v > s.
                let n = k.lanes();
                let b = (s / v * n as f64).floor() as usize + 1;
                let b = if b > n { "never".to_string() } else { b.to_string() };
                let table = k.break_even().map_or("never".to_string(), |b| b.to_string());
                even.push(format!("{name} {b} ({table})"));
            }
            println!("{row}   break-even: {}; dispatch: {picked}", even.join(", "));
        }
    }
}
