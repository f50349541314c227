//! What a recovery set protects, in the catalog's terms: `STEM.fixity` beside the set's
//! PAR2 files, written atomically after them. It names the set's recovery set ID and, for
//! each file, the size, mtime and catalog digest the set was made from. A set is up to
//! date while the catalog's records of its files are these; `repair` uses it to find the
//! set of a file and accepts a rebuilt file only when it has this digest (which is the
//! catalog's, checked again against the record).
//!
//! ```text
//! fixity-par2-set 1
//! set 0123...ef
//! algorithm blake3
//! redundancy 0.1
//! recovery 103
//! 4096 1700000000123456789 ab12...ff dir/name%20with%20spaces
//! ```
//! Paths are raw bytes with `%`, controls, space and bytes above 0x7e as `%XX`.

use crate::catalog::Record;
use crate::digest::hex_encode;
use crate::output::AtomicFile;
use std::io::{self, Write};
use std::path::Path;

const MAGIC: &str = "fixity-par2-set 1";

/// One protected file.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Entry {
    pub(crate) path: Vec<u8>,
    pub(crate) size: u64,
    pub(crate) mtime_ns: i128,
    /// The catalog's digest, hex.
    pub(crate) digest: String,
}

impl Entry {
    pub(crate) fn of(rec: &Record) -> Entry {
        Entry {
            path: rec.path.clone(),
            size: rec.size.unwrap_or(0),
            mtime_ns: rec.mtime_ns,
            digest: hex_encode(rec.digest.as_bytes(), false),
        }
    }
}

/// A set's sidecar.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct Sidecar {
    /// The recovery set ID, hex (none for a set of empty files only).
    pub(crate) set: String,
    pub(crate) algorithm: String,
    /// The redundancy asked (a fraction), kept so `scan` re-makes the set alike.
    pub(crate) redundancy: f64,
    /// Recovery slices written.
    pub(crate) recovery: u32,
    pub(crate) entries: Vec<Entry>,
}

fn escape(path: &[u8]) -> String {
    let mut s = String::with_capacity(path.len());
    for &b in path {
        if b <= b' ' || b > b'~' || b == b'%' {
            s.push_str(&format!("%{b:02X}"));
        } else {
            s.push(b as char);
        }
    }
    s
}

fn unescape(s: &str) -> Option<Vec<u8>> {
    let b = s.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        if b[i] == b'%' {
            let hex = std::str::from_utf8(b.get(i + 1..i + 3)?).ok()?;
            out.push(u8::from_str_radix(hex, 16).ok()?);
            i += 3;
        } else {
            out.push(b[i]);
            i += 1;
        }
    }
    Some(out)
}

impl Sidecar {
    pub(crate) fn write(&self, path: &Path) -> io::Result<()> {
        let mut text = format!(
            "{MAGIC}\nset {}\nalgorithm {}\nredundancy {}\nrecovery {}\n",
            self.set, self.algorithm, self.redundancy, self.recovery
        );
        for e in &self.entries {
            text.push_str(&format!("{} {} {} {}\n", e.size, e.mtime_ns, e.digest, escape(&e.path)));
        }
        let mut f = AtomicFile::create(path)?;
        f.write_all(text.as_bytes())?;
        f.commit()
    }

    /// Reads a sidecar; `None` when it is not one (damaged, or another program's file).
    pub(crate) fn read(path: &Path) -> io::Result<Option<Sidecar>> {
        let text = std::fs::read_to_string(path)?;
        Ok(Sidecar::parse(&text))
    }

    pub(crate) fn parse(text: &str) -> Option<Sidecar> {
        let mut lines = text.lines();
        if lines.next()? != MAGIC {
            return None;
        }
        let set = lines.next()?.strip_prefix("set ")?.to_string();
        let algorithm = lines.next()?.strip_prefix("algorithm ")?.to_string();
        let redundancy = lines.next()?.strip_prefix("redundancy ")?.parse().ok()?;
        let recovery = lines.next()?.strip_prefix("recovery ")?.parse().ok()?;
        let mut entries = Vec::new();
        for l in lines {
            let mut f = l.splitn(4, ' ');
            entries.push(Entry {
                size: f.next()?.parse().ok()?,
                mtime_ns: f.next()?.parse().ok()?,
                digest: f.next()?.to_string(),
                path: unescape(f.next()?)?,
            });
        }
        Some(Sidecar { set, algorithm, redundancy, recovery, entries })
    }
}

/// Every sidecar in `dir` by its set's stem, sorted; `None` for one that cannot be read
/// (damaged, or another program's file). An unreadable directory has none.
pub(crate) fn all(dir: &Path) -> Vec<(String, Option<Sidecar>)> {
    use std::os::unix::ffi::OsStrExt;
    let Ok(entries) = std::fs::read_dir(dir) else { return Vec::new() };
    let mut out: Vec<(String, Option<Sidecar>)> = entries
        .filter_map(Result::ok)
        .filter_map(|e| {
            let name = e.file_name();
            let stem = name.as_bytes().strip_suffix(b".fixity")?;
            let side = Sidecar::read(&e.path()).ok().flatten();
            Some((String::from_utf8_lossy(stem).into_owned(), side))
        })
        .collect();
    out.sort_by(|a, b| a.0.cmp(&b.0));
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sidecars_round_trip_any_name() {
        let s = Sidecar {
            set: "00ff".into(),
            algorithm: "blake3".into(),
            redundancy: 0.125,
            recovery: 7,
            entries: vec![
                Entry { path: b"a b/%\n\xff".to_vec(), size: 3, mtime_ns: -5, digest: "ab".into() },
                Entry { path: b"plain".to_vec(), size: 0, mtime_ns: 1, digest: "cd".into() },
            ],
        };
        let t = tempfile::tempdir().unwrap();
        let p = t.path().join("x.fixity");
        s.write(&p).unwrap();
        assert_eq!(Sidecar::read(&p).unwrap(), Some(s));
        assert_eq!(Sidecar::parse("something else\n"), None);
        assert_eq!(
            Sidecar::parse(
                "fixity-par2-set 1\nset a\nalgorithm b\nredundancy 0.1\nrecovery 1\n1 2 x %G0\n"
            ),
            None
        );
    }
}
