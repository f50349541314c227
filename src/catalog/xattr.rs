//! Digests kept with each file, in extended attributes. fixity's own attributes:
//!
//! | attribute              | value                                                   |
//! |------------------------|---------------------------------------------------------|
//! | `user.fixity.ALGO`     | the digest in lowercase hex, e.g. `user.fixity.blake3`  |
//! | `user.fixity.ts`       | the mtime the digest was taken at, `SSSSSSSSSS.NNNNNNNNN` |
//! | `user.fixity.size`     | the size it was taken at, decimal                       |
//! | `user.fixity.verified` | when the content last matched, ms since the epoch       |
//! | `user.fixity.corrupt`  | set while the content differs from the record: the digest found |
//! | `user.fixity.ctime`    | the file's ctime after fixity's last write of its attributes, `SSSSSSSSSS.NNNNNNNNN` |
//!
//! Setting an attribute moves the file's ctime, so the ctime recorded is the one taken
//! after fixity's other attributes are written, and writing it moves the ctime once more,
//! a few microseconds later: this store's ctimes are compared with a slack of
//! [`CTIME_SLACK_NS`] (an edit that keeps its mtime within that second of fixity's own
//! write is taken for rot, as before ctimes were kept). A record without the attribute
//! (written before, or by cshatag) is classed by size and mtime alone until rewritten.
//!
//! It also reads what cshatag (and the Python shatag) write: `user.shatag.sha256` (hex)
//! and `user.shatag.ts` (the same timestamp layout; shatag's float may carry fewer
//! fraction digits, compared at the precision it has), and keeps them up to date when it
//! re-hashes such a file, so both tools keep agreeing. Setting attributes changes a file's
//! ctime, never its mtime. And, for a file with neither, TeraCopy's and MD5Stream's `MD5`
//! stream (`MD5=HEX` and `FileWriteTimeUtc=...`, see [`crate::import::streams`]): an
//! alternate data stream of the file on Windows, `user.MD5` under ntfs-3g,
//! `user.DosStream.MD5:$DATA` on a Samba server; it is read, not kept up to date.
//!
//! The tree's root directory holds `user.fixity.cursor`: where the last time-boxed slice
//! stopped, so the next one continues from there.
//!
//! No tamper evidence: the store keeps no history of its runs, so it has no chain of
//! proofs (`crate::proof`); `status --proof` and `audit-proof` refuse it. Someone who can
//! set a file's attributes can change its content and digest together unseen: trees that
//! need evidence use a catalog (SQLite or PostgreSQL).

use super::Class;
use super::store::{
    Found, OpenOptions, Pages, Pass, PassOrder, Record, Records, ReportFn, Store, StoreError,
    Summary,
};
use crate::algo::{self, Algorithm};
// cshatag's timestamp layout (the import reads it too).
use crate::clock::now_ms;
pub use crate::clock::{format_ts, parse_ts};
use crate::device::Stamp;
use crate::digest::Digest;
use crate::pathtext::{path_bytes, quote_env};
use crate::read::io_message;
use crate::sys::{OsStrExt, attrs};
use std::io;
use std::path::{Path, PathBuf};

/// Prefix of fixity's attributes.
pub(crate) const PREFIX: &str = crate::device::XATTR_PREFIX;
const TS: &str = "user.fixity.ts";
const SIZE: &str = "user.fixity.size";
const VERIFIED: &str = "user.fixity.verified";
/// Marks a standing CORRUPT finding: every run reads such a file again, slice or not.
const CORRUPT: &str = "user.fixity.corrupt";
/// The file's ctime after fixity's last write of its attributes.
const CTIME: &str = "user.fixity.ctime";
/// How far a file's ctime may be past its recorded one and still count as the same: the
/// write of [`CTIME`] itself moves it (by microseconds; a second allows for a busy machine).
pub(crate) const CTIME_SLACK_NS: i128 = 1_000_000_000;
/// The slice cursor on the root directory.
pub(crate) const CURSOR: &str = "user.fixity.cursor";
pub const SHATAG_TS: &str = "user.shatag.ts";
/// Prefix of the attributes checksum scripts write (`setfattr -n user.checksum.md5`).
pub const CHECKSUM_PREFIX: &str = "user.checksum.";

