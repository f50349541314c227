//! Reading what `rhash -c` reads that the other formats do not cover: magnet and ed2k
//! links, multi-digest `--simple` lines, and digests in any of rhash's encodings.

use super::by_urn;
use crate::algo::Algorithm;
use crate::digest::Digest;

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
    let algo = by_urn(name);
    let digest = match algo {
        Some(a) => decode_digest(text, a.len)?,
        None => decode_any(text)?,
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
/// `sort_rhash_order`), which the caller knows and the line does not.
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
