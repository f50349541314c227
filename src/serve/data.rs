//! The data of each page, as the API gives it (`/api/...`, schemas in docs/json) and as
//! the pages render it: the fleet's rows and a tree's state from the snapshot, a page of
//! findings and one file's record read from the catalog when asked.

use super::state::{Snapshot, Tree, View};
use fixity::catalog::{History, OpenOptions, open_store};
use fixity::monitor::Findings;
use fixity::report::{Finding, PathText, Run};
use serde::Serialize;

pub use super::state::{PAGE, Recovery};

/// The fleet page: every tree.
#[derive(Serialize)]
pub struct Fleet {
    /// The snapshot's number: it goes up when anything shown changes.
    pub version: u64,
    /// When the catalogs were last looked at (ms).
    pub looked_at: i64,
    /// Why the list of trees could not be read (a fleet's server gone), if so.
    pub trouble: Option<String>,
    /// The coverage window, in days.
    pub window_days: u32,
    pub trees: Vec<Row>,
}

/// One tree on the fleet page.
#[derive(Serialize)]
pub struct Row {
    pub id: usize,
    pub host: String,
    pub tree: PathText,
    pub algorithm: String,
    /// OK, WARNING, CRITICAL or UNKNOWN, as `status --nagios` judges.
    pub state: &'static str,
    /// `status --nagios`'s line.
    pub judgement: String,
    pub files: u64,
    pub bytes: u64,
    pub findings: Findings,
    pub imported_unverified: u64,
    pub last_scan: Option<i64>,
    pub last_verify: Option<i64>,
    pub last_complete_pass: Option<i64>,
    /// Files verified within the window, and their share of the files present.
    pub coverage: Coverage,
    /// The least recently verified file and when (0: never).
    pub oldest_verified: Option<Oldest>,
    /// The pass under way: files and bytes left.
    pub pass: Option<fixity::catalog::PassUnderWay>,
    /// A run going on now, in words.
    pub running: Option<String>,
    /// Why the catalog could not be read at the last look, if so (the rest is the look
    /// before).
    pub trouble: Option<String>,
    /// When the catalog was last read (ms).
    pub read_at: i64,
    /// On this host: actions can run.
    pub local: bool,
}

#[derive(Serialize)]
pub struct Coverage {
    pub days: u32,
    pub files: u64,
    pub share: f64,
}

#[derive(Serialize)]
pub struct Oldest {
    pub path: PathText,
    pub time: i64,
}

/// A tree's page.
#[derive(Serialize)]
pub struct TreePage {
    #[serde(flatten)]
    pub row: Row,
    /// Files verified within 1, 7 and 30 days.
    pub verified_within: Vec<Coverage>,
    /// The last runs, newest first.
    pub runs: Vec<Run>,
    /// The last comparison with each remote copy.
    pub remotes: Vec<serde_json::Value>,
    /// The tamper-evidence chain's head.
    pub proof: Option<Proof>,
    /// The recovery data (PAR2 sets) in the tree's default place, on this host.
    pub recovery: Option<Recovery>,
    /// A page of the standing findings, by path (`findings` is the row's counts).
    #[serde(rename = "findings_page")]
    pub findings: FindingsPage,
}

/// A finding, with its path's raw bytes for links.
#[derive(Serialize)]
pub struct Item {
    #[serde(flatten)]
    pub finding: Finding,
    #[serde(skip)]
    pub raw: Vec<u8>,
}

#[derive(Serialize)]
pub struct Proof {
    pub seq: u64,
    pub at: i64,
    pub head: String,
}

#[derive(Serialize)]
pub struct FindingsPage {
    pub items: Vec<Item>,
    /// The `after` of the next page (percent-encoded path), if there is one.
    pub next: Option<String>,
    /// Why the findings could not be read, if so.
    pub trouble: Option<String>,
}

