//! The SIMD level fixity's own kernels may use: the one switch over every hand-written
//! kernel (GF(2^16) for PAR2, the multi-buffer MD5/SHA-1/SHA-256 lanes, the BLAKE3 lanes).
//!
//! Each kernel needs a level: `scalar` (the portable code), `ssse3` (128-bit byte
//! shuffles), `avx2`, `avx512` (AVX-512F, BW and VL) or `gfni` (the Galois-field affine
//! instructions, with AVX2 or AVX-512) on x86-64; `scalar` or `neon` on aarch64. Dispatch
//! takes the fastest kernel whose level is at most the **cap**, which is the highest
//! level this CPU has unless the environment variable `FIXITY_SIMD` or the command line's
//! `--simd` names a lower one. So every path can be run on one machine: the tests and
//! `fixity bench algorithms --simd all` go through each level the CPU has, and a user who
//! suspects a kernel can take it out of the picture (`FIXITY_SIMD=scalar`).
//!
//! The hash crates (`blake3` for one large input, `sha1`/`sha2` with SHA-NI, `crc-fast`,
//! `crc32fast`, `xxhash-rust`) pick their own code at run time and are not capped: they
//! offer no switch, and their own test suites cover their paths.

use std::sync::OnceLock;
use std::sync::atomic::{AtomicU8, Ordering};

/// A SIMD level, from the portable code up. Levels of one architecture are ordered: a
/// CPU with a level has every lower one (detection makes sure of it).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Level {
    /// The portable code, no SIMD.
    Scalar,
    /// x86-64 SSSE3: 128-bit byte shuffles (`pshufb`).
    Ssse3,
    /// aarch64 Advanced SIMD (NEON): 128-bit table lookups (`tbl`).
    Neon,
    /// x86-64 AVX2: 256-bit integer operations.
    Avx2,
    /// x86-64 AVX-512F, BW and VL.
    Avx512,
    /// x86-64 GFNI (`vgf2p8affineqb`) with AVX2, and with AVX-512 where the CPU has it.
    Gfni,
}

impl Level {
    /// Every level of this build's architecture, lowest first.
    pub const ALL: &'static [Level] = if cfg!(target_arch = "x86_64") {
        &[Level::Scalar, Level::Ssse3, Level::Avx2, Level::Avx512, Level::Gfni]
    } else if cfg!(target_arch = "aarch64") {
        &[Level::Scalar, Level::Neon]
    } else {
        &[Level::Scalar]
    };

    /// The name `FIXITY_SIMD` and `--simd` take.
    pub fn name(self) -> &'static str {
        match self {
            Level::Scalar => "scalar",
            Level::Ssse3 => "ssse3",
            Level::Neon => "neon",
            Level::Avx2 => "avx2",
            Level::Avx512 => "avx512",
            Level::Gfni => "gfni",
        }
    }

    /// The level named `name` (case-insensitive), if this architecture has it.
    pub fn parse(name: &str) -> Option<Level> {
        Level::ALL.iter().copied().find(|l| l.name().eq_ignore_ascii_case(name.trim()))
    }

    fn from_u8(v: u8) -> Level {
        Level::ALL.iter().copied().find(|l| *l as u8 == v).unwrap_or(Level::Scalar)
    }
}

