//! BagIt's text forms (RFC 8493): manifest lines (`digest path`, the path percent-encoded),
//! tag files (`Label: value`), Payload-Oxum, manifest names and which algorithm they name.
//! The bag itself (create, check) is [`crate::bagit`].

use crate::algo::{self, Algorithm};
use crate::digest::Digest;

/// Percent-encodes LF, CR and `%` in a manifest path (RFC 8493 §2.1.3).
pub fn encode_path(name: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(name.len());
    for &b in name {
        match b {
            b'%' => out.extend_from_slice(b"%25"),
            b'\n' => out.extend_from_slice(b"%0A"),
            b'\r' => out.extend_from_slice(b"%0D"),
            _ => out.push(b),
        }
    }
    out
}

/// Decodes `%0A`, `%0D` and `%25` (either case); any other `%` stays as it is. Bags
/// before BagIt 1.0 (`percent: false`) encoded only LF and CR: `%25` stays as it is there
/// (bagit-python 1.9 still writes 0.97 bags, with `%` unencoded).
pub(crate) fn decode_path_version(text: &[u8], percent: bool) -> Vec<u8> {
    let mut out = Vec::with_capacity(text.len());
    let mut i = 0;
    while i < text.len() {
        if text[i] == b'%' {
            let code = text.get(i + 1..i + 3).map(|c| c.to_ascii_uppercase());
            let decoded = match code.as_deref() {
                Some(b"25") if percent => Some(b'%'),
                Some(b"0A") => Some(b'\n'),
                Some(b"0D") => Some(b'\r'),
                _ => None,
            };
            if let Some(d) = decoded {
                out.push(d);
                i += 3;
                continue;
            }
        }
        out.push(text[i]);
        i += 1;
    }
    out
}

/// Decodes a BagIt 1.0 manifest path: `%0A`, `%0D` and `%25`.
pub fn decode_path(text: &[u8]) -> Vec<u8> {
    decode_path_version(text, true)
}

/// Why a manifest path may not be used: it is empty, absolute, or has a `..` (or empty
/// or `.`) component, so it could name something outside the bag.
pub fn unsafe_path(path: &[u8]) -> Option<&'static str> {
    if path.is_empty() {
        return Some("the path is empty");
    }
    if path[0] == b'/' {
        return Some("the path is absolute");
    }
    for c in path.split(|&b| b == b'/') {
        match c {
            b".." => return Some("the path climbs out with '..'"),
            b"" | b"." => return Some("the path has an empty or '.' component"),
            _ => {}
        }
    }
    None
}

/// Parses one manifest line, `digest<whitespace>path`, for `algo`. The path is decoded
/// (as BagIt 1.0 says) but not otherwise checked (see [`unsafe_path`]). A trailing CR is
/// dropped.
pub fn parse_manifest_line(line: &[u8], algo: &Algorithm) -> Result<(Digest, Vec<u8>), String> {
    parse_manifest_line_version(line, algo, true)
}

/// [`parse_manifest_line`] for a bag of a version before 1.0 (`percent: false`) or not.
pub(crate) fn parse_manifest_line_version(
    line: &[u8],
    algo: &Algorithm,
    percent: bool,
) -> Result<(Digest, Vec<u8>), String> {
    let line = line.strip_suffix(b"\r").unwrap_or(line);
    let sp = line.iter().position(|&b| b == b' ' || b == b'\t').ok_or("expected 'digest path'")?;
    let hex = &line[..sp];
    let rest = &line[sp..];
    let path = &rest[rest.iter().take_while(|&&b| b == b' ' || b == b'\t').count()..];
    if hex.len() != algo.hex_len() {
        return Err(format!(
            "'{}' is not a {} digest ({} hex digits)",
            String::from_utf8_lossy(hex),
            algo.name,
            algo.hex_len()
        ));
    }
    let digest = Digest::from_hex(hex).ok_or_else(|| {
        format!("'{}' is not a {} digest", String::from_utf8_lossy(hex), algo.name)
    })?;
    if path.is_empty() {
        return Err("the path is empty".to_string());
    }
    Ok((digest, decode_path_version(path, percent)))
}

