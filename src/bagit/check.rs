//! `bag check`: validate a bag's declaration, Payload-Oxum, completeness and fixity.

use super::create::staging_dirs;
use super::encoding::TagEncoding;
use super::names::{self, Alike};
use super::tags::{check_declaration, note, read_oxum, read_tag_file};
use super::{BagError, CheckReport, Problem};
use crate::algo::Algorithm;
use crate::check::{Outcome, digests_match};
use crate::digest::Digest;
use crate::formats::bagit::{
    FetchEntry, manifest_algorithm, manifest_kind, parse_fetch, parse_manifest_entry, tag_lines,
};
use crate::pathtext::{bytes_path, path_bytes};
use crate::pipeline::{self, Config, Task, Work};
use crate::read::{OpenMode, ReadError, io_message};
use crate::sys::OsStrExt;
use crate::walk::{Exclude, WalkEvent, WalkOptions, default_threads, walk};
use std::collections::{BTreeMap, HashMap};
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

/// The payload paths `expected` lists that `files` does not hold: one merge of the two
/// sorted maps, not a look-up per path.
fn payload_not_on_disk<E, F>(
    expected: &BTreeMap<Vec<u8>, E>,
    files: &BTreeMap<Vec<u8>, F>,
) -> Vec<Vec<u8>> {
    let mut out = Vec::new();
    let mut on_disk = files.keys().peekable();
    for path in expected.keys().filter(|p| p.starts_with(b"data/")) {
        while on_disk.next_if(|f| *f < path).is_some() {}
        if on_disk.peek() != Some(&path) {
            out.push(path.clone());
        }
    }
    out
}

/// Counts of what manifests tolerate (RFC 8493 §7.3: accepted with a warning), per
/// manifest: the first line and how many.
#[derive(Default)]
struct Tolerated {
    binary_marker: Option<(u64, u64)>,
    non_canonical: Option<(u64, u64, Vec<u8>)>,
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
    let decl = check_declaration(bag, &mut r);
    let v1 = decl.v1();
    let percent = v1;
    let enc = decl.encoding.unwrap_or(TagEncoding::Utf8);
    let oxum = read_oxum(bag, &decl, &mut r);
    if fast && oxum.is_none() && r.problems.is_empty() {
        return Err(BagError::Usage(
            "bag-info.txt has no Payload-Oxum: --fast cannot check this bag".to_string(),
        ));
    }
    leftover_staging(bag, &mut r.problems);
    let files = payload(bag, follow, &mut r.problems);
    r.payload_files = files.len() as u64;
    r.payload_bytes = files.values().sum();
    for (names, alike) in names::collisions(files.keys().map(Vec::as_slice)) {
        let shown: Vec<String> =
            names.iter().map(|n| String::from_utf8_lossy(n).into_owned()).collect();
        let how = match alike {
            Alike::Case => "differ only in case",
            Alike::Normalization => "differ only in Unicode normalization",
        };
        r.warnings.push(Problem::new(
            &names[0],
            None,
            format!(
                "{} {how}: one file where names are compared so (NTFS, HFS+, APFS, exFAT); \
                 RFC 8493 section 6.1",
                shown.join(" and ")
            ),
        ));
    }
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

