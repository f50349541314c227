//! In-memory throughput of each algorithm at each message size: how fast the hash
//! function itself is here, without any I/O. One thread, and for an algorithm that can
//! use several on one input (BLAKE3), all threads too.

use super::Stats;
use crate::algo::{Algorithm, Input};
use serde::Serialize;
use std::time::Instant;

/// One measured (algorithm, size, threads) cell.
#[derive(Clone, Debug, Serialize)]
pub struct AlgoRow {
    /// Algorithm name.
    pub algorithm: &'static str,
    /// Message size in bytes.
    pub size: usize,
    /// Threads used on one message.
    pub threads: usize,
    /// Seconds per message (min / median / max over the runs).
    pub per_call: Stats,
    /// Throughput at the best run, MB/s (10^6 bytes).
    pub best_mbps: f64,
    /// Throughput at the median run, MB/s.
    pub median_mbps: f64,
    /// The code that ran: a kernel of fixity's (`avx2` for GF(2^16), `avx2x8` for lanes),
    /// what a crate picked where it says (`sha-ni`, crc-fast's target), else `crate`.
    pub kernel: String,
    /// The SIMD cap the row was measured at, when comparing levels (`--levels`).
    pub simd: Option<&'static str>,
}

/// The name of the row that measures making PAR2 recovery data (`fixity protect`'s work
/// without I/O: slice checksums, whole-file MD5, recovery slices at 10%).
pub const PAR2_ROW: &str = "par2-10%";

/// Measures making recovery data (as `protect` does, 10%) for a message of each size, on
/// every core: the row [`PAR2_ROW`], at the current SIMD cap (`simd` set to `level`).
pub fn par2_rows(
    sizes: &[usize],
    runs: usize,
    level: Option<crate::simd::Level>,
    on_row: &mut dyn FnMut(&AlgoRow),
) -> Vec<AlgoRow> {
    let max = sizes.iter().copied().max().unwrap_or(0);
    let data: Vec<u8> =
        (0..max as u64).map(|i| (i.wrapping_mul(0x9E37_79B9_7F4A_7C15) >> 56) as u8).collect();
    let threads = rayon::current_num_threads();
    sizes
        .iter()
        .filter(|&&size| size >= 1024)
        .map(|&size| {
            let msg = &data[..size];
            let mut row = measure_named(PAR2_ROW, msg.len(), threads, runs, &|| {
                let mut md5 = <md5::Md5 as md5::Digest>::new();
                md5::Digest::update(&mut md5, msg);
                std::hint::black_box(md5::Digest::finalize(md5));
                std::hint::black_box(crate::repair::encode_in_memory(msg, 0.10));
            });
            row.kernel = crate::par2::kernel().to_string();
            row.simd = level.map(|l| l.name());
            on_row(&row);
            row
        })
        .collect()
}

/// How long one timed run should take at least (many calls for small messages).
const RUN_TARGET_SECS: f64 = 0.02;

