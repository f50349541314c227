//! `fixity bench`: the method built in. Repeated runs summarized as min / median / max,
//! the machine facts that explain the figures, the plain-read ceiling beside every hash,
//! cold-cache runs that say how the cache was emptied (and whether it really was), and the
//! peer tools run on the same data with their digests checked against fixity's.
//!
//! - [`algos`]: in-memory throughput per algorithm and message size.
//! - [`tree`]: fixity's own pipeline over a file or tree, the read ceiling, eviction.
//! - [`peers`]: the external tools, their command lines and output parsers.
//! - [`report`]: table, markdown, JSON and CSV writers, and the SVG chart.

pub mod algos;
pub mod lanes;
pub mod peers;
pub mod report;
pub mod tree;

use serde::Serialize;

/// Summary of repeated timings (seconds).
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub struct Stats {
    /// Fastest run.
    pub min: f64,
    /// Median (the mean of the two middle runs for an even count).
    pub median: f64,
    /// Slowest run.
    pub max: f64,
    /// How many runs.
    pub runs: usize,
}

impl Stats {
    /// Summarizes `samples` (`None` when there are none).
    pub(crate) fn of(samples: &[f64]) -> Option<Stats> {
        if samples.is_empty() || samples.iter().any(|s| s.is_nan()) {
            return None;
        }
        let mut v = samples.to_vec();
        v.sort_by(|a, b| a.partial_cmp(b).expect("no NaN"));
        let n = v.len();
        let median = if n % 2 == 1 { v[n / 2] } else { (v[n / 2 - 1] + v[n / 2]) / 2.0 };
        Some(Stats { min: v[0], median, max: v[n - 1], runs: n })
    }

    /// The spread of the runs relative to the median: (max - min) / median.
    #[cfg(test)]
    pub(crate) fn spread(&self) -> f64 {
        if self.median > 0.0 { (self.max - self.min) / self.median } else { 0.0 }
    }
}

/// Whether a measured rate is limited by reading or by hashing.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Bound {
    /// Within 10% of the plain-read ceiling: the storage (or page cache) is the limit.
    Io,
    /// Clearly below the ceiling: the hash function is the limit.
    Cpu,
}

impl Bound {
    /// Classifies a run taking `seconds` against the read ceiling's `ceiling_seconds`
    /// (both medians over the same data).
    pub(crate) fn classify(seconds: f64, ceiling_seconds: f64) -> Bound {
        if seconds <= ceiling_seconds * 1.10 { Bound::Io } else { Bound::Cpu }
    }

    /// Label for tables.
    pub(crate) fn label(self) -> &'static str {
        match self {
            Bound::Io => "I/O-bound",
            Bound::Cpu => "CPU-bound",
        }
    }
}

/// Facts about the machine that explain benchmark figures.
#[derive(Clone, Debug, Serialize)]
pub struct Machine {
    /// CPU model name.
    pub cpu: String,
    /// Logical CPUs available to this process.
    pub cores: usize,
    /// CPU features the hash crates dispatch on at run time.
    pub features: Vec<&'static str>,
    /// 1-minute load average when the benchmark started.
    pub load_start: Option<f64>,
    /// 1-minute load average when it ended.
    pub load_end: Option<f64>,
    /// Kernel release.
    pub kernel: String,
    /// The SIMD levels this CPU has for fixity's own kernels, lowest first
    /// ([`crate::simd`]).
    pub simd_levels: Vec<&'static str>,
    /// The SIMD cap at the start (`FIXITY_SIMD`, `--simd`; else the highest level).
    pub simd_cap: &'static str,
    /// Share of CPU time other processes used during half a second before the benchmark
    /// started (from /proc/stat): the noise the load average only hints at.
    pub busy_before: Option<f64>,
}

impl Machine {
    /// Reads the facts now (`load_end` is filled in by [`Machine::finish`]).
    pub fn probe() -> Machine {
        let cpuinfo = std::fs::read_to_string("/proc/cpuinfo").unwrap_or_default();
        let cpu = cpuinfo
            .lines()
            .find_map(|l| {
                l.strip_prefix("model name")
                    .and_then(|r| r.split_once(':'))
                    .map(|(_, v)| v.trim().to_string())
            })
            .unwrap_or_else(|| std::env::consts::ARCH.to_string());
        let kernel = std::fs::read_to_string("/proc/sys/kernel/osrelease")
            .unwrap_or_default()
            .trim()
            .to_string();
        Machine {
            cpu,
            cores: crate::pipeline::cores(),
            features: cpu_features(),
            load_start: load_average(),
            load_end: None,
            kernel,
            simd_levels: crate::simd::available().iter().map(|l| l.name()).collect(),
            simd_cap: crate::simd::cap().name(),
            busy_before: busy_fraction(std::time::Duration::from_millis(500)),
        }
    }

    /// Records the load at the end.
    pub fn finish(&mut self) {
        self.load_end = load_average();
    }

