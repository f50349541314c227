//! rhash's output formats, as rhash 1.4.3 writes them: its default SFV with a comment
//! header listing each file's size and modification time, `--simple`, `--bsd` (tags padded
//! to five characters), `--magnet` links, `--ed2k-link`s, the digest encodings
//! (`--hex`, `--base32`, `--base64`) and letter case; plus parsers for the lines `rhash -c`
//! reads that the other formats do not cover (magnet and ed2k links, multi-digest
//! `--simple` lines, base32/base64 digests) and the CRC32 embedded in file names
//! (`rhash -k`, `rhash -e`).
//!
//! rhash prints digests in the order of its own algorithm table whatever order they were
//! asked for in; the registry's rows say where each stands ([`RhashFacts::rank`]), and
//! algorithms rhash does not know come last.

use crate::algo::{self, Algorithm, RhashFacts};
use crate::digest::Digest;

/// fixity's algorithms that rhash computes, in rhash's order (the rows with
/// [`Algorithm::rhash`]).
pub(crate) fn algorithms() -> &'static [&'static Algorithm] {
    static ROWS: std::sync::OnceLock<Vec<&'static Algorithm>> = std::sync::OnceLock::new();
    ROWS.get_or_init(|| {
        let mut rows: Vec<_> = algo::ALGORITHMS.iter().filter(|a| a.rhash.is_some()).collect();
        rows.sort_by_key(|a| rank(a));
        rows
    })
}

/// fixity's algorithm of that name (`tth`, `sha1`), if rhash computes it.
pub fn algorithm(name: &str) -> Option<&'static Algorithm> {
    algo::lookup(name).filter(|a| a.rhash.is_some())
}

/// The algorithm of a printf name (`sha-256`, `TTH`), case-insensitively.
pub(crate) fn by_name(name: &[u8]) -> Option<&'static Algorithm> {
    algorithms().iter().copied().find(|a| facts(a).name.as_bytes().eq_ignore_ascii_case(name))
}

/// The algorithm of a magnet URN name (`tree:tiger`, `sha1`).
pub(crate) fn by_urn(urn: &[u8]) -> Option<&'static Algorithm> {
    algorithms().iter().copied().find(|a| facts(a).urn.as_bytes().eq_ignore_ascii_case(urn))
}

/// The algorithm of a printf letter (`h` for SHA1), either case.
pub(crate) fn by_letter(c: u8) -> Option<&'static Algorithm> {
    let c = c.to_ascii_lowercase();
    algorithms().iter().copied().find(|a| facts(a).letter == Some(c))
}

fn facts(algo: &Algorithm) -> RhashFacts {
    algo.rhash.expect("one of rhash's algorithms")
}

fn rank(algo: &Algorithm) -> usize {
    algo.rhash.map_or(usize::MAX, |r| r.rank as usize)
}

/// Sorts algorithms into the order rhash prints them (stable: unknown ones keep theirs).
pub fn sort_rhash_order(algos: &mut [&'static Algorithm]) {
    algos.sort_by_key(|a| rank(a));
}

fn urn(algo: &Algorithm) -> &'static str {
    algo.rhash.map_or(algo.name, |r| r.urn)
}

/// How a digest is printed (`--hex`, `--base32`, `--base64`, or printf's `%x`, `%b`, `%B`,
/// `%@`); `Default` is base32 for TTH and AICH and hex for the rest.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum Enc {
    #[default]
    Default,
    Hex,
    Base32,
    Base64,
    /// The digest's bytes as they are (printf `%@`).
    Raw,
}

/// Letter case of hex and base32 digests (`--uppercase`, `--lowercase`); base64 and raw
/// digests are never changed.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum Case {
    /// Lowercase, except uppercase in SFV.
    #[default]
    Default,
    Upper,
    Lower,
}

/// One of rhash's line layouts.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Layout {
    /// rhash's default: [`Layout::Sfv`] when CRC32 is the only algorithm, else
    /// [`Layout::Simple`].
    Default,
    /// `--sfv`: the comment header, then `name D1 D2` (uppercase by default).
    Sfv,
    /// `--simple`: `digest  name` for one algorithm, `name  d1  d2` for several.
    Simple,
    /// `--bsd`: `TAG   (name) = digest`, one line per algorithm.
    Bsd,
    /// `--magnet`: `magnet:?xl=SIZE&dn=NAME&xt=urn:...`.
    Magnet,
    /// `--ed2k-link`: `ed2k://|file|NAME|SIZE|ED2K|h=AICH|/`.
    Ed2kLink,
}

impl Layout {
    /// The layout rhash actually uses for `algos`.
    pub(crate) fn resolve(self, algos: &[&'static Algorithm]) -> Layout {
        match self {
            Layout::Default if algos.len() == 1 && algos[0].name == "crc32" => Layout::Sfv,
            Layout::Default => Layout::Simple,
            other => other,
        }
    }

    /// The algorithms rhash computes when none are asked for.
    pub(crate) fn default_algorithms(self) -> &'static [&'static str] {
        match self {
            Layout::Magnet => &["tth", "ed2k", "aich"],
            Layout::Ed2kLink => &["ed2k", "aich"],
            _ => &["crc32"],
        }
    }

