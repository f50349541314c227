//! File names as text: the escaping coreutils applies to names in checksum lines, and the
//! shell-style quoting it applies to names in diagnostics. Names are bytes throughout
//! (Unix file names need not be UTF-8) and round-trip exactly.

use crate::sys::OsStrExt;
use std::ffi::OsStr;
use std::path::{Path, PathBuf};

/// The name of the directory that holds fixity's state in a tree
/// (`ROOT/.fixity/catalog.db`): never part of the tree's content (the walk), never read
/// to probe the storage.
pub(crate) const STATE_DIR: &str = ".fixity";

/// Whether a name must be escaped in a checksum line: it holds `\`, LF or CR
/// (coreutils 9 rule; such a line then starts with `\`).
pub(crate) fn needs_escape(name: &[u8]) -> bool {
    name.iter().any(|&b| matches!(b, b'\\' | b'\n' | b'\r'))
}

/// Escapes `\` as `\\`, LF as `\n` and CR as `\r`, appending to `out`.
pub fn escape_into(name: &[u8], out: &mut Vec<u8>) {
    for &b in name {
        match b {
            b'\\' => out.extend_from_slice(b"\\\\"),
            b'\n' => out.extend_from_slice(b"\\n"),
            b'\r' => out.extend_from_slice(b"\\r"),
            _ => out.push(b),
        }
    }
}

/// Undoes [`escape_into`]. `None` for a dangling `\` or an unknown escape, which makes
/// the line improperly formatted (as in coreutils).
pub fn unescape(text: &[u8]) -> Option<Vec<u8>> {
    let mut out = Vec::with_capacity(text.len());
    let mut it = text.iter();
    while let Some(&b) = it.next() {
        if b != b'\\' {
            out.push(b);
            continue;
        }
        match it.next()? {
            b'\\' => out.push(b'\\'),
            b'n' => out.push(b'\n'),
            b'r' => out.push(b'\r'),
            _ => return None,
        }
    }
    Some(out)
}

/// A path's bytes.
pub fn path_bytes(path: &Path) -> &[u8] {
    path.as_os_str().as_bytes()
}

/// `full` relative to `root`, as [`Path::strip_prefix`] gives it, but for the usual case
/// (`full` made by joining names to `root`) by comparing bytes instead of parsing both
/// into components: a walk asks this for every entry.
pub(crate) fn strip_root<'a>(root: &Path, full: &'a Path) -> Option<&'a Path> {
    let (r, f) = (path_bytes(root), path_bytes(full));
    if let Some(rest) = f.strip_prefix(r).filter(|_| !r.is_empty()) {
        let rest = match rest {
            [] => Some(rest),
            [b'/', tail @ ..] if !r.ends_with(b"/") => Some(tail),
            _ if r.ends_with(b"/") => Some(rest),
            _ => None,
        };
        // Components as they are (none empty, none `.`): nothing to normalise.
        let plain =
            |t: &&[u8]| t.is_empty() || t.split(|&b| b == b'/').all(|c| !c.is_empty() && c != b".");
        if let Some(rest) = rest.filter(plain) {
            return Some(bytes_path_ref(rest));
        }
    }
    full.strip_prefix(root).ok()
}

fn bytes_path_ref(bytes: &[u8]) -> &Path {
    Path::new(OsStr::from_bytes(bytes))
}

/// The other Unicode normalization forms of a name (its NFC, then its NFD form, each
/// where it differs from the name): one name, other bytes, as a Mac (NFD) and Linux or
/// Windows (NFC, as typed) may hold it. None for ASCII or a name that is not UTF-8.
pub(crate) fn other_forms(name: &[u8]) -> Vec<Vec<u8>> {
    use unicode_normalization::UnicodeNormalization;
    let Ok(text) = std::str::from_utf8(name) else { return Vec::new() };
    if text.is_ascii() {
        return Vec::new();
    }
    let mut forms: Vec<Vec<u8>> = Vec::with_capacity(2);
    for form in [text.nfc().collect::<String>(), text.nfd().collect()] {
        if form != text && !forms.iter().any(|f| f == form.as_bytes()) {
            forms.push(form.into_bytes());
        }
    }
    forms
}

/// Whether `a` and `b` are one name in two Unicode normalization forms.
pub fn other_form_of(a: &[u8], b: &[u8]) -> bool {
    a != b && other_forms(a).iter().any(|f| f == b)
}

/// A path from bytes.
pub fn bytes_path(bytes: &[u8]) -> PathBuf {
    PathBuf::from(OsStr::from_bytes(bytes))
}

