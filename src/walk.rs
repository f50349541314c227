//! Walking a tree: directories are read in parallel (jwalk on a small thread pool of its
//! own), and entries come out in a deterministic order that equals byte-wise sorting of
//! the full paths (`find DIR | LC_ALL=C sort`): within a directory, a subdirectory sorts as
//! its name followed by `/`. Symlinks are not followed unless asked; when they are, a
//! directory that is its own ancestor (by device and inode) is reported as a loop and not
//! entered. Excluded names are pruned before their directories are read.

use globset::{Glob, GlobSet, GlobSetBuilder};
use jwalk::{ClientState, DirEntry, Parallelism, WalkDirGeneric};
use std::cmp::Ordering;
use std::io;
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// What to walk and how.
#[derive(Clone)]
pub struct WalkOptions {
    /// Follow symbolic links (`-L`).
    pub follow: bool,
    /// Names to leave out.
    pub exclude: Exclude,
    /// Threads reading directories.
    pub threads: usize,
}

/// Exclusion globs: a pattern without `/` matches any path component's name (`*.tmp`,
/// `.git`); a pattern with `/` matches the path relative to the walk's root (`build/**`).
#[derive(Clone, Default)]
pub struct Exclude {
    names: Option<Arc<GlobSet>>,
    paths: Option<Arc<GlobSet>>,
}

impl Exclude {
    /// Builds the matcher from `--exclude` patterns.
    pub fn new(patterns: &[String]) -> Result<Exclude, globset::Error> {
        let mut names = GlobSetBuilder::new();
        let mut paths = GlobSetBuilder::new();
        let (mut n, mut p) = (0, 0);
        for pat in patterns {
            let pat = pat.trim_end_matches('/');
            if pat.contains('/') {
                paths.add(Glob::new(pat.trim_start_matches("./"))?);
                p += 1;
            } else {
                names.add(Glob::new(pat)?);
                n += 1;
            }
        }
        Ok(Exclude {
            names: (n > 0).then(|| names.build()).transpose()?.map(Arc::new),
            paths: (p > 0).then(|| paths.build()).transpose()?.map(Arc::new),
        })
    }

    /// Whether the entry `name` at `rel` (relative to the root) is excluded.
    pub fn matches(&self, name: &Path, rel: &Path) -> bool {
        self.names.as_ref().is_some_and(|g| g.is_match(name))
            || self.paths.as_ref().is_some_and(|g| g.is_match(rel))
    }

    /// Whether no pattern was given.
    pub fn is_empty(&self) -> bool {
        self.names.is_none() && self.paths.is_none()
    }
}

