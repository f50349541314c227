//! The actions a page can start: verify (a file's directory, or the whole tree), repair
//! (from the recovery data, or a replica), accept, forget. Each is the CLI itself, run as
//! a child process (this same binary), so it follows the CLI's rules exactly (never over
//! an edit, a finding reported before it is recorded), holds the catalog's run lock as
//! any run does, and leaves the catalog as the CLI would if it is killed midway. The
//! catalog's history records who started it (`FIXITY_ACTOR`). At most one action runs on
//! a tree at a time, at most [`MOST_AT_ONCE`] in all; the last [`KEPT`] are remembered with
//! the end of their output.

use super::state::Tree;
use std::collections::VecDeque;
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::sync::{Arc, Mutex};
use tokio::io::AsyncReadExt;

/// Actions running at once, in all.
pub const MOST_AT_ONCE: usize = 4;
/// Actions remembered.
pub const KEPT: usize = 100;
/// Output kept per action (its end).
const OUTPUT: usize = 64 * 1024;

/// What an action does.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Kind {
    Verify,
    Repair,
    Accept,
    Forget,
}

impl Kind {
    pub fn parse(word: &str) -> Option<Kind> {
        Some(match word {
            "verify" => Kind::Verify,
            "repair" => Kind::Repair,
            "accept" => Kind::Accept,
            "forget" => Kind::Forget,
            _ => return None,
        })
    }

    pub fn word(self) -> &'static str {
        match self {
            Kind::Verify => "verify",
            Kind::Repair => "repair",
            Kind::Accept => "accept",
            Kind::Forget => "forget",
        }
    }
}

/// One action, started or done.
#[derive(Clone, Debug, serde::Serialize)]
pub struct Action {
    pub id: u64,
    pub tree: usize,
    pub kind: Kind,
    /// The file (relative to the tree's root; lossy text), empty for the whole tree.
    pub path: String,
    /// The file's raw bytes.
    #[serde(skip)]
    pub raw: Vec<u8>,
    /// Who started it, as the catalog records it.
    pub by: String,
    /// The command line run (the program's path left out).
    pub command: Vec<String>,
    pub started: i64,
    pub finished: Option<i64>,
    /// Its exit status (None while it runs, or if it was killed by a signal).
    pub exit: Option<i32>,
    /// Its standard output and error (their end), interleaved as they came.
    pub output: String,
}

impl Action {
    /// A copy without the output (lists show none: its 64 KiB are not copied).
    fn without_output(&self) -> Action {
        Action {
            id: self.id,
            tree: self.tree,
            kind: self.kind,
            path: self.path.clone(),
            raw: self.raw.clone(),
            by: self.by.clone(),
            command: self.command.clone(),
            started: self.started,
            finished: self.finished,
            exit: self.exit,
            output: String::new(),
        }
    }
}

/// The actions, running and done.
pub struct Actions {
    exe: PathBuf,
    list: Mutex<VecDeque<Action>>,
    next: Mutex<u64>,
    slots: Arc<tokio::sync::Semaphore>,
}

/// Why an action was not started.
#[derive(Debug, PartialEq, Eq)]
pub enum Refused {
    /// The tree is on another host.
    Elsewhere(String),
    /// An action on this tree is running.
    Busy(u64),
    /// [`MOST_AT_ONCE`] are running.
    Full,
    /// The request cannot be run: in words.
    Bad(String),
}

impl std::fmt::Display for Refused {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Refused::Elsewhere(h) => write!(f, "the tree is on {h}: run its actions there"),
            Refused::Busy(id) => write!(f, "action {id} on this tree is still running"),
            Refused::Full => {
                write!(f, "{MOST_AT_ONCE} actions are running: try again when one ends")
            }
            Refused::Bad(why) => f.write_str(why),
        }
    }
}

/// What the form asked for.
pub struct Request<'a> {
    pub kind: Kind,
    /// The file, relative to the tree's root (raw bytes); empty for the whole tree.
    pub path: &'a [u8],
    /// `repair --from DIR`.
    pub from: Option<&'a str>,
    pub by: String,
}

impl Actions {
    pub fn new(exe: PathBuf) -> Actions {
        Actions {
            exe,
            list: Mutex::new(VecDeque::new()),
            next: Mutex::new(1),
            slots: Arc::new(tokio::sync::Semaphore::new(MOST_AT_ONCE)),
        }
    }

    /// The actions, newest first.
    pub fn list(&self) -> Vec<Action> {
        self.list.lock().unwrap_or_else(|e| e.into_inner()).iter().rev().cloned().collect()
    }