    /// Whether names with a newline cannot be written (the line-based layouts).
    pub(crate) fn needs_one_line_names(self) -> bool {
        !matches!(self, Layout::Magnet | Layout::Ed2kLink)
    }
}

/// Prints `digest` as rhash does for `algo`. `magnet` makes SHA1 default to base32, as in
/// magnet links.
pub(crate) fn digest_text(
    algo: &Algorithm,
    digest: &Digest,
    enc: Enc,
    upper: bool,
    magnet: bool,
    out: &mut Vec<u8>,
) {
    if algo.encoding == crate::digest::Encoding::S3Etag {
        // An ETag has one form (the writers refuse other encodings for it).
        out.extend_from_slice(digest.encode(algo.encoding).as_bytes());
        return;
    }
    let enc = match enc {
        Enc::Default if algo.rhash.is_some_and(|r| r.base32) => Enc::Base32,
        Enc::Default if magnet && algo.rhash.is_some() && algo.name == "sha1" => Enc::Base32,
        Enc::Default => Enc::Hex,
        e => e,
    };
    match enc {
        Enc::Hex if upper => out.extend_from_slice(digest.to_hex_upper().as_bytes()),
        Enc::Hex | Enc::Default => out.extend_from_slice(digest.to_hex().as_bytes()),
        Enc::Base32 if upper => out.extend_from_slice(digest.to_base32().as_bytes()),
        Enc::Base32 => out.extend_from_slice(digest.to_base32().to_ascii_lowercase().as_bytes()),
        Enc::Base64 => out.extend_from_slice(digest.to_base64().as_bytes()),
        Enc::Raw => out.extend_from_slice(digest.as_bytes()),
    }
}

/// Percent-encodes `bytes` as rhash does in links and `%u` directives: letters, digits and
/// `-_.~` stay, every other byte becomes `%xx` (`%XX` when `upper`).
pub(crate) fn url_encode(bytes: &[u8], upper: bool, out: &mut Vec<u8>) {
    let digits: &[u8; 16] = if upper { b"0123456789ABCDEF" } else { b"0123456789abcdef" };
    for &b in bytes {
        if b.is_ascii_alphanumeric() || matches!(b, b'-' | b'_' | b'.' | b'~') {
            out.push(b);
        } else {
            out.extend_from_slice(&[b'%', digits[(b >> 4) as usize], digits[(b & 15) as usize]]);
        }
    }
}

/// The last component of a path as printed (`d/x.bin` -> `x.bin`).
pub(crate) fn file_name(path: &[u8]) -> &[u8] {
    let trimmed = match path.iter().rposition(|&b| b != b'/') {
        Some(end) => &path[..=end],
        None => return path,
    };
    match trimmed.iter().rposition(|&b| b == b'/') {
        Some(i) => &trimmed[i + 1..],
        None => trimmed,
    }
}

/// What rhash prints about one hashed file.
#[derive(Clone, Debug)]
pub struct FileInfo<'a> {
    /// The path as printed.
    pub path: &'a [u8],
    /// Size in bytes.
    pub size: u64,
    /// Modification time, seconds since the epoch (absent for standard input).
    pub mtime: Option<i64>,
    /// The digests, in rhash order (see [`sort_rhash_order`]).
    pub digests: &'a [(&'static Algorithm, Digest)],
}

impl FileInfo<'_> {
    /// The digest of `algo`, if it was computed.
    pub(crate) fn digest(&self, algo: &Algorithm) -> Option<&Digest> {
        self.digests.iter().find(|(a, _)| a.name == algo.name).map(|(_, d)| d)
    }
}

/// Options of the line writers.
#[derive(Clone, Copy, Debug, Default)]
pub struct Style {
    pub enc: Enc,
    pub case: Case,
}

impl Style {
    fn upper(self, default: bool) -> bool {
        match self.case {
            Case::Default => default,
            Case::Upper => true,
            Case::Lower => false,
        }
    }
}