/// Appends `digest  path` (the path percent-encoded) and a newline.
pub fn write_manifest_line(digest: &Digest, path: &[u8], out: &mut Vec<u8>) {
    out.extend_from_slice(digest.to_hex().as_bytes());
    out.extend_from_slice(b"  ");
    out.extend_from_slice(&encode_path(path));
    out.push(b'\n');
}

/// One `Label: value` of a tag file, with the line it starts on.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Tag {
    pub label: String,
    pub value: String,
    pub line: u64,
}

/// Parses a tag file (`bagit.txt`, `bag-info.txt`): `Label: value` lines; a line starting
/// with a space or tab continues the previous value (joined with one space); blank lines
/// are skipped. Errors carry the 1-based line number.
pub fn parse_tags(text: &[u8]) -> Result<Vec<Tag>, (u64, String)> {
    let text = std::str::from_utf8(text).map_err(|e| {
        let line = text[..e.valid_up_to()].iter().filter(|&&b| b == b'\n').count() as u64 + 1;
        (line, "not UTF-8".to_string())
    })?;
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    let mut tags: Vec<Tag> = Vec::new();
    for (i, raw) in text.split('\n').enumerate() {
        let lineno = i as u64 + 1;
        let line = raw.strip_suffix('\r').unwrap_or(raw);
        if line.trim().is_empty() {
            continue;
        }
        if line.starts_with([' ', '\t']) {
            let last = tags
                .last_mut()
                .ok_or((lineno, "a continuation line before any label".to_string()))?;
            if !last.value.is_empty() {
                last.value.push(' ');
            }
            last.value.push_str(line.trim());
            continue;
        }
        let (label, value) = line
            .split_once(':')
            .ok_or_else(|| (lineno, format!("expected 'Label: value', got '{line}'")))?;
        let label = label.trim_end();
        if label.is_empty() {
            return Err((lineno, "the label is empty".to_string()));
        }
        tags.push(Tag { label: label.to_string(), value: value.trim().to_string(), line: lineno });
    }
    Ok(tags)
}

/// Parses a Payload-Oxum value, `octets.streamcount`.
pub fn parse_oxum(value: &str) -> Option<(u64, u64)> {
    let (bytes, count) = value.trim().split_once('.')?;
    let digits = |s: &str| !s.is_empty() && s.len() <= 20 && s.bytes().all(|b| b.is_ascii_digit());
    if !digits(bytes) || !digits(count) {
        return None;
    }
    Some((bytes.parse().ok()?, count.parse().ok()?))
}

/// Whether a file name is a payload manifest (`manifest-ALG.txt`, false) or a tag
/// manifest (`tagmanifest-ALG.txt`, true), and the ALG it names.
pub fn manifest_kind(name: &[u8]) -> Option<(bool, &str)> {
    let name = std::str::from_utf8(name).ok()?;
    let stem = name.strip_suffix(".txt")?;
    if let Some(a) = stem.strip_prefix("tagmanifest-") {
        return Some((true, a));
    }
    stem.strip_prefix("manifest-").map(|a| (false, a))
}

/// The algorithm a manifest's ALG names: BagIt's names are lowercase (`sha512`, `md5`).
pub(crate) fn manifest_algorithm(alg: &str) -> Option<&'static Algorithm> {
    if alg.is_empty() || alg != alg.to_ascii_lowercase() {
        return None;
    }
    algo::lookup(alg)
}

