//! What a recovery set protects, in the catalog's terms: `STEM.fixity` beside the set's
//! PAR2 files, written atomically after them. It names the set's recovery set ID and, for
//! each file, the size, mtime and catalog digest the set was made from. A set is up to
//! date while the catalog's records of its files are these; `repair` uses it to find the
//! set of a file and accepts a rebuilt file only when it has this digest (which is the
//! catalog's, checked again against the record). It also says which files were sparse
//! when the set was made, so that a missing one is rebuilt sparse (its holes not written:
//! a deleted VM image comes back at the size of its data, not of its length).
//!
//! And who could read each file (its mode, owner and group when the set was made), so a
//! missing file a catalog record does not say this of (a record from before fixity kept
//! it) comes back no wider than it was.
//!
//! ```text
//! fixity-par2-set 3
//! set 0123...ef
//! algorithm blake3
//! redundancy 0.1
//! recovery 103
//! 4096 1700000000123456789 ab12...ff - 0640:1000:100 dir/name%20with%20spaces
//! 8589934592 1700000000123456789 cd34...00 sparse 0600:0:0 vm/disk.img
//! ```
//! Paths are raw bytes with `%`, controls, space and bytes above 0x7e as `%XX`. Versions 1
//! (before the sparse column: its files count as not sparse) and 2 (before the access
//! column, `-` there: not known) are read as well.

use crate::catalog::Record;
use crate::device::Access;
use crate::digest::hex_encode;
use crate::output::AtomicFile;
use std::io::{self, Write};
use std::path::Path;

const MAGIC: &str = "fixity-par2-set 3";
/// The second version: no access column.
const MAGIC_2: &str = "fixity-par2-set 2";
/// The first version: no sparse column either.
const MAGIC_1: &str = "fixity-par2-set 1";

/// One protected file.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Entry {
    pub(crate) path: Vec<u8>,
    pub(crate) size: u64,
    pub(crate) mtime_ns: i128,
    /// The catalog's digest, hex.
    pub(crate) digest: String,
    /// The file was sparse when the set was made (`crate::read::is_sparse`): rebuilt
    /// with holes when it is missing. A hint about its blocks, not about its content: it
    /// takes no part in whether a set is up to date ([`Entry::same_content`]).
    pub(crate) sparse: bool,
    /// Its mode, owner and group when the set was made, if known (a hint for a rebuild
    /// where the file is gone, like `sparse`; no part of [`Entry::same_content`]).
    pub(crate) access: Option<Access>,
}

impl Entry {
    pub(crate) fn of(rec: &Record) -> Entry {
        Entry {
            path: rec.path.clone(),
            size: rec.size.unwrap_or(0),
            mtime_ns: rec.mtime_ns,
            digest: hex_encode(rec.digest.as_bytes(), false),
            sparse: false,
            access: None,
        }
    }

    /// Whether both describe the same file with the same content, whatever its blocks.
    pub(crate) fn same_content(&self, other: &Entry) -> bool {
        (&self.path, self.size, self.mtime_ns, &self.digest)
            == (&other.path, other.size, other.mtime_ns, &other.digest)
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
    /// Its entries say whether each file was sparse and who could read it (false for a
    /// version-1 or 2 sidecar read back: `protect` records them then, without making the
    /// set again).
    pub(crate) sparse_known: bool,
}

/// An entry's access column: [`Access::text`], or `-` when not known.
fn access_text(a: Option<Access>) -> String {
    a.map_or("-".into(), |a| a.text())
}

/// The inverse of [`access_text`]: `Some(None)` for `-`, `None` for what is neither.
fn parse_access(text: &str) -> Option<Option<Access>> {
    match text {
        "-" => Some(None),
        _ => Access::parse(text).map(Some),
    }
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
        let mut f = AtomicFile::create(path)?;
        f.write_all(self.text().as_bytes())?;
        f.commit()
    }

