//! The one producer of the commands that take paths (hash, audit, `--update`,
//! `--embed-crc`, `bench tree`): the command-line arguments become the files to read, in
//! order. `-` is standard input; a directory is walked (unless walking is off); anything
//! else is a file named by the user. What a walk finds but does not read (a special file,
//! a loop, a directory it cannot list) comes out in its place, so that no caller can drop
//! it silently.

use crate::pathtext::path_bytes;
use crate::read::OpenMode;
use crate::walk::{Exclude, WalkEvent, WalkOptions, walk};
use std::ffi::OsString;
use std::io;
use std::path::{Path, PathBuf};

/// One thing the producer hands on, in output order.
#[derive(Debug)]
pub enum Source {
    /// A file to read. `name` is how it is printed: the argument as given, or the walked
    /// path; `-` for standard input.
    File { name: Vec<u8>, path: PathBuf, mode: OpenMode },
    /// Found by a walk and left out, with the reason (not an error: exit status stays 0).
    Skipped { path: PathBuf, why: &'static str },
    /// A walk could not go on below `path` (an error: exit status 1).
    Error { path: PathBuf, error: io::Error },
}

/// How the arguments are turned into files.
#[derive(Clone)]
pub struct Sources {
    /// The arguments; empty means standard input, as for coreutils.
    pub paths: Vec<OsString>,
    /// Follow symbolic links in walks (`-L`).
    pub follow: bool,
    /// Names to leave out of walks.
    pub exclude: Exclude,
    /// Read directories named on the command line as files (an error), not walk them.
    pub no_walk: bool,
}

impl Sources {
    /// The arguments, walked with default settings.
    pub fn new(paths: Vec<OsString>) -> Sources {
        Sources { paths, follow: false, exclude: Exclude::default(), no_walk: false }
    }

    /// The walk settings every producer uses.
    pub(crate) fn walk_options(&self) -> WalkOptions {
        WalkOptions {
            follow: self.follow,
            exclude: self.exclude.clone(),
            threads: crate::walk::default_threads(),
            stat: false,
        }
    }

    /// Hands every source to `emit`, in order, until `emit` returns false.
    pub fn each(&self, emit: &mut dyn FnMut(Source) -> bool) {
        let stdin = [OsString::from("-")];
        let paths: &[OsString] = if self.paths.is_empty() { &stdin } else { &self.paths };
        let paths: Vec<OsString> =
            paths.iter().flat_map(|p| crate::sys::expand_wildcards(p)).collect();
        let opts = self.walk_options();
        for p in &paths {
            let arg = crate::sys::portable_arg(Path::new(p));
            let path: &Path = &arg;
            let go_on = if p == "-" {
                emit(Source::File { name: b"-".to_vec(), path: path.into(), mode: OpenMode::Stdin })
            } else if !self.no_walk && std::fs::metadata(path).is_ok_and(|m| m.is_dir()) {
                let mut go_on = true;
                walk(path, &opts, &mut |ev| {
                    go_on = emit(match ev {
                        WalkEvent::File(f, _) => Source::File {
                            name: path_bytes(&f).to_vec(),
                            path: f,
                            mode: OpenMode::Walked { follow: self.follow },
                        },
                        WalkEvent::Skipped(path, why) => Source::Skipped { path, why },
                        WalkEvent::Error(path, error) => Source::Error { path, error },
                    });
                    go_on
                });
                go_on
            } else {
                emit(Source::File {
                    name: path_bytes(path).to_vec(),
                    path: path.into(),
                    mode: OpenMode::Named,
                })
            };
            if !go_on {
                return;
            }
        }
    }

    /// The total size of the files, summed on a thread of its own and reported to
    /// `total` as it grows (for a progress bar's length and ETA).
    pub fn count_bytes_in_background(&self, total: impl Fn(u64) + Send + 'static) {
        let sources = self.clone();
        std::thread::spawn(move || {
            let mut sum = 0u64;
            sources.each(&mut |s| {
                if let Source::File { path, mode, .. } = s
                    && mode != OpenMode::Stdin
                {
                    sum += std::fs::metadata(&path).map(|m| m.len()).unwrap_or(0);
                    total(sum);
                }
                true
            });
            total(sum);
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[cfg(unix)]
    fn collect(s: &Sources) -> Vec<String> {
        let mut out = Vec::new();
        s.each(&mut |src| {
            out.push(match src {
                Source::File { name, mode, .. } => {
                    format!("{} {mode:?}", String::from_utf8_lossy(&name))
                }
                Source::Skipped { path, why } => format!("skipped {} {why}", path.display()),
                Source::Error { path, .. } => format!("error {}", path.display()),
            });
            true
        });
        out
    }

    #[cfg(unix)]
    #[test]
    fn arguments_become_files_in_order_and_walks_keep_what_they_skip() {
        let dir = tempfile::tempdir().unwrap();
        let d = dir.path();
        std::fs::create_dir(d.join("t")).unwrap();
        std::fs::write(d.join("t/b"), b"b").unwrap();
        std::fs::write(d.join("t/a"), b"a").unwrap();
        std::os::unix::fs::symlink("a", d.join("t/link")).unwrap();
        std::fs::write(d.join("one"), b"1").unwrap();
        let arg = |p: &str| d.join(p).into_os_string();
        let s = Sources::new(vec![arg("one"), "-".into(), arg("t")]);
        let got = collect(&s);
        let t = d.join("t");
        assert_eq!(
            got,
            vec![
                format!("{} Named", d.join("one").display()),
                "- Stdin".to_string(),
                format!("{} Walked {{ follow: false }}", t.join("a").display()),
                format!("{} Walked {{ follow: false }}", t.join("b").display()),
                format!(
                    "skipped {} symbolic link not followed (use -L to follow)",
                    t.join("link").display()
                ),
            ]
        );
        // Without walking, a directory is a named file (its read reports the error).
        let s = Sources { no_walk: true, ..Sources::new(vec![arg("t")]) };
        assert_eq!(collect(&s), vec![format!("{} Named", t.display())]);
        // No arguments: standard input.
        assert_eq!(collect(&Sources::new(Vec::new())), vec!["- Stdin".to_string()]);
    }

    #[test]
    fn a_false_from_the_consumer_stops_the_producer() {
        let dir = tempfile::tempdir().unwrap();
        for n in ["a", "b", "c"] {
            std::fs::write(dir.path().join(n), n).unwrap();
        }
        let s = Sources::new(vec![dir.path().into()]);
        let mut seen = 0;
        s.each(&mut |_| {
            seen += 1;
            seen < 2
        });
        assert_eq!(seen, 2);
    }
}
