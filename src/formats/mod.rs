//! Manifest formats: one file per format, each with its writer (a [`ManifestWriter`]) and
//! its line parser.
//! `parse_line` tries them in a fixed order; [`Manifest`] carries the per-file state
//! that coreutils keeps while reading one checksum file.

pub mod b3sum;
pub mod bagit;
pub mod bsd;
pub mod cfv_csv;
pub mod cksum;
pub mod cloud;
pub mod coreutils;
pub(crate) mod gnu;
pub mod hashdeep;
pub mod json;
pub mod rhash;
pub(crate) mod sfv;
pub mod template;
pub(crate) mod writer;
pub mod xxhsum;

pub use writer::{
    FileEntry, Invocation, ManifestWriter, OutputFormat, Refusal, Stdin, Unwritable, WriteOptions,
};

use crate::algo::{self, Algorithm};
use crate::digest::{Digest, DigestText, Encoding};

/// The format a parsed line was in (what [`Record::format`] says; the formats fixity
/// writes are [`OutputFormat`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Format {
    /// `digest  name` (coreutils `*sum`), `*` marking binary mode.
    Gnu,
    /// `TAG (name) = digest` (coreutils `--tag`, BSD `md5`).
    Bsd,
    /// `name CRC32` with `;` comments (cksfv, cfv, rhash --sfv).
    Sfv,
    /// hashdeep's `size,digest,...,name` under its `%%%%` header.
    Hashdeep,
    /// cfv's `.csv`: `name,size,crc32,`.
    CfvCsv,
    /// rhash's magnet and ed2k links (`magnet:?xl=..&dn=..&xt=urn:..`, `ed2k://|file|..`).
    Link,
    /// rhash's lines with several digests: `name  d1  d2` (`--simple`), `name D1 D2` (`--sfv`).
    Multi,
    /// POSIX `cksum`'s `CRC SIZE name` (read from manifests named `*.cksum`).
    Cksum,
}

/// The text of `digest` as fixity writes it for `algo`: the algorithm's own encoding unless
/// `forced`; base32 in lowercase, as rhash writes TTH and AICH in its manifests.
pub(crate) fn digest_text(algo: &Algorithm, digest: &Digest, forced: Option<Encoding>) -> String {
    match forced.unwrap_or(algo.encoding) {
        Encoding::Base32 => digest.to_base32().to_ascii_lowercase(),
        e => digest.encode(e),
    }
}

/// One parsed checksum line.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Record {
    /// The algorithm the line names (BSD tag, `XXH3_` prefix, SFV), if it names one.
    pub algo: Option<&'static Algorithm>,
    /// The expected digest, as written (decoded once the algorithm is known).
    pub digest: DigestText,
    /// The file name, unescaped.
    pub name: Vec<u8>,
    /// Which format the line was in.
    pub format: Format,
    /// The file's size, where the format records one (hashdeep, magnet and ed2k links).
    pub size: Option<u64>,
    /// Further digests of the same file (hashdeep's columns, rhash lines with several).
    pub more: Vec<(Option<&'static Algorithm>, DigestText)>,
}

impl Record {
    /// A record with one digest and no size.
    pub(crate) fn new(
        algo: Option<&'static Algorithm>,
        digest: DigestText,
        name: Vec<u8>,
        format: Format,
    ) -> Record {
        Record { algo, digest, name, format, size: None, more: Vec::new() }
    }
}

/// A digest token of a checksum line: hex of any even length, an S3 ETag (`hex-N`), or
/// base32/base64 of at least 12 characters whose decoded length is some algorithm's (so
/// that a word is not taken for a digest).
pub(crate) fn digest_token(text: &[u8]) -> Option<DigestText> {
    let t = DigestText::new(text)?;
    if text.len().is_multiple_of(2) && text.iter().all(u8::is_ascii_hexdigit) {
        return Some(t);
    }
    // An S3 ETag of a multipart upload: `hex-N`.
    if t.decode_as(Encoding::S3Etag).is_some() {
        return Some(t);
    }
    if text.len() < 12 {
        return None;
    }
    let fits = |e: Encoding| {
        t.decode_as(e).is_some_and(|d| algo::by_len(d.as_bytes().len()).next().is_some())
    };
    (fits(Encoding::Base32) || fits(Encoding::Base64)).then_some(t)
}

/// A line's file name as coreutils 9.1 reads it: unescaped if the line starts with `\`
/// (then a NUL makes the line improperly formatted), otherwise up to its first NUL.
pub(crate) fn name_text(name: &[u8], escaped: bool) -> Option<Vec<u8>> {
    if escaped {
        if name.contains(&0) {
            return None;
        }
        return crate::pathtext::unescape(name);
    }
    Some(name.iter().position(|&b| b == 0).map_or(name, |n| &name[..n]).to_vec())
}

