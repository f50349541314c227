//! What fixity remembers about a tree between runs, so a later run can tell silent
//! corruption from an edit, a move or a deletion. Two stores:
//!
//! - [`sqlite`]: the embedded default, one SQLite database per tree (`ROOT/.fixity/
//!   catalog.db`), which also knows about files that disappeared;
//! - [`xattr`]: the digest kept in each file's extended attributes (`user.fixity.*`),
//!   reading what cshatag wrote (`user.shatag.*`).
//!
//! The classification rules live in [`Class`]; the runs that apply them live in
//! [`crate::scrub`].

pub mod sqlite;
pub mod xattr;

use std::fs::File;
use std::io;
use std::path::Path;
use std::time::{SystemTime, UNIX_EPOCH};

/// What a run found for one file. Every file a run looks at gets exactly one class.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Class {
    /// Content matches the recorded digest (or, in a scan, size and mtime are unchanged).
    Ok,
    /// Size or mtime changed: an ordinary edit. Re-hashed and recorded.
    Modified,
    /// Size and mtime unchanged but the content's digest differs: bitrot. The catalog
    /// keeps the old, good digest.
    Corrupt,
    /// Recorded, but no longer in the tree. Kept on record until it is back or forgotten.
    Missing,
    /// In the tree for the first time. Hashed and recorded.
    New,
    /// A missing file's content found at a new path.
    Moved,
    /// Could not be read (an I/O error, or it changed while being read).
    Unreadable,
}

impl Class {
    /// Every class, in report order.
    pub const ALL: [Class; 7] = [
        Class::Ok,
        Class::Modified,
        Class::Corrupt,
        Class::Missing,
        Class::New,
        Class::Moved,
        Class::Unreadable,
    ];

    /// The name stored in the catalog and used in JSON.
    pub fn name(self) -> &'static str {
        match self {
            Class::Ok => "ok",
            Class::Modified => "modified",
            Class::Corrupt => "corrupt",
            Class::Missing => "missing",
            Class::New => "new",
            Class::Moved => "moved",
            Class::Unreadable => "unreadable",
        }
    }

    /// The inverse of [`Class::name`].
    pub fn from_name(name: &str) -> Option<Class> {
        Class::ALL.into_iter().find(|c| c.name() == name)
    }

    /// Whether this class is a finding: data may be lost, the exit status is 1, and it
    /// stands (reported by every run) until resolved.
    pub fn is_failure(self) -> bool {
        matches!(self, Class::Corrupt | Class::Unreadable | Class::Missing)
    }
}

/// Milliseconds since the Unix epoch: the catalog's clock for first-seen and
/// last-verified times.
pub fn now_ms() -> i64 {
    SystemTime::now().duration_since(UNIX_EPOCH).map(|d| d.as_millis() as i64).unwrap_or(0)
}

/// Formats milliseconds since the epoch as `YYYY-MM-DD HH:MM:SS` UTC.
pub fn format_time(ms: i64) -> String {
    let secs = ms.div_euclid(1000);
    let (days, rem) = (secs.div_euclid(86_400), secs.rem_euclid(86_400));
    let (y, m, d) = civil_from_days(days);
    format!("{y:04}-{m:02}-{d:02} {:02}:{:02}:{:02}", rem / 3600, rem / 60 % 60, rem % 60)
}

/// Formats milliseconds since the epoch as RFC 3339 UTC (`2026-11-23T12:00:00Z`).
pub fn format_rfc3339(ms: i64) -> String {
    format_time(ms).replacen(' ', "T", 1) + "Z"
}

/// Days since 1970-01-01 to a proleptic Gregorian (year, month, day): Howard Hinnant's
/// `civil_from_days` algorithm.
fn civil_from_days(z: i64) -> (i64, u32, u32) {
    let z = z + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = (doy - (153 * mp + 2) / 5 + 1) as u32;
    let m = if mp < 10 { mp + 3 } else { mp - 9 } as u32;
    (yoe + era * 400 + i64::from(m <= 2), m, d)
}

