//! Check semantics shared by every front end: which algorithm a manifest line is checked
//! with, and the counters coreutils keeps per checksum file (and the exit status they give).

use crate::algo::{self, Algorithm};
use crate::formats::Record;

/// Where the algorithm for untagged lines comes from, strongest first.
#[derive(Clone, Copy, Debug, Default)]
pub struct AlgoHints {
    /// `-a`, from the user.
    pub forced: Option<&'static Algorithm>,
    /// The manifest's file name (`.sha256`, `SHA256SUMS`).
    pub from_name: Option<&'static Algorithm>,
}

/// The algorithm for one line, or why there is none.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Resolved {
    /// Check with this algorithm.
    Algo(&'static Algorithm),
    /// The line does not fit (wrong length for the named algorithm, a tag other than
    /// `-a`, no algorithm with that length): an improperly formatted line.
    Malformed,
    /// Several algorithms have this digest length and nothing decides between them.
    Ambiguous(Vec<&'static Algorithm>),
}

/// Decides the algorithm for `record`.
pub fn resolve(record: &Record, hints: &AlgoHints) -> Resolved {
    let len = record.digest.as_bytes().len();
    if let Some(a) = record.algo {
        if hints.forced.is_some_and(|f| f != a) || a.len != len {
            return Resolved::Malformed;
        }
        return Resolved::Algo(a);
    }
    if let Some(a) = hints.forced.or(hints.from_name) {
        return if a.len == len { Resolved::Algo(a) } else { Resolved::Malformed };
    }
    let fits: Vec<_> = algo::by_len(len).collect();
    match fits.len() {
        0 => Resolved::Malformed,
        1 => Resolved::Algo(fits[0]),
        _ => Resolved::Ambiguous(fits),
    }
}

/// Whether a manifest's path reaches outside the directory it is checked from: an
/// absolute path, or one with a `..` component. coreutils checks such lines (scripts rely
/// on `sha256sum /etc/* > list`); fixity says so, and refuses them under `--confine`.
pub fn reaches_outside(name: &[u8]) -> bool {
    name.first() == Some(&b'/') || name.split(|&b| b == b'/').any(|c| c == b"..")
}

/// Per-checksum-file counters, as coreutils keeps them.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Counts {
    /// Lines in no known format.
    pub malformed: u64,
    /// Well-formed lines.
    pub properly_formatted: u64,
    /// Files whose digest matched.
    pub ok: u64,
    /// Files whose digest did not match.
    pub mismatched: u64,
    /// Files that could not be opened or read (or changed while read).
    pub unreadable: u64,
    /// Files skipped by `--ignore-missing`.
    pub ignored_missing: u64,
    /// Lines whose algorithm could not be decided.
    pub ambiguous: u64,
    /// Lines refused by `--confine` (their path leaves the manifest's directory).
    pub refused: u64,
}

impl Counts {
    /// Files actually compared (matched or not).
    pub fn verified(&self) -> u64 {
        self.ok + self.mismatched
    }
}

/// coreutils' plural rule for the summary warnings.
pub fn plural(n: u64, one: &'static str, many: &'static str) -> &'static str {
    if n == 1 { one } else { many }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::digest::Digest;
    use crate::formats::Format;

    fn record(hex_len: usize, algo: Option<&'static Algorithm>) -> Record {
        Record {
            algo,
            digest: Digest::new(&vec![0u8; hex_len / 2]),
            name: b"f".to_vec(),
            format: Format::Gnu,
        }
    }

    #[test]
    fn outside_paths_are_absolute_or_climb() {
        for p in [&b"/etc/passwd"[..], b"../x", b"a/../../b", b"a/..", b".."] {
            assert!(reaches_outside(p), "{}", String::from_utf8_lossy(p));
        }
        for p in [&b"a/b"[..], b"..a", b"a..", b"./a", b"a/.../b", b"a/..b"] {
            assert!(!reaches_outside(p), "{}", String::from_utf8_lossy(p));
        }
    }

    #[test]
    fn resolution_order() {
        let md5 = algo::lookup("md5").unwrap();
        let sha1 = algo::lookup("sha1").unwrap();
        let none = AlgoHints::default();
        let tiger = algo::lookup("tiger").unwrap();
        let tth = algo::lookup("tth").unwrap();
        // 48 hex digits: Tiger or TTH (both 24 bytes); 40: SHA-1, RIPEMD-160, BTIH or
        // AICH; 32: MD4, MD5, MurmurHash3, XXH128, eD2k or imohash. Never guessed.
        assert_eq!(resolve(&record(48, None), &none), Resolved::Ambiguous(vec![tiger, tth]));
        let names = |hex_len| match resolve(&record(hex_len, None), &none) {
            Resolved::Ambiguous(v) => v.iter().map(|a| a.name).collect::<Vec<_>>(),
            other => panic!("{hex_len} hex digits: {other:?}"),
        };
        assert_eq!(names(40), ["sha1", "ripemd160", "btih", "aich"]);
        assert_eq!(names(32), ["md4", "md5", "murmur3", "xxh128", "ed2k", "imohash"]);
        // A tag decides where the length does not.
        assert_eq!(resolve(&record(48, Some(tth)), &none), Resolved::Algo(tth));
        assert_eq!(resolve(&record(30, None), &none), Resolved::Malformed);
        let named = AlgoHints { forced: None, from_name: Some(md5) };
        assert_eq!(resolve(&record(32, None), &named), Resolved::Algo(md5));
        assert_eq!(resolve(&record(40, None), &named), Resolved::Malformed);
        let forced = AlgoHints { forced: Some(md5), from_name: Some(sha1) };
        assert_eq!(resolve(&record(32, None), &forced), Resolved::Algo(md5));
        assert_eq!(resolve(&record(40, Some(sha1)), &forced), Resolved::Malformed);
        assert_eq!(resolve(&record(40, Some(sha1)), &named), Resolved::Algo(sha1));
    }
}
