//! What the pages show, kept in memory: a thread looks at every tree's catalog again
//! every `--refresh` seconds (only a catalog that changed is read again: its file and WAL
//! for SQLite, its row in the fleet's summary for PostgreSQL), and publishes a new
//! [`Snapshot`]; pages and the API read the snapshot, never a catalog's whole table, so a
//! page answers in the time of rendering it, whatever the size of the trees. A catalog
//! that cannot be read (busy, locked, a server gone) keeps its last view with the reason
//! beside it, and is tried again at the next look: the server never needs a restart.

use fixity::catalog::postgres::{PgSpec, TreeState};
use fixity::catalog::{OpenOptions, RemoteCheck, RunInfo, StoreSpec, Summary, open_store};
use fixity::clock::now_ms;
use fixity::monitor::nagios::{self, Thresholds, Verdict};
use fixity::pathtext::quote_env;
use std::path::PathBuf;
use std::sync::{Arc, RwLock};
use std::time::{Duration, Instant};

/// Findings on a page.
pub const PAGE: usize = 100;

/// The recovery data (PAR2 sets) in a tree's default place, on this host.
#[derive(Clone, Debug, serde::Serialize)]
pub struct Recovery {
    pub dir: String,
    pub files: u64,
    pub bytes: u64,
    pub newest: Option<i64>,
}

/// A tree the server shows.
#[derive(Debug)]
pub struct Tree {
    /// Its place in the list (stable while the server runs).
    pub id: usize,
    /// The host it is on.
    pub host: String,
    /// Its root: an absolute path, raw bytes.
    pub root: Vec<u8>,
    pub spec: StoreSpec,
    /// What its child commands get as `--catalog`.
    pub catalog: PathBuf,
    /// On this host: actions can run here.
    pub local: bool,
}

impl Tree {
    /// The tree as pages name it.
    pub fn shown(&self) -> String {
        quote_env(&self.root)
    }
}

/// What the server knows of one tree.
#[derive(Clone, Debug)]
pub struct View {
    pub tree: Arc<Tree>,
    pub algorithm: String,
    /// What the catalog said at the last successful look.
    pub summary: Option<Summary>,
    pub verdict: Verdict,
    /// The last runs, oldest first.
    pub runs: Vec<RunInfo>,
    pub remotes: Vec<RemoteCheck>,
    /// The tamper-evidence chain's head: its number, when, its hash (hex).
    pub proof: Option<(u64, i64, String)>,
    /// The first page of standing findings (one more than a page: is there a next?), read
    /// with the rest, so that the tree page most viewers load reads no catalog; or why it
    /// could not be read.
    pub first_findings: Result<Vec<fixity::catalog::History>, String>,
    /// The tree's recovery data, looked at with its catalog (`protect` changes both).
    pub recovery: Option<Recovery>,
    /// A run going on now, in words.
    pub running: Option<String>,
    /// Why the last look failed, if it did.
    pub trouble: Option<String>,
    /// When the catalog was last read (ms).
    pub read_at: i64,
    /// What the catalog looked like then: a change of it is what makes the next look read.
    stamp: String,
}

/// Every tree's view at one moment.
#[derive(Debug, Default)]
pub struct Snapshot {
    /// Goes up by one with every change.
    pub version: u64,
    pub views: Vec<Arc<View>>,
    /// Why the list of trees could not be read (the fleet's server), if it could not.
    pub trouble: Option<String>,
    /// When the last look ended (ms).
    pub looked_at: i64,
}

/// The trees of a look, each with its fleet row (PostgreSQL) as a stamp, and why the
/// list could not be had.
type Listed = (Vec<(Arc<Tree>, Option<String>)>, Option<String>);

/// Where the trees come from.
pub enum Source {
    /// The trees named on the command line.
    Local(Vec<Arc<Tree>>),
    /// Every tree of a PostgreSQL catalog (of one host).
    Fleet { url: String, host: Option<String> },
}

/// The snapshot, shared with the pages, and the signal of a new one.
pub struct Shared {
    pub snapshot: RwLock<Arc<Snapshot>>,
    pub changed: tokio::sync::watch::Sender<u64>,
    /// Asks the looker to look now (an action ended).
    pub poke: crossbeam_channel::Sender<()>,
}

impl Shared {
    pub fn get(&self) -> Arc<Snapshot> {
        self.snapshot.read().unwrap_or_else(|e| e.into_inner()).clone()
    }

