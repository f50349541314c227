//! `fixity dups`: `--read` finds the groups jdupes and rdfind find, on generated trees
//! with every hard case (random content and copies, equal sizes with other content, equal
//! first 4 KiB with another tail, equal ends with another middle, hard links, empty
//! files, names that are not UTF-8 or hold newlines, symbolic links); the catalog gives
//! the same groups without reading a byte; the options, the files left out, a CRC-32
//! collision that reading tells apart, and the exit statuses.

use crate::util::{Rng, fixity, have, missing, tempdir, write};
use std::collections::BTreeSet;
use std::ffi::OsStr;
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};
use std::process::Output;

type Inode = (u64, u64);
/// Groups as sets of files (inodes): how the tools compare whatever names they print.
type Groups = BTreeSet<BTreeSet<Inode>>;

fn run(dir: &Path, args: &[&str]) -> Output {
    fixity(dir).args(args).output().expect("run fixity")
}

fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

fn os(b: &[u8]) -> &OsStr {
    OsStr::from_bytes(b)
}

fn inode(dir: &Path, name: &[u8]) -> Inode {
    let md = std::fs::symlink_metadata(dir.join(os(name)))
        .unwrap_or_else(|e| panic!("{}: {e}", text(name)));
    (md.dev(), md.ino())
}

/// Keeps the groups of two files or more (a tool may list names of one inode).
fn groups_of(dir: &Path, named: Vec<Vec<Vec<u8>>>) -> Groups {
    named
        .into_iter()
        .map(|g| g.iter().map(|n| inode(dir, n)).collect::<BTreeSet<_>>())
        .filter(|g| g.len() >= 2)
        .collect()
}

/// A JSON name: `path`, or its bytes from `path_hex`.
fn json_name(v: &serde_json::Value) -> Vec<u8> {
    match v["path_hex"].as_str() {
        Some(h) => {
            (0..h.len()).step_by(2).map(|i| u8::from_str_radix(&h[i..i + 2], 16).unwrap()).collect()
        }
        None => v["path"].as_str().unwrap().as_bytes().to_vec(),
    }
}

/// `fixity dups --json ARGS`: the group objects, the summary, the exit status.
fn dups_json(dir: &Path, args: &[&str]) -> (Vec<serde_json::Value>, serde_json::Value, i32) {
    let out = run(dir, &[&["dups", "--json"], args].concat());
    let mut groups = Vec::new();
    let mut summary = serde_json::Value::Null;
    for line in text(&out.stdout).lines() {
        let v: serde_json::Value = serde_json::from_str(line)
            .unwrap_or_else(|e| panic!("{line}: {e}; stderr {}", text(&out.stderr)));
        if v.get("summary").is_some() {
            summary = v["summary"].clone();
        } else if v.get("files").is_some() {
            groups.push(v);
        }
    }
    (groups, summary, out.status.code().unwrap_or(-1))
}

/// Every name of each group (files and their links).
fn names(groups: &[serde_json::Value]) -> Vec<Vec<Vec<u8>>> {
    groups
        .iter()
        .map(|g| {
            let mut n = Vec::new();
            for f in g["files"].as_array().unwrap() {
                n.push(json_name(f));
                for l in f["links"].as_array().into_iter().flatten() {
                    n.push(json_name(l));
                }
            }
            n
        })
        .collect()
}

/// fixity's groups, and every name in them.
fn fixity_groups(dir: &Path, tree: &str) -> (Groups, Vec<Vec<u8>>) {
    let (groups, summary, code) = dups_json(dir, &["--read", tree]);
    assert_eq!(code, 0, "{summary}");
    let named = names(&groups);
    let all = named.iter().flatten().cloned().collect();
    (groups_of(dir, named), all)
}

/// `jdupes -r -0 TREE`: names NUL-terminated, an empty one after each group.
fn jdupes_groups(dir: &Path, tree: &str) -> Groups {
    let out = std::process::Command::new("jdupes")
        .args(["-r", "-q", "-0", tree])
        .current_dir(dir)
        .output()
        .unwrap();
    assert!(out.status.success(), "jdupes: {}", text(&out.stderr));
    let mut all = Vec::new();
    let mut group = Vec::new();
    for name in out.stdout.split(|&b| b == 0) {
        if name.is_empty() {
            if !group.is_empty() {
                all.push(std::mem::take(&mut group));
            }
        } else {
            group.push(name.to_vec());
        }
    }
    groups_of(dir, all)
}