/// One file's page.
#[derive(Serialize)]
pub struct FilePage {
    pub tree: usize,
    pub path: PathText,
    /// What the catalog records (none: not in the catalog).
    pub record: Option<FileRecord>,
    /// What is there now (on this host): size and mtime, or why not.
    pub now: Option<OnDisk>,
    pub trouble: Option<String>,
}

/// A file's record: its history as the report gives a finding's (with the file's last
/// result when it has none), and where it was moved from.
#[derive(Serialize)]
pub struct FileRecord {
    #[serde(flatten)]
    pub history: Finding,
    pub moved_from: Option<PathText>,
}

#[derive(Serialize)]
pub struct OnDisk {
    pub exists: bool,
    pub size: Option<u64>,
    pub mtime: Option<i64>,
    pub error: Option<String>,
}

/// The fleet page's data.
pub fn fleet(snap: &Snapshot, window_ms: i64) -> Fleet {
    Fleet {
        version: snap.version,
        looked_at: snap.looked_at,
        trouble: snap.trouble.clone(),
        window_days: window_days(window_ms),
        trees: snap.views.iter().map(|v| row(v, window_ms)).collect(),
    }
}

fn window_days(window_ms: i64) -> u32 {
    (window_ms / 86_400_000).clamp(1, u32::MAX as i64) as u32
}

/// A tree's row.
pub fn row(v: &View, window_ms: i64) -> Row {
    let t = &v.tree;
    let s = v.summary.as_ref();
    let files = s.map_or(0, |s| s.files);
    let last =
        |command: &str| v.runs.iter().rev().find(|r| r.command == command).map(|r| r.started);
    // The window's count: the largest of the catalog's 1, 7 and 30 days within it.
    let days = window_days(window_ms);
    let coverage = s
        .and_then(|s| s.verified_within.iter().rev().find(|(d, _)| *d <= days).copied())
        .or_else(|| s.map(|s| s.verified_within[0]))
        .map_or(Coverage { days, files: 0, share: 0.0 }, |(d, n)| Coverage {
            days: d,
            files: n,
            share: share(n, files),
        });
    Row {
        id: t.id,
        host: t.host.clone(),
        tree: PathText::of(&t.root),
        algorithm: v.algorithm.clone(),
        state: v.verdict.state.word(),
        judgement: v.verdict.line.clone(),
        files,
        bytes: s.map_or(0, |s| s.bytes),
        findings: s.map(Findings::of).unwrap_or_default(),
        imported_unverified: s.map_or(0, |s| s.imported),
        last_scan: last("scan"),
        last_verify: last("verify"),
        last_complete_pass: s.and_then(|s| s.pass.last_completed),
        coverage,
        oldest_verified: s
            .and_then(|s| s.oldest_verified.as_ref())
            .map(|(p, t)| Oldest { path: PathText::of(p), time: *t }),
        pass: s.and_then(|s| s.pass.under_way),
        running: v.running.clone(),
        trouble: v.trouble.clone(),
        read_at: v.read_at,
        local: t.local,
    }
}

fn share(n: u64, of: u64) -> f64 {
    if of == 0 { 1.0 } else { n as f64 / of as f64 }
}

/// A tree's page, its findings from `after` (a path) on.
pub fn tree(v: &View, window_ms: i64, after: Option<&[u8]>) -> TreePage {
    let row = row(v, window_ms);
    let files = row.files;
    TreePage {
        row,
        verified_within: v.summary.as_ref().map_or_else(Vec::new, |s| {
            s.verified_within
                .iter()
                .map(|&(days, n)| Coverage { days, files: n, share: share(n, files) })
                .collect()
        }),
        runs: v.runs.iter().rev().map(Run::of).collect(),
        remotes: v
            .remotes
            .iter()
            .map(|r| {
                serde_json::json!({
                    "remote": r.remote, "started": r.started, "finished": r.finished,
                    "complete": r.complete,
                    "summary": serde_json::from_str::<serde_json::Value>(&r.summary).unwrap_or_default(),
                })
            })
            .collect(),
        proof: v.proof.as_ref().map(|(seq, at, head)| Proof { seq: *seq, at: *at, head: head.clone() }),
        recovery: v.recovery.clone(),
        findings: match (after, &v.first_findings) {
            (None, Ok(first)) => page_of(first.clone()),
            (None, Err(why)) => FindingsPage { items: Vec::new(), next: None, trouble: Some(why.clone()) },
            (Some(_), _) => findings(&v.tree, after),
        },
    }
}