    pub fn view(&self, id: usize) -> Option<Arc<View>> {
        self.get().views.iter().find(|v| v.tree.id == id).cloned()
    }
}

/// The looker's settings.
pub struct Looker {
    pub source: Source,
    pub thresholds: Thresholds,
    pub every: Duration,
    pub runs_kept: usize,
    /// Reads still waiting (on another program's lock, a server that does not answer),
    /// by tree: a tree is read again only once its last read has ended.
    pub pending:
        std::collections::HashMap<usize, crossbeam_channel::Receiver<Result<Read, String>>>,
}

/// How long a look waits for one catalog before it shows the last look with the reason.
const DEADLINE: Duration = Duration::from_secs(5);

impl Looker {
    /// Starts the looking thread; returns what it shares, after a first look.
    pub fn start(self) -> Arc<Shared> {
        let (tx, _) = tokio::sync::watch::channel(0);
        let (poke, poked) = crossbeam_channel::bounded(1);
        let shared = Arc::new(Shared { snapshot: RwLock::new(Arc::default()), changed: tx, poke });
        let mut me = self;
        let mut ids: Vec<(String, Vec<u8>)> = Vec::new();
        me.look(&shared, &mut ids);
        let s = shared.clone();
        std::thread::Builder::new()
            .name("fixity-serve-look".into())
            .spawn(move || {
                loop {
                    let began = Instant::now();
                    me.look(&s, &mut ids);
                    // A look that takes long (a million-file catalog changing under a
                    // verify) is not repeated back to back: at most a fifth of the time.
                    let wait = me.every.max(began.elapsed() * 4);
                    let _ = poked.recv_timeout(wait);
                }
            })
            .expect("cannot start a thread");
        shared
    }

    /// One look at every tree; publishes a new snapshot when anything changed.
    fn look(&mut self, shared: &Shared, ids: &mut Vec<(String, Vec<u8>)>) {
        let old = shared.get();
        let (trees, trouble) = self.trees(ids, &old);
        let mut changed = trouble != old.trouble || trees.len() != old.views.len();
        let views: Vec<Arc<View>> = trees
            .into_iter()
            .map(|(tree, fleet_row)| {
                let before = old.views.iter().find(|v| v.tree.id == tree.id).cloned();
                let view = self.look_at(tree, fleet_row, before.as_deref());
                match (before, view) {
                    (Some(b), None) => b,
                    (_, Some(v)) => {
                        changed = true;
                        Arc::new(v)
                    }
                    (None, None) => unreachable!("a first look always makes a view"),
                }
            })
            .collect();
        let version = old.version + u64::from(changed);
        let snap = Snapshot { version, views, trouble, looked_at: now_ms() };
        *shared.snapshot.write().unwrap_or_else(|e| e.into_inner()) = Arc::new(snap);
        if changed {
            let _ = shared.changed.send(version);
        }
    }

    /// The trees to look at, each with its fleet row (PostgreSQL), and why the list could
    /// not be had (the last list is kept then).
    fn trees(&self, ids: &mut Vec<(String, Vec<u8>)>, old: &Snapshot) -> Listed {
        match &self.source {
            Source::Local(trees) => (trees.iter().map(|t| (t.clone(), None)).collect(), None),
            Source::Fleet { url, host } => {
                match fixity::catalog::postgres::fleet(url, host.as_deref()) {
                    Ok(rows) => (
                        rows.iter()
                            .map(|r| (fleet_tree(url, r, ids), Some(format!("{r:?}"))))
                            .collect(),
                        None,
                    ),
                    Err(e) => (
                        old.views.iter().map(|v| (v.tree.clone(), None)).collect(),
                        Some(format!(
                            "cannot read the fleet from {}: {e}",
                            fixity::catalog::postgres::mask(url)
                        )),
                    ),
                }
            }
        }
    }

