//! BagIt's text forms (RFC 8493): manifest lines (`digest path`, the path percent-encoded),
//! tag files (`Label: value`), fetch.txt lines (`url length path`), Payload-Oxum, manifest
//! names and which algorithm they name.
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

/// Why a manifest or fetch.txt path may not be used: it is empty, absolute, starts with
/// `~` (a home directory to a shell, `~user/...` to a naive fetcher) or has a `..`
/// component, so it could name something outside the bag. Empty and `.` components are
/// not unsafe (see [`canonical_path`]).
pub fn unsafe_path(path: &[u8]) -> Option<&'static str> {
    canonical_path(path).err()
}

/// `path` in canonical form, `data/a/b`: a leading `./`, `.` components and doubled
/// slashes name the same file and are dropped (`Cow::Owned` when something was). `Err`
/// for a path that could leave the bag, as [`unsafe_path`] says; a `..` is refused even
/// where it would come back in (`data/a/../b`): `data/a` may be a symbolic link.
pub fn canonical_path(path: &[u8]) -> Result<std::borrow::Cow<'_, [u8]>, &'static str> {
    if path.is_empty() {
        return Err("the path is empty");
    }
    if path[0] == b'/' {
        return Err("the path is absolute");
    }
    // One pass without allocating (a manifest line each): the first kept component, and
    // whether any component is dropped.
    let mut first: Option<&[u8]> = None;
    let mut changed = false;
    for c in path.split(|&b| b == b'/') {
        match c {
            b".." => return Err("the path climbs out with '..'"),
            b"" | b"." => changed = true,
            _ => {
                first.get_or_insert(c);
            }
        }
    }
    let Some(first) = first else {
        return Err("the path names the bag's own directory");
    };
    // `./~user/x` too: its canonical form would start with `~`.
    if first.starts_with(b"~") {
        return Err("the path starts with '~', a home directory");
    }
    if !changed {
        return Ok(std::borrow::Cow::Borrowed(path));
    }
    let kept: Vec<&[u8]> =
        path.split(|&b| b == b'/').filter(|c| !matches!(*c, b"" | b".")).collect();
    Ok(std::borrow::Cow::Owned(kept.join(&b'/')))
}

/// The lines of a tag file: each ends with LF, CR or CRLF (RFC 8493 §2.2.4), the last one
/// may end with nothing. The endings are not part of the lines; an empty text has none.
pub fn tag_lines(text: &[u8]) -> Vec<&[u8]> {
    let mut lines = Vec::new();
    let mut start = 0;
    let mut i = 0;
    while i < text.len() {
        match text[i] {
            b'\n' => {
                lines.push(&text[start..i]);
                start = i + 1;
            }
            b'\r' => {
                lines.push(&text[start..i]);
                if text.get(i + 1) == Some(&b'\n') {
                    i += 1;
                }
                start = i + 1;
            }
            _ => {}
        }
        i += 1;
    }
    if start < text.len() {
        lines.push(&text[start..]);
    }
    lines
}

/// What a manifest line gave ([`parse_manifest_entry`]).
#[derive(Clone, Debug)]
pub struct ManifestEntry {
    pub digest: Digest,
    /// Decoded and in canonical form ([`canonical_path`]).
    pub path: Vec<u8>,
    /// The path was written after md5sum's binary-mode marker, `digest *path`.
    pub binary_marker: bool,
    /// The path as written (decoded) when it was not in canonical form (`./data/x`).
    pub written: Option<Vec<u8>>,
}

