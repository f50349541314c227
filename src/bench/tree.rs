//! `bench tree`: fixity's own pipeline over a file or tree per algorithm, the plain-read
//! ceiling measured the same way, the peers on the same data, warm or cold.

use super::peers::{self, Agreement};
use super::{Bound, Machine, Stats};
use crate::algo::Algorithm;
use crate::device;
use crate::digest::Digest;
use crate::formats::{FileEntry, OutputFormat, WriteOptions};
use crate::pathtext::path_bytes;
use crate::pipeline::{self, Config, Task, Work};
use crate::sources::{Source, Sources};
use serde::Serialize;
use std::collections::HashMap;
use std::io;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Instant;

/// What one pass over the data produced.
#[derive(Debug, Default)]
pub(crate) struct Pass {
    /// Files read.
    pub files: u64,
    /// Bytes read.
    pub bytes: u64,
    /// Size of the GNU-style manifest the pass would write.
    pub manifest_bytes: u64,
    /// Files that could not be read.
    pub errors: u64,
    /// Path -> digest, when asked for (to check peers against).
    pub digests: Option<HashMap<Vec<u8>, Digest>>,
}

/// Reads every file under `path` once with fixity's pipeline, hashing with `algo` (or,
/// with `None`, only reading: the ceiling, read with plain `read` calls into a buffer,
/// as `cat` and `dd` do).
pub(crate) fn pass(
    path: &Path,
    algo: Option<&'static Algorithm>,
    cfg: &Config,
    collect: bool,
) -> Pass {
    let algos: Arc<[&'static Algorithm]> = Arc::from(algo.into_iter().collect::<Vec<_>>());
    let mut cfg = cfg.clone();
    if algo.is_none() {
        cfg.read.mmap_threshold = None;
    }
    let mut out = Pass { digests: collect.then(HashMap::new), ..Pass::default() };
    let mut line = Vec::with_capacity(256);
    let mut writer = algo.map(|a| {
        OutputFormat::Gnu.writer(vec![a], WriteOptions::default()).expect("gnu holds any algorithm")
    });
    pipeline::run(
        &cfg,
        |push| {
            // What a walk skips or cannot list is not data to read: only files count.
            Sources::new(vec![path.into()]).each(&mut |s| match s {
                Source::File { name, path, mode } => push(Task {
                    payload: name,
                    work: Some(Work { path, mode, algos: algos.clone() }),
                }),
                Source::Skipped { .. } | Source::Error { .. } => true,
            });
        },
        |name, outcome| {
            match outcome {
                Some(Ok(h)) => {
                    out.files += 1;
                    out.bytes += h.size;
                    if let (Some(w), Some(d)) = (writer.as_mut(), h.digests.first()) {
                        line.clear();
                        let file = FileEntry {
                            name: &name,
                            size: h.size,
                            mtime: None,
                            digests: &h.digests,
                        };
                        let _ = w.record(&file, &mut line);
                        out.manifest_bytes += line.len() as u64;
                        if let Some(map) = &mut out.digests {
                            map.insert(name, *d);
                        }
                    }
                }
                _ => out.errors += 1,
            }
            true
        },
    );
    out
}

/// How the page cache is emptied before a cold run.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub(crate) enum EvictMethod {
    /// `sync; echo 3 > /proc/sys/vm/drop_caches` (root).
    DropCaches,
    /// `posix_fadvise(POSIX_FADV_DONTNEED)` on every file (no root needed).
    Fadvise,
}

impl EvictMethod {
    /// The best method available to this process.
    pub(crate) fn available() -> EvictMethod {
        let writable =
            std::fs::OpenOptions::new().write(true).open("/proc/sys/vm/drop_caches").is_ok();
        if writable { EvictMethod::DropCaches } else { EvictMethod::Fadvise }
    }

    /// How the report describes it.
    pub(crate) fn describe(self) -> &'static str {
        match self {
            EvictMethod::DropCaches => "sync; echo 3 > /proc/sys/vm/drop_caches before each run",
            EvictMethod::Fadvise => "posix_fadvise(DONTNEED) on every file before each run",
        }
    }
}