/// The digest `text` holds for `algo`, in the algorithm's own encoding or any other that
/// the text's length allows.
pub fn decode_for(text: &DigestText, algo: &Algorithm) -> Option<Digest> {
    text.decode(algo.len, algo.encoding)
}

/// Why a line is not a checksum line.
#[derive(Clone, Debug, PartialEq, Eq)]
// A record is built for nearly every line and consumed at once: boxing it would add an
// allocation per line for nothing.
#[allow(clippy::large_enum_variant)]
pub enum LineKind {
    /// A checksum line.
    Record(Record),
    /// A blank line or a comment (`#`, or `;` in SFV): skipped silently, as coreutils does.
    Ignored,
    /// Not in any known format.
    Malformed,
}

/// Per-manifest parsing state. Every line is parsed on its own (a manifest may mix
/// formats), with what earlier lines established: coreutils remembers whether the file
/// uses the GNU two-space form or BSD `md5 -r`'s one-space form and refuses to mix them; a
/// hashdeep column line says what the following `size,digest,...,name` lines hold.
#[derive(Clone, Debug, Default)]
pub struct Manifest {
    /// Parse as SFV first (from the `.sfv` name or a leading `;` comment).
    pub sfv: bool,
    /// Parse as cfv `.csv` first (from the `.csv` name).
    pub csv: bool,
    /// Parse as POSIX `cksum` output, `CRC SIZE name` (from the `.cksum` name). Nothing
    /// else in such a file is a checksum line: a line that is not one is malformed.
    pub cksum: bool,
    reversed: Option<bool>,
    seen_line: bool,
    /// hashdeep's digest columns, once its `%%%% size,...,filename` line has been read.
    columns: Option<Vec<&'static Algorithm>>,
    problem: Option<String>,
}

impl Manifest {
    /// State for a manifest whose name hints at SFV.
    pub fn new(sfv: bool) -> Manifest {
        Manifest { sfv, ..Manifest::default() }
    }

    /// State for a manifest with the given file name (`.sfv`, `.csv` and `.cksum` decide
    /// which format is tried first).
    pub fn for_name(name: &[u8]) -> Manifest {
        let lower = name.to_ascii_lowercase();
        Manifest {
            sfv: lower.ends_with(b".sfv"),
            csv: lower.ends_with(b".csv"),
            cksum: lower.ends_with(b".cksum"),
            ..Manifest::default()
        }
    }

    /// Which form the untagged lines read so far chose: `Some(true)` for BSD `md5 -r`'s
    /// one space, `Some(false)` for GNU's two (or ` *`), `None` before any.
    pub(crate) fn form(&self) -> Option<bool> {
        self.reversed
    }

    /// Starts from the form an earlier manifest of the same run chose: coreutils keeps it
    /// from one checksum file to the next.
    pub(crate) fn with_form(mut self, form: Option<bool>) -> Manifest {
        self.set_form(form);
        self
    }

    /// Sets the form back (to what it was before a line that turned out malformed).
    pub(crate) fn set_form(&mut self, form: Option<bool>) {
        self.reversed = form;
    }

    /// Why the last line parsed was [`LineKind::Malformed`], when a format recognized it
    /// but found something wrong (`unknown column 'crc'`).
    pub(crate) fn problem(&self) -> Option<&str> {
        self.problem.as_deref()
    }