    /// The sidecar as written.
    pub(crate) fn text(&self) -> String {
        let mut text = format!(
            "{MAGIC}\nset {}\nalgorithm {}\nredundancy {}\nrecovery {}\n",
            self.set, self.algorithm, self.redundancy, self.recovery
        );
        for e in &self.entries {
            let flags = if e.sparse { "sparse" } else { "-" };
            let (access, path) = (access_text(e.access), escape(&e.path));
            text.push_str(&format!(
                "{} {} {} {flags} {access} {path}\n",
                e.size, e.mtime_ns, e.digest
            ));
        }
        text
    }

    /// Reads a sidecar; `None` when it is not one (damaged, or another program's file).
    pub(crate) fn read(path: &Path) -> io::Result<Option<Sidecar>> {
        let text = std::fs::read_to_string(path)?;
        Ok(Sidecar::parse(&text))
    }

    pub(crate) fn parse(text: &str) -> Option<Sidecar> {
        let mut lines = text.lines();
        let version = match lines.next()? {
            MAGIC => 3,
            MAGIC_2 => 2,
            MAGIC_1 => 1,
            _ => return None,
        };
        let set = lines.next()?.strip_prefix("set ")?.to_string();
        let algorithm = lines.next()?.strip_prefix("algorithm ")?.to_string();
        let redundancy = lines.next()?.strip_prefix("redundancy ")?.parse().ok()?;
        let recovery = lines.next()?.strip_prefix("recovery ")?.parse().ok()?;
        let mut entries = Vec::new();
        for l in lines {
            let mut f = l.splitn(3 + version, ' ');
            let size = f.next()?.parse().ok()?;
            let mtime_ns = f.next()?.parse().ok()?;
            let digest = f.next()?.to_string();
            let sparse = match (version >= 2).then(|| f.next()).flatten() {
                None | Some("-") => false,
                Some("sparse") => true,
                Some(_) => return None,
            };
            let access = match (version >= 3).then(|| f.next()).flatten() {
                None => None,
                Some(text) => parse_access(text)?,
            };
            let path = unescape(f.next()?)?;
            entries.push(Entry { path, size, mtime_ns, digest, sparse, access });
        }
        let sparse_known = version == 3;
        Some(Sidecar { set, algorithm, redundancy, recovery, entries, sparse_known })
    }
}

/// Every sidecar in `dir` by its set's stem, sorted; `None` for one that cannot be read
/// (damaged, or another program's file). An unreadable directory has none. Read over the
/// cores.
pub(crate) fn all(dir: &Path) -> Vec<(String, Option<Sidecar>)> {
    use rayon::prelude::*;
    let found = found(dir);
    found.into_par_iter().map(|(stem, path)| (stem, Sidecar::read(&path).ok().flatten())).collect()
}

/// The stems of the sidecars in `dir`, sorted, none read.
pub(crate) fn stems(dir: &Path) -> Vec<String> {
    found(dir).into_iter().map(|(stem, _)| stem).collect()
}

