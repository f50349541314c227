//! Tag files in the encoding `bagit.txt` declares (RFC 8493 §2.1.1: UTF-8 SHOULD be used,
//! any other IANA-registered encoding MAY). `bagit.txt` itself is always UTF-8; the
//! manifests, `bag-info.txt` and `fetch.txt` are decoded with the declared encoding before
//! they are parsed, so a path written in ISO-8859-1 or UTF-16 names the same file as its
//! UTF-8 form on disk (as bagit-python reads them).

use std::borrow::Cow;

/// The encoding of a bag's tag files.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum TagEncoding {
    /// Read as bytes, unchanged: a path that is not UTF-8 still names its file.
    Utf8,
    /// ISO-8859-1 as IANA registers it (every byte the code point of the same number),
    /// which WHATWG's table maps to windows-1252 instead.
    Latin1,
    /// Any other encoding encoding_rs knows under the label (UTF-16 with or without a
    /// byte-order mark, the ISO-8859 and Windows code pages, Shift_JIS, EUC-JP, GB18030 ...).
    Other(&'static encoding_rs::Encoding),
}

/// IANA's names and aliases of ISO-8859-1 (Python's codec accepts them too).
const LATIN1: &[&str] = &[
    "iso-8859-1",
    "iso_8859-1",
    "iso8859-1",
    "iso_8859-1:1987",
    "iso-ir-100",
    "latin1",
    "latin-1",
    "l1",
    "ibm819",
    "cp819",
    "csisolatin1",
    "8859",
];

impl TagEncoding {
    /// The encoding `label` (Tag-File-Character-Encoding) names, case-insensitively.
    pub(crate) fn from_label(label: &str) -> Option<TagEncoding> {
        let l = label.trim().to_ascii_lowercase();
        if l == "utf-8" || l == "utf8" {
            return Some(TagEncoding::Utf8);
        }
        if LATIN1.contains(&l.as_str()) {
            return Some(TagEncoding::Latin1);
        }
        match encoding_rs::Encoding::for_label_no_replacement(l.as_bytes()) {
            Some(e) if e == encoding_rs::UTF_8 => Some(TagEncoding::Utf8),
            Some(e) => Some(TagEncoding::Other(e)),
            None => None,
        }
    }

    pub(crate) fn is_utf8(self) -> bool {
        self == TagEncoding::Utf8
    }

    /// The text of a tag file as UTF-8 bytes, and what was wrong with it: a byte-order
    /// mark where the encoding needs none (UTF-8: RFC 8493 §2.2.4 says MUST NOT; it is
    /// dropped), or bytes that are not text in the encoding (replaced by U+FFFD).
    pub(crate) fn decode(self, bytes: &[u8]) -> (Cow<'_, [u8]>, Option<String>) {
        match self {
            TagEncoding::Utf8 => match bytes.strip_prefix(b"\xef\xbb\xbf") {
                Some(rest) => (
                    Cow::Borrowed(rest),
                    Some(
                        "begins with a byte-order mark: tag files in UTF-8 must not have one \
                         (RFC 8493 section 2.2.4)"
                            .to_string(),
                    ),
                ),
                None => (Cow::Borrowed(bytes), None),
            },
            TagEncoding::Latin1 => {
                let text: String = bytes.iter().map(|&b| char::from(b)).collect();
                (Cow::Owned(text.into_bytes()), None)
            }
            TagEncoding::Other(e) => {
                // UTF-16 is read by its byte-order mark when there is one (little-endian
                // without); other encodings keep a mark as text, as they need none.
                let (text, had_errors) = if e == encoding_rs::UTF_16LE || e == encoding_rs::UTF_16BE
                {
                    let (t, _, errors) = e.decode(bytes);
                    (t, errors)
                } else {
                    e.decode_without_bom_handling(bytes)
                };
                let problem =
                    had_errors.then(|| format!("holds bytes that are not {} text", e.name()));
                (Cow::Owned(text.into_owned().into_bytes()), problem)
            }
        }
    }

    /// The encoding's name, as a message gives it.
    pub(crate) fn name(self) -> &'static str {
        match self {
            TagEncoding::Utf8 => "UTF-8",
            TagEncoding::Latin1 => "ISO-8859-1",
            TagEncoding::Other(e) => e.name(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn labels() {
        assert_eq!(TagEncoding::from_label("UTF-8"), Some(TagEncoding::Utf8));
        assert_eq!(TagEncoding::from_label("utf8"), Some(TagEncoding::Utf8));
        assert_eq!(TagEncoding::from_label("ISO-8859-1"), Some(TagEncoding::Latin1));
        assert_eq!(TagEncoding::from_label("Latin1"), Some(TagEncoding::Latin1));
        assert_eq!(TagEncoding::from_label("UTF-16").unwrap().name(), "UTF-16LE");
        assert_eq!(TagEncoding::from_label("windows-1252").unwrap().name(), "windows-1252");
        assert_eq!(TagEncoding::from_label("Shift_JIS").unwrap().name(), "Shift_JIS");
        assert_eq!(TagEncoding::from_label("klingon"), None);
        assert_eq!(TagEncoding::from_label("replacement"), None);
    }

    #[test]
    fn decoding() {
        let (t, p) = TagEncoding::Latin1.decode(b"data/caf\xe9 \x80");
        assert_eq!((t.as_ref(), p), ("data/café \u{80}".as_bytes(), None));
        let (t, p) = TagEncoding::Utf8.decode(b"\xef\xbb\xbfA: b\n");
        assert_eq!(t.as_ref(), b"A: b\n");
        assert!(p.unwrap().contains("byte-order mark"));
        // Non-UTF-8 bytes stay as they are in a UTF-8 bag: they may name a file.
        assert_eq!(TagEncoding::Utf8.decode(b"data/\xff").0.as_ref(), b"data/\xff");
        let utf16 = TagEncoding::from_label("UTF-16").unwrap();
        let be: Vec<u8> = [0xfe, 0xff, 0, b'a', 0, b'\n'].to_vec();
        assert_eq!(utf16.decode(&be).0.as_ref(), b"a\n");
        let le: Vec<u8> = [b'a', 0, 0xe9, 0].to_vec();
        assert_eq!(utf16.decode(&le).0.as_ref(), "aé".as_bytes());
        let (_, p) = TagEncoding::from_label("Shift_JIS").unwrap().decode(b"\x82");
        assert!(p.unwrap().contains("not Shift_JIS text"));
    }
}
