//! Manifest formats: one file per format, each with its writer and its line parser.
//! [`parse_line`] tries them in a fixed order; [`Manifest`] carries the per-file state
//! that coreutils keeps while reading one checksum file.

pub mod bsd;
pub mod gnu;
pub mod json;
pub mod rhash;
pub mod sfv;
pub mod template;

use crate::algo::Algorithm;
use crate::digest::Digest;

/// A text manifest format.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Format {
    /// `digest  name` (coreutils `*sum`), `*` marking binary mode.
    Gnu,
    /// `TAG (name) = digest` (coreutils `--tag`, BSD `md5`).
    Bsd,
    /// `name CRC32` with `;` comments (cksfv, cfv, rhash --sfv).
    Sfv,
}

/// Options that change how lines are written.
#[derive(Clone, Copy, Debug, Default)]
pub struct WriteOptions {
    /// Mark names with `*` (GNU format, `-b`).
    pub binary: bool,
    /// End records with NUL instead of newline and never escape names (`-z`).
    pub zero: bool,
}

/// Appends one record to `out` in `format`.
pub fn write_record(
    format: Format,
    opts: WriteOptions,
    algo: &Algorithm,
    digest: &Digest,
    name: &[u8],
    out: &mut Vec<u8>,
) {
    match format {
        Format::Gnu => gnu::write(opts, digest, name, out),
        Format::Bsd => bsd::write(opts, algo, digest, name, out),
        Format::Sfv => sfv::write(opts, digest, name, out),
    }
}

/// One parsed checksum line.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Record {
    /// The algorithm the line names (BSD tag, `XXH3_` prefix, SFV), if it names one.
    pub algo: Option<&'static Algorithm>,
    /// The expected digest.
    pub digest: Digest,
    /// The file name, unescaped.
    pub name: Vec<u8>,
    /// Which format the line was in.
    pub format: Format,
}

/// Why a line is not a checksum line.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum LineKind {
    /// A checksum line.
    Record(Record),
    /// A blank line or a comment (`#`, or `;` in SFV): skipped silently, as coreutils does.
    Ignored,
    /// Not in any known format.
    Malformed,
}

/// Per-manifest parsing state (coreutils remembers whether the file uses the GNU two-space
/// form or BSD `md5 -r`'s one-space form, and refuses to mix them).
#[derive(Clone, Debug, Default)]
pub struct Manifest {
    /// Parse as SFV first (from the `.sfv` name or a leading `;` comment).
    pub sfv: bool,
    reversed: Option<bool>,
    seen_line: bool,
}

impl Manifest {
    /// State for a manifest whose name hints at SFV.
    pub fn new(sfv: bool) -> Manifest {
        Manifest { sfv, ..Manifest::default() }
    }

    /// Parses one line (without its terminator; a trailing CR is removed here).
    pub fn parse_line(&mut self, line: &[u8]) -> LineKind {
        let line = line.strip_suffix(b"\r").unwrap_or(line);
        let first = !std::mem::replace(&mut self.seen_line, true);
        let trimmed = trim_start(line);
        if trimmed.is_empty() || trimmed[0] == b'#' {
            return LineKind::Ignored;
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
        LineKind::Malformed
    }
}

fn trim_start(s: &[u8]) -> &[u8] {
    let n = s.iter().take_while(|&&b| b == b' ' || b == b'\t').count();
    &s[n..]
}

/// Parses one line with fresh state (tests and one-off uses).
pub fn parse_line(line: &[u8]) -> LineKind {
    Manifest::default().parse_line(line)
}

#[cfg(test)]
mod tests;
