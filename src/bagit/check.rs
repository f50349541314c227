//! `bag check`: validate a bag's declaration, Payload-Oxum, completeness and fixity.

use super::create::staging_dirs;
use super::{BagError, CheckReport, Problem};
use crate::algo::Algorithm;
use crate::check::{Outcome, digests_match};
use crate::digest::Digest;
use crate::formats::bagit::{
    Tag, manifest_algorithm, manifest_kind, parse_manifest_line_version, parse_oxum, parse_tags,
    unsafe_path,
};
use crate::pathtext::{bytes_path, path_bytes};
use crate::pipeline::{self, Config, Task, Work};
use crate::read::{OpenMode, ReadError, io_message};
use crate::walk::{Exclude, WalkEvent, WalkOptions, default_threads, walk};
use std::collections::BTreeMap;
use std::io;
use std::os::unix::ffi::OsStrExt;
use std::path::Path;
use std::sync::Arc;

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
fn payload(bag: &Path, follow: bool, problems: &mut Vec<Problem>) -> BTreeMap<Vec<u8>, u64> {
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
        follow,
        // Every payload file counts, whatever its name.
        exclude: Exclude::default().keeping_state(),
        threads: default_threads(),
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
pub fn check(
    bag: &Path,
    fast: bool,
    follow: bool,
    config: &Config,
) -> Result<CheckReport, BagError> {
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
    let files = payload(bag, follow, &mut r.problems);
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
                        if !digests_match([(&e.digest, &h.digests[i])]) {
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
                    let what = match Outcome::of_error(err, false) {
                        Outcome::Missing(_) => "missing".to_string(),
                        o => o.error().map_or_else(|| o.key().to_string(), ReadError::message),
                    };
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