    /// The actions without their output, newest first (for lists).
    pub fn brief(&self) -> Vec<Action> {
        let list = self.list.lock().unwrap_or_else(|e| e.into_inner());
        list.iter().rev().map(Action::without_output).collect()
    }

    /// The actions on the file `raw` of tree `tree`, without their output.
    pub fn on(&self, tree: usize, raw: &[u8]) -> Vec<Action> {
        self.brief().into_iter().filter(|a| a.tree == tree && a.raw == raw).collect()
    }

    /// Each action's number, end and output length: what changes as it runs (the events
    /// ask every half second, copying no output).
    pub fn states(&self) -> Vec<(u64, Option<i64>, usize)> {
        let list = self.list.lock().unwrap_or_else(|e| e.into_inner());
        list.iter().map(|a| (a.id, a.finished, a.output.len())).collect()
    }

    pub fn get(&self, id: u64) -> Option<Action> {
        self.list.lock().unwrap_or_else(|e| e.into_inner()).iter().find(|a| a.id == id).cloned()
    }

    /// Starts `req` on `tree`; `done` is called when it ends. Its id.
    pub fn start(
        self: &Arc<Self>,
        tree: &Tree,
        req: Request<'_>,
        done: impl FnOnce() + Send + 'static,
    ) -> Result<u64, Refused> {
        if !tree.local {
            return Err(Refused::Elsewhere(tree.host.clone()));
        }
        let args = command(tree, &req)?;
        let permit = self.slots.clone().try_acquire_owned().map_err(|_| Refused::Full)?;
        let id = {
            let mut list = self.list.lock().unwrap_or_else(|e| e.into_inner());
            if let Some(a) = list.iter().find(|a| a.tree == tree.id && a.finished.is_none()) {
                return Err(Refused::Busy(a.id));
            }
            let mut next = self.next.lock().unwrap_or_else(|e| e.into_inner());
            let id = *next;
            *next += 1;
            if list.len() >= KEPT
                && let Some(i) = list.iter().position(|a| a.finished.is_some())
            {
                list.remove(i);
            }
            list.push_back(Action {
                id,
                tree: tree.id,
                kind: req.kind,
                path: String::from_utf8_lossy(req.path).into_owned(),
                raw: req.path.to_vec(),
                by: req.by.clone(),
                // As shown: a PostgreSQL URL's password masked (the child gets it whole).
                command: args
                    .iter()
                    .map(|a| fixity::catalog::postgres::mask(&a.to_string_lossy()))
                    .collect(),
                started: fixity::clock::now_ms(),
                finished: None,
                exit: None,
                output: String::new(),
            });
            id
        };
        let me = self.clone();
        let by = req.by;
        tokio::spawn(async move {
            let _permit = permit;
            let exit = me.run(id, &args, &by).await;
            me.update(id, |a| {
                a.finished = Some(fixity::clock::now_ms());
                a.exit = exit;
            });
            done();
        });
        Ok(id)
    }

    /// Runs the child, its output gathered into the action as it comes.
    async fn run(&self, id: u64, args: &[std::ffi::OsString], by: &str) -> Option<i32> {
        let child = tokio::process::Command::new(&self.exe)
            .args(args)
            .env("FIXITY_ACTOR", by)
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .kill_on_drop(false)
            .spawn();
        let mut child = match child {
            Ok(c) => c,
            Err(e) => {
                self.update(id, |a| {
                    a.output = format!("cannot start {}: {e}\n", self.exe.display())
                });
                return None;
            }
        };
        let (mut out, mut err) = (child.stdout.take()?, child.stderr.take()?);
        let (mut b1, mut b2) = ([0u8; 8192], [0u8; 8192]);
        let (mut out_open, mut err_open) = (true, true);
        while out_open || err_open {
            let got = tokio::select! {
                n = out.read(&mut b1), if out_open => (n, true),
                n = err.read(&mut b2), if err_open => (n, false),
            };
            match got {
                (Ok(0) | Err(_), true) => out_open = false,
                (Ok(0) | Err(_), false) => err_open = false,
                (Ok(n), first) => {
                    let text = String::from_utf8_lossy(if first { &b1[..n] } else { &b2[..n] })
                        .into_owned();
                    self.update(id, |a| {
                        a.output.push_str(&text);
                        if a.output.len() > OUTPUT {
                            let cut = a.output.len() - OUTPUT;
                            let cut = (cut..a.output.len())
                                .find(|&i| a.output.is_char_boundary(i))
                                .unwrap_or(cut);
                            a.output.replace_range(..cut, "");
                        }
                    });
                }
            }
        }
        child.wait().await.ok().and_then(|s| s.code())
    }

