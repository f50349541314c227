//! `--json`: one JSON object per line and per file, for machines. Names that are not UTF-8
//! are given lossily in `path` and exactly in `path_hex`.

use super::writer::{FileEntry, ManifestWriter, Unwritable};
use crate::algo::Algorithm;
use crate::digest::{Digest, hex_encode};
use serde_json::{Map, Value};

/// A hashed file: `{"path": ..., "size": N, "digests": {"sha256": "..."}}`.
pub(crate) fn write_file(
    name: &[u8],
    size: u64,
    digests: &[(&Algorithm, Digest)],
    out: &mut Vec<u8>,
) {
    let mut obj = path_fields(name);
    obj.insert("size".into(), Value::from(size));
    let mut d = Map::new();
    for (a, digest) in digests {
        d.insert(a.name.into(), Value::from(super::digest_text(a, digest, None)));
    }
    obj.insert("digests".into(), Value::Object(d));
    push(obj, out);
}

/// A file that got no digest: `{"path": ..., "error": "...", "skipped": bool}`.
pub fn write_error(name: &[u8], message: &str, skipped: bool, out: &mut Vec<u8>) {
    let mut obj = path_fields(name);
    obj.insert("error".into(), Value::from(message));
    obj.insert("skipped".into(), Value::from(skipped));
    push(obj, out);
}

/// A check result: `{"path": ..., "algorithm": ..., "status": "ok"|"failed"|"missing"|...}`.
pub fn write_check(name: &[u8], algo: &str, status: &str, detail: Option<&str>, out: &mut Vec<u8>) {
    let mut obj = path_fields(name);
    obj.insert("algorithm".into(), Value::from(algo));
    obj.insert("status".into(), Value::from(status));
    if let Some(d) = detail {
        obj.insert("detail".into(), Value::from(d));
    }
    push(obj, out);
}

/// A manifest line that could not be checked: `{"manifest": ..., "line": N, "status":
/// "malformed"|"ambiguous", "detail": ...}`.
pub fn write_line_problem(
    manifest: &[u8],
    line: u64,
    status: &str,
    detail: &str,
    out: &mut Vec<u8>,
) {
    let mut obj = Map::new();
    for (k, v) in path_fields(manifest) {
        obj.insert(format!("manifest{}", k.strip_prefix("path").unwrap_or(&k)), v);
    }
    obj.insert("line".into(), Value::from(line));
    obj.insert("status".into(), Value::from(status));
    obj.insert("detail".into(), Value::from(detail));
    push(obj, out);
}

/// The end of one manifest in `check --json`: `{"manifest": ..., "verdict":
/// "clean"|"failed"|"ambiguous"|"unreadable", "counts": {...}, "detail": ...}`.
pub fn write_manifest_done(
    manifest: &[u8],
    verdict: &str,
    counts: &[(&str, u64)],
    detail: Option<&str>,
    out: &mut Vec<u8>,
) {
    let mut obj = Map::new();
    for (k, v) in path_fields(manifest) {
        obj.insert(format!("manifest{}", k.strip_prefix("path").unwrap_or(&k)), v);
    }
    obj.insert("verdict".into(), Value::from(verdict));
    let counts: Map<String, Value> =
        counts.iter().map(|(k, n)| (k.to_string(), Value::from(*n))).collect();
    obj.insert("counts".into(), Value::Object(counts));
    if let Some(d) = detail {
        obj.insert("detail".into(), Value::from(d));
    }
    push(obj, out);
}

/// A classified file from `scan`/`verify` (or `check --audit`):
/// `{"path": ..., "class": "corrupt", "moved_from": ..., "note": ..., "algorithm": ...,
/// "recorded_digest": HEX, "current_digest": HEX}`; the last three for a corrupt file, when known.
pub fn write_finding(
    name: &[u8],
    class: &str,
    moved_from: Option<&[u8]>,
    note: Option<&str>,
    digests: Option<(&str, &str, &str)>,
    out: &mut Vec<u8>,
) {
    let mut obj = path_fields(name);
    obj.insert("class".into(), Value::from(class));
    if let Some((algorithm, recorded, current)) = digests {
        obj.insert("algorithm".into(), Value::from(algorithm));
        obj.insert("recorded_digest".into(), Value::from(recorded));
        obj.insert("current_digest".into(), Value::from(current));
    }
    if let Some(from) = moved_from {
        for (k, v) in path_fields(from) {
            obj.insert(format!("moved_from{}", k.strip_prefix("path").unwrap_or(&k)), v);
        }
    }
    if let Some(n) = note {
        obj.insert("note".into(), Value::from(n));
    }
    push(obj, out);
}

/// `path`, and `path_hex` when the name is not UTF-8 (docs/json.md, "Names that are not
/// UTF-8").
pub fn path_fields(name: &[u8]) -> Map<String, Value> {
    let mut obj = Map::new();
    match std::str::from_utf8(name) {
        Ok(s) => {
            obj.insert("path".into(), Value::from(s));
        }
        Err(_) => {
            obj.insert("path".into(), Value::from(String::from_utf8_lossy(name).into_owned()));
            obj.insert("path_hex".into(), Value::from(hex_encode(name, false)));
        }
    }
    obj
}

fn push(obj: Map<String, Value>, out: &mut Vec<u8>) {
    serde_json::to_writer(&mut *out, &Value::Object(obj)).expect("writing to a Vec cannot fail");
    out.push(b'\n');
}

/// The `json` format's writer: one object per file, and one per file that could not be
/// hashed.
pub(crate) struct JsonWriter {
    algos: Vec<&'static Algorithm>,
}

impl JsonWriter {
    pub(crate) fn new(algos: Vec<&'static Algorithm>) -> Self {
        JsonWriter { algos }
    }
}

impl ManifestWriter for JsonWriter {
    fn algorithms(&self) -> &[&'static Algorithm] {
        &self.algos
    }

    fn record(&mut self, file: &FileEntry, out: &mut Vec<u8>) -> Result<(), Unwritable> {
        let pairs: Vec<_> = self.algos.iter().copied().zip(file.digests.iter().copied()).collect();
        write_file(file.name, file.size, &pairs, out);
        Ok(())
    }

    fn problem(&mut self, name: &[u8], message: &str, skipped: bool, out: &mut Vec<u8>) {
        write_error(name, message, skipped, out);
    }
}