    /// A warning when other work competed: the CPUs were more than a quarter busy just
    /// before the start, or the load at the end exceeds what the benchmark alone makes
    /// (one runnable thread per core). Figures are noisy then.
    pub fn load_warning(&self) -> Option<String> {
        let mut why = Vec::new();
        if let Some(b) = self.busy_before.filter(|b| *b > 0.25) {
            why.push(format!("the CPUs were {:.0}% busy before the start", b * 100.0));
        }
        if let Some(l) = self.load_end.filter(|l| *l > self.cores as f64 + 0.5) {
            why.push(format!("load average {l:.2} at the end on {} cores", self.cores));
        }
        (!why.is_empty())
            .then(|| format!("{}: other work competed, figures are noisy", why.join(" and ")))
    }
}

/// The share of CPU time spent busy (not idle or waiting for I/O) over `over`, from two
/// readings of /proc/stat.
pub(crate) fn busy_fraction(over: std::time::Duration) -> Option<f64> {
    fn read() -> Option<(u64, u64)> {
        let stat = std::fs::read_to_string("/proc/stat").ok()?;
        let cpu = stat.lines().next()?.strip_prefix("cpu ")?;
        let v: Vec<u64> = cpu.split_whitespace().filter_map(|x| x.parse().ok()).collect();
        let total: u64 = v.iter().take(8).sum();
        let idle = v.get(3)? + v.get(4).copied().unwrap_or(0);
        Some((total, idle))
    }
    let (t0, i0) = read()?;
    std::thread::sleep(over);
    let (t1, i1) = read()?;
    let dt = t1.checked_sub(t0).filter(|d| *d > 0)?;
    Some(1.0 - (i1.saturating_sub(i0)) as f64 / dt as f64)
}

/// The 1-minute load average.
pub(crate) fn load_average() -> Option<f64> {
    std::fs::read_to_string("/proc/loadavg").ok()?.split_whitespace().next()?.parse().ok()
}

/// CPU features detected at run time that the hash crates use (SHA-NI for SHA-1/SHA-2,
/// SSE4.1/AVX2/AVX-512 for BLAKE3 and xxHash, PCLMULQDQ for the CRCs).
pub(crate) fn cpu_features() -> Vec<&'static str> {
    #[allow(unused_mut)]
    let mut v = Vec::new();
    #[cfg(target_arch = "x86_64")]
    {
        macro_rules! probe {
            ($($f:tt => $label:expr),*) => {
                $( if std::arch::is_x86_feature_detected!($f) { v.push($label); } )*
            };
        }
        probe!("sse4.1" => "SSE4.1", "avx2" => "AVX2", "avx512f" => "AVX-512F",
               "avx512vl" => "AVX-512VL", "sha" => "SHA-NI", "pclmulqdq" => "PCLMULQDQ",
               "vpclmulqdq" => "VPCLMULQDQ");
    }
    #[cfg(target_arch = "aarch64")]
    {
        macro_rules! probe {
            ($($f:tt => $label:expr),*) => {
                $( if std::arch::is_aarch64_feature_detected!($f) { v.push($label); } )*
            };
        }
        probe!("neon" => "NEON", "sha2" => "SHA2", "sha3" => "SHA3", "crc" => "CRC", "pmull" => "PMULL");
    }
    v
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stats_take_min_median_max() {
        let s = Stats::of(&[3.0, 1.0, 2.0]).unwrap();
        assert_eq!((s.min, s.median, s.max, s.runs), (1.0, 2.0, 3.0, 3));
        let s = Stats::of(&[4.0, 1.0, 3.0, 2.0]).unwrap();
        assert_eq!(s.median, 2.5);
        assert_eq!(Stats::of(&[5.0]).unwrap().median, 5.0);
        assert!(Stats::of(&[]).is_none());
        assert!(Stats::of(&[1.0, f64::NAN]).is_none());
        assert!((Stats::of(&[1.0, 1.5, 2.0]).unwrap().spread() - 2.0 / 3.0).abs() < 1e-12);
    }

    #[test]
    fn within_ten_percent_of_the_ceiling_is_io_bound() {
        assert_eq!(Bound::classify(1.0, 1.0), Bound::Io);
        assert_eq!(Bound::classify(1.09, 1.0), Bound::Io);
        assert_eq!(Bound::classify(1.11, 1.0), Bound::Cpu);
        assert_eq!(Bound::classify(0.5, 1.0), Bound::Io, "faster than plain reads (mmap)");
    }

    #[test]
    fn competing_work_is_warned_about() {
        let mut m = Machine::probe();
        m.cores = 2;
        m.busy_before = Some(0.1);
        m.load_end = Some(2.3);
        assert!(m.load_warning().is_none(), "the benchmark's own load is expected");
        m.load_end = Some(3.7);
        let w = m.load_warning().unwrap();
        assert!(w.contains("3.70 at the end on 2 cores"), "{w}");
        m.load_end = None;
        m.busy_before = Some(0.6);
        assert!(m.load_warning().unwrap().contains("60% busy before the start"));
        let b = busy_fraction(std::time::Duration::from_millis(50)).unwrap();
        assert!((0.0..=1.0).contains(&b));
    }
}