/// `rdfind -dryrun true TREE`: its results file gives each name's group id (negative for
/// the duplicates of the first), device and inode.
fn rdfind_groups(dir: &Path, tree: &str) -> Groups {
    let results = dir.join("rdfind-results.txt");
    let out = std::process::Command::new("rdfind")
        .args(["-dryrun", "true", "-outputname"])
        .arg(&results)
        .arg(tree)
        .current_dir(dir)
        .output()
        .unwrap();
    assert!(out.status.success(), "rdfind: {}", text(&out.stderr));
    let mut by_id: std::collections::BTreeMap<i64, BTreeSet<Inode>> = Default::default();
    for line in std::fs::read(&results).unwrap().split(|&b| b == b'\n') {
        // A name with a newline continues on the next line, which starts otherwise.
        if !line.starts_with(b"DUPTYPE_") {
            continue;
        }
        let fields: Vec<String> = text(line).splitn(8, ' ').map(String::from).collect();
        let id: i64 = fields[1].parse().unwrap();
        let dev: u64 = fields[4].parse().unwrap();
        let ino: u64 = fields[5].parse().unwrap();
        by_id.entry(id.abs()).or_default().insert((dev, ino));
    }
    by_id.into_values().filter(|g| g.len() >= 2).collect()
}

/// Random bytes.
fn bytes(rng: &mut Rng, n: usize) -> Vec<u8> {
    (0..n).map(|_| rng.next() as u8).collect()
}

/// A tree with every hard case, from `seed`.
fn generate(root: &Path, seed: u64) {
    let mut rng = Rng(seed);
    let mut made: Vec<(PathBuf, Vec<u8>)> = Vec::new();
    let sizes = [1usize, 7, 100, 4095, 4096, 4097, 8192, 16_384, 16_385, 40_000, 100_000];
    let dirs = ["a", "a/b", "c", "d e", "f\nnl"];
    for i in 0..80 {
        let dir = *rng.pick(&dirs);
        let mut name = format!("{dir}/f{i}").into_bytes();
        match rng.below(10) {
            0 => name.extend_from_slice(b"\xff\xfe"),
            1 => name.extend_from_slice(b"\nline"),
            2 => name.extend_from_slice(b" space\\slash"),
            _ => {}
        }
        let data = if !made.is_empty() && rng.chance(35) {
            rng.pick(&made).1.clone()
        } else {
            let n = *rng.pick(&sizes);
            bytes(&mut rng, n)
        };
        let p = root.join(os(&name));
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(&p, &data).unwrap();
        made.push((p, data));
    }
    // Equal first 4 KiB, other tails; equal first and last 4 KiB, other middles.
    let base = bytes(&mut rng, 50_000);
    for (k, at) in [(0, 49_999), (1, 4096), (2, 25_000), (3, 45_903)] {
        let mut d = base.clone();
        d[at] ^= 0x55;
        write(root, format!("g/variant{k}"), &d);
    }
    write(root, "g/base", &base);
    write(root, "g/base-copy", &base);
    // Hard links: two to the last file (a copy or not), one to a file with a copy, one
    // to a file of its own.
    let linked = &made[made.len() - 1].0;
    std::fs::hard_link(linked, root.join("h-link1")).unwrap();
    std::fs::hard_link(linked, root.join("c/h-link2")).unwrap();
    std::fs::hard_link(root.join("g/base"), root.join("g/base-link")).unwrap();
    write(root, "u/unique", b"a file of its own, with links");
    std::fs::hard_link(root.join("u/unique"), root.join("u/unique-link")).unwrap();
    // Empty files, and symbolic links (never followed).
    for e in ["e1", "a/e2", "c/e3"] {
        write(root, e, b"");
    }
    std::os::unix::fs::symlink("../g/base", root.join("a/sym-base")).unwrap();
    std::os::unix::fs::symlink(&made[0].0, root.join("sym-abs")).unwrap();
}

