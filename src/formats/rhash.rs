//! rhash's output formats, as rhash 1.4.3 writes them: its default SFV with a comment
//! header listing each file's size and modification time, `--simple`, `--bsd` (tags padded
//! to five characters), `--magnet` links, `--ed2k-link`s, the digest encodings
//! (`--hex`, `--base32`, `--base64`) and letter case; plus parsers for the lines `rhash -c`
//! reads that the other formats do not cover (magnet and ed2k links, multi-digest
//! `--simple` lines, base32/base64 digests) and the CRC32 embedded in file names
//! (`rhash -k`, `rhash -e`).
//!
//! rhash prints digests in the order of its own algorithm table whatever order they were
//! asked for in; [`TABLE`] is that order. Algorithms rhash does not know come last.

use crate::algo::{self, Algorithm};
use crate::digest::Digest;

/// How rhash names and prints one algorithm.
#[derive(Debug)]
pub struct RhashAlgo {
    /// fixity's name for it (looked up in the registry; `None` there until fixity has it).
    pub fixity: &'static str,
    /// rhash's name in `%{name}` printf directives (matched case-insensitively).
    pub name: &'static str,
    /// The tag of `--bsd` lines.
    pub tag: &'static str,
    /// The URN name in magnet links (`xt=urn:NAME:digest`).
    pub urn: &'static str,
    /// Printed in base32 by default (TTH, AICH); all others in hex.
    pub base32: bool,
    /// Digest length in bytes.
    pub len: usize,
}

const fn row(
    fixity: &'static str,
    name: &'static str,
    tag: &'static str,
    urn: &'static str,
    base32: bool,
    len: usize,
) -> RhashAlgo {
    RhashAlgo { fixity, name, tag, urn, base32, len }
}

/// rhash 1.4.3's algorithms in the order it prints them (`rhash --list-hashes`).
pub static TABLE: &[RhashAlgo] = &[
    row("crc32", "crc32", "CRC32", "crc32", false, 4),
    row("md4", "md4", "MD4", "md4", false, 16),
    row("md5", "md5", "MD5", "md5", false, 16),
    row("sha1", "sha1", "SHA1", "sha1", false, 20),
    row("tiger", "tiger", "TIGER", "tiger", false, 24),
    row("tth", "tth", "TTH", "tree:tiger", true, 24),
    row("btih", "btih", "BTIH", "btih", false, 20),
    row("ed2k", "ed2k", "ED2K", "ed2k", false, 16),
    row("aich", "aich", "AICH", "aich", true, 20),
    row("whirlpool", "whirlpool", "WHIRLPOOL", "whirlpool", false, 64),
    row("ripemd160", "ripemd160", "RMD160", "ripemd160", false, 20),
    row("gost94", "gost94", "GOST94", "gost94", false, 32),
    row("gost94-cryptopro", "gost94-cryptopro", "GOST94-CRYPTOPRO", "gost94-cryptopro", false, 32),
    row("has160", "has160", "HAS-160", "has160", false, 20),
    row("gost12-256", "gost12-256", "GOST12-256", "gost12-256", false, 32),
    row("gost12-512", "gost12-512", "GOST12-512", "gost12-512", false, 64),
    row("sha224", "sha-224", "SHA224", "sha224", false, 28),
    row("sha256", "sha-256", "SHA256", "sha256", false, 32),
    row("sha384", "sha-384", "SHA384", "sha384", false, 48),
    row("sha512", "sha-512", "SHA512", "sha512", false, 64),
    row("edonr256", "edon-r256", "EDON-R256", "edon-r256", false, 32),
    row("edonr512", "edon-r512", "EDON-R512", "edon-r512", false, 64),
    row("sha3-224", "sha3-224", "SHA3-224", "sha3-224", false, 28),
    row("sha3-256", "sha3-256", "SHA3-256", "sha3-256", false, 32),
    row("sha3-384", "sha3-384", "SHA3-384", "sha3-384", false, 48),
    row("sha3-512", "sha3-512", "SHA3-512", "sha3-512", false, 64),
    row("crc32c", "crc32c", "CRC32C", "crc32c", false, 4),
    row("snefru128", "snefru128", "SNEFRU-128", "snefru128", false, 16),
    row("snefru256", "snefru256", "SNEFRU-256", "snefru256", false, 32),
    row("blake2s", "blake2s", "BLAKE2s", "blake2s", false, 32),
    row("blake2b", "blake2b", "BLAKE2b", "blake2b", false, 64),
];