impl std::fmt::Display for Level {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

/// Whether this CPU runs `level`'s instructions (its level and every lower one): asked
/// once, then a bit of a mask (dispatch asks on every call of a kernel).
fn has(level: Level) -> bool {
    static HAS: OnceLock<u8> = OnceLock::new();
    let mask = *HAS.get_or_init(|| {
        Level::ALL.iter().filter(|&&l| detect(l)).fold(0, |m, &l| m | 1 << l as u8)
    });
    mask & 1 << level as u8 != 0
}

/// Asks the CPU whether it has `level` (and every lower one).
fn detect(level: Level) -> bool {
    match level {
        Level::Scalar => true,
        #[cfg(target_arch = "x86_64")]
        Level::Ssse3 => is_x86_feature_detected!("ssse3"),
        #[cfg(target_arch = "x86_64")]
        Level::Avx2 => detect(Level::Ssse3) && is_x86_feature_detected!("avx2"),
        #[cfg(target_arch = "x86_64")]
        Level::Avx512 => {
            detect(Level::Avx2)
                && is_x86_feature_detected!("avx512f")
                && is_x86_feature_detected!("avx512bw")
                && is_x86_feature_detected!("avx512vl")
        }
        // GFNI with AVX2 at least (Intel's Atom cores have GFNI with SSE only: no kernel).
        #[cfg(target_arch = "x86_64")]
        Level::Gfni => detect(Level::Avx2) && is_x86_feature_detected!("gfni"),
        #[cfg(target_arch = "aarch64")]
        Level::Neon => std::arch::is_aarch64_feature_detected!("neon"),
        #[allow(unreachable_patterns)] // every arm above exists on some architecture
        _ => false,
    }
}

/// The levels this CPU has, lowest first (`scalar` always).
pub fn available() -> Vec<Level> {
    Level::ALL.iter().copied().filter(|&l| has(l)).collect()
}

/// The highest level this CPU has.
pub fn best() -> Level {
    available().last().copied().unwrap_or(Level::Scalar)
}

/// No cap set yet (the first [`cap`] reads `FIXITY_SIMD`).
const UNSET: u8 = u8::MAX;
static CAP: AtomicU8 = AtomicU8::new(UNSET);

/// The level `FIXITY_SIMD` names, if set: an error for a name that is no level of this
/// architecture or a level this CPU does not have (the binary refuses to start then).
pub fn from_env() -> Result<Option<Level>, String> {
    match std::env::var("FIXITY_SIMD") {
        Ok(v) if v.trim().is_empty() => Ok(None),
        Ok(v) => checked(&v).map(Some).map_err(|e| format!("FIXITY_SIMD: {e}")),
        Err(std::env::VarError::NotPresent) => Ok(None),
        Err(std::env::VarError::NotUnicode(_)) => Err("FIXITY_SIMD is not UTF-8".into()),
    }
}

/// The level named `name` if this CPU has it, else why not (naming the levels it has).
pub fn checked(name: &str) -> Result<Level, String> {
    let names = || available().iter().map(|l| l.name()).collect::<Vec<_>>().join(", ");
    let level = Level::parse(name)
        .ok_or_else(|| format!("no SIMD level {name:?} (this CPU has: {})", names()))?;
    if !has(level) {
        return Err(format!("this CPU has no {level} (it has: {})", names()));
    }
    Ok(level)
}

/// The highest level kernels may use now: what [`set_cap`] set, else `FIXITY_SIMD`'s
/// level (ignored when it is not one this CPU has: the binary refused it already), else
/// [`best`].
pub fn cap() -> Level {
    match CAP.load(Ordering::Relaxed) {
        UNSET => {
            let level = from_env().ok().flatten().unwrap_or_else(best);
            // A set_cap racing this first read wins.
            let _ = CAP.compare_exchange(UNSET, level as u8, Ordering::Relaxed, Ordering::Relaxed);
            Level::from_u8(CAP.load(Ordering::Relaxed))
        }
        v => Level::from_u8(v),
    }
}

/// Caps the kernels at `level` from now on (`--simd`, benchmarks comparing levels,
/// tests); errors when this CPU does not have it. Calls already running keep the kernel
/// they took.
pub fn set_cap(level: Level) -> Result<(), String> {
    if !has(level) {
        return checked(level.name()).map(|_| ());
    }
    CAP.store(level as u8, Ordering::Relaxed);
    Ok(())
}

/// Whether a kernel of `level` may run: the CPU has it and it is within the cap.
pub fn allows(level: Level) -> bool {
    level <= cap() && has(level)
}

/// Runs `f` with the cap at `level` and puts the cap back after (for a benchmark row per
/// level; the process's other threads see the cap meanwhile).
pub fn with_cap<T>(level: Level, f: impl FnOnce() -> T) -> Result<T, String> {
    let before = cap();
    set_cap(level)?;
    struct Restore(Level);
    impl Drop for Restore {
        fn drop(&mut self) {
            let _ = set_cap(self.0);
        }
    }
    let _restore = Restore(before);
    Ok(f())
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    #[test]
    fn names_round_trip_and_levels_are_ordered() {
        for &l in Level::ALL {
            assert_eq!(Level::parse(l.name()), Some(l));
            assert_eq!(Level::parse(&l.name().to_uppercase()), Some(l));
            assert_eq!(Level::from_u8(l as u8), l);
        }
        assert!(Level::ALL.windows(2).all(|w| w[0] < w[1]));
        assert_eq!(Level::parse("mmx"), None);
    }

    #[test]
    fn the_cpu_has_scalar_and_every_level_below_one_it_has() {
        let have = available();
        assert_eq!(have[0], Level::Scalar);
        assert_eq!(best(), *have.last().unwrap());
        let n = have.len();
        assert_eq!(&Level::ALL[..n], &have[..], "levels are had from the bottom up");
    }

    #[test]
    fn a_level_the_cpu_lacks_is_refused_by_name() {
        assert!(checked("mmx").unwrap_err().contains("no SIMD level"));
        if let Some(&lacking) = Level::ALL.iter().find(|l| !has(**l)) {
            let e = checked(lacking.name()).unwrap_err();
            assert!(e.contains("this CPU has no") && e.contains("scalar"), "{e}");
            assert!(set_cap(lacking).is_err());
        }
    }

    #[test]
    fn with_cap_limits_what_is_allowed_and_restores() {
        let _serial = crate::simd::tests::LOCK.lock().unwrap_or_else(|e| e.into_inner());
        let before = cap();
        with_cap(Level::Scalar, || {
            assert_eq!(cap(), Level::Scalar);
            assert!(allows(Level::Scalar));
            assert!(Level::ALL[1..].iter().all(|&l| !allows(l)));
        })
        .unwrap();
        assert_eq!(cap(), before);
    }

    /// Tests that change the process's cap hold this (the test harness runs threads).
    pub(crate) static LOCK: std::sync::Mutex<()> = std::sync::Mutex::new(());

    /// Runs `f` under the cap of each level this CPU has, lowest first (the cap held for
    /// the whole run); a level it lacks is said ("skipped: ..."), and fails the test under
    /// `FIXITY_REQUIRE_KERNELS=1` (set where the CPU is known to have every level).
    pub(crate) fn each_level(what: &str, mut f: impl FnMut(Level)) {
        let _serial = LOCK.lock().unwrap_or_else(|e| e.into_inner());
        let require = std::env::var_os("FIXITY_REQUIRE_KERNELS").is_some_and(|v| v == "1");
        for &level in Level::ALL {
            if !has(level) {
                assert!(!require, "this CPU has no {level} for {what} (FIXITY_REQUIRE_KERNELS=1)");
                eprintln!("skipped: {what} at {level}: this CPU does not have it");
                continue;
            }
            with_cap(level, || f(level)).unwrap();
        }
    }
}