#[test]
fn read_finds_the_groups_jdupes_and_rdfind_find() {
    let peers: Vec<&str> = ["jdupes", "rdfind"].into_iter().filter(|t| have(t)).collect();
    for t in ["jdupes", "rdfind"] {
        if !peers.contains(&t) {
            missing(t, "not installed (apt-get install jdupes rdfind)");
        }
    }
    for seed in [1, 2, 3] {
        let d = tempdir();
        generate(&d.path().join("t"), seed);
        let (ours, named) = fixity_groups(d.path(), "t");
        assert!(ours.len() >= 5, "seed {seed}: the tree has duplicates: {ours:?}");
        // The groups hold the hard names: not UTF-8, with a newline, hard links.
        assert!(named.iter().any(|n| n.contains(&0xff)), "seed {seed}");
        assert!(named.iter().any(|n| n.contains(&b'\n')), "seed {seed}");
        assert!(named.iter().any(|n| n.ends_with(b"g/base-link")), "seed {seed}");
        if peers.contains(&"jdupes") {
            assert_eq!(ours, jdupes_groups(d.path(), "t"), "seed {seed}: jdupes");
        }
        if peers.contains(&"rdfind") {
            assert_eq!(ours, rdfind_groups(d.path(), "t"), "seed {seed}: rdfind");
        }
    }
}

/// The catalog gives exactly what reading gives (same groups, order, names, digests),
/// and reads nothing: the summary's counter says so, and a copy that rots after the scan
/// (other bytes, same size and mtime) is still grouped by its recorded digest, which a
/// read would have seen through (`verify` finds such rot; `dups` trusts the catalog).
#[test]
fn the_catalog_gives_the_read_groups_reading_nothing() {
    let d = tempdir();
    generate(&d.path().join("t"), 7);
    assert!(run(d.path(), &["scan", "-q", "t"]).status.success());
    let (read, rs, _) = dups_json(d.path(), &["--read", "t"]);
    let (cat, cs, code) = dups_json(d.path(), &["t"]);
    assert_eq!(code, 0);
    assert_eq!(cat, read);
    assert_eq!((&cs["files_read"], &cs["bytes_read"]), (&0.into(), &0.into()), "{cs}");
    assert_eq!(cs["source"], "catalog");
    assert!(rs["bytes_read"].as_u64().unwrap() > 0);
    for k in ["groups", "files", "links", "wasted_bytes"] {
        assert_eq!(cs[k], rs[k], "{k}");
    }

    let base = d.path().join("t/g/base-copy");
    let mtime = std::fs::metadata(&base).unwrap().modified().unwrap();
    let mut data = std::fs::read(&base).unwrap();
    data[0] ^= 1;
    std::fs::write(&base, &data).unwrap();
    std::fs::File::options().write(true).open(&base).unwrap().set_modified(mtime).unwrap();
    let (cat, _, _) = dups_json(d.path(), &["t"]);
    let (read, _, _) = dups_json(d.path(), &["--read", "t"]);
    let holds = |g: &[serde_json::Value]| names(g).iter().flatten().any(|n| n == b"t/g/base-copy");
    assert!(holds(&cat), "not read: grouped on its recorded digest");
    assert!(!holds(&read), "read: its content differs");
}

fn lines(o: &Output) -> Vec<String> {
    text(&o.stdout).lines().map(String::from).collect()
}

#[test]
fn text_output_links_and_escaped_names() {
    let d = tempdir();
    let p = d.path();
    write(p, "t/a", b"0123456789");
    write(p, "t/b", b"0123456789");
    std::fs::hard_link(p.join("t/a"), p.join("t/a2")).unwrap();
    write(p, "t/new\nline", b"xyz");
    write(p, "t/x", b"xyz");
    let o = run(p, &["dups", "--read", "t"]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));
    assert_eq!(
        lines(&o),
        [
            "2 files of 10 bytes (10 B) each, 10 B wasted (1 link more, not counted)",
            "t/a",
            "t/a2 (a link to t/a, not counted)",
            "t/b",
            "",
            "2 files of 3 bytes (3 B) each, 3 B wasted",
            "\\t/new\\nline",
            "t/x",
            "",
        ]
    );
    let err = text(&o.stderr);
    assert!(
        err.contains("2 groups of duplicates among 5 files: 4 files, 13 B (13 bytes) wasted"),
        "{err}"
    );
    let q = run(p, &["dups", "--read", "-q", "t"]);
    assert_eq!((q.stdout, text(&q.stderr)), (o.stdout, String::new()));
}