/// Other tools' attributes the store keeps up to date beside its own (`--xattr-names`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct XattrNames {
    /// `user.checksum.ALGO`, the digest in hex, as checksum scripts read it.
    pub checksum: bool,
    /// cshatag's `user.shatag.sha256` and `user.shatag.ts`, also on files without them
    /// (a SHA-256 record only; without this they are kept where a file carries them).
    pub shatag: bool,
}

/// Where a file's recorded digest came from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Source {
    /// `user.fixity.*`.
    Fixity,
    /// `user.shatag.*` (cshatag, shatag).
    Shatag,
    /// TeraCopy's or MD5Stream's `MD5` stream (an alternate data stream on Windows).
    Stream,
}

/// A file's recorded digest and the version of the file it describes.
#[derive(Clone, Debug)]
pub(crate) struct Attrs {
    /// The algorithm of `digest`.
    pub algo: &'static Algorithm,
    /// The recorded digest.
    pub digest: Digest,
    /// The mtime it was taken at, in ns, and how many fraction digits the record has
    /// (9 for fixity and cshatag).
    pub mtime_ns: i128,
    /// Fraction digits in the recorded time.
    pub precision: u32,
    /// The size it was taken at, when recorded (shatag does not record it).
    pub size: Option<u64>,
    /// When the content last matched, ms.
    pub verified: Option<i64>,
    /// Which attributes these came from.
    pub source: Source,
    /// Whether a run found the content differing from the record (and nothing has
    /// resolved it since).
    pub corrupt: bool,
    /// The ctime after fixity's last write of the attributes, if recorded.
    pub ctime_ns: Option<i128>,
}

impl Attrs {
    /// The record these attributes hold for the file at `rel`.
    pub(crate) fn into_record(self, rel: &[u8]) -> Record {
        Record {
            path: rel.to_vec(),
            algo: self.algo,
            digest: self.digest,
            size: self.size,
            mtime_ns: self.mtime_ns,
            precision: self.precision,
            last_result: if self.corrupt { Class::Corrupt } else { Class::Ok },
            missing_since: None,
            last_verified: self.verified.unwrap_or(0),
            foreign: self.source != Source::Fixity,
            imported: false,
            ctime_ns: self.ctime_ns,
            // Gone with the file when it is: a repair has no file to give it back to.
            access: None,
        }
    }
}

// The `_deref` calls follow a final symlink: paths reach here only from a walk, which
// yields symlinks solely under -L, and then the target is the file meant.
fn get(path: &Path, name: &str) -> io::Result<Option<Vec<u8>>> {
    attrs::get(path, name, true)
}

fn set(path: &Path, name: &str, value: &[u8]) -> io::Result<()> {
    attrs::set(path, name, value, true)
}

fn parse_digest(algo: &'static Algorithm, v: &[u8]) -> Option<Digest> {
    let hex = v.strip_suffix(b"\0").unwrap_or(v);
    Digest::from_hex(hex).filter(|d| d.as_bytes().len() == algo.len)
}

