//! `fixity hash --update MANIFEST PATH...` (`rhash -u`): hash only the files under PATHs
//! that MANIFEST does not list yet and append their lines in the manifest's own format.
//! The manifest is rewritten atomically (copy, append, rename); when nothing is new it is
//! left untouched.

use super::Status;
use crate::cli::HashArgs;
use anyhow::{Context, bail};
use fixity::algo::{self, Algorithm};
use fixity::digest::Encoding;
use fixity::formats::{Format, LineKind, Manifest};
use fixity::output::AtomicFile;
use fixity::pathtext::{path_bytes, quote_env};
use fixity::sources::Sources;
use fixity::sys::{OsStrExt, OsStringExt};
use fixity::walk::Exclude;
use std::collections::HashSet;
use std::ffi::{OsStr, OsString};
use std::io::{ErrorKind, Write};
use std::path::Path;

/// What an existing manifest tells about the lines to append.
struct Listed {
    names: HashSet<Vec<u8>>,
    format: Option<Format>,
    /// Algorithms named by tagged lines, in order of appearance.
    algos: Vec<&'static Algorithm>,
    /// Length in bytes of the first untagged digest.
    untagged_len: Option<usize>,
}

fn normalized(name: &[u8]) -> &[u8] {
    let mut n = name;
    while let Some(rest) = n.strip_prefix(b"./") {
        n = rest;
    }
    n
}

fn read_listed(text: &[u8], manifest: &Path) -> Listed {
    let mut m = Manifest::for_name(manifest.as_os_str().as_encoded_bytes());
    let mut listed =
        Listed { names: HashSet::new(), format: None, algos: Vec::new(), untagged_len: None };
    for line in text.split(|&b| b == b'\n') {
        // rhash's several-digest lines (`name  d1  d2`) are records of the Manifest too.
        if let LineKind::Record(r) = m.parse_line(line) {
            listed.format.get_or_insert(r.format);
            match r.algo {
                Some(a) if !listed.algos.contains(&a) => listed.algos.push(a),
                Some(_) => {}
                None => {
                    // The digest's length in bytes, as hex (the text's length is not).
                    if let Some(d) = r.digest.decode_as(Encoding::Hex) {
                        listed.untagged_len.get_or_insert(d.as_bytes().len());
                    }
                }
            }
            listed.names.insert(normalized(&r.name).to_vec());
        }
    }
    listed
}

pub fn run(mut args: HashArgs) -> anyhow::Result<Status> {
    let manifest = args.rhash.update.take().expect("dispatched for --update");
    let manifest = manifest.as_path();
    let shown = quote_env(path_bytes(manifest));
    let old = match std::fs::read(manifest) {
        Ok(b) => b,
        Err(e) if e.kind() == ErrorKind::NotFound => Vec::new(),
        Err(e) => return Err(e).with_context(|| format!("cannot read {shown}")),
    };
    let listed = read_listed(&old, manifest);
    let own_format = args.tag || args.sfv || args.json || args.format.is_some();
    if !own_format {
        match listed.format {
            Some(Format::Bsd) => args.tag = true,
            Some(Format::Sfv) => {
                args.sfv = true;
                args.rhash.no_header = true;
            }
            _ => {}
        }
    }
    if args.algorithm.is_none() {
        let algos: Vec<&'static Algorithm> = if !listed.algos.is_empty() {
            listed.algos.clone()
        } else if let Some(a) = algo::by_file_name(path_bytes(manifest)) {
            vec![a]
        } else if let Some(len) = listed.untagged_len {
            let mut same = algo::by_len(len);
            match (same.next(), same.next()) {
                (Some(a), None) => vec![a],
                _ => bail!("cannot tell which algorithm {shown} uses: give it with -a"),
            }
        } else {
            Vec::new()
        };
        if !algos.is_empty() {
            args.algorithm = Some(algos.iter().map(|a| a.name).collect::<Vec<_>>().join(","));
        }
    }
    if !old.is_empty() {
        args.rhash.no_header = true;
    }

    // The files to hash: everything under the paths that the manifest does not list.
    let skip = fixity::sys::path_id(manifest).ok();
    let exclude = Exclude::new(&args.exclude).context("bad --exclude pattern")?;
    let sources =
        Sources { paths: args.paths.clone(), follow: args.follow, exclude, no_walk: false };
    let is_new = |name: &[u8]| {
        !listed.names.contains(normalized(name))
            && fixity::sys::path_id(Path::new(OsStr::from_bytes(name)))
                .map_or(true, |id| Some(id) != skip)
    };
    let mut todo: Vec<OsString> = Vec::new();
    let walk_failed = super::list_files(&sources, &mut |name, _, _| {
        if is_new(&name) {
            todo.push(OsString::from_vec(name));
        }
    });
    let walk_status = if walk_failed { Status::Failed } else { Status::Ok };
    if todo.is_empty() {
        return Ok(walk_status);
    }

    // Hash them (the manifest's own format, its header left out when it has lines), then
    // rewrite the manifest: copy + append + rename.
    args.paths = todo;
    args.no_walk = true;
    let mut new = Vec::new();
    let status = super::hash::render(super::hash::plan(args)?, [None, None], &mut new);
    let status = status?.max(walk_status);
    if new.is_empty() {
        return Ok(status);
    }
    let mut f = AtomicFile::create(manifest).with_context(|| format!("cannot write {shown}"))?;
    f.write_all(&old).with_context(|| format!("cannot write {shown}"))?;
    if !old.is_empty() && !old.ends_with(b"\n") {
        f.write_all(b"\n").with_context(|| format!("cannot write {shown}"))?;
    }
    f.write_all(&new).with_context(|| format!("cannot write {shown}"))?;
    f.commit().with_context(|| format!("cannot write {shown}"))?;
    Ok(status)
}
