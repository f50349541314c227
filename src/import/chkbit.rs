//! chkbit's indexes (laktak/chkbit, Go; and its Python port, the PyPI package `chkbit`).
//!
//! - Split mode: a `.chkbit` file in each directory, JSON
//!   `{"v":2,"idx":{NAME:{"mod":MS,"a":ALGO,"h":HEX,"s":SIZE}},"idx_hash":MD5}`: per file
//!   its mtime in ms, algorithm (`md5`, `sha512`, `blake3`), hex digest and (Go, since
//!   2025) size; `idx_hash` is the MD5 of the `idx` member's text. Older indexes have
//!   `{"mod":MS,"md5":HEX}` entries, and chkbit-js's `{"data": ...}` (a map, or a string
//!   holding a list of `{"name","mod","md5"}`), all MD5.
//! - Atom mode (chkbit 6): one `.chkbit-db` file at the root,
//!   `{"type":"chkbit","version":6,"data":{DIR:INDEX,...}}`, DIR relative with `/`
//!   (`""` the root), INDEX as in a `.chkbit` file.
//!
//! An index whose `idx_hash` does not match its text is damaged: its entries are refused.

use super::json::{self, Value};
use super::{Entry, EntryPath, Importer, Mtime};
use crate::algo;
use crate::digest::Digest;
use crate::scrub::rel_of;
use crate::walk::{Exclude, WalkEvent, walk};
use std::path::{Path, PathBuf};

/// The name of a split-mode index file.
pub const INDEX: &str = ".chkbit";
/// The name of an atom-mode index file.
pub const ATOM: &str = ".chkbit-db";

/// The chkbit indexes of a tree.
pub struct Chkbit {
    root: PathBuf,
    exclude: Exclude,
}

impl Chkbit {
    /// The indexes under `root`: its `.chkbit-db` if it has one, else every `.chkbit`
    /// file (directories matching `exclude` left out).
    pub fn new(root: &Path, exclude: Exclude) -> Chkbit {
        Chkbit { root: root.to_path_buf(), exclude }
    }

    /// Whether `root` holds chkbit indexes at its top (for `--from` detection).
    pub fn found_at(root: &Path) -> bool {
        root.join(ATOM).is_file() || root.join(INDEX).is_file()
    }
}

impl Importer for Chkbit {
    fn name(&self) -> &'static str {
        "chkbit"
    }

    fn entries(&mut self, each: &mut dyn FnMut(Entry)) -> Result<(), String> {
        let atom = self.root.join(ATOM);
        if atom.is_file() {
            let text = std::fs::read(&atom).map_err(|e| {
                format!("cannot read {}: {}", atom.display(), crate::read::io_message(&e))
            })?;
            let v = json::parse(&text).map_err(|e| format!("{}: {e}", atom.display()))?;
            if v.get("type").and_then(Value::bytes) != Some(b"chkbit") {
                return Err(format!(
                    "{}: not a chkbit index (no \"type\":\"chkbit\")",
                    atom.display()
                ));
            }
            let Some(Value::Object(dirs)) = v.get("data") else {
                return Err(format!("{}: no \"data\" object", atom.display()));
            };
            for (dir, index, _) in dirs {
                let at = format!("{ATOM}: {}", String::from_utf8_lossy(dir));
                read_index(&text, index, dir, &at, each);
            }
            return Ok(());
        }
        let opts = super::tree_walk(&self.exclude);
        let root = self.root.clone();
        let mut failed = None;
        walk(&root, &opts, &mut |ev| {
            match ev {
                WalkEvent::File(full, _) if full.file_name() == Some(INDEX.as_ref()) => {
                    let rel = rel_of(&root, &full).to_vec();
                    let dir = rel.strip_suffix(INDEX.as_bytes()).unwrap_or(&rel);
                    let dir = dir.strip_suffix(b"/").unwrap_or(dir);
                    let at = String::from_utf8_lossy(&rel).into_owned();
                    match std::fs::read(&full) {
                        Ok(text) => match json::parse(&text) {
                            Ok(v) => read_index(&text, &v, dir, &at, each),
                            Err(e) => each(Entry::malformed(at, EntryPath::Relative(rel), e)),
                        },
                        Err(e) => {
                            let why = format!("cannot read: {}", crate::read::io_message(&e));
                            each(Entry::malformed(at, EntryPath::Relative(rel), why));
                        }
                    }
                }
                WalkEvent::Error(full, e) if full == root => {
                    failed = Some(format!("{}: {}", root.display(), crate::read::io_message(&e)));
                }
                WalkEvent::Error(full, e) => {
                    // A directory chkbit's index may be in, unread: said, not passed over.
                    let path = EntryPath::Relative(rel_of(&root, &full).to_vec());
                    let why = format!("cannot read: {}", crate::read::io_message(&e));
                    each(Entry::malformed(String::new(), path, why));
                }
                _ => {}
            }
            true
        });
        failed.map_or(Ok(()), Err)
    }
}