/// Checks a `--info` label and value: a label without `:` or line breaks, not one fixity
/// computes (Payload-Oxum), and a value on one line.
pub(crate) fn check_info(label: &str, value: &str) -> Result<(), String> {
    if label.is_empty() || label.trim() != label || label.contains([':', '\n', '\r']) {
        return Err(format!(
            "'{label}' is not a bag-info label (no ':', blanks at the ends or line breaks)"
        ));
    }
    if label.eq_ignore_ascii_case("Payload-Oxum") {
        return Err("Payload-Oxum is computed; it cannot be given".to_string());
    }
    if value.contains(['\n', '\r']) {
        return Err(format!("the value of {label} holds a line break"));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn percent_encoding_round_trips() {
        let name = b"data/a\nb\rc%d%0A e";
        let enc = encode_path(name);
        assert_eq!(enc, b"data/a%0Ab%0Dc%25d%250A e");
        assert_eq!(decode_path(&enc), name);
        assert_eq!(decode_path(b"x%0ay%0dz"), b"x\ny\rz");
        assert_eq!(decode_path(b"%41%2%"), b"%41%2%");
        assert_eq!(decode_path(b"%"), b"%");
        assert_eq!(decode_path(b"a%2"), b"a%2");
        assert_eq!(decode_path_version(b"50%25%0A", false), b"50%25\n");
    }

    #[test]
    fn unsafe_paths() {
        assert!(unsafe_path(b"data/a").is_none());
        assert!(unsafe_path(b"data/..a").is_none());
        for p in [&b"/etc/passwd"[..], b"data/../../x", b"..", b"data//a", b"./data/a", b""] {
            assert!(unsafe_path(p).is_some(), "{}", String::from_utf8_lossy(p));
        }
    }

    #[test]
    fn manifest_lines() {
        let sha = algo::lookup("sha256").unwrap();
        let d = sha.digest(b"abc");
        let mut out = Vec::new();
        write_manifest_line(&d, b"data/sp ace\n%", &mut out);
        assert_eq!(out, format!("{}  data/sp ace%0A%25\n", d.to_hex()).into_bytes());
        out.pop();
        assert_eq!(parse_manifest_line(&out, sha).unwrap(), (d, b"data/sp ace\n%".to_vec()));
        let tab = format!("{}\tdata/x\r", d.to_hex().to_uppercase());
        assert_eq!(parse_manifest_line(tab.as_bytes(), sha).unwrap(), (d, b"data/x".to_vec()));
        assert!(parse_manifest_line(b"abc data/x", sha).unwrap_err().contains("not a sha256"));
        assert!(parse_manifest_line(d.to_hex().as_bytes(), sha).is_err());
        assert!(parse_manifest_line(format!("{} ", d.to_hex()).as_bytes(), sha).is_err());
    }

    #[test]
    fn tag_files() {
        let t = parse_tags(b"BagIt-Version: 1.0\r\nContact-Name:  Jo\n  Smith\n\nX:\n").unwrap();
        assert_eq!(t.len(), 3);
        assert_eq!(t[0], Tag { label: "BagIt-Version".into(), value: "1.0".into(), line: 1 });
        assert_eq!(t[1].value, "Jo Smith");
        assert_eq!(t[2].value, "");
        assert_eq!(parse_tags(b"A: b\nno colon\n").unwrap_err().0, 2);
        assert_eq!(parse_tags(b" leading\n").unwrap_err().0, 1);
        assert_eq!(parse_tags(b": v\n").unwrap_err().0, 1);
        assert_eq!(parse_tags(b"A: b\nB: \xff\n").unwrap_err().0, 2);
    }

    #[test]
    fn oxum_and_manifest_names() {
        assert_eq!(parse_oxum("1234.5"), Some((1234, 5)));
        assert_eq!(parse_oxum(" 0.0 "), Some((0, 0)));
        for bad in ["12", ".5", "1.", "a.b", "1.2.3", "-1.2"] {
            assert_eq!(parse_oxum(bad), None, "{bad}");
        }
        assert_eq!(manifest_kind(b"manifest-sha512.txt"), Some((false, "sha512")));
        assert_eq!(manifest_kind(b"tagmanifest-md5.txt"), Some((true, "md5")));
        assert_eq!(manifest_kind(b"bag-info.txt"), None);
        assert!(manifest_algorithm("sha256").is_some());
        assert!(manifest_algorithm("SHA256").is_none());
        assert!(manifest_algorithm("nope").is_none());
    }

    #[test]
    fn info_labels() {
        assert!(check_info("Contact-Name", "Jo").is_ok());
        assert!(check_info("Payload-Oxum", "1.1").is_err());
        assert!(check_info("A:B", "x").is_err());
        assert!(check_info("A", "x\ny").is_err());
        assert!(check_info("", "x").is_err());
    }
}