    /// Parses one line (without its terminator; a trailing CR is removed here).
    pub fn parse_line(&mut self, line: &[u8]) -> LineKind {
        self.problem = None;
        let line = line.strip_suffix(b"\r").unwrap_or(line);
        let first = !std::mem::replace(&mut self.seen_line, true);
        if line.starts_with(b"%%%%") {
            return match hashdeep::parse_header(line) {
                Ok(Some(columns)) => {
                    self.columns = Some(columns);
                    LineKind::Ignored
                }
                Ok(None) if line == hashdeep::MAGIC => LineKind::Ignored,
                Ok(None) => self.malformed("a '%%%%' line that is not hashdeep's".into()),
                Err(e) => self.malformed(e),
            };
        }
        let trimmed = trim_start(line);
        if trimmed.is_empty() || trimmed[0] == b'#' {
            return LineKind::Ignored;
        }
        if let Some(columns) = &self.columns {
            match hashdeep::parse_line(columns, line) {
                Ok(r) => return LineKind::Record(hashdeep_record(r)),
                Err(e) => self.problem = Some(format!("hashdeep line: {e}")),
            }
        }
        if trimmed.starts_with(b"magnet:?") || trimmed.starts_with(b"ed2k://") {
            let link = if trimmed.starts_with(b"magnet:?") {
                rhash::parse_magnet(trimmed)
            } else {
                rhash::parse_ed2k_link(trimmed)
            };
            return match link {
                Some(link) => self.link_record(link),
                None => self.malformed("a magnet or ed2k link without a name or digest".into()),
            };
        }
        if self.csv {
            return match cfv_csv::parse_line(line) {
                Some(r) => LineKind::Record(csv_record(r)),
                None => self.malformed("not a cfv .csv line (name,size,crc32,)".into()),
            };
        }
        // A .cksum list holds what `cksum` writes: `CRC SIZE NAME` lines, or with `-a ALG`
        // tagged lines (`SHA256 (a) = ...`), which the BSD reader below takes.
        if self.cksum && bsd::parse(trimmed).is_none() {
            return match cksum::parse_line(cksum::Shape::Crc, line) {
                Some(l) if l.name.is_empty() => self.malformed(
                    "a cksum line without a name (standard input) cannot be checked".into(),
                ),
                Some(l) => LineKind::Record(Record {
                    algo: algo::lookup("cksum"),
                    digest: hex_text(&l.digest),
                    name: l.name,
                    format: Format::Cksum,
                    size: Some(l.count),
                    more: Vec::new(),
                }),
                None => self.malformed("not a cksum line (CRC SIZE NAME)".into()),
            };
        }
        if trimmed[0] == b';' && (self.sfv || first) {
            self.sfv = true;
            return LineKind::Ignored;
        }
        if self.sfv
            && let Some(r) = sfv::parse(line)
        {
            return LineKind::Record(r);
        }
        if let Some(r) = bsd::parse(trimmed) {
            return LineKind::Record(r);
        }
        if let Some(r) = gnu::parse(trimmed, &mut self.reversed) {
            return LineKind::Record(r);
        }
        if let Some(r) = sfv::parse(line) {
            return LineKind::Record(r);
        }
        if let Some(r) = cfv_csv::parse_line(line) {
            return LineKind::Record(csv_record(r));
        }
        if let Some(r) = multi_record(line) {
            return LineKind::Record(r);
        }
        LineKind::Malformed
    }

    fn link_record(&mut self, link: rhash::Link) -> LineKind {
        let mut sums = link.digests.iter().filter(|d| d.algo.is_some());
        let Some(first) = sums.next() else {
            return self.malformed("a link whose digests are all of unknown algorithms".into());
        };
        LineKind::Record(Record {
            algo: first.algo,
            digest: hex_text(&first.digest),
            name: link.name,
            format: Format::Link,
            size: link.size,
            more: sums.map(|d| (d.algo, hex_text(&d.digest))).collect(),
        })
    }

    fn malformed(&mut self, why: String) -> LineKind {
        self.problem = Some(why);
        LineKind::Malformed
    }
}

fn hex_text(d: &Digest) -> DigestText {
    DigestText::new(d.to_hex().as_bytes()).expect("hex is a digest text")
}

fn hashdeep_record(r: hashdeep::FileRecord) -> Record {
    let mut sums = r.digests.iter();
    let (first, d) = sums.next().expect("hashdeep lines have a digest column");
    Record {
        algo: Some(*first),
        digest: hex_text(d),
        name: r.name,
        format: Format::Hashdeep,
        size: Some(r.size),
        more: sums.map(|(a, d)| (Some(*a), hex_text(d))).collect(),
    }
}

/// rhash's `name  d1  d2 ...` (or `name D1 D2` in its SFV): two or more digest fields at the
/// end of the line. Which algorithm each is, the line does not say (`-a md5,sha1` does).
fn multi_record(line: &[u8]) -> Option<Record> {
    let fields: Vec<&[u8]> = line.rsplit(|&b| b == b' ').filter(|f| !f.is_empty()).collect();
    let count = fields.iter().take_while(|f| digest_token(f).is_some()).count();
    if count < 2 {
        return None;
    }
    // Leave at least one field for the name.
    let count = count.min(fields.len() - 1);
    let parsed = (2..=count).rev().find_map(|n| rhash::parse_simple(line, n))?;
    let mut texts = parsed.digests.iter().map(|t| digest_token(t));
    let first = texts.next()??;
    let more: Option<Vec<_>> = texts.map(|t| t.map(|t| (None, t))).collect();
    Some(Record {
        algo: None,
        digest: first,
        name: parsed.name,
        format: Format::Multi,
        size: None,
        more: more?,
    })
}

fn csv_record(r: cfv_csv::CsvRecord) -> Record {
    Record {
        algo: Some(cfv_csv::algorithm()),
        digest: hex_text(&r.digest),
        name: r.name,
        format: Format::CfvCsv,
        size: Some(r.size),
        more: Vec::new(),
    }
}

fn trim_start(s: &[u8]) -> &[u8] {
    let n = s.iter().take_while(|&&b| b == b' ' || b == b'\t').count();
    &s[n..]
}

/// Parses one line with fresh state.
#[cfg(test)]
pub(crate) fn parse_line(line: &[u8]) -> LineKind {
    Manifest::default().parse_line(line)
}

#[cfg(test)]
mod tests;
