//! `bag create`: make a directory into a bag in place, recovering what an interrupted run
//! left behind.

use super::{BagError, CreateReport, VERSION};
use crate::algo::Algorithm;
use crate::digest::Digest;
use crate::formats::bagit::{check_info, manifest_kind, write_manifest_line};
use crate::output::AtomicFile;
use crate::pathtext::path_bytes;
use crate::pipeline::{self, Config, Task, Work};
use crate::read::{OpenMode, io_message};
use crate::sys::OsStrExt;
use crate::walk::{Exclude, WalkEvent, WalkOptions, default_threads, walk};
use std::io::{self, Write};
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// The prefix of `create`'s staging directory, `.fixity-bag-PID.N`.
const STAGING: &str = ".fixity-bag-";

/// Whether `name` is that of a staging directory of `create` (`.fixity-bag-PID.N`).
fn is_staging(name: &[u8]) -> bool {
    let Some(rest) = name.strip_prefix(STAGING.as_bytes()) else { return false };
    let digits = |s: &[u8]| !s.is_empty() && s.iter().all(u8::is_ascii_digit);
    match rest.iter().position(|&b| b == b'.') {
        Some(i) => digits(&rest[..i]) && digits(&rest[i + 1..]),
        None => false,
    }
}

/// The staging directories directly in `dir`, sorted.
pub(super) fn staging_dirs(dir: &Path) -> Result<Vec<PathBuf>, BagError> {
    let mut found: Vec<PathBuf> = std::fs::read_dir(dir)
        .map_err(|e| io_err(dir, &e))?
        .filter_map(Result::ok)
        .filter(|e| is_staging(e.file_name().as_bytes()))
        .filter(|e| e.file_type().is_ok_and(|t| t.is_dir()))
        .map(|e| e.path())
        .collect();
    found.sort();
    Ok(found)
}

/// Takes `create`'s hold on `dir` ([`crate::sys::hold_dir`], kept while the returned file
/// is open): while it is held, no other `create` works in `dir`, so any staging directory
/// found there was left by a run that is gone.
fn lock_dir(dir: &Path) -> Result<crate::sys::DirHold, BagError> {
    match crate::sys::hold_dir(dir) {
        Ok(Some(f)) => Ok(f),
        Ok(None) => Err(BagError::Usage(format!(
            "{}: another `fixity bag create` is working in this directory",
            dir.display()
        ))),
        Err(e) => Err(io_err(dir, &e)),
    }
}

/// A tag file's name when `dir` holds a `data/` directory beside a payload manifest, tag
/// manifest or `bag-info.txt` (and no `bagit.txt`, checked before).
fn half_made_bag(dir: &Path) -> Option<String> {
    if !std::fs::symlink_metadata(dir.join("data")).is_ok_and(|m| m.is_dir()) {
        return None;
    }
    let mut tags: Vec<String> = std::fs::read_dir(dir)
        .ok()?
        .filter_map(Result::ok)
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| n == "bag-info.txt" || manifest_kind(n.as_bytes()).is_some())
        .collect();
    tags.sort();
    tags.into_iter().next()
}

/// Empties each leftover staging directory in `dir` back into `dir` and removes it,
/// undoing the interrupted run's moves (the rerun then hashes and moves everything
/// afresh). Refuses, moving nothing, when an entry's name also exists in `dir`.
fn recover_staging(dir: &Path) -> Result<Vec<(PathBuf, u64)>, BagError> {
    let mut recovered = Vec::new();
    for staging in staging_dirs(dir)? {
        let entries: Vec<std::ffi::OsString> = std::fs::read_dir(&staging)
            .map_err(|e| io_err(&staging, &e))?
            .map(|e| e.map(|e| e.file_name()))
            .collect::<Result<_, _>>()
            .map_err(|e| io_err(&staging, &e))?;
        if let Some(clash) = entries.iter().find(|n| std::fs::symlink_metadata(dir.join(n)).is_ok())
        {
            return Err(BagError::Io(format!(
                "{}: an interrupted `bag create` left {} in this staging directory, and {} \
                 exists too: move one of them away, then rerun (nothing was moved)",
                staging.display(),
                Path::new(clash).display(),
                dir.join(clash).display()
            )));
        }
        for name in &entries {
            let (from, to) = (staging.join(name), dir.join(name));
            std::fs::rename(&from, &to).map_err(|e| io_err(&from, &e))?;
        }
        std::fs::remove_dir(&staging).map_err(|e| io_err(&staging, &e))?;
        recovered.push((staging, entries.len() as u64));
    }
    Ok(recovered)
}

