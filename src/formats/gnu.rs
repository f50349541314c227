//! GNU coreutils format: `digest  name` (text mode) or `digest *name` (binary mode). A name
//! holding `\`, LF or CR is escaped and the line starts with `\`. Also reads BSD
//! `md5 -r`'s `digest name`, xxhsum's `XXH3_digest  name`, digests in base32 or base64
//! (`rhash --simple --base32`, `cksum --base64 --untagged`) and S3 ETags (`hex-N`).

use super::writer::{FileEntry, ManifestWriter, Unwritable, WriteOptions};
use super::{Format, Record};
use crate::algo;
use crate::pathtext::{escape_into, needs_escape};

/// Appends `text  name` (or `text *name`): the digest already encoded.
pub(crate) fn write_text(opts: &WriteOptions, text: &[u8], name: &[u8], out: &mut Vec<u8>) {
    let escape = !opts.zero && needs_escape(name);
    if escape {
        out.push(b'\\');
    }
    out.extend_from_slice(text);
    out.extend_from_slice(if opts.binary { b" *" } else { b"  " });
    if escape {
        escape_into(name, out);
    } else {
        out.extend_from_slice(name);
    }
    out.push(if opts.zero { 0 } else { b'\n' });
}

/// Parses a GNU line (leading blanks already removed). `reversed` is the manifest's
/// memory of which separator style it uses.
pub(crate) fn parse(line: &[u8], reversed: &mut Option<bool>) -> Option<Record> {
    let (escaped, line) = match line.strip_prefix(b"\\") {
        Some(rest) => (true, rest),
        None => (false, line),
    };
    let (algo, line) = match line.strip_prefix(b"XXH3_") {
        Some(rest) => (algo::lookup("xxh3"), rest),
        None => (None, line),
    };
    let token_len = line
        .iter()
        .take_while(|&&b| b.is_ascii_alphanumeric() || matches!(b, b'+' | b'/' | b'=' | b'-'))
        .count();
    let digest = super::digest_token(&line[..token_len])?;
    let rest = &line[token_len..];
    if rest.first().is_none_or(|&b| b != b' ' && b != b'\t') {
        return None;
    }
    let rest = &rest[1..];
    // `DIGEST ` alone is shorter than coreutils' shortest line (digest, two blanks, a
    // name): improperly formatted before the form is looked at, so it decides nothing.
    if rest.is_empty() {
        return None;
    }
    // In a manifest of one-space lines (BSD `md5 -r`), everything after the separator is
    // the name, a leading space or `*` included, as coreutils reads it.
    let name = if rest.len() >= 2 && (rest[0] == b' ' || rest[0] == b'*') && *reversed != Some(true)
    {
        *reversed = Some(false);
        &rest[1..]
    } else {
        // One separator: BSD `md5 -r`. coreutils refuses to mix it with the GNU form, so a
        // renamed file with a leading space cannot change what a line means.
        if *reversed == Some(false) {
            return None;
        }
        *reversed = Some(true);
        rest
    };
    // An empty name (`DIGEST  ` then a NUL) is a name, as coreutils takes it: the file ''
    // cannot be read, and the line has chosen the two-space form.
    let name = super::name_text(name, escaped)?;
    Some(Record::new(algo, digest, name, Format::Gnu))
}

/// Whether the digest a GNU line (leading blanks already removed) starts with is one of
/// `algo`'s. coreutils looks at the form only after the digest has the tool's length.
pub(crate) fn digest_fits(line: &[u8], algo: &crate::algo::Algorithm) -> bool {
    let line = line.strip_prefix(b"\\").unwrap_or(line);
    let token_len = line
        .iter()
        .take_while(|&&b| b.is_ascii_alphanumeric() || matches!(b, b'+' | b'/' | b'=' | b'-'))
        .count();
    super::digest_token(&line[..token_len]).is_some_and(|t| super::decode_for(&t, algo).is_some())
}

/// The `gnu` format's writer: `digest  name` for one algorithm; several algorithms switch
/// to BSD tag lines (which `-b` does not mark), one per algorithm.
pub(crate) struct GnuWriter {
    algos: Vec<&'static crate::algo::Algorithm>,
    opts: WriteOptions,
}

impl GnuWriter {
    pub(crate) fn new(algos: Vec<&'static crate::algo::Algorithm>, opts: WriteOptions) -> Self {
        GnuWriter { algos, opts }
    }
}

impl ManifestWriter for GnuWriter {
    fn algorithms(&self) -> &[&'static crate::algo::Algorithm] {
        &self.algos
    }

    fn record(&mut self, file: &FileEntry, out: &mut Vec<u8>) -> Result<(), Unwritable> {
        let enc = self.opts.encoding;
        if let ([a], [d]) = (self.algos.as_slice(), file.digests) {
            write_text(&self.opts, super::digest_text(a, d, enc).as_bytes(), file.name, out);
        } else {
            let opts = WriteOptions { binary: false, ..self.opts.clone() };
            for (a, d) in self.algos.iter().zip(file.digests) {
                let text = super::digest_text(a, d, enc);
                super::bsd::write_text(&opts, a, text.as_bytes(), file.name, out);
            }
        }
        Ok(())
    }
}
