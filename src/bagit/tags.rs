//! The tag files `bag check` reads before the payload: `bagit.txt` (version, encoding,
//! exact form), the other tag files decoded from the declared encoding, and
//! `bag-info.txt` (element form, Payload-Oxum).

use super::encoding::TagEncoding;
use super::{CheckReport, Problem};
use crate::formats::bagit::{element_form, parse_oxum, parse_tags, tag_lines};
use crate::pathtext::bytes_path;
use crate::read::io_message;
use std::io;
use std::path::Path;

pub(super) fn read_file(path: &Path) -> Result<Option<Vec<u8>>, String> {
    match std::fs::read(path) {
        Ok(d) => Ok(Some(d)),
        Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(None),
        Err(e) => Err(io_message(&e)),
    }
}

/// What `bagit.txt` declares.
pub(super) struct Declaration {
    pub(super) version: Option<(u64, u64)>,
    pub(super) encoding: Option<TagEncoding>,
}

impl Declaration {
    /// BagIt 1.0 or later (or a version that could not be read): the RFC's exact forms
    /// apply; earlier versions were looser (blanks around the colon, listing a file twice).
    pub(super) fn v1(&self) -> bool {
        self.version.is_none_or(|v| v >= (1, 0))
    }
}

/// Files a problem or, where `warn`, a warning.
pub(super) fn note(r: &mut CheckReport, warn: bool, p: Problem) {
    if warn { r.warnings.push(p) } else { r.problems.push(p) }
}

/// Validates `bagit.txt` (RFC 8493 §2.1.1): UTF-8 without a byte-order mark, exactly two
/// lines, `BagIt-Version: M.N` then `Tag-File-Character-Encoding: ENCODING`, an encoding
/// fixity can read (not UTF-8: a warning, as the RFC says SHOULD).
pub(super) fn check_declaration(bag: &Path, r: &mut CheckReport) -> Declaration {
    let f = "bagit.txt";
    let mut d = Declaration { version: None, encoding: None };
    let data = match read_file(&bag.join(f)) {
        Ok(Some(data)) => data,
        Ok(None) => {
            r.problems.push(Problem::new(f, None, "missing: this is not a bag"));
            return d;
        }
        Err(e) => {
            r.problems.push(Problem::new(f, None, e));
            return d;
        }
    };
    let mut text = &data[..];
    if let Some(rest) = text.strip_prefix(b"\xef\xbb\xbf") {
        r.problems.push(Problem::new(
            f,
            Some(1),
            "begins with a byte-order mark: the bag declaration must not have one (RFC 8493 \
             section 2.1.1)",
        ));
        text = rest;
    }
    let tags = match parse_tags(text) {
        Ok(t) => t,
        Err((line, e)) => {
            r.problems.push(Problem::new(f, Some(line), e));
            return d;
        }
    };
    let get = |label: &str| tags.iter().find(|t| t.label == label);
    match get("BagIt-Version") {
        None => r.problems.push(Problem::new(f, None, "no BagIt-Version")),
        Some(t) => {
            let ok = t.value.split_once('.').is_some_and(|(a, b)| {
                !a.is_empty()
                    && !b.is_empty()
                    && a.bytes().all(|c| c.is_ascii_digit())
                    && b.bytes().all(|c| c.is_ascii_digit())
            });
            if ok {
                let (a, b) = t.value.split_once('.').expect("checked");
                d.version = a.parse().ok().zip(b.parse().ok());
            } else {
                r.problems.push(Problem::new(
                    f,
                    Some(t.line),
                    format!("BagIt-Version '{}' is not M.N", t.value),
                ));
            }
        }
    }
    match get("Tag-File-Character-Encoding") {
        None => r.problems.push(Problem::new(f, None, "no Tag-File-Character-Encoding")),
        Some(t) => match TagEncoding::from_label(&t.value) {
            None => r.problems.push(Problem::new(
                f,
                Some(t.line),
                format!(
                    "Tag-File-Character-Encoding '{}' is not an encoding fixity can read",
                    t.value
                ),
            )),
            Some(e) => {
                if !e.is_utf8() {
                    r.warnings.push(Problem::new(
                        f,
                        Some(t.line),
                        format!(
                            "the tag files are in {}: BagIt recommends UTF-8 (RFC 8493 section \
                             2.1.1, SHOULD)",
                            e.name()
                        ),
                    ));
                }
                d.encoding = Some(e);
            }
        },
    }
    // The exact form: bags before 1.0 may have blanks around the colon (a warning).
    let warn = !d.v1();
    let lines = tag_lines(text);
    if lines.len() != 2 {
        note(
            r,
            warn,
            Problem::new(
                f,
                None,
                format!(
                    "{} lines: the bag declaration is exactly two, BagIt-Version then \
                     Tag-File-Character-Encoding (RFC 8493 section 2.1.1)",
                    lines.len()
                ),
            ),
        );
    }
    for (i, (line, label)) in
        lines.iter().zip(["BagIt-Version", "Tag-File-Character-Encoding"]).enumerate()
    {
        let named = line
            .iter()
            .position(|&b| b == b':')
            .is_some_and(|c| line[..c].trim_ascii() == label.as_bytes());
        let why = if named { element_form(line) } else { Some("another label, or none") };
        if let Some(why) = why {
            let msg = format!("not '{label}: VALUE' ({why}; RFC 8493 section 2.1.1)");
            note(r, warn, Problem::new(f, Some(i as u64 + 1), msg));
        }
    }
    d
}

