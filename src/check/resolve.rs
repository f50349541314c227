//! Which algorithm a manifest line is checked with: the line's tag, `-a`, the manifest's
//! name, or the digest's length when exactly one algorithm has it.

use crate::algo::{self, Algorithm};
use crate::digest::{Digest, DigestText, Encoding};
use crate::formats::{Format, Record, decode_for};

/// Where the algorithm for untagged lines comes from, strongest first.
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct AlgoHints {
    /// `-a`, from the user.
    pub forced: Option<&'static Algorithm>,
    /// The manifest's file name (`.sha256`, `SHA256SUMS`).
    pub from_name: Option<&'static Algorithm>,
    /// `-a md5,sha1`: the algorithms of the digests of lines with several (rhash's
    /// `name  d1  d2`), in order.
    pub columns: Option<&'static [&'static Algorithm]>,
}

/// The algorithms for one line, or why there are none.
#[derive(Clone, Debug)]
#[cfg_attr(test, derive(PartialEq, Eq))]
pub(crate) enum Resolved {
    /// Check with these algorithms against these digests: one pair per digest on the line
    /// (several for hashdeep's columns), all computed in one read.
    Sums(Vec<(&'static Algorithm, Digest)>),
    /// The line does not fit (wrong length for the named algorithm, a tag other than
    /// `-a`, no algorithm with that length): an improperly formatted line.
    Malformed,
    /// Several algorithms have this digest length and nothing decides between them.
    Ambiguous(Vec<&'static Algorithm>),
}

/// Decides the algorithms for `record`, and decodes its digests for them.
pub(crate) fn resolve(record: &Record, hints: &AlgoHints) -> Resolved {
    let mut sums = Vec::with_capacity(1 + record.more.len());
    let columns = hints.columns.filter(|c| c.len() == 1 + record.more.len());
    let first = match record.algo {
        // `-a blake2b` takes BLAKE2b of every length, as `b2sum -c` does.
        Some(a) if hints.forced.is_some_and(|f| f != a && f != a.family()) => {
            return Resolved::Malformed;
        }
        // A manifest named for an algorithm (`x.sha256`, `MD5SUMS`) holds that algorithm's
        // lines: another line (an SFV `name 8-hex-digits` line, another tag) is improperly
        // formatted, as `sha256sum -c` finds it, never checked as CRC32 or the like.
        Some(a)
            if hints.forced.is_none()
                && record.more.is_empty()
                && record.format != Format::Hashdeep
                && hints.from_name.is_some_and(|n| n != a && n != a.family()) =>
        {
            return Resolved::Malformed;
        }
        Some(a) => Some(a),
        None if columns.is_some() => None,
        None => hints.forced.or(hints.from_name).map(|a| blake2b_length(a, &record.digest)),
    };
    let lines =
        std::iter::once((first, &record.digest)).chain(record.more.iter().map(|(a, t)| (*a, t)));
    for (i, (named, text)) in lines.enumerate() {
        let named = named.or_else(|| columns.map(|c| c[i]));
        match one(named, text) {
            Ok(pair) => sums.push(pair),
            Err(r) => return r,
        }
    }
    Resolved::Sums(sums)
}

/// The algorithm of an untagged line said to be `a`: for BLAKE2b, BLAKE2b of the length
/// of its hex digest, as `b2sum -c` and `cksum -a blake2b -c` read untagged lines
/// whatever `-l` says (`b2sum -l 256` writes 64 hex digits and no length); `a` otherwise.
/// A text that is no hex digest of 1 to 64 bytes is left to `a` to decode or refuse.
fn blake2b_length(a: &'static Algorithm, text: &DigestText) -> &'static Algorithm {
    if algo::blake2b_bits(512) != Some(a) {
        return a;
    }
    let bytes = text.decode_as(Encoding::Hex).map_or(0, |d| d.as_bytes().len());
    u32::try_from(bytes * 8).ok().and_then(algo::blake2b_bits).unwrap_or(a)
}

/// One digest: with its algorithm named, decoded for it; otherwise the algorithm is the one
/// whose length the text has in that algorithm's own encoding (hex for most, base32 for
/// TTH and AICH), if exactly one has. S3 ETags are never guessed.
fn one(
    named: Option<&'static Algorithm>,
    text: &DigestText,
) -> Result<(&'static Algorithm, Digest), Resolved> {
    if let Some(a) = named {
        return decode_for(text, a).map(|d| (a, d)).ok_or(Resolved::Malformed);
    }
    // Decode once per encoding (hex for most rows, base32 for TTH and AICH), not per row.
    let hex = text.decode_as(Encoding::Hex);
    let base32 = text.decode_as(Encoding::Base32);
    let fits: Vec<(&'static Algorithm, Digest)> = algo::ALGORITHMS
        .iter()
        .filter_map(|a| {
            let d = match a.encoding {
                Encoding::Hex | Encoding::HexUpper => hex,
                Encoding::Base32 => base32,
                Encoding::Base64 => text.decode_as(Encoding::Base64),
                // An ETag's part size is not in its text: never guessed (a tag, `-a` or
                // the manifest's name says which `s3etag` row).
                Encoding::S3Etag => None,
            }?;
            (d.as_bytes().len() == a.len).then_some((a, d))
        })
        .collect();
    match fits.len() {
        0 => Err(Resolved::Malformed),
        1 => Ok(fits[0]),
        _ => Err(Resolved::Ambiguous(fits.into_iter().map(|(a, _)| a).collect())),
    }
}

/// Whether a manifest's path reaches outside the directory it is checked from: an
/// absolute path, or one with a `..` component (on Windows also a drive, `C:`, and `\`
/// as a separator). coreutils checks such lines (scripts rely on `sha256sum /etc/* >
/// list`); fixity says so, and refuses them under `--confine`.
pub(crate) fn reaches_outside(name: &[u8]) -> bool {
    let sep = |b: &u8| crate::sys::SEPARATORS.contains(b);
    name.first().is_some_and(sep)
        || crate::sys::drive_prefix(name)
        || name.split(sep).any(|c| c == b"..")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn record(hex_len: usize, algo: Option<&'static Algorithm>) -> Record {
        let text = DigestText::new(&vec![b'0'; hex_len]).unwrap();
        Record::new(algo, text, b"f".to_vec(), Format::Gnu)
    }

    fn sum(a: &'static Algorithm) -> Resolved {
        Resolved::Sums(vec![(a, Digest::new(&vec![0u8; a.len]))])
    }

    #[test]
    fn outside_paths_are_absolute_or_climb() {
        for p in [&b"/etc/passwd"[..], b"../x", b"a/../../b", b"a/..", b".."] {
            assert!(reaches_outside(p), "{}", String::from_utf8_lossy(p));
        }
        for p in [&b"a/b"[..], b"..a", b"a..", b"./a", b"a/.../b", b"a/..b"] {
            assert!(!reaches_outside(p), "{}", String::from_utf8_lossy(p));
        }
        // Windows' own forms of absolute and climbing names.
        #[cfg(windows)]
        for p in [&b"C:\\x"[..], b"C:/x", b"c:x", b"\\\\srv\\share\\x", b"\\x", b"a\\..\\..\\b"] {
            assert!(reaches_outside(p), "{}", String::from_utf8_lossy(p));
        }
    }

    #[test]
    fn resolution_order() {
        let md5 = algo::lookup("md5").unwrap();
        let sha1 = algo::lookup("sha1").unwrap();
        let none = AlgoHints::default();
        let tiger = algo::lookup("tiger").unwrap();
        let tth = algo::lookup("tth").unwrap();
        // TTH is written in base32, so 48 hex digits are Tiger's alone.
        assert_eq!(resolve(&record(48, None), &none), sum(tiger), "unique length");
        // 40 hex digits: SHA-1, RIPEMD-160, HAS-160 or BTIH (AICH is base32); 32: MD4, MD5,
        // Snefru-128, MurmurHash3, XXH128, eD2k or imohash. Never guessed.
        let names = |hex_len| match resolve(&record(hex_len, None), &none) {
            Resolved::Ambiguous(v) => v.iter().map(|a| a.name).collect::<Vec<_>>(),
            other => panic!("{hex_len} hex digits: {other:?}"),
        };
        assert_eq!(names(40), ["sha1", "ripemd160", "has160", "btih"]);
        assert_eq!(names(32), ["md4", "md5", "snefru128", "murmur3", "xxh128", "ed2k", "imohash"]);
        // A tag decides where the length does not; a tagged TTH may be written in hex.
        assert_eq!(resolve(&record(48, Some(tth)), &none), sum(tth));
        assert_eq!(resolve(&record(30, None), &none), Resolved::Malformed);
        let named = AlgoHints { from_name: Some(md5), ..AlgoHints::default() };
        assert_eq!(resolve(&record(32, None), &named), sum(md5));
        assert_eq!(resolve(&record(40, None), &named), Resolved::Malformed);
        let forced = AlgoHints { forced: Some(md5), from_name: Some(sha1), columns: None };
        assert_eq!(resolve(&record(32, None), &forced), sum(md5));
        assert_eq!(resolve(&record(40, Some(sha1)), &forced), Resolved::Malformed);
        // A manifest named for md5 takes no line of another algorithm, tagged or implied
        // by its format (an SFV line is CRC32).
        assert_eq!(resolve(&record(40, Some(sha1)), &named), Resolved::Malformed);
        let crc32 = algo::lookup("crc32").unwrap();
        let mut sfv = record(8, Some(crc32));
        sfv.format = Format::Sfv;
        let sha256 = AlgoHints { from_name: algo::lookup("sha256"), ..AlgoHints::default() };
        assert_eq!(resolve(&sfv, &sha256), Resolved::Malformed);
        assert_eq!(resolve(&sfv, &AlgoHints::default()), sum(crc32));
        assert_eq!(resolve(&record(32, Some(md5)), &named), sum(md5));
    }

    #[test]
    fn blake2b_takes_its_length_from_the_line() {
        let b2 = algo::lookup("blake2b").unwrap();
        let b256 = algo::blake2b_bits(256).unwrap();
        let b8 = algo::blake2b_bits(8).unwrap();
        let forced = |a| AlgoHints { forced: Some(a), ..AlgoHints::default() };
        let named = AlgoHints { from_name: Some(b2), ..AlgoHints::default() };
        // Untagged: the hex digits decide, as `b2sum -c` (whatever its -l) decides.
        for hints in [forced(b2), named] {
            assert_eq!(resolve(&record(64, None), &hints), sum(b256));
            assert_eq!(resolve(&record(2, None), &hints), sum(b8));
            assert_eq!(resolve(&record(128, None), &hints), sum(b2));
            for bad in [1, 3, 127] {
                assert_eq!(resolve(&record(bad, None), &hints), Resolved::Malformed, "{bad}");
            }
        }
        // Tagged: the tag decides; `-a blake2b` takes every length, `-a blake2b-256` its own.
        assert_eq!(resolve(&record(64, Some(b256)), &forced(b2)), sum(b256));
        assert_eq!(resolve(&record(64, Some(b256)), &forced(b256)), sum(b256));
        assert_eq!(resolve(&record(128, Some(b2)), &forced(b256)), Resolved::Malformed);
        assert_eq!(resolve(&record(2, Some(b8)), &forced(b256)), Resolved::Malformed);
        // `-a blake2b-256` reads untagged lines at that length only.
        assert_eq!(resolve(&record(64, None), &forced(b256)), sum(b256));
        assert_eq!(resolve(&record(128, None), &forced(b256)), Resolved::Malformed);
        // Other algorithms do not stretch: 64 hex digits are no SHA-512.
        let sha512 = algo::lookup("sha512").unwrap();
        assert_eq!(resolve(&record(64, None), &forced(sha512)), Resolved::Malformed);
        // Never guessed without a hint: 64 digits stay SHA-256 and its kin.
        let Resolved::Ambiguous(fits) = resolve(&record(64, None), &AlgoHints::default()) else {
            panic!()
        };
        assert!(!fits.contains(&b256));
    }

    #[test]
    fn several_digests_resolve_together() {
        let md5 = algo::lookup("md5").unwrap();
        let sha256 = algo::lookup("sha256").unwrap();
        let mut r = record(32, Some(md5));
        r.more.push((Some(sha256), DigestText::new(&[b'1'; 64]).unwrap()));
        let Resolved::Sums(sums) = resolve(&r, &AlgoHints::default()) else { panic!() };
        assert_eq!(sums.len(), 2);
        assert_eq!(sums[1], (sha256, Digest::new(&[0x11; 32])));
        // A wrong length in any column makes the line malformed.
        r.more.push((Some(sha256), DigestText::new(&[b'1'; 40]).unwrap()));
        assert_eq!(resolve(&r, &AlgoHints::default()), Resolved::Malformed);
    }

    #[test]
    fn columns_name_the_digests_of_multi_digest_lines() {
        let md4 = algo::lookup("md4").unwrap();
        let sha1 = algo::lookup("sha1").unwrap();
        let mut r = record(32, None);
        r.more.push((None, DigestText::new(&[b'0'; 40]).unwrap()));
        // 32 and 40 hex digits each fit several algorithms.
        assert!(matches!(resolve(&r, &AlgoHints::default()), Resolved::Ambiguous(_)));
        let cols: &'static [&'static Algorithm] = Box::leak(Box::new([md4, sha1]));
        let hints = AlgoHints { columns: Some(cols), ..AlgoHints::default() };
        let Resolved::Sums(sums) = resolve(&r, &hints) else { panic!() };
        assert_eq!(sums.iter().map(|s| s.0).collect::<Vec<_>>(), [md4, sha1]);
        // A list of another length does not apply.
        let one = record(32, None);
        assert!(matches!(resolve(&one, &hints), Resolved::Ambiguous(_)));
    }

    #[test]
    fn base64_and_base32_digests_decode_for_the_named_algorithm() {
        let sha1 = algo::lookup("sha1").unwrap();
        let d = sha1.digest(b"abc");
        let hints = AlgoHints { forced: Some(sha1), ..AlgoHints::default() };
        for text in [d.to_base32(), d.to_base64()] {
            let r = Record::new(
                None,
                DigestText::new(text.as_bytes()).unwrap(),
                vec![b'f'],
                Format::Gnu,
            );
            assert_eq!(resolve(&r, &hints), Resolved::Sums(vec![(sha1, d)]), "{text}");
            // Untagged and unnamed, a base32 text is not read as some hex algorithm's digest.
            assert_ne!(resolve(&r, &AlgoHints::default()), Resolved::Sums(vec![(sha1, d)]));
        }
    }
}