/// The entries one index file's `text` gives, read as the index of directory `dir`
/// (what the fuzz target drives; a text that is not JSON is one malformed entry).
pub(crate) fn index_entries(text: &[u8], dir: &[u8]) -> Vec<Entry> {
    let mut out = Vec::new();
    match json::parse(text) {
        Ok(v) => read_index(text, &v, dir, ".chkbit", &mut |e| out.push(e)),
        Err(e) => {
            out.push(Entry::malformed(".chkbit".into(), EntryPath::Relative(dir.to_vec()), e))
        }
    }
    out
}

/// Hands over the entries of one directory's index (`index`, parsed from `text`).
fn read_index(text: &[u8], index: &Value, dir: &[u8], at: &str, each: &mut dyn FnMut(Entry)) {
    let path_of = |name: &[u8]| {
        EntryPath::Relative(if dir.is_empty() { name.to_vec() } else { [dir, b"/", name].concat() })
    };
    let whole = || EntryPath::Relative(if dir.is_empty() { b".".to_vec() } else { dir.to_vec() });
    if let Some((Value::Object(files), span)) = index.member("idx") {
        if let Some(why) = damaged(&text[span], index.get("idx_hash")) {
            // Every entry is refused: the index cannot be trusted.
            for (name, _, _) in files {
                each(Entry::malformed(at.to_string(), path_of(name), why.clone()));
            }
            return;
        }
        for (name, item, _) in files {
            each(entry(at, path_of(name), item));
        }
        return;
    }
    // chkbit-js: "data", a map of name to {mod, md5}, or a string holding a list of
    // {name, mod, md5}.
    let listed = match index.get("data") {
        Some(Value::String(s)) => json::parse(s).ok(),
        other => other.cloned(),
    };
    match listed {
        Some(Value::Object(files)) => {
            for (name, item, _) in &files {
                each(entry(at, path_of(name), item));
            }
        }
        Some(Value::Array(items)) => {
            for item in &items {
                match item.get("name").and_then(Value::bytes) {
                    Some(name) => each(entry(at, path_of(name), item)),
                    None => {
                        each(Entry::malformed(at.into(), whole(), "an entry without a name".into()))
                    }
                }
            }
        }
        _ => each(Entry::malformed(
            at.into(),
            whole(),
            "neither \"idx\" nor \"data\": not a chkbit index".into(),
        )),
    }
}

/// Why the `idx` text does not match the index's `idx_hash` (the MD5 of its text as
/// written, or of the text without white space), if it does not.
fn damaged(idx: &[u8], hash: Option<&Value>) -> Option<String> {
    let Some(want) = hash.and_then(Value::bytes) else {
        return Some("the index has no idx_hash".into());
    };
    let md5 = algo::lookup("md5").expect("md5 is in the registry");
    let matches = |text: &[u8]| md5.digest(text).to_hex().as_bytes() == want;
    if matches(idx) || matches(&compact(idx)) {
        return None;
    }
    Some("the index's idx_hash does not match its content: the index is damaged".into())
}

/// JSON text without the white space between tokens.
fn compact(text: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(text.len());
    let (mut in_string, mut escaped) = (false, false);
    for &b in text {
        if in_string {
            out.push(b);
            if escaped {
                escaped = false;
            } else if b == b'\\' {
                escaped = true;
            } else if b == b'"' {
                in_string = false;
            }
        } else if !matches!(b, b' ' | b'\t' | b'\n' | b'\r') {
            in_string = b == b'"';
            out.push(b);
        }
    }
    out
}

