//! The hash job: every file a [`Sources`] yields, hashed once with every algorithm of the
//! plan, reported in order as [`HashEvent`]s. The job decides nothing about output: the
//! caller renders each event (a manifest writer's record, a message, a progress step).

use crate::algo::Algorithm;
use crate::pipeline::{self, Config, Hashed, Task, Work};
use crate::read::ReadError;
use crate::sources::{Source, Sources};
use std::io;
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// Which files a job reads.
pub enum Inputs {
    /// Arguments, walked trees, standard input, as the walk finds them.
    Sources(Sources),
    /// Files already listed (by a walk done before, as `--embed-crc` does so as not to
    /// walk what it renames).
    Listed(Vec<Source>),
    /// Files from a list read as the run goes (a planned part's).
    Stream(Box<dyn Iterator<Item = Source>>),
}

/// A validated hash job: which files, which algorithms, how to read.
pub struct HashPlan {
    /// The files.
    pub inputs: Inputs,
    /// The algorithms, in the order each file's digests come.
    pub algos: Vec<&'static Algorithm>,
    /// Workers, buffers, read options (the output file to leave out among them).
    pub config: Config,
}

/// What happened to one file or path, in the order of the sources.
#[derive(Debug)]
pub enum HashEvent<'a> {
    /// A file was read and hashed.
    Hashed {
        /// The file's name as given or walked (`-` for standard input).
        name: &'a [u8],
        /// Its size, modification time and one digest per algorithm of the plan.
        hashed: &'a Hashed,
    },
    /// A file could not be read, changed while it was read, or is not a regular file
    /// ([`ReadError::is_skip`] tells what is left out on purpose from what failed).
    Unreadable {
        /// The file's name as given or walked.
        name: &'a [u8],
        /// Why.
        error: &'a ReadError,
    },
    /// The walk left a path out (not an error).
    Skipped {
        /// The path left out.
        path: &'a Path,
        /// Why.
        why: &'static str,
    },
    /// The walk could not go on below a path (an error).
    WalkError {
        /// Where the walk stopped.
        path: &'a Path,
        /// Why.
        error: &'a io::Error,
    },
}

/// What the producer hands the sink, in order.
enum Entry {
    File(Vec<u8>),
    Skipped(PathBuf, &'static str),
    Error(PathBuf, io::Error),
}

/// Runs `plan`, handing each event to `on_event` in the order of the sources; the job
/// stops early when `on_event` returns false. The file being written (the plan's
/// `skip_inodes`) is passed over without an event.
pub fn run(plan: HashPlan, mut on_event: impl FnMut(HashEvent) -> bool) {
    let HashPlan { inputs, algos, config } = plan;
    let algos: Arc<[&'static Algorithm]> = Arc::from(algos);
    pipeline::run(
        &config,
        |push| {
            let mut each = |source| {
                push(match source {
                    Source::File { name, path, mode } => Task {
                        payload: Entry::File(name),
                        work: Some(Work { path, mode, algos: algos.clone() }),
                    },
                    Source::Skipped { path, why } => {
                        Task { payload: Entry::Skipped(path, why), work: None }
                    }
                    Source::Error { path, error } => {
                        Task { payload: Entry::Error(path, error), work: None }
                    }
                })
            };
            match inputs {
                Inputs::Sources(sources) => sources.each(&mut each),
                Inputs::Listed(files) => {
                    for f in files {
                        if !each(f) {
                            break;
                        }
                    }
                }
                Inputs::Stream(files) => {
                    for f in files {
                        if !each(f) {
                            break;
                        }
                    }
                }
            }
        },
        |entry, outcome| match (entry, outcome) {
            (Entry::File(name), Some(Ok(h))) => {
                on_event(HashEvent::Hashed { name: &name, hashed: &h })
            }
            (Entry::File(_), Some(Err(ReadError::OwnOutput))) => true,
            (Entry::File(name), Some(Err(e))) => {
                on_event(HashEvent::Unreadable { name: &name, error: &e })
            }
            (Entry::Skipped(path, why), _) => on_event(HashEvent::Skipped { path: &path, why }),
            (Entry::Error(path, error), _) => {
                on_event(HashEvent::WalkError { path: &path, error: &error })
            }
            (Entry::File(_), None) => unreachable!("files always carry work"),
        },
    );
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::walk::Exclude;
    use std::ffi::OsString;

    #[test]
    fn events_come_in_order_with_digests_and_errors() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("a"), b"abc").unwrap();
        std::fs::write(dir.path().join("b"), b"").unwrap();
        let missing = dir.path().join("none");
        let md5 = crate::algo::lookup("md5").unwrap();
        let plan = HashPlan {
            inputs: Inputs::Sources(Sources {
                paths: vec![OsString::from(dir.path()), OsString::from(&missing)],
                follow: false,
                exclude: Exclude::default(),
                no_walk: false,
            }),
            algos: vec![md5],
            config: Config::for_storage(false),
        };
        let mut seen = Vec::new();
        run(plan, |ev| {
            seen.push(match ev {
                HashEvent::Hashed { name, hashed } => format!(
                    "{} {} {}",
                    crate::formats::rhash::file_name(name).escape_ascii(),
                    hashed.size,
                    hashed.digests[0].to_hex()
                ),
                HashEvent::Unreadable { error, .. } => format!("unreadable {}", error.message()),
                HashEvent::Skipped { why, .. } => format!("skipped {why}"),
                HashEvent::WalkError { .. } => "walk error".into(),
            });
            true
        });
        // The system's words for a missing file ("No such file or directory" on Unix).
        let not_found = crate::read::io_message(
            &std::fs::File::open(dir.path().join("not there")).unwrap_err(),
        );
        assert_eq!(
            seen,
            [
                "a 3 900150983cd24fb0d6963f7d28e17f72",
                "b 0 d41d8cd98f00b204e9800998ecf8427e",
                format!("unreadable {}", not_found).as_str(),
            ]
        );
    }
}
