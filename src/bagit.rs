//! BagIt (RFC 8493): make a directory into a bag in place, and validate bags.
//!
//! A bag is a directory holding `bagit.txt` (version and tag-file encoding), the payload
//! under `data/`, one or more payload manifests `manifest-ALG.txt` (`digest path` per
//! payload file, paths relative to the bag), optional tag manifests
//! `tagmanifest-ALG.txt` over the tag files, and optional `bag-info.txt` metadata
//! (`Label: value` lines; `Payload-Oxum: octets.streamcount` allows a quick check).
//! In manifest paths, LF, CR and `%` are percent-encoded (`%0A`, `%0D`, `%25`).
//!
//! Creation hashes the payload first (nothing is moved if a file cannot be read), then
//! moves the directory's entries into a temporary directory that is renamed to `data/`,
//! and writes each tag file atomically ([`AtomicFile`]). Validation reads every payload
//! and tag file once for all its algorithms, in parallel through [`pipeline`].

use crate::algo::{self, Algorithm};
use crate::digest::Digest;
use crate::output::AtomicFile;
use crate::pathtext::{bytes_path, path_bytes};
use crate::pipeline::{self, Config, Task, Work};
use crate::read::{OpenMode, io_message};
use crate::walk::{Exclude, WalkEvent, WalkOptions, walk};
use std::collections::BTreeMap;
use std::fs::File;
use std::io::{self, Write};
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// The BagIt version fixity writes.
pub const VERSION: &str = "1.0";

/// The algorithms `bag create` uses without `-a` (RFC 8493 recommends SHA-512; SHA-256
/// is what most tools check).
pub const DEFAULT_ALGORITHMS: &[&str] = &["sha512", "sha256"];

// ------------------------------------------------------------------ text forms

/// Percent-encodes LF, CR and `%` in a manifest path (RFC 8493 §2.1.3).
pub fn encode_path(name: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(name.len());
    for &b in name {
        match b {
            b'%' => out.extend_from_slice(b"%25"),
            b'\n' => out.extend_from_slice(b"%0A"),
            b'\r' => out.extend_from_slice(b"%0D"),
            _ => out.push(b),
        }
    }
    out
}

/// Decodes `%0A`, `%0D` and `%25` (either case); any other `%` stays as it is. Bags
/// before BagIt 1.0 (`percent: false`) encoded only LF and CR: `%25` stays as it is there
/// (bagit-python 1.9 still writes 0.97 bags, with `%` unencoded).
pub fn decode_path_version(text: &[u8], percent: bool) -> Vec<u8> {
    let mut out = Vec::with_capacity(text.len());
    let mut i = 0;
    while i < text.len() {
        if text[i] == b'%' {
            let code = text.get(i + 1..i + 3).map(|c| c.to_ascii_uppercase());
            let decoded = match code.as_deref() {
                Some(b"25") if percent => Some(b'%'),
                Some(b"0A") => Some(b'\n'),
                Some(b"0D") => Some(b'\r'),
                _ => None,
            };
            if let Some(d) = decoded {
                out.push(d);
                i += 3;
                continue;
            }
        }
        out.push(text[i]);
        i += 1;
    }
    out
}

/// Decodes a BagIt 1.0 manifest path: `%0A`, `%0D` and `%25`.
pub fn decode_path(text: &[u8]) -> Vec<u8> {
    decode_path_version(text, true)
}

/// Why a manifest path may not be used: it is empty, absolute, or has a `..` (or empty
/// or `.`) component, so it could name something outside the bag.
pub fn unsafe_path(path: &[u8]) -> Option<&'static str> {
    if path.is_empty() {
        return Some("the path is empty");
    }
    if path[0] == b'/' {
        return Some("the path is absolute");
    }
    for c in path.split(|&b| b == b'/') {
        match c {
            b".." => return Some("the path climbs out with '..'"),
            b"" | b"." => return Some("the path has an empty or '.' component"),
            _ => {}
        }
    }
    None
}

/// Parses one manifest line, `digest<whitespace>path`, for `algo`. The path is decoded
/// (as BagIt 1.0 says) but not otherwise checked (see [`unsafe_path`]). A trailing CR is
/// dropped.
pub fn parse_manifest_line(line: &[u8], algo: &Algorithm) -> Result<(Digest, Vec<u8>), String> {
    parse_manifest_line_version(line, algo, true)
}

