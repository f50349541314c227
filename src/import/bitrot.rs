//! bitrot's database (ambv/bitrot, the PyPI package `bitrot`): `.bitrot.db` at the root
//! of the tree it was run in, SQLite, table `bitrot (path TEXT PRIMARY KEY, mtime
//! INTEGER, hash TEXT, timestamp TEXT)`: per file its path as bitrot walked it from `.`
//! (`./photos/a.jpg`, Unicode in NFKD form when the file system's encoding is UTF-8),
//! its mtime in whole seconds, and its SHA-1 in hex. No size is recorded.
//!
//! The database is checked against `.bitrot.sha512` beside it (the SHA-512 of the whole
//! file, which bitrot writes and checks) when that file is there: a database that does not
//! match is refused whole.
//!
//! A name stored in NFKD form is found on disk in whatever form it has there: the
//! tree's non-ASCII names are read once and matched by their NFKD form.

use super::{Entry, EntryPath, Importer, Mtime};
use crate::algo::{self, Algorithm};
use crate::digest::Digest;
use crate::scrub::rel_of;
use crate::walk::{Exclude, WalkEvent, walk};
use rusqlite::{Connection, OpenFlags};
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use unicode_normalization::UnicodeNormalization;

/// The database's name at the tree's root.
pub const DB: &str = ".bitrot.db";

/// A bitrot database and the tree it describes.
pub struct Bitrot {
    db: PathBuf,
    root: PathBuf,
    exclude: Exclude,
    /// NFKD form of each non-ASCII path of the tree -> the path on disk.
    names: Option<HashMap<String, Vec<u8>>>,
}

impl Bitrot {
    /// The database `db` (default `root/.bitrot.db`) of the tree at `root`.
    pub fn new(root: &Path, db: Option<&Path>, exclude: Exclude) -> Bitrot {
        Bitrot {
            db: db.map_or_else(|| root.join(DB), Path::to_path_buf),
            root: root.to_path_buf(),
            exclude,
            names: None,
        }
    }

    fn sha1() -> &'static Algorithm {
        algo::lookup("sha1").expect("sha1 is in the registry")
    }

    /// The tree's paths that are not ASCII, by their NFKD form.
    fn names(&mut self) -> &HashMap<String, Vec<u8>> {
        let (root, exclude) = (&self.root, &self.exclude);
        self.names.get_or_insert_with(|| {
            let mut names = HashMap::new();
            let opts = super::tree_walk(exclude);
            walk(root, &opts, &mut |ev| {
                if let WalkEvent::File(full, _) = ev {
                    let rel = rel_of(root, &full);
                    if let Ok(text) = std::str::from_utf8(rel)
                        && !text.is_ascii()
                    {
                        names.insert(text.nfkd().collect(), rel.to_vec());
                    }
                }
                true
            });
            names
        })
    }
}

impl Importer for Bitrot {
    fn name(&self) -> &'static str {
        "bitrot"
    }

    fn algorithm(&self) -> Option<&'static Algorithm> {
        Some(Bitrot::sha1())
    }

    fn ready(&self) -> Result<(), String> {
        let shown = self.db.display();
        if !self.db.is_file() {
            return Err(format!(
                "{shown}: no such file (bitrot keeps .bitrot.db at the root of the tree it ran in)"
            ));
        }
        // bitrot's own integrity check: `.bitrot.sha512` beside it holds the SHA-512 of
        // the whole database as bitrot last wrote it.
        let seal = self.db.with_extension("sha512");
        let Ok(want) = std::fs::read(&seal) else { return Ok(()) };
        let data = std::fs::read(&self.db)
            .map_err(|e| format!("cannot read {shown}: {}", crate::read::io_message(&e)))?;
        let sha512 = algo::lookup("sha512").expect("sha512 is in the registry");
        if sha512.digest(&data).to_hex().as_bytes() != want.trim_ascii() {
            return Err(format!(
                "{shown} does not match its SHA-512 in {}: the database changed since bitrot \
                 wrote it, and is not imported (bitrot refuses it too; remove {} to import it \
                 anyway)",
                seal.display(),
                seal.display()
            ));
        }
        Ok(())
    }

    fn entries(&mut self, each: &mut dyn FnMut(Entry)) -> Result<(), String> {
        self.ready()?;
        let shown = self.db.display().to_string();
        let fail = |e: rusqlite::Error| format!("cannot read {shown}: {e}");
        // Read-only: bitrot's database is never changed.
        let conn = Connection::open_with_flags(
            &self.db,
            OpenFlags::SQLITE_OPEN_READ_ONLY | OpenFlags::SQLITE_OPEN_NO_MUTEX,
        )
        .map_err(fail)?;
        let mut st = conn
            .prepare("SELECT path, mtime, hash FROM bitrot ORDER BY path")
            .map_err(|e| format!("{shown} is not a bitrot database: {e}"))?;
        let mut rows = st.query([]).map_err(fail)?;
        let sha1 = Bitrot::sha1();
        while let Some(r) = rows.next().map_err(fail)? {
            let path: String = r.get(0).map_err(fail)?;
            let mtime: Option<i64> = r.get(1).map_err(fail)?;
            let hash: Option<String> = r.get(2).map_err(fail)?;
            let rel = path.strip_prefix("./").unwrap_or(&path);
            let on_disk = match rel.is_ascii() {
                true => rel.as_bytes().to_vec(),
                false => self.names().get(rel).cloned().unwrap_or_else(|| rel.as_bytes().to_vec()),
            };
            let at = String::new();
            let path = EntryPath::Relative(on_disk);
            let digest = hash.as_deref().and_then(|h| Digest::from_hex(h.trim().as_bytes()));
            let Some(digest) = digest.filter(|d| d.as_bytes().len() == sha1.len) else {
                each(Entry::malformed(at, path, format!("{hash:?} is not a SHA-1 digest")));
                continue;
            };
            let Some(mtime) = mtime else {
                each(Entry::malformed(at, path, "no mtime".into()));
                continue;
            };
            let mut e = Entry::new(at, path, Some((sha1, digest)));
            e.mtime = Some(Mtime::Units { value: i128::from(mtime), unit_ns: 1_000_000_000 });
            each(e);
        }
        Ok(())
    }
}