/// Parses a manifest line as a validator reads what peers wrote: `digest<whitespace>path`,
/// tolerating md5sum's `*` before the path (RFC 8493 §7.3 allows accepting it, with a
/// warning) and a path not in canonical form; a path that could leave the bag is an error.
pub fn parse_manifest_entry(
    line: &[u8],
    algo: &Algorithm,
    percent: bool,
) -> Result<ManifestEntry, String> {
    let (digest, raw) = split_manifest_line(line, algo)?;
    let (binary_marker, raw) = match raw.strip_prefix(b"*") {
        Some(rest) if !rest.is_empty() => (true, rest),
        _ => (false, raw),
    };
    let decoded = decode_path_version(raw, percent);
    let canonical = match canonical_path(&decoded) {
        Ok(std::borrow::Cow::Borrowed(_)) => None,
        Ok(std::borrow::Cow::Owned(p)) => Some(p),
        Err(why) => {
            return Err(format!(
                "{}: refused: {why}, leaving the bag",
                String::from_utf8_lossy(&decoded)
            ));
        }
    };
    let (path, written) = match canonical {
        None => (decoded, None),
        Some(p) => (p, Some(decoded)),
    };
    Ok(ManifestEntry { digest, path, binary_marker, written })
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
    let (digest, path) = split_manifest_line(line, algo)?;
    Ok((digest, decode_path_version(path, percent)))
}

