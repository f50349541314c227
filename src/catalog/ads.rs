//! The digests Windows programs keep beside a file in NTFS alternate data streams, as a
//! stream's bytes lay them out:
//!
//! - RapidCRC-Unicode's: a stream per algorithm, named as the registry's
//!   [`Algorithm::stream`] (`photo.jpg:CRC32`, `:SHA256`), holding the hex digest alone;
//! - TeraCopy's and MD5Stream's: `:MD5` holding the lines `MD5=HEX` and
//!   `FileWriteTimeUtc=2022-09-16T16:43:32.2740000Z` (.NET's round-trip form, 100 ns).
//!
//! `fixity import --from streams` reads both ([`crate::import::streams`]); the xattr
//! (`ads`) store reads TeraCopy's in place for a file it has no record of ([`teracopy`]).
//! On Windows a stream is read from the file; elsewhere from the attribute a Samba server
//! or ntfs-3g keeps it in ([`attrs::stream_name`]).

use crate::algo::{ALGORITHMS, Algorithm};
use crate::clock::parse_iso8601_ns;
use crate::digest::Digest;
use crate::sys::attrs;
use std::ffi::OsString;
use std::io;
use std::path::Path;

/// The key of the write time in TeraCopy's and MD5Stream's layout.
const WRITE_TIME: &str = "FileWriteTimeUtc";

/// The algorithm whose digests a stream of this name holds (names compare without regard
/// to case, as NTFS compares them).
pub(crate) fn row_of(stream: &str) -> Option<&'static Algorithm> {
    ALGORITHMS.iter().find(|a| a.stream.is_some_and(|s| s.eq_ignore_ascii_case(stream)))
}

/// A stream's value: the digest of `row`, and the file's write time it was taken at
/// (nanoseconds and the fraction digits given) when the layout records one.
pub fn parse(
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

/// A value without the white space or NUL a script may have left around it (Samba keeps
/// a NUL after each stream's bytes).
pub(crate) fn trim(v: &[u8]) -> &[u8] {
    let keep = |b: &u8| !(b.is_ascii_whitespace() || *b == 0);
    let start = v.iter().position(keep).unwrap_or(v.len());
    let end = v.iter().rposition(keep).map_or(start, |i| i + 1);
    &v[start..end]
}

/// TeraCopy's (or MD5Stream's) record of the file at `path`, among its attributes
/// `listed`: the MD5 and the write time it was taken at (ns, fraction digits). A stream
/// without a time (RapidCRC-Unicode's `:MD5`) tells no edit from rot: `None`.
pub(crate) fn teracopy(
    path: &Path,
    listed: &[OsString],
) -> io::Result<Option<(&'static Algorithm, Digest, i128, u32)>> {
    let md5 = crate::algo::lookup("md5").expect("md5 is in the registry");
    for name in listed.iter().filter_map(|n| n.to_str()) {
        if !attrs::stream_name(name)
            .is_some_and(|s| row_of(s).is_some_and(|r| std::ptr::eq(r, md5)))
        {
            continue;
        }
        let Some(v) = attrs::get(path, name, true)? else { continue };
        if let Ok((digest, Some((ns, digits)))) = parse(md5, &v) {
            return Ok(Some((md5, digest, ns, digits)));
        }
    }
    Ok(None)
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
    fn values_are_trimmed_of_what_scripts_leave() {
        assert_eq!(trim(b" abc\n\0"), b"abc");
        assert_eq!(trim(b"\n"), b"");
        assert_eq!(trim(b"abc"), b"abc");
    }
}