/// [`parse_manifest_line`] for a bag of a version before 1.0 (`percent: false`) or not.
pub fn parse_manifest_line_version(
    line: &[u8],
    algo: &Algorithm,
    percent: bool,
) -> Result<(Digest, Vec<u8>), String> {
    let line = line.strip_suffix(b"\r").unwrap_or(line);
    let sp = line.iter().position(|&b| b == b' ' || b == b'\t').ok_or("expected 'digest path'")?;
    let hex = &line[..sp];
    let rest = &line[sp..];
    let path = &rest[rest.iter().take_while(|&&b| b == b' ' || b == b'\t').count()..];
    if hex.len() != algo.hex_len() {
        return Err(format!(
            "'{}' is not a {} digest ({} hex digits)",
            String::from_utf8_lossy(hex),
            algo.name,
            algo.hex_len()
        ));
    }
    let digest = Digest::from_hex(hex).ok_or_else(|| {
        format!("'{}' is not a {} digest", String::from_utf8_lossy(hex), algo.name)
    })?;
    if path.is_empty() {
        return Err("the path is empty".to_string());
    }
    Ok((digest, decode_path_version(path, percent)))
}

/// Appends `digest  path` (the path percent-encoded) and a newline.
pub fn write_manifest_line(digest: &Digest, path: &[u8], out: &mut Vec<u8>) {
    out.extend_from_slice(digest.to_hex().as_bytes());
    out.extend_from_slice(b"  ");
    out.extend_from_slice(&encode_path(path));
    out.push(b'\n');
}

/// One `Label: value` of a tag file, with the line it starts on.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Tag {
    pub label: String,
    pub value: String,
    pub line: u64,
}

/// Parses a tag file (`bagit.txt`, `bag-info.txt`): `Label: value` lines; a line starting
/// with a space or tab continues the previous value (joined with one space); blank lines
/// are skipped. Errors carry the 1-based line number.
pub fn parse_tags(text: &[u8]) -> Result<Vec<Tag>, (u64, String)> {
    let text = std::str::from_utf8(text).map_err(|e| {
        let line = text[..e.valid_up_to()].iter().filter(|&&b| b == b'\n').count() as u64 + 1;
        (line, "not UTF-8".to_string())
    })?;
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    let mut tags: Vec<Tag> = Vec::new();
    for (i, raw) in text.split('\n').enumerate() {
        let lineno = i as u64 + 1;
        let line = raw.strip_suffix('\r').unwrap_or(raw);
        if line.trim().is_empty() {
            continue;
        }
        if line.starts_with([' ', '\t']) {
            let last = tags
                .last_mut()
                .ok_or((lineno, "a continuation line before any label".to_string()))?;
            if !last.value.is_empty() {
                last.value.push(' ');
            }
            last.value.push_str(line.trim());
            continue;
        }
        let (label, value) = line
            .split_once(':')
            .ok_or_else(|| (lineno, format!("expected 'Label: value', got '{line}'")))?;
        let label = label.trim_end();
        if label.is_empty() {
            return Err((lineno, "the label is empty".to_string()));
        }
        tags.push(Tag { label: label.to_string(), value: value.trim().to_string(), line: lineno });
    }
    Ok(tags)
}

/// Parses a Payload-Oxum value, `octets.streamcount`.
pub fn parse_oxum(value: &str) -> Option<(u64, u64)> {
    let (bytes, count) = value.trim().split_once('.')?;
    let digits = |s: &str| !s.is_empty() && s.len() <= 20 && s.bytes().all(|b| b.is_ascii_digit());
    if !digits(bytes) || !digits(count) {
        return None;
    }
    Some((bytes.parse().ok()?, count.parse().ok()?))
}

/// Whether a file name is a payload manifest (`manifest-ALG.txt`, false) or a tag
/// manifest (`tagmanifest-ALG.txt`, true), and the ALG it names.
pub fn manifest_kind(name: &[u8]) -> Option<(bool, &str)> {
    let name = std::str::from_utf8(name).ok()?;
    let stem = name.strip_suffix(".txt")?;
    if let Some(a) = stem.strip_prefix("tagmanifest-") {
        return Some((true, a));
    }
    stem.strip_prefix("manifest-").map(|a| (false, a))
}

/// The algorithm a manifest's ALG names: BagIt's names are lowercase (`sha512`, `md5`).
pub fn manifest_algorithm(alg: &str) -> Option<&'static Algorithm> {
    if alg.is_empty() || alg != alg.to_ascii_lowercase() {
        return None;
    }
    algo::lookup(alg)
}