/// Empties the page cache of `files` (see [`list_files`]) and checks (with `mincore` on up to 64
/// files spread over the tree) that it worked. Returns the largest resident fraction seen.
pub(crate) fn evict(files: &[PathBuf], method: EvictMethod) -> io::Result<f64> {
    match method {
        EvictMethod::DropCaches => {
            crate::sys::sync_all();
            std::fs::write("/proc/sys/vm/drop_caches", b"3\n")?;
        }
        EvictMethod::Fadvise => {
            for f in files {
                let _ = device::evict(f);
            }
        }
    }
    let step = (files.len() / 64).max(1);
    let mut worst = 0f64;
    for f in files.iter().step_by(step).take(64) {
        if let Ok(r) = device::resident_fraction(f) {
            worst = worst.max(r);
        }
    }
    Ok(worst)
}

/// The files under `path` (or `path` itself), listed once per benchmark for [`evict`].
pub(crate) fn list_files(path: &Path) -> Vec<PathBuf> {
    let mut v = Vec::new();
    Sources::new(vec![path.into()]).each(&mut |s| {
        if let Source::File { path, .. } = s {
            v.push(path);
        }
        true
    });
    v
}

/// One row of the results table.
#[derive(Clone, Debug, Serialize)]
pub struct Row {
    /// `fixity`, `read (ceiling)`, or the peer's name.
    pub tool: String,
    /// Algorithm name (empty for the ceiling).
    pub algorithm: String,
    /// The shell command, for peers.
    pub command: Option<String>,
    /// Seconds over the runs.
    pub seconds: Stats,
    /// Throughput at the median, MB/s (10^6 bytes).
    pub mbps: f64,
    /// Files per second at the median.
    pub files_per_s: f64,
    /// Size of the manifest it writes (fixity: GNU lines; peers: their stdout).
    pub manifest_bytes: Option<u64>,
    /// I/O- or CPU-bound, against the ceiling.
    pub bound: Option<Bound>,
    /// Whether its digests agree with fixity's (peers only).
    pub agreement: Option<Agreement>,
}

/// Settings of a tree benchmark.
#[derive(Clone, Debug)]
pub struct Options {
    /// Algorithms to measure.
    pub algos: Vec<&'static Algorithm>,
    /// Timed runs per row (after one warm-up when warm).
    pub runs: usize,
    /// Evict the data from the page cache before each run.
    pub cold: bool,
    /// Also run the peer tools.
    pub compare: bool,
    /// fixity's engine settings.
    pub engine: Config,
}

/// The whole result.
#[derive(Clone, Debug, Serialize)]
pub struct Report {
    /// The data measured.
    pub path: String,
    /// Its file system type.
    pub fs_type: Option<String>,
    /// The storage policy fixity's runs used, per device, with the evidence (see
    /// [`crate::storage`]).
    pub storage: Vec<String>,
    /// Files and bytes in it.
    pub files: u64,
    /// Total bytes.
    pub bytes: u64,
    /// `warm`, `cold`, or `cold (unverified)` when eviction did not show in mincore.
    pub cache: &'static str,
    /// How the cache was emptied, for cold runs.
    pub eviction: Option<&'static str>,
    /// Whether eviction was confirmed with mincore (false: the "cold" figures are not).
    pub eviction_verified: Option<bool>,
    /// Machine facts.
    pub machine: Machine,
    /// The plain-read ceiling.
    pub ceiling: Row,
    /// fixity and the peers, per algorithm.
    pub rows: Vec<Row>,
    /// Peer tools that would have run but are not installed.
    pub not_installed: Vec<String>,
    /// Anything the reader must know (load, unverified eviction, disagreements).
    pub warnings: Vec<String>,
}

/// Progress events for a display.
pub enum Event<'a> {
    /// The untimed first run of a row (tool, algorithm).
    Start(&'a str, &'a str),
    /// A timed run: (tool, algorithm, round, rounds).
    Timing(&'a str, &'a str, usize, usize),
}