/// One file's entry: `{"mod":MS,"a":ALGO,"h":HEX,"s":SIZE}` or `{"mod":MS,"md5":HEX}`.
fn entry(at: &str, path: EntryPath, item: &Value) -> Entry {
    let bad = |why: &str| Entry::malformed(at.to_string(), path.clone(), why.to_string());
    let (name, hex) = match (item.get("a"), item.get("h"), item.get("md5")) {
        (Some(a), Some(h), _) => (a.bytes(), h.bytes()),
        (None, None, Some(h)) => (Some(&b"md5"[..]), h.bytes()),
        // chkbit records a file it could not hash with a null digest.
        _ => return bad("no digest"),
    };
    let (Some(name), Some(hex)) = (name, hex) else { return bad("no digest") };
    let name = String::from_utf8_lossy(name);
    let mut e = Entry::new(at.to_string(), path.clone(), None);
    match algo::lookup(&name).filter(|a| a.name == name) {
        Some(a) => match Digest::from_hex(hex).filter(|d| d.as_bytes().len() == a.len) {
            Some(d) => e.digests.push((a, d)),
            None => {
                return bad(&format!("{:?} is not a {name} digest", String::from_utf8_lossy(hex)));
            }
        },
        None => e.unknown = Some(name.into_owned()),
    }
    match item.get("mod").and_then(Value::integer) {
        Some(ms) => e.mtime = Some(Mtime::Units { value: ms, unit_ns: 1_000_000 }),
        None => return bad("no mtime (\"mod\")"),
    }
    e.size = item.get("s").and_then(Value::integer).and_then(|s| u64::try_from(s).ok());
    e
}

#[cfg(test)]
mod tests {
    use super::*;

    fn entries(text: &[u8], dir: &[u8]) -> Vec<Entry> {
        let mut out = Vec::new();
        read_index(text, &json::parse(text).unwrap(), dir, "t", &mut |e| out.push(e));
        out
    }

    #[test]
    fn an_index_is_read_when_its_hash_matches_and_refused_when_not() {
        let md5 = algo::lookup("md5").unwrap();
        let idx = br#"{"a":{"mod":1700000000123,"a":"md5","h":"0cc175b9c0f1b6a831c399e269772661","s":1},"b":{"mod":5,"md5":"92eb5ffee6ae2fec3ad71c777531578f"}}"#;
        let hash = md5.digest(idx).to_hex();
        let good =
            [&br#"{"v":2,"idx":"#[..], idx, b",\"idx_hash\":\"", hash.as_bytes(), b"\"}"].concat();
        let got = entries(&good, b"sub");
        assert_eq!(got.len(), 2);
        assert_eq!(got[0].path, EntryPath::Relative(b"sub/a".to_vec()));
        assert_eq!(got[0].size, Some(1));
        assert_eq!(
            got[0].mtime,
            Some(Mtime::Units { value: 1_700_000_000_123, unit_ns: 1_000_000 })
        );
        assert_eq!(got[0].digests[0].1.to_hex(), "0cc175b9c0f1b6a831c399e269772661");
        assert_eq!(got[1].digests[0].0.name, "md5", "the legacy md5 key");
        assert!(got.iter().all(|e| e.problem.is_none()));
        // The same index written with spaces (old chkbit versions) still matches.
        let spaced = String::from_utf8(good.clone()).unwrap().replace(",\"b\"", ", \"b\"");
        assert!(entries(spaced.as_bytes(), b"").iter().all(|e| e.problem.is_none()));
        // One digit changed: every entry is refused.
        let bad = String::from_utf8(good).unwrap().replace("1700000000123", "1700000000124");
        let got = entries(bad.as_bytes(), b"");
        assert!(got.iter().all(|e| e.problem.as_deref().is_some_and(|p| p.contains("damaged"))));
    }

    #[test]
    fn chkbit_js_indexes_and_unknown_algorithms() {
        let js = br#"{"data":"[{\"name\":\"x\",\"mod\":7,\"md5\":\"92eb5ffee6ae2fec3ad71c777531578f\"}]"}"#;
        let got = entries(js, b"");
        assert_eq!(got[0].path, EntryPath::Relative(b"x".to_vec()));
        assert_eq!(got[0].digests[0].0.name, "md5");
        let idx = br#"{"f":{"mod":1,"a":"xxh9","h":"00"}}"#;
        let md5 = algo::lookup("md5").unwrap().digest(idx).to_hex();
        let text =
            format!(r#"{{"v":2,"idx":{},"idx_hash":"{md5}"}}"#, String::from_utf8_lossy(idx));
        let got = entries(text.as_bytes(), b"");
        assert_eq!(got[0].unknown.as_deref(), Some("xxh9"));
    }
}