/// The sidecars in `dir`: stem and path, sorted by stem.
fn found(dir: &Path) -> Vec<(String, std::path::PathBuf)> {
    use crate::sys::OsStrExt;
    let Ok(entries) = std::fs::read_dir(dir) else { return Vec::new() };
    let mut out: Vec<(String, std::path::PathBuf)> = entries
        .filter_map(Result::ok)
        .filter_map(|e| {
            let name = e.file_name();
            let stem = name.as_bytes().strip_suffix(b".fixity")?;
            Some((String::from_utf8_lossy(stem).into_owned(), e.path()))
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
                Entry {
                    path: b"a b/%\n\xff".to_vec(),
                    size: 3,
                    mtime_ns: -5,
                    digest: "ab".into(),
                    sparse: true,
                    access: Some(Access {
                        mode: 0o4750,
                        uid: 0,
                        gid: 4_000_000_000,
                        acl: true,
                        xattrs: false,
                    }),
                },
                Entry {
                    path: b"plain".to_vec(),
                    size: 0,
                    mtime_ns: 1,
                    digest: "cd".into(),
                    sparse: false,
                    access: None,
                },
            ],
            sparse_known: true,
        };
        let t = tempfile::tempdir().unwrap();
        let p = t.path().join("x.fixity");
        s.write(&p).unwrap();
        assert_eq!(Sidecar::read(&p).unwrap(), Some(s));
        let text = std::fs::read_to_string(&p).unwrap();
        assert!(text.starts_with("fixity-par2-set 3\n"), "{text}");
        assert!(
            text.ends_with(
                "3 -5 ab sparse 4750:0:4000000000+acl a%20b/%25%0A%FF\n0 1 cd - - plain\n"
            ),
            "{text}"
        );
        // Version 2 (no access column) reads as not known.
        let two =
            "fixity-par2-set 2\nset a\nalgorithm b\nredundancy 0.1\nrecovery 1\n1 2 x - p q\n";
        let two = Sidecar::parse(two).unwrap();
        assert_eq!((two.entries[0].access, &two.entries[0].path[..]), (None, &b"p q"[..]));
        assert!(!two.sparse_known, "written again with the access column");
        let head3 = "fixity-par2-set 3\nset a\nalgorithm b\nredundancy 0.1\nrecovery 1\n";
        for bad in ["0644", "0644:1", "10000:0:0", "644:0:0:0", "rw:0:0"] {
            assert_eq!(Sidecar::parse(&format!("{head3}1 2 x - {bad} p\n")), None, "{bad}");
        }
        assert_eq!(Sidecar::parse("something else\n"), None);
        // A flag this version does not know: not a sidecar it can trust.
        let head = "fixity-par2-set 2\nset a\nalgorithm b\nredundancy 0.1\nrecovery 1\n";
        assert_eq!(Sidecar::parse(&format!("{head}1 2 x holey p\n")), None);
        assert_eq!(
            Sidecar::parse(
                "fixity-par2-set 1\nset a\nalgorithm b\nredundancy 0.1\nrecovery 1\n1 2 x %G0\n"
            ),
            None
        );
    }

    #[test]
    fn what_parses_writes_back_to_a_text_that_parses_the_same() {
        let head = "fixity-par2-set 2\nset a b\nalgorithm x\nredundancy NaN\nrecovery 0\n";
        let head3 = "fixity-par2-set 3\nset a b\nalgorithm x\nredundancy 1\nrecovery 0\n";
        for text in [
            head.to_string(),
            format!("{head}1 -2  sparse %41 raw space\r\n"),
            format!("{head}0 0 d - %00%25\n18446744073709551615 0 d sparse \u{e9}\n"),
            "fixity-par2-set 1\nset \nalgorithm \nredundancy -0\nrecovery 4\n1 2 d p q\n".into(),
            format!("{head3}1 2 d sparse 0600:1:2 a b\n3 4 e - - %20\n"),
        ] {
            let first = Sidecar::parse(&text).unwrap_or_else(|| panic!("{text:?}"));
            let again = Sidecar::parse(&first.text()).expect("written sidecars parse");
            assert_eq!(again.text(), first.text());
            assert_eq!(again.entries, first.entries);
        }
        assert_eq!(crate::repair::fuzz_sidecar("fixity-par2-set 2\n"), None);
    }

    #[test]
    fn a_first_version_sidecar_reads_as_not_sparse() {
        let text = "fixity-par2-set 1\nset 00ff\nalgorithm blake3\nredundancy 0.1\n\
                    recovery 2\n5 6 ab dir/a%20b\n";
        let s = Sidecar::parse(text).unwrap();
        let e = Entry {
            path: b"dir/a b".to_vec(),
            size: 5,
            mtime_ns: 6,
            digest: "ab".into(),
            sparse: false,
            access: None,
        };
        assert_eq!(s.entries, vec![e.clone()]);
        assert!(!s.sparse_known);
        assert!(Sidecar::parse(&s.text()).unwrap().sparse_known, "written as version 3");
        // Whether a file is sparse has no part in what a set protects.
        let holey = Entry { sparse: true, ..e.clone() };
        assert!(e.same_content(&holey));
        assert!(!e.same_content(&Entry { mtime_ns: 7, ..holey }));
    }
}