/// A page of the standing findings after `after`.
pub fn findings(t: &Tree, after: Option<&[u8]>) -> FindingsPage {
    let how = OpenOptions { read_only: true, ..OpenOptions::default() };
    match open_store(&t.spec, &how).and_then(|s| s.history_page(after, PAGE + 1, true)) {
        Ok(page) => page_of(page),
        Err(e) => FindingsPage { items: Vec::new(), next: None, trouble: Some(e.to_string()) },
    }
}

/// A page of findings from [`PAGE`] + 1 rows of the history (the last one only says
/// there is a next page).
fn page_of(mut page: Vec<History>) -> FindingsPage {
    let more = page.len() > PAGE;
    page.truncate(PAGE);
    FindingsPage {
        next: more.then(|| page.last().map(|h| super::html::enc(&h.path))).flatten(),
        items: page
            .iter()
            .filter_map(|h| {
                h.finding().map(|c| Item { finding: Finding::of(h, c), raw: h.path.clone() })
            })
            .collect(),
        trouble: None,
    }
}

/// The page of the file at `path` in tree `t`.
pub fn file(t: &Tree, path: &[u8]) -> FilePage {
    let how = OpenOptions { read_only: true, ..OpenOptions::default() };
    let (record, trouble) =
        match open_store(&t.spec, &how).and_then(|s| history_of(s.as_ref(), path)) {
            Ok(h) => (h.map(|h| file_record(&h)), None),
            Err(e) => (None, Some(e.to_string())),
        };
    FilePage { tree: t.id, path: PathText::of(path), record, now: on_disk(t, path), trouble }
}

/// The history of one path: the page of the history that starts just before it.
fn history_of(
    store: &dyn fixity::catalog::Store,
    path: &[u8],
) -> Result<Option<History>, fixity::catalog::StoreError> {
    let Some((&last, head)) = path.split_last() else { return Ok(None) };
    // The greatest path below `path` in byte order that a real name could be, within
    // reason: the head, the last byte one less, then 0xFF bytes.
    let before: Option<Vec<u8>> = if last == 0 {
        Some(head.to_vec())
    } else {
        Some([head, &[last - 1], &[0xFF; 16][..]].concat())
    };
    let page = store.history_page(before.as_deref(), 4, false)?;
    Ok(page.into_iter().find(|h| h.path == path))
}

fn file_record(h: &History) -> FileRecord {
    FileRecord {
        history: Finding::of(h, h.finding().unwrap_or(h.last_result)),
        moved_from: h.moved_from.as_deref().map(PathText::of),
    }
}

/// What is at `path` now, on this host.
fn on_disk(t: &Tree, path: &[u8]) -> Option<OnDisk> {
    use fixity::sys::OsStrExt;
    if !t.local {
        return None;
    }
    let full = std::path::Path::new(std::ffi::OsStr::from_bytes(&t.root))
        .join(std::ffi::OsStr::from_bytes(path));
    Some(match std::fs::symlink_metadata(&full) {
        Ok(m) => OnDisk {
            exists: true,
            size: Some(m.len()),
            mtime: m
                .modified()
                .ok()
                .and_then(|t| t.duration_since(std::time::UNIX_EPOCH).ok())
                .map(|d| d.as_millis() as i64),
            error: None,
        },
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            OnDisk { exists: false, size: None, mtime: None, error: None }
        }
        Err(e) => OnDisk { exists: false, size: None, mtime: None, error: Some(e.to_string()) },
    })
}