/// Reads a file's recorded digest: fixity's attribute for `prefer` first, then any
/// other `user.fixity.ALGO` the file carries, then cshatag's, then TeraCopy's `MD5`
/// stream. `Ok(None)` when it has none.
pub(crate) fn read(path: &Path, prefer: &'static Algorithm) -> io::Result<Option<Attrs>> {
    let mut found: Option<(&'static Algorithm, Digest)> = None;
    if let Some(v) = get(path, &format!("{PREFIX}{}", prefer.name))? {
        found = parse_digest(prefer, &v).map(|d| (prefer, d));
    }
    let mut listed = None;
    if found.is_none() {
        let names = listed.insert(attrs::list(path, true)?);
        for name in names.iter() {
            let Some(name) = name.to_str() else { continue };
            let Some(algo_name) = name.strip_prefix(PREFIX) else { continue };
            let Some(a) = algo::lookup(algo_name).filter(|a| a.name == algo_name) else {
                continue;
            };
            if let Some(v) = get(path, name)?
                && let Some(d) = parse_digest(a, &v)
            {
                found = Some((a, d));
                break;
            }
        }
    }
    if let Some((algo, digest)) = found
        && let Some((mtime_ns, precision)) = get(path, TS)?.as_deref().and_then(parse_ts)
    {
        let size = get(path, SIZE)?.and_then(|v| std::str::from_utf8(&v).ok()?.trim().parse().ok());
        let verified =
            get(path, VERIFIED)?.and_then(|v| std::str::from_utf8(&v).ok()?.trim().parse().ok());
        return Ok(Some(Attrs {
            algo,
            digest,
            mtime_ns,
            precision,
            size,
            verified,
            source: Source::Fixity,
            corrupt: get(path, CORRUPT)?.is_some(),
            ctime_ns: get(path, CTIME)?.as_deref().and_then(parse_ts).map(|(ns, _)| ns),
        }));
    }
    // Other tools' records are read only for files without a record of fixity's own, by
    // the names the file has (listed above, but for a record without its time).
    let listed = match listed {
        Some(names) => names,
        None => attrs::list(path, true)?,
    };
    // cshatag's: the algorithms whose rows name a cshatag attribute (sha256).
    for (row, attribute) in algo::ALGORITHMS.iter().filter_map(|a| Some((a, a.shatag?))) {
        if !listed.iter().any(|n| n == attribute) {
            continue;
        }
        let Some(v) = get(path, attribute)? else { continue };
        let Some(digest) = parse_digest(row, &v) else { continue };
        let Some(taken) = get(path, SHATAG_TS)?.as_deref().and_then(parse_ts) else {
            continue;
        };
        return foreign(path, (row, digest), taken, Source::Shatag).map(Some);
    }
    // Then TeraCopy's and MD5Stream's `MD5` stream, with the write time it was taken at.
    if let Some((algo, digest, mtime_ns, precision)) = super::ads::teracopy(path, &listed)? {
        return foreign(path, (algo, digest), (mtime_ns, precision), Source::Stream).map(Some);
    }
    Ok(None)
}

/// Another tool's record of the file at `path`: its digest, taken at the mtime `taken`
/// (ns, fraction digits); no size, verification time nor ctime of fixity's.
fn foreign(
    path: &Path,
    (algo, digest): (&'static Algorithm, Digest),
    (mtime_ns, precision): (i128, u32),
    source: Source,
) -> io::Result<Attrs> {
    let corrupt = get(path, CORRUPT)?.is_some();
    let (size, verified, ctime_ns) = (None, None, None);
    Ok(Attrs { algo, digest, mtime_ns, precision, size, verified, source, corrupt, ctime_ns })
}

/// Records `digest` as the content of `path` at `stamp`, verified at `verified_ms`.
/// A SHA-256 record also rewrites cshatag's attributes when the file carries them (looked
/// up here, on the rare write, not on every read), so both tools keep agreeing.
pub(crate) fn write(
    path: &Path,
    algo: &'static Algorithm,
    digest: &Digest,
    stamp: Stamp,
    verified_ms: i64,
    names: XattrNames,
) -> io::Result<()> {
    let ts = format_ts(stamp.mtime_ns);
    set(path, &format!("{PREFIX}{}", algo.name), digest.to_hex().as_bytes())?;
    if names.checksum {
        set(path, &format!("{CHECKSUM_PREFIX}{}", algo.name), digest.to_hex().as_bytes())?;
    }
    set(path, TS, ts.as_bytes())?;
    set(path, SIZE, stamp.size.to_string().as_bytes())?;
    set(path, VERIFIED, verified_ms.to_string().as_bytes())?;
    if let Some(attribute) = algo.shatag
        && (names.shatag || get(path, attribute)?.is_some())
    {
        set(path, SHATAG_TS, ts.as_bytes())?;
        set(path, attribute, digest.to_hex().as_bytes())?;
    }
    // A new record resolves a corrupt finding.
    remove(path, CORRUPT)?;
    seal(path)
}

/// Records only a successful verification time (and, with `was_corrupt`, the end of a
/// corrupt finding: the content reads as recorded again).
pub(crate) fn mark_verified(path: &Path, verified_ms: i64, was_corrupt: bool) -> io::Result<()> {
    set(path, VERIFIED, verified_ms.to_string().as_bytes())?;
    if was_corrupt {
        remove(path, CORRUPT)?;
    }
    seal(path)
}

/// Marks a standing corrupt finding, with the digest the content has now.
pub(crate) fn mark_corrupt(path: &Path, found: &Digest) -> io::Result<()> {
    set(path, CORRUPT, found.to_hex().as_bytes())?;
    seal(path)
}

/// Records the file's ctime as fixity's writes of its attributes left it (see
/// [`CTIME_SLACK_NS`]): the last write of every change of its record.
fn seal(path: &Path) -> io::Result<()> {
    let md = std::fs::metadata(path)?;
    set(path, CTIME, format_ts(crate::device::ctime_ns(&md)).as_bytes())
}

fn remove(path: &Path, name: &str) -> io::Result<()> {
    attrs::remove(path, name, true)
}

/// Fails with a message naming the file system when `dir`'s file system does not keep
/// user extended attributes (alternate data streams on Windows): one set on `dir` must
/// be listed back (Wine, say, makes a file of a stream's name instead).
pub(crate) fn probe(dir: &Path) -> Result<(), String> {
    const PROBE: &str = "user.fixity.probe";
    let refuse = || {
        format!(
            "{}: the {} file system here does not keep {} ({}, or keep digests in the \
             catalog: drop --store xattr)",
            crate::pathtext::quote_env(crate::pathtext::path_bytes(dir)),
            crate::device::fs_type(dir).unwrap_or_else(|| "unknown".into()),
            attrs::WHAT,
            attrs::REMEDY,
        )
    };
    match attrs::set(dir, PROBE, b"1", false) {
        Ok(()) => {
            let kept = attrs::list(dir, false).is_ok_and(|names| names.iter().any(|n| n == PROBE));
            let _ = attrs::remove(dir, PROBE, false);
            if kept { Ok(()) } else { Err(refuse()) }
        }
        Err(e) if attrs::unsupported(&e) => Err(refuse()),
        // Other failures (a read-only root directory, say) show up per file later.
        Err(_) => Ok(()),
    }
}

/// The slice cursor stored on the root directory, if any.
pub(crate) fn read_cursor(root: &Path) -> io::Result<Option<Vec<u8>>> {
    get(root, CURSOR)
}

/// Stores (or with `None` clears) the slice cursor.
pub(crate) fn write_cursor(root: &Path, cursor: Option<&[u8]>) -> io::Result<()> {
    match cursor {
        Some(c) => set(root, CURSOR, c),
        None => attrs::remove(root, CURSOR, true),
    }
}

/// Why `fixity forget` has nothing to do with the xattr store.
pub(crate) const NOTHING_TO_FORGET: &str = "the xattr store keeps a file's record in the file itself, \
     so a missing file leaves nothing to forget";

/// The xattr store as a [`Store`]: each file's record in its own attributes, the slice
/// cursor on the root. It keeps no index: no record of a file once it is gone, no list
/// of a run's findings (they are handed over as they are found), no catalog to summarize.
pub(crate) struct XattrStore {
    root: PathBuf,
    prefer: &'static Algorithm,
    names: XattrNames,
}

impl XattrStore {
    /// The store of the tree at `root` (the empty path: paths are taken as given);
    /// `how.algorithm` (or the default) hashes files without a record, those with one are
    /// checked with theirs. `how.probe` first checks that the file system takes user
    /// extended attributes.
    pub(crate) fn open(root: &Path, how: &OpenOptions) -> Result<XattrStore, StoreError> {
        if how.probe {
            probe(root).map_err(StoreError::Refused)?;
        }
        Ok(XattrStore {
            root: root.to_path_buf(),
            prefer: how.algorithm.unwrap_or_else(algo::default_algorithm),
            names: how.xattr_names,
        })
    }

    fn full(&self, rel: &[u8]) -> PathBuf {
        self.root.join(std::ffi::OsStr::from_bytes(rel))
    }

    fn no_index(&self, what: &str) -> StoreError {
        StoreError::Refused(format!(
            "the xattr store keeps each record in its file, with no index: {what} needs a \
             catalog (drop --store xattr)"
        ))
    }
}

/// The walk's records: read from each file as the walk meets it.
struct AttrRecords {
    prefer: &'static Algorithm,
}

impl Records for AttrRecords {
    fn next_before(&mut self, _rel: Option<&[u8]>) -> Option<Record> {
        // A record goes with its file: none is ever left without one.
        None
    }

    fn file(&mut self, rel: &[u8], full: &Path) -> Result<Option<Record>, String> {
        read(full, self.prefer).map(|a| a.map(|a| a.into_record(rel))).map_err(|e| io_message(&e))
    }

    fn other(&mut self, _rel: &[u8]) -> Option<Record> {
        None
    }

    fn error(&mut self) -> Option<StoreError> {
        None
    }
}

impl Store for XattrStore {
    fn location(&self) -> &Path {
        &self.root
    }

    fn algorithm(&self) -> &'static Algorithm {
        self.prefer
    }

    fn ctime_slack_ns(&self) -> i128 {
        CTIME_SLACK_NS
    }

    fn remembers_gone(&self) -> bool {
        false
    }

    fn lists_findings(&self) -> bool {
        false
    }

    fn pass_order(&self) -> PassOrder {
        PassOrder::Walk
    }

    fn clock(&self) -> Result<i64, StoreError> {
        Ok(now_ms())
    }

    fn start_run(&mut self, _command: &'static str, _now: i64) -> Result<(), StoreError> {
        // Runs are not recorded: there is nowhere to keep them.
        Ok(())
    }

    fn finish_run(&mut self, _complete: bool, _summary: &str) -> Result<(), StoreError> {
        Ok(())
    }

    fn records(&self, _from: Option<&[u8]>) -> Result<Box<dyn Records>, StoreError> {
        Ok(Box::new(AttrRecords { prefer: self.prefer }))
    }

    fn lookup(&self, rel: &[u8]) -> Result<Option<Record>, StoreError> {
        let a = read(&self.full(rel), self.prefer).map_err(StoreError::Attributes)?;
        Ok(a.map(|a| a.into_record(rel)))
    }

    fn record_new(&mut self, rel: &[u8], found: &Found, now: i64) -> Result<(), StoreError> {
        write(&self.full(rel), self.prefer, &found.digest, found.stamp, now, self.names)
            .map_err(StoreError::Attributes)
    }

    fn record_content(
        &mut self,
        rec: &Record,
        found: &Found,
        _class: Class,
        now: i64,
    ) -> Result<(), StoreError> {
        write(&self.full(&rec.path), rec.algo, &found.digest, found.stamp, now, self.names)
            .map_err(StoreError::Attributes)
    }

    fn record_check(
        &mut self,
        rec: &Record,
        class: Class,
        found: Option<&Found>,
        _note: Option<&str>,
        now: i64,
    ) -> Result<(), StoreError> {
        let path = self.full(&rec.path);
        let r = match (class, found) {
            // Switching from cshatag: fixity's own record goes beside it.
            (Class::Ok, Some(f)) if rec.foreign => {
                write(&path, rec.algo, &f.digest, f.stamp, now, self.names)
            }
            // A tree scanned before `--xattr-names checksum` gets the attribute as each
            // file is verified.
            (Class::Ok, _) if self.names.checksum => {
                let name = format!("{CHECKSUM_PREFIX}{}", rec.algo.name);
                set(&path, &name, rec.digest.to_hex().as_bytes())
                    .and_then(|()| mark_verified(&path, now, rec.last_result == Class::Corrupt))
            }
            (Class::Ok, _) => mark_verified(&path, now, rec.last_result == Class::Corrupt),
            (Class::Corrupt, Some(f)) => {
                // Marked, so that every later run (a scan, any slice) reads it again; a
                // file whose mark cannot be set is still reported now.
                let _ = mark_corrupt(&path, &f.digest);
                Ok(())
            }
            // An unreadable file keeps its record as it is.
            _ => Ok(()),
        };
        r.map_err(StoreError::Attributes)
    }

    fn record_missing(&mut self, _rel: &[u8], _now: i64) -> Result<(), StoreError> {
        // The record went with the file.
        Ok(())
    }

    fn record_present(&mut self, _rel: &[u8]) -> Result<(), StoreError> {
        Ok(())
    }

    fn record_moved(&mut self, _from: &[u8], _to: &[u8], _now: i64) -> Result<(), StoreError> {
        // A moved file carries its record with it.
        Ok(())
    }

    fn missing_page(&self, _: Option<&[u8]>, _: usize) -> Result<Vec<Record>, StoreError> {
        // No file is recorded as missing: a record goes with its file.
        Ok(Vec::new())
    }

    fn new_since_a_loss(&self) -> Result<bool, StoreError> {
        Ok(false)
    }

    fn move_candidates(&self, _: u64, _: &Digest, _: i64) -> Result<Vec<Record>, StoreError> {
        Ok(Vec::new())
    }

    fn presence_page(
        &self,
        _: Option<&[u8]>,
        _: usize,
    ) -> Result<Vec<(Vec<u8>, bool)>, StoreError> {
        Err(self.no_index("listing every record"))
    }

    fn pass(&self, _sliced: bool, _now: i64) -> Result<Pass, StoreError> {
        // Any verify continues after the cursor a stopped slice left; a cursor that
        // cannot be read is no cursor.
        Ok(Pass { since: 0, after: read_cursor(&self.root).ok().flatten() })
    }

    fn pass_begun(&mut self, _since: i64) -> Result<(), StoreError> {
        // The cursor is kept when a slice stops.
        Ok(())
    }

    fn stale(&self, _since: i64, _from: Option<&[u8]>) -> Result<Box<dyn Pages>, StoreError> {
        Err(self.no_index("ordering files by verification time"))
    }

    fn stale_count(&self, _since: i64) -> Result<(u64, u64), StoreError> {
        Err(self.no_index("counting the files a pass has left"))
    }

    fn pass_end(&mut self, resume_after: Option<&[u8]>, _now: i64) -> Result<(), StoreError> {
        write_cursor(&self.root, resume_after).map_err(|e| {
            StoreError::Refused(format!(
                "cannot store the slice cursor on {}: {}",
                quote_env(path_bytes(&self.root)),
                io_message(&e)
            ))
        })
    }

    fn findings(&self, _: i64, _: bool, _each: &mut ReportFn<'_>) -> Result<(), StoreError> {
        // Nothing to list: every finding was handed over as it was found.
        Ok(())
    }

    fn summary(&self, _now: i64) -> Result<Summary, StoreError> {
        Err(self.no_index("a summary"))
    }

    fn records_page(&self, _: Option<&[u8]>, _: usize) -> Result<Vec<Record>, StoreError> {
        Err(self.no_index("listing every record"))
    }

    fn count_under(&self, _rel: &[u8]) -> Result<(u64, u64), StoreError> {
        Err(StoreError::Refused(NOTHING_TO_FORGET.into()))
    }

    fn forget_missing(&mut self, _rel: &[u8]) -> Result<usize, StoreError> {
        Err(StoreError::Refused(NOTHING_TO_FORGET.into()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn timestamps_round_trip_in_cshatag_layout() {
        let ns = 1_560_177_334_020_775_051i128;
        assert_eq!(format_ts(ns), "1560177334.020775051");
        assert_eq!(parse_ts(b"1560177334.020775051"), Some((ns, 9)));
        assert_eq!(format_ts(5_000_000_007), "0000000005.000000007");
        assert_eq!(parse_ts(b"0000000005.000000007"), Some((5_000_000_007, 9)));
        // Python shatag writes a float: fewer digits.
        assert_eq!(parse_ts(b"1560177334.020775"), Some((1_560_177_334_020_775_000, 6)));
        assert_eq!(parse_ts(b"1560177334"), Some((1_560_177_334_000_000_000, 0)));
        assert_eq!(parse_ts(b"12.3456789012"), Some((12_345_678_901, 9)));
        assert_eq!(parse_ts(b"x.1"), None);
        assert_eq!(parse_ts(b"1.x"), None);
        assert_eq!(parse_ts(b""), None);
        assert_eq!(parse_ts(b"99999999999999999999999999999999999.5"), None);
    }

    #[test]
    fn a_coarse_timestamp_matches_at_its_own_precision() {
        let a = Attrs {
            algo: algo::lookup("sha256").unwrap(),
            digest: Digest::new(&[0; 32]),
            mtime_ns: 1_560_177_334_020_775_000,
            precision: 6,
            size: None,
            verified: None,
            source: Source::Shatag,
            corrupt: false,
            ctime_ns: None,
        };
        let stamp = |ns| Stamp::sized(9, ns);
        let sized = Attrs { size: Some(8), precision: 9, ..a.clone() }.into_record(b"f");
        let a = a.into_record(b"f");
        assert!(a.describes(&stamp(1_560_177_334_020_775_051), 0));
        assert!(!a.describes(&stamp(1_560_177_334_020_776_051), 0));
        assert!(a.describes(&stamp(1_560_177_335_020_775_051), 1_000_000_000));
        assert!(!sized.describes(&stamp(1_560_177_334_020_775_000), 0));
    }
}