/// Appends the lines `layout` (resolved, see `Layout::resolve`) prints for `file`.
/// The SFV header comes separately (`sfv_header`).
pub fn write(layout: Layout, style: Style, file: &FileInfo, out: &mut Vec<u8>) {
    match layout {
        Layout::Sfv | Layout::Default => {
            let upper = style.upper(true);
            out.extend_from_slice(file.path);
            for (a, d) in file.digests {
                out.push(b' ');
                digest_text(a, d, style.enc, upper, false, out);
            }
            out.push(b'\n');
        }
        Layout::Simple => {
            let upper = style.upper(false);
            if let [(a, d)] = file.digests {
                digest_text(a, d, style.enc, upper, false, out);
                out.extend_from_slice(b"  ");
                out.extend_from_slice(file.path);
            } else {
                out.extend_from_slice(file.path);
                for (a, d) in file.digests {
                    out.extend_from_slice(b"  ");
                    digest_text(a, d, style.enc, upper, false, out);
                }
            }
            out.push(b'\n');
        }
        Layout::Bsd => {
            let upper = style.upper(false);
            for (a, d) in file.digests {
                out.extend_from_slice(format!("{:<5} (", a.tag).as_bytes());
                out.extend_from_slice(file.path);
                out.extend_from_slice(b") = ");
                digest_text(a, d, style.enc, upper, false, out);
                out.push(b'\n');
            }
        }
        Layout::Magnet => {
            let upper = style.upper(false);
            out.extend_from_slice(format!("magnet:?xl={}&dn=", file.size).as_bytes());
            url_encode(file_name(file.path), upper, out);
            for (a, d) in file.digests {
                out.extend_from_slice(b"&xt=urn:");
                out.extend_from_slice(urn(a).as_bytes());
                out.push(b':');
                digest_text(a, d, style.enc, upper, true, out);
            }
            out.push(b'\n');
        }
        Layout::Ed2kLink => {
            ed2k_link(file, style.upper(false), out);
            out.push(b'\n');
        }
    }
}

/// Appends `ed2k://|file|NAME|SIZE|ED2K|h=AICH|/` (no newline); the AICH part only when
/// AICH was computed, nothing at all without ED2K. `upper` also makes the name's escapes
/// uppercase, as rhash does.
pub(crate) fn ed2k_link(file: &FileInfo, upper: bool, out: &mut Vec<u8>) {
    let find = |name: &str| {
        let a = algorithm(name)?;
        Some((a, *file.digest(a)?))
    };
    let Some((ed2k, ed2k_digest)) = find("ed2k") else { return };
    out.extend_from_slice(b"ed2k://|file|");
    url_encode(file_name(file.path), upper, out);
    out.extend_from_slice(format!("|{}|", file.size).as_bytes());
    digest_text(ed2k, &ed2k_digest, Enc::Hex, upper, false, out);
    if let Some((aich, aich_digest)) = find("aich") {
        out.extend_from_slice(b"|h=");
        digest_text(aich, &aich_digest, Enc::Base32, upper, false, out);
    }
    out.extend_from_slice(b"|/");
}

/// One file of the SFV header: path as printed, size, modification time (epoch seconds).
pub(crate) type HeaderEntry = (Vec<u8>, u64, Option<i64>);

/// The comment block rhash starts an SFV file with: who wrote it and when, then one line
/// per file with its size and modification time (local time, as rhash prints them).
/// `now` is seconds since the epoch.
pub(crate) fn sfv_header(now: i64, files: &[HeaderEntry]) -> Vec<u8> {
    let (date, time) = local_date_time(now);
    let mut out = format!(
        "; Generated by fixity v{} on {date} at {}\n;\n",
        env!("CARGO_PKG_VERSION"),
        dotted(&time)
    )
    .into_bytes();
    for (path, size, mtime) in files {
        let (d, t) = local_date_time(mtime.unwrap_or(now));
        out.extend_from_slice(format!("; {size:>12}  {} {d} ", dotted(&t)).as_bytes());
        out.extend_from_slice(path);
        out.push(b'\n');
    }
    out
}

/// `HH:MM:SS` -> `HH:MM.SS`, rhash's way in SFV headers.
fn dotted(time: &str) -> String {
    match time.rsplit_once(':') {
        Some((hm, s)) => format!("{hm}.{s}"),
        None => time.to_string(),
    }
}

/// `YYYY-MM-DD HH:MM:SS` in local time, as printf's `%{mtime}` prints it.
pub(crate) fn local_time_text(secs: i64) -> String {
    let (d, t) = local_date_time(secs);
    format!("{d} {t}")
}

/// (`YYYY-MM-DD`, `HH:MM:SS`) in local time.
fn local_date_time(secs: i64) -> (String, String) {
    let local = secs + local_offset(secs);
    let text = crate::clock::format_time(local.saturating_mul(1000));
    let (d, t) = text.split_once(' ').unwrap_or((&text, ""));
    (d.to_string(), t.to_string())
}

/// Seconds east of UTC of local time at `secs`.
fn local_offset(secs: i64) -> i64 {
    crate::sys::local_offset(secs)
}

mod embedded;
mod links;
mod writer;

pub use embedded::{embed_crc, embedded_crc};
pub use links::{
    Link, LinkDigest, SimpleLine, decode_digest, parse_ed2k_link, parse_link, parse_magnet,
    parse_simple, url_decode,
};
pub(crate) use writer::{RhashWriter, layout_algorithms, rhash_file};

#[cfg(test)]
mod tests;