/// Whether the user's locale is UTF-8 (LC_ALL, then LC_CTYPE, then LANG), which decides
/// whether non-ASCII letters in names are printable in diagnostics.
pub fn utf8_locale() -> bool {
    for var in ["LC_ALL", "LC_CTYPE", "LANG"] {
        if let Some(v) = std::env::var_os(var).filter(|v| !v.is_empty()) {
            let v = v.to_string_lossy().to_ascii_lowercase();
            return v.contains("utf-8") || v.contains("utf8");
        }
    }
    false
}

/// Quotes a name for a diagnostic the way coreutils does (gnulib's shell-escape style):
/// left bare when it is safe to paste into a shell, else in single quotes (double quotes
/// when it holds only a `'`), with unprintable bytes as `$'\ooo'`.
pub fn quote(name: &[u8], utf8: bool) -> String {
    let printable = printable_map(name, utf8);
    let special = |i: usize, b: u8| match b {
        b' ' | b'!' | b'"' | b'$' | b'&' | b'\'' | b'(' | b')' | b'*' | b';' | b'<' | b'='
        | b'>' | b'?' | b'[' | b'\\' | b'^' | b'`' | b'|' | b':' | b'\t' => true,
        b'#' | b'~' => i == 0,
        b'{' | b'}' => name.len() == 1,
        _ => false,
    };
    let all_printable = printable.iter().all(|&p| p);
    if !name.is_empty() && all_printable && !name.iter().enumerate().any(|(i, &b)| special(i, b)) {
        return String::from_utf8_lossy(name).into_owned();
    }
    if all_printable
        && name.contains(&b'\'')
        && !name.iter().any(|b| matches!(b, b'"' | b'$' | b'`' | b'\\' | b'!'))
    {
        return format!("\"{}\"", String::from_utf8_lossy(name));
    }
    let mut out: Vec<u8> = vec![b'\''];
    let mut in_quote = true;
    let mut i = 0;
    while i < name.len() {
        if printable[i] {
            if !in_quote {
                out.push(b'\'');
                in_quote = true;
            }
            if name[i] == b'\'' {
                out.extend_from_slice(b"'\\''");
            } else {
                out.push(name[i]);
            }
            i += 1;
        } else {
            out.extend_from_slice(b"'$'");
            while i < name.len() && !printable[i] {
                match name[i] {
                    b'\n' => out.extend_from_slice(b"\\n"),
                    b'\t' => out.extend_from_slice(b"\\t"),
                    b'\r' => out.extend_from_slice(b"\\r"),
                    0x07 => out.extend_from_slice(b"\\a"),
                    0x08 => out.extend_from_slice(b"\\b"),
                    0x0b => out.extend_from_slice(b"\\v"),
                    0x0c => out.extend_from_slice(b"\\f"),
                    b => out.extend_from_slice(format!("\\{b:03o}").as_bytes()),
                }
                i += 1;
            }
            out.push(b'\'');
            in_quote = false;
        }
    }
    if in_quote {
        out.push(b'\'');
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// For each byte, whether it is part of a printable character.
fn printable_map(name: &[u8], utf8: bool) -> Vec<bool> {
    let mut map = vec![false; name.len()];
    let mut i = 0;
    while i < name.len() {
        let b = name[i];
        if b < 0x80 {
            map[i] = (0x20..0x7f).contains(&b);
            i += 1;
            continue;
        }
        if utf8 {
            let end = (i + 4).min(name.len());
            let chunk = &name[i..end];
            let valid = match std::str::from_utf8(chunk) {
                Ok(s) => s,
                Err(e) => std::str::from_utf8(&chunk[..e.valid_up_to()]).unwrap_or(""),
            };
            if let Some(c) = valid.chars().next() {
                let n = c.len_utf8();
                if !c.is_control() {
                    map[i..i + n].iter_mut().for_each(|m| *m = true);
                }
                i += n;
                continue;
            }
        }
        i += 1;
    }
    map
}

/// Quotes with the locale taken from the environment.
pub fn quote_env(name: &[u8]) -> String {
    use std::sync::OnceLock;
    static UTF8: OnceLock<bool> = OnceLock::new();
    quote(name, *UTF8.get_or_init(utf8_locale))
}

/// A name as text that says exactly which bytes it is, for reports and XML: the name
/// itself when it is UTF-8 without control characters (`false`), else percent-encoded
/// (`true`): `%`, control characters (C0, DEL, C1: each of their UTF-8 bytes) and bytes
/// that are not part of valid UTF-8 become `%XX` (uppercase hex); other characters stay
/// as they are, so decoding `%XX` back to bytes gives the name.
pub fn text_or_percent(name: &[u8]) -> (String, bool) {
    let plain = |s: &str| !s.chars().any(char::is_control);
    if let Ok(s) = std::str::from_utf8(name).map(str::to_string)
        && plain(&s)
    {
        return (s, false);
    }
    let mut out = String::with_capacity(name.len() * 3);
    for chunk in name.utf8_chunks() {
        for c in chunk.valid().chars() {
            if c == '%' || c.is_control() {
                for b in c.encode_utf8(&mut [0; 4]).bytes() {
                    out.push_str(&format!("%{b:02X}"));
                }
            } else {
                out.push(c);
            }
        }
        for b in chunk.invalid() {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    (out, true)
}

#[cfg(test)]
mod tests {
    use super::{other_form_of, other_forms};

    #[test]
    fn a_name_has_its_other_normalization_forms() {
        let (nfc, nfd) = ("caf\u{e9}".as_bytes(), "cafe\u{301}".as_bytes());
        assert_eq!(other_forms(nfc), [nfd.to_vec()]);
        assert_eq!(other_forms(nfd), [nfc.to_vec()]);
        // A name in neither form has both (a precomposed letter and a decomposed one).
        let mixed = "\u{e9}e\u{301}".as_bytes();
        assert_eq!(other_forms(mixed), ["\u{e9}\u{e9}".as_bytes(), "e\u{301}e\u{301}".as_bytes()]);
        assert!(other_forms(b"plain").is_empty());
        assert!(other_forms(b"\xff\xfe").is_empty(), "not UTF-8: one form");
        assert!(other_form_of(nfc, nfd) && other_form_of(nfd, nfc));
        assert!(!other_form_of(nfc, nfc) && !other_form_of(nfc, b"cafe"));
    }

    #[test]
    fn strip_root_is_strip_prefix_on_joined_paths() {
        let roots = ["t", "t/", "/", ".", "./t", "/a/b", "t//", "a/./b", ""];
        let names = ["x", "x/y", "", ".", "..", "x/", "x//y", "./x", "é\n"];
        for root in roots {
            for name in names {
                let (root, full) = (Path::new(root), Path::new(root).join(name));
                let want = full.strip_prefix(root).ok().map(path_bytes);
                assert_eq!(strip_root(root, &full).map(path_bytes), want, "{full:?} - {root:?}");
            }
            for other in ["u/x", "tt/x", "/t/x", "x"] {
                let (root, full) = (Path::new(root), Path::new(other));
                let want = full.strip_prefix(root).ok().map(path_bytes);
                assert_eq!(strip_root(root, full).map(path_bytes), want, "{full:?} - {root:?}");
            }
        }
    }

    use super::*;

    #[test]
    fn names_are_text_or_percent_encoded() {
        assert_eq!(text_or_percent("a/é b%.txt".as_bytes()), ("a/é b%.txt".into(), false));
        assert_eq!(text_or_percent(b"caf\xe9%"), ("caf%E9%25".into(), true));
        assert_eq!(text_or_percent("é\n\x7f".as_bytes()), ("é%0A%7F".into(), true));
        assert_eq!(text_or_percent(b""), (String::new(), false));
    }

    #[test]
    fn escape_round_trip() {
        let name = b"a\\b\nc\rd";
        assert!(needs_escape(name));
        let mut out = Vec::new();
        escape_into(name, &mut out);
        assert_eq!(out, b"a\\\\b\\nc\\rd");
        assert_eq!(unescape(&out).unwrap(), name);
        assert_eq!(unescape(b"bad\\x"), None);
        assert_eq!(unescape(b"dangling\\"), None);
        assert!(!needs_escape(b"plain name"));
    }

    #[test]
    fn quote_matches_coreutils() {
        // Each expectation was printed by coreutils 9.1 (`md5sum NAME` on a missing file).
        assert_eq!(quote(b"missing", false), "missing");
        assert_eq!(quote(b"a b", false), "'a b'");
        assert_eq!(quote(b"it's", false), "\"it's\"");
        assert_eq!(quote(b"x$y", false), "'x$y'");
        assert_eq!(quote(b"caf\xe9", true), "'caf'$'\\351'");
        assert_eq!(quote("é".as_bytes(), false), "''$'\\303\\251'");
        assert_eq!(quote("é".as_bytes(), true), "é");
        assert_eq!(quote(b"a\tb", false), "'a'$'\\t''b'");
        assert_eq!(quote(b"a'b$c", false), "'a'\\''b$c'");
        assert_eq!(quote(b"x\\y\nz", false), "'x\\y'$'\\n''z'");
        assert_eq!(quote(b"{", false), "'{'");
        assert_eq!(quote(b"a}", false), "a}");
        assert_eq!(quote(b":a", false), "':a'");
        assert_eq!(quote(b"~a", false), "'~a'");
        assert_eq!(quote(b"a~", false), "a~");
        assert_eq!(quote(b"-x", false), "-x");
        assert_eq!(quote(b"a,b@c%d+e", false), "a,b@c%d+e");
        assert_eq!(quote(b"standard input", false), "'standard input'");
    }
}
