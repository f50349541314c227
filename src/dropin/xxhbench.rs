//! The xxhsum drop-in's benchmark (`-b`, `-b#`, `-b#,#`, `--benchmark-all`, `-i#`,
//! `-B#`), printed as xxhsum 0.8.1 prints it, measuring fixity's own XXH32/XXH64
//! (xxhash-rust) and XXH3/XXH128 (twox-hash) implementations.
//!
//! Variant ids are xxhsum's: 14 functions (one-shot, seeded, with a secret, streaming),
//! each at an odd id over a 16-byte-aligned buffer and at the next even id three bytes
//! further ("unaligned"). `-b` alone (or `-b0`) runs 1, 3, 5 and 11; an id past the last
//! (28) runs them all. Every round of a variant hashes the buffer repeatedly for about a
//! second; a round shorter than half a second is recalibrated and run again (except with
//! `-i0`, xxhsum's quick look); the best round is reported in hashes per second and MB/s
//! (MB = 2^20 bytes). Timing is wall-clock time (`Instant`) where xxhsum uses `clock()`'s
//! processor time: the same for one busy thread. Everything goes to standard error.

use fixity::read::io_message;
use fixity::sys::OsStrExt;
use std::ffi::OsString;
use std::hash::Hasher as _;
use std::io::Read;
use std::time::Instant;
use twox_hash::{XxHash3_64, XxHash3_128};

/// Ids 0 (unused) to 28, as xxhsum numbers them.
pub(super) const TESTS: usize = 1 + 2 * HASHES.len();
/// What xxhsum's `selectBenchIDs` holds for "every variant".
const ALL: u32 = 99;
/// The ids `-b` runs without a number: XXH32, XXH64, XXH3_64b, XXH128.
const DEFAULT_IDS: [usize; 4] = [1, 3, 5, 11];
/// xxhsum's default number of rounds (`-i`).
pub(super) const DEFAULT_ROUNDS: u32 = 3;
/// xxhsum's default sample size (`-B`): 100 KB.
pub(super) const DEFAULT_SAMPLE: u32 = 100 << 10;
/// Width of the name column.
const NAME_WIDTH: usize = 29;
const MB: f64 = (1u64 << 20) as f64;

/// xxhsum's number reader: digits, then an optional `K`/`M` (x1024, x1048576) with an
/// optional `i` and `B`. `None` on overflow.
pub(super) fn read_u32(s: &[u8], pos: &mut usize) -> Option<u32> {
    const MAX: u32 = u32::MAX / 10 - 1;
    let mut v: u32 = 0;
    while let Some(&c) = s.get(*pos).filter(|c| c.is_ascii_digit()) {
        if v > MAX {
            return None;
        }
        v = v * 10 + (c - b'0') as u32;
        *pos += 1;
    }
    if let Some(&unit @ (b'K' | b'M')) = s.get(*pos) {
        const MAX_K: u32 = u32::MAX >> 10;
        if v > MAX_K {
            return None;
        }
        v <<= 10;
        if unit == b'M' {
            if v > MAX_K {
                return None;
            }
            v <<= 10;
        }
        *pos += 1;
        if s.get(*pos) == Some(&b'i') {
            *pos += 1;
        }
        if s.get(*pos) == Some(&b'B') {
            *pos += 1;
        }
    }
    Some(v)
}

type HashFn = fn(&[u8], u32) -> u32;

/// A fixed secret for the `w/secret` variants, of XXH3's minimum size (136 bytes).
static SECRET: [u8; 136] = {
    let mut s = [0u8; 136];
    let mut i = 0;
    let mut x: u32 = 0x9E37_79B1;
    while i < s.len() {
        x = x.wrapping_mul(0x0100_0193) ^ (i as u32);
        s[i] = (x >> 24) as u8;
        i += 1;
    }
    s
};