    /// A new view of `tree`, or `None` when its catalog has not changed since `before`.
    fn look_at(
        &mut self,
        tree: Arc<Tree>,
        fleet_row: Option<String>,
        before: Option<&View>,
    ) -> Option<View> {
        let stamp = fleet_row.unwrap_or_else(|| stamp(&tree.spec));
        let was_running = before.is_some_and(|b| b.running.is_some());
        if let Some(b) = before
            && b.stamp == stamp
            && b.trouble.is_none()
            && !was_running
            && !stamp.is_empty()
        {
            return None;
        }
        let now = now_ms();
        let (read, fresh) = self.read_within(&tree, now);
        // A read that waited past a look may have seen the catalog before a later write:
        // its view keeps no stamp, so the next look reads again.
        let stamp = if fresh { stamp } else { String::new() };
        match read {
            Ok(r) => {
                let verdict = nagios::judge(&tree.shown(), &r.summary, now, &self.thresholds);
                let running = running(&tree, &r.runs, now);
                let recovery = recovery(&tree);
                let same = before.is_some_and(|b| {
                    b.trouble.is_none()
                        && b.running == running
                        && b.summary.as_ref() == Some(&r.summary)
                        && b.runs == r.runs
                });
                if same {
                    return None;
                }
                Some(View {
                    tree,
                    algorithm: r.algorithm,
                    summary: Some(r.summary),
                    verdict,
                    runs: r.runs,
                    remotes: r.remotes,
                    proof: r.proof,
                    first_findings: r.first_findings,
                    recovery,
                    running,
                    trouble: None,
                    read_at: now,
                    stamp,
                })
            }
            // The last look stays, with the reason beside it (and no stamp: the next look
            // reads again).
            Err(why) => match before {
                Some(b) if b.trouble.as_deref() == Some(why.as_str()) => None,
                Some(b) => {
                    Some(View { tree, trouble: Some(why), stamp: String::new(), ..b.clone() })
                }
                None => Some(View {
                    tree,
                    algorithm: String::new(),
                    summary: None,
                    verdict: nagios::unknown(&why),
                    runs: Vec::new(),
                    remotes: Vec::new(),
                    proof: None,
                    first_findings: Ok(Vec::new()),
                    recovery: None,
                    running: None,
                    trouble: Some(why),
                    read_at: 0,
                    stamp: String::new(),
                }),
            },
        }
    }
}

impl Looker {
    /// A read of `tree`'s catalog that waits at most [`DEADLINE`]: a read that waits longer
    /// goes on in its thread, and the next look takes its result. The flag says whether
    /// the read began at this look (false: a read left over from an earlier look).
    fn read_within(&mut self, tree: &Arc<Tree>, now: i64) -> (Result<Read, String>, bool) {
        use crossbeam_channel::{RecvTimeoutError, TryRecvError};
        let busy = || {
            format!(
                "the catalog is busy or locked: a read has waited more than {} s (another \
                 program holds its lock, or its server does not answer); showing the last look, \
                 trying again",
                DEADLINE.as_secs()
            )
        };
        if let Some(rx) = self.pending.get(&tree.id) {
            match rx.try_recv() {
                Ok(r) => {
                    self.pending.remove(&tree.id);
                    return (r, false);
                }
                Err(TryRecvError::Empty) => return (Err(busy()), false),
                Err(TryRecvError::Disconnected) => {
                    self.pending.remove(&tree.id);
                }
            }
        }
        let (tx, rx) = crossbeam_channel::bounded(1);
        let (t, runs) = (tree.clone(), self.runs_kept);
        let spawned =
            std::thread::Builder::new().name("fixity-serve-read".into()).spawn(move || {
                let _ = tx.send(read(&t, runs, now));
            });
        if let Err(e) = spawned {
            return (Err(format!("cannot start a thread to read the catalog: {e}")), true);
        }
        match rx.recv_timeout(DEADLINE) {
            Ok(r) => (r, true),
            Err(RecvTimeoutError::Timeout) => {
                self.pending.insert(tree.id, rx);
                (Err(busy()), true)
            }
            Err(RecvTimeoutError::Disconnected) => {
                (Err("the read of the catalog failed".into()), true)
            }
        }
    }
}

/// What one read of a catalog gives.
pub struct Read {
    algorithm: String,
    summary: Summary,
    runs: Vec<RunInfo>,
    remotes: Vec<RemoteCheck>,
    proof: Option<(u64, i64, String)>,
    first_findings: Result<Vec<fixity::catalog::History>, String>,
}

