//! The head as a statement an admin signs and keeps outside the machine:
//!
//! ```text
//! fixity-proof 1
//! host NAME
//! tree /abs/root
//! seq 12
//! at 2026-11-26T12:00:00.123Z
//! files 50000
//! root <hex>
//! prev <hex>
//! head <hex>
//! ```
//!
//! `host` and `tree` name a PostgreSQL catalog's tree (a SQLite catalog is one tree's:
//! its statements have neither). The tree's bytes are written with `%XX` for control
//! bytes, `%` and bytes that are not UTF-8. Every field the head commits to is there, so
//! a statement can be checked on its own ([`Statement::consistent`]).

use super::{Entry, Hash, Identity, head_of, hex, parse_hash};
use crate::clock::{format_rfc3339_ms, parse_rfc3339_ms};

/// The first line.
const MAGIC: &str = "fixity-proof 1";

/// A head, as printed by `fixity status --proof` and read back by `audit-proof`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Statement {
    pub host: String,
    pub tree: Vec<u8>,
    pub seq: u64,
    pub at: i64,
    pub files: u64,
    pub root: Hash,
    pub prev: Hash,
    pub head: Hash,
}

/// Why a text is not a statement.
#[derive(Debug, thiserror::Error)]
pub enum StatementError {
    #[error("not a fixity head (its first line is not `{MAGIC}`)")]
    Magic,
    #[error("line {0}: {1}")]
    Line(usize, String),
    #[error("the field `{0}` is missing")]
    Missing(&'static str),
}

impl Statement {
    /// The statement of `entry` of the tree `id`.
    pub fn of(id: &Identity, entry: &Entry) -> Statement {
        Statement {
            host: id.host.clone(),
            tree: id.tree.clone(),
            seq: entry.seq,
            at: entry.at,
            files: entry.files,
            root: entry.root,
            prev: entry.prev,
            head: entry.head,
        }
    }

    /// The tree it names.
    pub fn identity(&self) -> Identity {
        Identity { host: self.host.clone(), tree: self.tree.clone() }
    }

    /// Whether its head is the one its fields give.
    pub fn consistent(&self) -> bool {
        head_of(&self.identity(), self.seq, self.at, self.files, &self.root, &self.prev)
            == self.head
    }

    /// The names of the fields in which `entry` (of the same number) differs.
    pub fn differences(&self, entry: &Entry) -> Vec<&'static str> {
        let mut d = Vec::new();
        let pairs = [
            ("head", self.head != entry.head),
            ("root", self.root != entry.root),
            ("prev", self.prev != entry.prev),
            ("files", self.files != entry.files),
            ("at", self.at != entry.at),
        ];
        d.extend(pairs.into_iter().filter(|p| p.1).map(|p| p.0));
        d
    }

    /// The text, one field a line, ending in a newline.
    pub fn render(&self) -> String {
        let mut s = format!("{MAGIC}\n");
        if !self.host.is_empty() || !self.tree.is_empty() {
            s += &format!("host {}\ntree {}\n", escape(self.host.as_bytes()), escape(&self.tree));
        }
        s += &format!(
            "seq {}\nat {}\nfiles {}\nroot {}\nprev {}\nhead {}\n",
            self.seq,
            format_rfc3339_ms(self.at),
            self.files,
            hex(&self.root),
            hex(&self.prev),
            hex(&self.head)
        );
        s
    }

    /// Reads a statement back (unknown fields are refused: a signed text means exactly
    /// what it says).
    pub fn parse(text: &str) -> Result<Statement, StatementError> {
        let mut lines = text.lines().enumerate();
        if lines.next().map(|(_, l)| l.trim_end()) != Some(MAGIC) {
            return Err(StatementError::Magic);
        }
        let (mut host, mut tree) = (None, None);
        let (mut seq, mut at, mut files) = (None, None, None);
        let (mut root, mut prev, mut head) = (None, None, None);
        for (i, line) in lines {
            let line = line.trim_end();
            if line.is_empty() {
                continue;
            }
            let bad = |why: &str| StatementError::Line(i + 1, why.to_string());
            let (key, value) = line.split_once(' ').ok_or_else(|| bad("no value"))?;
            let number = || value.parse::<u64>().map_err(|_| bad("not a number"));
            let hash = || parse_hash(value).ok_or_else(|| bad("not 64 hex digits"));
            let given_before = match key {
                "host" => host.replace(unescape(value).ok_or_else(|| bad("bad escape"))?).is_some(),
                "tree" => tree.replace(unescape(value).ok_or_else(|| bad("bad escape"))?).is_some(),
                "seq" => seq.replace(number()?).is_some(),
                "files" => files.replace(number()?).is_some(),
                "at" => {
                    at.replace(parse_rfc3339_ms(value).ok_or_else(|| bad("not a time"))?).is_some()
                }
                "root" => root.replace(hash()?).is_some(),
                "prev" => prev.replace(hash()?).is_some(),
                "head" => head.replace(hash()?).is_some(),
                _ => return Err(bad(&format!("unknown field `{key}`"))),
            };
            if given_before {
                return Err(bad(&format!("`{key}` given twice")));
            }
        }
        let host = host.map(|h| String::from_utf8_lossy(&h).into_owned()).unwrap_or_default();
        Ok(Statement {
            host,
            tree: tree.unwrap_or_default(),
            seq: seq.ok_or(StatementError::Missing("seq"))?,
            at: at.ok_or(StatementError::Missing("at"))?,
            files: files.ok_or(StatementError::Missing("files"))?,
            root: root.ok_or(StatementError::Missing("root"))?,
            prev: prev.ok_or(StatementError::Missing("prev"))?,
            head: head.ok_or(StatementError::Missing("head"))?,
        })
    }
}

/// Bytes as a statement line holds them: `%XX` for control bytes, DEL, `%`, a space at
/// the end (lines are read without trailing blanks), and every byte above ASCII when
/// they are not UTF-8.
fn escape(bytes: &[u8]) -> String {
    let utf8 = std::str::from_utf8(bytes).is_ok();
    let mut s = String::new();
    let mut rest = bytes;
    while !rest.is_empty() {
        let b = rest[0];
        let plain = (b > b' ' && b != b'%' && b < 0x7f) || (b == b' ' && rest.len() > 1);
        if b >= 0x80 && utf8 {
            // A whole character.
            let len = match b {
                0xf0.. => 4,
                0xe0.. => 3,
                _ => 2,
            };
            s.push_str(std::str::from_utf8(&rest[..len]).expect("valid UTF-8"));
            rest = &rest[len..];
            continue;
        }
        if plain {
            s.push(b as char);
        } else {
            s += &format!("%{b:02X}");
        }
        rest = &rest[1..];
    }
    s
}

/// The inverse of [`escape`].
fn unescape(text: &str) -> Option<Vec<u8>> {
    let t = text.as_bytes();
    let mut out = Vec::with_capacity(t.len());
    let mut i = 0;
    while i < t.len() {
        if t[i] == b'%' {
            let hex = std::str::from_utf8(t.get(i + 1..i + 3)?).ok()?;
            out.push(u8::from_str_radix(hex, 16).ok()?);
            i += 3;
        } else {
            out.push(t[i]);
            i += 1;
        }
    }
    Some(out)
}
