//! Directories listed ahead of the walk by a thread of their own, their files' `stat`
//! with them. A walk that stats its files (`scan`, `verify`) spends a system call per
//! file listing a directory, on the thread that also merges the walk with the catalog's
//! records: on a warm tree of a million files that listing was most of that thread's
//! time, with the second core idle. Here the next directories in walk order are listed
//! beside it, at most [`AHEAD`] of them (bounded memory), and the walk takes each
//! listing when it reaches its directory; a directory not listed ahead (one found under
//! a directory listed after it was sent) is listed by the walk itself, as before.
//!
//! The listing is the walk's own ([`super::list_sorted`]): the same exclusions, order,
//! stamps and errors, whoever lists.

use super::{Child, Kind, Pace, WalkOptions, list_sorted};
use std::collections::{HashMap, VecDeque};
use std::io;
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// Directories listed ahead of the walk, at most.
const AHEAD: usize = 4;

/// Directories are sent ahead only while the walk's listings are this wide on average:
/// a narrow directory lists in less time than handing it to another thread and back
/// takes (D3, 5,503 directories of about 9 files: a re-scan 0.25 -> 0.40 s when every
/// one went through the listers).
const WIDE: f32 = 32.0;

/// Threads listing them: two, so that listing keeps up with the walk's merge on two
/// cores (one lister was the slowest thread of a re-scan of a million files).
const LISTERS: usize = 2;

type Listing = io::Result<Vec<Child>>;

pub(super) struct Ahead {
    todo: Option<crossbeam_channel::Sender<PathBuf>>,
    done: crossbeam_channel::Receiver<(PathBuf, Listing)>,
    /// Listings back and not taken yet.
    ready: HashMap<PathBuf, Listing>,
    /// Directories sent whose listings have not come back.
    sent: Vec<PathBuf>,
    /// Directories the walk will enter, in walk order, not sent yet.
    upcoming: VecDeque<PathBuf>,
    /// Entries per listing, a moving average (each new listing weighs an eighth).
    width: f32,
}

impl Ahead {
    /// A lister for a walk of `root` with `opts`; `None` when no thread can start.
    pub(super) fn new(root: &Path, opts: &WalkOptions, pace: Arc<Pace>) -> Option<Ahead> {
        let (todo, dirs) = crossbeam_channel::unbounded::<PathBuf>();
        let (back, done) = crossbeam_channel::unbounded();
        for _ in 0..LISTERS {
            let (root, opts, pace) = (root.to_path_buf(), opts.clone(), pace.clone());
            let (dirs, back) = (dirs.clone(), back.clone());
            std::thread::Builder::new()
                .name("fixity-list".into())
                .spawn(move || {
                    for dir in dirs {
                        let listing = list_sorted(&dir, &opts, &root, &pace);
                        if back.send((dir, listing)).is_err() {
                            return;
                        }
                    }
                })
                .ok()?;
        }
        Some(Ahead {
            todo: Some(todo),
            done,
            ready: HashMap::new(),
            sent: Vec::new(),
            upcoming: VecDeque::new(),
            width: 0.0,
        })
    }

    /// The listing of `dir` if it was listed ahead (waiting for it if it is being
    /// listed); `None` when the walk lists it itself.
    pub(super) fn take(&mut self, dir: &Path) -> Option<Listing> {
        if let Some(l) = self.ready.remove(dir) {
            return Some(l);
        }
        if !self.sent.iter().any(|d| d == dir) {
            // Not sent yet: the walk lists it, and it is no longer to come. (Everything
            // before it in walk order has been entered or sent, so it is the first.)
            if self.upcoming.front().is_some_and(|d| d == dir) {
                self.upcoming.pop_front();
            }
            return None;
        }
        loop {
            let Ok((d, listing)) = self.done.recv() else {
                // The lister is gone: the walk lists from now on.
                self.sent.clear();
                self.todo = None;
                return None;
            };
            self.sent.retain(|s| *s != d);
            if d == dir {
                return Some(listing);
            }
            self.ready.insert(d, listing);
        }
    }

    /// The subdirectories of a directory the walk has just listed come next in walk
    /// order, before what was known to come: the next ones are sent to be listed.
    pub(super) fn listed(&mut self, dir: &Path, children: &[Child]) {
        let subdirs = children.iter().rev().filter(|c| c.kind == Kind::Dir);
        for c in subdirs {
            self.upcoming.push_front(crate::sys::join(dir, &c.name));
        }
        self.width += (children.len() as f32 - self.width) / 8.0;
        if self.width < WIDE {
            return;
        }
        let Some(todo) = &self.todo else { return };
        // Sent and not taken yet: listings back, or still coming.
        while self.ready.len() + self.sent.len() < AHEAD
            && let Some(next) = self.upcoming.pop_front()
        {
            if todo.send(next.clone()).is_err() {
                self.todo = None;
                return;
            }
            self.sent.push(next);
        }
    }
}