/// Reads what the views show from the tree's catalog, or says why it cannot.
fn read(tree: &Tree, runs: usize, now: i64) -> Result<Read, String> {
    let how = OpenOptions { read_only: true, ..OpenOptions::default() };
    let store = open_store(&tree.spec, &how).map_err(|e| trouble(&e.to_string()))?;
    let r = (|| {
        Ok::<_, fixity::catalog::StoreError>(Read {
            algorithm: store.algorithm().name.to_string(),
            summary: store.summary(now)?,
            runs: store.run_history(runs).unwrap_or_default(),
            first_findings: store.history_page(None, PAGE + 1, true).map_err(|e| e.to_string()),
            remotes: store.remote_checks().unwrap_or_default(),
            proof: store.last_proof().ok().flatten().map(|e| {
                (e.seq, e.at, e.head.iter().map(|b| format!("{b:02x}")).collect::<String>())
            }),
        })
    })();
    r.map_err(|e| trouble(&e.to_string()))
}

/// A catalog's failure in the words a page shows.
fn trouble(why: &str) -> String {
    if why.contains("locked") || why.contains("busy") {
        format!(
            "the catalog is busy (another run holds it): {why}; showing the last look, trying again"
        )
    } else {
        format!("cannot read the catalog: {why}; showing the last look, trying again")
    }
}

/// A run going on now: the last run has not ended and (SQLite) a run holds the
/// catalog's lock. An unfinished run with no holder was interrupted: none.
fn running(tree: &Tree, runs: &[RunInfo], now: i64) -> Option<String> {
    let last = runs.last().filter(|r| r.finished.is_none())?;
    let held = match &tree.spec {
        StoreSpec::Sqlite(p) => fixity::catalog::lock::held(p),
        // The fleet's runs hold no lock this server can see: a run that began within a
        // day and has not ended is taken as going on.
        _ => now - last.started < 86_400_000,
    };
    held.then(|| {
        format!("{} running since {} UTC", last.command, fixity::clock::format_time(last.started))
    })
}

/// What a SQLite catalog's files look like (size and mtime of the database and its WAL):
/// equal stamps, an unchanged catalog. Empty for other stores (always read).
fn stamp(spec: &StoreSpec) -> String {
    let StoreSpec::Sqlite(p) = spec else { return String::new() };
    let of = |p: &std::path::Path| std::fs::metadata(p).ok().map(|m| (m.len(), m.modified().ok()));
    let mut wal = p.as_os_str().to_owned();
    wal.push("-wal");
    format!("{:?} {:?}", of(p), of(std::path::Path::new(&wal)))
}

/// The fleet's tree of a row, its id kept from earlier looks.
fn fleet_tree(url: &str, row: &TreeState, ids: &mut Vec<(String, Vec<u8>)>) -> Arc<Tree> {
    let key = (row.host.clone(), row.root.clone());
    let id = match ids.iter().position(|k| *k == key) {
        Some(i) => i,
        None => {
            ids.push(key);
            ids.len() - 1
        }
    };
    let mut spec = PgSpec::new(url, Some(&row.host), std::path::Path::new("/"));
    spec.tree = row.root.clone();
    let this = fixity::catalog::postgres::this_host();
    Arc::new(Tree {
        id,
        host: row.host.clone(),
        root: row.root.clone(),
        spec: StoreSpec::Postgres(spec),
        catalog: PathBuf::from(url),
        local: row.host == this,
    })
}

/// The PAR2 sets under the tree's `.fixity/par2` (on this host).
fn recovery(t: &Tree) -> Option<Recovery> {
    use fixity::sys::OsStrExt;
    if !t.local {
        return None;
    }
    let root = std::path::Path::new(std::ffi::OsStr::from_bytes(&t.root));
    let dir = root.join(".fixity").join("par2");
    let mut r =
        Recovery { dir: dir.to_string_lossy().into_owned(), files: 0, bytes: 0, newest: None };
    let mut stack = vec![dir];
    let mut seen = 0usize;
    while let Some(d) = stack.pop() {
        let Ok(list) = std::fs::read_dir(&d) else { continue };
        for e in list.flatten() {
            // Bounded: the page never walks more than this many entries.
            seen += 1;
            if seen > 200_000 {
                return Some(r);
            }
            let Ok(m) = e.metadata() else { continue };
            if m.is_dir() {
                stack.push(e.path());
            } else if e.file_name().to_string_lossy().ends_with(".par2") {
                r.files += 1;
                r.bytes += m.len();
                let t =
                    m.modified().ok().and_then(|t| t.duration_since(std::time::UNIX_EPOCH).ok());
                r.newest = r.newest.max(t.map(|t| t.as_millis() as i64));
            }
        }
    }
    (r.files > 0).then_some(r)
}