    fn update(&self, id: u64, f: impl FnOnce(&mut Action)) {
        let mut list = self.list.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(a) = list.iter_mut().find(|a| a.id == id) {
            f(a);
        }
    }
}

/// The command line of `req` on `tree`, as a person would type it.
fn command(tree: &Tree, req: &Request<'_>) -> Result<Vec<std::ffi::OsString>, Refused> {
    use fixity::sys::OsStrExt;
    let root = PathBuf::from(std::ffi::OsStr::from_bytes(&tree.root));
    if req.path.split(|&b| b == b'/').any(|c| c.is_empty() || c == b"." || c == b"..")
        && !req.path.is_empty()
    {
        return Err(Refused::Bad("a path inside the tree, without . or .. or empty parts".into()));
    }
    let file = (!req.path.is_empty()).then(|| root.join(std::ffi::OsStr::from_bytes(req.path)));
    let catalog = ["--catalog".into(), tree.catalog.clone().into_os_string()];
    let mut args: Vec<std::ffi::OsString> = vec![req.kind.word().into()];
    match req.kind {
        Kind::Verify => {
            args.extend(catalog);
            // A file is verified with its directory (verify takes directories).
            let dir = file.as_deref().and_then(Path::parent).unwrap_or(&root).to_path_buf();
            args.push(dir.into_os_string());
        }
        Kind::Repair => {
            args.extend(catalog);
            if let Some(from) = req.from.filter(|f| !f.trim().is_empty()) {
                args.extend(["--from".into(), from.trim().into()]);
            }
            args.push(root.clone().into_os_string());
            args.extend(file.map(PathBuf::into_os_string));
        }
        Kind::Accept | Kind::Forget => {
            let Some(file) = file else {
                return Err(Refused::Bad(format!("{} names a file", req.kind.word())));
            };
            args.extend(catalog);
            args.extend(["--tree".into(), root.clone().into_os_string(), file.into_os_string()]);
        }
    }
    Ok(args)
}

#[cfg(test)]
mod tests {
    use super::*;
    use fixity::catalog::StoreSpec;

    fn tree() -> Tree {
        Tree {
            id: 0,
            host: "h".into(),
            root: b"/srv/data".to_vec(),
            spec: StoreSpec::Sqlite("/srv/data/.fixity/catalog.db".into()),
            catalog: "/srv/data/.fixity/catalog.db".into(),
            local: true,
        }
    }

    fn line(kind: Kind, path: &[u8], from: Option<&str>) -> Result<String, Refused> {
        let req = Request { kind, path, from, by: "alice".into() };
        command(&tree(), &req).map(|a| {
            a.iter().map(|s| s.to_string_lossy().into_owned()).collect::<Vec<_>>().join(" ")
        })
    }

    #[test]
    fn each_action_is_the_cli_command_a_person_would_type() {
        let cat = "--catalog /srv/data/.fixity/catalog.db";
        assert_eq!(
            line(Kind::Verify, b"a/b.jpg", None).unwrap(),
            format!("verify {cat} /srv/data/a")
        );
        assert_eq!(line(Kind::Verify, b"", None).unwrap(), format!("verify {cat} /srv/data"));
        assert_eq!(
            line(Kind::Repair, b"a/b.jpg", Some(" /mnt/backup ")).unwrap(),
            format!("repair {cat} --from /mnt/backup /srv/data /srv/data/a/b.jpg")
        );
        assert_eq!(line(Kind::Repair, b"", Some("")).unwrap(), format!("repair {cat} /srv/data"));
        assert_eq!(
            line(Kind::Accept, b"a/b.jpg", None).unwrap(),
            format!("accept {cat} --tree /srv/data /srv/data/a/b.jpg")
        );
        assert_eq!(
            line(Kind::Forget, b"gone", None).unwrap(),
            format!("forget {cat} --tree /srv/data /srv/data/gone")
        );
    }

    #[test]
    fn a_path_that_could_leave_the_tree_is_refused() {
        for bad in [&b"../etc/passwd"[..], b"a/../../x", b"/etc", b"a//b", b"./a"] {
            assert!(matches!(line(Kind::Repair, bad, None), Err(Refused::Bad(_))), "{bad:?}");
        }
        assert!(matches!(line(Kind::Accept, b"", None), Err(Refused::Bad(_))));
    }
}