#[test]
fn min_size_exclude_and_empty_files() {
    let d = tempdir();
    let p = d.path();
    for (name, size) in [("small", 999usize), ("k", 1000), ("kib", 1024), ("mib", 1 << 20)] {
        write(p, format!("t/{name}1"), &vec![b'x'; size]);
        write(p, format!("t/sub/{name}2"), &vec![b'x'; size]);
    }
    write(p, "t/empty1", b"");
    write(p, "t/empty2", b"");
    let sizes = |args: &[&str]| -> Vec<u64> {
        let (g, _, code) = dups_json(p, &[&["--read"], args, &["t"]].concat());
        assert_eq!(code, 0);
        g.iter().map(|g| g["size"].as_u64().unwrap()).collect()
    };
    assert_eq!(sizes(&[]), [1 << 20, 1024, 1000, 999]);
    assert_eq!(sizes(&["--min-size", "1000"]), [1 << 20, 1024, 1000]);
    assert_eq!(sizes(&["--min-size", "1K"]), [1 << 20, 1024]);
    assert_eq!(sizes(&["--min-size", "1KiB"]), [1 << 20, 1024]);
    assert_eq!(sizes(&["--min-size", "1M"]), [1 << 20]);
    assert_eq!(sizes(&["--min-size", "0"]), [1 << 20, 1024, 1000, 999, 0]);
    assert_eq!(sizes(&["--exclude", "sub"]), Vec::<u64>::new());
    assert_eq!(sizes(&["--exclude", "k*", "--exclude", "*mib*"]), [999]);
    // The catalog takes the same options.
    assert!(run(p, &["scan", "-q", "t"]).status.success());
    let (g, _, _) = dups_json(p, &["--min-size", "1K", "--exclude", "sub/mib2", "t"]);
    assert_eq!(g.iter().map(|g| g["size"].as_u64().unwrap()).collect::<Vec<_>>(), [1024]);
    let bad = run(p, &["dups", "--min-size", "lots", "t"]);
    assert_eq!(bad.status.code(), Some(2));
}

#[test]
fn files_changed_since_the_scan_and_findings_are_left_out() {
    let d = tempdir();
    let p = d.path();
    for f in ["a", "b", "c", "rot", "rot2"] {
        write(p, format!("t/{f}"), b"same content");
    }
    assert!(run(p, &["scan", "-q", "t"]).status.success());
    // Rot (same size and mtime, other bytes) found by a verify: a standing finding.
    for f in ["rot", "rot2"] {
        let path = p.join("t").join(f);
        let mtime = std::fs::metadata(&path).unwrap().modified().unwrap();
        std::fs::write(&path, b"SAME CONTENT").unwrap();
        std::fs::File::options().write(true).open(&path).unwrap().set_modified(mtime).unwrap();
    }
    assert_eq!(run(p, &["verify", "-q", "t"]).status.code(), Some(1));
    write(p, "t/c", b"same content, then edited");
    let o = run(p, &["dups", "t"]);
    assert_eq!(o.status.code(), Some(0));
    assert_eq!(lines(&o)[1..3], ["t/a", "t/b"]);
    let err = text(&o.stderr);
    assert!(err.contains("1 file changed since the last scan, left out: run fixity scan"), "{err}");
    assert!(err.contains("2 files with a standing finding"), "{err}");
    let v = run(p, &["dups", "-v", "t"]);
    assert!(text(&v.stderr).contains("t/c: left out: changed since the last scan"));
    assert!(text(&v.stderr).contains("t/rot: left out: corrupt (a standing finding)"));
    let (_, s, _) = dups_json(p, &["t"]);
    assert_eq!(
        (s["changed_since_scan"].as_u64(), s["left_out_findings"].as_u64()),
        (Some(1), Some(2))
    );
    // Gone since the scan: counted the same way.
    std::fs::remove_file(p.join("t/b")).unwrap();
    let (g, s, _) = dups_json(p, &["t"]);
    assert!(g.is_empty());
    assert_eq!(s["changed_since_scan"], 2);
}

