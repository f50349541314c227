//! BSD tag format: `TAG (name) = digest`, as `sha256sum --tag`, BSD `md5`, `b3sum --tag`,
//! `xxhsum --tag` and `rhash --bsd` write it. Escaping follows coreutils: a name holding
//! `\`, LF or CR is escaped and the line starts with `\`.

use super::{Format, Record, WriteOptions};
use crate::algo::{self, Algorithm};
use crate::digest::Digest;
use crate::pathtext::{escape_into, needs_escape, unescape};

/// Appends `TAG (name) = digest`.
pub fn write(
    opts: WriteOptions,
    algo: &Algorithm,
    digest: &Digest,
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
    out.extend_from_slice(digest.to_hex().as_bytes());
    out.push(if opts.zero { 0 } else { b'\n' });
}

/// Parses a tagged line (leading blanks already removed). The name may itself hold
/// `) = `, so the digest is split off from the right.
pub fn parse(line: &[u8]) -> Option<Record> {
    let (escaped, line) = match line.strip_prefix(b"\\") {
        Some(rest) => (true, rest),
        None => (false, line),
    };
    let open = line.iter().position(|&b| b == b'(')?;
    let tag = std::str::from_utf8(&line[..open]).ok()?.trim_end_matches(' ');
    if tag.is_empty() || tag.contains(' ') {
        return None;
    }
    let algo = algo::by_tag(tag)?;
    let rest = &line[open + 1..];
    let close = rest.windows(2).rposition(|w| w == b")=" || w == b") ")?;
    let after = &rest[close + 1..];
    let after = after.strip_prefix(b" ").unwrap_or(after);
    let after = after.strip_prefix(b"=")?;
    let hex = after.strip_prefix(b" ").unwrap_or(after);
    if hex.len() != algo.hex_len() {
        return None;
    }
    let digest = Digest::from_hex(hex)?;
    let name = &rest[..close];
    let name = if escaped { unescape(name)? } else { name.to_vec() };
    Some(Record { algo: Some(algo), digest, name, format: Format::Bsd })
}