impl RhashAlgo {
    /// fixity's algorithm, if fixity computes it (looked up by name or alias, so a
    /// registry row named otherwise, with this name as an alias, is found too).
    pub fn algorithm(&self) -> Option<&'static Algorithm> {
        let i = TABLE.iter().position(|r| std::ptr::eq(r, self))?;
        resolved()[i]
    }
}

/// fixity's algorithm for each row of [`TABLE`], looked up once.
fn resolved() -> &'static [Option<&'static Algorithm>] {
    static RESOLVED: std::sync::OnceLock<Vec<Option<&'static Algorithm>>> =
        std::sync::OnceLock::new();
    RESOLVED.get_or_init(|| TABLE.iter().map(|r| algo::lookup(r.fixity)).collect())
}

fn row_index(algo: &Algorithm) -> Option<usize> {
    resolved().iter().position(|a| a.is_some_and(|a| a.name == algo.name))
}

/// rhash's row for `algo`, if rhash knows the algorithm.
pub fn info(algo: &Algorithm) -> Option<&'static RhashAlgo> {
    row_index(algo).map(|i| &TABLE[i])
}

/// fixity's algorithm for rhash's `name` (`tth`, `sha1`: the `fixity` column of [`TABLE`]).
pub fn algorithm(name: &str) -> Option<&'static Algorithm> {
    TABLE.iter().find(|r| r.fixity == name)?.algorithm()
}

/// rhash's row for a printf name (`sha-256`, `TTH`), case-insensitively.
pub fn by_name(name: &[u8]) -> Option<&'static RhashAlgo> {
    TABLE.iter().find(|r| r.name.as_bytes().eq_ignore_ascii_case(name))
}

/// rhash's row for a magnet URN name (`tree:tiger`, `sha1`).
pub fn by_urn(urn: &[u8]) -> Option<&'static RhashAlgo> {
    TABLE.iter().find(|r| r.urn.as_bytes().eq_ignore_ascii_case(urn))
}

fn rank(algo: &Algorithm) -> usize {
    row_index(algo).unwrap_or(TABLE.len())
}

/// Sorts algorithms into the order rhash prints them (stable: unknown ones keep theirs).
pub fn sort_rhash_order(algos: &mut [&'static Algorithm]) {
    algos.sort_by_key(|a| rank(a));
}

fn tag(algo: &Algorithm) -> &'static str {
    info(algo).map_or(algo.tag, |r| r.tag)
}

fn urn(algo: &Algorithm) -> &'static str {
    info(algo).map_or(algo.name, |r| r.urn)
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
    pub fn resolve(self, algos: &[&'static Algorithm]) -> Layout {
        match self {
            Layout::Default if algos.len() == 1 && algos[0].name == "crc32" => Layout::Sfv,
            Layout::Default => Layout::Simple,
            other => other,
        }
    }

    /// The algorithms rhash computes when none are asked for.
    pub fn default_algorithms(self) -> &'static [&'static str] {
        match self {
            Layout::Magnet => &["tth", "ed2k", "aich"],
            Layout::Ed2kLink => &["ed2k", "aich"],
            _ => &["crc32"],
        }
    }

    /// Whether names with a newline cannot be written (the line-based layouts).
    pub fn needs_one_line_names(self) -> bool {
        !matches!(self, Layout::Magnet | Layout::Ed2kLink)
    }
}