/// xxhsum 0.8.1's table of benchmarked functions, in its order; each returns the low 32
/// bits of the hash (seeded by the call number where the function takes a seed).
static HASHES: [(&str, HashFn); 14] = [
    ("XXH32", |b, s| xxhash_rust::xxh32::xxh32(b, s)),
    ("XXH64", |b, s| xxhash_rust::xxh64::xxh64(b, u64::from(s)) as u32),
    ("XXH3_64b", |b, _| XxHash3_64::oneshot(b) as u32),
    ("XXH3_64b w/seed", |b, s| XxHash3_64::oneshot_with_seed(u64::from(s), b) as u32),
    ("XXH3_64b w/secret", |b, _| XxHash3_64::oneshot_with_secret(&SECRET, b).unwrap_or(0) as u32),
    ("XXH128", |b, _| XxHash3_128::oneshot(b) as u32),
    ("XXH128 w/seed", |b, s| XxHash3_128::oneshot_with_seed(u64::from(s), b) as u32),
    ("XXH128 w/secret", |b, _| XxHash3_128::oneshot_with_secret(&SECRET, b).unwrap_or(0) as u32),
    ("XXH32_stream", |b, s| {
        let mut h = xxhash_rust::xxh32::Xxh32::new(s);
        h.update(b);
        h.digest()
    }),
    ("XXH64_stream", |b, s| {
        let mut h = xxhash_rust::xxh64::Xxh64::new(u64::from(s));
        h.update(b);
        h.digest() as u32
    }),
    ("XXH3_stream", |b, _| {
        let mut h = XxHash3_64::new();
        h.write(b);
        h.finish() as u32
    }),
    ("XXH3_stream w/seed", |b, s| {
        let mut h = XxHash3_64::with_seed(u64::from(s));
        h.write(b);
        h.finish() as u32
    }),
    ("XXH128_stream", |b, _| {
        let mut h = XxHash3_128::new();
        h.write(b);
        h.finish_128() as u32
    }),
    ("XXH128_stream w/seed", |b, s| {
        let mut h = XxHash3_128::with_seed(u64::from(s));
        h.write(b);
        h.finish_128() as u32
    }),
];

/// The name xxhsum shows for variant `id` (1 to 28).
pub(super) fn variant_name(id: usize) -> String {
    let (name, _) = HASHES[(id - 1) / 2];
    if id.is_multiple_of(2) { format!("{name} unaligned") } else { name.to_string() }
}

/// The variants chosen by `-b` options, as xxhsum keeps them: each id named is marked, and
/// the last number read decides the set (0: the default four; past the last id or
/// `--benchmark-all`: all of them; otherwise the marked ones).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(super) struct Selection {
    marked: [bool; TESTS],
    last: u32,
}

impl Selection {
    /// Reads the numbers after `-b` in `arg` from `*pos` (`1`, `1,3,5`, or none: 0), as
    /// xxhsum does, leaving `*pos` after them. `None`: a number too large for 32 bits.
    pub(super) fn read(&mut self, arg: &[u8], pos: &mut usize) -> Option<()> {
        loop {
            if arg.get(*pos) == Some(&b',') {
                *pos += 1;
            }
            let n = read_u32(arg, pos)?;
            if (n as usize) < TESTS {
                self.marked[n as usize] = true;
                self.last = n;
            } else {
                self.last = ALL;
            }
            if arg.get(*pos) != Some(&b',') {
                return Some(());
            }
        }
    }

    /// `--benchmark-all`.
    pub(super) fn all(&mut self) {
        self.last = ALL;
    }

    /// The ids to run, in order.
    pub(super) fn ids(&self) -> Vec<usize> {
        match self.last {
            0 => DEFAULT_IDS.to_vec(),
            ALL => (1..TESTS).collect(),
            _ => (1..TESTS).filter(|&i| self.marked[i]).collect(),
        }
    }
}

/// What a benchmark run does.
#[derive(Debug, PartialEq, Eq)]
pub(super) struct Plan {
    /// Variant ids, in the order run.
    pub ids: Vec<usize>,
    /// `-i#`: rounds per variant (0: one quick round); xxhsum reads it as a C `int`.
    pub rounds: i32,
    /// `-B#`: bytes in the internal sample (when no file is named).
    pub sample: usize,
    /// Files whose contents are benchmarked instead of the sample.
    pub files: Vec<OsString>,
    /// 2 by default; each `-q` lowers it. 2: banner and progress; 1: results; 0: only
    /// the hashes per second, as `N, `; below: nothing.
    pub log_level: i32,
}

