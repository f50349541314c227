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

use super::xattrs::{attributes_kept, each_file, trim};
use super::{Entry, EntryPath, Importer, Mtime};
use crate::algo::{ALGORITHMS, Algorithm};
use crate::clock::parse_iso8601_ns;
use crate::digest::Digest;
use crate::sys::attrs;
use crate::walk::Exclude;
use std::path::{Path, PathBuf};

/// The key of the write time in TeraCopy's and MD5Stream's layout.
const WRITE_TIME: &str = "FileWriteTimeUtc";
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

/// The algorithm whose digests a stream of this name holds (names compare without regard
/// to case, as NTFS compares them).
fn row_of(stream: &str) -> Option<&'static Algorithm> {
    ALGORITHMS.iter().find(|a| a.stream.is_some_and(|s| s.eq_ignore_ascii_case(stream)))
}

/// A stream's value: the digest of `row`, and the file's write time it was taken at
/// (nanoseconds and the fraction digits given) when the layout records one.
pub(crate) fn parse(
    row: &'static Algorithm,
    value: &[u8],
) -> Result<(Digest, Option<(i128, u32)>), String> {
    let value = value.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(value);
    let digest_of = |text: &[u8]| {
        Digest::from_hex(text).filter(|d| d.as_bytes().len() == row.len).ok_or_else(|| {
            format!("holds {:?}, not a {} digest", String::from_utf8_lossy(text), row.name)
        })
    };
    if !value.contains(&b'=') {
        // RapidCRC-Unicode's: the hex digest alone.
        return Ok((digest_of(trim(value))?, None));
    }
    // TeraCopy's and MD5Stream's: KEY=VALUE lines, each key once.
    let text = std::str::from_utf8(value).map_err(|_| "is not UTF-8 text".to_string())?;
    let key = row.stream.unwrap_or(row.tag);
    let (mut digest, mut written) = (None, None);
    let mut seen: Vec<&str> = Vec::new();
    for line in text.lines().map(|l| l.trim_matches(|c: char| c.is_whitespace() || c == '\0')) {
        if line.is_empty() {
            continue;
        }
        let Some((k, v)) = line.split_once('=').filter(|(k, _)| !k.is_empty()) else {
            return Err(format!("line {line:?} is not KEY=VALUE"));
        };
        if seen.iter().any(|s| s.eq_ignore_ascii_case(k)) {
            return Err(format!("names {k} twice"));
        }
        seen.push(k);
        if k.eq_ignore_ascii_case(key) {
            digest = Some(digest_of(v.as_bytes())?);
        } else if k.eq_ignore_ascii_case(WRITE_TIME) {
            written = Some(
                parse_iso8601_ns(v).ok_or_else(|| format!("{WRITE_TIME} {v:?} is not a time"))?,
            );
        }
    }
    let digest = digest.ok_or_else(|| format!("has no {key}= line"))?;
    Ok((digest, written))
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
    fn rapidcrc_keeps_the_hex_digest_alone() {
        let crc = lookup("crc32").unwrap();
        // RapidCRC-Unicode writes the digest as it shows it (upper case by default).
        let (d, t) = parse(crc, b"CBF43926").unwrap();
        assert_eq!((d.to_hex(), t), ("cbf43926".to_string(), None));
        // Samba keeps a NUL after a stream's bytes.
        assert_eq!(parse(crc, b"cbf43926\0").unwrap().0.to_hex(), "cbf43926");
        assert!(parse(crc, b"CBF439").unwrap_err().contains("not a crc32 digest"));
        assert_eq!(row_of("crc32").map(|a| a.name), Some("crc32"));
        assert_eq!(row_of("SHA3-256").map(|a| a.name), Some("sha3-256"));
        assert!(row_of("Zone.Identifier").is_none());
    }

    #[test]
    fn teracopy_keeps_the_digest_and_the_write_time() {
        let md5 = lookup("md5").unwrap();
        let text = b"MD5=EBC4ED3AC805B99666C3D8DBFF3FA7DB\r\nFileWriteTimeUtc=2022-09-16T16:43:32.2740000Z\r\n";
        let (d, t) = parse(md5, text).unwrap();
        assert_eq!(d.to_hex(), "ebc4ed3ac805b99666c3d8dbff3fa7db");
        assert_eq!(t, Some((1_663_346_612_274_000_000, 7)));
        // A byte-order mark, LF line ends, the keys in another order.
        let text = b"\xEF\xBB\xBFFileWriteTimeUtc=2022-09-16T16:43:32.2740000Z\nMD5=ebc4ed3ac805b99666c3d8dbff3fa7db\n";
        assert_eq!(parse(md5, text).unwrap().1, Some((1_663_346_612_274_000_000, 7)));
        for (bad, why) in [
            (&b"FileWriteTimeUtc=2022-09-16T16:43:32Z\r\n"[..], "no MD5= line"),
            (b"MD5=EBC4\r\n", "not a md5 digest"),
            (
                b"MD5=EBC4ED3AC805B99666C3D8DBFF3FA7DB\r\nMD5=EBC4ED3AC805B99666C3D8DBFF3FA7DB\r\n",
                "twice",
            ),
            (
                b"MD5=EBC4ED3AC805B99666C3D8DBFF3FA7DB\r\nFileWriteTimeUtc=yesterday\r\n",
                "not a time",
            ),
            (b"MD5=EBC4ED3AC805B99666C3D8DBFF3FA7DB\r\njunk\r\n", "not KEY=VALUE"),
            (b"MD5=\xff\r\n", "not UTF-8"),
        ] {
            let got = parse(md5, bad).unwrap_err();
            assert!(got.contains(why), "{got} for {:?}", String::from_utf8_lossy(bad));
        }
    }

    #[test]
    fn an_algorithm_no_program_keeps_in_a_stream_is_refused() {
        let root = Path::new(".");
        let err = Streams::new(root, Exclude::default(), lookup("xxh3")).err().unwrap();
        assert!(err.contains("no program keeps xxh3 digests in a stream"), "{err}");
        assert!(err.contains("crc32") && err.contains("blake3"), "{err}");
        assert!(Streams::new(root, Exclude::default(), lookup("sha256")).is_ok());
    }
}
