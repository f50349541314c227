//! BSD tag format: `TAG (name) = digest`, as `sha256sum --tag`, BSD `md5`, `b3sum --tag`,
//! `xxhsum --tag` and `rhash --bsd` write it. Escaping follows coreutils: a name holding
//! `\`, LF or CR is escaped and the line starts with `\`.

use super::writer::{FileEntry, ManifestWriter, Unwritable, WriteOptions};
use super::{Format, Record};
use crate::algo::{self, Algorithm};
use crate::digest::DigestText;
use crate::pathtext::{escape_into, needs_escape};

/// Appends `TAG (name) = text`: the digest already encoded.
pub(crate) fn write_text(
    opts: &WriteOptions,
    algo: &Algorithm,
    text: &[u8],
    name: &[u8],
    out: &mut Vec<u8>,
) {
    let escape = !opts.zero && needs_escape(name);
    if escape {
        out.push(b'\\');
    }
    out.extend_from_slice(algo.tag.as_bytes());
    out.extend_from_slice(b" (");
    if escape {
        escape_into(name, out);
    } else {
        out.extend_from_slice(name);
    }
    out.extend_from_slice(b") = ");
    out.extend_from_slice(text);
    out.push(if opts.zero { 0 } else { b'\n' });
}

/// Parses a tagged line (leading blanks already removed); the digest may be hex, base32
/// or base64 (`cksum --base64`), told apart by its length. The name may itself hold
/// `) = `, so the digest is split off from the right.
pub fn parse(line: &[u8]) -> Option<Record> {
    let (escaped, line) = match line.strip_prefix(b"\\") {
        Some(rest) => (true, rest),
        None => (false, line),
    };
    // As coreutils reads it: the tag, at most one space, `(`, the name up to the last `)`,
    // blanks, `=`, blanks, the digest (up to a NUL: coreutils reads a C string).
    let open = line.iter().position(|&b| b == b'(')?;
    let tag = &line[..open];
    let tag = std::str::from_utf8(tag.strip_suffix(b" ").unwrap_or(tag)).ok()?;
    if tag.is_empty() || tag.contains(' ') {
        return None;
    }
    let algo = algo::by_tag(tag)?;
    let rest = &line[open + 1..];
    let close = rest.iter().rposition(|&b| b == b')')?;
    let blank = |b: &u8| *b == b' ' || *b == b'\t';
    let after = &rest[close + 1..];
    let after = &after[after.iter().take_while(|b| blank(b)).count()..];
    let after = after.strip_prefix(b"=")?;
    let text = &after[after.iter().take_while(|b| blank(b)).count()..];
    let text = text.iter().position(|&b| b == 0).map_or(text, |n| &text[..n]);
    let digest = DigestText::new(text)?;
    super::decode_for(&digest, algo)?;
    let name = super::name_text(&rest[..close], escaped)?;
    Some(Record::new(Some(algo), digest, name, Format::Bsd))
}

/// The `bsd` format's writer: `TAG (name) = digest`, one line per algorithm.
pub(crate) struct BsdWriter {
    algos: Vec<&'static Algorithm>,
    opts: WriteOptions,
}

impl BsdWriter {
    pub(crate) fn new(algos: Vec<&'static Algorithm>, opts: WriteOptions) -> Self {
        BsdWriter { algos, opts: WriteOptions { binary: false, ..opts } }
    }
}

impl ManifestWriter for BsdWriter {
    fn algorithms(&self) -> &[&'static Algorithm] {
        &self.algos
    }

    fn record(&mut self, file: &FileEntry, out: &mut Vec<u8>) -> Result<(), Unwritable> {
        for (a, d) in self.algos.iter().zip(file.digests) {
            let text = super::digest_text(a, d, self.opts.encoding);
            write_text(&self.opts, a, text.as_bytes(), file.name, out);
        }
        Ok(())
    }
}