/// Prints `digest` as rhash does for `algo`. `magnet` makes SHA1 default to base32, as in
/// magnet links.
pub fn digest_text(
    algo: &Algorithm,
    digest: &Digest,
    enc: Enc,
    upper: bool,
    magnet: bool,
    out: &mut Vec<u8>,
) {
    let enc = match enc {
        Enc::Default if info(algo).is_some_and(|r| r.base32) => Enc::Base32,
        Enc::Default if magnet && info(algo).is_some_and(|r| r.fixity == "sha1") => Enc::Base32,
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
pub fn url_encode(bytes: &[u8], upper: bool, out: &mut Vec<u8>) {
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
pub fn file_name(path: &[u8]) -> &[u8] {
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
    pub fn digest(&self, algo: &Algorithm) -> Option<&Digest> {
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

/// Appends the lines `layout` (resolved, see [`Layout::resolve`]) prints for `file`.
/// The SFV header comes separately ([`sfv_header`]).
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
                out.extend_from_slice(format!("{:<5} (", tag(a)).as_bytes());
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
pub fn ed2k_link(file: &FileInfo, upper: bool, out: &mut Vec<u8>) {
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
pub type HeaderEntry = (Vec<u8>, u64, Option<i64>);

/// The comment block rhash starts an SFV file with: who wrote it and when, then one line
/// per file with its size and modification time (local time, as rhash prints them).
/// `now` is seconds since the epoch.
pub fn sfv_header(now: i64, files: &[HeaderEntry]) -> Vec<u8> {
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
pub fn local_time_text(secs: i64) -> String {
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

/// Seconds east of UTC of local time at `secs` (the C library's time zone rules, `TZ`).
#[allow(unsafe_code)]
fn local_offset(secs: i64) -> i64 {
    let t = secs as libc::time_t;
    // SAFETY: `tm` is plain data that localtime_r fills in; both pointers are valid for
    // the call, and localtime_r is the thread-safe variant.
    unsafe {
        let mut tm: libc::tm = std::mem::zeroed();
        if libc::localtime_r(&t, &mut tm).is_null() {
            return 0;
        }
        tm.tm_gmtoff
    }
}

// ------------------------------------------------------------------ reading

/// A digest as found in a line: its text, and the algorithm the line names (if it does).
#[derive(Clone, Debug)]
#[cfg_attr(test, derive(PartialEq, Eq))]
pub struct LinkDigest {
    /// The algorithm, when the line names one fixity has.
    pub algo: Option<&'static Algorithm>,
    /// rhash's name for it (`tree:tiger`, `ed2k`, ...), as written.
    pub name: String,
    /// The decoded digest.
    pub digest: Digest,
}

/// One parsed link (`magnet:?...` or `ed2k://|file|...`).
#[derive(Clone, Debug)]
#[cfg_attr(test, derive(PartialEq, Eq))]
pub struct Link {
    /// The file name (`dn=`, or the ed2k name), percent-decoded.
    pub name: Vec<u8>,
    /// The size (`xl=`, or the ed2k size), if given.
    pub size: Option<u64>,
    /// The digests, in the line's order.
    pub digests: Vec<LinkDigest>,
}

/// Decodes `%xx` escapes (either case); `+` stays `+`. `None` on a broken escape.
pub fn url_decode(text: &[u8]) -> Option<Vec<u8>> {
    let mut out = Vec::with_capacity(text.len());
    let mut i = 0;
    while i < text.len() {
        if text[i] == b'%' {
            let hex = text.get(i + 1..i + 3)?;
            let v = u8::from_str_radix(std::str::from_utf8(hex).ok()?, 16).ok()?;
            if !hex.iter().all(u8::is_ascii_hexdigit) {
                return None;
            }
            out.push(v);
            i += 3;
        } else {
            out.push(text[i]);
            i += 1;
        }
    }
    Some(out)
}

/// Decodes a digest written in any of rhash's encodings for an algorithm producing `len`
/// bytes: hex, base32 (either case) or base64, told apart by the text's length.
pub fn decode_digest(text: &[u8], len: usize) -> Option<Digest> {
    crate::digest::DigestText::new(text)?.decode(len, crate::digest::Encoding::Hex)
}

/// Decodes a digest whose length is unknown: hex if it is hex, else base32, else base64.
fn decode_any(text: &[u8]) -> Option<Digest> {
    Digest::from_hex(text)
        .or_else(|| Digest::from_base32(text))
        .or_else(|| Digest::from_base64(text))
}

fn link_digest(name: &[u8], text: &[u8]) -> Option<LinkDigest> {
    let row = by_urn(name);
    let algo = row.and_then(RhashAlgo::algorithm);
    let digest = match (algo, row) {
        (Some(a), _) => decode_digest(text, a.len)?,
        (None, Some(r)) => decode_digest(text, r.len)?,
        (None, None) => decode_any(text)?,
    };
    Some(LinkDigest { algo, name: String::from_utf8_lossy(name).into_owned(), digest })
}

/// Parses a magnet link as rhash writes them: `magnet:?xl=SIZE&dn=NAME&xt=urn:ALGO:DIGEST...`
/// (parameters in any order; unknown ones are skipped). `None` unless it has a name and at
/// least one digest.
pub fn parse_magnet(line: &[u8]) -> Option<Link> {
    let line = trim(line);
    let query = line.strip_prefix(b"magnet:?")?;
    let (mut name, mut size, mut digests) = (None, None, Vec::new());
    for param in query.split(|&b| b == b'&') {
        let eq = param.iter().position(|&b| b == b'=')?;
        let (key, value) = (&param[..eq], &param[eq + 1..]);
        match key {
            b"dn" => name = Some(url_decode(value)?),
            b"xl" => size = Some(parse_u64(value)?),
            b"xt" => {
                let urn = value.strip_prefix(b"urn:")?;
                let colon = urn.iter().rposition(|&b| b == b':')?;
                digests.push(link_digest(&urn[..colon], &urn[colon + 1..])?);
            }
            _ => {}
        }
    }
    let name = name.filter(|n| !n.is_empty())?;
    if digests.is_empty() {
        return None;
    }
    Some(Link { name, size, digests })
}

/// Parses `ed2k://|file|NAME|SIZE|ED2K|` with optional `h=AICH|` and a final `/`.
pub fn parse_ed2k_link(line: &[u8]) -> Option<Link> {
    let line = trim(line);
    let rest = line.strip_prefix(b"ed2k://|file|")?;
    let fields: Vec<&[u8]> = rest.split(|&b| b == b'|').collect();
    // NAME, SIZE, HASH, then optional fields, ending with "/" (or nothing).
    let [name, size, hash, tail @ ..] = fields.as_slice() else { return None };
    let name = url_decode(name)?;
    if name.is_empty() || !matches!(tail.last(), Some(&b"/") | Some(&b"")) {
        return None;
    }
    let mut digests = vec![link_digest(b"ed2k", hash)?];
    for field in &tail[..tail.len() - 1] {
        if let Some(aich) = field.strip_prefix(b"h=") {
            digests.push(link_digest(b"aich", aich)?);
        }
    }
    Some(Link { name, size: Some(parse_u64(size)?), digests })
}

/// A magnet or ed2k link, whichever `line` is.
pub fn parse_link(line: &[u8]) -> Option<Link> {
    parse_magnet(line).or_else(|| parse_ed2k_link(line))
}

/// A `--simple` (or default, several-algorithm) line: `name  d1  d2 ...`, or `digest  name`
/// for one algorithm, or rhash's SFV `name D1 D2`. The digests are kept as text: which
/// algorithm each is depends on the algorithms asked for (rhash order, see
/// [`sort_rhash_order`]), which the caller knows and the line does not.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SimpleLine {
    pub name: Vec<u8>,
    pub digests: Vec<Vec<u8>>,
}

fn is_digest_text(t: &[u8]) -> bool {
    t.len() >= 8
        && t.iter().all(|&b| b.is_ascii_alphanumeric() || b == b'+' || b == b'/' || b == b'=')
}

/// Parses a multi-digest line with `count` digests: `name  d1  d2` (two spaces, as
/// `--simple` writes) or `name D1 D2` (one space, `--sfv`), the digests being the last
/// `count` fields; `count == 1` also accepts `digest  name`. Digests are hex, base32 or
/// base64 text.
pub fn parse_simple(line: &[u8], count: usize) -> Option<SimpleLine> {
    let line = trim_end(line);
    if count == 0 || line.is_empty() {
        return None;
    }
    if count == 1
        && let Some(sp) = line.windows(2).position(|w| w == b"  ")
        && is_digest_text(&line[..sp])
        && sp + 2 < line.len()
    {
        return Some(SimpleLine {
            name: line[sp + 2..].to_vec(),
            digests: vec![line[..sp].to_vec()],
        });
    }
    let mut end = line.len();
    let mut digests = Vec::with_capacity(count);
    for _ in 0..count {
        let sp = line[..end].iter().rposition(|&b| b == b' ')?;
        let field = &line[sp + 1..end];
        if !is_digest_text(field) {
            return None;
        }
        digests.push(field.to_vec());
        end = sp;
        // Two spaces (`--simple`) or one (`--sfv`) before each digest.
        if end > 0 && line[end - 1] == b' ' {
            end -= 1;
        }
    }
    digests.reverse();
    let name = &line[..end];
    if name.is_empty() {
        return None;
    }
    Some(SimpleLine { name: name.to_vec(), digests })
}

fn parse_u64(text: &[u8]) -> Option<u64> {
    if text.is_empty() || !text.iter().all(u8::is_ascii_digit) {
        return None;
    }
    std::str::from_utf8(text).ok()?.parse().ok()
}

fn trim_end(s: &[u8]) -> &[u8] {
    let s = s.strip_suffix(b"\r").unwrap_or(s);
    let n = s.iter().rev().take_while(|&&b| b == b' ' || b == b'\t').count();
    &s[..s.len() - n]
}

fn trim(s: &[u8]) -> &[u8] {
    let s = trim_end(s);
    let n = s.iter().take_while(|&&b| b == b' ' || b == b'\t').count();
    &s[n..]
}

// ------------------------------------------------------------------ embedded CRC32

/// The CRC32 embedded in a file name, as `rhash -k` finds it: the last `[XXXXXXXX]` or
/// `(XXXXXXXX)` (eight hex digits, either case) in the name's last component.
pub fn embedded_crc(path: &[u8]) -> Option<u32> {
    let name = file_name(path);
    (0..name.len().saturating_sub(9)).rev().find_map(|i| {
        let w = &name[i..i + 10];
        let closing = match w[0] {
            b'[' => b']',
            b'(' => b')',
            _ => return None,
        };
        if w[9] != closing || !w[1..9].iter().all(u8::is_ascii_hexdigit) {
            return None;
        }
        u32::from_str_radix(std::str::from_utf8(&w[1..9]).ok()?, 16).ok()
    })
}

/// The name `rhash -e` renames a file to: ` [CRC32]` (uppercase hex) inserted before the
/// last extension of the last component, or appended when it has none. `None` when the
/// name already carries a CRC32.
pub fn embed_crc(path: &[u8], crc: u32, delimiter: &[u8]) -> Option<Vec<u8>> {
    if embedded_crc(path).is_some() {
        return None;
    }
    let start = path.len() - file_name(path).len();
    let name = &path[start..];
    let dot =
        name.iter().rposition(|&b| b == b'.').filter(|&i| i > 0).map_or(path.len(), |i| start + i);
    let mut out = path[..dot].to_vec();
    out.extend_from_slice(delimiter);
    out.extend_from_slice(format!("[{crc:08X}]").as_bytes());
    out.extend_from_slice(&path[dot..]);
    Some(out)
}

#[cfg(test)]
mod tests;