// ------------------------------------------------------------------ errors and reports

/// A problem found in a bag: the file (relative to the bag) and line it concerns.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Problem {
    pub file: Vec<u8>,
    pub line: Option<u64>,
    pub message: String,
}

impl Problem {
    fn new(file: impl AsRef<[u8]>, line: Option<u64>, message: impl Into<String>) -> Problem {
        Problem { file: file.as_ref().to_vec(), line, message: message.into() }
    }
}

/// A bag could not be made or checked at all (not a directory, unreadable, already a
/// bag): a usage error, as opposed to an invalid bag.
#[derive(Debug, thiserror::Error)]
pub enum BagError {
    #[error("{0}")]
    Usage(String),
    #[error("{0}")]
    Io(String),
}

/// What `check` found.
#[derive(Clone, Debug, Default)]
pub struct CheckReport {
    /// Problems, in the order found: the bag is valid when there are none.
    pub problems: Vec<Problem>,
    /// Payload files found under `data/`.
    pub payload_files: u64,
    /// Their total size.
    pub payload_bytes: u64,
    /// Files read and compared (payload and tag files).
    pub verified: u64,
    /// The payload manifests' algorithms.
    pub algorithms: Vec<&'static Algorithm>,
}

impl CheckReport {
    pub fn valid(&self) -> bool {
        self.problems.is_empty()
    }
}

// ------------------------------------------------------------------ check

/// One expected digest: algorithm, value, and where it was listed.
#[derive(Clone, Debug)]
struct Expect {
    algo: &'static Algorithm,
    digest: Digest,
    manifest: usize,
    line: u64,
}

struct ManifestFile {
    name: Vec<u8>,
    algo: &'static Algorithm,
    tag: bool,
}

fn read_file(path: &Path) -> Result<Option<Vec<u8>>, String> {
    match std::fs::read(path) {
        Ok(d) => Ok(Some(d)),
        Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(None),
        Err(e) => Err(io_message(&e)),
    }
}

/// Reads and parses the tag file `f` of the bag: `Ok(None)` when it is missing; a file that
/// cannot be read or parsed is a problem (named with its line) and `Err(())`.
fn load_tags(bag: &Path, f: &str, problems: &mut Vec<Problem>) -> Result<Option<Vec<Tag>>, ()> {
    let Some(data) =
        read_file(&bag.join(f)).map_err(|e| problems.push(Problem::new(f, None, e)))?
    else {
        return Ok(None);
    };
    parse_tags(&data).map(Some).map_err(|(line, e)| problems.push(Problem::new(f, Some(line), e)))
}

/// Validates `bagit.txt`: both required labels, a `M.N` version, UTF-8 tag files.
/// Returns the version when it is readable.
fn check_declaration(bag: &Path, problems: &mut Vec<Problem>) -> Option<(u64, u64)> {
    let f = "bagit.txt";
    let tags = match load_tags(bag, f, problems) {
        Ok(Some(t)) => t,
        Ok(None) => {
            problems.push(Problem::new(f, None, "missing: this is not a bag"));
            return None;
        }
        Err(()) => return None,
    };
    let mut version = None;
    let get = |label: &str| tags.iter().find(|t| t.label == label);
    match get("BagIt-Version") {
        None => problems.push(Problem::new(f, None, "no BagIt-Version")),
        Some(t) => {
            let ok = t.value.split_once('.').is_some_and(|(a, b)| {
                !a.is_empty()
                    && !b.is_empty()
                    && a.bytes().all(|c| c.is_ascii_digit())
                    && b.bytes().all(|c| c.is_ascii_digit())
            });
            if ok {
                let (a, b) = t.value.split_once('.').expect("checked");
                version = a.parse().ok().zip(b.parse().ok());
            } else {
                problems.push(Problem::new(
                    f,
                    Some(t.line),
                    format!("BagIt-Version '{}' is not M.N", t.value),
                ));
            }
        }
    }
    match get("Tag-File-Character-Encoding") {
        None => problems.push(Problem::new(f, None, "no Tag-File-Character-Encoding")),
        Some(t) if !t.value.eq_ignore_ascii_case("UTF-8") => problems.push(Problem::new(
            f,
            Some(t.line),
            format!("tag files in '{}' are not supported (only UTF-8)", t.value),
        )),
        Some(_) => {}
    }
    version
}