/// Returns 4 bytes that, appended to `prefix`, give the CRC-32 `target` (CRC-32 is affine
/// over GF(2) in its input: solve for the 32 bits).
fn crc32_forge(prefix: &[u8], target: u32) -> [u8; 4] {
    let crc = |tail: u32| {
        let mut data = prefix.to_vec();
        data.extend_from_slice(&tail.to_le_bytes());
        crc32fast::hash(&data)
    };
    let base = crc(0);
    // Rows: (column of bit j, bit j) reduced by Gaussian elimination.
    let mut rows: Vec<(u32, u32)> = (0..32).map(|j| (crc(1 << j) ^ base, 1u32 << j)).collect();
    let mut want = target ^ base;
    let mut x = 0u32;
    for bit in (0..32).rev() {
        let Some(i) = rows.iter().position(|r| r.0 >> bit & 1 == 1) else { continue };
        let pivot = rows.remove(i);
        for r in rows.iter_mut().filter(|r| r.0 >> bit & 1 == 1) {
            *r = (r.0 ^ pivot.0, r.1 ^ pivot.1);
        }
        if want >> bit & 1 == 1 {
            want ^= pivot.0;
            x ^= pivot.1;
        }
    }
    assert_eq!(want, 0, "solvable");
    x.to_le_bytes()
}

/// Two files of one size with one CRC-32 and other content: a crc32 catalog pairs them,
/// reading tells them apart; real copies are still grouped, and the user is told why the
/// files were read.
#[test]
fn a_crc32_catalog_is_confirmed_by_reading() {
    let d = tempdir();
    let p = d.path();
    let x = [&[b'x'; 60][..], b"abcd"].concat();
    let mut y = vec![b'y'; 60];
    y.extend_from_slice(&crc32_forge(&y, crc32fast::hash(&x)));
    assert_eq!((x.len(), crc32fast::hash(&x)), (y.len(), crc32fast::hash(&y)));
    assert_ne!(x, y);
    write(p, "t/x", &x);
    write(p, "t/y", &y);
    write(p, "t/copy1", b"a real copy");
    write(p, "t/copy2", b"a real copy");
    assert!(run(p, &["scan", "-q", "-a", "crc32", "t"]).status.success());
    let (g, s, _) = dups_json(p, &["t"]);
    assert_eq!(names(&g), [[b"t/copy1".to_vec(), b"t/copy2".to_vec()]]);
    assert_eq!(s["confirmed_by_reading"], true);
    assert_eq!(s["catalog_algorithm"], "crc32");
    assert_eq!(s["algorithm"], "blake3");
    assert_eq!(s["files_read"], 4);
    let err = text(&run(p, &["dups", "t"]).stderr);
    assert!(err.contains("the catalog's crc32 digests are not proof"), "{err}");
}

#[test]
fn exit_statuses() {
    let d = tempdir();
    let p = d.path();
    write(p, "t/a", b"same");
    write(p, "t/b", b"same");
    write(p, "t/loop", b"same");
    let o = run(p, &["dups", "t"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(text(&o.stderr).contains("no catalog at "), "{}", text(&o.stderr));
    assert_eq!(run(p, &["dups", "nowhere"]).status.code(), Some(2));
    assert_eq!(run(p, &["dups", "--read", "t/a"]).status.code(), Some(2));
    assert!(run(p, &["scan", "-q", "t"]).status.success());
    // A recorded file now a symbolic link loop: it cannot be looked at (exit 1), the
    // others are still grouped.
    std::fs::remove_file(p.join("t/loop")).unwrap();
    std::os::unix::fs::symlink("loop", p.join("t/loop")).unwrap();
    let o = run(p, &["dups", "t"]);
    assert_eq!(o.status.code(), Some(1));
    assert!(text(&o.stderr).contains("t/loop: "), "{}", text(&o.stderr));
    assert_eq!(lines(&o)[1..3], ["t/a", "t/b"]);
}
