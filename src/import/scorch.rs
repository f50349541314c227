//! scorch's database (trapexit/scorch, "Silent CORruption CHecker", a Python script): a
//! CSV file, gzip-compressed (a plain one is read too, as scorch does), one row per
//! file: `path,digest,size,mode,mtime[,inode]`. The path is absolute (one database may
//! hold many trees: rows of other trees are passed over, not refused); the digest is
//! `ALGO:HEX` (`md5:...`, `sha256:...`, `crc32:...`; a bare hex digest is MD5); the
//! mtime is Python's float `st_mtime` as `str()` writes it. Rows are written by Python's
//! `csv` module (fields holding `,`, `"` or a line break quoted, quotes doubled; `\r\n`
//! after each row) from names encoded with `surrogateescape`, so a name's bytes are in
//! the file as they are on disk.

use super::{Entry, EntryPath, Importer, Mtime};
use crate::algo::{self, Algorithm};
use crate::digest::Digest;
use std::io::Read;
use std::path::{Path, PathBuf};

/// A scorch database.
pub struct Scorch {
    db: PathBuf,
}

impl Scorch {
    pub fn new(db: &Path) -> Scorch {
        Scorch { db: db.to_path_buf() }
    }

    fn text(&self) -> Result<Vec<u8>, String> {
        let shown = self.db.display();
        let raw = std::fs::read(&self.db)
            .map_err(|e| format!("cannot read {shown}: {}", crate::read::io_message(&e)))?;
        if !raw.starts_with(&[0x1f, 0x8b]) {
            return Ok(raw);
        }
        let mut out = Vec::new();
        flate2::read::MultiGzDecoder::new(&raw[..])
            .read_to_end(&mut out)
            .map_err(|e| format!("cannot decompress {shown}: {e}"))?;
        Ok(out)
    }
}

/// A digest as scorch writes it: `ALGO:HEX`, or bare hex (MD5). `Err`: the algorithm's
/// name when fixity does not compute it; `Ok(None)`: not a digest.
fn digest(field: &[u8]) -> Result<Option<(&'static Algorithm, Digest)>, String> {
    let text = String::from_utf8_lossy(field);
    let (name, hex) = text.split_once(':').unwrap_or(("md5", &text));
    // hashlib's names: sha3_256, blake2b, ...
    let a = algo::lookup(name).or_else(|| algo::lookup(&name.replace('_', "-")));
    let Some(a) = a else { return Err(name.to_string()) };
    Ok(Digest::from_hex(hex.as_bytes()).filter(|d| d.as_bytes().len() == a.len).map(|d| (a, d)))
}

/// Splits CSV `text` into rows of fields, as Python's `csv` module writes them.
pub(crate) fn rows(text: &[u8]) -> Vec<Result<Vec<Vec<u8>>, String>> {
    let mut out = Vec::new();
    let mut i = 0;
    while i < text.len() {
        let mut row = Vec::new();
        let mut field = Vec::new();
        let mut bad = None;
        loop {
            if text.get(i) == Some(&b'"') {
                // A quoted field: up to the lone closing quote.
                i += 1;
                loop {
                    match text.get(i) {
                        None => {
                            bad = Some("a quoted field that does not end".to_string());
                            break;
                        }
                        Some(b'"') if text.get(i + 1) == Some(&b'"') => {
                            field.push(b'"');
                            i += 2;
                        }
                        Some(b'"') => {
                            i += 1;
                            break;
                        }
                        Some(&b) => {
                            field.push(b);
                            i += 1;
                        }
                    }
                }
            }
            while let Some(&b) = text.get(i).filter(|&&b| !matches!(b, b',' | b'\n' | b'\r')) {
                field.push(b);
                i += 1;
            }
            row.push(std::mem::take(&mut field));
            match text.get(i) {
                Some(b',') => i += 1,
                Some(b'\r') if text.get(i + 1) == Some(&b'\n') => {
                    i += 2;
                    break;
                }
                Some(b'\r' | b'\n') => {
                    i += 1;
                    break;
                }
                _ => break,
            }
        }
        out.push(match bad {
            Some(why) => Err(why),
            None => Ok(row),
        });
    }
    out
}

impl Importer for Scorch {
    fn name(&self) -> &'static str {
        "scorch"
    }

    fn holds_other_trees(&self) -> bool {
        true
    }

    fn entries(&mut self, each: &mut dyn FnMut(Entry)) -> Result<(), String> {
        let text = self.text()?;
        for (n, row) in rows(&text).into_iter().enumerate() {
            let at = format!("row {}", n + 1);
            let row = match row {
                Ok(r) => r,
                Err(why) => {
                    each(Entry::malformed(at, EntryPath::Absolute(Vec::new()), why));
                    continue;
                }
            };
            if row.len() == 1 && row[0].is_empty() {
                continue;
            }
            let path = EntryPath::Absolute(row[0].clone());
            if row.len() != 5 && row.len() != 6 {
                let why = format!("{} fields, not 5 or 6", row.len());
                each(Entry::malformed(at, path, why));
                continue;
            }
            let number = |f: &[u8]| std::str::from_utf8(f).ok().map(str::trim).map(str::to_string);
            let size = number(&row[2]).and_then(|s| s.parse::<u64>().ok());
            let mtime =
                number(&row[4]).and_then(|s| s.parse::<f64>().ok()).filter(|m| m.is_finite());
            let (Some(size), Some(mtime)) = (size, mtime) else {
                each(Entry::malformed(at, path, "a size or mtime that is not a number".into()));
                continue;
            };
            let mut e = Entry::new(at.clone(), path.clone(), None);
            match digest(&row[1]) {
                Ok(Some(d)) => e.digests.push(d),
                Ok(None) => {
                    let why = format!("{:?} is not a digest", String::from_utf8_lossy(&row[1]));
                    each(Entry::malformed(at, path, why));
                    continue;
                }
                Err(name) => e.unknown = Some(name),
            }
            e.size = Some(size);
            e.mtime = Some(Mtime::Seconds(mtime));
            each(e);
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rows_are_split_as_python_writes_them() {
        let text = b"/t/a,md5:00,1,33188,1.5,7\r\n\"/t/b,\"\"q\"\"\nc\",md5:00,1,33188,1.5,8\r\n/t/\xff,x,1,2,3\r\n";
        let got: Vec<_> = rows(text).into_iter().map(Result::unwrap).collect();
        assert_eq!(got.len(), 3);
        assert_eq!(got[0][0], b"/t/a");
        assert_eq!(got[1][0], b"/t/b,\"q\"\nc");
        assert_eq!(got[1][5], b"8");
        assert_eq!(got[2][0], b"/t/\xff");
        assert!(rows(b"\"open").into_iter().next().unwrap().is_err());
    }

    #[test]
    fn digests_name_their_algorithm_or_are_md5() {
        let md5 = "0cc175b9c0f1b6a831c399e269772661";
        assert_eq!(digest(md5.as_bytes()).unwrap().unwrap().0.name, "md5");
        assert_eq!(digest(format!("md5:{md5}").as_bytes()).unwrap().unwrap().0.name, "md5");
        assert_eq!(digest(b"crc32:e8b7be43").unwrap().unwrap().0.name, "crc32");
        assert_eq!(digest(b"adler32:0062006"), Err("adler32".into()));
        assert_eq!(digest(b"md5:xyz").unwrap(), None);
    }
}