    // The manifests, payload ones first, each sorted by name; the other top-level files
    // are tag files a tag manifest should list.
    let mut manifests: Vec<ManifestFile> = Vec::new();
    let mut tag_files: Vec<Vec<u8>> = Vec::new();
    let entries = std::fs::read_dir(bag)
        .map_err(|e| BagError::Io(format!("{}: {}", bag.display(), io_message(&e))))?;
    for e in entries.flatten() {
        let name = e.file_name();
        let name = path_bytes(Path::new(&name)).to_vec();
        let Some((tag, alg)) = manifest_kind(&name) else {
            if e.file_type().is_ok_and(|t| t.is_file()) {
                tag_files.push(name);
            }
            continue;
        };
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
    tag_files.sort();
    if !manifests.iter().any(|m| !m.tag) {
        r.problems.push(Problem::new("manifest-ALG.txt", None, "no payload manifest"));
    }
    r.algorithms = manifests.iter().filter(|m| !m.tag).map(|m| m.algo).collect();
    let payload_manifests: Vec<usize> =
        (0..manifests.len()).filter(|&i| !manifests[i].tag).collect();

    // path -> what every manifest expects of it.
    let mut expected: BTreeMap<Vec<u8>, Vec<Expect>> = BTreeMap::new();
    for (mi, m) in manifests.iter().enumerate() {
        let Ok(Some(text)) = read_tag_file(bag, &m.name, enc, &mut r) else { continue };
        // path -> (digest, line) of its first listing here.
        let mut listed: HashMap<Vec<u8>, (Digest, u64)> = HashMap::new();
        let mut tolerated = Tolerated::default();
        for (i, line) in tag_lines(&text).into_iter().enumerate() {
            let lineno = i as u64 + 1;
            if line.is_empty() {
                continue;
            }
            let entry = match parse_manifest_entry(line, m.algo, percent) {
                Ok(x) => x,
                Err(e) => {
                    r.problems.push(Problem::new(&m.name, Some(lineno), e));
                    continue;
                }
            };
            if entry.binary_marker {
                let t = tolerated.binary_marker.get_or_insert((lineno, 0));
                t.1 += 1;
            }
            if let Some(written) = entry.written {
                let t = tolerated.non_canonical.get_or_insert((lineno, 0, written));
                t.1 += 1;
            }
            let path = entry.path;
            let shown = String::from_utf8_lossy(&path).into_owned();
            let in_data = path.starts_with(b"data/");
            if !m.tag && !in_data {
                r.problems.push(Problem::new(
                    &m.name,
                    Some(lineno),
                    format!("{shown}: a payload path must start with data/"),
                ));
                continue;
            }
            if m.tag && in_data {
                r.problems.push(Problem::new(
                    &m.name,
                    Some(lineno),
                    format!("{shown}: a tag manifest must not list payload files (RFC 8493 section 2.2.1)"),
                ));
                continue;
            }
            if m.tag && manifest_kind(&path).is_some_and(|(tag, _)| tag) {
                r.problems.push(Problem::new(
                    &m.name,
                    Some(lineno),
                    format!("{shown}: a tag manifest must not list tag manifests (RFC 8493 section 2.2.1)"),
                ));
                continue;
            }
            if let Some((digest, first)) = listed.get(&path) {
                let same = digests_match([(digest, &entry.digest)]);
                let msg = if same {
                    format!(
                        "{shown}: listed again (first on line {first}): a manifest lists each file \
                         exactly once (RFC 8493 section 2.1.3)"
                    )
                } else {
                    format!("{shown}: listed again with another digest (first on line {first})")
                };
                // Before BagIt 1.0 the same listing twice was tolerated.
                note(&mut r, same && !v1, Problem::new(&m.name, Some(lineno), msg));
                continue;
            }
            listed.insert(path.clone(), (entry.digest, lineno));
            expected.entry(path).or_default().push(Expect {
                algo: m.algo,
                digest: entry.digest,
                manifest: mi,
                line: lineno,
            });
        }
        if let Some((line, n)) = tolerated.binary_marker {
            r.warnings.push(Problem::new(
                &m.name,
                Some(line),
                format!(
                    "{n} line{} with md5sum's binary marker '*' before the path: read without \
                     it, but the bag fails strict validation (RFC 8493 section 7.3); write the \
                     manifest again without it",
                    if n == 1 { "" } else { "s" }
                ),
            ));
        }
        if let Some((line, n, written)) = tolerated.non_canonical {
            r.warnings.push(Problem::new(
                &m.name,
                Some(line),
                format!(
                    "{n} path{} not in canonical form (first: {}): read as the same file, \
                     written without './', '.' or doubled '/' it would be canonical",
                    if n == 1 { "" } else { "s" },
                    String::from_utf8_lossy(&written)
                ),
            ));
        }
    }

    // Every tag manifest lists every payload manifest (MUST) and the other tag files
    // (SHOULD).
    if v1 {
        for (ti, t) in manifests.iter().enumerate().filter(|(_, m)| m.tag) {
            let lists = |name: &[u8]| {
                expected.get(name).is_some_and(|v| v.iter().any(|e| e.manifest == ti))
            };
            for p in manifests.iter().filter(|m| !m.tag) {
                if !lists(&p.name) {
                    r.problems.push(Problem::new(
                        &t.name,
                        None,
                        format!(
                            "does not list the payload manifest {} (RFC 8493 section 2.2.1)",
                            String::from_utf8_lossy(&p.name)
                        ),
                    ));
                }
            }
            let unlisted: Vec<String> = tag_files
                .iter()
                .filter(|n| !lists(n))
                .map(|n| String::from_utf8_lossy(n).into_owned())
                .collect();
            if !unlisted.is_empty() {
                r.warnings.push(Problem::new(
                    &t.name,
                    None,
                    format!(
                        "does not list the tag file{} {}: their changes go unnoticed (RFC 8493 \
                         section 2.2.1, SHOULD)",
                        if unlisted.len() == 1 { "" } else { "s" },
                        unlisted.join(", ")
                    ),
                ));
            }
        }
    }

    // A manifest name in another Unicode normalization than the name on disk is that file
    // (RFC 8493 §6.1: tolerate, and say so).
    let strays = payload_not_on_disk(&expected, &files);
    if !strays.is_empty() {
        let by = names::ByNormalization::new(files.keys().map(Vec::as_slice));
        let mut renames = Vec::new();
        for listed in strays {
            if let Some(found) = by.find(&listed)
                && !expected.contains_key(found)
            {
                renames.push((listed, found.to_vec()));
            }
        }
        for (listed, found) in renames {
            let expects = expected.remove(&listed).expect("a key");
            let e = &expects[0];
            r.warnings.push(Problem::new(
                &manifests[e.manifest].name,
                Some(e.line),
                format!(
                    "{} is on disk as {}, another Unicode normalization of the name: read as \
                     that file (RFC 8493 section 6.1)",
                    String::from_utf8_lossy(&listed),
                    String::from_utf8_lossy(&found)
                ),
            ));
            expected.insert(found, expects);
        }
    }

    // fetch.txt: files to be fetched are listed in every payload manifest; until they are
    // here the bag is not complete.
    let mut to_fetch: BTreeMap<Vec<u8>, FetchEntry> = BTreeMap::new();
    if let Ok(Some(text)) = read_tag_file(bag, b"fetch.txt", enc, &mut r) {
        let fetch = parse_fetch(&text, percent);
        for (line, msg) in fetch.invalid {
            r.problems.push(Problem::new("fetch.txt", Some(line), msg));
        }
        if let Some((line, written)) = fetch.non_canonical.first() {
            r.warnings.push(Problem::new(
                "fetch.txt",
                Some(*line),
                format!(
                    "{} path{} not in canonical form (first: {})",
                    fetch.non_canonical.len(),
                    if fetch.non_canonical.len() == 1 { "" } else { "s" },
                    String::from_utf8_lossy(written)
                ),
            ));
        }
        for entry in fetch.entries {
            let shown = String::from_utf8_lossy(&entry.path).into_owned();
            for &mi in &payload_manifests {
                if !expected.get(&entry.path).is_some_and(|v| v.iter().any(|e| e.manifest == mi)) {
                    r.problems.push(Problem::new(
                        "fetch.txt",
                        Some(entry.line),
                        format!(
                            "{shown}: not listed in {} (every file to fetch is, RFC 8493 section 2.2.3)",
                            String::from_utf8_lossy(&manifests[mi].name)
                        ),
                    ));
                }
            }
            match files.get(&entry.path) {
                Some(&size) => {
                    if let Some(length) = entry.length
                        && length != size
                    {
                        r.warnings.push(Problem::new(
                            "fetch.txt",
                            Some(entry.line),
                            format!("{shown}: fetch.txt gives {length} bytes, the file has {size}"),
                        ));
                    }
                }
                None => {
                    to_fetch.insert(entry.path.clone(), entry);
                }
            }
        }
    }
    r.to_fetch = to_fetch.values().map(|e| (e.path.clone(), e.url.clone())).collect();

    // Completeness: every payload file in every payload manifest (before BagIt 1.0, in
    // one of them).
    for path in files.keys() {
        let have = expected.get(path);
        if !v1 && have.is_some_and(|v| v.iter().any(|e| !manifests[e.manifest].tag)) {
            continue;
        }
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
            if let Some(f) = to_fetch.get(&path) {
                r.problems.push(Problem::new(
                    "fetch.txt",
                    Some(f.line),
                    format!(
                        "{}: not fetched yet (from {}): the bag is complete once it is here",
                        String::from_utf8_lossy(&path),
                        f.url
                    ),
                ));
                continue;
            }
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn payload_not_on_disk_merges_the_two_lists() {
        let map = |keys: &[&str]| -> BTreeMap<Vec<u8>, ()> {
            keys.iter().map(|k| (k.as_bytes().to_vec(), ())).collect()
        };
        let expected = map(&["bag-info.txt", "data/a", "data/b", "data/d", "data/e"]);
        let files = map(&["data/a", "data/c", "data/d", "data/f"]);
        assert_eq!(
            payload_not_on_disk(&expected, &files),
            vec![b"data/b".to_vec(), b"data/e".to_vec()]
        );
        assert_eq!(payload_not_on_disk(&expected, &map(&[])).len(), 4);
        assert!(payload_not_on_disk(&map(&[]), &files).is_empty());
    }
}