/// Measures every algorithm in `algos` at every size, `runs` timed runs each after one
/// warm-up; `threads` sets the pool for the multi-threaded variant (default: all cores).
/// `on_row` sees each row as it is measured (for a progress display).
pub fn run(
    algos: &[&'static Algorithm],
    sizes: &[usize],
    threads: Option<usize>,
    runs: usize,
    on_row: &mut dyn FnMut(&AlgoRow),
) -> Vec<AlgoRow> {
    let max = sizes.iter().copied().max().unwrap_or(0);
    // Deterministic, incompressible-looking content.
    let data: Vec<u8> =
        (0..max as u64).map(|i| (i.wrapping_mul(0x9E37_79B9_7F4A_7C15) >> 56) as u8).collect();
    let cores = crate::pipeline::cores();
    let pool_threads = threads.unwrap_or(cores).clamp(1, crate::pipeline::MAX_WORKERS);
    let pool = rayon::ThreadPoolBuilder::new().num_threads(pool_threads).build().ok();
    let mut rows = Vec::new();
    for &a in algos {
        for &size in sizes {
            let msg = &data[..size];
            // As the reader tells a hasher about a file (BTIH's piece length and imohash's
            // samples depend on the size).
            let input = Input { size: Some(size as u64), name: b"bench" };
            let row = measure(a, msg, 1, runs, &|| {
                let mut h = a.hasher();
                h.begin(&input);
                h.update(msg);
                std::hint::black_box(h.finish());
            });
            on_row(&row);
            rows.push(row);
            if a.multithreaded
                && pool_threads > 1
                && size >= 256 * 1024
                && let Some(pool) = &pool
            {
                let row = pool.install(|| {
                    measure(a, msg, pool_threads, runs, &|| {
                        let mut h = a.hasher();
                        h.begin(&input);
                        h.update_parallel(msg);
                        std::hint::black_box(h.finish());
                    })
                });
                on_row(&row);
                rows.push(row);
            }
        }
    }
    rows
}

fn measure(
    a: &'static Algorithm,
    msg: &[u8],
    threads: usize,
    runs: usize,
    call: &dyn Fn(),
) -> AlgoRow {
    AlgoRow { kernel: crate_kernel(a), ..measure_named(a.name, msg.len(), threads, runs, call) }
}

/// What code a crate runs for `a`, where it says: SHA-NI for SHA-1 and SHA-256 (the
/// `sha1`/`sha2` crates use it when the CPU has it), crc-fast's target for its CRCs.
fn crate_kernel(a: &Algorithm) -> String {
    use crc_fast::CrcAlgorithm as C;
    let crc = match a.name {
        "crc32c" => Some(C::Crc32Iscsi),
        "crc64nvme" => Some(C::Crc64Nvme),
        _ => None,
    };
    if let Some(c) = crc {
        return crc_fast::get_calculator_target(c);
    }
    match a.lanes {
        Some(f @ (crate::algo::multibuf::Family::Sha1 | crate::algo::multibuf::Family::Sha256)) => {
            super::lanes::single_stream(f).to_string()
        }
        _ => "crate".to_string(),
    }
}

pub(super) fn measure_named(
    name: &'static str,
    bytes: usize,
    threads: usize,
    runs: usize,
    call: &dyn Fn(),
) -> AlgoRow {
    // Calibrate: how many calls make one run of about RUN_TARGET_SECS.
    let t = Instant::now();
    call();
    let one = t.elapsed().as_secs_f64().max(1e-9);
    let calls = ((RUN_TARGET_SECS / one).ceil() as usize).clamp(1, 1_000_000);
    // Warm-up run, then the timed runs.
    for _ in 0..calls {
        call();
    }
    let samples: Vec<f64> = (0..runs.max(1))
        .map(|_| {
            let t = Instant::now();
            for _ in 0..calls {
                call();
            }
            t.elapsed().as_secs_f64() / calls as f64
        })
        .collect();
    let per_call = Stats::of(&samples).expect("at least one run");
    let mbps = |secs: f64| if secs > 0.0 { bytes as f64 / secs / 1e6 } else { 0.0 };
    AlgoRow {
        algorithm: name,
        size: bytes,
        threads,
        per_call,
        best_mbps: mbps(per_call.min),
        median_mbps: mbps(per_call.median),
        kernel: String::new(),
        simd: None,
    }
}

/// The largest message `bench algorithms` hashes: it is held in memory, and beyond this
/// size the figure no longer changes.
pub(crate) const MAX_SIZE: usize = 1 << 30;

/// Parses a list of sizes such as `1K,10K,100K,1M` (powers of 1000 or, with `i`, 1024:
/// `4Ki`). Plain numbers are bytes; at most `MAX_SIZE` each.
pub fn parse_sizes(text: &str) -> Result<Vec<usize>, String> {
    text.split(',')
        .map(|t| {
            let t = t.trim();
            let (num, mult) = if let Some(n) = t.strip_suffix("Ki") {
                (n, 1024)
            } else if let Some(n) = t.strip_suffix("Mi") {
                (n, 1024 * 1024)
            } else if let Some(n) = t.strip_suffix(['K', 'k']) {
                (n, 1000)
            } else if let Some(n) = t.strip_suffix('M') {
                (n, 1_000_000)
            } else if let Some(n) = t.strip_suffix('G') {
                (n, 1_000_000_000)
            } else {
                (t, 1)
            };
            num.parse::<usize>()
                .ok()
                .and_then(|n| n.checked_mul(mult))
                .filter(|&n| n > 0)
                .ok_or_else(|| format!("bad size {t:?} (try 1K,1M,100M)"))
                .and_then(|n| {
                    if n <= MAX_SIZE {
                        Ok(n)
                    } else {
                        Err(format!("size {t:?} is more than the 1Gi a message may have"))
                    }
                })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::algo::lookup;

    #[test]
    fn the_par2_row_is_measured_for_each_size_from_a_kibibyte() {
        let mut seen = 0;
        let rows = par2_rows(&[1000, 200_000], 2, None, &mut |_| seen += 1);
        assert_eq!((rows.len(), seen), (1, 1));
        assert_eq!((rows[0].algorithm, rows[0].size), (PAR2_ROW, 200_000));
        assert!(rows[0].best_mbps >= rows[0].median_mbps && rows[0].median_mbps > 0.0);
    }

    #[test]
    fn sizes_parse_with_decimal_and_binary_suffixes() {
        assert_eq!(parse_sizes("1K,10K,1M").unwrap(), vec![1000, 10_000, 1_000_000]);
        assert_eq!(parse_sizes("4Ki, 1Mi,7").unwrap(), vec![4096, 1 << 20, 7]);
        assert!(parse_sizes("1X").is_err());
        assert!(parse_sizes("0").is_err());
        assert_eq!(parse_sizes("1G").unwrap(), vec![1_000_000_000]);
        assert!(parse_sizes("2G").unwrap_err().contains("more than the 1Gi"));
    }

    #[test]
    fn rows_cover_every_algorithm_size_and_thread_variant() {
        let algos = [lookup("crc32").unwrap(), lookup("blake3").unwrap()];
        let mut seen = 0;
        let rows = run(&algos, &[1000, 300_000], Some(2), 2, &mut |_| seen += 1);
        // crc32 at two sizes; blake3 at two sizes plus the 2-thread run of the large one.
        assert_eq!(rows.len(), 5);
        assert_eq!(seen, 5);
        assert!(rows.iter().all(|r| r.per_call.runs == 2 && r.best_mbps >= r.median_mbps));
        assert!(rows.iter().any(|r| r.algorithm == "blake3" && r.threads == 2));
        assert!(rows.iter().all(|r| r.per_call.min > 0.0));
    }
}