/// The Payload-Oxum of `bag-info.txt`, if the file and the label are there.
fn read_oxum(bag: &Path, problems: &mut Vec<Problem>) -> Option<(u64, u64, u64)> {
    let f = "bag-info.txt";
    let tags = load_tags(bag, f, problems).ok()??;
    let t = tags.iter().find(|t| t.label.eq_ignore_ascii_case("Payload-Oxum"))?;
    match parse_oxum(&t.value) {
        Some((bytes, count)) => Some((bytes, count, t.line)),
        None => {
            problems.push(Problem::new(
                f,
                Some(t.line),
                format!("Payload-Oxum '{}' is not octets.streamcount", t.value),
            ));
            None
        }
    }
}

/// Flags staging directories of an interrupted `create`: in the bag's top directory (the
/// run was killed while moving the payload), or directly in `data/` (a rerun of an older
/// fixity moved one into the payload and listed its files as if they belonged there).
fn leftover_staging(bag: &Path, problems: &mut Vec<Problem>) {
    for (sub, what) in [
        ("", "not part of the bag: rerun `fixity bag create` on the directory to recover it"),
        (
            "data/",
            "moved into the payload by a rerun: its entries belong directly in data/ (move them \
             up, then make the manifests again)",
        ),
    ] {
        for p in staging_dirs(&bag.join(sub)).unwrap_or_default() {
            let name = p.file_name().expect("a listed entry has a name").as_bytes();
            let mut rel = sub.as_bytes().to_vec();
            rel.extend_from_slice(name);
            let msg = format!("the staging directory of an interrupted `bag create`, {what}");
            problems.push(Problem::new(rel, None, msg));
        }
    }
}

/// Walks `data/`: every payload file (path relative to the bag) and its size.
fn payload(bag: &Path, problems: &mut Vec<Problem>) -> BTreeMap<Vec<u8>, u64> {
    let mut files = BTreeMap::new();
    let data = bag.join("data");
    match std::fs::symlink_metadata(&data) {
        Ok(md) if md.is_dir() => {}
        Ok(_) => {
            problems.push(Problem::new("data", None, "not a directory"));
            return files;
        }
        Err(e) => {
            problems.push(Problem::new("data", None, io_message(&e)));
            return files;
        }
    }
    let opts = WalkOptions {
        follow: false,
        // Every payload file counts, whatever its name.
        exclude: Exclude::default().keeping_state(),
        threads: 4,
        stat: true,
    };
    let prefix = path_bytes(bag).len() + 1;
    walk(&data, &opts, &mut |ev| {
        match ev {
            WalkEvent::File(p, stamp) => {
                let size = match stamp {
                    Some(s) => s.size,
                    None => std::fs::metadata(&p).map(|m| m.len()).unwrap_or(0),
                };
                files.insert(path_bytes(&p)[prefix..].to_vec(), size);
            }
            WalkEvent::Skipped(p, why) => {
                problems.push(Problem::new(&path_bytes(&p)[prefix..], None, why));
            }
            WalkEvent::Error(p, e) => {
                let rel = path_bytes(&p).get(prefix..).unwrap_or(b"data").to_vec();
                problems.push(Problem::new(rel, None, io_message(&e)));
            }
        }
        true
    });
    files
}

