//! Digests Windows programs keep beside each file in NTFS alternate data streams:
//!
//! - RapidCRC-Unicode ("Put HASH into stream"): a stream per algorithm, named as the
//!   registry's [`Algorithm::stream`] (`photo.jpg:CRC32`, `:MD5`, `:SHA256`, `:BLAKE3`),
//!   holding the digest in hex and nothing else: no size or time is recorded, so the
//!   file's at the import are taken (as for `user.checksum.*`).
//! - TeraCopy and MD5Stream: the stream `:MD5` holding the lines `MD5=HEX` and
//!   `FileWriteTimeUtc=2022-09-16T16:43:32.2740000Z` (.NET's round-trip form, 100 ns): a
//!   file written since is refused as changed.
//!
//! On Windows the streams are read from each file. Elsewhere they are read where a
//! Windows volume's streams show up as attributes ([`attrs::stream_name`]): on the Linux
//! server of a Samba share with `vfs_streams_xattr` (`user.DosStream.MD5:$DATA`), and on
//! an NTFS volume mounted with ntfs-3g (`user.MD5`). The tree is walked (without following
//! symbolic links); a file with no such stream is no entry (the import lists it as
//! uncovered).

use super::xattrs::{attributes_kept, each_file};
use super::{Entry, EntryPath, Importer, Mtime};
use crate::algo::{ALGORITHMS, Algorithm};
use crate::catalog::ads::{parse, row_of};
use crate::sys::attrs;
use crate::walk::Exclude;
use std::path::{Path, PathBuf};

/// Streams RapidCRC-Unicode writes for algorithms fixity does not compute.
const UNKNOWN: &[&str] = &["BLAKE2SP"];

/// The digest streams of the files under a root.
pub struct Streams {
    root: PathBuf,
    exclude: Exclude,
    /// Only this algorithm's stream (`-a`), or every one.
    only: Option<&'static Algorithm>,
}

impl Streams {
    /// The streams under `root` (leaving out `exclude`): `only`'s, or those of every
    /// algorithm a program keeps in one. An algorithm no program keeps in a stream is
    /// refused with the reason.
    pub fn new(
        root: &Path,
        exclude: Exclude,
        only: Option<&'static Algorithm>,
    ) -> Result<Streams, String> {
        if let Some(a) = only
            && a.stream.is_none()
        {
            let kept: Vec<&str> =
                ALGORITHMS.iter().filter(|a| a.stream.is_some()).map(|a| a.name).collect();
            return Err(format!(
                "no program keeps {} digests in a stream (RapidCRC-Unicode's are {}; TeraCopy's md5): drop -a or pass one of those",
                a.name,
                kept.join(", ")
            ));
        }
        Ok(Streams { root: root.to_path_buf(), exclude, only })
    }

    fn entry(&self, full: &Path, rel: &[u8]) -> Option<Entry> {
        let path = EntryPath::Relative(rel.to_vec());
        let bad = |at: String, why: String| Some(Entry::malformed(at, path.clone(), why));
        let names = match attrs::list(full, false) {
            Ok(names) => names,
            Err(e) => {
                return bad(
                    String::new(),
                    format!("cannot list its {}: {}", attrs::WHAT, crate::read::io_message(&e)),
                );
            }
        };
        let mut entry: Option<Entry> = None;
        let mut unknown = Vec::new();
        for name in &names {
            let Some(attribute) = name.to_str() else { continue };
            let Some(stream) = attrs::stream_name(attribute) else { continue };
            if UNKNOWN.iter().any(|u| u.eq_ignore_ascii_case(stream)) && self.only.is_none() {
                unknown.push(stream.to_ascii_uppercase());
                continue;
            }
            let Some(row) =
                row_of(stream).filter(|r| self.only.is_none_or(|o| std::ptr::eq(*r, o)))
            else {
                continue;
            };
            let at = format!(":{stream}");
            let value = match attrs::get(full, attribute, false) {
                Ok(Some(v)) => v,
                // Gone between the listing and the read: as if never there.
                Ok(None) => continue,
                Err(e) => {
                    return bad(at, format!("cannot read it: {}", crate::read::io_message(&e)));
                }
            };
            let (digest, written) = match parse(row, &value) {
                Ok(v) => v,
                Err(why) => return bad(at, why),
            };
            let e = entry.get_or_insert_with(|| Entry::new(at.clone(), path.clone(), None));
            if e.digests.iter().all(|(a, _)| !std::ptr::eq(*a, row)) {
                e.digests.push((row, digest));
            }
            if let Some((ns, digits)) = written {
                let unit_ns = 10i128.pow(9 - digits.min(9));
                e.mtime = Some(Mtime::Units { value: ns.div_euclid(unit_ns), unit_ns });
            }
        }
        if !unknown.is_empty() {
            let e = entry
                .get_or_insert_with(|| Entry::new(format!(":{}", unknown[0]), path.clone(), None));
            e.unknown = Some(unknown.join(", "));
        }
        entry
    }
}

impl Importer for Streams {
    fn name(&self) -> &'static str {
        "streams"
    }

    fn algorithm(&self) -> Option<&'static Algorithm> {
        self.only
    }

    fn ready(&self) -> Result<(), String> {
        attributes_kept(&self.root)
    }

    fn entries(&mut self, each: &mut dyn FnMut(Entry)) -> Result<(), String> {
        each_file(&self.root, &self.exclude, &mut |full, rel| self.entry(full, rel), each);
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::algo::lookup;

    #[test]
    fn an_algorithm_no_program_keeps_in_a_stream_is_refused() {
        let root = Path::new(".");
        let err = Streams::new(root, Exclude::default(), lookup("xxh3")).err().unwrap();
        assert!(err.contains("no program keeps xxh3 digests in a stream"), "{err}");
        assert!(err.contains("crc32") && err.contains("blake3"), "{err}");
        assert!(Streams::new(root, Exclude::default(), lookup("sha256")).is_ok());
    }
}