/// Runs `plan`, printing to standard error; `banner` is the version line shown at log
/// level 2. Returns the exit code (xxhsum's: 0, or 11, 12, 13 for a file that cannot be
/// opened, memory that cannot be had, a file that cannot be read).
pub(super) fn run(plan: &Plan, banner: &str) -> u8 {
    if plan.log_level >= 2 {
        eprint!("{banner}");
    }
    if plan.files.is_empty() {
        let Some(mut buf) = Aligned::zeroed(plan.sample) else {
            return out_of_memory();
        };
        if plan.log_level >= 1 {
            let size = if plan.sample > 10 << 10 {
                format!("{} KB", plan.sample >> 10)
            } else {
                format!("{} bytes", plan.sample)
            };
            eprintln!("Sample of {size}...        ");
        }
        bench_buffer(plan, &mut buf);
        return 0;
    }
    for name in &plan.files {
        let shown = String::from_utf8_lossy(name.as_bytes());
        // xxhsum takes the size of a regular file (0 for anything else), then opens it.
        let size =
            std::fs::metadata(name).ok().filter(|m| m.is_file()).map_or(0, |m| m.len() as usize);
        let mut file = match std::fs::File::open(name) {
            Ok(f) => f,
            Err(e) => {
                eprintln!("Error: Could not open '{shown}': {}.", io_message(&e));
                return 11;
            }
        };
        let Some(mut buf) = Aligned::zeroed(size) else {
            return out_of_memory();
        };
        let mut got = 0;
        let mut why = "Success".to_string();
        while got < size {
            match file.read(&mut buf.data_mut()[got..]) {
                Ok(0) => break,
                Ok(n) => got += n,
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                Err(e) => {
                    why = io_message(&e);
                    break;
                }
            }
        }
        if got != size {
            eprint!("\nError: Could not read '{shown}': {why}.\n");
            return 13;
        }
        bench_buffer(plan, &mut buf);
    }
    0
}

fn out_of_memory() -> u8 {
    eprint!("\nError: Out of memory.\n");
    12
}

/// A zeroed buffer of `len` bytes starting on a 16-byte boundary, with 3 bytes to spare
/// past the end for the unaligned variants.
struct Aligned {
    raw: Vec<u8>,
    start: usize,
    len: usize,
}

impl Aligned {
    fn zeroed(len: usize) -> Option<Aligned> {
        let total = len.checked_add(16 + 3)?;
        let mut raw = Vec::new();
        raw.try_reserve_exact(total).ok()?;
        raw.resize(total, 0);
        let start = raw.as_ptr().align_offset(16);
        Some(Aligned { raw, start, len })
    }

    fn data_mut(&mut self) -> &mut [u8] {
        &mut self.raw[self.start..self.start + self.len]
    }

    /// The data, or the same length three bytes further.
    fn view(&self, unaligned: bool) -> &[u8] {
        let from = self.start + if unaligned { 3 } else { 0 };
        &self.raw[from..from + self.len]
    }
}

fn bench_buffer(plan: &Plan, buf: &mut Aligned) {
    for &id in &plan.ids {
        let (_, h) = HASHES[(id - 1) / 2];
        bench_one(plan, id, &variant_name(id), h, buf.view(id.is_multiple_of(2)));
    }
}

/// One result line's fields after the id: `NAME : SIZE -> N it/s (M MB/s) `.
fn fields(name: &str, size: usize, per_hash: f64) -> String {
    format!(
        "{name:<NAME_WIDTH$.NAME_WIDTH$} : {size:>10} -> {:>8.0} it/s ({:>7.1} MB/s) ",
        1.0 / per_hash,
        size as f64 / MB / per_hash
    )
}

/// xxhsum's `XSUM_benchHash`: rounds of about a second each, the fastest kept.
fn bench_one(plan: &Plan, id: usize, name: &str, h: HashFn, data: &[u8]) {
    let verbose = plan.log_level >= 2;
    let size = data.len();
    // The first round aims at 300 MB/s.
    let mut per_round: u32 = ((300u64 << 20) / (size as u64 + 1)) as u32 + 1;
    let rounds = if plan.rounds == 0 { 1 } else { plan.rounds };
    let mut fastest = 100_000_000.0_f64;
    if verbose {
        eprint!("\r{:80}\r", "");
    }
    let mut round = 1;
    while round <= rounds {
        if verbose {
            eprint!("{round:>2}-{name:<NAME_WIDTH$.NAME_WIDTH$} : {size:>10} ->\r");
        }
        let start = Instant::now();
        let mut r: u32 = 0;
        for u in 0..per_round {
            r = r.wrapping_add(h(std::hint::black_box(data), u));
        }
        std::hint::black_box(r);
        let secs = start.elapsed().as_secs_f64();
        let per_hash = secs / f64::from(per_round);
        if secs < 0.5 {
            // Too short to trust: aim at a second next time, and run the round again
            // unless -i0 asked for a quick look.
            per_round =
                if secs == 0.0 { per_round.wrapping_mul(100) } else { calls_per_second(per_hash) };
            if plan.rounds > 0 {
                continue;
            }
        }
        fastest = fastest.min(per_hash);
        if verbose && fastest > 0.0 {
            eprint!("{round:>2}-{}\r", fields(name, size, fastest));
        }
        per_round = calls_per_second(fastest);
        round += 1;
    }
    if plan.log_level >= 1 {
        eprintln!("{id:>2}#{}", fields(name, size, fastest));
    } else if plan.log_level == 0 {
        eprint!("{}, ", (1.0 / fastest) as u32);
    }
}