/// One thing found by the walk.
#[derive(Debug)]
pub enum WalkEvent {
    /// A file to hash (a regular file, or with `follow`, a symlink's target).
    File(PathBuf),
    /// An entry that is not hashed on purpose: a symlink not followed, a FIFO, a socket,
    /// a device, a directory loop. The text says which.
    Skipped(PathBuf, &'static str),
    /// A directory or entry that could not be read.
    Error(PathBuf, io::Error),
}

#[derive(Debug, Default)]
struct State;

#[derive(Debug, Default, Clone)]
struct Ancestors(Arc<Vec<(u64, u64)>>);

#[derive(Debug, Default)]
struct Mark(Option<&'static str>);

impl ClientState for State {
    type ReadDirState = Ancestors;
    type DirEntryState = Mark;
}

/// Walks `root` (a directory), calling `emit` for each event in sorted order until it
/// returns `false`.
pub fn walk(root: &Path, opts: &WalkOptions, emit: &mut dyn FnMut(WalkEvent) -> bool) {
    let follow = opts.follow;
    let exclude = opts.exclude.clone();
    let root_owned: PathBuf = root.to_path_buf();
    let walker = WalkDirGeneric::<State>::new(root)
        .skip_hidden(false)
        .sort(false)
        .follow_links(follow)
        .parallelism(Parallelism::RayonNewPool(opts.threads.max(1)))
        .process_read_dir(move |depth, dir, ancestors, children| {
            let Some(_) = depth else { return };
            if follow {
                // Remember this directory so a link back to it is caught as a loop.
                if let Ok(md) = std::fs::metadata(dir) {
                    let mut v = Vec::clone(&ancestors.0);
                    v.push((md.dev(), md.ino()));
                    ancestors.0 = Arc::new(v);
                }
            }
            if !exclude.is_empty() {
                children.retain(|c| match c {
                    Ok(e) => {
                        let path = e.parent_path.join(&e.file_name);
                        let rel = path.strip_prefix(&root_owned).unwrap_or(&path);
                        !exclude.matches(Path::new(&e.file_name), rel)
                    }
                    Err(_) => true,
                });
            }
            for c in children.iter_mut().flatten() {
                if follow && c.file_type.is_dir() {
                    if let Ok(md) = std::fs::metadata(c.path()) {
                        if ancestors.0.contains(&(md.dev(), md.ino())) {
                            c.read_children_path = None;
                            c.client_state =
                                Mark(Some("directory loop (a symlink to one of its ancestors)"));
                        }
                    }
                }
            }
            children.sort_by(|a, b| match (a, b) {
                (Ok(a), Ok(b)) => sort_key_cmp(a, b),
                (Ok(_), Err(_)) => Ordering::Less,
                (Err(_), Ok(_)) => Ordering::Greater,
                (Err(_), Err(_)) => Ordering::Equal,
            });
        });
    for item in walker {
        let event = match item {
            Ok(e) => {
                let path = e.path();
                if let Some(why) = e.client_state.0 {
                    WalkEvent::Skipped(path, why)
                } else if e.depth == 0 || e.file_type.is_dir() {
                    continue;
                } else if e.file_type.is_file() {
                    WalkEvent::File(path)
                } else if e.file_type.is_symlink() {
                    WalkEvent::Skipped(path, "symbolic link not followed (use -L to follow)")
                } else {
                    WalkEvent::Skipped(path, special_kind(&e.file_type))
                }
            }
            Err(err) => {
                let path = err.path().map(Path::to_path_buf).unwrap_or_else(|| root.to_path_buf());
                if err.loop_ancestor().is_some() {
                    WalkEvent::Skipped(path, "directory loop (a symlink to one of its ancestors)")
                } else {
                    let io = err.into_io_error().unwrap_or_else(|| io::Error::other("walk error"));
                    WalkEvent::Error(path, io)
                }
            }
        };
        if !emit(event) {
            return;
        }
    }
}

fn special_kind(ft: &std::fs::FileType) -> &'static str {
    use std::os::unix::fs::FileTypeExt;
    if ft.is_fifo() {
        "skipping FIFO"
    } else if ft.is_socket() {
        "skipping socket"
    } else if ft.is_block_device() {
        "skipping block device"
    } else if ft.is_char_device() {
        "skipping character device"
    } else {
        "skipping special file"
    }
}

/// Orders siblings so that the depth-first walk yields full paths in byte order: a
/// directory's name is compared as if it ended in `/`.
fn sort_key_cmp(a: &DirEntry<State>, b: &DirEntry<State>) -> Ordering {
    let (an, bn) = (a.file_name.as_bytes(), b.file_name.as_bytes());
    let a_dir = a.file_type.is_dir();
    let b_dir = b.file_type.is_dir();
    let common = an.len().min(bn.len());
    match an[..common].cmp(&bn[..common]) {
        Ordering::Equal => {}
        o => return o,
    }
    let next = |name: &[u8], is_dir: bool| -> Option<u8> {
        if name.len() > common {
            Some(name[common])
        } else if is_dir {
            Some(b'/')
        } else {
            None
        }
    };
    next(an, a_dir).cmp(&next(bn, b_dir))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn collect(root: &Path, opts: &WalkOptions) -> Vec<String> {
        let mut out = Vec::new();
        walk(root, opts, &mut |e| {
            out.push(match e {
                WalkEvent::File(p) => format!("F {}", p.display()),
                WalkEvent::Skipped(p, why) => format!("S {} {why}", p.display()),
                WalkEvent::Error(p, e) => format!("E {} {e}", p.display()),
            });
            true
        });
        out
    }

    fn opts() -> WalkOptions {
        WalkOptions { follow: false, exclude: Exclude::default(), threads: 2 }
    }

    #[test]
    fn order_is_bytewise_on_full_paths() {
        let d = tempfile::tempdir().unwrap();
        let r = d.path();
        for p in ["a/b", "a-c", "a.d", "b", "A", "a/x/y", "a0"] {
            let p = r.join(p);
            std::fs::create_dir_all(p.parent().unwrap()).unwrap();
            std::fs::write(p, b"").unwrap();
        }
        std::fs::create_dir(r.join("empty")).unwrap();
        let got = collect(r, &opts());
        let mut want: Vec<String> = ["a/b", "a-c", "a.d", "b", "A", "a/x/y", "a0"]
            .iter()
            .map(|p| format!("F {}", r.join(p).display()))
            .collect();
        want.sort();
        assert_eq!(got, want);
    }

    #[test]
    fn symlinks_and_loops() {
        let d = tempfile::tempdir().unwrap();
        let r = d.path();
        std::fs::create_dir(r.join("sub")).unwrap();
        std::fs::write(r.join("sub/f"), b"x").unwrap();
        std::os::unix::fs::symlink("..", r.join("sub/up")).unwrap();
        std::os::unix::fs::symlink("f", r.join("sub/lf")).unwrap();
        let got = collect(r, &opts());
        assert_eq!(got.len(), 3, "{got:?}");
        assert!(got[0].starts_with("F ") && got[0].ends_with("sub/f"));
        assert!(got[1].starts_with("S ") && got[1].contains("sub/lf symbolic link"));
        assert!(got[2].starts_with("S ") && got[2].contains("sub/up symbolic link"));
        let got = collect(r, &WalkOptions { follow: true, ..opts() });
        assert!(got.iter().any(|l| l.ends_with("sub/lf")), "{got:?}");
        assert!(
            got.iter().any(|l| l.starts_with("S ") && l.contains("sub/up") && l.contains("loop")),
            "{got:?}"
        );
    }

    #[test]
    fn excludes_by_name_and_path() {
        let d = tempfile::tempdir().unwrap();
        let r = d.path();
        for p in ["keep.txt", "x.tmp", "build/out/a", "src/build/b", ".git/config"] {
            let p = r.join(p);
            std::fs::create_dir_all(p.parent().unwrap()).unwrap();
            std::fs::write(p, b"").unwrap();
        }
        let ex = Exclude::new(&["*.tmp".into(), ".git".into(), "build/**".into(), "build".into()])
            .unwrap();
        let got = collect(r, &WalkOptions { exclude: ex, ..opts() });
        assert_eq!(got.len(), 1, "{got:?}");
        assert!(got[0].ends_with("keep.txt"));
        let ex = Exclude::new(&["./build/*".into()]).unwrap();
        let got = collect(r, &WalkOptions { exclude: ex, ..opts() });
        assert!(got.iter().any(|l| l.ends_with("src/build/b")), "{got:?}");
        assert!(!got.iter().any(|l| l.contains("build/out")), "{got:?}");
    }
}