/// `digest<whitespace>path` of a manifest line: the digest checked for `algo`, the path
/// as written (not decoded), not empty. A trailing CR is dropped.
fn split_manifest_line<'a>(line: &'a [u8], algo: &Algorithm) -> Result<(Digest, &'a [u8]), String> {
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
    Ok((digest, path))
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
    for (i, raw) in tag_lines(text.as_bytes()).into_iter().enumerate() {
        let lineno = i as u64 + 1;
        // Lines end at ASCII bytes: each is still UTF-8.
        let line = std::str::from_utf8(raw).expect("split at ASCII line endings");
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

/// Why a tag-file line that starts an element is not in BagIt 1.0's exact form: a label
/// without blanks at its ends, `:`, one space or tab, the value (RFC 8493 §2.2.2; versions
/// before 1.0 allowed any blanks around the colon). An empty value may follow the colon
/// directly.
pub fn element_form(line: &[u8]) -> Option<&'static str> {
    let blank = |b: &u8| *b == b' ' || *b == b'\t';
    let Some(colon) = line.iter().position(|&b| b == b':') else {
        return Some("no ':' after the label");
    };
    let (label, rest) = (&line[..colon], &line[colon + 1..]);
    if label.first().is_some_and(blank) || label.last().is_some_and(blank) {
        return Some("blanks around the label");
    }
    match rest {
        [] => None,
        [b, ..] if !blank(b) => Some("no space or tab after the colon"),
        [_, b, ..] if blank(b) => Some("more than one space or tab after the colon"),
        _ => None,
    }
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

fn fetch_blank(b: u8) -> bool {
    b == b' ' || b == b'\t'
}

/// One valid line of `fetch.txt`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FetchEntry {
    pub url: String,
    /// `None` for `-` (not given).
    pub length: Option<u64>,
    /// Decoded, in canonical form, under `data/`.
    pub path: Vec<u8>,
    pub line: u64,
}

/// What `fetch.txt` holds: its valid entries, its invalid lines (line, message) and the
/// lines whose path was not in canonical form (line, path as written).
#[derive(Debug, Default)]
pub struct Fetch {
    pub entries: Vec<FetchEntry>,
    pub invalid: Vec<(u64, String)>,
    pub non_canonical: Vec<(u64, Vec<u8>)>,
}

/// Whether `url` is an absolute URI (RFC 3986 §4.3: a scheme, `:`, then the rest): the
/// scheme a letter followed by letters, digits, `+`, `-` or `.`.
fn absolute_uri(url: &str) -> bool {
    let Some((scheme, rest)) = url.split_once(':') else { return false };
    let mut chars = scheme.chars();
    chars.next().is_some_and(|c| c.is_ascii_alphabetic())
        && chars.all(|c| c.is_ascii_alphanumeric() || matches!(c, '+' | '-' | '.'))
        && !rest.is_empty()
        && !url.chars().any(|c| c.is_control())
}

/// Parses `fetch.txt` (RFC 8493 §2.2.3, `url length filepath` per line; `text` already
/// decoded to UTF-8 bytes); `percent` as for manifests (`%25`
/// decoded from BagIt 1.0 on).
pub fn parse_fetch(text: &[u8], percent: bool) -> Fetch {
    let mut f = Fetch::default();
    for (i, line) in tag_lines(text).into_iter().enumerate() {
        let lineno = i as u64 + 1;
        if line.iter().all(|&b| fetch_blank(b)) {
            continue;
        }
        let mut fields = line.splitn(2, |&b| fetch_blank(b));
        let url = fields.next().unwrap_or_default();
        let rest = fields.next().unwrap_or_default();
        let rest = &rest[rest.iter().take_while(|&&b| fetch_blank(b)).count()..];
        let mut fields = rest.splitn(2, |&b| fetch_blank(b));
        let length = fields.next().unwrap_or_default();
        let path = fields.next().unwrap_or_default();
        let path = &path[path.iter().take_while(|&&b| fetch_blank(b)).count()..];
        if url.is_empty() || length.is_empty() || path.is_empty() {
            f.invalid.push((lineno, "expected 'url length filepath'".to_string()));
            continue;
        }
        let url = String::from_utf8_lossy(url).into_owned();
        if !absolute_uri(&url) {
            f.invalid.push((lineno, format!("'{url}' is not an absolute URI")));
            continue;
        }
        let length = match length {
            b"-" => None,
            digits if digits.len() <= 20 && digits.iter().all(u8::is_ascii_digit) => {
                match std::str::from_utf8(digits).ok().and_then(|s| s.parse().ok()) {
                    Some(n) => Some(n),
                    None => {
                        f.invalid.push((lineno, "the length is too large".to_string()));
                        continue;
                    }
                }
            }
            other => {
                let other = String::from_utf8_lossy(other);
                f.invalid.push((lineno, format!("the length '{other}' is neither digits nor '-'")));
                continue;
            }
        };
        let decoded = decode_path_version(path, percent);
        let canon = match canonical_path(&decoded) {
            Ok(p) => p.into_owned(),
            Err(why) => {
                let shown = String::from_utf8_lossy(&decoded);
                f.invalid.push((lineno, format!("{shown}: refused: {why}, leaving the bag")));
                continue;
            }
        };
        if !canon.starts_with(b"data/") {
            let shown = String::from_utf8_lossy(&canon);
            f.invalid.push((
                lineno,
                format!("{shown}: not a payload path (fetch.txt lists only files under data/)"),
            ));
            continue;
        }
        if canon != decoded {
            f.non_canonical.push((lineno, decoded));
        }
        f.entries.push(FetchEntry { url, length, path: canon, line: lineno });
    }
    f
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
        for p in [
            &b"/etc/passwd"[..],
            b"data/../../x",
            b"..",
            b"data/a/../b",
            b"",
            b"~/x",
            b"~root/x",
            b"./",
            b"./~",
            b".//~root/x",
        ] {
            assert!(unsafe_path(p).is_some(), "{}", String::from_utf8_lossy(p));
        }
        for (p, canon) in [
            (&b"./data/a"[..], &b"data/a"[..]),
            (b"data//a", b"data/a"),
            (b"data/./a/", b"data/a"),
            (b"data/a~", b"data/a~"),
            (b"data/~a", b"data/~a"),
        ] {
            assert_eq!(
                canonical_path(p).unwrap().as_ref(),
                canon,
                "{}",
                String::from_utf8_lossy(p)
            );
        }
        assert!(matches!(canonical_path(b"data/a").unwrap(), std::borrow::Cow::Borrowed(_)));
    }

    #[test]
    fn tag_lines_end_with_lf_cr_or_crlf() {
        assert_eq!(tag_lines(b"a\nb\rc\r\nd"), vec![&b"a"[..], b"b", b"c", b"d"]);
        assert_eq!(tag_lines(b"a\n\n"), vec![&b"a"[..], b""]);
        assert_eq!(tag_lines(b"a\r\n"), vec![&b"a"[..]]);
        assert!(tag_lines(b"").is_empty());
    }

    #[test]
    fn manifest_entries_tolerate_the_binary_marker_and_dot_paths() {
        let md5 = algo::lookup("md5").unwrap();
        let d = md5.digest(b"");
        let line = |rest: &str| format!("{} {rest}", d.to_hex());
        let e = parse_manifest_entry(line("*data/a").as_bytes(), md5, true).unwrap();
        assert_eq!((e.path.as_slice(), e.binary_marker, e.written), (&b"data/a"[..], true, None));
        let e = parse_manifest_entry(line(" ./data/b%25").as_bytes(), md5, true).unwrap();
        assert_eq!(e.path, b"data/b%");
        assert_eq!(e.written.as_deref(), Some(&b"./data/b%"[..]));
        assert!(!e.binary_marker);
        let err = parse_manifest_entry(line("*../x").as_bytes(), md5, true).unwrap_err();
        assert!(err.contains("refused: the path climbs out"), "{err}");
        // A lone `*` is a path, not a marker.
        assert_eq!(parse_manifest_entry(line("*").as_bytes(), md5, true).unwrap().path, b"*");
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
    fn element_forms() {
        for ok in [&b"BagIt-Version: 1.0"[..], b"A:\tb", b"A:", b"A: ", b"Contact Name: x  y"] {
            assert_eq!(element_form(ok), None, "{}", String::from_utf8_lossy(ok));
        }
        for (bad, why) in [
            (&b"BagIt-Version : 1.0"[..], "blanks around"),
            (b" A: b", "blanks around"),
            (b"A:b", "no space"),
            (b"A:  b", "more than one"),
            (b"A: \tb", "more than one"),
            (b"A = b", "no ':'"),
        ] {
            assert!(element_form(bad).unwrap().contains(why), "{}", String::from_utf8_lossy(bad));
        }
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

    #[test]
    fn fetch_lines() {
        let f = parse_fetch(
            b"https://example.org/a.tif 12 data/a.tif\r\nfile:///srv/b -\tdata/b%0Ac\n\n",
            true,
        );
        assert!(f.invalid.is_empty(), "{:?}", f.invalid);
        assert_eq!(f.entries.len(), 2);
        assert_eq!(f.entries[0].length, Some(12));
        assert_eq!(f.entries[1].path, b"data/b\nc");
        assert_eq!((f.entries[1].length, f.entries[1].line), (None, 2));
        let f = parse_fetch(b"urn:x:y 1 ./data/a b\n", true);
        assert_eq!(f.entries[0].path, b"data/a b");
        assert_eq!(f.non_canonical, vec![(1, b"./data/a b".to_vec())]);
    }

    #[test]
    fn fetch_lines_that_could_leave_the_bag_or_do_not_parse_are_invalid() {
        for (line, why) in [
            (&b"https://x/a 1 ../etc/passwd"[..], "climbs out"),
            (b"https://x/a 1 /etc/passwd", "absolute"),
            (b"https://x/a 1 ~/.bashrc", "home directory"),
            (b"https://x/a 1 ~root/.ssh/authorized_keys", "home directory"),
            (b"https://x/a 1 data/../../x", "climbs out"),
            (b"https://x/a 1 bagit.txt", "not a payload path"),
            (b"https://x/a 1x data/a", "neither digits"),
            (b"https://x/a 99999999999999999999 data/a", "too large"),
            (b"x/a 1 data/a", "not an absolute URI"),
            (b"1http://x 1 data/a", "not an absolute URI"),
            (b"https://x/a 1", "expected"),
        ] {
            let f = parse_fetch(line, true);
            assert!(f.entries.is_empty(), "{}", String::from_utf8_lossy(line));
            assert!(
                f.invalid[0].1.contains(why),
                "{}: {:?}",
                String::from_utf8_lossy(line),
                f.invalid
            );
        }
    }
}