/// Calls in a second at `per_hash` seconds each, plus one, at most 4000 Mi.
fn calls_per_second(per_hash: f64) -> u32 {
    ((1.0 / per_hash) + 1.0).min(f64::from(4000u32 << 20)) as u32
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ids(args: &[&str]) -> Option<Vec<usize>> {
        let mut s = Selection::default();
        for a in args {
            let mut p = 0;
            s.read(a.as_bytes(), &mut p)?;
            assert_eq!(p, a.len(), "{a}: stopped early");
        }
        Some(s.ids())
    }

    #[test]
    fn numbers_read_as_xxhsum_reads_them() {
        let n = |s: &str| {
            let mut p = 0;
            read_u32(s.as_bytes(), &mut p).map(|v| (v, p))
        };
        assert_eq!(n(""), Some((0, 0)));
        assert_eq!(n("128x"), Some((128, 3)));
        assert_eq!(n("1KiB"), Some((1024, 4)));
        assert_eq!(n("2M"), Some((2 << 20, 2)));
        assert_eq!(n("99999999999"), None);
    }

    #[test]
    fn selections_are_xxhsums() {
        assert_eq!(ids(&[""]), Some(vec![1, 3, 5, 11]));
        assert_eq!(ids(&["0"]), Some(vec![1, 3, 5, 11]));
        assert_eq!(ids(&["1"]), Some(vec![1]));
        assert_eq!(ids(&["1,3"]), Some(vec![1, 3]));
        assert_eq!(ids(&[",7"]), Some(vec![7]));
        assert_eq!(ids(&["5", "3"]), Some(vec![3, 5]));
        // The last number decides: 0 means the default set, whatever came before.
        assert_eq!(ids(&["2,0"]), Some(vec![1, 3, 5, 11]));
        assert_eq!(ids(&["28"]), Some(vec![28]));
        assert_eq!(ids(&["29"]), Some((1..29).collect()));
        assert_eq!(ids(&["99"]), Some((1..29).collect()));
        assert_eq!(ids(&["1K"]), Some((1..29).collect()));
        // An out-of-range id then a valid one: only the marked ones.
        assert_eq!(ids(&["99", "3"]), Some(vec![3]));
        assert_eq!(ids(&["99999999999"]), None);
        let mut s = Selection::default();
        s.all();
        assert_eq!(s.ids().len(), 28);
    }

    #[test]
    fn a_number_ends_where_the_digits_do() {
        let mut s = Selection::default();
        let mut p = 0;
        s.read(b"3i1", &mut p).unwrap();
        assert_eq!((p, s.ids()), (1, vec![3]));
    }

    #[test]
    fn names_follow_xxhsums_table() {
        assert_eq!(variant_name(1), "XXH32");
        assert_eq!(variant_name(2), "XXH32 unaligned");
        assert_eq!(variant_name(7), "XXH3_64b w/seed");
        assert_eq!(variant_name(10), "XXH3_64b w/secret unaligned");
        assert_eq!(variant_name(11), "XXH128");
        assert_eq!(variant_name(28), "XXH128_stream w/seed unaligned");
    }

    #[test]
    fn result_fields_are_laid_out_as_xxhsum_prints_them() {
        let line = fields("XXH32", 102_400, 1.0 / 115_149.0);
        assert_eq!(
            line,
            "XXH32                         :     102400 ->   115149 it/s (11245.0 MB/s) "
        );
        // Names past 29 characters are cut, as `%-29.29s` does.
        assert!(
            fields("XXH128_stream w/seed unaligned", 3, 1.0)
                .starts_with("XXH128_stream w/seed unaligne :")
        );
    }

    #[test]
    fn variants_hash_what_the_registry_hashes() {
        let data = b"fixity";
        assert_eq!(HASHES[0].1(data, 0), xxhash_rust::xxh32::xxh32(data, 0));
        // Streaming and one-shot forms agree.
        for (one, stream) in [(0, 8), (1, 9), (2, 10), (3, 11), (5, 12), (6, 13)] {
            assert_eq!(HASHES[one].1(data, 7), HASHES[stream].1(data, 7), "{}", HASHES[one].0);
        }
        assert_ne!(HASHES[4].1(data, 0), HASHES[2].1(data, 0), "the secret is used");
    }
}