/// The symlinks under `dir` (at `rel` below the tree's root), not followed, whose relative
/// targets lead out of the tree: (the link's path below the root, the target that reaches
/// the same place from one directory deeper, as the link will be in `data/`).
fn escaping_links(dir: &Path, rel: &Path) -> Result<Vec<(PathBuf, PathBuf)>, BagError> {
    use std::path::Component;
    let here = dir.join(rel);
    let mut found = Vec::new();
    for entry in std::fs::read_dir(&here).map_err(|e| io_err(&here, &e))? {
        let entry = entry.map_err(|e| io_err(&here, &e))?;
        let path = rel.join(entry.file_name());
        let kind = entry.file_type().map_err(|e| io_err(&dir.join(&path), &e))?;
        if kind.is_dir() {
            found.extend(escaping_links(dir, &path)?);
        } else if kind.is_symlink() {
            let target =
                std::fs::read_link(dir.join(&path)).map_err(|e| io_err(&dir.join(&path), &e))?;
            if target.is_absolute() {
                continue;
            }
            // The target, lexically, relative to the tree's root.
            let mut parts: Vec<Component> = Vec::new();
            for c in rel.components().chain(target.components()) {
                match c {
                    Component::CurDir => {}
                    Component::ParentDir
                        if parts.last().is_some_and(|p| *p != Component::ParentDir) =>
                    {
                        parts.pop();
                    }
                    c => parts.push(c),
                }
            }
            if parts.first() == Some(&Component::ParentDir) {
                let mut to: PathBuf =
                    std::iter::repeat_n("..", rel.components().count() + 1).collect();
                to.extend(parts);
                found.push((path, to));
            }
        }
    }
    Ok(found)
}

fn io_err(what: &Path, e: &io::Error) -> BagError {
    BagError::Io(format!("{}: {}", what.display(), io_message(e)))
}

fn write_atomic(path: &Path, data: &[u8]) -> Result<(), BagError> {
    let mut f = AtomicFile::create(path).map_err(|e| io_err(path, &e))?;
    f.write_all(data).map_err(|e| io_err(path, &e))?;
    f.commit().map_err(|e| io_err(path, &e))
}