/// An exclusive hold on a catalog for one run (`flock` on a `.lock` file beside it): a
/// second run on the same catalog waits for it or is told the catalog is busy. The lock
/// goes away with the process, however it ends.
pub struct RunLock {
    /// The locked file; `None` on read-only media with no lock file, where no run can
    /// write the catalog and there is nothing to keep apart.
    _file: Option<File>,
}

impl RunLock {
    /// Takes the lock at `path`, waiting for it when `wait`; `Ok(None)` when another run
    /// holds it and `wait` is false.
    ///
    /// Where the lock file cannot be opened for writing (read-only media, a directory this
    /// user may not write), an existing one is locked through a read-only descriptor
    /// (flock needs no write access); with none, the run goes on unlocked: it cannot write
    /// the catalog either, and SQLite keeps its reads consistent.
    pub fn acquire(path: &Path, wait: bool) -> io::Result<Option<RunLock>> {
        use std::os::fd::AsRawFd;
        let file =
            match std::fs::OpenOptions::new().create(true).truncate(false).write(true).open(path) {
                Ok(f) => f,
                Err(e) if matches!(e.raw_os_error(), Some(libc::EROFS | libc::EACCES)) => {
                    match File::open(path) {
                        Ok(f) => f,
                        Err(_) => return Ok(Some(RunLock { _file: None })),
                    }
                }
                Err(e) => return Err(e),
            };
        let op = if wait { libc::LOCK_EX } else { libc::LOCK_EX | libc::LOCK_NB };
        loop {
            #[allow(unsafe_code)]
            // SAFETY: flock on a descriptor this function owns.
            let r = unsafe { libc::flock(file.as_raw_fd(), op) };
            if r == 0 {
                return Ok(Some(RunLock { _file: Some(file) }));
            }
            let e = io::Error::last_os_error();
            match e.raw_os_error() {
                Some(libc::EINTR) => continue,
                Some(libc::EWOULDBLOCK) => return Ok(None),
                _ => return Err(e),
            }
        }
    }
}

/// Parses a byte count with an optional binary suffix: `500G`, `1.5T`, `64M`, `4096`
/// (K, M, G, T, P are powers of 1024; a trailing `B`/`iB` is accepted).
pub fn parse_size(text: &str) -> Option<u64> {
    let lower = text.trim().to_ascii_lowercase();
    let t = lower.as_str();
    let t = t.strip_suffix("ib").or_else(|| t.strip_suffix('b')).unwrap_or(t);
    let (num, mult) = match t.chars().last()? {
        c if c.is_ascii_digit() || c == '.' => (t, 1u64),
        c => {
            let p = match c.to_ascii_uppercase() {
                'K' => 1,
                'M' => 2,
                'G' => 3,
                'T' => 4,
                'P' => 5,
                _ => return None,
            };
            (&t[..t.len() - 1], 1024u64.pow(p))
        }
    };
    let n: f64 = num.parse().ok()?;
    if !n.is_finite() || n < 0.0 {
        return None;
    }
    Some((n * mult as f64) as u64)
}

/// Parses a duration: `90s`, `30m`, `2h`, `1d`, combinations such as `1h30m`, or a bare
/// number of seconds.
pub fn parse_duration(text: &str) -> Option<std::time::Duration> {
    let t = text.trim();
    if t.is_empty() {
        return None;
    }
    // try_from: a duration too long to represent (or negative, or NaN) is refused.
    if let Ok(secs) = t.parse::<f64>() {
        return std::time::Duration::try_from_secs_f64(secs).ok();
    }
    let mut total = 0f64;
    let mut num = String::new();
    for c in t.chars() {
        if c.is_ascii_digit() || c == '.' {
            num.push(c);
            continue;
        }
        let unit = match c {
            's' => 1.0,
            'm' => 60.0,
            'h' => 3600.0,
            'd' => 86_400.0,
            'w' => 604_800.0,
            _ => return None,
        };
        let n: f64 = num.parse().ok()?;
        total += n * unit;
        num.clear();
    }
    if !num.is_empty() {
        return None;
    }
    std::time::Duration::try_from_secs_f64(total).ok()
}