/// One thing being timed.
enum Contestant {
    /// fixity's pipeline with this algorithm (`None`: the read ceiling).
    Fixity(Option<&'static Algorithm>),
    /// A peer's shell command.
    Peer(String),
}

impl Contestant {
    fn time(&self, path: &Path, engine: &Config) -> io::Result<f64> {
        let t = Instant::now();
        match self {
            Contestant::Fixity(algo) => {
                std::hint::black_box(pass(path, *algo, engine, false));
            }
            Contestant::Peer(command) => {
                std::process::Command::new("sh")
                    .arg("-c")
                    .arg(command)
                    .stdout(std::process::Stdio::null())
                    .stderr(std::process::Stdio::null())
                    .status()?;
            }
        }
        Ok(t.elapsed().as_secs_f64())
    }
}

/// Runs the benchmark. Every row first gets its untimed run (a warm-up when warm, and the
/// run whose output is checked); then the timed runs go in rounds, each round timing
/// every row once, so a slow drift of the machine (another tenant, thermal limits)
/// spreads over all rows and shows in each row's min..max instead of favouring whoever
/// ran first.
pub fn run(path: &Path, opts: &Options, progress: &mut dyn FnMut(Event<'_>)) -> io::Result<Report> {
    let mut machine = Machine::probe();
    let is_dir = std::fs::metadata(path)?.is_dir();
    let method = EvictMethod::available();
    let listed = if opts.cold { list_files(path) } else { Vec::new() };
    let mut worst_resident = 0f64;
    let prepare = |worst: &mut f64| -> io::Result<()> {
        if opts.cold {
            *worst = worst.max(evict(&listed, method)?);
        }
        Ok(())
    };
    let runs = opts.runs.max(1);
    let row = |tool: &str, algo: &str, command: Option<String>| Row {
        tool: tool.into(),
        algorithm: algo.into(),
        command,
        seconds: Stats { min: 0.0, median: 0.0, max: 0.0, runs: 0 },
        mbps: 0.0,
        files_per_s: 0.0,
        manifest_bytes: None,
        bound: None,
        agreement: None,
    };

    // The untimed runs: what each row is, its manifest size, and the peers' agreement.
    let mut rows: Vec<(Row, Contestant)> = Vec::new();
    let mut not_installed = Vec::new();
    let mut warnings = Vec::new();
    let cwd = std::env::current_dir()?;
    let path_text = String::from_utf8_lossy(path_bytes(path)).into_owned();
    // The ceiling's untimed run also counts the files and bytes.
    progress(Event::Start("read (ceiling)", ""));
    prepare(&mut worst_resident)?;
    let first = pass(path, None, &opts.engine, false);
    let (files, bytes) = (first.files, first.bytes);
    rows.push((row("read (ceiling)", "", None), Contestant::Fixity(None)));
    for &algo in &opts.algos {
        progress(Event::Start("fixity", algo.name));
        prepare(&mut worst_resident)?;
        let first = pass(path, Some(algo), &opts.engine, opts.compare);
        let mut r = row("fixity", algo.name, None);
        r.manifest_bytes = Some(first.manifest_bytes);
        rows.push((r, Contestant::Fixity(Some(algo))));
        if !opts.compare {
            continue;
        }
        // Keyed as the peers' names are, however the tree was named (absolute, ./d).
        let ours: HashMap<Vec<u8>, Digest> = first
            .digests
            .unwrap_or_default()
            .into_iter()
            .map(|(name, d)| (peers::same_name(&name, &cwd), d))
            .collect();
        for peer in peers::commands_for(algo, &path_text, is_dir, files, machine.cores) {
            if !peer.installed {
                let entry = format!("{} ({})", peer.name, peer.program);
                if !not_installed.contains(&entry) {
                    not_installed.push(entry);
                }
                continue;
            }
            progress(Event::Start(&peer.name, algo.name));
            prepare(&mut worst_resident)?;
            // The untimed run checks the digests (serially, so the lines come out whole)
            // and doubles as the warm-up of the timed command.
            let out = std::process::Command::new("sh")
                .arg("-c")
                .arg(&peer.check_command)
                .stderr(std::process::Stdio::null())
                .output()?;
            if peer.check_command != peer.command {
                std::process::Command::new("sh")
                    .arg("-c")
                    .arg(&peer.command)
                    .stdout(std::process::Stdio::null())
                    .stderr(std::process::Stdio::null())
                    .status()?;
            }
            let agreement = Agreement::of(&ours, &peers::parse_output(&out.stdout, &cwd));
            if !agreement.compared() {
                warnings.push(format!(
                    "{}'s output named none of the {} files fixity hashed: its digests were not \
                     compared",
                    peer.name, agreement.missing
                ));
            }
            if agreement.disagrees() {
                warnings.push(format!(
                    "{} DISAGREES with fixity's {} digests: {}",
                    peer.name,
                    algo.name,
                    agreement.mismatched.join(", ")
                ));
            }
            let mut r = row(&peer.name, algo.name, Some(peer.command.clone()));
            r.manifest_bytes = Some(out.stdout.len() as u64);
            r.agreement = Some(agreement);
            rows.push((r, Contestant::Peer(peer.command)));
        }
    }

    // The timed runs, in rounds.
    let mut samples: Vec<Vec<f64>> = vec![Vec::with_capacity(runs); rows.len()];
    for round in 0..runs {
        for (i, (r, c)) in rows.iter().enumerate() {
            progress(Event::Timing(&r.tool, &r.algorithm, round + 1, runs));
            prepare(&mut worst_resident)?;
            samples[i].push(c.time(path, &opts.engine)?);
        }
    }
    let mut finished: Vec<Row> = rows
        .into_iter()
        .zip(samples)
        .map(|((mut r, _), s)| {
            let st = Stats::of(&s).expect("runs >= 1");
            r.seconds = st;
            r.mbps = if st.median > 0.0 { bytes as f64 / st.median / 1e6 } else { 0.0 };
            r.files_per_s = if st.median > 0.0 { files as f64 / st.median } else { 0.0 };
            r
        })
        .collect();
    let ceiling = finished.remove(0);
    for r in &mut finished {
        r.bound = Some(Bound::classify(r.seconds.median, ceiling.seconds.median));
    }

    machine.finish();
    if let Some(w) = machine.load_warning() {
        warnings.push(w);
    }
    let eviction_verified = opts.cold.then_some(worst_resident <= 0.05);
    if eviction_verified == Some(false) {
        warnings.push(format!(
            "eviction NOT verified: up to {:.0}% of a file's pages stayed in the page cache \
             after {}; the \"cold\" figures are not cold",
            worst_resident * 100.0,
            method.describe()
        ));
    }
    Ok(Report {
        path: path_text,
        fs_type: device::fs_type(path),
        storage: storage_notes(&opts.engine),
        files,
        bytes,
        // A cold run whose eviction did not take is not reported as cold.
        cache: match (opts.cold, eviction_verified) {
            (false, _) => "warm",
            (true, Some(true)) => "cold",
            (true, _) => "cold (unverified)",
        },
        eviction: opts.cold.then(|| method.describe()),
        eviction_verified,
        machine,
        ceiling,
        rows: finished,
        not_installed,
        warnings,
    })
}

/// What the engine's storage policy was, a line per device: the decisions made for the
/// devices the runs met, or the one setting of an engine without a per-device policy.
fn storage_notes(engine: &Config) -> Vec<String> {
    match &engine.storage {
        Some(devices) => devices.notes(),
        None if engine.serial_reads => vec!["one reader at a time for every file".into()],
        None => vec!["many reads in flight".into()],
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::algo::lookup;

    #[test]
    fn a_pass_reads_everything_and_sizes_the_manifest() {
        let d = tempfile::tempdir().unwrap();
        std::fs::create_dir(d.path().join("s")).unwrap();
        std::fs::write(d.path().join("a"), b"hello").unwrap();
        std::fs::write(d.path().join("s/b"), vec![7u8; 100_000]).unwrap();
        let cfg = Config::for_storage(false);
        let md5 = lookup("md5").unwrap();
        let p = pass(d.path(), Some(md5), &cfg, true);
        assert_eq!((p.files, p.bytes, p.errors), (2, 100_005, 0));
        let root = d.path().to_string_lossy().len() as u64;
        // "<32 hex>  <root>/a\n" and "<32 hex>  <root>/s/b\n"
        assert_eq!(p.manifest_bytes, (32 + 2 + root + 2 + 1) + (32 + 2 + root + 4 + 1));
        let digests = p.digests.unwrap();
        let a = crate::sys::join(&crate::sys::portable_arg(d.path()), "a".as_ref());
        assert!(digests[&path_bytes(&a).to_vec()].ct_eq(&md5.digest(b"hello")));
        let ceiling = pass(d.path(), None, &cfg, false);
        assert_eq!((ceiling.files, ceiling.bytes, ceiling.manifest_bytes), (2, 100_005, 0));
    }

    #[test]
    fn fadvise_eviction_is_checked_with_mincore() {
        let d = tempfile::tempdir().unwrap();
        let f = d.path().join("f");
        std::fs::write(&f, vec![1u8; 1 << 20]).unwrap();
        std::fs::read(&f).unwrap();
        // After fdatasync + DONTNEED the pages of a clean file leave the cache; tmpfs
        // keeps them (they have nowhere else to live), which the check then reports.
        let worst = evict(std::slice::from_ref(&f), EvictMethod::Fadvise).unwrap();
        let tmpfs = device::fs_type(d.path()).as_deref() == Some("tmpfs");
        if tmpfs {
            assert!(worst > 0.5);
        } else {
            assert!(worst <= 0.05, "resident {worst}");
        }
    }
}