/// Makes `dir` into a bag in place: its contents move to `dir/data/`, and manifests for
/// `algos`, `bagit.txt`, `bag-info.txt` (Bagging-Date, Payload-Oxum, `info`) and tag
/// manifests are written. The payload is hashed before anything moves: an unreadable file
/// or (unless `follow`) a symlink leaves the directory untouched. With `follow`, symlinks
/// are followed and their targets' content is the payload under the links' names (the
/// links themselves move into `data/`).
pub fn create(
    dir: &Path,
    algos: &[&'static Algorithm],
    info: &[(String, String)],
    follow: bool,
    config: &Config,
) -> Result<CreateReport, BagError> {
    match std::fs::metadata(dir) {
        Ok(md) if md.is_dir() => {}
        Ok(_) => return Err(BagError::Usage(format!("{}: not a directory", dir.display()))),
        Err(e) => return Err(BagError::Usage(format!("{}: {}", dir.display(), io_message(&e)))),
    }
    if std::fs::symlink_metadata(dir.join("bagit.txt")).is_ok() {
        return Err(BagError::Usage(format!(
            "{}: already a bag (bagit.txt exists)",
            dir.display()
        )));
    }
    if algos.is_empty() {
        return Err(BagError::Usage("no algorithm".to_string()));
    }
    for (k, v) in info {
        check_info(k, v).map_err(BagError::Usage)?;
    }
    // 0. Under the lock, undo what an interrupted run left in its staging directory.
    let _lock = lock_dir(dir)?;
    let recovered = recover_staging(dir)?;
    // A run killed after data/ was in place, while it wrote the tag files (bagit.txt comes
    // last): bagging again would bury the payload in data/data/.
    if let Some(tag) = half_made_bag(dir) {
        return Err(BagError::Usage(format!(
            "{}: holds data/ and {tag} but no bagit.txt, as a `bag create` interrupted while \
             writing its tag files leaves it: move the contents of data/ back up and remove \
             the tag files, then rerun",
            dir.display()
        )));
    }

    // 1. Hash the payload where it is; its paths in the bag are data/ + the relative path.
    let opts = WalkOptions {
        follow,
        exclude: Exclude::default().keeping_state(),
        threads: default_threads(),
        stat: false,
    };
    let prefix = path_bytes(dir).len() + 1;
    let algo_arc: Arc<[&'static Algorithm]> = Arc::from(algos.to_vec());
    let mut hashed: Vec<(Vec<u8>, u64, Vec<Digest>)> = Vec::new();
    let mut failures: Vec<String> = Vec::new();
    pipeline::run(
        config,
        |push| {
            walk(dir, &opts, &mut |ev| {
                let (payload, work) = match ev {
                    WalkEvent::File(p, _) => {
                        let rel = path_bytes(&p)[prefix..].to_vec();
                        let work = Work {
                            path: p,
                            mode: OpenMode::Walked { follow },
                            algos: algo_arc.clone(),
                        };
                        (Ok(rel), Some(work))
                    }
                    WalkEvent::Skipped(p, why) => (Err(format!("{}: {why}", p.display())), None),
                    WalkEvent::Error(p, e) => {
                        (Err(format!("{}: {}", p.display(), io_message(&e))), None)
                    }
                };
                push(Task { payload, work })
            });
        },
        |payload, outcome| {
            match (payload, outcome) {
                (Ok(rel), Some(Ok(h))) => {
                    let mut path = b"data/".to_vec();
                    path.extend_from_slice(&rel);
                    hashed.push((path, h.size, h.digests));
                }
                (Ok(rel), Some(Err(e))) => {
                    failures.push(format!("{}: {}", String::from_utf8_lossy(&rel), e.message()))
                }
                (Err(msg), _) => failures.push(msg),
                (Ok(_), None) => unreachable!("files carry work"),
            }
            true
        },
    );
    if !failures.is_empty() {
        return Err(BagError::Io(format!(
            "cannot bag {} (nothing was moved): {}",
            dir.display(),
            failures.join("; ")
        )));
    }

    // Relative symlinks that point out of the tree stop resolving one level down: found
    // now, retargeted once they are in data/.
    let escaping = if follow { escaping_links(dir, Path::new(""))? } else { Vec::new() };

    // 2. Move the contents into a fresh directory, renamed to data/ at the end.
    let tmp = (0..100u32)
        .map(|i| dir.join(format!(".fixity-bag-{}.{i}", std::process::id())))
        .find(|p| std::fs::create_dir(p).is_ok())
        .ok_or_else(|| {
            BagError::Io(format!("{}: cannot create a temporary directory", dir.display()))
        })?;
    let entries: Vec<PathBuf> = std::fs::read_dir(dir)
        .map_err(|e| io_err(dir, &e))?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| *p != tmp)
        .collect();
    let mut moved: Vec<(PathBuf, PathBuf)> = Vec::new();
    let mut failure = None;
    for from in entries {
        let to = tmp.join(from.file_name().expect("a directory entry has a name"));
        match std::fs::rename(&from, &to) {
            Ok(()) => moved.push((from, to)),
            Err(e) => {
                failure = Some(io_err(&from, &e));
                break;
            }
        }
    }
    let data = dir.join("data");
    if failure.is_none()
        && let Err(e) = std::fs::rename(&tmp, &data)
    {
        failure = Some(io_err(&data, &e));
    }
    if let Some(f) = failure {
        for (from, to) in moved.iter().rev() {
            let _ = std::fs::rename(to, from);
        }
        let _ = std::fs::remove_dir(&tmp);
        return Err(f);
    }

    for (rel, target) in &escaping {
        let link = dir.join("data").join(rel);
        let retarget =
            std::fs::remove_file(&link).and_then(|()| crate::sys::symlink(target, &link));
        retarget.map_err(|e| io_err(&link, &e))?;
    }

    // 3. The tag files, each written atomically.
    hashed.sort_by(|a, b| a.0.cmp(&b.0));
    let mut tag_files: Vec<(String, Vec<u8>)> = Vec::new();
    for (i, a) in algos.iter().enumerate() {
        let mut text = Vec::new();
        for (path, _, digests) in &hashed {
            write_manifest_line(&digests[i], path, &mut text);
        }
        tag_files.push((format!("manifest-{}.txt", a.name), text));
    }
    let bytes: u64 = hashed.iter().map(|h| h.1).sum();
    tag_files.push((
        "bagit.txt".to_string(),
        format!("BagIt-Version: {VERSION}\nTag-File-Character-Encoding: UTF-8\n").into_bytes(),
    ));
    let mut bag_info = format!("Bag-Software-Agent: fixity {}\n", env!("CARGO_PKG_VERSION"));
    if !info.iter().any(|(k, _)| k.eq_ignore_ascii_case("Bagging-Date")) {
        let today = crate::clock::format_time(crate::clock::now_ms());
        bag_info.push_str(&format!("Bagging-Date: {}\n", &today[..10]));
    }
    bag_info.push_str(&format!("Payload-Oxum: {bytes}.{}\n", hashed.len()));
    for (k, v) in info {
        bag_info.push_str(&format!("{k}: {v}\n"));
    }
    tag_files.push(("bag-info.txt".to_string(), bag_info.into_bytes()));
    for (name, text) in &tag_files {
        write_atomic(&dir.join(name), text)?;
    }
    for a in algos {
        let mut text = Vec::new();
        for (name, content) in &tag_files {
            write_manifest_line(&a.digest(content), name.as_bytes(), &mut text);
        }
        write_atomic(&dir.join(format!("tagmanifest-{}.txt", a.name)), &text)?;
    }
    Ok(CreateReport { files: hashed.len() as u64, bytes, recovered })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn staging_directory_names() {
        for n in [&b".fixity-bag-12.0"[..], b".fixity-bag-4194303.17"] {
            assert!(is_staging(n), "{}", String::from_utf8_lossy(n));
        }
        for n in [&b".fixity-bag-"[..], b".fixity-bag-12", b".fixity-bag-12.", b".fixity-bag-.0"] {
            assert!(!is_staging(n), "{}", String::from_utf8_lossy(n));
        }
        for n in [&b".fixity-bag-1x.0"[..], b"fixity-bag-1.0", b".fixity-bag-1.0.2", b"data"] {
            assert!(!is_staging(n), "{}", String::from_utf8_lossy(n));
        }
    }
}
