//! Checksum manifests: every format `fixity check` reads (GNU and BSD `*sum` lines, SFV,
//! hashdeep, cfv's `.csv`, BagIt manifests, rhash's layouts, `cksum` lists), parsed by
//! the same reader ([`crate::formats::Manifest`]) and with the same rule for each line's
//! algorithm ([`crate::check`]'s: its tag, the manifest's name, or the digest's length).
//! Names are taken relative to the tree's root, as `cd TREE && sha256sum -c FILE` reads
//! them. Manifests record no mtime (hashdeep's and links record a size): the file's size
//! and mtime at the import are recorded with the digest.

use super::{Entry, EntryPath, Importer};
use crate::algo;
use crate::check::{AlgoHints, Resolved, resolve};
use crate::formats::{LineKind, Manifest};
use crate::pathtext::path_bytes;
use std::io::{BufRead, BufReader};
use std::path::PathBuf;

/// Manifest files.
pub struct Manifests {
    files: Vec<PathBuf>,
}

impl Manifests {
    pub fn new(files: Vec<PathBuf>) -> Manifests {
        Manifests { files }
    }
}

impl Importer for Manifests {
    fn name(&self) -> &'static str {
        "manifest"
    }

    fn entries(&mut self, each: &mut dyn FnMut(Entry)) -> Result<(), String> {
        for m in &self.files {
            let shown = m.display().to_string();
            let file = std::fs::File::open(m)
                .map_err(|e| format!("cannot read {shown}: {}", crate::read::io_message(&e)))?;
            let name = path_bytes(m);
            let hints = AlgoHints {
                from_name: algo::by_file_name(name).filter(|a| a.name != "cksum"),
                ..AlgoHints::default()
            };
            let mut parser = Manifest::for_name(name);
            let mut reader = BufReader::with_capacity(256 * 1024, file);
            let mut line = Vec::new();
            let mut n = 0u64;
            loop {
                line.clear();
                match reader.read_until(b'\n', &mut line) {
                    Ok(0) => break,
                    Ok(_) => {}
                    Err(e) => {
                        return Err(format!(
                            "cannot read {shown}: {}",
                            crate::read::io_message(&e)
                        ));
                    }
                }
                n += 1;
                if line.last() == Some(&b'\n') {
                    line.pop();
                }
                let at = format!("{shown} line {n}");
                let parsed = parser.parse_line(&line);
                let record = match parsed {
                    LineKind::Ignored => continue,
                    LineKind::Malformed => {
                        let why = parser.problem().unwrap_or("not a checksum line").to_string();
                        each(Entry::malformed(at, EntryPath::Relative(Vec::new()), why));
                        continue;
                    }
                    LineKind::Record(r) => r,
                };
                let path = match record.name.first() {
                    Some(b'/') => EntryPath::Absolute(record.name.clone()),
                    _ => EntryPath::Relative(record.name.clone()),
                };
                match resolve(&record, &hints) {
                    Resolved::Sums(sums) => {
                        let mut e = Entry::new(at, path, None);
                        e.digests = sums;
                        e.size = record.size;
                        each(e);
                    }
                    Resolved::Malformed => {
                        let why = "a digest that fits no algorithm the line names".to_string();
                        each(Entry::malformed(at, path, why));
                    }
                    Resolved::Ambiguous(fits) => {
                        let names: Vec<&str> = fits.iter().map(|a| a.name).collect();
                        let why = format!(
                            "the digest's length fits {} (name the manifest for its algorithm, as x.sha256)",
                            names.join(", ")
                        );
                        each(Entry::malformed(at, path, why));
                    }
                }
            }
        }
        Ok(())
    }
}