/// Validates the bag at `bag`. `fast`: only `bagit.txt` and the Payload-Oxum (file count
/// and bytes, from the directory listing), without reading any file. `Err` when the bag
/// cannot be checked at all (not a directory; `fast` without a Payload-Oxum).
pub fn check(bag: &Path, fast: bool, config: &Config) -> Result<CheckReport, BagError> {
    match std::fs::metadata(bag) {
        Ok(md) if md.is_dir() => {}
        Ok(_) => return Err(BagError::Usage(format!("{}: not a directory", bag.display()))),
        Err(e) => return Err(BagError::Usage(format!("{}: {}", bag.display(), io_message(&e)))),
    }
    let mut r = CheckReport::default();
    let version = check_declaration(bag, &mut r.problems);
    let percent = version.is_none_or(|v| v >= (1, 0));
    let oxum = read_oxum(bag, &mut r.problems);
    if fast && oxum.is_none() && r.problems.is_empty() {
        return Err(BagError::Usage(
            "bag-info.txt has no Payload-Oxum: --fast cannot check this bag".to_string(),
        ));
    }
    leftover_staging(bag, &mut r.problems);
    let files = payload(bag, &mut r.problems);
    r.payload_files = files.len() as u64;
    r.payload_bytes = files.values().sum();
    if let Some((bytes, count, line)) = oxum
        && (bytes, count) != (r.payload_bytes, r.payload_files)
    {
        r.problems.push(Problem::new(
            "bag-info.txt",
            Some(line),
            format!(
                "Payload-Oxum says {bytes}.{count}, the payload is {}.{} (bytes.files)",
                r.payload_bytes, r.payload_files
            ),
        ));
    }
    if fast {
        return Ok(r);
    }

    // The manifests, payload ones first, each sorted by name.
    let mut manifests: Vec<ManifestFile> = Vec::new();
    let entries = std::fs::read_dir(bag)
        .map_err(|e| BagError::Io(format!("{}: {}", bag.display(), io_message(&e))))?;
    for e in entries.flatten() {
        let name = e.file_name();
        let name = path_bytes(Path::new(&name)).to_vec();
        let Some((tag, alg)) = manifest_kind(&name) else { continue };
        match manifest_algorithm(alg) {
            Some(a) => manifests.push(ManifestFile { name, algo: a, tag }),
            None => r.problems.push(Problem::new(
                &name,
                None,
                format!("unknown algorithm '{alg}' (`fixity algorithms` lists them)"),
            )),
        }
    }
    manifests.sort_by(|a, b| (a.tag, &a.name).cmp(&(b.tag, &b.name)));
    if !manifests.iter().any(|m| !m.tag) {
        r.problems.push(Problem::new("manifest-ALG.txt", None, "no payload manifest"));
    }
    r.algorithms = manifests.iter().filter(|m| !m.tag).map(|m| m.algo).collect();

    // path -> what every manifest expects of it.
    let mut expected: BTreeMap<Vec<u8>, Vec<Expect>> = BTreeMap::new();
    for (mi, m) in manifests.iter().enumerate() {
        let data = match read_file(&bag.join(bytes_path(&m.name))) {
            Ok(Some(d)) => d,
            Ok(None) => continue,
            Err(e) => {
                r.problems.push(Problem::new(&m.name, None, e));
                continue;
            }
        };
        let mut listed = std::collections::HashSet::new();
        for (i, line) in data.split(|&b| b == b'\n').enumerate() {
            let lineno = i as u64 + 1;
            if line.strip_suffix(b"\r").unwrap_or(line).is_empty() {
                continue;
            }
            let (digest, path) = match parse_manifest_line_version(line, m.algo, percent) {
                Ok(x) => x,
                Err(e) => {
                    r.problems.push(Problem::new(&m.name, Some(lineno), e));
                    continue;
                }
            };
            if let Some(why) = unsafe_path(&path) {
                r.problems.push(Problem::new(
                    &m.name,
                    Some(lineno),
                    format!("{}: refused: {why}, leaving the bag", String::from_utf8_lossy(&path)),
                ));
                continue;
            }
            let in_data = path.starts_with(b"data/");
            if !m.tag && !in_data {
                r.problems.push(Problem::new(
                    &m.name,
                    Some(lineno),
                    format!(
                        "{}: a payload path must start with data/",
                        String::from_utf8_lossy(&path)
                    ),
                ));
                continue;
            }
            if !listed.insert(path.clone()) {
                r.problems.push(Problem::new(
                    &m.name,
                    Some(lineno),
                    format!("{}: listed twice", String::from_utf8_lossy(&path)),
                ));
                continue;
            }
            expected.entry(path).or_default().push(Expect {
                algo: m.algo,
                digest,
                manifest: mi,
                line: lineno,
            });
        }
    }

    // Completeness: every payload file in every payload manifest.
    let payload_manifests: Vec<usize> =
        (0..manifests.len()).filter(|&i| !manifests[i].tag).collect();
    for path in files.keys() {
        let have = expected.get(path);
        for &mi in &payload_manifests {
            if !have.is_some_and(|v| v.iter().any(|e| e.manifest == mi)) {
                r.problems.push(Problem::new(
                    path,
                    None,
                    format!("not listed in {}", String::from_utf8_lossy(&manifests[mi].name)),
                ));
            }
        }
    }

    // Fixity: read every listed file once for all its algorithms.
    struct Job {
        path: Vec<u8>,
        expects: Vec<Expect>,
        /// Each algorithm once, in the order the digests come back.
        algos: Arc<[&'static Algorithm]>,
    }
    let mut jobs = Vec::new();
    for (path, expects) in expected {
        let is_payload = path.starts_with(b"data/");
        if is_payload && !files.contains_key(&path) {
            for e in &expects {
                r.problems.push(Problem::new(
                    &manifests[e.manifest].name,
                    Some(e.line),
                    format!("{}: missing", String::from_utf8_lossy(&path)),
                ));
            }
            continue;
        }
        let mut algos: Vec<&'static Algorithm> = Vec::new();
        for e in &expects {
            if !algos.contains(&e.algo) {
                algos.push(e.algo);
            }
        }
        jobs.push(Job { path, expects, algos: Arc::from(algos) });
    }
    let problems = &mut r.problems;
    let verified = &mut r.verified;
    pipeline::run(
        config,
        |push| {
            for job in jobs {
                let work = Work {
                    path: bag.join(bytes_path(&job.path)),
                    mode: OpenMode::Named,
                    algos: job.algos.clone(),
                };
                if !push(Task { payload: job, work: Some(work) }) {
                    return;
                }
            }
        },
        |job, outcome| {
            let algos = &job.algos;
            match outcome.expect("every job reads a file") {
                Ok(h) => {
                    *verified += 1;
                    for e in &job.expects {
                        let i = algos.iter().position(|a| *a == e.algo).expect("listed");
                        if !h.digests[i].ct_eq(&e.digest) {
                            problems.push(Problem::new(
                                &manifests[e.manifest].name,
                                Some(e.line),
                                format!(
                                    "{}: {} digest does not match (expected {}, computed {})",
                                    String::from_utf8_lossy(&job.path),
                                    e.algo.name,
                                    e.digest.to_hex(),
                                    h.digests[i].to_hex()
                                ),
                            ));
                        }
                    }
                }
                Err(err) => {
                    let e = &job.expects[0];
                    let is_missing = matches!(&err, crate::read::ReadError::Io(io)
                        if io.kind() == io::ErrorKind::NotFound);
                    let what = if is_missing { "missing".to_string() } else { err.message() };
                    problems.push(Problem::new(
                        &manifests[e.manifest].name,
                        Some(e.line),
                        format!("{}: {what}", String::from_utf8_lossy(&job.path)),
                    ));
                }
            }
            true
        },
    );
    Ok(r)
}

// ------------------------------------------------------------------ create

/// What `create` made.
#[derive(Clone, Debug, Default)]
pub struct CreateReport {
    pub files: u64,
    pub bytes: u64,
    /// Staging directories of interrupted runs that were emptied back into the directory
    /// before bagging: each one's name and how many entries it held.
    pub recovered: Vec<(PathBuf, u64)>,
}

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
fn staging_dirs(dir: &Path) -> Result<Vec<PathBuf>, BagError> {
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

/// Takes `create`'s lock on `dir` (an exclusive `flock` on the directory itself, held
/// while the returned file is open): while it is held, no other `create` works in `dir`,
/// so any staging directory found there was left by a run that is gone.
fn lock_dir(dir: &Path) -> Result<File, BagError> {
    let f = File::open(dir).map_err(|e| io_err(dir, &e))?;
    match f.try_lock() {
        Ok(()) => Ok(f),
        Err(std::fs::TryLockError::WouldBlock) => Err(BagError::Usage(format!(
            "{}: another `fixity bag create` is working in this directory",
            dir.display()
        ))),
        Err(std::fs::TryLockError::Error(e)) => Err(io_err(dir, &e)),
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

/// Checks a `--info` label and value: a label without `:` or line breaks, not one fixity
/// computes (Payload-Oxum), and a value on one line.
pub fn check_info(label: &str, value: &str) -> Result<(), String> {
    if label.is_empty() || label.trim() != label || label.contains([':', '\n', '\r']) {
        return Err(format!(
            "'{label}' is not a bag-info label (no ':', blanks at the ends or line breaks)"
        ));
    }
    if label.eq_ignore_ascii_case("Payload-Oxum") {
        return Err("Payload-Oxum is computed; it cannot be given".to_string());
    }
    if value.contains(['\n', '\r']) {
        return Err(format!("the value of {label} holds a line break"));
    }
    Ok(())
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
/// or a symlink leaves the directory untouched.
pub fn create(
    dir: &Path,
    algos: &[&'static Algorithm],
    info: &[(String, String)],
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
        follow: false,
        exclude: Exclude::default().keeping_state(),
        threads: 4,
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
                            mode: OpenMode::Walked { follow: false },
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
    fn percent_encoding_round_trips() {
        let name = b"data/a\nb\rc%d%0A e";
        let enc = encode_path(name);
        assert_eq!(enc, b"data/a%0Ab%0Dc%25d%250A e");
        assert_eq!(decode_path(&enc), name);
        assert_eq!(decode_path(b"x%0ay%0dz"), b"x\ny\rz");
        assert_eq!(decode_path(b"%41%2%"), b"%41%2%");
        assert_eq!(decode_path(b"%"), b"%");
        assert_eq!(decode_path(b"a%2"), b"a%2");
        assert_eq!(decode_path_version(b"50%25%0A", false), b"50%25\n");
    }

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

    #[test]
    fn unsafe_paths() {
        assert!(unsafe_path(b"data/a").is_none());
        assert!(unsafe_path(b"data/..a").is_none());
        for p in [&b"/etc/passwd"[..], b"data/../../x", b"..", b"data//a", b"./data/a", b""] {
            assert!(unsafe_path(p).is_some(), "{}", String::from_utf8_lossy(p));
        }
    }

    #[test]
    fn manifest_lines() {
        let sha = algo::lookup("sha256").unwrap();
        let d = sha.digest(b"abc");
        let mut out = Vec::new();
        write_manifest_line(&d, b"data/sp ace\n%", &mut out);
        assert_eq!(out, format!("{}  data/sp ace%0A%25\n", d.to_hex()).into_bytes());
        out.pop();
        assert_eq!(parse_manifest_line(&out, sha).unwrap(), (d, b"data/sp ace\n%".to_vec()));
        let tab = format!("{}\tdata/x\r", d.to_hex().to_uppercase());
        assert_eq!(parse_manifest_line(tab.as_bytes(), sha).unwrap(), (d, b"data/x".to_vec()));
        assert!(parse_manifest_line(b"abc data/x", sha).unwrap_err().contains("not a sha256"));
        assert!(parse_manifest_line(d.to_hex().as_bytes(), sha).is_err());
        assert!(parse_manifest_line(format!("{} ", d.to_hex()).as_bytes(), sha).is_err());
    }

    #[test]
    fn tag_files() {
        let t = parse_tags(b"BagIt-Version: 1.0\r\nContact-Name:  Jo\n  Smith\n\nX:\n").unwrap();
        assert_eq!(t.len(), 3);
        assert_eq!(t[0], Tag { label: "BagIt-Version".into(), value: "1.0".into(), line: 1 });
        assert_eq!(t[1].value, "Jo Smith");
        assert_eq!(t[2].value, "");
        assert_eq!(parse_tags(b"A: b\nno colon\n").unwrap_err().0, 2);
        assert_eq!(parse_tags(b" leading\n").unwrap_err().0, 1);
        assert_eq!(parse_tags(b": v\n").unwrap_err().0, 1);
        assert_eq!(parse_tags(b"A: b\nB: \xff\n").unwrap_err().0, 2);
    }

    #[test]
    fn oxum_and_manifest_names() {
        assert_eq!(parse_oxum("1234.5"), Some((1234, 5)));
        assert_eq!(parse_oxum(" 0.0 "), Some((0, 0)));
        for bad in ["12", ".5", "1.", "a.b", "1.2.3", "-1.2"] {
            assert_eq!(parse_oxum(bad), None, "{bad}");
        }
        assert_eq!(manifest_kind(b"manifest-sha512.txt"), Some((false, "sha512")));
        assert_eq!(manifest_kind(b"tagmanifest-md5.txt"), Some((true, "md5")));
        assert_eq!(manifest_kind(b"bag-info.txt"), None);
        assert!(manifest_algorithm("sha256").is_some());
        assert!(manifest_algorithm("SHA256").is_none());
        assert!(manifest_algorithm("nope").is_none());
    }

    #[test]
    fn info_labels() {
        assert!(check_info("Contact-Name", "Jo").is_ok());
        assert!(check_info("Payload-Oxum", "1.1").is_err());
        assert!(check_info("A:B", "x").is_err());
        assert!(check_info("A", "x\ny").is_err());
        assert!(check_info("", "x").is_err());
    }
}