/// Formats a byte count for people: `1.5 GiB`.
pub fn human_bytes(n: u64) -> String {
    const UNITS: [&str; 6] = ["B", "KiB", "MiB", "GiB", "TiB", "PiB"];
    let mut v = n as f64;
    let mut u = 0;
    while v >= 1024.0 && u < UNITS.len() - 1 {
        v /= 1024.0;
        u += 1;
    }
    if u == 0 { format!("{n} B") } else { format!("{v:.1} {}", UNITS[u]) }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    #[test]
    fn sizes_take_binary_suffixes() {
        assert_eq!(parse_size("4096"), Some(4096));
        assert_eq!(parse_size("1K"), Some(1024));
        assert_eq!(parse_size("500G"), Some(500 << 30));
        assert_eq!(parse_size("1.5T"), Some(3 << 39));
        assert_eq!(parse_size("64MiB"), Some(64 << 20));
        assert_eq!(parse_size("2kb"), Some(2048));
        assert_eq!(parse_size("x"), None);
        assert_eq!(parse_size(""), None);
        assert_eq!(parse_size("-1"), None);
    }

    #[test]
    fn durations_combine_units() {
        assert_eq!(parse_duration("90"), Some(Duration::from_secs(90)));
        assert_eq!(parse_duration("90s"), Some(Duration::from_secs(90)));
        assert_eq!(parse_duration("2h"), Some(Duration::from_secs(7200)));
        assert_eq!(parse_duration("1h30m"), Some(Duration::from_secs(5400)));
        assert_eq!(parse_duration("1d"), Some(Duration::from_secs(86_400)));
        assert_eq!(parse_duration("0.5s"), Some(Duration::from_millis(500)));
        assert_eq!(parse_duration("2x"), None);
        assert_eq!(parse_duration("h"), None);
        assert_eq!(parse_duration("5m3"), None);
        // Found by fuzzing: too long to represent is refused, not a panic.
        assert_eq!(parse_duration("1e300"), None);
        assert_eq!(parse_duration("99999999999999999999999d"), None);
        assert_eq!(parse_duration("-5"), None);
        assert_eq!(parse_duration("NaN"), None);
    }

    #[test]
    fn times_format_as_utc() {
        assert_eq!(format_time(0), "1970-01-01 00:00:00");
        // 2000-02-29 (a leap day) 12:34:56 UTC.
        assert_eq!(format_time(951_827_696_000), "2000-02-29 12:34:56");
        assert_eq!(format_rfc3339(1_795_000_000_000), "2026-11-18T11:06:40Z");
    }

    #[test]
    fn class_names_round_trip() {
        for c in Class::ALL {
            assert_eq!(Class::from_name(c.name()), Some(c));
        }
        assert!(Class::Corrupt.is_failure() && Class::Unreadable.is_failure());
        assert!(Class::Missing.is_failure() && !Class::Modified.is_failure());
    }

    #[test]
    fn second_lock_is_refused_while_the_first_is_held() {
        let d = tempfile::tempdir().unwrap();
        let p = d.path().join("c.lock");
        let first = RunLock::acquire(&p, false).unwrap();
        assert!(first.is_some());
        // flock locks belong to the open file description: a second open conflicts.
        assert!(RunLock::acquire(&p, false).unwrap().is_none());
        drop(first);
        assert!(RunLock::acquire(&p, false).unwrap().is_some());
    }

    #[test]
    fn human_bytes_uses_binary_units() {
        assert_eq!(human_bytes(12), "12 B");
        assert_eq!(human_bytes(1536), "1.5 KiB");
        assert_eq!(human_bytes(3 << 30), "3.0 GiB");
    }
}