/// Reads a tag file other than `bagit.txt` and decodes it from the bag's encoding:
/// `Ok(None)` when it is missing; a byte-order mark or bytes that are not text are
/// problems (the text is still returned).
pub(super) fn read_tag_file(
    bag: &Path,
    f: &[u8],
    enc: TagEncoding,
    r: &mut CheckReport,
) -> Result<Option<Vec<u8>>, ()> {
    let data = read_file(&bag.join(bytes_path(f)))
        .map_err(|e| r.problems.push(Problem::new(f, None, e)))?;
    let Some(data) = data else { return Ok(None) };
    let (text, problem) = enc.decode(&data);
    if let Some(p) = problem {
        r.problems.push(Problem::new(f, Some(1), p));
    }
    Ok(Some(text.into_owned()))
}

/// The Payload-Oxum of `bag-info.txt`, if the file and the label are there; in a BagIt 1.0
/// bag, each element's exact form, and Payload-Oxum at most once (MUST NOT be repeated).
pub(super) fn read_oxum(
    bag: &Path,
    d: &Declaration,
    r: &mut CheckReport,
) -> Option<(u64, u64, u64)> {
    let f = "bag-info.txt";
    let enc = d.encoding.unwrap_or(TagEncoding::Utf8);
    let text = read_tag_file(bag, f.as_bytes(), enc, r).ok()??;
    let tags = match parse_tags(&text) {
        Ok(t) => t,
        Err((line, e)) => {
            r.problems.push(Problem::new(f, Some(line), e));
            return None;
        }
    };
    if d.v1() {
        for (i, line) in tag_lines(&text).iter().enumerate() {
            let element = !line.is_empty() && !line.starts_with(b" ") && !line.starts_with(b"\t");
            if let Some(why) = element.then(|| element_form(line)).flatten() {
                let msg = format!("not 'Label: value' ({why}; RFC 8493 section 2.2.2)");
                r.problems.push(Problem::new(f, Some(i as u64 + 1), msg));
            }
        }
    }
    let mut oxums = tags.iter().filter(|t| t.label.eq_ignore_ascii_case("Payload-Oxum"));
    let t = oxums.next()?;
    if let Some(again) = oxums.next() {
        r.problems.push(Problem::new(
            f,
            Some(again.line),
            format!("Payload-Oxum again (first on line {}): it must not be repeated", t.line),
        ));
    }
    match parse_oxum(&t.value) {
        Some((bytes, count)) => Some((bytes, count, t.line)),
        None => {
            r.problems.push(Problem::new(
                f,
                Some(t.line),
                format!("Payload-Oxum '{}' is not octets.streamcount", t.value),
            ));
            None
        }
    }
}
